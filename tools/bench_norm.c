/* bench_norm.c - the normalization families: bn (batch norm, --dir
 * fwd-train, fwd-infer, bwd), norm (layer and RMS norm) and groupnorm.
 * A backward problem's saved statistics come from the forward pass over
 * its x (derive), as a training step has them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/bench_data.h"
#include "tools/bench_families.h"

enum { BN_FWD_TRAIN, BN_FWD_INFER, BN_BWD };
enum { FAM_BN, FAM_NORM, FAM_GROUPNORM };

typedef struct {
    int fam, dir;
    int mode;      /* udnnBatchNormMode_t or udnnNormMode_t */
    int norm_dims; /* norm */
    int groups;    /* groupnorm */
    double epsilon, factor;
    bench_scalar alpha, beta, alpha_param, beta_param;
    double alpha_param_v, beta_param_v; /* bn backward's, for the peer */
    /* buffer indices, -1 when absent */
    int x, y, dy, dx, scale, bias, mean, var, save_mean, save_inv, dscale, dbias;
    udnnTensorDescriptor_t stats; /* norm: statsDesc (a buffer's, or NULL) */
} norm_state;

/* Side tensors are FLOAT but for DOUBLE data. */
static udnnDataType_t side_type(udnnDataType_t t)
{
    return t == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
}

static int add_side(bench_problem *p, const char *role, const int dims[], int rank, bench_io io,
                    double lo, double hi)
{
    int i = bench_add_tensor(p, role, side_type(p->dtype), rank, dims, io);
    if (i >= 0) {
        p->buf[i].lo = lo;
        p->buf[i].hi = hi;
    }
    return i;
}

static int setup_bn(bench_problem *p, norm_state *s, int rank, const int xd[])
{
    static const char *const dirs[] = {"fwd-train", "fwd-infer", "bwd"};
    static const char *const modes[] = {"per-activation", "spatial", "spatial-persistent"};
    if ((s->dir = bench_opt_choice(p, "dir", dirs, 3, BN_FWD_TRAIN)) < 0) return -1;
    if ((s->mode = bench_opt_choice(p, "mode", modes, 3, UDNN_BATCHNORM_SPATIAL)) < 0) return -1;
    snprintf(p->dir, sizeof p->dir, "%s", dirs[s->dir]);
    if (s->dir == BN_FWD_TRAIN && bench_opt_real(p, "exp-avg-factor", 0.1, &s->factor) < 0)
        return -1;
    const int no_running = s->dir == BN_FWD_TRAIN && bench_arg_flag(p->args, "no-running");
    const int no_saved = s->dir != BN_FWD_INFER && bench_arg_flag(p->args, "no-saved");
    double ap = 1.0, bp = 0.0;
    if (s->dir == BN_BWD && (bench_opt_real(p, "alpha-param", 1.0, &ap) < 0 ||
                             bench_opt_real(p, "beta-param", 0.0, &bp) < 0))
        return -1;
    s->alpha_param = bench_scalar_of(p->dtype, ap);
    s->beta_param = bench_scalar_of(p->dtype, bp);
    s->alpha_param_v = ap;
    s->beta_param_v = bp;

    int pd[UDNN_DIM_MAX];
    for (int i = 0; i < rank; i++)
        pd[i] = i == 1 || (s->mode == UDNN_BATCHNORM_PER_ACTIVATION && i > 1) ? xd[i] : 1;
    if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, xd, BENCH_IN)) < 0) return -1;
    if (s->dir == BN_BWD) {
        if ((s->dy = bench_add_tensor(p, "dy", p->dtype, rank, xd, BENCH_IN)) < 0 ||
            (s->dx = bench_add_tensor(p, "dx", p->dtype, rank, xd, BENCH_OUT)) < 0 ||
            (s->scale = add_side(p, "scale:param", pd, rank, BENCH_IN, 0.5, 1.5)) < 0 ||
            (s->dscale = add_side(p, "dscale:param", pd, rank, BENCH_OUT, -1, 1)) < 0 ||
            (s->dbias = add_side(p, "dbias:param", pd, rank, BENCH_OUT, -1, 1)) < 0)
            return -1;
        p->buf[s->dscale].blend = p->buf[s->dbias].blend = bp != 0.0;
        if (!no_saved &&
            ((s->save_mean = add_side(p, "mean:param", pd, rank, BENCH_IN, -1, 1)) < 0 ||
             (s->save_inv = add_side(p, "invstd:param", pd, rank, BENCH_IN, 0.5, 2)) < 0))
            return -1;
        return 0;
    }
    if ((s->y = bench_add_tensor(p, "y", p->dtype, rank, xd, BENCH_OUT)) < 0 ||
        (s->scale = add_side(p, "scale:param", pd, rank, BENCH_IN, 0.5, 1.5)) < 0 ||
        (s->bias = add_side(p, "bias:param", pd, rank, BENCH_IN, -1, 1)) < 0)
        return -1;
    if (s->dir == BN_FWD_INFER)
        return (s->mean = add_side(p, "mean:param", pd, rank, BENCH_IN, -1, 1)) < 0 ||
                       (s->var = add_side(p, "var:param", pd, rank, BENCH_IN, 0.5, 1.5)) < 0
                   ? -1
                   : 0;
    if (!no_running && ((s->mean = add_side(p, "rmean:param", pd, rank, BENCH_INOUT, -1, 1)) < 0 ||
                        (s->var = add_side(p, "rvar:param", pd, rank, BENCH_INOUT, 0.5, 1.5)) < 0))
        return -1;
    if (!no_saved && ((s->save_mean = add_side(p, "smean:param", pd, rank, BENCH_OUT, -1, 1)) < 0 ||
                      (s->save_inv = add_side(p, "sinvstd:param", pd, rank, BENCH_OUT, -1, 1)) < 0))
        return -1;
    return 0;
}

