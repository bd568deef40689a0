/* batchnorm.c - fast batch normalization (SPATIAL and SPATIAL_PERSISTENT,
 * which compute the same thing) for FLOAT data in any strides.
 *
 * A channel's members are every n and spatial position; each channel
 * belongs to one thread, so the results do not depend on the thread count.
 * The members are walked as rows: the spatial dims merge wherever every
 * tensor steps evenly across them, so a packed NCHW channel is N rows of
 * H*W contiguous floats (vectorized), an NHWC one N rows strided by C.
 *
 * Statistics are two passes in double, as in cpu/ref/batchnorm.c. The
 * element-wise passes run in float, with the mean split into a float and
 * its float remainder: (x - hi) - lo loses nothing to the mean's rounding
 * when the mean is large against the spread. A channel is reduced before
 * any of its elements is written, and each element is read just before its
 * own write, so y may be x and dx may be dy or x (core checks layouts). */
#include <math.h>

#include "cpu/fast/fast.h"

/* Below this many elements one thread does every channel. */
#define PAR_MIN_ELEMENTS (1 << 15)

/* ---- the members of a channel, as rows -------------------------------------------- */

enum { T_X, T_Y, T_DY, T_DX, TENSORS }; /* T_Y and T_DY: the forward or backward side */

/* Rows: for every index of the outer dims (n first), a row of len
 * elements. Strides per tensor; an unused tensor has all zero. */
typedef struct {
    int outer;
    int64_t dims[UDNN_DIM_MAX];
    int64_t stride[TENSORS][UDNN_DIM_MAX];
    int64_t len, step[TENSORS], rows;
} member_rows;

static void rows_build(member_rows *mr, const udnn_tensor *const t[TENSORS])
{
    const udnn_tensor *x = t[T_X];
    int64_t dims[UDNN_DIM_MAX], st[TENSORS][UDNN_DIM_MAX];
    int n = 0;
    /* the dims without C, in logical order, merged where all agree */
    for (int i = 0; i < x->rank; i++) {
        if (i == 1 || (x->dims[i] == 1 && i != 0)) continue;
        int merge = n > 0;
        for (int k = 0; k < TENSORS && merge; k++)
            merge = t[k] == NULL || st[k][n - 1] == t[k]->strides[i] * x->dims[i];
        if (merge) {
            dims[n - 1] *= x->dims[i];
            for (int k = 0; k < TENSORS; k++) st[k][n - 1] = t[k] ? t[k]->strides[i] : 0;
            continue;
        }
        dims[n] = x->dims[i];
        for (int k = 0; k < TENSORS; k++) st[k][n] = t[k] ? t[k]->strides[i] : 0;
        n++;
    }
    mr->outer = n - 1;
    mr->rows = 1;
    for (int i = 0; i < n - 1; i++) {
        mr->dims[i] = dims[i];
        mr->rows *= dims[i];
        for (int k = 0; k < TENSORS; k++) mr->stride[k][i] = st[k][i];
    }
    mr->len = dims[n - 1];
    for (int k = 0; k < TENSORS; k++) mr->step[k] = st[k][n - 1];
}

/* Offset of row r's first element in tensor k (from the channel's start). */
static int64_t row_offset(const member_rows *mr, int k, int64_t r)
{
    int64_t off = 0;
    for (int i = mr->outer - 1; i >= 0; i--) {
        off += (r % mr->dims[i]) * mr->stride[k][i];
        r /= mr->dims[i];
    }
    return off;
}

