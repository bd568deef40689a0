/* softmax.h - what the softmax sources share (softmax.cu: the column and
 * general kernels and the choice of a path; softmax_rows.cu: groups
 * whose members are contiguous rows): the per-group arithmetic, vectors,
 * reductions over teams and blocks, the rows' geometry and sm_run_rows. */
#ifndef UDNN_CUDA_SOFTMAX_H
#define UDNN_CUDA_SOFTMAX_H

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
#pragma unroll
    for (int m = W / 2; m > 0; m /= 2)
        if (m < lanes) v = ops.op(v, ops.shfl(v, m));
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

/* softmax_rows.cu: the rows r on the row paths; a, b and o the input
 * (x or y), the second input (dy; a forward never reads it) and the
 * output, f the groups' arithmetic. */
template <class T>
udnnStatus_t sm_run_rows(const udnn_gpu_context *c, sm_rows r, const T *a, const T *b, T *o,
                         sm_cfg<typename io<T>::C> f, bool fwd);

#endif
