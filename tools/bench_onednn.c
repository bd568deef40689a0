/* bench_onednn.c - the CPU backend's peer: the same problem through
 * oneDNN's 2.x C API in this process. Activations have the layout and
 * strides of udnn's buffers (the same problem, not oneDNN's preferred
 * blocked one) and start from the same data; convolution weights take the
 * format oneDNN prefers, reordered once before timing as a framework does
 * at load time (its reference kernel would run the plain ones); the blend (alpha, beta) is
 * left out, as a framework calls a primitive. The timing loop is udnn's
 * (bench_time_loop): warm-up, then the median over --iters samples, each
 * --burst runs and a wait on the stream, rotating the same number of
 * buffer sets. oneDNN has no double type; a problem it cannot create
 * (a type or shape its CPU engine lacks) has no peer. */
#include <dnnl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_data.h"
#include "tools/bench_peer.h"

#define MAX_ARGS 8

typedef struct {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_desc_t pd, hint;
    dnnl_primitive_t prim;
    int nargs;
    int arg[MAX_ARGS];
    dnnl_memory_desc_t md[MAX_ARGS];
    int from[MAX_ARGS]; /* the udnn buffer it takes its data from, or -1 */
    dnnl_memory_desc_t user_md[MAX_ARGS]; /* that buffer's layout, when md differs */
    int reorder[MAX_ARGS];
    dnnl_memory_t mem[BENCH_MAX_SETS][MAX_ARGS];
} peer;

static int dnnl_type(udnnDataType_t t, dnnl_data_type_t *out)
{
    switch (t) {
    case UDNN_DATA_FLOAT: *out = dnnl_f32; return 0;
    case UDNN_DATA_HALF: *out = dnnl_f16; return 0;
    case UDNN_DATA_BFLOAT16: *out = dnnl_bf16; return 0;
    default: return -1;
    }
}

/* The memory descriptor of a udnn buffer, its dims and strides as they are. */
static int md_of(const bench_buf *b, dnnl_memory_desc_t *md)
{
    dnnl_data_type_t t;
    if (dnnl_type(b->dtype, &t) < 0) return -1;
    dnnl_dims_t dims, strides;
    for (int i = 0; i < b->rank; i++) {
        dims[i] = b->dims[i];
        strides[i] = b->strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, b->rank, dims, t, strides) == dnnl_success ? 0 : -1;
}

static void add_arg(peer *q, int arg, const dnnl_memory_desc_t *md, int from)
{
    q->arg[q->nargs] = arg;
    q->md[q->nargs] = *md;
    q->from[q->nargs] = from;
    q->reorder[q->nargs] = 0;
    q->nargs++;
}

/* An argument in the format the primitive chose (what), filled from a
 * udnn buffer of layout user by a reorder. */
static void add_chosen_arg(peer *q, int arg, dnnl_query_t what, const dnnl_memory_desc_t *user,
                           int from)
{
    add_arg(q, arg, dnnl_primitive_desc_query_md(q->pd, what, 0), from);
    q->user_md[q->nargs - 1] = *user;
    q->reorder[q->nargs - 1] = !dnnl_memory_desc_equal(user, &q->md[q->nargs - 1]);
}

/* ---- the ops ------------------------------------------------------------------------ */

/* Grouped weights: g x k/g x c/g x spatial, strides from udnn's k, c/g, ... */
static int grouped_weights(const bench_buf *w, int groups, dnnl_memory_desc_t *md)
{
    if (groups == 1) return md_of(w, md);
    dnnl_data_type_t t;
    if (dnnl_type(w->dtype, &t) < 0) return -1;
    dnnl_dims_t dims, strides;
    dims[0] = groups;
    strides[0] = (dnnl_dim_t)(w->dims[0] / groups) * w->strides[0];
    dims[1] = w->dims[0] / groups;
    strides[1] = w->strides[0];
    for (int i = 1; i < w->rank; i++) {
        dims[i + 1] = w->dims[i];
        strides[i + 1] = w->strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, w->rank + 1, dims, t, strides) == dnnl_success
               ? 0
               : -1;
}

