/* bench_cudnn.c - the CUDA backend's peers: the same problem through
 * cuDNN's descriptor API (conv in every direction, cba, act, pool,
 * softmax, bn and lrn, forward and backward) and through cuBLAS (matmul),
 * in this process, on udnn's own device buffers (udnnMalloc's, every set
 * of them) and on the handle's stream (udnnGetStream).
 *
 * The problem is udnn-bench's exactly: every tensor's dims, strides and
 * type as udnn's descriptors have them (4-D at least: trailing 1s pad a
 * smaller rank), filters in their format (NCHW or NHWC), the blend
 * (alpha, beta, cba's alpha2, bn backward's parameter blend), groups,
 * dilation, the convolution mode and compute type. udnn's math type maps
 * to cuDNN's by what it allows: float data with UDNN_DEFAULT_MATH runs
 * CUDNN_FMA_MATH (no TF32, as udnn's 1e-5 tolerance has it), any other
 * math type CUDNN_DEFAULT_MATH (TF32 allowed); half and bfloat16 run
 * CUDNN_TENSOR_OP_MATH, FMA stays FMA. The algorithm: --algo N pins
 * cuDNN's algo N as it pins udnn's; --find takes cuDNN's fastest measured
 * (cudnnFind...), as udnn takes its own; else cuDNN's heuristic first
 * (cudnnGet..._v7), as udnn takes its heuristic's. The workspace is
 * allocated before timing (udnnMalloc on the handle).
 *
 * Before timing, the peer's output is compared with udnn's (beta 0 and
 * outputs the op does not read only): a relative difference over ten times
 * the check's tolerance is said on stderr, as it means that one of the two
 * runs another problem. The timing loop is udnn's (bench_time_loop), by
 * the same clock: each sample (--burst runs) followed by
 * cudaStreamSynchronize, as udnnSynchronize follows udnn's.
 *
 * What cuDNN lacks has no peer (1): udnn's own activations, IDENTITY
 * outside cba, cba with an activation other than RELU or IDENTITY, LRN
 * sizes outside 1..16, layouts and types that cuDNN refuses as not
 * supported. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_data.h"
#include "tools/bench_peer.h"

/* One handle of each per process, made on first use on the current device
 * (udnn's CUDA backend makes device 0 current on each call). */
static cudnnHandle_t dnn_handle;
static cublasHandle_t blas_handle;

typedef struct {
    bench_problem *p;
    bench_exec *e;
    const bench_peer_info *pi;
    cudnnHandle_t dnn;
    cublasHandle_t blas;
    cudaStream_t stream;
    cudnnTensorDescriptor_t t[BENCH_MAX_BUFS]; /* by buffer index */
    cudnnFilterDescriptor_t f[BENCH_MAX_BUFS];
    cudnnTensorDescriptor_t bn;                /* bn's scale, bias, mean, ... */
    cudnnConvolutionDescriptor_t conv;
    cudnnActivationDescriptor_t act;
    cudnnPoolingDescriptor_t pool;
    cudnnLRNDescriptor_t lrn;
    int algo;
    void *ws;
    size_t ws_bytes;
    bench_scalar alpha, beta, alpha2, beta2;
    /* cuBLAS: C^T or C as the column-major D = op(L) op(R), m x n x k */
    struct {
        cublasOperation_t op_l, op_r;
        int m, n, k, ld_l, ld_r, ld_d, batch;
        long long stride_l, stride_r, stride_d;
        int l, r, d; /* buffer indices */
        cudaDataType_t type;
        cublasComputeType_t compute;
    } gemm;
    /* the last failure */
    int none; /* it was cuDNN's "not supported": no peer */
    char *msg;
    size_t n;
} peer;

/* ---- failures ---------------------------------------------------------------------------- */

static int dnn_fail(peer *q, cudnnStatus_t st, const char *what)
{
    char last[256] = "";
    cudnnGetLastErrorString(last, sizeof last);
    if (CUDNN_STATUS_CATEGORY(st) == CUDNN_STATUS_NOT_SUPPORTED) q->none = 1;
    snprintf(q->msg, q->n, "%s: %s%s%.200s", what, cudnnGetErrorString(st), last[0] ? ": " : "",
             last);
    return -1;
}

static int blas_fail(peer *q, cublasStatus_t st, const char *what)
{
    if (st == CUBLAS_STATUS_NOT_SUPPORTED) q->none = 1;
    snprintf(q->msg, q->n, "%s: %s", what, cublasGetStatusString(st));
    return -1;
}

static int cuda_fail(peer *q, cudaError_t err, const char *what)
{
    cudaGetLastError();
    snprintf(q->msg, q->n, "%s: %s", what, cudaGetErrorString(err));
    return -1;
}

/* No peer for this problem: cuDNN or cuBLAS has no such op or type. */
static int none(peer *q)
{
    q->none = 1;
    return -1;
}

#define DNN(call, what)                                                                           \
    do {                                                                                          \
        cudnnStatus_t st_ = (call);                                                               \
        if (st_ != CUDNN_STATUS_SUCCESS) return dnn_fail(q, st_, (what));                        \
    } while (0)

/* ---- descriptors --------------------------------------------------------------------------- */