/* norm and groupnorm: scale 1 in the leading dims (norm) or 1 x C x 1
 * (groupnorm); stats the leading dims (norm) or N x groups x 1. */
static int setup_layer(bench_problem *p, norm_state *s, int rank, const int xd[])
{
    static const char *const dirs[] = {"fwd", "bwd"};
    if ((s->dir = bench_opt_choice(p, "dir", dirs, 2, 0)) < 0) return -1;
    snprintf(p->dir, sizeof p->dir, "%s", dirs[s->dir]);
    const int fwd = s->dir == 0;
    int sd[UDNN_DIM_MAX], td[UDNN_DIM_MAX];
    if (s->fam == FAM_NORM) {
        static const char *const modes[] = {"layer", "rms"};
        long nd;
        if ((s->mode = bench_opt_choice(p, "mode", modes, 2, UDNN_NORM_LAYER)) < 0 ||
            bench_opt_int(p, "norm-dims", 1, &nd) < 0)
            return -1;
        s->norm_dims = (int)nd;
        for (int i = 0; i < rank; i++) {
            sd[i] = i < rank - nd ? 1 : xd[i];
            td[i] = i < rank - nd ? xd[i] : 1;
        }
    } else {
        long g;
        if (bench_opt_int(p, "groups", 1, &g) < 0) return -1;
        s->groups = (int)g;
        s->mode = UDNN_NORM_LAYER;
        for (int i = 0; i < rank; i++) {
            sd[i] = i == 1 ? xd[1] : 1;
            td[i] = i == 0 ? xd[0] : i == 1 ? (int)g : 1;
        }
    }
    const int rms = s->mode == UDNN_NORM_RMS;
    const int no_bias = rms || bench_arg_flag(p->args, "no-bias");
    const int no_stats = fwd && bench_arg_flag(p->args, "no-stats");
    if ((s->x = bench_add_tensor(p, "x", p->dtype, rank, xd, BENCH_IN)) < 0) return -1;
    if (fwd) {
        if ((s->y = bench_add_tensor(p, "y", p->dtype, rank, xd, BENCH_OUT)) < 0 ||
            (s->scale = add_side(p, "scale", sd, rank, BENCH_IN, 0.5, 1.5)) < 0 ||
            (!no_bias && (s->bias = add_side(p, "bias:scale", sd, rank, BENCH_IN, -1, 1)) < 0))
            return -1;
        if (!no_stats &&
            ((s->save_mean = add_side(p, "mean:stats", td, rank, BENCH_OUT, -1, 1)) < 0 ||
             (s->save_inv = add_side(p, "invstd:stats", td, rank, BENCH_OUT, -1, 1)) < 0))
            return -1;
    } else {
        if ((s->dy = bench_add_tensor(p, "dy", p->dtype, rank, xd, BENCH_IN)) < 0 ||
            (s->dx = bench_add_tensor(p, "dx", p->dtype, rank, xd, BENCH_OUT)) < 0 ||
            (s->scale = add_side(p, "scale", sd, rank, BENCH_IN, 0.5, 1.5)) < 0 ||
            (s->dscale = add_side(p, "dscale:scale", sd, rank, BENCH_OUT, -1, 1)) < 0 ||
            (!no_bias && (s->dbias = add_side(p, "dbias:scale", sd, rank, BENCH_OUT, -1, 1)) < 0) ||
            (!rms && (s->save_mean = add_side(p, "mean:stats", td, rank, BENCH_IN, -1, 1)) < 0) ||
            (s->save_inv = add_side(p, "invstd:stats", td, rank, BENCH_IN, 0.5, 2)) < 0)
            return -1;
    }
    if (s->save_inv >= 0) s->stats = p->buf[s->save_inv].desc;
    if (fwd && bench_opt_real(p, "epsilon", 1e-5, &s->epsilon) < 0) return -1;
    return 0;
}

