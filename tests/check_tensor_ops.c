/* check_tensor_ops.c - SetTensor, ScaleTensor, AddTensor, TransformTensor
 * and OpTensor on every backend, type and layout; the OpTensor, reduce,
 * LRN and dropout descriptors; DeriveBNTensorDescriptor; and the ops that
 * arrive later answering NOT_SUPPORTED. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* ---- shapes, layouts and helpers ------------------------------------------------- */

typedef struct {
    int nb;
    int dims[5];
} shape;

/* odd sizes, C of 1, 3 and 5, ranks 2 to 5 */
static const shape shapes[] = {
    {2, {3, 5}},          {3, {2, 3, 5}},       {4, {2, 3, 4, 5}},
    {4, {2, 1, 3, 3}},    {4, {3, 5, 2, 3}},    {5, {2, 3, 2, 3, 4}},
};
#define N_SHAPES (int)(sizeof shapes / sizeof *shapes)

static const tu_layout layouts[3] = {TU_NCHW, TU_NHWC, TU_STRIDED};

static const udnnDataType_t set_types[6] = {UDNN_DATA_FLOAT, UDNN_DATA_DOUBLE,
                                            UDNN_DATA_HALF,  UDNN_DATA_BFLOAT16,
                                            UDNN_DATA_INT32, UDNN_DATA_INT8};

static void *ptr(const tu_tensor *t)
{
    return tu_buf_ptr(&t->buf);
}

static double *alloc_ref(int64_t n)
{
    double *r = malloc((size_t)n * sizeof *r);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* The logical index in `small` of element i of `big`, small's size-1
 * dims repeating (broadcast). */
static int64_t bcast_index(const tu_tensor *small, const tu_tensor *big, int64_t i)
{
    int64_t idx[UDNN_DIM_MAX];
    for (int d = big->nb - 1; d >= 0; d--) {
        idx[d] = i % big->dims[d];
        i /= big->dims[d];
    }
    int64_t j = 0;
    for (int d = 0; d < small->nb; d++) j = j * small->dims[d] + (small->dims[d] == 1 ? 0 : idx[d]);
    return j;
}

static void describe(char *buf, size_t n, udnnBackend_t b, udnnDataType_t t, const char *what,
                     int nb, const int *dims, tu_layout l)
{
    int pos = snprintf(buf, n, "%s %s %s %s [", tu_backend_name(b), tu_dtype_name(t), what,
                       tu_layout_name(l));
    for (int i = 0; i < nb && pos > 0 && (size_t)pos < n; i++)
        pos += snprintf(buf + pos, n - (size_t)pos, "%s%d", i ? "," : "", dims[i]);
    if (pos > 0 && (size_t)pos < n) snprintf(buf + pos, n - (size_t)pos, "]");
}

/* Fills with values of magnitude in [lo, hi] and random sign. */
static void fill_signed(tu_tensor *t, double lo, double hi)
{
    for (int64_t i = 0; i < t->count; i++)
        tu_set(t, i, tu_uniform(lo, hi) * (tu_int(0, 1) ? 1.0 : -1.0));
    tu_upload(t);
}

/* ---- hand-computed tiny cases ---------------------------------------------------- */

static const int tiny_dims[4] = {1, 2, 1, 2};

START_TEST(test_set_tensor_tiny)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor y, q;
        tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NCHW);
        tu_tensor_init(&q, h, UDNN_DATA_INT8, 4, tiny_dims, TU_NHWC);
        const float v = 2.5f;
        const int8_t v8 = -7;
        tu_ok(udnnSetTensor(h, y.desc, ptr(&y), &v));
        tu_ok(udnnSetTensor(h, q.desc, ptr(&q), &v8));
        tu_download(&y);
        tu_download(&q);
        for (int i = 0; i < 4; i++) {
            ck_assert_double_eq(tu_get(&y, i), 2.5);
            ck_assert_double_eq(tu_get(&q, i), -7.0);
        }
        tu_tensor_free(&y);
        tu_tensor_free(&q);
    }
}
END_TEST

START_TEST(test_scale_tensor_tiny)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor y;
        tu_tensor_init(&y, h, UDNN_DATA_DOUBLE, 4, tiny_dims, TU_STRIDED);
        const double in[4] = {1, -2, 3, 4}, out[4] = {0.5, -1, 1.5, 2}, alpha = 0.5;
        for (int i = 0; i < 4; i++) tu_set(&y, i, in[i]);
        tu_upload(&y);
        tu_ok(udnnScaleTensor(h, y.desc, ptr(&y), &alpha));
        tu_download(&y);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(tu_get(&y, i), out[i]);
        tu_tensor_free(&y);
    }
}
END_TEST

START_TEST(test_add_tensor_tiny_bias)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, c;
        const int bias_dims[4] = {1, 2, 1, 1};
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, bias_dims, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NHWC);
        const double cin[4] = {1, 2, 3, 4}, out[4] = {21, 22, 43, 44};
        tu_set(&a, 0, 10);
        tu_set(&a, 1, 20);
        for (int i = 0; i < 4; i++) tu_set(&c, i, cin[i]);
        tu_upload(&a);
        tu_upload(&c);
        const float alpha = 2.0f, beta = 1.0f;
        tu_ok(udnnAddTensor(h, &alpha, a.desc, ptr(&a), &beta, c.desc, ptr(&c)));
        tu_download(&c);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(tu_get(&c, i), out[i]);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

/* NCHW [1, 2, 3, 4] (c0: 1 2, c1: 3 4) lands in NHWC memory as 1 3 2 4. */
START_TEST(test_transform_tensor_tiny_nchw_to_nhwc)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NCHW);
        tu_tensor_init(&y, h, UDNN_DATA_HALF, 4, tiny_dims, TU_NHWC);
        for (int i = 0; i < 4; i++) tu_set(&x, i, i + 1);
        tu_upload(&x);
        const float alpha = 1.0f, beta = 0.0f;
        tu_ok(udnnTransformTensor(h, &alpha, x.desc, ptr(&x), &beta, y.desc, ptr(&y)));
        tu_download(&y);
        const _Float16 *raw = (const _Float16 *)y.buf.host;
        const double want[4] = {1, 3, 2, 4};
        for (int i = 0; i < 4; i++) ck_assert_double_eq((double)raw[i], want[i]);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

/* A = [1, 4, 9, 16], B = 2 (broadcast 1x1x1x1). */
static const double tiny_op_want[6][4] = {
    {3, 6, 11, 18},   /* ADD */
    {2, 8, 18, 32},   /* MUL */
    {1, 2, 2, 2},     /* MIN */
    {2, 4, 9, 16},    /* MAX */
    {1, 2, 3, 4},     /* SQRT */
    {0, -3, -8, -15}, /* NOT: 1 - A */
};

START_TEST(test_op_tensor_tiny)
{
    const udnnOpTensorOp_t op = (udnnOpTensorOp_t)_i;
    const int one[4] = {1, 1, 1, 1};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 4, one, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_STRIDED);
        for (int i = 0; i < 4; i++) tu_set(&a, i, (i + 1) * (i + 1));
        tu_set(&b, 0, 2);
        tu_upload(&a);
        tu_upload(&b);
        udnnOpTensorDescriptor_t od;
        tu_ok(udnnCreateOpTensorDescriptor(&od));
        tu_ok(udnnSetOpTensorDescriptor(od, op, UDNN_DATA_FLOAT, UDNN_NOT_PROPAGATE_NAN));
        const float one_f = 1.0f, zero = 0.0f;
        tu_ok(udnnOpTensor(h, od, &one_f, a.desc, ptr(&a), &one_f, b.desc, ptr(&b), &zero,
                           c.desc, ptr(&c)));
        tu_download(&c);
        for (int i = 0; i < 4; i++) ck_assert_double_eq(tu_get(&c, i), tiny_op_want[op][i]);
        udnnDestroyOpTensorDescriptor(od);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* MIN and MAX with NaN operands: _i picks op (bit 0) and nanOpt (bit 1). */
