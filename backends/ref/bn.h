/* bn.h - the reference batch normalization (cpu/ref/batchnorm.c and the
 * GPU backends' reference-bits solvers): forward training, forward
 * inference and backward, a feature at a time.
 *
 * Every statistic belongs to a feature: a channel (SPATIAL,
 * SPATIAL_PERSISTENT) or a channel at one spatial position
 * (PER_ACTIVATION). A feature's members are the m elements of x it reduces
 * over: every n and spatial position of its channel, or every n at its
 * position. A feature is reduced before any of it is written and writes
 * only its own members: features may run in parallel, and y may share x's
 * buffer and dx dy's or x's when the strides agree (core checks). */
#ifndef UDNN_REF_BN_H
#define UDNN_REF_BN_H

#include <math.h>

#include "backends/ref/ref.h"

UDNN_REF_FN int ref_bn_per_activation(const udnn_bn_problem *p)
{
    return p->mode == UDNN_BATCHNORM_PER_ACTIVATION;
}

UDNN_REF_FN int64_t ref_bn_features(const udnn_bn_problem *p)
{
    return p->x.dims[1] * (ref_bn_per_activation(p) ? ref_positions(&p->x) : 1);
}

UDNN_REF_FN int64_t ref_bn_members(const udnn_bn_problem *p)
{
    return p->x.dims[0] * (ref_bn_per_activation(p) ? 1 : ref_positions(&p->x));
}

/* Offset in t (x, y, dy or dx) of member j of feature f. */
UDNN_REF_FN int64_t ref_bn_member(const udnn_bn_problem *p, const udnn_tensor *t, int64_t f,
                                  int64_t j)
{
    int64_t s = ref_positions(t);
    if (ref_bn_per_activation(p)) return ref_off_ncs(t, j, f / s, f % s);
    return ref_off_ncs(t, j / s, f, j % s);
}

/* Offset of feature f's entry in every statistics buffer. */
UDNN_REF_FN int64_t ref_bn_param_off(const udnn_bn_problem *p, int64_t f)
{
    if (ref_bn_per_activation(p)) {
        int64_t s = ref_positions(&p->x);
        return ref_off_ncs(&p->param, 0, f / s, f % s);
    }
    return ref_off_ncs(&p->param, 0, f, 0);
}

/* The mean and biased variance of feature f's members of x, in two passes. */
UDNN_REF_FN void ref_bn_batch_stats(const udnn_bn_problem *p, int64_t f, double *mean, double *var)
{
    const int64_t m = ref_bn_members(p);
    double sum = 0.0;
    for (int64_t j = 0; j < m; j++)
        sum += ref_load(p->x_ptr, p->x.dtype, ref_bn_member(p, &p->x, f, j));
    const double mu = sum / (double)m;
    double sq = 0.0;
    for (int64_t j = 0; j < m; j++) {
        double d = ref_load(p->x_ptr, p->x.dtype, ref_bn_member(p, &p->x, f, j)) - mu;
        sq += d * d;
    }
    *mean = mu;
    *var = sq / (double)m;
}

/* y = alpha * (scale * (x - mean) * inv_std + bias) + beta * y over feature f. */
UDNN_REF_FN void ref_bn_normalize(const udnn_bn_problem *p, int64_t f, double mean, double inv_std)
{
    const int64_t po = ref_bn_param_off(p, f);
    const double scale = ref_load(p->scale_ptr, p->param.dtype, po);
    const double bias = ref_load(p->bias_ptr, p->param.dtype, po);
    for (int64_t j = 0, m = ref_bn_members(p); j < m; j++) {
        double xv = ref_load(p->x_ptr, p->x.dtype, ref_bn_member(p, &p->x, f, j));
        ref_blend(p->out_ptr, p->y.dtype, ref_bn_member(p, &p->y, f, j),
                  scale * (xv - mean) * inv_std + bias, p->alpha, p->beta);
    }
}

/* A running estimate becomes (1 - factor) * old + factor * batch; with
 * factor 1 the old value is not read, so a fresh buffer may hold anything. */
