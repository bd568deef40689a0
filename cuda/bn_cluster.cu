/* bn_cluster.cu - batch normalization's training where a channel is
 * runs of contiguous members (NCHW-like) and one channel's x fits in the
 * shared memory of a thread-block cluster: the cluster's blocks each copy
 * their share of the channel into shared memory, sum it, join the
 * cluster's sums through each other's shared memory, and write their
 * share's output from it. x is read once, and no block waits for any
 * block outside its cluster.
 *
 * bn_keep (bn_flow.cu) holds a group of channels across a team of
 * co-resident blocks of a persistent grid; its blocks load, wait for
 * their group through global memory and store in step, so memory idles
 * while they wait (H100, 64 x 256 x 56 x 56 f32 NCHW training, about 82%
 * of copy). Here clusters drift apart, so some load while others wait or
 * store, and the wait itself is the cluster's barrier (85 to 88% of copy
 * on that problem with a cluster per channel); each cluster also copies
 * its next channel in while it stores this one's output. Clusters are
 * sm_90's; bn_flow_run takes bn_keep where they are not. */
#include "cuda/bn.h"

#if UDNN_GPU_CLUSTERS

/* Where it runs: training of 2- and 4-byte types, as measured against
 * bn_keep (docs/PERF.md); not the backward (x and dy held: H100 f32 2214
 * against 2257 GB/s, H200 2566 to 2601 against 2838 to 2867) nor DOUBLE
 * (H100 training 2130 against 2308). A block's shape by the channel's
 * size (H200 figures, GB/s, two processes each):
 * - one block of 100 KB holds it: that block of 512 threads alone, which
 *   waits on no other (32 x 256 x 28 x 28 f32 1760 / 1753, against 1599 /
 *   1531 in clusters of four blocks of 256 threads, 1567 / 1770 of two);
 * - 16 blocks of 50 KB: clusters of 256-thread blocks, four a
 *   multiprocessor (64 x 256 x 56 x 56 f32 2971 / 2943, against 2878 /
 *   2879 in 512-thread blocks of 100 KB; bf16 2574 / 2616 against 2414 /
 *   2520; f16 2613 / 2532 against 2420 / 2404);
 * - 16 blocks of 100 KB: clusters of 512-thread blocks, two a
 *   multiprocessor;
 * - larger: bn_keep (one block of 200 KB a multiprocessor lost: H100, 32
 *   x 64 x 224 x 224 bf16 2007 against 2112).
 * Clusters of up to 16 blocks, beyond the portable 8. */
#define BN_CLUSTER_MAX 16
/* A thread's copies per group (bn_cluster): each group is summed as soon
 * as it lands, in the same order as the whole share after one wait, so the
 * statistics are the same bit for bit. H200, bursts, three passes, 64 x
 * 256 x 56 x 56 training (copy f32 4142 / 4140 / 4129 GB/s): f32 3251 /
 * 3257 / 3243 against 3210 / 3224 / 3209 after one wait, bf16 3007 / 3005
 * / 3010 against 2950 / 2964 / 2957, f16 3005 / 2999 / 3012 against 2936 /
 * 2951 / 2933; in a second call, groups of 2 f32 3217 / 3218 / 3198 and
 * of 8 3170 / 3167 / 3158 against 3236 / 3239 / 3234 with 4. */
#ifndef BN_CLUSTER_GROUPS
#define BN_CLUSTER_GROUPS 4
#endif
#define BN_CLUSTER_SHARE(threads) ((size_t)200 * (threads))

template <class T> struct bn_cluster_args {
    const T *x;
    T *out;
    int64_t F, M;           /* channels, members of each */
    int64_t run, rstep;     /* a run's elements, the step from run to run */
    udnn_gpu_div32 per_run; /* loads in a run */
    int64_t pstride;        /* the parameters' channel stride */
    int64_t loads;          /* a channel's loads */
    int64_t chunk;          /* a block's share of them */
    unsigned cs;            /* blocks of a cluster */
    bn_side<T> side;
    typename io<T>::C alpha, beta;
    const T *dy; /* unused (bn_args_from's) */
};

