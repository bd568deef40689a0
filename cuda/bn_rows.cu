/* bn_rows.cu - batch normalization's training and backward in one launch
 * where channels are innermost (NHWC-like, dense, 16-byte rows of
 * channels): every block takes a run of whole rows, holds the first part
 * on chip, and reads the rest twice, the second time mostly from L2.
 *
 * bn_keep (bn_flow.cu) holds a group of channels at a time across a team
 * of blocks; where channels are innermost a group is a short slice of
 * every row, and it ran at half the copy rate (H100, f16 64 x 256 x 56 x
 * 56). Here every block reads whole rows and sums all channels:
 *   1. each thread loads its first U positions into registers and the
 *      next `held` into shared memory (copied without registers, in
 *      flight together), then streams the rest of its rows, summing as
 *      they come;
 *   2. the block adds its threads' sums in a fixed order into its row of
 *      partials; after every block has (a count, the launch is
 *      cooperative), block b finishes the channels b, b + grid, ... from
 *      the partials in a fixed order and publishes their coefficients;
 *   3. after every block has (a second count), each thread takes its
 *      channels' coefficients and writes: the streamed rows first, last
 *      read first (L2 still holds them; reread evict-first, output
 *      stored evict-first), then the held ones.
 * x (and dy) move once where a block's rows fit on chip, and twice less
 * what L2 keeps elsewhere. Same bits on every run: every sum has a fixed
 * place and order. */
#include "cuda/bn.h"

/* Tuning, at compile time: threads per block (one block a multiprocessor,
 * its registers shared by the held loads and the arithmetic); 16-byte
 * loads of each tensor a thread holds in registers (training, backward;
 * shared memory holds as many more as the device allows a block); the
 * streamed loads of each tensor a thread has in flight, twice over (the
 * next batch's while it sums or writes one). */
#ifndef BN_ROWS_BLOCK
#define BN_ROWS_BLOCK 512
#endif
#ifndef BN_ROWS_REGS_FWD
#define BN_ROWS_REGS_FWD 4
#endif
#ifndef BN_ROWS_REGS_BWD
#define BN_ROWS_REGS_BWD 2
#endif
#ifndef BN_ROWS_BATCH_FWD
#define BN_ROWS_BATCH_FWD 4
#endif
#ifndef BN_ROWS_BATCH_BWD
#define BN_ROWS_BATCH_BWD 2
#endif

template <class T, int K, bool BWD> struct bn_rows_shape {
    typedef typename bn_acc<T, BWD>::A C;
    typedef typename bn_thread_sum_of<sizeof(T) == 2>::S S; /* a thread's sums */
    typedef udnn_gpu_pack<T, 16 / sizeof(T)> V;
    static constexpr int W = 16 / (int)sizeof(T); /* channels a load */
    static constexpr int NT = BWD ? 2 : 1;        /* tensors read */
    static constexpr int U = BWD ? BN_ROWS_REGS_BWD : BN_ROWS_REGS_FWD;
    static constexpr int B = BWD ? BN_ROWS_BATCH_BWD : BN_ROWS_BATCH_FWD;
    static constexpr int NS = W * K;                       /* a thread's sums */
    static constexpr int WARPS_MAX = BN_ROWS_BLOCK / 16;   /* any warp of 16 or more */
    static constexpr size_t HELD_BYTES = (size_t)16 * NT * BN_ROWS_BLOCK; /* a held position */
};

template <class T, int K, bool BWD> struct bn_rows_args {
    typedef typename bn_rows_shape<T, K, BWD>::C C;
    const T *x, *dy;
    T *out;
    int64_t F, M;     /* channels, rows */
    int64_t pstride;  /* the parameters' channel stride */
    int64_t chunk;    /* rows a block, a whole number of steps */
    int lanes, step;  /* threads a row (F / W); rows a block loads at once */
    int held;         /* positions a thread holds in shared memory */
    uint32_t *count;  /* [2]: blocks summed, blocks finished; zero at the launch */
    double *partial;  /* [grid][K][F] */
    C *coef;          /* [BN_NCOEF][F] */
    bn_side<T> side;
    C alpha, beta;
};

