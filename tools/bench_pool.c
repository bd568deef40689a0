/* bench_pool.c - the pool family: forward and backward pooling, 2-D or
 * 3-D (with --d). The window comes from --window or the descriptor's
 * kernel fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

typedef struct {
    int fwd;
    udnnPoolingDescriptor_t pool;
    bench_scalar alpha, beta;
    int x, y, dy, dx;
} pool_state;

static const char *const modes[] = {"max", "avg-include", "avg-exclude", "max-deterministic"};

/* --KEY with one value for every spatial dim or one per dim; else dflt[]. */
static int geometry(bench_problem *p, const char *key, int nd, const int dflt[], int out[3])
{
    int v[3];
    int n = bench_opt_ints(p, key, v, 3);
    if (n < 0) return -1;
    if (n != 0 && n != 1 && n != nd)
        return bench_fail(p, "--%s takes 1 or %d values for %d-D pooling", key, nd, nd);
    for (int i = 0; i < nd; i++) out[i] = n == 0 ? dflt[i] : n == 1 ? v[0] : v[i];
    return 0;
}

static int setup(bench_problem *p)
{
    pool_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    s->x = s->y = s->dy = s->dx = -1;
    static const char *const dirs[] = {"fwd", "bwd"};
    int dir = bench_opt_choice(p, "dir", dirs, 2, 0);
    int mode = bench_opt_choice(p, "mode", modes, 4, 0);
    if (dir < 0 || mode < 0) return -1;
    s->fwd = dir == 0;
    snprintf(p->dir, sizeof p->dir, "%s", dirs[dir]);

    int xd[UDNN_DIM_MAX];
    const int rank = bench_main_dims(p, xd);
    if (rank < 0) return -1;
    if (rank != 4 && rank != 5) return bench_fail(p, "pooling takes 4-D or 5-D tensors");
    const int nd = rank - 2;
    /* the window's default: the descriptor's kernel (kd, kh, kw) */
    long t, r, sz;
    if (bench_opt_int(p, "t", 2, &t) < 0 || bench_opt_int(p, "r", 2, &r) < 0 ||
        bench_opt_int(p, "s", r, &sz) < 0)
        return -1;
    const int kernel[3] = {nd == 3 ? (int)t : (int)r, nd == 3 ? (int)r : (int)sz, (int)sz};
    const int zeros[3] = {0, 0, 0}, ones[3] = {1, 1, 1};
    int window[3], pad[3], stride[3];
    if (geometry(p, "window", nd, kernel, window) < 0 || geometry(p, "pad", nd, zeros, pad) < 0 ||
        geometry(p, "stride", nd, ones, stride) < 0)
        return -1;
    const int nan_prop = bench_arg_flag(p->args, "nan-prop");
    udnnStatus_t st = udnnCreatePoolingDescriptor(&s->pool);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetPoolingNdDescriptor(s->pool, (udnnPoolingMode_t)mode,
                                        nan_prop ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN, nd,
                                        window, pad, stride);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "pooling descriptor");

    double alpha, beta;
    if (bench_opt_real(p, "alpha", 1.0, &alpha) < 0 || bench_opt_real(p, "beta", 0.0, &beta) < 0)
        return -1;
    s->alpha = bench_scalar_of(p->dtype, alpha);
    s->beta = bench_scalar_of(p->dtype, beta);

    if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, xd, BENCH_IN)) < 0) return -1;
    int yd[UDNN_DIM_MAX];
    st = udnnGetPoolingNdForwardOutputDim(s->pool, p->buf[s->x].desc, rank, yd);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "pooling output");
    static const char *const out_keys[3] = {"od", "oh", "ow"};
    for (int i = 0; i < nd; i++) {
        long want;
        if (bench_opt_int(p, out_keys[3 - nd + i], yd[2 + i], &want) < 0) return -1;
        if (want != yd[2 + i])
            return bench_fail(p,
                              "the descriptor's %s%ld disagrees with the geometry, which gives %d",
                              out_keys[3 - nd + i], want, yd[2 + i]);
    }
    int out;
    if (s->fwd) {
        if ((s->y = out = bench_add_tensor(p, "y", p->dtype, rank, yd, BENCH_OUT)) < 0) return -1;
    } else {
        if ((s->y = bench_add_tensor(p, "y", p->dtype, rank, yd, BENCH_IN)) < 0) return -1;
        if ((s->dy = bench_add_tensor(p, "dy", p->dtype, rank, yd, BENCH_IN)) < 0) return -1;
        if ((s->dx = out = bench_add_tensor(p, "dx", p->dtype, rank, xd, BENCH_OUT)) < 0)
            return -1;
    }
    p->buf[out].blend = beta != 0.0;
    p->peer.op = s->fwd ? BENCH_PEER_POOL_FWD : BENCH_PEER_POOL_BWD;
    p->peer.src = s->x;
    p->peer.dst = s->y;
    p->peer.diff_dst = s->dy;
    p->peer.diff_src = s->dx;
    p->peer.mode = mode;
    p->peer.nan_prop = nan_prop;
    p->peer.nd = nd;
    for (int i = 0; i < nd; i++) {
        p->peer.window[i] = window[i];
        p->peer.pad[i] = pad[i];
        p->peer.stride[i] = stride[i];
    }
    p->peer.alpha = alpha;
    p->peer.beta = beta;
    for (int i = 0; i < p->nbufs; i++) p->bytes_moved += bench_logical_bytes(&p->buf[i]);
    if (beta != 0.0) p->bytes_moved += bench_logical_bytes(&p->buf[out]);

    static const char dn[3] = {'d', 'h', 'w'};
    size_t len = (size_t)snprintf(p->name, sizeof p->name, "%s:%s:mb%dic%d", p->dir, modes[mode],
                                  xd[0], xd[1]);
    for (int i = 0; i < nd; i++)
        len += (size_t)snprintf(p->name + len, sizeof p->name - len, "i%c%d", dn[3 - nd + i],
                                xd[2 + i]);
    for (int i = 0; i < nd; i++)
        len += (size_t)snprintf(p->name + len, sizeof p->name - len, "k%c%ds%c%dp%c%d",
                                dn[3 - nd + i], window[i], dn[3 - nd + i], stride[i],
                                dn[3 - nd + i], pad[i]);
    return 0;
}

