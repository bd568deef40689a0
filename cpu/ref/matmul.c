/* matmul.c - reference batched matrix product: c[i] = alpha * op(a[i]) x
 * op(b[i]) + beta * c[i], one dot product per element of c, in double.
 *
 * Core hands every tensor over as batch, rows, cols with a broadcast
 * operand's batch stride 0, so one indexing rule serves 2-D, 3-D and
 * broadcast problems alike. */
#include "cpu/cpu_solvers.h"

/* Offset of element (row, col) of op(x) in batch b: a transpose only swaps
 * which stride walks the rows. */
static int64_t op_offset(const udnn_tensor *x, int trans, int64_t b, int64_t row, int64_t col)
{
    const int64_t rs = trans ? x->strides[2] : x->strides[1];
    const int64_t cs = trans ? x->strides[1] : x->strides[2];
    return b * x->strides[0] + row * rs + col * cs;
}

static udnnStatus_t matmul_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_matmul_problem *p = problem;
#pragma omp parallel for collapse(2) if (p->batch * p->m * p->n * p->k >= REF_PAR_MIN) \
    schedule(static)
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t i = 0; i < p->m; i++)
            for (int64_t j = 0; j < p->n; j++) {
                double acc = 0.0;
                for (int64_t q = 0; q < p->k; q++)
                    acc += ref_load(p->a_ptr, p->a.dtype, op_offset(&p->a, p->trans_a, b, i, q)) *
                           ref_load(p->b_ptr, p->b.dtype, op_offset(&p->b, p->trans_b, b, q, j));
                ref_blend(p->c_ptr, p->c.dtype, op_offset(&p->c, 0, b, i, j), acc, p->alpha,
                          p->beta);
            }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_matmul = {
    /* .name = */ "ref_matmul",
    /* .op = */ UDNN_OP_MATMUL,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ matmul_run,
};
