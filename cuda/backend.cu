/* backend.cu - the CUDA backend's device part: contexts bound to a device,
 * device memory, copies and the handle's stream, plus its solver table.
 * Every entry point binds its device first; every runtime error becomes a
 * udnn status with the runtime's message. Nothing aborts or prints. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/gpu.h"

UDNN_GPU_HIDDEN const udnn_host_api *udnn_gpu_host;

UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_fail(udnnGpuError_t e, udnnStatus_t fail, const char *what)
{
    udnn_gpu_host->set_error(UDNN_GPU_BACKEND_NAME " backend: %s: %s", what,
                             udnnGpuGetErrorString(e));
    return fail;
}

UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_bind(udnn_gpu_context *c)
{
    udnnGpuError_t e = udnnGpuSetDevice(c->device);
    if (e != udnnGpuSuccess) {
        udnnGpuGetLastError(); /* clear a non-sticky error */
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "selecting the device");
    }
    return UDNN_STATUS_SUCCESS;
}

/* Fails with `st` unless e is success, clearing the runtime's last error. */
#define GPU_TRY(expr, st, what)                                                              \
    do {                                                                                   \
        udnnGpuError_t e_ = (expr);                                                        \
        if (e_ != udnnGpuSuccess) {                                                        \
            udnnGpuGetLastError();                                                         \
            return udnn_gpu_fail(e_, (st), (what));                                        \
        }                                                                                  \
    } while (0)

#define BIND(ctx)                                                                          \
    udnn_gpu_context *c = (udnn_gpu_context *)(ctx);                                       \
    do {                                                                                   \
        udnnStatus_t st_ = udnn_gpu_bind(c);                                               \
        if (st_ != UDNN_STATUS_SUCCESS) return st_;                                        \
    } while (0)

/* A kernel compiled as all the plugin's kernels are: the architecture its
 * loaded code was compiled for is theirs, and says whether their
 * udnn_gpu_follow waits on this device (vendor.h). */
static __global__ void udnn_gpu_probe(void) {}

static int gpu_device_count(void)
{
    int n = 0;
    if (udnnGpuGetDeviceCount(&n) != udnnGpuSuccess) {
        udnnGpuGetLastError();
        return 0;
    }
    return n < 0 ? 0 : n;
}

static udnnStatus_t gpu_context_create(int device, void **ctx)
{
    udnn_gpu_context *c = (udnn_gpu_context *)calloc(1, sizeof *c);
    if (c == NULL) {
        udnn_gpu_host->set_error(UDNN_GPU_BACKEND_NAME " backend: out of host memory");
        return UDNN_STATUS_ALLOC_FAILED;
    }
    c->device = device;
    udnnStatus_t st = udnn_gpu_bind(c);
    udnnGpuDeviceProp prop;
    udnnGpuError_t e = udnnGpuSuccess;
    if (st == UDNN_STATUS_SUCCESS) e = udnnGpuGetDeviceProperties(&prop, device);
    if (st == UDNN_STATUS_SUCCESS && e != udnnGpuSuccess) {
        udnnGpuGetLastError();
        st = udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "reading the device's properties");
    }
    if (st != UDNN_STATUS_SUCCESS) {
        free(c);
        return st;
    }
    snprintf(c->name, sizeof c->name, "%s", prop.name);
    c->sm_count = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    c->follows = prop.major >= 9 && udnnGpuKernelPtxVersion((const void *)udnn_gpu_probe) >= 90;
    /* enough blocks to fill every multiprocessor several times over */
    c->max_blocks = c->sm_count * 32;
    c->shared_per_block = prop.sharedMemPerBlockOptin > prop.sharedMemPerBlock
                              ? prop.sharedMemPerBlockOptin
                              : prop.sharedMemPerBlock;
    e = udnnGpuMalloc(&c->scratch, UDNN_GPU_SCRATCH_BYTES);
    if (e != udnnGpuSuccess) {
        udnnGpuGetLastError();
        free(c);
        return udnn_gpu_fail(e, UDNN_STATUS_ALLOC_FAILED, "allocating the context's scratch");
    }
    c->scratch_bytes = UDNN_GPU_SCRATCH_BYTES;
    *ctx = c;
    return UDNN_STATUS_SUCCESS;
}

static void gpu_context_destroy(void *ctx)
{
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    if (udnn_gpu_bind(c) == UDNN_STATUS_SUCCESS && udnnGpuFree(c->scratch) != udnnGpuSuccess)
        udnnGpuGetLastError();
    free(c);
}

