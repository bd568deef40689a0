/* check_reference_bits.c - UDNN_DETERMINISTIC=reference: every GPU backend
 * present computes the CPU reference's bits. Each op runs from the same
 * inputs on the CPU and on the GPU backend, and the outputs (blended into
 * the same drawn values) must agree byte for byte, in every float type and
 * in NCHW and NHWC: convolution (every direction and the fused op),
 * activation, matmul, pooling, the element-wise tensor ops, ReduceTensor
 * with its indices, softmax, batch normalization, dropout (its mask
 * too), LRN and layer, RMS and group norm, and those that may run in
 * place in place. Without a GPU backend only the mode's dispatch on the CPU
 * is checked. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* The CPU's and the GPU's handle; [0] CPU, [1] GPU. */
static udnnHandle_t hs[2];
static udnnBackend_t gpu_backend;

static void setup(void)
{
    hs[0] = tu_handle(UDNN_BACKEND_CPU);
    hs[1] = tu_handle(gpu_backend);
}

static void teardown(void)
{
    udnnDestroy(hs[0]);
    udnnDestroy(hs[1]);
}

/* b[1]'s payload made b[0]'s (drawn on the CPU) and uploaded. */
static void copy_to_gpu(tu_buf b[2])
{
    memcpy(b[1].host, b[0].host, b[0].bytes);
    tu_buf_upload(&b[1]);
}

/* One tensor on both handles, drawn uniform in [lo, hi]. */
static void twin_drawn(tu_tensor t[2], udnnDataType_t dt, int nb, const int *dims, tu_layout l,
                       double lo, double hi)
{
    for (int i = 0; i < 2; i++) tu_tensor_init(&t[i], hs[i], dt, nb, dims, l);
    tu_fill_uniform(&t[0], lo, hi);
    tu_buf b[2] = {t[0].buf, t[1].buf};
    copy_to_gpu(b);
}

static void twin_tensor(tu_tensor t[2], udnnDataType_t dt, int nb, const int *dims, tu_layout l)
{
    twin_drawn(t, dt, nb, dims, l, -1.0, 1.0);
}

static void twin_filter(tu_filter f[2], udnnDataType_t dt, udnnTensorFormat_t fmt, const int *dims)
{
    for (int i = 0; i < 2; i++) tu_filter_init(&f[i], hs[i], dt, fmt, 4, dims);
    for (int64_t i = 0; i < f[0].count; i++) tu_fset(&f[0], i, tu_uniform(-1.0, 1.0));
    tu_buf_upload(&f[0].buf);
    tu_buf b[2] = {f[0].buf, f[1].buf};
    copy_to_gpu(b);
}

/* Asserts that the two outputs' payloads (gaps, poisoned alike, included)
 * hold the same bytes; the case named printf-style. */
static void assert_same_bytes_v(tu_buf out[2], const char *fmt, va_list ap)
{
    char what[160];
    vsnprintf(what, sizeof what, fmt, ap);
    for (int i = 0; i < 2; i++) tu_buf_download(&out[i]);
    for (size_t k = 0; k < out[0].bytes; k++)
        if (out[0].host[k] != out[1].host[k])
            ck_abort_msg("%s: byte %zu of %zu differs (cpu %02x, %s %02x; seed %llu)", what, k,
                         out[0].bytes, out[0].host[k], tu_backend_name(gpu_backend), out[1].host[k],
                         (unsigned long long)tu_seed_used());
}

static void assert_same_bytes(tu_buf out[2], const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    assert_same_bytes_v(out, fmt, ap);
    va_end(ap);
}

static void assert_same_tensor(tu_tensor t[2], const char *fmt, ...)
{
    tu_buf out[2] = {t[0].buf, t[1].buf};
    va_list ap;
    va_start(ap, fmt);
    assert_same_bytes_v(out, fmt, ap);
    va_end(ap);
}

/* Frees each twin tensor given, up to a NULL. */
static void twins_free(tu_tensor *t, ...)
{
    va_list ap;
    va_start(ap, t);
    for (; t != NULL; t = va_arg(ap, tu_tensor *)) {
        tu_tensor_free(&t[0]);
        tu_tensor_free(&t[1]);
    }
    va_end(ap);
}

static udnnDataType_t compute_type(udnnDataType_t t)
{
    return t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
}

/* ---- convolution ------------------------------------------------------------------- */

/* x dims, w dims, pad, stride, dilation, groups, mode */
typedef struct {
    int x[4], w[4], pad[2], stride[2], dil[2], groups;
    udnnConvolutionMode_t mode;
} conv_case;

static const conv_case conv_cases[] = {
    {{2, 3, 9, 9}, {4, 3, 3, 3}, {1, 1}, {2, 2}, {1, 1}, 1, UDNN_CROSS_CORRELATION},
    {{2, 4, 8, 7}, {6, 2, 3, 2}, {2, 1}, {1, 1}, {2, 1}, 2, UDNN_CONVOLUTION},
};
#define N_CONV ((int)(sizeof conv_cases / sizeof *conv_cases))

/* Every direction of one case: forward, backward data, backward filter,
 * backward bias and the fused conv-bias-ReLU, alpha 0.75 and beta 0.5. */
