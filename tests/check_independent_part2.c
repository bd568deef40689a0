/* check_independent_part2.c - the acceptance program, part 2.
 *
 * Written only against udnn.h and DESIGN.md, like check_independent.c (part
 * 1): it shares no code with the other suites (no testutil), with part 1, or
 * with the library's own oracle (cpu/ref). It runs batch normalization,
 * layer/RMS/group normalization, LRN, dropout, ReduceTensor and MatMul on
 * random shapes, in every floating type, on NCHW, NHWC and padded-stride
 * tensors (matmul: row-major, column-major and padded matrices), on every
 * backend that reports a device, and compares each result with its own
 * double-precision implementation, written as plain loops over logical
 * row-major indices. The backward implementations are themselves checked
 * against central finite differences of the forward ones, and the Philox
 * generator against the published known-answer vectors (the oracle_*
 * tests), so a mismatch points at the library rather than at this file.
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
static char g_case[384]; /* the random problem */
static char g_where[96]; /* backend, type, layout */

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

/* "2x3x4" into buf, for case descriptions. */
static const char *dims_str(int rank, const int *dim, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < n; i++)
        used += (size_t)snprintf(buf + used, n - used, i ? "x%d" : "%d", dim[i]);
    return buf;
}

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

/* Channel counts: the odd ones the issue names half of the time. */
static int draw_channels(int max)
{
    static const int odd[] = {1, 3, 5, 7};
    return rng_int(0, 1) ? odd[rng_int(0, 3)] : rng_int(1, max);
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

/* The type of the side tensors (statistics, scale, bias) of data of type
 * ti: udnn.h keeps them in FLOAT for FLOAT, HALF and BFLOAT16 data. */
static const dtype_info *side_type(const dtype_info *ti)
{
    return ti->dt == UDNN_DATA_DOUBLE ? &kTypes[0] : &kTypes[1];
}

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
/* Tensors of rank 2 to 5 in the handle's memory, with their logical values */
/* ======================================================================== */

enum { MAX_RANK = 5 };

/* NHWC puts dim 1 innermost (n, [d,] h, w, c); COLMAJOR (matmul only)
 * stores each matrix column by column; STRIDED is row-major with random
 * gaps after every dimension and, at times, between neighbours. */
typedef enum { LAYOUT_NCHW, LAYOUT_NHWC, LAYOUT_STRIDED, LAYOUT_COLMAJOR } layout_t;

static const layout_t kTensorLayouts[] = {LAYOUT_NCHW, LAYOUT_NHWC, LAYOUT_STRIDED};
static const layout_t kMatrixLayouts[] = {LAYOUT_NCHW, LAYOUT_COLMAJOR, LAYOUT_STRIDED};
enum { N_LAYOUTS = 3 };

static const char *layout_name(layout_t l)
{
    switch (l) {
    case LAYOUT_NCHW: return "NCHW";
    case LAYOUT_NHWC: return "NHWC";
    case LAYOUT_STRIDED: return "padded strides";
    default: return "column-major";
    }
}

enum { GUARD = 64 };     /* bytes before and after each payload */
#define GUARD_BYTE 0xA5  /* what the guards and the gaps hold */
#define POISON_BYTE 0xFF /* a NaN in every floating type */

typedef struct {
    udnnHandle_t h;
    const dtype_info *ti;
    double tol; /* the data's tolerance, also for side tensors in FLOAT */
    int rank;
    int dim[MAX_RANK];
    int stride[MAX_RANK]; /* in elements */
    size_t count;         /* logical elements */
    size_t span;          /* elements from the first to one past the last */
    double *val;          /* logical values, row-major over dim */
    unsigned char *dev;   /* guard | payload | guard, in the handle's memory */
    unsigned char *host;  /* staging copy of the same bytes */
    udnnTensorDescriptor_t desc;
} dtensor;

static size_t count_of(int rank, const int *dim)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++)
        n *= (size_t)dim[i];
    return n;
}

static size_t dt_bytes(const dtensor *t)
{
    return t->span * t->ti->size + 2 * GUARD;
}

static void layout_strides(int rank, const int *dim, layout_t lay, int *stride)
{
    int order[MAX_RANK]; /* dimensions from the innermost out */
    int n = 0;
    if (lay == LAYOUT_NHWC) {
        order[n++] = 1;
        for (int d = rank - 1; d >= 2; d--)
            order[n++] = d;
        order[n++] = 0;
    } else if (lay == LAYOUT_COLMAJOR) {
        order[n++] = rank - 2;
        order[n++] = rank - 1;
        for (int d = rank - 3; d >= 0; d--)
            order[n++] = d;
    } else {
        for (int d = rank - 1; d >= 0; d--)
            order[n++] = d;
    }
    long s = lay == LAYOUT_STRIDED ? rng_int(1, 2) : 1;
    for (int i = 0; i < rank; i++) {
        stride[order[i]] = (int)s;
        s *= dim[order[i]];
        if (lay == LAYOUT_STRIDED)
            s += rng_int(0, 3);
    }
}

/* Packed NCHW and NHWC go through the format call, whose strides must be
 * what udnn.h says the format means; the rest through explicit strides. */
static void dt_describe(dtensor *t, layout_t lay)
{
    OK(udnnCreateTensorDescriptor, &t->desc);
    if (lay == LAYOUT_NCHW || (lay == LAYOUT_NHWC && t->rank >= 3)) {
        udnnTensorFormat_t fmt = lay == LAYOUT_NCHW ? UDNN_TENSOR_NCHW : UDNN_TENSOR_NHWC;
        OK(udnnSetTensorNdDescriptorEx, t->desc, fmt, t->ti->dt, t->rank, t->dim);
        udnnDataType_t dt;
        int nb = 0, d[UDNN_DIM_MAX], s[UDNN_DIM_MAX];
        OK(udnnGetTensorNdDescriptor, t->desc, UDNN_DIM_MAX, &dt, &nb, d, s);
        if (nb != t->rank || dt != t->ti->dt)
            FAIL("udnnGetTensorNdDescriptor: rank %d type %d, expected %d and %d", nb, (int)dt,
                 t->rank, (int)t->ti->dt);
        for (int i = 0; i < nb; i++)
            if (d[i] != t->dim[i] || s[i] != t->stride[i])
                FAIL("udnnSetTensorNdDescriptorEx(%s): dim %d is %d stride %d, expected %d "
                     "stride %d",
                     layout_name(lay), i, d[i], s[i], t->dim[i], t->stride[i]);
        return;
    }
    OK(udnnSetTensorNdDescriptor, t->desc, t->ti->dt, t->rank, t->dim, t->stride);
}

static void dt_init(dtensor *t, udnnHandle_t h, const dtype_info *ti, int rank, const int *dim,
                    layout_t lay)
{
    memset(t, 0, sizeof *t);
    t->h = h;
    t->ti = ti;
    t->tol = ti->tol;
    t->rank = rank;
    memcpy(t->dim, dim, (size_t)rank * sizeof(int));
    layout_strides(rank, dim, lay, t->stride);
    t->count = count_of(rank, dim);
    t->span = 1;
    for (int i = 0; i < rank; i++)
        t->span += (size_t)(dim[i] - 1) * (size_t)t->stride[i];
    t->val = calloc(t->count, sizeof(double));
    t->host = malloc(dt_bytes(t));
    ck_assert(t->val && t->host);
    void *p = NULL;
    OK(udnnMalloc, h, &p, dt_bytes(t));
    t->dev = p;
    dt_describe(t, lay);
}

/* A side tensor (statistics, scale, bias) of data of type data_ti: packed
 * NCHW in the side type, judged with the data's tolerance. */
static void dt_init_side(dtensor *t, udnnHandle_t h, const dtype_info *data_ti, int rank,
                         const int *dim)
{
    dt_init(t, h, side_type(data_ti), rank, dim, LAYOUT_NCHW);
    t->tol = data_ti->tol;
}

static void dt_free(dtensor *t)
{
    if (t->desc)
        udnnDestroyTensorDescriptor(t->desc);
    if (t->dev)
        udnnFree(t->h, t->dev);
    free(t->val);
    free(t->host);
    memset(t, 0, sizeof *t);
}

static void *dt_ptr(const dtensor *t)
{
    return t->dev + GUARD;
}

/* Where logical element i lives, in elements from the payload's start. */
static size_t dt_offset(const dtensor *t, size_t i)
{
    size_t off = 0;
    for (int d = t->rank - 1; d >= 0; d--) {
        off += (i % (size_t)t->dim[d]) * (size_t)t->stride[d];
        i /= (size_t)t->dim[d];
    }
    return off;
}

static void dt_push(dtensor *t)
{
    OK(udnnMemcpy, t->h, t->dev, t->host, dt_bytes(t), UDNN_MEMCPY_HOST_TO_DEVICE);
}

/* Stores val (already rounded to the type) into the handle's memory; the
 * guards and the gaps between strided elements hold GUARD_BYTE. */
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

/* An output that must be written whole and never read: NaN bytes. */
static void dt_poison(dtensor *t)
{
    memset(t->host, GUARD_BYTE, dt_bytes(t));
    for (size_t i = 0; i < t->count; i++) {
        memset(t->host + GUARD + dt_offset(t, i) * t->ti->size, POISON_BYTE, t->ti->size);
        t->val[i] = NAN;
    }
    dt_push(t);
}

/* An output's old content: NaN when beta == 0 (it must not be read, and
 * every element must be written), random values to blend with otherwise. */
static void dt_prepare_output(dtensor *t, double beta)
{
    if (beta != 0)
        dt_fill_random(t, -1, 1);
    else
        dt_poison(t);
}

/* Downloads t, checks that nothing but its elements changed (the guards and
 * the gaps between strided elements), and returns its logical values,
 * which the caller frees. */
static double *dt_download(dtensor *t, const char *what)
{
    OK(udnnMemcpy, t->h, t->host, t->dev, dt_bytes(t), UDNN_MEMCPY_DEVICE_TO_HOST);
    size_t size = t->ti->size, payload = t->span * size;
    for (size_t i = 0; i < GUARD; i++)
        if (t->host[i] != GUARD_BYTE || t->host[GUARD + payload + i] != GUARD_BYTE)
            FAIL("%s: wrote outside its tensor (guard byte %zu)", what, i);
    unsigned char *is_elem = calloc(t->span, 1);
    double *out = malloc(t->count * sizeof(double));
    ck_assert(is_elem && out);
    for (size_t i = 0; i < t->count; i++) {
        size_t off = dt_offset(t, i);
        is_elem[off] = 1;
        out[i] = load_elem(t->host + GUARD, t->ti->dt, off);
    }
    for (size_t e = 0; e < t->span; e++)
        for (size_t b = 0; !is_elem[e] && b < size; b++)
            if (t->host[GUARD + e * size + b] != GUARD_BYTE)
                FAIL("%s: wrote into the gap at element offset %zu between strided elements",
                     what, e);
    free(is_elem);
    return out;
}

static void dt_expect(dtensor *t, const double *ref, const char *what)
{
    double *out = dt_download(t, what);
    expect_close(out, ref, t->count, t->tol, what);
    free(out);
}

/* An input must come back bit for bit (compared through its values). */
static void dt_expect_unchanged(dtensor *t, const char *what)
{
    double *out = dt_download(t, what);
    for (size_t i = 0; i < t->count; i++)
        if (out[i] != t->val[i])
            FAIL("%s: the op changed element %zu of its input from %.9g to %.9g", what, i,
                 t->val[i], out[i]);
    free(out);
}

/* ---- untyped buffers: states, reserve space, workspace, indices ---------- */

typedef struct {
    udnnHandle_t h;
    size_t bytes;
    unsigned char *dev, *host;
} rawbuf;

