/*
 * bench_report.h - what udnn-bench prints: one line (or CSV row) per
 * problem and backend, and a summary with the geometric mean of the
 * peer ratios.
 */
#ifndef UDNN_BENCH_REPORT_H
#define UDNN_BENCH_REPORT_H

#include "tools/bench.h"
#include "tools/bench_check.h"
#include "tools/bench_run.h"

typedef struct {
    const char *family;
    const char *problem;
    const char *backend;
    const char *dtype;
    const char *layout;
    char solver[64];
    int algo;
    int timed;
    bench_times times;
    double rate;
    const char *rate_unit;
    int checked;
    bench_check_result check;
    int have_peer;
    char peer[16];
    double peer_ms, ratio; /* ratio = peer time / udnn time: > 1, udnn is faster */
    char error[BENCH_ERR]; /* the run failed: why */
} bench_row;

/* The CSV header, once, before the first row. */
void bench_report_begin(int csv);
void bench_report_row(const bench_row *r, int csv);
/* Counts and, when any ratio was measured, their geometric mean. */
void bench_report_summary(int csv, int rows, int failed, int ratios, double log_ratio_sum);

#endif /* UDNN_BENCH_REPORT_H */
