/* ref_bits.cu - the reference-bits solvers: every output element computed
 * by the arithmetic of backends/ref, the same double operations in the
 * same order as cpu/ref's, one thread an element, so that the GPU's result
 * is the CPU reference's bit for bit. UDNN_DETERMINISTIC=reference enables
 * only these (and cpu/ref's), so that one program computes the same bits
 * on the CPU and on the GPU, at a reference's speed; otherwise they come
 * last in the table and serve only what no tuned kernel takes.
 *
 * Built with --fmad=false (cuda/local.mk): as C11 does on the CPU, every
 * multiply and add rounds on its own; exp, log and the functions built on
 * them are the reference's own (backends/ref/math.h), since math
 * libraries differ in the last bits. */
#include "backends/ref/act.h"
#include "backends/ref/bn.h"
#include "backends/ref/conv.h"
#include "backends/ref/dropout.h"
#include "backends/ref/lrn.h"
#include "backends/ref/matmul.h"
#include "backends/ref/norm.h"
#include "backends/ref/pool.h"
#include "backends/ref/reduce.h"
#include "backends/ref/softmax.h"
#include "backends/ref/tensor.h"
#include "cuda/kernels.h"

/* at(&p, i) for every i < count, p a copy of the problem (device pointers
 * and plain numbers) in the kernel's parameters. */
template <class P, void (*AT)(const P *, int64_t)> __global__ void rb_each(P p, int64_t count)
{
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step)
        AT(&p, i);
}

template <class P, void (*AT)(const P *, int64_t)>
static udnnStatus_t rb_launch(void *ctx, const void *problem, int64_t count)
{
    const udnn_gpu_context *c = (const udnn_gpu_context *)ctx;
    if (count == 0) return UDNN_STATUS_SUCCESS;
    rb_each<P, AT>
        <<<udnn_gpu_grid(c, count), UDNN_GPU_BLOCK, 0, c->stream>>>(*(const P *)problem, count);
    return udnn_gpu_launched();
}

/* ---- convolution ------------------------------------------------------------------- */

static udnnStatus_t rb_conv_fwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    return rb_launch<udnn_conv_problem, ref_conv_fwd_at>(ctx, p, ref_count(&p->y));
}

static udnnStatus_t rb_conv_bwd_data(void *ctx, const void *problem, void *, size_t)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    return rb_launch<udnn_conv_problem, ref_conv_bwd_data_at>(ctx, p, ref_count(&p->x));
}

static udnnStatus_t rb_conv_bwd_filter(void *ctx, const void *problem, void *, size_t)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    return rb_launch<udnn_conv_problem, ref_conv_bwd_filter_at>(ctx, p, ref_count(&p->w));
}

static udnnStatus_t rb_conv_bwd_bias(void *ctx, const void *problem, void *, size_t)
{
    const udnn_conv_bias_problem *p = (const udnn_conv_bias_problem *)problem;
    return rb_launch<udnn_conv_bias_problem, ref_conv_bwd_bias_at>(ctx, p, p->dy.dims[1]);
}

static udnnStatus_t rb_conv_bias_act(void *ctx, const void *problem, void *, size_t)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    return rb_launch<udnn_conv_problem, ref_conv_bias_act_at>(ctx, p, ref_count(&p->y));
}

/* ---- activation -------------------------------------------------------------------- */

static udnnStatus_t rb_act_fwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    return rb_launch<udnn_act_problem, ref_act_fwd_at>(ctx, p, ref_count(&p->x));
}

static udnnStatus_t rb_act_bwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_act_problem *p = (const udnn_act_problem *)problem;
    return rb_launch<udnn_act_problem, ref_act_bwd_at>(ctx, p, ref_count(&p->x));
}

/* ---- matmul ------------------------------------------------------------------------ */

static udnnStatus_t rb_matmul(void *ctx, const void *problem, void *, size_t)
{
    const udnn_matmul_problem *p = (const udnn_matmul_problem *)problem;
    return rb_launch<udnn_matmul_problem, ref_matmul_at>(ctx, p, p->batch * p->m * p->n);
}

/* ---- pooling ----------------------------------------------------------------------- */

static udnnStatus_t rb_pool_fwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_pool_problem *p = (const udnn_pool_problem *)problem;
    return rb_launch<udnn_pool_problem, ref_pool_fwd_at>(ctx, p, ref_count(&p->y));
}

static udnnStatus_t rb_pool_bwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_pool_problem *p = (const udnn_pool_problem *)problem;
    return rb_launch<udnn_pool_problem, ref_pool_bwd_at>(ctx, p, ref_count(&p->dx));
}

