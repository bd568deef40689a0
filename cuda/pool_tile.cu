/* pool_tile.cu - max pooling backward in one pass where 3x3 windows 2
 * apart overlap (the pooling after a ResNet stem), through shared-memory
 * tiles of a plane's rows: x and dy read once, each window's argmax found
 * once, dx written once (pool_row_tile_kernel). pool.cu's backward takes
 * it first (pool_tile_bwd) and its other paths where it declines. */
#include "cuda/pool.h"

/* pool_row_tile_kernel's resident blocks per multiprocessor asked of the
 * compiler (a register cap: 65536 / (256 MINB)), and the most shared
 * memory of each of its two tile buffers. H100, 64 x 256 x 56 x 56, max 3x3
 * / 2 backward: one tile of 20 KB took it from 1588 to 1786 (f32) and 711
 * to 938 (f16), where 8 KB made it slower (1096 f32) and a tile of
 * registers (each item its own halo from memory) reached 1612 / 906; two
 * buffers of 20 KB, the next tile's loads in flight while a block computes
 * this one, took it on to 2065 / 1166 (MINB 5: 1575 / 931; MINB 6: 2116 /
 * 1166, the same within the spread; the grid one wave of resident blocks:
 * 1901 / 1064). Shared memory padded for windows without bounds tests, the
 * dx gather two rows a thread, 16-bit argmax two windows a thread, and
 * each tile located once: 2350 to 2796 (f32) and 1329 to 1992 (f16),
 * cuDNN ratios 1.29 and 2.38. POOL_TILE_GRID: blocks per multiprocessor
 * in the grid, 0 for the context's most; in that run 16 gave 2733 / 2002
 * and 8 2616 / 1894 (32 x 64 x 112 x 112 f16: 2117 and 2065, and 1561 at
 * 0, where other runs of the same kernel gave 1740 to 1840). */
#define POOL_TILE_MINB 4
#define POOL_TILE_BYTES 20480
#ifndef POOL_TILE_GRID
#define POOL_TILE_GRID 0
#endif

/* pool_row_tile_kernel's shared-memory rows: x rows of `pitch` elements,
 * column w at XV + w (XV: 16 bytes of elements, so that the copies stay
 * aligned), the columns around [0, in2) holding pool_pad's value; dy rows
 * of dpitch, window column ow at XV + ow; argmax rows of apitch bytes
 * (even), window column ow at 2 + ow, 0xFF (no position) where no window
 * is. The padding lets every window and every gather read without a
 * bounds test: those tests were most of the kernel's instructions. */
typedef struct {
    int tc, pitch, dpitch, apitch;
} pool_tile_geo;

/* The shape of pool_row_tile_kernel's work, for the kernel and its launch
 * alike: windows KW wide, SW apart, padded by PW; XV elements (16 bytes)
 * the first x and dy column's offset in a row and a dx group's width; the
 * windows covering a pair of dx rows (NWR, from window W0 on, relative to
 * the tile's first) and a group of XV columns (NWC); the x rows a pair's
 * windows span (NXR, from row X0 on); the windows an argmax thread takes
 * (NA: two of 16-bit types, pool_pair_argmax, and of float,
 * pool_two_argmax) and the first window
 * column's offset in an argmax row (AL). */
template <class T, int PW> struct pool_tile_shape {
    static constexpr int KW = 3, SW = 2, XV = 16 / (int)sizeof(T);
    static constexpr int W0 = pool_ceil_div(PW - KW + 1, SW);
    static constexpr int NWR = pool_floor_div(SW - 1 + PW, SW) - W0 + 1;
    static constexpr int NWC = pool_floor_div(XV - 1 + PW, SW) - W0 + 1;
    static constexpr int X0 = W0 * SW - PW, NXR = (NWR - 1) * SW + KW;
    static constexpr int NA = sizeof(T) <= 4 ? 2 : 1, AL = 2;
    /* the x rows and window rows of a tile of tc cell rows */
    static __host__ __device__ int xrows(int tc) { return (tc - 1) * SW + NXR; }
    static __host__ __device__ int wrows(int tc) { return tc + NWR - 1; }
    /* a buffer's bytes, its x rows then its dy rows, rounded up to 16 (I:
     * int in the kernel, size_t on the host) */
    template <class I> static __host__ __device__ I buffer_bytes(int tc, int pitch, int dpitch)
    {
        return (((I)xrows(tc) * (I)pitch + (I)wrows(tc) * (I)dpitch) * (I)sizeof(T) + 15) / 16 * 16;
    }
};

