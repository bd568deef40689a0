/* check_matmul.c - udnnMatMul on every backend: every type × transA ×
 * transB × batch form (2-D, 3-D, broadcast A, broadcast B) over odd sizes
 * and row-major, column-major and padded layouts, against the test's own
 * product; alpha/beta and beta 0 on a poisoned C; a hand-computed case;
 * the validation rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

static void *ptr(const tu_tensor *t)
{
    return tu_buf_ptr(&t->buf);
}

/* ---- matrices in any layout ------------------------------------------------------- */

typedef enum { MM_ROW, MM_COL, MM_ROW_PADDED, MM_COL_PADDED } mm_layout;
#define N_MM_LAYOUTS 4
static const char *const mm_layout_names[N_MM_LAYOUTS] = {"row", "col", "row+pad", "col+pad"};

/* A tu_tensor of 2 or 3 dims (batch, rows, cols) whose matrices are stored
 * row- or column-major, packed or with gaps after each row or column and
 * between matrices. tu_get/tu_set/tu_check_tensor work on it as usual. */
static void mm_tensor_init(tu_tensor *t, udnnHandle_t h, udnnDataType_t dtype, int nb,
                           const int *dims, mm_layout l)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype;
    t->nb = nb;
    t->count = 1;
    for (int i = 0; i < nb; i++) {
        t->dims[i] = dims[i];
        t->count *= dims[i];
    }
    const int rows = dims[nb - 2], cols = dims[nb - 1];
    const int pad = l == MM_ROW_PADDED || l == MM_COL_PADDED ? 2 : 0;
    int matrix;
    if (l == MM_ROW || l == MM_ROW_PADDED) {
        t->strides[nb - 1] = 1;
        t->strides[nb - 2] = cols + pad;
        matrix = rows * (cols + pad);
    } else {
        t->strides[nb - 2] = 1;
        t->strides[nb - 1] = rows + pad;
        matrix = cols * (rows + pad);
    }
    if (nb == 3) t->strides[0] = matrix + (pad ? 3 : 0);
    tu_ok(udnnCreateTensorDescriptor(&t->desc));
    tu_ok(udnnSetTensorNdDescriptor(t->desc, dtype, nb, t->dims, t->strides));
    size_t bytes = 0;
    tu_ok(udnnGetTensorSizeInBytes(t->desc, &bytes));
    tu_buf_init(&t->buf, h, bytes);
}

/* Dims of a stored operand: op(X) is rows x cols, X is its transpose when
 * trans; batch < 0 means 2-D. */
static int operand_dims(int batch, int rows, int cols, int trans, int *dims)
{
    int nb = 0;
    if (batch >= 0) dims[nb++] = batch;
    dims[nb++] = trans ? cols : rows;
    dims[nb++] = trans ? rows : cols;
    return nb;
}

/* Element (row, col) of op(X) in batch b (b ignored when X has batch 1). */
static double op_get(const tu_tensor *x, int trans, int b, int row, int col)
{
    const int nb = x->nb;
    const int batch = nb == 3 ? x->dims[0] : 1;
    const int r = trans ? col : row, c = trans ? row : col;
    const int64_t i = ((int64_t)(batch == 1 ? 0 : b) * x->dims[nb - 2] + r) * x->dims[nb - 1] + c;
    return tu_get(x, i);
}

/* The test's unblended product: want[b][i][j] = sum_q op(A)[i][q] op(B)[q][j]. */
static void expect_matmul(const tu_tensor *a, int ta, const tu_tensor *b, int tb, int batch,
                          int m, int n, int k, double *want)
{
    for (int bb = 0; bb < batch; bb++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                double acc = 0.0;
                for (int q = 0; q < k; q++)
                    acc += op_get(a, ta, bb, i, q) * op_get(b, tb, bb, q, j);
                const int64_t at = ((int64_t)bb * m + i) * n + j;
                want[at] = acc;
            }
}

/* ---- hand-computed --------------------------------------------------------------------- */

