/*
 * udnn.h - the public API of udnn, a portable library of deep-neural-network
 * primitives with CUDA, HIP and CPU backends chosen at run time.
 *
 * The API has the shape of the cuDNN descriptor API: each function named
 * udnn<Name> takes the same parameters, in the same order, with the same
 * meaning, as the cuDNN function <Name>. Where a comment below says nothing
 * about a parameter, it behaves as its cuDNN namesake.
 *
 * Conventions shared by every call:
 *  - Scalars alpha/beta are host pointers: to float for FLOAT, HALF and
 *    BFLOAT16 data, to double for DOUBLE data. Outputs blend as
 *    y = alpha * op(...) + beta * y; when *beta == 0 the old content of y is
 *    never read (it may hold NaN).
 *  - Memory passed to an op belongs to the handle's backend: device memory
 *    for a GPU backend (see udnnMalloc), host memory for the CPU backend.
 *  - Every failing call returns a status other than UDNN_STATUS_SUCCESS and
 *    leaves a one-line message, naming the function, the argument and the
 *    reason, for udnnGetLastErrorString. No call aborts, exits or prints.
 */
#ifndef UDNN_H
#define UDNN_H

#include <stddef.h>
#include <stdint.h>

#include "udnn_version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define UDNN_API __attribute__((visibility("default")))
#else
#define UDNN_API
#endif

/* ------------------------------------------------------------------------ */
/* Status codes                                                              */
/* ------------------------------------------------------------------------ */

/* One table makes the enum, udnnGetErrorString's strings and the names:
 * X(NAME, value, description). The values are cuDNN's. */
#define UDNN_STATUS_MAP(X)                                                        \
    X(SUCCESS, 0, "success")                                                      \
    X(NOT_INITIALIZED, 1, "the library or handle is not initialized")             \
    X(ALLOC_FAILED, 2, "a memory allocation failed")                              \
    X(BAD_PARAM, 3, "an argument is invalid")                                     \
    X(INTERNAL_ERROR, 4, "an internal error occurred")                            \
    X(INVALID_VALUE, 5, "a value is out of range")                                \
    X(ARCH_MISMATCH, 6, "the device lacks a required feature")                    \
    X(MAPPING_ERROR, 7, "a memory mapping failed")                                \
    X(EXECUTION_FAILED, 8, "the backend failed to execute the operation")         \
    X(NOT_SUPPORTED, 9, "the operation or configuration is not supported")        \
    X(RUNTIME_PREREQUISITE_MISSING, 11, "a runtime library or device is missing") \
    X(VERSION_MISMATCH, 14, "a component has an incompatible version")

typedef enum {
#define UDNN_STATUS_ENUM_(name, value, text) UDNN_STATUS_##name = value,
    UDNN_STATUS_MAP(UDNN_STATUS_ENUM_)
#undef UDNN_STATUS_ENUM_
} udnnStatus_t;

/* ------------------------------------------------------------------------ */
/* Enumerations (values as cuDNN's, udnn's own additions at 100 and up)      */
/* ------------------------------------------------------------------------ */

typedef enum {
    UDNN_DATA_FLOAT = 0,
    UDNN_DATA_DOUBLE = 1,
    UDNN_DATA_HALF = 2,
    UDNN_DATA_INT8 = 3,
    UDNN_DATA_INT32 = 4,
    UDNN_DATA_BFLOAT16 = 9,
    UDNN_DATA_INT64 = 10
} udnnDataType_t;

typedef enum {
    UDNN_TENSOR_NCHW = 0, /* row-major n, c, h, w (n, c, d, h, w for 5-D) */
    UDNN_TENSOR_NHWC = 1  /* channels last: n, h, w, c (n, d, h, w, c) */
} udnnTensorFormat_t;

typedef enum { UDNN_NOT_PROPAGATE_NAN = 0, UDNN_PROPAGATE_NAN = 1 } udnnNanPropagation_t;

typedef enum { UDNN_NON_DETERMINISTIC = 0, UDNN_DETERMINISTIC = 1 } udnnDeterminism_t;

typedef enum {
    UDNN_DEFAULT_MATH = 0,
    UDNN_TENSOR_OP_MATH = 1,
    UDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2,
    UDNN_FMA_MATH = 3
} udnnMathType_t;

typedef enum { UDNN_CONVOLUTION = 0, UDNN_CROSS_CORRELATION = 1 } udnnConvolutionMode_t;

typedef enum {
    UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0,
    UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1,
    UDNN_CONVOLUTION_FWD_ALGO_GEMM = 2,
    UDNN_CONVOLUTION_FWD_ALGO_DIRECT = 3,
    UDNN_CONVOLUTION_FWD_ALGO_FFT = 4,
    UDNN_CONVOLUTION_FWD_ALGO_FFT_TILING = 5,
    UDNN_CONVOLUTION_FWD_ALGO_WINOGRAD = 6,
    UDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED = 7,
    UDNN_CONVOLUTION_FWD_ALGO_COUNT = 8
} udnnConvolutionFwdAlgo_t;

typedef enum {
    UDNN_CONVOLUTION_BWD_DATA_ALGO_0 = 0,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_1 = 1,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_FFT = 2,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING = 3,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD = 4,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED = 5,
    UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT = 6
} udnnConvolutionBwdDataAlgo_t;

typedef enum {
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_0 = 0,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_1 = 1,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT = 2,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_3 = 3,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD = 4,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED = 5,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT_TILING = 6,
    UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT = 7
} udnnConvolutionBwdFilterAlgo_t;

typedef enum {
    UDNN_ACTIVATION_SIGMOID = 0,
    UDNN_ACTIVATION_RELU = 1,
    UDNN_ACTIVATION_TANH = 2,
    UDNN_ACTIVATION_CLIPPED_RELU = 3, /* min(max(x, 0), coef) */
    UDNN_ACTIVATION_ELU = 4,          /* x > 0 ? x : coef * (exp(x) - 1) */
    UDNN_ACTIVATION_IDENTITY = 5,
    UDNN_ACTIVATION_SWISH = 6, /* x * sigmoid(swish_beta * x) */
    /* udnn's own modes */
    UDNN_ACTIVATION_LEAKY_RELU = 100, /* x > 0 ? x : coef * x */
    UDNN_ACTIVATION_GELU = 101,       /* x * Phi(x), Phi the normal CDF (erf form) */
    UDNN_ACTIVATION_GELU_TANH = 102,  /* the tanh approximation of GELU */
    UDNN_ACTIVATION_SOFTPLUS = 103,   /* log(1 + exp(x)) */
    UDNN_ACTIVATION_MISH = 104,       /* x * tanh(softplus(x)) */
    UDNN_ACTIVATION_HARDSWISH = 105   /* x * min(max(x + 3, 0), 6) / 6 */
} udnnActivationMode_t;

