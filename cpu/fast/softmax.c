/* softmax.c - fast softmax forward and backward for FLOAT data.
 *
 * A group is the set of elements one softmax runs over (see
 * cpu/ref/softmax.c). INSTANCE groups are taken as flat arrays: the solver
 * applies when, in every tensor, the dims after N are packed (in any
 * order, so NCHW and NHWC alike) and laid out the same way, because a
 * softmax does not care in which order it meets its members. CHANNEL
 * groups (one per n and position) are walked with C's stride, any layout.
 *
 * exp and log run in float, sums in double; each group belongs to one
 * thread, so the result does not depend on the thread count. An output
 * element is written only after its group's reductions and only from its
 * own position's inputs, so an output may be an input (core checks the
 * layouts agree). */
#include <math.h>

#include "cpu/fast/fast.h"

/* Below this many elements one thread does every group. */
#define PAR_MIN_ELEMENTS (1 << 15)

/* ---- groups ------------------------------------------------------------------------ */

static int64_t positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

/* Where group g starts in t, and the stride between its members. */
static int64_t group_base(const udnn_tensor *t, udnnSoftmaxMode_t mode, int64_t g,
                          int64_t *step)
{
    if (mode == UDNN_SOFTMAX_MODE_INSTANCE) {
        *step = 1;
        return g * t->strides[0];
    }
    int64_t s = positions(t), n = g / s, pos = g % s, off = n * t->strides[0];
    for (int i = t->rank - 1; i >= 2; i--) {
        off += (pos % t->dims[i]) * t->strides[i];
        pos /= t->dims[i];
    }
    *step = t->strides[1];
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

static int check_tensors(const udnn_softmax_problem *p, const udnn_tensor *first,
                         const udnn_tensor *second, const udnn_tensor *third, const char **why)
{
    if (first->dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    if (p->mode == UDNN_SOFTMAX_MODE_CHANNEL) return 1;
    if (!fast_packed_from(first, 1) || !fast_same_layout_from(first, second, 1) ||
        (third != NULL && !fast_same_layout_from(first, third, 1))) {
        *why = "INSTANCE mode needs the dims after N packed, in one layout for every tensor";
        return 0;
    }
    return 1;
}

static int fwd_applicable(const void *problem, const char **why)
{
    const udnn_softmax_problem *p = problem;
    return check_tensors(p, &p->x, &p->y, NULL, why);
}

static int bwd_applicable(const void *problem, const char **why)
{
    const udnn_softmax_problem *p = problem;
    return check_tensors(p, &p->y, &p->dy, &p->dx, why);
}

/* ---- forward ------------------------------------------------------------------------ */

static inline void blend(float *out, float v, float alpha, float beta)
{
    *out = beta == 0.0f ? alpha * v : alpha * v + beta * *out;
}

static void fwd_group(const udnn_softmax_problem *p, const float *x, int64_t sx, float *y,
                      int64_t sy, int64_t m)
{
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    /* FAST takes exp(x) as it is; the others shift by the max, which
     * skips NaN as the reference's fmax does */
    float shift = 0.0f;
    if (p->algo != UDNN_SOFTMAX_FAST) {
        shift = -INFINITY;
        for (int64_t j = 0; j < m; j++) shift = x[j * sx] > shift ? x[j * sx] : shift;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < m; j++) sum += expf(x[j * sx] - shift);
    if (p->algo == UDNN_SOFTMAX_LOG) {
        const float log_sum = (float)log(sum);
        for (int64_t j = 0; j < m; j++)
            blend(&y[j * sy], (x[j * sx] - shift) - log_sum, alpha, beta);
        return;
    }
    /* a division, not a reciprocal's product: one member gives exactly 1 */
    for (int64_t j = 0; j < m; j++)
        blend(&y[j * sy], (float)(expf(x[j * sx] - shift) / sum), alpha, beta);
}

static udnnStatus_t fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_softmax_problem *p = problem;
    const int64_t groups = group_count(&p->x, p->mode), size = group_size(&p->x, p->mode);
    FAST_PRAGMA(omp parallel for if (groups * size >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t g = 0; g < groups; g++) {
        int64_t sx, sy;
        int64_t ox = group_base(&p->x, p->mode, g, &sx), oy = group_base(&p->y, p->mode, g, &sy);
        fwd_group(p, (const float *)p->x_ptr + ox, sx, (float *)p->out_ptr + oy, sy, size);
    }
    return UDNN_STATUS_SUCCESS;
}

/* ---- backward ----------------------------------------------------------------------- */

/* FAST, ACCURATE: dx = y (dy - sum(dy y)); LOG: dx = dy - exp(y) sum(dy). */
static void bwd_group(const udnn_softmax_problem *p, const float *y, int64_t sy,
                      const float *dy, int64_t sdy, float *dx, int64_t sdx, int64_t m)
{
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    double sum = 0.0;
    if (p->algo == UDNN_SOFTMAX_LOG) {
        for (int64_t j = 0; j < m; j++) sum += dy[j * sdy];
        const float s = (float)sum;
        for (int64_t j = 0; j < m; j++)
            blend(&dx[j * sdx], dy[j * sdy] - expf(y[j * sy]) * s, alpha, beta);
        return;
    }
    for (int64_t j = 0; j < m; j++) sum += (double)dy[j * sdy] * y[j * sy];
    /* dy - sum cancels where dy is close to the sum: subtracting the sum
     * as a float pair (hi, lo) keeps what rounding it to one float loses */
    const float s_hi = (float)sum, s_lo = (float)(sum - s_hi);
    for (int64_t j = 0; j < m; j++)
        blend(&dx[j * sdx], y[j * sy] * ((dy[j * sdy] - s_hi) - s_lo), alpha, beta);
}

static udnnStatus_t bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_softmax_problem *p = problem;
    const int64_t groups = group_count(&p->y, p->mode), size = group_size(&p->y, p->mode);
    FAST_PRAGMA(omp parallel for if (groups * size >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t g = 0; g < groups; g++) {
        int64_t sy, sdy, sdx;
        int64_t oy = group_base(&p->y, p->mode, g, &sy);
        int64_t ody = group_base(&p->dy, p->mode, g, &sdy);
        int64_t odx = group_base(&p->dx, p->mode, g, &sdx);
        bwd_group(p, (const float *)p->y_ptr + oy, sy, (const float *)p->dy_ptr + ody, sdy,
                  (float *)p->out_ptr + odx, sdx, size);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_softmax_fwd = {
    /* .name = */ "fast_softmax_fwd",
    /* .op = */ UDNN_OP_SOFTMAX_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ fwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ fwd_run,
};

const udnn_solver udnn_cpu_fast_softmax_bwd = {
    /* .name = */ "fast_softmax_bwd",
    /* .op = */ UDNN_OP_SOFTMAX_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ bwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ bwd_run,
};