static int dnn_type(udnnDataType_t t, cudnnDataType_t *out)
{
    switch (t) {
    case UDNN_DATA_FLOAT: *out = CUDNN_DATA_FLOAT; return 0;
    case UDNN_DATA_DOUBLE: *out = CUDNN_DATA_DOUBLE; return 0;
    case UDNN_DATA_HALF: *out = CUDNN_DATA_HALF; return 0;
    case UDNN_DATA_BFLOAT16: *out = CUDNN_DATA_BFLOAT16; return 0;
    case UDNN_DATA_INT8: *out = CUDNN_DATA_INT8; return 0;
    case UDNN_DATA_INT32: *out = CUDNN_DATA_INT32; return 0;
    default: return -1;
    }
}

/* cuDNN's descriptor of buffer i (once), its dims and strides as they
 * are, with trailing dims of 1 up to rank 4 (strided so that a packed
 * NCHW or NHWC tensor stays packed in its layout). */
static int tensor(peer *q, int i)
{
    if (i < 0) return 0;
    if (q->t[i] != NULL) return 0;
    const bench_buf *b = &q->p->buf[i];
    cudnnDataType_t t;
    if (b->kind != BENCH_TENSOR || dnn_type(b->dtype, &t) < 0) return none(q);
    int rank = b->rank, dims[UDNN_DIM_MAX + 2], strides[UDNN_DIM_MAX + 2];
    for (int d = 0; d < rank; d++) {
        if (b->strides[d] > INT_MAX || b->strides[d] < 1) return none(q);
        dims[d] = b->dims[d];
        strides[d] = (int)b->strides[d];
    }
    /* [n, c, l] NHWC is [n, c, l, 1] NHWC: its new w strides as c does */
    const int pad = rank > 0 && strides[rank - 1] != 1 ? strides[rank - 1] : 1;
    for (; rank < 4; rank++) {
        dims[rank] = 1;
        strides[rank] = pad;
    }
    DNN(cudnnCreateTensorDescriptor(&q->t[i]), "cudnnCreateTensorDescriptor");
    DNN(cudnnSetTensorNdDescriptor(q->t[i], t, rank, dims, strides), "cudnnSetTensorNdDescriptor");
    return 0;
}

/* cuDNN's filter descriptor of buffer i: dims k, c, spatial, packed NCHW
 * or NHWC as bench_add_filter laid it out. */
static int filter(peer *q, int i)
{
    const bench_buf *b = &q->p->buf[i];
    cudnnDataType_t t;
    if (b->kind != BENCH_FILTER || dnn_type(b->dtype, &t) < 0) return none(q);
    int64_t packed[UDNN_DIM_MAX];
    cudnnTensorFormat_t fmt;
    const size_t sz = sizeof(int64_t) * (size_t)b->rank;
    bench_packed_strides(UDNN_TENSOR_NCHW, b->rank, b->dims, packed);
    if (memcmp(packed, b->strides, sz) == 0) {
        fmt = CUDNN_TENSOR_NCHW;
    } else {
        bench_packed_strides(UDNN_TENSOR_NHWC, b->rank, b->dims, packed);
        if (memcmp(packed, b->strides, sz) != 0) return none(q);
        fmt = CUDNN_TENSOR_NHWC;
    }
    DNN(cudnnCreateFilterDescriptor(&q->f[i]), "cudnnCreateFilterDescriptor");
    DNN(cudnnSetFilterNdDescriptor(q->f[i], t, fmt, b->rank, b->dims),
        "cudnnSetFilterNdDescriptor");
    return 0;
}

/* udnn's math type as cuDNN's that allows the same (the file's comment). */
static cudnnMathType_t math_of(int math, udnnDataType_t data)
{
    if (math == UDNN_FMA_MATH) return CUDNN_FMA_MATH;
    switch (data) {
    case UDNN_DATA_FLOAT: return math == UDNN_DEFAULT_MATH ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;
    case UDNN_DATA_HALF:
    case UDNN_DATA_BFLOAT16: return CUDNN_TENSOR_OP_MATH;
    default: return CUDNN_DEFAULT_MATH;
    }
}

/* An activation descriptor of a cuDNN mode (udnn's 0..6 are cuDNN's). */
static int activation(peer *q, int mode, double coef, double swish)
{
    if (mode < 0 || mode > (int)CUDNN_ACTIVATION_SWISH) return none(q);
    DNN(cudnnCreateActivationDescriptor(&q->act), "cudnnCreateActivationDescriptor");
    DNN(cudnnSetActivationDescriptor(
            q->act, (cudnnActivationMode_t)mode,
            q->pi->nan_prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN, coef),
        "cudnnSetActivationDescriptor");
    if (mode == CUDNN_ACTIVATION_SWISH)
        DNN(cudnnSetActivationDescriptorSwishBeta(q->act, swish),
            "cudnnSetActivationDescriptorSwishBeta");
    return 0;
}

/* ---- convolution ----------------------------------------------------------------------------- */

/* The workspace of the chosen algo, allocated now (not in the timed runs). */
static int workspace(peer *q, size_t bytes)
{
    q->ws_bytes = bytes;
    if (bytes == 0) return 0;
    udnnStatus_t st = udnnMalloc(q->e->h, &q->ws, bytes);
    if (st != UDNN_STATUS_SUCCESS) {
        q->ws = NULL;
        snprintf(q->msg, q->n, "cannot allocate cuDNN's workspace of %zu bytes", bytes);
        return -1;
    }
    return 0;
}

