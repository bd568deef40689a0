/* softmax.cu - softmax forward and backward: FAST, ACCURATE and LOG over
 * CHANNEL (C, per n and position) or INSTANCE (C and every later dim, per
 * n) groups, FLOAT, DOUBLE, HALF and BFLOAT16, 4-D and 5-D, any strides,
 * alpha/beta blending, in place (core allows an output to share an input's
 * buffer with the same strides: every kernel reads an element's inputs
 * before it writes that element, and a group's reduction finishes before
 * its first write). Semantics mirror cpu/ref/softmax.c: FAST takes exp(x)
 * unshifted; ACCURATE and LOG shift by the group's maximum.
 *
 * Groups held in registers (rows of moderate length, NCHW column tiles)
 * are read from memory once and reduce as the reference does: the max,
 * then the sum of exp(x - max), one exp per element. Long rows are held
 * in the registers of several blocks where the resident blocks hold them
 * (read once: each thread's max, then its sum of exp(x - max), merged
 * online with the others' as below), else read twice, and their
 * statistics are online (a running max and the sum of exp(x - max),
 * rescaled when the max grows) so that two passes suffice.
 *
 * Paths, every tensor sharing one set of strides:
 *  - rows: a group's members are contiguous (CHANNEL with C innermost, as
 *    NHWC; INSTANCE over a dense image, as NCHW or NHWC). A row that
 *    SM_TEAM_MAX lanes hold (16384 floats or halves, 8192 doubles; 4096
 *    elements moved one at a time) goes to a team of lanes (a power of
 *    two: part of a warp, a warp, or several warps of a block) that holds
 *    it in registers, reduces with shuffles (and, across the warps of a
 *    team, shared memory) and writes it. Loads and stores move 16 bytes
 *    from the row's first 16-byte boundary on (the few elements before it
 *    and after the last whole vector one each per lane) when every tensor
 *    sits at the same offset from a 16-byte boundary; otherwise elements.
 *    Longer rows, or very few rows, are cut into items of equal size
 *    (slices of a row, the head elements in the first and the tail
 *    elements in the last) that blocks of a cooperative launch of the
 *    resident blocks hold in registers and shared memory (16 16-byte
 *    loads of x a thread in registers, 8 vectors more in shared memory
 *    where rows are few; backward 4 loads each of y and dy, 12 vectors
 *    each more): a block reduces its item, leaves the partial statistics
 *    in the context's scratch memory, counts them in, waits until all of
 *    its row's are in, joins them in a fixed order (deterministic) and
 *    writes its item from where it holds it, so that each element is read
 *    once. Where a row needs more items than the grid holds, or scratch
 *    is too small, rows go to a block per row, or are split over several
 *    blocks whose partial statistics meet in scratch before a second
 *    kernel reads the row again and writes; those read 16-byte vectors
 *    too.
 *  - columns: CHANNEL with contiguous positions (NCHW): a block takes a
 *    tile of positions across all of C in registers: thread (tx, ty) holds
 *    a vector of adjacent positions tx (16 bytes when the positions,
 *    channel and image strides and pointers allow) of channels ty, ty + K,
 *    ...; the K partial results of a position meet through shuffles and
 *    shared memory. Each element is read from memory once, and the rows of
 *    the tile are coalesced.
 * Anything else (tensors with different strides, gaps between positions,
 * NCHW with more channels than a tile holds) takes a general kernel: a
 * thread per CHANNEL group, a block per INSTANCE group, offsets computed per
 * tensor. Kernels never assume a warp of 32 (udnnGpuWarpSize). */
#include <math.h>

#include "cuda/kernels.h"

/* ---- the per-group arithmetic ------------------------------------------------------- */

/* A reduction's running value. Forward: m the running max (0 for FAST)
 * and s the sum of exp(x - m). Backward: the sum of dy*y (dy for LOG) as
 * s + m, m what the rounding of s and of each product lost (sm_pairs),
 * else 0. */
template <class C> struct sm_acc {
    C m, s;
};

/* Whether the backward of T keeps its sums as pairs: FLOAT only. Where y
 * peaks, dy - sum cancels, and a float sum's rounding alone made dx's
 * error exceed the tolerance (a 5-element row, 1.9e-5 against 1e-5), as
 * the CPU's sum in double does not. A 16-bit y lies 2^-11 or more below 1
 * (or is 1) and dx is rounded to 16 bits, so a float sum serves it; DOUBLE
 * sums in double, as the reference does. */
template <class T> struct sm_pairs {
    static const bool on = sizeof(T) == 4;
};

/* s += b, returning the addition's rounding error exactly (TwoSum); the
 * same error for either order of the operands. */
template <class C> __device__ __forceinline__ C sm_two_sum(C &s, C b)
{
    const C t = s + b, z = t - s, e = (s - (t - z)) + (b - z);
    s = t;
    return e;
}

template <class C> struct sm_cfg {
    int shift; /* forward ACCURATE and LOG subtract the max */
    int log;
    C alpha, beta;
};

template <class C> __device__ __forceinline__ sm_acc<C> sm_init(const sm_cfg<C> &f)
{
    sm_acc<C> a;
    a.m = f.shift ? -C(INFINITY) : C(0);
    a.s = C(0);
    return a;
}

/* Adds one member: v0 is x (forward) or y (backward), v1 is dy. A -inf
 * adds nothing, and a NaN poisons the sum, as in the reference. */
template <class T, bool FWD, class C = typename io<T>::C>
__device__ __forceinline__ void sm_add(sm_acc<C> &a, C v0, C v1, const sm_cfg<C> &f)
{
    if (!FWD && !sm_pairs<T>::on) {
        a.s += f.log ? v1 : v1 * v0;
    } else if (!FWD) {
        if (f.log) {
            a.m += sm_two_sum(a.s, v1);
        } else {
            const C p = udnnGpuMulRn(v1, v0); /* the error term needs its bits */
            a.m += sm_two_sum(a.s, p) + fma(v1, v0, -p);
        }
    } else if (!f.shift) {
        a.s += exp(v0);
    } else if (v0 > a.m) {
        a.s = (a.s == C(0) ? C(0) : a.s * exp(a.m - v0)) + C(1);
        a.m = v0;
    } else if (v0 != -C(INFINITY)) {
        a.s += exp(v0 - a.m);
    }
}

/* Merges two partial results; commutative, so every lane of a butterfly
 * ends with the same bits. */
template <class C> __device__ __forceinline__ sm_acc<C> sm_merge(sm_acc<C> a, sm_acc<C> b)
{
    sm_acc<C> r;
    r.m = a.m > b.m ? a.m : b.m;
    r.s = (a.s == C(0) ? C(0) : a.s * exp(a.m - r.m)) + (b.s == C(0) ? C(0) : b.s * exp(b.m - r.m));
    return r;
}

/* A finished group: what the output pass needs. */
template <class C> struct sm_fin {
    C m, s, log_s;
};

/* Backward: s and m the sum's leading part and the rest, in the compute
 * type from the accumulator's (A: double in sm_keep_kernel); sm_value
 * subtracts both. */
template <class C, bool FWD, class A = C>
__device__ __forceinline__ sm_fin<C> sm_finish(sm_acc<A> a, const sm_cfg<C> &f)
{
    sm_fin<C> r;
    if (FWD) {
        r.m = (C)a.m;
        r.s = (C)a.s;
    } else {
        r.s = (C)(a.s + a.m);
        r.m = (C)((a.s - (A)r.s) + a.m);
    }
    r.log_s = FWD && f.log ? log(r.s) : C(0);
    return r;
}

/* One output member before blending. */
template <class C, bool FWD>
__device__ __forceinline__ C sm_value(const sm_fin<C> &g, C v0, C v1, const sm_cfg<C> &f)
{
    if (FWD) return f.log ? (v0 - g.m) - g.log_s : exp(v0 - g.m) / g.s;
    if (f.log) {
        const C e = exp(v0);
        return (v1 - e * g.s) - e * g.m;
    }
    return v0 * ((v1 - g.s) - g.m);
}

template <class T>
__device__ __forceinline__ void sm_store(T *out, const typename io<T>::C v,
                                         const sm_cfg<typename io<T>::C> &f)
{
    udnn_gpu_blend_store(out, v, f.alpha, f.beta);
}

/* ---- vectors ------------------------------------------------------------------------- */

/* Vectors of V elements a lane or thread holds per tensor in the register
 * paths: 32 elements (8 vectors of 4 floats, 4 of 8 halves), 16 doubles;
 * 8 single elements. */
template <class T, int V> struct sm_per_lane {
    static const int E = V == 1 ? 8 : (32 / V < 8 ? 32 / V : 8);
};

/* Whether the one-read path (sm_keep_kernel) marks its loads and stores
 * evict-first (1) or leaves them plain (0); it reads and writes each
 * element once. */
#ifndef SM_KEEP_HINTS
#define SM_KEEP_HINTS 1
#endif

/* The vector at p; LAST: the data's last read (evict first, with
 * SM_KEEP_HINTS). */
template <class T, int V, bool LAST>
__device__ __forceinline__ udnn_gpu_pack<T, V> sm_get(const udnn_gpu_pack<T, V> *p)
{
    return udnn_gpu_load_pack<SM_KEEP_HINTS && LAST, T, V>(p->v);
}

/* Stores V results r at out (a whole vector), blended; STREAM: evict
 * first (with SM_KEEP_HINTS). */
template <class T, int V, bool STREAM = false>
__device__ __forceinline__ void sm_store_vec(T *out, const typename io<T>::C (&r)[V],
                                             const sm_cfg<typename io<T>::C> &f)
{
    udnn_gpu_store_pack<SM_KEEP_HINTS && STREAM, T, V>(
        out, udnn_gpu_blend_pack<T, V>(out, r, f.alpha, f.beta));
}

/* Elements from p to the next 16-byte boundary (p is element-aligned). */
template <class T> __device__ __forceinline__ int sm_head(const T *p)
{
    return (int)(((16u - (unsigned)((uintptr_t)p & 15u)) & 15u) / (unsigned)sizeof(T));
}

/* A row of n elements at p as h head elements (up to the first 16-byte
 * boundary, at most n) and nv whole vectors of V after them; with V == 1,
 * no head and n vectors of one element. */
template <class T, int V, class N>
__device__ __forceinline__ void sm_split(const T *p, N n, N &h, N &nv)
{
    h = 0;
    nv = n;
    if (V > 1) {
        h = (N)sm_head(p);
        if (h > n) h = n;
        nv = (n - h) / V;
    }
}

/* What a lane or thread holds of a row in registers: vectors q0, q0 +
 * step, ... below qe (at most E; counted in V elements from the row's
 * first 16-byte boundary, h elements in), and where V > 1 (every tensor at
 * the same offset from a boundary) a head element (before the boundary)
 * and a tail element (after the last whole vector) at element offsets ho
 * and to, where hv and tv. x0 holds x (forward) or y, x1 dy (backward).
 * The register paths (sm_rows_reg_kernel, sm_keep_kernel) load, reduce
 * and store through it. */
