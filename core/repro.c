/* repro.c - the udnn-bench command line that reproduces a dispatched op,
 * written from its normalized problem struct, so that one hook in
 * udnn_dispatch serves every op. The flags are those tools/udnn-bench.md
 * documents; tests/bench-repro.sh feeds logged lines back to udnn-bench.
 *
 * What a line carries: the family and direction, the shape (n, c, (d,) h, w
 * for rank 4 and 5, else --dims), the data type, the layout (--layout when
 * every tensor is packed alike, else per-tensor --ROLE-layout or
 * --ROLE-strides), the op's parameters, alpha/beta when not 1/0 and the
 * algo. Tensor data is not part of a line: udnn-bench draws its own. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* ---- a bounded line builder ----------------------------------------------------- */

typedef struct {
    char *buf;
    size_t size, len;
} line;

static void put(line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(line *l, const char *fmt, ...)
{
    if (l->len + 1 >= l->size) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
    va_end(ap);
    if (w < 0) return;
    l->len += (size_t)w;
    if (l->len >= l->size) l->len = l->size - 1;
}

/* The shortest decimal that reads back as v in the precision the op reads
 * it: float for every type but DOUBLE. */
static void put_real(line *l, const char *flag, double v, udnnDataType_t t)
{
    char s[40];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(s, sizeof s, "%.*g", digits, v);
        double back = strtod(s, NULL);
        if (t == UDNN_DATA_DOUBLE ? back == v : (float)back == (float)v) break;
    }
    put(l, " --%s %s", flag, s);
}

static void put_ints(line *l, const char *flag, const int64_t *v, int n)
{
    put(l, " --%s ", flag);
    for (int i = 0; i < n; i++) put(l, "%s%lld", i ? "," : "", (long long)v[i]);
}

/* A per-spatial-dim geometry list: one value when all agree. */
static void put_geometry(line *l, const char *flag, const int *v, int n, int dflt)
{
    int same = 1;
    for (int i = 1; i < n; i++) same &= v[i] == v[0];
    if (same && v[0] == dflt) return;
    put(l, " --%s ", flag);
    for (int i = 0; i < (same ? 1 : n); i++) put(l, "%s%d", i ? "," : "", v[i]);
}

/* ---- names, as udnn-bench spells them ----------------------------------------- */

static const char *dtype_flag(udnnDataType_t t)
{
    return udnn_dtype_name(t); /* f32, f64, f16, bf16, s8, s32, s64 */
}

static const char *act_mode_name(udnnActivationMode_t m)
{
    switch (m) {
    case UDNN_ACTIVATION_SIGMOID: return "sigmoid";
    case UDNN_ACTIVATION_RELU: return "relu";
    case UDNN_ACTIVATION_TANH: return "tanh";
    case UDNN_ACTIVATION_CLIPPED_RELU: return "clipped-relu";
    case UDNN_ACTIVATION_ELU: return "elu";
    case UDNN_ACTIVATION_IDENTITY: return "identity";
    case UDNN_ACTIVATION_SWISH: return "swish";
    case UDNN_ACTIVATION_LEAKY_RELU: return "leaky-relu";
    case UDNN_ACTIVATION_GELU: return "gelu";
    case UDNN_ACTIVATION_GELU_TANH: return "gelu-tanh";
    case UDNN_ACTIVATION_SOFTPLUS: return "softplus";
    case UDNN_ACTIVATION_MISH: return "mish";
    case UDNN_ACTIVATION_HARDSWISH: return "hardswish";
    }
    return "?";
}

static const char *pool_mode_name(udnnPoolingMode_t m)
{
    static const char *const names[] = {"max", "avg-include", "avg-exclude",
                                        "max-deterministic"};
    return (unsigned)m < 4 ? names[m] : "?";
}

static const char *math_name(udnnMathType_t m)
{
    static const char *const names[] = {"default", "tensor-op", "allow-conversion", "fma"};
    return (unsigned)m < 4 ? names[m] : "?";
}

