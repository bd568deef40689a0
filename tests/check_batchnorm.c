/* check_batchnorm.c - BatchNormalizationForwardTraining, ForwardInference
 * and Backward on every backend: every mode x type x layout over 4-D and
 * 5-D shapes against an expectation computed here in double, the running
 * statistics over successive calls, saved statistics, alpha/beta for data
 * and parameters, hand-computed values, in-place runs, finite differences
 * of the training forward in DOUBLE, and every validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static const udnnBatchNormMode_t bn_modes[] = {UDNN_BATCHNORM_PER_ACTIVATION,
                                               UDNN_BATCHNORM_SPATIAL,
                                               UDNN_BATCHNORM_SPATIAL_PERSISTENT};
static const char *const mode_names[] = {"per_activation", "spatial", "spatial_persistent"};
#define N_MODES 3
#define N_TYPES 4
#define N_LAYOUTS 3

/* Shapes: rank, dims. C = 1, 3, 5, 7; N = 1 (one value per statistic per
 * activation: training rejects it there, inference and backward take it);
 * H = W = 1; a last dim of 1; 4-D and 5-D. */
static const int shapes[][6] = {
    {4, 2, 3, 4, 5, 0}, {4, 3, 1, 3, 3, 0}, {4, 1, 5, 3, 4, 0}, {4, 4, 7, 1, 1, 0},
    {4, 3, 3, 5, 1, 0}, {5, 2, 3, 2, 3, 4}, {5, 3, 5, 2, 1, 3}, {5, 1, 1, 2, 3, 2},
    /* large (test_large): a GPU one-launch group spans several blocks, in
     * NCHW and NHWC, with 16-byte vectors of channels (C = 16) or not */
    {4, 32, 4, 32, 32, 0}, {4, 16, 16, 32, 32, 0},
    /* rows (test_rows, NHWC, GPU backends): 12 and 13 million elements,
     * enough for the GPU's whole-row kernel (bn_rows.cu; for 16-bit data
     * from 40 MB of x and dy: HALF backward). C = 24 makes a row 3 (HALF)
     * or 6 (FLOAT) threads, so that the last threads of a block hold no
     * row; on an H100 each thread holds some of its rows in registers and
     * shared memory and reads the rest twice. */
    {4, 32, 24, 128, 128, 0}, {4, 32, 64, 80, 80, 0},
    /* clusters (test_cluster_channels, NCHW, GPU backends): channels of
     * 262144 and 524288 members, 1 MB and 2 MB in FLOAT, 512 KB and 1 MB in
     * HALF: on a GPU with thread-block clusters (bn_cluster.cu) FLOAT's 1
     * MB and HALF's 1 MB take clusters of 512-thread blocks, HALF's 512 KB
     * clusters of 256-thread blocks, FLOAT's 2 MB bn_keep; 300 channels of
     * 12800 members, more than an H100's or H200's resident clusters of one
     * block, so that clusters take several channels in turn; 140 channels
     * of 32768 members (x and dy, 256 KB a channel in FLOAT: a cluster of
     * two 200 KB blocks, should the backward take clusters too) */
    {4, 4, 2, 256, 256, 0}, {4, 8, 2, 256, 256, 0}, {4, 2, 300, 80, 80, 0},
    {4, 8, 140, 64, 64, 0},
};
#define N_ALL_SHAPES ((int)(sizeof shapes / sizeof *shapes))
#define N_LARGE 2
#define N_ROWS 2
#define N_CLUSTER 4
#define FIRST_CLUSTER (N_ALL_SHAPES - N_CLUSTER)
#define FIRST_ROWS (FIRST_CLUSTER - N_ROWS)
#define FIRST_LARGE (FIRST_ROWS - N_LARGE)
#define N_SHAPES FIRST_LARGE /* the small ones every test loops over */

static const double eps_default = 1e-3;

/* ---- a problem and its buffers ----------------------------------------------------- */

/* The statistics type for data of type t, as udnnDeriveBNTensorDescriptor gives it. */
static udnnDataType_t param_type(udnnDataType_t t)
{
    return t == UDNN_DATA_HALF || t == UDNN_DATA_BFLOAT16 ? UDNN_DATA_FLOAT : t;
}

/* Every tensor of one problem. mean/var are the running statistics in
 * training and the estimated ones in inference; save_mean/save_inv hold
 * what training saves and backward consumes. */
typedef struct {
    udnnHandle_t h;
    udnnBatchNormMode_t mode;
    int nb, dims[UDNN_DIM_MAX], pdims[UDNN_DIM_MAX];
    int64_t n, c, s; /* n, c, and the positions after c */
    int64_t features, members;
    tu_tensor x, y, dy, dx;
    tu_tensor scale, bias, mean, var, save_mean, save_inv, dscale, dbias;
} bn_set;

static void bn_set_init(bn_set *b, udnnHandle_t h, udnnBatchNormMode_t mode, udnnDataType_t t,
                        tu_layout l, int nb, const int *dims)
{
    memset(b, 0, sizeof *b);
    b->h = h;
    b->mode = mode;
    b->nb = nb;
    const int per_act = mode == UDNN_BATCHNORM_PER_ACTIVATION;
    b->n = dims[0];
    b->c = dims[1];
    b->s = 1;
    for (int i = 0; i < nb; i++) {
        b->dims[i] = dims[i];
        b->pdims[i] = i == 0 ? 1 : i == 1 || per_act ? dims[i] : 1;
        if (i >= 2) b->s *= dims[i];
    }
    b->features = per_act ? b->c * b->s : b->c;
    b->members = per_act ? b->n : b->n * b->s;
    tu_tensor *data[] = {&b->x, &b->y, &b->dy, &b->dx};
    for (int i = 0; i < 4; i++) tu_tensor_init(data[i], h, t, nb, dims, l);
    tu_tensor *params[] = {&b->scale, &b->bias,     &b->mean,   &b->var,
                           &b->save_mean, &b->save_inv, &b->dscale, &b->dbias};
    for (int i = 0; i < 8; i++) tu_tensor_init(params[i], h, param_type(t), nb, b->pdims, l);
}

static void bn_set_free(bn_set *b)
{
    tu_tensor *all[] = {&b->x,    &b->y,   &b->dy,        &b->dx,       &b->scale,  &b->bias,
                        &b->mean, &b->var, &b->save_mean, &b->save_inv, &b->dscale, &b->dbias};
    for (int i = 0; i < 12; i++) tu_tensor_free(all[i]);
}

/* The feature (and so the logical index into every statistics tensor) of
 * x's logical element i. */
static int64_t feature_of(const bn_set *b, int64_t i)
{
    int64_t c = (i / b->s) % b->c, s = i % b->s;
    return b->mode == UDNN_BATCHNORM_PER_ACTIVATION ? c * b->s + s : c;
}

static double *values(int64_t n)
{
    double *v = calloc((size_t)n, sizeof *v);
    ck_assert_ptr_nonnull(v);
    return v;
}

/* ---- the expectation, from the rounded inputs ------------------------------------- */

/* Batch mean and biased variance of every feature, in two passes. */
static void expect_stats(const bn_set *b, double *mean, double *var)
{
    for (int64_t f = 0; f < b->features; f++) mean[f] = var[f] = 0.0;
    for (int64_t i = 0; i < b->x.count; i++) mean[feature_of(b, i)] += tu_get(&b->x, i);
    for (int64_t f = 0; f < b->features; f++) mean[f] /= (double)b->members;
    for (int64_t i = 0; i < b->x.count; i++) {
        double d = tu_get(&b->x, i) - mean[feature_of(b, i)];
        var[feature_of(b, i)] += d * d;
    }
    for (int64_t f = 0; f < b->features; f++) var[f] /= (double)b->members;
}

/* Unblended y = scale * (x - mean) * inv_std + bias. */
static void expect_y(const bn_set *b, const double *mean, const double *inv_std, double *y)
{
    for (int64_t i = 0; i < b->x.count; i++) {
        int64_t f = feature_of(b, i);
        y[i] = tu_get(&b->scale, f) * (tu_get(&b->x, i) - mean[f]) * inv_std[f] +
               tu_get(&b->bias, f);
    }
}

