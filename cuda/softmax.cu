/* softmax.cu - placeholder: no solvers yet. */
#include "cuda/kernels.h"

static const udnn_solver *const softmax_list[1] = {NULL};
UDNN_GPU_HIDDEN const udnn_gpu_solver_table udnn_gpu_softmax_solvers = {softmax_list, 0};
