/* kernels.h - what every kernel source of the GPU backend shares: storage
 * types and their compute types, logical-index-to-offset walking with
 * 64-bit offsets, the dense-layout test behind the fast paths, block
 * reductions that never assume a warp of 32, and the launch helpers.
 * Kernels trust their inputs: core validated the problem. */
#ifndef UDNN_CUDA_KERNELS_H
#define UDNN_CUDA_KERNELS_H

#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "cuda/gpu.h"

/* threads per block of the element-wise and reduction kernels */
#define UDNN_GPU_BLOCK 256
/* the most tensors one shape walks together */
#define UDNN_GPU_MAX_TENSORS 4

/* ---- types ------------------------------------------------------------------ */

/* Storage type T -> compute type C (float for HALF and BFLOAT16, which are
 * loaded to float and rounded once on store). */
template <class T> struct io;
template <> struct io<float> {
    typedef float C;
    static __device__ __forceinline__ float ld(float v) { return v; }
    static __device__ __forceinline__ float st(float v) { return v; }
};
template <> struct io<double> {
    typedef double C;
    static __device__ __forceinline__ double ld(double v) { return v; }
    static __device__ __forceinline__ double st(double v) { return v; }
};
template <> struct io<udnnGpuHalf> {
    typedef float C;
    static __device__ __forceinline__ float ld(udnnGpuHalf v) { return udnnGpuHalfToFloat(v); }
    static __device__ __forceinline__ udnnGpuHalf st(float v) { return udnnGpuFloatToHalf(v); }
};
template <> struct io<udnnGpuBf16> {
    typedef float C;
    static __device__ __forceinline__ float ld(udnnGpuBf16 v) { return udnnGpuBf16ToFloat(v); }
    static __device__ __forceinline__ udnnGpuBf16 st(float v) { return udnnGpuFloatToBf16(v); }
};

/* Integers compute in double and store rounded to nearest (half away from
 * zero) and saturated, NaN as 0, as cpu/ref's ref_store does. */
static __device__ __forceinline__ double udnn_gpu_saturate(double v, double lo, double hi)
{
    if (v != v) return 0.0;
    v = fmin(fmax(v, lo), hi);
    return v < 0 ? v - 0.5 : v + 0.5;
}
template <> struct io<int8_t> {
    typedef double C;
    static __device__ __forceinline__ double ld(int8_t v) { return v; }
    static __device__ __forceinline__ int8_t st(double v)
    {
        return (int8_t)udnn_gpu_saturate(v, -128.0, 127.0);
    }
};
template <> struct io<int32_t> {
    typedef double C;
    static __device__ __forceinline__ double ld(int32_t v) { return v; }
    static __device__ __forceinline__ int32_t st(double v)
    {
        return (int32_t)udnn_gpu_saturate(v, -2147483648.0, 2147483647.0);
    }
};
template <> struct io<int64_t> {
    typedef double C;
    static __device__ __forceinline__ double ld(int64_t v) { return (double)v; }
    static __device__ __forceinline__ int64_t st(double v) { return (int64_t)v; }
};

/* The type of the normalizations' parameters and statistics (batch,
 * layer, RMS and group norm): FLOAT for FLOAT, HALF and BFLOAT16 data,
 * DOUBLE for DOUBLE. */
template <class T> struct udnn_gpu_param {
    typedef float P;
};
template <> struct udnn_gpu_param<double> {
    typedef double P;
};

static inline int udnn_gpu_float_type(udnnDataType_t t)
{
    return t == UDNN_DATA_FLOAT || t == UDNN_DATA_DOUBLE || t == UDNN_DATA_HALF ||
           t == UDNN_DATA_BFLOAT16;
}

/* Runs the statement(s) with T typedef'd to the storage type of a float
 * dtype. */
#define UDNN_GPU_DISPATCH(dtype, ...)                                                       \
    switch (dtype) {                                                                       \
    case UDNN_DATA_FLOAT: { typedef float T; __VA_ARGS__; } break;                         \
    case UDNN_DATA_DOUBLE: { typedef double T; __VA_ARGS__; } break;                       \
    case UDNN_DATA_HALF: { typedef udnnGpuHalf T; __VA_ARGS__; } break;                    \
    case UDNN_DATA_BFLOAT16: { typedef udnnGpuBf16 T; __VA_ARGS__; } break;                \
    default: break;                                                                        \
    }

/* X(T) for each floating type UDNN_GPU_DISPATCH runs: a file's explicit
 * instantiations of what another file of its op calls. */
#define UDNN_GPU_FLOAT_TYPES(X) X(float) X(double) X(udnnGpuHalf) X(udnnGpuBf16)

/* UDNN_GPU_DISPATCH over the integer types too (SetTensor, ScaleTensor). */
#define UDNN_GPU_DISPATCH_ALL(dtype, ...)                                                   \
    switch (dtype) {                                                                       \
    case UDNN_DATA_INT8: { typedef int8_t T; __VA_ARGS__; } break;                         \
    case UDNN_DATA_INT32: { typedef int32_t T; __VA_ARGS__; } break;                       \
    case UDNN_DATA_INT64: { typedef int64_t T; __VA_ARGS__; } break;                       \
    default: UDNN_GPU_DISPATCH(dtype, __VA_ARGS__);                                        \
    }

/* ---- shapes ------------------------------------------------------------------ */

/* Logical dims shared by up to UDNN_GPU_MAX_TENSORS tensors and each one's
 * element strides (a broadcast tensor has stride 0 where its dim is 1). */
