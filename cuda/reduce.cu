/* reduce.cu - the ReduceTensor solver: c = alpha * reduce(a) + beta * c
 * over any set of dims, every op (ADD, MUL, MIN, MAX, AMAX, AVG, NORM1,
 * NORM2, MUL_NO_ZEROS), FLOAT, DOUBLE, HALF and BFLOAT16, any strides,
 * with the flattened indices of MIN, MAX and AMAX. It mirrors
 * cpu/ref/reduce.c.
 *
 * The problem as two index spaces: the outputs (the kept dims) and each
 * output's group (the reduced dims). Both are walked in a's memory order,
 * dims merged where the strides allow, so a typical problem has one or two
 * of each; the logical (row-major) indices that the indices output and
 * the "first element" rule use are carried beside. A block of
 * UDNN_GPU_BLOCK threads takes several outputs, several threads ("lanes")
 * per output:
 *  - ROW: the innermost reduced dim has unit stride (NCHW over H and W, or
 *    per channel; a whole-tensor reduction): consecutive threads share an
 *    output and sweep its group, 16 bytes a load where the layout allows.
 *  - COL: the innermost kept dim has unit stride and the reduced ones do
 *    not (NHWC per channel; NCHW over C): consecutive threads take
 *    consecutive outputs (16 bytes of them a load where the layout
 *    allows), so every load is coalesced, and the block's rows split the
 *    group.
 * When the outputs alone would not fill whole waves of resident blocks,
 * each group is also split across blocks (grid.y): each block writes its
 * partial state to c->scratch (no workspace is asked of the caller) and a
 * second kernel combines them in split order. Every combination happens in
 * an order fixed by the shape, the device's SM count and the kernel's
 * occupancy: the same bits on every run.
 *
 * State and NaN: the selections carry (value, j) under a total order (the
 * better value, ties to the lower j; with PROPAGATE_NAN a NaN beats any
 * number, without it any number beats a NaN), so any tree gives the
 * sequential reference's answer: the first NaN, the first extreme, or NaN
 * at index 0 for an all-NaN group. The arithmetic ops accumulate in the
 * compute type (double for DOUBLE data or compType DOUBLE, else float),
 * except that sums (ADD, AVG) always accumulate in double: their terms may
 * cancel, which leaves a float sum no bound relative to the result (a
 * 9-element average missed 1e-5), and the kernel is bound by memory.
 *
 * c may be a's buffer only when nothing is reduced (core checks): every
 * output is then read and written by one thread. */
#include "cuda/kernels.h"

/* ---- geometry ------------------------------------------------------------------------------- */

/* Kept dims (k*) and reduced dims (r*): output o sits at a + sum(idx *
 * ka) and c + sum(idx * kc), and its logical (row-major) index is sum(idx
 * * ki); element j of its group sits at a + sum(idx * ra), with logical
 * index sum(idx * ri). Each list is walked outermost first in a's memory
 * order (descending a-stride), whatever the logical order, so that
 * neighbouring threads read neighbouring addresses; its dims are merged
 * where every stride allows. nr >= 1 (a dim of 1 when nothing is
 * reduced); nk may be 0 (one output). */
typedef struct {
    int nk, nr;
    udnn_gpu_fastdiv kd[UDNN_DIM_MAX], rd[UDNN_DIM_MAX];
    int64_t ka[UDNN_DIM_MAX], kc[UDNN_DIM_MAX], ki[UDNN_DIM_MAX];
    int64_t ra[UDNN_DIM_MAX], ri[UDNN_DIM_MAX];
    int64_t nc, G;
} red_geom;

/* A dim of a list: its size and up to three strides (a's first). */
typedef struct {
    int64_t n, s[3];
} gdim;

/* Appends (n, s[0..ns)) to l, merged into the last entry when each of its
 * strides is this one's times n. */
static void gdim_push(gdim *l, int *cnt, int ns, int64_t n, const int64_t *s)
{
    int merge = *cnt > 0;
    for (int k = 0; merge && k < ns; k++) merge = l[*cnt - 1].s[k] == s[k] * n;
    if (merge) {
        l[*cnt - 1].n *= n;
        for (int k = 0; k < ns; k++) l[*cnt - 1].s[k] = s[k];
        return;
    }
    l[*cnt].n = n;
    for (int k = 0; k < 3; k++) l[*cnt].s[k] = k < ns ? s[k] : 0;
    (*cnt)++;
}

