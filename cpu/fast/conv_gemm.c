/* conv_gemm.c - placeholder: the fast solvers of this file are being written. */
#include "cpu/cpu_solvers.h"
static int not_yet(const void *p, const char **why) { (void)p; *why = "not written yet"; return 0; }
static udnnStatus_t no_run(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_fast_conv_fwd = {"fast_conv_fwd", UDNN_OP_CONV_FWD, 2, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_conv_bwd_data = {"fast_conv_bwd_data", UDNN_OP_CONV_BWD_DATA, 1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_conv_bwd_filter = {"fast_conv_bwd_filter", UDNN_OP_CONV_BWD_FILTER, 1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_conv_bias_act = {"fast_conv_bias_act", UDNN_OP_CONV_BIAS_ACT, 2, 1, not_yet, NULL, no_run};