/* ---- element-wise tensor ops ------------------------------------------------------- */

/* every element of c through AT, the problem broadcast first */
template <void (*AT)(const udnn_tensor_problem *, int64_t)>
static udnnStatus_t rb_tensor(void *ctx, const void *problem, void *, size_t)
{
    const udnn_tensor_problem q = ref_tensor_broadcast((const udnn_tensor_problem *)problem);
    return rb_launch<udnn_tensor_problem, AT>(ctx, &q, ref_count(&q.c));
}

/* ---- reduction --------------------------------------------------------------------- */

static udnnStatus_t rb_reduce(void *ctx, const void *problem, void *, size_t)
{
    const ref_reduce_plan r = ref_reduce_plan_of((const udnn_reduce_problem *)problem);
    return rb_launch<ref_reduce_plan, ref_reduce_at>(ctx, &r, ref_count(&r.p.c));
}

/* ---- softmax ----------------------------------------------------------------------- */

static udnnStatus_t rb_softmax_fwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_softmax_problem *p = (const udnn_softmax_problem *)problem;
    return rb_launch<udnn_softmax_problem, ref_softmax_fwd_group>(
        ctx, p, ref_softmax_groups(&p->x, p->mode));
}

static udnnStatus_t rb_softmax_bwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_softmax_problem *p = (const udnn_softmax_problem *)problem;
    return rb_launch<udnn_softmax_problem, ref_softmax_bwd_group>(
        ctx, p, ref_softmax_groups(&p->y, p->mode));
}

/* ---- batch normalization, a thread a feature ---------------------------------------- */

template <void (*AT)(const udnn_bn_problem *, int64_t)>
static udnnStatus_t rb_bn(void *ctx, const void *problem, void *, size_t)
{
    const udnn_bn_problem *p = (const udnn_bn_problem *)problem;
    return rb_launch<udnn_bn_problem, AT>(ctx, p, ref_bn_features(p));
}

/* ---- dropout ----------------------------------------------------------------------- */

static udnnStatus_t rb_dropout_fwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_dropout_problem *p = (const udnn_dropout_problem *)problem;
    udnnStatus_t st =
        rb_launch<udnn_dropout_problem, ref_dropout_fwd_at>(ctx, p, ref_count(&p->in));
    /* dropout 0 without states counts nothing */
    if (st != UDNN_STATUS_SUCCESS || p->states == NULL) return st;
    return udnn_gpu_dropout_advance((const udnn_gpu_context *)ctx, p->states);
}

static udnnStatus_t rb_dropout_bwd(void *ctx, const void *problem, void *, size_t)
{
    const udnn_dropout_problem *p = (const udnn_dropout_problem *)problem;
    return rb_launch<udnn_dropout_problem, ref_dropout_apply_at>(ctx, p, ref_count(&p->in));
}

/* ---- LRN, a thread a column ----------------------------------------------------------- */

static udnnStatus_t rb_lrn_fwd(void *ctx, const void *problem, void *, size_t)
{
    const ref_lrn_plan r = ref_lrn_plan_of((const udnn_lrn_problem *)problem);
    return rb_launch<ref_lrn_plan, ref_lrn_fwd_column>(ctx, &r, ref_lrn_columns(&r.p));
}

static udnnStatus_t rb_lrn_bwd(void *ctx, const void *problem, void *, size_t)
{
    const ref_lrn_plan r = ref_lrn_plan_of((const udnn_lrn_problem *)problem);
    return rb_launch<ref_lrn_plan, ref_lrn_bwd_column>(ctx, &r, ref_lrn_columns(&r.p));
}

/* ---- layer, RMS and group norm, a thread a set ----------------------------------------- */

static udnnStatus_t rb_norm_fwd(void *ctx, const void *problem, void *, size_t)
{
    const ref_norm_plan r = ref_norm_plan_of((const udnn_norm_problem *)problem);
    return rb_launch<ref_norm_plan, ref_norm_fwd_set>(ctx, &r, r.g.sets);
}

/* the parameters' gradients first (a thread a parameter), then dx: dx may
 * be dy's or x's buffer */
static udnnStatus_t rb_norm_bwd(void *ctx, const void *problem, void *, size_t)
{
    const ref_norm_plan r = ref_norm_plan_of((const udnn_norm_problem *)problem);
    udnnStatus_t st = rb_launch<ref_norm_plan, ref_norm_param_grad>(ctx, &r, r.g.params);
    if (st != UDNN_STATUS_SUCCESS) return st;
    return rb_launch<ref_norm_plan, ref_norm_bwd_set>(ctx, &r, r.g.sets);
}

/* ---- the table --------------------------------------------------------------------- */

