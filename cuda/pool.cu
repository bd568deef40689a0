/* pool.cu - pooling forward and backward over n, c, d, h, w (core hands 2-D
 * pooling over as d = 1), every mode (MAX, MAX_DETERMINISTIC, AVERAGE
 * including or excluding padding), FLOAT, DOUBLE, HALF and BFLOAT16, any
 * strides, with alpha/beta blending. Semantics mirror cpu/ref/pooling.c:
 * windows clipped to the input, max ignores padding, ties and NaNs as
 * documented there (but for the sign of a zero maximum in the forward:
 * see pool_plane_max).
 *
 * Fast paths first, each for the layout of the tensor it writes:
 * - rows (w innermost, NCHW-like), for the w geometries (window, stride,
 *   pad) of POOL_ROW_GEOMS: a thread takes V adjacent outputs (V elements
 *   to 16 bytes, 8 for 16-bit types) of one or two rows, loads the input
 *   columns their windows span with V-element loads where aligned, and
 *   reduces them in registers; the window along w is a compile-time
 *   constant, its rows unroll, d is a loop.
 * - channels (c innermost, NHWC-like, C a multiple of V): a thread takes V
 *   channels of one output, or of two adjacent along w where the stride is
 *   2, and moves V elements per load and store.
 * The unrolled kernels reduce one window plane at a time from registers,
 * padding filled in so that each element costs one fmax or add (see
 * pool_plane_max).
 * Backward, when no two windows overlap (stride >= window in every dim),
 * one pass per window: a thread reads the window's x and dy and writes
 * every dx element of the window's cell (the window and the gap up to the
 * next one, the last cell running to the input's end), zero where the
 * element is not the argmax; no scratch memory. When windows overlap, max
 * takes two passes: the argmax of every window as one byte in the
 * context's scratch memory (a batch of images at a time when the bytes of
 * all do not fit), then one thread per V adjacent dx elements (rows) or V
 * channels (channels) gathers dy from the covering windows whose byte
 * names it; average gathers dy / divisor in one pass. Sums run in the
 * reference's order; no atomics.
 *
 * Anything else takes the general kernels: one thread per output element
 * computes its window (forward); one thread per dx element gathers from
 * every output window that covers it, comparing the argmax bytes of a first
 * pass or, when the bytes do not fit (more than 16 Mi outputs, or windows
 * over 256), scanning each window, stopping at the first element that
 * beats the one it asks about. Non-overlapping windows take the one-pass
 * kernel with scalar accesses. The 3x3 / 2 max backward on rows, where
 * windows overlap, takes pool_tile.cu's one-pass kernel before any of
 * these. pool_fast.cu holds the fast paths (rows, channels and cells, and
 * their host side), this file the general kernels and the choice; pool.h
 * what the files share.
 *
 * Threads walk the tensor they write in its memory order (c innermost for
 * NHWC-like layouts, w innermost otherwise) so that neighbouring threads
 * touch neighbouring addresses; index arithmetic divides by invariant
 * divisors in 32 bits (unless the index is 2^31 or more: the general
 * kernels then divide, the fast paths multiply in 64 bits), and offsets are
 * 64-bit (pool_tile.cu's 32-bit within a plane, where they fit). The API
 * refuses in place (core/pooling.c): the window scan reads x that other
 * threads' dx would overwrite. */
#include "cuda/pool.h"

/* ---- the problem's coordinates -------------------------------------------------- */

/* The logical coordinates of walk index i. */
template <bool CLAST, bool BIG>
__device__ __forceinline__ void pool_coords(const pool_args &a, int64_t i, int64_t &n, int64_t &c,
                                            int64_t o[3])
{
    int64_t t[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (BIG) {
            int64_t q = i / a.walk_dim[k];
            t[k] = i - q * a.walk_dim[k];
            i = q;
        } else {
            uint32_t u = (uint32_t)i, q = udnn_gpu_div32_q(a.walk_div[k], u);
            t[k] = (int64_t)(u - q * a.walk_div[k].d);
            i = q;
        }
    }
    n = i;
    if (CLAST) {
        c = t[0], o[2] = t[1], o[1] = t[2], o[0] = t[3];
    } else {
        o[2] = t[0], o[1] = t[1], o[0] = t[2], c = t[3];
    }
}

