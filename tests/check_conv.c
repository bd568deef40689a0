/* check_conv.c - the convolution family: descriptors, forward, backward
 * data, backward filter, backward bias, the fused conv-bias-activation, and
 * the algorithm queries, on every backend, type and layout over the shapes
 * of tests/inputs/conv_shapes.txt. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* ---- the shape table ------------------------------------------------------------ */

/* A problem; spatial arrays are d, h, w, and a 2-D problem has d = 1 with
 * pad 0, stride 1 and dilation 1 there. */
typedef struct {
    int nsp; /* spatial dims: 2 or 3 */
    int n, c, k, g;
    int in[3], f[3], pad[3], stride[3], dil[3], out[3];
    udnnConvolutionMode_t mode;
    char text[160];
} conv_shape;

#define MAX_SHAPES 64
static conv_shape shapes[MAX_SHAPES];
static int nshapes;

/* Parses "A" or "AxB" or "AxBxC" into v[]; returns the count, -1 if bad. */
static int parse_list(const char *s, int v[3])
{
    for (int n = 0; n < 3;) {
        char *end;
        long x = strtol(s, &end, 10);
        if (end == s) return -1;
        v[n++] = (int)x;
        if (*end == '\0') return n;
        if (*end != 'x') return -1;
        s = end + 1;
    }
    return -1;
}

/* The output size of one spatial dim, as cuDNN defines it. */
static int out_size(int in, int f, int pad, int stride, int dil)
{
    return 1 + (in + 2 * pad - ((f - 1) * dil + 1)) / stride;
}

/* Fills the geometry of s from lists of nsp values (pad/stride/dil lists
 * of 1 value apply to every dim); returns 0 when the problem is valid. */
static int shape_geometry(conv_shape *s, int nsp, const int *in, const int *f, const int *pad,
                          int npad, const int *stride, int nstride, const int *dil, int ndil)
{
    if (nsp < 2 || nsp > 3) return -1;
    if ((npad != 1 && npad != nsp) || (nstride != 1 && nstride != nsp) ||
        (ndil != 1 && ndil != nsp))
        return -1;
    s->nsp = nsp;
    int off = 3 - nsp;
    for (int j = 0; j < 3; j++) {
        s->in[j] = s->f[j] = s->stride[j] = s->dil[j] = 1;
        s->pad[j] = 0;
    }
    for (int j = 0; j < nsp; j++) {
        s->in[off + j] = in[j];
        s->f[off + j] = f[j];
        s->pad[off + j] = pad[npad == 1 ? 0 : j];
        s->stride[off + j] = stride[nstride == 1 ? 0 : j];
        s->dil[off + j] = dil[ndil == 1 ? 0 : j];
    }
    for (int j = 0; j < 3; j++) {
        if (s->in[j] < 1 || s->f[j] < 1 || s->pad[j] < 0 || s->stride[j] < 1 || s->dil[j] < 1)
            return -1;
        if ((s->f[j] - 1) * s->dil[j] + 1 > s->in[j] + 2 * s->pad[j]) return -1;
        s->out[j] = out_size(s->in[j], s->f[j], s->pad[j], s->stride[j], s->dil[j]);
    }
    if (s->g < 1 || s->c % s->g != 0 || s->k % s->g != 0 || s->n < 1) return -1;
    return 0;
}

/* One line of the table: 1 for a problem, 0 for none, -1 when malformed. */
static int parse_shape(char *line, conv_shape *s)
{
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    memset(s, 0, sizeof *s);
    snprintf(s->text, sizeof s->text, "%.*s", (int)sizeof s->text - 1, line);
    for (size_t len = strlen(s->text); len > 0 && strchr(" \t\r\n", s->text[len - 1]); len--)
        s->text[len - 1] = '\0';
    s->n = s->c = s->k = s->g = 1;
    s->mode = UDNN_CROSS_CORRELATION;
    int in[3] = {0}, f[3] = {0}, pad[3] = {0}, stride[3] = {1}, dil[3] = {1};
    int nin = 0, nf = 0, npad = 1, nstride = 1, ndil = 1, words = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t\r\n", &save); tok;
         tok = strtok_r(NULL, " \t\r\n", &save)) {
        char *eq = strchr(tok, '=');
        if (eq == NULL) return -1;
        *eq = '\0';
        const char *key = tok, *val = eq + 1;
        words++;
        if (strcmp(key, "n") == 0)
            s->n = atoi(val);
        else if (strcmp(key, "c") == 0)
            s->c = atoi(val);
        else if (strcmp(key, "k") == 0)
            s->k = atoi(val);
        else if (strcmp(key, "g") == 0)
            s->g = atoi(val);
        else if (strcmp(key, "in") == 0)
            nin = parse_list(val, in);
        else if (strcmp(key, "f") == 0)
            nf = parse_list(val, f);
        else if (strcmp(key, "pad") == 0)
            npad = parse_list(val, pad);
        else if (strcmp(key, "stride") == 0)
            nstride = parse_list(val, stride);
        else if (strcmp(key, "dil") == 0)
            ndil = parse_list(val, dil);
        else if (strcmp(key, "mode") == 0 && strcmp(val, "conv") == 0)
            s->mode = UDNN_CONVOLUTION;
        else if (strcmp(key, "mode") == 0 && strcmp(val, "xcorr") == 0)
            s->mode = UDNN_CROSS_CORRELATION;
        else
            return -1;
    }
    if (words == 0) return 0;
    if (nin != nf) return -1;
    return shape_geometry(s, nin, in, f, pad, npad, stride, nstride, dil, ndil) == 0 ? 1 : -1;
}

static int load_shapes(void)
{
    char path[1024], line[512];
    tu_input_path("conv_shapes.txt", path, sizeof path);
    FILE *fp = fopen(path, "r");
    if (fp == NULL) {
        fprintf(stderr, "check_conv: cannot open %s\n", path);
        return -1;
    }
    for (int lineno = 1; fgets(line, sizeof line, fp) != NULL; lineno++) {
        int r = nshapes < MAX_SHAPES ? parse_shape(line, &shapes[nshapes]) : -1;
        if (r < 0) {
            fprintf(stderr, "check_conv: %s:%d: malformed or too many problems\n", path, lineno);
            fclose(fp);
            return -1;
        }
        nshapes += r;
    }
    fclose(fp);
    return nshapes > 0 ? 0 : -1;
}

/* ---- one problem's tensors --------------------------------------------------------- */

enum { DIR_FWD, DIR_BWD_DATA, DIR_BWD_FILTER, DIR_COUNT };
static const char *const dir_names[DIR_COUNT] = {"forward", "backward data", "backward filter"};
static const int algo_counts[DIR_COUNT] = {8, 6, 7};

/* Inputs x, w, dy and the outputs y, dx, dw of the three directions. */
typedef struct {
    conv_shape s;
    udnnHandle_t h;
    udnnBackend_t backend;
    udnnDataType_t dtype;
    tu_layout layout;
    tu_tensor x, dy, y, dx;
    tu_filter w, dw;
    udnnConvolutionDescriptor_t conv;
} conv_case;

/* dims of n, c, spatial... for the shape's rank */
static int tensor_dims(const conv_shape *s, int a, int b, const int sp[3], int dims[5])
{
    dims[0] = a;
    dims[1] = b;
    for (int j = 0; j < s->nsp; j++) dims[2 + j] = sp[3 - s->nsp + j];
    return s->nsp + 2;
}

/* HALF data computes in HALF under NHWC and in FLOAT otherwise, so both
 * compute types the descriptor allows for it are exercised. */
static udnnDataType_t compute_type_for(udnnDataType_t t, tu_layout layout)
{
    if (t == UDNN_DATA_DOUBLE) return UDNN_DATA_DOUBLE;
    if (t == UDNN_DATA_HALF && layout == TU_NHWC) return UDNN_DATA_HALF;
    return UDNN_DATA_FLOAT;
}

static void case_init(conv_case *c, udnnBackend_t be, const conv_shape *s, udnnDataType_t t,
                      tu_layout layout)
{
    memset(c, 0, sizeof *c);
    c->s = *s;
    c->backend = be;
    c->h = tu_handle(be);
    c->dtype = t;
    c->layout = layout;
    int xd[5], wd[5], yd[5];
    int nb = tensor_dims(s, s->n, s->c, s->in, xd);
    tensor_dims(s, s->k, s->c / s->g, s->f, wd);
    tensor_dims(s, s->n, s->k, s->out, yd);
    udnnTensorFormat_t ffmt = layout == TU_NHWC ? UDNN_TENSOR_NHWC : UDNN_TENSOR_NCHW;
    tu_tensor_init(&c->x, c->h, t, nb, xd, layout);
    tu_tensor_init(&c->dx, c->h, t, nb, xd, layout);
    tu_tensor_init(&c->dy, c->h, t, nb, yd, layout);
    tu_tensor_init(&c->y, c->h, t, nb, yd, layout);
    tu_filter_init(&c->w, c->h, t, ffmt, nb, wd);
    tu_filter_init(&c->dw, c->h, t, ffmt, nb, wd);
    int off = 3 - s->nsp;
    tu_ok(udnnCreateConvolutionDescriptor(&c->conv));
    tu_ok(udnnSetConvolutionNdDescriptor(c->conv, s->nsp, s->pad + off, s->stride + off,
                                         s->dil + off, s->mode, compute_type_for(t, layout)));
    tu_ok(udnnSetConvolutionGroupCount(c->conv, s->g));
}

static void case_free(conv_case *c)
{
    tu_tensor_free(&c->x);
    tu_tensor_free(&c->dx);
    tu_tensor_free(&c->dy);
    tu_tensor_free(&c->y);
    tu_filter_free(&c->w);
    tu_filter_free(&c->dw);
    udnnDestroyConvolutionDescriptor(c->conv);
    udnnDestroy(c->h);
}

static void fill_filter(tu_filter *f, double lo, double hi)
{
    for (int64_t i = 0; i < f->count; i++) tu_fset(f, i, tu_uniform(lo, hi));
    tu_buf_upload(&f->buf);
}

static void filter_values(const tu_filter *f, double *out)
{
    for (int64_t i = 0; i < f->count; i++) out[i] = tu_fget(f, i);
}