/* name, op, algo (cpu/ref's: one algo's solvers give one algo's bits),
 * run; every one always applies */
#define RB_SOLVERS(X)                                                                              \
    X(ref_bits_conv_fwd, UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, rb_conv_fwd)   \
    X(ref_bits_conv_bwd_data, UDNN_OP_CONV_BWD_DATA, UDNN_CONVOLUTION_BWD_DATA_ALGO_0,             \
      rb_conv_bwd_data)                                                                            \
    X(ref_bits_conv_bwd_filter, UDNN_OP_CONV_BWD_FILTER, UDNN_CONVOLUTION_BWD_FILTER_ALGO_0,       \
      rb_conv_bwd_filter)                                                                          \
    X(ref_bits_conv_bwd_bias, UDNN_OP_CONV_BWD_BIAS, -1, rb_conv_bwd_bias)                         \
    X(ref_bits_conv_bias_act, UDNN_OP_CONV_BIAS_ACT, UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,      \
      rb_conv_bias_act)                                                                            \
    X(ref_bits_act_fwd, UDNN_OP_ACT_FWD, -1, rb_act_fwd)                                           \
    X(ref_bits_act_bwd, UDNN_OP_ACT_BWD, -1, rb_act_bwd)                                           \
    X(ref_bits_matmul, UDNN_OP_MATMUL, -1, rb_matmul)                                              \
    X(ref_bits_pool_fwd, UDNN_OP_POOL_FWD, -1, rb_pool_fwd)                                        \
    X(ref_bits_pool_bwd, UDNN_OP_POOL_BWD, -1, rb_pool_bwd)                                        \
    X(ref_bits_set_tensor, UDNN_OP_SET_TENSOR, -1, rb_tensor<ref_set_at>)                          \
    X(ref_bits_scale_tensor, UDNN_OP_SCALE_TENSOR, -1, rb_tensor<ref_scale_at>)                    \
    X(ref_bits_add_tensor, UDNN_OP_ADD_TENSOR, -1, rb_tensor<ref_add_at>)                          \
    X(ref_bits_transform_tensor, UDNN_OP_TRANSFORM_TENSOR, -1, rb_tensor<ref_add_at>)              \
    X(ref_bits_op_tensor, UDNN_OP_OP_TENSOR, -1, rb_tensor<ref_op_at>)                             \
    X(ref_bits_reduce, UDNN_OP_REDUCE, -1, rb_reduce)                                              \
    X(ref_bits_softmax_fwd, UDNN_OP_SOFTMAX_FWD, -1, rb_softmax_fwd)                               \
    X(ref_bits_softmax_bwd, UDNN_OP_SOFTMAX_BWD, -1, rb_softmax_bwd)                               \
    X(ref_bits_bn_fwd_train, UDNN_OP_BN_FWD_TRAIN, -1, rb_bn<ref_bn_train_feature>)                \
    X(ref_bits_bn_fwd_infer, UDNN_OP_BN_FWD_INFER, -1, rb_bn<ref_bn_infer_feature>)                \
    X(ref_bits_bn_bwd, UDNN_OP_BN_BWD, -1, rb_bn<ref_bn_bwd_feature>)                              \
    X(ref_bits_dropout_fwd, UDNN_OP_DROPOUT_FWD, -1, rb_dropout_fwd)                               \
    X(ref_bits_dropout_bwd, UDNN_OP_DROPOUT_BWD, -1, rb_dropout_bwd)                               \
    X(ref_bits_lrn_fwd, UDNN_OP_LRN_FWD, -1, rb_lrn_fwd)                                           \
    X(ref_bits_lrn_bwd, UDNN_OP_LRN_BWD, -1, rb_lrn_bwd)                                           \
    X(ref_bits_norm_fwd, UDNN_OP_NORM_FWD, -1, rb_norm_fwd)                                        \
    X(ref_bits_norm_bwd, UDNN_OP_NORM_BWD, -1, rb_norm_bwd)                                        \
    X(ref_bits_groupnorm_fwd, UDNN_OP_GROUPNORM_FWD, -1, rb_norm_fwd)                              \
    X(ref_bits_groupnorm_bwd, UDNN_OP_GROUPNORM_BWD, -1, rb_norm_bwd)

#define RB_SOLVER(name, op, algo, run)                                                             \
    static const udnn_solver name = {#name, op, algo, UDNN_SOLVER_REFERENCE_BITS, NULL, NULL, run};
RB_SOLVERS(RB_SOLVER)
#define RB_ENTRY(name, op, algo, run) &name,
UDNN_GPU_SOLVER_TABLE(ref_bits, RB_SOLVERS(RB_ENTRY));
