/* batchnorm.c - BatchNormalizationForwardTraining, ForwardInference and
 * Backward: validation and the normalized problem.
 *
 * x is 4-D or 5-D; y (dy, dx) has its dims and type and may share x's (dy's)
 * buffer only with the same strides. The statistics descriptor must be what
 * udnnDeriveBNTensorDescriptor gives for x and the mode, in any strides; it
 * describes scale, bias and every mean and variance buffer. */
#include <math.h>
#include <stdio.h>

#include "core/core.h"

/* ---- logging -------------------------------------------------------------------- */

static const char *mode_name(udnnBatchNormMode_t mode)
{
    switch (mode) {
    case UDNN_BATCHNORM_PER_ACTIVATION: return "PER_ACTIVATION";
    case UDNN_BATCHNORM_SPATIAL: return "SPATIAL";
    case UDNN_BATCHNORM_SPATIAL_PERSISTENT: return "SPATIAL_PERSISTENT";
    }
    return "?";
}

/* ---- validation ----------------------------------------------------------------- */

static udnnStatus_t check_mode(const char *fn, udnnBatchNormMode_t mode)
{
    if (mode != UDNN_BATCHNORM_PER_ACTIVATION && mode != UDNN_BATCHNORM_SPATIAL &&
        mode != UDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnBatchNormMode_t", fn,
                         (int)mode);
    return UDNN_STATUS_SUCCESS;
}

/* x is data BN takes; other (y, dy or dx) has its type and dims. */
static udnnStatus_t check_data(const char *fn, const udnnTensorDescriptor_t x,
                               const char *other_arg, const udnnTensorDescriptor_t other)
{
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", x));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", x, 4, 5));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", x, other_arg, other));
    return udnn_check_same_dims(fn, "xDesc", x, other_arg, other);
}

/* The statistics descriptor is what udnnDeriveBNTensorDescriptor gives for
 * x and mode: 1 x C x 1... or 1 x C x spatial..., FLOAT for half-width data
 * and x's type otherwise. Strides are free. */
static udnnStatus_t check_param_desc(const char *fn, const char *arg,
                                     const udnnTensorDescriptor_t param,
                                     const udnnTensorDescriptor_t x, udnnBatchNormMode_t mode)
{
    if (param->nb_dims != x->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d dimensions, xDesc has %d; it must be what "
                         "udnnDeriveBNTensorDescriptor gives",
                         fn, arg, param->nb_dims, x->nb_dims);
    const udnnDataType_t want_type =
        x->dtype == UDNN_DATA_HALF || x->dtype == UDNN_DATA_BFLOAT16 ? UDNN_DATA_FLOAT : x->dtype;
    if (param->dtype != want_type)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has data type %s; %s data keeps its statistics in %s", fn, arg,
                         udnn_dtype_name(param->dtype), udnn_dtype_name(x->dtype),
                         udnn_dtype_name(want_type));
    const int per_activation = mode == UDNN_BATCHNORM_PER_ACTIVATION;
    for (int i = 0; i < x->nb_dims; i++) {
        int want = i == 0 ? 1 : i == 1 || per_activation ? x->dims[i] : 1;
        if (param->dims[i] != want)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d; mode %s with this xDesc needs "
                             "%d, as udnnDeriveBNTensorDescriptor gives",
                             fn, arg, i, param->dims[i], mode_name(mode), want);
    }
    return UDNN_STATUS_SUCCESS;
}

/* The statistics outputs of one call must not share a buffer: each would
 * overwrite another. NULL ones do not count. */
static udnnStatus_t check_distinct(const char *fn, int n, const char *const args[],
                                   void *const ptrs[])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (ptrs[i] != NULL && ptrs[i] == ptrs[j])
                return udnn_fail(UDNN_STATUS_BAD_PARAM,
                                 "%s: %s is the same buffer as %s; each output needs its own",
                                 fn, args[i], args[j]);
    return UDNN_STATUS_SUCCESS;
}

/* Values that make up one statistic: n and the spatial dims for the
 * spatial modes, n alone per activation. */
static int64_t reduction_size(const udnnTensorDescriptor_t x, udnnBatchNormMode_t mode)
{
    int64_t m = x->dims[0];
    if (mode != UDNN_BATCHNORM_PER_ACTIVATION)
        for (int i = 2; i < x->nb_dims; i++) m *= x->dims[i];
    return m;
}

static void set_problem_tensors(udnn_bn_problem *p, udnnBatchNormMode_t mode,
                                const udnnTensorDescriptor_t x,
                                const udnnTensorDescriptor_t param)
{
    p->mode = mode;
    udnn_tensor_from_desc(x, &p->x);
    udnn_tensor_from_desc(param, &p->param);
}

/* ---- the ops -------------------------------------------------------------------- */

