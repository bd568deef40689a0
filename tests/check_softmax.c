/* check_softmax.c - SoftmaxForward and SoftmaxBackward on every backend:
 * every algo x mode x type x layout over 4-D and 5-D shapes against an
 * expectation computed here in double, hand-computed values, alpha/beta,
 * C = 1, large inputs, in-place runs, finite differences in DOUBLE, and
 * every validation rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static const udnnSoftmaxAlgorithm_t algos[] = {UDNN_SOFTMAX_FAST, UDNN_SOFTMAX_ACCURATE,
                                               UDNN_SOFTMAX_LOG};
static const char *const algo_names[] = {"fast", "accurate", "log"};
static const udnnSoftmaxMode_t sm_modes[] = {UDNN_SOFTMAX_MODE_INSTANCE,
                                             UDNN_SOFTMAX_MODE_CHANNEL};
static const char *const mode_names[] = {"instance", "channel"};
#define MODE_INSTANCE 0 /* sm_modes' index of INSTANCE */

/* algos' index of a */
static int algo_index(udnnSoftmaxAlgorithm_t a)
{
    int i = 0;
    while (algos[i] != a) i++;
    return i;
}
#define N_ALGOS 3
#define N_MODES 2
#define N_TYPES 4
#define N_LAYOUTS 3

/* Shapes: rank, dims. C = 1, 3, 4, 5; odd sizes; 4-D and 5-D. */
static const int shapes[][6] = {{4, 2, 3, 3, 5, 0}, {4, 1, 5, 1, 1, 0}, {5, 2, 3, 2, 3, 3},
                                {4, 3, 4, 1, 7, 0}, {4, 2, 1, 3, 3, 0}};
#define N_SHAPES ((int)(sizeof shapes / sizeof *shapes))

/* ---- an independent expectation over logical indices -------------------------- */

/* A tensor's n, c and positions after c. */
typedef struct {
    int64_t n, c, s;
} ncs;

static ncs ncs_of(const tu_tensor *t)
{
    ncs r = {t->dims[0], t->dims[1], 1};
    for (int i = 2; i < t->nb; i++) r.s *= t->dims[i];
    return r;
}

/* The logical indices of group g's members, into idx; returns how many. */
static int64_t group_members(ncs d, udnnSoftmaxMode_t mode, int64_t g, int64_t *idx)
{
    int64_t k = 0;
    if (mode == UDNN_SOFTMAX_MODE_INSTANCE) {
        for (int64_t i = 0; i < d.c * d.s; i++) idx[k++] = g * d.c * d.s + i;
    } else {
        int64_t n = g / d.s, s = g % d.s;
        for (int64_t c = 0; c < d.c; c++) idx[k++] = (n * d.c + c) * d.s + s;
    }
    return k;
}

static int64_t group_total(ncs d, udnnSoftmaxMode_t mode)
{
    return mode == UDNN_SOFTMAX_MODE_INSTANCE ? d.n : d.n * d.s;
}

static void expect_fwd(udnnSoftmaxAlgorithm_t algo, udnnSoftmaxMode_t mode, const tu_tensor *x,
                       double *y)
{
    ncs d = ncs_of(x);
    int64_t *idx = malloc((size_t)(d.c * d.s) * sizeof *idx);
    for (int64_t g = 0; g < group_total(d, mode); g++) {
        int64_t k = group_members(d, mode, g, idx);
        double m = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < k; j++) m = fmax(m, tu_get(x, idx[j]));
        for (int64_t j = 0; j < k; j++) sum += exp(tu_get(x, idx[j]) - m);
        double log_sum_exp = m + log(sum);
        for (int64_t j = 0; j < k; j++) {
            double v = tu_get(x, idx[j]) - log_sum_exp;
            y[idx[j]] = algo == UDNN_SOFTMAX_LOG ? v : exp(v);
        }
    }
    free(idx);
}

/* dx for y (the forward output, log softmax for LOG) and dy. */
static void expect_bwd(udnnSoftmaxAlgorithm_t algo, udnnSoftmaxMode_t mode, const tu_tensor *y,
                       const tu_tensor *dy, double *dx)
{
    ncs d = ncs_of(y);
    int64_t *idx = malloc((size_t)(d.c * d.s) * sizeof *idx);
    for (int64_t g = 0; g < group_total(d, mode); g++) {
        int64_t k = group_members(d, mode, g, idx);
        double dot = 0.0, sum = 0.0;
        for (int64_t j = 0; j < k; j++) {
            dot += tu_get(y, idx[j]) * tu_get(dy, idx[j]);
            sum += tu_get(dy, idx[j]);
        }
        for (int64_t j = 0; j < k; j++) {
            double yv = tu_get(y, idx[j]), g_ = tu_get(dy, idx[j]);
            dx[idx[j]] = algo == UDNN_SOFTMAX_LOG ? g_ - exp(yv) * sum : yv * g_ - yv * dot;
        }
    }
    free(idx);
}

/* ---- helpers ---------------------------------------------------------------------- */

