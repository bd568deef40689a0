/* lrn.cu - cross-channel LRN forward and backward, FLOAT, DOUBLE, HALF and
 * BFLOAT16, 3-D to 5-D, any strides, alpha/beta blending, in place.
 * Semantics mirror cpu/ref/lrn.c: channel c's window is c - behind ...
 * c + ahead clipped to [0, C), behind = floor((n-1)/2), ahead = n-1-behind,
 *   s_c = k + alpha/n * sum of x^2 over the window,
 *   forward:  y_c = x_c * s_c^-beta,
 *   backward: dx_i = dy_i * s_i^-beta - 2*alpha*beta/n * x_i *
 *                    sum over j = i-ahead ... i+behind of dy_j * y_j / s_j.
 * Channels outside [0, C) read as x = dy = y = 0, which is the clipping:
 * they add nothing to a sum of squares, and dy_j * y_j / s_j is 0 there.
 *
 * The fast paths need every tensor with one set of strides and the
 * positions after C packed (position p at p * ps). Both are bound by DRAM
 * bandwidth, not by waiting: they read every input element from DRAM once
 * and write every output once, with no barrier (but in place) and no
 * shared memory but a thread's own, so every warp keeps its loads in
 * flight.
 *
 * walk (channels strided, as NCHW): a thread takes P adjacent positions
 * (one 16-byte, or 8 for 16-bit types, vector per channel when ps == 1) and
 * walks C, or a segment of it, U channels at a time, keeping in registers
 * the channels its windows still need and the loads of the next A chunks
 * of U channels in flight while it computes these U (lrn_chunk: the
 * 16-bit types' vectors are half as wide, so they take more channels a
 * chunk: forward 8 with a window cap of 5 or 11, backward 4 with a cap of
 * 5; the cap of 16 forward keeps A = 2, as do the backward's wide windows,
 * which walk 2 positions to fit four blocks a multiprocessor; the 16-bit
 * forward with a cap of 5 copies two chunks ahead into a ring of its own
 * shared memory). A warp's loads are coalesced along positions.
 * Forward keeps x of c - behind ... c + U - 1 + ahead; backward computes
 * s_j, dy_j * y_j / s_j and dy_j * s_j^-beta once per channel, `behind`
 * channels behind the loads, and dx `ahead` channels behind those. A thread
 * owns its columns, reading channel c before writing it, so an output may
 * be an input's buffer. A thread's walk is long, so the threads of one wave
 * end together: with the columns too few for the device to keep enough
 * loads in flight, or with a last wave far from full, the channels split
 * into segments (never in place), each thread loading its segment's halo.
 *
 * chan (channels contiguous, as NHWC): a thread takes V adjacent channels
 * (16 bytes) of one position, loading the neighbouring vectors its windows
 * reach (L1 hits: neighbouring lanes load them too); backward computes s
 * and dy * y / s for the V + n - 1 channels its dx need. In place, blocks
 * hold whole columns and a barrier between the loads and the stores keeps
 * every neighbour's read ahead of the write.
 *
 * The window is a template cap of 5, 11 or 16; where n is the cap (5 and
 * 11) every tap is compiled in and the windows of a thread's adjacent
 * outputs share their common terms (lrn_window_sums), else the taps of the
 * actual n are masked at run time. s^-beta goes through lrn_pow_neg:
 * beta 0.75 in FLOAT by reciprocal square roots, 16-bit types by the
 * hardware log2, the rest as precisely as before; dy * y / s through
 * lrn_div. The 16-bit forward was bound by the precise log2's
 * instructions, the wide FLOAT backward by masked taps and registers.
 *
 * Other layouts, or in place where chan's blocks cannot hold whole
 * columns: a thread per column (n, position) walks C as the reference does,
 * loading each channel once into a small ring so that writing channel c
 * never precedes a read of it. */
#include <math.h>

#include "cuda/kernels.h"

/* ---- parameters ------------------------------------------------------------------ */

template <class C> struct lrn_cfg {
    int behind, ahead;
    C k, alpha_over_n, beta, cross; /* cross = 2 * alpha/n * beta */
    C alpha, beta_blend;
};

/* s^-beta (s >= k > 0), by the kind of power a kernel is compiled for:
 * LRN_POW_ANY: any beta, through base-2 log and exp (skipping powf's
 *   special cases): in FLOAT the precise log2 (relative error a few 1e-7
 *   for the exponents LRN meets; its polynomial is most of the forward's
 *   instructions); in HALF and BFLOAT16 the hardware log2 (2 ulp of the
 *   log, 1e-6 of the result where s < 2^20, three orders below their
 *   tolerance); the full pow in double.
 * LRN_POW_3_4: beta = 0.75, cuDNN's default, FLOAT only: with r = s^-1/2,
 *   s^-3/4 = r * (r * r^-1/2), two hardware reciprocal roots (2 ulp each,
 *   some 8 ulp in all) and no log; r * r^-1/2 first, so that no step
 *   leaves the normal range (s < 2^128 keeps it above 2^-32), and r held
 *   at 2^-64 or more (where a finite s keeps it) so that an infinite s
 *   gives 0, as the log does, not 0 * inf. */
enum { LRN_POW_ANY, LRN_POW_3_4 };

/* The 16-bit types' power by the flushing approximations (udnnGpuExp2Ftz,
 * udnnGpuLog2Ftz), without the 6 instructions an element that scale
 * subnormals around them: the 16-bit forward is bound by its instructions
 * (H200, f16 64 x 256 x 56 x 56: 69% of issue slots busy, DRAM 57% of its
 * peak, ncu). H200, in one run against exp2f / __log2f, two passes: f16
 * forward 2745 / 2660 GB/s against 2456 / 2582, backward 2781 / 2781
 * against 2679 / 2740, bf16 forward 2719 / 2708 against 2589 / 2552. It
 * changes an output only where s^-beta < 2^-126, which needs s > 2^126 and
 * beta near 1 or more: HALF's outputs there are 0 either way (x < 2^16);
 * BFLOAT16's are below 2^-54, and become 0. */
template <class T, int PK>
__device__ __forceinline__ typename io<T>::C lrn_pow_neg(typename io<T>::C s,
                                                         typename io<T>::C beta)
{
    if constexpr (sizeof(T) == 8) {
        return pow(s, -beta);
    } else if constexpr (sizeof(T) == 2) {
        return udnnGpuExp2Ftz(-beta * udnnGpuLog2Ftz(s));
    } else if constexpr (PK == LRN_POW_3_4) {
        const float r = rsqrtf(s);
        return r * (r * rsqrtf(fmaxf(r, 0x1p-64f)));
    } else {
        return exp2f(-beta * log2f(s));
    }
}

/* a / s for the backward's dy * y / s (s >= k > 0): in float by reciprocal
 * and multiply (error 2 ulp for s below 2^126, where LRN's scales sit; 0
 * above, as a finite / inf is), a third of IEEE division's instructions;
 * exact division in double. */
__device__ __forceinline__ float lrn_div(float a, float s)
{
    return __fdividef(a, s);
}
__device__ __forceinline__ double lrn_div(double a, double s)
{
    return a / s;
}

template <class T>
__device__ __forceinline__ void lrn_store(T *out, typename io<T>::C v,
                                          const lrn_cfg<typename io<T>::C> &f)
{
    udnn_gpu_blend_store(out, v, f.alpha, f.beta_blend);
}

/* ---- vectors of P adjacent elements -------------------------------------------------- */

/* The vector at p, or zeros when !ok (p is not read then). 16-bit types
 * take the zeros as the word's bits (0 in every type): set element by
 * element, their vector was assembled half by half around the conditional
 * load, five byte permutes a 32-bit register. The 4- and 8-byte types keep
 * their elements (by words, their kernels grew by 8 to 32 instructions).
 * H200, two passes, bursts, 64 x 256 x 56 x 56 (copy 3995 GB/s), forward:
 * f16 3213 / 3229 GB/s against 3064 / 3081, bf16 3201 / 3215 against 3051
 * / 3066 (f32 3736 / 3742 against 3743 / 3746, the same code). An 8-byte
 * word as one uint64_t rather than a uint2 pair: backward f16 3339 / 3345
 * against 3161 / 3163, bf16 3345 / 3360 against 3141 / 3159; forward
 * within 1%. */
