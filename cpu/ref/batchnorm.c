/* batchnorm.c - reference batch normalization: forward training, forward
 * inference and backward.
 *
 * Every statistic belongs to a feature: a channel (SPATIAL,
 * SPATIAL_PERSISTENT) or a channel at one spatial position
 * (PER_ACTIVATION). A feature's members are the m elements of x it reduces
 * over: every n and spatial position of its channel, or every n at its
 * position. Each feature is finished (reduced, then written) before the
 * next, and writes only its own members, so y may share x's buffer and dx
 * dy's or x's when the strides agree (core checks). */
#include <math.h>

#include "cpu/cpu_solvers.h"

/* Elements of the dims after C. */
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

static int per_activation(const udnn_bn_problem *p)
{
    return p->mode == UDNN_BATCHNORM_PER_ACTIVATION;
}

static int64_t feature_count(const udnn_bn_problem *p)
{
    return p->x.dims[1] * (per_activation(p) ? positions(&p->x) : 1);
}

static int64_t member_count(const udnn_bn_problem *p)
{
    return p->x.dims[0] * (per_activation(p) ? 1 : positions(&p->x));
}

/* Offset in t (x, y, dy or dx) of member j of feature f. */
static int64_t member_off(const udnn_bn_problem *p, const udnn_tensor *t, int64_t f, int64_t j)
{
    int64_t s = positions(t);
    if (per_activation(p)) return off_ncs(t, j, f / s, f % s);
    return off_ncs(t, j / s, f, j % s);
}

/* Offset of feature f's entry in every statistics buffer. */
static int64_t param_off(const udnn_bn_problem *p, int64_t f)
{
    if (per_activation(p)) {
        int64_t s = positions(&p->x);
        return off_ncs(&p->param, 0, f / s, f % s);
    }
    return off_ncs(&p->param, 0, f, 0);
}

/* The mean and biased variance of feature f's members of x, in two passes. */
static void batch_stats(const udnn_bn_problem *p, int64_t f, double *mean, double *var)
{
    const int64_t m = member_count(p);
    double sum = 0.0;
    for (int64_t j = 0; j < m; j++)
        sum += ref_load(p->x_ptr, p->x.dtype, member_off(p, &p->x, f, j));
    const double mu = sum / (double)m;
    double sq = 0.0;
    for (int64_t j = 0; j < m; j++) {
        double d = ref_load(p->x_ptr, p->x.dtype, member_off(p, &p->x, f, j)) - mu;
        sq += d * d;
    }
    *mean = mu;
    *var = sq / (double)m;
}

/* y = alpha * (scale * (x - mean) * inv_std + bias) + beta * y over feature f. */
static void normalize_feature(const udnn_bn_problem *p, int64_t f, double mean, double inv_std)
{
    const int64_t po = param_off(p, f);
    const double scale = ref_load(p->scale_ptr, p->param.dtype, po);
    const double bias = ref_load(p->bias_ptr, p->param.dtype, po);
    for (int64_t j = 0, m = member_count(p); j < m; j++) {
        double xv = ref_load(p->x_ptr, p->x.dtype, member_off(p, &p->x, f, j));
        ref_blend(p->out_ptr, p->y.dtype, member_off(p, &p->y, f, j),
                  scale * (xv - mean) * inv_std + bias, p->alpha, p->beta);
    }
}

/* A running estimate becomes (1 - factor) * old + factor * batch; with
 * factor 1 the old value is not read, so a fresh buffer may hold anything. */
static void update_running(void *buf, udnnDataType_t t, int64_t off, double batch, double factor)
{
    ref_blend(buf, t, off, batch, factor, 1.0 - factor);
}