static void raw_init(rawbuf *r, udnnHandle_t h, size_t bytes, int fill)
{
    r->h = h;
    r->bytes = bytes;
    r->host = malloc(bytes + 2 * GUARD);
    ck_assert(r->host);
    memset(r->host, GUARD_BYTE, bytes + 2 * GUARD);
    memset(r->host + GUARD, fill, bytes);
    void *p = NULL;
    OK(udnnMalloc, h, &p, bytes + 2 * GUARD);
    r->dev = p;
    OK(udnnMemcpy, h, r->dev, r->host, bytes + 2 * GUARD, UDNN_MEMCPY_HOST_TO_DEVICE);
}

static void raw_refill(rawbuf *r, int fill)
{
    memset(r->host + GUARD, fill, r->bytes);
    OK(udnnMemcpy, r->h, r->dev, r->host, r->bytes + 2 * GUARD, UDNN_MEMCPY_HOST_TO_DEVICE);
}

static void *raw_ptr(const rawbuf *r)
{
    return r->bytes ? r->dev + GUARD : NULL;
}

/* Downloads the buffer, checks its guards, and returns its payload. */
static const unsigned char *raw_pull(rawbuf *r, const char *what)
{
    OK(udnnMemcpy, r->h, r->host, r->dev, r->bytes + 2 * GUARD, UDNN_MEMCPY_DEVICE_TO_HOST);
    for (size_t i = 0; i < GUARD; i++)
        if (r->host[i] != GUARD_BYTE || r->host[GUARD + r->bytes + i] != GUARD_BYTE)
            FAIL("%s: wrote outside its %zu bytes (guard byte %zu)", what, r->bytes, i);
    return r->host + GUARD;
}

static void raw_free(rawbuf *r)
{
    udnnFree(r->h, r->dev);
    free(r->host);
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

/* Checks out = alpha * op + beta * old, never touching old when beta == 0. */
static void check_output(dtensor *out, const scaling *s, const double *op, const char *what)
{
    double *ref = malloc(out->count * sizeof(double));
    ck_assert(ref);
    for (size_t i = 0; i < out->count; i++)
        ref[i] = s->alpha * op[i] + (s->beta != 0 ? s->beta * out->val[i] : 0.0);
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

static void run_everywhere_in(case_runner run, const void *spec, const layout_t *layouts)
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
            for (int l = 0; l < N_LAYOUTS; l++) {
                snprintf(g_where, sizeof g_where, "%s %s %s", backend_name(all[b]),
                         kTypes[t].name, layout_name(layouts[l]));
                run(h, &kTypes[t], layouts[l], spec);
            }
        OK(udnnDestroy, h);
        ran++;
    }
    if (ran == 0)
        FAIL("udnnGetDeviceCount reports no backend with a device, not even the CPU");
}

static void run_everywhere(case_runner run, const void *spec)
{
    run_everywhere_in(run, spec, kTensorLayouts);
}

/* ======================================================================== */
/* Independent implementations, in double, over logical row-major indices   */
/* ======================================================================== */

/* ---- batch normalization ---------------------------------------------------- */

/* Statistics live in "slots": one per channel (SPATIAL, SPATIAL_PERSISTENT)
 * or per channel and spatial position (PER_ACTIVATION); a slot's members
 * are the elements it averages over. */
typedef struct {
    int per_act;
    size_t n, c, sp; /* sp: the product of the spatial dims */
} bn_geom;

static bn_geom bn_geom_of(udnnBatchNormMode_t mode, int rank, const int *dim)
{
    bn_geom g = {mode == UDNN_BATCHNORM_PER_ACTIVATION, (size_t)dim[0], (size_t)dim[1], 1};
    for (int i = 2; i < rank; i++)
        g.sp *= (size_t)dim[i];
    return g;
}

static size_t bn_slots(const bn_geom *g)
{
    return g->per_act ? g->c * g->sp : g->c;
}

static size_t bn_members(const bn_geom *g)
{
    return g->per_act ? g->n : g->n * g->sp;
}

/* The logical index in x of member j of slot s. */
static size_t bn_at(const bn_geom *g, size_t s, size_t j)
{
    if (g->per_act)
        return j * g->c * g->sp + s;
    return ((j / g->sp) * g->c + s) * g->sp + j % g->sp;
}

/* The batch's mean, biased variance and 1 / sqrt(var + eps) per slot. */
static void bn_stats(const bn_geom *g, const double *x, double eps, double *mean, double *var,
                     double *inv)
{
    size_t m = bn_members(g);
    for (size_t s = 0; s < bn_slots(g); s++) {
        double sum = 0, sq = 0;
        for (size_t j = 0; j < m; j++)
            sum += x[bn_at(g, s, j)];
        mean[s] = sum / (double)m;
        for (size_t j = 0; j < m; j++) {
            double d = x[bn_at(g, s, j)] - mean[s];
            sq += d * d;
        }
        var[s] = sq / (double)m;
        inv[s] = 1 / sqrt(var[s] + eps);
    }
}

static void bn_apply(const bn_geom *g, const double *x, const double *scale, const double *bias,
                     const double *mean, const double *inv, double *y)
{
    for (size_t s = 0; s < bn_slots(g); s++)
        for (size_t j = 0; j < bn_members(g); j++) {
            size_t i = bn_at(g, s, j);
            y[i] = scale[s] * (x[i] - mean[s]) * inv[s] + bias[s];
        }
}

/* The gradients of L = <dy, bn(x)> with the batch's statistics:
 * dbias = sum dy, dscale = sum dy * xhat,
 * dx = scale * inv * (dy - dbias / m - xhat * dscale / m). */
static void bn_grad(const bn_geom *g, const double *x, const double *dy, const double *scale,
                    const double *mean, const double *inv, double *dx, double *dscale,
                    double *dbias)
{
    size_t m = bn_members(g);
    for (size_t s = 0; s < bn_slots(g); s++) {
        double sdy = 0, sdyx = 0;
        for (size_t j = 0; j < m; j++) {
            size_t i = bn_at(g, s, j);
            sdy += dy[i];
            sdyx += dy[i] * (x[i] - mean[s]) * inv[s];
        }
        dbias[s] = sdy;
        dscale[s] = sdyx;
        for (size_t j = 0; j < m; j++) {
            size_t i = bn_at(g, s, j);
            double xhat = (x[i] - mean[s]) * inv[s];
            dx[i] = scale[s] * inv[s] * (dy[i] - sdy / (double)m - xhat * sdyx / (double)m);
        }
    }
}

/* ---- layer, RMS and group normalization -------------------------------------- */

/* Both normalize contiguous logical "rows" of x: layer/RMS norm a row per
 * leading index over the trailing dims; group norm a row per (n, group) over
 * its channels and every spatial position. Only the scale's index differs. */
typedef struct {
    int rms;
    size_t rows, len;
    size_t groups, cg, sp; /* group norm; groups == 0 for layer and RMS norm */
    size_t nscale;
} norm_geom;

static norm_geom layer_geom(int rms, int rank, const int *dim, int k)
{
    norm_geom g;
    memset(&g, 0, sizeof g);
    g.rms = rms;
    g.rows = count_of(rank - k, dim);
    g.len = count_of(k, dim + rank - k);
    g.nscale = g.len;
    return g;
}

static norm_geom group_geom(int rank, const int *dim, int groups)
{
    norm_geom g;
    memset(&g, 0, sizeof g);
    g.groups = (size_t)groups;
    g.cg = (size_t)(dim[1] / groups);
    g.sp = count_of(rank - 2, dim + 2);
    g.rows = (size_t)dim[0] * g.groups;
    g.len = g.cg * g.sp;
    g.nscale = (size_t)dim[1];
    return g;
}

static size_t norm_scale_at(const norm_geom *g, size_t row, size_t j)
{
    return g->groups ? (row % g->groups) * g->cg + j / g->sp : j;
}

/* mean (0 for RMS) and inv = 1 / sqrt(var + eps), var being mean(x^2) for RMS. */
static void norm_stats(const norm_geom *g, const double *x, double eps, double *mean,
                       double *inv)
{
    for (size_t r = 0; r < g->rows; r++) {
        const double *row = x + r * g->len;
        double sum = 0, sq = 0;
        if (!g->rms)
            for (size_t j = 0; j < g->len; j++)
                sum += row[j];
        mean[r] = sum / (double)g->len;
        for (size_t j = 0; j < g->len; j++)
            sq += (row[j] - mean[r]) * (row[j] - mean[r]);
        inv[r] = 1 / sqrt(sq / (double)g->len + eps);
    }
}

/* y = (x - mean) * inv * scale + bias; RMS has no bias (NULL: none). */
static void norm_apply(const norm_geom *g, const double *x, const double *scale,
                       const double *bias, const double *mean, const double *inv, double *y)
{
    for (size_t r = 0; r < g->rows; r++)
        for (size_t j = 0; j < g->len; j++) {
            size_t i = r * g->len + j, k = norm_scale_at(g, r, j);
            y[i] = (x[i] - mean[r]) * inv[r] * scale[k] + (bias && !g->rms ? bias[k] : 0.0);
        }
}

/* With gs = dy * scale and xhat = (x - mean) * inv, over each row:
 * dx = inv * (gs - mean(gs) - xhat * mean(gs * xhat)), without the mean(gs)
 * term for RMS (whose mean is not a function of x). dscale and dbias
 * (zeroed by the caller) sum dy * xhat and dy over the rows. */
static void norm_grad(const norm_geom *g, const double *x, const double *dy,
                      const double *scale, const double *mean, const double *inv, double *dx,
                      double *dscale, double *dbias)
{
    for (size_t r = 0; r < g->rows; r++) {
        double sg = 0, sgx = 0;
        for (size_t j = 0; j < g->len; j++) {
            size_t i = r * g->len + j, k = norm_scale_at(g, r, j);
            double xhat = (x[i] - mean[r]) * inv[r];
            sg += dy[i] * scale[k];
            sgx += dy[i] * scale[k] * xhat;
            dscale[k] += dy[i] * xhat;
            dbias[k] += dy[i];
        }
        double len = (double)g->len;
        for (size_t j = 0; j < g->len; j++) {
            size_t i = r * g->len + j, k = norm_scale_at(g, r, j);
            double xhat = (x[i] - mean[r]) * inv[r];
            dx[i] = inv[r] * (dy[i] * scale[k] - (g->rms ? 0.0 : sg / len) - xhat * sgx / len);
        }
    }
}

/* ---- LRN ------------------------------------------------------------------------- */

/* cuDNN's cross-channel LRN: y = x / s^beta, s = k + alpha / n * (sum of x^2
 * over channels c - floor((n - 1) / 2) ... c + ceil((n - 1) / 2) that exist). */
typedef struct {
    size_t n, c, sp;
    unsigned size;
    double alpha, beta, k;
} lrn_geom;

static size_t lrn_at(const lrn_geom *g, size_t n, size_t c, size_t s)
{
    return (n * g->c + c) * g->sp + s;
}

static void lrn_window(const lrn_geom *g, size_t c, size_t *lo, size_t *hi)
{
    size_t below = (g->size - 1) / 2, above = g->size / 2; /* floor and ceil of (n-1)/2 */
    *lo = c >= below ? c - below : 0;
    *hi = c + above < g->c - 1 ? c + above : g->c - 1;
}

static double lrn_s(const lrn_geom *g, const double *x, size_t n, size_t c, size_t s)
{
    size_t lo, hi;
    lrn_window(g, c, &lo, &hi);
    double sum = 0;
    for (size_t j = lo; j <= hi; j++)
        sum += x[lrn_at(g, n, j, s)] * x[lrn_at(g, n, j, s)];
    return g->k + g->alpha / g->size * sum;
}

static void lrn_forward(const lrn_geom *g, const double *x, double *y)
{
    for (size_t n = 0; n < g->n; n++)
        for (size_t c = 0; c < g->c; c++)
            for (size_t s = 0; s < g->sp; s++) {
                size_t i = lrn_at(g, n, c, s);
                y[i] = x[i] * pow(lrn_s(g, x, n, c, s), -g->beta);
            }
}

