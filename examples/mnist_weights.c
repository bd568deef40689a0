/* mnist_weights.c - writing and reading the weights file (format in
 * mnist_weights.h). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/mnist_weights.h"

static const char magic[8] = {'U', 'D', 'N', 'N', 'F', 'M', 'W', '1'};

enum { FLAG_BATCH_NORM = 1 };

/* The largest file this network could need, with room to grow: a bound
 * that keeps a corrupt count from asking for gigabytes. */
#define MAX_COUNT (UINT32_C(1) << 26)

int mnist_weights_save(const char *path, const mnist_weights *w, char *err, size_t err_size)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) {
        snprintf(err, err_size, "cannot create %s: %s", path, strerror(errno));
        return -1;
    }
    const uint32_t flags = w->batch_norm ? FLAG_BATCH_NORM : 0, count = (uint32_t)w->count;
    const float norm[2] = {w->mean, w->std};
    int ok = fwrite(magic, sizeof magic, 1, f) == 1 && fwrite(&flags, sizeof flags, 1, f) == 1 &&
             fwrite(&count, sizeof count, 1, f) == 1 && fwrite(norm, sizeof norm, 1, f) == 1 &&
             fwrite(w->values, sizeof(float), w->count, f) == w->count;
    const int saved_errno = errno;
    ok = (fclose(f) == 0) && ok;
    if (!ok) {
        snprintf(err, err_size, "cannot write %s: %s", path,
                 strerror(saved_errno ? saved_errno : errno));
        return -1;
    }
    return 0;
}

int mnist_weights_load(const char *path, mnist_weights *w, char *err, size_t err_size)
{
    *w = (mnist_weights){0};
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    char head[8];
    uint32_t flags, count;
    float norm[2];
    int ok = fread(head, sizeof head, 1, f) == 1 && memcmp(head, magic, sizeof magic) == 0;
    if (!ok) snprintf(err, err_size, "%s: not a udnn-fashion-mnist weights file", path);
    if (ok && !(fread(&flags, sizeof flags, 1, f) == 1 && fread(&count, sizeof count, 1, f) == 1 &&
                fread(norm, sizeof norm, 1, f) == 1 && count <= MAX_COUNT && norm[1] > 0.0f)) {
        snprintf(err, err_size, "%s: damaged header", path);
        ok = 0;
    }
    if (ok && (w->values = malloc((size_t)count * sizeof(float) + 1)) == NULL) {
        snprintf(err, err_size, "%s: cannot allocate %u weights", path, (unsigned)count);
        ok = 0;
    }
    if (ok && fread(w->values, sizeof(float), count, f) != count) {
        snprintf(err, err_size, "%s: truncated: fewer than the %u weights its header announces",
                 path, (unsigned)count);
        ok = 0;
    }
    fclose(f);
    if (!ok) {
        mnist_weights_free(w);
        return -1;
    }
    w->batch_norm = (flags & FLAG_BATCH_NORM) != 0;
    w->mean = norm[0];
    w->std = norm[1];
    w->count = count;
    return 0;
}

void mnist_weights_free(mnist_weights *w)
{
    free(w->values);
    *w = (mnist_weights){0};
}
