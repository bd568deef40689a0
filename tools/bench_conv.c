/* bench_conv.c - the conv family (--dir fwd, bwd-data, bwd-filter,
 * bwd-bias) and cba, the fused conv-bias-activation forward. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

enum { DIR_FWD, DIR_BWD_DATA, DIR_BWD_FILTER, DIR_BWD_BIAS, DIR_CBA };

typedef struct {
    int dir;
    udnnConvolutionDescriptor_t conv;
    udnnActivationDescriptor_t act;
    bench_scalar alpha, beta, alpha2;
    int x, w, y, z, bias; /* buffer indices (x, w, y name dx, dw, dy by direction) */
    int act_index;        /* cba: into act_modes */
    long algo;            /* --algo, -1 when not given */
    int find;             /* --find: the fastest measured algo */
} conv_state;

static const char *const act_modes[] = BENCH_ACT_MODE_NAMES;

/* 1 + (in + 2 pad - ((f - 1) dilation + 1)) / stride, as the API has it. */
static int out_size(int in, int f, int pad, int stride, int dil)
{
    return 1 + (in + 2 * pad - ((f - 1) * dil + 1)) / stride;
}

/* --KEY as one value for every spatial dim, or one per dim. */
static int geometry(bench_problem *p, const char *key, int nd, int dflt, int out[3])
{
    int v[3];
    int n = bench_opt_ints(p, key, v, 3);
    if (n < 0) return -1;
    if (n != 0 && n != 1 && n != nd)
        return bench_fail(p, "--%s takes 1 or %d values for a %d-D convolution", key, nd, nd);
    for (int i = 0; i < nd; i++) out[i] = n == 0 ? dflt : n == 1 ? v[0] : v[i];
    return 0;
}

/* The problem column: direction and a benchdnn descriptor. */
static void name_problem(bench_problem *p, const char *prefix, int nd, const long sz[],
                         const int pad[], const int str[], const int dil[], long groups)
{
    static const char dn[3] = {'d', 'h', 'w'};
    char *s = p->name;
    size_t n = sizeof p->name, len = 0;
    len += (size_t)snprintf(s + len, n - len, "%s:", prefix);
    if (groups != 1) len += (size_t)snprintf(s + len, n - len, "g%ld", groups);
    len += (size_t)snprintf(s + len, n - len, "mb%ldic%ld", sz[0], sz[1]);
    for (int i = 3 - nd; i < 3 && len < n; i++)
        len += (size_t)snprintf(s + len, n - len, "i%c%ld", dn[i], sz[2 + i]);
    len += (size_t)snprintf(s + len, n - len, "oc%ld", sz[5]);
    for (int i = 3 - nd; i < 3 && len < n; i++)
        len += (size_t)snprintf(s + len, n - len, "k%c%ld", dn[i], sz[6 + i]);
    for (int i = 0; i < nd && len < n; i++)
        len += (size_t)snprintf(s + len, n - len, "s%c%d", dn[3 - nd + i], str[i]);
    for (int i = 0; i < nd && len < n; i++)
        len += (size_t)snprintf(s + len, n - len, "p%c%d", dn[3 - nd + i], pad[i]);
    for (int i = 0; i < nd && len < n; i++)
        if (dil[i] != 1)
            len += (size_t)snprintf(s + len, n - len, "d%c%d", dn[3 - nd + i], dil[i] - 1);
}