START_TEST(test_op_tensor_nan_propagation)
{
    const udnnOpTensorOp_t op = (_i & 1) ? UDNN_OP_TENSOR_MAX : UDNN_OP_TENSOR_MIN;
    const udnnNanPropagation_t nan_opt = (_i & 2) ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN;
    const double av[4] = {NAN, 1, 2, NAN}, bv[4] = {1, NAN, 3, NAN};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NHWC);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, tiny_dims, TU_NCHW);
        for (int i = 0; i < 4; i++) {
            tu_set(&a, i, av[i]);
            tu_set(&b, i, bv[i]);
        }
        tu_upload(&a);
        tu_upload(&b);
        udnnOpTensorDescriptor_t od;
        tu_ok(udnnCreateOpTensorDescriptor(&od));
        tu_ok(udnnSetOpTensorDescriptor(od, op, UDNN_DATA_FLOAT, nan_opt));
        const float one = 1.0f, zero = 0.0f;
        tu_ok(udnnOpTensor(h, od, &one, a.desc, ptr(&a), &one, b.desc, ptr(&b), &zero, c.desc,
                           ptr(&c)));
        tu_download(&c);
        const double plain = op == UDNN_OP_TENSOR_MAX ? 3 : 2;
        if (nan_opt == UDNN_PROPAGATE_NAN) {
            ck_assert(isnan(tu_get(&c, 0)) && isnan(tu_get(&c, 1)));
        } else {
            ck_assert_double_eq(tu_get(&c, 0), 1);
            ck_assert_double_eq(tu_get(&c, 1), 1);
        }
        ck_assert_double_eq(tu_get(&c, 2), plain);
        ck_assert(isnan(tu_get(&c, 3)));
        udnnDestroyOpTensorDescriptor(od);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- SetTensor, ScaleTensor -------------------------------------------------------- */

START_TEST(test_set_tensor)
{
    tu_seed_fresh();
    const udnnDataType_t t = set_types[_i];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int s = 0; s < N_SHAPES; s++)
        for (int l = 0; l < 3; l++) {
            tu_tensor y;
            tu_tensor_init(&y, h, t, shapes[s].nb, shapes[s].dims, layouts[l]);
            const int sign = tu_int(0, 1) ? 1 : -1;
            union {
                float f;
                double d;
                int32_t i32;
                int8_t i8;
            } v;
            double want;
            switch (t) {
            case UDNN_DATA_INT8: want = v.i8 = (int8_t)(sign * tu_int(2, 127)); break;
            case UDNN_DATA_INT32: want = v.i32 = sign * tu_int(2, 1 << 30); break;
            case UDNN_DATA_DOUBLE: want = v.d = sign * tu_uniform(0.5, 3); break;
            default: v.f = (float)(sign * tu_uniform(0.5, 3)); want = tu_round(t, v.f); break;
            }
            tu_ok(udnnSetTensor(h, y.desc, ptr(&y), &v));
            double *ref = alloc_ref(y.count);
            for (int64_t i = 0; i < y.count; i++) ref[i] = want;
            char what[128];
            describe(what, sizeof what, bk, t, "set", y.nb, y.dims, layouts[l]);
            tu_check_tensor(&y, ref, what);
            free(ref);
            tu_tensor_free(&y);
        }
}
END_TEST

START_TEST(test_scale_tensor)
{
    tu_seed_fresh();
    const udnnDataType_t t = tu_float_types[_i];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int s = 0; s < N_SHAPES; s++)
        for (int l = 0; l < 3; l++) {
            tu_tensor y;
            tu_tensor_init(&y, h, t, shapes[s].nb, shapes[s].dims, layouts[l]);
            tu_fill_uniform(&y, -2, 2);
            const double alpha = -1.375;
            double *ref = alloc_ref(y.count);
            for (int64_t i = 0; i < y.count; i++) ref[i] = alpha * tu_get(&y, i);
            tu_scalar a = tu_scalar_of(t, alpha);
            tu_ok(udnnScaleTensor(h, y.desc, ptr(&y), &a));
            char what[128];
            describe(what, sizeof what, bk, t, "scale", y.nb, y.dims, layouts[l]);
            tu_check_tensor(&y, ref, what);
            free(ref);
            tu_tensor_free(&y);
        }
}
END_TEST

/* ---- AddTensor ------------------------------------------------------------------------ */

/* C's shape and A's, every broadcast form cuDNN accepts. */
static const shape add_forms[][2] = {
    {{4, {2, 3, 4, 5}}, {4, {2, 3, 4, 5}}},          /* full */
    {{4, {2, 5, 3, 4}}, {4, {1, 5, 1, 1}}},          /* bias 1xCx1x1 */
    {{4, {2, 16, 3, 2}}, {4, {1, 16, 1, 1}}},        /* bias, C whole 16-byte vectors */
    {{4, {3, 5, 2, 3}}, {4, {3, 5, 1, 1}}},          /* NxCx1x1 */
    {{4, {2, 3, 4, 5}}, {4, {1, 1, 4, 5}}},          /* 1x1xHxW */
    {{4, {2, 3, 4, 5}}, {4, {1, 1, 1, 1}}},          /* scalar */
    {{4, {2, 1, 3, 3}}, {4, {1, 1, 3, 3}}},          /* C = 1 */
    {{5, {2, 3, 2, 3, 4}}, {5, {1, 3, 1, 1, 1}}},    /* 5-D bias */
    {{5, {2, 3, 2, 3, 4}}, {5, {2, 3, 2, 3, 4}}},    /* 5-D full */
    {{5, {2, 3, 2, 3, 4}}, {5, {2, 1, 2, 3, 4}}},    /* 5-D Nx1xDxHxW */
    {{3, {2, 5, 3}}, {3, {1, 5, 1}}},                /* 3-D bias */
    {{2, {3, 5}}, {2, {1, 5}}},                      /* 2-D row */
};
#define N_ADD_FORMS (int)(sizeof add_forms / sizeof *add_forms)

static void add_case(udnnHandle_t h, udnnBackend_t bk, udnnDataType_t t, const shape *cs,
                     const shape *as, tu_layout lc, tu_layout la, double beta)
{
    tu_tensor a, c;
    tu_tensor_init(&a, h, t, as->nb, as->dims, la);
    tu_tensor_init(&c, h, t, cs->nb, cs->dims, lc);
    tu_fill_uniform(&a, -2, 2);
    const double alpha = 0.75;
    double *ref = alloc_ref(c.count);
    for (int64_t i = 0; i < c.count; i++) ref[i] = tu_get(&a, bcast_index(&a, &c, i));
    tu_blend_drawn(ref, alpha, beta, &c); /* beta 0: c stays poisoned */
    tu_scalar sa = tu_scalar_of(t, alpha), sb = tu_scalar_of(t, beta);
    tu_ok(udnnAddTensor(h, &sa, a.desc, ptr(&a), &sb, c.desc, ptr(&c)));
    char what[160], cw[96];
    describe(cw, sizeof cw, bk, t, "add A", a.nb, a.dims, la);
    snprintf(what, sizeof what, "%s to C %s beta %g", cw, tu_layout_name(lc), beta);
    tu_check_tensor(&c, ref, what);
    free(ref);
    tu_tensor_free(&a);
    tu_tensor_free(&c);
}

START_TEST(test_add_tensor)
{
    tu_seed_fresh();
    const udnnDataType_t t = tu_float_types[_i % 4];
    const shape *form = add_forms[_i / 4];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int lc = 0; lc < 3; lc++)
        for (int la = 0; la < 3; la++)
            for (int b = 0; b < 2; b++)
                add_case(h, bk, t, &form[0], &form[1], layouts[lc], layouts[la], b ? -0.5 : 0.0);
}
END_TEST