/* The window of output o clipped to the input: [lo, hi) per dim. */
__device__ __forceinline__ void pool_window(const pool_args &a, const int64_t o[3], int lo[3],
                                            int hi[3])
{
#pragma unroll
    for (int k = 0; k < 3; k++) {
        int start = (int)o[k] * a.str[k] - a.pad[k];
        lo[k] = start < 0 ? 0 : start;
        hi[k] = start + a.win[k] > a.in[k] ? a.in[k] : start + a.win[k];
    }
}

template <class C> __device__ __forceinline__ C pool_divisor(const pool_args &a, const int lo[3],
                                                             const int hi[3])
{
    if (a.include_pad) return C(a.win[0]) * C(a.win[1]) * C(a.win[2]);
    return C((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
}

/* ---- reducing a window ------------------------------------------------------------ */

/* The maximum of a window under the reference's rules and (POS) where it
 * is: with PROPAGATE the first NaN; otherwise NaNs are skipped, the first
 * maximum in row-major (d, h, w) order wins ties, and an all-NaN window
 * gives NaN at its first position. (Plain loops: batching the loads by hand
 * measured slower on an H100.) */
template <class T, bool POS>
__device__ __forceinline__ typename io<T>::C pool_window_max(const pool_args &a, const T *x,
                                                             const int lo[3], const int hi[3],
                                                             int at[3])
{
    typedef typename io<T>::C C;
    C best = C(0);
    bool found = false;
    if (POS) at[0] = lo[0], at[1] = lo[1], at[2] = lo[2];
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                C v = io<T>::ld(row[w * a.xs[4]]);
                if (v != v) {
                    if (!a.propagate_nan) continue;
                    if (POS) at[0] = d, at[1] = h, at[2] = w;
                    return v;
                }
                if (!found || v > best) {
                    best = v;
                    if (POS) at[0] = d, at[1] = h, at[2] = w;
                }
                found = true;
            }
        }
    return found ? best : C(NAN);
}

template <class T>
__device__ __forceinline__ typename io<T>::C pool_window_sum(const pool_args &a, const T *x,
                                                             const int lo[3], const int hi[3])
{
    typedef typename io<T>::C C;
    C sum = C(0);
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) sum += io<T>::ld(row[w * a.xs[4]]);
        }
    return sum;
}

/* ---- forward -------------------------------------------------------------------- */

template <class T, bool CLAST, bool BIG>
__global__ void pool_fwd_kernel(pool_args a, const T *x, T *y, typename io<T>::C alpha,
                                typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, o[3];
        pool_coords<CLAST, BIG>(a, i, n, c, o);
        int lo[3], hi[3];
        pool_window(a, o, lo, hi);
        const T *xb = x + n * a.xs[0] + c * a.xs[1];
        int at[3];
        const C v = a.is_max ? pool_window_max<T, false>(a, xb, lo, hi, at)
                             : pool_window_sum<T>(a, xb, lo, hi) / pool_divisor<C>(a, lo, hi);
        udnn_gpu_blend_store(y + n * a.ys[0] + c * a.ys[1] + o[0] * a.ys[2] + o[1] * a.ys[3] +
                                 o[2] * a.ys[4],
                             v, alpha, beta);
    }
}

/* ---- backward -------------------------------------------------------------------- */

/* The offset of window position (d, h, w) from the window's unclipped
 * start, in row-major order: what the argmax bytes hold. */
__device__ __forceinline__ int pool_rel(const pool_args &a, const int64_t o[3], int d, int h,
                                        int w)
{
    return ((d - ((int)o[0] * a.str[0] - a.pad[0])) * a.win[1] +
            (h - ((int)o[1] * a.str[1] - a.pad[1]))) *
               a.win[2] +
           (w - ((int)o[2] * a.str[2] - a.pad[2]));
}

/* Max backward, first pass: the argmax of every window of y, as a byte, at
 * the walk index of y (the argmax tensor is dense in walk order). */
template <class T, bool CLAST, bool BIG>
__global__ void pool_argmax_kernel(pool_args a, const T *x, uint8_t *arg)
{
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, o[3];
        pool_coords<CLAST, BIG>(a, i, n, c, o);
        int lo[3], hi[3];
        pool_window(a, o, lo, hi);
        int at[3];
        pool_window_max<T, true>(a, x + n * a.xs[0] + c * a.xs[1], lo, hi, at);
        arg[i] = (uint8_t)pool_rel(a, o, at[0], at[1], at[2]);
    }
}


