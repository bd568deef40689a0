/* pooling.c - fast pooling forward and backward for FLOAT data in any
 * strides, every mode. The work splits into planes, one per (n, c), which
 * OpenMP shares out; a plane reads and writes only its own elements.
 *
 * The values are cpu/ref/pooling.c's: the same window clipping, NaN rules
 * and first-maximum ties, with float maxima and double window sums.
 * Along each output row, the outputs whose windows lie inside x along w
 * (the interior) are computed together, a vector lane per output, one
 * window position at a time; the 2 x 2, stride 2 window (the LeNet one)
 * has a fused loop. Border outputs walk their clipped windows one by one.
 *
 * Backward scatters instead of gathering: a plane of dx starts as
 * beta * dx (0 when beta is 0, never read) and every output adds
 * alpha * dy to the position of its window's maximum, or alpha * dy /
 * divisor to each of its window's elements. The reference gathers, per x
 * element, from the windows whose maximum it holds; the scatter reaches
 * the same sums in one pass over the windows and needs no scratch. */
#include <math.h>

#include "cpu/fast/fast.h"

/* Below this many input elements one thread does every plane. */
#define PAR_MIN_ELEMENTS (1 << 15)

static int is_max_mode(udnnPoolingMode_t m)
{
    return m == UDNN_POOLING_MAX || m == UDNN_POOLING_MAX_DETERMINISTIC;
}

/* Window of output o along dim i (0 d, 1 h, 2 w), clipped to the input. */
static void window_range(const udnn_pool_problem *p, int i, int64_t o, int64_t *lo, int64_t *hi)
{
    int64_t start = o * p->stride[i] - p->pad[i], end = start + p->window[i];
    int64_t size = p->x.dims[2 + i];
    *lo = start < 0 ? 0 : start;
    *hi = end > size ? size : end;
}

typedef struct {
    int64_t lo[3], hi[3];
} box;

static box window_box(const udnn_pool_problem *p, int64_t od, int64_t oh, int64_t ow)
{
    box b;
    window_range(p, 0, od, &b.lo[0], &b.hi[0]);
    window_range(p, 1, oh, &b.lo[1], &b.hi[1]);
    window_range(p, 2, ow, &b.lo[2], &b.hi[2]);
    return b;
}

static float avg_divisor(const udnn_pool_problem *p, const box *b)
{
    if (p->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        return (float)p->window[0] * (float)p->window[1] * (float)p->window[2];
    return (float)((b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1]) * (b->hi[2] - b->lo[2]));
}

/* The maximum of a window of plane x and its (d, h, w): the first NaN
 * under PROPAGATE_NAN; NaNs skipped otherwise (all NaN: NaN at the first
 * position); ties to the first in row-major order. */
static float window_max(const udnn_pool_problem *p, const float *x, const box *b, int64_t at[3])
{
    const int64_t sd = p->x.strides[2], sh = p->x.strides[3], sw = p->x.strides[4];
    const int propagate = p->nan_opt == UDNN_PROPAGATE_NAN;
    int found = 0;
    float best = NAN;
    at[0] = b->lo[0], at[1] = b->lo[1], at[2] = b->lo[2];
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++) {
            const float *row = x + d * sd + h * sh;
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++) {
                float v = row[w * sw];
                if (v != v) {
                    if (!propagate) continue;
                    at[0] = d, at[1] = h, at[2] = w;
                    return v;
                }
                if (!found || v > best) {
                    best = v;
                    at[0] = d, at[1] = h, at[2] = w;
                    found = 1;
                }
            }
        }
    return best;
}

static double window_sum(const udnn_pool_problem *p, const float *x, const box *b)
{
    const int64_t sd = p->x.strides[2], sh = p->x.strides[3], sw = p->x.strides[4];
    double sum = 0.0;
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++) {
            const float *row = x + d * sd + h * sh;
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++) sum += row[w * sw];
        }
    return sum;
}

/* Whether x is large enough for a team of threads to pay off. */
static inline int worth_threads(const udnn_pool_problem *p)
{
    return p->x.dims[0] * p->x.dims[1] * p->x.dims[2] * p->x.dims[3] * p->x.dims[4] >=
           PAR_MIN_ELEMENTS;
}

