/* matmul.cu - the batched matrix product c[i] = alpha * op(a[i]) x op(b[i])
 * + beta * c[i] for FLOAT, DOUBLE, HALF and BFLOAT16 (HALF and BFLOAT16
 * accumulate in float, DOUBLE in double), any transposes, any row, column
 * and batch strides (a broadcast operand has batch stride 0).
 *
 * One portable tiled kernel (no tensor cores yet): a block computes a
 * BM x BN tile of c, walking k in slices of BK staged through shared memory
 * (two buffers, so one barrier per slice, the next slice's global loads in
 * flight while this one is multiplied), each thread a TM x TN register
 * tile. The tile loads follow whichever stride of the operand is the
 * smaller, so that a warp reads consecutive addresses for row- and
 * column-major operands alike. Blocks loop over m tiles and batches beyond
 * the grid's y and z limits; every offset is 64-bit. With beta == 0, c is
 * never read. */
#include "cuda/kernels.h"

/* threads per block of every tile shape */
#define MM_THREADS 256

/* op(x) of one operand as the kernel walks it: element (row, col) of
 * matrix b is at ptr + b * batch_stride + row * row_stride + col * col_stride. */
typedef struct {
    const void *ptr;
    int64_t batch_stride, row_stride, col_stride;
} mm_operand;

typedef struct {
    int64_t batch, m, n, k;
    mm_operand a, b;        /* op(a): m x k; op(b): k x n */
    void *c;
    int64_t c_batch, c_row, c_col;
} mm_args;

/* op(x) of a batched tensor: a transpose only swaps which stride walks the
 * rows (as cpu/ref/matmul.c). */
static mm_operand mm_op(const udnn_tensor *t, const void *ptr, int trans)
{
    mm_operand o;
    o.ptr = ptr;
    o.batch_stride = t->strides[0];
    o.row_stride = trans ? t->strides[2] : t->strides[1];
    o.col_stride = trans ? t->strides[1] : t->strides[2];
    return o;
}

static __host__ __device__ __forceinline__ int64_t mm_abs(int64_t v)
{
    return v < 0 ? -v : v;
}

/* ---- the tile kernel ------------------------------------------------------------ */

/* Shared-memory tiles are k-major (tile[q][i]) so that a thread reads its
 * TM (TN) values of one k step as 16-byte vectors; the pad of 16 bytes per
 * row spreads a column of the tile over the banks when a load walks k. */
template <class C> struct mm_pad {
    enum { value = 16 / sizeof(C) };
};

/* Where thread `tid` loads element e of a ROWS x BK (A) or BK x COLS (B)
 * slice: consecutive threads walk the operand's unit (smallest) stride. */
template <int BK, int EDGE, int NT, int PER>
__device__ __forceinline__ void mm_load_map(int tid, bool walk_k, int (&edge)[PER], int (&q)[PER])
{
    for (int r = 0; r < PER; r++) {
        const int e = tid + r * NT;
        if (walk_k) {
            q[r] = e % BK;
            edge[r] = e / BK;
        } else {
            edge[r] = e % EDGE;
            q[r] = e / EDGE;
        }
    }
}

/* One thread's part of a slice: PER elements of one operand, held in
 * registers as stored between the global load and the shared store (a
 * conversion right after the load would wait for it before the multiply
 * of the current slice could start). */
template <class T, int PER> struct mm_stage {
    T v[PER];
    int64_t off[PER]; /* offset of the element at k = 0 */
    int q[PER];       /* its k within the slice */
    int edge[PER];    /* its row of op(a) or column of op(b) within the tile */
    bool live[PER];   /* that row/column exists */
};

/* Loads slice k0 of an operand whose k walks k_stride: elements beyond k
 * or beyond the matrix edge read as 0. */
template <class T, int PER>
__device__ __forceinline__ void mm_fetch(mm_stage<T, PER> &s, const T *base, int64_t k0,
                                         int64_t k, int64_t k_stride, T zero)
{
    for (int r = 0; r < PER; r++) {
        const int64_t kk = k0 + s.q[r];
        s.v[r] = s.live[r] && kk < k ? base[s.off[r] + kk * k_stride] : zero;
    }
}

template <class T, int PER, int PITCH>
__device__ __forceinline__ void mm_stash(const mm_stage<T, PER> &s,
                                         typename io<T>::C *tile /* [BK][PITCH] */)
{
    for (int r = 0; r < PER; r++) tile[s.q[r] * PITCH + s.edge[r]] = io<T>::ld(s.v[r]);
}

/* c tile of BM x BN per block, TM x TN per thread. A thread's rows are
 * TM/4 groups of 4 consecutive rows, the groups BM/(TM/4) apart (the same
 * for columns), so that neighbouring threads read neighbouring 16-byte
 * vectors of the shared tiles. */
