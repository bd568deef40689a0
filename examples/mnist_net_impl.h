/* mnist_net_impl.h - the network's insides, shared by mnist_net.c (its
 * shapes, memory and weights) and mnist_train.c (its passes). */
#ifndef MNIST_NET_IMPL_H
#define MNIST_NET_IMPL_H

#include "examples/mnist_net.h"

#define TRY(call)                                                                                  \
    do {                                                                                           \
        udnnStatus_t st_ = (call);                                                                 \
        if (st_ != UDNN_STATUS_SUCCESS) return st_;                                                \
    } while (0)

enum { MNIST_HIDDEN = 128, MNIST_OUT = 10 };

/* PyTorch's defaults, so that --bn compares with BatchNorm2d. */
#define BN_EPSILON 1e-5
#define BN_AVERAGE_FACTOR 0.1

/* A convolution block: conv (+ bias, or batch norm) + ReLU, then 2x2 max
 * pooling. Offsets are in floats into net->params (and net->grads) or, for
 * the running statistics, net->stats. */
typedef struct {
    int c_in, c_out, side; /* input channels, output channels, input height = width */
    udnnFilterDescriptor_t w_desc;
    udnnConvolutionDescriptor_t conv;
    udnnTensorDescriptor_t y_desc;       /* n x c_out x side x side */
    udnnTensorDescriptor_t pooled_desc;  /* n x c_out x side/2 x side/2 */
    udnnTensorDescriptor_t channel_desc; /* 1 x c_out x 1 x 1: bias, batch-norm vectors */
    size_t w, bias, scale, shift;        /* in params */
    size_t mean, var;                    /* in stats */
    float *z; /* the convolution's output, before batch norm (--bn only) */
    float *a; /* after bias or batch norm, and ReLU */
    float *pooled;
    float *dz, *da, *dpooled; /* gradients of the loss with respect to each */
    float *save_mean, *save_inv_var;
    /* the forward algorithms the backend ranks runnable, best first;
     * fused: the one ConvolutionBiasActivationForward takes */
    udnnConvolutionFwdAlgo_t fwd[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int fwd_count, fused;
    udnnConvolutionBwdFilterAlgo_t bwd_filter;
    udnnConvolutionBwdDataAlgo_t bwd_data;
} conv_block;

/* A fully connected layer y = x w^T + bias, w being out x in. */
typedef struct {
    int in, out;
    udnnTensorDescriptor_t x_mat, y_mat, w_mat; /* n x in, n x out, out x in */
    udnnTensorDescriptor_t y_desc;              /* n x out x 1 x 1, for the non-matrix ops */
    udnnTensorDescriptor_t bias_desc;           /* 1 x out x 1 x 1 */
    size_t w, bias;
    float *y, *dy;
} fc_layer;

/* How one learned tensor is laid out and initialized. */
/* He-uniform, U(+-sqrt(6 / fan_in)), for layers a ReLU follows; LeCun-
 * uniform, U(+-sqrt(3 / fan_in)), for the output layer, which keeps the
 * first logits small enough that momentum SGD starts steadily. */
typedef enum { INIT_HE_UNIFORM, INIT_LECUN_UNIFORM, INIT_ZERO, INIT_ONE } init_rule;
typedef struct {
    int in_stats; /* in net->stats (running statistics), else in net->params */
    size_t offset, count;
    init_rule init;
    int fan_in;
} weight_slot;

enum { MAX_SLOTS = 16, MAX_TENSORS = 32, MAX_BUFFERS = 48 };

struct mnist_net {
    udnnHandle_t h;
    mnist_net_config cfg;
    int n; /* the batch the descriptors describe now (0: none yet) */

    udnnTensorDescriptor_t x_desc;      /* n x 1 x 28 x 28 */
    udnnTensorDescriptor_t row_desc;    /* n x 1 x 1 x 1: one value per image */
    udnnTensorDescriptor_t scalar_desc; /* 1 x 1 x 1 x 1 */
    udnnTensorDescriptor_t flat_desc;   /* 1 x param_count x 1 x 1: every parameter */
    udnnActivationDescriptor_t relu;
    udnnPoolingDescriptor_t pool;
    udnnOpTensorDescriptor_t add, mul;
    udnnReduceTensorDescriptor_t sum, argmax;
    udnnDropoutDescriptor_t drop;

    conv_block conv[2];
    fc_layer fc[2];

    float *x, *onehot;        /* the uploaded batch */
    float *probs, *log_probs; /* softmax and log-softmax of the logits */
    float *picked;            /* onehot * log_probs */
    float *loss;              /* one float */
    float *row_max;
    uint32_t *classes;
    float *dropped, *d_dropped; /* the hidden layer after dropout, its gradient */
    const float *fc2_in;        /* what the last layer read: fc[0].y or dropped */
    void *drop_states, *drop_reserve;
    size_t drop_reserve_bytes;
    void *ws;
    size_t ws_bytes;

    float *params, *grads, *velocity; /* param_count floats each */
    size_t param_count;
    float *stats;
    size_t stats_count;
    weight_slot slots[MAX_SLOTS];
    int slot_count;

    /* for destruction */
    udnnTensorDescriptor_t tensors[MAX_TENSORS];
    int tensor_count;
    void *buffers[MAX_BUFFERS];
    int buffer_count;
};

/* Sets every batch-sized descriptor to n images and picks the convolution
 * algorithms for them (mnist_net.c). */
udnnStatus_t mnist_net_set_batch(mnist_net *net, int n);

#endif /* MNIST_NET_IMPL_H */
