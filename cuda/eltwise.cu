/* eltwise.cu - the element-wise solvers: SetTensor, ScaleTensor and
 * activation forward and backward, for FLOAT, DOUBLE, HALF and BFLOAT16
 * with any strides (SetTensor and ScaleTensor also INT8, INT32 and INT64,
 * rounded and saturated as cpu/ref does), through kernels.h's maps (a vectorized dense path when
 * every tensor shares one dense layout). Math: float for FLOAT, HALF and
 * BFLOAT16, double for DOUBLE. With beta == 0 the output is never read.
 * No solver allocates or synchronizes. */
#include "cuda/act.h"

/* c = value */
template <class C> struct set_f {
    C value;
    __device__ C operator()(const C (&)[1], C) const { return value; }
};

/* c = alpha * c */
template <class C> struct scale_f {
    C alpha;
    __device__ C operator()(const C (&)[1], C old) const { return alpha * old; }
};

/* y = alpha * act(x) + beta * y; the mode M compiled in (-1: a.mode),
 * FAST as act_f's */
template <class C, int M, bool FAST> struct act_fwd_f {
    act_args a;
    C alpha, beta;
    __device__ C operator()(const C (&x)[1], C old) const
    {
        return udnn_gpu_scale_blend(act_f<C, M, FAST>(a, x[0]), alpha, beta, old);
    }
};

/* dx = alpha * act'(x) * dy + beta * dx; inputs x, dy */
template <class C, int M, bool FAST> struct act_bwd_f {
    act_args a;
    C alpha, beta;
    __device__ C operator()(const C (&in)[2], C old) const
    {
        return udnn_gpu_scale_blend(act_grad<C, M, FAST>(a, in[0]) * in[1], alpha, beta, old);
    }
};

/* kernels.h's dense map, launched as udnn_gpu_map launches it */
template <class T, int NIN, class F>
static udnnStatus_t act_dense(const udnn_gpu_context *c, int64_t n, udnn_gpu_inputs<T, NIN> in,
                              T *out, F f, bool read_out)
{
    bool vec = udnn_gpu_aligned16(out);
    for (int t = 0; t < NIN; t++) vec = vec && udnn_gpu_aligned16(in.p[t]);
    const int64_t items = vec ? n / (int64_t)(16 / sizeof(T)) + 1 : n;
    udnn_gpu_dense_map<T, NIN, F>
        <<<udnn_gpu_grid(c, items), UDNN_GPU_BLOCK, 0, c->stream>>>(n, in, out, f, read_out, vec);
    return udnn_gpu_launched();
}

/* The activation map: where every tensor shares one dense layout (the
 * fast path), a kernel per mode, the mode compiled in, so that the inner
 * loop has no switch and each mode's code only (sigmoid in BFLOAT16 was
 * bound by instructions); other layouts the mode read at run time. FAST:
 * the 16-bit types. */
template <template <class, int, bool> class F, class T, int NIN>
static udnnStatus_t act_map(const udnn_gpu_context *c, const udnn_tensor *const *ts,
                            udnn_gpu_inputs<T, NIN> in, T *out, const act_args &a,
                            typename io<T>::C alpha, typename io<T>::C beta, bool read_out)
{
    typedef typename io<T>::C C;
    enum { FAST = sizeof(T) == 2 };
    const int64_t n = udnn_gpu_count(ts[0]);
    if (n == 0) return UDNN_STATUS_SUCCESS;
    if (!udnn_gpu_same_dense(ts, NIN + 1))
        return udnn_gpu_map<T, NIN>(c, ts, in, out, F<C, -1, FAST>{a, alpha, beta}, read_out);
#define ACT_MODE(M)                                                                        \
    case M: return act_dense<T, NIN>(c, n, in, out, F<C, M, FAST>{a, alpha, beta}, read_out)
    switch (a.mode) {
        ACT_MODE(UDNN_ACTIVATION_SIGMOID);
        ACT_MODE(UDNN_ACTIVATION_RELU);
        ACT_MODE(UDNN_ACTIVATION_TANH);
        ACT_MODE(UDNN_ACTIVATION_CLIPPED_RELU);
        ACT_MODE(UDNN_ACTIVATION_ELU);
        ACT_MODE(UDNN_ACTIVATION_IDENTITY);
        ACT_MODE(UDNN_ACTIVATION_SWISH);
        ACT_MODE(UDNN_ACTIVATION_LEAKY_RELU);
        ACT_MODE(UDNN_ACTIVATION_GELU);
        ACT_MODE(UDNN_ACTIVATION_GELU_TANH);
        ACT_MODE(UDNN_ACTIVATION_SOFTPLUS);
        ACT_MODE(UDNN_ACTIVATION_MISH);
        ACT_MODE(UDNN_ACTIVATION_HARDSWISH);
    }
#undef ACT_MODE
    return act_dense<T, NIN>(c, n, in, out, F<C, -1, FAST>{a, alpha, beta}, read_out);
}