template <class T, int P> __device__ __forceinline__ udnn_gpu_pack<T, P> lrn_ld(const T *p, bool ok)
{
    typedef udnn_gpu_pack<T, P> R;
    R r;
    if constexpr (sizeof(T) == 2) {
        typedef typename udnn_gpu_word<sizeof(R)>::t W;
        W w{};
        if (ok) w = *(const W *)p;
        memcpy(&r, &w, sizeof r);
    } else if (ok) {
        r = *(const R *)p;
    } else {
#pragma unroll
        for (int k = 0; k < P; k++) r.v[k] = io<T>::st(typename io<T>::C(0));
    }
    return r;
}

template <class T, int P>
__device__ __forceinline__ void lrn_cvt(const udnn_gpu_pack<T, P> &v, typename io<T>::C (&out)[P])
{
#pragma unroll
    for (int k = 0; k < P; k++) out[k] = io<T>::ld(v.v[k]);
}

/* out[0..P) = alpha * v + beta * out, out not read when beta is 0. */
template <class T, int P>
__device__ __forceinline__ void lrn_put(T *out, const typename io<T>::C (&v)[P],
                                        const lrn_cfg<typename io<T>::C> &f)
{
    udnn_gpu_blend_store_pack<T, P>(out, v, f.alpha, f.beta_blend);
}

/* The taps of a window of cap NB behind and NA ahead that the actual n
 * uses: tap d (0 ... NB + NA) is offset d - NB; FULL: n is the cap's
 * NB + NA + 1, every tap (no masks in the code). */
template <int NB, int NA, bool FULL>
__device__ __forceinline__ void lrn_taps(int behind, int ahead, bool (&tap)[NB + NA + 1])
{
#pragma unroll
    for (int d = 0; d <= NB + NA; d++) tap[d] = FULL || (d - NB >= -behind && d - NB <= ahead);
}

/* The sum of v(d) over the taps in use, in tap order (the reference's
 * order), starting from the first so that a full window adds no 0. */
template <int N, class F>
__device__ __forceinline__ auto lrn_tap_sum(const bool (&tap)[N], F v) -> decltype(v(0))
{
    typedef decltype(v(0)) C;
    C sum = tap[0] ? v(0) : C(0);
#pragma unroll
    for (int d = 1; d < N; d++)
        if (tap[d]) sum += v(d);
    return sum;
}

/* out[u] = the sum of v(u + d) over the taps d in use, u < U. Masked: each
 * output by lrn_tap_sum. FULL: the outputs go in groups of up to N - 1,
 * whose windows share a core of terms that is summed once; each output
 * adds to it the terms before the core (suffix sums) and after it (prefix
 * sums), N + 3G - 6 additions for a group of G against G (N - 1). Every
 * sum has at most 16 terms, and the terms are squares of one sign or the
 * backward's R, summed within the same error bound in any order. */
template <int N, int U, bool FULL, class F, class C>
__device__ __forceinline__ void lrn_window_sums(const bool (&tap)[N], F v, C (&out)[U])
{
    if constexpr (!FULL || N < 3) {
#pragma unroll
        for (int u = 0; u < U; u++) out[u] = lrn_tap_sum(tap, [&](int d) { return v(u + d); });
    } else {
        enum { G = U < N - 1 ? U : N - 1 };
#pragma unroll
        for (int g0 = 0; g0 < U; g0 += G) {
            const int gn = U - g0 < G ? U - g0 : G; /* outputs g0 ... g0 + gn - 1 */
            C core = v(g0 + gn - 1);                /* positions gn - 1 ... N - 1 */
#pragma unroll
            for (int m = gn; m < N; m++) core += v(g0 + m);
            C left[G], right[G]; /* positions i ... gn - 2, and N ... N + i - 1 */
            if (gn >= 2) {
                left[gn - 2] = v(g0 + gn - 2);
#pragma unroll
                for (int i = gn - 3; i >= 0; i--) left[i] = v(g0 + i) + left[i + 1];
                right[1] = v(g0 + N);
#pragma unroll
                for (int i = 2; i < gn; i++) right[i] = right[i - 1] + v(g0 + N + i - 1);
            }
#pragma unroll
            for (int i = 0; i < gn; i++) {
                C sum = core;
                if (i < gn - 1) sum = left[i] + sum;
                if (i > 0) sum += right[i];
                out[g0 + i] = sum;
            }
        }
    }
}

/* ---- walk: a thread per P positions, along the channels -------------------------------- */

/* Block of the walk kernels: small, so that a grid of few columns still
 * spreads over the multiprocessors. */
#define LRN_WALK_BLOCK 128

typedef struct {
    int64_t c;               /* channels */
    int64_t ns, cs, ps;      /* strides of an image, a channel, a position (0 where the dim is 1) */
    int64_t groups;          /* groups of P positions per image */
    int64_t segs, cb;        /* channel segments per column and channels per segment */
    int64_t items;           /* images * segs * groups */
    udnn_gpu_fastdiv gdiv;   /* by groups */
    udnn_gpu_fastdiv sdiv;   /* by segs */
} lrn_walk;

/* Item g's image, segment and first position's offset; channels counted
 * in CI. */
template <int P, class CI>
__device__ __forceinline__ void lrn_walk_item(const lrn_walk &a, int64_t g, int64_t &off,
                                              CI &c_begin, CI &c_end)
{
    const int64_t q = (int64_t)udnn_gpu_fastdiv_q(a.gdiv, (uint64_t)g);
    const int64_t grp = g - q * a.groups;
    const int64_t img = (int64_t)udnn_gpu_fastdiv_q(a.sdiv, (uint64_t)q);
    const int64_t seg = q - img * a.segs;
    off = img * a.ns + grp * P * a.ps;
    c_begin = (CI)(seg * a.cb);
    c_end = (CI)(seg * a.cb + a.cb < a.c ? seg * a.cb + a.cb : a.c);
}

/* Forward: X[m] holds x of channel c0 - NB + m for the chunk c0 ... c0+U-1
 * being written; the loads of the A chunks after it are in flight while
 * its outputs are computed (nx[A * U], the next chunk first), or, with a
 * ring of S stages (S > 0), the copies of the S - 1 chunks after it: the
 * thread's own slots of shared memory, so no barrier, each chunk copied
 * into the stage read the iteration before, and waited for by count, so
 * that S - 1 chunks stay in flight while one is taken (lrn_chunk). */
