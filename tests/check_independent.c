/* check_independent.c - the acceptance program.
 *
 * Written only against udnn.h and DESIGN.md: it shares no code with the other
 * suites (no testutil) nor with the library's own oracle (cpu/ref). It runs
 * convolution (forward, backward data, backward filter), pooling, softmax and
 * activations on random NCHW and NHWC tensors of every floating type, on
 * every backend that reports a device, and compares each result with its own
 * double-precision implementation, written as plain loops over logical NCHW
 * indices. Those implementations are themselves checked against central
 * finite differences (the oracle_* tests), so a mismatch points at the
 * library rather than at this file.
 *
 * Set UDNN_INDEP_SEED to replay the random cases of a failure message. */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "udnn.h"

/* ======================================================================== */
/* Failure reporting: every message names the seed and the case            */
/* ======================================================================== */

static unsigned long long g_seed;
static char g_case[384];  /* the random problem */
static char g_where[96];  /* backend, type, layout */

#define FAIL(...) fail_at(__LINE__, __VA_ARGS__)

static void fail_at(int line, const char *fmt, ...) CK_ATTRIBUTE_NORETURN;
static void fail_at(int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ck_abort_msg("line %d: %s [%s; %s; UDNN_INDEP_SEED=%llu]", line, msg, g_where, g_case,
                 g_seed);
}

static void describe_case(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_case, sizeof g_case, fmt, ap);
    va_end(ap);
}

static void expect_ok(udnnStatus_t st, const char *fn, int line)
{
    if (st == UDNN_STATUS_SUCCESS)
        return;
    char detail[512];
    udnnGetLastErrorString(detail, sizeof detail);
    fail_at(line, "%s returned %s: \"%s\"", fn, udnnGetErrorString(st), detail);
}

/* OK(udnnFoo, args...) runs the call and fails the test, with the library's
 * message, unless it succeeds. */
#define OK(fn, ...) expect_ok(fn(__VA_ARGS__), #fn, __LINE__)

/* ======================================================================== */
/* Random numbers (splitmix64), fresh for each test unless replayed         */
/* ======================================================================== */

static uint64_t g_rng;

static void seed_fresh(int loop_index)
{
    const char *env = getenv("UDNN_INDEP_SEED");
    if (env && *env) {
        g_seed = strtoull(env, NULL, 10);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        g_seed = ((unsigned long long)ts.tv_sec * 1000003ull) ^ (unsigned long long)ts.tv_nsec ^
                 ((unsigned long long)getpid() << 20) ^ ((unsigned long long)loop_index << 40);
    }
    g_rng = g_seed;
    g_case[0] = g_where[0] = '\0';
}

static uint64_t rng_next(void)
{
    uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next() >> 11) * 0x1p-53;
}

static int rng_int(int lo, int hi) /* inclusive */
{
    return lo + (int)(rng_next() % (uint64_t)(hi - lo + 1));
}

/* ======================================================================== */
/* Data types: storage, rounding and DESIGN.md's tolerances                 */
/* ======================================================================== */

typedef struct {
    udnnDataType_t dt;
    const char *name;
    size_t size;
    double tol; /* normwise relative error, DESIGN.md section 3 */
} dtype_info;

static const dtype_info kTypes[] = {
    {UDNN_DATA_DOUBLE, "double", sizeof(double), 1e-12},
    {UDNN_DATA_FLOAT, "float", sizeof(float), 1e-5},
    {UDNN_DATA_HALF, "half", sizeof(_Float16), 1e-3},
    {UDNN_DATA_BFLOAT16, "bfloat16", sizeof(uint16_t), 8e-3},
};
enum { N_TYPES = sizeof kTypes / sizeof kTypes[0] };

static uint16_t bf16_from_float(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) /* keep NaN a NaN: rounding could make it inf */
        return (uint16_t)((u >> 16) | 0x0040u);
    u += 0x7FFFu + ((u >> 16) & 1u); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void store_elem(unsigned char *base, udnnDataType_t dt, size_t off, double v)
{
    switch (dt) {
    case UDNN_DATA_DOUBLE: ((double *)(void *)base)[off] = v; break;
    case UDNN_DATA_FLOAT: ((float *)(void *)base)[off] = (float)v; break;
    case UDNN_DATA_HALF: ((_Float16 *)(void *)base)[off] = (_Float16)v; break;
    default: ((uint16_t *)(void *)base)[off] = bf16_from_float((float)v); break;
    }
}

static double load_elem(const unsigned char *base, udnnDataType_t dt, size_t off)
{
    switch (dt) {
    case UDNN_DATA_DOUBLE: return ((const double *)(const void *)base)[off];
    case UDNN_DATA_FLOAT: return ((const float *)(const void *)base)[off];
    case UDNN_DATA_HALF: return (double)((const _Float16 *)(const void *)base)[off];
    default: return bf16_to_float(((const uint16_t *)(const void *)base)[off]);
    }
}

/* The value the library will see once v is stored as dt. */
static double round_to(udnnDataType_t dt, double v)
{
    unsigned char tmp[sizeof(double)];
    store_elem(tmp, dt, 0, v);
    return load_elem(tmp, dt, 0);
}

/* Normwise ||out - ref|| / ||ref|| against tol; NaN and an all-zero
 * reference never pass. */
static void expect_close(const double *out, const double *ref, size_t n, double tol,
                         const char *what)
{
    double num = 0, den = 0, worst = -1;
    size_t worst_at = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(out[i]))
            FAIL("%s: element %zu is %g (not written?), expected %.9g", what, i, out[i], ref[i]);
        double d = fabs(out[i] - ref[i]);
        num += d * d;
        den += ref[i] * ref[i];
        if (d > worst) {
            worst = d;
            worst_at = i;
        }
    }
    if (!(den > 0))
        FAIL("%s: the reference is all zero; the case does not exercise the op", what);
    double err = sqrt(num / den);
    if (!(err < tol))
        FAIL("%s: normwise relative error %.3g exceeds %.3g; worst element %zu of %zu is %.17g, "
             "expected %.17g",
             what, err, tol, worst_at, n, out[worst_at], ref[worst_at]);
}

/* ======================================================================== */
/* Tensors in the handle's memory, with a host copy of their logical values */
/* ======================================================================== */

typedef enum { LAYOUT_NCHW, LAYOUT_NHWC } layout_t;
static const layout_t kLayouts[] = {LAYOUT_NCHW, LAYOUT_NHWC};

enum { GUARD = 64 };         /* bytes before and after each payload */
#define GUARD_BYTE 0xA5      /* what the guards hold */
#define POISON_BYTE 0xFF     /* a NaN in every floating type */

typedef struct {
    udnnHandle_t h;
    const dtype_info *ti;
    int dim[4];    /* n, c, h, w (k, c, r, s for a filter) */
    int stride[4]; /* in elements, of those logical dims */
    size_t count;
    double *val;         /* logical values, row-major over dim */
    unsigned char *dev;  /* guard | payload | guard, in the handle's memory */
    unsigned char *host; /* staging copy of the same bytes */
    udnnTensorDescriptor_t desc;
    udnnFilterDescriptor_t fdesc;
} dtensor;

static size_t dt_bytes(const dtensor *t)
{
    return t->count * t->ti->size + 2 * GUARD;
}

static void packed_strides(const int dim[4], layout_t lay, int stride[4])
{
    if (lay == LAYOUT_NCHW) {
        stride[3] = 1;
        stride[2] = dim[3];
        stride[1] = dim[2] * dim[3];
        stride[0] = dim[1] * dim[2] * dim[3];
    } else { /* channels innermost */
        stride[1] = 1;
        stride[3] = dim[1];
        stride[2] = dim[3] * dim[1];
        stride[0] = dim[2] * dim[3] * dim[1];
    }
}