static int applicable(const void *problem, const char **why)
{
    const udnn_pool_problem *p = problem;
    if (p->x.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    return 1;
}

/* ---- one output row, vectorized across its interior ------------------------- */

/* The outputs of a row along w whose windows lie wholly inside x: their
 * windows are equal up to a shift, so the work runs across them. Border
 * outputs take the per-window functions above. */
static void interior(const udnn_pool_problem *p, int64_t *first, int64_t *end)
{
    const int64_t s = p->stride[2], pad = p->pad[2], win = p->window[2];
    const int64_t size = p->x.dims[4], outs = p->y.dims[4];
    int64_t a = (pad + s - 1) / s, b = size + pad - win >= 0 ? (size + pad - win) / s + 1 : 0;
    if (b > outs) b = outs;
    *first = a < b ? a : outs;
    *end = a < b ? b : outs;
}

/* Interior outputs go this many at a time (their maxima sit on the stack). */
#define CHUNK 128

/* Whether window_max's rules take value v over the best so far, a: v
 * beats a, or is the first number after NaNs (NOT_PROPAGATE_NAN), or is
 * the first NaN (PROPAGATE_NAN, which then keeps it). Bitwise operators,
 * no branches, so the loops below vectorize; GCC 12 at -O2 takes these
 * spellings and not some equivalent ones. */
static inline int take_nan_skip(float v, float a)
{
    return (v == v) & !(v <= a);
}

static inline int take_nan_first(float v, float a)
{
    return (a == a) & ((v != v) | (v > a));
}

/* One window position of interior_max for n outputs: src[j * step] is
 * output j's element there, `here` its offset in dx. Inlined into calls
 * with a constant step, so the common strides load whole vectors. */
static inline __attribute__((always_inline)) void
max_pass(const float *src, int64_t step, int64_t n, int propagate, float *m, int32_t *at,
         int32_t here)
{
    if (at != NULL && propagate) {
        FAST_PRAGMA(omp simd)
        for (int64_t j = 0; j < n; j++) {
            const float v = src[j * step], a = m[j];
            const int take = take_nan_first(v, a);
            m[j] = take ? v : a;
            at[j] = take ? here : at[j];
        }
    } else if (at != NULL) {
        FAST_PRAGMA(omp simd)
        for (int64_t j = 0; j < n; j++) {
            const float v = src[j * step], a = m[j];
            const int take = take_nan_skip(v, a);
            m[j] = take ? v : a;
            at[j] = take ? here : at[j];
        }
    } else if (propagate) {
        FAST_PRAGMA(omp simd)
        for (int64_t j = 0; j < n; j++) {
            const float v = src[j * step], a = m[j];
            m[j] = take_nan_first(v, a) ? v : a;
        }
    } else {
        FAST_PRAGMA(omp simd)
        for (int64_t j = 0; j < n; j++) {
            const float v = src[j * step], a = m[j];
            m[j] = take_nan_skip(v, a) ? v : a;
        }
    }
}

/* The 2 x 2 windows of stride 2 over two contiguous rows, the LeNet
 * case, under NOT_PROPAGATE_NAN: the four candidates of output j are
 * r0[2j], r0[2j + 1], r1[2j], r1[2j + 1], in window order, at dx offsets
 * o0..o3 (plus output j's own shift, which the caller adds). One pass, the
 * maximum in registers. (GCC 12 at -O2 does not vectorize the same chain
 * under take_nan_first; PROPAGATE_NAN takes the per-position passes.) */
static void max_2x2(const float *r0, const float *r1, int64_t n, float *m, int32_t *at,
                    int32_t o0, int32_t o1, int32_t o2, int32_t o3)
{
    FAST_PRAGMA(omp simd)
    for (int64_t j = 0; j < n; j++) {
        const float v0 = r0[2 * j], v1 = r0[2 * j + 1], v2 = r1[2 * j], v3 = r1[2 * j + 1];
        float best = v0;
        int32_t k = o0;
        int take = take_nan_skip(v1, best);
        best = take ? v1 : best;
        k = take ? o1 : k;
        take = take_nan_skip(v2, best);
        best = take ? v2 : best;
        k = take ? o2 : k;
        take = take_nan_skip(v3, best);
        best = take ? v3 : best;
        k = take ? o3 : k;
        m[j] = best;
        at[j] = k;
    }
}

/* m[j] = the maximum of the window of interior output ow0 + j, j < n,
 * whose window rows are b's d and h ranges. When at is set, at[j]
 * receives the offset in the plane of t (dx) of the position taken: t's
 * plane offsets fit in int32 (the caller checks), so at vectorizes with
 * m. */
static void interior_max(const udnn_pool_problem *p, const float *x, const box *b, int64_t ow0,
                         int64_t n, float *m, const udnn_tensor *t, int32_t *at)
{
    const int64_t sd = p->x.strides[2], sh = p->x.strides[3], sw = p->x.strides[4];
    const int64_t step = p->stride[2] * sw, win = p->window[2];
    const int64_t w0 = ow0 * p->stride[2] - p->pad[2];
    const int propagate = p->nan_opt == UDNN_PROPAGATE_NAN;
    if (!propagate && win == 2 && p->stride[2] == 2 && sw == 1 && b->hi[0] - b->lo[0] == 1 &&
        b->hi[1] - b->lo[1] == 2) {
        const float *r0 = x + b->lo[0] * sd + b->lo[1] * sh + w0, *r1 = r0 + sh;
        int32_t o0 = 0, o1 = 0, o2 = 0, o3 = 0, unused[CHUNK];
        if (at != NULL) {
            o0 = (int32_t)(b->lo[0] * t->strides[2] + b->lo[1] * t->strides[3] +
                           w0 * t->strides[4]);
            o1 = o0 + (int32_t)t->strides[4];
            o2 = o0 + (int32_t)t->strides[3];
            o3 = o2 + (int32_t)t->strides[4];
        }
        /* positions are tracked either way: the loop stays branch-free */
        max_2x2(r0, r1, n, m, at != NULL ? at : unused, o0, o1, o2, o3);
        return;
    }
    int first = 1;
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++)
            for (int64_t kw = 0; kw < win; kw++) {
                const float *src = x + d * sd + h * sh + (w0 + kw) * sw;
                const int32_t here =
                    at == NULL ? 0
                               : (int32_t)(d * t->strides[2] + h * t->strides[3] +
                                           (w0 + kw) * t->strides[4]);
                if (first) {
                    FAST_PRAGMA(omp simd)
                    for (int64_t j = 0; j < n; j++) m[j] = src[j * step];
                    if (at != NULL)
                        for (int64_t j = 0; j < n; j++) at[j] = here;
                    first = 0;
                } else if (step == 2) {
                    max_pass(src, 2, n, propagate, m, at, here);
                } else if (step == 1) {
                    max_pass(src, 1, n, propagate, m, at, here);
                } else {
                    max_pass(src, step, n, propagate, m, at, here);
                }
            }
}

