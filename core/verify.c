/* verify.c - UDNN_VERIFY: every op a non-CPU backend runs is run again on
 * the CPU reference from host copies of its operands, and the results are
 * compared with DESIGN.md's tolerances. UDNN_VERIFY=1 logs a mismatch (at
 * level error; on stderr when UDNN_LOG is off, since the user asked to see
 * them); UDNN_VERIFY=abort makes the call fail with EXECUTION_FAILED.
 *
 * Generic over ops: a table per op lists the problem struct's pointer
 * fields, the tensor that shapes each, and whether the op reads it, writes
 * it, or both. Everything the op reads is copied to the host before the
 * run: that keeps in-place calls and in/out buffers (running statistics,
 * dropout states, ScaleTensor's y) right, and an output is read only when
 * its beta is not 0. Outputs are copied after the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

typedef enum { IO_IN, IO_OUT, IO_INOUT } field_io;

/* How a field's bytes are counted. */
typedef enum {
    SIZE_TENSOR,  /* the tensor's span, in its type */
    SIZE_MASK,    /* one byte per element of the tensor (dropout reserve) */
    SIZE_STATES,  /* the dropout states: two uint64 (backend.h) */
    SIZE_INDICES, /* one index per element of the tensor (reduce) */
} field_size;

#define NO_BLEND ((size_t)-1)

typedef struct {
    const char *name;
    size_t ptr;    /* offsetof the pointer in the problem */
    size_t tensor; /* offsetof the udnn_tensor that shapes it */
    field_io io;
    size_t blend;  /* offsetof the beta (double) that makes an OUT read, or NO_BLEND */
    field_size size;
} field;

#define VERIFY_MAX_FIELDS 9

typedef struct {
    size_t problem_size;
    int count;
    field f[VERIFY_MAX_FIELDS];
} op_fields;

#define IN(S, name, p, t) {name, offsetof(S, p), offsetof(S, t), IO_IN, NO_BLEND, SIZE_TENSOR}
#define OUT(S, name, p, t) {name, offsetof(S, p), offsetof(S, t), IO_OUT, NO_BLEND, SIZE_TENSOR}
#define INOUT(S, name, p, t) \
    {name, offsetof(S, p), offsetof(S, t), IO_INOUT, NO_BLEND, SIZE_TENSOR}
#define BLEND(S, name, p, t, b) \
    {name, offsetof(S, p), offsetof(S, t), IO_OUT, offsetof(S, b), SIZE_TENSOR}

#define CONV udnn_conv_problem
#define ACT udnn_act_problem
#define POOL udnn_pool_problem
#define SMAX udnn_softmax_problem
#define TOP udnn_tensor_problem
#define BN udnn_bn_problem
#define NORM udnn_norm_problem
#define LRN udnn_lrn_problem
#define DROP udnn_dropout_problem
#define RED udnn_reduce_problem
#define MM udnn_matmul_problem

/* Ops whose inputs are x (and y, dy) with a blended output, as activation,
 * pooling and LRN have them. */
#define XY_FWD(S) {sizeof(S), 2, {IN(S, "x", x_ptr, x), BLEND(S, "y", out_ptr, y, beta)}}
#define XY_BWD(S)                                                                         \
    {sizeof(S), 4,                                                                        \
     {IN(S, "x", x_ptr, x), IN(S, "y", y_ptr, y), IN(S, "dy", dy_ptr, dy),                \
      BLEND(S, "dx", out_ptr, dx, beta)}}

