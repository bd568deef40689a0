/* activation.c - reference activation forward and backward: every element
 * through backends/ref/act.h, the function the GPU backends' reference-bits
 * solvers compute too. */
#include "backends/ref/act.h"
#include "cpu/cpu_solvers.h"

/* y = alpha * act(x) + beta * y, element by element in logical order; x
 * and y may be one buffer when their strides agree (core checks). */
static udnnStatus_t act_fwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_act_problem *p = problem;
    int64_t count = ref_count(&p->x);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_act_fwd_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

/* dx = alpha * act'(x) * dy + beta * dx. */
static udnnStatus_t act_bwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_act_problem *p = problem;
    int64_t count = ref_count(&p->x);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_act_bwd_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_act_fwd = {
    /* .name = */ "ref_act_fwd",
    /* .op = */ UDNN_OP_ACT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ act_fwd_run,
};

const udnn_solver udnn_cpu_ref_act_bwd = {
    /* .name = */ "ref_act_bwd",
    /* .op = */ UDNN_OP_ACT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ act_bwd_run,
};
