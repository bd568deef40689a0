/* check_pooling.c - the pooling descriptor, its output-dim queries,
 * PoolingForward and PoolingBackward on every backend: every mode x type x
 * layout over tests/inputs/pool_shapes.txt (2-D and 3-D) against an
 * expectation computed here in double, hand-computed values, alpha/beta,
 * NaN rules, finite differences in DOUBLE, and every validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static const udnnPoolingMode_t pool_modes[] = {
    UDNN_POOLING_MAX, UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
    UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, UDNN_POOLING_MAX_DETERMINISTIC};
static const char *const mode_names[] = {"max", "avg_incl", "avg_excl", "max_det"};
#define N_MODES 4
#define N_TYPES 4
#define N_LAYOUTS 3

static int is_max(udnnPoolingMode_t m)
{
    return m == UDNN_POOLING_MAX || m == UDNN_POOLING_MAX_DETERMINISTIC;
}

/* ---- the shape table ------------------------------------------------------------- */

typedef struct {
    int nb; /* spatial dims: 2 or 3 */
    int n, c;
    int in[3], window[3], pad[3], stride[3]; /* nb entries each */
} pool_shape;

#define MAX_SHAPES 32

static int read_ints(const char **p, int *out, int count)
{
    for (int i = 0; i < count; i++) {
        char *end;
        long v = strtol(*p, &end, 10);
        if (end == *p) return 0;
        out[i] = (int)v;
        *p = end;
    }
    return 1;
}

static int load_shapes(pool_shape *out)
{
    char path[512], line[256];
    FILE *f = fopen(tu_input_path("pool_shapes.txt", path, sizeof path), "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    int count = 0;
    while (fgets(line, sizeof line, f) != NULL && count < MAX_SHAPES) {
        const char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        if (*p == '#' || *p == '\n' || *p == '\0') continue;
        pool_shape *s = &out[count];
        memset(s, 0, sizeof *s);
        int ok = read_ints(&p, &s->nb, 1) && (s->nb == 2 || s->nb == 3) &&
                 read_ints(&p, &s->n, 1) && read_ints(&p, &s->c, 1) &&
                 read_ints(&p, s->in, s->nb) && read_ints(&p, s->window, s->nb) &&
                 read_ints(&p, s->pad, s->nb) && read_ints(&p, s->stride, s->nb);
        ck_assert_msg(ok, "%s: bad line: %s", path, line);
        count++;
    }
    fclose(f);
    ck_assert_int_gt(count, 0);
    return count;
}

static void x_dims(const pool_shape *s, int dims[5])
{
    dims[0] = s->n;
    dims[1] = s->c;
    for (int i = 0; i < s->nb; i++) dims[2 + i] = s->in[i];
}

static void y_dims(const pool_shape *s, int dims[5])
{
    dims[0] = s->n;
    dims[1] = s->c;
    for (int i = 0; i < s->nb; i++)
        dims[2 + i] = 1 + (s->in[i] + 2 * s->pad[i] - s->window[i]) / s->stride[i];
}

/* The geometry as three dims d, h, w (2-D: d is 1 wide, window 1). */
typedef struct {
    int n, c, in[3], out[3], window[3], pad[3], stride[3];
} geom3;

static geom3 geom_of(const pool_shape *s)
{
    geom3 g;
    int lead = 3 - s->nb, yd[5];
    y_dims(s, yd);
    g.n = s->n;
    g.c = s->c;
    for (int i = 0; i < 3; i++) {
        int j = i - lead;
        g.in[i] = j < 0 ? 1 : s->in[j];
        g.out[i] = j < 0 ? 1 : yd[2 + j];
        g.window[i] = j < 0 ? 1 : s->window[j];
        g.pad[i] = j < 0 ? 0 : s->pad[j];
        g.stride[i] = j < 0 ? 1 : s->stride[j];
    }
    return g;
}

static int64_t idx5(const int dims[3], int c_count, int n, int c, int d, int h, int w)
{
    return (((int64_t)n * c_count + c) * dims[0] + d) * ((int64_t)dims[1] * dims[2]) +
           (int64_t)h * dims[2] + w;
}

/* Visits the in-bounds positions of the window of output (od, oh, ow) in
 * row-major order, and counts them; returns the logical x index of the
 * first maximum of x there, the sum in *sum. */
static int64_t window_scan(const geom3 *g, const tu_tensor *x, int n, int c, const int o[3],
                           double *sum, int *inside, double *max)
{
    int64_t best_at = -1;
    *sum = 0.0;
    *inside = 0;
    *max = -INFINITY;
    for (int kd = 0; kd < g->window[0]; kd++)
        for (int kh = 0; kh < g->window[1]; kh++)
            for (int kw = 0; kw < g->window[2]; kw++) {
                int d = o[0] * g->stride[0] - g->pad[0] + kd;
                int h = o[1] * g->stride[1] - g->pad[1] + kh;
                int w = o[2] * g->stride[2] - g->pad[2] + kw;
                if (d < 0 || d >= g->in[0] || h < 0 || h >= g->in[1] || w < 0 ||
                    w >= g->in[2])
                    continue;
                int64_t at = idx5(g->in, g->c, n, c, d, h, w);
                double v = tu_get(x, at);
                *sum += v;
                ++*inside;
                if (best_at < 0 || v > *max) {
                    *max = v;
                    best_at = at;
                }
            }
    return best_at;
}

/* What an average divides its window's sum by. */
static double divisor(udnnPoolingMode_t mode, const geom3 *g, int inside)
{
    if (mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        return g->window[0] * g->window[1] * g->window[2];
    return inside;
}

static double window_value(udnnPoolingMode_t mode, const geom3 *g, double sum, int inside,
                           double max)
{
    return is_max(mode) ? max : sum / divisor(mode, g, inside);
}

/* y = pool(x) over logical elements. */
static void expect_fwd(udnnPoolingMode_t mode, const pool_shape *s, const tu_tensor *x,
                       double *y)
{
    geom3 g = geom_of(s);
    int o[3];
    for (int n = 0; n < g.n; n++)
        for (int c = 0; c < g.c; c++)
            for (o[0] = 0; o[0] < g.out[0]; o[0]++)
                for (o[1] = 0; o[1] < g.out[1]; o[1]++)
                    for (o[2] = 0; o[2] < g.out[2]; o[2]++) {
                        double sum, max;
                        int inside;
                        window_scan(&g, x, n, c, o, &sum, &inside, &max);
                        y[idx5(g.out, g.c, n, c, o[0], o[1], o[2])] =
                            window_value(mode, &g, sum, inside, max);
                    }
}

/* dx = pool'(dy): each dy scattered to its window's max or spread evenly. */
static void expect_bwd(udnnPoolingMode_t mode, const pool_shape *s, const tu_tensor *x,
                       const tu_tensor *dy, double *dx)
{
    geom3 g = geom_of(s);
    memset(dx, 0, (size_t)x->count * sizeof *dx);
    int o[3];
    for (int n = 0; n < g.n; n++)
        for (int c = 0; c < g.c; c++)
            for (o[0] = 0; o[0] < g.out[0]; o[0]++)
                for (o[1] = 0; o[1] < g.out[1]; o[1]++)
                    for (o[2] = 0; o[2] < g.out[2]; o[2]++) {
                        double sum, max;
                        int inside;
                        int64_t best = window_scan(&g, x, n, c, o, &sum, &inside, &max);
                        double grad = tu_get(dy, idx5(g.out, g.c, n, c, o[0], o[1], o[2]));
                        if (is_max(mode)) {
                            dx[best] += grad;
                            continue;
                        }
                        double share = grad / divisor(mode, &g, inside);
                        for (int kd = 0; kd < g.window[0]; kd++)
                            for (int kh = 0; kh < g.window[1]; kh++)
                                for (int kw = 0; kw < g.window[2]; kw++) {
                                    int d = o[0] * g.stride[0] - g.pad[0] + kd;
                                    int h = o[1] * g.stride[1] - g.pad[1] + kh;
                                    int w = o[2] * g.stride[2] - g.pad[2] + kw;
                                    if (d >= 0 && d < g.in[0] && h >= 0 && h < g.in[1] &&
                                        w >= 0 && w < g.in[2])
                                        dx[idx5(g.in, g.c, n, c, d, h, w)] += share;
                                }
                    }
}

/* ---- helpers ----------------------------------------------------------------------------- */

static udnnPoolingDescriptor_t make_pool(udnnPoolingMode_t mode, udnnNanPropagation_t nan,
                                         const pool_shape *s)
{
    udnnPoolingDescriptor_t d;
    tu_ok(udnnCreatePoolingDescriptor(&d));
    tu_ok(udnnSetPoolingNdDescriptor(d, mode, nan, s->nb, s->window, s->pad, s->stride));
    return d;
}

static udnnStatus_t run_fwd(udnnHandle_t h, udnnPoolingDescriptor_t d, double alpha,
                            tu_tensor *x, double beta, tu_tensor *y)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnPoolingForward(h, d, &a, x->desc, tu_buf_ptr(&x->buf), &b, y->desc,
                              tu_buf_ptr(&y->buf));
}

static udnnStatus_t run_bwd(udnnHandle_t h, udnnPoolingDescriptor_t d, double alpha,
                            tu_tensor *y, tu_tensor *dy, tu_tensor *x, double beta,
                            tu_tensor *dx)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnPoolingBackward(h, d, &a, y->desc, tu_buf_ptr(&y->buf), dy->desc,
                               tu_buf_ptr(&dy->buf), x->desc, tu_buf_ptr(&x->buf), &b, dx->desc,
                               tu_buf_ptr(&dx->buf));
}