static double *values_of(const tu_tensor *t)
{
    double *v = malloc((size_t)t->count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tu_values(t, v);
    return v;
}

static double *filter_values_of(const tu_filter *f)
{
    double *v = malloc((size_t)f->count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    filter_values(f, v);
    return v;
}

static double *zeros(int64_t n)
{
    double *v = calloc((size_t)n, sizeof *v);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* As tu_check_tensor, for a filter output. */
static void check_filter(tu_filter *f, const double *ref, const char *what)
{
    tu_buf_download(&f->buf);
    ck_assert_msg(tu_buf_guards_intact(&f->buf), "%s: a write outside the filter", what);
    double *out = filter_values_of(f);
    for (int64_t i = 0; i < f->count; i++)
        if (isnan(out[i]) && !isnan(ref[i])) {
            free(out);
            ck_abort_msg("%s: element %lld was not written (seed %llu)", what, (long long)i,
                         (unsigned long long)tu_seed_used());
        }
    double err = tu_rel_error(out, ref, f->count);
    free(out);
    ck_assert_msg(err <= tu_tolerance(f->dtype), "%s: relative error %.3g over %.3g (seed %llu)",
                  what, err, tu_tolerance(f->dtype), (unsigned long long)tu_seed_used());
}

/* ---- the expectation -------------------------------------------------------------------- */

/* Row-major index of (a, b, d, h, w) in 5-D dims; a 2-D tensor's logical
 * index is the same with d = 0 and dims[2] = 1. */
static int64_t at5(const int dims[5], int a, int b, int d, int h, int w)
{
    return (((int64_t)a * dims[1] + b) * dims[2] + d) * dims[3] * dims[4] + (int64_t)h * dims[4] +
           w;
}

/* Enumerates every product of the convolution once, from the definition
 *   y(n, k, o) = sum over c, t of x(n, g*C/g + c, o*stride - pad + t*dil) * w(k, c, t')
 * with t' = t (cross-correlation) or f - 1 - t (convolution), and scatters
 * it into whichever of y, dx, dw is wanted (the others may be NULL). */
static void expect_all(const conv_shape *s, const double *x, const double *w, const double *dy,
                       double *y, double *dx, double *dw)
{
    const int xd[5] = {s->n, s->c, s->in[0], s->in[1], s->in[2]};
    const int wd[5] = {s->k, s->c / s->g, s->f[0], s->f[1], s->f[2]};
    const int yd[5] = {s->n, s->k, s->out[0], s->out[1], s->out[2]};
    const int cpg = s->c / s->g, kpg = s->k / s->g;
    for (int n = 0; n < s->n; n++)
        for (int k = 0; k < s->k; k++)
            for (int c = 0; c < cpg; c++)
                for (int od = 0; od < s->out[0]; od++)
                    for (int oh = 0; oh < s->out[1]; oh++)
                        for (int ow = 0; ow < s->out[2]; ow++)
                            for (int t = 0; t < s->f[0]; t++)
                                for (int r = 0; r < s->f[1]; r++)
                                    for (int q = 0; q < s->f[2]; q++) {
                                        int id = od * s->stride[0] - s->pad[0] + t * s->dil[0];
                                        int ih = oh * s->stride[1] - s->pad[1] + r * s->dil[1];
                                        int iw = ow * s->stride[2] - s->pad[2] + q * s->dil[2];
                                        if (id < 0 || id >= s->in[0] || ih < 0 || ih >= s->in[1] ||
                                            iw < 0 || iw >= s->in[2])
                                            continue;
                                        int flip = s->mode == UDNN_CONVOLUTION;
                                        int ft = flip ? s->f[0] - 1 - t : t;
                                        int fr = flip ? s->f[1] - 1 - r : r;
                                        int fq = flip ? s->f[2] - 1 - q : q;
                                        int64_t xi = at5(xd, n, (k / kpg) * cpg + c, id, ih, iw);
                                        int64_t wi = at5(wd, k, c, ft, fr, fq);
                                        int64_t yi = at5(yd, n, k, od, oh, ow);
                                        if (y) y[yi] += x[xi] * w[wi];
                                        if (dx) dx[xi] += dy[yi] * w[wi];
                                        if (dw) dw[wi] += dy[yi] * x[xi];
                                    }
}

/* ---- the three directions, generically ----------------------------------------------------- */

/* One row of a perf result, whatever the direction. */
typedef struct {
    int algo;
    udnnStatus_t status;
    float time;
    size_t memory;
    udnnDeterminism_t determinism;
    udnnMathType_t math;
} perf_row;

enum { QUERY_V7, QUERY_FIND, QUERY_FIND_EX };

#define COPY_PERF(rows, perf, n)                                                                   \
    for (int i_ = 0; i_ < (n); i_++) {                                                             \
        (rows)[i_].algo = (int)(perf)[i_].algo;                                                    \
        (rows)[i_].status = (perf)[i_].status;                                                     \
        (rows)[i_].time = (perf)[i_].time;                                                         \
        (rows)[i_].memory = (perf)[i_].memory;                                                     \
        (rows)[i_].determinism = (perf)[i_].determinism;                                           \
        (rows)[i_].math = (perf)[i_].mathType;                                                     \
    }

/* Runs one algorithm query of a direction; FindEx writes the output and
 * measures with the workspace given (ws may be NULL). */
static udnnStatus_t query_ws(conv_case *c, int dir, int kind, int requested, perf_row rows[8],
                             int *returned, void *ws, size_t ws_bytes)
{
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    *returned = 0;
    if (dir == DIR_FWD) {
        udnnConvolutionFwdAlgoPerf_t perf[8];
        if (kind == QUERY_V7)
            st = udnnGetConvolutionForwardAlgorithm_v7(c->h, c->x.desc, c->w.desc, c->conv,
                                                       c->y.desc, requested, returned, perf);
        else if (kind == QUERY_FIND)
            st = udnnFindConvolutionForwardAlgorithm(c->h, c->x.desc, c->w.desc, c->conv, c->y.desc,
                                                     requested, returned, perf);
        else
            st = udnnFindConvolutionForwardAlgorithmEx(
                c->h, c->x.desc, tu_buf_ptr(&c->x.buf), c->w.desc, tu_buf_ptr(&c->w.buf), c->conv,
                c->y.desc, tu_buf_ptr(&c->y.buf), requested, returned, perf, ws, ws_bytes);
        if (st == UDNN_STATUS_SUCCESS) COPY_PERF(rows, perf, *returned);
    } else if (dir == DIR_BWD_DATA) {
        udnnConvolutionBwdDataAlgoPerf_t perf[8];
        if (kind == QUERY_V7)
            st = udnnGetConvolutionBackwardDataAlgorithm_v7(c->h, c->w.desc, c->dy.desc, c->conv,
                                                            c->dx.desc, requested, returned, perf);
        else if (kind == QUERY_FIND)
            st = udnnFindConvolutionBackwardDataAlgorithm(c->h, c->w.desc, c->dy.desc, c->conv,
                                                          c->dx.desc, requested, returned, perf);
        else
            st = udnnFindConvolutionBackwardDataAlgorithmEx(
                c->h, c->w.desc, tu_buf_ptr(&c->w.buf), c->dy.desc, tu_buf_ptr(&c->dy.buf), c->conv,
                c->dx.desc, tu_buf_ptr(&c->dx.buf), requested, returned, perf, ws, ws_bytes);
        if (st == UDNN_STATUS_SUCCESS) COPY_PERF(rows, perf, *returned);
    } else {
        udnnConvolutionBwdFilterAlgoPerf_t perf[8];
        if (kind == QUERY_V7)
            st = udnnGetConvolutionBackwardFilterAlgorithm_v7(
                c->h, c->x.desc, c->dy.desc, c->conv, c->dw.desc, requested, returned, perf);
        else if (kind == QUERY_FIND)
            st = udnnFindConvolutionBackwardFilterAlgorithm(c->h, c->x.desc, c->dy.desc, c->conv,
                                                            c->dw.desc, requested, returned, perf);
        else
            st = udnnFindConvolutionBackwardFilterAlgorithmEx(
                c->h, c->x.desc, tu_buf_ptr(&c->x.buf), c->dy.desc, tu_buf_ptr(&c->dy.buf), c->conv,
                c->dw.desc, tu_buf_ptr(&c->dw.buf), requested, returned, perf, ws, ws_bytes);
        if (st == UDNN_STATUS_SUCCESS) COPY_PERF(rows, perf, *returned);
    }
    return st;
}

static udnnStatus_t query(conv_case *c, int dir, int kind, int requested, perf_row rows[8],
                          int *returned)
{
    return query_ws(c, dir, kind, requested, rows, returned, NULL, 0);
}

static udnnStatus_t workspace_size(conv_case *c, int dir, int algo, size_t *size)
{
    switch (dir) {
    case DIR_FWD:
        return udnnGetConvolutionForwardWorkspaceSize(c->h, c->x.desc, c->w.desc, c->conv,
                                                      c->y.desc, algo, size);
    case DIR_BWD_DATA:
        return udnnGetConvolutionBackwardDataWorkspaceSize(c->h, c->w.desc, c->dy.desc, c->conv,
                                                           c->dx.desc, algo, size);
    default:
        return udnnGetConvolutionBackwardFilterWorkspaceSize(c->h, c->x.desc, c->dy.desc, c->conv,
                                                             c->dw.desc, algo, size);
    }
}

/* Runs a direction into its output (y, dx or dw) with a fitting workspace. */
static udnnStatus_t run_dir(conv_case *c, int dir, int algo, double alpha, double beta)
{
    tu_scalar a = tu_scalar_of(c->dtype, alpha), b = tu_scalar_of(c->dtype, beta);
    size_t ws_bytes = 0;
    void *ws = NULL;
    tu_ok(workspace_size(c, dir, algo, &ws_bytes));
    if (ws_bytes > 0) tu_ok(udnnMalloc(c->h, &ws, ws_bytes));
    udnnStatus_t st;
    switch (dir) {
    case DIR_FWD:
        st = udnnConvolutionForward(c->h, &a, c->x.desc, tu_buf_ptr(&c->x.buf), c->w.desc,
                                    tu_buf_ptr(&c->w.buf), c->conv, algo, ws, ws_bytes, &b,
                                    c->y.desc, tu_buf_ptr(&c->y.buf));
        break;
    case DIR_BWD_DATA:
        st = udnnConvolutionBackwardData(c->h, &a, c->w.desc, tu_buf_ptr(&c->w.buf), c->dy.desc,
                                         tu_buf_ptr(&c->dy.buf), c->conv, algo, ws, ws_bytes, &b,
                                         c->dx.desc, tu_buf_ptr(&c->dx.buf));
        break;
    default:
        st = udnnConvolutionBackwardFilter(c->h, &a, c->x.desc, tu_buf_ptr(&c->x.buf), c->dy.desc,
                                           tu_buf_ptr(&c->dy.buf), c->conv, algo, ws, ws_bytes, &b,
                                           c->dw.desc, tu_buf_ptr(&c->dw.buf));
        break;
    }
    if (ws != NULL) udnnFree(c->h, ws);
    return st;
}

/* The algorithms _v7 says can run this problem; returns their count. */
static int runnable_algos(conv_case *c, int dir, int algos[8])
{
    perf_row rows[8];
    int returned = 0, n = 0;
    tu_ok(query(c, dir, QUERY_V7, 8, rows, &returned));
    for (int i = 0; i < returned; i++)
        if (rows[i].status == UDNN_STATUS_SUCCESS) algos[n++] = rows[i].algo;
    ck_assert_msg(n > 0, "%s: no %s algorithm on the %s backend", c->s.text, dir_names[dir],
                  tu_backend_name(c->backend));
    return n;
}

static int64_t output_count(const conv_case *c, int dir)
{
    return dir == DIR_FWD ? c->y.count : dir == DIR_BWD_DATA ? c->dx.count : c->dw.count;
}

/* Poisons the direction's output (beta 0), or fills it with random values
 * into old[] (beta != 0). */
static void prepare_output(conv_case *c, int dir, double beta, double *old)
{
    if (dir == DIR_BWD_FILTER) {
        if (beta == 0.0)
            tu_buf_poison(&c->dw.buf);
        else {
            fill_filter(&c->dw, -1.0, 1.0);
            filter_values(&c->dw, old);
        }
        return;
    }
    tu_tensor *t = dir == DIR_FWD ? &c->y : &c->dx;
    if (beta == 0.0)
        tu_buf_poison(&t->buf);
    else {
        tu_fill_uniform(t, -1.0, 1.0);
        tu_values(t, old);
    }
}

static void check_output(conv_case *c, int dir, const double *expected, const char *what)
{
    if (dir == DIR_BWD_FILTER)
        check_filter(&c->dw, expected, what);
    else
        tu_check_tensor(dir == DIR_FWD ? &c->y : &c->dx, expected, what);
}

/* The outputs' blends: alpha and beta per case, beta 0 on a poisoned
 * output and beta != 0 on a prefilled one. */
static const struct {
    double alpha, beta;
} blends[4] = {{1.0, 0.0}, {0.75, 0.0}, {1.5, -0.5}, {-1.0, 1.0}};

/* ---- forward, backward data, backward filter over the table ------------------------------- */

START_TEST(test_directions)
{
    tu_seed_fresh();
    const conv_shape *s = &shapes[_i / 12];
    udnnDataType_t t = tu_float_types[(_i / 3) % 4];
    tu_layout layout = (tu_layout)(_i % 3);
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        conv_case c;
        case_init(&c, be[b], s, t, layout);
        int od[UDNN_DIM_MAX];
        tu_ok(udnnGetConvolutionNdForwardOutputDim(c.conv, c.x.desc, c.w.desc, c.x.nb, od));
        for (int i = 0; i < c.y.nb; i++) ck_assert_int_eq(od[i], c.y.dims[i]);

        tu_fill_uniform(&c.x, -1.0, 1.0);
        tu_fill_uniform(&c.dy, -1.0, 1.0);
        fill_filter(&c.w, -1.0, 1.0);
        double *x = values_of(&c.x), *dy = values_of(&c.dy), *w = filter_values_of(&c.w);
        double *ref[DIR_COUNT] = {zeros(c.y.count), zeros(c.dx.count), zeros(c.dw.count)};
        expect_all(s, x, w, dy, ref[DIR_FWD], ref[DIR_BWD_DATA], ref[DIR_BWD_FILTER]);

        for (int dir = 0; dir < DIR_COUNT; dir++) {
            double alpha = blends[(_i + dir) % 4].alpha, beta = blends[(_i + dir) % 4].beta;
            int64_t n = output_count(&c, dir);
            double *old = zeros(n), *expected = zeros(n);
            int algos[8], na = runnable_algos(&c, dir, algos);
            for (int a = 0; a < na; a++) {
                prepare_output(&c, dir, beta, old);
                for (int64_t i = 0; i < n; i++)
                    expected[i] = alpha * ref[dir][i] + (beta != 0.0 ? beta * old[i] : 0.0);
                tu_ok(run_dir(&c, dir, algos[a], alpha, beta));
                char what[320];
                snprintf(what, sizeof what, "%s algo %d on %s %s %s alpha %g beta %g [%s]",
                         dir_names[dir], algos[a], tu_backend_name(be[b]), tu_dtype_name(t),
                         tu_layout_name(layout), alpha, beta, s->text);
                check_output(&c, dir, expected, what);
            }
            free(old);
            free(expected);
        }
        for (int dir = 0; dir < DIR_COUNT; dir++) free(ref[dir]);
        free(x);
        free(dy);
        free(w);
        case_free(&c);
    }
}
END_TEST

/* ---- finite differences in double ---------------------------------------------------------- */

/* L = sum(dy . conv(x, w)) through the library's forward. */
static double loss(conv_case *c, int algo)
{
    tu_ok(run_dir(c, DIR_FWD, algo, 1.0, 0.0));
    tu_download(&c->y);
    double sum = 0.0;
    for (int64_t i = 0; i < c->y.count; i++) sum += tu_get(&c->dy, i) * tu_get(&c->y, i);
    return sum;
}

/* Even _i: the gradient of L in x against backward data; odd: in w
 * against backward filter. */
START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    const conv_shape *s = &shapes[_i / 2];
    const int by_filter = _i % 2;
    const double step = 1e-6;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        conv_case c;
        case_init(&c, be[b], s, UDNN_DATA_DOUBLE, TU_NCHW);
        tu_fill_uniform(&c.x, -1.0, 1.0);
        tu_fill_uniform(&c.dy, -1.0, 1.0);
        fill_filter(&c.w, -1.0, 1.0);
        int fwd_algos[8], grad_algos[8];
        runnable_algos(&c, DIR_FWD, fwd_algos);
        int dir = by_filter ? DIR_BWD_FILTER : DIR_BWD_DATA;
        runnable_algos(&c, dir, grad_algos);
        tu_ok(run_dir(&c, dir, grad_algos[0], 1.0, 0.0));

        int64_t n = by_filter ? c.w.count : c.x.count;
        double *analytic = zeros(n), *numeric = zeros(n);
        if (by_filter) {
            tu_buf_download(&c.dw.buf);
            filter_values(&c.dw, analytic);
        } else {
            tu_download(&c.dx);
            tu_values(&c.dx, analytic);
        }
        for (int64_t i = 0; i < n; i++) {
            double v = by_filter ? tu_fget(&c.w, i) : tu_get(&c.x, i), l[2];
            for (int side = 0; side < 2; side++) {
                double moved = v + (side ? -step : step);
                if (by_filter) {
                    tu_fset(&c.w, i, moved);
                    tu_buf_upload(&c.w.buf);
                } else {
                    tu_set(&c.x, i, moved);
                    tu_upload(&c.x);
                }
                l[side] = loss(&c, fwd_algos[0]);
            }
            numeric[i] = (l[0] - l[1]) / (2 * step);
            if (by_filter)
                tu_fset(&c.w, i, v);
            else
                tu_set(&c.x, i, v);
        }
        double err = tu_rel_error(analytic, numeric, n);
        ck_assert_msg(err < 1e-6, "%s on %s: finite differences differ by %.3g [%s] (seed %llu)",
                      dir_names[dir], tu_backend_name(be[b]), err, s->text,
                      (unsigned long long)tu_seed_used());
        free(analytic);
        free(numeric);
        case_free(&c);
    }
}
END_TEST

/* ---- values worked out by hand ----------------------------------------------------------------
 */

static conv_shape tiny_shape(int pad, int stride, udnnConvolutionMode_t mode)
{
    conv_shape s;
    memset(&s, 0, sizeof s);
    s.n = s.c = s.k = s.g = 1;
    s.mode = mode;
    const int in[2] = {3, 3}, f[2] = {2, 2};
    ck_assert_int_eq(shape_geometry(&s, 2, in, f, &pad, 1, &stride, 1, (const int[]){1}, 1), 0);
    snprintf(s.text, sizeof s.text, "3x3 input, 2x2 filter, pad %d, stride %d, %s", pad, stride,
             mode == UDNN_CONVOLUTION ? "conv" : "xcorr");
    return s;
}

/* x = 1..9 (3x3), w = 1..4 (2x2), dy all ones unless given. */
static void tiny_run(udnnBackend_t be, udnnDataType_t t, int pad, int stride,
                     udnnConvolutionMode_t mode, const double *y_exp, const double *dx_exp,
                     const double *dw_exp)
{
    conv_shape s = tiny_shape(pad, stride, mode);
    conv_case c;
    case_init(&c, be, &s, t, TU_NCHW);
    for (int i = 0; i < 9; i++) tu_set(&c.x, i, i + 1);
    for (int i = 0; i < 4; i++) tu_fset(&c.w, i, i + 1);
    for (int i = 0; i < c.dy.count; i++) tu_set(&c.dy, i, 1.0);
    tu_upload(&c.x);
    tu_upload(&c.dy);
    tu_buf_upload(&c.w.buf);
    const double *expected[DIR_COUNT] = {y_exp, dx_exp, dw_exp};
    for (int dir = 0; dir < DIR_COUNT; dir++) {
        if (expected[dir] == NULL) continue;
        int algos[8];
        runnable_algos(&c, dir, algos);
        tu_ok(run_dir(&c, dir, algos[0], 1.0, 0.0));
        char what[256];
        snprintf(what, sizeof what, "%s of %s on %s %s", dir_names[dir], s.text,
                 tu_backend_name(be), tu_dtype_name(t));
        check_output(&c, dir, expected[dir], what);
    }
    case_free(&c);
}

START_TEST(test_hand_computed)
{
    udnnDataType_t t = tu_float_types[_i];
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        /* y(0,0) = 1*1 + 2*2 + 4*3 + 5*4 = 37, and so on; dx and dw for dy = 1 */
        tiny_run(be[b], t, 0, 1, UDNN_CROSS_CORRELATION, (const double[]){37, 47, 67, 77},
                 (const double[]){1, 3, 2, 4, 10, 6, 3, 7, 4}, (const double[]){12, 16, 24, 28});
        /* the flipped filter 4 3 / 2 1: y(0,0) = 1*4 + 2*3 + 4*2 + 5*1 = 23 */
        tiny_run(be[b], t, 0, 1, UDNN_CONVOLUTION, (const double[]){23, 33, 53, 63},
                 (const double[]){4, 7, 3, 6, 10, 4, 2, 3, 1}, (const double[]){28, 24, 16, 12});
        /* pad 1, stride 2: y(0,0) sees only x(0,0) * w(1,1) = 4; y(1,1) = 5+12+24+36 */
        tiny_run(be[b], t, 1, 2, UDNN_CROSS_CORRELATION, (const double[]){4, 18, 36, 77}, NULL,
                 NULL);

        /* backward bias of dy = 1..8 over 1x2x2x2: 1+2+3+4, 5+6+7+8 */
        udnnHandle_t h = tu_handle(be[b]);
        tu_tensor dy, db;
        tu_tensor_init(&dy, h, t, 4, (const int[]){1, 2, 2, 2}, TU_NCHW);
        tu_tensor_init(&db, h, t, 4, (const int[]){1, 2, 1, 1}, TU_NCHW);
        for (int i = 0; i < 8; i++) tu_set(&dy, i, i + 1);
        tu_upload(&dy);
        tu_scalar one = tu_scalar_of(t, 1.0), zero = tu_scalar_of(t, 0.0);
        tu_ok(udnnConvolutionBackwardBias(h, &one, dy.desc, tu_buf_ptr(&dy.buf), &zero, db.desc,
                                          tu_buf_ptr(&db.buf)));
        tu_check_tensor(&db, ((const double[]){10, 26}), "backward bias of 1..8");
        tu_tensor_free(&dy);
        tu_tensor_free(&db);
        udnnDestroy(h);
    }
}
END_TEST

