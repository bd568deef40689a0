/* pool.cu - pooling forward and backward over n, c, d, h, w (core hands 2-D
 * pooling over as d = 1), every mode (MAX, MAX_DETERMINISTIC, AVERAGE
 * including or excluding padding), FLOAT, DOUBLE, HALF and BFLOAT16, any
 * strides, with alpha/beta blending. Semantics mirror cpu/ref/pooling.c:
 * windows clipped to the input, max ignores padding, ties and NaNs as
 * documented there (but for the sign of a zero maximum in the forward:
 * see pool_plane_max).
 *
 * Fast paths first, each for the layout of the tensor it writes:
 * - rows (w innermost, NCHW-like), for the w geometries (window, stride,
 *   pad) of POOL_ROW_GEOMS: a thread takes V adjacent outputs (V elements
 *   to 16 bytes, 8 for 16-bit types) of one or two rows, loads the input
 *   columns their windows span with V-element loads where aligned, and
 *   reduces them in registers; the window along w is a compile-time
 *   constant, its rows unroll, d is a loop.
 * - channels (c innermost, NHWC-like, C a multiple of V): a thread takes V
 *   channels of one output, or of two adjacent along w where the stride is
 *   2, and moves V elements per load and store.
 * The unrolled kernels reduce one window plane at a time from registers,
 * padding filled in so that each element costs one fmax or add (see
 * pool_plane_max).
 * Backward, when no two windows overlap (stride >= window in every dim),
 * one pass per window: a thread reads the window's x and dy and writes
 * every dx element of the window's cell (the window and the gap up to the
 * next one, the last cell running to the input's end), zero where the
 * element is not the argmax; no scratch memory. When windows overlap, max
 * takes two passes: the argmax of every window as one byte in the
 * context's scratch memory (a batch of images at a time when the bytes of
 * all do not fit), then one thread per V adjacent dx elements (rows) or V
 * channels (channels) gathers dy from the covering windows whose byte
 * names it; average gathers dy / divisor in one pass. Sums run in the
 * reference's order; no atomics.
 *
 * Anything else takes the general kernels: one thread per output element
 * computes its window (forward); one thread per dx element gathers from
 * every output window that covers it, comparing the argmax bytes of a first
 * pass or, when the bytes do not fit (more than 16 Mi outputs, or windows
 * over 256), scanning each window, stopping at the first element that
 * beats the one it asks about. Non-overlapping windows take the one-pass
 * kernel with scalar accesses. The 3x3 / 2 max backward on rows, where
 * windows overlap, takes pool_tile.cu's one-pass kernel before any of
 * these; pool.h holds what the two files share.
 *
 * Threads walk the tensor they write in its memory order (c innermost for
 * NHWC-like layouts, w innermost otherwise) so that neighbouring threads
 * touch neighbouring addresses; index arithmetic divides by invariant
 * divisors in 32 bits (unless the index is 2^31 or more: the general
 * kernels then divide, the fast paths multiply in 64 bits), and offsets are
 * 64-bit (pool_tile.cu's 32-bit within a plane, where they fit). The API
 * refuses in place (core/pooling.c): the window scan reads x that other
 * threads' dx would overwrite. */
#include "cuda/pool.h"

/* ---- the problem's coordinates -------------------------------------------------- */

/* The logical coordinates of walk index i. */
template <bool CLAST, bool BIG>
__device__ __forceinline__ void pool_coords(const pool_args &a, int64_t i, int64_t &n, int64_t &c,
                                            int64_t o[3])
{
    int64_t t[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (BIG) {
            int64_t q = i / a.walk_dim[k];
            t[k] = i - q * a.walk_dim[k];
            i = q;
        } else {
            uint32_t u = (uint32_t)i, q = udnn_gpu_div32_q(a.walk_div[k], u);
            t[k] = (int64_t)(u - q * a.walk_div[k].d);
            i = q;
        }
    }
    n = i;
    if (CLAST) {
        c = t[0], o[2] = t[1], o[1] = t[2], o[0] = t[3];
    } else {
        o[2] = t[0], o[1] = t[1], o[0] = t[2], c = t[3];
    }
}

/* The window of output o clipped to the input: [lo, hi) per dim. */
__device__ __forceinline__ void pool_window(const pool_args &a, const int64_t o[3], int lo[3],
                                            int hi[3])
{
#pragma unroll
    for (int k = 0; k < 3; k++) {
        int start = (int)o[k] * a.str[k] - a.pad[k];
        lo[k] = start < 0 ? 0 : start;
        hi[k] = start + a.win[k] > a.in[k] ? a.in[k] : start + a.win[k];
    }
}

template <class C> __device__ __forceinline__ C pool_divisor(const pool_args &a, const int lo[3],
                                                             const int hi[3])
{
    if (a.include_pad) return C(a.win[0]) * C(a.win[1]) * C(a.win[2]);
    return C((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
}

/* ---- reducing a window ------------------------------------------------------------ */

/* The maximum of a window under the reference's rules and (POS) where it
 * is: with PROPAGATE the first NaN; otherwise NaNs are skipped, the first
 * maximum in row-major (d, h, w) order wins ties, and an all-NaN window
 * gives NaN at its first position. (Plain loops: batching the loads by hand
 * measured slower on an H100.) */
template <class T, bool POS>
__device__ __forceinline__ typename io<T>::C pool_window_max(const pool_args &a, const T *x,
                                                             const int lo[3], const int hi[3],
                                                             int at[3])
{
    typedef typename io<T>::C C;
    C best = C(0);
    bool found = false;
    if (POS) at[0] = lo[0], at[1] = lo[1], at[2] = lo[2];
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                C v = io<T>::ld(row[w * a.xs[4]]);
                if (v != v) {
                    if (!a.propagate_nan) continue;
                    if (POS) at[0] = d, at[1] = h, at[2] = w;
                    return v;
                }
                if (!found || v > best) {
                    best = v;
                    if (POS) at[0] = d, at[1] = h, at[2] = w;
                }
                found = true;
            }
        }
    return found ? best : C(NAN);
}

template <class T>
__device__ __forceinline__ typename io<T>::C pool_window_sum(const pool_args &a, const T *x,
                                                             const int lo[3], const int hi[3])
{
    typedef typename io<T>::C C;
    C sum = C(0);
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) sum += io<T>::ld(row[w * a.xs[4]]);
        }
    return sum;
}

/* ---- forward -------------------------------------------------------------------- */

template <class T, bool CLAST, bool BIG>
__global__ void pool_fwd_kernel(pool_args a, const T *x, T *y, typename io<T>::C alpha,
                                typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, o[3];
        pool_coords<CLAST, BIG>(a, i, n, c, o);
        int lo[3], hi[3];
        pool_window(a, o, lo, hi);
        const T *xb = x + n * a.xs[0] + c * a.xs[1];
        int at[3];
        const C v = a.is_max ? pool_window_max<T, false>(a, xb, lo, hi, at)
                             : pool_window_sum<T>(a, xb, lo, hi) / pool_divisor<C>(a, lo, hi);
        udnn_gpu_blend_store(y + n * a.ys[0] + c * a.ys[1] + o[0] * a.ys[2] + o[1] * a.ys[3] +
                                 o[2] * a.ys[4],
                             v, alpha, beta);
    }
}

/* ---- backward -------------------------------------------------------------------- */

/* The offset of window position (d, h, w) from the window's unclipped
 * start, in row-major order: what the argmax bytes hold. */
__device__ __forceinline__ int pool_rel(const pool_args &a, const int64_t o[3], int d, int h,
                                        int w)
{
    return ((d - ((int)o[0] * a.str[0] - a.pad[0])) * a.win[1] +
            (h - ((int)o[1] * a.str[1] - a.pad[1]))) *
               a.win[2] +
           (w - ((int)o[2] * a.str[2] - a.pad[2]));
}

/* Max backward, first pass: the argmax of every window of y, as a byte, at
 * the walk index of y (the argmax tensor is dense in walk order). */
template <class T, bool CLAST, bool BIG>
__global__ void pool_argmax_kernel(pool_args a, const T *x, uint8_t *arg)
{
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, o[3];
        pool_coords<CLAST, BIG>(a, i, n, c, o);
        int lo[3], hi[3];
        pool_window(a, o, lo, hi);
        int at[3];
        pool_window_max<T, true>(a, x + n * a.xs[0] + c * a.xs[1], lo, hi, at);
        arg[i] = (uint8_t)pool_rel(a, o, at[0], at[1], at[2]);
    }
}

/* The outputs along dim k whose windows contain input i: [lo, hi). */
__device__ __forceinline__ void pool_covering(const pool_args &a, int k, int i, int &lo, int &hi)
{
    const int first = i + a.pad[k] - a.win[k] + 1;
    lo = first <= 0 ? 0 : (int)udnn_gpu_div32_q(a.str_div[k], (uint32_t)(first + a.str[k] - 1));
    hi = (int)udnn_gpu_div32_q(a.str_div[k], (uint32_t)(i + a.pad[k])) + 1;
    if (hi > a.out[k]) hi = a.out[k];
}

/* 1 when the element at `me` (value v) is where the reference puts the
 * maximum of the window [lo, hi): the first NaN under PROPAGATE, else the
 * first non-NaN maximum. Not asked for a NaN under NOT_PROPAGATE (see
 * pool_all_nan). Stops at the first element that takes the place from it. */
template <class T>
__device__ bool pool_is_argmax(const pool_args &a, const T *x, const int lo[3], const int hi[3],
                               const int me[3], typename io<T>::C v)
{
    typedef typename io<T>::C C;
    const bool v_nan = v != v;
    bool before = true; /* scanning positions ahead of `me` in row-major order */
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                if (d == me[0] && h == me[1] && w == me[2]) {
                    if (v_nan) return true; /* PROPAGATE: no NaN came first */
                    before = false;
                    continue;
                }
                C u = io<T>::ld(row[w * a.xs[4]]);
                if (u != u) {
                    if (a.propagate_nan) return false; /* a NaN anywhere beats a number */
                    continue;
                }
                if (before ? u >= v : u > v) return false;
            }
        }
    return true;
}