udnnStatus_t udnnBatchNormalizationForwardTraining(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance)
{
    static const char fn[] = "udnnBatchNormalizationForwardTraining";
    char xd[UDNN_STR_DESC], yd[UDNN_STR_DESC], pd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL(
        "%s(handle=%p, mode=%d, alpha=%s, beta=%s, xDesc=%s, x=%p, yDesc=%s, y=%p, "
        "bnScaleBiasMeanVarDesc=%s, bnScale=%p, bnBias=%p, exponentialAverageFactor=%g, "
        "resultRunningMean=%p, resultRunningVariance=%p, epsilon=%g, resultSaveMean=%p, "
        "resultSaveInvVariance=%p)",
        fn, (void *)handle, (int)mode,
        udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
        udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
        udnn_tensor_str(xDesc, xd, sizeof xd), x, udnn_tensor_str(yDesc, yd, sizeof yd), y,
        udnn_tensor_str(bnScaleBiasMeanVarDesc, pd, sizeof pd), bnScale, bnBias,
        exponentialAverageFactor, resultRunningMean, resultRunningVariance, epsilon,
        resultSaveMean, resultSaveInvVariance);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_mode(fn, mode));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_tensor(fn, "bnScaleBiasMeanVarDesc", bnScaleBiasMeanVarDesc));
    UDNN_TRY(udnn_check_ptr(fn, "bnScale", bnScale));
    UDNN_TRY(udnn_check_ptr(fn, "bnBias", bnBias));
    UDNN_TRY(check_data(fn, xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));
    UDNN_TRY(check_param_desc(fn, "bnScaleBiasMeanVarDesc", bnScaleBiasMeanVarDesc, xDesc, mode));
    UDNN_TRY(udnn_check_epsilon(fn, epsilon, UDNN_BN_MIN_EPSILON));
    if (!(exponentialAverageFactor >= 0.0 && exponentialAverageFactor <= 1.0))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: exponentialAverageFactor is %g; it must be in [0, 1]", fn,
                         exponentialAverageFactor);
    UDNN_TRY(udnn_check_pair(fn, "resultRunningMean", resultRunningMean,
                                   "resultRunningVariance", resultRunningVariance));
    UDNN_TRY(udnn_check_pair(fn, "resultSaveMean", resultSaveMean, "resultSaveInvVariance",
                                   resultSaveInvVariance));
    static const char *const out_args[] = {"resultRunningMean", "resultRunningVariance",
                                           "resultSaveMean", "resultSaveInvVariance"};
    void *const outs[] = {resultRunningMean, resultRunningVariance, resultSaveMean,
                          resultSaveInvVariance};
    UDNN_TRY(check_distinct(fn, 4, out_args, outs));
    const int64_t m = reduction_size(xDesc, mode);
    if (m < 2)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: xDesc gives %lld value per statistic in mode %s; training needs "
                         "at least 2 (the unbiased variance divides by m - 1)",
                         fn, (long long)m, mode_name(mode));

    udnn_bn_problem p = {0};
    set_problem_tensors(&p, mode, xDesc, bnScaleBiasMeanVarDesc);
    udnn_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.epsilon = epsilon;
    p.exp_avg_factor = exponentialAverageFactor;
    p.x_ptr = x;
    p.scale_ptr = bnScale;
    p.bias_ptr = bnBias;
    p.running_mean_ptr = resultRunningMean;
    p.running_var_ptr = resultRunningVariance;
    p.save_mean_ptr = resultSaveMean;
    p.save_inv_std_ptr = resultSaveInvVariance;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_BN_FWD_TRAIN, -1, &p, NULL, 0);
}

udnnStatus_t udnnBatchNormalizationForwardInference(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance,
    double epsilon)
{
    static const char fn[] = "udnnBatchNormalizationForwardInference";
    char xd[UDNN_STR_DESC], yd[UDNN_STR_DESC], pd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, mode=%d, alpha=%s, beta=%s, xDesc=%s, x=%p, yDesc=%s, "
                      "y=%p, bnScaleBiasMeanVarDesc=%s, bnScale=%p, bnBias=%p, "
                      "estimatedMean=%p, estimatedVariance=%p, epsilon=%g)",
                      fn, (void *)handle, (int)mode,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(bnScaleBiasMeanVarDesc, pd, sizeof pd), bnScale, bnBias,
                      estimatedMean, estimatedVariance, epsilon);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_mode(fn, mode));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_tensor(fn, "bnScaleBiasMeanVarDesc", bnScaleBiasMeanVarDesc));
    UDNN_TRY(udnn_check_ptr(fn, "bnScale", bnScale));
    UDNN_TRY(udnn_check_ptr(fn, "bnBias", bnBias));
    UDNN_TRY(udnn_check_ptr(fn, "estimatedMean", estimatedMean));
    UDNN_TRY(udnn_check_ptr(fn, "estimatedVariance", estimatedVariance));
    UDNN_TRY(check_data(fn, xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));
    UDNN_TRY(check_param_desc(fn, "bnScaleBiasMeanVarDesc", bnScaleBiasMeanVarDesc, xDesc, mode));
    UDNN_TRY(udnn_check_epsilon(fn, epsilon, UDNN_BN_MIN_EPSILON));

    udnn_bn_problem p = {0};
    set_problem_tensors(&p, mode, xDesc, bnScaleBiasMeanVarDesc);
    udnn_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.epsilon = epsilon;
    p.x_ptr = x;
    p.scale_ptr = bnScale;
    p.bias_ptr = bnBias;
    p.est_mean_ptr = estimatedMean;
    p.est_var_ptr = estimatedVariance;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_BN_FWD_INFER, -1, &p, NULL, 0);
}

