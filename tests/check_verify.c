/* check_verify.c - UDNN_VERIFY and the reproducer lines of UDNN_LOG=api.
 * The non-CPU backend is a fake HIP plugin (tests/fake2) whose memory is
 * host memory: its AddTensor and SetTensor are right, its ScaleTensor is
 * wrong on purpose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

#define N 2
#define C 3
#define H 4
#define W 5
#define COUNT (N * C * H * W)

/* Per test (Check forks each): the fake plugin, a log file, UDNN_VERIFY. */
static char log_path[64];

static void use_fake_hip(const char *verify)
{
    char path[4096];
    const char *top = getenv("top_builddir");
    snprintf(path, sizeof path, "%s/tests/fake2/.libs", top ? top : ".");
    setenv("UDNN_BACKEND_PATH", path, 1);
    snprintf(log_path, sizeof log_path, "/tmp/udnn-verify-XXXXXX");
    int fd = mkstemp(log_path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "error", 1);
    setenv("UDNN_LOG_FILE", log_path, 1);
    if (verify) setenv("UDNN_VERIFY", verify, 1);
    else unsetenv("UDNN_VERIFY");
}

/* The log, read and removed. */
static void read_log(char *buf, size_t n)
{
    FILE *fp = fopen(log_path, "r");
    size_t got = fp ? fread(buf, 1, n - 1, fp) : 0;
    buf[got] = '\0';
    if (fp) fclose(fp);
    unlink(log_path);
}

static udnnHandle_t fake_handle(void)
{
    udnnHandle_t h = NULL;
    tu_ok(udnnCreateWithBackend(&h, UDNN_BACKEND_HIP, 0));
    return h;
}

/* A packed NCHW FLOAT tensor of n x c x h x w in the fake's memory. */
static void *tensor(udnnHandle_t h, udnnTensorDescriptor_t *d, int n, int c, const float *init)
{
    tu_ok(udnnCreateTensorDescriptor(d));
    tu_ok(udnnSetTensor4dDescriptor(*d, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, n, c, H, W));
    const size_t bytes = sizeof(float) * (size_t)(n * c * H * W);
    void *p;
    tu_ok(udnnMalloc(h, &p, bytes));
    tu_ok(udnnMemcpy(h, p, init, bytes, UDNN_MEMCPY_HOST_TO_DEVICE));
    return p;
}

static void fill(float *v, int count)
{
    for (int i = 0; i < count; i++) v[i] = (float)tu_uniform(-1.0, 1.0);
}

/* A failing call that leaves a known last error. */
static void plant_error(void)
{
    udnnTensorDescriptor_t d;
    tu_ok(udnnCreateTensorDescriptor(&d));
    ck_assert_int_eq(udnnSetTensor4dDescriptor(d, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 0, 1, 1, 1),
                     UDNN_STATUS_BAD_PARAM);
    udnnDestroyTensorDescriptor(d);
}

static void assert_error_is_planted(void)
{
    char msg[1024];
    udnnGetLastErrorString(msg, sizeof msg);
    ck_assert_msg(strstr(msg, "udnnSetTensor4dDescriptor") && strstr(msg, "n is 0"),
                  "the last error changed: %s", msg);
}

/* C = 0.5 * A(1 x C x H x W, broadcast over n) + 0.75 * C: a right op
 * whose output the op reads, verified without a word. */