/* s[j] = the sum of output ow0 + j's window, j < n. */
static void interior_sum(const udnn_pool_problem *p, const float *x, const box *b, int64_t ow0,
                         int64_t n, double *s)
{
    const int64_t sd = p->x.strides[2], sh = p->x.strides[3], sw = p->x.strides[4];
    const int64_t step = p->stride[2] * sw, win = p->window[2];
    const float *base = x + (ow0 * p->stride[2] - p->pad[2]) * sw;
    for (int64_t j = 0; j < n; j++) s[j] = 0.0;
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++)
            for (int64_t kw = 0; kw < win; kw++) {
                const float *src = base + d * sd + h * sh + kw * sw;
                FAST_PRAGMA(omp simd)
                for (int64_t j = 0; j < n; j++) s[j] += src[j * step];
            }
}

/* ---- forward ------------------------------------------------------------------ */

static void fwd_row(const udnn_pool_problem *p, const float *x, float *y, int64_t od,
                    int64_t oh, int64_t in0, int64_t in1)
{
    const udnn_tensor *yt = &p->y;
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    const int max_mode = is_max_mode(p->mode);
    float *row = y + od * yt->strides[2] + oh * yt->strides[3];
    const int64_t syw = yt->strides[4];
    for (int64_t ow = 0; ow < yt->dims[4];) {
        if (ow == in0 && in0 < in1) {
            /* a chunk of interior outputs */
            const int64_t n = in1 - ow < CHUNK ? in1 - ow : CHUNK;
            box b = window_box(p, od, oh, ow);
            float v[CHUNK];
            if (max_mode) {
                interior_max(p, x, &b, ow, n, v, NULL, NULL);
            } else {
                double s[CHUNK];
                interior_sum(p, x, &b, ow, n, s);
                const double div = avg_divisor(p, &b);
                FAST_PRAGMA(omp simd)
                for (int64_t j = 0; j < n; j++) v[j] = (float)(s[j] / div);
            }
            float *out = row + ow * syw;
            if (syw == 1 && beta == 0.0f) {
                FAST_PRAGMA(omp simd)
                for (int64_t j = 0; j < n; j++) out[j] = alpha * v[j];
            } else if (syw == 1) {
                FAST_PRAGMA(omp simd)
                for (int64_t j = 0; j < n; j++) out[j] = alpha * v[j] + beta * out[j];
            } else if (beta == 0.0f) {
                for (int64_t j = 0; j < n; j++) out[j * syw] = alpha * v[j];
            } else {
                for (int64_t j = 0; j < n; j++) out[j * syw] = alpha * v[j] + beta * out[j * syw];
            }
            ow += n;
            in0 = ow;
            continue;
        }
        box b = window_box(p, od, oh, ow);
        float v;
        if (max_mode) {
            int64_t at[3];
            v = window_max(p, x, &b, at);
        } else {
            v = (float)(window_sum(p, x, &b) / avg_divisor(p, &b));
        }
        float *out = row + ow * syw;
        *out = beta == 0.0f ? alpha * v : alpha * v + beta * *out;
        ow++;
    }
}