/* Block b of the grid is block b % cs of channel b / cs's cluster and
 * holds its loads [rank chunk, (rank + 1) chunk) of x in dynamic shared
 * memory: each thread copies its own and reads back only those, so the
 * copies need no barrier, and sums them a group at a time as they land
 * (BN_CLUSTER_GROUPS). A load's W terms are added in float, then into the
 * thread's sums (for FLOAT, two conversions to double and two double
 * adds a load instead of twelve double operations and four conversions;
 * the mean's absolute error is what counts, and float holds a load's
 * terms' sum to 1e-7 of it). Every block adds the cluster's partials in
 * rank order itself (the same coefficients in each); rank 0 also writes
 * the statistics. */
template <class T, int THREADS, int W>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS) bn_cluster(bn_cluster_args<T> a)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, W> V;
    typedef typename bn_thread_sum_of<sizeof(T) == 2>::S SA;
    extern __shared__ uint4 bn_cluster_held[];
    __shared__ double red[2 * THREADS / 16], part[2];
    __shared__ C kc[BN_NCOEF];
    const unsigned rank = udnnGpuClusterRank();
    const int64_t p0 = rank * a.chunk, step = gridDim.x / a.cs;
    const int64_t end = p0 + a.chunk < a.loads ? p0 + a.chunk : a.loads;
    const int n = end > p0 ? (int)(end - p0) : 0;
    V *held = (V *)bn_cluster_held;
    auto at = [&](int64_t f, int64_t q) { return bn_run_off<W>(a.run, a.rstep, a.per_run, f, q); };
    for (int64_t f = blockIdx.x / a.cs; f < a.F; f += step) {
        const int64_t po = f * a.pstride;
        /* read before the cluster's barrier: in place, rank 0 overwrites it after */
        const float shift = (float)bn_shift<false>(a.side, po, a.x + f * a.run);
        SA acc[2] = {SA(0), SA(0)};
        auto take = [&](const V &xv) {
            float v[2] = {0.0f, 0.0f};
#pragma unroll
            for (int e = 0; e < W; e++)
                bn_accumulate<2, false>(v, (float)udnn_gpu_pack_ld(xv, e) - shift, 0.0f);
            acc[0] += (SA)v[0];
            acc[1] += (SA)v[1];
        };
        if (f == blockIdx.x / a.cs) {
            udnn_gpu_hold_share<BN_CLUSTER_GROUPS>(
                held, n, p0, [&](int64_t q) { return a.x + at(f, q); }, take);
        } else {
            /* copied while the last channel's output was stored: the same
             * sums in the same order */
            udnnGpuCopyAsyncWait();
            for (int i = threadIdx.x; i < n; i += blockDim.x) take(held[i]);
        }
        double q[2] = {(double)acc[0], (double)acc[1]};
        udnn_gpu_cluster_sum2(q, red, part, a.cs);
        if (threadIdx.x == 0) {
            bn_side<T> side = a.side;
            if (rank != 0) side.running_mean = side.save_mean = NULL;
            bn_store_coef(kc, 1, 0, bn_finish_train<T>(side, po, (double)shift, q, a.M));
        }
        __syncthreads();
        udnnGpuClusterArrive(); /* this block is done with the others' partials */
        const bn_coef<C> k1[1] = {bn_load_coef(kc, 1, 0)};
        /* a slot's copy of the next channel once its output is stored (the
         * store depends on the slot), so that the next channel streams in
         * while this one streams out */
        const int64_t then = f + step;
        udnn_gpu_blending(a.beta, [&](auto blending) {
            constexpr bool BLEND = decltype(blending)::value;
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                bn_store_pack<T, false, BLEND>(a.out + at(f, p0 + i), k1, held[i], held[i],
                                               a.alpha, a.beta);
                if (then < a.F) udnnGpuCopyAsync16(held + i, a.x + at(then, p0 + i));
            }
        });
        udnnGpuClusterWait(); /* the others are done with this block's partials */
    }
}

