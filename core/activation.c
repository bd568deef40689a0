/* activation.c - the activation descriptor, ActivationForward and
 * ActivationBackward: validation and the normalized problem.
 *
 * coef: CLIPPED_RELU takes a clip >= 0 (+inf makes it RELU; 0 clips all to
 * 0); ELU and LEAKY_RELU take any finite coef; other modes ignore it.
 * swish_beta must be finite. An output may share its buffer with an input
 * (in place) only when both descriptors have the same strides. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

static int valid_mode(udnnActivationMode_t m)
{
    switch (m) {
    case UDNN_ACTIVATION_SIGMOID:
    case UDNN_ACTIVATION_RELU:
    case UDNN_ACTIVATION_TANH:
    case UDNN_ACTIVATION_CLIPPED_RELU:
    case UDNN_ACTIVATION_ELU:
    case UDNN_ACTIVATION_IDENTITY:
    case UDNN_ACTIVATION_SWISH:
    case UDNN_ACTIVATION_LEAKY_RELU:
    case UDNN_ACTIVATION_GELU:
    case UDNN_ACTIVATION_GELU_TANH:
    case UDNN_ACTIVATION_SOFTPLUS:
    case UDNN_ACTIVATION_MISH:
    case UDNN_ACTIVATION_HARDSWISH: return 1;
    }
    return 0;
}

static udnnStatus_t check_coef(const char *fn, udnnActivationMode_t mode, double coef)
{
    if (mode == UDNN_ACTIVATION_CLIPPED_RELU && !(coef >= 0.0))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: coef is %g; CLIPPED_RELU needs a clip >= 0", fn, coef);
    if ((mode == UDNN_ACTIVATION_ELU || mode == UDNN_ACTIVATION_LEAKY_RELU) && !isfinite(coef))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: coef is %g; %s needs a finite coef", fn,
                         coef, mode == UDNN_ACTIVATION_ELU ? "ELU" : "LEAKY_RELU");
    return UDNN_STATUS_SUCCESS;
}

/* "mode/nanOpt/coef/beta" of a descriptor, for API logs. */
static const char *act_str(const udnnActivationDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) snprintf(buf, n, "NULL");
    else
        snprintf(buf, n, "{mode=%d, nanOpt=%d, coef=%g, swishBeta=%g}", (int)d->params.mode,
                 (int)d->params.nan_opt, d->params.coef, d->params.swish_beta);
    return buf;
}