typedef struct {
    int rank;
    int64_t count;
    int64_t dims[UDNN_DIM_MAX];
    int64_t strides[UDNN_GPU_MAX_TENSORS][UDNN_DIM_MAX];
} udnn_gpu_shape;

static inline int64_t udnn_gpu_count(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

/* The shape of ts[0]'s dims; a tensor whose dim is 1 where ts[0]'s is not
 * gets stride 0 there (broadcast). */
static inline udnn_gpu_shape udnn_gpu_make_shape(const udnn_tensor *const *ts, int nt)
{
    udnn_gpu_shape s;
    memset(&s, 0, sizeof s);
    s.rank = ts[0]->rank;
    s.count = udnn_gpu_count(ts[0]);
    for (int d = 0; d < s.rank; d++) {
        s.dims[d] = ts[0]->dims[d];
        for (int t = 0; t < nt; t++)
            s.strides[t][d] = ts[t]->dims[d] == 1 ? 0 : ts[t]->strides[d];
    }
    return s;
}

/* The offsets of logical (row-major) element i in each of NT tensors. */
template <int NT>
__device__ __forceinline__ void udnn_gpu_offsets(const udnn_gpu_shape &s, int64_t i,
                                                 int64_t off[NT])
{
    for (int t = 0; t < NT; t++) off[t] = 0;
    for (int d = s.rank - 1; d >= 0; d--) {
        int64_t n = s.dims[d];
        int64_t q = i / n, r = i - q * n;
        for (int t = 0; t < NT; t++) off[t] += r * s.strides[t][d];
        i = q;
    }
}

/* Dims with the element strides of NS slots (tensors, or their roles,
 * walked by one index), as an op orders and merges them (the norms, batch
 * norm). */
template <int NS> struct udnn_gpu_space {
    int nd;
    int64_t size;
    int64_t dim[UDNN_DIM_MAX];
    int64_t st[NS][UDNN_DIM_MAX];
};

/* The offsets in the first NT slots of element idx of s, in I's
 * arithmetic (32 bits where the space allows: a cheaper division). The
 * outermost dim needs no division: idx is already below its size. */
template <class I, int NT, int NS>
__device__ __forceinline__ void udnn_gpu_space_offsets(const udnn_gpu_space<NS> &s, I idx,
                                                       int64_t off[NT])
{
    for (int t = 0; t < NT; t++) off[t] = 0;
    for (int d = s.nd - 1; d > 0; d--) {
        const I n = (I)s.dim[d], q = idx / n, r = idx - q * n;
        for (int t = 0; t < NT; t++) off[t] += (int64_t)r * s.st[t][d];
        idx = q;
    }
    if (s.nd > 0)
        for (int t = 0; t < NT; t++) off[t] += (int64_t)idx * s.st[t][0];
}

/* 1 when every tensor has the same dims and strides as ts[0] and those
 * strides cover count elements with no gap (any dim order: NCHW, NHWC, ...).
 * Element-wise kernels then walk memory offsets 0..count-1 directly. */
static inline int udnn_gpu_same_dense(const udnn_tensor *const *ts, int nt)
{
    const udnn_tensor *a = ts[0];
    for (int t = 1; t < nt; t++) {
        if (ts[t]->rank != a->rank) return 0;
        for (int d = 0; d < a->rank; d++)
            if (ts[t]->dims[d] != a->dims[d] || ts[t]->strides[d] != a->strides[d]) return 0;
    }
    /* dense: sorted by stride, each stride is the product of the dims
     * below it (dims of 1 place no constraint) */
    int64_t covered = 1;
    int used[UDNN_DIM_MAX] = {0};
    for (int k = 0; k < a->rank; k++) {
        int best = -1;
        for (int d = 0; d < a->rank; d++)
            if (!used[d] && a->dims[d] > 1 && (best < 0 || a->strides[d] < a->strides[best]))
                best = d;
        if (best < 0) break;
        used[best] = 1;
        if (a->strides[best] != covered) return 0;
        covered *= a->dims[best];
    }
    return 1;
}

/* ---- division by a launch-invariant divisor ------------------------------------------- */

/* q = n / d by multiply-high (Granlund and Montgomery, "Division by
 * invariant integers using multiplication", fig. 4.1), for index walks that
 * would otherwise divide per element. udnn_gpu_div32: n < 2^31 only, no
 * branch. udnn_gpu_fastdiv: exact for n < 2^32 when d < 2^32; larger
 * operands take the plain 64-bit division. */
typedef struct {
    uint32_t d, m, s;
} udnn_gpu_div32;

static inline udnn_gpu_div32 udnn_gpu_div32_make(uint32_t d)
{
    udnn_gpu_div32 q;
    q.d = d;
    q.s = 0;
    while (q.s < 31 && (1u << q.s) < d) q.s++;
    q.m = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << q.s) - d)) / d + 1);
    return q;
}

static __device__ __forceinline__ uint32_t udnn_gpu_div32_q(const udnn_gpu_div32 &q, uint32_t n)
{
    return (__umulhi(n, q.m) + n) >> q.s;
}

/* Load q of a span laid out as runs of per_run.d loads of W elements,
 * `step` elements from one run's start to the next (a channel of NCHW,
 * a group's channels): its run, and its element offset from the span's
 * start. */
struct udnn_gpu_run_at {
    int64_t run, off;
};
template <int W>
static __device__ __forceinline__ udnn_gpu_run_at udnn_gpu_run_locate(const udnn_gpu_div32 &per_run,
                                                                      int64_t step, int64_t q)
{
    udnn_gpu_run_at r;
    r.run = udnn_gpu_div32_q(per_run, (uint32_t)q);
    r.off = r.run * step + (q - r.run * per_run.d) * W;
    return r;
}

