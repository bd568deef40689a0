/*
 * backend.h - the plugin ABI between udnn's core and its backends.
 *
 * Core validates every call and hands a backend a normalized problem struct
 * and raw pointers; backends may assume the problem is valid. A backend is a
 * udnn_backend record (a versioned, sized table of function pointers that
 * only ever grows at its end) plus a table of solvers, one record per
 * algorithm. GPU backends are loadable modules exporting one symbol,
 * UDNN_BACKEND_ENTRY_SYMBOL, of type udnn_backend_entry_fn.
 *
 * Layout normalization: every tensor reaches a backend as a udnn_tensor in
 * the logical order n, c, spatial... with explicit element strides; NHWC is
 * only a set of strides. Convolution and pooling problems always have three
 * spatial dimensions (d, h, w); a 2-D problem has d = 1, pad 0, stride and
 * dilation 1 in that dimension. Filters are k, c/groups, t, r, s likewise.
 */
#ifndef UDNN_BACKEND_H
#define UDNN_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "udnn.h"

#ifdef __cplusplus
extern "C" {
#endif

#define UDNN_BACKEND_ABI_VERSION 1u
#define UDNN_BACKEND_ENTRY_SYMBOL "udnn_backend_entry"

/* Rank of the normalized conv/pool tensors: n, c, d, h, w. */
#define UDNN_SPATIAL_RANK 5

/* A tensor as a backend sees it: logical dims and element strides. */
typedef struct {
    udnnDataType_t dtype;
    int rank;
    int64_t dims[UDNN_DIM_MAX];
    int64_t strides[UDNN_DIM_MAX];
} udnn_tensor;

/* Every op a solver may serve. */
typedef enum {
    UDNN_OP_CONV_FWD,
    UDNN_OP_CONV_BWD_DATA,
    UDNN_OP_CONV_BWD_FILTER,
    UDNN_OP_CONV_BWD_BIAS,
    UDNN_OP_CONV_BIAS_ACT,
    UDNN_OP_ACT_FWD,
    UDNN_OP_ACT_BWD,
    UDNN_OP_POOL_FWD,
    UDNN_OP_POOL_BWD,
    UDNN_OP_SOFTMAX_FWD,
    UDNN_OP_SOFTMAX_BWD,
    UDNN_OP_SET_TENSOR,
    UDNN_OP_SCALE_TENSOR,
    UDNN_OP_ADD_TENSOR,
    UDNN_OP_TRANSFORM_TENSOR,
    UDNN_OP_OP_TENSOR,
    UDNN_OP_BN_FWD_TRAIN,
    UDNN_OP_BN_FWD_INFER,
    UDNN_OP_BN_BWD,
    UDNN_OP_NORM_FWD,
    UDNN_OP_NORM_BWD,
    UDNN_OP_GROUPNORM_FWD,
    UDNN_OP_GROUPNORM_BWD,
    UDNN_OP_LRN_FWD,
    UDNN_OP_LRN_BWD,
    UDNN_OP_DROPOUT_FWD,
    UDNN_OP_DROPOUT_BWD,
    UDNN_OP_REDUCE,
    UDNN_OP_MATMUL,
    UDNN_OP_COUNT
} udnn_op;

/* Activation parameters shared by activation and fused ops. */
typedef struct {
    udnnActivationMode_t mode;
    udnnNanPropagation_t nan_opt;
    double coef;
    double swish_beta;
} udnn_act_params;

/* Convolution, every direction. For CONV_FWD: y = alpha*conv(x,w) + beta*y.
 * CONV_BWD_DATA: dx (in x's slot) = alpha*convT(dy (in y's slot), w) +
 * beta*dx. CONV_BWD_FILTER: dw (in w's slot) = alpha*grad(x, dy) + beta*dw.
 * CONV_BIAS_ACT: y = act(alpha*conv(x,w) + alpha2*z + bias), beta unused.
 * x: n, c, d, h, w; w: k, c/groups, t, r, s; y: n, k, od, oh, ow. */
typedef struct {
    udnn_tensor x, w, y;
    int pad[3], stride[3], dilation[3]; /* d, h, w */
    int groups;
    udnnConvolutionMode_t mode;   /* CONVOLUTION flips the filter */
    udnnDataType_t compute_type;  /* from the descriptor */
    udnnMathType_t math_type;
    double alpha, beta;
    const void *x_ptr; /* input: x (fwd, bwd-filter) */
    const void *w_ptr; /* input: w (fwd, bwd-data) */
    const void *y_ptr; /* input: dy (bwd-data, bwd-filter) */
    void *out_ptr;     /* output: y, dx or dw by direction */
    /* CONV_BIAS_ACT only */
    udnn_tensor z, bias;
    double alpha2;
    const void *z_ptr;
    const void *bias_ptr;
    udnn_act_params act;
} udnn_conv_problem;

/* Backward bias: db = alpha * sum over n and spatial of dy + beta * db.
 * dy: n, k, spatial...; db: same rank, 1 everywhere but dim 1. */
typedef struct {
    udnn_tensor dy, db;
    double alpha, beta;
    const void *dy_ptr;
    void *db_ptr;
} udnn_conv_bias_problem;

/* Activation. FWD: y = alpha*act(x) + beta*y. BWD: dx = alpha*act'(x)*dy +
 * beta*dx (y and x both given; either pointer may be used). All four
 * tensors have the same dims. */
typedef struct {
    udnn_act_params act;
    udnn_tensor x, y, dy, dx;
    double alpha, beta;
    const void *x_ptr, *y_ptr, *dy_ptr;
    void *out_ptr; /* y (fwd) or dx (bwd) */
} udnn_act_problem;

/* Pooling with three spatial dims (see the top of this file).
 * FWD: y = alpha*pool(x) + beta*y. BWD: dx = alpha*pool'(dy; x, y) + beta*dx. */
typedef struct {
    udnnPoolingMode_t mode;
    udnnNanPropagation_t nan_opt;
    int window[3], pad[3], stride[3];
    udnn_tensor x, y, dy, dx;
    double alpha, beta;
    const void *x_ptr, *y_ptr, *dy_ptr;
    void *out_ptr; /* y (fwd) or dx (bwd) */
} udnn_pool_problem;

/* Softmax over C (CHANNEL) or C and every later dim (INSTANCE), per n (and
 * per spatial position for CHANNEL). FWD: y = alpha*softmax(x) + beta*y.
 * BWD: dx = alpha*grad(y, dy) + beta*dx. Tensors are n, c, rest... */
typedef struct {
    udnnSoftmaxAlgorithm_t algo;
    udnnSoftmaxMode_t mode;
    udnn_tensor x, y, dy, dx;
    double alpha, beta;
    const void *x_ptr, *y_ptr, *dy_ptr;
    void *out_ptr; /* y (fwd) or dx (bwd) */
} udnn_softmax_problem;

/* Element-wise tensor ops, one struct for all:
 *  SET_TENSOR:       c = value (c of any type; value as double).
 *  SCALE_TENSOR:     c = alpha1 * c.
 *  ADD_TENSOR:       c = alpha1 * a + beta * c, a broadcast (dims 1 or c's).
 *  TRANSFORM_TENSOR: c = alpha1 * a + beta * c, same dims, any types.
 *  OP_TENSOR:        c = op(alpha1 * a, alpha2 * b) + beta * c, b broadcast;
 *                    b unused for SQRT and NOT.
 * a and b have c's rank. */
typedef struct {
    udnn_op op;
    udnnOpTensorOp_t tensor_op;  /* OP_TENSOR only */
    udnnDataType_t compute_type; /* OP_TENSOR only */
    udnnNanPropagation_t nan_opt;
    udnn_tensor a, b, c;
    double alpha1, alpha2, beta;
    double value;
    const void *a_ptr, *b_ptr;
    void *c_ptr;
} udnn_tensor_problem;

/* Batch normalization over n, c, spatial... tensors (rank 4 or 5). The
 * param tensor describes scale, bias and every mean/variance buffer:
 * 1 x c x 1... (SPATIAL, SPATIAL_PERSISTENT) or 1 x c x spatial...
 * (PER_ACTIVATION), of type param.dtype (FLOAT for HALF/BFLOAT16 data).
 *  BN_FWD_TRAIN: y = alpha*(scale*(x-mean)*inv_std + bias) + beta*y with the
 *    batch's mean and biased variance, inv_std = 1/sqrt(var + epsilon);
 *    running_mean/var (when set) become (1-f)*old + f*batch with
 *    f = exp_avg_factor and the variance unbiased (m/(m-1)); save_mean and
 *    save_inv_std (when set) receive mean and inv_std.
 *  BN_FWD_INFER: the same with est_mean/est_var in place of the batch's.
 *  BN_BWD: dx = alpha*grad_x + beta*dx; dscale/dbias = alpha_param*grad +
 *    beta_param*old; saved_mean/saved_inv_std when set, else recomputed
 *    from x with epsilon. */
typedef struct {
    udnnBatchNormMode_t mode;
    udnn_tensor x, y, dy, dx, param;
    double alpha, beta, alpha_param, beta_param;
    double epsilon, exp_avg_factor;
    const void *x_ptr, *dy_ptr, *scale_ptr, *bias_ptr;
    const void *est_mean_ptr, *est_var_ptr;         /* BN_FWD_INFER */
    const void *saved_mean_ptr, *saved_inv_std_ptr; /* BN_BWD, nullable */
    void *running_mean_ptr, *running_var_ptr;       /* BN_FWD_TRAIN, nullable */
    void *save_mean_ptr, *save_inv_std_ptr;         /* BN_FWD_TRAIN, nullable */
    void *out_ptr;                                  /* y or dx */
    void *dscale_ptr, *dbias_ptr;                   /* BN_BWD */
} udnn_bn_problem;

/* Layer and RMS norm (NORM_*: over the trailing norm_dims dims) and group
 * norm (GROUPNORM_*: over each group of c/groups channels and every spatial
 * dim). scale: x's rank, 1 in the leading dims and x's size in the
 * normalized ones (group norm: 1 x c x 1...); bias the same, nullable.
 * stats: x's size in the leading dims, 1 in the normalized ones (group
 * norm: n x groups x 1...), type scale.dtype. No blending: outputs are
 * overwritten.
 *  FWD: y = (x - mean)*inv_std*scale + bias; RMS: y = x*inv_rms*scale with
 *    inv_rms = 1/sqrt(mean(x^2) + epsilon) stored as inv_std and mean 0.
 *    save_mean/save_inv_std nullable.
 *  BWD: dx, dscale and dbias (nullable; unused by RMS) from x, dy, scale
 *    and the saved stats (saved_mean unused by RMS). */
typedef struct {
    udnnNormMode_t mode;
    int norm_dims; /* NORM_* */
    int groups;    /* GROUPNORM_* */
    double epsilon;
    udnn_tensor x, y, dy, dx, scale, stats;
    const void *x_ptr, *dy_ptr, *scale_ptr, *bias_ptr;
    const void *saved_mean_ptr, *saved_inv_std_ptr; /* BWD */
    void *out_ptr;                                  /* y or dx */
    void *save_mean_ptr, *save_inv_std_ptr;         /* FWD, nullable */
    void *dscale_ptr, *dbias_ptr;                   /* BWD */
} udnn_norm_problem;

/* Cross-channel LRN: y = x / (k + alpha/n * sum of x^2 over the channels
 * c - (n-1)/2 ... c + n/2 that exist)^beta.
 * FWD: y = blend_alpha*lrn(x) + blend_beta*y. BWD: dx = blend_alpha*grad +
 * blend_beta*dx from x, y and dy. */
typedef struct {
    unsigned n;
    double lrn_alpha, lrn_beta, lrn_k;
    udnn_tensor x, y, dy, dx;
    double alpha, beta; /* the blend */
    const void *x_ptr, *y_ptr, *dy_ptr;
    void *out_ptr; /* y or dx */
} udnn_lrn_problem;

/* Dropout. states: {uint64 key (the seed), uint64 call counter} in the
 * backend's memory. FWD draws the mask of call `counter` (see
 * backends/philox.h: the cross-backend contract), writes it to reserve
 * (one byte per element, 1 = kept, in logical row-major order), sets
 * out = in * mask / (1 - p), and increments the counter.
 * BWD: out = in * mask / (1 - p) with the mask from reserve. */
typedef struct {
    float p;
    udnn_tensor in, out; /* x and y (FWD), dy and dx (BWD); same dims */
    const void *in_ptr;
    void *out_ptr;
    void *states;
    void *reserve;
} udnn_dropout_problem;

/* c = alpha*reduce(a) + beta*c over every dim where c has size 1 and a
 * does not; a and c have the same rank. indices_ptr (nullable; MIN, MAX and
 * AMAX only) receives, per element of c, the row-major index within the
 * reduced dims of the first element that gave the result, as
 * indices_type. */
typedef struct {
    udnnReduceTensorOp_t op;
    udnnDataType_t compute_type;
    udnnNanPropagation_t nan_opt;
    udnnIndicesType_t indices_type;
    udnn_tensor a, c;
    double alpha, beta;
    const void *a_ptr;
    void *c_ptr;
    void *indices_ptr;
} udnn_reduce_problem;

/* c[i] = alpha * op(a[i]) x op(b[i]) + beta * c[i] for i < batch. Tensors
 * are 3-D (batch, rows, cols); core widens 2-D ones to batch 1 and gives a
 * broadcast operand (batch 1 against a larger batch) batch stride 0.
 * op(a) is m x k, op(b) is k x n, c is m x n; op(x) is x or its transpose
 * (trans_x != 0). HALF and BFLOAT16 accumulate in at least float. */
typedef struct {
    int trans_a, trans_b;
    int64_t batch, m, n, k;
    udnn_tensor a, b, c;
    double alpha, beta;
    const void *a_ptr, *b_ptr;
    void *c_ptr;
} udnn_matmul_problem;

/* The services core lends a backend. */
typedef struct {
    uint32_t abi_version;
    uint32_t struct_size;
    /* Records the message udnnGetLastErrorString will return. */
    void (*set_error)(const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 1, 2)))
