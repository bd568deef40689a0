/*
 * bench_driver.h - one problem, start to end: built from its options, then
 * on each backend its --backend names: checked against the oracle, its
 * solver named, timed, compared with the peer library, and reported.
 */
#ifndef UDNN_BENCH_DRIVER_H
#define UDNN_BENCH_DRIVER_H

#include "tools/bench_args.h"

typedef struct {
    int csv;
    int rows, failed;
    int ratios;
    double log_ratio_sum;
} bench_session;

/* Runs the problem of `a` (family and options); 0 when every row passed,
 * 1 when one failed. Rows go to stdout, counts into s. */
int bench_run_problem(bench_session *s, bench_args *a);

/* --probe: builds the problem and runs it once, silently; the exit status. */
int bench_probe_problem(bench_args *a);

/* 1 for the options that say how to run a problem rather than what it is
 * (--backend, --iters, --check, ...): given with --batch or --suite they
 * override each problem's own, so logged lines can run elsewhere. */
int bench_run_option(const char *key);

/* Destroys the handles the session created. */
void bench_session_end(bench_session *s);

#endif /* UDNN_BENCH_DRIVER_H */