/* [[1, 2, 3], [4, 5, 6]] x [[7, 8], [9, 10], [11, 12]] = [[58, 64], [139, 154]],
 * each operand stored as given or transposed (then transX = 1); and with
 * alpha 0.5, beta 2 onto [[1, 2], [3, 4]]: [[31, 36], [75.5, 85]]. All
 * exact in every type. _i = type. */
/* Values of magnitude 0.25 to 1, either sign: with k = 1 an output is one
 * product, and a factor near zero would make it a half subnormal whose
 * rounding alone exceeds the half tolerance. */
static void fill_away_from_zero(tu_tensor *t)
{
    for (int64_t i = 0; i < t->count; i++) {
        double v = tu_uniform(0.25, 1.0);
        tu_set(t, i, tu_int(0, 1) ? v : -v);
    }
    tu_upload(t);
}

/* Whether a product's values are, in the root mean square, below the
 * smallest normal of type t: a few terms that cancel into HALF's
 * subnormals (below 2^-14, steps of 2^-24) keep too few bits for the
 * tolerance (seed 1882983064201446: k = 3, one output of -9.43e-6, stored
 * -9.42e-6, 1.6e-3 off), so the test draws again. */
static int below_normal(const double *v, int64_t n, udnnDataType_t t)
{
    const double smallest = t == UDNN_DATA_HALF ? ldexp(1.0, -14) : 0.0;
    double sq = 0.0;
    for (int64_t i = 0; i < n; i++) sq += v[i] * v[i];
    return n > 0 && sqrt(sq / (double)n) < smallest;
}

START_TEST(test_matmul_tiny)
{
    const udnnDataType_t t = tu_float_types[_i];
    const double av[2][3] = {{1, 2, 3}, {4, 5, 6}}, bv[3][2] = {{7, 8}, {9, 10}, {11, 12}};
    const double plain[4] = {58, 64, 139, 154}, blended[4] = {31, 36, 75.5, 85};
    TU_FOR_EACH_BACKEND(h, bk)
    for (int tr = 0; tr < 4; tr++) {
        const int ta = tr & 1, tb = tr >> 1;
        int ad[2], bd[2];
        const int cd[2] = {2, 2};
        operand_dims(-1, 2, 3, ta, ad);
        operand_dims(-1, 3, 2, tb, bd);
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, t, 2, ad, TU_NCHW);
        tu_tensor_init(&b, h, t, 2, bd, TU_STRIDED);
        tu_tensor_init(&c, h, t, 2, cd, TU_NCHW);
        for (int i = 0; i < 2; i++)
            for (int q = 0; q < 3; q++) {
                tu_set(&a, ta ? q * 2 + i : i * 3 + q, av[i][q]);
                tu_set(&b, tb ? i * 3 + q : q * 2 + i, bv[q][i]);
            }
        tu_upload(&a);
        tu_upload(&b);
        for (int pass = 0; pass < 2; pass++) {
            const tu_scalar al = tu_scalar_of(t, pass ? 0.5 : 1.0),
                            be = tu_scalar_of(t, pass ? 2.0 : 0.0);
            if (pass) {
                for (int i = 0; i < 4; i++) tu_set(&c, i, i + 1);
                tu_upload(&c);
            }
            tu_ok(udnnMatMul(h, ta, tb, &al, a.desc, ptr(&a), b.desc, ptr(&b), &be, c.desc,
                             ptr(&c)));
            tu_download(&c);
            for (int i = 0; i < 4; i++)
                ck_assert_double_eq(tu_get(&c, i), pass ? blended[i] : plain[i]);
        }
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* A 3-D A of batch 2 ([A, -A]) times a 2-D B broadcast: C = [AB, -AB]. */
START_TEST(test_matmul_tiny_broadcast)
{
    const int ad[3] = {2, 2, 3}, bd[2] = {3, 2}, cd[3] = {2, 2, 2};
    const double want[8] = {58, 64, 139, 154, -58, -64, -139, -154};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 3, ad, TU_NHWC);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 2, bd, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 3, cd, TU_STRIDED);
        for (int i = 0; i < 6; i++) {
            tu_set(&a, i, i + 1);
            tu_set(&a, 6 + i, -(i + 1));
            tu_set(&b, i, i + 7);
        }
        tu_upload(&a);
        tu_upload(&b);
        const float one = 1.0f, zero = 0.0f;
        tu_ok(udnnMatMul(h, 0, 0, &one, a.desc, ptr(&a), b.desc, ptr(&b), &zero, c.desc,
                         ptr(&c)));
        tu_download(&c);
        for (int i = 0; i < 8; i++) ck_assert_double_eq(tu_get(&c, i), want[i]);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- every type, transpose and batch form -------------------------------------------------- */

