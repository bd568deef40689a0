/*
 * bench_peer.h - the same problem through the library a user would use
 * today, in the same process: oneDNN for the CPU backend (when configure
 * found it). The CUDA backend's peers (cuDNN, cuBLAS) come with it.
 */
#ifndef UDNN_BENCH_PEER_H
#define UDNN_BENCH_PEER_H

#include "tools/bench.h"
#include "tools/bench_run.h"

typedef struct {
    char name[16];
    bench_times times;
} bench_peer_result;

/* Times problem p in the peer of `backend`: 0 when timed, 1 when there is
 * no peer for it (no library, an op or type it lacks), -1 when the peer
 * failed (why in msg). */
int bench_peer_time(bench_problem *p, udnnBackend_t backend, const bench_timing *t, int sets,
                    bench_peer_result *r, char *msg, size_t n);

#endif /* UDNN_BENCH_PEER_H */