typedef struct {
    uint64_t d;
    uint32_t m, s;
    int big; /* d >= 2^32 */
} udnn_gpu_fastdiv;

static inline udnn_gpu_fastdiv udnn_gpu_fastdiv_make(int64_t d)
{
    udnn_gpu_fastdiv f;
    f.d = (uint64_t)d;
    f.big = f.d >> 32 != 0;
    f.s = 0;
    f.m = 1;
    if (!f.big) {
        while (f.s < 32 && (UINT64_C(1) << f.s) < f.d) f.s++;
        f.m = (uint32_t)(((UINT64_C(1) << 32) * ((UINT64_C(1) << f.s) - f.d)) / f.d + 1);
    }
    return f;
}

static __device__ __forceinline__ uint64_t udnn_gpu_fastdiv_q(const udnn_gpu_fastdiv &f,
                                                             uint64_t n)
{
    if (f.big || (n >> 32) != 0) return n / f.d;
    const uint32_t n32 = (uint32_t)n;
    return ((uint64_t)__umulhi(n32, f.m) + n32) >> f.s;
}

/* ---- reductions ---------------------------------------------------------------- */

/* Sum of v over the warp, in every lane. */
template <class C> __device__ __forceinline__ C udnn_gpu_warp_sum(C v)
{
    for (int m = udnnGpuWarpSize / 2; m > 0; m /= 2) v += udnnGpuShflXor(v, m);
    return v;
}

/* Sum of v over the block, returned to every thread. smem holds at least
 * blockDim.x / warp size values of C; the block must call it uniformly. */
template <class C> __device__ C udnn_gpu_block_sum(C v, C *smem)
{
    const int lane = threadIdx.x % udnnGpuWarpSize, warp = threadIdx.x / udnnGpuWarpSize;
    const int warps = (blockDim.x + udnnGpuWarpSize - 1) / udnnGpuWarpSize;
    v = udnn_gpu_warp_sum(v);
    __syncthreads(); /* smem may still be read by a previous call */
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    C r = C(0);
    for (int w = 0; w < warps; w++) r += smem[w];
    return r;
}

/* N sums over the block at once, into v[] of thread 0 alone, each added in
 * udnn_gpu_block_sum's order (the same bits): one pair of barriers for
 * all N, where N calls of udnn_gpu_block_sum take N pairs and every thread
 * reads every warp's partial. red holds N blockDim.x / 16 values. In
 * udnn_gpu_cluster_sum2, H200, bursts, three passes (copy f32 4097 / 4115
 * / 4091 GB/s, f16 3979 / 4000 / 3985), against two udnn_gpu_block_sum:
 * batch norm training 64 x 256 x 56 x 56 f32 3383 / 3373 / 3371 against
 * 3366 / 3360 / 3354, f16 3065 / 3084 / 3085 against 3041 / 3028 / 3029;
 * group norm forward, 32 groups of 16 x 320 x 128 x 128 f16 3129 / 3126
 * / 3123 against 3070 / 3045 / 3074, f32 3221 / 3210 / 3221 against 3166
 * / 3157 / 3177, of 1 x 320 x 128 x 128 f16 1506 / 1498 / 1502 against
 * 1476 / 1491 / 1477. */
template <int N, class C> __device__ void udnn_gpu_block_sums_to0(C (&v)[N], C *red)
{
    const int lane = threadIdx.x % udnnGpuWarpSize, warp = threadIdx.x / udnnGpuWarpSize;
    const int warps = (blockDim.x + udnnGpuWarpSize - 1) / udnnGpuWarpSize;
#pragma unroll
    for (int k = 0; k < N; k++) v[k] = udnn_gpu_warp_sum(v[k]);
    __syncthreads(); /* red may still be read by a previous call */
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < N; k++) red[k * warps + warp] = v[k];
    __syncthreads();
    if (threadIdx.x == 0)
#pragma unroll
        for (int k = 0; k < N; k++) {
            C r = C(0);
            for (int w = 0; w < warps; w++) r += red[k * warps + w];
            v[k] = r;
        }
}

/* Shared-memory slots udnn_gpu_block_sum needs for a block of UDNN_GPU_BLOCK
 * threads on any warp size (>= 16). */
#define UDNN_GPU_BLOCK_SUM_SLOTS (UDNN_GPU_BLOCK / 16)

/* A block whose threads are a multiple of this is whole warps on any
 * device (warps of 32 threads on NVIDIA's, wavefronts of up to 64 on
 * AMD's), as the warp reductions need. */
#define UDNN_GPU_WHOLE_WARPS 64

/* A block's threads for n items, one a thread: n in whole warps
 * (UDNN_GPU_WHOLE_WARPS), `most` at the most. */
static inline unsigned udnn_gpu_whole_warps(int64_t n, unsigned most)
{
    const int64_t t = (n + UDNN_GPU_WHOLE_WARPS - 1) / UDNN_GPU_WHOLE_WARPS * UDNN_GPU_WHOLE_WARPS;
    return t < (int64_t)most ? (unsigned)t : most;
}

/* ---- launching ------------------------------------------------------------------- */

#define UDNN_GPU_GRID_STRIDE_LOOP(i, n)                                                      \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                 \
         i += (int64_t)gridDim.x * blockDim.x)

/* Blocks of UDNN_GPU_BLOCK threads for n items, capped for grid-stride
 * loops. */
