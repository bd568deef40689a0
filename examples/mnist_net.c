/* mnist_net.c - the network's shapes, its memory in the handle's backend,
 * the algorithms picked for it, and its weights. The passes that train and
 * run it are in mnist_train.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "examples/mnist_net_impl.h"
#include "examples/mnist_rng.h"

/* ---- descriptors and buffers that destroy finds again ----------------------------- */

static udnnStatus_t new_tensor(mnist_net *net, udnnTensorDescriptor_t *d)
{
    TRY(udnnCreateTensorDescriptor(d));
    net->tensors[net->tensor_count++] = *d;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t new_floats(mnist_net *net, float **p, size_t count)
{
    void *mem = NULL;
    TRY(udnnMalloc(net->h, &mem, count * sizeof(float)));
    net->buffers[net->buffer_count++] = mem;
    *p = mem;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t set_nchw(udnnTensorDescriptor_t d, int n, int c, int h, int w)
{
    return udnnSetTensor4dDescriptor(d, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, n, c, h, w);
}

static udnnStatus_t set_matrix(udnnTensorDescriptor_t d, int rows, int cols)
{
    const int dims[2] = {rows, cols}, strides[2] = {cols, 1};
    return udnnSetTensorNdDescriptor(d, UDNN_DATA_FLOAT, 2, dims, strides);
}

/* ---- where each learned tensor lives ---------------------------------------------- */

/* Room for a tensor of count floats in params (or stats); offsets are kept
 * to multiples of 16 floats so every tensor starts on a 64-byte line. */
static size_t add_slot(mnist_net *net, int in_stats, size_t count, init_rule init, int fan_in)
{
    size_t *total = in_stats ? &net->stats_count : &net->param_count;
    weight_slot *s = &net->slots[net->slot_count++];
    *s = (weight_slot){in_stats, *total, count, init, fan_in};
    *total += (count + 15) & ~(size_t)15;
    return s->offset;
}

static void lay_out_conv(mnist_net *net, conv_block *b, int c_in, int c_out, int side)
{
    b->c_in = c_in;
    b->c_out = c_out;
    b->side = side;
    b->w = add_slot(net, 0, (size_t)c_out * c_in * 25, INIT_HE_UNIFORM, c_in * 25);
    if (!net->cfg.batch_norm) {
        b->bias = add_slot(net, 0, c_out, INIT_ZERO, 0);
        return;
    }
    b->scale = add_slot(net, 0, c_out, INIT_ONE, 0);
    b->shift = add_slot(net, 0, c_out, INIT_ZERO, 0);
    b->mean = add_slot(net, 1, c_out, INIT_ZERO, 0);
    b->var = add_slot(net, 1, c_out, INIT_ONE, 0);
}

static void lay_out_fc(mnist_net *net, fc_layer *l, int in, int out, init_rule init)
{
    l->in = in;
    l->out = out;
    l->w = add_slot(net, 0, (size_t)out * in, init, in);
    l->bias = add_slot(net, 0, out, INIT_ZERO, 0);
}

/* ---- the parts that do not depend on the batch size ------------------------------- */

static udnnStatus_t build_conv(mnist_net *net, conv_block *b)
{
    const int n = net->cfg.batch;
    const size_t full = (size_t)n * b->c_out * b->side * b->side, pooled = full / 4;
    TRY(udnnCreateFilterDescriptor(&b->w_desc));
    TRY(udnnSetFilter4dDescriptor(b->w_desc, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, b->c_out, b->c_in,
                                  5, 5));
    TRY(udnnCreateConvolutionDescriptor(&b->conv));
    /* pad 2 keeps 5x5 outputs the input's size; cross-correlation is what
     * every framework calls convolution */
    TRY(udnnSetConvolution2dDescriptor(b->conv, 2, 2, 1, 1, 1, 1, UDNN_CROSS_CORRELATION,
                                       UDNN_DATA_FLOAT));
    TRY(new_tensor(net, &b->y_desc));
    TRY(new_tensor(net, &b->pooled_desc));
    TRY(new_tensor(net, &b->channel_desc));
    TRY(set_nchw(b->channel_desc, 1, b->c_out, 1, 1));
    TRY(new_floats(net, &b->a, full));
    TRY(new_floats(net, &b->da, full));
    TRY(new_floats(net, &b->pooled, pooled));
    TRY(new_floats(net, &b->dpooled, pooled));
    if (net->cfg.batch_norm) {
        TRY(new_floats(net, &b->z, full));
        TRY(new_floats(net, &b->dz, full));
        TRY(new_floats(net, &b->save_mean, b->c_out));
        TRY(new_floats(net, &b->save_inv_var, b->c_out));
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t build_fc(mnist_net *net, fc_layer *l)
{
    TRY(new_tensor(net, &l->x_mat));
    TRY(new_tensor(net, &l->y_mat));
    TRY(new_tensor(net, &l->y_desc));
    TRY(new_tensor(net, &l->w_mat));
    TRY(set_matrix(l->w_mat, l->out, l->in));
    TRY(new_tensor(net, &l->bias_desc));
    TRY(set_nchw(l->bias_desc, 1, l->out, 1, 1));
    TRY(new_floats(net, &l->y, (size_t)net->cfg.batch * l->out));
    TRY(new_floats(net, &l->dy, (size_t)net->cfg.batch * l->out));
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t build_ops(mnist_net *net)
{
    TRY(udnnCreateActivationDescriptor(&net->relu));
    TRY(udnnSetActivationDescriptor(net->relu, UDNN_ACTIVATION_RELU, UDNN_NOT_PROPAGATE_NAN, 0.0));
    TRY(udnnCreatePoolingDescriptor(&net->pool));
    TRY(udnnSetPooling2dDescriptor(net->pool, UDNN_POOLING_MAX, UDNN_NOT_PROPAGATE_NAN, 2, 2, 0, 0,
                                   2, 2));
    TRY(udnnCreateOpTensorDescriptor(&net->add));
    TRY(udnnSetOpTensorDescriptor(net->add, UDNN_OP_TENSOR_ADD, UDNN_DATA_FLOAT,
                                  UDNN_NOT_PROPAGATE_NAN));
    TRY(udnnCreateOpTensorDescriptor(&net->mul));
    TRY(udnnSetOpTensorDescriptor(net->mul, UDNN_OP_TENSOR_MUL, UDNN_DATA_FLOAT,
                                  UDNN_NOT_PROPAGATE_NAN));
    TRY(udnnCreateReduceTensorDescriptor(&net->sum));
    TRY(udnnSetReduceTensorDescriptor(net->sum, UDNN_REDUCE_TENSOR_ADD, UDNN_DATA_FLOAT,
                                      UDNN_NOT_PROPAGATE_NAN, UDNN_REDUCE_TENSOR_NO_INDICES,
                                      UDNN_32BIT_INDICES));
    TRY(udnnCreateReduceTensorDescriptor(&net->argmax));
    TRY(udnnSetReduceTensorDescriptor(net->argmax, UDNN_REDUCE_TENSOR_MAX, UDNN_DATA_FLOAT,
                                      UDNN_NOT_PROPAGATE_NAN, UDNN_REDUCE_TENSOR_FLATTENED_INDICES,
                                      UDNN_32BIT_INDICES));
    return UDNN_STATUS_SUCCESS;
}

/* Dropout after the hidden layer: its generator state, and the mask each
 * forward pass leaves for the backward one. */
static udnnStatus_t build_dropout(mnist_net *net)
{
    udnnTensorDescriptor_t hidden = net->fc[0].y_desc;
    size_t state_bytes;
    float *states, *reserve;
    TRY(udnnCreateDropoutDescriptor(&net->drop));
    TRY(udnnDropoutGetStatesSize(net->h, &state_bytes));
    TRY(set_nchw(hidden, net->cfg.batch, MNIST_HIDDEN, 1, 1));
    TRY(udnnDropoutGetReserveSpaceSize(hidden, &net->drop_reserve_bytes));
    TRY(new_floats(net, &states, (state_bytes + sizeof(float) - 1) / sizeof(float)));
    TRY(new_floats(net, &reserve, (net->drop_reserve_bytes + sizeof(float) - 1) / sizeof(float)));
    net->drop_states = states;
    net->drop_reserve = reserve;
    TRY(udnnSetDropoutDescriptor(net->drop, net->h, net->cfg.dropout, states, state_bytes,
                                 net->cfg.dropout_seed));
    const size_t hidden_floats = (size_t)net->cfg.batch * MNIST_HIDDEN;
    TRY(new_floats(net, &net->dropped, hidden_floats));
    return new_floats(net, &net->d_dropped, hidden_floats);
}

static udnnStatus_t build(mnist_net *net)
{
    const int n = net->cfg.batch;
    lay_out_conv(net, &net->conv[0], 1, 16, MNIST_NET_SIDE);
    lay_out_conv(net, &net->conv[1], 16, 32, MNIST_NET_SIDE / 2);
    lay_out_fc(net, &net->fc[0], 32 * (MNIST_NET_SIDE / 4) * (MNIST_NET_SIDE / 4), MNIST_HIDDEN,
               INIT_HE_UNIFORM);
    lay_out_fc(net, &net->fc[1], MNIST_HIDDEN, MNIST_OUT, INIT_LECUN_UNIFORM);

    TRY(new_tensor(net, &net->x_desc));
    TRY(new_tensor(net, &net->row_desc));
    TRY(new_tensor(net, &net->scalar_desc));
    TRY(set_nchw(net->scalar_desc, 1, 1, 1, 1));
    TRY(new_tensor(net, &net->flat_desc));
    TRY(set_nchw(net->flat_desc, 1, (int)net->param_count, 1, 1));
    TRY(build_ops(net));
    for (int i = 0; i < 2; i++) TRY(build_conv(net, &net->conv[i]));
    for (int i = 0; i < 2; i++) TRY(build_fc(net, &net->fc[i]));
    if (net->cfg.dropout > 0.0f) TRY(build_dropout(net));

    const size_t images = (size_t)n * MNIST_NET_SIDE * MNIST_NET_SIDE,
                 logits = (size_t)n * MNIST_OUT;
    TRY(new_floats(net, &net->x, images));
    TRY(new_floats(net, &net->onehot, logits));
    TRY(new_floats(net, &net->probs, logits));
    TRY(new_floats(net, &net->log_probs, logits));
    TRY(new_floats(net, &net->picked, logits));
    TRY(new_floats(net, &net->loss, 1));
    TRY(new_floats(net, &net->row_max, n));
    float *classes;
    TRY(new_floats(net, &classes, n)); /* uint32_t and float have one size */
    net->classes = (uint32_t *)classes;
    TRY(new_floats(net, &net->params, net->param_count));
    TRY(new_floats(net, &net->grads, net->param_count));
    TRY(new_floats(net, &net->velocity, net->param_count));
    /* padding between tensors takes part in the flat update: keep it 0 */
    TRY(udnnMemset(net->h, net->params, 0, net->param_count * sizeof(float)));
    TRY(udnnMemset(net->h, net->grads, 0, net->param_count * sizeof(float)));
    TRY(udnnMemset(net->h, net->velocity, 0, net->param_count * sizeof(float)));
    if (net->stats_count > 0) TRY(new_floats(net, &net->stats, net->stats_count));
    return mnist_net_set_batch(net, n);
}

udnnStatus_t mnist_net_create(udnnHandle_t handle, const mnist_net_config *config, mnist_net **out)
{
    mnist_net *net = calloc(1, sizeof *net);
    if (net == NULL) return UDNN_STATUS_ALLOC_FAILED;
    net->h = handle;
    net->cfg = *config;
    udnnStatus_t st = build(net);
    if (st != UDNN_STATUS_SUCCESS) {
        mnist_net_destroy(net);
        return st;
    }
    *out = net;
    return UDNN_STATUS_SUCCESS;
}

void mnist_net_destroy(mnist_net *net)
{
    if (net == NULL) return;
    /* only what was created: a NULL descriptor would overwrite the message
     * of the failure that brought us here */
    for (int i = 0; i < net->buffer_count; i++) udnnFree(net->h, net->buffers[i]);
    if (net->ws) udnnFree(net->h, net->ws);
    for (int i = 0; i < net->tensor_count; i++) udnnDestroyTensorDescriptor(net->tensors[i]);
    for (int i = 0; i < 2; i++) {
        if (net->conv[i].w_desc) udnnDestroyFilterDescriptor(net->conv[i].w_desc);
        if (net->conv[i].conv) udnnDestroyConvolutionDescriptor(net->conv[i].conv);
    }
    if (net->relu) udnnDestroyActivationDescriptor(net->relu);
    if (net->pool) udnnDestroyPoolingDescriptor(net->pool);
    if (net->add) udnnDestroyOpTensorDescriptor(net->add);
    if (net->mul) udnnDestroyOpTensorDescriptor(net->mul);
    if (net->sum) udnnDestroyReduceTensorDescriptor(net->sum);
    if (net->argmax) udnnDestroyReduceTensorDescriptor(net->argmax);
    if (net->drop) udnnDestroyDropoutDescriptor(net->drop);
    free(net);
}

/* ---- batch-sized shapes and the algorithms for them ------------------------------- */

static size_t max_size(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* The backend's ranking for this block's convolutions at the current
 * batch: the best runnable algorithm of each direction, and the forward
 * ones the fused op may fall back on. Raises *ws to what they need. */
static udnnStatus_t pick_algos(mnist_net *net, conv_block *b, udnnTensorDescriptor_t x_desc,
                               int needs_dx, size_t *ws)
{
    udnnConvolutionFwdAlgoPerf_t fwd[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    udnnConvolutionBwdFilterAlgoPerf_t bwf[UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    udnnConvolutionBwdDataAlgoPerf_t bwd[UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int got = 0;
    TRY(udnnGetConvolutionForwardAlgorithm_v7(net->h, x_desc, b->w_desc, b->conv, b->y_desc,
                                              UDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, fwd));
    /* the best one always; the others as fallbacks for the fused op when
     * they need no more workspace than it does */
    b->fwd[0] = fwd[0].algo;
    b->fwd_count = 1;
    b->fused = 0;
    *ws = max_size(*ws, fwd[0].memory);
    for (int i = 1; i < got; i++)
        if (fwd[i].status == UDNN_STATUS_SUCCESS && fwd[i].memory <= fwd[0].memory)
            b->fwd[b->fwd_count++] = fwd[i].algo;

    TRY(udnnGetConvolutionBackwardFilterAlgorithm_v7(net->h, x_desc, b->y_desc, b->conv, b->w_desc,
                                                     UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &got,
                                                     bwf));
    b->bwd_filter = bwf[0].algo;
    *ws = max_size(*ws, bwf[0].memory);
    if (needs_dx) {
        TRY(udnnGetConvolutionBackwardDataAlgorithm_v7(net->h, b->w_desc, b->y_desc, b->conv,
                                                       x_desc, UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                                                       &got, bwd));
        b->bwd_data = bwd[0].algo;
        *ws = max_size(*ws, bwd[0].memory);
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t set_conv_shapes(conv_block *b, int n)
{
    TRY(set_nchw(b->y_desc, n, b->c_out, b->side, b->side));
    return set_nchw(b->pooled_desc, n, b->c_out, b->side / 2, b->side / 2);
}

static udnnStatus_t set_fc_shapes(fc_layer *l, int n)
{
    TRY(set_matrix(l->x_mat, n, l->in));
    TRY(set_matrix(l->y_mat, n, l->out));
    return set_nchw(l->y_desc, n, l->out, 1, 1);
}

udnnStatus_t mnist_net_set_batch(mnist_net *net, int n)
{
    if (n == net->n) return UDNN_STATUS_SUCCESS;
    if (n < 1 || n > net->cfg.batch) return UDNN_STATUS_BAD_PARAM;
    TRY(set_nchw(net->x_desc, n, 1, MNIST_NET_SIDE, MNIST_NET_SIDE));
    TRY(set_nchw(net->row_desc, n, 1, 1, 1));
    for (int i = 0; i < 2; i++) TRY(set_conv_shapes(&net->conv[i], n));
    for (int i = 0; i < 2; i++) TRY(set_fc_shapes(&net->fc[i], n));

    size_t ws = 0, reduce_ws = 0;
    TRY(pick_algos(net, &net->conv[0], net->x_desc, 0, &ws));
    TRY(pick_algos(net, &net->conv[1], net->conv[0].pooled_desc, 1, &ws));
    const udnnTensorDescriptor_t logits = net->fc[1].y_desc;
    TRY(udnnGetReductionWorkspaceSize(net->h, net->sum, logits, net->scalar_desc, &reduce_ws));
    ws = max_size(ws, reduce_ws);
    TRY(udnnGetReductionWorkspaceSize(net->h, net->argmax, logits, net->row_desc, &reduce_ws));
    ws = max_size(ws, reduce_ws);
    if (ws > net->ws_bytes) {
        if (net->ws) TRY(udnnFree(net->h, net->ws));
        net->ws = NULL;
        net->ws_bytes = 0;
        TRY(udnnMalloc(net->h, &net->ws, ws));
        net->ws_bytes = ws;
    }
    net->n = n;
    return UDNN_STATUS_SUCCESS;
}

/* ---- weights ---------------------------------------------------------------------- */

size_t mnist_net_weight_count(const mnist_net *net)
{
    size_t total = 0;
    for (int i = 0; i < net->slot_count; i++) total += net->slots[i].count;
    return total;
}

/* Host copies of params and stats, laid out as in the handle's memory. */
typedef struct {
    float *params, *stats;
} host_mirror;

static udnnStatus_t mirror_alloc(const mnist_net *net, host_mirror *m)
{
    m->params = calloc(net->param_count, sizeof(float));
    m->stats = calloc(net->stats_count + 1, sizeof(float));
    if (m->params == NULL || m->stats == NULL) {
        free(m->params);
        free(m->stats);
        return UDNN_STATUS_ALLOC_FAILED;
    }
    return UDNN_STATUS_SUCCESS;
}

static void mirror_free(host_mirror *m)
{
    free(m->params);
    free(m->stats);
}

static float *slot_in(const host_mirror *m, const weight_slot *s)
{
    return (s->in_stats ? m->stats : m->params) + s->offset;
}

static udnnStatus_t mirror_upload(mnist_net *net, const host_mirror *m)
{
    TRY(udnnMemcpy(net->h, net->params, m->params, net->param_count * sizeof(float),
                   UDNN_MEMCPY_HOST_TO_DEVICE));
    if (net->stats_count > 0)
        TRY(udnnMemcpy(net->h, net->stats, m->stats, net->stats_count * sizeof(float),
                       UDNN_MEMCPY_HOST_TO_DEVICE));
    /* a fresh start for SGD's momentum */
    return udnnMemset(net->h, net->velocity, 0, net->param_count * sizeof(float));
}

udnnStatus_t mnist_net_init(mnist_net *net, uint64_t seed)
{
    host_mirror m;
    TRY(mirror_alloc(net, &m));
    mnist_rng rng = mnist_rng_seeded(seed);
    for (int i = 0; i < net->slot_count; i++) {
        const weight_slot *s = &net->slots[i];
        float *v = slot_in(&m, s);
        const int random = s->init == INIT_HE_UNIFORM || s->init == INIT_LECUN_UNIFORM;
        const double bound = sqrt((s->init == INIT_HE_UNIFORM ? 6.0 : 3.0) / s->fan_in);
        for (size_t j = 0; j < s->count; j++)
            v[j] = random                ? (float)((2.0 * mnist_rng_uniform(&rng) - 1.0) * bound)
                   : s->init == INIT_ONE ? 1.0f
                                         : 0.0f;
    }
    udnnStatus_t st = mirror_upload(net, &m);
    mirror_free(&m);
    return st;
}

udnnStatus_t mnist_net_get_weights(mnist_net *net, float *values)
{
    host_mirror m;
    TRY(mirror_alloc(net, &m));
    udnnStatus_t st = udnnMemcpy(net->h, m.params, net->params, net->param_count * sizeof(float),
                                 UDNN_MEMCPY_DEVICE_TO_HOST);
    if (st == UDNN_STATUS_SUCCESS && net->stats_count > 0)
        st = udnnMemcpy(net->h, m.stats, net->stats, net->stats_count * sizeof(float),
                        UDNN_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < net->slot_count && st == UDNN_STATUS_SUCCESS; i++) {
        const weight_slot *s = &net->slots[i];
        memcpy(values, slot_in(&m, s), s->count * sizeof(float));
        values += s->count;
    }
    mirror_free(&m);
    return st;
}

udnnStatus_t mnist_net_set_weights(mnist_net *net, const float *values)
{
    host_mirror m;
    TRY(mirror_alloc(net, &m));
    for (int i = 0; i < net->slot_count; i++) {
        const weight_slot *s = &net->slots[i];
        memcpy(slot_in(&m, s), values, s->count * sizeof(float));
        values += s->count;
    }
    udnnStatus_t st = mirror_upload(net, &m);
    mirror_free(&m);
    return st;
}

udnnStatus_t mnist_net_upload(mnist_net *net, int n, const float *images, const float *onehot)
{
    if (n < 1 || n > net->cfg.batch) return UDNN_STATUS_BAD_PARAM;
    TRY(udnnMemcpy(net->h, net->x, images,
                   (size_t)n * MNIST_NET_SIDE * MNIST_NET_SIDE * sizeof(float),
                   UDNN_MEMCPY_HOST_TO_DEVICE));
    if (onehot == NULL) return UDNN_STATUS_SUCCESS;
    return udnnMemcpy(net->h, net->onehot, onehot, (size_t)n * MNIST_OUT * sizeof(float),
                      UDNN_MEMCPY_HOST_TO_DEVICE);
}
