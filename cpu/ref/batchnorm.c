/* batchnorm.c - reference batch normalization: every feature through
 * backends/ref/bn.h, features in parallel (each writes only its own
 * elements and statistics, so the bits do not depend on the threads). */
#include "backends/ref/bn.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t bn_fwd_train_run(void *ctx, const void *problem, void *workspace,
                                     size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const int64_t nf = ref_bn_features(p);
#pragma omp parallel for if (ref_count(&p->x) >= REF_PAR_MIN) schedule(static)
    for (int64_t f = 0; f < nf; f++) ref_bn_train_feature(p, f);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t bn_fwd_infer_run(void *ctx, const void *problem, void *workspace,
                                     size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const int64_t nf = ref_bn_features(p);
#pragma omp parallel for if (ref_count(&p->x) >= REF_PAR_MIN) schedule(static)
    for (int64_t f = 0; f < nf; f++) ref_bn_infer_feature(p, f);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t bn_bwd_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_bn_problem *p = problem;
    const int64_t nf = ref_bn_features(p);
#pragma omp parallel for if (ref_count(&p->x) >= REF_PAR_MIN) schedule(static)
    for (int64_t f = 0; f < nf; f++) ref_bn_bwd_feature(p, f);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_bn_fwd_train = {
    /* .name = */ "ref_bn_fwd_train",
    /* .op = */ UDNN_OP_BN_FWD_TRAIN,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_fwd_train_run,
};

const udnn_solver udnn_cpu_ref_bn_fwd_infer = {
    /* .name = */ "ref_bn_fwd_infer",
    /* .op = */ UDNN_OP_BN_FWD_INFER,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_fwd_infer_run,
};

const udnn_solver udnn_cpu_ref_bn_bwd = {
    /* .name = */ "ref_bn_bwd",
    /* .op = */ UDNN_OP_BN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ bn_bwd_run,
};
