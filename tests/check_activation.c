/* check_activation.c - the activation descriptor, ActivationForward and
 * ActivationBackward on every backend: every mode x type x layout against
 * an expectation computed here in double, hand-computed values, alpha/beta
 * blending, NaN rules, in-place runs, finite differences in DOUBLE, and
 * every validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

/* ---- the modes and an independent expectation ---------------------------- */

typedef struct {
    udnnActivationMode_t mode;
    double coef, swish_beta;
    const char *name;
} act_mode;

static const act_mode modes[] = {
    {UDNN_ACTIVATION_SIGMOID, 0.0, 1.0, "sigmoid"},
    {UDNN_ACTIVATION_RELU, 0.0, 1.0, "relu"},
    {UDNN_ACTIVATION_TANH, 0.0, 1.0, "tanh"},
    {UDNN_ACTIVATION_CLIPPED_RELU, 2.5, 1.0, "clipped_relu"},
    {UDNN_ACTIVATION_ELU, 0.7, 1.0, "elu"},
    {UDNN_ACTIVATION_IDENTITY, 0.0, 1.0, "identity"},
    {UDNN_ACTIVATION_SWISH, 0.0, 1.7, "swish"},
    {UDNN_ACTIVATION_LEAKY_RELU, 0.1, 1.0, "leaky_relu"},
    {UDNN_ACTIVATION_GELU, 0.0, 1.0, "gelu"},
    {UDNN_ACTIVATION_GELU_TANH, 0.0, 1.0, "gelu_tanh"},
    {UDNN_ACTIVATION_SOFTPLUS, 0.0, 1.0, "softplus"},
    {UDNN_ACTIVATION_MISH, 0.0, 1.0, "mish"},
    {UDNN_ACTIVATION_HARDSWISH, 0.0, 1.0, "hardswish"},
};
#define N_MODES ((int)(sizeof modes / sizeof *modes))
#define N_TYPES 4
#define N_LAYOUTS 3

static const double gelu_k = 0.7978845608028654, gelu_c = 0.044715;

/* Written apart from cpu/ref, in other forms where the math allows. */
static double expect_act(const act_mode *m, double x)
{
    switch (m->mode) {
    case UDNN_ACTIVATION_SIGMOID: return 0.5 * (1.0 + tanh(0.5 * x));
    case UDNN_ACTIVATION_RELU: return fmax(x, 0.0);
    case UDNN_ACTIVATION_TANH: return tanh(x);
    case UDNN_ACTIVATION_CLIPPED_RELU: return x < 0 ? 0.0 : x > m->coef ? m->coef : x;
    case UDNN_ACTIVATION_ELU: return x >= 0 ? x : m->coef * (exp(x) - 1.0);
    case UDNN_ACTIVATION_IDENTITY: return x;
    case UDNN_ACTIVATION_SWISH: return x / (1.0 + exp(-m->swish_beta * x));
    case UDNN_ACTIVATION_LEAKY_RELU: return x >= 0 ? x : m->coef * x;
    case UDNN_ACTIVATION_GELU: return 0.5 * x * erfc(-x / sqrt(2.0));
    case UDNN_ACTIVATION_GELU_TANH:
        return 0.5 * x * (1.0 + tanh(gelu_k * (x + gelu_c * x * x * x)));
    case UDNN_ACTIVATION_SOFTPLUS: return log(1.0 + exp(x));
    case UDNN_ACTIVATION_MISH: return x * tanh(log(1.0 + exp(x)));
    case UDNN_ACTIVATION_HARDSWISH: return x <= -3 ? 0.0 : x >= 3 ? x : x * (x + 3.0) / 6.0;
    }
    return NAN;
}

static double expect_grad(const act_mode *m, double x)
{
    double s;
    switch (m->mode) {
    case UDNN_ACTIVATION_SIGMOID: s = 1.0 / (1.0 + exp(-x)); return s * (1.0 - s);
    case UDNN_ACTIVATION_RELU: return x > 0 ? 1.0 : 0.0;
    case UDNN_ACTIVATION_TANH: return 1.0 / (cosh(x) * cosh(x));
    case UDNN_ACTIVATION_CLIPPED_RELU: return x > 0 && x < m->coef ? 1.0 : 0.0;
    case UDNN_ACTIVATION_ELU: return x > 0 ? 1.0 : m->coef * exp(x);
    case UDNN_ACTIVATION_IDENTITY: return 1.0;
    case UDNN_ACTIVATION_SWISH:
        s = 1.0 / (1.0 + exp(-m->swish_beta * x));
        return s * (1.0 + m->swish_beta * x * (1.0 - s));
    case UDNN_ACTIVATION_LEAKY_RELU: return x > 0 ? 1.0 : m->coef;
    case UDNN_ACTIVATION_GELU:
        return 0.5 * erfc(-x / sqrt(2.0)) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
    case UDNN_ACTIVATION_GELU_TANH: {
        double u = gelu_k * (x + gelu_c * x * x * x), t = tanh(u);
        return 0.5 * (1.0 + t) +
               0.5 * x * gelu_k * (1.0 + 3.0 * gelu_c * x * x) / (cosh(u) * cosh(u));
    }
    case UDNN_ACTIVATION_SOFTPLUS: return 1.0 / (1.0 + exp(-x));
    case UDNN_ACTIVATION_MISH: {
        double sp = log(1.0 + exp(x)), t = tanh(sp);
        return t + x * (1.0 - t * t) / (1.0 + exp(-x));
    }
    case UDNN_ACTIVATION_HARDSWISH: return x < -3 ? 0.0 : x > 3 ? 1.0 : (2.0 * x + 3.0) / 6.0;
    }
    return NAN;
}