/* Unblended gradients for the given statistics. */
static void expect_grads(const bn_set *b, const double *mean, const double *inv_std, double *dx,
                         double *dscale, double *dbias)
{
    for (int64_t f = 0; f < b->features; f++) dscale[f] = dbias[f] = 0.0;
    for (int64_t i = 0; i < b->x.count; i++) {
        int64_t f = feature_of(b, i);
        double g = tu_get(&b->dy, i);
        dbias[f] += g;
        dscale[f] += g * (tu_get(&b->x, i) - mean[f]) * inv_std[f];
    }
    const double m = (double)b->members;
    for (int64_t i = 0; i < b->x.count; i++) {
        int64_t f = feature_of(b, i);
        double xhat = (tu_get(&b->x, i) - mean[f]) * inv_std[f];
        dx[i] = tu_get(&b->scale, f) * inv_std[f] / m *
                (m * tu_get(&b->dy, i) - dbias[f] - xhat * dscale[f]);
    }
}

/* How far the terms of dscale or dbias cancel, whichever cancels more: the
 * norm over features of each sum's absolute terms over the norm of the
 * sums (infinite where the sums are all zero). The batch's xhat sums to 0,
 * so on a feature of a few members sum(dy xhat) can be a small remainder
 * of its terms; the GPU's flows for 16-bit data add a thread's terms in
 * float, about 1e-7 of them, which is then over 1e-5 of the remainder
 * (seed 1883074396769782: 12 members, terms 2387 times dscale, 5.9e-5). */
static double grads_cancellation(const bn_set *b, const double *mean, const double *inv_std)
{
    double *sums = values(2 * b->features), *terms = values(2 * b->features);
    for (int64_t i = 0; i < b->x.count; i++) {
        int64_t f = feature_of(b, i);
        double g = tu_get(&b->dy, i), gx = g * (tu_get(&b->x, i) - mean[f]) * inv_std[f];
        sums[f] += g;
        terms[f] += fabs(g);
        sums[b->features + f] += gx;
        terms[b->features + f] += fabs(gx);
    }
    double worst = 0.0;
    for (int which = 0; which < 2; which++) {
        double sums_sq = 0.0, terms_sq = 0.0;
        for (int64_t f = which * b->features; f < (which + 1) * b->features; f++) {
            sums_sq += sums[f] * sums[f];
            terms_sq += terms[f] * terms[f];
        }
        worst = fmax(worst, sums_sq > 0.0 ? sqrt(terms_sq / sums_sq) : INFINITY);
    }
    free(sums);
    free(terms);
    return worst;
}

/* ---- calls ---------------------------------------------------------------------------- */

static void *ptr(tu_tensor *t)
{
    return tu_buf_ptr(&t->buf);
}

static udnnStatus_t run_train(bn_set *b, double alpha, double beta, double factor, double eps,
                              int with_running, int with_save)
{
    udnnDataType_t t = b->x.dtype;
    tu_scalar a = tu_scalar_of(t, alpha), be = tu_scalar_of(t, beta);
    return udnnBatchNormalizationForwardTraining(
        b->h, b->mode, &a, &be, b->x.desc, ptr(&b->x), b->y.desc, ptr(&b->y), b->scale.desc,
        ptr(&b->scale), ptr(&b->bias), factor, with_running ? ptr(&b->mean) : NULL,
        with_running ? ptr(&b->var) : NULL, eps, with_save ? ptr(&b->save_mean) : NULL,
        with_save ? ptr(&b->save_inv) : NULL);
}

static udnnStatus_t run_infer(bn_set *b, double alpha, double beta, double eps)
{
    udnnDataType_t t = b->x.dtype;
    tu_scalar a = tu_scalar_of(t, alpha), be = tu_scalar_of(t, beta);
    return udnnBatchNormalizationForwardInference(b->h, b->mode, &a, &be, b->x.desc, ptr(&b->x),
                                                  b->y.desc, ptr(&b->y), b->scale.desc,
                                                  ptr(&b->scale), ptr(&b->bias), ptr(&b->mean),
                                                  ptr(&b->var), eps);
}

/* run_bwd's scalars unblended, and blended with each away from 0 and 1 */
static const double bwd_plain[4] = {1.0, 0.0, 1.0, 0.0};
static const double bwd_mixed[4] = {-0.75, 0.5, 1.5, -0.25};

/* Scalars: alpha and beta for dx, then for dscale and dbias. */
static udnnStatus_t run_bwd(bn_set *b, const double sc[4], double eps, int with_saved)
{
    udnnDataType_t t = b->x.dtype;
    tu_scalar ad = tu_scalar_of(t, sc[0]), bd = tu_scalar_of(t, sc[1]),
              ap = tu_scalar_of(t, sc[2]), bp = tu_scalar_of(t, sc[3]);
    return udnnBatchNormalizationBackward(
        b->h, b->mode, &ad, &bd, &ap, &bp, b->x.desc, ptr(&b->x), b->dy.desc, ptr(&b->dy),
        b->dx.desc, ptr(&b->dx), b->scale.desc, ptr(&b->scale), ptr(&b->dscale), ptr(&b->dbias),
        eps, with_saved ? ptr(&b->save_mean) : NULL, with_saved ? ptr(&b->save_inv) : NULL);
}

static void describe(char *buf, size_t n, udnnBackend_t be, int mode, udnnDataType_t t,
                     tu_layout l, int shape, const char *what)
{
    snprintf(buf, n, "%s %s %s %s shape %d: %s", tu_backend_name(be), mode_names[mode],
             tu_dtype_name(t), tu_layout_name(l), shape, what);
}

/* Stores values into a statistics tensor (rounded to its type) and uploads. */
static void set_all(tu_tensor *t, const double *v)
{
    for (int64_t i = 0; i < t->count; i++) tu_set(t, i, v[i]);
    tu_upload(t);
}

/* The CPU's expectations of one problem: an output of x's size (dx or y),
 * the batch statistics (mean, var, inv), dscale and dbias. */
typedef struct {
    double *ref, *mean, *var, *inv, *ds, *db;
} bn_want;

static bn_want bn_want_alloc(const bn_set *b)
{
    bn_want w = {values(b->x.count), values(b->features), values(b->features),
                 values(b->features), values(b->features), values(b->features)};
    return w;
}

static void bn_want_free(bn_want *w)
{
    free(w->ref);
    free(w->mean);
    free(w->var);
    free(w->inv);
    free(w->ds);
    free(w->db);
}

/* The batch's statistics of x into mean, var and inv; where saved, also
 * into save_mean and save_inv, with mean and inv then rounded to the
 * statistics type, as the backward reads them. */
static void batch_stats(bn_set *b, double *mean, double *var, double *inv, int saved)
{
    expect_stats(b, mean, var);
    for (int64_t f = 0; f < b->features; f++) inv[f] = 1.0 / sqrt(var[f] + eps_default);
    if (saved) {
        set_all(&b->save_mean, mean);
        set_all(&b->save_inv, inv);
        tu_values(&b->save_mean, mean);
        tu_values(&b->save_inv, inv);
    }
}

static void fill_inputs(bn_set *b)
{
    tu_fill_uniform(&b->x, -1.0, 3.0);
    tu_fill_uniform(&b->dy, -1.0, 1.0);
    tu_fill_uniform(&b->scale, -2.0, 2.0);
    tu_fill_uniform(&b->bias, -1.0, 1.0);
}

/* ---- forward training --------------------------------------------------------------- */

/* One shape: a first call (factor 1, every output poisoned) initializes the
 * running statistics and saves the batch's; a second on fresh x (factor
 * 0.3, nothing saved) moves them; a third (no running statistics) saves
 * only. */