/* The first algo of a perf list that ran (or would), and its math type. */
#define FIRST_GOOD(perf, got, algo, math, want)                                                   \
    do {                                                                                          \
        for (int i_ = 0; i_ < (got) && (algo) < 0; i_++)                                          \
            if ((perf)[i_].status == CUDNN_STATUS_SUCCESS) {                                      \
                (algo) = (int)(perf)[i_].algo;                                                    \
                /* as frameworks do, run it in the math type it was ranked in, */                 \
                /* but never loosen FMA (no TF32) */                                              \
                (math) = (want) == CUDNN_FMA_MATH ? CUDNN_FMA_MATH : (perf)[i_].mathType;         \
            }                                                                                     \
    } while (0)

static int choose_algo(peer *q, cudnnMathType_t want)
{
    const bench_peer_info *pi = q->pi;
    const int x = pi->src, w = pi->weights, y = pi->dst;
    cudnnMathType_t math = want;
    int algo = pi->algo;
    size_t bytes = 0;
    cudnnStatus_t st;
    if (algo < 0 && pi->op == BENCH_PEER_CBA &&
        pi->act_mode == (int)CUDNN_ACTIVATION_IDENTITY)
        algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM; /* the only one it takes */
    if (algo < 0) {
        int got = 0;
        if (pi->op == BENCH_PEER_CONV_FWD || pi->op == BENCH_PEER_CBA) {
            cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
            if (pi->find)
                DNN(cudnnFindConvolutionForwardAlgorithm(q->dnn, q->t[x], q->f[w], q->conv, q->t[y],
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                         perf),
                    "cudnnFindConvolutionForwardAlgorithm");
            else
                DNN(cudnnGetConvolutionForwardAlgorithm_v7(q->dnn, q->t[x], q->f[w], q->conv,
                                                           q->t[y],
                                                           CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got,
                                                           perf),
                    "cudnnGetConvolutionForwardAlgorithm_v7");
            FIRST_GOOD(perf, got, algo, math, want);
        } else if (pi->op == BENCH_PEER_CONV_BWD_DATA) {
            cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
            if (pi->find)
                DNN(cudnnFindConvolutionBackwardDataAlgorithm(
                        q->dnn, q->f[w], q->t[y], q->conv, q->t[x],
                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf),
                    "cudnnFindConvolutionBackwardDataAlgorithm");
            else
                DNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                        q->dnn, q->f[w], q->t[y], q->conv, q->t[x],
                        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &got, perf),
                    "cudnnGetConvolutionBackwardDataAlgorithm_v7");
            FIRST_GOOD(perf, got, algo, math, want);
        } else {
            cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
            if (pi->find)
                DNN(cudnnFindConvolutionBackwardFilterAlgorithm(
                        q->dnn, q->t[x], q->t[y], q->conv, q->f[w],
                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf),
                    "cudnnFindConvolutionBackwardFilterAlgorithm");
            else
                DNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                        q->dnn, q->t[x], q->t[y], q->conv, q->f[w],
                        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got, perf),
                    "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
            FIRST_GOOD(perf, got, algo, math, want);
        }
        if (algo < 0) return none(q); /* no algo of cuDNN's takes it */
        DNN(cudnnSetConvolutionMathType(q->conv, math), "cudnnSetConvolutionMathType");
    }
    q->algo = algo;
    if (pi->op == BENCH_PEER_CONV_FWD || pi->op == BENCH_PEER_CBA)
        st = cudnnGetConvolutionForwardWorkspaceSize(q->dnn, q->t[x], q->f[w], q->conv, q->t[y],
                                                     (cudnnConvolutionFwdAlgo_t)algo, &bytes);
    else if (pi->op == BENCH_PEER_CONV_BWD_DATA)
        st = cudnnGetConvolutionBackwardDataWorkspaceSize(q->dnn, q->f[w], q->t[y], q->conv,
                                                          q->t[x],
                                                          (cudnnConvolutionBwdDataAlgo_t)algo,
                                                          &bytes);
    else
        st = cudnnGetConvolutionBackwardFilterWorkspaceSize(q->dnn, q->t[x], q->t[y], q->conv,
                                                            q->f[w],
                                                            (cudnnConvolutionBwdFilterAlgo_t)algo,
                                                            &bytes);
    if (st != CUDNN_STATUS_SUCCESS) {
        char what[96];
        snprintf(what, sizeof what, "cuDNN's algo %d for this problem%s", algo,
                 pi->algo >= 0 ? " (--algo)" : "");
        dnn_fail(q, st, what);
        q->none = 0; /* an algo cuDNN named or was given but lacks: say so */
        return -1;
    }
    return workspace(q, bytes);
}