template <class T, bool FWD, int V, int E, int H = 0> struct sm_held {
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> VT;
    /* H vectors more of each tensor in shared memory, 16 bytes of inputs;
     * KEPT: the forward's exps written back over them, where the values
     * are their own compute type (a 16-bit exp would be rounded twice:
     * 16-bit types keep x and take its exp again for the output) */
    static_assert(H == 0 || sizeof(VT) == 16, "held vectors");
    static constexpr bool KEPT = FWD && sizeof(T) == sizeof(C);
    C x0[E][V], x1[E][V], h0, h1, t0, t1;
    int q0, step, qe, ho, to;
    bool hv, tv;
    VT *hs; /* H: the thread's first held vector, the next a block's width on; x1's after x0's */

    __device__ __forceinline__ bool has(int k) const { return q0 + k * step < qe; }
    __device__ __forceinline__ VT *slot(int k, int t) const
    {
        return hs + (t * H + k - E) * UDNN_GPU_BLOCK;
    }
    /* held vector k's values: c0 (and c1 backward) */
    __device__ __forceinline__ void get(int k, C (&c0)[V], C (&c1)[V]) const
    {
        const VT a = *slot(k, 0);
#pragma unroll
        for (int i = 0; i < V; i++) c0[i] = io<T>::ld(a.v[i]), c1[i] = C(0);
        if (!FWD) {
            const VT b = *slot(k, 1);
#pragma unroll
            for (int i = 0; i < V; i++) c1[i] = io<T>::ld(b.v[i]);
        }
    }

    /* LAST: the data's last read (sm_get) */
    template <bool LAST> __device__ __forceinline__ void load(const T *p0, const T *p1, int h)
    {
        const VT *v0 = (const VT *)(p0 + h), *v1 = (const VT *)(p1 + h);
#pragma unroll
        for (int k = 0; k < E; k++) {
#pragma unroll
            for (int i = 0; i < V; i++) x0[k][i] = x1[k][i] = C(0);
            if (has(k)) {
                const VT u = sm_get<T, V, LAST>(v0 + q0 + k * step);
#pragma unroll
                for (int i = 0; i < V; i++) x0[k][i] = io<T>::ld(u.v[i]);
                if (!FWD) {
                    const VT w = sm_get<T, V, LAST>(v1 + q0 + k * step);
#pragma unroll
                    for (int i = 0; i < V; i++) x1[k][i] = io<T>::ld(w.v[i]);
                }
            }
        }
#pragma unroll
        for (int k = E; k < E + H; k++)
            if (has(k)) {
                udnnGpuCopyAsync16(slot(k, 0), v0 + q0 + k * step);
                if (!FWD) udnnGpuCopyAsync16(slot(k, 1), v1 + q0 + k * step);
            }
        h0 = h1 = t0 = t1 = C(0);
        if (hv) {
            h0 = io<T>::ld(p0[ho]);
            if (!FWD) h1 = io<T>::ld(p1[ho]);
        }
        if (tv) {
            t0 = io<T>::ld(p0[to]);
            if (!FWD) t1 = io<T>::ld(p1[to]);
        }
    }

    /* fn(k, v0, v1) over the whole vectors k held, each of V members, in
     * registers, then in shared memory (KEEP: fn's changes to v0 written
     * back there) */
    template <bool KEEP, class F> __device__ __forceinline__ void over(F &&fn)
    {
#pragma unroll
        for (int k = 0; k < E; k++)
            if (has(k)) fn(k, x0[k], x1[k]);
        if (H > 0) udnnGpuCopyAsyncWait();
#pragma unroll
        for (int k = E; k < E + H; k++)
            if (has(k)) {
                C c0[V], c1[V];
                get(k, c0, c1);
                fn(k, c0, c1);
                if (KEEP) {
                    VT a;
#pragma unroll
                    for (int i = 0; i < V; i++) a.v[i] = io<T>::st(c0[i]);
                    *slot(k, 0) = a;
                }
            }
    }

    /* fn(v0, v1) over the whole vectors held (the forward's changes to v0
     * kept, in shared memory where KEPT) */
    template <class F> __device__ __forceinline__ void each_whole(F &&fn)
    {
        over<KEPT>([&](int, C(&a)[V], C(&b)[V]) { fn(a, b); });
    }

    /* fn(v0, v1) over the members held (the forward's changes to v0 kept,
     * as each_whole keeps them) */
    template <class F> __device__ __forceinline__ void each(F &&fn)
    {
        each_whole([&](C(&a)[V], C(&b)[V]) {
#pragma unroll
            for (int i = 0; i < V; i++) fn(a[i], b[i]);
        });
        if (hv) fn(h0, h1);
        if (tv) fn(t0, t1);
    }

    /* fn(v0, v1) over the vectors held, then over the head and tail
     * members each as a vector of one */
    template <class F> __device__ __forceinline__ void each_vec(F &&fn)
    {
        each_whole(fn);
        if (hv) {
            C a[V] = {}, b[V] = {};
            a[0] = h0, b[0] = h1;
            fn(a, b);
        }
        if (tv) {
            C a[V] = {}, b[V] = {};
            a[0] = t0, b[0] = t1;
            fn(a, b);
        }
    }

    /* value(v0, v1), blended, to the members' places in po's row (h as in
     * load); STREAM: evict first (sm_store_vec). redo(v0): the forward's
     * change to v0 (each) again, for the vectors shared memory holds
     * unchanged (not KEPT). */
    template <bool STREAM, class F, class G>
    __device__ __forceinline__ void store(T *po, int h, const sm_cfg<C> &f, F &&value, G &&redo)
    {
        over<false>([&](int k, C(&a)[V], C(&b)[V]) {
            const bool again = FWD && !KEPT && k >= E;
            C r[V];
#pragma unroll
            for (int i = 0; i < V; i++) r[i] = value(again ? redo(a[i]) : a[i], b[i]);
            sm_store_vec<T, V, STREAM>(po + h + (q0 + k * step) * V, r, f);
        });
        if (hv) sm_store(po + ho, value(h0, h1), f);
        if (tv) sm_store(po + to, value(t0, t1), f);
    }
    template <bool STREAM, class F>
    __device__ __forceinline__ void store(T *po, int h, const sm_cfg<C> &f, F &&value)
    {
        store<STREAM>(po, h, f, value, [](C v) { return v; });
    }
};

/* ---- reductions over teams of lanes and over blocks -------------------------------- */

template <class C, bool MAX> __device__ __forceinline__ C sm_op(C a, C b)
{
    return MAX ? fmax(a, b) : a + b;
}

/* What sm_team_reduce and sm_cols_reduce apply: op joins two values, shfl
 * fetches a value across lane mask m. A max or a plain sum: */
template <class C, bool MAX> struct sm_scalar_ops {
    __device__ C op(C a, C b) const { return sm_op<C, MAX>(a, b); }
    __device__ C shfl(C a, int m) const { return udnnGpuShflXor(a, m); }
};

/* v over each aligned team of `lanes` threads (a power of two dividing
 * blockDim.x), to every thread of the team, merged in a fixed order: a
 * butterfly within the warp (every lane ends with the same bits), then one
 * slot per warp in red across the team's warps. The whole block calls it
 * alike. */
template <class X, class Ops>
__device__ __forceinline__ X sm_team_reduce(X v, int lanes, X *red, Ops ops)
{
    const int W = udnnGpuWarpSize;
    for (int m = (lanes < W ? lanes : W) / 2; m > 0; m /= 2) v = ops.op(v, ops.shfl(v, m));
    if (lanes <= W) return v;
    const int warp = threadIdx.x / W, per = lanes / W, first = warp - warp % per;
    __syncthreads(); /* red may still be read by the previous call */
    if (threadIdx.x % W == 0) red[warp] = v;
    __syncthreads();
    X r = red[first];
    for (int i = 1; i < per; i++) r = ops.op(r, red[first + i]);
    return r;
}

template <class C, bool MAX> __device__ __forceinline__ C sm_team_all(C v, int lanes, C *red)
{
    return sm_team_reduce(v, lanes, red, sm_scalar_ops<C, MAX>{});
}

/* Two partial results of a reduction: merged (forward), or added (the
 * backward's sums as sm_acc keeps them: the rests and the addition's
 * error into m; the same bits for either order). */
template <class T, bool FWD, class C = typename io<T>::C>
__device__ __forceinline__ sm_acc<C> sm_join(sm_acc<C> a, sm_acc<C> b)
{
    if (FWD) return sm_merge(a, b);
    if (!sm_pairs<T>::on) {
        a.s += b.s;
        return a;
    }
    const C m = a.m + b.m;
    a.m = m + sm_two_sum(a.s, b.s);
    return a;
}

template <class T, bool FWD, class C = typename io<T>::C>
__device__ __forceinline__ sm_acc<C> sm_shfl_xor(sm_acc<C> a, int m)
{
    sm_acc<C> r;
    r.m = FWD || sm_pairs<T>::on ? udnnGpuShflXor(a.m, m) : a.m;
    r.s = udnnGpuShflXor(a.s, m);
    return r;
}

/* sm_acc's joins for sm_team_reduce and sm_cols_reduce: the forward's
 * merge, or the backward's sums (of T's members: sm_pairs). */
template <class T, bool FWD, class C = typename io<T>::C> struct sm_join_ops {
    __device__ sm_acc<C> op(sm_acc<C> a, sm_acc<C> b) const { return sm_join<T, FWD>(a, b); }
    __device__ sm_acc<C> shfl(sm_acc<C> a, int m) const { return sm_shfl_xor<T, FWD>(a, m); }
};

/* The backward's sums over each team of `lanes` threads, to every thread
 * of the team, as sm_team_all merges. */
template <class T, class C = typename io<T>::C>
__device__ __forceinline__ sm_acc<C> sm_team_sum(sm_acc<C> v, int lanes, sm_acc<C> *red)
{
    return sm_team_reduce(v, lanes, red, sm_join_ops<T, false>{});
}

/* Slots sm_block_reduce and sm_team_all need: one per warp of the largest
 * block on the smallest warp. */
#define SM_BLOCK_SLOTS (1024 / 16)

/* Over the block (its size a power of two, a whole number of warps), to
 * every thread, joined in warp order; called uniformly. T: the type whose
 * sums these are (sm_pairs), or the accumulator's. */
template <class T, bool FWD, class C = typename io<T>::C>
__device__ __forceinline__ sm_acc<C> sm_block_reduce(sm_acc<C> a, sm_acc<C> *slots)
{
    return sm_team_reduce(a, (int)blockDim.x, slots, sm_join_ops<T, FWD>{});
}

/* ---- rows: contiguous members ------------------------------------------------------- */

