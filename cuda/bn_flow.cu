/* bn_flow.cu - batch normalization's training and backward in one launch
 * where the mode is spatial and every tensor is dense in one layout: bn_keep
 * holds a group of channels on chip across a team of co-resident blocks
 * and reads x (and dy) once; bn_flow runs bn.cu's three passes as items
 * of a persistent grid, reading x (and dy) a second time from L2. bn.cu
 * calls bn_flow_run first and takes its three passes where it declines;
 * bn_flow_run hands large channels-innermost problems to bn_rows.cu, and
 * channel runs whose channel fits a thread-block cluster to bn_cluster.cu
 * first. */
#include "cuda/bn.h"

/* ---- one pass: training and backward in one launch -------------------------------------- */

/* The three passes read x (and dy) twice, for the statistics and for the
 * output: 3 tensors of traffic for 2 (5 for 3 backward). Where every
 * tensor is dense in one layout (spatial modes), bn_flow serves the second
 * read from L2. Its work is items, each a slice of one group of channels:
 * a channel where a channel is runs of contiguous members (NCHW-like); the
 * FG channels of a BN_FLOW_SLICE-byte slice of each row where channels are
 * innermost (NHWC-like), so that a group is a small part of x. A reduce
 * item (R) sums its slice into partials; the group's last R item to finish
 * adds the group's partials in a fixed order, finishes its channels as
 * pass 2 does and raises the group's ready flag; an apply item (A) waits
 * for the flag and writes its slice's output.
 *
 * A persistent grid takes items in ticket order (an atomic counter), R
 * items `lag` ahead of A items: a group plus about the items in progress
 * at once, so that a group is finished when its first A item comes and
 * its slices are still in L2 (A items read them, and store the output,
 * marked evict-first). An item waits only for items of lower tickets,
 * which running blocks hold, and those wait only for lower ones still: the
 * lowest unfinished ticket always progresses, so the grid needs no
 * co-residency (nor a cooperative launch). Same bits on every run: each R
 * item sums a fixed slice in a fixed order, and the partials are added in
 * item order. */

/* bn_keep's knob that the flow's functions see: whether every block of
 * a group finishes it for itself (1) or waits for the last one's
 * coefficients (0; H200 f32 NCHW training 2194 against 2348 GB/s). */
#ifndef BN_KEEP_SELF
#define BN_KEEP_SELF 1
#endif
/* whether training and backward try bn_keep before bn_flow; and, where
 * channels are innermost, for 4- and 8-byte data too */
#ifndef BN_KEEP
#define BN_KEEP 1
#endif
#ifndef BN_KEEP_ROWS_WIDE
#define BN_KEEP_ROWS_WIDE 0
#endif

/* Whether channel-runs layouts (NCHW-like) try bn_cluster.cu's kernel
 * first (1; 0 for comparison). */
#ifndef BN_CLUSTER
#define BN_CLUSTER 1
#endif

/* Whether channels-innermost layouts take bn_rows.cu's whole-row flow
 * first (1; 0 for comparison), and where bn_keep would run instead (16-bit
 * data), from how many bytes of x (and dy) on: below, bn_rows' fixed cost
 * (its two grid-wide waits) outweighs what it saves. H100, f16 NHWC,
 * bn_keep / bn_rows in us: 32 x 2048 x 7 x 7 training 26.8 / 37.5,
 * backward 28.8 / 38.9; 64 x 256 x 28 x 28 (26 MB) training 43.6 / 48.4,
 * backward (51 MB) 72.0 / 63.5; 64 x 128 x 56 x 56 training (51 MB) 83.6 /
 * 67.7. FLOAT's alternative, the three passes, was slower at every size
 * measured (32 x 2048 x 7 x 7 training 47.5 / 41.0 us). */
#ifndef BN_ROWS
#define BN_ROWS 1
#endif
#ifndef BN_ROWS_OVER_KEEP_BYTES
#define BN_ROWS_OVER_KEEP_BYTES ((int64_t)40 << 20)
#endif
/* Whether channels-innermost layouts take the one-pass flow (see bn_flow_run). */
#ifndef BN_FLOW_ROWS
#define BN_FLOW_ROWS 0
#endif

/* Tuning, at compile time: the row-slice bytes of a channels-innermost
 * group (FG = BN_FLOW_SLICE / sizeof(T) channels, bn_flow_fg; bn_keep's
 * too: 64 bytes served its f16 NHWC backward at 939 GB/s on the H200
 * where 32 gave 686, training alike; on the H100 128 took f16 NHWC
 * training from 1340 to 1361 GB/s, 1273 to 1440 at 128 x 256 x 28 x 28,
 * but 64 x 256 x 56 x 56's backward groups then outgrew the grid, 991 to
 * 889 by the three passes); the loads of
 * each tensor a thread issues together for an item; the most resident
 * blocks per multiprocessor, and the fewest the registers must allow
 * (training: 80 registers a thread; backward, which holds dy too: 128);
 * the lag beyond a group, in items per block of the grid (the last R item
 * of a group has about twice that many tickets' time to finish it); L2
 * hints: BN_FLOW_HINTS in bn.h. */
