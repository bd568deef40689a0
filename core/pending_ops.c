/* pending_ops.c - v1 functions whose CPU reference arrives later (part 2).
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

udnnStatus_t udnnNormForward(udnnHandle_t handle, udnnNormMode_t mode, int normalizedDims,
                             double epsilon, const udnnTensorDescriptor_t xDesc, const void *x,
                             const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                             const void *bias, const udnnTensorDescriptor_t yDesc, void *y,
                             const udnnTensorDescriptor_t statsDesc, void *saveMean,
                             void *saveInvStd)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnNormBackward(udnnHandle_t handle, udnnNormMode_t mode, int normalizedDims,
                              const udnnTensorDescriptor_t xDesc, const void *x,
                              const udnnTensorDescriptor_t dyDesc, const void *dy,
                              const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                              const udnnTensorDescriptor_t statsDesc, const void *savedMean,
                              const void *savedInvStd, const udnnTensorDescriptor_t dxDesc,
                              void *dx, void *dScale, void *dBias)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnGroupNormForward(udnnHandle_t handle, int groups, double epsilon,
                                  const udnnTensorDescriptor_t xDesc, const void *x,
                                  const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                                  const void *bias, const udnnTensorDescriptor_t yDesc, void *y,
                                  const udnnTensorDescriptor_t statsDesc, void *saveMean,
                                  void *saveInvStd)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnGroupNormBackward(udnnHandle_t handle, int groups,
                                   const udnnTensorDescriptor_t xDesc, const void *x,
                                   const udnnTensorDescriptor_t dyDesc, const void *dy,
                                   const udnnTensorDescriptor_t scaleBiasDesc, const void *scale,
                                   const udnnTensorDescriptor_t statsDesc, const void *savedMean,
                                   const void *savedInvStd, const udnnTensorDescriptor_t dxDesc,
                                   void *dx, void *dScale, void *dBias)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnLRNCrossChannelForward(udnnHandle_t handle, udnnLRNDescriptor_t normDesc,
                                        udnnLRNMode_t lrnMode, const void *alpha,
                                        const udnnTensorDescriptor_t xDesc, const void *x,
                                        const void *beta, const udnnTensorDescriptor_t yDesc,
                                        void *y)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnLRNCrossChannelBackward(udnnHandle_t handle, udnnLRNDescriptor_t normDesc,
                                         udnnLRNMode_t lrnMode, const void *alpha,
                                         const udnnTensorDescriptor_t yDesc, const void *y,
                                         const udnnTensorDescriptor_t dyDesc, const void *dy,
                                         const udnnTensorDescriptor_t xDesc, const void *x,
                                         const void *beta, const udnnTensorDescriptor_t dxDesc,
                                         void *dx)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnDropoutForward(udnnHandle_t handle, const udnnDropoutDescriptor_t dropoutDesc,
                                const udnnTensorDescriptor_t xdesc, const void *x,
                                const udnnTensorDescriptor_t ydesc, void *y, void *reserveSpace,
                                size_t reserveSpaceSizeInBytes)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnDropoutBackward(udnnHandle_t handle, const udnnDropoutDescriptor_t dropoutDesc,
                                 const udnnTensorDescriptor_t dydesc, const void *dy,
                                 const udnnTensorDescriptor_t dxdesc, void *dx,
                                 void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnGetReductionIndicesSize(udnnHandle_t handle,
                                         const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                         const udnnTensorDescriptor_t aDesc,
                                         const udnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnGetReductionWorkspaceSize(udnnHandle_t handle,
                                           const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                           const udnnTensorDescriptor_t aDesc,
                                           const udnnTensorDescriptor_t cDesc,
                                           size_t *sizeInBytes)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnReduceTensor(udnnHandle_t handle,
                              const udnnReduceTensorDescriptor_t reduceTensorDesc, void *indices,
                              size_t indicesSizeInBytes, void *workspace,
                              size_t workspaceSizeInBytes, const void *alpha,
                              const udnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                              const udnnTensorDescriptor_t cDesc, void *C)
{
    return pending(__func__, handle);
}

udnnStatus_t udnnMatMul(udnnHandle_t handle, int transA, int transB, const void *alpha,
                        const udnnTensorDescriptor_t aDesc, const void *A,
                        const udnnTensorDescriptor_t bDesc, const void *B, const void *beta,
                        const udnnTensorDescriptor_t cDesc, void *C)
{
    return pending(__func__, handle);
}
