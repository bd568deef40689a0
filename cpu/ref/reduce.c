/* reduce.c - placeholder: the reference solvers of this family are being written. */
#include "cpu/cpu_solvers.h"
static udnnStatus_t not_yet(void *c, const void *p, void *w, size_t b) { (void)c; (void)p; (void)w; (void)b; return UDNN_STATUS_NOT_SUPPORTED; }
const udnn_solver udnn_cpu_ref_reduce = {"ref_reduce", UDNN_OP_REDUCE, -1, 1, NULL, NULL, not_yet};
