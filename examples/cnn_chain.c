/* cnn_chain.c - the smallest useful udnn program: one convolutional layer
 * (conv -> bias -> ReLU -> max-pool) and a softmax over its outputs, on
 * whichever backend udnnCreate picks (UDNN_BACKEND=cpu|cuda|hip).
 *
 * Every op call returns a status; on failure udnnGetLastErrorString says
 * which argument of which function was wrong. */
#include <stdio.h>
#include <stdlib.h>

#include <udnn.h>

#define CHECK(call)                                                            \
    do {                                                                       \
        udnnStatus_t st_ = (call);                                             \
        if (st_ != UDNN_STATUS_SUCCESS) {                                      \
            char msg_[512];                                                    \
            udnnGetLastErrorString(msg_, sizeof msg_);                         \
            fprintf(stderr, "cnn_chain: %s\n  %s\n", udnnGetErrorString(st_), msg_); \
            exit(EXIT_FAILURE);                                                \
        }                                                                      \
    } while (0)

enum { N = 2, C = 1, H = 8, W = 8, K = 4, R = 3, S = 3 };

/* Device buffer of n floats, copied from host when src is given. */
static float *device_floats(udnnHandle_t h, size_t n, const float *src)
{
    void *p = NULL;
    CHECK(udnnMalloc(h, &p, n * sizeof(float)));
    if (src) CHECK(udnnMemcpy(h, p, src, n * sizeof(float), UDNN_MEMCPY_HOST_TO_DEVICE));
    return p;
}

static udnnTensorDescriptor_t tensor(int n, int c, int h, int w)
{
    udnnTensorDescriptor_t d;
    CHECK(udnnCreateTensorDescriptor(&d));
    CHECK(udnnSetTensor4dDescriptor(d, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, n, c, h, w));
    return d;
}