/* Gives the list its logical index strides (stride ns, row-major over its
 * own dims), sorts it by a-stride, descending and stable, and merges what
 * became mergeable. */
static void gdim_order(gdim *l, int *cnt, int ns)
{
    int64_t idx = 1;
    for (int i = *cnt - 1; i >= 0; i--) {
        l[i].s[ns] = idx;
        idx *= l[i].n;
    }
    for (int i = 1; i < *cnt; i++)
        for (int k = i; k > 0 && l[k - 1].s[0] < l[k].s[0]; k--) {
            const gdim t = l[k - 1];
            l[k - 1] = l[k];
            l[k] = t;
        }
    gdim sorted[UDNN_DIM_MAX];
    int n = 0;
    for (int i = 0; i < *cnt; i++) gdim_push(sorted, &n, ns + 1, l[i].n, l[i].s);
    memcpy(l, sorted, (size_t)n * sizeof *l);
    *cnt = n;
}

static void build_geom(const udnn_reduce_problem *p, red_geom *g)
{
    gdim kept[UDNN_DIM_MAX], red[UDNN_DIM_MAX];
    int nk = 0, nr = 0;
    memset(g, 0, sizeof *g);
    g->nc = g->G = 1;
    for (int d = 0; d < p->a.rank; d++) {
        const int64_t n = p->a.dims[d];
        if (n == 1) continue;
        const int64_t s[2] = {p->a.strides[d], p->c.strides[d]};
        if (p->c.dims[d] == 1) {
            gdim_push(red, &nr, 1, n, s);
            g->G *= n;
        } else {
            gdim_push(kept, &nk, 2, n, s);
            g->nc *= n;
        }
    }
    gdim_order(kept, &nk, 2);
    gdim_order(red, &nr, 1);
    if (nr == 0) {
        red[0].n = 1;
        red[0].s[0] = red[0].s[1] = 0;
        nr = 1;
    }
    g->nk = nk;
    g->nr = nr;
    for (int d = 0; d < nk; d++) {
        g->kd[d] = udnn_gpu_fastdiv_make(kept[d].n);
        g->ka[d] = kept[d].s[0];
        g->kc[d] = kept[d].s[1];
        g->ki[d] = kept[d].s[2];
    }
    for (int d = 0; d < nr; d++) {
        g->rd[d] = udnn_gpu_fastdiv_make(red[d].n);
        g->ra[d] = red[d].s[0];
        g->ri[d] = red[d].s[1];
    }
}

/* Offsets of output o (in walk order) in a and c, and its logical index. */
static __device__ __forceinline__ void kept_offsets(const red_geom &g, uint64_t o, int64_t *a,
                                                    int64_t *c, int64_t *logical)
{
    int64_t oa = 0, oc = 0, ol = 0;
    for (int d = g.nk - 1; d >= 0; d--) {
        const uint64_t q = udnn_gpu_fastdiv_q(g.kd[d], o);
        const int64_t r = (int64_t)(o - q * g.kd[d].d);
        oa += r * g.ka[d];
        oc += r * g.kc[d];
        ol += r * g.ki[d];
        o = q;
    }
    *a = oa;
    *c = oc;
    *logical = ol;
}

/* Offset in a of group element j (in walk order) from the output's base,
 * and j's logical index (the one the selections report). */
static __device__ __forceinline__ int64_t group_offset(const red_geom &g, uint64_t j,
                                                       int64_t *logical)
{
    int64_t off = 0, jl = 0;
    for (int d = g.nr - 1; d > 0; d--) {
        const uint64_t q = udnn_gpu_fastdiv_q(g.rd[d], j);
        const int64_t r = (int64_t)(j - q * g.rd[d].d);
        off += r * g.ra[d];
        jl += r * g.ri[d];
        j = q;
    }
    *logical = jl + (int64_t)j * g.ri[0];
    return off + (int64_t)j * g.ra[0];
}