static int build_conv(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    const bench_buf *x = &p->buf[pi->src], *w = &p->buf[pi->weights], *y = &p->buf[pi->dst];
    dnnl_memory_desc_t xmd, wmd, ymd, any;
    if (md_of(x, &xmd) < 0 || grouped_weights(w, pi->groups, &wmd) < 0 || md_of(y, &ymd) < 0 ||
        dnnl_memory_desc_init_by_tag(&any, wmd.ndims, wmd.dims, wmd.data_type,
                                     dnnl_format_tag_any) != dnnl_success)
        return 1;
    dnnl_dims_t strides, dilates, pad_l, pad_r;
    for (int i = 0; i < pi->nd; i++) {
        strides[i] = pi->stride[i];
        dilates[i] = pi->dilation[i] - 1; /* oneDNN counts the gaps */
        pad_l[i] = pi->pad[i];
        /* the right padding that gives udnn's output size */
        pad_r[i] = (dnnl_dim_t)(y->dims[2 + i] - 1) * pi->stride[i] +
                   (dnnl_dim_t)(w->dims[2 + i] - 1) * pi->dilation[i] + 1 - x->dims[2 + i] -
                   pi->pad[i];
    }
    dnnl_convolution_desc_t fwd, d;
    if (dnnl_dilated_convolution_forward_desc_init(&fwd,
                                                   pi->op == BENCH_PEER_CONV_FWD
                                                       ? dnnl_forward_inference
                                                       : dnnl_forward_training,
                                                   dnnl_convolution_direct, &xmd, &any, NULL, &ymd,
                                                   strides, dilates, pad_l, pad_r) != dnnl_success)
        return 1;
    if (pi->op == BENCH_PEER_CONV_FWD) {
        if (dnnl_primitive_desc_create(&q->pd, &fwd, NULL, q->engine, NULL) != dnnl_success)
            return 1;
        add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
        add_chosen_arg(q, DNNL_ARG_WEIGHTS, dnnl_query_weights_md, &wmd, pi->weights);
        add_arg(q, DNNL_ARG_DST, &ymd, -1);
        return 0;
    }
    /* the backward passes take the forward's descriptor as a hint */
    if (dnnl_primitive_desc_create(&q->hint, &fwd, NULL, q->engine, NULL) != dnnl_success) return 1;
    if (pi->op == BENCH_PEER_CONV_BWD_DATA) {
        if (dnnl_dilated_convolution_backward_data_desc_init(&d, dnnl_convolution_direct, &xmd,
                                                             &any, &ymd, strides, dilates, pad_l,
                                                             pad_r) != dnnl_success ||
            dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, q->hint) != dnnl_success)
            return 1;
        add_arg(q, DNNL_ARG_DIFF_DST, &ymd, pi->dst);
        add_chosen_arg(q, DNNL_ARG_WEIGHTS, dnnl_query_weights_md, &wmd, pi->weights);
        add_arg(q, DNNL_ARG_DIFF_SRC, &xmd, -1);
        return 0;
    }
    if (dnnl_dilated_convolution_backward_weights_desc_init(&d, dnnl_convolution_direct, &xmd,
                                                            &any, NULL, &ymd, strides, dilates,
                                                            pad_l, pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, q->hint) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DIFF_DST, &ymd, pi->dst);
    add_chosen_arg(q, DNNL_ARG_DIFF_WEIGHTS, dnnl_query_diff_weights_md, &wmd, -1);
    return 0;
}

