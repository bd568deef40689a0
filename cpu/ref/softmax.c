/* softmax.c - reference softmax forward and backward.
 *
 * The softmax runs over groups: INSTANCE has one group per n, holding all
 * of C and the later dims; CHANNEL has one group per n and position of the
 * later dims, holding C. Forward and backward each pass over a group to
 * reduce and then write; since each output element is written only after
 * every read of its group, and only at its own position, an output may
 * share its buffer with an input of the same strides (core checks). */
#include <math.h>

#include "cpu/cpu_solvers.h"

/* Elements of the dims after C (1 for none). */
static int64_t positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

/* Offset of (n, c, s), s the row-major index over the dims after C. */
static int64_t off_ncs(const udnn_tensor *t, int64_t n, int64_t c, int64_t s)
{
    int64_t off = n * t->strides[0] + c * t->strides[1];
    for (int i = t->rank - 1; i >= 2; i--) {
        off += (s % t->dims[i]) * t->strides[i];
        s /= t->dims[i];
    }
    return off;
}

static int64_t group_count(const udnn_tensor *t, udnnSoftmaxMode_t mode)
{
    return mode == UDNN_SOFTMAX_MODE_INSTANCE ? t->dims[0] : t->dims[0] * positions(t);
}

static int64_t group_size(const udnn_tensor *t, udnnSoftmaxMode_t mode)
{
    return mode == UDNN_SOFTMAX_MODE_INSTANCE ? t->dims[1] * positions(t) : t->dims[1];
}

/* Offset of member j of group g. */
static int64_t member_off(const udnn_tensor *t, udnnSoftmaxMode_t mode, int64_t g, int64_t j)
{
    int64_t s = positions(t);
    if (mode == UDNN_SOFTMAX_MODE_INSTANCE) return off_ncs(t, g, j / s, j % s);
    return off_ncs(t, g / s, j, g % s);
}

static udnnStatus_t softmax_fwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_softmax_problem *p = problem;
    const udnn_tensor *x = &p->x, *y = &p->y;
    int64_t groups = group_count(x, p->mode), size = group_size(x, p->mode);
#pragma omp parallel for if (groups * size >= REF_PAR_MIN) schedule(static)
    for (int64_t g = 0; g < groups; g++) {
        /* FAST takes exp(x) as it is; the others shift by the max first */
        double shift = 0.0;
        if (p->algo != UDNN_SOFTMAX_FAST) {
            shift = -INFINITY;
            for (int64_t j = 0; j < size; j++)
                shift = fmax(shift, ref_load(p->x_ptr, x->dtype, member_off(x, p->mode, g, j)));
        }
        double sum = 0.0;
        for (int64_t j = 0; j < size; j++)
            sum += exp(ref_load(p->x_ptr, x->dtype, member_off(x, p->mode, g, j)) - shift);
        double log_sum = log(sum);
        for (int64_t j = 0; j < size; j++) {
            double v = ref_load(p->x_ptr, x->dtype, member_off(x, p->mode, g, j)) - shift;
            double out = p->algo == UDNN_SOFTMAX_LOG ? v - log_sum : exp(v) / sum;
            ref_blend(p->out_ptr, y->dtype, member_off(y, p->mode, g, j), out, p->alpha,
                      p->beta);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

/* FAST, ACCURATE: dx = y * (dy - sum(dy * y)); LOG (y = log softmax):
 * dx = dy - exp(y) * sum(dy); sums over the group. */
static udnnStatus_t softmax_bwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_softmax_problem *p = problem;
    const udnn_tensor *y = &p->y, *dy = &p->dy, *dx = &p->dx;
    int is_log = p->algo == UDNN_SOFTMAX_LOG;
    int64_t groups = group_count(y, p->mode), size = group_size(y, p->mode);
#pragma omp parallel for if (groups * size >= REF_PAR_MIN) schedule(static)
    for (int64_t g = 0; g < groups; g++) {
        double sum = 0.0;
        for (int64_t j = 0; j < size; j++) {
            double dyv = ref_load(p->dy_ptr, dy->dtype, member_off(dy, p->mode, g, j));
            sum += is_log ? dyv
                          : dyv * ref_load(p->y_ptr, y->dtype, member_off(y, p->mode, g, j));
        }
        for (int64_t j = 0; j < size; j++) {
            double yv = ref_load(p->y_ptr, y->dtype, member_off(y, p->mode, g, j));
            double dyv = ref_load(p->dy_ptr, dy->dtype, member_off(dy, p->mode, g, j));
            double out = is_log ? dyv - exp(yv) * sum : yv * (dyv - sum);
            ref_blend(p->out_ptr, dx->dtype, member_off(dx, p->mode, g, j), out, p->alpha,
                      p->beta);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_softmax_fwd = {
    /* .name = */ "ref_softmax_fwd",
    /* .op = */ UDNN_OP_SOFTMAX_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ softmax_fwd_run,
};

const udnn_solver udnn_cpu_ref_softmax_bwd = {
    /* .name = */ "ref_softmax_bwd",
    /* .op = */ UDNN_OP_SOFTMAX_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ softmax_bwd_run,
};