/* ---- the ops --------------------------------------------------------------------------------- */

template <class M> struct rstate {
    M v;
    int64_t j; /* selections: the index that gave v; -1 while empty */
};

template <int OP> struct rop_kind {
    static const bool select = OP == UDNN_REDUCE_TENSOR_MIN || OP == UDNN_REDUCE_TENSOR_MAX ||
                               OP == UDNN_REDUCE_TENSOR_AMAX;
    static const bool product = OP == UDNN_REDUCE_TENSOR_MUL ||
                                OP == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
};

template <int OP, class M> struct rop {
    static __device__ __forceinline__ rstate<M> empty()
    {
        rstate<M> s;
        s.v = rop_kind<OP>::product ? M(1) : M(0);
        s.j = rop_kind<OP>::select ? -1 : 0;
        return s;
    }

    static __device__ __forceinline__ rstate<M> elem(M x, int64_t j)
    {
        rstate<M> s;
        s.j = rop_kind<OP>::select ? j : 0;
        switch (OP) {
        case UDNN_REDUCE_TENSOR_MUL_NO_ZEROS: s.v = x == M(0) ? M(1) : x; break;
        case UDNN_REDUCE_TENSOR_NORM1:
        case UDNN_REDUCE_TENSOR_AMAX: s.v = fabs(x); break;
        case UDNN_REDUCE_TENSOR_NORM2: s.v = x * x; break;
        default: s.v = x; break;
        }
        return s;
    }

    /* x beats y: see the top of the file */
    static __device__ __forceinline__ bool beats(const rstate<M> &x, const rstate<M> &y,
                                                 bool prop)
    {
        const bool xn = isnan(x.v), yn = isnan(y.v);
        if (xn != yn) return prop ? xn : yn;
        if (!xn) {
            if (OP == UDNN_REDUCE_TENSOR_MIN ? x.v < y.v : x.v > y.v) return true;
            if (OP == UDNN_REDUCE_TENSOR_MIN ? y.v < x.v : y.v > x.v) return false;
        }
        return x.j < y.j;
    }

    static __device__ __forceinline__ rstate<M> join(const rstate<M> &x, const rstate<M> &y,
                                                     bool prop)
    {
        if (rop_kind<OP>::select) {
            if (y.j < 0) return x;
            if (x.j < 0) return y;
            return beats(x, y, prop) ? x : y;
        }
        rstate<M> s;
        s.j = 0;
        s.v = rop_kind<OP>::product ? x.v * y.v : x.v + y.v;
        return s;
    }

    static __device__ __forceinline__ M final(const rstate<M> &s, int64_t G)
    {
        if (OP == UDNN_REDUCE_TENSOR_AVG) return s.v / (M)G;
        if (OP == UDNN_REDUCE_TENSOR_NORM2) return sqrt(s.v);
        return s.v;
    }
};

/* ---- kernels --------------------------------------------------------------------------------- */

/* What a launch needs besides the geometry. Threads of a block: output
 * slot (t / os) % no, lane (t / ls) % nl (ROW: os = nl, ls = 1; COL:
 * os = 1, ls = no); no * nl == the block size, nl a power of two. A slot
 * holds VO consecutive outputs (COL with 16-byte loads), else one. */
template <class T, class M> struct red_args {
    const T *a;
    T *c;
    void *indices; /* NULL, or one per output (selections) */
    udnnIndicesType_t itype;
    M alpha, beta;
    bool prop;
    int os, ls, no, nl;
    int64_t nob;   /* blocks of outputs: ceil(nc / (no * VO)) */
    int64_t chunk; /* group elements per split (a multiple of the vector width) */
    int splits;
    rstate<M> *part; /* splits > 1: nc * splits partial states */
};

static __device__ __forceinline__ void store_index(void *base, udnnIndicesType_t t, int64_t at,
                                                   int64_t j)
{
    switch (t) {
    case UDNN_8BIT_INDICES: ((uint8_t *)base)[at] = (uint8_t)j; break;
    case UDNN_16BIT_INDICES: ((uint16_t *)base)[at] = (uint16_t)j; break;
    case UDNN_32BIT_INDICES: ((uint32_t *)base)[at] = (uint32_t)j; break;
    case UDNN_64BIT_INDICES: ((uint64_t *)base)[at] = (uint64_t)j; break;
    }
}

