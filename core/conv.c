/* conv.c - the convolution ops (forward, backward data, backward filter,
 * backward bias, fused conv-bias-activation) and their algorithm queries.
 * One validation routine serves the three directions and their queries. */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

/* ---- the three directions ------------------------------------------------------ */

/* What differs between forward, backward data and backward filter. */
typedef struct {
    udnn_op op;
    int algo_count;
    const char *const *algo_names;
} conv_direction;

static const char *const fwd_algo_names[] = {
    "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
    "WINOGRAD",      "WINOGRAD_NONFUSED"};
static const char *const bwd_data_algo_names[] = {"ALGO_0",     "ALGO_1",   "FFT",
                                                  "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwd_filter_algo_names[] = {
    "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};

static const conv_direction dir_fwd = {UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                       fwd_algo_names};
static const conv_direction dir_bwd_data = {
    UDNN_OP_CONV_BWD_DATA, UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, bwd_data_algo_names};
static const conv_direction dir_bwd_filter = {
    UDNN_OP_CONV_BWD_FILTER, UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, bwd_filter_algo_names};

/* The caller's names of the three tensors, for messages. */
typedef struct {
    const char *x, *w, *y;
} conv_names;

/* ---- logging --------------------------------------------------------------------- */

static const char *conv_str(const udnnConvolutionDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) return snprintf(buf, n, "NULL"), buf;
    if (!d->is_set) return snprintf(buf, n, "unset"), buf;
    const int *p = d->pad, *st = d->stride, *dl = d->dilation;
    if (d->nb_spatial == 2)
        snprintf(buf, n, "%s:pad[%d,%d]:stride[%d,%d]:dil[%d,%d]:g%d:%s",
                 d->mode == UDNN_CONVOLUTION ? "conv" : "xcorr", p[0], p[1], st[0], st[1], dl[0],
                 dl[1], d->groups, udnn_dtype_name(d->compute_type));
    else
        snprintf(buf, n, "%s:pad[%d,%d,%d]:stride[%d,%d,%d]:dil[%d,%d,%d]:g%d:%s",
                 d->mode == UDNN_CONVOLUTION ? "conv" : "xcorr", p[0], p[1], p[2], st[0], st[1],
                 st[2], dl[0], dl[1], dl[2], d->groups, udnn_dtype_name(d->compute_type));
    return buf;
}

/* ---- validation ------------------------------------------------------------------ */

/* The compute types each data type may run with, as cuDNN allows them. */
static int compute_type_fits(udnnDataType_t data, udnnDataType_t compute)
{
    switch (data) {
    case UDNN_DATA_DOUBLE: return compute == UDNN_DATA_DOUBLE;
    case UDNN_DATA_HALF: return compute == UDNN_DATA_HALF || compute == UDNN_DATA_FLOAT;
    default: return compute == UDNN_DATA_FLOAT;
    }
}

static udnnStatus_t check_compute_type(const char *fn, udnnDataType_t data, udnnDataType_t compute)
{
    if (compute_type_fits(data, compute)) return UDNN_STATUS_SUCCESS;
    const char *allowed = data == UDNN_DATA_DOUBLE ? "DOUBLE"
                          : data == UDNN_DATA_HALF ? "HALF or FLOAT"
                                                   : "FLOAT";
    return udnn_fail(UDNN_STATUS_BAD_PARAM,
                     "%s: convDesc has compute type %s; %s data takes %s compute", fn,
                     udnn_dtype_name(compute), udnn_dtype_name(data), allowed);
}

/* Validates the descriptors of any direction and builds the problem, with
 * no pointers and alpha 1, beta 0. */