static int setup(bench_problem *p, int fam)
{
    norm_state *s = calloc(1, sizeof *s);
    if (s == NULL) return bench_fail(p, "out of memory");
    p->state = s;
    s->fam = fam;
    s->x = s->y = s->dy = s->dx = s->scale = s->bias = s->mean = s->var = -1;
    s->save_mean = s->save_inv = s->dscale = s->dbias = -1;
    int xd[UDNN_DIM_MAX];
    const int rank = bench_main_dims(p, xd);
    if (rank < 0) return -1;
    double alpha = 1.0, beta = 0.0;
    if (fam == FAM_BN) {
        if (bench_opt_real(p, "alpha", 1.0, &alpha) < 0 ||
            bench_opt_real(p, "beta", 0.0, &beta) < 0 ||
            bench_opt_real(p, "epsilon", 1e-5, &s->epsilon) < 0)
            return -1;
        s->alpha = bench_scalar_of(p->dtype, alpha);
        s->beta = bench_scalar_of(p->dtype, beta);
        if (setup_bn(p, s, rank, xd) < 0) return -1;
        p->buf[s->dir == BN_BWD ? s->dx : s->y].blend = beta != 0.0;
        static const bench_peer_op ops[] = {BENCH_PEER_BN_FWD_TRAIN, BENCH_PEER_BN_FWD_INFER,
                                            BENCH_PEER_BN_BWD};
        bench_peer_info *pi = &p->peer;
        pi->op = ops[s->dir];
        pi->src = s->x;
        pi->dst = s->y;
        pi->diff_dst = s->dy;
        pi->diff_src = s->dx;
        pi->scale = s->scale;
        pi->bias = s->bias;
        /* inference's estimates; training's running averages */
        pi->mean = s->dir == BN_FWD_INFER ? s->mean : -1;
        pi->var = s->dir == BN_FWD_INFER ? s->var : -1;
        pi->run_mean = s->dir == BN_FWD_TRAIN ? s->mean : -1;
        pi->run_var = s->dir == BN_FWD_TRAIN ? s->var : -1;
        pi->save_mean = s->save_mean;
        pi->save_inv = s->save_inv;
        pi->dscale = s->dscale;
        pi->dbias = s->dbias;
        pi->mode = s->mode;
        pi->param[0] = s->epsilon;
        pi->param[1] = s->factor;
        pi->alpha = alpha;
        pi->beta = beta;
        pi->alpha2 = s->dir == BN_BWD ? s->alpha_param_v : 1.0;
        pi->beta2 = s->dir == BN_BWD ? s->beta_param_v : 0.0;
    } else if (setup_layer(p, s, rank, xd) < 0) {
        return -1;
    }
    for (int i = 0; i < p->nbufs; i++)
        p->bytes_moved += bench_logical_bytes(&p->buf[i]) * (p->buf[i].blend ? 2 : 1);

    char d[96];
    bench_dims_str(d, sizeof d, rank, xd);
    static const char *const bn_modes[] = {"per-activation", "spatial", "spatial-persistent"};
    if (fam == FAM_BN) snprintf(p->name, sizeof p->name, "%s:%s:%s", p->dir, bn_modes[s->mode], d);
    else if (fam == FAM_NORM)
        snprintf(p->name, sizeof p->name, "%s:%s%d:%s", p->dir, s->mode ? "rms" : "layer",
                 s->norm_dims, d);
    else snprintf(p->name, sizeof p->name, "%s:g%d:%s", p->dir, s->groups, d);
    return 0;
}

