/* check_norm.c - NormForward/NormBackward (layer and RMS norm) and
 * GroupNormForward/GroupNormBackward on every backend: every family x type
 * x layout over odd shapes and every normalizedDims or a range of groups,
 * with and without bias and statistics, against an expectation computed
 * here in double; hand-computed values; single-element groups; in-place
 * runs; finite differences in DOUBLE for dx, dScale and dBias; and every
 * validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

enum { FAM_LAYER, FAM_RMS, FAM_GROUP, N_FAMS };
static const char *const fam_names[] = {"layer", "rms", "group"};
#define N_TYPES 4
#define N_LAYOUTS 3

/* Layer and RMS shapes: rank, dims. 2-D; C = 1, 3, 5, 7; last dims of 1;
 * 5-D. Each runs with every normalizedDims from 1 to rank - 1. */
static const int norm_shapes[][7] = {
    {2, 3, 5, 0},       {2, 4, 1, 0},       {3, 2, 3, 7, 0},    {4, 2, 1, 3, 5},
    {4, 1, 5, 3, 1},    {4, 3, 7, 2, 2},    {5, 2, 3, 2, 3, 2},
};
#define N_NORM_SHAPES ((int)(sizeof norm_shapes / sizeof *norm_shapes))

/* Group norm shapes and the groups each runs with: 1, divisors, C. */
typedef struct {
    int rank;
    int dims[6];
    int groups[4]; /* 0 ends the list */
} group_shape;

static const group_shape group_shapes[] = {
    {3, {2, 6, 5}, {1, 2, 3, 6}},    {4, {2, 3, 3, 3}, {1, 3}},
    {4, {2, 1, 2, 3}, {1}},          {4, {1, 5, 2, 1}, {1, 5}},
    {4, {3, 7, 1, 1}, {1, 7}},       {5, {2, 4, 2, 3, 2}, {1, 2, 4}},
    {3, {2, 3, 1}, {1, 3}},
};
#define N_GROUP_SHAPES ((int)(sizeof group_shapes / sizeof *group_shapes))

static udnnDataType_t side_type(udnnDataType_t t)
{
    return t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
}

static udnnNormMode_t mode_of(int fam)
{
    return fam == FAM_RMS ? UDNN_NORM_RMS : UDNN_NORM_LAYER;
}

/* ---- a case: its tensors and where each logical element belongs ------------- */

/* The sets the op normalizes, in terms of logical (row-major) indices. */
typedef struct {
    int grouped;
    int64_t count, sets, params;
    int64_t size;              /* elements per set */
    int64_t c, positions, cpg; /* group norm: channels, spatial size, per group */
} geo;

static int64_t set_of(const geo *g, int64_t i)
{
    if (!g->grouped) return i / g->size;
    int64_t n = i / (g->c * g->positions), c = (i / g->positions) % g->c;
    return n * (g->c / g->cpg) + c / g->cpg;
}

static int64_t param_of(const geo *g, int64_t i)
{
    return g->grouped ? (i / g->positions) % g->c : i % g->size;
}

typedef struct {
    int fam, k; /* k: normalizedDims, or groups */
    udnnDataType_t dtype;
    geo g;
    tu_tensor x, y, dy, dx;               /* of the data type */
    tu_tensor scale, bias, dscale, dbias; /* side type, scale's shape */
    tu_tensor mean, inv_std;              /* side type, the statistics' shape */
} norm_case;

/* The side shapes of x's dims for a family. */
static void side_dims(int fam, int k, int rank, const int *dims, int *scale, int *stats)
{
    for (int i = 0; i < rank; i++) {
        if (fam == FAM_GROUP) {
            scale[i] = i == 1 ? dims[1] : 1;
            stats[i] = i == 0 ? dims[0] : i == 1 ? k : 1;
        } else {
            int lead = rank - k;
            scale[i] = i < lead ? 1 : dims[i];
            stats[i] = i < lead ? dims[i] : 1;
        }
    }
}

static void case_init(norm_case *c, udnnHandle_t h, int fam, int k, udnnDataType_t t,
                      tu_layout l, int rank, const int *dims)
{
    memset(c, 0, sizeof *c);
    c->fam = fam;
    c->k = k;
    c->dtype = t;
    int scale[UDNN_DIM_MAX], stats[UDNN_DIM_MAX];
    side_dims(fam, k, rank, dims, scale, stats);
    udnnDataType_t st = side_type(t);
    tu_tensor_init(&c->x, h, t, rank, dims, l);
    tu_tensor_init(&c->y, h, t, rank, dims, l);
    tu_tensor_init(&c->dy, h, t, rank, dims, l);
    tu_tensor_init(&c->dx, h, t, rank, dims, l);
    tu_tensor_init(&c->scale, h, st, rank, scale, l);
    tu_tensor_init(&c->bias, h, st, rank, scale, l);
    tu_tensor_init(&c->dscale, h, st, rank, scale, l);
    tu_tensor_init(&c->dbias, h, st, rank, scale, l);
    tu_tensor_init(&c->mean, h, st, rank, stats, l);
    tu_tensor_init(&c->inv_std, h, st, rank, stats, l);

    geo *g = &c->g;
    g->grouped = fam == FAM_GROUP;
    g->count = c->x.count;
    g->sets = c->mean.count;
    g->params = c->scale.count;
    g->size = g->count / g->sets;
    if (g->grouped) {
        g->c = dims[1];
        g->cpg = dims[1] / k;
        g->positions = g->count / ((int64_t)dims[0] * dims[1]);
    }
}

/* Magnitudes in [lo, hi] of either sign: with one parameter for a whole
 * tensor, a draw near 0 would sink every output into half's subnormals. */
static void fill_signed(tu_tensor *t, double lo, double hi)
{
    for (int64_t i = 0; i < t->count; i++)
        tu_set(t, i, (tu_int(0, 1) ? 1.0 : -1.0) * tu_uniform(lo, hi));
    tu_upload(t);
}

static void case_fill(norm_case *c)
{
    tu_fill_uniform(&c->x, -2.0, 3.0);
    fill_signed(&c->scale, 0.5, 1.5);
    fill_signed(&c->bias, 0.25, 1.0);
    tu_fill_uniform(&c->dy, -1.0, 1.0);
}

static void case_free(norm_case *c)
{
    tu_tensor *all[] = {&c->x,     &c->y,    &c->dy,    &c->dx,    &c->scale,
                        &c->bias,  &c->dscale, &c->dbias, &c->mean, &c->inv_std};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tu_tensor_free(all[i]);
}

static udnnStatus_t call_fwd(norm_case *c, udnnHandle_t h, double eps, int with_bias,
                             int with_stats)
{
    const void *bias = with_bias ? tu_buf_ptr(&c->bias.buf) : NULL;
    udnnTensorDescriptor_t sd = with_stats ? c->mean.desc : NULL;
    void *mean = with_stats ? tu_buf_ptr(&c->mean.buf) : NULL;
    void *inv = with_stats ? tu_buf_ptr(&c->inv_std.buf) : NULL;
    if (c->fam == FAM_GROUP)
        return udnnGroupNormForward(h, c->k, eps, c->x.desc, tu_buf_ptr(&c->x.buf),
                                    c->scale.desc, tu_buf_ptr(&c->scale.buf), bias, c->y.desc,
                                    tu_buf_ptr(&c->y.buf), sd, mean, inv);
    return udnnNormForward(h, mode_of(c->fam), c->k, eps, c->x.desc, tu_buf_ptr(&c->x.buf),
                           c->scale.desc, tu_buf_ptr(&c->scale.buf), bias, c->y.desc,
                           tu_buf_ptr(&c->y.buf), sd, mean, inv);
}

