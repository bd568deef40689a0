/* lrn.c - reference cross-channel LRN, forward and backward.
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
#include <math.h>

#include "cpu/cpu_solvers.h"

/* A column touches at most 2n - 1 channels around the one being written. */
#define RING_SIZE (2 * UDNN_LRN_MAX_N)

/* The channels of one column of one input, loaded on first use. */
typedef struct {
    const void *ptr;
    udnnDataType_t dtype;
    int64_t base; /* offset of channel 0 */
    int64_t c_stride;
    int64_t loaded; /* channels 0 ... loaded-1 have been read */
    double v[RING_SIZE];
} column_ring;

static void ring_start(column_ring *r, const void *ptr, const udnn_tensor *t, int64_t base)
{
    r->ptr = ptr;
    r->dtype = t->dtype;
    r->base = base;
    r->c_stride = t->strides[1];
    r->loaded = 0;
}

/* Channel c, which is never RING_SIZE or more below the highest channel
 * loaded: the kernels ask for channels within n - 1 of the one they write. */
static double ring_get(column_ring *r, int64_t c)
{
    while (r->loaded <= c) {
        r->v[r->loaded % RING_SIZE] = ref_load(r->ptr, r->dtype, r->base + r->loaded * r->c_stride);
        r->loaded++;
    }
    return r->v[c % RING_SIZE];
}

/* Offset of channel 0 of column (n, s), s the row-major index over the
 * dims after C. */
static int64_t column_base(const udnn_tensor *t, int64_t n, int64_t s)
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
} lrn_geometry;

static lrn_geometry geometry_of(const udnn_lrn_problem *p)
{
    lrn_geometry g;
    g.behind = ((int64_t)p->n - 1) / 2;
    g.ahead = (int64_t)p->n - 1 - g.behind;
    g.channels = p->x.dims[1];
    g.k = p->lrn_k;
    g.alpha_over_n = p->lrn_alpha / p->n;
    g.beta = p->lrn_beta;
    return g;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* s_c from the column's x. */
static double scale_at(const lrn_geometry *g, column_ring *x, int64_t c)
{
    double sum = 0.0;
    int64_t last = min64(g->channels - 1, c + g->ahead);
    for (int64_t j = max64(0, c - g->behind); j <= last; j++) {
        double v = ring_get(x, j);
        sum += v * v;
    }
    return g->k + g->alpha_over_n * sum;
}

static udnnStatus_t lrn_fwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_lrn_problem *p = problem;
    const lrn_geometry g = geometry_of(p);
    const udnn_tensor *x = &p->x, *y = &p->y;
    column_ring xr;
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t s = 0; s < ref_positions(x); s++) {
            ring_start(&xr, p->x_ptr, x, column_base(x, n, s));
            int64_t y_base = column_base(y, n, s);
            for (int64_t c = 0; c < g.channels; c++) {
                double out = ring_get(&xr, c) * pow(scale_at(&g, &xr, c), -g.beta);
                ref_blend(p->out_ptr, y->dtype, y_base + c * y->strides[1], out, p->alpha,
                          p->beta);
            }
        }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t lrn_bwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_lrn_problem *p = problem;
    const lrn_geometry g = geometry_of(p);
    const udnn_tensor *x = &p->x, *y = &p->y, *dy = &p->dy, *dx = &p->dx;
    const double cross = 2.0 * g.alpha_over_n * g.beta;
    column_ring xr, yr, dyr;
    for (int64_t n = 0; n < x->dims[0]; n++)
        for (int64_t s = 0; s < ref_positions(x); s++) {
            ring_start(&xr, p->x_ptr, x, column_base(x, n, s));
            ring_start(&yr, p->y_ptr, y, column_base(y, n, s));
            ring_start(&dyr, p->dy_ptr, dy, column_base(dy, n, s));
            int64_t dx_base = column_base(dx, n, s);
            for (int64_t i = 0; i < g.channels; i++) {
                int64_t last = min64(g.channels - 1, i + g.behind);
                double through_scales = 0.0;
                for (int64_t j = max64(0, i - g.ahead); j <= last; j++)
                    through_scales +=
                        ring_get(&dyr, j) * ring_get(&yr, j) / scale_at(&g, &xr, j);
                double direct = ring_get(&dyr, i) * pow(scale_at(&g, &xr, i), -g.beta);
                double out = direct - cross * ring_get(&xr, i) * through_scales;
                ref_blend(p->out_ptr, dx->dtype, dx_base + i * dx->strides[1], out, p->alpha,
                          p->beta);
            }
        }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_lrn_fwd = {
    /* .name = */ "ref_lrn_fwd",
    /* .op = */ UDNN_OP_LRN_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ lrn_fwd_run,
};

const udnn_solver udnn_cpu_ref_lrn_bwd = {
    /* .name = */ "ref_lrn_bwd",
    /* .op = */ UDNN_OP_LRN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ lrn_bwd_run,
};
