/* check_lrn.c - LRNCrossChannelForward and LRNCrossChannelBackward on every
 * backend: every type x layout x lrnN over C = 1, 3, 5, 7, 17 in 4-D and
 * 5-D against an expectation computed here in double, hand-computed
 * values, alpha/beta blending, the descriptor's bounds, in-place runs,
 * finite differences in DOUBLE, and every validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/testutil.h"

#define N_TYPES 4
#define N_LAYOUTS 3

static const unsigned lrn_ns[] = {1, 2, 3, 5, 16};
#define N_LRN_NS ((int)(sizeof lrn_ns / sizeof *lrn_ns))

static const int channel_counts[] = {1, 3, 5, 7, 17};
#define N_CHANNELS ((int)(sizeof channel_counts / sizeof *channel_counts))

/* Shapes with C left as 0: rank, dims. Single images, a last dim of 1,
 * single-element columns. */
static const int shape_templates[][6] = {
    {4, 2, 0, 3, 2, 0}, {4, 1, 0, 2, 1, 0}, {5, 2, 0, 2, 1, 3}, {5, 1, 0, 1, 1, 1}};
#define N_TEMPLATES ((int)(sizeof shape_templates / sizeof *shape_templates))

/* The descriptor's alpha, beta and k: small, cuDNN's defaults, large. */
typedef struct {
    double alpha, beta, k;
} lrn_params;
static const lrn_params param_sets[] = {
    {2.0, 0.75, 1.0}, {0.5, 0.5, 2.0}, {1e-4, 0.75, 2.0}, {3.0, 1.5, 0.5}};
#define N_PARAMS ((int)(sizeof param_sets / sizeof *param_sets))

/* ---- an independent expectation over logical indices --------------------------- */

/* n, C and the positions after C of a tensor. */
typedef struct {
    int64_t n, c, s;
} ncs;

static ncs ncs_of(const tu_tensor *t)
{
    ncs r = {t->dims[0], t->dims[1], 1};
    for (int i = 2; i < t->nb; i++) r.s *= t->dims[i];
    return r;
}

static int64_t logical(ncs d, int64_t n, int64_t c, int64_t s)
{
    return (n * d.c + c) * d.s + s;
}

/* Channel j is in the window of channel c: cuDNN looks behind floor((n-1)/2)
 * channels and ahead the rest of the n - 1. */
static int in_window(unsigned lrn_n, int64_t c, int64_t j)
{
    int64_t behind = ((int64_t)lrn_n - 1) / 2, ahead = (int64_t)lrn_n - 1 - behind;
    return j >= c - behind && j <= c + ahead;
}

static double scale_of(unsigned lrn_n, lrn_params p, const tu_tensor *x, ncs d, int64_t n,
                       int64_t c, int64_t s)
{
    double sum = 0.0;
    for (int64_t j = 0; j < d.c; j++)
        if (in_window(lrn_n, c, j)) {
            double v = tu_get(x, logical(d, n, j, s));
            sum += v * v;
        }
    return p.k + p.alpha / lrn_n * sum;
}

static void expect_fwd(unsigned lrn_n, lrn_params p, const tu_tensor *x, double *y)
{
    ncs d = ncs_of(x);
    for (int64_t n = 0; n < d.n; n++)
        for (int64_t c = 0; c < d.c; c++)
            for (int64_t s = 0; s < d.s; s++) {
                int64_t i = logical(d, n, c, s);
                y[i] = tu_get(x, i) / pow(scale_of(lrn_n, p, x, d, n, c, s), p.beta);
            }
}

/* dx from x, the given y and dy: y_j = x_j s_j^-beta, so
 * d y_j / d x_i = [i = j] s_j^-beta - [i in window(j)] 2 alpha/n beta x_i y_j / s_j.
 * Returns how far the terms cancel: the norm of each dx_i's terms' absolute
 * sum over the norm of dx (infinite where dx is all zero). */