static const op_fields fields_of[UDNN_OP_COUNT] = {
    [UDNN_OP_CONV_FWD] = {sizeof(CONV), 3,
                          {IN(CONV, "x", x_ptr, x), IN(CONV, "w", w_ptr, w),
                           BLEND(CONV, "y", out_ptr, y, beta)}},
    [UDNN_OP_CONV_BWD_DATA] = {sizeof(CONV), 3,
                               {IN(CONV, "w", w_ptr, w), IN(CONV, "dy", y_ptr, y),
                                BLEND(CONV, "dx", out_ptr, x, beta)}},
    [UDNN_OP_CONV_BWD_FILTER] = {sizeof(CONV), 3,
                                 {IN(CONV, "x", x_ptr, x), IN(CONV, "dy", y_ptr, y),
                                  BLEND(CONV, "dw", out_ptr, w, beta)}},
    [UDNN_OP_CONV_BWD_BIAS] = {sizeof(udnn_conv_bias_problem), 2,
                               {IN(udnn_conv_bias_problem, "dy", dy_ptr, dy),
                                BLEND(udnn_conv_bias_problem, "db", db_ptr, db, beta)}},
    [UDNN_OP_CONV_BIAS_ACT] = {sizeof(CONV), 5,
                               {IN(CONV, "x", x_ptr, x), IN(CONV, "w", w_ptr, w),
                                IN(CONV, "z", z_ptr, z), IN(CONV, "bias", bias_ptr, bias),
                                OUT(CONV, "y", out_ptr, y)}},
    [UDNN_OP_ACT_FWD] = XY_FWD(ACT),
    [UDNN_OP_ACT_BWD] = XY_BWD(ACT),
    [UDNN_OP_POOL_FWD] = XY_FWD(POOL),
    [UDNN_OP_POOL_BWD] = XY_BWD(POOL),
    [UDNN_OP_SOFTMAX_FWD] = XY_FWD(SMAX),
    [UDNN_OP_SOFTMAX_BWD] = {sizeof(SMAX), 3,
                             {IN(SMAX, "y", y_ptr, y), IN(SMAX, "dy", dy_ptr, dy),
                              BLEND(SMAX, "dx", out_ptr, dx, beta)}},
    [UDNN_OP_SET_TENSOR] = {sizeof(TOP), 1, {OUT(TOP, "y", c_ptr, c)}},
    [UDNN_OP_SCALE_TENSOR] = {sizeof(TOP), 1, {INOUT(TOP, "y", c_ptr, c)}},
    [UDNN_OP_ADD_TENSOR] = {sizeof(TOP), 2,
                            {IN(TOP, "A", a_ptr, a), BLEND(TOP, "C", c_ptr, c, beta)}},
    [UDNN_OP_TRANSFORM_TENSOR] = {sizeof(TOP), 2,
                                  {IN(TOP, "x", a_ptr, a), BLEND(TOP, "y", c_ptr, c, beta)}},
    [UDNN_OP_OP_TENSOR] = {sizeof(TOP), 3,
                           {IN(TOP, "A", a_ptr, a), IN(TOP, "B", b_ptr, b),
                            BLEND(TOP, "C", c_ptr, c, beta)}},
    [UDNN_OP_BN_FWD_TRAIN] = {sizeof(BN), 8,
                              {IN(BN, "x", x_ptr, x), IN(BN, "bnScale", scale_ptr, param),
                               IN(BN, "bnBias", bias_ptr, param),
                               INOUT(BN, "resultRunningMean", running_mean_ptr, param),
                               INOUT(BN, "resultRunningVariance", running_var_ptr, param),
                               OUT(BN, "resultSaveMean", save_mean_ptr, param),
                               OUT(BN, "resultSaveInvVariance", save_inv_std_ptr, param),
                               BLEND(BN, "y", out_ptr, y, beta)}},
    [UDNN_OP_BN_FWD_INFER] = {sizeof(BN), 6,
                              {IN(BN, "x", x_ptr, x), IN(BN, "bnScale", scale_ptr, param),
                               IN(BN, "bnBias", bias_ptr, param),
                               IN(BN, "estimatedMean", est_mean_ptr, param),
                               IN(BN, "estimatedVariance", est_var_ptr, param),
                               BLEND(BN, "y", out_ptr, y, beta)}},
    [UDNN_OP_BN_BWD] = {sizeof(BN), 8,
                        {IN(BN, "x", x_ptr, x), IN(BN, "dy", dy_ptr, dy),
                         IN(BN, "bnScale", scale_ptr, param),
                         IN(BN, "savedMean", saved_mean_ptr, param),
                         IN(BN, "savedInvVariance", saved_inv_std_ptr, param),
                         BLEND(BN, "dx", out_ptr, dx, beta),
                         BLEND(BN, "dBnScaleResult", dscale_ptr, param, beta_param),
                         BLEND(BN, "dBnBiasResult", dbias_ptr, param, beta_param)}},
    [UDNN_OP_NORM_FWD] = {sizeof(NORM), 6,
                          {IN(NORM, "x", x_ptr, x), IN(NORM, "scale", scale_ptr, scale),
                           IN(NORM, "bias", bias_ptr, scale), OUT(NORM, "y", out_ptr, y),
                           OUT(NORM, "saveMean", save_mean_ptr, stats),
                           OUT(NORM, "saveInvStd", save_inv_std_ptr, stats)}},
    [UDNN_OP_NORM_BWD] = {sizeof(NORM), 8,
                          {IN(NORM, "x", x_ptr, x), IN(NORM, "dy", dy_ptr, dy),
                           IN(NORM, "scale", scale_ptr, scale),
                           IN(NORM, "savedMean", saved_mean_ptr, stats),
                           IN(NORM, "savedInvStd", saved_inv_std_ptr, stats),
                           OUT(NORM, "dx", out_ptr, dx), OUT(NORM, "dScale", dscale_ptr, scale),
                           OUT(NORM, "dBias", dbias_ptr, scale)}},
    [UDNN_OP_LRN_FWD] = XY_FWD(LRN),
    [UDNN_OP_LRN_BWD] = XY_BWD(LRN),
    [UDNN_OP_DROPOUT_FWD] = {sizeof(DROP), 4,
                             {IN(DROP, "x", in_ptr, in),
                              {"states", offsetof(DROP, states), offsetof(DROP, in), IO_INOUT,
                               NO_BLEND, SIZE_STATES},
                              OUT(DROP, "y", out_ptr, out),
                              {"reserveSpace", offsetof(DROP, reserve), offsetof(DROP, in),
                               IO_OUT, NO_BLEND, SIZE_MASK}}},
    [UDNN_OP_DROPOUT_BWD] = {sizeof(DROP), 3,
                             {IN(DROP, "dy", in_ptr, in),
                              {"reserveSpace", offsetof(DROP, reserve), offsetof(DROP, in),
                               IO_IN, NO_BLEND, SIZE_MASK},
                              OUT(DROP, "dx", out_ptr, out)}},
    [UDNN_OP_REDUCE] = {sizeof(RED), 3,
                        {IN(RED, "A", a_ptr, a), BLEND(RED, "C", c_ptr, c, beta),
                         {"indices", offsetof(RED, indices_ptr), offsetof(RED, c), IO_OUT,
                          NO_BLEND, SIZE_INDICES}}},
    [UDNN_OP_MATMUL] = {sizeof(MM), 3,
                        {IN(MM, "A", a_ptr, a), IN(MM, "B", b_ptr, b),
                         BLEND(MM, "C", c_ptr, c, beta)}},
};

