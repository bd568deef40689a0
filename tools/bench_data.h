/*
 * bench_data.h - element access in every udnn data type on the host:
 * rounding to half and bfloat16 (to nearest even), reading them back,
 * names of types and layouts, and DESIGN.md's tolerances.
 */
#ifndef UDNN_BENCH_DATA_H
#define UDNN_BENCH_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "udnn.h"

size_t bench_dtype_size(udnnDataType_t t);
/* "f32", "f64", "f16", "bf16", "s8", "s32", "s64". */
const char *bench_dtype_name(udnnDataType_t t);
/* The type of a name; -1 when none. */
int bench_dtype_parse(const char *name);

/* Element `off` (in elements) of base, as a double; stores round. */
double bench_load(const void *base, udnnDataType_t t, int64_t off);
void bench_store(void *base, udnnDataType_t t, int64_t off, double v);

/* Normwise relative error over the logical elements of two buffers laid
 * out alike; +inf when out has a NaN; an all-zero ref is matched exactly
 * (0 or +inf). */
double bench_rel_error(const void *out, const void *ref, udnnDataType_t t, int rank,
                       const int dims[], const int64_t strides[]);

/* DESIGN.md section 3: the check's tolerance for data of type t. */
double bench_tolerance(udnnDataType_t t);

/* The logical elements of a strided buffer in row-major order: off is
 * element 0's offset (in elements) after init, the next one's after each
 * next (kept without a division an element). */
typedef struct {
    int rank;
    const int *dims;
    const int64_t *strides;
    int idx[UDNN_DIM_MAX];
    int64_t off;
} bench_cursor;
void bench_cursor_init(bench_cursor *c, int rank, const int dims[], const int64_t strides[]);
void bench_cursor_next(bench_cursor *c);
int64_t bench_count(int rank, const int dims[]);

/* Packed strides of dims (n, c, rest) in fmt; NHWC puts c innermost. */
void bench_packed_strides(udnnTensorFormat_t fmt, int rank, const int dims[], int64_t strides[]);

/* A uniform double in [lo, hi) from the bench's generator. */
double bench_uniform(double lo, double hi);
void bench_seed(uint64_t seed);
/* Draws every logical element of a strided buffer in row-major order,
 * rounded to an integer (away from zero at halves) where integral. */
void bench_fill_uniform(void *base, udnnDataType_t t, int rank, const int dims[],
                        const int64_t strides[], double lo, double hi, int integral);

#endif /* UDNN_BENCH_DATA_H */