/* 1 when the element at `me` (value v) is where the reference puts the
 * maximum of the window [lo, hi): the first NaN under PROPAGATE, else the
 * first non-NaN maximum. Not asked for a NaN under NOT_PROPAGATE (see
 * pool_all_nan). Stops at the first element that takes the place from it. */
template <class T>
__device__ bool pool_is_argmax(const pool_args &a, const T *x, const int lo[3], const int hi[3],
                               const int me[3], typename io<T>::C v)
{
    typedef typename io<T>::C C;
    const bool v_nan = v != v;
    bool before = true; /* scanning positions ahead of `me` in row-major order */
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                if (d == me[0] && h == me[1] && w == me[2]) {
                    if (v_nan) return true; /* PROPAGATE: no NaN came first */
                    before = false;
                    continue;
                }
                C u = io<T>::ld(row[w * a.xs[4]]);
                if (u != u) {
                    if (a.propagate_nan) return false; /* a NaN anywhere beats a number */
                    continue;
                }
                if (before ? u >= v : u > v) return false;
            }
        }
    return true;
}

/* Whether every element of the window is NaN. */
template <class T>
__device__ bool pool_all_nan(const pool_args &a, const T *x, const int lo[3], const int hi[3])
{
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                typename io<T>::C u = io<T>::ld(row[w * a.xs[4]]);
                if (u == u) return false;
            }
        }
    return true;
}

/* A thread per dx element sums over the outputs whose windows cover it:
 * dy / divisor (AVG), dy where the window's argmax byte names it (ARGMAX),
 * or dy where a scan of the window finds it the maximum (SCAN, when the
 * argmax bytes do not fit the scratch memory). */
template <class T, bool CLAST, bool BIG, int HOW>
__global__ void pool_bwd_kernel(pool_args a, const T *x, const T *dy, const uint8_t *arg, T *dx,
                                typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, in[3];
        pool_coords<CLAST, BIG>(a, i, n, c, in);
        const int me[3] = {(int)in[0], (int)in[1], (int)in[2]};
        int olo[3], ohi[3];
#pragma unroll
        for (int k = 0; k < 3; k++) pool_covering(a, k, me[k], olo[k], ohi[k]);
        const T *xb = x + n * a.xs[0] + c * a.xs[1];
        const T *dyb = dy + n * a.ys[0] + c * a.ys[1];
        const uint8_t *argb = HOW == POOL_BWD_ARGMAX ? arg + n * a.ms[0] + c * a.ms[1] : arg;
        C v = C(0);
        if (HOW == POOL_BWD_SCAN)
            v = io<T>::ld(xb[me[0] * a.xs[2] + me[1] * a.xs[3] + me[2] * a.xs[4]]);
        C grad = C(0);
        for (int o0 = olo[0]; o0 < ohi[0]; o0++)
            for (int o1 = olo[1]; o1 < ohi[1]; o1++)
                for (int o2 = olo[2]; o2 < ohi[2]; o2++) {
                    const int64_t o[3] = {o0, o1, o2};
                    const C g = io<T>::ld(dyb[o[0] * a.ys[2] + o[1] * a.ys[3] + o[2] * a.ys[4]]);
                    if (HOW == POOL_BWD_ARGMAX) {
                        const int at = argb[o[0] * a.ms[2] + o[1] * a.ms[3] + o[2] * a.ms[4]];
                        if (at == pool_rel(a, o, me[0], me[1], me[2])) grad += g;
                        continue;
                    }
                    int lo[3], hi[3];
                    pool_window(a, o, lo, hi);
                    if (HOW == POOL_BWD_AVG) {
                        grad += g / pool_divisor<C>(a, lo, hi);
                    } else if (v != v && !a.propagate_nan) {
                        /* NaN here: the gradient goes to the window's first
                         * position only when the whole window is NaN */
                        if (me[0] == lo[0] && me[1] == lo[1] && me[2] == lo[2] &&
                            pool_all_nan<T>(a, xb, lo, hi))
                            grad += g;
                    } else if (pool_is_argmax<T>(a, xb, lo, hi, me, v)) {
                        grad += g;
                    }
                }
        udnn_gpu_blend_store(dx + n * a.xs2[0] + c * a.xs2[1] + in[0] * a.xs2[2] +
                                 in[1] * a.xs2[3] + in[2] * a.xs2[4],
                             grad, alpha, beta);
    }
}