/* Max modes get small integers, so windows often tie and the first
 * maximum rule is exercised; x[0] = 5 keeps every reference nonzero. */
static void fill_x(tu_tensor *x, udnnPoolingMode_t mode)
{
    if (is_max(mode)) {
        for (int64_t i = 0; i < x->count; i++) tu_set(x, i, tu_int(-3, 3));
        tu_set(x, 0, 5.0);
        tu_upload(x);
    } else {
        tu_fill_uniform(x, -2.0, 2.0);
    }
}

/* The tensors of one problem, in one type and layout. */
typedef struct {
    tu_tensor x, y, dy, dx;
} pool_tensors;

static void tensors_init(pool_tensors *t, udnnHandle_t h, udnnDataType_t type, tu_layout l,
                         const pool_shape *s)
{
    int xd[5], yd[5];
    x_dims(s, xd);
    y_dims(s, yd);
    tu_tensor_init(&t->x, h, type, s->nb + 2, xd, l);
    tu_tensor_init(&t->y, h, type, s->nb + 2, yd, l);
    tu_tensor_init(&t->dy, h, type, s->nb + 2, yd, l);
    tu_tensor_init(&t->dx, h, type, s->nb + 2, xd, l);
}

static void tensors_free(pool_tensors *t)
{
    tu_tensor_free(&t->x);
    tu_tensor_free(&t->y);
    tu_tensor_free(&t->dy);
    tu_tensor_free(&t->dx);
}

static void describe(char *buf, size_t n, udnnBackend_t be, int mode, udnnDataType_t t,
                     tu_layout l, int shape)
{
    snprintf(buf, n, "%s %s %s %s shape line %d", tu_backend_name(be), mode_names[mode],
             tu_dtype_name(t), tu_layout_name(l), shape + 1);
}

/* ---- forward and backward over mode x type x layout x shapes ------------------------------ */

/* One problem forward then backward: alpha/beta as given; out tensors
 * hold NaN poison when beta is 0, random values otherwise. */
static void check_problem(udnnHandle_t h, udnnBackend_t be, int mode_index, udnnDataType_t t,
                          tu_layout l, const pool_shape *s, int shape_index, double alpha,
                          double beta)
{
    udnnPoolingMode_t mode = pool_modes[mode_index];
    udnnPoolingDescriptor_t d = make_pool(mode, UDNN_NOT_PROPAGATE_NAN, s);
    pool_tensors p;
    tensors_init(&p, h, t, l, s);
    char what[128];
    describe(what, sizeof what, be, mode_index, t, l, shape_index);

    /* the library's output dims agree with the formula */
    int yd[5], got[5];
    y_dims(s, yd);
    tu_ok(udnnGetPoolingNdForwardOutputDim(d, p.x.desc, s->nb + 2, got));
    for (int i = 0; i < s->nb + 2; i++) ck_assert_int_eq(got[i], yd[i]);

    fill_x(&p.x, mode);
    int64_t most = p.x.count > p.y.count ? p.x.count : p.y.count;
    double *ref = malloc((size_t)most * sizeof *ref);
    expect_fwd(mode, s, &p.x, ref);
    tu_blend_drawn(ref, alpha, beta, &p.y);
    tu_ok(run_fwd(h, d, alpha, &p.x, beta, &p.y));
    tu_check_tensor(&p.y, ref, what);

    /* backward takes the forward's y as it stands (alpha = 1, beta = 0) */
    tu_ok(run_fwd(h, d, 1.0, &p.x, 0.0, &p.y));
    tu_download(&p.y);
    tu_fill_uniform(&p.dy, -1.0, 1.0);
    expect_bwd(mode, s, &p.x, &p.dy, ref);
    tu_blend_drawn(ref, alpha, beta, &p.dx);
    tu_ok(run_bwd(h, d, alpha, &p.y, &p.dy, &p.x, beta, &p.dx));
    tu_check_tensor(&p.dx, ref, what);

    free(ref);
    tensors_free(&p);
    udnnDestroyPoolingDescriptor(d);
}

