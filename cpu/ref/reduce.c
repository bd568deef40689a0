/* reduce.c - reference ReduceTensor: every element of c through
 * backends/ref/reduce.h. */
#include "backends/ref/reduce.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t reduce_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const ref_reduce_plan r = ref_reduce_plan_of(problem);
    const int64_t groups = ref_count(&r.p.c);
#pragma omp parallel for if (ref_count(&r.p.a) >= REF_PAR_MIN) schedule(static)
    for (int64_t g = 0; g < groups; g++) ref_reduce_at(&r, g);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_reduce = {
    /* .name = */ "ref_reduce",
    /* .op = */ UDNN_OP_REDUCE,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ reduce_run,
};
