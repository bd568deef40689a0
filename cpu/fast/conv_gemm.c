/* conv_gemm.c - convolution as matrix products: im2col, the SGEMM of
 * gemm.c, col2im. FLOAT data in packed NCHW or NHWC, every geometry.
 *
 * For image n and group g, with P = (C/g) * taps (taps = t * r * s) and Q
 * the output positions, the column matrix col (P x Q) holds at (p, q)
 * the input element that output q reads through filter element p (0 in
 * the padding). Then
 *     forward          y[k][q]  = sum_p  W[k][p] col[p][q]
 *     backward data    col[p][q] = sum_k W[k][p] dy[k][q], dx += col2im(col)
 *     backward filter  dW[k][p] += sum_q dy[k][q] col[p][q]
 * col is stored p-major (p = (c, tap)) when x is NCHW and q-major (p =
 * (tap, c)) when x is NHWC, so that im2col and col2im move contiguous
 * runs of x either way; the GEMM takes any strides and picks its own
 * orientation. W is first packed into a K x P matrix in that same order
 * of p, with the flip of CONVOLUTION mode applied. im2col reads, and
 * col2im adds into, a copy of the image's group with its zero padding
 * made real, so that their loops are plain copies of output rows.
 *
 * Work and memory: images are shared among the threads through
 * "slots", each a column buffer, a padded image (and, for backward
 * filter, a partial dW, which image n adds to in slot n % slots) in the
 * workspace. With at least as many slots as threads each thread runs
 * whole images in a slot of its own, with no barrier between images (a
 * barrier costs dearly when other processes share the cores); with fewer
 * (fewer images than threads) all threads run each image together (im2col
 * rows, GEMM tiles, col2im channels shared out, barriers between phases).
 * Large images are cut into blocks of output positions so that a column
 * buffer stays bounded. The workspace does not depend on the thread
 * count, and neither do the results: each partial dW sums its images in
 * order and the partials are added in slot order. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "backends/ref/act.h"
#include "cpu/fast/fast.h"
#include "cpu/fast/gemm.h"

/* A column buffer holds at most COL_BUDGET floats (unless one block of
 * MIN_QBLOCK outputs needs more); at most MAX_SLOTS slots, fewer when
 * they would take more than SLOTS_BUDGET floats. */
#define COL_BUDGET (1 << 18)
#define MIN_QBLOCK 64
#define MAX_SLOTS 16
#define SLOTS_BUDGET (1 << 24)
#define ALIGN_FLOATS 16          /* workspace regions start on 64-byte lines */
#define PACK_ALONE_MAX (1 << 16) /* weights one thread packs before the threads start */

typedef struct {
    int64_t n, c, k, groups, cg, kg;
    int64_t in[3], out[3], f[3];
    int64_t pad[3], stride[3], dil[3];
    int64_t taps, p, q; /* filter taps, GEMM depth, output positions */
    int channels_last;  /* x is NHWC: col is q-major */
    int flip;
    int64_t xs_n, xs_c, xs_sp; /* x strides: image, channel, spatial position */
    int64_t ys_n, ys_c, ys_sp;
    /* the padded copy of one group of an image: extents, positions, and
     * strides of a channel and of d, h, w (channels first when x is NCHW,
     * last when NHWC) */
    int64_t padded[3], plane, pc, ps[3];
    int64_t qblock, slots;
    /* workspace: packed W, then per slot col, padded image, partial dW */
    int64_t w_floats, col_floats, pad_floats, partial_floats, slot_floats;
} conv_geom;

/* ---- layouts ---------------------------------------------------------------- */

enum { LAYOUT_NONE, LAYOUT_NCHW, LAYOUT_NHWC };

/* Whether t (n, c, d, h, w) is packed NCHW or NHWC, ignoring the strides
 * of dims of size 1; NCHW when both fit. Gives the strides of image,
 * channel and flattened spatial position. */
static int packed_layout(const udnn_tensor *t, int64_t *sn, int64_t *sc, int64_t *ssp)
{
    const int64_t *d = t->dims, c = d[1], hw = d[3] * d[4], sp = d[2] * hw;
    const int64_t nchw[5] = {c * sp, sp, hw, d[4], 1};
    const int64_t nhwc[5] = {c * sp, 1, hw * c, d[4] * c, c};
    int is_nchw = 1, is_nhwc = 1;
    for (int i = 0; i < 5; i++) {
        if (d[i] == 1) continue;
        is_nchw &= t->strides[i] == nchw[i];
        is_nhwc &= t->strides[i] == nhwc[i];
    }
    *sn = c * sp;
    if (is_nchw) {
        *sc = sp;
        *ssp = 1;
        return LAYOUT_NCHW;
    }
    *sc = 1;
    *ssp = c;
    return is_nhwc ? LAYOUT_NHWC : LAYOUT_NONE;
}

static int64_t round_up(int64_t v, int64_t to)
{
    return (v + to - 1) / to * to;
}

