/*
 * bench_probe.h - the name of the solver a backend picks for a problem.
 */
#ifndef UDNN_BENCH_PROBE_H
#define UDNN_BENCH_PROBE_H

#include <stddef.h>

#include "tools/bench_args.h"

/* Runs the problem of `a` once on `backend` in a child udnn-bench under
 * UDNN_LOG=dispatch and writes the solver it ran into out ("?" when the
 * log names none); 0, or -1 when the child failed. */
int bench_probe_solver(const bench_args *a, const char *backend, char *out, size_t n);

#endif /* UDNN_BENCH_PROBE_H */