static void dt_init(dtensor *t, udnnHandle_t h, const dtype_info *ti, const int dim[4],
                    layout_t lay, int is_filter)
{
    memset(t, 0, sizeof *t);
    t->h = h;
    t->ti = ti;
    memcpy(t->dim, dim, sizeof t->dim);
    packed_strides(dim, lay, t->stride);
    t->count = (size_t)dim[0] * dim[1] * dim[2] * dim[3];
    t->val = calloc(t->count, sizeof(double));
    t->host = malloc(dt_bytes(t));
    ck_assert(t->val && t->host);
    void *p = NULL;
    OK(udnnMalloc, h, &p, dt_bytes(t));
    t->dev = p;
    udnnTensorFormat_t fmt = lay == LAYOUT_NCHW ? UDNN_TENSOR_NCHW : UDNN_TENSOR_NHWC;
    if (is_filter) {
        OK(udnnCreateFilterDescriptor, &t->fdesc);
        OK(udnnSetFilter4dDescriptor, t->fdesc, ti->dt, fmt, dim[0], dim[1], dim[2], dim[3]);
        return;
    }
    OK(udnnCreateTensorDescriptor, &t->desc);
    OK(udnnSetTensor4dDescriptor, t->desc, fmt, ti->dt, dim[0], dim[1], dim[2], dim[3]);
    /* The format must mean what DESIGN.md says it means. */
    udnnDataType_t got_dt;
    int g[8];
    OK(udnnGetTensor4dDescriptor, t->desc, &got_dt, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5],
       &g[6], &g[7]);
    for (int i = 0; i < 4; i++)
        if (g[i] != dim[i] || g[4 + i] != t->stride[i])
            FAIL("udnnGetTensor4dDescriptor: dim %d is %d stride %d, expected %d stride %d", i,
                 g[i], g[4 + i], dim[i], t->stride[i]);
}

static void dt_free(dtensor *t)
{
    if (t->desc)
        udnnDestroyTensorDescriptor(t->desc);
    if (t->fdesc)
        udnnDestroyFilterDescriptor(t->fdesc);
    udnnFree(t->h, t->dev);
    free(t->val);
    free(t->host);
}

static void *dt_ptr(const dtensor *t)
{
    return t->dev + GUARD;
}

/* Where logical element i lives, in elements from the payload's start. */
static size_t dt_offset(const dtensor *t, size_t i)
{
    size_t w = i % (size_t)t->dim[3];
    i /= (size_t)t->dim[3];
    size_t h = i % (size_t)t->dim[2];
    i /= (size_t)t->dim[2];
    size_t c = i % (size_t)t->dim[1];
    size_t n = i / (size_t)t->dim[1];
    return n * (size_t)t->stride[0] + c * (size_t)t->stride[1] + h * (size_t)t->stride[2] +
           w * (size_t)t->stride[3];
}

static void dt_push(dtensor *t)
{
    OK(udnnMemcpy, t->h, t->dev, t->host, dt_bytes(t), UDNN_MEMCPY_HOST_TO_DEVICE);
}

/* Stores val (already rounded to the type) into the handle's memory. */
static void dt_upload(dtensor *t)
{
    memset(t->host, GUARD_BYTE, dt_bytes(t));
    for (size_t i = 0; i < t->count; i++)
        store_elem(t->host + GUARD, t->ti->dt, dt_offset(t, i), t->val[i]);
    dt_push(t);
}

static void dt_fill_random(dtensor *t, double lo, double hi)
{
    for (size_t i = 0; i < t->count; i++)
        t->val[i] = round_to(t->ti->dt, rng_uniform(lo, hi));
    dt_upload(t);
}

static void dt_fill_from(dtensor *t, const double *v)
{
    for (size_t i = 0; i < t->count; i++)
        t->val[i] = round_to(t->ti->dt, v[i]);
    dt_upload(t);
}

/* An output's old content: NaN when beta == 0 (it must not be read, and
 * every element must be written), random values to blend with otherwise. */
static void dt_prepare_output(dtensor *t, double beta)
{
    if (beta != 0) {
        dt_fill_random(t, -1, 1);
        return;
    }
    memset(t->host, GUARD_BYTE, dt_bytes(t));
    memset(t->host + GUARD, POISON_BYTE, t->count * t->ti->size);
    for (size_t i = 0; i < t->count; i++)
        t->val[i] = NAN;
    dt_push(t);
}

/* Downloads the output, checks that its guards are intact and that it
 * matches ref within the type's tolerance. */
static void dt_expect(dtensor *t, const double *ref, const char *what)
{
    OK(udnnMemcpy, t->h, t->host, t->dev, dt_bytes(t), UDNN_MEMCPY_DEVICE_TO_HOST);
    size_t payload = t->count * t->ti->size;
    for (size_t i = 0; i < GUARD; i++)
        if (t->host[i] != GUARD_BYTE || t->host[GUARD + payload + i] != GUARD_BYTE)
            FAIL("%s: wrote outside its output (guard byte %zu)", what, i);
    double *out = malloc(t->count * sizeof(double));
    ck_assert(out);
    for (size_t i = 0; i < t->count; i++)
        out[i] = load_elem(t->host + GUARD, t->ti->dt, dt_offset(t, i));
    expect_close(out, ref, t->count, t->ti->tol, what);
    free(out);
}

/* ======================================================================== */
/* alpha and beta                                                           */
/* ======================================================================== */

typedef struct {
    double alpha, beta; /* as the op reads them */
    float alpha_f, beta_f;
    double alpha_d, beta_d;
    int is_double;
} scaling;

/* beta is 0 half the time, so that both "never read y" and blending run. */
static scaling scaling_draw(const dtype_info *ti)
{
    scaling s;
    s.is_double = ti->dt == UDNN_DATA_DOUBLE;
    s.alpha_d = rng_uniform(0.5, 2.0);
    s.beta_d = rng_int(0, 1) ? 0.0 : rng_uniform(-1.0, 1.0);
    s.alpha_f = (float)s.alpha_d;
    s.beta_f = (float)s.beta_d;
    s.alpha = s.is_double ? s.alpha_d : s.alpha_f;
    s.beta = s.is_double ? s.beta_d : s.beta_f;
    return s;
}

static const void *alpha_ptr(const scaling *s)
{
    return s->is_double ? (const void *)&s->alpha_d : (const void *)&s->alpha_f;
}

static const void *beta_ptr(const scaling *s)
{
    return s->is_double ? (const void *)&s->beta_d : (const void *)&s->beta_f;
}

/* ref = alpha * op + beta * old, never touching old when beta == 0. */
static double *blend(const scaling *s, const double *op, const double *old, size_t n)
{
    double *ref = malloc(n * sizeof(double));
    ck_assert(ref);
    for (size_t i = 0; i < n; i++)
        ref[i] = s->alpha * op[i] + (s->beta != 0 ? s->beta * old[i] : 0.0);
    return ref;
}

static void check_output(dtensor *out, const scaling *s, const double *op, const char *what)
{
    double *ref = blend(s, op, out->val, out->count);
    dt_expect(out, ref, what);
    free(ref);
}

/* ======================================================================== */
/* Backends                                                                 */
/* ======================================================================== */

static const char *backend_name(udnnBackend_t b)
{
    return b == UDNN_BACKEND_CPU ? "cpu" : b == UDNN_BACKEND_CUDA ? "cuda" : "hip";
}

/* Runs one case on every backend with a device, in every type and layout.
 * Handles are made here, inside the (forked) test, as GPU contexts must. */
typedef void (*case_runner)(udnnHandle_t h, const dtype_info *ti, layout_t lay,
                            const void *spec);

static void run_everywhere(case_runner run, const void *spec)
{
    static const udnnBackend_t all[] = {UDNN_BACKEND_CPU, UDNN_BACKEND_CUDA, UDNN_BACKEND_HIP};
    int ran = 0;
    for (size_t b = 0; b < sizeof all / sizeof all[0]; b++) {
        int devices = 0;
        OK(udnnGetDeviceCount, all[b], &devices);
        if (devices < 1)
            continue;
        udnnHandle_t h = NULL;
        snprintf(g_where, sizeof g_where, "%s", backend_name(all[b]));
        OK(udnnCreateWithBackend, &h, all[b], 0);
        for (int t = 0; t < N_TYPES; t++)
            for (size_t l = 0; l < sizeof kLayouts / sizeof kLayouts[0]; l++) {
                snprintf(g_where, sizeof g_where, "%s %s %s", backend_name(all[b]),
                         kTypes[t].name, kLayouts[l] == LAYOUT_NCHW ? "NCHW" : "NHWC");
                run(h, &kTypes[t], kLayouts[l], spec);
            }
        OK(udnnDestroy, h);
        ran++;
    }
    if (ran == 0)
        FAIL("udnnGetDeviceCount reports no backend with a device, not even the CPU");
}

