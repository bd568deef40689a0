/*
 * bench_device.h - what udnn-bench does with a GPU's runtime itself, where
 * it links one (the CUDA runtime, built with --with-cuda): times samples
 * by events on the handle's stream, as DESIGN.md §4 asks of GPU times, and
 * copies with the runtime's own asynchronous device-to-device copy, the
 * rate the memory-bound ops are held against. Without it, samples are
 * timed by the host's clock around the runs and the wait, and the copy is
 * udnnMemcpy, which waits for each copy to end.
 */
#ifndef UDNN_BENCH_DEVICE_H
#define UDNN_BENCH_DEVICE_H

#include "tools/bench.h"

/* Handle h's device part, or NULL where the bench has no runtime for h's
 * backend (the CPU, HIP) or its events cannot be made; why in msg. Call
 * it after a udnn call on h that reached the backend (bench_exec_open's),
 * so that h's device is the current one. */
bench_device *bench_device_open(udnnHandle_t h, char *msg, size_t n);
void bench_device_close(bench_device *d);

/* A sample's two marks on the stream: before its first run (0) and after
 * its last (1), before the wait; 0 or -1. */
int bench_device_mark(bench_device *d, int which);
/* Milliseconds between the marks, once the wait has returned; -1 when the
 * runtime cannot say. */
double bench_device_elapsed(bench_device *d);

/* bytes from src to dst, queued on the stream; 0 or -1. */
int bench_device_copy(bench_device *d, void *dst, const void *src, size_t bytes);

#endif /* UDNN_BENCH_DEVICE_H */