/* pool_row_tile_kernel's walks split u into (u / d, u % d) by
 * multiply-high: the kernel was bound by its instructions, and the four
 * walks' divisions were many of them (H100, 64 x 256 x 56 x 56, max 3x3 /
 * 2 backward: f32 2023 to 2350 GB/s, cuDNN ratio 0.973 to 1.08; f16 1190
 * to 1302). xper, yper: the copy units of an x row and a dy row; aunits:
 * an argmax row's units (a byte, or two for 16-bit types); groups: a dx
 * row's groups of 16 bytes. */
typedef struct {
    udnn_gpu_div32 xper, yper, aunits, groups;
} pool_tile_divs;

__device__ __forceinline__ int pool_tile_q(const udnn_gpu_div32 &d, int u)
{
    return (int)udnn_gpu_div32_q(d, (uint32_t)u);
}

/* One copy unit of `bytes` (16, 8 or 4; less: one element) from global
 * to shared memory. */
template <class T> __device__ __forceinline__ void pool_tile_copy(T *s, const T *g, int bytes)
{
    if (bytes == 16) udnnGpuCopyAsync16(s, g);
    else if (bytes == 8) udnnGpuCopyAsyncL1<8>(s, g);
    else if (bytes == 4) udnnGpuCopyAsyncL1<4>(s, g);
    else *s = *g;
}

/* Where a tile lies: its first cell row c0, whether a window plane
 * covers its d (else dx is 0), and the offsets of its x and dy planes and
 * its dx plane, from its digits in the walk (t[0] its tile of the plane,
 * then d, c, n). Each tile is located once, as the next tile, and carried
 * to the next iteration. */
typedef struct {
    int c0;
    bool live;
    int64_t xo, yo, dxo;
} pool_tile_at;

__device__ __forceinline__ pool_tile_at pool_tile_place(const pool_args &a, int tc, const int t[4])
{
    pool_tile_at at;
    const int d = t[1], od = (int)udnn_gpu_div32_q(a.str_div[0], (uint32_t)d);
    at.c0 = t[0] * tc;
    at.live = od * a.str[0] == d && od < a.out[0];
    at.xo = (int64_t)t[3] * a.xs[0] + (int64_t)t[2] * a.xs[1] + (int64_t)d * a.xs[2];
    at.yo = (int64_t)t[3] * a.ys[0] + (int64_t)t[2] * a.ys[1] + (int64_t)od * a.ys[2];
    at.dxo = (int64_t)t[3] * a.xs2[0] + (int64_t)t[2] * a.xs2[1] + (int64_t)d * a.xs2[2];
    return at;
}

/* The digits of the grid's size in the walk (each below its dimension),
 * so that a block steps from tile to tile by adding them: a carry a digit,
 * no division (H100, 64 x 256 x 56 x 56 f16: splitting each next tile's
 * index was 10% of the kernel's instructions). */
typedef struct {
    int g[4];
} pool_tile_step;

__device__ __forceinline__ void pool_tile_advance(const pool_args &a, const pool_tile_step &st,
                                                  int t[4])
{
    int carry = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int v = t[k] + st.g[k] + carry, r = (int)a.walk_dim[k];
        carry = v >= r;
        t[k] = carry ? v - r : v;
    }
}

/* Issues the copies of the x rows and dy rows of the tile at `at` into
 * buf. x rows outside x take pool_pad's value; dy rows outside dy are not
 * copied (their argmax bytes say no position). Offsets within a plane fit
 * 32 bits (pool_row_tile_launch). */