/* ======================================================================== */
/* Independent implementations, in double, over logical NCHW indices        */
/* ======================================================================== */

static size_t at4(int a, int b, int c, int d, const int dim[4])
{
    return (((size_t)a * dim[1] + b) * dim[2] + c) * dim[3] + d;
}

/* ---- convolution ---------------------------------------------------------- */

typedef struct {
    int n, c, h, w;  /* input */
    int k, r, s;     /* filters: k outputs, c / groups inputs each, r x s */
    int groups;
    int pad[2], stride[2], dil[2];
    udnnConvolutionMode_t mode;
    int oh, ow;
} conv_case;

typedef enum { CONV_FWD, CONV_BWD_DATA, CONV_BWD_FILTER } conv_dir;

static void conv_dims(const conv_case *cc, int xd[4], int wd[4], int yd[4])
{
    xd[0] = cc->n, xd[1] = cc->c, xd[2] = cc->h, xd[3] = cc->w;
    wd[0] = cc->k, wd[1] = cc->c / cc->groups, wd[2] = cc->r, wd[3] = cc->s;
    yd[0] = cc->n, yd[1] = cc->k, yd[2] = cc->oh, yd[3] = cc->ow;
}

/* Visits every product w * x that contributes to an output once, and adds
 * it to whichever of y, x or w the direction computes (the caller zeroes
 * it): the three directions are one loop nest read three ways.
 * CONVOLUTION flips the filter, CROSS_CORRELATION does not. */
static void conv_reference(const conv_case *cc, conv_dir dir, double *x, double *w, double *y)
{
    int xd[4], wd[4], yd[4];
    conv_dims(cc, xd, wd, yd);
    int cg = cc->c / cc->groups, kg = cc->k / cc->groups;
    for (int n = 0; n < cc->n; n++)
        for (int k = 0; k < cc->k; k++)
            for (int oh = 0; oh < cc->oh; oh++)
                for (int ow = 0; ow < cc->ow; ow++)
                    for (int c = 0; c < cg; c++)
                        for (int r = 0; r < cc->r; r++)
                            for (int s = 0; s < cc->s; s++) {
                                int ih = oh * cc->stride[0] - cc->pad[0] + r * cc->dil[0];
                                int iw = ow * cc->stride[1] - cc->pad[1] + s * cc->dil[1];
                                if (ih < 0 || ih >= cc->h || iw < 0 || iw >= cc->w)
                                    continue;
                                int fr = cc->mode == UDNN_CONVOLUTION ? cc->r - 1 - r : r;
                                int fs = cc->mode == UDNN_CONVOLUTION ? cc->s - 1 - s : s;
                                size_t xi = at4(n, (k / kg) * cg + c, ih, iw, xd);
                                size_t wi = at4(k, c, fr, fs, wd);
                                size_t yi = at4(n, k, oh, ow, yd);
                                if (dir == CONV_FWD)
                                    y[yi] += w[wi] * x[xi];
                                else if (dir == CONV_BWD_DATA)
                                    x[xi] += w[wi] * y[yi];
                                else
                                    w[wi] += x[xi] * y[yi];
                            }
}

/* ---- pooling ---------------------------------------------------------------- */

typedef struct {
    int n, c, h, w;
    int win[2], pad[2], stride[2];
    udnnPoolingMode_t mode;
    int oh, ow;
} pool_case;

static int pool_is_max(udnnPoolingMode_t m)
{
    return m == UDNN_POOLING_MAX || m == UDNN_POOLING_MAX_DETERMINISTIC;
}

/* Padding never takes part in a maximum; it counts in the average only in
 * AVERAGE_COUNT_INCLUDE_PADDING. The max is the first one met in row-major
 * order over the window (udnn.h: "the first maximum of its window"). */
static void pool_window(const pool_case *pc, const double *x, int n, int c, int oh, int ow,
                        size_t *argmax, double *max, double *sum, int *inside)
{
    int xd[4] = {pc->n, pc->c, pc->h, pc->w};
    *max = -INFINITY;
    *sum = 0;
    *inside = 0;
    for (int r = 0; r < pc->win[0]; r++)
        for (int s = 0; s < pc->win[1]; s++) {
            int ih = oh * pc->stride[0] - pc->pad[0] + r;
            int iw = ow * pc->stride[1] - pc->pad[1] + s;
            if (ih < 0 || ih >= pc->h || iw < 0 || iw >= pc->w)
                continue;
            size_t xi = at4(n, c, ih, iw, xd);
            if (x[xi] > *max) {
                *max = x[xi];
                *argmax = xi;
            }
            *sum += x[xi];
            ++*inside;
        }
}

static double pool_divisor(const pool_case *pc, int inside)
{
    return pc->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING ? pc->win[0] * pc->win[1]
                                                                  : inside;
}

static void pool_reference_fwd(const pool_case *pc, const double *x, double *y)
{
    int yd[4] = {pc->n, pc->c, pc->oh, pc->ow};
    for (int n = 0; n < pc->n; n++)
        for (int c = 0; c < pc->c; c++)
            for (int oh = 0; oh < pc->oh; oh++)
                for (int ow = 0; ow < pc->ow; ow++) {
                    size_t arg = 0;
                    double max, sum;
                    int inside;
                    pool_window(pc, x, n, c, oh, ow, &arg, &max, &sum, &inside);
                    y[at4(n, c, oh, ow, yd)] =
                        pool_is_max(pc->mode) ? max : sum / pool_divisor(pc, inside);
                }
}

/* dx (zeroed by the caller) gets each dy back along the forward's paths. */
static void pool_reference_bwd(const pool_case *pc, const double *x, const double *dy,
                               double *dx)
{
    int xd[4] = {pc->n, pc->c, pc->h, pc->w};
    int yd[4] = {pc->n, pc->c, pc->oh, pc->ow};
    for (int n = 0; n < pc->n; n++)
        for (int c = 0; c < pc->c; c++)
            for (int oh = 0; oh < pc->oh; oh++)
                for (int ow = 0; ow < pc->ow; ow++) {
                    size_t arg = 0;
                    double max, sum;
                    int inside;
                    pool_window(pc, x, n, c, oh, ow, &arg, &max, &sum, &inside);
                    double g = dy[at4(n, c, oh, ow, yd)];
                    if (pool_is_max(pc->mode)) {
                        dx[arg] += g;
                        continue;
                    }
                    double share = g / pool_divisor(pc, inside);
                    for (int r = 0; r < pc->win[0]; r++)
                        for (int s = 0; s < pc->win[1]; s++) {
                            int ih = oh * pc->stride[0] - pc->pad[0] + r;
                            int iw = ow * pc->stride[1] - pc->pad[1] + s;
                            if (ih >= 0 && ih < pc->h && iw >= 0 && iw < pc->w)
                                dx[at4(n, c, ih, iw, xd)] += share;
                        }
                }
}

/* ---- softmax ------------------------------------------------------------------ */

/* A softmax runs over "rows": INSTANCE takes all of c, h, w of one image,
 * CHANNEL the c values of one pixel. */
static size_t softmax_rows(const int d[4], udnnSoftmaxMode_t m)
{
    return m == UDNN_SOFTMAX_MODE_INSTANCE ? (size_t)d[0] : (size_t)d[0] * d[2] * d[3];
}

static size_t softmax_len(const int d[4], udnnSoftmaxMode_t m)
{
    return m == UDNN_SOFTMAX_MODE_INSTANCE ? (size_t)d[1] * d[2] * d[3] : (size_t)d[1];
}

