/* check_cuda_device.c - the CUDA backend's device part: device count,
 * malloc/memcpy/memset round trips, a real cudaStream_t through
 * udnnSetStream, SetTensor and ScaleTensor on every float type against the
 * CPU backend, each device (two at most) against the CPU, CUDA errors as
 * udnn statuses with CUDA's message, and silence. Skips (77) when there is
 * no CUDA device. scripts/gpu-check runs it against the built plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "tests/testutil.h"

static udnnHandle_t cuda_handle(void)
{
    udnnHandle_t h = NULL;
    udnnStatus_t st = udnnCreateWithBackend(&h, UDNN_BACKEND_CUDA, 0);
    if (st != UDNN_STATUS_SUCCESS) {
        char msg[1024];
        udnnGetLastErrorString(msg, sizeof msg);
        ck_abort_msg("udnnCreateWithBackend(CUDA): status %d: %s", (int)st, msg);
    }
    return h;
}

START_TEST(test_device_count)
{
    int n = 0;
    ck_assert_int_eq(udnnGetDeviceCount(UDNN_BACKEND_CUDA, &n), UDNN_STATUS_SUCCESS);
    ck_assert_int_ge(n, 1);
    udnnHandle_t h = cuda_handle();
    udnnBackend_t b;
    ck_assert_int_eq(udnnGetBackend(h, &b), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(b, UDNN_BACKEND_CUDA);
    ck_assert_int_eq(udnnDestroy(h), UDNN_STATUS_SUCCESS);
}
END_TEST

START_TEST(test_round_trip)
{
    udnnHandle_t h = cuda_handle();
    enum { N = 1 << 20 };
    unsigned char *src = malloc(N), *dst = malloc(N);
    for (int i = 0; i < N; i++) src[i] = (unsigned char)(i * 7 + 3);
    void *a = NULL, *b = NULL;
    ck_assert_int_eq(udnnMalloc(h, &a, N), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnMalloc(h, &b, N), UDNN_STATUS_SUCCESS);
    ck_assert_ptr_nonnull(a);
    /* the pointer is device memory */
    struct cudaPointerAttributes attr;
    ck_assert_int_eq(cudaPointerGetAttributes(&attr, a), cudaSuccess);
    ck_assert_int_eq(attr.type, cudaMemoryTypeDevice);
    ck_assert_int_eq(udnnMemcpy(h, a, src, N, UDNN_MEMCPY_HOST_TO_DEVICE), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnMemcpy(h, b, a, N, UDNN_MEMCPY_DEVICE_TO_DEVICE), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnMemcpy(h, dst, b, N, UDNN_MEMCPY_DEVICE_TO_HOST), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(memcmp(src, dst, N), 0);
    /* memset of a middle range, then a synchronize before reading back */
    ck_assert_int_eq(udnnMemset(h, (char *)b + 100, 0x5A, 1000), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnSynchronize(h), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnMemcpy(h, dst, b, N, UDNN_MEMCPY_DEVICE_TO_HOST), UDNN_STATUS_SUCCESS);
    memset(src + 100, 0x5A, 1000);
    ck_assert_int_eq(memcmp(src, dst, N), 0);
    ck_assert_int_eq(udnnFree(h, a), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnFree(h, b), UDNN_STATUS_SUCCESS);
    free(src);
    free(dst);
    ck_assert_int_eq(udnnDestroy(h), UDNN_STATUS_SUCCESS);
}
END_TEST

