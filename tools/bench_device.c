/* bench_device.c - the CUDA runtime's events and copy for udnn-bench
 * (UDNN_BENCH_CUDART: built with the CUDA backend); none elsewhere. */
#include <stdio.h>
#include <stdlib.h>

#include "tools/bench_device.h"

#ifdef UDNN_BENCH_CUDART
#include <cuda_runtime.h>

struct bench_device {
    cudaStream_t stream;
    cudaEvent_t mark[2];
};

bench_device *bench_device_open(udnnHandle_t h, char *msg, size_t n)
{
    udnnBackend_t b;
    udnnStream_t stream = NULL;
    if (udnnGetBackend(h, &b) != UDNN_STATUS_SUCCESS || b != UDNN_BACKEND_CUDA) {
        snprintf(msg, n, "device clock: only the cuda backend has one");
        return NULL;
    }
    const udnnStatus_t st = udnnGetStream(h, &stream);
    if (st != UDNN_STATUS_SUCCESS) {
        snprintf(msg, n, "device clock: udnnGetStream: %s", udnnGetErrorString(st));
        return NULL;
    }
    bench_device *d = calloc(1, sizeof *d);
    if (d == NULL) {
        snprintf(msg, n, "device clock: out of memory");
        return NULL;
    }
    d->stream = (cudaStream_t)stream;
    /* the events on the handle's device: udnn makes it current on each
     * call that reaches the backend, and bench_exec_open's allocations
     * and uploads came last */
    for (int i = 0; i < 2; i++) {
        cudaError_t e = cudaEventCreate(&d->mark[i]);
        if (e != cudaSuccess) {
            snprintf(msg, n, "device clock: cudaEventCreate: %s", cudaGetErrorString(e));
            if (i == 1) cudaEventDestroy(d->mark[0]);
            free(d);
            return NULL;
        }
    }
    return d;
}

void bench_device_close(bench_device *d)
{
    if (d == NULL) return;
    cudaEventDestroy(d->mark[0]);
    cudaEventDestroy(d->mark[1]);
    free(d);
}

int bench_device_mark(bench_device *d, int which)
{
    return cudaEventRecord(d->mark[which], d->stream) == cudaSuccess ? 0 : -1;
}

double bench_device_elapsed(bench_device *d)
{
    float ms = 0.0f;
    return cudaEventElapsedTime(&ms, d->mark[0], d->mark[1]) == cudaSuccess ? (double)ms : -1.0;
}

int bench_device_copy(bench_device *d, void *dst, const void *src, size_t bytes)
{
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d->stream) == cudaSuccess
               ? 0
               : -1;
}

#else

bench_device *bench_device_open(udnnHandle_t h, char *msg, size_t n)
{
    (void)h;
    snprintf(msg, n, "device clock: udnn-bench was built without a GPU runtime (--with-cuda)");
    return NULL;
}

void bench_device_close(bench_device *d) { (void)d; }

int bench_device_mark(bench_device *d, int which)
{
    (void)d, (void)which;
    return -1;
}

double bench_device_elapsed(bench_device *d)
{
    (void)d;
    return -1.0;
}

int bench_device_copy(bench_device *d, void *dst, const void *src, size_t bytes)
{
    (void)d, (void)dst, (void)src, (void)bytes;
    return -1;
}

#endif