/* Whether every element of the window is NaN. */
template <class T>
__device__ bool pool_all_nan(const pool_args &a, const T *x, const int lo[3], const int hi[3])
{
    for (int d = lo[0]; d < hi[0]; d++)
        for (int h = lo[1]; h < hi[1]; h++) {
            const T *row = x + d * a.xs[2] + h * a.xs[3];
            for (int w = lo[2]; w < hi[2]; w++) {
                typename io<T>::C u = io<T>::ld(row[w * a.xs[4]]);
                if (u == u) return false;
            }
        }
    return true;
}

/* How the backward finds a window's share for a dx element. */
enum { POOL_BWD_AVG, POOL_BWD_ARGMAX, POOL_BWD_SCAN };

/* A thread per dx element sums over the outputs whose windows cover it:
 * dy / divisor (AVG), dy where the window's argmax byte names it (ARGMAX),
 * or dy where a scan of the window finds it the maximum (SCAN, when the
 * argmax bytes do not fit the scratch memory). */
template <class T, bool CLAST, bool BIG, int HOW>
__global__ void pool_bwd_kernel(pool_args a, const T *x, const T *dy, const uint8_t *arg, T *dx,
                                typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t n, c, in[3];
        pool_coords<CLAST, BIG>(a, i, n, c, in);
        const int me[3] = {(int)in[0], (int)in[1], (int)in[2]};
        int olo[3], ohi[3];
#pragma unroll
        for (int k = 0; k < 3; k++) pool_covering(a, k, me[k], olo[k], ohi[k]);
        const T *xb = x + n * a.xs[0] + c * a.xs[1];
        const T *dyb = dy + n * a.ys[0] + c * a.ys[1];
        const uint8_t *argb = HOW == POOL_BWD_ARGMAX ? arg + n * a.ms[0] + c * a.ms[1] : arg;
        C v = C(0);
        if (HOW == POOL_BWD_SCAN)
            v = io<T>::ld(xb[me[0] * a.xs[2] + me[1] * a.xs[3] + me[2] * a.xs[4]]);
        C grad = C(0);
        for (int o0 = olo[0]; o0 < ohi[0]; o0++)
            for (int o1 = olo[1]; o1 < ohi[1]; o1++)
                for (int o2 = olo[2]; o2 < ohi[2]; o2++) {
                    const int64_t o[3] = {o0, o1, o2};
                    const C g = io<T>::ld(dyb[o[0] * a.ys[2] + o[1] * a.ys[3] + o[2] * a.ys[4]]);
                    if (HOW == POOL_BWD_ARGMAX) {
                        const int at = argb[o[0] * a.ms[2] + o[1] * a.ms[3] + o[2] * a.ms[4]];
                        if (at == pool_rel(a, o, me[0], me[1], me[2])) grad += g;
                        continue;
                    }
                    int lo[3], hi[3];
                    pool_window(a, o, lo, hi);
                    if (HOW == POOL_BWD_AVG) {
                        grad += g / pool_divisor<C>(a, lo, hi);
                    } else if (v != v && !a.propagate_nan) {
                        /* NaN here: the gradient goes to the window's first
                         * position only when the whole window is NaN */
                        if (me[0] == lo[0] && me[1] == lo[1] && me[2] == lo[2] &&
                            pool_all_nan<T>(a, xb, lo, hi))
                            grad += g;
                    } else if (pool_is_argmax<T>(a, xb, lo, hi, me, v)) {
                        grad += g;
                    }
                }
        udnn_gpu_blend_store(dx + n * a.xs2[0] + c * a.xs2[1] + in[0] * a.xs2[2] +
                                 in[1] * a.xs2[3] + in[2] * a.xs2[4],
                             grad, alpha, beta);
    }
}

/* ---- fast paths: shared pieces ----------------------------------------------------- */

/* What a fast-path thread moves at once: N = 4 elements (2 of DOUBLE), 16
 * bytes, 8 for HALF and BFLOAT16 (eight 16-bit outputs per thread held too
 * many registers), aligned to their size. */
template <class T> struct alignas(sizeof(T) == 8 ? 16 : 4 * sizeof(T)) pool_vt {
    enum { N = sizeof(T) == 8 ? 2 : 4 };
    T v[N];
};

/* The fast kernels' launch bounds: at most 128 registers, so that two
 * blocks (512 threads) or more stay resident on a multiprocessor; each
 * thread has a whole window's loads in flight. POOL_LEAN_IF, at most 80,
 * three blocks, where that was measured to gain: the H200 starved
 * pool_row_cell and pool_chan_fwd of warps (ncu: a quarter of a
 * multiprocessor's, 57% / 72% of DRAM's peak, at 101 and 112 registers).
 * H200, 64 x 256 x 56 x 56, in one run against two blocks, two passes (GB/s):
 *   max 2 x 2 backward f32 (pool_row_cell)   3259 / 3220 against 2825 / 2958
 *   max 3 x 3 NHWC forward f16 (pool_chan_fwd) 1937 / 1877 against 1642 / 1616
 *   avg 3 x 3 NHWC forward f16                2051 / 2064 against 1722 / 1708
 *   max 3 x 3 NHWC forward bf16               1706 / 1744 against 1666 / 1660
 *   max 3 x 3 NHWC forward f32                2621 / 2596 against 3337 / 3275
 *   avg 3 x 3 NHWC forward f32                2914 / 3105 against 2988 / 3059
 * so pool_chan_fwd is lean for 16-bit types only (their max spills 40 to
 * 112 bytes at 80 registers, f32's 104 and loses), and not for the argmax
 * (176 bytes, not measured). The other fast kernels lost a little at three
 * blocks (max 2 x 2 forward f16 2757 / 2657 against 2810 / 2865), and
 * pool_chan_fwd lost 30% at four (64 registers). */
#define POOL_LEAN_IF(LEAN) __global__ void __launch_bounds__(UDNN_GPU_BLOCK, (LEAN) ? 3 : 2)
#define POOL_FAST POOL_LEAN_IF(false)

/* s / d for the averages (d a small whole number): float by __fdividef
 * (within 2 ulp; no slow path to call, and save registers around), double
 * exactly. */
__device__ __forceinline__ float pool_div(float s, float d)
{
    return __fdividef(s, d);
}
__device__ __forceinline__ double pool_div(double s, double d)
{
    return s / d;
}

/* V elements at p: one access of pool_vt (p aligned) when V > 1. */
template <class T, int V> __device__ __forceinline__ pool_vt<T> pool_ldv(const T *p)
{
    pool_vt<T> u;
    if (V == 1) u.v[0] = *p;
    else u = *(const pool_vt<T> *)p;
    return u;
}

/* p[j] = alpha * v[j] + beta * p[j] for V elements (one access of pool_vt's
 * width when V > 1); p is read only when beta != 0. */
template <class T, int V>
__device__ __forceinline__ void pool_stv(T *p, const typename io<T>::C *v,
                                         typename io<T>::C alpha, typename io<T>::C beta)
{
    if (V == 1) udnn_gpu_blend_store(p, v[0], alpha, beta);
    else udnn_gpu_blend_store_pack<T, V>(p, v, alpha, beta);
}

/* V argmax bytes (V = 2 or 4), byte j of `bytes` at p + j; p aligned to V. */
template <int V> __device__ __forceinline__ void pool_st_bytes(uint8_t *p, uint32_t bytes)
{
    if (V == 4) *(uint32_t *)p = bytes;
    else *(uint16_t *)p = (uint16_t)bytes;
}
template <int V> __device__ __forceinline__ uint32_t pool_ld_bytes(const uint8_t *p)
{
    if (V == 4) return *(const uint32_t *)p;
    return *(const uint16_t *)p;
}

/* The window of output o along dim k clipped to the input, [lo, hi), and
 * its unclipped start. */
__device__ __forceinline__ int pool_span(const pool_args &a, int k, int o, int &lo, int &hi)
{
    const int start = o * a.str[k] - a.pad[k];
    lo = start < 0 ? 0 : start;
    hi = start + a.win[k] > a.in[k] ? a.in[k] : start + a.win[k];
    return start;
}

/* The cell of output o along dim k: its window and the gap to the next
 * window (stride >= window), clipped to the input, the last running to the
 * input's end. Cells tile the input. */
__device__ __forceinline__ void pool_cell(const pool_args &a, int k, int o, int &lo, int &hi)
{
    const int start = o * a.str[k] - a.pad[k];
    lo = start < 0 ? 0 : start;
    hi = o == a.out[k] - 1 || start + a.str[k] > a.in[k] ? a.in[k] : start + a.str[k];
}

/* ---- fast paths: rows ------------------------------------------------------------ */

/* The row forward's shape: items of V adjacent outputs of R rows, loading
 * slots of V columns [B + L0 + qV, + V), q < NS, B = ow0 * SW, of each
 * input row of their windows: the columns some window needs are [B - PW,
 * B + SPAN). Two rows an item where the columns their windows need stay
 * few (registers), so that more loads are in flight per thread. */
template <class T, int KW, int SW, int PW> struct pool_row_shape {
    enum {
        V = pool_vt<T>::N,
        L0 = -pool_ceil_div(PW, V) * V,
        SPAN = (V - 1) * SW + KW - PW,
        NS = pool_ceil_div(SPAN, V) - L0 / V,
        R = sizeof(T) == 8 || KW * ((V - 1) * SW + KW) * sizeof(T) > 108 ? 1 : 2
    };
};

/* Forward (MODE POOL_AVG or POOL_MAX: y; POOL_ARG: the argmax bytes, a row
 * of y as ceil(OW / V) * V bytes) over items of V adjacent outputs of R
 * rows (walk: groups, oh / R, od, c; n). The window along w is KW wide, SW
 * apart, PW padded, and at most KW high (the rows unroll; d is a loop).
 * Slots load whole (one pool_vt) where every column is needed, lies inside
 * the row and x allows it; the positions no window of the item covers take
 * pool_pad's value. */