static size_t softmax_at(const int d[4], udnnSoftmaxMode_t m, size_t row, size_t j)
{
    if (m == UDNN_SOFTMAX_MODE_INSTANCE)
        return row * softmax_len(d, m) + j;
    size_t plane = (size_t)d[2] * d[3];
    size_t n = row / plane, pixel = row % plane;
    return (n * d[1] + j) * plane + pixel;
}

static void softmax_reference_fwd(const int d[4], udnnSoftmaxAlgorithm_t algo,
                                  udnnSoftmaxMode_t m, const double *x, double *y)
{
    size_t len = softmax_len(d, m);
    for (size_t row = 0; row < softmax_rows(d, m); row++) {
        double max = -INFINITY, sum = 0;
        for (size_t j = 0; j < len; j++)
            max = fmax(max, x[softmax_at(d, m, row, j)]);
        for (size_t j = 0; j < len; j++)
            sum += exp(x[softmax_at(d, m, row, j)] - max);
        for (size_t j = 0; j < len; j++) {
            size_t i = softmax_at(d, m, row, j);
            y[i] = algo == UDNN_SOFTMAX_LOG ? x[i] - max - log(sum) : exp(x[i] - max) / sum;
        }
    }
}

/* From the forward output y: dx = y (dy - <dy, y>), or for LOG
 * dx = dy - exp(y) sum(dy). */
static void softmax_reference_bwd(const int d[4], udnnSoftmaxAlgorithm_t algo,
                                  udnnSoftmaxMode_t m, const double *y, const double *dy,
                                  double *dx)
{
    size_t len = softmax_len(d, m);
    for (size_t row = 0; row < softmax_rows(d, m); row++) {
        double acc = 0;
        for (size_t j = 0; j < len; j++) {
            size_t i = softmax_at(d, m, row, j);
            acc += algo == UDNN_SOFTMAX_LOG ? dy[i] : dy[i] * y[i];
        }
        for (size_t j = 0; j < len; j++) {
            size_t i = softmax_at(d, m, row, j);
            dx[i] = algo == UDNN_SOFTMAX_LOG ? dy[i] - exp(y[i]) * acc : y[i] * (dy[i] - acc);
        }
    }
}

/* ---- activations ------------------------------------------------------------- */

typedef struct {
    udnnActivationMode_t mode;
    const char *name;
} act_mode;

static const act_mode kActModes[] = {
    {UDNN_ACTIVATION_SIGMOID, "SIGMOID"},     {UDNN_ACTIVATION_RELU, "RELU"},
    {UDNN_ACTIVATION_TANH, "TANH"},           {UDNN_ACTIVATION_CLIPPED_RELU, "CLIPPED_RELU"},
    {UDNN_ACTIVATION_ELU, "ELU"},             {UDNN_ACTIVATION_IDENTITY, "IDENTITY"},
    {UDNN_ACTIVATION_SWISH, "SWISH"},         {UDNN_ACTIVATION_LEAKY_RELU, "LEAKY_RELU"},
    {UDNN_ACTIVATION_GELU, "GELU"},           {UDNN_ACTIVATION_GELU_TANH, "GELU_TANH"},
    {UDNN_ACTIVATION_SOFTPLUS, "SOFTPLUS"},   {UDNN_ACTIVATION_MISH, "MISH"},
    {UDNN_ACTIVATION_HARDSWISH, "HARDSWISH"},
};
enum { N_ACT_MODES = sizeof kActModes / sizeof kActModes[0] };

typedef struct {
    udnnActivationMode_t mode;
    double coef;       /* clip, ELU alpha or leaky slope */
    double swish_beta;
} act_params;

static double sigmoid(double x)
{
    return 1 / (1 + exp(-x));
}