static int setup_bn_family(bench_problem *p)
{
    return setup(p, FAM_BN);
}

static int setup_norm(bench_problem *p)
{
    return setup(p, FAM_NORM);
}

static int setup_groupnorm(bench_problem *p)
{
    return setup(p, FAM_GROUPNORM);
}

/* A pointer to buffer i of a set, or NULL when the problem has none. */
#define PTR(i) ((i) >= 0 ? ptr[i] : NULL)
#define DESC(i) ((i) >= 0 ? p->buf[i].desc : NULL)

static udnnStatus_t run_on(bench_problem *p, udnnHandle_t h, void *const *ptr)
{
    norm_state *s = p->state;
    if (s->fam == FAM_BN) {
        const udnnBatchNormMode_t mode = (udnnBatchNormMode_t)s->mode;
        const udnnTensorDescriptor_t pd = p->buf[s->scale].desc;
        switch (s->dir) {
        case BN_FWD_TRAIN:
            return udnnBatchNormalizationForwardTraining(
                h, mode, &s->alpha, &s->beta, DESC(s->x), PTR(s->x), DESC(s->y), PTR(s->y), pd,
                PTR(s->scale), PTR(s->bias), s->factor, PTR(s->mean), PTR(s->var), s->epsilon,
                PTR(s->save_mean), PTR(s->save_inv));
        case BN_FWD_INFER:
            return udnnBatchNormalizationForwardInference(
                h, mode, &s->alpha, &s->beta, DESC(s->x), PTR(s->x), DESC(s->y), PTR(s->y), pd,
                PTR(s->scale), PTR(s->bias), PTR(s->mean), PTR(s->var), s->epsilon);
        default:
            return udnnBatchNormalizationBackward(
                h, mode, &s->alpha, &s->beta, &s->alpha_param, &s->beta_param, DESC(s->x),
                PTR(s->x), DESC(s->dy), PTR(s->dy), DESC(s->dx), PTR(s->dx), pd, PTR(s->scale),
                PTR(s->dscale), PTR(s->dbias), s->epsilon, PTR(s->save_mean), PTR(s->save_inv));
        }
    }
    const udnnTensorDescriptor_t sd = p->buf[s->scale].desc;
    if (s->dir == 0) {
        if (s->fam == FAM_NORM)
            return udnnNormForward(h, (udnnNormMode_t)s->mode, s->norm_dims, s->epsilon,
                                   DESC(s->x), PTR(s->x), sd, PTR(s->scale), PTR(s->bias),
                                   DESC(s->y), PTR(s->y), s->stats, PTR(s->save_mean),
                                   PTR(s->save_inv));
        return udnnGroupNormForward(h, s->groups, s->epsilon, DESC(s->x), PTR(s->x), sd,
                                    PTR(s->scale), PTR(s->bias), DESC(s->y), PTR(s->y), s->stats,
                                    PTR(s->save_mean), PTR(s->save_inv));
    }
    if (s->fam == FAM_NORM)
        return udnnNormBackward(h, (udnnNormMode_t)s->mode, s->norm_dims, DESC(s->x), PTR(s->x),
                                DESC(s->dy), PTR(s->dy), sd, PTR(s->scale), s->stats,
                                PTR(s->save_mean), PTR(s->save_inv), DESC(s->dx), PTR(s->dx),
                                PTR(s->dscale), PTR(s->dbias));
    return udnnGroupNormBackward(h, s->groups, DESC(s->x), PTR(s->x), DESC(s->dy), PTR(s->dy), sd,
                                 PTR(s->scale), s->stats, PTR(s->save_mean), PTR(s->save_inv),
                                 DESC(s->dx), PTR(s->dx), PTR(s->dscale), PTR(s->dbias));
}