template <class T, int KW, int SW, int PW, int MODE>
POOL_FAST pool_row_fwd_kernel(pool_args a, const T *__restrict__ x, T *__restrict__ y,
                              uint8_t *__restrict__ arg, typename io<T>::C alpha,
                              typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_vt<T> VT;
    typedef pool_row_shape<T, KW, SW, PW> S;
    constexpr int V = S::V, L0 = S::L0, SPAN = S::SPAN, NS = S::NS, R = S::R;
    const C pad = pool_pad<C>(MODE, a.propagate_nan);
    const T padt = io<T>::st(pad);
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        const int ow0 = (int)t[0] * V, B = ow0 * SW, od = (int)t[2];
        int dlo, dhi, oh[R], h0[R], hlo[R], hhi[R];
        const int d0 = pool_span(a, 0, od, dlo, dhi);
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            oh[rr] = (int)t[1] * R + rr;
            h0[rr] = pool_span(a, 1, oh[rr], hlo[rr], hhi[rr]);
            if (oh[rr] >= a.out[1]) hhi[rr] = 0; /* past the last row: no input row */
        }
        const T *xb = x + t[4] * a.xs[0] + t[3] * a.xs[1];
        /* buffer element e (column B + L0 + e) lies inside the row when
         * elo <= e < ehi */
        const int elo = -(B + L0), ehi = a.in[2] - (B + L0);
        pool_mx<C> m[R][V];
#pragma unroll
        for (int rr = 0; rr < R; rr++)
#pragma unroll
            for (int j = 0; j < V; j++) m[rr][j].best = pad, m[rr][j].at = -1;
        for (int d = dlo; d < dhi; d++) {
            const T *plane = xb + d * a.xs[2];
            VT buf[R][KW][NS];
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int r = 0; r < KW; r++) {
                    const bool live = h0[rr] + r >= hlo[rr] && h0[rr] + r < hhi[rr];
                    const T *row = plane + (h0[rr] + r) * a.xs[3];
#pragma unroll
                    for (int q = 0; q < NS; q++) {
                        const int first = L0 + q * V; /* the slot's columns, relative to B */
                        if (first >= -PW && first + V <= SPAN && a.vx && q * V >= elo &&
                            q * V + V <= ehi) {
                            if (live) {
                                buf[rr][r][q] = *(const VT *)(row + B + first);
                            } else {
#pragma unroll
                                for (int k = 0; k < V; k++) buf[rr][r][q].v[k] = padt;
                            }
                        } else {
#pragma unroll
                            for (int k = 0; k < V; k++)
                                if (first + k >= -PW && first + k < SPAN)
                                    buf[rr][r][q].v[k] =
                                        live && q * V + k >= elo && q * V + k < ehi
                                            ? row[(int64_t)(B + first + k) * a.xs[4]]
                                            : padt;
                        }
                    }
                }
            const int base = (d - d0) * a.win[1] * KW;
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int j = 0; j < V; j++) {
                    C v[KW * KW];
#pragma unroll
                    for (int r = 0; r < KW; r++)
#pragma unroll
                        for (int kw = 0; kw < KW; kw++) {
                            const int e = j * SW - PW + kw - L0;
                            v[r * KW + kw] = io<T>::ld(buf[rr][r][e / V].v[e % V]);
                        }
                    if (MODE == POOL_AVG) {
#pragma unroll
                        for (int k = 0; k < KW * KW; k++) m[rr][j].best += v[k];
                    } else {
                        const C pm = pool_plane_max(v, a.propagate_nan);
                        if (MODE == POOL_MAX)
                            m[rr][j].best = pool_max_join(m[rr][j].best, pm, a.propagate_nan);
                        else
                            pool_mx_take<C, true>(m[rr][j], pm, base + pool_plane_at(v, pm),
                                                  a.propagate_nan);
                    }
                }
        }
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            if (oh[rr] >= a.out[1]) continue;
            if (MODE == POOL_ARG) {
                uint32_t bytes = 0;
#pragma unroll
                for (int j = 0; j < V; j++) {
                    const int w0 = B + j * SW - PW; /* window j's first column */
                    const int first =
                        ((dlo - d0) * a.win[1] + (hlo[rr] - h0[rr])) * KW + (w0 < 0 ? -w0 : 0);
                    bytes |= (uint32_t)(uint8_t)pool_mx_at(m[rr][j], first) << (8 * j);
                }
                const int64_t orow =
                    ((t[4] * a.walk_dim[3] + t[3]) * a.out[0] + od) * a.out[1] + oh[rr];
                pool_st_bytes<V>(arg + orow * (a.walk_dim[0] * V) + ow0, bytes);
            } else {
                C v[V];
#pragma unroll
                for (int j = 0; j < V; j++) {
                    if (MODE == POOL_MAX) {
                        v[j] = m[rr][j].best;
                    } else {
                        /* the window's columns inside the row */
                        const int e0 = j * SW - PW - L0;
                        const int cols = (e0 + KW < ehi ? e0 + KW : ehi) - (e0 > elo ? e0 : elo);
                        const int n = (dhi - dlo) * (hhi[rr] - hlo[rr]) * cols;
                        v[j] = pool_div(m[rr][j].best,
                                        a.include_pad ? C(a.win[0] * a.win[1] * KW) : C(n));
                    }
                }
                T *yr = y + t[4] * a.ys[0] + t[3] * a.ys[1] + od * a.ys[2] + oh[rr] * a.ys[3];
                if (a.vy && ow0 + V <= a.out[2]) {
                    pool_stv<T, V>(yr + ow0, v, alpha, beta);
                } else {
#pragma unroll
                    for (int j = 0; j < V; j++)
                        if (ow0 + j < a.out[2])
                            udnn_gpu_blend_store(yr + (ow0 + j) * a.ys[4], v[j], alpha, beta);
                }
            }
        }
    }
}

/* Backward gather over items of V adjacent dx elements of a row (walk:
 * groups, h, d, c; n): the outputs whose windows cover them along w are
 * ob + r, ob = w0 / SW, r in [R0, R1] (compile-time, V % SW == 0); d and h
 * as pool_covering finds them (along h at most KW: that loop unrolls). HOW:
 * POOL_BWD_ARGMAX (the bytes of pool_row_fwd_kernel, rows of `pitch`
 * bytes) or POOL_BWD_AVG. */
template <class T, int KW, int SW, int PW, int HOW>
POOL_FAST pool_row_gather_kernel(pool_args a, const T *__restrict__ dy,
                                 const uint8_t *__restrict__ arg, int64_t pitch,
                                 T *__restrict__ dx, typename io<T>::C alpha,
                                 typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    constexpr int V = pool_vt<T>::N;
    static_assert(V % SW == 0, "a group's first column must start a window stride");
    constexpr int R0 = pool_ceil_div(PW - KW + 1, SW), R1 = pool_floor_div(V - 1 + PW, SW);
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        const int w0 = (int)t[0] * V, h = (int)t[1], d = (int)t[2];
        const int ob = w0 / SW;
        int odlo, odhi, ohlo, ohhi;
        pool_covering(a, 0, d, odlo, odhi);
        pool_covering(a, 1, h, ohlo, ohhi);
        const T *dyb = dy + t[4] * a.ys[0] + t[3] * a.ys[1];
        const int64_t plane = (t[4] * a.walk_dim[3] + t[3]) * a.out[0];
        C grad[V];
#pragma unroll
        for (int j = 0; j < V; j++) grad[j] = C(0);
        for (int od = odlo; od < odhi; od++)
#pragma unroll
            for (int k = 0; k < KW; k++) {
                /* at most KW rows cover h (the window is at most KW high):
                 * unrolled, their loads issue together */
                const int oh = ohlo + k;
                if (oh >= ohhi) continue;
                const T *dyr = dyb + od * a.ys[2] + oh * a.ys[3];
                const uint8_t *ar = arg + ((plane + od) * a.out[1] + oh) * pitch;
                const int dpos = d - (od * a.str[0] - a.pad[0]), hpos = h - (oh * a.str[1] - a.pad[1]);
                const int relbase = (dpos * a.win[1] + hpos) * KW;
                int dhcount = 0;
                if (HOW == POOL_BWD_AVG) {
                    int lo, hi, lo2, hi2;
                    pool_span(a, 0, od, lo, hi);
                    pool_span(a, 1, oh, lo2, hi2);
                    dhcount = (hi - lo) * (hi2 - lo2);
                }
#pragma unroll
                for (int r = R0; r <= R1; r++) {
                    const int ow = ob + r;
                    if ((unsigned)ow >= (unsigned)a.out[2]) continue;
                    const C g = io<T>::ld(dyr[ow * a.ys[4]]);
                    int at = 0;
                    C share = C(0);
                    if (HOW == POOL_BWD_ARGMAX) {
                        at = ar[ow];
                    } else {
                        int lo, hi;
                        pool_span(a, 2, ow, lo, hi);
                        share = pool_div(g, a.include_pad ? C(a.win[0] * a.win[1] * KW)
                                                          : C(dhcount * (hi - lo)));
                    }
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        const int kw = j - (r * SW - PW);
                        if (kw < 0 || kw >= KW) continue;
                        if (HOW == POOL_BWD_ARGMAX) grad[j] += at == relbase + kw ? g : C(0);
                        else grad[j] += share;
                    }
                }
            }
        T *dxr = dx + t[4] * a.xs2[0] + t[3] * a.xs2[1] + d * a.xs2[2] + h * a.xs2[3];
        if (a.vdx && w0 + V <= a.in[2]) {
            pool_stv<T, V>(dxr + w0, grad, alpha, beta);
        } else {
#pragma unroll
            for (int j = 0; j < V; j++)
                if (w0 + j < a.in[2])
                    udnn_gpu_blend_store(dxr + (w0 + j) * a.xs2[4], grad[j], alpha, beta);
        }
    }
}

/* Backward in one pass when no windows overlap and the window along w is
 * 2 wide, 2 apart, unpadded, and at most 2 high: items of V adjacent
 * outputs of a row (walk: groups, oh, od, c; n), each writing the 2V
 * columns of its windows over the rows of their cells (the group holding
 * the last output also the column an odd width leaves). MODE POOL_MAX or
 * POOL_AVG. */
