/* testutil.c - see testutil.h. */
#include "tests/testutil.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GUARD_BYTES 64
#define GUARD_BYTE 0xA5

/* ---- backends -------------------------------------------------------------- */

/* Whether UDNN_TEST_BACKENDS (a comma-separated list of names; unset or
 * empty: all) lets the suites run on backend b. tests/ref-only.sh sets it to
 * cpu: it tests the CPU oracle, and the GPU runs of the suites are done. */
static int backend_selected(udnnBackend_t b)
{
    const char *list = getenv("UDNN_TEST_BACKENDS");
    if (list == NULL || *list == '\0') return 1;
    const char *name = tu_backend_name(b);
    size_t len = strlen(name);
    for (const char *p = list; *p != '\0'; p += strcspn(p, ","), p += *p == ',')
        if (strcspn(p, ",") == len && strncmp(p, name, len) == 0) return 1;
    return 0;
}

int tu_backends(udnnBackend_t out[3])
{
    static const udnnBackend_t all[3] = {UDNN_BACKEND_CPU, UDNN_BACKEND_CUDA, UDNN_BACKEND_HIP};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        int count = 0;
        if (backend_selected(all[i]) && udnnGetDeviceCount(all[i], &count) == UDNN_STATUS_SUCCESS &&
            count > 0)
            out[n++] = all[i];
    }
    return n;
}

int tu_device_present(udnnBackend_t b)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int n = 0;
        if (udnnGetDeviceCount(b, &n) == UDNN_STATUS_SUCCESS && n > 0) _exit(0);
        /* say why: the plugin did not load, or the runtime sees no device */
        char why[1024] = "";
        udnnHandle_t h = NULL;
        if (udnnCreateWithBackend(&h, b, 0) != UDNN_STATUS_SUCCESS)
            udnnGetLastErrorString(why, sizeof why);
        else
            udnnDestroy(h);
        printf("no %s device through udnn (%s): skipped\n", tu_backend_name(b), why);
        fflush(stdout);
        _exit(77);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

const char *tu_backend_name(udnnBackend_t b)
{
    switch (b) {
    case UDNN_BACKEND_CPU: return "cpu";
    case UDNN_BACKEND_CUDA: return "cuda";
    case UDNN_BACKEND_HIP: return "hip";
    default: return "auto";
    }
}

udnnHandle_t tu_handle(udnnBackend_t b)
{
    udnnHandle_t h = NULL;
    udnnStatus_t st = udnnCreateWithBackend(&h, b, 0);
    if (st != UDNN_STATUS_SUCCESS) {
        char msg[1024];
        udnnGetLastErrorString(msg, sizeof msg);
        ck_abort_msg("udnnCreateWithBackend(%s): %s", tu_backend_name(b), msg);
    }
    return h;
}

void tu_assert_fails_at(const char *file, int line, udnnStatus_t st, udnnStatus_t expected, ...)
{
    char msg[1024];
    udnnGetLastErrorString(msg, sizeof msg);
    if (st != expected)
        ck_abort_msg("%s:%d: status %d (%s), expected %d; message: %s", file, line, (int)st,
                     udnnGetErrorString(st), (int)expected, msg);
    va_list ap;
    va_start(ap, expected);
    for (const char *s = va_arg(ap, const char *); s != NULL; s = va_arg(ap, const char *))
        if (strstr(msg, s) == NULL) {
            va_end(ap);
            ck_abort_msg("%s:%d: message \"%s\" does not mention \"%s\"", file, line, msg, s);
        }
    va_end(ap);
}