START_TEST(test_right_op_passes_quietly)
{
    tu_seed_fresh();
    use_fake_hip("1");
    udnnHandle_t h = fake_handle();
    float a[C * H * W], c[COUNT], out[COUNT];
    fill(a, C * H * W);
    fill(c, COUNT);
    udnnTensorDescriptor_t ad, cd;
    void *ap = tensor(h, &ad, 1, C, a), *cp = tensor(h, &cd, N, C, c);
    const float alpha = 0.5f, beta = 0.75f;
    plant_error();
    tu_ok(udnnAddTensor(h, &alpha, ad, ap, &beta, cd, cp));
    assert_error_is_planted();
    tu_ok(udnnMemcpy(h, out, cp, sizeof out, UDNN_MEMCPY_DEVICE_TO_HOST));
    for (int i = 0; i < COUNT; i++)
        ck_assert_float_eq_tol(out[i], 0.5 * a[i % (C * H * W)] + 0.75 * c[i], 1e-6);
    const float value = 1.5f;
    tu_ok(udnnSetTensor(h, cd, cp, &value));
    assert_error_is_planted();
    udnnFree(h, ap);
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(ad);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[8192];
    read_log(log, sizeof log);
    ck_assert_msg(strstr(log, "UDNN_VERIFY") == NULL, "log: %s", log);
}
END_TEST

/* The wrong op: the call succeeds under UDNN_VERIFY=1, the mismatch is
 * logged with the op, the error and a reproducer, the last error stays. */
START_TEST(test_wrong_op_is_logged)
{
    tu_seed_fresh();
    use_fake_hip("1");
    udnnHandle_t h = fake_handle();
    float c[COUNT];
    fill(c, COUNT);
    udnnTensorDescriptor_t cd;
    void *cp = tensor(h, &cd, N, C, c);
    const float alpha = 2.0f;
    plant_error();
    tu_ok(udnnScaleTensor(h, cd, cp, &alpha));
    assert_error_is_planted();
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[8192];
    read_log(log, sizeof log);
    ck_assert_msg(strstr(log, "udnn[error] UDNN_VERIFY: udnnScaleTensor: y relative error") != NULL,
                  "log: %s", log);
    ck_assert_msg(strstr(log, "over tolerance 1e-05") != NULL, "log: %s", log);
    ck_assert_msg(strstr(log, "reproduce with: udnn-bench scale --dtype f32 --n 2 --c 3 --h 4 "
                              "--w 5 --alpha 2 --backend hip") != NULL,
                  "log: %s", log);
}
END_TEST

/* UDNN_VERIFY=abort: the mismatch fails the call with its message. */
START_TEST(test_abort_fails_the_call)
{
    tu_seed_fresh();
    use_fake_hip("abort");
    udnnHandle_t h = fake_handle();
    float c[COUNT];
    fill(c, COUNT);
    udnnTensorDescriptor_t cd;
    void *cp = tensor(h, &cd, N, C, c);
    const float alpha = 2.0f;
    tu_assert_fails(udnnScaleTensor(h, cd, cp, &alpha), UDNN_STATUS_EXECUTION_FAILED,
                    "UDNN_VERIFY: udnnScaleTensor", "relative error", "udnn-bench scale");
    /* the right op still passes */
    float a[COUNT];
    fill(a, COUNT);
    udnnTensorDescriptor_t ad;
    void *ap = tensor(h, &ad, N, C, a);
    const float one = 1.0f, zero = 0.0f;
    tu_ok(udnnAddTensor(h, &one, ad, ap, &zero, cd, cp));
    udnnFree(h, ap);
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(ad);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[8192];
    read_log(log, sizeof log);
}
END_TEST

/* Without UDNN_VERIFY (or with 0) nothing is checked. */
START_TEST(test_off_checks_nothing)
{
    tu_seed_fresh();
    use_fake_hip(_i ? "0" : NULL);
    udnnHandle_t h = fake_handle();
    float c[COUNT];
    fill(c, COUNT);
    udnnTensorDescriptor_t cd;
    void *cp = tensor(h, &cd, N, C, c);
    const float alpha = 2.0f;
    tu_ok(udnnScaleTensor(h, cd, cp, &alpha));
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[8192];
    read_log(log, sizeof log);
    ck_assert_msg(strstr(log, "UDNN_VERIFY") == NULL, "log: %s", log);
}
END_TEST