#ifndef BN_FLOW_SLICE
#define BN_FLOW_SLICE 64
#endif
#ifndef BN_FLOW_LOADS
#define BN_FLOW_LOADS 4
#endif
#ifndef BN_FLOW_BLOCKS
#define BN_FLOW_BLOCKS 4
#endif
#ifndef BN_FLOW_MIN_FWD
#define BN_FLOW_MIN_FWD 3
#endif
#ifndef BN_FLOW_MIN_BWD
#define BN_FLOW_MIN_BWD 2
#endif
#ifndef BN_FLOW_LAG
#define BN_FLOW_LAG 2
#endif

/* Channels of a group, W to a load. Its sums (4 at most) must not
 * outnumber a block's threads, nor its lanes (FG / W) 32, the fewest a
 * warp's sums are written for. */
template <class T, bool ROWS, int W> struct bn_flow_fg {
    static constexpr int SLICE = BN_FLOW_SLICE / (int)sizeof(T);
    static constexpr int FG = !ROWS ? 1 : SLICE < 32 * W ? SLICE : 32 * W;
    static_assert(FG >= 1 && (FG & (FG - 1)) == 0, "BN_FLOW_SLICE");
    static_assert(4 * FG <= UDNN_GPU_BLOCK, "BN_FLOW_SLICE");
};

template <class T, class C> struct bn_flow_args {
    const T *x, *dy;
    T *out;
    int64_t F, M;           /* channels, members of each */
    int64_t run, rstep;     /* channel runs: a run's elements, the step from run to run */
    udnn_gpu_div32 per_run; /* channel runs: loads in a run */
    int64_t pstride;        /* the parameters' channel stride */
    int64_t loads;          /* a group's loads of each tensor (channel runs) or rows */
    int64_t chunk;          /* an item's share of them */
    uint32_t S, NR, lag;    /* items per group, R items, the lag */
    uint32_t *ticket, *done, *ready; /* [1], [groups], [groups]: zero at the launch */
    double *partial;        /* [NR][K][FG] */
    C *coef;                /* [BN_NCOEF][F] */
    bn_side<T> side;
    C alpha, beta;
};

template <class C, int FG, int K> struct bn_flow_smem {
    double red[UDNN_GPU_BLOCK_SUM_SLOTS * FG * K]; /* per warp, an R item's sums */
    double fin[UDNN_GPU_BLOCK];                    /* a group's finishing */
    C kc[BN_NCOEF * FG];                           /* an A item's coefficients */
    double shift[FG];                              /* the group's shifts, read before its count */
    uint32_t ticket, last;
};

/* Measurement only: bn_keep without its sums' arithmetic (1), without
 * its stores (2), or without waiting for and finishing its group (3);
 * wrong results. H100, f16 NHWC training 64 x 256 x 56 x 56 (1139 GB/s
 * with double sums, 1340 with float): 1 gave 1393 and 2 1699 (double
 * sums), 3 1569 (float): loading, summing and waiting take two thirds of
 * the time, and the group's finish is not most of that. */
#ifndef BN_KEEP_PROBE
#define BN_KEEP_PROBE 0
#endif
/* A thread's sums over its loads: in float for bn_keep's 16-bit data
 * (bn_thread_sum_of). */
template <class T, bool KEEP> struct bn_thread_sum : bn_thread_sum_of<KEEP && sizeof(T) == 2> {};

/* Element offset of position pos of group g (a load of channel g's runs,
 * or a row) for a thread whose first channel is f0. */
template <bool ROWS, int W, class T, class C>
__device__ __forceinline__ int64_t bn_flow_off(const bn_flow_args<T, C> &a, int64_t g,
                                               int64_t f0, int64_t pos)
{
    if constexpr (ROWS) {
        return pos * a.F + f0;
    } else {
        return bn_run_off<W>(a.run, a.rstep, a.per_run, g, pos);
    }
}

/* Channel f's shift (bn_shift). */
template <bool BWD, bool ROWS, class T, class C>
__device__ __forceinline__ typename udnn_gpu_param<T>::P bn_flow_shift(const bn_flow_args<T, C> &a,
                                                                       int64_t f)
{
    return bn_shift<BWD>(a.side, f * a.pstride, a.x + (ROWS ? f : f * a.run));
}

/* Adds v[0..NV) over the lanes of a warp that share lane % L, spreading
 * the sums: each round (mask m = L, 2L, ... below the warp size) sends
 * half of the H values a lane holds to the lane across m and adds the
 * half it gets to the half it keeps, one send per value rather than one
 * per value and round. The lane ends with n sums, of values first.. first
 * + n - 1; dup: another lane holds the same. D: rounds left for a warp of
 * up to 64. */
template <int NV, int H, int D>
__device__ __forceinline__ void bn_warp_spread(double (&v)[NV], int m, int lane, int &n,
                                               int &first, bool &dup)
{
    if constexpr (D > 0) {
        if (m >= udnnGpuWarpSize) return;
        const bool hi = (lane & m) != 0;
        if constexpr (H >= 2) {
            constexpr int h = H / 2;
#pragma unroll
            for (int j = 0; j < h; j++) {
                const double send = hi ? v[j] : v[h + j];
                const double keep = hi ? v[h + j] : v[j];
                v[j] = keep + udnnGpuShflXor(send, m);
            }
            if (hi) first += h;
            n = h;
            bn_warp_spread<NV, h, D - 1>(v, 2 * m, lane, n, first, dup);
        } else {
            v[0] += udnnGpuShflXor(v[0], m);
            dup = dup || hi;
            bn_warp_spread<NV, 1, D - 1>(v, 2 * m, lane, n, first, dup);
        }
    }
}

