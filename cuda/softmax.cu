/* softmax.cu - softmax forward and backward: FAST, ACCURATE and LOG over
 * CHANNEL (C, per n and position) or INSTANCE (C and every later dim, per
 * n) groups, FLOAT, DOUBLE, HALF and BFLOAT16, 4-D and 5-D, any strides,
 * alpha/beta blending, in place (core allows an output to share an input's
 * buffer with the same strides: every kernel reads an element's inputs
 * before it writes that element, and a group's reduction finishes before
 * its first write). Semantics mirror cpu/ref/softmax.c: FAST takes exp(x)
 * unshifted; ACCURATE and LOG shift by the group's maximum.
 *
 * Short rows (held in registers) and column tiles (held in shared memory)
 * are read from memory once and reduce as the reference does: the max,
 * then the sum of exp(x - max). Long rows are read twice, and their
 * statistics are online (a running max and the sum of exp(x - max),
 * rescaled when the max grows) so that two passes suffice.
 *
 * Paths, every tensor sharing one set of strides:
 *  - rows: a group's members are contiguous (CHANNEL with C innermost, as
 *    NHWC; INSTANCE over a dense image, as NCHW or NHWC). Short rows go to
 *    a team of lanes (a power of two up to 32) within a warp; long rows to a
 *    block; long rows in few groups are split over several blocks whose
 *    partial statistics meet in the context's scratch memory (fixed order,
 *    deterministic) before a second kernel writes.
 *  - columns: CHANNEL with contiguous positions (NCHW): a block takes a
 *    tile of positions across all of C into shared memory, so each element
 *    is read from memory once; rows of the tile are coalesced.
 * Anything else (tensors with different strides, gaps between positions)
 * takes a general kernel: a thread per CHANNEL group, a block per INSTANCE
 * group, offsets computed per tensor. */
#include <math.h>

#include "cuda/kernels.h"

/* ---- the per-group arithmetic ------------------------------------------------------- */

/* A reduction's running value. Forward: m the running max (0 for FAST)
 * and s the sum of exp(x - m). Backward: s the sum of dy*y (dy for LOG). */
