/* check_fast_eltwise.c - the fast CPU solvers of activation, pooling,
 * softmax, the tensor ops, backward bias and batch norm (cpu/fast) against
 * the reference solvers (cpu/ref), run in one test on the same inputs.
 *
 * Every case runs the op three times from the same starting state: with
 * only the fast solvers enabled (UDNN_DISABLE_SOLVERS="ref_*", so a fast
 * solver that declined would fail the call) on one OpenMP thread, again on
 * two threads, and with only the reference ("fast_*"). The two fast runs
 * must agree bit for bit (each reduction belongs to one thread); the fast
 * and reference results must agree within FLOAT's tolerance, NaN for NaN,
 * with every element written and nothing written outside the elements
 * (guards, and the gaps of strided tensors). Shapes are the batch-64
 * tensors of the LeNet example and odd sizes on both sides of the
 * kernels' serial/parallel thresholds, with vector tails. Cases cover
 * alpha/beta (beta 0 with a poisoned output), in-place runs and NaNs.
 * The fast solvers are CPU solvers, so this suite runs on the CPU backend. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

/* ---- solver choice and threads --------------------------------------------------- */

static void only_fast(void)
{
    setenv("UDNN_DISABLE_SOLVERS", "ref_*", 1);
}

static void only_ref(void)
{
    setenv("UDNN_DISABLE_SOLVERS", "fast_*", 1);
}

/* Sets the OpenMP team size through libudnn's own OpenMP runtime, found at
 * run time so the suite needs no OpenMP flags; 0 when there is none. */
static int set_threads(int n)
{
    static void (*set_num_threads)(int);
    static int looked;
    if (!looked) {
        void *sym = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
        memcpy(&set_num_threads, &sym, sizeof sym);
        looked = 1;
    }
    if (set_num_threads == NULL) return 0;
    set_num_threads(n);
    return 1;
}

static udnnHandle_t cpu_handle(void)
{
    return tu_handle(UDNN_BACKEND_CPU);
}

/* ---- the fast-versus-reference driver ----------------------------------------------- */

#define MAX_OUTS 5

typedef struct {
    const char *what;
    udnnStatus_t (*run)(void *op);
    void *op;
    tu_tensor *outs[MAX_OUTS];
    int n_outs;
} fe_case;

/* Host bytes of every output, as they are before a run. */
typedef struct {
    unsigned char *bytes[MAX_OUTS];
} snapshot;

static void snap_take(const fe_case *c, snapshot *s)
{
    for (int k = 0; k < c->n_outs; k++) {
        s->bytes[k] = malloc(c->outs[k]->buf.bytes);
        ck_assert_ptr_nonnull(s->bytes[k]);
        memcpy(s->bytes[k], c->outs[k]->buf.host, c->outs[k]->buf.bytes);
    }
}

static void snap_restore(const fe_case *c, const snapshot *s)
{
    for (int k = 0; k < c->n_outs; k++) {
        memcpy(c->outs[k]->buf.host, s->bytes[k], c->outs[k]->buf.bytes);
        tu_buf_upload(&c->outs[k]->buf);
    }
}

static void snap_free(const fe_case *c, snapshot *s)
{
    for (int k = 0; k < c->n_outs; k++) free(s->bytes[k]);
}

static void run_ok(const fe_case *c, const char *who)
{
    udnnStatus_t st = c->run(c->op);
    if (st != UDNN_STATUS_SUCCESS) {
        char msg[1024];
        udnnGetLastErrorString(msg, sizeof msg);
        ck_abort_msg("%s (%s): status %d: %s", c->what, who, (int)st, msg);
    }
}

/* Downloads every output; asserts the guards and the bytes between
 * elements (strided layouts) are as before the run. */
static void collect(const fe_case *c, const snapshot *before, const char *who)
{
    for (int k = 0; k < c->n_outs; k++) {
        tu_tensor *t = c->outs[k];
        tu_download(t);
        ck_assert_msg(tu_buf_guards_intact(&t->buf), "%s (%s): output %d: write outside it",
                      c->what, who, k);
        const size_t size = t->dtype == UDNN_DATA_DOUBLE ? 8 : t->dtype == UDNN_DATA_FLOAT ? 4 : 2;
        if ((size_t)t->count * size == t->buf.bytes) continue; /* no gaps */
        unsigned char *expect = malloc(t->buf.bytes);
        ck_assert_ptr_nonnull(expect);
        memcpy(expect, before->bytes[k], t->buf.bytes);
        for (int64_t i = 0; i < t->count; i++) {
            const size_t off = (size_t)tu_offset(t, i) * size;
            memcpy(expect + off, t->buf.host + off, size);
        }
        ck_assert_msg(memcmp(expect, t->buf.host, t->buf.bytes) == 0,
                      "%s (%s): output %d: a write between its elements", c->what, who, k);
        free(expect);
    }
}

/* got matches want: NaN where want is NaN (and only there: a NaN
 * elsewhere is an element not written), within tolerance elsewhere. */
static void expect_close(const char *what, int k, const tu_tensor *t, const double *got,
                         const double *want)
{
    double *g = malloc((size_t)t->count * sizeof *g), *w = malloc((size_t)t->count * sizeof *w);
    ck_assert(g != NULL && w != NULL);
    int64_t n = 0;
    for (int64_t i = 0; i < t->count; i++) {
        if (isnan(want[i]) || isnan(got[i])) {
            ck_assert_msg(isnan(want[i]) && isnan(got[i]),
                          "%s: output %d element %lld: fast %g, reference %g (seed %llu)", what,
                          k, (long long)i, got[i], want[i], (unsigned long long)tu_seed_used());
            continue;
        }
        g[n] = got[i];
        w[n++] = want[i];
    }
    int all_zero = 1;
    for (int64_t i = 0; i < n && all_zero; i++) all_zero = w[i] == 0.0;
    if (n > 0 && all_zero) {
        /* a zero reference (SetTensor 0) is matched exactly */
        for (int64_t i = 0; i < n; i++)
            ck_assert_msg(g[i] == 0.0, "%s: output %d element %lld is %g, not 0", what, k,
                          (long long)i, g[i]);
    } else if (n > 0) {
        double err = tu_rel_error(g, w, n);
        ck_assert_msg(err <= tu_tolerance(t->dtype),
                      "%s: output %d: relative error %.3g against the reference (seed %llu)",
                      what, k, err, (unsigned long long)tu_seed_used());
    }
    free(g);
    free(w);
}

