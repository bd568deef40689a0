/* bench_tensor_ops.c - the tensor-op families: set, scale, addtensor,
 * optensor, transform and reduce. A broadcast operand takes its shape from
 * --a-dims (addtensor), --b-dims (optensor); a reduction's output from
 * --c-dims (default 1 x C x 1 ...: a per-channel sum). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

enum { FAM_SET, FAM_SCALE, FAM_ADD, FAM_OP, FAM_TRANSFORM, FAM_REDUCE };

typedef struct {
    int fam;
    bench_scalar alpha, alpha2, beta;
    union {
        float f;
        double d;
        int32_t i32;
        int8_t i8;
    } value;
    udnnOpTensorDescriptor_t op;
    udnnReduceTensorDescriptor_t reduce;
    int unary;
    int a, b, c, indices; /* buffer indices; set, scale and transform name c y */
} top_state;

static const char *const op_names[] = {"add", "mul", "min", "max", "sqrt", "not"};
static const char *const reduce_names[] = {"add", "mul",   "min",   "max",         "amax",
                                           "avg", "norm1", "norm2", "mul-no-zeros"};

static int read_compute(bench_problem *p, udnnDataType_t *out)
{
    const char *ct = bench_arg(p->args, "compute");
    int t = ct ? bench_dtype_parse(ct)
               : (p->dtype == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT);
    if (t < 0) return bench_fail(p, "--compute %s: not a data type", ct);
    *out = (udnnDataType_t)t;
    return 0;
}

static int read_blend(bench_problem *p, top_state *s, udnnDataType_t t, double dflt_alpha,
                      double *beta)
{
    double alpha;
    if (bench_opt_real(p, "alpha", dflt_alpha, &alpha) < 0) return -1;
    s->alpha = bench_scalar_of(t, alpha);
    if (beta == NULL) return 0;
    if (bench_opt_real(p, "beta", 0.0, beta) < 0) return -1;
    s->beta = bench_scalar_of(t, *beta);
    return 0;
}

/* The reduce family's descriptor and shapes. */
static int setup_reduce(bench_problem *p, top_state *s, int rank, const int dims[], double beta)
{
    int op = bench_opt_choice(p, "op", reduce_names, 9, UDNN_REDUCE_TENSOR_ADD);
    udnnDataType_t compute;
    long bits;
    if (op < 0 || read_compute(p, &compute) < 0 || bench_opt_int(p, "indices", 0, &bits) < 0)
        return -1;
    const udnnIndicesType_t itype = bits == 64   ? UDNN_64BIT_INDICES
                                    : bits == 16 ? UDNN_16BIT_INDICES
                                    : bits == 8  ? UDNN_8BIT_INDICES
                                                 : UDNN_32BIT_INDICES;
    if (bits != 0 && bits != 8 && bits != 16 && bits != 32 && bits != 64)
        return bench_fail(p, "--indices %ld: expected 8, 16, 32 or 64 (bits)", bits);
    const int nan_prop = bench_arg_flag(p->args, "nan-prop");
    udnnStatus_t st = udnnCreateReduceTensorDescriptor(&s->reduce);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetReduceTensorDescriptor(
            s->reduce, (udnnReduceTensorOp_t)op, compute,
            nan_prop ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN,
            bits ? UDNN_REDUCE_TENSOR_FLATTENED_INDICES : UDNN_REDUCE_TENSOR_NO_INDICES, itype);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "reduce descriptor");

    int cd[UDNN_DIM_MAX];
    for (int i = 0; i < rank; i++) cd[i] = i == 1 ? dims[1] : 1;
    if ((s->a = bench_add_tensor(p, "a", p->dtype, rank, dims, BENCH_IN)) < 0 ||
        (s->c = bench_add_tensor(p, "c", p->dtype, rank, cd, BENCH_OUT)) < 0)
        return -1;
    p->buf[s->c].blend = beta != 0.0;
    if (op == UDNN_REDUCE_TENSOR_MUL || op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS) {
        /* products of many factors near 1 stay in range */
        p->buf[s->a].lo = 0.9;
        p->buf[s->a].hi = 1.1;
    }
    if (bits) {
        const bench_buf *c = &p->buf[s->c];
        size_t bytes = (size_t)bench_count(c->rank, c->dims) * (size_t)(bits / 8);
        if ((s->indices = bench_add_raw(p, "indices", bytes, BENCH_OUT, 0, 0)) < 0) return -1;
    }
    char a[96], c[96];
    bench_dims_str(a, sizeof a, p->buf[s->a].rank, p->buf[s->a].dims);
    bench_dims_str(c, sizeof c, p->buf[s->c].rank, p->buf[s->c].dims);
    snprintf(p->name, sizeof p->name, "%s:%s:%s", reduce_names[op], a, c);
    return 0;
}