template <class C> struct sm_acc {
    C m, s;
};

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
template <class C, bool FWD>
__device__ __forceinline__ void sm_add(sm_acc<C> &a, C v0, C v1, const sm_cfg<C> &f)
{
    if (!FWD) {
        a.s += f.log ? v1 : v1 * v0;
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

template <class C> __device__ __forceinline__ sm_fin<C> sm_finish(sm_acc<C> a, const sm_cfg<C> &f)
{
    sm_fin<C> r;
    r.m = a.m;
    r.s = a.s;
    r.log_s = f.log ? log(a.s) : C(0);
    return r;
}

/* One output member before blending. */
template <class C, bool FWD>
__device__ __forceinline__ C sm_value(const sm_fin<C> &g, C v0, C v1, const sm_cfg<C> &f)
{
    if (FWD) return f.log ? (v0 - g.m) - g.log_s : exp(v0 - g.m) / g.s;
    return f.log ? v1 - exp(v0) * g.s : v0 * (v1 - g.s);
}

template <class T>
__device__ __forceinline__ void sm_store(T *out, const typename io<T>::C v,
                                         const sm_cfg<typename io<T>::C> &f)
{
    typedef typename io<T>::C C;
    C r = f.alpha * v;
    if (f.beta != C(0)) r += f.beta * io<T>::ld(*out);
    *out = io<T>::st(r);
}

/* ---- reductions over teams of lanes and over blocks -------------------------------- */

template <class C> __device__ __forceinline__ sm_acc<C> sm_shfl_xor(sm_acc<C> a, int m)
{
    sm_acc<C> r;
    r.m = udnnGpuShflXor(a.m, m);
    r.s = udnnGpuShflXor(a.s, m);
    return r;
}

/* Over aligned teams of `lanes` lanes (a power of two no larger than the
 * warp); every lane of the warp must call it. */
template <class C> __device__ __forceinline__ sm_acc<C> sm_team_reduce(sm_acc<C> a, int lanes)
{
    for (int m = lanes / 2; m > 0; m /= 2) a = sm_merge(a, sm_shfl_xor(a, m));
    return a;
}

/* Slots sm_block_reduce needs: one per warp of the largest block on the
 * smallest warp. */
#define SM_BLOCK_SLOTS (1024 / 16)

/* Over the block, to every thread, merged in warp order; called uniformly. */
template <class C> __device__ sm_acc<C> sm_block_reduce(sm_acc<C> a, sm_acc<C> *slots)
{
    const int lane = threadIdx.x % udnnGpuWarpSize, warp = threadIdx.x / udnnGpuWarpSize;
    const int warps = (blockDim.x + udnnGpuWarpSize - 1) / udnnGpuWarpSize;
    a = sm_team_reduce(a, udnnGpuWarpSize);
    __syncthreads(); /* the slots may still be read by a previous call */
    if (lane == 0) slots[warp] = a;
    __syncthreads();
    sm_acc<C> r = slots[0];
    for (int w = 1; w < warps; w++) r = sm_merge(r, slots[w]);
    return r;
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
    int lanes;            /* team kernel: lanes per row */
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

template <class C> __device__ __forceinline__ C sm_team_max(C v, int lanes)
{
    for (int m = lanes / 2; m > 0; m /= 2) v = fmax(v, udnnGpuShflXor(v, m));
    return v;
}

template <class C> __device__ __forceinline__ C sm_team_sum(C v, int lanes)
{
    for (int m = lanes / 2; m > 0; m /= 2) v += udnnGpuShflXor(v, m);
    return v;
}

/* A team of a.lanes lanes per row of at most E * lanes elements, held in
 * registers: one read of the inputs, and (forward) the max first, then the
 * sum of exp(x - max), as the reference computes them, with one exp per
 * element. in0: x or y; in1: dy (backward). */
template <class T, bool FWD, int E>
__global__ void sm_rows_team_kernel(sm_rows a, const T *in0, const T *in1, T *out,
                                    sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    const int lanes = a.lanes, lane = threadIdx.x % lanes;
    const int64_t teams = blockDim.x / lanes;
    for (int64_t first = blockIdx.x * teams; first < a.groups; first += gridDim.x * teams) {
        const int64_t g = first + threadIdx.x / lanes;
        const bool valid = g < a.groups;
        const int64_t base = valid ? sm_row_base(a, g) : 0;
        C v0[E], v1[E];
#pragma unroll
        for (int k = 0; k < E; k++) {
            const int64_t j = lane + (int64_t)k * lanes;
            const bool ok = valid && j < a.len;
            v0[k] = ok ? io<T>::ld(in0[base + j]) : C(0);
            v1[k] = !FWD && ok ? io<T>::ld(in1[base + j]) : C(0);
        }
        C m = C(0), s = C(0);
        if (FWD) {
            if (f.shift) {
                m = -C(INFINITY);
#pragma unroll
                for (int k = 0; k < E; k++)
                    if (valid && lane + (int64_t)k * lanes < a.len) m = fmax(m, v0[k]);
                m = sm_team_max(m, lanes);
            }
#pragma unroll
            for (int k = 0; k < E; k++)
                if (valid && lane + (int64_t)k * lanes < a.len) {
                    const C e = exp(v0[k] - m);
                    s += e;
                    if (!f.log) v1[k] = e; /* kept for the output */
                }
            s = sm_team_sum(s, lanes);
        } else {
#pragma unroll
            for (int k = 0; k < E; k++)
                if (valid && lane + (int64_t)k * lanes < a.len) s += f.log ? v1[k] : v1[k] * v0[k];
            s = sm_team_sum(s, lanes);
        }
        if (!valid) continue;
        const C log_s = FWD && f.log ? log(s) : C(0);
#pragma unroll
        for (int k = 0; k < E; k++) {
            const int64_t j = lane + (int64_t)k * lanes;
            if (j >= a.len) break;
            C r;
            if (FWD) r = f.log ? (v0[k] - m) - log_s : v1[k] / s;
            else r = f.log ? v1[k] - exp(v0[k]) * s : v0[k] * (v1[k] - s);
            sm_store(out + base + j, r, f);
        }
    }
}

/* The partial result of elements [lo, hi) of a row, over the block. */
template <class T, bool FWD>
__device__ sm_acc<typename io<T>::C> sm_block_stats(const T *in0, const T *in1, int64_t lo,
                                                    int64_t hi, const sm_cfg<typename io<T>::C> &f,
                                                    sm_acc<typename io<T>::C> *slots)
{
    typedef typename io<T>::C C;
    sm_acc<C> acc = sm_init(f);
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x)
        sm_add<C, FWD>(acc, io<T>::ld(in0[j]), FWD ? C(0) : io<T>::ld(in1[j]), f);
    return sm_block_reduce(acc, slots);
}

template <class T, bool FWD>
__device__ void sm_block_write(const T *in0, const T *in1, T *out, int64_t lo, int64_t hi,
                               const sm_fin<typename io<T>::C> &fin,
                               const sm_cfg<typename io<T>::C> &f)
{
    typedef typename io<T>::C C;
    for (int64_t j = lo + threadIdx.x; j < hi; j += blockDim.x)
        sm_store(out + j,
                 sm_value<C, FWD>(fin, io<T>::ld(in0[j]), FWD ? C(0) : io<T>::ld(in1[j]), f), f);
}

/* A block per row. */
template <class T, bool FWD>
__global__ void sm_rows_block_kernel(sm_rows a, const T *in0, const T *in1, T *out,
                                     sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    __shared__ sm_acc<C> slots[SM_BLOCK_SLOTS];
    for (int64_t g = blockIdx.x; g < a.groups; g += gridDim.x) {
        const int64_t base = sm_row_base(a, g);
        const sm_fin<C> fin =
            sm_finish(sm_block_stats<T, FWD>(in0, in1, base, base + a.len, f, slots), f);
        sm_block_write<T, FWD>(in0, in1, out, base, base + a.len, fin, f);
    }
}

/* Several blocks per row, first pass: block (g, k) leaves the partial
 * result of chunk k of row g in part[g * chunks + k]. */
template <class T, bool FWD>
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
        sm_acc<C> r = sm_block_stats<T, FWD>(in0, in1, base + lo, base + hi, f, slots);
        if (threadIdx.x == 0) part[b] = r;
    }
}