static const char *optensor_name(udnnOpTensorOp_t op)
{
    static const char *const names[] = {"add", "mul", "min", "max", "sqrt", "not"};
    return (unsigned)op < 6 ? names[op] : "?";
}

static const char *reduce_name(udnnReduceTensorOp_t op)
{
    static const char *const names[] = {"add", "mul",   "min",   "max",         "amax",
                                        "avg", "norm1", "norm2", "mul-no-zeros"};
    return (unsigned)op < 9 ? names[op] : "?";
}

static const char *bn_mode_name(udnnBatchNormMode_t m)
{
    static const char *const names[] = {"per-activation", "spatial", "spatial-persistent"};
    return (unsigned)m < 3 ? names[m] : "?";
}

static int index_bits(udnnIndicesType_t t)
{
    switch (t) {
    case UDNN_32BIT_INDICES: return 32;
    case UDNN_64BIT_INDICES: return 64;
    case UDNN_16BIT_INDICES: return 16;
    case UDNN_8BIT_INDICES: return 8;
    }
    return 0;
}

/* The compute type udnn-bench uses when --compute is not given. */
static udnnDataType_t default_compute(udnnDataType_t data)
{
    return data == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
}

/* ---- shapes and layouts --------------------------------------------------------- */

/* t without dimension i (the d of a 2-D conv or pool, the batch of a 2-D
 * matmul). */
static udnn_tensor drop_dim(const udnn_tensor *t, int i)
{
    udnn_tensor out = *t;
    for (int j = i; j + 1 < t->rank; j++) {
        out.dims[j] = t->dims[j + 1];
        out.strides[j] = t->strides[j + 1];
    }
    out.rank = t->rank - 1;
    return out;
}

/* 1 when t is packed in fmt; strides of dims of size 1 never matter. */
static int packed_as(const udnn_tensor *t, udnnTensorFormat_t fmt)
{
    int dims[UDNN_DIM_MAX];
    int64_t want[UDNN_DIM_MAX];
    for (int i = 0; i < t->rank; i++) dims[i] = (int)t->dims[i];
    udnn_packed_strides(fmt, t->rank, dims, want);
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] > 1 && t->strides[i] != want[i]) return 0;
    return 1;
}

/* The shape flags of udnn-bench's main tensor. */
static void put_shape(line *l, const udnn_tensor *t)
{
    if (t->rank == 4 || t->rank == 5) {
        put(l, " --n %lld --c %lld", (long long)t->dims[0], (long long)t->dims[1]);
        if (t->rank == 5) put(l, " --d %lld", (long long)t->dims[2]);
        put(l, " --h %lld --w %lld", (long long)t->dims[t->rank - 2],
            (long long)t->dims[t->rank - 1]);
    } else {
        put_ints(l, "dims", t->dims, t->rank);
    }
}

/* A tensor of the line and the name udnn-bench gives it. */
typedef struct {
    const char *role;
    udnn_tensor t;
    int is_filter; /* packed by format; no strides flag exists */
} role_tensor;

/* --layout from the first tensor, then what each tensor needs beyond it. */
static void put_layouts(line *l, const role_tensor *rt, int n)
{
    const udnnTensorFormat_t main_fmt =
        !packed_as(&rt[0].t, UDNN_TENSOR_NCHW) && packed_as(&rt[0].t, UDNN_TENSOR_NHWC)
            ? UDNN_TENSOR_NHWC
            : UDNN_TENSOR_NCHW;
    if (main_fmt == UDNN_TENSOR_NHWC) put(l, " --layout nhwc");
    const udnnTensorFormat_t other =
        main_fmt == UDNN_TENSOR_NHWC ? UDNN_TENSOR_NCHW : UDNN_TENSOR_NHWC;
    for (int i = 0; i < n; i++) {
        const udnn_tensor *t = &rt[i].t;
        if (packed_as(t, main_fmt)) continue;
        if (packed_as(t, other)) {
            put(l, " --%s-layout %s", rt[i].role, other == UDNN_TENSOR_NHWC ? "nhwc" : "nchw");
            continue;
        }
        if (rt[i].is_filter) continue; /* filters are always packed */
        int64_t s[UDNN_DIM_MAX];
        for (int j = 0; j < t->rank; j++) s[j] = t->strides[j] > 0 ? t->strides[j] : 1;
        char flag[32];
        snprintf(flag, sizeof flag, "%s-strides", rt[i].role);
        put_ints(l, flag, s, t->rank);
    }
}

