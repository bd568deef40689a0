/* tensor_ops.cu - the tensor-op solvers: AddTensor (c = alpha1*a + beta*c,
 * a broadcast), TransformTensor (the same blend with a of c's dims, any
 * layout, any pair of float types) and OpTensor (c = op(alpha1*a,
 * alpha2*b) + beta*c, b broadcast; ADD, MUL, MIN, MAX, SQRT, NOT), for
 * FLOAT, DOUBLE, HALF and BFLOAT16 with any strides. They mirror
 * cpu/ref/tensor_ops.c.
 *
 * Paths, fastest first, each for what it can take:
 *  - dense: every tensor in one dense layout; 16-byte accesses (kernels.h's
 *    udnn_gpu_map, or convert_dense for two storage types).
 *  - run broadcast: c dense and the broadcast operand varying along one run
 *    of c's memory order (the bias 1xCx1x1 onto NCHW or NHWC, NxCx1x1,
 *    1x1xHxW, a scalar): c is walked as [outer, mid, inner] in memory
 *    order and the operand's element is (i / inner) % mid, by
 *    multiply-high division.
 *  - transpose: a and c in different layouts that both have a unit-stride
 *    dim (NCHW <-> NHWC): 64x64 tiles through shared memory, so that reads
 *    and writes are both coalesced.
 *  - strided: anything else, one logical element per thread, dims merged
 *    where every tensor allows.
 *
 * Math: float for FLOAT, HALF and BFLOAT16, double for DOUBLE (and for
 * OpTensor with compute type DOUBLE; for TransformTensor when either side
 * is DOUBLE). With beta == 0 the output is never read. Core allows c to be
 * an input only with the same layout; every path reads an element's
 * inputs before it writes that element, in the same thread. */
#include "cuda/kernels.h"

/* ---- shapes -------------------------------------------------------------------------- */

/* Drops dims of 1 and merges neighbours (d, d+1) that every one of the nt
 * tensors walks as one (stride[d] == stride[d+1] * dims[d+1]), so that the
 * strided kernels divide less. */
static void shape_merge(udnn_gpu_shape *s, int nt)
{
    int r = 0;
    for (int d = 0; d < s->rank; d++) {
        if (s->dims[d] == 1) continue;
        int merge = r > 0;
        for (int t = 0; merge && t < nt; t++)
            merge = s->strides[t][r - 1] == s->strides[t][d] * s->dims[d];
        if (merge) {
            s->dims[r - 1] *= s->dims[d];
            for (int t = 0; t < nt; t++) s->strides[t][r - 1] = s->strides[t][d];
            continue;
        }
        s->dims[r] = s->dims[d];
        for (int t = 0; t < nt; t++) s->strides[t][r] = s->strides[t][d];
        r++;
    }
    if (r == 0) {
        s->dims[0] = 1;
        for (int t = 0; t < nt; t++) s->strides[t][0] = 0;
        r = 1;
    }
    s->rank = r;
}

static udnn_gpu_shape merged_shape(const udnn_tensor *const *ts, int nt)
{
    udnn_gpu_shape s = udnn_gpu_make_shape(ts, nt);
    shape_merge(&s, nt);
    return s;
}

/* c dense, and b (b's dims are c's or 1) varying along one run of c's
 * dims in memory order: c's element at memory offset i reads b at
 * ((i / inner) % mid) * stride. */
typedef struct {
    int64_t inner, mid, stride;
} run_bcast;

static int find_run(const udnn_tensor *c, const udnn_tensor *b, run_bcast *r)
{
    const udnn_tensor *ts[1] = {c};
    if (!udnn_gpu_same_dense(ts, 1)) return 0;
    /* c's dims of more than 1, innermost (smallest stride) first */
    int order[UDNN_DIM_MAX], n = 0;
    for (int d = 0; d < c->rank; d++) {
        if (c->dims[d] == 1) continue;
        int k = n++;
        while (k > 0 && c->strides[order[k - 1]] > c->strides[d]) {
            order[k] = order[k - 1];
            k--;
        }
        order[k] = d;
    }
    int k = 0;
    r->inner = 1;
    r->mid = 1;
    r->stride = 0;
    while (k < n && b->dims[order[k]] == 1) r->inner *= c->dims[order[k++]];
    if (k < n) r->stride = b->strides[order[k]];
    while (k < n && b->dims[order[k]] != 1) {
        if (b->strides[order[k]] != r->stride * r->mid) return 0;
        r->mid *= c->dims[order[k++]];
    }
    for (; k < n; k++)
        if (b->dims[order[k]] != 1) return 0;
    return 1;
}