/* Second pass: every block merges its row's partials (thread i takes
 * partials i, i + blockDim, ...; the same bits in every block of the row),
 * then writes its chunk. Blocks run from the last chunk back to the first,
 * so the chunks the first pass read last (the likeliest still in cache)
 * are read again first. */
template <class T, bool FWD>
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
            acc = sm_merge(acc, part[g * a.chunks + i]);
        const sm_fin<C> fin = sm_finish(sm_block_reduce(acc, slots), f);
        const int64_t base = sm_row_base(a, g), lo = k * a.chunk;
        const int64_t hi = lo + a.chunk < a.len ? lo + a.chunk : a.len;
        sm_block_write<T, FWD>(in0, in1, out, base + lo, base + hi, fin, f);
    }
}

/* ---- columns: CHANNEL over contiguous positions (NCHW) ------------------------------- */

typedef struct {
    int64_t n, c, s;   /* images, channels, positions per image */
    int64_t ns, cs;    /* image and channel strides; positions have stride 1 */
    int64_t tiles_per_image;
    int ts;            /* positions per tile */
} sm_cols;

/* The k partial values of each position of a tile (thread (tx, ty) holds
 * one) combined in ty order, to every thread; called by the whole block. */
template <class C, bool MAX>
__device__ __forceinline__ C sm_cols_combine(C v, C *part, int ts, int k, int tx, int ty)
{
    __syncthreads(); /* part may still be read by the previous call */
    part[ty * ts + tx] = v;
    __syncthreads();
    C r = part[tx];
    for (int i = 1; i < k; i++) r = MAX ? fmax(r, part[i * ts + tx]) : r + part[i * ts + tx];
    return r;
}

/* A tile of ts positions x every channel, read once into shared memory
 * (compute type). Thread (tx, ty) takes position tx and channels ty,
 * ty + k, ...: it reads back only what it stored, so barriers are needed
 * only where the k partial results of a position meet. Forward: the max,
 * then the sum of exp(x - max) (the exps kept in place for the output),
 * as the reference computes them. */