static udnnStatus_t run_fwd(udnnHandle_t h, udnnSoftmaxAlgorithm_t algo, udnnSoftmaxMode_t mode,
                            double alpha, tu_tensor *x, double beta, tu_tensor *y)
{
    tu_scalar a = tu_scalar_of(x->dtype, alpha), b = tu_scalar_of(x->dtype, beta);
    return udnnSoftmaxForward(h, algo, mode, &a, x->desc, tu_buf_ptr(&x->buf), &b, y->desc,
                              tu_buf_ptr(&y->buf));
}

static udnnStatus_t run_bwd(udnnHandle_t h, udnnSoftmaxAlgorithm_t algo, udnnSoftmaxMode_t mode,
                            double alpha, tu_tensor *y, tu_tensor *dy, double beta,
                            tu_tensor *dx)
{
    tu_scalar a = tu_scalar_of(y->dtype, alpha), b = tu_scalar_of(y->dtype, beta);
    return udnnSoftmaxBackward(h, algo, mode, &a, y->desc, tu_buf_ptr(&y->buf), dy->desc,
                               tu_buf_ptr(&dy->buf), &b, dx->desc, tu_buf_ptr(&dx->buf));
}

/* y as the caller of the backward pass holds it: the forward's output in
 * the tensor's type. */
static void set_y_of_x(tu_tensor *y, udnnSoftmaxAlgorithm_t algo, udnnSoftmaxMode_t mode,
                       const tu_tensor *x)
{
    double *v = malloc((size_t)x->count * sizeof *v);
    expect_fwd(algo, mode, x, v);
    for (int64_t i = 0; i < x->count; i++) tu_set(y, i, v[i]);
    tu_upload(y);
    free(v);
}

/* C = 1 in CHANNEL mode gives an all-ones (all-zero for LOG) result; the
 * test of its own checks that case exactly. */
static int skip_shape(int s, udnnSoftmaxMode_t mode)
{
    return shapes[s][2] == 1 && mode == UDNN_SOFTMAX_MODE_CHANNEL;
}

static void describe(char *buf, size_t n, udnnBackend_t be, int algo, int mode,
                     udnnDataType_t t, tu_layout l, const char *shape)
{
    snprintf(buf, n, "%s %s %s %s %s %s", tu_backend_name(be), algo_names[algo],
             mode_names[mode], tu_dtype_name(t), tu_layout_name(l), shape);
}

/* x's values for a problem: its host mirror set and uploaded. */
typedef void (*x_filler)(tu_tensor *x, udnnSoftmaxMode_t mode);

static void fill_spread(tu_tensor *x, udnnSoftmaxMode_t mode)
{
    (void)mode;
    tu_fill_uniform(x, -4.0, 4.0);
}

/* One problem of the given dims forward then backward with the given
 * alpha and beta, x from fill; `shape` names the dims in messages. */
static void check_dims(udnnHandle_t h, udnnBackend_t be, int algo_i, int mode_i,
                       udnnDataType_t t, tu_layout l, int rank, const int *dims,
                       const char *shape, double alpha, double beta, x_filler fill)
{
    udnnSoftmaxAlgorithm_t algo = algos[algo_i];
    udnnSoftmaxMode_t mode = sm_modes[mode_i];
    tu_tensor x, y, dy, dx;
    tu_tensor_init(&x, h, t, rank, dims, l);
    tu_tensor_init(&y, h, t, rank, dims, l);
    tu_tensor_init(&dy, h, t, rank, dims, l);
    tu_tensor_init(&dx, h, t, rank, dims, l);
    char what[160];
    describe(what, sizeof what, be, algo_i, mode_i, t, l, shape);
    fill(&x, mode);
    double *ref = malloc((size_t)x.count * sizeof *ref);

    expect_fwd(algo, mode, &x, ref);
    /* beta = 0: the poisoned (NaN) output must not count */
    tu_blend_drawn(ref, alpha, beta, &y);
    tu_ok(run_fwd(h, algo, mode, alpha, &x, beta, &y));
    tu_check_tensor(&y, ref, what);

    set_y_of_x(&y, algo, mode, &x);
    tu_fill_uniform(&dy, -1.0, 1.0);
    expect_bwd(algo, mode, &y, &dy, ref);
    tu_blend_drawn(ref, alpha, beta, &dx);
    tu_ok(run_bwd(h, algo, mode, alpha, &y, &dy, beta, &dx));
    tu_check_tensor(&dx, ref, what);

    free(ref);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_tensor_free(&dy);
    tu_tensor_free(&dx);
}

/* Shape s of the table forward then backward. */
static void check_problem(udnnHandle_t h, udnnBackend_t be, int algo_i, int mode_i,
                          udnnDataType_t t, tu_layout l, int s, double alpha, double beta)
{
    char shape[32];
    snprintf(shape, sizeof shape, "shape %d", s);
    check_dims(h, be, algo_i, mode_i, t, l, shapes[s][0], &shapes[s][1], shape, alpha, beta,
               fill_spread);
}

/* ---- algo x mode x type x layout ------------------------------------------------------ */