/* ---- random numbers: splitmix64 -------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull, rng_seed;

void tu_seed(uint64_t seed)
{
    rng_seed = seed;
    rng_state = seed * 0x9e3779b97f4a7c15ull + 1;
}

void tu_seed_fresh(void)
{
    const char *fixed = getenv("UDNN_TEST_SEED");
    if (fixed != NULL && *fixed != '\0') {
        tu_seed(strtoull(fixed, NULL, 10));
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    tu_seed((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid());
}

uint64_t tu_seed_used(void)
{
    return rng_seed;
}

static uint64_t next_u64(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double tu_uniform(double lo, double hi)
{
    return lo + (hi - lo) * ((double)(next_u64() >> 11) * 0x1.0p-53);
}

int tu_int(int lo, int hi)
{
    return lo + (int)(next_u64() % (uint64_t)(hi - lo + 1));
}

/* ---- guarded buffers ---------------------------------------------------------------- */

void tu_buf_init(tu_buf *b, udnnHandle_t h, size_t bytes)
{
    b->h = h;
    b->bytes = bytes;
    void *dev = NULL;
    tu_ok(udnnMalloc(h, &dev, bytes + 2 * GUARD_BYTES));
    b->dev = dev;
    b->host = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(b->host);
    unsigned char guard[GUARD_BYTES];
    memset(guard, GUARD_BYTE, sizeof guard);
    tu_ok(udnnMemcpy(h, b->dev, guard, GUARD_BYTES, UDNN_MEMCPY_HOST_TO_DEVICE));
    tu_ok(udnnMemcpy(h, b->dev + GUARD_BYTES + bytes, guard, GUARD_BYTES,
                     UDNN_MEMCPY_HOST_TO_DEVICE));
    tu_buf_poison(b);
}

void *tu_buf_ptr(const tu_buf *b)
{
    return b->dev + GUARD_BYTES;
}

void tu_buf_upload(tu_buf *b)
{
    tu_ok(udnnMemcpy(b->h, b->dev + GUARD_BYTES, b->host, b->bytes, UDNN_MEMCPY_HOST_TO_DEVICE));
}

void tu_buf_download(tu_buf *b)
{
    tu_ok(udnnMemcpy(b->h, b->host, b->dev + GUARD_BYTES, b->bytes, UDNN_MEMCPY_DEVICE_TO_HOST));
}

void tu_buf_poison(tu_buf *b)
{
    memset(b->host, 0xFF, b->bytes);
    tu_buf_upload(b);
}

int tu_buf_guards_intact(const tu_buf *b)
{
    unsigned char guard[2][GUARD_BYTES];
    tu_ok(udnnMemcpy(b->h, guard[0], b->dev, GUARD_BYTES, UDNN_MEMCPY_DEVICE_TO_HOST));
    tu_ok(udnnMemcpy(b->h, guard[1], b->dev + GUARD_BYTES + b->bytes, GUARD_BYTES,
                     UDNN_MEMCPY_DEVICE_TO_HOST));
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < GUARD_BYTES; i++)
            if (guard[g][i] != GUARD_BYTE) return 0;
    return 1;
}

void tu_buf_free(tu_buf *b)
{
    udnnFree(b->h, b->dev);
    free(b->host);
    memset(b, 0, sizeof *b);
}

/* ---- element types ------------------------------------------------------------------- */

static size_t type_size(udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_DOUBLE:
    case UDNN_DATA_INT64: return 8;
    case UDNN_DATA_FLOAT:
    case UDNN_DATA_INT32: return 4;
    case UDNN_DATA_HALF:
    case UDNN_DATA_BFLOAT16: return 2;
    case UDNN_DATA_INT8: return 1;
    }
    return 0;
}

/* bfloat16 by hand, half through the compiler's _Float16: independent of
 * the library's own conversions. */