template <class T, int K, bool BWD> struct bn_rows_smem {
    typedef bn_rows_shape<T, K, BWD> Sh;
    typename Sh::S sums[Sh::W * BN_ROWS_BLOCK]; /* one sum of every thread at a time */
    double q[Sh::WARPS_MAX];                     /* a round's finished sums */
};

/* Waits until every block of the grid has counted itself in *count; its
 * writes before then are visible to the block after. */
__device__ __forceinline__ void bn_rows_barrier(uint32_t *count)
{
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) {
        atomicAdd(count, 1u);
        udnn_gpu_spin_until(count, gridDim.x);
        __threadfence();
    }
    __syncthreads();
}

/* Where a thread's positions are: position j at element off(j). */
struct bn_rows_at {
    int64_t first, jstep;
    __device__ __forceinline__ int64_t off(int j) const { return first + j * jstep; }
};

/* B streamed loads of x (and dy) a thread has in flight together. */
template <class T, bool BWD, int B> struct bn_rows_batch {
    typedef udnn_gpu_pack<T, 16 / sizeof(T)> V;
    V x[B], g[BWD ? B : 1];
    /* positions j, j + D, ..., those in [lo, hi); LAST: their last read */
    template <bool LAST, int D>
    __device__ __forceinline__ void fetch(const T *xp, const T *dyp, const bn_rows_at &at, int j,
                                          int lo, int hi)
    {
        constexpr int W = 16 / sizeof(T);
#pragma unroll
        for (int b = 0; b < B; b++) {
            const int p = j + D * b;
            if (p >= lo && p < hi) {
                x[b] = bn_get<T, W, LAST>(xp + at.off(p));
                if constexpr (BWD) g[b] = bn_get<T, W, LAST>(dyp + at.off(p));
            }
        }
    }
};

/* The coefficients of channels f0 .. f0 + W - 1, which other blocks
 * finished: each array's W values read from L2 in 16-byte loads (f0 is a
 * multiple of W). */
template <bool BWD, class T, int K, class C, int W>
__device__ __forceinline__ void bn_rows_coef(const bn_rows_args<T, K, BWD> &a, int64_t f0,
                                             bn_coef<C> (&kc)[W])
{
    constexpr int N = W * (int)sizeof(C) / 16, PER = 16 / (int)sizeof(C);
    static_assert(N >= 1 && N * 16 == W * (int)sizeof(C), "16-byte runs of coefficients");
    C v[BN_NCOEF][W];
#pragma unroll
    for (int i = 0; i < BN_NCOEF; i++) {
        if (!BWD && i == 4) break; /* d: backward only */
#pragma unroll
        for (int n = 0; n < N; n++) {
            const uint4 u = udnnGpuLoadCoherent((const uint4 *)(a.coef + i * a.F + f0) + n);
            memcpy(v[i] + n * PER, &u, 16);
        }
    }
#pragma unroll
    for (int e = 0; e < W; e++) {
        kc[e].hi = v[0][e];
        kc[e].lo = v[1][e];
        kc[e].a = v[2][e];
        kc[e].b = v[3][e];
        kc[e].d = BWD ? v[4][e] : C(0);
    }
}

/* Adds one load of x (and dy) to a thread's sums of its W channels. */
template <class T, int K, bool BWD, class S, class P, int W>
__device__ __forceinline__ void bn_rows_add(S (&acc)[W * K], const P (&shift)[W],
                                            const udnn_gpu_pack<T, W> &xv,
                                            const udnn_gpu_pack<T, W> &gv)
{
#pragma unroll
    for (int e = 0; e < W; e++)
        bn_accumulate<K, BWD>(acc + e * K, (S)udnn_gpu_pack_ld(xv, e) - (S)shift[e],
                              BWD ? (S)udnn_gpu_pack_ld(gv, e) : S(0));
}

/* The block's sums of each channel into its row of partials: sum k of
 * every thread through shared memory, then each channel's over the
 * block's rows in order. */
