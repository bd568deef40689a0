/* check_fast_conv.c - the fast CPU solvers of convolution and matrix
 * product (cpu/fast/gemm.c, conv_gemm.c, matmul.c), on the CPU backend:
 *  - the SGEMM through udnnMatMul at sizes around its blocking (1, 7, 8,
 *    9, 63, 64, 65, 255, 257, and past a block of rows and of depth),
 *    every transpose, packed and padded layouts, batches and broadcast,
 *    on every micro-kernel (UDNN_CPU_ISA), against the test's own product
 *    in double;
 *  - convolutions large and odd (the Fashion-MNIST network's layers, a
 *    ResNet-like 3x3 64->64, problems cut into blocks of outputs, groups,
 *    3-D, strides, dilation, mixed layouts, one image shared by all
 *    threads), every direction and the fused conv-bias-activation, against
 *    the reference solver run on the same inputs in the same test
 *    (UDNN_DISABLE_SOLVERS="fast_*" between the calls);
 *  - 1, 2 and 3 threads give the same bits;
 *  - workspaces: never written past, too small or NULL refused, bounded
 *    past 16 images and by one image, the same for every thread count;
 *    the reasons the solvers decline; the dispatch log. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/testutil.h"

/* ---- switches the tests turn --------------------------------------------------- */

static void use_reference(int on)
{
    if (on)
        setenv("UDNN_DISABLE_SOLVERS", "fast_*", 1);
    else
        unsetenv("UDNN_DISABLE_SOLVERS");
}

/* The micro-kernels UDNN_CPU_ISA can ask for (capped by the CPU). */
static const char *const isas[3] = {"avx512", "avx2", "sse2"};

/* omp_set_num_threads, looked up at run time: libudnn brings libgomp in,
 * the test itself is not built with OpenMP. 0 when there is none. */
static int set_threads(int n)
{
    static void (*set)(int);
    if (set == NULL) *(void **)&set = dlsym(RTLD_DEFAULT, "omp_set_num_threads");
    if (set == NULL) return 0;
    set(n);
    return 1;
}

static udnnHandle_t cpu_handle(void)
{
    return tu_handle(UDNN_BACKEND_CPU);
}

static double *values_of(const tu_tensor *t)
{
    double *v = malloc((size_t)t->count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    tu_values(t, v);
    return v;
}

/* ---- the SGEMM through udnnMatMul --------------------------------------------------- */

/* out = op(A) x op(B) in double from the stored values; op(A) is m x k. */
static double *product(const tu_tensor *a, int ta, const tu_tensor *b, int tb, int m, int n, int k)
{
    double *av = values_of(a), *bv = values_of(b);
    double *out = calloc((size_t)m * n, sizeof *out);
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < m; i++)
        for (int q = 0; q < k; q++) {
            const double x = ta ? av[(int64_t)q * m + i] : av[(int64_t)i * k + q];
            for (int j = 0; j < n; j++)
                out[(int64_t)i * n + j] +=
                    x * (tb ? bv[(int64_t)j * k + q] : bv[(int64_t)q * n + j]);
        }
    free(av);
    free(bv);
    return out;
}

static void matrix_init(tu_tensor *t, udnnHandle_t h, int rows, int cols, int padded)
{
    const int dims[2] = {rows, cols};
    tu_tensor_init(t, h, UDNN_DATA_FLOAT, 2, dims, padded ? TU_STRIDED : TU_NCHW);
}

/* C = alpha op(A) op(B) + beta C on every kernel, with beta 0 on a
 * poisoned C and beta != 0 on a filled one. */
static void check_product(int m, int n, int k, int ta, int tb, int padded)
{
    udnnHandle_t h = cpu_handle();
    tu_tensor a, b, c;
    matrix_init(&a, h, ta ? k : m, ta ? m : k, padded);
    matrix_init(&b, h, tb ? n : k, tb ? k : n, padded);
    matrix_init(&c, h, m, n, padded);
    tu_fill_uniform(&a, -1.0, 1.0);
    tu_fill_uniform(&b, -1.0, 1.0);
    double *prod = product(&a, ta, &b, tb, m, n, k), *want = malloc(sizeof(double) * m * n);
    ck_assert_ptr_nonnull(want);
    static const double blends[2][2] = {{1.0, 0.0}, {-0.5, 0.75}};
    for (int isa = 0; isa < 3; isa++)
        for (int bl = 0; bl < 2; bl++) {
            const float alpha = (float)blends[bl][0], beta = (float)blends[bl][1];
            setenv("UDNN_CPU_ISA", isas[isa], 1);
            if (beta == 0.0f) tu_buf_poison(&c.buf);
            memcpy(want, prod, sizeof(double) * m * n);
            tu_blend_drawn(want, alpha, beta, &c);
            tu_ok(udnnMatMul(h, ta, tb, &alpha, a.desc, tu_buf_ptr(&a.buf), b.desc,
                             tu_buf_ptr(&b.buf), &beta, c.desc, tu_buf_ptr(&c.buf)));
            char what[160];
            snprintf(what, sizeof what, "%dx%dx%d transA %d transB %d %s, %s, alpha %g beta %g", m,
                     n, k, ta, tb, padded ? "padded" : "packed", isas[isa], alpha, beta);
            tu_check_tensor(&c, want, what);
        }
    unsetenv("UDNN_CPU_ISA");
    free(prod);
    free(want);
    tu_tensor_free(&a);
    tu_tensor_free(&b);
    tu_tensor_free(&c);
    udnnDestroy(h);
}