static uint16_t to_bf16(double v)
{
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return 0x7fc0;
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static double from_bf16(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static double load(const unsigned char *base, udnnDataType_t t, int64_t off)
{
    switch (t) {
    case UDNN_DATA_FLOAT: return ((const float *)base)[off];
    case UDNN_DATA_DOUBLE: return ((const double *)base)[off];
    case UDNN_DATA_HALF: return (double)((const _Float16 *)base)[off];
    case UDNN_DATA_BFLOAT16: return from_bf16(((const uint16_t *)base)[off]);
    case UDNN_DATA_INT8: return ((const int8_t *)base)[off];
    case UDNN_DATA_INT32: return ((const int32_t *)base)[off];
    case UDNN_DATA_INT64: return (double)((const int64_t *)base)[off];
    }
    return NAN;
}

static void store(unsigned char *base, udnnDataType_t t, int64_t off, double v)
{
    switch (t) {
    case UDNN_DATA_FLOAT: ((float *)base)[off] = (float)v; break;
    case UDNN_DATA_DOUBLE: ((double *)base)[off] = v; break;
    case UDNN_DATA_HALF: ((_Float16 *)base)[off] = (_Float16)(float)v; break;
    case UDNN_DATA_BFLOAT16: ((uint16_t *)base)[off] = to_bf16(v); break;
    case UDNN_DATA_INT8: ((int8_t *)base)[off] = (int8_t)lrint(v); break;
    case UDNN_DATA_INT32: ((int32_t *)base)[off] = (int32_t)lrint(v); break;
    case UDNN_DATA_INT64: ((int64_t *)base)[off] = (int64_t)llrint(v); break;
    }
}

double tu_round(udnnDataType_t t, double v)
{
    unsigned char tmp[8];
    store(tmp, t, 0, v);
    return load(tmp, t, 0);
}

double tu_tolerance(udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_DOUBLE: return 1e-12;
    case UDNN_DATA_FLOAT: return 1e-5;
    case UDNN_DATA_HALF: return 1e-3;
    case UDNN_DATA_BFLOAT16: return 8e-3;
    default: return 0.0;
    }
}

const udnnDataType_t tu_float_types[4] = {UDNN_DATA_FLOAT, UDNN_DATA_DOUBLE, UDNN_DATA_HALF,
                                          UDNN_DATA_BFLOAT16};

const char *tu_dtype_name(udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_FLOAT: return "f32";
    case UDNN_DATA_DOUBLE: return "f64";
    case UDNN_DATA_HALF: return "f16";
    case UDNN_DATA_BFLOAT16: return "bf16";
    case UDNN_DATA_INT8: return "s8";
    case UDNN_DATA_INT32: return "s32";
    case UDNN_DATA_INT64: return "s64";
    }
    return "?";
}

tu_scalar tu_scalar_of(udnnDataType_t t, double v)
{
    tu_scalar s;
    if (t == UDNN_DATA_DOUBLE) s.d = v;
    else s.f = (float)v;
    return s;
}

/* ---- tensors ----------------------------------------------------------------------------- */

const char *tu_layout_name(tu_layout l)
{
    return l == TU_NCHW ? "nchw" : l == TU_NHWC ? "nhwc" : "strided";
}

void tu_tensor_init(tu_tensor *t, udnnHandle_t h, udnnDataType_t dtype, int nb, const int *dims,
                    tu_layout layout)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->nb = nb;
    t->count = 1;
    for (int i = 0; i < nb; i++) {
        t->dims[i] = dims[i];
        t->count *= dims[i];
    }
    int64_t s = 1;
    if (layout == TU_NHWC && nb >= 3) {
        t->strides[1] = 1;
        s = dims[1];
        for (int i = nb - 1; i >= 2; i--) {
            t->strides[i] = (int)s;
            s *= dims[i];
        }
        t->strides[0] = (int)s;
    } else {
        /* strided: a gap of 1..3 elements after each dimension's extent */
        for (int i = nb - 1; i >= 0; i--) {
            t->strides[i] = (int)s;
            s = s * dims[i] + (layout == TU_STRIDED ? 1 + (i % 3) : 0);
        }
    }
    tu_ok(udnnCreateTensorDescriptor(&t->desc));
    tu_ok(udnnSetTensorNdDescriptor(t->desc, dtype, nb, t->dims, t->strides));
    size_t bytes = 0;
    tu_ok(udnnGetTensorSizeInBytes(t->desc, &bytes));
    tu_buf_init(&t->buf, h, bytes);
}