START_TEST(test_modes)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    pool_shape shapes[MAX_SHAPES];
    int ns = load_shapes(shapes);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < ns; s++) check_problem(h, bk, mode, t, l, &shapes[s], s, 1.0, 0.0);
    }
}
END_TEST

START_TEST(test_alpha_beta)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    pool_shape shapes[MAX_SHAPES];
    int ns = load_shapes(shapes);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < ns; s++) check_problem(h, bk, mode, t, l, &shapes[s], s, 1.5, -0.75);
    }
}
END_TEST

/* ---- hand-computed values -------------------------------------------------------------------- */

typedef struct {
    pool_shape s;
    double x[16], dy[4];
    double y[N_MODES][4], dx[N_MODES][16];
} hand_case;

static const hand_case hand[] = {
    /* 4x4 of 1..16, 2x2 windows, stride 2: no padding, so both averages agree */
    {{2, 1, 1, {4, 4}, {2, 2}, {0, 0}, {2, 2}},
     {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
     {1, 2, 3, 4},
     {{6, 8, 14, 16}, {3.5, 5.5, 11.5, 13.5}, {3.5, 5.5, 11.5, 13.5}, {6, 8, 14, 16}},
     {{0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4},
      {.25, .25, .5, .5, .25, .25, .5, .5, .75, .75, 1, 1, .75, .75, 1, 1},
      {.25, .25, .5, .5, .25, .25, .5, .5, .75, .75, 1, 1, .75, .75, 1, 1},
      {0, 0, 0, 0, 0, 1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4}}},
    /* 3x3 of 1..9, 2x2 windows, padding 1, stride 2: windows hold 1, 2, 2
     * and 4 inputs */
    {{2, 1, 1, {3, 3}, {2, 2}, {1, 1}, {2, 2}},
     {1, 2, 3, 4, 5, 6, 7, 8, 9},
     {1, 2, 3, 4},
     {{1, 3, 7, 9}, {0.25, 1.25, 2.75, 7}, {1, 2.5, 5.5, 7}, {1, 3, 7, 9}},
     {{1, 0, 2, 0, 0, 0, 3, 0, 4},
      {0.25, 0.5, 0.5, 0.75, 1, 1, 0.75, 1, 1},
      {1, 1, 1, 1.5, 1, 1, 1.5, 1, 1},
      {1, 0, 2, 0, 0, 0, 3, 0, 4}}},
};
#define N_HAND ((int)(sizeof hand / sizeof *hand))

START_TEST(test_hand_values)
{
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    const hand_case *c = &hand[_i / (N_MODES * N_TYPES)];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnPoolingDescriptor_t d;
        tu_ok(udnnCreatePoolingDescriptor(&d));
        tu_ok(udnnSetPooling2dDescriptor(d, pool_modes[mode], UDNN_NOT_PROPAGATE_NAN,
                                         c->s.window[0], c->s.window[1], c->s.pad[0],
                                         c->s.pad[1], c->s.stride[0], c->s.stride[1]));
        pool_tensors p;
        tensors_init(&p, h, t, TU_NCHW, &c->s);
        for (int64_t i = 0; i < p.x.count; i++) tu_set(&p.x, i, c->x[i]);
        for (int64_t i = 0; i < p.dy.count; i++) tu_set(&p.dy, i, c->dy[i]);
        tu_upload(&p.x);
        tu_upload(&p.dy);
        tu_ok(run_fwd(h, d, 1.0, &p.x, 0.0, &p.y));
        tu_check_tensor(&p.y, c->y[mode], mode_names[mode]);
        tu_ok(run_bwd(h, d, 1.0, &p.y, &p.dy, &p.x, 0.0, &p.dx));
        tu_check_tensor(&p.dx, c->dx[mode], mode_names[mode]);
        tensors_free(&p);
        udnnDestroyPoolingDescriptor(d);
    }
}
END_TEST

/* ---- NaN rules for max -------------------------------------------------------------------- */


/* x and dy uploaded, forward then backward with alpha 1 and beta 0, y
 * and dx downloaded, nothing written outside them. */
static void run_plain_pair(udnnHandle_t h, udnnPoolingDescriptor_t d, pool_tensors *p)
{
    tu_upload(&p->x);
    tu_upload(&p->dy);
    tu_ok(run_fwd(h, d, 1.0, &p->x, 0.0, &p->y));
    tu_ok(run_bwd(h, d, 1.0, &p->y, &p->dy, &p->x, 0.0, &p->dx));
    tu_download(&p->y);
    tu_download(&p->dx);
    ck_assert(tu_buf_guards_intact(&p->y.buf) && tu_buf_guards_intact(&p->dx.buf));
}
/* 1 x 4 input, 1 x 2 windows of stride 2. PROPAGATE: the first NaN is the
 * max and takes the gradient. NOT_PROPAGATE: NaNs are skipped; a window of
 * only NaNs gives NaN and its first position takes the gradient. */
typedef struct {
    udnnNanPropagation_t nan;
    double x[4], y[2], dx[4];
} nan_case;

static const nan_case nan_cases[] = {
    {UDNN_PROPAGATE_NAN, {NAN, 1, 2, 3}, {NAN, 3}, {1, 0, 0, 1}},
    {UDNN_NOT_PROPAGATE_NAN, {NAN, 1, 2, 3}, {1, 3}, {0, 1, 0, 1}},
    {UDNN_NOT_PROPAGATE_NAN, {NAN, NAN, 3, NAN}, {NAN, 3}, {1, 0, 1, 0}},
    {UDNN_PROPAGATE_NAN, {1, NAN, 3, NAN}, {NAN, NAN}, {0, 1, 0, 1}},
};
#define N_NAN ((int)(sizeof nan_cases / sizeof *nan_cases))

