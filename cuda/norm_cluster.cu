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
 * Each block stores its y 16 bytes in one access (udnn_gpu_store_vec); the
 * pack assigned element by element had been stored as the compiler split
 * it, 6 two-byte and 1 four-byte stores a vector of 8 halves, 4 four-byte
 * stores a vector of floats. H200, bursts, two passes (copy f32 4122 /
 * 4139, f16 4007 / 4001), split against one access: 32 groups of 16 x 320
 * x 128 x 128 f16 2927 / 2923 against 3091 / 3086, bf16 2912 / 2908
 * against 3077 / 3071, f32 2673 / 2672 against 3192 / 3196; of 1 x 320 x
 * 128 x 128 f16 1381 / 1380 against 1496 / 1490; of 8 x 64 x 56 x 56 f16
 * 698 / 700 against 761 / 766. The backward's dx likewise, below.
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
/* a block's share: 200 bytes a thread, as bn_cluster's (100 and 400 were
 * slower: the thirty-seventh session's entry in docs/PERF.md) */
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
    __shared__ double red[2 * NM_CLUSTER_THREADS / 16], part[2];
    __shared__ nm_stats<C> st;
    udnn_gpu_follow();
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
        held, n, p0, [&](int64_t q) { return x + udnn_gpu_run_locate<W>(k.per_run, k.rx, q).off; },
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
        const udnn_gpu_run_at at = udnn_gpu_run_locate<W>(k.per_run, k.ry, p0 + i);
        const C sc = (C)scale[at.run * k.rp], b = bias != NULL ? (C)bias[at.run * k.rp] : C(0);
        const V xv = held[i];
        C v[W];
#pragma unroll
        for (int e = 0; e < W; e++)
            v[e] = nm_fwd_y((C)udnn_gpu_pack_ld(xv, e), f.hi, f.lo, f.inv, sc) + b;
        V o;
#pragma unroll
        for (int e = 0; e < W; e++) o.v[e] = io<T>::st(v[e]);
        udnn_gpu_store_vec(y + at.off, o);
    }
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}

/* How a set lies where its elements are runs of whole W-element (16-byte)
 * vectors in each data tensor, each run under one parameter: the run
 * steps of the tensors asked for (elements, in their order), the
 * parameters' run step, the loads a run and a set. */
struct nm_runs {
    int64_t step[3], rp;
    udnn_gpu_div32 per_run;
    int64_t loads;
};

/* Whether g's sets are such runs in the n tensors of slots[] (at ptrs[]):
 * the inner space one or two dims, the last unit-stride in each tensor
 * and of parameter stride 0, every pointer, run step and set stride
 * keeping the vectors 16-byte aligned. */
static bool nm_runs_of(const nm_geom *g, int W, const int *slots, const void *const *ptrs, int n,
                       nm_runs *r)
{
    const nm_space &in = g->inner;
    if (in.nd < 1 || in.nd > 2) return false;
    const int l = in.nd - 1;
    const int64_t len = in.dim[l];
    if (in.st[N_P][l] != 0 || len % W != 0 || len / W >= ((int64_t)1 << 31)) return false;
    for (int i = 0; i < n; i++) {
        r->step[i] = in.nd == 2 ? in.st[slots[i]][0] : 0;
        if (in.st[slots[i]][l] != 1 || r->step[i] % W != 0 || (uintptr_t)ptrs[i] % 16 != 0)
            return false;
        for (int d = 0; d < g->sets.nd; d++)
            if (g->sets.st[slots[i]][d] % W != 0) return false;
    }
    r->rp = in.nd == 2 ? in.st[N_P][0] : 0;
    r->per_run = udnn_gpu_div32_make((uint32_t)(len / W));
    r->loads = in.size / W;
    return r->loads < ((int64_t)1 << 31);
}