/* Fills G for problem p of op; 0 (with *why) when the solver cannot run it. */
static int geom_init(const udnn_conv_problem *p, udnn_op op, conv_geom *G, const char **why)
{
    const int ok_types = p->x.dtype == UDNN_DATA_FLOAT && p->w.dtype == UDNN_DATA_FLOAT &&
                         p->y.dtype == UDNN_DATA_FLOAT &&
                         (op != UDNN_OP_CONV_BIAS_ACT ||
                          (p->z.dtype == UDNN_DATA_FLOAT && p->bias.dtype == UDNN_DATA_FLOAT));
    if (!ok_types || p->compute_type != UDNN_DATA_FLOAT) {
        *why = "data type is not FLOAT";
        return 0;
    }
    const int xl = packed_layout(&p->x, &G->xs_n, &G->xs_c, &G->xs_sp);
    const int yl = packed_layout(&p->y, &G->ys_n, &G->ys_c, &G->ys_sp);
    if (xl == LAYOUT_NONE || yl == LAYOUT_NONE) {
        *why = "x and y are not each packed NCHW or NHWC";
        return 0;
    }
    G->n = p->x.dims[0];
    G->c = p->x.dims[1];
    G->k = p->y.dims[1];
    G->groups = p->groups;
    G->cg = G->c / G->groups;
    G->kg = G->k / G->groups;
    G->taps = 1;
    G->q = 1;
    for (int j = 0; j < 3; j++) {
        G->in[j] = p->x.dims[2 + j];
        G->out[j] = p->y.dims[2 + j];
        G->f[j] = p->w.dims[2 + j];
        G->pad[j] = p->pad[j];
        G->stride[j] = p->stride[j];
        G->dil[j] = p->dilation[j];
        G->taps *= G->f[j];
        G->q *= G->out[j];
    }
    G->p = G->cg * G->taps;
    G->channels_last = xl == LAYOUT_NHWC;
    G->flip = p->mode == UDNN_CONVOLUTION;

    G->plane = 1;
    for (int j = 0; j < 3; j++) {
        G->padded[j] = G->in[j] + 2 * G->pad[j];
        G->plane *= G->padded[j];
    }
    const int64_t unit = G->channels_last ? G->cg : 1; /* stride of w */
    G->ps[2] = unit;
    G->ps[1] = unit * G->padded[2];
    G->ps[0] = G->ps[1] * G->padded[1];
    G->pc = G->channels_last ? 1 : G->plane;

    int64_t qblock = COL_BUDGET / G->p;
    if (qblock < MIN_QBLOCK) qblock = MIN_QBLOCK;
    G->qblock = qblock < G->q ? qblock : G->q;
    G->w_floats = op == UDNN_OP_CONV_BWD_FILTER ? 0 : round_up(G->k * G->p, ALIGN_FLOATS);
    G->col_floats = round_up(G->p * G->qblock, ALIGN_FLOATS);
    G->pad_floats = round_up(G->cg * G->plane, ALIGN_FLOATS);
    G->partial_floats = op == UDNN_OP_CONV_BWD_FILTER ? round_up(G->k * G->p, ALIGN_FLOATS) : 0;
    G->slot_floats = G->col_floats + G->pad_floats + G->partial_floats;
    G->slots = G->n < MAX_SLOTS ? G->n : MAX_SLOTS;
    while (G->slots > 1 && G->slots * G->slot_floats > SLOTS_BUDGET) G->slots--;
    return 1;
}

/* Index of filter element (c, tap) along the GEMM depth. */
static int64_t depth_index(const conv_geom *G, int64_t c, int64_t tap)
{
    return G->channels_last ? tap * G->cg + c : c * G->taps + tap;
}

/* The tap of the filter's storage that sampling tap `tap` multiplies. */
static int64_t stored_tap(const conv_geom *G, int64_t tap)
{
    return G->flip ? G->taps - 1 - tap : tap;
}

/* Offset in the filter tensor of (k, c, tap), tap = (t * r + r') * s + s'. */
static int64_t filter_offset(const udnn_tensor *w, int64_t k, int64_t c, int64_t tap)
{
    const int64_t s = tap % w->dims[4], r = tap / w->dims[4] % w->dims[3];
    const int64_t t = tap / (w->dims[4] * w->dims[3]);
    return ref_off5(w, k, c, t, r, s);
}

/* ---- work sharing --------------------------------------------------------------- */

/* The threads running one image together: this one is `part` of `parts`. */
typedef struct {
    int part, parts;
} team;

static void team_share(const team *tm, int64_t count, int64_t *lo, int64_t *hi)
{
    *lo = count * tm->part / tm->parts;
    *hi = count * (tm->part + 1) / tm->parts;
}

static void team_sync(const team *tm)
{
#ifdef _OPENMP
    if (tm->parts > 1) {
        FAST_PRAGMA(omp barrier)
    }
#else
    (void)tm;
#endif
}

typedef struct {
    const udnn_conv_problem *p;
    udnn_op op;
    conv_geom G;
    float *wk;    /* the packed K x P weights */
    float *slots; /* slot s at slots + s * G.slot_floats */
} conv_job;

static float *slot_col(const conv_job *j, int64_t slot)
{
    return j->slots + slot * j->G.slot_floats;
}

static float *slot_padded(const conv_job *j, int64_t slot)
{
    return slot_col(j, slot) + j->G.col_floats;
}

static float *slot_partial(const conv_job *j, int64_t slot)
{
    return slot_padded(j, slot) + j->G.pad_floats;
}

