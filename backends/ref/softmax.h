/* softmax.h - the reference softmax forward and backward (cpu/ref/softmax.c
 * and the GPU backends' reference-bits solvers), a group at a time, its
 * exp and log those of backends/ref/math.h.
 *
 * The softmax runs over groups: INSTANCE has one group per n, holding all
 * of C and the later dims; CHANNEL has one group per n and position of the
 * later dims, holding C. Forward and backward each pass over a group to
 * reduce and then write; since each output element is written only after
 * every read of its group, and only at its own position, an output may
 * share its buffer with an input of the same strides (core checks). */
#ifndef UDNN_REF_SOFTMAX_H
#define UDNN_REF_SOFTMAX_H

#include <math.h>

#include "backends/ref/math.h"
#include "backends/ref/ref.h"

UDNN_REF_FN int64_t ref_softmax_groups(const udnn_tensor *t, udnnSoftmaxMode_t mode)
{
    return mode == UDNN_SOFTMAX_MODE_INSTANCE ? t->dims[0] : t->dims[0] * ref_positions(t);
}

UDNN_REF_FN int64_t ref_softmax_group_size(const udnn_tensor *t, udnnSoftmaxMode_t mode)
{
    return mode == UDNN_SOFTMAX_MODE_INSTANCE ? t->dims[1] * ref_positions(t) : t->dims[1];
}

/* Offset of member j of group g. */
UDNN_REF_FN int64_t ref_softmax_member(const udnn_tensor *t, udnnSoftmaxMode_t mode, int64_t g,
                                       int64_t j)
{
    int64_t s = ref_positions(t);
    if (mode == UDNN_SOFTMAX_MODE_INSTANCE) return ref_off_ncs(t, g, j / s, j % s);
    return ref_off_ncs(t, g / s, j, g % s);
}

/* Group g of the forward: y = alpha * softmax(x) + beta * y (or log
 * softmax); FAST takes exp(x) as it is, the others shift by the max first. */
UDNN_REF_FN void ref_softmax_fwd_group(const udnn_softmax_problem *p, int64_t g)
{
    const udnn_tensor *x = &p->x, *y = &p->y;
    const int64_t size = ref_softmax_group_size(x, p->mode);
    double shift = 0.0;
    if (p->algo != UDNN_SOFTMAX_FAST) {
        shift = -INFINITY;
        for (int64_t j = 0; j < size; j++)
            shift = fmax(shift, ref_load(p->x_ptr, x->dtype, ref_softmax_member(x, p->mode, g, j)));
    }
    double sum = 0.0;
    for (int64_t j = 0; j < size; j++)
        sum += ref_exp(ref_load(p->x_ptr, x->dtype, ref_softmax_member(x, p->mode, g, j)) - shift);
    const double log_sum = ref_log(sum);
    for (int64_t j = 0; j < size; j++) {
        double v = ref_load(p->x_ptr, x->dtype, ref_softmax_member(x, p->mode, g, j)) - shift;
        double out = p->algo == UDNN_SOFTMAX_LOG ? v - log_sum : ref_exp(v) / sum;
        ref_blend(p->out_ptr, y->dtype, ref_softmax_member(y, p->mode, g, j), out, p->alpha,
                  p->beta);
    }
}

/* Group g of the backward. FAST, ACCURATE: dx = y * (dy - sum(dy * y));
 * LOG (y = log softmax): dx = dy - exp(y) * sum(dy); sums over the group. */
UDNN_REF_FN void ref_softmax_bwd_group(const udnn_softmax_problem *p, int64_t g)
{
    const udnn_tensor *y = &p->y, *dy = &p->dy, *dx = &p->dx;
    const int is_log = p->algo == UDNN_SOFTMAX_LOG;
    const int64_t size = ref_softmax_group_size(y, p->mode);
    double sum = 0.0;
    for (int64_t j = 0; j < size; j++) {
        double dyv = ref_load(p->dy_ptr, dy->dtype, ref_softmax_member(dy, p->mode, g, j));
        sum +=
            is_log ? dyv : dyv * ref_load(p->y_ptr, y->dtype, ref_softmax_member(y, p->mode, g, j));
    }
    for (int64_t j = 0; j < size; j++) {
        double yv = ref_load(p->y_ptr, y->dtype, ref_softmax_member(y, p->mode, g, j));
        double dyv = ref_load(p->dy_ptr, dy->dtype, ref_softmax_member(dy, p->mode, g, j));
        double out = is_log ? dyv - ref_exp(yv) * sum : yv * (dyv - sum);
        ref_blend(p->out_ptr, dx->dtype, ref_softmax_member(dx, p->mode, g, j), out, p->alpha,
                  p->beta);
    }
}

#endif /* UDNN_REF_SOFTMAX_H */