/* op(X) of a stored matrix: its last two dims and strides swapped. */
static int matrix_md(const bench_buf *b, int trans, dnnl_memory_desc_t *md)
{
    dnnl_data_type_t t;
    if (dnnl_type(b->dtype, &t) < 0) return -1;
    dnnl_dims_t dims, strides;
    for (int i = 0; i < b->rank; i++) {
        dims[i] = b->dims[i];
        strides[i] = b->strides[i];
    }
    if (trans) {
        const int r = b->rank - 2, c = b->rank - 1;
        dims[r] = b->dims[c];
        dims[c] = b->dims[r];
        strides[r] = b->strides[c];
        strides[c] = b->strides[r];
    }
    return dnnl_memory_desc_init_by_strides(md, b->rank, dims, t, strides) == dnnl_success ? 0 : -1;
}

static int build_matmul(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    dnnl_memory_desc_t amd, bmd, cmd;
    dnnl_matmul_desc_t d;
    if (matrix_md(&p->buf[pi->src], pi->trans_a, &amd) < 0 ||
        matrix_md(&p->buf[pi->weights], pi->trans_b, &bmd) < 0 ||
        matrix_md(&p->buf[pi->dst], 0, &cmd) < 0 ||
        dnnl_matmul_desc_init(&d, &amd, &bmd, NULL, &cmd) != dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &amd, pi->src);
    add_arg(q, DNNL_ARG_WEIGHTS, &bmd, pi->weights);
    add_arg(q, DNNL_ARG_DST, &cmd, -1);
    return 0;
}

/* udnn's activation as a oneDNN eltwise algorithm and its alpha, beta. */
static int eltwise_of(const bench_peer_info *pi, dnnl_alg_kind_t *alg, float *a, float *b)
{
    *a = 0.0f;
    *b = 0.0f;
    switch ((udnnActivationMode_t)pi->mode) {
    case UDNN_ACTIVATION_SIGMOID: *alg = dnnl_eltwise_logistic; return 0;
    case UDNN_ACTIVATION_RELU: *alg = dnnl_eltwise_relu; return 0;
    case UDNN_ACTIVATION_TANH: *alg = dnnl_eltwise_tanh; return 0;
    case UDNN_ACTIVATION_CLIPPED_RELU: *alg = dnnl_eltwise_clip; *b = (float)pi->param[0]; return 0;
    case UDNN_ACTIVATION_ELU: *alg = dnnl_eltwise_elu; *a = (float)pi->param[0]; return 0;
    case UDNN_ACTIVATION_IDENTITY: *alg = dnnl_eltwise_linear; *a = 1.0f; return 0;
    case UDNN_ACTIVATION_SWISH: *alg = dnnl_eltwise_swish; *a = (float)pi->param[1]; return 0;
    case UDNN_ACTIVATION_LEAKY_RELU: *alg = dnnl_eltwise_relu; *a = (float)pi->param[0]; return 0;
    case UDNN_ACTIVATION_GELU: *alg = dnnl_eltwise_gelu_erf; return 0;
    case UDNN_ACTIVATION_GELU_TANH: *alg = dnnl_eltwise_gelu_tanh; return 0;
    case UDNN_ACTIVATION_SOFTPLUS: *alg = dnnl_eltwise_soft_relu; return 0;
    case UDNN_ACTIVATION_MISH: *alg = dnnl_eltwise_mish; return 0;
    case UDNN_ACTIVATION_HARDSWISH: *alg = dnnl_eltwise_hardswish; return 0;
    }
    return -1;
}

static int build_act(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    dnnl_memory_desc_t xmd, ymd;
    dnnl_eltwise_desc_t d;
    dnnl_alg_kind_t alg;
    float a, b;
    /* oneDNN's eltwise wants one layout for source and destination */
    if (eltwise_of(pi, &alg, &a, &b) < 0 || md_of(&p->buf[pi->src], &xmd) < 0 ||
        md_of(&p->buf[pi->dst], &ymd) < 0 || !dnnl_memory_desc_equal(&xmd, &ymd) ||
        dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg, &xmd, a, b) !=
            dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DST, &ymd, -1);
    return 0;
}