/* The most lanes a row's team takes in the register path (and then the
 * block's size). */
#define SM_TEAM_MAX 512

/* Rows of len contiguous elements; row g starts at g * step when uniform,
 * else at the offset of g decomposed over gdim (innermost last) with gstr. */
typedef struct {
    int64_t groups, len;
    int uniform;
    int64_t step;
    int grank;
    int64_t gdim[4], gstr[4];
    int lanes;            /* register kernel: lanes per row */
    int chunks;           /* block kernels: blocks per row */
    int64_t chunk;        /* and elements per block */
} sm_rows;

__device__ __forceinline__ int64_t sm_row_base(const sm_rows &a, int64_t g)
{
    if (a.uniform) return g * a.step;
    int64_t off = 0;
#pragma unroll
    for (int k = 3; k >= 0; k--) /* fixed bounds keep gdim and gstr out of local memory */
        if (k < a.grank) {
            int64_t q = g / a.gdim[k];
            off += (g - q * a.gdim[k]) * a.gstr[k];
            g = q;
        }
    return off;
}

/* A team of a.lanes lanes per row, held in registers: one read of the
 * inputs, and (forward) the max first, then the sum of exp(x - max), as
 * the reference computes them, one exp per element. Vectors of V elements
 * from the row's first 16-byte boundary (V > 1: every tensor at the same
 * offset from one, the host checks): lane l holds vectors l, l + lanes,
 * ... (at most E), head element l (before the boundary) and tail element l
 * (after the last whole vector). in0: x or y; in1: dy (backward; x
 * forward, never read). */
template <class T, bool FWD, int V>
__global__ void __launch_bounds__(SM_TEAM_MAX)
    sm_rows_reg_kernel(sm_rows a, const T *in0, const T *in1, T *out,
                       sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    const int E = sm_per_lane<T, V>::E;
    __shared__ C red[SM_BLOCK_SLOTS];
    __shared__ sm_acc<C> reds[FWD ? 1 : SM_BLOCK_SLOTS];
    const int lanes = a.lanes, lane = threadIdx.x & (lanes - 1);
    const int teams = blockDim.x / lanes, len = (int)a.len;
    for (int64_t first = (int64_t)blockIdx.x * teams; first < a.groups;
         first += (int64_t)gridDim.x * teams) {
        const int64_t g = first + threadIdx.x / lanes;
        const bool valid = g < a.groups;
        const int64_t base = valid ? sm_row_base(a, g) : 0;
        const T *p0 = in0 + base, *p1 = in1 + base;
        int h = 0, nv = valid ? len : 0;
        if (V > 1) {
            h = sm_head(p0);
            if (h > len) h = len;
            nv = valid ? (len - h) / V : 0;
        }
        const int tl = h + nv * V; /* the tail's first element */
        sm_held<T, FWD, V, E> d;
        d.q0 = lane;
        d.step = lanes;
        d.qe = nv;
        d.ho = lane;
        d.hv = V > 1 && valid && lane < h;
        d.to = tl + lane;
        d.tv = V > 1 && valid && lane < len - tl;
        d.template load<false>(p0, p1, h);
        if constexpr (FWD) {
            C m = C(0), s = C(0);
            if (f.shift) {
                m = -C(INFINITY);
                d.each([&](C &v, C &) { m = fmax(m, v); });
                m = sm_team_all<C, true>(m, lanes, red);
            }
            d.each([&](C &v, C &) {
                const C e = exp(v - m);
                s += e;
                if (!f.log) v = e; /* kept for the output */
            });
            s = sm_team_all<C, false>(s, lanes, red);
            const C log_s = f.log ? log(s) : C(0);
            d.template store<false>(out + base, h, f, [&](C v, C) -> C {
                return f.log ? (v - m) - log_s : v / s; /* divided: a single term gives exactly 1 */
            });
        } else {
            sm_acc<C> acc = sm_init(f);
            d.each([&](C &v, C &d1) { sm_add<T, false>(acc, v, d1, f); });
            const sm_fin<C> fin = sm_finish<C, false>(sm_team_sum<T>(acc, lanes, reds), f);
            d.template store<false>(out + base, h, f, [&](C v, C d1) -> C {
                return sm_value<C, false>(fin, v, d1, f);
            });
        }
    }
}

/* Vectors a block thread has in flight in the block kernels' loops. */
#define SM_UNROLL 4

/* The partial result of the n elements at p0 (and p1), over the block:
 * vectors of V elements from p0's first 16-byte boundary (V > 1: every
 * tensor at the same offset from one), SM_UNROLL of them in flight per
 * thread. */
template <class T, bool FWD, int V>
__device__ sm_acc<typename io<T>::C> sm_range_stats(const T *p0, const T *p1, int64_t n,
                                                    const sm_cfg<typename io<T>::C> &f,
                                                    sm_acc<typename io<T>::C> *slots)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> VT;
    sm_acc<C> acc = sm_init(f);
    int64_t h, nv;
    sm_split<T, V>(p0, n, h, nv);
    if (V > 1) {
        const int64_t tl = h + nv * V, t = threadIdx.x;
        if (t < h) sm_add<T, FWD>(acc, io<T>::ld(p0[t]), FWD ? C(0) : io<T>::ld(p1[t]), f);
        if (t < n - tl)
            sm_add<T, FWD>(acc, io<T>::ld(p0[tl + t]), FWD ? C(0) : io<T>::ld(p1[tl + t]), f);
    }
    const VT *v0 = (const VT *)(p0 + h), *v1 = (const VT *)(p1 + h);
    for (int64_t q = threadIdx.x; q < nv; q += (int64_t)SM_UNROLL * blockDim.x) {
        VT u0[SM_UNROLL], u1[SM_UNROLL];
#pragma unroll
        for (int k = 0; k < SM_UNROLL; k++) {
            const int64_t r = q + (int64_t)k * blockDim.x;
            if (r < nv) {
                u0[k] = v0[r];
                if (!FWD) u1[k] = v1[r];
            }
        }
#pragma unroll
        for (int k = 0; k < SM_UNROLL; k++)
            if (q + (int64_t)k * blockDim.x < nv)
#pragma unroll
                for (int i = 0; i < V; i++)
                    sm_add<T, FWD>(acc, io<T>::ld(u0[k].v[i]), FWD ? C(0) : io<T>::ld(u1[k].v[i]),
                                   f);
    }
    return sm_block_reduce<T, FWD>(acc, slots);
}

/* Writes the n outputs at po from the inputs at p0 (and p1), as
 * sm_range_stats reads them. */
template <class T, bool FWD, int V>
__device__ void sm_range_write(const T *p0, const T *p1, T *po, int64_t n,
                               const sm_fin<typename io<T>::C> &fin,
                               const sm_cfg<typename io<T>::C> &f)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> VT;
    int64_t h, nv;
    sm_split<T, V>(p0, n, h, nv);
    if (V > 1) {
        const int64_t tl = h + nv * V, t = threadIdx.x;
        if (t < h)
            sm_store(po + t,
                     sm_value<C, FWD>(fin, io<T>::ld(p0[t]), FWD ? C(0) : io<T>::ld(p1[t]), f), f);
        if (t < n - tl)
            sm_store(po + tl + t,
                     sm_value<C, FWD>(fin, io<T>::ld(p0[tl + t]),
                                      FWD ? C(0) : io<T>::ld(p1[tl + t]), f),
                     f);
    }
    const VT *v0 = (const VT *)(p0 + h), *v1 = (const VT *)(p1 + h);
    for (int64_t q = threadIdx.x; q < nv; q += (int64_t)SM_UNROLL * blockDim.x) {
        VT u0[SM_UNROLL], u1[SM_UNROLL];
#pragma unroll
        for (int k = 0; k < SM_UNROLL; k++) {
            const int64_t r = q + (int64_t)k * blockDim.x;
            if (r < nv) {
                u0[k] = v0[r];
                if (!FWD) u1[k] = v1[r];
            }
        }
#pragma unroll
        for (int k = 0; k < SM_UNROLL; k++) {
            const int64_t r = q + (int64_t)k * blockDim.x;
            if (r < nv) {
                C o[V];
#pragma unroll
                for (int i = 0; i < V; i++)
                    o[i] = sm_value<C, FWD>(fin, io<T>::ld(u0[k].v[i]),
                                            FWD ? C(0) : io<T>::ld(u1[k].v[i]), f);
                sm_store_vec<T, V>(po + h + r * V, o, f);
            }
        }
    }
}

/* A block per row. */
template <class T, bool FWD, int V>
__global__ void sm_rows_block_kernel(sm_rows a, const T *in0, const T *in1, T *out,
                                     sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS];
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t base = sm_row_base(a, g);
        const sm_acc<C> acc = sm_range_stats<T, FWD, V>(in0 + base, in1 + base, a.len, f, slots);
        const sm_fin<C> fin = sm_finish<C, FWD>(acc, f);
        sm_range_write<T, FWD, V>(in0 + base, in1 + base, out + base, a.len, fin, f);
    }
}

/* Several blocks per row, first pass: block (g, k) leaves the partial
 * result of chunk k of row g in part[g * chunks + k]. */
template <class T, bool FWD, int V>
__global__ void sm_rows_part_kernel(sm_rows a, const T *in0, const T *in1,
                                    sm_acc<typename io<T>::C> *part, sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS];
    const int64_t total = a.groups * a.chunks;
    for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
        const int64_t g = b / a.chunks, k = b - g * a.chunks;
        const int64_t base = sm_row_base(a, g), lo = k * a.chunk;
        const int64_t hi = lo + a.chunk < a.len ? lo + a.chunk : a.len;
        sm_acc<C> r =
            sm_range_stats<T, FWD, V>(in0 + base + lo, in1 + base + lo, hi - lo, f, slots);
        if (threadIdx.x == 0) part[b] = r;
    }
}

/* Second pass: every block merges its row's partials (thread i takes
 * partials i, i + blockDim, ...; the same bits in every block of the row),
 * then writes its chunk. Blocks run from the last chunk back to the first,
 * so the chunks the first pass read last (the likeliest still in cache)
 * are read again first. */
template <class T, bool FWD, int V>
__global__ void sm_rows_final_kernel(sm_rows a, const T *in0, const T *in1, T *out,
                                     const sm_acc<typename io<T>::C> *part,
                                     sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS];
    const int64_t total = a.groups * a.chunks;
    for (int64_t rb = blockIdx.x; rb < total; rb += gridDim.x) {
        const int64_t b = total - 1 - rb;
        const int64_t g = b / a.chunks, k = b - g * a.chunks;
        sm_acc<C> acc = sm_init(f);
        for (int i = threadIdx.x; i < a.chunks; i += blockDim.x)
            acc = sm_join<T, FWD>(acc, part[g * a.chunks + i]);
        const sm_fin<C> fin = sm_finish<C, FWD>(sm_block_reduce<T, FWD>(acc, slots), f);
        const int64_t base = sm_row_base(a, g), lo = k * a.chunk;
        const int64_t hi = lo + a.chunk < a.len ? lo + a.chunk : a.len;
        sm_range_write<T, FWD, V>(in0 + base + lo, in1 + base + lo, out + base + lo, hi - lo,
                                  fin, f);
    }
}