static const int edge_sizes[9] = {1, 7, 8, 9, 63, 64, 65, 255, 257};

/* _i: size x transA x transB. Each of m, n and k takes every edge size,
 * beside two others. */
START_TEST(test_gemm_edges)
{
    tu_seed_fresh();
    const int i = _i / 4, ta = _i % 2, tb = _i / 2 % 2;
    const int s0 = edge_sizes[i], s1 = edge_sizes[(i + 4) % 9], s2 = edge_sizes[(i + 7) % 9];
    check_product(s0, s1, s2, ta, tb, i % 2);
    check_product(s2, s0, s1, ta, tb, (i + 1) % 2);
    check_product(s1, s2, s0, ta, tb, i % 2);
}
END_TEST

/* Past a block of rows (384) and of depth (256), a tall and a wide one,
 * and 512 cubed. _i: which, with every transpose. */
START_TEST(test_gemm_blocks)
{
    tu_seed_fresh();
    static const int sizes[3][3] = {{800, 70, 300}, {3, 1000, 600}, {512, 512, 512}};
    const int *s = sizes[_i / 4];
    check_product(s[0], s[1], s[2], _i % 2, _i / 2 % 2, _i % 3 == 0);
}
END_TEST

/* Batches share the threads' tiles as one range: 3-D, broadcast A and
 * broadcast B, on 1, 2 and 3 threads. _i: form. */
START_TEST(test_matmul_batches)
{
    tu_seed_fresh();
    const int batch = 7, m = 9, n = 40, k = 33;
    udnnHandle_t h = cpu_handle();
    const int a3[3] = {batch, m, k}, b3[3] = {batch, k, n}, c3[3] = {batch, m, n};
    const int a2[2] = {m, k}, b2[2] = {k, n};
    tu_tensor a, b, c;
    if (_i == 1)
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 2, a2, TU_NCHW);
    else
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 3, a3, TU_STRIDED);
    if (_i == 2)
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 2, b2, TU_STRIDED);
    else
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 3, b3, TU_NCHW);
    tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 3, c3, TU_STRIDED);
    tu_fill_uniform(&a, -1.0, 1.0);
    tu_fill_uniform(&b, -1.0, 1.0);
    double *want = calloc((size_t)c.count, sizeof *want);
    ck_assert_ptr_nonnull(want);
    for (int bb = 0; bb < batch; bb++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0.0;
                for (int q = 0; q < k; q++)
                    acc += tu_get(&a, ((_i == 1 ? 0 : bb) * m + i) * k + q) *
                           tu_get(&b, ((_i == 2 ? 0 : bb) * k + q) * n + j);
                want[(bb * m + i) * n + j] = 2.0 * acc;
            }
    const float alpha = 2.0f, beta = 0.0f;
    for (int threads = 1; threads <= 3; threads++) {
        if (!set_threads(threads) && threads > 1) break;
        tu_buf_poison(&c.buf);
        tu_ok(udnnMatMul(h, 0, 0, &alpha, a.desc, tu_buf_ptr(&a.buf), b.desc, tu_buf_ptr(&b.buf),
                         &beta, c.desc, tu_buf_ptr(&c.buf)));
        char what[96];
        snprintf(what, sizeof what, "batch form %d on %d threads", _i, threads);
        tu_check_tensor(&c, want, what);
    }
    free(want);
    tu_tensor_free(&a);
    tu_tensor_free(&b);
    tu_tensor_free(&c);
    udnnDestroy(h);
}
END_TEST

/* ---- convolutions against the reference ----------------------------------------------- */

typedef struct {
    const char *name;
    int nsp, n, c, k, g;
    int in[3], f[3], pad[3], stride[3], dil[3]; /* d, h, w; 2-D has d = 1 */
    udnnConvolutionMode_t mode;
    tu_layout xl, yl; /* x and dx; y, dy (and z = y); the filter follows x */
} conv_shape;

#define XCORR UDNN_CROSS_CORRELATION
#define CONV UDNN_CONVOLUTION
#define ONES                                                                                       \
    {                                                                                              \
        1, 1, 1                                                                                    \
    }

enum {
    NET_CONV1,
    NET_CONV2,
    RESNET,
    RESNET_NHWC,
    BLOCKS,
    BLOCKS_NHWC,
    DEEP_FILTER,
    STRIDED_MIXED,
    BLOCKS_3D,
    GROUPED_3D_NHWC,
    GROUPED_NHWC,
    DEPTHWISE,
    ONE_BY_ONE,
    ONE_BY_SEVEN,
    ONE_IMAGE,
    THREE_IMAGES,
    N_SHAPES
};

/* name; spatial dims, n, c, k, groups; in, filter, pad, stride, dilation
 * (d, h, w); mode; layouts of x and y. */
