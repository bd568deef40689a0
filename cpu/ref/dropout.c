/* dropout.c - reference dropout, forward and backward: every element
 * through backends/ref/dropout.h. */
#include "backends/ref/dropout.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t dropout_fwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_dropout_problem *p = problem;
    const int64_t count = ref_count(&p->in);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_dropout_fwd_at(p, i);
    /* dropout 0 without states counts nothing */
    if (p->states != NULL) {
        ref_dropout_state st;
        memcpy(&st, p->states, sizeof st);
        st.calls++;
        memcpy(p->states, &st, sizeof st);
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t dropout_bwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_dropout_problem *p = problem;
    const int64_t count = ref_count(&p->in);
#pragma omp parallel for if (count >= REF_PAR_MIN) schedule(static)
    for (int64_t i = 0; i < count; i++) ref_dropout_apply_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_dropout_fwd = {
    /* .name = */ "ref_dropout_fwd",
    /* .op = */ UDNN_OP_DROPOUT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ dropout_fwd_run,
};

const udnn_solver udnn_cpu_ref_dropout_bwd = {
    /* .name = */ "ref_dropout_bwd",
    /* .op = */ UDNN_OP_DROPOUT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ dropout_bwd_run,
};
