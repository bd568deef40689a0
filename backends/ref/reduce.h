/* reduce.h - the reference ReduceTensor (cpu/ref/reduce.c and the GPU
 * backends' reference-bits solvers): every op, over any set of dims, with
 * the flattened indices of MIN, MAX and AMAX; an element of c at a time.
 *
 * Each element of c owns a group: the elements of a that share its index in
 * the dims c keeps. A group is walked in row-major order over the reduced
 * dims, so "the first element that gave the result" is the lowest such
 * row-major index, which is also what the indices hold.
 *
 * NaN: MIN, MAX and AMAX follow nan_opt (PROPAGATE_NAN: the first NaN wins;
 * NOT_PROPAGATE_NAN: NaNs are skipped, an all-NaN group gives NaN at index
 * 0). The other ops are plain arithmetic, through which NaN flows anyway.
 *
 * A group is read whole before its element of c is written, and only that
 * element, so c may be a's buffer when nothing is reduced (core checks). */
#ifndef UDNN_REF_REDUCE_H
#define UDNN_REF_REDUCE_H

#include <math.h>

#include "backends/ref/ref.h"

/* The two views of a that split its offset: `outer` walks c's elements
 * (c's dims, a's strides), `inner` walks one group (a's dims where c has 1
 * and a does not, else 1; a's strides). */
UDNN_REF_FN void ref_reduce_split(const udnn_reduce_problem *p, udnn_tensor *outer,
                                  udnn_tensor *inner)
{
    *outer = p->a;
    *inner = p->a;
    for (int i = 0; i < p->a.rank; i++) {
        const int reduced = p->c.dims[i] == 1 && p->a.dims[i] != 1;
        outer->dims[i] = p->c.dims[i];
        inner->dims[i] = reduced ? p->a.dims[i] : 1;
    }
}

UDNN_REF_FN int ref_reduce_is_selection(udnnReduceTensorOp_t op)
{
    return op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
           op == UDNN_REDUCE_TENSOR_AMAX;
}

/* MIN, MAX, AMAX over one group: the value and the index that gave it. */
UDNN_REF_FN double ref_reduce_select(const udnn_reduce_problem *p, const udnn_tensor *inner,
                                     int64_t base, int64_t size, int64_t *index)
{
    double best = NAN;
    int found = 0;
    *index = 0;
    for (int64_t j = 0; j < size; j++) {
        double v = ref_load(p->a_ptr, p->a.dtype, base + ref_offset(inner, j));
        if (p->op == UDNN_REDUCE_TENSOR_AMAX) v = fabs(v);
        if (isnan(v)) {
            if (p->nan_opt == UDNN_PROPAGATE_NAN) {
                *index = j;
                return NAN;
            }
            continue;
        }
        /* strict comparisons keep the first of equal values */
        const int better = p->op == UDNN_REDUCE_TENSOR_MIN ? v < best : v > best;
        if (!found || better) {
            best = v;
            *index = j;
            found = 1;
        }
    }
    return best;
}

/* The arithmetic ops over one group, accumulated in double. */
UDNN_REF_FN double ref_reduce_fold(const udnn_reduce_problem *p, const udnn_tensor *inner,
                                   int64_t base, int64_t size)
{
    const int product = p->op == UDNN_REDUCE_TENSOR_MUL || p->op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    double acc = product ? 1.0 : 0.0;
    for (int64_t j = 0; j < size; j++) {
        const double v = ref_load(p->a_ptr, p->a.dtype, base + ref_offset(inner, j));
        switch (p->op) {
        case UDNN_REDUCE_TENSOR_ADD:
        case UDNN_REDUCE_TENSOR_AVG: acc += v; break;
        case UDNN_REDUCE_TENSOR_MUL: acc *= v; break;
        case UDNN_REDUCE_TENSOR_MUL_NO_ZEROS:
            if (v != 0.0) acc *= v;
            break;
        case UDNN_REDUCE_TENSOR_NORM1: acc += fabs(v); break;
        case UDNN_REDUCE_TENSOR_NORM2: acc += v * v; break;
        default: break;
        }
    }
    if (p->op == UDNN_REDUCE_TENSOR_AVG) acc /= (double)size;
    if (p->op == UDNN_REDUCE_TENSOR_NORM2) acc = sqrt(acc);
    return acc;
}

UDNN_REF_FN void ref_reduce_store_index(void *indices, udnnIndicesType_t type, int64_t at,
                                        int64_t index)
{
    switch (type) {
    case UDNN_8BIT_INDICES: ((uint8_t *)indices)[at] = (uint8_t)index; break;
    case UDNN_16BIT_INDICES: ((uint16_t *)indices)[at] = (uint16_t)index; break;
    case UDNN_32BIT_INDICES: ((uint32_t *)indices)[at] = (uint32_t)index; break;
    case UDNN_64BIT_INDICES: ((uint64_t *)indices)[at] = (uint64_t)index; break;
    }
}

/* A problem with its two views of a, as ref_reduce_at reads it. */
typedef struct {
    udnn_reduce_problem p;
    udnn_tensor outer, inner;
} ref_reduce_plan;

UDNN_REF_FN ref_reduce_plan ref_reduce_plan_of(const udnn_reduce_problem *p)
{
    ref_reduce_plan r;
    r.p = *p;
    ref_reduce_split(p, &r.outer, &r.inner);
    return r;
}

/* Element g (c's logical order) of c = alpha * reduce(group g) + beta * c,
 * and its index where asked. */
UDNN_REF_FN void ref_reduce_at(const ref_reduce_plan *r, int64_t g)
{
    const udnn_reduce_problem *p = &r->p;
    const int64_t base = ref_offset(&r->outer, g), size = ref_count(&r->inner);
    double v;
    if (ref_reduce_is_selection(p->op)) {
        int64_t index;
        v = ref_reduce_select(p, &r->inner, base, size, &index);
        /* indices are packed in c's row-major order, whatever c's strides */
        if (p->indices_ptr != NULL)
            ref_reduce_store_index(p->indices_ptr, p->indices_type, g, index);
    } else {
        v = ref_reduce_fold(p, &r->inner, base, size);
    }
    ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, g), v, p->alpha, p->beta);
}

#endif /* UDNN_REF_REDUCE_H */