static int same_value(double got, double want)
{
    return isnan(want) ? isnan(got) : got == want;
}

START_TEST(test_max_nan)
{
    const nan_case *c = &nan_cases[_i % N_NAN];
    udnnPoolingMode_t mode = (_i / N_NAN) % 2 ? UDNN_POOLING_MAX_DETERMINISTIC : UDNN_POOLING_MAX;
    udnnDataType_t t = tu_float_types[_i / (2 * N_NAN)];
    const pool_shape s = {2, 1, 1, {1, 4}, {1, 2}, {0, 0}, {1, 2}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnPoolingDescriptor_t d = make_pool(mode, c->nan, &s);
        pool_tensors p;
        tensors_init(&p, h, t, TU_NCHW, &s);
        for (int i = 0; i < 4; i++) tu_set(&p.x, i, c->x[i]);
        for (int i = 0; i < 2; i++) tu_set(&p.dy, i, 1.0);
        run_plain_pair(h, d, &p);
        for (int i = 0; i < 2; i++)
            ck_assert_msg(same_value(tu_get(&p.y, i), c->y[i]), "case %d: y[%d] is %g, not %g",
                          _i % N_NAN, i, tu_get(&p.y, i), c->y[i]);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(tu_get(&p.dx, i) == c->dx[i], "case %d: dx[%d] is %g, not %g",
                          _i % N_NAN, i, tu_get(&p.dx, i), c->dx[i]);
        tensors_free(&p);
        udnnDestroyPoolingDescriptor(d);
    }
}
END_TEST

/* ---- rows wide enough for the GPU's 16-byte paths -------------------------------------------- */

/* The shape table's rows are at most 9 wide, so on the GPU its NCHW
 * problems take the row kernels' element-by-element edges only. These
 * rows are multiples of 16 bytes in every type where they can be (whole
 * 16-byte loads and stores, several items a row), with odd heights, both
 * paddings of the 3x3 / 2 max pooling, planes a 1-deep window skips, and
 * the 2x2 / 2 forward with windows 1 and 2 high. */
static const pool_shape wide_shapes[] = {
    {2, 2, 3, {9, 16}, {3, 3}, {1, 1}, {2, 2}},
    {2, 1, 2, {8, 24}, {3, 3}, {0, 0}, {2, 2}},
    {2, 1, 3, {7, 18}, {3, 3}, {1, 1}, {2, 2}},
    {3, 1, 2, {5, 6, 16}, {1, 3, 3}, {0, 1, 1}, {2, 2, 2}},
    {2, 2, 3, {6, 16}, {2, 2}, {0, 0}, {2, 2}},
    {2, 1, 2, {7, 21}, {2, 2}, {0, 0}, {2, 2}},
    {2, 1, 2, {5, 16}, {1, 2}, {0, 0}, {2, 2}},
    {3, 1, 2, {3, 4, 16}, {2, 2, 2}, {1, 0, 0}, {1, 2, 2}},
};
#define N_WIDE ((int)(sizeof wide_shapes / sizeof *wide_shapes))

START_TEST(test_wide_rows)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_WIDE; s++) {
            check_problem(h, bk, mode, t, l, &wide_shapes[s], s, 1.0, 0.0);
            check_problem(h, bk, mode, t, l, &wide_shapes[s], s, 1.5, -0.75);
        }
    }
}
END_TEST

/* NaNs and infinities in overlapping and wide windows under both NaN
 * rules: every backend's y and dx are the CPU's (dy holds small whole
 * numbers, so that every sum is exact; a zero maximum may differ in sign). */
START_TEST(test_wide_nan)
{
    tu_seed_fresh();
    udnnNanPropagation_t nan = _i % 2 ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN;
    udnnDataType_t t = tu_float_types[(_i / 2) % N_TYPES];
    const pool_shape *s = &wide_shapes[_i / (2 * N_TYPES)];
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    int xd[5], yd[5];
    x_dims(s, xd);
    y_dims(s, yd);
    int64_t xn = 1, yn = 1;
    for (int i = 0; i < s->nb + 2; i++) xn *= xd[i], yn *= yd[i];
    double *xv = malloc((size_t)xn * sizeof *xv), *dyv = malloc((size_t)yn * sizeof *dyv);
    double *y0 = malloc((size_t)yn * sizeof *y0), *dx0 = malloc((size_t)xn * sizeof *dx0);
    double *y1 = malloc((size_t)yn * sizeof *y1), *dx1 = malloc((size_t)xn * sizeof *dx1);
    static const double specials[] = {NAN, NAN, INFINITY, -INFINITY};
    for (int64_t i = 0; i < xn; i++) {
        int k = tu_int(0, 15);
        xv[i] = k < 4 ? specials[k] : (double)tu_int(-2, 2);
    }
    for (int64_t i = 0; i < yn; i++) dyv[i] = (double)tu_int(-3, 3);
    for (int b = 0; b < nb; b++) {
        udnnHandle_t h = tu_handle(be[b]);
        udnnPoolingDescriptor_t d = make_pool(UDNN_POOLING_MAX, nan, s);
        pool_tensors p;
        tensors_init(&p, h, t, TU_NCHW, s);
        for (int64_t i = 0; i < xn; i++) tu_set(&p.x, i, xv[i]);
        for (int64_t i = 0; i < yn; i++) tu_set(&p.dy, i, dyv[i]);
        run_plain_pair(h, d, &p);
        tu_values(&p.y, b == 0 ? y0 : y1);
        tu_values(&p.dx, b == 0 ? dx0 : dx1);
        for (int64_t i = 0; b > 0 && i < yn; i++)
            ck_assert_msg(same_value(y1[i], y0[i]), "%s %s shape %d: y[%lld] is %g, the CPU's %g",
                          tu_backend_name(be[b]), tu_dtype_name(t), _i / (2 * N_TYPES),
                          (long long)i, y1[i], y0[i]);
        for (int64_t i = 0; b > 0 && i < xn; i++)
            ck_assert_msg(dx1[i] == dx0[i], "%s %s shape %d: dx[%lld] is %g, the CPU's %g",
                          tu_backend_name(be[b]), tu_dtype_name(t), _i / (2 * N_TYPES),
                          (long long)i, dx1[i], dx0[i]);
        tensors_free(&p);
        udnnDestroyPoolingDescriptor(d);
        udnnDestroy(h);
    }
    free(xv);
    free(dyv);
    free(y0);
    free(dx0);
    free(y1);
    free(dx1);
}
END_TEST

