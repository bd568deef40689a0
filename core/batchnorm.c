/* batchnorm.c - placeholder until the CPU reference, part 2, lands here.
 * Each checks its handle and answers NOT_SUPPORTED, so that the library
 * links and a caller learns plainly what is missing. */
#include "core/core.h"

/* The bodies ignore every argument but the handle until they are written. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static udnnStatus_t pending(const char *fn, udnnHandle_t handle)
{
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    UDNN_TRY(udnn_check_handle(fn, handle));
    return udnn_fail(UDNN_STATUS_NOT_SUPPORTED,
                     "%s: not implemented yet in udnn 0.1; it arrives with the CPU reference, "
                     "part 2",
                     fn);
}

udnnStatus_t udnnBatchNormalizationForwardTraining(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, double exponentialAverageFactor, void *resultRunningMean,
    void *resultRunningVariance, double epsilon, void *resultSaveMean,
    void *resultSaveInvVariance)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnBatchNormalizationForwardInference(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alpha, const void *beta,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t yDesc,
    void *y, const udnnTensorDescriptor_t bnScaleBiasMeanVarDesc, const void *bnScale,
    const void *bnBias, const void *estimatedMean, const void *estimatedVariance,
    double epsilon)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnBatchNormalizationBackward(
    udnnHandle_t handle, udnnBatchNormMode_t mode, const void *alphaDataDiff,
    const void *betaDataDiff, const void *alphaParamDiff, const void *betaParamDiff,
    const udnnTensorDescriptor_t xDesc, const void *x, const udnnTensorDescriptor_t dyDesc,
    const void *dy, const udnnTensorDescriptor_t dxDesc, void *dx,
    const udnnTensorDescriptor_t dBnScaleBiasDesc, const void *bnScale, void *dBnScaleResult,
    void *dBnBiasResult, double epsilon, const void *savedMean, const void *savedInvVariance)
{
    return pending(__func__, handle);
}
