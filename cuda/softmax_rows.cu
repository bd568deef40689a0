/* softmax_rows.cu - softmax over groups whose members are contiguous rows
 * (softmax.h): held in a team's registers, in the resident blocks'
 * registers and shared memory (one read), in a cluster's shared memory,
 * or read twice by blocks. */
#include "cuda/softmax.h"

/* ---- rows: contiguous members ------------------------------------------------------- */

/* The most lanes a row's team takes in the register path (and then the
 * block's size). */
#define SM_TEAM_MAX 512

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

/* The n members at p0 (and p1) as sm_split cuts them: one(o) for the head
 * and tail members at offset o (a thread each), whole(o, u0, u1) for the
 * vectors of V members at offset o from p0's first 16-byte boundary on
 * (V > 1: every tensor at the same offset from one), SM_UNROLL of them
 * loaded per thread before any is used. */
template <class T, bool FWD, int V, class One, class Whole>
__device__ __forceinline__ void sm_range_each(const T *p0, const T *p1, int64_t n, One &&one,
                                              Whole &&whole)
{
    typedef udnn_gpu_pack<T, V> VT;
    int64_t h, nv;
    sm_split<T, V>(p0, n, h, nv);
    if (V > 1) {
        const int64_t tl = h + nv * V, t = threadIdx.x;
        if (t < h) one(t);
        if (t < n - tl) one(tl + t);
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
            if (r < nv) whole(h + r * V, u0[k], u1[k]);
        }
    }
}