START_TEST(test_algos_modes)
{
    tu_seed_fresh();
    int algo = _i % N_ALGOS, mode = (_i / N_ALGOS) % N_MODES;
    udnnDataType_t t = tu_float_types[(_i / (N_ALGOS * N_MODES)) % N_TYPES];
    tu_layout l = (tu_layout)(_i / (N_ALGOS * N_MODES * N_TYPES));
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++)
            if (!skip_shape(s, sm_modes[mode])) check_problem(h, bk, algo, mode, t, l, s, 1.0, 0.0);
    }
}
END_TEST

START_TEST(test_alpha_beta)
{
    tu_seed_fresh();
    int algo = _i % N_ALGOS, mode = _i % N_MODES;
    udnnDataType_t t = tu_float_types[_i / N_ALGOS];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++)
            if (!skip_shape(s, sm_modes[mode]))
                check_problem(h, bk, algo, mode, t, l, s, -1.25, 0.5);
    }
}
END_TEST

/* ---- hand-computed values -------------------------------------------------------------- */

/* 1 x 2 x 1 x 2 with x = c0 {0, 2}, c1 {1, 2}: CHANNEL pools (0, 1) and
 * (2, 2); INSTANCE pools all four. Logical order c0p0, c0p1, c1p0, c1p1. */
static const double hand_x[4] = {0, 2, 1, 2};
static const double hand_y[N_MODES][2][4] = {
    /* INSTANCE: softmax, log softmax */
    {{0.05406459218899647, 0.3994863046503028, 0.14696279851039795, 0.3994863046503028},
     {-2.9175757955891974, -0.9175757955891977, -1.9175757955891977, -0.9175757955891977}},
    /* CHANNEL */
    {{0.2689414213699951, 0.5, 0.7310585786300049, 0.5},
     {-1.3132616875182228, -0.6931471805599453, -0.31326168751822286, -0.6931471805599453}},
};

START_TEST(test_hand_forward)
{
    int algo = _i % N_ALGOS, mode = (_i / N_ALGOS) % N_MODES;
    udnnDataType_t t = tu_float_types[_i / (N_ALGOS * N_MODES)];
    static const int dims[4] = {1, 2, 1, 2};
    const double *want = hand_y[mode][algos[algo] == UDNN_SOFTMAX_LOG];
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        for (int i = 0; i < 4; i++) tu_set(&x, i, hand_x[i]);
        tu_upload(&x);
        tu_ok(run_fwd(h, algos[algo], sm_modes[mode], 1.0, &x, 0.0, &y));
        tu_check_tensor(&y, want, algo_names[algo]);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

/* Two channels: softmax y {0.25, 0.75}, dy {1, 0} gives dx {0.1875,
 * -0.1875}; LOG y {-1, -2}, dy {1, 2} gives dx = dy - exp(y) * 3. */
START_TEST(test_hand_backward)
{
    int algo = _i % N_ALGOS, mode = (_i / N_ALGOS) % N_MODES;
    udnnDataType_t t = tu_float_types[_i / (N_ALGOS * N_MODES)];
    static const int dims[4] = {1, 2, 1, 1};
    int is_log = algos[algo] == UDNN_SOFTMAX_LOG;
    const double y_v[2] = {is_log ? -1 : 0.25, is_log ? -2 : 0.75};
    const double dy_v[2] = {1, is_log ? 2 : 0};
    const double want[2] = {is_log ? -0.103638323514327 : 0.1875,
                            is_log ? 1.593994150290162 : -0.1875};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor y, dy, dx;
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dy, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&dx, h, t, 4, dims, TU_NCHW);
        for (int i = 0; i < 2; i++) {
            tu_set(&y, i, y_v[i]);
            tu_set(&dy, i, dy_v[i]);
        }
        tu_upload(&y);
        tu_upload(&dy);
        tu_ok(run_bwd(h, algos[algo], sm_modes[mode], 1.0, &y, &dy, 0.0, &dx));
        tu_check_tensor(&dx, want, algo_names[algo]);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
    }
}
END_TEST

/* CHANNEL with C = 1: softmax is exactly 1, log softmax exactly 0, and
 * both gradients exactly 0. */
START_TEST(test_single_channel)
{
    tu_seed_fresh();
    int algo = _i % N_ALGOS;
    udnnDataType_t t = tu_float_types[_i / N_ALGOS];
    int is_log = algos[algo] == UDNN_SOFTMAX_LOG;
    static const int dims[4] = {2, 1, 3, 3};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y, dy, dx;
        tu_tensor_init(&x, h, t, 4, dims, TU_STRIDED);
        tu_tensor_init(&y, h, t, 4, dims, TU_STRIDED);
        tu_tensor_init(&dy, h, t, 4, dims, TU_STRIDED);
        tu_tensor_init(&dx, h, t, 4, dims, TU_STRIDED);
        tu_fill_uniform(&x, -3.0, 3.0);
        tu_fill_uniform(&dy, -1.0, 1.0);
        tu_ok(run_fwd(h, algos[algo], UDNN_SOFTMAX_MODE_CHANNEL, 1.0, &x, 0.0, &y));
        tu_ok(run_bwd(h, algos[algo], UDNN_SOFTMAX_MODE_CHANNEL, 1.0, &y, &dy, 0.0, &dx));
        tu_download(&y);
        tu_download(&dx);
        ck_assert(tu_buf_guards_intact(&y.buf) && tu_buf_guards_intact(&dx.buf));
        for (int64_t i = 0; i < y.count; i++) {
            ck_assert_msg(tu_get(&y, i) == (is_log ? 0.0 : 1.0), "%s: y[%lld] is %g",
                          algo_names[algo], (long long)i, tu_get(&y, i));
            ck_assert_msg(tu_get(&dx, i) == 0.0, "%s: dx[%lld] is %g", algo_names[algo],
                          (long long)i, tu_get(&dx, i));
        }
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dy);
        tu_tensor_free(&dx);
    }
}
END_TEST