/* ---- run broadcast map ------------------------------------------------------------------ */

/* What the run-broadcast kernel walks: c's count n and the run's
 * dividers. */
typedef struct {
    int64_t n;
    udnn_gpu_fastdiv inner, mid;
    int64_t stride;
} bcast_geom;

enum {
    BCAST_SHARED, /* inner % V == 0: a vector of c shares one b element */
    BCAST_VECTOR, /* inner == 1, mid % V == 0, b dense along the run and 16-byte aligned: a
                     vector of c reads one vector of b */
    BCAST_CONTIG, /* inner == 1, mid % V == 0: a vector of c reads V b elements in a row */
    BCAST_SCALAR  /* anything else, or unaligned: one element at a time */
};

static __device__ __forceinline__ int64_t bcast_index(const bcast_geom &g, uint64_t i)
{
    const uint64_t q = udnn_gpu_fastdiv_q(g.inner, i);
    return (int64_t)(q - udnn_gpu_fastdiv_q(g.mid, q) * g.mid.d) * g.stride;
}

/* out[i] = f({full_0[i], ..., full_{NF-1}[i], b[bcast_index(i)]}, old) over
 * c's memory offsets i; the NF full inputs share c's dense layout. F is
 * kernels.h's map functor: C f(const C (&)[NF + 1], C old). */
template <class T, int NF, int MODE, class F>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bcast_map(bcast_geom g, udnn_gpu_inputs<T, NF + 1> in, T *out, F f, bool read_out)
{
    typedef typename io<T>::C C;
    const int V = 16 / sizeof(T);
    const T *b = in.p[NF];
    const int64_t nvec = MODE == BCAST_SCALAR ? 0 : g.n / V;
    UDNN_GPU_GRID_STRIDE_LOOP(j, nvec)
    {
        const int64_t e = j * V;
        udnn_gpu_vec<T> a[NF > 0 ? NF : 1], o;
        for (int t = 0; t < NF; t++) a[t] = ((const udnn_gpu_vec<T> *)in.p[t])[j];
        if (read_out) o = ((const udnn_gpu_vec<T> *)out)[j];
        C bs = C(0);
        int64_t b0 = 0;
        udnn_gpu_vec<T> bv;
        if (MODE == BCAST_SHARED) bs = io<T>::ld(b[bcast_index(g, (uint64_t)e)]);
        else b0 = bcast_index(g, (uint64_t)e);
        if (MODE == BCAST_VECTOR) bv = ((const udnn_gpu_vec<T> *)b)[b0 / V];
        for (int k = 0; k < V; k++) {
            C x[NF + 1];
            for (int t = 0; t < NF; t++) x[t] = io<T>::ld(a[t].v[k]);
            if (MODE == BCAST_SHARED) x[NF] = bs;
            else if (MODE == BCAST_VECTOR) x[NF] = io<T>::ld(bv.v[k]);
            else x[NF] = io<T>::ld(b[b0 + k * g.stride]);
            o.v[k] = io<T>::st(f(x, read_out ? io<T>::ld(o.v[k]) : C(0)));
        }
        ((udnn_gpu_vec<T> *)out)[j] = o;
    }
    UDNN_GPU_GRID_STRIDE_LOOP(k, g.n - nvec * V)
    {
        const int64_t i = nvec * V + k;
        C x[NF + 1];
        for (int t = 0; t < NF; t++) x[t] = io<T>::ld(in.p[t][i]);
        x[NF] = io<T>::ld(b[bcast_index(g, (uint64_t)i)]);
        out[i] = io<T>::st(f(x, read_out ? io<T>::ld(out[i]) : C(0)));
    }
}

/* Launches bcast_map for c (dense) with NF full inputs in c's layout and
 * the broadcast input last in `in`, along the run r. */
