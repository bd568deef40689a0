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

#endif /* UDNN_CPU_FAST_H */