/* The lanes of an item: L per row (rows: FG / W channels, W each), else
 * one per load; STEP positions a round of loads. */
template <class T, bool ROWS, int W> struct bn_flow_lanes {
    static constexpr int FG = bn_flow_fg<T, ROWS, W>::FG, L = ROWS ? FG / W : 1,
                         NF = ROWS ? W : 1, STEP = UDNN_GPU_BLOCK / L;
};

/* A group's last R item: its channels' statistics and coefficients from
 * the partials (lanes of a sum adding every LP-th item, then a fixed
 * tree) and the shifts bn_flow_sum kept, then the ready flag. */
template <class T, int K, bool BWD, bool ROWS, int W, class C>
__device__ void bn_flow_finish(const bn_flow_args<T, C> &a, uint32_t g,
                               bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm, bool publish)
{
    constexpr int FG = bn_flow_fg<T, ROWS, W>::FG, LP = UDNN_GPU_BLOCK / (FG * K), B = 16;
    const int tid = threadIdx.x, pair = tid / LP, sub = tid % LP, k = pair / FG, fl = pair % FG;
    const int64_t f = (int64_t)g * FG + fl;
    const volatile double *part = a.partial + ((int64_t)g * a.S * K + k) * FG + fl;
    const int64_t ps = (int64_t)K * FG; /* from one item's partials to the next */
    __threadfence(); /* the count said every partial is in: read them after it */
    double acc = 0.0;
    if (f < a.F) {
        /* B loads in flight */
        for (uint32_t s0 = sub; s0 < a.S; s0 += B * LP) {
            double v[B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                const uint32_t s = s0 + b * LP;
                v[b] = s < a.S ? part[s * ps] : 0.0;
            }
#pragma unroll
            for (int b = 0; b < B; b++)
                if (s0 + b * LP < a.S) acc += v[b];
        }
    }
    sm.fin[tid] = acc;
    __syncthreads();
    for (int w = LP / 2; w > 0; w /= 2) {
        if (sub < w) sm.fin[tid] += sm.fin[tid + w];
        __syncthreads();
    }
    const int64_t ff = (int64_t)g * FG + tid;
    if (tid < FG && ff < a.F) {
        double q[K];
        for (int i = 0; i < K; i++) q[i] = sm.fin[(i * FG + tid) * LP];
        const double shift = sm.shift[tid];
        const int64_t po = ff * a.pstride;
        bn_side<T> side = a.side;
        if (!publish) side.running_mean = side.save_mean = side.dscale = NULL;
        bn_coef<C> k;
        if constexpr (BWD) k = bn_finish_bwd<T>(side, po, shift, q, a.M);
        else k = bn_finish_train<T>(side, po, shift, q, a.M);
        bn_store_coef(sm.kc, (int64_t)FG, (int64_t)tid, k); /* for the block's own item */
        if (publish) {
            bn_store_coef(a.coef, a.F, ff, k);
            __threadfence();
        }
    }
    __syncthreads();
    if (publish && tid == 0) atomicExch(&a.ready[g], 1u);
}

/* Where an item's loads are: its group g; the thread's first channel f0
 * (nothing to do unless below F) and its positions p0, p0 + STEP, ...
 * below p1. */
struct bn_flow_at {
    uint32_t g;
    int64_t f0, p0, p1;
    bool valid;
};

template <class T, bool ROWS, int W, class C>
__device__ __forceinline__ bn_flow_at bn_flow_locate(const bn_flow_args<T, C> &a, uint32_t item)
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    const int tid = threadIdx.x, lane = tid % G::L;
    bn_flow_at at;
    at.g = item / a.S;
    const int64_t first = (int64_t)(item - at.g * a.S) * a.chunk, end = first + a.chunk;
    at.f0 = ROWS ? (int64_t)at.g * G::FG + lane * W : (int64_t)at.g;
    at.valid = at.f0 < a.F;
    at.p0 = first + tid / G::L;
    at.p1 = end < a.loads ? end : a.loads;
    return at;
}

/* bn_keep's blocks each ask L2 for the first BN_KEEP_PREFETCH eighths of
 * their next item's loads (evict last) before they wait for their group,
 * so that memory works through the wait: FLOAT where each group is a
 * channel's runs (not rows), as measured. H100, 64 x 256 x 56 x 56 f32
 * NCHW, in one run against the kernel without: training 2198 to 2256
 * GB/s, backward 2228 to 2304; 4 eighths 2213 / 2207, the whole item
 * slower (1965 / 1891), as was asking before the block's own loads had
 * landed. */
#ifndef BN_KEEP_PREFETCH
#define BN_KEEP_PREFETCH 2
#endif

/* The thread's share of that prefetch of item `next`: one load in each
 * 128-byte line (a run's loads are consecutive threads' 16 bytes). */
