/* tensor_ops.c - reference element-wise tensor ops (set, scale, add,
 * transform, op-tensor): every element through backends/ref/tensor.h. */
#include "backends/ref/tensor.h"
#include "cpu/cpu_solvers.h"

/* Every element of c through at, p broadcast first. */
static void each_element(const udnn_tensor_problem *p,
                         void (*at)(const udnn_tensor_problem *, int64_t))
{
    const udnn_tensor_problem q = ref_tensor_broadcast(p);
    const int64_t n = ref_count(&q.c);
#pragma omp parallel for if (n >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < n; i++) at(&q, i);
}

static udnnStatus_t run_set(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    each_element(problem, ref_set_at);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_scale(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    each_element(problem, ref_scale_at);
    return UDNN_STATUS_SUCCESS;
}

/* ADD and TRANSFORM alike (a TRANSFORM's a has c's dims already) */
static udnnStatus_t run_add(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    each_element(problem, ref_add_at);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_op(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    each_element(problem, ref_op_at);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_set_tensor = {
    /* .name = */ "ref_set_tensor",
    /* .op = */ UDNN_OP_SET_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_set,
};

const udnn_solver udnn_cpu_ref_scale_tensor = {
    /* .name = */ "ref_scale_tensor",
    /* .op = */ UDNN_OP_SCALE_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_scale,
};

const udnn_solver udnn_cpu_ref_add_tensor = {
    /* .name = */ "ref_add_tensor",
    /* .op = */ UDNN_OP_ADD_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_add,
};

const udnn_solver udnn_cpu_ref_transform_tensor = {
    /* .name = */ "ref_transform_tensor",
    /* .op = */ UDNN_OP_TRANSFORM_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_add,
};

const udnn_solver udnn_cpu_ref_op_tensor = {
    /* .name = */ "ref_op_tensor",
    /* .op = */ UDNN_OP_OP_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_op,
};
