/* check_reduce.c - ReduceTensor, GetReductionIndicesSize and
 * GetReductionWorkspaceSize on every backend: every op × type × layout over
 * every subset of reduced dims of 2-D, 4-D and 5-D shapes, against the
 * test's own expectation; hand-computed cases; indices with ties in every
 * width; NaN propagation both ways; the validation rules. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

#define N_OPS 9

static const char *const op_names[N_OPS] = {"add",  "mul",   "min",   "max",         "amax",
                                            "avg",  "norm1", "norm2", "mul_no_zeros"};

static const tu_layout layouts[3] = {TU_NCHW, TU_NHWC, TU_STRIDED};

/* MIN, MAX and AMAX: the ops that have indices. */
static const udnnReduceTensorOp_t selection_ops[3] = {
    UDNN_REDUCE_TENSOR_MIN, UDNN_REDUCE_TENSOR_MAX, UDNN_REDUCE_TENSOR_AMAX};

/* In the order of udnnIndicesType_t. */
static const size_t index_width[4] = {4, 8, 2, 1};

typedef struct {
    int nb;
    int dims[5];
} shape;

/* C of 1, 3, 5, 7; a last dim of 1; 2-D, 4-D and 5-D */
static const shape shapes[] = {
    {2, {5, 7}},       {2, {3, 1}},          {4, {1, 1, 3, 3}}, {4, {2, 3, 4, 5}},
    {4, {3, 5, 2, 1}}, {4, {2, 7, 3, 3}},    {5, {2, 3, 2, 3, 4}},
};
#define N_SHAPES (int)(sizeof shapes / sizeof *shapes)

static void *ptr(const tu_tensor *t)
{
    return tu_buf_ptr(&t->buf);
}

static void *alloc_or_die(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    ck_assert_ptr_nonnull(p);
    return p;
}

static int is_selection(udnnReduceTensorOp_t op)
{
    return op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
           op == UDNN_REDUCE_TENSOR_AMAX;
}

static udnnReduceTensorDescriptor_t mkreduce(udnnReduceTensorOp_t op, udnnDataType_t comp,
                                             udnnNanPropagation_t nan, int indices,
                                             udnnIndicesType_t itype)
{
    udnnReduceTensorDescriptor_t d;
    tu_ok(udnnCreateReduceTensorDescriptor(&d));
    tu_ok(udnnSetReduceTensorDescriptor(
        d, op, comp, nan,
        indices ? UDNN_REDUCE_TENSOR_FLATTENED_INDICES : UDNN_REDUCE_TENSOR_NO_INDICES, itype));
    return d;
}

/* A's dims with the dims of `mask` set to 1. */
static void reduced_dims(int nb, const int *adims, unsigned mask, int *cdims)
{
    for (int i = 0; i < nb; i++) cdims[i] = (mask >> i) & 1u ? 1 : adims[i];
}

static int64_t count_of(int nb, const int *dims)
{
    int64_t n = 1;
    for (int i = 0; i < nb; i++) n *= dims[i];
    return n;
}

static void describe(char *buf, size_t n, udnnBackend_t b, udnnDataType_t t, int op,
                     tu_layout l, int nb, const int *adims, const int *cdims)
{
    int pos = snprintf(buf, n, "%s %s %s %s [", tu_backend_name(b), tu_dtype_name(t),
                       op_names[op], tu_layout_name(l));
    for (int i = 0; i < nb && (size_t)pos < n; i++)
        pos += snprintf(buf + pos, n - (size_t)pos, "%s%d", i ? "," : "", adims[i]);
    for (int i = 0; i < nb && (size_t)pos < n; i++)
        pos += snprintf(buf + pos, n - (size_t)pos, "%s%d", i ? "," : "] -> [", cdims[i]);
    if ((size_t)pos < n) snprintf(buf + pos, n - (size_t)pos, "]");
}

/* ---- the test's own expectation ---------------------------------------------------- */

/* Scatters A, in its row-major order, onto the elements of C: out[c] and,
 * for selection ops, idx[c] (the row-major index over the reduced dims of
 * the first element that gave the result). Plain doubles in, doubles out. */