/* dx_i = dy_i s_i^-beta - 2 beta alpha / n * x_i * sum over the outputs j
 * whose window holds i of dy_j x_j s_j^(-beta-1). */
static void lrn_backward(const lrn_geom *g, const double *x, const double *dy, double *dx)
{
    for (size_t n = 0; n < g->n; n++)
        for (size_t s = 0; s < g->sp; s++) {
            for (size_t c = 0; c < g->c; c++) {
                size_t i = lrn_at(g, n, c, s);
                dx[i] = dy[i] * pow(lrn_s(g, x, n, c, s), -g->beta);
            }
            for (size_t c = 0; c < g->c; c++) {
                size_t j = lrn_at(g, n, c, s), lo, hi;
                double w = -2 * g->beta * g->alpha / g->size * dy[j] * x[j] *
                           pow(lrn_s(g, x, n, c, s), -g->beta - 1);
                lrn_window(g, c, &lo, &hi);
                for (size_t cc = lo; cc <= hi; cc++)
                    dx[lrn_at(g, n, cc, s)] += w * x[lrn_at(g, n, cc, s)];
            }
        }
}

/* ---- dropout: Philox4x32-10 and the mask contract of udnn.h -------------------- */

/* Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC11): ten
 * rounds of two 32x32->64 multiplications, the key bumped by the Weyl
 * constants between rounds. */
static void philox4x32_10(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        if (round > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
        c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    }
    out[0] = c0, out[1] = c1, out[2] = c2, out[3] = c3;
}

/* Whether element i (logical row-major) survives forward call t. */
static int dropout_kept(unsigned long long seed, uint64_t t, uint64_t i, float p)
{
    uint64_t block = i / 4;
    uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)t,
                       (uint32_t)(t >> 32)};
    uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    uint32_t r[4];
    philox4x32_10(ctr, key, r);
    double threshold = round((double)p * 4294967296.0);
    return (double)r[i % 4] >= threshold;
}

/* ---- ReduceTensor ------------------------------------------------------------------- */

static const char *reduce_op_name(udnnReduceTensorOp_t op)
{
    static const char *names[] = {"ADD", "MUL",  "MIN",   "MAX",         "AMAX",
                                  "AVG", "NORM1", "NORM2", "MUL_NO_ZEROS"};
    return names[op];
}

static int reduce_has_indices(udnnReduceTensorOp_t op)
{
    return op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
           op == UDNN_REDUCE_TENSOR_AMAX;
}

/* Where element i of a goes: its index in c (the reduced dims, those where
 * c has size 1, set to 0) and its row-major index within the reduced dims. */
static void reduce_place(int rank, const int *adim, const int *cdim, size_t i, size_t *ci,
                         size_t *ri)
{
    int coord[MAX_RANK];
    for (int d = rank - 1; d >= 0; d--) {
        coord[d] = (int)(i % (size_t)adim[d]);
        i /= (size_t)adim[d];
    }
    *ci = *ri = 0;
    for (int d = 0; d < rank; d++) {
        int reduced = cdim[d] == 1;
        *ci = *ci * (size_t)cdim[d] + (size_t)(reduced ? 0 : coord[d]);
        if (reduced)
            *ri = *ri * (size_t)adim[d] + (size_t)coord[d];
    }
}

/* c = reduce(a); idx gets, for MIN, MAX and AMAX, the index within the
 * reduced dims of the first element (row-major) that gave the result. */
static void reduce_reference(udnnReduceTensorOp_t op, int rank, const int *adim,
                             const int *cdim, const double *a, double *c, uint32_t *idx)
{
    size_t na = count_of(rank, adim), nc = count_of(rank, cdim);
    size_t *members = calloc(nc, sizeof(size_t));
    ck_assert(members);
    int product = op == UDNN_REDUCE_TENSOR_MUL || op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    for (size_t k = 0; k < nc; k++) {
        c[k] = product ? 1.0 : 0.0;
        idx[k] = 0;
    }
    for (size_t i = 0; i < na; i++) {
        size_t k, r;
        reduce_place(rank, adim, cdim, i, &k, &r);
        double v = a[i];
        int first = members[k]++ == 0;
        switch (op) {
        case UDNN_REDUCE_TENSOR_ADD:
        case UDNN_REDUCE_TENSOR_AVG: c[k] += v; break;
        case UDNN_REDUCE_TENSOR_MUL: c[k] *= v; break;
        case UDNN_REDUCE_TENSOR_MUL_NO_ZEROS: c[k] *= v != 0 ? v : 1.0; break;
        case UDNN_REDUCE_TENSOR_NORM1: c[k] += fabs(v); break;
        case UDNN_REDUCE_TENSOR_NORM2: c[k] += v * v; break;
        case UDNN_REDUCE_TENSOR_MIN:
            if (first || v < c[k])
                c[k] = v, idx[k] = (uint32_t)r;
            break;
        case UDNN_REDUCE_TENSOR_MAX:
            if (first || v > c[k])
                c[k] = v, idx[k] = (uint32_t)r;
            break;
        case UDNN_REDUCE_TENSOR_AMAX:
            if (first || fabs(v) > c[k])
                c[k] = fabs(v), idx[k] = (uint32_t)r;
            break;
        }
    }
    for (size_t k = 0; k < nc; k++) {
        if (op == UDNN_REDUCE_TENSOR_AVG)
            c[k] /= (double)members[k];
        if (op == UDNN_REDUCE_TENSOR_NORM2)
            c[k] = sqrt(c[k]);
    }
    free(members);
}

/* ---- MatMul --------------------------------------------------------------------------- */

/* One operand: [batch,] rows, cols as stored; op() transposes when trans. */
typedef struct {
    int rank, batch, rows, cols, trans;
} mat_shape;

static double mat_op_at(const mat_shape *s, const double *v, int b, int i, int j)
{
    size_t bb = s->batch == 1 ? 0 : (size_t)b; /* a batch of 1 broadcasts */
    int r = s->trans ? j : i, c = s->trans ? i : j;
    return v[(bb * (size_t)s->rows + (size_t)r) * (size_t)s->cols + (size_t)c];
}

static void matmul_reference(const mat_shape *a, const double *av, const mat_shape *b,
                             const double *bv, int batch, int m, int n, int k, double *c)
{
    for (int p = 0; p < batch; p++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double sum = 0;
                for (int q = 0; q < k; q++)
                    sum += mat_op_at(a, av, p, i, q) * mat_op_at(b, bv, p, q, j);
                c[((size_t)p * (size_t)m + (size_t)i) * (size_t)n + (size_t)j] = sum;
            }
}

/* ======================================================================== */
/* Batch normalization on the library                                       */
/* ======================================================================== */

typedef enum { BN_TRAIN, BN_INFER, BN_BACKWARD } bn_dir;

typedef struct {
    bn_dir dir;
    udnnBatchNormMode_t mode;
    int rank, dim[MAX_RANK];
    double eps, factor;
    int with_side; /* running and saved statistics (TRAIN), saved ones (BACKWARD) */
} bn_spec;

static const char *bn_mode_name(udnnBatchNormMode_t m)
{
    return m == UDNN_BATCHNORM_PER_ACTIVATION ? "PER_ACTIVATION"
           : m == UDNN_BATCHNORM_SPATIAL      ? "SPATIAL"
                                              : "SPATIAL_PERSISTENT";
}

/* What every batch normalization run shares: x with per-channel offsets
 * (so that the means matter), scale, bias, and the derived descriptor. */
typedef struct {
    bn_geom g;
    int pdim[MAX_RANK];
    dtensor x, scale, bias;
    udnnTensorDescriptor_t pdesc;
    double *mean, *var, *inv; /* of x, in double */
} bn_fixture;

/* udnnDeriveBNTensorDescriptor must give 1 x C x 1... (SPATIAL modes) or
 * 1 x C x spatial... (PER_ACTIVATION), packed, in the side type. */
static void bn_derive(bn_fixture *f, const dtype_info *ti, udnnBatchNormMode_t mode, int rank)
{
    OK(udnnCreateTensorDescriptor, &f->pdesc);
    OK(udnnDeriveBNTensorDescriptor, f->pdesc, f->x.desc, mode);
    udnnDataType_t dt;
    int nb = 0, d[UDNN_DIM_MAX], s[UDNN_DIM_MAX];
    OK(udnnGetTensorNdDescriptor, f->pdesc, UDNN_DIM_MAX, &dt, &nb, d, s);
    if (nb != rank || dt != side_type(ti)->dt)
        FAIL("udnnDeriveBNTensorDescriptor: rank %d type %d, expected %d and %d", nb, (int)dt,
             rank, (int)side_type(ti)->dt);
    int packed = 1;
    for (int i = rank - 1; i >= 0; i--) {
        if (d[i] != f->pdim[i] || s[i] != packed)
            FAIL("udnnDeriveBNTensorDescriptor: dim %d is %d stride %d, expected %d stride %d",
                 i, d[i], s[i], f->pdim[i], packed);
        packed *= d[i];
    }
}

static void bn_setup(bn_fixture *f, udnnHandle_t h, const dtype_info *ti, layout_t lay,
                     const bn_spec *sp)
{
    memset(f, 0, sizeof *f);
    f->g = bn_geom_of(sp->mode, sp->rank, sp->dim);
    for (int i = 0; i < sp->rank; i++)
        f->pdim[i] = i == 0 ? 1 : i == 1 || f->g.per_act ? sp->dim[i] : 1;
    dt_init(&f->x, h, ti, sp->rank, sp->dim, lay);
    double offset[16], spread[16];
    for (size_t c = 0; c < f->g.c; c++)
        offset[c] = rng_uniform(-1.5, 1.5), spread[c] = rng_uniform(0.5, 1.5);
    for (size_t i = 0; i < f->x.count; i++) {
        size_t c = i / f->g.sp % f->g.c;
        f->x.val[i] = round_to(ti->dt, offset[c] + spread[c] * rng_uniform(-1, 1));
    }
    dt_upload(&f->x);
    bn_derive(f, ti, sp->mode, sp->rank);
    dt_init_side(&f->scale, h, ti, sp->rank, f->pdim);
    dt_init_side(&f->bias, h, ti, sp->rank, f->pdim);
    dt_fill_random(&f->scale, -1.5, 1.5);
    dt_fill_random(&f->bias, -1, 1);
    size_t ns = bn_slots(&f->g);
    f->mean = calloc(ns, sizeof(double));
    f->var = calloc(ns, sizeof(double));
    f->inv = calloc(ns, sizeof(double));
    ck_assert(f->mean && f->var && f->inv);
    bn_stats(&f->g, f->x.val, sp->eps, f->mean, f->var, f->inv);
}

static void bn_teardown(bn_fixture *f)
{
    dt_free(&f->x);
    dt_free(&f->scale);
    dt_free(&f->bias);
    udnnDestroyTensorDescriptor(f->pdesc);
    free(f->mean), free(f->var), free(f->inv);
}