template <class T, int NF, class F>
static udnnStatus_t launch_bcast(const udnn_gpu_context *c, const udnn_tensor *ct,
                                 const run_bcast *r, udnn_gpu_inputs<T, NF + 1> in, T *out, F f,
                                 bool read_out)
{
    const int64_t V = 16 / sizeof(T);
    bcast_geom g;
    g.n = udnn_gpu_count(ct);
    g.inner = udnn_gpu_fastdiv_make(r->inner);
    g.mid = udnn_gpu_fastdiv_make(r->mid);
    g.stride = r->stride;
    if (g.n == 0) return UDNN_STATUS_SUCCESS;
    bool vec = udnn_gpu_aligned16(out);
    for (int t = 0; t < NF; t++) vec = vec && udnn_gpu_aligned16(in.p[t]);
    const unsigned grid = udnn_gpu_grid(c, vec ? g.n / V + 1 : g.n);
    if (vec && r->inner % V == 0)
        bcast_map<T, NF, BCAST_SHARED, F>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(g, in, out, f, read_out);
    else if (vec && r->inner == 1 && r->mid % V == 0 && r->stride == 1 &&
             udnn_gpu_aligned16(in.p[NF]))
        bcast_map<T, NF, BCAST_VECTOR, F>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(g, in, out, f, read_out);
    else if (vec && r->inner == 1 && r->mid % V == 0)
        bcast_map<T, NF, BCAST_CONTIG, F>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(g, in, out, f, read_out);
    else
        bcast_map<T, NF, BCAST_SCALAR, F>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(g, in, out, f, read_out);
    return udnn_gpu_launched();
}

/* kernels.h's map over ts (out first), with dims merged on the strided
 * path. */
template <class T, int NIN, class F>
static udnnStatus_t map_merged(const udnn_gpu_context *c, const udnn_tensor *const *ts,
                               udnn_gpu_inputs<T, NIN> in, T *out, F f, bool read_out)
{
    const int64_t n = udnn_gpu_count(ts[0]);
    if (n == 0 || udnn_gpu_same_dense(ts, NIN + 1))
        return udnn_gpu_map<T, NIN, F>(c, ts, in, out, f, read_out);
    udnn_gpu_shape s = merged_shape(ts, NIN + 1);
    udnn_gpu_strided_map<T, NIN, F>
        <<<udnn_gpu_grid(c, n), UDNN_GPU_BLOCK, 0, c->stream>>>(s, in, out, f, read_out);
    return udnn_gpu_launched();
}

/* ---- blend kernels of two storage types (AddTensor, TransformTensor) ---------------- */

/* c = alpha * a + beta * c in M; c is not read when beta == 0. */
template <class Ta, class Tc, class M> struct blend2 {
    M alpha, beta;
    __device__ __forceinline__ Tc operator()(Ta a, const Tc *old) const
    {
        const M o = beta != M(0) ? (M)io<Tc>::ld(*old) : M(0);
        return io<Tc>::st(
            (typename io<Tc>::C)udnn_gpu_scale_blend((M)io<Ta>::ld(a), alpha, beta, o));
    }
};

/* a and c dense in one layout: K elements a step, 16 bytes of the
 * narrower type (so a double -> half step reads 64 bytes, writes 16). */
template <class Ta, class Tc, class M>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    convert_dense(int64_t n, const Ta *a, Tc *c, blend2<Ta, Tc, M> f, bool vec)
{
    const int K = 16 / (sizeof(Ta) < sizeof(Tc) ? sizeof(Ta) : sizeof(Tc));
    struct alignas(16) va {
        Ta v[K];
    };
    struct alignas(16) vc {
        Tc v[K];
    };
    const int64_t nvec = vec ? n / K : 0;
    UDNN_GPU_GRID_STRIDE_LOOP(j, nvec)
    {
        const va x = ((const va *)a)[j];
        vc o;
        if (f.beta != M(0)) o = ((const vc *)c)[j];
        for (int k = 0; k < K; k++) o.v[k] = f(x.v[k], &o.v[k]);
        ((vc *)c)[j] = o;
    }
    UDNN_GPU_GRID_STRIDE_LOOP(k, n - nvec * K)
    {
        const int64_t i = nvec * K + k;
        c[i] = f(a[i], &c[i]);
    }
}