template <class T, bool FWD>
__global__ void sm_cols_kernel(sm_cols a, const T *in0, const T *in1, T *out,
                               sm_cfg<typename io<T>::C> f)
{
    typedef typename io<T>::C C;
    extern __shared__ double sm_cols_smem[];
    const int ts = a.ts, k = blockDim.x / ts;
    const int tx = threadIdx.x % ts, ty = threadIdx.x / ts;
    C *part = (C *)sm_cols_smem;
    C *t0 = part + blockDim.x;
    C *t1 = t0 + a.c * ts;
    const int64_t tiles = a.n * a.tiles_per_image;
    for (int64_t b = blockIdx.x; b < tiles; b += gridDim.x) {
        const int64_t img = b / a.tiles_per_image;
        const int64_t pos = (b - img * a.tiles_per_image) * ts + tx;
        const bool valid = pos < a.s;
        const int64_t base = img * a.ns + pos;
        if (valid)
#pragma unroll 4
            for (int64_t ch = ty; ch < a.c; ch += k) {
                t0[ch * ts + tx] = io<T>::ld(in0[base + ch * a.cs]);
                if (!FWD) t1[ch * ts + tx] = io<T>::ld(in1[base + ch * a.cs]);
            }
        C m = C(0), s = C(0);
        if (FWD && f.shift) {
            m = -C(INFINITY);
            if (valid)
                for (int64_t ch = ty; ch < a.c; ch += k) m = fmax(m, t0[ch * ts + tx]);
            m = sm_cols_combine<C, true>(m, part, ts, k, tx, ty);
        }
        if (valid)
            for (int64_t ch = ty; ch < a.c; ch += k) {
                const C v0 = t0[ch * ts + tx];
                if (FWD) {
                    const C e = exp(v0 - m);
                    s += e;
                    if (!f.log) t0[ch * ts + tx] = e;
                } else {
                    const C v1 = t1[ch * ts + tx];
                    s += f.log ? v1 : v1 * v0;
                }
            }
        s = sm_cols_combine<C, false>(s, part, ts, k, tx, ty);
        const C log_s = FWD && f.log ? log(s) : C(0);
        if (valid)
            for (int64_t ch = ty; ch < a.c; ch += k) {
                const C v0 = t0[ch * ts + tx];
                C r;
                if (FWD) {
                    r = f.log ? (v0 - m) - log_s : v0 / s;
                } else {
                    const C v1 = t1[ch * ts + tx];
                    r = f.log ? v1 - exp(v0) * s : v0 * (v1 - s);
                }
                sm_store(out + base + ch * a.cs, r, f);
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
            sm_add<C, FWD>(acc, io<T>::ld(in0[base[0] + ch * a.st[0][1]]),
                           FWD ? C(0) : io<T>::ld(in1[base[1] + ch * a.st[1][1]]), f);
        const sm_fin<C> fin = sm_finish(acc, f);
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
            sm_add<C, FWD>(
                acc, io<T>::ld(in0[img * a.st[0][0] + ch * a.st[0][1] + sm_pos_off(a, 0, s)]),
                v1, f);
        }
        const sm_fin<C> fin = sm_finish(sm_block_reduce(acc, slots), f);
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

/* Shared memory a column tile may take without asking for more. */
#define SM_COLS_SMEM_MAX (48 << 10)

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

static int sm_pow2_at_least(int64_t n, int cap)
{
    int p = 1;
    while (p < cap && p < n) p *= 2;
    return p;
}

template <class T>
static udnnStatus_t sm_run_rows(const udnn_gpu_context *c, sm_rows r, const void *in0,
                                const void *in1, void *out, sm_cfg<typename io<T>::C> f, bool fwd)
{
    typedef typename io<T>::C C;
    const T *a = (const T *)in0, *b = (const T *)in1;
    T *o = (T *)out;
    if (r.len <= 1024) {
        r.lanes = sm_pow2_at_least(r.len, 32);
        const int e = sm_pow2_at_least((r.len + r.lanes - 1) / r.lanes, 32);
        const int64_t teams = UDNN_GPU_BLOCK / r.lanes;
        const unsigned grid = udnn_gpu_grid(c, r.groups * UDNN_GPU_BLOCK / teams);
#define SM_TEAM(E)                                                                             \
    do {                                                                                       \
        if (fwd)                                                                               \
            sm_rows_team_kernel<T, true, E><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f); \
        else                                                                                   \
            sm_rows_team_kernel<T, false, E><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f); \
    } while (0)
        switch (e) {
        case 1: SM_TEAM(1); break;
        case 2: SM_TEAM(2); break;
        case 4: SM_TEAM(4); break;
        case 8: SM_TEAM(8); break;
        case 16: SM_TEAM(16); break;
        default: SM_TEAM(32); break;
        }
#undef SM_TEAM
        return udnn_gpu_launched();
    }
    /* few long rows: enough blocks per row to fill the device, chunks of
     * 2048 elements or more */
    const int64_t want = 4 * (int64_t)c->sm_count;
    int64_t chunks = r.groups < want ? (want + r.groups - 1) / r.groups : 1;
    const int64_t most = (r.len + 2047) / 2048;
    if (chunks > most) chunks = most;
    if (chunks > 1024) chunks = 1024;
    const size_t part_bytes = (size_t)(r.groups * chunks) * sizeof(sm_acc<C>);
    if (chunks < 2 || part_bytes > c->scratch_bytes) {
        const unsigned grid = (unsigned)(r.groups < c->max_blocks ? r.groups : c->max_blocks);
        if (fwd) sm_rows_block_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f);
        else sm_rows_block_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, f);
        return udnn_gpu_launched();
    }
    r.chunks = (int)chunks;
    r.chunk = (r.len + chunks - 1) / chunks;
    sm_acc<C> *part = (sm_acc<C> *)c->scratch;
    const int64_t total = r.groups * chunks;
    const unsigned grid = (unsigned)(total < c->max_blocks ? total : c->max_blocks);
    if (fwd) sm_rows_part_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, part, f);
    else sm_rows_part_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, part, f);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS) return st;
    if (fwd)
        sm_rows_final_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, part, f);
    else
        sm_rows_final_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(r, a, b, o, part, f);
    return udnn_gpu_launched();
}