static void put_blend(line *l, double alpha, double beta, udnnDataType_t t)
{
    if (alpha != 1.0) put_real(l, "alpha", alpha, t);
    if (beta != 0.0) put_real(l, "beta", beta, t);
}

static void put_act(line *l, const char *mode_flag, const udnn_act_params *a)
{
    put(l, " --%s %s", mode_flag, act_mode_name(a->mode));
    /* udnn-bench's default coef differs by mode; modes that read it get it */
    if (a->mode == UDNN_ACTIVATION_CLIPPED_RELU || a->mode == UDNN_ACTIVATION_ELU ||
        a->mode == UDNN_ACTIVATION_LEAKY_RELU)
        put_real(l, "coef", a->coef, UDNN_DATA_DOUBLE);
    if (a->swish_beta != 1.0) put_real(l, "swish-beta", a->swish_beta, UDNN_DATA_DOUBLE);
    if (a->nan_opt == UDNN_PROPAGATE_NAN) put(l, " --nan-prop");
}

/* ---- the families --------------------------------------------------------------- */

static void repro_conv(line *l, udnn_op op, int algo, const udnn_conv_problem *p)
{
    static const char *const dirs[] = {"fwd", "bwd-data", "bwd-filter"};
    const int is_cba = op == UDNN_OP_CONV_BIAS_ACT;
    const udnnDataType_t t = p->x.dtype;
    /* d of 1 with no geometry in it is how a 2-D problem arrives */
    const int nd = p->x.dims[2] != 1 || p->w.dims[2] != 1 || p->y.dims[2] != 1 ||
                           p->pad[0] != 0 || p->stride[0] != 1 || p->dilation[0] != 1
                       ? 3
                       : 2;
    const int first = 3 - nd;
    put(l, " %s", is_cba ? "cba" : "conv");
    if (!is_cba) put(l, " --dir %s", dirs[op - UDNN_OP_CONV_FWD]);
    put(l, " --dtype %s", dtype_flag(t));
    put(l, " --n %lld --c %lld", (long long)p->x.dims[0], (long long)p->x.dims[1]);
    if (nd == 3) put(l, " --d %lld", (long long)p->x.dims[2]);
    put(l, " --h %lld --w %lld --k %lld", (long long)p->x.dims[3], (long long)p->x.dims[4],
        (long long)p->w.dims[0]);
    if (nd == 3) put(l, " --t %lld", (long long)p->w.dims[2]);
    put(l, " --r %lld --s %lld", (long long)p->w.dims[3], (long long)p->w.dims[4]);
    put_geometry(l, "pad", p->pad + first, nd, 0);
    put_geometry(l, "stride", p->stride + first, nd, 1);
    put_geometry(l, "dilation", p->dilation + first, nd, 1);
    if (p->groups != 1) put(l, " --groups %d", p->groups);
    if (p->mode == UDNN_CONVOLUTION) put(l, " --mode conv");
    if (p->compute_type != default_compute(t)) put(l, " --compute %s", dtype_flag(p->compute_type));
    if (p->math_type != UDNN_DEFAULT_MATH) put(l, " --math %s", math_name(p->math_type));
    if (algo >= 0) put(l, " --algo %d", algo);

    const char *xr = op == UDNN_OP_CONV_BWD_DATA ? "dx" : "x";
    const char *wr = op == UDNN_OP_CONV_BWD_FILTER ? "dw" : "w";
    const char *yr = op == UDNN_OP_CONV_FWD || is_cba ? "y" : "dy";
    role_tensor rt[5] = {{xr, p->x, 0}, {wr, p->w, 1}, {yr, p->y, 0}};
    int n = 3;
    if (is_cba) {
        rt[n++] = (role_tensor){"z", p->z, 0};
        rt[n++] = (role_tensor){"bias", p->bias, 0};
    }
    if (nd == 2)
        for (int i = 0; i < n; i++) rt[i].t = drop_dim(&rt[i].t, 2);
    put_layouts(l, rt, n);

    if (is_cba) {
        if (p->alpha != 1.0) put_real(l, "alpha", p->alpha, t);
        if (p->alpha2 != 0.0) put_real(l, "alpha2", p->alpha2, t);
        put_act(l, "act", &p->act);
        if (p->z_ptr == p->out_ptr) put(l, " --z-is-y");
    } else {
        put_blend(l, p->alpha, p->beta, t);
    }
}

