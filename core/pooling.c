/* pooling.c - the pooling descriptor, its output-dim queries,
 * PoolingForward and PoolingBackward: validation and the normalized
 * problem (three spatial dims; a 2-D pooling gets window 1, pad 0 and
 * stride 1 in d). The descriptor keeps its nb_spatial entries in the order
 * given: h, w for 2-D; d, h, w for 3-D. */
#include <stdio.h>
#include <stdlib.h>

#include "core/core.h"

enum { GEOM_WINDOW, GEOM_PAD, GEOM_STRIDE };

/* The name of geometry entry i as the setter's caller spelled it. */
static const char *geom_arg(char *buf, size_t n, int nd, int kind, int i)
{
    static const char *const names2d[3][2] = {{"windowHeight", "windowWidth"},
                                              {"verticalPadding", "horizontalPadding"},
                                              {"verticalStride", "horizontalStride"}};
    static const char *const arrays[3] = {"windowDimA", "paddingA", "strideA"};
    if (nd) snprintf(buf, n, "%s[%d]", arrays[kind], i);
    else snprintf(buf, n, "%s", names2d[kind][i]);
    return buf;
}

static udnnStatus_t set_pooling(const char *fn, udnnPoolingDescriptor_t d, int nd,
                                udnnPoolingMode_t mode, udnnNanPropagation_t nan_opt,
                                int nb_spatial, const int window[], const int pad[],
                                const int stride[])
{
    char arg[32];
    switch (mode) {
    case UDNN_POOLING_MAX:
    case UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING:
    case UDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING:
    case UDNN_POOLING_MAX_DETERMINISTIC: break;
    default:
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnPoolingMode_t", fn,
                         (int)mode);
    }
    if (nan_opt != UDNN_NOT_PROPAGATE_NAN && nan_opt != UDNN_PROPAGATE_NAN)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: maxpoolingNanOpt %d is neither UDNN_NOT_PROPAGATE_NAN nor "
                         "UDNN_PROPAGATE_NAN",
                         fn, (int)nan_opt);
    for (int i = 0; i < nb_spatial; i++) {
        if (window[i] < 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; windows must be >= 1", fn,
                             geom_arg(arg, sizeof arg, nd, GEOM_WINDOW, i), window[i]);
        if (stride[i] < 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; strides must be >= 1", fn,
                             geom_arg(arg, sizeof arg, nd, GEOM_STRIDE, i), stride[i]);
        if (pad[i] < 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; padding must be >= 0", fn,
                             geom_arg(arg, sizeof arg, nd, GEOM_PAD, i), pad[i]);
        /* a window wholly in the padding would have nothing to pool */
        if (pad[i] >= window[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s is %d; padding must be smaller than the window (%d)", fn,
                             geom_arg(arg, sizeof arg, nd, GEOM_PAD, i), pad[i], window[i]);
    }
    d->mode = mode;
    d->nan_opt = nan_opt;
    d->nb_spatial = nb_spatial;
    for (int i = 0; i < 3; i++) {
        d->window[i] = i < nb_spatial ? window[i] : 0;
        d->pad[i] = i < nb_spatial ? pad[i] : 0;
        d->stride[i] = i < nb_spatial ? stride[i] : 0;
    }
    d->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_pooling_desc(const char *fn, const udnnPoolingDescriptor_t d)
{
    if (d == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: poolingDesc is NULL", fn);
    if (!d->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: poolingDesc has not been set", fn);
    return UDNN_STATUS_SUCCESS;
}

/* Checks that the input (named x_arg) suits the pooling and gives the
 * output's dims: n, c, then 1 + (in + 2 pad - window) / stride. */
static udnnStatus_t pooled_dims(const char *fn, const udnnPoolingDescriptor_t pd,
                                const char *x_arg, const udnnTensorDescriptor_t xd, int out[])
{
    int rank = pd->nb_spatial + 2;
    if (xd->nb_dims != rank)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d dimensions; a %d-D pooling takes %d", fn, x_arg,
                         xd->nb_dims, pd->nb_spatial, rank);
    out[0] = xd->dims[0];
    out[1] = xd->dims[1];
    for (int i = 0; i < pd->nb_spatial; i++) {
        int64_t padded = (int64_t)xd->dims[2 + i] + 2 * (int64_t)pd->pad[i];
        if (padded < pd->window[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d; padded by %d on each side it "
                             "is smaller than the window (%d)",
                             fn, x_arg, 2 + i, xd->dims[2 + i], pd->pad[i], pd->window[i]);
        out[2 + i] = (int)(1 + (padded - pd->window[i]) / pd->stride[i]);
    }
    return UDNN_STATUS_SUCCESS;
}

/* y's dims must be the pooled dims of x. */
static udnnStatus_t check_pooled(const char *fn, const char *y_arg,
                                 const udnnTensorDescriptor_t yd, const char *x_arg,
                                 const int out[], int rank)
{
    if (yd->nb_dims != rank)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn,
                         y_arg, yd->nb_dims, x_arg, rank);
    for (int i = 0; i < rank; i++)
        if (yd->dims[i] != out[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d; pooling %s gives %d", fn,
                             y_arg, i, yd->dims[i], x_arg, out[i]);
    return UDNN_STATUS_SUCCESS;
}

/* "{mode, nanOpt, window, pad, stride}" of a descriptor, for API logs. */
static const char *pool_str(const udnnPoolingDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) snprintf(buf, n, "NULL");
    else if (!d->is_set) snprintf(buf, n, "unset");
    else if (d->nb_spatial == 2)
        snprintf(buf, n, "{mode=%d, nanOpt=%d, window=[%d,%d], pad=[%d,%d], stride=[%d,%d]}",
                 (int)d->mode, (int)d->nan_opt, d->window[0], d->window[1], d->pad[0],
                 d->pad[1], d->stride[0], d->stride[1]);
    else
        snprintf(buf, n,
                 "{mode=%d, nanOpt=%d, window=[%d,%d,%d], pad=[%d,%d,%d], stride=[%d,%d,%d]}",
                 (int)d->mode, (int)d->nan_opt, d->window[0], d->window[1], d->window[2],
                 d->pad[0], d->pad[1], d->pad[2], d->stride[0], d->stride[1], d->stride[2]);
    return buf;
}

/* The problem's geometry in d, h, w. */
static void fill_geometry(udnn_pool_problem *p, const udnnPoolingDescriptor_t d)
{
    p->mode = d->mode;
    p->nan_opt = d->nan_opt;
    int lead = 3 - d->nb_spatial;
    for (int i = 0; i < 3; i++) {
        p->window[i] = 1;
        p->pad[i] = 0;
        p->stride[i] = 1;
    }
    for (int i = 0; i < d->nb_spatial; i++) {
        p->window[lead + i] = d->window[i];
        p->pad[lead + i] = d->pad[i];
        p->stride[lead + i] = d->stride[i];
    }
}

udnnStatus_t udnnCreatePoolingDescriptor(udnnPoolingDescriptor_t *poolingDesc)
{
    static const char fn[] = "udnnCreatePoolingDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p)", fn, (void *)poolingDesc);
    UDNN_TRY(udnn_check_ptr(fn, "poolingDesc", poolingDesc));
    *poolingDesc = calloc(1, sizeof **poolingDesc);
    if (*poolingDesc == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyPoolingDescriptor(udnnPoolingDescriptor_t poolingDesc)
{
    static const char fn[] = "udnnDestroyPoolingDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p)", fn, (void *)poolingDesc);
    free(poolingDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetPooling2dDescriptor(udnnPoolingDescriptor_t poolingDesc,
                                        udnnPoolingMode_t mode,
                                        udnnNanPropagation_t maxpoolingNanOpt, int windowHeight,
                                        int windowWidth, int verticalPadding,
                                        int horizontalPadding, int verticalStride,
                                        int horizontalStride)
{
    static const char fn[] = "udnnSetPooling2dDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, mode=%d, maxpoolingNanOpt=%d, windowHeight=%d, "
                      "windowWidth=%d, verticalPadding=%d, horizontalPadding=%d, "
                      "verticalStride=%d, horizontalStride=%d)",
                      fn, (void *)poolingDesc, (int)mode, (int)maxpoolingNanOpt, windowHeight,
                      windowWidth, verticalPadding, horizontalPadding, verticalStride,
                      horizontalStride);
    UDNN_TRY(udnn_check_ptr(fn, "poolingDesc", poolingDesc));
    const int window[2] = {windowHeight, windowWidth};
    const int pad[2] = {verticalPadding, horizontalPadding};
    const int stride[2] = {verticalStride, horizontalStride};
    return set_pooling(fn, poolingDesc, 0, mode, maxpoolingNanOpt, 2, window, pad, stride);
}

udnnStatus_t udnnGetPooling2dDescriptor(const udnnPoolingDescriptor_t poolingDesc,
                                        udnnPoolingMode_t *mode,
                                        udnnNanPropagation_t *maxpoolingNanOpt,
                                        int *windowHeight, int *windowWidth,
                                        int *verticalPadding, int *horizontalPadding,
                                        int *verticalStride, int *horizontalStride)
{
    static const char fn[] = "udnnGetPooling2dDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, mode=%p, maxpoolingNanOpt=%p, windowHeight=%p, "
                      "windowWidth=%p, verticalPadding=%p, horizontalPadding=%p, "
                      "verticalStride=%p, horizontalStride=%p)",
                      fn, (void *)poolingDesc, (void *)mode, (void *)maxpoolingNanOpt,
                      (void *)windowHeight, (void *)windowWidth, (void *)verticalPadding,
                      (void *)horizontalPadding, (void *)verticalStride, (void *)horizontalStride);
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
    if (poolingDesc->nb_spatial != 2)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: poolingDesc has %d spatial dimensions, not 2", fn,
                         poolingDesc->nb_spatial);
    /* as udnnGetTensor4dDescriptor, any output may be NULL */
    int *const outs[3][2] = {{windowHeight, windowWidth},
                             {verticalPadding, horizontalPadding},
                             {verticalStride, horizontalStride}};
    const int *const vals[3] = {poolingDesc->window, poolingDesc->pad, poolingDesc->stride};
    if (mode) *mode = poolingDesc->mode;
    if (maxpoolingNanOpt) *maxpoolingNanOpt = poolingDesc->nan_opt;
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 2; i++)
            if (outs[k][i]) *outs[k][i] = vals[k][i];
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetPoolingNdDescriptor(udnnPoolingDescriptor_t poolingDesc,
                                        const udnnPoolingMode_t mode,
                                        const udnnNanPropagation_t maxpoolingNanOpt, int nbDims,
                                        const int windowDimA[], const int paddingA[],
                                        const int strideA[])
{
    static const char fn[] = "udnnSetPoolingNdDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, mode=%d, maxpoolingNanOpt=%d, nbDims=%d, "
                      "windowDimA=%p, paddingA=%p, strideA=%p)",
                      fn, (void *)poolingDesc, (int)mode, (int)maxpoolingNanOpt, nbDims,
                      (const void *)windowDimA, (const void *)paddingA, (const void *)strideA);
    UDNN_TRY(udnn_check_ptr(fn, "poolingDesc", poolingDesc));
    if (nbDims != 2 && nbDims != 3)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: nbDims is %d; pooling takes 2 or 3 spatial dimensions", fn, nbDims);
    UDNN_TRY(udnn_check_ptr(fn, "windowDimA", windowDimA));
    UDNN_TRY(udnn_check_ptr(fn, "paddingA", paddingA));
    UDNN_TRY(udnn_check_ptr(fn, "strideA", strideA));
    return set_pooling(fn, poolingDesc, 1, mode, maxpoolingNanOpt, nbDims, windowDimA, paddingA,
                       strideA);
}