/* ---- host side ------------------------------------------------------------------------- */

/* c innermost in memory (NHWC-like): walk c fastest. */
static int pool_c_last(const udnn_tensor *t)
{
    if (t->dims[1] == 1) return 0;
    for (int d = 2; d < 5; d++)
        if (t->dims[d] > 1 && t->strides[d] < t->strides[1]) return 0;
    return 1;
}

/* The geometry, strides and walk of a problem; `walk` is the tensor the
 * kernel writes. */
static pool_args pool_args_of(const udnn_pool_problem *p, const udnn_tensor *walk, int c_last)
{
    pool_args a;
    memset(&a, 0, sizeof a);
    a.is_max = p->mode == UDNN_POOLING_MAX || p->mode == UDNN_POOLING_MAX_DETERMINISTIC;
    a.include_pad = p->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    a.propagate_nan = p->nan_opt == UDNN_PROPAGATE_NAN;
    for (int k = 0; k < 3; k++) {
        a.win[k] = p->window[k];
        a.pad[k] = p->pad[k];
        a.str[k] = p->stride[k];
        a.str_div[k] = udnn_gpu_div32_make((uint32_t)p->stride[k]);
        a.in[k] = (int)p->x.dims[2 + k];
        a.out[k] = (int)p->y.dims[2 + k];
    }
    for (int d = 0; d < 5; d++) {
        a.xs[d] = p->x.strides[d];
        a.ys[d] = p->y.strides[d];
    }
    const int order_c_last[4] = {1, 4, 3, 2}, order_c_first[4] = {4, 3, 2, 1};
    const int *order = c_last ? order_c_last : order_c_first;
    for (int k = 0; k < 4; k++) {
        a.walk_dim[k] = walk->dims[order[k]];
        a.walk_div[k] = udnn_gpu_div32_make((uint32_t)(a.walk_dim[k] > 0 ? a.walk_dim[k] : 1));
    }
    a.count = udnn_gpu_count(walk);
    return a;
}

static int pool_applicable(const void *problem, const char **why)
{
    const udnn_pool_problem *p = (const udnn_pool_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU pooling takes FLOAT, DOUBLE, HALF and BFLOAT16, every tensor alike";
        return 0;
    }
    /* the kernels index spatial positions in 32 bits */
    for (int k = 0; k < 3; k++)
        if (p->x.dims[2 + k] > INT32_MAX / 2 || p->y.dims[2 + k] > INT32_MAX / 2) {
            *why = "a spatial dimension of 2^30 or more";
            return 0;
        }
    return 1;
}

/* The strides of a dense byte tensor of y's dims laid out in the walk
 * order of pool_args_of (what pool_argmax_kernel writes). */
static void pool_walk_strides(const udnn_tensor *y, int c_last, int64_t ms[5])
{
    const int order_c_last[5] = {1, 4, 3, 2, 0}, order_c_first[5] = {4, 3, 2, 1, 0};
    const int *order = c_last ? order_c_last : order_c_first;
    int64_t step = 1;
    for (int k = 0; k < 5; k++) {
        ms[order[k]] = step;
        step *= y->dims[order[k]];
    }
}

template <class T, bool CLAST, bool BIG>
static void pool_fwd_launch(const udnn_gpu_context *c, const pool_args &a, const void *x, void *y,
                            double alpha, double beta)
{
    typedef typename io<T>::C C;
    pool_fwd_kernel<T, CLAST, BIG><<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(
        a, (const T *)x, (T *)y, (C)alpha, (C)beta);
}

template <class T, bool CLAST, bool BIG>
static void pool_argmax_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                               uint8_t *arg)
{
    pool_argmax_kernel<T, CLAST, BIG>
        <<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(a, (const T *)x, arg);
}

template <class T, bool CLAST, bool BIG, int HOW>
static void pool_bwd_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                            const void *dy, const uint8_t *arg, void *dx, double alpha,
                            double beta)
{
    typedef typename io<T>::C C;
    pool_bwd_kernel<T, CLAST, BIG, HOW>
        <<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, arg, (T *)dx, (C)alpha, (C)beta);
}