typedef void (*image_fn)(const conv_job *j, int64_t n, int64_t slot, const team *tm);

/* Runs image() on every image, by slots or by teams (see the top); every
 * thread of the op's parallel region calls it. By slots, images go to
 * whichever thread is free, so that a thread slowed by another process on
 * its core holds the others up less; a backward filter image must stay in
 * its slot (n % slots, in order, for the sums' order), so there whole
 * slots are handed out instead. */
static void run_images(const conv_job *j, image_fn image)
{
    const int64_t N = j->G.n, S = j->G.slots;
    const team alone = {0, 1};
#ifdef _OPENMP
    const int tid = omp_get_thread_num(), nth = omp_get_num_threads();
    const team all = {tid, nth};
    if (S < nth) {
        for (int64_t n = 0; n < N; n++) image(j, n, n % S, &all);
    } else if (j->op == UDNN_OP_CONV_BWD_FILTER) {
        FAST_PRAGMA(omp for schedule(dynamic, 1) nowait)
        for (int64_t s = 0; s < S; s++)
            for (int64_t n = s; n < N; n += S) image(j, n, s, &alone);
    } else {
        FAST_PRAGMA(omp for schedule(dynamic, 1) nowait)
        for (int64_t n = 0; n < N; n++) image(j, n, tid, &alone);
    }
#else
    for (int64_t n = 0; n < N; n++) image(j, n, n % S, &alone);
#endif
}

/* ---- padded images, im2col and col2im -------------------------------------------------- */

/* The runs these loops move are short (an output row, a group's channels),
 * so they stay inline: GCC would otherwise turn them into library calls. */
#if defined(__GNUC__) && !defined(__clang__)
#define INLINE_RUNS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define INLINE_RUNS
#endif

static INLINE_RUNS inline void zero_run(float *d, int64_t n)
{
    FAST_PRAGMA(omp simd)
    for (int64_t i = 0; i < n; i++) d[i] = 0.0f;
}

static INLINE_RUNS inline void copy_run(float *restrict d, const float *restrict s, int64_t n)
{
    FAST_PRAGMA(omp simd)
    for (int64_t i = 0; i < n; i++) d[i] = s[i];
}

static INLINE_RUNS inline void add_run(float *restrict d, const float *restrict s, int64_t n)
{
    FAST_PRAGMA(omp simd)
    for (int64_t i = 0; i < n; i++) d[i] += s[i];
}

/* d = s + beta * d (d not read when beta is 0). */
static INLINE_RUNS inline void blend_run(float *restrict d, const float *restrict s, int64_t n,
                                         float beta)
{
    if (beta == 0.0f) {
        copy_run(d, s, n);
        return;
    }
    FAST_PRAGMA(omp simd)
    for (int64_t i = 0; i < n; i++) d[i] = s[i] + beta * d[i];
}

/* Whether row (d, h) of the padded image holds input, not padding. */
static int row_inside(const conv_geom *G, int64_t dp, int64_t hp)
{
    const int64_t id = dp - G->pad[0], ih = hp - G->pad[1];
    return id >= 0 && id < G->in[0] && ih >= 0 && ih < G->in[1];
}

/* Offset in x (or dx) of image n, channel c, input row (dp, hp) of the
 * padded image. */
static int64_t x_row(const conv_geom *G, int64_t n, int64_t c, int64_t dp, int64_t hp)
{
    return n * G->xs_n + c * G->xs_c +
           ((dp - G->pad[0]) * G->in[1] + hp - G->pad[1]) * G->in[2] * G->xs_sp;
}

/* Copies group g of image n of x into the padded buffer: channel-major
 * channels [c0, c1) of the group for x NCHW; padded rows [c0, c1) (of
 * d x h) for x NHWC. */
static INLINE_RUNS void pad_image(const conv_geom *G, const float *x, int64_t n, int64_t g,
                                  float *xp, int64_t c0, int64_t c1)
{
    const int64_t w = G->in[2], pw = G->pad[2], wp = G->padded[2], cg = G->cg;
    if (!G->channels_last) {
        for (int64_t c = c0; c < c1; c++)
            for (int64_t dp = 0; dp < G->padded[0]; dp++)
                for (int64_t hp = 0; hp < G->padded[1]; hp++) {
                    float *d = xp + c * G->pc + dp * G->ps[0] + hp * G->ps[1];
                    if (!row_inside(G, dp, hp)) {
                        zero_run(d, wp);
                        continue;
                    }
                    zero_run(d, pw);
                    copy_run(d + pw, x + x_row(G, n, g * cg + c, dp, hp), w);
                    zero_run(d + pw + w, wp - pw - w);
                }
        return;
    }
    for (int64_t row = c0; row < c1; row++) {
        const int64_t dp = row / G->padded[1], hp = row % G->padded[1];
        float *d = xp + dp * G->ps[0] + hp * G->ps[1];
        if (!row_inside(G, dp, hp)) {
            zero_run(d, wp * cg);
            continue;
        }
        const float *s = x + x_row(G, n, g * cg, dp, hp);
        zero_run(d, pw * cg);
        for (int64_t iw = 0; iw < w; iw++) copy_run(d + (pw + iw) * cg, s + iw * G->xs_sp, cg);
        zero_run(d + (pw + w) * cg, (wp - pw - w) * cg);
    }
}

