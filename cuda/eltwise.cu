/* eltwise.cu - the element-wise solvers: SetTensor, ScaleTensor and
 * activation forward and backward, for FLOAT, DOUBLE, HALF and BFLOAT16
 * with any strides. One generic grid-stride kernel walks the logical
 * row-major index with 64-bit offsets per tensor. Math: float for FLOAT,
 * HALF and BFLOAT16 (loaded to float, rounded once on store), double for
 * DOUBLE; the activation formulas mirror cpu/ref/activation.c. With beta
 * == 0 the output is never read. No solver allocates or synchronizes. */
#include <stdint.h>
#include <string.h>

#include "cuda/gpu.h"

#define MAX_TENSORS 4
#define BLOCK 256

/* The shared logical dims and each tensor's element strides. */
typedef struct {
    int rank;
    int64_t count;
    int64_t dims[UDNN_DIM_MAX];
    int64_t strides[MAX_TENSORS][UDNN_DIM_MAX];
} shape;

static int64_t tensor_count(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

static shape make_shape(const udnn_tensor *const *ts, int nt)
{
    shape s;
    memset(&s, 0, sizeof s);
    s.rank = ts[0]->rank;
    s.count = tensor_count(ts[0]);
    for (int d = 0; d < s.rank; d++) {
        s.dims[d] = ts[0]->dims[d];
        for (int t = 0; t < nt; t++) s.strides[t][d] = ts[t]->strides[d];
    }
    return s;
}

template <int NT>
__device__ __forceinline__ void offsets(const shape &s, int64_t i, int64_t off[NT])
{
    for (int t = 0; t < NT; t++) off[t] = 0;
    for (int d = s.rank - 1; d >= 0; d--) {
        int64_t n = s.dims[d];
        int64_t q = i / n, r = i - q * n;
        for (int t = 0; t < NT; t++) off[t] += r * s.strides[t][d];
        i = q;
    }
}

/* storage type -> compute type */
template <class T> struct io;
template <> struct io<float> {
    typedef float C;
    static __device__ __forceinline__ float ld(float v) { return v; }
    static __device__ __forceinline__ float st(float v) { return v; }
};
template <> struct io<double> {
    typedef double C;
    static __device__ __forceinline__ double ld(double v) { return v; }
    static __device__ __forceinline__ double st(double v) { return v; }
};
template <> struct io<udnnGpuHalf> {
    typedef float C;
    static __device__ __forceinline__ float ld(udnnGpuHalf v) { return udnnGpuHalfToFloat(v); }
    static __device__ __forceinline__ udnnGpuHalf st(float v) { return udnnGpuFloatToHalf(v); }
};
template <> struct io<udnnGpuBf16> {
    typedef float C;
    static __device__ __forceinline__ float ld(udnnGpuBf16 v) { return udnnGpuBf16ToFloat(v); }
    static __device__ __forceinline__ udnnGpuBf16 st(float v) { return udnnGpuFloatToBf16(v); }
};

/* ---- activation math (cpu/ref/activation.c in type C) -------------------- */

typedef struct {
    int mode, propagate_nan;
    double coef, swish_beta;
} act_args;

template <class C> __device__ __forceinline__ C sigm(C x)
{
    if (x >= C(0)) return C(1) / (C(1) + exp(-x));
    C e = exp(x);
    return e / (C(1) + e);
}

template <class C> __device__ __forceinline__ C softplus(C x)
{
    return fmax(x, C(0)) + log1p(exp(-fabs(x)));
}

__device__ __forceinline__ bool follows_nan_opt(int m)
{
    return m == UDNN_ACTIVATION_RELU || m == UDNN_ACTIVATION_CLIPPED_RELU ||
           m == UDNN_ACTIVATION_LEAKY_RELU;
}

#define GELU_TANH_K 0.7978845608028654
#define GELU_TANH_C 0.044715
#define INV_SQRT2 0.7071067811865476
#define INV_SQRT_2PI 0.3989422804014327

template <class C> __device__ C act_f(const act_args &p, C x)
{
    if (x != x && follows_nan_opt(p.mode)) return p.propagate_nan ? x : C(0);
    const C coef = C(p.coef);
    switch (p.mode) {
    case UDNN_ACTIVATION_SIGMOID: return sigm(x);
    case UDNN_ACTIVATION_RELU: return x > C(0) ? x : C(0);
    case UDNN_ACTIVATION_TANH: return tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return fmin(x > C(0) ? x : C(0), coef);
    case UDNN_ACTIVATION_ELU: return x > C(0) ? x : coef * expm1(x);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x * sigm(C(p.swish_beta) * x);
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

template <class C> __device__ C act_grad(const act_args &p, C x)
{
    if (x != x && follows_nan_opt(p.mode)) return p.propagate_nan ? x : C(0);
    const C coef = C(p.coef);
    switch (p.mode) {
    case UDNN_ACTIVATION_SIGMOID: {
        C s = sigm(x);
        return s * (C(1) - s);
    }
    case UDNN_ACTIVATION_RELU: return x > C(0) ? C(1) : C(0);
    case UDNN_ACTIVATION_TANH: {
        C t = tanh(x);
        return C(1) - t * t;
    }
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > C(0) && x < coef ? C(1) : C(0);
    case UDNN_ACTIVATION_ELU: return x > C(0) ? C(1) : coef * exp(x);
    case UDNN_ACTIVATION_IDENTITY: return C(1);
    case UDNN_ACTIVATION_SWISH: {
        C b = C(p.swish_beta), s = sigm(b * x);
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
    case UDNN_ACTIVATION_SOFTPLUS: return sigm(x);
    case UDNN_ACTIVATION_MISH: {
        C t = tanh(softplus(x));
        return t + x * (C(1) - t * t) * sigm(x);
    }
    case UDNN_ACTIVATION_HARDSWISH:
        if (x < C(-3)) return C(0);
        if (x > C(3)) return C(1);
        return (C(2) * x + C(3)) / C(6);
    }
    return C(NAN);
}

/* ---- kernels ---------------------------------------------------------------- */

#define GRID_STRIDE_LOOP(i, n)                                                               \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                 \
         i += (int64_t)gridDim.x * blockDim.x)

template <class T> __global__ void set_kernel(shape s, T *c, typename io<T>::C value)
{
    T v = io<T>::st(value);
    GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[1];
        offsets<1>(s, i, off);
        c[off[0]] = v;
    }
}

template <class T> __global__ void scale_kernel(shape s, T *c, typename io<T>::C alpha)
{
    GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[1];
        offsets<1>(s, i, off);
        c[off[0]] = io<T>::st(alpha * io<T>::ld(c[off[0]]));
    }
}

/* tensors: 0 x, 1 y */
template <class T>
__global__ void act_fwd_kernel(shape s, act_args p, const T *x, T *y, typename io<T>::C alpha,
                               typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[2];
        offsets<2>(s, i, off);
        C r = alpha * act_f<C>(p, io<T>::ld(x[off[0]]));
        if (beta != C(0)) r += beta * io<T>::ld(y[off[1]]);
        y[off[1]] = io<T>::st(r);
    }
}