static udnnStatus_t conv_problem(const char *fn, conv_names nm, udnnHandle_t h,
                                 const udnnTensorDescriptor_t x, const udnnFilterDescriptor_t w,
                                 const udnnConvolutionDescriptor_t conv,
                                 const udnnTensorDescriptor_t y, udnn_conv_problem *p)
{
    UDNN_TRY(udnn_check_handle(fn, h));
    int out[UDNN_DIM_MAX];
    UDNN_TRY(udnn_conv_output_dims(fn, nm.x, x, nm.w, w, conv, out));
    UDNN_TRY(udnn_check_tensor(fn, nm.y, y));
    UDNN_TRY(udnn_check_float_type(fn, nm.x, x));
    UDNN_TRY(udnn_check_same_type(fn, nm.x, x, nm.y, y));
    if (y->nb_dims != x->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn, nm.y,
                         y->nb_dims, nm.x, x->nb_dims);
    for (int i = 0; i < y->nb_dims; i++)
        if (y->dims[i] != out[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d, the convolution gives %d", fn,
                             nm.y, i, y->dims[i], out[i]);
    UDNN_TRY(check_compute_type(fn, x->dtype, conv->compute_type));

    memset(p, 0, sizeof *p);
    udnn_spatial_tensor_from_desc(x, &p->x);
    udnn_spatial_tensor_from_filter(w, &p->w);
    udnn_spatial_tensor_from_desc(y, &p->y);
    /* descriptors keep 2-D geometry in h, w at [0], [1]; problems in d, h, w */
    int skip = 3 - conv->nb_spatial;
    for (int i = 0; i < 3; i++) {
        int from = i - skip;
        p->pad[i] = from >= 0 ? conv->pad[from] : 0;
        p->stride[i] = from >= 0 ? conv->stride[from] : 1;
        p->dilation[i] = from >= 0 ? conv->dilation[from] : 1;
    }
    p->groups = conv->groups;
    p->mode = conv->mode;
    p->compute_type = conv->compute_type;
    p->math_type = conv->math_type;
    p->alpha = 1.0;
    p->beta = 0.0;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_algo_range(const char *fn, const conv_direction *dir, int algo)
{
    if (algo < 0 || algo >= dir->algo_count)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: algo is %d; it must be 0 to %d", fn, algo,
                         dir->algo_count - 1);
    return UDNN_STATUS_SUCCESS;
}

/* The backend's solver for algo; NOT_SUPPORTED, naming the algo and
 * whether the environment disabled it, when it has none. */
static udnnStatus_t find_solver(const char *fn, udnnHandle_t h, const conv_direction *dir,
                                udnn_op op, int algo, const udnn_solver **out)
{
    UDNN_TRY(check_algo_range(fn, dir, algo));
    int disabled;
    *out = udnn_find_solver(h, op, algo, &disabled);
    if (*out == NULL)
        return udnn_fail(UDNN_STATUS_NOT_SUPPORTED, "%s: algo %d (%s) is %s on the %s backend", fn,
                         algo, dir->algo_names[algo],
                         disabled ? "disabled by UDNN_DISABLE_SOLVERS or UDNN_DETERMINISTIC"
                                  : "not available",
                         h->backend->name);
    return UDNN_STATUS_SUCCESS;
}

/* Reads two host scalars (alpha and beta, or alpha1 and alpha2) as the
 * data type says; both must be given. */
static udnnStatus_t read_scalars(const char *fn, const char *a_arg, const void *a,
                                 const char *b_arg, const void *b, udnnDataType_t t, double *a_out,
                                 double *b_out)
{
    UDNN_TRY(udnn_check_ptr(fn, a_arg, a));
    UDNN_TRY(udnn_check_ptr(fn, b_arg, b));
    *a_out = udnn_read_scalar(a, t);
    *b_out = udnn_read_scalar(b, t);
    return UDNN_STATUS_SUCCESS;
}

/* The reference kernels read inputs while writing the output. */
static udnnStatus_t check_not_in_place(const char *fn, const char *out_arg, const void *out,
                                       const char *in_arg, const void *in)
{
    if (out == in)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s is %s; in-place convolution is not supported", fn, out_arg,
                         in_arg);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_direction(const char *fn, udnnHandle_t h, const conv_direction *dir,
                                  int algo, const udnn_conv_problem *p, void *workSpace,
                                  size_t workSpaceSizeInBytes)
{
    const udnn_solver *s;
    UDNN_TRY(find_solver(fn, h, dir, dir->op, algo, &s));
    return udnn_dispatch(h, fn, dir->op, algo, p, workSpace, workSpaceSizeInBytes);
}

/* ---- the ops ---------------------------------------------------------------------- */

udnnStatus_t udnnConvolutionForward(udnnHandle_t handle, const void *alpha,
                                    const udnnTensorDescriptor_t xDesc, const void *x,
                                    const udnnFilterDescriptor_t wDesc, const void *w,
                                    const udnnConvolutionDescriptor_t convDesc,
                                    udnnConvolutionFwdAlgo_t algo, void *workSpace,
                                    size_t workSpaceSizeInBytes, const void *beta,
                                    const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnConvolutionForward";
    char bx[UDNN_STR_DESC], bw[UDNN_STR_DESC], bc[UDNN_STR_DESC], by[UDNN_STR_DESC];
    char sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL(
        "%s(handle=%p, alpha=%s, xDesc=%s, x=%p, wDesc=%s, w=%p, convDesc=%s, "
        "algo=%d, workSpace=%p, workSpaceSizeInBytes=%zu, beta=%s, yDesc=%s, y=%p)",
        fn, (void *)handle, udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), sa, sizeof sa),
        udnn_tensor_str(xDesc, bx, sizeof bx), x, udnn_filter_str(wDesc, bw, sizeof bw), w,
        conv_str(convDesc, bc, sizeof bc), (int)algo, workSpace, workSpaceSizeInBytes,
        udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), sb, sizeof sb),
        udnn_tensor_str(yDesc, by, sizeof by), y);
    udnn_conv_problem p;
    const conv_names nm = {"xDesc", "wDesc", "yDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, wDesc, convDesc, yDesc, &p));
    UDNN_TRY(read_scalars(fn, "alpha", alpha, "beta", beta, xDesc->dtype, &p.alpha, &p.beta));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "w", w));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(check_not_in_place(fn, "y", y, "x", x));
    p.x_ptr = x;
    p.w_ptr = w;
    p.out_ptr = y;
    return run_direction(fn, handle, &dir_fwd, (int)algo, &p, workSpace, workSpaceSizeInBytes);
}

