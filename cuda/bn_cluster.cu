/* bn_cluster.cu - batch normalization's training where a channel is
 * runs of contiguous members (NCHW-like) and one channel's x fits in the
 * shared memory of a thread-block cluster: the cluster's blocks each copy
 * their share of the channel into shared memory, sum it, join the
 * cluster's sums through each other's shared memory, and write their
 * share's output from it. x is read once, and no block waits for any
 * block outside its cluster. The backward (x and dy held) is here too,
 * off by default (BN_CLUSTER_BWD below).
 *
 * bn_keep (bn_flow.cu) holds a group of channels across a team of
 * co-resident blocks of a persistent grid; its blocks load, wait for
 * their group through global memory and store in step, so memory idles
 * while they wait (H100, 64 x 256 x 56 x 56 f32 NCHW training, about 82%
 * of copy). Here the grid is a cluster per channel and the hardware starts
 * each cluster when resources free up, so clusters drift apart and some
 * load while others wait or store; the wait itself is the cluster's
 * barrier (85 to 88% of copy on that problem). Clusters are sm_90's;
 * bn_flow_run takes bn_keep where they are not. */
#include <type_traits>

#include "cuda/bn.h"

#if UDNN_GPU_CLUSTERS

/* Tuning, at compile time: the threads of a block; the most bytes of a
 * block's share, two blocks a multiprocessor (one block of twice that,
 * for channels that 16 blocks of 100 KB do not hold, lost to bn_keep:
 * H100, 32 x 64 x 224 x 224 bf16 training 2007 against 2112 GB/s); the
 * most blocks of a cluster (16: beyond the portable 8). Where it runs:
 * training of 2- and 4-byte types, as measured (H100, in one process
 * each against bn_keep, copy 2789 / 2503 GB/s f32 / f16: 64 x 256 x 56 x
 * 56 f32 training 2384 against 2242 GB/s, bf16 2102 against 1912, f16
 * 2103 against 1906, 64 x 128 x 56 x 56 f16 1808 against 1403, 32 x 256 x
 * 28 x 28 f32 1469 against 1379), not their backward (f32 2214 against
 * 2257, bf16 1929 against 1948; 256 threads a block: 2178) nor DOUBLE
 * (training 2130 against 2308); BN_CLUSTER_BWD 1 for the backward too. */
#ifndef BN_CLUSTER_THREADS
#define BN_CLUSTER_THREADS 512
#endif
#ifndef BN_CLUSTER_SHARE
#define BN_CLUSTER_SHARE ((size_t)100 << 10)
#endif
#define BN_CLUSTER_MAX 16
#ifndef BN_CLUSTER_BWD
#define BN_CLUSTER_BWD 0
#endif
/* Candidates, off until measured: FLOAT's training terms of each 16-byte
 * load added in float, then once into the thread's double sums (VSUM: two
 * conversions to double and two double adds a load where there were
 * twelve double operations and four conversions; training only: the
 * mean's absolute error is what counts there, while the backward's dscale
 * is an output, often a small remainder of its terms (test_dy_offset));
 * FLOAT's backward output
 * computed in float where a channel has at least NARROW_MIN members
 * (NARROW: dx = a (dy - mean dy) + b (x - mean), dy's mean taken out
 * first, bn_value's CENTERED, so that a dy of large mean cancels nothing;
 * the xhat term shrinks as 1 / sqrt(members) beside it, so it cancels
 * nothing either; on few members it can, hence bn_acc's double). */
#ifndef BN_CLUSTER_VSUM
#define BN_CLUSTER_VSUM 0
#endif
#ifndef BN_CLUSTER_NARROW
#define BN_CLUSTER_NARROW 0
#endif
#ifndef BN_CLUSTER_NARROW_MIN
#define BN_CLUSTER_NARROW_MIN 4096
#endif

template <class T, class C> struct bn_cluster_args {
    const T *x, *dy;
    T *out;
    int64_t F, M;           /* channels, members of each */
    int64_t run, rstep;     /* a run's elements, the step from run to run */
    udnn_gpu_div32 per_run; /* loads in a run */
    int64_t pstride;        /* the parameters' channel stride */
    int64_t loads;          /* a channel's loads of each tensor */
    int64_t chunk;          /* a block's share of them */
    unsigned cs;            /* blocks of a cluster */
    bn_side<T> side;
    C alpha, beta;
};

/* k in E: as it is, or narrowed to float for bn_value's CENTERED: dy's
 * mean in d, and in lo the terms of the two means' parts that float does
 * not hold, -b (mean - hi) - a (dy_mean - d). */