static double expect_bwd(unsigned lrn_n, lrn_params p, const tu_tensor *x, const tu_tensor *y,
                         const tu_tensor *dy, double *dx)
{
    ncs d = ncs_of(x);
    double terms_sq = 0.0, dx_sq = 0.0;
    for (int64_t n = 0; n < d.n; n++)
        for (int64_t s = 0; s < d.s; s++)
            for (int64_t i = 0; i < d.c; i++) {
                int64_t li = logical(d, n, i, s);
                double sum = tu_get(dy, li) / pow(scale_of(lrn_n, p, x, d, n, i, s), p.beta);
                double terms = fabs(sum);
                for (int64_t j = 0; j < d.c; j++) {
                    if (!in_window(lrn_n, j, i)) continue;
                    int64_t lj = logical(d, n, j, s);
                    double t = 2.0 * p.alpha / lrn_n * p.beta * tu_get(x, li) * tu_get(dy, lj) *
                               tu_get(y, lj) / scale_of(lrn_n, p, x, d, n, j, s);
                    sum -= t;
                    terms += fabs(t);
                }
                dx[li] = sum;
                terms_sq += terms * terms;
                dx_sq += sum * sum;
            }
    return dx_sq > 0.0 ? sqrt(terms_sq / dx_sq) : INFINITY;
}

/* ---- helpers ---------------------------------------------------------------------- */

static udnnLRNDescriptor_t lrn_desc(unsigned lrn_n, lrn_params p)
{
    udnnLRNDescriptor_t d;
    tu_ok(udnnCreateLRNDescriptor(&d));
    tu_ok(udnnSetLRNDescriptor(d, lrn_n, p.alpha, p.beta, p.k));
    return d;
}

static udnnStatus_t run_fwd(udnnHandle_t h, udnnLRNDescriptor_t ld, double alpha, tu_tensor *x,
                            double beta, tu_tensor *y)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnLRNCrossChannelForward(h, ld, UDNN_LRN_CROSS_CHANNEL_DIM1, &a, x->desc,
                                      tu_buf_ptr(&x->buf), &b, y->desc, tu_buf_ptr(&y->buf));
}

static udnnStatus_t run_bwd(udnnHandle_t h, udnnLRNDescriptor_t ld, double alpha, tu_tensor *y,
                            tu_tensor *dy, tu_tensor *x, double beta, tu_tensor *dx)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnLRNCrossChannelBackward(h, ld, UDNN_LRN_CROSS_CHANNEL_DIM1, &a, y->desc,
                                       tu_buf_ptr(&y->buf), dy->desc, tu_buf_ptr(&dy->buf),
                                       x->desc, tu_buf_ptr(&x->buf), &b, dx->desc,
                                       tu_buf_ptr(&dx->buf));
}

/* y as the caller of the backward pass holds it: the forward's output in
 * the tensor's type. */
static void set_y_of_x(tu_tensor *y, unsigned lrn_n, lrn_params p, const tu_tensor *x)
{
    double *v = malloc((size_t)x->count * sizeof *v);
    expect_fwd(lrn_n, p, x, v);
    for (int64_t i = 0; i < x->count; i++) tu_set(y, i, v[i]);
    tu_upload(y);
    free(v);
}

/* The dims of template t with C channels; returns the rank. */
static int shape_dims(int t, int channels, int dims[5])
{
    int rank = shape_templates[t][0];
    for (int i = 0; i < rank; i++) dims[i] = shape_templates[t][1 + i];
    dims[1] = channels;
    return rank;
}

