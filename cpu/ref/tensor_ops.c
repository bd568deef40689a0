/* tensor_ops.c - reference element-wise tensor ops (set, scale, add,
 * transform, op-tensor): one logical index at a time, math in double.
 *
 * Every kernel reads all inputs of an element before it writes that
 * element, so an output may be one of its inputs (core allows that only
 * when both have the same layout).
 *
 * MIN and MAX with a NaN operand follow nan_opt: PROPAGATE_NAN gives NaN;
 * NOT_PROPAGATE_NAN gives the other operand (NaN only when both are). */
#include <math.h>

#include "cpu/cpu_solvers.h"

/* `in` seen with `out`'s dims: its size-1 dims repeat through stride 0. */
static udnn_tensor broadcast_view(const udnn_tensor *in, const udnn_tensor *out)
{
    udnn_tensor v = *in;
    for (int i = 0; i < out->rank; i++) {
        if (in->dims[i] == 1 && out->dims[i] != 1) v.strides[i] = 0;
        v.dims[i] = out->dims[i];
    }
    return v;
}

static udnnStatus_t run_set(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const int64_t n = ref_count(&p->c);
#pragma omp parallel for if (n >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++) ref_store(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), p->value);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_scale(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const int64_t n = ref_count(&p->c);
#pragma omp parallel for if (n >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        int64_t off = ref_offset(&p->c, i);
        ref_store(p->c_ptr, p->c.dtype, off, p->alpha1 * ref_load(p->c_ptr, p->c.dtype, off));
    }
    return UDNN_STATUS_SUCCESS;
}

/* c = alpha1 * a + beta * c; serves ADD (a broadcast) and TRANSFORM (a of
 * c's dims, possibly of another type). */
static udnnStatus_t run_add(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const udnn_tensor a = broadcast_view(&p->a, &p->c);
    const int64_t n = ref_count(&p->c);
#pragma omp parallel for if (n >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double v = ref_load(p->a_ptr, a.dtype, ref_offset(&a, i));
        ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), v, p->alpha1, p->beta);
    }
    return UDNN_STATUS_SUCCESS;
}

static double op_min_max(int is_max, udnnNanPropagation_t nan_opt, double a, double b)
{
    if (isnan(a) || isnan(b)) {
        if (nan_opt == UDNN_PROPAGATE_NAN) return NAN;
        return isnan(a) ? b : a;
    }
    return is_max ? (a > b ? a : b) : (a < b ? a : b);
}

/* op(a, b) with the alphas already applied. */
static double op_apply(const udnn_tensor_problem *p, double a, double b)
{
    switch (p->tensor_op) {
    case UDNN_OP_TENSOR_ADD: return a + b;
    case UDNN_OP_TENSOR_MUL: return a * b;
    case UDNN_OP_TENSOR_MIN: return op_min_max(0, p->nan_opt, a, b);
    case UDNN_OP_TENSOR_MAX: return op_min_max(1, p->nan_opt, a, b);
    case UDNN_OP_TENSOR_SQRT: return sqrt(a);
    case UDNN_OP_TENSOR_NOT: return 1.0 - a;
    }
    return NAN;
}

static udnnStatus_t run_op(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const int binary = p->tensor_op != UDNN_OP_TENSOR_SQRT && p->tensor_op != UDNN_OP_TENSOR_NOT;
    const udnn_tensor b = binary ? broadcast_view(&p->b, &p->c) : p->b;
    const int64_t n = ref_count(&p->c);
#pragma omp parallel for if (n >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++) {
        double a = p->alpha1 * ref_load(p->a_ptr, p->a.dtype, ref_offset(&p->a, i));
        double bv = binary ? p->alpha2 * ref_load(p->b_ptr, b.dtype, ref_offset(&b, i)) : 0.0;
        ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, i), op_apply(p, a, bv), 1.0, p->beta);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_set_tensor = {
    /* .name = */ "ref_set_tensor",
    /* .op = */ UDNN_OP_SET_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_set,
};

const udnn_solver udnn_cpu_ref_scale_tensor = {
    /* .name = */ "ref_scale_tensor",
    /* .op = */ UDNN_OP_SCALE_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_scale,
};

const udnn_solver udnn_cpu_ref_add_tensor = {
    /* .name = */ "ref_add_tensor",
    /* .op = */ UDNN_OP_ADD_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_add,
};

const udnn_solver udnn_cpu_ref_transform_tensor = {
    /* .name = */ "ref_transform_tensor",
    /* .op = */ UDNN_OP_TRANSFORM_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_add,
};

const udnn_solver udnn_cpu_ref_op_tensor = {
    /* .name = */ "ref_op_tensor",
    /* .op = */ UDNN_OP_OP_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_op,
};