/* Points where the derivative jumps; samples keep 0.05 away from them. */
static int near_kink(const act_mode *m, double x)
{
    switch (m->mode) {
    case UDNN_ACTIVATION_RELU:
    case UDNN_ACTIVATION_LEAKY_RELU:
    case UDNN_ACTIVATION_ELU: return fabs(x) < 0.05;
    case UDNN_ACTIVATION_CLIPPED_RELU: return fabs(x) < 0.05 || fabs(x - m->coef) < 0.05;
    case UDNN_ACTIVATION_HARDSWISH: return fabs(x + 3.0) < 0.05 || fabs(x - 3.0) < 0.05;
    default: return 0;
    }
}

/* Uniform in [-4, 4] away from kinks; element 0 is 2.25, where every mode
 * and derivative is nonzero, so no reference is all zero. */
static void fill_x(tu_tensor *x, const act_mode *m)
{
    for (int64_t i = 0; i < x->count; i++) {
        double v;
        do v = tu_uniform(-4.0, 4.0);
        while (near_kink(m, v));
        tu_set(x, i, v);
    }
    tu_set(x, 0, 2.25);
    tu_upload(x);
}

/* ---- helpers --------------------------------------------------------------- */

static udnnActivationDescriptor_t make_act(const act_mode *m, udnnNanPropagation_t nan)
{
    udnnActivationDescriptor_t d;
    tu_ok(udnnCreateActivationDescriptor(&d));
    tu_ok(udnnSetActivationDescriptor(d, m->mode, nan, m->coef));
    tu_ok(udnnSetActivationDescriptorSwishBeta(d, m->swish_beta));
    return d;
}

static udnnStatus_t run_fwd(udnnHandle_t h, udnnActivationDescriptor_t d, double alpha,
                            double beta, tu_tensor *x, tu_tensor *y)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnActivationForward(h, d, &a, x->desc, tu_buf_ptr(&x->buf), &b, y->desc,
                                 tu_buf_ptr(&y->buf));
}

static udnnStatus_t run_bwd(udnnHandle_t h, udnnActivationDescriptor_t d, double alpha,
                            tu_tensor *y, tu_tensor *dy, tu_tensor *x, double beta,
                            tu_tensor *dx)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnActivationBackward(h, d, &a, y->desc, tu_buf_ptr(&y->buf), dy->desc,
                                  tu_buf_ptr(&dy->buf), x->desc, tu_buf_ptr(&x->buf), &b,
                                  dx->desc, tu_buf_ptr(&dx->buf));
}

/* y = act(x) as the caller of the backward pass would hold it. */
static void set_y_of_x(tu_tensor *y, const tu_tensor *x, const act_mode *m)
{
    for (int64_t i = 0; i < x->count; i++) tu_set(y, i, expect_act(m, tu_get(x, i)));
    tu_upload(y);
}

/* Shapes: C = 1, 3, 5; odd H and W; 4-D and 5-D. */
static const int shapes[][6] = {
    {4, 2, 3, 5, 7, 0}, {4, 1, 1, 3, 3, 0}, {5, 2, 5, 3, 2, 3}, {4, 3, 5, 1, 9, 0}};
#define N_SHAPES ((int)(sizeof shapes / sizeof *shapes))

static void describe(char *buf, size_t n, udnnBackend_t be, const act_mode *m,
                     udnnDataType_t t, tu_layout l, int shape)
{
    snprintf(buf, n, "%s %s %s %s shape %d", tu_backend_name(be), m->name, tu_dtype_name(t),
             tu_layout_name(l), shape);
}

/* ---- forward and backward over mode x type x layout ---------------------------- */