template <class T, int PW>
__device__ __forceinline__ void pool_tile_issue(const pool_args &a, const pool_tile_divs &dv,
                                                const pool_tile_geo &g, const pool_tile_at &at,
                                                int xrows, int wrows, const T *__restrict__ x,
                                                const T *__restrict__ dy, unsigned char *buf,
                                                T padt)
{
    typedef pool_tile_shape<T, PW> S;
    constexpr int XV = S::XV;
    if (!at.live) return; /* dx is 0 */
    const int hx = at.c0 * S::SW + S::X0, oh1 = at.c0 + S::W0, in1 = a.in[1], out1 = a.out[1];
    const T *xp = x + at.xo, *dyp = dy + at.yo;
    T *xs = (T *)buf + XV, *dys = (T *)buf + xrows * g.pitch + XV;
    const int ux = a.vx, xper = (int)dv.xper.d, xb = ux * (int)sizeof(T);
    const int xr = (int)a.xs[3], xc = ux * (int)a.xs[4];
    for (int u = threadIdx.x; u < xrows * xper; u += blockDim.x) {
        const int r = pool_tile_q(dv.xper, u), q = u - r * xper, h = hx + r;
        T *s = xs + r * g.pitch + q * ux;
        if (h >= 0 && h < in1)
            pool_tile_copy(s, xp + (h * xr + q * xc), xb);
        else
            for (int e = 0; e < ux; e++) s[e] = padt;
    }
    const int uy = a.vy, yper = (int)dv.yper.d, yb = uy * (int)sizeof(T);
    const int yr = (int)a.ys[3], yc = uy * (int)a.ys[4];
    for (int u = threadIdx.x; u < wrows * yper; u += blockDim.x) {
        const int r = pool_tile_q(dv.yper, u), q = u - r * yper, oh = oh1 + r;
        if (oh >= 0 && oh < out1)
            pool_tile_copy(dys + r * g.dpitch + q * uy, dyp + (oh * yr + q * yc), yb);
    }
}

/* Two windows' argmax bytes at once from 16-bit x in shared memory, each
 * lane of a pair register one window (pool_row_fwd_kernel's rule, as the
 * one-window loop): p points at the even column 2 (ow - PW) of the first
 * window row, whose windows ow and ow + 1 span the 5 columns from 2ow - PW;
 * pitch is even. The 9 positions' pairs come from three 32-bit words a
 * row; the maximum is one paired max per position, and where it is two
 * instructions per position (a mask of each lane's equality, merged). h0,
 * w0: the first window's first row and column, for the first position a
 * window covers when none is taken. Returns window ow's byte, then ow + 1's. */
template <class T, int PW>
__device__ __forceinline__ uint32_t pool_pair_argmax(const T *p, int pitch, bool propagate, int h0,
                                                     int w0)
{
    typedef typename udnn_gpu_pair<T>::P P;
    constexpr int KW = pool_tile_shape<T, PW>::KW;
    P v[KW * KW];
#pragma unroll
    for (int kh = 0; kh < KW; kh++) {
        const uint32_t *w = (const uint32_t *)(p + kh * pitch);
        const uint32_t a = w[0], b = w[1], c = w[2];
        /* lane 0 the window from column 2ow - PW, lane 1 two columns on */
        v[kh * KW + 0] =
            udnn_gpu_pair_of<P>(PW ? __byte_perm(a, b, 0x7632) : __byte_perm(a, b, 0x5410));
        v[kh * KW + 1] =
            udnn_gpu_pair_of<P>(PW ? __byte_perm(b, c, 0x5410) : __byte_perm(a, b, 0x7632));
        v[kh * KW + 2] =
            udnn_gpu_pair_of<P>(PW ? __byte_perm(b, c, 0x7632) : __byte_perm(b, c, 0x5410));
    }
    P pm = v[0];
    if (propagate) {
#pragma unroll
        for (int k = 1; k < KW * KW; k++) pm = udnnGpuPairMaxNan(pm, v[k]);
    } else {
#pragma unroll
        for (int k = 1; k < KW * KW; k++) pm = udnnGpuPairMax(pm, v[k]);
    }
    /* the first position equal to the maximum; where it is NaN (only
     * under PROPAGATE, and rare), the first NaN */
    const uint32_t nan = propagate ? udnnGpuPairNeuMask(pm, pm) : 0u;
    uint32_t at = 0;
    if (nan == 0u) {
#pragma unroll
        for (int k = KW * KW - 1; k >= 0; k--) {
            const uint32_t m = udnnGpuPairEqMask(v[k], pm);
            at = (m & (uint32_t)k * 0x10001u) | (~m & at);
        }
    } else {
#pragma unroll
        for (int k = KW * KW - 1; k >= 0; k--) {
            const uint32_t m = (nan & udnnGpuPairNeuMask(v[k], v[k])) |
                               (~nan & udnnGpuPairEqMask(v[k], pm));
            at = (m & (uint32_t)k * 0x10001u) | (~m & at);
        }
    }
    /* pool_mx_take from pool_mx_init: PROPAGATE takes all but -inf,
     * NOT_PROPAGATE all but NaN */
    const P neg_inf = udnn_gpu_pair_of<P>(udnn_gpu_pair<T>::NEG_INF);
    const uint32_t taken =
        propagate ? udnnGpuPairNeuMask(pm, neg_inf) : udnnGpuPairEqMask(pm, pm);
    if (taken != 0xFFFFFFFFu) {
        const int fh = (h0 < 0 ? -h0 : 0) * KW;
        const uint32_t first =
            (uint32_t)(fh + (w0 < 0 ? -w0 : 0)) | (uint32_t)(fh + (w0 + 2 < 0 ? -w0 - 2 : 0)) << 16;
        at = (taken & at) | (~taken & first);
    }
    return (at & 0xFFu) | (at >> 8 & 0xFF00u);
}