/* ---- backward bias ------------------------------------------------------------------------------
 */

START_TEST(test_backward_bias)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i / 6];
    tu_layout layout = (tu_layout)((_i / 2) % 3);
    int rank = 4 + _i % 2;
    double alpha = blends[_i % 4].alpha, beta = blends[_i % 4].beta;
    const int dims4[4] = {2, 5, 4, 3}, dims5[5] = {2, 3, 3, 4, 2};
    const int *dims = rank == 4 ? dims4 : dims5;
    int bdims[5] = {1, dims[1], 1, 1, 1};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor dy, db;
        tu_tensor_init(&dy, h, t, rank, dims, layout);
        tu_tensor_init(&db, h, t, rank, bdims, layout);
        tu_fill_uniform(&dy, -1.0, 1.0);
        double expected[5] = {0};
        int64_t per_channel = dy.count / dims[1];
        for (int k = 0; k < dims[1]; k++) {
            double sum = 0.0;
            for (int n = 0; n < dims[0]; n++)
                for (int64_t j = 0; j < per_channel / dims[0]; j++)
                    sum += tu_get(&dy, ((int64_t)n * dims[1] + k) * (per_channel / dims[0]) + j);
            expected[k] = sum;
        }
        tu_blend_drawn(expected, alpha, beta, &db);
        tu_scalar a = tu_scalar_of(t, alpha), bb = tu_scalar_of(t, beta);
        tu_ok(udnnConvolutionBackwardBias(h, &a, dy.desc, tu_buf_ptr(&dy.buf), &bb, db.desc,
                                          tu_buf_ptr(&db.buf)));
        char what[128];
        snprintf(what, sizeof what, "backward bias on %s %s %s rank %d alpha %g beta %g",
                 tu_backend_name(bk), tu_dtype_name(t), tu_layout_name(layout), rank, alpha, beta);
        tu_check_tensor(&db, expected, what);
        tu_tensor_free(&dy);
        tu_tensor_free(&db);
    }
}
END_TEST

/* ---- convolution, bias, activation
 * ---------------------------------------------------------------- */

/* Fills x, w, bias (and z unless it stays poisoned) and writes the
 * expected act(alpha1 * conv + alpha2 * z + bias); returns the number of
 * nonzero expected values. */
static int64_t cba_inputs(conv_case *c, tu_tensor *bias, tu_tensor *z, int fill_z,
                          udnnActivationMode_t mode, double alpha1, double alpha2, double *expected)
{
    const conv_shape *s = &c->s;
    tu_fill_uniform(&c->x, -1.0, 1.0);
    fill_filter(&c->w, -1.0, 1.0);
    tu_fill_uniform(bias, -1.0, 1.0);
    if (fill_z) tu_fill_uniform(z, -1.0, 1.0);
    double *x = values_of(&c->x), *w = filter_values_of(&c->w), *zv = values_of(z);
    double *conv = zeros(c->y.count);
    expect_all(s, x, w, NULL, conv, NULL, NULL);
    int64_t per_k = c->y.count / (s->n * s->k), nonzero = 0;
    for (int64_t i = 0; i < c->y.count; i++) {
        double v = alpha1 * conv[i] + tu_get(bias, (i / per_k) % s->k);
        if (alpha2 != 0.0) v += alpha2 * zv[i];
        expected[i] = mode == UDNN_ACTIVATION_RELU && v < 0.0 ? 0.0 : v;
        nonzero += expected[i] != 0.0;
    }
    free(x);
    free(w);
    free(zv);
    free(conv);
    return nonzero;
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias). Under NCHW z is y
 * itself; under STRIDED alpha2 is 0 and z holds NaN, which must not be
 * read. */
START_TEST(test_bias_activation)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i / 6];
    udnnActivationMode_t mode = (_i / 3) % 2 ? UDNN_ACTIVATION_RELU : UDNN_ACTIVATION_IDENTITY;
    tu_layout layout = (tu_layout)(_i % 3);
    const conv_shape *s = &shapes[_i % nshapes];
    const double alpha1 = 0.75, alpha2 = layout == TU_STRIDED ? 0.0 : -0.5;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        conv_case c;
        case_init(&c, be[b], s, t, layout);
        int bdims[5] = {1, s->k, 1, 1, 1};
        tu_tensor bias, zbuf;
        tu_tensor_init(&bias, c.h, t, c.y.nb, bdims, TU_NCHW);
        tu_tensor_init(&zbuf, c.h, t, c.y.nb, c.y.dims, layout);
        tu_tensor *z = layout == TU_NCHW ? &c.y : &zbuf;
        double *expected = zeros(c.y.count);
        /* a ReLU of a few outputs may zero them all: draw again */
        for (int tries = 0;
             cba_inputs(&c, &bias, z, layout != TU_STRIDED, mode, alpha1, alpha2, expected) == 0;
             tries++)
            ck_assert_msg(tries < 20, "no nonzero output in 20 draws");
        udnnActivationDescriptor_t act;
        tu_ok(udnnCreateActivationDescriptor(&act));
        tu_ok(udnnSetActivationDescriptor(act, mode, UDNN_NOT_PROPAGATE_NAN, 0.0));
        int algos[8];
        runnable_algos(&c, DIR_FWD, algos);
        /* the fused op takes the forward's workspace for its algorithm */
        size_t ws_bytes = 0;
        void *ws = NULL;
        tu_ok(workspace_size(&c, DIR_FWD, algos[0], &ws_bytes));
        if (ws_bytes > 0) tu_ok(udnnMalloc(c.h, &ws, ws_bytes));
        tu_scalar a1 = tu_scalar_of(t, alpha1), a2 = tu_scalar_of(t, alpha2);
        tu_ok(udnnConvolutionBiasActivationForward(
            c.h, &a1, c.x.desc, tu_buf_ptr(&c.x.buf), c.w.desc, tu_buf_ptr(&c.w.buf), c.conv,
            algos[0], ws, ws_bytes, &a2, z->desc, tu_buf_ptr(&z->buf), bias.desc,
            tu_buf_ptr(&bias.buf), act, c.y.desc, tu_buf_ptr(&c.y.buf)));
        if (ws != NULL) udnnFree(c.h, ws);
        char what[320];
        snprintf(what, sizeof what, "conv-bias-%s on %s %s %s%s [%s]",
                 mode == UDNN_ACTIVATION_RELU ? "relu" : "identity", tu_backend_name(be[b]),
                 tu_dtype_name(t), tu_layout_name(layout), z == &c.y ? " z = y" : "", s->text);
        tu_check_tensor(&c.y, expected, what);
        udnnDestroyActivationDescriptor(act);
        free(expected);
        tu_tensor_free(&bias);
        tu_tensor_free(&zbuf);
        case_free(&c);
    }
}
END_TEST

/* ---- descriptors that work
 * ----------------------------------------------------------------------- */

START_TEST(test_desc_defaults)
{
    udnnConvolutionDescriptor_t d;
    tu_ok(udnnCreateConvolutionDescriptor(&d));
    int groups = 0;
    udnnMathType_t math = UDNN_FMA_MATH;
    tu_ok(udnnGetConvolutionGroupCount(d, &groups));
    tu_ok(udnnGetConvolutionMathType(d, &math));
    ck_assert_int_eq(groups, 1);
    ck_assert_int_eq(math, UDNN_DEFAULT_MATH);
    tu_assert_fails(
        udnnGetConvolution2dDescriptor(d, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        UDNN_STATUS_BAD_PARAM, "udnnGetConvolution2dDescriptor", "convDesc", "has not been set");
    /* groups and math type survive a later Set, as in cuDNN */
    tu_ok(udnnSetConvolutionGroupCount(d, 3));
    tu_ok(udnnSetConvolutionMathType(d, UDNN_TENSOR_OP_MATH));
    tu_ok(udnnSetConvolution2dDescriptor(d, 0, 0, 1, 1, 1, 1, UDNN_CONVOLUTION, UDNN_DATA_FLOAT));
    tu_ok(udnnGetConvolutionGroupCount(d, &groups));
    tu_ok(udnnGetConvolutionMathType(d, &math));
    ck_assert_int_eq(groups, 3);
    ck_assert_int_eq(math, UDNN_TENSOR_OP_MATH);
    tu_ok(udnnDestroyConvolutionDescriptor(d));
    tu_ok(udnnDestroyConvolutionDescriptor(NULL));
}
END_TEST

START_TEST(test_desc_round_trip)
{
    udnnConvolutionDescriptor_t d;
    tu_ok(udnnCreateConvolutionDescriptor(&d));
    tu_ok(udnnSetConvolution2dDescriptor(d, 1, 2, 3, 4, 5, 6, UDNN_CONVOLUTION, UDNN_DATA_HALF));
    int v[6];
    udnnConvolutionMode_t mode;
    udnnDataType_t type;
    tu_ok(
        udnnGetConvolution2dDescriptor(d, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &mode, &type));
    for (int i = 0; i < 6; i++) ck_assert_int_eq(v[i], i + 1);
    ck_assert_int_eq(mode, UDNN_CONVOLUTION);
    ck_assert_int_eq(type, UDNN_DATA_HALF);

    int len = 0, pad[3] = {-7, -7, -7}, stride[3] = {-7, -7, -7}, dil[3] = {-7, -7, -7};
    tu_ok(udnnGetConvolutionNdDescriptor(d, 3, &len, pad, stride, dil, &mode, &type));
    ck_assert_int_eq(len, 2);
    ck_assert(pad[0] == 1 && pad[1] == 2 && pad[2] == -7);
    ck_assert(stride[0] == 3 && stride[1] == 4 && dil[0] == 5 && dil[1] == 6);

    const int p3[3] = {0, 1, 2}, s3[3] = {1, 2, 3}, d3[3] = {2, 1, 1};
    tu_ok(
        udnnSetConvolutionNdDescriptor(d, 3, p3, s3, d3, UDNN_CROSS_CORRELATION, UDNN_DATA_DOUBLE));
    int pad1[3] = {-7, -7, -7}, stride1[3] = {-7, -7, -7}, dil1[3] = {-7, -7, -7};
    tu_ok(udnnGetConvolutionNdDescriptor(d, 1, &len, pad1, stride1, dil1, &mode, &type));
    ck_assert_int_eq(len, 3); /* the full length, though only one was asked for */
    ck_assert(pad1[0] == 0 && stride1[0] == 1 && dil1[0] == 2);
    ck_assert(pad1[1] == -7 && stride1[1] == -7 && dil1[1] == -7);
    ck_assert_int_eq(mode, UDNN_CROSS_CORRELATION);
    ck_assert_int_eq(type, UDNN_DATA_DOUBLE);
    tu_ok(udnnGetConvolutionNdDescriptor(d, 0, &len, NULL, NULL, NULL, NULL, NULL));
    tu_ok(udnnGetConvolutionNdDescriptor(d, 3, NULL, pad, stride, dil, NULL, NULL));
    for (int i = 0; i < 3; i++) ck_assert(pad[i] == p3[i] && stride[i] == s3[i] && dil[i] == d3[i]);
    tu_assert_fails(udnnGetConvolution2dDescriptor(d, v, v, v, v, v, v, &mode, &type),
                    UDNN_STATUS_BAD_PARAM, "udnnGetConvolution2dDescriptor", "convDesc");
    udnnDestroyConvolutionDescriptor(d);
}
END_TEST

/* Output shapes by hand, and for every problem of the table. */
START_TEST(test_output_dims)
{
    udnnTensorDescriptor_t x;
    udnnFilterDescriptor_t w;
    udnnConvolutionDescriptor_t d;
    tu_ok(udnnCreateTensorDescriptor(&x));
    tu_ok(udnnCreateFilterDescriptor(&w));
    tu_ok(udnnCreateConvolutionDescriptor(&d));
    int n, c, h, wd;
    /* 7x7, 3x3, pad 1, stride 2: 1 + (7 + 2 - 3) / 2 = 4 */
    tu_ok(udnnSetTensor4dDescriptor(x, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 2, 6, 7, 7));
    tu_ok(udnnSetFilter4dDescriptor(w, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 5, 3, 3, 3));
    tu_ok(udnnSetConvolutionGroupCount(d, 2));
    tu_ok(udnnSetConvolution2dDescriptor(d, 1, 1, 2, 2, 1, 1, UDNN_CONVOLUTION, UDNN_DATA_FLOAT));
    tu_assert_fails(udnnGetConvolution2dForwardOutputDim(d, x, w, &n, &c, &h, &wd),
                    UDNN_STATUS_BAD_PARAM, "filterDesc", "output channels");
    tu_ok(udnnSetFilter4dDescriptor(w, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 4, 3, 3, 3));
    tu_ok(udnnGetConvolution2dForwardOutputDim(d, x, w, &n, &c, &h, &wd));
    ck_assert(n == 2 && c == 4 && h == 4 && wd == 4);
    /* dilation 3 spans 7: 1 + (7 + 0 - 7) / 1 = 1; 2 + 0 - 7 in h would not fit */
    tu_ok(udnnSetConvolution2dDescriptor(d, 0, 2, 1, 1, 3, 3, UDNN_CONVOLUTION, UDNN_DATA_FLOAT));
    tu_ok(udnnGetConvolution2dForwardOutputDim(d, x, w, &n, &c, &h, &wd));
    ck_assert(h == 1 && wd == 5);
    /* 3-D, still 2 groups: 5x6x7, filter 3x1x2, pad 1x0x0, stride 2x1x3 -> 3x6x2 */
    const int xd[5] = {1, 2, 5, 6, 7}, fd[5] = {4, 1, 3, 1, 2};
    const int pad[3] = {1, 0, 0}, stride[3] = {2, 1, 3}, dil[3] = {1, 1, 1};
    int out[5];
    tu_ok(udnnSetTensorNdDescriptorEx(x, UDNN_TENSOR_NHWC, UDNN_DATA_DOUBLE, 5, xd));
    tu_ok(udnnSetFilterNdDescriptor(w, UDNN_DATA_DOUBLE, UDNN_TENSOR_NCHW, 5, fd));
    tu_ok(udnnSetConvolutionNdDescriptor(d, 3, pad, stride, dil, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_DOUBLE));
    tu_ok(udnnGetConvolutionNdForwardOutputDim(d, x, w, 5, out));
    ck_assert(out[0] == 1 && out[1] == 4 && out[2] == 3 && out[3] == 6 && out[4] == 2);
    /* the table, through the Nd call (and the 2-D call for 2-D problems) */
    for (int i = 0; i < nshapes; i++) {
        const conv_shape *s = &shapes[i];
        int sx[5], sw[5], sy[5], got[5];
        int nb = tensor_dims(s, s->n, s->c, s->in, sx);
        tensor_dims(s, s->k, s->c / s->g, s->f, sw);
        tensor_dims(s, s->n, s->k, s->out, sy);
        int off = 3 - s->nsp;
        tu_ok(udnnSetTensorNdDescriptorEx(x, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, nb, sx));
        tu_ok(udnnSetFilterNdDescriptor(w, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, nb, sw));
        tu_ok(udnnSetConvolutionNdDescriptor(d, s->nsp, s->pad + off, s->stride + off, s->dil + off,
                                             s->mode, UDNN_DATA_FLOAT));
        tu_ok(udnnSetConvolutionGroupCount(d, s->g));
        tu_ok(udnnGetConvolutionNdForwardOutputDim(d, x, w, nb, got));
        for (int j = 0; j < nb; j++) ck_assert_msg(got[j] == sy[j], "%s: dim %d", s->text, j);
        if (s->nsp == 2) {
            tu_ok(udnnGetConvolution2dForwardOutputDim(d, x, w, &n, &c, &h, &wd));
            ck_assert(n == sy[0] && c == sy[1] && h == sy[2] && wd == sy[3]);
        }
    }
    udnnDestroyTensorDescriptor(x);
    udnnDestroyFilterDescriptor(w);
    udnnDestroyConvolutionDescriptor(d);
}
END_TEST

/* ---- algorithm queries
 * ------------------------------------------------------------------------------ */

START_TEST(test_algo_max_count)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        int n[3] = {0, 0, 0};
        tu_ok(udnnGetConvolutionForwardAlgorithmMaxCount(h, &n[0]));
        tu_ok(udnnGetConvolutionBackwardDataAlgorithmMaxCount(h, &n[1]));
        tu_ok(udnnGetConvolutionBackwardFilterAlgorithmMaxCount(h, &n[2]));
        ck_assert(n[0] == 8 && n[1] == 6 && n[2] == 7);
    }
}
END_TEST