typedef enum {
    UDNN_POOLING_MAX = 0,
    UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING = 1,
    UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING = 2,
    UDNN_POOLING_MAX_DETERMINISTIC = 3
} udnnPoolingMode_t;

typedef enum {
    UDNN_SOFTMAX_FAST = 0,     /* exp(x) / sum(exp(x)), no max subtraction */
    UDNN_SOFTMAX_ACCURATE = 1, /* the max is subtracted first */
    UDNN_SOFTMAX_LOG = 2       /* log of the accurate softmax */
} udnnSoftmaxAlgorithm_t;

typedef enum {
    UDNN_SOFTMAX_MODE_INSTANCE = 0, /* over C, H, W for each n */
    UDNN_SOFTMAX_MODE_CHANNEL = 1   /* over C for each n, h, w */
} udnnSoftmaxMode_t;

typedef enum {
    UDNN_BATCHNORM_PER_ACTIVATION = 0,
    UDNN_BATCHNORM_SPATIAL = 1,
    UDNN_BATCHNORM_SPATIAL_PERSISTENT = 2
} udnnBatchNormMode_t;

/* The smallest epsilon the batch normalization calls accept. */
#define UDNN_BN_MIN_EPSILON 0.0

typedef enum { UDNN_NORM_LAYER = 0, UDNN_NORM_RMS = 1 } udnnNormMode_t;

typedef enum { UDNN_LRN_CROSS_CHANNEL_DIM1 = 0 } udnnLRNMode_t;

/* Bounds of the LRN descriptor's parameters. */
#define UDNN_LRN_MIN_N 1
#define UDNN_LRN_MAX_N 16
#define UDNN_LRN_MIN_K 1e-5
#define UDNN_LRN_MIN_BETA 0.01

typedef enum {
    UDNN_OP_TENSOR_ADD = 0,
    UDNN_OP_TENSOR_MUL = 1,
    UDNN_OP_TENSOR_MIN = 2,
    UDNN_OP_TENSOR_MAX = 3,
    UDNN_OP_TENSOR_SQRT = 4, /* unary: uses A only */
    UDNN_OP_TENSOR_NOT = 5   /* unary: 1 - A */
} udnnOpTensorOp_t;

typedef enum {
    UDNN_REDUCE_TENSOR_ADD = 0,
    UDNN_REDUCE_TENSOR_MUL = 1,
    UDNN_REDUCE_TENSOR_MIN = 2,
    UDNN_REDUCE_TENSOR_MAX = 3,
    UDNN_REDUCE_TENSOR_AMAX = 4,
    UDNN_REDUCE_TENSOR_AVG = 5,
    UDNN_REDUCE_TENSOR_NORM1 = 6,
    UDNN_REDUCE_TENSOR_NORM2 = 7,
    UDNN_REDUCE_TENSOR_MUL_NO_ZEROS = 8
} udnnReduceTensorOp_t;

typedef enum {
    UDNN_REDUCE_TENSOR_NO_INDICES = 0,
    UDNN_REDUCE_TENSOR_FLATTENED_INDICES = 1
} udnnReduceTensorIndices_t;

typedef enum {
    UDNN_32BIT_INDICES = 0,
    UDNN_64BIT_INDICES = 1,
    UDNN_16BIT_INDICES = 2,
    UDNN_8BIT_INDICES = 3
} udnnIndicesType_t;

/* udnn's own: which backend a handle runs on. */
typedef enum {
    UDNN_BACKEND_AUTO = 0,
    UDNN_BACKEND_CPU,
    UDNN_BACKEND_CUDA,
    UDNN_BACKEND_HIP
} udnnBackend_t;

typedef enum {
    UDNN_MEMCPY_HOST_TO_DEVICE,
    UDNN_MEMCPY_DEVICE_TO_HOST,
    UDNN_MEMCPY_DEVICE_TO_DEVICE
} udnnMemcpyKind_t;

/* ------------------------------------------------------------------------ */
/* Opaque types                                                              */
/* ------------------------------------------------------------------------ */

typedef struct udnnContext *udnnHandle_t;
typedef struct udnnTensorStruct *udnnTensorDescriptor_t;
typedef struct udnnFilterStruct *udnnFilterDescriptor_t;
typedef struct udnnConvolutionStruct *udnnConvolutionDescriptor_t;
typedef struct udnnActivationStruct *udnnActivationDescriptor_t;
typedef struct udnnPoolingStruct *udnnPoolingDescriptor_t;
typedef struct udnnOpTensorStruct *udnnOpTensorDescriptor_t;
typedef struct udnnReduceTensorStruct *udnnReduceTensorDescriptor_t;
typedef struct udnnLRNStruct *udnnLRNDescriptor_t;
typedef struct udnnDropoutStruct *udnnDropoutDescriptor_t;

/* A stream of the handle's backend (cudaStream_t for CUDA, hipStream_t for
 * HIP); the CPU backend has none and keeps NULL. */
typedef void *udnnStream_t;

/* The largest tensor rank a descriptor accepts. */
#define UDNN_DIM_MAX 8

/* Results of the convolution algorithm queries, best first. */
typedef struct {
    udnnConvolutionFwdAlgo_t algo;
    udnnStatus_t status; /* SUCCESS when the algorithm can run this problem */
    float time;          /* milliseconds: measured by Find, -1 from _v7 */
    size_t memory;       /* workspace bytes */
    udnnDeterminism_t determinism;
    udnnMathType_t mathType;
    int reserved[3];
} udnnConvolutionFwdAlgoPerf_t;

typedef struct {
    udnnConvolutionBwdDataAlgo_t algo;
    udnnStatus_t status;
    float time;
    size_t memory;
    udnnDeterminism_t determinism;
    udnnMathType_t mathType;
    int reserved[3];
} udnnConvolutionBwdDataAlgoPerf_t;

typedef struct {
    udnnConvolutionBwdFilterAlgo_t algo;
    udnnStatus_t status;
    float time;
    size_t memory;
    udnnDeterminism_t determinism;
    udnnMathType_t mathType;
    int reserved[3];
} udnnConvolutionBwdFilterAlgoPerf_t;

/* ------------------------------------------------------------------------ */
/* Library, handle and errors                                                */
/* ------------------------------------------------------------------------ */

/* The library's version, UDNN_MAJOR * 10000 + UDNN_MINOR * 100 + UDNN_PATCHLEVEL. */
UDNN_API size_t udnnGetVersion(void);