/* The fields of op; group norm has layer norm's. NULL for none. */
static const op_fields *fields_for(udnn_op op)
{
    if (op == UDNN_OP_GROUPNORM_FWD) op = UDNN_OP_NORM_FWD;
    if (op == UDNN_OP_GROUPNORM_BWD) op = UDNN_OP_NORM_BWD;
    const op_fields *f = &fields_of[op];
    return f->count > 0 ? f : NULL;
}

/* ---- sizes and element access ---------------------------------------------------- */

static const udnn_tensor *tensor_of(const void *problem, const field *f)
{
    return (const udnn_tensor *)((const char *)problem + f->tensor);
}

static void *pointer_of(const void *problem, const field *f)
{
    void *p;
    memcpy(&p, (const char *)problem + f->ptr, sizeof p);
    return p;
}

static void set_pointer(void *problem, const field *f, void *p)
{
    memcpy((char *)problem + f->ptr, &p, sizeof p);
}

static int64_t element_count(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

static size_t index_size(udnnIndicesType_t t)
{
    switch (t) {
    case UDNN_8BIT_INDICES: return 1;
    case UDNN_16BIT_INDICES: return 2;
    case UDNN_32BIT_INDICES: return 4;
    case UDNN_64BIT_INDICES: return 8;
    }
    return 8;
}

static size_t field_bytes(const void *problem, const field *f)
{
    const udnn_tensor *t = tensor_of(problem, f);
    switch (f->size) {
    case SIZE_MASK: return (size_t)element_count(t);
    case SIZE_STATES: return 2 * sizeof(uint64_t);
    case SIZE_INDICES:
        return (size_t)element_count(t) *
               index_size(((const udnn_reduce_problem *)problem)->indices_type);
    case SIZE_TENSOR: break;
    }
    if (t->rank == 0) return 0;
    size_t span = 1;
    for (int i = 0; i < t->rank; i++) span += (size_t)(t->dims[i] - 1) * (size_t)t->strides[i];
    return span * udnn_dtype_size(t->dtype);
}

static double half_to_double(uint16_t h)
{
    const int sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v = exp == 0    ? ldexp(frac, -24)
               : exp == 31 ? (frac ? NAN : INFINITY)
                           : ldexp(frac + 1024, exp - 25);
    return sign ? -v : v;
}

static double load(const unsigned char *base, udnnDataType_t t, int64_t off)
{
    switch (t) {
    case UDNN_DATA_FLOAT: {
        float v;
        memcpy(&v, base + off * 4, 4);
        return v;
    }
    case UDNN_DATA_DOUBLE: {
        double v;
        memcpy(&v, base + off * 8, 8);
        return v;
    }
    case UDNN_DATA_HALF: {
        uint16_t v;
        memcpy(&v, base + off * 2, 2);
        return half_to_double(v);
    }
    case UDNN_DATA_BFLOAT16: {
        uint16_t v;
        memcpy(&v, base + off * 2, 2);
        uint32_t bits = (uint32_t)v << 16;
        float f;
        memcpy(&f, &bits, 4);
        return f;
    }
    case UDNN_DATA_INT8: return ((const int8_t *)base)[off];
    case UDNN_DATA_INT32: {
        int32_t v;
        memcpy(&v, base + off * 4, 4);
        return v;
    }
    case UDNN_DATA_INT64: {
        int64_t v;
        memcpy(&v, base + off * 8, 8);
        return (double)v;
    }
    }
    return NAN;
}

/* DESIGN.md section 3; TF32 may serve float convolutions that allow it. */
static double tolerance(udnn_op op, const void *problem, udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_DOUBLE: return 1e-12;
    case UDNN_DATA_HALF: return 1e-3;
    case UDNN_DATA_BFLOAT16: return 8e-3;
    case UDNN_DATA_FLOAT: {
        const int conv = op == UDNN_OP_CONV_FWD || op == UDNN_OP_CONV_BWD_DATA ||
                         op == UDNN_OP_CONV_BWD_FILTER || op == UDNN_OP_CONV_BIAS_ACT;
        if (conv && ((const udnn_conv_problem *)problem)->math_type != UDNN_DEFAULT_MATH)
            return 2e-3;
        return 1e-5;
    }
    default: return 0.0; /* integers compare exactly */
    }
}