/* The outputs' logical values after the last collect. */
static double *values_of(const tu_tensor *t)
{
    double *v = malloc((size_t)t->count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tu_values(t, v);
    return v;
}

static void fast_vs_ref(fe_case *c)
{
    snapshot start;
    snap_take(c, &start);
    double *fast[MAX_OUTS], *ref[MAX_OUTS];
    unsigned char *fast_bytes[MAX_OUTS];

    only_fast();
    int threaded = set_threads(1);
    snap_restore(c, &start);
    run_ok(c, "fast, 1 thread");
    collect(c, &start, "fast, 1 thread");
    for (int k = 0; k < c->n_outs; k++) {
        fast[k] = values_of(c->outs[k]);
        fast_bytes[k] = malloc(c->outs[k]->buf.bytes);
        ck_assert_ptr_nonnull(fast_bytes[k]);
        memcpy(fast_bytes[k], c->outs[k]->buf.host, c->outs[k]->buf.bytes);
    }
    if (threaded) {
        set_threads(2);
        snap_restore(c, &start);
        run_ok(c, "fast, 2 threads");
        collect(c, &start, "fast, 2 threads");
        for (int k = 0; k < c->n_outs; k++)
            ck_assert_msg(memcmp(fast_bytes[k], c->outs[k]->buf.host, c->outs[k]->buf.bytes) == 0,
                          "%s: output %d differs between 1 and 2 threads", c->what, k);
    }

    only_ref();
    snap_restore(c, &start);
    run_ok(c, "reference");
    collect(c, &start, "reference");
    for (int k = 0; k < c->n_outs; k++) ref[k] = values_of(c->outs[k]);
    unsetenv("UDNN_DISABLE_SOLVERS");

    for (int k = 0; k < c->n_outs; k++) {
        expect_close(c->what, k, c->outs[k], fast[k], ref[k]);
        free(fast[k]);
        free(ref[k]);
        free(fast_bytes[k]);
    }
    snap_free(c, &start);
}

/* ---- shared helpers -------------------------------------------------------------------- */

static const tu_layout dense_layouts[2] = {TU_NCHW, TU_NHWC};
static const tu_layout all_layouts[3] = {TU_NCHW, TU_NHWC, TU_STRIDED};

/* Puts NaN in about one element in 16 (never element 0). */
static void sprinkle_nan(tu_tensor *t)
{
    for (int64_t i = 1; i < t->count; i++)
        if (tu_int(0, 15) == 0) tu_set(t, i, NAN);
    tu_upload(t);
}

/* A FLOAT tensor of the given shape and layout. */
static tu_tensor *new_tensor(udnnHandle_t h, int nb, const int *dims, tu_layout l)
{
    tu_tensor *t = malloc(sizeof *t);
    ck_assert_ptr_nonnull(t);
    tu_tensor_init(t, h, UDNN_DATA_FLOAT, nb, dims, l);
    return t;
}

static void free_tensor(tu_tensor *t)
{
    tu_tensor_free(t);
    free(t);
}

/* ---- activation ------------------------------------------------------------------------ */

typedef struct {
    udnnActivationMode_t mode;
    double coef;
    const char *name;
} act_mode;

static const act_mode act_modes[] = {
    {UDNN_ACTIVATION_RELU, 0.0, "relu"},
    {UDNN_ACTIVATION_SIGMOID, 0.0, "sigmoid"},
    {UDNN_ACTIVATION_TANH, 0.0, "tanh"},
    {UDNN_ACTIVATION_CLIPPED_RELU, 2.5, "clipped_relu"},
    {UDNN_ACTIVATION_ELU, 0.7, "elu"},
    {UDNN_ACTIVATION_IDENTITY, 0.0, "identity"},
    {UDNN_ACTIVATION_SWISH, 0.0, "swish"},
    {UDNN_ACTIVATION_LEAKY_RELU, 0.1, "leaky_relu"},
    {UDNN_ACTIVATION_GELU, 0.0, "gelu"},
    {UDNN_ACTIVATION_GELU_TANH, 0.0, "gelu_tanh"},
    {UDNN_ACTIVATION_SOFTPLUS, 0.0, "softplus"},
    {UDNN_ACTIVATION_MISH, 0.0, "mish"},
    {UDNN_ACTIVATION_HARDSWISH, 0.0, "hardswish"},
};
#define N_ACT_MODES ((int)(sizeof act_modes / sizeof *act_modes))

static int relu_family(udnnActivationMode_t m)
{
    return m == UDNN_ACTIVATION_RELU || m == UDNN_ACTIVATION_CLIPPED_RELU ||
           m == UDNN_ACTIVATION_LEAKY_RELU;
}

typedef struct {
    udnnHandle_t h;
    udnnActivationDescriptor_t desc;
    double alpha, beta;
    tu_tensor *x, *y, *dy, *dx;
} act_op;

static udnnStatus_t act_fwd(void *v)
{
    act_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnActivationForward(o->h, o->desc, &a, o->x->desc, tu_buf_ptr(&o->x->buf), &b,
                                 o->y->desc, tu_buf_ptr(&o->y->buf));
}

static udnnStatus_t act_bwd(void *v)
{
    act_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnActivationBackward(o->h, o->desc, &a, o->y->desc, tu_buf_ptr(&o->y->buf),
                                  o->dy->desc, tu_buf_ptr(&o->dy->buf), o->x->desc,
                                  tu_buf_ptr(&o->x->buf), &b, o->dx->desc,
                                  tu_buf_ptr(&o->dx->buf));
}

/* Shapes: the network's conv1 output and FC1 output (RELU only: the
 * reference is slow on them), odd sizes above and below the parallel
 * threshold, and a 5-D one. */
static const int act_shapes[][6] = {
    {4, 64, 16, 28, 28, 0}, {4, 64, 128, 1, 1, 0}, {4, 7, 13, 29, 31, 0},
    {4, 3, 5, 37, 41, 0},   {5, 2, 3, 5, 7, 11},   {4, 1, 1, 1, 3, 0},
};
#define N_ACT_SHAPES ((int)(sizeof act_shapes / sizeof *act_shapes))

START_TEST(test_activation)
{
    tu_seed_fresh();
    const act_mode *m = &act_modes[_i % N_ACT_MODES];
    const tu_layout l = dense_layouts[_i / N_ACT_MODES];
    udnnHandle_t h = cpu_handle();
    /* the network's shapes for RELU in NCHW, the network's case */
    const int network = m->mode == UDNN_ACTIVATION_RELU && l == TU_NCHW;
    for (int s = network ? 0 : 2; s < N_ACT_SHAPES; s++) {
        const int nb = act_shapes[s][0], *dims = &act_shapes[s][1];
        /* 0-2 forward: plain (y poisoned), blended, in place (y is x);
         * 3-5 backward: plain, blended, in place (dx is dy); 6: NaNs in x,
         * forward and backward (the ReLU family, whose NaN rule is an
         * option: not propagated on odd shapes, propagated on even ones) */
        for (int variant = 0; variant < 7; variant++) {
            const int nan_case = variant == 6;
            if (nan_case && !relu_family(m->mode)) continue;
            /* the large shapes: plain runs, for the parallel path */
            int64_t count = 1;
            for (int i = 0; i < nb; i++) count *= dims[i];
            if (count > 60000 && s >= 2 && variant != 0 && variant != 3) continue;
            const int backward = variant >= 3 && variant <= 5;
            act_op o = {h, NULL, 1.0, 0.0, NULL, NULL, NULL, NULL};
            tu_ok(udnnCreateActivationDescriptor(&o.desc));
            tu_ok(udnnSetActivationDescriptor(o.desc, m->mode,
                                              nan_case && s % 2 == 0 ? UDNN_PROPAGATE_NAN
                                                                     : UDNN_NOT_PROPAGATE_NAN,
                                              m->coef));
            tu_ok(udnnSetActivationDescriptorSwishBeta(o.desc, 1.3));
            tu_tensor *owned[4];
            owned[0] = o.x = new_tensor(h, nb, dims, l);
            owned[1] = o.y = new_tensor(h, nb, dims, l);
            owned[2] = o.dy = new_tensor(h, nb, dims, l);
            owned[3] = o.dx = new_tensor(h, nb, dims, l);
            tu_fill_uniform(o.x, -4.0, 4.0);
            tu_set(o.x, 0, 2.25); /* every mode and derivative is nonzero there */
            tu_upload(o.x);
            if (nan_case) sprinkle_nan(o.x);
            if (backward) tu_fill_uniform(o.y, -1.0, 1.0); /* read by neither solver */
            tu_fill_uniform(o.dy, -1.0, 1.0);
            tu_tensor *out = backward ? o.dx : o.y;
            if (variant == 1 || variant == 4) {
                o.alpha = 0.75;
                o.beta = variant == 1 ? -0.5 : 2.0;
                tu_fill_uniform(out, -2.0, 2.0);
            } else if (variant == 2) {
                o.alpha = 1.25, o.beta = 0.5;
                out = o.y = o.x;
            } else if (variant == 5) {
                o.alpha = 1.0, o.beta = 0.25;
                out = o.dx = o.dy;
            }
            char what[160];
            snprintf(what, sizeof what, "act %s %s shape %d variant %d", m->name,
                     tu_layout_name(l), s, variant);
            fe_case c = {what, backward ? act_bwd : act_fwd, &o, {out}, 1};
            fast_vs_ref(&c);
            if (nan_case) {
                c.run = act_bwd;
                c.outs[0] = o.dx;
                fast_vs_ref(&c);
            }
            for (int k = 0; k < 4; k++) free_tensor(owned[k]);
            udnnDestroyActivationDescriptor(o.desc);
        }
    }
    udnnDestroy(h);
}
END_TEST

/* ---- pooling ----------------------------------------------------------------------------- */

typedef struct {
    int nb;
    int x[5];
    int window[3], pad[3], stride[3];
    const char *name;
} pool_geom;

static const pool_geom pool_geoms[] = {
    {4, {64, 16, 28, 28}, {2, 2}, {0, 0}, {2, 2}, "net pool1 2x2/2"},
    {4, {64, 32, 14, 14}, {2, 2}, {0, 0}, {2, 2}, "net pool2 2x2/2"},
    {4, {5, 7, 37, 41}, {3, 3}, {1, 1}, {2, 2}, "3x3/2 pad 1, odd"},
    {4, {3, 4, 17, 23}, {3, 2}, {1, 0}, {1, 1}, "3x2/1 overlapping"},
    {4, {2, 5, 20, 20}, {7, 7}, {3, 3}, {3, 3}, "7x7/3 pad 3"},
    {5, {2, 3, 9, 11, 13}, {3, 2, 3}, {1, 0, 1}, {2, 2, 1}, "3-D"},
};
#define N_POOL_GEOMS ((int)(sizeof pool_geoms / sizeof *pool_geoms))

static const udnnPoolingMode_t pool_modes[4] = {
    UDNN_POOLING_MAX, UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
    UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING, UDNN_POOLING_MAX_DETERMINISTIC};
static const char *const pool_mode_names[4] = {"max", "avg_incl", "avg_excl", "max_det"};

typedef struct {
    udnnHandle_t h;
    udnnPoolingDescriptor_t desc;
    double alpha, beta;
    tu_tensor *x, *y, *dy, *dx;
} pool_op;

static udnnStatus_t pool_fwd(void *v)
{
    pool_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnPoolingForward(o->h, o->desc, &a, o->x->desc, tu_buf_ptr(&o->x->buf), &b,
                              o->y->desc, tu_buf_ptr(&o->y->buf));
}

static udnnStatus_t pool_bwd(void *v)
{
    pool_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnPoolingBackward(o->h, o->desc, &a, o->y->desc, tu_buf_ptr(&o->y->buf), o->dy->desc,
                               tu_buf_ptr(&o->dy->buf), o->x->desc, tu_buf_ptr(&o->x->buf), &b,
                               o->dx->desc, tu_buf_ptr(&o->dx->buf));
}

START_TEST(test_pooling)
{
    tu_seed_fresh();
    const int mi = _i % 4;
    const pool_geom *g = &pool_geoms[(_i / 4) % N_POOL_GEOMS];
    const tu_layout l = all_layouts[_i / (4 * N_POOL_GEOMS)];
    const int is_max = pool_modes[mi] == UDNN_POOLING_MAX ||
                       pool_modes[mi] == UDNN_POOLING_MAX_DETERMINISTIC;
    udnnHandle_t h = cpu_handle();
    int ydims[5] = {g->x[0], g->x[1], 1, 1, 1};
    for (int i = 0; i < g->nb - 2; i++)
        ydims[2 + i] = 1 + (g->x[2 + i] + 2 * g->pad[i] - g->window[i]) / g->stride[i];
    /* 0: plain (outputs poisoned); 1: blended; 2: integer data (ties in
     * the max windows); 3, 4: NaNs, not propagated and propagated (max) */
    /* the network's geometries (the first two) as the network runs them:
     * MAX in NCHW; everything else on the smaller ones */
    const int network = g == &pool_geoms[0] || g == &pool_geoms[1];
    if (network && (l != TU_NCHW || pool_modes[mi] != UDNN_POOLING_MAX)) {
        udnnDestroy(h);
        return;
    }
    for (int variant = 0; variant < (is_max ? 5 : 3); variant++) {
        if (network && variant == 2) continue;
        pool_op o = {h, NULL, 1.0, 0.0, NULL, NULL, NULL, NULL};
        tu_ok(udnnCreatePoolingDescriptor(&o.desc));
        tu_ok(udnnSetPoolingNdDescriptor(o.desc, pool_modes[mi],
                                         variant == 4 ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN,
                                         g->nb - 2, g->window, g->pad, g->stride));
        o.x = new_tensor(h, g->nb, g->x, l);
        o.dx = new_tensor(h, g->nb, g->x, l);
        o.y = new_tensor(h, g->nb, ydims, l);
        o.dy = new_tensor(h, g->nb, ydims, l);
        if (variant == 2) tu_fill_int(o.x, -2, 2);
        else tu_fill_uniform(o.x, -3.0, 3.0);
        tu_set(o.x, 0, 2.5);
        tu_upload(o.x);
        if (variant >= 3) sprinkle_nan(o.x);
        tu_fill_uniform(o.dy, -1.0, 1.0);
        if (variant == 1) {
            o.alpha = 0.5, o.beta = 1.5;
            tu_fill_uniform(o.y, -1.0, 1.0);
            tu_fill_uniform(o.dx, -1.0, 1.0);
        }
        char what[160];
        snprintf(what, sizeof what, "pool %s %s %s variant %d fwd", pool_mode_names[mi], g->name,
                 tu_layout_name(l), variant);
        fe_case c = {what, pool_fwd, &o, {o.y}, 1};
        fast_vs_ref(&c);
        snprintf(what, sizeof what, "pool %s %s %s variant %d bwd", pool_mode_names[mi], g->name,
                 tu_layout_name(l), variant);
        fe_case cb = {what, pool_bwd, &o, {o.dx}, 1};
        fast_vs_ref(&cb);
        free_tensor(o.x);
        free_tensor(o.y);
        free_tensor(o.dy);
        free_tensor(o.dx);
        udnnDestroyPoolingDescriptor(o.desc);
    }
    udnnDestroy(h);
}
END_TEST

/* ---- softmax ------------------------------------------------------------------------------ */

typedef struct {
    udnnHandle_t h;
    udnnSoftmaxAlgorithm_t algo;
    udnnSoftmaxMode_t mode;
    double alpha, beta;
    tu_tensor *x, *y, *dy, *dx;
} softmax_op;

static udnnStatus_t softmax_fwd(void *v)
{
    softmax_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnSoftmaxForward(o->h, o->algo, o->mode, &a, o->x->desc, tu_buf_ptr(&o->x->buf), &b,
                              o->y->desc, tu_buf_ptr(&o->y->buf));
}

static udnnStatus_t softmax_bwd(void *v)
{
    softmax_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnSoftmaxBackward(o->h, o->algo, o->mode, &a, o->y->desc, tu_buf_ptr(&o->y->buf),
                               o->dy->desc, tu_buf_ptr(&o->dy->buf), &b, o->dx->desc,
                               tu_buf_ptr(&o->dx->buf));
}

static const udnnSoftmaxAlgorithm_t sm_algos[3] = {UDNN_SOFTMAX_FAST, UDNN_SOFTMAX_ACCURATE,
                                                   UDNN_SOFTMAX_LOG};
static const char *const sm_algo_names[3] = {"fast", "accurate", "log"};
static const char *const sm_mode_names[2] = {"instance", "channel"};

/* The network's logits (64 x 10) and FC1 (64 x 128), odd 4-D and 5-D
 * shapes, and conv1's output (large, CHANNEL's many groups). */
static const int sm_shapes[][6] = {
    {4, 64, 10, 1, 1, 0},  {4, 64, 128, 1, 1, 0}, {4, 5, 7, 9, 11, 0},
    {4, 3, 37, 5, 3, 0},   {5, 2, 3, 4, 5, 6},    {4, 64, 16, 28, 28, 0},
};
#define N_SM_SHAPES ((int)(sizeof sm_shapes / sizeof *sm_shapes))

START_TEST(test_softmax)
{
    tu_seed_fresh();
    const int ai = _i % 3, mi = (_i / 3) % 2;
    const tu_layout l = all_layouts[_i / 6];
    udnnHandle_t h = cpu_handle();
    for (int s = 0; s < N_SM_SHAPES; s++) {
        const int nb = sm_shapes[s][0], *dims = &sm_shapes[s][1];
        if (s == N_SM_SHAPES - 1 && (ai != 1 || l != TU_NCHW)) continue; /* time */
        /* 0: plain (outputs poisoned); 1: blended; 2: in place (y is x,
         * then dx is dy) */
        for (int variant = 0; variant < 3; variant++) {
            softmax_op o = {h, sm_algos[ai], mi ? UDNN_SOFTMAX_MODE_CHANNEL
                                                : UDNN_SOFTMAX_MODE_INSTANCE,
                            1.0, 0.0, NULL, NULL, NULL, NULL};
            tu_tensor *owned[4];
            owned[0] = o.x = new_tensor(h, nb, dims, l);
            owned[1] = o.y = new_tensor(h, nb, dims, l);
            owned[2] = o.dy = new_tensor(h, nb, dims, l);
            owned[3] = o.dx = new_tensor(h, nb, dims, l);
            tu_fill_uniform(o.x, -5.0, 5.0);
            tu_fill_uniform(o.dy, -1.0, 1.0);
            if (variant == 1) {
                o.alpha = 0.5, o.beta = -2.0;
                tu_fill_uniform(o.y, -1.0, 1.0);
                tu_fill_uniform(o.dx, -1.0, 1.0);
            }
            char what[160];
            snprintf(what, sizeof what, "softmax %s %s %s shape %d variant %d", sm_algo_names[ai],
                     sm_mode_names[mi], tu_layout_name(l), s, variant);
            if (l == TU_STRIDED && !mi) {
                /* INSTANCE over a tensor with gaps is the reference's alone
                 * (test_dispatch_decline_log checks the reason) */
                only_fast();
                tu_assert_fails(softmax_fwd(&o), UDNN_STATUS_NOT_SUPPORTED, "udnnSoftmaxForward");
                unsetenv("UDNN_DISABLE_SOLVERS");
                for (int k = 0; k < 4; k++) free_tensor(owned[k]);
                break;
            }
            const int in_place = variant == 2;
            if (in_place) o.y = o.x;
            fe_case c = {what, softmax_fwd, &o, {o.y}, 1};
            fast_vs_ref(&c);
            /* the backward takes the softmax of x, as training does */
            if (in_place) {
                tu_download(o.x);
                o.y = owned[1];
                for (int64_t i = 0; i < o.x->count; i++) tu_set(o.y, i, tu_get(o.x, i));
                tu_upload(o.y);
                o.dx = o.dy;
            } else {
                const double alpha = o.alpha, beta = o.beta;
                o.alpha = 1.0, o.beta = 0.0;
                tu_ok(softmax_fwd(&o));
                o.alpha = alpha, o.beta = beta;
            }
            if (variant == 0) tu_buf_poison(&o.dx->buf);
            fe_case cb = {what, softmax_bwd, &o, {o.dx}, 1};
            fast_vs_ref(&cb);
            for (int k = 0; k < 4; k++) free_tensor(owned[k]);
        }
    }
    udnnDestroy(h);
}
END_TEST

/* ---- tensor ops ----------------------------------------------------------------------------- */

typedef struct {
    udnnHandle_t h;
    udnnOpTensorDescriptor_t desc;
    double alpha1, alpha2, beta, value;
    tu_tensor *a, *b, *c;
} tensor_op;

static udnnStatus_t set_op(void *v)
{
    tensor_op *o = v;
    float value = (float)o->value;
    return udnnSetTensor(o->h, o->c->desc, tu_buf_ptr(&o->c->buf), &value);
}

static udnnStatus_t scale_op(void *v)
{
    tensor_op *o = v;
    float alpha = (float)o->alpha1;
    return udnnScaleTensor(o->h, o->c->desc, tu_buf_ptr(&o->c->buf), &alpha);
}

static udnnStatus_t add_op(void *v)
{
    tensor_op *o = v;
    float alpha = (float)o->alpha1, beta = (float)o->beta;
    return udnnAddTensor(o->h, &alpha, o->a->desc, tu_buf_ptr(&o->a->buf), &beta, o->c->desc,
                         tu_buf_ptr(&o->c->buf));
}

static udnnStatus_t op_op(void *v)
{
    tensor_op *o = v;
    float a1 = (float)o->alpha1, a2 = (float)o->alpha2, beta = (float)o->beta;
    return udnnOpTensor(o->h, o->desc, &a1, o->a->desc, tu_buf_ptr(&o->a->buf), &a2, o->b->desc,
                        tu_buf_ptr(&o->b->buf), &beta, o->c->desc, tu_buf_ptr(&o->c->buf));
}

static udnnStatus_t bias_op(void *v)
{
    tensor_op *o = v;
    float alpha = (float)o->alpha1, beta = (float)o->beta;
    return udnnConvolutionBackwardBias(o->h, &alpha, o->a->desc, tu_buf_ptr(&o->a->buf), &beta,
                                       o->c->desc, tu_buf_ptr(&o->c->buf));
}

/* c's shapes: odd 4-D sizes above and below the parallel threshold, the
 * FC output as a 2-D matrix, odd 5-D; the network's own sizes
 * (test_network_tensor_ops) are few and large. */
static const int top_shapes[][6] = {
    {4, 7, 13, 29, 31, 0}, {4, 3, 5, 37, 41, 0}, {2, 64, 128, 0, 0, 0}, {5, 2, 3, 5, 7, 11},
};
#define N_TOP_SHAPES ((int)(sizeof top_shapes / sizeof *top_shapes))

/* How a broadcast operand's dims derive from c's: kept where the mask bit
 * of the dim is set, 1 elsewhere. */
static const unsigned bcast_masks[] = {0xFFu, 0x2u, 0x0u, 0xFDu, 0xFEu};
static const char *const bcast_names[] = {"same", "per channel", "scalar", "all but C",
                                          "all but N"};
#define N_BCAST ((int)(sizeof bcast_masks / sizeof *bcast_masks))

static tu_tensor *broadcast_tensor(udnnHandle_t h, const tu_tensor *c, unsigned mask,
                                   tu_layout l)
{
    int dims[UDNN_DIM_MAX];
    for (int i = 0; i < c->nb; i++) dims[i] = mask >> i & 1u ? c->dims[i] : 1;
    tu_tensor *t = new_tensor(h, c->nb, dims, l);
    tu_fill_uniform(t, -2.0, 2.0);
    return t;
}

START_TEST(test_set_scale)
{
    tu_seed_fresh();
    const tu_layout l = all_layouts[_i % 3];
    udnnHandle_t h = cpu_handle();
    for (int s = 0; s < N_TOP_SHAPES; s++) {
        tensor_op o = {h, NULL, 0.37, 1.0, 0.0, 2.5, NULL, NULL, NULL};
        o.c = new_tensor(h, top_shapes[s][0], &top_shapes[s][1], l);
        char what[128];
        snprintf(what, sizeof what, "set %s shape %d", tu_layout_name(l), s);
        fe_case c = {what, set_op, &o, {o.c}, 1}; /* c poisoned */
        fast_vs_ref(&c);
        tu_fill_uniform(o.c, -3.0, 3.0);
        snprintf(what, sizeof what, "scale %s shape %d", tu_layout_name(l), s);
        fe_case cs = {what, scale_op, &o, {o.c}, 1};
        fast_vs_ref(&cs);
        free_tensor(o.c);
    }
    udnnDestroy(h);
}
END_TEST

START_TEST(test_add_tensor)
{
    tu_seed_fresh();
    const int bi = _i % N_BCAST;
    const tu_layout lc = all_layouts[(_i / N_BCAST) % 3];
    const tu_layout la = all_layouts[_i / (N_BCAST * 3)];
    /* a's layout apart from c's matters where a keeps several dims */
    if (la != lc && bcast_masks[bi] != 0xFFu && bcast_masks[bi] != 0xFDu) return;
    udnnHandle_t h = cpu_handle();
    for (int s = 0; s < N_TOP_SHAPES; s++) {
        /* 0: SGD's v = g + mu v; 1: w += -lr v; 2: overwrite (beta 0);
         * 3: in place (c is a, same dims and layout only) */
        for (int variant = 0; variant < 4; variant++) {
            if (variant == 3 && (bi != 0 || la != lc)) continue;
            if (s == 0 && variant != 0 && variant != 3) continue; /* large: the parallel path */
            tensor_op o = {h, NULL, 1.0, 1.0, 0.9, 0.0, NULL, NULL, NULL};
            tu_tensor *c_own = new_tensor(h, top_shapes[s][0], &top_shapes[s][1], lc);
            o.c = c_own;
            o.a = broadcast_tensor(h, o.c, bcast_masks[bi], la);
            if (variant == 1) o.alpha1 = -0.01, o.beta = 1.0;
            if (variant == 2) o.alpha1 = 0.7, o.beta = 0.0;
            if (variant != 2) tu_fill_uniform(o.c, -1.0, 1.0);
            if (variant == 3) {
                o.c = o.a;
                o.alpha1 = 0.5, o.beta = 0.25;
            }
            char what[160];
            snprintf(what, sizeof what, "add %s a %s c %s shape %d variant %d", bcast_names[bi],
                     tu_layout_name(la), tu_layout_name(lc), s, variant);
            fe_case c = {what, add_op, &o, {o.c}, 1};
            fast_vs_ref(&c);
            free_tensor(o.a);
            free_tensor(c_own);
        }
    }
    udnnDestroy(h);
}
END_TEST

static const udnnOpTensorOp_t ops[6] = {UDNN_OP_TENSOR_ADD, UDNN_OP_TENSOR_MUL,
                                        UDNN_OP_TENSOR_MIN, UDNN_OP_TENSOR_MAX,
                                        UDNN_OP_TENSOR_SQRT, UDNN_OP_TENSOR_NOT};
static const char *const op_names[6] = {"add", "mul", "min", "max", "sqrt", "not"};

START_TEST(test_op_tensor)
{
    tu_seed_fresh();
    const int oi = _i % 6;
    const tu_layout l = all_layouts[(_i / 6) % 3];
    const udnnDataType_t compute = _i / 18 ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    const int is_min_max = ops[oi] == UDNN_OP_TENSOR_MIN || ops[oi] == UDNN_OP_TENSOR_MAX;
    udnnHandle_t h = cpu_handle();
    for (int s = 0; s < N_TOP_SHAPES; s++) {
        /* 0-2: b same, per channel, scalar, with beta 0 / 1 / 0.5;
         * 3: c is a; 4: c is b; 5, 6: NaNs (MIN and MAX), either rule */
        for (int variant = 0; variant < (is_min_max ? 7 : 5); variant++) {
            if (s == 0 && variant != 0 && variant != 3) continue; /* large: the parallel path */
            tensor_op o = {h, NULL, 1.0, 1e-4 * (1 + variant), 0.0, 0.0, NULL, NULL, NULL};
            tu_ok(udnnCreateOpTensorDescriptor(&o.desc));
            tu_ok(udnnSetOpTensorDescriptor(o.desc, ops[oi], compute,
                                            variant == 6 ? UDNN_PROPAGATE_NAN
                                                         : UDNN_NOT_PROPAGATE_NAN));
            if (is_min_max) o.alpha2 = 0.8;
            tu_tensor *c_own = new_tensor(h, top_shapes[s][0], &top_shapes[s][1], l);
            o.c = c_own;
            const int bi = variant <= 2 ? variant : 0;
            o.a = broadcast_tensor(h, o.c, 0xFFu, l);
            if (ops[oi] == UDNN_OP_TENSOR_SQRT) tu_fill_uniform(o.a, 0.0, 4.0);
            o.b = broadcast_tensor(h, o.c, bcast_masks[bi], l);
            if (variant == 1) o.beta = 1.0;
            if (variant == 2) o.beta = 0.5;
            if (variant == 1 || variant == 2) tu_fill_uniform(o.c, -1.0, 1.0);
            if (variant >= 5) {
                sprinkle_nan(o.a);
                sprinkle_nan(o.b);
            }
            tu_tensor *out = o.c;
            if (variant == 3) out = o.c = o.a;
            if (variant == 4) out = o.c = o.b;
            char what[160];
            snprintf(what, sizeof what, "op %s compute %s %s shape %d variant %d", op_names[oi],
                     compute == UDNN_DATA_DOUBLE ? "double" : "float", tu_layout_name(l), s,
                     variant);
            fe_case c = {what, op_op, &o, {out}, 1};
            fast_vs_ref(&c);
            free_tensor(o.a);
            free_tensor(o.b);
            free_tensor(c_own);
            udnnDestroyOpTensorDescriptor(o.desc);
        }
    }
    udnnDestroy(h);
}
END_TEST

/* The network's tensor ops at their sizes: conv bias adds (per channel,
 * NCHW), the FC bias add (a 1 x 128 row over 64 x 128), and SGD over the
 * whole parameter vector: v = g + mu v, w += -lr v, weight decay
 * g = w * 1 + g * decay (OpTensor ADD), the gradients zeroed and scaled. */
START_TEST(test_network_tensor_ops)
{
    tu_seed_fresh();
    udnnHandle_t h = cpu_handle();
    static const int conv1[4] = {64, 16, 28, 28}, conv2[4] = {64, 32, 14, 14};
    static const int fc[2] = {64, 128}, params[2] = {1, 215370};
    static const struct {
        const int *dims;
        int nb;
        unsigned mask;
        double alpha, beta;
        const char *name;
    } adds[] = {
        {conv1, 4, 0x2u, 1.0, 1.0, "conv1 bias"}, {conv2, 4, 0x2u, 1.0, 1.0, "conv2 bias"},
        {fc, 2, 0x2u, 1.0, 1.0, "fc bias"},        {params, 2, 0x3u, 1.0, 0.9, "momentum"},
        {params, 2, 0x3u, -0.01, 1.0, "update"},
    };
    for (size_t i = 0; i < sizeof adds / sizeof *adds; i++) {
        tensor_op o = {h, NULL, adds[i].alpha, 1.0, adds[i].beta, 0.0, NULL, NULL, NULL};
        o.c = new_tensor(h, adds[i].nb, adds[i].dims, TU_NCHW);
        tu_fill_uniform(o.c, -1.0, 1.0);
        o.a = broadcast_tensor(h, o.c, adds[i].mask, TU_NCHW);
        fe_case c = {adds[i].name, add_op, &o, {o.c}, 1};
        fast_vs_ref(&c);
        free_tensor(o.a);
        free_tensor(o.c);
    }
    tensor_op o = {h, NULL, 1.0, 5e-4, 0.0, 0.0, NULL, NULL, NULL};
    tu_ok(udnnCreateOpTensorDescriptor(&o.desc));
    tu_ok(udnnSetOpTensorDescriptor(o.desc, UDNN_OP_TENSOR_ADD, UDNN_DATA_FLOAT,
                                    UDNN_NOT_PROPAGATE_NAN));
    o.a = new_tensor(h, 2, params, TU_NCHW);
    o.b = new_tensor(h, 2, params, TU_NCHW);
    tu_fill_uniform(o.a, -1.0, 1.0);
    tu_fill_uniform(o.b, -1.0, 1.0);
    o.c = o.a; /* the gradient gains decay * w in place */
    o.alpha1 = 1.0, o.alpha2 = 5e-4, o.beta = 0.0;
    fe_case c = {"weight decay", op_op, &o, {o.c}, 1};
    fast_vs_ref(&c);
    o.value = 0.0;
    fe_case cz = {"zero the gradients", set_op, &o, {o.c}, 1};
    fast_vs_ref(&cz);
    tu_fill_uniform(o.c, -1.0, 1.0);
    o.alpha1 = 1.0 / 64;
    fe_case cs = {"scale the gradients", scale_op, &o, {o.c}, 1};
    fast_vs_ref(&cs);
    udnnDestroyOpTensorDescriptor(o.desc);
    free_tensor(o.a);
    free_tensor(o.b);
    udnnDestroy(h);
}
END_TEST

START_TEST(test_bwd_bias)
{
    tu_seed_fresh();
    const tu_layout l = all_layouts[_i % 3];
    udnnHandle_t h = cpu_handle();
    static const int shapes[][6] = {
        {4, 64, 16, 28, 28, 0}, {4, 64, 32, 14, 14, 0}, {4, 64, 128, 1, 1, 0},
        {4, 64, 10, 1, 1, 0},   {4, 5, 7, 9, 11, 0},    {5, 2, 3, 4, 5, 6}};
    for (int s = l == TU_NCHW ? 0 : 4; s < 6; s++) {
        for (int variant = 0; variant < 2; variant++) {
            const int nb = shapes[s][0], *dims = &shapes[s][1];
            tensor_op o = {h, NULL, 1.0, 1.0, 0.0, 0.0, NULL, NULL, NULL};
            o.a = new_tensor(h, nb, dims, l);
            tu_fill_uniform(o.a, -1.0, 1.0);
            int bdims[5] = {1, dims[1], 1, 1, 1};
            o.c = new_tensor(h, nb, bdims, l);
            if (variant == 1) {
                o.alpha1 = 0.5, o.beta = 2.0;
                tu_fill_uniform(o.c, -1.0, 1.0);
            }
            char what[128];
            snprintf(what, sizeof what, "bwd bias %s shape %d variant %d", tu_layout_name(l), s,
                     variant);
            fe_case c = {what, bias_op, &o, {o.c}, 1};
            fast_vs_ref(&c);
            free_tensor(o.a);
            free_tensor(o.c);
        }
    }
    udnnDestroy(h);
}
END_TEST

/* ---- batch norm ------------------------------------------------------------------------------ */

typedef struct {
    udnnHandle_t h;
    udnnBatchNormMode_t mode;
    double alpha, beta, alpha_param, beta_param, factor, epsilon;
    tu_tensor *x, *y, *dy, *dx;
    tu_tensor *scale, *bias, *run_mean, *run_var, *save_mean, *save_inv;
    tu_tensor *dscale, *dbias;
    int use_running, use_saved;
} bn_op;

static void *ptr_or_null(tu_tensor *t, int use)
{
    return use ? tu_buf_ptr(&t->buf) : NULL;
}

static udnnStatus_t bn_train(void *v)
{
    bn_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnBatchNormalizationForwardTraining(
        o->h, o->mode, &a, &b, o->x->desc, tu_buf_ptr(&o->x->buf), o->y->desc,
        tu_buf_ptr(&o->y->buf), o->scale->desc, tu_buf_ptr(&o->scale->buf),
        tu_buf_ptr(&o->bias->buf), o->factor, ptr_or_null(o->run_mean, o->use_running),
        ptr_or_null(o->run_var, o->use_running), o->epsilon,
        ptr_or_null(o->save_mean, o->use_saved), ptr_or_null(o->save_inv, o->use_saved));
}

static udnnStatus_t bn_infer(void *v)
{
    bn_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    return udnnBatchNormalizationForwardInference(
        o->h, o->mode, &a, &b, o->x->desc, tu_buf_ptr(&o->x->buf), o->y->desc,
        tu_buf_ptr(&o->y->buf), o->scale->desc, tu_buf_ptr(&o->scale->buf),
        tu_buf_ptr(&o->bias->buf), tu_buf_ptr(&o->run_mean->buf), tu_buf_ptr(&o->run_var->buf),
        o->epsilon);
}

static udnnStatus_t bn_bwd(void *v)
{
    bn_op *o = v;
    tu_scalar a = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha),
              b = tu_scalar_of(UDNN_DATA_FLOAT, o->beta);
    tu_scalar ap = tu_scalar_of(UDNN_DATA_FLOAT, o->alpha_param);
    tu_scalar bp = tu_scalar_of(UDNN_DATA_FLOAT, o->beta_param);
    return udnnBatchNormalizationBackward(
        o->h, o->mode, &a, &b, &ap, &bp, o->x->desc, tu_buf_ptr(&o->x->buf), o->dy->desc,
        tu_buf_ptr(&o->dy->buf), o->dx->desc, tu_buf_ptr(&o->dx->buf), o->scale->desc,
        tu_buf_ptr(&o->scale->buf), tu_buf_ptr(&o->dscale->buf), tu_buf_ptr(&o->dbias->buf),
        o->epsilon, ptr_or_null(o->save_mean, o->use_saved),
        ptr_or_null(o->save_inv, o->use_saved));
}