/* clang-format off */
static const conv_shape shapes[N_SHAPES] = {
    [NET_CONV1] = {"conv1 of the network", 2, 64, 1, 16, 1,
        {1, 28, 28}, {1, 5, 5}, {0, 2, 2}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [NET_CONV2] = {"conv2 of the network at batch 32", 2, 32, 16, 32, 1,
        {1, 14, 14}, {1, 5, 5}, {0, 2, 2}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [RESNET] = {"ResNet-like 3x3 64->64 on 14x14", 2, 4, 64, 64, 1,
        {1, 14, 14}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [RESNET_NHWC] = {"ResNet-like 3x3 64->64 on 14x14, NHWC", 2, 2, 64, 64, 1,
        {1, 14, 14}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, CONV, TU_NHWC, TU_NHWC},
    [BLOCKS] = {"2304 filter elements: two blocks of outputs", 2, 2, 256, 8, 1,
        {1, 14, 14}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [BLOCKS_NHWC] = {"2304 filter elements, NHWC", 2, 3, 256, 8, 1,
        {1, 14, 14}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, CONV, TU_NHWC, TU_NHWC},
    [DEEP_FILTER] = {"more than 4096 filter elements", 2, 1, 512, 4, 1,
        {1, 10, 10}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [STRIDED_MIXED] = {"stride 2, dilation 2, blocks; x NCHW, y NHWC", 2, 2, 300, 5, 1,
        {1, 23, 23}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}, {1, 2, 2}, XCORR, TU_NCHW, TU_NHWC},
    [BLOCKS_3D] = {"3-D in blocks of outputs", 3, 2, 64, 4, 1,
        {6, 8, 8}, {3, 3, 3}, ONES, ONES, ONES, CONV, TU_NCHW, TU_NCHW},
    [GROUPED_3D_NHWC] = {"3-D grouped, NHWC", 3, 3, 8, 6, 2,
        {5, 6, 7}, {2, 3, 2}, {1, 0, 1}, {2, 1, 2}, {1, 2, 1}, CONV, TU_NHWC, TU_NHWC},
    [GROUPED_NHWC] = {"grouped, strided, convolution mode, NHWC", 2, 8, 32, 16, 4,
        {1, 9, 9}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}, ONES, CONV, TU_NHWC, TU_NHWC},
    [DEPTHWISE] = {"depthwise", 2, 5, 16, 16, 16,
        {1, 12, 12}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [ONE_BY_ONE] = {"1x1, stride 2; x NHWC, y NCHW", 2, 6, 24, 40, 1,
        {1, 15, 15}, ONES, {0, 0, 0}, {1, 2, 2}, ONES, XCORR, TU_NHWC, TU_NCHW},
    [ONE_BY_SEVEN] = {"1x7, dilation 2 along w", 2, 3, 6, 10, 1,
        {1, 11, 20}, {1, 1, 7}, {0, 0, 3}, ONES, {1, 1, 2}, CONV, TU_NCHW, TU_NCHW},
    [ONE_IMAGE] = {"one image, grouped, shared by the threads", 2, 1, 8, 12, 2,
        {1, 17, 17}, {1, 3, 3}, {0, 1, 1}, ONES, ONES, XCORR, TU_NCHW, TU_NCHW},
    [THREE_IMAGES] = {"three images, NHWC", 2, 3, 8, 12, 2,
        {1, 17, 13}, {1, 3, 3}, {0, 2, 1}, {1, 2, 1}, ONES, XCORR, TU_NHWC, TU_NHWC},
};
/* clang-format on */

enum { FWD, BIAS_ACT, BWD_DATA, BWD_FILTER, N_DIRS };
static const char *const dir_names[N_DIRS] = {"forward", "conv-bias-activation", "backward data",
                                              "backward filter"};

typedef struct {
    conv_shape s;
    udnnHandle_t h;
    tu_tensor x, dx, y, dy, z, bias;
    tu_filter w, dw;
    udnnConvolutionDescriptor_t conv;
    udnnActivationDescriptor_t act;
    int z_is_y;
} conv_case;

static int out_size(const conv_shape *s, int j)
{
    return 1 + (s->in[j] + 2 * s->pad[j] - ((s->f[j] - 1) * s->dil[j] + 1)) / s->stride[j];
}

/* n, c, spatial... of a tensor of the shape's rank. */
static int dims_of(const conv_shape *s, int a, int b, const int sp[3], int dims[5])
{
    dims[0] = a;
    dims[1] = b;
    for (int j = 0; j < s->nsp; j++) dims[2 + j] = sp[3 - s->nsp + j];
    return s->nsp + 2;
}

static void case_init(conv_case *c, const conv_shape *s)
{
    memset(c, 0, sizeof *c);
    c->s = *s;
    c->h = cpu_handle();
    int out[3], xd[5], yd[5], wd[5], bd[5];
    for (int j = 0; j < 3; j++) out[j] = out_size(s, j);
    const int nb = dims_of(s, s->n, s->c, s->in, xd), ones[3] = ONES;
    dims_of(s, s->n, s->k, out, yd);
    dims_of(s, s->k, s->c / s->g, s->f, wd);
    dims_of(s, 1, s->k, ones, bd);
    tu_tensor_init(&c->x, c->h, UDNN_DATA_FLOAT, nb, xd, s->xl);
    tu_tensor_init(&c->dx, c->h, UDNN_DATA_FLOAT, nb, xd, s->xl);
    tu_tensor_init(&c->y, c->h, UDNN_DATA_FLOAT, nb, yd, s->yl);
    tu_tensor_init(&c->dy, c->h, UDNN_DATA_FLOAT, nb, yd, s->yl);
    tu_tensor_init(&c->z, c->h, UDNN_DATA_FLOAT, nb, yd, TU_STRIDED);
    tu_tensor_init(&c->bias, c->h, UDNN_DATA_FLOAT, nb, bd, TU_NCHW);
    const udnnTensorFormat_t ffmt = s->xl == TU_NHWC ? UDNN_TENSOR_NHWC : UDNN_TENSOR_NCHW;
    tu_filter_init(&c->w, c->h, UDNN_DATA_FLOAT, ffmt, nb, wd);
    tu_filter_init(&c->dw, c->h, UDNN_DATA_FLOAT, ffmt, nb, wd);
    const int off = 3 - s->nsp;
    tu_ok(udnnCreateConvolutionDescriptor(&c->conv));
    tu_ok(udnnSetConvolutionNdDescriptor(c->conv, s->nsp, s->pad + off, s->stride + off,
                                         s->dil + off, s->mode, UDNN_DATA_FLOAT));
    tu_ok(udnnSetConvolutionGroupCount(c->conv, s->g));
    tu_ok(udnnCreateActivationDescriptor(&c->act));
    tu_ok(udnnSetActivationDescriptor(c->act, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    tu_fill_uniform(&c->x, -1.0, 1.0);
    tu_fill_uniform(&c->dy, -1.0, 1.0);
    tu_fill_uniform(&c->bias, -0.5, 0.5);
    for (int64_t i = 0; i < c->w.count; i++) tu_fset(&c->w, i, tu_uniform(-1.0, 1.0));
    tu_buf_upload(&c->w.buf);
}

static void case_free(conv_case *c)
{
    tu_tensor *t[6] = {&c->x, &c->dx, &c->y, &c->dy, &c->z, &c->bias};
    for (int i = 0; i < 6; i++) tu_tensor_free(t[i]);
    tu_filter_free(&c->w);
    tu_filter_free(&c->dw);
    udnnDestroyConvolutionDescriptor(c->conv);
    udnnDestroyActivationDescriptor(c->act);
    udnnDestroy(c->h);
}

/* The fast solver's algorithm of each direction; the reference's is 0. */
static int fast_algo(int dir)
{
    return dir == BWD_DATA || dir == BWD_FILTER ? 1 : UDNN_CONVOLUTION_FWD_ALGO_GEMM;
}

static udnnStatus_t workspace_size(conv_case *c, int dir, int algo, size_t *bytes)
{
    switch (dir) {
    case BWD_DATA:
        return udnnGetConvolutionBackwardDataWorkspaceSize(c->h, c->w.desc, c->dy.desc, c->conv,
                                                           c->dx.desc, algo, bytes);
    case BWD_FILTER:
        return udnnGetConvolutionBackwardFilterWorkspaceSize(c->h, c->x.desc, c->dy.desc, c->conv,
                                                             c->dw.desc, algo, bytes);
    default: /* the fused op takes the forward's workspace */
        return udnnGetConvolutionForwardWorkspaceSize(c->h, c->x.desc, c->w.desc, c->conv,
                                                      c->y.desc, algo, bytes);
    }
}

/* One direction into its output; for BIAS_ACT, beta is alpha2. */
static udnnStatus_t run_dir(conv_case *c, int dir, int algo, double alpha, double beta, void *ws,
                            size_t bytes)
{
    const float a = (float)alpha, b = (float)beta;
    void *x = tu_buf_ptr(&c->x.buf), *w = tu_buf_ptr(&c->w.buf), *y = tu_buf_ptr(&c->y.buf);
    void *dy = tu_buf_ptr(&c->dy.buf);
    const tu_tensor *z = c->z_is_y ? &c->y : &c->z;
    switch (dir) {
    case FWD:
        return udnnConvolutionForward(c->h, &a, c->x.desc, x, c->w.desc, w, c->conv, algo, ws,
                                      bytes, &b, c->y.desc, y);
    case BIAS_ACT:
        return udnnConvolutionBiasActivationForward(
            c->h, &a, c->x.desc, x, c->w.desc, w, c->conv, algo, ws, bytes, &b, z->desc,
            tu_buf_ptr(&z->buf), c->bias.desc, tu_buf_ptr(&c->bias.buf), c->act, c->y.desc, y);
    case BWD_DATA:
        return udnnConvolutionBackwardData(c->h, &a, c->w.desc, w, c->dy.desc, dy, c->conv, algo,
                                           ws, bytes, &b, c->dx.desc, tu_buf_ptr(&c->dx.buf));
    default:
        return udnnConvolutionBackwardFilter(c->h, &a, c->x.desc, x, c->dy.desc, dy, c->conv, algo,
                                             ws, bytes, &b, c->dw.desc, tu_buf_ptr(&c->dw.buf));
    }
}

static tu_buf *output_buf(conv_case *c, int dir)
{
    return dir == BWD_DATA ? &c->dx.buf : dir == BWD_FILTER ? &c->dw.buf : &c->y.buf;
}

static int64_t output_count(const conv_case *c, int dir)
{
    return dir == BWD_DATA ? c->dx.count : dir == BWD_FILTER ? c->dw.count : c->y.count;
}

/* The output's logical values, downloaded. */
static double *output_values(conv_case *c, int dir)
{
    tu_buf_download(output_buf(c, dir));
    if (dir != BWD_FILTER) return values_of(dir == BWD_DATA ? &c->dx : &c->y);
    double *v = malloc((size_t)c->dw.count * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (int64_t i = 0; i < c->dw.count; i++) v[i] = tu_fget(&c->dw, i);
    return v;
}

/* The output is written whole, within its guards, close to ref. */
static void check_output(conv_case *c, int dir, const double *ref, const char *what)
{
    if (dir != BWD_FILTER) {
        tu_check_tensor(dir == BWD_DATA ? &c->dx : &c->y, ref, what);
        return;
    }
    double *out = output_values(c, dir);
    ck_assert_msg(tu_buf_guards_intact(&c->dw.buf), "%s: a write outside dw", what);
    for (int64_t i = 0; i < c->dw.count; i++)
        ck_assert_msg(!isnan(out[i]), "%s: dw element %lld not written (seed %llu)", what,
                      (long long)i, (unsigned long long)tu_seed_used());
    const double err = tu_rel_error(out, ref, c->dw.count);
    free(out);
    ck_assert_msg(err <= tu_tolerance(UDNN_DATA_FLOAT), "%s: relative error %.3g (seed %llu)", what,
                  err, (unsigned long long)tu_seed_used());
}

/* Runs the fast solver on exactly the workspace it asks for, in a guarded
 * (and poisoned) buffer, and checks that nothing past it was written. */
static void run_fast(conv_case *c, int dir, double alpha, double beta, const char *what)
{
    size_t bytes = 0;
    tu_ok(workspace_size(c, dir, fast_algo(dir), &bytes));
    ck_assert_msg(bytes > 0, "%s: the fast solver asks for no workspace", what);
    tu_buf ws;
    tu_buf_init(&ws, c->h, bytes);
    tu_ok(run_dir(c, dir, fast_algo(dir), alpha, beta, tu_buf_ptr(&ws), bytes));
    ck_assert_msg(tu_buf_guards_intact(&ws), "%s: a write past the workspace", what);
    tu_buf_free(&ws);
}

/* Prepares the output (and z): random where the op reads it, else poison.
 * Returns a copy of the output's bytes, to restore between the runs. */
static unsigned char *prepare(conv_case *c, int dir, double beta)
{
    tu_buf *out = output_buf(c, dir);
    const int reads_output = dir == BIAS_ACT ? c->z_is_y && beta != 0.0 : beta != 0.0;
    if (!reads_output) {
        tu_buf_poison(out);
    } else if (dir == BWD_FILTER) {
        for (int64_t i = 0; i < c->dw.count; i++) tu_fset(&c->dw, i, tu_uniform(-1.0, 1.0));
        tu_buf_upload(out);
    } else {
        tu_fill_uniform(dir == BWD_DATA ? &c->dx : &c->y, -1.0, 1.0);
    }
    if (dir == BIAS_ACT && !c->z_is_y) {
        if (beta != 0.0)
            tu_fill_uniform(&c->z, -1.0, 1.0);
        else
            tu_buf_poison(&c->z.buf); /* alpha2 = 0: z must not be read */
    }
    unsigned char *copy = malloc(out->bytes);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, out->host, out->bytes);
    return copy;
}

static void restore(conv_case *c, int dir, const unsigned char *copy)
{
    tu_buf *out = output_buf(c, dir);
    memcpy(out->host, copy, out->bytes);
    tu_buf_upload(out);
}

/* The fast solver against the reference on the same inputs. */
static void compare(conv_case *c, int dir, double alpha, double beta, const char *what)
{
    unsigned char *copy = prepare(c, dir, beta);
    use_reference(1);
    tu_ok(run_dir(c, dir, 0, alpha, beta, NULL, 0));
    use_reference(0);
    double *ref = output_values(c, dir);
    restore(c, dir, copy);
    run_fast(c, dir, alpha, beta, what);
    check_output(c, dir, ref, what);
    free(ref);
    free(copy);
}

/* The fused op's activations: the two with loops of their own and two
 * through the reference's definitions. */
static const udnnActivationMode_t fused_modes[4] = {UDNN_ACTIVATION_RELU, UDNN_ACTIVATION_IDENTITY,
                                                    UDNN_ACTIVATION_TANH, UDNN_ACTIVATION_ELU};

/* _i: shape x direction. The blend alternates between alpha 1, beta 0 on
 * a poisoned output and alpha -0.75, beta 0.5 on a filled one; the fused
 * op takes z = y (under a layout without gaps) or z of its own, alpha2
 * 0.5 or 0 (z poisoned) and one of four activations. */
START_TEST(test_conv_vs_reference)
{
    tu_seed_fresh();
    const conv_shape *s = &shapes[_i / N_DIRS];
    const int dir = _i % N_DIRS, odd = (_i / N_DIRS + dir) % 2;
    conv_case c;
    case_init(&c, s);
    const double alpha = odd ? -0.75 : 1.0, beta = odd ? 0.5 : 0.0;
    if (dir == BIAS_ACT) {
        c.z_is_y = _i / N_DIRS / 2 % 2;
        tu_ok(udnnSetActivationDescriptor(c.act, fused_modes[_i / N_DIRS % 4],
                                          UDNN_NOT_PROPAGATE_NAN, 1.0));
    }
    char what[256];
    snprintf(what, sizeof what, "%s of %s (alpha %g, %s %g%s)", dir_names[dir], s->name, alpha,
             dir == BIAS_ACT ? "alpha2" : "beta", beta, c.z_is_y ? ", z = y" : "");
    compare(&c, dir, alpha, beta, what);
    case_free(&c);
}
END_TEST

/* Every micro-kernel on a few shapes, every direction. _i: kernel. */
START_TEST(test_conv_kernels)
{
    tu_seed_fresh();
    setenv("UDNN_CPU_ISA", isas[_i], 1);
    static const int picks[3] = {STRIDED_MIXED, GROUPED_NHWC, THREE_IMAGES};
    for (int p = 0; p < 3; p++)
        for (int dir = 0; dir < N_DIRS; dir++) {
            conv_case c;
            case_init(&c, &shapes[picks[p]]);
            char what[256];
            snprintf(what, sizeof what, "%s of %s on %s", dir_names[dir], shapes[picks[p]].name,
                     isas[_i]);
            compare(&c, dir, 1.0, 0.0, what);
            case_free(&c);
        }
    unsetenv("UDNN_CPU_ISA");
}
END_TEST

/* 1, 2 and 3 threads give the same bits (the sums keep their order), and
 * the bits are right. _i: shape (the network's conv2 at batch 8, one
 * image, three images) x direction. */
START_TEST(test_threads_same_bits)
{
    tu_seed_fresh();
    static const int picks[3] = {NET_CONV2, ONE_IMAGE, THREE_IMAGES};
    conv_shape s = shapes[picks[_i / N_DIRS]];
    if (_i / N_DIRS == 0) s.n = 8;
    const int dir = _i % N_DIRS;
    conv_case c;
    case_init(&c, &s);
    if (!set_threads(1)) {
        case_free(&c);
        return; /* built without OpenMP: one thread only */
    }
    unsigned char *copy = prepare(&c, dir, 0.0), *first = NULL;
    tu_buf *out = output_buf(&c, dir);
    for (int threads = 1; threads <= 3; threads++) {
        set_threads(threads);
        restore(&c, dir, copy);
        char what[256];
        snprintf(what, sizeof what, "%s of %s on %d threads", dir_names[dir], s.name, threads);
        run_fast(&c, dir, 1.0, 0.0, what);
        tu_buf_download(out);
        if (first == NULL) {
            first = malloc(out->bytes);
            ck_assert_ptr_nonnull(first);
            memcpy(first, out->host, out->bytes);
        } else {
            ck_assert_msg(memcmp(first, out->host, out->bytes) == 0,
                          "%s: other bits than on 1 thread", what);
        }
    }
    /* and the bits are the reference's, within tolerance */
    double *fast = output_values(&c, dir);
    restore(&c, dir, copy);
    use_reference(1);
    tu_ok(run_dir(&c, dir, 0, 1.0, 0.0, NULL, 0));
    use_reference(0);
    double *ref = output_values(&c, dir);
    const double err = tu_rel_error(fast, ref, output_count(&c, dir));
    ck_assert_msg(err <= tu_tolerance(UDNN_DATA_FLOAT), "%s of %s: relative error %.3g",
                  dir_names[dir], s.name, err);
    free(fast);
    free(ref);
    free(first);
    free(copy);
    case_free(&c);
}
END_TEST

/* ---- workspaces ------------------------------------------------------------------------ */

/* One byte short, or NULL, is refused with a message naming the function
 * and the workspace arguments. _i: direction. */
START_TEST(test_workspace_refused)
{
    static const char *const fns[N_DIRS] = {
        "udnnConvolutionForward", "udnnConvolutionBiasActivationForward",
        "udnnConvolutionBackwardData", "udnnConvolutionBackwardFilter"};
    conv_case c;
    case_init(&c, &shapes[GROUPED_NHWC]);
    size_t bytes = 0;
    tu_ok(workspace_size(&c, _i, fast_algo(_i), &bytes));
    tu_buf ws;
    tu_buf_init(&ws, c.h, bytes);
    tu_assert_fails(run_dir(&c, _i, fast_algo(_i), 1.0, 0.0, tu_buf_ptr(&ws), bytes - 1),
                    UDNN_STATUS_BAD_PARAM, fns[_i], "workSpaceSizeInBytes");
    tu_assert_fails(run_dir(&c, _i, fast_algo(_i), 1.0, 0.0, NULL, bytes), UDNN_STATUS_BAD_PARAM,
                    fns[_i], "workSpace", "NULL");
    tu_buf_free(&ws);
    case_free(&c);
}
END_TEST

/* The fast solver's workspace for the shape at batch n (NCHW), from
 * descriptors alone. */
static size_t size_for(conv_shape s, int n, int dir)
{
    s.n = n;
    udnnHandle_t h = cpu_handle();
    int out[3], xd[5], yd[5], wd[5];
    for (int j = 0; j < 3; j++) out[j] = out_size(&s, j);
    const int nb = dims_of(&s, s.n, s.c, s.in, xd), off = 3 - s.nsp;
    dims_of(&s, s.n, s.k, out, yd);
    dims_of(&s, s.k, s.c / s.g, s.f, wd);
    udnnTensorDescriptor_t x, y;
    udnnFilterDescriptor_t w;
    udnnConvolutionDescriptor_t conv;
    tu_ok(udnnCreateTensorDescriptor(&x));
    tu_ok(udnnCreateTensorDescriptor(&y));
    tu_ok(udnnCreateFilterDescriptor(&w));
    tu_ok(udnnCreateConvolutionDescriptor(&conv));
    tu_ok(udnnSetTensorNdDescriptorEx(x, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, nb, xd));
    tu_ok(udnnSetTensorNdDescriptorEx(y, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, nb, yd));
    tu_ok(udnnSetFilterNdDescriptor(w, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, nb, wd));
    tu_ok(udnnSetConvolutionNdDescriptor(conv, s.nsp, s.pad + off, s.stride + off, s.dil + off,
                                         s.mode, UDNN_DATA_FLOAT));
    size_t bytes = 0;
    if (dir == BWD_DATA)
        tu_ok(udnnGetConvolutionBackwardDataWorkspaceSize(h, w, y, conv, x, 1, &bytes));
    else if (dir == BWD_FILTER)
        tu_ok(udnnGetConvolutionBackwardFilterWorkspaceSize(h, x, y, conv, w, 1, &bytes));
    else
        tu_ok(udnnGetConvolutionForwardWorkspaceSize(h, x, w, conv, y,
                                                     UDNN_CONVOLUTION_FWD_ALGO_GEMM, &bytes));
    udnnDestroyTensorDescriptor(x);
    udnnDestroyTensorDescriptor(y);
    udnnDestroyFilterDescriptor(w);
    udnnDestroyConvolutionDescriptor(conv);
    udnnDestroy(h);
    return bytes;
}

/* Workspaces grow with the batch up to 16 images and no further, do not
 * depend on the thread count, and a large image asks for no more than a
 * padded copy of itself and bounded column buffers (im2col of the whole
 * image would take nine times the image). _i: direction. */
START_TEST(test_workspace_bounded)
{
    const int dir = _i;
    const conv_shape *net = &shapes[NET_CONV1];
    const size_t one = size_for(*net, 1, dir), two = size_for(*net, 2, dir);
    const size_t sixteen = size_for(*net, 16, dir);
    ck_assert(one > 0 && one < two && two < sixteen);
    ck_assert_uint_eq(size_for(*net, 64, dir), sixteen);
    ck_assert_uint_eq(size_for(*net, 1000, dir), sixteen);
    if (set_threads(1)) {
        const size_t single = size_for(*net, 64, dir);
        set_threads(3);
        ck_assert_uint_eq(size_for(*net, 64, dir), single);
        ck_assert_uint_eq(single, sixteen);
    }
    const conv_shape big = {"3x3 64->64 on 256x256",
                            2,
                            1,
                            64,
                            64,
                            1,
                            {1, 256, 256},
                            {1, 3, 3},
                            {0, 1, 1},
                            ONES,
                            ONES,
                            XCORR,
                            TU_NCHW,
                            TU_NCHW};
    const double image = 64.0 * 258 * 258 * sizeof(float), weights = 64.0 * 64 * 9 * sizeof(float);
    const double got = (double)size_for(big, 1, dir);
    ck_assert_msg(got <= image + 2.0 * weights + (2 << 20), "%s: %.0f bytes for one image of %.0f",
                  dir_names[dir], got, image);
}
END_TEST

/* The sizes the _v7 heuristic reports are the WorkspaceSize queries'. */
START_TEST(test_workspace_in_perf_results)
{
    conv_case c;
    case_init(&c, &shapes[NET_CONV2]);
    int n = 0;
    size_t bytes = 0;
    udnnConvolutionFwdAlgoPerf_t fwd[8];
    udnnConvolutionBwdDataAlgoPerf_t bd[8];
    udnnConvolutionBwdFilterAlgoPerf_t bf[8];
    tu_ok(udnnGetConvolutionForwardAlgorithm_v7(c.h, c.x.desc, c.w.desc, c.conv, c.y.desc, 8, &n,
                                                fwd));
    tu_ok(workspace_size(&c, FWD, fast_algo(FWD), &bytes));
    ck_assert(fwd[0].algo == UDNN_CONVOLUTION_FWD_ALGO_GEMM && fwd[0].memory == bytes);
    tu_ok(udnnGetConvolutionBackwardDataAlgorithm_v7(c.h, c.w.desc, c.dy.desc, c.conv, c.dx.desc, 8,
                                                     &n, bd));
    tu_ok(workspace_size(&c, BWD_DATA, fast_algo(BWD_DATA), &bytes));
    ck_assert(bd[0].algo == UDNN_CONVOLUTION_BWD_DATA_ALGO_1 && bd[0].memory == bytes);
    tu_ok(udnnGetConvolutionBackwardFilterAlgorithm_v7(c.h, c.x.desc, c.dy.desc, c.conv, c.dw.desc,
                                                       8, &n, bf));
    tu_ok(workspace_size(&c, BWD_FILTER, fast_algo(BWD_FILTER), &bytes));
    ck_assert(bf[0].algo == UDNN_CONVOLUTION_BWD_FILTER_ALGO_1 && bf[0].memory == bytes);
    case_free(&c);
}
END_TEST

/* ---- what the fast solvers decline ----------------------------------------------------- */

/* Other types and tensors with gaps go to the reference; asked for by
 * algorithm, the fast solvers say why not. _i: direction. */
START_TEST(test_declines)
{
    static const char *const fns[N_DIRS] = {"udnnGetConvolutionForwardWorkspaceSize",
                                            "udnnGetConvolutionForwardWorkspaceSize",
                                            "udnnGetConvolutionBackwardDataWorkspaceSize",
                                            "udnnGetConvolutionBackwardFilterWorkspaceSize"};
    const int dir = _i;
    size_t bytes = 0;
    for (int t = 1; t < 4; t++) { /* DOUBLE, HALF, BFLOAT16 */
        conv_shape s = shapes[GROUPED_NHWC];
        conv_case c;
        case_init(&c, &s);
        udnnTensorDescriptor_t x, y;
        udnnFilterDescriptor_t w;
        tu_ok(udnnCreateTensorDescriptor(&x));
        tu_ok(udnnCreateTensorDescriptor(&y));
        tu_ok(udnnCreateFilterDescriptor(&w));
        const udnnDataType_t dt = tu_float_types[t];
        tu_ok(udnnSetTensorNdDescriptor(x, dt, c.x.nb, c.x.dims, c.x.strides));
        tu_ok(udnnSetTensorNdDescriptor(y, dt, c.y.nb, c.y.dims, c.y.strides));
        tu_ok(udnnSetFilterNdDescriptor(w, dt, c.w.format, c.w.nb, c.w.dims));
        tu_ok(udnnSetConvolutionNdDescriptor(c.conv, 2, s.pad + 1, s.stride + 1, s.dil + 1, s.mode,
                                             dt == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE
                                                                    : UDNN_DATA_FLOAT));
        udnnStatus_t st =
            dir == BWD_DATA
                ? udnnGetConvolutionBackwardDataWorkspaceSize(c.h, w, y, c.conv, x, 1, &bytes)
            : dir == BWD_FILTER
                ? udnnGetConvolutionBackwardFilterWorkspaceSize(c.h, x, y, c.conv, w, 1, &bytes)
                : udnnGetConvolutionForwardWorkspaceSize(c.h, x, w, c.conv, y,
                                                         UDNN_CONVOLUTION_FWD_ALGO_GEMM, &bytes);
        tu_assert_fails(st, UDNN_STATUS_NOT_SUPPORTED, fns[dir], "data type is not FLOAT");
        udnnDestroyTensorDescriptor(x);
        udnnDestroyTensorDescriptor(y);
        udnnDestroyFilterDescriptor(w);
        case_free(&c);
    }
    conv_shape s = shapes[GROUPED_NHWC];
    s.xl = TU_STRIDED;
    conv_case c;
    case_init(&c, &s);
    tu_assert_fails(workspace_size(&c, dir, fast_algo(dir), &bytes), UDNN_STATUS_NOT_SUPPORTED,
                    fns[dir], "not each packed NCHW or NHWC");
    /* running it by algorithm says the same */
    tu_assert_fails(run_dir(&c, dir, fast_algo(dir), 1.0, 0.0, NULL, 0), UDNN_STATUS_NOT_SUPPORTED,
                    dir_names[dir][0] == 'b' ? "Backward" : "Forward", "fast_conv_",
                    "not each packed NCHW or NHWC");
    case_free(&c);
}
END_TEST

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *fp = fopen(path, "r");
    size_t got = fp ? fread(buf, 1, n - 1, fp) : 0;
    buf[got] = '\0';
    if (fp) fclose(fp);
}

/* UDNN_LOG=dispatch names the fast solvers for FLOAT (every conv
 * direction by its algorithm, and udnnMatMul by itself) and the
 * reference, with the fast one's reason, for DOUBLE matmul. The log is
 * set up once per process; Check runs each test in its own. */
START_TEST(test_dispatch_log)
{
    tu_seed_fresh();
    char path[] = "/tmp/udnn-fastconv-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    setenv("UDNN_LOG", "dispatch", 1);
    setenv("UDNN_LOG_FILE", path, 1);
    use_reference(0);
    conv_case c;
    case_init(&c, &shapes[DEPTHWISE]);
    for (int dir = 0; dir < N_DIRS; dir++) run_fast(&c, dir, 1.0, 0.0, dir_names[dir]);
    for (int t = 0; t < 2; t++) {
        const udnnDataType_t dt = t ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
        tu_tensor a, b, m;
        const int dims[2] = {5, 5};
        tu_tensor_init(&a, c.h, dt, 2, dims, TU_NCHW);
        tu_tensor_init(&b, c.h, dt, 2, dims, TU_NCHW);
        tu_tensor_init(&m, c.h, dt, 2, dims, TU_NCHW);
        tu_fill_uniform(&a, -1.0, 1.0);
        tu_fill_uniform(&b, -1.0, 1.0);
        const tu_scalar one = tu_scalar_of(dt, 1.0), zero = tu_scalar_of(dt, 0.0);
        tu_ok(udnnMatMul(c.h, 0, 1, &one, a.desc, tu_buf_ptr(&a.buf), b.desc, tu_buf_ptr(&b.buf),
                         &zero, m.desc, tu_buf_ptr(&m.buf)));
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&m);
    }
    case_free(&c);
    static char log[1 << 16];
    slurp(path, log, sizeof log);
    unlink(path);
    static const char *const want[] = {
        "udnnConvolutionForward: cpu backend runs solver fast_conv_fwd",
        "udnnConvolutionBiasActivationForward: cpu backend runs solver fast_conv_bias_act",
        "udnnConvolutionBackwardData: cpu backend runs solver fast_conv_bwd_data",
        "udnnConvolutionBackwardFilter: cpu backend runs solver fast_conv_bwd_filter",
        "udnnMatMul: cpu backend runs solver fast_matmul",
        "udnnMatMul: solver fast_matmul rejected: data type is not FLOAT",
        "udnnMatMul: cpu backend runs solver ref_matmul"};
    const char *at = log;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *hit = strstr(at, want[i]);
        ck_assert_msg(hit != NULL, "no \"%s\" in the log, in order", want[i]);
        at = hit;
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fast_conv");

    TCase *tc = tcase_create("gemm");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_gemm_edges, 0, 9 * 4);
    tcase_add_loop_test(tc, test_gemm_blocks, 0, 3 * 4);
    tcase_add_loop_test(tc, test_matmul_batches, 0, 3);
    suite_add_tcase(s, tc);

    tc = tcase_create("convolution");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_conv_vs_reference, 0, N_SHAPES * N_DIRS);
    tcase_add_loop_test(tc, test_conv_kernels, 0, 3);
    tcase_add_loop_test(tc, test_threads_same_bits, 0, 3 * N_DIRS);
    suite_add_tcase(s, tc);

    tc = tcase_create("workspace");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_workspace_refused, 0, N_DIRS);
    tcase_add_loop_test(tc, test_workspace_bounded, 0, N_DIRS);
    tcase_add_test(tc, test_workspace_in_perf_results);
    suite_add_tcase(s, tc);

    tc = tcase_create("dispatch");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_declines, 0, N_DIRS);
    tcase_add_test(tc, test_dispatch_log);
    suite_add_tcase(s, tc);

    return tu_run_suite_forked(s);
}