START_TEST(test_stream)
{
    udnnHandle_t h = cuda_handle();
    cudaStream_t s;
    ck_assert_int_eq(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    ck_assert_int_eq(udnnSetStream(h, s), UDNN_STATUS_SUCCESS);
    udnnStream_t got = NULL;
    ck_assert_int_eq(udnnGetStream(h, &got), UDNN_STATUS_SUCCESS);
    ck_assert_ptr_eq(got, s);
    /* an op on the stream, then the copy on the same stream sees it */
    int dims[4] = {2, 3, 40, 50};
    tu_tensor t;
    tu_tensor_init(&t, h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    float v = 2.5f;
    ck_assert_int_eq(udnnSetTensor(h, t.desc, tu_buf_ptr(&t.buf), &v), UDNN_STATUS_SUCCESS);
    tu_download(&t);
    for (int64_t i = 0; i < t.count; i++) ck_assert_double_eq(tu_get(&t, i), 2.5);
    ck_assert_int_eq(udnnSynchronize(h), UDNN_STATUS_SUCCESS);
    tu_tensor_free(&t);
    ck_assert_int_eq(udnnSetStream(h, NULL), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnDestroy(h), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(cudaStreamDestroy(s), cudaSuccess);
}
END_TEST

/* SetTensor then ScaleTensor on CUDA and on the CPU from the same data. */
START_TEST(test_set_scale_vs_cpu)
{
    udnnDataType_t dt = tu_float_types[_i / 2];
    tu_layout layout = _i % 2 ? TU_STRIDED : TU_NCHW;
    udnnHandle_t hg = cuda_handle(), hc = tu_handle(UDNN_BACKEND_CPU);
    int dims[4] = {3, 5, 7, 11};
    tu_tensor g, c;
    tu_tensor_init(&g, hg, dt, 4, dims, layout);
    tu_tensor_init(&c, hc, dt, 4, dims, layout);
    char what[128];
    double *ref = malloc(sizeof(double) * (size_t)c.count);

    /* ScaleTensor of random data */
    tu_seed(42);
    tu_fill_uniform(&g, -3, 3);
    tu_seed(42);
    tu_fill_uniform(&c, -3, 3);
    tu_scalar alpha = tu_scalar_of(dt, -1.75);
    ck_assert_int_eq(udnnScaleTensor(hg, g.desc, tu_buf_ptr(&g.buf), &alpha), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnScaleTensor(hc, c.desc, tu_buf_ptr(&c.buf), &alpha), UDNN_STATUS_SUCCESS);
    tu_download(&c);
    tu_values(&c, ref);
    snprintf(what, sizeof what, "scale %s %s", tu_dtype_name(dt), tu_layout_name(layout));
    tu_check_tensor(&g, ref, what);

    /* SetTensor: exact */
    tu_scalar v = tu_scalar_of(dt, 0.3);
    ck_assert_int_eq(udnnSetTensor(hg, g.desc, tu_buf_ptr(&g.buf), &v), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnSetTensor(hc, c.desc, tu_buf_ptr(&c.buf), &v), UDNN_STATUS_SUCCESS);
    tu_download(&g);
    tu_download(&c);
    ck_assert(tu_buf_guards_intact(&g.buf));
    for (int64_t i = 0; i < c.count; i++) ck_assert_double_eq(tu_get(&g, i), tu_get(&c, i));

    free(ref);
    tu_tensor_free(&g);
    tu_tensor_free(&c);
    udnnDestroy(hg);
    udnnDestroy(hc);
}
END_TEST

/* Softmax INSTANCE backward over rows too long for a team's registers, on
 * handle h from seed 7's y and dy: on the GPU, sm_keep_kernel, which asks
 * for more than 48 KB of shared memory. Leaves the result in dx. */
static void softmax_bwd_long(udnnHandle_t h, tu_tensor *y, tu_tensor *dy, tu_tensor *dx)
{
    static const int dims[4] = {2, 5, 64, 64};
    tu_tensor_init(y, h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(dy, h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(dx, h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_seed(7);
    tu_fill_uniform(y, 0.0, 1e-4);
    tu_fill_uniform(dy, -1.0, 1.0);
    const float one = 1.0f, zero = 0.0f;
    ck_assert_int_eq(udnnSoftmaxBackward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE,
                                         &one, y->desc, tu_buf_ptr(&y->buf), dy->desc,
                                         tu_buf_ptr(&dy->buf), &zero, dx->desc,
                                         tu_buf_ptr(&dx->buf)),
                     UDNN_STATUS_SUCCESS);
}

/* Every device in turn (two at most; one where there is one) against the
 * CPU, with a kernel whose leave for more than 48 KB of shared memory the
 * runtime gives one device at a time: asked on the first device only, the
 * second device's launch failed. */
START_TEST(test_each_device)
{
    int n = 0;
    ck_assert_int_eq(udnnGetDeviceCount(UDNN_BACKEND_CUDA, &n), UDNN_STATUS_SUCCESS);
    if (n > 2) n = 2;
    udnnHandle_t hc = tu_handle(UDNN_BACKEND_CPU);
    tu_tensor y, dy, dx;
    softmax_bwd_long(hc, &y, &dy, &dx);
    tu_download(&dx);
    double *ref = malloc(sizeof(double) * (size_t)dx.count);
    ck_assert_ptr_nonnull(ref);
    tu_values(&dx, ref);
    tu_tensor_free(&y);
    tu_tensor_free(&dy);
    tu_tensor_free(&dx);
    udnnDestroy(hc);
    for (int d = 0; d < n; d++) {
        udnnHandle_t h = NULL;
        ck_assert_int_eq(udnnCreateWithBackend(&h, UDNN_BACKEND_CUDA, d), UDNN_STATUS_SUCCESS);
        softmax_bwd_long(h, &y, &dy, &dx);
        char what[64];
        snprintf(what, sizeof what, "softmax backward on device %d", d);
        tu_check_tensor(&dx, ref, what);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        ck_assert_int_eq(udnnDestroy(h), UDNN_STATUS_SUCCESS);
    }
    free(ref);
}
END_TEST

START_TEST(test_bad_pointer)
{
    udnnHandle_t h = cuda_handle();
    int host_var = 0;
    /* not a device allocation: cudaFree refuses it */
    ck_assert_int_eq(udnnFree(h, &host_var), UDNN_STATUS_EXECUTION_FAILED);
    char msg[512];
    udnnGetLastErrorString(msg, sizeof msg);
    ck_assert_msg(strstr(msg, cudaGetErrorString(cudaErrorInvalidValue)) != NULL,
                  "message without CUDA's text: %s", msg);
    /* the handle still works */
    void *p = NULL;
    ck_assert_int_eq(udnnMalloc(h, &p, 256), UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(udnnFree(h, p), UDNN_STATUS_SUCCESS);
    /* an allocation far too large */
    ck_assert_int_eq(udnnMalloc(h, &p, (size_t)1 << 62), UDNN_STATUS_ALLOC_FAILED);
    udnnGetLastErrorString(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "memory") != NULL, "%s", msg);
    ck_assert_int_eq(udnnDestroy(h), UDNN_STATUS_SUCCESS);
}
END_TEST

/* Nothing the backend does, failures included, writes to stdout or stderr. */
START_TEST(test_silent)
{
    fflush(stdout);
    fflush(stderr);
    FILE *cap = tmpfile();
    ck_assert_ptr_nonnull(cap);
    int out = dup(1), err = dup(2);
    dup2(fileno(cap), 1);
    dup2(fileno(cap), 2);
    udnnHandle_t h = cuda_handle();
    void *p = NULL;
    int host_var = 0;
    udnnStatus_t st1 = udnnMalloc(h, &p, 4096);
    udnnStatus_t st2 = udnnMemset(h, p, 0, 4096);
    udnnStatus_t st3 = udnnFree(h, &host_var);
    void *big = NULL;
    udnnStatus_t st4 = udnnMalloc(h, &big, (size_t)1 << 62);
    udnnStatus_t st5 = udnnSynchronize(h);
    udnnFree(h, p);
    udnnDestroy(h);
    fflush(stdout);
    fflush(stderr);
    dup2(out, 1);
    dup2(err, 2);
    close(out);
    close(err);
    ck_assert_int_eq(st1, UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(st2, UDNN_STATUS_SUCCESS);
    ck_assert_int_eq(st3, UDNN_STATUS_EXECUTION_FAILED);
    ck_assert_int_eq(st4, UDNN_STATUS_ALLOC_FAILED);
    ck_assert_int_eq(st5, UDNN_STATUS_SUCCESS);
    fseek(cap, 0, SEEK_END);
    ck_assert_int_eq(ftell(cap), 0);
    fclose(cap);
}
END_TEST

int main(void)
{
    if (!tu_device_present(UDNN_BACKEND_CUDA)) return 77;
    Suite *s = suite_create("cuda_device");
    TCase *tc = tcase_create("cuda_device");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_device_count);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_stream);
    tcase_add_loop_test(tc, test_set_scale_vs_cpu, 0, 8);
    tcase_add_test(tc, test_each_device);
    tcase_add_test(tc, test_bad_pointer);
    tcase_add_test(tc, test_silent);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