template <class T, int P, int U, int A, int NB, int NA, bool FULL, int PK, int MINB, int S>
__global__ void __launch_bounds__(LRN_WALK_BLOCK, MINB)
    lrn_fwd_walk_kernel(lrn_walk a, const T *x, T *y, lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, P> V;
    enum { W = NB + NA };
    __shared__ V ring[S > 0 ? S * U : 1][LRN_WALK_BLOCK];
    bool tap[W + 1];
    lrn_taps<NB, NA, FULL>(f.behind, f.ahead, tap);
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.items)
    {
        int64_t off, c_begin, c_end;
        lrn_walk_item<P>(a, g, off, c_begin, c_end);
        const int64_t x_end = c_end + NA < a.c ? c_end + NA : a.c; /* channels read: < x_end */
        const T *xp = x + off;
        T *yp = y + off;
        C X[U + W][P];
        const T *xq = xp + (c_begin - NB) * a.cs; /* channel c_begin - NB, then onwards */
#pragma unroll
        for (int m = 0; m < W; m++, xq += a.cs) {
            const int64_t ch = c_begin - NB + m;
            lrn_cvt<T, P>(lrn_ld<T, P>(xq, ch >= 0 && ch < x_end), X[m]);
        }
        udnn_gpu_pack<T, P> nx[S > 0 ? 1 : A * U];
        V *slot = &ring[0][threadIdx.x]; /* stage k, channel u: slot[(k * U + u) * BLOCK] */
        int put = S - 1, take = 0;
        if constexpr (S > 0) {
#pragma unroll
            for (int k = 0; k < S - 1; k++) {
#pragma unroll
                for (int u = 0; u < U; u++, xq += a.cs)
                    udnnGpuCopyAsyncOrZero<sizeof(V)>(slot + (k * U + u) * LRN_WALK_BLOCK, xq,
                                                      c_begin + NA + k * U + u < x_end);
                udnnGpuCopyAsyncCommit();
            }
        } else {
#pragma unroll
            for (int i = 0; i < A * U; i++, xq += a.cs)
                nx[i] = lrn_ld<T, P>(xq, c_begin + NA + i < x_end);
        }
        T *yq = yp + c_begin * a.cs;
        for (int64_t c0 = c_begin; c0 < c_end; c0 += U) {
            if constexpr (S > 0) {
#pragma unroll
                for (int u = 0; u < U; u++, xq += a.cs)
                    udnnGpuCopyAsyncOrZero<sizeof(V)>(slot + (put * U + u) * LRN_WALK_BLOCK, xq,
                                                      c0 + (S - 1) * U + NA + u < x_end);
                udnnGpuCopyAsyncCommit();
                udnnGpuCopyAsyncWaitPending<S - 1>();
#pragma unroll
                for (int u = 0; u < U; u++)
                    lrn_cvt<T, P>(slot[(take * U + u) * LRN_WALK_BLOCK], X[W + u]);
                put = take;
                take = take + 1 < S ? take + 1 : 0;
            } else {
#pragma unroll
                for (int u = 0; u < U; u++) lrn_cvt<T, P>(nx[u], X[W + u]);
#pragma unroll
                for (int i = 0; i < (A - 1) * U; i++) nx[i] = nx[i + U];
#pragma unroll
                for (int u = 0; u < U; u++, xq += a.cs)
                    nx[(A - 1) * U + u] = lrn_ld<T, P>(xq, c0 + A * U + NA + u < x_end);
            }
            C r[U][P];
#pragma unroll
            for (int k = 0; k < P; k++) {
                C sum[U];
                lrn_window_sums<W + 1, U, FULL>(
                    tap, [&](int m) { return X[m][k] * X[m][k]; }, sum);
#pragma unroll
                for (int u = 0; u < U; u++)
                    r[u][k] =
                        X[u + NB][k] * lrn_pow_neg<T, PK>(f.k + f.alpha_over_n * sum[u], f.beta);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                if (c0 + u < c_end) lrn_put<T, P>(yq, r[u], f);
                yq += a.cs;
            }
#pragma unroll
            for (int m = 0; m < W; m++)
#pragma unroll
                for (int k = 0; k < P; k++) X[m][k] = X[m + U][k];
        }
        if constexpr (S > 0) udnnGpuCopyAsyncWait(); /* the copies past the walk, before a reuse */
    }
}

/* Backward, for the chunk c0 ... c0+U-1 being written:
 *   X[m] = x of channel c0 + m,
 *   R[m] = dy * y / s of channel c0 - NA + m,
 *   D[m] = dy * s^-beta of channel c0 + m;
 * a chunk computes s for channels c0 + NB ... (the last R and D) from X,
 * then dx for c0 ... from R, the loads of the A chunks after it in flight.
 * The walk starts KW chunks before its segment so that the first written
 * chunk finds R and D complete. Its channels are counted in int, so
 * tensors of more than LRN_BWD_WALK_C_MAX channels take the column kernel:
 * every load's bounds test was a 64-bit compare. H200, two passes, bursts,
 * 64 x 256 x 56 x 56 (copy 3995 GB/s): f16 3136 / 3146 GB/s against 2958 /
 * 2966 counted in int64_t, bf16 3133 / 3140 against 3010 / 3011. The
 * forward walk ran slower in int (f16 3139 / 3135 against 3213 / 3229) and
 * keeps int64_t. */
#define LRN_BWD_WALK_C_MAX (INT32_MAX - 64)
template <class T, int P, int U, int A, int NB, int NA, bool FULL, int PK, int MINB>
__global__ void __launch_bounds__(LRN_WALK_BLOCK, MINB)
    lrn_bwd_walk_kernel(lrn_walk a, const T *x, const T *y, const T *dy, T *dx,
                        lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    enum { W = NB + NA, KW = (W + U - 1) / U };
    bool tap[W + 1], rtap[W + 1];
    lrn_taps<NB, NA, FULL>(f.behind, f.ahead, tap);
    lrn_taps<NA, NB, FULL>(f.ahead, f.behind, rtap); /* offsets -NA ... NB: j - i */
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.items)
    {
        int64_t off;
        int c_begin, c_end;
        lrn_walk_item<P>(a, g, off, c_begin, c_end);
        const int x_end = c_end + W < a.c ? c_end + W : (int)a.c;
        const int r_end = c_end + NB < a.c ? c_end + NB : (int)a.c;
        const int c_start = c_begin - KW * U;
        /* x from channel c_start, y and dy from c_start + NB, dx from c_start */
        const T *xq = x + off + c_start * a.cs, *yq = y + off + (c_start + NB) * a.cs,
                *dyq = dy + off + (c_start + NB) * a.cs;
        T *dxq = dx + off + c_start * a.cs;
        C X[U + W][P], R[U + W][P], D[U + NB][P];
#pragma unroll
        for (int m = 0; m < W; m++, xq += a.cs) {
            const int ch = c_start + m;
            lrn_cvt<T, P>(lrn_ld<T, P>(xq, ch >= 0 && ch < x_end), X[m]);
#pragma unroll
            for (int k = 0; k < P; k++) R[m][k] = C(0);
        }
#pragma unroll
        for (int m = 0; m < NB; m++)
#pragma unroll
            for (int k = 0; k < P; k++) D[m][k] = C(0);
        udnn_gpu_pack<T, P> nx[A * U], ny[A * U], ndy[A * U];
#pragma unroll
        for (int i = 0; i < A * U; i++, xq += a.cs, yq += a.cs, dyq += a.cs) {
            const int ch = c_start + W + i, cr = c_start + NB + i;
            nx[i] = lrn_ld<T, P>(xq, ch >= 0 && ch < x_end);
            ny[i] = lrn_ld<T, P>(yq, cr >= 0 && cr < r_end);
            ndy[i] = lrn_ld<T, P>(dyq, cr >= 0 && cr < r_end);
        }
        for (int c0 = c_start; c0 < c_end; c0 += U) {
            C Y[U][P], DY[U][P];
#pragma unroll
            for (int u = 0; u < U; u++) {
                lrn_cvt<T, P>(nx[u], X[W + u]);
                lrn_cvt<T, P>(ny[u], Y[u]);
                lrn_cvt<T, P>(ndy[u], DY[u]);
            }
#pragma unroll
            for (int i = 0; i < (A - 1) * U; i++) {
                nx[i] = nx[i + U];
                ny[i] = ny[i + U];
                ndy[i] = ndy[i + U];
            }
#pragma unroll
            for (int u = 0; u < U; u++, xq += a.cs, yq += a.cs, dyq += a.cs) {
                const int ch = c0 + A * U + W + u, cr = c0 + A * U + NB + u;
                const int i = (A - 1) * U + u;
                nx[i] = lrn_ld<T, P>(xq, ch >= 0 && ch < x_end);
                ny[i] = lrn_ld<T, P>(yq, cr >= 0 && cr < r_end);
                ndy[i] = lrn_ld<T, P>(dyq, cr >= 0 && cr < r_end);
            }
            /* channel j = c0 + NB + u */
#pragma unroll
            for (int k = 0; k < P; k++) {
                C sum[U];
                lrn_window_sums<W + 1, U, FULL>(
                    tap, [&](int m) { return X[m][k] * X[m][k]; }, sum);
#pragma unroll
                for (int u = 0; u < U; u++) {
                    const C s = f.k + f.alpha_over_n * sum[u];
                    R[W + u][k] = lrn_div(DY[u][k] * Y[u][k], s);
                    D[NB + u][k] = DY[u][k] * lrn_pow_neg<T, PK>(s, f.beta);
                }
            }
            /* channel i = c0 + u */
            C r[U][P];
#pragma unroll
            for (int k = 0; k < P; k++) {
                C through[U];
                lrn_window_sums<W + 1, U, FULL>(rtap, [&](int m) { return R[m][k]; }, through);
#pragma unroll
                for (int u = 0; u < U; u++) r[u][k] = D[u][k] - f.cross * X[u][k] * through[u];
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int i = c0 + u;
                if (i >= c_begin && i < c_end) lrn_put<T, P>(dxq, r[u], f);
                dxq += a.cs;
            }
#pragma unroll
            for (int m = 0; m < W; m++)
#pragma unroll
                for (int k = 0; k < P; k++) {
                    X[m][k] = X[m + U][k];
                    R[m][k] = R[m + U][k];
                }
#pragma unroll
            for (int m = 0; m < NB; m++)
#pragma unroll
                for (int k = 0; k < P; k++) D[m][k] = D[m + U][k];
        }
    }
}

