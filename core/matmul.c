/* matmul.c - udnnMatMul: validation, then one udnn_matmul_problem.
 *
 * Decisions where DESIGN.md is silent:
 *  - A, B and C each have 2 or 3 dims; a 2-D operand is a batch of 1. C
 *    must be 3-D when A or B is (as numpy's matmul), and its batch must be
 *    the larger of A's and B's; each of those is C's batch or 1 (broadcast).
 *  - A, B and C have one data type.
 *  - C may not be the buffer of A or B: each element of the product reads
 *    a whole row and column, so no in-place layout is safe. */
#include "core/core.h"

/* Rows and columns of op(X) from X's last two dims. */
static void op_shape(const udnnTensorDescriptor_t d, int trans, int64_t *rows, int64_t *cols)
{
    const int64_t r = d->dims[d->nb_dims - 2], c = d->dims[d->nb_dims - 1];
    *rows = trans ? c : r;
    *cols = trans ? r : c;
}

static int64_t batch_of(const udnnTensorDescriptor_t d)
{
    return d->nb_dims == 3 ? d->dims[0] : 1;
}

/* The descriptor as batch, rows, cols; batch stride 0 for a batch of 1, so
 * that it broadcasts. */
static void batched_tensor(const udnnTensorDescriptor_t d, udnn_tensor *t)
{
    udnn_tensor_from_desc(d, t);
    if (t->rank == 2) {
        t->dims[2] = t->dims[1];
        t->strides[2] = t->strides[1];
        t->dims[1] = t->dims[0];
        t->strides[1] = t->strides[0];
        t->dims[0] = 1;
        t->rank = 3;
    }
    if (t->dims[0] == 1) t->strides[0] = 0;
}

static udnnStatus_t check_batch(const char *fn, const char *arg, const udnnTensorDescriptor_t d,
                                int64_t batch)
{
    const int64_t b = batch_of(d);
    if (b != batch && b != 1)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: %s has batch %lld, cDesc has %lld; it must be %lld or 1", fn, arg,
                         (long long)b, (long long)batch, (long long)batch);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_shapes(const char *fn, int transA, int transB,
                                 const udnnTensorDescriptor_t aDesc,
                                 const udnnTensorDescriptor_t bDesc,
                                 const udnnTensorDescriptor_t cDesc)
{
    UDNN_TRY(udnn_check_rank(fn, "aDesc", aDesc, 2, 3));
    UDNN_TRY(udnn_check_rank(fn, "bDesc", bDesc, 2, 3));
    UDNN_TRY(udnn_check_rank(fn, "cDesc", cDesc, 2, 3));
    if (cDesc->nb_dims == 2 && (aDesc->nb_dims == 3 || bDesc->nb_dims == 3))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: cDesc has 2 dimensions; it needs 3 since %s has 3", fn,
                         aDesc->nb_dims == 3 ? "aDesc" : "bDesc");

    int64_t m, ka, kb, n;
    op_shape(aDesc, transA, &m, &ka);
    op_shape(bDesc, transB, &kb, &n);
    if (ka != kb)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: aDesc gives op(A) %lld columns (transA=%d), bDesc gives op(B) %lld "
                         "rows (transB=%d); they must agree",
                         fn, (long long)ka, transA != 0, (long long)kb, transB != 0);
    int64_t cm, cn;
    op_shape(cDesc, 0, &cm, &cn);
    if (cm != m || cn != n)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: cDesc is %lld x %lld; op(A) x op(B) is %lld x %lld", fn,
                         (long long)cm, (long long)cn, (long long)m, (long long)n);

    const int64_t ba = batch_of(aDesc), bb = batch_of(bDesc), bc = batch_of(cDesc);
    const int64_t want = ba > bb ? ba : bb;
    if (bc != want)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: cDesc has batch %lld; it must be %lld, the larger batch of aDesc "
                         "(%lld) and bDesc (%lld)",
                         fn, (long long)bc, (long long)want, (long long)ba, (long long)bb);
    UDNN_TRY(check_batch(fn, "aDesc", aDesc, bc));
    return check_batch(fn, "bDesc", bDesc, bc);
}

udnnStatus_t udnnMatMul(udnnHandle_t handle, int transA, int transB, const void *alpha,
                        const udnnTensorDescriptor_t aDesc, const void *A,
                        const udnnTensorDescriptor_t bDesc, const void *B, const void *beta,
                        const udnnTensorDescriptor_t cDesc, void *C)
{
    static const char fn[] = "udnnMatMul";
    char ad[UDNN_STR_DESC], bd[UDNN_STR_DESC], cd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, transA=%d, transB=%d, alpha=%s, aDesc=%s, A=%p, bDesc=%s, "
                      "B=%p, beta=%s, cDesc=%s, C=%p)",
                      fn, (void *)handle, transA, transB,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(cDesc), as, sizeof as),
                      udnn_tensor_str(aDesc, ad, sizeof ad), A,
                      udnn_tensor_str(bDesc, bd, sizeof bd), B,
                      udnn_scalar_str(beta, udnn_log_scalar_type(cDesc), bs, sizeof bs),
                      udnn_tensor_str(cDesc, cd, sizeof cd), C);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_ptr(fn, "A", A));
    UDNN_TRY(udnn_check_tensor(fn, "bDesc", bDesc));
    UDNN_TRY(udnn_check_ptr(fn, "B", B));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_ptr(fn, "C", C));
    UDNN_TRY(udnn_check_float_type(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_same_type(fn, "cDesc", cDesc, "aDesc", aDesc));
    UDNN_TRY(udnn_check_same_type(fn, "cDesc", cDesc, "bDesc", bDesc));
    UDNN_TRY(check_shapes(fn, transA, transB, aDesc, bDesc, cDesc));
    if (C == A || C == B)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: C is the buffer of %s; a matrix product cannot run in place", fn,
                         C == A ? "A" : "B");

    udnn_matmul_problem p = {0};
    p.trans_a = transA != 0;
    p.trans_b = transB != 0;
    batched_tensor(aDesc, &p.a);
    batched_tensor(bDesc, &p.b);
    batched_tensor(cDesc, &p.c);
    p.batch = p.c.dims[0];
    op_shape(aDesc, transA, &p.m, &p.k);
    p.n = p.c.dims[2];
    p.alpha = udnn_read_scalar(alpha, cDesc->dtype);
    p.beta = udnn_read_scalar(beta, cDesc->dtype);
    p.a_ptr = A;
    p.b_ptr = B;
    p.c_ptr = C;
    return udnn_dispatch(handle, fn, UDNN_OP_MATMUL, -1, &p, NULL, 0);
}