/* A static, never-NULL description of a status. */
UDNN_API const char *udnnGetErrorString(udnnStatus_t status);

/* Copies into message (at most max_size bytes, always NUL-terminated when
 * max_size > 0) the detail of the last failure of a udnn call made by this
 * thread, or "" when none failed yet. A successful call does not clear it. */
UDNN_API void udnnGetLastErrorString(char *message, size_t max_size);

/* Creates a handle on the backend named by the environment variable
 * UDNN_BACKEND (cpu, cuda, hip), else on the first of CUDA, HIP, CPU that has
 * a device; device 0. A named backend that is missing is an error
 * (RUNTIME_PREREQUISITE_MISSING), never a silent fallback. */
UDNN_API udnnStatus_t udnnCreate(udnnHandle_t *handle);

/* Creates a handle on the given backend and device index. UDNN_BACKEND_AUTO
 * chooses as udnnCreate does. */
UDNN_API udnnStatus_t udnnCreateWithBackend(udnnHandle_t *handle, udnnBackend_t backend,
                                            int device);

UDNN_API udnnStatus_t udnnDestroy(udnnHandle_t handle);

/* The backend the handle runs on (never UDNN_BACKEND_AUTO). */
UDNN_API udnnStatus_t udnnGetBackend(udnnHandle_t handle, udnnBackend_t *backend);

/* How many devices the backend has: 0 when its plugin or runtime is missing
 * (which is not an error). UDNN_BACKEND_CPU always has 1. */
UDNN_API udnnStatus_t udnnGetDeviceCount(udnnBackend_t backend, int *count);

/* Every op and copy of the handle goes to this stream. The CPU backend
 * accepts only NULL. */
UDNN_API udnnStatus_t udnnSetStream(udnnHandle_t handle, udnnStream_t streamId);
UDNN_API udnnStatus_t udnnGetStream(udnnHandle_t handle, udnnStream_t *streamId);

/* Memory of the handle's backend: device memory for a GPU backend, host
 * memory for the CPU backend. udnnMalloc of 0 bytes gives NULL; udnnFree of
 * NULL does nothing. */
UDNN_API udnnStatus_t udnnMalloc(udnnHandle_t handle, void **ptr, size_t bytes);
UDNN_API udnnStatus_t udnnFree(udnnHandle_t handle, void *ptr);

/* Copies bytes between host and the handle's memory; returns when the copy
 * is complete. On the CPU backend every kind is a plain copy. */
UDNN_API udnnStatus_t udnnMemcpy(udnnHandle_t handle, void *dst, const void *src,
                                 size_t bytes, udnnMemcpyKind_t kind);

/* Sets bytes of the handle's memory to (unsigned char)value, in the
 * handle's stream. */
UDNN_API udnnStatus_t udnnMemset(udnnHandle_t handle, void *ptr, int value, size_t bytes);

/* Waits until all work queued on the handle's stream is done. */
UDNN_API udnnStatus_t udnnSynchronize(udnnHandle_t handle);

/* ------------------------------------------------------------------------ */
/* Tensor and filter descriptors                                             */
/* ------------------------------------------------------------------------ */

/* A tensor descriptor: 2 to UDNN_DIM_MAX dimensions, each >= 1, with strides
 * >= 1 (a dimension of size 1 may have any positive stride). Two elements
 * never share an address. A new descriptor is unset: using it is BAD_PARAM. */
UDNN_API udnnStatus_t udnnCreateTensorDescriptor(udnnTensorDescriptor_t *tensorDesc);
UDNN_API udnnStatus_t udnnDestroyTensorDescriptor(udnnTensorDescriptor_t tensorDesc);

/* A fully packed 4-D tensor in NCHW or NHWC order. */
UDNN_API udnnStatus_t udnnSetTensor4dDescriptor(udnnTensorDescriptor_t tensorDesc,
                                                udnnTensorFormat_t format,
                                                udnnDataType_t dataType, int n, int c, int h,
                                                int w);

/* A 4-D tensor with explicit strides, in elements. */
UDNN_API udnnStatus_t udnnSetTensor4dDescriptorEx(udnnTensorDescriptor_t tensorDesc,
                                                  udnnDataType_t dataType, int n, int c, int h,
                                                  int w, int nStride, int cStride, int hStride,
                                                  int wStride);

/* Reads back a 4-D descriptor; any output pointer may be NULL. */
UDNN_API udnnStatus_t udnnGetTensor4dDescriptor(const udnnTensorDescriptor_t tensorDesc,
                                                udnnDataType_t *dataType, int *n, int *c,
                                                int *h, int *w, int *nStride, int *cStride,
                                                int *hStride, int *wStride);

/* nbDims dimensions (2..8) in n, c, (d,) h, w order, with explicit strides. */
UDNN_API udnnStatus_t udnnSetTensorNdDescriptor(udnnTensorDescriptor_t tensorDesc,
                                                udnnDataType_t dataType, int nbDims,
                                                const int dimA[], const int strideA[]);

/* nbDims dimensions in n, c, ... order, fully packed in the given format
 * (NHWC puts c innermost). */
UDNN_API udnnStatus_t udnnSetTensorNdDescriptorEx(udnnTensorDescriptor_t tensorDesc,
                                                  udnnTensorFormat_t format,
                                                  udnnDataType_t dataType, int nbDims,
                                                  const int dimA[]);

/* Reads back up to nbDimsRequested dimensions and strides; *nbDims gets the
 * true rank. */
UDNN_API udnnStatus_t udnnGetTensorNdDescriptor(const udnnTensorDescriptor_t tensorDesc,
                                                int nbDimsRequested, udnnDataType_t *dataType,
                                                int *nbDims, int dimA[], int strideA[]);

/* Bytes spanned by the tensor: (1 + sum of (dim - 1) * stride) elements. */
UDNN_API udnnStatus_t udnnGetTensorSizeInBytes(const udnnTensorDescriptor_t tensorDesc,
                                               size_t *size);

/* Filters: k output channels, c input channels per group, then the spatial
 * extent. NCHW format is k, c, (d,) h, w; NHWC is k, (d,) h, w, c. */
UDNN_API udnnStatus_t udnnCreateFilterDescriptor(udnnFilterDescriptor_t *filterDesc);
UDNN_API udnnStatus_t udnnDestroyFilterDescriptor(udnnFilterDescriptor_t filterDesc);
UDNN_API udnnStatus_t udnnSetFilter4dDescriptor(udnnFilterDescriptor_t filterDesc,
                                                udnnDataType_t dataType,
                                                udnnTensorFormat_t format, int k, int c, int h,
                                                int w);