/* ---- finite differences in DOUBLE ---------------------------------------------------------- */

/* L = sum(dy . pool(x)), through PoolingForward. */
static double loss(udnnHandle_t h, udnnPoolingDescriptor_t d, tu_tensor *x, tu_tensor *y,
                   const double *dy)
{
    tu_upload(x);
    tu_ok(run_fwd(h, d, 1.0, x, 0.0, y));
    tu_download(y);
    return tu_dot(y, dy);
}

/* Distinct values 0.1 apart (a shuffled ramp), so no max is near a tie. */
static void fill_distinct(tu_tensor *x)
{
    int64_t n = x->count;
    int64_t *perm = malloc((size_t)n * sizeof *perm);
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = tu_int(0, (int)i), tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
    }
    for (int64_t i = 0; i < n; i++)
        tu_set(x, i, 0.1 * (double)perm[i] - 0.05 * n + tu_uniform(0, 0.01));
    free(perm);
    tu_upload(x);
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    tu_layout l = (tu_layout)(_i / N_MODES);
    const double step = 1e-6;
    pool_shape shapes[MAX_SHAPES];
    int ns = load_shapes(shapes);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < ns; s++) {
            udnnPoolingDescriptor_t d =
                make_pool(pool_modes[mode], UDNN_NOT_PROPAGATE_NAN, &shapes[s]);
            pool_tensors p;
            tensors_init(&p, h, UDNN_DATA_DOUBLE, l, &shapes[s]);
            fill_distinct(&p.x);
            tu_fill_uniform(&p.dy, -1.0, 1.0);
            double *dyv = malloc((size_t)p.dy.count * sizeof *dyv);
            double *num = malloc((size_t)p.x.count * sizeof *num);
            double *ana = malloc((size_t)p.x.count * sizeof *ana);
            tu_values(&p.dy, dyv);
            tu_ok(run_fwd(h, d, 1.0, &p.x, 0.0, &p.y));
            tu_ok(run_bwd(h, d, 1.0, &p.y, &p.dy, &p.x, 0.0, &p.dx));
            for (int64_t i = 0; i < p.x.count; i++) {
                double xi = tu_get(&p.x, i);
                tu_set(&p.x, i, xi + step);
                double up = loss(h, d, &p.x, &p.y, dyv);
                tu_set(&p.x, i, xi - step);
                double down = loss(h, d, &p.x, &p.y, dyv);
                tu_set(&p.x, i, xi);
                num[i] = (up - down) / (2.0 * step);
            }
            tu_download(&p.dx);
            tu_values(&p.dx, ana);
            double err = tu_rel_error(ana, num, p.x.count);
            ck_assert_msg(err < 1e-6, "%s %s shape line %d: rel err %g vs finite differences "
                                      "(seed %llu)",
                          tu_backend_name(bk), mode_names[mode], s + 1, err,
                          (unsigned long long)tu_seed_used());
            free(dyv);
            free(num);
            free(ana);
            tensors_free(&p);
            udnnDestroyPoolingDescriptor(d);
        }
    }
}
END_TEST

/* ---- descriptors and output dims ------------------------------------------------------------ */

START_TEST(test_desc_round_trip_2d)
{
    udnnPoolingDescriptor_t d;
    tu_ok(udnnCreatePoolingDescriptor(&d));
    tu_ok(udnnSetPooling2dDescriptor(d, UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING,
                                     UDNN_PROPAGATE_NAN, 3, 2, 1, 0, 2, 1));
    udnnPoolingMode_t mode;
    udnnNanPropagation_t nan;
    int v[6];
    tu_ok(udnnGetPooling2dDescriptor(d, &mode, &nan, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]));
    ck_assert_int_eq(mode, UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
    ck_assert_int_eq(nan, UDNN_PROPAGATE_NAN);
    static const int want[6] = {3, 2, 1, 0, 2, 1};
    for (int i = 0; i < 6; i++) ck_assert_int_eq(v[i], want[i]);
    /* the Nd getter reads a 2-D descriptor too */
    int nbDims, w[3] = {0}, p[3] = {0}, s[3] = {0};
    tu_ok(udnnGetPoolingNdDescriptor(d, 3, &mode, &nan, &nbDims, w, p, s));
    ck_assert_int_eq(nbDims, 2);
    ck_assert(w[0] == 3 && w[1] == 2 && p[0] == 1 && p[1] == 0 && s[0] == 2 && s[1] == 1);
    /* any output of the 2-D getter may be NULL */
    tu_ok(udnnGetPooling2dDescriptor(d, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL));
    /* a rejected Set leaves the descriptor as it was */
    ck_assert_int_eq(udnnSetPooling2dDescriptor(d, UDNN_POOLING_MAX, UDNN_PROPAGATE_NAN, 0, 2,
                                                0, 0, 1, 1),
                     UDNN_STATUS_BAD_PARAM);
    tu_ok(udnnGetPooling2dDescriptor(d, &mode, NULL, &v[0], NULL, NULL, NULL, NULL, NULL));
    ck_assert_int_eq(mode, UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING);
    ck_assert_int_eq(v[0], 3);
    udnnDestroyPoolingDescriptor(d);
    tu_ok(udnnDestroyPoolingDescriptor(NULL));
}
END_TEST

START_TEST(test_desc_round_trip_nd)
{
    udnnPoolingDescriptor_t d;
    tu_ok(udnnCreatePoolingDescriptor(&d));
    static const int win[3] = {2, 3, 1}, pad[3] = {1, 0, 0}, str[3] = {1, 2, 3};
    tu_ok(udnnSetPoolingNdDescriptor(d, UDNN_POOLING_MAX_DETERMINISTIC, UDNN_NOT_PROPAGATE_NAN,
                                     3, win, pad, str));
    udnnPoolingMode_t mode;
    udnnNanPropagation_t nan;
    int nbDims, w[3], p[3], s[3];
    tu_ok(udnnGetPoolingNdDescriptor(d, 3, &mode, &nan, &nbDims, w, p, s));
    ck_assert_int_eq(mode, UDNN_POOLING_MAX_DETERMINISTIC);
    ck_assert_int_eq(nan, UDNN_NOT_PROPAGATE_NAN);
    ck_assert_int_eq(nbDims, 3);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(w[i], win[i]);
        ck_assert_int_eq(p[i], pad[i]);
        ck_assert_int_eq(s[i], str[i]);
    }
    /* fewer requested: only those are written */
    int w1[3] = {-7, -7, -7}, p1[3] = {-7, -7, -7}, s1[3] = {-7, -7, -7};
    tu_ok(udnnGetPoolingNdDescriptor(d, 1, NULL, NULL, &nbDims, w1, p1, s1));
    ck_assert_int_eq(nbDims, 3);
    ck_assert(w1[0] == 2 && w1[1] == -7 && p1[0] == 1 && p1[1] == -7 && s1[0] == 1 &&
              s1[1] == -7);
    tu_ok(udnnGetPoolingNdDescriptor(d, 0, NULL, NULL, NULL, NULL, NULL, NULL));
    udnnDestroyPoolingDescriptor(d);
}
END_TEST