/* The units pad_image shares out: channels, or padded rows. */
static int64_t pad_units(const conv_geom *G)
{
    return G->channels_last ? G->padded[0] * G->padded[1] : G->cg;
}

/* dx = padded + beta * dx over the same units as pad_image: the end of a
 * group of a backward-data image. */
static INLINE_RUNS void crop_image(const conv_geom *G, const float *xp, float *dx, int64_t n,
                                   int64_t g, int64_t c0, int64_t c1, float beta)
{
    const int64_t w = G->in[2], pw = G->pad[2], cg = G->cg;
    if (!G->channels_last) {
        for (int64_t c = c0; c < c1; c++)
            for (int64_t dp = G->pad[0]; dp < G->pad[0] + G->in[0]; dp++)
                for (int64_t hp = G->pad[1]; hp < G->pad[1] + G->in[1]; hp++)
                    blend_run(dx + x_row(G, n, g * cg + c, dp, hp),
                              xp + c * G->pc + dp * G->ps[0] + hp * G->ps[1] + pw, w, beta);
        return;
    }
    for (int64_t row = c0; row < c1; row++) {
        const int64_t dp = row / G->padded[1], hp = row % G->padded[1];
        if (!row_inside(G, dp, hp)) continue;
        float *d = dx + x_row(G, n, g * cg, dp, hp);
        const float *s = xp + dp * G->ps[0] + hp * G->ps[1] + pw * cg;
        for (int64_t iw = 0; iw < w; iw++) blend_run(d + iw * G->xs_sp, s + iw * cg, cg, beta);
    }
}

/* The outputs [q0, q0 + qn) cut into runs along one output row: the run
 * starting `done` outputs in covers `len` outputs from (od, oh, ow). */
typedef struct {
    int64_t done, len, od, oh, ow;
} out_run;

static void run_first(const conv_geom *G, int64_t q0, int64_t qn, out_run *r)
{
    r->done = 0;
    r->ow = q0 % G->out[2];
    r->oh = q0 / G->out[2] % G->out[1];
    r->od = q0 / (G->out[2] * G->out[1]);
    r->len = G->out[2] - r->ow < qn ? G->out[2] - r->ow : qn;
}

static int run_next(const conv_geom *G, int64_t qn, out_run *r)
{
    r->done += r->len;
    if (r->done >= qn) return 0;
    r->ow = 0;
    if (++r->oh == G->out[1]) r->oh = 0, r->od++;
    r->len = G->out[2] < qn - r->done ? G->out[2] : qn - r->done;
    return 1;
}

/* Offset in the padded image of the input that output (od, oh, ow)
 * reads through filter indices (t, r, s). */
static int64_t padded_at(const conv_geom *G, int64_t od, int64_t oh, int64_t ow, int64_t t,
                         int64_t r, int64_t s)
{
    return (od * G->stride[0] + t * G->dil[0]) * G->ps[0] +
           (oh * G->stride[1] + r * G->dil[1]) * G->ps[1] +
           (ow * G->stride[2] + s * G->dil[2]) * G->ps[2];
}

/* Filter indices (t, r, s) of a tap. */
static void tap_split(const conv_geom *G, int64_t tap, int64_t f[3])
{
    f[2] = tap % G->f[2];
    f[1] = tap / G->f[2] % G->f[1];
    f[0] = tap / (G->f[2] * G->f[1]);
}

/* p-major rows [r0, r1) for outputs [q0, q0 + qn): row p = (c, tap). A
 * block of whole images (the rule) walks its output rows by pointer. */
static INLINE_RUNS void im2col_p_major(const conv_geom *G, const float *xp, int64_t q0, int64_t qn,
                                       float *col, int64_t r0, int64_t r1)
{
    const int64_t st = G->stride[2], ow_n = G->out[2];
    const int64_t step_d = G->stride[0] * G->ps[0], step_h = G->stride[1] * G->ps[1];
    for (int64_t row = r0; row < r1; row++) {
        int64_t f[3];
        tap_split(G, row % G->taps, f);
        const float *xc = xp + row / G->taps * G->pc;
        float *d = col + row * qn;
        if (qn == G->q && st == 1) {
            const float *sd = xc + padded_at(G, 0, 0, 0, f[0], f[1], f[2]);
            for (int64_t od = 0; od < G->out[0]; od++, sd += step_d) {
                const float *sh = sd;
                for (int64_t oh = 0; oh < G->out[1]; oh++, sh += step_h, d += ow_n)
                    copy_run(d, sh, ow_n);
            }
            continue;
        }
        out_run r;
        run_first(G, q0, qn, &r);
        do {
            const float *src = xc + padded_at(G, r.od, r.oh, r.ow, f[0], f[1], f[2]);
            for (int64_t i = 0; i < r.len; i++) d[r.done + i] = src[i * st];
        } while (run_next(G, qn, &r));
    }
}

/* Adds p-major col into channels [c0, c1) of the padded image: the
 * mirror of im2col_p_major. */