/* ---- chan: a thread per V adjacent channels of one position ------------------------------ */

/* The most threads in a chan block (blocks hold whole columns). */
#define LRN_CHAN_BLOCK 256

typedef struct {
    int64_t c, s;            /* channels, positions */
    int64_t ns, ps;          /* strides of an image and a position (0 where the dim is 1) */
    int64_t cv;              /* vectors per column, c / V */
    int64_t items;           /* images * s * cv */
    udnn_gpu_fastdiv cvdiv;  /* by cv */
    udnn_gpu_fastdiv pdiv;   /* by s */
} lrn_chan;

/* Item t's offset (of its first channel) and its first channel. */
template <int V>
__device__ __forceinline__ void lrn_chan_item(const lrn_chan &a, int64_t t, int64_t &off,
                                              int64_t &c)
{
    const int64_t col = (int64_t)udnn_gpu_fastdiv_q(a.cvdiv, (uint64_t)t);
    const int64_t img = (int64_t)udnn_gpu_fastdiv_q(a.pdiv, (uint64_t)col);
    c = (t - col * a.cv) * V;
    off = img * a.ns + (col - img * a.s) * a.ps + c;
}

/* Loads the K vectors of channels c + (k - H) * V, k < K, of the column at
 * p (channel c), zeros outside [0, C). */
template <class T, int V, int K, int H>
__device__ __forceinline__ void lrn_chan_load(const T *p, int64_t c, int64_t channels, bool act,
                                              typename io<T>::C (&out)[K * V])
{
#pragma unroll
    for (int k = 0; k < K; k++) {
        const int64_t ch = c + (k - H) * V;
        typename io<T>::C v[V];
        lrn_cvt<T, V>(lrn_ld<T, V>(p + (k - H) * V, act && ch >= 0 && ch < channels), v);
#pragma unroll
        for (int u = 0; u < V; u++) out[k * V + u] = v[u];
    }
}

/* Forward: X holds channels c - HB*V ... c + (HA+1)*V - 1. */
template <class T, int V, int NB, int NA, bool FULL, int PK>
__global__ void __launch_bounds__(LRN_CHAN_BLOCK)
    lrn_fwd_chan_kernel(lrn_chan a, const T *x, T *y, lrn_cfg<typename io<T>::C> f, bool sync)
{
    typedef typename io<T>::C C;
    enum { W = NB + NA, HB = (NB + V - 1) / V, HA = (NA + V - 1) / V, K = HB + 1 + HA };
    bool tap[W + 1];
    lrn_taps<NB, NA, FULL>(f.behind, f.ahead, tap);
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t0 = (int64_t)blockIdx.x * blockDim.x; t0 < a.items; t0 += step) {
        const int64_t t = t0 + threadIdx.x;
        const bool act = t < a.items;
        int64_t off, c;
        lrn_chan_item<V>(a, t, off, c);
        C X[K * V];
        lrn_chan_load<T, V, K, HB>(x + off, c, a.c, act, X);
        if (sync) __syncthreads(); /* every read of the block's columns before a write */
        if (!act) continue;
        C sum[V], r[V];
        lrn_window_sums<W + 1, V, FULL>(
            tap,
            [&](int m) {
                const C v = X[HB * V - NB + m];
                return v * v;
            },
            sum);
#pragma unroll
        for (int u = 0; u < V; u++)
            r[u] = X[HB * V + u] * lrn_pow_neg<T, PK>(f.k + f.alpha_over_n * sum[u], f.beta);
        lrn_put<T, V>(y + off, r, f);
    }
}

/* Backward: X holds x of channels c - HX*V ..., G and Y dy and y of
 * channels c - HR*V ...; s and dy * y / s for the V + W channels
 * c - NA ... c + V - 1 + NB that the thread's dx need. */
template <class T, int V, int NB, int NA, bool FULL, int PK>
__global__ void __launch_bounds__(LRN_CHAN_BLOCK)
    lrn_bwd_chan_kernel(lrn_chan a, const T *x, const T *y, const T *dy, T *dx,
                        lrn_cfg<typename io<T>::C> f, bool sync)
{
    typedef typename io<T>::C C;
    enum {
        W = NB + NA,
        HX = (W + V - 1) / V,
        KX = 2 * HX + 1,
        HR = (NA + V - 1) / V,
        KR = HR + 1 + (NB + V - 1) / V
    };
    bool tap[W + 1], rtap[W + 1];
    lrn_taps<NB, NA, FULL>(f.behind, f.ahead, tap);
    lrn_taps<NA, NB, FULL>(f.ahead, f.behind, rtap);
    const int64_t step = (int64_t)gridDim.x * blockDim.x;
    for (int64_t t0 = (int64_t)blockIdx.x * blockDim.x; t0 < a.items; t0 += step) {
        const int64_t t = t0 + threadIdx.x;
        const bool act = t < a.items;
        int64_t off, c;
        lrn_chan_item<V>(a, t, off, c);
        C X[KX * V], G[KR * V], Y[KR * V];
        lrn_chan_load<T, V, KX, HX>(x + off, c, a.c, act, X);
        lrn_chan_load<T, V, KR, HR>(dy + off, c, a.c, act, G);
        lrn_chan_load<T, V, KR, HR>(y + off, c, a.c, act, Y);
        if (sync) __syncthreads(); /* every read of the block's columns before a write */
        if (!act) continue;
        C sum[V + W], R[V + W], D[V];
        lrn_window_sums<W + 1, V + W, FULL>(
            tap,
            [&](int m) {
                const C v = X[HX * V - NA - NB + m];
                return v * v;
            },
            sum);
#pragma unroll
        for (int jj = 0; jj < V + W; jj++) { /* channel c - NA + jj */
            const C s = f.k + f.alpha_over_n * sum[jj];
            const C g = G[HR * V - NA + jj];
            R[jj] = lrn_div(g * Y[HR * V - NA + jj], s);
            if (jj >= NA && jj < NA + V) D[jj - NA] = g * lrn_pow_neg<T, PK>(s, f.beta);
        }
        C through[V], r[V];
        lrn_window_sums<W + 1, V, FULL>(rtap, [&](int m) { return R[m]; }, through);
#pragma unroll
        for (int u = 0; u < V; u++) r[u] = D[u] - f.cross * X[HX * V + u] * through[u];
        lrn_put<T, V>(dx + off, r, f);
    }
}

/* ---- the column kernels: any strides ---------------------------------------------------- */