static int applicable(const void *problem, const char **why)
{
    const udnn_bn_problem *p = problem;
    if (p->x.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    if (p->mode == UDNN_BATCHNORM_PER_ACTIVATION) {
        *why = "PER_ACTIVATION runs on the reference";
        return 0;
    }
    return 1;
}

/* ---- statistics -------------------------------------------------------------------- */

static double row_sum(const float *v, int64_t len, int64_t step)
{
    double s = 0.0;
    if (step == 1) {
        FAST_PRAGMA(omp simd reduction(+ : s))
        for (int64_t i = 0; i < len; i++) s += v[i];
    } else {
        for (int64_t i = 0; i < len; i++) s += v[i * step];
    }
    return s;
}

static double row_sq_dev(const float *v, int64_t len, int64_t step, double mean)
{
    double s = 0.0;
    if (step == 1) {
        FAST_PRAGMA(omp simd reduction(+ : s))
        for (int64_t i = 0; i < len; i++) s += (v[i] - mean) * (v[i] - mean);
    } else {
        for (int64_t i = 0; i < len; i++) s += (v[i * step] - mean) * (v[i * step] - mean);
    }
    return s;
}

/* Mean and biased variance of one channel of x (x at the channel's start). */
static void channel_stats(const member_rows *mr, const float *x, double *mean, double *var)
{
    const double m = (double)(mr->rows * mr->len);
    double sum = 0.0, sq = 0.0;
    for (int64_t r = 0; r < mr->rows; r++)
        sum += row_sum(x + row_offset(mr, T_X, r), mr->len, mr->step[T_X]);
    *mean = sum / m;
    for (int64_t r = 0; r < mr->rows; r++)
        sq += row_sq_dev(x + row_offset(mr, T_X, r), mr->len, mr->step[T_X], *mean);
    *var = sq / m;
}

/* ---- forward ----------------------------------------------------------------------- */

/* y = alpha * (k * (x - mean) + bias) + beta * y over one channel, with
 * k = scale * inv_std. */
typedef struct {
    float mean_hi, mean_lo, k, bias, alpha, beta;
} affine;

static affine make_affine(double mean, double k, double bias, double alpha, double beta)
{
    affine a;
    a.mean_hi = (float)mean;
    a.mean_lo = (float)(mean - a.mean_hi);
    a.k = (float)k;
    a.bias = (float)bias;
    a.alpha = (float)alpha;
    a.beta = (float)beta;
    return a;
}

static void normalize_row(const affine *a, const float *x, int64_t sx, float *y, int64_t sy,
                          int64_t len)
{
    if (sx == 1 && sy == 1) {
        if (a->beta == 0.0f) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++)
                y[i] = a->alpha * (a->k * ((x[i] - a->mean_hi) - a->mean_lo) + a->bias);
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++)
                y[i] = a->alpha * (a->k * ((x[i] - a->mean_hi) - a->mean_lo) + a->bias) +
                       a->beta * y[i];
        }
        return;
    }
    for (int64_t i = 0; i < len; i++) {
        float v = a->alpha * (a->k * ((x[i * sx] - a->mean_hi) - a->mean_lo) + a->bias);
        y[i * sy] = a->beta == 0.0f ? v : v + a->beta * y[i * sy];
    }
}

static void normalize_channel(const member_rows *mr, const affine *a, const float *x, float *y)
{
    for (int64_t r = 0; r < mr->rows; r++)
        normalize_row(a, x + row_offset(mr, T_X, r), mr->step[T_X], y + row_offset(mr, T_Y, r),
                      mr->step[T_Y], mr->len);
}

static void fwd_rows(const udnn_bn_problem *p, member_rows *mr)
{
    const udnn_tensor *t[TENSORS] = {&p->x, &p->y, NULL, NULL};
    rows_build(mr, t);
}

/* A running estimate becomes (1 - f) * old + f * batch; old is not read
 * when f is 1, so a fresh buffer may hold anything. */
static void update_running(float *est, double batch, double f)
{
    double v = f * batch;
    if (1.0 - f != 0.0) v += (1.0 - f) * *est;
    *est = (float)v;
}