template <class T>
int nm_forward_cluster(const udnn_gpu_context *c, const nm_geom *g, const nm_fwd_args<T> &a,
                       udnnStatus_t *st)
{
    if constexpr (NM_CLUSTER && (sizeof(T) == 2 || sizeof(T) == 4)) {
        constexpr int W = 16 / (int)sizeof(T);
        static const int slots[2] = {N_X, N_OUT};
        const void *ptrs[2] = {a.x, a.y};
        nm_runs runs;
        if (!nm_runs_of(g, W, slots, ptrs, 2, &runs)) return 0;
        nm_cluster_args<T> k;
        memset(&k, 0, sizeof k);
        k.a = a;
        k.a.size = g->inner.size;
        k.rx = runs.step[0];
        k.ry = runs.step[1];
        k.rp = runs.rp;
        k.per_run = runs.per_run;
        k.loads = runs.loads;
        if (!udnn_gpu_cluster_split(k.loads, 16, NM_CLUSTER_SHARE, NM_CLUSTER_MAX, &k.cs,
                                    &k.chunk) ||
            a.nsets * k.cs >= ((int64_t)1 << 31))
            return 0;
        auto kernel = nm_fwd_cluster<T, W>;
        static udnn_gpu_cache fits;
        if (!udnn_gpu_cluster_fits(c, kernel, NM_CLUSTER_THREADS, NM_CLUSTER_SHARE,
                                   NM_CLUSTER_MAX, &fits))
            return 0;
        *st = udnn_gpu_cluster_launch(c, "launching the norm's cluster kernel", kernel,
                                      (unsigned)(a.nsets * k.cs),
                                      udnn_gpu_whole_warps(k.chunk, NM_CLUSTER_THREADS),
                                      (size_t)k.chunk * 16, k.cs, true, k);
        return 1;
    }
    (void)c, (void)g, (void)a, (void)st;
    return 0;
}

/* ---- backward: group norm's dx and parameter partials, x and dy held once ---------------- */

/* NM_BWD_CLUSTER=0 turns it off, for comparison. H200, bursts, two
 * passes against the split paths (x and dy read three times; copy f16
 * 4143 / 4139 GB/s): 8 groups of 32 x 256 x 112 x 112 f16 1975 / 1975
 * against 1487 / 1489, of 4 x 256 x 112 x 112 1430 / 1413 against 998 /
 * 1000, 32 groups of 16 x 320 x 128 x 128 bf16 1967 / 1968 against 1558
 * / 1556, each element's terms then taken as the split paths take them
 * (g = dy scale rounded alone; besides the conversions, seven float
 * operations an element for the sums and six for dx). With the per-run
 * sums and dx's three coefficients below (three and three), copy f16
 * 4107 / 4140: 2147 / 2144, 1526 / 1509, 2150 / 2145 against 1978 /
 * 1980, 1440 / 1439, 1964 / 1966. With dx stored 16 bytes in one access
 * (it was split as the forward's y was; copy f16 4007 / 4001): 8 groups of
 * 32 x 256 x 112 x 112 f16 2239 / 2242 against 2143 / 2157, of 4 x 256 x
 * 112 x 112 1554 / 1563 against 1516 / 1516, 32 groups of 16 x 320 x 128
 * x 128 bf16 2265 / 2263 against 2147 / 2149. f32, twice the bytes a set,
 * is left to the split paths. */
#ifndef NM_BWD_CLUSTER
#define NM_BWD_CLUSTER 1
#endif
#define NM_BWD_CLUSTER_THREADS 512
/* a block's x and dy: 200 bytes a thread, two blocks a multiprocessor */
#define NM_BWD_CLUSTER_SHARE ((size_t)200 * NM_BWD_CLUSTER_THREADS)
/* the most runs one block's share may touch */
#define NM_BWD_CLUSTER_RUNS 32
/* runs whose partials one block reduction takes (udnn_gpu_block_sums_to0).
 * H200, bursts, three passes (copy f16 3979 / 4000 / 3985 GB/s), against
 * one udnn_gpu_block_sum a partial (two pairs of barriers a run, every
 * thread reading each warp's partial): 8 groups of 4 x 256 x 112 x 112
 * f16 1662 / 1638 / 1643 against 1549 / 1558 / 1547, of 32 x 256 x 112 x
 * 112 f16 2382 / 2367 / 2364 against 2236 / 2236 / 2236, 32 groups of 16
 * x 320 x 128 x 128 bf16 2432 / 2434 / 2432 against 2249 / 2240 / 2248;
 * 4 runs a round lost to 2 (1494 / 1513 / 1517, 2211 / 2218 / 2228, 2189
 * / 2206 / 2196). */
#define NM_BWD_SUM_RUNS 2

template <class T> struct nm_bwd_cluster_args {
    typedef typename udnn_gpu_param<T>::P P;
    nm_space sets;
    const T *x, *dy;
    T *dx;
    const P *scale, *mean, *inv; /* mean NULL for RMS */
    int64_t rx, rdy, rdx, rp;    /* from run to run: x's, dy's, dx's, the parameters' steps */
    udnn_gpu_div32 per_run;      /* loads in a run */
    int64_t loads, chunk;        /* a set's loads, a block's share of them */
    unsigned cs;                 /* blocks of a cluster */
    double rlen;                 /* 1 / a set's elements */
    udnn_gpu_div32 groups;       /* set s is (s / groups, s % groups) */
    int64_t runs, F;             /* runs a set; parameters (groups x runs) */
    double *partial;             /* [n][2][F], for nm_grad_finish */
};