template <class T, int K, bool BWD>
__device__ __forceinline__ void
bn_rows_block_sums(const bn_rows_args<T, K, BWD> &a, bn_rows_smem<T, K, BWD> &sm,
                   const typename bn_rows_shape<T, K, BWD>::S (&acc)[bn_rows_shape<T, K, BWD>::NS])
{
    constexpr int W = bn_rows_shape<T, K, BWD>::W;
    const int tid = threadIdx.x;
    for (int k = 0; k < K; k++) {
        __syncthreads(); /* the last round's readers are done */
#pragma unroll
        for (int e = 0; e < W; e++) sm.sums[e * BN_ROWS_BLOCK + tid] = acc[e * K + k];
        __syncthreads();
        for (int64_t f = tid; f < a.F; f += BN_ROWS_BLOCK) {
            const int lane = (int)(f / W), at = (int)(f % W) * BN_ROWS_BLOCK + lane;
            double s = 0.0;
            for (int r = 0; r < a.step; r++) s += (double)sm.sums[at + r * a.lanes];
            a.partial[((int64_t)blockIdx.x * K + k) * a.F + f] = s;
        }
    }
}

/* Block b's channels b, b + grid, ...: each sum a warp's, over the
 * blocks' partials (lane l adding blocks l, l + warp, ... in order, then a
 * fixed tree), then each channel's statistics, side outputs and
 * coefficients. */
template <class T, int K, bool BWD>
__device__ void bn_rows_finish(const bn_rows_args<T, K, BWD> &a, bn_rows_smem<T, K, BWD> &sm)
{
    typedef typename bn_rows_shape<T, K, BWD>::C C;
    const int tid = threadIdx.x, lane = tid % udnnGpuWarpSize, warp = tid / udnnGpuWarpSize;
    const int warps = BN_ROWS_BLOCK / udnnGpuWarpSize; /* a multiple of K */
    const int64_t grid = gridDim.x, b0 = blockIdx.x;
    const int64_t own = b0 < a.F ? (a.F - b0 + grid - 1) / grid : 0;
    for (int64_t p0 = 0; p0 < own * K; p0 += warps) {
        const int64_t p = p0 + warp;
        if (p < own * K) {
            const int64_t f = b0 + p / K * grid;
            const int k = (int)(p % K);
            double s = 0.0;
            for (int64_t b = lane; b < grid; b += udnnGpuWarpSize)
                s += udnnGpuLoadCoherent(a.partial + (b * K + k) * a.F + f);
            s = udnn_gpu_warp_sum(s);
            if (lane == 0) sm.q[warp] = s;
        }
        __syncthreads();
        const int64_t i = p0 / K + tid;
        if (tid < warps / K && i < own) {
            const int64_t f = b0 + i * grid, po = f * a.pstride;
            double q[K];
#pragma unroll
            for (int k = 0; k < K; k++) q[k] = sm.q[tid * K + k];
            const double shift = (double)bn_shift<BWD>(a.side, po, a.x + f);
            bn_coef<C> kc;
            if constexpr (BWD) kc = bn_finish_bwd<T>(a.side, po, shift, q, a.M);
            else kc = bn_finish_train<T>(a.side, po, shift, q, a.M);
            bn_store_coef(a.coef, a.F, f, kc);
        }
        __syncthreads();
    }
}

