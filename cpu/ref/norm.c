/* norm.c - placeholder: the reference solvers of this family are being written. */
#include "cpu/cpu_solvers.h"
static udnnStatus_t not_yet(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_ref_norm_fwd = {"ref_norm_fwd", UDNN_OP_NORM_FWD, -1, 1, NULL, NULL, not_yet};
const udnn_solver udnn_cpu_ref_norm_bwd = {"ref_norm_bwd", UDNN_OP_NORM_BWD, -1, 1, NULL, NULL, not_yet};
const udnn_solver udnn_cpu_ref_groupnorm_fwd = {"ref_groupnorm_fwd", UDNN_OP_GROUPNORM_FWD, -1, 1, NULL, NULL, not_yet};
const udnn_solver udnn_cpu_ref_groupnorm_bwd = {"ref_groupnorm_bwd", UDNN_OP_GROUPNORM_BWD, -1, 1, NULL, NULL, not_yet};
