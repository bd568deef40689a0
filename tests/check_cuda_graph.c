/* check_cuda_graph.c - udnn's CUDA backend inside a CUDA graph, as a
 * framework uses it: on a stream of the test's own (udnnSetStream), the
 * sequence conv forward -> AddTensor (the bias) -> batch norm training
 * (spatial; its running statistics updated by every replay) -> ReLU -> max
 * pooling 2x2 is captured (cudaStreamBeginCapture in global mode, so that any call
 * a capture forbids, a cudaMalloc or a synchronize inside an op, fails
 * it), instantiated, and replayed twice with new input copied in between.
 * Each replay's outputs are compared with the same sequence on a CPU
 * handle from the same data; the capture itself must run nothing. NCHW and
 * NHWC. A second test captures the ops whose kernels launch as followers
 * of the stream's previous kernel (programmatic dependent launch: layer
 * and group norm forward and backward, softmax INSTANCE, 16-bit) and holds
 * each replay's outputs to an eager run's, bit for bit. Skips (77) when
 * there is no CUDA device or no CUDA plugin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>

#include "tests/testutil.h"

#define CUDA_OK(expr)                                                                          \
    do {                                                                                       \
        cudaError_t e_ = (expr);                                                               \
        ck_assert_msg(e_ == cudaSuccess, "%s: %s", #expr, cudaGetErrorString(e_));             \
    } while (0)

/* The sequence's tensors on one handle. */
typedef struct {
    udnnHandle_t h;
    tu_tensor x, bias, y, b, r, z; /* input, bias, conv output (+ bias), normalized, ReLU, pooled */
    tu_tensor scale, shift, run_mean, run_var, save_mean, save_inv; /* batch norm, per channel */
    tu_filter w;
    udnnConvolutionDescriptor_t conv;
    udnnActivationDescriptor_t relu;
    udnnPoolingDescriptor_t pool;
    udnnConvolutionFwdAlgo_t algo;
    void *ws;
    size_t ws_bytes;
} chain;

enum { N = 2, C = 3, H = 12, W = 10, K = 4 };