static double softplus(double x)
{
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

static const double kSqrt2OverPi = 0.79788456080286535588; /* sqrt(2 / pi) */
static const double kGeluCubic = 0.044715;
static const double kInvSqrt2Pi = 0.39894228040143267794; /* 1 / sqrt(2 pi) */

static double act_f(const act_params *a, double x)
{
    switch (a->mode) {
    case UDNN_ACTIVATION_SIGMOID: return sigmoid(x);
    case UDNN_ACTIVATION_RELU: return x > 0 ? x : 0;
    case UDNN_ACTIVATION_TANH: return tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return fmin(fmax(x, 0), a->coef);
    case UDNN_ACTIVATION_ELU: return x > 0 ? x : a->coef * expm1(x);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x * sigmoid(a->swish_beta * x);
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? x : a->coef * x;
    case UDNN_ACTIVATION_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case UDNN_ACTIVATION_GELU_TANH:
        return 0.5 * x * (1 + tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
    case UDNN_ACTIVATION_SOFTPLUS: return softplus(x);
    case UDNN_ACTIVATION_MISH: return x * tanh(softplus(x));
    case UDNN_ACTIVATION_HARDSWISH: return x * fmin(fmax(x + 3, 0), 6) / 6;
    }
    return NAN;
}

/* d act / dx, derived by hand (and checked by finite differences in
 * oracle_activation). */
static double act_df(const act_params *a, double x)
{
    switch (a->mode) {
    case UDNN_ACTIVATION_SIGMOID: return sigmoid(x) * (1 - sigmoid(x));
    case UDNN_ACTIVATION_RELU: return x > 0 ? 1 : 0;
    case UDNN_ACTIVATION_TANH: return 1 - tanh(x) * tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < a->coef ? 1 : 0;
    case UDNN_ACTIVATION_ELU: return x > 0 ? 1 : a->coef * exp(x);
    case UDNN_ACTIVATION_IDENTITY: return 1;
    case UDNN_ACTIVATION_SWISH: {
        double s = sigmoid(a->swish_beta * x);
        return s + a->swish_beta * x * s * (1 - s);
    }
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? 1 : a->coef;
    case UDNN_ACTIVATION_GELU:
        return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) * kInvSqrt2Pi;
    case UDNN_ACTIVATION_GELU_TANH: {
        double t = tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
        return 0.5 * (1 + t) +
               0.5 * x * (1 - t * t) * kSqrt2OverPi * (1 + 3 * kGeluCubic * x * x);
    }
    case UDNN_ACTIVATION_SOFTPLUS: return sigmoid(x);
    case UDNN_ACTIVATION_MISH: {
        double t = tanh(softplus(x));
        return t + x * (1 - t * t) * sigmoid(x);
    }
    case UDNN_ACTIVATION_HARDSWISH: return x < -3 ? 0 : x > 3 ? 1 : (2 * x + 3) / 6;
    }
    return NAN;
}

/* Where the derivative jumps, a backward result depends on which side a
 * rounding fell; inputs keep clear of those points. */
static int act_near_kink(const act_params *a, double x)
{
    const double clear = 0.02;
    switch (a->mode) {
    case UDNN_ACTIVATION_RELU:
    case UDNN_ACTIVATION_ELU:
    case UDNN_ACTIVATION_LEAKY_RELU: return fabs(x) < clear;
    case UDNN_ACTIVATION_CLIPPED_RELU: return fabs(x) < clear || fabs(x - a->coef) < clear;
    case UDNN_ACTIVATION_HARDSWISH: return fabs(x + 3) < clear || fabs(x - 3) < clear;
    default: return 0;
    }
}

/* coef and swish beta are multiples of 1/8, exact in every type, so that a
 * backend comparing y with coef (CLIPPED_RELU may use y) sees the same
 * boundary as this file. */
static act_params act_draw(udnnActivationMode_t mode)
{
    act_params a = {mode, rng_int(2, 12) / 8.0, rng_int(4, 16) / 8.0};
    return a;
}

/* CLIPPED_RELU's interesting part is [0, coef], narrow for coef 1/4. */
static double act_draw_input(const act_params *a, udnnDataType_t dt)
{
    double lo = -4, hi = 4, v;
    if (a->mode == UDNN_ACTIVATION_CLIPPED_RELU)
        lo = -a->coef, hi = 2 * a->coef;
    do
        v = round_to(dt, rng_uniform(lo, hi));
    while (act_near_kink(a, v));
    return v;
}

/* Redraws until some element has a nonzero value and slope, so that
 * neither the forward nor the backward reference is all zero. */
static void act_draw_inputs(const act_params *a, udnnDataType_t dt, double *x, size_t n)
{
    int live;
    do {
        live = 0;
        for (size_t i = 0; i < n; i++) {
            x[i] = act_draw_input(a, dt);
            live |= act_f(a, x[i]) != 0 && act_df(a, x[i]) != 0;
        }
    } while (!live);
}

/* ======================================================================== */
/* Random cases                                                             */
/* ======================================================================== */

static const char *conv_mode_name(udnnConvolutionMode_t m)
{
    return m == UDNN_CONVOLUTION ? "CONVOLUTION" : "CROSS_CORRELATION";
}

/* A random convolution; want_groups > 1 forces grouping, small bounds the
 * sizes for the finite-difference checks. */
static conv_case conv_draw(udnnConvolutionMode_t mode, int want_groups, int small)
{
    int max_ch = small ? 4 : 6, max_hw = small ? 7 : 12, max_f = small ? 3 : 5;
    conv_case cc;
    memset(&cc, 0, sizeof cc);
    cc.mode = mode;
    for (;;) {
        cc.groups = want_groups ? rng_int(2, 3) : rng_int(0, 2) ? 1 : rng_int(1, 3);
        cc.c = cc.groups * rng_int(1, max_ch / cc.groups);
        cc.k = cc.groups * rng_int(1, max_ch / cc.groups);
        cc.n = rng_int(1, small ? 2 : 3);
        cc.h = rng_int(3, max_hw);
        cc.w = rng_int(3, max_hw);
        cc.r = rng_int(1, max_f);
        cc.s = rng_int(1, max_f);
        for (int i = 0; i < 2; i++) {
            cc.pad[i] = rng_int(0, 2);
            cc.stride[i] = rng_int(1, 3);
            cc.dil[i] = rng_int(1, 2);
        }
        int span_h = (cc.r - 1) * cc.dil[0] + 1, span_w = (cc.s - 1) * cc.dil[1] + 1;
        if (span_h > cc.h + 2 * cc.pad[0] || span_w > cc.w + 2 * cc.pad[1])
            continue;
        cc.oh = 1 + (cc.h + 2 * cc.pad[0] - span_h) / cc.stride[0];
        cc.ow = 1 + (cc.w + 2 * cc.pad[1] - span_w) / cc.stride[1];
        break;
    }
    describe_case("conv %s n%d c%d h%d w%d k%d r%d s%d groups %d pad %d,%d stride %d,%d "
                  "dilation %d,%d -> %dx%d",
                  conv_mode_name(mode), cc.n, cc.c, cc.h, cc.w, cc.k, cc.r, cc.s, cc.groups,
                  cc.pad[0], cc.pad[1], cc.stride[0], cc.stride[1], cc.dil[0], cc.dil[1], cc.oh,
                  cc.ow);
    return cc;
}

static const char *pool_mode_name(udnnPoolingMode_t m)
{
    switch (m) {
    case UDNN_POOLING_MAX: return "MAX";
    case UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING: return "AVERAGE_COUNT_INCLUDE_PADDING";
    case UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING: return "AVERAGE_COUNT_EXCLUDE_PADDING";
    default: return "MAX_DETERMINISTIC";
    }
}

static const udnnPoolingMode_t kPoolModes[] = {
    UDNN_POOLING_MAX, UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
    UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, UDNN_POOLING_MAX_DETERMINISTIC};

static pool_case pool_draw(udnnPoolingMode_t mode, int small)
{
    pool_case pc;
    memset(&pc, 0, sizeof pc);
    pc.mode = mode;
    pc.n = rng_int(1, small ? 2 : 3);
    pc.c = rng_int(1, small ? 3 : 6);
    pc.h = rng_int(3, small ? 7 : 12);
    pc.w = rng_int(3, small ? 7 : 12);
    int in[2] = {pc.h, pc.w};
    for (int i = 0; i < 2; i++) {
        pc.win[i] = rng_int(1, in[i] < 4 ? in[i] : 4);
        pc.pad[i] = rng_int(0, pc.win[i] - 1 < 2 ? pc.win[i] - 1 : 2); /* pad < window */
        pc.stride[i] = rng_int(1, 3);
    }
    pc.oh = 1 + (pc.h + 2 * pc.pad[0] - pc.win[0]) / pc.stride[0];
    pc.ow = 1 + (pc.w + 2 * pc.pad[1] - pc.win[1]) / pc.stride[1];
    describe_case("pool %s n%d c%d h%d w%d window %dx%d pad %d,%d stride %d,%d -> %dx%d",
                  pool_mode_name(mode), pc.n, pc.c, pc.h, pc.w, pc.win[0], pc.win[1], pc.pad[0],
                  pc.pad[1], pc.stride[0], pc.stride[1], pc.oh, pc.ow);
    return pc;
}

static const char *softmax_algo_name(udnnSoftmaxAlgorithm_t a)
{
    return a == UDNN_SOFTMAX_FAST ? "FAST" : a == UDNN_SOFTMAX_ACCURATE ? "ACCURATE" : "LOG";
}

/* C >= 2: a softmax over one channel is constant, and its gradient zero. */
static void small_tensor_draw(int d[4], int min_c)
{
    d[0] = rng_int(1, 3);
    d[1] = rng_int(min_c, 6);
    d[2] = rng_int(1, 8);
    d[3] = rng_int(1, 8);
}

/* ======================================================================== */
/* Convolution on the library                                               */
/* ======================================================================== */

static udnnConvolutionFwdAlgo_t pick_fwd_algo(udnnHandle_t h, const dtensor *x,
                                              const dtensor *w,
                                              udnnConvolutionDescriptor_t cd,
                                              const dtensor *y)
{
    int max = 0, got = 0;
    OK(udnnGetConvolutionForwardAlgorithmMaxCount, h, &max);
    udnnConvolutionFwdAlgoPerf_t perf[64];
    if (max < 1 || max > 64)
        FAIL("udnnGetConvolutionForwardAlgorithmMaxCount gave %d", max);
    OK(udnnGetConvolutionForwardAlgorithm_v7, h, x->desc, w->fdesc, cd, y->desc, max, &got,
       perf);
    for (int i = 0; i < got; i++)
        if (perf[i].status == UDNN_STATUS_SUCCESS)
            return perf[i].algo;
    FAIL("udnnGetConvolutionForwardAlgorithm_v7 returned %d results, none runnable", got);
}

static udnnConvolutionBwdDataAlgo_t pick_bwd_data_algo(udnnHandle_t h, const dtensor *w,
                                                       const dtensor *dy,
                                                       udnnConvolutionDescriptor_t cd,
                                                       const dtensor *dx)
{
    int max = 0, got = 0;
    OK(udnnGetConvolutionBackwardDataAlgorithmMaxCount, h, &max);
    udnnConvolutionBwdDataAlgoPerf_t perf[64];
    if (max < 1 || max > 64)
        FAIL("udnnGetConvolutionBackwardDataAlgorithmMaxCount gave %d", max);
    OK(udnnGetConvolutionBackwardDataAlgorithm_v7, h, w->fdesc, dy->desc, cd, dx->desc, max,
       &got, perf);
    for (int i = 0; i < got; i++)
        if (perf[i].status == UDNN_STATUS_SUCCESS)
            return perf[i].algo;
    FAIL("udnnGetConvolutionBackwardDataAlgorithm_v7 returned %d results, none runnable", got);
}

static udnnConvolutionBwdFilterAlgo_t pick_bwd_filter_algo(udnnHandle_t h, const dtensor *x,
                                                           const dtensor *dy,
                                                           udnnConvolutionDescriptor_t cd,
                                                           const dtensor *dw)
{
    int max = 0, got = 0;
    OK(udnnGetConvolutionBackwardFilterAlgorithmMaxCount, h, &max);
    udnnConvolutionBwdFilterAlgoPerf_t perf[64];
    if (max < 1 || max > 64)
        FAIL("udnnGetConvolutionBackwardFilterAlgorithmMaxCount gave %d", max);
    OK(udnnGetConvolutionBackwardFilterAlgorithm_v7, h, x->desc, dy->desc, cd, dw->fdesc, max,
       &got, perf);
    for (int i = 0; i < got; i++)
        if (perf[i].status == UDNN_STATUS_SUCCESS)
            return perf[i].algo;
    FAIL("udnnGetConvolutionBackwardFilterAlgorithm_v7 returned %d results, none runnable",
         got);
}

typedef struct {
    conv_case cc;
    conv_dir dir;
} conv_spec;

static void run_conv(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const conv_spec *sp = p;
    const conv_case *cc = &sp->cc;
    int xd[4], wd[4], yd[4];
    conv_dims(cc, xd, wd, yd);

    udnnConvolutionDescriptor_t cd;
    OK(udnnCreateConvolutionDescriptor, &cd);
    udnnDataType_t compute = ti->dt == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    OK(udnnSetConvolution2dDescriptor, cd, cc->pad[0], cc->pad[1], cc->stride[0],
       cc->stride[1], cc->dil[0], cc->dil[1], cc->mode, compute);
    OK(udnnSetConvolutionGroupCount, cd, cc->groups);

    dtensor x, w, y;
    dt_init(&x, h, ti, xd, lay, 0);
    dt_init(&w, h, ti, wd, lay, 1);
    int got[4];
    OK(udnnGetConvolutionNdForwardOutputDim, cd, x.desc, w.fdesc, 4, got);
    for (int i = 0; i < 4; i++)
        if (got[i] != yd[i])
            FAIL("udnnGetConvolutionNdForwardOutputDim: dim %d is %d, expected %d", i, got[i],
                 yd[i]);
    dt_init(&y, h, ti, got, lay, 0);

    scaling sc = scaling_draw(ti);
    dtensor *out;
    double *op;
    void *ws = NULL;
    size_t ws_bytes = 0;
    const char *what;
    if (sp->dir == CONV_FWD) {
        dt_fill_random(&x, -1, 1);
        dt_fill_random(&w, -1, 1);
        dt_prepare_output(&y, sc.beta);
        udnnConvolutionFwdAlgo_t algo = pick_fwd_algo(h, &x, &w, cd, &y);
        OK(udnnGetConvolutionForwardWorkspaceSize, h, x.desc, w.fdesc, cd, y.desc, algo,
           &ws_bytes);
        OK(udnnMalloc, h, &ws, ws_bytes);
        OK(udnnConvolutionForward, h, alpha_ptr(&sc), x.desc, dt_ptr(&x), w.fdesc, dt_ptr(&w),
           cd, algo, ws, ws_bytes, beta_ptr(&sc), y.desc, dt_ptr(&y));
        out = &y;
        op = calloc(y.count, sizeof(double));
        conv_reference(cc, CONV_FWD, x.val, w.val, op);
        what = "udnnConvolutionForward y";
    } else if (sp->dir == CONV_BWD_DATA) {
        dt_fill_random(&w, -1, 1);
        dt_fill_random(&y, -1, 1); /* dy */
        dt_prepare_output(&x, sc.beta);
        udnnConvolutionBwdDataAlgo_t algo = pick_bwd_data_algo(h, &w, &y, cd, &x);
        OK(udnnGetConvolutionBackwardDataWorkspaceSize, h, w.fdesc, y.desc, cd, x.desc, algo,
           &ws_bytes);
        OK(udnnMalloc, h, &ws, ws_bytes);
        OK(udnnConvolutionBackwardData, h, alpha_ptr(&sc), w.fdesc, dt_ptr(&w), y.desc,
           dt_ptr(&y), cd, algo, ws, ws_bytes, beta_ptr(&sc), x.desc, dt_ptr(&x));
        out = &x;
        op = calloc(x.count, sizeof(double));
        conv_reference(cc, CONV_BWD_DATA, op, w.val, y.val);
        what = "udnnConvolutionBackwardData dx";
    } else {
        dt_fill_random(&x, -1, 1);
        dt_fill_random(&y, -1, 1); /* dy */
        dt_prepare_output(&w, sc.beta);
        udnnConvolutionBwdFilterAlgo_t algo = pick_bwd_filter_algo(h, &x, &y, cd, &w);
        OK(udnnGetConvolutionBackwardFilterWorkspaceSize, h, x.desc, y.desc, cd, w.fdesc, algo,
           &ws_bytes);
        OK(udnnMalloc, h, &ws, ws_bytes);
        OK(udnnConvolutionBackwardFilter, h, alpha_ptr(&sc), x.desc, dt_ptr(&x), y.desc,
           dt_ptr(&y), cd, algo, ws, ws_bytes, beta_ptr(&sc), w.fdesc, dt_ptr(&w));
        out = &w;
        op = calloc(w.count, sizeof(double));
        conv_reference(cc, CONV_BWD_FILTER, x.val, op, y.val);
        what = "udnnConvolutionBackwardFilter dw";
    }
    ck_assert(op);
    check_output(out, &sc, op, what);

    free(op);
    udnnFree(h, ws);
    dt_free(&x);
    dt_free(&w);
    dt_free(&y);
    udnnDestroyConvolutionDescriptor(cd);
}

/* Even iterations convolve, odd ones cross-correlate; every third is
 * grouped. */
static void conv_test(int i, conv_dir dir)
{
    seed_fresh(i);
    conv_spec sp;
    sp.dir = dir;
    sp.cc = conv_draw(i % 2 ? UDNN_CROSS_CORRELATION : UDNN_CONVOLUTION, i % 3 == 2, 0);
    run_everywhere(run_conv, &sp);
}

START_TEST(conv_forward) { conv_test(_i, CONV_FWD); }
END_TEST

START_TEST(conv_backward_data) { conv_test(_i, CONV_BWD_DATA); }
END_TEST

START_TEST(conv_backward_filter) { conv_test(_i, CONV_BWD_FILTER); }
END_TEST

/* ======================================================================== */
/* Pooling on the library                                                   */
/* ======================================================================== */

typedef struct {
    pool_case pc;
    int backward;
} pool_spec;

static void run_pool(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const pool_spec *sp = p;
    const pool_case *pc = &sp->pc;
    udnnPoolingDescriptor_t pd;
    OK(udnnCreatePoolingDescriptor, &pd);
    OK(udnnSetPooling2dDescriptor, pd, pc->mode, UDNN_NOT_PROPAGATE_NAN, pc->win[0], pc->win[1],
       pc->pad[0], pc->pad[1], pc->stride[0], pc->stride[1]);

    int xd[4] = {pc->n, pc->c, pc->h, pc->w}, yd[4] = {pc->n, pc->c, pc->oh, pc->ow}, got[4];
    dtensor x, y, dy, dx;
    dt_init(&x, h, ti, xd, lay, 0);
    OK(udnnGetPooling2dForwardOutputDim, pd, x.desc, &got[0], &got[1], &got[2], &got[3]);
    for (int i = 0; i < 4; i++)
        if (got[i] != yd[i])
            FAIL("udnnGetPooling2dForwardOutputDim: dim %d is %d, expected %d", i, got[i],
                 yd[i]);
    dt_init(&y, h, ti, yd, lay, 0);
    dt_fill_random(&x, -2, 2);
    scaling sc = scaling_draw(ti);

    if (!sp->backward) {
        dt_prepare_output(&y, sc.beta);
        OK(udnnPoolingForward, h, pd, alpha_ptr(&sc), x.desc, dt_ptr(&x), beta_ptr(&sc), y.desc,
           dt_ptr(&y));
        double *op = calloc(y.count, sizeof(double));
        ck_assert(op);
        pool_reference_fwd(pc, x.val, op);
        check_output(&y, &sc, op, "udnnPoolingForward y");
        free(op);
    } else {
        /* y comes from this file's forward, so the backward is judged alone. */
        double *fwd = calloc(y.count, sizeof(double));
        double *op = calloc(x.count, sizeof(double));
        ck_assert(fwd && op);
        pool_reference_fwd(pc, x.val, fwd);
        dt_fill_from(&y, fwd);
        dt_init(&dy, h, ti, yd, lay, 0);
        dt_init(&dx, h, ti, xd, lay, 0);
        dt_fill_random(&dy, -1, 1);
        dt_prepare_output(&dx, sc.beta);
        OK(udnnPoolingBackward, h, pd, alpha_ptr(&sc), y.desc, dt_ptr(&y), dy.desc, dt_ptr(&dy),
           x.desc, dt_ptr(&x), beta_ptr(&sc), dx.desc, dt_ptr(&dx));
        pool_reference_bwd(pc, x.val, dy.val, op);
        check_output(&dx, &sc, op, "udnnPoolingBackward dx");
        free(fwd);
        free(op);
        dt_free(&dy);
        dt_free(&dx);
    }
    dt_free(&x);
    dt_free(&y);
    udnnDestroyPoolingDescriptor(pd);
}

static void pool_test(int i, int backward)
{
    seed_fresh(i);
    pool_spec sp;
    sp.backward = backward;
    sp.pc = pool_draw(kPoolModes[i % 4], 0);
    run_everywhere(run_pool, &sp);
}

START_TEST(pooling_forward) { pool_test(_i, 0); }
END_TEST

START_TEST(pooling_backward) { pool_test(_i, 1); }
END_TEST

/* ======================================================================== */
/* Softmax on the library                                                   */
/* ======================================================================== */

typedef struct {
    int dim[4];
    udnnSoftmaxAlgorithm_t algo;
    udnnSoftmaxMode_t mode;
    int backward;
} softmax_spec;

static void run_softmax(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const softmax_spec *sp = p;
    dtensor x, y;
    dt_init(&x, h, ti, sp->dim, lay, 0);
    dt_init(&y, h, ti, sp->dim, lay, 0);
    dt_fill_random(&x, -3, 3);
    scaling sc = scaling_draw(ti);
    double *fwd = calloc(x.count, sizeof(double));
    ck_assert(fwd);
    softmax_reference_fwd(sp->dim, sp->algo, sp->mode, x.val, fwd);

    if (!sp->backward) {
        dt_prepare_output(&y, sc.beta);
        OK(udnnSoftmaxForward, h, sp->algo, sp->mode, alpha_ptr(&sc), x.desc, dt_ptr(&x),
           beta_ptr(&sc), y.desc, dt_ptr(&y));
        check_output(&y, &sc, fwd, "udnnSoftmaxForward y");
    } else {
        dtensor dy, dx;
        dt_fill_from(&y, fwd);
        dt_init(&dy, h, ti, sp->dim, lay, 0);
        dt_init(&dx, h, ti, sp->dim, lay, 0);
        dt_fill_random(&dy, -1, 1);
        dt_prepare_output(&dx, sc.beta);
        OK(udnnSoftmaxBackward, h, sp->algo, sp->mode, alpha_ptr(&sc), y.desc, dt_ptr(&y),
           dy.desc, dt_ptr(&dy), beta_ptr(&sc), dx.desc, dt_ptr(&dx));
        double *op = calloc(x.count, sizeof(double));
        ck_assert(op);
        softmax_reference_bwd(sp->dim, sp->algo, sp->mode, y.val, dy.val, op);
        check_output(&dx, &sc, op, "udnnSoftmaxBackward dx");
        free(op);
        dt_free(&dy);
        dt_free(&dx);
    }
    free(fwd);
    dt_free(&x);
    dt_free(&y);
}

/* The loop index picks the algorithm (FAST, ACCURATE, LOG) and the mode. */
static void softmax_test(int i, int backward)
{
    seed_fresh(i);
    softmax_spec sp;
    sp.algo = (udnnSoftmaxAlgorithm_t)(i % 3);
    sp.mode = i / 3 % 2 ? UDNN_SOFTMAX_MODE_CHANNEL : UDNN_SOFTMAX_MODE_INSTANCE;
    sp.backward = backward;
    small_tensor_draw(sp.dim, 2);
    describe_case("softmax %s %s n%d c%d h%d w%d", softmax_algo_name(sp.algo),
                  sp.mode == UDNN_SOFTMAX_MODE_CHANNEL ? "CHANNEL" : "INSTANCE", sp.dim[0],
                  sp.dim[1], sp.dim[2], sp.dim[3]);
    run_everywhere(run_softmax, &sp);
}

START_TEST(softmax_forward) { softmax_test(_i, 0); }
END_TEST

START_TEST(softmax_backward) { softmax_test(_i, 1); }
END_TEST

/* ======================================================================== */
/* Activations on the library                                               */
/* ======================================================================== */

typedef struct {
    int dim[4];
    act_params a;
} act_spec;

static void run_activation(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const act_spec *sp = p;
    udnnActivationDescriptor_t ad;
    OK(udnnCreateActivationDescriptor, &ad);
    OK(udnnSetActivationDescriptor, ad, sp->a.mode, UDNN_NOT_PROPAGATE_NAN, sp->a.coef);
    OK(udnnSetActivationDescriptorSwishBeta, ad, sp->a.swish_beta);

    dtensor x, y, dy, dx;
    dt_init(&x, h, ti, sp->dim, lay, 0);
    dt_init(&y, h, ti, sp->dim, lay, 0);
    dt_init(&dy, h, ti, sp->dim, lay, 0);
    dt_init(&dx, h, ti, sp->dim, lay, 0);
    act_draw_inputs(&sp->a, ti->dt, x.val, x.count);
    dt_upload(&x);
    double *op = calloc(x.count, sizeof(double));
    ck_assert(op);

    scaling sc = scaling_draw(ti);
    dt_prepare_output(&y, sc.beta);
    OK(udnnActivationForward, h, ad, alpha_ptr(&sc), x.desc, dt_ptr(&x), beta_ptr(&sc), y.desc,
       dt_ptr(&y));
    for (size_t i = 0; i < x.count; i++)
        op[i] = act_f(&sp->a, x.val[i]);
    check_output(&y, &sc, op, "udnnActivationForward y");

    /* The backward pass gets y from this file's forward, so it is judged
     * alone. */
    dt_fill_from(&y, op);
    dt_fill_random(&dy, -1, 1);
    sc = scaling_draw(ti);
    dt_prepare_output(&dx, sc.beta);
    OK(udnnActivationBackward, h, ad, alpha_ptr(&sc), y.desc, dt_ptr(&y), dy.desc, dt_ptr(&dy),
       x.desc, dt_ptr(&x), beta_ptr(&sc), dx.desc, dt_ptr(&dx));
    for (size_t i = 0; i < x.count; i++)
        op[i] = act_df(&sp->a, x.val[i]) * dy.val[i];
    check_output(&dx, &sc, op, "udnnActivationBackward dx");

    free(op);
    dt_free(&x);
    dt_free(&y);
    dt_free(&dy);
    dt_free(&dx);
    udnnDestroyActivationDescriptor(ad);
}

/* One mode per loop iteration, forward then backward. */
START_TEST(activation)
{
    seed_fresh(_i);
    act_spec sp;
    sp.a = act_draw(kActModes[_i].mode);
    small_tensor_draw(sp.dim, 1);
    describe_case("activation %s coef %g swish beta %g n%d c%d h%d w%d", kActModes[_i].name,
                  sp.a.coef, sp.a.swish_beta, sp.dim[0], sp.dim[1], sp.dim[2], sp.dim[3]);
    run_everywhere(run_activation, &sp);
}
END_TEST

/* ======================================================================== */
/* The oracle against central finite differences of its own forward pass    */
/* ======================================================================== */

static const double kFdStep = 1e-6;
static const double kFdTol = 1e-6;

typedef double (*loss_fn)(const void *ctx);

/* grad[i] = dL/dv[i] by central differences; v is read by loss via ctx. */
static void numeric_gradient(loss_fn loss, const void *ctx, double *v, size_t n, double *grad)
{
    for (size_t i = 0; i < n; i++) {
        double keep = v[i];
        v[i] = keep + kFdStep;
        double up = loss(ctx);
        v[i] = keep - kFdStep;
        double down = loss(ctx);
        v[i] = keep;
        grad[i] = (up - down) / (2 * kFdStep);
    }
}

static double *random_vector(size_t n, double lo, double hi)
{
    double *v = malloc(n * sizeof(double));
    ck_assert(v);
    for (size_t i = 0; i < n; i++)
        v[i] = rng_uniform(lo, hi);
    return v;
}

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

typedef struct {
    const conv_case *cc;
    double *x, *w, *dy, *y;
    size_t ny;
} conv_loss_ctx;

static double conv_loss(const void *p) /* L = <dy, conv(x, w)> */
{
    const conv_loss_ctx *c = p;
    memset(c->y, 0, c->ny * sizeof(double));
    conv_reference(c->cc, CONV_FWD, c->x, c->w, c->y);
    return dot(c->dy, c->y, c->ny);
}

START_TEST(oracle_conv)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    /* The first convolves (grouped or not), the second cross-correlates in groups. */
    conv_case cc = conv_draw(_i ? UDNN_CROSS_CORRELATION : UDNN_CONVOLUTION, _i == 1, 1);
    int xd[4], wd[4], yd[4];
    conv_dims(&cc, xd, wd, yd);
    size_t nx = (size_t)xd[0] * xd[1] * xd[2] * xd[3], nw = (size_t)wd[0] * wd[1] * wd[2] * wd[3];
    size_t ny = (size_t)yd[0] * yd[1] * yd[2] * yd[3];
    conv_loss_ctx c = {&cc, random_vector(nx, -1, 1), random_vector(nw, -1, 1),
                       random_vector(ny, -1, 1), calloc(ny, sizeof(double)), ny};
    double *numeric = calloc(nx > nw ? nx : nw, sizeof(double));
    double *dx = calloc(nx, sizeof(double)), *dw = calloc(nw, sizeof(double));
    ck_assert(c.y && numeric && dx && dw);

    conv_reference(&cc, CONV_BWD_DATA, dx, c.w, c.dy);
    numeric_gradient(conv_loss, &c, c.x, nx, numeric);
    expect_close(dx, numeric, nx, kFdTol, "oracle conv backward data vs finite differences");
    conv_reference(&cc, CONV_BWD_FILTER, c.x, dw, c.dy);
    numeric_gradient(conv_loss, &c, c.w, nw, numeric);
    expect_close(dw, numeric, nw, kFdTol, "oracle conv backward filter vs finite differences");

    free(c.x), free(c.w), free(c.dy), free(c.y), free(numeric), free(dx), free(dw);
}
END_TEST