UDNN_API udnnStatus_t udnnGetFilter4dDescriptor(const udnnFilterDescriptor_t filterDesc,
                                                udnnDataType_t *dataType,
                                                udnnTensorFormat_t *format, int *k, int *c,
                                                int *h, int *w);
/* nbDims is 3 to UDNN_DIM_MAX; dims are given k, c, ... whatever the format. */
UDNN_API udnnStatus_t udnnSetFilterNdDescriptor(udnnFilterDescriptor_t filterDesc,
                                                udnnDataType_t dataType,
                                                udnnTensorFormat_t format, int nbDims,
                                                const int filterDimA[]);
UDNN_API udnnStatus_t udnnGetFilterNdDescriptor(const udnnFilterDescriptor_t filterDesc,
                                                int nbDimsRequested, udnnDataType_t *dataType,
                                                udnnTensorFormat_t *format, int *nbDims,
                                                int filterDimA[]);

/* ------------------------------------------------------------------------ */
/* Tensor operations                                                         */
/* ------------------------------------------------------------------------ */

/* Sets every element of y to *valuePtr (a float for FLOAT/HALF/BFLOAT16,
 * a double for DOUBLE, an int32_t for INT32, an int8_t for INT8). */
UDNN_API udnnStatus_t udnnSetTensor(udnnHandle_t handle, const udnnTensorDescriptor_t yDesc,
                                    void *y, const void *valuePtr);

/* y = *alpha * y. */
UDNN_API udnnStatus_t udnnScaleTensor(udnnHandle_t handle, const udnnTensorDescriptor_t yDesc,
                                      void *y, const void *alpha);

/* C = alpha * A + beta * C, A broadcast to C: each dimension of A is either
 * C's or 1, and A has C's rank and type. */
UDNN_API udnnStatus_t udnnAddTensor(udnnHandle_t handle, const void *alpha,
                                    const udnnTensorDescriptor_t aDesc, const void *A,
                                    const void *beta, const udnnTensorDescriptor_t cDesc,
                                    void *C);

/* y = alpha * x + beta * y between any two layouts or strides of the same
 * shape, converting between any of FLOAT, DOUBLE, HALF and BFLOAT16. The
 * scalars follow y's type. */
UDNN_API udnnStatus_t udnnTransformTensor(udnnHandle_t handle, const void *alpha,
                                          const udnnTensorDescriptor_t xDesc, const void *x,
                                          const void *beta,
                                          const udnnTensorDescriptor_t yDesc, void *y);

UDNN_API udnnStatus_t udnnCreateOpTensorDescriptor(udnnOpTensorDescriptor_t *opTensorDesc);
/* opTensorCompType: FLOAT or DOUBLE, the precision of the arithmetic. */
UDNN_API udnnStatus_t udnnSetOpTensorDescriptor(udnnOpTensorDescriptor_t opTensorDesc,
                                                udnnOpTensorOp_t opTensorOp,
                                                udnnDataType_t opTensorCompType,
                                                udnnNanPropagation_t opTensorNanOpt);
UDNN_API udnnStatus_t udnnGetOpTensorDescriptor(const udnnOpTensorDescriptor_t opTensorDesc,
                                                udnnOpTensorOp_t *opTensorOp,
                                                udnnDataType_t *opTensorCompType,
                                                udnnNanPropagation_t *opTensorNanOpt);
UDNN_API udnnStatus_t udnnDestroyOpTensorDescriptor(udnnOpTensorDescriptor_t opTensorDesc);

/* C = op(alpha1 * A, alpha2 * B) + beta * C, B broadcast to C as in
 * udnnAddTensor (A has C's shape). SQRT and NOT read A only. */
UDNN_API udnnStatus_t udnnOpTensor(udnnHandle_t handle,
                                   const udnnOpTensorDescriptor_t opTensorDesc,
                                   const void *alpha1, const udnnTensorDescriptor_t aDesc,
                                   const void *A, const void *alpha2,
                                   const udnnTensorDescriptor_t bDesc, const void *B,
                                   const void *beta, const udnnTensorDescriptor_t cDesc,
                                   void *C);

UDNN_API udnnStatus_t
udnnCreateReduceTensorDescriptor(udnnReduceTensorDescriptor_t *reduceTensorDesc);
UDNN_API udnnStatus_t udnnSetReduceTensorDescriptor(
    udnnReduceTensorDescriptor_t reduceTensorDesc, udnnReduceTensorOp_t reduceTensorOp,
    udnnDataType_t reduceTensorCompType, udnnNanPropagation_t reduceTensorNanOpt,
    udnnReduceTensorIndices_t reduceTensorIndices, udnnIndicesType_t reduceTensorIndicesType);
UDNN_API udnnStatus_t udnnGetReduceTensorDescriptor(
    const udnnReduceTensorDescriptor_t reduceTensorDesc, udnnReduceTensorOp_t *reduceTensorOp,
    udnnDataType_t *reduceTensorCompType, udnnNanPropagation_t *reduceTensorNanOpt,
    udnnReduceTensorIndices_t *reduceTensorIndices,
    udnnIndicesType_t *reduceTensorIndicesType);
UDNN_API udnnStatus_t
udnnDestroyReduceTensorDescriptor(udnnReduceTensorDescriptor_t reduceTensorDesc);

/* Bytes of the indices output and of the workspace ReduceTensor needs. */
UDNN_API udnnStatus_t udnnGetReductionIndicesSize(
    udnnHandle_t handle, const udnnReduceTensorDescriptor_t reduceTensorDesc,
    const udnnTensorDescriptor_t aDesc, const udnnTensorDescriptor_t cDesc, size_t *sizeInBytes);
UDNN_API udnnStatus_t udnnGetReductionWorkspaceSize(
    udnnHandle_t handle, const udnnReduceTensorDescriptor_t reduceTensorDesc,
    const udnnTensorDescriptor_t aDesc, const udnnTensorDescriptor_t cDesc,
    size_t *sizeInBytes);

/* C = alpha * reduce(A) + beta * C over every dimension where C has size 1
 * and A does not. */
UDNN_API udnnStatus_t udnnReduceTensor(udnnHandle_t handle,
                                       const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                       void *indices, size_t indicesSizeInBytes,
                                       void *workspace, size_t workspaceSizeInBytes,
                                       const void *alpha, const udnnTensorDescriptor_t aDesc,
                                       const void *A, const void *beta,
                                       const udnnTensorDescriptor_t cDesc, void *C);

/* ------------------------------------------------------------------------ */
/* Convolution                                                               */
/* ------------------------------------------------------------------------ */

UDNN_API udnnStatus_t udnnCreateConvolutionDescriptor(udnnConvolutionDescriptor_t *convDesc);
UDNN_API udnnStatus_t udnnDestroyConvolutionDescriptor(udnnConvolutionDescriptor_t convDesc);