udnnStatus_t udnnConvolutionBackwardData(udnnHandle_t handle, const void *alpha,
                                         const udnnFilterDescriptor_t wDesc, const void *w,
                                         const udnnTensorDescriptor_t dyDesc, const void *dy,
                                         const udnnConvolutionDescriptor_t convDesc,
                                         udnnConvolutionBwdDataAlgo_t algo, void *workSpace,
                                         size_t workSpaceSizeInBytes, const void *beta,
                                         const udnnTensorDescriptor_t dxDesc, void *dx)
{
    static const char fn[] = "udnnConvolutionBackwardData";
    char bw[UDNN_STR_DESC], bdy[UDNN_STR_DESC], bc[UDNN_STR_DESC], bdx[UDNN_STR_DESC];
    char sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL(
        "%s(handle=%p, alpha=%s, wDesc=%s, w=%p, dyDesc=%s, dy=%p, convDesc=%s, "
        "algo=%d, workSpace=%p, workSpaceSizeInBytes=%zu, beta=%s, dxDesc=%s, "
        "dx=%p)",
        fn, (void *)handle, udnn_scalar_str(alpha, udnn_log_scalar_type(dyDesc), sa, sizeof sa),
        udnn_filter_str(wDesc, bw, sizeof bw), w, udnn_tensor_str(dyDesc, bdy, sizeof bdy), dy,
        conv_str(convDesc, bc, sizeof bc), (int)algo, workSpace, workSpaceSizeInBytes,
        udnn_scalar_str(beta, udnn_log_scalar_type(dyDesc), sb, sizeof sb),
        udnn_tensor_str(dxDesc, bdx, sizeof bdx), dx);
    udnn_conv_problem p;
    const conv_names nm = {"dxDesc", "wDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, dxDesc, wDesc, convDesc, dyDesc, &p));
    UDNN_TRY(read_scalars(fn, "alpha", alpha, "beta", beta, dxDesc->dtype, &p.alpha, &p.beta));
    UDNN_TRY(udnn_check_ptr(fn, "w", w));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    UDNN_TRY(check_not_in_place(fn, "dx", dx, "dy", dy));
    p.w_ptr = w;
    p.y_ptr = dy;
    p.out_ptr = dx;
    return run_direction(fn, handle, &dir_bwd_data, (int)algo, &p, workSpace, workSpaceSizeInBytes);
}

udnnStatus_t udnnConvolutionBackwardFilter(udnnHandle_t handle, const void *alpha,
                                           const udnnTensorDescriptor_t xDesc, const void *x,
                                           const udnnTensorDescriptor_t dyDesc, const void *dy,
                                           const udnnConvolutionDescriptor_t convDesc,
                                           udnnConvolutionBwdFilterAlgo_t algo, void *workSpace,
                                           size_t workSpaceSizeInBytes, const void *beta,
                                           const udnnFilterDescriptor_t dwDesc, void *dw)
{
    static const char fn[] = "udnnConvolutionBackwardFilter";
    char bx[UDNN_STR_DESC], bdy[UDNN_STR_DESC], bc[UDNN_STR_DESC], bdw[UDNN_STR_DESC];
    char sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL(
        "%s(handle=%p, alpha=%s, xDesc=%s, x=%p, dyDesc=%s, dy=%p, convDesc=%s, "
        "algo=%d, workSpace=%p, workSpaceSizeInBytes=%zu, beta=%s, dwDesc=%s, "
        "dw=%p)",
        fn, (void *)handle, udnn_scalar_str(alpha, udnn_log_scalar_type(xDesc), sa, sizeof sa),
        udnn_tensor_str(xDesc, bx, sizeof bx), x, udnn_tensor_str(dyDesc, bdy, sizeof bdy), dy,
        conv_str(convDesc, bc, sizeof bc), (int)algo, workSpace, workSpaceSizeInBytes,
        udnn_scalar_str(beta, udnn_log_scalar_type(xDesc), sb, sizeof sb),
        udnn_filter_str(dwDesc, bdw, sizeof bdw), dw);
    udnn_conv_problem p;
    const conv_names nm = {"xDesc", "dwDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, dwDesc, convDesc, dyDesc, &p));
    UDNN_TRY(read_scalars(fn, "alpha", alpha, "beta", beta, xDesc->dtype, &p.alpha, &p.beta));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_ptr(fn, "dw", dw));
    UDNN_TRY(check_not_in_place(fn, "dw", dw, "x", x));
    UDNN_TRY(check_not_in_place(fn, "dw", dw, "dy", dy));
    p.x_ptr = x;
    p.y_ptr = dy;
    p.out_ptr = dw;
    return run_direction(fn, handle, &dir_bwd_filter, (int)algo, &p, workSpace,
                         workSpaceSizeInBytes);
}

/* A per-channel tensor of `of`'s rank: 1 x C x 1 ... (C = of's dim 1). */
static udnnStatus_t check_channel_vector(const char *fn, const char *arg,
                                         const udnnTensorDescriptor_t d, const char *of_arg,
                                         const udnnTensorDescriptor_t of)
{
    if (d->nb_dims != of->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn, arg,
                         d->nb_dims, of_arg, of->nb_dims);
    for (int i = 0; i < d->nb_dims; i++) {
        if (i == 1 && d->dims[1] != of->dims[1])
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d channels, %s has %d", fn, arg,
                             d->dims[1], of_arg, of->dims[1]);
        if (i != 1 && d->dims[i] != 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d; it must be 1 (1 x C x 1 ...)", fn,
                             arg, i, d->dims[i]);
    }
    return udnn_check_same_type(fn, of_arg, of, arg, d);
}