/* ACCURATE and LOG subtract the max: inputs near 1000 stay finite. */
START_TEST(test_large_inputs)
{
    int is_log = _i % 2;
    udnnSoftmaxAlgorithm_t algo = is_log ? UDNN_SOFTMAX_LOG : UDNN_SOFTMAX_ACCURATE;
    udnnDataType_t t = tu_float_types[_i / 2];
    static const int dims[4] = {1, 2, 1, 1};
    static const double want[2][2] = {{0.00033535013046647816, 0.9996646498695336},
                                      {-8.000335406372896, -0.0003354063728956624}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor x, y;
        tu_tensor_init(&x, h, t, 4, dims, TU_NCHW);
        tu_tensor_init(&y, h, t, 4, dims, TU_NCHW);
        tu_set(&x, 0, 1024.0);
        tu_set(&x, 1, 1032.0);
        tu_upload(&x);
        tu_ok(run_fwd(h, algo, UDNN_SOFTMAX_MODE_CHANNEL, 1.0, &x, 0.0, &y));
        tu_check_tensor(&y, want[is_log], is_log ? "log" : "accurate");
        tu_tensor_free(&x);
        tu_tensor_free(&y);
    }
}
END_TEST

/* ---- in place -------------------------------------------------------------------------------- */

/* The backward with dx in dy's buffer, then in y's, then the forward
 * with y in x's. */
static void check_in_place(udnnHandle_t h, int algo, int mode, udnnDataType_t t, tu_layout l,
                           int rank, const int *dims, const char *what)
{
    char msg[160];
    tu_tensor x, y, dy;
    tu_tensor_init(&x, h, t, rank, dims, l);
    tu_tensor_init(&y, h, t, rank, dims, l);
    tu_tensor_init(&dy, h, t, rank, dims, l);
    tu_fill_uniform(&x, -4.0, 4.0);
    set_y_of_x(&y, algos[algo], sm_modes[mode], &x);
    tu_fill_uniform(&dy, -1.0, 1.0);
    double *ref = malloc((size_t)x.count * sizeof *ref);
    expect_bwd(algos[algo], sm_modes[mode], &y, &dy, ref);
    tu_ok(run_bwd(h, algos[algo], sm_modes[mode], 1.0, &y, &dy, 0.0, &dy));
    snprintf(msg, sizeof msg, "%s backward, dx over dy", what);
    tu_check_tensor(&dy, ref, msg);
    /* y is intact: dx over y, from fresh dy */
    tu_fill_uniform(&dy, -1.0, 1.0);
    expect_bwd(algos[algo], sm_modes[mode], &y, &dy, ref);
    tu_ok(run_bwd(h, algos[algo], sm_modes[mode], 1.0, &y, &dy, 0.0, &y));
    snprintf(msg, sizeof msg, "%s backward, dx over y", what);
    tu_check_tensor(&y, ref, msg);
    expect_fwd(algos[algo], sm_modes[mode], &x, ref);
    tu_ok(run_fwd(h, algos[algo], sm_modes[mode], 1.0, &x, 0.0, &x));
    snprintf(msg, sizeof msg, "%s forward in place", what);
    tu_check_tensor(&x, ref, msg);
    free(ref);
    tu_tensor_free(&x);
    tu_tensor_free(&y);
    tu_tensor_free(&dy);
}

/* Large in-place runs, DOUBLE INSTANCE NCHW, for the GPU's paths of rows
 * too long for a team's registers, as an H100 (132 multiprocessors)
 * chooses them: sm_keep_kernel's grid is 264 blocks there. */
static const struct {
    udnnSoftmaxAlgorithm_t algo;
    int dims[4];
} ip_large[] = {
    /* 528 rows of 8194, enough for a block each: the forward's
     * sm_keep_kernel with no vectors held in shared memory, the
     * backward's with; a row is 4097 16-byte vectors, one more than a
     * block holds, so 2 items, 1056 in all: 4 rounds of the grid */
    {UDNN_SOFTMAX_ACCURATE, {528, 2, 17, 241}},
    /* one row of 3264000: more items than sm_keep_kernel's grid (266
     * forward with vectors in shared memory, 399 without; 399 backward),
     * so sm_rows_part_kernel and sm_rows_final_kernel take it */
    {UDNN_SOFTMAX_LOG, {1, 2, 1280, 1275}},
};
#define N_IP_LARGE ((int)(sizeof ip_large / sizeof *ip_large))

/* Indices below N_ALGOS * N_MODES * N_LAYOUTS: a small 5-D shape (the type
 * rotating); then one of ip_large. */
