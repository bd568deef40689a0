/* lrn.cu - cross-channel LRN forward and backward, FLOAT, DOUBLE, HALF and
 * BFLOAT16, 4-D and 5-D, any strides, alpha/beta blending, in place.
 * Semantics mirror cpu/ref/lrn.c: channel c's window is c - behind ...
 * c + ahead clipped to [0, C), behind = floor((n-1)/2), ahead = n-1-behind,
 *   s_c = k + alpha/n * sum of x^2 over the window,
 *   forward:  y_c = x_c * s_c^-beta,
 *   backward: dx_i = dy_i * s_i^-beta - 2*alpha*beta/n * x_i *
 *                    sum over j = i-ahead ... i+behind of dy_j * y_j / s_j.
 *
 * Fast path (every tensor with one set of strides and the positions after C
 * packed, as NCHW and NHWC): a block takes a tile of positions across all
 * of C into shared memory, reading each element once, coalesced along
 * positions (NCHW) or channels (NHWC), and computes every element of the
 * tile from there. A tile is read whole before any of it is written, and
 * blocks own disjoint positions, so an output may be an input's buffer.
 *
 * Other layouts, or C too large for a tile: a thread per column (n,
 * position) walks C as the reference does, loading each channel once into
 * a small ring so that writing channel c never precedes a read of it. */
#include <math.h>

#include "cuda/kernels.h"

/* ---- parameters ------------------------------------------------------------------ */

template <class C> struct lrn_cfg {
    int behind, ahead;
    C k, alpha_over_n, beta, cross; /* cross = 2 * alpha/n * beta */
    C alpha, beta_blend;
};

/* s^-beta (s >= k > 0). In float through base-2 log and exp, skipping
 * powf's special cases (relative error a few 1e-7 for the exponents LRN
 * meets); the full pow in double. */
__device__ __forceinline__ float lrn_pow_neg(float s, float beta)
{
    return exp2f(-beta * log2f(s));
}
__device__ __forceinline__ double lrn_pow_neg(double s, double beta)
{
    return pow(s, -beta);
}

template <class T>
__device__ __forceinline__ void lrn_store(T *out, typename io<T>::C v,
                                          const lrn_cfg<typename io<T>::C> &f)
{
    typedef typename io<T>::C C;
    C r = f.alpha * v;
    if (f.beta_blend != C(0)) r += f.beta_blend * io<T>::ld(*out);
    *out = io<T>::st(r);
}

/* ---- the tile kernels ----------------------------------------------------------------- */

typedef struct {
    int64_t n, c, s;       /* images, channels, positions per image */
    int64_t ns, cs, ps;    /* strides of an image, a channel, a position */
    int64_t tiles_per_image;
    int tp;                /* positions per tile, a power of two */
    int log_tp;
    int c_fast;            /* channels are contiguous: walk them fastest */
    udnn_gpu_div32 cdiv;          /* by c */
} lrn_tile;

/* Element e of a tile: its channel and position in the tile, and its slot
 * in a shared array (channels adjacent when c_fast, else positions). */
__device__ __forceinline__ void lrn_tile_elem(const lrn_tile &a, int e, int &ch, int &pos,
                                              int &slot)
{
    if (a.c_fast) {
        pos = (int)udnn_gpu_div32_q(a.cdiv, (uint32_t)e);
        ch = e - pos * (int)a.c;
    } else {
        ch = e >> a.log_tp;
        pos = e - (ch << a.log_tp);
    }
    slot = e;
}

/* Stride between adjacent channels in a shared array. */
__device__ __forceinline__ int lrn_tile_cstep(const lrn_tile &a)
{
    return a.c_fast ? 1 : a.tp;
}

/* s for the element in `slot` (channel ch) from the squares of X. */
template <class C>
__device__ __forceinline__ C lrn_tile_scale(const lrn_tile &a, const lrn_cfg<C> &f, const C *X,
                                            int ch, int slot)
{
    const int step = lrn_tile_cstep(a);
    const int lo = ch - f.behind < 0 ? 0 : ch - f.behind;
    const int hi = ch + f.ahead > (int)a.c - 1 ? (int)a.c - 1 : ch + f.ahead;
    C sum = C(0);
    for (int j = lo; j <= hi; j++) {
        const C v = X[slot + (j - ch) * step];
        sum += v * v;
    }
    return f.k + f.alpha_over_n * sum;
}