udnnStatus_t udnnBatchNormalizationBackward(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t dyDesc,
    const void *dy, const udnnTensorDescriptor_t dxDesc, void *dx,
    const udnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult,
    void *dBnBiasResult, double epsilon, const void *savedMean, const void *savedInvVariance)
{
    static const char fn[] = "udnnBatchNormalizationBackward";
    char xd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], dxd[UDNN_STR_DESC], pd[UDNN_STR_DESC];
    char ads[UDNN_STR_SCALAR], bds[UDNN_STR_SCALAR], aps[UDNN_STR_SCALAR], bps[UDNN_STR_SCALAR];
    const udnnDataType_t st = udnn_log_scalar_type(xDesc);
    UDNN_LOG_API_CALL(
        "%s(handle=%p, mode=%d, alphaDataDiff=%s, betaDataDiff=%s, alphaParamDiff=%s, "
        "betaParamDiff=%s, xDesc=%s, x=%p, dyDesc=%s, dy=%p, dxDesc=%s, dx=%p, "
        "dBnScaleBiasDesc=%s, bnScale=%p, dBnScaleResult=%p, dBnBiasResult=%p, epsilon=%g, "
        "savedMean=%p, savedInvVariance=%p)",
        fn, (void *)handle, (int)mode, udnn_scalar_str(alphaDataDiff, st, ads, sizeof ads),
        udnn_scalar_str(betaDataDiff, st, bds, sizeof bds),
        udnn_scalar_str(alphaParamDiff, st, aps, sizeof aps),
        udnn_scalar_str(betaParamDiff, st, bps, sizeof bps),
        udnn_tensor_str(xDesc, xd, sizeof xd), x, udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
        udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx,
        udnn_tensor_str(dBnScaleBiasDesc, pd, sizeof pd), bnScale, dBnScaleResult,
        dBnBiasResult, epsilon, savedMean, savedInvVariance);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_mode(fn, mode));
    UDNN_TRY(udnn_check_ptr(fn, "alphaDataDiff", alphaDataDiff));
    UDNN_TRY(udnn_check_ptr(fn, "betaDataDiff", betaDataDiff));
    UDNN_TRY(udnn_check_ptr(fn, "alphaParamDiff", alphaParamDiff));
    UDNN_TRY(udnn_check_ptr(fn, "betaParamDiff", betaParamDiff));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_tensor(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_tensor(fn, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    UDNN_TRY(udnn_check_tensor(fn, "dBnScaleBiasDesc", dBnScaleBiasDesc));
    UDNN_TRY(udnn_check_ptr(fn, "bnScale", bnScale));
    UDNN_TRY(udnn_check_ptr(fn, "dBnScaleResult", dBnScaleResult));
    UDNN_TRY(udnn_check_ptr(fn, "dBnBiasResult", dBnBiasResult));
    UDNN_TRY(check_data(fn, xDesc, "dyDesc", dyDesc));
    UDNN_TRY(check_data(fn, xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "dy", "dyDesc", dyDesc, dy));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "x", "xDesc", xDesc, x));
    UDNN_TRY(check_param_desc(fn, "dBnScaleBiasDesc", dBnScaleBiasDesc, xDesc, mode));
    UDNN_TRY(udnn_check_epsilon(fn, epsilon, UDNN_BN_MIN_EPSILON));
    UDNN_TRY(udnn_check_pair(fn, "savedMean", savedMean, "savedInvVariance",
                                   savedInvVariance));
    static const char *const out_args[] = {"dBnScaleResult", "dBnBiasResult"};
    void *const outs[] = {dBnScaleResult, dBnBiasResult};
    UDNN_TRY(check_distinct(fn, 2, out_args, outs));

    udnn_bn_problem p = {0};
    set_problem_tensors(&p, mode, xDesc, dBnScaleBiasDesc);
    udnn_tensor_from_desc(dyDesc, &p.dy);
    udnn_tensor_from_desc(dxDesc, &p.dx);
    p.alpha = udnn_read_scalar(alphaDataDiff, xDesc->dtype);
    p.beta = udnn_read_scalar(betaDataDiff, xDesc->dtype);
    p.alpha_param = udnn_read_scalar(alphaParamDiff, xDesc->dtype);
    p.beta_param = udnn_read_scalar(betaParamDiff, xDesc->dtype);
    p.epsilon = epsilon;
    p.x_ptr = x;
    p.dy_ptr = dy;
    p.scale_ptr = bnScale;
    p.saved_mean_ptr = savedMean;
    p.saved_inv_std_ptr = savedInvVariance;
    p.out_ptr = dx;
    p.dscale_ptr = dBnScaleResult;
    p.dbias_ptr = dBnBiasResult;
    return udnn_dispatch(handle, fn, UDNN_OP_BN_BWD, -1, &p, NULL, 0);
}