/* One problem forward, then backward, with the given blend. */
static void check_problem(udnnHandle_t h, udnnBackend_t be, udnnDataType_t t, tu_layout l,
                          unsigned lrn_n, lrn_params prm, int rank, const int *dims, double alpha,
                          double beta)
{
    tu_tensor x, y, dy, dx;
    tu_tensor_init(&x, h, t, rank, dims, l);
    tu_tensor_init(&y, h, t, rank, dims, l);
    tu_tensor_init(&dy, h, t, rank, dims, l);
    tu_tensor_init(&dx, h, t, rank, dims, l);
    char what[160];
    snprintf(what, sizeof what, "%s %s %s lrnN %u alpha %g beta %g k %g C %d rank %d",
             tu_backend_name(be), tu_dtype_name(t), tu_layout_name(l), lrn_n, prm.alpha, prm.beta,
             prm.k, dims[1], rank);
    udnnLRNDescriptor_t ld = lrn_desc(lrn_n, prm);
    double *ref = malloc((size_t)x.count * sizeof *ref);
    /* a tensor of one element can draw an x, or below a dy, small enough
     * that the output is a 16-bit subnormal (tu_ref_normal): redraw */
    enum { MAX_DRAWS = 16 };
    for (int draw = 1;; draw++) {
        tu_fill_uniform(&x, -2.0, 2.0);
        expect_fwd(lrn_n, prm, &x, ref);
        if (tu_ref_normal(t, ref, x.count) || draw == MAX_DRAWS) break;
    }
    tu_blend_drawn(ref, alpha, beta, &y); /* beta = 0: y stays poisoned (NaN) */
    tu_ok(run_fwd(h, ld, alpha, &x, beta, &y));
    tu_check_tensor(&y, ref, what);

    /* The backward's terms cancel where 1 - (2 alpha beta / n) x_i^2 / s_i
     * nears 0 (x_i = +-0.41 with the last parameter set and C = 1); on a
     * tensor of a few elements the float rounding of the terms then exceeds
     * 1e-5 of dx. Redraw x and dy until the terms are at most
     * MAX_CANCELLATION times dx, in norm, and dx is normal. */
    enum { MAX_CANCELLATION = 32 };
    for (int draw = 1;; draw++) {
        set_y_of_x(&y, lrn_n, prm, &x);
        tu_fill_uniform(&dy, -1.0, 1.0);
        if ((expect_bwd(lrn_n, prm, &x, &y, &dy, ref) <= MAX_CANCELLATION &&
             tu_ref_normal(t, ref, x.count)) ||
            draw == MAX_DRAWS)
            break;
        tu_fill_uniform(&x, -2.0, 2.0);
    }
    tu_blend_drawn(ref, alpha, beta, &dx);
    tu_ok(run_bwd(h, ld, alpha, &y, &dy, &x, beta, &dx));
    tu_check_tensor(&dx, ref, what);

    free(ref);
    udnnDestroyLRNDescriptor(ld);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_tensor_free(&dy);
    tu_tensor_free(&dx);
}

/* ---- type x layout x lrnN, over every C and shape ---------------------------------------- */

START_TEST(test_ops)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)((_i / N_TYPES) % N_LAYOUTS);
    unsigned lrn_n = lrn_ns[_i / (N_TYPES * N_LAYOUTS)];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int c = 0; c < N_CHANNELS; c++)
            for (int s = 0; s < N_TEMPLATES; s++) {
                int dims[5];
                int rank = shape_dims(s, channel_counts[c], dims);
                lrn_params prm = param_sets[(c + s + _i) % N_PARAMS];
                check_problem(h, bk, t, l, lrn_n, prm, rank, dims, 1.0, 0.0);
            }
    }
}
END_TEST

START_TEST(test_alpha_beta)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int n = 0; n < N_LRN_NS; n++)
            for (int s = 0; s < N_TEMPLATES; s++) {
                int dims[5];
                int rank = shape_dims(s, channel_counts[(n + s) % N_CHANNELS], dims);
                check_problem(h, bk, t, l, lrn_ns[n], param_sets[0], rank, dims, -1.25, 0.5);
            }
    }
}
END_TEST

/* ---- wide columns ------------------------------------------------------------------------ */

/* Positions in multiples of 8 and 16, so that the GPU walks move vectors
 * (4 positions, and 8 for 16-bit data), over enough channels (40, 67) to
 * split into segments, each reading its neighbours' halo; every lrnN, and
 * with a blend. The shapes above have 1 to 6 positions, element-wise only. */
static const int wide_shapes[][6] = {{4, 2, 40, 4, 6}, {5, 1, 67, 2, 2, 4}};
#define N_WIDE_SHAPES ((int)(sizeof wide_shapes / sizeof *wide_shapes))

START_TEST(test_wide_columns)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)((_i / N_TYPES) % N_LAYOUTS);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int n = 0; n < N_LRN_NS; n++)
            for (int s = 0; s < N_WIDE_SHAPES; s++) {
                lrn_params prm = param_sets[(n + s + _i) % N_PARAMS];
                check_problem(h, bk, t, l, lrn_ns[n], prm, wide_shapes[s][0],
                              &wide_shapes[s][1], 1.0, 0.0);
                check_problem(h, bk, t, l, lrn_ns[n], prm, wide_shapes[s][0],
                              &wide_shapes[s][1], -1.25, 0.5);
            }
    }
}
END_TEST

/* ---- hand-computed values ---------------------------------------------------------------- */

/* x = {1, 2, 3} over C in a 1 x 3 x 1 x 1 tensor. */
typedef struct {
    unsigned n;
    lrn_params p;
    double y[3];
} hand_case;