/* Per tensor: strides of n, c and up to three dims after c. */
typedef struct {
    int64_t n, c, s;
    int nsp;
    int64_t sp[3];
    int64_t st[4][5]; /* x, y, dy, dx (forward: x, y) */
} lrn_cols;

__device__ __forceinline__ int64_t lrn_col_base(const lrn_cols &a, int t, int64_t img, int64_t s)
{
    int64_t off = img * a.st[t][0];
    for (int k = a.nsp - 1; k >= 0; k--) {
        int64_t q = s / a.sp[k];
        off += (s - q * a.sp[k]) * a.st[t][2 + k];
        s = q;
    }
    return off;
}

/* A column touches at most 2n - 1 channels around the one being written. */
#define LRN_RING (2 * UDNN_LRN_MAX_N)

/* The channels of one column of one input, each loaded once, on first use. */
template <class T> struct lrn_ring {
    typedef typename io<T>::C C;
    const T *p;
    int64_t cs, loaded;
    C v[LRN_RING];

    __device__ void start(const T *base, int64_t c_stride)
    {
        p = base;
        cs = c_stride;
        loaded = 0;
    }
    /* channel c, never LRN_RING or more below the highest loaded */
    __device__ C get(int64_t c)
    {
        while (loaded <= c) {
            v[loaded % LRN_RING] = io<T>::ld(p[loaded * cs]);
            loaded++;
        }
        return v[c % LRN_RING];
    }
};

template <class T>
__device__ typename io<T>::C lrn_col_scale(const lrn_cfg<typename io<T>::C> &f, int64_t channels,
                                           lrn_ring<T> &x, int64_t c)
{
    typedef typename io<T>::C C;
    const int64_t lo = c - f.behind < 0 ? 0 : c - f.behind;
    const int64_t hi = c + f.ahead > channels - 1 ? channels - 1 : c + f.ahead;
    C sum = C(0);
    for (int64_t j = lo; j <= hi; j++) {
        const C v = x.get(j);
        sum += v * v;
    }
    return f.k + f.alpha_over_n * sum;
}

template <class T>
__global__ void lrn_fwd_col_kernel(lrn_cols a, const T *x, T *y, lrn_cfg<typename io<T>::C> f)
{
    lrn_ring<T> xr;
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.n * a.s)
    {
        const int64_t img = g / a.s, s = g - img * a.s;
        xr.start(x + lrn_col_base(a, 0, img, s), a.st[0][1]);
        T *yb = y + lrn_col_base(a, 1, img, s);
        for (int64_t ch = 0; ch < a.c; ch++) {
            const typename io<T>::C sc = lrn_col_scale<T>(f, a.c, xr, ch);
            lrn_store(yb + ch * a.st[1][1],
                      xr.get(ch) * lrn_pow_neg<T, LRN_POW_ANY>(sc, f.beta), f);
        }
    }
}