/* tensors: 0 x, 1 dy, 2 dx */
template <class T>
__global__ void act_bwd_kernel(shape s, act_args p, const T *x, const T *dy, T *dx,
                               typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[3];
        offsets<3>(s, i, off);
        C r = alpha * (act_grad<C>(p, io<T>::ld(x[off[0]])) * io<T>::ld(dy[off[1]]));
        if (beta != C(0)) r += beta * io<T>::ld(dx[off[2]]);
        dx[off[2]] = io<T>::st(r);
    }
}

/* ---- launching ------------------------------------------------------------ */

static unsigned grid_for(const udnn_gpu_context *c, int64_t n)
{
    int64_t blocks = (n + BLOCK - 1) / BLOCK;
    if (blocks > c->max_blocks) blocks = c->max_blocks;
    return blocks < 1 ? 1u : (unsigned)blocks;
}

static udnnStatus_t launched(void)
{
    udnnGpuError_t e = udnnGpuGetLastError();
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "launching a kernel");
    return UDNN_STATUS_SUCCESS;
}

static int float_type(udnnDataType_t t)
{
    return t == UDNN_DATA_FLOAT || t == UDNN_DATA_DOUBLE || t == UDNN_DATA_HALF ||
           t == UDNN_DATA_BFLOAT16;
}

/* Calls F<T>(args...) for the storage type of dtype. */
#define DISPATCH(dtype, CALL)                                                                \
    switch (dtype) {                                                                       \
    case UDNN_DATA_FLOAT: { typedef float T; CALL; } break;                                \
    case UDNN_DATA_DOUBLE: { typedef double T; CALL; } break;                              \
    case UDNN_DATA_HALF: { typedef udnnGpuHalf T; CALL; } break;                           \
    case UDNN_DATA_BFLOAT16: { typedef udnnGpuBf16 T; CALL; } break;                       \
    default: break;                                                                        \
    }