static void expect_reduce(udnnReduceTensorOp_t op, udnnNanPropagation_t nan, int nb,
                          const int *adims, const int *cdims, const double *a, double *out,
                          int64_t *idx)
{
    const int64_t na = count_of(nb, adims), nc = count_of(nb, cdims), group = na / nc;
    int *state = calloc((size_t)nc, sizeof *state); /* 0 empty, 1 has a value, 2 NaN won */
    ck_assert_ptr_nonnull(state);
    const int product = op == UDNN_REDUCE_TENSOR_MUL || op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS;
    for (int64_t c = 0; c < nc; c++) {
        out[c] = is_selection(op) ? NAN : product ? 1.0 : 0.0;
        if (idx) idx[c] = 0;
    }
    for (int64_t i = 0; i < na; i++) {
        int64_t rest = i, c = 0, j = 0, cstride = 1, jstride = 1;
        for (int d = nb - 1; d >= 0; d--) {
            const int64_t x = rest % adims[d];
            rest /= adims[d];
            if (cdims[d] == adims[d]) {
                c += x * cstride;
                cstride *= cdims[d];
            } else {
                j += x * jstride;
                jstride *= adims[d];
            }
        }
        const double v = a[i];
        switch (op) {
        case UDNN_REDUCE_TENSOR_ADD:
        case UDNN_REDUCE_TENSOR_AVG: out[c] += v; break;
        case UDNN_REDUCE_TENSOR_MUL: out[c] *= v; break;
        case UDNN_REDUCE_TENSOR_MUL_NO_ZEROS: out[c] *= v == 0.0 ? 1.0 : v; break;
        case UDNN_REDUCE_TENSOR_NORM1: out[c] += fabs(v); break;
        case UDNN_REDUCE_TENSOR_NORM2: out[c] += v * v; break;
        default: {
            const double w = op == UDNN_REDUCE_TENSOR_AMAX ? fabs(v) : v;
            if (state[c] == 2) break;
            if (isnan(w)) {
                if (nan == UDNN_PROPAGATE_NAN) {
                    state[c] = 2;
                    out[c] = NAN;
                    if (idx) idx[c] = j;
                }
                break;
            }
            const int better = op == UDNN_REDUCE_TENSOR_MIN ? w < out[c] : w > out[c];
            if (state[c] == 0 || better) {
                state[c] = 1;
                out[c] = w;
                if (idx) idx[c] = j;
            }
        }
        }
    }
    for (int64_t c = 0; c < nc; c++) {
        if (op == UDNN_REDUCE_TENSOR_AVG) out[c] /= (double)group;
        if (op == UDNN_REDUCE_TENSOR_NORM2) out[c] = sqrt(out[c]);
    }
    free(state);
}

/* Data that exercises op: products near 1 so long ones stay in range, with
 * zeros for MUL_NO_ZEROS; wider values for the selections. */
static void fill_for(tu_tensor *a, udnnReduceTensorOp_t op)
{
    for (int64_t i = 0; i < a->count; i++) {
        double v;
        if (op == UDNN_REDUCE_TENSOR_MUL || op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS) {
            v = tu_uniform(0.8, 1.25) * (tu_int(0, 1) ? 1.0 : -1.0);
            if (op == UDNN_REDUCE_TENSOR_MUL_NO_ZEROS && tu_int(0, 3) == 0) v = 0.0;
        } else if (is_selection(op)) {
            v = tu_uniform(-2.0, 2.0);
        } else {
            v = tu_uniform(-1.0, 1.0);
        }
        tu_set(a, i, v);
    }
    tu_upload(a);
}

static uint64_t load_index(const unsigned char *base, udnnIndicesType_t t, int64_t i)
{
    switch (t) {
    case UDNN_8BIT_INDICES: return ((const uint8_t *)base)[i];
    case UDNN_16BIT_INDICES: return ((const uint16_t *)base)[i];
    case UDNN_32BIT_INDICES: return ((const uint32_t *)base)[i];
    case UDNN_64BIT_INDICES: return ((const uint64_t *)base)[i];
    }
    return UINT64_MAX;
}

/* Downloads the indices and asserts each equals want, guards intact. */
static void check_indices(tu_buf *ib, udnnIndicesType_t t, const int64_t *want, int64_t n,
                          const char *what)
{
    tu_buf_download(ib);
    if (!tu_buf_guards_intact(ib)) ck_abort_msg("%s: a write outside the indices", what);
    for (int64_t i = 0; i < n; i++) {
        const uint64_t got = load_index(ib->host, t, i);
        if (got != (uint64_t)want[i])
            ck_abort_msg("%s: index %lld is %llu, expected %lld (seed %llu)", what, (long long)i,
                         (unsigned long long)got, (long long)want[i],
                         (unsigned long long)tu_seed_used());
    }
}

/* ---- hand-computed tiny cases ----------------------------------------------------- */

/* A = [[1, -2, 3], [0, -5, 4]] reduced over its columns (C 2x1), its rows
 * (C 1x3) and everything (C 1x1). */
static const double tiny_a[6] = {1, -2, 3, 0, -5, 4};
static const struct {
    double cols[2], rows[3], all;
    int64_t icols[2], irows[3], iall;
} tiny_want[N_OPS] = {
    /* ADD */ {{2, -1}, {1, -7, 7}, 1, {0}, {0}, 0},
    /* MUL */ {{-6, 0}, {0, 10, 12}, 0, {0}, {0}, 0},
    /* MIN */ {{-2, -5}, {0, -5, 3}, -5, {1, 1}, {1, 1, 0}, 4},
    /* MAX */ {{3, 4}, {1, -2, 4}, 4, {2, 2}, {0, 0, 1}, 5},
    /* AMAX */ {{3, 5}, {1, 5, 4}, 5, {2, 1}, {0, 1, 1}, 4},
    /* AVG */ {{2.0 / 3, -1.0 / 3}, {0.5, -3.5, 3.5}, 1.0 / 6, {0}, {0}, 0},
    /* NORM1 */ {{6, 9}, {1, 7, 7}, 15, {0}, {0}, 0},
    /* NORM2 */ {{3.7416573867739413, 6.4031242374328485}, {1, 5.385164807134504, 5},
                 7.416198487095663, {0}, {0}, 0},
    /* MUL_NO_ZEROS */ {{-6, -20}, {1, 10, 12}, 120, {0}, {0}, 0},
};

