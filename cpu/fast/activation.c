/* activation.c - fast activation forward and backward for FLOAT tensors
 * whose elements fill their buffers without gaps, all in one layout (NCHW,
 * NHWC or any other order): the op is then element-wise over one flat
 * array. Every mode runs in float, blocks of BLOCK elements at a time: the
 * mode's function (or derivative) into a small buffer, then the blend, so
 * the mode switch is paid per block and the simple modes vectorize.
 *
 * The values and NaN rules are cpu/ref/activation.c's: the ReLU family
 * follows nan_opt (NaN -> 0, or NaN through), the other modes let NaN
 * through; derivatives come from x alone. Where a form of the reference
 * loses precision in float (1 + tanh(u) for large negative u), an equal
 * form that keeps it is used: 0.5 (1 + tanh(u)) = sigmoid(2u), and
 * 1 - tanh(u)^2 = 4 s (1 - s) with s = sigmoid(2u). */
#include <math.h>

#include "cpu/fast/fast.h"

#define BLOCK 1024
/* Below this many elements one thread does it all: starting the team
 * costs more than the second core gains on a memory-bound loop. */
#define PAR_MIN_ELEMENTS (1 << 16)

#define GELU_TANH_K 0.7978845608028654f /* sqrt(2 / pi) */
#define GELU_TANH_C 0.044715f
#define INV_SQRT2 0.70710678118654752f
#define INV_SQRT_2PI 0.39894228040143268f

/* ---- layout ------------------------------------------------------------- */

static int64_t count_of(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

/* ---- the functions, in float -------------------------------------------- */

static inline float sigmoid_f(float x)
{
    /* exp of a non-positive argument only: no overflow on either side */
    float e = expf(-fabsf(x));
    float s = 1.0f / (1.0f + e);
    return x >= 0.0f ? s : e * s;
}

static inline float softplus_f(float x)
{
    return (x > 0.0f ? x : 0.0f) + log1pf(expf(-fabsf(x)));
}

/* v[i] = act(x[i]) for i < n. */
static void act_values(const udnn_act_params *p, const float *x, float *v, int64_t n)
{
    const int propagate = p->nan_opt == UDNN_PROPAGATE_NAN;
    const float k = (float)p->coef, b = (float)p->swish_beta;
    switch (p->mode) {
    case UDNN_ACTIVATION_RELU:
        if (propagate) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) v[i] = x[i] <= 0.0f ? 0.0f : x[i];
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) v[i] = x[i] > 0.0f ? x[i] : 0.0f;
        }
        return;
    case UDNN_ACTIVATION_CLIPPED_RELU:
        if (propagate) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) v[i] = x[i] <= 0.0f ? 0.0f : x[i] > k ? k : x[i];
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) v[i] = x[i] > 0.0f ? (x[i] > k ? k : x[i]) : 0.0f;
        }
        return;
    case UDNN_ACTIVATION_LEAKY_RELU:
        if (propagate) {
            FAST_PRAGMA(omp simd)
            /* the positive part plus k times the negative part: selects of
             * x or 0 only, which GCC vectorizes (a select of k * x it does not) */
            for (int64_t i = 0; i < n; i++)
                v[i] = (x[i] <= 0.0f ? 0.0f : x[i]) + k * (x[i] < 0.0f ? x[i] : 0.0f);
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++)
                v[i] = (x[i] > 0.0f ? x[i] : 0.0f) + k * (x[i] < 0.0f ? x[i] : 0.0f);
        }
        return;
    case UDNN_ACTIVATION_IDENTITY:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) v[i] = x[i];
        return;
    case UDNN_ACTIVATION_HARDSWISH:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) {
            float t = x[i] + 3.0f;
            t = t > 0.0f ? t : 0.0f;
            t = t < 6.0f ? t : 6.0f;
            v[i] = x[i] * t / 6.0f;
        }
        return;
    case UDNN_ACTIVATION_ELU:
        for (int64_t i = 0; i < n; i++) v[i] = x[i] > 0.0f ? x[i] : k * expm1f(x[i]);
        return;
    case UDNN_ACTIVATION_SIGMOID:
        for (int64_t i = 0; i < n; i++) v[i] = sigmoid_f(x[i]);
        return;
    case UDNN_ACTIVATION_TANH:
        for (int64_t i = 0; i < n; i++) v[i] = tanhf(x[i]);
        return;
    case UDNN_ACTIVATION_SWISH:
        for (int64_t i = 0; i < n; i++) v[i] = x[i] * sigmoid_f(b * x[i]);
        return;
    case UDNN_ACTIVATION_GELU:
        /* x Phi(x) with Phi = erfc(-x / sqrt 2) / 2: no cancellation for x < 0 */
        for (int64_t i = 0; i < n; i++) v[i] = 0.5f * x[i] * erfcf(-x[i] * INV_SQRT2);
        return;
    case UDNN_ACTIVATION_GELU_TANH:
        for (int64_t i = 0; i < n; i++) {
            float u = GELU_TANH_K * (x[i] + GELU_TANH_C * x[i] * x[i] * x[i]);
            v[i] = x[i] * sigmoid_f(2.0f * u);
        }
        return;
    case UDNN_ACTIVATION_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) v[i] = softplus_f(x[i]);
        return;
    case UDNN_ACTIVATION_MISH:
        for (int64_t i = 0; i < n; i++) v[i] = x[i] * tanhf(softplus_f(x[i]));
        return;
    }
}