enum { FORM_2D, FORM_3D, FORM_BCAST_A, FORM_BCAST_B, N_FORMS };
static const char *const form_names[N_FORMS] = {"2d", "3d", "bcast_a", "bcast_b"};

static const int sizes[5] = {1, 3, 5, 7, 17};
#define BATCH 3

/* _i = ((type * 2 + transA) * 2 + transB) * N_FORMS + form. Each of the
 * 125 (m, n, k) runs with its own layouts of A, B and C and one of three
 * scalings: alpha 1 and beta 0 or alpha -0.75 and beta 0 on a poisoned C,
 * or alpha 0.75 and beta -1.25 onto a filled C. A broadcast operand is 2-D
 * or 3-D of batch 1 by turns. */
START_TEST(test_matmul)
{
    const int form = _i % N_FORMS;
    const int tb = (_i / N_FORMS) % 2, ta = (_i / N_FORMS / 2) % 2;
    const udnnDataType_t t = tu_float_types[_i / N_FORMS / 4];
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        int run = 0;
        for (int mi = 0; mi < 5; mi++)
            for (int ni = 0; ni < 5; ni++)
                for (int ki = 0; ki < 5; ki++, run++) {
                    const int m = sizes[mi], n = sizes[ni], k = sizes[ki];
                    const int bcast_3d = run % 2;
                    int batch_a = -1, batch_b = -1, batch_c = -1;
                    if (form == FORM_3D) batch_a = batch_b = batch_c = BATCH;
                    if (form == FORM_BCAST_A) {
                        batch_a = bcast_3d ? 1 : -1;
                        batch_b = batch_c = BATCH;
                    }
                    if (form == FORM_BCAST_B) {
                        batch_b = bcast_3d ? 1 : -1;
                        batch_a = batch_c = BATCH;
                    }
                    int ad[3], bd[3], cd[3];
                    const int na = operand_dims(batch_a, m, k, ta, ad);
                    const int nbb = operand_dims(batch_b, k, n, tb, bd);
                    const int nc = operand_dims(batch_c, m, n, 0, cd);
                    const mm_layout la = (mm_layout)(run % 4), lb = (mm_layout)(run / 4 % 4),
                                    lc = (mm_layout)(run / 16 % 4);
                    tu_tensor a, b, c;
                    mm_tensor_init(&a, h, t, na, ad, la);
                    mm_tensor_init(&b, h, t, nbb, bd, lb);
                    mm_tensor_init(&c, h, t, nc, cd, lc);
                    const int scaling = run % 3;
                    const double alpha = scaling == 0 ? 1.0 : scaling == 1 ? -0.75 : 0.75,
                                 beta = scaling == 2 ? -1.25 : 0.0;
                    double *want = malloc((size_t)c.count * sizeof *want);
                    ck_assert_ptr_nonnull(want);
                    for (int draw = 0;; draw++) {
                        fill_away_from_zero(&a);
                        fill_away_from_zero(&b);
                        expect_matmul(&a, ta, &b, tb, batch_c < 0 ? 1 : batch_c, m, n, k,
                                      want);
                        tu_blend_drawn(want, alpha, beta, &c);
                        if (draw == 8 || !below_normal(want, c.count, t)) break;
                    }
                    const tu_scalar al = tu_scalar_of(t, alpha), be = tu_scalar_of(t, beta);
                    tu_ok(udnnMatMul(h, ta, tb, &al, a.desc, ptr(&a), b.desc, ptr(&b), &be,
                                     c.desc, ptr(&c)));
                    char what[160];
                    snprintf(what, sizeof what,
                             "%s %s %s transA=%d transB=%d m=%d n=%d k=%d A %s B %s C %s "
                             "alpha=%g beta=%g",
                             tu_backend_name(bk), tu_dtype_name(t), form_names[form], ta, tb, m,
                             n, k, mm_layout_names[la], mm_layout_names[lb], mm_layout_names[lc],
                             alpha, beta);
                    tu_check_tensor(&c, want, what);
                    free(want);
                    tu_tensor_free(&a);
                    tu_tensor_free(&b);
                    tu_tensor_free(&c);
                }
    }
}
END_TEST