template <class T, int MODE>
POOL_LEAN_IF(true)
pool_row_cell_kernel(pool_args a, const T *__restrict__ x, const T *__restrict__ dy,
                     T *__restrict__ dx, typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_vt<T> VT;
    constexpr int V = VT::N, NB = 2 * V;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        const int ow0 = (int)t[0] * V, B = 2 * ow0, oh = (int)t[1], od = (int)t[2];
        int dlo, dhi, hlo, hhi, cdlo, cdhi, chlo, chhi;
        const int d0 = pool_span(a, 0, od, dlo, dhi);
        const int h0 = pool_span(a, 1, oh, hlo, hhi);
        pool_cell(a, 0, od, cdlo, cdhi);
        pool_cell(a, 1, oh, chlo, chhi);
        const int ehi = a.in[2] - B; /* column B + e lies inside the row when e < ehi */
        /* the windows' maxima */
        pool_mx<C> m[V];
#pragma unroll
        for (int j = 0; j < V; j++) pool_mx_init(m[j], a.propagate_nan);
        if (MODE == POOL_MAX) {
            const T *xb = x + t[4] * a.xs[0] + t[3] * a.xs[1];
            const bool whole = a.vx && NB <= ehi;
            const T padt = io<T>::st(pool_pad<C>(MODE, a.propagate_nan));
            for (int d = dlo; d < dhi; d++) {
                /* the plane's rows, pool_pad's value where no window reaches */
                VT buf[2][2];
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    const bool live = h0 + r >= hlo && h0 + r < hhi;
                    const T *row = xb + d * a.xs[2] + (h0 + r) * a.xs[3];
                    if (live && whole) {
                        buf[r][0] = *(const VT *)(row + B);
                        buf[r][1] = *(const VT *)(row + B + V);
                    } else {
#pragma unroll
                        for (int e = 0; e < NB; e++)
                            buf[r][e / V].v[e % V] =
                                live && e < ehi ? row[(int64_t)(B + e) * a.xs[4]] : padt;
                    }
                }
                const int base = (d - d0) * a.win[1] * 2;
#pragma unroll
                for (int j = 0; j < V; j++) {
                    C v[4];
#pragma unroll
                    for (int k = 0; k < 4; k++) {
                        const int e = 2 * j + k % 2;
                        v[k] = io<T>::ld(buf[k / 2][e / V].v[e % V]);
                    }
                    const C pm = pool_plane_max(v, a.propagate_nan);
                    pool_mx_take<C, true>(m[j], pm, base + pool_plane_at(v, pm), a.propagate_nan);
                }
            }
#pragma unroll
            for (int j = 0; j < V; j++) m[j].at = pool_mx_at(m[j], ((dlo - d0) * a.win[1] + (hlo - h0)) * 2);
        }
        /* each window's dy, divided for average; 0 past the last output */
        C g[V];
        const T *dyr = dy + t[4] * a.ys[0] + t[3] * a.ys[1] + od * a.ys[2] + oh * a.ys[3];
        if (a.vy && ow0 + V <= a.out[2]) {
            const VT u = *(const VT *)(dyr + ow0);
#pragma unroll
            for (int j = 0; j < V; j++) g[j] = io<T>::ld(u.v[j]);
        } else {
#pragma unroll
            for (int j = 0; j < V; j++)
                g[j] = ow0 + j < a.out[2] ? io<T>::ld(dyr[(ow0 + j) * a.ys[4]]) : C(0);
        }
        if (MODE == POOL_AVG) {
#pragma unroll
            for (int j = 0; j < V; j++) {
                const int cols = (2 * j < ehi ? 1 : 0) + (2 * j + 1 < ehi ? 1 : 0);
                g[j] = pool_div(g[j], a.include_pad ? C(a.win[0] * a.win[1] * 2)
                                                     : C((dhi - dlo) * (hhi - hlo) * cols));
            }
        }
        /* the cells' dx */
        T *dxb = dx + t[4] * a.xs2[0] + t[3] * a.xs2[1];
        const bool last = ow0 + V >= a.out[2], vec = a.vdx && NB <= ehi;
        for (int d = cdlo; d < cdhi; d++)
            for (int h = chlo; h < chhi; h++) {
                const bool in_win = d >= dlo && d < dhi && h >= hlo && h < hhi;
                const int rowpos = ((d - d0) * a.win[1] + (h - h0)) * 2;
                T *row = dxb + d * a.xs2[2] + h * a.xs2[3];
#pragma unroll
                for (int q = 0; q < 2; q++) {
                    C v[V];
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const int e = q * V + k, j = e / 2;
                        const bool mine = MODE == POOL_MAX ? m[j].at == rowpos + e % 2 : true;
                        v[k] = in_win && ow0 + j < a.out[2] && mine ? g[j] : C(0);
                    }
                    if (vec) {
                        pool_stv<T, V>(row + B + q * V, v, alpha, beta);
                    } else {
#pragma unroll
                        for (int k = 0; k < V; k++)
                            if (q * V + k < ehi)
                                udnn_gpu_blend_store(row + (B + q * V + k) * a.xs2[4], v[k], alpha,
                                                     beta);
                    }
                }
                if (last)
                    for (int w = B + NB; w < a.in[2]; w++)
                        udnn_gpu_blend_store(row + w * a.xs2[4], C(0), alpha, beta);
            }
    }
}

/* ---- rows: the 2x2 / 2 forward and the 3x3 / 2 max backward in one pass --------------- */

/* pool_row2_fwd_kernel's output rows an item, and its resident blocks per
 * multiprocessor asked of the compiler (a register cap: 65536 / (256
 * MINB)). H100, 64 x 256 x 56 x 56: 2 rows of 4 blocks moved f16 2x2
 * forward from 1178 to 2282 GB/s (1 row, or 4 of 3 blocks: 2222). */
#define POOL_ROW2_ROWS 2
#define POOL_ROW2_MINB 4
/* Forward where the window along w is 2 wide, 2 apart and unpadded, and
 * at most 2 high (the 2x2 / 2 pooling): an item is P = 8 / sizeof(T)
 * adjacent outputs of R rows (walk: ceil(OW / P), ceil(OH / R), od, c; n).
 * Their windows span 2P columns, 16 bytes: one load per input row, every
 * byte of every sector it touches used, and one 8-byte store per output
 * row. (pool_row_fwd_kernel loads the 2V columns of its V outputs in two
 * accesses, each using half of every 32-byte sector it touches, and held
 * about 100 registers, two blocks a multiprocessor.) The sums and maxima
 * are pool_row_fwd_kernel's, in its order. MODE POOL_AVG or POOL_MAX. */
template <class T, int R, int MODE>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, POOL_ROW2_MINB)
    pool_row2_fwd_kernel(pool_args a, const T *__restrict__ x, T *__restrict__ y,
                         typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    constexpr int XV = 16 / (int)sizeof(T), P = XV / 2;
    typedef udnn_gpu_pack<T, XV> XT;
    const C pad = pool_pad<C>(MODE, a.propagate_nan);
    const T padt = io<T>::st(pad);
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        const int ow0 = (int)t[0] * P, B = 2 * ow0, od = (int)t[2];
        int dlo, dhi;
        pool_span(a, 0, od, dlo, dhi);
        const T *xb = x + t[4] * a.xs[0] + t[3] * a.xs[1];
        T *yb = y + t[4] * a.ys[0] + t[3] * a.ys[1] + od * a.ys[2];
        if (!a.vx || B + XV > a.in[2]) {
            /* the end of a row, or x without 16-byte accesses: output by
             * output, element by element, not unrolled (unrolled, these
             * loads took registers from the whole ones, and registers set
             * the occupancy) */
#pragma unroll 1
            for (int k = 0; k < R * P; k++) {
                const int oh = (int)t[1] * R + k / P, ow = ow0 + k % P;
                if (oh >= a.out[1] || ow >= a.out[2]) continue;
                int hlo, hhi;
                const int h0 = pool_span(a, 1, oh, hlo, hhi);
                C m = pad;
                for (int d = dlo; d < dhi; d++) {
                    C v[4];
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int h = h0 + e / 2, w = 2 * ow + e % 2;
                        v[e] = h >= hlo && h < hhi && w < a.in[2]
                                   ? io<T>::ld(xb[d * a.xs[2] + h * a.xs[3] + w * a.xs[4]])
                                   : pad;
                    }
                    if (MODE == POOL_AVG) {
#pragma unroll
                        for (int e = 0; e < 4; e++) m += v[e];
                    } else {
                        m = pool_max_join(m, pool_plane_max(v, a.propagate_nan), a.propagate_nan);
                    }
                }
                if (MODE == POOL_AVG) {
                    const int cols = (2 * ow + 2 < a.in[2] ? 2 : a.in[2] - 2 * ow);
                    m = pool_div(m, a.include_pad ? C(a.win[0] * a.win[1] * 2)
                                                  : C((dhi - dlo) * (hhi - hlo) * cols));
                }
                udnn_gpu_blend_store(yb + oh * a.ys[3] + ow * a.ys[4], m, alpha, beta);
            }
            continue;
        }
        /* whole: the P windows lie inside the row, and so do their outputs */
        int oh[R], h0[R], hlo[R], hhi[R];
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            oh[rr] = (int)t[1] * R + rr;
            h0[rr] = pool_span(a, 1, oh[rr], hlo[rr], hhi[rr]);
            if (oh[rr] >= a.out[1]) hhi[rr] = 0; /* past the last row: no input row */
        }
        C m[R][P];
#pragma unroll
        for (int rr = 0; rr < R; rr++)
#pragma unroll
            for (int j = 0; j < P; j++) m[rr][j] = pad;
        for (int d = dlo; d < dhi; d++) {
            const T *plane = xb + d * a.xs[2];
            XT buf[R][2];
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int r = 0; r < 2; r++) {
                    if (h0[rr] + r >= hlo[rr] && h0[rr] + r < hhi[rr]) {
                        buf[rr][r] = *(const XT *)(plane + (h0[rr] + r) * a.xs[3] + B);
                    } else {
#pragma unroll
                        for (int e = 0; e < XV; e++) buf[rr][r].v[e] = padt;
                    }
                }
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int j = 0; j < P; j++) {
                    /* the window's plane in row-major order */
                    const C v[4] = {io<T>::ld(buf[rr][0].v[2 * j]), io<T>::ld(buf[rr][0].v[2 * j + 1]),
                                    io<T>::ld(buf[rr][1].v[2 * j]), io<T>::ld(buf[rr][1].v[2 * j + 1])};
                    if (MODE == POOL_AVG) {
#pragma unroll
                        for (int k = 0; k < 4; k++) m[rr][j] += v[k];
                    } else {
                        m[rr][j] = pool_max_join(m[rr][j], pool_plane_max(v, a.propagate_nan),
                                                 a.propagate_nan);
                    }
                }
        }
