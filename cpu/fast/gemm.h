/* gemm.h - the fast CPU solvers' single-precision matrix product:
 *
 *     C = alpha * A * B + beta * C      A: m x k, B: k x n, C: m x n
 *
 * Every matrix is given by a pointer and a row and a column stride (in
 * elements, not negative), so a transpose is a swap of strides and no
 * operand ever needs to be contiguous. When beta is 0, C is not read.
 *
 * The work is split into tiles of C. A plan fixes the tiling, and each
 * caller runs any contiguous range of tiles, so that the product can be
 * shared among the threads of a parallel region that the caller already
 * has, or run by one thread. Each element of C is computed by one call
 * in an order fixed by the plan: results do not depend on how the tiles
 * are shared out.
 *
 * The micro-kernel is picked at run time from the CPU: AVX-512, AVX2 with
 * FMA, else the baseline (SSE2 on x86-64). UDNN_CPU_ISA=avx512|avx2|sse2
 * asks for a narrower one than the CPU offers (for tests and comparisons). */
#ifndef UDNN_CPU_FAST_GEMM_H
#define UDNN_CPU_FAST_GEMM_H

#include <stdint.h>

#include "cpu/ref/ref.h"

/* A strided matrix: element (i, j) is at p[i * rs + j * cs]. */
typedef struct {
    const float *p;
    int64_t rs, cs;
} udnn_gemm_in;

typedef struct {
    int64_t m, n, k;
    float alpha, beta;
    udnn_gemm_in a, b;
    float *c;
    int64_t c_rs, c_cs;
} udnn_gemm_args;

/* A product ready to run: the args, possibly transposed (C' = B' A'),
 * the micro-kernel, and the number of tiles. */
typedef struct {
    udnn_gemm_args g;
    const void *kernel; /* the micro-kernel's description (gemm.c) */
    int64_t m_panels, n_panels, mc_panels, tiles;
    int in_double; /* a few outputs: dot products in double (gemm.c) */
} udnn_gemm_plan;

/* Plans g for the micro-kernel this CPU (and UDNN_CPU_ISA) allows. */
UDNN_CPU_INTERNAL void udnn_sgemm_plan(const udnn_gemm_args *g, udnn_gemm_plan *plan);

/* Runs tiles [first, last) of a plan. */
UDNN_CPU_INTERNAL void udnn_sgemm_run_tiles(const udnn_gemm_plan *plan, int64_t first,
                                            int64_t last);

/* Runs share `part` of `parts` equal shares of the plan's tiles. */
UDNN_CPU_INTERNAL void udnn_sgemm_run_part(const udnn_gemm_plan *plan, int part, int parts);

#endif /* UDNN_CPU_FAST_GEMM_H */
