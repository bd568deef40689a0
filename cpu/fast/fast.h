/* fast.h - what the fast CPU solvers (cpu/fast) share. */
#ifndef UDNN_CPU_FAST_H
#define UDNN_CPU_FAST_H

#include "cpu/cpu_solvers.h"

/* An OpenMP pragma that vanishes in a build without OpenMP, where
 * `#pragma omp simd` would otherwise warn. */
#ifdef _OPENMP
#define FAST_PRAGMA(...) _Pragma(#__VA_ARGS__)
#else
#define FAST_PRAGMA(...)
#endif

/* 1 when dims first.. of t fill a gapless block of its buffer: those dims,
 * in some order, have the packed strides (size-1 dims any stride). */
static inline int fast_packed_from(const udnn_tensor *t, int first)
{
    int taken[UDNN_DIM_MAX] = {0}, need = 0, got = 0;
    for (int i = first; i < t->rank; i++) need += t->dims[i] > 1;
    for (int64_t expect = 1; got < need;) {
        int found = -1;
        for (int i = first; i < t->rank && found < 0; i++)
            if (!taken[i] && t->dims[i] > 1 && t->strides[i] == expect) found = i;
        if (found < 0) return 0;
        taken[found] = 1;
        expect *= t->dims[found];
        got++;
    }
    return 1;
}

/* 1 when b's elements of dims first.. sit where a's of the same index do
 * (dims agree). */
static inline int fast_same_layout_from(const udnn_tensor *a, const udnn_tensor *b, int first)
{
    for (int i = first; i < a->rank; i++)
        if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

#endif /* UDNN_CPU_FAST_H */
