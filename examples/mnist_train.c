/* mnist_train.c - the network's passes: forward, cross-entropy, backward,
 * the SGD update and inference, each a short sequence of udnn calls on the
 * handle's memory. */
#include "examples/mnist_net_impl.h"

static const float one = 1.0f, zero = 0.0f;

static float *param(const mnist_net *net, size_t offset)
{
    return net->params + offset;
}

static float *grad(const mnist_net *net, size_t offset)
{
    return net->grads + offset;
}

/* ---- forward ---------------------------------------------------------------------- */

/* conv + bias + ReLU in one call. A backend may lack the fused op for the
 * algorithm it ranks first for the plain convolution; then the next one
 * it ranks takes over, and stays until the batch size changes. */
static udnnStatus_t conv_bias_relu(mnist_net *net, conv_block *b, udnnTensorDescriptor_t x_desc,
                                   const float *x)
{
    for (;;) {
        udnnStatus_t st = udnnConvolutionBiasActivationForward(
            net->h, &one, x_desc, x, b->w_desc, param(net, b->w), b->conv, b->fwd[b->fused],
            net->ws, net->ws_bytes, &zero, b->y_desc, b->a, b->channel_desc, param(net, b->bias),
            net->relu, b->y_desc, b->a);
        if (st != UDNN_STATUS_NOT_SUPPORTED || b->fused + 1 >= b->fwd_count) return st;
        b->fused++;
    }
}

/* conv, batch norm (batch statistics in training, running ones in
 * inference), then ReLU in place. */
static udnnStatus_t conv_bn_relu(mnist_net *net, conv_block *b, udnnTensorDescriptor_t x_desc,
                                 const float *x, int training)
{
    const udnnHandle_t h = net->h;
    float *mean = net->stats + b->mean, *var = net->stats + b->var;
    TRY(udnnConvolutionForward(h, &one, x_desc, x, b->w_desc, param(net, b->w), b->conv, b->fwd[0],
                               net->ws, net->ws_bytes, &zero, b->y_desc, b->z));
    if (training)
        TRY(udnnBatchNormalizationForwardTraining(
            h, UDNN_BATCHNORM_SPATIAL, &one, &zero, b->y_desc, b->z, b->y_desc, b->a,
            b->channel_desc, param(net, b->scale), param(net, b->shift), BN_AVERAGE_FACTOR, mean,
            var, BN_EPSILON, b->save_mean, b->save_inv_var));
    else
        TRY(udnnBatchNormalizationForwardInference(
            h, UDNN_BATCHNORM_SPATIAL, &one, &zero, b->y_desc, b->z, b->y_desc, b->a,
            b->channel_desc, param(net, b->scale), param(net, b->shift), mean, var, BN_EPSILON));
    return udnnActivationForward(h, net->relu, &one, b->y_desc, b->a, &zero, b->y_desc, b->a);
}

static udnnStatus_t conv_forward(mnist_net *net, conv_block *b, udnnTensorDescriptor_t x_desc,
                                 const float *x, int training)
{
    if (net->cfg.batch_norm)
        TRY(conv_bn_relu(net, b, x_desc, x, training));
    else
        TRY(conv_bias_relu(net, b, x_desc, x));
    return udnnPoolingForward(net->h, net->pool, &one, b->y_desc, b->a, &zero, b->pooled_desc,
                              b->pooled);
}

/* y = x w^T + bias, then ReLU in place when asked. */
static udnnStatus_t fc_forward(mnist_net *net, fc_layer *l, const float *x, int relu)
{
    TRY(udnnMatMul(net->h, 0, 1, &one, l->x_mat, x, l->w_mat, param(net, l->w), &zero, l->y_mat,
                   l->y));
    TRY(udnnAddTensor(net->h, &one, l->bias_desc, param(net, l->bias), &one, l->y_desc, l->y));
    if (!relu) return UDNN_STATUS_SUCCESS;
    return udnnActivationForward(net->h, net->relu, &one, l->y_desc, l->y, &zero, l->y_desc, l->y);
}

