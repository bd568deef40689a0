/* dropout.c - DropoutForward and DropoutBackward: validation and the
 * normalized problem. The descriptor, the states and the reserve-space size
 * live in other_desc.c; the mask's definition is udnn.h's contract.
 *
 * Decisions where cuDNN is silent:
 *  - x and y (dy and dx) have rank 3 to UDNN_DIM_MAX, the ranks a cuDNN
 *    tensor descriptor can have; 2-D serves only matmul (DESIGN.md).
 *  - The handle must be of the backend the descriptor's states were set on
 *    (the states are that backend's memory); it need not be the same handle.
 *  - An output may be its input's buffer only element for element. */
#include <stdio.h>

#include "core/core.h"

/* "{dropout, seed, states}" of a descriptor, for API logs. */
static const char *dropout_str(const udnnDropoutDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) snprintf(buf, n, "NULL");
    else if (!d->is_set) snprintf(buf, n, "unset");
    else
        snprintf(buf, n, "{dropout=%g, seed=%llu, states=%p}", (double)d->dropout, d->seed,
                 d->states);
    return buf;
}

/* The descriptor is set, on this handle's backend. */
static udnnStatus_t check_descriptor(const char *fn, udnnHandle_t handle,
                                     const udnnDropoutDescriptor_t d)
{
    UDNN_TRY(udnn_check_ptr(fn, "dropoutDesc", d));
    if (!d->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: dropoutDesc has not been set (udnnSetDropoutDescriptor)", fn);
    if (d->handle != handle && d->handle->backend != handle->backend)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: dropoutDesc was set on a handle of the %s backend, handle is of "
                         "the %s backend",
                         fn, d->handle->backend->name, handle->backend->name);
    /* the descriptor calls already refuse this; the kernel relies on it */
    if (d->states == NULL && d->dropout != 0.0f)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: dropoutDesc has no states but dropout %g; only dropout 0 goes "
                         "without states",
                         fn, (double)d->dropout);
    return UDNN_STATUS_SUCCESS;
}

/* The checks both directions share, on (in, out) = (x, y) or (dy, dx). */
static udnnStatus_t check_call(const char *fn, udnnHandle_t handle,
                               const udnnDropoutDescriptor_t dropoutDesc, const char *in_arg,
                               const char *in_desc_arg, const udnnTensorDescriptor_t in_desc,
                               const void *in, const char *out_arg, const char *out_desc_arg,
                               const udnnTensorDescriptor_t out_desc, const void *out,
                               const void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_descriptor(fn, handle, dropoutDesc));
    UDNN_TRY(udnn_check_tensor(fn, in_desc_arg, in_desc));
    UDNN_TRY(udnn_check_ptr(fn, in_arg, in));
    UDNN_TRY(udnn_check_tensor(fn, out_desc_arg, out_desc));
    UDNN_TRY(udnn_check_ptr(fn, out_arg, out));
    UDNN_TRY(udnn_check_ptr(fn, "reserveSpace", reserveSpace));
    UDNN_TRY(udnn_check_float_type(fn, in_desc_arg, in_desc));
    UDNN_TRY(udnn_check_rank(fn, in_desc_arg, in_desc, 3, UDNN_DIM_MAX));
    UDNN_TRY(udnn_check_same_type(fn, in_desc_arg, in_desc, out_desc_arg, out_desc));
    UDNN_TRY(udnn_check_same_dims(fn, in_desc_arg, in_desc, out_desc_arg, out_desc));
    UDNN_TRY(udnn_check_in_place(fn, out_arg, out_desc_arg, out_desc, out, in_arg, in_desc_arg,
                                 in_desc, in));
    size_t need = 0;
    UDNN_TRY(udnnDropoutGetReserveSpaceSize(in_desc, &need));
    if (reserveSpaceSizeInBytes < need)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reserveSpaceSizeInBytes is %zu; %s needs %zu "
                         "(udnnDropoutGetReserveSpaceSize)",
                         fn, reserveSpaceSizeInBytes, in_desc_arg, need);
    return UDNN_STATUS_SUCCESS;
}

static udnn_dropout_problem make_problem(const udnnDropoutDescriptor_t d,
                                         const udnnTensorDescriptor_t in_desc, const void *in,
                                         const udnnTensorDescriptor_t out_desc, void *out,
                                         void *reserveSpace)
{
    udnn_dropout_problem p = {0};
    p.p = d->dropout;
    udnn_tensor_from_desc(in_desc, &p.in);
    udnn_tensor_from_desc(out_desc, &p.out);
    p.in_ptr = in;
    p.out_ptr = out;
    p.states = d->states;
    p.reserve = reserveSpace;
    return p;
}

udnnStatus_t udnnDropoutForward(udnnHandle_t handle, const udnnDropoutDescriptor_t dropoutDesc,
                                const udnnTensorDescriptor_t xdesc, const void *x,
                                const udnnTensorDescriptor_t ydesc, void *y, void *reserveSpace,
                                size_t reserveSpaceSizeInBytes)
{
    static const char fn[] = "udnnDropoutForward";
    char dd[UDNN_STR_DESC], xd[UDNN_STR_DESC], yd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, dropoutDesc=%s, xdesc=%s, x=%p, ydesc=%s, y=%p, "
                      "reserveSpace=%p, reserveSpaceSizeInBytes=%zu)",
                      fn, (void *)handle, dropout_str(dropoutDesc, dd, sizeof dd),
                      udnn_tensor_str(xdesc, xd, sizeof xd), x,
                      udnn_tensor_str(ydesc, yd, sizeof yd), y, reserveSpace,
                      reserveSpaceSizeInBytes);
    UDNN_TRY(check_call(fn, handle, dropoutDesc, "x", "xdesc", xdesc, x, "y", "ydesc", ydesc, y,
                        reserveSpace, reserveSpaceSizeInBytes));
    udnn_dropout_problem p = make_problem(dropoutDesc, xdesc, x, ydesc, y, reserveSpace);
    return udnn_dispatch(handle, fn, UDNN_OP_DROPOUT_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnDropoutBackward(udnnHandle_t handle, const udnnDropoutDescriptor_t dropoutDesc,
                                 const udnnTensorDescriptor_t dydesc, const void *dy,
                                 const udnnTensorDescriptor_t dxdesc, void *dx,
                                 void *reserveSpace, size_t reserveSpaceSizeInBytes)
{
    static const char fn[] = "udnnDropoutBackward";
    char dd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], dxd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, dropoutDesc=%s, dydesc=%s, dy=%p, dxdesc=%s, dx=%p, "
                      "reserveSpace=%p, reserveSpaceSizeInBytes=%zu)",
                      fn, (void *)handle, dropout_str(dropoutDesc, dd, sizeof dd),
                      udnn_tensor_str(dydesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(dxdesc, dxd, sizeof dxd), dx, reserveSpace,
                      reserveSpaceSizeInBytes);
    UDNN_TRY(check_call(fn, handle, dropoutDesc, "dy", "dydesc", dydesc, dy, "dx", "dxdesc",
                        dxdesc, dx, reserveSpace, reserveSpaceSizeInBytes));
    udnn_dropout_problem p = make_problem(dropoutDesc, dydesc, dy, dxdesc, dx, reserveSpace);
    return udnn_dispatch(handle, fn, UDNN_OP_DROPOUT_BWD, -1, &p, NULL, 0);
}
