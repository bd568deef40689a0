/* norm.c - NormForward/NormBackward (layer and RMS norm) and
 * GroupNormForward/GroupNormBackward: validation and the normalized
 * problem. The side tensors (scale, bias, their gradients, the statistics)
 * have x's rank and exact shapes, and are FLOAT for FLOAT, HALF and
 * BFLOAT16 data and DOUBLE for DOUBLE data. y may be x's buffer and dx may
 * be x's or dy's, with the same layout. */
#include <math.h>
#include <stdio.h>

#include "core/core.h"

/* x's rank bounds: layer/RMS norm need one leading and one normalized dim;
 * group norm needs N, C and at least one spatial dim. */
#define NORM_MIN_RANK 2
#define GROUPNORM_MIN_RANK 3

/* The shapes the side tensors must have, and how to say so. */
typedef struct {
    int scale[UDNN_DIM_MAX], stats[UDNN_DIM_MAX];
    char scale_rule[96], stats_rule[96];
} side_shapes;

static udnnDataType_t side_type_of(udnnDataType_t data)
{
    return data == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
}

static udnnStatus_t check_side(const char *fn, const char *arg, const udnnTensorDescriptor_t d,
                               const udnnTensorDescriptor_t x, const int want[],
                               const char *rule)
{
    udnnDataType_t type = side_type_of(x->dtype);
    if (d->dtype != type)
        return udnn_fail(
            UDNN_STATUS_BAD_PARAM, "%s: %s has data type %s; for %s data it must be %s", fn, arg,
            udnn_dtype_name(d->dtype), udnn_dtype_name(x->dtype), udnn_dtype_name(type));
    if (d->nb_dims != x->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions; it must have xDesc's %d",
                         fn, arg, d->nb_dims, x->nb_dims);
    for (int i = 0; i < x->nb_dims; i++)
        if (d->dims[i] != want[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d; it must be %d (%s)", fn, arg, i,
                             d->dims[i], want[i], rule);
    return UDNN_STATUS_SUCCESS;
}

/* scaleBiasDesc, and statsDesc when given, against their shapes. */
static udnnStatus_t check_sides(const char *fn, const udnnTensorDescriptor_t x,
                                const udnnTensorDescriptor_t scaleBiasDesc,
                                const udnnTensorDescriptor_t statsDesc, const side_shapes *s)
{
    UDNN_TRY(check_side(fn, "scaleBiasDesc", scaleBiasDesc, x, s->scale, s->scale_rule));
    if (statsDesc != NULL)
        UDNN_TRY(check_side(fn, "statsDesc", statsDesc, x, s->stats, s->stats_rule));
    return UDNN_STATUS_SUCCESS;
}

static void norm_shapes(const udnnTensorDescriptor_t x, int normalizedDims, side_shapes *s)
{
    int lead = x->nb_dims - normalizedDims;
    for (int i = 0; i < x->nb_dims; i++) {
        s->scale[i] = i < lead ? 1 : x->dims[i];
        s->stats[i] = i < lead ? x->dims[i] : 1;
    }
    snprintf(s->scale_rule, sizeof s->scale_rule,
             "1 in the %d leading dims, xDesc's size in the %d normalized ones", lead,
             normalizedDims);
    snprintf(s->stats_rule, sizeof s->stats_rule,
             "xDesc's size in the %d leading dims, 1 in the %d normalized ones", lead,
             normalizedDims);
}

static void group_shapes(const udnnTensorDescriptor_t x, int groups, side_shapes *s)
{
    for (int i = 0; i < x->nb_dims; i++) {
        s->scale[i] = i == 1 ? x->dims[1] : 1;
        s->stats[i] = i == 0 ? x->dims[0] : i == 1 ? groups : 1;
    }
    snprintf(s->scale_rule, sizeof s->scale_rule, "1 x C x 1...: one per channel");
    snprintf(s->stats_rule, sizeof s->stats_rule, "N x groups x 1...");
}

static udnnStatus_t check_mode(const char *fn, udnnNormMode_t mode)
{
    if (mode != UDNN_NORM_LAYER && mode != UDNN_NORM_RMS)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnNormMode_t", fn,
                         (int)mode);
    return UDNN_STATUS_SUCCESS;
}