static const int bn_shapes[][6] = {
    {4, 64, 16, 28, 28, 0}, {4, 64, 32, 14, 14, 0}, {4, 64, 128, 1, 1, 0},
    {4, 5, 7, 9, 11, 0},    {5, 2, 3, 4, 5, 6},
};
#define N_BN_SHAPES ((int)(sizeof bn_shapes / sizeof *bn_shapes))

START_TEST(test_batchnorm)
{
    tu_seed_fresh();
    const udnnBatchNormMode_t mode = _i % 2 ? UDNN_BATCHNORM_SPATIAL_PERSISTENT
                                            : UDNN_BATCHNORM_SPATIAL;
    const tu_layout l = all_layouts[(_i / 2) % 3];
    const int s = _i / 6;
    const int nb = bn_shapes[s][0], *dims = &bn_shapes[s][1];
    if (s < 2 && (l != TU_NCHW || mode != UDNN_BATCHNORM_SPATIAL)) return; /* network: NCHW */
    udnnHandle_t h = cpu_handle();
    int pdims[5] = {1, dims[1], 1, 1, 1};
    /* 0: plain, running and saved stats, x far from 0; 1: blended, factor
     * 1 (old running values not read: poisoned); 2: in place (y is x, dx
     * is dy), no stats passed */
    for (int variant = 0; variant < 3; variant++) {
        bn_op o;
        memset(&o, 0, sizeof o);
        o.h = h;
        o.mode = mode;
        o.alpha = 1.0, o.beta = 0.0, o.alpha_param = 1.0, o.beta_param = 0.0;
        o.factor = 0.1, o.epsilon = 1e-5;
        o.use_running = variant != 2, o.use_saved = variant != 2;
        o.x = new_tensor(h, nb, dims, l);
        o.y = new_tensor(h, nb, dims, l);
        o.dy = new_tensor(h, nb, dims, l);
        o.dx = new_tensor(h, nb, dims, l);
        tu_tensor **params[8] = {&o.scale, &o.bias, &o.run_mean, &o.run_var,
                                 &o.save_mean, &o.save_inv, &o.dscale, &o.dbias};
        for (int k = 0; k < 8; k++) *params[k] = new_tensor(h, nb, pdims, l);
        /* variant 0's mean is thousands of times its spread: the float passes
         * must not lose the mean's low bits */
        tu_fill_uniform(o.x, variant == 0 ? 1000.0 : -1.0, variant == 0 ? 1001.0 : 1.0);
        tu_fill_uniform(o.dy, -1.0, 1.0);
        tu_fill_uniform(o.scale, 0.5, 1.5);
        tu_fill_uniform(o.bias, -0.5, 0.5);
        tu_fill_uniform(o.run_mean, -0.5, 0.5);
        tu_fill_uniform(o.run_var, 0.5, 1.5);
        if (variant == 1) {
            o.alpha = 0.5, o.beta = 1.5, o.alpha_param = 2.0, o.beta_param = 1.0, o.factor = 1.0;
            tu_fill_uniform(o.y, -1.0, 1.0);
            tu_fill_uniform(o.dx, -1.0, 1.0);
            tu_fill_uniform(o.dscale, -1.0, 1.0);
            tu_fill_uniform(o.dbias, -1.0, 1.0);
            tu_buf_poison(&o.run_mean->buf);
            tu_buf_poison(&o.run_var->buf);
        }
        tu_tensor *owned[4] = {o.x, o.y, o.dy, o.dx};
        tu_tensor *y_out = o.y;
        if (variant == 2) y_out = o.y = o.x;
        char what[160];
        snprintf(what, sizeof what, "bn %s %s shape %d variant %d train",
                 mode == UDNN_BATCHNORM_SPATIAL ? "spatial" : "persistent", tu_layout_name(l), s,
                 variant);
        fe_case c = {what, bn_train, &o, {y_out, o.run_mean, o.run_var, o.save_mean, o.save_inv},
                     variant == 2 ? 1 : 5};
        fast_vs_ref(&c);
        snprintf(what, sizeof what, "bn %s %s shape %d variant %d infer",
                 mode == UDNN_BATCHNORM_SPATIAL ? "spatial" : "persistent", tu_layout_name(l), s,
                 variant);
        tu_fill_uniform(o.run_mean, -0.5, 0.5);
        tu_fill_uniform(o.run_var, 0.5, 1.5);
        if (variant == 2) {
            /* in place, from fresh x */
            tu_fill_uniform(o.x, -1.0, 1.0);
        }
        fe_case cf = {what, bn_infer, &o, {y_out}, 1};
        fast_vs_ref(&cf);
        if (variant == 2) tu_fill_uniform(o.x, -1.0, 1.0);
        if (variant == 0) {
            /* the saved statistics of this x, as training leaves them */
            tu_ok(bn_train(&o));
        }
        snprintf(what, sizeof what, "bn %s %s shape %d variant %d bwd",
                 mode == UDNN_BATCHNORM_SPATIAL ? "spatial" : "persistent", tu_layout_name(l), s,
                 variant);
        tu_tensor *dx_out = o.dx;
        if (variant == 2) dx_out = o.dx = o.dy;
        fe_case cb = {what, bn_bwd, &o, {dx_out, o.dscale, o.dbias}, 3};
        fast_vs_ref(&cb);
        for (int k = 0; k < 4; k++) free_tensor(owned[k]);
        for (int k = 0; k < 8; k++) free_tensor(*params[k]);
    }
    udnnDestroy(h);
}
END_TEST