static int setup(bench_problem *p, int cba)
{
    conv_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    s->x = s->w = s->y = s->z = s->bias = -1;
    static const char *const dirs[] = {"fwd", "bwd-data", "bwd-filter", "bwd-bias"};
    s->dir = cba ? DIR_CBA : bench_opt_choice(p, "dir", dirs, 4, DIR_FWD);
    if (s->dir < 0) return -1;
    snprintf(p->dir, sizeof p->dir, "%s", cba ? "fwd" : dirs[s->dir]);

    /* n, c, d, h, w, k, t, r, s */
    static const char *const keys[9] = {"n", "c", "d", "h", "w", "k", "t", "r", "s"};
    long sz[9];
    for (int i = 0; i < 9; i++)
        if (bench_opt_int(p, keys[i], 1, &sz[i]) < 0) return -1;
    const int nd = bench_arg_has(p->args, "d") || bench_arg_has(p->args, "t") ? 3 : 2;
    long groups;
    if (bench_opt_int(p, "groups", 1, &groups) < 0) return -1;
    int pad[3], str[3], dil[3];
    if (geometry(p, "pad", nd, 0, pad) < 0 || geometry(p, "stride", nd, 1, str) < 0 ||
        geometry(p, "dilation", nd, 1, dil) < 0)
        return -1;
    static const char *const modes[] = {"conv", "xcorr"};
    int mode = bench_opt_choice(p, "mode", modes, 2, UDNN_CROSS_CORRELATION);
    const char *ct = bench_arg(p->args, "compute");
    int compute = ct ? bench_dtype_parse(ct)
                     : (p->dtype == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT);
    if (compute < 0) return bench_fail(p, "--compute %s: not a data type", ct);
    static const char *const maths[] = {"default", "tensor-op", "allow-conversion", "fma"};
    int math = bench_opt_choice(p, "math", maths, 4, 0);
    if (mode < 0 || math < 0) return -1;
    if (math != UDNN_DEFAULT_MATH && p->dtype == UDNN_DATA_FLOAT) p->tolerance = 2e-3;

    udnnStatus_t st = udnnCreateConvolutionDescriptor(&s->conv);
    if (st == UDNN_STATUS_SUCCESS)
        st = udnnSetConvolutionNdDescriptor(s->conv, nd, pad, str, dil, (udnnConvolutionMode_t)mode,
                                            (udnnDataType_t)compute);
    if (st == UDNN_STATUS_SUCCESS) st = udnnSetConvolutionGroupCount(s->conv, (int)groups);
    if (st == UDNN_STATUS_SUCCESS) st = udnnSetConvolutionMathType(s->conv, (udnnMathType_t)math);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "convolution descriptor");

    /* the shapes: x, w and the output the geometry gives */
    int xd[5], wd[5], yd[5], rank = nd + 2;
    const int first = 3 - nd;
    xd[0] = (int)sz[0];
    xd[1] = (int)sz[1];
    wd[0] = yd[1] = (int)sz[5];
    wd[1] = groups > 0 ? (int)(sz[1] / groups) : (int)sz[1];
    yd[0] = (int)sz[0];
    static const char *const out_keys[3] = {"od", "oh", "ow"};
    for (int i = 0; i < nd; i++) {
        xd[2 + i] = (int)sz[2 + first + i];
        wd[2 + i] = (int)sz[6 + first + i];
        if (str[i] < 1) return bench_fail(p, "--stride %d: strides must be at least 1", str[i]);
        yd[2 + i] = out_size(xd[2 + i], wd[2 + i], pad[i], str[i], dil[i]);
        if (yd[2 + i] < 1)
            return bench_fail(p, "the %s filter of %d (dilation %d) does not fit the input of %d "
                                 "padded by %d",
                              out_keys[first + i] + 1, wd[2 + i], dil[i], xd[2 + i], pad[i]);
        long want;
        if (bench_opt_int(p, out_keys[first + i], yd[2 + i], &want) < 0) return -1;
        if (want != yd[2 + i])
            return bench_fail(p,
                              "the descriptor's %s%ld disagrees with the geometry, which gives %d",
                              out_keys[first + i], want, yd[2 + i]);
    }

    if (s->dir != DIR_BWD_BIAS) {
        if (bench_opt_int(p, "algo", -1, &s->algo) < 0) return -1;
        s->find = bench_arg_flag(p->args, "find");
    }
    double alpha, beta = 0.0, alpha2 = 0.0;
    if (bench_opt_real(p, "alpha", 1.0, &alpha) < 0) return -1;
    if (!cba && bench_opt_real(p, "beta", 0.0, &beta) < 0) return -1;
    if (cba && bench_opt_real(p, "alpha2", 0.0, &alpha2) < 0) return -1;
    s->alpha = bench_scalar_of(p->dtype, alpha);
    s->beta = bench_scalar_of(p->dtype, beta);
    s->alpha2 = bench_scalar_of(p->dtype, alpha2);

    const double flops =
        2.0 * (double)bench_count(rank, yd) * (double)bench_count(rank - 1, wd + 1);
    switch (s->dir) {
    case DIR_FWD:
    case DIR_CBA:
        if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, xd, BENCH_IN)) < 0) return -1;
        if ((s->w = bench_add_filter(p, "w", rank, wd, BENCH_IN)) < 0) return -1;
        if ((s->y = bench_add_tensor(p, "y", p->dtype, rank, yd, BENCH_OUT)) < 0) return -1;
        p->buf[s->y].blend = beta != 0.0;
        p->flops = flops;
        break;
    case DIR_BWD_DATA:
        if ((s->w = bench_add_filter(p, "w", rank, wd, BENCH_IN)) < 0) return -1;
        if ((s->y = bench_add_tensor(p, "dy", p->dtype, rank, yd, BENCH_IN)) < 0) return -1;
        if ((s->x = bench_add_tensor(p, "dx", p->dtype, rank, xd, BENCH_OUT)) < 0) return -1;
        p->buf[s->x].blend = beta != 0.0;
        p->flops = flops;
        break;
    case DIR_BWD_FILTER:
        if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, xd, BENCH_IN)) < 0) return -1;
        if ((s->y = bench_add_tensor(p, "dy", p->dtype, rank, yd, BENCH_IN)) < 0) return -1;
        if ((s->w = bench_add_filter(p, "dw", rank, wd, BENCH_OUT)) < 0) return -1;
        p->buf[s->w].blend = beta != 0.0;
        p->flops = flops;
        break;
    case DIR_BWD_BIAS: {
        int bd[5] = {1, yd[1], 1, 1, 1};
        if ((s->y = bench_add_tensor(p, "dy", p->dtype, rank, yd, BENCH_IN)) < 0) return -1;
        if ((s->bias = bench_add_tensor(p, "db", p->dtype, rank, bd, BENCH_OUT)) < 0) return -1;
        p->buf[s->bias].blend = beta != 0.0;
        p->bytes_moved = bench_logical_bytes(&p->buf[s->y]) +
                         bench_logical_bytes(&p->buf[s->bias]) * (beta != 0.0 ? 2 : 1);
        break;
    }
    }

    if (cba) {
        int act = bench_opt_choice(p, "act", act_modes, BENCH_ACT_MODE_COUNT, 1);
        s->act_index = act;
        double coef, swish;
        if (act < 0 || bench_opt_real(p, "coef", bench_act_default_coef(act), &coef) < 0 ||
            bench_opt_real(p, "swish-beta", 1.0, &swish) < 0)
            return -1;
        const int nan_prop = bench_arg_flag(p->args, "nan-prop");
        st = udnnCreateActivationDescriptor(&s->act);
        if (st == UDNN_STATUS_SUCCESS)
            st = udnnSetActivationDescriptor(s->act, bench_act_mode(act),
                                             nan_prop ? UDNN_PROPAGATE_NAN : UDNN_NOT_PROPAGATE_NAN,
                                             coef);
        if (st == UDNN_STATUS_SUCCESS) st = udnnSetActivationDescriptorSwishBeta(s->act, swish);
        if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "activation descriptor");
        p->peer.act_mode = bench_act_mode(act);
        p->peer.nan_prop = nan_prop;
        p->peer.param[0] = coef;
        p->peer.param[1] = swish;
        int bd[5] = {1, yd[1], 1, 1, 1};
        if (bench_arg_flag(p->args, "z-is-y")) {
            /* y is read as z first: it starts with data */
            p->buf[s->y].io = BENCH_INOUT;
            s->z = s->y;
        } else if ((s->z = bench_add_tensor(p, "z", p->dtype, rank, yd, BENCH_IN)) < 0) {
            return -1;
        }
        if ((s->bias = bench_add_tensor(p, "bias", p->dtype, rank, bd, BENCH_IN)) < 0) return -1;
    }

    /* every direction has a peer problem; oneDNN takes fwd, bwd-data
     * and bwd-filter, cuDNN all of them */
    static const bench_peer_op ops[] = {BENCH_PEER_CONV_FWD, BENCH_PEER_CONV_BWD_DATA,
                                        BENCH_PEER_CONV_BWD_FILTER, BENCH_PEER_CONV_BWD_BIAS,
                                        BENCH_PEER_CBA};
    bench_peer_info *pi = &p->peer;
    pi->op = ops[s->dir];
    pi->src = s->x;
    pi->weights = s->w;
    pi->dst = s->y;
    pi->z = s->z;
    pi->bias = s->bias;
    pi->nd = nd;
    pi->groups = (int)groups;
    for (int i = 0; i < nd; i++) {
        pi->pad[i] = pad[i];
        pi->stride[i] = str[i];
        pi->dilation[i] = dil[i];
    }
    pi->conv_mode = mode;
    pi->compute = compute;
    pi->math = math;
    pi->algo = s->dir == DIR_BWD_BIAS ? -1 : (int)s->algo;
    pi->find = s->find;
    pi->alpha = alpha;
    pi->beta = beta;
    pi->alpha2 = alpha2;
    if (s->dir == DIR_BWD_BIAS) {
        /* only dy's shape matters */
        char d[96];
        bench_dims_str(d, sizeof d, rank, yd);
        snprintf(p->name, sizeof p->name, "bwd-bias:%s", d);
    } else {
        name_problem(p, cba ? act_modes[s->act_index] : p->dir, nd, sz, pad, str, dil, groups);
    }
    return 0;
}