static void check_conv(const conv_case *cc, udnnDataType_t dt, tu_layout l)
{
    const udnnTensorFormat_t fmt = l == TU_NHWC ? UDNN_TENSOR_NHWC : UDNN_TENSOR_NCHW;
    tu_tensor x[2], y[2], z[2], dx[2], dy[2], bias[2], db[2];
    tu_filter w[2], dw[2];
    udnnConvolutionDescriptor_t conv;
    tu_ok(udnnCreateConvolutionDescriptor(&conv));
    tu_ok(udnnSetConvolutionNdDescriptor(conv, 2, cc->pad, cc->stride, cc->dil, cc->mode,
                                         compute_type(dt)));
    tu_ok(udnnSetConvolutionGroupCount(conv, cc->groups));
    udnnActivationDescriptor_t relu;
    tu_ok(udnnCreateActivationDescriptor(&relu));
    tu_ok(udnnSetActivationDescriptor(relu, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    twin_tensor(x, dt, 4, cc->x, l);
    twin_tensor(dx, dt, 4, cc->x, l);
    twin_filter(w, dt, fmt, cc->w);
    twin_filter(dw, dt, fmt, cc->w);
    int ydims[4];
    tu_ok(udnnGetConvolutionNdForwardOutputDim(conv, x[0].desc, w[0].desc, 4, ydims));
    twin_tensor(y, dt, 4, ydims, l);
    twin_tensor(z, dt, 4, ydims, l);
    twin_tensor(dy, dt, 4, ydims, l);
    const int cdims[4] = {1, ydims[1], 1, 1};
    twin_tensor(bias, dt, 4, cdims, TU_NCHW);
    twin_tensor(db, dt, 4, cdims, TU_NCHW);
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    char what[128];
    snprintf(what, sizeof what, "%s %s groups %d", tu_dtype_name(dt), tu_layout_name(l),
             cc->groups);
    for (int i = 0; i < 2; i++) {
        const udnnHandle_t h = hs[i];
        tu_ok(udnnConvolutionForward(h, &alpha, x[i].desc, tu_buf_ptr(&x[i].buf), w[i].desc,
                                     tu_buf_ptr(&w[i].buf), conv,
                                     UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &beta,
                                     y[i].desc, tu_buf_ptr(&y[i].buf)));
        tu_ok(udnnConvolutionBackwardData(
            h, &alpha, w[i].desc, tu_buf_ptr(&w[i].buf), dy[i].desc, tu_buf_ptr(&dy[i].buf), conv,
            UDNN_CONVOLUTION_BWD_DATA_ALGO_0, NULL, 0, &beta, dx[i].desc, tu_buf_ptr(&dx[i].buf)));
        tu_ok(udnnConvolutionBackwardFilter(h, &alpha, x[i].desc, tu_buf_ptr(&x[i].buf), dy[i].desc,
                                            tu_buf_ptr(&dy[i].buf), conv,
                                            UDNN_CONVOLUTION_BWD_FILTER_ALGO_0, NULL, 0, &beta,
                                            dw[i].desc, tu_buf_ptr(&dw[i].buf)));
        tu_ok(udnnConvolutionBackwardBias(h, &alpha, dy[i].desc, tu_buf_ptr(&dy[i].buf), &beta,
                                          db[i].desc, tu_buf_ptr(&db[i].buf)));
        /* z becomes act(0.75 conv + 0.5 z + bias) in place */
        tu_ok(udnnConvolutionBiasActivationForward(
            h, &alpha, x[i].desc, tu_buf_ptr(&x[i].buf), w[i].desc, tu_buf_ptr(&w[i].buf), conv,
            UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL, 0, &beta, z[i].desc,
            tu_buf_ptr(&z[i].buf), bias[i].desc, tu_buf_ptr(&bias[i].buf), relu, z[i].desc,
            tu_buf_ptr(&z[i].buf)));
    }
    assert_same_tensor(y, "conv fwd %s", what);
    assert_same_tensor(dx, "conv bwd data %s", what);
    assert_same_bytes((tu_buf[2]){dw[0].buf, dw[1].buf}, "conv bwd filter %s", what);
    assert_same_tensor(db, "conv bwd bias %s", what);
    assert_same_tensor(z, "conv bias relu %s", what);
    twins_free(x, y, z, dx, dy, bias, db, NULL);
    for (int i = 0; i < 2; i++) {
        tu_filter_free(&w[i]);
        tu_filter_free(&dw[i]);
    }
    udnnDestroyActivationDescriptor(relu);
    udnnDestroyConvolutionDescriptor(conv);
}

/* _i: type x layout (NCHW, NHWC) */
START_TEST(test_conv)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    for (int c = 0; c < N_CONV; c++) check_conv(&conv_cases[c], dt, l);
}
END_TEST

/* ---- activation -------------------------------------------------------------------- */

static void check_act(udnnActivationMode_t mode, double coef, udnnDataType_t dt, tu_layout l)
{
    static const int dims[4] = {2, 3, 5, 7};
    tu_tensor x[2], y[2], dx[2], dy[2];
    twin_drawn(x, dt, 4, dims, l, -8.0, 8.0);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    twin_tensor(dy, dt, 4, dims, l);
    udnnActivationDescriptor_t act;
    tu_ok(udnnCreateActivationDescriptor(&act));
    tu_ok(udnnSetActivationDescriptor(act, mode, UDNN_NOT_PROPAGATE_NAN, coef));
    tu_ok(udnnSetActivationDescriptorSwishBeta(act, 1.5));
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++) {
        tu_ok(udnnActivationForward(hs[i], act, &alpha, x[i].desc, tu_buf_ptr(&x[i].buf), &beta,
                                    y[i].desc, tu_buf_ptr(&y[i].buf)));
        tu_ok(udnnActivationBackward(hs[i], act, &alpha, y[i].desc, tu_buf_ptr(&y[i].buf),
                                     dy[i].desc, tu_buf_ptr(&dy[i].buf), x[i].desc,
                                     tu_buf_ptr(&x[i].buf), &beta, dx[i].desc,
                                     tu_buf_ptr(&dx[i].buf)));
    }
    assert_same_tensor(y, "activation %d fwd %s %s", (int)mode, tu_dtype_name(dt),
                       tu_layout_name(l));
    assert_same_tensor(dx, "activation %d bwd %s %s", (int)mode, tu_dtype_name(dt),
                       tu_layout_name(l));
    udnnDestroyActivationDescriptor(act);
    twins_free(x, y, dx, dy, NULL);
}

/* every mode, those built on exp, tanh and erf too (backends/ref/math.h):
 * x drawn in [-8, 8], coef 0.5, swish beta 1.5 */
