/* infer.c - the shortest path from trained weights to predictions: loads
 * the weights udnn-fashion-mnist --save wrote, runs the network forward on
 * the first few test images, and prints each image with its class.
 *
 *   ./examples/udnn-fashion-mnist --save lenet.bin && ./examples/infer lenet.bin
 *
 * Inference needs no gradients, so each layer is one or two udnn calls:
 * the fused convolution + bias + ReLU, max pooling, the fully connected
 * layers as a matrix product plus a broadcast bias, and a softmax. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <udnn.h>

#include "examples/mnist_data.h"
#include "examples/mnist_weights.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        udnnStatus_t st_ = (call);                                                                 \
        if (st_ != UDNN_STATUS_SUCCESS) {                                                          \
            char msg_[1024];                                                                       \
            udnnGetLastErrorString(msg_, sizeof msg_);                                             \
            fprintf(stderr, "infer: %s: %s\n", udnnGetErrorString(st_), msg_);                     \
            exit(EXIT_FAILURE);                                                                    \
        }                                                                                          \
    } while (0)

enum { SIDE = 28, MAX_IMAGES = 10 };
static const float one = 1.0f, zero = 0.0f;
static udnnHandle_t h;

static udnnTensorDescriptor_t tensor(int n, int c, int hh, int w)
{
    udnnTensorDescriptor_t d;
    CHECK(udnnCreateTensorDescriptor(&d));
    CHECK(udnnSetTensor4dDescriptor(d, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, n, c, hh, w));
    return d;
}

static udnnTensorDescriptor_t matrix(int rows, int cols)
{
    udnnTensorDescriptor_t d;
    CHECK(udnnCreateTensorDescriptor(&d));
    CHECK(udnnSetTensorNdDescriptor(d, UDNN_DATA_FLOAT, 2, (int[]){rows, cols}, (int[]){cols, 1}));
    return d;
}

static float *device(size_t count, const float *host)
{
    void *p;
    CHECK(udnnMalloc(h, &p, count * sizeof(float)));
    if (host) CHECK(udnnMemcpy(h, p, host, count * sizeof(float), UDNN_MEMCPY_HOST_TO_DEVICE));
    return p;
}

/* A convolution block's weights on the device. Batch-normalized ones are
 * folded into the convolution, as inference allows: scale / sqrt(var + eps)
 * multiplies each filter, and the shift absorbs the mean. */
static void upload_conv(const float **cursor, int k, int c, int bn, float **w, float **b)
{
    const size_t wn = (size_t)k * c * 25;
    float *wh = malloc(wn * sizeof *wh), bh[32];
    memcpy(wh, *cursor, wn * sizeof *wh);
    const float *v = *cursor + wn;
    for (int o = 0; o < k; o++) {
        if (!bn) {
            bh[o] = v[o];
            continue;
        }
        const float scale = v[o], shift = v[k + o], mean = v[2 * k + o], var = v[3 * k + o];
        const float g = scale / sqrtf(var + 1e-5f);
        for (size_t i = 0; i < (size_t)c * 25; i++) wh[o * c * 25 + i] *= g;
        bh[o] = shift - mean * g;
    }
    *cursor = v + (bn ? 4 * k : k);
    *w = device(wn, wh);
    *b = device(k, bh);
    free(wh);
}

/* conv 5x5 pad 2 + bias + ReLU, then 2x2 max pooling: x (n x c x s x s)
 * to the returned n x k x s/2 x s/2. */