/* The small problem the query tests share: the table's first grouped one
 * if there is one, else its first. */
static const conv_shape *query_shape(void)
{
    for (int i = 0; i < nshapes; i++)
        if (shapes[i].g > 1) return &shapes[i];
    return &shapes[0];
}

/* The CPU backend's fast GEMM solvers (FLOAT only) by direction; the
 * reference is algorithm 0 in every direction and takes every type. */
static const int cpu_fast_algo[DIR_COUNT] = {UDNN_CONVOLUTION_FWD_ALGO_GEMM,
                                             UDNN_CONVOLUTION_BWD_DATA_ALGO_1,
                                             UDNN_CONVOLUTION_BWD_FILTER_ALGO_1};

static const char *const cpu_fast_solver[DIR_COUNT] = {"fast_conv_fwd", "fast_conv_bwd_data",
                                                       "fast_conv_bwd_filter"};

/* Whether UDNN_DISABLE_SOLVERS names the solver, by name or by a prefix
 * ending in '*' (tests/ref-only.sh sets "fast_*"). */
static int solver_disabled(const char *name)
{
    const char *list = getenv("UDNN_DISABLE_SOLVERS");
    if (list == NULL) return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *e = strtok_r(buf, ", ", &save); e; e = strtok_r(NULL, ", ", &save)) {
        size_t len = strlen(e);
        if (len > 0 && e[len - 1] == '*' ? strncmp(e, name, len - 1) == 0 : strcmp(e, name) == 0)
            return 1;
    }
    return 0;
}

/* What the CPU backend reports: the reference, needing no workspace, and
 * for FLOAT the fast solver (unless disabled), needing the workspace its
 * WorkspaceSize query gives, ranked first by _v7. FindEx without a
 * workspace cannot run the fast solver (ALLOC_FAILED) and ranks the
 * reference first. */
static void check_cpu_ranking(conv_case *c, int dir, int kind, const perf_row *rows, int n,
                              int no_workspace)
{
    const int fast = c->dtype == UDNN_DATA_FLOAT && !solver_disabled(cpu_fast_solver[dir])
                         ? cpu_fast_algo[dir]
                         : -1;
    size_t fast_ws = 0;
    if (fast >= 0) {
        tu_ok(workspace_size(c, dir, fast, &fast_ws));
        ck_assert_msg(fast_ws > 0, "%s algo %d needs no workspace", dir_names[dir], fast);
    }
    int found = 0;
    for (int i = 0; i < n; i++) {
        const perf_row *r = &rows[i];
        if (r->algo == 0 || r->algo == fast) {
            const int starved = r->algo == fast && no_workspace;
            ck_assert_msg(r->status == (starved ? UDNN_STATUS_ALLOC_FAILED : UDNN_STATUS_SUCCESS),
                          "%s %s algo %d: status %d", dir_names[dir], tu_dtype_name(c->dtype),
                          r->algo, (int)r->status);
            ck_assert_int_eq(r->memory, r->algo == 0 ? 0 : fast_ws);
            ck_assert_int_eq(r->determinism, UDNN_DETERMINISTIC);
            found++;
        } else {
            ck_assert_msg(r->status == UDNN_STATUS_NOT_SUPPORTED, "%s %s algo %d: status %d",
                          dir_names[dir], tu_dtype_name(c->dtype), r->algo, (int)r->status);
        }
    }
    ck_assert_int_eq(found, fast >= 0 ? 2 : 1);
    if (kind == QUERY_V7) ck_assert_int_eq(rows[0].algo, fast >= 0 ? fast : 0);
    if (no_workspace) ck_assert_int_eq(rows[0].algo, 0);
}

/* Checks a ranking: every algorithm once, runnable ones first, and on the
 * CPU backend exactly the algorithms it has for the type. */
static void check_ranking(conv_case *c, int dir, int kind, const perf_row *rows, int n,
                          int no_workspace)
{
    const char *what = kind == QUERY_V7 ? "_v7" : kind == QUERY_FIND ? "Find" : "FindEx";
    ck_assert_int_eq(n, algo_counts[dir]);
    int seen[8] = {0};
    for (int i = 0; i < n; i++) {
        ck_assert(rows[i].algo >= 0 && rows[i].algo < algo_counts[dir]);
        ck_assert_msg(!seen[rows[i].algo]++, "%s %s: algo %d twice", dir_names[dir], what,
                      rows[i].algo);
        if (i > 0 && rows[i].status == UDNN_STATUS_SUCCESS)
            ck_assert_int_eq(rows[i - 1].status, UDNN_STATUS_SUCCESS);
        if (rows[i].status != UDNN_STATUS_SUCCESS) continue;
        if (kind == QUERY_V7)
            ck_assert_msg(rows[i].time == -1.0f, "_v7 time %g", rows[i].time);
        else
            ck_assert_msg(rows[i].time >= 0.0f, "%s time %g", what, rows[i].time);
        ck_assert_int_eq(rows[i].math, UDNN_TENSOR_OP_MATH);
    }
    ck_assert_int_eq(rows[0].status, UDNN_STATUS_SUCCESS);
    if (c->backend == UDNN_BACKEND_CPU) check_cpu_ranking(c, dir, kind, rows, n, no_workspace);
}

static void check_find_ex_output(conv_case *c, int dir, const char *what)
{
    double *x = values_of(&c->x), *dy = values_of(&c->dy), *w = filter_values_of(&c->w);
    double *ref[DIR_COUNT] = {zeros(c->y.count), zeros(c->dx.count), zeros(c->dw.count)};
    expect_all(&c->s, x, w, dy, ref[0], ref[1], ref[2]);
    check_output(c, dir, ref[dir], what);
    for (int i = 0; i < DIR_COUNT; i++) free(ref[i]);
    free(x);
    free(dy);
    free(w);
}

/* _i: direction x {_v7, Find, FindEx} x type. FindEx also leaves the
 * right output (alpha 1, beta 0), and with a workspace for the CPU's fast
 * solver it runs that one too. */
START_TEST(test_algo_ranking)
{
    tu_seed_fresh();
    int dir = _i / 12, kind = _i / 4 % 3;
    udnnDataType_t t = tu_float_types[_i % 4];
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        conv_case c;
        case_init(&c, be[b], query_shape(), t, TU_NHWC);
        tu_ok(udnnSetConvolutionMathType(c.conv, UDNN_TENSOR_OP_MATH));
        tu_fill_uniform(&c.x, -1.0, 1.0);
        tu_fill_uniform(&c.dy, -1.0, 1.0);
        fill_filter(&c.w, -1.0, 1.0);
        perf_row rows[8];
        int n = 0;
        tu_ok(query(&c, dir, kind, algo_counts[dir], rows, &n));
        check_ranking(&c, dir, kind, rows, n, kind == QUERY_FIND_EX);
        if (kind == QUERY_FIND_EX) {
            check_find_ex_output(&c, dir, "the output FindEx leaves");
            if (be[b] == UDNN_BACKEND_CPU && t == UDNN_DATA_FLOAT &&
                !solver_disabled(cpu_fast_solver[dir])) {
                size_t ws_bytes = 0;
                void *ws = NULL;
                tu_ok(workspace_size(&c, dir, cpu_fast_algo[dir], &ws_bytes));
                tu_ok(udnnMalloc(c.h, &ws, ws_bytes));
                prepare_output(&c, dir, 0.0, NULL);
                tu_ok(query_ws(&c, dir, kind, algo_counts[dir], rows, &n, ws, ws_bytes));
                check_ranking(&c, dir, kind, rows, n, 0);
                check_find_ex_output(&c, dir, "the output FindEx leaves with a workspace");
                udnnFree(c.h, ws);
            }
        }
        /* fewer asked for, fewer given: the best first */
        tu_ok(query(&c, dir, kind, 1, rows, &n));
        ck_assert_int_eq(n, 1);
        ck_assert_int_eq(rows[0].status, UDNN_STATUS_SUCCESS);
        case_free(&c);
    }
}
END_TEST

START_TEST(test_algo_workspace)
{
    int dir = _i;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        conv_case c;
        case_init(&c, be[b], query_shape(), UDNN_DATA_DOUBLE, TU_NCHW);
        perf_row rows[8];
        int n = 0;
        tu_ok(query(&c, dir, QUERY_V7, 8, rows, &n));
        for (int i = 0; i < n; i++) {
            size_t size = 12345;
            udnnStatus_t st = workspace_size(&c, dir, rows[i].algo, &size);
            if (rows[i].status == UDNN_STATUS_SUCCESS) {
                ck_assert_int_eq(st, UDNN_STATUS_SUCCESS);
                ck_assert_int_eq(size, rows[i].memory);
            } else {
                tu_assert_fails(st, UDNN_STATUS_NOT_SUPPORTED, "WorkspaceSize", "algo");
            }
        }
        case_free(&c);
    }
}
END_TEST

/* ---- bad arguments
 * ----------------------------------------------------------------------------------- */

/* A valid problem on the CPU backend (validation is core's, the same for
 * every backend): x 2x4x7x7 f32, w 6x2x3x3, 2 groups, pad 1, so y, z
 * 2x6x7x7; bias and db 1x6x1x1. Rules make scratch descriptors from it. */
typedef struct {
    conv_case c;
    tu_tensor z, bias, db;
    udnnActivationDescriptor_t act;
    float one, zero;
    int out[UDNN_DIM_MAX], n1, n2, n3, n4, count;
    size_t size;
    udnnConvolutionFwdAlgoPerf_t fwd_perf[8];
    udnnConvolutionBwdDataAlgoPerf_t bd_perf[8];
    udnnConvolutionBwdFilterAlgoPerf_t bf_perf[8];
    udnnTensorDescriptor_t tds[8];
    udnnFilterDescriptor_t fds[8];
    udnnConvolutionDescriptor_t cds[8];
    int ntd, nfd, ncd;
} fixture;

static void fixture_init(fixture *f)
{
    memset(f, 0, sizeof *f);
    conv_shape s;
    memset(&s, 0, sizeof s);
    s.n = 2, s.c = 4, s.k = 6, s.g = 2;
    s.mode = UDNN_CROSS_CORRELATION;
    const int in[2] = {7, 7}, fs[2] = {3, 3}, one = 1;
    ck_assert_int_eq(shape_geometry(&s, 2, in, fs, &one, 1, &one, 1, &one, 1), 0);
    case_init(&f->c, UDNN_BACKEND_CPU, &s, UDNN_DATA_FLOAT, TU_NCHW);
    tu_tensor_init(&f->z, f->c.h, UDNN_DATA_FLOAT, 4, f->c.y.dims, TU_NCHW);
    tu_tensor_init(&f->bias, f->c.h, UDNN_DATA_FLOAT, 4, (const int[]){1, 6, 1, 1}, TU_NCHW);
    tu_tensor_init(&f->db, f->c.h, UDNN_DATA_FLOAT, 4, (const int[]){1, 6, 1, 1}, TU_NCHW);
    tu_ok(udnnCreateActivationDescriptor(&f->act));
    f->one = 1.0f;
    f->zero = 0.0f;
}

static void fixture_free(fixture *f)
{
    for (int i = 0; i < f->ntd; i++) udnnDestroyTensorDescriptor(f->tds[i]);
    for (int i = 0; i < f->nfd; i++) udnnDestroyFilterDescriptor(f->fds[i]);
    for (int i = 0; i < f->ncd; i++) udnnDestroyConvolutionDescriptor(f->cds[i]);
    udnnDestroyActivationDescriptor(f->act);
    tu_tensor_free(&f->z);
    tu_tensor_free(&f->bias);
    tu_tensor_free(&f->db);
    case_free(&f->c);
}

/* Scratch descriptors, packed NCHW; freed with the fixture. */
static udnnTensorDescriptor_t tdesc(fixture *f, udnnDataType_t t, int nb, const int *dims)
{
    udnnTensorDescriptor_t d;
    tu_ok(udnnCreateTensorDescriptor(&d));
    if (nb > 0) tu_ok(udnnSetTensorNdDescriptorEx(d, UDNN_TENSOR_NCHW, t, nb, dims));
    return f->tds[f->ntd++] = d;
}

static udnnFilterDescriptor_t fdesc(fixture *f, udnnDataType_t t, int nb, const int *dims)
{
    udnnFilterDescriptor_t d;
    tu_ok(udnnCreateFilterDescriptor(&d));
    if (nb > 0) tu_ok(udnnSetFilterNdDescriptor(d, t, UDNN_TENSOR_NCHW, nb, dims));
    return f->fds[f->nfd++] = d;
}

/* nsp 0 leaves the descriptor unset. */
static udnnConvolutionDescriptor_t cdesc(fixture *f, int nsp, int pad, int dil,
                                         udnnDataType_t compute, int groups)
{
    udnnConvolutionDescriptor_t d;
    tu_ok(udnnCreateConvolutionDescriptor(&d));
    const int pads[3] = {pad, pad, pad}, strides[3] = {1, 1, 1}, dils[3] = {dil, dil, dil};
    if (nsp > 0)
        tu_ok(udnnSetConvolutionNdDescriptor(d, nsp, pads, strides, dils, UDNN_CROSS_CORRELATION,
                                             compute));
    tu_ok(udnnSetConvolutionGroupCount(d, groups));
    return f->cds[f->ncd++] = d;
}

#define F32 UDNN_DATA_FLOAT
#define DIMS(...) ((const int[]){__VA_ARGS__})
#define X(f) ((f)->c.x.desc)
#define W(f) ((f)->c.w.desc)
#define Y(f) ((f)->c.y.desc)
#define CONV(f) ((f)->c.conv)
#define PX(f) tu_buf_ptr(&(f)->c.x.buf)
#define PW(f) tu_buf_ptr(&(f)->c.w.buf)
#define PY(f) tu_buf_ptr(&(f)->c.y.buf)
#define PDX(f) tu_buf_ptr(&(f)->c.dx.buf)
#define PDY(f) tu_buf_ptr(&(f)->c.dy.buf)
#define PDW(f) tu_buf_ptr(&(f)->c.dw.buf)

static udnnStatus_t fwd(fixture *f, udnnTensorDescriptor_t x, udnnFilterDescriptor_t w,
                        udnnConvolutionDescriptor_t conv, udnnTensorDescriptor_t y, int algo)
{
    return udnnConvolutionForward(f->c.h, &f->one, x, PX(f), w, PW(f), conv, algo, NULL, 0,
                                  &f->zero, y, PY(f));
}

static udnnStatus_t bwd_data(fixture *f, udnnFilterDescriptor_t w, udnnTensorDescriptor_t dy,
                             udnnConvolutionDescriptor_t conv, udnnTensorDescriptor_t dx, int algo)
{
    return udnnConvolutionBackwardData(f->c.h, &f->one, w, PW(f), dy, PDY(f), conv, algo, NULL, 0,
                                       &f->zero, dx, PDX(f));
}

static udnnStatus_t bwd_filter(fixture *f, udnnTensorDescriptor_t x, udnnTensorDescriptor_t dy,
                               udnnConvolutionDescriptor_t conv, udnnFilterDescriptor_t dw,
                               int algo)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, x, PX(f), dy, PDY(f), conv, algo, NULL, 0,
                                         &f->zero, dw, PDW(f));
}

static udnnStatus_t bwd_bias(fixture *f, udnnTensorDescriptor_t dy, udnnTensorDescriptor_t db)
{
    return udnnConvolutionBackwardBias(f->c.h, &f->one, dy, PDY(f), &f->zero, db,
                                       tu_buf_ptr(&f->db.buf));
}

static udnnStatus_t cba(fixture *f, udnnTensorDescriptor_t z, udnnTensorDescriptor_t bias,
                        udnnActivationDescriptor_t act, int algo)
{
    return udnnConvolutionBiasActivationForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f),
                                                algo, NULL, 0, &f->one, z, tu_buf_ptr(&f->z.buf),
                                                bias, tu_buf_ptr(&f->bias.buf), act, Y(f), PY(f));
}

/* ---- descriptor rules ---- */

