/* gpu.h - what the GPU backend's sources share: its context, the error
 * helper and each kernel family's solver table (vendor-neutral; see
 * vendor.h). */
#ifndef UDNN_CUDA_GPU_H
#define UDNN_CUDA_GPU_H

#include <stddef.h>

#include "backends/backend.h"
#include "cuda/vendor.h"

#define UDNN_GPU_HIDDEN __attribute__((visibility("hidden")))

/* Device memory each context owns from its creation for the partial
 * results of multi-block reductions, so that no op allocates (and every op
 * can be captured in a graph). Ops of one handle run in its stream's order,
 * so they share it safely; a kernel that needs more falls back to a
 * single-pass path. */
#define UDNN_GPU_SCRATCH_BYTES ((size_t)16 << 20)

typedef struct {
    int device;
    udnnGpuStream_t stream; /* NULL: the legacy default stream */
    int max_blocks;         /* a grid-size cap for grid-stride kernels */
    int sm_count;           /* multiprocessors */
    int follows;            /* kernels may launch as followers (vendor.h): sm_90 code */
    size_t shared_per_block; /* the most shared memory a block may ask for */
    void *scratch;          /* UDNN_GPU_SCRATCH_BYTES of device memory */
    size_t scratch_bytes;
    char name[256];
} udnn_gpu_context;

/* The host services; set by udnn_backend_entry. */
extern UDNN_GPU_HIDDEN const udnn_host_api *udnn_gpu_host;

/* Records a GPU runtime error as the last error and returns `fail`. */
UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_fail(udnnGpuError_t e, udnnStatus_t fail, const char *what);

/* Binds the calling thread to the context's device. */
UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_bind(udnn_gpu_context *c);

/* Advances dropout states' call count by one, after the forward's kernels
 * in the stream (dropout.cu). */
UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_dropout_advance(const udnn_gpu_context *c, void *states);

/* One solver table per kernel family (one source file each), fastest
 * solver first; backend.cu concatenates them. */
typedef struct {
    const udnn_solver *const *solvers;
    size_t count;
} udnn_gpu_solver_table;

#define UDNN_GPU_SOLVER_TABLE(family, ...)                                                   \
    static const udnn_solver *const family##_list[] = {__VA_ARGS__};                       \
    UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_##family##_solvers = {             \
        family##_list, sizeof family##_list / sizeof *family##_list}

extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_eltwise_solvers;    /* eltwise.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_tensor_ops_solvers; /* tensor_ops.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_conv_solvers;       /* conv.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_pool_solvers;       /* pool.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_softmax_solvers;    /* softmax.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_lrn_solvers;        /* lrn.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_bn_solvers;         /* bn.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_norm_solvers;       /* norm.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_dropout_solvers;    /* dropout.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_reduce_solvers;     /* reduce.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_matmul_solvers;     /* matmul.cu */
extern UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_ref_bits_solvers;   /* ref_bits.cu */

#endif /* UDNN_CUDA_GPU_H */
