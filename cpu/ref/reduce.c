/* reduce.c - reference ReduceTensor: every op, over any set of dims, with
 * the flattened indices of MIN, MAX and AMAX.
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
#include <math.h>

#include "cpu/cpu_solvers.h"

/* The two views of a that split its offset: `outer` walks c's elements
 * (c's dims, a's strides), `inner` walks one group (a's dims where c has 1
 * and a does not, else 1; a's strides). */
static void split_views(const udnn_reduce_problem *p, udnn_tensor *outer, udnn_tensor *inner)
{
    *outer = p->a;
    *inner = p->a;
    for (int i = 0; i < p->a.rank; i++) {
        const int reduced = p->c.dims[i] == 1 && p->a.dims[i] != 1;
        outer->dims[i] = p->c.dims[i];
        inner->dims[i] = reduced ? p->a.dims[i] : 1;
    }
}

static int is_selection(udnnReduceTensorOp_t op)
{
    return op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
           op == UDNN_REDUCE_TENSOR_AMAX;
}

/* MIN, MAX, AMAX over one group: the value and the index that gave it. */
static double select_group(const udnn_reduce_problem *p, const udnn_tensor *inner, int64_t base,
                           int64_t size, int64_t *index)
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
static double fold_group(const udnn_reduce_problem *p, const udnn_tensor *inner, int64_t base,
                         int64_t size)
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

static void store_index(void *indices, udnnIndicesType_t type, int64_t at, int64_t index)
{
    switch (type) {
    case UDNN_8BIT_INDICES: ((uint8_t *)indices)[at] = (uint8_t)index; break;
    case UDNN_16BIT_INDICES: ((uint16_t *)indices)[at] = (uint16_t)index; break;
    case UDNN_32BIT_INDICES: ((uint32_t *)indices)[at] = (uint32_t)index; break;
    case UDNN_64BIT_INDICES: ((uint64_t *)indices)[at] = (uint64_t)index; break;
    }
}

static udnnStatus_t reduce_run(void *ctx, const void *problem, void *workspace,
                               size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_reduce_problem *p = problem;
    udnn_tensor outer, inner;
    split_views(p, &outer, &inner);
    const int64_t groups = ref_count(&p->c), size = ref_count(&inner);
    const int selection = is_selection(p->op);
    for (int64_t g = 0; g < groups; g++) {
        const int64_t base = ref_offset(&outer, g);
        double r;
        if (selection) {
            int64_t index;
            r = select_group(p, &inner, base, size, &index);
            /* indices are packed in c's row-major order, whatever c's strides */
            if (p->indices_ptr != NULL) store_index(p->indices_ptr, p->indices_type, g, index);
        } else {
            r = fold_group(p, &inner, base, size);
        }
        ref_blend(p->c_ptr, p->c.dtype, ref_offset(&p->c, g), r, p->alpha, p->beta);
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_reduce = {
    /* .name = */ "ref_reduce",
    /* .op = */ UDNN_OP_REDUCE,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ reduce_run,
};