static inline unsigned udnn_gpu_grid(const udnn_gpu_context *c, int64_t n)
{
    int64_t blocks = (n + UDNN_GPU_BLOCK - 1) / UDNN_GPU_BLOCK;
    if (blocks > c->max_blocks) blocks = c->max_blocks;
    return blocks < 1 ? 1u : (unsigned)blocks;
}

/* Answers the runtime gives once per process, call site and device: a
 * kernel's attributes are set on each device apart (a leave for more
 * shared memory given on one device is not given on another), and one
 * process may drive devices of different kinds. Kept for the first
 * UDNN_GPU_CACHE_DEVICES devices; further devices ask at every call. A
 * static one is all zero: not asked yet. */
#define UDNN_GPU_CACHE_DEVICES 16
typedef struct {
    int v[UDNN_GPU_CACHE_DEVICES];
} udnn_gpu_cache;

static inline int udnn_gpu_cache_get(const udnn_gpu_context *c, const udnn_gpu_cache *k)
{
    if (c->device < 0 || c->device >= UDNN_GPU_CACHE_DEVICES) return 0;
    return __atomic_load_n(&k->v[c->device], __ATOMIC_RELAXED);
}

static inline void udnn_gpu_cache_put(const udnn_gpu_context *c, udnn_gpu_cache *k, int v)
{
    if (c->device >= 0 && c->device < UDNN_GPU_CACHE_DEVICES)
        __atomic_store_n(&k->v[c->device], v, __ATOMIC_RELAXED);
}

/* Resident blocks of `block` threads (and smem dynamic shared bytes) of a
 * kernel per multiprocessor of the context's device, asked once per
 * process, call site and device (*cached); 1 when the runtime cannot
 * tell. */
template <class K>
static inline int64_t udnn_gpu_occupancy(const udnn_gpu_context *c, K kernel, int block,
                                         size_t smem, udnn_gpu_cache *cached)
{
    int n = udnn_gpu_cache_get(c, cached);
    if (n == 0) {
        if (udnnGpuOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, block, smem) !=
                udnnGpuSuccess ||
            n < 1)
            n = 1;
        udnn_gpu_cache_put(c, cached, n);
    }
    return n;
}

/* Whether a kernel may use `bytes` of dynamic shared memory on the
 * context's device (always for none), asked of the runtime once per
 * process, call site and device (*granted: 1 or -1 once asked); a refusal
 * leaves no error behind, the caller runs another kernel. Before the
 * occupancy, which counts them. */
template <class K>
static inline bool udnn_gpu_allow_shared(const udnn_gpu_context *c, K kernel, size_t bytes,
                                         udnn_gpu_cache *granted)
{
    if (bytes == 0) return true;
    int g = udnn_gpu_cache_get(c, granted);
    if (g == 0) {
        const udnnGpuError_t e = udnnGpuAllowSharedBytes((const void *)kernel, bytes);
        if (e != udnnGpuSuccess) udnnGpuGetLastError();
        g = e == udnnGpuSuccess ? 1 : -1;
        udnn_gpu_cache_put(c, granted, g);
    }
    return g > 0;
}

#if UDNN_GPU_CLUSTERS
/* How a cluster splits `units` units of `unit_bytes` each, held in its
 * blocks' shared memory: the smallest cluster (a power of two, `most`
 * blocks at the most) whose blocks' shares fit `share` bytes, *cs blocks
 * of *chunk units (the last fewer); false where `most` blocks do not. */
static inline bool udnn_gpu_cluster_split(int64_t units, size_t unit_bytes, size_t share,
                                          unsigned most, unsigned *cs, int64_t *chunk)
{
    unsigned n = 1;
    while (n < most && (size_t)((units + n - 1) / n) * unit_bytes > share) n *= 2;
    *cs = n;
    *chunk = (units + n - 1) / n;
    return (size_t)*chunk * unit_bytes <= share;
}

/* Whether a kernel runs in thread-block clusters on the context's device,
 * with room for one cluster of `cluster` blocks of `block` threads and
 * `shared` bytes of dynamic shared memory each (every smaller cluster then
 * has room too); asked once per process, call site and device. */
template <class K>
static inline bool udnn_gpu_cluster_fits(const udnn_gpu_context *c, K kernel, unsigned block,
                                         size_t shared, unsigned cluster, udnn_gpu_cache *fits)
{
    int ok = udnn_gpu_cache_get(c, fits);
    if (ok == 0) {
        udnn_gpu_cache granted = {};
        ok = udnnGpuKernelHasClusters((const void *)kernel) &&
                     udnn_gpu_allow_shared(c, kernel, shared, &granted) &&
                     udnnGpuMaxActiveClusters((const void *)kernel, block, shared, cluster) > 0
                 ? 1
                 : -1;
        udnn_gpu_cache_put(c, fits, ok);
    }
    return ok > 0;
}

/* The clusters to launch for `units` (channels, sets, rows) taken in turn
 * by a kernel that loops over them: as many as are resident at once,
 * asked at every launch since the answer depends on the block's threads
 * and bytes; never more, or the rest would start only when whole clusters
 * end. Ask after udnn_gpu_cluster_fits, which allows the kernel its
 * shared memory. */
template <class K>
static inline int64_t udnn_gpu_resident_clusters(K kernel, int64_t units, unsigned threads,
                                                 size_t shared, unsigned cluster)
{
    const int most = udnnGpuMaxActiveClusters((const void *)kernel, threads, shared, cluster);
    return most >= 1 && units > most ? most : units;
}