static udnnStatus_t call_bwd(norm_case *c, udnnHandle_t h, int with_mean, int with_dbias)
{
    const void *mean = with_mean ? tu_buf_ptr(&c->mean.buf) : NULL;
    void *dbias = with_dbias ? tu_buf_ptr(&c->dbias.buf) : NULL;
    if (c->fam == FAM_GROUP)
        return udnnGroupNormBackward(h, c->k, c->x.desc, tu_buf_ptr(&c->x.buf), c->dy.desc,
                                     tu_buf_ptr(&c->dy.buf), c->scale.desc,
                                     tu_buf_ptr(&c->scale.buf), c->mean.desc, mean,
                                     tu_buf_ptr(&c->inv_std.buf), c->dx.desc,
                                     tu_buf_ptr(&c->dx.buf), tu_buf_ptr(&c->dscale.buf), dbias);
    return udnnNormBackward(h, mode_of(c->fam), c->k, c->x.desc, tu_buf_ptr(&c->x.buf),
                            c->dy.desc, tu_buf_ptr(&c->dy.buf), c->scale.desc,
                            tu_buf_ptr(&c->scale.buf), c->mean.desc, mean,
                            tu_buf_ptr(&c->inv_std.buf), c->dx.desc, tu_buf_ptr(&c->dx.buf),
                            tu_buf_ptr(&c->dscale.buf), dbias);
}

/* ---- the expectation, over logical indices ------------------------------------------ */

/* Per set: the mean (0 for RMS) and 1/sqrt(biased variance about it + eps). */
static void expect_stats(const norm_case *c, double eps, const double *x, double *mean,
                         double *inv)
{
    const geo *g = &c->g;
    double *sq = calloc((size_t)g->sets, sizeof *sq);
    for (int64_t s = 0; s < g->sets; s++) mean[s] = 0.0;
    if (c->fam != FAM_RMS) {
        for (int64_t i = 0; i < g->count; i++) mean[set_of(g, i)] += x[i];
        for (int64_t s = 0; s < g->sets; s++) mean[s] /= (double)g->size;
    }
    for (int64_t i = 0; i < g->count; i++) {
        double d = x[i] - mean[set_of(g, i)];
        sq[set_of(g, i)] += d * d;
    }
    for (int64_t s = 0; s < g->sets; s++) inv[s] = 1.0 / sqrt(sq[s] / (double)g->size + eps);
    free(sq);
}

/* y = (x - mean) * inv * scale (+ bias when given). */
static void expect_fwd(const norm_case *c, const double *x, const double *scale,
                       const double *bias, const double *mean, const double *inv, double *y)
{
    const geo *g = &c->g;
    for (int64_t i = 0; i < g->count; i++) {
        int64_t s = set_of(g, i), p = param_of(g, i);
        y[i] = (x[i] - mean[s]) * inv[s] * scale[p] + (bias ? bias[p] : 0.0);
    }
}

/* dx, dscale and dbias from the given statistics (mean NULL for RMS). */
static void expect_bwd(const norm_case *c, const double *x, const double *dy,
                       const double *scale, const double *mean, const double *inv, double *dx,
                       double *dscale, double *dbias)
{
    const geo *g = &c->g;
    double *sum_g = calloc((size_t)g->sets, sizeof *sum_g);
    double *sum_gx = calloc((size_t)g->sets, sizeof *sum_gx);
    for (int64_t p = 0; p < g->params; p++) dscale[p] = dbias[p] = 0.0;
    for (int64_t i = 0; i < g->count; i++) {
        int64_t s = set_of(g, i), p = param_of(g, i);
        double xhat = (x[i] - (mean ? mean[s] : 0.0)) * inv[s];
        double grad = dy[i] * scale[p];
        sum_g[s] += grad;
        sum_gx[s] += grad * xhat;
        dscale[p] += dy[i] * xhat;
        dbias[p] += dy[i];
    }
    for (int64_t i = 0; i < g->count; i++) {
        int64_t s = set_of(g, i), p = param_of(g, i);
        double xhat = (x[i] - (mean ? mean[s] : 0.0)) * inv[s];
        double mean_g = mean ? sum_g[s] / (double)g->size : 0.0;
        dx[i] = inv[s] * (dy[i] * scale[p] - mean_g - xhat * sum_gx[s] / (double)g->size);
    }
    free(sum_g);
    free(sum_gx);
}

/* ---- checks ------------------------------------------------------------------------- */

/* As tu_check_tensor, except that an all-zero reference (a set of one
 * element, or of zero variance, normalizes to exactly 0) asks for exact
 * zeros. */
static void check_out(tu_tensor *t, const double *ref, const char *what)
{
    int all_zero = 1;
    for (int64_t i = 0; i < t->count; i++) all_zero &= ref[i] == 0.0;
    if (!all_zero) {
        tu_check_tensor(t, ref, what);
        return;
    }
    tu_download(t);
    ck_assert_msg(tu_buf_guards_intact(&t->buf), "%s: a write outside the output", what);
    for (int64_t i = 0; i < t->count; i++)
        ck_assert_msg(tu_get(t, i) == 0.0, "%s: element %lld is %g, not 0 (seed %llu)", what,
                      (long long)i, tu_get(t, i), (unsigned long long)tu_seed_used());
}

