/* batchnorm.c - placeholder: the reference solvers of this family are being written. */
#include "cpu/cpu_solvers.h"
static udnnStatus_t not_yet(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_ref_bn_fwd_train = {"ref_bn_fwd_train", UDNN_OP_BN_FWD_TRAIN, -1, 1, NULL, NULL, not_yet};
const udnn_solver udnn_cpu_ref_bn_fwd_infer = {"ref_bn_fwd_infer", UDNN_OP_BN_FWD_INFER, -1, 1, NULL, NULL, not_yet};
const udnn_solver udnn_cpu_ref_bn_bwd = {"ref_bn_bwd", UDNN_OP_BN_BWD, -1, 1, NULL, NULL, not_yet};