static INLINE_RUNS void col2im_p_major(const conv_geom *G, const float *col, int64_t q0, int64_t qn,
                                       float *xp, int64_t c0, int64_t c1)
{
    const int64_t st = G->stride[2], ow_n = G->out[2];
    const int64_t step_d = G->stride[0] * G->ps[0], step_h = G->stride[1] * G->ps[1];
    for (int64_t row = c0 * G->taps; row < c1 * G->taps; row++) {
        int64_t f[3];
        tap_split(G, row % G->taps, f);
        float *xc = xp + row / G->taps * G->pc;
        const float *s = col + row * qn;
        if (qn == G->q && st == 1) {
            float *dd = xc + padded_at(G, 0, 0, 0, f[0], f[1], f[2]);
            for (int64_t od = 0; od < G->out[0]; od++, dd += step_d) {
                float *dh = dd;
                for (int64_t oh = 0; oh < G->out[1]; oh++, dh += step_h, s += ow_n)
                    add_run(dh, s, ow_n);
            }
            continue;
        }
        out_run r;
        run_first(G, q0, qn, &r);
        do {
            float *d = xc + padded_at(G, r.od, r.oh, r.ow, f[0], f[1], f[2]);
            for (int64_t i = 0; i < r.len; i++) d[i * st] += s[r.done + i];
        } while (run_next(G, qn, &r));
    }
}

/* Runs body for every output row [r0, r1) (outputs q0 + row) of a q-major
 * column buffer and every (t, r) of the filter, with `at` the padded
 * image's offset of the input at filter (t, r, 0) and `tap` that tap. */
#define FOR_EACH_ROW_AND_TR(G, q0, r0, r1, row, tap, at, body)                                     \
    for (int64_t row = (r0); row < (r1); row++) {                                                  \
        const int64_t q_ = (q0) + row, ow_ = q_ % (G)->out[2];                                     \
        const int64_t oh_ = q_ / (G)->out[2] % (G)->out[1];                                        \
        const int64_t od_ = q_ / ((G)->out[2] * (G)->out[1]);                                      \
        for (int64_t t_ = 0; t_ < (G)->f[0]; t_++)                                                 \
            for (int64_t r_ = 0; r_ < (G)->f[1]; r_++) {                                           \
                const int64_t tap = (t_ * (G)->f[1] + r_) * (G)->f[2];                             \
                const int64_t at = padded_at(G, od_, oh_, ow_, t_, r_, 0);                         \
                body;                                                                              \
            }                                                                                      \
    }

/* q-major rows [r0, r1) (outputs q0 + r0 ...): row q holds, per tap, the
 * group's channels; with no dilation along w, the taps of one (t, r) are
 * one run of the padded NHWC image. */
static INLINE_RUNS void im2col_q_major(const conv_geom *G, const float *xp, int64_t q0, float *col,
                                       int64_t r0, int64_t r1)
{
    const int64_t cg = G->cg, s_n = G->f[2], step = G->dil[2] * cg;
    FOR_EACH_ROW_AND_TR(G, q0, r0, r1, row, tap, at, {
        float *d = col + row * G->p + tap * cg;
        if (step == cg)
            copy_run(d, xp + at, s_n * cg);
        else
            for (int64_t s = 0; s < s_n; s++) copy_run(d + s * cg, xp + at + s * step, cg);
    });
}

/* Adds q-major col into channels [c0, c1) of the padded NHWC image. */
static INLINE_RUNS void col2im_q_major(const conv_geom *G, const float *col, int64_t q0, int64_t qn,
                                       float *xp, int64_t c0, int64_t c1)
{
    const int64_t cg = G->cg, s_n = G->f[2], step = G->dil[2] * cg;
    FOR_EACH_ROW_AND_TR(G, q0, 0, qn, row, tap, at, {
        const float *src = col + row * G->p + tap * cg + c0;
        for (int64_t s = 0; s < s_n; s++) add_run(xp + at + s * step + c0, src + s * cg, c1 - c0);
    });
}

/* The rows of the column buffer (p-major: P, q-major: the block's qn). */
static int64_t col_rows(const conv_geom *G, int64_t qn)
{
    return G->channels_last ? qn : G->p;
}

static void im2col(const conv_geom *G, const float *xp, int64_t q0, int64_t qn, float *col,
                   const team *tm)
{
    int64_t lo, hi;
    team_share(tm, col_rows(G, qn), &lo, &hi);
    if (G->channels_last)
        im2col_q_major(G, xp, q0, col, lo, hi);
    else
        im2col_p_major(G, xp, q0, qn, col, lo, hi);
}

/* ---- the GEMMs ------------------------------------------------------------------------ */

/* The column buffer of a block of qn outputs as the matrix (p, q). */
static udnn_gemm_in col_as_pq(const conv_geom *G, const float *col, int64_t qn)
{
    udnn_gemm_in m = {col, G->channels_last ? 1 : qn, G->channels_last ? G->p : 1};
    return m;
}

/* The same buffer as (q, p). */
static udnn_gemm_in col_as_qp(const conv_geom *G, const float *col, int64_t qn)
{
    udnn_gemm_in m = col_as_pq(G, col, qn);
    udnn_gemm_in t = {m.p, m.cs, m.rs};
    return t;
}