static double *values_of(const tu_tensor *t)
{
    double *v = malloc((size_t)t->count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tu_values(t, v);
    return v;
}

/* Forward then backward on random data. extras: bias, statistics and dBias
 * given, and the forward's statistics feed the backward pass; else none of
 * them, and the backward pass gets statistics computed here. */
static void check_case(udnnHandle_t h, const char *what, int fam, int k, udnnDataType_t t,
                       tu_layout l, int rank, const int *dims, double eps, int extras)
{
    norm_case c;
    case_init(&c, h, fam, k, t, l, rank, dims);
    case_fill(&c);
    const geo *g = &c.g;
    double *x = values_of(&c.x), *scale = values_of(&c.scale), *bias = values_of(&c.bias);
    double *dy = values_of(&c.dy);
    double *ref = malloc((size_t)g->count * sizeof *ref);
    double *mean = malloc((size_t)g->sets * sizeof *mean);
    double *inv = malloc((size_t)g->sets * sizeof *inv);
    double *dscale = malloc((size_t)g->params * sizeof *dscale);
    double *dbias = malloc((size_t)g->params * sizeof *dbias);
    char msg[256];
    /* RMS over one element: dx = inv * g * eps / (x^2 + eps), which a small
     * epsilon sinks into half's subnormals */
    if (g->size == 1) eps = 0.5;

    expect_stats(&c, eps, x, mean, inv);
    expect_fwd(&c, x, scale, extras && fam != FAM_RMS ? bias : NULL, mean, inv, ref);
    tu_ok(call_fwd(&c, h, eps, extras, extras));
    snprintf(msg, sizeof msg, "%s: y", what);
    check_out(&c.y, ref, msg);
    if (extras) {
        snprintf(msg, sizeof msg, "%s: saveMean", what);
        check_out(&c.mean, mean, msg);
        snprintf(msg, sizeof msg, "%s: saveInvStd", what);
        check_out(&c.inv_std, inv, msg);
    } else {
        for (int64_t s = 0; s < g->sets; s++) {
            tu_set(&c.mean, s, mean[s]);
            tu_set(&c.inv_std, s, inv[s]);
        }
        tu_upload(&c.mean);
        tu_upload(&c.inv_std);
    }

    /* the statistics as the backward pass reads them: in the side type */
    tu_values(&c.mean, mean);
    tu_values(&c.inv_std, inv);
    expect_bwd(&c, x, dy, scale, fam == FAM_RMS ? NULL : mean, inv, ref, dscale, dbias);
    tu_ok(call_bwd(&c, h, extras || fam != FAM_RMS, extras));
    snprintf(msg, sizeof msg, "%s: dx", what);
    check_out(&c.dx, ref, msg);
    snprintf(msg, sizeof msg, "%s: dScale", what);
    check_out(&c.dscale, dscale, msg);
    snprintf(msg, sizeof msg, "%s: dBias", what);
    if (extras && fam != FAM_RMS) check_out(&c.dbias, dbias, msg);
    else tu_assert_untouched(&c.dbias.buf, msg);

    free(x);
    free(scale);
    free(bias);
    free(dy);
    free(ref);
    free(mean);
    free(inv);
    free(dscale);
    free(dbias);
    case_free(&c);
}

/* Epsilons that matter against unit variances, alternated over cases. */
static double eps_for(int i)
{
    return i % 2 ? 0.5 : 1e-2;
}

/* ---- family x type x layout over the shape tables ------------------------------------ */

START_TEST(test_norm_types_layouts)
{
    tu_seed_fresh();
    int fam = _i % 2;
    udnnDataType_t t = tu_float_types[(_i / 2) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (2 * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_NORM_SHAPES; s++) {
            int rank = norm_shapes[s][0];
            for (int nd = 1; nd < rank; nd++)
                for (int extras = 0; extras < 2; extras++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s %s %s %s shape %d normalizedDims %d%s",
                             tu_backend_name(bk), fam_names[fam], tu_dtype_name(t),
                             tu_layout_name(l), s, nd, extras ? " with bias and stats" : "");
                    check_case(h, what, fam, nd, t, l, rank, &norm_shapes[s][1],
                               eps_for(s + nd), extras);
                }
        }
    }
}
END_TEST

START_TEST(test_groupnorm_types_layouts)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_GROUP_SHAPES; s++) {
            const group_shape *gs = &group_shapes[s];
            for (int j = 0; j < 4 && gs->groups[j] > 0; j++)
                for (int extras = 0; extras < 2; extras++) {
                    char what[160];
                    snprintf(what, sizeof what, "%s group %s %s shape %d groups %d%s",
                             tu_backend_name(bk), tu_dtype_name(t), tu_layout_name(l), s,
                             gs->groups[j], extras ? " with bias and stats" : "");
                    check_case(h, what, FAM_GROUP, gs->groups[j], t, l, gs->rank, gs->dims,
                               eps_for(s + j), extras);
                }
        }
    }
}
END_TEST

/* ---- hand-computed values ---------------------------------------------------------------- */

/* A forward run of fixed values with epsilon 0; want_mean NULL skips the
 * statistics. */
typedef struct {
    int fam, k, rank;
    int dims[4];
    double x[8], scale[4], bias[4];
    double y[8], mean[2], inv[2];
} hand_fwd;

static const hand_fwd hand_fwds[] = {
    /* rows {1, 2, 3}: mean 2, var 2/3; {0, 0, 6}: mean 2, var 8 */
    {FAM_LAYER, 1, 2, {2, 3}, {1, 2, 3, 0, 0, 6}, {1, 2, -1}, {0.5, 0, -0.5},
     {-0.7247448713915889, 0, -1.724744871391589, -0.20710678118654746, -1.4142135623730951,
      -1.9142135623730951},
     {2, 2}, {1.2247448713915892, 0.35355339059327373}},
    /* rows {1, 2, 2}: mean square 3; {3, 0, -3}: 6; the bias is ignored */
    {FAM_RMS, 1, 2, {2, 3}, {1, 2, 2, 3, 0, -3}, {1, 2, -1}, {7, 7, 7},
     {0.5773502691896258, 2.3094010767585034, -1.1547005383792517, 1.2247448713915892, 0,
      1.2247448713915892},
     {0, 0}, {0.5773502691896258, 0.4082482904638630}},
    /* 1 x 4 x 1 x 2 in two groups: {1, 3, 5, 7} (mean 4, var 5) and
     * {0, 0, 2, 2} (mean 1, var 1) */
    {FAM_GROUP, 2, 4, {1, 4, 1, 2}, {1, 3, 5, 7, 0, 0, 2, 2}, {1, 2, 3, 4}, {0, 1, 0, -1},
     {-1.3416407864998738, -0.4472135954999579, 1.8944271909999157, 3.6832815729997477, -3, -3,
      3, 3},
     {4, 1}, {0.4472135954999579, 1}},
};

START_TEST(test_hand_forward)
{
    const hand_fwd *hc = &hand_fwds[_i % N_FAMS];
    udnnDataType_t t = tu_float_types[_i / N_FAMS];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        norm_case c;
        case_init(&c, h, hc->fam, hc->k, t, TU_NCHW, hc->rank, hc->dims);
        for (int64_t i = 0; i < c.x.count; i++) tu_set(&c.x, i, hc->x[i]);
        for (int64_t i = 0; i < c.scale.count; i++) {
            tu_set(&c.scale, i, hc->scale[i]);
            tu_set(&c.bias, i, hc->bias[i]);
        }
        tu_upload(&c.x);
        tu_upload(&c.scale);
        tu_upload(&c.bias);
        tu_ok(call_fwd(&c, h, 0.0, 1, 1));
        tu_check_tensor(&c.y, hc->y, fam_names[hc->fam]);
        tu_check_tensor(&c.inv_std, hc->inv, fam_names[hc->fam]);
        check_out(&c.mean, hc->mean, fam_names[hc->fam]);
        case_free(&c);
    }
}
END_TEST

/* x {1, 2, 3} (mean 2, inv_std s = sqrt(1.5)) or, for RMS, {1, 2, 2}
 * (inv_rms r = 1/sqrt(3)); scale 1, dy {1, 0, 0}. Layer and group norm (one
 * group of one channel): dx = s * (dy - 1/3 + xhat * s / 3) = {s/6, -s/3,
 * s/6}, dscale {-s, 0, 0} (group: -s), dbias {1, 0, 0} (group: 1). RMS:
 * dx = r * (dy - x / 9), dscale {r, 0, 0}. */
