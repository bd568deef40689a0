/* vendor.h - the few GPU runtime names the backend sources use, mapped to
 * CUDA here. hip/ maps the same names to HIP so that it can build these
 * sources unchanged. Kernels never assume a warp of 32: they use
 * udnnGpuWarpSize (below) where it matters. */
#ifndef UDNN_CUDA_VENDOR_H
#define UDNN_CUDA_VENDOR_H

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define UDNN_GPU_BACKEND_NAME "cuda"
#define UDNN_GPU_BACKEND_KIND UDNN_BACKEND_CUDA

typedef cudaError_t udnnGpuError_t;
typedef cudaStream_t udnnGpuStream_t;
#define udnnGpuSuccess cudaSuccess
#define udnnGpuErrorMemoryAllocation cudaErrorMemoryAllocation
#define udnnGpuGetErrorString cudaGetErrorString
#define udnnGpuGetLastError cudaGetLastError
#define udnnGpuGetDeviceCount cudaGetDeviceCount
#define udnnGpuSetDevice cudaSetDevice
#define udnnGpuGetDeviceProperties cudaGetDeviceProperties
typedef struct cudaDeviceProp udnnGpuDeviceProp;
#define udnnGpuMalloc cudaMalloc
#define udnnGpuFree cudaFree
#define udnnGpuMemcpyAsync cudaMemcpyAsync
#define udnnGpuMemsetAsync cudaMemsetAsync
#define udnnGpuStreamSynchronize cudaStreamSynchronize
typedef enum cudaMemcpyKind udnnGpuMemcpyKind;
#define udnnGpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define udnnGpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define udnnGpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define udnnGpuOccupancyMaxActiveBlocksPerMultiprocessor cudaOccupancyMaxActiveBlocksPerMultiprocessor
/* a launch whose blocks are all resident at once (they may wait for each
 * other); (kernel, grid, block, args, shared bytes, stream) */
#define udnnGpuLaunchCooperativeKernel cudaLaunchCooperativeKernel
/* a kernel's leave to use `bytes` of dynamic shared memory (above the
 * default 48 KiB), with the multiprocessor's memory split in favour of
 * shared memory */
static inline cudaError_t udnnGpuAllowSharedBytes(const void *kernel, size_t bytes)
{
    cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
    if (e == cudaSuccess)
        e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                 cudaSharedmemCarveoutMaxShared);
    return e;
}

/* 16-bit storage types and their float conversions */
typedef __half udnnGpuHalf;
typedef __nv_bfloat16 udnnGpuBf16;
#define udnnGpuHalfToFloat __half2float
#define udnnGpuFloatToHalf __float2half_rn
#define udnnGpuBf16ToFloat __bfloat162float
#define udnnGpuFloatToBf16 __float2bfloat16_rn
/* a 32-bit word's bits read as a float */
#define udnnGpuBitsToFloat __uint_as_float

/* Pairs of 16-bit values in one 32-bit register, and the paired
 * operations on them that find maxima and where they are: the maximum of
 * each lane (a NaN only where both are; _NAN: where either is), and
 * comparisons giving 0xFFFF in each lane where they hold (EQ ordered; NEU
 * unordered, true for a NaN). Overloaded for both pair types. */
typedef __half2 udnnGpuHalf2;
typedef __nv_bfloat162 udnnGpuBf162;
#define udnnGpuPairMax __hmax2
#define udnnGpuPairMaxNan __hmax2_nan
#define udnnGpuPairEqMask __heq2_mask
#define udnnGpuPairNeuMask __hneu2_mask

/* 16-byte accesses (uint4) that L2 keeps only until it needs the room
 * (evict first): a load of data read for the last time, a store of data
 * not read again soon. A kernel that rereads data from L2 marks the rest
 * with them so that its data stays. */
#define udnnGpuLoadLast(p) __ldcs(p)
#define udnnGpuStoreStream(p, v) __stcs((p), (v))
/* A 16-byte store (uint4) as one access, cached as any store. */
#define udnnGpuStore16(p, v) __stwb((p), (v))
/* A load from L2, past L1: of data that other blocks of the running
 * launch wrote before a fence and a count this block has seen. Unlike a
 * volatile load it is not ordered with the thread's other loads. */
#define udnnGpuLoadCoherent(p) __ldcg(p)
/* Asks L2 to fetch the line at p and keep it over evict-first lines: data
 * a block will load soon, fetched while it waits for other blocks. A hint
 * only (sm_80 and later; nothing before). */
__device__ __forceinline__ void udnnGpuPrefetchL2(const void *p)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(p));
#else
    (void)p;
#endif
}

/* 16 bytes from global to shared memory without passing through
 * registers (sm_80 and later; a plain copy before), and the wait for a
 * thread's own copies: shared memory that only its copying thread reads
 * needs no barrier. */
__device__ __forceinline__ void udnnGpuCopyAsync16(void *shared, const void *global)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(shared)),
                 "l"(global)
                 : "memory");
