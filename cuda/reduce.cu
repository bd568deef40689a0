/* reduce.cu - placeholder: no solvers yet. */
#include "cuda/kernels.h"

static const udnn_solver *const reduce_list[1] = {NULL};
UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_reduce_solvers = {reduce_list, 0};