/* Two windows' argmax bytes, ow's then ow + 1's, from 4-byte x in shared
 * memory (pool_row_fwd_kernel's rule, as the one-window loop): p points
 * at column w0 = 2ow - PW of the first window row h0. The two windows
 * share their middle column, so a row's 5 columns are read once, as two
 * pairs from column w0 + PW (8-byte aligned: pitch and the columns' offset
 * XV are even) and the one left over: 9 shared loads for two windows, where
 * one window a thread took 9 for one. H200, bursts, max pooling backward
 * f32, GB/s: 64 x 256 x 56 x 56 padded 3654 / 3668 / 3656 against 3457 /
 * 3454 / 3461, unpadded 3427 / 3451 / 3445 against 3343 / 3349 / 3325, 32
 * x 64 x 112 x 112 3539 / 3537 / 3532 against 3362 / 3372 / 3366. Where
 * window ow + 1 is past the row's last (ow + 1 == out2), its columns may
 * run into the next row or the buffer's dy rows; its byte is dropped.
 * DOUBLE keeps one window a thread: two (60 and 64 registers, no spills)
 * ran slower, 4005 / 4015 / 4004 against 4039 / 4034 / 4039 padded,
 * 3794 / 3794 / 3799 against 3906 / 3906 / 3909 unpadded. */
template <class T, int PW>
__device__ __forceinline__ uint32_t pool_two_argmax(const T *p, int pitch, bool propagate, int h0,
                                                    int w0)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, 2> P2;
    constexpr int KW = pool_tile_shape<T, PW>::KW, NC = 2 * KW - 1;
    C r[KW][NC];
#pragma unroll
    for (int kh = 0; kh < KW; kh++) {
        const T *row = p + kh * pitch;
        const P2 a = *(const P2 *)(row + PW), b = *(const P2 *)(row + PW + 2);
        const int one = PW ? 0 : NC - 1;
        r[kh][one] = io<T>::ld(row[one]);
        for (int e = 0; e < 2; e++) {
            r[kh][PW + e] = io<T>::ld(a.v[e]);
            r[kh][PW + 2 + e] = io<T>::ld(b.v[e]);
        }
    }
    const int fh = (h0 < 0 ? -h0 : 0) * KW;
    uint32_t out = 0;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        C v[KW * KW];
#pragma unroll
        for (int kh = 0; kh < KW; kh++)
#pragma unroll
            for (int kw = 0; kw < KW; kw++) v[kh * KW + kw] = r[kh][2 * j + kw];
        pool_mx<C> m;
        pool_mx_init(m, propagate);
        pool_window_take<POOL_ARG>(m, v, 0, propagate);
        const int wj = w0 + 2 * j;
        out |= (uint32_t)pool_mx_at(m, fh + (wj < 0 ? -wj : 0)) << (8 * j);
    }
    return out;
}

/* Max backward in one pass where the windows overlap: 3 wide and high, 2
 * apart, padded by PW (0 or 1) along h and w alike, 1 deep and unpadded
 * along d (the 3x3 / 2 pooling after a ResNet stem), through shared
 * memory (else the argmax bytes to scratch and their gather): a block takes
 * a tile of tc cell rows (dx rows [H, H + 2tc)) of one plane, whole rows
 * wide (walk: tiles of a plane, d, c, n). It copies the x rows the tile's
 * windows span and their dy into shared memory (every x element read once
 * from memory, only the tile's halo rows twice), finds the argmax of each
 * window once (pool_row_fwd_kernel's rule) into a byte in shared memory,
 * then each thread gathers the dy of two dx rows by XV columns from the
 * covering windows whose byte names the element, in the gather's order,
 * and stores 16 bytes a row. Not in place (a tile reads the halo rows of x
 * that its neighbours write as dx).
 *
 * Shared memory holds two buffers of x rows then dy rows (this tile's and
 * the next one's, each rounded up to 16 bytes; see pool_tile_geo), then
 * the bytes: a block issues the next tile's copies before it computes
 * this one, so that the memory does not idle while the few resident
 * blocks compute. x and dy move in copy units of a.vx and a.vy elements
 * (16, 8 or 4 bytes; a 16-bit element alone by a plain load). */