static const hand_case hand_fwd[] = {
    /* window c-1 .. c+1, alpha/n = 1: s = 1 + {1+4, 1+4+9, 4+9} */
    {3, {3.0, 1.0, 1.0}, {1.0 / 6, 2.0 / 15, 3.0 / 14}},
    /* even n looks ahead: window c .. c+1: s = 1 + {1+4, 4+9, 9} */
    {2, {2.0, 1.0, 1.0}, {1.0 / 6, 2.0 / 14, 3.0 / 10}},
    /* n = 1: each channel alone, s = 3 + x^2, y = x / sqrt(s) */
    {1, {1.0, 0.5, 3.0}, {0.5, 0.75592894601845445, 0.86602540378443865}},
    /* n = 16 spans all three channels (7 behind, 8 ahead): s = 1 + 14 */
    {16, {16.0, 1.0, 1.0}, {1.0 / 15, 2.0 / 15, 3.0 / 15}},
};
#define N_HAND_FWD ((int)(sizeof hand_fwd / sizeof *hand_fwd))

START_TEST(test_hand_forward)
{
    const hand_case *hc = &hand_fwd[_i % N_HAND_FWD];
    udnnDataType_t t = tu_float_types[_i / N_HAND_FWD];
    static const int dims[4] = {1, 3, 1, 1};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        for (int i = 0; i < 3; i++) tu_set(&x, i, i + 1.0);
        tu_upload(&x);
        udnnLRNDescriptor_t ld = lrn_desc(hc->n, hc->p);
        tu_ok(run_fwd(h, ld, 1.0, &x, 0.0, &y));
        tu_check_tensor(&y, hc->y, tu_dtype_name(t));
        udnnDestroyLRNDescriptor(ld);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

/* n = 2, alpha 2, beta 1, k 1 on x = {1, 2}: s = {6, 5}, y = {1/6, 2/5}.
 * With dy = {1, 1}: dx0 = d(y0)/dx0 = (6 - 2)/36 = 1/9;
 * dx1 = dy0/dx1 + dy1/dx1 = -4/36 + (5 - 8)/25 = -52/225. */
START_TEST(test_hand_backward)
{
    udnnDataType_t t = tu_float_types[_i];
    static const int dims[4] = {1, 2, 1, 1};
    static const double x_v[2] = {1, 2}, y_v[2] = {1.0 / 6, 2.0 / 5}, want[2] = {1.0 / 9,
                                                                                   -52.0 / 225};
    const lrn_params p = {2.0, 1.0, 1.0};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
        for (int i = 0; i < 2; i++) {
            tu_set(&x, i, x_v[i]);
            tu_set(&y, i, y_v[i]);
            tu_set(&dy, i, 1.0);
        }
        tu_upload(&x);
        tu_upload(&y);
        tu_upload(&dy);
        udnnLRNDescriptor_t ld = lrn_desc(2, p);
        tu_ok(run_bwd(h, ld, 1.0, &y, &dy, &x, 0.0, &dx));
        tu_check_tensor(&dx, want, tu_dtype_name(t));
        udnnDestroyLRNDescriptor(ld);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
    }
}
END_TEST

/* A new descriptor holds cuDNN's defaults (n 5, alpha 1e-4, beta 0.75,
 * k 2) and the op runs with it as it is. */
START_TEST(test_default_descriptor)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i];
    static const int dims[4] = {2, 7, 2, 3};
    const lrn_params defaults = {1e-4, 0.75, 2.0};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, t, 4, dims, TU_NHWC);
        tu_tensor_init(&y, h, t, 4, dims, TU_NHWC);
        tu_fill_uniform(&x, -30.0, 30.0);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        expect_fwd(5, defaults, &x, ref);
        udnnLRNDescriptor_t ld;
        tu_ok(udnnCreateLRNDescriptor(&ld));
        tu_ok(run_fwd(h, ld, 1.0, &x, 0.0, &y));
        tu_check_tensor(&y, ref, "default descriptor");
        free(ref);
        udnnDestroyLRNDescriptor(ld);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