/* Normwise relative error of out against ref over the tensor's elements;
 * an all-zero reference takes the absolute error (0 or infinity). */
static double tensor_error(const udnn_tensor *t, const unsigned char *out,
                           const unsigned char *ref)
{
    const int64_t n = element_count(t);
    double diff2 = 0.0, ref2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        int64_t rest = i, off = 0;
        for (int d = t->rank - 1; d >= 0; d--) {
            off += (rest % t->dims[d]) * t->strides[d];
            rest /= t->dims[d];
        }
        const double o = load(out, t->dtype, off), r = load(ref, t->dtype, off);
        if (isnan(o) != isnan(r)) return INFINITY;
        if (isnan(o)) continue;
        diff2 += (o - r) * (o - r);
        ref2 += r * r;
    }
    if (ref2 == 0.0) return diff2 == 0.0 ? 0.0 : INFINITY;
    return sqrt(diff2 / ref2);
}

/* ---- the snapshot around a run ------------------------------------------------------ */

/* Room for a copy of any problem struct. */
typedef union {
    udnn_conv_problem conv;
    udnn_conv_bias_problem conv_bias;
    udnn_act_problem act;
    udnn_pool_problem pool;
    udnn_softmax_problem softmax;
    udnn_tensor_problem tensor;
    udnn_bn_problem bn;
    udnn_norm_problem norm;
    udnn_lrn_problem lrn;
    udnn_dropout_problem dropout;
    udnn_reduce_problem reduce;
    udnn_matmul_problem matmul;
} any_problem;