/* The first step of a kernel launched as a follower (udnn_gpu_cluster_launch,
 * udnn_gpu_follower_launch), before any global memory: the stream's next
 * kernel may be scheduled once every block of this one has been, and
 * this one waits for the previous kernel's end. H200, bursts, three
 * passes (copy f32 4124 / 4136 / 4120 GB/s, f16 4017 / 4026 / 4001),
 * followers against plain launches: layer norm backward f16 65536 x 1024
 * 2824 / 2825 / 2822 against 2794 / 2777 / 2781, 262144 x 256 3280 /
 * 3278 / 3297 against 3231 / 3250 / 3248, 16384 x 4096 2575 / 2587 /
 * 2587 against 2532 / 2512 / 2525, RMS 131072 x 512 2962 / 2980 / 2956
 * against 2937 / 2939 / 2937; group norm backward 8 groups of 4 x 256 x
 * 112 x 112 f16 1607 / 1617 / 1618 against 1550 / 1554 / 1556, forward 32
 * groups of 16 x 320 x 128 x 128 f16 3115 / 3129 / 3097 against 3082 /
 * 3083 / 3075 (of 1 x 320, one wave, 1485 / 1458 / 1467 against 1484 /
 * 1491 / 1493); softmax INSTANCE f16 forward 2120 / 2131 / 2123 against
 * 2110 / 2111 / 2114, backward 3226 / 3194 / 3207 against 3162 / 3189 /
 * 2993. bn_cluster is not one (bn_cluster.cu says why). */
__device__ __forceinline__ void udnn_gpu_follow(void)
{
    udnnGpuLetFollowerStart();
    udnnGpuWaitPrevious();
}

/* A launch's status: a failed launch is EXECUTION_FAILED with the
 * runtime's message after `what`. */
static inline udnnStatus_t udnn_gpu_launch_status(udnnGpuError_t e, const char *what)
{
    return e == udnnGpuSuccess ? UDNN_STATUS_SUCCESS
                               : udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, what);
}

/* udnnGpuLaunch in clusters on the context's stream, a follower where
 * `follow` and the device takes them: the kernel then starts with
 * udnn_gpu_follow. */
template <class... P, class... A>
static inline udnnStatus_t udnn_gpu_cluster_launch(const udnn_gpu_context *c, const char *what,
                                                   void (*kernel)(P...), unsigned grid,
                                                   unsigned block, size_t shared,
                                                   unsigned cluster, bool follow, A... args)
{
    return udnn_gpu_launch_status(udnnGpuLaunch(kernel, dim3(grid), dim3(block), shared,
                                                c->stream, cluster, follow && c->follows != 0,
                                                args...),
                                  what);
}

/* udnnGpuLaunch on the context's stream, a follower where the device
 * takes them: the kernel starts with udnn_gpu_follow. */
template <class... P, class... A>
static inline udnnStatus_t udnn_gpu_follower_launch(const udnn_gpu_context *c, const char *what,
                                                    void (*kernel)(P...), dim3 grid, dim3 block,
                                                    size_t shared, A... args)
{
    return udnn_gpu_launch_status(
        udnnGpuLaunch(kernel, grid, block, shared, c->stream, 0, c->follows != 0, args...), what);
}

/* A cluster block's share of n 16-byte loads from load p0 on, held in
 * its shared memory (bn_cluster, nm_fwd_cluster): thread t copies loads
 * p0 + t + j B (src(q): where load q is) into held[t + j B] by
 * asynchronous copies in groups of G, and takes each, take(held[...]), in
 * its order, as its group lands. Each thread reads back only its own
 * copies: no barrier. */
template <int G, class V, class Src, class Take>
__device__ __forceinline__ void udnn_gpu_hold_share(V *held, int n, int64_t p0, Src src, Take take)
{
    const int t = threadIdx.x, B = blockDim.x;
    const int nt = t < n ? (n - t + B - 1) / B : 0, groups = (nt + G - 1) / G;
    for (int q = 0; q < groups; q++) {
#pragma unroll
        for (int j = q * G; j < q * G + G; j++)
            if (j < nt) udnnGpuCopyAsync16(held + t + j * B, src(p0 + t + j * B));
        udnnGpuCopyAsyncCommit();
    }
    for (int q = 0; q < groups; q++) {
        udnnGpuCopyAsyncWaitAtMost(groups - 1 - q);
#pragma unroll
        for (int j = q * G; j < q * G + G; j++)
            if (j < nt) take(held[t + j * B]);
    }
}

/* Two sums over a cluster: each block's (s, in every thread, summed over
 * the block through red, udnn_gpu_block_sums_to0's 2 blockDim.x / 16
 * slots) into its part[2], the cluster's barrier, then the blocks' parts
 * in rank order into s in thread 0 of every block. The caller arrives
 * again once its block is done with the others' parts, and waits before
 * it ends. */
__device__ __forceinline__ void udnn_gpu_cluster_sum2(double (&s)[2], double *red, double *part,
                                                      unsigned cs)
{
    udnn_gpu_block_sums_to0<2>(s, red);
    if (threadIdx.x == 0) part[0] = s[0], part[1] = s[1];
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (threadIdx.x == 0) {
        double q[2] = {0.0, 0.0};
        for (unsigned r = 0; r < cs; r++) {
            const double *pr = udnnGpuClusterMap(part, r);
            q[0] += pr[0];
            q[1] += pr[1];
        }
        s[0] = q[0];
        s[1] = q[1];
    }
}
#endif

/* alpha * v + beta * old, for an output that blends (beta != 0): alpha *
 * v is exact inside the fma and beta * old's rounding error is added
 * back (exact by fma, where finite), so terms that nearly cancel leave
 * the result its own precision, as the reference's double does (a
 * 1-element FLOAT blend missed 1e-5 by the two products' roundings). */