/* g[i] = act'(x[i]) for i < n. */
static void act_grads(const udnn_act_params *p, const float *x, float *g, int64_t n)
{
    const int propagate = p->nan_opt == UDNN_PROPAGATE_NAN;
    const float k = (float)p->coef, b = (float)p->swish_beta;
    switch (p->mode) {
    case UDNN_ACTIVATION_RELU:
        if (propagate) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) g[i] = x[i] > 0.0f ? 1.0f : x[i] <= 0.0f ? 0.0f : x[i];
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < n; i++) g[i] = x[i] > 0.0f ? 1.0f : 0.0f;
        }
        return;
    case UDNN_ACTIVATION_CLIPPED_RELU:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) {
            float inside = x[i] > 0.0f && x[i] < k ? 1.0f : 0.0f;
            g[i] = propagate && x[i] != x[i] ? x[i] : inside;
        }
        return;
    case UDNN_ACTIVATION_LEAKY_RELU:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) {
            float nan = propagate ? x[i] : 0.0f;
            g[i] = x[i] > 0.0f ? 1.0f : x[i] <= 0.0f ? k : nan;
        }
        return;
    case UDNN_ACTIVATION_IDENTITY:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) g[i] = 1.0f;
        return;
    case UDNN_ACTIVATION_HARDSWISH:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) {
            const float mid = (2.0f * x[i] + 3.0f) / 6.0f;
            g[i] = x[i] < -3.0f ? 0.0f : x[i] > 3.0f ? 1.0f : mid;
        }
        return;
    case UDNN_ACTIVATION_ELU:
        for (int64_t i = 0; i < n; i++) g[i] = x[i] > 0.0f ? 1.0f : k * expf(x[i]);
        return;
    case UDNN_ACTIVATION_SIGMOID:
        for (int64_t i = 0; i < n; i++) {
            float s = sigmoid_f(x[i]);
            g[i] = s * (1.0f - s);
        }
        return;
    case UDNN_ACTIVATION_TANH:
        /* 1/cosh^2: 1 - tanh^2 cancels in float as |x| grows (4e-5
         * relative at |x| = 4); cosh overflowing gives the right 0 */
        for (int64_t i = 0; i < n; i++) {
            float c = coshf(x[i]);
            g[i] = 1.0f / (c * c);
        }
        return;
    case UDNN_ACTIVATION_SWISH:
        for (int64_t i = 0; i < n; i++) {
            float s = sigmoid_f(b * x[i]);
            g[i] = s + b * x[i] * s * (1.0f - s);
        }
        return;
    case UDNN_ACTIVATION_GELU:
        for (int64_t i = 0; i < n; i++)
            g[i] = 0.5f * erfcf(-x[i] * INV_SQRT2) +
                   x[i] * INV_SQRT_2PI * expf(-0.5f * x[i] * x[i]);
        return;
    case UDNN_ACTIVATION_GELU_TANH:
        for (int64_t i = 0; i < n; i++) {
            float x2 = x[i] * x[i];
            float s = sigmoid_f(2.0f * GELU_TANH_K * (x[i] + GELU_TANH_C * x2 * x[i]));
            g[i] =
                s + 2.0f * x[i] * s * (1.0f - s) * GELU_TANH_K * (1.0f + 3.0f * GELU_TANH_C * x2);
        }
        return;
    case UDNN_ACTIVATION_SOFTPLUS:
        for (int64_t i = 0; i < n; i++) g[i] = sigmoid_f(x[i]);
        return;
    case UDNN_ACTIVATION_MISH:
        for (int64_t i = 0; i < n; i++) {
            float t = tanhf(softplus_f(x[i]));
            g[i] = t + x[i] * (1.0f - t * t) * sigmoid_f(x[i]);
        }
        return;
    }
}