template <class T>
__global__ void lrn_fwd_tile_kernel(lrn_tile a, const T *x, T *y, lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    extern __shared__ double lrn_smem[];
    C *X = (C *)lrn_smem;
    const int elems = (int)a.c * a.tp;
    const int64_t tiles = a.n * a.tiles_per_image;
    for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
        const int64_t img = b / a.tiles_per_image;
        const int64_t p0 = (b - img * a.tiles_per_image) * a.tp;
        const int64_t base = img * a.ns + p0 * a.ps;
        __syncthreads(); /* the previous tile is done with X */
        for (int e = threadIdx.x; e < elems; e += blockDim.x) {
            int ch, pos, slot;
            lrn_tile_elem(a, e, ch, pos, slot);
            X[slot] = p0 + pos < a.s ? io<T>::ld(x[base + ch * a.cs + pos * a.ps]) : C(0);
        }
        __syncthreads();
        for (int e = threadIdx.x; e < elems; e += blockDim.x) {
            int ch, pos, slot;
            lrn_tile_elem(a, e, ch, pos, slot);
            if (p0 + pos >= a.s) continue;
            const C s = lrn_tile_scale(a, f, X, ch, slot);
            lrn_store(y + base + ch * a.cs + pos * a.ps, X[slot] * lrn_pow_neg(s, f.beta), f);
        }
    }
}

template <class T>
__global__ void lrn_bwd_tile_kernel(lrn_tile a, const T *x, const T *y, const T *dy, T *dx,
                                    lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    extern __shared__ double lrn_smem[];
    const int elems = (int)a.c * a.tp;
    C *X = (C *)lrn_smem;
    C *D = X + elems; /* y, then dy * s^-beta */
    C *G = D + elems; /* dy */
    C *R = G + elems; /* dy * y / s */
    const int64_t tiles = a.n * a.tiles_per_image;
    for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
        const int64_t img = b / a.tiles_per_image;
        const int64_t p0 = (b - img * a.tiles_per_image) * a.tp;
        const int64_t base = img * a.ns + p0 * a.ps;
        __syncthreads(); /* the previous tile is done with the arrays */
        for (int e = threadIdx.x; e < elems; e += blockDim.x) {
            int ch, pos, slot;
            lrn_tile_elem(a, e, ch, pos, slot);
            const bool in = p0 + pos < a.s;
            const int64_t off = base + ch * a.cs + pos * a.ps;
            X[slot] = in ? io<T>::ld(x[off]) : C(0);
            D[slot] = in ? io<T>::ld(y[off]) : C(0);
            G[slot] = in ? io<T>::ld(dy[off]) : C(0);
        }
        __syncthreads();
        for (int e = threadIdx.x; e < elems; e += blockDim.x) {
            int ch, pos, slot;
            lrn_tile_elem(a, e, ch, pos, slot);
            const C s = lrn_tile_scale(a, f, X, ch, slot);
            R[slot] = G[slot] * D[slot] / s;
            D[slot] = G[slot] * lrn_pow_neg(s, f.beta);
        }
        __syncthreads();
        const int step = lrn_tile_cstep(a);
        for (int e = threadIdx.x; e < elems; e += blockDim.x) {
            int ch, pos, slot;
            lrn_tile_elem(a, e, ch, pos, slot);
            if (p0 + pos >= a.s) continue;
            const int lo = ch - f.ahead < 0 ? 0 : ch - f.ahead;
            const int hi = ch + f.behind > (int)a.c - 1 ? (int)a.c - 1 : ch + f.behind;
            C through = C(0);
            for (int j = lo; j <= hi; j++) through += R[slot + (j - ch) * step];
            lrn_store(dx + base + ch * a.cs + pos * a.ps, D[slot] - f.cross * X[slot] * through,
                      f);
        }
    }
}