static void bn_run_train(udnnHandle_t h, const dtype_info *ti, layout_t lay, bn_fixture *f,
                         const bn_spec *sp)
{
    dtensor y, rmean = {0}, rvar = {0}, smean = {0}, sinv = {0};
    scaling sc = scaling_draw(ti);
    dt_init(&y, h, ti, sp->rank, sp->dim, lay);
    dt_prepare_output(&y, sc.beta);
    if (sp->with_side) {
        dt_init_side(&rmean, h, ti, sp->rank, f->pdim);
        dt_init_side(&rvar, h, ti, sp->rank, f->pdim);
        dt_init_side(&smean, h, ti, sp->rank, f->pdim);
        dt_init_side(&sinv, h, ti, sp->rank, f->pdim);
        dt_fill_random(&rmean, -1, 1);
        dt_fill_random(&rvar, 0.5, 2);
        dt_poison(&smean);
        dt_poison(&sinv);
    }
    OK(udnnBatchNormalizationForwardTraining, h, sp->mode, alpha_ptr(&sc), beta_ptr(&sc),
       f->x.desc, dt_ptr(&f->x), y.desc, dt_ptr(&y), f->pdesc, dt_ptr(&f->scale),
       dt_ptr(&f->bias), sp->factor, sp->with_side ? dt_ptr(&rmean) : NULL,
       sp->with_side ? dt_ptr(&rvar) : NULL, sp->eps, sp->with_side ? dt_ptr(&smean) : NULL,
       sp->with_side ? dt_ptr(&sinv) : NULL);

    double *op = calloc(y.count, sizeof(double));
    ck_assert(op);
    bn_apply(&f->g, f->x.val, f->scale.val, f->bias.val, f->mean, f->inv, op);
    check_output(&y, &sc, op, "udnnBatchNormalizationForwardTraining y");
    dt_expect_unchanged(&f->x, "udnnBatchNormalizationForwardTraining x");
    if (sp->with_side) {
        size_t ns = bn_slots(&f->g);
        double m = (double)bn_members(&f->g), *ref = calloc(ns, sizeof(double));
        ck_assert(ref);
        for (size_t s = 0; s < ns; s++)
            ref[s] = (1 - sp->factor) * rmean.val[s] + sp->factor * f->mean[s];
        dt_expect(&rmean, ref, "udnnBatchNormalizationForwardTraining resultRunningMean");
        for (size_t s = 0; s < ns; s++) /* the running variance is the unbiased one */
            ref[s] = (1 - sp->factor) * rvar.val[s] + sp->factor * f->var[s] * m / (m - 1);
        dt_expect(&rvar, ref, "udnnBatchNormalizationForwardTraining resultRunningVariance");
        dt_expect(&smean, f->mean, "udnnBatchNormalizationForwardTraining resultSaveMean");
        dt_expect(&sinv, f->inv, "udnnBatchNormalizationForwardTraining resultSaveInvVariance");
        free(ref);
        dt_free(&rmean), dt_free(&rvar), dt_free(&smean), dt_free(&sinv);
    }
    free(op);
    dt_free(&y);
}

static void bn_run_infer(udnnHandle_t h, const dtype_info *ti, layout_t lay, bn_fixture *f,
                         const bn_spec *sp)
{
    dtensor y, emean, evar;
    scaling sc = scaling_draw(ti);
    dt_init(&y, h, ti, sp->rank, sp->dim, lay);
    dt_init_side(&emean, h, ti, sp->rank, f->pdim);
    dt_init_side(&evar, h, ti, sp->rank, f->pdim);
    dt_fill_random(&emean, -1, 1);
    dt_fill_random(&evar, 0.25, 2);
    dt_prepare_output(&y, sc.beta);
    OK(udnnBatchNormalizationForwardInference, h, sp->mode, alpha_ptr(&sc), beta_ptr(&sc),
       f->x.desc, dt_ptr(&f->x), y.desc, dt_ptr(&y), f->pdesc, dt_ptr(&f->scale),
       dt_ptr(&f->bias), dt_ptr(&emean), dt_ptr(&evar), sp->eps);

    double *op = calloc(y.count, sizeof(double)), *inv = calloc(emean.count, sizeof(double));
    ck_assert(op && inv);
    for (size_t s = 0; s < emean.count; s++)
        inv[s] = 1 / sqrt(evar.val[s] + sp->eps);
    bn_apply(&f->g, f->x.val, f->scale.val, f->bias.val, emean.val, inv, op);
    check_output(&y, &sc, op, "udnnBatchNormalizationForwardInference y");
    free(op), free(inv);
    dt_free(&y), dt_free(&emean), dt_free(&evar);
}

/* With the saved statistics, the library gets this file's (rounded to the
 * side type) and so does the reference; without, both recompute them. */
static void bn_run_backward(udnnHandle_t h, const dtype_info *ti, layout_t lay, bn_fixture *f,
                            const bn_spec *sp)
{
    dtensor dy, dx, dscale, dbias, smean = {0}, sinv = {0};
    scaling sd = scaling_draw(ti), spar = scaling_draw(ti);
    dt_init(&dy, h, ti, sp->rank, sp->dim, lay);
    dt_init(&dx, h, ti, sp->rank, sp->dim, lay);
    dt_init_side(&dscale, h, ti, sp->rank, f->pdim);
    dt_init_side(&dbias, h, ti, sp->rank, f->pdim);
    dt_fill_random(&dy, -1, 1);
    dt_prepare_output(&dx, sd.beta);
    dt_prepare_output(&dscale, spar.beta);
    dt_prepare_output(&dbias, spar.beta);
    const double *mean = f->mean, *inv = f->inv;
    if (sp->with_side) {
        dt_init_side(&smean, h, ti, sp->rank, f->pdim);
        dt_init_side(&sinv, h, ti, sp->rank, f->pdim);
        dt_fill_from(&smean, f->mean);
        dt_fill_from(&sinv, f->inv);
        mean = smean.val, inv = sinv.val;
    }
    OK(udnnBatchNormalizationBackward, h, sp->mode, alpha_ptr(&sd), beta_ptr(&sd),
       alpha_ptr(&spar), beta_ptr(&spar), f->x.desc, dt_ptr(&f->x), dy.desc, dt_ptr(&dy),
       dx.desc, dt_ptr(&dx), f->pdesc, dt_ptr(&f->scale), dt_ptr(&dscale), dt_ptr(&dbias),
       sp->eps, sp->with_side ? dt_ptr(&smean) : NULL, sp->with_side ? dt_ptr(&sinv) : NULL);

    size_t ns = bn_slots(&f->g);
    double *gx = calloc(dx.count, sizeof(double)), *gs = calloc(ns, sizeof(double)),
           *gb = calloc(ns, sizeof(double));
    ck_assert(gx && gs && gb);
    bn_grad(&f->g, f->x.val, dy.val, f->scale.val, mean, inv, gx, gs, gb);
    check_output(&dx, &sd, gx, "udnnBatchNormalizationBackward dx");
    check_output(&dscale, &spar, gs, "udnnBatchNormalizationBackward dBnScaleResult");
    check_output(&dbias, &spar, gb, "udnnBatchNormalizationBackward dBnBiasResult");
    free(gx), free(gs), free(gb);
    if (sp->with_side)
        dt_free(&smean), dt_free(&sinv);
    dt_free(&dy), dt_free(&dx), dt_free(&dscale), dt_free(&dbias);
}

static void run_bn(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const bn_spec *sp = p;
    bn_fixture f;
    bn_setup(&f, h, ti, lay, sp);
    if (sp->dir == BN_TRAIN)
        bn_run_train(h, ti, lay, &f, sp);
    else if (sp->dir == BN_INFER)
        bn_run_infer(h, ti, lay, &f, sp);
    else
        bn_run_backward(h, ti, lay, &f, sp);
    bn_teardown(&f);
}

static const udnnBatchNormMode_t kBnModes[] = {UDNN_BATCHNORM_PER_ACTIVATION,
                                               UDNN_BATCHNORM_SPATIAL,
                                               UDNN_BATCHNORM_SPATIAL_PERSISTENT};

/* 2-D (rank 4) or 3-D (rank 5) images; each statistic averages at least
 * three elements: the unbiased running variance needs two, and with two the
 * normalized values are +-1 whatever x is, so that dx is nothing but
 * rounding noise. */
static void bn_draw(bn_spec *sp, bn_dir dir, udnnBatchNormMode_t mode, int with_side)
{
    memset(sp, 0, sizeof *sp);
    sp->dir = dir;
    sp->with_side = with_side;
    sp->mode = mode;
    sp->rank = rng_int(4, 5);
    for (;;) {
        sp->dim[0] = rng_int(1, 4);
        sp->dim[1] = draw_channels(8);
        for (int i = 2; i < sp->rank; i++)
            sp->dim[i] = rng_int(1, sp->rank == 4 ? 6 : 4);
        bn_geom g = bn_geom_of(mode, sp->rank, sp->dim);
        if (bn_members(&g) >= 3)
            break;
    }
    sp->eps = rng_uniform(1e-5, 1e-2);
    sp->factor = rng_int(0, 2) ? rng_uniform(0.05, 0.95) : 1.0; /* 1: cuDNN's first call */
    char d[64];
    describe_case("batchnorm %s %s x %s epsilon %g factor %g%s",
                  dir == BN_TRAIN ? "forward training" : dir == BN_INFER ? "forward inference"
                                                                         : "backward",
                  bn_mode_name(mode), dims_str(sp->rank, sp->dim, d, sizeof d), sp->eps,
                  sp->factor, dir != BN_INFER && !with_side ? " (optional statistics NULL)" : "");
}

/* The loop index picks the mode; the last iteration drops the optional
 * statistics (NULL), in a random mode. */
START_TEST(batchnorm_forward_training)
{
    seed_fresh(_i);
    bn_spec sp;
    bn_draw(&sp, BN_TRAIN, kBnModes[_i < 3 ? _i : rng_int(0, 2)], _i < 3);
    run_everywhere(run_bn, &sp);
}
END_TEST

START_TEST(batchnorm_forward_inference)
{
    seed_fresh(_i);
    bn_spec sp;
    bn_draw(&sp, BN_INFER, kBnModes[_i ? rng_int(1, 2) : 0], 0);
    run_everywhere(run_bn, &sp);
}
END_TEST

START_TEST(batchnorm_backward)
{
    seed_fresh(_i);
    bn_spec sp;
    bn_draw(&sp, BN_BACKWARD, kBnModes[_i < 3 ? _i : rng_int(0, 2)], _i < 3);
    run_everywhere(run_bn, &sp);
}
END_TEST

/* ======================================================================== */
/* Layer, RMS and group normalization on the library                        */
/* ======================================================================== */

typedef struct {
    int group;           /* group norm, else layer/RMS norm */
    udnnNormMode_t mode; /* layer/RMS norm */
    int k;               /* layer/RMS norm: normalizedDims */
    int groups;          /* group norm */
    int rank, dim[MAX_RANK];
    double eps;
    int with_bias, with_stats; /* forward: pass bias, saveMean/saveInvStd */
    int backward;
} norm_spec;

static norm_geom norm_geom_of(const norm_spec *sp)
{
    return sp->group ? group_geom(sp->rank, sp->dim, sp->groups)
                     : layer_geom(sp->mode == UDNN_NORM_RMS, sp->rank, sp->dim, sp->k);
}

/* The side tensors' shapes, as udnn.h gives them: scale/bias (sdim) and
 * statistics (tdim), both of x's rank. */
static void norm_side_dims(const norm_spec *sp, int *sdim, int *tdim)
{
    for (int i = 0; i < sp->rank; i++) {
        if (sp->group) {
            sdim[i] = i == 1 ? sp->dim[1] : 1;
            tdim[i] = i == 0 ? sp->dim[0] : i == 1 ? sp->groups : 1;
        } else {
            int leading = i < sp->rank - sp->k;
            sdim[i] = leading ? 1 : sp->dim[i];
            tdim[i] = leading ? sp->dim[i] : 1;
        }
    }
}

typedef struct {
    norm_geom g;
    dtensor x, scale, bias, smean, sinv;
    double *mean, *inv; /* of x, in double */
} norm_fixture;