struct udnn_verify_snapshot {
    udnn_op op;
    const op_fields *fields;
    any_problem problem;
    void *host[VERIFY_MAX_FIELDS];   /* the reference's operands */
    void *result[VERIFY_MAX_FIELDS]; /* what the backend wrote */
    size_t bytes[VERIFY_MAX_FIELDS];
};

/* 0 off, 1 log, 2 abort. */
static int verify_mode(void)
{
    const char *env = getenv("UDNN_VERIFY");
    if (env == NULL || *env == '\0' || strcmp(env, "0") == 0) return 0;
    return strcmp(env, "abort") == 0 ? 2 : 1;
}

int udnn_verify_wanted(udnnHandle_t h)
{
    return h->backend->kind != UDNN_BACKEND_CPU && verify_mode() != 0;
}

void udnn_verify_discard(udnn_verify_snapshot *s)
{
    if (s == NULL) return;
    for (int i = 0; i < VERIFY_MAX_FIELDS; i++) {
        free(s->host[i]);
        free(s->result[i]);
    }
    free(s);
}

static int blends(const void *problem, const field *f)
{
    if (f->io == IO_INOUT) return 1;
    if (f->io != IO_OUT || f->blend == NO_BLEND) return 0;
    double beta;
    memcpy(&beta, (const char *)problem + f->blend, sizeof beta);
    return beta != 0.0;
}

udnn_verify_snapshot *udnn_verify_begin(udnnHandle_t h, const char *fn, udnn_op op,
                                        const void *problem)
{
    const op_fields *of = fields_for(op);
    if (of == NULL) return NULL;
    udnn_verify_snapshot *s = calloc(1, sizeof *s);
    if (s == NULL) goto no_memory;
    s->op = op;
    s->fields = of;
    memcpy(&s->problem, problem, of->problem_size);
    for (int i = 0; i < of->count; i++) {
        const field *f = &of->f[i];
        void *dev = pointer_of(problem, f);
        size_t bytes = dev != NULL ? field_bytes(problem, f) : 0;
        s->bytes[i] = bytes;
        if (bytes == 0) continue;
        if ((s->host[i] = calloc(1, bytes)) == NULL) goto no_memory;
        set_pointer(&s->problem, f, s->host[i]);
        if (f->io == IO_IN || blends(problem, f))
            if (h->backend->memcpy(h->ctx, s->host[i], dev, bytes,
                                   UDNN_MEMCPY_DEVICE_TO_HOST) != UDNN_STATUS_SUCCESS) {
                udnn_log(UDNN_LOG_WARN, "%s: UDNN_VERIFY cannot copy %s to the host; not verified",
                         fn, f->name);
                udnn_verify_discard(s);
                return NULL;
            }
    }
    return s;
no_memory:
    udnn_log(UDNN_LOG_WARN, "%s: UDNN_VERIFY is out of host memory; not verified", fn);
    udnn_verify_discard(s);
    return NULL;
}