/* The launch at one block shape; NOT_SUPPORTED, launching nothing, where a
 * channel does not fit 16 blocks' shares or the device runs no such
 * cluster. */
template <class T, int THREADS>
static udnnStatus_t bn_cluster_launch(const udnn_gpu_context *c, bn_cluster_args<T> a)
{
    constexpr int W = 16 / (int)sizeof(T);
    constexpr size_t share = BN_CLUSTER_SHARE(THREADS);
    auto kernel = bn_cluster<T, THREADS, W>;
    if (!udnn_gpu_cluster_split(a.loads, 16, share, BN_CLUSTER_MAX, &a.cs, &a.chunk) ||
        a.F * a.cs >= ((int64_t)1 << 31))
        return UDNN_STATUS_NOT_SUPPORTED;
    /* room for the largest cluster this takes */
    static udnn_gpu_cache fits;
    if (!udnn_gpu_cluster_fits(c, kernel, THREADS, share, BN_CLUSTER_MAX, &fits))
        return UDNN_STATUS_NOT_SUPPORTED;
    const unsigned threads = udnn_gpu_whole_warps(a.chunk, THREADS);
    /* The resident clusters only, each taking its channels in turn. H200,
     * bursts, two passes against a cluster per channel (copy f32 4142 /
     * 4143 GB/s): 64 x 256 x 56 x 56 training f32 3373 / 3376 against 3252
     * / 3257, bf16 3079 / 3066 against 3024 / 3033, f16 3067 / 3056
     * against 3004 / 3024; 32 x 256 x 28 x 28 f32 (256 clusters of one
     * block) 2468 / 2466 against 2520 / 2487. Not launched as a follower
     * (kernels.h, udnn_gpu_follow): H200, bursts, three passes, 64 x 256 x
     * 56 x 56 training bf16 2594 / 2632 / 2649 against 3061 / 3063 / 3068,
     * f32 level (3393 / 3413 / 3394 against 3398 / 3398 / 3395), 32 x 256
     * x 28 x 28 f32 2578 / 2583 / 2612 against 2451 / 2447 / 2447. Probably
     * because its blocks stay for the whole launch: the next launch may
     * start at once, and its clusters take their places as these leave,
     * not together. */
    const size_t shared = (size_t)a.chunk * 16;
    const int64_t clusters = udnn_gpu_resident_clusters(kernel, a.F, threads, shared, a.cs);
    return udnn_gpu_cluster_launch(c, "launching batch norm's cluster kernel", kernel,
                                   (unsigned)(clusters * a.cs), threads, shared, a.cs, false, a);
}

template <class T>
udnnStatus_t bn_cluster_run(const udnn_gpu_context *c, const udnn_bn_problem *p, int64_t run)
{
    constexpr int W = 16 / (int)sizeof(T);
    bn_cluster_args<T> a;
    memset(&a, 0, sizeof a);
    bn_args_from<T, false>(a, p);
    a.loads = a.M / W;
    a.run = run;
    a.rstep = a.F * run;
    a.per_run = udnn_gpu_div32_make((uint32_t)(run / W));
    if ((size_t)a.loads * 16 > BN_CLUSTER_SHARE(512)) {
        const udnnStatus_t st = bn_cluster_launch<T, 256>(c, a);
        if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
    }
    return bn_cluster_launch<T, 512>(c, a);
}
#else /* no clusters: bn_flow_run takes its other kernels */

template <class T>
udnnStatus_t bn_cluster_run(const udnn_gpu_context *, const udnn_bn_problem *, int64_t)
{
    return UDNN_STATUS_NOT_SUPPORTED;
}

#endif

/* the types bn_flow_run asks for */
template udnnStatus_t bn_cluster_run<float>(const udnn_gpu_context *, const udnn_bn_problem *,
                                            int64_t);
template udnnStatus_t bn_cluster_run<udnnGpuHalf>(const udnn_gpu_context *, const udnn_bn_problem *,
                                                  int64_t);
template udnnStatus_t bn_cluster_run<udnnGpuBf16>(const udnn_gpu_context *, const udnn_bn_problem *,
                                                  int64_t);