/* Padding >= 0, strides and dilations >= 1; computeType FLOAT or DOUBLE
 * (HALF is accepted for half data and computes in float). */
UDNN_API udnnStatus_t udnnSetConvolution2dDescriptor(udnnConvolutionDescriptor_t convDesc,
                                                     int pad_h, int pad_w, int u, int v,
                                                     int dilation_h, int dilation_w,
                                                     udnnConvolutionMode_t mode,
                                                     udnnDataType_t computeType);
UDNN_API udnnStatus_t udnnGetConvolution2dDescriptor(const udnnConvolutionDescriptor_t convDesc,
                                                     int *pad_h, int *pad_w, int *u, int *v,
                                                     int *dilation_h, int *dilation_w,
                                                     udnnConvolutionMode_t *mode,
                                                     udnnDataType_t *computeType);
/* arrayLength spatial dimensions: 2 or 3. */
UDNN_API udnnStatus_t udnnSetConvolutionNdDescriptor(udnnConvolutionDescriptor_t convDesc,
                                                     int arrayLength, const int padA[],
                                                     const int filterStrideA[],
                                                     const int dilationA[],
                                                     udnnConvolutionMode_t mode,
                                                     udnnDataType_t computeType);
UDNN_API udnnStatus_t udnnGetConvolutionNdDescriptor(const udnnConvolutionDescriptor_t convDesc,
                                                     int arrayLengthRequested,
                                                     int *arrayLength, int padA[],
                                                     int strideA[], int dilationA[],
                                                     udnnConvolutionMode_t *mode,
                                                     udnnDataType_t *computeType);
/* groupCount >= 1 must divide both the input and output channels. */
UDNN_API udnnStatus_t udnnSetConvolutionGroupCount(udnnConvolutionDescriptor_t convDesc,
                                                   int groupCount);
UDNN_API udnnStatus_t udnnGetConvolutionGroupCount(udnnConvolutionDescriptor_t convDesc,
                                                   int *groupCount);
UDNN_API udnnStatus_t udnnSetConvolutionMathType(udnnConvolutionDescriptor_t convDesc,
                                                 udnnMathType_t mathType);
UDNN_API udnnStatus_t udnnGetConvolutionMathType(udnnConvolutionDescriptor_t convDesc,
                                                 udnnMathType_t *mathType);

/* The output shape: each spatial dim is
 * 1 + (in + 2 * pad - ((filter - 1) * dilation + 1)) / stride. */
UDNN_API udnnStatus_t udnnGetConvolution2dForwardOutputDim(
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t inputTensorDesc,
    const udnnFilterDescriptor_t filterDesc, int *n, int *c, int *h, int *w);
UDNN_API udnnStatus_t udnnGetConvolutionNdForwardOutputDim(
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t inputTensorDesc,
    const udnnFilterDescriptor_t filterDesc, int nbDims, int tensorOuputDimA[]);

/* y = alpha * conv(x, w) + beta * y. The backend's solver for algo runs;
 * an algorithm the backend lacks is NOT_SUPPORTED. */
UDNN_API udnnStatus_t udnnConvolutionForward(udnnHandle_t handle, const void *alpha,
                                             const udnnTensorDescriptor_t xDesc, const void *x,
                                             const udnnFilterDescriptor_t wDesc, const void *w,
                                             const udnnConvolutionDescriptor_t convDesc,
                                             udnnConvolutionFwdAlgo_t algo, void *workSpace,
                                             size_t workSpaceSizeInBytes, const void *beta,
                                             const udnnTensorDescriptor_t yDesc, void *y);

/* How many perf results the algorithm queries may return. */
UDNN_API udnnStatus_t udnnGetConvolutionForwardAlgorithmMaxCount(udnnHandle_t handle,
                                                                 int *count);
/* Heuristic ranking of every forward algorithm, runnable ones first (time -1). */
UDNN_API udnnStatus_t udnnGetConvolutionForwardAlgorithm_v7(
    udnnHandle_t handle, const udnnTensorDescriptor_t srcDesc,
    const udnnFilterDescriptor_t filterDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionFwdAlgoPerf_t *perfResults);
/* Measured ranking: each applicable algorithm runs on scratch buffers the
 * call allocates; fastest first. */
UDNN_API udnnStatus_t udnnFindConvolutionForwardAlgorithm(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc,
    const udnnFilterDescriptor_t wDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t yDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionFwdAlgoPerf_t *perfResults);
/* As Find, on the caller's buffers (y is overwritten) and workspace. */
UDNN_API udnnStatus_t udnnFindConvolutionForwardAlgorithmEx(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnFilterDescriptor_t wDesc, const void *w,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t yDesc, void *y,
    const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace, size_t workSpaceSizeInBytes);
UDNN_API udnnStatus_t udnnGetConvolutionForwardWorkspaceSize(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc,
    const udnnFilterDescriptor_t wDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t yDesc, udnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes);

/* dx = alpha * conv_transpose(dy, w) + beta * dx. */
UDNN_API udnnStatus_t udnnConvolutionBackwardData(
    udnnHandle_t handle, const void *alpha, const udnnFilterDescriptor_t wDesc, const void *w,
    const udnnTensorDescriptor_t dyDesc, const void *dy,
    const udnnConvolutionDescriptor_t convDesc, udnnConvolutionBwdDataAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const udnnTensorDescriptor_t dxDesc, void *dx);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardDataAlgorithmMaxCount(udnnHandle_t handle,
                                                                      int *count);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardDataAlgorithm_v7(
    udnnHandle_t handle, const udnnFilterDescriptor_t filterDesc,
    const udnnTensorDescriptor_t diffDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionBwdDataAlgoPerf_t *perfResults);
UDNN_API udnnStatus_t udnnFindConvolutionBackwardDataAlgorithm(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc,
    const udnnTensorDescriptor_t dyDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t dxDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdDataAlgoPerf_t *perfResults);