static int build_conv(peer *q)
{
    const bench_peer_info *pi = q->pi;
    const bench_problem *p = q->p;
    if (pi->op == BENCH_PEER_CONV_BWD_BIAS)
        return tensor(q, pi->dst) < 0 ? -1 : tensor(q, pi->bias);
    const bench_buf *x = &p->buf[pi->src], *y = &p->buf[pi->dst];
    cudnnDataType_t compute;
    if (tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || filter(q, pi->weights) < 0) return -1;
    if (dnn_type((udnnDataType_t)pi->compute, &compute) < 0) return none(q);
    DNN(cudnnCreateConvolutionDescriptor(&q->conv), "cudnnCreateConvolutionDescriptor");
    DNN(cudnnSetConvolutionNdDescriptor(q->conv, pi->nd, pi->pad, pi->stride, pi->dilation,
                                        (cudnnConvolutionMode_t)pi->conv_mode, compute),
        "cudnnSetConvolutionNdDescriptor");
    DNN(cudnnSetConvolutionGroupCount(q->conv, pi->groups), "cudnnSetConvolutionGroupCount");
    const cudnnMathType_t want = math_of(pi->math, p->dtype);
    DNN(cudnnSetConvolutionMathType(q->conv, want), "cudnnSetConvolutionMathType");
    /* the output cuDNN computes must be udnn's */
    int out[UDNN_DIM_MAX];
    DNN(cudnnGetConvolutionNdForwardOutputDim(q->conv, q->t[pi->src], q->f[pi->weights], x->rank,
                                              out),
        "cudnnGetConvolutionNdForwardOutputDim");
    if (memcmp(out, y->dims, sizeof(int) * (size_t)y->rank) != 0) {
        char a[96], b[96];
        bench_dims_str(a, sizeof a, y->rank, out);
        bench_dims_str(b, sizeof b, y->rank, y->dims);
        snprintf(q->msg, q->n, "cuDNN's output would be %s, udnn's is %s", a, b);
        return -1;
    }
    if (pi->op == BENCH_PEER_CBA) {
        /* RELU, and IDENTITY (with IMPLICIT_PRECOMP_GEMM), are what it takes */
        if (pi->act_mode != (int)CUDNN_ACTIVATION_RELU &&
            pi->act_mode != (int)CUDNN_ACTIVATION_IDENTITY)
            return none(q);
        if (tensor(q, pi->z) < 0 || tensor(q, pi->bias) < 0 ||
            activation(q, pi->act_mode, pi->param[0], pi->param[1]) < 0)
            return -1;
    }
    return choose_algo(q, want);
}

/* ---- the other cuDNN ops --------------------------------------------------------------------- */

static int build_act(peer *q)
{
    const bench_peer_info *pi = q->pi;
    /* udnn's own modes and IDENTITY (cuDNN keeps it for cba) have no peer */
    if (pi->mode == (int)CUDNN_ACTIVATION_IDENTITY) return none(q);
    if (tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || tensor(q, pi->diff_dst) < 0 ||
        tensor(q, pi->diff_src) < 0)
        return -1;
    return activation(q, pi->mode, pi->param[0], pi->param[1]);
}

static int build_pool(peer *q)
{
    const bench_peer_info *pi = q->pi;
    const bench_buf *y = &q->p->buf[pi->dst];
    if (tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || tensor(q, pi->diff_dst) < 0 ||
        tensor(q, pi->diff_src) < 0)
        return -1;
    DNN(cudnnCreatePoolingDescriptor(&q->pool), "cudnnCreatePoolingDescriptor");
    DNN(cudnnSetPoolingNdDescriptor(q->pool, (cudnnPoolingMode_t)pi->mode,
                                    pi->nan_prop ? CUDNN_PROPAGATE_NAN : CUDNN_NOT_PROPAGATE_NAN,
                                    pi->nd, pi->window, pi->pad, pi->stride),
        "cudnnSetPoolingNdDescriptor");
    int out[UDNN_DIM_MAX];
    DNN(cudnnGetPoolingNdForwardOutputDim(q->pool, q->t[pi->src], y->rank, out),
        "cudnnGetPoolingNdForwardOutputDim");
    if (memcmp(out, y->dims, sizeof(int) * (size_t)y->rank) != 0) {
        char a[96], b[96];
        bench_dims_str(a, sizeof a, y->rank, out);
        bench_dims_str(b, sizeof b, y->rank, y->dims);
        snprintf(q->msg, q->n, "cuDNN's pooling output would be %s, udnn's is %s", a, b);
        return -1;
    }
    return 0;
}

static int build_softmax(peer *q)
{
    const bench_peer_info *pi = q->pi;
    return tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || tensor(q, pi->diff_dst) < 0 ||
                   tensor(q, pi->diff_src) < 0
               ? -1
               : 0;
}

static int build_lrn(peer *q)
{
    const bench_peer_info *pi = q->pi;
    if (pi->size < CUDNN_LRN_MIN_N || pi->size > CUDNN_LRN_MAX_N ||
        pi->param[1] < CUDNN_LRN_MIN_BETA || pi->param[2] < CUDNN_LRN_MIN_K)
        return none(q);
    if (tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || tensor(q, pi->diff_dst) < 0 ||
        tensor(q, pi->diff_src) < 0)
        return -1;
    DNN(cudnnCreateLRNDescriptor(&q->lrn), "cudnnCreateLRNDescriptor");
    DNN(cudnnSetLRNDescriptor(q->lrn, (unsigned)pi->size, pi->param[0], pi->param[1], pi->param[2]),
        "cudnnSetLRNDescriptor");
    return 0;
}

/* Batch norm: the side tensors share the scale buffer's descriptor (1 x C
 * x 1 ... or 1 x C x H x W, FLOAT but for DOUBLE data, as cuDNN derives). */
