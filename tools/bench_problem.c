/* bench_problem.c - building a problem: options common to every family,
 * the operand buffers with their descriptors and initial host content. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"

int bench_fail(bench_problem *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
    return -1;
}

int bench_fail_udnn(bench_problem *p, udnnStatus_t st, const char *what)
{
    char msg[384];
    udnnGetLastErrorString(msg, sizeof msg);
    return bench_fail(p, "%s: %s (%s)", what, msg[0] ? msg : udnnGetErrorString(st),
                      udnnGetErrorString(st));
}

/* ---- typed options -------------------------------------------------------------------- */

int bench_opt_real(bench_problem *p, const char *key, double dflt, double *out)
{
    const char *v = bench_arg(p->args, key);
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    *out = strtod(v, &end);
    if (end == v || *end != '\0' || errno)
        return bench_fail(p, "--%s %s: not a number", key, v);
    return 0;
}

int bench_opt_int(bench_problem *p, const char *key, long dflt, long *out)
{
    const char *v = bench_arg(p->args, key);
    if (v == NULL) {
        *out = dflt;
        return 0;
    }
    char *end;
    errno = 0;
    *out = strtol(v, &end, 10);
    if (end == v || *end != '\0' || errno)
        return bench_fail(p, "--%s %s: not an integer", key, v);
    return 0;
}

int bench_opt_choice(bench_problem *p, const char *key, const char *const *names, int count,
                     int dflt)
{
    const char *v = bench_arg(p->args, key);
    if (v == NULL) return dflt;
    for (int i = 0; i < count; i++)
        if (names[i] != NULL && strcmp(names[i], v) == 0) return i;
    char list[256] = "";
    for (int i = 0; i < count; i++)
        if (names[i] != NULL) {
            strncat(list, list[0] ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, names[i], sizeof list - strlen(list) - 1);
        }
    return bench_fail(p, "--%s %s: expected one of %s", key, v, list);
}

int bench_opt_ints(bench_problem *p, const char *key, int *out, int max)
{
    const char *v = bench_arg(p->args, key);
    if (v == NULL) return 0;
    int n = 0;
    const char *s = v;
    while (*s) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s || n == max || (*end != ',' && *end != '\0'))
            return bench_fail(p, "--%s %s: expected up to %d comma-separated integers", key, v,
                              max);
        out[n++] = (int)x;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* ---- the main shape --------------------------------------------------------------------- */

int bench_main_dims(bench_problem *p, int dims[UDNN_DIM_MAX])
{
    int n = bench_opt_ints(p, "dims", dims, UDNN_DIM_MAX);
    if (n != 0) return n;
    static const char *const keys[5] = {"n", "c", "d", "h", "w"};
    long v[5];
    const int has_d = bench_arg_has(p->args, "d");
    for (int i = 0; i < 5; i++)
        if (bench_opt_int(p, keys[i], 1, &v[i]) < 0) return -1;
    int rank = 0;
    for (int i = 0; i < 5; i++)
        if (i != 2 || has_d) dims[rank++] = (int)v[i];
    return rank;
}

void bench_dims_str(char *out, size_t n, int rank, const int dims[])
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < rank && len < n; i++) {
        int w = snprintf(out + len, n - len, "%s%d", i ? "x" : "", dims[i]);
        if (w > 0) len += (size_t)w;
    }
}

bench_scalar bench_scalar_of(udnnDataType_t t, double v)
{
    bench_scalar s;
    if (t == UDNN_DATA_DOUBLE) s.d = v;
    else s.f = (float)v;
    return s;
}

/* ---- buffers ------------------------------------------------------------------------------ */

int bench_buf_index(const bench_problem *p, const char *role)
{
    for (int i = 0; i < p->nbufs; i++)
        if (strcmp(p->buf[i].role, role) == 0) return i;
    return -1;
}

