/* tensor_ops.c - SetTensor, ScaleTensor, AddTensor, TransformTensor and
 * OpTensor with its descriptor: validation, then one udnn_tensor_problem. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* ---- shared checks --------------------------------------------------------- */


/* `in` reaches `out` by broadcasting: same rank, each dim out's or 1. */
static udnnStatus_t check_broadcast(const char *fn, const char *in_arg,
                                    const udnnTensorDescriptor_t in, const char *out_arg,
                                    const udnnTensorDescriptor_t out)
{
    if (in->nb_dims != out->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: %s has %d dimensions, %s has %d", fn,
                         in_arg, in->nb_dims, out_arg, out->nb_dims);
    for (int i = 0; i < in->nb_dims; i++)
        if (in->dims[i] != out->dims[i] && in->dims[i] != 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: %s has dimension %d of size %d, %s has %d; it must be %d or 1",
                             fn, in_arg, i, in->dims[i], out_arg, out->dims[i], out->dims[i]);
    return UDNN_STATUS_SUCCESS;
}

static void init_problem(udnn_tensor_problem *p, udnn_op op)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    p->alpha1 = 1.0;
    p->alpha2 = 1.0;
}

/* ---- SetTensor, ScaleTensor ------------------------------------------------- */

/* *valuePtr in the type SetTensor reads it as for data of type t. */
static double read_value(const void *p, udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_INT8: return *(const int8_t *)p;
    case UDNN_DATA_INT32: return *(const int32_t *)p;
    default: return udnn_read_scalar(p, t);
    }
}

static udnnStatus_t check_set_type(const char *fn, const udnnTensorDescriptor_t d)
{
    if (d->dtype == UDNN_DATA_INT8 || d->dtype == UDNN_DATA_INT32) return UDNN_STATUS_SUCCESS;
    if (d->dtype == UDNN_DATA_FLOAT || d->dtype == UDNN_DATA_DOUBLE ||
        d->dtype == UDNN_DATA_HALF || d->dtype == UDNN_DATA_BFLOAT16)
        return UDNN_STATUS_SUCCESS;
    return udnn_fail(UDNN_STATUS_NOT_SUPPORTED,
                     "%s: yDesc has data type %s; this op takes FLOAT, DOUBLE, HALF, BFLOAT16, "
                     "INT8 or INT32",
                     fn, udnn_dtype_name(d->dtype));
}

udnnStatus_t udnnSetTensor(udnnHandle_t handle, const udnnTensorDescriptor_t yDesc, void *y,
                           const void *valuePtr)
{
    static const char fn[] = "udnnSetTensor";
    char ybuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, yDesc=%s, y=%p, valuePtr=%p)", fn, (void *)handle,
                      udnn_tensor_str(yDesc, ybuf, sizeof ybuf), y, valuePtr);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_ptr(fn, "valuePtr", valuePtr));
    UDNN_TRY(check_set_type(fn, yDesc));

    udnn_tensor_problem p;
    init_problem(&p, UDNN_OP_SET_TENSOR);
    udnn_tensor_from_desc(yDesc, &p.c);
    p.value = read_value(valuePtr, yDesc->dtype);
    p.c_ptr = y;
    return udnn_dispatch(handle, fn, p.op, -1, &p, NULL, 0);
}

udnnStatus_t udnnScaleTensor(udnnHandle_t handle, const udnnTensorDescriptor_t yDesc, void *y,
                             const void *alpha)
{
    static const char fn[] = "udnnScaleTensor";
    char ybuf[UDNN_STR_DESC], abuf[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, yDesc=%s, y=%p, alpha=%s)", fn, (void *)handle,
                      udnn_tensor_str(yDesc, ybuf, sizeof ybuf), y,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(yDesc), abuf, sizeof abuf));
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_float_type(fn, "yDesc", yDesc));

    udnn_tensor_problem p;
    init_problem(&p, UDNN_OP_SCALE_TENSOR);
    udnn_tensor_from_desc(yDesc, &p.c);
    p.alpha1 = udnn_read_scalar(alpha, yDesc->dtype);
    p.c_ptr = y;
    return udnn_dispatch(handle, fn, p.op, -1, &p, NULL, 0);
}

