/* check_cuda_graph.c - udnn's CUDA backend inside a CUDA graph, as a
 * framework uses it: on a stream of the test's own (udnnSetStream), the
 * sequence conv forward -> AddTensor (the bias) -> batch norm training
 * (spatial; its running statistics updated by every replay) -> ReLU -> max
 * pooling 2x2 is captured (cudaStreamBeginCapture in global mode, so that any call
 * a capture forbids, a cudaMalloc or a synchronize inside an op, fails
 * it), instantiated, and replayed twice with new input copied in between.
 * Each replay's outputs are compared with the same sequence on a CPU
 * handle from the same data; the capture itself must run nothing. NCHW and
 * NHWC. Skips (77) when there is no CUDA device or no CUDA plugin. */
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
static void chain_run(chain *c)
{
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

    /* capture: nothing runs, every op is recorded */
    cudaGraph_t graph = NULL;
    cudaGraphExec_t exec = NULL;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    chain_run(&g);
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    ck_assert_ptr_nonnull(graph);
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

int main(void)
{
    if (!tu_device_present(UDNN_BACKEND_CUDA)) return 77;
    Suite *s = suite_create("cuda_graph");
    TCase *tc = tcase_create("cuda_graph");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_capture_replay, 0, 2);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
