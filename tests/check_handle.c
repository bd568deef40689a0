/* check_handle.c - handles, backend choice and the plugin loader, memory
 * and stream calls, thread-local errors and logging. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

/* The fake plugins built beside the tests (tests/fake/). */
static void use_fake_plugins(void)
{
    char path[4096];
    const char *top = getenv("top_builddir");
    snprintf(path, sizeof path, "%s/tests/fake/.libs", top ? top : ".");
    setenv("UDNN_BACKEND_PATH", path, 1);
}

START_TEST(test_create_cpu)
{
    udnnHandle_t h = NULL;
    tu_ok(udnnCreateWithBackend(&h, UDNN_BACKEND_CPU, 0));
    udnnBackend_t b;
    tu_ok(udnnGetBackend(h, &b));
    ck_assert_int_eq(b, UDNN_BACKEND_CPU);
    tu_ok(udnnDestroy(h));
    tu_ok(udnnDestroy(NULL));
}
END_TEST

START_TEST(test_create_env_cpu)
{
    setenv("UDNN_BACKEND", _i ? "CPU" : "cpu", 1);
    udnnHandle_t h = NULL;
    tu_ok(udnnCreate(&h));
    udnnBackend_t b;
    tu_ok(udnnGetBackend(h, &b));
    ck_assert_int_eq(b, UDNN_BACKEND_CPU);
    tu_ok(udnnDestroy(h));
}
END_TEST

START_TEST(test_create_env_bogus)
{
    setenv("UDNN_BACKEND", "tpu", 1);
    udnnHandle_t h = (udnnHandle_t)0x1;
    tu_assert_fails(udnnCreate(&h), UDNN_STATUS_BAD_PARAM, "udnnCreate", "UDNN_BACKEND", "tpu");
    ck_assert_ptr_null(h);
}
END_TEST

START_TEST(test_create_auto_skips_missing_plugins)
{
    use_fake_plugins();
    unsetenv("UDNN_BACKEND");
    udnnHandle_t h = NULL;
    tu_ok(udnnCreate(&h));
    udnnBackend_t b;
    tu_ok(udnnGetBackend(h, &b));
    ck_assert_int_eq(b, UDNN_BACKEND_CPU);
    tu_ok(udnnDestroy(h));
    tu_ok(udnnCreateWithBackend(&h, UDNN_BACKEND_AUTO, 0));
    tu_ok(udnnGetBackend(h, &b));
    ck_assert_int_eq(b, UDNN_BACKEND_CPU);
    tu_ok(udnnDestroy(h));
}
END_TEST

START_TEST(test_named_backend_abi_mismatch)
{
    use_fake_plugins();
    setenv("UDNN_BACKEND", "cuda", 1);
    udnnHandle_t h = NULL;
    /* named and unloadable: an error, never a silent fallback */
    tu_assert_fails(udnnCreate(&h), UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, "udnnCreate",
                    "udnn_cuda.so", "ABI version 999");
    ck_assert_ptr_null(h);
}
END_TEST

START_TEST(test_named_backend_no_entry)
{
    use_fake_plugins();
    udnnHandle_t h = NULL;
    tu_assert_fails(udnnCreateWithBackend(&h, UDNN_BACKEND_HIP, 0),
                    UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING, "udnnCreateWithBackend",
                    "udnn_hip.so", "udnn_backend_entry");
}
END_TEST

START_TEST(test_named_backend_missing_file)
{
    setenv("UDNN_BACKEND_PATH", "/nonexistent-udnn-dir", 1);
    udnnHandle_t h = NULL;
    udnnStatus_t st = udnnCreateWithBackend(&h, UDNN_BACKEND_CUDA, 0);
    int count = 0;
    tu_ok(udnnGetDeviceCount(UDNN_BACKEND_CUDA, &count));
    if (count > 0) {
        /* an installed plugin with a device: the handle is real */
        tu_ok(st);
        udnnDestroy(h);
        return;
    }
    ck_assert_int_ne(st, UDNN_STATUS_SUCCESS);
    char msg[1024];
    udnnGetLastErrorString(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "/nonexistent-udnn-dir/udnn_cuda.so") != NULL, "message: %s", msg);
}
END_TEST

