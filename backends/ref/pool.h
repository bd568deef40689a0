/* pool.h - the reference pooling forward and backward over n, c, d, h, w
 * (cpu/ref/pooling.c and the GPU backends' reference-bits solvers): an
 * element of y, or of dx, gathered from its windows.
 *
 * A window of output o along one dim covers inputs [o*stride - pad,
 * o*stride - pad + window); positions outside the input are padding. Max
 * modes ignore padding. AVERAGE_COUNT_INCLUDE_PADDING divides by the whole
 * window volume, AVERAGE_COUNT_EXCLUDE_PADDING by the count of in-bounds
 * positions (never 0: core keeps pad < window).
 *
 * Max and NaN: with PROPAGATE_NAN the first NaN of a window is its maximum;
 * with NOT_PROPAGATE_NAN NaNs are skipped, and a window holding only NaNs
 * gives NaN (its first position takes the gradient). Ties go to the first
 * maximum in row-major (d, h, w) order of the window, in both directions.
 * MAX_DETERMINISTIC is the same computation as MAX. */
#ifndef UDNN_REF_POOL_H
#define UDNN_REF_POOL_H

#include <math.h>

#include "backends/ref/ref.h"

UDNN_REF_FN int ref_pool_is_max(udnnPoolingMode_t m)
{
    return m == UDNN_POOLING_MAX || m == UDNN_POOLING_MAX_DETERMINISTIC;
}

/* The window of one output position, clipped to the input: [lo, hi) per
 * spatial dim (d, h, w). */
typedef struct {
    int64_t lo[3], hi[3];
} ref_pool_box;

UDNN_REF_FN ref_pool_box ref_pool_window(const udnn_pool_problem *p, const int64_t o[3])
{
    ref_pool_box b;
    for (int i = 0; i < 3; i++) {
        int64_t start = o[i] * p->stride[i] - p->pad[i];
        int64_t end = start + p->window[i];
        int64_t size = p->x.dims[2 + i];
        b.lo[i] = start < 0 ? 0 : start;
        b.hi[i] = end > size ? size : end;
    }
    return b;
}

UDNN_REF_FN double ref_pool_divisor(const udnn_pool_problem *p, const ref_pool_box *b)
{
    if (p->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        return (double)p->window[0] * p->window[1] * p->window[2];
    return (double)(b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1]) * (b->hi[2] - b->lo[2]);
}

/* The maximum of a window of x (see the NaN rules above) and the offset
 * in x of the position holding it. */
UDNN_REF_FN double ref_pool_window_max(const udnn_pool_problem *p, int64_t n, int64_t c,
                                       const ref_pool_box *b, int64_t *where)
{
    int found = 0;
    double best = NAN;
    *where = ref_off5(&p->x, n, c, b->lo[0], b->lo[1], b->lo[2]);
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++)
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++) {
                int64_t off = ref_off5(&p->x, n, c, d, h, w);
                double v = ref_load(p->x_ptr, p->x.dtype, off);
                if (isnan(v)) {
                    if (p->nan_opt == UDNN_PROPAGATE_NAN) {
                        *where = off;
                        return v;
                    }
                    continue;
                }
                if (!found || v > best) {
                    best = v;
                    *where = off;
                    found = 1;
                }
            }
    return best;
}

UDNN_REF_FN double ref_pool_window_sum(const udnn_pool_problem *p, int64_t n, int64_t c,
                                       const ref_pool_box *b)
{
    double sum = 0.0;
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++)
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++)
                sum += ref_load(p->x_ptr, p->x.dtype, ref_off5(&p->x, n, c, d, h, w));
    return sum;
}

/* The outputs along one dim whose windows contain input i: [*lo, *hi). */
UDNN_REF_FN void ref_pool_outputs_covering(const udnn_pool_problem *p, int dim, int64_t i,
                                           int64_t *lo, int64_t *hi)
{
    int64_t s = p->stride[dim], first = i + p->pad[dim] - p->window[dim] + 1;
    *lo = first <= 0 ? 0 : (first + s - 1) / s;
    *hi = (i + p->pad[dim]) / s + 1;
    if (*hi > p->y.dims[2 + dim]) *hi = p->y.dims[2 + dim];
}

/* The gradient reaching one element of x: every window containing it
 * gives dy / divisor (average) or dy when it holds the window's maximum.
 * Gathering per element needs no scratch memory. */
UDNN_REF_FN double ref_pool_gather_grad(const udnn_pool_problem *p, int64_t n, int64_t c,
                                        const int64_t in[3])
{
    int64_t lo[3], hi[3], o[3];
    for (int i = 0; i < 3; i++) ref_pool_outputs_covering(p, i, in[i], &lo[i], &hi[i]);
    int64_t x_off = ref_off5(&p->x, n, c, in[0], in[1], in[2]);
    double grad = 0.0;
    for (o[0] = lo[0]; o[0] < hi[0]; o[0]++)
        for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
            for (o[2] = lo[2]; o[2] < hi[2]; o[2]++) {
                ref_pool_box b = ref_pool_window(p, o);
                double dy =
                    ref_load(p->dy_ptr, p->dy.dtype, ref_off5(&p->dy, n, c, o[0], o[1], o[2]));
                if (ref_pool_is_max(p->mode)) {
                    int64_t where;
                    ref_pool_window_max(p, n, c, &b, &where);
                    if (where == x_off) grad += dy;
                } else {
                    grad += dy / ref_pool_divisor(p, &b);
                }
            }
    return grad;
}

/* Element i (y's logical order) of y = alpha * pool(x) + beta * y. */
UDNN_REF_FN void ref_pool_fwd_at(const udnn_pool_problem *p, int64_t i)
{
    int64_t idx[5];
    ref_index5(&p->y, i, idx);
    ref_pool_box b = ref_pool_window(p, idx + 2);
    double v;
    if (ref_pool_is_max(p->mode)) {
        int64_t where;
        v = ref_pool_window_max(p, idx[0], idx[1], &b, &where);
    } else {
        v = ref_pool_window_sum(p, idx[0], idx[1], &b) / ref_pool_divisor(p, &b);
    }
    ref_blend(p->out_ptr, p->y.dtype, ref_off5(&p->y, idx[0], idx[1], idx[2], idx[3], idx[4]), v,
              p->alpha, p->beta);
}

/* Element i (dx's logical order) of dx = alpha * pool'(dy) + beta * dx. */
UDNN_REF_FN void ref_pool_bwd_at(const udnn_pool_problem *p, int64_t i)
{
    int64_t idx[5];
    ref_index5(&p->dx, i, idx);
    ref_blend(p->out_ptr, p->dx.dtype, ref_off5(&p->dx, idx[0], idx[1], idx[2], idx[3], idx[4]),
              ref_pool_gather_grad(p, idx[0], idx[1], idx + 2), p->alpha, p->beta);
}

#endif /* UDNN_REF_POOL_H */