udnnStatus_t udnnConvolutionBackwardBias(udnnHandle_t handle, const void *alpha,
                                         const udnnTensorDescriptor_t dyDesc, const void *dy,
                                         const void *beta, const udnnTensorDescriptor_t dbDesc,
                                         void *db)
{
    static const char fn[] = "udnnConvolutionBackwardBias";
    char bdy[UDNN_STR_DESC], bdb[UDNN_STR_DESC], sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, alpha=%s, dyDesc=%s, dy=%p, beta=%s, dbDesc=%s, db=%p)", fn,
                      (void *)handle,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(dyDesc), sa, sizeof sa),
                      udnn_tensor_str(dyDesc, bdy, sizeof bdy), dy,
                      udnn_scalar_str(beta, udnn_log_scalar_type(dyDesc), sb, sizeof sb),
                      udnn_tensor_str(dbDesc, bdb, sizeof bdb), db);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_tensor(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_tensor(fn, "dbDesc", dbDesc));
    UDNN_TRY(udnn_check_float_type(fn, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_rank(fn, "dyDesc", dyDesc, 4, 5));
    UDNN_TRY(check_channel_vector(fn, "dbDesc", dbDesc, "dyDesc", dyDesc));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_ptr(fn, "db", db));
    udnn_conv_bias_problem p;
    memset(&p, 0, sizeof p);
    udnn_spatial_tensor_from_desc(dyDesc, &p.dy);
    udnn_spatial_tensor_from_desc(dbDesc, &p.db);
    p.alpha = udnn_read_scalar(alpha, dyDesc->dtype);
    p.beta = udnn_read_scalar(beta, dyDesc->dtype);
    p.dy_ptr = dy;
    p.db_ptr = db;
    return udnn_dispatch(handle, fn, UDNN_OP_CONV_BWD_BIAS, -1, &p, NULL, 0);
}

/* z is y's shape and type; y itself is allowed when laid out alike. */
static udnnStatus_t check_z(const char *fn, const udnnTensorDescriptor_t zDesc, const void *z,
                            const udnnTensorDescriptor_t yDesc, const void *y)
{
    UDNN_TRY(udnn_check_same_dims(fn, "yDesc", yDesc, "zDesc", zDesc));
    UDNN_TRY(udnn_check_same_type(fn, "yDesc", yDesc, "zDesc", zDesc));
    if (z == y)
        for (int i = 0; i < yDesc->nb_dims; i++)
            if (yDesc->dims[i] > 1 && zDesc->strides[i] != yDesc->strides[i])
                return udnn_fail(UDNN_STATUS_BAD_PARAM,
                                 "%s: z is y, but zDesc has stride %d in dimension %d and yDesc "
                                 "%d",
                                 fn, zDesc->strides[i], i, yDesc->strides[i]);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnConvolutionBiasActivationForward(
    udnnHandle_t handle, const void *alpha1, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnFilterDescriptor_t wDesc, const void *w, const udnnConvolutionDescriptor_t convDesc,
    udnnConvolutionFwdAlgo_t algo, void *workSpace, size_t workSpaceSizeInBytes, const void *alpha2,
    const udnnTensorDescriptor_t zDesc, const void *z, const udnnTensorDescriptor_t biasDesc,
    const void *bias, const udnnActivationDescriptor_t activationDesc,
    const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnConvolutionBiasActivationForward";
    char bx[UDNN_STR_DESC], bw[UDNN_STR_DESC], bc[UDNN_STR_DESC], bz[UDNN_STR_DESC];
    char bb[UDNN_STR_DESC], by[UDNN_STR_DESC], s1[UDNN_STR_SCALAR], s2[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL(
        "%s(handle=%p, alpha1=%s, xDesc=%s, x=%p, wDesc=%s, w=%p, convDesc=%s, algo=%d, "
        "workSpace=%p, workSpaceSizeInBytes=%zu, alpha2=%s, zDesc=%s, z=%p, biasDesc=%s, "
        "bias=%p, activationDesc=%p (mode %d, coef %g), yDesc=%s, y=%p)",
        fn, (void *)handle, udnn_scalar_str(alpha1, udnn_log_scalar_type(xDesc), s1, sizeof s1),
        udnn_tensor_str(xDesc, bx, sizeof bx), x, udnn_filter_str(wDesc, bw, sizeof bw), w,
        conv_str(convDesc, bc, sizeof bc), (int)algo, workSpace, workSpaceSizeInBytes,
        udnn_scalar_str(alpha2, udnn_log_scalar_type(xDesc), s2, sizeof s2),
        udnn_tensor_str(zDesc, bz, sizeof bz), z, udnn_tensor_str(biasDesc, bb, sizeof bb), bias,
        (void *)activationDesc, activationDesc ? (int)activationDesc->params.mode : -1,
        activationDesc ? activationDesc->params.coef : 0.0, udnn_tensor_str(yDesc, by, sizeof by),
        y);
    udnn_conv_problem p;
    const conv_names nm = {"xDesc", "wDesc", "yDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, wDesc, convDesc, yDesc, &p));
    UDNN_TRY(udnn_check_tensor(fn, "zDesc", zDesc));
    UDNN_TRY(udnn_check_tensor(fn, "biasDesc", biasDesc));
    UDNN_TRY(udnn_check_ptr(fn, "activationDesc", activationDesc));
    UDNN_TRY(check_channel_vector(fn, "biasDesc", biasDesc, "yDesc", yDesc));
    UDNN_TRY(
        read_scalars(fn, "alpha1", alpha1, "alpha2", alpha2, xDesc->dtype, &p.alpha, &p.alpha2));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "w", w));
    UDNN_TRY(udnn_check_ptr(fn, "z", z));
    UDNN_TRY(udnn_check_ptr(fn, "bias", bias));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(check_z(fn, zDesc, z, yDesc, y));
    UDNN_TRY(check_not_in_place(fn, "y", y, "x", x));
    p.x_ptr = x;
    p.w_ptr = w;
    p.out_ptr = y;
    udnn_spatial_tensor_from_desc(zDesc, &p.z);
    udnn_spatial_tensor_from_desc(biasDesc, &p.bias);
    p.z_ptr = z;
    p.bias_ptr = bias;
    p.act = activationDesc->params;
    const udnn_solver *s;
    UDNN_TRY(find_solver(fn, handle, &dir_fwd, UDNN_OP_CONV_BIAS_ACT, (int)algo, &s));
    return udnn_dispatch(handle, fn, UDNN_OP_CONV_BIAS_ACT, (int)algo, &p, workSpace,
                         workSpaceSizeInBytes);
}

/* ---- algorithm queries -------------------------------------------------------------- */

static udnnStatus_t max_count(const char *fn, udnnHandle_t handle, int *count, int value)
{
    UDNN_LOG_API_CALL("%s(handle=%p, count=%p)", fn, (void *)handle, (void *)count);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "count", count));
    *count = value;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionForwardAlgorithmMaxCount(udnnHandle_t handle, int *count)
{
    return max_count("udnnGetConvolutionForwardAlgorithmMaxCount", handle, count,
                     UDNN_CONVOLUTION_FWD_ALGO_COUNT);
}