/* Any strides: shape tensor 0 is c, 1 is a. */
template <class Ta, class Tc, class M>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    convert_strided(udnn_gpu_shape s, const Ta *a, Tc *c, blend2<Ta, Tc, M> f)
{
    UDNN_GPU_GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[2];
        udnn_gpu_offsets<2>(s, i, off);
        c[off[0]] = f(a[off[1]], &c[off[0]]);
    }
}

#define TILE 64      /* a tile is TILE x TILE elements */
#define TILE_COLS 32 /* threads across a tile row: 2 elements each */
#define TILE_ROWS 8  /* thread rows: 8 tile rows each */

/* c and a with different unit-stride dims, x (a's) and y (c's): each tile
 * of the (y, x) plane is read along x and written along y, through shared
 * memory. The other dims make the batch (b*: c's and a's strides). */
typedef struct {
    int nb;
    udnn_gpu_fastdiv bd[UDNN_DIM_MAX];
    int64_t bc[UDNN_DIM_MAX], ba[UDNN_DIM_MAX];
    int64_t nx, ny, tiles;
    udnn_gpu_fastdiv tiles_x, tiles_y;
    int64_t a_y, c_x; /* a's stride along y, c's along x (both unit along their own) */
} tr_geom;

static __device__ __forceinline__ void tr_batch(const tr_geom &g, uint64_t b, int64_t *oa,
                                                int64_t *oc)
{
    int64_t a = 0, c = 0;
    for (int d = g.nb - 1; d >= 0; d--) {
        const uint64_t q = udnn_gpu_fastdiv_q(g.bd[d], b);
        const int64_t r = (int64_t)(b - q * g.bd[d].d);
        a += r * g.ba[d];
        c += r * g.bc[d];
        b = q;
    }
    *oa = a;
    *oc = c;
}

template <class Ta, class Tc, class M>
__global__ void __launch_bounds__(TILE_COLS * TILE_ROWS)
    convert_transpose(tr_geom g, const Ta *a, Tc *c, blend2<Ta, Tc, M> f)
{
    /* padded so that a warp reading a column hits distinct banks (two
     * 16-bit elements share a bank word) */
    __shared__ Ta tile[TILE][TILE + (sizeof(Ta) == 2 ? 2 : 1)];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int NR = TILE / TILE_ROWS, NC = TILE / TILE_COLS;
    for (int64_t t = blockIdx.x; t < g.tiles; t += gridDim.x) {
        const uint64_t r = udnn_gpu_fastdiv_q(g.tiles_x, (uint64_t)t),
                       b = udnn_gpu_fastdiv_q(g.tiles_y, r);
        const int64_t x0 = (t - (int64_t)(r * g.tiles_x.d)) * TILE;
        const int64_t y0 = (int64_t)(r - b * g.tiles_y.d) * TILE;
        int64_t oa, oc;
        tr_batch(g, b, &oa, &oc);
        /* every load of the tile issued before the first is waited for:
         * fixed trip counts, registers, then shared memory */
        Ta v[NR][NC];
#pragma unroll
        for (int i = 0; i < NR; i++) {
            const int64_t y = y0 + ty + i * TILE_ROWS;
            const Ta *row = a + oa + y * g.a_y + x0;
#pragma unroll
            for (int h = 0; h < NC; h++)
                if (y < g.ny && x0 + tx + h * TILE_COLS < g.nx) v[i][h] = row[tx + h * TILE_COLS];
        }
#pragma unroll
        for (int i = 0; i < NR; i++)
#pragma unroll
            for (int h = 0; h < NC; h++) tile[ty + i * TILE_ROWS][tx + h * TILE_COLS] = v[i][h];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < NR; i++) {
            const int64_t x = x0 + ty + i * TILE_ROWS;
            Tc *row = c + oc + x * g.c_x + y0;
#pragma unroll
            for (int h = 0; h < NC; h++) {
                const int k = tx + h * TILE_COLS;
                if (x < g.nx && y0 + k < g.ny) row[k] = f(tile[k][ty + i * TILE_ROWS], &row[k]);
            }
        }
        __syncthreads(); /* the tile is refilled next round */
    }
}

/* The transpose geometry of c and a (same dims), if each has a unit-stride
 * dim and those differ. */
