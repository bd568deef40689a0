/* tensor_ops.c - fast SetTensor, ScaleTensor, AddTensor, OpTensor and
 * ConvolutionBackwardBias for FLOAT data in any strides.
 *
 * The element-wise ops walk c in its memory order: c's dims sorted by
 * stride, size-1 dims dropped, and neighbours merged wherever every
 * operand steps evenly across them. Packed tensors of one layout become a
 * single row; a broadcast bias becomes rows of one repeated value (NCHW)
 * or rows that repeat one vector (NHWC, a 1 x n row over an m x n
 * matrix). Rows are cut into segments of SEG elements that OpenMP shares
 * out. A segment runs the arithmetic of cpu/ref/tensor_ops.c, in double,
 * in the same order, so results match the reference to the last bit but
 * for double rounding: packed rows (and a repeated bias) in one loop, other
 * strides through small double buffers holding alpha * operand. OpTensor
 * computes in double whatever its compute type: FLOAT asks for no less.
 * Every element is read before it is written, so c may be a or b (core
 * checks the layouts agree).
 *
 * Backward bias sums each channel of dy in double, one channel per thread. */
#include <math.h>

#include "cpu/fast/fast.h"

#define SEG 1024
/* Below this many elements one thread does it all. */
#define PAR_MIN_ELEMENTS (1 << 16)

/* ---- the loop nest ------------------------------------------------------------------ */

enum { OPERAND_C, OPERAND_A, OPERAND_B, OPERANDS };

/* Dims outermost first; the last one is the row. Operand strides are 0
 * where the operand is broadcast. */
typedef struct {
    int rank;
    int64_t dims[UDNN_DIM_MAX];
    int64_t stride[OPERANDS][UDNN_DIM_MAX];
} loop_nest;

/* The nest over `order`'s dims (sorted by order's strides, outermost
 * first) for up to three operands of order's dims or broadcast to them
 * (NULL: unused). */
static void nest_build(loop_nest *ln, const udnn_tensor *order, const udnn_tensor *ops[OPERANDS])
{
    int idx[UDNN_DIM_MAX], n = 0;
    for (int i = 0; i < order->rank; i++) {
        if (order->dims[i] == 1) continue;
        int j = n++;
        /* insertion by decreasing stride */
        for (; j > 0 && order->strides[idx[j - 1]] < order->strides[i]; j--) idx[j] = idx[j - 1];
        idx[j] = i;
    }
    ln->rank = 0;
    for (int k = 0; k < n; k++) {
        const int i = idx[k];
        int64_t st[OPERANDS];
        for (int o = 0; o < OPERANDS; o++)
            st[o] = ops[o] == NULL || ops[o]->dims[i] == 1 ? 0 : ops[o]->strides[i];
        const int last = ln->rank - 1;
        int merge = last >= 0;
        for (int o = 0; o < OPERANDS && merge; o++)
            merge = ln->stride[o][last] == st[o] * order->dims[i];
        if (merge) {
            ln->dims[last] *= order->dims[i];
            for (int o = 0; o < OPERANDS; o++) ln->stride[o][last] = st[o];
            continue;
        }
        ln->dims[ln->rank] = order->dims[i];
        for (int o = 0; o < OPERANDS; o++) ln->stride[o][ln->rank] = st[o];
        ln->rank++;
    }
    if (ln->rank == 0) { /* a single element */
        ln->rank = 1;
        ln->dims[0] = 1;
        for (int o = 0; o < OPERANDS; o++) ln->stride[o][0] = 0;
    }
}

static int64_t nest_rows(const loop_nest *ln)
{
    int64_t rows = 1;
    for (int i = 0; i < ln->rank - 1; i++) rows *= ln->dims[i];
    return rows;
}

/* The operands' offsets at the start of row r. */
static void row_offsets(const loop_nest *ln, int64_t r, int64_t off[OPERANDS])
{
    for (int o = 0; o < OPERANDS; o++) off[o] = 0;
    for (int i = ln->rank - 2; i >= 0; i--) {
        const int64_t at = r % ln->dims[i];
        r /= ln->dims[i];
        for (int o = 0; o < OPERANDS; o++) off[o] += at * ln->stride[o][i];
    }
}

/* ---- segment kernels ------------------------------------------------------------------ */

/* One segment: len elements from these pointers, these strides. */
typedef struct {
    float *c;
    const float *a, *b;
    int64_t sc, sa, sb, len;
} segment;

/* buf = alpha * src over the segment. */
static void load_scaled(double *buf, const float *src, int64_t step, int64_t len, double alpha)
{
    if (step == 0) {
        const double v = alpha * src[0];
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) buf[i] = v;
    } else if (step == 1) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) buf[i] = alpha * src[i];
    } else {
        for (int64_t i = 0; i < len; i++) buf[i] = alpha * src[i * step];
    }
}