START_TEST(test_in_place)
{
    tu_seed_fresh();
    if (_i >= N_ALGOS * N_MODES * N_LAYOUTS) {
        const int k = _i - N_ALGOS * N_MODES * N_LAYOUTS;
        const int *dims = ip_large[k].dims;
        char shape[48];
        snprintf(shape, sizeof shape, "%dx%dx%dx%d", dims[0], dims[1], dims[2], dims[3]);
        TU_FOR_EACH_BACKEND(h, bk)
        {
            check_in_place(h, algo_index(ip_large[k].algo), MODE_INSTANCE, UDNN_DATA_DOUBLE,
                           TU_NCHW, 4, dims, shape);
        }
        return;
    }
    int algo = _i % N_ALGOS, mode = (_i / N_ALGOS) % N_MODES;
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i % N_LAYOUTS);
    static const int dims[5] = {2, 3, 2, 3, 3};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        check_in_place(h, algo, mode, t, l, 5, dims, "");
    }
}
END_TEST

/* ---- long rows ------------------------------------------------------------------------------- */

/* Rows longer than a team of lanes holds in registers: INSTANCE over 5 x
 * 64 x 64 = 20480 elements, and over 5 x 63 x 65 (rows at every offset
 * from a 16-byte boundary); INSTANCE and CHANNEL over 20003 channels (NHWC:
 * contiguous channels). The GPU backend holds them in the registers of
 * several blocks, or splits them over blocks. */
static const int long_shapes[][5] = {{4, 3, 5, 64, 64}, {4, 3, 5, 63, 65}, {4, 2, 20003, 1, 3}};
#define N_LONG ((int)(sizeof long_shapes / sizeof *long_shapes))

START_TEST(test_long_rows)
{
    tu_seed_fresh();
    int algo = _i % N_ALGOS;
    udnnDataType_t t = tu_float_types[(_i / N_ALGOS) % N_TYPES];
    tu_layout l = _i / (N_ALGOS * N_TYPES) ? TU_NHWC : TU_NCHW;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_LONG; s++) {
            const int rank = long_shapes[s][0], *dims = &long_shapes[s][1];
            char shape[48];
            snprintf(shape, sizeof shape, "%dx%dx%dx%d", dims[0], dims[1], dims[2], dims[3]);
            for (int mode = 0; mode < N_MODES; mode++) {
                if (sm_modes[mode] == UDNN_SOFTMAX_MODE_CHANNEL && dims[1] < 1000) continue;
                check_dims(h, bk, algo, mode, t, l, rank, dims, shape, 1.0, 0.0, fill_spread);
                check_dims(h, bk, algo, mode, t, l, rank, dims, shape, -1.25, 0.5, fill_spread);
                check_in_place(h, algo, mode, t, l, rank, dims, shape);
            }
        }
    }
}
END_TEST

/* ---- rows held in a thread-block cluster -------------------------------------------------- */

/* 16-bit INSTANCE rows that a GPU with clusters holds in the shared memory
 * of a cluster a row, where the clusters fill the machine: 140 rows of
 * 60008 elements, 2 blocks a row, and 20 rows of 500008, 16 blocks a row,
 * each the last block's share shorter than the others'. The backward
 * launches only the resident clusters (fewer than the rows on an H100 or
 * H200), so its clusters take a second row. Types and algos as
 * test_many_rounds, whose rows are too few for clusters. GPU backends
 * only. */
static const int cluster_dims[][4] = {{140, 4, 2, 7501}, {20, 8, 62501, 1}};
static const struct {
    udnnDataType_t type;
    udnnSoftmaxAlgorithm_t algo;
} cluster_cases[] = {
    {UDNN_DATA_HALF, UDNN_SOFTMAX_LOG},
    {UDNN_DATA_BFLOAT16, UDNN_SOFTMAX_ACCURATE},
    {UDNN_DATA_BFLOAT16, UDNN_SOFTMAX_LOG},
};
#define N_CLUSTER_CASES ((int)(sizeof cluster_cases / sizeof *cluster_cases))

START_TEST(test_cluster_rows)
{
    tu_seed_fresh();
    const int algo = algo_index(cluster_cases[_i % N_CLUSTER_CASES].algo);
    const int *dims = cluster_dims[_i / N_CLUSTER_CASES];
    char shape[48];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d", dims[0], dims[1], dims[2], dims[3]);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        if (bk == UDNN_BACKEND_CPU) continue;
        const udnnDataType_t t = cluster_cases[_i % N_CLUSTER_CASES].type;
        check_dims(h, bk, algo, MODE_INSTANCE, t, TU_NCHW, 4, dims, shape, 1.0, 0.0, fill_spread);
        check_dims(h, bk, algo, MODE_INSTANCE, t, TU_NCHW, 4, dims, shape, -1.25, 0.5, fill_spread);
    }
}
END_TEST

/* ---- rows over many rounds --------------------------------------------------------------- */