/* ---- the column kernels: any strides ---------------------------------------------------- */

/* Per tensor: strides of n, c and up to three dims after c. */
typedef struct {
    int64_t n, c, s;
    int nsp;
    int64_t sp[3];
    int64_t st[4][5]; /* x, y, dy, dx (forward: x, y) */
} lrn_cols;

__device__ __forceinline__ int64_t lrn_col_base(const lrn_cols &a, int t, int64_t img, int64_t s)
{
    int64_t off = img * a.st[t][0];
    for (int k = a.nsp - 1; k >= 0; k--) {
        int64_t q = s / a.sp[k];
        off += (s - q * a.sp[k]) * a.st[t][2 + k];
        s = q;
    }
    return off;
}

/* A column touches at most 2n - 1 channels around the one being written. */
#define LRN_RING (2 * UDNN_LRN_MAX_N)

/* The channels of one column of one input, each loaded once, on first use. */
template <class T> struct lrn_ring {
    typedef typename io<T>::C C;
    const T *p;
    int64_t cs, loaded;
    C v[LRN_RING];

    __device__ void start(const T *base, int64_t c_stride)
    {
        p = base;
        cs = c_stride;
        loaded = 0;
    }
    /* channel c, never LRN_RING or more below the highest loaded */
    __device__ C get(int64_t c)
    {
        while (loaded <= c) {
            v[loaded % LRN_RING] = io<T>::ld(p[loaded * cs]);
            loaded++;
        }
        return v[c % LRN_RING];
    }
};

template <class T>
__device__ typename io<T>::C lrn_col_scale(const lrn_cfg<typename io<T>::C> &f, int64_t channels,
                                           lrn_ring<T> &x, int64_t c)
{
    typedef typename io<T>::C C;
    const int64_t lo = c - f.behind < 0 ? 0 : c - f.behind;
    const int64_t hi = c + f.ahead > channels - 1 ? channels - 1 : c + f.ahead;
    C sum = C(0);
    for (int64_t j = lo; j <= hi; j++) {
        const C v = x.get(j);
        sum += v * v;
    }
    return f.k + f.alpha_over_n * sum;
}

template <class T>
__global__ void lrn_fwd_col_kernel(lrn_cols a, const T *x, T *y, lrn_cfg<typename io<T>::C> f)
{
    lrn_ring<T> xr;
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.n * a.s)
    {
        const int64_t img = g / a.s, s = g - img * a.s;
        xr.start(x + lrn_col_base(a, 0, img, s), a.st[0][1]);
        T *yb = y + lrn_col_base(a, 1, img, s);
        for (int64_t ch = 0; ch < a.c; ch++) {
            const typename io<T>::C sc = lrn_col_scale<T>(f, a.c, xr, ch);
            lrn_store(yb + ch * a.st[1][1], xr.get(ch) * lrn_pow_neg(sc, f.beta), f);
        }
    }
}

