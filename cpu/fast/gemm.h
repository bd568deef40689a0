/* gemm.h - placeholder. */