/* Any non-zero trans flag means a transpose, as in C. */
START_TEST(test_matmul_trans_nonzero)
{
    const int ad[2] = {3, 2}, bd[2] = {4, 3}, cd[2] = {2, 4};
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_DOUBLE, 2, ad, TU_STRIDED);
        tu_tensor_init(&b, h, UDNN_DATA_DOUBLE, 2, bd, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_DOUBLE, 2, cd, TU_NCHW);
        tu_fill_int(&a, -4, 4);
        tu_fill_int(&b, -4, 4);
        tu_set(&a, 0, 5);
        tu_upload(&a);
        double want[8];
        expect_matmul(&a, 1, &b, 1, 1, 2, 4, 3, want);
        const double one = 1.0, zero = 0.0;
        tu_ok(udnnMatMul(h, -1, 7, &one, a.desc, ptr(&a), b.desc, ptr(&b), &zero, c.desc,
                         ptr(&c)));
        tu_check_tensor(&c, want, "transA=-1 transB=7");
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* A larger product whose k sums many terms: half and bfloat16 must
 * accumulate wider than themselves to stay within tolerance. _i = type. */
START_TEST(test_matmul_long_k)
{
    const udnnDataType_t t = tu_float_types[_i];
    const int ad[2] = {9, 1024}, bd[2] = {1024, 5}, cd[2] = {9, 5};
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        mm_tensor_init(&a, h, t, 2, ad, MM_ROW_PADDED);
        mm_tensor_init(&b, h, t, 2, bd, MM_COL);
        mm_tensor_init(&c, h, t, 2, cd, MM_COL_PADDED);
        /* positive terms: no cancellation hides a narrow accumulator */
        tu_fill_uniform(&a, 0.5, 1.0);
        tu_fill_uniform(&b, 0.5, 1.0);
        double want[45];
        expect_matmul(&a, 0, &b, 0, 1, 9, 5, 1024, want);
        const tu_scalar one = tu_scalar_of(t, 1.0), zero = tu_scalar_of(t, 0.0);
        tu_ok(udnnMatMul(h, 0, 0, &one, a.desc, ptr(&a), b.desc, ptr(&b), &zero, c.desc,
                         ptr(&c)));
        tu_check_tensor(&c, want, tu_dtype_name(t));
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- validation ------------------------------------------------------------------------------ */

START_TEST(test_matmul_rejects)
{
    static const char fn[] = "udnnMatMul";
    const int ad[3] = {3, 2, 4}, bd[3] = {3, 4, 5}, cd[3] = {3, 2, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 3, ad, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 3, bd, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 3, cd, TU_NCHW);
        void *A = ptr(&a), *B = ptr(&b), *C = ptr(&c);
        const float one = 1.0f;
        udnnTensorDescriptor_t unset, cdsc = c.desc, adsc = a.desc, bdsc = b.desc;
        tu_ok(udnnCreateTensorDescriptor(&unset));
        tu_ok(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, B, &one, cdsc, C));
        tu_assert_fails(udnnMatMul(NULL, 0, 0, &one, adsc, A, bdsc, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(udnnMatMul(h, 0, 0, NULL, adsc, A, bdsc, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "alpha");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, NULL, A, bdsc, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, unset, A, bdsc, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc", "not been set");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, NULL, bdsc, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "A is NULL");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, NULL, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, unset, B, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc", "not been set");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, NULL, &one, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "B is NULL");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, B, NULL, cdsc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "beta");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, B, &one, NULL, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, B, &one, unset, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc", "not been set");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, adsc, A, bdsc, B, &one, cdsc, NULL),
                        UDNN_STATUS_BAD_PARAM, fn, "C is NULL");
        udnnDestroyTensorDescriptor(unset);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

