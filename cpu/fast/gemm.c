/* gemm.c - placeholder. */
typedef int udnn_gemm_placeholder;