template <class C> __device__ __forceinline__ C udnn_gpu_blend(C v, C alpha, C beta, C old)
{
    const C p = beta * old, e = fma(beta, old, -p);
    return fma(alpha, v, p) + (isfinite(e) ? e : C(0));
}

/* udnn_gpu_blend where beta may be 0; old is then not used (it may be the
 * NaN an unwritten output holds). */
template <class C> __device__ __forceinline__ C udnn_gpu_scale_blend(C v, C alpha, C beta, C old)
{
    return beta != C(0) ? udnn_gpu_blend(v, alpha, beta, old) : alpha * v;
}

/* A run-time flag made a compile-time one before a loop rather than
 * tested in it: where the compiler turns a per-element choice into
 * predicated instructions, an element pays for both sides.
 * udnn_gpu_choose(flag, f) calls f with std::true_type where flag holds,
 * else std::false_type. */
template <class F> __device__ __forceinline__ void udnn_gpu_choose(bool flag, F &&f)
{
    if (flag) f(std::true_type{});
    else f(std::false_type{});
}

/* udnn_gpu_scale_blend with the choice made before a loop rather than
 * per element (H100, batch norm's one-read training, f16 NHWC: 14
 * instructions an element, 8 of them the blend, unused).
 * udnn_gpu_blending(beta, f) calls f with std::true_type where beta != 0;
 * f's loop calls udnn_gpu_blend_if<decltype(blending)::value>. */
template <class C, class F> __device__ __forceinline__ void udnn_gpu_blending(C beta, F &&f)
{
    udnn_gpu_choose(beta != C(0), f);
}

template <bool BLEND, class C>
__device__ __forceinline__ C udnn_gpu_blend_if(C v, C alpha, C beta, C old)
{
    if constexpr (BLEND) return udnn_gpu_blend(v, alpha, beta, old);
    else return alpha * v;
}

/* *p = alpha * v + beta * *p, *p read only where beta != 0. */
template <class T>
__device__ __forceinline__ void udnn_gpu_blend_store(T *p, typename io<T>::C v,
                                                     typename io<T>::C alpha,
                                                     typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    const C old = beta != C(0) ? (C)io<T>::ld(*p) : C(0);
    *p = io<T>::st(udnn_gpu_scale_blend(v, alpha, beta, old));
}

/* Spins until *count, which other blocks of the running launch raise,
 * reaches n. The caller fences around it as its data needs. */
__device__ __forceinline__ void udnn_gpu_spin_until(const uint32_t *count, uint32_t n)
{
    while (*(const volatile uint32_t *)count < n) {
    }
}

/* A two-phase flow (bn_flow.cu, norm.cu's nm_set_flow): n reduce items
 * and n apply items, taken by a persistent grid in ticket order (an atomic
 * counter, zero at the launch). The first `lag` tickets (lag <= n) are
 * reduce items 0..lag-1, then pairs (reduce lag + i, apply i), then the
 * last apply items, so that an apply item comes about `lag` tickets after
 * the reduce item of the same index. An item may wait only for items of
 * lower tickets, which running blocks hold, and those only for lower ones
 * still: the lowest unfinished ticket always progresses, so the grid needs
 * no co-residency (nor a cooperative launch). Calls item(reduce, i) for
 * each of the block's tickets, every thread of the block together, with
 * barriers around it; *held is the block's shared ticket. */
template <class Item>
__device__ __forceinline__ void udnn_gpu_flow(uint32_t *ticket, uint32_t n, uint32_t lag,
                                              uint32_t *held, Item &&item)
{
    const uint32_t total = 2 * n, pairs = n - lag;
    uint32_t next = 0;
    if (threadIdx.x == 0) next = atomicAdd(ticket, 1u);
    for (;;) {
        if (threadIdx.x == 0) {
            /* the next ticket is fetched while this one's item runs */
            *held = next;
            if (next < total) next = atomicAdd(ticket, 1u);
        }
        __syncthreads();
        const uint32_t t = *held;
        if (t >= total) return;
        bool reduce = true;
        uint32_t i = t;
        if (t >= lag) {
            const uint32_t u = t - lag;
            reduce = u < 2 * pairs && u % 2 == 0;
            i = u >= 2 * pairs ? u - pairs : reduce ? lag + u / 2 : u / 2;
        }
        item(reduce, i);
        __syncthreads();
    }
}

/* bytes rounded up to 256, the alignment of regions carved from scratch. */
static inline size_t udnn_gpu_align256(size_t bytes)
{
    return (bytes + 255) & ~(size_t)255;
}

/* The status of the last launch, with the runtime's message on failure. */
static inline udnnStatus_t udnn_gpu_launched(void)
{
    return udnn_gpu_launch_status(udnnGpuGetLastError(), "launching a kernel");
}

/* Binds ctx's device and declares `c` (the context) and `p` (the problem as
 * PTYPE) in a solver's run function; returns on failure. */
#define UDNN_GPU_RUN_PROLOGUE(PTYPE)                                                         \
    (void)ws;                                                                              \
    (void)ws_bytes;                                                                        \
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;                                         \
    const PTYPE *p = (const PTYPE *)problem;                                               \
    do {                                                                                   \
        udnnStatus_t st_ = udnn_gpu_bind(c);                                               \
        if (st_ != UDNN_STATUS_SUCCESS) return st_;                                        \
    } while (0)

/* ---- element-wise maps ------------------------------------------------------------ */

/* NIN input pointers of one storage type, passed by value to a kernel. */
template <class T, int NIN> struct udnn_gpu_inputs {
    const T *p[NIN > 0 ? NIN : 1];
};