template <class T, int PW>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, POOL_TILE_MINB)
    pool_row_tile_kernel(pool_args a, pool_tile_divs dv, pool_tile_geo g, pool_tile_step st,
                         const T *__restrict__ x, const T *__restrict__ dy, T *__restrict__ dx,
                         typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    typedef pool_tile_shape<T, PW> S;
    constexpr int KW = S::KW, SW = S::SW, XV = S::XV, W0 = S::W0, NWR = S::NWR, NWC = S::NWC;
    constexpr int X0 = S::X0;
    extern __shared__ __align__(16) unsigned char pool_tile_smem[];
    const int in1 = a.in[1], in2 = a.in[2], out1 = a.out[1], out2 = a.out[2];
    const int pitch = g.pitch, dpitch = g.dpitch, apitch = g.apitch;
    const int xrows = S::xrows(g.tc), wrows = S::wrows(g.tc);
    const int bufb = S::template buffer_bytes<int>(g.tc, pitch, dpitch);
    uint8_t *args = pool_tile_smem + 2 * bufb; /* wrows x apitch */
    const C pad = pool_pad<C>(POOL_MAX, a.propagate_nan);
    const T padt = io<T>::st(pad);
    /* the columns around each x row of both buffers, which no copy
     * writes: a thread a row */
    for (int r = threadIdx.x; r < 2 * xrows; r += blockDim.x) {
        T *row = (T *)(pool_tile_smem + (r >= xrows) * bufb) + (r % xrows) * pitch;
        for (int k = 0; k < XV; k++) row[k] = padt;
        for (int k = XV + in2; k < pitch; k++) row[k] = padt;
    }
    int buf = 0; /* this tile's buffer */
    pool_tile_at loc; /* this tile's, then the next one's */
    int digits[4]; /* the same tile's in the walk */
    if (blockIdx.x < a.count) {
        int64_t t[5];
        pool_split(a, blockIdx.x, t);
#pragma unroll
        for (int k = 0; k < 4; k++) digits[k] = (int)t[k];
        loc = pool_tile_place(a, g.tc, digits);
        pool_tile_issue<T, PW>(a, dv, g, loc, xrows, wrows, x, dy, pool_tile_smem, padt);
    }
    udnnGpuCopyAsyncCommit();
    for (int64_t tile = blockIdx.x; tile < a.count; tile += gridDim.x) {
        const int c0 = loc.c0, H = c0 * SW;
        const int oh1 = c0 + W0; /* the tile's first window row */
        const bool dlive = loc.live;
        T *const dxp = dx + loc.dxo;
        /* this tile's x and dy were issued a tile ago; the next tile's go
         * into the other buffer, which the last tile read, before this one
         * is computed */
        const T *const xs = (const T *)(pool_tile_smem + buf * bufb) + XV;
        const T *const dys = (const T *)(pool_tile_smem + buf * bufb) + xrows * pitch + XV;
        buf ^= 1;
        __syncthreads(); /* the last tile's shared memory is read */
        if (tile + gridDim.x < a.count) {
            pool_tile_advance(a, st, digits);
            loc = pool_tile_place(a, g.tc, digits);
            pool_tile_issue<T, PW>(a, dv, g, loc, xrows, wrows, x, dy, pool_tile_smem + buf * bufb,
                                   padt);
        }
        udnnGpuCopyAsyncCommit();
        udnnGpuCopyAsyncWaitPending<1>(); /* this thread's copies of this tile */
        __syncthreads();
        if (dlive)
            /* each window's argmax; window row r spans x rows 2r to 2r + 2.
             * 16-bit types and float two windows a thread (pool_pair_argmax,
             * pool_two_argmax). NaN propagation is chosen once a tile: chosen
             * per window, both sides were issued (16-bit: 8 maxima, 4 of them
             * predicated off). H200, bursts, three passes, GB/s: 64 x 256 x
             * 56 x 56 f16 2253 / 2253 / 2254 against 2207 / 2208 / 2212,
             * unpadded 1818 / 1808 / 1817 against 1777 / 1779 / 1781, f32
             * 3863 / 3882 / 3880 against 3695 / 3699 / 3702 */
            udnn_gpu_choose(a.propagate_nan, [&](auto propagating) {
                constexpr bool PROP = decltype(propagating)::value;
                constexpr int NA = S::NA;
                const int aunits = (int)dv.aunits.d;
                for (int u = threadIdx.x; u < wrows * aunits; u += blockDim.x) {
                    const int r = pool_tile_q(dv.aunits, u), oh = oh1 + r;
                    const int ow = (u - r * aunits) * NA - S::AL;
                    const int h0 = oh * SW - PW, w0 = ow * SW - PW;
                    const bool live = oh >= 0 && oh < out1;
                    if constexpr (NA == 2) {
                        uint32_t at = 0xFFFFu;
                        if (live && ow + 1 >= 0 && ow < out2) {
                            if constexpr (sizeof(T) == 2)
                                at = pool_pair_argmax<T, PW>(xs + 2 * r * pitch + (ow - PW) * SW,
                                                             pitch, PROP, h0, w0);
                            else
                                at = pool_two_argmax<T, PW>(xs + 2 * r * pitch + w0, pitch,
                                                            PROP, h0, w0);
                            if (ow < 0) at |= 0xFFu;
                            if (ow + 1 >= out2) at |= 0xFF00u;
                        }
                        *(uint16_t *)(args + 2 * u) = (uint16_t)at;
                    } else {
                        int at = 0xFF;
                        if (live && ow >= 0 && ow < out2) {
                            const T *p = xs + 2 * r * pitch + w0;
                            C v[KW * KW];
#pragma unroll
                            for (int kh = 0; kh < KW; kh++)
#pragma unroll
                                for (int kw = 0; kw < KW; kw++)
                                    v[kh * KW + kw] = io<T>::ld(p[kh * pitch + kw]);
                            pool_mx<C> m;
                            pool_mx_init(m, PROP);
                            pool_window_take<POOL_ARG>(m, v, 0, PROP);
                            at = pool_mx_at(m, (h0 < 0 ? -h0 : 0) * KW + (w0 < 0 ? -w0 : 0));
                        }
                        args[u] = (uint8_t)at;
                    }
                }
            });
        __syncthreads();
        /* dx: two rows by XV columns; window row pr + wr of the pair's
         * windows covers row s of the pair at kh, column B + e at kw */
        const int groups = (int)dv.groups.d, rows = (in1 - H < g.tc * SW ? in1 - H : g.tc * SW);
        /* the blend chosen once a tile (pool_blending): H200, bursts, max
         * pooling backward 3 x 3 f32, 64 x 256 x 56 x 56 3415 / 3414 to
         * 3462 / 3466 GB/s, 32 x 64 x 112 x 112 3322 / 3345 to 3367 / 3375 */
        pool_blending<T>(beta, [&](auto blending) {
            constexpr bool BLEND = decltype(blending)::value;
            for (int u = threadIdx.x; u < (rows + 1) / 2 * groups; u += blockDim.x) {
                const int pr = pool_tile_q(dv.groups, u), B = (u - pr * groups) * XV;
                C grad[2][XV];
#pragma unroll
                for (int s = 0; s < 2; s++)
#pragma unroll
                    for (int e = 0; e < XV; e++) grad[s][e] = C(0);
                if (dlive) {
                    int at[NWR][NWC];
                    C gy[NWR][NWC];
                    /* a window row's dy: the NWC - 1 = XV / 2 columns from
                     * B / SW as one access (aligned to it: the row and
                     * B / SW are), and the one before (W0 = -1) or after */
                    constexpr int NR = XV / SW, LEAD = W0 < 0 ? 1 : 0;
                    static_assert(NWC == NR + 1 && W0 >= -1, "pool_tile_shape");
#pragma unroll
                    for (int wr = 0; wr < NWR; wr++) {
                        const T *yrow = dys + (pr + wr) * dpitch + B / SW;
                        const udnn_gpu_pack<T, NR> run = *(const udnn_gpu_pack<T, NR> *)yrow;
#pragma unroll
                        for (int k = 0; k < NR; k++) gy[wr][LEAD + k] = io<T>::ld(run.v[k]);
                        gy[wr][LEAD ? 0 : NR] = io<T>::ld(yrow[LEAD ? -1 : NR]);
#pragma unroll
                        for (int wc = 0; wc < NWC; wc++)
                            at[wr][wc] = args[(pr + wr) * apitch + S::AL + B / SW + W0 + wc];
                    }
                    /* an element's first term replaces its zero (known once
                     * unrolled: no add of 0) */
                    bool some[2][XV] = {};
#pragma unroll
                    for (int s = 0; s < 2; s++)
#pragma unroll
                        for (int wr = 0; wr < NWR; wr++) {
                            const int kh = s - X0 - wr * SW;
                            if (kh < 0 || kh >= KW) continue;
#pragma unroll
                            for (int wc = 0; wc < NWC; wc++)
#pragma unroll
                                for (int e = 0; e < XV; e++) {
                                    const int kw = e - X0 - wc * SW;
                                    if (kw < 0 || kw >= KW) continue;
                                    const C term = at[wr][wc] == kh * KW + kw ? gy[wr][wc] : C(0);
                                    grad[s][e] = some[s][e] ? grad[s][e] + term : term;
                                    some[s][e] = true;
                                }
                        }
                }
#pragma unroll
                for (int s = 0; s < 2; s++) {
                    const int h = H + 2 * pr + s;
                    if (h >= in1) break;
                    T *row = dxp + h * (int)a.xs2[3];
                    if (a.vdx && B + XV <= in2) {
                        pool_stv_if<BLEND, T, XV>(row + B, grad[s], alpha, beta);
                    } else {
#pragma unroll
                        for (int e = 0; e < XV; e++)
                            if (B + e < in2)
                                udnn_gpu_blend_store(row + (B + e) * (int)a.xs2[4], grad[s][e],
                                                     alpha, beta);
                    }
                }
            }
        });
    }
}