/* c = r + beta * c over the segment, c not read when beta is 0. */
static void store_blend(const segment *s, const double *r, double beta)
{
    float *c = s->c;
    const int64_t step = s->sc, len = s->len;
    if (step == 1 && beta == 0.0) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) c[i] = (float)r[i];
    } else if (step == 1) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) c[i] = (float)(r[i] + beta * c[i]);
    } else if (beta == 0.0) {
        for (int64_t i = 0; i < len; i++) c[i * step] = (float)r[i];
    } else {
        for (int64_t i = 0; i < len; i++) c[i * step] = (float)(r[i] + beta * c[i * step]);
    }
}

static void set_segment(const udnn_tensor_problem *p, const segment *s)
{
    const float v = (float)p->value;
    if (s->sc == 1) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) s->c[i] = v;
    } else {
        for (int64_t i = 0; i < s->len; i++) s->c[i * s->sc] = v;
    }
}

static void scale_segment(const udnn_tensor_problem *p, const segment *s)
{
    const double alpha = p->alpha1;
    if (s->sc == 1) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) s->c[i] = (float)(alpha * s->c[i]);
    } else {
        for (int64_t i = 0; i < s->len; i++) s->c[i * s->sc] = (float)(alpha * s->c[i * s->sc]);
    }
}

static void add_segment(const udnn_tensor_problem *p, const segment *s)
{
    const double alpha = p->alpha1, beta = p->beta;
    float *c = s->c;
    const float *a = s->a;
    /* the common rows, a packed or a repeated value into packed c, in one pass */
    if (s->sc == 1 && s->sa == 1 && beta == 0.0) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) c[i] = (float)(alpha * a[i]);
        return;
    }
    if (s->sc == 1 && s->sa == 1) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) c[i] = (float)(alpha * a[i] + beta * c[i]);
        return;
    }
    if (s->sc == 1 && s->sa == 0 && beta != 0.0) {
        const double v = alpha * a[0];
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) c[i] = (float)(v + beta * c[i]);
        return;
    }
    double r[SEG];
    load_scaled(r, s->a, s->sa, s->len, p->alpha1);
    store_blend(s, r, p->beta);
}

/* MIN and MAX with NaN as the reference: PROPAGATE_NAN gives NaN, else the
 * operand that is a number. */
static void min_max(double *a, const double *b, int64_t len, int is_max, int propagate)
{
    FAST_PRAGMA(omp simd)
    for (int64_t i = 0; i < len; i++) {
        const double x = a[i], y = b[i];
        const double pick = is_max ? (x > y ? x : y) : (x < y ? x : y);
        const double nan_case = propagate ? NAN : (x != x ? y : x);
        a[i] = x != x || y != y ? nan_case : pick;
    }
}

/* ADD over packed rows (SGD's weight decay and momentum), in one pass. */
static int packed_add(const udnn_tensor_problem *p, const segment *s)
{
    if (p->tensor_op != UDNN_OP_TENSOR_ADD || s->sc != 1 || s->sa != 1 || s->sb != 1) return 0;
    const double a1 = p->alpha1, a2 = p->alpha2, beta = p->beta;
    const float *a = s->a, *b = s->b;
    float *c = s->c;
    if (beta == 0.0) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) c[i] = (float)(a1 * a[i] + a2 * b[i]);
    } else {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < s->len; i++) c[i] = (float)(a1 * a[i] + a2 * b[i] + beta * c[i]);
    }
    return 1;
}

static void op_segment(const udnn_tensor_problem *p, const segment *s)
{
    if (packed_add(p, s)) return;
    double a[SEG], b[SEG];
    const int64_t len = s->len;
    load_scaled(a, s->a, s->sa, len, p->alpha1);
    switch (p->tensor_op) {
    case UDNN_OP_TENSOR_SQRT:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) a[i] = sqrt(a[i]);
        break;
    case UDNN_OP_TENSOR_NOT:
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) a[i] = 1.0 - a[i];
        break;
    case UDNN_OP_TENSOR_ADD:
        load_scaled(b, s->b, s->sb, len, p->alpha2);
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) a[i] += b[i];
        break;
    case UDNN_OP_TENSOR_MUL:
        load_scaled(b, s->b, s->sb, len, p->alpha2);
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < len; i++) a[i] *= b[i];
        break;
    case UDNN_OP_TENSOR_MIN:
    case UDNN_OP_TENSOR_MAX:
        load_scaled(b, s->b, s->sb, len, p->alpha2);
        min_max(a, b, len, p->tensor_op == UDNN_OP_TENSOR_MAX,
                p->nan_opt == UDNN_PROPAGATE_NAN);
        break;
    }
    store_blend(s, a, p->beta);
}

typedef void (*segment_fn)(const udnn_tensor_problem *p, const segment *s);