template <class T>
__global__ void lrn_bwd_col_kernel(lrn_cols a, const T *x, const T *y, const T *dy, T *dx,
                                   lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    lrn_ring<T> xr, yr, dyr;
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.n * a.s)
    {
        const int64_t img = g / a.s, s = g - img * a.s;
        xr.start(x + lrn_col_base(a, 0, img, s), a.st[0][1]);
        yr.start(y + lrn_col_base(a, 1, img, s), a.st[1][1]);
        dyr.start(dy + lrn_col_base(a, 2, img, s), a.st[2][1]);
        T *dxb = dx + lrn_col_base(a, 3, img, s);
        for (int64_t i = 0; i < a.c; i++) {
            const int64_t lo = i - f.ahead < 0 ? 0 : i - f.ahead;
            const int64_t hi = i + f.behind > a.c - 1 ? a.c - 1 : i + f.behind;
            C through = C(0);
            for (int64_t j = lo; j <= hi; j++)
                through += dyr.get(j) * yr.get(j) / lrn_col_scale<T>(f, a.c, xr, j);
            const C direct = dyr.get(i) * lrn_pow_neg(lrn_col_scale<T>(f, a.c, xr, i), f.beta);
            lrn_store(dxb + i * a.st[3][1], direct - f.cross * xr.get(i) * through, f);
        }
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* Shared memory a tile may take without asking for more. */
#define LRN_TILE_SMEM_MAX (48 << 10)

static int64_t lrn_positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

static int lrn_same_strides(const udnn_tensor *a, const udnn_tensor *b)
{
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* The tile for tensors sharing t's strides, when the positions after C are
 * packed (position p at p * ps) and a tile of C channels fits in shared
 * memory; `arrays` shared arrays of the compute type per element. */
static int lrn_tile_of(const udnn_tensor *t, size_t elem_bytes, int arrays, lrn_tile *out,
                       size_t *smem)
{
    lrn_tile a;
    memset(&a, 0, sizeof a);
    a.n = t->dims[0];
    a.c = t->dims[1];
    a.s = lrn_positions(t);
    a.ns = t->strides[0];
    a.cs = t->strides[1];
    /* positions after C: packed with the innermost (non-1) dim's stride */
    a.ps = 1;
    int64_t want = 0;
    for (int i = t->rank - 1; i >= 2; i--) {
        if (t->dims[i] == 1) continue;
        if (want == 0) a.ps = want = t->strides[i];
        if (t->strides[i] != want) return 0;
        want *= t->dims[i];
    }
    a.c_fast = a.c > 1 && a.cs == 1;
    /* NCHW tiles read rows of tp positions: at least 32 bytes each unless
     * an image has fewer positions */
    int tp = 32;
    while (tp > 1 && tp / 2 >= a.s) tp /= 2;
    for (; tp >= 1; tp /= 2) {
        const size_t bytes = (size_t)arrays * (size_t)a.c * tp * elem_bytes;
        if (bytes > LRN_TILE_SMEM_MAX) continue;
        if (!a.c_fast && tp < a.s && tp * elem_bytes < 32) return 0;
        if (a.c * tp >= ((int64_t)1 << 31)) return 0;
        a.tp = tp;
        a.log_tp = 0;
        while ((1 << a.log_tp) < tp) a.log_tp++;
        a.tiles_per_image = (a.s + tp - 1) / tp;
        a.cdiv = udnn_gpu_div32_make((uint32_t)(a.c > 0 ? a.c : 1));
        *out = a;
        *smem = bytes;
        return 1;
    }
    return 0;
}

static lrn_cols lrn_cols_of(const udnn_tensor *const *ts, int nt)
{
    lrn_cols a;
    memset(&a, 0, sizeof a);
    const udnn_tensor *t = ts[0];
    a.n = t->dims[0];
    a.c = t->dims[1];
    a.s = lrn_positions(t);
    a.nsp = t->rank - 2;
    for (int i = 0; i < a.nsp; i++) a.sp[i] = t->dims[2 + i];
    for (int k = 0; k < nt; k++)
        for (int i = 0; i < t->rank; i++) a.st[k][i] = ts[k]->strides[i];
    return a;
}

template <class C> static lrn_cfg<C> lrn_cfg_of(const udnn_lrn_problem *p)
{
    lrn_cfg<C> f;
    f.behind = ((int)p->n - 1) / 2;
    f.ahead = (int)p->n - 1 - f.behind;
    const double alpha_over_n = p->lrn_alpha / p->n;
    f.k = (C)p->lrn_k;
    f.alpha_over_n = (C)alpha_over_n;
    f.beta = (C)p->lrn_beta;
    f.cross = (C)(2.0 * alpha_over_n * p->lrn_beta);
    f.alpha = (C)p->alpha;
    f.beta_blend = (C)p->beta;
    return f;
}

/* Blocks for the tiles: enough to fill the device, a grid-stride loop
 * beyond. */
static unsigned lrn_tile_grid(const udnn_gpu_context *c, const lrn_tile &a)
{
    const int64_t tiles = a.n * a.tiles_per_image;
    return (unsigned)(tiles < c->max_blocks ? (tiles > 0 ? tiles : 1) : c->max_blocks);
}

template <class T> static udnnStatus_t lrn_fwd(const udnn_gpu_context *c, const udnn_lrn_problem *p)
{
    typedef typename io<T>::C C;
    if (udnn_gpu_count(&p->x) == 0) return UDNN_STATUS_SUCCESS;
    const lrn_cfg<C> f = lrn_cfg_of<C>(p);
    lrn_tile a;
    size_t smem;
    if (lrn_same_strides(&p->x, &p->y) && lrn_tile_of(&p->x, sizeof(C), 1, &a, &smem)) {
        lrn_fwd_tile_kernel<T><<<lrn_tile_grid(c, a), UDNN_GPU_BLOCK, smem, c->stream>>>(
            a, (const T *)p->x_ptr, (T *)p->out_ptr, f);
    } else {
        const udnn_tensor *ts[2] = {&p->x, &p->y};
        lrn_cols a2 = lrn_cols_of(ts, 2);
        lrn_fwd_col_kernel<T><<<udnn_gpu_grid(c, a2.n * a2.s), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a2, (const T *)p->x_ptr, (T *)p->out_ptr, f);
    }
    return udnn_gpu_launched();
}

template <class T> static udnnStatus_t lrn_bwd(const udnn_gpu_context *c, const udnn_lrn_problem *p)
{
    typedef typename io<T>::C C;
    if (udnn_gpu_count(&p->x) == 0) return UDNN_STATUS_SUCCESS;
    const lrn_cfg<C> f = lrn_cfg_of<C>(p);
    lrn_tile a;
    size_t smem;
    if (lrn_same_strides(&p->x, &p->y) && lrn_same_strides(&p->x, &p->dy) &&
        lrn_same_strides(&p->x, &p->dx) && lrn_tile_of(&p->x, sizeof(C), 4, &a, &smem)) {
        lrn_bwd_tile_kernel<T><<<lrn_tile_grid(c, a), UDNN_GPU_BLOCK, smem, c->stream>>>(
            a, (const T *)p->x_ptr, (const T *)p->y_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr,
            f);
    } else {
        const udnn_tensor *ts[4] = {&p->x, &p->y, &p->dy, &p->dx};
        lrn_cols a2 = lrn_cols_of(ts, 4);
        lrn_bwd_col_kernel<T><<<udnn_gpu_grid(c, a2.n * a2.s), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a2, (const T *)p->x_ptr, (const T *)p->y_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr,
            f);
    }
    return udnn_gpu_launched();
}