static float *conv_block(int n, int c, int k, int s, const float *x, const float *w, const float *b)
{
    udnnTensorDescriptor_t xd = tensor(n, c, s, s), yd = tensor(n, k, s, s),
                           bd = tensor(1, k, 1, 1);
    udnnTensorDescriptor_t pd = tensor(n, k, s / 2, s / 2);
    udnnFilterDescriptor_t wd;
    CHECK(udnnCreateFilterDescriptor(&wd));
    CHECK(udnnSetFilter4dDescriptor(wd, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, k, c, 5, 5));
    udnnConvolutionDescriptor_t conv;
    CHECK(udnnCreateConvolutionDescriptor(&conv));
    CHECK(udnnSetConvolution2dDescriptor(conv, 2, 2, 1, 1, 1, 1, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_FLOAT));
    udnnActivationDescriptor_t relu;
    CHECK(udnnCreateActivationDescriptor(&relu));
    CHECK(udnnSetActivationDescriptor(relu, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    udnnPoolingDescriptor_t pool;
    CHECK(udnnCreatePoolingDescriptor(&pool));
    CHECK(udnnSetPooling2dDescriptor(pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2,
                                     2));

    /* the algorithms the backend ranks, best first: the first it also
     * fuses with bias and activation runs */
    udnnConvolutionFwdAlgoPerf_t perf[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got;
    CHECK(udnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, conv, yd,
                                                UDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf));
    float *y = device((size_t)n * k * s * s, NULL), *p = device((size_t)n * k * s * s / 4, NULL);
    udnnStatus_t st = UDNN_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < got && st == UDNN_STATUS_NOT_SUPPORTED; i++) {
        void *ws = NULL;
        if (perf[i].memory) CHECK(udnnMalloc(h, &ws, perf[i].memory));
        st = udnnConvolutionBiasActivationForward(h, &one, xd, x, wd, w, conv, perf[i].algo, ws,
                                                  perf[i].memory, &zero, yd, y, bd, b, relu, yd, y);
        CHECK(udnnFree(h, ws));
    }
    CHECK(st);
    CHECK(udnnPoolingForward(h, pool, &one, yd, y, &zero, pd, p));

    CHECK(udnnFree(h, y));
    udnnDestroyTensorDescriptor(xd);
    udnnDestroyTensorDescriptor(yd);
    udnnDestroyTensorDescriptor(bd);
    udnnDestroyTensorDescriptor(pd);
    udnnDestroyFilterDescriptor(wd);
    udnnDestroyConvolutionDescriptor(conv);
    udnnDestroyActivationDescriptor(relu);
    udnnDestroyPoolingDescriptor(pool);
    return p;
}

/* y = x w^T + b (n x out), then ReLU when asked. */
static float *dense(int n, int in, int out, const float *x, const float **cursor, int relu)
{
    float *w = device((size_t)out * in, *cursor), *b = device(out, *cursor + (size_t)out * in);
    *cursor += (size_t)out * in + out;
    float *y = device((size_t)n * out, NULL);
    udnnTensorDescriptor_t xm = matrix(n, in), wm = matrix(out, in), ym = matrix(n, out);
    udnnTensorDescriptor_t yd = tensor(n, out, 1, 1), bd = tensor(1, out, 1, 1);
    CHECK(udnnMatMul(h, 0, 1, &one, xm, x, wm, w, &zero, ym, y));
    CHECK(udnnAddTensor(h, &one, bd, b, &one, yd, y));
    if (relu) {
        udnnActivationDescriptor_t act;
        CHECK(udnnCreateActivationDescriptor(&act));
        CHECK(udnnSetActivationDescriptor(act, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
        CHECK(udnnActivationForward(h, act, &one, yd, y, &zero, yd, y));
        udnnDestroyActivationDescriptor(act);
    }
    CHECK(udnnFree(h, w));
    CHECK(udnnFree(h, b));
    udnnDestroyTensorDescriptor(xm);
    udnnDestroyTensorDescriptor(wm);
    udnnDestroyTensorDescriptor(ym);
    udnnDestroyTensorDescriptor(yd);
    udnnDestroyTensorDescriptor(bd);
    return y;
}

/* The images side by side, two pixels a character, labels underneath. */
static void print_images(const mnist_set *set, int n, const float *probs)
{
    static const char ink[] = " .:-=+*#%@";
    for (int row = 0; row < SIDE; row += 2) {
        for (int i = 0; i < n; i++) {
            const unsigned char *img = set->pixels + (size_t)i * SIDE * SIDE;
            for (int col = 0; col < SIDE; col += 2)
                putchar(ink[(img[row * SIDE + col] + img[(row + 1) * SIDE + col + 1]) * 9 / 510]);
            printf("  ");
        }
        putchar('\n');
    }
    for (int i = 0; i < n; i++) {
        const float *p = probs + i * MNIST_CLASSES;
        int best = 0;
        for (int c = 1; c < MNIST_CLASSES; c++)
            if (p[c] > p[best]) best = c;
        printf("image %d: %-11s %5.1f%%  (label: %s)%s\n", i, mnist_class_names[best],
               100.0 * p[best], mnist_class_names[set->labels[i]],
               best == set->labels[i] ? "" : "  <- wrong");
    }
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: infer WEIGHTS [COUNT (1-%d, default 5)] [DATA_DIR]\n", MAX_IMAGES);
        return 2;
    }
    const int n = argc > 2 ? atoi(argv[2]) : 5;
    if (n < 1 || n > MAX_IMAGES) {
        fprintf(stderr, "infer: COUNT must be 1 to %d\n", MAX_IMAGES);
        return 2;
    }
    char err[4096];
    mnist_weights wt;
    mnist_set test;
    if (mnist_weights_load(argv[1], &wt, err, sizeof err) != 0 ||
        mnist_load(argc > 3 ? argv[3] : MNIST_DEFAULT_DIR, "t10k", &test, err, sizeof err) != 0) {
        fprintf(stderr, "infer: %s\n", err);
        return 1;
    }

    const size_t expected =
        400 + 12800 + 1568 * 128 + 128 + 128 * 10 + 10 + (wt.batch_norm ? 4 * (16 + 32) : 16 + 32);
    if (wt.count != expected) {
        fprintf(stderr, "infer: %s holds %zu weights; this network has %zu\n", argv[1], wt.count,
                expected);
        return 1;
    }

    CHECK(udnnCreate(&h));
    const float *cursor = wt.values;
    float *w1, *b1, *w2, *b2;
    upload_conv(&cursor, 16, 1, wt.batch_norm, &w1, &b1);
    upload_conv(&cursor, 32, 16, wt.batch_norm, &w2, &b2);

    /* the images, normalized as in training */
    float x_host[MAX_IMAGES * SIDE * SIDE], onehot[MAX_IMAGES * MNIST_CLASSES];
    mnist_fill_batch(&test, NULL, 0, n, wt.mean, wt.std, x_host, onehot);
    float *x = device((size_t)n * SIDE * SIDE, x_host);

    float *p1 = conv_block(n, 1, 16, SIDE, x, w1, b1);
    float *p2 = conv_block(n, 16, 32, SIDE / 2, p1, w2, b2);
    float *hidden = dense(n, 32 * 7 * 7, 128, p2, &cursor, 1);
    float *logits = dense(n, 128, MNIST_CLASSES, hidden, &cursor, 0);

    udnnTensorDescriptor_t ld = tensor(n, MNIST_CLASSES, 1, 1);
    float *probs = device((size_t)n * MNIST_CLASSES, NULL), probs_host[MAX_IMAGES * MNIST_CLASSES];
    CHECK(udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one, ld, logits,
                             &zero, ld, probs));
    CHECK(udnnMemcpy(h, probs_host, probs, (size_t)n * MNIST_CLASSES * sizeof(float),
                     UDNN_MEMCPY_DEVICE_TO_HOST));
    print_images(&test, n, probs_host);

    float *buffers[] = {w1, b1, w2, b2, x, p1, p2, hidden, logits, probs};
    for (size_t i = 0; i < sizeof buffers / sizeof *buffers; i++) udnnFree(h, buffers[i]);
    udnnDestroyTensorDescriptor(ld);
    udnnDestroy(h);
    mnist_weights_free(&wt);
    mnist_free(&test);
    return 0;
}
