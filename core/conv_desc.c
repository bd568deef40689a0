/* conv_desc.c - convolution descriptors, their validation, and the forward
 * output shape (shared with the ops in conv.c through udnn_conv_output_dims). */
#include <stdlib.h>

#include "core/core.h"

/* Letters of the spatial dims, as users know them. */
static char spatial_letter(int nb_spatial, int i)
{
    return nb_spatial == 3 ? "dhw"[i] : "hw"[i];
}

static int valid_mode(udnnConvolutionMode_t m)
{
    return m == UDNN_CONVOLUTION || m == UDNN_CROSS_CORRELATION;
}

/* The descriptor may hold any float compute type; which data types it may
 * serve is checked by the ops, as cuDNN does. */
static int valid_compute_type(udnnDataType_t t)
{
    return t == UDNN_DATA_FLOAT || t == UDNN_DATA_DOUBLE || t == UDNN_DATA_HALF ||
           t == UDNN_DATA_BFLOAT16;
}

static int valid_math_type(udnnMathType_t m)
{
    return m == UDNN_DEFAULT_MATH || m == UDNN_TENSOR_OP_MATH ||
           m == UDNN_TENSOR_OP_MATH_ALLOW_CONVERSION || m == UDNN_FMA_MATH;
}

static udnnStatus_t check_conv_ptr(const char *fn, const udnnConvolutionDescriptor_t d)
{
    if (d == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: convDesc is NULL", fn);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_conv_set(const char *fn, const udnnConvolutionDescriptor_t d)
{
    UDNN_TRY(check_conv_ptr(fn, d));
    if (!d->is_set) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: convDesc has not been set", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnCreateConvolutionDescriptor(udnnConvolutionDescriptor_t *convDesc)
{
    static const char fn[] = "udnnCreateConvolutionDescriptor";
    UDNN_LOG_API_CALL("%s(convDesc=%p)", fn, (void *)convDesc);
    UDNN_TRY(udnn_check_ptr(fn, "convDesc", convDesc));
    *convDesc = calloc(1, sizeof **convDesc);
    if (*convDesc == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    (*convDesc)->groups = 1;
    (*convDesc)->math_type = UDNN_DEFAULT_MATH;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyConvolutionDescriptor(udnnConvolutionDescriptor_t convDesc)
{
    static const char fn[] = "udnnDestroyConvolutionDescriptor";
    UDNN_LOG_API_CALL("%s(convDesc=%p)", fn, (void *)convDesc);
    free(convDesc);
    return UDNN_STATUS_SUCCESS;
}

/* Checks one spatial parameter array; names[] are the caller's argument
 * names per element (2-D calls) or NULL for "arr[i]" (Nd calls). */
static udnnStatus_t check_geometry(const char *fn, int nb, const int *pad, const int *stride,
                                   const int *dil, const char *const names[3][3])
{
    static const char *const arrays[3] = {"padA", "filterStrideA", "dilationA"};
    const int *vals[3] = {pad, stride, dil};
    static const int lowest[3] = {0, 1, 1};
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < nb; i++) {
            if (vals[a][i] >= lowest[a]) continue;
            if (names != NULL)
                return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is %d; it must be >= %d", fn,
                                 names[a][i], vals[a][i], lowest[a]);
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s[%d] is %d; it must be >= %d", fn,
                             arrays[a], i, vals[a][i], lowest[a]);
        }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_mode_and_type(const char *fn, udnnConvolutionMode_t mode,
                                        udnnDataType_t computeType)
{
    if (!valid_mode(mode))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: mode is %d; it must be UDNN_CONVOLUTION or "
                         "UDNN_CROSS_CORRELATION",
                         fn, (int)mode);
    if (!valid_compute_type(computeType))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: computeType is %d; it must be FLOAT, DOUBLE, HALF or BFLOAT16", fn,
                         (int)computeType);
    return UDNN_STATUS_SUCCESS;
}

/* Stores validated geometry; groups and math type are kept, as cuDNN
 * keeps them across Set calls. */
static void store_geometry(udnnConvolutionDescriptor_t d, int nb, const int *pad, const int *stride,
                           const int *dil, udnnConvolutionMode_t mode, udnnDataType_t computeType)
{
    d->nb_spatial = nb;
    for (int i = 0; i < 3; i++) {
        d->pad[i] = i < nb ? pad[i] : 0;
        d->stride[i] = i < nb ? stride[i] : 1;
        d->dilation[i] = i < nb ? dil[i] : 1;
    }
    d->mode = mode;
    d->compute_type = computeType;
    d->is_set = 1;
}

udnnStatus_t udnnSetConvolution2dDescriptor(udnnConvolutionDescriptor_t convDesc, int pad_h,
                                            int pad_w, int u, int v, int dilation_h, int dilation_w,
                                            udnnConvolutionMode_t mode, udnnDataType_t computeType)
{
    static const char fn[] = "udnnSetConvolution2dDescriptor";
    static const char *const names[3][3] = {
        {"pad_h", "pad_w"}, {"u", "v"}, {"dilation_h", "dilation_w"}};
    UDNN_LOG_API_CALL("%s(convDesc=%p, pad_h=%d, pad_w=%d, u=%d, v=%d, dilation_h=%d, "
                      "dilation_w=%d, mode=%d, computeType=%s)",
                      fn, (void *)convDesc, pad_h, pad_w, u, v, dilation_h, dilation_w, (int)mode,
                      udnn_dtype_name(computeType));
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    const int pad[2] = {pad_h, pad_w}, stride[2] = {u, v}, dil[2] = {dilation_h, dilation_w};
    UDNN_TRY(check_geometry(fn, 2, pad, stride, dil, names));
    UDNN_TRY(check_mode_and_type(fn, mode, computeType));
    store_geometry(convDesc, 2, pad, stride, dil, mode, computeType);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolution2dDescriptor(const udnnConvolutionDescriptor_t convDesc, int *pad_h,
                                            int *pad_w, int *u, int *v, int *dilation_h,
                                            int *dilation_w, udnnConvolutionMode_t *mode,
                                            udnnDataType_t *computeType)
{
    static const char fn[] = "udnnGetConvolution2dDescriptor";
    UDNN_LOG_API_CALL("%s(convDesc=%p, pad_h=%p, pad_w=%p, u=%p, v=%p, dilation_h=%p, "
                      "dilation_w=%p, mode=%p, computeType=%p)",
                      fn, (void *)convDesc, (void *)pad_h, (void *)pad_w, (void *)u, (void *)v,
                      (void *)dilation_h, (void *)dilation_w, (void *)mode, (void *)computeType);
    UDNN_TRY(check_conv_set(fn, convDesc));
    if (convDesc->nb_spatial != 2)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: convDesc has %d spatial dimensions; this call reads 2", fn,
                         convDesc->nb_spatial);
    int *const outs[6] = {pad_h, pad_w, u, v, dilation_h, dilation_w};
    const int vals[6] = {convDesc->pad[0],    convDesc->pad[1],      convDesc->stride[0],
                         convDesc->stride[1], convDesc->dilation[0], convDesc->dilation[1]};
    for (int i = 0; i < 6; i++)
        if (outs[i]) *outs[i] = vals[i];
    if (mode) *mode = convDesc->mode;
    if (computeType) *computeType = convDesc->compute_type;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetConvolutionNdDescriptor(udnnConvolutionDescriptor_t convDesc, int arrayLength,
                                            const int padA[], const int filterStrideA[],
                                            const int dilationA[], udnnConvolutionMode_t mode,
                                            udnnDataType_t computeType)
{
    static const char fn[] = "udnnSetConvolutionNdDescriptor";
    UDNN_LOG_API_CALL("%s(convDesc=%p, arrayLength=%d, padA=%p, filterStrideA=%p, dilationA=%p, "
                      "mode=%d, computeType=%s)",
                      fn, (void *)convDesc, arrayLength, (const void *)padA,
                      (const void *)filterStrideA, (const void *)dilationA, (int)mode,
                      udnn_dtype_name(computeType));
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    if (arrayLength != 2 && arrayLength != 3)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: arrayLength is %d; udnn convolves over 2 or 3 spatial dimensions", fn,
                         arrayLength);
    UDNN_TRY(udnn_check_ptr(fn, "padA", padA));
    UDNN_TRY(udnn_check_ptr(fn, "filterStrideA", filterStrideA));
    UDNN_TRY(udnn_check_ptr(fn, "dilationA", dilationA));
    UDNN_TRY(check_geometry(fn, arrayLength, padA, filterStrideA, dilationA, NULL));
    UDNN_TRY(check_mode_and_type(fn, mode, computeType));
    store_geometry(convDesc, arrayLength, padA, filterStrideA, dilationA, mode, computeType);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionNdDescriptor(const udnnConvolutionDescriptor_t convDesc,
                                            int arrayLengthRequested, int *arrayLength, int padA[],
                                            int strideA[], int dilationA[],
                                            udnnConvolutionMode_t *mode,
                                            udnnDataType_t *computeType)
{
    static const char fn[] = "udnnGetConvolutionNdDescriptor";
    UDNN_LOG_API_CALL("%s(convDesc=%p, arrayLengthRequested=%d, arrayLength=%p, padA=%p, "
                      "strideA=%p, dilationA=%p, mode=%p, computeType=%p)",
                      fn, (void *)convDesc, arrayLengthRequested, (void *)arrayLength, (void *)padA,
                      (void *)strideA, (void *)dilationA, (void *)mode, (void *)computeType);
    UDNN_TRY(check_conv_set(fn, convDesc));
    if (arrayLengthRequested < 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: arrayLengthRequested is %d; it must be >= 0",
                         fn, arrayLengthRequested);
    int copy =
        arrayLengthRequested < convDesc->nb_spatial ? arrayLengthRequested : convDesc->nb_spatial;
    if (copy > 0) {
        UDNN_TRY(udnn_check_ptr(fn, "padA", padA));
        UDNN_TRY(udnn_check_ptr(fn, "strideA", strideA));
        UDNN_TRY(udnn_check_ptr(fn, "dilationA", dilationA));
    }
    if (arrayLength) *arrayLength = convDesc->nb_spatial;
    for (int i = 0; i < copy; i++) {
        padA[i] = convDesc->pad[i];
        strideA[i] = convDesc->stride[i];
        dilationA[i] = convDesc->dilation[i];
    }
    if (mode) *mode = convDesc->mode;
    if (computeType) *computeType = convDesc->compute_type;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetConvolutionGroupCount(udnnConvolutionDescriptor_t convDesc, int groupCount)
{
    static const char fn[] = "udnnSetConvolutionGroupCount";
    UDNN_LOG_API_CALL("%s(convDesc=%p, groupCount=%d)", fn, (void *)convDesc, groupCount);
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    if (groupCount < 1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: groupCount is %d; it must be >= 1", fn,
                         groupCount);
    convDesc->groups = groupCount;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionGroupCount(udnnConvolutionDescriptor_t convDesc, int *groupCount)
{
    static const char fn[] = "udnnGetConvolutionGroupCount";
    UDNN_LOG_API_CALL("%s(convDesc=%p, groupCount=%p)", fn, (void *)convDesc, (void *)groupCount);
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    UDNN_TRY(udnn_check_ptr(fn, "groupCount", groupCount));
    *groupCount = convDesc->groups;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetConvolutionMathType(udnnConvolutionDescriptor_t convDesc,
                                        udnnMathType_t mathType)
{
    static const char fn[] = "udnnSetConvolutionMathType";
    UDNN_LOG_API_CALL("%s(convDesc=%p, mathType=%d)", fn, (void *)convDesc, (int)mathType);
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    if (!valid_math_type(mathType))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mathType %d is not a udnnMathType_t", fn,
                         (int)mathType);
    convDesc->math_type = mathType;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionMathType(udnnConvolutionDescriptor_t convDesc,
                                        udnnMathType_t *mathType)
{
    static const char fn[] = "udnnGetConvolutionMathType";
    UDNN_LOG_API_CALL("%s(convDesc=%p, mathType=%p)", fn, (void *)convDesc, (void *)mathType);
    UDNN_TRY(check_conv_ptr(fn, convDesc));
    UDNN_TRY(udnn_check_ptr(fn, "mathType", mathType));
    *mathType = convDesc->math_type;
    return UDNN_STATUS_SUCCESS;
}

/* ---- the output shape ------------------------------------------------------ */

/* Channels and groups: x's C is w's c times the groups; the groups divide
 * both C and K. */
static udnnStatus_t check_channels(const char *fn, const char *x_arg,
                                   const udnnTensorDescriptor_t x, const char *w_arg,
                                   const udnnFilterDescriptor_t w,
                                   const udnnConvolutionDescriptor_t conv)
{
    int groups = conv->groups, c = x->dims[1], k = w->dims[0];
    if (c % groups != 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: convDesc has %d groups, which do not divide the %d channels of %s",
                         fn, groups, c, x_arg);
    if (w->dims[1] != c / groups) {
        if (groups == 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has %d input channels per group, %s has %d", fn, w_arg,
                             w->dims[1], x_arg, c);
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d input channels per group, %s has %d (%d channels in %d "
                         "groups)",
                         fn, w_arg, w->dims[1], x_arg, c / groups, c, groups);
    }
    if (k % groups != 0)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d output channels, which the %d groups of convDesc do "
                         "not divide",
                         fn, w_arg, k, groups);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_conv_output_dims(const char *fn, const char *x_arg,
                                   const udnnTensorDescriptor_t x, const char *w_arg,
                                   const udnnFilterDescriptor_t w,
                                   const udnnConvolutionDescriptor_t conv, int out[UDNN_DIM_MAX])
{
    UDNN_TRY(udnn_check_tensor(fn, x_arg, x));
    UDNN_TRY(udnn_check_filter(fn, w_arg, w));
    UDNN_TRY(check_conv_set(fn, conv));
    int nb = conv->nb_spatial + 2;
    if (x->nb_dims != nb)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d dimensions; convDesc has %d spatial dimensions, so it "
                         "takes %d",
                         fn, x_arg, x->nb_dims, conv->nb_spatial, nb);
    if (w->nb_dims != nb)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn, w_arg,
                         w->nb_dims, x_arg, x->nb_dims);
    if (w->dtype != x->dtype)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has data type %s, %s has %s", fn, w_arg,
                         udnn_dtype_name(w->dtype), x_arg, udnn_dtype_name(x->dtype));
    UDNN_TRY(check_channels(fn, x_arg, x, w_arg, w, conv));
    out[0] = x->dims[0];
    out[1] = w->dims[0];
    for (int i = 0; i < conv->nb_spatial; i++) {
        /* 64-bit: a large pad or dilation must not wrap around */
        int64_t padded = (int64_t)x->dims[2 + i] + 2 * (int64_t)conv->pad[i];
        int64_t span = (int64_t)(w->dims[2 + i] - 1) * conv->dilation[i] + 1;
        if (span > padded)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has a dilated filter of %lld in dimension %d (%c), larger "
                             "than %s padded to %lld",
                             fn, w_arg, (long long)span, 2 + i, spatial_letter(conv->nb_spatial, i),
                             x_arg, (long long)padded);
        int64_t size = 1 + (padded - span) / conv->stride[i];
        if (size > INT32_MAX)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: convDesc pads dimension %d (%c) of %s to an output of %lld; "
                             "at most INT_MAX is supported",
                             fn, 2 + i, spatial_letter(conv->nb_spatial, i), x_arg,
                             (long long)size);
        out[2 + i] = (int)size;
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolution2dForwardOutputDim(const udnnConvolutionDescriptor_t convDesc,
                                                  const udnnTensorDescriptor_t inputTensorDesc,
                                                  const udnnFilterDescriptor_t filterDesc, int *n,
                                                  int *c, int *h, int *w)
{
    static const char fn[] = "udnnGetConvolution2dForwardOutputDim";
    char xbuf[UDNN_STR_DESC], wbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(convDesc=%p, inputTensorDesc=%s, filterDesc=%s, n=%p, c=%p, h=%p, w=%p)",
                      fn, (void *)convDesc, udnn_tensor_str(inputTensorDesc, xbuf, sizeof xbuf),
                      udnn_filter_str(filterDesc, wbuf, sizeof wbuf), (void *)n, (void *)c,
                      (void *)h, (void *)w);
    UDNN_TRY(check_conv_set(fn, convDesc));
    if (convDesc->nb_spatial != 2)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: convDesc has %d spatial dimensions; this call takes 2", fn,
                         convDesc->nb_spatial);
    int out[UDNN_DIM_MAX];
    UDNN_TRY(udnn_conv_output_dims(fn, "inputTensorDesc", inputTensorDesc, "filterDesc", filterDesc,
                                   convDesc, out));
    int *const dst[4] = {n, c, h, w};
    static const char *const names[4] = {"n", "c", "h", "w"};
    for (int i = 0; i < 4; i++) UDNN_TRY(udnn_check_ptr(fn, names[i], dst[i]));
    for (int i = 0; i < 4; i++) *dst[i] = out[i];
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionNdForwardOutputDim(const udnnConvolutionDescriptor_t convDesc,
                                                  const udnnTensorDescriptor_t inputTensorDesc,
                                                  const udnnFilterDescriptor_t filterDesc,
                                                  int nbDims, int tensorOuputDimA[])
{
    static const char fn[] = "udnnGetConvolutionNdForwardOutputDim";
    char xbuf[UDNN_STR_DESC], wbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(convDesc=%p, inputTensorDesc=%s, filterDesc=%s, nbDims=%d, "
                      "tensorOuputDimA=%p)",
                      fn, (void *)convDesc, udnn_tensor_str(inputTensorDesc, xbuf, sizeof xbuf),
                      udnn_filter_str(filterDesc, wbuf, sizeof wbuf), nbDims,
                      (void *)tensorOuputDimA);
    int out[UDNN_DIM_MAX];
    UDNN_TRY(udnn_conv_output_dims(fn, "inputTensorDesc", inputTensorDesc, "filterDesc", filterDesc,
                                   convDesc, out));
    if (nbDims != inputTensorDesc->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: nbDims is %d, inputTensorDesc has %d", fn,
                         nbDims, inputTensorDesc->nb_dims);
    UDNN_TRY(udnn_check_ptr(fn, "tensorOuputDimA", tensorOuputDimA));
    for (int i = 0; i < nbDims; i++) tensorOuputDimA[i] = out[i];
    return UDNN_STATUS_SUCCESS;
}