/* Type and rank of x, then normalizedDims against that rank. */
static udnnStatus_t check_norm_x(const char *fn, const udnnTensorDescriptor_t xDesc,
                                 int normalizedDims)
{
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", xDesc, NORM_MIN_RANK, UDNN_DIM_MAX));
    if (normalizedDims < 1 || normalizedDims > xDesc->nb_dims - 1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: normalizedDims is %d; xDesc has %d dimensions, so it must be 1 "
                         "to %d",
                         fn, normalizedDims, xDesc->nb_dims, xDesc->nb_dims - 1);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_group_x(const char *fn, const udnnTensorDescriptor_t xDesc,
                                  int groups)
{
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", xDesc, GROUPNORM_MIN_RANK, UDNN_DIM_MAX));
    if (groups < 1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: groups is %d; it must be at least 1", fn,
                         groups);
    if (xDesc->dims[1] % groups != 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: groups is %d; it does not divide the %d channels of xDesc", fn,
                         groups, xDesc->dims[1]);
    return UDNN_STATUS_SUCCESS;
}

/* statsDesc is needed when either statistics buffer is given; when given
 * itself it is checked like every descriptor. */
static udnnStatus_t check_stats_desc(const char *fn, const udnnTensorDescriptor_t statsDesc,
                                     const void *mean, const char *mean_arg, const void *inv_std,
                                     const char *inv_std_arg)
{
    if (statsDesc == NULL && (mean != NULL || inv_std != NULL))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: statsDesc is NULL, but %s is set", fn,
                         mean != NULL ? mean_arg : inv_std_arg);
    if (statsDesc != NULL) UDNN_TRY(udnn_check_tensor(fn, "statsDesc", statsDesc));
    return UDNN_STATUS_SUCCESS;
}

/* ---- forward ------------------------------------------------------------------ */

/* What both forward calls check once x's shape and the side shapes are
 * known, and the problem they share. */
static udnnStatus_t forward_problem(const char *fn, double epsilon,
                                    const udnnTensorDescriptor_t xDesc, const void *x,
                                    const udnnTensorDescriptor_t scaleBiasDesc,
                                    const void *scale, const void *bias,
                                    const udnnTensorDescriptor_t yDesc, void *y,
                                    const udnnTensorDescriptor_t statsDesc, void *saveMean,
                                    void *saveInvStd, const side_shapes *shapes,
                                    udnn_norm_problem *p)
{
    UDNN_TRY(udnn_check_epsilon(fn, epsilon, 0.0));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));
    UDNN_TRY(check_sides(fn, xDesc, scaleBiasDesc, statsDesc, shapes));

    p->epsilon = epsilon;
    udnn_tensor_from_desc(xDesc, &p->x);
    udnn_tensor_from_desc(yDesc, &p->y);
    udnn_tensor_from_desc(scaleBiasDesc, &p->scale);
    if (statsDesc != NULL) udnn_tensor_from_desc(statsDesc, &p->stats);
    p->x_ptr = x;
    p->scale_ptr = scale;
    p->bias_ptr = bias;
    p->out_ptr = y;
    p->save_mean_ptr = saveMean;
    p->save_inv_std_ptr = saveInvStd;
    return UDNN_STATUS_SUCCESS;
}

/* The pointers and descriptors every forward call needs. */
static udnnStatus_t check_forward_args(const char *fn, const udnnTensorDescriptor_t xDesc,
                                       const void *x, const udnnTensorDescriptor_t scaleBiasDesc,
                                       const void *scale, const udnnTensorDescriptor_t yDesc,
                                       const void *y, const udnnTensorDescriptor_t statsDesc,
                                       const void *saveMean, const void *saveInvStd)
{
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_tensor(fn, "scaleBiasDesc", scaleBiasDesc));
    UDNN_TRY(udnn_check_ptr(fn, "scale", scale));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    return check_stats_desc(fn, statsDesc, saveMean, "saveMean", saveInvStd, "saveInvStd");
}

