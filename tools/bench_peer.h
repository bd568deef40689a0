/*
 * bench_peer.h - the same problem through the library a user would use
 * today, in the same process: oneDNN for the CPU backend (bench_onednn.c),
 * cuDNN and cuBLAS for the CUDA backend (bench_cudnn.c), each built when
 * configure found it (--with-onednn, --with-cudnn). bench_peer.c picks
 * the peer of the problem's backend.
 */
#ifndef UDNN_BENCH_PEER_H
#define UDNN_BENCH_PEER_H

#include "tools/bench.h"
#include "tools/bench_run.h"

typedef struct {
    char name[16];
    bench_times times;
} bench_peer_result;

/* Times problem p in the peer of `backend`. e is udnn's run of it on that
 * backend, still open: its buffer sets (e->sets of them) in the backend's
 * memory, its handle (and so its stream) and the algo it took. A peer
 * runs on those very buffers where it can (cuDNN does), or on memory of
 * its own holding the same data (oneDNN does), taking as many sets in
 * turn, and times its runs as bench_time does udnn's (bench_time_loop).
 * Returns 0 when timed, 1 when there is no peer for it (no library, an op,
 * type or layout it lacks), -1 when the peer failed (why in msg). */
int bench_peer_time(bench_problem *p, bench_exec *e, udnnBackend_t backend, const bench_timing *t,
                    bench_peer_result *r, char *msg, size_t n);

/* The peers, each compiled only where configure found its library. */
int bench_onednn_time(bench_problem *p, bench_exec *e, const bench_timing *t,
                      bench_peer_result *r, char *msg, size_t n);
int bench_cudnn_time(bench_problem *p, bench_exec *e, const bench_timing *t,
                     bench_peer_result *r, char *msg, size_t n);

#endif /* UDNN_BENCH_PEER_H */
