/* matmul.c - reference batched matrix product: every element of c through
 * backends/ref/matmul.h. */
#include "backends/ref/matmul.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t matmul_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_matmul_problem *p = problem;
    const int64_t count = p->batch * p->m * p->n;
#pragma omp parallel for if (count * p->k >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_matmul_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_matmul = {
    /* .name = */ "ref_matmul",
    /* .op = */ UDNN_OP_MATMUL,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ matmul_run,
};