static int build_pool(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    const bench_buf *x = &p->buf[pi->src], *y = &p->buf[pi->dst];
    static const dnnl_alg_kind_t algs[] = {dnnl_pooling_max, dnnl_pooling_avg_include_padding,
                                           dnnl_pooling_avg_exclude_padding, dnnl_pooling_max};
    dnnl_memory_desc_t xmd, ymd;
    dnnl_dims_t strides, kernel, pad_l, pad_r;
    for (int i = 0; i < pi->nd; i++) {
        strides[i] = pi->stride[i];
        kernel[i] = pi->window[i];
        pad_l[i] = pi->pad[i];
        pad_r[i] = (dnnl_dim_t)(y->dims[2 + i] - 1) * pi->stride[i] + pi->window[i] -
                   x->dims[2 + i] - pi->pad[i];
    }
    dnnl_pooling_desc_t d;
    if (md_of(x, &xmd) < 0 || md_of(y, &ymd) < 0 ||
        dnnl_pooling_forward_desc_init(&d, dnnl_forward_inference, algs[pi->mode & 3], &xmd, &ymd,
                                       strides, kernel, pad_l, pad_r) != dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DST, &ymd, -1);
    return 0;
}

/* Softmax over C (channel mode: axis 1) or over everything but n
 * (instance mode: a packed tensor seen as n x rest, axis 1). */
static int build_softmax(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    const bench_buf *x = &p->buf[pi->src], *y = &p->buf[pi->dst];
    dnnl_memory_desc_t xmd, ymd;
    if (pi->softmax_mode == UDNN_SOFTMAX_MODE_CHANNEL) {
        if (md_of(x, &xmd) < 0 || md_of(y, &ymd) < 0) return 1;
    } else {
        dnnl_data_type_t t;
        const int64_t rest = bench_count(x->rank - 1, x->dims + 1);
        if (x->strided || y->strided || dnnl_type(x->dtype, &t) < 0 ||
            memcmp(x->strides, y->strides, sizeof(int64_t) * (size_t)x->rank) != 0)
            return 1;
        dnnl_dims_t dims = {x->dims[0], rest}, strides = {rest, 1};
        if (dnnl_memory_desc_init_by_strides(&xmd, 2, dims, t, strides) != dnnl_success) return 1;
        ymd = xmd;
    }
    dnnl_status_t st;
    if (pi->mode == UDNN_SOFTMAX_LOG) {
        dnnl_logsoftmax_desc_t d;
        st = dnnl_logsoftmax_forward_desc_init(&d, dnnl_forward_inference, &xmd, 1);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL);
    } else {
        dnnl_softmax_desc_t d;
        st = dnnl_softmax_forward_desc_init(&d, dnnl_forward_inference, &xmd, 1);
        if (st == dnnl_success) st = dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL);
    }
    if (st != dnnl_success || !dnnl_memory_desc_equal(&xmd, &ymd)) return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DST, &ymd, -1);
    return 0;
}

static int build_lrn(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    dnnl_memory_desc_t xmd, ymd;
    dnnl_lrn_desc_t d;
    if (md_of(&p->buf[pi->src], &xmd) < 0 || md_of(&p->buf[pi->dst], &ymd) < 0 ||
        !dnnl_memory_desc_equal(&xmd, &ymd) ||
        dnnl_lrn_forward_desc_init(&d, dnnl_forward_inference, dnnl_lrn_across_channels, &xmd,
                                   pi->size, (float)pi->param[0], (float)pi->param[1],
                                   (float)pi->param[2]) != dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DST, &ymd, -1);
    return 0;
}