static udnnStatus_t forward(mnist_net *net, int training)
{
    conv_block *c = net->conv;
    fc_layer *f = net->fc;
    TRY(conv_forward(net, &c[0], net->x_desc, net->x, training));
    TRY(conv_forward(net, &c[1], c[0].pooled_desc, c[0].pooled, training));
    /* pooled NCHW images are rows of 32 * 7 * 7 features, in PyTorch's
     * flattening order */
    TRY(fc_forward(net, &f[0], c[1].pooled, 1));
    net->fc2_in = f[0].y;
    if (training && net->cfg.dropout > 0.0f) {
        TRY(udnnDropoutForward(net->h, net->drop, f[0].y_desc, f[0].y, f[0].y_desc, net->dropped,
                               net->drop_reserve, net->drop_reserve_bytes));
        net->fc2_in = net->dropped;
    }
    return fc_forward(net, &f[1], net->fc2_in, 0);
}

/* ---- loss ------------------------------------------------------------------------- */

/* The batch's mean cross-entropy into net->loss, and its gradient with
 * respect to the logits, (softmax - onehot) / n, into fc[1].dy. */
static udnnStatus_t softmax_cross_entropy(mnist_net *net)
{
    const udnnHandle_t h = net->h;
    const fc_layer *out = &net->fc[1];
    const udnnTensorDescriptor_t d = out->y_desc;
    const float inv_n = 1.0f / (float)net->n, minus_inv_n = -inv_n;
    TRY(udnnSoftmaxForward(h, UDNN_SOFTMAX_ACCURATE, UDNN_SOFTMAX_MODE_INSTANCE, &one, d, out->y,
                           &zero, d, net->probs));
    TRY(udnnSoftmaxForward(h, UDNN_SOFTMAX_LOG, UDNN_SOFTMAX_MODE_INSTANCE, &one, d, out->y, &zero,
                           d, net->log_probs));
    /* -(1/n) * sum of onehot * log softmax over the batch and the classes */
    TRY(udnnOpTensor(h, net->mul, &one, d, net->onehot, &one, d, net->log_probs, &zero, d,
                     net->picked));
    TRY(udnnReduceTensor(h, net->sum, NULL, 0, net->ws, net->ws_bytes, &minus_inv_n, d, net->picked,
                         &zero, net->scalar_desc, net->loss));
    return udnnOpTensor(h, net->add, &inv_n, d, net->probs, &minus_inv_n, d, net->onehot, &zero, d,
                        out->dy);
}

/* ---- backward --------------------------------------------------------------------- */

/* From l->dy: the gradients of w and bias, and dx when asked. */
static udnnStatus_t fc_backward(mnist_net *net, fc_layer *l, const float *x, float *dx)
{
    TRY(udnnMatMul(net->h, 1, 0, &one, l->y_mat, l->dy, l->x_mat, x, &zero, l->w_mat,
                   grad(net, l->w)));
    TRY(udnnConvolutionBackwardBias(net->h, &one, l->y_desc, l->dy, &zero, l->bias_desc,
                                    grad(net, l->bias)));
    if (dx == NULL) return UDNN_STATUS_SUCCESS;
    return udnnMatMul(net->h, 0, 0, &one, l->y_mat, l->dy, l->w_mat, param(net, l->w), &zero,
                      l->x_mat, dx);
}

/* ReLU's derivative read from its output: the input was overwritten in
 * place, and y > 0 exactly where x > 0. dy becomes dx in place. */
static udnnStatus_t relu_backward(mnist_net *net, udnnTensorDescriptor_t d, const float *y,
                                  float *dy)
{
    return udnnActivationBackward(net->h, net->relu, &one, d, y, d, dy, d, y, &zero, d, dy);
}

/* From b->dpooled: the gradients of the block's parameters, and dx when
 * asked. */
static udnnStatus_t conv_backward(mnist_net *net, conv_block *b, udnnTensorDescriptor_t x_desc,
                                  const float *x, float *dx)
{
    const udnnHandle_t h = net->h;
    TRY(udnnPoolingBackward(h, net->pool, &one, b->pooled_desc, b->pooled, b->pooled_desc,
                            b->dpooled, b->y_desc, b->a, &zero, b->y_desc, b->da));
    TRY(relu_backward(net, b->y_desc, b->a, b->da));
    float *dconv = b->da;
    if (net->cfg.batch_norm) {
        TRY(udnnBatchNormalizationBackward(
            h, UDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, b->y_desc, b->z, b->y_desc, b->da,
            b->y_desc, b->dz, b->channel_desc, param(net, b->scale), grad(net, b->scale),
            grad(net, b->shift), BN_EPSILON, b->save_mean, b->save_inv_var));
        dconv = b->dz;
    } else {
        TRY(udnnConvolutionBackwardBias(h, &one, b->y_desc, dconv, &zero, b->channel_desc,
                                        grad(net, b->bias)));
    }
    TRY(udnnConvolutionBackwardFilter(h, &one, x_desc, x, b->y_desc, dconv, b->conv, b->bwd_filter,
                                      net->ws, net->ws_bytes, &zero, b->w_desc, grad(net, b->w)));
    if (dx == NULL) return UDNN_STATUS_SUCCESS;
    return udnnConvolutionBackwardData(h, &one, b->w_desc, param(net, b->w), b->y_desc, dconv,
                                       b->conv, b->bwd_data, net->ws, net->ws_bytes, &zero, x_desc,
                                       dx);
}

