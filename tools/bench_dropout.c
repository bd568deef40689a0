/* bench_dropout.c - the dropout family. Each handle gets its own
 * descriptor and states from --seed, so the backend and the CPU reference
 * draw the same mask (the Philox contract of udnn.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

typedef struct {
    int fwd;
    float p;
    unsigned long long seed;
    int in, out, reserve;
} drop_state;

/* What a handle holds: the descriptor and its states in the handle's memory. */
typedef struct {
    udnnDropoutDescriptor_t desc;
    void *states;
} drop_exec;

static int setup(bench_problem *p)
{
    drop_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    static const char *const dirs[] = {"fwd", "bwd"};
    int dir = bench_opt_choice(p, "dir", dirs, 2, 0);
    double prob;
    long seed;
    if (dir < 0 || bench_opt_real(p, "p", 0.5, &prob) < 0 ||
        bench_opt_int(p, "seed", 1234, &seed) < 0)
        return -1;
    s->fwd = dir == 0;
    s->p = (float)prob;
    s->seed = (unsigned long long)seed;
    snprintf(p->dir, sizeof p->dir, "%s", dirs[dir]);
    int dims[UDNN_DIM_MAX];
    const int rank = bench_main_dims(p, dims);
    if (rank < 0) return -1;
    if ((s->in = bench_add_tensor(p, s->fwd ? "x" : "dy", p->dtype, rank, dims, BENCH_IN)) < 0 ||
        (s->out = bench_add_tensor(p, s->fwd ? "y" : "dx", p->dtype, rank, dims, BENCH_OUT)) < 0)
        return -1;
    size_t bytes;
    udnnStatus_t st = udnnDropoutGetReserveSpaceSize(p->buf[s->in].desc, &bytes);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "reserve space size");
    /* the forward writes the mask; the backward reads one of 0s and 1s */
    if ((s->reserve = bench_add_raw(p, "reserve", bytes, s->fwd ? BENCH_OUT : BENCH_IN, 0, 1)) < 0)
        return -1;
    for (int i = 0; i < p->nbufs; i++) p->bytes_moved += bench_logical_bytes(&p->buf[i]);
    char d[96];
    bench_dims_str(d, sizeof d, rank, dims);
    snprintf(p->name, sizeof p->name, "%s:p%g:%s", p->dir, prob, d);
    return 0;
}

static udnnStatus_t prepare(bench_problem *p, bench_exec *e)
{
    drop_state *s = p->state;
    drop_exec *de = calloc(1, sizeof *de);
    if (de == NULL) return UDNN_STATUS_ALLOC_FAILED;
    e->state = de;
    e->algo = -1;
    size_t bytes;
    udnnStatus_t st = udnnCreateDropoutDescriptor(&de->desc);
    if (st == UDNN_STATUS_SUCCESS) st = udnnDropoutGetStatesSize(e->h, &bytes);
    if (st == UDNN_STATUS_SUCCESS) st = udnnMalloc(e->h, &de->states, bytes);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetDropoutDescriptor(de->desc, e->h, s->p, de->states, bytes, s->seed);
    return st;
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    drop_state *s = p->state;
    drop_exec *de = e->state;
    void *const *ptr = e->ptr[set];
    const bench_buf *in = &p->buf[s->in], *out = &p->buf[s->out], *r = &p->buf[s->reserve];
    if (s->fwd)
        return udnnDropoutForward(e->h, de->desc, in->desc, ptr[s->in], out->desc, ptr[s->out],
                                  ptr[s->reserve], r->bytes);
    return udnnDropoutBackward(e->h, de->desc, in->desc, ptr[s->in], out->desc, ptr[s->out],
                               ptr[s->reserve], r->bytes);
}

static void release(bench_problem *p, bench_exec *e)
{
    (void)p;
    drop_exec *de = e->state;
    if (de == NULL) return;
    if (de->desc) udnnDestroyDropoutDescriptor(de->desc);
    if (de->states) udnnFree(e->h, de->states);
    free(de);
    e->state = NULL;
}

static void teardown(bench_problem *p)
{
    free(p->state);
    p->state = NULL;
}

const bench_family bench_family_dropout = {.name = "dropout", .setup = setup, .prepare = prepare,
                                           .run = run, .release = release, .teardown = teardown};
