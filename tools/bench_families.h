/*
 * bench_families.h - the op families of udnn-bench, one X-macro list that
 * makes their declarations and the lookup table, and the activation mode
 * names the act and cba families share.
 */
#ifndef UDNN_BENCH_FAMILIES_H
#define UDNN_BENCH_FAMILIES_H

#include "tools/bench.h"

#define BENCH_FAMILIES(X)                                                                   \
    X(conv) X(cba) X(act) X(pool) X(softmax) X(bn) X(norm) X(groupnorm) X(lrn) X(dropout)    \
    X(reduce) X(optensor) X(addtensor) X(transform) X(matmul) X(set) X(scale) X(copy)

#define BENCH_DECLARE_FAMILY_(name) extern const bench_family bench_family_##name;
BENCH_FAMILIES(BENCH_DECLARE_FAMILY_)
#undef BENCH_DECLARE_FAMILY_

/* Activation modes by udnn-bench's names, in the order of the public
 * values 0..6, then udnn's own 100..105. */
#define BENCH_ACT_MODE_NAMES                                                              \
    {"sigmoid", "relu", "tanh", "clipped-relu", "elu", "identity", "swish", "leaky-relu", \
     "gelu", "gelu-tanh", "softplus", "mish", "hardswish"}
#define BENCH_ACT_MODE_COUNT 13
/* The mode of the name at index i of BENCH_ACT_MODE_NAMES. */
udnnActivationMode_t bench_act_mode(int i);
/* The coef udnn-bench uses when --coef is not given: one that exercises
 * the mode (a clip of 1, an ELU alpha of 1, a leak of 0.1). */
double bench_act_default_coef(int i);

#endif /* UDNN_BENCH_FAMILIES_H */