START_TEST(test_activation)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    static const udnnActivationMode_t modes[] = {
        UDNN_ACTIVATION_SIGMOID,      UDNN_ACTIVATION_RELU,       UDNN_ACTIVATION_TANH,
        UDNN_ACTIVATION_CLIPPED_RELU, UDNN_ACTIVATION_ELU,        UDNN_ACTIVATION_IDENTITY,
        UDNN_ACTIVATION_SWISH,        UDNN_ACTIVATION_LEAKY_RELU, UDNN_ACTIVATION_GELU,
        UDNN_ACTIVATION_GELU_TANH,    UDNN_ACTIVATION_SOFTPLUS,   UDNN_ACTIVATION_MISH,
        UDNN_ACTIVATION_HARDSWISH};
    for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) check_act(modes[m], 0.5, dt, l);
}
END_TEST

/* ---- matmul ------------------------------------------------------------------------ */

START_TEST(test_matmul)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const int trans_a = _i / 4 % 2, trans_b = _i / 8;
    enum { B = 2, M = 5, N = 7, K = 33 };
    const int adims[3] = {B, trans_a ? K : M, trans_a ? M : K};
    const int bdims[3] = {B, trans_b ? N : K, trans_b ? K : N}, cdims[3] = {B, M, N};
    tu_tensor a[2], b[2], c[2];
    twin_tensor(a, dt, 3, adims, TU_NCHW);
    twin_tensor(b, dt, 3, bdims, TU_NCHW);
    twin_tensor(c, dt, 3, cdims, TU_NCHW);
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++)
        tu_ok(udnnMatMul(hs[i], trans_a, trans_b, &alpha, a[i].desc, tu_buf_ptr(&a[i].buf),
                         b[i].desc, tu_buf_ptr(&b[i].buf), &beta, c[i].desc,
                         tu_buf_ptr(&c[i].buf)));
    assert_same_tensor(c, "matmul %s trans %d %d", tu_dtype_name(dt), trans_a, trans_b);
    twins_free(a, b, c, NULL);
}
END_TEST

/* ---- pooling ----------------------------------------------------------------------- */

/* Forward and backward of a 3 x 3 window, stride 2, pad 1, in mode m. */
static void check_pool(udnnPoolingMode_t m, udnnDataType_t dt, tu_layout l)
{
    static const int xdims[4] = {2, 3, 9, 8}, win[2] = {3, 3}, pad[2] = {1, 1}, str[2] = {2, 2};
    udnnPoolingDescriptor_t pool;
    tu_ok(udnnCreatePoolingDescriptor(&pool));
    tu_ok(udnnSetPoolingNdDescriptor(pool, m, UDNN_NOT_PROPAGATE_NAN, 2, win, pad, str));
    tu_tensor x[2], y[2], dx[2], dy[2];
    twin_tensor(x, dt, 4, xdims, l);
    twin_tensor(dx, dt, 4, xdims, l);
    int ydims[4];
    tu_ok(udnnGetPoolingNdForwardOutputDim(pool, x[0].desc, 4, ydims));
    twin_tensor(y, dt, 4, ydims, l);
    twin_tensor(dy, dt, 4, ydims, l);
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++) {
        tu_ok(udnnPoolingForward(hs[i], pool, &alpha, x[i].desc, tu_buf_ptr(&x[i].buf), &beta,
                                 y[i].desc, tu_buf_ptr(&y[i].buf)));
        tu_ok(udnnPoolingBackward(hs[i], pool, &alpha, y[i].desc, tu_buf_ptr(&y[i].buf), dy[i].desc,
                                  tu_buf_ptr(&dy[i].buf), x[i].desc, tu_buf_ptr(&x[i].buf), &beta,
                                  dx[i].desc, tu_buf_ptr(&dx[i].buf)));
    }
    assert_same_tensor(y, "pooling %d fwd %s %s", (int)m, tu_dtype_name(dt), tu_layout_name(l));
    assert_same_tensor(dx, "pooling %d bwd %s %s", (int)m, tu_dtype_name(dt), tu_layout_name(l));
    udnnDestroyPoolingDescriptor(pool);
    twins_free(x, y, dx, dy, NULL);
}

START_TEST(test_pooling)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    check_pool(UDNN_POOLING_MAX, dt, l);
    check_pool(UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, dt, l);
    check_pool(UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, dt, l);
}
END_TEST

/* ---- element-wise tensor ops ------------------------------------------------------- */

/* OpTensor's op on a and b (b broadcast over H and W), 0.75 a, -1.25 b,
 * beta 0.5; a drawn in [0, 1] so that SQRT stays real. */
static void check_op_tensor(udnnOpTensorOp_t op, udnnDataType_t dt, tu_layout l)
{
    static const int dims[4] = {2, 3, 5, 7}, bdims[4] = {2, 3, 1, 1};
    tu_tensor a[2], b[2], c[2];
    twin_drawn(a, dt, 4, dims, l, 0.0, 1.0);
    twin_tensor(b, dt, 4, bdims, l);
    twin_tensor(c, dt, 4, dims, l);
    udnnOpTensorDescriptor_t d;
    tu_ok(udnnCreateOpTensorDescriptor(&d));
    tu_ok(udnnSetOpTensorDescriptor(d, op, compute_type(dt), UDNN_NOT_PROPAGATE_NAN));
    const tu_scalar a1 = tu_scalar_of(dt, 0.75), a2 = tu_scalar_of(dt, -1.25),
                    beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++)
        tu_ok(udnnOpTensor(hs[i], d, &a1, a[i].desc, tu_buf_ptr(&a[i].buf), &a2, b[i].desc,
                           tu_buf_ptr(&b[i].buf), &beta, c[i].desc, tu_buf_ptr(&c[i].buf)));
    assert_same_tensor(c, "op tensor %d %s %s", (int)op, tu_dtype_name(dt), tu_layout_name(l));
    udnnDestroyOpTensorDescriptor(d);
    twins_free(a, b, c, NULL);
}

/* AddTensor of a bias, ScaleTensor, SetTensor, and TransformTensor into
 * the other layout. */
