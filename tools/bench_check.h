/*
 * bench_check.h - the check: the same problem, from the same inputs, on a
 * CPU handle with every fast solver disabled (cpu/ref, the oracle), and
 * each output compared with DESIGN.md's tolerance for its type.
 */
#ifndef UDNN_BENCH_CHECK_H
#define UDNN_BENCH_CHECK_H

#include "tools/bench.h"

typedef struct {
    int pass;
    double err, tol;      /* the worst output's error and its tolerance */
    char what[16];        /* that output's role */
    char msg[BENCH_ERR];  /* why it failed, when it did not compare */
} bench_check_result;

/* Runs `f` with UDNN_DISABLE_SOLVERS set so that only cpu/ref solvers
 * answer (restoring the variable after). */
udnnStatus_t bench_with_oracle_env(udnnStatus_t (*f)(void *), void *arg);

/* Runs the problem once on e (buffer set 0) and on the oracle handle, and
 * compares. Leaves set 0 holding the initial content again. */
void bench_check(bench_problem *p, bench_exec *e, udnnHandle_t oracle, bench_check_result *r);

#endif /* UDNN_BENCH_CHECK_H */