START_TEST(test_matmul_rejects_types_and_ranks)
{
    static const char fn[] = "udnnMatMul";
    const int ad[3] = {3, 2, 4}, bd[3] = {3, 4, 5}, cd[3] = {3, 2, 5}, d4[4] = {1, 3, 2, 4},
              a2[2] = {2, 4}, b2[2] = {4, 5}, c2[2] = {2, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 3, ad, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 3, bd, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 3, cd, TU_NCHW);
        void *A = ptr(&a), *B = ptr(&b), *C = ptr(&c);
        const float one = 1.0f;
        udnnTensorDescriptor_t a_i8 = tu_packed_desc(UDNN_DATA_INT8, 3, ad),
                               b_i8 = tu_packed_desc(UDNN_DATA_INT8, 3, bd),
                               c_i8 = tu_packed_desc(UDNN_DATA_INT8, 3, cd),
                               a_half = tu_packed_desc(UDNN_DATA_HALF, 3, ad),
                               b_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 3, bd),
                               a4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, d4),
                               b4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, d4),
                               c4 = tu_packed_desc(UDNN_DATA_FLOAT, 4, d4),
                               a_2d = tu_packed_desc(UDNN_DATA_FLOAT, 2, a2),
                               b_2d = tu_packed_desc(UDNN_DATA_FLOAT, 2, b2),
                               c_2d = tu_packed_desc(UDNN_DATA_FLOAT, 2, c2);
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a_i8, A, b_i8, B, &one, c_i8, C),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "cDesc", "s8");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a_half, A, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc has data type f16", "cDesc has f32");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b_dbl, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc has data type f64", "cDesc has f32");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a4, A, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc has 4 dimensions", "2 to 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b4, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc has 4 dimensions", "2 to 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, c4, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has 4 dimensions", "2 to 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b_2d, B, &one, c_2d, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has 2 dimensions", "aDesc has 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a_2d, A, b.desc, B, &one, c_2d, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has 2 dimensions", "bDesc has 3");
        /* all 2-D works */
        tu_ok(udnnMatMul(h, 0, 0, &one, a_2d, A, b_2d, B, &one, c_2d, C));
        udnnTensorDescriptor_t ds[] = {a_i8, b_i8, c_i8, a_half, b_dbl, a4,
                                       b4, c4, a_2d, b_2d, c_2d};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

