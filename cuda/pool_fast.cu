/* pool_fast.cu - pooling's fast paths (pool.h): rows (w innermost), channels
 * (c innermost) and cells (windows that do not overlap), forward and
 * backward, as pool.cu's opening comment describes them, and the host
 * side that picks among them. */
#include "cuda/pool.h"

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

/* V argmax bytes (V = 2 or 4), byte j of `bytes` at p + j; p aligned to V. */
template <int V> __device__ __forceinline__ void pool_st_bytes(uint8_t *p, uint32_t bytes)
{
    typedef typename udnn_gpu_word<V>::t W;
    *(W *)p = (W)bytes;
}
template <int V> __device__ __forceinline__ uint32_t pool_ld_bytes(const uint8_t *p)
{
    return *(const typename udnn_gpu_word<V>::t *)p;
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
                    pool_window_take<MODE>(m[rr][j], v, base, a.propagate_nan);
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
                const int dpos = d - (od * a.str[0] - a.pad[0]),
                          hpos = h - (oh * a.str[1] - a.pad[1]);
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
    pool_blending<T>(beta, [&](auto blending) {
        constexpr bool BLEND = decltype(blending)::value;
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
                        pool_mx_take<C, true>(m[j], pm, base + pool_plane_at(v, pm),
                                              a.propagate_nan);
                    }
                }
#pragma unroll
                for (int j = 0; j < V; j++)
                    m[j].at = pool_mx_at(m[j], ((dlo - d0) * a.win[1] + (hlo - h0)) * 2);
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
                            pool_stv_if<BLEND, T, V>(row + B + q * V, v, alpha, beta);
                        } else {
#pragma unroll
                            for (int k = 0; k < V; k++)
                                if (q * V + k < ehi)
                                    udnn_gpu_blend_store(row + (B + q * V + k) * a.xs2[4], v[k],
                                                         alpha, beta);
                        }
                    }
                    if (last)
                        for (int w = B + NB; w < a.in[2]; w++)
                            udnn_gpu_blend_store(row + w * a.xs2[4], C(0), alpha, beta);
                }
        }
    });
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
    /* NaN propagation chosen once a launch, as pool_row_tile_kernel's:
     * H200, bursts, three passes, max 64 x 256 x 56 x 56, GB/s: f16 3714 /
     * 3715 / 3721 against 3527 / 3538 / 3543, f32 4059 / 4069 / 4078
     * against 4047 / 4054 / 4071 */
    udnn_gpu_choose(a.propagate_nan, [&](auto propagating) {
        constexpr bool PROP = decltype(propagating)::value;
        const C pad = pool_pad<C>(MODE, PROP);
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
                    pool_mx<C> m = {pad, 0};
                    for (int d = dlo; d < dhi; d++) {
                        C v[4];
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const int h = h0 + e / 2, w = 2 * ow + e % 2;
                            v[e] = h >= hlo && h < hhi && w < a.in[2]
                                       ? io<T>::ld(xb[d * a.xs[2] + h * a.xs[3] + w * a.xs[4]])
                                       : pad;
                        }
                        pool_window_take<MODE>(m, v, 0, PROP);
                    }
                    if (MODE == POOL_AVG) {
                        const int cols = (2 * ow + 2 < a.in[2] ? 2 : a.in[2] - 2 * ow);
                        const int cells = a.include_pad ? a.win[0] * a.win[1] * 2
                                                        : (dhi - dlo) * (hhi - hlo) * cols;
                        m.best = pool_div(m.best, C(cells));
                    }
                    udnn_gpu_blend_store(yb + oh * a.ys[3] + ow * a.ys[4], m.best, alpha, beta);
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
            pool_mx<C> m[R][P];
#pragma unroll
            for (int rr = 0; rr < R; rr++)
#pragma unroll
                for (int j = 0; j < P; j++) m[rr][j] = {pad, 0};
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
                        const C v[4] = {
                            io<T>::ld(buf[rr][0].v[2 * j]), io<T>::ld(buf[rr][0].v[2 * j + 1]),
                            io<T>::ld(buf[rr][1].v[2 * j]), io<T>::ld(buf[rr][1].v[2 * j + 1])};
                        pool_window_take<MODE>(m[rr][j], v, 0, PROP);
                    }
            }
#pragma unroll
            for (int rr = 0; rr < R; rr++) {
                if (oh[rr] >= a.out[1]) continue;
                C v[P];
#pragma unroll
                for (int j = 0; j < P; j++)
                    v[j] = MODE == POOL_MAX
                               ? m[rr][j].best
                               : pool_div(m[rr][j].best, a.include_pad
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
    });
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
    pool_blending<T>(beta, [&](auto blending) {
        constexpr bool BLEND = decltype(blending)::value;
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
                            pool_window_take<MODE>(m[p][j], v, base, a.propagate_nan);
                        }
                } else {
                    for (int h = hlo; h < hhi; h++) {
                        const T *row = plane + h * a.xs[3];
                        const int rowpos = ((d - d0) * a.win[1] + (h - h0)) * kwin - w0[0];
                        for (int w = wlo[0]; w < whi[0]; w++) {
                            const VT u = *(const VT *)(row + w * a.xs[4]);
#pragma unroll
                            for (int j = 0; j < V; j++) {
                                const C v[1] = {io<T>::ld(u.v[j])};
                                pool_window_take<MODE>(m[0][j], v, rowpos + w, a.propagate_nan);
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
                    pool_stv_if<BLEND, T, V>(y + t[4] * a.ys[0] + t[0] * V + t[3] * a.ys[2] +
                                                 t[2] * a.ys[3] + ow[p] * a.ys[4],
                                             v, alpha, beta);
                }
            }
        }
    });
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
                        grad[j] +=
                            (int)((bytes >> (8 * j)) & 0xff) == rel ? io<T>::ld(u.v[j]) : C(0);
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
            const int first =
                ((lo[0] - start[0]) * a.win[1] + (lo[1] - start[1])) * a.win[2] + lo[2] - start[2];
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
                const int rowpos =
                    ((d - start[0]) * a.win[1] + (h - start[1])) * a.win[2] - start[2];
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

/* The forward on a fast path (pool.h). */
template <class T>
int pool_fwd_fast(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
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
            return 1;
        }
        r.vx = pool_vec_ok<T>(p->x_ptr, &p->x, 4);
        r.vy = pool_vec_ok<T>(p->out_ptr, &p->y, 4);
        POOL_ROW_SWITCH(geom, pool_row_fwd_launch, c, r, C, N, mode, p->x_ptr, p->out_ptr, NULL,
                        p->alpha, p->beta);
        return 1;
    }
    if (c_last && C % V == 0 && pool_vec_ok<T>(p->x_ptr, &p->x, 1) &&
        pool_vec_ok<T>(p->out_ptr, &p->y, 1)) {
        pool_chan_fwd_go<T>(c, r, C, N, mode, p->x_ptr, p->out_ptr, NULL, p->alpha, p->beta);
        return 1;
    }
    return 0;
}

/* The backward on a fast path (pool.h). */
template <class T>
int pool_bwd_fast(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
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

#define POOL_FAST_TYPE(T)                                                                          \
    template int pool_fwd_fast<T>(const udnn_gpu_context *, const udnn_pool_problem *, int,        \
                                  const pool_args &);                                              \
    template int pool_bwd_fast<T>(const udnn_gpu_context *, const udnn_pool_problem *, int,        \
                                  const pool_args &, udnnStatus_t *);
UDNN_GPU_FLOAT_TYPES(POOL_FAST_TYPE)