/* Spatial batch norm with separate scale and shift, FLOAT statistics. */
static int build_bn(const bench_problem *p, peer *q)
{
    const bench_peer_info *pi = &p->peer;
    if (pi->mode == UDNN_BATCHNORM_PER_ACTIVATION) return 1;
    const int infer = pi->op == BENCH_PEER_BN_FWD_INFER;
    const bench_buf *x = &p->buf[pi->src];
    dnnl_memory_desc_t xmd, ymd, cmd;
    dnnl_dims_t c = {x->dims[1]};
    dnnl_batch_normalization_desc_t d;
    unsigned flags = dnnl_use_scale | dnnl_use_shift | (infer ? dnnl_use_global_stats : 0u);
    if (md_of(x, &xmd) < 0 || md_of(&p->buf[pi->dst], &ymd) < 0 ||
        !dnnl_memory_desc_equal(&xmd, &ymd) ||
        dnnl_memory_desc_init_by_tag(&cmd, 1, c, dnnl_f32, dnnl_a) != dnnl_success ||
        dnnl_batch_normalization_forward_desc_init(&d,
                                                   infer ? dnnl_forward_inference
                                                         : dnnl_forward_training,
                                                   &xmd, (float)pi->param[0], flags) !=
            dnnl_success ||
        dnnl_primitive_desc_create(&q->pd, &d, NULL, q->engine, NULL) != dnnl_success)
        return 1;
    add_arg(q, DNNL_ARG_SRC, &xmd, pi->src);
    add_arg(q, DNNL_ARG_DST, &ymd, -1);
    add_arg(q, DNNL_ARG_SCALE, &cmd, pi->scale);
    add_arg(q, DNNL_ARG_SHIFT, &cmd, pi->bias);
    add_arg(q, DNNL_ARG_MEAN, &cmd, infer ? pi->mean : -1);
    add_arg(q, DNNL_ARG_VARIANCE, &cmd, infer ? pi->var : -1);
    return 0;
}

/* ---- memories and timing --------------------------------------------------------------- */

static void destroy(peer *q, int sets)
{
    for (int s = 0; s < sets; s++)
        for (int i = 0; i < q->nargs; i++)
            if (q->mem[s][i]) dnnl_memory_destroy(q->mem[s][i]);
    if (q->prim) dnnl_primitive_destroy(q->prim);
    if (q->pd) dnnl_primitive_desc_destroy(q->pd);
    if (q->hint) dnnl_primitive_desc_destroy(q->hint);
    if (q->stream) dnnl_stream_destroy(q->stream);
    if (q->engine) dnnl_engine_destroy(q->engine);
}

/* Fills `to` (of md) from host data laid out as user, through a reorder. */
static int reorder_into(peer *q, dnnl_memory_t to, const dnnl_memory_desc_t *md,
                        const dnnl_memory_desc_t *user, const bench_buf *b)
{
    dnnl_memory_t from = NULL;
    dnnl_primitive_desc_t rpd = NULL;
    dnnl_primitive_t r = NULL;
    int rc = -1;
    if (dnnl_memory_create(&from, user, q->engine, DNNL_MEMORY_ALLOCATE) == dnnl_success &&
        dnnl_reorder_primitive_desc_create(&rpd, user, q->engine, md, q->engine, NULL) ==
            dnnl_success &&
        dnnl_primitive_create(&r, rpd) == dnnl_success) {
        void *data;
        dnnl_memory_get_data_handle(from, &data);
        size_t size = dnnl_memory_desc_get_size(user);
        memcpy(data, b->host, size < b->bytes ? size : b->bytes);
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        if (dnnl_primitive_execute(r, q->stream, 2, args) == dnnl_success &&
            dnnl_stream_wait(q->stream) == dnnl_success)
            rc = 0;
    }
    if (r) dnnl_primitive_destroy(r);
    if (rpd) dnnl_primitive_desc_destroy(rpd);
    if (from) dnnl_memory_destroy(from);
    return rc;
}

