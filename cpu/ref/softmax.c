/* softmax.c - reference softmax forward and backward: every group through
 * backends/ref/softmax.h. */
#include "backends/ref/softmax.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t softmax_fwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_softmax_problem *p = problem;
    const int64_t groups = ref_softmax_groups(&p->x, p->mode);
#pragma omp parallel for if (groups * ref_softmax_group_size(&p->x, p->mode) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t g = 0; g < groups; g++) ref_softmax_fwd_group(p, g);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t softmax_bwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_softmax_problem *p = problem;
    const int64_t groups = ref_softmax_groups(&p->y, p->mode);
#pragma omp parallel for if (groups * ref_softmax_group_size(&p->y, p->mode) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t g = 0; g < groups; g++) ref_softmax_bwd_group(p, g);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_softmax_fwd = {
    /* .name = */ "ref_softmax_fwd",
    /* .op = */ UDNN_OP_SOFTMAX_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ softmax_fwd_run,
};

const udnn_solver udnn_cpu_ref_softmax_bwd = {
    /* .name = */ "ref_softmax_bwd",
    /* .op = */ UDNN_OP_SOFTMAX_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ softmax_bwd_run,
};