/* A == C: C = alpha * C + beta * C, in every layout. */
START_TEST(test_add_tensor_in_place)
{
    tu_seed_fresh();
    const udnnDataType_t t = tu_float_types[_i];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int l = 0; l < 3; l++) {
        tu_tensor c;
        tu_tensor_init(&c, h, t, 4, shapes[2].dims, layouts[l]);
        tu_fill_uniform(&c, -2, 2);
        double *ref = alloc_ref(c.count);
        for (int64_t i = 0; i < c.count; i++) ref[i] = (1.5 - 0.25) * tu_get(&c, i);
        tu_scalar sa = tu_scalar_of(t, 1.5), sb = tu_scalar_of(t, -0.25);
        tu_ok(udnnAddTensor(h, &sa, c.desc, ptr(&c), &sb, c.desc, ptr(&c)));
        tu_check_tensor(&c, ref, "add in place");
        free(ref);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- TransformTensor ------------------------------------------------------------------- */

/* _i is x's type * 4 + y's type: every pair of float types, every pair of
 * layouts, ranks 2 to 5, beta 0 and not. */
START_TEST(test_transform_tensor)
{
    tu_seed_fresh();
    const udnnDataType_t tx = tu_float_types[_i / 4], ty = tu_float_types[_i % 4];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int s = 0; s < N_SHAPES; s++)
        for (int lx = 0; lx < 3; lx++)
            for (int ly = 0; ly < 3; ly++)
                for (int b = 0; b < 2; b++) {
                    const shape *sh = &shapes[s];
                    const double alpha = b ? -1.25 : 1.0, beta = b ? 0.5 : 0.0;
                    tu_tensor x, y;
                    tu_tensor_init(&x, h, tx, sh->nb, sh->dims, layouts[lx]);
                    tu_tensor_init(&y, h, ty, sh->nb, sh->dims, layouts[ly]);
                    tu_fill_uniform(&x, -3, 3);
                    double *ref = alloc_ref(y.count);
                    for (int64_t i = 0; i < y.count; i++) ref[i] = tu_get(&x, i);
                    tu_blend_drawn(ref, alpha, beta, &y);
                    tu_scalar sa = tu_scalar_of(ty, alpha), sb = tu_scalar_of(ty, beta);
                    tu_ok(udnnTransformTensor(h, &sa, x.desc, ptr(&x), &sb, y.desc, ptr(&y)));
                    char what[160], xw[96];
                    describe(xw, sizeof xw, bk, tx, "transform x", sh->nb, sh->dims, layouts[lx]);
                    snprintf(what, sizeof what, "%s to y %s %s beta %g", xw, tu_dtype_name(ty),
                             tu_layout_name(layouts[ly]), beta);
                    tu_check_tensor(&y, ref, what);
                    free(ref);
                    tu_tensor_free(&x);
                    tu_tensor_free(&y);
                }
}
END_TEST

START_TEST(test_transform_tensor_in_place)
{
    tu_seed_fresh();
    const udnnDataType_t t = tu_float_types[_i];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int l = 0; l < 3; l++) {
        tu_tensor y;
        tu_tensor_init(&y, h, t, 5, shapes[5].dims, layouts[l]);
        tu_fill_uniform(&y, -2, 2);
        double *ref = alloc_ref(y.count);
        for (int64_t i = 0; i < y.count; i++) ref[i] = (2.0 + 0.5) * tu_get(&y, i);
        tu_scalar sa = tu_scalar_of(t, 2.0), sb = tu_scalar_of(t, 0.5);
        tu_ok(udnnTransformTensor(h, &sa, y.desc, ptr(&y), &sb, y.desc, ptr(&y)));
        tu_check_tensor(&y, ref, "transform in place");
        free(ref);
        tu_tensor_free(&y);
    }
}
END_TEST

/* ---- OpTensor ---------------------------------------------------------------------------- */

static double op_expect(udnnOpTensorOp_t op, double a, double b)
{
    switch (op) {
    case UDNN_OP_TENSOR_ADD: return a + b;
    case UDNN_OP_TENSOR_MUL: return a * b;
    case UDNN_OP_TENSOR_MIN: return a < b ? a : b;
    case UDNN_OP_TENSOR_MAX: return a > b ? a : b;
    case UDNN_OP_TENSOR_SQRT: return sqrt(a);
    case UDNN_OP_TENSOR_NOT: return 1.0 - a;
    }
    return NAN;
}

static int is_unary(udnnOpTensorOp_t op)
{
    return op == UDNN_OP_TENSOR_SQRT || op == UDNN_OP_TENSOR_NOT;
}

/* C's shape and B's. */
static const shape op_forms[][2] = {
    {{4, {2, 3, 4, 5}}, {4, {2, 3, 4, 5}}},
    {{4, {2, 3, 4, 5}}, {4, {1, 3, 1, 1}}},
    {{4, {3, 5, 2, 3}}, {4, {1, 1, 1, 1}}},
    {{4, {2, 1, 3, 3}}, {4, {2, 1, 1, 3}}},
    {{5, {2, 3, 2, 3, 4}}, {5, {1, 3, 1, 1, 1}}},
    {{3, {2, 5, 3}}, {3, {2, 5, 3}}},
    {{2, {3, 5}}, {2, {1, 5}}},
    {{2, {3, 16}}, {2, {1, 16}}}, /* a row of whole 16-byte vectors */
};
#define N_OP_FORMS (int)(sizeof op_forms / sizeof *op_forms)

static udnnOpTensorDescriptor_t mk_op(udnnOpTensorOp_t op, udnnDataType_t comp)
{
    udnnOpTensorDescriptor_t od;
    tu_ok(udnnCreateOpTensorDescriptor(&od));
    tu_ok(udnnSetOpTensorDescriptor(od, op, comp, UDNN_PROPAGATE_NAN));
    return od;
}

/* The inputs each op is defined on: SQRT needs alpha1 * A >= 0. */
static void fill_operand(tu_tensor *t, udnnOpTensorOp_t op)
{
    if (op == UDNN_OP_TENSOR_SQRT) tu_fill_uniform(t, 0.1, 4);
    else fill_signed(t, 0.25, 3);
}

static const double op_alpha1 = 0.75, op_alpha2 = -1.25;

static void op_case(udnnHandle_t h, udnnBackend_t bk, udnnOpTensorOp_t op, udnnDataType_t t,
                    udnnDataType_t comp, const shape *cs, const shape *bs, tu_layout la,
                    tu_layout lb, tu_layout lc, double beta)
{
    tu_tensor a, b, c;
    tu_tensor_init(&a, h, t, cs->nb, cs->dims, la);
    tu_tensor_init(&b, h, t, bs->nb, bs->dims, lb);
    tu_tensor_init(&c, h, t, cs->nb, cs->dims, lc);
    fill_operand(&a, op);
    fill_operand(&b, op);
    double *ref = alloc_ref(c.count);
    for (int64_t i = 0; i < c.count; i++)
        ref[i] = op_expect(op, op_alpha1 * tu_get(&a, i),
                           op_alpha2 * tu_get(&b, bcast_index(&b, &c, i)));
    tu_blend_drawn(ref, 1.0, beta, &c);
    udnnOpTensorDescriptor_t od = mk_op(op, comp);
    tu_scalar s1 = tu_scalar_of(t, op_alpha1), s2 = tu_scalar_of(t, op_alpha2),
              sb = tu_scalar_of(t, beta);
    tu_ok(udnnOpTensor(h, od, &s1, a.desc, ptr(&a), &s2, b.desc, ptr(&b), &sb, c.desc, ptr(&c)));
    char what[200], cw[96];
    describe(cw, sizeof cw, bk, t, "op C", c.nb, c.dims, lc);
    snprintf(what, sizeof what, "op %d %s, A %s, B %s [%d..], beta %g", (int)op, cw,
             tu_layout_name(la), tu_layout_name(lb), b.dims[0], beta);
    tu_check_tensor(&c, ref, what);
    free(ref);
    udnnDestroyOpTensorDescriptor(od);
    tu_tensor_free(&a);
    tu_tensor_free(&b);
    tu_tensor_free(&c);
}

/* _i is op * 4 + type. */
START_TEST(test_op_tensor)
{
    tu_seed_fresh();
    const udnnOpTensorOp_t op = (udnnOpTensorOp_t)(_i / 4);
    const udnnDataType_t t = tu_float_types[_i % 4];
    TU_FOR_EACH_BACKEND(h, bk)
    for (int f = 0; f < N_OP_FORMS; f++)
        for (int lc = 0; lc < 3; lc++)
            for (int la = 0; la < 3; la++)
                for (int b = 0; b < 2; b++) {
                    /* float data alternates its compute type; double needs DOUBLE */
                    udnnDataType_t comp = t == UDNN_DATA_DOUBLE || (f + la) % 2
                                              ? UDNN_DATA_DOUBLE
                                              : UDNN_DATA_FLOAT;
                    op_case(h, bk, op, t, comp, &op_forms[f][0], &op_forms[f][1], layouts[la],
                            layouts[(la + lc) % 3], layouts[lc], b ? 0.5 : 0.0);
                }
}
END_TEST

