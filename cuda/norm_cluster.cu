/* norm_cluster.cu - the forward of a norm whose sets are runs of contiguous
 * elements, each run under one scale and bias (group norm over NCHW-like
 * data: a run is a channel's plane), where one set fits the shared memory
 * of a thread-block cluster: the cluster's blocks each copy their share of
 * the set into shared memory, sum it, join the cluster's sums through each
 * other's shared memory, and write their share's y from it. x is read
 * once, and no block waits for one outside its cluster, as bn_cluster
 * holds a batch norm channel; the other paths read x twice (norm.cu).
 * H200, bursts, three passes against those paths (copy f16 4111 / 4122 /
 * 4114 GB/s, f32 4214 / 4216 / 4212), group norm forward:
 * - 32 groups of 16 x 320 x 128 x 128 f16: 2922 / 2937 / 2919 against
 *   2061 / 2070 / 2065; f32 2693 / 2686 / 2684 against 2373 / 2372 / 2373;
 * - 32 groups of 1 x 320 x 128 x 128 f16 (one launch where there were
 *   two): 1385 / 1397 / 1397 against 822 / 813 / 816;
 * - 8 groups of 32 x 256 x 112 x 112 bf16: 2848 / 2859 / 2856 against
 *   2093 / 2098 / 2103;
 * - 32 groups of 8 x 64 x 56 x 56 f16: 705 / 722 / 716 against 213 / 214 /
 *   214.
 * An earlier cluster kernel for these sets (twenty-third session) lost
 * against the split paths: it summed each element in double, walked the
 * general index space per item and loaded the parameters per element;
 * here a load's terms are summed in float, a run's offset is one division
 * and its parameter one load a vector. NM_CLUSTER 0 for comparison. */
#include "cuda/norm.h"

#if UDNN_GPU_CLUSTERS

#ifndef NM_CLUSTER
#define NM_CLUSTER 1
#endif
#define NM_CLUSTER_MAX 16
#define NM_CLUSTER_THREADS 256
/* a block's share: 200 bytes a thread, as bn_cluster's */
#define NM_CLUSTER_SHARE ((size_t)200 * NM_CLUSTER_THREADS)
/* a thread's copies per group, each group summed as it lands */
#define NM_CLUSTER_GROUPS 4

template <class T> struct nm_cluster_args {
    nm_fwd_args<T> a;
    int64_t rx, ry, rp;     /* from run to run: x's, y's and the parameters' steps */
    udnn_gpu_div32 per_run; /* loads in a run */
    int64_t loads, chunk;   /* a set's loads, a block's share of them */
    unsigned cs;            /* blocks of a cluster */
};

/* Load q of a set: its run and its offset in x (or, by ry, y). */
struct nm_cluster_at {
    int64_t run, off;
};
template <int W>
__device__ __forceinline__ nm_cluster_at nm_cluster_locate(const udnn_gpu_div32 &per_run,
                                                           int64_t step, int64_t q)
{
    nm_cluster_at r;
    r.run = udnn_gpu_div32_q(per_run, (uint32_t)q);
    r.off = r.run * step + (q - r.run * per_run.d) * W;
    return r;
}

/* Block b of the grid is block b % cs of set b / cs's cluster and holds
 * its loads [rank chunk, (rank + 1) chunk) of x in dynamic shared memory:
 * each thread copies its own and reads back only those (no barrier), in
 * groups of NM_CLUSTER_GROUPS, each summed as it lands. A load's W terms
 * (x less the set's shift, its first element) are added in float, then
 * into the thread's double sums, as nm_fwd_sums keeps them: float holds
 * the sum of so few terms to about 1e-7 of their size, as in bn_cluster.
 * Every block joins the cluster's sums in rank order itself; rank 0 saves
 * the statistics. */