static void norm_setup(norm_fixture *f, udnnHandle_t h, const dtype_info *ti, layout_t lay,
                       const norm_spec *sp)
{
    int sdim[MAX_RANK], tdim[MAX_RANK];
    memset(f, 0, sizeof *f);
    f->g = norm_geom_of(sp);
    norm_side_dims(sp, sdim, tdim);
    dt_init(&f->x, h, ti, sp->rank, sp->dim, lay);
    double offset = 0; /* per row, so that the means matter */
    for (size_t i = 0; i < f->x.count; i++) {
        if (i % f->g.len == 0)
            offset = rng_uniform(-1.5, 1.5);
        f->x.val[i] = round_to(ti->dt, offset + rng_uniform(-1, 1));
    }
    dt_upload(&f->x);
    dt_init_side(&f->scale, h, ti, sp->rank, sdim);
    dt_init_side(&f->bias, h, ti, sp->rank, sdim);
    dt_init_side(&f->smean, h, ti, sp->rank, tdim);
    dt_init_side(&f->sinv, h, ti, sp->rank, tdim);
    dt_fill_random(&f->scale, -1.5, 1.5);
    dt_fill_random(&f->bias, -1, 1);
    f->mean = calloc(f->g.rows, sizeof(double));
    f->inv = calloc(f->g.rows, sizeof(double));
    ck_assert(f->mean && f->inv);
    norm_stats(&f->g, f->x.val, sp->eps, f->mean, f->inv);
}

static void norm_teardown(norm_fixture *f)
{
    dt_free(&f->x), dt_free(&f->scale), dt_free(&f->bias), dt_free(&f->smean);
    dt_free(&f->sinv);
    free(f->mean), free(f->inv);
}

static void norm_run_forward(udnnHandle_t h, const dtype_info *ti, layout_t lay,
                             norm_fixture *f, const norm_spec *sp)
{
    const char *fn = sp->group ? "udnnGroupNormForward" : "udnnNormForward";
    char what[96];
    dtensor y;
    dt_init(&y, h, ti, sp->rank, sp->dim, lay);
    dt_poison(&y);
    dt_poison(&f->smean);
    dt_poison(&f->sinv);
    const void *bias = sp->with_bias ? dt_ptr(&f->bias) : NULL;
    void *smean = sp->with_stats ? dt_ptr(&f->smean) : NULL;
    void *sinv = sp->with_stats ? dt_ptr(&f->sinv) : NULL;
    if (sp->group)
        OK(udnnGroupNormForward, h, sp->groups, sp->eps, f->x.desc, dt_ptr(&f->x),
           f->scale.desc, dt_ptr(&f->scale), bias, y.desc, dt_ptr(&y), f->smean.desc, smean,
           sinv);
    else
        OK(udnnNormForward, h, sp->mode, sp->k, sp->eps, f->x.desc, dt_ptr(&f->x),
           f->scale.desc, dt_ptr(&f->scale), bias, y.desc, dt_ptr(&y), f->smean.desc, smean,
           sinv);

    double *op = calloc(y.count, sizeof(double));
    ck_assert(op);
    norm_apply(&f->g, f->x.val, f->scale.val, sp->with_bias ? f->bias.val : NULL, f->mean,
               f->inv, op);
    snprintf(what, sizeof what, "%s y", fn);
    dt_expect(&y, op, what);
    snprintf(what, sizeof what, "%s x", fn);
    dt_expect_unchanged(&f->x, what);
    if (sp->with_stats) {
        snprintf(what, sizeof what, "%s saveMean", fn);
        if (f->g.rms) /* udnn.h does not say what RMS norm's mean is: guards only */
            free(dt_download(&f->smean, what));
        else
            dt_expect(&f->smean, f->mean, what);
        snprintf(what, sizeof what, "%s saveInvStd", fn);
        dt_expect(&f->sinv, f->inv, what);
    }
    free(op);
    dt_free(&y);
}

/* The library gets this file's statistics rounded to the side type, and so
 * does the reference. RMS norm passes dBias NULL (it has no bias). */
static void norm_run_backward(udnnHandle_t h, const dtype_info *ti, layout_t lay,
                              norm_fixture *f, const norm_spec *sp)
{
    const char *fn = sp->group ? "udnnGroupNormBackward" : "udnnNormBackward";
    char what[96];
    dtensor dy, dx, dscale, dbias;
    dt_init(&dy, h, ti, sp->rank, sp->dim, lay);
    dt_init(&dx, h, ti, sp->rank, sp->dim, lay);
    dt_init_side(&dscale, h, ti, sp->rank, f->scale.dim);
    dt_init_side(&dbias, h, ti, sp->rank, f->scale.dim);
    dt_fill_random(&dy, -1, 1);
    dt_poison(&dx), dt_poison(&dscale), dt_poison(&dbias);
    dt_fill_from(&f->smean, f->mean);
    dt_fill_from(&f->sinv, f->inv);
    void *db = f->g.rms ? NULL : dt_ptr(&dbias);
    if (sp->group)
        OK(udnnGroupNormBackward, h, sp->groups, f->x.desc, dt_ptr(&f->x), dy.desc,
           dt_ptr(&dy), f->scale.desc, dt_ptr(&f->scale), f->smean.desc, dt_ptr(&f->smean),
           dt_ptr(&f->sinv), dx.desc, dt_ptr(&dx), dt_ptr(&dscale), db);
    else
        OK(udnnNormBackward, h, sp->mode, sp->k, f->x.desc, dt_ptr(&f->x), dy.desc,
           dt_ptr(&dy), f->scale.desc, dt_ptr(&f->scale), f->smean.desc, dt_ptr(&f->smean),
           dt_ptr(&f->sinv), dx.desc, dt_ptr(&dx), dt_ptr(&dscale), db);

    double *gx = calloc(dx.count, sizeof(double)), *gs = calloc(f->g.nscale, sizeof(double)),
           *gb = calloc(f->g.nscale, sizeof(double));
    ck_assert(gx && gs && gb);
    norm_grad(&f->g, f->x.val, dy.val, f->scale.val, f->smean.val, f->sinv.val, gx, gs, gb);
    snprintf(what, sizeof what, "%s dx", fn);
    dt_expect(&dx, gx, what);
    snprintf(what, sizeof what, "%s dScale", fn);
    dt_expect(&dscale, gs, what);
    if (!f->g.rms) {
        snprintf(what, sizeof what, "%s dBias", fn);
        dt_expect(&dbias, gb, what);
    }
    free(gx), free(gs), free(gb);
    dt_free(&dy), dt_free(&dx), dt_free(&dscale), dt_free(&dbias);
}

static void run_norm(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const norm_spec *sp = p;
    norm_fixture f;
    norm_setup(&f, h, ti, lay, sp);
    if (sp->backward)
        norm_run_backward(h, ti, lay, &f, sp);
    else
        norm_run_forward(h, ti, lay, &f, sp);
    norm_teardown(&f);
}

/* Rank 3 to 5, normalizedDims 1 to rank - 1. Rows (and groups) hold at
 * least three elements: with fewer the normalized values hardly depend on
 * x, and dx is nothing but rounding noise. */
static void layer_draw(norm_spec *sp, udnnNormMode_t mode, int backward)
{
    memset(sp, 0, sizeof *sp);
    sp->mode = mode;
    sp->backward = backward;
    sp->rank = rng_int(3, 5);
    for (;;) {
        sp->dim[0] = rng_int(1, 3);
        sp->dim[1] = draw_channels(8);
        for (int i = 2; i < sp->rank; i++)
            sp->dim[i] = rng_int(1, sp->rank == 5 ? 4 : 6);
        sp->k = rng_int(1, sp->rank - 1);
        if (count_of(sp->k, sp->dim + sp->rank - sp->k) >= 3)
            break;
    }
    sp->eps = rng_uniform(1e-5, 1e-2);
}

/* kind 0: groups 2..4 of 1..3 channels; 1: instance norm (groups == C);
 * 2: one group. Each group holds at least three elements. */
static void group_draw(norm_spec *sp, int kind, int backward)
{
    memset(sp, 0, sizeof *sp);
    sp->group = 1;
    sp->backward = backward;
    sp->rank = rng_int(3, 5);
    for (;;) {
        sp->dim[0] = rng_int(1, 3);
        if (kind == 0) {
            sp->groups = rng_int(2, 4);
            sp->dim[1] = sp->groups * rng_int(1, 3);
        } else {
            sp->dim[1] = draw_channels(8);
            sp->groups = kind == 1 ? sp->dim[1] : 1;
        }
        for (int i = 2; i < sp->rank; i++)
            sp->dim[i] = rng_int(1, sp->rank == 5 ? 4 : 6);
        if (group_geom(sp->rank, sp->dim, sp->groups).len >= 3)
            break;
    }
    sp->eps = rng_uniform(1e-5, 1e-2);
}

static void norm_describe(const norm_spec *sp)
{
    char d[64];
    dims_str(sp->rank, sp->dim, d, sizeof d);
    if (sp->group)
        describe_case("group norm %s x %s groups %d epsilon %g bias %s stats %s",
                      sp->backward ? "backward" : "forward", d, sp->groups, sp->eps,
                      sp->with_bias ? "yes" : "NULL", sp->with_stats ? "yes" : "NULL");
    else
        describe_case("%s norm %s x %s normalizedDims %d epsilon %g bias %s stats %s",
                      sp->mode == UDNN_NORM_RMS ? "RMS" : "layer",
                      sp->backward ? "backward" : "forward", d, sp->k, sp->eps,
                      sp->with_bias ? "yes" : "NULL", sp->with_stats ? "yes" : "NULL");
}

/* The first iteration passes bias and statistics, the second neither. */
START_TEST(layer_norm_forward)
{
    seed_fresh(_i);
    norm_spec sp;
    layer_draw(&sp, UDNN_NORM_LAYER, 0);
    sp.with_bias = sp.with_stats = _i == 0;
    norm_describe(&sp);
    run_everywhere(run_norm, &sp);
}
END_TEST

/* RMS norm ignores the bias it is given. */
START_TEST(rms_norm_forward)
{
    seed_fresh(_i);
    norm_spec sp;
    layer_draw(&sp, UDNN_NORM_RMS, 0);
    sp.with_bias = sp.with_stats = 1;
    norm_describe(&sp);
    run_everywhere(run_norm, &sp);
}
END_TEST

/* Layer norm twice, then RMS norm. */
START_TEST(layer_rms_norm_backward)
{
    seed_fresh(_i);
    norm_spec sp;
    layer_draw(&sp, _i < 2 ? UDNN_NORM_LAYER : UDNN_NORM_RMS, 1);
    sp.with_bias = sp.with_stats = 1;
    norm_describe(&sp);
    run_everywhere(run_norm, &sp);
}
END_TEST

/* The loop index picks the grouping; bias and statistics are NULL once each. */
START_TEST(group_norm_forward)
{
    seed_fresh(_i);
    norm_spec sp;
    group_draw(&sp, _i, 0);
    sp.with_bias = _i != 1;
    sp.with_stats = _i != 2;
    norm_describe(&sp);
    run_everywhere(run_norm, &sp);
}
END_TEST

START_TEST(group_norm_backward)
{
    seed_fresh(_i);
    norm_spec sp;
    group_draw(&sp, _i, 1);
    sp.with_bias = sp.with_stats = 1;
    norm_describe(&sp);
    run_everywhere(run_norm, &sp);
}
END_TEST

/* ======================================================================== */
/* LRN on the library                                                       */
/* ======================================================================== */

typedef struct {
    int rank, dim[MAX_RANK];
    lrn_geom g;
    int backward;
} lrn_spec;