/* C == A (every op), and C == B (binary ops), in every layout. */
START_TEST(test_op_tensor_in_place)
{
    tu_seed_fresh();
    const udnnOpTensorOp_t op = (udnnOpTensorOp_t)_i;
    const int *dims = shapes[4].dims;
    TU_FOR_EACH_BACKEND(h, bk)
    for (int ti = 0; ti < 4; ti++)
        for (int l = 0; l < 3; l++)
            for (int into_b = 0; into_b < 1 + !is_unary(op); into_b++) {
                const udnnDataType_t t = tu_float_types[ti];
                tu_tensor a, b;
                tu_tensor_init(&a, h, t, 4, dims, layouts[l]);
                tu_tensor_init(&b, h, t, 4, dims, into_b ? layouts[l] : layouts[(l + 1) % 3]);
                fill_operand(&a, op);
                fill_operand(&b, op);
                tu_tensor *c = into_b ? &b : &a;
                const double beta = -0.5;
                double *ref = alloc_ref(a.count);
                for (int64_t i = 0; i < a.count; i++)
                    ref[i] = op_expect(op, op_alpha1 * tu_get(&a, i), op_alpha2 * tu_get(&b, i)) +
                             beta * tu_get(c, i);
                udnnOpTensorDescriptor_t od = mk_op(op, UDNN_DATA_DOUBLE);
                tu_scalar s1 = tu_scalar_of(t, op_alpha1), s2 = tu_scalar_of(t, op_alpha2),
                          sb = tu_scalar_of(t, beta);
                tu_ok(udnnOpTensor(h, od, &s1, a.desc, ptr(&a), &s2, b.desc, ptr(&b), &sb,
                                   c->desc, ptr(c)));
                char what[128];
                describe(what, sizeof what, bk, t, into_b ? "op C==B" : "op C==A", 4, dims,
                         layouts[l]);
                tu_check_tensor(c, ref, what);
                free(ref);
                udnnDestroyOpTensorDescriptor(od);
                tu_tensor_free(&a);
                tu_tensor_free(&b);
            }
}
END_TEST

/* SQRT and NOT read neither B, bDesc nor alpha2: all may be NULL. */
START_TEST(test_op_tensor_unary_without_b)
{
    tu_seed_fresh();
    const udnnOpTensorOp_t op = _i ? UDNN_OP_TENSOR_NOT : UDNN_OP_TENSOR_SQRT;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, shapes[2].dims, TU_NHWC);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, shapes[2].dims, TU_STRIDED);
        fill_operand(&a, op);
        double *ref = alloc_ref(c.count);
        for (int64_t i = 0; i < c.count; i++) ref[i] = op_expect(op, 2.0 * tu_get(&a, i), 0);
        udnnOpTensorDescriptor_t od = mk_op(op, UDNN_DATA_FLOAT);
        const float two = 2.0f, zero = 0.0f;
        tu_ok(udnnOpTensor(h, od, &two, a.desc, ptr(&a), NULL, NULL, NULL, &zero, c.desc,
                           ptr(&c)));
        tu_check_tensor(&c, ref, "unary op without B");
        free(ref);
        udnnDestroyOpTensorDescriptor(od);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- validation of the tensor ops ----------------------------------------------------- */

static const int vdims[4] = {2, 3, 4, 5};

START_TEST(test_set_tensor_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor y;
        tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        udnnTensorDescriptor_t unset, i64;
        tu_ok(udnnCreateTensorDescriptor(&unset));
        i64 = tu_packed_desc(UDNN_DATA_INT64, 4, vdims);
        const float v = 1.0f;
        static const char fn[] = "udnnSetTensor";
        tu_assert_fails(udnnSetTensor(NULL, y.desc, ptr(&y), &v), UDNN_STATUS_BAD_PARAM, fn,
                        "handle");
        tu_assert_fails(udnnSetTensor(h, NULL, ptr(&y), &v), UDNN_STATUS_BAD_PARAM, fn, "yDesc");
        tu_assert_fails(udnnSetTensor(h, unset, ptr(&y), &v), UDNN_STATUS_BAD_PARAM, fn,
                        "yDesc", "not been set");
        tu_assert_fails(udnnSetTensor(h, y.desc, NULL, &v), UDNN_STATUS_BAD_PARAM, fn, "y ");
        tu_assert_fails(udnnSetTensor(h, y.desc, ptr(&y), NULL), UDNN_STATUS_BAD_PARAM, fn,
                        "valuePtr");
        tu_assert_fails(udnnSetTensor(h, i64, ptr(&y), &v), UDNN_STATUS_NOT_SUPPORTED, fn,
                        "yDesc", "s64");
        udnnDestroyTensorDescriptor(unset);
        udnnDestroyTensorDescriptor(i64);
        tu_tensor_free(&y);
    }
}
END_TEST

START_TEST(test_scale_tensor_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor y;
        tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        udnnTensorDescriptor_t i8 = tu_packed_desc(UDNN_DATA_INT8, 4, vdims), unset;
        tu_ok(udnnCreateTensorDescriptor(&unset));
        const float a = 2.0f;
        static const char fn[] = "udnnScaleTensor";
        tu_assert_fails(udnnScaleTensor(NULL, y.desc, ptr(&y), &a), UDNN_STATUS_BAD_PARAM, fn,
                        "handle");
        tu_assert_fails(udnnScaleTensor(h, NULL, ptr(&y), &a), UDNN_STATUS_BAD_PARAM, fn,
                        "yDesc");
        tu_assert_fails(udnnScaleTensor(h, unset, ptr(&y), &a), UDNN_STATUS_BAD_PARAM, fn,
                        "yDesc", "not been set");
        tu_assert_fails(udnnScaleTensor(h, y.desc, NULL, &a), UDNN_STATUS_BAD_PARAM, fn, "y ");
        tu_assert_fails(udnnScaleTensor(h, y.desc, ptr(&y), NULL), UDNN_STATUS_BAD_PARAM, fn,
                        "alpha");
        tu_assert_fails(udnnScaleTensor(h, i8, ptr(&y), &a), UDNN_STATUS_NOT_SUPPORTED, fn,
                        "yDesc", "s8");
        udnnDestroyTensorDescriptor(i8);
        udnnDestroyTensorDescriptor(unset);
        tu_tensor_free(&y);
    }
}
END_TEST

