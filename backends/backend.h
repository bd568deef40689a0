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

/* One algorithm of one op. `problem` points to the struct its op takes:
 * udnn_conv_problem for the CONV_FWD/BWD_DATA/BWD_FILTER/BIAS_ACT ops,
 * udnn_conv_bias_problem, udnn_act_problem, udnn_pool_problem,
 * udnn_softmax_problem, udnn_tensor_problem. */
typedef struct {
    const char *name; /* stable: used by UDNN_DISABLE_SOLVERS and perfdb */
    udnn_op op;
    int algo;          /* the public algo value it serves, or -1 */
    int deterministic; /* same bits on every run */
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