/* ---- one read: long rows held in the registers of several blocks ----------------------- */

/* Rows too long for a team's registers are read once where the resident
 * blocks hold them: each row is S items (slices of `chunk` vectors, all
 * but the last of one size, the head elements in the first and the tail
 * elements in the last), and a block loads an item into registers, reduces
 * it (forward: each thread's max, then its sum of exp(x - max), merged
 * over the block; backward: the sum of dy*y, or of dy for LOG, in double),
 * leaves the partial in the context's scratch, raises the row's count,
 * waits for the count to reach S, joins the row's S partials in a fixed
 * order (the same bits in every block and every run) and writes its output
 * from the registers: 2 tensors of traffic for 2 (3 for 3 backward). The
 * grid is a cooperative launch of the resident blocks (co-resident by
 * contract, even beside other kernels); item i runs on block i % grid in
 * round i / grid, and a row has no more items than the grid, so an item
 * waits only for items of its round or of rounds before on other blocks,
 * whose rows are older (the oldest row always finishes). */

/* Tuning, at compile time: the registers a thread holds an item in, as
 * 16-byte vectors of 4-byte values per input tensor (forward: x;
 * backward: y and dy; 16-bit types widen to float, so hold half as many
 * vectors); the fewest resident blocks per multiprocessor the registers
 * must allow; whether rows numerous enough for a block each (read twice
 * by sm_rows_block_kernel) take this path too; the fewest vectors a thread
 * holds where a few rows are cut into more items than their length needs,
 * to occupy the grid. (SM_KEEP_HINTS, above: evict-first accesses.)
 * H100, backward, 4 register vectors where there were 8 (in one run):
 * INSTANCE 64 x 256 x 56 x 56 f32 2256 to 2348 GB/s, f16 1215 to 1273,
 * 4096 x 32000 2635 to 2794; 6 gave 2259, 1257 and 2615. */
#ifndef SM_KEEP_LOADS_FWD
#define SM_KEEP_LOADS_FWD 16
#endif
#ifndef SM_KEEP_LOADS_BWD
#define SM_KEEP_LOADS_BWD 4
#endif
#ifndef SM_KEEP_MIN
#define SM_KEEP_MIN 2
#endif
#ifndef SM_KEEP_MANY
#define SM_KEEP_MANY 1
#endif
#ifndef SM_KEEP_TEAMS
#define SM_KEEP_TEAMS 1
#endif
#ifndef SM_KEEP_SPREAD
#define SM_KEEP_SPREAD 4
#endif
/* 16-byte vectors of a row each thread holds in shared memory besides its
 * registers (bn.cu's bn_held: fewer, larger items). H100, INSTANCE 64 x
 * 256 x 56 x 56 f32: 12 took the backward from 1789 to 2270 GB/s; 24 took
 * the forward from 1783 down to 1249. 16-bit rows held there too (they
 * held none before: 8 halves a vector, 2 vectors a thread in registers
 * backward), in one run: f16 backward 876 to 2098 GB/s, bf16 864 to 2075,
 * forward (SM_KEEP_HELD_FWD_FEW) f16 1245 to 1491, bf16 1221 to 1479. */
#ifndef SM_KEEP_HELD_FWD
#define SM_KEEP_HELD_FWD 0
#endif
#ifndef SM_KEEP_HELD_BWD
#define SM_KEEP_HELD_BWD 12
#endif
/* The forward's held vectors where rows are too few for a block each (a
 * team of blocks splits each row). H100, forward, 8 held everywhere:
 * INSTANCE 64 x 256 x 56 x 56 (64 rows) 1739 to 1977 GB/s, but 4096 x 32000
 * 2052 to 1901; so numerous rows keep SM_KEEP_HELD_FWD. Here, in one run:
 * INSTANCE 1779 (0) to 1937 (8) and 1825 (12). */
#ifndef SM_KEEP_HELD_FWD_FEW
#define SM_KEEP_HELD_FWD_FEW 8
#endif

/* While a block waits for its row's other items, it asks L2 for the first
 * SM_KEEP_PREFETCH eighths of its next item's vectors (evict last), so
 * that memory works through the wait and the next round's loads hit in
 * L2; only where a row is split among SM_KEEP_PREFETCH_MIN_ITEMS items or
 * more (a team of blocks that wait on each other). H100, in one run
 * against the kernel without: INSTANCE 64 x 256 x 56 x 56 f32 forward 2085
 * to 2267 GB/s, backward 2162 to 2327, f16 forward 1187 to 1266; 2, 3,
 * 4 and 5 eighths without the hint 2189 to 2225 forward; the whole item
 * slower (2014). Where a row is 2 items (4096 x 32000 f32) half the item
 * took the forward from 2327 to 2082, hence the floor. */
#ifndef SM_KEEP_PREFETCH
#define SM_KEEP_PREFETCH 4
#endif
#ifndef SM_KEEP_PREFETCH_MIN_ITEMS
#define SM_KEEP_PREFETCH_MIN_ITEMS 4
#endif

/* Vectors of V elements (E) a thread holds per tensor, with HELD more in
 * shared memory where they are 16-byte vectors, and the type of an item's
 * partial result (A: the backward's sums in double). */
template <class T, bool FWD, int V, int HELD> struct sm_keep_per {
    typedef typename io<T>::C C;
    static const int L = FWD ? SM_KEEP_LOADS_FWD : SM_KEEP_LOADS_BWD;
    static const int E = L * 16 / (V * (int)sizeof(C)) > 0 ? L * 16 / (V * (int)sizeof(C)) : 1;
    /* vectors held in shared memory besides (sm_held's H), and a block's
     * bytes of them */
    static const int H = sizeof(udnn_gpu_pack<T, V>) == 16 ? HELD : 0;
    static constexpr size_t SHARED = (size_t)H * (FWD ? 1 : 2) * 16 * UDNN_GPU_BLOCK;
};
template <class C, bool FWD> struct sm_keep_acc {
    typedef C A;
};
template <class C> struct sm_keep_acc<C, false> {
    typedef double A;
};

/* Where an item of sm_keep_kernel lies: row g at offset base, the row's h
 * head elements and nv whole vectors after them, and the item (k of its
 * row's S) its vectors [lo, qe). */
struct sm_keep_at {
    int64_t g, base;
    int k, h, nv, lo, qe;
};

template <class T, int V>
__device__ __forceinline__ sm_keep_at sm_keep_locate(const sm_rows &a, const T *in0, int64_t item,
                                                     int S, int chunk)
{
    const int len = (int)a.len;
    sm_keep_at at;
    at.g = item / S;
    at.k = (int)(item - at.g * S);
    at.base = sm_row_base(a, at.g);
    sm_split<T, V>(in0 + at.base, len, at.h, at.nv);
    at.lo = at.k * chunk;
    /* a row with a head may have a vector less */
    at.qe = at.nv - at.lo < chunk ? at.nv : at.lo + chunk;
    return at;
}

/* The thread's share of the L2 prefetch of item `next` (SM_KEEP_PREFETCH) */
template <class T, bool FWD, int V>
__device__ __forceinline__ void sm_keep_prefetch(const sm_rows &a, const T *in0, const T *in1,
                                                 int64_t next, int S, int chunk)
{
    constexpr int LINE = 128;
    const sm_keep_at at = sm_keep_locate<T, V>(a, in0, next, S, chunk);
    const int64_t first = at.base + at.h + (int64_t)at.lo * V;
    const int64_t bytes = (int64_t)(at.qe - at.lo) * V * (int64_t)sizeof(T) * SM_KEEP_PREFETCH / 8;
    for (int64_t o = (int64_t)threadIdx.x * LINE; o < bytes; o += (int64_t)UDNN_GPU_BLOCK * LINE) {
        udnnGpuPrefetchL2((const char *)(in0 + first) + o);
        if (!FWD) udnnGpuPrefetchL2((const char *)(in1 + first) + o);
    }
}

/* Rows as sm_rows (a.len below 2^30) in a.chunks = S items of a.chunk
 * vectors; count[g] (zero at the launch) counts row g's partials in, and
 * part[g * S + k] holds item k's. */