static void check_training(udnnHandle_t h, udnnBackend_t be, int mode, udnnDataType_t t,
                           tu_layout l, int s, double alpha, double beta)
{
    bn_set b;
    bn_set_init(&b, h, bn_modes[mode], t, l, shapes[s][0], &shapes[s][1]);
    char what[160];
    double *ref = values(b.x.count), *mean = values(b.features), *var = values(b.features);
    double *inv = values(b.features);
    double *old_mean = values(b.features), *old_var = values(b.features);
    const double m = (double)b.members;
    for (int call = 0; call < 3; call++) {
        const double factor = call == 0 ? 1.0 : 0.3;
        const int with_running = call < 2, with_save = call != 1;
        fill_inputs(&b);
        if (beta == 0.0) tu_buf_poison(&b.y.buf);
        batch_stats(&b, mean, var, inv, 0);
        expect_y(&b, mean, inv, ref);
        tu_blend_drawn(ref, alpha, beta, &b.y);
        tu_ok(run_train(&b, alpha, beta, factor, eps_default, with_running, with_save));
        describe(what, sizeof what, be, mode, t, l, s, "y");
        tu_check_tensor(&b.y, ref, what);

        /* call 1 must not read the poisoned running buffers; call 2 blends
         * with what call 1 left; call 3 must leave them alone */
        for (int64_t f = 0; f < b.features; f++) {
            double rm = call == 0 ? mean[f] : 0.7 * old_mean[f] + 0.3 * mean[f];
            double rv = var[f] * m / (m - 1.0);
            rv = call == 0 ? rv : 0.7 * old_var[f] + 0.3 * rv;
            old_mean[f] = call == 2 ? old_mean[f] : rm;
            old_var[f] = call == 2 ? old_var[f] : rv;
        }
        describe(what, sizeof what, be, mode, t, l, s, "running mean");
        tu_check_tensor(&b.mean, old_mean, what);
        describe(what, sizeof what, be, mode, t, l, s, "running variance");
        tu_check_tensor(&b.var, old_var, what);
        /* the next call blends with the stored, rounded values */
        tu_values(&b.mean, old_mean);
        tu_values(&b.var, old_var);

        if (with_save) {
            describe(what, sizeof what, be, mode, t, l, s, "saved mean");
            tu_check_tensor(&b.save_mean, mean, what);
            describe(what, sizeof what, be, mode, t, l, s, "saved inverse std");
            tu_check_tensor(&b.save_inv, inv, what);
        }
        if (call == 0) {
            tu_buf_poison(&b.save_mean.buf);
            tu_buf_poison(&b.save_inv.buf);
        }
    }
    free(ref);
    free(mean);
    free(var);
    free(inv);
    free(old_mean);
    free(old_var);
    bn_set_free(&b);
}

/* Training needs two values per statistic. */
static int trainable(int s, int mode)
{
    int64_t m = shapes[s][1];
    if (bn_modes[mode] != UDNN_BATCHNORM_PER_ACTIVATION)
        for (int i = 3; i <= shapes[s][0]; i++) m *= shapes[s][i];
    return m >= 2;
}

START_TEST(test_training)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++)
            if (trainable(s, mode)) check_training(h, bk, mode, t, l, s, 1.0, 0.0);
    }
}
END_TEST

/* ---- forward inference ------------------------------------------------------------- */

static void check_inference(udnnHandle_t h, udnnBackend_t be, int mode, udnnDataType_t t,
                            tu_layout l, int s, double alpha, double beta)
{
    bn_set b;
    bn_set_init(&b, h, bn_modes[mode], t, l, shapes[s][0], &shapes[s][1]);
    fill_inputs(&b);
    tu_fill_uniform(&b.mean, -1.0, 1.0);
    tu_fill_uniform(&b.var, 0.25, 2.0);
    double *ref = values(b.x.count), *mean = values(b.features), *inv = values(b.features);
    for (int64_t f = 0; f < b.features; f++) {
        mean[f] = tu_get(&b.mean, f);
        inv[f] = 1.0 / sqrt(tu_get(&b.var, f) + eps_default);
    }
    expect_y(&b, mean, inv, ref);
    tu_blend_drawn(ref, alpha, beta, &b.y);
    tu_ok(run_infer(&b, alpha, beta, eps_default));
    char what[160];
    describe(what, sizeof what, be, mode, t, l, s, "y");
    tu_check_tensor(&b.y, ref, what);
    free(ref);
    free(mean);
    free(inv);
    bn_set_free(&b);
}

START_TEST(test_inference)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++) check_inference(h, bk, mode, t, l, s, 1.0, 0.0);
    }
}
END_TEST

/* ---- backward --------------------------------------------------------------------------- */

/* One shape, with saved statistics and (where the batch has two values per
 * statistic) with statistics recomputed from x. Saved statistics are the
 * batch's, rounded to the statistics type; with one value per statistic
 * the batch's would make every gradient 0, so arbitrary ones stand in. */
static void check_backward(udnnHandle_t h, udnnBackend_t be, int mode, udnnDataType_t t,
                           tu_layout l, int s, const double sc[4])
{
    bn_set b;
    bn_set_init(&b, h, bn_modes[mode], t, l, shapes[s][0], &shapes[s][1]);
    fill_inputs(&b);
    bn_want w = bn_want_alloc(&b);
    char what[160];
    for (int with_saved = 1; with_saved >= 0; with_saved--) {
        if (!with_saved && b.members < 2) break;
        if (with_saved && b.members < 2) { /* no batch statistics: any saved ones serve */
            tu_fill_uniform(&b.save_mean, -1.0, 1.0);
            tu_fill_uniform(&b.save_inv, 0.5, 2.0);
            tu_values(&b.save_mean, w.mean);
            tu_values(&b.save_inv, w.inv);
        } else {
            batch_stats(&b, w.mean, w.var, w.inv, with_saved);
        }
        /* with beta 0 the outputs stay poisoned; else tu_blend_drawn draws
         * them (dscale and dbias have one element where C is 1) */
        tu_buf_poison(&b.dx.buf);
        tu_buf_poison(&b.dscale.buf);
        tu_buf_poison(&b.dbias.buf);
        /* redraw dy while dscale's or dbias's terms cancel 32 times more
         * than uniform dy's typically do, about sqrt(members) (a fixed
         * bound redrew every large set 16 times: on test_rows' 13 million
         * elements that was most of the suite's time) */
        enum { MAX_DRAWS = 16 };
        const double max_cancellation = 32.0 * sqrt((double)(b.members > 1 ? b.members : 1));
        for (int draw = 1;
             grads_cancellation(&b, w.mean, w.inv) > max_cancellation && draw < MAX_DRAWS; draw++)
            tu_fill_uniform(&b.dy, -1.0, 1.0);
        expect_grads(&b, w.mean, w.inv, w.ref, w.ds, w.db);
        tu_blend_drawn(w.ref, sc[0], sc[1], &b.dx);
        tu_blend_drawn(w.ds, sc[2], sc[3], &b.dscale);
        tu_blend_drawn(w.db, sc[2], sc[3], &b.dbias);
        tu_ok(run_bwd(&b, sc, eps_default, with_saved));
        describe(what, sizeof what, be, mode, t, l, s, with_saved ? "dx (saved)" : "dx");
        tu_check_tensor(&b.dx, w.ref, what);
        describe(what, sizeof what, be, mode, t, l, s, with_saved ? "dscale (saved)" : "dscale");
        tu_check_tensor(&b.dscale, w.ds, what);
        describe(what, sizeof what, be, mode, t, l, s, with_saved ? "dbias (saved)" : "dbias");
        tu_check_tensor(&b.dbias, w.db, what);
    }
    bn_want_free(&w);
    bn_set_free(&b);
}

START_TEST(test_backward)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++) check_backward(h, bk, mode, t, l, s, bwd_plain);
    }
}
END_TEST

/* Training and backward (with and without saved statistics) on the large
 * shapes, spatial modes, FLOAT, HALF and DOUBLE (on the GPU, NHWC C = 16
 * takes the whole-row kernel for FLOAT and DOUBLE at any size). */