static void repro_conv_bias(line *l, const udnn_conv_bias_problem *p)
{
    const int nd = p->dy.dims[2] != 1 ? 3 : 2;
    put(l, " conv --dir bwd-bias --dtype %s --n %lld --c %lld", dtype_flag(p->dy.dtype),
        (long long)p->dy.dims[0], (long long)p->dy.dims[1]);
    if (nd == 3) put(l, " --d %lld", (long long)p->dy.dims[2]);
    put(l, " --h %lld --w %lld --k %lld", (long long)p->dy.dims[3], (long long)p->dy.dims[4],
        (long long)p->dy.dims[1]);
    role_tensor rt[2] = {{"dy", p->dy, 0}, {"db", p->db, 0}};
    if (nd == 2)
        for (int i = 0; i < 2; i++) rt[i].t = drop_dim(&rt[i].t, 2);
    put_layouts(l, rt, 2);
    put_blend(l, p->alpha, p->beta, p->dy.dtype);
}

static void repro_act(line *l, udnn_op op, const udnn_act_problem *p)
{
    const int fwd = op == UDNN_OP_ACT_FWD;
    put(l, " act --dir %s --dtype %s", fwd ? "fwd" : "bwd", dtype_flag(p->x.dtype));
    put_shape(l, &p->x);
    put_act(l, "mode", &p->act);
    if (fwd) {
        role_tensor rt[2] = {{"x", p->x, 0}, {"y", p->y, 0}};
        put_layouts(l, rt, 2);
    } else {
        role_tensor rt[4] = {{"x", p->x, 0}, {"y", p->y, 0}, {"dy", p->dy, 0}, {"dx", p->dx, 0}};
        put_layouts(l, rt, 4);
    }
    put_blend(l, p->alpha, p->beta, p->x.dtype);
}

static void repro_pool(line *l, udnn_op op, const udnn_pool_problem *p)
{
    const int fwd = op == UDNN_OP_POOL_FWD;
    const int nd = p->x.dims[2] != 1 || p->window[0] != 1 || p->pad[0] != 0 ||
                           p->stride[0] != 1
                       ? 3
                       : 2;
    const int first = 3 - nd;
    put(l, " pool --dir %s --dtype %s --mode %s", fwd ? "fwd" : "bwd", dtype_flag(p->x.dtype),
        pool_mode_name(p->mode));
    udnn_tensor x = nd == 2 ? drop_dim(&p->x, 2) : p->x;
    put_shape(l, &x);
    put_geometry(l, "window", p->window + first, nd, -1);
    put_geometry(l, "pad", p->pad + first, nd, 0);
    put_geometry(l, "stride", p->stride + first, nd, 1);
    if (p->nan_opt == UDNN_PROPAGATE_NAN) put(l, " --nan-prop");
    role_tensor rt[4] = {{"x", p->x, 0}, {"y", p->y, 0}, {"dy", p->dy, 0}, {"dx", p->dx, 0}};
    const int n = fwd ? 2 : 4;
    if (nd == 2)
        for (int i = 0; i < n; i++) rt[i].t = drop_dim(&rt[i].t, 2);
    put_layouts(l, rt, n);
    put_blend(l, p->alpha, p->beta, p->x.dtype);
}