template <class T, bool FWD, int V, int HELD>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, SM_KEEP_MIN)
    sm_keep_kernel(sm_rows a, const T *in0, const T *in1, T *out, uint32_t *count,
                   sm_acc<typename sm_keep_acc<typename io<T>::C, FWD>::A> *part,
                   sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef typename sm_keep_acc<C, FWD>::A A;
    typedef sm_keep_per<T, FWD, V, HELD> K;
    const int E = K::E, H = K::H, B = UDNN_GPU_BLOCK;
    __shared__ sm_acc<A> slots[SM_BLOCK_SLOTS];
    extern __shared__ uint4 sm_keep_shared[];
    const int t = threadIdx.x, len = (int)a.len, S = a.chunks, chunk = (int)a.chunk;
    const int64_t items = a.groups * S;
    /* TEAMS: the grid is teams of S blocks, block k of a team taking item
     * k of the team's rows, so that a team waits only for itself and
     * teams drift apart (some load while others wait or store); else
     * items go round the whole grid */
    const int64_t step = SM_KEEP_TEAMS ? (int64_t)(gridDim.x / S) * S : (int64_t)gridDim.x;
    if ((int64_t)blockIdx.x >= step) return;
    for (int64_t item = blockIdx.x; item < items; item += step) {
        const sm_keep_at at = sm_keep_locate<T, V>(a, in0, item, S, chunk);
        const int64_t g = at.g, base = at.base;
        const int k = at.k, h = at.h, nv = at.nv;
        const T *p0 = in0 + base, *p1 = in1 + base;
        const int tl = h + nv * V; /* the tail's first element */
        sm_held<T, FWD, V, E, H> d;
        d.hs = (udnn_gpu_pack<T, V> *)sm_keep_shared + t;
        d.q0 = at.lo + t;
        d.step = B;
        d.qe = at.qe;
        d.ho = t;
        d.hv = V > 1 && k == 0 && t < h;
        d.to = tl + t;
        d.tv = V > 1 && k == S - 1 && t < len - tl;
        d.template load<true>(p0, p1, h);

        /* the item's partial result; forward: the thread's max mt, and its
         * shift (a finite one where the thread holds nothing above -inf,
         * whose exps are then 0, not NaN) */
        sm_acc<A> acc;
        acc.m = A(0);
        acc.s = A(0);
        C mt = C(0), sh = C(0);
        if constexpr (FWD) {
            if (f.shift) {
                mt = -C(INFINITY);
                d.each([&](C &v, C &) { mt = fmax(mt, v); });
            }
            sh = mt == -C(INFINITY) ? C(0) : mt;
            C s = C(0);
            d.each([&](C &v, C &) {
                const C e = exp(v - sh);
                s += e;
                if (!f.log) v = e; /* kept for the output */
            });
            acc.m = mt;
            acc.s = s;
        } else {
            /* the thread's terms in the compute type, then in double
             * (converting every term to double cost more than its loads):
             * as a pair (sm_pairs), or each vector's terms added, then
             * the vectors in double */
            if constexpr (sm_pairs<T>::on) {
                sm_acc<C> ts = sm_init(f);
                d.each([&](C &v, C &d1) { sm_add<T, false>(ts, v, d1, f); });
                acc.s = (A)ts.s + (A)ts.m;
            } else {
                d.each_vec([&](const C(&v)[V], const C(&d1)[V]) {
                    C r = C(0);
#pragma unroll
                    for (int i = 0; i < V; i++) r += f.log ? d1[i] : d1[i] * v[i];
                    acc.s += (A)r;
                });
            }
        }
        acc = sm_block_reduce<A, FWD>(acc, slots);
        if (SM_KEEP_PREFETCH > 0 && S >= SM_KEEP_PREFETCH_MIN_ITEMS && item + step < items)
            sm_keep_prefetch<T, FWD, V>(a, in0, in1, item + step, S, chunk);

        /* in, then wait for the row's other items */
        if (t == 0) {
            part[item] = acc;
            __threadfence(); /* the partial before the count */
            if (atomicAdd(&count[g], 1u) != (uint32_t)S - 1u) /* the last one in waits no more */
                udnn_gpu_spin_until(&count[g], (uint32_t)S);
            __threadfence(); /* the count said every partial is in: read them after it */
        }
        __syncthreads();
        const volatile sm_acc<A> *vp = part + g * S;
        sm_acc<A> r;
        r.m = FWD && f.shift ? -A(INFINITY) : A(0);
        r.s = A(0);
        for (int i = t; i < S; i += B) {
            sm_acc<A> q;
            q.m = vp[i].m;
            q.s = vp[i].s;
            r = sm_join<A, FWD>(r, q);
        }
        r = sm_block_reduce<A, FWD>(r, slots);

        T *po = out + base;
        if constexpr (FWD) {
            /* y = exp(x - max) / sum, from exp(x - mt): one division a
             * thread, not one an output (H100, in one run: INSTANCE 64 x
             * 256 x 56 x 56 f32 1969 to 2018 GB/s, 4096 x 32000 2045 to
             * 2343); a row of one term still gives 1 */
            const C log_s = f.log ? log(r.s) : C(0), c = f.log ? C(0) : exp(mt - r.m);
            const C k = c / r.s;
            d.template store<true>(
                po, h, f, [&](C v, C) -> C { return f.log ? (v - r.m) - log_s : v * k; },
                [&](C v) -> C { return f.log ? v : exp(v - sh); });
        } else {
            const sm_fin<C> fin = sm_finish<C, false, A>(r, f);
            d.template store<true>(po, h, f, [&](C v, C d1) -> C {
                return sm_value<C, false>(fin, v, d1, f);
            });
        }
    }
}

/* ---- one read in a cluster: a long row held in the shared memory of a cluster ------ */

/* Forward over few long rows (INSTANCE), where a row fits the shared
 * memory of a thread-block cluster: its blocks each copy their share of
 * the row into shared memory (raw, without registers), merge their
 * threads' max and sum of exp as sm_keep_kernel does, join the cluster's
 * partials in rank order through each other's shared memory, and write
 * their share of y, taking each exp again (a 16-bit row held raw; an exp
 * written back to 16 bits would round twice). The grid is a cluster per
 * row and no block waits for one outside its cluster, so clusters drift
 * apart (some load while others store), where sm_keep_kernel's team waits
 * on its row through global memory. H200, against sm_keep_kernel in
 * separate processes (copy about 3400 GB/s f16): 64 x 256 x 56 x 56 f16
 * 1606 / 1648 against 1563 / 1532 GB/s, bf16 1586 / 1589 against 1416 /
 * 1486, log f16 1806 / 1811 against 1573 / 1582. 16-bit types only: f32
 * rows (3.2 MB) need 200 KB a block, which ran slower in a standalone
 * probe (H100, 1954 against 2135); rows whose clusters do not fill every
 * multiprocessor take the other kernels (below). SM_CLUSTER 0 for
 * comparison. */
#ifndef SM_CLUSTER
#define SM_CLUSTER 1
#endif
#ifndef SM_CLUSTER_THREADS
#define SM_CLUSTER_THREADS 512
#endif
#ifndef SM_CLUSTER_SHARE
#define SM_CLUSTER_SHARE ((size_t)100 << 10)
#endif
#define SM_CLUSTER_MAX 16

/* exp(d), d <= 0, for sm_cluster_kernel's 16-bit rows: the hardware
 * base-2 exponential of d log2(e), 2 ulp, and the product's rounding |d|
 * 2^-24 relative, 1e-6 where |d| < 16 (terms below that are under 2^-23 of
 * the row's largest), where the 16-bit outputs round to 2^-11 and 2^-8
 * themselves. About 5 instructions an element where exp's range reduction
 * takes 12, and the kernel is bound by its instructions (H200, ncu: 66% of
 * issue slots busy, DRAM 32% of its peak, 64 x 256 x 56 x 56 f16). H200, in
 * one run against exp, two passes: f16 1801 / 1791 GB/s against 1597 /
 * 1631, bf16 1729 / 1729 against 1606 / 1599, log f16 1870 / 1874 against
 * 1810 / 1761. The same in sm_cols_reg_kernel's forward sums (CHANNEL f32
 * NCHW, 71% of issue slots busy) ran 3133 / 3039 against 3074 / 3091: no
 * gain, not kept. */
__device__ __forceinline__ float sm_cluster_exp(float d)
{
    return exp2f(d * 1.44269504f);
}

#if UDNN_GPU_CLUSTERS
/* Block b is block b % cs of row b / cs's cluster, holding the row's
 * vectors [rank chunk, (rank + 1) chunk) of nv (rows uniform, whole
 * vectors of V at 16-byte boundaries); blocks of a power of two threads. */
template <class T, int V>
__global__ void __launch_bounds__(SM_CLUSTER_THREADS, 1024 / SM_CLUSTER_THREADS)
    sm_cluster_kernel(sm_rows a, const T *in, T *out, unsigned cs, int chunk, int nv,
                      sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> P;
    extern __shared__ uint4 sm_cluster_held[];
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS], part, row;
    const P *held = (const P *)sm_cluster_held;
    const int t = threadIdx.x, B = blockDim.x;
    const unsigned rank = udnnGpuClusterRank();
    const int64_t g = blockIdx.x / cs, base = g * a.step + (int64_t)rank * chunk * V;
    const int n = nv - (int)rank * chunk < chunk ? nv - (int)rank * chunk : chunk;
    for (int i = t; i < n; i += B) udnnGpuCopyAsync16((P *)held + i, in + base + (int64_t)i * V);
    udnnGpuCopyAsyncWait();
    /* the thread's max and its shift (finite where it holds nothing above
     * -inf), then its sum of exp(x - shift) */
    C mt = C(0);
    if (f.shift) {
        mt = -C(INFINITY);
        for (int i = t; i < n; i += B) {
            const P h = held[i];
#pragma unroll
            for (int e = 0; e < V; e++) mt = fmax(mt, (C)udnn_gpu_pack_ld(h, e));
        }
    }
    const C sh = mt == -C(INFINITY) ? C(0) : mt;
    sm_acc<C> acc;
    acc.m = mt;
    acc.s = C(0);
    for (int i = t; i < n; i += B) {
        const P h = held[i];
#pragma unroll
        for (int e = 0; e < V; e++)
            acc.s += sm_cluster_exp((C)udnn_gpu_pack_ld(h, e) - sh);
    }
    acc = sm_block_reduce<T, true>(acc, slots);
    if (t == 0) part = acc;
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (t == 0) {
        sm_acc<C> r;
        r.m = f.shift ? -C(INFINITY) : C(0);
        r.s = C(0);
        for (unsigned k = 0; k < cs; k++) r = sm_join<T, true>(r, *udnnGpuClusterMap(&part, k));
        row = r;
    }
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' partials */
    const sm_acc<C> r = row;
    /* y = exp(x - max) / sum from exp(x - shift): one division a thread */
    const C log_s = f.log ? log(r.s) : C(0), k = f.log ? C(0) : exp(mt - r.m) / r.s;
    for (int i = t; i < n; i += B) {
        const P h = held[i];
        C y[V];
#pragma unroll
        for (int e = 0; e < V; e++) {
            const C v = (C)udnn_gpu_pack_ld(h, e);
            y[e] = f.log ? (v - r.m) - log_s : sm_cluster_exp(v - sh) * k;
        }
        udnn_gpu_blend_store_pack<T, V>(out + base + (int64_t)i * V, y, f.alpha, f.beta);
    }
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}
#endif

/* The forward by sm_cluster_kernel where it serves (SM_CLUSTER, 16-bit
 * types, rows uniform and whole 16-byte vectors at 16-byte boundaries, a
 * row in 16 blocks of SM_CLUSTER_SHARE bytes or fewer); NOT_SUPPORTED,
 * launching nothing, elsewhere. */
template <class T, int V>
static udnnStatus_t sm_launch_cluster(const udnn_gpu_context *c, const sm_rows &r, const T *a,
                                      T *o, sm_cfg<typename io<T>::C> f)
{
#if UDNN_GPU_CLUSTERS
    if constexpr (SM_CLUSTER && sizeof(T) == 2 && V * sizeof(T) == 16) {
        if (!r.uniform || r.len % V != 0 || r.step % V != 0 || (uintptr_t)a % 16 != 0 ||
            (uintptr_t)o % 16 != 0 || r.len >= ((int64_t)1 << 30))
            return UDNN_STATUS_NOT_SUPPORTED;
        const int64_t nv = r.len / V;
        unsigned cs;
        int64_t chunk;
        /* a grid that leaves multiprocessors idle loses (H200, 80 rows of
         * 196 KB f16, two blocks a row: 873 / 830 GB/s against 1047 / 993;
         * four: 913 / 907 against 1001 / 945) */
        if (!udnn_gpu_cluster_split(nv, 16, SM_CLUSTER_SHARE, SM_CLUSTER_MAX, &cs, &chunk) ||
            r.groups * cs < (int64_t)c->sm_count * (1024 / SM_CLUSTER_THREADS) ||
            r.groups * cs >= ((int64_t)1 << 31))
            return UDNN_STATUS_NOT_SUPPORTED;
        const size_t shared = (size_t)chunk * 16;
        static udnn_gpu_cache fits;
        if (!udnn_gpu_cluster_fits(c, sm_cluster_kernel<T, V>, SM_CLUSTER_THREADS,
                                   SM_CLUSTER_SHARE, SM_CLUSTER_MAX, &fits))
            return UDNN_STATUS_NOT_SUPPORTED;
        unsigned threads = UDNN_GPU_WHOLE_WARPS; /* a power of two (sm_block_reduce) */
        while (threads < SM_CLUSTER_THREADS && threads < chunk) threads *= 2;
        const udnnGpuError_t e = udnnGpuLaunchClusters(
            sm_cluster_kernel<T, V>, (unsigned)(r.groups * cs), threads, shared, c->stream, cs, r,
            a, o, cs, (int)chunk, (int)nv, f);
        if (e != udnnGpuSuccess)
            return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                                 "launching softmax's cluster kernel");
        return UDNN_STATUS_SUCCESS;
    }