START_TEST(test_large)
{
    static const udnnDataType_t types[3] = {UDNN_DATA_FLOAT, UDNN_DATA_HALF, UDNN_DATA_DOUBLE};
    tu_seed_fresh();
    const int mode = 1 + _i % 2; /* SPATIAL, SPATIAL_PERSISTENT */
    const udnnDataType_t t = types[(_i / 2) % 3];
    const tu_layout l = _i / 6 ? TU_NHWC : TU_NCHW;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = FIRST_LARGE; s < FIRST_ROWS; s++) {
            check_training(h, bk, mode, t, l, s, 1.0, 0.0);
            check_backward(h, bk, mode, t, l, s, bwd_plain);
        }
    }
}
END_TEST

/* Training and backward on shapes [first, end) in layout l, SPATIAL,
 * FLOAT (i even) or HALF, plain (i < 2) or blended; on GPU backends only
 * (the CPU computes them as it does every other shape, and would cost CI
 * minutes here). */
static void check_gpu_shapes(int i, int first, int end, tu_layout l)
{
    tu_seed_fresh();
    const udnnDataType_t t = i % 2 ? UDNN_DATA_HALF : UDNN_DATA_FLOAT;
    const int blended = i / 2;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        if (bk != UDNN_BACKEND_CPU)
            for (int s = first; s < end; s++) {
                check_training(h, bk, 1, t, l, s, blended ? -1.25 : 1.0, blended ? 0.5 : 0.0);
                check_backward(h, bk, 1, t, l, s, blended ? bwd_mixed : bwd_plain);
            }
    }
}

/* the rows shapes, NHWC */
START_TEST(test_rows) { check_gpu_shapes(_i, FIRST_ROWS, FIRST_CLUSTER, TU_NHWC); }
END_TEST

/* the clusters shapes, NCHW */
START_TEST(test_cluster_channels) { check_gpu_shapes(_i, FIRST_CLUSTER, N_ALL_SHAPES, TU_NCHW); }
END_TEST

/* ---- dy of large mean ------------------------------------------------------------------- */

/* dy about 2, give or take a thousandth: dx = a (dy - mean dy) - ... is
 * then a small remainder of a * dy, and dscale = sum dy xhat a small
 * remainder of its terms (xhat sums to 0). An output that adds a * dy and
 * -a mean(dy) in float, or sums dy xhat in float, misses FLOAT's tolerance
 * many times over. FLOAT, spatial NCHW, 8192 members a channel, with
 * saved statistics and without; dy is not redrawn (test_backward's
 * redraws would undo the offset). */
START_TEST(test_dy_offset)
{
    tu_seed_fresh();
    static const int dims[4] = {8, 4, 32, 32};
    const int mode = 1; /* SPATIAL */
    TU_FOR_EACH_BACKEND(h, bk)
    {
        bn_set b;
        bn_set_init(&b, h, bn_modes[mode], UDNN_DATA_FLOAT, TU_NCHW, 4, dims);
        fill_inputs(&b);
        tu_fill_uniform(&b.dy, 1.999, 2.001);
        bn_want w = bn_want_alloc(&b);
        char what[160];
        for (int with_saved = 1; with_saved >= 0; with_saved--) {
            batch_stats(&b, w.mean, w.var, w.inv, with_saved);
            tu_buf_poison(&b.dx.buf);
            tu_buf_poison(&b.dscale.buf);
            tu_buf_poison(&b.dbias.buf);
            expect_grads(&b, w.mean, w.inv, w.ref, w.ds, w.db);
            tu_ok(run_bwd(&b, bwd_plain, eps_default, with_saved));
            const char *how[3] = {"dy offset, dx", "dy offset, dscale", "dy offset, dbias"};
            tu_tensor *out[3] = {&b.dx, &b.dscale, &b.dbias};
            const double *want[3] = {w.ref, w.ds, w.db};
            for (int k = 0; k < 3; k++) {
                describe(what, sizeof what, bk, mode, UDNN_DATA_FLOAT, TU_NCHW, -1, how[k]);
                tu_check_tensor(out[k], want[k], what);
            }
        }
        bn_want_free(&w);
        bn_set_free(&b);
    }
}
END_TEST

/* ---- alpha and beta --------------------------------------------------------------------- */

START_TEST(test_alpha_beta)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[_i / N_MODES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    static const double scalars[4] = {-0.75, 0.5, 1.5, -0.25};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++) {
            if (trainable(s, mode)) check_training(h, bk, mode, t, l, s, -1.25, 0.5);
            check_inference(h, bk, mode, t, l, s, 2.0, -0.5);
            check_backward(h, bk, mode, t, l, s, scalars);
        }
    }
}
END_TEST

/* ---- hand-computed values ------------------------------------------------------------------ */

/* N = 2, C = 1, H = 1, W = 2 with x = {0, 1, 3, 4} (n0w0, n0w1, n1w0, n1w1),
 * scale 2, bias 0.5. SPATIAL pools all four: mean 2, variance 2.5, and
 * epsilon 1.5 makes inv_std 0.5, xhat {-1, -0.5, 0.5, 1}, the unbiased
 * variance 10/3. PER_ACTIVATION pools {0, 3} and {1, 4}: means 1.5 and 2.5,
 * variances 2.25; epsilon 1.75 makes inv_std 0.5, xhat -0.75 and 0.75, the
 * unbiased variance 4.5. */
static const int hand_dims[4] = {2, 1, 1, 2};
static const double hand_x[4] = {0, 1, 3, 4};

typedef struct {
    double eps;
    double y[4];
    double mean[2], inv_std[2];
    /* running statistics: from {1, 2} with factor 0.3, then factor 1 */
    double run_mean_03[2], run_var_03[2], run_var_1[2];
} hand_train_case;

static const hand_train_case hand_train[2] = {
    /* PER_ACTIVATION */
    {1.75, {-1, -1, 2, 2}, {1.5, 2.5}, {0.5, 0.5}, {1.15, 1.45}, {2.75, 2.75}, {4.5, 4.5}},
    /* SPATIAL */
    {1.5, {-1.5, -0.5, 1.5, 2.5}, {2}, {0.5}, {1.3}, {2.4}, {10.0 / 3.0}},
};

/* The statistics tensor of a hand case: through udnnDeriveBNTensorDescriptor. */
static void hand_set_init(bn_set *b, udnnHandle_t h, int mode, udnnDataType_t t)
{
    bn_set_init(b, h, bn_modes[mode], t, TU_NCHW, 4, hand_dims);
    udnnTensorDescriptor_t derived;
    tu_ok(udnnCreateTensorDescriptor(&derived));
    tu_ok(udnnDeriveBNTensorDescriptor(derived, b->x.desc, bn_modes[mode]));
    udnnDestroyTensorDescriptor(b->scale.desc);
    b->scale.desc = derived;
    set_all(&b->x, hand_x);
    static const double two[2] = {2, 2}, half_[2] = {0.5, 0.5};
    set_all(&b->scale, two);
    set_all(&b->bias, half_);
}

START_TEST(test_hand_training)
{
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[_i / N_MODES];
    const hand_train_case *hc = &hand_train[bn_modes[mode] != UDNN_BATCHNORM_PER_ACTIVATION];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        bn_set b;
        hand_set_init(&b, h, mode, t);
        static const double ones[2] = {1, 1}, twos[2] = {2, 2};
        set_all(&b.mean, ones);
        set_all(&b.var, twos);
        tu_ok(run_train(&b, 1.0, 0.0, 0.3, hc->eps, 1, 1));
        tu_check_tensor(&b.y, hc->y, "y");
        tu_check_tensor(&b.save_mean, hc->mean, "saved mean");
        tu_check_tensor(&b.save_inv, hc->inv_std, "saved inverse std");
        tu_check_tensor(&b.mean, hc->run_mean_03, "running mean, factor 0.3");
        tu_check_tensor(&b.var, hc->run_var_03, "running variance, factor 0.3");
        /* factor 1 takes the batch's whatever was there; factor 0 keeps it */
        for (double factor = 1.0; factor >= 0.0; factor -= 1.0) {
            if (factor == 1.0) {
                tu_buf_poison(&b.mean.buf);
                tu_buf_poison(&b.var.buf);
            }
            tu_ok(run_train(&b, 1.0, 0.0, factor, hc->eps, 1, 0));
            tu_check_tensor(&b.mean, hc->mean, "running mean, factor 1 then 0");
            tu_check_tensor(&b.var, hc->run_var_1, "running variance, factor 1 then 0");
        }
        bn_set_free(&b);
    }
}
END_TEST