static void run_lrn(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const lrn_spec *sp = p;
    const lrn_geom *g = &sp->g;
    udnnLRNDescriptor_t ld;
    OK(udnnCreateLRNDescriptor, &ld);
    OK(udnnSetLRNDescriptor, ld, g->size, g->alpha, g->beta, g->k);
    unsigned n = 0;
    double a = 0, b = 0, k = 0;
    OK(udnnGetLRNDescriptor, ld, &n, &a, &b, &k);
    if (n != g->size || a != g->alpha || b != g->beta || k != g->k)
        FAIL("udnnGetLRNDescriptor gave n %u alpha %g beta %g k %g, set %u %g %g %g", n, a, b, k,
             g->size, g->alpha, g->beta, g->k);

    dtensor x, y;
    dt_init(&x, h, ti, sp->rank, sp->dim, lay);
    dt_init(&y, h, ti, sp->rank, sp->dim, lay);
    dt_fill_random(&x, -2, 2);
    scaling sc = scaling_draw(ti);
    double *fwd = calloc(x.count, sizeof(double));
    ck_assert(fwd);
    lrn_forward(g, x.val, fwd);
    if (!sp->backward) {
        dt_prepare_output(&y, sc.beta);
        OK(udnnLRNCrossChannelForward, h, ld, UDNN_LRN_CROSS_CHANNEL_DIM1, alpha_ptr(&sc),
           x.desc, dt_ptr(&x), beta_ptr(&sc), y.desc, dt_ptr(&y));
        check_output(&y, &sc, fwd, "udnnLRNCrossChannelForward y");
    } else {
        /* y comes from this file's forward, so the backward is judged alone. */
        dtensor dy, dx;
        dt_fill_from(&y, fwd);
        dt_init(&dy, h, ti, sp->rank, sp->dim, lay);
        dt_init(&dx, h, ti, sp->rank, sp->dim, lay);
        dt_fill_random(&dy, -1, 1);
        dt_prepare_output(&dx, sc.beta);
        OK(udnnLRNCrossChannelBackward, h, ld, UDNN_LRN_CROSS_CHANNEL_DIM1, alpha_ptr(&sc),
           y.desc, dt_ptr(&y), dy.desc, dt_ptr(&dy), x.desc, dt_ptr(&x), beta_ptr(&sc),
           dx.desc, dt_ptr(&dx));
        double *op = calloc(x.count, sizeof(double));
        ck_assert(op);
        lrn_backward(g, x.val, dy.val, op);
        check_output(&dx, &sc, op, "udnnLRNCrossChannelBackward dx");
        free(op);
        dt_free(&dy), dt_free(&dx);
    }
    free(fwd);
    dt_free(&x), dt_free(&y);
    udnnDestroyLRNDescriptor(ld);
}

/* Parameters where the normalization matters: alpha * mean(x^2) is of the
 * order of k. The window may be wider than C. The library's cases have at
 * least 12 elements: the backward pass may use the rounded y, whose error
 * the cancellation in dx can amplify past the tolerance in one element, but
 * not in the norm of many. */
static void lrn_draw(lrn_spec *sp, int rank, int backward, int small)
{
    memset(sp, 0, sizeof *sp);
    sp->rank = rank;
    sp->backward = backward;
    do {
        sp->dim[0] = rng_int(1, small ? 2 : 3);
        sp->dim[1] = draw_channels(small ? 5 : 9);
        for (int i = 2; i < rank; i++)
            sp->dim[i] = rng_int(1, small ? 3 : rank == 4 ? 6 : 4);
    } while (!small && count_of(rank, sp->dim) < 12);
    lrn_geom *g = &sp->g;
    g->n = (size_t)sp->dim[0];
    g->c = (size_t)sp->dim[1];
    g->sp = count_of(rank - 2, sp->dim + 2);
    g->size = (unsigned)rng_int(UDNN_LRN_MIN_N, rng_int(0, 1) ? 7 : UDNN_LRN_MAX_N);
    g->alpha = rng_uniform(0.5, 3);
    g->beta = rng_uniform(0.5, 1.5);
    g->k = rng_uniform(1, 2);
    char d[64];
    describe_case("LRN %s x %s n %u alpha %g beta %g k %g", backward ? "backward" : "forward",
                  dims_str(rank, sp->dim, d, sizeof d), g->size, g->alpha, g->beta, g->k);
}

/* 2-D images first, then 3-D. */
START_TEST(lrn_cross_channel_forward)
{
    seed_fresh(_i);
    lrn_spec sp;
    lrn_draw(&sp, 4 + _i, 0, 0);
    run_everywhere(run_lrn, &sp);
}
END_TEST

START_TEST(lrn_cross_channel_backward)
{
    seed_fresh(_i);
    lrn_spec sp;
    lrn_draw(&sp, 4 + _i, 1, 0);
    run_everywhere(run_lrn, &sp);
}
END_TEST

/* ======================================================================== */
/* Dropout on the library                                                   */
/* ======================================================================== */

typedef struct {
    int rank, dim[MAX_RANK];
    float p;
    unsigned long long seed;
} dropout_spec;

typedef struct {
    const dropout_spec *sp;
    udnnDropoutDescriptor_t dd;
    dtensor x, y;
    rawbuf states, reserve;
} dropout_fixture;

/* Checks a result of call t bit for bit against the mask udnn.h's Philox
 * contract draws: dropped elements exactly 0, kept ones in * 1 / (1 - p)
 * within the tolerance (in has no zeros), and the reserve space one byte per
 * element in logical row-major order, 1 kept and 0 dropped. */
static void dropout_expect(dropout_fixture *f, dtensor *out, const dtensor *in, uint64_t t,
                           const char *what)
{
    const dropout_spec *sp = f->sp;
    double *got = dt_download(out, what);
    const unsigned char *mask = raw_pull(&f->reserve, "reserveSpace");
    double *ref = malloc(out->count * sizeof(double)), scale = 1.0 / (1.0 - (double)sp->p);
    ck_assert(ref);
    size_t kept_count = 0;
    for (size_t i = 0; i < out->count; i++) {
        int kept = dropout_kept(sp->seed, t, i, sp->p);
        kept_count += (size_t)kept;
        ref[i] = kept ? in->val[i] * scale : 0.0;
        if (kept ? !(got[i] != 0 && isfinite(got[i])) : got[i] != 0)
            FAIL("%s: element %zu (logical) of forward call %llu is %.9g; the Philox mask says "
                 "it is %s",
                 what, i, (unsigned long long)t, got[i], kept ? "kept" : "dropped");
        if (mask[i] != kept)
            FAIL("reserveSpace byte %zu after forward call %llu is %u; element %zu is %s", i,
                 (unsigned long long)t, mask[i], i, kept ? "kept (1)" : "dropped (0)");
    }
    if (kept_count > 0) /* an all-dropped output was checked exactly above */
        expect_close(got, ref, out->count, out->tol, what);
    free(got), free(ref);
}

static void dropout_forward(dropout_fixture *f, uint64_t t, const char *when)
{
    char what[128];
    dt_poison(&f->y);
    raw_refill(&f->reserve, 0xEE);
    OK(udnnDropoutForward, f->x.h, f->dd, f->x.desc, dt_ptr(&f->x), f->y.desc, dt_ptr(&f->y),
       raw_ptr(&f->reserve), f->reserve.bytes);
    snprintf(what, sizeof what, "udnnDropoutForward y (%s, call %llu)", when,
             (unsigned long long)t);
    dropout_expect(f, &f->y, &f->x, t, what);
    raw_pull(&f->states, "dropout states");
}

/* The call counter: forward calls 0 and 1; a backward (mask of call 1) that
 * must not count; call 2; Set again restarts at 0; Restore keeps the
 * states, so the next call is 1. */
static void run_dropout(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const dropout_spec *sp = p;
    dropout_fixture f;
    memset(&f, 0, sizeof f);
    f.sp = sp;
    dt_init(&f.x, h, ti, sp->rank, sp->dim, lay);
    dt_init(&f.y, h, ti, sp->rank, sp->dim, lay);
    for (size_t i = 0; i < f.x.count; i++) /* no zeros: a kept element stays nonzero */
        f.x.val[i] = round_to(ti->dt, (rng_int(0, 1) ? 1 : -1) * rng_uniform(0.1, 2));
    dt_upload(&f.x);
    size_t state_bytes = 0, reserve_bytes = 0;
    OK(udnnDropoutGetStatesSize, h, &state_bytes);
    OK(udnnDropoutGetReserveSpaceSize, f.x.desc, &reserve_bytes);
    if (reserve_bytes < f.x.count)
        FAIL("udnnDropoutGetReserveSpaceSize gave %zu bytes for %zu elements", reserve_bytes,
             f.x.count);
    raw_init(&f.states, h, state_bytes, 0);
    raw_init(&f.reserve, h, reserve_bytes, 0xEE);
    OK(udnnCreateDropoutDescriptor, &f.dd);
    OK(udnnSetDropoutDescriptor, f.dd, h, sp->p, raw_ptr(&f.states), state_bytes, sp->seed);
    float got_p = -1;
    void *got_states = NULL;
    unsigned long long got_seed = 0;
    OK(udnnGetDropoutDescriptor, f.dd, h, &got_p, &got_states, &got_seed);
    if (got_p != sp->p || got_states != raw_ptr(&f.states) || got_seed != sp->seed)
        FAIL("udnnGetDropoutDescriptor gave dropout %g states %p seed %llu; set %g %p %llu",
             (double)got_p, got_states, got_seed, (double)sp->p, raw_ptr(&f.states), sp->seed);

    dropout_forward(&f, 0, "after Set");
    dropout_forward(&f, 1, "second call");

    dtensor dy, dx;
    dt_init(&dy, h, ti, sp->rank, sp->dim, lay);
    dt_init(&dx, h, ti, sp->rank, sp->dim, lay);
    for (size_t i = 0; i < dy.count; i++)
        dy.val[i] = round_to(ti->dt, (rng_int(0, 1) ? 1 : -1) * rng_uniform(0.1, 2));
    dt_upload(&dy);
    dt_poison(&dx);
    OK(udnnDropoutBackward, h, f.dd, dy.desc, dt_ptr(&dy), dx.desc, dt_ptr(&dx),
       raw_ptr(&f.reserve), f.reserve.bytes);
    dropout_expect(&f, &dx, &dy, 1, "udnnDropoutBackward dx (mask of call 1)");
    dt_expect_unchanged(&dy, "udnnDropoutBackward dy");

    dropout_forward(&f, 2, "after a backward call, which must not count");
    OK(udnnSetDropoutDescriptor, f.dd, h, sp->p, raw_ptr(&f.states), state_bytes, sp->seed);
    dropout_forward(&f, 0, "after Set again");
    OK(udnnRestoreDropoutDescriptor, f.dd, h, sp->p, raw_ptr(&f.states), state_bytes,
       sp->seed);
    dropout_forward(&f, 1, "after Restore, which keeps the states");
    dt_expect_unchanged(&f.x, "udnnDropoutForward x");

    udnnDestroyDropoutDescriptor(f.dd);
    raw_free(&f.states), raw_free(&f.reserve);
    dt_free(&f.x), dt_free(&f.y), dt_free(&dy), dt_free(&dx);
}

/* The loop index picks the probability: random, 0, high, random on a 3-D
 * image; the seed is a full 64-bit value. */
START_TEST(dropout)
{
    seed_fresh(_i);
    dropout_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.rank = _i == 3 ? 5 : 4;
    sp.dim[0] = rng_int(1, 3);
    sp.dim[1] = draw_channels(8);
    for (int i = 2; i < sp.rank; i++)
        sp.dim[i] = rng_int(1, sp.rank == 4 ? 9 : 5);
    sp.p = _i == 1   ? 0.0f
           : _i == 2 ? (float)rng_uniform(0.85, 0.99)
                     : (float)rng_uniform(0.05, 0.8);
    sp.seed = rng_next();
    char d[64];
    describe_case("dropout x %s p %.9g seed %llu", dims_str(sp.rank, sp.dim, d, sizeof d),
                  (double)sp.p, sp.seed);
    run_everywhere(run_dropout, &sp);
}
END_TEST

/* ======================================================================== */
/* ReduceTensor on the library                                              */
/* ======================================================================== */

typedef struct {
    udnnReduceTensorOp_t op;
    int rank, adim[MAX_RANK], cdim[MAX_RANK];
} reduce_spec;