template <class T, int W>
__global__ void __launch_bounds__(NM_CLUSTER_THREADS, 1024 / NM_CLUSTER_THREADS)
    nm_fwd_cluster(nm_cluster_args<T> k)
{
    typedef typename io<T>::C C;
    typedef typename udnn_gpu_param<T>::P P;
    typedef udnn_gpu_pack<T, W> V;
    extern __shared__ uint4 nm_cluster_held[];
    __shared__ double red[NM_CLUSTER_THREADS / 16], part[2];
    __shared__ nm_stats<C> st;
    const nm_fwd_args<T> &a = k.a;
    const unsigned rank = udnnGpuClusterRank();
    const int64_t set = blockIdx.x / k.cs, p0 = rank * k.chunk;
    const int64_t end = p0 + k.chunk < k.loads ? p0 + k.chunk : k.loads;
    const int n = end > p0 ? (int)(end - p0) : 0;
    V *held = (V *)nm_cluster_held;
    int64_t so[NM_SLOTS];
    udnn_gpu_space_offsets<int64_t, NM_SLOTS>(a.sets, set, so);
    const T *x = a.x + so[N_X];
    /* read before the cluster's barrier: in place, rank 0 overwrites it after */
    const double shift = nm_fwd_shift(a, x);
    const float fs = (float)shift;
    double q[2] = {0.0, 0.0};
    udnn_gpu_hold_share<NM_CLUSTER_GROUPS>(
        held, n, p0, [&](int64_t q) { return x + nm_cluster_locate<W>(k.per_run, k.rx, q).off; },
        [&](const V &xv) {
            float f1 = 0.0f, f2 = 0.0f;
#pragma unroll
            for (int e = 0; e < W; e++) {
                const float d = (float)udnn_gpu_pack_ld(xv, e) - fs;
                f1 += d;
                f2 += d * d;
            }
            q[0] += (double)f1;
            q[1] += (double)f2;
        });
    udnn_gpu_cluster_sum2(q, red, part, k.cs);
    if (threadIdx.x == 0)
        st = nm_fwd_finish(a, q[0], q[1], shift, so[N_ST], rank == 0);
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' partials */
    const nm_stats<C> f = st;
    const P *scale = a.scale + so[N_P], *bias = a.bias != NULL ? a.bias + so[N_P] : NULL;
    T *y = a.y + so[N_OUT];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const nm_cluster_at at = nm_cluster_locate<W>(k.per_run, k.ry, p0 + i);
        const C sc = (C)scale[at.run * k.rp], b = bias != NULL ? (C)bias[at.run * k.rp] : C(0);
        const V xv = held[i];
        C v[W];
#pragma unroll
        for (int e = 0; e < W; e++)
            v[e] = nm_fwd_y((C)udnn_gpu_pack_ld(xv, e), f.hi, f.lo, f.inv, sc) + b;
        V o;
#pragma unroll
        for (int e = 0; e < W; e++) o.v[e] = io<T>::st(v[e]);
        *(V *)(y + at.off) = o;
    }
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}

/* Whether a's sets are runs of whole 16-byte vectors, each run under one
 * parameter, and every set's start and run step keep them aligned: the
 * runs' count, length and steps into k. */
template <class T>
static bool nm_cluster_shape(const nm_geom *g, const nm_fwd_args<T> &a, nm_cluster_args<T> *k)
{
    constexpr int W = 16 / (int)sizeof(T);
    const nm_space &in = g->inner;
    if (in.nd < 1 || in.nd > 2) return false;
    const int l = in.nd - 1;
    const int64_t len = in.dim[l];
    if (in.st[N_X][l] != 1 || in.st[N_OUT][l] != 1 || in.st[N_P][l] != 0 || len % W != 0 ||
        len / W >= ((int64_t)1 << 31))
        return false;
    k->rx = in.nd == 2 ? in.st[N_X][0] : 0;
    k->ry = in.nd == 2 ? in.st[N_OUT][0] : 0;
    k->rp = in.nd == 2 ? in.st[N_P][0] : 0;
    if (k->rx % W != 0 || k->ry % W != 0 || (uintptr_t)a.x % 16 != 0 || (uintptr_t)a.y % 16 != 0)
        return false;
    for (int d = 0; d < g->sets.nd; d++)
        if (g->sets.st[N_X][d] % W != 0 || g->sets.st[N_OUT][d] % W != 0) return false;
    k->per_run = udnn_gpu_div32_make((uint32_t)(len / W));
    k->loads = in.size / W;
    return k->loads < ((int64_t)1 << 31);
}

template <class T>
int nm_forward_cluster(const udnn_gpu_context *c, const nm_geom *g, const nm_fwd_args<T> &a,
                       udnnStatus_t *st)
{
    if constexpr (NM_CLUSTER && (sizeof(T) == 2 || sizeof(T) == 4)) {
        constexpr int W = 16 / (int)sizeof(T);
        nm_cluster_args<T> k;
        memset(&k, 0, sizeof k);
        k.a = a;
        if (!nm_cluster_shape<T>(g, a, &k)) return 0;
        if (!udnn_gpu_cluster_split(k.loads, 16, NM_CLUSTER_SHARE, NM_CLUSTER_MAX, &k.cs,
                                    &k.chunk) ||
            a.nsets * k.cs >= ((int64_t)1 << 31))
            return 0;
        auto kernel = nm_fwd_cluster<T, W>;
        static udnn_gpu_cache fits;
        if (!udnn_gpu_cluster_fits(c, kernel, NM_CLUSTER_THREADS, NM_CLUSTER_SHARE,
                                   NM_CLUSTER_MAX, &fits))
            return 0;
        const udnnGpuError_t e = udnnGpuLaunchClusters(
            kernel, (unsigned)(a.nsets * k.cs), udnn_gpu_whole_warps(k.chunk, NM_CLUSTER_THREADS),
            (size_t)k.chunk * 16, c->stream, k.cs, k);
        *st = e == udnnGpuSuccess ? UDNN_STATUS_SUCCESS
                                  : udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                                                  "launching the norm's cluster kernel");
        return 1;
    }
    (void)c, (void)g, (void)a, (void)st;
    return 0;
}
#else /* no clusters: the other paths */
template <class T>
int nm_forward_cluster(const udnn_gpu_context *, const nm_geom *, const nm_fwd_args<T> &,
                       udnnStatus_t *)
{
    return 0;
}
#endif

#define NM_CLUSTER_TYPE(T)                                                                         \
    template int nm_forward_cluster<T>(const udnn_gpu_context *, const nm_geom *,                  \
                                       const nm_fwd_args<T> &, udnnStatus_t *);
UDNN_GPU_FLOAT_TYPES(NM_CLUSTER_TYPE)