template <class E, class C>
__device__ __forceinline__ bn_coef<E> bn_narrow(const bn_coef<C> &k, double dy_mean)
{
    if constexpr (sizeof(E) == sizeof(C)) {
        (void)dy_mean;
        return k;
    } else {
        bn_coef<E> n;
        n.hi = (E)k.hi;
        n.d = (E)dy_mean;
        n.a = (E)k.a;
        n.b = (E)k.b;
        const double lo_x = ((double)k.hi - (double)n.hi) + (double)k.lo;
        n.lo = (E)(-(double)k.b * lo_x - (double)k.a * (dy_mean - (double)n.d));
        return n;
    }
}

/* Block b of the grid is block b % cs of channel b / cs's cluster and
 * holds its loads [rank chunk, (rank + 1) chunk) of x, then of dy, in
 * dynamic shared memory: each thread copies its own and reads back only
 * those, so the copies need no barrier. Every block adds the cluster's
 * partials in rank order itself (the same coefficients in each); rank 0
 * also writes the statistics. NARROW: the output's arithmetic in float
 * (E), the coefficients narrowed from C once. */
template <class T, int K, bool BWD, int W, bool NARROW>
__global__ void __launch_bounds__(BN_CLUSTER_THREADS, 1024 / BN_CLUSTER_THREADS)
    bn_cluster(bn_cluster_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    typedef typename std::conditional<NARROW, float, C>::type E;
    typedef udnn_gpu_pack<T, W> V;
    typedef typename bn_thread_sum_of<sizeof(T) == 2>::S SA;
    extern __shared__ uint4 bn_cluster_held[];
    __shared__ double red[BN_CLUSTER_THREADS / 16], part[K];
    __shared__ C kc[BN_NCOEF];
    __shared__ double dy_mean; /* NARROW */
    const unsigned rank = udnnGpuClusterRank();
    const int64_t f = blockIdx.x / a.cs, p0 = rank * a.chunk;
    const int64_t end = p0 + a.chunk < a.loads ? p0 + a.chunk : a.loads;
    const int n = end > p0 ? (int)(end - p0) : 0;
    V *hx = (V *)bn_cluster_held, *hd = hx + a.chunk;
    const int64_t po = f * a.pstride;
    /* read before the cluster's barrier: in place, rank 0 overwrites it after */
    const typename bn_param<T>::P shift = bn_shift<BWD>(a.side, po, a.x + f * a.run);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const int64_t off = bn_run_off<W>(a.run, a.rstep, a.per_run, f, p0 + i);
        udnnGpuCopyAsync16(hx + i, a.x + off);
        if constexpr (BWD) udnnGpuCopyAsync16(hd + i, a.dy + off);
    }
    udnnGpuCopyAsyncWait();
    SA acc[K];
#pragma unroll
    for (int k = 0; k < K; k++) acc[k] = SA(0);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const V xv = hx[i];
        V gv;
        if constexpr (BWD) gv = hd[i];
        if constexpr (BN_CLUSTER_VSUM && !BWD && sizeof(SA) > sizeof(T)) {
            float v[K];
#pragma unroll
            for (int k = 0; k < K; k++) v[k] = 0.0f;
#pragma unroll
            for (int e = 0; e < W; e++)
                bn_accumulate<K, BWD>(v, (float)udnn_gpu_pack_ld(xv, e) - (float)shift,
                                      BWD ? (float)udnn_gpu_pack_ld(gv, e) : 0.0f);
#pragma unroll
            for (int k = 0; k < K; k++) acc[k] += (SA)v[k];
        } else {
#pragma unroll
            for (int e = 0; e < W; e++)
                bn_accumulate<K, BWD>(acc, (SA)udnn_gpu_pack_ld(xv, e) - (SA)shift,
                                      BWD ? (SA)udnn_gpu_pack_ld(gv, e) : SA(0));
        }
    }