UDNN_API udnnStatus_t udnnFindConvolutionBackwardDataAlgorithmEx(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc, const void *w,
    const udnnTensorDescriptor_t dyDesc, const void *dy,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t dxDesc, void *dx,
    const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdDataAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardDataWorkspaceSize(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc,
    const udnnTensorDescriptor_t dyDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t dxDesc, udnnConvolutionBwdDataAlgo_t algo,
    size_t *sizeInBytes);

/* dw = alpha * dconv/dw (x, dy) + beta * dw. */
UDNN_API udnnStatus_t udnnConvolutionBackwardFilter(
    udnnHandle_t handle, const void *alpha, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnTensorDescriptor_t dyDesc, const void *dy,
    const udnnConvolutionDescriptor_t convDesc, udnnConvolutionBwdFilterAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *beta,
    const udnnFilterDescriptor_t dwDesc, void *dw);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardFilterAlgorithmMaxCount(udnnHandle_t handle,
                                                                        int *count);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardFilterAlgorithm_v7(
    udnnHandle_t handle, const udnnTensorDescriptor_t srcDesc,
    const udnnTensorDescriptor_t diffDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionBwdFilterAlgoPerf_t *perfResults);
UDNN_API udnnStatus_t udnnFindConvolutionBackwardFilterAlgorithm(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc,
    const udnnTensorDescriptor_t dyDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnFilterDescriptor_t dwDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdFilterAlgoPerf_t *perfResults);
UDNN_API udnnStatus_t udnnFindConvolutionBackwardFilterAlgorithmEx(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnTensorDescriptor_t dyDesc, const void *y,
    const udnnConvolutionDescriptor_t convDesc, const udnnFilterDescriptor_t dwDesc, void *dw,
    const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdFilterAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes);
UDNN_API udnnStatus_t udnnGetConvolutionBackwardFilterWorkspaceSize(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc,
    const udnnTensorDescriptor_t dyDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnFilterDescriptor_t gradDesc, udnnConvolutionBwdFilterAlgo_t algo,
    size_t *sizeInBytes);

/* db = alpha * sum of dy over every dimension but C + beta * db; db is
 * 1 x C x 1 x 1 (x 1). */
UDNN_API udnnStatus_t udnnConvolutionBackwardBias(udnnHandle_t handle, const void *alpha,
                                                  const udnnTensorDescriptor_t dyDesc,
                                                  const void *dy, const void *beta,
                                                  const udnnTensorDescriptor_t dbDesc, void *db);

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias); z has y's shape (it may
 * be y itself), bias is 1 x K x 1 x 1. The activation may be any mode. */
UDNN_API udnnStatus_t udnnConvolutionBiasActivationForward(
    udnnHandle_t handle, const void *alpha1, const udnnTensorDescriptor_t xDesc,
    const void *x, const udnnFilterDescriptor_t wDesc, const void *w,
    const udnnConvolutionDescriptor_t convDesc, udnnConvolutionFwdAlgo_t algo,
    void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2,
    const udnnTensorDescriptor_t zDesc, const void *z, const udnnTensorDescriptor_t biasDesc,
    const void *bias, const udnnActivationDescriptor_t activationDesc,
    const udnnTensorDescriptor_t yDesc, void *y);

/* ------------------------------------------------------------------------ */
/* Activation                                                                */
/* ------------------------------------------------------------------------ */

UDNN_API udnnStatus_t udnnCreateActivationDescriptor(udnnActivationDescriptor_t *activationDesc);
/* coef: the clip of CLIPPED_RELU, alpha of ELU, the slope of LEAKY_RELU;
 * ignored by the other modes. A new descriptor is RELU, coef 0, swish beta 1. */
UDNN_API udnnStatus_t udnnSetActivationDescriptor(udnnActivationDescriptor_t activationDesc,
                                                  udnnActivationMode_t mode,
                                                  udnnNanPropagation_t reluNanOpt, double coef);
UDNN_API udnnStatus_t udnnGetActivationDescriptor(const udnnActivationDescriptor_t activationDesc,
                                                  udnnActivationMode_t *mode,
                                                  udnnNanPropagation_t *reluNanOpt,
                                                  double *coef);
UDNN_API udnnStatus_t udnnSetActivationDescriptorSwishBeta(
    udnnActivationDescriptor_t activationDesc, double swish_beta);
UDNN_API udnnStatus_t udnnGetActivationDescriptorSwishBeta(
    udnnActivationDescriptor_t activationDesc, double *swish_beta);
UDNN_API udnnStatus_t udnnDestroyActivationDescriptor(udnnActivationDescriptor_t activationDesc);

/* y = alpha * act(x) + beta * y; x and y have the same shape (any strides). */
UDNN_API udnnStatus_t udnnActivationForward(udnnHandle_t handle,
                                            udnnActivationDescriptor_t activationDesc,
                                            const void *alpha,
                                            const udnnTensorDescriptor_t xDesc, const void *x,
                                            const void *beta,
                                            const udnnTensorDescriptor_t yDesc, void *y);
/* dx = alpha * act'(x) * dy + beta * dx. Modes whose derivative needs x read
 * x; SIGMOID, TANH, RELU, CLIPPED_RELU and IDENTITY may use y. */
UDNN_API udnnStatus_t udnnActivationBackward(udnnHandle_t handle,
                                             udnnActivationDescriptor_t activationDesc,
                                             const void *alpha,
                                             const udnnTensorDescriptor_t yDesc, const void *y,
                                             const udnnTensorDescriptor_t dyDesc,
                                             const void *dy,
                                             const udnnTensorDescriptor_t xDesc, const void *x,
                                             const void *beta,
                                             const udnnTensorDescriptor_t dxDesc, void *dx);

/* ------------------------------------------------------------------------ */
/* Pooling                                                                   */
/* ------------------------------------------------------------------------ */

UDNN_API udnnStatus_t udnnCreatePoolingDescriptor(udnnPoolingDescriptor_t *poolingDesc);
UDNN_API udnnStatus_t udnnDestroyPoolingDescriptor(udnnPoolingDescriptor_t poolingDesc);
/* Windows and strides >= 1, padding >= 0 and smaller than the window. */
UDNN_API udnnStatus_t udnnSetPooling2dDescriptor(udnnPoolingDescriptor_t poolingDesc,
                                                 udnnPoolingMode_t mode,
                                                 udnnNanPropagation_t maxpoolingNanOpt,
                                                 int windowHeight, int windowWidth,
                                                 int verticalPadding, int horizontalPadding,
                                                 int verticalStride, int horizontalStride);
UDNN_API udnnStatus_t udnnGetPooling2dDescriptor(const udnnPoolingDescriptor_t poolingDesc,
                                                 udnnPoolingMode_t *mode,
                                                 udnnNanPropagation_t *maxpoolingNanOpt,
                                                 int *windowHeight, int *windowWidth,
                                                 int *verticalPadding, int *horizontalPadding,
                                                 int *verticalStride, int *horizontalStride);
/* nbDims spatial dimensions: 2 or 3. */
UDNN_API udnnStatus_t udnnSetPoolingNdDescriptor(udnnPoolingDescriptor_t poolingDesc,
                                                 const udnnPoolingMode_t mode,
                                                 const udnnNanPropagation_t maxpoolingNanOpt,
                                                 int nbDims, const int windowDimA[],
                                                 const int paddingA[], const int strideA[]);