template <class T, bool BWD, bool ROWS, int W, int N, class C>
__device__ __forceinline__ void bn_keep_prefetch(const bn_flow_args<T, C> &a, uint32_t next)
{
    if constexpr (!ROWS && sizeof(T) == 4 && BN_KEEP_PREFETCH > 0) {
        typedef bn_flow_lanes<T, ROWS, W> G;
        constexpr int EVERY = 128 / (W * (int)sizeof(T));
        if (next >= a.NR || threadIdx.x % EVERY) return;
        const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, next);
        if (!at.valid) return;
#pragma unroll
        for (int u = 0; u < N * BN_KEEP_PREFETCH / 8; u++) {
            const int64_t pos = at.p0 + (int64_t)u * G::STEP;
            if (pos < at.p1) {
                const int64_t off = bn_flow_off<ROWS, W>(a, at.g, at.f0, pos);
                udnnGpuPrefetchL2(a.x + off);
                if constexpr (BWD) udnnGpuPrefetchL2(a.dy + off);
            }
        }
    }
}

/* Where the loads of an item beyond a thread's U registers are held:
 * H more of each tensor in shared memory (bn_keep), copied without
 * passing through registers, each read back only by the thread that
 * copied it. held: the thread's first, the next a block's width on; dy's
 * after x's H. */
template <class T, int W, int H> struct bn_held {
    static_assert(H == 0 || W * sizeof(T) == 16, "held loads are 16 bytes");
    udnn_gpu_pack<T, W> *at;
};

/* Load u of a thread holding U in registers and the rest in `h`; t: which
 * tensor (0 x, 1 dy). */
template <int U, int H, class T, int W>
__device__ __forceinline__ udnn_gpu_pack<T, W> *bn_held_slot(const bn_held<T, W, H> &h, int u,
                                                             int t)
{
    return h.at + (int64_t)(t * H + u - U) * UDNN_GPU_BLOCK;
}

/* The thread's U + H loads of x (and dy) for an item, U into registers, H
 * into shared memory; LAST: their last read. */
template <class T, bool BWD, bool ROWS, int W, int U, bool LAST, int H = 0, class C>
__device__ __forceinline__ void bn_flow_load(const bn_flow_args<T, C> &a, const bn_flow_at &at,
                                             udnn_gpu_pack<T, W> (&xr)[U],
                                             udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                             bn_held<T, W, H> held = {})
{
    typedef bn_flow_lanes<T, ROWS, W> G;
#pragma unroll
    for (int u = 0; u < U + H; u++) {
        const int64_t pos = at.p0 + (int64_t)u * G::STEP;
        if (at.valid && pos < at.p1) {
            const int64_t off = bn_flow_off<ROWS, W>(a, at.g, at.f0, pos);
            if (u >= U) {
                udnnGpuCopyAsync16(bn_held_slot<U>(held, u, 0), a.x + off);
                if constexpr (BWD) udnnGpuCopyAsync16(bn_held_slot<U>(held, u, 1), a.dy + off);
            } else {
                xr[u] = bn_get<T, W, LAST>(a.x + off);
                if constexpr (BWD) gr[u] = bn_get<T, W, LAST>(a.dy + off);
            }
        }
    }
}

/* Load u of x (t 0) or dy (t 1): from the registers or the held. */
template <int U, int H, class T, int W>
__device__ __forceinline__ udnn_gpu_pack<T, W>
bn_pick(const udnn_gpu_pack<T, W> (&r)[U > 0 ? U : 1], const bn_held<T, W, H> &held, int u, int t)
{
    return u < U ? r[u < U ? u : 0] /* in bounds where not taken too */
                 : *bn_held_slot<U>(held, u, t);
}

/* The sums of an item's loads: each thread's over its positions, the
 * warp's over its lanes (bn_warp_spread), the block's over its warps in
 * order, into the item's partials; then the group's count of items summed,
 * and its finishing by the last. KEEP: `next` is the block's next item,
 * prefetched before the count (bn_keep_prefetch). */
template <class T, int K, bool BWD, bool ROWS, int W, int U, bool KEEP, int H = 0, class C>
__device__ __forceinline__ void bn_flow_sum(const bn_flow_args<T, C> &a, uint32_t item,
                                            const bn_flow_at &at,
                                            bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm,
                                            const udnn_gpu_pack<T, W> (&xr)[U],
                                            const udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                            bn_held<T, W, H> held = {}, uint32_t next = ~0u)
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    constexpr int FG = G::FG, L = G::L, NF = G::NF, NV = NF * K;
    const int tid = threadIdx.x, lane = tid % L;
    const uint32_t g = at.g;
    typename udnn_gpu_param<T>::P shift[NF];
    typedef typename bn_thread_sum<T, KEEP>::S SA;
    SA acc[NV];
#pragma unroll
    for (int v = 0; v < NF; v++) {
        shift[v] = at.valid ? bn_flow_shift<BWD, ROWS>(a, at.f0 + v) : 0;
        /* for the finishing: written in place, x's first members may be
         * output by then, where another block of the group (bn_keep) has
         * finished and written first */
        if (tid < L) sm.shift[tid * NF + v] = (double)shift[v];
    }