template <class T>
__global__ void lrn_bwd_col_kernel(lrn_cols a, const T *x, const T *y, const T *dy, T *dx,
                                   lrn_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    lrn_ring<T> xr, yr, dyr;
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.n * a.s)
    {
        const int64_t img = g / a.s, s = g - img * a.s;
        xr.start(x + lrn_col_base(a, 0, img, s), a.st[0][1]);
        yr.start(y + lrn_col_base(a, 1, img, s), a.st[1][1]);
        dyr.start(dy + lrn_col_base(a, 2, img, s), a.st[2][1]);
        T *dxb = dx + lrn_col_base(a, 3, img, s);
        for (int64_t i = 0; i < a.c; i++) {
            const int64_t lo = i - f.ahead < 0 ? 0 : i - f.ahead;
            const int64_t hi = i + f.behind > a.c - 1 ? a.c - 1 : i + f.behind;
            C through = C(0);
            for (int64_t j = lo; j <= hi; j++)
                through += dyr.get(j) * yr.get(j) / lrn_col_scale<T>(f, a.c, xr, j);
            const C direct =
                dyr.get(i) * lrn_pow_neg<T, LRN_POW_ANY>(lrn_col_scale<T>(f, a.c, xr, i), f.beta);
            lrn_store(dxb + i * a.st[3][1], direct - f.cross * xr.get(i) * through, f);
        }
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

/* The fewest resident blocks of the 16-bit forward walk with a window cap
 * of 5 (a register cap; 1: none; the wider caps' arrays would spill).
 * Uncapped, its kernel took 96 registers, 28% of a multiprocessor's
 * warps, and stalled on its loads (H100, f16 NCHW, 64 x 256 x 56 x 56:
 * DRAM 71% busy). 6 (80 registers, 4 channels a chunk) took it from 2128
 * to 2205 GB/s, bf16 from 1818 to 2252, f16 32 x 64 x 112 x 112 from 1826
 * to 2037; 7 gave 2163 / 1658 / 1982, 8 (spills) 1573 / 1009 / 1374. With
 * 8 channels a chunk (lrn_chunk) it took 96 registers, 5 blocks; with its
 * ring of 3 stages, 108 registers and 24 KB, 4 blocks. */
#ifndef LRN_FWD_MINB_16
#define LRN_FWD_MINB_16 4
#endif
/* The stages of the 16-bit forward's ring with a window cap of 5 (0: its
 * chunks loaded into registers, as with LRN_FWD_MINB_16 5 before the
 * ring, for comparison; lrn_chunk). */
#ifndef LRN_FWD_RING
#define LRN_FWD_RING 3
#endif

/* Chunks of the walks, for storage type T and a window cap of W + 1:
 * channels a thread computes at once (U) and chunks whose loads it keeps
 * in flight meanwhile (A). ptxas waits for all of a thread's loads in
 * flight at once (one scoreboard, no count), where a chunk's first value
 * is taken, so a second chunk in flight (A = 2) kept no more bytes in
 * flight than one. The 16-bit walks with a cap of 5 take one chunk of
 * more channels instead, as many bytes in flight (a chunk's 8-byte
 * vectors) as FLOAT's forward: H200, bursts, three passes, 64 x 256 x 56
 * x 56, GB/s (copy f16 about 4000), forward 8 channels a chunk, 96
 * registers, 5 blocks: f16 3426 / 3432 / 3406 against 3251 / 3236 / 3231
 * with two chunks of 4 (4 a chunk, 72 registers, 7 blocks: 3403 / 3402 /
 * 3371; 8, 4 blocks: 3394 / 3396 / 3376); backward 4 channels a chunk,
 * 164 registers, 3 blocks: f16 3688 / 3685 / 3687 against 3336 / 3327 /
 * 3332 with two chunks of 2 (3 a chunk, 4 blocks: 3529 / 3534 / 3541; 2,
 * 5 blocks: 3391 / 3391 / 3388); bf16 alike. The 16-bit forward walks
 * with a cap of 11 take one chunk of 8 channels too: f16 n = 11 3096 /
 * 3094 / 3088 against 2929 / 2945 / 2946, masked n = 7 2871 / 2865 /
 * 2862 against 2719 / 2734 / 2735, n = 9 +4.5%, bf16 n = 11 +5.3%, 32 x
 * 64 x 112 x 112 n = 11 +7.5%; with a cap of 16 one chunk of 8 lost 7%
 * (2247 to 2258 against 2411 to 2424), one of 4 3%, so that cap keeps
 * two chunks of 4. The 16-bit forward with a cap of 5 copies its chunks
 * of 8 channels ahead into a ring of 3 stages in shared memory
 * (FWD_RING), two chunks in flight while it computes one, which
 * registers could not give: 64 x 256 x 56 x 56 f16 3469 / 3439 / 3474
 * against 3431 / 3430 / 3398 (copy 4025 / 4029 / 3996), bf16 3461 / 3449
 * / 3463 against 3387 / 3418 / 3413, masked n = 3 3427 / 3429 / 3414
 * against 3356 / 3371 / 3364; 32 x 64 x 112 x 112 takes the narrower
 * chunks (lrn_fwd_walk_go), level. 4 stages of 4 channels, 7 blocks: f16
 * 3435 / 3427 / 3408, 3 stages of 4: 3398 / 3393 / 3404, 3 of 8 at 5
 * blocks (spills): 3378 / 3377 / 3376; in a second call, 4 stages of 8
 * (32 KB) 3468 / 3454 / 3439 against 3445 / 3472 / 3451 with 3, 2 stages
 * at 5 blocks 3391 / 3393 / 3393. The backward's arrays grow with
 * the window: past a cap of 5, FLOAT and the 16-bit types walk 2
 * positions a thread (BWD_NARROW), keeping two chunks in flight, so that
 * four blocks fit a multiprocessor (BWD_MINB); with 4 positions they took
 * some 210 registers, two blocks, too few loads in flight and too few
 * warps to hide the latency of the arithmetic. */
template <class T, int W> struct lrn_chunk {
    enum {
        CAP5_16 = sizeof(T) == 2 && W <= 4, /* a 16-bit type, a cap of 5 */
        FWD_U = sizeof(T) == 2 && W <= 10 ? 8 : 4,
        FWD_A = sizeof(T) == 2 && W > 10 ? 2 : 1,
        BWD_NARROW = sizeof(T) <= 4 && W > 4,
        BWD_U = CAP5_16 ? 4 : 2,
        BWD_A = (sizeof(T) == 2 && !CAP5_16) || BWD_NARROW ? 2 : 1,
        BWD_MINB = sizeof(T) == 8 ? 1 : W > 10 || CAP5_16 ? 3 : 4,
        FWD_MINB = CAP5_16 ? LRN_FWD_MINB_16 : 1,
        FWD_RING = CAP5_16 ? LRN_FWD_RING : 0
    };
};

static int64_t lrn_positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

static int lrn_same_strides(const udnn_tensor *a, const udnn_tensor *b)
{
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* One tensor's geometry when the positions after C are packed (position p
 * at p * ps); strides of dims of 1 read as 0. */
typedef struct {
    int64_t n, c, s, ns, cs, ps;
} lrn_geom;

static int lrn_geom_of(const udnn_tensor *t, lrn_geom *g)
{
    g->n = t->dims[0];
    g->c = t->dims[1];
    g->s = lrn_positions(t);
    g->ns = g->n > 1 ? t->strides[0] : 0;
    g->cs = g->c > 1 ? t->strides[1] : 0;
    g->ps = 0; /* no dim after C above 1: one position */
    int64_t want = 0;
    for (int i = t->rank - 1; i >= 2; i--) {
        if (t->dims[i] == 1) continue;
        if (want == 0) g->ps = want = t->strides[i];
        if (t->strides[i] != want) return 0;
        want *= t->dims[i];
    }
    return 1;
}

/* Bytes from a tensor's first element to past its last. */
static int64_t lrn_span(const udnn_tensor *t, size_t elem)
{
    int64_t last = 0;
    for (int i = 0; i < t->rank; i++) last += (t->dims[i] - 1) * t->strides[i];
    return (last + 1) * (int64_t)elem;
}

/* The output's memory meets an input's (in place). */
static int lrn_overlaps(const void *out, const udnn_tensor *to, const void *in,
                        const udnn_tensor *ti, size_t elem)
{
    const char *o = (const char *)out, *i = (const char *)in;
    return o < i + lrn_span(ti, elem) && i < o + lrn_span(to, elem);
}

/* A tensor's vectors of v elements along the unit-stride dim are aligned:
 * the pointer, and every stride but the unit one and the count along it. */
static int lrn_vec_ok(const void *p, size_t elem, int v, const lrn_geom &g, int chan)
{
    if (v <= 1) return 1;
    if ((uintptr_t)p % ((size_t)v * elem) != 0) return 0;
    if (g.ns % v != 0) return 0;
    if (chan) return g.c % v == 0 && g.ps % v == 0;
    return g.s % v == 0 && g.cs % v == 0;
}

static lrn_cols lrn_cols_of(const udnn_tensor *const *ts, int nt)
{
    lrn_cols a;
    memset(&a, 0, sizeof a);
    const udnn_tensor *t = ts[0];
    a.n = t->dims[0];
    a.c = t->dims[1];
    a.s = lrn_positions(t);
    a.nsp = t->rank - 2;
    for (int i = 0; i < a.nsp; i++) a.sp[i] = t->dims[2 + i];
    for (int k = 0; k < nt; k++)
        for (int i = 0; i < t->rank; i++) a.st[k][i] = ts[k]->strides[i];
    return a;
}

template <class C> static lrn_cfg<C> lrn_cfg_of(const udnn_lrn_problem *p)
{
    lrn_cfg<C> f;
    f.behind = ((int)p->n - 1) / 2;
    f.ahead = (int)p->n - 1 - f.behind;
    const double alpha_over_n = p->lrn_alpha / p->n;
    f.k = (C)p->lrn_k;
    f.alpha_over_n = (C)alpha_over_n;
    f.beta = (C)p->lrn_beta;
    f.cross = (C)(2.0 * alpha_over_n * p->lrn_beta);
    f.alpha = (C)p->alpha;
    f.beta_blend = (C)p->beta;
    return f;
}

static unsigned lrn_blocks(const udnn_gpu_context *c, int64_t items, int block)
{
    int64_t b = (items + block - 1) / block;
    if (b > c->max_blocks) b = c->max_blocks;
    return b < 1 ? 1u : (unsigned)b;
}

/* Channel segments per column for a walk of `cols` columns when `resident`
 * threads fit on the device at once. Each thread walks a whole segment, so
 * the threads of one wave end together: too few columns leave the device
 * short of loads in flight, and a last wave far from full leaves it idle.
 * Of 1 to 8 segments (more where few columns need them to fill one wave),
 * the one whose walk fills the resident threads best (the last wave's
 * share) times the share of the bytes moved that the halo (w channels a
 * segment, read again) leaves: 2 * channels of each column (read and
 * written) against 2 * channels + segs * w. In place never splits: a
 * segment reads its neighbours' channels. H100, 64 x 256 x 56 x 56 f16
 * (50176 columns of 4 positions, 59% of the resident threads unsplit):
 * forward 2113 GB/s against 1842 with one segment wherever the columns
 * fit one wave, backward 2300 against 2134. */
static int64_t lrn_segments(int64_t cols, int64_t resident, int64_t channels, int64_t min_cb,
                            int in_place, int64_t u, int64_t w)
{
    const int64_t most = channels / min_cb;
    if (in_place || most <= 1 || cols < 1) return 1;
    int64_t top = 8;
    if (cols * top < resident) top = (resident + cols - 1) / cols;
    if (top > most) top = most;
    int64_t best = 1;
    double best_score = -1.0;
    for (int64_t s = 1; s <= top; s++) {
        int64_t cb = (channels + s - 1) / s;
        cb = (cb + u - 1) / u * u;
        const int64_t segs = (channels + cb - 1) / cb;
        if (segs != s) continue; /* the same split as a smaller s */
        const double waves = (double)(segs * cols) / (double)resident;
        const double score = waves / ceil(waves) * (double)(2 * channels) /
                             (double)(2 * channels + segs * w);
        if (score > best_score + 1e-9) {
            best = s;
            best_score = score;
        }
    }
    return best;
}

/* The walk over g in groups of p positions, chunks of u channels, a
 * window cap of w + 1, for a kernel with blocks_per_sm resident blocks per
 * multiprocessor. */
static lrn_walk lrn_walk_of(const udnn_gpu_context *c, const lrn_geom &g, int p, int u, int w,
                            int in_place, int64_t blocks_per_sm)
{
    lrn_walk a;
    memset(&a, 0, sizeof a);
    a.c = g.c;
    a.ns = g.ns;
    a.cs = g.cs;
    a.ps = g.ps;
    a.groups = g.s / p;
    const int64_t cols = g.n * a.groups;
    /* a segment of at least twice its halo and its chunk */
    int64_t min_cb = 2 * (w + u);
    if (min_cb < 16) min_cb = 16;
    const int64_t resident = blocks_per_sm * c->sm_count * LRN_WALK_BLOCK;
    const int64_t segs = lrn_segments(cols, resident, g.c, min_cb, in_place, u, w);
    a.cb = (g.c + segs - 1) / segs;
    a.cb = (a.cb + u - 1) / u * u;
    a.segs = (g.c + a.cb - 1) / a.cb;
    if (a.segs < 1) a.segs = 1;
    a.items = cols * a.segs;
    a.gdiv = udnn_gpu_fastdiv_make(a.groups > 0 ? a.groups : 1);
    a.sdiv = udnn_gpu_fastdiv_make(a.segs);
    return a;
}

static lrn_chan lrn_chan_of(const lrn_geom &g, int v)
{
    lrn_chan a;
    memset(&a, 0, sizeof a);
    a.c = g.c;
    a.s = g.s;
    a.ns = g.ns;
    a.ps = g.ps;
    a.cv = g.c / v;
    a.items = g.n * g.s * a.cv;
    a.cvdiv = udnn_gpu_fastdiv_make(a.cv > 0 ? a.cv : 1);
    a.pdiv = udnn_gpu_fastdiv_make(g.s > 0 ? g.s : 1);
    return a;
}

/* Threads of a chan block: a multiple of the vectors per column, so that
 * blocks (and the grid-stride steps) cover whole columns; 0 when a column
 * has more vectors than a block has threads. */
static int lrn_chan_block(const lrn_chan &a)
{
    if (a.cv > LRN_CHAN_BLOCK) return 0;
    return (int)(a.cv * (LRN_CHAN_BLOCK / a.cv));
}

/* Channels contiguous: the chan kernels (else the walk). */
static int lrn_chan_layout(const lrn_geom &g)
{
    return g.c > 1 && g.cs == 1;
}

/* Runs GO<T, W, behind cap, ahead cap, FULL, PK> for lrnN n: caps of 5,
 * 11 and 16, each the smallest that holds n, FULL (no masks) where n is
 * the cap (16 takes the masked code: the widest, rarest); PK the power's
 * kind (lrn_pow_kind). */
#define LRN_GO_N(GO, W, PK, n, ...)                                                        \
    do {                                                                                   \
        if ((n) == 5) GO<T, W, 2, 2, true, PK>(__VA_ARGS__);                               \
        else if ((n) < 5) GO<T, W, 2, 2, false, PK>(__VA_ARGS__);                          \
        else if ((n) == 11) GO<T, W, 5, 5, true, PK>(__VA_ARGS__);                         \
        else if ((n) < 11) GO<T, W, 5, 5, false, PK>(__VA_ARGS__);                         \
        else GO<T, W, 7, 8, false, PK>(__VA_ARGS__);                                       \
    } while (0)
#define LRN_GO(GO, W, pk, n, ...)                                                          \
    do {                                                                                   \
        if ((pk) == LRN_POW_3_4) LRN_GO_N(GO, W, lrn_width<T>::POW_3_4, n, __VA_ARGS__);   \
        else LRN_GO_N(GO, W, LRN_POW_ANY, n, __VA_ARGS__);                                 \
    } while (0)

template <class T, int P, int NB, int NA, bool FULL, int PK>
static void lrn_fwd_walk_go(const udnn_gpu_context *c, const lrn_geom &g, int in_place,
                            const udnn_lrn_problem *p, const lrn_cfg<typename io<T>::C> &f)
{
    typedef lrn_chunk<T, NB + NA> ch;
    enum { RING = sizeof(udnn_gpu_pack<T, P>) >= 4 ? ch::FWD_RING : 0 };
    auto kernel =
        lrn_fwd_walk_kernel<T, P, ch::FWD_U, ch::FWD_A, NB, NA, FULL, PK, ch::FWD_MINB, RING>;
    static udnn_gpu_cache occupancy;
    const int64_t per_sm = udnn_gpu_occupancy(c, kernel, LRN_WALK_BLOCK, 0, &occupancy);
    lrn_walk a = lrn_walk_of(c, g, P, ch::FWD_U, NB + NA, in_place, per_sm);
    if constexpr (ch::CAP5_16) {
        /* Where one wave of the narrower chunks (4 channels, two in
         * flight, 6 blocks a multiprocessor) holds every walk unsplit and
         * the wider chunks' blocks (4 with the ring, 5 before it) would
         * need a second wave, the narrower chunks: H200, bursts, three
         * passes, before the ring, f16 32 x 64 x 112 x 112 3275 / 3300 /
         * 3306 GB/s against 3189 / 3205 / 3225 (bf16 alike); 64 x 256 x
         * 56 x 56 keeps the wider chunks. */
        const auto narrow = lrn_fwd_walk_kernel<T, P, 4, 2, NB, NA, FULL, PK, 6, 0>;
        static udnn_gpu_cache narrow_occupancy;
        const int64_t narrow_per_sm =
            udnn_gpu_occupancy(c, narrow, LRN_WALK_BLOCK, 0, &narrow_occupancy);
        const lrn_walk b = lrn_walk_of(c, g, P, 4, NB + NA, in_place, narrow_per_sm);
        const int64_t wave = (int64_t)c->sm_count * LRN_WALK_BLOCK;
        if (b.segs == 1 && b.items <= narrow_per_sm * wave && a.items > per_sm * wave) {
            kernel = narrow;
            a = b;
        }
    }
    kernel<<<lrn_blocks(c, a.items, LRN_WALK_BLOCK), LRN_WALK_BLOCK, 0, c->stream>>>(
        a, (const T *)p->x_ptr, (T *)p->out_ptr, f);
}

template <class T, int P, int NB, int NA, bool FULL, int PK>
static void lrn_bwd_walk_go(const udnn_gpu_context *c, const lrn_geom &g, int in_place,
                            const udnn_lrn_problem *p, const lrn_cfg<typename io<T>::C> &f)
{
    typedef lrn_chunk<T, NB + NA> ch;
    enum { Q = ch::BWD_NARROW ? (P + 1) / 2 : P };
    const auto kernel =
        lrn_bwd_walk_kernel<T, Q, ch::BWD_U, ch::BWD_A, NB, NA, FULL, PK, ch::BWD_MINB>;
    static udnn_gpu_cache occupancy;
    const int64_t per_sm = udnn_gpu_occupancy(c, kernel, LRN_WALK_BLOCK, 0, &occupancy);
    const lrn_walk a = lrn_walk_of(c, g, Q, ch::BWD_U, NB + NA, in_place, per_sm);
    kernel<<<lrn_blocks(c, a.items, LRN_WALK_BLOCK), LRN_WALK_BLOCK, 0, c->stream>>>(
        a, (const T *)p->x_ptr, (const T *)p->y_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr, f);
}

template <class T, int V, int NB, int NA, bool FULL, int PK>
static void lrn_fwd_chan_go(const udnn_gpu_context *c, const lrn_geom &g, int in_place,
                            const udnn_lrn_problem *p, const lrn_cfg<typename io<T>::C> &f)
{
    const lrn_chan a = lrn_chan_of(g, V);
    const int block = in_place ? lrn_chan_block(a) : LRN_CHAN_BLOCK;
    lrn_fwd_chan_kernel<T, V, NB, NA, FULL, PK>
        <<<lrn_blocks(c, a.items, block), block, 0, c->stream>>>(
            a, (const T *)p->x_ptr, (T *)p->out_ptr, f, in_place != 0);
}

template <class T, int V, int NB, int NA, bool FULL, int PK>
static void lrn_bwd_chan_go(const udnn_gpu_context *c, const lrn_geom &g, int in_place,
                            const udnn_lrn_problem *p, const lrn_cfg<typename io<T>::C> &f)
{
    const lrn_chan a = lrn_chan_of(g, V);
    const int block = in_place ? lrn_chan_block(a) : LRN_CHAN_BLOCK;
    lrn_bwd_chan_kernel<T, V, NB, NA, FULL, PK>
        <<<lrn_blocks(c, a.items, block), block, 0, c->stream>>>(
            a, (const T *)p->x_ptr, (const T *)p->y_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr, f,
            in_place != 0);
}

/* Vector widths: walk 4 positions (16 bytes of FLOAT, 8 of HALF), 2 of
 * DOUBLE; chan 16 bytes. POW_3_4: the power kind that beta 0.75 takes
 * (the other types' any-beta power costs as little). */
template <class T> struct lrn_width {
    enum {
        WALK_P = sizeof(T) >= 8 ? 2 : 4,
        CHAN_V = 16 / sizeof(T),
        POW_3_4 = sizeof(T) == 4 ? LRN_POW_3_4 : LRN_POW_ANY
    };
};

/* The power kind for the problem's beta. */
static int lrn_pow_kind(const udnn_lrn_problem *p)
{
    return p->lrn_beta == 0.75 ? LRN_POW_3_4 : LRN_POW_ANY;
}

template <class T> static udnnStatus_t lrn_fwd(const udnn_gpu_context *c, const udnn_lrn_problem *p)
{
    typedef typename io<T>::C C;
    if (udnn_gpu_count(&p->x) == 0) return UDNN_STATUS_SUCCESS;
    const lrn_cfg<C> f = lrn_cfg_of<C>(p);
    const int pk = lrn_pow_kind(p);
    const size_t es = sizeof(T);
    const int in_place = lrn_overlaps(p->out_ptr, &p->y, p->x_ptr, &p->x, es);
    lrn_geom g;
    int fast = lrn_same_strides(&p->x, &p->y) && lrn_geom_of(&p->x, &g);
    if (fast && lrn_chan_layout(g)) {
        enum { V = lrn_width<T>::CHAN_V };
        const int vec = lrn_vec_ok(p->x_ptr, es, V, g, 1) && lrn_vec_ok(p->out_ptr, es, V, g, 1);
        if (in_place && lrn_chan_block(lrn_chan_of(g, vec ? V : 1)) == 0) fast = 0;
        else if (vec) LRN_GO(lrn_fwd_chan_go, V, pk, p->n, c, g, in_place, p, f);
        else LRN_GO(lrn_fwd_chan_go, 1, pk, p->n, c, g, in_place, p, f);
    } else if (fast) {
        enum { P = lrn_width<T>::WALK_P };
        const int vec = g.ps == 1 && lrn_vec_ok(p->x_ptr, es, P, g, 0) &&
                        lrn_vec_ok(p->out_ptr, es, P, g, 0);
        if (vec) LRN_GO(lrn_fwd_walk_go, P, pk, p->n, c, g, in_place, p, f);
        else LRN_GO(lrn_fwd_walk_go, 1, pk, p->n, c, g, in_place, p, f);
    }
    if (!fast) {
        const udnn_tensor *ts[2] = {&p->x, &p->y};
        lrn_cols a2 = lrn_cols_of(ts, 2);
        lrn_fwd_col_kernel<T><<<udnn_gpu_grid(c, a2.n * a2.s), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a2, (const T *)p->x_ptr, (T *)p->out_ptr, f);
    }
    return udnn_gpu_launched();
}