udnnStatus_t udnnNormForward(udnnHandle_t handle, udnnNormMode_t mode, int normalizedDims,
                             double epsilon, const udnnTensorDescriptor_t xDesc, const void *x,
                             const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                             const void *bias, const udnnTensorDescriptor_t yDesc, void *y,
                             const udnnTensorDescriptor_t statsDesc, void *saveMean,
                             void *saveInvStd)
{
    static const char fn[] = "udnnNormForward";
    char xd[UDNN_STR_DESC], sd[UDNN_STR_DESC], yd[UDNN_STR_DESC], td[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, mode=%d, normalizedDims=%d, epsilon=%g, xDesc=%s, x=%p, "
                      "scaleBiasDesc=%s, scale=%p, bias=%p, yDesc=%s, y=%p, statsDesc=%s, "
                      "saveMean=%p, saveInvStd=%p)",
                      fn, (void *)handle, (int)mode, normalizedDims, epsilon,
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_tensor_str(scaleBiasDesc, sd, sizeof sd), scale, bias,
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(statsDesc, td, sizeof td), saveMean, saveInvStd);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_mode(fn, mode));
    UDNN_TRY(check_forward_args(fn, xDesc, x, scaleBiasDesc, scale, yDesc, y, statsDesc,
                                saveMean, saveInvStd));
    UDNN_TRY(check_norm_x(fn, xDesc, normalizedDims));
    side_shapes shapes;
    norm_shapes(xDesc, normalizedDims, &shapes);

    udnn_norm_problem p = {0};
    UDNN_TRY(forward_problem(fn, epsilon, xDesc, x, scaleBiasDesc, scale, bias, yDesc, y,
                             statsDesc, saveMean, saveInvStd, &shapes, &p));
    p.mode = mode;
    p.norm_dims = normalizedDims;
    /* RMS has no bias term: the backend never sees one */
    if (mode == UDNN_NORM_RMS) p.bias_ptr = NULL;
    return udnn_dispatch(handle, fn, UDNN_OP_NORM_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnGroupNormForward(udnnHandle_t handle, int groups, double epsilon,
                                  const udnnTensorDescriptor_t xDesc, const void *x,
                                  const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                                  const void *bias, const udnnTensorDescriptor_t yDesc, void *y,
                                  const udnnTensorDescriptor_t statsDesc, void *saveMean,
                                  void *saveInvStd)
{
    static const char fn[] = "udnnGroupNormForward";
    char xd[UDNN_STR_DESC], sd[UDNN_STR_DESC], yd[UDNN_STR_DESC], td[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, groups=%d, epsilon=%g, xDesc=%s, x=%p, scaleBiasDesc=%s, "
                      "scale=%p, bias=%p, yDesc=%s, y=%p, statsDesc=%s, saveMean=%p, "
                      "saveInvStd=%p)",
                      fn, (void *)handle, groups, epsilon, udnn_tensor_str(xDesc, xd, sizeof xd),
                      x, udnn_tensor_str(scaleBiasDesc, sd, sizeof sd), scale, bias,
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(statsDesc, td, sizeof td), saveMean, saveInvStd);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_forward_args(fn, xDesc, x, scaleBiasDesc, scale, yDesc, y, statsDesc,
                                saveMean, saveInvStd));
    UDNN_TRY(check_group_x(fn, xDesc, groups));
    side_shapes shapes;
    group_shapes(xDesc, groups, &shapes);

    udnn_norm_problem p = {0};
    UDNN_TRY(forward_problem(fn, epsilon, xDesc, x, scaleBiasDesc, scale, bias, yDesc, y,
                             statsDesc, saveMean, saveInvStd, &shapes, &p));
    /* group norm is layer norm over each group */
    p.mode = UDNN_NORM_LAYER;
    p.groups = groups;
    return udnn_dispatch(handle, fn, UDNN_OP_GROUPNORM_FWD, -1, &p, NULL, 0);
}

/* ---- backward ------------------------------------------------------------------ */

/* The pointers and descriptors every backward call needs; savedMean only
 * when the mode subtracts a mean. */