/* ---- dispatch: which solver runs, and why not ------------------------------------------------ */

/* One call of each family on a small 4-D tensor of type t. */
typedef struct {
    const char *fn, *fast, *ref;
} dispatch_op;

static const dispatch_op dispatch_ops[] = {
    {"udnnActivationForward", "fast_act_fwd", "ref_act_fwd"},
    {"udnnActivationBackward", "fast_act_bwd", "ref_act_bwd"},
    {"udnnPoolingForward", "fast_pool_fwd", "ref_pool_fwd"},
    {"udnnPoolingBackward", "fast_pool_bwd", "ref_pool_bwd"},
    {"udnnSoftmaxForward", "fast_softmax_fwd", "ref_softmax_fwd"},
    {"udnnSoftmaxBackward", "fast_softmax_bwd", "ref_softmax_bwd"},
    {"udnnSetTensor", "fast_set_tensor", "ref_set_tensor"},
    {"udnnScaleTensor", "fast_scale_tensor", "ref_scale_tensor"},
    {"udnnAddTensor", "fast_add_tensor", "ref_add_tensor"},
    {"udnnOpTensor", "fast_op_tensor", "ref_op_tensor"},
    {"udnnConvolutionBackwardBias", "fast_conv_bwd_bias", "ref_conv_bwd_bias"},
    {"udnnBatchNormalizationForwardTraining", "fast_bn_fwd_train", "ref_bn_fwd_train"},
    {"udnnBatchNormalizationForwardInference", "fast_bn_fwd_infer", "ref_bn_fwd_infer"},
    {"udnnBatchNormalizationBackward", "fast_bn_bwd", "ref_bn_bwd"},
};
#define N_DISPATCH_OPS ((int)(sizeof dispatch_ops / sizeof *dispatch_ops))