/* Runs the CPU reference solver of op on the snapshot's host operands. */
static udnnStatus_t run_reference(const char *fn, udnn_verify_snapshot *s)
{
    const udnn_backend *cpu = udnn_backend_get(UDNN_BACKEND_CPU, NULL);
    const udnn_solver *ref = NULL;
    for (size_t i = 0; cpu != NULL && i < cpu->solver_count && ref == NULL; i++)
        if (cpu->solvers[i]->op == s->op && strncmp(cpu->solvers[i]->name, "ref_", 4) == 0)
            ref = cpu->solvers[i];
    if (ref == NULL) {
        udnn_log(UDNN_LOG_WARN, "%s: UDNN_VERIFY: the cpu backend has no reference for this op",
                 fn);
        return UDNN_STATUS_NOT_SUPPORTED;
    }
    void *ctx = NULL;
    size_t ws_bytes = ref->workspace ? ref->workspace(&s->problem) : 0;
    void *ws = ws_bytes ? malloc(ws_bytes) : NULL;
    udnnStatus_t st = ws_bytes && ws == NULL ? UDNN_STATUS_ALLOC_FAILED
                                             : cpu->context_create(0, &ctx);
    if (st == UDNN_STATUS_SUCCESS) {
        st = ref->run(ctx, &s->problem, ws, ws_bytes);
        cpu->context_destroy(ctx);
    }
    free(ws);
    if (st != UDNN_STATUS_SUCCESS)
        udnn_log(UDNN_LOG_WARN, "%s: UDNN_VERIFY: the reference %s failed (%s)", fn, ref->name,
                 udnnGetErrorString(st));
    return st;
}

udnnStatus_t udnn_verify_end(udnnHandle_t h, const char *fn, udnn_op op, int algo,
                             const void *problem, udnn_verify_snapshot *s)
{
    const op_fields *of = s->fields;
    /* what the backend wrote, before the reference overwrites the host copies */
    for (int i = 0; i < of->count; i++) {
        const field *f = &of->f[i];
        if (f->io == IO_IN || s->bytes[i] == 0) continue;
        if ((s->result[i] = malloc(s->bytes[i])) == NULL ||
            h->backend->memcpy(h->ctx, s->result[i], pointer_of(problem, f), s->bytes[i],
                               UDNN_MEMCPY_DEVICE_TO_HOST) != UDNN_STATUS_SUCCESS) {
            udnn_log(UDNN_LOG_WARN, "%s: UDNN_VERIFY cannot read %s back; not verified", fn,
                     f->name);
            udnn_verify_discard(s);
            return UDNN_STATUS_SUCCESS;
        }
    }
    if (run_reference(fn, s) != UDNN_STATUS_SUCCESS) {
        udnn_verify_discard(s);
        return UDNN_STATUS_SUCCESS;
    }

    const char *worst = NULL;
    double worst_err = 0.0, worst_tol = 0.0;
    for (int i = 0; i < of->count; i++) {
        const field *f = &of->f[i];
        if (s->result[i] == NULL) continue;
        const udnn_tensor *t = tensor_of(problem, f);
        double err, tol;
        if (f->size == SIZE_TENSOR) {
            err = tensor_error(t, s->result[i], s->host[i]);
            tol = tolerance(op, problem, t->dtype);
        } else { /* masks, states and indices are exact */
            err = memcmp(s->result[i], s->host[i], s->bytes[i]) == 0 ? 0.0 : INFINITY;
            tol = 0.0;
        }
        if (!(err <= tol) && (worst == NULL || err > worst_err)) {
            worst = f->name;
            worst_err = err;
            worst_tol = tol;
        }
    }
    udnn_verify_discard(s);
    if (worst == NULL) return UDNN_STATUS_SUCCESS;

    char repro[UDNN_STR_REPRO];
    udnn_repro_line(h->backend->name, op, algo, problem, repro, sizeof repro);
    if (verify_mode() == 2)
        return udnn_fail(UDNN_STATUS_EXECUTION_FAILED,
                         "UDNN_VERIFY: %s: %s relative error %g over tolerance %g; reproduce "
                         "with: %s",
                         fn, worst, worst_err, worst_tol, repro);
    if (udnn_log_enabled(UDNN_LOG_ERROR))
        udnn_log(UDNN_LOG_ERROR,
                 "UDNN_VERIFY: %s: %s relative error %g over tolerance %g; reproduce with: %s", fn,
                 worst, worst_err, worst_tol, repro);
    else
        fprintf(stderr,
                "udnn[error] UDNN_VERIFY: %s: %s relative error %g over tolerance %g; reproduce "
                "with: %s\n",
                fn, worst, worst_err, worst_tol, repro);
    return UDNN_STATUS_SUCCESS;
}