static int build_bn(peer *q)
{
    const bench_peer_info *pi = q->pi;
    if (tensor(q, pi->src) < 0 || tensor(q, pi->dst) < 0 || tensor(q, pi->diff_dst) < 0 ||
        tensor(q, pi->diff_src) < 0 || tensor(q, pi->scale) < 0)
        return -1;
    q->bn = q->t[pi->scale];
    return 0;
}

/* ---- matmul through cuBLAS ------------------------------------------------------------------ */

/* Stored matrix b (its last two dims r x c, strides sr, sc) seen by
 * cuBLAS as a column-major matrix S with leading dimension *ld: S = b^T
 * when its rows are contiguous (sc == 1), S = b when its columns are
 * (sr == 1). want_t: the product needs b^T rather than b. Sets the op
 * that turns S into what the product needs; -1 when neither is unit. */
static int blas_view(const bench_buf *b, int want_t, cublasOperation_t *op, int *ld)
{
    const int r = b->dims[b->rank - 2], c = b->dims[b->rank - 1];
    const int64_t sr = b->strides[b->rank - 2], sc = b->strides[b->rank - 1];
    int64_t l;
    if (sc == 1 || c == 1) {
        /* S = b^T, c x r: its leading dimension is b's row stride */
        l = r == 1 ? (sr > c ? sr : c) : sr;
        if (l < c) return -1;
        *op = want_t ? CUBLAS_OP_N : CUBLAS_OP_T;
    } else if (sr == 1 || r == 1) {
        /* S = b, r x c */
        l = c == 1 ? (sc > r ? sc : r) : sc;
        if (l < r) return -1;
        *op = want_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    } else {
        return -1;
    }
    if (l > INT_MAX) return -1;
    *ld = (int)l;
    return 0;
}

static long long batch_stride(const bench_buf *b)
{
    return b->rank == 3 && b->dims[0] > 1 ? (long long)b->strides[0] : 0;
}

static int build_matmul(peer *q)
{
    const bench_peer_info *pi = q->pi;
    const bench_problem *p = q->p;
    const bench_buf *a = &p->buf[pi->src], *b = &p->buf[pi->weights], *c = &p->buf[pi->dst];
    if (a->dtype != c->dtype || b->dtype != c->dtype) return none(q);
    switch (c->dtype) {
    case UDNN_DATA_FLOAT: q->gemm.type = CUDA_R_32F; q->gemm.compute = CUBLAS_COMPUTE_32F; break;
    case UDNN_DATA_DOUBLE: q->gemm.type = CUDA_R_64F; q->gemm.compute = CUBLAS_COMPUTE_64F; break;
    case UDNN_DATA_HALF: q->gemm.type = CUDA_R_16F; q->gemm.compute = CUBLAS_COMPUTE_32F; break;
    case UDNN_DATA_BFLOAT16:
        q->gemm.type = CUDA_R_16BF;
        q->gemm.compute = CUBLAS_COMPUTE_32F;
        break;
    default: return none(q);
    }
    const int m = c->dims[c->rank - 2], n = c->dims[c->rank - 1];
    const int k = pi->trans_a ? a->dims[a->rank - 2] : a->dims[a->rank - 1];
    /* row-major C = op(A) op(B): column-major C^T = op(B)^T op(A)^T when C's
     * rows are contiguous, else column-major C = op(A) op(B) */
    const int c_rows = c->strides[c->rank - 1] == 1 || n == 1;
    cublasOperation_t op_c;
    int ld_c;
    if (blas_view(c, 0, &op_c, &ld_c) < 0) return none(q);
    if (c_rows) {
        /* D = C^T (n x m) = L R with L = op(B)^T, R = op(A)^T */
        q->gemm.m = n;
        q->gemm.n = m;
        q->gemm.l = pi->weights;
        q->gemm.r = pi->src;
        if (blas_view(b, !pi->trans_b, &q->gemm.op_l, &q->gemm.ld_l) < 0 ||
            blas_view(a, !pi->trans_a, &q->gemm.op_r, &q->gemm.ld_r) < 0)
            return none(q);
    } else {
        /* D = C (m x n) = L R with L = op(A), R = op(B) */
        q->gemm.m = m;
        q->gemm.n = n;
        q->gemm.l = pi->src;
        q->gemm.r = pi->weights;
        if (blas_view(a, pi->trans_a, &q->gemm.op_l, &q->gemm.ld_l) < 0 ||
            blas_view(b, pi->trans_b, &q->gemm.op_r, &q->gemm.ld_r) < 0)
            return none(q);
    }
    q->gemm.k = k;
    q->gemm.d = pi->dst;
    q->gemm.ld_d = ld_c;
    q->gemm.batch = c->rank == 3 ? c->dims[0] : 1;
    q->gemm.stride_l = batch_stride(&p->buf[q->gemm.l]);
    q->gemm.stride_r = batch_stride(&p->buf[q->gemm.r]);
    q->gemm.stride_d = batch_stride(c);
    return 0;
}

/* ---- one run --------------------------------------------------------------------------------- */