static int find_transpose(const udnn_tensor *ct, const udnn_tensor *at, tr_geom *g)
{
    const udnn_tensor *ts[2] = {ct, at};
    udnn_gpu_shape s = merged_shape(ts, 2);
    int dx = -1, dy = -1;
    for (int d = 0; d < s.rank; d++) {
        if (s.dims[d] == 1) continue;
        if (s.strides[1][d] == 1 && dx < 0) dx = d;
        if (s.strides[0][d] == 1 && dy < 0) dy = d;
    }
    if (dx < 0 || dy < 0 || dx == dy) return 0;
    memset(g, 0, sizeof *g);
    g->nx = s.dims[dx];
    g->ny = s.dims[dy];
    g->a_y = s.strides[1][dy];
    g->c_x = s.strides[0][dx];
    const int64_t tx = (g->nx + TILE - 1) / TILE, ty = (g->ny + TILE - 1) / TILE;
    int64_t batch = 1;
    for (int d = 0; d < s.rank; d++) {
        if (d == dx || d == dy) continue;
        g->bd[g->nb] = udnn_gpu_fastdiv_make(s.dims[d]);
        g->bc[g->nb] = s.strides[0][d];
        g->ba[g->nb++] = s.strides[1][d];
        batch *= s.dims[d];
    }
    g->tiles_x = udnn_gpu_fastdiv_make(tx);
    g->tiles_y = udnn_gpu_fastdiv_make(ty);
    g->tiles = tx * ty * batch;
    return 1;
}

/* c = alpha1 * a + beta * c with a of c's dims in any layout (the dense,
 * transpose or strided kernel). */
template <class Ta, class Tc, class M>
static udnnStatus_t blend_full(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    const udnn_tensor *ts[2] = {&p->c, &p->a};
    const int64_t n = udnn_gpu_count(&p->c);
    const Ta *a = (const Ta *)p->a_ptr;
    Tc *out = (Tc *)p->c_ptr;
    blend2<Ta, Tc, M> f = {(M)p->alpha1, (M)p->beta};
    tr_geom tg;
    if (n == 0) return UDNN_STATUS_SUCCESS;
    if (udnn_gpu_same_dense(ts, 2)) {
        const int64_t K = 16 / (sizeof(Ta) < sizeof(Tc) ? sizeof(Ta) : sizeof(Tc));
        const bool vec = udnn_gpu_aligned16(a) && udnn_gpu_aligned16(out);
        convert_dense<Ta, Tc, M><<<udnn_gpu_grid(c, vec ? n / K + 1 : n), UDNN_GPU_BLOCK, 0,
                                   c->stream>>>(n, a, out, f, vec);
    } else if (find_transpose(&p->c, &p->a, &tg)) {
        const int64_t blocks = tg.tiles < c->max_blocks ? tg.tiles : c->max_blocks;
        convert_transpose<Ta, Tc, M>
            <<<(unsigned)blocks, dim3(TILE_COLS, TILE_ROWS), 0, c->stream>>>(tg, a, out, f);
    } else {
        udnn_gpu_shape s = merged_shape(ts, 2);
        convert_strided<Ta, Tc, M>
            <<<udnn_gpu_grid(c, n), UDNN_GPU_BLOCK, 0, c->stream>>>(s, a, out, f);
    }
    return udnn_gpu_launched();
}

/* ---- AddTensor ---------------------------------------------------------------------------- */

/* c = alpha * a + beta * c as a map functor (a is in[0]) */
template <class C> struct add_f {
    C alpha, beta;
    __device__ C operator()(const C (&x)[1], C old) const
    {
        return udnn_gpu_scale_blend(x[0], alpha, beta, old);
    }
};

static int float_types(const udnn_tensor_problem *p, int with_b, const char **why)
{
    if (!udnn_gpu_float_type(p->c.dtype) || !udnn_gpu_float_type(p->a.dtype) ||
        (with_b && !udnn_gpu_float_type(p->b.dtype))) {
        *why = "the GPU tensor ops take FLOAT, DOUBLE, HALF and BFLOAT16 only";
        return 0;
    }
    return 1;
}