START_TEST(test_fwd_modes)
{
    tu_seed_fresh();
    const act_mode *m = &modes[_i % N_MODES];
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_NOT_PROPAGATE_NAN);
        for (int s = 0; s < N_SHAPES; s++) {
            tu_tensor x, y;
            tu_tensor_init(&x, h, t, shapes[s][0], &shapes[s][1], l);
            tu_tensor_init(&y, h, t, shapes[s][0], &shapes[s][1], l);
            fill_x(&x, m);
            double *ref = malloc((size_t)x.count * sizeof *ref);
            for (int64_t i = 0; i < x.count; i++) ref[i] = expect_act(m, tu_get(&x, i));
            /* y holds NaN poison and beta is 0: it must not be read */
            tu_ok(run_fwd(h, d, 1.0, 0.0, &x, &y));
            char what[128];
            describe(what, sizeof what, bk, m, t, l, s);
            tu_check_tensor(&y, ref, what);
            free(ref);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
        }
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

START_TEST(test_bwd_modes)
{
    tu_seed_fresh();
    const act_mode *m = &modes[_i % N_MODES];
    udnnDataType_t t = tu_float_types[(_i / N_MODES) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_NOT_PROPAGATE_NAN);
        for (int s = 0; s < N_SHAPES; s++) {
            tu_tensor x, y, dy, dx;
            tu_tensor_init(&x, h, t, shapes[s][0], &shapes[s][1], l);
            tu_tensor_init(&y, h, t, shapes[s][0], &shapes[s][1], l);
            tu_tensor_init(&dy, h, t, shapes[s][0], &shapes[s][1], l);
            tu_tensor_init(&dx, h, t, shapes[s][0], &shapes[s][1], l);
            fill_x(&x, m);
            set_y_of_x(&y, &x, m);
            tu_fill_uniform(&dy, -1.0, 1.0);
            double *ref = malloc((size_t)x.count * sizeof *ref);
            for (int64_t i = 0; i < x.count; i++)
                ref[i] = expect_grad(m, tu_get(&x, i)) * tu_get(&dy, i);
            tu_ok(run_bwd(h, d, 1.0, &y, &dy, &x, 0.0, &dx));
            char what[128];
            describe(what, sizeof what, bk, m, t, l, s);
            tu_check_tensor(&dx, ref, what);
            free(ref);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            tu_tensor_free(&dy);
            tu_tensor_free(&dx);
        }
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* alpha and beta other than 1 and 0: out = alpha * op + beta * out. */
START_TEST(test_alpha_beta)
{
    tu_seed_fresh();
    const act_mode *m = &modes[_i % N_MODES];
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    const double alpha = 0.75, beta = -1.5;
    static const int dims[4] = {2, 3, 3, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_NOT_PROPAGATE_NAN);
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, l);
        tu_tensor_init(&y, h, t, 4, dims, l);
        tu_tensor_init(&dy, h, t, 4, dims, l);
        tu_tensor_init(&dx, h, t, 4, dims, l);
        fill_x(&x, m);
        tu_fill_uniform(&dy, -1.0, 1.0);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        char what[128];
        describe(what, sizeof what, bk, m, t, l, 0);

        for (int64_t i = 0; i < x.count; i++) ref[i] = expect_act(m, tu_get(&x, i));
        tu_blend_drawn(ref, alpha, beta, &y);
        tu_ok(run_fwd(h, d, alpha, beta, &x, &y));
        tu_check_tensor(&y, ref, what);

        set_y_of_x(&y, &x, m);
        for (int64_t i = 0; i < x.count; i++)
            ref[i] = expect_grad(m, tu_get(&x, i)) * tu_get(&dy, i);
        tu_blend_drawn(ref, alpha, beta, &dx);
        tu_ok(run_bwd(h, d, alpha, &y, &dy, &x, beta, &dx));
        tu_check_tensor(&dx, ref, what);

        free(ref);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* beta = 0 with NaN in the output and alpha = 2: the NaN is never read. */
START_TEST(test_beta_zero_ignores_nan)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i];
    const act_mode *m = &modes[1];
    static const int dims[4] = {1, 3, 4, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_PROPAGATE_NAN);
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
        fill_x(&x, m);
        tu_fill_uniform(&dy, -1.0, 1.0);
        for (int64_t i = 0; i < y.count; i++) {
            tu_set(&y, i, NAN);
            tu_set(&dx, i, NAN);
        }
        tu_upload(&y);
        tu_upload(&dx);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        for (int64_t i = 0; i < x.count; i++) ref[i] = 2.0 * expect_act(m, tu_get(&x, i));
        tu_ok(run_fwd(h, d, 2.0, 0.0, &x, &y));
        tu_check_tensor(&y, ref, "forward, beta 0 over NaN");
        for (int64_t i = 0; i < x.count; i++)
            ref[i] = 2.0 * expect_grad(m, tu_get(&x, i)) * tu_get(&dy, i);
        tu_ok(run_bwd(h, d, 2.0, &y, &dy, &x, 0.0, &dx));
        tu_check_tensor(&dx, ref, "backward, beta 0 over NaN");
        free(ref);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* ---- hand-computed values ----------------------------------------------------------- */