static bench_buf *new_buf(bench_problem *p, const char *role, bench_kind kind, bench_io io)
{
    if (p->nbufs == BENCH_MAX_BUFS) {
        bench_fail(p, "too many buffers");
        return NULL;
    }
    bench_buf *b = &p->buf[p->nbufs];
    memset(b, 0, sizeof *b);
    snprintf(b->role, sizeof b->role, "%s", role);
    b->kind = kind;
    b->io = io;
    b->lo = -1.0;
    b->hi = 1.0;
    return b;
}

/* The format of role: --ROLE-layout, else --layout. */
static int role_format(bench_problem *p, const char *role, udnnTensorFormat_t *fmt)
{
    char key[48];
    snprintf(key, sizeof key, "%s-layout", role);
    static const char *const names[] = {"nchw", "nhwc"};
    int f = bench_opt_choice(p, key, names, 2, (int)p->layout);
    if (f < 0) return -1;
    *fmt = (udnnTensorFormat_t)f;
    return 0;
}

static size_t span_bytes(int rank, const int dims[], const int64_t strides[], udnnDataType_t t)
{
    size_t span = 1;
    for (int i = 0; i < rank; i++) span += (size_t)(dims[i] - 1) * (size_t)strides[i];
    return span * bench_dtype_size(t);
}

int bench_add_tensor(bench_problem *p, const char *role, udnnDataType_t dtype, int rank,
                     const int dims[], bench_io io)
{
    /* "name:opts" names the buffer name and reads the options of opts */
    char name[16];
    const char *colon = strchr(role, ':');
    snprintf(name, sizeof name, "%.*s", colon ? (int)(colon - role) : 15, role);
    if (colon) role = colon + 1;
    bench_buf *b = new_buf(p, name, BENCH_TENSOR, io);
    if (b == NULL) return -1;
    char key[48];
    snprintf(key, sizeof key, "%s-dims", role);
    int given = bench_opt_ints(p, key, b->dims, UDNN_DIM_MAX);
    if (given < 0) return -1;
    b->rank = given ? given : rank;
    if (!given) memcpy(b->dims, dims, sizeof(int) * (size_t)rank);

    snprintf(key, sizeof key, "%s-dtype", role);
    const char *dt = bench_arg(p->args, key);
    b->dtype = dtype;
    if (dt != NULL) {
        if (bench_dtype_parse(dt) < 0) return bench_fail(p, "--%s %s: not a data type", key, dt);
        b->dtype = (udnnDataType_t)bench_dtype_parse(dt);
    }

    snprintf(key, sizeof key, "%s-strides", role);
    int ns = 0;
    int strides[UDNN_DIM_MAX];
    if ((ns = bench_opt_ints(p, key, strides, UDNN_DIM_MAX)) < 0) return -1;
    if (ns > 0) {
        if (ns != b->rank)
            return bench_fail(p, "--%s has %d strides; %s has %d dimensions", key, ns, role,
                              b->rank);
        for (int i = 0; i < ns; i++) b->strides[i] = strides[i];
        b->strided = 1;
    } else {
        udnnTensorFormat_t fmt;
        if (role_format(p, role, &fmt) < 0) return -1;
        bench_packed_strides(fmt, b->rank, b->dims, b->strides);
        for (int i = 0; i < b->rank; i++) strides[i] = (int)b->strides[i];
    }

    udnnStatus_t st = udnnCreateTensorDescriptor(&b->desc);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetTensorNdDescriptor(b->desc, b->dtype, b->rank, b->dims, strides);
    if (st != UDNN_STATUS_SUCCESS) {
        char what[64];
        snprintf(what, sizeof what, "tensor %s", role);
        p->nbufs++; /* so that bench_problem_free destroys the descriptor */
        return bench_fail_udnn(p, st, what);
    }
    b->bytes = span_bytes(b->rank, b->dims, b->strides, b->dtype);
    return p->nbufs++;
}