START_TEST(test_reduce_tiny)
{
    const udnnReduceTensorOp_t op = (udnnReduceTensorOp_t)_i;
    const int sel = is_selection(op);
    const int adims[2] = {2, 3}, cshapes[3][2] = {{2, 1}, {1, 3}, {1, 1}};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 2, adims, TU_STRIDED);
        for (int i = 0; i < 6; i++) tu_set(&a, i, tiny_a[i]);
        tu_upload(&a);
        udnnReduceTensorDescriptor_t rd =
            mkreduce(op, UDNN_DATA_FLOAT, UDNN_PROPAGATE_NAN, sel, UDNN_32BIT_INDICES);
        for (int s = 0; s < 3; s++) {
            tu_tensor c;
            tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 2, cshapes[s], TU_NCHW);
            tu_buf ib;
            tu_buf_init(&ib, h, (size_t)c.count * 4);
            const float one = 1.0f, zero = 0.0f;
            tu_ok(udnnReduceTensor(h, rd, tu_buf_ptr(&ib), ib.bytes, NULL, 0, &one, a.desc,
                                   ptr(&a), &zero, c.desc, ptr(&c)));
            const double *want = s == 0 ? tiny_want[op].cols
                                 : s == 1 ? tiny_want[op].rows
                                          : &tiny_want[op].all;
            const int64_t *iwant = s == 0 ? tiny_want[op].icols
                                   : s == 1 ? tiny_want[op].irows
                                            : &tiny_want[op].iall;
            tu_download(&c);
            for (int64_t i = 0; i < c.count; i++)
                ck_assert_double_eq_tol(tu_get(&c, i), want[i], 1e-6 * (1 + fabs(want[i])));
            if (sel) check_indices(&ib, UDNN_32BIT_INDICES, iwant, c.count, op_names[op]);
            tu_buf_free(&ib);
            tu_tensor_free(&c);
        }
        udnnDestroyReduceTensorDescriptor(rd);
        tu_tensor_free(&a);
    }
}
END_TEST

/* ---- every op, type, layout and reduce set ------------------------------------------- */

/* _i = op * 4 + type. Every subset of dims of every shape is reduced; C's
 * layout differs from A's; odd cases blend with beta on a filled C, even
 * ones write a poisoned C with beta 0; selections also return 64-bit
 * indices. Float data computes in FLOAT or DOUBLE by turns. */
START_TEST(test_reduce_op)
{
    const udnnReduceTensorOp_t op = (udnnReduceTensorOp_t)(_i / 4);
    const udnnDataType_t t = tu_float_types[_i % 4];
    const int sel = is_selection(op);
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        int run = 0;
        for (int l = 0; l < 3; l++)
            for (int s = 0; s < N_SHAPES; s++) {
                const int nb = shapes[s].nb;
                const int *adims = shapes[s].dims;
                for (unsigned mask = 0; mask < 1u << nb; mask++, run++) {
                    int cdims[5];
                    reduced_dims(nb, adims, mask, cdims);
                    tu_tensor a, c;
                    tu_tensor_init(&a, h, t, nb, adims, layouts[l]);
                    tu_tensor_init(&c, h, t, nb, cdims, layouts[(l + 1 + run) % 3]);
                    fill_for(&a, op);
                    const int blend = run % 2;
                    const double alpha = blend ? -0.75 : 1.5, beta = blend ? 0.5 : 0.0;
                    const udnnDataType_t comp =
                        t == UDNN_DATA_DOUBLE || run % 3 == 0 ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
                    udnnReduceTensorDescriptor_t rd =
                        mkreduce(op, comp, (udnnNanPropagation_t)(run % 2), sel,
                                 UDNN_64BIT_INDICES);
                    size_t ibytes = 0, wbytes = 0;
                    tu_ok(udnnGetReductionIndicesSize(h, rd, a.desc, c.desc, &ibytes));
                    tu_ok(udnnGetReductionWorkspaceSize(h, rd, a.desc, c.desc, &wbytes));
                    ck_assert_uint_eq(ibytes, sel ? (size_t)c.count * 8 : 0);
                    tu_buf ib, wb;
                    tu_buf_init(&ib, h, ibytes);
                    tu_buf_init(&wb, h, wbytes);

                    double *av = alloc_or_die((size_t)a.count * sizeof *av);
                    double *want = alloc_or_die((size_t)c.count * sizeof *want);
                    int64_t *iwant = alloc_or_die((size_t)c.count * sizeof *iwant);
                    tu_values(&a, av);
                    expect_reduce(op, UDNN_PROPAGATE_NAN, nb, adims, cdims, av, want, iwant);
                    /* c has one element where every dim is reduced */
                    tu_blend_drawn(want, alpha, beta, &c);

                    const tu_scalar al = tu_scalar_of(t, alpha), be = tu_scalar_of(t, beta);
                    tu_ok(udnnReduceTensor(h, rd, sel ? tu_buf_ptr(&ib) : NULL, ibytes,
                                           wbytes ? tu_buf_ptr(&wb) : NULL, wbytes, &al, a.desc,
                                           ptr(&a), &be, c.desc, ptr(&c)));
                    char what[160];
                    describe(what, sizeof what, bk, t, op, layouts[l], nb, adims, cdims);
                    tu_check_tensor(&c, want, what);
                    if (sel) check_indices(&ib, UDNN_64BIT_INDICES, iwant, c.count, what);
                    free(av);
                    free(want);
                    free(iwant);
                    tu_buf_free(&ib);
                    tu_buf_free(&wb);
                    udnnDestroyReduceTensorDescriptor(rd);
                    tu_tensor_free(&a);
                    tu_tensor_free(&c);
                }
            }
    }
}
END_TEST