UDNN_API udnnStatus_t udnnGetPoolingNdDescriptor(const udnnPoolingDescriptor_t poolingDesc,
                                                 int nbDimsRequested, udnnPoolingMode_t *mode,
                                                 udnnNanPropagation_t *maxpoolingNanOpt,
                                                 int *nbDims, int windowDimA[],
                                                 int paddingA[], int strideA[]);
/* Each spatial output dim is 1 + (in + 2 * pad - window) / stride. */
UDNN_API udnnStatus_t udnnGetPooling2dForwardOutputDim(const udnnPoolingDescriptor_t poolingDesc,
                                                       const udnnTensorDescriptor_t inputTensorDesc,
                                                       int *n, int *c, int *h, int *w);
UDNN_API udnnStatus_t udnnGetPoolingNdForwardOutputDim(const udnnPoolingDescriptor_t poolingDesc,
                                                       const udnnTensorDescriptor_t inputTensorDesc,
                                                       int nbDims, int outputTensorDimA[]);

/* Pooling does not run in place: y may not be x's buffer, nor dx the
 * buffer of x, y or dy (BAD_PARAM). */
UDNN_API udnnStatus_t udnnPoolingForward(udnnHandle_t handle,
                                         const udnnPoolingDescriptor_t poolingDesc,
                                         const void *alpha, const udnnTensorDescriptor_t xDesc,
                                         const void *x, const void *beta,
                                         const udnnTensorDescriptor_t yDesc, void *y);
/* Max modes send each dy to the first maximum of its window in x. */
UDNN_API udnnStatus_t udnnPoolingBackward(udnnHandle_t handle,
                                          const udnnPoolingDescriptor_t poolingDesc,
                                          const void *alpha, const udnnTensorDescriptor_t yDesc,
                                          const void *y, const udnnTensorDescriptor_t dyDesc,
                                          const void *dy, const udnnTensorDescriptor_t xDesc,
                                          const void *x, const void *beta,
                                          const udnnTensorDescriptor_t dxDesc, void *dx);

/* ------------------------------------------------------------------------ */
/* Softmax                                                                   */
/* ------------------------------------------------------------------------ */

UDNN_API udnnStatus_t udnnSoftmaxForward(udnnHandle_t handle, udnnSoftmaxAlgorithm_t algo,
                                         udnnSoftmaxMode_t mode, const void *alpha,
                                         const udnnTensorDescriptor_t xDesc, const void *x,
                                         const void *beta, const udnnTensorDescriptor_t yDesc,
                                         void *y);
/* y is the forward output (log-softmax output for LOG). */
UDNN_API udnnStatus_t udnnSoftmaxBackward(udnnHandle_t handle, udnnSoftmaxAlgorithm_t algo,
                                          udnnSoftmaxMode_t mode, const void *alpha,
                                          const udnnTensorDescriptor_t yDesc, const void *y,
                                          const udnnTensorDescriptor_t dyDesc, const void *dy,
                                          const void *beta, const udnnTensorDescriptor_t dxDesc,
                                          void *dx);

/* ------------------------------------------------------------------------ */
/* Batch normalization                                                       */
/* ------------------------------------------------------------------------ */

/* The descriptor of scale, bias, mean and variance for x and mode:
 * 1 x C x 1 x 1 (SPATIAL) or 1 x C x H x W (PER_ACTIVATION); FLOAT for
 * HALF/BFLOAT16 x. */
UDNN_API udnnStatus_t udnnDeriveBNTensorDescriptor(udnnTensorDescriptor_t derivedBnDesc,
                                                   const udnnTensorDescriptor_t xDesc,
                                                   udnnBatchNormMode_t mode);
UDNN_API udnnStatus_t udnnBatchNormalizationForwardTraining(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance);
UDNN_API udnnStatus_t udnnBatchNormalizationForwardInference(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance,
    double epsilon);
UDNN_API udnnStatus_t udnnBatchNormalizationBackward(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t dyDesc,
    const void *dy, const udnnTensorDescriptor_t dxDesc, void *dx,
    const udnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale,
    void *dBnScaleResult, void *dBnBiasResult, double epsilon, const void *savedMean,
    const void *savedInvVariance);

/* ------------------------------------------------------------------------ */
/* Layer, RMS and group normalization (udnn's own)                           */
/* ------------------------------------------------------------------------ */

/* Layer norm (UDNN_NORM_LAYER) and RMS norm (UDNN_NORM_RMS) over the last
 * normalizedDims dimensions of x; scale/bias have those dimensions' shape
 * (bias NULL = none; RMS ignores bias); saveMean/saveInvStd (nullable) have
 * the leading dimensions' shape and are what the backward pass consumes.
 * Every side descriptor has x's rank: scaleBiasDesc is 1 in the leading dims
 * and x's size in the normalized dims; statsDesc is x's size in the leading
 * dims and 1 in the normalized dims. Side tensors are FLOAT for
 * FLOAT/HALF/BFLOAT16 data and DOUBLE for DOUBLE data. No alpha/beta: y, dx,
 * dScale and dBias are overwritten. */
UDNN_API udnnStatus_t udnnNormForward(udnnHandle_t handle, udnnNormMode_t mode,
                                      int normalizedDims, double epsilon,
                                      const udnnTensorDescriptor_t xDesc, const void *x,
                                      const udnnTensorDescriptor_t scaleBiasDesc,
                                      const void *scale, const void *bias,
                                      const udnnTensorDescriptor_t yDesc, void *y,
                                      const udnnTensorDescriptor_t statsDesc, void *saveMean,
                                      void *saveInvStd);
UDNN_API udnnStatus_t udnnNormBackward(udnnHandle_t handle, udnnNormMode_t mode,
                                       int normalizedDims, const udnnTensorDescriptor_t xDesc,
                                       const void *x, const udnnTensorDescriptor_t dyDesc,
                                       const void *dy,
                                       const udnnTensorDescriptor_t scaleBiasDesc,
                                       const void *scale,
                                       const udnnTensorDescriptor_t statsDesc,
                                       const void *savedMean, const void *savedInvStd,
                                       const udnnTensorDescriptor_t dxDesc, void *dx,
                                       void *dScale, void *dBias);
/* Group norm over N x C x ... tensors: channels split into `groups`; instance
 * norm is groups == C. scaleBiasDesc is 1 x C x 1 ...; statsDesc is
 * N x groups x 1 .... */