static int lrn_fwd_applicable(const void *problem, const char **why)
{
    const udnn_lrn_problem *p = (const udnn_lrn_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU LRN takes FLOAT, DOUBLE, HALF and BFLOAT16, x and y alike";
        return 0;
    }
    if (p->x.rank < 3 || p->x.rank > 5 || p->n < 1 || p->n > UDNN_LRN_MAX_N) {
        *why = "the GPU LRN takes 3-D to 5-D tensors and lrnN of 1 to UDNN_LRN_MAX_N";
        return 0;
    }
    return 1;
}

static int lrn_bwd_applicable(const void *problem, const char **why)
{
    const udnn_lrn_problem *p = (const udnn_lrn_problem *)problem;
    if (!lrn_fwd_applicable(problem, why)) return 0;
    if (p->dy.dtype != p->x.dtype || p->dx.dtype != p->x.dtype) {
        *why = "the GPU LRN takes x, y, dy and dx of one type";
        return 0;
    }
    return 1;
}

UDNN_GPU_TYPED_RUN(lrn_fwd_run, udnn_lrn_problem, x, lrn_fwd)

UDNN_GPU_TYPED_RUN(lrn_bwd_run, udnn_lrn_problem, x, lrn_bwd)

static const udnn_solver lrn_fwd_solver = {
    /* .name = */ "gpu_lrn_fwd",
    /* .op = */ UDNN_OP_LRN_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ lrn_fwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ lrn_fwd_run,
};

static const udnn_solver lrn_bwd_solver = {
    /* .name = */ "gpu_lrn_bwd",
    /* .op = */ UDNN_OP_LRN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ lrn_bwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ lrn_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(lrn, &lrn_fwd_solver, &lrn_bwd_solver);