static void gemm_share(const udnn_gemm_args *g, const team *tm)
{
    udnn_gemm_plan plan;
    udnn_sgemm_plan(g, &plan);
    udnn_sgemm_run_part(&plan, tm->part, tm->parts);
}

/* Packs W (k, c, taps) into wk[k][depth_index(c, tap)], flipped in
 * CONVOLUTION mode: rows [k0, k1). */
static void pack_weights(const conv_job *j, int64_t k0, int64_t k1)
{
    const conv_geom *G = &j->G;
    const float *w = j->p->w_ptr;
    for (int64_t k = k0; k < k1; k++)
        for (int64_t c = 0; c < G->cg; c++)
            for (int64_t tap = 0; tap < G->taps; tap++)
                j->wk[k * G->p + depth_index(G, c, tap)] =
                    w[filter_offset(&j->p->w, k, c, stored_tap(G, tap))];
}

/* v = act(v) over a run, plain loops for the activations the fused op
 * meets most, else through the reference's definition. */
static void activate_run(const udnn_act_params *act, float *v, int64_t n)
{
    if (act->mode == UDNN_ACTIVATION_IDENTITY) return;
    if (act->mode == UDNN_ACTIVATION_RELU && act->nan_opt != UDNN_PROPAGATE_NAN) {
        FAST_PRAGMA(omp simd)
        for (int64_t i = 0; i < n; i++) v[i] = v[i] > 0.0f ? v[i] : 0.0f;
        return;
    }
    for (int64_t i = 0; i < n; i++) v[i] = (float)udnn_ref_act(act, v[i]);
}

/* z's element (n, k, q) for q the flattened output position. */
static float z_at(const udnn_conv_problem *p, const conv_geom *G, int64_t n, int64_t k, int64_t q)
{
    const int64_t ow = q % G->out[2], oh = q / G->out[2] % G->out[1];
    const int64_t od = q / (G->out[2] * G->out[1]);
    return ((const float *)p->z_ptr)[ref_off5(&p->z, n, k, od, oh, ow)];
}

/* y = act(y + alpha2 * z + bias) over output channels [k0, k1) of image
 * n: the end of a conv-bias-activation image (alpha * conv, and alpha2 *
 * z when z is y, are already in y). Walks y in its own order: channel
 * rows for NCHW, position rows for NHWC. */
static void bias_act_rows(const conv_job *j, int64_t n, int64_t k0, int64_t k1)
{
    const udnn_conv_problem *p = j->p;
    const conv_geom *G = &j->G;
    const int add_z = p->alpha2 != 0.0 && p->z_ptr != p->out_ptr;
    const float alpha2 = (float)p->alpha2;
    const float *bias = p->bias_ptr;
    const int64_t bs = p->bias.strides[1];
    float *yn = (float *)p->out_ptr + n * G->ys_n;
    if (G->ys_sp == 1) {
        for (int64_t k = k0; k < k1; k++) {
            float *y = yn + k * G->ys_c;
            const float b = bias[k * bs];
            FAST_PRAGMA(omp simd)
            for (int64_t q = 0; q < G->q; q++) y[q] += b;
            if (add_z)
                for (int64_t q = 0; q < G->q; q++) y[q] += alpha2 * z_at(p, G, n, k, q);
            activate_run(&p->act, y, G->q);
        }
        return;
    }
    for (int64_t q = 0; q < G->q; q++) {
        float *y = yn + q * G->ys_sp;
        FAST_PRAGMA(omp simd)
        for (int64_t k = k0; k < k1; k++) y[k] += bias[k * bs];
        if (add_z)
            for (int64_t k = k0; k < k1; k++) y[k] += alpha2 * z_at(p, G, n, k, q);
        activate_run(&p->act, y + k0, k1 - k0);
    }
}

/* Group g of image n into the slot's padded buffer, shared by the team. */
static void pad_group(const conv_job *j, int64_t n, int64_t g, float *xp, const team *tm)
{
    int64_t lo, hi;
    team_share(tm, pad_units(&j->G), &lo, &hi);
    pad_image(&j->G, j->p->x_ptr, n, g, xp, lo, hi);
    team_sync(tm);
}

/* Forward (and conv-bias-activation) of one image. */
static void fwd_image(const conv_job *j, int64_t n, int64_t slot, const team *tm)
{
    const udnn_conv_problem *p = j->p;
    const conv_geom *G = &j->G;
    const int fused = j->op == UDNN_OP_CONV_BIAS_ACT;
    float *col = slot_col(j, slot), *xp = slot_padded(j, slot);
    udnn_gemm_args a;
    a.m = G->kg;
    a.k = G->p;
    a.alpha = (float)p->alpha;
    a.beta = !fused ? (float)p->beta : p->z_ptr == p->out_ptr ? (float)p->alpha2 : 0.0f;
    a.c_rs = G->ys_c;
    a.c_cs = G->ys_sp;
    for (int64_t g = 0; g < G->groups; g++) {
        pad_group(j, n, g, xp, tm);
        for (int64_t q0 = 0; q0 < G->q; q0 += G->qblock) {
            const int64_t qn = G->q - q0 < G->qblock ? G->q - q0 : G->qblock;
            im2col(G, xp, q0, qn, col, tm);
            team_sync(tm);
            a.n = qn;
            a.a.p = j->wk + g * G->kg * G->p;
            a.a.rs = G->p;
            a.a.cs = 1;
            a.b = col_as_pq(G, col, qn);
            a.c = (float *)p->out_ptr + n * G->ys_n + g * G->kg * G->ys_c + q0 * G->ys_sp;
            gemm_share(&a, tm);
            team_sync(tm);
        }
    }
    if (fused) {
        int64_t lo, hi;
        team_share(tm, G->k, &lo, &hi);
        bias_act_rows(j, n, lo, hi);
    }
}