#else
    *(uint4 *)shared = *(const uint4 *)global;
#endif
}
__device__ __forceinline__ void udnnGpuCopyAsyncWait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}
/* 8 or 4 bytes (BYTES) alike, kept in L1 too, for rows whose alignment
 * allows no more. */
template <int BYTES>
__device__ __forceinline__ void udnnGpuCopyAsyncL1(void *shared, const void *global)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(shared)),
                 "l"(global), "n"(BYTES)
                 : "memory");
#else
    struct alignas(BYTES) unit {
        unsigned v[BYTES / 4];
    };
    *(unit *)shared = *(const unit *)global;
#endif
}
/* Pipelining: the copies a thread issued since its last commit become one
 * group; the wait lets at most the N newest of its groups stay in flight
 * (a ring of N + 1 stages keeps N copies in flight while it reads the
 * oldest); WaitAtMost takes a count known at run time, at most 7 in flight
 * (the instruction takes an immediate: waiting for more is still right). */
__device__ __forceinline__ void udnnGpuCopyAsyncCommit(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N> __device__ __forceinline__ void udnnGpuCopyAsyncWaitPending(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}
__device__ __forceinline__ void udnnGpuCopyAsyncWaitAtMost(int n)
{
    switch (n) {
    case 0: udnnGpuCopyAsyncWaitPending<0>(); break;
    case 1: udnnGpuCopyAsyncWaitPending<1>(); break;
    case 2: udnnGpuCopyAsyncWaitPending<2>(); break;
    case 3: udnnGpuCopyAsyncWaitPending<3>(); break;
    case 4: udnnGpuCopyAsyncWaitPending<4>(); break;
    case 5: udnnGpuCopyAsyncWaitPending<5>(); break;
    case 6: udnnGpuCopyAsyncWaitPending<6>(); break;
    default: udnnGpuCopyAsyncWaitPending<7>(); break;
    }
}
/* As udnnGpuCopyAsyncL1 where ok; where not, BYTES zeros, and nothing is
 * read (global need not point at memory then). */
template <int BYTES>
__device__ __forceinline__ void udnnGpuCopyAsyncOrZero(void *shared, const void *global, bool ok)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(
                     (unsigned)__cvta_generic_to_shared(shared)),
                 "l"(global), "n"(BYTES), "r"(ok ? BYTES : 0)
                 : "memory");
#else
    struct alignas(BYTES) unit {
        unsigned v[BYTES / 4];
    };
    unit u{};
    if (ok) u = *(const unit *)global;
    *(unit *)shared = u;
#endif
}

/* The hardware's base-2 exponential and logarithm (2 ulp), subnormal
 * arguments and results flushed to 0, so without the instructions that
 * scale them around the approximation: for callers whose values stay in
 * float's normal range. */
__device__ __forceinline__ float udnnGpuExp2Ftz(float x)
{
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}
__device__ __forceinline__ float udnnGpuLog2Ftz(float x)
{
    float r;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

/* Thread-block clusters (sm_90 and later): blocks of a cluster run at
 * once on nearby multiprocessors and read each other's shared memory.
 * UDNN_GPU_CLUSTERS says the runtime has them; a kernel that uses them
 * must also have been compiled for sm_90 or later (udnnGpuKernelHasClusters),
 * since the device functions below do nothing before. */
#define UDNN_GPU_CLUSTERS 1
/* this block's rank in its cluster */
__device__ __forceinline__ unsigned udnnGpuClusterRank(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return __clusterRelativeBlockRank();
#else
    return 0;
#endif
}
/* p, a shared-memory address of this block, in block `rank` of the cluster */
template <class T> __device__ __forceinline__ T *udnnGpuClusterMap(T *p, unsigned rank)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    return (T *)__cluster_map_shared_rank((const void *)p, rank);
#else
    (void)rank;
    return p;
#endif
}
/* The cluster's barrier in two halves, each thread of each block taking
 * both in turn: writes before the arrival are seen after the wait, and a
 * block's shared memory stays readable by the others until they wait. */
__device__ __forceinline__ void udnnGpuClusterArrive(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __cluster_barrier_arrive();
#endif
}
__device__ __forceinline__ void udnnGpuClusterWait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    __cluster_barrier_wait();
#endif
}
/* The virtual architecture a kernel's loaded code was compiled for: 90
 * for sm_90 code, 80 for code compiled on load from compute_80 PTX; 0
 * where the runtime cannot tell. */
static inline int udnnGpuKernelPtxVersion(const void *kernel)
{
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return fa.ptxVersion;
}
/* Whether a kernel's loaded code was compiled for clusters (PTX of sm_90
 * or later), and its leave to take clusters of up to 16 blocks (more than
 * the portable 8). */