static int add_applicable(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    if (!float_types(p, 0, why)) return 0;
    if (p->a.dtype != p->c.dtype) {
        *why = "AddTensor takes a and c of one type";
        return 0;
    }
    return 1;
}

static int same_dims(const udnn_tensor *x, const udnn_tensor *y)
{
    if (x->rank != y->rank) return 0;
    for (int d = 0; d < x->rank; d++)
        if (x->dims[d] != y->dims[d]) return 0;
    return 1;
}

template <class T>
static udnnStatus_t add_typed(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    typedef typename io<T>::C C;
    const udnn_tensor *ts[2] = {&p->c, &p->a};
    add_f<C> f = {(C)p->alpha1, (C)p->beta};
    const bool read_out = p->beta != 0.0;
    T *out = (T *)p->c_ptr;
    udnn_gpu_inputs<T, 1> in = {{(const T *)p->a_ptr}};
    run_bcast r;
    if (udnn_gpu_same_dense(ts, 2)) return udnn_gpu_map<T, 1>(c, ts, in, out, f, read_out);
    if (find_run(&p->c, &p->a, &r)) return launch_bcast<T, 0>(c, &p->c, &r, in, out, f, read_out);
    if (same_dims(&p->a, &p->c)) return blend_full<T, T, C>(c, p);
    return map_merged<T, 1>(c, ts, in, out, f, read_out);
}

UDNN_GPU_TYPED_RUN(add_run, udnn_tensor_problem, c, add_typed)

/* ---- TransformTensor ------------------------------------------------------------------------ */

static int transform_applicable(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    return float_types(p, 0, why);
}

/* Math in double when either side is DOUBLE, else in float. */
template <class Ta, class Tc>
static udnnStatus_t transform_typed(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    typedef typename io<Ta>::C Ca;
    typedef typename io<Tc>::C Cc;
    if (sizeof(Ca) > sizeof(Cc)) return blend_full<Ta, Tc, Ca>(c, p);
    return blend_full<Ta, Tc, Cc>(c, p);
}

template <class Ta>
static udnnStatus_t transform_from(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->c.dtype, st = transform_typed<Ta, T>(c, p));
    return st;
}

UDNN_GPU_TYPED_RUN(transform_run, udnn_tensor_problem, a, transform_from)

/* ---- OpTensor -------------------------------------------------------------------------------- */

/* MIN and MAX with a NaN operand: NaN when propagating, else the other
 * operand (NaN only when both are), as cpu/ref does. */