static int peer_run(void *ctx, int set)
{
    peer *q = ctx;
    const bench_peer_info *pi = q->pi;
    void *const *ptr = q->e->ptr[set];
#define P(i) ((i) >= 0 ? ptr[i] : NULL)
#define T(i) ((i) >= 0 ? q->t[i] : NULL)
    const void *al = &q->alpha, *be = &q->beta;
    switch (pi->op) {
    case BENCH_PEER_CONV_FWD:
        DNN(cudnnConvolutionForward(q->dnn, al, T(pi->src), P(pi->src), q->f[pi->weights],
                                    P(pi->weights), q->conv, (cudnnConvolutionFwdAlgo_t)q->algo,
                                    q->ws, q->ws_bytes, be, T(pi->dst), P(pi->dst)),
            "cudnnConvolutionForward");
        return 0;
    case BENCH_PEER_CONV_BWD_DATA:
        DNN(cudnnConvolutionBackwardData(q->dnn, al, q->f[pi->weights], P(pi->weights), T(pi->dst),
                                         P(pi->dst), q->conv,
                                         (cudnnConvolutionBwdDataAlgo_t)q->algo, q->ws,
                                         q->ws_bytes, be, T(pi->src), P(pi->src)),
            "cudnnConvolutionBackwardData");
        return 0;
    case BENCH_PEER_CONV_BWD_FILTER:
        DNN(cudnnConvolutionBackwardFilter(q->dnn, al, T(pi->src), P(pi->src), T(pi->dst),
                                           P(pi->dst), q->conv,
                                           (cudnnConvolutionBwdFilterAlgo_t)q->algo, q->ws,
                                           q->ws_bytes, be, q->f[pi->weights], P(pi->weights)),
            "cudnnConvolutionBackwardFilter");
        return 0;
    case BENCH_PEER_CONV_BWD_BIAS:
        DNN(cudnnConvolutionBackwardBias(q->dnn, al, T(pi->dst), P(pi->dst), be, T(pi->bias),
                                         P(pi->bias)),
            "cudnnConvolutionBackwardBias");
        return 0;
    case BENCH_PEER_CBA:
        DNN(cudnnConvolutionBiasActivationForward(
                q->dnn, al, T(pi->src), P(pi->src), q->f[pi->weights], P(pi->weights), q->conv,
                (cudnnConvolutionFwdAlgo_t)q->algo, q->ws, q->ws_bytes, &q->alpha2, T(pi->z),
                P(pi->z), T(pi->bias), P(pi->bias), q->act, T(pi->dst), P(pi->dst)),
            "cudnnConvolutionBiasActivationForward");
        return 0;
    case BENCH_PEER_ACT_FWD:
        DNN(cudnnActivationForward(q->dnn, q->act, al, T(pi->src), P(pi->src), be, T(pi->dst),
                                   P(pi->dst)),
            "cudnnActivationForward");
        return 0;
    case BENCH_PEER_ACT_BWD:
        DNN(cudnnActivationBackward(q->dnn, q->act, al, T(pi->dst), P(pi->dst), T(pi->diff_dst),
                                    P(pi->diff_dst), T(pi->src), P(pi->src), be,
                                    T(pi->diff_src), P(pi->diff_src)),
            "cudnnActivationBackward");
        return 0;
    case BENCH_PEER_POOL_FWD:
        DNN(cudnnPoolingForward(q->dnn, q->pool, al, T(pi->src), P(pi->src), be, T(pi->dst),
                                P(pi->dst)),
            "cudnnPoolingForward");
        return 0;
    case BENCH_PEER_POOL_BWD:
        DNN(cudnnPoolingBackward(q->dnn, q->pool, al, T(pi->dst), P(pi->dst), T(pi->diff_dst),
                                 P(pi->diff_dst), T(pi->src), P(pi->src), be, T(pi->diff_src),
                                 P(pi->diff_src)),
            "cudnnPoolingBackward");
        return 0;
    case BENCH_PEER_SOFTMAX_FWD:
        DNN(cudnnSoftmaxForward(q->dnn, (cudnnSoftmaxAlgorithm_t)pi->mode,
                                (cudnnSoftmaxMode_t)pi->softmax_mode, al, T(pi->src), P(pi->src),
                                be, T(pi->dst), P(pi->dst)),
            "cudnnSoftmaxForward");
        return 0;
    case BENCH_PEER_SOFTMAX_BWD:
        DNN(cudnnSoftmaxBackward(q->dnn, (cudnnSoftmaxAlgorithm_t)pi->mode,
                                 (cudnnSoftmaxMode_t)pi->softmax_mode, al, T(pi->dst), P(pi->dst),
                                 T(pi->diff_dst), P(pi->diff_dst), be, T(pi->diff_src),
                                 P(pi->diff_src)),
            "cudnnSoftmaxBackward");
        return 0;
    case BENCH_PEER_LRN_FWD:
        DNN(cudnnLRNCrossChannelForward(q->dnn, q->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, al,
                                        T(pi->src), P(pi->src), be, T(pi->dst), P(pi->dst)),
            "cudnnLRNCrossChannelForward");
        return 0;
    case BENCH_PEER_LRN_BWD:
        DNN(cudnnLRNCrossChannelBackward(q->dnn, q->lrn, CUDNN_LRN_CROSS_CHANNEL_DIM1, al,
                                         T(pi->dst), P(pi->dst), T(pi->diff_dst), P(pi->diff_dst),
                                         T(pi->src), P(pi->src), be, T(pi->diff_src),
                                         P(pi->diff_src)),
            "cudnnLRNCrossChannelBackward");
        return 0;
    case BENCH_PEER_BN_FWD_TRAIN:
        DNN(cudnnBatchNormalizationForwardTraining(
                q->dnn, (cudnnBatchNormMode_t)pi->mode, al, be, T(pi->src), P(pi->src), T(pi->dst),
                P(pi->dst), q->bn, P(pi->scale), P(pi->bias), pi->param[1], P(pi->run_mean),
                P(pi->run_var), pi->param[0], P(pi->save_mean), P(pi->save_inv)),
            "cudnnBatchNormalizationForwardTraining");
        return 0;
    case BENCH_PEER_BN_FWD_INFER:
        DNN(cudnnBatchNormalizationForwardInference(
                q->dnn, (cudnnBatchNormMode_t)pi->mode, al, be, T(pi->src), P(pi->src), T(pi->dst),
                P(pi->dst), q->bn, P(pi->scale), P(pi->bias), P(pi->mean), P(pi->var),
                pi->param[0]),
            "cudnnBatchNormalizationForwardInference");
        return 0;
    case BENCH_PEER_BN_BWD:
        DNN(cudnnBatchNormalizationBackward(
                q->dnn, (cudnnBatchNormMode_t)pi->mode, al, be, &q->alpha2, &q->beta2, T(pi->src),
                P(pi->src), T(pi->diff_dst), P(pi->diff_dst), T(pi->diff_src), P(pi->diff_src),
                q->bn, P(pi->scale), P(pi->dscale), P(pi->dbias), pi->param[0], P(pi->save_mean),
                P(pi->save_inv)),
            "cudnnBatchNormalizationBackward");
        return 0;
    case BENCH_PEER_MATMUL: {
        cublasStatus_t st = cublasGemmStridedBatchedEx(
            q->blas, q->gemm.op_l, q->gemm.op_r, q->gemm.m, q->gemm.n, q->gemm.k, al,
            ptr[q->gemm.l], q->gemm.type, q->gemm.ld_l, q->gemm.stride_l, ptr[q->gemm.r],
            q->gemm.type, q->gemm.ld_r, q->gemm.stride_r, be, ptr[q->gemm.d], q->gemm.type,
            q->gemm.ld_d, q->gemm.stride_d, q->gemm.batch, q->gemm.compute, CUBLAS_GEMM_DEFAULT);
        return st == CUBLAS_STATUS_SUCCESS ? 0 : blas_fail(q, st, "cublasGemmStridedBatchedEx");
    }
    default: return none(q);
    }
#undef P
#undef T
}