#pragma unroll
    for (int i = 0; i < NV; i++) acc[i] = SA(0);
#pragma unroll
    for (int u = 0; u < U + H; u++) {
        if (H > 0 && u == U) udnnGpuCopyAsyncWait(); /* the held have landed */
        if (KEEP && BN_KEEP_PROBE == 1) continue;
        if (!at.valid || at.p0 + (int64_t)u * G::STEP >= at.p1) continue;
        const udnn_gpu_pack<T, W> xv = bn_pick<U>(xr, held, u, 0);
        udnn_gpu_pack<T, W> gv;
        if constexpr (BWD) gv = bn_pick<U>(gr, held, u, 1);
#pragma unroll
        for (int e = 0; e < W; e++) {
            const int v = ROWS ? e : 0;
            bn_accumulate<K, BWD>(acc + v * K, (SA)udnn_gpu_pack_ld(xv, e) - (SA)shift[v],
                                  BWD ? (SA)udnn_gpu_pack_ld(gv, e) : SA(0));
        }
    }
    double sum[NV];
#pragma unroll
    for (int i = 0; i < NV; i++) sum[i] = (double)acc[i];
    int n = NV, first = 0;
    bool dup = false;
    bn_warp_spread<NV, NV, 6>(sum, L, tid % udnnGpuWarpSize, n, first, dup);
    const int warp = tid / udnnGpuWarpSize;
    if (!dup)
#pragma unroll
        for (int j = 0; j < NV; j++)
            if (j < n) sm.red[(warp * L + lane) * NV + first + j] = sum[j];
    __syncthreads();
    if (tid < L * NV) {
        const int warps = UDNN_GPU_BLOCK / udnnGpuWarpSize;
        double sum = 0.0;
        for (int w = 0; w < warps; w++) sum += sm.red[w * L * NV + tid];
        const int l = tid / NV, i = tid % NV;
        a.partial[((int64_t)item * K + i % K) * FG + l * W + i / K] = sum;
        __threadfence();
    }
    __syncthreads();
    if constexpr (KEEP) bn_keep_prefetch<T, BWD, ROWS, W, U + H>(a, next);
    if (KEEP && BN_KEEP_PROBE == 3) return;
    /* a group of one item needs no count: the block's own partials are
     * visible to it after the barrier. KEEP: every block of a group waits
     * for the count and finishes the group for itself (the same sums in
     * the same order: the same coefficients); the last also publishes. */
    if (tid == 0) {
        sm.last = a.S == 1 || atomicAdd(&a.done[g], 1u) == a.S - 1;
        if (KEEP && BN_KEEP_SELF && !sm.last) {
            udnn_gpu_spin_until(&a.done[g], a.S);
            __threadfence();
        }
    }
    __syncthreads();
    if (sm.last) bn_flow_finish<T, K, BWD, ROWS, W>(a, g, sm, true);
    else if (KEEP && BN_KEEP_SELF) bn_flow_finish<T, K, BWD, ROWS, W>(a, g, sm, false);
}

/* An item's output from its loads, once its group's coefficients are
 * ready; `own`: this block finished the group, and they are in sm.kc. */
template <class T, int K, bool BWD, bool ROWS, int W, int U, int H = 0, class C>
__device__ __forceinline__ void bn_flow_write(const bn_flow_args<T, C> &a, const bn_flow_at &at,
                                              bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm,
                                              const udnn_gpu_pack<T, W> (&xr)[U],
                                              const udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                              bool own, bn_held<T, W, H> held = {})
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    constexpr int FG = G::FG, L = G::L, NF = G::NF;
    const int tid = threadIdx.x, lane = tid % L;
    const uint32_t g = at.g;
    if (!own) {
        if (tid == 0) {
            udnn_gpu_spin_until(&a.ready[g], 1u);
            __threadfence();
        }
        __syncthreads();
        for (int i = tid; i < BN_NCOEF * FG; i += UDNN_GPU_BLOCK) {
            const int64_t f = (int64_t)g * FG + i % FG;
            if (f < a.F) sm.kc[i] = ((const volatile C *)a.coef)[(i / FG) * a.F + f];
        }
        __syncthreads();
    }
    if (!at.valid) return;
    bn_coef<C> kc[NF];
#pragma unroll
    for (int v = 0; v < NF; v++) kc[v] = bn_load_coef(sm.kc, FG, ROWS ? lane * W + v : 0);
    udnn_gpu_blending(a.beta, [&](auto blending) {
        constexpr bool BLEND = decltype(blending)::value;
#pragma unroll
        for (int u = 0; u < U + H; u++) {
            const int64_t pos = at.p0 + (int64_t)u * G::STEP;
            if (BN_KEEP_PROBE == 2 && U > BN_FLOW_LOADS) break; /* bn_keep's U only */
            if (pos < at.p1) {
                const udnn_gpu_pack<T, W> xv = bn_pick<U>(xr, held, u, 0);
                udnn_gpu_pack<T, W> gv;
                if constexpr (BWD) gv = bn_pick<U>(gr, held, u, 1);
                bn_store_pack<T, BWD, BLEND>(a.out + bn_flow_off<ROWS, W>(a, g, at.f0, pos), kc,
                                             xv, gv, a.alpha, a.beta);
            }
        }
    });
}