static udnnStatus_t check_backward_args(const char *fn, int needs_mean,
                                        const udnnTensorDescriptor_t xDesc, const void *x,
                                        const udnnTensorDescriptor_t dyDesc, const void *dy,
                                        const udnnTensorDescriptor_t scaleBiasDesc,
                                        const void *scale,
                                        const udnnTensorDescriptor_t statsDesc,
                                        const void *savedMean, const void *savedInvStd,
                                        const udnnTensorDescriptor_t dxDesc, const void *dx,
                                        const void *dScale)
{
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_tensor(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_tensor(fn, "scaleBiasDesc", scaleBiasDesc));
    UDNN_TRY(udnn_check_ptr(fn, "scale", scale));
    UDNN_TRY(udnn_check_tensor(fn, "statsDesc", statsDesc));
    /* no epsilon here: the statistics cannot be recomputed */
    if (needs_mean) UDNN_TRY(udnn_check_ptr(fn, "savedMean", savedMean));
    UDNN_TRY(udnn_check_ptr(fn, "savedInvStd", savedInvStd));
    UDNN_TRY(udnn_check_tensor(fn, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    return udnn_check_ptr(fn, "dScale", dScale);
}

static udnnStatus_t backward_problem(const char *fn, const udnnTensorDescriptor_t xDesc,
                                     const void *x, const udnnTensorDescriptor_t dyDesc,
                                     const void *dy, const udnnTensorDescriptor_t scaleBiasDesc,
                                     const void *scale, const udnnTensorDescriptor_t statsDesc,
                                     const void *savedMean, const void *savedInvStd,
                                     const udnnTensorDescriptor_t dxDesc, void *dx,
                                     void *dScale, void *dBias, const side_shapes *shapes,
                                     udnn_norm_problem *p)
{
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "dy", "dyDesc", dyDesc, dy));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "x", "xDesc", xDesc, x));
    UDNN_TRY(check_sides(fn, xDesc, scaleBiasDesc, statsDesc, shapes));

    udnn_tensor_from_desc(xDesc, &p->x);
    udnn_tensor_from_desc(dyDesc, &p->dy);
    udnn_tensor_from_desc(dxDesc, &p->dx);
    udnn_tensor_from_desc(scaleBiasDesc, &p->scale);
    udnn_tensor_from_desc(statsDesc, &p->stats);
    p->x_ptr = x;
    p->dy_ptr = dy;
    p->scale_ptr = scale;
    p->saved_mean_ptr = savedMean;
    p->saved_inv_std_ptr = savedInvStd;
    p->out_ptr = dx;
    p->dscale_ptr = dScale;
    p->dbias_ptr = dBias;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnNormBackward(udnnHandle_t handle, udnnNormMode_t mode, int normalizedDims,
                              const udnnTensorDescriptor_t xDesc, const void *x,
                              const udnnTensorDescriptor_t dyDesc, const void *dy,
                              const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                              const udnnTensorDescriptor_t statsDesc, const void *savedMean,
                              const void *savedInvStd, const udnnTensorDescriptor_t dxDesc,
                              void *dx, void *dScale, void *dBias)
{
    static const char fn[] = "udnnNormBackward";
    char xd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], sd[UDNN_STR_DESC], td[UDNN_STR_DESC],
        dxd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, mode=%d, normalizedDims=%d, xDesc=%s, x=%p, dyDesc=%s, "
                      "dy=%p, scaleBiasDesc=%s, scale=%p, statsDesc=%s, savedMean=%p, "
                      "savedInvStd=%p, dxDesc=%s, dx=%p, dScale=%p, dBias=%p)",
                      fn, (void *)handle, (int)mode, normalizedDims,
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(scaleBiasDesc, sd, sizeof sd), scale,
                      udnn_tensor_str(statsDesc, td, sizeof td), savedMean, savedInvStd,
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx, dScale, dBias);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_mode(fn, mode));
    UDNN_TRY(check_backward_args(fn, mode == UDNN_NORM_LAYER, xDesc, x, dyDesc, dy,
                                 scaleBiasDesc, scale, statsDesc, savedMean, savedInvStd,
                                 dxDesc, dx, dScale));
    UDNN_TRY(check_norm_x(fn, xDesc, normalizedDims));
    side_shapes shapes;
    norm_shapes(xDesc, normalizedDims, &shapes);

    udnn_norm_problem p = {0};
    UDNN_TRY(backward_problem(fn, xDesc, x, dyDesc, dy, scaleBiasDesc, scale, statsDesc,
                              savedMean, savedInvStd, dxDesc, dx, dScale, dBias, &shapes, &p));
    p.mode = mode;
    p.norm_dims = normalizedDims;
    /* RMS has neither a mean nor a bias: dBias is left as it is */
    if (mode == UDNN_NORM_RMS) {
        p.saved_mean_ptr = NULL;
        p.dbias_ptr = NULL;
    }
    return udnn_dispatch(handle, fn, UDNN_OP_NORM_BWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnGroupNormBackward(udnnHandle_t handle, int groups,
                                   const udnnTensorDescriptor_t xDesc, const void *x,
                                   const udnnTensorDescriptor_t dyDesc, const void *dy,
                                   const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                                   const udnnTensorDescriptor_t statsDesc, const void *savedMean,
                                   const void *savedInvStd, const udnnTensorDescriptor_t dxDesc,
                                   void *dx, void *dScale, void *dBias)
{
    static const char fn[] = "udnnGroupNormBackward";
    char xd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], sd[UDNN_STR_DESC], td[UDNN_STR_DESC],
        dxd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, groups=%d, xDesc=%s, x=%p, dyDesc=%s, dy=%p, "
                      "scaleBiasDesc=%s, scale=%p, statsDesc=%s, savedMean=%p, "
                      "savedInvStd=%p, dxDesc=%s, dx=%p, dScale=%p, dBias=%p)",
                      fn, (void *)handle, groups, udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(scaleBiasDesc, sd, sizeof sd), scale,
                      udnn_tensor_str(statsDesc, td, sizeof td), savedMean, savedInvStd,
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx, dScale, dBias);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_backward_args(fn, 1, xDesc, x, dyDesc, dy, scaleBiasDesc, scale, statsDesc,
                                 savedMean, savedInvStd, dxDesc, dx, dScale));
    UDNN_TRY(check_group_x(fn, xDesc, groups));
    side_shapes shapes;
    group_shapes(xDesc, groups, &shapes);

    udnn_norm_problem p = {0};
    UDNN_TRY(backward_problem(fn, xDesc, x, dyDesc, dy, scaleBiasDesc, scale, statsDesc,
                              savedMean, savedInvStd, dxDesc, dx, dScale, dBias, &shapes, &p));
    p.mode = UDNN_NORM_LAYER;
    p.groups = groups;
    return udnn_dispatch(handle, fn, UDNN_OP_GROUPNORM_BWD, -1, &p, NULL, 0);
}