static int sync_stream(void *ctx)
{
    peer *q = ctx;
    cudaError_t err = cudaStreamSynchronize(q->stream);
    return err == cudaSuccess ? 0 : cuda_fail(q, err, "cudaStreamSynchronize");
}

/* ---- the same answer as udnn's --------------------------------------------------------------- */

/* The output compared: the one every op writes (y, dx, dw, db, c). */
static int main_output(const bench_peer_info *pi)
{
    switch (pi->op) {
    case BENCH_PEER_CONV_BWD_DATA: return pi->src;
    case BENCH_PEER_CONV_BWD_FILTER: return pi->weights;
    case BENCH_PEER_CONV_BWD_BIAS: return pi->bias;
    case BENCH_PEER_ACT_BWD:
    case BENCH_PEER_POOL_BWD:
    case BENCH_PEER_SOFTMAX_BWD:
    case BENCH_PEER_LRN_BWD:
    case BENCH_PEER_BN_BWD: return pi->diff_src;
    default: return pi->dst;
    }
}

/* Runs the peer once on set 0 and compares its output with what udnn left
 * there (its timed runs wrote it from the same inputs); says on stderr
 * when they differ. 0, or -1 when the run failed. */
static int compare_with_udnn(peer *q)
{
    const int o = main_output(q->pi);
    const bench_buf *b = o >= 0 ? &q->p->buf[o] : NULL;
    const int comparable = b != NULL && q->pi->beta == 0.0 && b->io == BENCH_OUT && !b->blend;
    unsigned char *ours = NULL, *udnns = NULL;
    if (comparable && (udnns = malloc(b->bytes)) != NULL &&
        udnnMemcpy(q->e->h, udnns, q->e->ptr[0][o], b->bytes, UDNN_MEMCPY_DEVICE_TO_HOST) !=
            UDNN_STATUS_SUCCESS) {
        free(udnns);
        udnns = NULL;
    }
    if (peer_run(q, 0) < 0 || sync_stream(q) < 0) {
        free(udnns);
        return -1;
    }
    if (udnns != NULL && (ours = malloc(b->bytes)) != NULL &&
        cudaMemcpy(ours, q->e->ptr[0][o], b->bytes, cudaMemcpyDeviceToHost) == cudaSuccess) {
        const double err = bench_rel_error(ours, udnns, b->dtype, b->rank, b->dims, b->strides);
        double tol = bench_tolerance(b->dtype);
        if (tol < q->p->tolerance) tol = q->p->tolerance;
        if (!(err <= 10.0 * tol))
            fprintf(stderr,
                    "udnn-bench: %s %s: the peer's %s differs from udnn's by %.3g (relative): one "
                    "of them computes another problem (udnn's check says whether udnn's is "
                    "right)\n",
                    q->p->family->name, q->p->name, b->role, err);
    }
    free(udnns);
    free(ours);
    return 0;
}

/* ---- the entry ------------------------------------------------------------------------------- */