/* An item's loads, then an R item's sums, or an A item's output once its
 * group is ready (APPLY: the loads are the data's second, last read). */
template <class T, int K, bool BWD, bool ROWS, int W, bool APPLY, class C>
__device__ __forceinline__ void bn_flow_item(const bn_flow_args<T, C> &a, uint32_t item,
                                             bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm)
{
    constexpr int U = BN_FLOW_LOADS;
    const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, item);
    udnn_gpu_pack<T, W> xr[U], gr[BWD ? U : 1];
    bn_flow_load<T, BWD, ROWS, W, U, APPLY>(a, at, xr, gr);
    if constexpr (APPLY) bn_flow_write<T, K, BWD, ROWS, W, U>(a, at, sm, xr, gr, false);
    else bn_flow_sum<T, K, BWD, ROWS, W, U, false>(a, item, at, sm, xr, gr);
}

/* R items `lag` tickets ahead of A items (udnn_gpu_flow). */
template <class T, int K, bool BWD, bool ROWS, int W>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, BWD ? BN_FLOW_MIN_BWD : BN_FLOW_MIN_FWD)
    bn_flow(bn_flow_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    __shared__ bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> sm;
    udnn_gpu_flow(a.ticket, a.NR, a.lag, &sm.ticket, [&](bool reduce, uint32_t item) {
        if (reduce) bn_flow_item<T, K, BWD, ROWS, W, false>(a, item, sm);
        else bn_flow_item<T, K, BWD, ROWS, W, true>(a, item, sm);
    });
}

/* ---- one read: training and backward with the data held on chip -------------------- */

/* Where a group's data fits in the registers of the resident blocks,
 * bn_keep reads x (and dy) once: each block loads an item (a slice of one
 * group, its registers' worth), sums it into the group's partials, waits
 * for the group's coefficients (the last item summed finishes them, as in
 * bn_flow, and keeps them in shared memory for its own item) and writes
 * its output from the registers, 2 tensors of traffic for 2 (3 for 3
 * backward). Every block of a group waits for the group's count of
 * items summed, then adds the partials itself, in one fixed order (no
 * second wait for a finisher's coefficients; the last in also writes the
 * statistics). Every item of a group must be resident at once: the grid
 * is a cooperative launch of the resident blocks (co-resident by
 * contract, even beside other kernels), and a group has no more items
 * than the grid. With TEAMS (the default), teams of S blocks take whole
 * groups, so an item waits only for its own team's current items; else
 * item i runs on block i % grid in round i / grid and waits only for
 * items of its round or of rounds before on other blocks, whose groups are
 * older (the oldest group always finishes). Same bits as bn_flow: the same
 * sums in the same order.
 *
 * An item is a thread's registers' worth and, for 16-byte loads, as many
 * again in shared memory (bn_held): fewer, larger items, so fewer rounds
 * of load, wait and store.
 *
 * Measured on the H100 (64 x 256 x 56 x 56, copy 2760 GB/s): f32 NCHW
 * training 2260 GB/s (registers alone 2031, bn_flow 1875), backward 2083
 * (1860, 1894); the blocks of a team load, then wait, then store
 * together, so memory idles part of each item. Loading the next item into
 * a second set of registers while finishing one ran slower (1411: half the
 * registers an item), as did 4 smaller blocks per multiprocessor (1910),
 * pausing between polls, and summing each load in float before double
 * (no faster; f16 NHWC training 830 against 1175). */

/* Tuning, at compile time: the 16-byte loads of each tensor a thread
 * holds for an item (training; backward holds x and dy); the fewest
 * resident blocks per multiprocessor the registers must allow; teams. */
#ifndef BN_KEEP_LOADS_FWD
#define BN_KEEP_LOADS_FWD 16
#endif
#ifndef BN_KEEP_LOADS_BWD
#define BN_KEEP_LOADS_BWD 8
#endif
#ifndef BN_KEEP_MIN
#define BN_KEEP_MIN 2
#endif
#ifndef BN_KEEP_TEAMS
#define BN_KEEP_TEAMS 1
#endif
/* the loads of each tensor held in shared memory besides, for 16-byte
 * loads; channels innermost (ROWS) apart: H100, 64 x 256 x 56 x 56, f16
 * NHWC training 1164 GB/s with 16, 1004 with 24 */
#ifndef BN_KEEP_HELD_FWD
#define BN_KEEP_HELD_FWD 24
#endif
#ifndef BN_KEEP_HELD_BWD
#define BN_KEEP_HELD_BWD 12
#endif
#ifndef BN_KEEP_HELD_ROWS_FWD
#define BN_KEEP_HELD_ROWS_FWD 16
#endif
#ifndef BN_KEEP_HELD_ROWS_BWD
#define BN_KEEP_HELD_ROWS_BWD 8
#endif

template <class T, bool BWD, bool ROWS, int W> struct bn_keep_loads {
    static constexpr int U = BWD ? BN_KEEP_LOADS_BWD : BN_KEEP_LOADS_FWD;
    static constexpr int H = W * sizeof(T) != 16 ? 0
                             : ROWS ? (BWD ? BN_KEEP_HELD_ROWS_BWD : BN_KEEP_HELD_ROWS_FWD)
                                    : (BWD ? BN_KEEP_HELD_BWD : BN_KEEP_HELD_FWD);
    /* a block's dynamic shared memory */
    static constexpr size_t SHARED = (size_t)H * (BWD ? 2 : 1) * 16 * UDNN_GPU_BLOCK;
};