static void check_tensor_ops(udnnDataType_t dt, tu_layout l)
{
    static const int dims[4] = {2, 3, 5, 7}, bdims[4] = {1, 3, 1, 1};
    tu_tensor a[2], bias[2], c[2], t[2];
    twin_tensor(a, dt, 4, dims, l);
    twin_tensor(bias, dt, 4, bdims, l);
    twin_tensor(c, dt, 4, dims, l);
    twin_tensor(t, dt, 4, dims, l == TU_NHWC ? TU_NCHW : TU_NHWC);
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5),
                    value = tu_scalar_of(dt, -0.3);
    for (int i = 0; i < 2; i++) {
        tu_ok(udnnAddTensor(hs[i], &alpha, bias[i].desc, tu_buf_ptr(&bias[i].buf), &beta, c[i].desc,
                            tu_buf_ptr(&c[i].buf)));
        tu_ok(udnnScaleTensor(hs[i], c[i].desc, tu_buf_ptr(&c[i].buf), &alpha));
        tu_ok(udnnTransformTensor(hs[i], &alpha, a[i].desc, tu_buf_ptr(&a[i].buf), &beta, t[i].desc,
                                  tu_buf_ptr(&t[i].buf)));
        tu_ok(udnnSetTensor(hs[i], a[i].desc, tu_buf_ptr(&a[i].buf), &value));
    }
    assert_same_tensor(c, "add and scale tensor %s %s", tu_dtype_name(dt), tu_layout_name(l));
    assert_same_tensor(t, "transform tensor %s %s", tu_dtype_name(dt), tu_layout_name(l));
    assert_same_tensor(a, "set tensor %s %s", tu_dtype_name(dt), tu_layout_name(l));
    twins_free(a, bias, c, t, NULL);
}

START_TEST(test_tensor_ops)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    static const udnnOpTensorOp_t ops[] = {UDNN_OP_TENSOR_ADD, UDNN_OP_TENSOR_MUL,
                                           UDNN_OP_TENSOR_MAX, UDNN_OP_TENSOR_SQRT};
    for (int k = 0; k < 4; k++) check_op_tensor(ops[k], dt, l);
    check_tensor_ops(dt, l);
}
END_TEST

/* ---- reduction --------------------------------------------------------------------- */

/* op over H and C (c is N x 1 x 1 x W), alpha 0.75, beta 0.5; MAX with
 * 32-bit indices, which must agree too. */
static void check_reduce(udnnReduceTensorOp_t op, udnnDataType_t dt)
{
    static const int adims[4] = {2, 3, 5, 7}, cdims[4] = {2, 1, 1, 7};
    const int with_indices = op == UDNN_REDUCE_TENSOR_MAX;
    tu_tensor a[2], c[2];
    twin_tensor(a, dt, 4, adims, TU_NCHW);
    twin_tensor(c, dt, 4, cdims, TU_NCHW);
    udnnReduceTensorDescriptor_t d;
    tu_ok(udnnCreateReduceTensorDescriptor(&d));
    tu_ok(udnnSetReduceTensorDescriptor(d, op, compute_type(dt), UDNN_NOT_PROPAGATE_NAN,
                                        with_indices ? UDNN_REDUCE_TENSOR_FLATTENED_INDICES
                                                     : UDNN_REDUCE_TENSOR_NO_INDICES,
                                        UDNN_32BIT_INDICES));
    tu_buf idx[2], ws[2];
    size_t idx_bytes, ws_bytes;
    tu_ok(udnnGetReductionIndicesSize(hs[0], d, a[0].desc, c[0].desc, &idx_bytes));
    tu_ok(udnnGetReductionWorkspaceSize(hs[1], d, a[1].desc, c[1].desc, &ws_bytes));
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++) {
        tu_buf_init(&idx[i], hs[i], idx_bytes > 0 ? idx_bytes : 1);
        tu_buf_init(&ws[i], hs[i], ws_bytes > 0 ? ws_bytes : 1);
        tu_ok(udnnReduceTensor(hs[i], d, with_indices ? tu_buf_ptr(&idx[i]) : NULL,
                               with_indices ? idx_bytes : 0, tu_buf_ptr(&ws[i]), ws_bytes, &alpha,
                               a[i].desc, tu_buf_ptr(&a[i].buf), &beta, c[i].desc,
                               tu_buf_ptr(&c[i].buf)));
    }
    assert_same_tensor(c, "reduce %d %s", (int)op, tu_dtype_name(dt));
    if (with_indices) {
        assert_same_bytes(idx, "reduce %d %s indices", (int)op, tu_dtype_name(dt));
    }
    for (int i = 0; i < 2; i++) {
        tu_buf_free(&idx[i]);
        tu_buf_free(&ws[i]);
    }
    udnnDestroyReduceTensorDescriptor(d);
    twins_free(a, c, NULL);
}

START_TEST(test_reduce)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i];
    static const udnnReduceTensorOp_t ops[] = {UDNN_REDUCE_TENSOR_ADD, UDNN_REDUCE_TENSOR_MAX,
                                               UDNN_REDUCE_TENSOR_AVG, UDNN_REDUCE_TENSOR_NORM2};
    for (int k = 0; k < 4; k++) check_reduce(ops[k], dt);
}
END_TEST

/* ---- softmax ----------------------------------------------------------------------- */

static void check_softmax(udnnSoftmaxAlgorithm_t alg, udnnSoftmaxMode_t mode, udnnDataType_t dt,
                          tu_layout l)
{
    static const int dims[4] = {3, 4, 5, 6};
    tu_tensor x[2], y[2], dy[2], dx[2];
    twin_drawn(x, dt, 4, dims, l, -4.0, 4.0);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(dy, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    const tu_scalar one = tu_scalar_of(dt, 1.0), zero = tu_scalar_of(dt, 0.0),
                    alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++) {
        /* y whole (the backward reads it as the forward's output) */
        tu_ok(udnnSoftmaxForward(hs[i], alg, mode, &one, x[i].desc, tu_buf_ptr(&x[i].buf), &zero,
                                 y[i].desc, tu_buf_ptr(&y[i].buf)));
        tu_ok(udnnSoftmaxBackward(hs[i], alg, mode, &alpha, y[i].desc, tu_buf_ptr(&y[i].buf),
                                  dy[i].desc, tu_buf_ptr(&dy[i].buf), &beta, dx[i].desc,
                                  tu_buf_ptr(&dx[i].buf)));
    }
    assert_same_tensor(y, "softmax %d mode %d fwd %s %s", (int)alg, (int)mode, tu_dtype_name(dt),
                       tu_layout_name(l));
    assert_same_tensor(dx, "softmax %d mode %d bwd %s %s", (int)alg, (int)mode, tu_dtype_name(dt),
                       tu_layout_name(l));
    twins_free(x, y, dy, dx, NULL);
}

