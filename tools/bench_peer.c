/* bench_peer.c - the peer of each backend: oneDNN for the CPU
 * (UDNN_BENCH_ONEDNN), cuDNN and cuBLAS for CUDA (UDNN_BENCH_CUDNN), as
 * tools/local.mk defines them; none for HIP yet, nor where a library was
 * not found. */
#include "tools/bench_peer.h"

int bench_peer_time(bench_problem *p, bench_exec *e, udnnBackend_t backend, const bench_timing *t,
                    bench_peer_result *r, char *msg, size_t n)
{
    if (p->peer.op == BENCH_PEER_NONE || e == NULL || e->h == NULL) return 1;
    switch (backend) {
#ifdef UDNN_BENCH_ONEDNN
    case UDNN_BACKEND_CPU: return bench_onednn_time(p, e, t, r, msg, n);
#endif
#ifdef UDNN_BENCH_CUDNN
    case UDNN_BACKEND_CUDA: return bench_cudnn_time(p, e, t, r, msg, n);
#endif
    default:
        (void)t, (void)r, (void)msg, (void)n;
        return 1;
    }
}
