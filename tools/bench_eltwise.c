/* bench_eltwise.c - the families whose forward maps x to y of the same
 * shape and whose backward maps (x, y, dy) to dx: act, softmax and lrn.
 * A backward problem's y is made from x by the forward op (derive), so
 * that solvers reading y and solvers reading x agree. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

enum { FAM_ACT, FAM_SOFTMAX, FAM_LRN };

typedef struct {
    int fam, fwd;
    udnnActivationDescriptor_t act;
    udnnLRNDescriptor_t lrn;
    int softmax_alg, softmax_mode;
    bench_scalar alpha, beta;
    int x, y, dy, dx;
    unsigned char *softmax_x; /* softmax backward: the x its y comes from */
} elt_state;

static const char *const act_modes[] = BENCH_ACT_MODE_NAMES;
static const char *const softmax_algs[] = {"fast", "accurate", "log"};
static const char *const softmax_modes[] = {"instance", "channel"};

/* The family's own options; a name prefix for the problem column. */
static int read_params(bench_problem *p, elt_state *s, char *prefix, size_t n)
{
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    if (s->fam == FAM_ACT) {
        int mode = bench_opt_choice(p, "mode", act_modes, BENCH_ACT_MODE_COUNT, 1);
        double coef, swish;
        if (mode < 0 || bench_opt_real(p, "coef", bench_act_default_coef(mode), &coef) < 0 ||
            bench_opt_real(p, "swish-beta", 1.0, &swish) < 0)
            return -1;
        const int nan_prop = bench_arg_flag(p->args, "nan-prop");
        if ((st = udnnCreateActivationDescriptor(&s->act)) == UDNN_STATUS_SUCCESS)
            st = udnnSetActivationDescriptor(s->act, bench_act_mode(mode),
                                             nan_prop ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN,
                                             coef);
        if (st == UDNN_STATUS_SUCCESS) st = udnnSetActivationDescriptorSwishBeta(s->act, swish);
        snprintf(prefix, n, "%s:%s", p->dir, act_modes[mode]);
        p->peer.mode = bench_act_mode(mode);
        p->peer.nan_prop = nan_prop;
        p->peer.param[0] = coef;
        p->peer.param[1] = swish;
    } else if (s->fam == FAM_SOFTMAX) {
        s->softmax_alg = bench_opt_choice(p, "alg", softmax_algs, 3, UDNN_SOFTMAX_ACCURATE);
        s->softmax_mode = bench_opt_choice(p, "mode", softmax_modes, 2, UDNN_SOFTMAX_MODE_CHANNEL);
        if (s->softmax_alg < 0 || s->softmax_mode < 0) return -1;
        snprintf(prefix, n, "%s:%s:%s", p->dir, softmax_algs[s->softmax_alg],
                 softmax_modes[s->softmax_mode]);
        p->peer.mode = s->softmax_alg;
        p->peer.softmax_mode = s->softmax_mode;
    } else {
        long size;
        double a, b, k;
        if (bench_opt_int(p, "size", 5, &size) < 0 ||
            bench_opt_real(p, "lrn-alpha", 1e-4, &a) < 0 ||
            bench_opt_real(p, "lrn-beta", 0.75, &b) < 0 || bench_opt_real(p, "lrn-k", 2.0, &k) < 0)
            return -1;
        if ((st = udnnCreateLRNDescriptor(&s->lrn)) == UDNN_STATUS_SUCCESS)
            st = udnnSetLRNDescriptor(s->lrn, (unsigned)size, a, b, k);
        snprintf(prefix, n, "%s:n%ld", p->dir, size);
        p->peer.size = size;
        p->peer.param[0] = a;
        p->peer.param[1] = b;
        p->peer.param[2] = k;
    }
    return st == UDNN_STATUS_SUCCESS ? 0 : bench_fail_udnn(p, st, "descriptor");
}