START_TEST(test_add_tensor_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, c;
        const int bias[4] = {1, 3, 1, 1};
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, bias, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        const int bad_dims[4] = {1, 3, 2, 1}, d3[3] = {1, 3, 1};
        udnnTensorDescriptor_t unset, a_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, bias),
                                      a_bad = tu_packed_desc(UDNN_DATA_FLOAT, 4, bad_dims),
                                      a_3d = tu_packed_desc(UDNN_DATA_FLOAT, 3, d3),
                                      c_i32 = tu_packed_desc(UDNN_DATA_INT32, 4, vdims),
                                      a_i32 = tu_packed_desc(UDNN_DATA_INT32, 4, bias);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        const float one = 1.0f;
        void *A = ptr(&a), *C = ptr(&c);
        static const char fn[] = "udnnAddTensor";
        tu_assert_fails(udnnAddTensor(NULL, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(udnnAddTensor(h, NULL, a.desc, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "alpha");
        tu_assert_fails(udnnAddTensor(h, &one, NULL, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "aDesc");
        tu_assert_fails(udnnAddTensor(h, &one, unset, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "aDesc", "not been set");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, NULL, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "A is NULL");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, A, NULL, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "beta");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, A, &one, NULL, C), UDNN_STATUS_BAD_PARAM,
                        fn, "cDesc");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, A, &one, unset, C), UDNN_STATUS_BAD_PARAM,
                        fn, "cDesc", "not been set");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, A, &one, c.desc, NULL),
                        UDNN_STATUS_BAD_PARAM, fn, "C is NULL");
        tu_assert_fails(udnnAddTensor(h, &one, a_i32, A, &one, c_i32, C),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "cDesc", "s32");
        tu_assert_fails(udnnAddTensor(h, &one, a_dbl, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "aDesc", "f64");
        tu_assert_fails(udnnAddTensor(h, &one, a_3d, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "aDesc", "3 dimensions");
        tu_assert_fails(udnnAddTensor(h, &one, a_bad, A, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "aDesc", "dimension 2", "4 or 1");
        tu_assert_fails(udnnAddTensor(h, &one, a.desc, C, &one, c.desc, C), UDNN_STATUS_BAD_PARAM,
                        fn, "C is the buffer of A", "cDesc");
        udnnTensorDescriptor_t ds[] = {unset, a_dbl, a_bad, a_3d, c_i32, a_i32};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

START_TEST(test_transform_tensor_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, vdims, TU_NHWC);
        const int other[4] = {2, 3, 5, 4};
        udnnTensorDescriptor_t unset, y_other = tu_packed_desc(UDNN_DATA_FLOAT, 4, other),
                                      i8 = tu_packed_desc(UDNN_DATA_INT8, 4, vdims),
                                      x_half = tu_packed_desc(UDNN_DATA_HALF, 4, vdims);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        const float one = 1.0f;
        void *X = ptr(&x), *Y = ptr(&y);
        static const char fn[] = "udnnTransformTensor";
        tu_assert_fails(udnnTransformTensor(NULL, &one, x.desc, X, &one, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(udnnTransformTensor(h, NULL, x.desc, X, &one, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "alpha");
        tu_assert_fails(udnnTransformTensor(h, &one, NULL, X, &one, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "xDesc");
        tu_assert_fails(udnnTransformTensor(h, &one, unset, X, &one, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "xDesc", "not been set");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, NULL, &one, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "x is NULL");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, NULL, y.desc, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "beta");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, NULL, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "yDesc");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, unset, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "yDesc", "not been set");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, y.desc, NULL),
                        UDNN_STATUS_BAD_PARAM, fn, "y is NULL");
        tu_assert_fails(udnnTransformTensor(h, &one, i8, X, &one, y.desc, Y),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "xDesc", "s8");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, i8, Y),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "yDesc", "s8");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, y_other, Y),
                        UDNN_STATUS_BAD_PARAM, fn, "yDesc", "dimension 2");
        tu_assert_fails(udnnTransformTensor(h, &one, x.desc, X, &one, y.desc, X),
                        UDNN_STATUS_BAD_PARAM, fn, "y is the buffer of x", "yDesc");
        tu_assert_fails(udnnTransformTensor(h, &one, x_half, X, &one, x.desc, X),
                        UDNN_STATUS_BAD_PARAM, fn, "y is the buffer of x", "yDesc");
        udnnTensorDescriptor_t ds[] = {unset, y_other, i8, x_half};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