udnnStatus_t udnnGetConvolutionBackwardDataAlgorithmMaxCount(udnnHandle_t handle, int *count)
{
    return max_count("udnnGetConvolutionBackwardDataAlgorithmMaxCount", handle, count,
                     UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT);
}

udnnStatus_t udnnGetConvolutionBackwardFilterAlgorithmMaxCount(udnnHandle_t handle, int *count)
{
    return max_count("udnnGetConvolutionBackwardFilterAlgorithmMaxCount", handle, count,
                     UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT);
}

static udnnStatus_t check_request(const char *fn, int requested, const int *returned,
                                  const void *perf)
{
    if (requested < 1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: requestedAlgoCount is %d; it must be >= 1", fn,
                         requested);
    UDNN_TRY(udnn_check_ptr(fn, "returnedAlgoCount", returned));
    UDNN_TRY(udnn_check_ptr(fn, "perfResults", perf));
    return UDNN_STATUS_SUCCESS;
}

/* Ranks the direction's algorithms into ranks[] (sized for every algo). */
static udnnStatus_t rank(const char *fn, udnnHandle_t h, const conv_direction *dir,
                         udnn_conv_problem *p, int measure, void *ws, size_t ws_bytes,
                         udnn_algo_rank *ranks, int *count)
{
    *count = udnn_rank_algos(h, dir->op, dir->algo_count, p, measure, ws, ws_bytes, ranks,
                             dir->algo_count);
    if (*count < 0) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of host memory", fn);
    return UDNN_STATUS_SUCCESS;
}

/* The three perf structs share one layout but are distinct types. */
#define FILL_PERF(perf, ranks, count, math)                                                        \
    do {                                                                                           \
        for (int i_ = 0; i_ < (count); i_++) {                                                     \
            memset(&(perf)[i_], 0, sizeof(perf)[i_]);                                              \
            (perf)[i_].algo = (ranks)[i_].algo;                                                    \
            (perf)[i_].status = (ranks)[i_].status;                                                \
            (perf)[i_].time = (ranks)[i_].time_ms;                                                 \
            (perf)[i_].memory = (ranks)[i_].memory;                                                \
            (perf)[i_].determinism =                                                               \
                (ranks)[i_].deterministic ? UDNN_DETERMINISTIC : UDNN_NON_DETERMINISTIC;           \
            (perf)[i_].mathType = (math);                                                          \
        }                                                                                          \
    } while (0)

/* Heuristic ranking (no run) of every algorithm; at most `requested`. */
static udnnStatus_t heuristic(const char *fn, udnnHandle_t h, const conv_direction *dir,
                              udnn_conv_problem *p, int requested, udnn_algo_rank *ranks,
                              int *count)
{
    UDNN_TRY(rank(fn, h, dir, p, 0, NULL, 0, ranks, count));
    if (*count > requested) *count = requested;
    return UDNN_STATUS_SUCCESS;
}

/* Scratch buffers in the backend's memory for Find. */
typedef struct {
    void *ptr[4]; /* x, w, y, workspace */
} scratch;

static size_t tensor_bytes(const udnn_tensor *t)
{
    size_t span = 1;
    for (int i = 0; i < t->rank; i++) span += (size_t)(t->dims[i] - 1) * (size_t)t->strides[i];
    return span * udnn_dtype_size(t->dtype);
}

static void scratch_free(udnnHandle_t h, scratch *s)
{
    for (int i = 0; i < 4; i++)
        if (s->ptr[i] != NULL) udnnFree(h, s->ptr[i]);
}