typedef struct {
    const pool_case *pc;
    double *x, *dy, *y;
    size_t ny;
} pool_loss_ctx;

static double pool_loss(const void *p)
{
    const pool_loss_ctx *c = p;
    pool_reference_fwd(c->pc, c->x, c->y);
    return dot(c->dy, c->y, c->ny);
}

START_TEST(oracle_pooling)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    for (int m = 0; m < 3; m++) { /* MAX_DETERMINISTIC is MAX here */
        pool_case pc = pool_draw(kPoolModes[m], 1);
        size_t nx = (size_t)pc.n * pc.c * pc.h * pc.w, ny = (size_t)pc.n * pc.c * pc.oh * pc.ow;
        /* Random doubles have no ties, so max pooling is differentiable here. */
        pool_loss_ctx c = {&pc, random_vector(nx, -2, 2), random_vector(ny, -1, 1),
                           calloc(ny, sizeof(double)), ny};
        double *numeric = calloc(nx, sizeof(double)), *dx = calloc(nx, sizeof(double));
        ck_assert(c.y && numeric && dx);
        pool_reference_bwd(&pc, c.x, c.dy, dx);
        numeric_gradient(pool_loss, &c, c.x, nx, numeric);
        expect_close(dx, numeric, nx, kFdTol, "oracle pooling backward vs finite differences");
        free(c.x), free(c.dy), free(c.y), free(numeric), free(dx);
    }
}
END_TEST

