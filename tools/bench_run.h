/*
 * bench_run.h - a problem on one handle: its buffer sets in the handle's
 * memory, one checked run, and the timed runs (warm-up, then the median
 * and minimum over --iters, the buffer sets taken in turn so that caches
 * hold no previous run's data).
 */
#ifndef UDNN_BENCH_RUN_H
#define UDNN_BENCH_RUN_H

#include "tools/bench.h"

/* Allocates `sets` copies of every buffer on h, uploads the initial
 * content into each and lets the family prepare (for the oracle when
 * `oracle` is set); 0, or -1 with p->err. */
int bench_exec_open(bench_problem *p, bench_exec *e, udnnHandle_t h, int sets, int oracle);
void bench_exec_close(bench_problem *p, bench_exec *e);
/* Uploads the initial content of every buffer of one set. */
int bench_exec_upload(bench_problem *p, bench_exec *e, int set);
/* How many buffer sets to rotate: enough for 64 MiB, 2 to 16. */
int bench_auto_sets(const bench_problem *p);

typedef struct {
    int warmup, iters;
    int burst;     /* runs between two waits in a timed sample (1 or more) */
    double max_ms; /* stop timing after this much (at least one sample) */
} bench_timing;

typedef struct {
    double median_ms, min_ms;
    int runs;
} bench_times;

/* Times the problem; 0, or -1 with p->err when a run fails. */
int bench_time(bench_problem *p, bench_exec *e, const bench_timing *t, bench_times *out);

/* The timing loop itself, for udnn and for the peers alike: t->warmup runs
 * of run(ctx, set) and one sync(ctx), then up to t->iters samples (at
 * least one, until t->max_ms have been spent), each t->burst runs back to
 * back and one sync(ctx), timed together by dev's marks (bench_device.h)
 * or, where dev is NULL, the host's clock around the runs and the wait, a
 * run's time the sample's over t->burst; the runs take the `sets` buffer
 * sets in turn. run and sync return 0 or -1. Returns 0, 1
 * when a warm-up run failed, 2 when a timed run failed (or its clock),
 * -1 when out of memory. */
int bench_time_loop(int (*run)(void *ctx, int set), int (*sync)(void *ctx), void *ctx, int sets,
                    const bench_timing *t, bench_device *dev, bench_times *out);

/* Milliseconds of a monotonic clock. */
double bench_now_ms(void);
/* The median of n values (sorts them). */
double bench_median(double *v, int n);

#endif /* UDNN_BENCH_RUN_H */