static void repro_softmax(line *l, udnn_op op, const udnn_softmax_problem *p)
{
    static const char *const algs[] = {"fast", "accurate", "log"};
    const int fwd = op == UDNN_OP_SOFTMAX_FWD;
    const udnn_tensor *main = fwd ? &p->x : &p->y;
    put(l, " softmax --dir %s --dtype %s --alg %s --mode %s", fwd ? "fwd" : "bwd",
        dtype_flag(main->dtype), (unsigned)p->algo < 3 ? algs[p->algo] : "?",
        p->mode == UDNN_SOFTMAX_MODE_CHANNEL ? "channel" : "instance");
    put_shape(l, main);
    if (fwd) {
        role_tensor rt[2] = {{"x", p->x, 0}, {"y", p->y, 0}};
        put_layouts(l, rt, 2);
    } else {
        role_tensor rt[3] = {{"y", p->y, 0}, {"dy", p->dy, 0}, {"dx", p->dx, 0}};
        put_layouts(l, rt, 3);
    }
    put_blend(l, p->alpha, p->beta, main->dtype);
}

/* A broadcast operand's dims, when they differ from the output's. */
static void put_dims_if_differ(line *l, const char *role, const udnn_tensor *t,
                               const udnn_tensor *of)
{
    int differ = t->rank != of->rank;
    for (int i = 0; !differ && i < t->rank; i++) differ = t->dims[i] != of->dims[i];
    if (!differ) return;
    char flag[32];
    snprintf(flag, sizeof flag, "%s-dims", role);
    put_ints(l, flag, t->dims, t->rank);
}

static void repro_tensor_op(line *l, const udnn_tensor_problem *p)
{
    const udnnDataType_t t = p->c.dtype;
    switch (p->op) {
    case UDNN_OP_SET_TENSOR: {
        put(l, " set --dtype %s", dtype_flag(t));
        put_shape(l, &p->c);
        put_real(l, "value", p->value, t == UDNN_DATA_FLOAT || t == UDNN_DATA_HALF ||
                                               t == UDNN_DATA_BFLOAT16
                                           ? UDNN_DATA_FLOAT
                                           : UDNN_DATA_DOUBLE);
        role_tensor rt[1] = {{"y", p->c, 0}};
        put_layouts(l, rt, 1);
        break;
    }
    case UDNN_OP_SCALE_TENSOR: {
        put(l, " scale --dtype %s", dtype_flag(t));
        put_shape(l, &p->c);
        role_tensor rt[1] = {{"y", p->c, 0}};
        put_layouts(l, rt, 1);
        put_real(l, "alpha", p->alpha1, t);
        break;
    }
    case UDNN_OP_ADD_TENSOR: {
        put(l, " addtensor --dtype %s", dtype_flag(t));
        put_shape(l, &p->c);
        put_dims_if_differ(l, "a", &p->a, &p->c);
        role_tensor rt[2] = {{"c", p->c, 0}, {"a", p->a, 0}};
        put_layouts(l, rt, 2);
        put_blend(l, p->alpha1, p->beta, t);
        break;
    }
    case UDNN_OP_TRANSFORM_TENSOR: {
        put(l, " transform --dtype %s", dtype_flag(p->a.dtype));
        if (p->a.dtype != t) put(l, " --y-dtype %s", dtype_flag(t));
        put_shape(l, &p->a);
        role_tensor rt[2] = {{"x", p->a, 0}, {"y", p->c, 0}};
        put_layouts(l, rt, 2);
        put_blend(l, p->alpha1, p->beta, t);
        break;
    }
    default: { /* OP_TENSOR */
        const int unary = p->tensor_op == UDNN_OP_TENSOR_SQRT || p->tensor_op == UDNN_OP_TENSOR_NOT;
        put(l, " optensor --dtype %s --op %s", dtype_flag(t), optensor_name(p->tensor_op));
        if (p->compute_type != default_compute(t))
            put(l, " --compute %s", dtype_flag(p->compute_type));
        if (p->nan_opt == UDNN_PROPAGATE_NAN) put(l, " --nan-prop");
        put_shape(l, &p->c);
        if (!unary) put_dims_if_differ(l, "b", &p->b, &p->c);
        role_tensor rt[3] = {{"c", p->c, 0}, {"a", p->a, 0}, {"b", p->b, 0}};
        put_layouts(l, rt, unary ? 2 : 3);
        if (p->alpha1 != 1.0) put_real(l, "alpha", p->alpha1, t);
        if (!unary && p->alpha2 != 1.0) put_real(l, "alpha2", p->alpha2, t);
        if (p->beta != 0.0) put_real(l, "beta", p->beta, t);
        break;
    }
    }
}