/* Backward data of one image: per group, col = W^T dy per block of
 * outputs, added into the zeroed padded buffer, which then blends into dx. */
static void bwd_data_image(const conv_job *j, int64_t n, int64_t slot, const team *tm)
{
    const udnn_conv_problem *p = j->p;
    const conv_geom *G = &j->G;
    float *col = slot_col(j, slot), *xp = slot_padded(j, slot);
    udnn_gemm_args a;
    a.m = G->p;
    a.k = G->kg;
    a.alpha = (float)p->alpha;
    a.beta = 0.0f;
    a.c = col;
    int64_t lo, hi;
    for (int64_t g = 0; g < G->groups; g++) {
        team_share(tm, G->cg, &lo, &hi); /* channels */
        if (G->channels_last)
            for (int64_t pos = 0; pos < G->plane; pos++) zero_run(xp + pos * G->cg + lo, hi - lo);
        else
            zero_run(xp + lo * G->pc, (hi - lo) * G->pc);
        for (int64_t q0 = 0; q0 < G->q; q0 += G->qblock) {
            const int64_t qn = G->q - q0 < G->qblock ? G->q - q0 : G->qblock;
            const udnn_gemm_in cm = col_as_pq(G, col, qn);
            a.n = qn;
            a.a.p = j->wk + g * G->kg * G->p; /* W^T: (p, k) */
            a.a.rs = 1;
            a.a.cs = G->p;
            a.b.p = (const float *)p->y_ptr + n * G->ys_n + g * G->kg * G->ys_c + q0 * G->ys_sp;
            a.b.rs = G->ys_c;
            a.b.cs = G->ys_sp;
            a.c_rs = cm.rs;
            a.c_cs = cm.cs;
            gemm_share(&a, tm);
            team_sync(tm);
            if (G->channels_last)
                col2im_q_major(G, col, q0, qn, xp, lo, hi);
            else
                col2im_p_major(G, col, q0, qn, xp, lo, hi);
            team_sync(tm);
        }
        team_share(tm, pad_units(G), &lo, &hi);
        crop_image(G, xp, p->out_ptr, n, g, lo, hi, (float)p->beta);
        team_sync(tm);
    }
}

/* Backward filter of one image: adds dy col^T into the slot's partial dW
 * (K x P); the slot's first image overwrites it. */
static void bwd_filter_image(const conv_job *j, int64_t n, int64_t slot, const team *tm)
{
    const udnn_conv_problem *p = j->p;
    const conv_geom *G = &j->G;
    float *col = slot_col(j, slot), *xp = slot_padded(j, slot);
    float *partial = slot_partial(j, slot);
    udnn_gemm_args a;
    a.m = G->kg;
    a.n = G->p;
    a.alpha = 1.0f;
    a.c_rs = G->p;
    a.c_cs = 1;
    for (int64_t g = 0; g < G->groups; g++) {
        pad_group(j, n, g, xp, tm);
        for (int64_t q0 = 0; q0 < G->q; q0 += G->qblock) {
            const int64_t qn = G->q - q0 < G->qblock ? G->q - q0 : G->qblock;
            im2col(G, xp, q0, qn, col, tm);
            team_sync(tm);
            a.k = qn;
            a.beta = n == slot && q0 == 0 ? 0.0f : 1.0f;
            a.a.p = (const float *)p->y_ptr + n * G->ys_n + g * G->kg * G->ys_c + q0 * G->ys_sp;
            a.a.rs = G->ys_c;
            a.a.cs = G->ys_sp;
            a.b = col_as_qp(G, col, qn);
            a.c = partial + g * G->kg * G->p;
            gemm_share(&a, tm);
            team_sync(tm);
        }
    }
}

/* dw = alpha * (sum of the partials, in slot order) + beta * dw; shared
 * among the threads of the op's region. */
static void reduce_partials(const conv_job *j)
{
    const udnn_conv_problem *p = j->p;
    const conv_geom *G = &j->G;
    float *dw = p->out_ptr;
    const float alpha = (float)p->alpha, beta = (float)p->beta;
    FAST_PRAGMA(omp for schedule(static) nowait)
    for (int64_t k = 0; k < G->k; k++)
        for (int64_t c = 0; c < G->cg; c++)
            for (int64_t tap = 0; tap < G->taps; tap++) {
                const int64_t at = k * G->p + depth_index(G, c, stored_tap(G, tap));
                float sum = 0.0f;
                for (int64_t s = 0; s < G->slots; s++) sum += slot_partial(j, s)[at];
                float *e = dw + filter_offset(&p->w, k, c, tap);
                *e = beta == 0.0f ? alpha * sum : alpha * sum + beta * *e;
            }
}