/* ---- indices: ties, every width ----------------------------------------------------- */

/* _i = selection op * 4 + indices type. Small integers make ties common;
 * the first occurrence must win. Every type, every subset of dims. */
START_TEST(test_reduce_indices_ties)
{
    const udnnReduceTensorOp_t op = selection_ops[_i / 4];
    const udnnIndicesType_t it = (udnnIndicesType_t)(_i % 4);
    const int adims[4] = {2, 5, 3, 3};
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    for (int ti = 0; ti < 4; ti++)
        for (unsigned mask = 0; mask < 16; mask++) {
            const udnnDataType_t t = tu_float_types[ti];
            int cdims[4];
            reduced_dims(4, adims, mask, cdims);
            tu_tensor a, c;
            tu_tensor_init(&a, h, t, 4, adims, layouts[(ti + mask) % 3]);
            tu_tensor_init(&c, h, t, 4, cdims, layouts[mask % 3]);
            tu_fill_int(&a, -2, 2);
            udnnReduceTensorDescriptor_t rd =
                mkreduce(op, t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT,
                         UDNN_PROPAGATE_NAN, 1, it);
            size_t ibytes = 0;
            tu_ok(udnnGetReductionIndicesSize(h, rd, a.desc, c.desc, &ibytes));
            ck_assert_uint_eq(ibytes, (size_t)c.count * index_width[it]);
            tu_buf ib;
            tu_buf_init(&ib, h, ibytes);
            double av[90], want[90];
            int64_t iwant[90];
            tu_values(&a, av);
            expect_reduce(op, UDNN_PROPAGATE_NAN, 4, adims, cdims, av, want, iwant);
            /* alpha 2 keeps every value exact */
            const tu_scalar al = tu_scalar_of(t, 2.0), be = tu_scalar_of(t, 0.0);
            tu_ok(udnnReduceTensor(h, rd, tu_buf_ptr(&ib), ibytes, NULL, 0, &al, a.desc,
                                   ptr(&a), &be, c.desc, ptr(&c)));
            char what[160];
            describe(what, sizeof what, bk, t, (int)op, layouts[(ti + mask) % 3], 4, adims,
                     cdims);
            tu_download(&c);
            for (int64_t i = 0; i < c.count; i++)
                if (tu_get(&c, i) != 2.0 * want[i])
                    ck_abort_msg("%s: element %lld is %g, expected %g", what, (long long)i,
                                 tu_get(&c, i), 2.0 * want[i]);
            check_indices(&ib, it, iwant, c.count, what);
            tu_buf_free(&ib);
            udnnDestroyReduceTensorDescriptor(rd);
            tu_tensor_free(&a);
            tu_tensor_free(&c);
        }
}
END_TEST

/* Without FLATTENED_INDICES the indices argument is ignored: never
 * written, and NULL is fine. */
START_TEST(test_reduce_no_indices_untouched)
{
    const int adims[4] = {2, 3, 4, 5}, cdims[4] = {2, 1, 4, 1};
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    for (int k = 0; k < 3; k++) {
        tu_tensor a, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, adims, TU_NHWC);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, cdims, TU_NCHW);
        tu_fill_uniform(&a, -1, 1);
        udnnReduceTensorDescriptor_t rd =
            mkreduce(selection_ops[k], UDNN_DATA_FLOAT, UDNN_PROPAGATE_NAN, 0, UDNN_32BIT_INDICES);
        size_t ibytes = 99;
        tu_ok(udnnGetReductionIndicesSize(h, rd, a.desc, c.desc, &ibytes));
        ck_assert_uint_eq(ibytes, 0);
        tu_buf ib;
        tu_buf_init(&ib, h, 64);
        const float one = 1.0f, zero = 0.0f;
        tu_ok(udnnReduceTensor(h, rd, tu_buf_ptr(&ib), ib.bytes, NULL, 0, &one, a.desc, ptr(&a),
                               &zero, c.desc, ptr(&c)));
        tu_buf_download(&ib);
        ck_assert(tu_buf_guards_intact(&ib));
        for (size_t i = 0; i < ib.bytes; i++) ck_assert_uint_eq(ib.host[i], 0xFF);
        tu_ok(udnnReduceTensor(h, rd, NULL, 0, NULL, 0, &one, a.desc, ptr(&a), &zero, c.desc,
                               ptr(&c)));
        tu_buf_free(&ib);
        udnnDestroyReduceTensorDescriptor(rd);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- NaN ------------------------------------------------------------------------------------- */

/* Values equal (exact: selections with alpha 1) or both NaN. */
static void check_exact_or_nan(tu_tensor *c, const double *want, const char *what)
{
    tu_download(c);
    ck_assert(tu_buf_guards_intact(&c->buf));
    for (int64_t i = 0; i < c->count; i++) {
        const double got = tu_get(c, i);
        if (isnan(want[i]) ? !isnan(got) : got != want[i])
            ck_abort_msg("%s: element %lld is %g, expected %g (seed %llu)", what, (long long)i,
                         got, want[i], (unsigned long long)tu_seed_used());
    }
}

/* _i = selection op * 2 + nan_opt. By hand: row 0 has no NaN, row 1 one
 * at index 2, row 2 only NaNs. Then random data with NaNs sprinkled,
 * every type, every subset of dims. */