static void repro_bn(line *l, udnn_op op, const udnn_bn_problem *p)
{
    static const char *const dirs[] = {"fwd-train", "fwd-infer", "bwd"};
    const udnnDataType_t t = p->x.dtype;
    put(l, " bn --dir %s --dtype %s --mode %s", dirs[op - UDNN_OP_BN_FWD_TRAIN], dtype_flag(t),
        bn_mode_name(p->mode));
    put_shape(l, &p->x);
    put_real(l, "epsilon", p->epsilon, UDNN_DATA_DOUBLE);
    if (op == UDNN_OP_BN_FWD_TRAIN) {
        put_real(l, "exp-avg-factor", p->exp_avg_factor, UDNN_DATA_DOUBLE);
        if (p->running_mean_ptr == NULL) put(l, " --no-running");
        if (p->save_mean_ptr == NULL) put(l, " --no-saved");
    }
    if (op == UDNN_OP_BN_BWD) {
        if (p->saved_mean_ptr == NULL) put(l, " --no-saved");
        role_tensor rt[4] = {{"x", p->x, 0}, {"dy", p->dy, 0}, {"dx", p->dx, 0},
                             {"param", p->param, 0}};
        put_layouts(l, rt, 4);
        put_blend(l, p->alpha, p->beta, t);
        if (p->alpha_param != 1.0) put_real(l, "alpha-param", p->alpha_param, t);
        if (p->beta_param != 0.0) put_real(l, "beta-param", p->beta_param, t);
    } else {
        role_tensor rt[3] = {{"x", p->x, 0}, {"y", p->y, 0}, {"param", p->param, 0}};
        put_layouts(l, rt, 3);
        put_blend(l, p->alpha, p->beta, t);
    }
}

