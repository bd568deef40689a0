/* cpu_solvers.h - the CPU backend's solver records, one file per family. */
#ifndef UDNN_CPU_SOLVERS_H
#define UDNN_CPU_SOLVERS_H

#include "cpu/ref/ref.h"

/* cpu/fast/: OpenMP kernels for packed FLOAT data, ahead of the reference */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_act_fwd; /* activation.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_act_bwd; /* activation.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_bn_fwd_train; /* batchnorm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_bn_fwd_infer; /* batchnorm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_bn_bwd; /* batchnorm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_conv_fwd; /* conv_gemm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_conv_bwd_data; /* conv_gemm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_conv_bwd_filter; /* conv_gemm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_conv_bias_act; /* conv_gemm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_matmul; /* matmul.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_pool_fwd; /* pooling.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_pool_bwd; /* pooling.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_softmax_fwd; /* softmax.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_softmax_bwd; /* softmax.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_set_tensor; /* tensor_ops.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_scale_tensor; /* tensor_ops.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_add_tensor; /* tensor_ops.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_op_tensor; /* tensor_ops.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_fast_conv_bwd_bias; /* tensor_ops.c */

/* cpu/ref/conv.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_conv_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_conv_bwd_data;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_conv_bwd_filter;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_conv_bwd_bias;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_conv_bias_act;
/* cpu/ref/activation.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_act_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_act_bwd;
/* cpu/ref/pooling.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_pool_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_pool_bwd;
/* cpu/ref/softmax.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_softmax_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_softmax_bwd;
/* cpu/ref/tensor_ops.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_set_tensor;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_scale_tensor;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_add_tensor;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_transform_tensor;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_op_tensor;

/* cpu/ref/batchnorm.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_bn_fwd_train;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_bn_fwd_infer;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_bn_bwd;
/* cpu/ref/norm.c: layer, RMS and group norm */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_norm_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_norm_bwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_groupnorm_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_groupnorm_bwd;
/* cpu/ref/lrn.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_lrn_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_lrn_bwd;
/* cpu/ref/dropout.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_dropout_fwd;
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_dropout_bwd;
/* cpu/ref/reduce.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_reduce;
/* cpu/ref/matmul.c */
UDNN_CPU_INTERNAL extern const udnn_solver udnn_cpu_ref_matmul;

#endif /* UDNN_CPU_SOLVERS_H */
