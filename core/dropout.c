/* dropout.c - placeholder until the CPU reference, part 2, lands here.
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