static void fwd_plane(const udnn_pool_problem *p, const float *x, float *y)
{
    int64_t in0, in1;
    interior(p, &in0, &in1);
    for (int64_t od = 0; od < p->y.dims[2]; od++)
        for (int64_t oh = 0; oh < p->y.dims[3]; oh++) fwd_row(p, x, y, od, oh, in0, in1);
}

static udnnStatus_t fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_pool_problem *p = problem;
    const int64_t channels = p->x.dims[1], planes = p->x.dims[0] * channels;
    FAST_PRAGMA(omp parallel for if (worth_threads(p)) schedule(static))
    for (int64_t pl = 0; pl < planes; pl++) {
        const int64_t n = pl / channels, c = pl % channels;
        fwd_plane(p, (const float *)p->x_ptr + n * p->x.strides[0] + c * p->x.strides[1],
                  (float *)p->out_ptr + n * p->y.strides[0] + c * p->y.strides[1]);
    }
    return UDNN_STATUS_SUCCESS;
}

/* ---- backward ----------------------------------------------------------------- */

/* dx = beta * dx over one plane; 0 without reading when beta is 0. */
static void scale_plane(const udnn_tensor *t, float *dx, float beta)
{
    const int64_t sd = t->strides[2], sh = t->strides[3], sw = t->strides[4];
    int64_t rows = t->dims[2] * t->dims[3], len = t->dims[4];
    if (sw == 1 && sh == len && (t->dims[2] == 1 || sd == t->dims[3] * len)) {
        len *= rows; /* a packed plane: one row */
        rows = 1;
    }
    for (int64_t r = 0; r < rows; r++) {
        float *row = dx + (r / t->dims[3]) * sd + (r % t->dims[3]) * sh;
        if (sw == 1 && beta == 0.0f) {
            FAST_PRAGMA(omp simd)
            for (int64_t w = 0; w < len; w++) row[w] = 0.0f;
        } else if (sw == 1) {
            FAST_PRAGMA(omp simd)
            for (int64_t w = 0; w < len; w++) row[w] *= beta;
        } else {
            for (int64_t w = 0; w < len; w++)
                row[w * sw] = beta == 0.0f ? 0.0f : beta * row[w * sw];
        }
    }
}