/* Block b of the grid is block b % cs of set b / cs's cluster and holds
 * its loads [rank chunk, (rank + 1) chunk) of x and of dy in dynamic
 * shared memory (dy's after x's chunk), copied in the round-robin order
 * that coalesces them. With the set's saved statistics, one pass over
 * them gives each run's sum dy and sum dy (x - mean), from which follow
 * the parameters' terms (sum dy xhat is inv times the second) and the
 * set's sums (sum g = scale sum dy, sum g xhat = scale inv sum dy (x -
 * mean), g = dy scale; the run's scale is one value). That pass gives
 * thread t the contiguous loads [t m, t m + m), m odd (LDS.128 without
 * conflicts), which span at most two runs, so that each run's partial is
 * a sum over the block in thread order (deterministic), kept in runpart
 * for the cluster. After the cluster's barrier every block joins the
 * set's sums in rank order, the block holding a run's first load joins
 * its partial over the blocks holding it, in rank order, into
 * partial[n][.][group's run], and each block writes its dx, inv (g - mean
 * g - xhat mean(g xhat)) as a dy + b (x - mean) + c with a per run. */
template <class T, int W>
__global__ void __launch_bounds__(NM_BWD_CLUSTER_THREADS, 2)
    nm_bwd_cluster(nm_bwd_cluster_args<T> k)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, W> V;
    extern __shared__ uint4 nm_cluster_held[];
    __shared__ double red[2 * NM_BWD_SUM_RUNS * NM_BWD_CLUSTER_THREADS / 16], part[2];
    __shared__ double runpart[NM_BWD_CLUSTER_RUNS][2];
    __shared__ C means[2];
    udnn_gpu_follow();
    const unsigned rank = udnnGpuClusterRank();
    const int64_t set = blockIdx.x / k.cs, p0 = rank * k.chunk;
    const int64_t end = p0 + k.chunk < k.loads ? p0 + k.chunk : k.loads;
    const int n = end > p0 ? (int)(end - p0) : 0;
    const int t = threadIdx.x, B = blockDim.x;
    V *hx = (V *)nm_cluster_held, *hg = hx + k.chunk;
    int64_t so[NM_SLOTS];
    udnn_gpu_space_offsets<int64_t, NM_SLOTS>(k.sets, set, so);
    const T *x = k.x + so[N_X], *dy = k.dy + so[N_DY];
    const auto *scale = k.scale + so[N_P];
    const C mean = k.mean != NULL ? (C)k.mean[so[N_ST]] : C(0), inv = (C)k.inv[so[N_ST]];
    for (int i = t; i < n; i += B) {
        udnnGpuCopyAsync16(hx + i, x + udnn_gpu_run_locate<W>(k.per_run, k.rx, p0 + i).off);
        udnnGpuCopyAsync16(hg + i, dy + udnn_gpu_run_locate<W>(k.per_run, k.rdy, p0 + i).off);
    }
    udnnGpuCopyAsyncWait();
    __syncthreads(); /* the next pass reads other threads' copies */
    const int m = ((n + B - 1) / B) | 1;
    const int lo = t * m < n ? t * m : n, hi = lo + m < n ? lo + m : n;
    const int64_t r0 = udnn_gpu_div32_q(k.per_run, (uint32_t)p0);
    int64_t ra = -1;
    float pa[2] = {0.0f, 0.0f}, pb[2] = {0.0f, 0.0f}; /* the thread's first run's, its second's */
    double q[2] = {0.0, 0.0};
    if (lo < hi) {
        ra = udnn_gpu_div32_q(k.per_run, (uint32_t)(p0 + lo));
        const int64_t next = (ra + 1) * k.per_run.d - p0;
        const int split = next < hi ? (int)next : hi;
        for (int i = lo; i < hi; i++) {
            const V xv = hx[i], gv = hg[i];
            float f0 = 0.0f, f1 = 0.0f;
#pragma unroll
            for (int e = 0; e < W; e++) {
                const C d = (C)udnn_gpu_pack_ld(gv, e);
                f0 += d;
                f1 = fmaf(d, (C)udnn_gpu_pack_ld(xv, e) - mean, f1);
            }
            if (i < split) {
                pa[0] += f1;
                pa[1] += f0;
            } else {
                pb[0] += f1;
                pb[1] += f0;
            }
        }
        const double sa = (double)(C)scale[ra * k.rp];
        const double sb = split < hi ? (double)(C)scale[(ra + 1) * k.rp] : 0.0;
        q[0] = sa * pa[1] + sb * pb[1];
        q[1] = (sa * pa[0] + sb * pb[0]) * (double)inv;
        pa[0] *= inv;
        pb[0] *= inv;
    }
    const int nr = n > 0 ? (int)(udnn_gpu_div32_q(k.per_run, (uint32_t)(end - 1)) - r0 + 1) : 0;
    /* the runs' partials over the block, NM_BWD_SUM_RUNS runs a round */
    for (int j0 = 0; j0 < nr; j0 += NM_BWD_SUM_RUNS) {
        double v[2 * NM_BWD_SUM_RUNS];
#pragma unroll
        for (int u = 0; u < NM_BWD_SUM_RUNS; u++) {
            const int64_t r = r0 + j0 + u;
            const bool first = lo < hi && ra == r, second = lo < hi && ra + 1 == r;
            v[2 * u] = first ? pa[0] : second ? pb[0] : 0.0;
            v[2 * u + 1] = first ? pa[1] : second ? pb[1] : 0.0;
        }
        udnn_gpu_block_sums_to0<2 * NM_BWD_SUM_RUNS>(v, red);
        if (t == 0)
            for (int u = 0; u < NM_BWD_SUM_RUNS && j0 + u < nr; u++)
                runpart[j0 + u][0] = v[2 * u], runpart[j0 + u][1] = v[2 * u + 1];
    }
    udnn_gpu_cluster_sum2(q, red, part, k.cs);
    if (t == 0) {
        means[0] = (C)(q[0] * k.rlen);
        means[1] = (C)(q[1] * k.rlen);
    }
    /* the runs whose first load this block holds: their partials over the
     * cluster's blocks, in rank order */
    if (t < nr) {
        const int64_t r = r0 + t, first = r * k.per_run.d;
        if (first >= p0) {
            const int64_t next = (r + 1) * k.per_run.d;
            const int64_t last = (next < k.loads ? next : k.loads) - 1;
            const unsigned k1 = (unsigned)(last / k.chunk);
            double s0 = 0.0, s1 = 0.0;
            for (unsigned kk = rank; kk <= k1; kk++) {
                const int64_t rr = udnn_gpu_div32_q(k.per_run, (uint32_t)(kk * k.chunk));
                const double *pr = udnnGpuClusterMap(&runpart[0][0], kk) + 2 * (r - rr);
                s0 += pr[0];
                s1 += pr[1];
            }
            const int64_t nn = udnn_gpu_div32_q(k.groups, (uint32_t)set);
            const int64_t f = (set - nn * k.groups.d) * k.runs + r;
            k.partial[(nn * 2) * k.F + f] = s0;
            k.partial[(nn * 2 + 1) * k.F + f] = s1;
        }
    }
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' shared memory */
    const C mg = means[0], mgx = means[1];
    T *dx = k.dx + so[N_OUT];
    for (int i = t; i < n; i += B) {
        const udnn_gpu_run_at at = udnn_gpu_run_locate<W>(k.per_run, k.rdx, p0 + i);
        const C sc = (C)scale[at.run * k.rp];
        const V xv = hx[i], gv = hg[i];
        V o;
        const C a = inv * sc, b = -inv * inv * mgx, c0 = -inv * mg;
#pragma unroll
        for (int e = 0; e < W; e++) {
            const C xc = (C)udnn_gpu_pack_ld(xv, e) - mean;
            o.v[e] = io<T>::st(fmaf(a, (C)udnn_gpu_pack_ld(gv, e), fmaf(b, xc, c0)));
        }
        udnn_gpu_store_vec(dx + at.off, o);
    }
    udnnGpuClusterWait(); /* the others are done with this block's shared memory */
}

