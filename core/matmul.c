/* matmul.c - placeholder until the CPU reference, part 2, lands here.
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

udnnStatus_t udnnMatMul(udnnHandle_t handle, int transA, int transB, const void *alpha,
                        const udnnTensorDescriptor_t aDesc, const void *A,
                        const udnnTensorDescriptor_t bDesc, const void *B, const void *beta,
                        const udnnTensorDescriptor_t cDesc, void *C)
{
    return pending(__func__, handle);
}