/* Runs dispatch op k once on tensors of type t. */
static udnnStatus_t run_dispatch_op(udnnHandle_t h, int k, udnnDataType_t t)
{
    static const int dims[4] = {2, 3, 4, 4}, pdims[4] = {1, 3, 1, 1}, ydims[4] = {2, 3, 2, 2};
    tu_tensor x, y, dy, dx, p[4], py, pdy;
    tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
    tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
    tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
    tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
    tu_tensor_init(&py, h, t, 4, ydims, TU_NCHW);
    tu_tensor_init(&pdy, h, t, 4, ydims, TU_NCHW);
    for (int i = 0; i < 4; i++) {
        tu_tensor_init(&p[i], h, t, 4, pdims, TU_NCHW);
        tu_fill_uniform(&p[i], 0.5, 1.5);
    }
    tu_fill_uniform(&x, -1.0, 1.0);
    tu_fill_uniform(&y, -1.0, 1.0);
    tu_fill_uniform(&dy, -1.0, 1.0);
    tu_fill_uniform(&py, -1.0, 1.0);
    tu_fill_uniform(&pdy, -1.0, 1.0);
    tu_scalar one = tu_scalar_of(t, 1.0), zero = tu_scalar_of(t, 0.0);
    void *X = tu_buf_ptr(&x.buf), *Y = tu_buf_ptr(&y.buf), *DY = tu_buf_ptr(&dy.buf);
    void *DX = tu_buf_ptr(&dx.buf);
    void *P[4] = {tu_buf_ptr(&p[0].buf), tu_buf_ptr(&p[1].buf), tu_buf_ptr(&p[2].buf),
                  tu_buf_ptr(&p[3].buf)};
    udnnActivationDescriptor_t act;
    udnnPoolingDescriptor_t pool;
    udnnOpTensorDescriptor_t opd;
    tu_ok(udnnCreateActivationDescriptor(&act));
    tu_ok(udnnSetActivationDescriptor(act, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    tu_ok(udnnCreatePoolingDescriptor(&pool));
    tu_ok(udnnSetPooling2dDescriptor(pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0,
                                     2, 2));
    tu_ok(udnnCreateOpTensorDescriptor(&opd));
    tu_ok(udnnSetOpTensorDescriptor(opd, UDNN_OP_TENSOR_MUL, t == UDNN_DATA_DOUBLE ?
                                    UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT, UDNN_NOT_PROPAGATE_NAN));
    udnnStatus_t st = UDNN_STATUS_INTERNAL_ERROR;
    switch (k) {
    case 0: st = udnnActivationForward(h, act, &one, x.desc, X, &zero, y.desc, Y); break;
    case 1:
        st = udnnActivationBackward(h, act, &one, y.desc, Y, dy.desc, DY, x.desc, X, &zero,
                                    dx.desc, DX);
        break;
    case 2:
        st = udnnPoolingForward(h, pool, &one, x.desc, X, &zero, py.desc, tu_buf_ptr(&py.buf));
        break;
    case 3:
        st = udnnPoolingBackward(h, pool, &one, py.desc, tu_buf_ptr(&py.buf), pdy.desc,
                                 tu_buf_ptr(&pdy.buf), x.desc, X, &zero, dx.desc, DX);
        break;
    case 4:
        st = udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one,
                                x.desc, X, &zero, y.desc, Y);
        break;
    case 5:
        st = udnnSoftmaxBackward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one,
                                 y.desc, Y, dy.desc, DY, &zero, dx.desc, DX);
        break;
    case 6: st = udnnSetTensor(h, y.desc, Y, &one); break;
    case 7: st = udnnScaleTensor(h, y.desc, Y, &one); break;
    case 8: st = udnnAddTensor(h, &one, p[0].desc, P[0], &one, y.desc, Y); break;
    case 9:
        st = udnnOpTensor(h, opd, &one, x.desc, X, &one, dy.desc, DY, &zero, y.desc, Y);
        break;
    case 10: st = udnnConvolutionBackwardBias(h, &one, dy.desc, DY, &zero, p[0].desc, P[0]); break;
    case 11:
        st = udnnBatchNormalizationForwardTraining(h, UDNN_BATCHNORM_SPATIAL, &one, &zero, x.desc,
                                                   X, y.desc, Y, p[0].desc, P[0], P[1], 0.1, NULL,
                                                   NULL, 1e-5, NULL, NULL);
        break;
    case 12:
        st = udnnBatchNormalizationForwardInference(h, UDNN_BATCHNORM_SPATIAL, &one, &zero,
                                                    x.desc, X, y.desc, Y, p[0].desc, P[0], P[1],
                                                    P[2], P[3], 1e-5);
        break;
    case 13:
        st = udnnBatchNormalizationBackward(h, UDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero,
                                            x.desc, X, dy.desc, DY, dx.desc, DX, p[0].desc, P[0],
                                            P[2], P[3], 1e-5, NULL, NULL);
        break;
    }
    udnnDestroyActivationDescriptor(act);
    udnnDestroyPoolingDescriptor(pool);
    udnnDestroyOpTensorDescriptor(opd);
    tu_tensor *all[10] = {&x, &y, &dy, &dx, &py, &pdy, &p[0], &p[1], &p[2], &p[3]};
    for (int i = 0; i < 10; i++) tu_tensor_free(all[i]);
    return st;
}

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    size_t got = fp ? fread(buf, 1, n - 1, fp) : 0;
    buf[got] = '\0';
    if (fp) fclose(fp);
}