static int tensor_applicable(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    if (!float_type(p->c.dtype)) {
        *why = "the GPU element-wise kernels take FLOAT, DOUBLE, HALF and BFLOAT16 only";
        return 0;
    }
    return 1;
}

static udnnStatus_t set_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws;
    (void)ws_bytes;
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    udnnStatus_t st = udnn_gpu_bind(c);
    if (st != UDNN_STATUS_SUCCESS) return st;
    const udnn_tensor *ts[1] = {&p->c};
    shape s = make_shape(ts, 1);
    if (s.count == 0) return UDNN_STATUS_SUCCESS;
    unsigned g = grid_for(c, s.count);
    DISPATCH(p->c.dtype, (set_kernel<T><<<g, BLOCK, 0, c->stream>>>(
                             s, (T *)p->c_ptr, (typename io<T>::C)p->value)));
    return launched();
}

static udnnStatus_t scale_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws;
    (void)ws_bytes;
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    const udnn_tensor_problem *p = (const udnn_tensor_problem *)problem;
    udnnStatus_t st = udnn_gpu_bind(c);
    if (st != UDNN_STATUS_SUCCESS) return st;
    const udnn_tensor *ts[1] = {&p->c};
    shape s = make_shape(ts, 1);
    if (s.count == 0) return UDNN_STATUS_SUCCESS;
    unsigned g = grid_for(c, s.count);
    DISPATCH(p->c.dtype, (scale_kernel<T><<<g, BLOCK, 0, c->stream>>>(
                             s, (T *)p->c_ptr, (typename io<T>::C)p->alpha1)));
    return launched();
}

static act_args make_act(const udnn_act_params *a)
{
    act_args r;
    r.mode = (int)a->mode;
    r.propagate_nan = a->nan_opt == UDNN_PROPAGATE_NAN;
    r.coef = a->coef;
    r.swish_beta = a->swish_beta;
    return r;
}

static int act_fwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    if (!float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU activation takes FLOAT, DOUBLE, HALF and BFLOAT16, x and y alike";
        return 0;
    }
    return 1;
}

static int act_bwd_applicable(const void *problem, const char **why)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    if (!float_type(p->x.dtype) || p->dy.dtype != p->x.dtype || p->dx.dtype != p->x.dtype) {
        *why = "the GPU activation takes FLOAT, DOUBLE, HALF and BFLOAT16, x, dy and dx alike";
        return 0;
    }
    return 1;
}

static udnnStatus_t act_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws;
    (void)ws_bytes;
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    udnnStatus_t st = udnn_gpu_bind(c);
    if (st != UDNN_STATUS_SUCCESS) return st;
    const udnn_tensor *ts[2] = {&p->x, &p->y};
    shape s = make_shape(ts, 2);
    if (s.count == 0) return UDNN_STATUS_SUCCESS;
    unsigned g = grid_for(c, s.count);
    act_args a = make_act(&p->act);
    DISPATCH(p->x.dtype,
             (act_fwd_kernel<T><<<g, BLOCK, 0, c->stream>>>(
                 s, a, (const T *)p->x_ptr, (T *)p->out_ptr, (typename io<T>::C)p->alpha,
                 (typename io<T>::C)p->beta)));
    return launched();
}

static udnnStatus_t act_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws;
    (void)ws_bytes;
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    udnnStatus_t st = udnn_gpu_bind(c);
    if (st != UDNN_STATUS_SUCCESS) return st;
    const udnn_tensor *ts[3] = {&p->x, &p->dy, &p->dx};
    shape s = make_shape(ts, 3);
    if (s.count == 0) return UDNN_STATUS_SUCCESS;
    unsigned g = grid_for(c, s.count);
    act_args a = make_act(&p->act);
    DISPATCH(p->x.dtype,
             (act_bwd_kernel<T><<<g, BLOCK, 0, c->stream>>>(
                 s, a, (const T *)p->x_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr,
                 (typename io<T>::C)p->alpha, (typename io<T>::C)p->beta)));
    return launched();
}

UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_set_tensor = {
    "gpu_set_tensor", UDNN_OP_SET_TENSOR, -1, 1, tensor_applicable, NULL, set_run,
};
UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_scale_tensor = {
    "gpu_scale_tensor", UDNN_OP_SCALE_TENSOR, -1, 1, tensor_applicable, NULL, scale_run,
};
UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_act_fwd = {
    "gpu_act_fwd", UDNN_OP_ACT_FWD, -1, 1, act_fwd_applicable, NULL, act_fwd_run,
};
UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_act_bwd = {
    "gpu_act_bwd", UDNN_OP_ACT_BWD, -1, 1, act_bwd_applicable, NULL, act_bwd_run,
};
