/* tensor_ops.cu - placeholder: no solvers yet. */
#include "cuda/kernels.h"

static const udnn_solver *const tensor_ops_list[1] = {NULL};
UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_tensor_ops_solvers = {tensor_ops_list, 0};