/* estimated mean 1 and variance 3 with epsilon 1: y = x - 0.5. Per
 * activation, the second position has mean 2 and variance 15: y = x/2 - 0.5. */
START_TEST(test_hand_inference)
{
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[_i / N_MODES];
    static const double mean[2] = {1, 2}, var[2] = {3, 15};
    static const double want[2][4] = {{-0.5, 0, 2.5, 1.5}, {-0.5, 0.5, 2.5, 3.5}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        bn_set b;
        hand_set_init(&b, h, mode, t);
        set_all(&b.mean, mean);
        set_all(&b.var, var);
        tu_ok(run_infer(&b, 1.0, 0.0, 1.0));
        tu_check_tensor(&b.y, want[bn_modes[mode] != UDNN_BATCHNORM_PER_ACTIVATION], "y");
        bn_set_free(&b);
    }
}
END_TEST

/* dy = {1, 2, 0, 1}. SPATIAL: dbias 4, dscale -1, dx = 0.25 * (4 dy - 4 +
 * xhat). PER_ACTIVATION: dbias {1, 3}, dscale {-0.75, -0.75}, dx = 0.5 *
 * (2 dy - dbias - xhat * dscale). Saved and recomputed statistics agree. */
START_TEST(test_hand_backward)
{
    int mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[_i / N_MODES];
    const int spatial = bn_modes[mode] != UDNN_BATCHNORM_PER_ACTIVATION;
    const hand_train_case *hc = &hand_train[spatial];
    static const double dy[4] = {1, 2, 0, 1};
    static const double dx[2][4] = {{0.21875, 0.21875, -0.21875, -0.21875},
                                    {-0.25, 0.875, -0.875, 0.25}};
    static const double dscale[2][2] = {{-0.75, -0.75}, {-1}};
    static const double dbias[2][2] = {{1, 3}, {4}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        bn_set b;
        hand_set_init(&b, h, mode, t);
        set_all(&b.dy, dy);
        set_all(&b.save_mean, hc->mean);
        set_all(&b.save_inv, hc->inv_std);
        for (int with_saved = 0; with_saved < 2; with_saved++) {
            tu_buf_poison(&b.dx.buf);
            tu_buf_poison(&b.dscale.buf);
            tu_buf_poison(&b.dbias.buf);
            tu_ok(run_bwd(&b, bwd_plain, hc->eps, with_saved));
            tu_check_tensor(&b.dx, dx[spatial], with_saved ? "dx (saved)" : "dx");
            tu_check_tensor(&b.dscale, dscale[spatial], "dscale");
            tu_check_tensor(&b.dbias, dbias[spatial], "dbias");
        }
        bn_set_free(&b);
    }
}
END_TEST

/* ---- in place ------------------------------------------------------------------------------- */

/* In-place shapes: rank, dims. The first three run for every mode x
 * layout index: 5-D with C = 3; 4-D with C = 16 (NHWC: 16-byte rows of
 * channels, the GPU's whole-row kernel for FLOAT and DOUBLE); 4-D with
 * 131072 members a channel, so that on the GPU a channel's sums span
 * several blocks, one of which may finish and write over x while another
 * still reads x to finish the same channels. The others run for ip_cases;
 * their GPU paths as an H100 (132 multiprocessors) chooses them. */
static const int ip_shapes[][6] = {
    {5, 3, 3, 2, 3, 2}, {4, 8, 16, 6, 5, 0}, {4, 128, 2, 32, 32, 0},
    /* NCHW: runs of 1369 fit no 16-byte vectors, so bn_keep loads
     * elements, a channel in 2 blocks (training) or 3 (backward): 304 or
     * 456 items, past the 264 blocks of its grid, so teams take a second
     * round, FLOAT's asking L2 for it while they wait. NHWC, 16-bit (152
     * channels, 16-byte loads; under bn_rows' 40 MB): bn_keep by slices
     * of rows, each in several blocks, held in registers and shared memory */
    {4, 3, 152, 37, 37, 0},
    /* one channel of 1092021 elements: more items than bn_keep's grid
     * holds (264 items of 4096 members training, of 2048 backward), so
     * bn_flow's persistent grid reduces and applies it */
    {4, 1, 1, 1043, 1047, 0},
    /* NHWC, DOUBLE: a row is 257 16-byte loads, a row a step of bn_rows'
     * 512-thread blocks; 4356 rows give each of its 132 blocks 33, more
     * than a thread holds in registers (4 training, 2 backward) and shared
     * memory (27, 13): the rest are streamed, and read again to write */
    {4, 4, 514, 33, 33, 0},
    /* NHWC, HALF: x and dy over bn_rows' 40 MB, so the backward takes it
     * (test_rows' second shape) */
    {4, 32, 64, 80, 80, 0},
};
#define N_IP_EVERY 3

/* The runs beyond the mode x layout indices, whose types rotate: mode,
 * type, layout and in-place shape. */
static const struct {
    int mode;
    udnnDataType_t type;
    tu_layout layout;
    int shape;
    int gpu_only; /* the CPU computes it as every other shape, at CI's cost */
} ip_cases[] = {
    /* bn_keep with 16-byte loads held in registers and shared memory, a
     * channel in 2 to 7 blocks: types the rotation leaves out of spatial NCHW */
    {1, UDNN_DATA_FLOAT, TU_NCHW, 2, 0},
    {2, UDNN_DATA_BFLOAT16, TU_NCHW, 2, 0},
    /* bn_keep over two rounds (and FLOAT's L2 prefetch) */
    {1, UDNN_DATA_FLOAT, TU_NCHW, 3, 0},
    {2, UDNN_DATA_BFLOAT16, TU_NCHW, 3, 0},
    /* 16-bit channels innermost: bn_keep by row slices */
    {1, UDNN_DATA_HALF, TU_NHWC, 3, 0},
    /* bn_flow */
    {1, UDNN_DATA_FLOAT, TU_NCHW, 4, 0},
    /* bn_rows with held and streamed rows */
    {2, UDNN_DATA_DOUBLE, TU_NHWC, 5, 0},
    /* 16-bit bn_rows */
    {1, UDNN_DATA_HALF, TU_NHWC, 6, 1},
};
#define N_IP_CASES ((int)(sizeof ip_cases / sizeof *ip_cases))

/* In-place shape s: y over x in both forwards; dx over dy, then over x,
 * in backward, with statistics from x and then with saved ones (which the
 * GPU's one-launch flows shift by instead of x's first member). */