udnnStatus_t udnnGetPoolingNdDescriptor(const udnnPoolingDescriptor_t poolingDesc,
                                        int nbDimsRequested, udnnPoolingMode_t *mode,
                                        udnnNanPropagation_t *maxpoolingNanOpt, int *nbDims,
                                        int windowDimA[], int paddingA[], int strideA[])
{
    static const char fn[] = "udnnGetPoolingNdDescriptor";
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, nbDimsRequested=%d, mode=%p, maxpoolingNanOpt=%p, "
                      "nbDims=%p, windowDimA=%p, paddingA=%p, strideA=%p)",
                      fn, (void *)poolingDesc, nbDimsRequested, (void *)mode,
                      (void *)maxpoolingNanOpt, (void *)nbDims, (void *)windowDimA,
                      (void *)paddingA, (void *)strideA);
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
    if (nbDimsRequested < 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: nbDimsRequested is %d; it must be >= 0",
                         fn, nbDimsRequested);
    int copy = nbDimsRequested < poolingDesc->nb_spatial ? nbDimsRequested
                                                         : poolingDesc->nb_spatial;
    if (copy > 0) {
        UDNN_TRY(udnn_check_ptr(fn, "windowDimA", windowDimA));
        UDNN_TRY(udnn_check_ptr(fn, "paddingA", paddingA));
        UDNN_TRY(udnn_check_ptr(fn, "strideA", strideA));
    }
    if (mode) *mode = poolingDesc->mode;
    if (maxpoolingNanOpt) *maxpoolingNanOpt = poolingDesc->nan_opt;
    if (nbDims) *nbDims = poolingDesc->nb_spatial;
    for (int i = 0; i < copy; i++) {
        windowDimA[i] = poolingDesc->window[i];
        paddingA[i] = poolingDesc->pad[i];
        strideA[i] = poolingDesc->stride[i];
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetPooling2dForwardOutputDim(const udnnPoolingDescriptor_t poolingDesc,
                                              const udnnTensorDescriptor_t inputTensorDesc,
                                              int *n, int *c, int *h, int *w)
{
    static const char fn[] = "udnnGetPooling2dForwardOutputDim";
    char xbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, inputTensorDesc=%s, n=%p, c=%p, h=%p, w=%p)",
                      fn, (void *)poolingDesc, udnn_tensor_str(inputTensorDesc, xbuf, sizeof xbuf),
                      (void *)n, (void *)c, (void *)h, (void *)w);
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
    UDNN_TRY(udnn_check_tensor(fn, "inputTensorDesc", inputTensorDesc));
    if (poolingDesc->nb_spatial != 2)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: poolingDesc has %d spatial dimensions, not 2", fn,
                         poolingDesc->nb_spatial);
    int out[4];
    UDNN_TRY(pooled_dims(fn, poolingDesc, "inputTensorDesc", inputTensorDesc, out));
    /* as udnnGetTensor4dDescriptor, any output may be NULL */
    int *const dims[4] = {n, c, h, w};
    for (int i = 0; i < 4; i++)
        if (dims[i]) *dims[i] = out[i];
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetPoolingNdForwardOutputDim(const udnnPoolingDescriptor_t poolingDesc,
                                              const udnnTensorDescriptor_t inputTensorDesc,
                                              int nbDims, int outputTensorDimA[])
{
    static const char fn[] = "udnnGetPoolingNdForwardOutputDim";
    char xbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(poolingDesc=%p, inputTensorDesc=%s, nbDims=%d, outputTensorDimA=%p)",
                      fn, (void *)poolingDesc, udnn_tensor_str(inputTensorDesc, xbuf, sizeof xbuf),
                      nbDims, (void *)outputTensorDimA);
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
    UDNN_TRY(udnn_check_tensor(fn, "inputTensorDesc", inputTensorDesc));
    UDNN_TRY(udnn_check_ptr(fn, "outputTensorDimA", outputTensorDimA));
    /* nbDims counts the output tensor's dims, n and c included, as cuDNN's samples pass */
    if (nbDims != inputTensorDesc->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: nbDims is %d; inputTensorDesc has %d dimensions", fn, nbDims,
                         inputTensorDesc->nb_dims);
    int out[5];
    UDNN_TRY(pooled_dims(fn, poolingDesc, "inputTensorDesc", inputTensorDesc, out));
    for (int i = 0; i < nbDims; i++) outputTensorDimA[i] = out[i];
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnPoolingForward(udnnHandle_t handle, const udnnPoolingDescriptor_t poolingDesc,
                                const void *alpha, const udnnTensorDescriptor_t xDesc,
                                const void *x, const void *beta,
                                const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnPoolingForward";
    char pd[UDNN_STR_DESC], xd[UDNN_STR_DESC], yd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, poolingDesc=%s, alpha=%s, xDesc=%s, x=%p, beta=%s, "
                      "yDesc=%s, y=%p)",
                      fn, (void *)handle, pool_str(poolingDesc, pd, sizeof pd),
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_same_type(fn, "xDesc", xDesc, "yDesc", yDesc));
    int out[5];
    UDNN_TRY(pooled_dims(fn, poolingDesc, "xDesc", xDesc, out));
    UDNN_TRY(check_pooled(fn, "yDesc", yDesc, "xDesc", out, xDesc->nb_dims));
    /* a window reads x elements other outputs' threads would overwrite */
    UDNN_TRY(udnn_check_not_in_place(fn, "y", y, "x", x));

    udnn_pool_problem p = {0};
    fill_geometry(&p, poolingDesc);
    udnn_spatial_tensor_from_desc(xDesc, &p.x);
    udnn_spatial_tensor_from_desc(yDesc, &p.y);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.out_ptr = y;
    return udnn_dispatch(handle, fn, UDNN_OP_POOL_FWD, -1, &p, NULL, 0);
}

