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

/* y = alpha * act(x) + beta * y */
template <class C> struct act_fwd_f {
    act_args a;
    C alpha, beta;
    __device__ C operator()(const C (&x)[1], C old) const
    {
        C r = alpha * act_f<C>(a, x[0]);
        return beta != C(0) ? r + beta * old : r;
    }
};

/* dx = alpha * act'(x) * dy + beta * dx; inputs x, dy */
template <class C> struct act_bwd_f {
    act_args a;
    C alpha, beta;
    __device__ C operator()(const C (&in)[2], C old) const
    {
        C r = alpha * (act_grad<C>(a, in[0]) * in[1]);
        return beta != C(0) ? r + beta * old : r;
    }
};

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
    if (!udnn_gpu_float_type(p->x.dtype) || p->dy.dtype != p->x.dtype || p->dx.dtype != p->x.dtype) {
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
        act_fwd_f<C> f = {udnn_gpu_act_args(&p->act), (C)p->alpha, (C)p->beta};
        udnn_gpu_inputs<T, 1> in = {{(const T *)p->x_ptr}};
        st = udnn_gpu_map<T, 1>(c, ts, in, (T *)p->out_ptr, f, p->beta != 0.0);
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
        act_bwd_f<C> f = {udnn_gpu_act_args(&p->act), (C)p->alpha, (C)p->beta};
        udnn_gpu_inputs<T, 2> in = {{(const T *)p->x_ptr, (const T *)p->dy_ptr}};
        st = udnn_gpu_map<T, 2>(c, ts, in, (T *)p->out_ptr, f, p->beta != 0.0);
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