START_TEST(test_hand_backward)
{
    int fam = _i % N_FAMS;
    udnnDataType_t t = tu_float_types[_i / N_FAMS];
    static const int row[2] = {1, 3}, grouped[3] = {1, 1, 3};
    const double s = sqrt(1.5), r = 1.0 / sqrt(3.0);
    const double x_layer[3] = {1, 2, 3}, x_rms[3] = {1, 2, 2};
    const double dx_layer[3] = {s / 6, -s / 3, s / 6};
    const double dx_rms[3] = {r * 8 / 9, -r * 2 / 9, -r * 2 / 9};
    const double ds_layer[3] = {-s, 0, 0}, ds_rms[3] = {r, 0, 0}, db_layer[3] = {1, 0, 0};
    const double dy[3] = {1, 0, 0};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        norm_case c;
        if (fam == FAM_GROUP) case_init(&c, h, fam, 1, t, TU_NCHW, 3, grouped);
        else case_init(&c, h, fam, 1, t, TU_NCHW, 2, row);
        for (int i = 0; i < 3; i++) {
            tu_set(&c.x, i, fam == FAM_RMS ? x_rms[i] : x_layer[i]);
            tu_set(&c.dy, i, dy[i]);
        }
        for (int64_t i = 0; i < c.scale.count; i++) tu_set(&c.scale, i, 1.0);
        tu_set(&c.mean, 0, fam == FAM_RMS ? 0.0 : 2.0);
        tu_set(&c.inv_std, 0, fam == FAM_RMS ? r : s);
        tu_upload(&c.x);
        tu_upload(&c.dy);
        tu_upload(&c.scale);
        tu_upload(&c.mean);
        tu_upload(&c.inv_std);
        tu_ok(call_bwd(&c, h, fam != FAM_RMS, fam != FAM_RMS));
        tu_check_tensor(&c.dx, fam == FAM_RMS ? dx_rms : dx_layer, "dx");
        tu_check_tensor(&c.dscale, fam == FAM_RMS ? ds_rms : ds_layer, "dScale");
        if (fam != FAM_RMS) tu_check_tensor(&c.dbias, db_layer, "dBias");
        case_free(&c);
    }
}
END_TEST

/* ---- single-element groups -------------------------------------------------------------- */

/* groups == C with one spatial position: every set is one element, of
 * variance 0, so y is exactly the bias, the mean is x, inv_std is
 * 1/sqrt(eps), dx and dScale are exactly 0 and dBias sums dy over n. */
START_TEST(test_single_element_groups)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    static const int dims[4] = {3, 5, 1, 1};
    const double eps = 0.25;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        norm_case c;
        case_init(&c, h, FAM_GROUP, 5, t, l, 4, dims);
        case_fill(&c);
        tu_ok(call_fwd(&c, h, eps, 1, 1));
        tu_download(&c.y);
        tu_download(&c.mean);
        tu_download(&c.inv_std);
        for (int64_t i = 0; i < c.x.count; i++) {
            double bias = tu_round(t, tu_get(&c.bias, i % 5));
            ck_assert_msg(tu_get(&c.y, i) == bias, "y[%lld] is %g, not the bias %g",
                          (long long)i, tu_get(&c.y, i), bias);
            ck_assert(tu_get(&c.mean, i) == tu_get(&c.x, i));
            ck_assert(tu_get(&c.inv_std, i) == (double)(float)(1.0 / sqrt(eps)));
        }
        tu_ok(call_bwd(&c, h, 1, 1));
        double zeros[15] = {0}, dbias[5] = {0};
        for (int64_t i = 0; i < c.x.count; i++) dbias[i % 5] += tu_get(&c.dy, i);
        check_out(&c.dx, zeros, "dx");
        check_out(&c.dscale, zeros, "dScale");
        tu_check_tensor(&c.dbias, dbias, "dBias");
        case_free(&c);
    }
}
END_TEST

/* ---- RMS ignores bias and dBias ----------------------------------------------------------- */

/* A NaN-poisoned bias changes nothing, and a poisoned dBias stays so. */
START_TEST(test_rms_ignores_bias)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i];
    static const int dims[3] = {2, 3, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        norm_case c;
        case_init(&c, h, FAM_RMS, 1, t, TU_STRIDED, 3, dims);
        tu_fill_uniform(&c.x, -2.0, 3.0);
        fill_signed(&c.scale, 0.5, 1.5);
        tu_fill_uniform(&c.dy, -1.0, 1.0);
        double *x = values_of(&c.x), *scale = values_of(&c.scale);
        double y[30], mean[6], inv[6];
        expect_stats(&c, 1e-3, x, mean, inv);
        expect_fwd(&c, x, scale, NULL, mean, inv, y);
        tu_ok(call_fwd(&c, h, 1e-3, 1, 1));
        tu_check_tensor(&c.y, y, "y with a NaN bias");
        tu_ok(call_bwd(&c, h, 0, 1));
        tu_assert_untouched(&c.dbias.buf, "dBias");
        free(x);
        free(scale);
        case_free(&c);
    }
}
END_TEST

/* ---- long rows ------------------------------------------------------------------------------ */

/* Rows of 512, 1024 and 4096 elements: the GPU row kernels' teams are
 * wider than a warp, a block takes several rows at a time, the last
 * iteration is part full, and 1001 rows are more than one wave of blocks
 * takes at once, so each block's dScale and dBias partial sums several
 * iterations (rows of 256 elements or more may run the backward in float:
 * nm_bwd_rows' FW). A 16-bit row of 4096 takes a whole block of 512
 * threads, and 300 of them more than a wave. */
static const int long_shapes[][4] = {{2, 1001, 512}, {3, 3, 7, 1024}, {2, 300, 4096}};
#define N_LONG_SHAPES ((int)(sizeof long_shapes / sizeof *long_shapes))

START_TEST(test_long_rows)
{
    tu_seed_fresh();
    int fam = _i % 2;
    udnnDataType_t t = tu_float_types[(_i / 2) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (2 * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_LONG_SHAPES; s++) {
            char what[160];
            snprintf(what, sizeof what, "%s %s %s %s long rows %d", tu_backend_name(bk),
                     fam_names[fam], tu_dtype_name(t), tu_layout_name(l), s);
            check_case(h, what, fam, 1, t, l, long_shapes[s][0], &long_shapes[s][1], 1e-2, 1);
        }
    }
}
END_TEST

/* ---- few long sets ------------------------------------------------------------------------- */

/* Nine sets of 65536 elements (9 x 64 x 32 x 32: layer and RMS norm over
 * C, H and W, group norm with one group): fewer sets than a GPU has
 * multiprocessors, each long enough that a block a set leaves most of the
 * device idle, so a GPU backend may split a set over several blocks whose
 * partial sums meet in scratch (16-bit sets too: 8192 vectors of 8), and
 * may take a second pass over groups of sets (8, 4 or 2 by type: whole
 * groups and a last one of one set), or hold a set in a cluster of blocks
 * (group norm's sets, whose channels are runs). few_long_k: the family's k
 * for them; group norm runs again in two groups (18 sets of 32 channels). */
static const int few_long_dims[4] = {9, 64, 32, 32};

static int few_long_k(int fam)
{
    return fam == FAM_GROUP ? 1 : 3;
}

START_TEST(test_few_long_sets)
{
    tu_seed_fresh();
    int fam = _i % N_FAMS;
    udnnDataType_t t = tu_float_types[(_i / N_FAMS) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_FAMS * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        char what[160];
        snprintf(what, sizeof what, "%s %s %s %s few long sets", tu_backend_name(bk),
                 fam_names[fam], tu_dtype_name(t), tu_layout_name(l));
        check_case(h, what, fam, few_long_k(fam), t, l, 4, few_long_dims, 1e-2, 1);
        if (fam == FAM_GROUP) {
            snprintf(what, sizeof what, "%s group %s %s few long sets in two groups",
                     tu_backend_name(bk), tu_dtype_name(t), tu_layout_name(l));
            check_case(h, what, fam, 2, t, l, 4, few_long_dims, 1e-2, 1);
        }
    }
}
END_TEST

/* ---- in place ------------------------------------------------------------------------------- */

/* y in x's buffer, then dx in dy's buffer and in x's buffer; on small
 * sets, then on test_few_long_sets' shape (a GPU splits those sets over
 * blocks, whose writes of y must not reach another block's reads of x). */