typedef struct {
    const int *dim;
    udnnSoftmaxAlgorithm_t algo;
    udnnSoftmaxMode_t mode;
    double *x, *dy, *y;
    size_t n;
} softmax_loss_ctx;

static double softmax_loss(const void *p)
{
    const softmax_loss_ctx *c = p;
    softmax_reference_fwd(c->dim, c->algo, c->mode, c->x, c->y);
    return dot(c->dy, c->y, c->n);
}

START_TEST(oracle_softmax)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    for (int variant = 0; variant < 4; variant++) {
        int d[4];
        small_tensor_draw(d, 2);
        size_t n = (size_t)d[0] * d[1] * d[2] * d[3];
        softmax_loss_ctx c = {d,
                              variant % 2 ? UDNN_SOFTMAX_LOG : UDNN_SOFTMAX_ACCURATE,
                              variant / 2 ? UDNN_SOFTMAX_MODE_CHANNEL : UDNN_SOFTMAX_MODE_INSTANCE,
                              random_vector(n, -3, 3),
                              random_vector(n, -1, 1),
                              calloc(n, sizeof(double)),
                              n};
        describe_case("softmax %s %s n%d c%d h%d w%d", softmax_algo_name(c.algo),
                      c.mode == UDNN_SOFTMAX_MODE_CHANNEL ? "CHANNEL" : "INSTANCE", d[0], d[1],
                      d[2], d[3]);
        double *numeric = calloc(n, sizeof(double)), *dx = calloc(n, sizeof(double));
        double *y = calloc(n, sizeof(double));
        ck_assert(c.y && numeric && dx && y);
        softmax_reference_fwd(d, c.algo, c.mode, c.x, y);
        softmax_reference_bwd(d, c.algo, c.mode, y, c.dy, dx);
        numeric_gradient(softmax_loss, &c, c.x, n, numeric);
        expect_close(dx, numeric, n, kFdTol, "oracle softmax backward vs finite differences");
        free(c.x), free(c.dy), free(c.y), free(numeric), free(dx), free(y);
    }
}
END_TEST

