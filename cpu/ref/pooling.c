/* pooling.c - reference pooling forward and backward over n, c, d, h, w.
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
#include <math.h>

#include "cpu/cpu_solvers.h"

static int is_max_mode(udnnPoolingMode_t m)
{
    return m == UDNN_POOLING_MAX || m == UDNN_POOLING_MAX_DETERMINISTIC;
}

/* The window of one output position, clipped to the input: [lo, hi) per
 * spatial dim (d, h, w). */
typedef struct {
    int64_t lo[3], hi[3];
} window_box;

static window_box window_at(const udnn_pool_problem *p, const int64_t o[3])
{
    window_box b;
    for (int i = 0; i < 3; i++) {
        int64_t start = o[i] * p->stride[i] - p->pad[i];
        int64_t end = start + p->window[i];
        int64_t size = p->x.dims[2 + i];
        b.lo[i] = start < 0 ? 0 : start;
        b.hi[i] = end > size ? size : end;
    }
    return b;
}

static double avg_divisor(const udnn_pool_problem *p, const window_box *b)
{
    if (p->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
        return (double)p->window[0] * p->window[1] * p->window[2];
    return (double)(b->hi[0] - b->lo[0]) * (b->hi[1] - b->lo[1]) * (b->hi[2] - b->lo[2]);
}

/* The maximum of a window of x (see the NaN rules above) and the offset
 * in x of the position holding it. */
static double window_max(const udnn_pool_problem *p, int64_t n, int64_t c,
                         const window_box *b, int64_t *where)
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

static double window_sum(const udnn_pool_problem *p, int64_t n, int64_t c, const window_box *b)
{
    double sum = 0.0;
    for (int64_t d = b->lo[0]; d < b->hi[0]; d++)
        for (int64_t h = b->lo[1]; h < b->hi[1]; h++)
            for (int64_t w = b->lo[2]; w < b->hi[2]; w++)
                sum += ref_load(p->x_ptr, p->x.dtype, ref_off5(&p->x, n, c, d, h, w));
    return sum;
}

static udnnStatus_t pool_fwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_pool_problem *p = problem;
    const udnn_tensor *y = &p->y;
#pragma omp parallel for collapse(2) if (ref_count(&p->x) >= REF_PAR_MIN) schedule(static)
    for (int64_t n = 0; n < y->dims[0]; n++)
        for (int64_t c = 0; c < y->dims[1]; c++) {
            int64_t o[3];
            for (o[0] = 0; o[0] < y->dims[2]; o[0]++)
                for (o[1] = 0; o[1] < y->dims[3]; o[1]++)
                    for (o[2] = 0; o[2] < y->dims[4]; o[2]++) {
                        window_box b = window_at(p, o);
                        double v;
                        if (is_max_mode(p->mode)) {
                            int64_t where;
                            v = window_max(p, n, c, &b, &where);
                        } else {
                            v = window_sum(p, n, c, &b) / avg_divisor(p, &b);
                        }
                        ref_blend(p->out_ptr, y->dtype, ref_off5(y, n, c, o[0], o[1], o[2]), v,
                                  p->alpha, p->beta);
                    }
        }
    return UDNN_STATUS_SUCCESS;
}

/* The outputs along one dim whose windows contain input i: [*lo, *hi). */
static void outputs_covering(const udnn_pool_problem *p, int dim, int64_t i, int64_t *lo,
                             int64_t *hi)
{
    int64_t s = p->stride[dim], first = i + p->pad[dim] - p->window[dim] + 1;
    *lo = first <= 0 ? 0 : (first + s - 1) / s;
    *hi = (i + p->pad[dim]) / s + 1;
    if (*hi > p->y.dims[2 + dim]) *hi = p->y.dims[2 + dim];
}

/* The gradient reaching one element of x: every window containing it
 * gives dy / divisor (average) or dy when it holds the window's maximum.
 * Gathering per element needs no scratch memory. */
static double gather_grad(const udnn_pool_problem *p, int64_t n, int64_t c, const int64_t in[3])
{
    int64_t lo[3], hi[3], o[3];
    for (int i = 0; i < 3; i++) outputs_covering(p, i, in[i], &lo[i], &hi[i]);
    int64_t x_off = ref_off5(&p->x, n, c, in[0], in[1], in[2]);
    double grad = 0.0;
    for (o[0] = lo[0]; o[0] < hi[0]; o[0]++)
        for (o[1] = lo[1]; o[1] < hi[1]; o[1]++)
            for (o[2] = lo[2]; o[2] < hi[2]; o[2]++) {
                window_box b = window_at(p, o);
                double dy = ref_load(p->dy_ptr, p->dy.dtype,
                                     ref_off5(&p->dy, n, c, o[0], o[1], o[2]));
                if (is_max_mode(p->mode)) {
                    int64_t where;
                    window_max(p, n, c, &b, &where);
                    if (where == x_off) grad += dy;
                } else {
                    grad += dy / avg_divisor(p, &b);
                }
            }
    return grad;
}

static udnnStatus_t pool_bwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_pool_problem *p = problem;
    const udnn_tensor *dx = &p->dx;
#pragma omp parallel for collapse(2) if (ref_count(dx) >= REF_PAR_MIN) schedule(static)
    for (int64_t n = 0; n < dx->dims[0]; n++)
        for (int64_t c = 0; c < dx->dims[1]; c++) {
            int64_t in[3];
            for (in[0] = 0; in[0] < dx->dims[2]; in[0]++)
                for (in[1] = 0; in[1] < dx->dims[3]; in[1]++)
                    for (in[2] = 0; in[2] < dx->dims[4]; in[2]++)
                        ref_blend(p->out_ptr, dx->dtype,
                                  ref_off5(dx, n, c, in[0], in[1], in[2]),
                                  gather_grad(p, n, c, in), p->alpha, p->beta);
        }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_pool_fwd = {
    /* .name = */ "ref_pool_fwd",
    /* .op = */ UDNN_OP_POOL_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ pool_fwd_run,
};

const udnn_solver udnn_cpu_ref_pool_bwd = {
    /* .name = */ "ref_pool_bwd",
    /* .op = */ UDNN_OP_POOL_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ pool_bwd_run,
};