/* c[o] = alpha * final(s) + beta * c[o], and o's index. */
template <class T, class M, int OP>
static __device__ __forceinline__ void red_store(const red_args<T, M> &p, const red_geom &g,
                                                 uint64_t o, const rstate<M> &s)
{
    int64_t oa, oc, ol;
    kept_offsets(g, o, &oa, &oc, &ol);
    const M old = p.beta != M(0) ? (M)io<T>::ld(p.c[oc]) : M(0);
    const M r = udnn_gpu_scale_blend(rop<OP, M>::final(s, g.G), p.alpha, p.beta, old);
    p.c[oc] = io<T>::st((typename io<T>::C)r);
    if (rop_kind<OP>::select && p.indices != NULL) store_index(p.indices, p.itype, ol, s.j);
}

/* N consecutive elements of a at p: one 16-byte load when N > 1. */
template <class T, int N> struct pack {
    T v[N];
    static __device__ __forceinline__ pack load(const T *p)
    {
        pack r;
        if (N == 1) {
            r.v[0] = *p;
        } else {
            const udnn_gpu_vec<T> x = *(const udnn_gpu_vec<T> *)p;
            for (int k = 0; k < N; k++) r.v[k] = x.v[k];
        }
        return r;
    }
};

/* Loads (of V elements each) a lane keeps in flight before joining them. */
#define RED_UNROLL 4

/* One pass: each output slot's lanes sweep their split of the group(s).
 * VJ > 1: 16-byte loads along j (the innermost reduced dim is unit-stride
 * and every run of it starts aligned and holds whole vectors); VO > 1:
 * 16-byte loads across VO consecutive outputs (the innermost kept dim is
 * unit-stride, likewise). At most one of them exceeds 1. */
template <class T, class M, int OP, int VJ, int VO>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK) reduce_pass(red_geom g, red_args<T, M> p)
{
    typedef rop<OP, M> R;
    const int V = VJ * VO;
    __shared__ rstate<M> sm[VO][UDNN_GPU_BLOCK];
    const int t = threadIdx.x;
    const int slot = (t / p.os) % p.no, lane = (t / p.ls) % p.nl;
    const int64_t j0 = (int64_t)blockIdx.y * p.chunk;
    const int64_t j1 = j0 + p.chunk < g.G ? j0 + p.chunk : g.G;
    const int64_t q1 = j1 / VJ; /* loads [j0 / VJ, q1) of each group */
    for (int64_t ob = blockIdx.x; ob < p.nob; ob += gridDim.x) {
        const int64_t o0 = (ob * p.no + slot) * VO;
        rstate<M> s[VO];
        for (int k = 0; k < VO; k++) s[k] = R::empty();
        if (o0 < g.nc) {
            int64_t base, oc, ol;
            kept_offsets(g, (uint64_t)o0, &base, &oc, &ol);
            /* along j, the elements of a load are consecutive in the
             * innermost reduced dim: logical indices ri apart */
            const int64_t rik = VJ > 1 ? g.ri[g.nr - 1] : 0;
            int64_t q = j0 / VJ + lane;
            for (; q + (RED_UNROLL - 1) * p.nl < q1; q += RED_UNROLL * p.nl) {
                pack<T, V> x[RED_UNROLL];
                int64_t jl[RED_UNROLL];
                for (int u = 0; u < RED_UNROLL; u++)
                    x[u] = pack<T, V>::load(
                        p.a + base + group_offset(g, (uint64_t)((q + u * p.nl) * VJ), &jl[u]));
                for (int u = 0; u < RED_UNROLL; u++)
                    for (int k = 0; k < V; k++) {
                        const M v = (M)io<T>::ld(x[u].v[k]);
                        rstate<M> &acc = s[VO > 1 ? k : 0];
                        acc = R::join(acc, R::elem(v, jl[u] + (VJ > 1 ? k * rik : 0)), p.prop);
                    }
            }
            for (; q < q1; q += p.nl) {
                int64_t jl;
                const pack<T, V> x =
                    pack<T, V>::load(p.a + base + group_offset(g, (uint64_t)(q * VJ), &jl));
                for (int k = 0; k < V; k++) {
                    const M v = (M)io<T>::ld(x.v[k]);
                    rstate<M> &acc = s[VO > 1 ? k : 0];
                    acc = R::join(acc, R::elem(v, jl + (VJ > 1 ? k * rik : 0)), p.prop);
                }
            }
        }
        for (int k = 0; k < VO; k++) sm[k][t] = s[k];
        for (int h = p.nl / 2; h > 0; h /= 2) {
            __syncthreads();
            if (lane < h)
                for (int k = 0; k < VO; k++)
                    sm[k][t] = R::join(sm[k][t], sm[k][t + h * p.ls], p.prop);
        }
        __syncthreads();
        if (lane == 0)
            for (int k = 0; k < VO; k++) {
                const int64_t o = o0 + k;
                if (o >= g.nc) break;
                if (p.splits == 1) red_store<T, M, OP>(p, g, (uint64_t)o, sm[k][t]);
                else p.part[o * p.splits + blockIdx.y] = sm[k][t];
            }
        /* the next round's first write to sm is this thread's own slot, and
         * every read of another's happens after a barrier */
    }
}