typedef struct {
    act_mode m;
    int n;
    double x[4], y[4], grad[4];
} hand_case;

static const hand_case hand[] = {
    {{UDNN_ACTIVATION_RELU, 0, 1, "relu"}, 4, {-2, -0.5, 0, 3}, {0, 0, 0, 3}, {0, 0, 0, 1}},
    {{UDNN_ACTIVATION_SIGMOID, 0, 1, "sigmoid"}, 2, {0, 1}, {0.5, 0.7310585786300049},
     {0.25, 0.19661193324148185}},
    {{UDNN_ACTIVATION_TANH, 0, 1, "tanh"}, 2, {0, 1}, {0, 0.7615941559557649},
     {1, 0.41997434161402614}},
    {{UDNN_ACTIVATION_CLIPPED_RELU, 2, 1, "clipped_relu"}, 3, {-1, 1, 5}, {0, 1, 2}, {0, 1, 0}},
    {{UDNN_ACTIVATION_ELU, 1, 1, "elu"}, 2, {-1, 2}, {-0.6321205588285577, 2},
     {0.36787944117144233, 1}},
    {{UDNN_ACTIVATION_IDENTITY, 0, 1, "identity"}, 2, {-1.5, 2}, {-1.5, 2}, {1, 1}},
    {{UDNN_ACTIVATION_SWISH, 0, 2, "swish"}, 2, {1, 0}, {0.8807970779778823, 0},
     {1.0907842487848955, 0.5}},
    {{UDNN_ACTIVATION_LEAKY_RELU, 0.1, 1, "leaky_relu"}, 2, {-2, 3}, {-0.2, 3}, {0.1, 1}},
    {{UDNN_ACTIVATION_GELU, 0, 1, "gelu"}, 2, {1, -1}, {0.8413447460685429, -0.15865525393145707},
     {1.0833154705876864, -0.08331547058768629}},
    {{UDNN_ACTIVATION_GELU_TANH, 0, 1, "gelu_tanh"}, 1, {1}, {0.8411919906082768},
     {1.0829640838457826}},
    {{UDNN_ACTIVATION_SOFTPLUS, 0, 1, "softplus"}, 1, {0}, {0.6931471805599453}, {0.5}},
    {{UDNN_ACTIVATION_MISH, 0, 1, "mish"}, 1, {1}, {0.8650983882673103}, {1.0490362200997922}},
    {{UDNN_ACTIVATION_HARDSWISH, 0, 1, "hardswish"}, 3, {1, -4, 4}, {2.0 / 3.0, 0, 4},
     {5.0 / 6.0, 0, 1}},
};
#define N_HAND ((int)(sizeof hand / sizeof *hand))