START_TEST(test_op_tensor_descriptor)
{
    udnnOpTensorDescriptor_t od;
    tu_ok(udnnCreateOpTensorDescriptor(&od));
    static const char set[] = "udnnSetOpTensorDescriptor", get[] = "udnnGetOpTensorDescriptor";
    tu_assert_fails(udnnGetOpTensorDescriptor(od, NULL, NULL, NULL), UDNN_STATUS_BAD_PARAM, get,
                    "opTensorDesc", "not been set");
    for (int op = 0; op <= UDNN_OP_TENSOR_NOT; op++)
        for (int comp = 0; comp < 2; comp++)
            for (int nan = 0; nan < 2; nan++) {
                const udnnDataType_t ct = comp ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
                tu_ok(udnnSetOpTensorDescriptor(od, (udnnOpTensorOp_t)op, ct,
                                                (udnnNanPropagation_t)nan));
                udnnOpTensorOp_t o;
                udnnDataType_t t;
                udnnNanPropagation_t n;
                tu_ok(udnnGetOpTensorDescriptor(od, &o, &t, &n));
                ck_assert_int_eq(o, op);
                ck_assert_int_eq(t, ct);
                ck_assert_int_eq(n, nan);
            }
    tu_assert_fails(udnnCreateOpTensorDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateOpTensorDescriptor", "opTensorDesc");
    tu_assert_fails(udnnSetOpTensorDescriptor(NULL, UDNN_OP_TENSOR_ADD, UDNN_DATA_FLOAT,
                                              UDNN_PROPAGATE_NAN),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorDesc");
    tu_assert_fails(udnnSetOpTensorDescriptor(od, (udnnOpTensorOp_t)6, UDNN_DATA_FLOAT,
                                              UDNN_PROPAGATE_NAN),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorOp");
    tu_assert_fails(udnnSetOpTensorDescriptor(od, (udnnOpTensorOp_t)-1, UDNN_DATA_FLOAT,
                                              UDNN_PROPAGATE_NAN),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorOp");
    tu_assert_fails(udnnSetOpTensorDescriptor(od, UDNN_OP_TENSOR_ADD, UDNN_DATA_HALF,
                                              UDNN_PROPAGATE_NAN),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorCompType");
    tu_assert_fails(udnnSetOpTensorDescriptor(od, UDNN_OP_TENSOR_ADD, UDNN_DATA_INT32,
                                              UDNN_PROPAGATE_NAN),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorCompType");
    tu_assert_fails(udnnSetOpTensorDescriptor(od, UDNN_OP_TENSOR_ADD, UDNN_DATA_FLOAT,
                                              (udnnNanPropagation_t)2),
                    UDNN_STATUS_BAD_PARAM, set, "opTensorNanOpt");
    /* a failed Set keeps what was there */
    udnnOpTensorOp_t o;
    tu_ok(udnnGetOpTensorDescriptor(od, &o, NULL, NULL));
    ck_assert_int_eq(o, UDNN_OP_TENSOR_NOT);
    tu_assert_fails(udnnGetOpTensorDescriptor(NULL, &o, NULL, NULL), UDNN_STATUS_BAD_PARAM, get,
                    "opTensorDesc");
    tu_ok(udnnDestroyOpTensorDescriptor(od));
    tu_ok(udnnDestroyOpTensorDescriptor(NULL));
}
END_TEST

START_TEST(test_op_tensor_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        const int bias[4] = {1, 3, 1, 1};
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 4, bias, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, vdims, TU_NCHW);
        const int bad_b[4] = {1, 2, 1, 1}, d3[3] = {2, 3, 4}, bad_a[4] = {2, 3, 4, 1};
        udnnTensorDescriptor_t unset, b_bad = tu_packed_desc(UDNN_DATA_FLOAT, 4, bad_b),
                                      b_3d = tu_packed_desc(UDNN_DATA_FLOAT, 3, d3),
                                      b_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, bias),
                                      a_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, vdims),
                                      a_bcast = tu_packed_desc(UDNN_DATA_FLOAT, 4, bad_a),
                                      i32 = tu_packed_desc(UDNN_DATA_INT32, 4, vdims),
                                      dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, vdims);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        udnnOpTensorDescriptor_t od = mk_op(UDNN_OP_TENSOR_ADD, UDNN_DATA_FLOAT), od_unset;
        tu_ok(udnnCreateOpTensorDescriptor(&od_unset));
        const float one = 1.0f;
        void *A = ptr(&a), *B = ptr(&b), *C = ptr(&c);
        static const char fn[] = "udnnOpTensor";
#define OPT(handle_, od_, a1, ad, ap, a2, bd, bp, be, cd, cp) \
    udnnOpTensor(handle_, od_, a1, ad, ap, a2, bd, bp, be, cd, cp)
        tu_assert_fails(OPT(NULL, od, &one, a.desc, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(OPT(h, NULL, &one, a.desc, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "opTensorDesc");
        tu_assert_fails(OPT(h, od_unset, &one, a.desc, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "opTensorDesc", "not been set");
        tu_assert_fails(OPT(h, od, NULL, a.desc, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "alpha1");
        tu_assert_fails(OPT(h, od, &one, NULL, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc");
        tu_assert_fails(OPT(h, od, &one, unset, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc", "not been set");
        tu_assert_fails(OPT(h, od, &one, a.desc, NULL, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "A is NULL");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, NULL, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "alpha2");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, NULL, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, unset, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc", "not been set");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, NULL, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "B is NULL");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, B, NULL, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "beta");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, B, &one, NULL, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, B, &one, unset, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc", "not been set");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, B, &one, c.desc, NULL),
                        UDNN_STATUS_BAD_PARAM, fn, "C is NULL");
        tu_assert_fails(OPT(h, od, &one, i32, A, &one, i32, B, &one, i32, C),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "cDesc", "s32");
        tu_assert_fails(OPT(h, od, &one, a_dbl, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc", "f64");
        tu_assert_fails(OPT(h, od, &one, a_bcast, A, &one, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc", "dimension 3");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b_dbl, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc", "f64");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b_3d, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc", "3 dimensions");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b_bad, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc", "dimension 1", "3 or 1");
        tu_assert_fails(OPT(h, od, &one, dbl, A, &one, dbl, B, &one, dbl, C),
                        UDNN_STATUS_BAD_PARAM, fn, "opTensorDesc", "DOUBLE");
        tu_assert_fails(OPT(h, od, &one, a.desc, A, &one, b.desc, B, &one, c.desc, B),
                        UDNN_STATUS_BAD_PARAM, fn, "C is the buffer of B", "bDesc");
        udnnTensorDescriptor_t a_nhwc;
        tu_ok(udnnCreateTensorDescriptor(&a_nhwc));
        tu_ok(udnnSetTensorNdDescriptorEx(a_nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 4, vdims));
        tu_assert_fails(OPT(h, od, &one, a_nhwc, A, &one, b.desc, B, &one, c.desc, A),
                        UDNN_STATUS_BAD_PARAM, fn, "C is the buffer of A", "aDesc");
#undef OPT
        udnnTensorDescriptor_t ds[] = {unset, b_bad, b_3d, b_dbl, a_dbl, a_bcast, i32, dbl, a_nhwc};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        udnnDestroyOpTensorDescriptor(od);
        udnnDestroyOpTensorDescriptor(od_unset);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- the reduce descriptor ------------------------------------------------------------ */

START_TEST(test_reduce_descriptor_roundtrip)
{
    const udnnReduceTensorOp_t op = (udnnReduceTensorOp_t)_i;
    const int indexed = op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
                        op == UDNN_REDUCE_TENSOR_AMAX;
    udnnReduceTensorDescriptor_t rd;
    tu_ok(udnnCreateReduceTensorDescriptor(&rd));
    for (int comp = 0; comp < 2; comp++)
        for (int nan = 0; nan < 2; nan++)
            for (int ind = 0; ind <= indexed; ind++)
                for (int it = UDNN_32BIT_INDICES; it <= UDNN_8BIT_INDICES; it++) {
                    const udnnDataType_t ct = comp ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
                    tu_ok(udnnSetReduceTensorDescriptor(rd, op, ct, (udnnNanPropagation_t)nan,
                                                        (udnnReduceTensorIndices_t)ind,
                                                        (udnnIndicesType_t)it));
                    udnnReduceTensorOp_t o;
                    udnnDataType_t t;
                    udnnNanPropagation_t n;
                    udnnReduceTensorIndices_t i;
                    udnnIndicesType_t ty;
                    tu_ok(udnnGetReduceTensorDescriptor(rd, &o, &t, &n, &i, &ty));
                    ck_assert_int_eq(o, op);
                    ck_assert_int_eq(t, ct);
                    ck_assert_int_eq(n, nan);
                    ck_assert_int_eq(i, ind);
                    ck_assert_int_eq(ty, it);
                }
    if (!indexed)
        tu_assert_fails(udnnSetReduceTensorDescriptor(rd, op, UDNN_DATA_FLOAT,
                                                      UDNN_PROPAGATE_NAN,
                                                      UDNN_REDUCE_TENSOR_FLATTENED_INDICES,
                                                      UDNN_32BIT_INDICES),
                        UDNN_STATUS_BAD_PARAM, "udnnSetReduceTensorDescriptor",
                        "reduceTensorIndices", "MIN, MAX and AMAX");
    tu_ok(udnnDestroyReduceTensorDescriptor(rd));
}
END_TEST

START_TEST(test_reduce_descriptor_rejects)
{
    static const char set[] = "udnnSetReduceTensorDescriptor",
                      get[] = "udnnGetReduceTensorDescriptor";
    udnnReduceTensorDescriptor_t rd;
    tu_assert_fails(udnnCreateReduceTensorDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateReduceTensorDescriptor", "reduceTensorDesc");
    tu_ok(udnnCreateReduceTensorDescriptor(&rd));
    tu_assert_fails(udnnGetReduceTensorDescriptor(rd, NULL, NULL, NULL, NULL, NULL),
                    UDNN_STATUS_BAD_PARAM, get, "reduceTensorDesc", "not been set");
    tu_assert_fails(udnnGetReduceTensorDescriptor(NULL, NULL, NULL, NULL, NULL, NULL),
                    UDNN_STATUS_BAD_PARAM, get, "reduceTensorDesc");
#define SETR(d, op, ct, nan, ind, it)                                                    \
    udnnSetReduceTensorDescriptor(d, (udnnReduceTensorOp_t)(op), (udnnDataType_t)(ct),   \
                                  (udnnNanPropagation_t)(nan),                           \
                                  (udnnReduceTensorIndices_t)(ind), (udnnIndicesType_t)(it))
    tu_ok(SETR(rd, UDNN_REDUCE_TENSOR_AMAX, UDNN_DATA_FLOAT, 0, 1, 0));
    tu_assert_fails(SETR(NULL, 0, UDNN_DATA_FLOAT, 0, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorDesc");
    tu_assert_fails(SETR(rd, 9, UDNN_DATA_FLOAT, 0, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorOp");
    tu_assert_fails(SETR(rd, -1, UDNN_DATA_FLOAT, 0, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorOp");
    tu_assert_fails(SETR(rd, 0, UDNN_DATA_HALF, 0, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorCompType");
    tu_assert_fails(SETR(rd, 0, UDNN_DATA_BFLOAT16, 0, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorCompType");
    tu_assert_fails(SETR(rd, 0, UDNN_DATA_FLOAT, 2, 0, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorNanOpt");
    tu_assert_fails(SETR(rd, 2, UDNN_DATA_FLOAT, 0, 2, 0), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorIndices");
    tu_assert_fails(SETR(rd, 2, UDNN_DATA_FLOAT, 0, 1, 4), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorIndicesType");
    tu_assert_fails(SETR(rd, 2, UDNN_DATA_FLOAT, 0, 1, -1), UDNN_STATUS_BAD_PARAM, set,
                    "reduceTensorIndicesType");
    tu_assert_fails(SETR(rd, UDNN_REDUCE_TENSOR_NORM2, UDNN_DATA_FLOAT, 0, 1, 0),
                    UDNN_STATUS_BAD_PARAM, set, "reduceTensorIndices", "FLATTENED");
#undef SETR
    udnnReduceTensorOp_t o;
    tu_ok(udnnGetReduceTensorDescriptor(rd, &o, NULL, NULL, NULL, NULL));
    ck_assert_int_eq(o, UDNN_REDUCE_TENSOR_AMAX);
    tu_ok(udnnDestroyReduceTensorDescriptor(rd));
    tu_ok(udnnDestroyReduceTensorDescriptor(NULL));
}
END_TEST

/* ---- the LRN descriptor ----------------------------------------------------------------- */

START_TEST(test_lrn_descriptor)
{
    udnnLRNDescriptor_t ld;
    tu_ok(udnnCreateLRNDescriptor(&ld));
    unsigned n;
    double alpha, beta, k;
    tu_ok(udnnGetLRNDescriptor(ld, &n, &alpha, &beta, &k));
    ck_assert_uint_eq(n, 5);
    ck_assert_double_eq(alpha, 1e-4);
    ck_assert_double_eq(beta, 0.75);
    ck_assert_double_eq(k, 2.0);
    tu_ok(udnnSetLRNDescriptor(ld, UDNN_LRN_MIN_N, -0.5, UDNN_LRN_MIN_BETA, UDNN_LRN_MIN_K));
    tu_ok(udnnGetLRNDescriptor(ld, &n, &alpha, &beta, &k));
    ck_assert_uint_eq(n, UDNN_LRN_MIN_N);
    ck_assert_double_eq(alpha, -0.5);
    ck_assert_double_eq(beta, UDNN_LRN_MIN_BETA);
    ck_assert_double_eq(k, UDNN_LRN_MIN_K);
    tu_ok(udnnSetLRNDescriptor(ld, UDNN_LRN_MAX_N, 3.0, 2.5, 7.0));
    tu_ok(udnnGetLRNDescriptor(ld, &n, NULL, NULL, NULL));
    ck_assert_uint_eq(n, UDNN_LRN_MAX_N);
    tu_ok(udnnDestroyLRNDescriptor(ld));
    tu_ok(udnnDestroyLRNDescriptor(NULL));
}
END_TEST

START_TEST(test_lrn_descriptor_rejects)
{
    static const char set[] = "udnnSetLRNDescriptor";
    udnnLRNDescriptor_t ld;
    tu_assert_fails(udnnCreateLRNDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateLRNDescriptor", "normDesc");
    tu_ok(udnnCreateLRNDescriptor(&ld));
    tu_assert_fails(udnnSetLRNDescriptor(NULL, 5, 1e-4, 0.75, 2), UDNN_STATUS_BAD_PARAM, set,
                    "normDesc");
    tu_assert_fails(udnnSetLRNDescriptor(ld, UDNN_LRN_MIN_N - 1, 1e-4, 0.75, 2),
                    UDNN_STATUS_BAD_PARAM, set, "lrnN");
    tu_assert_fails(udnnSetLRNDescriptor(ld, UDNN_LRN_MAX_N + 1, 1e-4, 0.75, 2),
                    UDNN_STATUS_BAD_PARAM, set, "lrnN");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, INFINITY, 0.75, 2), UDNN_STATUS_BAD_PARAM, set,
                    "lrnAlpha");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, NAN, 0.75, 2), UDNN_STATUS_BAD_PARAM, set,
                    "lrnAlpha");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, UDNN_LRN_MIN_BETA / 2, 2),
                    UDNN_STATUS_BAD_PARAM, set, "lrnBeta");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, NAN, 2), UDNN_STATUS_BAD_PARAM, set,
                    "lrnBeta");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, INFINITY, 2), UDNN_STATUS_BAD_PARAM, set,
                    "lrnBeta");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, 0.75, UDNN_LRN_MIN_K / 2),
                    UDNN_STATUS_BAD_PARAM, set, "lrnK");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, 0.75, NAN), UDNN_STATUS_BAD_PARAM, set,
                    "lrnK");
    tu_assert_fails(udnnSetLRNDescriptor(ld, 5, 1e-4, 0.75, INFINITY), UDNN_STATUS_BAD_PARAM,
                    set, "lrnK");
    tu_assert_fails(udnnGetLRNDescriptor(NULL, NULL, NULL, NULL, NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnGetLRNDescriptor", "normDesc");
    unsigned n;
    double k;
    tu_ok(udnnGetLRNDescriptor(ld, &n, NULL, NULL, &k)); /* failed Sets changed nothing */
    ck_assert_uint_eq(n, 5);
    ck_assert_double_eq(k, 2.0);
    tu_ok(udnnDestroyLRNDescriptor(ld));
}
END_TEST

/* ---- dropout ---------------------------------------------------------------------------- */

START_TEST(test_dropout_sizes)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        size_t bytes = 0;
        tu_ok(udnnDropoutGetStatesSize(h, &bytes));
        ck_assert_uint_eq(bytes, 16);
        for (int s = 0; s < N_SHAPES; s++)
            for (int t = 0; t < 4; t++) {
                tu_tensor x; /* strided: the mask counts elements, not the span */
                tu_tensor_init(&x, h, tu_float_types[t], shapes[s].nb, shapes[s].dims,
                               TU_STRIDED);
                tu_ok(udnnDropoutGetReserveSpaceSize(x.desc, &bytes));
                ck_assert_uint_eq(bytes, (size_t)x.count);
                tu_tensor_free(&x);
            }
    }
}
END_TEST

START_TEST(test_dropout_descriptor)
{
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnDropoutDescriptor_t dd;
        tu_ok(udnnCreateDropoutDescriptor(&dd));
        void *states = NULL;
        tu_ok(udnnMalloc(h, &states, 32));
        const unsigned long long seed = ((unsigned long long)tu_int(1, 1 << 30) << 32) | 12345u;
        tu_ok(udnnSetDropoutDescriptor(dd, h, 0.25f, states, 32, seed));
        uint64_t st[2] = {0, 99};
        tu_ok(udnnMemcpy(h, st, states, sizeof st, UDNN_MEMCPY_DEVICE_TO_HOST));
        ck_assert_uint_eq(st[0], seed);
        ck_assert_uint_eq(st[1], 0);

        float p = 0;
        void *got = NULL;
        unsigned long long s = 0;
        tu_ok(udnnGetDropoutDescriptor(dd, h, &p, &got, &s));
        ck_assert_float_eq(p, 0.25f);
        ck_assert_ptr_eq(got, states);
        ck_assert_uint_eq(s, seed);

        /* Restore keeps the states, e.g. a call counter already advanced */
        st[1] = 7;
        tu_ok(udnnMemcpy(h, states, st, sizeof st, UDNN_MEMCPY_HOST_TO_DEVICE));
        tu_ok(udnnRestoreDropoutDescriptor(dd, h, 0.5f, states, 16, seed + 1));
        uint64_t after[2];
        tu_ok(udnnMemcpy(h, after, states, sizeof after, UDNN_MEMCPY_DEVICE_TO_HOST));
        ck_assert_uint_eq(after[0], seed);
        ck_assert_uint_eq(after[1], 7);
        tu_ok(udnnGetDropoutDescriptor(dd, h, &p, NULL, &s));
        ck_assert_float_eq(p, 0.5f);
        ck_assert_uint_eq(s, seed + 1);

        /* dropout 0 needs no states */
        tu_ok(udnnSetDropoutDescriptor(dd, h, 0.0f, NULL, 0, seed));
        tu_ok(udnnGetDropoutDescriptor(dd, h, &p, &got, NULL));
        ck_assert_float_eq(p, 0.0f);
        ck_assert_ptr_null(got);
        udnnFree(h, states);
        tu_ok(udnnDestroyDropoutDescriptor(dd));
    }
}
END_TEST

START_TEST(test_dropout_rejects)
{
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnDropoutDescriptor_t dd;
        tu_ok(udnnCreateDropoutDescriptor(&dd));
        void *states = NULL;
        tu_ok(udnnMalloc(h, &states, 16));
        static const char *const fns[2] = {"udnnSetDropoutDescriptor",
                                           "udnnRestoreDropoutDescriptor"};
        for (int r = 0; r < 2; r++) {
            udnnStatus_t (*set)(udnnDropoutDescriptor_t, udnnHandle_t, float, void *, size_t,
                                unsigned long long) =
                r ? udnnRestoreDropoutDescriptor : udnnSetDropoutDescriptor;
            const char *fn = fns[r];
            tu_assert_fails(set(NULL, h, 0.5f, states, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "dropoutDesc");
            tu_assert_fails(set(dd, NULL, 0.5f, states, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "handle");
            tu_assert_fails(set(dd, h, -0.1f, states, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "dropout is");
            tu_assert_fails(set(dd, h, 1.0f, states, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "dropout is");
            tu_assert_fails(set(dd, h, NAN, states, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "dropout is");
            tu_assert_fails(set(dd, h, 0.5f, NULL, 16, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "states is NULL");
            tu_assert_fails(set(dd, h, 0.5f, states, 15, 1), UDNN_STATUS_BAD_PARAM, fn,
                            "stateSizeInBytes");
        }
        static const char get[] = "udnnGetDropoutDescriptor";
        float p;
        tu_assert_fails(udnnGetDropoutDescriptor(dd, h, &p, NULL, NULL), UDNN_STATUS_BAD_PARAM,
                        get, "dropoutDesc", "not been set");
        tu_assert_fails(udnnGetDropoutDescriptor(NULL, h, &p, NULL, NULL), UDNN_STATUS_BAD_PARAM,
                        get, "dropoutDesc");
        tu_ok(udnnSetDropoutDescriptor(dd, h, 0.5f, states, 16, 1));
        tu_assert_fails(udnnGetDropoutDescriptor(dd, NULL, &p, NULL, NULL), UDNN_STATUS_BAD_PARAM,
                        get, "handle");
        size_t bytes;
        tu_assert_fails(udnnDropoutGetStatesSize(NULL, &bytes), UDNN_STATUS_BAD_PARAM,
                        "udnnDropoutGetStatesSize", "handle");
        tu_assert_fails(udnnDropoutGetStatesSize(h, NULL), UDNN_STATUS_BAD_PARAM,
                        "udnnDropoutGetStatesSize", "sizeInBytes");
        udnnTensorDescriptor_t unset, x = tu_packed_desc(UDNN_DATA_FLOAT, 4, vdims);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        static const char rs[] = "udnnDropoutGetReserveSpaceSize";
        tu_assert_fails(udnnDropoutGetReserveSpaceSize(NULL, &bytes), UDNN_STATUS_BAD_PARAM, rs,
                        "xdesc");
        tu_assert_fails(udnnDropoutGetReserveSpaceSize(unset, &bytes), UDNN_STATUS_BAD_PARAM, rs,
                        "xdesc", "not been set");
        tu_assert_fails(udnnDropoutGetReserveSpaceSize(x, NULL), UDNN_STATUS_BAD_PARAM, rs,
                        "sizeInBytes");
        tu_assert_fails(udnnCreateDropoutDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                        "udnnCreateDropoutDescriptor", "dropoutDesc");
        udnnDestroyTensorDescriptor(unset);
        udnnDestroyTensorDescriptor(x);
        udnnFree(h, states);
        tu_ok(udnnDestroyDropoutDescriptor(dd));
        tu_ok(udnnDestroyDropoutDescriptor(NULL));
    }
}
END_TEST

/* ---- DeriveBNTensorDescriptor ----------------------------------------------------------- */

/* _i is mode * 4 + type; x is NHWC 4-D and 5-D, the result packed NCHW. */
START_TEST(test_derive_bn)
{
    const udnnBatchNormMode_t mode = (udnnBatchNormMode_t)(_i / 4);
    const udnnDataType_t t = tu_float_types[_i % 4];
    const udnnDataType_t want_t =
        t == UDNN_DATA_HALF || t == UDNN_DATA_BFLOAT16 ? UDNN_DATA_FLOAT : t;
    const int x4[4] = {2, 5, 3, 4}, x5[5] = {2, 3, 2, 3, 4};
    const int *xs[2] = {x4, x5};
    for (int r = 0; r < 2; r++) {
        const int nb = 4 + r;
        udnnTensorDescriptor_t x, bn;
        tu_ok(udnnCreateTensorDescriptor(&x));
        tu_ok(udnnCreateTensorDescriptor(&bn));
        tu_ok(udnnSetTensorNdDescriptorEx(x, UDNN_TENSOR_NHWC, t, nb, xs[r]));
        tu_ok(udnnDeriveBNTensorDescriptor(bn, x, mode));
        udnnDataType_t got_t;
        int got_nb, dims[UDNN_DIM_MAX], strides[UDNN_DIM_MAX];
        tu_ok(udnnGetTensorNdDescriptor(bn, UDNN_DIM_MAX, &got_t, &got_nb, dims, strides));
        ck_assert_int_eq(got_t, want_t);
        ck_assert_int_eq(got_nb, nb);
        int want[UDNN_DIM_MAX];
        want[0] = 1;
        want[1] = xs[r][1];
        for (int i = 2; i < nb; i++) want[i] = mode == UDNN_BATCHNORM_PER_ACTIVATION ? xs[r][i] : 1;
        int stride = 1;
        for (int i = nb - 1; i >= 0; i--) {
            ck_assert_int_eq(dims[i], want[i]);
            ck_assert_int_eq(strides[i], stride);
            stride *= want[i];
        }
        udnnDestroyTensorDescriptor(x);
        udnnDestroyTensorDescriptor(bn);
    }
}
END_TEST

START_TEST(test_derive_bn_rejects)
{
    static const char fn[] = "udnnDeriveBNTensorDescriptor";
    const int d3[3] = {2, 3, 4}, d6[6] = {2, 3, 2, 2, 2, 2};
    udnnTensorDescriptor_t bn, unset, x = tu_packed_desc(UDNN_DATA_FLOAT, 4, vdims),
                                      x3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, d3),
                                      x6 = tu_packed_desc(UDNN_DATA_FLOAT, 6, d6),
                                      xi8 = tu_packed_desc(UDNN_DATA_INT8, 4, vdims);
    tu_ok(udnnCreateTensorDescriptor(&bn));
    tu_ok(udnnCreateTensorDescriptor(&unset));
    tu_assert_fails(udnnDeriveBNTensorDescriptor(NULL, x, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_BAD_PARAM, fn, "derivedBnDesc");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, NULL, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_BAD_PARAM, fn, "xDesc");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, unset, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_BAD_PARAM, fn, "xDesc", "not been set");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, x3, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_BAD_PARAM, fn, "xDesc", "3 dimensions");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, x6, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_BAD_PARAM, fn, "xDesc", "6 dimensions");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, xi8, UDNN_BATCHNORM_SPATIAL),
                    UDNN_STATUS_NOT_SUPPORTED, fn, "xDesc", "s8");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, x, (udnnBatchNormMode_t)3),
                    UDNN_STATUS_BAD_PARAM, fn, "mode");
    tu_assert_fails(udnnDeriveBNTensorDescriptor(bn, x, (udnnBatchNormMode_t)-1),
                    UDNN_STATUS_BAD_PARAM, fn, "mode");
    /* failures leave the output unset */
    size_t bytes;
    tu_assert_fails(udnnGetTensorSizeInBytes(bn, &bytes), UDNN_STATUS_BAD_PARAM, "not been set");
    udnnTensorDescriptor_t ds[] = {bn, unset, x, x3, x6, xi8};
    for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tensor_ops");

    TCase *tiny = tcase_create("hand_computed");
    tcase_add_test(tiny, test_set_tensor_tiny);
    tcase_add_test(tiny, test_scale_tensor_tiny);
    tcase_add_test(tiny, test_add_tensor_tiny_bias);
    tcase_add_test(tiny, test_transform_tensor_tiny_nchw_to_nhwc);
    tcase_add_loop_test(tiny, test_op_tensor_tiny, 0, 6);
    tcase_add_loop_test(tiny, test_op_tensor_nan_propagation, 0, 4);
    suite_add_tcase(s, tiny);

    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 30);
    tcase_add_loop_test(ops, test_set_tensor, 0, 6);
    tcase_add_loop_test(ops, test_scale_tensor, 0, 4);
    tcase_add_loop_test(ops, test_add_tensor, 0, 4 * N_ADD_FORMS);
    tcase_add_loop_test(ops, test_add_tensor_in_place, 0, 4);
    tcase_add_loop_test(ops, test_transform_tensor, 0, 16);
    tcase_add_loop_test(ops, test_transform_tensor_in_place, 0, 4);
    tcase_add_loop_test(ops, test_op_tensor, 0, 6 * 4);
    tcase_add_loop_test(ops, test_op_tensor_in_place, 0, 6);
    tcase_add_loop_test(ops, test_op_tensor_unary_without_b, 0, 2);
    suite_add_tcase(s, ops);

    TCase *val = tcase_create("validation");
    tcase_add_test(val, test_set_tensor_rejects);
    tcase_add_test(val, test_scale_tensor_rejects);
    tcase_add_test(val, test_add_tensor_rejects);
    tcase_add_test(val, test_transform_tensor_rejects);
    tcase_add_test(val, test_op_tensor_descriptor);
    tcase_add_test(val, test_op_tensor_rejects);
    suite_add_tcase(s, val);

    TCase *desc = tcase_create("descriptors");
    tcase_add_loop_test(desc, test_reduce_descriptor_roundtrip, 0, 9);
    tcase_add_test(desc, test_reduce_descriptor_rejects);
    tcase_add_test(desc, test_lrn_descriptor);
    tcase_add_test(desc, test_lrn_descriptor_rejects);
    tcase_add_test(desc, test_dropout_sizes);
    tcase_add_test(desc, test_dropout_descriptor);
    tcase_add_test(desc, test_dropout_rejects);
    tcase_add_loop_test(desc, test_derive_bn, 0, 12);
    tcase_add_test(desc, test_derive_bn_rejects);
    suite_add_tcase(s, desc);

    return tu_run_suite(s);
}