template <class T, int K, bool BWD>
__global__ void __launch_bounds__(BN_ROWS_BLOCK, 1) bn_rows(bn_rows_args<T, K, BWD> a)
{
    typedef bn_rows_shape<T, K, BWD> Sh;
    typedef typename Sh::C C;
    typedef typename Sh::S S;
    typedef typename Sh::V V;
    constexpr int W = Sh::W, U = Sh::U, B = Sh::B;
    __shared__ bn_rows_smem<T, K, BWD> sm;
    extern __shared__ uint4 bn_rows_held[];
    const int tid = threadIdx.x, lane = tid % a.lanes, row = tid / a.lanes;
    /* the thread's rows: first, first + step, ... below end (live of
     * them); threads past the block's whole rows only take part in the
     * sums and barriers */
    const int64_t start = (int64_t)blockIdx.x * a.chunk, first = start + row;
    const int64_t end = a.M < start + a.chunk ? a.M : start + a.chunk;
    const int live = row < a.step && first < end ? (int)((end - first + a.step - 1) / a.step) : 0;
    const int64_t f0 = (int64_t)lane * W;
    const bn_rows_at at = {first * a.F + f0, (int64_t)a.step * a.F};
    /* held position h of tensor t (0 x, 1 dy): the thread's own slot */
    V *const held = (V *)bn_rows_held + tid;
    const int64_t hstep = (int64_t)a.held * BN_ROWS_BLOCK;
    const int s0 = U + a.held; /* the first streamed position */
    typedef bn_rows_batch<T, BWD, B> Batch;

    /* 1. the held loads in flight together, then the streamed ones,
     * summed as they come (the next batch in flight meanwhile), then the
     * held ones summed */
    for (int h = 0; h < a.held && U + h < live; h++) {
        const int64_t off = at.off(U + h);
        udnnGpuCopyAsync16(held + h * BN_ROWS_BLOCK, a.x + off);
        if constexpr (BWD) udnnGpuCopyAsync16(held + hstep + h * BN_ROWS_BLOCK, a.dy + off);
    }
    V xr[U], gr[BWD ? U : 1];
#pragma unroll
    for (int u = 0; u < U; u++) {
        if (u < live) {
            xr[u] = bn_get<T, W, true>(a.x + at.off(u));
            if constexpr (BWD) gr[u] = bn_get<T, W, true>(a.dy + at.off(u));
        }
    }
    typename udnn_gpu_param<T>::P shift[W];
#pragma unroll
    for (int e = 0; e < W; e++)
        shift[e] = bn_shift<BWD>(a.side, (f0 + e) * a.pstride, a.x + f0 + e);
    S acc[Sh::NS];
#pragma unroll
    for (int i = 0; i < Sh::NS; i++) acc[i] = S(0);
    Batch cur, next;
    cur.template fetch<false, 1>(a.x, a.dy, at, s0, s0, live);
    for (int j = s0; j < live; j += B) {
        next.template fetch<false, 1>(a.x, a.dy, at, j + B, s0, live);
#pragma unroll
        for (int b = 0; b < B; b++)
            if (j + b < live) bn_rows_add<T, K, BWD>(acc, shift, cur.x[b], cur.g[BWD ? b : 0]);
        cur = next;
    }
    udnnGpuCopyAsyncWait();
#pragma unroll
    for (int u = 0; u < U; u++)
        if (u < live) bn_rows_add<T, K, BWD>(acc, shift, xr[u], gr[BWD ? u : 0]);
    for (int h = 0; h < a.held && U + h < live; h++)
        bn_rows_add<T, K, BWD>(acc, shift, held[h * BN_ROWS_BLOCK],
                               held[(BWD ? hstep : 0) + h * BN_ROWS_BLOCK]);

    /* 2. the block's partials; the grid's; the block's channels finished */
    bn_rows_block_sums(a, sm, acc);
    bn_rows_barrier(&a.count[0]);
    bn_rows_finish(a, sm);
    bn_rows_barrier(&a.count[1]);

    /* 3. the output: the streamed positions, last read first, then the
     * held ones */
    if (live == 0) return;
    bn_coef<C> kc[W];
    bn_rows_coef<BWD>(a, f0, kc);
    udnn_gpu_blending(a.beta, [&](auto blending) {
        constexpr bool BLEND = decltype(blending)::value;
        Batch cur, next;
        cur.template fetch<true, -1>(a.x, a.dy, at, live - 1, s0, live);
        for (int j = live - 1; j >= s0; j -= B) {
            next.template fetch<true, -1>(a.x, a.dy, at, j - B, s0, live);
#pragma unroll
            for (int b = 0; b < B; b++)
                if (j - b >= s0)
                    bn_store_pack<T, BWD, BLEND>(a.out + at.off(j - b), kc, cur.x[b],
                                                 cur.g[BWD ? b : 0], a.alpha, a.beta);
            cur = next;
        }
        for (int h = 0; h < a.held && U + h < live; h++)
            bn_store_pack<T, BWD, BLEND>(a.out + at.off(U + h), kc, held[h * BN_ROWS_BLOCK],
                                         held[(BWD ? hstep : 0) + h * BN_ROWS_BLOCK], a.alpha,
                                         a.beta);
#pragma unroll
        for (int u = 0; u < U; u++)
            if (u < live)
                bn_store_pack<T, BWD, BLEND>(a.out + at.off(u), kc, xr[u], gr[BWD ? u : 0],
                                             a.alpha, a.beta);
    });
}