START_TEST(test_softmax)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    static const udnnSoftmaxAlgorithm_t algs[] = {UDNN_SOFTMAX_FAST, UDNN_SOFTMAX_ACCURATE,
                                                  UDNN_SOFTMAX_LOG};
    for (int a = 0; a < 3; a++) {
        check_softmax(algs[a], UDNN_SOFTMAX_MODE_INSTANCE, dt, l);
        check_softmax(algs[a], UDNN_SOFTMAX_MODE_CHANNEL, dt, l);
    }
}
END_TEST

/* ---- batch normalization ----------------------------------------------------------- */

/* Training (running and saved statistics), inference from the running
 * ones, backward with the saved ones and without. */
static void check_bn(udnnBatchNormMode_t mode, udnnDataType_t dt, tu_layout l)
{
    static const int dims[4] = {3, 4, 5, 6};
    const int pdims[4] = {1, 4, mode == UDNN_BATCHNORM_PER_ACTIVATION ? 5 : 1,
                          mode == UDNN_BATCHNORM_PER_ACTIVATION ? 6 : 1};
    const udnnDataType_t pt =
        dt == UDNN_DATA_HALF || dt == UDNN_DATA_BFLOAT16 ? UDNN_DATA_FLOAT : dt;
    tu_tensor x[2], y[2], z[2], dy[2], dx[2], dx2[2];
    tu_tensor scale[2], bias[2], rmean[2], rvar[2], smean[2], sinv[2], ds[2], db[2];
    twin_drawn(x, dt, 4, dims, l, -1.0, 3.0);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(z, dt, 4, dims, l);
    twin_tensor(dy, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    twin_tensor(dx2, dt, 4, dims, l);
    twin_tensor(scale, pt, 4, pdims, TU_NCHW);
    twin_tensor(bias, pt, 4, pdims, TU_NCHW);
    twin_tensor(rmean, pt, 4, pdims, TU_NCHW);
    twin_drawn(rvar, pt, 4, pdims, TU_NCHW, 0.5, 1.5);
    twin_tensor(smean, pt, 4, pdims, TU_NCHW);
    twin_tensor(sinv, pt, 4, pdims, TU_NCHW);
    twin_tensor(ds, pt, 4, pdims, TU_NCHW);
    twin_tensor(db, pt, 4, pdims, TU_NCHW);
    const tu_scalar alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    const double eps = 1e-3;
#define P(t) tu_buf_ptr(&t[i].buf)
    for (int i = 0; i < 2; i++) {
        tu_ok(udnnBatchNormalizationForwardTraining(
            hs[i], mode, &alpha, &beta, x[i].desc, P(x), y[i].desc, P(y), scale[i].desc, P(scale),
            P(bias), 0.25, P(rmean), P(rvar), eps, P(smean), P(sinv)));
        tu_ok(udnnBatchNormalizationForwardInference(hs[i], mode, &alpha, &beta, x[i].desc, P(x),
                                                     z[i].desc, P(z), scale[i].desc, P(scale),
                                                     P(bias), P(rmean), P(rvar), eps));
        tu_ok(udnnBatchNormalizationBackward(
            hs[i], mode, &alpha, &beta, &alpha, &beta, x[i].desc, P(x), dy[i].desc, P(dy),
            dx[i].desc, P(dx), scale[i].desc, P(scale), P(ds), P(db), eps, P(smean), P(sinv)));
        tu_ok(udnnBatchNormalizationBackward(
            hs[i], mode, &alpha, &beta, &alpha, &beta, x[i].desc, P(x), dy[i].desc, P(dy),
            dx2[i].desc, P(dx2), scale[i].desc, P(scale), P(ds), P(db), eps, NULL, NULL));
    }
#undef P
    tu_tensor *outs[] = {y, rmean, rvar, smean, sinv, z, dx, dx2, ds, db};
    static const char *const names[] = {"y",         "running mean", "running var", "saved mean",
                                        "saved inv", "inference y",  "dx (saved)",  "dx",
                                        "dscale",    "dbias"};
    for (int k = 0; k < 10; k++) {
        assert_same_tensor(outs[k], "batch norm %d %s %s: %s", (int)mode, tu_dtype_name(dt),
                           tu_layout_name(l), names[k]);
        twins_free(outs[k], NULL);
    }
    twins_free(x, dy, scale, bias, NULL);
}

START_TEST(test_batchnorm)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    check_bn(UDNN_BATCHNORM_SPATIAL, dt, l);
    check_bn(UDNN_BATCHNORM_PER_ACTIVATION, dt, l);
}
END_TEST

/* ---- dropout ----------------------------------------------------------------------- */

