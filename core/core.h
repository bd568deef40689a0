/*
 * core.h - udnn's core internals, shared by the files of core/ only.
 * Backends never include this file; they see backends/backend.h.
 */
#ifndef UDNN_CORE_H
#define UDNN_CORE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"
#include "udnn.h"

#define UDNN_INTERNAL __attribute__((visibility("hidden")))

/* ---- descriptors -------------------------------------------------------- */

struct udnnTensorStruct {
    int is_set;
    udnnDataType_t dtype;
    int nb_dims;
    int dims[UDNN_DIM_MAX];
    int strides[UDNN_DIM_MAX];
};

struct udnnFilterStruct {
    int is_set;
    udnnDataType_t dtype;
    udnnTensorFormat_t format;
    int nb_dims;
    int dims[UDNN_DIM_MAX]; /* k, c, spatial... whatever the format */
};

struct udnnConvolutionStruct {
    int is_set;
    int nb_spatial; /* 2 or 3 */
    int pad[3], stride[3], dilation[3];
    udnnConvolutionMode_t mode;
    udnnDataType_t compute_type;
    int groups;
    udnnMathType_t math_type;
};

struct udnnActivationStruct {
    udnn_act_params params;
};

struct udnnPoolingStruct {
    int is_set;
    udnnPoolingMode_t mode;
    udnnNanPropagation_t nan_opt;
    int nb_spatial; /* 2 or 3 */
    int window[3], pad[3], stride[3];
};

struct udnnOpTensorStruct {
    int is_set;
    udnnOpTensorOp_t op;
    udnnDataType_t compute_type;
    udnnNanPropagation_t nan_opt;
};

struct udnnReduceTensorStruct {
    int is_set;
    udnnReduceTensorOp_t op;
    udnnDataType_t compute_type;
    udnnNanPropagation_t nan_opt;
    udnnReduceTensorIndices_t indices;
    udnnIndicesType_t indices_type;
};

struct udnnLRNStruct {
    unsigned n;
    double alpha, beta, k;
};

struct udnnDropoutStruct {
    int is_set;
    udnnHandle_t handle;
    float dropout;
    void *states;
    size_t state_bytes;
    unsigned long long seed;
};

/* ---- the handle ---------------------------------------------------------- */

struct udnnContext {
    const udnn_backend *backend;
    void *ctx; /* the backend's context */
    int device;
    udnnStream_t stream;
};

/* ---- errors and logging (error.c, log.c) --------------------------------- */

/* Records "message" as this thread's last error and returns status. The
 * message names the function, the argument and the reason. */