static int derive(bench_problem *p, udnnHandle_t cpu)
{
    pool_state *s = p->state;
    if (s->fwd) return 0;
    const bench_scalar one = bench_scalar_of(p->dtype, 1.0), zero = bench_scalar_of(p->dtype, 0.0);
    udnnStatus_t st = udnnPoolingForward(cpu, s->pool, &one, p->buf[s->x].desc, p->buf[s->x].host,
                                         &zero, p->buf[s->y].desc, p->buf[s->y].host);
    return st == UDNN_STATUS_SUCCESS ? 0 : bench_fail_udnn(p, st, "the forward making y");
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    pool_state *s = p->state;
    void *const *ptr = e->ptr[set];
    if (s->fwd)
        return udnnPoolingForward(e->h, s->pool, &s->alpha, p->buf[s->x].desc, ptr[s->x], &s->beta,
                                  p->buf[s->y].desc, ptr[s->y]);
    return udnnPoolingBackward(e->h, s->pool, &s->alpha, p->buf[s->y].desc, ptr[s->y],
                               p->buf[s->dy].desc, ptr[s->dy], p->buf[s->x].desc, ptr[s->x],
                               &s->beta, p->buf[s->dx].desc, ptr[s->dx]);
}

static void teardown(bench_problem *p)
{
    pool_state *s = p->state;
    if (s == NULL) return;
    if (s->pool) udnnDestroyPoolingDescriptor(s->pool);
    free(s);
    p->state = NULL;
}

const bench_family bench_family_pool = {
    .name = "pool", .setup = setup, .run = run, .derive = derive, .teardown = teardown};