static void repro_norm(line *l, udnn_op op, const udnn_norm_problem *p)
{
    const int group = op == UDNN_OP_GROUPNORM_FWD || op == UDNN_OP_GROUPNORM_BWD;
    const int fwd = op == UDNN_OP_NORM_FWD || op == UDNN_OP_GROUPNORM_FWD;
    put(l, " %s --dir %s --dtype %s", group ? "groupnorm" : "norm", fwd ? "fwd" : "bwd",
        dtype_flag(p->x.dtype));
    if (group) put(l, " --groups %d", p->groups);
    else put(l, " --mode %s --norm-dims %d", p->mode == UDNN_NORM_RMS ? "rms" : "layer",
             p->norm_dims);
    put_shape(l, &p->x);
    if (fwd) {
        put_real(l, "epsilon", p->epsilon, UDNN_DATA_DOUBLE);
        if (p->bias_ptr == NULL && p->mode != UDNN_NORM_RMS) put(l, " --no-bias");
        if (p->save_mean_ptr == NULL && p->save_inv_std_ptr == NULL) put(l, " --no-stats");
    } else if (p->dbias_ptr == NULL && p->mode != UDNN_NORM_RMS) {
        put(l, " --no-bias");
    }
    role_tensor rt[5] = {{"x", p->x, 0}};
    int n = 1;
    if (fwd) {
        rt[n++] = (role_tensor){"y", p->y, 0};
    } else {
        rt[n++] = (role_tensor){"dy", p->dy, 0};
        rt[n++] = (role_tensor){"dx", p->dx, 0};
    }
    rt[n++] = (role_tensor){"scale", p->scale, 0};
    /* udnn-bench makes a stats tensor only when the stats are kept */
    if (!fwd || p->save_mean_ptr != NULL || p->save_inv_std_ptr != NULL)
        rt[n++] = (role_tensor){"stats", p->stats, 0};
    put_layouts(l, rt, n);
}

static void repro_lrn(line *l, udnn_op op, const udnn_lrn_problem *p)
{
    const int fwd = op == UDNN_OP_LRN_FWD;
    put(l, " lrn --dir %s --dtype %s", fwd ? "fwd" : "bwd", dtype_flag(p->x.dtype));
    put_shape(l, &p->x);
    put(l, " --size %u", p->n);
    put_real(l, "lrn-alpha", p->lrn_alpha, UDNN_DATA_DOUBLE);
    put_real(l, "lrn-beta", p->lrn_beta, UDNN_DATA_DOUBLE);
    put_real(l, "lrn-k", p->lrn_k, UDNN_DATA_DOUBLE);
    role_tensor rt[4] = {{"x", p->x, 0}, {"y", p->y, 0}, {"dy", p->dy, 0}, {"dx", p->dx, 0}};
    put_layouts(l, rt, fwd ? 2 : 4);
    put_blend(l, p->alpha, p->beta, p->x.dtype);
}

static void repro_dropout(line *l, udnn_op op, const udnn_dropout_problem *p)
{
    const int fwd = op == UDNN_OP_DROPOUT_FWD;
    put(l, " dropout --dir %s --dtype %s", fwd ? "fwd" : "bwd", dtype_flag(p->in.dtype));
    put_shape(l, &p->in);
    put_real(l, "p", p->p, UDNN_DATA_FLOAT);
    role_tensor rt[2] = {{fwd ? "x" : "dy", p->in, 0}, {fwd ? "y" : "dx", p->out, 0}};
    put_layouts(l, rt, 2);
}

static void repro_reduce(line *l, const udnn_reduce_problem *p)
{
    const udnnDataType_t t = p->a.dtype;
    put(l, " reduce --dtype %s --op %s", dtype_flag(t), reduce_name(p->op));
    if (p->compute_type != default_compute(t)) put(l, " --compute %s", dtype_flag(p->compute_type));
    if (p->nan_opt == UDNN_PROPAGATE_NAN) put(l, " --nan-prop");
    if (p->indices_ptr != NULL) put(l, " --indices %d", index_bits(p->indices_type));
    put_shape(l, &p->a);
    put_ints(l, "c-dims", p->c.dims, p->c.rank);
    role_tensor rt[2] = {{"a", p->a, 0}, {"c", p->c, 0}};
    put_layouts(l, rt, 2);
    put_blend(l, p->alpha, p->beta, t);
}

