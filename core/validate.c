/* validate.c - argument checks shared by every public call, and the
 * conversion of descriptors into the backends' tensors. */
#include <math.h>
#include <string.h>

#include "core/core.h"

udnnStatus_t udnn_check_handle(const char *fn, udnnHandle_t h)
{
    if (h == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: handle is NULL", fn);
    if (h->backend == NULL)
        return udnn_fail(UDNN_STATUS_NOT_INITIALIZED, "%s: handle is not initialized", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_ptr(const char *fn, const char *arg, const void *p)
{
    if (p == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is NULL", fn, arg);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_tensor(const char *fn, const char *arg, const udnnTensorDescriptor_t d)
{
    if (d == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is NULL", fn, arg);
    if (!d->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has not been set", fn, arg);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_filter(const char *fn, const char *arg, const udnnFilterDescriptor_t d)
{
    if (d == NULL) return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is NULL", fn, arg);
    if (!d->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has not been set", fn, arg);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_float_type(const char *fn, const char *arg,
                                   const udnnTensorDescriptor_t d)
{
    switch (d->dtype) {
    case UDNN_DATA_FLOAT:
    case UDNN_DATA_DOUBLE:
    case UDNN_DATA_HALF:
    case UDNN_DATA_BFLOAT16: return UDNN_STATUS_SUCCESS;
    default:
        return udnn_fail(UDNN_STATUS_NOT_SUPPORTED,
                         "%s: %s has data type %s; this op takes FLOAT, DOUBLE, HALF or "
                         "BFLOAT16",
                         fn, arg, udnn_dtype_name(d->dtype));
    }
}

udnnStatus_t udnn_check_same_dims(const char *fn, const char *arg_a,
                                  const udnnTensorDescriptor_t a, const char *arg_b,
                                  const udnnTensorDescriptor_t b)
{
    if (a->nb_dims != b->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn,
                         arg_b, b->nb_dims, arg_a, a->nb_dims);
    for (int i = 0; i < a->nb_dims; i++)
        if (a->dims[i] != b->dims[i])
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has dimension %d of size %d, %s has %d",
                             fn, arg_b, i, b->dims[i], arg_a, a->dims[i]);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_same_type(const char *fn, const char *arg_a,
                                  const udnnTensorDescriptor_t a, const char *arg_b,
                                  const udnnTensorDescriptor_t b)
{
    if (a->dtype != b->dtype)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has data type %s, %s has %s", fn, arg_b,
                         udnn_dtype_name(b->dtype), arg_a, udnn_dtype_name(a->dtype));
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_rank(const char *fn, const char *arg, const udnnTensorDescriptor_t d,
                             int lo, int hi)
{
    if (d->nb_dims < lo || d->nb_dims > hi) {
        if (lo == hi)
            return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions; this op takes %d",
                             fn, arg, d->nb_dims, lo);
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has %d dimensions; this op takes %d to %d", fn, arg,
                         d->nb_dims, lo, hi);
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_in_place(const char *fn, const char *out_arg, const char *out_desc_arg,
                                 const udnnTensorDescriptor_t out_desc, const void *out,
                                 const char *in_arg, const char *in_desc_arg,
                                 const udnnTensorDescriptor_t in_desc, const void *in)
{
    if (out != in) return UDNN_STATUS_SUCCESS;
    int same = out_desc->dtype == in_desc->dtype && out_desc->nb_dims == in_desc->nb_dims;
    for (int i = 0; same && i < out_desc->nb_dims; i++)
        same = out_desc->dims[i] == in_desc->dims[i] &&
               out_desc->strides[i] == in_desc->strides[i];
    if (same) return UDNN_STATUS_SUCCESS;
    return udnn_fail(UDNN_STATUS_BAD_PARAM,
                     "%s: %s is the buffer of %s (in place), but %s and %s differ in type, dims "
                     "or strides; in place needs one layout",
                     fn, out_arg, in_arg, out_desc_arg, in_desc_arg);
}

udnnStatus_t udnn_check_not_in_place(const char *fn, const char *out_arg, const void *out,
                                     const char *in_arg, const void *in)
{
    if (out != in) return UDNN_STATUS_SUCCESS;
    return udnn_fail(UDNN_STATUS_BAD_PARAM,
                     "%s: %s is the buffer of %s; this op does not run in place", fn, out_arg,
                     in_arg);
}

udnnStatus_t udnn_check_epsilon(const char *fn, double epsilon, double min)
{
    if (!(epsilon >= min) || isinf(epsilon))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: epsilon is %g; it must be finite and >= %g",
                         fn, epsilon, min);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnn_check_pair(const char *fn, const char *a_arg, const void *a, const char *b_arg,
                             const void *b)
{
    if ((a == NULL) == (b == NULL)) return UDNN_STATUS_SUCCESS;
    return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s is NULL but %s is not; give both or neither",
                     fn, a == NULL ? a_arg : b_arg, a == NULL ? b_arg : a_arg);
}

double udnn_read_scalar(const void *p, udnnDataType_t t)
{
    if (t == UDNN_DATA_DOUBLE) return *(const double *)p;
    return (double)*(const float *)p;
}

size_t udnn_dtype_size(udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_FLOAT: return 4;
    case UDNN_DATA_DOUBLE: return 8;
    case UDNN_DATA_HALF: return 2;
    case UDNN_DATA_BFLOAT16: return 2;
    case UDNN_DATA_INT8: return 1;
    case UDNN_DATA_INT32: return 4;
    case UDNN_DATA_INT64: return 8;
    }
    return 0;
}

void udnn_tensor_from_desc(const udnnTensorDescriptor_t d, udnn_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = d->dtype;
    t->rank = d->nb_dims;
    for (int i = 0; i < d->nb_dims; i++) {
        t->dims[i] = d->dims[i];
        t->strides[i] = d->strides[i];
    }
}

/* Widens n, c, h, w (rank 4) to n, c, 1, h, w; rank 5 stays. */
static void widen_to_spatial(udnn_tensor *t)
{
    if (t->rank == 4) {
        t->dims[4] = t->dims[3];
        t->strides[4] = t->strides[3];
        t->dims[3] = t->dims[2];
        t->strides[3] = t->strides[2];
        t->dims[2] = 1;
        t->strides[2] = t->strides[3] * t->dims[3];
        t->rank = 5;
    }
}

void udnn_spatial_tensor_from_desc(const udnnTensorDescriptor_t d, udnn_tensor *t)
{
    udnn_tensor_from_desc(d, t);
    widen_to_spatial(t);
}

void udnn_packed_strides(udnnTensorFormat_t fmt, int nb_dims, const int dims[],
                         int64_t strides[])
{
    if (fmt == UDNN_TENSOR_NHWC && nb_dims >= 3) {
        /* c innermost, then the spatial dims from last to first, then n */
        int64_t s = 1;
        strides[1] = s;
        s *= dims[1];
        for (int i = nb_dims - 1; i >= 2; i--) {
            strides[i] = s;
            s *= dims[i];
        }
        strides[0] = s;
    } else {
        int64_t s = 1;
        for (int i = nb_dims - 1; i >= 0; i--) {
            strides[i] = s;
            s *= dims[i];
        }
    }
}

void udnn_spatial_tensor_from_filter(const udnnFilterDescriptor_t f, udnn_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = f->dtype;
    t->rank = f->nb_dims;
    for (int i = 0; i < f->nb_dims; i++) t->dims[i] = f->dims[i];
    udnn_packed_strides(f->format, f->nb_dims, f->dims, t->strides);
    widen_to_spatial(t);
}