static void check_in_place(udnnHandle_t h, udnnBackend_t be, int mode, udnnDataType_t t,
                           tu_layout l, int s)
{
    bn_set b;
    bn_set_init(&b, h, bn_modes[mode], t, l, ip_shapes[s][0], &ip_shapes[s][1]);
    fill_inputs(&b);
    tu_fill_uniform(&b.mean, -1.0, 1.0);
    tu_fill_uniform(&b.var, 0.25, 2.0);
    bn_want w = bn_want_alloc(&b);
    tu_scalar one = tu_scalar_of(t, 1.0), zero = tu_scalar_of(t, 0.0);
    char what[160];

    /* backward first, while x is intact */
    for (int saved = 0; saved < 2; saved++) {
        if (saved) { /* x holds the last dx */
            tu_fill_uniform(&b.x, -1.0, 3.0);
            tu_fill_uniform(&b.dy, -1.0, 1.0);
        }
        batch_stats(&b, w.mean, w.var, w.inv, saved);
        void *sm = saved ? ptr(&b.save_mean) : NULL, *si = saved ? ptr(&b.save_inv) : NULL;
        /* dx over dy, then over x from fresh dy */
        for (int v = 0; v < 2; v++) {
            tu_tensor *out = v == 0 ? &b.dy : &b.x;
            if (v == 1) tu_fill_uniform(&b.dy, -1.0, 1.0);
            expect_grads(&b, w.mean, w.inv, w.ref, w.ds, w.db);
            tu_ok(udnnBatchNormalizationBackward(h, b.mode, &one, &zero, &one, &zero, b.x.desc,
                                                 ptr(&b.x), b.dy.desc, ptr(&b.dy), out->desc,
                                                 ptr(out), b.scale.desc, ptr(&b.scale),
                                                 ptr(&b.dscale), ptr(&b.dbias), eps_default, sm,
                                                 si));
            char how[48];
            snprintf(how, sizeof how, "in place, dx over %s%s", v == 0 ? "dy" : "x",
                     saved ? " (saved)" : "");
            describe(what, sizeof what, be, mode, t, l, s, how);
            tu_check_tensor(out, w.ref, what);
        }
    }

    tu_fill_uniform(&b.x, -1.0, 3.0);
    for (int64_t f = 0; f < b.features; f++) {
        w.mean[f] = tu_get(&b.mean, f);
        w.inv[f] = 1.0 / sqrt(tu_get(&b.var, f) + eps_default);
    }
    expect_y(&b, w.mean, w.inv, w.ref);
    tu_ok(udnnBatchNormalizationForwardInference(
        h, b.mode, &one, &zero, b.x.desc, ptr(&b.x), b.x.desc, ptr(&b.x), b.scale.desc,
        ptr(&b.scale), ptr(&b.bias), ptr(&b.mean), ptr(&b.var), eps_default));
    describe(what, sizeof what, be, mode, t, l, s, "in place, inference y over x");
    tu_check_tensor(&b.x, w.ref, what);

    tu_fill_uniform(&b.x, -1.0, 3.0);
    batch_stats(&b, w.mean, w.var, w.inv, 0);
    expect_y(&b, w.mean, w.inv, w.ref);
    tu_ok(udnnBatchNormalizationForwardTraining(
        h, b.mode, &one, &zero, b.x.desc, ptr(&b.x), b.x.desc, ptr(&b.x), b.scale.desc,
        ptr(&b.scale), ptr(&b.bias), 0.5, ptr(&b.mean), ptr(&b.var), eps_default,
        ptr(&b.save_mean), ptr(&b.save_inv)));
    describe(what, sizeof what, be, mode, t, l, s, "in place, training y over x");
    tu_check_tensor(&b.x, w.ref, what);
    describe(what, sizeof what, be, mode, t, l, s, "in place, training saved mean");
    tu_check_tensor(&b.save_mean, w.mean, what);

    bn_want_free(&w);
    bn_set_free(&b);
}

/* Indices below N_MODES * N_LAYOUTS: a mode and layout (the type
 * rotating) over the first shapes; then one of ip_cases. */
START_TEST(test_in_place)
{
    tu_seed_fresh();
    const int rotating = _i < N_MODES * N_LAYOUTS;
    const int c = rotating ? 0 : _i - N_MODES * N_LAYOUTS;
    const int mode = rotating ? _i % N_MODES : ip_cases[c].mode;
    const tu_layout l = rotating ? (tu_layout)(_i / N_MODES) : ip_cases[c].layout;
    const udnnDataType_t t = rotating ? tu_float_types[_i % N_TYPES] : ip_cases[c].type;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        if (rotating)
            for (int s = 0; s < N_IP_EVERY; s++) check_in_place(h, bk, mode, t, l, s);
        else if (!ip_cases[c].gpu_only || bk != UDNN_BACKEND_CPU)
            check_in_place(h, bk, mode, t, l, ip_cases[c].shape);
    }
}
END_TEST

/* ---- finite differences in DOUBLE ---------------------------------------------------------- */

/* L = sum(dy . y) with y from the training forward (the batch statistics
 * depend on x). */
static double loss(bn_set *b, const double *dy)
{
    tu_upload(&b->x);
    tu_upload(&b->scale);
    tu_upload(&b->bias);
    tu_ok(run_train(b, 1.0, 0.0, 1.0, eps_default, 0, 0));
    tu_download(&b->y);
    return tu_dot(&b->y, dy);
}

/* Central differences of the loss in every element of t, into num. */
static void numeric_grad(bn_set *b, tu_tensor *t, const double *dy, double *num)
{
    const double step = 1e-6;
    for (int64_t i = 0; i < t->count; i++) {
        double v = tu_get(t, i);
        tu_set(t, i, v + step);
        double up = loss(b, dy);
        tu_set(t, i, v - step);
        double down = loss(b, dy);
        tu_set(t, i, v);
        num[i] = (up - down) / (2.0 * step);
    }
    tu_upload(t);
}

static void assert_close(const tu_tensor *t, const double *num, const char *what, int s,
                         int mode)
{
    double *ana = values(t->count);
    tu_values(t, ana);
    double err = tu_rel_error(ana, num, t->count);
    free(ana);
    ck_assert_msg(err < 1e-6, "%s %s shape %d: rel err %g vs finite differences (seed %llu)",
                  mode_names[mode], what, s, err, (unsigned long long)tu_seed_used());
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    int mode = _i % N_MODES;
    tu_layout l = (tu_layout)(_i / N_MODES);
    static const int fd_shapes[2][6] = {{4, 3, 2, 2, 3, 0}, {5, 3, 2, 2, 1, 2}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < 2; s++) {
            bn_set b;
            bn_set_init(&b, h, bn_modes[mode], UDNN_DATA_DOUBLE, l, fd_shapes[s][0],
                        &fd_shapes[s][1]);
            fill_inputs(&b);
            double *dy = values(b.x.count), *num_x = values(b.x.count);
            double *num_s = values(b.features), *num_b = values(b.features);
            tu_values(&b.dy, dy);
            numeric_grad(&b, &b.x, dy, num_x);
            numeric_grad(&b, &b.scale, dy, num_s);
            numeric_grad(&b, &b.bias, dy, num_b);
            /* analytic: with the statistics the forward saved, then recomputed */
            tu_ok(run_train(&b, 1.0, 0.0, 1.0, eps_default, 0, 1));
            for (int with_saved = 1; with_saved >= 0; with_saved--) {
                tu_ok(run_bwd(&b, bwd_plain, eps_default, with_saved));
                tu_download(&b.dx);
                tu_download(&b.dscale);
                tu_download(&b.dbias);
                assert_close(&b.dx, num_x, with_saved ? "dx (saved)" : "dx", s, mode);
                assert_close(&b.dscale, num_s, "dscale", s, mode);
                assert_close(&b.dbias, num_b, "dbias", s, mode);
            }
            free(dy);
            free(num_x);
            free(num_s);
            free(num_b);
            bn_set_free(&b);
        }
    }
}
END_TEST

/* ---- validation ----------------------------------------------------------------------------- */

/* An f32 2x3x4x5 SPATIAL problem (statistics 1x3x1x1) and the wrong
 * descriptors the cases swap in. */
typedef struct {
    bn_set b;
    udnnTensorDescriptor_t unset, s8, f64, other_dims, rank3, rank6, nhwc;
    udnnTensorDescriptor_t p_f64, p_c4, p_n2, p_per_act, p_rank5, x_half, p_half, x_n1, x_n1_full;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 3, 5, 4}, r3[3] = {2, 3, 20},
                     r6[6] = {2, 3, 4, 5, 1, 1}, p1[4] = {1, 3, 1, 1}, pc4[4] = {1, 4, 1, 1},
                     pn2[4] = {2, 3, 1, 1}, pact[4] = {1, 3, 4, 5}, p5[5] = {1, 3, 1, 1, 1},
                     n1[4] = {1, 3, 1, 1};
    udnnHandle_t h = tu_handle(be);
    bn_set_init(&f->b, h, UDNN_BATCHNORM_SPATIAL, UDNN_DATA_FLOAT, TU_NCHW, 4, dims);
    fill_inputs(&f->b);
    tu_fill_uniform(&f->b.mean, -1.0, 1.0);
    tu_fill_uniform(&f->b.var, 0.5, 1.0);
    tu_fill_uniform(&f->b.save_mean, -1.0, 1.0);
    tu_fill_uniform(&f->b.save_inv, 0.5, 1.0);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->rank3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, r3);
    f->rank6 = tu_packed_desc(UDNN_DATA_FLOAT, 6, r6);
    tu_ok(udnnCreateTensorDescriptor(&f->nhwc));
    tu_ok(udnnSetTensor4dDescriptor(f->nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 4, 5));
    f->p_f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, p1);
    f->p_c4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, pc4);
    f->p_n2 = tu_packed_desc(UDNN_DATA_FLOAT, 4, pn2);
    f->p_per_act = tu_packed_desc(UDNN_DATA_FLOAT, 4, pact);
    f->p_rank5 = tu_packed_desc(UDNN_DATA_FLOAT, 5, p5);
    f->x_half = tu_packed_desc(UDNN_DATA_HALF, 4, dims);
    f->p_half = tu_packed_desc(UDNN_DATA_HALF, 4, p1);
    f->x_n1 = tu_packed_desc(UDNN_DATA_FLOAT, 4, n1);
    f->x_n1_full = tu_packed_desc(UDNN_DATA_FLOAT, 4, pact);
}