/* Products stay near 1 in magnitude; MUL_NO_ZEROS gets zeros, but every
 * output keeps a nonzero element (the product of none is not defined).
 * MIN, MAX and AMAX get few distinct nonzero values, so that the indices
 * must settle ties (and +v against -v for AMAX). */
static void reduce_fill(const reduce_spec *sp, dtensor *a)
{
    int product = sp->op == UDNN_REDUCE_TENSOR_MUL || sp->op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    int indexed = reduce_has_indices(sp->op);
    for (size_t i = 0; i < a->count; i++) {
        double v = product ? (rng_int(0, 1) ? 1 : -1) * rng_uniform(0.75, 1.25)
                   : indexed ? (rng_int(0, 1) ? 1 : -1) * rng_int(1, 8) / 4.0 /* ties, +-v */
                             : rng_uniform(-2, 2);
        if (sp->op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS && rng_int(0, 3) == 0)
            v = 0;
        a->val[i] = round_to(a->ti->dt, v);
    }
    if (sp->op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS) {
        size_t nc = count_of(sp->rank, sp->cdim);
        unsigned char *live = calloc(nc, 1);
        ck_assert(live);
        for (size_t i = 0; i < a->count; i++) {
            size_t ci, ri;
            reduce_place(sp->rank, sp->adim, sp->cdim, i, &ci, &ri);
            live[ci] |= a->val[i] != 0;
        }
        for (size_t i = 0; i < a->count; i++) {
            size_t ci, ri;
            reduce_place(sp->rank, sp->adim, sp->cdim, i, &ci, &ri);
            if (!live[ci])
                a->val[i] = 0.75, live[ci] = 1;
        }
        free(live);
    }
    dt_upload(a);
}

static void run_reduce(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const reduce_spec *sp = p;
    int indices = reduce_has_indices(sp->op);
    dtensor a, c;
    dt_init(&a, h, ti, sp->rank, sp->adim, lay);
    dt_init(&c, h, ti, sp->rank, sp->cdim, lay);
    reduce_fill(sp, &a);
    scaling sc = scaling_draw(ti);
    dt_prepare_output(&c, sc.beta);

    udnnReduceTensorDescriptor_t rd;
    OK(udnnCreateReduceTensorDescriptor, &rd);
    OK(udnnSetReduceTensorDescriptor, rd, sp->op,
       ti->dt == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT, UDNN_NOT_PROPAGATE_NAN,
       indices ? UDNN_REDUCE_TENSOR_FLATTENED_INDICES : UDNN_REDUCE_TENSOR_NO_INDICES,
       UDNN_32BIT_INDICES);
    size_t ws_bytes = 0, idx_bytes = 0;
    OK(udnnGetReductionWorkspaceSize, h, rd, a.desc, c.desc, &ws_bytes);
    OK(udnnGetReductionIndicesSize, h, rd, a.desc, c.desc, &idx_bytes);
    if (indices && idx_bytes < c.count * sizeof(uint32_t))
        FAIL("udnnGetReductionIndicesSize gave %zu bytes for %zu 32-bit indices", idx_bytes,
             c.count);
    rawbuf ws, idx;
    raw_init(&ws, h, ws_bytes, 0xEE);
    raw_init(&idx, h, indices ? idx_bytes : 0, 0xFF);
    OK(udnnReduceTensor, h, rd, raw_ptr(&idx), idx.bytes, raw_ptr(&ws), ws.bytes,
       alpha_ptr(&sc), a.desc, dt_ptr(&a), beta_ptr(&sc), c.desc, dt_ptr(&c));

    double *op = calloc(c.count, sizeof(double));
    uint32_t *want = calloc(c.count, sizeof(uint32_t));
    ck_assert(op && want);
    reduce_reference(sp->op, sp->rank, sp->adim, sp->cdim, a.val, op, want);
    check_output(&c, &sc, op, "udnnReduceTensor C");
    dt_expect_unchanged(&a, "udnnReduceTensor A");
    raw_pull(&ws, "udnnReduceTensor workspace");
    if (indices) {
        const unsigned char *got = raw_pull(&idx, "udnnReduceTensor indices");
        for (size_t k = 0; k < c.count; k++) {
            uint32_t v;
            memcpy(&v, got + k * sizeof v, sizeof v);
            if (v != want[k])
                FAIL("udnnReduceTensor indices: element %zu of C (logical) is %u, expected %u "
                     "(the first %s in row-major order over the reduced dims; value %.9g)",
                     k, v, want[k], reduce_op_name(sp->op), op[k]);
        }
    }
    free(op), free(want);
    raw_free(&ws), raw_free(&idx);
    udnnDestroyReduceTensorDescriptor(rd);
    dt_free(&a), dt_free(&c);
}

/* Rank 3 to 5; each dimension reduced or kept by a coin, so that any
 * subset (none, all) comes up. Products reduce at most 16 elements. */
static void reduce_draw(reduce_spec *sp, udnnReduceTensorOp_t op)
{
    memset(sp, 0, sizeof *sp);
    sp->op = op;
    sp->rank = rng_int(3, 5);
    int product = op == UDNN_REDUCE_TENSOR_MUL || op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    for (;;) {
        for (int d = 0; d < sp->rank; d++) {
            sp->adim[d] = d == 1 ? draw_channels(7) : rng_int(1, sp->rank == 5 ? 4 : 6);
            sp->cdim[d] = rng_int(0, 1) ? 1 : sp->adim[d];
        }
        size_t reduced = count_of(sp->rank, sp->adim) / count_of(sp->rank, sp->cdim);
        if (!product || reduced <= 16)
            break;
    }
    char a[64], c[64];
    describe_case("reduce %s A %s -> C %s", reduce_op_name(op),
                  dims_str(sp->rank, sp->adim, a, sizeof a),
                  dims_str(sp->rank, sp->cdim, c, sizeof c));
}

/* One op per iteration; MIN, MAX and AMAX with flattened 32-bit indices. */
START_TEST(reduce_tensor)
{
    seed_fresh(_i);
    reduce_spec sp;
    reduce_draw(&sp, (udnnReduceTensorOp_t)_i);
    run_everywhere(run_reduce, &sp);
}
END_TEST

/* ======================================================================== */
/* MatMul on the library                                                    */
/* ======================================================================== */

typedef struct {
    mat_shape a, b, c;
    int batch, m, n, k;
} matmul_spec;

static void mat_dims(const mat_shape *s, int *dim)
{
    int i = 0;
    if (s->rank == 3)
        dim[i++] = s->batch;
    dim[i++] = s->rows;
    dim[i] = s->cols;
}

static void run_matmul(udnnHandle_t h, const dtype_info *ti, layout_t lay, const void *p)
{
    const matmul_spec *sp = p;
    int ad[3], bd[3], cd[3];
    mat_dims(&sp->a, ad), mat_dims(&sp->b, bd), mat_dims(&sp->c, cd);
    dtensor a, b, c;
    dt_init(&a, h, ti, sp->a.rank, ad, lay);
    dt_init(&b, h, ti, sp->b.rank, bd, lay);
    dt_init(&c, h, ti, sp->c.rank, cd, lay);
    dt_fill_random(&a, -1, 1);
    dt_fill_random(&b, -1, 1);
    scaling sc = scaling_draw(ti);
    dt_prepare_output(&c, sc.beta);
    OK(udnnMatMul, h, sp->a.trans, sp->b.trans, alpha_ptr(&sc), a.desc, dt_ptr(&a), b.desc,
       dt_ptr(&b), beta_ptr(&sc), c.desc, dt_ptr(&c));
    double *op = calloc(c.count, sizeof(double));
    ck_assert(op);
    matmul_reference(&sp->a, a.val, &sp->b, b.val, sp->batch, sp->m, sp->n, sp->k, op);
    check_output(&c, &sc, op, "udnnMatMul C");
    free(op);
    dt_free(&a), dt_free(&b), dt_free(&c);
}

static mat_shape mat_operand(int rank, int batch, int rows, int cols, int trans)
{
    mat_shape s = {rank, batch, trans ? cols : rows, trans ? rows : cols, trans};
    return s;
}

/* kind 0: 2-D; 1: batched 3-D; 2: A broadcast (2-D or a batch of 1);
 * 3: B broadcast. The loop index also picks the transposes, all four
 * combinations over the four kinds. */
START_TEST(matmul)
{
    seed_fresh(_i);
    matmul_spec sp;
    memset(&sp, 0, sizeof sp);
    int kind = _i, ta = _i & 1, tb = _i >> 1 & 1;
    sp.m = rng_int(1, 9), sp.n = rng_int(1, 9), sp.k = rng_int(1, 9);
    sp.batch = kind == 0 ? 1 : rng_int(2, 4);
    int rank = kind == 0 ? 2 : 3;
    int bcast_rank = rng_int(2, 3);
    sp.a = mat_operand(kind == 2 ? bcast_rank : rank, kind == 2 ? 1 : sp.batch, sp.m, sp.k, ta);
    sp.b = mat_operand(kind == 3 ? bcast_rank : rank, kind == 3 ? 1 : sp.batch, sp.k, sp.n, tb);
    sp.c = mat_operand(rank, sp.batch, sp.m, sp.n, 0);
    describe_case("matmul %s batch %d (A %d-D batch %d%s, B %d-D batch %d%s) m %d n %d k %d",
                  kind == 0 ? "2-D" : kind == 1 ? "batched" : kind == 2 ? "A broadcast"
                                                                        : "B broadcast",
                  sp.batch, sp.a.rank, sp.a.batch, ta ? " transposed" : "", sp.b.rank,
                  sp.b.batch, tb ? " transposed" : "", sp.m, sp.n, sp.k);
    run_everywhere_in(run_matmul, &sp, kMatrixLayouts);
}
END_TEST

/* ======================================================================== */
/* The oracle against central finite differences and published vectors     */
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

/* Checks an analytic gradient against the numeric one of loss in v. */
static void expect_gradient(loss_fn loss, const void *ctx, double *v, size_t n,
                            const double *analytic, const char *what)
{
    double *numeric = calloc(n, sizeof(double));
    ck_assert(numeric);
    numeric_gradient(loss, ctx, v, n, numeric);
    expect_close(analytic, numeric, n, kFdTol, what);
    free(numeric);
}

/* ---- batch normalization: L = <dy, bn(x)> with the batch's statistics -------- */

typedef struct {
    const bn_geom *g;
    double *x, *scale, *bias, *dy, *y, *mean, *var, *inv;
    double eps;
    size_t nx;
} bn_loss_ctx;

static double bn_loss(const void *p)
{
    const bn_loss_ctx *c = p;
    bn_stats(c->g, c->x, c->eps, c->mean, c->var, c->inv);
    bn_apply(c->g, c->x, c->scale, c->bias, c->mean, c->inv, c->y);
    return dot(c->dy, c->y, c->nx);
}

START_TEST(oracle_batchnorm)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    for (int m = 0; m < 2; m++) {
        bn_spec sp;
        bn_draw(&sp, BN_BACKWARD, kBnModes[m], 1);
        bn_geom g = bn_geom_of(sp.mode, sp.rank, sp.dim);
        size_t nx = count_of(sp.rank, sp.dim), ns = bn_slots(&g);
        bn_loss_ctx c = {&g,
                         random_vector(nx, -2, 2),
                         random_vector(ns, -1.5, 1.5),
                         random_vector(ns, -1, 1),
                         random_vector(nx, -1, 1),
                         calloc(nx, sizeof(double)),
                         calloc(ns, sizeof(double)),
                         calloc(ns, sizeof(double)),
                         calloc(ns, sizeof(double)),
                         sp.eps,
                         nx};
        double *dx = calloc(nx, sizeof(double)), *ds = calloc(ns, sizeof(double)),
               *db = calloc(ns, sizeof(double));
        ck_assert(c.y && c.mean && c.var && c.inv && dx && ds && db);
        bn_stats(&g, c.x, sp.eps, c.mean, c.var, c.inv);
        bn_grad(&g, c.x, c.dy, c.scale, c.mean, c.inv, dx, ds, db);
        expect_gradient(bn_loss, &c, c.x, nx, dx, "oracle batchnorm dx vs finite differences");
        expect_gradient(bn_loss, &c, c.scale, ns, ds,
                        "oracle batchnorm dscale vs finite differences");
        expect_gradient(bn_loss, &c, c.bias, ns, db,
                        "oracle batchnorm dbias vs finite differences");
        free(c.x), free(c.scale), free(c.bias), free(c.dy), free(c.y), free(c.mean);
        free(c.var), free(c.inv), free(dx), free(ds), free(db);
    }
}
END_TEST

