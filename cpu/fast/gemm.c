/* gemm.c - a cache-blocked SGEMM with register-blocked micro-kernels.
 *
 * The loops are those of BLIS/GotoBLAS: the depth k is cut into blocks
 * of kc, the rows of C into blocks of mc, and C into tiles of MR x NR.
 * For each depth block, a tile is one call of the micro-kernel, which
 * keeps the tile in vector registers and walks the depth reading MR
 * elements of A (broadcast) and NR of B (vectors) per step. The NR-wide
 * panel of B a run of tiles shares is copied ("packed") into a small
 * contiguous buffer first, so the kernel streams it from L1 whatever B's
 * strides, and edge panels are zero-padded; A is read in place through
 * its strides (MR rows at a time), the row pointers of a short edge
 * panel repeating its last row. Tiles are ordered by row block, then
 * panel of B, then row panel, so that a run of consecutive tiles (one
 * thread's share) reuses both the packed panel and a block of A.
 *
 * Vectors are GCC's generic vector types; each kernel is compiled for its
 * instruction set with a target attribute and picked at run time, so the
 * library itself keeps the distribution's baseline flags. */
#include <stdlib.h>
#include <string.h>

#include "cpu/fast/gemm.h"

/* One call of a micro-kernel: C tile = alpha * A rows x B panel + beta * C
 * tile over kc steps; mr x nr of the MR x NR tile are real. */
typedef struct {
    int64_t kc;
    const float *a;
    int64_t a_rs, a_cs;
    const float *b; /* kc rows of NR, ldb apart */
    int64_t ldb;
    float *c;
    int64_t c_rs, c_cs;
    int mr, nr;
    float alpha, beta;
} gemm_tile;

typedef struct {
    const char *name;
    int mr, nr, kc, mc;
    void (*tile)(const gemm_tile *t);
} gemm_kernel;

/* The widest kernel's NR and the largest kc: the size of the packed panel. */
#define NR_MAX 32
#define KC_MAX 256

/* The kernels contract a * b + c into one FMA: GCC keeps them apart under
 * -std=c11 (-ffp-contract=off) unless told otherwise per function. */
#if defined(__GNUC__) && !defined(__clang__)
#define KERNEL_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define KERNEL_CONTRACT
#endif

#define PRAGMA_UNROLL _Pragma("GCC unroll 16")

/* Defines a micro-kernel `fn` with MR rows and NV vectors of type vf per
 * row. The loops over i and j have constant bounds and are unrolled, so
 * the accumulators stay in registers; the bounds mr and nr only guard the
 * write-back. */