/* Runs fn over every segment of every row of the problem's nest. */
static void for_each_segment(const udnn_tensor_problem *p, const udnn_tensor *a,
                             const udnn_tensor *b, segment_fn fn)
{
    const udnn_tensor *ops[OPERANDS] = {&p->c, a, b};
    loop_nest ln;
    nest_build(&ln, &p->c, ops);
    const int r = ln.rank - 1;
    const int64_t len = ln.dims[r], rows = nest_rows(&ln);
    const int64_t segs = (len + SEG - 1) / SEG, tasks = rows * segs;
    FAST_PRAGMA(omp parallel for if (rows * len >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t t = 0; t < tasks; t++) {
        int64_t off[OPERANDS];
        row_offsets(&ln, t / segs, off);
        const int64_t start = (t % segs) * SEG;
        segment s;
        s.sc = ln.stride[OPERAND_C][r];
        s.sa = ln.stride[OPERAND_A][r];
        s.sb = ln.stride[OPERAND_B][r];
        s.c = (float *)p->c_ptr + off[OPERAND_C] + start * s.sc;
        s.a = a ? (const float *)p->a_ptr + off[OPERAND_A] + start * s.sa : NULL;
        s.b = b ? (const float *)p->b_ptr + off[OPERAND_B] + start * s.sb : NULL;
        s.len = len - start < SEG ? len - start : SEG;
        fn(p, &s);
    }
}

/* ---- the element-wise solvers --------------------------------------------------------- */

static int float_c(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = problem;
    if (p->c.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    return 1;
}

static udnnStatus_t run_set(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    for_each_segment(problem, NULL, NULL, set_segment);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_scale(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    for_each_segment(problem, NULL, NULL, scale_segment);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_add(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    for_each_segment(p, &p->a, NULL, add_segment);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_op(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const int unary = p->tensor_op == UDNN_OP_TENSOR_SQRT || p->tensor_op == UDNN_OP_TENSOR_NOT;
    for_each_segment(p, &p->a, unary ? NULL : &p->b, op_segment);
    return UDNN_STATUS_SUCCESS;
}

/* ---- backward bias ---------------------------------------------------------------------- */

static int bias_applicable(const void *problem, const char **why)
{
    const udnn_conv_bias_problem *p = problem;
    if (p->dy.dtype != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    return 1;
}

/* db = alpha * (sum of dy over n and space) + beta * db, per channel. */
static udnnStatus_t run_bwd_bias(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_conv_bias_problem *p = problem;
    /* dy without its channel dim: the members of one channel */
    udnn_tensor members = p->dy;
    members.dims[1] = 1;
    const udnn_tensor *ops[OPERANDS] = {&members, NULL, NULL};
    loop_nest ln;
    nest_build(&ln, &members, ops);
    const int r = ln.rank - 1;
    const int64_t len = ln.dims[r], rows = nest_rows(&ln), step = ln.stride[OPERAND_C][r];
    const int64_t channels = p->dy.dims[1];
    float *db = p->db_ptr;
    FAST_PRAGMA(omp parallel for if (channels * rows * len >= PAR_MIN_ELEMENTS) schedule(static))
    for (int64_t k = 0; k < channels; k++) {
        const float *dy = (const float *)p->dy_ptr + k * p->dy.strides[1];
        double sum = 0.0;
        for (int64_t row = 0; row < rows; row++) {
            int64_t off[OPERANDS];
            row_offsets(&ln, row, off);
            const float *v = dy + off[OPERAND_C];
            if (step == 1) {
                FAST_PRAGMA(omp simd reduction(+ : sum))
                for (int64_t i = 0; i < len; i++) sum += v[i];
            } else {
                for (int64_t i = 0; i < len; i++) sum += v[i * step];
            }
        }
        float *out = db + k * p->db.strides[1];
        double value = p->alpha * sum;
        if (p->beta != 0.0) value += p->beta * *out;
        *out = (float)value;
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_fast_set_tensor = {
    /* .name = */ "fast_set_tensor",
    /* .op = */ UDNN_OP_SET_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ float_c,
    /* .workspace = */ NULL,
    /* .run = */ run_set,
};

const udnn_solver udnn_cpu_fast_scale_tensor = {
    /* .name = */ "fast_scale_tensor",
    /* .op = */ UDNN_OP_SCALE_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ float_c,
    /* .workspace = */ NULL,
    /* .run = */ run_scale,
};

const udnn_solver udnn_cpu_fast_add_tensor = {
    /* .name = */ "fast_add_tensor",
    /* .op = */ UDNN_OP_ADD_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ float_c,
    /* .workspace = */ NULL,
    /* .run = */ run_add,
};

const udnn_solver udnn_cpu_fast_op_tensor = {
    /* .name = */ "fast_op_tensor",
    /* .op = */ UDNN_OP_OP_TENSOR,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ float_c,
    /* .workspace = */ NULL,
    /* .run = */ run_op,
};

const udnn_solver udnn_cpu_fast_conv_bwd_bias = {
    /* .name = */ "fast_conv_bwd_bias",
    /* .op = */ UDNN_OP_CONV_BWD_BIAS,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ bias_applicable,
    /* .workspace = */ NULL,
    /* .run = */ run_bwd_bias,
};