template <class M> static __device__ __forceinline__ M min_max(bool is_max, bool prop, M a, M b)
{
    if (isnan(a) || isnan(b)) {
        if (prop) return a + b; /* NaN */
        return isnan(a) ? b : a;
    }
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

/* c = op(alpha1 * a, alpha2 * b) + beta * c in M, as a map functor: in[0]
 * is a, in[1] b (binary ops only). */
template <class C, class M, int NIN, int OP> struct op_f {
    M alpha1, alpha2, beta;
    bool prop;
    __device__ C operator()(const C (&x)[NIN], C old) const
    {
        const M a = alpha1 * (M)x[0];
        const M b = NIN > 1 ? alpha2 * (M)x[NIN - 1] : M(0);
        M r;
        switch (OP) {
        case UDNN_OP_TENSOR_ADD: r = a + b; break;
        case UDNN_OP_TENSOR_MUL: r = a * b; break;
        case UDNN_OP_TENSOR_MIN: r = min_max(false, prop, a, b); break;
        case UDNN_OP_TENSOR_MAX: r = min_max(true, prop, a, b); break;
        case UDNN_OP_TENSOR_SQRT: r = sqrt(a); break;
        default: r = M(1) - a; break; /* NOT */
        }
        return (C)udnn_gpu_scale_blend(r, M(1), beta, (M)old);
    }
};

static int op_applicable(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    const int unary = p->tensor_op == UDNN_OP_TENSOR_SQRT || p->tensor_op == UDNN_OP_TENSOR_NOT;
    if (!float_types(p, !unary, why)) return 0;
    if (p->a.dtype != p->c.dtype || (!unary && p->b.dtype != p->c.dtype)) {
        *why = "OpTensor takes a, b and c of one type";
        return 0;
    }
    if (p->tensor_op < UDNN_OP_TENSOR_ADD || p->tensor_op > UDNN_OP_TENSOR_NOT) {
        *why = "unknown OpTensor op";
        return 0;
    }
    return 1;
}

template <class T, class M, int OP>
static udnnStatus_t op_unary(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    typedef typename io<T>::C C;
    const udnn_tensor *ts[2] = {&p->c, &p->a};
    op_f<C, M, 1, OP> f = {(M)p->alpha1, M(0), (M)p->beta, p->nan_opt == UDNN_PROPAGATE_NAN};
    udnn_gpu_inputs<T, 1> in = {{(const T *)p->a_ptr}};
    return map_merged<T, 1>(c, ts, in, (T *)p->c_ptr, f, p->beta != 0.0);
}

template <class T, class M, int OP>
static udnnStatus_t op_binary(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    typedef typename io<T>::C C;
    const udnn_tensor *ts[3] = {&p->c, &p->a, &p->b};
    op_f<C, M, 2, OP> f = {(M)p->alpha1, (M)p->alpha2, (M)p->beta,
                           p->nan_opt == UDNN_PROPAGATE_NAN};
    udnn_gpu_inputs<T, 2> in = {{(const T *)p->a_ptr, (const T *)p->b_ptr}};
    T *out = (T *)p->c_ptr;
    const bool read_out = p->beta != 0.0;
    run_bcast r;
    if (!udnn_gpu_same_dense(ts, 3) && udnn_gpu_same_dense(ts, 2) && find_run(&p->c, &p->b, &r))
        return launch_bcast<T, 1>(c, &p->c, &r, in, out, f, read_out);
    return map_merged<T, 2>(c, ts, in, out, f, read_out);
}

template <class T, class M>
static udnnStatus_t op_typed(const udnn_gpu_context *c, const udnn_tensor_problem *p)
{
    switch (p->tensor_op) {
    case UDNN_OP_TENSOR_ADD: return op_binary<T, M, UDNN_OP_TENSOR_ADD>(c, p);
    case UDNN_OP_TENSOR_MUL: return op_binary<T, M, UDNN_OP_TENSOR_MUL>(c, p);
    case UDNN_OP_TENSOR_MIN: return op_binary<T, M, UDNN_OP_TENSOR_MIN>(c, p);
    case UDNN_OP_TENSOR_MAX: return op_binary<T, M, UDNN_OP_TENSOR_MAX>(c, p);
    case UDNN_OP_TENSOR_SQRT: return op_unary<T, M, UDNN_OP_TENSOR_SQRT>(c, p);
    case UDNN_OP_TENSOR_NOT: return op_unary<T, M, UDNN_OP_TENSOR_NOT>(c, p);
    }
    return UDNN_STATUS_NOT_SUPPORTED;
}

/* Math in the descriptor's compute type (double for DOUBLE data, which
 * core makes compute in DOUBLE). */
static udnnStatus_t op_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_tensor_problem);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    if (p->compute_type == UDNN_DATA_DOUBLE || p->c.dtype == UDNN_DATA_DOUBLE) {
        UDNN_GPU_DISPATCH(p->c.dtype, st = (op_typed<T, double>(c, p)));
    } else {
        UDNN_GPU_DISPATCH(p->c.dtype, st = (op_typed<T, float>(c, p)));
    }
    return st;
}

/* ---- solvers --------------------------------------------------------------------------------- */

static const udnn_solver add_tensor = {
    /* .name = */ "gpu_add_tensor",
    /* .op = */ UDNN_OP_ADD_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ add_applicable,
    /* .workspace = */ NULL,
    /* .run = */ add_run,
};

static const udnn_solver transform_tensor = {
    /* .name = */ "gpu_transform_tensor",
    /* .op = */ UDNN_OP_TRANSFORM_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ transform_applicable,
    /* .workspace = */ NULL,
    /* .run = */ transform_run,
};

static const udnn_solver op_tensor = {
    /* .name = */ "gpu_op_tensor",
    /* .op = */ UDNN_OP_OP_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ op_applicable,
    /* .workspace = */ NULL,
    /* .run = */ op_run,
};

UDNN_GPU_SOLVER_TABLE(tensor_ops, &add_tensor, &transform_tensor, &op_tensor);