START_TEST(test_reduce_nan)
{
    const udnnReduceTensorOp_t op = selection_ops[_i / 2];
    const udnnNanPropagation_t nan = (udnnNanPropagation_t)(_i % 2);
    const int prop = nan == UDNN_PROPAGATE_NAN;
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    {
        const int hd[2] = {3, 4}, hc[2] = {3, 1};
        const double hv[12] = {1, -3, 2, -3, 4, -6, NAN, 5, NAN, NAN, NAN, NAN};
        /* by op: MIN, MAX, AMAX without propagation; propagation gives NaN
         * at index 2 for row 1 */
        const double keep[3][2] = {{-3, -6}, {2, 5}, {3, 6}};
        const int64_t ikeep[3][2] = {{1, 1}, {2, 3}, {1, 1}};
        tu_tensor a, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 2, hd, TU_STRIDED);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 2, hc, TU_NCHW);
        for (int i = 0; i < 12; i++) tu_set(&a, i, hv[i]);
        tu_upload(&a);
        udnnReduceTensorDescriptor_t rd =
            mkreduce(op, UDNN_DATA_FLOAT, nan, 1, UDNN_16BIT_INDICES);
        tu_buf ib;
        tu_buf_init(&ib, h, 3 * 2);
        const float one = 1.0f, zero = 0.0f;
        tu_ok(udnnReduceTensor(h, rd, tu_buf_ptr(&ib), ib.bytes, NULL, 0, &one, a.desc, ptr(&a),
                               &zero, c.desc, ptr(&c)));
        const int k = _i / 2;
        const double want[3] = {keep[k][0], prop ? NAN : keep[k][1], NAN};
        const int64_t iwant[3] = {ikeep[k][0], prop ? 2 : ikeep[k][1], 0};
        check_exact_or_nan(&c, want, "by hand");
        check_indices(&ib, UDNN_16BIT_INDICES, iwant, 3, "by hand");
        tu_buf_free(&ib);
        udnnDestroyReduceTensorDescriptor(rd);
        tu_tensor_free(&a);
        tu_tensor_free(&c);

        const int adims[4] = {3, 3, 2, 4};
        for (int ti = 0; ti < 4; ti++)
            for (unsigned mask = 0; mask < 16; mask++) {
                const udnnDataType_t t = tu_float_types[ti];
                int cdims[4];
                reduced_dims(4, adims, mask, cdims);
                tu_tensor_init(&a, h, t, 4, adims, layouts[mask % 3]);
                tu_tensor_init(&c, h, t, 4, cdims, layouts[(mask + ti) % 3]);
                for (int64_t i = 0; i < a.count; i++)
                    tu_set(&a, i, tu_int(0, 4) == 0 ? NAN : tu_uniform(-2, 2));
                tu_upload(&a);
                rd = mkreduce(op, t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT, nan,
                              1, UDNN_32BIT_INDICES);
                tu_buf_init(&ib, h, (size_t)c.count * 4);
                double av[72], rw[72];
                int64_t riw[72];
                tu_values(&a, av);
                expect_reduce(op, nan, 4, adims, cdims, av, rw, riw);
                const tu_scalar al = tu_scalar_of(t, 1.0), be = tu_scalar_of(t, 0.0);
                tu_ok(udnnReduceTensor(h, rd, tu_buf_ptr(&ib), ib.bytes, NULL, 0, &al, a.desc,
                                       ptr(&a), &be, c.desc, ptr(&c)));
                char what[160];
                describe(what, sizeof what, bk, t, (int)op, layouts[mask % 3], 4, adims, cdims);
                check_exact_or_nan(&c, rw, what);
                check_indices(&ib, UDNN_32BIT_INDICES, riw, c.count, what);
                tu_buf_free(&ib);
                udnnDestroyReduceTensorDescriptor(rd);
                tu_tensor_free(&a);
                tu_tensor_free(&c);
            }
    }
}
END_TEST

/* The arithmetic ops carry a NaN through whatever nan_opt says.
 * _i = op index among them * 2 + nan_opt. */