START_TEST(test_in_place)
{
    tu_seed_fresh();
    int fam = _i % N_FAMS;
    udnnDataType_t t = tu_float_types[(_i / N_FAMS) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_FAMS * N_TYPES) % N_LAYOUTS);
    const int long_sets = _i >= N_FAMS * N_TYPES * N_LAYOUTS;
    static const int small_dims[4] = {2, 6, 3, 5};
    const int *dims = long_sets ? few_long_dims : small_dims;
    int k = long_sets ? few_long_k(fam) : (fam == FAM_GROUP ? 3 : 2);
    const double eps = 1e-2;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        norm_case c;
        case_init(&c, h, fam, k, t, l, 4, dims);
        case_fill(&c);
        const geo *g = &c.g;
        double *x = values_of(&c.x), *scale = values_of(&c.scale), *bias = values_of(&c.bias);
        double *dy = values_of(&c.dy);
        double *ref = malloc((size_t)g->count * sizeof *ref);
        double *mean = malloc((size_t)g->sets * sizeof *mean);
        double *inv = malloc((size_t)g->sets * sizeof *inv);
        double *ds = malloc((size_t)g->params * sizeof *ds);
        double *db = malloc((size_t)g->params * sizeof *db);

        /* dx in dy's buffer, then in x's, from the statistics computed here */
        expect_stats(&c, eps, x, mean, inv);
        for (int64_t s = 0; s < g->sets; s++) {
            tu_set(&c.mean, s, mean[s]);
            tu_set(&c.inv_std, s, inv[s]);
        }
        tu_upload(&c.mean);
        tu_upload(&c.inv_std);
        tu_values(&c.mean, mean);
        tu_values(&c.inv_std, inv);
        expect_bwd(&c, x, dy, scale, fam == FAM_RMS ? NULL : mean, inv, ref, ds, db);
        tu_tensor dx_saved = c.dx;
        c.dx = c.dy;
        tu_ok(call_bwd(&c, h, 1, 1));
        tu_check_tensor(&c.dy, ref, "dx in dy's buffer");
        tu_fill_uniform(&c.dy, -1.0, 1.0);
        tu_values(&c.dy, dy);
        expect_bwd(&c, x, dy, scale, fam == FAM_RMS ? NULL : mean, inv, ref, ds, db);
        c.dx = c.x;
        tu_ok(call_bwd(&c, h, 1, 1));
        tu_check_tensor(&c.x, ref, "dx in x's buffer");
        c.dx = dx_saved;

        for (int64_t i = 0; i < g->count; i++) tu_set(&c.x, i, x[i]);
        tu_upload(&c.x);
        expect_stats(&c, eps, x, mean, inv);
        expect_fwd(&c, x, scale, fam == FAM_RMS ? NULL : bias, mean, inv, ref);
        tu_tensor y_saved = c.y;
        c.y = c.x;
        tu_ok(call_fwd(&c, h, eps, 1, 0));
        tu_check_tensor(&c.x, ref, "y in x's buffer");
        c.y = y_saved;

        free(x);
        free(scale);
        free(bias);
        free(dy);
        free(ref);
        free(mean);
        free(inv);
        free(ds);
        free(db);
        case_free(&c);
    }
}
END_TEST

/* ---- finite differences in DOUBLE ---------------------------------------------------------- */

/* L = sum(dy . y) through the forward call, with bias. */
static double loss(norm_case *c, udnnHandle_t h, double eps, const double *dy)
{
    tu_upload(&c->x);
    tu_upload(&c->scale);
    tu_upload(&c->bias);
    tu_ok(call_fwd(c, h, eps, 1, 0));
    tu_download(&c->y);
    return tu_dot(&c->y, dy);
}

/* dL/dt by central differences, one element of t at a time. */
static void numeric_grad(norm_case *c, udnnHandle_t h, double eps, const double *dy,
                         tu_tensor *t, double *out)
{
    const double step = 1e-6;
    for (int64_t i = 0; i < t->count; i++) {
        double v = tu_get(t, i);
        tu_set(t, i, v + step);
        double up = loss(c, h, eps, dy);
        tu_set(t, i, v - step);
        double down = loss(c, h, eps, dy);
        tu_set(t, i, v);
        out[i] = (up - down) / (2.0 * step);
    }
    tu_upload(t);
}

/* Relative error of the backward result against the numerical gradient;
 * where the true gradient is 0 (a set of one element) the numerical one
 * is exactly 0 and the backward result must be nearly so. */
static void compare_grad(tu_tensor *t, const double *num, const char *what, const char *arg)
{
    double *ana = values_of(t);
    double norm = 0.0, diff = 0.0;
    for (int64_t i = 0; i < t->count; i++) {
        norm += num[i] * num[i];
        diff += (ana[i] - num[i]) * (ana[i] - num[i]);
    }
    double err = norm == 0.0 ? sqrt(diff) : tu_rel_error(ana, num, t->count);
    ck_assert_msg(err < 1e-6, "%s: %s: error %g against finite differences (seed %llu)", what,
                  arg, err, (unsigned long long)tu_seed_used());
    free(ana);
}

static void check_finite_differences(udnnHandle_t h, const char *what, int fam, int k,
                                     tu_layout l, int rank, const int *dims)
{
    const double eps = 1e-2;
    norm_case c;
    case_init(&c, h, fam, k, UDNN_DATA_DOUBLE, l, rank, dims);
    case_fill(&c);
    double *dy = values_of(&c.dy);
    tu_ok(call_fwd(&c, h, eps, 1, 1));
    tu_ok(call_bwd(&c, h, 1, 1));
    tu_download(&c.dx);
    tu_download(&c.dscale);
    tu_download(&c.dbias);

    double *num = malloc((size_t)c.x.count * sizeof *num);
    numeric_grad(&c, h, eps, dy, &c.x, num);
    compare_grad(&c.dx, num, what, "dx");
    numeric_grad(&c, h, eps, dy, &c.scale, num);
    compare_grad(&c.dscale, num, what, "dScale");
    if (fam != FAM_RMS) {
        numeric_grad(&c, h, eps, dy, &c.bias, num);
        compare_grad(&c.dbias, num, what, "dBias");
    }
    free(num);
    free(dy);
    case_free(&c);
}

static const int fd_norm_shapes[][5] = {{2, 3, 5, 0}, {3, 2, 3, 4}, {4, 2, 3, 1, 2}};
static const group_shape fd_group_shapes[] = {
    {3, {2, 6, 2}, {1, 2, 3, 6}}, {4, {2, 3, 2, 2}, {1, 3}}, {5, {1, 4, 2, 1, 2}, {2, 4}}};

START_TEST(test_norm_finite_differences)
{
    tu_seed_fresh();
    int fam = _i % 2;
    tu_layout l = (tu_layout)(_i / 2);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < 3; s++)
            for (int nd = 1; nd < fd_norm_shapes[s][0]; nd++) {
                char what[128];
                snprintf(what, sizeof what, "%s %s %s shape %d normalizedDims %d",
                         tu_backend_name(bk), fam_names[fam], tu_layout_name(l), s, nd);
                check_finite_differences(h, what, fam, nd, l, fd_norm_shapes[s][0],
                                         &fd_norm_shapes[s][1]);
            }
    }
}
END_TEST

START_TEST(test_groupnorm_finite_differences)
{
    tu_seed_fresh();
    tu_layout l = (tu_layout)_i;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < 3; s++) {
            const group_shape *gs = &fd_group_shapes[s];
            for (int j = 0; j < 4 && gs->groups[j] > 0; j++) {
                char what[128];
                snprintf(what, sizeof what, "%s group %s shape %d groups %d", tu_backend_name(bk),
                         tu_layout_name(l), s, gs->groups[j]);
                check_finite_differences(h, what, FAM_GROUP, gs->groups[j], l, gs->rank,
                                         gs->dims);
            }
        }
    }
}
END_TEST