static udnnStatus_t bn_fwd_train_run(void *ctx, const void *problem, void *workspace,
                                     size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const udnnDataType_t pt = p->param.dtype;
    const int64_t m = member_count(p);
    for (int64_t f = 0, nf = feature_count(p); f < nf; f++) {
        double mean, var;
        batch_stats(p, f, &mean, &var);
        const double inv_std = 1.0 / sqrt(var + p->epsilon);
        normalize_feature(p, f, mean, inv_std);
        const int64_t po = param_off(p, f);
        if (p->running_mean_ptr != NULL) {
            /* the running variance estimates the population's: unbiased */
            const double unbiased = var * (double)m / (double)(m - 1);
            update_running(p->running_mean_ptr, pt, po, mean, p->exp_avg_factor);
            update_running(p->running_var_ptr, pt, po, unbiased, p->exp_avg_factor);
        }
        if (p->save_mean_ptr != NULL) {
            ref_store(p->save_mean_ptr, pt, po, mean);
            ref_store(p->save_inv_std_ptr, pt, po, inv_std);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t bn_fwd_infer_run(void *ctx, const void *problem, void *workspace,
                                     size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const udnnDataType_t pt = p->param.dtype;
    for (int64_t f = 0, nf = feature_count(p); f < nf; f++) {
        const int64_t po = param_off(p, f);
        const double mean = ref_load(p->est_mean_ptr, pt, po);
        const double var = ref_load(p->est_var_ptr, pt, po);
        normalize_feature(p, f, mean, 1.0 / sqrt(var + p->epsilon));
    }
    return UDNN_STATUS_SUCCESS;
}

/* With xhat = (x - mean) * inv_std: dbias = sum dy, dscale = sum dy * xhat,
 * dx = scale * inv_std / m * (m * dy - dbias - xhat * dscale). */
static udnnStatus_t bn_bwd_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const udnnDataType_t pt = p->param.dtype;
    const int64_t m = member_count(p);
    for (int64_t f = 0, nf = feature_count(p); f < nf; f++) {
        const int64_t po = param_off(p, f);
        double mean, inv_std;
        if (p->saved_mean_ptr != NULL) {
            mean = ref_load(p->saved_mean_ptr, pt, po);
            inv_std = ref_load(p->saved_inv_std_ptr, pt, po);
        } else {
            double var;
            batch_stats(p, f, &mean, &var);
            inv_std = 1.0 / sqrt(var + p->epsilon);
        }
        double dbias = 0.0, dscale = 0.0;
        for (int64_t j = 0; j < m; j++) {
            double dyv = ref_load(p->dy_ptr, p->dy.dtype, member_off(p, &p->dy, f, j));
            double xv = ref_load(p->x_ptr, p->x.dtype, member_off(p, &p->x, f, j));
            dbias += dyv;
            dscale += dyv * (xv - mean) * inv_std;
        }
        const double k = ref_load(p->scale_ptr, pt, po) * inv_std / (double)m;
        for (int64_t j = 0; j < m; j++) {
            double dyv = ref_load(p->dy_ptr, p->dy.dtype, member_off(p, &p->dy, f, j));
            double xhat = (ref_load(p->x_ptr, p->x.dtype, member_off(p, &p->x, f, j)) - mean) *
                          inv_std;
            ref_blend(p->out_ptr, p->dx.dtype, member_off(p, &p->dx, f, j),
                      k * ((double)m * dyv - dbias - xhat * dscale), p->alpha, p->beta);
        }
        ref_blend(p->dscale_ptr, pt, po, dscale, p->alpha_param, p->beta_param);
        ref_blend(p->dbias_ptr, pt, po, dbias, p->alpha_param, p->beta_param);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_bn_fwd_train = {
    /* .name = */ "ref_bn_fwd_train",
    /* .op = */ UDNN_OP_BN_FWD_TRAIN,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_fwd_train_run,
};

const udnn_solver udnn_cpu_ref_bn_fwd_infer = {
    /* .name = */ "ref_bn_fwd_infer",
    /* .op = */ UDNN_OP_BN_FWD_INFER,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_fwd_infer_run,
};

const udnn_solver udnn_cpu_ref_bn_bwd = {
    /* .name = */ "ref_bn_bwd",
    /* .op = */ UDNN_OP_BN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_bwd_run,
};