/* ---- host side ---------------------------------------------------------------------------- */

template <class T, int K, bool BWD>
udnnStatus_t bn_rows_run(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    typedef bn_rows_shape<T, K, BWD> Sh;
    bn_rows_args<T, K, BWD> a;
    memset(&a, 0, sizeof a);
    bn_args_from<T, BWD>(a, p);
    const int64_t lanes = a.F / Sh::W;
    if (lanes > BN_ROWS_BLOCK) return UDNN_STATUS_NOT_SUPPORTED;
    a.lanes = (int)lanes;
    a.step = BN_ROWS_BLOCK / a.lanes;

    /* the held positions the device's shared memory allows a block */
    static udnn_gpu_cache granted, occupancy;
    const size_t room = c->shared_per_block > sizeof(bn_rows_smem<T, K, BWD>)
                            ? c->shared_per_block - sizeof(bn_rows_smem<T, K, BWD>)
                            : 0;
    int64_t held_max = (int64_t)(room / Sh::HELD_BYTES);
    if (!udnn_gpu_allow_shared(c, bn_rows<T, K, BWD>, (size_t)held_max * Sh::HELD_BYTES, &granted))
        held_max = 0;
    const int64_t resident =
        c->sm_count * udnn_gpu_occupancy(c, bn_rows<T, K, BWD>, BN_ROWS_BLOCK,
                                         (size_t)held_max * Sh::HELD_BYTES, &occupancy);

    /* a run of whole steps a block, as even as they come */
    const int64_t steps = (a.M + a.step - 1) / a.step;
    int64_t grid = resident < steps ? resident : steps;
    const int64_t n = (steps + grid - 1) / grid; /* positions a thread */
    if (n >= ((int64_t)1 << 30)) return UDNN_STATUS_NOT_SUPPORTED;
    a.chunk = n * a.step;
    grid = (a.M + a.chunk - 1) / a.chunk;
    const int64_t beyond = n > Sh::U ? n - Sh::U : 0; /* positions past the registers */
    a.held = (int)(beyond < held_max ? beyond : held_max);

    const udnnStatus_t st = bn_scratch(c, 2, a.F, grid * K * a.F, &a.count, &a.coef, &a.partial);
    if (st != UDNN_STATUS_SUCCESS) return st;
    void *args[] = {&a};
    const udnnGpuError_t e =
        udnnGpuLaunchCooperativeKernel(bn_rows<T, K, BWD>, (unsigned)grid, BN_ROWS_BLOCK, args,
                                       (size_t)a.held * Sh::HELD_BYTES, c->stream);
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                             "launching batch norm's channels-innermost kernel");
    return UDNN_STATUS_SUCCESS;
}

/* the types and sums bn_flow_run asks for */
#define BN_ROWS_INSTANCES(T)                                                                   \
    template udnnStatus_t bn_rows_run<T, 2, false>(const udnn_gpu_context *,                   \
                                                   const udnn_bn_problem *);                   \
    template udnnStatus_t bn_rows_run<T, 2, true>(const udnn_gpu_context *,                    \
                                                  const udnn_bn_problem *);                    \
    template udnnStatus_t bn_rows_run<T, 4, true>(const udnn_gpu_context *,                    \
                                                  const udnn_bn_problem *);
BN_ROWS_INSTANCES(float)
BN_ROWS_INSTANCES(double)
BN_ROWS_INSTANCES(udnnGpuHalf)
BN_ROWS_INSTANCES(udnnGpuBf16)
