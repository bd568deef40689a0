/* conv.c - the reference convolution kernels: every output element
 * through backends/ref/conv.h (which says how each is computed), in
 * parallel where there is enough work (UDNN_VERIFY re-runs whole training
 * runs here); the same result on any number of threads. */
#include "backends/ref/conv.h"
#include "cpu/cpu_solvers.h"

static udnnStatus_t run_fwd(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_problem *p = problem;
    const int64_t count = ref_count(&p->y);
#pragma omp parallel for if (count * (ref_count(&p->w) / p->w.dims[0]) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t i = 0; i < count; i++) ref_conv_fwd_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_bwd_data(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_problem *p = problem;
    const int64_t count = ref_count(&p->x);
#pragma omp parallel for if (count * (ref_count(&p->w) / p->x.dims[1]) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t i = 0; i < count; i++) ref_conv_bwd_data_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_bwd_filter(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_problem *p = problem;
    const int64_t count = ref_count(&p->w);
#pragma omp parallel for if (count * (ref_count(&p->y) / p->y.dims[1]) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t i = 0; i < count; i++) ref_conv_bwd_filter_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_bwd_bias(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_bias_problem *p = problem;
    const int64_t channels = p->dy.dims[1];
#pragma omp parallel for if (ref_count(&p->dy) >= REF_PAR_MIN) schedule(static)
    for (int64_t k = 0; k < channels; k++) ref_conv_bwd_bias_at(p, k);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_bias_act(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_problem *p = problem;
    const int64_t count = ref_count(&p->y);
#pragma omp parallel for if (count * (ref_count(&p->w) / p->w.dims[0]) >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t i = 0; i < count; i++) ref_conv_bias_act_at(p, i);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_conv_fwd = {
    /* .name = */ "ref_conv_fwd",
    /* .op = */ UDNN_OP_CONV_FWD,
    /* .algo = */ UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_fwd,
};

const udnn_solver udnn_cpu_ref_conv_bwd_data = {
    /* .name = */ "ref_conv_bwd_data",
    /* .op = */ UDNN_OP_CONV_BWD_DATA,
    /* .algo = */ UDNN_CONVOLUTION_BWD_DATA_ALGO_0,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_bwd_data,
};

const udnn_solver udnn_cpu_ref_conv_bwd_filter = {
    /* .name = */ "ref_conv_bwd_filter",
    /* .op = */ UDNN_OP_CONV_BWD_FILTER,
    /* .algo = */ UDNN_CONVOLUTION_BWD_FILTER_ALGO_0,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_bwd_filter,
};

const udnn_solver udnn_cpu_ref_conv_bwd_bias = {
    /* .name = */ "ref_conv_bwd_bias",
    /* .op = */ UDNN_OP_CONV_BWD_BIAS,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_bwd_bias,
};

const udnn_solver udnn_cpu_ref_conv_bias_act = {
    /* .name = */ "ref_conv_bias_act",
    /* .op = */ UDNN_OP_CONV_BIAS_ACT,
    /* .algo = */ UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ run_bias_act,
};
