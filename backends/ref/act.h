/* act.h - the reference's activation function and its derivative (cpu/ref
 * and the GPU backends' reference-bits solvers; the fused
 * conv-bias-activation kernels use them too), and an element of the
 * activation ops.
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
 * coef, HARDSWISH' is 0 below -3, (2x + 3) / 6 on [-3, 3], 1 above.
 *
 * exp, expm1, log1p, tanh and erf are the reference's own (math.h), so
 * that every backend computes the same bits. */
#ifndef UDNN_REF_ACT_H
#define UDNN_REF_ACT_H

#include <math.h>

#include "backends/ref/math.h"
#include "backends/ref/ref.h"

/* The tanh form of GELU: 0.5 x (1 + tanh(k (x + c x^3))). */
#define REF_GELU_TANH_K 0.7978845608028654 /* sqrt(2 / pi) */
#define REF_GELU_TANH_C 0.044715
#define REF_INV_SQRT2 0.7071067811865476
#define REF_INV_SQRT_2PI 0.3989422804014327

UDNN_REF_FN double ref_sigmoid(double x)
{
    /* exp of a negative argument only, so neither branch overflows */
    if (x >= 0) return 1.0 / (1.0 + ref_exp(-x));
    double e = ref_exp(x);
    return e / (1.0 + e);
}

UDNN_REF_FN double ref_softplus(double x)
{
    return fmax(x, 0.0) + ref_log1p(ref_exp(-fabs(x)));
}

UDNN_REF_FN int ref_act_follows_nan_opt(udnnActivationMode_t m)
{
    return m == UDNN_ACTIVATION_RELU || m == UDNN_ACTIVATION_CLIPPED_RELU ||
           m == UDNN_ACTIVATION_LEAKY_RELU;
}

UDNN_REF_FN double udnn_ref_act(const udnn_act_params *p, double x)
{
    if (isnan(x) && ref_act_follows_nan_opt(p->mode))
        return p->nan_opt == UDNN_PROPAGATE_NAN ? x : 0.0;
    switch (p->mode) {
    case UDNN_ACTIVATION_SIGMOID: return ref_sigmoid(x);
    case UDNN_ACTIVATION_RELU: return x > 0 ? x : 0.0;
    case UDNN_ACTIVATION_TANH: return ref_tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return fmin(x > 0 ? x : 0.0, p->coef);
    case UDNN_ACTIVATION_ELU: return x > 0 ? x : p->coef * ref_expm1(x);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x * ref_sigmoid(p->swish_beta * x);
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? x : p->coef * x;
    case UDNN_ACTIVATION_GELU: return 0.5 * x * (1.0 + ref_erf(x * REF_INV_SQRT2));
    case UDNN_ACTIVATION_GELU_TANH:
        return 0.5 * x * (1.0 + ref_tanh(REF_GELU_TANH_K * (x + REF_GELU_TANH_C * x * x * x)));
    case UDNN_ACTIVATION_SOFTPLUS: return ref_softplus(x);
    case UDNN_ACTIVATION_MISH: return x * ref_tanh(ref_softplus(x));
    case UDNN_ACTIVATION_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    }
    return NAN;
}

UDNN_REF_FN double udnn_ref_act_grad(const udnn_act_params *p, double x, double y)
{
    (void)y;
    if (isnan(x) && ref_act_follows_nan_opt(p->mode))
        return p->nan_opt == UDNN_PROPAGATE_NAN ? x : 0.0;
    switch (p->mode) {
    case UDNN_ACTIVATION_SIGMOID: {
        double s = ref_sigmoid(x);
        return s * (1.0 - s);
    }
    case UDNN_ACTIVATION_RELU: return x > 0 ? 1.0 : 0.0;
    case UDNN_ACTIVATION_TANH: {
        double t = ref_tanh(x);
        return 1.0 - t * t;
    }
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < p->coef ? 1.0 : 0.0;
    case UDNN_ACTIVATION_ELU: return x > 0 ? 1.0 : p->coef * ref_exp(x);
    case UDNN_ACTIVATION_IDENTITY: return 1.0;
    case UDNN_ACTIVATION_SWISH: {
        double b = p->swish_beta, s = ref_sigmoid(b * x);
        return s + b * x * s * (1.0 - s);
    }
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? 1.0 : p->coef;
    case UDNN_ACTIVATION_GELU:
        return 0.5 * (1.0 + ref_erf(x * REF_INV_SQRT2)) +
               x * REF_INV_SQRT_2PI * ref_exp(-0.5 * x * x);
    case UDNN_ACTIVATION_GELU_TANH: {
        double t = ref_tanh(REF_GELU_TANH_K * (x + REF_GELU_TANH_C * x * x * x));
        double inner = REF_GELU_TANH_K * (1.0 + 3.0 * REF_GELU_TANH_C * x * x);
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * inner;
    }
    case UDNN_ACTIVATION_SOFTPLUS: return ref_sigmoid(x);
    case UDNN_ACTIVATION_MISH: {
        double t = ref_tanh(ref_softplus(x));
        return t + x * (1.0 - t * t) * ref_sigmoid(x);
    }
    case UDNN_ACTIVATION_HARDSWISH:
        if (x < -3.0) return 0.0;
        if (x > 3.0) return 1.0;
        return (2.0 * x + 3.0) / 6.0;
    }
    return NAN;
}

/* Element i (logical order) of y = alpha * act(x) + beta * y. */
UDNN_REF_FN void ref_act_fwd_at(const udnn_act_problem *p, int64_t i)
{
    double x = ref_load(p->x_ptr, p->x.dtype, ref_offset(&p->x, i));
    ref_blend(p->out_ptr, p->y.dtype, ref_offset(&p->y, i), udnn_ref_act(&p->act, x), p->alpha,
              p->beta);
}

/* Element i of dx = alpha * act'(x) * dy + beta * dx. */
UDNN_REF_FN void ref_act_bwd_at(const udnn_act_problem *p, int64_t i)
{
    double x = ref_load(p->x_ptr, p->x.dtype, ref_offset(&p->x, i));
    double y = ref_load(p->y_ptr, p->y.dtype, ref_offset(&p->y, i));
    double dy = ref_load(p->dy_ptr, p->dy.dtype, ref_offset(&p->dy, i));
    double grad = udnn_ref_act_grad(&p->act, x, y) * dy;
    ref_blend(p->out_ptr, p->dx.dtype, ref_offset(&p->dx, i), grad, p->alpha, p->beta);
}

#endif /* UDNN_REF_ACT_H */