START_TEST(test_output_dims)
{
    udnnPoolingDescriptor_t d2, d3;
    tu_ok(udnnCreatePoolingDescriptor(&d2));
    tu_ok(udnnCreatePoolingDescriptor(&d3));
    tu_ok(udnnSetPooling2dDescriptor(d2, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 3, 3, 1, 1, 2,
                                     2));
    static const int win[3] = {2, 3, 2}, pad[3] = {0, 1, 1}, str[3] = {1, 2, 2};
    tu_ok(udnnSetPoolingNdDescriptor(d3, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 3, win, pad,
                                     str));
    static const int x4[4] = {2, 3, 7, 5}, x5[5] = {1, 2, 4, 5, 6};
    udnnTensorDescriptor_t t4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, x4),
                           t5 = tu_packed_desc(UDNN_DATA_HALF, 5, x5);
    int n, c, h, w;
    tu_ok(udnnGetPooling2dForwardOutputDim(d2, t4, &n, &c, &h, &w));
    ck_assert(n == 2 && c == 3 && h == 4 && w == 3);
    tu_ok(udnnGetPooling2dForwardOutputDim(d2, t4, NULL, NULL, &h, NULL));
    ck_assert_int_eq(h, 4);
    int out4[4], out5[5];
    tu_ok(udnnGetPoolingNdForwardOutputDim(d2, t4, 4, out4));
    ck_assert(out4[0] == 2 && out4[1] == 3 && out4[2] == 4 && out4[3] == 3);
    tu_ok(udnnGetPoolingNdForwardOutputDim(d3, t5, 5, out5));
    static const int want5[5] = {1, 2, 3, 3, 4};
    for (int i = 0; i < 5; i++) ck_assert_int_eq(out5[i], want5[i]);
    udnnDestroyTensorDescriptor(t4);
    udnnDestroyTensorDescriptor(t5);
    udnnDestroyPoolingDescriptor(d2);
    udnnDestroyPoolingDescriptor(d3);
}
END_TEST

#define N_DESC_BAD 34

