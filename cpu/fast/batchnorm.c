/* batchnorm.c - placeholder: the fast solvers of this file are being written. */
#include "cpu/cpu_solvers.h"
static int not_yet(const void *p, const char **why) { (void)p; *why = "not written yet"; return 0; }
static udnnStatus_t no_run(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_fast_bn_fwd_train = {"fast_bn_fwd_train", UDNN_OP_BN_FWD_TRAIN, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_bn_fwd_infer = {"fast_bn_fwd_infer", UDNN_OP_BN_FWD_INFER, -1, 1, not_yet, NULL, no_run};
const udnn_solver udnn_cpu_fast_bn_bwd = {"fast_bn_bwd", UDNN_OP_BN_BWD, -1, 1, not_yet, NULL, no_run};