/* The descriptor's bounds are usable: lrnN 1 and 16, beta 0.01, k 1e-5. */
START_TEST(test_parameter_bounds)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    unsigned lrn_n = _i / N_TYPES ? UDNN_LRN_MAX_N : UDNN_LRN_MIN_N;
    const lrn_params p = {0.7, UDNN_LRN_MIN_BETA, UDNN_LRN_MIN_K};
    static const int dims[5] = {1, 17, 2, 1, 2};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        check_problem(h, bk, t, TU_STRIDED, lrn_n, p, 5, dims, 1.0, 0.0);
    }
}
END_TEST

/* ---- in place ---------------------------------------------------------------------------- */

/* 5-D shapes by C: 17, no whole 16-byte vectors of channels; 24, a whole
 * number of them in every type, so that in NHWC the GPU's chan kernel
 * moves vectors, its blocks whole columns (3 to 12 vectors: 252 or 255
 * threads) with a barrier between loads and stores; 257, a column of more
 * elements than a chan block has threads, so that in NHWC in place the
 * GPU falls back to the column kernel. */
static const int in_place_dims[][5] = {{2, 17, 2, 1, 3}, {2, 24, 2, 1, 3}, {1, 257, 1, 1, 2}};
#define N_IN_PLACE ((int)(sizeof in_place_dims / sizeof *in_place_dims))

/* _i picks the layout and which input dx overwrites: dy, x or y. */
START_TEST(test_in_place)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    int victim = (_i / N_LAYOUTS) % 3;
    const lrn_params p = param_sets[_i % N_PARAMS];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_IN_PLACE; s++)
            for (int n = 0; n < N_LRN_NS; n++) {
                const int *dims = in_place_dims[s];
                char what[80];
                tu_tensor x, y, dy;
                tu_tensor_init(&x, h, t, 5, dims, l);
                tu_tensor_init(&y, h, t, 5, dims, l);
                tu_tensor_init(&dy, h, t, 5, dims, l);
                udnnLRNDescriptor_t ld = lrn_desc(lrn_ns[n], p);
                tu_fill_uniform(&x, -2.0, 2.0);
                set_y_of_x(&y, lrn_ns[n], p, &x);
                tu_fill_uniform(&dy, -1.0, 1.0);
                double *ref = malloc((size_t)x.count * sizeof *ref);
                expect_bwd(lrn_ns[n], p, &x, &y, &dy, ref);
                tu_tensor *out = victim == 0 ? &dy : victim == 1 ? &x : &y;
                tu_ok(run_bwd(h, ld, 1.0, &y, &dy, &x, 0.0, out));
                snprintf(what, sizeof what, "backward in place, C %d lrnN %u", dims[1],
                         lrn_ns[n]);
                tu_check_tensor(out, ref, what);
                tu_fill_uniform(&x, -2.0, 2.0);
                expect_fwd(lrn_ns[n], p, &x, ref);
                tu_ok(run_fwd(h, ld, 1.0, &x, 0.0, &x));
                snprintf(what, sizeof what, "forward in place, C %d lrnN %u", dims[1], lrn_ns[n]);
                tu_check_tensor(&x, ref, what);
                free(ref);
                udnnDestroyLRNDescriptor(ld);
                tu_tensor_free(&x);
                tu_tensor_free(&y);
                tu_tensor_free(&dy);
            }
    }
}
END_TEST

/* ---- finite differences in DOUBLE -------------------------------------------------------- */

/* L = sum(dy . lrn(x)), through LRNCrossChannelForward. */
static double loss(udnnHandle_t h, udnnLRNDescriptor_t ld, tu_tensor *x, tu_tensor *y,
                   const double *dy)
{
    tu_upload(x);
    tu_ok(run_fwd(h, ld, 1.0, x, 0.0, y));
    tu_download(y);
    return tu_dot(y, dy);
}