static int setup(bench_problem *p, int fam)
{
    top_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    s->fam = fam;
    s->a = s->b = s->c = s->indices = -1;
    int dims[UDNN_DIM_MAX];
    const int rank = bench_main_dims(p, dims);
    if (rank < 0) return -1;
    char d[96];
    bench_dims_str(d, sizeof d, rank, dims);
    double beta = 0.0;

    switch (fam) {
    case FAM_SET: {
        double v;
        if (bench_opt_real(p, "value", 1.0, &v) < 0) return -1;
        if (p->dtype == UDNN_DATA_DOUBLE) s->value.d = v;
        else if (p->dtype == UDNN_DATA_INT32) s->value.i32 = (int32_t)v;
        else if (p->dtype == UDNN_DATA_INT8) s->value.i8 = (int8_t)v;
        else s->value.f = (float)v;
        if ((s->c = bench_add_tensor(p, "y", p->dtype, rank, dims, BENCH_OUT)) < 0) return -1;
        snprintf(p->name, sizeof p->name, "%g:%s", v, d);
        break;
    }
    case FAM_SCALE:
        if (read_blend(p, s, p->dtype, 2.0, NULL) < 0) return -1;
        if ((s->c = bench_add_tensor(p, "y", p->dtype, rank, dims, BENCH_INOUT)) < 0) return -1;
        snprintf(p->name, sizeof p->name, "%s", d);
        break;
    case FAM_ADD:
        if (read_blend(p, s, p->dtype, 1.0, &beta) < 0) return -1;
        if ((s->c = bench_add_tensor(p, "c", p->dtype, rank, dims, BENCH_OUT)) < 0 ||
            (s->a = bench_add_tensor(p, "a", p->dtype, rank, dims, BENCH_IN)) < 0)
            return -1;
        snprintf(p->name, sizeof p->name, "%s", d);
        break;
    case FAM_OP: {
        int op = bench_opt_choice(p, "op", op_names, 6, UDNN_OP_TENSOR_ADD);
        udnnDataType_t compute;
        double alpha2;
        if (op < 0 || read_compute(p, &compute) < 0 || read_blend(p, s, p->dtype, 1.0, &beta) < 0)
            return -1;
        s->unary = op == UDNN_OP_TENSOR_SQRT || op == UDNN_OP_TENSOR_NOT;
        if (!s->unary && bench_opt_real(p, "alpha2", 1.0, &alpha2) < 0) return -1;
        s->alpha2 = bench_scalar_of(p->dtype, s->unary ? 1.0 : alpha2);
        const int nan_prop = bench_arg_flag(p->args, "nan-prop");
        udnnStatus_t st = udnnCreateOpTensorDescriptor(&s->op);
        if (st == UDNN_STATUS_SUCCESS)
            st = udnnSetOpTensorDescriptor(s->op, (udnnOpTensorOp_t)op, compute,
                                           nan_prop ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN);
        if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "op tensor descriptor");
        if ((s->c = bench_add_tensor(p, "c", p->dtype, rank, dims, BENCH_OUT)) < 0 ||
            (s->a = bench_add_tensor(p, "a", p->dtype, rank, dims, BENCH_IN)) < 0 ||
            (!s->unary && (s->b = bench_add_tensor(p, "b", p->dtype, rank, dims, BENCH_IN)) < 0))
            return -1;
        if (op == UDNN_OP_TENSOR_SQRT) p->buf[s->a].lo = 0.01;
        snprintf(p->name, sizeof p->name, "%s:%s", op_names[op], d);
        break;
    }
    case FAM_TRANSFORM: {
        if ((s->a = bench_add_tensor(p, "x", p->dtype, rank, dims, BENCH_IN)) < 0 ||
            (s->c = bench_add_tensor(p, "y", p->dtype, rank, dims, BENCH_OUT)) < 0)
            return -1;
        /* the scalars follow y's type */
        if (read_blend(p, s, p->buf[s->c].dtype, 1.0, &beta) < 0) return -1;
        snprintf(p->name, sizeof p->name, "%s:%s>%s", d, bench_dtype_name(p->dtype),
                 bench_dtype_name(p->buf[s->c].dtype));
        break;
    }
    default:
        if (read_blend(p, s, p->dtype, 1.0, &beta) < 0) return -1;
        if (setup_reduce(p, s, rank, dims, beta) < 0) return -1;
        break;
    }
    if (fam != FAM_SCALE && fam != FAM_SET) p->buf[s->c].blend = beta != 0.0;
    for (int i = 0; i < p->nbufs; i++)
        p->bytes_moved += bench_logical_bytes(&p->buf[i]) *
                          (p->buf[i].blend || p->buf[i].io == BENCH_INOUT ? 2 : 1);
    const bench_buf *bb = s->b >= 0 ? &p->buf[s->b] : fam == FAM_ADD ? &p->buf[s->a] : NULL;
    if (bb != NULL && memcmp(bb->dims, p->buf[s->c].dims, sizeof(int) * (size_t)bb->rank) != 0) {
        /* a broadcast operand's shape belongs in the problem's name */
        char bd[96];
        bench_dims_str(bd, sizeof bd, bb->rank, bb->dims);
        size_t len = strlen(p->name);
        snprintf(p->name + len, sizeof p->name - len, ":%s%s", s->b >= 0 ? "b" : "a", bd);
    }
    return 0;
}