void tu_tensor_free(tu_tensor *t)
{
    tu_buf_free(&t->buf);
    udnnDestroyTensorDescriptor(t->desc);
}

int64_t tu_offset(const tu_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int d = t->nb - 1; d >= 0; d--) {
        off += (i % t->dims[d]) * t->strides[d];
        i /= t->dims[d];
    }
    return off;
}

double tu_get(const tu_tensor *t, int64_t i)
{
    return load(t->buf.host, t->dtype, tu_offset(t, i));
}

void tu_set(tu_tensor *t, int64_t i, double v)
{
    store(t->buf.host, t->dtype, tu_offset(t, i), v);
}

void tu_fill_uniform(tu_tensor *t, double lo, double hi)
{
    for (int64_t i = 0; i < t->count; i++) tu_set(t, i, tu_uniform(lo, hi));
    tu_upload(t);
}

void tu_blend_drawn(double *ref, double alpha, double beta, tu_tensor *old)
{
    enum { MAX_CANCELLATION = 32, MAX_DRAWS = 16 };
    const int64_t n = old->count;
    if (beta == 0.0) {
        for (int64_t i = 0; i < n; i++) ref[i] *= alpha;
        return;
    }
    double *plain = malloc((size_t)n * sizeof *plain);
    ck_assert_ptr_nonnull(plain);
    memcpy(plain, ref, (size_t)n * sizeof *plain);
    for (int draw = 1;; draw++) {
        tu_fill_uniform(old, -1.0, 1.0);
        double terms = 0.0, sum = 0.0;
        for (int64_t i = 0; i < n; i++) {
            const double a = alpha * plain[i], b = beta * tu_get(old, i);
            ref[i] = a + b;
            terms += (fabs(a) + fabs(b)) * (fabs(a) + fabs(b));
            sum += ref[i] * ref[i];
        }
        if (terms <= (double)MAX_CANCELLATION * MAX_CANCELLATION * sum || draw == MAX_DRAWS) break;
    }
    free(plain);
}

void tu_fill_int(tu_tensor *t, int lo, int hi)
{
    for (int64_t i = 0; i < t->count; i++) tu_set(t, i, tu_int(lo, hi));
    tu_upload(t);
}

void tu_upload(tu_tensor *t)
{
    tu_buf_upload(&t->buf);
}

void tu_download(tu_tensor *t)
{
    tu_buf_download(&t->buf);
}

void tu_values(const tu_tensor *t, double *out)
{
    for (int64_t i = 0; i < t->count; i++) out[i] = tu_get(t, i);
}

udnnTensorDescriptor_t tu_packed_desc(udnnDataType_t dtype, int nb, const int *dims)
{
    udnnTensorDescriptor_t d;
    tu_ok(udnnCreateTensorDescriptor(&d));
    tu_ok(udnnSetTensorNdDescriptorEx(d, UDNN_TENSOR_NCHW, dtype, nb, dims));
    return d;
}

double tu_dot(const tu_tensor *t, const double *w)
{
    double sum = 0.0;
    for (int64_t i = 0; i < t->count; i++) sum += w[i] * tu_get(t, i);
    return sum;
}

void tu_filter_init(tu_filter *f, udnnHandle_t h, udnnDataType_t dtype, udnnTensorFormat_t fmt,
                    int nb, const int *dims)
{
    memset(f, 0, sizeof *f);
    f->dtype = dtype;
    f->format = fmt;
    f->nb = nb;
    f->count = 1;
    for (int i = 0; i < nb; i++) {
        f->dims[i] = dims[i];
        f->count *= dims[i];
    }
    int64_t s = 1;
    if (fmt == UDNN_TENSOR_NHWC) {
        f->strides[1] = 1;
        s = dims[1];
        for (int i = nb - 1; i >= 2; i--) {
            f->strides[i] = s;
            s *= dims[i];
        }
        f->strides[0] = s;
    } else {
        for (int i = nb - 1; i >= 0; i--) {
            f->strides[i] = s;
            s *= dims[i];
        }
    }
    tu_ok(udnnCreateFilterDescriptor(&f->desc));
    tu_ok(udnnSetFilterNdDescriptor(f->desc, dtype, fmt, nb, dims));
    tu_buf_init(&f->buf, h, (size_t)f->count * type_size(dtype));
}