static udnnStatus_t set_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_tensor_problem);
    const udnn_tensor *ts[1] = {&p->c};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH_ALL(p->c.dtype, {
        typedef typename io<T>::C C;
        set_f<C> f = {(C)p->value};
        st = udnn_gpu_map<T, 0>(c, ts, udnn_gpu_inputs<T, 0>(), (T *)p->c_ptr, f, false);
    });
    return st;
}

static udnnStatus_t scale_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_tensor_problem);
    const udnn_tensor *ts[1] = {&p->c};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH_ALL(p->c.dtype, {
        typedef typename io<T>::C C;
        scale_f<C> f = {(C)p->alpha1};
        st = udnn_gpu_map<T, 0>(c, ts, udnn_gpu_inputs<T, 0>(), (T *)p->c_ptr, f, true);
    });
    return st;
}

static int act_fwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU activation takes FLOAT, DOUBLE, HALF and BFLOAT16, x and y alike";
        return 0;
    }
    return 1;
}

static int act_bwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->dy.dtype != p->x.dtype ||
        p->dx.dtype != p->x.dtype) {
        *why = "the GPU activation takes FLOAT, DOUBLE, HALF and BFLOAT16, x, dy and dx alike";
        return 0;
    }
    return 1;
}

static udnnStatus_t act_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_act_problem);
    const udnn_tensor *ts[2] = {&p->y, &p->x};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, {
        typedef typename io<T>::C C;
        udnn_gpu_inputs<T, 1> in = {{(const T *)p->x_ptr}};
        st = act_map<act_fwd_f, T, 1>(c, ts, in, (T *)p->out_ptr, udnn_gpu_act_args(&p->act),
                                      (C)p->alpha, (C)p->beta, p->beta != 0.0);
    });
    return st;
}

static udnnStatus_t act_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_act_problem);
    const udnn_tensor *ts[3] = {&p->dx, &p->x, &p->dy};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, {
        typedef typename io<T>::C C;
        udnn_gpu_inputs<T, 2> in = {{(const T *)p->x_ptr, (const T *)p->dy_ptr}};
        st = act_map<act_bwd_f, T, 2>(c, ts, in, (T *)p->out_ptr, udnn_gpu_act_args(&p->act),
                                      (C)p->alpha, (C)p->beta, p->beta != 0.0);
    });
    return st;
}

static const udnn_solver set_tensor = {
    "gpu_set_tensor", UDNN_OP_SET_TENSOR, -1, 1, NULL, NULL, set_run,
};
static const udnn_solver scale_tensor = {
    "gpu_scale_tensor", UDNN_OP_SCALE_TENSOR, -1, 1, NULL, NULL, scale_run,
};
static const udnn_solver act_fwd = {
    "gpu_act_fwd", UDNN_OP_ACT_FWD, -1, 1, act_fwd_applicable, NULL, act_fwd_run,
};
static const udnn_solver act_bwd = {
    "gpu_act_bwd", UDNN_OP_ACT_BWD, -1, 1, act_bwd_applicable, NULL, act_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(eltwise, &act_fwd, &act_bwd, &set_tensor, &scale_tensor);
