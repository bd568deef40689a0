/* reduce.c - placeholder until the CPU reference, part 2, lands here.
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
