/* tensor_desc.c - tensor and filter descriptors and their validation. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

static int valid_dtype(udnnDataType_t t)
{
    return udnn_dtype_size(t) != 0;
}

static int valid_format(udnnTensorFormat_t f)
{
    return f == UDNN_TENSOR_NCHW || f == UDNN_TENSOR_NHWC;
}

static udnnStatus_t check_dtype(const char *fn, udnnDataType_t t)
{
    if (!valid_dtype(t))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: dataType %d is not a udnn data type", fn,
                         (int)t);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_format(const char *fn, udnnTensorFormat_t f)
{
    if (!valid_format(f))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: format %d is neither UDNN_TENSOR_NCHW nor UDNN_TENSOR_NHWC", fn,
                         (int)f);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_dims(const char *fn, const char *arg, int nb, const int *dims)
{
    for (int i = 0; i < nb; i++)
        if (dims[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s[%d] is %d; dimensions must be positive", fn, arg, i,
                             dims[i]);
    return UDNN_STATUS_SUCCESS;
}

/* Element count and byte span must fit in int64 / size_t; elements must
 * not overlap. */
static udnnStatus_t check_layout(const char *fn, udnnDataType_t t, int nb, const int *dims,
                                 const int64_t *strides)
{
    int64_t count = 1, span = 1;
    for (int i = 0; i < nb; i++) {
        int64_t extent;
        if (__builtin_mul_overflow(count, (int64_t)dims[i], &count) ||
            __builtin_mul_overflow((int64_t)(dims[i] - 1), strides[i], &extent) ||
            __builtin_add_overflow(span, extent, &span))
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: the tensor's element count or span overflows 64 bits", fn);
    }
    int64_t bytes;
    if (__builtin_mul_overflow(span, (int64_t)udnn_dtype_size(t), &bytes) ||
        (uint64_t)bytes > (uint64_t)SIZE_MAX)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: the tensor's size in bytes overflows", fn);

    /* No overlap: ordered by stride, each dim (of size > 1) must start past
     * the whole extent of the smaller ones. */
    int order[UDNN_DIM_MAX], n = 0;
    for (int i = 0; i < nb; i++)
        if (dims[i] > 1) order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && strides[order[j]] < strides[order[j - 1]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    int64_t reach = 1; /* elements covered by the smaller dims */
    for (int i = 0; i < n; i++) {
        int d = order[i];
        if (strides[d] < reach)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: strideA[%d] is %lld: elements of the tensor would overlap", fn,
                             d, (long long)strides[d]);
        reach = strides[d] * dims[d];
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnCreateTensorDescriptor(udnnTensorDescriptor_t *tensorDesc)
{
    static const char fn[] = "udnnCreateTensorDescriptor";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p)", fn, (void *)tensorDesc);
    UDNN_TRY(udnn_check_ptr(fn, "tensorDesc", tensorDesc));
    *tensorDesc = calloc(1, sizeof **tensorDesc);
    if (*tensorDesc == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyTensorDescriptor(udnnTensorDescriptor_t tensorDesc)
{
    UDNN_LOG_API_CALL("udnnDestroyTensorDescriptor(tensorDesc=%p)", (void *)tensorDesc);
    free(tensorDesc);
    return UDNN_STATUS_SUCCESS;
}

/* Validates and stores dims and strides (given as int64 for packed forms). */
static udnnStatus_t set_tensor(const char *fn, udnnTensorDescriptor_t d, udnnDataType_t t,
                               int nb, const int *dims, const int64_t *strides)
{
    UDNN_TRY(check_dtype(fn, t));
    UDNN_TRY(check_dims(fn, "dimA", nb, dims));
    for (int i = 0; i < nb; i++)
        if (strides[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: strideA[%d] is %lld; strides must be positive", fn, i,
                             (long long)strides[i]);
    for (int i = 0; i < nb; i++)
        if (strides[i] > INT32_MAX)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: the packed stride of dimension %d exceeds INT_MAX", fn, i);
    UDNN_TRY(check_layout(fn, t, nb, dims, strides));
    d->dtype = t;
    d->nb_dims = nb;
    for (int i = 0; i < nb; i++) {
        d->dims[i] = dims[i];
        d->strides[i] = (int)strides[i];
    }
    d->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_nb_dims(const char *fn, int nb, int lo)
{
    if (nb < lo || nb > UDNN_DIM_MAX)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: nbDims is %d; it must be %d to %d", fn, nb,
                         lo, UDNN_DIM_MAX);
    return UDNN_STATUS_SUCCESS;
}

/* The packed form of dims in a format; fails when the packed strides
 * overflow int64. */
static udnnStatus_t set_packed(const char *fn, udnnTensorDescriptor_t d, udnnTensorFormat_t f,
                               udnnDataType_t t, int nb, const int *dims)
{
    UDNN_TRY(check_format(fn, f));
    UDNN_TRY(check_dtype(fn, t));
    UDNN_TRY(check_dims(fn, "dimA", nb, dims));
    int64_t count = 1;
    for (int i = 0; i < nb; i++)
        if (__builtin_mul_overflow(count, (int64_t)dims[i], &count))
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: the tensor's element count overflows 64 bits", fn);
    int64_t strides[UDNN_DIM_MAX];
    udnn_packed_strides(f, nb, dims, strides);
    return set_tensor(fn, d, t, nb, dims, strides);
}

udnnStatus_t udnnSetTensor4dDescriptor(udnnTensorDescriptor_t tensorDesc,
                                       udnnTensorFormat_t format, udnnDataType_t dataType,
                                       int n, int c, int h, int w)
{
    static const char fn[] = "udnnSetTensor4dDescriptor";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p, format=%d, dataType=%s, n=%d, c=%d, h=%d, w=%d)", fn,
                      (void *)tensorDesc, (int)format, udnn_dtype_name(dataType), n, c, h, w);
    UDNN_TRY(udnn_check_ptr(fn, "tensorDesc", tensorDesc));
    const int dims[4] = {n, c, h, w};
    static const char *const names[4] = {"n", "c", "h", "w"};
    for (int i = 0; i < 4; i++)
        if (dims[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; dimensions must be positive",
                             fn, names[i], dims[i]);
    return set_packed(fn, tensorDesc, format, dataType, 4, dims);
}

udnnStatus_t udnnSetTensor4dDescriptorEx(udnnTensorDescriptor_t tensorDesc,
                                         udnnDataType_t dataType, int n, int c, int h, int w,
                                         int nStride, int cStride, int hStride, int wStride)
{
    static const char fn[] = "udnnSetTensor4dDescriptorEx";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p, dataType=%s, n=%d, c=%d, h=%d, w=%d, nStride=%d, "
                      "cStride=%d, hStride=%d, wStride=%d)",
                      fn, (void *)tensorDesc, udnn_dtype_name(dataType), n, c, h, w, nStride,
                      cStride, hStride, wStride);
    UDNN_TRY(udnn_check_ptr(fn, "tensorDesc", tensorDesc));
    const int dims[4] = {n, c, h, w};
    const int64_t strides[4] = {nStride, cStride, hStride, wStride};
    static const char *const names[4] = {"n", "c", "h", "w"};
    static const char *const snames[4] = {"nStride", "cStride", "hStride", "wStride"};
    for (int i = 0; i < 4; i++) {
        if (dims[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; dimensions must be positive",
                             fn, names[i], dims[i]);
        if (strides[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %lld; strides must be positive",
                             fn, snames[i], (long long)strides[i]);
    }
    return set_tensor(fn, tensorDesc, dataType, 4, dims, strides);
}

udnnStatus_t udnnGetTensor4dDescriptor(const udnnTensorDescriptor_t tensorDesc,
                                       udnnDataType_t *dataType, int *n, int *c, int *h, int *w,
                                       int *nStride, int *cStride, int *hStride, int *wStride)
{
    static const char fn[] = "udnnGetTensor4dDescriptor";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p)", fn, (void *)tensorDesc);
    UDNN_TRY(udnn_check_tensor(fn, "tensorDesc", tensorDesc));
    if (tensorDesc->nb_dims != 4)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: tensorDesc has %d dimensions, not 4", fn,
                         tensorDesc->nb_dims);
    int *const dims[4] = {n, c, h, w};
    int *const strides[4] = {nStride, cStride, hStride, wStride};
    if (dataType) *dataType = tensorDesc->dtype;
    for (int i = 0; i < 4; i++) {
        if (dims[i]) *dims[i] = tensorDesc->dims[i];
        if (strides[i]) *strides[i] = tensorDesc->strides[i];
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetTensorNdDescriptor(udnnTensorDescriptor_t tensorDesc,
                                       udnnDataType_t dataType, int nbDims, const int dimA[],
                                       const int strideA[])
{
    static const char fn[] = "udnnSetTensorNdDescriptor";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p, dataType=%s, nbDims=%d)", fn, (void *)tensorDesc,
                      udnn_dtype_name(dataType), nbDims);
    UDNN_TRY(udnn_check_ptr(fn, "tensorDesc", tensorDesc));
    UDNN_TRY(check_nb_dims(fn, nbDims, 2));
    UDNN_TRY(udnn_check_ptr(fn, "dimA", dimA));
    UDNN_TRY(udnn_check_ptr(fn, "strideA", strideA));
    int64_t strides[UDNN_DIM_MAX];
    for (int i = 0; i < nbDims; i++) strides[i] = strideA[i];
    return set_tensor(fn, tensorDesc, dataType, nbDims, dimA, strides);
}

udnnStatus_t udnnSetTensorNdDescriptorEx(udnnTensorDescriptor_t tensorDesc,
                                         udnnTensorFormat_t format, udnnDataType_t dataType,
                                         int nbDims, const int dimA[])
{
    static const char fn[] = "udnnSetTensorNdDescriptorEx";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p, format=%d, dataType=%s, nbDims=%d)", fn,
                      (void *)tensorDesc, (int)format, udnn_dtype_name(dataType), nbDims);
    UDNN_TRY(udnn_check_ptr(fn, "tensorDesc", tensorDesc));
    UDNN_TRY(check_nb_dims(fn, nbDims, 2));
    UDNN_TRY(udnn_check_ptr(fn, "dimA", dimA));
    if (format == UDNN_TENSOR_NHWC && nbDims < 3)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: format NHWC needs at least 3 dimensions, nbDims is %d", fn, nbDims);
    return set_packed(fn, tensorDesc, format, dataType, nbDims, dimA);
}