/* ---- AddTensor, TransformTensor ---------------------------------------------- */

udnnStatus_t udnnAddTensor(udnnHandle_t handle, const void *alpha,
                           const udnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                           const udnnTensorDescriptor_t cDesc, void *C)
{
    static const char fn[] = "udnnAddTensor";
    char abuf[UDNN_STR_DESC], cbuf[UDNN_STR_DESC];
    char sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, alpha=%s, aDesc=%s, A=%p, beta=%s, cDesc=%s, C=%p)", fn,
                      (void *)handle,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(cDesc), sa, sizeof sa),
                      udnn_tensor_str(aDesc, abuf, sizeof abuf), A,
                      udnn_scalar_str(beta, udnn_log_scalar_type(cDesc), sb, sizeof sb),
                      udnn_tensor_str(cDesc, cbuf, sizeof cbuf), C);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_ptr(fn, "A", A));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_ptr(fn, "C", C));
    UDNN_TRY(udnn_check_float_type(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_same_type(fn, "cDesc", cDesc, "aDesc", aDesc));
    UDNN_TRY(check_broadcast(fn, "aDesc", aDesc, "cDesc", cDesc));
    UDNN_TRY(udnn_check_in_place(fn, "C", "cDesc", cDesc, C, "A", "aDesc", aDesc, A));

    udnn_tensor_problem p;
    init_problem(&p, UDNN_OP_ADD_TENSOR);
    udnn_tensor_from_desc(aDesc, &p.a);
    udnn_tensor_from_desc(cDesc, &p.c);
    p.alpha1 = udnn_read_scalar(alpha, cDesc->dtype);
    p.beta = udnn_read_scalar(beta, cDesc->dtype);
    p.a_ptr = A;
    p.c_ptr = C;
    return udnn_dispatch(handle, fn, p.op, -1, &p, NULL, 0);
}

udnnStatus_t udnnTransformTensor(udnnHandle_t handle, const void *alpha,
                                 const udnnTensorDescriptor_t xDesc, const void *x,
                                 const void *beta, const udnnTensorDescriptor_t yDesc, void *y)
{
    static const char fn[] = "udnnTransformTensor";
    char xbuf[UDNN_STR_DESC], ybuf[UDNN_STR_DESC];
    char sa[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, alpha=%s, xDesc=%s, x=%p, beta=%s, yDesc=%s, y=%p)", fn,
                      (void *)handle,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(yDesc), sa, sizeof sa),
                      udnn_tensor_str(xDesc, xbuf, sizeof xbuf), x,
                      udnn_scalar_str(beta, udnn_log_scalar_type(yDesc), sb, sizeof sb),
                      udnn_tensor_str(yDesc, ybuf, sizeof ybuf), y);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_ptr(fn, "x", x));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_ptr(fn, "y", y));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_float_type(fn, "yDesc", yDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "xDesc", xDesc, "yDesc", yDesc));
    UDNN_TRY(udnn_check_in_place(fn, "y", "yDesc", yDesc, y, "x", "xDesc", xDesc, x));

    udnn_tensor_problem p;
    init_problem(&p, UDNN_OP_TRANSFORM_TENSOR);
    udnn_tensor_from_desc(xDesc, &p.a);
    udnn_tensor_from_desc(yDesc, &p.c);
    p.alpha1 = udnn_read_scalar(alpha, yDesc->dtype);
    p.beta = udnn_read_scalar(beta, yDesc->dtype);
    p.a_ptr = x;
    p.c_ptr = y;
    return udnn_dispatch(handle, fn, p.op, -1, &p, NULL, 0);
}

/* ---- the OpTensor descriptor --------------------------------------------------- */