/* An unsigned type of B bytes (1, 2, 4, 8 or 16), for moving raw bytes
 * as one access. */
template <int B> struct udnn_gpu_word;
template <> struct udnn_gpu_word<1> {
    typedef uint8_t t;
};
template <> struct udnn_gpu_word<2> {
    typedef uint16_t t;
};
template <> struct udnn_gpu_word<4> {
    typedef uint32_t t;
};
template <> struct udnn_gpu_word<8> {
    typedef uint64_t t;
};
template <> struct udnn_gpu_word<16> {
    typedef uint4 t;
};

/* N adjacent elements moved as one access, aligned to their size. */
template <class T, int N> struct alignas(N * sizeof(T)) udnn_gpu_pack {
    T v[N];
};

/* The pack at p. LAST: the data's last read; a 16-byte pack then loads
 * evict first (udnnGpuLoadLast), so that L2 keeps what a kernel rereads. */
template <bool LAST, class T, int N>
__device__ __forceinline__ udnn_gpu_pack<T, N> udnn_gpu_load_pack(const T *p)
{
    if constexpr (LAST && sizeof(udnn_gpu_pack<T, N>) == 16) {
        const uint4 u = udnnGpuLoadLast((const uint4 *)p);
        udnn_gpu_pack<T, N> r;
        memcpy(&r, &u, 16);
        return r;
    } else {
        return *(const udnn_gpu_pack<T, N> *)p;
    }
}

/* Stores a 16-byte pack at p in one access. A pack whose elements were
 * assigned one by one is otherwise stored as the compiler splits it (a
 * pack of 8 halves: 6 two-byte stores and a four-byte one). Measure it per
 * kernel: group norm's gained 4 to 19%, pooling's f32 forward lost 6%
 * (docs/PERF.md, thirty-seventh session). */
template <class T, int N>
__device__ __forceinline__ void udnn_gpu_store_vec(T *p, const udnn_gpu_pack<T, N> &v)
{
    static_assert(sizeof(udnn_gpu_pack<T, N>) == 16, "a 16-byte pack");
    uint4 u;
    memcpy(&u, &v, 16);
    udnnGpuStore16((uint4 *)p, u);
}

/* Stores v at p. STREAM: output not read again soon; a 16-byte pack then
 * stores evict first (udnnGpuStoreStream). */
template <bool STREAM, class T, int N>
__device__ __forceinline__ void udnn_gpu_store_pack(T *p, const udnn_gpu_pack<T, N> &v)
{
    if constexpr (STREAM && sizeof(udnn_gpu_pack<T, N>) == 16) {
        uint4 u;
        memcpy(&u, &v, 16);
        udnnGpuStoreStream((uint4 *)p, u);
    } else {
        *(udnn_gpu_pack<T, N> *)p = v;
    }
}

/* alpha * v[j] + beta * p[j] for the N elements at p, as one pack; p is
 * read (in one access) only where beta != 0. */
template <class T, int N>
__device__ __forceinline__ udnn_gpu_pack<T, N>
udnn_gpu_blend_pack(const T *p, const typename io<T>::C *v, typename io<T>::C alpha,
                    typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    udnn_gpu_pack<T, N> u;
    if (beta != C(0)) {
        u = *(const udnn_gpu_pack<T, N> *)p;
#pragma unroll
        for (int j = 0; j < N; j++)
            u.v[j] = io<T>::st(udnn_gpu_blend(v[j], alpha, beta, (C)io<T>::ld(u.v[j])));
    } else {
#pragma unroll
        for (int j = 0; j < N; j++) u.v[j] = io<T>::st(alpha * v[j]);
    }
    return u;
}

/* p[j] = alpha * v[j] + beta * p[j] for the N elements at p, in one
 * access each way; p read only where beta != 0. */
template <class T, int N>
__device__ __forceinline__ void udnn_gpu_blend_store_pack(T *p, const typename io<T>::C *v,
                                                          typename io<T>::C alpha,
                                                          typename io<T>::C beta)
{
    *(udnn_gpu_pack<T, N> *)p = udnn_gpu_blend_pack<T, N>(p, v, alpha, beta);
}

/* The paired type of a 16-bit type (udnnGpuPairMax and the other paired
 * operations take it), and -inf in both lanes, as bits. */
template <class T> struct udnn_gpu_pair;
template <> struct udnn_gpu_pair<udnnGpuHalf> {
    typedef udnnGpuHalf2 P;
    static const uint32_t NEG_INF = 0xFC00FC00u;
};
template <> struct udnn_gpu_pair<udnnGpuBf16> {
    typedef udnnGpuBf162 P;
    static const uint32_t NEG_INF = 0xFF80FF80u;
};

/* A 32-bit word's bits as a pair P. */
template <class P> __device__ __forceinline__ P udnn_gpu_pair_of(uint32_t u)
{
    P p;
    memcpy(&p, &u, sizeof p);
    return p;
}

/* 16 bytes of T */
template <class T> using udnn_gpu_vec = udnn_gpu_pack<T, 16 / sizeof(T)>;

/* Element k of a pack as its compute value. A BFLOAT16 is the high half of
 * a float, so a pair of them widens by a shift and a mask of their 32-bit
 * word: widened one 16-bit value at a time, each word is split into two
 * registers where it is loaded, so that packs held raw in registers cost as
 * many registers as floats would, and the kernels holding them spill. */
