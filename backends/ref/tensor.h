/* tensor.h - the reference element-wise tensor ops (set, scale, add,
 * transform, op-tensor; cpu/ref/tensor_ops.c and the GPU backends'
 * reference-bits solvers): one logical index at a time, math in double.
 *
 * Every element reads all its inputs before it writes, so an output may
 * be one of its inputs (core allows that only when both have the same
 * layout).
 *
 * MIN and MAX with a NaN operand follow nan_opt: PROPAGATE_NAN gives NaN;
 * NOT_PROPAGATE_NAN gives the other operand (NaN only when both are). */
#ifndef UDNN_REF_TENSOR_H
#define UDNN_REF_TENSOR_H

#include <math.h>

#include "backends/ref/ref.h"

/* `in` seen with `out`'s dims: its size-1 dims repeat through stride 0. */
UDNN_REF_FN udnn_tensor ref_broadcast_view(const udnn_tensor *in, const udnn_tensor *out)
{
    udnn_tensor v = *in;
    for (int i = 0; i < out->rank; i++) {
        if (in->dims[i] == 1 && out->dims[i] != 1) v.strides[i] = 0;
        v.dims[i] = out->dims[i];
    }
    return v;
}

UDNN_REF_FN int ref_tensor_op_binary(udnnOpTensorOp_t op)
{
    return op != UDNN_OP_TENSOR_SQRT && op != UDNN_OP_TENSOR_NOT;
}

/* p with a (ADD, TRANSFORM) and b (a binary op-tensor) seen with c's dims,
 * as the element functions below read them. */
UDNN_REF_FN udnn_tensor_problem ref_tensor_broadcast(const udnn_tensor_problem *p)
{
    udnn_tensor_problem q = *p;
    if (p->op == UDNN_OP_ADD_TENSOR || p->op == UDNN_OP_TRANSFORM_TENSOR)
        q.a = ref_broadcast_view(&p->a, &p->c);
    if (p->op == UDNN_OP_OP_TENSOR && ref_tensor_op_binary(p->tensor_op))
        q.b = ref_broadcast_view(&p->b, &p->c);
    return q;
}

/* Element i (c's logical order) of c = value. */
UDNN_REF_FN void ref_set_at(const udnn_tensor_problem *p, int64_t i)
{
    ref_store(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), p->value);
}

/* Element i of c = alpha1 * c. */
UDNN_REF_FN void ref_scale_at(const udnn_tensor_problem *p, int64_t i)
{
    int64_t off = ref_offset(&p->c, i);
    ref_store(p->c_ptr, p->c.dtype, off, p->alpha1 * ref_load(p->c_ptr, p->c.dtype, off));
}

/* Element i of c = alpha1 * a + beta * c; serves ADD (a broadcast) and
 * TRANSFORM (a of c's dims, possibly of another type); p broadcast. */
UDNN_REF_FN void ref_add_at(const udnn_tensor_problem *p, int64_t i)
{
    double v = ref_load(p->a_ptr, p->a.dtype, ref_offset(&p->a, i));
    ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), v, p->alpha1, p->beta);
}

UDNN_REF_FN double ref_op_min_max(int is_max, udnnNanPropagation_t nan_opt, double a, double b)
{
    if (isnan(a) || isnan(b)) {
        if (nan_opt == UDNN_PROPAGATE_NAN) return NAN;
        return isnan(a) ? b : a;
    }
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

/* op(a, b) with the alphas already applied. */
UDNN_REF_FN double ref_op_apply(const udnn_tensor_problem *p, double a, double b)
{
    switch (p->tensor_op) {
    case UDNN_OP_TENSOR_ADD: return a + b;
    case UDNN_OP_TENSOR_MUL: return a * b;
    case UDNN_OP_TENSOR_MIN: return ref_op_min_max(0, p->nan_opt, a, b);
    case UDNN_OP_TENSOR_MAX: return ref_op_min_max(1, p->nan_opt, a, b);
    case UDNN_OP_TENSOR_SQRT: return sqrt(a);
    case UDNN_OP_TENSOR_NOT: return 1.0 - a;
    }
    return NAN;
}

/* Element i of c = op(alpha1 * a, alpha2 * b) + beta * c; p broadcast. */
UDNN_REF_FN void ref_op_at(const udnn_tensor_problem *p, int64_t i)
{
    const int binary = ref_tensor_op_binary(p->tensor_op);
    double a = p->alpha1 * ref_load(p->a_ptr, p->a.dtype, ref_offset(&p->a, i));
    double bv = binary ? p->alpha2 * ref_load(p->b_ptr, p->b.dtype, ref_offset(&p->b, i)) : 0.0;
    ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), ref_op_apply(p, a, bv), 1.0, p->beta);
}

#endif /* UDNN_REF_TENSOR_H */