static udnnStatus_t d_create_null(fixture *f)
{
    (void)f;
    return udnnCreateConvolutionDescriptor(NULL);
}
static udnnStatus_t set2d(fixture *f, int ph, int pw, int u, int v, int dh, int dw, int mode,
                          int type)
{
    return udnnSetConvolution2dDescriptor(cdesc(f, 0, 0, 1, F32, 1), ph, pw, u, v, dh, dw,
                                          (udnnConvolutionMode_t)mode, (udnnDataType_t)type);
}
static udnnStatus_t d_set2d_null(fixture *f)
{
    (void)f;
    return udnnSetConvolution2dDescriptor(NULL, 0, 0, 1, 1, 1, 1, UDNN_CONVOLUTION, F32);
}
static udnnStatus_t d_set2d_pad_h(fixture *f)
{
    return set2d(f, -1, 0, 1, 1, 1, 1, 0, F32);
}
static udnnStatus_t d_set2d_pad_w(fixture *f)
{
    return set2d(f, 0, -2, 1, 1, 1, 1, 0, F32);
}
static udnnStatus_t d_set2d_u(fixture *f)
{
    return set2d(f, 0, 0, 0, 1, 1, 1, 0, F32);
}
static udnnStatus_t d_set2d_v(fixture *f)
{
    return set2d(f, 0, 0, 1, -1, 1, 1, 0, F32);
}
static udnnStatus_t d_set2d_dil_h(fixture *f)
{
    return set2d(f, 0, 0, 1, 1, 0, 1, 0, F32);
}
static udnnStatus_t d_set2d_dil_w(fixture *f)
{
    return set2d(f, 0, 0, 1, 1, 1, 0, 0, F32);
}
static udnnStatus_t d_set2d_mode(fixture *f)
{
    return set2d(f, 0, 0, 1, 1, 1, 1, 2, F32);
}
static udnnStatus_t d_set2d_compute(fixture *f)
{
    return set2d(f, 0, 0, 1, 1, 1, 1, 0, UDNN_DATA_INT8);
}
static udnnStatus_t setnd(fixture *f, int len, const int *pad, const int *stride, const int *dil,
                          int mode, int type)
{
    return udnnSetConvolutionNdDescriptor(cdesc(f, 0, 0, 1, F32, 1), len, pad, stride, dil,
                                          (udnnConvolutionMode_t)mode, (udnnDataType_t)type);
}
static const int ones3[3] = {1, 1, 1}, zeros3[3] = {0, 0, 0};
static udnnStatus_t d_setnd_null(fixture *f)
{
    (void)f;
    return udnnSetConvolutionNdDescriptor(NULL, 2, zeros3, ones3, ones3, 0, F32);
}
static udnnStatus_t d_setnd_len1(fixture *f)
{
    return setnd(f, 1, zeros3, ones3, ones3, 0, F32);
}
static udnnStatus_t d_setnd_len4(fixture *f)
{
    return setnd(f, 4, DIMS(0, 0, 0, 0), DIMS(1, 1, 1, 1), DIMS(1, 1, 1, 1), 0, F32);
}
static udnnStatus_t d_setnd_pad_null(fixture *f)
{
    return setnd(f, 2, NULL, ones3, ones3, 0, F32);
}
static udnnStatus_t d_setnd_stride_null(fixture *f)
{
    return setnd(f, 2, zeros3, NULL, ones3, 0, F32);
}
static udnnStatus_t d_setnd_dil_null(fixture *f)
{
    return setnd(f, 3, zeros3, ones3, NULL, 0, F32);
}
static udnnStatus_t d_setnd_pad_neg(fixture *f)
{
    return setnd(f, 3, DIMS(0, 0, -1), ones3, ones3, 0, F32);
}
static udnnStatus_t d_setnd_stride0(fixture *f)
{
    return setnd(f, 3, zeros3, DIMS(1, 0, 1), ones3, 0, F32);
}
static udnnStatus_t d_setnd_dil0(fixture *f)
{
    return setnd(f, 2, zeros3, ones3, DIMS(0, 1), 0, F32);
}
static udnnStatus_t d_setnd_mode(fixture *f)
{
    return setnd(f, 2, zeros3, ones3, ones3, -1, F32);
}
static udnnStatus_t d_setnd_compute(fixture *f)
{
    return setnd(f, 2, zeros3, ones3, ones3, 1, UDNN_DATA_INT32);
}
static udnnStatus_t d_get2d_null(fixture *f)
{
    (void)f;
    int v;
    return udnnGetConvolution2dDescriptor(NULL, &v, &v, &v, &v, &v, &v, NULL, NULL);
}
static udnnStatus_t d_get2d_unset(fixture *f)
{
    int v;
    return udnnGetConvolution2dDescriptor(cdesc(f, 0, 0, 1, F32, 1), &v, &v, &v, &v, &v, &v, NULL,
                                          NULL);
}
static udnnStatus_t d_get2d_3d(fixture *f)
{
    int v;
    return udnnGetConvolution2dDescriptor(cdesc(f, 3, 0, 1, F32, 1), &v, &v, &v, &v, &v, &v, NULL,
                                          NULL);
}
static udnnStatus_t d_getnd_negative(fixture *f)
{
    int a[3];
    return udnnGetConvolutionNdDescriptor(CONV(f), -1, a, a, a, a, NULL, NULL);
}
static udnnStatus_t d_getnd_pad_null(fixture *f)
{
    int a[3], n;
    return udnnGetConvolutionNdDescriptor(CONV(f), 2, &n, NULL, a, a, NULL, NULL);
}
static udnnStatus_t d_getnd_dil_null(fixture *f)
{
    int a[3], n;
    return udnnGetConvolutionNdDescriptor(CONV(f), 2, &n, a, a, NULL, NULL, NULL);
}
static udnnStatus_t d_getnd_unset(fixture *f)
{
    int a[3], n;
    return udnnGetConvolutionNdDescriptor(cdesc(f, 0, 0, 1, F32, 1), 2, &n, a, a, a, NULL, NULL);
}
static udnnStatus_t d_group_zero(fixture *f)
{
    return udnnSetConvolutionGroupCount(CONV(f), 0);
}
static udnnStatus_t d_group_null_desc(fixture *f)
{
    (void)f;
    return udnnSetConvolutionGroupCount(NULL, 1);
}
static udnnStatus_t d_get_group_null(fixture *f)
{
    return udnnGetConvolutionGroupCount(CONV(f), NULL);
}
static udnnStatus_t d_math_bad(fixture *f)
{
    return udnnSetConvolutionMathType(CONV(f), (udnnMathType_t)4);
}
static udnnStatus_t d_math_null_desc(fixture *f)
{
    (void)f;
    return udnnSetConvolutionMathType(NULL, UDNN_DEFAULT_MATH);
}
static udnnStatus_t d_get_math_null(fixture *f)
{
    return udnnGetConvolutionMathType(CONV(f), NULL);
}
static udnnStatus_t out2d(fixture *f, udnnConvolutionDescriptor_t conv, udnnTensorDescriptor_t x,
                          udnnFilterDescriptor_t w)
{
    return udnnGetConvolution2dForwardOutputDim(conv, x, w, &f->n1, &f->n2, &f->n3, &f->n4);
}
static udnnStatus_t d_out2d_conv_null(fixture *f)
{
    return out2d(f, NULL, X(f), W(f));
}
static udnnStatus_t d_out2d_conv_unset(fixture *f)
{
    return out2d(f, cdesc(f, 0, 0, 1, F32, 2), X(f), W(f));
}
static udnnStatus_t d_out2d_conv_3d(fixture *f)
{
    return out2d(f, cdesc(f, 3, 1, 1, F32, 2), X(f), W(f));
}
static udnnStatus_t d_out2d_x_null(fixture *f)
{
    return out2d(f, CONV(f), NULL, W(f));
}
static udnnStatus_t d_out2d_x_unset(fixture *f)
{
    return out2d(f, CONV(f), tdesc(f, F32, 0, NULL), W(f));
}
static udnnStatus_t d_out2d_w_null(fixture *f)
{
    return out2d(f, CONV(f), X(f), NULL);
}
static udnnStatus_t d_out2d_w_unset(fixture *f)
{
    return out2d(f, CONV(f), X(f), fdesc(f, F32, 0, NULL));
}
static udnnStatus_t d_out2d_x_rank(fixture *f)
{
    return out2d(f, CONV(f), tdesc(f, F32, 5, DIMS(2, 4, 3, 7, 7)), W(f));
}
static udnnStatus_t d_out2d_w_rank(fixture *f)
{
    return out2d(f, CONV(f), X(f), fdesc(f, F32, 5, DIMS(6, 2, 1, 3, 3)));
}
static udnnStatus_t d_out2d_channels(fixture *f)
{
    return out2d(f, CONV(f), X(f), fdesc(f, F32, 4, DIMS(6, 3, 3, 3)));
}
static udnnStatus_t d_out2d_groups_c(fixture *f)
{
    return out2d(f, cdesc(f, 2, 1, 1, F32, 3), X(f), fdesc(f, F32, 4, DIMS(6, 1, 3, 3)));
}
static udnnStatus_t d_out2d_groups_k(fixture *f)
{
    return out2d(f, CONV(f), X(f), fdesc(f, F32, 4, DIMS(5, 2, 3, 3)));
}
static udnnStatus_t d_out2d_type(fixture *f)
{
    return out2d(f, CONV(f), X(f), fdesc(f, UDNN_DATA_HALF, 4, DIMS(6, 2, 3, 3)));
}
static udnnStatus_t d_out2d_too_big(fixture *f)
{
    return out2d(f, cdesc(f, 2, 0, 1, F32, 2), tdesc(f, F32, 4, DIMS(2, 4, 3, 3)),
                 fdesc(f, F32, 4, DIMS(6, 2, 5, 3)));
}
static udnnStatus_t d_out2d_dilated(fixture *f)
{
    return out2d(f, cdesc(f, 2, 0, 4, F32, 2), tdesc(f, F32, 4, DIMS(2, 4, 9, 7)), W(f));
}
static udnnStatus_t d_out2d_n_null(fixture *f)
{
    return udnnGetConvolution2dForwardOutputDim(CONV(f), X(f), W(f), NULL, &f->n2, &f->n3, &f->n4);
}
static udnnStatus_t d_out2d_w_out_null(fixture *f)
{
    return udnnGetConvolution2dForwardOutputDim(CONV(f), X(f), W(f), &f->n1, &f->n2, &f->n3, NULL);
}
static udnnStatus_t d_outnd_nbdims(fixture *f)
{
    return udnnGetConvolutionNdForwardOutputDim(CONV(f), X(f), W(f), 5, f->out);
}
static udnnStatus_t d_outnd_array_null(fixture *f)
{
    return udnnGetConvolutionNdForwardOutputDim(CONV(f), X(f), W(f), 4, NULL);
}
static udnnStatus_t d_outnd_3d_x4(fixture *f)
{
    return udnnGetConvolutionNdForwardOutputDim(cdesc(f, 3, 1, 1, F32, 2), X(f), W(f), 4, f->out);
}
static udnnStatus_t d_outnd_3d_too_big(fixture *f)
{
    return udnnGetConvolutionNdForwardOutputDim(cdesc(f, 3, 0, 1, F32, 1),
                                                tdesc(f, F32, 5, DIMS(1, 2, 2, 9, 9)),
                                                fdesc(f, F32, 5, DIMS(3, 2, 3, 3, 3)), 5, f->out);
}

typedef struct {
    const char *name;
    udnnStatus_t (*call)(fixture *);
    udnnStatus_t expect;
    const char *fn, *arg, *more;
} rule;

#define BAD UDNN_STATUS_BAD_PARAM
#define UNSUPPORTED UDNN_STATUS_NOT_SUPPORTED

