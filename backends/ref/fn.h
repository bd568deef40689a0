/* fn.h - how the reference's arithmetic (backends/ref) is declared: plain
 * C for cpu/ref, and host-and-device functions for a GPU backend's
 * reference-bits solvers, which compile these same headers so that an
 * output element is computed by the same double operations in the same
 * order on every backend. That holds only where no compiler contracts a
 * multiply and an add into one rounding: C11 (-std=c11) does not, nvcc
 * must be told (--fmad=false, cuda/local.mk), hipcc too
 * (-ffp-contract=off). */
#ifndef UDNN_REF_FN_H
#define UDNN_REF_FN_H

#if defined(__CUDACC__) || defined(__HIPCC__)
#define UDNN_REF_FN static inline __host__ __device__
#else
#define UDNN_REF_FN static inline
#endif

#endif /* UDNN_REF_FN_H */