#endif
    (void)c, (void)r, (void)a, (void)o, (void)f;
    return UDNN_STATUS_NOT_SUPPORTED;
}

/* ---- columns: CHANNEL over contiguous positions (NCHW) ------------------------------- */

typedef struct {
    int64_t n, c, s;   /* images, channels, positions per image */
    int64_t ns, cs;    /* image and channel strides; positions have stride 1 */
    int64_t tiles_per_image;
    int ts;            /* vectors of positions per tile: a power of two */
} sm_cols;

/* v[i] (position i of a thread's vector) over the threads of the same tx
 * (threadIdx.x % ts), to each of them, merged in a fixed order: a butterfly
 * over the lanes of the warp with that tx, then red (V * blockDim.x
 * values) across the warps, or across the rows of a tile wider than a
 * warp. The whole block calls it alike. */
template <class X, int V, class Ops>
__device__ __forceinline__ void sm_cols_reduce(X (&v)[V], int ts, X *red, Ops ops)
{
    const int W = udnnGpuWarpSize;
    for (int m = ts; m < W; m *= 2)
#pragma unroll
        for (int i = 0; i < V; i++) v[i] = ops.op(v[i], ops.shfl(v[i], m));
    const int tx = threadIdx.x & (ts - 1);
    const int row = ts < W ? threadIdx.x / W : threadIdx.x / ts;
    const int rows = ts < W ? blockDim.x / W : blockDim.x / ts;
    __syncthreads(); /* red may still be read by the previous call */
    if (ts >= W || (int)(threadIdx.x % W) < ts)
#pragma unroll
        for (int i = 0; i < V; i++) red[(i * rows + row) * ts + tx] = v[i];
    __syncthreads();
#pragma unroll
    for (int i = 0; i < V; i++) {
        X r = red[i * rows * ts + tx];
        for (int j = 1; j < rows; j++) r = ops.op(r, red[(i * rows + j) * ts + tx]);
        v[i] = r;
    }
}

template <class C, bool MAX, int V>
__device__ __forceinline__ void sm_cols_all(C (&v)[V], int ts, C *red)
{
    sm_cols_reduce(v, ts, red, sm_scalar_ops<C, MAX>{});
}

/* Vectors a thread of a column tile holds per tensor: the forward's 32
 * elements, the backward's 16 of each of its two inputs. */
template <class T, bool FWD, int V> struct sm_cols_per_thread {
    static const int E = FWD ? sm_per_lane<T, V>::E : sm_per_lane<T, V>::E / 2;
};

/* A tile of ts vectors of V positions x every channel, in registers:
 * thread (tx, ty) = (threadIdx.x % ts, threadIdx.x / ts) holds positions
 * tx * V ... tx * V + V - 1 of channels ty, ty + K, ... (K = blockDim.x /
 * ts, at most E of them); a warp's loads cover whole rows of the tile.
 * Forward: the max, then the sum of exp(x - max) (the exps kept for the
 * output), as the reference computes them. V > 1 needs the positions per
 * image, the channel and image strides and every pointer to be multiples
 * of V elements (16 bytes). */
template <class T, bool FWD, int V>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, sizeof(T) == 8 ? 2 : 4)
    sm_cols_reg_kernel(sm_cols a, const T *in0, const T *in1, T *out,
                       sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> VT;
    const int E = sm_cols_per_thread<T, FWD, V>::E;
    /* a FLOAT backward's sums reduce as pairs (sm_pairs) */
    const bool P = !FWD && sm_pairs<T>::on;
    __shared__ sm_acc<C> reds[P ? UDNN_GPU_BLOCK * V : UDNN_GPU_BLOCK * V / 2];
    C *const red = (C *)reds;
    const int ts = a.ts, rows = blockDim.x / ts;
    const int tx = threadIdx.x & (ts - 1), ty = threadIdx.x / ts;
    const int c = (int)a.c;
    const int64_t tiles = a.n * a.tiles_per_image;
    for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
        const int64_t img = b / a.tiles_per_image;
        const int64_t pos = (b - img * a.tiles_per_image) * ts * V + (int64_t)tx * V;
        const bool pv = pos < a.s;
        /* channel ty + k * rows is at off + k * step */
        const int64_t off = img * a.ns + pos + ty * a.cs, step = rows * a.cs;
        C x0[E][V], x1[E][V];
#pragma unroll
        for (int k = 0; k < E; k++) {
#pragma unroll
            for (int i = 0; i < V; i++) x0[k][i] = x1[k][i] = C(0);
            if (pv && ty + k * rows < c) {
                const VT u = *(const VT *)(in0 + off + k * step);
#pragma unroll
                for (int i = 0; i < V; i++) x0[k][i] = io<T>::ld(u.v[i]);
                if (!FWD) {
                    const VT w = *(const VT *)(in1 + off + k * step);
#pragma unroll
                    for (int i = 0; i < V; i++) x1[k][i] = io<T>::ld(w.v[i]);
                }
            }
        }
        C m[V], s[V];
#pragma unroll
        for (int i = 0; i < V; i++) m[i] = s[i] = C(0);
        sm_fin<C> fin[V];
        if constexpr (FWD) {
            if (f.shift) {
#pragma unroll
                for (int i = 0; i < V; i++) m[i] = -C(INFINITY);
#pragma unroll
                for (int k = 0; k < E; k++)
                    if (pv && ty + k * rows < c)
#pragma unroll
                        for (int i = 0; i < V; i++) m[i] = fmax(m[i], x0[k][i]);
                sm_cols_all<C, true, V>(m, ts, red);
            }
#pragma unroll
            for (int k = 0; k < E; k++)
                if (pv && ty + k * rows < c)
#pragma unroll
                    for (int i = 0; i < V; i++) {
                        const C e = exp(x0[k][i] - m[i]);
                        s[i] += e;
                        if (!f.log) x0[k][i] = e; /* kept for the output */
                    }
            sm_cols_all<C, false, V>(s, ts, red);
            /* what the output takes of the sum: its log, or its inverse */
#pragma unroll
            for (int i = 0; i < V; i++) s[i] = f.log ? log(s[i]) : s[i];
        } else if constexpr (P) {
            sm_acc<C> acc[V];
#pragma unroll
            for (int i = 0; i < V; i++) acc[i] = sm_init(f);
#pragma unroll
            for (int k = 0; k < E; k++)
                if (pv && ty + k * rows < c)
#pragma unroll
                    for (int i = 0; i < V; i++) sm_add<T, false>(acc[i], x0[k][i], x1[k][i], f);
            sm_cols_reduce(acc, ts, reds, sm_join_ops<T, false>{});
#pragma unroll
            for (int i = 0; i < V; i++) fin[i] = sm_finish<C, false>(acc[i], f);
        } else {
#pragma unroll
            for (int k = 0; k < E; k++)
                if (pv && ty + k * rows < c)
#pragma unroll
                    for (int i = 0; i < V; i++) s[i] += f.log ? x1[k][i] : x1[k][i] * x0[k][i];
            sm_cols_all<C, false, V>(s, ts, red);
#pragma unroll
            for (int i = 0; i < V; i++) fin[i].s = s[i], fin[i].m = C(0);
        }
#pragma unroll
        for (int k = 0; k < E; k++) {
            if (pv && ty + k * rows < c) {
                C r[V];
#pragma unroll
                for (int i = 0; i < V; i++) {
                    const C v = x0[k][i], d = x1[k][i];
                    if (FWD) r[i] = f.log ? (v - m[i]) - s[i] : v / s[i];
                    else r[i] = sm_value<C, false>(fin[i], v, d, f);
                }
                sm_store_vec<T, V>(out + off + k * step, r, f);
            }
        }
    }
}

/* ---- general strides --------------------------------------------------------------------- */

/* Up to three tensors (forward: x, y; backward: y, dy, dx), each with its
 * own strides over n, c and up to three dims after c. */
typedef struct {
    int64_t n, c, s;     /* images, channels, positions per image */
    int nsp;             /* dims after c */
    int64_t sp[3];       /* their sizes */
    int64_t st[3][5];    /* per tensor: n, c, then the dims after c */
} sm_gen;

/* The offset in tensor t of position s (row-major over the dims after c). */
__device__ __forceinline__ int64_t sm_pos_off(const sm_gen &a, int t, int64_t s)
{
    int64_t off = 0;
    for (int k = a.nsp - 1; k >= 0; k--) {
        int64_t q = s / a.sp[k];
        off += (s - q * a.sp[k]) * a.st[t][2 + k];
        s = q;
    }
    return off;
}

/* CHANNEL: a thread per group (image, position), walking C. */
template <class T, bool FWD>
__global__ void sm_chan_kernel(sm_gen a, const T *in0, const T *in1, T *out,
                               sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    const int nt = FWD ? 2 : 3, to = nt - 1; /* tensor index of the output */
    UDNN_GPU_GRID_STRIDE_LOOP(g, a.n * a.s)
    {
        const int64_t img = g / a.s, s = g - img * a.s;
        int64_t base[3];
        for (int t = 0; t < nt; t++) base[t] = img * a.st[t][0] + sm_pos_off(a, t, s);
        sm_acc<C> acc = sm_init(f);
        for (int64_t ch = 0; ch < a.c; ch++)
            sm_add<T, FWD>(acc, io<T>::ld(in0[base[0] + ch * a.st[0][1]]),
                           FWD ? C(0) : io<T>::ld(in1[base[1] + ch * a.st[1][1]]), f);
        const sm_fin<C> fin = sm_finish<C, FWD>(acc, f);
        for (int64_t ch = 0; ch < a.c; ch++)
            sm_store(out + base[to] + ch * a.st[to][1],
                     sm_value<C, FWD>(fin, io<T>::ld(in0[base[0] + ch * a.st[0][1]]),
                                      FWD ? C(0) : io<T>::ld(in1[base[1] + ch * a.st[1][1]]), f),
                     f);
    }
}