static void release(peer *q)
{
    for (int i = 0; i < BENCH_MAX_BUFS; i++) {
        if (q->t[i]) cudnnDestroyTensorDescriptor(q->t[i]);
        if (q->f[i]) cudnnDestroyFilterDescriptor(q->f[i]);
    }
    if (q->conv) cudnnDestroyConvolutionDescriptor(q->conv);
    if (q->act) cudnnDestroyActivationDescriptor(q->act);
    if (q->pool) cudnnDestroyPoolingDescriptor(q->pool);
    if (q->lrn) cudnnDestroyLRNDescriptor(q->lrn);
    if (q->ws) udnnFree(q->e->h, q->ws);
}

static int handles(peer *q, int blas)
{
    if (blas) {
        if (blas_handle == NULL) {
            cublasStatus_t st = cublasCreate(&blas_handle);
            if (st != CUBLAS_STATUS_SUCCESS) {
                blas_handle = NULL;
                q->none = 0;
                return blas_fail(q, st, "cublasCreate");
            }
        }
        q->blas = blas_handle;
        cublasStatus_t st = cublasSetStream(q->blas, q->stream);
        if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(q->blas, CUBLAS_DEFAULT_MATH);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = cublasSetPointerMode(q->blas, CUBLAS_POINTER_MODE_HOST);
        return st == CUBLAS_STATUS_SUCCESS ? 0 : blas_fail(q, st, "cublasSetStream");
    }
    if (dnn_handle == NULL) {
        if (cudnnGetVersion() / 10000 != CUDNN_MAJOR) {
            snprintf(q->msg, q->n, "cuDNN %zu was loaded, udnn-bench was built with %d.%d",
                     cudnnGetVersion(), CUDNN_MAJOR, CUDNN_MINOR);
            return -1;
        }
        cudnnStatus_t st = cudnnCreate(&dnn_handle);
        if (st != CUDNN_STATUS_SUCCESS) {
            dnn_handle = NULL;
            dnn_fail(q, st, "cudnnCreate");
            q->none = 0;
            return -1;
        }
    }
    q->dnn = dnn_handle;
    DNN(cudnnSetStream(q->dnn, q->stream), "cudnnSetStream");
    return 0;
}

int bench_cudnn_time(bench_problem *p, bench_exec *e, const bench_timing *t,
                     bench_peer_result *r, char *msg, size_t n)
{
    const bench_peer_info *pi = &p->peer;
    if (pi->op == BENCH_PEER_NONE) return 1;
    memset(r, 0, sizeof *r);
    const int blas = pi->op == BENCH_PEER_MATMUL;
    snprintf(r->name, sizeof r->name, "%s", blas ? "cublas" : "cudnn");
    peer q;
    memset(&q, 0, sizeof q);
    q.p = p;
    q.e = e;
    q.pi = pi;
    q.msg = msg;
    q.n = n;
    q.algo = -1;
    /* the scalars as the op reads them: double for DOUBLE data, else float */
    q.alpha = bench_scalar_of(p->dtype, pi->alpha);
    q.beta = bench_scalar_of(p->dtype, pi->beta);
    q.alpha2 = bench_scalar_of(p->dtype, pi->alpha2);
    q.beta2 = bench_scalar_of(p->dtype, pi->beta2);
    udnnStream_t stream = NULL;
    udnnStatus_t ust = udnnGetStream(e->h, &stream);
    if (ust != UDNN_STATUS_SUCCESS) {
        snprintf(msg, n, "udnnGetStream: %s", udnnGetErrorString(ust));
        return -1;
    }
    q.stream = (cudaStream_t)stream;

    int rc = handles(&q, blas);
    if (rc == 0) {
        switch (pi->op) {
        case BENCH_PEER_CONV_FWD:
        case BENCH_PEER_CONV_BWD_DATA:
        case BENCH_PEER_CONV_BWD_FILTER:
        case BENCH_PEER_CONV_BWD_BIAS:
        case BENCH_PEER_CBA: rc = build_conv(&q); break;
        case BENCH_PEER_ACT_FWD:
        case BENCH_PEER_ACT_BWD: rc = build_act(&q); break;
        case BENCH_PEER_POOL_FWD:
        case BENCH_PEER_POOL_BWD: rc = build_pool(&q); break;
        case BENCH_PEER_SOFTMAX_FWD:
        case BENCH_PEER_SOFTMAX_BWD: rc = build_softmax(&q); break;
        case BENCH_PEER_LRN_FWD:
        case BENCH_PEER_LRN_BWD: rc = build_lrn(&q); break;
        case BENCH_PEER_BN_FWD_TRAIN:
        case BENCH_PEER_BN_FWD_INFER:
        case BENCH_PEER_BN_BWD: rc = build_bn(&q); break;
        case BENCH_PEER_MATMUL: rc = build_matmul(&q); break;
        default: rc = none(&q); break;
        }
    }
    /* one run, compared with udnn's answer; then the timed ones */
    if (rc == 0) rc = compare_with_udnn(&q);
    if (rc == 0) {
        switch (bench_time_loop(peer_run, sync_stream, &q, e->sets, t, e->dev, &r->times)) {
        case 0: break;
        case -1: snprintf(msg, n, "out of memory"); /* fall through */
        default: rc = -1; break;
        }
    }
    /* nothing of the peer's may still run when udnn frees the buffers */
    cudaStreamSynchronize(q.stream);
    release(&q);
    if (rc == 0) return 0;
    return q.none ? 1 : -1;
}