void tu_filter_free(tu_filter *f)
{
    tu_buf_free(&f->buf);
    udnnDestroyFilterDescriptor(f->desc);
}

static int64_t filter_offset(const tu_filter *f, int64_t i)
{
    int64_t off = 0;
    for (int d = f->nb - 1; d >= 0; d--) {
        off += (i % f->dims[d]) * f->strides[d];
        i /= f->dims[d];
    }
    return off;
}

double tu_fget(const tu_filter *f, int64_t i)
{
    return load(f->buf.host, f->dtype, filter_offset(f, i));
}

void tu_fset(tu_filter *f, int64_t i, double v)
{
    store(f->buf.host, f->dtype, filter_offset(f, i), v);
}

/* ---- comparisons ---------------------------------------------------------------------------- */

double tu_rel_error(const double *out, const double *ref, int64_t n)
{
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < n; i++) {
        if (isnan(out[i]) || isnan(ref[i])) return INFINITY;
        double d = out[i] - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    /* an all-zero reference is met only exactly (a 1-element blend whose
     * 16-bit terms cancel) */
    if (den == 0.0) return num == 0.0 ? 0.0 : INFINITY;
    return sqrt(num / den);
}

int tu_ref_normal(udnnDataType_t t, const double *ref, int64_t n)
{
    const double tiny = t == UDNN_DATA_HALF ? 0x1p-14 : t == UDNN_DATA_DOUBLE ? DBL_MIN : FLT_MIN;
    double sq = 0.0;
    for (int64_t i = 0; i < n; i++) sq += ref[i] * ref[i];
    return sq >= (double)n * tiny * tiny;
}

void tu_check_tensor_at(const char *file, int line, tu_tensor *t, const double *ref,
                        const char *what)
{
    tu_download(t);
    if (!tu_buf_guards_intact(&t->buf))
        ck_abort_msg("%s:%d: %s: a write outside the output tensor", file, line, what);
    double *out = malloc((size_t)t->count * sizeof *out);
    ck_assert_ptr_nonnull(out);
    tu_values(t, out);
    for (int64_t i = 0; i < t->count; i++)
        if (isnan(out[i]) && !isnan(ref[i])) {
            free(out);
            ck_abort_msg("%s:%d: %s: element %lld was not written (seed %llu)", file, line,
                         what, (long long)i, (unsigned long long)tu_seed_used());
        }
    double err = tu_rel_error(out, ref, t->count);
    free(out);
    if (!(err <= tu_tolerance(t->dtype)))
        ck_abort_msg("%s:%d: %s: relative error %.3g over tolerance %.3g (seed %llu)", file, line,
                     what, err, tu_tolerance(t->dtype), (unsigned long long)tu_seed_used());
}

void tu_assert_untouched(tu_buf *b, const char *what)
{
    tu_buf_download(b);
    for (size_t i = 0; i < b->bytes; i++)
        ck_assert_msg(b->host[i] == 0xFF, "%s: a buffer the call must not write changed", what);
    ck_assert_msg(tu_buf_guards_intact(b), "%s: a write outside the buffer", what);
}

static int run_suite(Suite *s, enum fork_status fork)
{
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, fork);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int tu_run_suite(Suite *s)
{
    return run_suite(s, CK_FORK_GETENV);
}

int tu_run_suite_forked(Suite *s)
{
    return run_suite(s, CK_FORK);
}

const char *tu_input_path(const char *name, char *buf, size_t n)
{
    const char *dir = getenv("UDNN_TEST_INPUTS");
    snprintf(buf, n, "%s/%s", dir ? dir : "tests/inputs", name);
    return buf;
}