/* Calls F<T, CLAST, BIG>(args...) with the flags as template arguments. */
#define POOL_LAUNCH(F, clast, big, ...)                                                     \
    do {                                                                                   \
        if (clast) {                                                                       \
            if (big) F<T, true, true>(__VA_ARGS__);                                        \
            else F<T, true, false>(__VA_ARGS__);                                           \
        } else {                                                                           \
            if (big) F<T, false, true>(__VA_ARGS__);                                       \
            else F<T, false, false>(__VA_ARGS__);                                          \
        }                                                                                  \
    } while (0)

static int pool_big(const pool_args &a)
{
    return a.count >= ((int64_t)1 << 31);
}

/* The forward on its fastest path: rows or channels (pool_fast.cu), else
 * the general kernel. */
template <class T>
static void pool_fwd_go(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                        const pool_args &a)
{
    if (pool_fwd_fast<T>(c, p, c_last, a)) return;
    POOL_LAUNCH(pool_fwd_launch, c_last, pool_big(a), c, a, p->x_ptr, p->out_ptr, p->alpha,
                p->beta);
}

static udnnStatus_t pool_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_pool_problem);
    const int c_last = pool_c_last(&p->y);
    pool_args a = pool_args_of(p, &p->y, c_last);
    if (a.count == 0) return UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, pool_fwd_go<T>(c, p, c_last, a));
    return udnn_gpu_launched();
}

template <class T, int HOW>
static void pool_bwd_go(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                        const pool_args &a, const uint8_t *arg)
{
    const void *x = p->x_ptr, *dy = p->dy_ptr;
    void *dx = p->out_ptr;
    const double al = p->alpha, be = p->beta;
    if (c_last) {
        if (pool_big(a)) pool_bwd_launch<T, true, true, HOW>(c, a, x, dy, arg, dx, al, be);
        else pool_bwd_launch<T, true, false, HOW>(c, a, x, dy, arg, dx, al, be);
    } else {
        if (pool_big(a)) pool_bwd_launch<T, false, true, HOW>(c, a, x, dy, arg, dx, al, be);
        else pool_bwd_launch<T, false, false, HOW>(c, a, x, dy, arg, dx, al, be);
    }
}

static udnnStatus_t pool_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_pool_problem);
    const int c_last = pool_c_last(&p->dx);
    pool_args a = pool_args_of(p, &p->dx, c_last);
    /* the backward reads x and dy and writes dx */
    for (int d = 0; d < 5; d++) {
        a.ys[d] = p->dy.strides[d];
        a.xs2[d] = p->dx.strides[d];
    }
    if (a.count == 0) return UDNN_STATUS_SUCCESS;
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    int done = 0;
    UDNN_GPU_DISPATCH(p->x.dtype, done = pool_bwd_fast<T>(c, p, c_last, a, &st));
    if (done) return st;
    const int64_t y_count = udnn_gpu_count(&p->y);
    const int64_t win_vol = (int64_t)p->window[0] * p->window[1] * p->window[2];
    /* max: the argmax of every window first, a byte each, when they fit */
    const int by_argmax = a.is_max && win_vol <= 256 && y_count > 0 &&
                          (size_t)y_count <= c->scratch_bytes;
    if (by_argmax) {
        const int y_c_last = pool_c_last(&p->y);
        pool_args ay = pool_args_of(p, &p->y, y_c_last);
        const int y_big = pool_big(ay);
        uint8_t *arg = (uint8_t *)c->scratch;
        UDNN_GPU_DISPATCH(p->x.dtype,
                          POOL_LAUNCH(pool_argmax_launch, y_c_last, y_big, c, ay, p->x_ptr, arg));
        if ((st = udnn_gpu_launched()) != UDNN_STATUS_SUCCESS) return st;
        pool_walk_strides(&p->y, y_c_last, a.ms);
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_ARGMAX>(c, p, c_last, a, arg));
    } else if (a.is_max) {
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_SCAN>(c, p, c_last, a, NULL));
    } else {
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_AVG>(c, p, c_last, a, NULL));
    }
    return udnn_gpu_launched();
}

static const udnn_solver pool_fwd = {
    /* .name = */ "gpu_pool_fwd",
    /* .op = */ UDNN_OP_POOL_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ pool_applicable,
    /* .workspace = */ NULL,
    /* .run = */ pool_fwd_run,
};

static const udnn_solver pool_bwd = {
    /* .name = */ "gpu_pool_bwd",
    /* .op = */ UDNN_OP_POOL_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ pool_applicable,
    /* .workspace = */ NULL,
    /* .run = */ pool_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(pool, &pool_fwd, &pool_bwd);