int bench_add_filter(bench_problem *p, const char *role, int rank, const int dims[], bench_io io)
{
    bench_buf *b = new_buf(p, role, BENCH_FILTER, io);
    if (b == NULL) return -1;
    udnnTensorFormat_t fmt;
    if (role_format(p, role, &fmt) < 0) return -1;
    b->rank = rank;
    b->dtype = p->dtype;
    memcpy(b->dims, dims, sizeof(int) * (size_t)rank);
    bench_packed_strides(fmt, rank, b->dims, b->strides);
    udnnStatus_t st = udnnCreateFilterDescriptor(&b->fdesc);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetFilterNdDescriptor(b->fdesc, b->dtype, fmt, rank, b->dims);
    if (st != UDNN_STATUS_SUCCESS) {
        p->nbufs++;
        return bench_fail_udnn(p, st, "filter");
    }
    b->bytes = span_bytes(rank, b->dims, b->strides, b->dtype);
    return p->nbufs++;
}

int bench_add_raw(bench_problem *p, const char *role, size_t bytes, bench_io io, int lo, int hi)
{
    bench_buf *b = new_buf(p, role, BENCH_RAW, io);
    if (b == NULL) return -1;
    b->exact = 1;
    b->dtype = UDNN_DATA_INT8;
    b->rank = 1;
    b->dims[0] = (int)bytes;
    b->strides[0] = 1;
    b->bytes = bytes;
    b->lo = lo;
    b->hi = hi;
    return p->nbufs++;
}

double bench_logical_bytes(const bench_buf *b)
{
    return (double)bench_count(b->rank, b->dims) * (double)bench_dtype_size(b->dtype);
}

/* ---- the problem ---------------------------------------------------------------------------- */

/* Draws the content every buffer starts from: inputs and outputs the op
 * reads get data, the rest (and every gap between elements) is poisoned
 * with 0xFF bytes, a NaN in every float type, so that a missed element
 * fails the check. */
static int fill_host(bench_problem *p)
{
    for (int i = 0; i < p->nbufs; i++) {
        bench_buf *b = &p->buf[i];
        if ((b->host = malloc(b->bytes ? b->bytes : 1)) == NULL)
            return bench_fail(p, "out of host memory (%zu bytes for %s)", b->bytes, b->role);
        memset(b->host, 0xff, b->bytes);
        if (b->io == BENCH_OUT && !b->blend) continue;
        bench_fill_uniform(b->host, b->dtype, b->rank, b->dims, b->strides, b->lo, b->hi,
                           b->kind == BENCH_RAW);
    }
    return 0;
}

int bench_problem_init(bench_problem *p, const bench_family *f, bench_args *args)
{
    memset(p, 0, sizeof *p);
    p->family = f;
    p->args = args;
    const char *dt = bench_arg(args, "dtype");
    int t = dt ? bench_dtype_parse(dt) : UDNN_DATA_FLOAT;
    if (t < 0) return bench_fail(p, "--dtype %s: expected f32, f64, f16 or bf16", dt);
    p->dtype = (udnnDataType_t)t;
    static const char *const layouts[] = {"nchw", "nhwc"};
    int l = bench_opt_choice(p, "layout", layouts, 2, 0);
    if (l < 0) return -1;
    p->layout = (udnnTensorFormat_t)l;
    p->tolerance = bench_tolerance(p->dtype);
    /* no peer, and no buffer for any of its roles, until setup says */
    bench_peer_info *pi = &p->peer;
    pi->src = pi->weights = pi->dst = pi->scale = pi->bias = pi->mean = pi->var = -1;
    pi->z = pi->diff_src = pi->diff_dst = pi->run_mean = pi->run_var = -1;
    pi->save_mean = pi->save_inv = pi->dscale = pi->dbias = -1;
    pi->algo = -1;
    pi->groups = 1;
    pi->alpha = pi->alpha2 = 1.0;
    if (f->setup(p) < 0) return -1;
    return fill_host(p);
}

void bench_problem_free(bench_problem *p)
{
    if (p->family != NULL && p->family->teardown != NULL) p->family->teardown(p);
    for (int i = 0; i < p->nbufs; i++) {
        if (p->buf[i].desc) udnnDestroyTensorDescriptor(p->buf[i].desc);
        if (p->buf[i].fdesc) udnnDestroyFilterDescriptor(p->buf[i].fdesc);
        free(p->buf[i].host);
    }
    p->nbufs = 0;
    p->family = NULL;
}