/* Joins each output's partial states in split order (a block per output,
 * its threads over the splits, then a fixed tree) and stores. */
template <class T, class M, int OP>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK) reduce_combine(red_geom g, red_args<T, M> p)
{
    typedef rop<OP, M> R;
    __shared__ rstate<M> sm[UDNN_GPU_BLOCK];
    const int t = threadIdx.x, nt = blockDim.x;
    for (int64_t o = blockIdx.x; o < g.nc; o += gridDim.x) {
        rstate<M> s = R::empty();
        for (int k = t; k < p.splits; k += nt) s = R::join(s, p.part[o * p.splits + k], p.prop);
        sm[t] = s;
        for (int h = nt / 2; h > 0; h /= 2) {
            __syncthreads();
            if (t < h) sm[t] = R::join(sm[t], sm[t + h], p.prop);
        }
        __syncthreads();
        if (t == 0) red_store<T, M, OP>(p, g, (uint64_t)o, sm[0]);
    }
}

/* ---- planning and launching ------------------------------------------------------------------ */

/* The fewest loads each lane of a split sweeps. */
#define RED_MIN_SWEEP 16

static int64_t pow2_ceil(int64_t n)
{
    int64_t p = 1;
    while (p < n) p *= 2;
    return p;
}

static int64_t pow2_floor(int64_t n)
{
    int64_t p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* ROW when the group's innermost dim is unit-stride (or nothing else
 * is), COL when the outputs' innermost dim is unit-stride instead. */
static int use_col(const red_geom *g)
{
    if (g->nk == 0 || g->ka[g->nk - 1] != 1) return 0;
    return g->G == 1 || g->ra[g->nr - 1] != 1;
}

/* 16-byte loads of V elements along the group (ROW, along_j) or across
 * outputs (COL): that dim unit-stride and a multiple of V, every other
 * stride a multiple of V, a aligned. */
static int can_vectorize(const red_geom *g, const void *a, size_t elem, int along_j)
{
    const int64_t V = 16 / (int64_t)elem;
    if (!udnn_gpu_aligned16(a)) return 0;
    if (along_j) {
        if (g->G == 1 || g->ra[g->nr - 1] != 1 || g->rd[g->nr - 1].d % V != 0) return 0;
    } else {
        if (g->nk == 0 || g->ka[g->nk - 1] != 1 || g->kd[g->nk - 1].d % V != 0) return 0;
    }
    for (int d = 0; d < g->nk; d++)
        if (g->ka[d] % V != 0 && !(!along_j && d == g->nk - 1)) return 0;
    for (int d = 0; d < g->nr; d++)
        if (g->ra[d] % V != 0 && !(along_j && d == g->nr - 1)) return 0;
    return 1;
}