/* Allocates each set's memories and copies udnn's initial data in. */
static int make_memories(const bench_problem *p, peer *q, int sets)
{
    for (int s = 0; s < sets; s++)
        for (int i = 0; i < q->nargs; i++) {
            if (dnnl_memory_create(&q->mem[s][i], &q->md[i], q->engine, DNNL_MEMORY_ALLOCATE) !=
                dnnl_success)
                return -1;
            void *data;
            dnnl_memory_get_data_handle(q->mem[s][i], &data);
            size_t size = dnnl_memory_desc_get_size(&q->md[i]);
            if (q->from[i] >= 0 && q->reorder[i]) {
                if (reorder_into(q, q->mem[s][i], &q->md[i], &q->user_md[i],
                                 &p->buf[q->from[i]]) < 0)
                    return -1;
            } else if (q->from[i] >= 0) {
                const bench_buf *b = &p->buf[q->from[i]];
                memcpy(data, b->host, size < b->bytes ? size : b->bytes);
            } else {
                memset(data, 0, size);
            }
        }
    return 0;
}

/* One run on buffer set `set`, and the wait for it, for bench_time_loop. */
typedef struct {
    peer *q;
} onednn_job;

static int onednn_run(void *ctx, int set)
{
    peer *q = ((onednn_job *)ctx)->q;
    dnnl_exec_arg_t args[MAX_ARGS];
    for (int i = 0; i < q->nargs; i++) {
        args[i].arg = q->arg[i];
        args[i].memory = q->mem[set][i];
    }
    return dnnl_primitive_execute(q->prim, q->stream, q->nargs, args) == dnnl_success ? 0 : -1;
}

static int onednn_sync(void *ctx)
{
    peer *q = ((onednn_job *)ctx)->q;
    return dnnl_stream_wait(q->stream) == dnnl_success ? 0 : -1;
}

int bench_onednn_time(bench_problem *p, bench_exec *e, const bench_timing *t,
                      bench_peer_result *r, char *msg, size_t n)
{
    if (p->peer.op == BENCH_PEER_NONE) return 1;
    /* oneDNN's memory of its own, as many sets as udnn's */
    int sets = e->sets;
    if (sets > BENCH_MAX_SETS) sets = BENCH_MAX_SETS;
    if (sets < 1) sets = 1;
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "onednn");
    peer q;
    memset(&q, 0, sizeof q);
    if (dnnl_engine_create(&q.engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&q.stream, q.engine, dnnl_stream_default_flags) != dnnl_success) {
        snprintf(msg, n, "cannot create a oneDNN CPU engine and stream");
        destroy(&q, 0);
        return -1;
    }
    int none;
    switch (p->peer.op) {
    case BENCH_PEER_CONV_FWD:
    case BENCH_PEER_CONV_BWD_DATA:
    case BENCH_PEER_CONV_BWD_FILTER: none = build_conv(p, &q); break;
    case BENCH_PEER_MATMUL: none = build_matmul(p, &q); break;
    case BENCH_PEER_ACT_FWD: none = build_act(p, &q); break;
    case BENCH_PEER_POOL_FWD: none = build_pool(p, &q); break;
    case BENCH_PEER_SOFTMAX_FWD: none = build_softmax(p, &q); break;
    case BENCH_PEER_LRN_FWD: none = build_lrn(p, &q); break;
    case BENCH_PEER_BN_FWD_TRAIN:
    case BENCH_PEER_BN_FWD_INFER: none = build_bn(p, &q); break;
    default: none = 1; break;
    }
    if (none || dnnl_primitive_create(&q.prim, q.pd) != dnnl_success) {
        destroy(&q, 0);
        return 1;
    }
    if (make_memories(p, &q, sets) < 0) {
        snprintf(msg, n, "cannot allocate oneDNN memory");
        destroy(&q, sets);
        return -1;
    }
    onednn_job job = {&q};
    /* the host's clock: oneDNN runs on the CPU */
    int rc = bench_time_loop(onednn_run, onednn_sync, &job, sets, t, NULL, &r->times);
    if (rc != 0) {
        snprintf(msg, n, "a oneDNN run failed");
        rc = -1;
    }
    destroy(&q, sets);
    return rc < 0 ? -1 : 0;
}