/* Adds g / divisor to every element of window b of plane dx. */
static void spread(const udnn_pool_problem *p, float *dx, const box *b, float share)
{
    const int64_t sd = p->dx.strides[2], sh = p->dx.strides[3], sw = p->dx.strides[4];
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++) {
            float *row = dx + d * sd + h * sh;
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++) row[w * sw] += share;
        }
}

static void bwd_row(const udnn_pool_problem *p, const float *x, const float *dy, float *dx,
                    int64_t od, int64_t oh, int64_t in0, int64_t in1)
{
    const udnn_tensor *dyt = &p->dy, *dxt = &p->dx;
    const float alpha = (float)p->alpha;
    const int max_mode = is_max_mode(p->mode);
    const float *grow = dy + od * dyt->strides[2] + oh * dyt->strides[3];
    const int64_t sgw = dyt->strides[4];
    for (int64_t ow = 0; ow < dyt->dims[4];) {
        box b = window_box(p, od, oh, ow);
        if (max_mode && ow == in0 && in0 < in1) {
            const int64_t n = in1 - ow < CHUNK ? in1 - ow : CHUNK;
            const int64_t out_step = p->stride[2] * dxt->strides[4];
            float m[CHUNK];
            int32_t at[CHUNK];
            interior_max(p, x, &b, ow, n, m, dxt, at);
            for (int64_t j = 0; j < n; j++)
                dx[at[j] + j * out_step] += alpha * grow[(ow + j) * sgw];
            ow += n;
            in0 = ow;
            continue;
        }
        const float g = alpha * grow[ow * sgw];
        if (max_mode) {
            int64_t at[3];
            window_max(p, x, &b, at);
            dx[at[0] * dxt->strides[2] + at[1] * dxt->strides[3] + at[2] * dxt->strides[4]] += g;
        } else {
            spread(p, dx, &b, g / avg_divisor(p, &b));
        }
        ow++;
    }
}

/* The largest offset within a plane of t. */
static int64_t plane_span(const udnn_tensor *t)
{
    return (t->dims[2] - 1) * t->strides[2] + (t->dims[3] - 1) * t->strides[3] +
           (t->dims[4] - 1) * t->strides[4];
}

static void bwd_plane(const udnn_pool_problem *p, const float *x, const float *dy, float *dx)
{
    int64_t in0, in1;
    interior(p, &in0, &in1);
    if (plane_span(&p->dx) > INT32_MAX) in0 = in1; /* offsets too large for the vector path */
    scale_plane(&p->dx, dx, (float)p->beta);
    for (int64_t od = 0; od < p->dy.dims[2]; od++)
        for (int64_t oh = 0; oh < p->dy.dims[3]; oh++) bwd_row(p, x, dy, dx, od, oh, in0, in1);
}

static udnnStatus_t bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_pool_problem *p = problem;
    const int64_t channels = p->x.dims[1], planes = p->x.dims[0] * channels;
    FAST_PRAGMA(omp parallel for if (worth_threads(p)) schedule(static))
    for (int64_t pl = 0; pl < planes; pl++) {
        const int64_t n = pl / channels, c = pl % channels;
        bwd_plane(p, (const float *)p->x_ptr + n * p->x.strides[0] + c * p->x.strides[1],
                  (const float *)p->dy_ptr + n * p->dy.strides[0] + c * p->dy.strides[1],
                  (float *)p->out_ptr + n * p->dx.strides[0] + c * p->dx.strides[1]);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_pool_fwd = {
    /* .name = */ "fast_pool_fwd",
    /* .op = */ UDNN_OP_POOL_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ applicable,
    /* .workspace = */ NULL,
    /* .run = */ fwd_run,
};

const udnn_solver udnn_cpu_fast_pool_bwd = {
    /* .name = */ "fast_pool_bwd",
    /* .op = */ UDNN_OP_POOL_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ applicable,
    /* .workspace = */ NULL,
    /* .run = */ bwd_run,
};