/* 80 rows of 98304 elements (INSTANCE over 24 x 64 x 64): on a GPU the
 * one-read path splits each row among a team of blocks, each holding its
 * item in registers and shared memory (16-bit inputs too, whose forward
 * takes the held elements' exps again for the output); on an H100, FLOAT
 * and DOUBLE, and every backward, cut the rows into more items than the
 * grid holds, so that blocks take a second round and ask L2 for their
 * next item while they wait. GPU backends only: the CPU's runs are the
 * other tests'. HALF takes LOG alone: in rows this long, y and dx of the
 * other algos lie in half's subnormal range, whose rounding alone exceeds
 * the tolerance (the CPU backend's results too: 1.46e-3 for FAST);
 * BFLOAT16 takes them. */
static const int round_dims[] = {80, 24, 64, 64};
static const struct {
    udnnDataType_t type;
    udnnSoftmaxAlgorithm_t algo;
} round_cases[] = {
    {UDNN_DATA_FLOAT, UDNN_SOFTMAX_FAST},     {UDNN_DATA_FLOAT, UDNN_SOFTMAX_ACCURATE},
    {UDNN_DATA_DOUBLE, UDNN_SOFTMAX_ACCURATE}, {UDNN_DATA_DOUBLE, UDNN_SOFTMAX_LOG},
    {UDNN_DATA_HALF, UDNN_SOFTMAX_LOG},       {UDNN_DATA_BFLOAT16, UDNN_SOFTMAX_FAST},
    {UDNN_DATA_BFLOAT16, UDNN_SOFTMAX_ACCURATE}, {UDNN_DATA_BFLOAT16, UDNN_SOFTMAX_LOG},
};
#define N_ROUND_CASES ((int)(sizeof round_cases / sizeof *round_cases))

START_TEST(test_many_rounds)
{
    tu_seed_fresh();
    const int algo = algo_index(round_cases[_i].algo);
    ck_assert_int_eq(sm_modes[MODE_INSTANCE], UDNN_SOFTMAX_MODE_INSTANCE);
    TU_FOR_EACH_BACKEND(h, bk)
    {
        if (bk != UDNN_BACKEND_CPU)
            check_dims(h, bk, algo, MODE_INSTANCE, round_cases[_i].type, TU_NCHW, 4, round_dims,
                       "80x24x64x64", 1.0, 0.0, fill_spread);
    }
}
END_TEST

/* ---- backward where y peaks ------------------------------------------------------------ */

/* One member of each group at x = P, the rest at 0, with P such that the
 * other members' y add to about 3e-5: dy - sum(dy y) then cancels to
 * about 3e-5 of the sum, so a sum rounded once to the type misses the
 * tolerance (FLOAT: dx off by about 5e-4); the sum must be kept to more
 * than the type's precision (the CPU keeps it in double, then subtracts
 * it as a float pair). Rows of 5, 18 and 30000 members, and CHANNEL over
 * positions (columns in NCHW). FLOAT only: in DOUBLE the oracle's own
 * rounding times the cancellation reaches the tolerance. */
static const int peaked_shapes[][5] = {
    {4, 64, 5, 1, 1}, {4, 2, 5, 3, 3}, {4, 8, 2, 3, 3}, {4, 2, 3, 100, 100}};
#define N_PEAKED ((int)(sizeof peaked_shapes / sizeof *peaked_shapes))

static void fill_peaked(tu_tensor *x, udnnSoftmaxMode_t mode)
{
    ncs d = ncs_of(x);
    int64_t *idx = malloc((size_t)(d.c * d.s) * sizeof *idx);
    ck_assert_ptr_nonnull(idx);
    for (int64_t g = 0; g < group_total(d, mode); g++) {
        const int64_t k = group_members(d, mode, g, idx);
        const double peak = log((double)(k - 1) / 3e-5);
        int64_t pick = (int64_t)tu_uniform(0.0, (double)k);
        if (pick >= k) pick = k - 1;
        for (int64_t j = 0; j < k; j++) tu_set(x, idx[j], j == pick ? peak : 0.0);
    }
    free(idx);
    tu_upload(x);
}

START_TEST(test_peaked_backward)
{
    tu_seed_fresh();
    const tu_layout l = (tu_layout)_i;
    const int algo = 1; /* ACCURATE; FAST's backward is the same */
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_PEAKED; s++)
            for (int mode = 0; mode < N_MODES; mode++) {
                const int *dims = &peaked_shapes[s][1];
                char shape[48];
                snprintf(shape, sizeof shape, "peaked %dx%dx%dx%d", dims[0], dims[1], dims[2],
                         dims[3]);
                check_dims(h, bk, algo, mode, UDNN_DATA_FLOAT, l, peaked_shapes[s][0], dims, shape,
                           1.0, 0.0, fill_peaked);
            }
    }
}
END_TEST

/* ---- finite differences in DOUBLE ------------------------------------------------------------ */

