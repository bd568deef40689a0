/* norm.c - reference layer, RMS and group normalization, forward and
 * backward.
 *
 * Every variant normalizes "sets" of elements: layer and RMS norm have one
 * set per index of the leading dims, holding the trailing norm_dims dims;
 * group norm has one set per (n, group), holding the group's channels at
 * every spatial position. A set's statistics sit at one element of stats;
 * each of its elements takes its scale (and bias) from one element of the
 * scale tensor. Both directions read a whole set before writing any of it,
 * and write each element only at its own position, so y may be x and dx
 * may be x or dy (core checks that their layouts agree). */
#include <math.h>

#include "cpu/cpu_solvers.h"

/* Where the elements of a set are, for either family. */
typedef struct {
    int grouped;    /* group norm */
    int64_t sets;   /* leading index count, or n * groups */
    int64_t size;   /* elements per set */
    int64_t params; /* elements of scale (and of dscale, dbias) */
    /* group norm only */
    int64_t groups, channels_per_group, positions;
} set_geometry;

static int64_t product(const udnn_tensor *t, int from, int to)
{
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= t->dims[i];
    return n;
}

static set_geometry geometry_of(const udnn_norm_problem *p, const udnn_tensor *x)
{
    set_geometry g = {0};
    if (p->groups > 0) {
        g.grouped = 1;
        g.groups = p->groups;
        g.channels_per_group = x->dims[1] / p->groups;
        g.positions = product(x, 2, x->rank);
        g.sets = x->dims[0] * g.groups;
        g.size = g.channels_per_group * g.positions;
        g.params = x->dims[1];
    } else {
        int lead = x->rank - p->norm_dims;
        g.sets = product(x, 0, lead);
        g.size = product(x, lead, x->rank);
        g.params = g.size;
    }
    return g;
}

/* The index into scale of element j of set `set`. */
static int64_t param_index(const set_geometry *g, int64_t set, int64_t j)
{
    if (!g->grouped) return j;
    return (set % g->groups) * g->channels_per_group + j / g->positions;
}

/* Offset in t (x, y, dy or dx) of element j of set `set`. */
static int64_t elem_off(const set_geometry *g, const udnn_tensor *t, int64_t set, int64_t j)
{
    if (!g->grouped) return ref_offset(t, set * g->size + j);
    return ref_off_ncs(t, set / g->groups, param_index(g, set, j), j % g->positions);
}

/* Offset in scale, bias, dscale or dbias of parameter index c: scale is 1
 * in every dim but the normalized ones (or C), so its row-major index is
 * the parameter index. */
static int64_t param_off(const udnn_tensor *scale, int64_t c)
{
    return ref_offset(scale, c);
}

/* Offset in stats of set `set`: stats has the set's index in its leading
 * dims (layer) or at (n, group) (group norm), and 1 elsewhere. */
static int64_t stats_off(const set_geometry *g, const udnn_tensor *stats, int64_t set)
{
    if (!g->grouped) return ref_offset(stats, set);
    return (set / g->groups) * stats->strides[0] + (set % g->groups) * stats->strides[1];
}

static double load_elem(const set_geometry *g, const udnn_tensor *t, const void *base,
                        int64_t set, int64_t j)
{
    return ref_load(base, t->dtype, elem_off(g, t, set, j));
}