static udnnStatus_t gpu_alloc(void *ctx, void **ptr, size_t bytes)
{
    BIND(ctx);
    GPU_TRY(udnnGpuMalloc(ptr, bytes), UDNN_STATUS_ALLOC_FAILED, "allocating device memory");
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t gpu_free(void *ctx, void *ptr)
{
    BIND(ctx);
    GPU_TRY(udnnGpuFree(ptr), UDNN_STATUS_EXECUTION_FAILED, "freeing device memory");
    return UDNN_STATUS_SUCCESS;
}

/* Returns when the copy is complete. */
static udnnStatus_t gpu_memcpy(void *ctx, void *dst, const void *src, size_t bytes,
                               udnnMemcpyKind_t kind)
{
    BIND(ctx);
    udnnGpuMemcpyKind k = kind == UDNN_MEMCPY_HOST_TO_DEVICE   ? udnnGpuMemcpyHostToDevice
                          : kind == UDNN_MEMCPY_DEVICE_TO_HOST ? udnnGpuMemcpyDeviceToHost
                                                               : udnnGpuMemcpyDeviceToDevice;
    GPU_TRY(udnnGpuMemcpyAsync(dst, src, bytes, k, c->stream), UDNN_STATUS_EXECUTION_FAILED,
            "copying");
    GPU_TRY(udnnGpuStreamSynchronize(c->stream), UDNN_STATUS_EXECUTION_FAILED,
            "waiting for a copy");
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t gpu_memset(void *ctx, void *ptr, int value, size_t bytes)
{
    BIND(ctx);
    GPU_TRY(udnnGpuMemsetAsync(ptr, value, bytes, c->stream), UDNN_STATUS_EXECUTION_FAILED,
            "setting memory");
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t gpu_set_stream(void *ctx, void *stream)
{
    BIND(ctx);
    c->stream = (udnnGpuStream_t)stream;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t gpu_get_stream(void *ctx, void **stream)
{
    udnn_gpu_context *c = (udnn_gpu_context *)ctx;
    *stream = (void *)c->stream;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t gpu_synchronize(void *ctx)
{
    BIND(ctx);
    GPU_TRY(udnnGpuStreamSynchronize(c->stream), UDNN_STATUS_EXECUTION_FAILED,
            "waiting for the stream");
    return UDNN_STATUS_SUCCESS;
}

static const char *gpu_device_name(void *ctx)
{
    return ((udnn_gpu_context *)ctx)->name;
}

/* every family's table, in the order dispatch tries them; the
 * reference-bits solvers last, where they serve only what no other takes
 * (unless UDNN_DETERMINISTIC=reference) */
static const udnn_gpu_solver_table *const gpu_families[] = {
    &udnn_gpu_conv_solvers,    &udnn_gpu_eltwise_solvers, &udnn_gpu_tensor_ops_solvers,
    &udnn_gpu_pool_solvers,    &udnn_gpu_softmax_solvers, &udnn_gpu_lrn_solvers,
    &udnn_gpu_bn_solvers,      &udnn_gpu_norm_solvers,    &udnn_gpu_dropout_solvers,
    &udnn_gpu_reduce_solvers,  &udnn_gpu_matmul_solvers,  &udnn_gpu_ref_bits_solvers,
};

#define GPU_MAX_SOLVERS 256
static const udnn_solver *gpu_solvers[GPU_MAX_SOLVERS];

static udnn_backend gpu_backend;

extern "C" __attribute__((visibility("default"))) const udnn_backend *
udnn_backend_entry(const udnn_host_api *host)
{
    udnn_gpu_host = host;
    udnn_backend *b = &gpu_backend;
    b->abi_version = UDNN_BACKEND_ABI_VERSION;
    b->struct_size = sizeof(udnn_backend);
    b->name = UDNN_GPU_BACKEND_NAME;
    b->kind = UDNN_GPU_BACKEND_KIND;
    b->device_count = gpu_device_count;
    b->context_create = gpu_context_create;
    b->context_destroy = gpu_context_destroy;
    b->alloc = gpu_alloc;
    b->free = gpu_free;
    b->memcpy = gpu_memcpy;
    b->memset = gpu_memset;
    b->set_stream = gpu_set_stream;
    b->get_stream = gpu_get_stream;
    b->synchronize = gpu_synchronize;
    b->device_name = gpu_device_name;
    size_t n = 0;
    for (size_t f = 0; f < sizeof gpu_families / sizeof *gpu_families; f++)
        for (size_t i = 0; i < gpu_families[f]->count && n < GPU_MAX_SOLVERS; i++)
            gpu_solvers[n++] = gpu_families[f]->solvers[i];
    b->solvers = gpu_solvers;
    b->solver_count = n;
    return b;
}
