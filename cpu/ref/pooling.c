/* pooling.c - reference pooling forward and backward: every element of y,
 * or of dx, through backends/ref/pool.h. */
#include "backends/ref/pool.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t pool_fwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_pool_problem *p = problem;
    const int64_t count = ref_count(&p->y);
#pragma omp parallel for if (ref_count(&p->x) >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_pool_fwd_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t pool_bwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_pool_problem *p = problem;
    const int64_t count = ref_count(&p->dx);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_pool_bwd_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_pool_fwd = {
    /* .name = */ "ref_pool_fwd",
    /* .op = */ UDNN_OP_POOL_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ pool_fwd_run,
};

const udnn_solver udnn_cpu_ref_pool_bwd = {
    /* .name = */ "ref_pool_bwd",
    /* .op = */ UDNN_OP_POOL_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ pool_bwd_run,
};