udnnStatus_t udnnCreateActivationDescriptor(udnnActivationDescriptor_t *activationDesc)
{
    static const char fn[] = "udnnCreateActivationDescriptor";
    UDNN_LOG_API_CALL("%s(activationDesc=%p)", fn, (void *)activationDesc);
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    *activationDesc = calloc(1, sizeof **activationDesc);
    if (*activationDesc == NULL)
        return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    (*activationDesc)->params.mode = UDNN_ACTIVATION_RELU;
    (*activationDesc)->params.nan_opt = UDNN_NOT_PROPAGATE_NAN;
    (*activationDesc)->params.coef = 0.0;
    (*activationDesc)->params.swish_beta = 1.0;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyActivationDescriptor(udnnActivationDescriptor_t activationDesc)
{
    static const char fn[] = "udnnDestroyActivationDescriptor";
    UDNN_LOG_API_CALL("%s(activationDesc=%p)", fn, (void *)activationDesc);
    free(activationDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetActivationDescriptor(udnnActivationDescriptor_t activationDesc,
                                         udnnActivationMode_t mode,
                                         udnnNanPropagation_t reluNanOpt, double coef)
{
    static const char fn[] = "udnnSetActivationDescriptor";
    UDNN_LOG_API_CALL("%s(activationDesc=%p, mode=%d, reluNanOpt=%d, coef=%g)", fn,
                      (void *)activationDesc, (int)mode, (int)reluNanOpt, coef);
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    if (!valid_mode(mode))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnActivationMode_t",
                         fn, (int)mode);
    if (reluNanOpt != UDNN_NOT_PROPAGATE_NAN && reluNanOpt != UDNN_PROPAGATE_NAN)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reluNanOpt %d is neither UDNN_NOT_PROPAGATE_NAN nor "
                         "UDNN_PROPAGATE_NAN",
                         fn, (int)reluNanOpt);
    UDNN_TRY(check_coef(fn, mode, coef));
    activationDesc->params.mode = mode;
    activationDesc->params.nan_opt = reluNanOpt;
    activationDesc->params.coef = coef;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetActivationDescriptor(const udnnActivationDescriptor_t activationDesc,
                                         udnnActivationMode_t *mode,
                                         udnnNanPropagation_t *reluNanOpt, double *coef)
{
    static const char fn[] = "udnnGetActivationDescriptor";
    UDNN_LOG_API_CALL("%s(activationDesc=%p, mode=%p, reluNanOpt=%p, coef=%p)",
                      fn, (void *)activationDesc, (void *)mode, (void *)reluNanOpt, (void *)coef);
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    /* as udnnGetTensor4dDescriptor, any output may be NULL */
    if (mode) *mode = activationDesc->params.mode;
    if (reluNanOpt) *reluNanOpt = activationDesc->params.nan_opt;
    if (coef) *coef = activationDesc->params.coef;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetActivationDescriptorSwishBeta(udnnActivationDescriptor_t activationDesc,
                                                  double swish_beta)
{
    static const char fn[] = "udnnSetActivationDescriptorSwishBeta";
    UDNN_LOG_API_CALL("%s(activationDesc=%p, swish_beta=%g)", fn, (void *)activationDesc,
                      swish_beta);
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    if (!isfinite(swish_beta))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: swish_beta is %g; it must be finite", fn,
                         swish_beta);
    activationDesc->params.swish_beta = swish_beta;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetActivationDescriptorSwishBeta(udnnActivationDescriptor_t activationDesc,
                                                  double *swish_beta)
{
    static const char fn[] = "udnnGetActivationDescriptorSwishBeta";
    UDNN_LOG_API_CALL("%s(activationDesc=%p, swish_beta=%p)",
                      fn, (void *)activationDesc, (void *)swish_beta);
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    UDNN_TRY(udnn_check_ptr(fn, "swish_beta", swish_beta));
    *swish_beta = activationDesc->params.swish_beta;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnActivationForward(udnnHandle_t handle,
                                   udnnActivationDescriptor_t activationDesc, const void *alpha,
                                   const udnnTensorDescriptor_t xDesc, const void *x,
                                   const void *beta, const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnActivationForward";
    char ad[UDNN_STR_DESC], xd[UDNN_STR_DESC], yd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, activationDesc=%s, alpha=%s, xDesc=%s, x=%p, beta=%s, "
                      "yDesc=%s, y=%p)",
                      fn, (void *)handle, act_str(activationDesc, ad, sizeof ad),
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));

    udnn_act_problem p = {0};
    p.act = activationDesc->params;
    udnn_tensor_from_desc(xDesc, &p.x);
    udnn_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_ACT_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnActivationBackward(udnnHandle_t handle,
                                    udnnActivationDescriptor_t activationDesc, const void *alpha,
                                    const udnnTensorDescriptor_t yDesc, const void *y,
                                    const udnnTensorDescriptor_t dyDesc, const void *dy,
                                    const udnnTensorDescriptor_t xDesc, const void *x,
                                    const void *beta, const udnnTensorDescriptor_t dxDesc,
                                    void *dx)
{
    static const char fn[] = "udnnActivationBackward";
    char ad[UDNN_STR_DESC], yd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], xd[UDNN_STR_DESC],
        dxd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, activationDesc=%s, alpha=%s, yDesc=%s, y=%p, dyDesc=%s, "
                      "dy=%p, xDesc=%s, x=%p, beta=%s, dxDesc=%s, dx=%p)",
                      fn, (void *)handle, act_str(activationDesc, ad, sizeof ad),
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
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
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "dy", "dyDesc", dyDesc, dy));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "x", "xDesc", xDesc, x));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "y", "yDesc", yDesc, y));

    udnn_act_problem p = {0};
    p.act = activationDesc->params;
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
    return udnn_dispatch(handle, fn, UDNN_OP_ACT_BWD, -1, &p, NULL, 0);
}