static void check_finite_differences(udnnHandle_t h, udnnBackend_t be, tu_layout l,
                                     unsigned lrn_n, lrn_params p, int rank, const int *dims)
{
    const double step = 1e-6;
    tu_tensor x, y, dy, dx;
    tu_tensor_init(&x, h, UDNN_DATA_DOUBLE, rank, dims, l);
    tu_tensor_init(&y, h, UDNN_DATA_DOUBLE, rank, dims, l);
    tu_tensor_init(&dy, h, UDNN_DATA_DOUBLE, rank, dims, l);
    tu_tensor_init(&dx, h, UDNN_DATA_DOUBLE, rank, dims, l);
    udnnLRNDescriptor_t ld = lrn_desc(lrn_n, p);
    tu_fill_uniform(&x, -2.0, 2.0);
    tu_fill_uniform(&dy, -1.0, 1.0);
    double *dyv = malloc((size_t)x.count * sizeof *dyv);
    double *num = malloc((size_t)x.count * sizeof *num);
    double *ana = malloc((size_t)x.count * sizeof *ana);
    tu_values(&dy, dyv);
    tu_ok(run_fwd(h, ld, 1.0, &x, 0.0, &y));
    tu_ok(run_bwd(h, ld, 1.0, &y, &dy, &x, 0.0, &dx));
    for (int64_t i = 0; i < x.count; i++) {
        double xi = tu_get(&x, i);
        tu_set(&x, i, xi + step);
        double up = loss(h, ld, &x, &y, dyv);
        tu_set(&x, i, xi - step);
        double down = loss(h, ld, &x, &y, dyv);
        tu_set(&x, i, xi);
        num[i] = (up - down) / (2.0 * step);
    }
    tu_download(&dx);
    tu_values(&dx, ana);
    double err = tu_rel_error(ana, num, x.count);
    ck_assert_msg(err < 1e-6,
                  "%s %s lrnN %u alpha %g beta %g k %g C %d rank %d: rel err %g vs finite "
                  "differences (seed %llu)",
                  tu_backend_name(be), tu_layout_name(l), lrn_n, p.alpha, p.beta, p.k, dims[1],
                  rank, err, (unsigned long long)tu_seed_used());
    free(dyv);
    free(num);
    free(ana);
    udnnDestroyLRNDescriptor(ld);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_tensor_free(&dy);
    tu_tensor_free(&dx);
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    unsigned lrn_n = lrn_ns[_i / N_LAYOUTS];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int c = 0; c < N_CHANNELS; c++)
            for (int s = 0; s < N_TEMPLATES; s += 2) {
                int dims[5];
                int rank = shape_dims(s + c % 2, channel_counts[c], dims);
                /* not cuDNN's default alpha: the cross terms must weigh */
                lrn_params p = param_sets[(c + _i) % 2 ? 3 : 0];
                check_finite_differences(h, bk, l, lrn_n, p, rank, dims);
            }
    }
}
END_TEST

/* ---- validation -------------------------------------------------------------------------- */

/* Four f32 2x3x4x5 tensors and the wrong descriptors the cases swap in. */
typedef struct {
    udnnHandle_t h;
    udnnLRNDescriptor_t ld;
    tu_tensor a, b, c, out;
    udnnTensorDescriptor_t unset, s8, s32, f64, other_dims, rank3, rank5, rank6, nhwc;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 4, 3, 5}, r3[3] = {2, 3, 20},
                     r5[5] = {2, 3, 4, 5, 1}, r6[6] = {2, 3, 4, 5, 1, 1};
    f->h = tu_handle(be);
    f->ld = lrn_desc(3, param_sets[0]);
    tu_tensor_init(&f->a, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->b, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->c, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->out, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_fill_uniform(&f->a, 0.1, 1);
    tu_fill_uniform(&f->b, -1, 1);
    tu_fill_uniform(&f->c, -1, 1);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->s32 = tu_packed_desc(UDNN_DATA_INT32, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->rank3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, r3);
    f->rank5 = tu_packed_desc(UDNN_DATA_FLOAT, 5, r5);
    f->rank6 = tu_packed_desc(UDNN_DATA_FLOAT, 6, r6);
    tu_ok(udnnCreateTensorDescriptor(&f->nhwc));
    tu_ok(udnnSetTensor4dDescriptor(f->nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 4, 5));
}

static void fixture_free(fixture *f)
{
    tu_tensor_free(&f->a);
    tu_tensor_free(&f->b);
    tu_tensor_free(&f->c);
    tu_tensor_free(&f->out);
    udnnTensorDescriptor_t descs[] = {f->unset, f->s8,    f->s32,   f->f64, f->other_dims,
                                      f->rank3, f->rank5, f->rank6, f->nhwc};
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) udnnDestroyTensorDescriptor(descs[i]);
    udnnDestroyLRNDescriptor(f->ld);
    udnnDestroy(f->h);
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

