/* activation.c - reference activation forward and backward, and the
 * activation function shared with the fused conv-bias-activation kernel.
 *
 * NaN: the ReLU family (RELU, CLIPPED_RELU, LEAKY_RELU) follows nan_opt.
 * With NOT_PROPAGATE_NAN it maps NaN to 0 and its derivative there is 0,
 * as max(NaN, 0) = 0 does on the GPU; with PROPAGATE_NAN both are NaN.
 * Every other mode lets NaN through, as its arithmetic does.
 *
 * The derivative is computed from x alone, in double, for every mode: y
 * has been rounded to the storage type and would cost precision (sigmoid,
 * tanh). udnn_ref_act_grad takes y for its contract but does not read it.
 *
 * At the kinks the derivative takes the right-hand side's value where the
 * function is flat on the left and 0 on the flat side: RELU'(0) = 0,
 * CLIPPED_RELU' is 1 only on (0, coef), LEAKY_RELU'(0) = coef, ELU'(0) =
 * coef, HARDSWISH' is 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above. */
#include <math.h>

#include "cpu/cpu_solvers.h"

/* The tanh form of GELU: 0.5 x (1 + tanh(k (x + c x^3))). */
#define GELU_TANH_K 0.7978845608028654 /* sqrt(2 / pi) */
#define GELU_TANH_C 0.044715
#define INV_SQRT2 0.7071067811865476
#define INV_SQRT_2PI 0.3989422804014327

static double sigmoid(double x)
{
    /* exp of a negative argument only, so neither branch overflows */
    if (x >= 0) return 1.0 / (1.0 + exp(-x));
    double e = exp(x);
    return e / (1.0 + e);
}

static double softplus(double x)
{
    return fmax(x, 0.0) + log1p(exp(-fabs(x)));
}

static int follows_nan_opt(udnnActivationMode_t m)
{
    return m == UDNN_ACTIVATION_RELU || m == UDNN_ACTIVATION_CLIPPED_RELU ||
           m == UDNN_ACTIVATION_LEAKY_RELU;
}

double udnn_ref_act(const udnn_act_params *p, double x)
{
    if (isnan(x) && follows_nan_opt(p->mode))
        return p->nan_opt == UDNN_PROPAGATE_NAN ? x : 0.0;
    switch (p->mode) {
    case UDNN_ACTIVATION_SIGMOID: return sigmoid(x);
    case UDNN_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case UDNN_ACTIVATION_TANH: return tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return fmin(x > 0 ? x : 0.0, p->coef);
    case UDNN_ACTIVATION_ELU: return x > 0 ? x : p->coef * expm1(x);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x * sigmoid(p->swish_beta * x);
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? x : p->coef * x;
    case UDNN_ACTIVATION_GELU: return 0.5 * x * (1.0 + erf(x * INV_SQRT2));
    case UDNN_ACTIVATION_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(GELU_TANH_K * (x + GELU_TANH_C * x * x * x)));
    case UDNN_ACTIVATION_SOFTPLUS: return softplus(x);
    case UDNN_ACTIVATION_MISH: return x * tanh(softplus(x));
    case UDNN_ACTIVATION_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    }
    return NAN;
}

double udnn_ref_act_grad(const udnn_act_params *p, double x, double y)
{
    (void)y;
    if (isnan(x) && follows_nan_opt(p->mode))
        return p->nan_opt == UDNN_PROPAGATE_NAN ? x : 0.0;
    switch (p->mode) {
    case UDNN_ACTIVATION_SIGMOID: {
        double s = sigmoid(x);
        return s * (1.0 - s);
    }
    case UDNN_ACTIVATION_RELU: return x > 0 ? 1.0 : 0.0;
    case UDNN_ACTIVATION_TANH: {
        double t = tanh(x);
        return 1.0 - t * t;
    }
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < p->coef ? 1.0 : 0.0;
    case UDNN_ACTIVATION_ELU: return x > 0 ? 1.0 : p->coef * exp(x);
    case UDNN_ACTIVATION_IDENTITY: return 1.0;
    case UDNN_ACTIVATION_SWISH: {
        double b = p->swish_beta, s = sigmoid(b * x);
        return s + b * x * s * (1.0 - s);
    }
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? 1.0 : p->coef;
    case UDNN_ACTIVATION_GELU:
        return 0.5 * (1.0 + erf(x * INV_SQRT2)) + x * INV_SQRT_2PI * exp(-0.5 * x * x);
    case UDNN_ACTIVATION_GELU_TANH: {
        double t = tanh(GELU_TANH_K * (x + GELU_TANH_C * x * x * x));
        double inner = GELU_TANH_K * (1.0 + 3.0 * GELU_TANH_C * x * x);
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner;
    }
    case UDNN_ACTIVATION_SOFTPLUS: return sigmoid(x);
    case UDNN_ACTIVATION_MISH: {
        double t = tanh(softplus(x));
        return t + x * (1.0 - t * t) * sigmoid(x);
    }
    case UDNN_ACTIVATION_HARDSWISH:
        if (x < -3.0) return 0.0;
        if (x > 3.0) return 1.0;
        return (2.0 * x + 3.0) / 6.0;
    }
    return NAN;
}

/* y = alpha * act(x) + beta * y, element by element in logical order; x
 * and y may be one buffer when their strides agree (core checks). */
static udnnStatus_t act_fwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_act_problem *p = problem;
    int64_t count = ref_count(&p->x);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        double x = ref_load(p->x_ptr, p->x.dtype, ref_offset(&p->x, i));
        ref_blend(p->out_ptr, p->y.dtype, ref_offset(&p->y, i), udnn_ref_act(&p->act, x),
                  p->alpha, p->beta);
    }
    return UDNN_STATUS_SUCCESS;
}

/* dx = alpha * act'(x) * dy + beta * dx. */
static udnnStatus_t act_bwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_act_problem *p = problem;
    int64_t count = ref_count(&p->x);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) {
        double x = ref_load(p->x_ptr, p->x.dtype, ref_offset(&p->x, i));
        double y = ref_load(p->y_ptr, p->y.dtype, ref_offset(&p->y, i));
        double dy = ref_load(p->dy_ptr, p->dy.dtype, ref_offset(&p->dy, i));
        double grad = udnn_ref_act_grad(&p->act, x, y) * dy;
        ref_blend(p->out_ptr, p->dx.dtype, ref_offset(&p->dx, i), grad, p->alpha, p->beta);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_act_fwd = {
    /* .name = */ "ref_act_fwd",
    /* .op = */ UDNN_OP_ACT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ act_fwd_run,
};

const udnn_solver udnn_cpu_ref_act_bwd = {
    /* .name = */ "ref_act_bwd",
    /* .op = */ UDNN_OP_ACT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ act_bwd_run,
};