/* ---- host side ------------------------------------------------------------------------- */

/* The bytes [lo, hi) that tensor t at ptr spans. */
static void pool_extent(const void *ptr, const udnn_tensor *t, size_t elem, uintptr_t *lo,
                        uintptr_t *hi)
{
    int64_t below = 0, above = 0;
    for (int d = 0; d < t->rank; d++) {
        if (t->dims[d] < 2) continue;
        const int64_t s = (t->dims[d] - 1) * t->strides[d];
        if (s < 0) below += s;
        else above += s;
    }
    *lo = (uintptr_t)ptr + (uintptr_t)(below * (int64_t)elem);
    *hi = (uintptr_t)ptr + (uintptr_t)((above + 1) * (int64_t)elem);
}

/* Whether pool_row_tile_kernel takes a max backward on rows: 3x3 windows 2
 * apart, padded alike by 0 or 1, 1 deep and unpadded along d, dx apart
 * from x. */
static int pool_tile_ok(const udnn_pool_problem *p, size_t elem)
{
    if (p->window[0] != 1 || p->pad[0] != 0 || p->pad[1] != p->pad[2] || p->pad[1] < 0 ||
        p->pad[1] > 1)
        return 0;
    for (int k = 1; k < 3; k++)
        if (p->window[k] != 3 || p->stride[k] != 2) return 0;
    uintptr_t xlo, xhi, dlo, dhi;
    pool_extent(p->x_ptr, &p->x, elem, &xlo, &xhi);
    pool_extent(p->out_ptr, &p->dx, elem, &dlo, &dhi);
    return xhi <= dlo || dhi <= xlo;
}

