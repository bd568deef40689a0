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
 * tensor. Kernels never assume a warp of 32 (udnnGpuWarpSize).
 *
 * softmax.h holds what the files share; softmax_rows.cu the row paths
 * (team, one read, cluster, blocks); this file the columns, the general
 * kernels and the choice of a path. */
#include "cuda/softmax.h"

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
            /* what the output takes of the sum: its log, or its inverse
             * (one division a position, not one an output: H200, f32 64
             * x 256 x 56 x 56 in bursts, 3336 / 3343 GB/s with a division
             * an output, 3841 / 3845 with the inverse) */
#pragma unroll
            for (int i = 0; i < V; i++) s[i] = f.log ? log(s[i]) : C(1) / s[i];
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
                    if (FWD) r[i] = f.log ? (v - m[i]) - s[i] : v * s[i];
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
        sm_cols_reg_kernel<T, false, V>
            <<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(a, in0, in1, out, f);
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