UDNN_API udnnStatus_t udnnGroupNormForward(udnnHandle_t handle, int groups, double epsilon,
                                           const udnnTensorDescriptor_t xDesc, const void *x,
                                           const udnnTensorDescriptor_t scaleBiasDesc,
                                           const void *scale, const void *bias,
                                           const udnnTensorDescriptor_t yDesc, void *y,
                                           const udnnTensorDescriptor_t statsDesc,
                                           void *saveMean, void *saveInvStd);
UDNN_API udnnStatus_t udnnGroupNormBackward(udnnHandle_t handle, int groups,
                                            const udnnTensorDescriptor_t xDesc, const void *x,
                                            const udnnTensorDescriptor_t dyDesc, const void *dy,
                                            const udnnTensorDescriptor_t scaleBiasDesc,
                                            const void *scale,
                                            const udnnTensorDescriptor_t statsDesc,
                                            const void *savedMean, const void *savedInvStd,
                                            const udnnTensorDescriptor_t dxDesc, void *dx,
                                            void *dScale, void *dBias);

/* ------------------------------------------------------------------------ */
/* Local response normalization                                              */
/* ------------------------------------------------------------------------ */

UDNN_API udnnStatus_t udnnCreateLRNDescriptor(udnnLRNDescriptor_t *normDesc);
/* lrnN in [UDNN_LRN_MIN_N, UDNN_LRN_MAX_N], lrnK >= UDNN_LRN_MIN_K,
 * lrnBeta >= UDNN_LRN_MIN_BETA. A new descriptor is n 5, alpha 1e-4,
 * beta 0.75, k 2. */
UDNN_API udnnStatus_t udnnSetLRNDescriptor(udnnLRNDescriptor_t normDesc, unsigned lrnN,
                                           double lrnAlpha, double lrnBeta, double lrnK);
UDNN_API udnnStatus_t udnnGetLRNDescriptor(udnnLRNDescriptor_t normDesc, unsigned *lrnN,
                                           double *lrnAlpha, double *lrnBeta, double *lrnK);
UDNN_API udnnStatus_t udnnDestroyLRNDescriptor(udnnLRNDescriptor_t lrnDesc);
UDNN_API udnnStatus_t udnnLRNCrossChannelForward(udnnHandle_t handle,
                                                 udnnLRNDescriptor_t normDesc,
                                                 udnnLRNMode_t lrnMode, const void *alpha,
                                                 const udnnTensorDescriptor_t xDesc,
                                                 const void *x, const void *beta,
                                                 const udnnTensorDescriptor_t yDesc, void *y);
UDNN_API udnnStatus_t udnnLRNCrossChannelBackward(
    udnnHandle_t handle, udnnLRNDescriptor_t normDesc, udnnLRNMode_t lrnMode,
    const void *alpha, const udnnTensorDescriptor_t yDesc, const void *y,
    const udnnTensorDescriptor_t dyDesc, const void *dy, const udnnTensorDescriptor_t xDesc,
    const void *x, const void *beta, const udnnTensorDescriptor_t dxDesc, void *dx);

/* ------------------------------------------------------------------------ */
/* Dropout                                                                   */
/* ------------------------------------------------------------------------ */

/* The mask is a contract of the API: every backend draws the same mask for
 * the same seed, shape and call. Element i of x (its row-major logical
 * index over x's dims) in the forward call numbered t on the states (0 for
 * the first call after udnnSetDropoutDescriptor) is kept when
 *   r = Philox4x32-10(counter = {lo32(i / 4), hi32(i / 4), lo32(t), hi32(t)},
 *                     key = {lo32(seed), hi32(seed)}) word (i % 4)
 * satisfies r >= round(dropout * 2^32); kept elements are scaled by
 * 1 / (1 - dropout), the others are 0. The states buffer holds the key and
 * the call counter t; the reserve space holds the mask, one byte per
 * element. */
UDNN_API udnnStatus_t udnnCreateDropoutDescriptor(udnnDropoutDescriptor_t *dropoutDesc);
UDNN_API udnnStatus_t udnnDestroyDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc);
/* Bytes of the generator state (key and call counter) in the handle's memory. */
UDNN_API udnnStatus_t udnnDropoutGetStatesSize(udnnHandle_t handle, size_t *sizeInBytes);
/* Bytes of the mask DropoutForward leaves for DropoutBackward. */
UDNN_API udnnStatus_t udnnDropoutGetReserveSpaceSize(udnnTensorDescriptor_t xdesc,
                                                     size_t *sizeInBytes);
/* dropout in [0, 1); states (of udnnDropoutGetStatesSize bytes) is
 * initialized from seed. */
UDNN_API udnnStatus_t udnnSetDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc,
                                               udnnHandle_t handle, float dropout,
                                               void *states, size_t stateSizeInBytes,
                                               unsigned long long seed);
/* As Set, but keeps the states as they are (they were initialized before). */
UDNN_API udnnStatus_t udnnRestoreDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc,
                                                   udnnHandle_t handle, float dropout,
                                                   void *states, size_t stateSizeInBytes,
                                                   unsigned long long seed);
UDNN_API udnnStatus_t udnnGetDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc,
                                               udnnHandle_t handle, float *dropout,
                                               void **states, unsigned long long *seed);
UDNN_API udnnStatus_t udnnDropoutForward(udnnHandle_t handle,
                                         const udnnDropoutDescriptor_t dropoutDesc,
                                         const udnnTensorDescriptor_t xdesc, const void *x,
                                         const udnnTensorDescriptor_t ydesc, void *y,
                                         void *reserveSpace, size_t reserveSpaceSizeInBytes);
UDNN_API udnnStatus_t udnnDropoutBackward(udnnHandle_t handle,
                                          const udnnDropoutDescriptor_t dropoutDesc,
                                          const udnnTensorDescriptor_t dydesc, const void *dy,
                                          const udnnTensorDescriptor_t dxdesc, void *dx,
                                          void *reserveSpace, size_t reserveSpaceSizeInBytes);

/* ------------------------------------------------------------------------ */
/* Matrix multiplication (udnn's own)                                        */
/* ------------------------------------------------------------------------ */

/* C = alpha * op(A) * op(B) + beta * C on 2-D [rows, cols] or 3-D
 * [batch, rows, cols] tensors; a batch of 1 broadcasts; op(X) = X or its
 * transpose (transX != 0). HALF and BFLOAT16 accumulate in float. */
UDNN_API udnnStatus_t udnnMatMul(udnnHandle_t handle, int transA, int transB,
                                 const void *alpha, const udnnTensorDescriptor_t aDesc,
                                 const void *A, const udnnTensorDescriptor_t bDesc,
                                 const void *B, const void *beta,
                                 const udnnTensorDescriptor_t cDesc, void *C);

#ifdef __cplusplus
}
#endif

#endif /* UDNN_H */