UDNN_INTERNAL udnnStatus_t udnn_fail(udnnStatus_t status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
UDNN_INTERNAL void udnn_set_error_v(const char *fmt, va_list ap);
UDNN_INTERNAL void udnn_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

enum { UDNN_LOG_ERROR = 0, UDNN_LOG_WARN, UDNN_LOG_INFO, UDNN_LOG_API, UDNN_LOG_DISPATCH };

/* 1 when UDNN_LOG enables `level` (levels are cumulative). */
UDNN_INTERNAL int udnn_log_enabled(int level);
UDNN_INTERNAL void udnn_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
UDNN_INTERNAL void udnn_log_v(int level, const char *fmt, va_list ap);

/* Writes a short description of a descriptor ("f32[2,3,5,5]:[75,25,5,1]",
 * "NULL", "unset") into buf and returns buf; for API logs. */
UDNN_INTERNAL const char *udnn_tensor_str(const udnnTensorDescriptor_t d, char *buf, size_t n);
UDNN_INTERNAL const char *udnn_filter_str(const udnnFilterDescriptor_t d, char *buf, size_t n);
UDNN_INTERNAL const char *udnn_dtype_name(udnnDataType_t t);

/* The data type of a descriptor that may be NULL or unset, FLOAT then:
 * how API logs read alpha/beta before validation. */
UDNN_INTERNAL udnnDataType_t udnn_log_scalar_type(const udnnTensorDescriptor_t d);

/* Formats a scalar argument for API logs: *(float*) or *(double*) by type. */
UDNN_INTERNAL const char *udnn_scalar_str(const void *p, udnnDataType_t t, char *buf, size_t n);

/* Buffer sizes for the formatting helpers above. */
#define UDNN_STR_DESC 160
#define UDNN_STR_SCALAR 32

/* The host services core hands backends. */
UDNN_INTERNAL const udnn_host_api *udnn_host_services(void);

/* ---- backends (backends/loader.c) ---------------------------------------- */

/* The backend of a kind, loading its plugin on first use; NULL when it
 * cannot be had, and then *why (when why is not NULL) says why, naming
 * the files tried. Sets no error message: callers decide whether a missing
 * backend is a failure. */
UDNN_INTERNAL const udnn_backend *udnn_backend_get(udnnBackend_t kind, const char **why);
/* The built-in CPU backend (cpu/backend.c). */
UDNN_INTERNAL const udnn_backend *udnn_cpu_backend(const udnn_host_api *host);

/* ---- validation helpers (validate.c) ------------------------------------- */

/* Each returns SUCCESS or fails with a message "fn: arg ...". */
UDNN_INTERNAL udnnStatus_t udnn_check_handle(const char *fn, udnnHandle_t h);
UDNN_INTERNAL udnnStatus_t udnn_check_ptr(const char *fn, const char *arg, const void *p);
UDNN_INTERNAL udnnStatus_t udnn_check_tensor(const char *fn, const char *arg,
                                             const udnnTensorDescriptor_t d);
UDNN_INTERNAL udnnStatus_t udnn_check_filter(const char *fn, const char *arg,
                                             const udnnFilterDescriptor_t d);
/* The descriptor's dtype is one of FLOAT, DOUBLE, HALF, BFLOAT16. */
UDNN_INTERNAL udnnStatus_t udnn_check_float_type(const char *fn, const char *arg,
                                                 const udnnTensorDescriptor_t d);
/* Both tensors have the same dims (strides may differ). */
UDNN_INTERNAL udnnStatus_t udnn_check_same_dims(const char *fn, const char *arg_a,
                                                const udnnTensorDescriptor_t a,
                                                const char *arg_b,
                                                const udnnTensorDescriptor_t b);
/* Both tensors have the same data type. */
UDNN_INTERNAL udnnStatus_t udnn_check_same_type(const char *fn, const char *arg_a,
                                                const udnnTensorDescriptor_t a,
                                                const char *arg_b,
                                                const udnnTensorDescriptor_t b);
/* The tensor's rank is in [lo, hi]. */
UDNN_INTERNAL udnnStatus_t udnn_check_rank(const char *fn, const char *arg,
                                           const udnnTensorDescriptor_t d, int lo, int hi);

/* An output buffer may be one of the inputs only element for element:
 * succeeds when out != in, or when both descriptors have one type, dims
 * and strides. */
UDNN_INTERNAL udnnStatus_t udnn_check_in_place(const char *fn, const char *out_arg,
                                               const char *out_desc_arg,
                                               const udnnTensorDescriptor_t out_desc,
                                               const void *out, const char *in_arg,
                                               const char *in_desc_arg,
                                               const udnnTensorDescriptor_t in_desc,
                                               const void *in);
/* For ops that cannot run in place (an output element depends on
 * inputs other threads overwrite): out is not in's buffer. */
UDNN_INTERNAL udnnStatus_t udnn_check_not_in_place(const char *fn, const char *out_arg,
                                                   const void *out, const char *in_arg,
                                                   const void *in);
/* epsilon is finite and >= min (NaN fails). */
UDNN_INTERNAL udnnStatus_t udnn_check_epsilon(const char *fn, double epsilon, double min);
/* Buffers that only make sense together: both NULL or both given. */
UDNN_INTERNAL udnnStatus_t udnn_check_pair(const char *fn, const char *a_arg, const void *a,
                                           const char *b_arg, const void *b);

/* The type alpha/beta are read as for data of type t. */
UDNN_INTERNAL double udnn_read_scalar(const void *p, udnnDataType_t t);

/* Size in bytes of one element; 0 for an unknown type. */
UDNN_INTERNAL size_t udnn_dtype_size(udnnDataType_t t);

/* Copies a descriptor into a backend tensor, as it is. */
UDNN_INTERNAL void udnn_tensor_from_desc(const udnnTensorDescriptor_t d, udnn_tensor *t);
/* As udnn_tensor_from_desc, widened to n, c, d, h, w (4-D gets d = 1). */
UDNN_INTERNAL void udnn_spatial_tensor_from_desc(const udnnTensorDescriptor_t d,
                                                 udnn_tensor *t);
/* A filter as a backend tensor k, c, t, r, s with the strides of its format. */
UDNN_INTERNAL void udnn_spatial_tensor_from_filter(const udnnFilterDescriptor_t f,
                                                   udnn_tensor *t);

/* Strides of a packed tensor with dims in n, c, rest order laid out as fmt. */
UDNN_INTERNAL void udnn_packed_strides(udnnTensorFormat_t fmt, int nb_dims, const int dims[],
                                       int64_t strides[]);

/* ---- convolution geometry (conv_desc.c) ----------------------------------- */

/* Validates x, w and convDesc against each other and gives the output dims
 * (n, k, spatial...). */
UDNN_INTERNAL udnnStatus_t udnn_conv_output_dims(const char *fn, const char *x_arg,
                                                 const udnnTensorDescriptor_t x, const char *w_arg,
                                                 const udnnFilterDescriptor_t w,
                                                 const udnnConvolutionDescriptor_t conv,
                                                 int out[UDNN_DIM_MAX]);

/* ---- dispatch (dispatch.c) ----------------------------------------------- */

/* Runs `problem` for op on the handle's backend. algo >= 0 asks for the
 * solver serving that public algo value; algo < 0 takes the first
 * applicable solver that needs no more workspace than given. */
UDNN_INTERNAL udnnStatus_t udnn_dispatch(udnnHandle_t h, const char *fn, udnn_op op, int algo,
                                         const void *problem, void *workspace,
                                         size_t workspace_bytes);

/* The solver that serves algo for op on the handle's backend, with its
 * applicability; NULL when the backend has none, *disabled 1 when it has
 * some that UDNN_DISABLE_SOLVERS or UDNN_DETERMINISTIC disabled. */
UDNN_INTERNAL const udnn_solver *udnn_find_solver(udnnHandle_t h, udnn_op op, int algo,
                                                 int *disabled);

/* The workspace of the solver udnn_dispatch picks for algo -1 when given
 * that much: the first enabled and applicable one (0 when none). */
UDNN_INTERNAL size_t udnn_dispatch_workspace(udnnHandle_t h, udnn_op op, const void *problem);

/* 1 when the solver is allowed by UDNN_DISABLE_SOLVERS and
 * UDNN_DETERMINISTIC. */
UDNN_INTERNAL int udnn_solver_enabled(const udnn_solver *s);

/* One entry of an algorithm ranking (conv queries). */
typedef struct {
    int algo;
    udnnStatus_t status;
    float time_ms;
    size_t memory;
    int deterministic;
} udnn_algo_rank;

/* Ranks every algorithm value in [0, algo_count) for op: the backend's
 * applicable solvers in table order first, then the rest with their
 * status. When measure is set, applicable ones are run (with the given
 * buffers already in problem, and workspace) and sorted by time. Returns
 * the number of entries written (at most max). */
UDNN_INTERNAL int udnn_rank_algos(udnnHandle_t h, udnn_op op, int algo_count, void *problem,
                                  int measure, void *workspace, size_t workspace_bytes,
                                  udnn_algo_rank *out, int max);

/* ---- API logging --------------------------------------------------------- */

/* Logs "fn(args...)" at level api when enabled. */
#define UDNN_LOG_API_CALL(...)                                     \
    do {                                                           \
        if (udnn_log_enabled(UDNN_LOG_API)) udnn_log(UDNN_LOG_API, __VA_ARGS__); \
    } while (0)

/* Returns from the calling function when a check fails. */
#define UDNN_TRY(expr)                                 \
    do {                                               \
        udnnStatus_t try_status_ = (expr);             \
        if (try_status_ != UDNN_STATUS_SUCCESS) return try_status_; \
    } while (0)

/* ---- reproducer lines and UDNN_VERIFY (repro.c, verify.c) ---------------- */

/* Room for one reproducer line. */
#define UDNN_STR_REPRO 1024

/* Writes into buf the udnn-bench command line that runs `problem` (of op,
 * with algo; -1 for none) on the named backend; returns its length. */
UDNN_INTERNAL size_t udnn_repro_line(const char *backend, udnn_op op, int algo,
                                     const void *problem, char *buf, size_t size);
/* Logs that line at level api: "fn: reproduce with: udnn-bench ...". */
UDNN_INTERNAL void udnn_log_repro(udnnHandle_t h, const char *fn, udnn_op op, int algo,
                                  const void *problem);

/* Host copies of an op's operands, taken before a verified run. */
typedef struct udnn_verify_snapshot udnn_verify_snapshot;
/* 1 when UDNN_VERIFY asks for it and the handle's backend is not the CPU. */
UDNN_INTERNAL int udnn_verify_wanted(udnnHandle_t h);
/* Copies what the op reads to the host; NULL (and a warning logged) when
 * the op cannot be verified. */
UDNN_INTERNAL udnn_verify_snapshot *udnn_verify_begin(udnnHandle_t h, const char *fn, udnn_op op,
                                                      const void *problem);
/* After a successful run: reruns the op on the CPU reference and compares;
 * logs a mismatch (UDNN_VERIFY=1) or fails with EXECUTION_FAILED
 * (UDNN_VERIFY=abort). Frees the snapshot; leaves the last error alone
 * when all is well. */
UDNN_INTERNAL udnnStatus_t udnn_verify_end(udnnHandle_t h, const char *fn, udnn_op op, int algo,
                                           const void *problem, udnn_verify_snapshot *s);
UDNN_INTERNAL void udnn_verify_discard(udnn_verify_snapshot *s);

#endif /* UDNN_CORE_H */