START_TEST(test_create_bad_args)
{
    tu_assert_fails(udnnCreate(NULL), UDNN_STATUS_BAD_PARAM, "udnnCreate", "handle");
    udnnHandle_t h;
    tu_assert_fails(udnnCreateWithBackend(&h, (udnnBackend_t)7, 0), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateWithBackend", "backend");
    tu_assert_fails(udnnCreateWithBackend(&h, UDNN_BACKEND_CPU, 1), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateWithBackend", "device is 1");
    tu_assert_fails(udnnCreateWithBackend(&h, UDNN_BACKEND_CPU, -1), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateWithBackend", "device");
    tu_assert_fails(udnnGetBackend(NULL, NULL), UDNN_STATUS_BAD_PARAM, "udnnGetBackend",
                    "handle");
    h = tu_handle(UDNN_BACKEND_CPU);
    tu_assert_fails(udnnGetBackend(h, NULL), UDNN_STATUS_BAD_PARAM, "udnnGetBackend", "backend");
    udnnDestroy(h);
}
END_TEST

START_TEST(test_device_count)
{
    use_fake_plugins();
    int n = -1;
    tu_ok(udnnGetDeviceCount(UDNN_BACKEND_CPU, &n));
    ck_assert_int_eq(n, 1);
    /* a plugin that cannot be loaded means 0 devices, not an error */
    n = -1;
    tu_ok(udnnGetDeviceCount(UDNN_BACKEND_CUDA, &n));
    ck_assert_int_eq(n, 0);
    n = -1;
    tu_ok(udnnGetDeviceCount(UDNN_BACKEND_HIP, &n));
    ck_assert_int_eq(n, 0);
    tu_assert_fails(udnnGetDeviceCount(UDNN_BACKEND_CPU, NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnGetDeviceCount", "count");
    tu_assert_fails(udnnGetDeviceCount((udnnBackend_t)9, &n), UDNN_STATUS_BAD_PARAM,
                    "udnnGetDeviceCount", "backend");
    unsetenv("UDNN_BACKEND");
    tu_assert_fails(udnnGetDeviceCount(UDNN_BACKEND_AUTO, &n), UDNN_STATUS_BAD_PARAM,
                    "udnnGetDeviceCount", "backend");
    setenv("UDNN_BACKEND", "cpu", 1);
    tu_ok(udnnGetDeviceCount(UDNN_BACKEND_AUTO, &n));
    ck_assert_int_eq(n, 1);
}
END_TEST

START_TEST(test_memory_roundtrip)
{
    udnnBackend_t backends[3];
    int nb = tu_backends(backends);
    for (int b = 0; b < nb; b++) {
        udnnHandle_t h = tu_handle(backends[b]);
        void *d = NULL;
        tu_ok(udnnMalloc(h, &d, 4096));
        ck_assert_ptr_nonnull(d);
        unsigned char src[4096], dst[4096];
        for (int i = 0; i < 4096; i++) src[i] = (unsigned char)(i * 7);
        tu_ok(udnnMemcpy(h, d, src, sizeof src, UDNN_MEMCPY_HOST_TO_DEVICE));
        tu_ok(udnnMemset(h, (char *)d + 100, 0x5A, 50));
        tu_ok(udnnSynchronize(h));
        void *d2 = NULL;
        tu_ok(udnnMalloc(h, &d2, 4096));
        tu_ok(udnnMemcpy(h, d2, d, 4096, UDNN_MEMCPY_DEVICE_TO_DEVICE));
        tu_ok(udnnMemcpy(h, dst, d2, sizeof dst, UDNN_MEMCPY_DEVICE_TO_HOST));
        for (int i = 0; i < 4096; i++)
            ck_assert_int_eq(dst[i], (i >= 100 && i < 150) ? 0x5A : src[i]);
        tu_ok(udnnFree(h, d));
        tu_ok(udnnFree(h, d2));
        tu_ok(udnnFree(h, NULL));
        void *z = (void *)0x1;
        tu_ok(udnnMalloc(h, &z, 0));
        ck_assert_ptr_null(z);
        udnnDestroy(h);
    }
}
END_TEST

START_TEST(test_memory_bad_args)
{
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    void *p;
    char buf[8];
    tu_assert_fails(udnnMalloc(NULL, &p, 8), UDNN_STATUS_BAD_PARAM, "udnnMalloc", "handle");
    tu_assert_fails(udnnMalloc(h, NULL, 8), UDNN_STATUS_BAD_PARAM, "udnnMalloc", "ptr");
    tu_assert_fails(udnnMalloc(h, &p, (size_t)-1), UDNN_STATUS_ALLOC_FAILED, "udnnMalloc",
                    "bytes");
    tu_assert_fails(udnnFree(NULL, buf), UDNN_STATUS_BAD_PARAM, "udnnFree", "handle");
    tu_assert_fails(udnnMemcpy(h, NULL, buf, 8, UDNN_MEMCPY_HOST_TO_DEVICE),
                    UDNN_STATUS_BAD_PARAM, "udnnMemcpy", "dst");
    tu_assert_fails(udnnMemcpy(h, buf, NULL, 8, UDNN_MEMCPY_HOST_TO_DEVICE),
                    UDNN_STATUS_BAD_PARAM, "udnnMemcpy", "src");
    tu_assert_fails(udnnMemcpy(h, buf, buf + 1, 4, (udnnMemcpyKind_t)17), UDNN_STATUS_BAD_PARAM,
                    "udnnMemcpy", "kind");
    tu_ok(udnnMemcpy(h, NULL, NULL, 0, UDNN_MEMCPY_HOST_TO_DEVICE));
    tu_assert_fails(udnnMemset(h, NULL, 0, 8), UDNN_STATUS_BAD_PARAM, "udnnMemset", "ptr");
    tu_assert_fails(udnnMemset(NULL, buf, 0, 8), UDNN_STATUS_BAD_PARAM, "udnnMemset", "handle");
    tu_assert_fails(udnnSynchronize(NULL), UDNN_STATUS_BAD_PARAM, "udnnSynchronize", "handle");
    udnnDestroy(h);
}
END_TEST

START_TEST(test_stream)
{
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    udnnStream_t s = (udnnStream_t)0x1;
    tu_ok(udnnGetStream(h, &s));
    ck_assert_ptr_null(s);
    tu_ok(udnnSetStream(h, NULL));
    tu_assert_fails(udnnSetStream(h, (udnnStream_t)0x1234), UDNN_STATUS_BAD_PARAM,
                    "udnnSetStream", "streamId");
    tu_assert_fails(udnnSetStream(NULL, NULL), UDNN_STATUS_BAD_PARAM, "udnnSetStream", "handle");
    tu_assert_fails(udnnGetStream(h, NULL), UDNN_STATUS_BAD_PARAM, "udnnGetStream", "streamId");
    tu_assert_fails(udnnGetStream(NULL, &s), UDNN_STATUS_BAD_PARAM, "udnnGetStream", "handle");
    udnnDestroy(h);
}
END_TEST

static void *fail_in_thread(void *arg)
{
    (void)arg;
    udnnCreate(NULL); /* sets this thread's message only */
    char msg[256];
    udnnGetLastErrorString(msg, sizeof msg);
    return strstr(msg, "udnnCreate") ? (void *)1 : NULL;
}

START_TEST(test_last_error_is_thread_local)
{
    udnnMalloc(NULL, NULL, 0);
    char before[256], after[256];
    udnnGetLastErrorString(before, sizeof before);
    ck_assert(strstr(before, "udnnMalloc") != NULL);
    pthread_t th;
    void *ret = NULL;
    ck_assert_int_eq(pthread_create(&th, NULL, fail_in_thread, NULL), 0);
    pthread_join(th, &ret);
    ck_assert_ptr_nonnull(ret);
    udnnGetLastErrorString(after, sizeof after);
    ck_assert_str_eq(before, after);
}
END_TEST

/* Reads a whole small file into buf. */
static void slurp(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    size_t got = fp ? fread(buf, 1, n - 1, fp) : 0;
    buf[got] = '\0';
    if (fp) fclose(fp);
}

START_TEST(test_log_api_to_file)
{
    char path[] = "/tmp/udnn-log-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "api", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    void *p;
    tu_ok(udnnMalloc(h, &p, 64));
    udnnFree(h, p);
    udnnTensorDescriptor_t t;
    udnnCreateTensorDescriptor(&t);
    udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 0, 3, 4, 5);
    udnnDestroyTensorDescriptor(t);
    udnnDestroy(h);
    char log[8192];
    slurp(path, log, sizeof log);
    unlink(path);
    ck_assert_msg(strstr(log, "udnnCreateWithBackend(") != NULL, "log: %s", log);
    ck_assert_msg(strstr(log, "udnnMalloc(") && strstr(log, "bytes=64"), "log: %s", log);
    ck_assert_msg(strstr(log, "udnnSetTensor4dDescriptor(") && strstr(log, "c=3"), "log: %s",
                  log);
    /* api includes the error level */
    ck_assert_msg(strstr(log, "udnn[error]") && strstr(log, "n is 0"), "log: %s", log);
}
END_TEST

/* 1 when a line of log holds the call "fn(" and the text arg; the lines
 * that hold the call go to seen (for the failure message). */
static int logged(const char *log, const char *fn, const char *arg, char *seen, size_t n)
{
    char call[128];
    snprintf(call, sizeof call, "] %s(", fn);
    size_t pos = 0;
    seen[0] = '\0';
    for (const char *line = log; line != NULL && *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (strstr(buf, call) != NULL) {
            if (strstr(buf, arg) != NULL) return 1;
            if (pos < n) {
                int w = snprintf(seen + pos, n - pos, "%s\n", buf);
                if (w > 0) pos += (size_t)w;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return 0;
}

/* "name=<pointer>" as the API log prints it. */
static const char *ptr_arg(char *buf, size_t n, const char *name, const void *p)
{
    snprintf(buf, n, "%s=%p", name, p);
    return buf;
}

#define EXPECT_LOGGED(log, fn, arg)                                                          \
    do {                                                                                    \
        char seen_[1024];                                                                   \
        ck_assert_msg(logged((log), (fn), (arg), seen_, sizeof seen_),                      \
                      "no %s(...%s...) in the log; its lines of %s:\n%s", (fn), (arg), (fn), \
                      seen_);                                                               \
    } while (0)

START_TEST(test_log_api_descriptor_calls)
{
    char path[] = "/tmp/udnn-log-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "api", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    char a[64];
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);

    udnnTensorDescriptor_t x;
    udnnFilterDescriptor_t wf;
    tu_ok(udnnCreateTensorDescriptor(&x));
    tu_ok(udnnSetTensor4dDescriptor(x, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 1, 3, 8, 8));
    tu_ok(udnnCreateFilterDescriptor(&wf));
    tu_ok(udnnSetFilter4dDescriptor(wf, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 4, 3, 3, 3));

    /* activation */
    udnnActivationDescriptor_t act;
    udnnActivationMode_t am;
    udnnNanPropagation_t an;
    double coef, swish;
    tu_ok(udnnCreateActivationDescriptor(&act));
    tu_ok(udnnSetActivationDescriptor(act, UDNN_ACTIVATION_CLIPPED_RELU, UDNN_PROPAGATE_NAN, 6.5));
    tu_ok(udnnGetActivationDescriptor(act, &am, &an, &coef));
    tu_ok(udnnGetActivationDescriptorSwishBeta(act, &swish));

    /* convolution */
    udnnConvolutionDescriptor_t conv;
    int pad_h, pad_w, u, v, dh, dw, n, c, oh, ow, dims[4], groups;
    udnnConvolutionMode_t cm;
    udnnDataType_t ct;
    tu_ok(udnnCreateConvolutionDescriptor(&conv));
    tu_ok(udnnSetConvolution2dDescriptor(conv, 1, 2, 1, 1, 1, 1, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_FLOAT));
    tu_ok(udnnGetConvolution2dDescriptor(conv, &pad_h, &pad_w, &u, &v, &dh, &dw, &cm, &ct));
    tu_ok(udnnSetConvolutionGroupCount(conv, 1));
    tu_ok(udnnGetConvolutionGroupCount(conv, &groups));
    tu_ok(udnnGetConvolution2dForwardOutputDim(conv, x, wf, &n, &c, &oh, &ow));
    tu_ok(udnnGetConvolutionNdForwardOutputDim(conv, x, wf, 4, dims));
    int max_count;
    tu_ok(udnnGetConvolutionForwardAlgorithmMaxCount(h, &max_count));

    /* pooling */
    udnnPoolingDescriptor_t pool;
    udnnPoolingMode_t pm;
    udnnNanPropagation_t pn;
    int wh, ww, vp, hp, vs, hs;
    tu_ok(udnnCreatePoolingDescriptor(&pool));
    tu_ok(udnnSetPooling2dDescriptor(pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1,
                                     2, 2));
    tu_ok(udnnGetPooling2dDescriptor(pool, &pm, &pn, &wh, &ww, &vp, &hp, &vs, &hs));
    tu_ok(udnnGetPooling2dForwardOutputDim(pool, x, &n, &c, &oh, &ow));
    tu_ok(udnnGetPoolingNdForwardOutputDim(pool, x, 4, dims));

    /* op-tensor */
    udnnOpTensorDescriptor_t op;
    udnnOpTensorOp_t oo;
    udnnDataType_t ot;
    udnnNanPropagation_t on;
    tu_ok(udnnCreateOpTensorDescriptor(&op));
    tu_ok(udnnSetOpTensorDescriptor(op, UDNN_OP_TENSOR_MUL, UDNN_DATA_DOUBLE,
                                    UDNN_NOT_PROPAGATE_NAN));
    tu_ok(udnnGetOpTensorDescriptor(op, &oo, &ot, &on));

    /* reduce */
    udnnReduceTensorDescriptor_t red;
    udnnReduceTensorOp_t ro;
    udnnDataType_t rt;
    udnnNanPropagation_t rn;
    udnnReduceTensorIndices_t ri;
    udnnIndicesType_t rit;
    tu_ok(udnnCreateReduceTensorDescriptor(&red));
    tu_ok(udnnSetReduceTensorDescriptor(red, UDNN_REDUCE_TENSOR_MAX, UDNN_DATA_FLOAT,
                                        UDNN_NOT_PROPAGATE_NAN,
                                        UDNN_REDUCE_TENSOR_FLATTENED_INDICES, UDNN_32BIT_INDICES));
    tu_ok(udnnGetReduceTensorDescriptor(red, &ro, &rt, &rn, &ri, &rit));

    /* LRN */
    udnnLRNDescriptor_t lrn;
    unsigned ln;
    double la, lb, lk;
    tu_ok(udnnCreateLRNDescriptor(&lrn));
    tu_ok(udnnSetLRNDescriptor(lrn, 7, 2e-4, 0.5, 1.5));
    tu_ok(udnnGetLRNDescriptor(lrn, &ln, &la, &lb, &lk));

    /* dropout */
    udnnDropoutDescriptor_t drop;
    size_t states_size, reserve_size;
    void *states, *got_states;
    float got_dropout;
    unsigned long long seed;
    tu_ok(udnnCreateDropoutDescriptor(&drop));
    tu_ok(udnnDropoutGetStatesSize(h, &states_size));
    tu_ok(udnnMalloc(h, &states, states_size));
    tu_ok(udnnSetDropoutDescriptor(drop, h, 0.5f, states, states_size, 1234ULL));
    tu_ok(udnnGetDropoutDescriptor(drop, h, &got_dropout, &got_states, &seed));
    tu_ok(udnnDropoutGetReserveSpaceSize(x, &reserve_size));
    ck_assert(udnnGetVersion() > 0);

    /* what the Destroy calls log, formatted while the descriptors live */
    char d_act[64], d_conv[64], d_pool[64], d_op[64], d_red[64], d_lrn[64], d_drop[64];
    ptr_arg(d_act, sizeof d_act, "activationDesc", act);
    ptr_arg(d_conv, sizeof d_conv, "convDesc", conv);
    ptr_arg(d_pool, sizeof d_pool, "poolingDesc", pool);
    ptr_arg(d_op, sizeof d_op, "opTensorDesc", op);
    ptr_arg(d_red, sizeof d_red, "reduceTensorDesc", red);
    ptr_arg(d_lrn, sizeof d_lrn, "lrnDesc", lrn);
    ptr_arg(d_drop, sizeof d_drop, "dropoutDesc", drop);
    tu_ok(udnnDestroyActivationDescriptor(act));
    tu_ok(udnnDestroyConvolutionDescriptor(conv));
    tu_ok(udnnDestroyPoolingDescriptor(pool));
    tu_ok(udnnDestroyOpTensorDescriptor(op));
    tu_ok(udnnDestroyReduceTensorDescriptor(red));
    tu_ok(udnnDestroyLRNDescriptor(lrn));
    tu_ok(udnnDestroyDropoutDescriptor(drop));
    udnnFree(h, states);
    udnnDestroyFilterDescriptor(wf);
    udnnDestroyTensorDescriptor(x);
    udnnDestroy(h);

    static char log[65536];
    slurp(path, log, sizeof log);
    unlink(path);

    EXPECT_LOGGED(log, "udnnCreateActivationDescriptor",
                  ptr_arg(a, sizeof a, "activationDesc", &act));
    EXPECT_LOGGED(log, "udnnSetActivationDescriptor", "coef=6.5");
    EXPECT_LOGGED(log, "udnnGetActivationDescriptor", ptr_arg(a, sizeof a, "coef", &coef));
    EXPECT_LOGGED(log, "udnnGetActivationDescriptorSwishBeta",
                  ptr_arg(a, sizeof a, "swish_beta", &swish));
    EXPECT_LOGGED(log, "udnnDestroyActivationDescriptor", d_act);

    EXPECT_LOGGED(log, "udnnCreateConvolutionDescriptor", ptr_arg(a, sizeof a, "convDesc", &conv));
    EXPECT_LOGGED(log, "udnnSetConvolution2dDescriptor", "pad_w=2");
    EXPECT_LOGGED(log, "udnnGetConvolution2dDescriptor", ptr_arg(a, sizeof a, "pad_w", &pad_w));
    EXPECT_LOGGED(log, "udnnSetConvolutionGroupCount", "groupCount=1");
    EXPECT_LOGGED(log, "udnnGetConvolutionGroupCount", ptr_arg(a, sizeof a, "groupCount", &groups));
    EXPECT_LOGGED(log, "udnnGetConvolution2dForwardOutputDim", "inputTensorDesc=f32[1,3,8,8]");
    EXPECT_LOGGED(log, "udnnGetConvolution2dForwardOutputDim", "filterDesc=f32:nchw[4,3,3,3]");
    EXPECT_LOGGED(log, "udnnGetConvolutionNdForwardOutputDim", "nbDims=4");
    EXPECT_LOGGED(log, "udnnGetConvolutionForwardAlgorithmMaxCount",
                  ptr_arg(a, sizeof a, "count", &max_count));
    EXPECT_LOGGED(log, "udnnDestroyConvolutionDescriptor", d_conv);

    EXPECT_LOGGED(log, "udnnCreatePoolingDescriptor", ptr_arg(a, sizeof a, "poolingDesc", &pool));
    EXPECT_LOGGED(log, "udnnSetPooling2dDescriptor", "windowHeight=3");
    EXPECT_LOGGED(log, "udnnGetPooling2dDescriptor",
                  ptr_arg(a, sizeof a, "windowHeight", &wh));
    EXPECT_LOGGED(log, "udnnGetPooling2dForwardOutputDim", "inputTensorDesc=f32[1,3,8,8]");
    EXPECT_LOGGED(log, "udnnGetPoolingNdForwardOutputDim", "nbDims=4");
    EXPECT_LOGGED(log, "udnnDestroyPoolingDescriptor", d_pool);

    EXPECT_LOGGED(log, "udnnCreateOpTensorDescriptor", ptr_arg(a, sizeof a, "opTensorDesc", &op));
    EXPECT_LOGGED(log, "udnnSetOpTensorDescriptor", "opTensorCompType=f64");
    EXPECT_LOGGED(log, "udnnGetOpTensorDescriptor", ptr_arg(a, sizeof a, "opTensorOp", &oo));
    EXPECT_LOGGED(log, "udnnDestroyOpTensorDescriptor", d_op);

    EXPECT_LOGGED(log, "udnnCreateReduceTensorDescriptor",
                  ptr_arg(a, sizeof a, "reduceTensorDesc", &red));
    EXPECT_LOGGED(log, "udnnSetReduceTensorDescriptor", "reduceTensorIndices=1");
    EXPECT_LOGGED(log, "udnnGetReduceTensorDescriptor",
                  ptr_arg(a, sizeof a, "reduceTensorIndicesType", &rit));
    EXPECT_LOGGED(log, "udnnDestroyReduceTensorDescriptor", d_red);

    EXPECT_LOGGED(log, "udnnCreateLRNDescriptor", ptr_arg(a, sizeof a, "normDesc", &lrn));
    EXPECT_LOGGED(log, "udnnSetLRNDescriptor", "lrnN=7");
    EXPECT_LOGGED(log, "udnnGetLRNDescriptor", ptr_arg(a, sizeof a, "lrnK", &lk));
    EXPECT_LOGGED(log, "udnnDestroyLRNDescriptor", d_lrn);

    EXPECT_LOGGED(log, "udnnCreateDropoutDescriptor", ptr_arg(a, sizeof a, "dropoutDesc", &drop));
    EXPECT_LOGGED(log, "udnnDropoutGetStatesSize",
                  ptr_arg(a, sizeof a, "sizeInBytes", &states_size));
    EXPECT_LOGGED(log, "udnnSetDropoutDescriptor", "seed=1234");
    EXPECT_LOGGED(log, "udnnGetDropoutDescriptor", ptr_arg(a, sizeof a, "seed", &seed));
    EXPECT_LOGGED(log, "udnnDropoutGetReserveSpaceSize", "xdesc=f32[1,3,8,8]");
    EXPECT_LOGGED(log, "udnnDestroyDropoutDescriptor", d_drop);

    EXPECT_LOGGED(log, "udnnGetVersion", "udnnGetVersion()");
}
END_TEST

START_TEST(test_log_error_level_only)
{
    char path[] = "/tmp/udnn-log-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    setenv("UDNN_LOG", "error", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    udnnMalloc(h, NULL, 4);
    udnnDestroy(h);
    char log[4096];
    slurp(path, log, sizeof log);
    unlink(path);
    ck_assert_msg(strstr(log, "udnnMalloc: ptr is NULL") != NULL, "log: %s", log);
    ck_assert_msg(strstr(log, "udnn[api]") == NULL, "log: %s", log);
}
END_TEST

START_TEST(test_silent_by_default)
{
    unsetenv("UDNN_LOG");
    char path[] = "/tmp/udnn-err-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    fflush(stdout);
    int saved_err = dup(2), saved_out = dup(1);
    dup2(fd, 2);
    dup2(fd, 1);
    udnnHandle_t h = NULL;
    udnnCreate(NULL);
    udnnCreateWithBackend(&h, UDNN_BACKEND_CUDA, 3);
    udnnMalloc(NULL, NULL, 1);
    udnnSetTensor4dDescriptor(NULL, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 1, 1, 1, 1);
    fflush(stderr);
    fflush(stdout);
    dup2(saved_err, 2);
    dup2(saved_out, 1);
    close(fd);
    char out[256];
    slurp(path, out, sizeof out);
    unlink(path);
    ck_assert_msg(out[0] == '\0', "udnn printed uninvited: %s", out);
}
END_TEST

/* SetTensor on a tiny double tensor (which only the reference solver
 * takes); the status it returns. */
static udnnStatus_t set_tiny(udnnHandle_t h)
{
    udnnTensorDescriptor_t t;
    tu_ok(udnnCreateTensorDescriptor(&t));
    tu_ok(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_DOUBLE, 1, 1, 1, 2));
    double y[2] = {0, 0}, v = 3.0;
    udnnStatus_t st = udnnSetTensor(h, t, y, &v);
    udnnDestroyTensorDescriptor(t);
    if (st == UDNN_STATUS_SUCCESS) ck_assert(y[0] == 3.0 && y[1] == 3.0);
    return st;
}

START_TEST(test_disable_solvers)
{
    /* _i: 0 exact name, 1 prefix wildcard, 2 a list with spaces */
    static const char *const lists[] = {"ref_set_tensor", "ref_set*",
                                        "ref_conv_fwd , ref_set_tensor"};
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    tu_ok(set_tiny(h));
    setenv("UDNN_DISABLE_SOLVERS", lists[_i], 1);
    tu_assert_fails(set_tiny(h), UDNN_STATUS_NOT_SUPPORTED, "udnnSetTensor", "ref_set_tensor",
                    "UDNN_DISABLE_SOLVERS");
    setenv("UDNN_DISABLE_SOLVERS", "ref_set_tensorX,ref_se,fast_*", 1);
    tu_ok(set_tiny(h));
    unsetenv("UDNN_DISABLE_SOLVERS");
    udnnDestroy(h);
}
END_TEST

START_TEST(test_log_dispatch)
{
    char path[] = "/tmp/udnn-log-XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    setenv("UDNN_LOG", "dispatch", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    tu_ok(set_tiny(h));
    udnnDestroy(h);
    char log[8192];
    slurp(path, log, sizeof log);
    unlink(path);
    ck_assert_msg(strstr(log, "udnn[dispatch]") && strstr(log, "ref_set_tensor"), "log: %s", log);
    ck_assert_msg(strstr(log, "udnn[api] udnnSetTensor("), "log: %s", log);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("handle");
    /* Each test is forked, and where a GPU plugin loads, creates its
     * context: under a sanitizer or on a loaded machine that outlasts
     * Check's default of 4 s a test (one failure seen with 18 sanitizer
     * runs side by side). */
    const int timeout = 60;
    TCase *tc = tcase_create("handle");
    tcase_set_timeout(tc, timeout);
    tcase_add_test(tc, test_create_cpu);
    tcase_add_loop_test(tc, test_create_env_cpu, 0, 2);
    tcase_add_test(tc, test_create_env_bogus);
    tcase_add_test(tc, test_create_auto_skips_missing_plugins);
    tcase_add_test(tc, test_named_backend_abi_mismatch);
    tcase_add_test(tc, test_named_backend_no_entry);
    tcase_add_test(tc, test_named_backend_missing_file);
    tcase_add_test(tc, test_create_bad_args);
    tcase_add_test(tc, test_device_count);
    suite_add_tcase(s, tc);

    TCase *tm = tcase_create("memory");
    tcase_set_timeout(tm, timeout);
    tcase_add_test(tm, test_memory_roundtrip);
    tcase_add_test(tm, test_memory_bad_args);
    tcase_add_test(tm, test_stream);
    suite_add_tcase(s, tm);

    TCase *te = tcase_create("errors-and-logs");
    tcase_set_timeout(te, timeout);
    tcase_add_test(te, test_last_error_is_thread_local);
    tcase_add_test(te, test_log_api_to_file);
    tcase_add_test(te, test_log_api_descriptor_calls);
    tcase_add_test(te, test_log_error_level_only);
    tcase_add_test(te, test_silent_by_default);
    tcase_add_loop_test(te, test_disable_solvers, 0, 3);
    tcase_add_test(te, test_log_dispatch);
    suite_add_tcase(s, te);
    return tu_run_suite_forked(s);
}