#pragma unroll
        for (int rr = 0; rr < R; rr++) {
            if (oh[rr] >= a.out[1]) continue;
            C v[P];
#pragma unroll
            for (int j = 0; j < P; j++)
                v[j] = MODE == POOL_MAX
                           ? m[rr][j]
                           : pool_div(m[rr][j], a.include_pad
                                                    ? C(a.win[0] * a.win[1] * 2)
                                                    : C((dhi - dlo) * (hhi[rr] - hlo[rr]) * 2));
            T *yr = yb + oh[rr] * a.ys[3];
            if (a.vy) {
                udnn_gpu_blend_store_pack<T, P>(yr + ow0, v, alpha, beta);
            } else {
#pragma unroll
                for (int j = 0; j < P; j++)
                    udnn_gpu_blend_store(yr + (ow0 + j) * a.ys[4], v[j], alpha, beta);
            }
        }
    }
}

/* ---- fast paths: channels and cells ---------------------------------------------------- */

/* Forward over items of V channels of P outputs adjacent along w (walk: C
 * / V, ow / P, oh, od; n), c innermost and unit-stride in x and y. KW: the
 * window along w, and the most along h, as a compile-time constant (the
 * loads of a window issue together, positions outside the input holding
 * pool_pad's value), or 0 for loops. SW: the stride along w as a
 * compile-time constant, and then P = 2 (the columns the two windows share
 * load once, and twice the loads are in flight), or 0: P = 1. MODE as the
 * row kernel's (POOL_ARG: V bytes per item at y's position * C + c). */
template <class T, int KW, int SW, int MODE>
POOL_LEAN_IF(sizeof(T) == 2 && MODE != POOL_ARG)
pool_chan_fwd_kernel(pool_args a, const T *__restrict__ x, T *__restrict__ y,
                     uint8_t *__restrict__ arg, typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_vt<T> VT;
    constexpr int V = VT::N, P = SW > 0 ? 2 : 1, NC = KW > 0 ? (P - 1) * SW + KW : 1;
    const C pad = pool_pad<C>(MODE, a.propagate_nan);
    const T padt = io<T>::st(pad);
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        int dlo, dhi, hlo, hhi, ow[P], w0[P], wlo[P], whi[P];
        const int d0 = pool_span(a, 0, (int)t[3], dlo, dhi);
        const int h0 = pool_span(a, 1, (int)t[2], hlo, hhi);
#pragma unroll
        for (int p = 0; p < P; p++) {
            ow[p] = (int)t[1] * P + p;
            w0[p] = pool_span(a, 2, ow[p], wlo[p], whi[p]);
        }
        const T *xb = x + t[4] * a.xs[0] + t[0] * V;
        pool_mx<C> m[P][V];
#pragma unroll
        for (int p = 0; p < P; p++)
#pragma unroll
            for (int j = 0; j < V; j++) m[p][j].best = pad, m[p][j].at = -1;
        const int kwin = KW > 0 ? KW : a.win[2];
        for (int d = dlo; d < dhi; d++) {
            const T *plane = xb + d * a.xs[2];
            if (KW > 0) {
                constexpr int K = KW > 0 ? KW : 1;
                VT buf[K][NC];
#pragma unroll
                for (int r = 0; r < K; r++)
#pragma unroll
                    for (int c = 0; c < NC; c++) {
                        const int h = h0 + r, w = w0[0] + c;
                        if (h >= hlo && h < hhi && w >= 0 && w < a.in[2]) {
                            buf[r][c] = *(const VT *)(plane + h * a.xs[3] + w * a.xs[4]);
                        } else {
#pragma unroll
                            for (int j = 0; j < V; j++) buf[r][c].v[j] = padt;
                        }
                    }
                const int base = (d - d0) * a.win[1] * K;
#pragma unroll
                for (int p = 0; p < P; p++)
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        C v[K * K];
#pragma unroll
                        for (int r = 0; r < K; r++)
#pragma unroll
                            for (int kw = 0; kw < K; kw++)
                                v[r * K + kw] = io<T>::ld(buf[r][p * SW + kw].v[j]);
                        if (MODE == POOL_AVG) {
#pragma unroll
                            for (int k = 0; k < K * K; k++) m[p][j].best += v[k];
                        } else {
                            const C pm = pool_plane_max(v, a.propagate_nan);
                            if (MODE == POOL_MAX)
                                m[p][j].best = pool_max_join(m[p][j].best, pm, a.propagate_nan);
                            else
                                pool_mx_take<C, true>(m[p][j], pm, base + pool_plane_at(v, pm),
                                                      a.propagate_nan);
                        }
                    }
            } else {
                for (int h = hlo; h < hhi; h++) {
                    const T *row = plane + h * a.xs[3];
                    const int rowpos = ((d - d0) * a.win[1] + (h - h0)) * kwin - w0[0];
                    for (int w = wlo[0]; w < whi[0]; w++) {
                        const VT u = *(const VT *)(row + w * a.xs[4]);
#pragma unroll
                        for (int j = 0; j < V; j++) {
                            const C v = io<T>::ld(u.v[j]);
                            if (MODE == POOL_AVG) m[0][j].best += v;
                            else if (MODE == POOL_MAX)
                                m[0][j].best = pool_max_join(m[0][j].best, v, a.propagate_nan);
                            else pool_mx_take<C, true>(m[0][j], v, rowpos + w, a.propagate_nan);
                        }
                    }
                }
            }
        }
        const int64_t C_ = a.walk_dim[0] * V;
        const int64_t opos = ((t[4] * a.out[0] + t[3]) * a.out[1] + t[2]) * a.out[2];
#pragma unroll
        for (int p = 0; p < P; p++) {
            if (ow[p] >= a.out[2]) continue;
            if (MODE == POOL_ARG) {
                uint32_t bytes = 0;
                const int first = ((dlo - d0) * a.win[1] + (hlo - h0)) * kwin + wlo[p] - w0[p];
#pragma unroll
                for (int j = 0; j < V; j++)
                    bytes |= (uint32_t)(uint8_t)pool_mx_at(m[p][j], first) << (8 * j);
                pool_st_bytes<V>(arg + (opos + ow[p]) * C_ + t[0] * V, bytes);
            } else {
                C v[V];
                const C div = a.include_pad ? C(a.win[0] * a.win[1] * a.win[2])
                                            : C((dhi - dlo) * (hhi - hlo) * (whi[p] - wlo[p]));
#pragma unroll
                for (int j = 0; j < V; j++)
                    v[j] = MODE == POOL_MAX ? m[p][j].best : pool_div(m[p][j].best, div);
                pool_stv<T, V>(y + t[4] * a.ys[0] + t[0] * V + t[3] * a.ys[2] + t[2] * a.ys[3] +
                                   ow[p] * a.ys[4],
                               v, alpha, beta);
            }
        }
    }
}

/* Backward gather over items of V channels of one dx element (walk: C / V,
 * w, h, d; n), c innermost and unit-stride in dy and dx. HOW:
 * POOL_BWD_ARGMAX (the bytes of pool_chan_fwd_kernel) or POOL_BWD_AVG. KW
 * > 0: the window is at most KW high and wide, so at most KW outputs cover
 * an element along h and along w; those loops unroll, their loads issuing
 * together. */
template <class T, int KW, int HOW>
POOL_FAST pool_chan_gather_kernel(pool_args a, const T *__restrict__ dy,
                                  const uint8_t *__restrict__ arg, T *__restrict__ dx,
                                  typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_vt<T> VT;
    constexpr int V = VT::N;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        const int w = (int)t[1], h = (int)t[2], d = (int)t[3];
        int olo[3], ohi[3];
        pool_covering(a, 0, d, olo[0], ohi[0]);
        pool_covering(a, 1, h, olo[1], ohi[1]);
        pool_covering(a, 2, w, olo[2], ohi[2]);
        const T *dyb = dy + t[4] * a.ys[0] + t[0] * V;
        const int64_t cpos = a.walk_dim[0] * V; /* C */
        C grad[V];
#pragma unroll
        for (int j = 0; j < V; j++) grad[j] = C(0);
        for (int od = olo[0]; od < ohi[0]; od++) {
            /* output (od, oh, ow)'s share */
            auto take = [&](int oh, int ow) {
                const VT u = *(const VT *)(dyb + od * a.ys[2] + oh * a.ys[3] + ow * a.ys[4]);
                if (HOW == POOL_BWD_ARGMAX) {
                    const int64_t orow = (t[4] * a.out[0] + od) * a.out[1] + oh;
                    const uint32_t bytes =
                        pool_ld_bytes<V>(arg + (orow * a.out[2] + ow) * cpos + t[0] * V);
                    const int rel = ((d - (od * a.str[0] - a.pad[0])) * a.win[1] +
                                     h - (oh * a.str[1] - a.pad[1])) *
                                        a.win[2] +
                                    w - (ow * a.str[2] - a.pad[2]);
#pragma unroll
                    for (int j = 0; j < V; j++)
                        grad[j] += (int)((bytes >> (8 * j)) & 0xff) == rel ? io<T>::ld(u.v[j]) : C(0);
                } else {
                    int lo0, hi0, lo1, hi1, lo2, hi2;
                    pool_span(a, 0, od, lo0, hi0);
                    pool_span(a, 1, oh, lo1, hi1);
                    pool_span(a, 2, ow, lo2, hi2);
                    const C div = a.include_pad ? C(a.win[0] * a.win[1] * a.win[2])
                                                : C((hi0 - lo0) * (hi1 - lo1) * (hi2 - lo2));
#pragma unroll
                    for (int j = 0; j < V; j++) grad[j] += pool_div(io<T>::ld(u.v[j]), div);
                }
            };
            if (KW > 0) {
#pragma unroll
                for (int kh = 0; kh < KW; kh++)
#pragma unroll
                    for (int kw = 0; kw < KW; kw++)
                        if (olo[1] + kh < ohi[1] && olo[2] + kw < ohi[2])
                            take(olo[1] + kh, olo[2] + kw);
            } else {
                for (int oh = olo[1]; oh < ohi[1]; oh++)
                    for (int ow = olo[2]; ow < ohi[2]; ow++) take(oh, ow);
            }
        }
        pool_stv<T, V>(dx + t[4] * a.xs2[0] + t[0] * V + d * a.xs2[2] + h * a.xs2[3] + w * a.xs2[4],
                       grad, alpha, beta);
    }
}