static void fixture_free(fixture *f)
{
    udnnHandle_t h = f->b.h;
    bn_set_free(&f->b);
    udnnTensorDescriptor_t descs[] = {f->unset,   f->s8,      f->f64,    f->other_dims,
                                      f->rank3,   f->rank6,   f->nhwc,   f->p_f64,
                                      f->p_c4,    f->p_n2,    f->p_per_act, f->p_rank5,
                                      f->x_half,  f->p_half,  f->x_n1,   f->x_n1_full};
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) udnnDestroyTensorDescriptor(descs[i]);
    udnnDestroy(h);
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

static const bad_expect train_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "mode 3"},
    {UDNN_STATUS_BAD_PARAM, "mode -1"},
    {UDNN_STATUS_BAD_PARAM, "alpha is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "bnScale is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnBias is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 6 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 1 of size 4"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 0 of size 2"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 2 of size 4; mode SPATIAL"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 2 of size 1; mode PER_ACT"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has data type f16"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is -1"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is nan"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is inf"},
    {UDNN_STATUS_BAD_PARAM, "exponentialAverageFactor is -0.1"},
    {UDNN_STATUS_BAD_PARAM, "exponentialAverageFactor is 1.5"},
    {UDNN_STATUS_BAD_PARAM, "exponentialAverageFactor is nan"},
    {UDNN_STATUS_BAD_PARAM, "resultRunningMean is NULL"},
    {UDNN_STATUS_BAD_PARAM, "resultRunningVariance is NULL"},
    {UDNN_STATUS_BAD_PARAM, "resultSaveMean is NULL"},
    {UDNN_STATUS_BAD_PARAM, "resultSaveInvVariance is NULL"},
    {UDNN_STATUS_BAD_PARAM, "resultRunningVariance is the same buffer as resultRunningMean"},
    {UDNN_STATUS_BAD_PARAM, "resultSaveMean is the same buffer as resultRunningMean"},
    {UDNN_STATUS_BAD_PARAM, "xDesc gives 1 value per statistic in mode SPATIAL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc gives 1 value per statistic in mode PER_ACTIVATION"},
    {UDNN_STATUS_BAD_PARAM, "xDesc gives 1 value per statistic in mode SPATIAL_PERSISTENT"},
};
#define N_TRAIN_BAD ((int)(sizeof train_bad / sizeof *train_bad))