static const rule desc_rules[] = {
    {"create NULL", d_create_null, BAD, "udnnCreateConvolutionDescriptor", "convDesc", "NULL"},
    {"set2d NULL", d_set2d_null, BAD, "udnnSetConvolution2dDescriptor", "convDesc", "NULL"},
    {"set2d pad_h", d_set2d_pad_h, BAD, "udnnSetConvolution2dDescriptor", "pad_h is -1", NULL},
    {"set2d pad_w", d_set2d_pad_w, BAD, "udnnSetConvolution2dDescriptor", "pad_w is -2", NULL},
    {"set2d u", d_set2d_u, BAD, "udnnSetConvolution2dDescriptor", "u is 0", NULL},
    {"set2d v", d_set2d_v, BAD, "udnnSetConvolution2dDescriptor", "v is -1", NULL},
    {"set2d dilation_h", d_set2d_dil_h, BAD, "udnnSetConvolution2dDescriptor", "dilation_h", NULL},
    {"set2d dilation_w", d_set2d_dil_w, BAD, "udnnSetConvolution2dDescriptor", "dilation_w", NULL},
    {"set2d mode", d_set2d_mode, BAD, "udnnSetConvolution2dDescriptor", "mode is 2", NULL},
    {"set2d computeType", d_set2d_compute, BAD, "udnnSetConvolution2dDescriptor", "computeType",
     NULL},
    {"setNd NULL", d_setnd_null, BAD, "udnnSetConvolutionNdDescriptor", "convDesc", NULL},
    {"setNd length 1", d_setnd_len1, BAD, "udnnSetConvolutionNdDescriptor", "arrayLength is 1",
     NULL},
    {"setNd length 4", d_setnd_len4, BAD, "udnnSetConvolutionNdDescriptor", "arrayLength is 4",
     NULL},
    {"setNd padA NULL", d_setnd_pad_null, BAD, "udnnSetConvolutionNdDescriptor", "padA is NULL",
     NULL},
    {"setNd strides NULL", d_setnd_stride_null, BAD, "udnnSetConvolutionNdDescriptor",
     "filterStrideA is NULL", NULL},
    {"setNd dilationA NULL", d_setnd_dil_null, BAD, "udnnSetConvolutionNdDescriptor",
     "dilationA is NULL", NULL},
    {"setNd pad < 0", d_setnd_pad_neg, BAD, "udnnSetConvolutionNdDescriptor", "padA[2] is -1",
     NULL},
    {"setNd stride 0", d_setnd_stride0, BAD, "udnnSetConvolutionNdDescriptor",
     "filterStrideA[1] is 0", NULL},
    {"setNd dilation 0", d_setnd_dil0, BAD, "udnnSetConvolutionNdDescriptor", "dilationA[0] is 0",
     NULL},
    {"setNd mode", d_setnd_mode, BAD, "udnnSetConvolutionNdDescriptor", "mode is -1", NULL},
    {"setNd computeType", d_setnd_compute, BAD, "udnnSetConvolutionNdDescriptor", "computeType",
     NULL},
    {"get2d NULL", d_get2d_null, BAD, "udnnGetConvolution2dDescriptor", "convDesc", NULL},
    {"get2d unset", d_get2d_unset, BAD, "udnnGetConvolution2dDescriptor", "convDesc",
     "not been set"},
    {"get2d of 3-D", d_get2d_3d, BAD, "udnnGetConvolution2dDescriptor", "convDesc", "3 spatial"},
    {"getNd requested < 0", d_getnd_negative, BAD, "udnnGetConvolutionNdDescriptor",
     "arrayLengthRequested", NULL},
    {"getNd padA NULL", d_getnd_pad_null, BAD, "udnnGetConvolutionNdDescriptor", "padA", NULL},
    {"getNd dilationA NULL", d_getnd_dil_null, BAD, "udnnGetConvolutionNdDescriptor", "dilationA",
     NULL},
    {"getNd unset", d_getnd_unset, BAD, "udnnGetConvolutionNdDescriptor", "convDesc",
     "not been set"},
    {"groups 0", d_group_zero, BAD, "udnnSetConvolutionGroupCount", "groupCount is 0", NULL},
    {"groups NULL desc", d_group_null_desc, BAD, "udnnSetConvolutionGroupCount", "convDesc", NULL},
    {"get groups NULL", d_get_group_null, BAD, "udnnGetConvolutionGroupCount", "groupCount", NULL},
    {"math type 4", d_math_bad, BAD, "udnnSetConvolutionMathType", "mathType", NULL},
    {"math NULL desc", d_math_null_desc, BAD, "udnnSetConvolutionMathType", "convDesc", NULL},
    {"get math NULL", d_get_math_null, BAD, "udnnGetConvolutionMathType", "mathType", NULL},
    {"out2d conv NULL", d_out2d_conv_null, BAD, "udnnGetConvolution2dForwardOutputDim", "convDesc",
     NULL},
    {"out2d conv unset", d_out2d_conv_unset, BAD, "udnnGetConvolution2dForwardOutputDim",
     "convDesc", "not been set"},
    {"out2d conv 3-D", d_out2d_conv_3d, BAD, "udnnGetConvolution2dForwardOutputDim", "convDesc",
     "3 spatial"},
    {"out2d x NULL", d_out2d_x_null, BAD, "udnnGetConvolution2dForwardOutputDim", "inputTensorDesc",
     NULL},
    {"out2d x unset", d_out2d_x_unset, BAD, "udnnGetConvolution2dForwardOutputDim",
     "inputTensorDesc", "not been set"},
    {"out2d w NULL", d_out2d_w_null, BAD, "udnnGetConvolution2dForwardOutputDim", "filterDesc",
     NULL},
    {"out2d w unset", d_out2d_w_unset, BAD, "udnnGetConvolution2dForwardOutputDim", "filterDesc",
     "not been set"},
    {"out2d x rank", d_out2d_x_rank, BAD, "udnnGetConvolution2dForwardOutputDim",
     "inputTensorDesc has 5 dimensions", NULL},
    {"out2d w rank", d_out2d_w_rank, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc has 5 dimensions", NULL},
    {"out2d channels", d_out2d_channels, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc has 3 input channels per group", "inputTensorDesc has 2"},
    {"out2d groups vs C", d_out2d_groups_c, BAD, "udnnGetConvolution2dForwardOutputDim",
     "convDesc has 3 groups", "inputTensorDesc"},
    {"out2d groups vs K", d_out2d_groups_k, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc has 5 output channels", NULL},
    {"out2d types", d_out2d_type, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc has data type f16", "inputTensorDesc has f32"},
    {"out2d filter too big", d_out2d_too_big, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc", "dimension 2 (h)"},
    {"out2d dilated too big", d_out2d_dilated, BAD, "udnnGetConvolution2dForwardOutputDim",
     "filterDesc", "dimension 3 (w)"},
    {"out2d n NULL", d_out2d_n_null, BAD, "udnnGetConvolution2dForwardOutputDim", "n is NULL",
     NULL},
    {"out2d w out NULL", d_out2d_w_out_null, BAD, "udnnGetConvolution2dForwardOutputDim",
     "w is NULL", NULL},
    {"outNd nbDims", d_outnd_nbdims, BAD, "udnnGetConvolutionNdForwardOutputDim", "nbDims is 5",
     NULL},
    {"outNd array NULL", d_outnd_array_null, BAD, "udnnGetConvolutionNdForwardOutputDim",
     "tensorOuputDimA", NULL},
    {"outNd 3-D conv, 4-D x", d_outnd_3d_x4, BAD, "udnnGetConvolutionNdForwardOutputDim",
     "inputTensorDesc has 4 dimensions", NULL},
    {"outNd 3-D too big", d_outnd_3d_too_big, BAD, "udnnGetConvolutionNdForwardOutputDim",
     "filterDesc", "dimension 2 (d)"},
};

/* ---- op rules ---- */

static udnnStatus_t o_fwd_handle(fixture *f)
{
    return udnnConvolutionForward(NULL, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), PY(f));
}
static udnnStatus_t o_fwd_alpha(fixture *f)
{
    return udnnConvolutionForward(f->c.h, NULL, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), PY(f));
}
static udnnStatus_t o_fwd_beta(fixture *f)
{
    return udnnConvolutionForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0,
                                  NULL, Y(f), PY(f));
}
static udnnStatus_t o_fwd_x(fixture *f)
{
    return udnnConvolutionForward(f->c.h, &f->one, X(f), NULL, W(f), PW(f), CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), PY(f));
}
static udnnStatus_t o_fwd_w(fixture *f)
{
    return udnnConvolutionForward(f->c.h, &f->one, X(f), PX(f), W(f), NULL, CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), PY(f));
}
static udnnStatus_t o_fwd_y(fixture *f)
{
    return udnnConvolutionForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), NULL);
}
static udnnStatus_t o_fwd_in_place(fixture *f)
{
    return udnnConvolutionForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0,
                                  &f->zero, Y(f), PX(f));
}
static udnnStatus_t o_fwd_xdesc_null(fixture *f)
{
    return fwd(f, NULL, W(f), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_xdesc_unset(fixture *f)
{
    return fwd(f, tdesc(f, F32, 0, NULL), W(f), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_wdesc_null(fixture *f)
{
    return fwd(f, X(f), NULL, CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_wdesc_unset(fixture *f)
{
    return fwd(f, X(f), fdesc(f, F32, 0, NULL), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_conv_null(fixture *f)
{
    return fwd(f, X(f), W(f), NULL, Y(f), 0);
}
static udnnStatus_t o_fwd_conv_unset(fixture *f)
{
    return fwd(f, X(f), W(f), cdesc(f, 0, 0, 1, F32, 2), Y(f), 0);
}
static udnnStatus_t o_fwd_ydesc_null(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), NULL, 0);
}
static udnnStatus_t o_fwd_ydesc_unset(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 0, NULL), 0);
}
static udnnStatus_t o_fwd_int8(fixture *f)
{
    return fwd(f, tdesc(f, UDNN_DATA_INT8, 4, DIMS(2, 4, 7, 7)),
               fdesc(f, UDNN_DATA_INT8, 4, DIMS(6, 2, 3, 3)), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_w_type(fixture *f)
{
    return fwd(f, X(f), fdesc(f, UDNN_DATA_DOUBLE, 4, DIMS(6, 2, 3, 3)), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_y_type(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, UDNN_DATA_BFLOAT16, 4, DIMS(2, 6, 7, 7)), 0);
}
static udnnStatus_t o_fwd_x_rank(fixture *f)
{
    return fwd(f, tdesc(f, F32, 5, DIMS(2, 4, 1, 7, 7)), W(f), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_w_rank(fixture *f)
{
    return fwd(f, X(f), fdesc(f, F32, 5, DIMS(6, 2, 1, 3, 3)), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_y_rank(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 5, DIMS(2, 6, 1, 7, 7)), 0);
}
static udnnStatus_t o_fwd_channels(fixture *f)
{
    return fwd(f, X(f), fdesc(f, F32, 4, DIMS(6, 3, 3, 3)), cdesc(f, 2, 1, 1, F32, 1), Y(f), 0);
}
static udnnStatus_t o_fwd_groups_c(fixture *f)
{
    return fwd(f, X(f), W(f), cdesc(f, 2, 1, 1, F32, 3), Y(f), 0);
}
static udnnStatus_t o_fwd_groups_k(fixture *f)
{
    return fwd(f, X(f), fdesc(f, F32, 4, DIMS(7, 2, 3, 3)), CONV(f),
               tdesc(f, F32, 4, DIMS(2, 7, 7, 7)), 0);
}
static udnnStatus_t o_fwd_y_spatial(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 6, 8, 7)), 0);
}
static udnnStatus_t o_fwd_y_width(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 6, 7, 6)), 0);
}
static udnnStatus_t o_fwd_y_channels(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 5, 7, 7)), 0);
}
static udnnStatus_t o_fwd_y_batch(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(3, 6, 7, 7)), 0);
}
static udnnStatus_t o_fwd_too_big(fixture *f)
{
    return fwd(f, X(f), fdesc(f, F32, 4, DIMS(6, 2, 3, 11)), CONV(f), Y(f), 0);
}
static udnnStatus_t o_fwd_compute_double(fixture *f)
{
    return fwd(f, X(f), W(f), cdesc(f, 2, 1, 1, UDNN_DATA_DOUBLE, 2), Y(f), 0);
}
static udnnStatus_t o_fwd_compute_half(fixture *f)
{
    return fwd(f, X(f), W(f), cdesc(f, 2, 1, 1, UDNN_DATA_HALF, 2), Y(f), 0);
}
static udnnStatus_t o_fwd_bf16_half(fixture *f)
{
    udnnDataType_t t = UDNN_DATA_BFLOAT16;
    return fwd(f, tdesc(f, t, 4, DIMS(2, 4, 7, 7)), fdesc(f, t, 4, DIMS(6, 2, 3, 3)),
               cdesc(f, 2, 1, 1, UDNN_DATA_HALF, 2), tdesc(f, t, 4, DIMS(2, 6, 7, 7)), 0);
}
static udnnStatus_t o_fwd_double_float(fixture *f)
{
    udnnDataType_t t = UDNN_DATA_DOUBLE;
    double one = 1.0, zero = 0.0;
    return udnnConvolutionForward(f->c.h, &one, tdesc(f, t, 4, DIMS(2, 4, 7, 7)), PX(f),
                                  fdesc(f, t, 4, DIMS(6, 2, 3, 3)), PW(f), CONV(f), 0, NULL, 0,
                                  &zero, tdesc(f, t, 4, DIMS(2, 6, 7, 7)), PY(f));
}
static udnnStatus_t o_fwd_half_double(fixture *f)
{
    udnnDataType_t t = UDNN_DATA_HALF;
    return fwd(f, tdesc(f, t, 4, DIMS(2, 4, 7, 7)), fdesc(f, t, 4, DIMS(6, 2, 3, 3)),
               cdesc(f, 2, 1, 1, UDNN_DATA_DOUBLE, 2), tdesc(f, t, 4, DIMS(2, 6, 7, 7)), 0);
}
static udnnStatus_t o_fwd_algo_count(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), Y(f), 8);
}
static udnnStatus_t o_fwd_algo_negative(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), Y(f), -1);
}
static udnnStatus_t o_fwd_algo_direct(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), Y(f), UDNN_CONVOLUTION_FWD_ALGO_DIRECT);
}
static udnnStatus_t o_fwd_algo_winograd(fixture *f)
{
    return fwd(f, X(f), W(f), CONV(f), Y(f), UDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED);
}
static udnnStatus_t o_fwd_3d_conv(fixture *f)
{
    return fwd(f, X(f), W(f), cdesc(f, 3, 1, 1, F32, 2), Y(f), 0);
}

static udnnStatus_t o_bd_handle(fixture *f)
{
    return udnnConvolutionBackwardData(NULL, &f->one, W(f), PW(f), Y(f), PDY(f), CONV(f), 0, NULL,
                                       0, &f->zero, X(f), PDX(f));
}
static udnnStatus_t o_bd_alpha(fixture *f)
{
    return udnnConvolutionBackwardData(f->c.h, NULL, W(f), PW(f), Y(f), PDY(f), CONV(f), 0, NULL, 0,
                                       &f->zero, X(f), PDX(f));
}
static udnnStatus_t o_bd_w(fixture *f)
{
    return udnnConvolutionBackwardData(f->c.h, &f->one, W(f), NULL, Y(f), PDY(f), CONV(f), 0, NULL,
                                       0, &f->zero, X(f), PDX(f));
}
static udnnStatus_t o_bd_dy(fixture *f)
{
    return udnnConvolutionBackwardData(f->c.h, &f->one, W(f), PW(f), Y(f), NULL, CONV(f), 0, NULL,
                                       0, &f->zero, X(f), PDX(f));
}
static udnnStatus_t o_bd_dx(fixture *f)
{
    return udnnConvolutionBackwardData(f->c.h, &f->one, W(f), PW(f), Y(f), PDY(f), CONV(f), 0, NULL,
                                       0, &f->zero, X(f), NULL);
}
static udnnStatus_t o_bd_in_place(fixture *f)
{
    return udnnConvolutionBackwardData(f->c.h, &f->one, W(f), PW(f), Y(f), PDY(f), CONV(f), 0, NULL,
                                       0, &f->zero, X(f), PDY(f));
}
static udnnStatus_t o_bd_dy_dims(fixture *f)
{
    return bwd_data(f, W(f), tdesc(f, F32, 4, DIMS(2, 6, 7, 9)), CONV(f), X(f), 0);
}
static udnnStatus_t o_bd_dy_type(fixture *f)
{
    return bwd_data(f, W(f), tdesc(f, UDNN_DATA_HALF, 4, DIMS(2, 6, 7, 7)), CONV(f), X(f), 0);
}
static udnnStatus_t o_bd_dx_channels(fixture *f)
{
    return bwd_data(f, W(f), Y(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 6, 7, 7)), 0);
}
static udnnStatus_t o_bd_dxdesc_null(fixture *f)
{
    return bwd_data(f, W(f), Y(f), CONV(f), NULL, 0);
}
static udnnStatus_t o_bd_dydesc_null(fixture *f)
{
    return bwd_data(f, W(f), NULL, CONV(f), X(f), 0);
}
static udnnStatus_t o_bd_conv_null(fixture *f)
{
    return bwd_data(f, W(f), Y(f), NULL, X(f), 0);
}
static udnnStatus_t o_bd_algo_count(fixture *f)
{
    return bwd_data(f, W(f), Y(f), CONV(f), X(f), 6);
}
/* An algorithm the CPU backend lacks. */
static udnnStatus_t o_bd_algo_fft(fixture *f)
{
    return bwd_data(f, W(f), Y(f), CONV(f), X(f), UDNN_CONVOLUTION_BWD_DATA_ALGO_FFT);
}
static udnnStatus_t o_bd_compute(fixture *f)
{
    return bwd_data(f, W(f), Y(f), cdesc(f, 2, 1, 1, UDNN_DATA_BFLOAT16, 2), X(f), 0);
}

static udnnStatus_t o_bf_handle(fixture *f)
{
    return udnnConvolutionBackwardFilter(NULL, &f->one, X(f), PX(f), Y(f), PDY(f), CONV(f), 0, NULL,
                                         0, &f->zero, W(f), PDW(f));
}
static udnnStatus_t o_bf_beta(fixture *f)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, X(f), PX(f), Y(f), PDY(f), CONV(f), 0,
                                         NULL, 0, NULL, W(f), PDW(f));
}
static udnnStatus_t o_bf_x(fixture *f)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, X(f), NULL, Y(f), PDY(f), CONV(f), 0,
                                         NULL, 0, &f->zero, W(f), PDW(f));
}
static udnnStatus_t o_bf_dy(fixture *f)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, X(f), PX(f), Y(f), NULL, CONV(f), 0, NULL,
                                         0, &f->zero, W(f), PDW(f));
}
static udnnStatus_t o_bf_dw(fixture *f)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, X(f), PX(f), Y(f), PDY(f), CONV(f), 0,
                                         NULL, 0, &f->zero, W(f), NULL);
}
static udnnStatus_t o_bf_in_place(fixture *f)
{
    return udnnConvolutionBackwardFilter(f->c.h, &f->one, X(f), PX(f), Y(f), PDY(f), CONV(f), 0,
                                         NULL, 0, &f->zero, W(f), PX(f));
}
static udnnStatus_t o_bf_dw_type(fixture *f)
{
    return bwd_filter(f, X(f), Y(f), CONV(f), fdesc(f, UDNN_DATA_BFLOAT16, 4, DIMS(6, 2, 3, 3)), 0);
}
static udnnStatus_t o_bf_dw_channels(fixture *f)
{
    return bwd_filter(f, X(f), Y(f), CONV(f), fdesc(f, F32, 4, DIMS(6, 4, 3, 3)), 0);
}
static udnnStatus_t o_bf_dw_null(fixture *f)
{
    return bwd_filter(f, X(f), Y(f), CONV(f), NULL, 0);
}
static udnnStatus_t o_bf_dy_rank(fixture *f)
{
    return bwd_filter(f, X(f), tdesc(f, F32, 3, DIMS(2, 6, 49)), CONV(f), W(f), 0);
}
static udnnStatus_t o_bf_algo_count(fixture *f)
{
    return bwd_filter(f, X(f), Y(f), CONV(f), W(f), 7);
}
static udnnStatus_t o_bf_algo_fft(fixture *f)
{
    return bwd_filter(f, X(f), Y(f), CONV(f), W(f), UDNN_CONVOLUTION_BWD_FILTER_ALGO_FFT);
}