/* Backward in one pass when no windows overlap: items of V channels of one
 * output window (CLAST; V > 1 wants c innermost and unit-stride in x, dy and
 * dx; walk C / V, ow, oh, od; n) or of one output window (V = 1, walk ow,
 * oh, od, c; n), each reading its window and writing its cell. K > 0: the
 * window is at most K high and wide, its loads unrolled. MODE POOL_MAX or
 * POOL_AVG. */
template <class T, int V, bool CLAST, int K, int MODE>
POOL_FAST pool_cell_kernel(pool_args a, const T *__restrict__ x, const T *__restrict__ dy,
                           T *__restrict__ dx, typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_vt<T> VT;
    UDNN_GPU_GRID_STRIDE_LOOP(i, a.count)
    {
        int64_t t[5];
        pool_split(a, i, t);
        int64_t c0;
        int o[3];
        if (CLAST) {
            c0 = t[0] * V, o[2] = (int)t[1], o[1] = (int)t[2], o[0] = (int)t[3];
        } else {
            o[2] = (int)t[0], o[1] = (int)t[1], o[0] = (int)t[2], c0 = t[3];
        }
        int lo[3], hi[3], clo[3], chi[3], start[3];
#pragma unroll
        for (int k = 0; k < 3; k++) {
            start[k] = pool_span(a, k, o[k], lo[k], hi[k]);
            pool_cell(a, k, o[k], clo[k], chi[k]);
        }
        pool_mx<C> m[V];
#pragma unroll
        for (int j = 0; j < V; j++) pool_mx_init(m[j], a.propagate_nan);
        if (MODE == POOL_MAX) {
            const T *xb = x + t[4] * a.xs[0] + c0 * a.xs[1];
            for (int d = lo[0]; d < hi[0]; d++) {
                const T *plane = xb + d * a.xs[2];
                if (K > 0) {
                    /* (the window may be narrower than K) */
                    constexpr int KK = K > 0 ? K : 1;
                    const T padt = io<T>::st(pool_pad<C>(MODE, a.propagate_nan));
                    VT buf[KK][KK];
#pragma unroll
                    for (int r = 0; r < KK; r++)
#pragma unroll
                        for (int kw = 0; kw < KK; kw++) {
                            if (start[1] + r >= lo[1] && start[1] + r < hi[1] &&
                                start[2] + kw >= lo[2] && start[2] + kw < hi[2]) {
                                buf[r][kw] = pool_ldv<T, V>(plane + (start[1] + r) * a.xs[3] +
                                                            (start[2] + kw) * a.xs[4]);
                            } else {
#pragma unroll
                                for (int j = 0; j < V; j++) buf[r][kw].v[j] = padt;
                            }
                        }
#pragma unroll
                    for (int j = 0; j < V; j++) {
                        C v[KK * KK];
#pragma unroll
                        for (int k = 0; k < KK * KK; k++)
                            v[k] = io<T>::ld(buf[k / KK][k % KK].v[j]);
                        const C pm = pool_plane_max(v, a.propagate_nan);
                        const int k = pool_plane_at(v, pm);
                        const int pos = ((d - start[0]) * a.win[1] + k / KK) * a.win[2] + k % KK;
                        pool_mx_take<C, true>(m[j], pm, pos, a.propagate_nan);
                    }
                } else {
                    for (int h = lo[1]; h < hi[1]; h++) {
                        const T *row = plane + h * a.xs[3];
                        const int rowpos =
                            ((d - start[0]) * a.win[1] + (h - start[1])) * a.win[2] - start[2];
                        for (int w = lo[2]; w < hi[2]; w++) {
                            const VT u = pool_ldv<T, V>(row + w * a.xs[4]);
#pragma unroll
                            for (int j = 0; j < V; j++)
                                pool_mx_take<C, true>(m[j], io<T>::ld(u.v[j]), rowpos + w,
                                                      a.propagate_nan);
                        }
                    }
                }
            }
            const int first = ((lo[0] - start[0]) * a.win[1] + (lo[1] - start[1])) * a.win[2] + lo[2] - start[2];
#pragma unroll
            for (int j = 0; j < V; j++) m[j].at = pool_mx_at(m[j], first);
        }
        C g[V];
        {
            const VT u = pool_ldv<T, V>(dy + t[4] * a.ys[0] + c0 * a.ys[1] + o[0] * a.ys[2] +
                                        o[1] * a.ys[3] + o[2] * a.ys[4]);
#pragma unroll
            for (int j = 0; j < V; j++) g[j] = io<T>::ld(u.v[j]);
        }
        if (MODE == POOL_AVG) {
            const C div = a.include_pad ? C(a.win[0] * a.win[1] * a.win[2])
                                        : C((hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]));
#pragma unroll
            for (int j = 0; j < V; j++) g[j] = pool_div(g[j], div);
        }
        T *dxb = dx + t[4] * a.xs2[0] + c0 * a.xs2[1];
        for (int d = clo[0]; d < chi[0]; d++)
            for (int h = clo[1]; h < chi[1]; h++) {
                T *row = dxb + d * a.xs2[2] + h * a.xs2[3];
                const bool in_dh = d >= lo[0] && d < hi[0] && h >= lo[1] && h < hi[1];
                const int rowpos = ((d - start[0]) * a.win[1] + (h - start[1])) * a.win[2] - start[2];
                for (int w = clo[2]; w < chi[2]; w++) {
                    const bool in_win = in_dh && w >= lo[2] && w < hi[2];
                    C v[V];
#pragma unroll
                    for (int j = 0; j < V; j++)
                        v[j] = in_win && (MODE == POOL_AVG || m[j].at == rowpos + w) ? g[j] : C(0);
                    pool_stv<T, V>(row + w * a.xs2[4], v, alpha, beta);
                }
            }
    }
}

/* ---- host side ------------------------------------------------------------------------- */

/* c innermost in memory (NHWC-like): walk c fastest. */
static int pool_c_last(const udnn_tensor *t)
{
    if (t->dims[1] == 1) return 0;
    for (int d = 2; d < 5; d++)
        if (t->dims[d] > 1 && t->strides[d] < t->strides[1]) return 0;
    return 1;
}

/* The geometry, strides and walk of a problem; `walk` is the tensor the
 * kernel writes. */
static pool_args pool_args_of(const udnn_pool_problem *p, const udnn_tensor *walk, int c_last)
{
    pool_args a;
    memset(&a, 0, sizeof a);
    a.is_max = p->mode == UDNN_POOLING_MAX || p->mode == UDNN_POOLING_MAX_DETERMINISTIC;
    a.include_pad = p->mode == UDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING;
    a.propagate_nan = p->nan_opt == UDNN_PROPAGATE_NAN;
    for (int k = 0; k < 3; k++) {
        a.win[k] = p->window[k];
        a.pad[k] = p->pad[k];
        a.str[k] = p->stride[k];
        a.str_div[k] = udnn_gpu_div32_make((uint32_t)p->stride[k]);
        a.in[k] = (int)p->x.dims[2 + k];
        a.out[k] = (int)p->y.dims[2 + k];
    }
    for (int d = 0; d < 5; d++) {
        a.xs[d] = p->x.strides[d];
        a.ys[d] = p->y.strides[d];
    }
    const int order_c_last[4] = {1, 4, 3, 2}, order_c_first[4] = {4, 3, 2, 1};
    const int *order = c_last ? order_c_last : order_c_first;
    for (int k = 0; k < 4; k++) {
        a.walk_dim[k] = walk->dims[order[k]];
        a.walk_div[k] = udnn_gpu_div32_make((uint32_t)(a.walk_dim[k] > 0 ? a.walk_dim[k] : 1));
    }
    a.count = udnn_gpu_count(walk);
    return a;
}

static int pool_applicable(const void *problem, const char **why)
{
    const udnn_pool_problem *p = (const udnn_pool_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU pooling takes FLOAT, DOUBLE, HALF and BFLOAT16, every tensor alike";
        return 0;
    }
    /* the kernels index spatial positions in 32 bits */
    for (int k = 0; k < 3; k++)
        if (p->x.dims[2 + k] > INT32_MAX / 2 || p->y.dims[2 + k] > INT32_MAX / 2) {
            *why = "a spatial dimension of 2^30 or more";
            return 0;
        }
    return 1;
}

/* The strides of a dense byte tensor of y's dims laid out in the walk
 * order of pool_args_of (what pool_argmax_kernel writes). */
static void pool_walk_strides(const udnn_tensor *y, int c_last, int64_t ms[5])
{
    const int order_c_last[5] = {1, 4, 3, 2, 0}, order_c_first[5] = {4, 3, 2, 1, 0};
    const int *order = c_last ? order_c_last : order_c_first;
    int64_t step = 1;
    for (int k = 0; k < 5; k++) {
        ms[order[k]] = step;
        step *= y->dims[order[k]];
    }
}

template <class T, bool CLAST, bool BIG>
static void pool_fwd_launch(const udnn_gpu_context *c, const pool_args &a, const void *x, void *y,
                            double alpha, double beta)
{
    typedef typename io<T>::C C;
    pool_fwd_kernel<T, CLAST, BIG><<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(
        a, (const T *)x, (T *)y, (C)alpha, (C)beta);
}

template <class T, bool CLAST, bool BIG>
static void pool_argmax_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                               uint8_t *arg)
{
    pool_argmax_kernel<T, CLAST, BIG>
        <<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(a, (const T *)x, arg);
}

template <class T, bool CLAST, bool BIG, int HOW>
static void pool_bwd_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                            const void *dy, const uint8_t *arg, void *dx, double alpha,
                            double beta)
{
    typedef typename io<T>::C C;
    pool_bwd_kernel<T, CLAST, BIG, HOW>
        <<<udnn_gpu_grid(c, a.count), UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, arg, (T *)dx, (C)alpha, (C)beta);
}