template <class T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(MM_THREADS)
    mm_tiled(mm_args g, typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    enum {
        NT = MM_THREADS,
        TX = BN / TN,             /* threads along n */
        TY = BM / TM,             /* threads along m */
        PA = BM * BK / NT,        /* A elements each thread loads per slice */
        PB = BN * BK / NT,
        PITCH_A = BM + mm_pad<C>::value,
        PITCH_B = BN + mm_pad<C>::value,
        GM = TM / 4, GN = TN / 4, /* groups of 4 rows / columns */
        SPAN_M = TY * 4, SPAN_N = TX * 4,
    };
    static_assert(TX * TY == NT, "one thread per TM x TN sub-tile");
    static_assert(PA * NT == BM * BK && PB * NT == BN * BK, "slices split evenly");
    static_assert(TM % 4 == 0 && TN % 4 == 0, "rows and columns in groups of 4");

    __shared__ __align__(16) C as[2][BK * PITCH_A];
    __shared__ __align__(16) C bs[2][BK * PITCH_B];

    const int tid = threadIdx.x;
    const int tx = tid % TX, ty = tid / TX;
    const T *a_ptr = (const T *)g.a.ptr, *b_ptr = (const T *)g.b.ptr;
    T *c_ptr = (T *)g.c;
    /* A's k walks its column stride, B's its row stride */
    const bool a_walk_k = mm_abs(g.a.col_stride) <= mm_abs(g.a.row_stride);
    const bool b_walk_k = mm_abs(g.b.row_stride) <= mm_abs(g.b.col_stride);
    const int64_t mtiles = (g.m + BM - 1) / BM;
    const int64_t n0 = (int64_t)blockIdx.x * BN;
    const int64_t nk = (g.k + BK - 1) / BK;
    const T zero = io<T>::st(C(0));

    mm_stage<T, PA> sa;
    mm_stage<T, PB> sb;
    mm_load_map<BK, BM, NT, PA>(tid, a_walk_k, sa.edge, sa.q);
    mm_load_map<BK, BN, NT, PB>(tid, b_walk_k, sb.edge, sb.q);
    for (int r = 0; r < PB; r++) {
        const int64_t col = n0 + sb.edge[r];
        sb.live[r] = col < g.n;
        sb.off[r] = col * g.b.col_stride;
    }

    for (int64_t batch = blockIdx.z; batch < g.batch; batch += gridDim.z)
        for (int64_t mt = blockIdx.y; mt < mtiles; mt += gridDim.y) {
            const int64_t m0 = mt * BM;
            const T *a_base = a_ptr + batch * g.a.batch_stride;
            const T *b_base = b_ptr + batch * g.b.batch_stride;
            for (int r = 0; r < PA; r++) {
                const int64_t row = m0 + sa.edge[r];
                sa.live[r] = row < g.m;
                sa.off[r] = row * g.a.row_stride;
            }

            C acc[TM][TN];
            for (int i = 0; i < TM; i++)
                for (int j = 0; j < TN; j++) acc[i][j] = C(0);

            /* the previous tile's last barrier freed both buffers */
            if (nk > 0) {
                mm_fetch(sa, a_base, 0, g.k, g.a.col_stride, zero);
                mm_fetch(sb, b_base, 0, g.k, g.b.row_stride, zero);
                mm_stash<T, PA, PITCH_A>(sa, as[0]);
                mm_stash<T, PB, PITCH_B>(sb, bs[0]);
            }
            __syncthreads();
            for (int64_t kt = 0; kt < nk; kt++) {
                const int buf = (int)(kt & 1);
                const bool more = kt + 1 < nk;
                if (more) {
                    mm_fetch(sa, a_base, (kt + 1) * BK, g.k, g.a.col_stride, zero);
                    mm_fetch(sb, b_base, (kt + 1) * BK, g.k, g.b.row_stride, zero);
                }
                const C *at = as[buf], *bt = bs[buf];
#pragma unroll
                for (int q = 0; q < BK; q++) {
                    C ra[TM], rb[TN];
#pragma unroll
                    for (int gi = 0; gi < GM; gi++)
#pragma unroll
                        for (int i = 0; i < 4; i++)
                            ra[gi * 4 + i] = at[q * PITCH_A + gi * SPAN_M + ty * 4 + i];
#pragma unroll
                    for (int gj = 0; gj < GN; gj++)
#pragma unroll
                        for (int j = 0; j < 4; j++)
                            rb[gj * 4 + j] = bt[q * PITCH_B + gj * SPAN_N + tx * 4 + j];
#pragma unroll
                    for (int i = 0; i < TM; i++)
#pragma unroll
                        for (int j = 0; j < TN; j++) acc[i][j] = fma(ra[i], rb[j], acc[i][j]);
                }
                if (more) {
                    mm_stash<T, PA, PITCH_A>(sa, as[buf ^ 1]);
                    mm_stash<T, PB, PITCH_B>(sb, bs[buf ^ 1]);
                }
                __syncthreads();
            }

            T *c_base = c_ptr + batch * g.c_batch;
            for (int gi = 0; gi < GM; gi++)
                for (int i = 0; i < 4; i++) {
                    const int64_t row = m0 + gi * SPAN_M + ty * 4 + i;
                    if (row >= g.m) continue;
                    for (int gj = 0; gj < GN; gj++)
                        for (int j = 0; j < 4; j++) {
                            const int64_t col = n0 + gj * SPAN_N + tx * 4 + j;
                            if (col >= g.n) continue;
                            T *o = c_base + row * g.c_row + col * g.c_col;
                            udnn_gpu_blend_store(o, acc[gi * 4 + i][gj * 4 + j], alpha, beta);
                        }
                }
        }
}