static udnnStatus_t fwd_train_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_bn_problem *p = problem;
    member_rows mr;
    fwd_rows(p, &mr);
    const int64_t channels = p->x.dims[1], m = mr.rows * mr.len;
    FAST_PRAGMA(omp parallel for if (channels * m >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t c = 0; c < channels; c++) {
        const float *x = (const float *)p->x_ptr + c * p->x.strides[1];
        float *y = (float *)p->out_ptr + c * p->y.strides[1];
        const int64_t po = c * p->param.strides[1];
        double mean, var;
        channel_stats(&mr, x, &mean, &var);
        const double inv_std = 1.0 / sqrt(var + p->epsilon);
        const double scale = ((const float *)p->scale_ptr)[po];
        const double bias = ((const float *)p->bias_ptr)[po];
        affine a = make_affine(mean, scale * inv_std, bias, p->alpha, p->beta);
        normalize_channel(&mr, &a, x, y);
        if (p->running_mean_ptr != NULL) {
            /* the running variance estimates the population's: unbiased */
            update_running((float *)p->running_mean_ptr + po, mean, p->exp_avg_factor);
            update_running((float *)p->running_var_ptr + po, var * (double)m / (double)(m - 1),
                           p->exp_avg_factor);
        }
        if (p->save_mean_ptr != NULL) {
            ((float *)p->save_mean_ptr)[po] = (float)mean;
            ((float *)p->save_inv_std_ptr)[po] = (float)inv_std;
        }
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t fwd_infer_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_bn_problem *p = problem;
    member_rows mr;
    fwd_rows(p, &mr);
    const int64_t channels = p->x.dims[1];
    FAST_PRAGMA(omp parallel for if (channels * mr.rows * mr.len >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t c = 0; c < channels; c++) {
        const int64_t po = c * p->param.strides[1];
        const double mean = ((const float *)p->est_mean_ptr)[po];
        const double var = ((const float *)p->est_var_ptr)[po];
        const double scale = ((const float *)p->scale_ptr)[po];
        const double bias = ((const float *)p->bias_ptr)[po];
        affine a = make_affine(mean, scale / sqrt(var + p->epsilon), bias, p->alpha, p->beta);
        normalize_channel(&mr, &a, (const float *)p->x_ptr + c * p->x.strides[1],
                          (float *)p->out_ptr + c * p->y.strides[1]);
    }
    return UDNN_STATUS_SUCCESS;
}

/* ---- backward ---------------------------------------------------------------------- */

/* With xhat = (x - mean) * inv_std, per channel: dbias = sum dy,
 * dscale = sum dy * xhat, dx = k * (dy - dbias/m - xhat * dscale/m) with
 * k = scale * inv_std. */
typedef struct {
    double mean; /* for the sums */
    float mean_hi, mean_lo, inv_std, k, mean_dy, mean_dy_lo, mean_dy_xhat, alpha, beta;
} grad_coefs;

/* Adds this row's sum of dy and of dy * (x - mean) to the sums, x - mean
 * in double: dscale is often a small remainder of its terms, so a float
 * deviation's rounding would show in it (1e-5 over 27 members). */
static void grad_sums_row(const grad_coefs *g, const float *x, int64_t sx, const float *dy,
                          int64_t sdy, int64_t len, double *sum_dy, double *sum_dy_dev)
{
    double s = 0.0, sd = 0.0;
    if (sx == 1 && sdy == 1) {
        FAST_PRAGMA(omp simd reduction(+ : s, sd))
        for (int64_t i = 0; i < len; i++) {
            s += dy[i];
            sd += (double)dy[i] * ((double)x[i] - g->mean);
        }
    } else {
        for (int64_t i = 0; i < len; i++) {
            s += dy[i * sdy];
            sd += (double)dy[i * sdy] * ((double)x[i * sx] - g->mean);
        }
    }
    *sum_dy += s;
    *sum_dy_dev += sd;
}

static inline float grad_at(const grad_coefs *g, float x, float dy)
{
    const float xhat = ((x - g->mean_hi) - g->mean_lo) * g->inv_std;
    return g->alpha * (g->k * (((dy - g->mean_dy) - g->mean_dy_lo) - xhat * g->mean_dy_xhat));
}

static void grad_row(const grad_coefs *g, const float *x, int64_t sx, const float *dy,
                     int64_t sdy, float *dx, int64_t sdx, int64_t len)
{
    if (sx == 1 && sdy == 1 && sdx == 1) {
        if (g->beta == 0.0f) {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) dx[i] = grad_at(g, x[i], dy[i]);
        } else {
            FAST_PRAGMA(omp simd)
            for (int64_t i = 0; i < len; i++) dx[i] = grad_at(g, x[i], dy[i]) + g->beta * dx[i];
        }
        return;
    }
    for (int64_t i = 0; i < len; i++) {
        float v = grad_at(g, x[i * sx], dy[i * sdy]);
        dx[i * sdx] = g->beta == 0.0f ? v : v + g->beta * dx[i * sdx];
    }
}

static void bwd_channel(const udnn_bn_problem *p, const member_rows *mr, int64_t c)
{
    const float *x = (const float *)p->x_ptr + c * p->x.strides[1];
    const float *dy = (const float *)p->dy_ptr + c * p->dy.strides[1];
    float *dx = (float *)p->out_ptr + c * p->dx.strides[1];
    const int64_t po = c * p->param.strides[1];
    const double m = (double)(mr->rows * mr->len);
    double mean, inv_std;
    if (p->saved_mean_ptr != NULL) {
        mean = ((const float *)p->saved_mean_ptr)[po];
        inv_std = ((const float *)p->saved_inv_std_ptr)[po];
    } else {
        double var;
        channel_stats(mr, x, &mean, &var);
        inv_std = 1.0 / sqrt(var + p->epsilon);
    }
    grad_coefs g;
    g.mean = mean;
    g.mean_hi = (float)mean;
    g.mean_lo = (float)(mean - g.mean_hi);
    g.inv_std = (float)inv_std;
    double dbias = 0.0, dev = 0.0;
    for (int64_t r = 0; r < mr->rows; r++)
        grad_sums_row(&g, x + row_offset(mr, T_X, r), mr->step[T_X],
                      dy + row_offset(mr, T_DY, r), mr->step[T_DY], mr->len, &dbias, &dev);
    const double dscale = dev * inv_std;
    g.k = (float)(((const float *)p->scale_ptr)[po] * inv_std);
    /* dy's mean split too: where dy's mean is large against its spread,
     * dy - mean is a small remainder, and the mean's float rounding alone
     * was 1e-4 of it (dy = 2 +- 0.001, test_dy_offset) */
    g.mean_dy = (float)(dbias / m);
    g.mean_dy_lo = (float)(dbias / m - g.mean_dy);
    g.mean_dy_xhat = (float)(dscale / m);
    g.alpha = (float)p->alpha;
    g.beta = (float)p->beta;
    for (int64_t r = 0; r < mr->rows; r++)
        grad_row(&g, x + row_offset(mr, T_X, r), mr->step[T_X], dy + row_offset(mr, T_DY, r),
                 mr->step[T_DY], dx + row_offset(mr, T_DX, r), mr->step[T_DX], mr->len);
    float *ds = (float *)p->dscale_ptr + po, *db = (float *)p->dbias_ptr + po;
    double vs = p->alpha_param * dscale, vb = p->alpha_param * dbias;
    if (p->beta_param != 0.0) {
        vs += p->beta_param * *ds;
        vb += p->beta_param * *db;
    }
    *ds = (float)vs;
    *db = (float)vb;
}

static udnnStatus_t bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_bn_problem *p = problem;
    const udnn_tensor *t[TENSORS] = {&p->x, NULL, &p->dy, &p->dx};
    member_rows mr;
    rows_build(&mr, t);
    const int64_t channels = p->x.dims[1];
    FAST_PRAGMA(omp parallel for if (channels * mr.rows * mr.len >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t c = 0; c < channels; c++) bwd_channel(p, &mr, c);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_bn_fwd_train = {
    /* .name = */ "fast_bn_fwd_train",
    /* .op = */ UDNN_OP_BN_FWD_TRAIN,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ applicable,
    /* .workspace = */ NULL,
    /* .run = */ fwd_train_run,
};

const udnn_solver udnn_cpu_fast_bn_fwd_infer = {
    /* .name = */ "fast_bn_fwd_infer",
    /* .op = */ UDNN_OP_BN_FWD_INFER,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ applicable,
    /* .workspace = */ NULL,
    /* .run = */ fwd_infer_run,
};

const udnn_solver udnn_cpu_fast_bn_bwd = {
    /* .name = */ "fast_bn_bwd",
    /* .op = */ UDNN_OP_BN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ applicable,
    /* .workspace = */ NULL,
    /* .run = */ bwd_run,
};
