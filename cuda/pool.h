/* pool.h - what the pooling sources share (pool.cu: the general kernels
 * and the choice; pool_fast.cu: the fast paths; pool_tile.cu: the one-pass
 * max backward): the problem as the kernels take it, the split of a fast
 * path's walk index, the max's rules for ties, NaNs and padding, the
 * outputs covering an input, the host's walk and packing tests, and the
 * functions each file gives the others. */
#ifndef UDNN_CUDA_POOL_H
#define UDNN_CUDA_POOL_H

#include "cuda/kernels.h"

/* ---- the problem as the kernels take it ----------------------------------------- */

typedef struct {
    int is_max, include_pad, propagate_nan;
    int win[3], pad[3], str[3];
    udnn_gpu_div32 str_div[3];
    int in[3], out[3];      /* spatial dims of x and y (d, h, w) */
    int64_t xs[5], ys[5];   /* strides of x and y (backward: dy) */
    int64_t xs2[5];         /* backward: strides of dx */
    int64_t ms[5];          /* backward: strides of the argmax bytes */
    /* the walked tensor (y forward, dx backward), innermost first in
     * walk order: c, w, h, d (c_last) or w, h, d, c; n is what remains */
    int64_t walk_dim[4];
    udnn_gpu_div32 walk_div[4];
    int64_t count;
    /* the fast paths: the walk's divisors, and whether x, y (backward: dy)
     * and dx take 16-byte accesses */
    struct {
        uint64_t m;
        uint32_t s;
    } walk_fdiv[4];
    int64_t walk_lim32; /* below it, pool_split divides by walk_div in 32 bits */
    int vx, vy, vdx;
} pool_args;

/* Floor and ceiling of a / b (b > 0) for either sign of a, at compile
 * time where the operands are constants. */
__host__ __device__ constexpr int pool_floor_div(int a, int b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}
__host__ __device__ constexpr int pool_ceil_div(int a, int b)
{
    return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

/* What a fast kernel computes per window. */
enum { POOL_AVG, POOL_MAX, POOL_ARG };

/* How the backward finds a window's share for a dx element. */
enum { POOL_BWD_AVG, POOL_BWD_ARGMAX, POOL_BWD_SCAN };

/* Walk index i split innermost first (t[0..3]) with the rest in t[4]. The
 * divisions are multiply-highs (Granlund and Montgomery, fig. 4.1): in 32
 * bits (udnn_gpu_div32) below 2^31, a quarter of the instructions of the 64
 * bits that are exact for i < 2^63 (see pool_walk); no division. */
__device__ __forceinline__ void pool_split(const pool_args &a, int64_t i, int64_t t[5])
{
    if (i < a.walk_lim32) {
        uint32_t u = (uint32_t)i;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const uint32_t q = udnn_gpu_div32_q(a.walk_div[k], u);
            t[k] = (int64_t)(u - q * a.walk_div[k].d);
            u = q;
        }
        t[4] = (int64_t)u;
        return;
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint64_t n = (uint64_t)i;
        const int64_t q = (int64_t)((__umul64hi(n, a.walk_fdiv[k].m) + n) >> a.walk_fdiv[k].s);
        t[k] = i - q * a.walk_dim[k];
        i = q;
    }
    t[4] = i;
}

/* A running window maximum under the reference's rules (see
 * pool_window_max), elements taken in the window's row-major order. best
 * starts as NaN (NOT_PROPAGATE: no number yet; a number replaces it, a NaN
 * never does) or -inf (PROPAGATE: the first NaN replaces a number and
 * stays); otherwise only a greater number replaces best, so the first
 * maximum wins ties. at is where best came from, -1 while nothing has
 * replaced the start: then the window's first position holds the maximum
 * (an all-NaN window under NOT_PROPAGATE, or one of only -inf), which
 * pool_mx_at supplies. */
template <class C> struct pool_mx {
    C best;
    int at;
};

template <class C> __device__ __forceinline__ void pool_mx_init(pool_mx<C> &m, bool propagate)
{
    m.best = propagate ? C(-INFINITY) : C(NAN);
    m.at = -1;
}

template <class C, bool POS>
__device__ __forceinline__ void pool_mx_take(pool_mx<C> &m, C v, int pos, bool propagate)
{
    /* PROPAGATE: a NaN over a number; NOT_PROPAGATE: a number over NaN */
    if (v > m.best || ((v != v) == propagate && (m.best != m.best) != propagate)) {
        m.best = v;
        if (POS) m.at = pos;
    }
}