START_TEST(test_reduce_nan_arithmetic)
{
    static const udnnReduceTensorOp_t ops[6] = {
        UDNN_REDUCE_TENSOR_ADD,   UDNN_REDUCE_TENSOR_MUL,   UDNN_REDUCE_TENSOR_AVG,
        UDNN_REDUCE_TENSOR_NORM1, UDNN_REDUCE_TENSOR_NORM2, UDNN_REDUCE_TENSOR_MUL_NO_ZEROS};
    const udnnReduceTensorOp_t op = ops[_i / 2];
    const int d[2] = {2, 3}, cd[2] = {2, 1};
    const double v[6] = {1, 2, 3, 4, NAN, 0};
    TU_FOR_EACH_BACKEND(h, bk)
    for (int ti = 0; ti < 4; ti++) {
        const udnnDataType_t t = tu_float_types[ti];
        tu_tensor a, c;
        tu_tensor_init(&a, h, t, 2, d, TU_NCHW);
        tu_tensor_init(&c, h, t, 2, cd, TU_STRIDED);
        for (int i = 0; i < 6; i++) tu_set(&a, i, v[i]);
        tu_upload(&a);
        udnnReduceTensorDescriptor_t rd =
            mkreduce(op, t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT,
                     (udnnNanPropagation_t)(_i % 2), 0, UDNN_32BIT_INDICES);
        const tu_scalar al = tu_scalar_of(t, 1.0), be = tu_scalar_of(t, 0.0);
        tu_ok(udnnReduceTensor(h, rd, NULL, 0, NULL, 0, &al, a.desc, ptr(&a), &be, c.desc,
                               ptr(&c)));
        double want[2], av[6];
        tu_values(&a, av);
        expect_reduce(op, UDNN_PROPAGATE_NAN, 2, d, cd, av, want, NULL);
        ck_assert(!isnan(want[0]) && isnan(want[1]));
        tu_download(&c);
        ck_assert(tu_buf_guards_intact(&c.buf));
        ck_assert_double_eq_tol(tu_get(&c, 0), want[0], 1e-2 * fabs(want[0]));
        ck_assert(isnan(tu_get(&c, 1)));
        udnnDestroyReduceTensorDescriptor(rd);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

/* ---- in place, sizes --------------------------------------------------------------------- */

/* Nothing reduced: C may be A's buffer with A's layout; c = alpha*op(a) +
 * beta*a, element-wise. */
START_TEST(test_reduce_in_place)
{
    const int dims[4] = {2, 3, 2, 5};
    tu_seed_fresh();
    TU_FOR_EACH_BACKEND(h, bk)
    for (int op = 0; op < N_OPS; op++) {
        tu_tensor a;
        tu_tensor_init(&a, h, UDNN_DATA_DOUBLE, 4, dims, TU_STRIDED);
        fill_for(&a, (udnnReduceTensorOp_t)op);
        double av[60], want[60];
        tu_values(&a, av);
        expect_reduce((udnnReduceTensorOp_t)op, UDNN_PROPAGATE_NAN, 4, dims, dims, av, want,
                      NULL);
        for (int i = 0; i < 60; i++) want[i] = 2.0 * want[i] + 0.5 * av[i];
        udnnReduceTensorDescriptor_t rd = mkreduce((udnnReduceTensorOp_t)op, UDNN_DATA_DOUBLE,
                                                   UDNN_NOT_PROPAGATE_NAN, 0, UDNN_32BIT_INDICES);
        const double alpha = 2.0, beta = 0.5;
        tu_ok(udnnReduceTensor(h, rd, NULL, 0, NULL, 0, &alpha, a.desc, ptr(&a), &beta, a.desc,
                               ptr(&a)));
        tu_check_tensor(&a, want, op_names[op]);
        udnnDestroyReduceTensorDescriptor(rd);
        tu_tensor_free(&a);
    }
}
END_TEST

/* Indices: one per element of C in the descriptor's width, none without
 * FLATTENED_INDICES; the reference needs no workspace. */
START_TEST(test_reduction_sizes)
{
    const int adims[5] = {2, 3, 4, 5, 6}, cdims[5] = {2, 1, 4, 1, 6};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        udnnTensorDescriptor_t a = tu_packed_desc(UDNN_DATA_HALF, 5, adims),
                               c = tu_packed_desc(UDNN_DATA_HALF, 5, cdims);
        for (int op = 0; op < N_OPS; op++)
            for (int it = 0; it < 4; it++)
                for (int ind = 0; ind < 2; ind++) {
                    if (ind && !is_selection((udnnReduceTensorOp_t)op)) continue;
                    udnnReduceTensorDescriptor_t rd =
                        mkreduce((udnnReduceTensorOp_t)op, UDNN_DATA_FLOAT, UDNN_PROPAGATE_NAN,
                                 ind, (udnnIndicesType_t)it);
                    size_t ib = 1, wb = 1;
                    tu_ok(udnnGetReductionIndicesSize(h, rd, a, c, &ib));
                    tu_ok(udnnGetReductionWorkspaceSize(h, rd, a, c, &wb));
                    ck_assert_uint_eq(ib, ind ? 48 * index_width[it] : 0);
                    if (bk == UDNN_BACKEND_CPU) ck_assert_uint_eq(wb, 0);
                    udnnDestroyReduceTensorDescriptor(rd);
                }
        udnnDestroyTensorDescriptor(a);
        udnnDestroyTensorDescriptor(c);
    }
}
END_TEST

/* ---- validation ---------------------------------------------------------------------------- */

START_TEST(test_reduce_rejects)
{
    static const char fn[] = "udnnReduceTensor";
    const int adims[4] = {2, 3, 4, 5}, cdims[4] = {2, 1, 4, 1}, bad[4] = {2, 2, 4, 1},
              c3[3] = {2, 1, 4}, big[4] = {1, 1, 17, 17}, one4[4] = {1, 1, 1, 1};
    TU_FOR_EACH_BACKEND(h, bk)
    {
        tu_tensor a, c;
        tu_tensor_init(&a, h, UDNN_DATA_FLOAT, 4, adims, TU_NCHW);
        tu_tensor_init(&c, h, UDNN_DATA_FLOAT, 4, cdims, TU_NCHW);
        tu_buf ib;
        tu_buf_init(&ib, h, 8 * 8);
        udnnReduceTensorDescriptor_t rd = mkreduce(UDNN_REDUCE_TENSOR_MAX, UDNN_DATA_FLOAT,
                                                   UDNN_PROPAGATE_NAN, 1, UDNN_32BIT_INDICES),
                                     rd_add = mkreduce(UDNN_REDUCE_TENSOR_ADD, UDNN_DATA_FLOAT,
                                                       UDNN_PROPAGATE_NAN, 0, UDNN_32BIT_INDICES),
                                     rd8 = mkreduce(UDNN_REDUCE_TENSOR_AMAX, UDNN_DATA_FLOAT,
                                                    UDNN_PROPAGATE_NAN, 1, UDNN_8BIT_INDICES),
                                     unset_rd;
        tu_ok(udnnCreateReduceTensorDescriptor(&unset_rd));
        udnnTensorDescriptor_t unset, c_bad = tu_packed_desc(UDNN_DATA_FLOAT, 4, bad),
                                      c_3d = tu_packed_desc(UDNN_DATA_FLOAT, 3, c3),
                                      c_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, cdims),
                                      a_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, adims),
                                      a_i8 = tu_packed_desc(UDNN_DATA_INT8, 4, adims),
                                      c_i8 = tu_packed_desc(UDNN_DATA_INT8, 4, cdims),
                                      a_big = tu_packed_desc(UDNN_DATA_FLOAT, 4, big),
                                      c_one = tu_packed_desc(UDNN_DATA_FLOAT, 4, one4);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        const float one = 1.0f;
        const double done = 1.0;
        void *A = ptr(&a), *C = ptr(&c), *I = tu_buf_ptr(&ib);
        const size_t IB = ib.bytes;
#define RT(hh, d, ind, indsz, al, ad, aa, be, cdd, cc) \
    udnnReduceTensor(hh, d, ind, indsz, NULL, 0, al, ad, aa, be, cdd, cc)
        tu_ok(RT(h, rd, I, IB, &one, a.desc, A, &one, c.desc, C));
        tu_assert_fails(RT(NULL, rd, I, IB, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(RT(h, NULL, I, IB, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "reduceTensorDesc is NULL");
        tu_assert_fails(RT(h, unset_rd, I, IB, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "reduceTensorDesc", "not been set");
        tu_assert_fails(RT(h, rd, I, IB, NULL, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "alpha");
        tu_assert_fails(RT(h, rd, I, IB, &one, NULL, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc");
        tu_assert_fails(RT(h, rd, I, IB, &one, unset, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "aDesc", "not been set");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, NULL, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "A is NULL");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, NULL, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "beta");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, NULL, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, unset, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc", "not been set");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, c.desc, NULL),
                        UDNN_STATUS_BAD_PARAM, fn, "C is NULL");
        tu_assert_fails(RT(h, rd, I, IB, &one, a_i8, A, &one, c_i8, C),
                        UDNN_STATUS_NOT_SUPPORTED, fn, "aDesc", "s8");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, c_dbl, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc", "f64", "aDesc", "f32");
        tu_assert_fails(RT(h, rd, I, IB, &done, a_dbl, A, &done, c_dbl, C),
                        UDNN_STATUS_BAD_PARAM, fn, "reduceTensorDesc", "compType DOUBLE");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, c_3d, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc has 3 dimensions", "aDesc has 4");
        tu_assert_fails(RT(h, rd, I, IB, &one, a.desc, A, &one, c_bad, C),
                        UDNN_STATUS_BAD_PARAM, fn, "cDesc", "dimension 1 of size 2",
                        "3 (kept) or 1");
        tu_assert_fails(RT(h, rd, NULL, IB, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "indices is NULL", "FLATTENED_INDICES");
        tu_assert_fails(RT(h, rd, I, 8 * 4 - 1, &one, a.desc, A, &one, c.desc, C),
                        UDNN_STATUS_BAD_PARAM, fn, "indicesSizeInBytes is 31", "need 32");
        tu_assert_fails(RT(h, rd8, I, IB, &one, a_big, A, &one, c_one, C),
                        UDNN_STATUS_BAD_PARAM, fn, "reduceTensorDesc", "8-bit indices",
                        "289 elements");
        /* in place needs nothing reduced and A's layout */
        tu_assert_fails(RT(h, rd_add, NULL, 0, &one, a.desc, A, &one, c.desc, A),
                        UDNN_STATUS_BAD_PARAM, fn, "C is the buffer of A", "cDesc", "aDesc");
        /* the 8-bit limit is 256 elements: 16 x 16 fits */
        const int fits[4] = {1, 1, 16, 16};
        tu_tensor af;
        tu_tensor_init(&af, h, UDNN_DATA_FLOAT, 4, fits, TU_NCHW);
        tu_fill_uniform(&af, -1, 1);
        tu_ok(RT(h, rd8, I, IB, &one, af.desc, ptr(&af), &one, c_one, C));
        tu_tensor_free(&af);
#undef RT
        udnnTensorDescriptor_t ds[] = {unset, c_bad, c_3d, c_dbl, a_dbl, a_i8, c_i8, a_big, c_one};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        udnnDestroyReduceTensorDescriptor(rd);
        udnnDestroyReduceTensorDescriptor(rd_add);
        udnnDestroyReduceTensorDescriptor(rd8);
        udnnDestroyReduceTensorDescriptor(unset_rd);
        tu_buf_free(&ib);
        tu_tensor_free(&a);
        tu_tensor_free(&c);
    }
}
END_TEST

/* The size queries check what ReduceTensor checks, and their output. */
START_TEST(test_reduction_sizes_reject)
{
    static const char *const fns[2] = {"udnnGetReductionIndicesSize",
                                       "udnnGetReductionWorkspaceSize"};
    const int adims[4] = {2, 3, 4, 5}, cdims[4] = {2, 1, 4, 1}, bad[4] = {2, 3, 2, 1},
              big[4] = {1, 1, 300, 300}, one4[4] = {1, 1, 1, 1};
    TU_FOR_EACH_BACKEND(h, bk)
    for (int q = 0; q < 2; q++) {
        udnnStatus_t (*query)(udnnHandle_t, const udnnReduceTensorDescriptor_t,
                              const udnnTensorDescriptor_t, const udnnTensorDescriptor_t,
                              size_t *) =
            q ? udnnGetReductionWorkspaceSize : udnnGetReductionIndicesSize;
        const char *fn = fns[q];
        udnnReduceTensorDescriptor_t rd = mkreduce(UDNN_REDUCE_TENSOR_MIN, UDNN_DATA_FLOAT,
                                                   UDNN_PROPAGATE_NAN, 1, UDNN_16BIT_INDICES),
                                     unset_rd;
        tu_ok(udnnCreateReduceTensorDescriptor(&unset_rd));
        udnnTensorDescriptor_t unset, a = tu_packed_desc(UDNN_DATA_FLOAT, 4, adims),
                                      c = tu_packed_desc(UDNN_DATA_FLOAT, 4, cdims),
                                      c_bad = tu_packed_desc(UDNN_DATA_FLOAT, 4, bad),
                                      c_half = tu_packed_desc(UDNN_DATA_HALF, 4, cdims),
                                      a_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, adims),
                                      c_dbl = tu_packed_desc(UDNN_DATA_DOUBLE, 4, cdims),
                                      a_big = tu_packed_desc(UDNN_DATA_FLOAT, 4, big),
                                      c_one = tu_packed_desc(UDNN_DATA_FLOAT, 4, one4);
        tu_ok(udnnCreateTensorDescriptor(&unset));
        size_t bytes;
        tu_ok(query(h, rd, a, c, &bytes));
        tu_assert_fails(query(NULL, rd, a, c, &bytes), UDNN_STATUS_BAD_PARAM, fn, "handle");
        tu_assert_fails(query(h, NULL, a, c, &bytes), UDNN_STATUS_BAD_PARAM, fn,
                        "reduceTensorDesc");
        tu_assert_fails(query(h, unset_rd, a, c, &bytes), UDNN_STATUS_BAD_PARAM, fn,
                        "reduceTensorDesc", "not been set");
        tu_assert_fails(query(h, rd, NULL, c, &bytes), UDNN_STATUS_BAD_PARAM, fn, "aDesc");
        tu_assert_fails(query(h, rd, unset, c, &bytes), UDNN_STATUS_BAD_PARAM, fn, "aDesc",
                        "not been set");
        tu_assert_fails(query(h, rd, a, NULL, &bytes), UDNN_STATUS_BAD_PARAM, fn, "cDesc");
        tu_assert_fails(query(h, rd, a, unset, &bytes), UDNN_STATUS_BAD_PARAM, fn, "cDesc",
                        "not been set");
        tu_assert_fails(query(h, rd, a, c, NULL), UDNN_STATUS_BAD_PARAM, fn, "sizeInBytes");
        tu_assert_fails(query(h, rd, a, c_bad, &bytes), UDNN_STATUS_BAD_PARAM, fn, "cDesc",
                        "dimension 2 of size 2");
        tu_assert_fails(query(h, rd, a, c_half, &bytes), UDNN_STATUS_BAD_PARAM, fn, "cDesc",
                        "f16");
        tu_assert_fails(query(h, rd, a_dbl, c_dbl, &bytes), UDNN_STATUS_BAD_PARAM, fn,
                        "compType DOUBLE");
        tu_assert_fails(query(h, rd, a_big, c_one, &bytes), UDNN_STATUS_BAD_PARAM, fn,
                        "16-bit indices", "90000 elements");
        udnnTensorDescriptor_t ds[] = {unset, a, c, c_bad, c_half, a_dbl, c_dbl, a_big, c_one};
        for (size_t i = 0; i < sizeof ds / sizeof *ds; i++) udnnDestroyTensorDescriptor(ds[i]);
        udnnDestroyReduceTensorDescriptor(rd);
        udnnDestroyReduceTensorDescriptor(unset_rd);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("reduce");

    TCase *tiny = tcase_create("hand_computed");
    tcase_add_loop_test(tiny, test_reduce_tiny, 0, N_OPS);
    suite_add_tcase(s, tiny);

    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_reduce_op, 0, N_OPS * 4);
    tcase_add_test(ops, test_reduce_in_place);
    suite_add_tcase(s, ops);

    TCase *idx = tcase_create("indices_and_nan");
    tcase_set_timeout(idx, 30);
    tcase_add_loop_test(idx, test_reduce_indices_ties, 0, 3 * 4);
    tcase_add_test(idx, test_reduce_no_indices_untouched);
    tcase_add_loop_test(idx, test_reduce_nan, 0, 3 * 2);
    tcase_add_loop_test(idx, test_reduce_nan_arithmetic, 0, 6 * 2);
    suite_add_tcase(s, idx);

    TCase *val = tcase_create("sizes_and_validation");
    tcase_add_test(val, test_reduction_sizes);
    tcase_add_test(val, test_reduce_rejects);
    tcase_add_test(val, test_reduction_sizes_reject);
    suite_add_tcase(s, val);

    return tu_run_suite(s);
}
