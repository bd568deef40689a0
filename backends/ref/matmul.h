/* matmul.h - the reference batched matrix product (cpu/ref/matmul.c, and
 * the GPU backends' reference-bits solvers): c[i] = alpha * op(a[i]) x
 * op(b[i]) + beta * c[i], one dot product per element of c, in double,
 * over k in order.
 *
 * Core hands every tensor over as batch, rows, cols with a broadcast
 * operand's batch stride 0, so one indexing rule serves 2-D, 3-D and
 * broadcast problems alike. */
#ifndef UDNN_REF_MATMUL_H
#define UDNN_REF_MATMUL_H

#include "backends/ref/ref.h"

/* Offset of element (row, col) of op(x) in batch b: a transpose only swaps
 * which stride walks the rows. */
UDNN_REF_FN int64_t ref_matmul_offset(const udnn_tensor *x, int trans, int64_t b, int64_t row,
                                      int64_t col)
{
    const int64_t rs = trans ? x->strides[2] : x->strides[1];
    const int64_t cs = trans ? x->strides[1] : x->strides[2];
    return b * x->strides[0] + row * rs + col * cs;
}

/* Element (b, i, j) of c, i = linear over batch, rows, cols in that order. */
UDNN_REF_FN void ref_matmul_at(const udnn_matmul_problem *p, int64_t linear)
{
    const int64_t j = linear % p->n, i = linear / p->n % p->m, b = linear / p->n / p->m;
    /* op(a)'s row i and op(b)'s column j, k elements each */
    const int64_t a0 = ref_matmul_offset(&p->a, p->trans_a, b, i, 0);
    const int64_t b0 = ref_matmul_offset(&p->b, p->trans_b, b, 0, j);
    const int64_t as = ref_matmul_offset(&p->a, p->trans_a, 0, 0, 1);
    const int64_t bs = ref_matmul_offset(&p->b, p->trans_b, 0, 1, 0);
    const double acc =
        ref_dot(0.0, p->a_ptr, p->a.dtype, a0, as, p->b_ptr, p->b.dtype, b0, bs, p->k);
    ref_blend(p->c_ptr, p->c.dtype, ref_matmul_offset(&p->c, 0, b, i, j), acc, p->alpha, p->beta);
}

#endif /* UDNN_REF_MATMUL_H */
