/* softmax.c - SoftmaxForward and SoftmaxBackward: validation and the
 * normalized problem. Tensors are 4-D (as cuDNN) or 5-D (n, c, d, h, w);
 * an output may share its buffer with an input (in place) only when both
 * descriptors have the same strides. */
#include <stdio.h>

#include "core/core.h"

static udnnStatus_t check_algo_mode(const char *fn, udnnSoftmaxAlgorithm_t algo,
                                    udnnSoftmaxMode_t mode)
{
    if (algo != UDNN_SOFTMAX_FAST && algo != UDNN_SOFTMAX_ACCURATE && algo != UDNN_SOFTMAX_LOG)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: algo %d is not a udnnSoftmaxAlgorithm_t",
                         fn, (int)algo);
    if (mode != UDNN_SOFTMAX_MODE_INSTANCE && mode != UDNN_SOFTMAX_MODE_CHANNEL)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnSoftmaxMode_t", fn,
                         (int)mode);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSoftmaxForward(udnnHandle_t handle, udnnSoftmaxAlgorithm_t algo,
                                udnnSoftmaxMode_t mode, const void *alpha,
                                const udnnTensorDescriptor_t xDesc, const void *x,
                                const void *beta, const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnSoftmaxForward";
    char xd[UDNN_STR_DESC], yd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, algo=%d, mode=%d, alpha=%s, xDesc=%s, x=%p, beta=%s, "
                      "yDesc=%s, y=%p)",
                      fn, (void *)handle, (int)algo, (int)mode,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_algo_mode(fn, algo, mode));
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

    udnn_softmax_problem p = {0};
    p.algo = algo;
    p.mode = mode;
    udnn_tensor_from_desc(xDesc, &p.x);
    udnn_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_SOFTMAX_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnSoftmaxBackward(udnnHandle_t handle, udnnSoftmaxAlgorithm_t algo,
                                 udnnSoftmaxMode_t mode, const void *alpha,
                                 const udnnTensorDescriptor_t yDesc, const void *y,
                                 const udnnTensorDescriptor_t dyDesc, const void *dy,
                                 const void *beta, const udnnTensorDescriptor_t dxDesc, void *dx)
{
    static const char fn[] = "udnnSoftmaxBackward";
    char yd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], dxd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, algo=%d, mode=%d, alpha=%s, yDesc=%s, y=%p, dyDesc=%s, "
                      "dy=%p, beta=%s, dxDesc=%s, dx=%p)",
                      fn, (void *)handle, (int)algo, (int)mode,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(yDesc), as, sizeof as),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_scalar_str(beta, udnn_log_scalar_type(yDesc), bs, sizeof bs),
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_algo_mode(fn, algo, mode));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_tensor(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    UDNN_TRY(udnn_check_float_type(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_rank(fn, "yDesc", yDesc, 4, 5));
    UDNN_TRY(udnn_check_same_type(fn, "yDesc", yDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_type(fn, "yDesc", yDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "yDesc", yDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "yDesc", yDesc, "dxDesc", dxDesc));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "dy", "dyDesc", dyDesc, dy));
    UDNN_TRY(udnn_check_in_place(fn, "dx", "dxDesc", dxDesc, dx, "y", "yDesc", yDesc, y));

    udnn_softmax_problem p = {0};
    p.algo = algo;
    p.mode = mode;
    udnn_tensor_from_desc(yDesc, &p.y);
    udnn_tensor_from_desc(dyDesc, &p.dy);
    udnn_tensor_from_desc(dxDesc, &p.dx);
    p.alpha = udnn_read_scalar(alpha, yDesc->dtype);
    p.beta = udnn_read_scalar(beta, yDesc->dtype);
    p.y_ptr = y;
    p.dy_ptr = dy;
    p.out_ptr = dx;
    return udnn_dispatch(handle, fn, UDNN_OP_SOFTMAX_BWD, -1, &p, NULL, 0);
}