/* Splits per output block so that the launch fills whole waves of
 * resident blocks (cap): the first count reaching 90%, else the best. */
static int64_t pick_splits(int64_t nob, int64_t cap, int64_t smax)
{
    int64_t best = 1;
    double best_eff = 0.0;
    for (int64_t s = 1; s <= smax; s++) {
        const int64_t items = nob * s, waves = (items + cap - 1) / cap;
        const double eff = (double)items / (double)(waves * cap);
        if (eff >= 0.9) return s;
        if (eff > best_eff) {
            best = s;
            best_eff = eff;
        }
    }
    return best;
}

/* Resident blocks of reduce_pass per multiprocessor, asked once per
 * process and device. */
template <class T, class M, int OP, int VJ, int VO>
static int64_t pass_occupancy(const udnn_gpu_context *c)
{
    static udnn_gpu_cache cached;
    return udnn_gpu_occupancy(c, reduce_pass<T, M, OP, VJ, VO>, UDNN_GPU_BLOCK, 0, &cached);
}

template <class T, class M, int OP, int VJ, int VO>
static udnnStatus_t reduce_launch(const udnn_gpu_context *c, const udnn_reduce_problem *p,
                                  const red_geom &g, int col)
{
    red_args<T, M> r;
    memset(&r, 0, sizeof r);
    r.a = (const T *)p->a_ptr;
    r.c = (T *)p->c_ptr;
    r.indices = p->indices_ptr;
    r.itype = p->indices_type;
    r.alpha = (M)p->alpha;
    r.beta = (M)p->beta;
    r.prop = p->nan_opt == UDNN_PROPAGATE_NAN;

    const int64_t block = UDNN_GPU_BLOCK;
    if (col) {
        /* rows of consecutive outputs, as wide as a warp where the outputs
         * allow; the block's other threads split the group */
        const int64_t nx = clamp64(pow2_ceil(g.nc / VO), 1, 32);
        r.nl = (int)clamp64(pow2_floor((g.G + 3) / 4), 1, block / nx);
        r.no = (int)(block / r.nl);
        r.os = 1;
        r.ls = r.no;
    } else {
        /* lanes enough for about 8 loads each */
        r.nl = (int)clamp64(pow2_ceil((g.G / VJ + 7) / 8), 1, block);
        r.no = (int)(block / r.nl);
        r.os = r.nl;
        r.ls = 1;
    }
    r.nob = (g.nc + (int64_t)r.no * VO - 1) / ((int64_t)r.no * VO);

    /* Split the groups across blocks when the outputs alone would not
     * fill whole waves, while each lane keeps a long sweep and the
     * partial states fit the scratch. */
    const int64_t cap = pass_occupancy<T, M, OP, VJ, VO>(c) * c->sm_count;
    int64_t smax = g.G / ((int64_t)r.nl * VJ * RED_MIN_SWEEP);
    const int64_t fit = (int64_t)(c->scratch_bytes / sizeof(rstate<M>)) / g.nc;
    if (smax > fit) smax = fit;
    smax = clamp64(smax, 1, 65535);
    int64_t splits = pick_splits(r.nob, cap, smax);
    r.chunk = (g.G + splits - 1) / splits;
    r.chunk = (r.chunk + VJ - 1) / VJ * VJ;
    splits = (g.G + r.chunk - 1) / r.chunk;
    r.splits = (int)splits;
    r.part = (rstate<M> *)c->scratch;

    const dim3 grid((unsigned)(r.nob < c->max_blocks ? r.nob : c->max_blocks), (unsigned)splits);
    reduce_pass<T, M, OP, VJ, VO><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(g, r);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS || splits == 1) return st;
    const int64_t threads = clamp64(pow2_ceil(splits), 32, UDNN_GPU_BLOCK);
    const int64_t blocks = g.nc < c->max_blocks ? g.nc : c->max_blocks;
    reduce_combine<T, M, OP><<<(unsigned)blocks, (unsigned)threads, 0, c->stream>>>(g, r);
    return udnn_gpu_launched();
}