static int setup_set(bench_problem *p)
{
    return setup(p, FAM_SET);
}
static int setup_scale(bench_problem *p)
{
    return setup(p, FAM_SCALE);
}
static int setup_add(bench_problem *p)
{
    return setup(p, FAM_ADD);
}
static int setup_op(bench_problem *p)
{
    return setup(p, FAM_OP);
}
static int setup_transform(bench_problem *p)
{
    return setup(p, FAM_TRANSFORM);
}
static int setup_reduce_family(bench_problem *p)
{
    return setup(p, FAM_REDUCE);
}

static udnnStatus_t prepare(bench_problem *p, bench_exec *e)
{
    top_state *s = p->state;
    e->algo = -1;
    if (s->fam != FAM_REDUCE) return UDNN_STATUS_SUCCESS;
    size_t ws = 0;
    udnnStatus_t st = udnnGetReductionWorkspaceSize(e->h, s->reduce, p->buf[s->a].desc,
                                                    p->buf[s->c].desc, &ws);
    if (st == UDNN_STATUS_SUCCESS && ws > 0) st = udnnMalloc(e->h, &e->ws, ws);
    if (st == UDNN_STATUS_SUCCESS) e->ws_bytes = ws;
    return st;
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    top_state *s = p->state;
    void *const *ptr = e->ptr[set];
    const bench_buf *c = &p->buf[s->c];
    switch (s->fam) {
    case FAM_SET: return udnnSetTensor(e->h, c->desc, ptr[s->c], &s->value);
    case FAM_SCALE: return udnnScaleTensor(e->h, c->desc, ptr[s->c], &s->alpha);
    case FAM_ADD:
        return udnnAddTensor(e->h, &s->alpha, p->buf[s->a].desc, ptr[s->a], &s->beta, c->desc,
                             ptr[s->c]);
    case FAM_OP:
        return udnnOpTensor(e->h, s->op, &s->alpha, p->buf[s->a].desc, ptr[s->a], &s->alpha2,
                            s->b >= 0 ? p->buf[s->b].desc : NULL, s->b >= 0 ? ptr[s->b] : NULL,
                            &s->beta, c->desc, ptr[s->c]);
    case FAM_TRANSFORM:
        return udnnTransformTensor(e->h, &s->alpha, p->buf[s->a].desc, ptr[s->a], &s->beta,
                                   c->desc, ptr[s->c]);
    default:
        return udnnReduceTensor(e->h, s->reduce, s->indices >= 0 ? ptr[s->indices] : NULL,
                                s->indices >= 0 ? p->buf[s->indices].bytes : 0, e->ws,
                                e->ws_bytes, &s->alpha, p->buf[s->a].desc, ptr[s->a], &s->beta,
                                c->desc, ptr[s->c]);
    }
}

static void release(bench_problem *p, bench_exec *e)
{
    (void)p;
    if (e->ws != NULL) udnnFree(e->h, e->ws);
    e->ws = NULL;
    e->ws_bytes = 0;
}

static void teardown(bench_problem *p)
{
    top_state *s = p->state;
    if (s == NULL) return;
    if (s->op) udnnDestroyOpTensorDescriptor(s->op);
    if (s->reduce) udnnDestroyReduceTensorDescriptor(s->reduce);
    free(s);
    p->state = NULL;
}

#define TOP_FAMILY(fname, setup_fn)                                                       \
    const bench_family bench_family_##fname = {.name = #fname, .setup = setup_fn,         \
                                               .prepare = prepare, .run = run,            \
                                               .release = release, .teardown = teardown};
TOP_FAMILY(set, setup_set)
TOP_FAMILY(scale, setup_scale)
TOP_FAMILY(addtensor, setup_add)
TOP_FAMILY(optensor, setup_op)
TOP_FAMILY(transform, setup_transform)
TOP_FAMILY(reduce, setup_reduce_family)