/* Two forward calls (the second draws the next mask) and a backward. */
START_TEST(test_dropout)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    static const int dims[4] = {2, 3, 5, 7};
    tu_tensor x[2], y[2], dx[2];
    twin_tensor(x, dt, 4, dims, l);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    size_t state_bytes, reserve_bytes;
    tu_ok(udnnDropoutGetStatesSize(hs[1], &state_bytes));
    tu_ok(udnnDropoutGetReserveSpaceSize(x[0].desc, &reserve_bytes));
    tu_buf states[2], reserve[2];
    udnnDropoutDescriptor_t d[2];
    for (int i = 0; i < 2; i++) {
        tu_buf_init(&states[i], hs[i], state_bytes);
        tu_buf_init(&reserve[i], hs[i], reserve_bytes);
        tu_ok(udnnCreateDropoutDescriptor(&d[i]));
        tu_ok(
            udnnSetDropoutDescriptor(d[i], hs[i], 0.3f, tu_buf_ptr(&states[i]), state_bytes, 1234));
        for (int call = 0; call < 2; call++)
            tu_ok(udnnDropoutForward(hs[i], d[i], x[i].desc, tu_buf_ptr(&x[i].buf), y[i].desc,
                                     tu_buf_ptr(&y[i].buf), tu_buf_ptr(&reserve[i]),
                                     reserve_bytes));
        tu_ok(udnnDropoutBackward(hs[i], d[i], y[i].desc, tu_buf_ptr(&y[i].buf), dx[i].desc,
                                  tu_buf_ptr(&dx[i].buf), tu_buf_ptr(&reserve[i]), reserve_bytes));
    }
    assert_same_tensor(y, "dropout fwd %s %s", tu_dtype_name(dt), tu_layout_name(l));
    assert_same_bytes(reserve, "dropout mask %s %s", tu_dtype_name(dt), tu_layout_name(l));
    assert_same_tensor(dx, "dropout bwd %s %s", tu_dtype_name(dt), tu_layout_name(l));
    for (int i = 0; i < 2; i++) {
        udnnDestroyDropoutDescriptor(d[i]);
        tu_buf_free(&states[i]);
        tu_buf_free(&reserve[i]);
    }
    twins_free(x, y, dx, NULL);
}
END_TEST

/* ---- LRN ----------------------------------------------------------------------------- */

START_TEST(test_lrn)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    static const int dims[4] = {2, 7, 3, 4};
    tu_tensor x[2], y[2], dy[2], dx[2];
    twin_tensor(x, dt, 4, dims, l);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(dy, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    udnnLRNDescriptor_t d;
    tu_ok(udnnCreateLRNDescriptor(&d));
    tu_ok(udnnSetLRNDescriptor(d, 5, 0.5, 0.75, 1.5));
    const tu_scalar one = tu_scalar_of(dt, 1.0), zero = tu_scalar_of(dt, 0.0),
                    alpha = tu_scalar_of(dt, 0.75), beta = tu_scalar_of(dt, 0.5);
    for (int i = 0; i < 2; i++) {
        tu_ok(udnnLRNCrossChannelForward(hs[i], d, UDNN_LRN_CROSS_CHANNEL_DIM1, &one, x[i].desc,
                                         tu_buf_ptr(&x[i].buf), &zero, y[i].desc,
                                         tu_buf_ptr(&y[i].buf)));
        tu_ok(udnnLRNCrossChannelBackward(hs[i], d, UDNN_LRN_CROSS_CHANNEL_DIM1, &alpha, y[i].desc,
                                          tu_buf_ptr(&y[i].buf), dy[i].desc, tu_buf_ptr(&dy[i].buf),
                                          x[i].desc, tu_buf_ptr(&x[i].buf), &beta, dx[i].desc,
                                          tu_buf_ptr(&dx[i].buf)));
    }
    assert_same_tensor(y, "lrn fwd %s %s", tu_dtype_name(dt), tu_layout_name(l));
    assert_same_tensor(dx, "lrn bwd %s %s", tu_dtype_name(dt), tu_layout_name(l));
    udnnDestroyLRNDescriptor(d);
    twins_free(x, y, dy, dx, NULL);
}
END_TEST

/* ---- layer, RMS and group norm ------------------------------------------------------ */

/* groups 0: layer norm (RMS where rms) over the last 2 dims; else group
 * norm. Forward with saved statistics, then the backward from them. */
static void check_norm(int groups, int rms, udnnDataType_t dt, tu_layout l)
{
    static const int dims[4] = {2, 6, 3, 5};
    const int pdims[4] = {1, groups ? 6 : 1, groups ? 1 : 3, groups ? 1 : 5};
    const int sdims[4] = {2, groups ? groups : 6, 1, 1};
    const udnnDataType_t pt = dt == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    const udnnNormMode_t mode = rms ? UDNN_NORM_RMS : UDNN_NORM_LAYER;
    tu_tensor x[2], y[2], dy[2], dx[2], scale[2], bias[2], mean[2], inv[2], ds[2], db[2];
    twin_tensor(x, dt, 4, dims, l);
    twin_tensor(y, dt, 4, dims, l);
    twin_tensor(dy, dt, 4, dims, l);
    twin_tensor(dx, dt, 4, dims, l);
    twin_tensor(scale, pt, 4, pdims, TU_NCHW);
    twin_tensor(bias, pt, 4, pdims, TU_NCHW);
    twin_tensor(mean, pt, 4, sdims, TU_NCHW);
    twin_tensor(inv, pt, 4, sdims, TU_NCHW);
    twin_tensor(ds, pt, 4, pdims, TU_NCHW);
    twin_tensor(db, pt, 4, pdims, TU_NCHW);
    for (int i = 0; i < 2; i++) {
        void *xp = tu_buf_ptr(&x[i].buf), *sp = tu_buf_ptr(&scale[i].buf);
        void *mp = tu_buf_ptr(&mean[i].buf), *ip = tu_buf_ptr(&inv[i].buf);
        if (groups) {
            tu_ok(udnnGroupNormForward(hs[i], groups, 1e-3, x[i].desc, xp, scale[i].desc, sp,
                                       tu_buf_ptr(&bias[i].buf), y[i].desc, tu_buf_ptr(&y[i].buf),
                                       mean[i].desc, mp, ip));
            tu_ok(udnnGroupNormBackward(hs[i], groups, x[i].desc, xp, dy[i].desc,
                                        tu_buf_ptr(&dy[i].buf), scale[i].desc, sp, mean[i].desc, mp,
                                        ip, dx[i].desc, tu_buf_ptr(&dx[i].buf),
                                        tu_buf_ptr(&ds[i].buf), tu_buf_ptr(&db[i].buf)));
        } else {
            tu_ok(udnnNormForward(hs[i], mode, 2, 1e-3, x[i].desc, xp, scale[i].desc, sp,
                                  tu_buf_ptr(&bias[i].buf), y[i].desc, tu_buf_ptr(&y[i].buf),
                                  mean[i].desc, mp, ip));
            tu_ok(udnnNormBackward(hs[i], mode, 2, x[i].desc, xp, dy[i].desc,
                                   tu_buf_ptr(&dy[i].buf), scale[i].desc, sp, mean[i].desc, mp, ip,
                                   dx[i].desc, tu_buf_ptr(&dx[i].buf), tu_buf_ptr(&ds[i].buf),
                                   tu_buf_ptr(&db[i].buf)));
        }
    }
    tu_tensor *outs[] = {y, mean, inv, dx, ds, db};
    static const char *const names[] = {"y", "saved mean", "saved inv", "dx", "dscale", "dbias"};
    for (int k = 0; k < 6; k++) {
        assert_same_tensor(outs[k], "norm (groups %d, rms %d) %s %s: %s", groups, rms,
                           tu_dtype_name(dt), tu_layout_name(l), names[k]);
        twins_free(outs[k], NULL);
    }
    twins_free(x, dy, scale, bias, NULL);
}