static udnnStatus_t scratch_alloc(const char *fn, udnnHandle_t h, scratch *s, int i, size_t bytes,
                                  const char *what)
{
    if (udnnMalloc(h, &s->ptr[i], bytes) != UDNN_STATUS_SUCCESS) {
        s->ptr[i] = NULL;
        return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: cannot allocate %zu bytes of scratch %s",
                         fn, bytes, what);
    }
    return UDNN_STATUS_SUCCESS;
}

/* Allocates zeroed x, w, y and the largest workspace any applicable solver
 * asks for, measures every algorithm on them, and frees them. */
static udnnStatus_t measure_on_scratch(const char *fn, udnnHandle_t h, const conv_direction *dir,
                                       udnn_conv_problem *p, int requested, udnn_algo_rank *ranks,
                                       int *count)
{
    size_t ws_bytes = 0;
    UDNN_TRY(rank(fn, h, dir, p, 0, NULL, 0, ranks, count));
    for (int i = 0; i < *count; i++)
        if (ranks[i].status == UDNN_STATUS_SUCCESS && ranks[i].memory > ws_bytes)
            ws_bytes = ranks[i].memory;
    scratch s = {{NULL, NULL, NULL, NULL}};
    const udnn_tensor *t[3] = {&p->x, &p->w, &p->y};
    static const char *const what[3] = {"x", "w", "y"};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    for (int i = 0; i < 3 && st == UDNN_STATUS_SUCCESS; i++) {
        size_t bytes = tensor_bytes(t[i]);
        st = scratch_alloc(fn, h, &s, i, bytes, what[i]);
        if (st == UDNN_STATUS_SUCCESS) st = udnnMemset(h, s.ptr[i], 0, bytes);
    }
    if (st == UDNN_STATUS_SUCCESS && ws_bytes > 0)
        st = scratch_alloc(fn, h, &s, 3, ws_bytes, "workspace");
    if (st == UDNN_STATUS_SUCCESS) {
        p->x_ptr = s.ptr[0];
        p->w_ptr = s.ptr[1];
        p->y_ptr = s.ptr[2];
        p->out_ptr = dir->op == UDNN_OP_CONV_FWD        ? s.ptr[2]
                     : dir->op == UDNN_OP_CONV_BWD_DATA ? s.ptr[0]
                                                        : s.ptr[1];
        st = rank(fn, h, dir, p, 1, s.ptr[3], ws_bytes, ranks, count);
    }
    scratch_free(h, &s);
    if (st == UDNN_STATUS_SUCCESS && *count > requested) *count = requested;
    return st;
}

/* Measures every algorithm on the caller's buffers. */
static udnnStatus_t measure_in_place(const char *fn, udnnHandle_t h, const conv_direction *dir,
                                     udnn_conv_problem *p, int requested, void *ws, size_t ws_bytes,
                                     udnn_algo_rank *ranks, int *count)
{
    UDNN_TRY(rank(fn, h, dir, p, 1, ws, ws != NULL ? ws_bytes : 0, ranks, count));
    if (*count > requested) *count = requested;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t workspace_size(const char *fn, udnnHandle_t h, const conv_direction *dir,
                                   const udnn_conv_problem *p, int algo, size_t *size)
{
    UDNN_TRY(udnn_check_ptr(fn, "sizeInBytes", size));
    const udnn_solver *s;
    UDNN_TRY(find_solver(fn, h, dir, dir->op, algo, &s));
    const char *why = NULL;
    if (s->applicable != NULL && !s->applicable(p, &why))
        return udnn_fail(UDNN_STATUS_NOT_SUPPORTED, "%s: algo %d (%s) cannot run this problem: %s",
                         fn, algo, dir->algo_names[algo], why ? why : "not applicable");
    *size = s->workspace != NULL ? s->workspace(p) : 0;
    return UDNN_STATUS_SUCCESS;
}

/* ---- forward queries ---- */

/* API logs of the queries, one per argument pattern. */
static void log_fwd_query(const char *fn, udnnHandle_t h, const udnnTensorDescriptor_t x,
                          const udnnFilterDescriptor_t w, const udnnConvolutionDescriptor_t c,
                          const udnnTensorDescriptor_t y, const char *last, int value)
{
    char bx[UDNN_STR_DESC], bw[UDNN_STR_DESC], bc[UDNN_STR_DESC], by[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, xDesc=%s, wDesc=%s, convDesc=%s, yDesc=%s, %s=%d)", fn,
                      (void *)h, udnn_tensor_str(x, bx, sizeof bx),
                      udnn_filter_str(w, bw, sizeof bw), conv_str(c, bc, sizeof bc),
                      udnn_tensor_str(y, by, sizeof by), last, value);
}

static void log_bwd_data_query(const char *fn, udnnHandle_t h, const udnnFilterDescriptor_t w,
                               const udnnTensorDescriptor_t dy, const udnnConvolutionDescriptor_t c,
                               const udnnTensorDescriptor_t dx, const char *last, int value)
{
    char bw[UDNN_STR_DESC], bdy[UDNN_STR_DESC], bc[UDNN_STR_DESC], bdx[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, wDesc=%s, dyDesc=%s, convDesc=%s, dxDesc=%s, %s=%d)", fn,
                      (void *)h, udnn_filter_str(w, bw, sizeof bw),
                      udnn_tensor_str(dy, bdy, sizeof bdy), conv_str(c, bc, sizeof bc),
                      udnn_tensor_str(dx, bdx, sizeof bdx), last, value);
}