static int setup(bench_problem *p, int fam)
{
    elt_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    s->fam = fam;
    s->x = s->y = s->dy = s->dx = -1;
    static const char *const dirs[] = {"fwd", "bwd"};
    int dir = bench_opt_choice(p, "dir", dirs, 2, 0);
    if (dir < 0) return -1;
    s->fwd = dir == 0;
    snprintf(p->dir, sizeof p->dir, "%s", dirs[dir]);
    char prefix[64];
    if (read_params(p, s, prefix, sizeof prefix) < 0) return -1;

    int dims[UDNN_DIM_MAX];
    int rank = bench_main_dims(p, dims);
    if (rank < 0) return -1;
    double alpha, beta;
    if (bench_opt_real(p, "alpha", 1.0, &alpha) < 0 || bench_opt_real(p, "beta", 0.0, &beta) < 0)
        return -1;
    s->alpha = bench_scalar_of(p->dtype, alpha);
    s->beta = bench_scalar_of(p->dtype, beta);

    int out;
    if (s->fwd) {
        if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, dims, BENCH_IN)) < 0) return -1;
        if ((s->y = out = bench_add_tensor(p, "y", p->dtype, rank, dims, BENCH_OUT)) < 0)
            return -1;
    } else {
        if (fam != FAM_SOFTMAX &&
            (s->x = bench_add_tensor(p, "x", p->dtype, rank, dims, BENCH_IN)) < 0)
            return -1;
        if ((s->y = bench_add_tensor(p, "y", p->dtype, rank, dims, BENCH_IN)) < 0) return -1;
        if ((s->dy = bench_add_tensor(p, "dy", p->dtype, rank, dims, BENCH_IN)) < 0) return -1;
        if ((s->dx = out = bench_add_tensor(p, "dx", p->dtype, rank, dims, BENCH_OUT)) < 0)
            return -1;
    }
    if (fam == FAM_ACT && s->x >= 0) {
        p->buf[s->x].lo = -2.0;
        p->buf[s->x].hi = 2.0;
    }
    p->buf[out].blend = beta != 0.0;
    static const bench_peer_op fwd_ops[] = {BENCH_PEER_ACT_FWD, BENCH_PEER_SOFTMAX_FWD,
                                            BENCH_PEER_LRN_FWD};
    static const bench_peer_op bwd_ops[] = {BENCH_PEER_ACT_BWD, BENCH_PEER_SOFTMAX_BWD,
                                            BENCH_PEER_LRN_BWD};
    p->peer.op = s->fwd ? fwd_ops[fam] : bwd_ops[fam];
    p->peer.src = s->x;
    p->peer.dst = s->y;
    p->peer.diff_dst = s->dy;
    p->peer.diff_src = s->dx;
    p->peer.alpha = alpha;
    p->peer.beta = beta;
    for (int i = 0; i < p->nbufs; i++) p->bytes_moved += bench_logical_bytes(&p->buf[i]);
    if (beta != 0.0) p->bytes_moved += bench_logical_bytes(&p->buf[out]);
    char d[96];
    bench_dims_str(d, sizeof d, p->buf[0].rank, p->buf[0].dims);
    snprintf(p->name, sizeof p->name, "%s:%s", prefix, d);
    return 0;
}

static int setup_act(bench_problem *p)
{
    return setup(p, FAM_ACT);
}

static int setup_softmax(bench_problem *p)
{
    return setup(p, FAM_SOFTMAX);
}

static int setup_lrn(bench_problem *p)
{
    return setup(p, FAM_LRN);
}

/* y = forward(x) on the CPU handle, x and y in host memory. */
static udnnStatus_t forward(elt_state *s, udnnHandle_t h, udnnTensorDescriptor_t xd, const void *x,
                            udnnTensorDescriptor_t yd, void *y, udnnDataType_t t)
{
    const bench_scalar one = bench_scalar_of(t, 1.0), zero = bench_scalar_of(t, 0.0);
    switch (s->fam) {
    case FAM_ACT: return udnnActivationForward(h, s->act, &one, xd, x, &zero, yd, y);
    case FAM_SOFTMAX:
        return udnnSoftmaxForward(h, (udnnSoftmaxAlgorithm_t)s->softmax_alg,
                                  (udnnSoftmaxMode_t)s->softmax_mode, &one, xd, x, &zero, yd, y);
    default:
        return udnnLRNCrossChannelForward(h, s->lrn, UDNN_LRN_CROSS_CHANNEL_DIM1, &one, xd, x,
                                          &zero, yd, y);
    }
}