/* The partial result of the n elements at p0 (and p1), over the block. */
template <class T, bool FWD, int V>
__device__ sm_acc<typename io<T>::C> sm_range_stats(const T *p0, const T *p1, int64_t n,
                                                    const sm_cfg<typename io<T>::C> &f,
                                                    sm_acc<typename io<T>::C> *slots)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> VT;
    sm_acc<C> acc = sm_init(f);
    sm_range_each<T, FWD, V>(
        p0, p1, n,
        [&](int64_t o) { sm_add<T, FWD>(acc, io<T>::ld(p0[o]), FWD ? C(0) : io<T>::ld(p1[o]), f); },
        [&](int64_t, const VT &u0, const VT &u1) {
#pragma unroll
            for (int i = 0; i < V; i++)
                sm_add<T, FWD>(acc, io<T>::ld(u0.v[i]), FWD ? C(0) : io<T>::ld(u1.v[i]), f);
        });
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
    sm_range_each<T, FWD, V>(
        p0, p1, n,
        [&](int64_t o) {
            sm_store(po + o,
                     sm_value<C, FWD>(fin, io<T>::ld(p0[o]), FWD ? C(0) : io<T>::ld(p1[o]), f), f);
        },
        [&](int64_t o, const VT &u0, const VT &u1) {
            C r[V];
#pragma unroll
            for (int i = 0; i < V; i++)
                r[i] =
                    sm_value<C, FWD>(fin, io<T>::ld(u0.v[i]), FWD ? C(0) : io<T>::ld(u1.v[i]), f);
            sm_store_vec<T, V>(po + o, r, f);
        });
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
 * comparison.
 * The threads' maxima by pairs (udnnGpuPairMax) against two conversions
 * and two float maxima a pair: H200, bursts, three passes (copy f16 4020 /
 * 4037 / 4018 GB/s), 64 x 256 x 56 x 56 f16 2115 / 2117 / 2113 against
 * 2078 / 2078 / 2075, bf16 2106 / 2103 / 2109 against 2050 / 2046 / 2056,
 * log f16 2178 / 2180 / 2186 against 2142 / 2145 / 2135, 32 x 64 x 112 x
 * 112 f16 1840 / 1840 / 1837 against 1793 / 1782 / 1791. Not kept: the
 * sum pass writing its exps back over x in the data's type, so that the
 * output pass multiplies instead of taking each exp again (one exp an
 * element where the multiprocessor's 16 a clock bound the kernel): f16
 * 2140 / 2122 / 2135 (2147 / 2161 / 2172 with the pairs), but the exp
 * rounded to 16 bits and y rounded again moved y by one unit in the last
 * place where y is a subnormal half, as most of a long row's outputs are:
 * error 2.42e-03 normwise against the reference's own rounding (7.41e-05
 * rounded once; HALF's tolerance 1e-3).
 * The backward of 16-bit rows is held the same way (sm_cluster_bwd_kernel,
 * y and dy; sm_launch_cluster has its figures). */
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
/* vectors of y and of dy a thread copies in a group (sm_cluster_bwd_kernel) */
#ifndef SM_CLUSTER_BWD_GROUPS
#define SM_CLUSTER_BWD_GROUPS 2
#endif

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
 * gain, not kept. The flushing approximation (udnnGpuExp2Ftz) drops the
 * three instructions an element that scale results below 2^-126 around
 * it; such a term is below 2^-126 of the row's largest, far under the sum's
 * rounding and, normwise, the output's. H200, three passes, bursts, 64 x
 * 256 x 56 x 56 (copy 3995 GB/s): f16 2060 / 2047 / 2062 GB/s against 1949
 * / 1949 / 1953 by exp2f, bf16 2037 / 2028 / 2040 against 1880 / 1878 /
 * 1884, log f16 2121 / 2123 / 2127 against 2061 / 2061 / 2062. */
__device__ __forceinline__ float sm_cluster_exp(float d)
{
    return udnnGpuExp2Ftz(d * 1.44269504f);
}

#if UDNN_GPU_CLUSTERS
/* A row's partials over each block of its cluster (`acc` a thread's),
 * joined in rank order into every thread's result, from the join's
 * identity (m -inf for the forward's shifted maxima, else 0). It leaves
 * the block arrived at the cluster's barrier, done with the others'
 * partials: the caller waits (udnnGpuClusterWait) before `part` is
 * written again or the block exits. */
template <class T, bool FWD, class C>
__device__ __forceinline__ sm_acc<C> sm_cluster_reduce(sm_acc<C> acc, bool shift,
                                                       sm_acc<C> *slots, sm_acc<C> &part,
                                                       sm_acc<C> &row, unsigned cs)
{
    acc = sm_block_reduce<T, FWD, C>(acc, slots);
    if (threadIdx.x == 0) part = acc;
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (threadIdx.x == 0) {
        sm_acc<C> r;
        r.m = shift ? -C(INFINITY) : C(0);
        r.s = C(0);
        for (unsigned k = 0; k < cs; k++) r = sm_join<T, FWD, C>(r, *udnnGpuClusterMap(&part, k));
        row = r;
    }
    __syncthreads();
    udnnGpuClusterArrive();
    return row;
}

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
    udnn_gpu_follow();
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
        /* by pairs in the data's own type: a maximum is exact in it, and
         * a pair's is one instruction where two conversions and two
         * maxima are per pair in float (SM_CLUSTER's figures) */
        typedef typename udnn_gpu_pair<T>::P Q;
        Q qm = udnn_gpu_pair_of<Q>(udnn_gpu_pair<T>::NEG_INF);
        for (int i = t; i < n; i += B) {
            const P h = held[i];
            Q q[V / 2];
            memcpy(q, &h, sizeof q);
#pragma unroll
            for (int e = 0; e < V / 2; e++) qm = udnnGpuPairMax(qm, q[e]);
        }
        mt = fmax((C)qm.x, (C)qm.y);
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
    const sm_acc<C> r = sm_cluster_reduce<T, true>(acc, f.shift, slots, part, row, cs);
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

/* The backward as sm_cluster_kernel takes the forward: block b % cs of
 * row b / cs's cluster holds its vectors of y and of dy, copied raw, a
 * thread's in groups of SM_CLUSTER_BWD_GROUPS, each group's terms summed
 * as it lands (a vector at a time in float, then in double, as
 * sm_keep_kernel sums them); the cluster's partials joined in rank order;
 * dx written from shared memory. */
template <class T, int V>
__global__ void __launch_bounds__(SM_CLUSTER_THREADS, 1)
    sm_cluster_bwd_kernel(sm_rows a, const T *yv, const T *dyv, T *out, unsigned cs, int chunk,
                          int nv, sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    typedef udnn_gpu_pack<T, V> P;
    extern __shared__ uint4 sm_cluster_held[];
    __shared__ sm_acc<double> slots[SM_BLOCK_SLOTS], part, row;
    udnn_gpu_follow();
    P *hy = (P *)sm_cluster_held, *hd = hy + chunk;
    const int t = threadIdx.x, B = blockDim.x;
    const unsigned rank = udnnGpuClusterRank();
    const int64_t first = blockIdx.x / cs, step = gridDim.x / cs;
    const int64_t share = (int64_t)rank * chunk * V;
    const int n = nv - (int)rank * chunk < chunk ? nv - (int)rank * chunk : chunk;
    constexpr int G = SM_CLUSTER_BWD_GROUPS;
    const int nt = t < n ? (n - t + B - 1) / B : 0, groups = (nt + G - 1) / G;
    /* vector i of y and of dy from the block's share at `at` into its slots */
    auto copy = [&](int64_t at, int i) {
        udnnGpuCopyAsync16(hy + i, yv + at + (int64_t)i * V);
        udnnGpuCopyAsync16(hd + i, dyv + at + (int64_t)i * V);
    };
    for (int q = 0; q < groups; q++) {
#pragma unroll
        for (int j = q * G; j < q * G + G; j++)
            if (j < nt) copy(first * a.step + share, t + j * B);
        udnnGpuCopyAsyncCommit();
    }
    for (int64_t g = first; g < a.groups; g += step) {
        const int64_t base = g * a.step + share;
        sm_acc<double> acc;
        acc.m = 0.0;
        acc.s = 0.0;
        auto take = [&](int i) {
            const P y = hy[i], d = hd[i];
            C r = C(0);
#pragma unroll
            for (int e = 0; e < V; e++) {
                const C d1 = (C)udnn_gpu_pack_ld(d, e);
                r += f.log ? d1 : d1 * (C)udnn_gpu_pack_ld(y, e);
            }
            acc.s += (double)r;
        };
        for (int q = 0; q < groups; q++) {
            udnnGpuCopyAsyncWaitAtMost(groups - 1 - q);
#pragma unroll
            for (int j = q * G; j < q * G + G; j++)
                if (j < nt) take(t + j * B);
        }
        const sm_fin<C> fin = sm_finish<C, false, double>(
            sm_cluster_reduce<double, false>(acc, false, slots, part, row, cs), f);
        /* a slot's copies of the next row once its dx is stored, in the
         * same groups */
        const int64_t then = g + step < a.groups ? (g + step) * a.step + share : -1;
        auto put = [&](int i) {
            const P y = hy[i], d = hd[i];
            C o[V];
#pragma unroll
            for (int e = 0; e < V; e++)
                o[e] = sm_value<C, false>(fin, (C)udnn_gpu_pack_ld(y, e),
                                          (C)udnn_gpu_pack_ld(d, e), f);
            udnn_gpu_blend_store_pack<T, V>(out + base + (int64_t)i * V, o, f.alpha, f.beta);
            if (then >= 0) copy(then, i);
        };
        for (int q = 0; q < groups; q++) {
#pragma unroll
            for (int j = q * G; j < q * G + G; j++)
                if (j < nt) put(t + j * B);
            udnnGpuCopyAsyncCommit();
        }
        udnnGpuClusterWait(); /* the others are done with this block's partials */
    }
}
#endif

/* The forward by sm_cluster_kernel, the backward by sm_cluster_bwd_kernel,
 * where they serve (SM_CLUSTER, 16-bit types, rows uniform and whole
 * 16-byte vectors at 16-byte boundaries, a row in 16 blocks of the
 * direction's share or fewer); NOT_SUPPORTED, launching nothing, elsewhere.
 * b is dy (backward).
 * The backward holds y and dy, 200 KB a block, one block a multiprocessor,
 * and launches only the resident clusters, each taking its rows in turn
 * with the next row copied in during this one's output (bn_cluster's
 * ring). H200, bursts, two passes in one call against sm_keep_kernel
 * (copy f16 4028 / 4028 GB/s): 64 x 256 x 56 x 56 f16 2809 / 2813 against
 * 2601 / 2583, bf16 2845 / 2846 against 2642 / 2626; in the next call f16
 * 2805 / 2806, log f16 2853 / 2831. sm_keep_kernel's f16 row read either
 * about 2600 or about 2800 from run to run (docs/PERF.md), so the gain
 * is sure against its lower reading only; against its upper one it is
 * level to 2%. A later call read sm_keep_kernel low again (2595 / 2623,
 * bf16 2642 / 2625, log f16 2545 / 2536) beside this kernel at 2827 / 2820,
 * 2852 / 2860, 2849 / 2852 waiting for the whole share before its sums;
 * with its copies in groups of two vectors, each group's sums taken as it
 * lands, 3100 / 3076, 3068 / 3068, 2954 / 2958 (groups of four: 3003 /
 * 2988, 2980 / 2989, 2934 / 2933; in the call after, groups of one 3020 /
 * 3035, 3050 / 3037, 2914 / 2903 against two's 2996 / 2993, 2984 / 2965,
 * 2918 / 2895).
 * Not kept, measured in the same run: the forward in resident clusters
 * with the same ring, f16 2083 / 2080 against 2101 / 2106, log f16 2110 /
 * 2110 against 2167 / 2172 (though 32 x 64 x 112 x 112 f16, two rows a
 * cluster, ran 2034 / 2027 against 1814 / 1835); FLOAT forward rows in
 * clusters of 200 KB blocks with expf, 2187 / 2184 against 2726 / 2720.
 * In the later call: the forward's max and sum of exps taken as the
 * copies land (the sum scaled down where a vector raises the max), f16
 * 2110 / 2120 against 2092 / 2100, log f16 2203 / 2196 against 2159 /
 * 2153, bf16 2098 / 2102 against 2087 / 2086 (+1 to +2%, too little for
 * a sum that rounds differently from the reference's max-first form);
 * with the ring besides, level but for two rows a cluster again (32 x 64
 * x 112 x 112 f16 2037 / 2036 against 1833 / 1819). */
template <class T, int V, bool FWD>
static udnnStatus_t sm_launch_cluster(const udnn_gpu_context *c, const sm_rows &r, const T *a,
                                      const T *b, T *o, sm_cfg<typename io<T>::C> f)
{
#if UDNN_GPU_CLUSTERS
    if constexpr (SM_CLUSTER && sizeof(T) == 2 && V * sizeof(T) == 16) {
        constexpr size_t share = FWD ? SM_CLUSTER_SHARE : 2 * SM_CLUSTER_SHARE;
        constexpr int per_sm = (int)(2 * SM_CLUSTER_SHARE / share); /* blocks a multiprocessor */
        constexpr int held = FWD ? 16 : 32; /* bytes a vector of the row */
        if (!r.uniform || r.len % V != 0 || r.step % V != 0 || (uintptr_t)a % 16 != 0 ||
            (!FWD && (uintptr_t)b % 16 != 0) || (uintptr_t)o % 16 != 0 ||
            r.len >= ((int64_t)1 << 30))
            return UDNN_STATUS_NOT_SUPPORTED;
        const int64_t nv = r.len / V;
        unsigned cs;
        int64_t chunk;
        /* a grid that leaves multiprocessors idle loses (H200, 80 rows of
         * 196 KB f16, two blocks a row: 873 / 830 GB/s against 1047 / 993;
         * four: 913 / 907 against 1001 / 945) */
        if (!udnn_gpu_cluster_split(nv, held, share, SM_CLUSTER_MAX, &cs, &chunk) ||
            r.groups * cs < (int64_t)c->sm_count * per_sm ||
            r.groups * cs >= ((int64_t)1 << 31))
            return UDNN_STATUS_NOT_SUPPORTED;
        const size_t shared = (size_t)chunk * held;
        auto kernel = [] {
            if constexpr (FWD) return sm_cluster_kernel<T, V>;
            else return sm_cluster_bwd_kernel<T, V>;
        }();
        static udnn_gpu_cache fits;
        if (!udnn_gpu_cluster_fits(c, kernel, SM_CLUSTER_THREADS, share, SM_CLUSTER_MAX, &fits))
            return UDNN_STATUS_NOT_SUPPORTED;
        unsigned threads = UDNN_GPU_WHOLE_WARPS; /* a power of two (sm_block_reduce) */
        while (threads < SM_CLUSTER_THREADS && threads < chunk) threads *= 2;
        if constexpr (FWD)
            return udnn_gpu_cluster_launch(c, "launching softmax's cluster kernel", kernel,
                                           (unsigned)(r.groups * cs), threads, shared, cs, true, r,
                                           a, o, cs, (int)chunk, (int)nv, f);
        else
            return udnn_gpu_cluster_launch(
                c, "launching softmax's backward cluster kernel", kernel,
                (unsigned)(udnn_gpu_resident_clusters(kernel, r.groups, threads, shared, cs) * cs),
                threads, shared, cs, true, r, a, b, o, cs, (int)chunk, (int)nv, f);
    }
#endif
    (void)c, (void)r, (void)a, (void)b, (void)o, (void)f;
    return UDNN_STATUS_NOT_SUPPORTED;
}

/* ---- host side: the row paths ------------------------------------------------------- */

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
        if (chunks > 1)
            st = fwd ? sm_launch_cluster<T, V, true>(c, r, a, b, o, f)
                     : sm_launch_cluster<T, V, false>(c, r, a, b, o, f);
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
            sm_rows_block_kernel<T, false, V>
                <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f);
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
udnnStatus_t sm_run_rows(const udnn_gpu_context *c, sm_rows r, const T *a, const T *b, T *o,
                         sm_cfg<typename io<T>::C> f, bool fwd)
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

#define SM_ROWS_TYPE(T)                                                                            \
    template udnnStatus_t sm_run_rows<T>(const udnn_gpu_context *, sm_rows, const T *, const T *,  \
                                         T *, sm_cfg<typename io<T>::C>, bool);
UDNN_GPU_FLOAT_TYPES(SM_ROWS_TYPE)
