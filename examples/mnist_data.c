/* mnist_data.c - reading the IDX files of Fashion-MNIST through zlib.
 *
 * IDX: a big-endian magic (0x00000803 for unsigned-byte images of three
 * dimensions, 0x00000801 for labels of one), the dimensions as big-endian
 * 32-bit counts, then the bytes. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "examples/mnist_data.h"

enum { IDX_LABELS = 0x00000801, IDX_IMAGES = 0x00000803 };

const char *const mnist_class_names[MNIST_CLASSES] = {
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot",
};

static int fail(char *err, size_t err_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t err_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* Reads exactly n bytes; a short file is an error, not a smaller set. */
static int read_exact(gzFile f, const char *path, void *buf, size_t n, char *err, size_t err_size)
{
    unsigned char *p = buf;
    while (n > 0) {
        unsigned chunk = n > (1u << 30) ? (1u << 30) : (unsigned)n;
        int got = gzread(f, p, chunk);
        if (got <= 0) {
            int zerr = 0;
            const char *why = got < 0 ? gzerror(f, &zerr) : "unexpected end of file";
            return fail(err, err_size, "%s: %s", path, why);
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int read_u32(gzFile f, const char *path, uint32_t *v, char *err, size_t err_size)
{
    unsigned char b[4];
    if (read_exact(f, path, b, 4, err, err_size)) return -1;
    *v = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    return 0;
}

/* Opens dir/name; a missing file says which package provides the set. */
static gzFile open_idx(const char *dir, const char *name, char *path, size_t path_size, char *err,
                       size_t err_size)
{
    snprintf(path, path_size, "%s/%s", dir, name);
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOENT)
            fail(err, err_size,
                 "cannot open %s: no such file; install the Fashion-MNIST data set "
                 "(Debian: apt-get install dataset-fashion-mnist) or give --data DIR",
                 path);
        else
            fail(err, err_size, "cannot open %s: %s", path,
                 errno ? strerror(errno) : "out of memory");
    }
    return f;
}

/* Reads one IDX file of the given magic: its dims (1 or 3) and its bytes. */
static int read_idx(const char *dir, const char *name, uint32_t magic, uint32_t dims[3],
                    unsigned char **data, char *err, size_t err_size)
{
    char path[4096];
    gzFile f = open_idx(dir, name, path, sizeof path, err, err_size);
    if (f == NULL) return -1;
    const int rank = magic == IDX_IMAGES ? 3 : 1;
    uint32_t got_magic;
    size_t bytes = 1;
    int rc = read_u32(f, path, &got_magic, err, err_size);
    if (rc == 0 && got_magic != magic)
        rc = fail(err, err_size, "%s: not an IDX %s file (magic 0x%08x, expected 0x%08x)", path,
                  rank == 3 ? "image" : "label", (unsigned)got_magic, (unsigned)magic);
    for (int i = 0; i < rank && rc == 0; i++) {
        rc = read_u32(f, path, &dims[i], err, err_size);
        if (rc == 0 && (dims[i] == 0 || dims[i] > (1u << 24)))
            rc = fail(err, err_size, "%s: dimension %d is %u", path, i, (unsigned)dims[i]);
        bytes *= dims[i];
    }
    *data = NULL;
    if (rc == 0 && (*data = malloc(bytes)) == NULL)
        rc = fail(err, err_size, "%s: cannot allocate %zu bytes", path, bytes);
    if (rc == 0) rc = read_exact(f, path, *data, bytes, err, err_size);
    gzclose(f);
    if (rc != 0) {
        free(*data);
        *data = NULL;
    }
    return rc;
}

int mnist_load(const char *dir, const char *split, mnist_set *set, char *err, size_t err_size)
{
    char name[256];
    uint32_t idims[3], ldims[3];
    *set = (mnist_set){0};
    snprintf(name, sizeof name, "%s-images-idx3-ubyte.gz", split);
    if (read_idx(dir, name, IDX_IMAGES, idims, &set->pixels, err, err_size)) return -1;
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte.gz", split);
    if (read_idx(dir, name, IDX_LABELS, ldims, &set->labels, err, err_size)) {
        mnist_free(set);
        return -1;
    }
    if (ldims[0] != idims[0]) {
        mnist_free(set);
        return fail(err, err_size, "%s/%s: %u labels for %u images", dir, name, (unsigned)ldims[0],
                    (unsigned)idims[0]);
    }
    for (uint32_t i = 0; i < ldims[0]; i++)
        if (set->labels[i] >= MNIST_CLASSES) {
            mnist_free(set);
            return fail(err, err_size, "%s/%s: label %u of image %u is not a class 0..9", dir, name,
                        (unsigned)set->labels[i], (unsigned)i);
        }
    set->count = (int)idims[0];
    set->rows = (int)idims[1];
    set->cols = (int)idims[2];
    return 0;
}

void mnist_free(mnist_set *set)
{
    free(set->pixels);
    free(set->labels);
    *set = (mnist_set){0};
}

void mnist_truncate(mnist_set *set, int count)
{
    if (count > 0 && count < set->count) set->count = count;
}

void mnist_pixel_stats(const mnist_set *set, float *mean, float *std)
{
    const size_t n = (size_t)set->count * set->rows * set->cols;
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = set->pixels[i] / 255.0;
        sum += v;
        sum_sq += v * v;
    }
    const double m = sum / (double)n;
    *mean = (float)m;
    *std = (float)sqrt(sum_sq / (double)n - m * m);
}

void mnist_fill_batch(const mnist_set *set, const uint32_t *order, int first, int n, float mean,
                      float std, float *images, float *onehot)
{
    const size_t pixels = (size_t)set->rows * set->cols;
    /* one table lookup per pixel instead of a division */
    float value_of[256];
    for (int b = 0; b < 256; b++) value_of[b] = ((float)b / 255.0f - mean) / std;
    for (int i = 0; i < n; i++) {
        const size_t img = order ? order[first + i] : (size_t)(first + i);
        const unsigned char *src = set->pixels + img * pixels;
        for (size_t p = 0; p < pixels; p++) images[i * pixels + p] = value_of[src[p]];
        for (int c = 0; c < MNIST_CLASSES; c++)
            onehot[i * MNIST_CLASSES + c] = c == set->labels[img] ? 1.0f : 0.0f;
    }
}
