/* ref.h - helpers of the CPU reference kernels (cpu/ref, the oracle); the
 * element access they share with the GPU backends is backends/ref/ref.h. */
#ifndef UDNN_CPU_REF_H
#define UDNN_CPU_REF_H

#include "backends/ref/ref.h"

#define UDNN_CPU_INTERNAL __attribute__((visibility("hidden")))

/* Work (elements, or multiply-adds) below which a reference kernel runs
 * on one thread: starting a team costs more than it saves there, and far
 * more when other processes share the cores (the suites' thousands of
 * small problems, side by side under make -j, each waited on a whole team). */
#define REF_PAR_MIN (1 << 14)

#endif /* UDNN_CPU_REF_H */
