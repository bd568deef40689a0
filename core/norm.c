/* norm.c - placeholder until the CPU reference, part 2, lands here.
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