/* ---- validation ---------------------------------------------------------------------------- */

/* f32 x 2 x 6 x 4 x 5: layer norm over the last 2 dims (scale 1x1x4x5,
 * stats 2x6x1x1), group norm in 3 groups (scale 1x6x1x1, stats 2x3x1x1);
 * the wrong descriptors the cases swap in. The side buffers fit both. */
typedef struct {
    udnnHandle_t h;
    tu_tensor x, y, dy, dx, scale, bias, mean, inv, dscale, dbias;
    udnnTensorDescriptor_t gscale, gstats;
    udnnTensorDescriptor_t unset, s8, f64, other_dims, rank2, rank3, nhwc, f16, f16_scale,
        f64_scale, f64_stats, scale_k4, scale_lead2, scale_r3, stats_w4, stats_r3,
        gscale_c3, gstats_g6, gstats_r3;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 6, 4, 5}, other[4] = {2, 6, 5, 4}, r2[2] = {2, 120},
                     r3[3] = {2, 6, 20}, scale[4] = {1, 1, 4, 5}, stats[4] = {2, 6, 1, 1},
                     gscale[4] = {1, 6, 1, 1}, gstats[4] = {2, 3, 1, 1},
                     scale_k4[4] = {1, 1, 4, 4}, scale_lead2[4] = {2, 1, 4, 5},
                     scale_r3[3] = {1, 4, 5}, stats_w4[4] = {2, 6, 4, 1}, stats_r3[3] = {2, 6, 1},
                     gscale_c3[4] = {1, 3, 1, 1}, gstats_g6[4] = {2, 6, 1, 1},
                     gstats_r3[3] = {2, 3, 1};
    f->h = tu_handle(be);
    tu_tensor_init(&f->x, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->y, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->dy, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->dx, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->scale, f->h, UDNN_DATA_FLOAT, 4, scale, TU_NCHW);
    tu_tensor_init(&f->bias, f->h, UDNN_DATA_FLOAT, 4, scale, TU_NCHW);
    tu_tensor_init(&f->dscale, f->h, UDNN_DATA_FLOAT, 4, scale, TU_NCHW);
    tu_tensor_init(&f->dbias, f->h, UDNN_DATA_FLOAT, 4, scale, TU_NCHW);
    tu_tensor_init(&f->mean, f->h, UDNN_DATA_FLOAT, 4, stats, TU_NCHW);
    tu_tensor_init(&f->inv, f->h, UDNN_DATA_FLOAT, 4, stats, TU_NCHW);
    tu_fill_uniform(&f->x, -1, 1);
    tu_fill_uniform(&f->dy, -1, 1);
    tu_fill_uniform(&f->scale, 0.5, 1.5);
    tu_fill_uniform(&f->bias, -1, 1);
    tu_fill_uniform(&f->mean, -0.1, 0.1);
    tu_fill_uniform(&f->inv, 0.5, 2);
    f->gscale = tu_packed_desc(UDNN_DATA_FLOAT, 4, gscale);
    f->gstats = tu_packed_desc(UDNN_DATA_FLOAT, 4, gstats);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->rank2 = tu_packed_desc(UDNN_DATA_FLOAT, 2, r2);
    f->rank3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, r3);
    tu_ok(udnnCreateTensorDescriptor(&f->nhwc));
    tu_ok(udnnSetTensor4dDescriptor(f->nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 6, 4, 5));
    f->f16 = tu_packed_desc(UDNN_DATA_HALF, 4, dims);
    f->f16_scale = tu_packed_desc(UDNN_DATA_HALF, 4, scale);
    f->f64_scale = tu_packed_desc(UDNN_DATA_DOUBLE, 4, scale);
    f->f64_stats = tu_packed_desc(UDNN_DATA_DOUBLE, 4, stats);
    f->scale_k4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, scale_k4);
    f->scale_lead2 = tu_packed_desc(UDNN_DATA_FLOAT, 4, scale_lead2);
    f->scale_r3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, scale_r3);
    f->stats_w4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, stats_w4);
    f->stats_r3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, stats_r3);
    f->gscale_c3 = tu_packed_desc(UDNN_DATA_FLOAT, 4, gscale_c3);
    f->gstats_g6 = tu_packed_desc(UDNN_DATA_FLOAT, 4, gstats_g6);
    f->gstats_r3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, gstats_r3);
}

static void fixture_free(fixture *f)
{
    tu_tensor *ts[] = {&f->x,     &f->y,    &f->dy,   &f->dx,     &f->scale,
                       &f->bias,  &f->mean, &f->inv,  &f->dscale, &f->dbias};
    for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) tu_tensor_free(ts[i]);
    udnnTensorDescriptor_t ds[] = {f->gscale,    f->gstats,      f->unset,    f->s8,
                                   f->f64,       f->other_dims,  f->rank2,    f->rank3,
                                   f->nhwc,      f->f16,         f->f16_scale, f->f64_scale,
                                   f->f64_stats, f->scale_k4,    f->scale_lead2, f->scale_r3,
                                   f->stats_w4,  f->stats_r3,    f->gscale_c3, f->gstats_g6,
                                   f->gstats_r3};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
    udnnDestroy(f->h);
}

/* A rejected call writes nothing; x's buffer is also checked unchanged by
 * the in-place cases through y and dx being poisoned. */
static void assert_outputs_untouched(fixture *f, int backward)
{
    if (backward) {
        tu_assert_untouched(&f->dx.buf, "dx");
        tu_assert_untouched(&f->dscale.buf, "dScale");
        tu_assert_untouched(&f->dbias.buf, "dBias");
    } else {
        tu_assert_untouched(&f->y.buf, "y");
    }
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

/* The forward arguments of either family, for the cases to spoil. */
typedef struct {
    udnnHandle_t h;
    udnnNormMode_t mode;
    int k; /* normalizedDims, or groups */
    double eps;
    udnnTensorDescriptor_t xd, sd, yd, td;
    const void *x, *scale, *bias;
    void *y, *mean, *inv;
} fwd_args;

static void fwd_args_init(fwd_args *a, fixture *f, int grouped)
{
    a->h = f->h;
    a->mode = UDNN_NORM_LAYER;
    a->k = grouped ? 3 : 2;
    a->eps = 1e-5;
    a->xd = f->x.desc;
    a->sd = grouped ? f->gscale : f->scale.desc;
    a->yd = f->y.desc;
    a->td = grouped ? f->gstats : f->mean.desc;
    a->x = tu_buf_ptr(&f->x.buf);
    a->scale = tu_buf_ptr(&f->scale.buf);
    a->bias = tu_buf_ptr(&f->bias.buf);
    a->y = tu_buf_ptr(&f->y.buf);
    a->mean = tu_buf_ptr(&f->mean.buf);
    a->inv = tu_buf_ptr(&f->inv.buf);
}

/* The cases both forward calls share, by number; returns 0 past them. */
static int spoil_fwd_common(int i, fwd_args *a, fixture *f)
{
    switch (i) {
    case 0: a->h = NULL; break;
    case 1: a->xd = NULL; break;
    case 2: a->xd = f->unset; break;
    case 3: a->x = NULL; break;
    case 4: a->sd = NULL; break;
    case 5: a->sd = f->unset; break;
    case 6: a->scale = NULL; break;
    case 7: a->yd = NULL; break;
    case 8: a->yd = f->unset; break;
    case 9: a->y = NULL; break;
    case 10: a->td = NULL; break;
    case 11: a->td = NULL, a->mean = NULL; break;
    case 12: a->td = f->unset; break;
    case 13: a->xd = a->yd = f->s8; break;
    case 14: a->eps = -1e-3; break;
    case 15: a->eps = NAN; break;
    case 16: a->eps = INFINITY; break;
    case 17: a->yd = f->f64; break;
    case 18: a->yd = f->other_dims; break;
    case 19: a->yd = f->nhwc, a->y = (void *)a->x; break;
    case 20: a->sd = f->f64_scale; break;
    case 21: a->td = f->f64_stats; break;
    /* statsDesc is checked whenever given, even with no statistics */
    case 22: a->td = f->stats_r3, a->mean = a->inv = NULL; break;
    default: return 0;
    }
    return 1;
}

static const bad_expect fwd_common_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "scale is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc is NULL, but saveMean"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc is NULL, but saveInvStd"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has not"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is -0.001"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is nan"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is inf"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f64; for f32 data it must be f32"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has 3 dimensions"},
};
#define N_FWD_COMMON ((int)(sizeof fwd_common_bad / sizeof *fwd_common_bad))