/* UDNN_LOG=dispatch names the fast solver for FLOAT and the reference,
 * with the fast one's reason, for DOUBLE. The log level is read once per
 * process; Check runs each test in its own. */
START_TEST(test_dispatch_log)
{
    tu_seed_fresh();
    char path[] = "/tmp/udnn-fastelt-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "dispatch", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    unsetenv("UDNN_DISABLE_SOLVERS");
    udnnHandle_t h = cpu_handle();
    for (int k = 0; k < N_DISPATCH_OPS; k++) {
        tu_ok(run_dispatch_op(h, k, UDNN_DATA_FLOAT));
        tu_ok(run_dispatch_op(h, k, UDNN_DATA_DOUBLE));
    }
    udnnDestroy(h);
    static char log[1 << 20];
    slurp(path, log, sizeof log);
    unlink(path);
    /* the lines come in call order: FLOAT then DOUBLE for each op */
    const char *at = log;
    for (int k = 0; k < N_DISPATCH_OPS; k++) {
        char want[256];
        snprintf(want, sizeof want, "%s: cpu backend runs solver %s", dispatch_ops[k].fn,
                 dispatch_ops[k].fast);
        const char *hit = strstr(at, want);
        ck_assert_msg(hit != NULL, "no \"%s\" in the log", want);
        at = hit;
        snprintf(want, sizeof want, "%s: solver %s rejected: data type is not FLOAT",
                 dispatch_ops[k].fn, dispatch_ops[k].fast);
        hit = strstr(at, want);
        ck_assert_msg(hit != NULL, "no \"%s\" in the log", want);
        at = hit;
        snprintf(want, sizeof want, "%s: cpu backend runs solver %s", dispatch_ops[k].fn,
                 dispatch_ops[k].ref);
        hit = strstr(at, want);
        ck_assert_msg(hit != NULL, "no \"%s\" in the log", want);
        at = hit;
    }
}
END_TEST