template <class T> static udnnStatus_t lrn_bwd(const udnn_gpu_context *c, const udnn_lrn_problem *p)
{
    typedef typename io<T>::C C;
    if (udnn_gpu_count(&p->x) == 0) return UDNN_STATUS_SUCCESS;
    const lrn_cfg<C> f = lrn_cfg_of<C>(p);
    const int pk = lrn_pow_kind(p);
    const size_t es = sizeof(T);
    const int in_place = lrn_overlaps(p->out_ptr, &p->dx, p->x_ptr, &p->x, es) ||
                         lrn_overlaps(p->out_ptr, &p->dx, p->y_ptr, &p->y, es) ||
                         lrn_overlaps(p->out_ptr, &p->dx, p->dy_ptr, &p->dy, es);
    lrn_geom g;
    int fast = lrn_same_strides(&p->x, &p->y) && lrn_same_strides(&p->x, &p->dy) &&
               lrn_same_strides(&p->x, &p->dx) && lrn_geom_of(&p->x, &g);
    if (fast && lrn_chan_layout(g)) {
        enum { V = lrn_width<T>::CHAN_V };
        const int vec = lrn_vec_ok(p->x_ptr, es, V, g, 1) && lrn_vec_ok(p->y_ptr, es, V, g, 1) &&
                        lrn_vec_ok(p->dy_ptr, es, V, g, 1) &&
                        lrn_vec_ok(p->out_ptr, es, V, g, 1);
        if (in_place && lrn_chan_block(lrn_chan_of(g, vec ? V : 1)) == 0) fast = 0;
        else if (vec) LRN_GO(lrn_bwd_chan_go, V, pk, p->n, c, g, in_place, p, f);
        else LRN_GO(lrn_bwd_chan_go, 1, pk, p->n, c, g, in_place, p, f);
    } else if (fast && g.c > LRN_BWD_WALK_C_MAX) {
        fast = 0;
    } else if (fast) {
        enum { P = lrn_width<T>::WALK_P };
        const int vec = g.ps == 1 && lrn_vec_ok(p->x_ptr, es, P, g, 0) &&
                        lrn_vec_ok(p->y_ptr, es, P, g, 0) && lrn_vec_ok(p->dy_ptr, es, P, g, 0) &&
                        lrn_vec_ok(p->out_ptr, es, P, g, 0);
        if (vec) LRN_GO(lrn_bwd_walk_go, P, pk, p->n, c, g, in_place, p, f);
        else LRN_GO(lrn_bwd_walk_go, 1, pk, p->n, c, g, in_place, p, f);
    }
    if (!fast) {
        const udnn_tensor *ts[4] = {&p->x, &p->y, &p->dy, &p->dx};
        lrn_cols a2 = lrn_cols_of(ts, 4);
        lrn_bwd_col_kernel<T><<<udnn_gpu_grid(c, a2.n * a2.s), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a2, (const T *)p->x_ptr, (const T *)p->y_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr,
            f);
    }
    return udnn_gpu_launched();
}

