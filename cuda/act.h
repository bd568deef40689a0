/* act.h - the activation functions and their derivatives on the device,
 * in compute type C; they mirror cpu/ref/activation.c (the reference).
 * Shared by the activation solvers and the fused convolution. */
#ifndef UDNN_CUDA_ACT_H
#define UDNN_CUDA_ACT_H

#include "cuda/kernels.h"

typedef struct {
    int mode, propagate_nan;
    double coef, swish_beta;
} act_args;

/* The logistic function. FAST (for 16-bit storage types, C float): the
 * hardware exp and reciprocal, one branch-free formula; relative error a
 * few 1e-6 against HALF's 1e-3 and BFLOAT16's 8e-3, in 6 instructions
 * against some 40 (both of the precise branches run where a warp's signs
 * differ). Where 1 + e^-x passes 2^126 (x < -87) it gives 0 for a value
 * below FLOAT's normal range. */
template <class C, bool FAST = false> __device__ __forceinline__ C sigm(C x)
{
    if constexpr (FAST) {
        return __fdividef(C(1), C(1) + __expf(-x));
    } else {
        if (x >= C(0)) return C(1) / (C(1) + exp(-x));
        C e = exp(x);
        return e / (C(1) + e);
    }
}

template <class C> __device__ __forceinline__ C softplus(C x)
{
    return fmax(x, C(0)) + log1p(exp(-fabs(x)));
}

static __device__ __forceinline__ bool follows_nan_opt(int m)
{
    return m == UDNN_ACTIVATION_RELU || m == UDNN_ACTIVATION_CLIPPED_RELU ||
           m == UDNN_ACTIVATION_LEAKY_RELU;
}

#define GELU_TANH_K 0.7978845608028654
#define GELU_TANH_C 0.044715
#define INV_SQRT2 0.7071067811865476
#define INV_SQRT_2PI 0.3989422804014327

/* act_f and act_grad take the mode from p, or, for M >= 0, mode M compiled
 * in (no switch in a kernel's inner loop); FAST: sigm's fast form. */
template <class C, int M = -1, bool FAST = false> __device__ C act_f(const act_args &p, C x)
{
    const int mode = M >= 0 ? M : p.mode;
    if (x != x && follows_nan_opt(mode)) return p.propagate_nan ? x : C(0);
    const C coef = C(p.coef);
    switch (mode) {
    case UDNN_ACTIVATION_SIGMOID: return sigm<C, FAST>(x);
    case UDNN_ACTIVATION_RELU: return x > C(0) ? x : C(0);
    case UDNN_ACTIVATION_TANH: return tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return fmin(x > C(0) ? x : C(0), coef);
    case UDNN_ACTIVATION_ELU: return x > C(0) ? x : coef * expm1(x);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x * sigm<C, FAST>(C(p.swish_beta) * x);
    case UDNN_ACTIVATION_LEAKY_RELU: return x > C(0) ? x : coef * x;
    case UDNN_ACTIVATION_GELU: return C(0.5) * x * (C(1) + erf(x * C(INV_SQRT2)));
    case UDNN_ACTIVATION_GELU_TANH:
        return C(0.5) * x *
               (C(1) + tanh(C(GELU_TANH_K) * (x + C(GELU_TANH_C) * x * x * x)));
    case UDNN_ACTIVATION_SOFTPLUS: return softplus(x);
    case UDNN_ACTIVATION_MISH: return x * tanh(softplus(x));
    case UDNN_ACTIVATION_HARDSWISH: return x * fmin(fmax(x + C(3), C(0)), C(6)) / C(6);
    }
    return C(NAN);
}

template <class C, int M = -1, bool FAST = false> __device__ C act_grad(const act_args &p, C x)
{
    const int mode = M >= 0 ? M : p.mode;
    if (x != x && follows_nan_opt(mode)) return p.propagate_nan ? x : C(0);
    const C coef = C(p.coef);
    switch (mode) {
    case UDNN_ACTIVATION_SIGMOID: {
        C s = sigm<C, FAST>(x);
        return s * (C(1) - s);
    }
    case UDNN_ACTIVATION_RELU: return x > C(0) ? C(1) : C(0);
    case UDNN_ACTIVATION_TANH: {
        /* 1/cosh^2, not 1 - tanh^2, which cancels in float as |x| grows */
        C ch = cosh(x);
        return C(1) / (ch * ch);
    }
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > C(0) && x < coef ? C(1) : C(0);
    case UDNN_ACTIVATION_ELU: return x > C(0) ? C(1) : coef * exp(x);
    case UDNN_ACTIVATION_IDENTITY: return C(1);
    case UDNN_ACTIVATION_SWISH: {
        C b = C(p.swish_beta), s = sigm<C, FAST>(b * x);
        return s + b * x * s * (C(1) - s);
    }
    case UDNN_ACTIVATION_LEAKY_RELU: return x > C(0) ? C(1) : coef;
    case UDNN_ACTIVATION_GELU:
        return C(0.5) * (C(1) + erf(x * C(INV_SQRT2))) +
               x * C(INV_SQRT_2PI) * exp(C(-0.5) * x * x);
    case UDNN_ACTIVATION_GELU_TANH: {
        C t = tanh(C(GELU_TANH_K) * (x + C(GELU_TANH_C) * x * x * x));
        C inner = C(GELU_TANH_K) * (C(1) + C(3.0 * GELU_TANH_C) * x * x);
        return C(0.5) * (C(1) + t) + C(0.5) * x * (C(1) - t * t) * inner;
    }
    case UDNN_ACTIVATION_SOFTPLUS: return sigm<C, FAST>(x);
    case UDNN_ACTIVATION_MISH: {
        C t = tanh(softplus(x));
        return t + x * (C(1) - t * t) * sigm<C, FAST>(x);
    }
    case UDNN_ACTIVATION_HARDSWISH:
        if (x < C(-3)) return C(0);
        if (x > C(3)) return C(1);
        return (C(2) * x + C(3)) / C(6);
    }
    return C(NAN);
}

static inline act_args udnn_gpu_act_args(const udnn_act_params *a)
{
    act_args r;
    r.mode = (int)a->mode;
    r.propagate_nan = a->nan_opt == UDNN_PROPAGATE_NAN;
    r.coef = a->coef;
    r.swish_beta = a->swish_beta;
    return r;
}

#endif /* UDNN_CUDA_ACT_H */