/* L = sum(dy . softmax(x)), through SoftmaxForward. */
static double loss(udnnHandle_t h, int algo, int mode, tu_tensor *x, tu_tensor *y,
                   const double *dy)
{
    tu_upload(x);
    tu_ok(run_fwd(h, algos[algo], sm_modes[mode], 1.0, x, 0.0, y));
    tu_download(y);
    return tu_dot(y, dy);
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    int algo = _i % N_ALGOS, mode = (_i / N_ALGOS) % N_MODES;
    tu_layout l = (tu_layout)(_i / (N_ALGOS * N_MODES));
    const double step = 1e-6;
    TU_FOR_EACH_BACKEND(h, bk)
    {
        for (int s = 0; s < N_SHAPES; s++) {
            if (skip_shape(s, sm_modes[mode])) continue;
            int rank = shapes[s][0];
            const int *dims = &shapes[s][1];
            tu_tensor x, y, dy, dx;
            tu_tensor_init(&x, h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&y, h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&dy, h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&dx, h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_fill_uniform(&x, -3.0, 3.0);
            tu_fill_uniform(&dy, -1.0, 1.0);
            double *dyv = malloc((size_t)x.count * sizeof *dyv);
            double *num = malloc((size_t)x.count * sizeof *num);
            double *ana = malloc((size_t)x.count * sizeof *ana);
            tu_values(&dy, dyv);
            tu_ok(run_fwd(h, algos[algo], sm_modes[mode], 1.0, &x, 0.0, &y));
            tu_ok(run_bwd(h, algos[algo], sm_modes[mode], 1.0, &y, &dy, 0.0, &dx));
            for (int64_t i = 0; i < x.count; i++) {
                double xi = tu_get(&x, i);
                tu_set(&x, i, xi + step);
                double up = loss(h, algo, mode, &x, &y, dyv);
                tu_set(&x, i, xi - step);
                double down = loss(h, algo, mode, &x, &y, dyv);
                tu_set(&x, i, xi);
                num[i] = (up - down) / (2.0 * step);
            }
            tu_download(&dx);
            tu_values(&dx, ana);
            double err = tu_rel_error(ana, num, x.count);
            ck_assert_msg(err < 1e-6, "%s %s %s shape %d: rel err %g vs finite differences "
                                      "(seed %llu)",
                          tu_backend_name(bk), algo_names[algo], mode_names[mode], s, err,
                          (unsigned long long)tu_seed_used());
            free(dyv);
            free(num);
            free(ana);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            tu_tensor_free(&dy);
            tu_tensor_free(&dx);
        }
    }
}
END_TEST

/* ---- validation -------------------------------------------------------------------------------
 */

/* Three f32 2x3x4x5 tensors and the wrong descriptors the cases swap in. */
typedef struct {
    udnnHandle_t h;
    tu_tensor a, b, out;
    udnnTensorDescriptor_t unset, s8, f64, other_dims, rank3, rank6, nhwc;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 3, 5, 4}, r3[3] = {2, 3, 20},
                     r6[6] = {2, 3, 4, 5, 1, 1};
    f->h = tu_handle(be);
    tu_tensor_init(&f->a, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->b, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->out, f->h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_fill_uniform(&f->a, 0.1, 1);
    tu_fill_uniform(&f->b, -1, 1);
    tu_ok(udnnCreateTensorDescriptor(&f->unset));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->rank3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, r3);
    f->rank6 = tu_packed_desc(UDNN_DATA_FLOAT, 6, r6);
    tu_ok(udnnCreateTensorDescriptor(&f->nhwc));
    tu_ok(udnnSetTensor4dDescriptor(f->nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 4, 5));
}

static void fixture_free(fixture *f)
{
    tu_tensor_free(&f->a);
    tu_tensor_free(&f->b);
    tu_tensor_free(&f->out);
    udnnTensorDescriptor_t descs[] = {f->unset, f->s8, f->f64, f->other_dims,
                                      f->rank3, f->rank6, f->nhwc};
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) udnnDestroyTensorDescriptor(descs[i]);
    udnnDestroy(f->h);
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

