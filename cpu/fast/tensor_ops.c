/* tensor_ops.c - placeholder: the fast solvers of this file are being written. */
#include "cpu/cpu_solvers.h"
static int not_yet(const void *p, const char **why) { (void)p; *why = "not written yet"; return 0; }
static udnnStatus_t no_run(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_fast_set_tensor = {"fast_set_tensor", UDNN_OP_SET_TENSOR, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_scale_tensor = {"fast_scale_tensor", UDNN_OP_SCALE_TENSOR, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_add_tensor = {"fast_add_tensor", UDNN_OP_ADD_TENSOR, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_op_tensor = {"fast_op_tensor", UDNN_OP_OP_TENSOR, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_conv_bwd_bias = {"fast_conv_bwd_bias", UDNN_OP_CONV_BWD_BIAS, -1, 1, not_yet, NULL, no_run};
