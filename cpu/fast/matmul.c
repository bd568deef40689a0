/* matmul.c - the fast batched matrix product: each batch through the
 * SGEMM of gemm.c, its tiles and the batches shared among the threads as
 * one range, so that many small products keep every thread busy as well
 * as one large one does. Any strides; a broadcast operand (batch stride 0)
 * needs nothing special. */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cpu/cpu_solvers.h"
#include "cpu/fast/gemm.h"

static int matmul_applicable(const void *problem, const char **why)
{
    const udnn_matmul_problem *p = problem;
    if (p->c.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    return 1;
}

/* op(x) of batch b as a strided matrix: a transpose swaps the strides. */
static udnn_gemm_in operand(const udnn_tensor *x, const void *base, int trans, int64_t b)
{
    udnn_gemm_in in;
    in.p = (const float *)base + b * x->strides[0];
    in.rs = trans ? x->strides[2] : x->strides[1];
    in.cs = trans ? x->strides[1] : x->strides[2];
    return in;
}

static void plan_batch(const udnn_matmul_problem *p, int64_t b, udnn_gemm_plan *plan)
{
    udnn_gemm_args g;
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.alpha = (float)p->alpha;
    g.beta = (float)p->beta;
    g.a = operand(&p->a, p->a_ptr, p->trans_a, b);
    g.b = operand(&p->b, p->b_ptr, p->trans_b, b);
    g.c = (float *)p->c_ptr + b * p->c.strides[0];
    g.c_rs = p->c.strides[1];
    g.c_cs = p->c.strides[2];
    udnn_sgemm_plan(&g, plan);
}

/* Runs [first, last) of the tiles of every batch laid end to end. */
static void run_range(const udnn_matmul_problem *p, int64_t tiles, int64_t first, int64_t last)
{
    for (int64_t b = first / tiles; b < p->batch && b * tiles < last; b++) {
        udnn_gemm_plan plan;
        plan_batch(p, b, &plan);
        const int64_t lo = first > b * tiles ? first - b * tiles : 0;
        const int64_t hi = last < (b + 1) * tiles ? last - b * tiles : tiles;
        udnn_sgemm_run_tiles(&plan, lo, hi);
    }
}

static udnnStatus_t matmul_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx, (void)workspace, (void)workspace_bytes;
    const udnn_matmul_problem *p = problem;
    udnn_gemm_plan plan;
    plan_batch(p, 0, &plan);
    const int64_t tiles = plan.tiles, total = tiles * p->batch;
#ifdef _OPENMP
    const double macs = (double)p->batch * (double)p->m * (double)p->n * (double)p->k;
#pragma omp parallel if (total > 1 && macs >= 1 << 18)
    {
        const int64_t part = omp_get_thread_num(), parts = omp_get_num_threads();
        run_range(p, tiles, total * part / parts, total * (part + 1) / parts);
    }
#else
    run_range(p, tiles, 0, total);
#endif
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_matmul = {
    /* .name = */ "fast_matmul",
    /* .op = */ UDNN_OP_MATMUL,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ matmul_applicable,
    /* .workspace = */ NULL,
    /* .run = */ matmul_run,
};