static inline bool udnnGpuKernelHasClusters(const void *kernel)
{
    if (udnnGpuKernelPtxVersion(kernel) < 90) return false;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) !=
        cudaSuccess)
        cudaGetLastError(); /* the portable 8 only */
    return true;
}
/* Programmatic dependent launch (sm_90 and later). A kernel launched as
 * a follower (udnnGpuLaunch's `follow`) may
 * be scheduled while the stream's previous kernel still runs, once each
 * of that kernel's blocks has called udnnGpuLetFollowerStart or exited: its
 * launch and first blocks overlap the previous kernel's last ones. A
 * follower calls udnnGpuWaitPrevious before it touches global memory,
 * which returns once the previous kernel has finished and its writes are
 * visible; so a follower that follows a follower also waits for the one
 * before. Both do nothing in code compiled for an older architecture,
 * so a kernel launches as a follower only where its loaded code was
 * compiled for sm_90 or later (udnnGpuKernelPtxVersion).
 * UDNN_GPU_PDL 0 launches every kernel plainly, for comparison. */
#ifndef UDNN_GPU_PDL
#define UDNN_GPU_PDL 1
#endif
__device__ __forceinline__ void udnnGpuWaitPrevious(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && UDNN_GPU_PDL
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void udnnGpuLetFollowerStart(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && UDNN_GPU_PDL
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
/* The launch of grid blocks in clusters of `cluster` (grid a multiple of
 * it; 0: no clusters), a follower where `follow`, for the two calls
 * below. */
static inline cudaLaunchConfig_t udnnGpuLaunchConfig(cudaLaunchAttribute at[2], dim3 grid,
                                                     dim3 block, size_t shared,
                                                     cudaStream_t stream, unsigned cluster,
                                                     bool follow)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = shared;
    cfg.stream = stream;
    cfg.attrs = at;
    if (cluster > 0) {
        at[cfg.numAttrs].id = cudaLaunchAttributeClusterDimension;
        at[cfg.numAttrs].val.clusterDim.x = cluster;
        at[cfg.numAttrs].val.clusterDim.y = 1;
        at[cfg.numAttrs].val.clusterDim.z = 1;
        cfg.numAttrs++;
    }
    if (follow && UDNN_GPU_PDL) {
        at[cfg.numAttrs].id = cudaLaunchAttributeProgrammaticStreamSerialization;
        at[cfg.numAttrs].val.programmaticStreamSerializationAllowed = 1;
        cfg.numAttrs++;
    }
    return cfg;
}
/* How many clusters of `cluster` blocks can be resident at once (0 where
 * none). */
static inline int udnnGpuMaxActiveClusters(const void *kernel, unsigned block, size_t shared,
                                           unsigned cluster)
{
    cudaLaunchAttribute at[2];
    const cudaLaunchConfig_t cfg =
        udnnGpuLaunchConfig(at, dim3(cluster), dim3(block), shared, 0, cluster, false);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &cfg) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return n;
}
/* Launches kernel(args) in clusters of `cluster` blocks (grid a multiple
 * of it; 0: no clusters), a follower where `follow`. */
template <class... P, class... A>
static inline cudaError_t udnnGpuLaunch(void (*kernel)(P...), dim3 grid, dim3 block, size_t shared,
                                        cudaStream_t stream, unsigned cluster, bool follow,
                                        A... args)
{
    cudaLaunchAttribute at[2];
    const cudaLaunchConfig_t cfg =
        udnnGpuLaunchConfig(at, grid, block, shared, stream, cluster, follow);
    return cudaLaunchKernelEx(&cfg, kernel, args...);
}

/* a * b rounded on its own, never contracted into an fma with a following
 * add: for code that needs the rounded product's bits or its error */
__device__ __forceinline__ float udnnGpuMulRn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double udnnGpuMulRn(double a, double b) { return __dmul_rn(a, b); }

/* The warp's width as a compile-time constant: it is 32 on every CUDA
 * architecture. The runtime's warpSize reaches ptxas as a register, too late
 * for its divisions to become shifts or its loops to unroll: the 16-bit
 * layer norm rows backward paid a full integer division and a counted
 * butterfly loop for each team sum. H200, bursts, GB/s, against warpSize
 * (with nm_bwd_rows testing a row's bounds once a vector, not per
 * element): layer norm backward f16 65536 x 1024 2686 / 2698 against
 * 2347 / 2351, RMS f16 131072 x 512 2818 / 2809 against 2434 / 2435,
 * f32 65536 x 1024 3779 against 3686 / 3697; softmax INSTANCE f32
 * forward 2653 / 2706 / 2653 against 2535 / 2529 / 2587; other rows
 * level. hip/ maps it to the target's wavefront size, also known at
 * compile time. */
#define udnnGpuWarpSize 32
/* every lane of the warp takes part */
#define udnnGpuShflXor(v, m) __shfl_xor_sync(0xffffffffu, (v), (m))

#endif /* UDNN_CUDA_VENDOR_H */