static udnnStatus_t run(bench_problem *p, bench_exec *e, int set)
{
    return run_on(p, e->h, e->ptr[set]);
}

/* The saved statistics of a backward problem, from a forward over x. */
static int derive(bench_problem *p, udnnHandle_t cpu)
{
    norm_state *s = p->state;
    const int backward = s->fam == FAM_BN ? s->dir == BN_BWD : s->dir == 1;
    if (!backward || s->save_inv < 0) return 0;
    const bench_buf *x = &p->buf[s->x];
    void *y = malloc(x->bytes), *bias = NULL;
    const bench_buf *sc = &p->buf[s->scale];
    bias = calloc(1, sc->bytes);
    udnnStatus_t st = UDNN_STATUS_ALLOC_FAILED;
    if (y != NULL && bias != NULL) {
        const bench_scalar one = bench_scalar_of(p->dtype, 1.0),
                           zero = bench_scalar_of(p->dtype, 0.0);
        void *mean = s->save_mean >= 0 ? p->buf[s->save_mean].host : NULL;
        void *inv = p->buf[s->save_inv].host;
        if (s->fam == FAM_BN)
            st = udnnBatchNormalizationForwardTraining(
                cpu, (udnnBatchNormMode_t)s->mode, &one, &zero, x->desc, x->host, x->desc, y,
                sc->desc, sc->host, bias, 0.0, NULL, NULL, s->epsilon, mean, inv);
        else if (s->fam == FAM_NORM && mean == NULL) {
            /* RMS keeps no mean; the forward wants both or neither */
            void *tmp = malloc(p->buf[s->save_inv].bytes);
            st = tmp == NULL ? UDNN_STATUS_ALLOC_FAILED
                             : udnnNormForward(cpu, (udnnNormMode_t)s->mode, s->norm_dims, 1e-5,
                                               x->desc, x->host, sc->desc, sc->host, NULL, x->desc,
                                               y, s->stats, tmp, inv);
            free(tmp);
        } else if (s->fam == FAM_NORM)
            st = udnnNormForward(cpu, (udnnNormMode_t)s->mode, s->norm_dims, 1e-5, x->desc, x->host,
                                 sc->desc, sc->host, bias, x->desc, y, s->stats, mean, inv);
        else
            st = udnnGroupNormForward(cpu, s->groups, 1e-5, x->desc, x->host, sc->desc, sc->host,
                                      bias, x->desc, y, s->stats, mean, inv);
    }
    free(y);
    free(bias);
    return st == UDNN_STATUS_SUCCESS ? 0 : bench_fail_udnn(p, st, "the forward making the stats");
}

static void teardown(bench_problem *p)
{
    free(p->state);
    p->state = NULL;
}

const bench_family bench_family_bn = {
    .name = "bn", .setup = setup_bn_family, .run = run, .derive = derive, .teardown = teardown};
const bench_family bench_family_norm = {
    .name = "norm", .setup = setup_norm, .run = run, .derive = derive, .teardown = teardown};
const bench_family bench_family_groupnorm = {
    .name = "groupnorm", .setup = setup_groupnorm, .run = run, .derive = derive,
    .teardown = teardown};