template <class T, int K, bool BWD, bool ROWS, int W>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, BN_KEEP_MIN)
    bn_keep(bn_flow_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    typedef bn_keep_loads<T, BWD, ROWS, W> L;
    constexpr int U = L::U, H = L::H;
    __shared__ bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> sm;
    extern __shared__ uint4 bn_keep_shared[];
    const bn_held<T, W, H> held = {(udnn_gpu_pack<T, W> *)bn_keep_shared + threadIdx.x};
    /* TEAMS: the grid is teams of S blocks, block m of a team taking slice
     * m of the team's groups, so that a team waits only for itself and
     * teams drift apart (some load while others wait or store); else
     * items go round the whole grid */
    const uint32_t step = BN_KEEP_TEAMS ? gridDim.x / a.S * a.S : gridDim.x;
    uint32_t item = blockIdx.x;
    if (item >= a.NR || item >= step) return;
    for (; item < a.NR; item += step) {
        const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, item);
        udnn_gpu_pack<T, W> xr[U], gr[BWD ? U : 1];
        bn_flow_load<T, BWD, ROWS, W, U, true, H>(a, at, xr, gr, held);
        bn_flow_sum<T, K, BWD, ROWS, W, U, true, H>(a, item, at, sm, xr, gr, held, item + step);
        bn_flow_write<T, K, BWD, ROWS, W, U, H>(a, at, sm, xr, gr, BN_KEEP_SELF || sm.last,
                                                held);
        __syncthreads();
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* bn_keep where `keep` and each group's items fit in the resident
 * blocks, else bn_flow where `flow`; NOT_SUPPORTED, launching nothing,
 * where neither runs, the partials do not fit in scratch or the items in
 * 32 bits (bn_keep's partials are never more than bn_flow's: its items
 * are larger). */
template <class T, int K, bool BWD, bool ROWS, int W>
static udnnStatus_t bn_flow_go(const udnn_gpu_context *c,
                               bn_flow_args<T, typename bn_acc<T, BWD>::A> a, bool keep,
                               bool flow)
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    const int64_t groups = ROWS ? (a.F + G::FG - 1) / G::FG : a.F;
    typedef bn_keep_loads<T, BWD, ROWS, W> L;
    static udnn_gpu_cache keep_occupancy, flow_occupancy, keep_shared;
    /* bn_flow where the held loads' shared memory is refused */
    keep = keep && udnn_gpu_allow_shared(c, bn_keep<T, K, BWD, ROWS, W>, L::SHARED, &keep_shared);
    const int64_t keep_grid =
        keep ? c->sm_count * udnn_gpu_occupancy(c, bn_keep<T, K, BWD, ROWS, W>, UDNN_GPU_BLOCK,
                                                L::SHARED, &keep_occupancy)
             : 0;
    const int64_t keep_chunk = (int64_t)G::STEP * (L::U + L::H);
    const int64_t keep_S = (a.loads + keep_chunk - 1) / keep_chunk;
    keep = keep && keep_S <= keep_grid;
    if (keep) {
        /* slices of equal size, so that a group's items end together */
        const int64_t per_thread = (a.loads + keep_S * G::STEP - 1) / (keep_S * G::STEP);
        a.chunk = per_thread * G::STEP;
    } else {
        if (!flow) return UDNN_STATUS_NOT_SUPPORTED;
        a.chunk = (int64_t)G::STEP * BN_FLOW_LOADS;
    }
    const int64_t S = (a.loads + a.chunk - 1) / a.chunk, NR = groups * S;
    if (NR >= ((int64_t)1 << 30)) return UDNN_STATUS_NOT_SUPPORTED;
    a.S = (uint32_t)S;
    a.NR = (uint32_t)NR;
    const udnnStatus_t st = bn_scratch(c, 1 + 2 * groups, a.F, NR * K * G::FG, &a.ticket,
                                       &a.coef, &a.partial);
    if (st != UDNN_STATUS_SUCCESS) return st;
    a.done = a.ticket + 1;
    a.ready = a.done + groups;
    if (keep) {
        const int64_t blocks = keep_grid < NR ? keep_grid : NR;
        void *args[] = {&a};
        const udnnGpuError_t e =
            udnnGpuLaunchCooperativeKernel(bn_keep<T, K, BWD, ROWS, W>, (unsigned)blocks,
                                           UDNN_GPU_BLOCK, args, L::SHARED, c->stream);
        if (e != udnnGpuSuccess)
            return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                                 "launching batch norm's one-read kernel");
        return UDNN_STATUS_SUCCESS;
    }
    int64_t per_sm =
        udnn_gpu_occupancy(c, bn_flow<T, K, BWD, ROWS, W>, UDNN_GPU_BLOCK, 0, &flow_occupancy);
    if (per_sm > BN_FLOW_BLOCKS) per_sm = BN_FLOW_BLOCKS;
    const int64_t resident = c->sm_count * per_sm;
    const int64_t lag = S + resident * BN_FLOW_LAG;
    a.lag = (uint32_t)(lag < NR ? lag : NR);
    const int64_t blocks = resident < 2 * NR ? resident : 2 * NR;
    bn_flow<T, K, BWD, ROWS, W><<<(unsigned)blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(a);
    return udnn_gpu_launched();
}