static void chain_init(chain *c, udnnHandle_t h, tu_layout layout)
{
    memset(c, 0, sizeof *c);
    c->h = h;
    const int xd[4] = {N, C, H, W}, wd[4] = {K, C, 3, 3}, bd[4] = {1, K, 1, 1};
    const int yd[4] = {N, K, H, W}, zd[4] = {N, K, H / 2, W / 2};
    tu_tensor_init(&c->x, h, UDNN_DATA_FLOAT, 4, xd, layout);
    tu_filter_init(&c->w, h, UDNN_DATA_FLOAT,
                   layout == TU_NHWC ? UDNN_TENSOR_NHWC : UDNN_TENSOR_NCHW, 4, wd);
    tu_tensor_init(&c->bias, h, UDNN_DATA_FLOAT, 4, bd, TU_NCHW);
    tu_tensor_init(&c->y, h, UDNN_DATA_FLOAT, 4, yd, layout);
    tu_tensor_init(&c->b, h, UDNN_DATA_FLOAT, 4, yd, layout);
    tu_tensor *per_channel[6] = {&c->scale, &c->shift, &c->run_mean,
                                 &c->run_var, &c->save_mean, &c->save_inv};
    for (int i = 0; i < 6; i++) tu_tensor_init(per_channel[i], h, UDNN_DATA_FLOAT, 4, bd, TU_NCHW);
    tu_tensor_init(&c->r, h, UDNN_DATA_FLOAT, 4, yd, layout);
    tu_tensor_init(&c->z, h, UDNN_DATA_FLOAT, 4, zd, layout);
    const int pad[2] = {1, 1}, stride[2] = {1, 1}, dil[2] = {1, 1};
    tu_ok(udnnCreateConvolutionDescriptor(&c->conv));
    tu_ok(udnnSetConvolutionNdDescriptor(c->conv, 2, pad, stride, dil, UDNN_CROSS_CORRELATION,
                                         UDNN_DATA_FLOAT));
    tu_ok(udnnCreateActivationDescriptor(&c->relu));
    tu_ok(udnnSetActivationDescriptor(c->relu, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    tu_ok(udnnCreatePoolingDescriptor(&c->pool));
    tu_ok(udnnSetPooling2dDescriptor(c->pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0,
                                     2, 2));
    /* the algo and its workspace, before any capture: the heuristic's first */
    udnnConvolutionFwdAlgoPerf_t perf[8];
    int got = 0;
    tu_ok(udnnGetConvolutionForwardAlgorithm_v7(h, c->x.desc, c->w.desc, c->conv, c->y.desc, 8,
                                                &got, perf));
    int found = 0;
    for (int i = 0; i < got && !found; i++)
        if (perf[i].status == UDNN_STATUS_SUCCESS) {
            c->algo = perf[i].algo;
            found = 1;
        }
    ck_assert_msg(found, "no forward convolution algo for the chain");
    tu_ok(udnnGetConvolutionForwardWorkspaceSize(h, c->x.desc, c->w.desc, c->conv, c->y.desc,
                                                 c->algo, &c->ws_bytes));
    if (c->ws_bytes > 0) tu_ok(udnnMalloc(h, &c->ws, c->ws_bytes));
}

static void chain_free(chain *c)
{
    if (c->ws) tu_ok(udnnFree(c->h, c->ws));
    udnnDestroyConvolutionDescriptor(c->conv);
    udnnDestroyActivationDescriptor(c->relu);
    udnnDestroyPoolingDescriptor(c->pool);
    tu_tensor_free(&c->x);
    tu_filter_free(&c->w);
    tu_tensor_free(&c->bias);
    tu_tensor_free(&c->y);
    tu_tensor_free(&c->b);
    tu_tensor *per_channel[6] = {&c->scale, &c->shift, &c->run_mean,
                                 &c->run_var, &c->save_mean, &c->save_inv};
    for (int i = 0; i < 6; i++) tu_tensor_free(per_channel[i]);
    tu_tensor_free(&c->r);
    tu_tensor_free(&c->z);
}

/* conv -> + bias -> batch norm -> ReLU -> max pool, on c's handle and
 * stream; each op's status must be success (under capture: it was
 * recorded). */
static void chain_run(void *arg)
{
    chain *c = arg;
    const float one = 1.0f, zero = 0.0f;
    tu_ok(udnnConvolutionForward(c->h, &one, c->x.desc, tu_buf_ptr(&c->x.buf), c->w.desc,
                                 tu_buf_ptr(&c->w.buf), c->conv, c->algo, c->ws, c->ws_bytes, &zero,
                                 c->y.desc, tu_buf_ptr(&c->y.buf)));
    tu_ok(udnnAddTensor(c->h, &one, c->bias.desc, tu_buf_ptr(&c->bias.buf), &one, c->y.desc,
                        tu_buf_ptr(&c->y.buf)));
    tu_ok(udnnBatchNormalizationForwardTraining(
        c->h, UDNN_BATCHNORM_SPATIAL, &one, &zero, c->y.desc, tu_buf_ptr(&c->y.buf), c->b.desc,
        tu_buf_ptr(&c->b.buf), c->scale.desc, tu_buf_ptr(&c->scale.buf),
        tu_buf_ptr(&c->shift.buf), 0.25, tu_buf_ptr(&c->run_mean.buf),
        tu_buf_ptr(&c->run_var.buf), 1e-5, tu_buf_ptr(&c->save_mean.buf),
        tu_buf_ptr(&c->save_inv.buf)));
    tu_ok(udnnActivationForward(c->h, c->relu, &one, c->b.desc, tu_buf_ptr(&c->b.buf), &zero,
                                c->r.desc, tu_buf_ptr(&c->r.buf)));
    tu_ok(udnnPoolingForward(c->h, c->pool, &one, c->r.desc, tu_buf_ptr(&c->r.buf), &zero,
                             c->z.desc, tu_buf_ptr(&c->z.buf)));
}

/* The CPU handle's tensor takes the GPU one's values (logical order). */
static void copy_values(tu_tensor *to, const tu_tensor *from)
{
    for (int64_t i = 0; i < from->count; i++) tu_set(to, i, tu_get(from, i));
    tu_upload(to);
}

/* The GPU chain's batch norm statistics against the CPU chain's, after
 * the same number of runs (the running ones accumulate over all of them). */
static void check_statistics(chain *cpu, chain *gpu, const char *when)
{
    tu_tensor *ct[4] = {&cpu->run_mean, &cpu->run_var, &cpu->save_mean, &cpu->save_inv};
    tu_tensor *gt[4] = {&gpu->run_mean, &gpu->run_var, &gpu->save_mean, &gpu->save_inv};
    const char *names[4] = {"running mean", "running variance", "saved mean",
                            "saved inverse variance"};
    double ref[K];
    char what[128];
    for (int i = 0; i < 4; i++) {
        tu_download(ct[i]);
        tu_values(ct[i], ref);
        snprintf(what, sizeof what, "%s: batch norm %s", when, names[i]);
        tu_check_tensor(gt[i], ref, what);
    }
}

/* The reference for the GPU chain's current x: the CPU chain's r and z. */
static void reference(chain *cpu, const chain *gpu, double *r, double *z)
{
    copy_values(&cpu->x, &gpu->x);
    chain_run(cpu);
    tu_ok(udnnSynchronize(cpu->h));
    tu_download(&cpu->r);
    tu_download(&cpu->z);
    tu_values(&cpu->r, r);
    tu_values(&cpu->z, z);
}

static udnnHandle_t cuda_handle(void)
{
    udnnHandle_t h = NULL;
    udnnStatus_t st = udnnCreateWithBackend(&h, UDNN_BACKEND_CUDA, 0);
    if (st != UDNN_STATUS_SUCCESS) {
        char msg[1024];
        udnnGetLastErrorString(msg, sizeof msg);
        ck_abort_msg("udnnCreateWithBackend(CUDA): status %d: %s", (int)st, msg);
    }
    return h;
}

/* run(ctx) captured on stream in global mode: nothing runs, every op is
 * recorded */
static cudaGraph_t capture(cudaStream_t stream, void (*run)(void *), void *ctx)
{
    cudaGraph_t graph = NULL;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    run(ctx);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    ck_assert_ptr_nonnull(graph);
    return graph;
}

START_TEST(test_capture_replay)
{
    const tu_layout layout = _i ? TU_NHWC : TU_NCHW;
    char what[96];
    tu_seed_fresh();
    udnnHandle_t hg = cuda_handle(), hc = tu_handle(UDNN_BACKEND_CPU);
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    tu_ok(udnnSetStream(hg, stream));
    chain g, c;
    chain_init(&g, hg, layout);
    chain_init(&c, hc, layout);
    /* weights and bias once; the same on both */
    for (int64_t i = 0; i < g.w.count; i++) {
        const double v = tu_uniform(-1, 1);
        tu_fset(&g.w, i, v);
        tu_fset(&c.w, i, v);
    }
    tu_buf_upload(&g.w.buf);
    tu_buf_upload(&c.w.buf);
    tu_fill_uniform(&g.bias, -0.5, 0.5);
    copy_values(&c.bias, &g.bias);
    tu_fill_uniform(&g.scale, 0.5, 1.5);
    copy_values(&c.scale, &g.scale);
    tu_fill_uniform(&g.shift, -0.5, 0.5);
    copy_values(&c.shift, &g.shift);
    for (int64_t i = 0; i < K; i++) {
        tu_set(&g.run_mean, i, 0.0);
        tu_set(&g.run_var, i, 1.0);
    }
    tu_upload(&g.run_mean);
    tu_upload(&g.run_var);
    copy_values(&c.run_mean, &g.run_mean);
    copy_values(&c.run_var, &g.run_var);
    tu_fill_uniform(&g.x, -1, 1);
    tu_buf_poison(&g.y.buf);
    tu_buf_poison(&g.b.buf);
    tu_buf_poison(&g.r.buf);
    tu_buf_poison(&g.z.buf);
    tu_buf_poison(&g.save_mean.buf);

    cudaGraph_t graph = capture(stream, chain_run, &g);
    cudaGraphExec_t exec = NULL;
    size_t nodes = 0;
    CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
    ck_assert_msg(nodes >= 5, "the graph has %zu nodes for 5 ops", nodes);
    tu_assert_untouched(&g.z.buf, "z after the capture, before any replay");
    tu_assert_untouched(&g.save_mean.buf, "the saved mean after the capture, before any replay");
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

    const int64_t rn = g.r.count, zn = g.z.count;
    double *r_ref = malloc(sizeof(double) * (size_t)rn),
           *z_ref = malloc(sizeof(double) * (size_t)zn);
    for (int replay = 0; replay < 2; replay++) {
        if (replay > 0) {
            /* new input, copied in between; outputs poisoned again */
            tu_fill_uniform(&g.x, -1, 1);
            tu_buf_poison(&g.r.buf);
            tu_buf_poison(&g.z.buf);
        }
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        reference(&c, &g, r_ref, z_ref);
        snprintf(what, sizeof what, "replay %d, %s: ReLU output", replay + 1,
                 tu_layout_name(layout));
        tu_check_tensor(&g.r, r_ref, what);
        snprintf(what, sizeof what, "replay %d, %s: pooled output", replay + 1,
                 tu_layout_name(layout));
        tu_check_tensor(&g.z, z_ref, what);
        snprintf(what, sizeof what, "replay %d, %s", replay + 1, tu_layout_name(layout));
        check_statistics(&c, &g, what);
    }
    /* the stream, used eagerly again, still works */
    tu_fill_uniform(&g.x, -1, 1);
    tu_buf_poison(&g.z.buf);
    chain_run(&g);
    tu_ok(udnnSynchronize(hg));
    reference(&c, &g, r_ref, z_ref);
    tu_check_tensor(&g.z, z_ref, "an eager run after the replays");
    check_statistics(&c, &g, "an eager run after the replays");

    free(r_ref);
    free(z_ref);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    chain_free(&g);
    chain_free(&c);
    tu_ok(udnnSetStream(hg, NULL));
    tu_ok(udnnDestroy(hg));
    tu_ok(udnnDestroy(hc));
    CUDA_OK(cudaStreamDestroy(stream));
}
END_TEST

/* A norm's tensors: data HALF, parameters and statistics FLOAT. */
typedef struct {
    tu_tensor x, dy, y, dx, scale, bias, mean, inv, dscale, dbias;
} norm_part;

/* Layer norm (rows of 1024), group norm (8 groups of 2 x 64 x 32 x 32) and
 * softmax INSTANCE (4 x 64 x 32 x 32), each forward then backward. */
typedef struct {
    udnnHandle_t h;
    norm_part l, g;
    tu_tensor sx, sdy, sy, sdx;
} norms;

enum { NORM_GROUPS = 8, PART_OUTPUTS = 6, NORMS_OUTPUTS = 2 * PART_OUTPUTS + 2 };

static void norm_part_init(norm_part *p, udnnHandle_t h, const int *data, const int *param,
                           const int *stats)
{
    tu_tensor *d[4] = {&p->x, &p->dy, &p->y, &p->dx};
    for (int i = 0; i < 4; i++) tu_tensor_init(d[i], h, UDNN_DATA_HALF, 4, data, TU_NCHW);
    tu_tensor *w[4] = {&p->scale, &p->bias, &p->dscale, &p->dbias};
    for (int i = 0; i < 4; i++) tu_tensor_init(w[i], h, UDNN_DATA_FLOAT, 4, param, TU_NCHW);
    tu_tensor_init(&p->mean, h, UDNN_DATA_FLOAT, 4, stats, TU_NCHW);
    tu_tensor_init(&p->inv, h, UDNN_DATA_FLOAT, 4, stats, TU_NCHW);
    tu_fill_uniform(&p->scale, 0.5, 1.5);
    tu_fill_uniform(&p->bias, -0.5, 0.5);
}

static void norm_part_free(norm_part *p)
{
    tu_tensor *all[10] = {&p->x,    &p->dy,   &p->y,   &p->dx,     &p->scale,
                          &p->bias, &p->mean, &p->inv, &p->dscale, &p->dbias};
    for (int i = 0; i < 10; i++) tu_tensor_free(all[i]);
}

/* output i, in one order for the comparisons, and its name */
static tu_tensor *norms_output(norms *n, int i, const char **name)
{
    static const char *names[NORMS_OUTPUTS] = {
        "layer norm y",  "layer norm mean",   "layer norm inverse std",
        "layer norm dx", "layer norm dscale", "layer norm dbias",
        "group norm y",  "group norm mean",   "group norm inverse std",
        "group norm dx", "group norm dscale", "group norm dbias",
        "softmax y",     "softmax dx"};
    *name = names[i];
    if (i >= 2 * PART_OUTPUTS) return i == 2 * PART_OUTPUTS ? &n->sy : &n->sdx;
    norm_part *p = i < PART_OUTPUTS ? &n->l : &n->g;
    tu_tensor *out[PART_OUTPUTS] = {&p->y, &p->mean, &p->inv, &p->dx, &p->dscale, &p->dbias};
    return out[i % PART_OUTPUTS];
}

static void norms_init(norms *n, udnnHandle_t h)
{
    memset(n, 0, sizeof *n);
    n->h = h;
    const int rows[4] = {512, 1024, 1, 1}, row_param[4] = {1, 1024, 1, 1},
              row_stats[4] = {512, 1, 1, 1};
    norm_part_init(&n->l, h, rows, row_param, row_stats);
    const int img[4] = {2, 64, 32, 32}, chan[4] = {1, 64, 1, 1}, grp[4] = {2, NORM_GROUPS, 1, 1};
    norm_part_init(&n->g, h, img, chan, grp);
    const int inst[4] = {4, 64, 32, 32};
    tu_tensor *inst_data[4] = {&n->sx, &n->sdy, &n->sy, &n->sdx};
    for (int i = 0; i < 4; i++) tu_tensor_init(inst_data[i], h, UDNN_DATA_HALF, 4, inst, TU_NCHW);
}

static void norms_free(norms *n)
{
    norm_part_free(&n->l);
    norm_part_free(&n->g);
    tu_tensor *inst_data[4] = {&n->sx, &n->sdy, &n->sy, &n->sdx};
    for (int i = 0; i < 4; i++) tu_tensor_free(inst_data[i]);
}

/* new inputs for the next run */
static void norms_fill(norms *n)
{
    tu_tensor *in[5] = {&n->l.x, &n->l.dy, &n->g.x, &n->g.dy, &n->sdy};
    for (int i = 0; i < 5; i++) tu_fill_uniform(in[i], -1, 1);
    tu_fill_uniform(&n->sx, -4, 4);
}

static void norms_run(void *arg)
{
    norms *n = arg;
    const float one = 1.0f, zero = 0.0f;
    norm_part *l = &n->l, *g = &n->g;
    tu_ok(udnnNormForward(n->h, UDNN_NORM_LAYER, 3, 1e-5, l->x.desc, tu_buf_ptr(&l->x.buf),
                          l->scale.desc, tu_buf_ptr(&l->scale.buf), tu_buf_ptr(&l->bias.buf),
                          l->y.desc, tu_buf_ptr(&l->y.buf), l->mean.desc, tu_buf_ptr(&l->mean.buf),
                          tu_buf_ptr(&l->inv.buf)));
    tu_ok(udnnNormBackward(n->h, UDNN_NORM_LAYER, 3, l->x.desc, tu_buf_ptr(&l->x.buf), l->dy.desc,
                           tu_buf_ptr(&l->dy.buf), l->scale.desc, tu_buf_ptr(&l->scale.buf),
                           l->mean.desc, tu_buf_ptr(&l->mean.buf), tu_buf_ptr(&l->inv.buf),
                           l->dx.desc, tu_buf_ptr(&l->dx.buf), tu_buf_ptr(&l->dscale.buf),
                           tu_buf_ptr(&l->dbias.buf)));
    tu_ok(udnnGroupNormForward(n->h, NORM_GROUPS, 1e-5, g->x.desc, tu_buf_ptr(&g->x.buf),
                               g->scale.desc, tu_buf_ptr(&g->scale.buf), tu_buf_ptr(&g->bias.buf),
                               g->y.desc, tu_buf_ptr(&g->y.buf), g->mean.desc,
                               tu_buf_ptr(&g->mean.buf), tu_buf_ptr(&g->inv.buf)));
    tu_ok(udnnGroupNormBackward(n->h, NORM_GROUPS, g->x.desc, tu_buf_ptr(&g->x.buf), g->dy.desc,
                                tu_buf_ptr(&g->dy.buf), g->scale.desc, tu_buf_ptr(&g->scale.buf),
                                g->mean.desc, tu_buf_ptr(&g->mean.buf), tu_buf_ptr(&g->inv.buf),
                                g->dx.desc, tu_buf_ptr(&g->dx.buf), tu_buf_ptr(&g->dscale.buf),
                                tu_buf_ptr(&g->dbias.buf)));
    tu_ok(udnnSoftmaxForward(n->h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one,
                             n->sx.desc, tu_buf_ptr(&n->sx.buf), &zero, n->sy.desc,
                             tu_buf_ptr(&n->sy.buf)));
    tu_ok(udnnSoftmaxBackward(n->h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one,
                              n->sy.desc, tu_buf_ptr(&n->sy.buf), n->sdy.desc,
                              tu_buf_ptr(&n->sdy.buf), &zero, n->sdx.desc,
                              tu_buf_ptr(&n->sdx.buf)));
}

/* every output's bytes, downloaded, into saved[i] (allocated here) */
static void norms_save(norms *n, unsigned char *saved[NORMS_OUTPUTS])
{
    for (int i = 0; i < NORMS_OUTPUTS; i++) {
        const char *name;
        tu_buf *b = &norms_output(n, i, &name)->buf;
        tu_buf_download(b);
        saved[i] = malloc(b->bytes);
        ck_assert_ptr_nonnull(saved[i]);
        memcpy(saved[i], b->host, b->bytes);
    }
}

static void norms_poison(norms *n)
{
    const char *name;
    for (int i = 0; i < NORMS_OUTPUTS; i++) tu_buf_poison(&norms_output(n, i, &name)->buf);
}

START_TEST(test_capture_followers)
{
    tu_seed_fresh();
    udnnHandle_t h = cuda_handle();
    cudaStream_t stream;
    CUDA_OK(cudaStreamCreate(&stream));
    tu_ok(udnnSetStream(h, stream));
    norms n;
    norms_init(&n, h);
    norms_poison(&n);

    cudaGraph_t graph = capture(stream, norms_run, &n);
    cudaGraphExec_t exec = NULL;
    tu_assert_untouched(&n.l.dx.buf, "layer norm dx after the capture, before any replay");
    tu_assert_untouched(&n.sdx.buf, "softmax dx after the capture, before any replay");
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));

    for (int replay = 0; replay < 2; replay++) {
        unsigned char *replayed[NORMS_OUTPUTS], *eager[NORMS_OUTPUTS];
        norms_fill(&n);
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        norms_save(&n, replayed);
        norms_poison(&n);
        norms_run(&n);
        tu_ok(udnnSynchronize(h));
        norms_save(&n, eager);
        for (int i = 0; i < NORMS_OUTPUTS; i++) {
            const char *name;
            const size_t bytes = norms_output(&n, i, &name)->buf.bytes;
            ck_assert_msg(memcmp(replayed[i], eager[i], bytes) == 0,
                          "replay %d: %s differs from the eager run's (seed %llu)", replay + 1,
                          name, (unsigned long long)tu_seed_used());
            free(replayed[i]);
            free(eager[i]);
        }
    }

    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    norms_free(&n);
    tu_ok(udnnSetStream(h, NULL));
    tu_ok(udnnDestroy(h));
    CUDA_OK(cudaStreamDestroy(stream));
}
END_TEST

int main(void)
{
    if (!tu_device_present(UDNN_BACKEND_CUDA)) return 77;
    Suite *s = suite_create("cuda_graph");
    TCase *tc = tcase_create("cuda_graph");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_capture_replay, 0, 2);
    tcase_add_test(tc, test_capture_followers);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