static const bad_expect norm_fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "mode 2"},
    {UDNN_STATUS_BAD_PARAM, "mode -1"},
    {UDNN_STATUS_BAD_PARAM, "normalizedDims is 0"},
    {UDNN_STATUS_BAD_PARAM, "normalizedDims is 4; xDesc has 4 dimensions, so it must be 1 to 3"},
    {UDNN_STATUS_BAD_PARAM, "normalizedDims is -1"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 3 of size 4; it must be 5"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 0 of size 2; it must be 1"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has dimension 2 of size 4; it must be 1"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f16; for f16 data it must be f32"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f32; for f64 data it must be f64"},
    /* normalizedDims 1 wants scale 1x1x1x5 and stats 2x6x4x1 */
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 2 of size 4; it must be 1"},
};
#define N_NORM_FWD_BAD (N_FWD_COMMON + (int)(sizeof norm_fwd_bad / sizeof *norm_fwd_bad))

START_TEST(test_norm_fwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        fwd_args a;
        fwd_args_init(&a, &f, 0);
        const bad_expect *want = &fwd_common_bad[_i];
        if (!spoil_fwd_common(_i, &a, &f)) {
            int i = _i - N_FWD_COMMON;
            want = &norm_fwd_bad[i];
            switch (i) {
            case 0: a.mode = (udnnNormMode_t)2; break;
            case 1: a.mode = (udnnNormMode_t)-1; break;
            case 2: a.k = 0; break;
            case 3: a.k = 4; break;
            case 4: a.k = -1; break;
            case 5: a.sd = f.scale_r3; break;
            case 6: a.sd = f.scale_k4; break;
            case 7: a.sd = f.scale_lead2; break;
            case 8: a.td = f.stats_w4; break;
            case 9: a.xd = a.yd = f.f16, a.sd = f.f16_scale; break;
            case 10: a.xd = a.yd = f.f64, a.td = f.f64_stats; break;
            case 11: a.k = 1; break;
            }
        }
        udnnStatus_t st = udnnNormForward(a.h, a.mode, a.k, a.eps, a.xd, a.x, a.sd, a.scale,
                                          a.bias, a.yd, a.y, a.td, a.mean, a.inv);
        tu_assert_fails(st, want->status, "udnnNormForward", want->arg);
        assert_outputs_untouched(&f, 0);
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect group_fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "xDesc has 2 dimensions; this op takes 3 to 8"},
    {UDNN_STATUS_BAD_PARAM, "groups is 0; it must be at least 1"},
    {UDNN_STATUS_BAD_PARAM, "groups is -2"},
    {UDNN_STATUS_BAD_PARAM, "groups is 4; it does not divide the 6 channels of xDesc"},
    {UDNN_STATUS_BAD_PARAM, "groups is 12; it does not divide"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 1 of size 3; it must be 6"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 1 of size 1; it must be 6"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has dimension 1 of size 6; it must be 3"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f16; for f16 data it must be f32"},
};
#define N_GROUP_FWD_BAD (N_FWD_COMMON + (int)(sizeof group_fwd_bad / sizeof *group_fwd_bad))

START_TEST(test_groupnorm_fwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        fwd_args a;
        fwd_args_init(&a, &f, 1);
        const bad_expect *want = &fwd_common_bad[_i];
        if (!spoil_fwd_common(_i, &a, &f)) {
            int i = _i - N_FWD_COMMON;
            want = &group_fwd_bad[i];
            switch (i) {
            case 0: a.xd = a.yd = f.rank2; break;
            case 1: a.k = 0; break;
            case 2: a.k = -2; break;
            case 3: a.k = 4; break;
            case 4: a.k = 12; break;
            case 5: a.sd = f.gscale_c3; break;
            case 6: a.sd = f.scale.desc; break;
            case 7: a.td = f.gstats_g6; break;
            case 8: a.td = f.gstats_r3; break;
            case 9: a.xd = a.yd = f.f16, a.sd = f.f16_scale; break;
            }
        }
        udnnStatus_t st = udnnGroupNormForward(a.h, a.k, a.eps, a.xd, a.x, a.sd, a.scale, a.bias,
                                               a.yd, a.y, a.td, a.mean, a.inv);
        tu_assert_fails(st, want->status, "udnnGroupNormForward", want->arg);
        assert_outputs_untouched(&f, 0);
        fixture_free(&f);
    }
}
END_TEST

/* The backward arguments of either family. */
typedef struct {
    udnnHandle_t h;
    udnnNormMode_t mode;
    int k;
    udnnTensorDescriptor_t xd, dyd, sd, td, dxd;
    const void *x, *dy, *scale, *mean, *inv;
    void *dx, *dscale, *dbias;
} bwd_args;

static void bwd_args_init(bwd_args *a, fixture *f, int grouped)
{
    a->h = f->h;
    a->mode = UDNN_NORM_LAYER;
    a->k = grouped ? 3 : 2;
    a->xd = f->x.desc;
    a->dyd = f->dy.desc;
    a->sd = grouped ? f->gscale : f->scale.desc;
    a->td = grouped ? f->gstats : f->mean.desc;
    a->dxd = f->dx.desc;
    a->x = tu_buf_ptr(&f->x.buf);
    a->dy = tu_buf_ptr(&f->dy.buf);
    a->scale = tu_buf_ptr(&f->scale.buf);
    a->mean = tu_buf_ptr(&f->mean.buf);
    a->inv = tu_buf_ptr(&f->inv.buf);
    a->dx = tu_buf_ptr(&f->dx.buf);
    a->dscale = tu_buf_ptr(&f->dscale.buf);
    a->dbias = tu_buf_ptr(&f->dbias.buf);
}