#endif
        ;
    /* Logs at UDNN_LOG level `level` (0 error, 1 warn, 2 info, 3 api,
     * 4 dispatch) when that level is enabled. */
    void (*log)(int level, const char *fmt, ...)
#if defined(__GNUC__)
        __attribute__((format(printf, 2, 3)))
#endif
        ;
} udnn_host_api;

/* What udnn_solver.deterministic promises. REFERENCE_BITS: the bits of
 * cpu/ref on every backend, each output element computed by the shared
 * arithmetic of backends/ref (the CPU reference's own solvers, and a GPU
 * backend's solvers built from the same headers); UDNN_DETERMINISTIC=
 * reference enables only these. */
enum {
    UDNN_SOLVER_NONDETERMINISTIC = 0,
    UDNN_SOLVER_DETERMINISTIC = 1, /* the same bits on every run */
    UDNN_SOLVER_REFERENCE_BITS = 2
};

/* One algorithm of one op. `problem` points to the struct its op takes:
 * udnn_conv_problem for the CONV_FWD/BWD_DATA/BWD_FILTER/BIAS_ACT ops,
 * udnn_conv_bias_problem, udnn_act_problem, udnn_pool_problem,
 * udnn_softmax_problem, udnn_tensor_problem (SET/SCALE/ADD/TRANSFORM/OP
 * tensor), udnn_bn_problem, udnn_norm_problem (NORM_* and GROUPNORM_*),
 * udnn_lrn_problem, udnn_dropout_problem, udnn_reduce_problem,
 * udnn_matmul_problem. */