static void repro_matmul(line *l, const udnn_matmul_problem *p)
{
    /* a batch of 1 everywhere came from (or equals) the 2-D form */
    const int batched = p->batch != 1 || p->a.dims[0] != 1 || p->b.dims[0] != 1;
    put(l, " matmul --dtype %s --m %lld --n %lld --k %lld", dtype_flag(p->c.dtype),
        (long long)p->m, (long long)p->n, (long long)p->k);
    if (batched) put(l, " --bs %lld", (long long)p->batch);
    if (p->trans_a) put(l, " --trans-a");
    if (p->trans_b) put(l, " --trans-b");
    role_tensor rt[3] = {{"c", p->c, 0}, {"a", p->a, 0}, {"b", p->b, 0}};
    if (batched) {
        put_dims_if_differ(l, "a", &p->a, &(udnn_tensor){.rank = 3, .dims = {p->batch,
                                           p->a.dims[1], p->a.dims[2]}});
        put_dims_if_differ(l, "b", &p->b, &(udnn_tensor){.rank = 3, .dims = {p->batch,
                                           p->b.dims[1], p->b.dims[2]}});
    } else {
        for (int i = 0; i < 3; i++) rt[i].t = drop_dim(&rt[i].t, 0);
    }
    put_layouts(l, rt, 3);
    put_blend(l, p->alpha, p->beta, p->c.dtype);
}

/* ---- entry points ----------------------------------------------------------------- */

size_t udnn_repro_line(const char *backend, udnn_op op, int algo, const void *problem,
                       char *buf, size_t size)
{
    if (size == 0) return 0;
    line l = {buf, size, 0};
    buf[0] = '\0';
    put(&l, "udnn-bench");
    switch (op) {
    case UDNN_OP_CONV_FWD:
    case UDNN_OP_CONV_BWD_DATA:
    case UDNN_OP_CONV_BWD_FILTER:
    case UDNN_OP_CONV_BIAS_ACT: repro_conv(&l, op, algo, problem); break;
    case UDNN_OP_CONV_BWD_BIAS: repro_conv_bias(&l, problem); break;
    case UDNN_OP_ACT_FWD:
    case UDNN_OP_ACT_BWD: repro_act(&l, op, problem); break;
    case UDNN_OP_POOL_FWD:
    case UDNN_OP_POOL_BWD: repro_pool(&l, op, problem); break;
    case UDNN_OP_SOFTMAX_FWD:
    case UDNN_OP_SOFTMAX_BWD: repro_softmax(&l, op, problem); break;
    case UDNN_OP_SET_TENSOR:
    case UDNN_OP_SCALE_TENSOR:
    case UDNN_OP_ADD_TENSOR:
    case UDNN_OP_TRANSFORM_TENSOR:
    case UDNN_OP_OP_TENSOR: repro_tensor_op(&l, problem); break;
    case UDNN_OP_BN_FWD_TRAIN:
    case UDNN_OP_BN_FWD_INFER:
    case UDNN_OP_BN_BWD: repro_bn(&l, op, problem); break;
    case UDNN_OP_NORM_FWD:
    case UDNN_OP_NORM_BWD:
    case UDNN_OP_GROUPNORM_FWD:
    case UDNN_OP_GROUPNORM_BWD: repro_norm(&l, op, problem); break;
    case UDNN_OP_LRN_FWD:
    case UDNN_OP_LRN_BWD: repro_lrn(&l, op, problem); break;
    case UDNN_OP_DROPOUT_FWD:
    case UDNN_OP_DROPOUT_BWD: repro_dropout(&l, op, problem); break;
    case UDNN_OP_REDUCE: repro_reduce(&l, problem); break;
    case UDNN_OP_MATMUL: repro_matmul(&l, problem); break;
    case UDNN_OP_COUNT: break;
    }
    put(&l, " --backend %s", backend);
    return l.len;
}

void udnn_log_repro(udnnHandle_t h, const char *fn, udnn_op op, int algo, const void *problem)
{
    char buf[UDNN_STR_REPRO];
    udnn_repro_line(h->backend->name, op, algo, problem, buf, sizeof buf);
    udnn_log(UDNN_LOG_API, "%s: reproduce with: %s", fn, buf);
}