UDNN_REF_FN void ref_bn_update_running(void *buf, udnnDataType_t t, int64_t off, double batch,
                                       double factor)
{
    ref_blend(buf, t, off, batch, factor, 1.0 - factor);
}

/* Feature f of the forward training: its batch statistics, y, the running
 * estimates and the saved statistics where asked. */
UDNN_REF_FN void ref_bn_train_feature(const udnn_bn_problem *p, int64_t f)
{
    const udnnDataType_t pt = p->param.dtype;
    const int64_t m = ref_bn_members(p);
    double mean, var;
    ref_bn_batch_stats(p, f, &mean, &var);
    const double inv_std = 1.0 / sqrt(var + p->epsilon);
    ref_bn_normalize(p, f, mean, inv_std);
    const int64_t po = ref_bn_param_off(p, f);
    if (p->running_mean_ptr != NULL) {
        /* the running variance estimates the population's: unbiased */
        const double unbiased = var * (double)m / (double)(m - 1);
        ref_bn_update_running(p->running_mean_ptr, pt, po, mean, p->exp_avg_factor);
        ref_bn_update_running(p->running_var_ptr, pt, po, unbiased, p->exp_avg_factor);
    }
    if (p->save_mean_ptr != NULL) {
        ref_store(p->save_mean_ptr, pt, po, mean);
        ref_store(p->save_inv_std_ptr, pt, po, inv_std);
    }
}

/* Feature f of the forward inference, from the estimated statistics. */
UDNN_REF_FN void ref_bn_infer_feature(const udnn_bn_problem *p, int64_t f)
{
    const udnnDataType_t pt = p->param.dtype;
    const int64_t po = ref_bn_param_off(p, f);
    const double mean = ref_load(p->est_mean_ptr, pt, po);
    const double var = ref_load(p->est_var_ptr, pt, po);
    ref_bn_normalize(p, f, mean, 1.0 / sqrt(var + p->epsilon));
}

/* Feature f of the backward. With xhat = (x - mean) * inv_std: dbias =
 * sum dy, dscale = sum dy * xhat, dx = scale * inv_std / m * (m * dy -
 * dbias - xhat * dscale). */
UDNN_REF_FN void ref_bn_bwd_feature(const udnn_bn_problem *p, int64_t f)
{
    const udnnDataType_t pt = p->param.dtype;
    const int64_t m = ref_bn_members(p);
    const int64_t po = ref_bn_param_off(p, f);
    double mean, inv_std;
    if (p->saved_mean_ptr != NULL) {
        mean = ref_load(p->saved_mean_ptr, pt, po);
        inv_std = ref_load(p->saved_inv_std_ptr, pt, po);
    } else {
        double var;
        ref_bn_batch_stats(p, f, &mean, &var);
        inv_std = 1.0 / sqrt(var + p->epsilon);
    }
    double dbias = 0.0, dscale = 0.0;
    for (int64_t j = 0; j < m; j++) {
        double dyv = ref_load(p->dy_ptr, p->dy.dtype, ref_bn_member(p, &p->dy, f, j));
        double xv = ref_load(p->x_ptr, p->x.dtype, ref_bn_member(p, &p->x, f, j));
        dbias += dyv;
        dscale += dyv * (xv - mean) * inv_std;
    }
    const double k = ref_load(p->scale_ptr, pt, po) * inv_std / (double)m;
    for (int64_t j = 0; j < m; j++) {
        double dyv = ref_load(p->dy_ptr, p->dy.dtype, ref_bn_member(p, &p->dy, f, j));
        double xhat =
            (ref_load(p->x_ptr, p->x.dtype, ref_bn_member(p, &p->x, f, j)) - mean) * inv_std;
        ref_blend(p->out_ptr, p->dx.dtype, ref_bn_member(p, &p->dx, f, j),
                  k * ((double)m * dyv - dbias - xhat * dscale), p->alpha, p->beta);
    }
    ref_blend(p->dscale_ptr, pt, po, dscale, p->alpha_param, p->beta_param);
    ref_blend(p->dbias_ptr, pt, po, dbias, p->alpha_param, p->beta_param);
}

#endif /* UDNN_REF_BN_H */