/* ---- the solvers ---------------------------------------------------------- */

static int fwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = problem;
    if (p->x.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    if (!fast_packed_from(&p->x, 0) || !fast_same_layout_from(&p->x, &p->y, 0)) {
        *why = "x and y are not packed in one layout";
        return 0;
    }
    return 1;
}

/* y is not read: the derivative comes from x, as in the reference. */
static int bwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = problem;
    if (p->x.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    if (!fast_packed_from(&p->x, 0) || !fast_same_layout_from(&p->x, &p->dy, 0) ||
        !fast_same_layout_from(&p->x, &p->dx, 0)) {
        *why = "x, dy and dx are not packed in one layout";
        return 0;
    }
    return 1;
}

/* y = alpha * act(x) + beta * y. Each block computes act before writing,
 * so y may be x. */
static udnnStatus_t fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_act_problem *p = problem;
    const float *x = p->x_ptr;
    float *y = p->out_ptr;
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    const int64_t n = count_of(&p->x), blocks = (n + BLOCK - 1) / BLOCK;
    FAST_PRAGMA(omp parallel for if (n >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t blk = 0; blk < blocks; blk++) {
        float v[BLOCK];
        const int64_t start = blk * BLOCK, len = n - start < BLOCK ? n - start : BLOCK;
        float *out = y + start;
        act_values(&p->act, x + start, v, len);
        if (beta == 0.0f) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) out[i] = alpha * v[i];
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) out[i] = alpha * v[i] + beta * out[i];
        }
    }
    return UDNN_STATUS_SUCCESS;
}

/* dx = alpha * act'(x) * dy + beta * dx; dx may be x or dy. */
static udnnStatus_t bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_act_problem *p = problem;
    const float *x = p->x_ptr, *dy = p->dy_ptr;
    float *dx = p->out_ptr;
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    const int64_t n = count_of(&p->x), blocks = (n + BLOCK - 1) / BLOCK;
    FAST_PRAGMA(omp parallel for if (n >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t blk = 0; blk < blocks; blk++) {
        float g[BLOCK];
        const int64_t start = blk * BLOCK, len = n - start < BLOCK ? n - start : BLOCK;
        const float *d = dy + start;
        float *out = dx + start;
        act_grads(&p->act, x + start, g, len);
        if (beta == 0.0f) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) out[i] = alpha * (g[i] * d[i]);
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) out[i] = alpha * (g[i] * d[i]) + beta * out[i];
        }
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_act_fwd = {
    /* .name = */ "fast_act_fwd",
    /* .op = */ UDNN_OP_ACT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ fwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ fwd_run,
};

const udnn_solver udnn_cpu_fast_act_bwd = {
    /* .name = */ "fast_act_bwd",
    /* .op = */ UDNN_OP_ACT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ bwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ bwd_run,
};