/* pool_row_tile_kernel's copy unit for the rows (len elements each) of t at
 * ptr: the most elements, to 16 bytes, that it moves at a time and that
 * divide len, at least 4 bytes; else 1. */
template <class T> static int pool_tile_unit(const void *ptr, const udnn_tensor *t, int len)
{
    for (int n = 16 / (int)sizeof(T); n * (int)sizeof(T) >= 4; n /= 2)
        if (len % n == 0 && pool_pack_ok<T>(ptr, t, 4, n)) return n;
    return 1;
}

/* The tiled max backward (a: pool_args_of for dx with dy's and dx's
 * strides); 0 when not even a tile of one cell row fits a buffer of
 * POOL_TILE_BYTES. Tiles as tall as fit, evened out over the plane. */
template <class T, int PW>
static int pool_row_tile_launch(const udnn_gpu_context *c, const udnn_pool_problem *p,
                                const pool_args &a0)
{
    typedef typename io<T>::C C;
    typedef pool_tile_shape<T, PW> S;
    constexpr int XV = S::XV;
    const int in1 = a0.in[1], in2 = a0.in[2], out2 = a0.out[2];
    const int cells = (in1 + 1) / 2, groups = (in2 + XV - 1) / XV;
    /* the last window's columns past the row; the last window column a
     * gather reads */
    const int over = (out2 - 1) * S::SW - PW + S::KW - in2;
    const int last_ow = groups * XV / S::SW + S::W0;
    pool_tile_geo g;
    g.pitch = XV + (in2 + (over > 0 ? over : 0) + XV - 1) / XV * XV;
    g.dpitch = XV + ((out2 > last_ow + 1 ? out2 : last_ow + 1) + XV - 1) / XV * XV;
    g.apitch = (S::AL + last_ow + 2) / 2 * 2; /* its entries, to even */
    /* two buffers as the kernel's, then the argmax bytes, a row each
     * window row */
    auto rows16 = [&](int tc) {
        return S::template buffer_bytes<size_t>(tc, g.pitch, g.dpitch);
    };
    auto buffer = [&](int tc) { return rows16(tc) + (size_t)S::wrows(tc) * g.apitch; };
    if (buffer(1) > POOL_TILE_BYTES) return 0;
    /* offsets within a plane of x, dy and dx in 32 bits */
    auto fits = [](const int64_t *s, int rows, int cols) {
        return (rows - 1) * (s[3] < 0 ? -s[3] : s[3]) + (cols - 1) * (s[4] < 0 ? -s[4] : s[4]) <
               ((int64_t)1 << 31) - 16;
    };
    if (!fits(a0.xs, in1, in2) || !fits(a0.ys, a0.out[1], out2) || !fits(a0.xs2, in1, in2))
        return 0;
    int tc = 1;
    while (tc < cells && buffer(tc + 1) <= POOL_TILE_BYTES) tc++;
    const int ntiles = (cells + tc - 1) / tc;
    g.tc = (cells + ntiles - 1) / ntiles;
    pool_args a = a0;
    pool_walk(a, ntiles, a.in[0], p->x.dims[1], p->x.dims[0], 1);
    a.vdx = pool_pack_ok<T>(p->out_ptr, &p->dx, 4, XV);
    a.vx = pool_tile_unit<T>(p->x_ptr, &p->x, in2);
    a.vy = pool_tile_unit<T>(p->dy_ptr, &p->dy, out2);
    /* within the 48 KB a launch gets without asking */
    static_assert(2 * POOL_TILE_BYTES <= 48 * 1024, "pool_row_tile_kernel's buffers");
    const size_t shared = 2 * rows16(g.tc) + (size_t)S::wrows(g.tc) * g.apitch;
    const int64_t most = POOL_TILE_GRID ? (int64_t)c->sm_count * POOL_TILE_GRID : c->max_blocks;
    const unsigned grid = (unsigned)(a.count < most ? a.count : most);
    pool_tile_divs dv;
    dv.xper = udnn_gpu_div32_make((uint32_t)(in2 / a.vx));
    dv.yper = udnn_gpu_div32_make((uint32_t)(out2 / a.vy));
    dv.aunits = udnn_gpu_div32_make((uint32_t)(g.apitch / S::NA));
    dv.groups = udnn_gpu_div32_make((uint32_t)groups);
    pool_tile_step st;
    int64_t rest = grid;
    for (int k = 0; k < 4; k++) {
        st.g[k] = (int)(rest % a.walk_dim[k]);
        rest /= a.walk_dim[k];
    }
    pool_row_tile_kernel<T, PW><<<grid, UDNN_GPU_BLOCK, shared, c->stream>>>(
        a, dv, g, st, (const T *)p->x_ptr, (const T *)p->dy_ptr, (T *)p->out_ptr, (C)p->alpha,
        (C)p->beta);
    return 1;
}

template <class T>
int pool_tile_bwd(const udnn_gpu_context *c, const udnn_pool_problem *p, const pool_args &a)
{
    if (!pool_tile_ok(p, sizeof(T))) return 0;
    return p->pad[2] == 1 ? pool_row_tile_launch<T, 1>(c, p, a)
                          : pool_row_tile_launch<T, 0>(c, p, a);
}

template int pool_tile_bwd<float>(const udnn_gpu_context *, const udnn_pool_problem *,
                                  const pool_args &);
template int pool_tile_bwd<double>(const udnn_gpu_context *, const udnn_pool_problem *,
                                   const pool_args &);
template int pool_tile_bwd<udnnGpuHalf>(const udnn_gpu_context *, const udnn_pool_problem *,
                                        const pool_args &);
template int pool_tile_bwd<udnnGpuBf16>(const udnn_gpu_context *, const udnn_pool_problem *,
                                        const pool_args &);