typedef struct {
    const char *name; /* stable: used by UDNN_DISABLE_SOLVERS and perfdb */
    udnn_op op;
    int algo;          /* the public algo value it serves, or -1 */
    int deterministic; /* UDNN_SOLVER_* above */
    /* Returns 1 when the solver can run the problem, else 0 and a static
     * reason in *why. NULL means always applicable. */
    int (*applicable)(const void *problem, const char **why);
    /* Workspace bytes; NULL means none. */
    size_t (*workspace)(const void *problem);
    /* Runs the problem. ctx is the backend's context. */
    udnnStatus_t (*run)(void *ctx, const void *problem, void *workspace,
                        size_t workspace_bytes);
} udnn_solver;

/* A backend. Slots marked optional may be NULL. New slots are only ever
 * added at the end, and core reads a slot only when struct_size covers it. */
typedef struct {
    uint32_t abi_version; /* UDNN_BACKEND_ABI_VERSION */
    uint32_t struct_size; /* sizeof(udnn_backend) as the backend was built */
    const char *name;     /* "cpu", "cuda", "hip" */
    udnnBackend_t kind;

    int (*device_count)(void);
    udnnStatus_t (*context_create)(int device, void **ctx);
    void (*context_destroy)(void *ctx);
    udnnStatus_t (*alloc)(void *ctx, void **ptr, size_t bytes);
    udnnStatus_t (*free)(void *ctx, void *ptr);
    udnnStatus_t (*memcpy)(void *ctx, void *dst, const void *src, size_t bytes,
                           udnnMemcpyKind_t kind);
    udnnStatus_t (*memset)(void *ctx, void *ptr, int value, size_t bytes);
    udnnStatus_t (*set_stream)(void *ctx, void *stream);
    udnnStatus_t (*get_stream)(void *ctx, void **stream);
    udnnStatus_t (*synchronize)(void *ctx);
    /* optional: a name of the device for logs and the tuning database */
    const char *(*device_name)(void *ctx);

    const udnn_solver *const *solvers; /* fastest first */
    size_t solver_count;
} udnn_backend;

/* The one symbol a backend module exports. */
typedef const udnn_backend *(*udnn_backend_entry_fn)(const udnn_host_api *host);

#ifdef __cplusplus
}
#endif

#endif /* UDNN_BACKEND_H */