udnnStatus_t udnnCreateOpTensorDescriptor(udnnOpTensorDescriptor_t *opTensorDesc)
{
    static const char fn[] = "udnnCreateOpTensorDescriptor";
    UDNN_LOG_API_CALL("%s(opTensorDesc=%p)", fn, (void *)opTensorDesc);
    UDNN_TRY(udnn_check_ptr(fn, "opTensorDesc", opTensorDesc));
    *opTensorDesc = calloc(1, sizeof **opTensorDesc);
    if (*opTensorDesc == NULL)
        return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyOpTensorDescriptor(udnnOpTensorDescriptor_t opTensorDesc)
{
    static const char fn[] = "udnnDestroyOpTensorDescriptor";
    UDNN_LOG_API_CALL("%s(opTensorDesc=%p)", fn, (void *)opTensorDesc);
    free(opTensorDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetOpTensorDescriptor(udnnOpTensorDescriptor_t opTensorDesc,
                                       udnnOpTensorOp_t opTensorOp,
                                       udnnDataType_t opTensorCompType,
                                       udnnNanPropagation_t opTensorNanOpt)
{
    static const char fn[] = "udnnSetOpTensorDescriptor";
    UDNN_LOG_API_CALL("%s(opTensorDesc=%p, opTensorOp=%d, opTensorCompType=%s, "
                      "opTensorNanOpt=%d)",
                      fn, (void *)opTensorDesc, (int)opTensorOp,
                      udnn_dtype_name(opTensorCompType), (int)opTensorNanOpt);
    UDNN_TRY(udnn_check_ptr(fn, "opTensorDesc", opTensorDesc));
    if (opTensorOp < UDNN_OP_TENSOR_ADD || opTensorOp > UDNN_OP_TENSOR_NOT)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: opTensorOp %d is not a udnnOpTensorOp_t",
                         fn, (int)opTensorOp);
    if (opTensorCompType != UDNN_DATA_FLOAT && opTensorCompType != UDNN_DATA_DOUBLE)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: opTensorCompType is %s (%d); it must be FLOAT or DOUBLE", fn,
                         udnn_dtype_name(opTensorCompType), (int)opTensorCompType);
    if (opTensorNanOpt != UDNN_NOT_PROPAGATE_NAN && opTensorNanOpt != UDNN_PROPAGATE_NAN)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: opTensorNanOpt %d is not a udnnNanPropagation_t", fn,
                         (int)opTensorNanOpt);
    opTensorDesc->op = opTensorOp;
    opTensorDesc->compute_type = opTensorCompType;
    opTensorDesc->nan_opt = opTensorNanOpt;
    opTensorDesc->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetOpTensorDescriptor(const udnnOpTensorDescriptor_t opTensorDesc,
                                       udnnOpTensorOp_t *opTensorOp,
                                       udnnDataType_t *opTensorCompType,
                                       udnnNanPropagation_t *opTensorNanOpt)
{
    static const char fn[] = "udnnGetOpTensorDescriptor";
    UDNN_LOG_API_CALL("%s(opTensorDesc=%p, opTensorOp=%p, opTensorCompType=%p, opTensorNanOpt=%p)",
                      fn, (void *)opTensorDesc, (void *)opTensorOp, (void *)opTensorCompType,
                      (void *)opTensorNanOpt);
    UDNN_TRY(udnn_check_ptr(fn, "opTensorDesc", opTensorDesc));
    if (!opTensorDesc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: opTensorDesc has not been set", fn);
    if (opTensorOp) *opTensorOp = opTensorDesc->op;
    if (opTensorCompType) *opTensorCompType = opTensorDesc->compute_type;
    if (opTensorNanOpt) *opTensorNanOpt = opTensorDesc->nan_opt;
    return UDNN_STATUS_SUCCESS;
}

/* ---- OpTensor -------------------------------------------------------------------- */

static int unary_op(udnnOpTensorOp_t op)
{
    return op == UDNN_OP_TENSOR_SQRT || op == UDNN_OP_TENSOR_NOT;
}

/* B and alpha2 of a binary op: B broadcast to C, C's type, C == B only
 * element for element. */
static udnnStatus_t check_operand_b(const char *fn, const void *alpha2,
                                    const udnnTensorDescriptor_t bDesc, const void *B,
                                    const udnnTensorDescriptor_t cDesc, const void *C)
{
    UDNN_TRY(udnn_check_ptr(fn, "alpha2", alpha2));
    UDNN_TRY(udnn_check_tensor(fn, "bDesc", bDesc));
    UDNN_TRY(udnn_check_ptr(fn, "B", B));
    UDNN_TRY(udnn_check_same_type(fn, "cDesc", cDesc, "bDesc", bDesc));
    UDNN_TRY(check_broadcast(fn, "bDesc", bDesc, "cDesc", cDesc));
    return udnn_check_in_place(fn, "C", "cDesc", cDesc, C, "B", "bDesc", bDesc, B);
}

udnnStatus_t udnnOpTensor(udnnHandle_t handle, const udnnOpTensorDescriptor_t opTensorDesc,
                          const void *alpha1, const udnnTensorDescriptor_t aDesc, const void *A,
                          const void *alpha2, const udnnTensorDescriptor_t bDesc, const void *B,
                          const void *beta, const udnnTensorDescriptor_t cDesc, void *C)
{
    static const char fn[] = "udnnOpTensor";
    char abuf[UDNN_STR_DESC], bbuf[UDNN_STR_DESC], cbuf[UDNN_STR_DESC];
    char s1[UDNN_STR_SCALAR], s2[UDNN_STR_SCALAR], sb[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, opTensorDesc=%p (op %d), alpha1=%s, aDesc=%s, A=%p, "
                      "alpha2=%s, bDesc=%s, B=%p, beta=%s, cDesc=%s, C=%p)",
                      fn, (void *)handle, (void *)opTensorDesc,
                      opTensorDesc ? (int)opTensorDesc->op : -1,
                      udnn_scalar_str(alpha1, udnn_log_scalar_type(cDesc), s1, sizeof s1),
                      udnn_tensor_str(aDesc, abuf, sizeof abuf), A,
                      udnn_scalar_str(alpha2, udnn_log_scalar_type(cDesc), s2, sizeof s2),
                      udnn_tensor_str(bDesc, bbuf, sizeof bbuf), B,
                      udnn_scalar_str(beta, udnn_log_scalar_type(cDesc), sb, sizeof sb),
                      udnn_tensor_str(cDesc, cbuf, sizeof cbuf), C);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "opTensorDesc", opTensorDesc));
    if (!opTensorDesc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: opTensorDesc has not been set", fn);
    UDNN_TRY(udnn_check_ptr(fn, "alpha1", alpha1));
    UDNN_TRY(udnn_check_tensor(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_ptr(fn, "A", A));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_ptr(fn, "C", C));
    UDNN_TRY(udnn_check_float_type(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_same_type(fn, "cDesc", cDesc, "aDesc", aDesc));
    UDNN_TRY(udnn_check_same_dims(fn, "cDesc", cDesc, "aDesc", aDesc));
    UDNN_TRY(udnn_check_in_place(fn, "C", "cDesc", cDesc, C, "A", "aDesc", aDesc, A));
    const int unary = unary_op(opTensorDesc->op);
    if (!unary) UDNN_TRY(check_operand_b(fn, alpha2, bDesc, B, cDesc, C));
    if (cDesc->dtype == UDNN_DATA_DOUBLE && opTensorDesc->compute_type != UDNN_DATA_DOUBLE)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: opTensorDesc computes in %s; DOUBLE data needs compType DOUBLE",
                         fn, udnn_dtype_name(opTensorDesc->compute_type));

    udnn_tensor_problem p;
    init_problem(&p, UDNN_OP_OP_TENSOR);
    p.tensor_op = opTensorDesc->op;
    p.compute_type = opTensorDesc->compute_type;
    p.nan_opt = opTensorDesc->nan_opt;
    udnn_tensor_from_desc(aDesc, &p.a);
    udnn_tensor_from_desc(cDesc, &p.c);
    p.alpha1 = udnn_read_scalar(alpha1, cDesc->dtype);
    p.beta = udnn_read_scalar(beta, cDesc->dtype);
    p.a_ptr = A;
    p.c_ptr = C;
    if (!unary) {
        udnn_tensor_from_desc(bDesc, &p.b);
        p.alpha2 = udnn_read_scalar(alpha2, cDesc->dtype);
        p.b_ptr = B;
    }
    return udnn_dispatch(handle, fn, p.op, -1, &p, NULL, 0);
}
