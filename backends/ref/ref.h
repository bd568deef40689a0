/* ref.h - element access of the reference's arithmetic (backends/ref):
 * any type through double, plain and obviously right. cpu/ref computes
 * with it, and a GPU backend's reference-bits solvers compile it too. */
#ifndef UDNN_REF_REF_H
#define UDNN_REF_REF_H

#include <stdint.h>

#include "backends/backend.h"
#include "backends/ref/fn.h"
#include "backends/ref/half.h"

/* Loads element `off` (in elements) of an array of type t as a double. */
UDNN_REF_FN double ref_load(const void *base, udnnDataType_t t, int64_t off)
{
    switch (t) {
    case UDNN_DATA_FLOAT: return ((const float *)base)[off];
    case UDNN_DATA_DOUBLE: return ((const double *)base)[off];
    case UDNN_DATA_HALF: return udnn_half_to_float(((const uint16_t *)base)[off]);
    case UDNN_DATA_BFLOAT16: return udnn_bf16_to_float(((const uint16_t *)base)[off]);
    case UDNN_DATA_INT8: return ((const int8_t *)base)[off];
    case UDNN_DATA_INT32: return ((const int32_t *)base)[off];
    case UDNN_DATA_INT64: return (double)((const int64_t *)base)[off];
    }
    return 0.0;
}

/* acc plus the n products a[ao + i as] * b[bo + i bs], added in order of
 * i, in double: ref_load's arithmetic, with the loads of two FLOAT arrays
 * typed outside the loop (that type switch per load was most of the
 * reference convolution's time). */
UDNN_REF_FN double ref_dot(double acc, const void *a, udnnDataType_t at, int64_t ao, int64_t as,
                           const void *b, udnnDataType_t bt, int64_t bo, int64_t bs, int64_t n)
{
    if (at == UDNN_DATA_FLOAT && bt == UDNN_DATA_FLOAT) {
        const float *fa = (const float *)a + ao, *fb = (const float *)b + bo;
        for (int64_t i = 0; i < n; i++) acc += (double)fa[i * as] * (double)fb[i * bs];
        return acc;
    }
    for (int64_t i = 0; i < n; i++)
        acc += ref_load(a, at, ao + i * as) * ref_load(b, bt, bo + i * bs);
    return acc;
}

/* Integer stores saturate and round to nearest, as cuDNN's conversions do. */
UDNN_REF_FN int64_t ref_saturate(double v, double lo, double hi)
{
    if (v != v) return 0;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (int64_t)(v < 0 ? v - 0.5 : v + 0.5);
}

/* Stores v, rounded to type t, at element `off`. */
UDNN_REF_FN void ref_store(void *base, udnnDataType_t t, int64_t off, double v)
{
    switch (t) {
    case UDNN_DATA_FLOAT: ((float *)base)[off] = (float)v; break;
    case UDNN_DATA_DOUBLE: ((double *)base)[off] = v; break;
    case UDNN_DATA_HALF: ((uint16_t *)base)[off] = udnn_float_to_half((float)v); break;
    case UDNN_DATA_BFLOAT16: ((uint16_t *)base)[off] = udnn_float_to_bf16((float)v); break;
    case UDNN_DATA_INT8: ((int8_t *)base)[off] = (int8_t)ref_saturate(v, -128, 127); break;
    case UDNN_DATA_INT32:
        ((int32_t *)base)[off] = (int32_t)ref_saturate(v, -2147483648.0, 2147483647.0);
        break;
    case UDNN_DATA_INT64: ((int64_t *)base)[off] = (int64_t)v; break;
    }
}

/* out = alpha * v + beta * out; out is not read when beta == 0. */
UDNN_REF_FN void ref_blend(void *base, udnnDataType_t t, int64_t off, double v, double alpha,
                           double beta)
{
    double r = alpha * v;
    if (beta != 0.0) r += beta * ref_load(base, t, off);
    ref_store(base, t, off, r);
}

/* Number of elements of a tensor. */
UDNN_REF_FN int64_t ref_count(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

/* The offset of the element with row-major logical index `linear`. */
UDNN_REF_FN int64_t ref_offset(const udnn_tensor *t, int64_t linear)
{
    int64_t off = 0;
    for (int i = t->rank - 1; i >= 0; i--) {
        off += (linear % t->dims[i]) * t->strides[i];
        linear /= t->dims[i];
    }
    return off;
}

/* Offset of the 5-D index (n, c, d, h, w) of a spatial tensor. */
UDNN_REF_FN int64_t ref_off5(const udnn_tensor *t, int64_t n, int64_t c, int64_t d, int64_t h,
                             int64_t w)
{
    return n * t->strides[0] + c * t->strides[1] + d * t->strides[2] + h * t->strides[3] +
           w * t->strides[4];
}

/* Splits a row-major linear index over t's 5 dims into idx[5]. */
UDNN_REF_FN void ref_index5(const udnn_tensor *t, int64_t linear, int64_t idx[5])
{
    for (int i = 4; i >= 0; i--) {
        idx[i] = linear % t->dims[i];
        linear /= t->dims[i];
    }
}

/* Elements of the dims after C (1 for none). */
UDNN_REF_FN int64_t ref_positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

/* Offset of (n, c, s), s the row-major index over the dims after C. */
UDNN_REF_FN int64_t ref_off_ncs(const udnn_tensor *t, int64_t n, int64_t c, int64_t s)
{
    int64_t off = n * t->strides[0] + c * t->strides[1];
    for (int i = t->rank - 1; i >= 2; i--) {
        off += (s % t->dims[i]) * t->strides[i];
        s /= t->dims[i];
    }
    return off;
}

#endif /* UDNN_REF_REF_H */