static const bad_expect fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "normDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "lrnMode 1"},
    {UDNN_STATUS_BAD_PARAM, "lrnMode -1"},
    {UDNN_STATUS_BAD_PARAM, "alpha is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s32"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 6 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 1"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
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
        udnnLRNDescriptor_t ld = f.ld;
        udnnLRNMode_t mode = UDNN_LRN_CROSS_CHANNEL_DIM1;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = f.a.desc, yd = f.out.desc;
        const void *x = tu_buf_ptr(&f.a.buf);
        void *y = tu_buf_ptr(&f.out.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: ld = NULL; break;
        case 2: mode = (udnnLRNMode_t)1; break;
        case 3: mode = (udnnLRNMode_t)-1; break;
        case 4: alpha = NULL; break;
        case 5: xd = NULL; break;
        case 6: xd = f.unset; break;
        case 7: x = NULL; break;
        case 8: beta = NULL; break;
        case 9: yd = NULL; break;
        case 10: yd = f.unset; break;
        case 11: y = NULL; break;
        case 12: xd = yd = f.s8; break;
        case 13: xd = yd = f.s32; break;
        case 14: xd = yd = f.rank3; break;
        case 15: xd = yd = f.rank6; break;
        case 16: yd = f.f64; break;
        case 17: yd = f.other_dims; break;
        case 18: yd = f.rank5; break;
        case 19: xd = f.nhwc, x = tu_buf_ptr(&f.out.buf); break;
        }
        udnnStatus_t st = udnnLRNCrossChannelForward(h, ld, mode, alpha, xd, x, beta, yd, y);
        tu_assert_fails(st, fwd_bad[_i].status, "udnnLRNCrossChannelForward", fwd_bad[_i].arg);
        tu_assert_untouched(&f.out.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "normDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "lrnMode 2"},
    {UDNN_STATUS_BAD_PARAM, "alpha is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 6 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 1"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 1"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has dimension 1"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of dy"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of x"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of y"},
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
        udnnLRNDescriptor_t ld = f.ld;
        udnnLRNMode_t mode = UDNN_LRN_CROSS_CHANNEL_DIM1;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t yd = f.a.desc, dyd = f.b.desc, xd = f.c.desc, dxd = f.out.desc;
        const void *y = tu_buf_ptr(&f.a.buf), *dy = tu_buf_ptr(&f.b.buf),
                   *x = tu_buf_ptr(&f.c.buf);
        void *dx = tu_buf_ptr(&f.out.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: ld = NULL; break;
        case 2: mode = (udnnLRNMode_t)2; break;
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
        case 17: xd = yd = dyd = dxd = f.s8; break;
        case 18: xd = yd = dyd = dxd = f.rank3; break;
        case 19: xd = yd = dyd = dxd = f.rank6; break;
        case 20: yd = f.f64; break;
        case 21: dyd = f.f64; break;
        case 22: dxd = f.f64; break;
        case 23: yd = f.other_dims; break;
        case 24: dyd = f.other_dims; break;
        case 25: dxd = f.other_dims; break;
        case 26: dxd = f.rank5; break;
        case 27: dyd = f.nhwc, dy = tu_buf_ptr(&f.out.buf); break;
        case 28: xd = f.nhwc, x = tu_buf_ptr(&f.out.buf); break;
        case 29: yd = f.nhwc, y = tu_buf_ptr(&f.out.buf); break;
        }
        udnnStatus_t st =
            udnnLRNCrossChannelBackward(h, ld, mode, alpha, yd, y, dyd, dy, xd, x, beta, dxd, dx);
        tu_assert_fails(st, bwd_bad[_i].status, "udnnLRNCrossChannelBackward", bwd_bad[_i].arg);
        tu_assert_untouched(&f.out.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("lrn");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_ops, 0, N_TYPES * N_LAYOUTS * N_LRN_NS);
    tcase_add_loop_test(ops, test_alpha_beta, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_wide_columns, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_hand_forward, 0, N_HAND_FWD * N_TYPES);
    tcase_add_loop_test(ops, test_hand_backward, 0, N_TYPES);
    tcase_add_loop_test(ops, test_default_descriptor, 0, N_TYPES);
    tcase_add_loop_test(ops, test_parameter_bounds, 0, 2 * N_TYPES);
    tcase_add_loop_test(ops, test_in_place, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_finite_differences, 0, N_LAYOUTS * N_LRN_NS);
    suite_add_tcase(s, ops);

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_fwd_bad, 0, N_FWD_BAD);
    tcase_add_loop_test(bad, test_bwd_bad, 0, N_BWD_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