static udnnStatus_t o_bb_handle(fixture *f)
{
    return udnnConvolutionBackwardBias(NULL, &f->one, Y(f), PDY(f), &f->zero, f->db.desc,
                                       tu_buf_ptr(&f->db.buf));
}
static udnnStatus_t o_bb_alpha(fixture *f)
{
    return udnnConvolutionBackwardBias(f->c.h, NULL, Y(f), PDY(f), &f->zero, f->db.desc,
                                       tu_buf_ptr(&f->db.buf));
}
static udnnStatus_t o_bb_beta(fixture *f)
{
    return udnnConvolutionBackwardBias(f->c.h, &f->one, Y(f), PDY(f), NULL, f->db.desc,
                                       tu_buf_ptr(&f->db.buf));
}
static udnnStatus_t o_bb_dy(fixture *f)
{
    return udnnConvolutionBackwardBias(f->c.h, &f->one, Y(f), NULL, &f->zero, f->db.desc,
                                       tu_buf_ptr(&f->db.buf));
}
static udnnStatus_t o_bb_db(fixture *f)
{
    return udnnConvolutionBackwardBias(f->c.h, &f->one, Y(f), PDY(f), &f->zero, f->db.desc, NULL);
}
static udnnStatus_t o_bb_dydesc_null(fixture *f)
{
    return bwd_bias(f, NULL, f->db.desc);
}
static udnnStatus_t o_bb_dbdesc_unset(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, F32, 0, NULL));
}
static udnnStatus_t o_bb_dy_rank(fixture *f)
{
    return bwd_bias(f, tdesc(f, F32, 3, DIMS(2, 6, 49)), tdesc(f, F32, 3, DIMS(1, 6, 1)));
}
static udnnStatus_t o_bb_dy_int(fixture *f)
{
    return bwd_bias(f, tdesc(f, UDNN_DATA_INT32, 4, DIMS(2, 6, 7, 7)),
                    tdesc(f, UDNN_DATA_INT32, 4, DIMS(1, 6, 1, 1)));
}
static udnnStatus_t o_bb_db_batch(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, F32, 4, DIMS(2, 6, 1, 1)));
}
static udnnStatus_t o_bb_db_spatial(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, F32, 4, DIMS(1, 6, 1, 7)));
}
static udnnStatus_t o_bb_db_channels(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, F32, 4, DIMS(1, 5, 1, 1)));
}
static udnnStatus_t o_bb_db_type(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, UDNN_DATA_HALF, 4, DIMS(1, 6, 1, 1)));
}
static udnnStatus_t o_bb_db_rank(fixture *f)
{
    return bwd_bias(f, Y(f), tdesc(f, F32, 5, DIMS(1, 6, 1, 1, 1)));
}

static udnnStatus_t o_cba_handle(fixture *f)
{
    return udnnConvolutionBiasActivationForward(
        NULL, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0, &f->one, f->z.desc,
        tu_buf_ptr(&f->z.buf), f->bias.desc, tu_buf_ptr(&f->bias.buf), f->act, Y(f), PY(f));
}
static udnnStatus_t o_cba_alpha1(fixture *f)
{
    return udnnConvolutionBiasActivationForward(
        f->c.h, NULL, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0, &f->one, f->z.desc,
        tu_buf_ptr(&f->z.buf), f->bias.desc, tu_buf_ptr(&f->bias.buf), f->act, Y(f), PY(f));
}
static udnnStatus_t o_cba_alpha2(fixture *f)
{
    return udnnConvolutionBiasActivationForward(
        f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0, NULL, f->z.desc,
        tu_buf_ptr(&f->z.buf), f->bias.desc, tu_buf_ptr(&f->bias.buf), f->act, Y(f), PY(f));
}
static udnnStatus_t o_cba_z(fixture *f)
{
    return udnnConvolutionBiasActivationForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f),
                                                0, NULL, 0, &f->one, f->z.desc, NULL, f->bias.desc,
                                                tu_buf_ptr(&f->bias.buf), f->act, Y(f), PY(f));
}
static udnnStatus_t o_cba_bias(fixture *f)
{
    return udnnConvolutionBiasActivationForward(
        f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0, &f->one, f->z.desc,
        tu_buf_ptr(&f->z.buf), f->bias.desc, NULL, f->act, Y(f), PY(f));
}
static udnnStatus_t o_cba_y(fixture *f)
{
    return udnnConvolutionBiasActivationForward(
        f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f), 0, NULL, 0, &f->one, f->z.desc,
        tu_buf_ptr(&f->z.buf), f->bias.desc, tu_buf_ptr(&f->bias.buf), f->act, Y(f), NULL);
}
static udnnStatus_t o_cba_act_null(fixture *f)
{
    return cba(f, f->z.desc, f->bias.desc, NULL, 0);
}
static udnnStatus_t o_cba_zdesc_null(fixture *f)
{
    return cba(f, NULL, f->bias.desc, f->act, 0);
}
static udnnStatus_t o_cba_biasdesc_unset(fixture *f)
{
    return cba(f, f->z.desc, tdesc(f, F32, 0, NULL), f->act, 0);
}
static udnnStatus_t o_cba_z_dims(fixture *f)
{
    return cba(f, tdesc(f, F32, 4, DIMS(2, 6, 7, 8)), f->bias.desc, f->act, 0);
}
static udnnStatus_t o_cba_z_type(fixture *f)
{
    return cba(f, tdesc(f, UDNN_DATA_HALF, 4, DIMS(2, 6, 7, 7)), f->bias.desc, f->act, 0);
}
static udnnStatus_t o_cba_bias_shape(fixture *f)
{
    return cba(f, f->z.desc, tdesc(f, F32, 4, DIMS(1, 6, 7, 7)), f->act, 0);
}
static udnnStatus_t o_cba_bias_channels(fixture *f)
{
    return cba(f, f->z.desc, tdesc(f, F32, 4, DIMS(1, 4, 1, 1)), f->act, 0);
}
static udnnStatus_t o_cba_bias_type(fixture *f)
{
    return cba(f, f->z.desc, tdesc(f, UDNN_DATA_DOUBLE, 4, DIMS(1, 6, 1, 1)), f->act, 0);
}
static udnnStatus_t o_cba_bias_rank(fixture *f)
{
    return cba(f, f->z.desc, tdesc(f, F32, 2, DIMS(1, 6)), f->act, 0);
}
static udnnStatus_t o_cba_algo_count(fixture *f)
{
    return cba(f, f->z.desc, f->bias.desc, f->act, 8);
}
static udnnStatus_t o_cba_algo_fft(fixture *f)
{
    return cba(f, f->z.desc, f->bias.desc, f->act, UDNN_CONVOLUTION_FWD_ALGO_FFT);
}
static udnnStatus_t o_cba_z_strides(fixture *f)
{
    udnnTensorDescriptor_t z;
    tu_ok(udnnCreateTensorDescriptor(&z));
    f->tds[f->ntd++] = z;
    tu_ok(udnnSetTensorNdDescriptorEx(z, UDNN_TENSOR_NHWC, F32, 4, DIMS(2, 6, 7, 7)));
    return udnnConvolutionBiasActivationForward(f->c.h, &f->one, X(f), PX(f), W(f), PW(f), CONV(f),
                                                0, NULL, 0, &f->one, z, PY(f), f->bias.desc,
                                                tu_buf_ptr(&f->bias.buf), f->act, Y(f), PY(f));
}

/* _v7, Find, FindEx and WorkspaceSize */
static udnnStatus_t o_count_handle(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithmMaxCount(NULL, &f->count);
}
static udnnStatus_t o_count_null(fixture *f)
{
    return udnnGetConvolutionBackwardDataAlgorithmMaxCount(f->c.h, NULL);
}
static udnnStatus_t o_count_bf_null(fixture *f)
{
    return udnnGetConvolutionBackwardFilterAlgorithmMaxCount(f->c.h, NULL);
}
static udnnStatus_t o_v7_requested(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithm_v7(f->c.h, X(f), W(f), CONV(f), Y(f), 0, &f->count,
                                                 f->fwd_perf);
}
static udnnStatus_t o_v7_returned(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithm_v7(f->c.h, X(f), W(f), CONV(f), Y(f), 8, NULL,
                                                 f->fwd_perf);
}
static udnnStatus_t o_v7_perf(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithm_v7(f->c.h, X(f), W(f), CONV(f), Y(f), 8, &f->count,
                                                 NULL);
}
static udnnStatus_t o_v7_dest(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithm_v7(
        f->c.h, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 6, 6, 7)), 8, &f->count, f->fwd_perf);
}
static udnnStatus_t o_v7_handle(fixture *f)
{
    return udnnGetConvolutionForwardAlgorithm_v7(NULL, X(f), W(f), CONV(f), Y(f), 8, &f->count,
                                                 f->fwd_perf);
}
static udnnStatus_t o_bd_v7_diff(fixture *f)
{
    return udnnGetConvolutionBackwardDataAlgorithm_v7(
        f->c.h, W(f), tdesc(f, F32, 4, DIMS(2, 3, 7, 7)), CONV(f), X(f), 6, &f->count, f->bd_perf);
}
static udnnStatus_t o_bd_v7_requested(fixture *f)
{
    return udnnGetConvolutionBackwardDataAlgorithm_v7(f->c.h, W(f), Y(f), CONV(f), X(f), -3,
                                                      &f->count, f->bd_perf);
}
static udnnStatus_t o_bf_v7_grad(fixture *f)
{
    return udnnGetConvolutionBackwardFilterAlgorithm_v7(
        f->c.h, X(f), Y(f), CONV(f), fdesc(f, F32, 4, DIMS(6, 4, 3, 3)), 7, &f->count, f->bf_perf);
}
static udnnStatus_t o_bf_v7_perf(fixture *f)
{
    return udnnGetConvolutionBackwardFilterAlgorithm_v7(f->c.h, X(f), Y(f), CONV(f), W(f), 7,
                                                        &f->count, NULL);
}
static udnnStatus_t o_find_requested(fixture *f)
{
    return udnnFindConvolutionForwardAlgorithm(f->c.h, X(f), W(f), CONV(f), Y(f), 0, &f->count,
                                               f->fwd_perf);
}
static udnnStatus_t o_find_conv_unset(fixture *f)
{
    return udnnFindConvolutionForwardAlgorithm(f->c.h, X(f), W(f), cdesc(f, 0, 0, 1, F32, 2), Y(f),
                                               8, &f->count, f->fwd_perf);
}
static udnnStatus_t o_bd_find_returned(fixture *f)
{
    return udnnFindConvolutionBackwardDataAlgorithm(f->c.h, W(f), Y(f), CONV(f), X(f), 6, NULL,
                                                    f->bd_perf);
}
static udnnStatus_t o_bf_find_type(fixture *f)
{
    return udnnFindConvolutionBackwardFilterAlgorithm(
        f->c.h, X(f), tdesc(f, UDNN_DATA_DOUBLE, 4, DIMS(2, 6, 7, 7)), CONV(f), W(f), 7, &f->count,
        f->bf_perf);
}
static udnnStatus_t o_findex_x(fixture *f)
{
    return udnnFindConvolutionForwardAlgorithmEx(f->c.h, X(f), NULL, W(f), PW(f), CONV(f), Y(f),
                                                 PY(f), 8, &f->count, f->fwd_perf, NULL, 0);
}
static udnnStatus_t o_findex_requested(fixture *f)
{
    return udnnFindConvolutionForwardAlgorithmEx(f->c.h, X(f), PX(f), W(f), PW(f), CONV(f), Y(f),
                                                 PY(f), 0, &f->count, f->fwd_perf, NULL, 0);
}
static udnnStatus_t o_bd_findex_dy(fixture *f)
{
    return udnnFindConvolutionBackwardDataAlgorithmEx(
        f->c.h, W(f), PW(f), Y(f), NULL, CONV(f), X(f), PDX(f), 6, &f->count, f->bd_perf, NULL, 0);
}
static udnnStatus_t o_bf_findex_dw(fixture *f)
{
    return udnnFindConvolutionBackwardFilterAlgorithmEx(
        f->c.h, X(f), PX(f), Y(f), PDY(f), CONV(f), W(f), NULL, 7, &f->count, f->bf_perf, NULL, 0);
}
static udnnStatus_t o_ws_range(fixture *f)
{
    return udnnGetConvolutionForwardWorkspaceSize(f->c.h, X(f), W(f), CONV(f), Y(f),
                                                  (udnnConvolutionFwdAlgo_t)9, &f->size);
}
static udnnStatus_t o_ws_missing(fixture *f)
{
    return udnnGetConvolutionForwardWorkspaceSize(f->c.h, X(f), W(f), CONV(f), Y(f),
                                                  UDNN_CONVOLUTION_FWD_ALGO_FFT, &f->size);
}
static udnnStatus_t o_ws_size_null(fixture *f)
{
    return udnnGetConvolutionForwardWorkspaceSize(f->c.h, X(f), W(f), CONV(f), Y(f),
                                                  UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, NULL);
}
static udnnStatus_t o_ws_shape(fixture *f)
{
    return udnnGetConvolutionForwardWorkspaceSize(
        f->c.h, X(f), W(f), CONV(f), tdesc(f, F32, 4, DIMS(2, 6, 5, 5)),
        UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, &f->size);
}
static udnnStatus_t o_bd_ws_missing(fixture *f)
{
    return udnnGetConvolutionBackwardDataWorkspaceSize(
        f->c.h, W(f), Y(f), CONV(f), X(f), UDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD, &f->size);
}
static udnnStatus_t o_bd_ws_range(fixture *f)
{
    return udnnGetConvolutionBackwardDataWorkspaceSize(f->c.h, W(f), Y(f), CONV(f), X(f),
                                                       (udnnConvolutionBwdDataAlgo_t)-2, &f->size);
}
static udnnStatus_t o_bf_ws_missing(fixture *f)
{
    return udnnGetConvolutionBackwardFilterWorkspaceSize(
        f->c.h, X(f), Y(f), CONV(f), W(f), UDNN_CONVOLUTION_BWD_FILTER_ALGO_3, &f->size);
}
static udnnStatus_t o_bf_ws_range(fixture *f)
{
    return udnnGetConvolutionBackwardFilterWorkspaceSize(
        f->c.h, X(f), Y(f), CONV(f), W(f), (udnnConvolutionBwdFilterAlgo_t)7, &f->size);
}

#define FWD "udnnConvolutionForward:"
#define BD "udnnConvolutionBackwardData:"
#define BF "udnnConvolutionBackwardFilter:"
#define BB "udnnConvolutionBackwardBias:"
#define CBA "udnnConvolutionBiasActivationForward:"