static int setup_conv(bench_problem *p)
{
    return setup(p, 0);
}

static int setup_cba(bench_problem *p)
{
    return setup(p, 1);
}

/* The algo: --algo, else the fastest measured (--find), else the
 * heuristic's first; then its workspace. */
static udnnStatus_t prepare(bench_problem *p, bench_exec *e)
{
    conv_state *s = p->state;
    e->algo = -1;
    if (s->dir == DIR_BWD_BIAS) return UDNN_STATUS_SUCCESS;
    const bench_buf *x = &p->buf[s->x], *w = &p->buf[s->w], *y = &p->buf[s->y];
    /* the oracle serves whatever algo its reference solver has */
    long algo = e->oracle ? -1 : s->algo;
    const int find = !e->oracle && s->find;
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    int got = 0;
    if (algo < 0) {
        /* the three perf structs share one layout; read algo and status */
        udnnConvolutionFwdAlgoPerf_t perf[8];
        memset(perf, 0, sizeof perf);
        switch (s->dir) {
        case DIR_FWD:
        case DIR_CBA:
            st = find ? udnnFindConvolutionForwardAlgorithm(e->h, x->desc, w->fdesc, s->conv,
                                                            y->desc, 8, &got, perf)
                      : udnnGetConvolutionForwardAlgorithm_v7(e->h, x->desc, w->fdesc, s->conv,
                                                              y->desc, 8, &got, perf);
            break;
        case DIR_BWD_DATA: {
            udnnConvolutionBwdDataAlgoPerf_t bd[8];
            st = find ? udnnFindConvolutionBackwardDataAlgorithm(e->h, w->fdesc, y->desc, s->conv,
                                                                 x->desc, 8, &got, bd)
                      : udnnGetConvolutionBackwardDataAlgorithm_v7(e->h, w->fdesc, y->desc,
                                                                   s->conv, x->desc, 8, &got, bd);
            for (int i = 0; i < got; i++) {
                perf[i].algo = (udnnConvolutionFwdAlgo_t)bd[i].algo;
                perf[i].status = bd[i].status;
            }
            break;
        }
        case DIR_BWD_FILTER: {
            udnnConvolutionBwdFilterAlgoPerf_t bf[8];
            st = find ? udnnFindConvolutionBackwardFilterAlgorithm(e->h, x->desc, y->desc, s->conv,
                                                                   w->fdesc, 8, &got, bf)
                      : udnnGetConvolutionBackwardFilterAlgorithm_v7(e->h, x->desc, y->desc,
                                                                     s->conv, w->fdesc, 8, &got,
                                                                     bf);
            for (int i = 0; i < got; i++) {
                perf[i].algo = (udnnConvolutionFwdAlgo_t)bf[i].algo;
                perf[i].status = bf[i].status;
            }
            break;
        }
        }
        if (st != UDNN_STATUS_SUCCESS) return st;
        for (int i = 0; i < got && algo < 0; i++)
            if (perf[i].status == UDNN_STATUS_SUCCESS) algo = perf[i].algo;
        if (algo < 0) return UDNN_STATUS_NOT_SUPPORTED;
    }
    e->algo = (int)algo;
    size_t ws = 0;
    switch (s->dir) {
    case DIR_FWD:
    case DIR_CBA:
        st = udnnGetConvolutionForwardWorkspaceSize(e->h, x->desc, w->fdesc, s->conv, y->desc,
                                                    (udnnConvolutionFwdAlgo_t)algo, &ws);
        break;
    case DIR_BWD_DATA:
        st = udnnGetConvolutionBackwardDataWorkspaceSize(e->h, w->fdesc, y->desc, s->conv, x->desc,
                                                         (udnnConvolutionBwdDataAlgo_t)algo, &ws);
        break;
    case DIR_BWD_FILTER:
        st = udnnGetConvolutionBackwardFilterWorkspaceSize(
            e->h, x->desc, y->desc, s->conv, w->fdesc, (udnnConvolutionBwdFilterAlgo_t)algo, &ws);
        break;
    }
    if (st != UDNN_STATUS_SUCCESS) return st;
    if (ws > 0 && (st = udnnMalloc(e->h, &e->ws, ws)) != UDNN_STATUS_SUCCESS) return st;
    e->ws_bytes = ws;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    conv_state *s = p->state;
    void *const *ptr = e->ptr[set];
    const bench_buf *x = s->x >= 0 ? &p->buf[s->x] : NULL, *w = s->w >= 0 ? &p->buf[s->w] : NULL;
    const bench_buf *y = &p->buf[s->y];
    switch (s->dir) {
    case DIR_FWD:
        return udnnConvolutionForward(e->h, &s->alpha, x->desc, ptr[s->x], w->fdesc, ptr[s->w],
                                      s->conv, (udnnConvolutionFwdAlgo_t)e->algo, e->ws,
                                      e->ws_bytes, &s->beta, y->desc, ptr[s->y]);
    case DIR_BWD_DATA:
        return udnnConvolutionBackwardData(e->h, &s->alpha, w->fdesc, ptr[s->w], y->desc,
                                           ptr[s->y], s->conv,
                                           (udnnConvolutionBwdDataAlgo_t)e->algo, e->ws,
                                           e->ws_bytes, &s->beta, x->desc, ptr[s->x]);
    case DIR_BWD_FILTER:
        return udnnConvolutionBackwardFilter(e->h, &s->alpha, x->desc, ptr[s->x], y->desc,
                                             ptr[s->y], s->conv,
                                             (udnnConvolutionBwdFilterAlgo_t)e->algo, e->ws,
                                             e->ws_bytes, &s->beta, w->fdesc, ptr[s->w]);
    case DIR_BWD_BIAS:
        return udnnConvolutionBackwardBias(e->h, &s->alpha, y->desc, ptr[s->y], &s->beta,
                                           p->buf[s->bias].desc, ptr[s->bias]);
    default:
        return udnnConvolutionBiasActivationForward(
            e->h, &s->alpha, x->desc, ptr[s->x], w->fdesc, ptr[s->w], s->conv,
            (udnnConvolutionFwdAlgo_t)e->algo, e->ws, e->ws_bytes, &s->alpha2,
            p->buf[s->z].desc, ptr[s->z], p->buf[s->bias].desc, ptr[s->bias], s->act, y->desc,
            ptr[s->y]);
    }
}

static void release(bench_problem *p, bench_exec *e)
{
    (void)p;
    if (e->ws != NULL) udnnFree(e->h, e->ws);
    e->ws = NULL;
    e->ws_bytes = 0;
}

static void teardown(bench_problem *p)
{
    conv_state *s = p->state;
    if (s == NULL) return;
    if (s->conv) udnnDestroyConvolutionDescriptor(s->conv);
    if (s->act) udnnDestroyActivationDescriptor(s->act);
    free(s);
    p->state = NULL;
}

const bench_family bench_family_conv = {
    .name = "conv", .setup = setup_conv, .prepare = prepare, .run = run, .release = release,
    .teardown = teardown};
const bench_family bench_family_cba = {
    .name = "cba", .setup = setup_cba, .prepare = prepare, .run = run, .release = release,
    .teardown = teardown};