template <class T>
int nm_backward_cluster(const udnn_gpu_context *c, const udnn_norm_problem *p, const nm_geom *g,
                        udnnStatus_t *st)
{
    if constexpr (NM_BWD_CLUSTER && sizeof(T) == 2) {
        typedef typename udnn_gpu_param<T>::P P;
        constexpr int W = 16 / (int)sizeof(T);
        const nm_space &in = g->inner;
        /* set s is (batch s / groups, group s % groups): the sets' space is
         * (n, group) or one of them alone; a parameter is (group, run),
         * the inner space (channel in group, spatial) or (spatial) alone */
        const nm_space &sets = g->sets;
        if (p->groups <= 0 || sets.nd < 1 || sets.nd > 2 || g->feat.nd > 2 || in.nd < 1 ||
            in.nd > 2)
            return 0;
        if (sets.nd == 2 && (sets.dim[1] != p->groups || sets.st[N_P][1] == 0)) return 0;
        /* two inner dims: the first is the channel in the group */
        if (in.nd == 2 && in.st[N_P][0] == 0) return 0;
        static const int slots[3] = {N_X, N_DY, N_OUT};
        const void *ptrs[3] = {p->x_ptr, p->dy_ptr, p->out_ptr};
        nm_runs runs;
        if (!nm_runs_of(g, W, slots, ptrs, 3, &runs)) return 0;
        nm_bwd_cluster_args<T> k;
        memset(&k, 0, sizeof k);
        k.sets = sets;
        k.x = (const T *)p->x_ptr;
        k.dy = (const T *)p->dy_ptr;
        k.dx = (T *)p->out_ptr;
        k.scale = (const P *)p->scale_ptr;
        k.mean = (const P *)p->saved_mean_ptr;
        k.inv = (const P *)p->saved_inv_std_ptr;
        k.rx = runs.step[0];
        k.rdy = runs.step[1];
        k.rdx = runs.step[2];
        k.rp = runs.rp;
        k.runs = in.nd == 2 ? in.dim[0] : 1;
        k.loads = runs.loads;
        k.per_run = runs.per_run;
        k.groups = udnn_gpu_div32_make((uint32_t)p->groups);
        k.F = g->feat.size;
        if (k.F != p->groups * k.runs) return 0;
        k.rlen = 1.0 / (double)in.size;
        const int64_t nsets = sets.size, batch = nsets / p->groups;
        if (nsets >= ((int64_t)1 << 31) ||
            !udnn_gpu_cluster_split(k.loads, 32, NM_BWD_CLUSTER_SHARE, NM_CLUSTER_MAX, &k.cs,
                                    &k.chunk) ||
            nsets * k.cs >= ((int64_t)1 << 31) || k.chunk * k.cs >= ((int64_t)1 << 32))
            return 0;
        /* each thread's contiguous loads within two runs, a block's within
         * NM_BWD_CLUSTER_RUNS */
        const int64_t m = (k.chunk + NM_BWD_CLUSTER_THREADS - 1) / NM_BWD_CLUSTER_THREADS + 1;
        const int64_t per_run = k.per_run.d;
        if (per_run < m || k.chunk / per_run + 2 > NM_BWD_CLUSTER_RUNS) return 0;
        if ((size_t)(2 * batch * k.F) * sizeof(double) > c->scratch_bytes) return 0;
        k.partial = (double *)c->scratch;
        auto kernel = nm_bwd_cluster<T, W>;
        static udnn_gpu_cache fits;
        if (!udnn_gpu_cluster_fits(c, kernel, NM_BWD_CLUSTER_THREADS, NM_BWD_CLUSTER_SHARE,
                                   NM_CLUSTER_MAX, &fits))
            return 0;
        *st = udnn_gpu_cluster_launch(c, "launching the norm's backward cluster kernel", kernel,
                                      (unsigned)(nsets * k.cs),
                                      udnn_gpu_whole_warps(k.chunk, NM_BWD_CLUSTER_THREADS),
                                      (size_t)k.chunk * 32, k.cs, true, k);
        if (*st != UDNN_STATUS_SUCCESS) return 1;
        nm_grad_args<T> f;
        memset(&f, 0, sizeof f);
        f.feat = g->feat;
        f.F = k.F;
        f.partial = k.partial;
        f.dscale = (P *)p->dscale_ptr;
        f.dbias = (P *)p->dbias_ptr;
        *st = nm_grad_finish_launch<T>(c, f, batch);
        return 1;
    }
    (void)c, (void)p, (void)g, (void)st;
    return 0;
}
#else /* no clusters: the other paths */
template <class T>
int nm_forward_cluster(const udnn_gpu_context *, const nm_geom *, const nm_fwd_args<T> &,
                       udnnStatus_t *)
{
    return 0;
}
template <class T>
int nm_backward_cluster(const udnn_gpu_context *, const udnn_norm_problem *, const nm_geom *,
                        udnnStatus_t *)
{
    return 0;
}
#endif

#define NM_CLUSTER_TYPE(T)                                                                         \
    template int nm_forward_cluster<T>(const udnn_gpu_context *, const nm_geom *,                  \
                                       const nm_fwd_args<T> &, udnnStatus_t *);                    \
    template int nm_backward_cluster<T>(const udnn_gpu_context *, const udnn_norm_problem *,       \
                                        const nm_geom *, udnnStatus_t *);
UDNN_GPU_FLOAT_TYPES(NM_CLUSTER_TYPE)