static const rule op_rules[] = {
    {"fwd handle NULL", o_fwd_handle, BAD, FWD, "handle", NULL},
    {"fwd alpha NULL", o_fwd_alpha, BAD, FWD, "alpha is NULL", NULL},
    {"fwd beta NULL", o_fwd_beta, BAD, FWD, "beta is NULL", NULL},
    {"fwd x NULL", o_fwd_x, BAD, FWD, "x is NULL", NULL},
    {"fwd w NULL", o_fwd_w, BAD, FWD, "w is NULL", NULL},
    {"fwd y NULL", o_fwd_y, BAD, FWD, "y is NULL", NULL},
    {"fwd in place", o_fwd_in_place, BAD, FWD, "y is x", "in-place"},
    {"fwd xDesc NULL", o_fwd_xdesc_null, BAD, FWD, "xDesc is NULL", NULL},
    {"fwd xDesc unset", o_fwd_xdesc_unset, BAD, FWD, "xDesc has not been set", NULL},
    {"fwd wDesc NULL", o_fwd_wdesc_null, BAD, FWD, "wDesc is NULL", NULL},
    {"fwd wDesc unset", o_fwd_wdesc_unset, BAD, FWD, "wDesc has not been set", NULL},
    {"fwd convDesc NULL", o_fwd_conv_null, BAD, FWD, "convDesc is NULL", NULL},
    {"fwd convDesc unset", o_fwd_conv_unset, BAD, FWD, "convDesc has not been set", NULL},
    {"fwd yDesc NULL", o_fwd_ydesc_null, BAD, FWD, "yDesc is NULL", NULL},
    {"fwd yDesc unset", o_fwd_ydesc_unset, BAD, FWD, "yDesc has not been set", NULL},
    {"fwd int8 data", o_fwd_int8, UNSUPPORTED, FWD, "xDesc has data type s8", NULL},
    {"fwd w type", o_fwd_w_type, BAD, FWD, "wDesc has data type f64", "xDesc has f32"},
    {"fwd y type", o_fwd_y_type, BAD, FWD, "yDesc has data type bf16", "xDesc has f32"},
    {"fwd x rank", o_fwd_x_rank, BAD, FWD, "xDesc has 5 dimensions", "convDesc"},
    {"fwd w rank", o_fwd_w_rank, BAD, FWD, "wDesc has 5 dimensions", NULL},
    {"fwd y rank", o_fwd_y_rank, BAD, FWD, "yDesc has 5 dimensions", NULL},
    {"fwd channels", o_fwd_channels, BAD, FWD, "wDesc has 3 input channels per group, xDesc has 4",
     NULL},
    {"fwd groups vs C", o_fwd_groups_c, BAD, FWD, "convDesc has 3 groups", "xDesc"},
    {"fwd groups vs K", o_fwd_groups_k, BAD, FWD, "wDesc has 7 output channels", "groups"},
    {"fwd y height", o_fwd_y_spatial, BAD, FWD,
     "yDesc has dimension 2 of size 8, the convolution gives 7", NULL},
    {"fwd y width", o_fwd_y_width, BAD, FWD,
     "yDesc has dimension 3 of size 6, the convolution gives 7", NULL},
    {"fwd y channels", o_fwd_y_channels, BAD, FWD, "yDesc has dimension 1 of size 5", NULL},
    {"fwd y batch", o_fwd_y_batch, BAD, FWD, "yDesc has dimension 0 of size 3", NULL},
    {"fwd filter too big", o_fwd_too_big, BAD, FWD, "wDesc has a dilated filter of 11",
     "dimension 3 (w)"},
    {"fwd f32 with f64 compute", o_fwd_compute_double, BAD, FWD, "convDesc has compute type f64",
     NULL},
    {"fwd f32 with f16 compute", o_fwd_compute_half, BAD, FWD, "convDesc has compute type f16",
     NULL},
    {"fwd bf16 with f16 compute", o_fwd_bf16_half, BAD, FWD, "convDesc has compute type f16",
     "bf16"},
    {"fwd f64 with f32 compute", o_fwd_double_float, BAD, FWD, "convDesc has compute type f32",
     "f64"},
    {"fwd f16 with f64 compute", o_fwd_half_double, BAD, FWD, "convDesc has compute type f64",
     "f16"},
    {"fwd algo 8", o_fwd_algo_count, BAD, FWD, "algo is 8", NULL},
    {"fwd algo -1", o_fwd_algo_negative, BAD, FWD, "algo is -1", NULL},
    {"fwd algo DIRECT", o_fwd_algo_direct, UNSUPPORTED, FWD, "algo 3 (DIRECT)", "not available"},
    {"fwd algo WINOGRAD_NONFUSED", o_fwd_algo_winograd, UNSUPPORTED, FWD, "algo 7",
     "not available"},
    {"fwd 3-D conv, 2-D data", o_fwd_3d_conv, BAD, FWD, "xDesc has 4 dimensions", "3 spatial"},
    {"bwd data handle NULL", o_bd_handle, BAD, BD, "handle", NULL},
    {"bwd data alpha NULL", o_bd_alpha, BAD, BD, "alpha is NULL", NULL},
    {"bwd data w NULL", o_bd_w, BAD, BD, "w is NULL", NULL},
    {"bwd data dy NULL", o_bd_dy, BAD, BD, "dy is NULL", NULL},
    {"bwd data dx NULL", o_bd_dx, BAD, BD, "dx is NULL", NULL},
    {"bwd data in place", o_bd_in_place, BAD, BD, "dx is dy", NULL},
    {"bwd data dy dims", o_bd_dy_dims, BAD, BD,
     "dyDesc has dimension 3 of size 9, the convolution gives 7", NULL},
    {"bwd data dy type", o_bd_dy_type, BAD, BD, "dyDesc has data type f16", "dxDesc"},
    {"bwd data dx channels", o_bd_dx_channels, BAD, BD, "wDesc has 2 input channels per group",
     "dxDesc has 3 (6 channels in 2 groups)"},
    {"bwd data dxDesc NULL", o_bd_dxdesc_null, BAD, BD, "dxDesc is NULL", NULL},
    {"bwd data dyDesc NULL", o_bd_dydesc_null, BAD, BD, "dyDesc is NULL", NULL},
    {"bwd data convDesc NULL", o_bd_conv_null, BAD, BD, "convDesc is NULL", NULL},
    {"bwd data algo 6", o_bd_algo_count, BAD, BD, "algo is 6", NULL},
    {"bwd data algo FFT", o_bd_algo_fft, UNSUPPORTED, BD, "algo 2", "not available"},
    {"bwd data bf16 compute", o_bd_compute, BAD, BD, "convDesc has compute type bf16", NULL},
    {"bwd filter handle NULL", o_bf_handle, BAD, BF, "handle", NULL},
    {"bwd filter beta NULL", o_bf_beta, BAD, BF, "beta is NULL", NULL},
    {"bwd filter x NULL", o_bf_x, BAD, BF, "x is NULL", NULL},
    {"bwd filter dy NULL", o_bf_dy, BAD, BF, "dy is NULL", NULL},
    {"bwd filter dw NULL", o_bf_dw, BAD, BF, "dw is NULL", NULL},
    {"bwd filter in place", o_bf_in_place, BAD, BF, "dw is x", NULL},
    {"bwd filter dw type", o_bf_dw_type, BAD, BF, "dwDesc has data type bf16", NULL},
    {"bwd filter dw channels", o_bf_dw_channels, BAD, BF, "dwDesc has 4 input channels per group",
     "xDesc has 2"},
    {"bwd filter dwDesc NULL", o_bf_dw_null, BAD, BF, "dwDesc is NULL", NULL},
    {"bwd filter dy rank", o_bf_dy_rank, BAD, BF, "dyDesc has 3 dimensions", NULL},
    {"bwd filter algo 7", o_bf_algo_count, BAD, BF, "algo is 7", NULL},
    {"bwd filter algo FFT", o_bf_algo_fft, UNSUPPORTED, BF, "algo 2 (FFT)", "not available"},
    {"bwd bias handle NULL", o_bb_handle, BAD, BB, "handle", NULL},
    {"bwd bias alpha NULL", o_bb_alpha, BAD, BB, "alpha is NULL", NULL},
    {"bwd bias beta NULL", o_bb_beta, BAD, BB, "beta is NULL", NULL},
    {"bwd bias dy NULL", o_bb_dy, BAD, BB, "dy is NULL", NULL},
    {"bwd bias db NULL", o_bb_db, BAD, BB, "db is NULL", NULL},
    {"bwd bias dyDesc NULL", o_bb_dydesc_null, BAD, BB, "dyDesc is NULL", NULL},
    {"bwd bias dbDesc unset", o_bb_dbdesc_unset, BAD, BB, "dbDesc has not been set", NULL},
    {"bwd bias dy rank", o_bb_dy_rank, BAD, BB, "dyDesc has 3 dimensions", NULL},
    {"bwd bias int32", o_bb_dy_int, UNSUPPORTED, BB, "dyDesc has data type s32", NULL},
    {"bwd bias db batch", o_bb_db_batch, BAD, BB, "dbDesc has dimension 0 of size 2", NULL},
    {"bwd bias db spatial", o_bb_db_spatial, BAD, BB, "dbDesc has dimension 3 of size 7", NULL},
    {"bwd bias db channels", o_bb_db_channels, BAD, BB, "dbDesc has 5 channels, dyDesc has 6",
     NULL},
    {"bwd bias db type", o_bb_db_type, BAD, BB, "dbDesc has data type f16", NULL},
    {"bwd bias db rank", o_bb_db_rank, BAD, BB, "dbDesc has 5 dimensions, dyDesc has 4", NULL},
    {"cba handle NULL", o_cba_handle, BAD, CBA, "handle", NULL},
    {"cba alpha1 NULL", o_cba_alpha1, BAD, CBA, "alpha1 is NULL", NULL},
    {"cba alpha2 NULL", o_cba_alpha2, BAD, CBA, "alpha2 is NULL", NULL},
    {"cba z NULL", o_cba_z, BAD, CBA, "z is NULL", NULL},
    {"cba bias NULL", o_cba_bias, BAD, CBA, "bias is NULL", NULL},
    {"cba y NULL", o_cba_y, BAD, CBA, "y is NULL", NULL},
    {"cba activationDesc NULL", o_cba_act_null, BAD, CBA, "activationDesc is NULL", NULL},
    {"cba zDesc NULL", o_cba_zdesc_null, BAD, CBA, "zDesc is NULL", NULL},
    {"cba biasDesc unset", o_cba_biasdesc_unset, BAD, CBA, "biasDesc has not been set", NULL},
    {"cba z dims", o_cba_z_dims, BAD, CBA, "zDesc has dimension 3 of size 8", "yDesc has 7"},
    {"cba z type", o_cba_z_type, BAD, CBA, "zDesc has data type f16", NULL},
    {"cba bias shape", o_cba_bias_shape, BAD, CBA, "biasDesc has dimension 2 of size 7", NULL},
    {"cba bias channels", o_cba_bias_channels, BAD, CBA, "biasDesc has 4 channels, yDesc has 6",
     NULL},
    {"cba bias type", o_cba_bias_type, BAD, CBA, "biasDesc has data type f64", NULL},
    {"cba bias rank", o_cba_bias_rank, BAD, CBA, "biasDesc has 2 dimensions", NULL},
    {"cba algo 8", o_cba_algo_count, BAD, CBA, "algo is 8", NULL},
    {"cba algo FFT", o_cba_algo_fft, UNSUPPORTED, CBA, "algo 4 (FFT)", "not available"},
    {"cba z is y, other strides", o_cba_z_strides, BAD, CBA, "z is y", "zDesc has stride"},
    {"max count handle NULL", o_count_handle, BAD, "udnnGetConvolutionForwardAlgorithmMaxCount",
     "handle", NULL},
    {"max count NULL", o_count_null, BAD, "udnnGetConvolutionBackwardDataAlgorithmMaxCount",
     "count is NULL", NULL},
    {"max count bf NULL", o_count_bf_null, BAD, "udnnGetConvolutionBackwardFilterAlgorithmMaxCount",
     "count is NULL", NULL},
    {"v7 requested 0", o_v7_requested, BAD, "udnnGetConvolutionForwardAlgorithm_v7",
     "requestedAlgoCount is 0", NULL},
    {"v7 returned NULL", o_v7_returned, BAD, "udnnGetConvolutionForwardAlgorithm_v7",
     "returnedAlgoCount is NULL", NULL},
    {"v7 perf NULL", o_v7_perf, BAD, "udnnGetConvolutionForwardAlgorithm_v7", "perfResults is NULL",
     NULL},
    {"v7 destDesc dims", o_v7_dest, BAD, "udnnGetConvolutionForwardAlgorithm_v7",
     "destDesc has dimension 2 of size 6", NULL},
    {"v7 handle NULL", o_v7_handle, BAD, "udnnGetConvolutionForwardAlgorithm_v7", "handle", NULL},
    {"bwd data v7 diffDesc", o_bd_v7_diff, BAD, "udnnGetConvolutionBackwardDataAlgorithm_v7",
     "diffDesc has dimension 1 of size 3", NULL},
    {"bwd data v7 requested", o_bd_v7_requested, BAD, "udnnGetConvolutionBackwardDataAlgorithm_v7",
     "requestedAlgoCount is -3", NULL},
    {"bwd filter v7 gradDesc", o_bf_v7_grad, BAD, "udnnGetConvolutionBackwardFilterAlgorithm_v7",
     "gradDesc has 4 input channels per group", "srcDesc"},
    {"bwd filter v7 perf NULL", o_bf_v7_perf, BAD, "udnnGetConvolutionBackwardFilterAlgorithm_v7",
     "perfResults is NULL", NULL},
    {"find requested 0", o_find_requested, BAD,
     "udnnFindConvolutionForwardAlgorithm:", "requestedAlgoCount", NULL},
    {"find convDesc unset", o_find_conv_unset, BAD,
     "udnnFindConvolutionForwardAlgorithm:", "convDesc has not been set", NULL},
    {"bwd data find returned NULL", o_bd_find_returned, BAD,
     "udnnFindConvolutionBackwardDataAlgorithm:", "returnedAlgoCount", NULL},
    {"bwd filter find dy type", o_bf_find_type, BAD,
     "udnnFindConvolutionBackwardFilterAlgorithm:", "dyDesc has data type f64", NULL},
    {"findEx x NULL", o_findex_x, BAD, "udnnFindConvolutionForwardAlgorithmEx", "x is NULL", NULL},
    {"findEx requested 0", o_findex_requested, BAD, "udnnFindConvolutionForwardAlgorithmEx",
     "requestedAlgoCount", NULL},
    {"bwd data findEx dy NULL", o_bd_findex_dy, BAD, "udnnFindConvolutionBackwardDataAlgorithmEx",
     "dy is NULL", NULL},
    {"bwd filter findEx dw NULL", o_bf_findex_dw, BAD,
     "udnnFindConvolutionBackwardFilterAlgorithmEx", "dw is NULL", NULL},
    {"workspace algo 9", o_ws_range, BAD, "udnnGetConvolutionForwardWorkspaceSize", "algo is 9",
     NULL},
    {"workspace algo FFT", o_ws_missing, UNSUPPORTED, "udnnGetConvolutionForwardWorkspaceSize",
     "algo 4 (FFT)", "not available"},
    {"workspace size NULL", o_ws_size_null, BAD, "udnnGetConvolutionForwardWorkspaceSize",
     "sizeInBytes is NULL", NULL},
    {"workspace yDesc dims", o_ws_shape, BAD, "udnnGetConvolutionForwardWorkspaceSize",
     "yDesc has dimension 2 of size 5", NULL},
    {"bwd data workspace WINOGRAD", o_bd_ws_missing, UNSUPPORTED,
     "udnnGetConvolutionBackwardDataWorkspaceSize", "algo 4 (WINOGRAD)", NULL},
    {"bwd data workspace algo -2", o_bd_ws_range, BAD,
     "udnnGetConvolutionBackwardDataWorkspaceSize", "algo is -2", NULL},
    {"bwd filter workspace ALGO_3", o_bf_ws_missing, UNSUPPORTED,
     "udnnGetConvolutionBackwardFilterWorkspaceSize", "algo 3", "not available"},
    {"bwd filter workspace algo 7", o_bf_ws_range, BAD,
     "udnnGetConvolutionBackwardFilterWorkspaceSize", "algo is 7", NULL},
};

#define N_DESC_RULES ((int)(sizeof desc_rules / sizeof *desc_rules))
#define N_OP_RULES ((int)(sizeof op_rules / sizeof *op_rules))

static void check_rule(const rule *r)
{
    fixture f;
    fixture_init(&f);
    udnnStatus_t st = r->call(&f);
    char msg[1024];
    udnnGetLastErrorString(msg, sizeof msg);
    ck_assert_msg(st == r->expect, "%s: status %d, expected %d; message: %s", r->name, (int)st,
                  (int)r->expect, msg);
    const char *want[3] = {r->fn, r->arg, r->more};
    for (int i = 0; i < 3; i++)
        ck_assert_msg(want[i] == NULL || strstr(msg, want[i]) != NULL,
                      "%s: message \"%s\" does not mention \"%s\"", r->name, msg, want[i]);
    fixture_free(&f);
}

START_TEST(test_desc_rule)
{
    check_rule(&desc_rules[_i]);
}
END_TEST

START_TEST(test_op_rule)
{
    check_rule(&op_rules[_i]);
}
END_TEST

/* ---- the suite
 * ---------------------------------------------------------------------------------------- */

int main(void)
{
    if (load_shapes() != 0) return EXIT_FAILURE;
    Suite *s = suite_create("conv");

    TCase *tc = tcase_create("descriptors");
    tcase_add_test(tc, test_desc_defaults);
    tcase_add_test(tc, test_desc_round_trip);
    tcase_add_test(tc, test_output_dims);
    tcase_add_loop_test(tc, test_desc_rule, 0, N_DESC_RULES);
    suite_add_tcase(s, tc);

    tc = tcase_create("validation");
    tcase_add_loop_test(tc, test_op_rule, 0, N_OP_RULES);
    suite_add_tcase(s, tc);

    tc = tcase_create("hand");
    tcase_add_loop_test(tc, test_hand_computed, 0, 4);
    suite_add_tcase(s, tc);

    tc = tcase_create("directions");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_directions, 0, nshapes * 12);
    suite_add_tcase(s, tc);

    tc = tcase_create("finite differences");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_finite_differences, 0, nshapes * 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("bias");
    tcase_add_loop_test(tc, test_backward_bias, 0, 24);
    tcase_add_loop_test(tc, test_bias_activation, 0, 24);
    suite_add_tcase(s, tc);

    tc = tcase_create("algorithms");
    tcase_add_test(tc, test_algo_max_count);
    tcase_add_loop_test(tc, test_algo_ranking, 0, DIR_COUNT * 3 * 4);
    tcase_add_loop_test(tc, test_algo_workspace, 0, DIR_COUNT);
    suite_add_tcase(s, tc);

    return tu_run_suite(s);
}