udnnStatus_t udnnGetTensorNdDescriptor(const udnnTensorDescriptor_t tensorDesc,
                                       int nbDimsRequested, udnnDataType_t *dataType,
                                       int *nbDims, int dimA[], int strideA[])
{
    static const char fn[] = "udnnGetTensorNdDescriptor";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p, nbDimsRequested=%d)", fn, (void *)tensorDesc,
                      nbDimsRequested);
    UDNN_TRY(udnn_check_tensor(fn, "tensorDesc", tensorDesc));
    if (nbDimsRequested < 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: nbDimsRequested is %d; it must be >= 0", fn,
                         nbDimsRequested);
    int copy = nbDimsRequested < tensorDesc->nb_dims ? nbDimsRequested : tensorDesc->nb_dims;
    if (copy > 0) {
        UDNN_TRY(udnn_check_ptr(fn, "dimA", dimA));
        UDNN_TRY(udnn_check_ptr(fn, "strideA", strideA));
    }
    if (dataType) *dataType = tensorDesc->dtype;
    if (nbDims) *nbDims = tensorDesc->nb_dims;
    for (int i = 0; i < copy; i++) {
        dimA[i] = tensorDesc->dims[i];
        strideA[i] = tensorDesc->strides[i];
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetTensorSizeInBytes(const udnnTensorDescriptor_t tensorDesc, size_t *size)
{
    static const char fn[] = "udnnGetTensorSizeInBytes";
    UDNN_LOG_API_CALL("%s(tensorDesc=%p)", fn, (void *)tensorDesc);
    UDNN_TRY(udnn_check_tensor(fn, "tensorDesc", tensorDesc));
    UDNN_TRY(udnn_check_ptr(fn, "size", size));
    size_t span = 1;
    for (int i = 0; i < tensorDesc->nb_dims; i++)
        span += (size_t)(tensorDesc->dims[i] - 1) * (size_t)tensorDesc->strides[i];
    *size = span * udnn_dtype_size(tensorDesc->dtype);
    return UDNN_STATUS_SUCCESS;
}

/* ---- filters -------------------------------------------------------------- */

udnnStatus_t udnnCreateFilterDescriptor(udnnFilterDescriptor_t *filterDesc)
{
    static const char fn[] = "udnnCreateFilterDescriptor";
    UDNN_LOG_API_CALL("%s(filterDesc=%p)", fn, (void *)filterDesc);
    UDNN_TRY(udnn_check_ptr(fn, "filterDesc", filterDesc));
    *filterDesc = calloc(1, sizeof **filterDesc);
    if (*filterDesc == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyFilterDescriptor(udnnFilterDescriptor_t filterDesc)
{
    UDNN_LOG_API_CALL("udnnDestroyFilterDescriptor(filterDesc=%p)", (void *)filterDesc);
    free(filterDesc);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t set_filter(const char *fn, udnnFilterDescriptor_t d, udnnDataType_t t,
                               udnnTensorFormat_t f, int nb, const int *dims, const char *arg)
{
    UDNN_TRY(check_dtype(fn, t));
    UDNN_TRY(check_format(fn, f));
    UDNN_TRY(check_dims(fn, arg, nb, dims));
    int64_t count = 1, bytes;
    for (int i = 0; i < nb; i++)
        if (__builtin_mul_overflow(count, (int64_t)dims[i], &count))
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: the filter's element count overflows 64 bits", fn);
    if (count > INT32_MAX || __builtin_mul_overflow(count, (int64_t)udnn_dtype_size(t), &bytes))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: the filter has %lld elements; at most INT_MAX are supported", fn,
                         (long long)count);
    d->dtype = t;
    d->format = f;
    d->nb_dims = nb;
    for (int i = 0; i < nb; i++) d->dims[i] = dims[i];
    d->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetFilter4dDescriptor(udnnFilterDescriptor_t filterDesc,
                                       udnnDataType_t dataType, udnnTensorFormat_t format, int k,
                                       int c, int h, int w)
{
    static const char fn[] = "udnnSetFilter4dDescriptor";
    UDNN_LOG_API_CALL("%s(filterDesc=%p, dataType=%s, format=%d, k=%d, c=%d, h=%d, w=%d)", fn,
                      (void *)filterDesc, udnn_dtype_name(dataType), (int)format, k, c, h, w);
    UDNN_TRY(udnn_check_ptr(fn, "filterDesc", filterDesc));
    const int dims[4] = {k, c, h, w};
    static const char *const names[4] = {"k", "c", "h", "w"};
    for (int i = 0; i < 4; i++)
        if (dims[i] <= 0)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; dimensions must be positive",
                             fn, names[i], dims[i]);
    return set_filter(fn, filterDesc, dataType, format, 4, dims, "filterDimA");
}

udnnStatus_t udnnGetFilter4dDescriptor(const udnnFilterDescriptor_t filterDesc,
                                       udnnDataType_t *dataType, udnnTensorFormat_t *format,
                                       int *k, int *c, int *h, int *w)
{
    static const char fn[] = "udnnGetFilter4dDescriptor";
    UDNN_LOG_API_CALL("%s(filterDesc=%p)", fn, (void *)filterDesc);
    UDNN_TRY(udnn_check_filter(fn, "filterDesc", filterDesc));
    if (filterDesc->nb_dims != 4)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: filterDesc has %d dimensions, not 4", fn,
                         filterDesc->nb_dims);
    int *const dims[4] = {k, c, h, w};
    if (dataType) *dataType = filterDesc->dtype;
    if (format) *format = filterDesc->format;
    for (int i = 0; i < 4; i++)
        if (dims[i]) *dims[i] = filterDesc->dims[i];
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetFilterNdDescriptor(udnnFilterDescriptor_t filterDesc,
                                       udnnDataType_t dataType, udnnTensorFormat_t format,
                                       int nbDims, const int filterDimA[])
{
    static const char fn[] = "udnnSetFilterNdDescriptor";
    UDNN_LOG_API_CALL("%s(filterDesc=%p, dataType=%s, format=%d, nbDims=%d)", fn,
                      (void *)filterDesc, udnn_dtype_name(dataType), (int)format, nbDims);
    UDNN_TRY(udnn_check_ptr(fn, "filterDesc", filterDesc));
    UDNN_TRY(check_nb_dims(fn, nbDims, 3));
    UDNN_TRY(udnn_check_ptr(fn, "filterDimA", filterDimA));
    return set_filter(fn, filterDesc, dataType, format, nbDims, filterDimA, "filterDimA");
}

udnnStatus_t udnnGetFilterNdDescriptor(const udnnFilterDescriptor_t filterDesc,
                                       int nbDimsRequested, udnnDataType_t *dataType,
                                       udnnTensorFormat_t *format, int *nbDims,
                                       int filterDimA[])
{
    static const char fn[] = "udnnGetFilterNdDescriptor";
    UDNN_LOG_API_CALL("%s(filterDesc=%p, nbDimsRequested=%d)", fn, (void *)filterDesc,
                      nbDimsRequested);
    UDNN_TRY(udnn_check_filter(fn, "filterDesc", filterDesc));
    if (nbDimsRequested < 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: nbDimsRequested is %d; it must be >= 0", fn,
                         nbDimsRequested);
    int copy = nbDimsRequested < filterDesc->nb_dims ? nbDimsRequested : filterDesc->nb_dims;
    if (copy > 0) UDNN_TRY(udnn_check_ptr(fn, "filterDimA", filterDimA));
    if (dataType) *dataType = filterDesc->dtype;
    if (format) *format = filterDesc->format;
    if (nbDims) *nbDims = filterDesc->nb_dims;
    for (int i = 0; i < copy; i++) filterDimA[i] = filterDesc->dims[i];
    return UDNN_STATUS_SUCCESS;
}