static void log_bwd_filter_query(const char *fn, udnnHandle_t h, const udnnTensorDescriptor_t x,
                                 const udnnTensorDescriptor_t dy,
                                 const udnnConvolutionDescriptor_t c,
                                 const udnnFilterDescriptor_t dw, const char *last, int value)
{
    char bx[UDNN_STR_DESC], bdy[UDNN_STR_DESC], bc[UDNN_STR_DESC], bdw[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, xDesc=%s, dyDesc=%s, convDesc=%s, dwDesc=%s, %s=%d)", fn,
                      (void *)h, udnn_tensor_str(x, bx, sizeof bx),
                      udnn_tensor_str(dy, bdy, sizeof bdy), conv_str(c, bc, sizeof bc),
                      udnn_filter_str(dw, bdw, sizeof bdw), last, value);
}

udnnStatus_t udnnGetConvolutionForwardAlgorithm_v7(
    udnnHandle_t handle, const udnnTensorDescriptor_t srcDesc,
    const udnnFilterDescriptor_t filterDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t destDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionFwdAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnGetConvolutionForwardAlgorithm_v7";
    log_fwd_query(fn, handle, srcDesc, filterDesc, convDesc, destDesc, "requestedAlgoCount",
                  requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n;
    const conv_names nm = {"srcDesc", "filterDesc", "destDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, srcDesc, filterDesc, convDesc, destDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(heuristic(fn, handle, &dir_fwd, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionForwardAlgorithm(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const udnnFilterDescriptor_t wDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t yDesc,
    const int requestedAlgoCount, int *returnedAlgoCount, udnnConvolutionFwdAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnFindConvolutionForwardAlgorithm";
    log_fwd_query(fn, handle, xDesc, wDesc, convDesc, yDesc, "requestedAlgoCount",
                  requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n;
    const conv_names nm = {"xDesc", "wDesc", "yDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, wDesc, convDesc, yDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(measure_on_scratch(fn, handle, &dir_fwd, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionForwardAlgorithmEx(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnFilterDescriptor_t wDesc, const void *w, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t yDesc, void *y, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionFwdAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    static const char fn[] = "udnnFindConvolutionForwardAlgorithmEx";
    log_fwd_query(fn, handle, xDesc, wDesc, convDesc, yDesc, "requestedAlgoCount",
                  requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n;
    const conv_names nm = {"xDesc", "wDesc", "yDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, wDesc, convDesc, yDesc, &p));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "w", w));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(check_not_in_place(fn, "y", y, "x", x));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    p.x_ptr = x;
    p.w_ptr = w;
    p.out_ptr = y;
    UDNN_TRY(measure_in_place(fn, handle, &dir_fwd, &p, requestedAlgoCount, workSpace,
                              workSpaceSizeInBytes, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionForwardWorkspaceSize(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const udnnFilterDescriptor_t wDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t yDesc,
    udnnConvolutionFwdAlgo_t algo, size_t *sizeInBytes)
{
    static const char fn[] = "udnnGetConvolutionForwardWorkspaceSize";
    log_fwd_query(fn, handle, xDesc, wDesc, convDesc, yDesc, "algo", (int)algo);
    udnn_conv_problem p;
    const conv_names nm = {"xDesc", "wDesc", "yDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, wDesc, convDesc, yDesc, &p));
    return workspace_size(fn, handle, &dir_fwd, &p, (int)algo, sizeInBytes);
}

/* ---- backward data queries ---- */

udnnStatus_t udnnGetConvolutionBackwardDataAlgorithm_v7(
    udnnHandle_t handle, const udnnFilterDescriptor_t filterDesc,
    const udnnTensorDescriptor_t diffDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnGetConvolutionBackwardDataAlgorithm_v7";
    log_bwd_data_query(fn, handle, filterDesc, diffDesc, convDesc, gradDesc, "requestedAlgoCount",
                       requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n;
    const conv_names nm = {"gradDesc", "filterDesc", "diffDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, gradDesc, filterDesc, convDesc, diffDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(heuristic(fn, handle, &dir_bwd_data, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionBackwardDataAlgorithm(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc, const udnnTensorDescriptor_t dyDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t dxDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdDataAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnFindConvolutionBackwardDataAlgorithm";
    log_bwd_data_query(fn, handle, wDesc, dyDesc, convDesc, dxDesc, "requestedAlgoCount",
                       requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n;
    const conv_names nm = {"dxDesc", "wDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, dxDesc, wDesc, convDesc, dyDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(measure_on_scratch(fn, handle, &dir_bwd_data, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionBackwardDataAlgorithmEx(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc, const void *w,
    const udnnTensorDescriptor_t dyDesc, const void *dy, const udnnConvolutionDescriptor_t convDesc,
    const udnnTensorDescriptor_t dxDesc, void *dx, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionBwdDataAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    static const char fn[] = "udnnFindConvolutionBackwardDataAlgorithmEx";
    log_bwd_data_query(fn, handle, wDesc, dyDesc, convDesc, dxDesc, "requestedAlgoCount",
                       requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int n;
    const conv_names nm = {"dxDesc", "wDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, dxDesc, wDesc, convDesc, dyDesc, &p));
    UDNN_TRY(udnn_check_ptr(fn, "w", w));
    UDNN_TRY(udnn_check_ptr(fn, "dy", dy));
    UDNN_TRY(udnn_check_ptr(fn, "dx", dx));
    UDNN_TRY(check_not_in_place(fn, "dx", dx, "dy", dy));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    p.w_ptr = w;
    p.y_ptr = dy;
    p.out_ptr = dx;
    UDNN_TRY(measure_in_place(fn, handle, &dir_bwd_data, &p, requestedAlgoCount, workSpace,
                              workSpaceSizeInBytes, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionBackwardDataWorkspaceSize(
    udnnHandle_t handle, const udnnFilterDescriptor_t wDesc, const udnnTensorDescriptor_t dyDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnTensorDescriptor_t dxDesc,
    udnnConvolutionBwdDataAlgo_t algo, size_t *sizeInBytes)
{
    static const char fn[] = "udnnGetConvolutionBackwardDataWorkspaceSize";
    log_bwd_data_query(fn, handle, wDesc, dyDesc, convDesc, dxDesc, "algo", (int)algo);
    udnn_conv_problem p;
    const conv_names nm = {"dxDesc", "wDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, dxDesc, wDesc, convDesc, dyDesc, &p));
    return workspace_size(fn, handle, &dir_bwd_data, &p, (int)algo, sizeInBytes);
}

/* ---- backward filter queries ---- */

udnnStatus_t udnnGetConvolutionBackwardFilterAlgorithm_v7(
    udnnHandle_t handle, const udnnTensorDescriptor_t srcDesc,
    const udnnTensorDescriptor_t diffDesc, const udnnConvolutionDescriptor_t convDesc,
    const udnnFilterDescriptor_t gradDesc, const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnGetConvolutionBackwardFilterAlgorithm_v7";
    log_bwd_filter_query(fn, handle, srcDesc, diffDesc, convDesc, gradDesc, "requestedAlgoCount",
                         requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n;
    const conv_names nm = {"srcDesc", "gradDesc", "diffDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, srcDesc, gradDesc, convDesc, diffDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(heuristic(fn, handle, &dir_bwd_filter, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionBackwardFilterAlgorithm(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const udnnTensorDescriptor_t dyDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnFilterDescriptor_t dwDesc,
    const int requestedAlgoCount, int *returnedAlgoCount,
    udnnConvolutionBwdFilterAlgoPerf_t *perfResults)
{
    static const char fn[] = "udnnFindConvolutionBackwardFilterAlgorithm";
    log_bwd_filter_query(fn, handle, xDesc, dyDesc, convDesc, dwDesc, "requestedAlgoCount",
                         requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n;
    const conv_names nm = {"xDesc", "dwDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, dwDesc, convDesc, dyDesc, &p));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    UDNN_TRY(measure_on_scratch(fn, handle, &dir_bwd_filter, &p, requestedAlgoCount, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFindConvolutionBackwardFilterAlgorithmEx(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const void *x,
    const udnnTensorDescriptor_t dyDesc, const void *y, const udnnConvolutionDescriptor_t convDesc,
    const udnnFilterDescriptor_t dwDesc, void *dw, const int requestedAlgoCount,
    int *returnedAlgoCount, udnnConvolutionBwdFilterAlgoPerf_t *perfResults, void *workSpace,
    size_t workSpaceSizeInBytes)
{
    static const char fn[] = "udnnFindConvolutionBackwardFilterAlgorithmEx";
    log_bwd_filter_query(fn, handle, xDesc, dyDesc, convDesc, dwDesc, "requestedAlgoCount",
                         requestedAlgoCount);
    udnn_conv_problem p;
    udnn_algo_rank ranks[UDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int n;
    const conv_names nm = {"xDesc", "dwDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, dwDesc, convDesc, dyDesc, &p));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_ptr(fn, "dw", dw));
    UDNN_TRY(check_not_in_place(fn, "dw", dw, "x", x));
    UDNN_TRY(check_not_in_place(fn, "dw", dw, "y", y));
    UDNN_TRY(check_request(fn, requestedAlgoCount, returnedAlgoCount, perfResults));
    p.x_ptr = x;
    p.y_ptr = y;
    p.out_ptr = dw;
    UDNN_TRY(measure_in_place(fn, handle, &dir_bwd_filter, &p, requestedAlgoCount, workSpace,
                              workSpaceSizeInBytes, ranks, &n));
    FILL_PERF(perfResults, ranks, n, convDesc->math_type);
    *returnedAlgoCount = n;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetConvolutionBackwardFilterWorkspaceSize(
    udnnHandle_t handle, const udnnTensorDescriptor_t xDesc, const udnnTensorDescriptor_t dyDesc,
    const udnnConvolutionDescriptor_t convDesc, const udnnFilterDescriptor_t gradDesc,
    udnnConvolutionBwdFilterAlgo_t algo, size_t *sizeInBytes)
{
    static const char fn[] = "udnnGetConvolutionBackwardFilterWorkspaceSize";
    log_bwd_filter_query(fn, handle, xDesc, dyDesc, convDesc, gradDesc, "algo", (int)algo);
    udnn_conv_problem p;
    const conv_names nm = {"xDesc", "gradDesc", "dyDesc"};
    UDNN_TRY(conv_problem(fn, nm, handle, xDesc, gradDesc, convDesc, dyDesc, &p));
    return workspace_size(fn, handle, &dir_bwd_filter, &p, (int)algo, sizeInBytes);
}