static int derive(bench_problem *p, udnnHandle_t cpu)
{
    elt_state *s = p->state;
    if (s->fwd) return 0;
    bench_buf *y = &p->buf[s->y];
    const void *x;
    udnnTensorDescriptor_t xd;
    if (s->x >= 0) {
        x = p->buf[s->x].host;
        xd = p->buf[s->x].desc;
    } else {
        /* softmax's backward has no x: draw one in y's layout */
        if ((s->softmax_x = malloc(y->bytes)) == NULL) return bench_fail(p, "out of memory");
        memcpy(s->softmax_x, y->host, y->bytes);
        bench_fill_uniform(s->softmax_x, y->dtype, y->rank, y->dims, y->strides, -2.0, 2.0, 0);
        x = s->softmax_x;
        xd = y->desc;
    }
    udnnStatus_t st = forward(s, cpu, xd, x, y->desc, y->host, p->dtype);
    return st == UDNN_STATUS_SUCCESS ? 0 : bench_fail_udnn(p, st, "the forward making y");
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    elt_state *s = p->state;
    void *const *ptr = e->ptr[set];
    if (s->fwd) {
        const bench_buf *x = &p->buf[s->x], *y = &p->buf[s->y];
        switch (s->fam) {
        case FAM_ACT:
            return udnnActivationForward(e->h, s->act, &s->alpha, x->desc, ptr[s->x], &s->beta,
                                         y->desc, ptr[s->y]);
        case FAM_SOFTMAX:
            return udnnSoftmaxForward(e->h, (udnnSoftmaxAlgorithm_t)s->softmax_alg,
                                      (udnnSoftmaxMode_t)s->softmax_mode, &s->alpha, x->desc,
                                      ptr[s->x], &s->beta, y->desc, ptr[s->y]);
        default:
            return udnnLRNCrossChannelForward(e->h, s->lrn, UDNN_LRN_CROSS_CHANNEL_DIM1, &s->alpha,
                                              x->desc, ptr[s->x], &s->beta, y->desc, ptr[s->y]);
        }
    }
    const bench_buf *y = &p->buf[s->y], *dy = &p->buf[s->dy], *dx = &p->buf[s->dx];
    switch (s->fam) {
    case FAM_ACT:
        return udnnActivationBackward(e->h, s->act, &s->alpha, y->desc, ptr[s->y], dy->desc,
                                      ptr[s->dy], p->buf[s->x].desc, ptr[s->x], &s->beta,
                                      dx->desc, ptr[s->dx]);
    case FAM_SOFTMAX:
        return udnnSoftmaxBackward(e->h, (udnnSoftmaxAlgorithm_t)s->softmax_alg,
                                   (udnnSoftmaxMode_t)s->softmax_mode, &s->alpha, y->desc,
                                   ptr[s->y], dy->desc, ptr[s->dy], &s->beta, dx->desc,
                                   ptr[s->dx]);
    default:
        return udnnLRNCrossChannelBackward(e->h, s->lrn, UDNN_LRN_CROSS_CHANNEL_DIM1, &s->alpha,
                                           y->desc, ptr[s->y], dy->desc, ptr[s->dy],
                                           p->buf[s->x].desc, ptr[s->x], &s->beta, dx->desc,
                                           ptr[s->dx]);
    }
}

static void teardown(bench_problem *p)
{
    elt_state *s = p->state;
    if (s == NULL) return;
    if (s->act) udnnDestroyActivationDescriptor(s->act);
    if (s->lrn) udnnDestroyLRNDescriptor(s->lrn);
    free(s->softmax_x);
    free(s);
    p->state = NULL;
}

const bench_family bench_family_act = {
    .name = "act", .setup = setup_act, .run = run, .derive = derive, .teardown = teardown};
const bench_family bench_family_softmax = {
    .name = "softmax", .setup = setup_softmax, .run = run, .derive = derive, .teardown = teardown};
const bench_family bench_family_lrn = {
    .name = "lrn", .setup = setup_lrn, .run = run, .derive = derive, .teardown = teardown};