/* The column tile for CHANNEL over contiguous positions; 0 (nothing
 * launched) when C is too large for a tile of 8 positions in shared memory. */
template <class T>
static int sm_cols_fits(const udnn_tensor *t, bool fwd, sm_cols *out, size_t *smem)
{
    typedef typename io<T>::C C;
    sm_cols a;
    a.n = t->dims[0];
    a.c = t->dims[1];
    a.s = sm_positions(t);
    a.ns = t->strides[0];
    a.cs = t->strides[1];
    for (int ts = 32; ts >= 8; ts /= 2) {
        size_t bytes = (size_t)UDNN_GPU_BLOCK * sizeof(C) +
                       (size_t)(fwd ? 1 : 2) * (size_t)a.c * ts * sizeof(C);
        if (bytes <= SM_COLS_SMEM_MAX) {
            a.ts = ts;
            a.tiles_per_image = (a.s + ts - 1) / ts;
            *out = a;
            *smem = bytes;
            return 1;
        }
    }
    return 0;
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
template <class T>
static udnnStatus_t sm_run(const udnn_gpu_context *c, const udnn_softmax_problem *p,
                           const udnn_tensor *const *ts, int nt, const void *in0, const void *in1,
                           void *out, bool fwd)
{
    typedef typename io<T>::C C;
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
        sm_cols a;
        size_t smem;
        if (!inst && sm_packed_from(t, 2, 1) && sm_cols_fits<T>(t, fwd, &a, &smem)) {
            const unsigned grid = udnn_gpu_grid(c, a.n * a.tiles_per_image * UDNN_GPU_BLOCK);
            if (fwd)
                sm_cols_kernel<T, true><<<grid, UDNN_GPU_BLOCK, smem, c->stream>>>(
                    a, (const T *)in0, (const T *)in1, (T *)out, f);
            else
                sm_cols_kernel<T, false><<<grid, UDNN_GPU_BLOCK, smem, c->stream>>>(
                    a, (const T *)in0, (const T *)in1, (T *)out, f);
            return udnn_gpu_launched();
        }
    }
    sm_gen a = sm_gen_of(ts, nt);
    if (inst) {
        const unsigned grid = (unsigned)(a.n < c->max_blocks ? a.n : c->max_blocks);
        if (fwd)
            sm_inst_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
                a, (const T *)in0, (const T *)in1, (T *)out, f);
        else
            sm_inst_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
                a, (const T *)in0, (const T *)in1, (T *)out, f);
    } else {
        const unsigned grid = udnn_gpu_grid(c, a.n * a.s);
        if (fwd)
            sm_chan_kernel<T, true><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
                a, (const T *)in0, (const T *)in1, (T *)out, f);
        else
            sm_chan_kernel<T, false><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(
                a, (const T *)in0, (const T *)in1, (T *)out, f);
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
                      st = sm_run<T>(c, p, ts, 2, p->x_ptr, NULL, p->out_ptr, true));
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