/* INSTANCE: a block per image, member j = (channel j / s, position j % s). */
template <class T, bool FWD>
__global__ void sm_inst_kernel(sm_gen a, const T *in0, const T *in1, T *out,
                               sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS];
    const int nt = FWD ? 2 : 3, to = nt - 1;
    const int64_t len = a.c * a.s;
    for (int64_t img = blockIdx.x; img < a.n; img += gridDim.x) {
        sm_acc<C> acc = sm_init(f);
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
            const int64_t ch = j / a.s, s = j - ch * a.s;
            C v1 = C(0);
            if (!FWD)
                v1 = io<T>::ld(in1[img * a.st[1][0] + ch * a.st[1][1] + sm_pos_off(a, 1, s)]);
            sm_add<T, FWD>(
                acc, io<T>::ld(in0[img * a.st[0][0] + ch * a.st[0][1] + sm_pos_off(a, 0, s)]),
                v1, f);
        }
        const sm_fin<C> fin = sm_finish<C, FWD>(sm_block_reduce<T, FWD>(acc, slots), f);
        for (int64_t j = threadIdx.x; j < len; j += blockDim.x) {
            const int64_t ch = j / a.s, s = j - ch * a.s;
            C v1 = C(0);
            if (!FWD)
                v1 = io<T>::ld(in1[img * a.st[1][0] + ch * a.st[1][1] + sm_pos_off(a, 1, s)]);
            const C v0 =
                io<T>::ld(in0[img * a.st[0][0] + ch * a.st[0][1] + sm_pos_off(a, 0, s)]);
            sm_store(out + img * a.st[to][0] + ch * a.st[to][1] + sm_pos_off(a, to, s),
                     sm_value<C, FWD>(fin, v0, v1, f), f);
        }
    }
}

/* ---- host side: choosing a path -------------------------------------------------------------- */

static int64_t sm_positions(const udnn_tensor *t)
{
    int64_t s = 1;
    for (int i = 2; i < t->rank; i++) s *= t->dims[i];
    return s;
}

/* Same strides wherever a dim has more than one element. */
static int sm_same_strides(const udnn_tensor *a, const udnn_tensor *b)
{
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* Dims [from, rank) of t, in row-major order, sit at offsets step * their
 * row-major index (dims of 1 place no constraint). */
static int sm_packed_from(const udnn_tensor *t, int from, int64_t step)
{
    int64_t want = step;
    for (int i = t->rank - 1; i >= from; i--) {
        if (t->dims[i] == 1) continue;
        if (t->strides[i] != want) return 0;
        want *= t->dims[i];
    }
    return 1;
}

/* Dims [from, rank) of t cover a dense block of memory in any order. */
static int sm_dense_from(const udnn_tensor *t, int from)
{
    udnn_tensor sub;
    memset(&sub, 0, sizeof sub);
    sub.rank = t->rank - from;
    for (int i = 0; i < sub.rank; i++) {
        sub.dims[i] = t->dims[from + i];
        sub.strides[i] = t->strides[from + i];
    }
    const udnn_tensor *ts[1] = {&sub};
    return udnn_gpu_same_dense(ts, 1);
}

static sm_rows sm_rows_of(const udnn_tensor *t, udnnSoftmaxMode_t mode)
{
    sm_rows r;
    memset(&r, 0, sizeof r);
    const int64_t s = sm_positions(t);
    if (mode == UDNN_SOFTMAX_MODE_INSTANCE) {
        r.groups = t->dims[0];
        r.len = t->dims[1] * s;
        r.uniform = 1;
        r.step = t->strides[0];
        return r;
    }
    r.groups = t->dims[0] * s;
    r.len = t->dims[1];
    /* groups run over n and the dims after c */
    r.grank = t->rank - 1;
    r.gdim[0] = t->dims[0];
    r.gstr[0] = t->strides[0];
    for (int i = 2; i < t->rank; i++) {
        r.gdim[i - 1] = t->dims[i];
        r.gstr[i - 1] = t->strides[i];
    }
    /* uniform when the group dims step evenly (packed NHWC: step C) */
    int64_t step = 0, want = 0;
    r.uniform = 1;
    for (int k = r.grank - 1; k >= 0; k--) {
        if (r.gdim[k] == 1) continue;
        if (step == 0) step = want = r.gstr[k];
        if (r.gstr[k] != want) r.uniform = 0;
        want *= r.gdim[k];
    }
    r.step = step;
    return r;
}


/* 1 when every pointer is element-aligned and at the same offset from a
 * 16-byte boundary: rows at one offset are then at one phase in all. */
static int sm_same_phase(const void *const *p, int n, size_t es)
{
    for (int i = 0; i < n; i++)
        if ((uintptr_t)p[i] % es != 0 || ((uintptr_t)p[i] - (uintptr_t)p[0]) % 16 != 0) return 0;
    return 1;
}

/* Rows this short take the register path however few they are; longer
 * ones take it when their teams have enough threads to keep the device
 * busy (else several blocks split each row). */
#define SM_FEW_ROWS_LEN 8192

template <class T, int V>
static udnnStatus_t sm_launch_rows_reg(const udnn_gpu_context *c, const sm_rows &r, const T *a,
                                       const T *b, T *o, sm_cfg<typename io<T>::C> f, bool fwd)
{
    const int bs = r.lanes > UDNN_GPU_BLOCK ? r.lanes : UDNN_GPU_BLOCK;
    const int64_t teams = bs / r.lanes;
    int64_t blocks = (r.groups + teams - 1) / teams;
    if (blocks > c->max_blocks) blocks = c->max_blocks;
    if (fwd)
        sm_rows_reg_kernel<T, true, V><<<(unsigned)blocks, bs, 0, c->stream>>>(r, a, b, o, f);
    else
        sm_rows_reg_kernel<T, false, V><<<(unsigned)blocks, bs, 0, c->stream>>>(r, a, b, o, f);
    return udnn_gpu_launched();
}

/* The one-read path (sm_keep_kernel): a row in S items of equal size, S
 * no more than the resident blocks, the most vectors a thread holds or
 * fewer where few rows leave blocks idle (SM_KEEP_SPREAD); the counters,
 * cleared on the stream (nothing allocated, nothing waited for: a graph
 * can capture it), then the partials in scratch. NOT_SUPPORTED, launching
 * nothing, where a row needs more items than the grid or scratch is too
 * small. */
template <class T, bool FWD, int V, int HELD>
static udnnStatus_t sm_launch_keep(const udnn_gpu_context *c, sm_rows r, const T *a, const T *b,
                                   T *o, sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef sm_acc<typename sm_keep_acc<C, FWD>::A> P;
    typedef sm_keep_per<T, FWD, V, HELD> K;
    const int64_t B = UDNN_GPU_BLOCK, E = K::E + K::H;
    static udnn_gpu_cache occupancy, shared;
    /* the two-read paths where the held vectors' shared memory is refused */
    if (!udnn_gpu_allow_shared(c, sm_keep_kernel<T, FWD, V, HELD>, K::SHARED, &shared))
        return UDNN_STATUS_NOT_SUPPORTED;
    const int64_t grid = c->sm_count * udnn_gpu_occupancy(c, sm_keep_kernel<T, FWD, V, HELD>,
                                                          UDNN_GPU_BLOCK, K::SHARED, &occupancy);
    /* whole vectors of a row whose head is 0: the most any row has */
    const int64_t nv = V > 1 ? r.len / V : r.len;
    if (nv < 1 || r.len >= ((int64_t)1 << 30) || r.groups >= ((int64_t)1 << 40))
        return UDNN_STATUS_NOT_SUPPORTED;
    int64_t S = (nv + B * E - 1) / (B * E);
    const int64_t spread = grid / r.groups, few_v = B * SM_KEEP_SPREAD;
    if (S < spread) {
        /* more, smaller items: SM_KEEP_SPREAD vectors a thread at the least */
        const int64_t few = (nv + few_v - 1) / few_v;
        S = spread < few ? spread : few < S ? S : few;
    }
    if (S > grid) return UDNN_STATUS_NOT_SUPPORTED;
    r.chunk = (nv + S * B - 1) / (S * B) * B; /* at most E vectors a thread */
    r.chunks = (int)((nv + r.chunk - 1) / r.chunk);
    const size_t counters = udnn_gpu_align256((size_t)r.groups * sizeof(uint32_t));
    const size_t parts = (size_t)(r.groups * r.chunks) * sizeof(P);
    if (counters > c->scratch_bytes || parts > c->scratch_bytes - counters)
        return UDNN_STATUS_NOT_SUPPORTED;
    uint32_t *count = (uint32_t *)c->scratch;
    P *part = (P *)((char *)c->scratch + counters);
    udnnGpuError_t e = udnnGpuMemsetAsync(count, 0, (size_t)r.groups * sizeof(uint32_t), c->stream);
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "clearing softmax's counters");
    const int64_t items = r.groups * r.chunks;
    const unsigned blocks = (unsigned)(grid < items ? grid : items);
    void *args[] = {&r, &a, &b, &o, &count, &part, &f};
    e = udnnGpuLaunchCooperativeKernel(sm_keep_kernel<T, FWD, V, HELD>, blocks, UDNN_GPU_BLOCK,
                                       args, K::SHARED, c->stream);
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                             "launching softmax's one-read kernel");
    return UDNN_STATUS_SUCCESS;
}

/* Rows too long for a team's registers: the one-read path where it runs
 * (rows that would take a block each only with SM_KEEP_MANY); else a block
 * per row when there are rows enough to fill the device (a block reads its
 * row twice, the second time likely from cache), else several blocks per
 * row in chunks of 4096 elements or more, as many blocks as a grid-stride
 * launch takes (several waves: a short last one). */