START_TEST(test_desc_bad)
{
    udnnPoolingDescriptor_t d2, d3, unset;
    tu_ok(udnnCreatePoolingDescriptor(&d2));
    tu_ok(udnnCreatePoolingDescriptor(&d3));
    tu_ok(udnnCreatePoolingDescriptor(&unset));
    tu_ok(udnnSetPooling2dDescriptor(d2, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0, 2,
                                     2));
    const int win[3] = {2, 2, 2}, pad[3] = {0, 0, 0}, str[3] = {1, 1, 1};
    tu_ok(udnnSetPoolingNdDescriptor(d3, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 3, win, pad,
                                     str));
    int bw[3] = {2, 2, 0}, bp[3] = {0, 3, 0}, bs[3] = {0, 1, 1};
    static const int x4[4] = {1, 1, 4, 4}, x5[5] = {1, 1, 4, 4, 4}, tiny[4] = {1, 1, 1, 4};
    udnnTensorDescriptor_t t4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, x4),
                           t5 = tu_packed_desc(UDNN_DATA_FLOAT, 5, x5),
                           t_tiny = tu_packed_desc(UDNN_DATA_FLOAT, 4, tiny), t_unset;
    tu_ok(udnnCreateTensorDescriptor(&t_unset));
    int v[5], n;
    udnnStatus_t st;
    const char *fn = NULL, *arg = NULL, *arg2 = "";
    const udnnPoolingMode_t max = UDNN_POOLING_MAX;
    const udnnNanPropagation_t np = UDNN_NOT_PROPAGATE_NAN;
    switch (_i) {
    case 0:
        st = udnnCreatePoolingDescriptor(NULL);
        fn = "udnnCreatePoolingDescriptor";
        arg = "poolingDesc";
        break;
    case 1:
        st = udnnSetPooling2dDescriptor(NULL, max, np, 2, 2, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "poolingDesc";
        break;
    case 2:
        st = udnnSetPooling2dDescriptor(d2, (udnnPoolingMode_t)4, np, 2, 2, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "mode 4";
        break;
    case 3:
        st = udnnSetPooling2dDescriptor(d2, (udnnPoolingMode_t)-1, np, 2, 2, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "mode -1";
        break;
    case 4:
        st = udnnSetPooling2dDescriptor(d2, max, (udnnNanPropagation_t)2, 2, 2, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "maxpoolingNanOpt";
        break;
    case 5:
        st = udnnSetPooling2dDescriptor(d2, max, np, 0, 2, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "windowHeight";
        break;
    case 6:
        st = udnnSetPooling2dDescriptor(d2, max, np, 2, -1, 0, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "windowWidth";
        break;
    case 7:
        st = udnnSetPooling2dDescriptor(d2, max, np, 2, 2, -1, 0, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "verticalPadding";
        break;
    case 8:
        st = udnnSetPooling2dDescriptor(d2, max, np, 2, 2, 0, 2, 1, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "horizontalPadding";
        arg2 = "smaller than the window";
        break;
    case 9:
        st = udnnSetPooling2dDescriptor(d2, max, np, 2, 2, 0, 0, 0, 1);
        fn = "udnnSetPooling2dDescriptor";
        arg = "verticalStride";
        break;
    case 10:
        st = udnnSetPooling2dDescriptor(d2, max, np, 2, 2, 0, 0, 1, -2);
        fn = "udnnSetPooling2dDescriptor";
        arg = "horizontalStride";
        break;
    case 11:
        st = udnnSetPoolingNdDescriptor(NULL, max, np, 3, win, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "poolingDesc";
        break;
    case 12:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 1, win, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "nbDims";
        break;
    case 13:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 4, win, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "nbDims";
        break;
    case 14:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, NULL, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "windowDimA";
        break;
    case 15:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, win, NULL, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "paddingA";
        break;
    case 16:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, win, pad, NULL);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "strideA";
        break;
    case 17:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, bw, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "windowDimA[2]";
        break;
    case 18:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, win, bp, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "paddingA[1]";
        break;
    case 19:
        st = udnnSetPoolingNdDescriptor(d3, max, np, 3, win, pad, bs);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "strideA[0]";
        break;
    case 20:
        st = udnnSetPoolingNdDescriptor(d3, (udnnPoolingMode_t)9, np, 3, win, pad, str);
        fn = "udnnSetPoolingNdDescriptor";
        arg = "mode 9";
        break;
    case 21:
        st = udnnGetPooling2dDescriptor(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        fn = "udnnGetPooling2dDescriptor";
        arg = "poolingDesc is NULL";
        break;
    case 22:
        st = udnnGetPooling2dDescriptor(unset, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        fn = "udnnGetPooling2dDescriptor";
        arg = "poolingDesc has not been set";
        break;
    case 23:
        st = udnnGetPooling2dDescriptor(d3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        fn = "udnnGetPooling2dDescriptor";
        arg = "poolingDesc has 3 spatial";
        break;
    case 24:
        st = udnnGetPoolingNdDescriptor(unset, 3, NULL, NULL, &n, v, v, v);
        fn = "udnnGetPoolingNdDescriptor";
        arg = "poolingDesc has not been set";
        break;
    case 25:
        st = udnnGetPoolingNdDescriptor(d3, -1, NULL, NULL, &n, v, v, v);
        fn = "udnnGetPoolingNdDescriptor";
        arg = "nbDimsRequested";
        break;
    case 26:
        st = udnnGetPoolingNdDescriptor(d3, 2, NULL, NULL, &n, NULL, v, v);
        fn = "udnnGetPoolingNdDescriptor";
        arg = "windowDimA";
        break;
    case 27:
        st = udnnGetPooling2dForwardOutputDim(NULL, t4, &n, &n, &n, &n);
        fn = "udnnGetPooling2dForwardOutputDim";
        arg = "poolingDesc";
        break;
    case 28:
        st = udnnGetPooling2dForwardOutputDim(d2, t_unset, &n, &n, &n, &n);
        fn = "udnnGetPooling2dForwardOutputDim";
        arg = "inputTensorDesc";
        break;
    case 29:
        st = udnnGetPooling2dForwardOutputDim(d3, t5, &n, &n, &n, &n);
        fn = "udnnGetPooling2dForwardOutputDim";
        arg = "poolingDesc has 3 spatial";
        break;
    case 30:
        st = udnnGetPooling2dForwardOutputDim(d2, t5, &n, &n, &n, &n);
        fn = "udnnGetPooling2dForwardOutputDim";
        arg = "inputTensorDesc has 5 dimensions";
        break;
    case 31:
        st = udnnGetPooling2dForwardOutputDim(d2, t_tiny, &n, &n, &n, &n);
        fn = "udnnGetPooling2dForwardOutputDim";
        arg = "inputTensorDesc has dimension 2 of size 1";
        arg2 = "window";
        break;
    case 32:
        st = udnnGetPoolingNdForwardOutputDim(d3, t5, 4, v);
        fn = "udnnGetPoolingNdForwardOutputDim";
        arg = "nbDims is 4";
        break;
    default:
        st = udnnGetPoolingNdForwardOutputDim(d3, t5, 5, NULL);
        fn = "udnnGetPoolingNdForwardOutputDim";
        arg = "outputTensorDimA";
        break;
    }
    tu_assert_fails(st, UDNN_STATUS_BAD_PARAM, fn, arg, arg2);
    udnnDestroyTensorDescriptor(t4);
    udnnDestroyTensorDescriptor(t5);
    udnnDestroyTensorDescriptor(t_tiny);
    udnnDestroyTensorDescriptor(t_unset);
    udnnDestroyPoolingDescriptor(d2);
    udnnDestroyPoolingDescriptor(d3);
    udnnDestroyPoolingDescriptor(unset);
}
END_TEST

/* ---- op validation ----------------------------------------------------------------------------
 */

/* x 2x3x6x6, 2x2 windows of stride 2, y 2x3x3x3 (f32, packed), and the
 * wrong descriptors the cases swap in. */
typedef struct {
    udnnHandle_t h;
    udnnPoolingDescriptor_t pool, unset_pool;
    tu_tensor x, y, dy, dx;
    udnnTensorDescriptor_t unset, s8, x64, y64, y_dims, y_rank, x_rank, x_tiny, dx_dims;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int xd[4] = {2, 3, 6, 6}, yd[4] = {2, 3, 3, 3}, y_bad[4] = {2, 3, 3, 4},
                     y5[5] = {2, 3, 3, 3, 1}, x5[5] = {2, 3, 6, 6, 1}, tiny[4] = {2, 3, 1, 6},
                     dx_bad[4] = {2, 3, 6, 7};
    f->h = tu_handle(be);
    tu_ok(udnnCreatePoolingDescriptor(&f->pool));
    tu_ok(udnnCreatePoolingDescriptor(&f->unset_pool));
    tu_ok(udnnSetPooling2dDescriptor(f->pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0,
                                     0, 2, 2));
    tu_tensor_init(&f->x, f->h, UDNN_DATA_FLOAT, 4, xd, TU_NCHW);
    tu_tensor_init(&f->y, f->h, UDNN_DATA_FLOAT, 4, yd, TU_NCHW);
    tu_tensor_init(&f->dy, f->h, UDNN_DATA_FLOAT, 4, yd, TU_NCHW);
    tu_tensor_init(&f->dx, f->h, UDNN_DATA_FLOAT, 4, xd, TU_NCHW);
    tu_fill_uniform(&f->x, -1, 1);
    tu_fill_uniform(&f->dy, -1, 1);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, xd);
    f->x64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, xd);
    f->y64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, yd);
    f->y_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, y_bad);
    f->y_rank = tu_packed_desc(UDNN_DATA_FLOAT, 5, y5);
    f->x_rank = tu_packed_desc(UDNN_DATA_FLOAT, 5, x5);
    f->x_tiny = tu_packed_desc(UDNN_DATA_FLOAT, 4, tiny);
    f->dx_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, dx_bad);
}

static void fixture_free(fixture *f)
{
    tu_tensor_free(&f->x);
    tu_tensor_free(&f->y);
    tu_tensor_free(&f->dy);
    tu_tensor_free(&f->dx);
    udnnTensorDescriptor_t descs[] = {f->unset, f->s8,     f->x64,    f->y64,    f->y_dims,
                                      f->y_rank, f->x_rank, f->x_tiny, f->dx_dims};
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) udnnDestroyTensorDescriptor(descs[i]);
    udnnDestroyPoolingDescriptor(f->pool);
    udnnDestroyPoolingDescriptor(f->unset_pool);
    udnnDestroy(f->h);
}

typedef struct {
    udnnStatus_t status;
    const char *arg, *arg2;
} bad_expect;

static const bad_expect fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle", ""},
    {UDNN_STATUS_BAD_PARAM, "poolingDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "poolingDesc has not been set", ""},
    {UDNN_STATUS_BAD_PARAM, "alpha", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "x is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "beta", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "y is NULL", ""},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc", "s8"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 5 dimensions", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc has dimension 2 of size 1", "window"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 3 of size 4", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc has 5 dimensions", ""},
    {UDNN_STATUS_BAD_PARAM, "y is the buffer of x", "in place"},
};
#define N_FWD_BAD ((int)(sizeof fwd_bad / sizeof *fwd_bad))

START_TEST(test_fwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        float one = 1.0f, zero = 0.0f;
        udnnHandle_t h = f.h;
        udnnPoolingDescriptor_t pool = f.pool;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = f.x.desc, yd = f.y.desc;
        const void *x = tu_buf_ptr(&f.x.buf);
        void *y = tu_buf_ptr(&f.y.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: pool = NULL; break;
        case 2: pool = f.unset_pool; break;
        case 3: alpha = NULL; break;
        case 4: xd = NULL; break;
        case 5: xd = f.unset; break;
        case 6: x = NULL; break;
        case 7: beta = NULL; break;
        case 8: yd = NULL; break;
        case 9: yd = f.unset; break;
        case 10: y = NULL; break;
        case 11: xd = f.s8; break;
        case 12: yd = f.y64; break;
        case 13: xd = f.x_rank; break;
        case 14: xd = f.x_tiny; break;
        case 15: yd = f.y_dims; break;
        case 16: yd = f.y_rank; break;
        case 17: x = y; break;
        }
        udnnStatus_t st = udnnPoolingForward(h, pool, alpha, xd, x, beta, yd, y);
        tu_assert_fails(st, fwd_bad[_i].status, "udnnPoolingForward", fwd_bad[_i].arg,
                        fwd_bad[_i].arg2);
        tu_assert_untouched(&f.y.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle", ""},
    {UDNN_STATUS_BAD_PARAM, "poolingDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "poolingDesc has not been set", ""},
    {UDNN_STATUS_BAD_PARAM, "alpha", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "y is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "x is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "beta", ""},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL", ""},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not", ""},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL", ""},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc", "s8"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type", ""},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type", ""},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type", ""},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 3 of size 4", ""},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 3 of size 4", ""},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has dimension 3 of size 7", ""},
    {UDNN_STATUS_BAD_PARAM, "xDesc has dimension 2 of size 1", "window"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 5 dimensions", ""},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of x", "in place"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of y", "in place"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of dy", "in place"},
};
#define N_BWD_BAD ((int)(sizeof bwd_bad / sizeof *bwd_bad))

START_TEST(test_bwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        float one = 1.0f, zero = 0.0f;
        udnnHandle_t h = f.h;
        udnnPoolingDescriptor_t pool = f.pool;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t yd = f.y.desc, dyd = f.dy.desc, xd = f.x.desc, dxd = f.dx.desc;
        const void *y = tu_buf_ptr(&f.y.buf), *dy = tu_buf_ptr(&f.dy.buf),
                   *x = tu_buf_ptr(&f.x.buf);
        void *dx = tu_buf_ptr(&f.dx.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: pool = NULL; break;
        case 2: pool = f.unset_pool; break;
        case 3: alpha = NULL; break;
        case 4: yd = NULL; break;
        case 5: yd = f.unset; break;
        case 6: y = NULL; break;
        case 7: dyd = NULL; break;
        case 8: dyd = f.unset; break;
        case 9: dy = NULL; break;
        case 10: xd = NULL; break;
        case 11: xd = f.unset; break;
        case 12: x = NULL; break;
        case 13: beta = NULL; break;
        case 14: dxd = NULL; break;
        case 15: dxd = f.unset; break;
        case 16: dx = NULL; break;
        case 17: xd = f.s8; break;
        case 18: yd = f.y64; break;
        case 19: dyd = f.y64; break;
        case 20: dxd = f.x64; break;
        case 21: yd = f.y_dims; break;
        case 22: dyd = f.y_dims; break;
        case 23: dxd = f.dx_dims; break;
        case 24: xd = f.x_tiny; break;
        case 25: xd = f.x_rank; break;
        case 26: x = dx; break;
        case 27: y = dx; break;
        case 28: dy = dx; break;
        }
        udnnStatus_t st = udnnPoolingBackward(h, pool, alpha, yd, y, dyd, dy, xd, x, beta, dxd, dx);
        tu_assert_fails(st, bwd_bad[_i].status, "udnnPoolingBackward", bwd_bad[_i].arg,
                        bwd_bad[_i].arg2);
        tu_assert_untouched(&f.dx.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pooling");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_modes, 0, N_MODES * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_alpha_beta, 0, N_MODES * N_TYPES);
    tcase_add_loop_test(ops, test_hand_values, 0, N_MODES * N_TYPES * N_HAND);
    tcase_add_loop_test(ops, test_max_nan, 0, N_NAN * 2 * N_TYPES);
    tcase_add_loop_test(ops, test_finite_differences, 0, N_MODES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_wide_rows, 0, N_MODES * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_wide_nan, 0, 2 * N_TYPES * N_WIDE);
    suite_add_tcase(s, ops);

    TCase *desc = tcase_create("descriptor");
    tcase_add_test(desc, test_desc_round_trip_2d);
    tcase_add_test(desc, test_desc_round_trip_nd);
    tcase_add_test(desc, test_output_dims);
    tcase_add_loop_test(desc, test_desc_bad, 0, N_DESC_BAD);
    suite_add_tcase(s, desc);

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_fwd_bad, 0, N_FWD_BAD);
    tcase_add_loop_test(bad, test_bwd_bad, 0, N_BWD_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