START_TEST(test_training_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int k = 0; k < nb; k++) {
        fixture f;
        fixture_init(&f, be[k]);
        bn_set *b = &f.b;
        tu_buf_poison(&b->mean.buf);
        tu_buf_poison(&b->var.buf);
        tu_buf_poison(&b->save_mean.buf);
        tu_buf_poison(&b->save_inv.buf);
        float one = 1.0f, zero = 0.0f;
        udnnHandle_t h = b->h;
        udnnBatchNormMode_t mode = UDNN_BATCHNORM_SPATIAL;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = b->x.desc, yd = b->y.desc, pd = b->scale.desc;
        const void *x = ptr(&b->x), *scale = ptr(&b->scale), *bias = ptr(&b->bias);
        void *y = ptr(&b->y), *rm = ptr(&b->mean), *rv = ptr(&b->var);
        void *sm = ptr(&b->save_mean), *si = ptr(&b->save_inv);
        double factor = 0.1, eps = eps_default;
        switch (_i) {
        case 0: h = NULL; break;
        case 1: mode = (udnnBatchNormMode_t)3; break;
        case 2: mode = (udnnBatchNormMode_t)-1; break;
        case 3: alpha = NULL; break;
        case 4: beta = NULL; break;
        case 5: xd = NULL; break;
        case 6: xd = f.unset; break;
        case 7: x = NULL; break;
        case 8: yd = NULL; break;
        case 9: yd = f.unset; break;
        case 10: y = NULL; break;
        case 11: pd = NULL; break;
        case 12: pd = f.unset; break;
        case 13: scale = NULL; break;
        case 14: bias = NULL; break;
        case 15: xd = yd = f.s8; break;
        case 16: xd = yd = f.rank3; break;
        case 17: xd = yd = f.rank6; break;
        case 18: yd = f.f64; break;
        case 19: yd = f.other_dims; break;
        case 20: yd = f.nhwc, y = ptr(&b->x); break;
        case 21: pd = f.p_f64; break;
        case 22: pd = f.p_c4; break;
        case 23: pd = f.p_n2; break;
        case 24: pd = f.p_per_act; break;
        case 25: mode = UDNN_BATCHNORM_PER_ACTIVATION; break;
        case 26: pd = f.p_rank5; break;
        case 27: xd = yd = f.x_half, pd = f.p_half; break;
        case 28: eps = -1.0; break;
        case 29: eps = NAN; break;
        case 30: eps = INFINITY; break;
        case 31: factor = -0.1; break;
        case 32: factor = 1.5; break;
        case 33: factor = NAN; break;
        case 34: rm = NULL; break;
        case 35: rv = NULL; break;
        case 36: sm = NULL; break;
        case 37: si = NULL; break;
        case 38: rv = rm; break;
        case 39: sm = rm; break;
        case 40: xd = yd = f.x_n1; break;
        case 41: xd = yd = f.x_n1_full, pd = f.p_per_act, mode = UDNN_BATCHNORM_PER_ACTIVATION;
            break;
        case 42: xd = yd = f.x_n1, mode = UDNN_BATCHNORM_SPATIAL_PERSISTENT; break;
        }
        udnnStatus_t st = udnnBatchNormalizationForwardTraining(
            h, mode, alpha, beta, xd, x, yd, y, pd, scale, bias, factor, rm, rv, eps, sm, si);
        tu_assert_fails(st, train_bad[_i].status, "udnnBatchNormalizationForwardTraining",
                        train_bad[_i].arg);
        tu_tensor *outs[] = {&b->y, &b->mean, &b->var, &b->save_mean, &b->save_inv};
        for (int i = 0; i < 5; i++) tu_assert_untouched(&(outs[i])->buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect infer_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "mode 7"},
    {UDNN_STATUS_BAD_PARAM, "alpha is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "bnScale is NULL"},
    {UDNN_STATUS_BAD_PARAM, "bnBias is NULL"},
    {UDNN_STATUS_BAD_PARAM, "estimatedMean is NULL"},
    {UDNN_STATUS_BAD_PARAM, "estimatedVariance is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 1 of size 4"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has dimension 2 of size 1; mode PER_ACT"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "bnScaleBiasMeanVarDesc has data type f16"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is -0.5"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is nan"},
};
#define N_INFER_BAD ((int)(sizeof infer_bad / sizeof *infer_bad))

START_TEST(test_inference_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int k = 0; k < nb; k++) {
        fixture f;
        fixture_init(&f, be[k]);
        bn_set *b = &f.b;
        float one = 1.0f, zero = 0.0f;
        udnnHandle_t h = b->h;
        udnnBatchNormMode_t mode = UDNN_BATCHNORM_SPATIAL_PERSISTENT;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = b->x.desc, yd = b->y.desc, pd = b->scale.desc;
        const void *x = ptr(&b->x), *scale = ptr(&b->scale), *bias = ptr(&b->bias);
        const void *em = ptr(&b->mean), *ev = ptr(&b->var);
        void *y = ptr(&b->y);
        double eps = eps_default;
        switch (_i) {
        case 0: h = NULL; break;
        case 1: mode = (udnnBatchNormMode_t)7; break;
        case 2: alpha = NULL; break;
        case 3: beta = NULL; break;
        case 4: xd = NULL; break;
        case 5: xd = f.unset; break;
        case 6: x = NULL; break;
        case 7: yd = NULL; break;
        case 8: yd = f.unset; break;
        case 9: y = NULL; break;
        case 10: pd = NULL; break;
        case 11: pd = f.unset; break;
        case 12: scale = NULL; break;
        case 13: bias = NULL; break;
        case 14: em = NULL; break;
        case 15: ev = NULL; break;
        case 16: xd = yd = f.s8; break;
        case 17: xd = yd = f.rank3; break;
        case 18: yd = f.f64; break;
        case 19: yd = f.other_dims; break;
        case 20: yd = f.nhwc, y = ptr(&b->x); break;
        case 21: pd = f.p_f64; break;
        case 22: pd = f.p_c4; break;
        case 23: mode = UDNN_BATCHNORM_PER_ACTIVATION; break;
        case 24: pd = f.p_rank5; break;
        case 25: xd = yd = f.x_half, pd = f.p_half; break;
        case 26: eps = -0.5; break;
        case 27: eps = NAN; break;
        }
        udnnStatus_t st = udnnBatchNormalizationForwardInference(h, mode, alpha, beta, xd, x, yd,
                                                                 y, pd, scale, bias, em, ev, eps);
        tu_assert_fails(st, infer_bad[_i].status, "udnnBatchNormalizationForwardInference",
                        infer_bad[_i].arg);
        tu_assert_untouched(&b->y.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "mode 3"},
    {UDNN_STATUS_BAD_PARAM, "alphaDataDiff is NULL"},
    {UDNN_STATUS_BAD_PARAM, "betaDataDiff is NULL"},
    {UDNN_STATUS_BAD_PARAM, "alphaParamDiff is NULL"},
    {UDNN_STATUS_BAD_PARAM, "betaParamDiff is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "bnScale is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleResult is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dBnBiasResult is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 6 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of dy"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of x"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has dimension 1 of size 4"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has dimension 2 of size 4; mode SPATIAL"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dBnScaleBiasDesc has data type f16"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is -1e-05"},
    {UDNN_STATUS_BAD_PARAM, "epsilon is inf"},
    {UDNN_STATUS_BAD_PARAM, "savedMean is NULL but savedInvVariance is not"},
    {UDNN_STATUS_BAD_PARAM, "savedInvVariance is NULL but savedMean is not"},
    {UDNN_STATUS_BAD_PARAM, "dBnBiasResult is the same buffer as dBnScaleResult"},
};
#define N_BWD_BAD ((int)(sizeof bwd_bad / sizeof *bwd_bad))

START_TEST(test_backward_bad)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int k = 0; k < nb; k++) {
        fixture f;
        fixture_init(&f, be[k]);
        bn_set *b = &f.b;
        float one = 1.0f, zero = 0.0f;
        udnnHandle_t h = b->h;
        udnnBatchNormMode_t mode = UDNN_BATCHNORM_SPATIAL;
        const void *ad = &one, *bd = &zero, *ap = &one, *bp = &zero;
        udnnTensorDescriptor_t xd = b->x.desc, dyd = b->dy.desc, dxd = b->dx.desc,
                               pd = b->scale.desc;
        const void *x = ptr(&b->x), *dy = ptr(&b->dy), *scale = ptr(&b->scale);
        const void *sm = ptr(&b->save_mean), *si = ptr(&b->save_inv);
        void *dx = ptr(&b->dx), *ds = ptr(&b->dscale), *db = ptr(&b->dbias);
        double eps = eps_default;
        switch (_i) {
        case 0: h = NULL; break;
        case 1: mode = (udnnBatchNormMode_t)3; break;
        case 2: ad = NULL; break;
        case 3: bd = NULL; break;
        case 4: ap = NULL; break;
        case 5: bp = NULL; break;
        case 6: xd = NULL; break;
        case 7: xd = f.unset; break;
        case 8: x = NULL; break;
        case 9: dyd = NULL; break;
        case 10: dyd = f.unset; break;
        case 11: dy = NULL; break;
        case 12: dxd = NULL; break;
        case 13: dxd = f.unset; break;
        case 14: dx = NULL; break;
        case 15: pd = NULL; break;
        case 16: pd = f.unset; break;
        case 17: scale = NULL; break;
        case 18: ds = NULL; break;
        case 19: db = NULL; break;
        case 20: xd = dyd = dxd = f.s8; break;
        case 21: xd = dyd = dxd = f.rank6; break;
        case 22: dyd = f.f64; break;
        case 23: dxd = f.f64; break;
        case 24: dyd = f.other_dims; break;
        case 25: dxd = f.other_dims; break;
        case 26: dxd = f.nhwc, dx = ptr(&b->dy); break;
        case 27: dxd = f.nhwc, dx = ptr(&b->x); break;
        case 28: pd = f.p_f64; break;
        case 29: pd = f.p_c4; break;
        case 30: pd = f.p_per_act; break;
        case 31: pd = f.p_rank5; break;
        case 32: xd = dyd = dxd = f.x_half, pd = f.p_half; break;
        case 33: eps = -1e-5; break;
        case 34: eps = INFINITY; break;
        case 35: sm = NULL; break;
        case 36: si = NULL; break;
        case 37: db = ds; break;
        }
        udnnStatus_t st = udnnBatchNormalizationBackward(h, mode, ad, bd, ap, bp, xd, x, dyd, dy,
                                                         dxd, dx, pd, scale, ds, db, eps, sm, si);
        tu_assert_fails(st, bwd_bad[_i].status, "udnnBatchNormalizationBackward",
                        bwd_bad[_i].arg);
        tu_tensor *outs[] = {&b->dx, &b->dscale, &b->dbias};
        for (int i = 0; i < 3; i++) tu_assert_untouched(&(outs[i])->buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("batchnorm");
    /* the ops in several cases, so that a slow tool (compute-sanitizer's
     * racecheck) can run them apart: CK_RUN_CASE=training, ... */
    const int all = N_MODES * N_TYPES * N_LAYOUTS;
    TCase *training = tcase_create("training");
    tcase_add_loop_test(training, test_training, 0, all);
    tcase_add_loop_test(training, test_hand_training, 0, N_MODES * N_TYPES);
    tcase_add_loop_test(training, test_alpha_beta, 0, N_MODES * N_TYPES);
    TCase *inference = tcase_create("inference");
    tcase_add_loop_test(inference, test_inference, 0, all);
    tcase_add_loop_test(inference, test_hand_inference, 0, N_MODES * N_TYPES);
    TCase *backward = tcase_create("backward");
    tcase_add_loop_test(backward, test_backward, 0, all);
    tcase_add_loop_test(backward, test_hand_backward, 0, N_MODES * N_TYPES);
    tcase_add_loop_test(backward, test_finite_differences, 0, N_MODES * N_LAYOUTS);
    TCase *shapes = tcase_create("shapes");
    tcase_add_loop_test(shapes, test_in_place, 0, N_MODES * N_LAYOUTS + N_IP_CASES);
    tcase_add_loop_test(shapes, test_large, 0, 12);
    tcase_add_loop_test(shapes, test_rows, 0, 4);
    tcase_add_loop_test(shapes, test_cluster_channels, 0, 4);
    tcase_add_test(shapes, test_dy_offset);
    TCase *ops[4] = {training, inference, backward, shapes};
    for (int i = 0; i < 4; i++) {
        tcase_set_timeout(ops[i], 60);
        suite_add_tcase(s, ops[i]);
    }

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_training_bad, 0, N_TRAIN_BAD);
    tcase_add_loop_test(bad, test_inference_bad, 0, N_INFER_BAD);
    tcase_add_loop_test(bad, test_backward_bad, 0, N_BWD_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