/* The ROW or COL pass, vectorized where the layout allows. */
template <class T, class M, int OP>
static udnnStatus_t reduce_plan(const udnn_gpu_context *c, const udnn_reduce_problem *p)
{
    const int V = 16 / sizeof(T);
    red_geom g;
    build_geom(p, &g);
    const int col = use_col(&g);
    if (!col && can_vectorize(&g, p->a_ptr, sizeof(T), 1))
        return reduce_launch<T, M, OP, V, 1>(c, p, g, 0);
    if (col && can_vectorize(&g, p->a_ptr, sizeof(T), 0))
        return reduce_launch<T, M, OP, 1, V>(c, p, g, 1);
    return reduce_launch<T, M, OP, 1, 1>(c, p, g, col);
}

/* The selections compare in the storage type's compute type (exact); the
 * arithmetic ops accumulate in the compute type asked for. */
template <class T, int OP>
static udnnStatus_t reduce_arith(const udnn_gpu_context *c, const udnn_reduce_problem *p)
{
    typedef typename io<T>::C C;
    /* DOUBLE data computes in DOUBLE (core checks), so C == double there */
    const bool is_sum = OP == UDNN_REDUCE_TENSOR_ADD || OP == UDNN_REDUCE_TENSOR_AVG;
    if ((is_sum || p->compute_type == UDNN_DATA_DOUBLE) && sizeof(C) != sizeof(double))
        return reduce_plan<T, double, OP>(c, p);
    return reduce_plan<T, C, OP>(c, p);
}

template <class T>
static udnnStatus_t reduce_typed(const udnn_gpu_context *c, const udnn_reduce_problem *p)
{
    typedef typename io<T>::C C;
    switch (p->op) {
    case UDNN_REDUCE_TENSOR_ADD: return reduce_arith<T, UDNN_REDUCE_TENSOR_ADD>(c, p);
    case UDNN_REDUCE_TENSOR_MUL: return reduce_arith<T, UDNN_REDUCE_TENSOR_MUL>(c, p);
    case UDNN_REDUCE_TENSOR_AVG: return reduce_arith<T, UDNN_REDUCE_TENSOR_AVG>(c, p);
    case UDNN_REDUCE_TENSOR_NORM1: return reduce_arith<T, UDNN_REDUCE_TENSOR_NORM1>(c, p);
    case UDNN_REDUCE_TENSOR_NORM2: return reduce_arith<T, UDNN_REDUCE_TENSOR_NORM2>(c, p);
    case UDNN_REDUCE_TENSOR_MUL_NO_ZEROS:
        return reduce_arith<T, UDNN_REDUCE_TENSOR_MUL_NO_ZEROS>(c, p);
    case UDNN_REDUCE_TENSOR_MIN: return reduce_plan<T, C, UDNN_REDUCE_TENSOR_MIN>(c, p);
    case UDNN_REDUCE_TENSOR_MAX: return reduce_plan<T, C, UDNN_REDUCE_TENSOR_MAX>(c, p);
    case UDNN_REDUCE_TENSOR_AMAX: return reduce_plan<T, C, UDNN_REDUCE_TENSOR_AMAX>(c, p);
    }
    return UDNN_STATUS_NOT_SUPPORTED;
}

static int reduce_applicable(const void *problem, const char **why)
{
    const udnn_reduce_problem *p = (const udnn_reduce_problem *)problem;
    if (!udnn_gpu_float_type(p->a.dtype) || p->c.dtype != p->a.dtype) {
        *why = "the GPU reduction takes FLOAT, DOUBLE, HALF and BFLOAT16, a and c alike";
        return 0;
    }
    if (p->op < UDNN_REDUCE_TENSOR_ADD || p->op > UDNN_REDUCE_TENSOR_MUL_NO_ZEROS) {
        *why = "unknown reduction op";
        return 0;
    }
    return 1;
}

UDNN_GPU_TYPED_RUN(reduce_run, udnn_reduce_problem, a, reduce_typed)

static const udnn_solver reduce = {
    /* .name = */ "gpu_reduce",
    /* .op = */ UDNN_OP_REDUCE,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ reduce_applicable,
    /* .workspace = */ NULL,
    /* .run = */ reduce_run,
};

UDNN_GPU_SOLVER_TABLE(reduce, &reduce);