#define DEFINE_TILE_KERNEL(fn, vf, MR, NV, ATTRS)                                                  \
    static ATTRS KERNEL_CONTRACT void fn(const gemm_tile *t)                                       \
    {                                                                                              \
        enum { VL = sizeof(vf) / sizeof(float), NR = (NV)*VL };                                    \
        const float *row[MR];                                                                      \
        PRAGMA_UNROLL                                                                              \
        for (int i = 0; i < (MR); i++) row[i] = t->a + (i < t->mr ? i : t->mr - 1) * t->a_rs;      \
        vf acc[MR][NV];                                                                            \
        PRAGMA_UNROLL                                                                              \
        for (int i = 0; i < (MR); i++) {                                                           \
            PRAGMA_UNROLL                                                                          \
            for (int j = 0; j < (NV); j++) acc[i][j] = (vf){0};                                    \
        }                                                                                          \
        const int64_t a_cs = t->a_cs;                                                              \
        for (int64_t p = 0; p < t->kc; p++) {                                                      \
            vf bv[NV];                                                                             \
            PRAGMA_UNROLL                                                                          \
            for (int j = 0; j < (NV); j++) bv[j] = *(const vf *)(t->b + p * t->ldb + j * VL);      \
            PRAGMA_UNROLL                                                                          \
            for (int i = 0; i < (MR); i++) {                                                       \
                const vf ai = row[i][p * a_cs] - (vf){0}; /* a splat */                            \
                PRAGMA_UNROLL                                                                      \
                for (int j = 0; j < (NV); j++) acc[i][j] += ai * bv[j];                            \
            }                                                                                      \
        }                                                                                          \
        const float alpha = t->alpha, beta = t->beta;                                              \
        if (t->nr == NR && t->c_cs == 1) {                                                         \
            PRAGMA_UNROLL                                                                          \
            for (int i = 0; i < (MR); i++) {                                                       \
                if (i >= t->mr) break;                                                             \
                PRAGMA_UNROLL                                                                      \
                for (int j = 0; j < (NV); j++) {                                                   \
                    vf *c = (vf *)(t->c + i * t->c_rs + j * VL);                                   \
                    *c = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;         \
                }                                                                                  \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        float out[MR][NR];                                                                         \
        PRAGMA_UNROLL                                                                              \
        for (int i = 0; i < (MR); i++) {                                                           \
            PRAGMA_UNROLL                                                                          \
            for (int j = 0; j < (NV); j++) *(vf *)&out[i][j * VL] = acc[i][j];                     \
        }                                                                                          \
        for (int i = 0; i < t->mr; i++)                                                            \
            for (int j = 0; j < t->nr; j++) {                                                      \
                float *c = t->c + i * t->c_rs + j * t->c_cs;                                       \
                *c = beta == 0.0f ? alpha * out[i][j] : alpha * out[i][j] + beta * *c;             \
            }                                                                                      \
    }

/* may_alias: the kernels read and write float arrays through these. */
typedef float vec4 __attribute__((vector_size(16), aligned(4), may_alias));
DEFINE_TILE_KERNEL(tile_base, vec4, 6, 2, )

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_X86_KERNELS 1
typedef float vec8 __attribute__((vector_size(32), aligned(4), may_alias));
typedef float vec16 __attribute__((vector_size(64), aligned(4), may_alias));
DEFINE_TILE_KERNEL(tile_avx2, vec8, 6, 2, __attribute__((target("avx2,fma"))))
DEFINE_TILE_KERNEL(tile_avx512, vec16, 6, 2, __attribute__((target("avx512f,avx2,fma"))))
#endif

/* Narrowest first; kc keeps a packed panel (kc x NR) within L1, mc a
 * block of A within L2. */
static const gemm_kernel kernels[] = {
    {"baseline 6x8", 6, 8, 256, 384, tile_base},
#ifdef HAVE_X86_KERNELS
    {"avx2 6x16", 6, 16, 256, 384, tile_avx2},
    {"avx512 6x32", 6, 32, 256, 384, tile_avx512},
#endif
};
enum { KERNEL_COUNT = sizeof kernels / sizeof kernels[0] };

/* The widest kernel the CPU runs, capped by UDNN_CPU_ISA. */
static const gemm_kernel *pick_kernel(void)
{
    int level = 0;
#ifdef HAVE_X86_KERNELS
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) level = 1;
    if (level == 1 && __builtin_cpu_supports("avx512f")) level = 2;
#endif
    const char *want = getenv("UDNN_CPU_ISA");
    if (want != NULL) {
        int cap = strcmp(want, "avx512") == 0 ? 2 : strcmp(want, "avx2") == 0 ? 1 : 0;
        if (cap < level) level = cap;
    }
    return &kernels[level < KERNEL_COUNT ? level : KERNEL_COUNT - 1];
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return (a + b - 1) / b;
}

/* A rough cycle count of running g with kernel k: the FMAs of the padded
 * tiles (two a cycle), writing C back once per depth block (a vector per
 * VL elements when C's rows are contiguous, else an element a cycle) and
 * packing B once per block of rows (contiguous rows of B copy a vector a
 * cycle, columns with contiguous depth go through 4 x 4 transposes). */
static double cost(const gemm_kernel *k, const udnn_gemm_args *g)
{
    const double vl = k->nr / 2.0; /* every kernel has two vectors per row */
    const double pm = (double)ceil_div(g->m, k->mr) * k->mr;
    const double pn = (double)ceil_div(g->n, k->nr) * k->nr;
    const double fma = pm * pn * (double)g->k / (2.0 * vl);
    const double store = pm * pn * (double)ceil_div(g->k, k->kc) * (g->c_cs == 1 ? 2.0 / vl : 1.0);
    const double per_packed = g->b.cs == 1 ? 1.0 / vl : g->b.rs == 1 ? 0.5 : 1.0;
    const double pack = (double)g->k * pn * (double)ceil_div(g->m, k->mc) * per_packed;
    return fma + store + pack;
}

/* A product of at most this many outputs sums in double: it costs next to
 * nothing, and a float sum can lose every digit of a small result that
 * cancels, which a single output cannot hide in a norm. */
#define DOUBLE_MAX_OUTPUTS 16

void udnn_sgemm_plan(const udnn_gemm_args *g, udnn_gemm_plan *plan)
{
    const gemm_kernel *k = pick_kernel();
    /* C' = B' A' computes the same elements in the same order of depth:
     * take whichever pads and stores less. */
    udnn_gemm_args t = *g;
    t.m = g->n;
    t.n = g->m;
    t.a.p = g->b.p;
    t.a.rs = g->b.cs;
    t.a.cs = g->b.rs;
    t.b.p = g->a.p;
    t.b.rs = g->a.cs;
    t.b.cs = g->a.rs;
    t.c_rs = g->c_cs;
    t.c_cs = g->c_rs;
    plan->g = cost(k, &t) < cost(k, g) ? t : *g;
    plan->kernel = k;
    plan->m_panels = ceil_div(plan->g.m, k->mr);
    plan->n_panels = ceil_div(plan->g.n, k->nr);
    plan->mc_panels = k->mc / k->mr;
    plan->tiles = plan->m_panels * plan->n_panels;
    plan->in_double = g->m * g->n <= DOUBLE_MAX_OUTPUTS;
}

/* Tile i in the order row block, panel of B, row panel. */
static void tile_at(const udnn_gemm_plan *pl, int64_t i, int64_t *ir, int64_t *jr)
{
    const int64_t per_block = pl->mc_panels * pl->n_panels;
    const int64_t block = i / per_block, rest = i % per_block;
    int64_t rows = pl->m_panels - block * pl->mc_panels;
    if (rows > pl->mc_panels) rows = pl->mc_panels;
    *jr = rest / rows;
    *ir = block * pl->mc_panels + rest % rows;
}

#if defined(__clang__)
#define SHUFFLE4(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define SHUFFLE4(a, b, i, j, k, l) __builtin_shuffle(a, b, (vec4i){i, j, k, l})
#endif
typedef int vec4i __attribute__((vector_size(16)));

/* Writes the 4 x 4 block of B whose rows (depth) start at s and whose
 * columns are cs apart (its depth contiguous) into d as 4 rows of 4,
 * NR apart: a transpose in registers. */
static void transpose4(float *d, int NR, const float *s, int64_t cs)
{
    const vec4 r0 = *(const vec4 *)s, r1 = *(const vec4 *)(s + cs);
    const vec4 r2 = *(const vec4 *)(s + 2 * cs), r3 = *(const vec4 *)(s + 3 * cs);
    const vec4 t0 = SHUFFLE4(r0, r1, 0, 4, 1, 5), t1 = SHUFFLE4(r0, r1, 2, 6, 3, 7);
    const vec4 t2 = SHUFFLE4(r2, r3, 0, 4, 1, 5), t3 = SHUFFLE4(r2, r3, 2, 6, 3, 7);
    *(vec4 *)d = SHUFFLE4(t0, t2, 0, 1, 4, 5);
    *(vec4 *)(d + NR) = SHUFFLE4(t0, t2, 2, 3, 6, 7);
    *(vec4 *)(d + 2 * NR) = SHUFFLE4(t1, t3, 0, 1, 4, 5);
    *(vec4 *)(d + 3 * NR) = SHUFFLE4(t1, t3, 2, 3, 6, 7);
}

/* Copies rows [p0, p0 + kc) of columns [j0, j0 + nr) of B into dst as kc
 * rows of NR, zeros past nr. Columns with contiguous depth (B given
 * transposed) go through 4 x 4 transposes. */
static void pack_panel(float *dst, int NR, const udnn_gemm_in *b, int64_t p0, int64_t kc,
                       int64_t j0, int nr)
{
    const float *src = b->p + p0 * b->rs + j0 * b->cs;
    if (b->cs == 1) {
        for (int64_t p = 0; p < kc; p++) {
            const float *s = src + p * b->rs;
            float *d = dst + p * NR;
            for (int j = 0; j < nr; j++) d[j] = s[j];
            for (int j = nr; j < NR; j++) d[j] = 0.0f;
        }
        return;
    }
    if (nr < NR)
        for (int64_t p = 0; p < kc; p++)
            for (int j = nr; j < NR; j++) dst[p * NR + j] = 0.0f;
    int j = 0;
    if (b->rs == 1)
        for (; j + 4 <= nr; j += 4) {
            int64_t p = 0;
            for (; p + 4 <= kc; p += 4)
                transpose4(dst + p * NR + j, NR, src + j * b->cs + p, b->cs);
            for (; p < kc; p++)
                for (int i = j; i < j + 4; i++) dst[p * NR + i] = src[i * b->cs + p];
        }
    for (; j < nr; j++) {
        const float *s = src + j * b->cs;
        for (int64_t p = 0; p < kc; p++) dst[p * NR + j] = s[p * b->rs];
    }
}

/* The tiles one element at a time, each a dot product in double: for
 * products with few outputs, and for k == 0 (C = beta * C). */
static void dot_tiles(const udnn_gemm_plan *pl, int64_t first, int64_t last)
{
    const gemm_kernel *k = pl->kernel;
    const udnn_gemm_args *g = &pl->g;
    for (int64_t i = first; i < last; i++) {
        int64_t ir, jr;
        tile_at(pl, i, &ir, &jr);
        for (int64_t r = ir * k->mr; r < g->m && r < (ir + 1) * k->mr; r++)
            for (int64_t c = jr * k->nr; c < g->n && c < (jr + 1) * k->nr; c++) {
                double sum = 0.0;
                for (int64_t q = 0; q < g->k; q++)
                    sum += (double)g->a.p[r * g->a.rs + q * g->a.cs] *
                           g->b.p[q * g->b.rs + c * g->b.cs];
                float *e = g->c + r * g->c_rs + c * g->c_cs;
                *e = (float)(g->alpha * sum + (g->beta == 0.0f ? 0.0 : (double)g->beta * *e));
            }
    }
}

/* A panel of B that few row panels share is read where it lies when its
 * rows are contiguous: packing it would cost more than it saves. */
#define DIRECT_B_MAX_SHARERS 8

void udnn_sgemm_run_tiles(const udnn_gemm_plan *pl, int64_t first, int64_t last)
{
    const gemm_kernel *k = pl->kernel;
    const udnn_gemm_args *g = &pl->g;
    if (first >= last) return;
    if (pl->in_double || g->k == 0) {
        dot_tiles(pl, first, last);
        return;
    }
    float panel[KC_MAX * NR_MAX] __attribute__((aligned(64)));
    gemm_tile t;
    t.alpha = g->alpha;
    t.a_rs = g->a.rs;
    t.a_cs = g->a.cs;
    t.c_rs = g->c_rs;
    t.c_cs = g->c_cs;
    for (int64_t p0 = 0; p0 < g->k; p0 += k->kc) {
        t.kc = g->k - p0 < k->kc ? g->k - p0 : k->kc;
        t.beta = p0 == 0 ? g->beta : 1.0f; /* later blocks add to the first */
        int64_t ir, jr, loaded = -1;
        tile_at(pl, first, &ir, &jr);
        /* the row panels of ir's block: [block_lo, block_hi) */
        int64_t block_lo = ir / pl->mc_panels * pl->mc_panels;
        int64_t block_hi =
            block_lo + pl->mc_panels < pl->m_panels ? block_lo + pl->mc_panels : pl->m_panels;
        for (int64_t i = first; i < last; i++) {
            const int64_t r0 = ir * k->mr, c0 = jr * k->nr;
            t.nr = (int)(g->n - c0 < k->nr ? g->n - c0 : k->nr);
            if (jr != loaded) {
                if (g->b.cs == 1 && t.nr == k->nr && block_hi - block_lo <= DIRECT_B_MAX_SHARERS) {
                    t.b = g->b.p + p0 * g->b.rs + c0;
                    t.ldb = g->b.rs;
                } else {
                    pack_panel(panel, k->nr, &g->b, p0, t.kc, c0, t.nr);
                    t.b = panel;
                    t.ldb = k->nr;
                }
                loaded = jr;
            }
            t.mr = (int)(g->m - r0 < k->mr ? g->m - r0 : k->mr);
            t.a = g->a.p + r0 * g->a.rs + p0 * g->a.cs;
            t.c = g->c + r0 * g->c_rs + c0 * g->c_cs;
            k->tile(&t);
            /* the next tile: row panel, then panel of B, then row block */
            if (++ir < block_hi) continue;
            ir = block_lo;
            if (++jr < pl->n_panels) continue;
            jr = 0;
            ir = block_lo = block_hi;
            block_hi =
                block_lo + pl->mc_panels < pl->m_panels ? block_lo + pl->mc_panels : pl->m_panels;
        }
    }
}

void udnn_sgemm_run_part(const udnn_gemm_plan *plan, int part, int parts)
{
    udnn_sgemm_run_tiles(plan, plan->tiles * part / parts, plan->tiles * (part + 1) / parts);
}