/* ---- the solvers ---------------------------------------------------------------------- */

static size_t workspace_bytes(const conv_geom *G)
{
    /* slack to align the caller's pointer to a 64-byte line */
    return (size_t)(G->w_floats + G->slots * G->slot_floats) * sizeof(float) + 64;
}

static udnnStatus_t run_op(udnn_op op, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ws_bytes;
    const char *why;
    conv_job j;
    j.p = problem;
    j.op = op;
    geom_init(j.p, op, &j.G, &why);
    float *base = (float *)(((uintptr_t)ws + 63) & ~(uintptr_t)63);
    j.wk = base;
    j.slots = base + j.G.w_floats;
    const image_fn image = op == UDNN_OP_CONV_BWD_FILTER ? bwd_filter_image
                           : op == UDNN_OP_CONV_BWD_DATA ? bwd_data_image
                                                         : fwd_image;
    /* One parallel region per call, and as few barriers in it as can be:
     * when other processes share the cores, each is a chance to wait for
     * a thread that has lost its core. Small weights are packed before. */
    const int pack_inside = op != UDNN_OP_CONV_BWD_FILTER && j.G.k * j.G.p > PACK_ALONE_MAX;
    if (op != UDNN_OP_CONV_BWD_FILTER && !pack_inside) pack_weights(&j, 0, j.G.k);
    FAST_PRAGMA(omp parallel)
    {
        if (pack_inside) {
            FAST_PRAGMA(omp for schedule(static))
            for (int64_t k = 0; k < j.G.k; k++) pack_weights(&j, k, k + 1);
        }
        run_images(&j, image);
        if (op == UDNN_OP_CONV_BWD_FILTER) {
            FAST_PRAGMA(omp barrier)
            reduce_partials(&j);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

#define DEFINE_CONV_SOLVER(fn_prefix, OP)                                                          \
    static int fn_prefix##_applicable(const void *problem, const char **why)                       \
    {                                                                                              \
        conv_geom G;                                                                               \
        return geom_init(problem, OP, &G, why);                                                    \
    }                                                                                              \
    static size_t fn_prefix##_workspace(const void *problem)                                       \
    {                                                                                              \
        conv_geom G;                                                                               \
        const char *why;                                                                           \
        return geom_init(problem, OP, &G, &why) ? workspace_bytes(&G) : 0;                         \
    }                                                                                              \
    static udnnStatus_t fn_prefix##_run(void *ctx, const void *problem, void *ws, size_t ws_bytes) \
    {                                                                                              \
        (void)ctx;                                                                                 \
        return run_op(OP, problem, ws, ws_bytes);                                                  \
    }

DEFINE_CONV_SOLVER(fwd, UDNN_OP_CONV_FWD)
DEFINE_CONV_SOLVER(bwd_data, UDNN_OP_CONV_BWD_DATA)
DEFINE_CONV_SOLVER(bwd_filter, UDNN_OP_CONV_BWD_FILTER)
DEFINE_CONV_SOLVER(bias_act, UDNN_OP_CONV_BIAS_ACT)

const udnn_solver udnn_cpu_fast_conv_fwd = {
    /* .name = */ "fast_conv_fwd",
    /* .op = */ UDNN_OP_CONV_FWD,
    /* .algo = */ UDNN_CONVOLUTION_FWD_ALGO_GEMM,
    /* .deterministic = */ 1,
    /* .applicable = */ fwd_applicable,
    /* .workspace = */ fwd_workspace,
    /* .run = */ fwd_run,
};

const udnn_solver udnn_cpu_fast_conv_bwd_data = {
    /* .name = */ "fast_conv_bwd_data",
    /* .op = */ UDNN_OP_CONV_BWD_DATA,
    /* .algo = */ UDNN_CONVOLUTION_BWD_DATA_ALGO_1,
    /* .deterministic = */ 1,
    /* .applicable = */ bwd_data_applicable,
    /* .workspace = */ bwd_data_workspace,
    /* .run = */ bwd_data_run,
};

const udnn_solver udnn_cpu_fast_conv_bwd_filter = {
    /* .name = */ "fast_conv_bwd_filter",
    /* .op = */ UDNN_OP_CONV_BWD_FILTER,
    /* .algo = */ UDNN_CONVOLUTION_BWD_FILTER_ALGO_1,
    /* .deterministic = */ 1,
    /* .applicable = */ bwd_filter_applicable,
    /* .workspace = */ bwd_filter_workspace,
    /* .run = */ bwd_filter_run,
};

/* The fused op takes the forward's workspace (the size
 * udnnGetConvolutionForwardWorkspaceSize gives for GEMM). */
const udnn_solver udnn_cpu_fast_conv_bias_act = {
    /* .name = */ "fast_conv_bias_act",
    /* .op = */ UDNN_OP_CONV_BIAS_ACT,
    /* .algo = */ UDNN_CONVOLUTION_FWD_ALGO_GEMM,
    /* .deterministic = */ 1,
    /* .applicable = */ bias_act_applicable,
    /* .workspace = */ bias_act_workspace,
    /* .run = */ bias_act_run,
};