START_TEST(test_hand_values)
{
    const hand_case *c = &hand[_i % N_HAND];
    udnnDataType_t t = tu_float_types[_i / N_HAND];
    const int dims[4] = {1, 1, 1, c->n};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(&c->m, UDNN_NOT_PROPAGATE_NAN);
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
        for (int i = 0; i < c->n; i++) {
            tu_set(&x, i, c->x[i]);
            tu_set(&dy, i, 1.0);
        }
        tu_upload(&x);
        tu_upload(&dy);
        tu_ok(run_fwd(h, d, 1.0, 0.0, &x, &y));
        tu_check_tensor(&y, c->y, c->m.name);
        tu_ok(run_bwd(h, d, 1.0, &y, &dy, &x, 0.0, &dx));
        tu_check_tensor(&dx, c->grad, c->m.name);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* ---- NaN rules -------------------------------------------------------------------------- */

/* The ReLU family maps NaN to 0 (and its gradient to 0) unless told to
 * propagate; other modes always propagate. */
START_TEST(test_nan_propagation)
{
    static const act_mode relu_family[] = {{UDNN_ACTIVATION_RELU, 0, 1, "relu"},
                                           {UDNN_ACTIVATION_CLIPPED_RELU, 2, 1, "clipped"},
                                           {UDNN_ACTIVATION_LEAKY_RELU, 0.1, 1, "leaky"},
                                           {UDNN_ACTIVATION_SIGMOID, 0, 1, "sigmoid"}};
    const act_mode *m = &relu_family[_i % 4];
    udnnNanPropagation_t nan = (_i / 4) % 2 ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN;
    udnnDataType_t t = tu_float_types[_i / 8];
    int expect_nan = nan == UDNN_PROPAGATE_NAN || m->mode == UDNN_ACTIVATION_SIGMOID;
    static const int dims[4] = {1, 1, 1, 3};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, nan);
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
        tu_set(&x, 0, 1.0);
        tu_set(&x, 1, NAN);
        tu_set(&x, 2, -1.0);
        tu_upload(&x);
        for (int i = 0; i < 3; i++) tu_set(&dy, i, 1.0);
        tu_upload(&dy);
        tu_ok(run_fwd(h, d, 1.0, 0.0, &x, &y));
        tu_ok(run_bwd(h, d, 1.0, &y, &dy, &x, 0.0, &dx));
        tu_download(&y);
        tu_download(&dx);
        ck_assert(tu_buf_guards_intact(&y.buf) && tu_buf_guards_intact(&dx.buf));
        ck_assert_msg(isfinite(tu_get(&y, 0)) && isfinite(tu_get(&y, 2)), "%s", m->name);
        if (expect_nan) {
            ck_assert_msg(isnan(tu_get(&y, 1)), "%s: act(NaN) should be NaN", m->name);
            ck_assert_msg(isnan(tu_get(&dx, 1)), "%s: act'(NaN) should be NaN", m->name);
        } else {
            ck_assert_msg(tu_get(&y, 1) == 0.0, "%s: act(NaN) is %g, not 0", m->name,
                          tu_get(&y, 1));
            ck_assert_msg(tu_get(&dx, 1) == 0.0, "%s: act'(NaN) is %g, not 0", m->name,
                          tu_get(&dx, 1));
        }
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* ---- in place ------------------------------------------------------------------------------- */

START_TEST(test_in_place)
{
    tu_seed_fresh();
    const act_mode *m = &modes[_i % N_MODES];
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    static const int dims[4] = {2, 3, 3, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_NOT_PROPAGATE_NAN);
        tu_tensor x, y, dy;
        tu_tensor_init(&x, h, t, 4, dims, l);
        tu_tensor_init(&y, h, t, 4, dims, l);
        tu_tensor_init(&dy, h, t, 4, dims, l);
        fill_x(&x, m);
        set_y_of_x(&y, &x, m);
        tu_fill_uniform(&dy, -1.0, 1.0);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        /* dx over dy */
        for (int64_t i = 0; i < x.count; i++)
            ref[i] = expect_grad(m, tu_get(&x, i)) * tu_get(&dy, i);
        tu_ok(run_bwd(h, d, 1.0, &y, &dy, &x, 0.0, &dy));
        tu_check_tensor(&dy, ref, "backward in place");
        /* y over x */
        for (int64_t i = 0; i < x.count; i++) ref[i] = expect_act(m, tu_get(&x, i));
        tu_ok(run_fwd(h, d, 1.0, 0.0, &x, &x));
        tu_check_tensor(&x, ref, "forward in place");
        free(ref);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* ---- finite differences in DOUBLE ------------------------------------------------------------ */

/* L = sum(dy . act(x)), computed through ActivationForward. */
static double loss(udnnHandle_t h, udnnActivationDescriptor_t d, tu_tensor *x, tu_tensor *y,
                   const double *dy)
{
    tu_upload(x);
    tu_ok(run_fwd(h, d, 1.0, 0.0, x, y));
    tu_download(y);
    return tu_dot(y, dy);
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    const act_mode *m = &modes[_i % N_MODES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    const udnnDataType_t t = UDNN_DATA_DOUBLE;
    static const int dims[4] = {2, 3, 3, 5};
    const double step = 1e-6;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnActivationDescriptor_t d = make_act(m, UDNN_NOT_PROPAGATE_NAN);
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, l);
        tu_tensor_init(&y, h, t, 4, dims, l);
        tu_tensor_init(&dy, h, t, 4, dims, l);
        tu_tensor_init(&dx, h, t, 4, dims, l);
        fill_x(&x, m);
        tu_fill_uniform(&dy, -1.0, 1.0);
        double *dyv = malloc((size_t)x.count * sizeof *dyv);
        double *num = malloc((size_t)x.count * sizeof *num);
        tu_values(&dy, dyv);
        tu_ok(run_fwd(h, d, 1.0, 0.0, &x, &y));
        tu_ok(run_bwd(h, d, 1.0, &y, &dy, &x, 0.0, &dx));
        for (int64_t i = 0; i < x.count; i++) {
            double xi = tu_get(&x, i);
            tu_set(&x, i, xi + step);
            double up = loss(h, d, &x, &y, dyv);
            tu_set(&x, i, xi - step);
            double down = loss(h, d, &x, &y, dyv);
            tu_set(&x, i, xi);
            num[i] = (up - down) / (2.0 * step);
        }
        tu_download(&dx);
        double *ana = malloc((size_t)x.count * sizeof *ana);
        tu_values(&dx, ana);
        double err = tu_rel_error(ana, num, x.count);
        ck_assert_msg(err < 1e-6, "%s %s: backward vs finite differences: rel err %g (seed %llu)",
                      tu_backend_name(bk), m->name, err, (unsigned long long)tu_seed_used());
        free(dyv);
        free(num);
        free(ana);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
        udnnDestroyActivationDescriptor(d);
    }
}
END_TEST

/* ---- the descriptor -------------------------------------------------------------------------- */

START_TEST(test_desc_defaults)
{
    udnnActivationDescriptor_t d;
    tu_ok(udnnCreateActivationDescriptor(&d));
    udnnActivationMode_t mode;
    udnnNanPropagation_t nan;
    double coef = -1, swish = -1;
    tu_ok(udnnGetActivationDescriptor(d, &mode, &nan, &coef));
    tu_ok(udnnGetActivationDescriptorSwishBeta(d, &swish));
    ck_assert_int_eq(mode, UDNN_ACTIVATION_RELU);
    ck_assert_int_eq(nan, UDNN_NOT_PROPAGATE_NAN);
    ck_assert(coef == 0.0);
    ck_assert(swish == 1.0);
    /* any output of the getter may be NULL */
    tu_ok(udnnGetActivationDescriptor(d, NULL, NULL, NULL));
    tu_ok(udnnDestroyActivationDescriptor(d));
    tu_ok(udnnDestroyActivationDescriptor(NULL));
}
END_TEST

START_TEST(test_desc_round_trip)
{
    const act_mode *m = &modes[_i];
    udnnActivationDescriptor_t d;
    tu_ok(udnnCreateActivationDescriptor(&d));
    tu_ok(udnnSetActivationDescriptor(d, m->mode, UDNN_PROPAGATE_NAN, m->coef));
    tu_ok(udnnSetActivationDescriptorSwishBeta(d, -0.5));
    /* a rejected Set leaves the descriptor as it was */
    ck_assert_int_eq(udnnSetActivationDescriptor(d, (udnnActivationMode_t)42,
                                                 UDNN_NOT_PROPAGATE_NAN, 9.0),
                     UDNN_STATUS_BAD_PARAM);
    ck_assert_int_eq(udnnSetActivationDescriptorSwishBeta(d, NAN), UDNN_STATUS_BAD_PARAM);
    udnnActivationMode_t mode;
    udnnNanPropagation_t nan;
    double coef, swish;
    tu_ok(udnnGetActivationDescriptor(d, &mode, &nan, &coef));
    tu_ok(udnnGetActivationDescriptorSwishBeta(d, &swish));
    ck_assert_int_eq(mode, m->mode);
    ck_assert_int_eq(nan, UDNN_PROPAGATE_NAN);
    ck_assert(coef == m->coef);
    ck_assert(swish == -0.5);
    udnnDestroyActivationDescriptor(d);
}
END_TEST

/* Clip 0 and +inf are accepted: all zeros, and plain RELU. */
START_TEST(test_desc_clip_edges)
{
    udnnActivationDescriptor_t d;
    tu_ok(udnnCreateActivationDescriptor(&d));
    tu_ok(udnnSetActivationDescriptor(d, UDNN_ACTIVATION_CLIPPED_RELU, UDNN_NOT_PROPAGATE_NAN,
                                      0.0));
    tu_ok(udnnSetActivationDescriptor(d, UDNN_ACTIVATION_CLIPPED_RELU, UDNN_NOT_PROPAGATE_NAN,
                                      INFINITY));
    /* modes that ignore coef take any value */
    tu_ok(udnnSetActivationDescriptor(d, UDNN_ACTIVATION_TANH, UDNN_NOT_PROPAGATE_NAN, NAN));
    udnnDestroyActivationDescriptor(d);
}
END_TEST

START_TEST(test_desc_bad)
{
    udnnActivationDescriptor_t d;
    tu_ok(udnnCreateActivationDescriptor(&d));
    double v;
    const char *fn = NULL, *arg = NULL;
    udnnStatus_t st;
    switch (_i) {
    case 0:
        st = udnnCreateActivationDescriptor(NULL);
        fn = "udnnCreateActivationDescriptor";
        arg = "activationDesc";
        break;
    case 1:
        st = udnnSetActivationDescriptor(NULL, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0);
        fn = "udnnSetActivationDescriptor";
        arg = "activationDesc";
        break;
    case 2:
        st = udnnSetActivationDescriptor(d, (udnnActivationMode_t)7, UDNN_NOT_PROPAGATE_NAN, 0);
        fn = "udnnSetActivationDescriptor";
        arg = "mode 7";
        break;
    case 3:
        st = udnnSetActivationDescriptor(d, (udnnActivationMode_t)106, UDNN_NOT_PROPAGATE_NAN,
                                         0);
        fn = "udnnSetActivationDescriptor";
        arg = "mode 106";
        break;
    case 4:
        st = udnnSetActivationDescriptor(d, (udnnActivationMode_t)-1, UDNN_NOT_PROPAGATE_NAN, 0);
        fn = "udnnSetActivationDescriptor";
        arg = "mode -1";
        break;
    case 5:
        st = udnnSetActivationDescriptor(d, UDNN_ACTIVATION_RELU, (udnnNanPropagation_t)2, 0);
        fn = "udnnSetActivationDescriptor";
        arg = "reluNanOpt";
        break;
    case 6:
        st = udnnSetActivationDescriptor(d, UDNN_ACTIVATION_CLIPPED_RELU,
                                         UDNN_NOT_PROPAGATE_NAN, -1.0);
        fn = "udnnSetActivationDescriptor";
        arg = "coef";
        break;
    case 7:
        st = udnnSetActivationDescriptor(d, UDNN_ACTIVATION_CLIPPED_RELU,
                                         UDNN_NOT_PROPAGATE_NAN, NAN);
        fn = "udnnSetActivationDescriptor";
        arg = "coef";
        break;
    case 8:
        st = udnnSetActivationDescriptor(d, UDNN_ACTIVATION_ELU, UDNN_NOT_PROPAGATE_NAN,
                                         INFINITY);
        fn = "udnnSetActivationDescriptor";
        arg = "coef";
        break;
    case 9:
        st = udnnSetActivationDescriptor(d, UDNN_ACTIVATION_LEAKY_RELU, UDNN_NOT_PROPAGATE_NAN,
                                         NAN);
        fn = "udnnSetActivationDescriptor";
        arg = "coef";
        break;
    case 10:
        st = udnnGetActivationDescriptor(NULL, NULL, NULL, NULL);
        fn = "udnnGetActivationDescriptor";
        arg = "activationDesc";
        break;
    case 11:
        st = udnnSetActivationDescriptorSwishBeta(NULL, 1.0);
        fn = "udnnSetActivationDescriptorSwishBeta";
        arg = "activationDesc";
        break;
    case 12:
        st = udnnSetActivationDescriptorSwishBeta(d, NAN);
        fn = "udnnSetActivationDescriptorSwishBeta";
        arg = "swish_beta";
        break;
    case 13:
        st = udnnSetActivationDescriptorSwishBeta(d, -INFINITY);
        fn = "udnnSetActivationDescriptorSwishBeta";
        arg = "swish_beta";
        break;
    case 14:
        st = udnnGetActivationDescriptorSwishBeta(NULL, &v);
        fn = "udnnGetActivationDescriptorSwishBeta";
        arg = "activationDesc";
        break;
    default:
        st = udnnGetActivationDescriptorSwishBeta(d, NULL);
        fn = "udnnGetActivationDescriptorSwishBeta";
        arg = "swish_beta";
        break;
    }
    tu_assert_fails(st, UDNN_STATUS_BAD_PARAM, fn, arg);
    udnnDestroyActivationDescriptor(d);
}
END_TEST
#define N_DESC_BAD 16

/* ---- op validation ------------------------------------------------------------------------------
 */

/* Buffers and descriptors for calls that must fail before touching data. */
typedef struct {
    udnnHandle_t h;
    udnnActivationDescriptor_t act;
    tu_tensor a, b, c, d; /* f32 2x3x4x5, packed */
    udnnTensorDescriptor_t unset, s8, f64, other_dims, other_rank, other_strides;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 3, 5, 4}, rank5[5] = {2, 3, 4, 5, 1};
    f->h = tu_handle(be);
    tu_ok(udnnCreateActivationDescriptor(&f->act));
    tu_tensor_init(&f->a, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->b, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->c, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->d, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_fill_uniform(&f->a, -1, 1);
    tu_fill_uniform(&f->b, -1, 1);
    tu_fill_uniform(&f->c, -1, 1);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->other_rank = tu_packed_desc(UDNN_DATA_FLOAT, 5, rank5);
    f->other_strides = tu_packed_desc(UDNN_DATA_FLOAT, 4, dims);
    tu_ok(udnnSetTensor4dDescriptor(f->other_strides, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 4,
                                    5));
}

static void fixture_free(fixture *f)
{
    tu_tensor_free(&f->a);
    tu_tensor_free(&f->b);
    tu_tensor_free(&f->c);
    tu_tensor_free(&f->d);
    udnnDestroyTensorDescriptor(f->unset);
    udnnDestroyTensorDescriptor(f->s8);
    udnnDestroyTensorDescriptor(f->f64);
    udnnDestroyTensorDescriptor(f->other_dims);
    udnnDestroyTensorDescriptor(f->other_rank);
    udnnDestroyTensorDescriptor(f->other_strides);
    udnnDestroyActivationDescriptor(f->act);
    udnnDestroy(f->h);
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

static const bad_expect fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},        {UDNN_STATUS_BAD_PARAM, "activationDesc"},
    {UDNN_STATUS_BAD_PARAM, "alpha"},         {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not"}, {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta"},          {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not"}, {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc"},     {UDNN_STATUS_BAD_PARAM, "yDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
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
        udnnActivationDescriptor_t act = f.act;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = f.a.desc, yd = f.d.desc;
        const void *x = tu_buf_ptr(&f.a.buf);
        void *y = tu_buf_ptr(&f.d.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: act = NULL; break;
        case 2: alpha = NULL; break;
        case 3: xd = NULL; break;
        case 4: xd = f.unset; break;
        case 5: x = NULL; break;
        case 6: beta = NULL; break;
        case 7: yd = NULL; break;
        case 8: yd = f.unset; break;
        case 9: y = NULL; break;
        case 10: xd = yd = f.s8; break;
        case 11: yd = f.f64; break;
        case 12: yd = f.other_dims; break;
        case 13: yd = f.other_rank; break;
        case 14: yd = f.other_strides, y = tu_buf_ptr(&f.a.buf); break;
        }
        udnnStatus_t st = udnnActivationForward(h, act, alpha, xd, x, beta, yd, y);
        tu_assert_fails(st, fwd_bad[_i].status, "udnnActivationForward", fwd_bad[_i].arg);
        tu_assert_untouched(&f.d.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},
    {UDNN_STATUS_BAD_PARAM, "activationDesc"},
    {UDNN_STATUS_BAD_PARAM, "alpha"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
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
        udnnActivationDescriptor_t act = f.act;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t yd = f.a.desc, dyd = f.b.desc, xd = f.c.desc, dxd = f.d.desc;
        const void *y = tu_buf_ptr(&f.a.buf), *dy = tu_buf_ptr(&f.b.buf),
                   *x = tu_buf_ptr(&f.c.buf);
        void *dx = tu_buf_ptr(&f.d.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: act = NULL; break;
        case 2: alpha = NULL; break;
        case 3: yd = NULL; break;
        case 4: yd = f.unset; break;
        case 5: y = NULL; break;
        case 6: dyd = NULL; break;
        case 7: dyd = f.unset; break;
        case 8: dy = NULL; break;
        case 9: xd = NULL; break;
        case 10: xd = f.unset; break;
        case 11: x = NULL; break;
        case 12: beta = NULL; break;
        case 13: dxd = NULL; break;
        case 14: dxd = f.unset; break;
        case 15: dx = NULL; break;
        case 16: yd = dyd = xd = dxd = f.s8; break;
        case 17: yd = f.f64; break;
        case 18: dyd = f.f64; break;
        case 19: dxd = f.f64; break;
        case 20: yd = f.other_dims; break;
        case 21: dyd = f.other_dims; break;
        case 22: dxd = f.other_rank; break;
        case 23: dxd = f.other_strides, dx = tu_buf_ptr(&f.b.buf); break;
        }
        udnnStatus_t st = udnnActivationBackward(h, act, alpha, yd, y, dyd, dy, xd, x, beta,
                                                 dxd, dx);
        tu_assert_fails(st, bwd_bad[_i].status, "udnnActivationBackward", bwd_bad[_i].arg);
        tu_assert_untouched(&f.d.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("activation");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_fwd_modes, 0, N_MODES * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_bwd_modes, 0, N_MODES * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_alpha_beta, 0, N_MODES * N_TYPES);
    tcase_add_loop_test(ops, test_beta_zero_ignores_nan, 0, N_TYPES);
    tcase_add_loop_test(ops, test_hand_values, 0, N_HAND * N_TYPES);
    tcase_add_loop_test(ops, test_nan_propagation, 0, 8 * N_TYPES);
    tcase_add_loop_test(ops, test_in_place, 0, N_MODES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_finite_differences, 0, N_MODES * N_LAYOUTS);
    suite_add_tcase(s, ops);

    TCase *desc = tcase_create("descriptor");
    tcase_add_test(desc, test_desc_defaults);
    tcase_add_loop_test(desc, test_desc_round_trip, 0, N_MODES);
    tcase_add_test(desc, test_desc_clip_edges);
    tcase_add_loop_test(desc, test_desc_bad, 0, N_DESC_BAD);
    suite_add_tcase(s, desc);

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_fwd_bad, 0, N_FWD_BAD);
    tcase_add_loop_test(bad, test_bwd_bad, 0, N_BWD_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
