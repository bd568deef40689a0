/* bench_run.c - buffer sets on a handle and the timing loop. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/bench_device.h"
#include "tools/bench_run.h"

double bench_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int compare_doubles(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bench_median(double *v, int n)
{
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int bench_auto_sets(const bench_problem *p)
{
    double bytes = 0.0;
    for (int i = 0; i < p->nbufs; i++) bytes += (double)p->buf[i].bytes;
    const double want = 64.0 * 1024 * 1024;
    int sets = bytes > 0 ? (int)(want / bytes) + 1 : BENCH_MAX_SETS;
    return sets < 2 ? 2 : sets > BENCH_MAX_SETS ? BENCH_MAX_SETS : sets;
}

int bench_exec_upload(bench_problem *p, bench_exec *e, int set)
{
    for (int i = 0; i < p->nbufs; i++) {
        if (p->buf[i].bytes == 0) continue;
        udnnStatus_t st = udnnMemcpy(e->h, e->ptr[set][i], p->buf[i].host, p->buf[i].bytes,
                                     UDNN_MEMCPY_HOST_TO_DEVICE);
        if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "upload");
    }
    return 0;
}

int bench_exec_open(bench_problem *p, bench_exec *e, udnnHandle_t h, int sets, int oracle)
{
    memset(e, 0, sizeof *e);
    e->h = h;
    e->oracle = oracle;
    e->algo = -1;
    e->sets = sets > BENCH_MAX_SETS ? BENCH_MAX_SETS : sets < 1 ? 1 : sets;
    for (int s = 0; s < e->sets; s++)
        for (int i = 0; i < p->nbufs; i++) {
            udnnStatus_t st = udnnMalloc(h, &e->ptr[s][i], p->buf[i].bytes);
            if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "allocation");
        }
    for (int s = 0; s < e->sets; s++)
        if (bench_exec_upload(p, e, s) < 0) return -1;
    if (p->family->prepare != NULL) {
        udnnStatus_t st = p->family->prepare(p, e);
        if (st != UDNN_STATUS_SUCCESS)
            return p->err[0] ? -1 : bench_fail_udnn(p, st, "preparing the problem");
    }
    return 0;
}

void bench_exec_close(bench_problem *p, bench_exec *e)
{
    if (e->h == NULL) return;
    if (p->family->release != NULL) p->family->release(p, e);
    for (int s = 0; s < e->sets; s++)
        for (int i = 0; i < p->nbufs; i++)
            if (e->ptr[s][i] != NULL) udnnFree(e->h, e->ptr[s][i]);
    bench_device_close(e->dev);
    e->dev = NULL;
    e->h = NULL;
}

int bench_time_loop(int (*run)(void *ctx, int set), int (*sync)(void *ctx), void *ctx, int sets,
                    const bench_timing *t, bench_device *dev, bench_times *out)
{
    memset(out, 0, sizeof *out);
    if (sets < 1) sets = 1;
    int set = 0;
    for (int i = 0; i < t->warmup; i++, set = (set + 1) % sets)
        if (run(ctx, set) < 0) return 1;
    sync(ctx);
    double *times = malloc(sizeof(double) * (size_t)(t->iters > 0 ? t->iters : 1));
    if (times == NULL) return -1;
    const int burst = t->burst > 1 ? t->burst : 1;
    double spent = 0.0;
    int n = 0;
    for (; n < t->iters && (n == 0 || spent < t->max_ms); n++) {
        const double t0 = bench_now_ms();
        int rc = dev != NULL ? bench_device_mark(dev, 0) : 0;
        for (int b = 0; b < burst && rc == 0; b++, set = (set + 1) % sets) rc = run(ctx, set);
        if (rc == 0 && dev != NULL) rc = bench_device_mark(dev, 1);
        if (rc == 0) rc = sync(ctx);
        const double dt = bench_now_ms() - t0;
        const double sample = dev != NULL && rc == 0 ? bench_device_elapsed(dev) : dt;
        if (rc < 0 || sample < 0) {
            free(times);
            return 2;
        }
        times[n] = sample / burst;
        spent += dt;
    }
    out->runs = n;
    if (n > 0) {
        out->median_ms = bench_median(times, n);
        out->min_ms = times[0]; /* sorted by bench_median */
    }
    free(times);
    return 0;
}

/* udnn's runs through the loop: the family's run, then udnnSynchronize. */
typedef struct {
    bench_problem *p;
    bench_exec *e;
    udnnStatus_t st;
} udnn_job;

static int udnn_run(void *ctx, int set)
{
    udnn_job *j = ctx;
    j->st = j->p->family->run(j->p, j->e, set);
    return j->st == UDNN_STATUS_SUCCESS ? 0 : -1;
}

static int udnn_sync(void *ctx)
{
    udnn_job *j = ctx;
    j->st = udnnSynchronize(j->e->h);
    return j->st == UDNN_STATUS_SUCCESS ? 0 : -1;
}

int bench_time(bench_problem *p, bench_exec *e, const bench_timing *t, bench_times *out)
{
    udnn_job j = {p, e, UDNN_STATUS_SUCCESS};
    switch (bench_time_loop(udnn_run, udnn_sync, &j, e->sets, t, e->dev, out)) {
    case 0: return 0;
    case 1: return bench_fail_udnn(p, j.st, "warm-up run");
    case 2: return bench_fail_udnn(p, j.st, "timed run");
    default: return bench_fail(p, "out of memory");
    }
}