static udnnStatus_t backward(mnist_net *net)
{
    conv_block *c = net->conv;
    fc_layer *f = net->fc;
    const int dropout = net->cfg.dropout > 0.0f;
    TRY(fc_backward(net, &f[1], net->fc2_in, dropout ? net->d_dropped : f[0].dy));
    if (dropout)
        TRY(udnnDropoutBackward(net->h, net->drop, f[0].y_desc, net->d_dropped, f[0].y_desc,
                                f[0].dy, net->drop_reserve, net->drop_reserve_bytes));
    TRY(relu_backward(net, f[0].y_desc, f[0].y, f[0].dy));
    TRY(fc_backward(net, &f[0], c[1].pooled, c[1].dpooled));
    TRY(conv_backward(net, &c[1], c[0].pooled_desc, c[0].pooled, c[0].dpooled));
    /* the input needs no gradient */
    return conv_backward(net, &c[0], net->x_desc, net->x, NULL);
}

/* Every parameter sits in one flat buffer, so the whole update is two
 * calls: v = momentum * v + grad + weight_decay * w, then
 * w = w - learning_rate * v. */
static udnnStatus_t sgd_update(mnist_net *net, const mnist_sgd *sgd)
{
    const udnnTensorDescriptor_t d = net->flat_desc;
    const float step = -sgd->learning_rate;
    TRY(udnnOpTensor(net->h, net->add, &one, d, net->grads, &sgd->weight_decay, d, net->params,
                     &sgd->momentum, d, net->velocity));
    return udnnAddTensor(net->h, &step, d, net->velocity, &one, d, net->params);
}

/* ---- the learning-rate schedule --------------------------------------------------- */

mnist_schedule mnist_schedule_of(float peak, float momentum, float weight_decay, long total,
                                 long warmup, int decay)
{
    const long longest_warmup = total / 10;
    return (mnist_schedule){
        peak, momentum, weight_decay, total, warmup < longest_warmup ? warmup : longest_warmup,
        decay};
}

mnist_sgd mnist_schedule_at(const mnist_schedule *s, long t)
{
    double lr = s->peak;
    if (t < s->warmup) lr *= (double)(t + 1) / (double)s->warmup;
    if (s->decay) lr *= 1.0 - (double)t / (double)s->total;
    return (mnist_sgd){(float)lr, s->momentum, s->weight_decay};
}

/* ---- the public passes ------------------------------------------------------------ */

udnnStatus_t mnist_net_train_step(mnist_net *net, int n, const mnist_sgd *sgd, float *loss)
{
    TRY(mnist_net_set_batch(net, n));
    TRY(forward(net, 1));
    TRY(softmax_cross_entropy(net));
    TRY(backward(net));
    TRY(sgd_update(net, sgd));
    /* last, so that a GPU has the whole step queued before the host waits */
    return udnnMemcpy(net->h, loss, net->loss, sizeof *loss, UDNN_MEMCPY_DEVICE_TO_HOST);
}

udnnStatus_t mnist_net_predict(mnist_net *net, int n, uint32_t *classes)
{
    TRY(mnist_net_set_batch(net, n));
    TRY(forward(net, 0));
    const fc_layer *out = &net->fc[1];
    TRY(udnnReduceTensor(net->h, net->argmax, net->classes, (size_t)n * sizeof *classes, net->ws,
                         net->ws_bytes, &one, out->y_desc, out->y, &zero, net->row_desc,
                         net->row_max));
    return udnnMemcpy(net->h, classes, net->classes, (size_t)n * sizeof *classes,
                      UDNN_MEMCPY_DEVICE_TO_HOST);
}