/* ---- launching ---------------------------------------------------------------------- */

/* the grid's y and z limits; blocks loop over what lies beyond */
#define MM_GRID_YZ_MAX 65535

template <class T, int BM, int BN, int BK, int TM, int TN>
static udnnStatus_t mm_launch(const udnn_gpu_context *c, const mm_args &g, double alpha,
                              double beta)
{
    typedef typename io<T>::C C;
    const int64_t ntiles = (g.n + BN - 1) / BN, mtiles = (g.m + BM - 1) / BM;
    dim3 grid((unsigned)ntiles, (unsigned)(mtiles < MM_GRID_YZ_MAX ? mtiles : MM_GRID_YZ_MAX),
              (unsigned)(g.batch < MM_GRID_YZ_MAX ? g.batch : MM_GRID_YZ_MAX));
    mm_tiled<T, BM, BN, BK, TM, TN><<<grid, MM_THREADS, 0, c->stream>>>(g, (C)alpha, (C)beta);
    return udnn_gpu_launched();
}

/* Blocks of 128 x 128 (8 x 8 a thread) where they fill the device, else of
 * 64 x 64 (4 x 4): the small products of a training step (batch 64 by a few
 * hundred) would leave most SMs idle with the large tile. DOUBLE stays on
 * the small tile, whose two buffers fit the static 48 KiB. */
template <class T>
static udnnStatus_t mm_dispatch(const udnn_gpu_context *c, const mm_args &g, double alpha,
                                double beta)
{
    if constexpr (sizeof(typename io<T>::C) == 4) {
        const int64_t big_blocks = ((g.m + 127) / 128) * ((g.n + 127) / 128) * g.batch;
        if (big_blocks >= 2 * (int64_t)c->sm_count)
            return mm_launch<T, 128, 128, 16, 8, 8>(c, g, alpha, beta);
    }
    return mm_launch<T, 64, 64, 16, 4, 4>(c, g, alpha, beta);
}

/* ---- the solver ---------------------------------------------------------------------- */

static int matmul_applicable(const void *problem, const char **why)
{
    const udnn_matmul_problem *p = (const udnn_matmul_problem *)problem;
    if (!udnn_gpu_float_type(p->c.dtype) || p->a.dtype != p->c.dtype ||
        p->b.dtype != p->c.dtype) {
        *why = "the GPU matmul takes FLOAT, DOUBLE, HALF and BFLOAT16, A, B and C alike";
        return 0;
    }
    if ((p->n + 63) / 64 > 0x7fffffffLL) {
        *why = "the GPU matmul takes n below 2^37 (the grid's x limit)";
        return 0;
    }
    return 1;
}

static udnnStatus_t matmul_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_matmul_problem);
    if (p->batch <= 0 || p->m <= 0 || p->n <= 0) return UDNN_STATUS_SUCCESS;
    mm_args g;
    g.batch = p->batch;
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.a = mm_op(&p->a, p->a_ptr, p->trans_a);
    g.b = mm_op(&p->b, p->b_ptr, p->trans_b);
    g.c = p->c_ptr;
    g.c_batch = p->c.strides[0];
    g.c_row = p->c.strides[1];
    g.c_col = p->c.strides[2];
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->c.dtype, st = mm_dispatch<T>(c, g, p->alpha, p->beta));
    return st;
}

static const udnn_solver matmul_tiled = {
    /* .name = */ "gpu_matmul_tiled",
    /* .op = */ UDNN_OP_MATMUL,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ matmul_applicable,
    /* .workspace = */ NULL,
    /* .run = */ matmul_run,
};

UDNN_GPU_SOLVER_TABLE(matmul, &matmul_tiled);