template <class T, int N>
__device__ __forceinline__ typename io<T>::C udnn_gpu_pack_ld(const udnn_gpu_pack<T, N> &w, int k)
{
    return io<T>::ld(w.v[k]);
}
template <int N>
__device__ __forceinline__ float udnn_gpu_pack_ld(const udnn_gpu_pack<udnnGpuBf16, N> &w, int k)
{
    if constexpr (N == 1) {
        return io<udnnGpuBf16>::ld(w.v[0]);
    } else {
        unsigned word;
        memcpy(&word, &w.v[k & ~1], sizeof word);
        return udnnGpuBitsToFloat(k & 1 ? word & 0xffff0000u : word << 16);
    }
}

/* out[i] = f(in, old) for i < n where every tensor is dense in the same
 * layout (udnn_gpu_same_dense), so i is a memory offset shared by all. f is
 * `C operator()(const C (&in)[NIN or 1], C old) const`; old is out[i] when
 * read_out, else 0 (out is never read then). Moves 16 bytes per access
 * when `vec` (every pointer 16-byte aligned). */
template <class T, int NIN, class F>
__global__ void udnn_gpu_dense_map(int64_t n, udnn_gpu_inputs<T, NIN> in, T *out, F f,
                                   bool read_out, bool vec)
{
    typedef typename io<T>::C C;
    const int V = 16 / sizeof(T);
    const int64_t nvec = vec ? n / V : 0;
    UDNN_GPU_GRID_STRIDE_LOOP(j, nvec)
    {
        udnn_gpu_vec<T> a[NIN > 0 ? NIN : 1], o;
        for (int t = 0; t < NIN; t++) a[t] = ((const udnn_gpu_vec<T> *)in.p[t])[j];
        if (read_out) o = ((const udnn_gpu_vec<T> *)out)[j];
        for (int k = 0; k < V; k++) {
            C x[NIN > 0 ? NIN : 1];
            for (int t = 0; t < NIN; t++) x[t] = io<T>::ld(a[t].v[k]);
            o.v[k] = io<T>::st(f(x, read_out ? io<T>::ld(o.v[k]) : C(0)));
        }
        ((udnn_gpu_vec<T> *)out)[j] = o;
    }
    UDNN_GPU_GRID_STRIDE_LOOP(k, n - nvec * V)
    {
        const int64_t i = nvec * V + k;
        C x[NIN > 0 ? NIN : 1];
        for (int t = 0; t < NIN; t++) x[t] = io<T>::ld(in.p[t][i]);
        out[i] = io<T>::st(f(x, read_out ? io<T>::ld(out[i]) : C(0)));
    }
}

/* The same over any strides: shape tensor 0 is out, 1..NIN the inputs
 * (broadcast inputs have stride 0 where their dim is 1). */
template <class T, int NIN, class F>
__global__ void udnn_gpu_strided_map(udnn_gpu_shape s, udnn_gpu_inputs<T, NIN> in, T *out, F f,
                                     bool read_out)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(i, s.count)
    {
        int64_t off[NIN + 1];
        udnn_gpu_offsets<NIN + 1>(s, i, off);
        C x[NIN > 0 ? NIN : 1];
        for (int t = 0; t < NIN; t++) x[t] = io<T>::ld(in.p[t][off[t + 1]]);
        out[off[0]] = io<T>::st(f(x, read_out ? io<T>::ld(out[off[0]]) : C(0)));
    }
}

static inline int udnn_gpu_aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* Launches out = f(in..., old) over tensors ts[0] (out) and ts[1..NIN]
 * (inputs, of out's dims or broadcast) on c's stream: the dense map when
 * every tensor shares one dense layout, else the strided one. */
template <class T, int NIN, class F>
static udnnStatus_t udnn_gpu_map(const udnn_gpu_context *c, const udnn_tensor *const *ts,
                                 udnn_gpu_inputs<T, NIN> in, T *out, F f, bool read_out)
{
    const int64_t n = udnn_gpu_count(ts[0]);
    if (n == 0) return UDNN_STATUS_SUCCESS;
    if (udnn_gpu_same_dense(ts, NIN + 1)) {
        bool vec = udnn_gpu_aligned16(out);
        for (int t = 0; t < NIN; t++) vec = vec && udnn_gpu_aligned16(in.p[t]);
        const int64_t items = vec ? n / (int64_t)(16 / sizeof(T)) + 1 : n;
        udnn_gpu_dense_map<T, NIN, F>
            <<<udnn_gpu_grid(c, items), UDNN_GPU_BLOCK, 0, c->stream>>>(n, in, out, f, read_out,
                                                                        vec);
    } else {
        udnn_gpu_shape s = udnn_gpu_make_shape(ts, NIN + 1);
        udnn_gpu_strided_map<T, NIN, F>
            <<<udnn_gpu_grid(c, n), UDNN_GPU_BLOCK, 0, c->stream>>>(s, in, out, f, read_out);
    }
    return udnn_gpu_launched();
}

/* Defines solver run function NAME: binds the device and runs FN<T>(c, p)
 * (returning udnnStatus_t) for the storage type T of p->FIELD, p being the
 * problem as PTYPE. */
#define UDNN_GPU_TYPED_RUN(NAME, PTYPE, FIELD, FN)                                          \
    static udnnStatus_t NAME(void *ctx, const void *problem, void *ws, size_t ws_bytes)     \
    {                                                                                      \
        UDNN_GPU_RUN_PROLOGUE(PTYPE);                                                      \
        udnnStatus_t st = UDNN_STATUS_SUCCESS;                                             \
        UDNN_GPU_DISPATCH(p->FIELD.dtype, st = FN<T>(c, p));                               \
        return st;                                                                         \
    }

#endif /* UDNN_CUDA_KERNELS_H */
