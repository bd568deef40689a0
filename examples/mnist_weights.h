/* mnist_weights.h - the trained network in a file: what --save writes and
 * --load (and infer) read back.
 *
 * Format: the 8 bytes "UDNNFMW1"; uint32 flags (bit 0: batch norm);
 * uint32 count; float mean, std (the input normalization the network was
 * trained with); count floats, mnist_net_get_weights's order. Numbers are
 * in the host's byte order and IEEE single precision. */
#ifndef MNIST_WEIGHTS_H
#define MNIST_WEIGHTS_H

#include <stddef.h>

typedef struct {
    int batch_norm;
    float mean, std;
    size_t count;
    float *values;
} mnist_weights;

/* Each returns 0, or -1 with a one-line reason in err. */
int mnist_weights_save(const char *path, const mnist_weights *w, char *err, size_t err_size);
int mnist_weights_load(const char *path, mnist_weights *w, char *err, size_t err_size);
void mnist_weights_free(mnist_weights *w);

#endif /* MNIST_WEIGHTS_H */