/* Training (K = 2, !BWD) or backward in one launch (bn_flow), where the
 * mode is spatial and every tensor is dense in one layout; NOT_SUPPORTED,
 * launching nothing, elsewhere. 16-byte loads where the pointers are
 * aligned and a run (a row) is a whole number of vectors. */
template <class T, int K, bool BWD>
udnnStatus_t bn_flow_run(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    typedef typename bn_acc<T, BWD>::A C;
    if (p->mode == UDNN_BATCHNORM_PER_ACTIVATION) return UDNN_STATUS_NOT_SUPPORTED;
    const udnn_tensor *out = BWD ? &p->dx : &p->y;
    const udnn_tensor *ts[3] = {out, &p->x, &p->dy};
    if (!udnn_gpu_same_dense(ts, BWD ? 3 : 2)) return UDNN_STATUS_NOT_SUPPORTED;
    const int64_t total = udnn_gpu_count(&p->x), F = p->x.dims[1];
    if (total == 0) return UDNN_STATUS_NOT_SUPPORTED;
    bn_flow_args<T, C> a;
    memset(&a, 0, sizeof a);
    bn_args_from<T, BWD>(a, p);
    const int V = 16 / sizeof(T);
    const bool aligned = udnn_gpu_aligned16(p->x_ptr) && udnn_gpu_aligned16(p->out_ptr) &&
                         (!BWD || udnn_gpu_aligned16(p->dy_ptr));
    /* dense: element (o, f, i) of channel f is at (o * F + f) * run + i */
    const int64_t run = F == 1 ? total : p->x.strides[1];
    if (run == 1 && F > 1) {
        /* channels innermost: bn_rows.cu's whole rows in 16-byte loads
         * (BN_ROWS above); else, as measured on the H100 against the three
         * passes (64 x 256 x 56 x 56): bn_keep for 16-bit data (f16 NHWC
         * training 928 against 733 GB/s, backward 889 against 892), not
         * for FLOAT (training 1029 against 1188); bn_flow was slower than
         * both (f16 training 662), so only with BN_FLOW_ROWS */
        const bool keep = BN_KEEP && (BN_KEEP_ROWS_WIDE || sizeof(T) == 2);
        a.loads = a.M; /* rows of F channels */
        if (aligned && F % V == 0) {
            const int64_t bytes = total * (int64_t)sizeof(T) * (BWD ? 2 : 1);
            const bool rows = BN_ROWS && (!keep || bytes >= BN_ROWS_OVER_KEEP_BYTES);
            const udnnStatus_t st = rows ? bn_rows_run<T, K, BWD>(c, p) : UDNN_STATUS_NOT_SUPPORTED;
            if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
            return bn_flow_go<T, K, BWD, true, 16 / sizeof(T)>(c, a, keep, BN_FLOW_ROWS);
        }
        return bn_flow_go<T, K, BWD, true, 1>(c, a, keep, BN_FLOW_ROWS);
    }
    const int w = aligned && run % V == 0 ? V : 1;
    if constexpr (!BWD && sizeof(T) <= 4) {
        if (w > 1 && BN_CLUSTER) {
            const udnnStatus_t st = bn_cluster_run<T>(c, p, run);
            if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
        }
    }
    a.run = run;
    a.rstep = F * run;
    a.loads = a.M / w;
    if (a.loads >= ((int64_t)1 << 31)) return UDNN_STATUS_NOT_SUPPORTED;
    a.per_run = udnn_gpu_div32_make((uint32_t)(run / w));
    if (w > 1) return bn_flow_go<T, K, BWD, false, 16 / sizeof(T)>(c, a, BN_KEEP, true);
    return bn_flow_go<T, K, BWD, false, 1>(c, a, BN_KEEP, true);
}

/* the types and sums bn.cu asks for */
template udnnStatus_t bn_flow_run<float, 2, false>(const udnn_gpu_context *,
                                                   const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<float, 2, true>(const udnn_gpu_context *,
                                                  const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<float, 4, true>(const udnn_gpu_context *,
                                                  const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<double, 2, false>(const udnn_gpu_context *,
                                                    const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<double, 2, true>(const udnn_gpu_context *,
                                                   const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<double, 4, true>(const udnn_gpu_context *,
                                                   const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuHalf, 2, false>(const udnn_gpu_context *,
                                                         const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuHalf, 2, true>(const udnn_gpu_context *,
                                                        const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuHalf, 4, true>(const udnn_gpu_context *,
                                                        const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuBf16, 2, false>(const udnn_gpu_context *,
                                                         const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuBf16, 2, true>(const udnn_gpu_context *,
                                                        const udnn_bn_problem *);
template udnnStatus_t bn_flow_run<udnnGpuBf16, 4, true>(const udnn_gpu_context *,
                                                        const udnn_bn_problem *);