static const bad_expect fwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},
    {UDNN_STATUS_BAD_PARAM, "algo 3"},
    {UDNN_STATUS_BAD_PARAM, "algo -1"},
    {UDNN_STATUS_BAD_PARAM, "mode 2"},
    {UDNN_STATUS_BAD_PARAM, "alpha"},
    {UDNN_STATUS_BAD_PARAM, "xDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "xDesc has 6 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has dimension 2"},
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
        udnnSoftmaxAlgorithm_t algo = UDNN_SOFTMAX_ACCURATE;
        udnnSoftmaxMode_t mode = UDNN_SOFTMAX_MODE_CHANNEL;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t xd = f.a.desc, yd = f.out.desc;
        const void *x = tu_buf_ptr(&f.a.buf);
        void *y = tu_buf_ptr(&f.out.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: algo = (udnnSoftmaxAlgorithm_t)3; break;
        case 2: algo = (udnnSoftmaxAlgorithm_t)-1; break;
        case 3: mode = (udnnSoftmaxMode_t)2; break;
        case 4: alpha = NULL; break;
        case 5: xd = NULL; break;
        case 6: xd = f.unset; break;
        case 7: x = NULL; break;
        case 8: beta = NULL; break;
        case 9: yd = NULL; break;
        case 10: yd = f.unset; break;
        case 11: y = NULL; break;
        case 12: xd = yd = f.s8; break;
        case 13: xd = yd = f.rank3; break;
        case 14: xd = yd = f.rank6; break;
        case 15: yd = f.f64; break;
        case 16: yd = f.other_dims; break;
        case 17: yd = f.nhwc, y = tu_buf_ptr(&f.a.buf); break;
        }
        udnnStatus_t st = udnnSoftmaxForward(h, algo, mode, alpha, xd, x, beta, yd, y);
        tu_assert_fails(st, fwd_bad[_i].status, "udnnSoftmaxForward", fwd_bad[_i].arg);
        tu_assert_untouched(&f.out.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

static const bad_expect bwd_bad[] = {
    {UDNN_STATUS_BAD_PARAM, "handle"},
    {UDNN_STATUS_BAD_PARAM, "algo 7"},
    {UDNN_STATUS_BAD_PARAM, "mode -1"},
    {UDNN_STATUS_BAD_PARAM, "alpha"},
    {UDNN_STATUS_BAD_PARAM, "yDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "beta"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has not"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "yDesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "yDesc has 3 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has data type"},
    {UDNN_STATUS_BAD_PARAM, "dyDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dxDesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "in place"},
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
        udnnSoftmaxAlgorithm_t algo = UDNN_SOFTMAX_LOG;
        udnnSoftmaxMode_t mode = UDNN_SOFTMAX_MODE_INSTANCE;
        const void *alpha = &one, *beta = &zero;
        udnnTensorDescriptor_t yd = f.a.desc, dyd = f.b.desc, dxd = f.out.desc;
        const void *y = tu_buf_ptr(&f.a.buf), *dy = tu_buf_ptr(&f.b.buf);
        void *dx = tu_buf_ptr(&f.out.buf);
        switch (_i) {
        case 0: h = NULL; break;
        case 1: algo = (udnnSoftmaxAlgorithm_t)7; break;
        case 2: mode = (udnnSoftmaxMode_t)-1; break;
        case 3: alpha = NULL; break;
        case 4: yd = NULL; break;
        case 5: yd = f.unset; break;
        case 6: y = NULL; break;
        case 7: dyd = NULL; break;
        case 8: dyd = f.unset; break;
        case 9: dy = NULL; break;
        case 10: beta = NULL; break;
        case 11: dxd = NULL; break;
        case 12: dxd = f.unset; break;
        case 13: dx = NULL; break;
        case 14: yd = dyd = dxd = f.s8; break;
        case 15: yd = dyd = dxd = f.rank3; break;
        case 16: dyd = f.f64; break;
        case 17: dxd = f.f64; break;
        case 18: dyd = f.other_dims; break;
        case 19: dxd = f.other_dims; break;
        case 20: dxd = f.nhwc, dx = tu_buf_ptr(&f.b.buf); break;
        case 21: dxd = f.nhwc, dx = tu_buf_ptr(&f.a.buf); break;
        }
        udnnStatus_t st = udnnSoftmaxBackward(h, algo, mode, alpha, yd, y, dyd, dy, beta, dxd, dx);
        tu_assert_fails(st, bwd_bad[_i].status, "udnnSoftmaxBackward", bwd_bad[_i].arg);
        tu_assert_untouched(&f.out.buf, "rejected call");
        fixture_free(&f);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("softmax");
    /* the ops in several cases, so that a slow tool (compute-sanitizer's
     * racecheck) can run them apart: CK_RUN_CASE=modes, ... */
    TCase *modes = tcase_create("modes");
    tcase_add_loop_test(modes, test_algos_modes, 0, N_ALGOS * N_MODES * N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(modes, test_finite_differences, 0, N_ALGOS * N_MODES * N_LAYOUTS);
    TCase *hand = tcase_create("hand");
    tcase_add_loop_test(hand, test_alpha_beta, 0, N_ALGOS * N_TYPES);
    tcase_add_loop_test(hand, test_hand_forward, 0, N_ALGOS * N_MODES * N_TYPES);
    tcase_add_loop_test(hand, test_hand_backward, 0, N_ALGOS * N_MODES * N_TYPES);
    tcase_add_loop_test(hand, test_single_channel, 0, N_ALGOS * N_TYPES);
    tcase_add_loop_test(hand, test_peaked_backward, 0, N_LAYOUTS);
    TCase *sizes = tcase_create("sizes");
    tcase_add_loop_test(sizes, test_large_inputs, 0, 2 * N_TYPES);
    tcase_add_loop_test(sizes, test_in_place, 0, N_ALGOS * N_MODES * N_LAYOUTS + N_IP_LARGE);
    tcase_add_loop_test(sizes, test_long_rows, 0, N_ALGOS * N_TYPES * 2);
    TCase *rounds = tcase_create("rounds");
    tcase_add_loop_test(rounds, test_many_rounds, 0, N_ROUND_CASES);
    tcase_add_loop_test(rounds, test_cluster_rows, 0, N_CLUSTER_CASES * 2);
    TCase *ops[4] = {modes, hand, sizes, rounds};
    for (int i = 0; i < 4; i++) {
        tcase_set_timeout(ops[i], 60);
        suite_add_tcase(s, ops[i]);
    }

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_fwd_bad, 0, N_FWD_BAD);
    tcase_add_loop_test(bad, test_bwd_bad, 0, N_BWD_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