/* ---- layer, RMS and group norm ------------------------------------------------------ */

typedef struct {
    const norm_geom *g;
    double *x, *scale, *bias, *dy, *y, *mean, *inv;
    double eps;
    size_t nx;
} norm_loss_ctx;

static double norm_loss(const void *p)
{
    const norm_loss_ctx *c = p;
    norm_stats(c->g, c->x, c->eps, c->mean, c->inv);
    norm_apply(c->g, c->x, c->scale, c->bias, c->mean, c->inv, c->y);
    return dot(c->dy, c->y, c->nx);
}

static void oracle_norm_case(const norm_spec *sp)
{
    norm_describe(sp);
    norm_geom g = norm_geom_of(sp);
    size_t nx = count_of(sp->rank, sp->dim);
    norm_loss_ctx c = {&g,
                       random_vector(nx, -2, 2),
                       random_vector(g.nscale, -1.5, 1.5),
                       random_vector(g.nscale, -1, 1),
                       random_vector(nx, -1, 1),
                       calloc(nx, sizeof(double)),
                       calloc(g.rows, sizeof(double)),
                       calloc(g.rows, sizeof(double)),
                       sp->eps,
                       nx};
    double *dx = calloc(nx, sizeof(double)), *ds = calloc(g.nscale, sizeof(double)),
           *db = calloc(g.nscale, sizeof(double));
    ck_assert(c.y && c.mean && c.inv && dx && ds && db);
    norm_stats(&g, c.x, sp->eps, c.mean, c.inv);
    norm_grad(&g, c.x, c.dy, c.scale, c.mean, c.inv, dx, ds, db);
    expect_gradient(norm_loss, &c, c.x, nx, dx, "oracle norm dx vs finite differences");
    expect_gradient(norm_loss, &c, c.scale, g.nscale, ds,
                    "oracle norm dscale vs finite differences");
    if (!g.rms)
        expect_gradient(norm_loss, &c, c.bias, g.nscale, db,
                        "oracle norm dbias vs finite differences");
    free(c.x), free(c.scale), free(c.bias), free(c.dy), free(c.y), free(c.mean), free(c.inv);
    free(dx), free(ds), free(db);
}

START_TEST(oracle_norm)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    norm_spec sp;
    layer_draw(&sp, UDNN_NORM_LAYER, 1);
    oracle_norm_case(&sp);
    layer_draw(&sp, UDNN_NORM_RMS, 1);
    oracle_norm_case(&sp);
    for (int kind = 0; kind < 3; kind++) {
        group_draw(&sp, kind, 1);
        oracle_norm_case(&sp);
    }
}
END_TEST

/* ---- LRN ------------------------------------------------------------------------------ */

typedef struct {
    const lrn_geom *g;
    double *x, *dy, *y;
    size_t nx;
} lrn_loss_ctx;

static double lrn_loss(const void *p)
{
    const lrn_loss_ctx *c = p;
    lrn_forward(c->g, c->x, c->y);
    return dot(c->dy, c->y, c->nx);
}

START_TEST(oracle_lrn)
{
    seed_fresh(_i);
    snprintf(g_where, sizeof g_where, "oracle, double, no backend");
    for (int rank = 4; rank <= 5; rank++) {
        lrn_spec sp;
        lrn_draw(&sp, rank, 1, 1);
        size_t nx = count_of(rank, sp.dim);
        lrn_loss_ctx c = {&sp.g, random_vector(nx, -2, 2), random_vector(nx, -1, 1),
                          calloc(nx, sizeof(double)), nx};
        double *dx = calloc(nx, sizeof(double));
        ck_assert(c.y && dx);
        lrn_backward(&sp.g, c.x, c.dy, dx);
        expect_gradient(lrn_loss, &c, c.x, nx, dx, "oracle LRN dx vs finite differences");
        free(c.x), free(c.dy), free(c.y), free(dx);
    }
}
END_TEST

/* ---- Philox and the dropout threshold ---------------------------------------------- */

/* The known-answer vectors Random123 publishes for philox4x32_10. */
START_TEST(oracle_philox)
{
    seed_fresh(0);
    snprintf(g_where, sizeof g_where, "oracle, no backend");
    static const struct {
        uint32_t ctr[4], key[2], out[4];
    } kat[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
        {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
         {0xffffffffu, 0xffffffffu},
         {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
        {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
         {0xa4093822u, 0x299f31d0u},
         {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
    };
    for (size_t v = 0; v < sizeof kat / sizeof kat[0]; v++) {
        uint32_t out[4];
        philox4x32_10(kat[v].ctr, kat[v].key, out);
        for (int w = 0; w < 4; w++)
            if (out[w] != kat[v].out[w])
                FAIL("philox4x32_10 known answer %zu word %d is %08x, expected %08x", v, w,
                     out[w], kat[v].out[w]);
    }
    /* p = 0 keeps everything; otherwise about 1 - p of the elements survive. */
    unsigned long long seed = rng_next();
    float p = (float)rng_uniform(0.1, 0.9);
    size_t kept = 0, n = 1 << 16;
    for (size_t i = 0; i < n; i++) {
        if (!dropout_kept(seed, 7, i, 0.0f))
            FAIL("dropout with p = 0 drops element %zu", i);
        kept += (size_t)dropout_kept(seed, 7, i, p);
    }
    double rate = (double)kept / (double)n;
    if (fabs(rate - (1 - p)) > 0.02)
        FAIL("dropout p %g keeps %.4f of the elements, expected about %.4f", (double)p, rate,
             1 - (double)p);
}
END_TEST

/* ---- hand-computed values ------------------------------------------------------------------ */

/* Small cases worked out on paper: reduce with ties (the first wins), AMAX
 * over signs, MUL_NO_ZEROS; LRN on one channel; a 2 x 2 matmul. */
START_TEST(oracle_handmade)
{
    seed_fresh(0);
    snprintf(g_where, sizeof g_where, "oracle, no backend");
    /* a is 1 x 2 x 3: rows {3, -5, 3} and {-4, 0, 4}; reduce the last dim. */
    const int adim[3] = {1, 2, 3}, cdim[3] = {1, 2, 1};
    const double a[6] = {3, -5, 3, -4, 0, 4};
    static const struct {
        udnnReduceTensorOp_t op;
        double c[2];
        uint32_t idx[2];
    } want[] = {
        {UDNN_REDUCE_TENSOR_ADD, {1, 0}, {0, 0}},
        {UDNN_REDUCE_TENSOR_MUL, {-45, 0}, {0, 0}},
        {UDNN_REDUCE_TENSOR_MIN, {-5, -4}, {1, 0}},
        {UDNN_REDUCE_TENSOR_MAX, {3, 4}, {0, 2}},
        {UDNN_REDUCE_TENSOR_AMAX, {5, 4}, {1, 0}},
        {UDNN_REDUCE_TENSOR_AVG, {1.0 / 3, 0}, {0, 0}},
        {UDNN_REDUCE_TENSOR_NORM1, {11, 8}, {0, 0}},
        {UDNN_REDUCE_TENSOR_NORM2, {sqrt(43.0), sqrt(32.0)}, {0, 0}},
        {UDNN_REDUCE_TENSOR_MUL_NO_ZEROS, {-45, -16}, {0, 0}},
    };
    for (size_t v = 0; v < sizeof want / sizeof want[0]; v++) {
        double c[2];
        uint32_t idx[2];
        reduce_reference(want[v].op, 3, adim, cdim, a, c, idx);
        for (int k = 0; k < 2; k++) {
            if (fabs(c[k] - want[v].c[k]) > 1e-15)
                FAIL("reduce %s element %d is %g, expected %g", reduce_op_name(want[v].op), k,
                     c[k], want[v].c[k]);
            if (reduce_has_indices(want[v].op) && idx[k] != want[v].idx[k])
                FAIL("reduce %s index %d is %u, expected %u", reduce_op_name(want[v].op), k,
                     idx[k], want[v].idx[k]);
        }
    }
    /* LRN, one channel, n 3: s = 1 + 2/3 * x^2, x = 1.5: y = 1.5 / 2.5^0.5. */
    lrn_geom g = {1, 1, 1, 3, 2.0, 0.5, 1.0};
    double x = 1.5, y;
    lrn_forward(&g, &x, &y);
    if (fabs(y - 1.5 / sqrt(2.5)) > 1e-15)
        FAIL("LRN of 1.5 is %.17g, expected %.17g", y, 1.5 / sqrt(2.5));
    /* [1 2; 3 4] * [5 6; 7 8]^T = [17 23; 39 53] */
    mat_shape ma = {2, 1, 2, 2, 0}, mb = {2, 1, 2, 2, 1};
    const double av[4] = {1, 2, 3, 4}, bv[4] = {5, 6, 7, 8}, cw[4] = {17, 23, 39, 53};
    double cv[4];
    matmul_reference(&ma, av, &mb, bv, 1, 2, 2, 2, cv);
    for (int i = 0; i < 4; i++)
        if (cv[i] != cw[i])
            FAIL("matmul element %d is %g, expected %g", i, cv[i], cw[i]);
}
END_TEST

/* ======================================================================== */

static Suite *independent_part2_suite(void)
{
    Suite *s = suite_create("independent_part2");
    TCase *bn = tcase_create("batchnorm");
    tcase_add_loop_test(bn, batchnorm_forward_training, 0, 4);
    tcase_add_loop_test(bn, batchnorm_forward_inference, 0, 2);
    tcase_add_loop_test(bn, batchnorm_backward, 0, 4);
    TCase *norm = tcase_create("norm");
    tcase_add_loop_test(norm, layer_norm_forward, 0, 2);
    tcase_add_test(norm, rms_norm_forward);
    tcase_add_loop_test(norm, layer_rms_norm_backward, 0, 3);
    tcase_add_loop_test(norm, group_norm_forward, 0, 3);
    tcase_add_loop_test(norm, group_norm_backward, 0, 3);
    TCase *lrn = tcase_create("lrn");
    tcase_add_loop_test(lrn, lrn_cross_channel_forward, 0, 2);
    tcase_add_loop_test(lrn, lrn_cross_channel_backward, 0, 2);
    TCase *drop = tcase_create("dropout");
    tcase_add_loop_test(drop, dropout, 0, 4);
    TCase *reduce = tcase_create("reduce");
    tcase_add_loop_test(reduce, reduce_tensor, 0, 9);
    TCase *mm = tcase_create("matmul");
    tcase_add_loop_test(mm, matmul, 0, 4);
    TCase *oracle = tcase_create("oracle");
    tcase_add_test(oracle, oracle_batchnorm);
    tcase_add_test(oracle, oracle_norm);
    tcase_add_test(oracle, oracle_lrn);
    tcase_add_test(oracle, oracle_philox);
    tcase_add_test(oracle, oracle_handmade);
    TCase *all[] = {bn, norm, lrn, drop, reduce, mm, oracle};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        tcase_set_timeout(all[i], 60);
        suite_add_tcase(s, all[i]);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(independent_part2_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
