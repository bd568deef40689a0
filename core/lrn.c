/* lrn.c - LRNCrossChannelForward and LRNCrossChannelBackward: validation
 * and the normalized problem. The descriptor lives in other_desc.c.
 *
 * Tensors are 4-D or 5-D, as cuDNN takes them for the cross-channel mode,
 * and reach the backend with their rank and strides as they are. An output
 * may share its buffer with an input only element for element (one type,
 * dims and strides): the kernels read every input of a channel column before
 * they write that column's outputs. */
#include <stdio.h>

#include "core/core.h"

/* "{n, alpha, beta, k}" of a descriptor, for API logs. */
static const char *lrn_str(const udnnLRNDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) snprintf(buf, n, "NULL");
    else
        snprintf(buf, n, "{lrnN=%u, lrnAlpha=%g, lrnBeta=%g, lrnK=%g}", d->n, d->alpha, d->beta,
                 d->k);
    return buf;
}

static udnnStatus_t check_mode(const char *fn, udnnLRNMode_t lrnMode)
{
    if (lrnMode != UDNN_LRN_CROSS_CHANNEL_DIM1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: lrnMode %d is not UDNN_LRN_CROSS_CHANNEL_DIM1, the only mode", fn,
                         (int)lrnMode);
    return UDNN_STATUS_SUCCESS;
}

static void set_lrn_params(udnn_lrn_problem *p, const udnnLRNDescriptor_t d)
{
    p->n = d->n;
    p->lrn_alpha = d->alpha;
    p->lrn_beta = d->beta;
    p->lrn_k = d->k;
}

udnnStatus_t udnnLRNCrossChannelForward(udnnHandle_t handle, udnnLRNDescriptor_t normDesc,
                                        udnnLRNMode_t lrnMode, const void *alpha,
                                        const udnnTensorDescriptor_t xDesc, const void *x,
                                        const void *beta, const udnnTensorDescriptor_t yDesc,
                                        void *y)
{
    static const char fn[] = "udnnLRNCrossChannelForward";
    char nd[UDNN_STR_DESC], xd[UDNN_STR_DESC], yd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, normDesc=%s, lrnMode=%d, alpha=%s, xDesc=%s, x=%p, "
                      "beta=%s, yDesc=%s, y=%p)",
                      fn, (void *)handle, lrn_str(normDesc, nd, sizeof nd), (int)lrnMode,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "normDesc", normDesc));
    UDNN_TRY(check_mode(fn, lrnMode));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", xDesc, 4, 5));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));

    udnn_lrn_problem p = {0};
    set_lrn_params(&p, normDesc);
    udnn_tensor_from_desc(xDesc, &p.x);
    udnn_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_LRN_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnLRNCrossChannelBackward(udnnHandle_t handle, udnnLRNDescriptor_t normDesc,
                                         udnnLRNMode_t lrnMode, const void *alpha,
                                         const udnnTensorDescriptor_t yDesc, const void *y,
                                         const udnnTensorDescriptor_t dyDesc, const void *dy,
                                         const udnnTensorDescriptor_t xDesc, const void *x,
                                         const void *beta, const udnnTensorDescriptor_t dxDesc,
                                         void *dx)
{
    static const char fn[] = "udnnLRNCrossChannelBackward";
    char nd[UDNN_STR_DESC], yd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], xd[UDNN_STR_DESC],
        dxd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, normDesc=%s, lrnMode=%d, alpha=%s, yDesc=%s, y=%p, "
                      "dyDesc=%s, dy=%p, xDesc=%s, x=%p, beta=%s, dxDesc=%s, dx=%p)",
                      fn, (void *)handle, lrn_str(normDesc, nd, sizeof nd), (int)lrnMode,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "normDesc", normDesc));
    UDNN_TRY(check_mode(fn, lrnMode));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_tensor(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", xDesc, 4, 5));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "dy", "dyDesc", dyDesc, dy));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "x", "xDesc", xDesc, x));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "y", "yDesc", yDesc, y));

    udnn_lrn_problem p = {0};
    set_lrn_params(&p, normDesc);
    udnn_tensor_from_desc(xDesc, &p.x);
    udnn_tensor_from_desc(yDesc, &p.y);
    udnn_tensor_from_desc(dyDesc, &p.dy);
    udnn_tensor_from_desc(dxDesc, &p.dx);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.y_ptr = y;
    p.dy_ptr = dy;
    p.out_ptr = dx;
    return udnn_dispatch(handle, fn, UDNN_OP_LRN_BWD, -1, &p, NULL, 0);
}