START_TEST(oracle_activation)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    for (int m = 0; m < N_ACT_MODES; m++) {
        act_params a = act_draw(kActModes[m].mode);
        describe_case("activation %s coef %g swish beta %g", kActModes[m].name, a.coef,
                      a.swish_beta);
        enum { N = 257 };
        double x[N], analytic[N], numeric[N];
        act_draw_inputs(&a, UDNN_DATA_DOUBLE, x, N);
        for (int i = 0; i < N; i++) {
            analytic[i] = act_df(&a, x[i]);
            numeric[i] = (act_f(&a, x[i] + kFdStep) - act_f(&a, x[i] - kFdStep)) / (2 * kFdStep);
        }
        expect_close(analytic, numeric, N, kFdTol, "oracle activation derivative");
    }
}
END_TEST

/* ======================================================================== */

static Suite *independent_suite(void)
{
    Suite *s = suite_create("independent");
    TCase *conv = tcase_create("convolution");
    tcase_add_loop_test(conv, conv_forward, 0, 5);
    tcase_add_loop_test(conv, conv_backward_data, 0, 4);
    tcase_add_loop_test(conv, conv_backward_filter, 0, 4);
    TCase *pool = tcase_create("pooling");
    tcase_add_loop_test(pool, pooling_forward, 0, 4);
    tcase_add_loop_test(pool, pooling_backward, 0, 4);
    TCase *softmax = tcase_create("softmax");
    tcase_add_loop_test(softmax, softmax_forward, 0, 6);
    tcase_add_loop_test(softmax, softmax_backward, 0, 6);
    TCase *act = tcase_create("activation");
    tcase_add_loop_test(act, activation, 0, N_ACT_MODES);
    TCase *oracle = tcase_create("oracle");
    tcase_add_loop_test(oracle, oracle_conv, 0, 2);
    tcase_add_test(oracle, oracle_pooling);
    tcase_add_test(oracle, oracle_softmax);
    tcase_add_test(oracle, oracle_activation);
    TCase *all[] = {conv, pool, softmax, act, oracle};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_set_timeout(all[i], 60);
        suite_add_tcase(s, all[i]);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(independent_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
