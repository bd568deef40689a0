/* mnist_net.h - a LeNet-style network for 28x28 images, built from udnn
 * primitives only, with its whole training state in the handle's memory:
 *
 *   conv 5x5, 16 channels, pad 2, + bias + ReLU   (or conv + batch norm + ReLU)
 *   max pool 2x2 / 2
 *   conv 5x5, 32 channels, pad 2, + bias + ReLU   (or conv + batch norm + ReLU)
 *   max pool 2x2 / 2
 *   fully connected 1568 -> 128 + bias + ReLU     (then dropout, when asked)
 *   fully connected 128 -> 10 + bias
 *   softmax with cross-entropy
 *
 * The host uploads minibatches (normalized images and one-hot labels) and
 * reads back only the loss, the predicted classes and, when saving, the
 * weights. Every function returns udnn's status; on failure,
 * udnnGetLastErrorString says which call and which argument. */
#ifndef MNIST_NET_H
#define MNIST_NET_H

#include <stddef.h>
#include <stdint.h>

#include <udnn.h>

#define MNIST_NET_SIDE 28 /* input images are 1 x 28 x 28 */

typedef struct {
    int batch;      /* the largest minibatch the network takes */
    int batch_norm; /* conv -> batch norm -> ReLU instead of conv + bias -> ReLU */
    float dropout;  /* probability of dropping a unit of the 128; 0 for none */
    uint64_t dropout_seed;
} mnist_net_config;

typedef struct {
    float learning_rate, momentum, weight_decay;
} mnist_sgd;

/* A run of `total` SGD steps whose learning rate rises linearly from
 * peak / warmup to peak over the first `warmup` steps and then, with
 * decay, falls linearly to reach 0 after the last. The warm-up tames
 * momentum SGD's unsteady start, the decay the noise that otherwise keeps
 * the test accuracy wandering around 89.5% however long it trains. */
typedef struct {
    float peak, momentum, weight_decay;
    long total, warmup;
    int decay;
} mnist_schedule;

/* The schedule of a run; warmup is cut to a tenth of it at most. */
mnist_schedule mnist_schedule_of(float peak, float momentum, float weight_decay, long total,
                                 long warmup, int decay);
/* The SGD parameters of step t, 0 <= t < total. */
mnist_sgd mnist_schedule_at(const mnist_schedule *s, long t);

typedef struct mnist_net mnist_net;

udnnStatus_t mnist_net_create(udnnHandle_t handle, const mnist_net_config *config, mnist_net **net);
void mnist_net_destroy(mnist_net *net);

/* Weights drawn in layer order from SplitMix64 seeded with seed:
 * He/Kaiming-uniform, U(-sqrt(6 / fan_in), +sqrt(6 / fan_in)), for the
 * layers a ReLU follows, LeCun-uniform, U(-sqrt(3 / fan_in), ...), for the
 * last; biases and batch-norm shifts 0, batch-norm scales 1, running
 * statistics mean 0 and variance 1; momentum 0. */
udnnStatus_t mnist_net_init(mnist_net *net, uint64_t seed);

/* Copies n <= batch images (n x 28 x 28 floats) and, when onehot is not
 * NULL, their one-hot labels (n x 10 floats) into the network's input. */
udnnStatus_t mnist_net_upload(mnist_net *net, int n, const float *images, const float *onehot);

/* Forward, cross-entropy, backward and one SGD step (PyTorch's rule:
 * v = momentum * v + grad + weight_decay * w; w -= learning_rate * v) on
 * the n images uploaded with their labels. *loss: their mean cross-entropy. */
udnnStatus_t mnist_net_train_step(mnist_net *net, int n, const mnist_sgd *sgd, float *loss);

/* Inference on the n images uploaded (no dropout; batch norm with the
 * running statistics): classes[i] is image i's most likely class. */
udnnStatus_t mnist_net_predict(mnist_net *net, int n, uint32_t *classes);

/* Every learned value (weights, biases, batch-norm scales, shifts and
 * running statistics) as one array of floats, layer by layer. */
size_t mnist_net_weight_count(const mnist_net *net);
udnnStatus_t mnist_net_get_weights(mnist_net *net, float *values);
udnnStatus_t mnist_net_set_weights(mnist_net *net, const float *values);

#endif /* MNIST_NET_H */
