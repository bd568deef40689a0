/* gpu.h - what the GPU backend's sources share: its context, the error
 * helper and the solver records (vendor-neutral; see vendor.h). */
#ifndef UDNN_CUDA_GPU_H
#define UDNN_CUDA_GPU_H

#include "backends/backend.h"
#include "cuda/vendor.h"

#define UDNN_GPU_HIDDEN __attribute__((visibility("hidden")))

typedef struct {
    int device;
    udnnGpuStream_t stream; /* NULL: the legacy default stream */
    int max_blocks;         /* a grid-size cap for grid-stride kernels */
    char name[256];
} udnn_gpu_context;

/* The host services; set by udnn_backend_entry. */
extern UDNN_GPU_HIDDEN const udnn_host_api *udnn_gpu_host;

/* Records a CUDA error as the last error and returns `fail`. */
UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_fail(udnnGpuError_t e, udnnStatus_t fail, const char *what);

/* Binds the calling thread to the context's device. */
UDNN_GPU_HIDDEN udnnStatus_t udnn_gpu_bind(udnn_gpu_context *c);

extern UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_set_tensor;
extern UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_scale_tensor;
extern UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_act_fwd;
extern UDNN_GPU_HIDDEN const udnn_solver udnn_gpu_act_bwd;

#endif /* UDNN_CUDA_GPU_H */
