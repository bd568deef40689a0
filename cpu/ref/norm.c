/* norm.c - reference layer, RMS and group normalization, forward and
 * backward: every set through backends/ref/norm.h. */
#include "backends/ref/norm.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t norm_fwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const ref_norm_plan r = ref_norm_plan_of(problem);
#pragma omp parallel for if (ref_count(&r.p.x) >= REF_PAR_MIN) schedule(static)
    for (int64_t set = 0; set < r.g.sets; set++) ref_norm_fwd_set(&r, set);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t norm_bwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const ref_norm_plan r = ref_norm_plan_of(problem);
    /* every parameter gradient before any dx: dx may be in dy's place */
#pragma omp parallel for if (ref_count(&r.p.x) >= REF_PAR_MIN) schedule(static)
    for (int64_t c = 0; c < r.g.params; c++) ref_norm_param_grad(&r, c);
#pragma omp parallel for if (ref_count(&r.p.x) >= REF_PAR_MIN) schedule(static)
    for (int64_t set = 0; set < r.g.sets; set++) ref_norm_bwd_set(&r, set);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_norm_fwd = {
    /* .name = */ "ref_norm_fwd",
    /* .op = */ UDNN_OP_NORM_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_fwd_run,
};

const udnn_solver udnn_cpu_ref_norm_bwd = {
    /* .name = */ "ref_norm_bwd",
    /* .op = */ UDNN_OP_NORM_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_bwd_run,
};

/* Group norm shares the runs: ref_norm_plan_of tells the families apart
 * by p->groups. */
const udnn_solver udnn_cpu_ref_groupnorm_fwd = {
    /* .name = */ "ref_groupnorm_fwd",
    /* .op = */ UDNN_OP_GROUPNORM_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_fwd_run,
};

const udnn_solver udnn_cpu_ref_groupnorm_bwd = {
    /* .name = */ "ref_groupnorm_bwd",
    /* .op = */ UDNN_OP_GROUPNORM_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_bwd_run,
};