udnnStatus_t udnnPoolingBackward(udnnHandle_t handle, const udnnPoolingDescriptor_t poolingDesc,
                                 const void *alpha, const udnnTensorDescriptor_t yDesc,
                                 const void *y, const udnnTensorDescriptor_t dyDesc,
                                 const void *dy, const udnnTensorDescriptor_t xDesc,
                                 const void *x, const void *beta,
                                 const udnnTensorDescriptor_t dxDesc, void *dx)
{
    static const char fn[] = "udnnPoolingBackward";
    char pd[UDNN_STR_DESC], yd[UDNN_STR_DESC], dyd[UDNN_STR_DESC], xd[UDNN_STR_DESC],
        dxd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, poolingDesc=%s, alpha=%s, yDesc=%s, y=%p, dyDesc=%s, "
                      "dy=%p, xDesc=%s, x=%p, beta=%s, dxDesc=%s, dx=%p)",
                      fn, (void *)handle, pool_str(poolingDesc, pd, sizeof pd),
                      udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), as, sizeof as),
                      udnn_tensor_str(yDesc, yd, sizeof yd), y,
                      udnn_tensor_str(dyDesc, dyd, sizeof dyd), dy,
                      udnn_tensor_str(xDesc, xd, sizeof xd), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), bs, sizeof bs),
                      udnn_tensor_str(dxDesc, dxd, sizeof dxd), dx);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(check_pooling_desc(fn, poolingDesc));
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
    int out[5];
    UDNN_TRY(pooled_dims(fn, poolingDesc, "xDesc", xDesc, out));
    UDNN_TRY(check_pooled(fn, "yDesc", yDesc, "xDesc", out, xDesc->nb_dims));
    UDNN_TRY(udnn_check_same_dims(fn, "yDesc", yDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "dxDesc", dxDesc));
    /* a dx element gathers from every window over it, and max compares
     * the window's x and y */
    UDNN_TRY(udnn_check_not_in_place(fn, "dx", dx, "x", x));
    UDNN_TRY(udnn_check_not_in_place(fn, "dx", dx, "y", y));
    UDNN_TRY(udnn_check_not_in_place(fn, "dx", dx, "dy", dy));

    udnn_pool_problem p = {0};
    fill_geometry(&p, poolingDesc);
    udnn_spatial_tensor_from_desc(xDesc, &p.x);
    udnn_spatial_tensor_from_desc(yDesc, &p.y);
    udnn_spatial_tensor_from_desc(dyDesc, &p.dy);
    udnn_spatial_tensor_from_desc(dxDesc, &p.dx);
    p.alpha = udnn_read_scalar(alpha, xDesc->dtype);
    p.beta = udnn_read_scalar(beta, xDesc->dtype);
    p.x_ptr = x;
    p.y_ptr = y;
    p.dy_ptr = dy;
    p.out_ptr = dx;
    return udnn_dispatch(handle, fn, UDNN_OP_POOL_BWD, -1, &p, NULL, 0);
}