/* UDNN_LOG off: a mismatch still reaches stderr, since it was asked for. */
START_TEST(test_mismatch_reaches_stderr_without_log)
{
    tu_seed_fresh();
    use_fake_hip("1");
    unsetenv("UDNN_LOG");
    char err_path[] = "/tmp/udnn-verify-err-XXXXXX";
    int fd = mkstemp(err_path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_ge(dup2(fd, 2), 0);
    close(fd);
    udnnHandle_t h = fake_handle();
    float c[COUNT];
    fill(c, COUNT);
    udnnTensorDescriptor_t cd;
    void *cp = tensor(h, &cd, N, C, c);
    const float alpha = 3.0f;
    tu_ok(udnnScaleTensor(h, cd, cp, &alpha));
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    fflush(stderr);
    unlink(log_path); /* UDNN_LOG is off: the log file stays empty */
    snprintf(log_path, sizeof log_path, "%s", err_path);
    char text[8192];
    read_log(text, sizeof text);
    ck_assert_msg(strstr(text, "UDNN_VERIFY: udnnScaleTensor") != NULL, "stderr: %s", text);
}
END_TEST

/* The CPU backend is the reference: UDNN_VERIFY leaves it alone. */
START_TEST(test_cpu_is_not_verified)
{
    tu_seed_fresh();
    use_fake_hip("abort");
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    float c[COUNT];
    fill(c, COUNT);
    udnnTensorDescriptor_t cd;
    void *cp = tensor(h, &cd, N, C, c);
    const float alpha = 2.0f;
    tu_ok(udnnScaleTensor(h, cd, cp, &alpha));
    udnnFree(h, cp);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[8192];
    read_log(log, sizeof log);
    ck_assert_msg(strstr(log, "UDNN_VERIFY") == NULL, "log: %s", log);
}
END_TEST

/* UDNN_LOG=api: each op logs the udnn-bench line that reproduces it,
 * strides and scalars included. */
START_TEST(test_api_log_has_reproducer)
{
    tu_seed_fresh();
    use_fake_hip(NULL);
    setenv("UDNN_LOG", "api", 1);
    udnnHandle_t h = tu_handle(UDNN_BACKEND_CPU);
    udnnTensorDescriptor_t ad, cd;
    const int dims[4] = {N, C, H, W}, strides[4] = {200, 60, 12, 2};
    tu_ok(udnnCreateTensorDescriptor(&ad));
    tu_ok(udnnSetTensorNdDescriptor(ad, UDNN_DATA_FLOAT, 4, dims, strides));
    tu_ok(udnnCreateTensorDescriptor(&cd));
    tu_ok(udnnSetTensor4dDescriptor(cd, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, N, C, H, W));
    float *a = calloc(400, sizeof *a), *c = calloc(COUNT, sizeof *c);
    const float alpha = 0.25f, beta = 1.0f;
    tu_ok(udnnAddTensor(h, &alpha, ad, a, &beta, cd, c));
    free(a);
    free(c);
    udnnDestroyTensorDescriptor(ad);
    udnnDestroyTensorDescriptor(cd);
    udnnDestroy(h);
    char log[16384];
    read_log(log, sizeof log);
    ck_assert_msg(strstr(log, "udnnAddTensor: reproduce with: udnn-bench addtensor --dtype f32 "
                              "--n 2 --c 3 --h 4 --w 5 --layout nhwc --a-strides 200,60,12,2 "
                              "--alpha 0.25 --beta 1 --backend cpu") != NULL,
                  "log: %s", log);
}
END_TEST

static Suite *verify_suite(void)
{
    Suite *s = suite_create("verify");
    TCase *tc = tcase_create("verify");
    tcase_add_test(tc, test_right_op_passes_quietly);
    tcase_add_test(tc, test_wrong_op_is_logged);
    tcase_add_test(tc, test_abort_fails_the_call);
    tcase_add_loop_test(tc, test_off_checks_nothing, 0, 2);
    tcase_add_test(tc, test_mismatch_reaches_stderr_without_log);
    tcase_add_test(tc, test_cpu_is_not_verified);
    tcase_add_test(tc, test_api_log_has_reproducer);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return tu_run_suite_forked(verify_suite());
}