#pragma unroll
    for (int k = 0; k < K; k++) {
        const double s = udnn_gpu_block_sum((double)acc[k], red);
        if (threadIdx.x == 0) part[k] = s;
    }
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (threadIdx.x == 0) {
        double q[K];
#pragma unroll
        for (int k = 0; k < K; k++) q[k] = 0.0;
        for (unsigned r = 0; r < a.cs; r++) {
            const double *pr = udnnGpuClusterMap(part, r);
#pragma unroll
            for (int k = 0; k < K; k++) q[k] += pr[k];
        }
        bn_side<T> side = a.side;
        if (rank != 0) side.running_mean = side.save_mean = side.dscale = NULL;
        bn_coef<C> k;
        if constexpr (BWD) k = bn_finish_bwd<T>(side, po, (double)shift, q, a.M);
        else k = bn_finish_train<T>(side, po, (double)shift, q, a.M);
        bn_store_coef(kc, 1, 0, k);
        dy_mean = BWD ? q[0] / (double)a.M : 0.0;
    }
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' partials */
    const bn_coef<E> k1[1] = {bn_narrow<E>(bn_load_coef(kc, 1, 0), dy_mean)};
    const E alpha = (E)a.alpha, beta = (E)a.beta;
    udnn_gpu_blending(a.beta, [&](auto blending) {
        constexpr bool BLEND = decltype(blending)::value;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            const V xv = hx[i];
            V gv;
            if constexpr (BWD) gv = hd[i];
            bn_store_pack<T, BWD, BLEND, NARROW>(
                a.out + bn_run_off<W>(a.run, a.rstep, a.per_run, f, p0 + i), k1, xv, gv, alpha,
                beta);
        }
    });
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}

template <class T, int K, bool BWD>
udnnStatus_t bn_cluster_run(const udnn_gpu_context *c, const udnn_bn_problem *p, int64_t run)
{
    typedef typename bn_acc<T, BWD>::A C;
    constexpr int W = 16 / (int)sizeof(T);
    /* where it serves (above), so that no other kernel is built */
    if constexpr ((BWD && !BN_CLUSTER_BWD) || sizeof(T) == 8) {
        return UDNN_STATUS_NOT_SUPPORTED;
    } else {
        bn_cluster_args<T, C> a;
        memset(&a, 0, sizeof a);
        bn_args_from<T, BWD>(a, p);
        a.loads = a.M / W;
        auto kernel = bn_cluster<T, K, BWD, W, false>;
        bool narrow = false;
        if constexpr (BN_CLUSTER_NARROW && !std::is_same<C, float>::value) {
            narrow = a.M >= BN_CLUSTER_NARROW_MIN;
            if (narrow) kernel = bn_cluster<T, K, BWD, W, true>;
        }
        /* room for the largest cluster this takes */
        static udnn_gpu_cache fits[2];
        if (!udnn_gpu_cluster_fits(c, kernel, BN_CLUSTER_THREADS, BN_CLUSTER_SHARE,
                                   BN_CLUSTER_MAX, &fits[narrow]))
            return UDNN_STATUS_NOT_SUPPORTED;
        const size_t per_load = (size_t)16 * (BWD ? 2 : 1);
        if (!udnn_gpu_cluster_split(a.loads, per_load, BN_CLUSTER_SHARE, BN_CLUSTER_MAX, &a.cs,
                                    &a.chunk) ||
            a.F * a.cs >= ((int64_t)1 << 31))
            return UDNN_STATUS_NOT_SUPPORTED;
        const unsigned cs = a.cs;
        const size_t shared = (size_t)a.chunk * per_load;
        int64_t threads = (a.chunk + 31) / 32 * 32;
        if (threads > BN_CLUSTER_THREADS) threads = BN_CLUSTER_THREADS;
        a.run = run;
        a.rstep = a.F * run;
        a.per_run = udnn_gpu_div32_make((uint32_t)(run / W));
        const udnnGpuError_t e = udnnGpuLaunchClusters(kernel, (unsigned)(a.F * cs),
                                                       (unsigned)threads, shared, c->stream, cs, a);
        if (e != udnnGpuSuccess)
            return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                                 "launching batch norm's cluster kernel");
        return UDNN_STATUS_SUCCESS;
    }
}
#else /* no clusters: bn_flow_run takes its other kernels */

template <class T, int K, bool BWD>
udnnStatus_t bn_cluster_run(const udnn_gpu_context *, const udnn_bn_problem *, int64_t)
{
    return UDNN_STATUS_NOT_SUPPORTED;
}

#endif

/* the types and sums bn_flow_run asks for */
#define BN_CLUSTER_INSTANCES(T)                                                                    \
    template udnnStatus_t bn_cluster_run<T, 2, false>(const udnn_gpu_context *,                  \
                                                       const udnn_bn_problem *, int64_t);         \
    template udnnStatus_t bn_cluster_run<T, 2, true>(const udnn_gpu_context *,                   \
                                                      const udnn_bn_problem *, int64_t);          \
    template udnnStatus_t bn_cluster_run<T, 4, true>(const udnn_gpu_context *,                   \
                                                      const udnn_bn_problem *, int64_t);
BN_CLUSTER_INSTANCES(float)
BN_CLUSTER_INSTANCES(double)
BN_CLUSTER_INSTANCES(udnnGpuHalf)
BN_CLUSTER_INSTANCES(udnnGpuBf16)
