/* check_descriptors.c - tensor and filter descriptors: every validation
 * rule with a bad value (status and a message naming the argument), and
 * round trips of the good ones. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tests/testutil.h"

static udnnTensorDescriptor_t t;
static udnnFilterDescriptor_t f;

static void setup(void)
{
    tu_ok(udnnCreateTensorDescriptor(&t));
    tu_ok(udnnCreateFilterDescriptor(&f));
}

static void teardown(void)
{
    udnnDestroyTensorDescriptor(t);
    udnnDestroyFilterDescriptor(f);
}

/* ---- creation ---------------------------------------------------------------- */

START_TEST(test_create_null)
{
    tu_assert_fails(udnnCreateTensorDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateTensorDescriptor", "tensorDesc");
    tu_assert_fails(udnnCreateFilterDescriptor(NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnCreateFilterDescriptor", "filterDesc");
    tu_ok(udnnDestroyTensorDescriptor(NULL));
    tu_ok(udnnDestroyFilterDescriptor(NULL));
}
END_TEST

START_TEST(test_unset_descriptor)
{
    udnnDataType_t dt;
    int n, c, h, w, ns, cs, hs, ws;
    tu_assert_fails(udnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws),
                    UDNN_STATUS_BAD_PARAM, "udnnGetTensor4dDescriptor", "tensorDesc",
                    "not been set");
    size_t size;
    tu_assert_fails(udnnGetTensorSizeInBytes(t, &size), UDNN_STATUS_BAD_PARAM,
                    "udnnGetTensorSizeInBytes", "tensorDesc");
    udnnTensorFormat_t fmt;
    tu_assert_fails(udnnGetFilter4dDescriptor(f, &dt, &fmt, &n, &c, &h, &w),
                    UDNN_STATUS_BAD_PARAM, "udnnGetFilter4dDescriptor", "filterDesc");
}
END_TEST

/* ---- 4-D packed ------------------------------------------------------------------ */

START_TEST(test_4d_nchw_roundtrip)
{
    static const udnnDataType_t types[] = {UDNN_DATA_FLOAT, UDNN_DATA_DOUBLE, UDNN_DATA_HALF,
                                           UDNN_DATA_BFLOAT16, UDNN_DATA_INT8,
                                           UDNN_DATA_INT32};
    static const size_t sizes[] = {4, 8, 2, 2, 1, 4};
    udnnDataType_t dtype = types[_i];
    tu_ok(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, dtype, 2, 3, 5, 7));
    udnnDataType_t dt;
    int n, c, h, w, ns, cs, hs, ws;
    tu_ok(udnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    ck_assert_int_eq(dt, dtype);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(c, 3);
    ck_assert_int_eq(h, 5);
    ck_assert_int_eq(w, 7);
    ck_assert_int_eq(ns, 105);
    ck_assert_int_eq(cs, 35);
    ck_assert_int_eq(hs, 7);
    ck_assert_int_eq(ws, 1);
    size_t size;
    tu_ok(udnnGetTensorSizeInBytes(t, &size));
    ck_assert_uint_eq(size, 210 * sizes[_i]);
}
END_TEST

START_TEST(test_4d_nhwc_strides)
{
    tu_ok(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 5, 7));
    int n, c, h, w, ns, cs, hs, ws;
    udnnDataType_t dt;
    tu_ok(udnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    ck_assert_int_eq(c, 3);
    ck_assert_int_eq(ns, 105);
    ck_assert_int_eq(cs, 1);
    ck_assert_int_eq(hs, 21);
    ck_assert_int_eq(ws, 3);
}
END_TEST

START_TEST(test_4d_bad_dims)
{
    static const char *const names[4] = {"n", "c", "h", "w"};
    int d[4] = {2, 3, 5, 7};
    d[_i % 4] = _i < 4 ? 0 : -3;
    tu_assert_fails(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, d[0], d[1],
                                              d[2], d[3]),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", names[_i % 4],
                    "positive");
}
END_TEST

START_TEST(test_4d_bad_type_and_format)
{
    tu_assert_fails(
        udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, (udnnDataType_t)77, 1, 1, 1, 1),
        UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", "dataType");
    tu_assert_fails(
        udnnSetTensor4dDescriptor(t, (udnnTensorFormat_t)9, UDNN_DATA_FLOAT, 1, 1, 1, 1),
        UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", "format");
    tu_assert_fails(udnnSetTensor4dDescriptor(NULL, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 1, 1, 1, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", "tensorDesc");
}
END_TEST

START_TEST(test_4d_failed_set_keeps_unset)
{
    ck_assert_int_ne(
        udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 0, 1, 1, 1),
        UDNN_STATUS_SUCCESS);
    size_t size;
    tu_assert_fails(udnnGetTensorSizeInBytes(t, &size), UDNN_STATUS_BAD_PARAM, "not been set");
}
END_TEST

START_TEST(test_4d_element_overflow)
{
    tu_assert_fails(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, INT_MAX,
                                              INT_MAX, INT_MAX, INT_MAX),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", "overflow");
}
END_TEST

START_TEST(test_4d_packed_stride_too_large)
{
    /* fits in 64 bits but the strides no longer fit an int */
    tu_assert_fails(
        udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 2, 65536, 65536, 1),
        UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptor", "INT_MAX");
}
END_TEST

/* ---- 4-D with strides ------------------------------------------------------------- */

START_TEST(test_4d_ex_roundtrip)
{
    tu_ok(udnnSetTensor4dDescriptorEx(t, UDNN_DATA_HALF, 2, 3, 4, 5, 100, 30, 6, 1));
    int n, c, h, w, ns, cs, hs, ws;
    udnnDataType_t dt;
    tu_ok(udnnGetTensor4dDescriptor(t, &dt, &n, &c, &h, &w, &ns, &cs, &hs, &ws));
    ck_assert_int_eq(dt, UDNN_DATA_HALF);
    ck_assert_int_eq(ns, 100);
    ck_assert_int_eq(cs, 30);
    ck_assert_int_eq(hs, 6);
    ck_assert_int_eq(ws, 1);
    size_t size;
    tu_ok(udnnGetTensorSizeInBytes(t, &size));
    /* span: 1 + 1*100 + 2*30 + 3*6 + 4*1 = 183 elements */
    ck_assert_uint_eq(size, 183 * 2);
}
END_TEST

START_TEST(test_4d_ex_bad_strides)
{
    static const char *const names[4] = {"nStride", "cStride", "hStride", "wStride"};
    int s[4] = {60, 20, 5, 1};
    s[_i] = _i == 1 ? -20 : 0;
    tu_assert_fails(
        udnnSetTensor4dDescriptorEx(t, UDNN_DATA_FLOAT, 3, 3, 4, 5, s[0], s[1], s[2], s[3]),
        UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptorEx", names[_i]);
}
END_TEST

START_TEST(test_4d_ex_overlap)
{
    /* h and w strides make rows overlap */
    tu_assert_fails(udnnSetTensor4dDescriptorEx(t, UDNN_DATA_FLOAT, 1, 1, 4, 5, 20, 20, 3, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptorEx", "overlap");
    /* size-1 dims may have any positive stride */
    tu_ok(udnnSetTensor4dDescriptorEx(t, UDNN_DATA_FLOAT, 1, 1, 4, 5, 1, 1, 5, 1));
    /* transposed but disjoint is fine */
    tu_ok(udnnSetTensor4dDescriptorEx(t, UDNN_DATA_FLOAT, 1, 1, 4, 5, 20, 20, 1, 4));
}
END_TEST

START_TEST(test_4d_ex_bad_dim)
{
    tu_assert_fails(udnnSetTensor4dDescriptorEx(t, UDNN_DATA_FLOAT, 1, -1, 4, 5, 20, 20, 5, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptorEx", "c");
    tu_assert_fails(udnnSetTensor4dDescriptorEx(t, (udnnDataType_t)-1, 1, 1, 4, 5, 20, 20, 5, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensor4dDescriptorEx", "dataType");
}
END_TEST

/* ---- N-d ------------------------------------------------------------------------- */

START_TEST(test_nd_ranks)
{
    int nb = 2 + _i; /* 2..8 */
    int dims[UDNN_DIM_MAX], strides[UDNN_DIM_MAX];
    int s = 1;
    for (int i = nb - 1; i >= 0; i--) {
        dims[i] = 2 + i % 3;
        strides[i] = s;
        s *= dims[i];
    }
    tu_ok(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, nb, dims, strides));
    int got_nb, got_dims[UDNN_DIM_MAX], got_strides[UDNN_DIM_MAX];
    udnnDataType_t dt;
    tu_ok(udnnGetTensorNdDescriptor(t, UDNN_DIM_MAX, &dt, &got_nb, got_dims, got_strides));
    ck_assert_int_eq(got_nb, nb);
    for (int i = 0; i < nb; i++) {
        ck_assert_int_eq(got_dims[i], dims[i]);
        ck_assert_int_eq(got_strides[i], strides[i]);
    }
    size_t size;
    tu_ok(udnnGetTensorSizeInBytes(t, &size));
    ck_assert_uint_eq(size, (size_t)s * 4);
}
END_TEST

START_TEST(test_nd_bad_rank)
{
    int dims[10] = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, strides[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    int nb = _i == 0 ? 1 : _i == 1 ? 0 : _i == 2 ? -4 : 9;
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, nb, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "nbDims");
}
END_TEST

START_TEST(test_nd_null_arrays)
{
    int dims[4] = {1, 2, 3, 4}, strides[4] = {24, 12, 4, 1};
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, 4, NULL, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "dimA");
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, 4, dims, NULL),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "strideA");
    tu_assert_fails(udnnSetTensorNdDescriptor(NULL, UDNN_DATA_FLOAT, 4, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "tensorDesc");
}
END_TEST

START_TEST(test_nd_bad_dim_and_stride)
{
    int dims[5] = {1, 2, 3, 4, 5}, strides[5] = {120, 60, 20, 5, 1};
    dims[_i] = 0;
    char idx[16];
    snprintf(idx, sizeof idx, "dimA[%d]", _i);
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_DOUBLE, 5, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", idx);
    dims[_i] = 1 + _i;
    strides[_i] = -1;
    snprintf(idx, sizeof idx, "strideA[%d]", _i);
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_DOUBLE, 5, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", idx);
}
END_TEST

START_TEST(test_nd_overlap)
{
    int dims[3] = {4, 4, 4}, strides[3] = {16, 4, 2};
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, 3, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "overlap");
    int same[3] = {16, 4, 4};
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, 3, dims, same),
                    UDNN_STATUS_BAD_PARAM, "overlap");
}
END_TEST

START_TEST(test_nd_span_overflow)
{
    int dims[8] = {INT_MAX, INT_MAX, INT_MAX, 2, 2, 2, 2, 2};
    int strides[8] = {INT_MAX, INT_MAX, INT_MAX, 1, 1, 1, 1, 1};
    tu_assert_fails(udnnSetTensorNdDescriptor(t, UDNN_DATA_FLOAT, 8, dims, strides),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptor", "overflow");
}
END_TEST

START_TEST(test_nd_get_partial)
{
    int dims[5] = {2, 3, 4, 5, 6}, strides[5] = {360, 120, 30, 6, 1};
    tu_ok(udnnSetTensorNdDescriptor(t, UDNN_DATA_BFLOAT16, 5, dims, strides));
    int nb = 0, got[2] = {0, 0}, gs[2] = {0, 0};
    udnnDataType_t dt;
    tu_ok(udnnGetTensorNdDescriptor(t, 2, &dt, &nb, got, gs));
    ck_assert_int_eq(nb, 5);
    ck_assert_int_eq(dt, UDNN_DATA_BFLOAT16);
    ck_assert_int_eq(got[1], 3);
    ck_assert_int_eq(gs[1], 120);
    tu_ok(udnnGetTensorNdDescriptor(t, 0, &dt, &nb, NULL, NULL));
    tu_assert_fails(udnnGetTensorNdDescriptor(t, -1, &dt, &nb, got, gs), UDNN_STATUS_BAD_PARAM,
                    "udnnGetTensorNdDescriptor", "nbDimsRequested");
    tu_assert_fails(udnnGetTensorNdDescriptor(t, 2, &dt, &nb, NULL, gs), UDNN_STATUS_BAD_PARAM,
                    "udnnGetTensorNdDescriptor", "dimA");
    /* a 5-D descriptor is not 4-D */
    int n;
    tu_assert_fails(udnnGetTensor4dDescriptor(t, &dt, &n, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                    UDNN_STATUS_BAD_PARAM, "udnnGetTensor4dDescriptor", "tensorDesc", "5");
}
END_TEST

START_TEST(test_nd_ex_formats)
{
    int dims[5] = {2, 3, 4, 5, 6};
    tu_ok(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 5, dims));
    int nb, got[5], gs[5];
    udnnDataType_t dt;
    tu_ok(udnnGetTensorNdDescriptor(t, 5, &dt, &nb, got, gs));
    /* n, d, h, w, c order in memory */
    ck_assert_int_eq(gs[1], 1);
    ck_assert_int_eq(gs[4], 3);
    ck_assert_int_eq(gs[3], 18);
    ck_assert_int_eq(gs[2], 90);
    ck_assert_int_eq(gs[0], 360);
    tu_ok(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 5, dims));
    tu_ok(udnnGetTensorNdDescriptor(t, 5, &dt, &nb, got, gs));
    ck_assert_int_eq(gs[0], 360);
    ck_assert_int_eq(gs[1], 120);
    ck_assert_int_eq(gs[4], 1);
}
END_TEST

START_TEST(test_nd_ex_bad)
{
    int dims[4] = {2, 3, 4, 5};
    tu_assert_fails(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptorEx", "NHWC", "nbDims");
    tu_assert_fails(udnnSetTensorNdDescriptorEx(t, (udnnTensorFormat_t)5, UDNN_DATA_FLOAT, 4, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptorEx", "format");
    tu_assert_fails(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 9, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptorEx", "nbDims");
    tu_assert_fails(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 4, NULL),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptorEx", "dimA");
    dims[2] = 0;
    tu_assert_fails(udnnSetTensorNdDescriptorEx(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 4, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetTensorNdDescriptorEx", "dimA[2]");
}
END_TEST

START_TEST(test_size_null)
{
    tu_ok(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 1, 1, 1, 1));
    tu_assert_fails(udnnGetTensorSizeInBytes(t, NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnGetTensorSizeInBytes", "size");
    tu_assert_fails(udnnGetTensorSizeInBytes(NULL, NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnGetTensorSizeInBytes", "tensorDesc");
}
END_TEST

/* ---- filters --------------------------------------------------------------------- */

START_TEST(test_filter_4d_roundtrip)
{
    udnnTensorFormat_t fmt = _i ? UDNN_TENSOR_NHWC : UDNN_TENSOR_NCHW;
    tu_ok(udnnSetFilter4dDescriptor(f, UDNN_DATA_HALF, fmt, 8, 3, 5, 7));
    udnnDataType_t dt;
    udnnTensorFormat_t gf;
    int k, c, h, w;
    tu_ok(udnnGetFilter4dDescriptor(f, &dt, &gf, &k, &c, &h, &w));
    ck_assert_int_eq(dt, UDNN_DATA_HALF);
    ck_assert_int_eq(gf, fmt);
    ck_assert_int_eq(k, 8);
    ck_assert_int_eq(c, 3);
    ck_assert_int_eq(h, 5);
    ck_assert_int_eq(w, 7);
}
END_TEST

START_TEST(test_filter_4d_bad)
{
    static const char *const names[4] = {"k", "c", "h", "w"};
    int d[4] = {8, 3, 5, 7};
    d[_i] = -_i;
    tu_assert_fails(udnnSetFilter4dDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, d[0], d[1],
                                              d[2], d[3]),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilter4dDescriptor", names[_i], "positive");
}
END_TEST

START_TEST(test_filter_type_format)
{
    tu_assert_fails(udnnSetFilter4dDescriptor(f, (udnnDataType_t)42, UDNN_TENSOR_NCHW, 1, 1, 1, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilter4dDescriptor", "dataType");
    tu_assert_fails(
        udnnSetFilter4dDescriptor(f, UDNN_DATA_FLOAT, (udnnTensorFormat_t)3, 1, 1, 1, 1),
        UDNN_STATUS_BAD_PARAM, "udnnSetFilter4dDescriptor", "format");
    tu_assert_fails(udnnSetFilter4dDescriptor(NULL, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 1, 1, 1, 1),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilter4dDescriptor", "filterDesc");
}
END_TEST

START_TEST(test_filter_nd)
{
    int dims[5] = {4, 2, 3, 3, 3};
    tu_ok(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 5, dims));
    int nb, got[5];
    udnnDataType_t dt;
    udnnTensorFormat_t fmt;
    tu_ok(udnnGetFilterNdDescriptor(f, 5, &dt, &fmt, &nb, got));
    ck_assert_int_eq(nb, 5);
    for (int i = 0; i < 5; i++) ck_assert_int_eq(got[i], dims[i]);
    tu_assert_fails(udnnGetFilterNdDescriptor(f, -2, &dt, &fmt, &nb, got), UDNN_STATUS_BAD_PARAM,
                    "udnnGetFilterNdDescriptor", "nbDimsRequested");
    tu_assert_fails(udnnGetFilterNdDescriptor(f, 3, &dt, &fmt, &nb, NULL), UDNN_STATUS_BAD_PARAM,
                    "udnnGetFilterNdDescriptor", "filterDimA");
    int k;
    tu_assert_fails(udnnGetFilter4dDescriptor(f, &dt, &fmt, &k, NULL, NULL, NULL),
                    UDNN_STATUS_BAD_PARAM, "udnnGetFilter4dDescriptor", "filterDesc", "5");
}
END_TEST

START_TEST(test_filter_nd_bad)
{
    int dims[9] = {4, 2, 3, 3, 3, 1, 1, 1, 1};
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 2, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "nbDims");
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 9, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "nbDims");
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 4, NULL),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "filterDimA");
    dims[3] = 0;
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 5, dims),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "filterDimA[3]");
    int huge[5] = {INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 5, huge),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "overflow");
    int big[4] = {65536, 65536, 1, 1};
    tu_assert_fails(udnnSetFilterNdDescriptor(f, UDNN_DATA_FLOAT, UDNN_TENSOR_NCHW, 4, big),
                    UDNN_STATUS_BAD_PARAM, "udnnSetFilterNdDescriptor", "INT_MAX");
}
END_TEST

/* ---- status strings ----------------------------------------------------------------- */

START_TEST(test_error_strings)
{
    static const udnnStatus_t all[] = {
        UDNN_STATUS_SUCCESS,          UDNN_STATUS_NOT_INITIALIZED, UDNN_STATUS_ALLOC_FAILED,
        UDNN_STATUS_BAD_PARAM,        UDNN_STATUS_INTERNAL_ERROR,  UDNN_STATUS_INVALID_VALUE,
        UDNN_STATUS_ARCH_MISMATCH,    UDNN_STATUS_MAPPING_ERROR,   UDNN_STATUS_EXECUTION_FAILED,
        UDNN_STATUS_NOT_SUPPORTED,    UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING,
        UDNN_STATUS_VERSION_MISMATCH};
    ck_assert_int_eq(UDNN_STATUS_BAD_PARAM, 3);
    ck_assert_int_eq(UDNN_STATUS_NOT_SUPPORTED, 9);
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        const char *s = udnnGetErrorString(all[i]);
        ck_assert_ptr_nonnull(s);
        ck_assert(strncmp(s, "UDNN_STATUS_", 12) == 0);
    }
    ck_assert(strstr(udnnGetErrorString(UDNN_STATUS_BAD_PARAM), "BAD_PARAM") != NULL);
    ck_assert(strstr(udnnGetErrorString((udnnStatus_t)1234), "UNKNOWN") != NULL);
}
END_TEST

START_TEST(test_last_error_truncation)
{
    udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 0, 1, 1, 1);
    char full[256], small[8];
    udnnGetLastErrorString(full, sizeof full);
    memset(small, 'x', sizeof small);
    udnnGetLastErrorString(small, sizeof small);
    ck_assert_int_eq(small[7], '\0');
    ck_assert(strncmp(small, full, 7) == 0);
    udnnGetLastErrorString(NULL, 10);  /* ignored */
    udnnGetLastErrorString(small, 0);  /* writes nothing */
    /* a successful call does not clear it */
    tu_ok(udnnSetTensor4dDescriptor(t, UDNN_TENSOR_NCHW, UDNN_DATA_FLOAT, 1, 1, 1, 1));
    char again[256];
    udnnGetLastErrorString(again, sizeof again);
    ck_assert_str_eq(again, full);
}
END_TEST

START_TEST(test_version)
{
    ck_assert_uint_eq(udnnGetVersion(), UDNN_VERSION);
    ck_assert_uint_eq(UDNN_VERSION, UDNN_MAJOR * 10000 + UDNN_MINOR * 100 + UDNN_PATCHLEVEL);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("descriptors");
    TCase *tc = tcase_create("tensor");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_create_null);
    tcase_add_test(tc, test_unset_descriptor);
    tcase_add_loop_test(tc, test_4d_nchw_roundtrip, 0, 6);
    tcase_add_test(tc, test_4d_nhwc_strides);
    tcase_add_loop_test(tc, test_4d_bad_dims, 0, 8);
    tcase_add_test(tc, test_4d_bad_type_and_format);
    tcase_add_test(tc, test_4d_failed_set_keeps_unset);
    tcase_add_test(tc, test_4d_element_overflow);
    tcase_add_test(tc, test_4d_packed_stride_too_large);
    tcase_add_test(tc, test_4d_ex_roundtrip);
    tcase_add_loop_test(tc, test_4d_ex_bad_strides, 0, 4);
    tcase_add_test(tc, test_4d_ex_overlap);
    tcase_add_test(tc, test_4d_ex_bad_dim);
    tcase_add_loop_test(tc, test_nd_ranks, 0, 7);
    tcase_add_loop_test(tc, test_nd_bad_rank, 0, 4);
    tcase_add_test(tc, test_nd_null_arrays);
    tcase_add_loop_test(tc, test_nd_bad_dim_and_stride, 0, 5);
    tcase_add_test(tc, test_nd_overlap);
    tcase_add_test(tc, test_nd_span_overflow);
    tcase_add_test(tc, test_nd_get_partial);
    tcase_add_test(tc, test_nd_ex_formats);
    tcase_add_test(tc, test_nd_ex_bad);
    tcase_add_test(tc, test_size_null);
    suite_add_tcase(s, tc);

    TCase *tf = tcase_create("filter");
    tcase_add_checked_fixture(tf, setup, teardown);
    tcase_add_loop_test(tf, test_filter_4d_roundtrip, 0, 2);
    tcase_add_loop_test(tf, test_filter_4d_bad, 0, 4);
    tcase_add_test(tf, test_filter_type_format);
    tcase_add_test(tf, test_filter_nd);
    tcase_add_test(tf, test_filter_nd_bad);
    suite_add_tcase(s, tf);

    TCase *te = tcase_create("errors");
    tcase_add_checked_fixture(te, setup, teardown);
    tcase_add_test(te, test_error_strings);
    tcase_add_test(te, test_last_error_truncation);
    tcase_add_test(te, test_version);
    suite_add_tcase(s, te);
    return tu_run_suite(s);
}
