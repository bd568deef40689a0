/* mnist_data.h - Fashion-MNIST as Debian's dataset-fashion-mnist ships it:
 * gzipped IDX files, read through zlib, and minibatches made from them. */
#ifndef MNIST_DATA_H
#define MNIST_DATA_H

#include <stddef.h>
#include <stdint.h>

#define MNIST_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define MNIST_CLASSES 10

/* One split of the data set: count images of rows x cols bytes (0 is
 * background, 255 full ink), row-major, and their labels 0..9. */
typedef struct {
    int count, rows, cols;
    unsigned char *pixels;
    unsigned char *labels;
} mnist_set;

/* The class names, by label. */
extern const char *const mnist_class_names[MNIST_CLASSES];

/* Loads split "train" or "t10k" from dir ({split}-images-idx3-ubyte.gz and
 * {split}-labels-idx1-ubyte.gz). Returns 0, or -1 with a one-line reason
 * in err (a missing file names the package to install). */
int mnist_load(const char *dir, const char *split, mnist_set *set, char *err, size_t err_size);
void mnist_free(mnist_set *set);

/* Keeps only the first count images (when there are more). */
void mnist_truncate(mnist_set *set, int count);

/* Mean and standard deviation of every pixel of the set, scaled to [0, 1]:
 * the normalization the network's input gets. */
void mnist_pixel_stats(const mnist_set *set, float *mean, float *std);

/* Writes images order[first .. first + n) (first .. first + n when order is
 * NULL) as n x rows*cols floats (pixel / 255 - mean) / std into images, and
 * their labels one-hot as n x MNIST_CLASSES floats into onehot. */
void mnist_fill_batch(const mnist_set *set, const uint32_t *order, int first, int n, float mean,
                      float std, float *images, float *onehot);

#endif /* MNIST_DATA_H */