int main(void)
{
    udnnHandle_t h;
    CHECK(udnnCreate(&h));
    udnnBackend_t backend;
    CHECK(udnnGetBackend(h, &backend));
    static const char *const names[] = {"auto", "cpu", "cuda", "hip"};
    printf("udnn %zu on the %s backend\n", udnnGetVersion(), names[backend]);

    /* Inputs: two 8x8 images (a diagonal line and a vertical bar), four
     * 3x3 filters (edge detectors), a bias per filter. */
    float x[N * C * H * W], w[K * C * R * S], bias[K] = {0.1f, -0.2f, 0.0f, 0.05f};
    for (int i = 0; i < H; i++)
        for (int j = 0; j < W; j++) {
            x[i * W + j] = (i == j) ? 1.0f : 0.0f;
            x[H * W + i * W + j] = (j == 3 || j == 4) ? 1.0f : 0.0f;
        }
    static const float edges[K][R * S] = {
        {-1, 0, 1, -1, 0, 1, -1, 0, 1},   /* vertical edge */
        {-1, -1, -1, 0, 0, 0, 1, 1, 1},   /* horizontal edge */
        {2, -1, -1, -1, 2, -1, -1, -1, 2}, /* diagonal */
        {0, 1, 0, 1, -4, 1, 0, 1, 0},     /* Laplacian */
    };
    for (int k = 0; k < K; k++)
        for (int i = 0; i < R * S; i++) w[k * R * S + i] = edges[k][i];

    udnnTensorDescriptor_t xDesc = tensor(N, C, H, W), bDesc = tensor(1, K, 1, 1);
    udnnFilterDescriptor_t wDesc;
    CHECK(udnnCreateFilterDescriptor(&wDesc));
    CHECK(udnnSetFilter4dDescriptor(wDesc, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, K, C, R, S));
    udnnConvolutionDescriptor_t conv;
    CHECK(udnnCreateConvolutionDescriptor(&conv));
    CHECK(udnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_FLOAT));
    int n, c, oh, ow;
    CHECK(udnnGetConvolution2dForwardOutputDim(conv, xDesc, wDesc, &n, &c, &oh, &ow));
    udnnTensorDescriptor_t yDesc = tensor(n, c, oh, ow);

    /* The algorithm the backend ranks first, and its workspace. */
    udnnConvolutionFwdAlgoPerf_t perf[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    CHECK(udnnGetConvolutionForwardAlgorithm_v7(h, xDesc, wDesc, conv, yDesc,
                                                UDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    udnnConvolutionFwdAlgo_t algo = perf[0].algo;
    size_t ws_bytes = 0;
    CHECK(udnnGetConvolutionForwardWorkspaceSize(h, xDesc, wDesc, conv, yDesc, algo, &ws_bytes));
    void *ws = NULL;
    CHECK(udnnMalloc(h, &ws, ws_bytes));

    float *dx = device_floats(h, N * C * H * W, x), *dw = device_floats(h, K * C * R * S, w);
    float *db = device_floats(h, K, bias), *dy = device_floats(h, (size_t)n * c * oh * ow, NULL);
    const float one = 1.0f, zero = 0.0f;

    /* conv, then bias broadcast over n, h, w, then ReLU in place */
    CHECK(udnnConvolutionForward(h, &one, xDesc, dx, wDesc, dw, conv, algo, ws, ws_bytes, &zero,
                                 yDesc, dy));
    CHECK(udnnAddTensor(h, &one, bDesc, db, &one, yDesc, dy));
    udnnActivationDescriptor_t relu;
    CHECK(udnnCreateActivationDescriptor(&relu));
    CHECK(udnnSetActivationDescriptor(relu, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    CHECK(udnnActivationForward(h, relu, &one, yDesc, dy, &zero, yDesc, dy));

    /* 2x2 max pooling, then a softmax over every image's pooled features */
    udnnPoolingDescriptor_t pool;
    CHECK(udnnCreatePoolingDescriptor(&pool));
    CHECK(udnnSetPooling2dDescriptor(pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0,
                                     2, 2));
    int pn, pc, ph, pw;
    CHECK(udnnGetPooling2dForwardOutputDim(pool, yDesc, &pn, &pc, &ph, &pw));
    udnnTensorDescriptor_t pDesc = tensor(pn, pc * ph * pw, 1, 1);
    udnnTensorDescriptor_t p4Desc = tensor(pn, pc, ph, pw);
    float *dp = device_floats(h, (size_t)pn * pc * ph * pw, NULL);
    float *ds = device_floats(h, (size_t)pn * pc * ph * pw, NULL);
    CHECK(udnnPoolingForward(h, pool, &one, yDesc, dy, &zero, p4Desc, dp));
    CHECK(udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one, pDesc,
                             dp, &zero, pDesc, ds));

    size_t features = (size_t)pc * ph * pw;
    float *probs = malloc((size_t)pn * features * sizeof *probs);
    CHECK(udnnMemcpy(h, probs, ds, (size_t)pn * features * sizeof *probs,
                     UDNN_MEMCPY_DEVICE_TO_HOST));
    printf("conv %dx%dx%dx%d (algo %d) -> relu -> max-pool %dx%dx%dx%d -> softmax\n", n, c, oh,
           ow, (int)algo, pn, pc, ph, pw);
    for (int img = 0; img < pn; img++) {
        const float *p = probs + img * features;
        size_t best = 0;
        double sum = 0.0;
        for (size_t i = 0; i < features; i++) {
            sum += p[i];
            if (p[i] > p[best]) best = i;
        }
        printf("image %d: %zu probabilities sum to %.6f; the largest, %.4f, is filter %zu at "
               "(%zu, %zu)\n",
               img, features, sum, p[best], best / (size_t)(ph * pw), best % (size_t)(ph * pw) / (size_t)pw,
               best % (size_t)pw);
    }

    free(probs);
    void *buffers[] = {dx, dw, db, dy, dp, ds, ws};
    for (size_t i = 0; i < sizeof buffers / sizeof *buffers; i++) udnnFree(h, buffers[i]);
    udnnDestroyTensorDescriptor(xDesc);
    udnnDestroyTensorDescriptor(bDesc);
    udnnDestroyTensorDescriptor(yDesc);
    udnnDestroyTensorDescriptor(pDesc);
    udnnDestroyTensorDescriptor(p4Desc);
    udnnDestroyFilterDescriptor(wDesc);
    udnnDestroyConvolutionDescriptor(conv);
    udnnDestroyActivationDescriptor(relu);
    udnnDestroyPoolingDescriptor(pool);
    udnnDestroy(h);
    return 0;
}