/* Where the maximum is, given the window's first position. */
template <class C> __device__ __forceinline__ int pool_mx_at(const pool_mx<C> &m, int first)
{
    return m.at < 0 ? first : m.at;
}

/* The unrolled kernels reduce a window one plane (d) at a time from
 * registers: N elements in row-major order, the positions a window does not
 * cover (the padding, columns past the row) holding pool_pad's value, so
 * that no element needs a test. The maximum of a plane is a chain of fmax
 * (one instruction an element; a NaN operand gives the other, so NaN
 * padding and NaNs under NOT_PROPAGATE drop out, and an all-NaN plane gives
 * NaN), under PROPAGATE NaN when any element is (padding then is -inf, which
 * never decides a maximum: see pool_plane_at). Where it is: the first
 * element equal to it, or the first NaN when it is NaN; the plane's maximum
 * then joins the window's by pool_mx_take, so ties and NaNs across planes
 * follow the reference. For the value alone (forward), -0 and +0 tie as
 * fmax picks, not necessarily the first. */
template <class C> __device__ __forceinline__ C pool_pad(int mode, bool propagate)
{
    return mode == POOL_AVG ? C(0) : propagate ? C(-INFINITY) : C(NAN);
}

__device__ __forceinline__ float pool_fmax(float a, float b)
{
    return fmaxf(a, b);
}
__device__ __forceinline__ double pool_fmax(double a, double b)
{
    return fmax(a, b);
}

template <class C, int N>
__device__ __forceinline__ C pool_plane_max(const C (&v)[N], bool propagate)
{
    C m = v[0];
#pragma unroll
    for (int k = 1; k < N; k++) m = pool_fmax(m, v[k]);
    if (N > 1 && propagate) { /* one value is its own maximum, NaN or not */
        bool nan = false;
#pragma unroll
        for (int k = 0; k < N; k++) nan |= v[k] != v[k];
        if (nan) m = C(NAN);
    }
    return m;
}

/* A plane's maximum pm into the window's value (forward): a NaN of either
 * stays under PROPAGATE. */
template <class C> __device__ __forceinline__ C pool_max_join(C best, C pm, bool propagate)
{
    return propagate && (best != best || pm != pm) ? C(NAN) : pool_fmax(best, pm);
}

/* Where in the plane its maximum pm is (the first match, so ties go to the
 * first; -inf padding under PROPAGATE matches only when pm is -inf, and
 * such a plane never replaces the window's start, -inf). Under
 * NOT_PROPAGATE a NaN pm (an all-NaN plane) is never taken, so where does
 * not matter. */
template <class C, int N> __device__ __forceinline__ int pool_plane_at(const C (&v)[N], C pm)
{
    int at = 0;
    if (N == 1) return at;
    if (pm != pm) {
#pragma unroll
        for (int k = N - 1; k >= 0; k--) at = v[k] != v[k] ? k : at;
    } else {
#pragma unroll
        for (int k = N - 1; k >= 0; k--) at = v[k] == pm ? k : at;
    }
    return at;
}

/* Joins a window plane's values v into m: their sum (POOL_AVG), their
 * maximum (POOL_MAX), or the maximum and its position, base plus its
 * place in the plane (POOL_ARG). */
template <int MODE, class C, int N>
__device__ __forceinline__ void pool_window_take(pool_mx<C> &m, const C (&v)[N], int base,
                                                 bool propagate)
{
    if (MODE == POOL_AVG) {
#pragma unroll
        for (int k = 0; k < N; k++) m.best += v[k];
    } else {
        const C pm = pool_plane_max(v, propagate);
        if (MODE == POOL_MAX) m.best = pool_max_join(m.best, pm, propagate);
        else pool_mx_take<C, true>(m, pm, base + pool_plane_at(v, pm), propagate);
    }
}

/* ---- host side ------------------------------------------------------------------------- */

/* 1 when t moves n elements at a time along dim `inner`: ptr aligned to
 * n elements, dim `inner` unit-stride, every other stride a multiple of n. */
