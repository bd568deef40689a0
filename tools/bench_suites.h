/*
 * bench_suites.h - named lists of problems: resnet50 (every distinct
 * convolution of ResNet-50, batch from --n) and Baidu DeepBench's
 * convolution and GEMM tables (the CSV files of tools/suites).
 */
#ifndef UDNN_BENCH_SUITES_H
#define UDNN_BENCH_SUITES_H

#include <stddef.h>

#include "tools/bench_args.h"

/* Calls fn with each problem of the suite (a family and its options, the
 * suite's own fields set, global's read through inheritance by the
 * caller); stops when fn returns < 0. 0, or -1 with err set (unknown
 * suite, unreadable table). */
int bench_suite_each(const char *name, bench_args *global,
                     int (*fn)(void *ctx, bench_args *problem), void *ctx, char *err, size_t n);

/* "resnet50, deepbench-conv-train, ..." */
const char *bench_suite_list(void);

#endif /* UDNN_BENCH_SUITES_H */