START_TEST(test_norm)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    check_norm(0, 0, dt, l);
    check_norm(0, 1, dt, l);
    check_norm(3, 0, dt, l);
}
END_TEST

/* ---- in place --------------------------------------------------------------------- */

/* The ops that may write over an input, each in place on both backends:
 * activation (y over x, dx over dy), softmax (the same), batch norm
 * training (y over x), layer norm (y over x, dx over dy) and dropout (y
 * over x). A GPU thread reads its element, group, feature or set before
 * writing it, as the CPU's loop does. */
START_TEST(test_in_place)
{
    tu_seed_fresh();
    const udnnDataType_t dt = tu_float_types[_i % 4];
    const tu_layout l = _i / 4 ? TU_NHWC : TU_NCHW;
    const udnnDataType_t pt = dt == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    static const int dims[4] = {3, 4, 5, 6}, cdims[4] = {1, 4, 1, 1}, ldims[4] = {1, 1, 5, 6};
    static const int sdims[4] = {3, 4, 1, 1};
    tu_tensor act_x[2], act_dy[2], sm_x[2], sm_dy[2], bn_x[2], ln_x[2], ln_dy[2], dr_x[2];
    tu_tensor scale[2], bias[2], lscale[2], lbias[2], mean[2], inv[2], ds[2], db[2];
    twin_drawn(act_x, dt, 4, dims, l, -4.0, 4.0);
    twin_tensor(act_dy, dt, 4, dims, l);
    twin_drawn(sm_x, dt, 4, dims, l, -4.0, 4.0);
    twin_tensor(sm_dy, dt, 4, dims, l);
    twin_drawn(bn_x, dt, 4, dims, l, -1.0, 3.0);
    twin_drawn(ln_x, dt, 4, dims, l, -1.0, 3.0);
    twin_tensor(ln_dy, dt, 4, dims, l);
    twin_tensor(dr_x, dt, 4, dims, l);
    twin_tensor(scale, pt, 4, cdims, TU_NCHW);
    twin_tensor(bias, pt, 4, cdims, TU_NCHW);
    twin_tensor(lscale, pt, 4, ldims, TU_NCHW);
    twin_tensor(lbias, pt, 4, ldims, TU_NCHW);
    twin_tensor(mean, pt, 4, sdims, TU_NCHW);
    twin_tensor(inv, pt, 4, sdims, TU_NCHW);
    twin_tensor(ds, pt, 4, ldims, TU_NCHW);
    twin_tensor(db, pt, 4, ldims, TU_NCHW);
    const tu_scalar one = tu_scalar_of(dt, 1.0), zero = tu_scalar_of(dt, 0.0);
    udnnActivationDescriptor_t act;
    tu_ok(udnnCreateActivationDescriptor(&act));
    tu_ok(udnnSetActivationDescriptor(act, UDNN_ACTIVATION_SIGMOID, UDNN_NOT_PROPAGATE_NAN, 0.0));
    size_t state_bytes, reserve_bytes;
    tu_ok(udnnDropoutGetStatesSize(hs[1], &state_bytes));
    tu_ok(udnnDropoutGetReserveSpaceSize(dr_x[0].desc, &reserve_bytes));
    tu_buf states[2], reserve[2];
    for (int i = 0; i < 2; i++) {
        const udnnHandle_t h = hs[i];
#define P(t) tu_buf_ptr(&t[i].buf)
        tu_ok(udnnActivationForward(h, act, &one, act_x[i].desc, P(act_x), &zero, act_x[i].desc,
                                    P(act_x)));
        /* y is now act_x; dx over dy, x standing in as the input */
        tu_ok(udnnActivationBackward(h, act, &one, act_x[i].desc, P(act_x), act_dy[i].desc,
                                     P(act_dy), act_x[i].desc, P(act_x), &zero, act_dy[i].desc,
                                     P(act_dy)));
        tu_ok(udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_CHANNEL, &one,
                                 sm_x[i].desc, P(sm_x), &zero, sm_x[i].desc, P(sm_x)));
        tu_ok(udnnSoftmaxBackward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_CHANNEL, &one,
                                  sm_x[i].desc, P(sm_x), sm_dy[i].desc, P(sm_dy), &zero,
                                  sm_dy[i].desc, P(sm_dy)));
        tu_ok(udnnBatchNormalizationForwardTraining(
            h, UDNN_BATCHNORM_SPATIAL, &one, &zero, bn_x[i].desc, P(bn_x), bn_x[i].desc, P(bn_x),
            scale[i].desc, P(scale), P(bias), 1.0, NULL, NULL, 1e-3, NULL, NULL));
        tu_ok(udnnNormForward(h, UDNN_NORM_LAYER, 2, 1e-3, ln_x[i].desc, P(ln_x), lscale[i].desc,
                              P(lscale), P(lbias), ln_x[i].desc, P(ln_x), mean[i].desc, P(mean),
                              P(inv)));
        /* the normalized output stands in as x: dx over dy */
        tu_ok(udnnNormBackward(h, UDNN_NORM_LAYER, 2, ln_x[i].desc, P(ln_x), ln_dy[i].desc,
                               P(ln_dy), lscale[i].desc, P(lscale), mean[i].desc, P(mean), P(inv),
                               ln_dy[i].desc, P(ln_dy), P(ds), P(db)));
        tu_buf_init(&states[i], h, state_bytes);
        tu_buf_init(&reserve[i], h, reserve_bytes);
        udnnDropoutDescriptor_t d;
        tu_ok(udnnCreateDropoutDescriptor(&d));
        tu_ok(udnnSetDropoutDescriptor(d, h, 0.3f, tu_buf_ptr(&states[i]), state_bytes, 99));
        tu_ok(udnnDropoutForward(h, d, dr_x[i].desc, P(dr_x), dr_x[i].desc, P(dr_x),
                                 tu_buf_ptr(&reserve[i]), reserve_bytes));
        udnnDestroyDropoutDescriptor(d);
