/* lrn.h - the reference cross-channel LRN, forward and backward (cpu/ref/lrn.c
 * and the GPU backends' reference-bits solvers), a column at a time, its
 * powers those of backends/ref/math.h.
 *
 * Channel c's window is c - behind ... c + ahead, clipped to [0, C), with
 * behind = floor((n-1)/2) and ahead = n-1-behind (cuDNN's lookBehind and
 * lookAhead), and its scale s_c = k + alpha/n * sum of x^2 over the window.
 *   forward:  y_c = x_c * s_c^-beta
 *   backward: dx_i = dy_i * s_i^-beta
 *                    - 2*alpha*beta/n * x_i * sum_j dy_j * y_j / s_j
 * over the j whose window holds i, that is i - ahead ... i + behind.
 *
 * The kernels walk each column (one n and one position after C) channel by
 * channel. Inputs are read through a small ring that loads each channel
 * once, ahead of the output of that channel being written, so an output
 * may share its buffer with an input of the same strides (core checks). */
#ifndef UDNN_REF_LRN_H
#define UDNN_REF_LRN_H

#include "backends/ref/math.h"
#include "backends/ref/ref.h"

/* A column touches at most 2n - 1 channels around the one being written. */
#define REF_LRN_RING (2 * UDNN_LRN_MAX_N)

/* The channels of one column of one input, loaded on first use. */
typedef struct {
    const void *ptr;
    udnnDataType_t dtype;
    int64_t base; /* offset of channel 0 */
    int64_t c_stride;
    int64_t loaded; /* channels 0 ... loaded-1 have been read */
    double v[REF_LRN_RING];
} ref_lrn_ring;

UDNN_REF_FN void ref_lrn_ring_start(ref_lrn_ring *r, const void *ptr, const udnn_tensor *t,
                                    int64_t base)
{
    r->ptr = ptr;
    r->dtype = t->dtype;
    r->base = base;
    r->c_stride = t->strides[1];
    r->loaded = 0;
}

/* Channel c, which is never REF_LRN_RING or more below the highest channel
 * loaded: the kernels ask for channels within n - 1 of the one they write. */
UDNN_REF_FN double ref_lrn_ring_get(ref_lrn_ring *r, int64_t c)
{
    while (r->loaded <= c) {
        r->v[r->loaded % REF_LRN_RING] =
            ref_load(r->ptr, r->dtype, r->base + r->loaded * r->c_stride);
        r->loaded++;
    }
    return r->v[c % REF_LRN_RING];
}

/* Offset of channel 0 of column (n, s), s the row-major index over the
 * dims after C. */
UDNN_REF_FN int64_t ref_lrn_column_base(const udnn_tensor *t, int64_t n, int64_t s)
{
    int64_t off = n * t->strides[0];
    for (int i = t->rank - 1; i >= 2; i--) {
        off += (s % t->dims[i]) * t->strides[i];
        s /= t->dims[i];
    }
    return off;
}

typedef struct {
    int64_t behind, ahead, channels;
    double k, alpha_over_n, beta;
} ref_lrn_geometry;

UDNN_REF_FN ref_lrn_geometry ref_lrn_geometry_of(const udnn_lrn_problem *p)
{
    ref_lrn_geometry g;
    g.behind = ((int64_t)p->n - 1) / 2;
    g.ahead = (int64_t)p->n - 1 - g.behind;
    g.channels = p->x.dims[1];
    g.k = p->lrn_k;
    g.alpha_over_n = p->lrn_alpha / p->n;
    g.beta = p->lrn_beta;
    return g;
}

UDNN_REF_FN int64_t ref_max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

UDNN_REF_FN int64_t ref_min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* s_c from the column's x. */
UDNN_REF_FN double ref_lrn_scale_at(const ref_lrn_geometry *g, ref_lrn_ring *x, int64_t c)
{
    double sum = 0.0;
    int64_t last = ref_min64(g->channels - 1, c + g->ahead);
    for (int64_t j = ref_max64(0, c - g->behind); j <= last; j++) {
        double v = ref_lrn_ring_get(x, j);
        sum += v * v;
    }
    return g->k + g->alpha_over_n * sum;
}

/* A problem with its geometry, as the column functions read it. */
typedef struct {
    udnn_lrn_problem p;
    ref_lrn_geometry g;
} ref_lrn_plan;

UDNN_REF_FN ref_lrn_plan ref_lrn_plan_of(const udnn_lrn_problem *p)
{
    ref_lrn_plan r;
    r.p = *p;
    r.g = ref_lrn_geometry_of(p);
    return r;
}

/* Columns (n, position after C) of x: the units the kernels walk. */
UDNN_REF_FN int64_t ref_lrn_columns(const udnn_lrn_problem *p)
{
    return p->x.dims[0] * ref_positions(&p->x);
}

/* Column col = n * positions + s of the forward. */
UDNN_REF_FN void ref_lrn_fwd_column(const ref_lrn_plan *r, int64_t col)
{
    const udnn_lrn_problem *p = &r->p;
    const ref_lrn_geometry *g = &r->g;
    const udnn_tensor *x = &p->x, *y = &p->y;
    const int64_t n = col / ref_positions(x), s = col % ref_positions(x);
    ref_lrn_ring xr;
    ref_lrn_ring_start(&xr, p->x_ptr, x, ref_lrn_column_base(x, n, s));
    const int64_t y_base = ref_lrn_column_base(y, n, s);
    for (int64_t c = 0; c < g->channels; c++) {
        double out = ref_lrn_ring_get(&xr, c) * ref_pow(ref_lrn_scale_at(g, &xr, c), -g->beta);
        ref_blend(p->out_ptr, y->dtype, y_base + c * y->strides[1], out, p->alpha, p->beta);
    }
}

/* Column col of the backward. */
UDNN_REF_FN void ref_lrn_bwd_column(const ref_lrn_plan *r, int64_t col)
{
    const udnn_lrn_problem *p = &r->p;
    const ref_lrn_geometry *g = &r->g;
    const udnn_tensor *x = &p->x, *y = &p->y, *dy = &p->dy, *dx = &p->dx;
    const double cross = 2.0 * g->alpha_over_n * g->beta;
    const int64_t n = col / ref_positions(x), s = col % ref_positions(x);
    ref_lrn_ring xr, yr, dyr;
    ref_lrn_ring_start(&xr, p->x_ptr, x, ref_lrn_column_base(x, n, s));
    ref_lrn_ring_start(&yr, p->y_ptr, y, ref_lrn_column_base(y, n, s));
    ref_lrn_ring_start(&dyr, p->dy_ptr, dy, ref_lrn_column_base(dy, n, s));
    const int64_t dx_base = ref_lrn_column_base(dx, n, s);
    for (int64_t i = 0; i < g->channels; i++) {
        int64_t last = ref_min64(g->channels - 1, i + g->behind);
        double through_scales = 0.0;
        for (int64_t j = ref_max64(0, i - g->ahead); j <= last; j++)
            through_scales +=
                ref_lrn_ring_get(&dyr, j) * ref_lrn_ring_get(&yr, j) / ref_lrn_scale_at(g, &xr, j);
        double direct = ref_lrn_ring_get(&dyr, i) * ref_pow(ref_lrn_scale_at(g, &xr, i), -g->beta);
        double out = direct - cross * ref_lrn_ring_get(&xr, i) * through_scales;
        ref_blend(p->out_ptr, dx->dtype, dx_base + i * dx->strides[1], out, p->alpha, p->beta);
    }
}

#endif /* UDNN_REF_LRN_H */