template <class T, int V>
static udnnStatus_t sm_launch_rows_blocks(const udnn_gpu_context *c, sm_rows r, const T *a,
                                          const T *b, T *o, sm_cfg<typename io<T>::C> f,
                                          bool fwd)
{
    typedef typename io<T>::C C;
    const int64_t want = c->max_blocks;
    int64_t chunks = r.groups < 4 * (int64_t)c->sm_count ? (want + r.groups - 1) / r.groups : 1;
    const int64_t most = (r.len + 4095) / 4096;
    if (chunks > most) chunks = most;
    if (chunks > 1024) chunks = 1024;
    if (SM_KEEP_MANY || chunks > 1) {
        udnnStatus_t st = UDNN_STATUS_NOT_SUPPORTED;
        if (fwd && chunks > 1) st = sm_launch_cluster<T, V>(c, r, a, o, f);
        if constexpr (SM_KEEP_HELD_FWD_FEW > 0)
            if (fwd && chunks > 1 && st == UDNN_STATUS_NOT_SUPPORTED)
                st = sm_launch_keep<T, true, V, SM_KEEP_HELD_FWD_FEW>(c, r, a, b, o, f);
        if (st == UDNN_STATUS_NOT_SUPPORTED)
            st = fwd ? sm_launch_keep<T, true, V, SM_KEEP_HELD_FWD>(c, r, a, b, o, f)
                     : sm_launch_keep<T, false, V, SM_KEEP_HELD_BWD>(c, r, a, b, o, f);
        if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
    }
    if (chunks > 1) {
        /* chunks of whole 16-element steps keep every chunk at the row's phase */
        r.chunk = ((r.len + chunks - 1) / chunks + 15) / 16 * 16;
        chunks = (r.len + r.chunk - 1) / r.chunk;
    }
    const size_t part_bytes = (size_t)(r.groups * chunks) * sizeof(sm_acc<C>);
    if (chunks < 2 || part_bytes > c->scratch_bytes) {
        const unsigned grid = (unsigned)(r.groups < c->max_blocks ? r.groups : c->max_blocks);
        if (fwd)
            sm_rows_block_kernel<T, true, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f);
        else
            sm_rows_block_kernel<T, false, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f);
        return udnn_gpu_launched();
    }
    r.chunks = (int)chunks;
    sm_acc<C> *part = (sm_acc<C> *)c->scratch;
    const int64_t total = r.groups * chunks;
    const unsigned grid = (unsigned)(total < c->max_blocks ? total : c->max_blocks);
    if (fwd)
        sm_rows_part_kernel<T, true, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, part, f);
    else
        sm_rows_part_kernel<T, false, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, part, f);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS) return st;
    if (fwd)
        sm_rows_final_kernel<T, true, V>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, part, f);
    else
        sm_rows_final_kernel<T, false, V>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, part, f);
    return udnn_gpu_launched();
}

/* Rows: a team per row holding it in registers where it fits (the fewest
 * lanes that hold it: a lane holds up to sm_per_lane vectors), else the
 * block kernels. 16-byte vectors when every tensor is at one phase and a
 * row has a few of them. */
template <class T>
static udnnStatus_t sm_run_rows(const udnn_gpu_context *c, sm_rows r, const T *a, const T *b,
                                T *o, sm_cfg<typename io<T>::C> f, bool fwd)
{
    const int VV = 16 / sizeof(T);
    const void *ptrs[3] = {a, b, o};
    const bool vec = sm_same_phase(ptrs, 3, sizeof(T)) != 0;
    const bool rvec = vec && r.len >= 4 * VV;
    const int64_t units = rvec ? (r.len + VV - 1) / VV : r.len;
    const int per = rvec ? sm_per_lane<T, VV>::E : sm_per_lane<T, 1>::E;
    int64_t lanes = rvec ? VV : 1; /* a vector lane takes one head and one tail element */
    while (lanes * per < units) lanes *= 2;
    if (lanes <= SM_TEAM_MAX &&
        (r.len <= SM_FEW_ROWS_LEN ||
         r.groups * lanes >= (int64_t)c->sm_count * UDNN_GPU_BLOCK / 2)) {
        r.lanes = (int)lanes;
        if (rvec) return sm_launch_rows_reg<T, VV>(c, r, a, b, o, f, fwd);
        return sm_launch_rows_reg<T, 1>(c, r, a, b, o, f, fwd);
    }
    if (vec) return sm_launch_rows_blocks<T, VV>(c, r, a, b, o, f, fwd);
    return sm_launch_rows_blocks<T, 1>(c, r, a, b, o, f, fwd);
}

/* The widest column tile, ts vectors of V positions (a power of two up to
 * the block), whose K = UDNN_GPU_BLOCK / ts rows of threads hold all c
 * channels in sm_cols_per_thread vectors each; the tile's rows take a whole
 * 32-byte sector at least, unless an image has fewer positions. 0: none. */
template <class T, int V> static int sm_cols_tile(int64_t c, int64_t s, bool fwd)
{
    const int e = fwd ? sm_cols_per_thread<T, true, V>::E : sm_cols_per_thread<T, false, V>::E;
    int top = 1, low = 1;
    while (top < UDNN_GPU_BLOCK && (int64_t)top * V < s) top *= 2;
    while (low * V * (int)sizeof(T) < 32) low *= 2;
    if (low > top) low = top;
    for (int ts = top; ts >= low; ts /= 2)
        if ((int64_t)(UDNN_GPU_BLOCK / ts) * e >= c) return ts;
    return 0;
}

template <class T, int V>
static udnnStatus_t sm_launch_cols(const udnn_gpu_context *c, sm_cols a, const T *in0,
                                   const T *in1, T *out, sm_cfg<typename io<T>::C> f, bool fwd)
{
    const int64_t per_tile = (int64_t)a.ts * V;
    a.tiles_per_image = (a.s + per_tile - 1) / per_tile;
    const unsigned grid = udnn_gpu_grid(c, a.n * a.tiles_per_image * UDNN_GPU_BLOCK);
    if (fwd)
        sm_cols_reg_kernel<T, true, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
    else
        sm_cols_reg_kernel<T, false, V><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
    return udnn_gpu_launched();
}

static sm_gen sm_gen_of(const udnn_tensor *const *ts, int nt)
{
    sm_gen a;
    memset(&a, 0, sizeof a);
    const udnn_tensor *t = ts[0];
    a.n = t->dims[0];
    a.c = t->dims[1];
    a.s = sm_positions(t);
    a.nsp = t->rank - 2;
    for (int i = 0; i < a.nsp; i++) a.sp[i] = t->dims[2 + i];
    for (int k = 0; k < nt; k++)
        for (int i = 0; i < t->rank; i++) a.st[k][i] = ts[k]->strides[i];
    return a;
}

/* Runs a problem: ts[0] (and ts[1] backward) the inputs, the last the
 * output; in0/in1/out their pointers. */

/* Runs a problem: ts[0] (and ts[1] backward) the inputs, the last the
 * output; in0/in1/out their pointers (in1 = in0 forward, never read). */
template <class T>
static udnnStatus_t sm_run(const udnn_gpu_context *c, const udnn_softmax_problem *p,
                           const udnn_tensor *const *ts, int nt, const void *in0v,
                           const void *in1v, void *outv, bool fwd)
{
    typedef typename io<T>::C C;
    const int VV = 16 / sizeof(T);
    const T *in0 = (const T *)in0v, *in1 = (const T *)in1v;
    T *out = (T *)outv;
    const udnn_tensor *t = ts[0];
    if (udnn_gpu_count(t) == 0) return UDNN_STATUS_SUCCESS;
    sm_cfg<C> f;
    /* the backward's sums start from m = 0, which merges leave alone */
    f.shift = fwd && p->algo != UDNN_SOFTMAX_FAST;
    f.log = p->algo == UDNN_SOFTMAX_LOG;
    f.alpha = (C)p->alpha;
    f.beta = (C)p->beta;
    const bool inst = p->mode == UDNN_SOFTMAX_MODE_INSTANCE;
    int same = 1;
    for (int k = 1; k < nt; k++) same = same && sm_same_strides(t, ts[k]);
    if (same) {
        const bool rows = inst ? sm_dense_from(t, 1) != 0 : (t->dims[1] == 1 || t->strides[1] == 1);
        if (rows) return sm_run_rows<T>(c, sm_rows_of(t, p->mode), in0, in1, out, f, fwd);
        if (!inst && sm_packed_from(t, 2, 1)) {
            sm_cols a;
            memset(&a, 0, sizeof a);
            a.n = t->dims[0];
            a.c = t->dims[1];
            a.s = sm_positions(t);
            a.ns = t->strides[0];
            a.cs = t->strides[1];
            const bool vec = (uintptr_t)in0 % 16 == 0 && (uintptr_t)in1 % 16 == 0 &&
                             (uintptr_t)out % 16 == 0 && a.s % VV == 0 && a.cs % VV == 0 &&
                             (a.n == 1 || a.ns % VV == 0);
            if (vec && (a.ts = sm_cols_tile<T, VV>(a.c, a.s, fwd)) != 0)
                return sm_launch_cols<T, VV>(c, a, in0, in1, out, f, fwd);
            if ((a.ts = sm_cols_tile<T, 1>(a.c, a.s, fwd)) != 0)
                return sm_launch_cols<T, 1>(c, a, in0, in1, out, f, fwd);
        }
    }
    sm_gen a = sm_gen_of(ts, nt);
    if (inst) {
        const unsigned grid = (unsigned)(a.n < c->max_blocks ? a.n : c->max_blocks);
        if (fwd)
            sm_inst_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
        else
            sm_inst_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
    } else {
        const unsigned grid = udnn_gpu_grid(c, a.n * a.s);
        if (fwd)
            sm_chan_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
        else
            sm_chan_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
    }
    return udnn_gpu_launched();
}

static int sm_fwd_applicable(const void *problem, const char **why)
{
    const udnn_softmax_problem *p = (const udnn_softmax_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->y.dtype != p->x.dtype) {
        *why = "the GPU softmax takes FLOAT, DOUBLE, HALF and BFLOAT16, x and y alike";
        return 0;
    }
    if (p->x.rank < 3 || p->x.rank > 5) {
        *why = "the GPU softmax takes 3-D to 5-D tensors";
        return 0;
    }
    return 1;
}

static int sm_bwd_applicable(const void *problem, const char **why)
{
    const udnn_softmax_problem *p = (const udnn_softmax_problem *)problem;
    if (!udnn_gpu_float_type(p->y.dtype) || p->dy.dtype != p->y.dtype ||
        p->dx.dtype != p->y.dtype) {
        *why = "the GPU softmax takes FLOAT, DOUBLE, HALF and BFLOAT16, y, dy and dx alike";
        return 0;
    }
    if (p->y.rank < 3 || p->y.rank > 5) {
        *why = "the GPU softmax takes 3-D to 5-D tensors";
        return 0;
    }
    return 1;
}

static udnnStatus_t sm_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_softmax_problem);
    const udnn_tensor *ts[2] = {&p->x, &p->y};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype,
                      st = sm_run<T>(c, p, ts, 2, p->x_ptr, p->x_ptr, p->out_ptr, true));
    return st;
}

static udnnStatus_t sm_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_softmax_problem);
    const udnn_tensor *ts[3] = {&p->y, &p->dy, &p->dx};
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->y.dtype,
                      st = sm_run<T>(c, p, ts, 3, p->y_ptr, p->dy_ptr, p->out_ptr, false));
    return st;
}

static const udnn_solver softmax_fwd = {
    /* .name = */ "gpu_softmax_fwd",
    /* .op = */ UDNN_OP_SOFTMAX_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ sm_fwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ sm_fwd_run,
};

static const udnn_solver softmax_bwd = {
    /* .name = */ "gpu_softmax_bwd",
    /* .op = */ UDNN_OP_SOFTMAX_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ sm_bwd_applicable,
    /* .workspace = */ NULL,
    /* .run = */ sm_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(softmax, &softmax_fwd, &softmax_bwd);