static int spoil_bwd_common(int i, bwd_args *a, fixture *f)
{
    switch (i) {
    case 0: a->h = NULL; break;
    case 1: a->xd = NULL; break;
    case 2: a->xd = f->unset; break;
    case 3: a->x = NULL; break;
    case 4: a->dyd = NULL; break;
    case 5: a->dyd = f->unset; break;
    case 6: a->dy = NULL; break;
    case 7: a->sd = NULL; break;
    case 8: a->sd = f->unset; break;
    case 9: a->scale = NULL; break;
    case 10: a->td = NULL; break;
    case 11: a->td = f->unset; break;
    case 12: a->mean = NULL; break;
    case 13: a->inv = NULL; break;
    case 14: a->dxd = NULL; break;
    case 15: a->dxd = f->unset; break;
    case 16: a->dx = NULL; break;
    case 17: a->dscale = NULL; break;
    case 18: a->xd = a->dyd = a->dxd = f->s8; break;
    case 19: a->dyd = f->f64; break;
    case 20: a->dxd = f->f64; break;
    case 21: a->dyd = f->other_dims; break;
    case 22: a->dxd = f->other_dims; break;
    case 23: a->dxd = f->nhwc, a->dx = (void *)a->dy; break;
    case 24: a->dxd = f->nhwc, a->dx = (void *)a->x; break;
    case 25: a->sd = f->f64_scale; break;
    case 26: a->td = f->f64_stats; break;
    case 27: a->td = f->stats_r3; break;
    default: return 0;
    }
    return 1;
}

static const bad_expect bwd_common_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "scale is NULL"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "savedMean is NULL"},
    {UDNN_STATUS_BAD_PARAM, "savedInvStd is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dScale is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of dy"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of x"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has 3 dimensions; it must have xDesc's 4"},
};
#define N_BWD_COMMON ((int)(sizeof bwd_common_bad / sizeof *bwd_common_bad))

static const bad_expect norm_bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "mode 3"},
    {UDNN_STATUS_BAD_PARAM, "normalizedDims is 0"},
    {UDNN_STATUS_BAD_PARAM, "normalizedDims is 4"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 3 of size 4; it must be 5"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has dimension 2 of size 4; it must be 1"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has data type f16; for f16 data it must be f32"},
    /* RMS still needs savedInvStd */
    {UDNN_STATUS_BAD_PARAM, "savedInvStd is NULL"},
};
#define N_NORM_BWD_BAD (N_BWD_COMMON + (int)(sizeof norm_bwd_bad / sizeof *norm_bwd_bad))

START_TEST(test_norm_bwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        bwd_args a;
        bwd_args_init(&a, &f, 0);
        const bad_expect *want = &bwd_common_bad[_i];
        if (!spoil_bwd_common(_i, &a, &f)) {
            int i = _i - N_BWD_COMMON;
            want = &norm_bwd_bad[i];
            switch (i) {
            case 0: a.mode = (udnnNormMode_t)3; break;
            case 1: a.k = 0; break;
            case 2: a.k = 4; break;
            case 3: a.sd = f.scale_k4; break;
            case 4: a.td = f.stats_w4; break;
            case 5: a.xd = a.dyd = a.dxd = f.f16, a.sd = f.f16_scale; break;
            case 6: a.mode = UDNN_NORM_RMS, a.mean = NULL, a.inv = NULL; break;
            }
        }
        udnnStatus_t st = udnnNormBackward(a.h, a.mode, a.k, a.xd, a.x, a.dyd, a.dy, a.sd,
                                           a.scale, a.td, a.mean, a.inv, a.dxd, a.dx, a.dscale,
                                           a.dbias);
        tu_assert_fails(st, want->status, "udnnNormBackward", want->arg);
        assert_outputs_untouched(&f, 1);
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect group_bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "xDesc has 2 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "groups is 0"},
    {UDNN_STATUS_BAD_PARAM, "groups is 5; it does not divide the 6 channels"},
    {UDNN_STATUS_BAD_PARAM, "scaleBiasDesc has dimension 1 of size 3; it must be 6"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has dimension 1 of size 6; it must be 3"},
    {UDNN_STATUS_BAD_PARAM, "statsDesc has dimension 0 of size 1; it must be 2"},
};
#define N_GROUP_BWD_BAD (N_BWD_COMMON + (int)(sizeof group_bwd_bad / sizeof *group_bwd_bad))

START_TEST(test_groupnorm_bwd_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        bwd_args a;
        bwd_args_init(&a, &f, 1);
        const bad_expect *want = &bwd_common_bad[_i];
        if (!spoil_bwd_common(_i, &a, &f)) {
            int i = _i - N_BWD_COMMON;
            want = &group_bwd_bad[i];
            switch (i) {
            case 0: a.xd = a.dyd = a.dxd = f.rank2; break;
            case 1: a.k = 0; break;
            case 2: a.k = 5; break;
            case 3: a.sd = f.gscale_c3; break;
            case 4: a.td = f.gstats_g6; break;
            case 5: a.td = f.gscale; break;
            }
        }
        udnnStatus_t st = udnnGroupNormBackward(a.h, a.k, a.xd, a.x, a.dyd, a.dy, a.sd, a.scale,
                                                a.td, a.mean, a.inv, a.dxd, a.dx, a.dscale,
                                                a.dbias);
        tu_assert_fails(st, want->status, "udnnGroupNormBackward", want->arg);
        assert_outputs_untouched(&f, 1);
        fixture_free(&f);
    }
}
END_TEST

/* NULL bias, NULL statistics with a NULL statsDesc, NULL dBias and, for
 * RMS, a NULL savedMean are all accepted (the op tests run them). A valid
 * statsDesc with no statistics is accepted too. */
START_TEST(test_optional_arguments)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        fwd_args a;
        fwd_args_init(&a, &f, _i);
        a.bias = NULL;
        a.mean = a.inv = NULL;
        if (_i) {
            tu_ok(udnnGroupNormForward(a.h, a.k, a.eps, a.xd, a.x, a.sd, a.scale, a.bias, a.yd,
                                       a.y, a.td, a.mean, a.inv));
        } else {
            tu_ok(udnnNormForward(a.h, UDNN_NORM_RMS, a.k, a.eps, a.xd, a.x, a.sd, a.scale,
                                  a.bias, a.yd, a.y, a.td, a.mean, a.inv));
            bwd_args w;
            bwd_args_init(&w, &f, 0);
            tu_ok(udnnNormBackward(w.h, UDNN_NORM_RMS, w.k, w.xd, w.x, w.dyd, w.dy, w.sd,
                                   w.scale, w.td, NULL, w.inv, w.dxd, w.dx, w.dscale, NULL));
        }
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("norm");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_norm_types_layouts, 0, 2 * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_groupnorm_types_layouts, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_hand_forward, 0, N_FAMS * N_TYPES);
    tcase_add_loop_test(ops, test_hand_backward, 0, N_FAMS * N_TYPES);
    tcase_add_loop_test(ops, test_single_element_groups, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_rms_ignores_bias, 0, N_TYPES);
    tcase_add_loop_test(ops, test_in_place, 0, 2 * N_FAMS * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_long_rows, 0, 2 * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_few_long_sets, 0, N_FAMS * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_norm_finite_differences, 0, 2 * N_LAYOUTS);
    tcase_add_loop_test(ops, test_groupnorm_finite_differences, 0, N_LAYOUTS);
    suite_add_tcase(s, ops);

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_norm_fwd_bad, 0, N_NORM_FWD_BAD);
    tcase_add_loop_test(bad, test_groupnorm_fwd_bad, 0, N_GROUP_FWD_BAD);
    tcase_add_loop_test(bad, test_norm_bwd_bad, 0, N_NORM_BWD_BAD);
    tcase_add_loop_test(bad, test_groupnorm_bwd_bad, 0, N_GROUP_BWD_BAD);
    tcase_add_loop_test(bad, test_optional_arguments, 0, 2);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
