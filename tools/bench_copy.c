/* bench_copy.c - the copy family: a device-to-device copy of one
 * tensor's bytes (x into y, y laid out as x: it reads --x-dims,
 * --x-strides, --x-layout, --x-dtype), on any backend (host memory on the
 * CPU): the GPU runtime's asynchronous copy where samples are timed on
 * the device (bench_device.h), else udnnMemcpy. Its GB/s, counting each
 * byte read and each byte written as the other families count theirs, is
 * the memory system's rate that the memory-bound ops are held against,
 * measured in the same run:
 *
 *   udnn-bench --batch FILE --backend cuda     with lines such as
 *   act --mode relu --n 64 --c 64 --h 56 --w 56
 *   copy --n 64 --c 64 --h 56 --w 56
 */
#include <stdio.h>
#include <stdlib.h>

#include "tools/bench.h"
#include "tools/bench_device.h"
#include "tools/bench_families.h"

static int setup(bench_problem *p)
{
    int dims[UDNN_DIM_MAX];
    const int rank = bench_main_dims(p, dims);
    if (rank < 0) return -1;
    int x, y;
    if ((x = bench_add_tensor(p, "x", p->dtype, rank, dims, BENCH_IN)) < 0 ||
        (y = bench_add_tensor(p, "y:x", p->dtype, rank, dims, BENCH_OUT)) < 0)
        return -1;
    /* the bytes the copy moves: x's span, read once and written once */
    p->bytes_moved = 2.0 * (double)p->buf[x].bytes;
    char d[96];
    bench_dims_str(d, sizeof d, p->buf[x].rank, p->buf[x].dims);
    snprintf(p->name, sizeof p->name, "d2d:%s", d);
    return 0;
}

/* Where samples are timed on the device, the runtime's own asynchronous
 * copy: udnnMemcpy waits for each copy, so runs back to back would each
 * pay the wait that the ops' runs pay once a sample. */
static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    if (e->dev != NULL)
        return bench_device_copy(e->dev, e->ptr[set][1], e->ptr[set][0], p->buf[0].bytes) == 0
                   ? UDNN_STATUS_SUCCESS
                   : UDNN_STATUS_EXECUTION_FAILED;
    return udnnMemcpy(e->h, e->ptr[set][1], e->ptr[set][0], p->buf[0].bytes,
                      UDNN_MEMCPY_DEVICE_TO_DEVICE);
}

const bench_family bench_family_copy = {.name = "copy", .solver = "memcpy", .setup = setup,
                                        .run = run};