/* Calls F<T, CLAST, BIG>(args...) with the flags as template arguments. */
#define POOL_LAUNCH(F, clast, big, ...)                                                     \
    do {                                                                                   \
        if (clast) {                                                                       \
            if (big) F<T, true, true>(__VA_ARGS__);                                        \
            else F<T, true, false>(__VA_ARGS__);                                           \
        } else {                                                                           \
            if (big) F<T, false, true>(__VA_ARGS__);                                       \
            else F<T, false, false>(__VA_ARGS__);                                          \
        }                                                                                  \
    } while (0)

static int pool_big(const pool_args &a)
{
    return a.count >= ((int64_t)1 << 31);
}

/* ---- host side: the fast paths ----------------------------------------------------------- */

/* pool_pack_ok for pool_vt<T> (V elements). */
template <class T> static int pool_vec_ok(const void *ptr, const udnn_tensor *t, int inner)
{
    return pool_pack_ok<T>(ptr, t, inner, pool_vt<T>::N);
}

/* The w geometries (window, stride, pad) the row kernels are compiled for,
 * numbered as POOL_ROW_SWITCH takes them; -1 for any other, or for a window
 * higher than wide (the row kernels unroll its rows). */
#define POOL_ROW_GEOMS 4
static int pool_row_geom(const udnn_pool_problem *p)
{
    static const int geoms[POOL_ROW_GEOMS][3] = {{2, 2, 0}, {3, 2, 1}, {3, 2, 0}, {3, 1, 1}};
    for (int g = 0; g < POOL_ROW_GEOMS; g++)
        if (p->window[2] == geoms[g][0] && p->stride[2] == geoms[g][1] &&
            p->pad[2] == geoms[g][2] && p->window[1] <= p->window[2])
            return g;
    return -1;
}

/* Calls F<T, KW, SW, PW>(args...) for row geometry number `geom`. */
#define POOL_ROW_SWITCH(geom, F, ...)                                                       \
    switch (geom) {                                                                        \
    case 0: F<T, 2, 2, 0>(__VA_ARGS__); break;                                             \
    case 1: F<T, 3, 2, 1>(__VA_ARGS__); break;                                             \
    case 2: F<T, 3, 2, 0>(__VA_ARGS__); break;                                             \
    default: F<T, 3, 1, 1>(__VA_ARGS__); break;                                            \
    }

/* The row forward over n images of C channels (a: pool_args_of with vx
 * and vy set). */
template <class T, int KW, int SW, int PW>
static void pool_row_fwd_launch(const udnn_gpu_context *c, const pool_args &a0, int64_t C_,
                                int64_t n, int mode, const void *x, void *y, uint8_t *arg,
                                double alpha, double beta)
{
    typedef typename io<T>::C C;
    typedef pool_row_shape<T, KW, SW, PW> S;
    pool_args a = a0;
    pool_walk(a, (a.out[2] + S::V - 1) / S::V, (a.out[1] + S::R - 1) / S::R, a.out[0], C_, n);
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (mode == POOL_ARG)
        pool_row_fwd_kernel<T, KW, SW, PW, POOL_ARG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
    else if (mode == POOL_MAX)
        pool_row_fwd_kernel<T, KW, SW, PW, POOL_MAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
    else
        pool_row_fwd_kernel<T, KW, SW, PW, POOL_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
}

template <class T, int KW, int SW, int PW>
static void pool_row_gather_launch(const udnn_gpu_context *c, const pool_args &a, int how,
                                   const void *dy, const uint8_t *arg, int64_t pitch, void *dx,
                                   double alpha, double beta)
{
    typedef typename io<T>::C C;
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (how == POOL_BWD_ARGMAX)
        pool_row_gather_kernel<T, KW, SW, PW, POOL_BWD_ARGMAX>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, (const T *)dy, arg, pitch, (T *)dx,
                                                     (C)alpha, (C)beta);
    else
        pool_row_gather_kernel<T, KW, SW, PW, POOL_BWD_AVG>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, (const T *)dy, arg, pitch, (T *)dx,
                                                     (C)alpha, (C)beta);
}

/* The channel forward over n images of C channels (a: pool_args_of). */
template <class T, int KW, int SW>
static void pool_chan_fwd_launch(const udnn_gpu_context *c, const pool_args &a0, int64_t C_,
                                 int64_t n, int mode, const void *x, void *y, uint8_t *arg,
                                 double alpha, double beta)
{
    typedef typename io<T>::C C;
    const int V = pool_vt<T>::N, P = SW > 0 ? 2 : 1;
    pool_args a = a0;
    pool_walk(a, C_ / V, (a.out[2] + P - 1) / P, a.out[1], a.out[0], n);
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (mode == POOL_ARG)
        pool_chan_fwd_kernel<T, KW, SW, POOL_ARG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
    else if (mode == POOL_MAX)
        pool_chan_fwd_kernel<T, KW, SW, POOL_MAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
    else
        pool_chan_fwd_kernel<T, KW, SW, POOL_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (T *)y, arg, (C)alpha, (C)beta);
}

/* The channel forward with the window unrolled where it is 2 or 3 wide and
 * no higher, and two outputs an item where they stand 2 apart. */
template <class T>
static void pool_chan_fwd_go(const udnn_gpu_context *c, const pool_args &a, int64_t C_,
                             int64_t n, int mode, const void *x, void *y, uint8_t *arg,
                             double alpha, double beta)
{
    const int two = a.str[2] == 2;
    if (a.win[2] == 2 && a.win[1] <= 2) {
        if (two) pool_chan_fwd_launch<T, 2, 2>(c, a, C_, n, mode, x, y, arg, alpha, beta);
        else pool_chan_fwd_launch<T, 2, 0>(c, a, C_, n, mode, x, y, arg, alpha, beta);
    } else if (a.win[2] == 3 && a.win[1] <= 3) {
        if (two) pool_chan_fwd_launch<T, 3, 2>(c, a, C_, n, mode, x, y, arg, alpha, beta);
        else pool_chan_fwd_launch<T, 3, 0>(c, a, C_, n, mode, x, y, arg, alpha, beta);
    } else {
        pool_chan_fwd_launch<T, 0, 0>(c, a, C_, n, mode, x, y, arg, alpha, beta);
    }
}

template <class T, int KW>
static void pool_chan_gather_launch(const udnn_gpu_context *c, const pool_args &a, int how,
                                    const void *dy, const uint8_t *arg, void *dx, double alpha,
                                    double beta)
{
    typedef typename io<T>::C C;
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (how == POOL_BWD_ARGMAX)
        pool_chan_gather_kernel<T, KW, POOL_BWD_ARGMAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)dy, arg, (T *)dx, (C)alpha, (C)beta);
    else
        pool_chan_gather_kernel<T, KW, POOL_BWD_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)dy, arg, (T *)dx, (C)alpha, (C)beta);
}

/* The channel gather with its covering loops unrolled where the window is
 * at most 3 high and wide. */
template <class T>
static void pool_chan_gather_go(const udnn_gpu_context *c, const pool_args &a, int how,
                                const void *dy, const uint8_t *arg, void *dx, double alpha,
                                double beta)
{
    if (a.win[1] <= 2 && a.win[2] <= 2)
        pool_chan_gather_launch<T, 2>(c, a, how, dy, arg, dx, alpha, beta);
    else if (a.win[1] <= 3 && a.win[2] <= 3)
        pool_chan_gather_launch<T, 3>(c, a, how, dy, arg, dx, alpha, beta);
    else
        pool_chan_gather_launch<T, 0>(c, a, how, dy, arg, dx, alpha, beta);
}

template <class T, int V, bool CLAST, int K>
static void pool_cell_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                             const void *dy, void *dx, double alpha, double beta)
{
    typedef typename io<T>::C C;
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (a.is_max)
        pool_cell_kernel<T, V, CLAST, K, POOL_MAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, (T *)dx, (C)alpha, (C)beta);
    else
        pool_cell_kernel<T, V, CLAST, K, POOL_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, (T *)dx, (C)alpha, (C)beta);
}

template <class T>
static void pool_row_cell_launch(const udnn_gpu_context *c, const pool_args &a, const void *x,
                                 const void *dy, void *dx, double alpha, double beta)
{
    typedef typename io<T>::C C;
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (a.is_max)
        pool_row_cell_kernel<T, POOL_MAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, (T *)dx, (C)alpha, (C)beta);
    else
        pool_row_cell_kernel<T, POOL_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)x, (const T *)dy, (T *)dx, (C)alpha, (C)beta);
}

/* The 2x2 / 2 forward on rows (a: pool_args_of; mode POOL_MAX or POOL_AVG). */
template <class T>
static void pool_row2_fwd_launch(const udnn_gpu_context *c, const udnn_pool_problem *p,
                                 const pool_args &a0, int mode)
{
    typedef typename io<T>::C C;
    constexpr int XV = 16 / (int)sizeof(T), P = XV / 2, R = POOL_ROW2_ROWS;
    pool_args a = a0;
    pool_walk(a, (a.out[2] + P - 1) / P, (a.out[1] + R - 1) / R, a.out[0], p->y.dims[1],
              p->y.dims[0]);
    a.vx = pool_pack_ok<T>(p->x_ptr, &p->x, 4, XV);
    a.vy = pool_pack_ok<T>(p->out_ptr, &p->y, 4, P);
    const unsigned grid = udnn_gpu_grid(c, a.count);
    if (mode == POOL_MAX)
        pool_row2_fwd_kernel<T, R, POOL_MAX><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)p->x_ptr, (T *)p->out_ptr, (C)p->alpha, (C)p->beta);
    else
        pool_row2_fwd_kernel<T, R, POOL_AVG><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
            a, (const T *)p->x_ptr, (T *)p->out_ptr, (C)p->alpha, (C)p->beta);
}

