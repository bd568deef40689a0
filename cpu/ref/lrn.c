/* lrn.c - reference cross-channel LRN, forward and backward: every column
 * through backends/ref/lrn.h. */
#include "backends/ref/lrn.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t lrn_fwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const ref_lrn_plan r = ref_lrn_plan_of(problem);
    const int64_t n = ref_lrn_columns(&r.p);
#pragma omp parallel for if (ref_count(&r.p.x) >= REF_PAR_MIN) schedule(static)
    for (int64_t col = 0; col < n; col++) ref_lrn_fwd_column(&r, col);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t lrn_bwd_run(void *ctx, const void *problem, void *workspace,
                                size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const ref_lrn_plan r = ref_lrn_plan_of(problem);
    const int64_t n = ref_lrn_columns(&r.p);
#pragma omp parallel for if (ref_count(&r.p.x) >= REF_PAR_MIN) schedule(static)
    for (int64_t col = 0; col < n; col++) ref_lrn_bwd_column(&r, col);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_lrn_fwd = {
    /* .name = */ "ref_lrn_fwd",
    /* .op = */ UDNN_OP_LRN_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ lrn_fwd_run,
};

const udnn_solver udnn_cpu_ref_lrn_bwd = {
    /* .name = */ "ref_lrn_bwd",
    /* .op = */ UDNN_OP_LRN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ lrn_bwd_run,
};