/* The reasons the fast solvers give for layouts and modes they leave to
 * the reference: activation over a tensor with gaps, INSTANCE softmax
 * over one, PER_ACTIVATION batch norm. */
START_TEST(test_dispatch_decline_log)
{
    tu_seed_fresh();
    char path[] = "/tmp/udnn-fastelt-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "dispatch", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    unsetenv("UDNN_DISABLE_SOLVERS");
    udnnHandle_t h = cpu_handle();
    static const int dims[4] = {2, 3, 4, 5}, pdims[4] = {1, 3, 4, 5};
    tu_tensor x, y, p[2];
    tu_tensor_init(&x, h, UDNN_DATA_FLOAT, 4, dims, TU_STRIDED);
    tu_tensor_init(&y, h, UDNN_DATA_FLOAT, 4, dims, TU_STRIDED);
    tu_tensor_init(&p[0], h, UDNN_DATA_FLOAT, 4, pdims, TU_NCHW);
    tu_tensor_init(&p[1], h, UDNN_DATA_FLOAT, 4, pdims, TU_NCHW);
    tu_fill_uniform(&x, -1.0, 1.0);
    tu_fill_uniform(&p[0], 0.5, 1.5);
    tu_fill_uniform(&p[1], 0.5, 1.5);
    udnnActivationDescriptor_t act;
    tu_ok(udnnCreateActivationDescriptor(&act));
    tu_ok(udnnSetActivationDescriptor(act, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    float one = 1.0f, zero = 0.0f;
    void *X = tu_buf_ptr(&x.buf), *Y = tu_buf_ptr(&y.buf);
    tu_ok(udnnActivationForward(h, act, &one, x.desc, X, &zero, y.desc, Y));
    tu_ok(udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one, x.desc,
                             X, &zero, y.desc, Y));
    tu_ok(udnnBatchNormalizationForwardTraining(h, UDNN_BATCHNORM_PER_ACTIVATION, &one, &zero,
                                                x.desc, X, y.desc, Y, p[0].desc,
                                                tu_buf_ptr(&p[0].buf), tu_buf_ptr(&p[1].buf),
                                                0.1, NULL, NULL, 1e-5, NULL, NULL));
    udnnDestroyActivationDescriptor(act);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_tensor_free(&p[0]);
    tu_tensor_free(&p[1]);
    udnnDestroy(h);
    static char log[1 << 20];
    slurp(path, log, sizeof log);
    unlink(path);
    static const char *const want[] = {
        "udnnActivationForward: solver fast_act_fwd rejected: x and y are not packed",
        "udnnActivationForward: cpu backend runs solver ref_act_fwd",
        "udnnSoftmaxForward: solver fast_softmax_fwd rejected: INSTANCE mode needs",
        "udnnSoftmaxForward: cpu backend runs solver ref_softmax_fwd",
        "udnnBatchNormalizationForwardTraining: solver fast_bn_fwd_train rejected: "
        "PER_ACTIVATION",
        "udnnBatchNormalizationForwardTraining: cpu backend runs solver ref_bn_fwd_train",
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(log, want[i]) != NULL, "no \"%s\" in the log", want[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fast_eltwise");
    TCase *ta = tcase_create("activation");
    tcase_set_timeout(ta, 60);
    tcase_add_loop_test(ta, test_activation, 0, 2 * N_ACT_MODES);
    suite_add_tcase(s, ta);

    TCase *tp = tcase_create("pooling");
    tcase_set_timeout(tp, 60);
    tcase_add_loop_test(tp, test_pooling, 0, 4 * N_POOL_GEOMS * 3);
    suite_add_tcase(s, tp);

    TCase *tsm = tcase_create("softmax");
    tcase_set_timeout(tsm, 60);
    tcase_add_loop_test(tsm, test_softmax, 0, 3 * 2 * 3);
    suite_add_tcase(s, tsm);

    TCase *tt = tcase_create("tensor-ops");
    tcase_set_timeout(tt, 60);
    tcase_add_loop_test(tt, test_set_scale, 0, 3);
    tcase_add_loop_test(tt, test_add_tensor, 0, N_BCAST * 3 * 3);
    tcase_add_loop_test(tt, test_op_tensor, 0, 6 * 3 * 2);
    tcase_add_loop_test(tt, test_bwd_bias, 0, 3);
    tcase_add_test(tt, test_network_tensor_ops);
    suite_add_tcase(s, tt);

    TCase *tb = tcase_create("batchnorm");
    tcase_set_timeout(tb, 60);
    tcase_add_loop_test(tb, test_batchnorm, 0, 2 * 3 * N_BN_SHAPES);
    suite_add_tcase(s, tb);

    TCase *td = tcase_create("dispatch");
    tcase_add_test(td, test_dispatch_log);
    tcase_add_test(td, test_dispatch_decline_log);
    suite_add_tcase(s, td);
    return tu_run_suite_forked(s);
}