static int lrn_fwd_applicable(const void *problem, const char **why)
{
    const udnn_lrn_problem *p = (const udnn_lrn_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU LRN takes FLOAT, DOUBLE, HALF and BFLOAT16, x and y alike";
        return 0;
    }
    if (p->x.rank < 3 || p->x.rank > 5 || p->n < 1 || p->n > UDNN_LRN_MAX_N) {
        *why = "the GPU LRN takes 3-D to 5-D tensors and lrnN of 1 to UDNN_LRN_MAX_N";
        return 0;
    }
    return 1;
}

static int lrn_bwd_applicable(const void *problem, const char **why)
{
    const udnn_lrn_problem *p = (const udnn_lrn_problem *)problem;
    if (!lrn_fwd_applicable(problem, why)) return 0;
    if (p->dy.dtype != p->x.dtype || p->dx.dtype != p->x.dtype) {
        *why = "the GPU LRN takes x, y, dy and dx of one type";
        return 0;
    }
    return 1;
}

UDNN_GPU_TYPED_RUN(lrn_fwd_run, udnn_lrn_problem, x, lrn_fwd)

UDNN_GPU_TYPED_RUN(lrn_bwd_run, udnn_lrn_problem, x, lrn_bwd)

static const udnn_solver lrn_fwd_solver = {
    /* .name = */ "gpu_lrn_fwd",
    /* .op = */ UDNN_OP_LRN_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ lrn_fwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ lrn_fwd_run,
};

static const udnn_solver lrn_bwd_solver = {
    /* .name = */ "gpu_lrn_bwd",
    /* .op = */ UDNN_OP_LRN_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ lrn_bwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ lrn_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(lrn, &lrn_fwd_solver, &lrn_bwd_solver);