/* The forward on its fastest path: rows, channels or the general kernel. */
template <class T>
static void pool_fwd_go(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                        const pool_args &a)
{
    const int V = pool_vt<T>::N;
    const int mode = a.is_max ? POOL_MAX : POOL_AVG;
    const int geom = pool_row_geom(p);
    const int64_t N = p->y.dims[0], C = p->y.dims[1];
    pool_args r = a;
    if (!c_last && geom >= 0) {
        if (geom == 0) {
            pool_row2_fwd_launch<T>(c, p, a, mode);
            return;
        }
        r.vx = pool_vec_ok<T>(p->x_ptr, &p->x, 4);
        r.vy = pool_vec_ok<T>(p->out_ptr, &p->y, 4);
        POOL_ROW_SWITCH(geom, pool_row_fwd_launch, c, r, C, N, mode, p->x_ptr, p->out_ptr, NULL,
                        p->alpha, p->beta);
    } else if (c_last && C % V == 0 && pool_vec_ok<T>(p->x_ptr, &p->x, 1) &&
               pool_vec_ok<T>(p->out_ptr, &p->y, 1)) {
        pool_chan_fwd_go<T>(c, r, C, N, mode, p->x_ptr, p->out_ptr, NULL, p->alpha, p->beta);
    } else {
        POOL_LAUNCH(pool_fwd_launch, c_last, pool_big(a), c, a, p->x_ptr, p->out_ptr, p->alpha,
                    p->beta);
    }
}

/* The backward on a fast path (a = pool_args_of for dx with dy's and dx's
 * strides); 0 when none takes the problem. */
template <class T>
static int pool_bwd_fast(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                         const pool_args &a, udnnStatus_t *st)
{
    const int V = pool_vt<T>::N;
    const int64_t N = p->x.dims[0], C = p->x.dims[1];
    const int *in = a.in, *out = a.out;
    int overlap = 0;
    for (int k = 0; k < 3; k++) overlap |= p->stride[k] < p->window[k];
    const int geom = pool_row_geom(p);
    const int chan = c_last && C % V == 0 && pool_vec_ok<T>(p->x_ptr, &p->x, 1) &&
                     pool_vec_ok<T>(p->dy_ptr, &p->dy, 1) &&
                     pool_vec_ok<T>(p->out_ptr, &p->dx, 1);
    const double al = p->alpha, be = p->beta;
    pool_args r = a;
    if (a.is_max && !c_last && pool_tile_bwd<T>(c, p, a)) {
        *st = udnn_gpu_launched();
        return 1;
    }
    if (!overlap) {
        /* one pass over the windows */
        if (!c_last && geom == 0 && p->window[1] <= 2) {
            pool_walk(r, (out[2] + V - 1) / V, out[1], out[0], C, N);
            r.vx = pool_vec_ok<T>(p->x_ptr, &p->x, 4);
            r.vy = pool_vec_ok<T>(p->dy_ptr, &p->dy, 4);
            r.vdx = pool_vec_ok<T>(p->out_ptr, &p->dx, 4);
            pool_row_cell_launch<T>(c, r, p->x_ptr, p->dy_ptr, p->out_ptr, al, be);
        } else if (chan) {
            pool_walk(r, C / V, out[2], out[1], out[0], N);
            if (p->window[1] <= 2 && p->window[2] <= 2)
                pool_cell_launch<T, pool_vt<T>::N, true, 2>(c, r, p->x_ptr, p->dy_ptr, p->out_ptr,
                                                            al, be);
            else
                pool_cell_launch<T, pool_vt<T>::N, true, 0>(c, r, p->x_ptr, p->dy_ptr, p->out_ptr,
                                                            al, be);
        } else if (c_last) {
            pool_walk(r, C, out[2], out[1], out[0], N);
            pool_cell_launch<T, 1, true, 0>(c, r, p->x_ptr, p->dy_ptr, p->out_ptr, al, be);
        } else {
            pool_walk(r, out[2], out[1], out[0], C, N);
            pool_cell_launch<T, 1, false, 0>(c, r, p->x_ptr, p->dy_ptr, p->out_ptr, al, be);
        }
        *st = udnn_gpu_launched();
        return 1;
    }
    const int row = !c_last && geom >= 0;
    if (!row && !chan) return 0;
    /* the gather's walk over dx */
    const int64_t groups = (in[2] + V - 1) / V, ygroups = (out[2] + V - 1) / V;
    if (row) {
        pool_walk(r, groups, in[1], in[0], C, N);
        r.vdx = pool_vec_ok<T>(p->out_ptr, &p->dx, 4);
    } else {
        pool_walk(r, C / V, in[2], in[1], in[0], N);
    }
    if (!a.is_max) {
        if (row)
            POOL_ROW_SWITCH(geom, pool_row_gather_launch, c, r, POOL_BWD_AVG, p->dy_ptr, NULL, 0,
                            p->out_ptr, al, be)
        else
            pool_chan_gather_go<T>(c, r, POOL_BWD_AVG, p->dy_ptr, NULL, p->out_ptr, al, be);
        *st = udnn_gpu_launched();
        return 1;
    }
    /* max: the argmax bytes of a batch of images, then their gather */
    if ((int64_t)p->window[0] * p->window[1] * p->window[2] > 256) return 0;
    const int64_t pitch = ygroups * V;
    const int64_t per_image = row ? C * out[0] * out[1] * pitch : C * out[0] * out[1] * out[2];
    if (per_image <= 0 || (size_t)per_image > c->scratch_bytes) return 0;
    int64_t batch = (int64_t)(c->scratch_bytes / (size_t)per_image);
    if (batch > N) batch = N;
    uint8_t *arg = (uint8_t *)c->scratch;
    for (int64_t n0 = 0; n0 < N; n0 += batch) {
        const int64_t nb = N - n0 < batch ? N - n0 : batch;
        const T *x = (const T *)p->x_ptr + n0 * p->x.strides[0];
        const T *dy = (const T *)p->dy_ptr + n0 * p->dy.strides[0];
        T *dx = (T *)p->out_ptr + n0 * p->dx.strides[0];
        pool_args f = a, g = r;
        if (row) {
            f.vx = pool_vec_ok<T>(p->x_ptr, &p->x, 4);
            POOL_ROW_SWITCH(geom, pool_row_fwd_launch, c, f, C, nb, POOL_ARG, x, NULL, arg, 1.0,
                            0.0);
            if ((*st = udnn_gpu_launched()) != UDNN_STATUS_SUCCESS) return 1;
            pool_walk(g, groups, in[1], in[0], C, nb);
            POOL_ROW_SWITCH(geom, pool_row_gather_launch, c, g, POOL_BWD_ARGMAX, dy, arg, pitch,
                            dx, al, be);
        } else {
            pool_chan_fwd_go<T>(c, f, C, nb, POOL_ARG, x, NULL, arg, 1.0, 0.0);
            if ((*st = udnn_gpu_launched()) != UDNN_STATUS_SUCCESS) return 1;
            pool_walk(g, C / V, in[2], in[1], in[0], nb);
            pool_chan_gather_go<T>(c, g, POOL_BWD_ARGMAX, dy, arg, dx, al, be);
        }
        if ((*st = udnn_gpu_launched()) != UDNN_STATUS_SUCCESS) return 1;
    }
    return 1;
}

static udnnStatus_t pool_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_pool_problem);
    const int c_last = pool_c_last(&p->y);
    pool_args a = pool_args_of(p, &p->y, c_last);
    if (a.count == 0) return UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, pool_fwd_go<T>(c, p, c_last, a));
    return udnn_gpu_launched();
}

template <class T, int HOW>
static void pool_bwd_go(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                        const pool_args &a, const uint8_t *arg)
{
    const void *x = p->x_ptr, *dy = p->dy_ptr;
    void *dx = p->out_ptr;
    const double al = p->alpha, be = p->beta;
    if (c_last) {
        if (pool_big(a)) pool_bwd_launch<T, true, true, HOW>(c, a, x, dy, arg, dx, al, be);
        else pool_bwd_launch<T, true, false, HOW>(c, a, x, dy, arg, dx, al, be);
    } else {
        if (pool_big(a)) pool_bwd_launch<T, false, true, HOW>(c, a, x, dy, arg, dx, al, be);
        else pool_bwd_launch<T, false, false, HOW>(c, a, x, dy, arg, dx, al, be);
    }
}

static udnnStatus_t pool_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_pool_problem);
    const int c_last = pool_c_last(&p->dx);
    pool_args a = pool_args_of(p, &p->dx, c_last);
    /* the backward reads x and dy and writes dx */
    for (int d = 0; d < 5; d++) {
        a.ys[d] = p->dy.strides[d];
        a.xs2[d] = p->dx.strides[d];
    }
    if (a.count == 0) return UDNN_STATUS_SUCCESS;
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    int done = 0;
    UDNN_GPU_DISPATCH(p->x.dtype, done = pool_bwd_fast<T>(c, p, c_last, a, &st));
    if (done) return st;
    const int64_t y_count = udnn_gpu_count(&p->y);
    const int64_t win_vol = (int64_t)p->window[0] * p->window[1] * p->window[2];
    /* max: the argmax of every window first, a byte each, when they fit */
    const int by_argmax = a.is_max && win_vol <= 256 && y_count > 0 &&
                          (size_t)y_count <= c->scratch_bytes;
    if (by_argmax) {
        const int y_c_last = pool_c_last(&p->y);
        pool_args ay = pool_args_of(p, &p->y, y_c_last);
        const int y_big = pool_big(ay);
        uint8_t *arg = (uint8_t *)c->scratch;
        UDNN_GPU_DISPATCH(p->x.dtype,
                          POOL_LAUNCH(pool_argmax_launch, y_c_last, y_big, c, ay, p->x_ptr, arg));
        if ((st = udnn_gpu_launched()) != UDNN_STATUS_SUCCESS) return st;
        pool_walk_strides(&p->y, y_c_last, a.ms);
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_ARGMAX>(c, p, c_last, a, arg));
    } else if (a.is_max) {
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_SCAN>(c, p, c_last, a, NULL));
    } else {
        UDNN_GPU_DISPATCH(p->x.dtype, pool_bwd_go<T, POOL_BWD_AVG>(c, p, c_last, a, NULL));
    }
    return udnn_gpu_launched();
}

static const udnn_solver pool_fwd = {
    /* .name = */ "gpu_pool_fwd",
    /* .op = */ UDNN_OP_POOL_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ pool_applicable,
    /* .workspace = */ NULL,
    /* .run = */ pool_fwd_run,
};

static const udnn_solver pool_bwd = {
    /* .name = */ "gpu_pool_bwd",
    /* .op = */ UDNN_OP_POOL_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ pool_applicable,
    /* .workspace = */ NULL,
    /* .run = */ pool_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(pool, &pool_fwd, &pool_bwd);