START_TEST(test_matmul_rejects_shapes)
{
    static const char fn[] = "udnnMatMul";
    /* A 3x2x4, B 3x4x5, C 3x2x5 agree; each bad descriptor breaks one rule */
    const int ad[3] = {3, 2, 4}, bd[3] = {3, 4, 5}, cd[3] = {3, 2, 5};
    const int b_k3[3] = {3, 3, 5}, c_m3[3] = {3, 3, 5}, c_n4[3] = {3, 2, 4},
              a_b2[3] = {2, 2, 4}, b_b2[3] = {2, 4, 5}, c_b1[3] = {1, 2, 5}, c_b2[3] = {2, 2, 5},
              a1[3] = {1, 2, 4}, c1[3] = {1, 2, 5}, a2[2] = {2, 4}, b2[2] = {4, 5};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, b, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 3, ad, TU_NCHW);
        tu_tensor_init(&b, h, UDNN_DATA_FLOAT, 3, bd, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 3, cd, TU_NCHW);
        void *A = ptr(&a), *B = ptr(&b), *C = ptr(&c);
        const float one = 1.0f;
        udnnTensorDescriptor_t bk3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, b_k3),
                               cm3 = tu_packed_desc(UDNN_DATA_FLOAT, 3, c_m3),
                               cn4 = tu_packed_desc(UDNN_DATA_FLOAT, 3, c_n4),
                               ab2 = tu_packed_desc(UDNN_DATA_FLOAT, 3, a_b2),
                               bb2 = tu_packed_desc(UDNN_DATA_FLOAT, 3, b_b2),
                               cb1 = tu_packed_desc(UDNN_DATA_FLOAT, 3, c_b1),
                               cb2 = tu_packed_desc(UDNN_DATA_FLOAT, 3, c_b2),
                               a_1 = tu_packed_desc(UDNN_DATA_FLOAT, 3, a1),
                               c_1 = tu_packed_desc(UDNN_DATA_FLOAT, 3, c1),
                               a_2 = tu_packed_desc(UDNN_DATA_FLOAT, 2, a2),
                               b_2 = tu_packed_desc(UDNN_DATA_FLOAT, 2, b2);
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, bk3, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc gives op(A) 4 columns",
                        "bDesc gives op(B) 3 rows");
        /* the transposes change which dims must agree */
        tu_assert_fails(udnnMatMul(h, 1, 0, &one, a.desc, A, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "op(A) 2 columns (transA=1)",
                        "op(B) 4 rows (transB=0)");
        tu_assert_fails(udnnMatMul(h, 0, 1, &one, a.desc, A, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "op(A) 4 columns (transA=0)",
                        "op(B) 5 rows (transB=1)");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, cm3, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc is 3 x 5", "op(A) x op(B) is 2 x 5");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, cn4, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc is 2 x 4", "is 2 x 5");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, ab2, A, b.desc, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc has batch 2", "cDesc has 3",
                        "3 or 1");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, bb2, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "bDesc has batch 2", "cDesc has 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, cb1, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has batch 1", "it must be 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, cb2, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has batch 2", "it must be 3");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a_1, A, b_2, B, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has batch 3", "it must be 1");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, c.desc, A),
                        UDNN_STATUS_BAD_PARAM, fn, "C is the buffer of A", "in place");
        tu_assert_fails(udnnMatMul(h, 0, 0, &one, a.desc, A, b.desc, B, &one, c.desc, B),
                        UDNN_STATUS_BAD_PARAM, fn, "C is the buffer of B", "in place");
        /* what is allowed: broadcasts from batch 1 and 2-D, 2-D into batch 1 */
        tu_ok(udnnMatMul(h, 0, 0, &one, a_1, A, b.desc, B, &one, c.desc, C));
        tu_ok(udnnMatMul(h, 0, 0, &one, a_2, A, b.desc, B, &one, c.desc, C));
        tu_ok(udnnMatMul(h, 0, 0, &one, a_2, A, b_2, B, &one, c_1, C));
        /* A and B may share a buffer: both are only read */
        tu_ok(udnnMatMul(h, 0, 0, &one, a_2, A, b_2, A, &one, c_1, C));
        udnnTensorDescriptor_t ds[] = {bk3, cm3, cn4, ab2, bb2, cb1, cb2, a_1, c_1, a_2, b_2};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        tu_tensor_free(&a);
        tu_tensor_free(&b);
        tu_tensor_free(&c);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("matmul");

    TCase *tiny = tcase_create("hand_computed");
    tcase_add_loop_test(tiny, test_matmul_tiny, 0, 4);
    tcase_add_test(tiny, test_matmul_tiny_broadcast);
    suite_add_tcase(s, tiny);

    TCase *ops = tcase_create("products");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_matmul, 0, 4 * 2 * 2 * N_FORMS);
    tcase_add_test(ops, test_matmul_trans_nonzero);
    tcase_add_loop_test(ops, test_matmul_long_k, 0, 4);
    suite_add_tcase(s, ops);

    TCase *val = tcase_create("validation");
    tcase_add_test(val, test_matmul_rejects);
    tcase_add_test(val, test_matmul_rejects_types_and_ranks);
    tcase_add_test(val, test_matmul_rejects_shapes);
    suite_add_tcase(s, val);

    return tu_run_suite(s);
}