template <class T> static int pool_pack_ok(const void *ptr, const udnn_tensor *t, int inner, int n)
{
    if ((uintptr_t)ptr % (n * sizeof(T)) != 0 || t->strides[inner] != 1) return 0;
    for (int d = 0; d < 5; d++)
        if (d != inner && t->dims[d] > 1 && t->strides[d] % n != 0) return 0;
    return 1;
}

/* A fast path's walk: dims d[0] (innermost) .. d[3], then n; the
 * multipliers of pool_split: s = ceil(log2 d), m = 2^64 (2^s - d) / d + 1. */
static inline void pool_walk(pool_args &a, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                             int64_t n)
{
    const int64_t dims[4] = {d0, d1, d2, d3};
    a.count = n;
    a.walk_lim32 = (int64_t)1 << 31;
    for (int k = 0; k < 4; k++) {
        const uint64_t d = (uint64_t)(dims[k] > 0 ? dims[k] : 1);
        if (d < ((uint64_t)1 << 31)) a.walk_div[k] = udnn_gpu_div32_make((uint32_t)d);
        else a.walk_lim32 = 0;
        uint32_t s = 0;
        while (s < 63 && ((uint64_t)1 << s) < d) s++;
        a.walk_dim[k] = dims[k];
        a.walk_fdiv[k].s = s;
        a.walk_fdiv[k].m =
            (uint64_t)(((unsigned __int128)1 << 64) * (((unsigned __int128)1 << s) - d) / d + 1);
        a.count *= dims[k];
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

/* pool_fast.cu: the forward (a = pool_args_of for y) and the backward (a
 * = pool_args_of for dx with dy's and dx's strides) on a fast path: 1 when
 * one took the problem and launched (the backward's launch status in
 * *st), else 0 with nothing launched. */
template <class T>
int pool_fwd_fast(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                  const pool_args &a);
template <class T>
int pool_bwd_fast(const udnn_gpu_context *c, const udnn_pool_problem *p, int c_last,
                  const pool_args &a, udnnStatus_t *st);

/* The max backward of 3x3 windows 2 apart, padded alike by 0 or 1, on
 * rows (pool_tile.cu; a: pool_args_of for dx with dy's and dx's strides):
 * 1 when it took the problem and launched, else 0. */
template <class T>
int pool_tile_bwd(const udnn_gpu_context *c, const udnn_pool_problem *p, const pool_args &a);

/* p[j] = alpha * v[j] + beta * p[j] for V elements (one access of pool_vt's
 * width when V > 1); p is read only when beta != 0. */
template <class T, int V>
__device__ __forceinline__ void pool_stv(T *p, const typename io<T>::C *v,
                                         typename io<T>::C alpha, typename io<T>::C beta)
{
    if (V == 1) udnn_gpu_blend_store(p, v[0], alpha, beta);
    else udnn_gpu_blend_store_pack<T, V>(p, v, alpha, beta);
}

/* pool_stv with the blend chosen before the kernel's loop (pool_blending):
 * BLEND false passes beta as the constant 0, so that pool_stv's test of
 * it folds away and alpha * v is stored. Chosen per store, the blend cost
 * the f32 kernels as if issued either way: H200, 64 x 256 x 56 x 56 in
 * bursts, average pooling 3 x 3 NHWC f32 (pool_chan_fwd) 3424 / 3441 GB/s
 * with the choice per store, 3683 / 3692 once a launch; max pooling
 * backward 2 x 2 f32 (pool_row_cell) 3442 / 3452 and 3522 / 3542. */
template <bool BLEND, class T, int V>
__device__ __forceinline__ void pool_stv_if(T *p, const typename io<T>::C *v,
                                            typename io<T>::C alpha, typename io<T>::C beta)
{
    pool_stv<T, V>(p, v, alpha, BLEND ? beta : typename io<T>::C(0));
}

/* udnn_gpu_blending for 4- and 8-byte types. The 16-bit kernels keep the
 * choice per store (f(true_type): pool_stv tests beta): with the choice
 * once a launch the max 3 x 3 NHWC forward f16 (pool_chan_fwd, at 80
 * registers) fell from 2225 to 1752 GB/s. */
template <class T, class C, class F> __device__ __forceinline__ void pool_blending(C beta, F &&f)
{
    if constexpr (sizeof(T) == 2) f(std::true_type{});
    else udnn_gpu_blending(beta, f);
}

#endif