static udnnStatus_t norm_fwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_norm_problem *p = problem;
    const udnn_tensor *x = &p->x, *y = &p->y, *sc = &p->scale;
    set_geometry g = geometry_of(p, x);
    int rms = !g.grouped && p->mode == UDNN_NORM_RMS;
    for (int64_t set = 0; set < g.sets; set++) {
        /* two passes: the mean first, then the variance about it */
        double mean = 0.0;
        if (!rms) {
            for (int64_t j = 0; j < g.size; j++) mean += load_elem(&g, x, p->x_ptr, set, j);
            mean /= (double)g.size;
        }
        double var = 0.0;
        for (int64_t j = 0; j < g.size; j++) {
            double d = load_elem(&g, x, p->x_ptr, set, j) - mean;
            var += d * d;
        }
        var /= (double)g.size;
        double inv_std = 1.0 / sqrt(var + p->epsilon);
        if (p->save_mean_ptr != NULL)
            ref_store(p->save_mean_ptr, p->stats.dtype, stats_off(&g, &p->stats, set), mean);
        if (p->save_inv_std_ptr != NULL)
            ref_store(p->save_inv_std_ptr, p->stats.dtype, stats_off(&g, &p->stats, set),
                      inv_std);
        for (int64_t j = 0; j < g.size; j++) {
            int64_t po = param_off(sc, param_index(&g, set, j));
            double xhat = (load_elem(&g, x, p->x_ptr, set, j) - mean) * inv_std;
            double out = xhat * ref_load(p->scale_ptr, sc->dtype, po);
            if (!rms && p->bias_ptr != NULL) out += ref_load(p->bias_ptr, sc->dtype, po);
            ref_store(p->out_ptr, y->dtype, elem_off(&g, y, set, j), out);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

/* The normalized input of element j of set `set`, from the saved stats. */
static double xhat_of(const udnn_norm_problem *p, const set_geometry *g, int rms, int64_t set,
                      int64_t j)
{
    int64_t so = stats_off(g, &p->stats, set);
    double mean = rms ? 0.0 : ref_load(p->saved_mean_ptr, p->stats.dtype, so);
    double inv_std = ref_load(p->saved_inv_std_ptr, p->stats.dtype, so);
    return (load_elem(g, &p->x, p->x_ptr, set, j) - mean) * inv_std;
}

/* dscale[c] = sum of dy * xhat and dbias[c] = sum of dy over the elements
 * that parameter c scales; one parameter at a time, so nothing is held. */
static void param_grads(const udnn_norm_problem *p, const set_geometry *g, int rms)
{
    const udnn_tensor *dy = &p->dy, *sc = &p->scale;
    for (int64_t c = 0; c < g->params; c++) {
        double dscale = 0.0, dbias = 0.0;
        for (int64_t set = 0; set < g->sets; set++) {
            if (g->grouped && (set % g->groups) != c / g->channels_per_group) continue;
            /* the elements of this set that parameter c scales */
            int64_t first = g->grouped ? (c % g->channels_per_group) * g->positions : c;
            int64_t count = g->grouped ? g->positions : 1;
            for (int64_t j = first; j < first + count; j++) {
                double dyv = load_elem(g, dy, p->dy_ptr, set, j);
                dscale += dyv * xhat_of(p, g, rms, set, j);
                dbias += dyv;
            }
        }
        int64_t po = param_off(sc, c);
        ref_store(p->dscale_ptr, sc->dtype, po, dscale);
        if (!rms && p->dbias_ptr != NULL) ref_store(p->dbias_ptr, sc->dtype, po, dbias);
    }
}

/* With g = dy * scale and means over the set:
 * layer and group: dx = inv_std * (g - mean(g) - xhat * mean(g * xhat));
 * RMS:             dx = inv_rms * (g - xhat * mean(g * xhat)). */
static udnnStatus_t norm_bwd_run(void *ctx, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_norm_problem *p = problem;
    const udnn_tensor *dy = &p->dy, *dx = &p->dx, *sc = &p->scale;
    set_geometry g = geometry_of(p, &p->x);
    int rms = !g.grouped && p->mode == UDNN_NORM_RMS;
    /* before dx: dx may be dy's or x's buffer */
    param_grads(p, &g, rms);
    for (int64_t set = 0; set < g.sets; set++) {
        double inv_std = ref_load(p->saved_inv_std_ptr, p->stats.dtype,
                                  stats_off(&g, &p->stats, set));
        double sum_g = 0.0, sum_g_xhat = 0.0;
        for (int64_t j = 0; j < g.size; j++) {
            double scale =
                ref_load(p->scale_ptr, sc->dtype, param_off(sc, param_index(&g, set, j)));
            double grad = load_elem(&g, dy, p->dy_ptr, set, j) * scale;
            sum_g += grad;
            sum_g_xhat += grad * xhat_of(p, &g, rms, set, j);
        }
        double mean_g = rms ? 0.0 : sum_g / (double)g.size;
        double mean_g_xhat = sum_g_xhat / (double)g.size;
        for (int64_t j = 0; j < g.size; j++) {
            double scale =
                ref_load(p->scale_ptr, sc->dtype, param_off(sc, param_index(&g, set, j)));
            double grad = load_elem(&g, dy, p->dy_ptr, set, j) * scale;
            double xhat = xhat_of(p, &g, rms, set, j);
            double out = inv_std * (grad - mean_g - xhat * mean_g_xhat);
            ref_store(p->out_ptr, dx->dtype, elem_off(&g, dx, set, j), out);
        }
    }
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_norm_fwd = {
    /* .name = */ "ref_norm_fwd",
    /* .op = */ UDNN_OP_NORM_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_fwd_run,
};

const udnn_solver udnn_cpu_ref_norm_bwd = {
    /* .name = */ "ref_norm_bwd",
    /* .op = */ UDNN_OP_NORM_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_bwd_run,
};

/* Group norm shares the runs: geometry_of tells the families apart by
 * p->groups. */
const udnn_solver udnn_cpu_ref_groupnorm_fwd = {
    /* .name = */ "ref_groupnorm_fwd",
    /* .op = */ UDNN_OP_GROUPNORM_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_fwd_run,
};

const udnn_solver udnn_cpu_ref_groupnorm_bwd = {
    /* .name = */ "ref_groupnorm_bwd",
    /* .op = */ UDNN_OP_GROUPNORM_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ UDNN_SOLVER_REFERENCE_BITS,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ norm_bwd_run,
};