#undef P
    }
    const char *t = tu_dtype_name(dt), *ln = tu_layout_name(l);
    assert_same_tensor(act_x, "in place: activation y over x, %s %s", t, ln);
    assert_same_tensor(act_dy, "in place: activation dx over dy, %s %s", t, ln);
    assert_same_tensor(sm_x, "in place: softmax y over x, %s %s", t, ln);
    assert_same_tensor(sm_dy, "in place: softmax dx over dy, %s %s", t, ln);
    assert_same_tensor(bn_x, "in place: batch norm y over x, %s %s", t, ln);
    assert_same_tensor(ln_x, "in place: layer norm y over x, %s %s", t, ln);
    assert_same_tensor(ln_dy, "in place: layer norm dx over dy, %s %s", t, ln);
    assert_same_tensor(dr_x, "in place: dropout y over x, %s %s", t, ln);
    for (int i = 0; i < 2; i++) {
        tu_buf_free(&states[i]);
        tu_buf_free(&reserve[i]);
    }
    udnnDestroyActivationDescriptor(act);
    twins_free(act_x, act_dy, sm_x, sm_dy, bn_x, ln_x, ln_dy, dr_x, scale, bias, lscale, lbias,
               mean, inv, ds, db, NULL);
}
END_TEST

/* ---- the mode's dispatch, on the CPU alone ------------------------------------------ */

/* Only the reference's solvers rank and run: convolution ranks
 * IMPLICIT_GEMM (cpu/ref's) and refuses GEMM (the packed-GEMM solver's). */
START_TEST(test_cpu_dispatch)
{
    static const int xdims[4] = {2, 3, 8, 8}, wdims[4] = {4, 3, 3, 3};
    static const int pad[2] = {1, 1}, str[2] = {1, 1}, dil[2] = {1, 1};
    const udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    tu_tensor x, y;
    tu_filter w;
    tu_tensor_init(&x, h, UDNN_DATA_FLOAT, 4, xdims, TU_NCHW);
    tu_filter_init(&w, h, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 4, wdims);
    udnnConvolutionDescriptor_t conv;
    tu_ok(udnnCreateConvolutionDescriptor(&conv));
    tu_ok(udnnSetConvolutionNdDescriptor(conv, 2, pad, str, dil, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_FLOAT));
    tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, (const int[4]){2, 4, 8, 8}, TU_NCHW);
    udnnConvolutionFwdAlgoPerf_t perf[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int count = 0;
    tu_ok(udnnGetConvolutionForwardAlgorithm_v7(h, x.desc, w.desc, conv, y.desc,
                                                UDNN_CONVOLUTION_FWD_ALGO_COUNT, &count, perf));
    ck_assert_int_ge(count, 1);
    ck_assert_int_eq(perf[0].algo, UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
    ck_assert_int_eq(perf[0].status, UDNN_STATUS_SUCCESS);
    for (int k = 1; k < count; k++) ck_assert_int_ne(perf[k].status, UDNN_STATUS_SUCCESS);
    tu_fill_uniform(&x, -1.0, 1.0);
    const float one = 1.0f, zero = 0.0f;
    tu_assert_fails(udnnConvolutionForward(h, &one, x.desc, tu_buf_ptr(&x.buf), w.desc,
                                           tu_buf_ptr(&w.buf), conv, UDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                           NULL, 0, &zero, y.desc, tu_buf_ptr(&y.buf)),
                    UDNN_STATUS_NOT_SUPPORTED, "udnnConvolutionForward", "UDNN_DETERMINISTIC");
    udnnDestroyConvolutionDescriptor(conv);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_filter_free(&w);
    udnnDestroy(h);
}
END_TEST

int main(void)
{
    udnnBackend_t bks[3];
    int n = tu_backends(bks);
    for (int i = 0; i < n && gpu_backend == 0; i++)
        if (bks[i] != UDNN_BACKEND_CPU) gpu_backend = bks[i];
    if (n == 0 || bks[0] != UDNN_BACKEND_CPU) {
        printf("check_reference_bits: needs the CPU backend; skipped\n");
        return 77;
    }
    setenv("UDNN_DETERMINISTIC", "reference", 1);
    Suite *s = suite_create("reference_bits");
    TCase *mode = tcase_create("mode");
    tcase_add_test(mode, test_cpu_dispatch);
    suite_add_tcase(s, mode);
    if (gpu_backend == 0) {
        printf("check_reference_bits: no GPU backend here; the CPU's dispatch only\n");
        return tu_run_suite(s);
    }
    TCase *tc = tcase_create("ops");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_conv, 0, 8);
    tcase_add_loop_test(tc, test_activation, 0, 8);
    tcase_add_loop_test(tc, test_matmul, 0, 16);
    tcase_add_loop_test(tc, test_pooling, 0, 8);
    tcase_add_loop_test(tc, test_tensor_ops, 0, 8);
    tcase_add_loop_test(tc, test_reduce, 0, 4);
    tcase_add_loop_test(tc, test_softmax, 0, 8);
    tcase_add_loop_test(tc, test_batchnorm, 0, 8);
    tcase_add_loop_test(tc, test_dropout, 0, 8);
    tcase_add_loop_test(tc, test_lrn, 0, 8);
    tcase_add_loop_test(tc, test_norm, 0, 8);
    tcase_add_loop_test(tc, test_in_place, 0, 8);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
