/* norm.h - the reference layer, RMS and group normalization, forward and
 * backward (cpu/ref/norm.c and the GPU backends' reference-bits solvers):
 * a set, or a parameter's gradients, at a time.
 *
 * Every variant normalizes "sets" of elements: layer and RMS norm have one
 * set per index of the leading dims, holding the trailing norm_dims dims;
 * group norm has one set per (n, group), holding the group's channels at
 * every spatial position. A set's statistics sit at one element of stats;
 * each of its elements takes its scale (and bias) from one element of the
 * scale tensor. Both directions read a whole set before writing any of it,
 * and write each element only at its own position, so y may be x and dx
 * may be x or dy (core checks that their layouts agree). */
#ifndef UDNN_REF_NORM_H
#define UDNN_REF_NORM_H

#include <math.h>
#include <string.h>

#include "backends/ref/ref.h"

/* Where the elements of a set are, for either family. */
typedef struct {
    int grouped;    /* group norm */
    int64_t sets;   /* leading index count, or n * groups */
    int64_t size;   /* elements per set */
    int64_t params; /* elements of scale (and of dscale, dbias) */
    /* group norm only */
    int64_t groups, channels_per_group, positions;
} ref_norm_sets;

UDNN_REF_FN int64_t ref_norm_product(const udnn_tensor *t, int from, int to)
{
    int64_t n = 1;
    for (int i = from; i < to; i++) n *= t->dims[i];
    return n;
}

UDNN_REF_FN ref_norm_sets ref_norm_geometry_of(const udnn_norm_problem *p, const udnn_tensor *x)
{
    ref_norm_sets g;
    memset(&g, 0, sizeof g);
    if (p->groups > 0) {
        g.grouped = 1;
        g.groups = p->groups;
        g.channels_per_group = x->dims[1] / p->groups;
        g.positions = ref_norm_product(x, 2, x->rank);
        g.sets = x->dims[0] * g.groups;
        g.size = g.channels_per_group * g.positions;
        g.params = x->dims[1];
    } else {
        int lead = x->rank - p->norm_dims;
        g.sets = ref_norm_product(x, 0, lead);
        g.size = ref_norm_product(x, lead, x->rank);
        g.params = g.size;
    }
    return g;
}

/* The index into scale of element j of set `set`. */
UDNN_REF_FN int64_t ref_norm_param_index(const ref_norm_sets *g, int64_t set, int64_t j)
{
    if (!g->grouped) return j;
    return (set % g->groups) * g->channels_per_group + j / g->positions;
}

/* Offset in t (x, y, dy or dx) of element j of set `set`. */
UDNN_REF_FN int64_t ref_norm_elem_off(const ref_norm_sets *g, const udnn_tensor *t, int64_t set,
                                      int64_t j)
{
    if (!g->grouped) return ref_offset(t, set * g->size + j);
    return ref_off_ncs(t, set / g->groups, ref_norm_param_index(g, set, j), j % g->positions);
}

/* Offset in scale, bias, dscale or dbias of parameter index c: scale is 1
 * in every dim but the normalized ones (or C), so its row-major index is
 * the parameter index. */
UDNN_REF_FN int64_t ref_norm_param_off(const udnn_tensor *scale, int64_t c)
{
    return ref_offset(scale, c);
}

/* Offset in stats of set `set`: stats has the set's index in its leading
 * dims (layer) or at (n, group) (group norm), and 1 elsewhere. */
UDNN_REF_FN int64_t ref_norm_stats_off(const ref_norm_sets *g, const udnn_tensor *stats,
                                       int64_t set)
{
    if (!g->grouped) return ref_offset(stats, set);
    return (set / g->groups) * stats->strides[0] + (set % g->groups) * stats->strides[1];
}

UDNN_REF_FN double ref_norm_load(const ref_norm_sets *g, const udnn_tensor *t, const void *base,
                                 int64_t set, int64_t j)
{
    return ref_load(base, t->dtype, ref_norm_elem_off(g, t, set, j));
}

/* The normalized input of element j of set `set`, from the saved stats. */
UDNN_REF_FN double ref_norm_xhat(const udnn_norm_problem *p, const ref_norm_sets *g, int rms,
                                 int64_t set, int64_t j)
{
    int64_t so = ref_norm_stats_off(g, &p->stats, set);
    double mean = rms ? 0.0 : ref_load(p->saved_mean_ptr, p->stats.dtype, so);
    double inv_std = ref_load(p->saved_inv_std_ptr, p->stats.dtype, so);
    return (ref_norm_load(g, &p->x, p->x_ptr, set, j) - mean) * inv_std;
}

/* A problem with its sets, as the functions below read it. */
typedef struct {
    udnn_norm_problem p;
    ref_norm_sets g;
    int rms;
} ref_norm_plan;

UDNN_REF_FN ref_norm_plan ref_norm_plan_of(const udnn_norm_problem *p)
{
    ref_norm_plan r;
    r.p = *p;
    r.g = ref_norm_geometry_of(p, &p->x);
    r.rms = !r.g.grouped && p->mode == UDNN_NORM_RMS;
    return r;
}

/* Set `set` of the forward: its statistics, saved where asked, then y. */
UDNN_REF_FN void ref_norm_fwd_set(const ref_norm_plan *r, int64_t set)
{
    const udnn_norm_problem *p = &r->p;
    const ref_norm_sets *g = &r->g;
    const udnn_tensor *x = &p->x, *y = &p->y, *sc = &p->scale;
    /* two passes: the mean first, then the variance about it */
    double mean = 0.0;
    if (!r->rms) {
        for (int64_t j = 0; j < g->size; j++) mean += ref_norm_load(g, x, p->x_ptr, set, j);
        mean /= (double)g->size;
    }
    double var = 0.0;
    for (int64_t j = 0; j < g->size; j++) {
        double d = ref_norm_load(g, x, p->x_ptr, set, j) - mean;
        var += d * d;
    }
    var /= (double)g->size;
    double inv_std = 1.0 / sqrt(var + p->epsilon);
    if (p->save_mean_ptr != NULL)
        ref_store(p->save_mean_ptr, p->stats.dtype, ref_norm_stats_off(g, &p->stats, set), mean);
    if (p->save_inv_std_ptr != NULL)
        ref_store(p->save_inv_std_ptr, p->stats.dtype, ref_norm_stats_off(g, &p->stats, set),
                  inv_std);
    for (int64_t j = 0; j < g->size; j++) {
        int64_t po = ref_norm_param_off(sc, ref_norm_param_index(g, set, j));
        double xhat = (ref_norm_load(g, x, p->x_ptr, set, j) - mean) * inv_std;
        double out = xhat * ref_load(p->scale_ptr, sc->dtype, po);
        if (!r->rms && p->bias_ptr != NULL) out += ref_load(p->bias_ptr, sc->dtype, po);
        ref_store(p->out_ptr, y->dtype, ref_norm_elem_off(g, y, set, j), out);
    }
}

/* Parameter c of the backward: dscale[c] = sum of dy * xhat and dbias[c] =
 * sum of dy over the elements it scales. Every parameter's before any dx:
 * dx may be dy's or x's buffer. */
UDNN_REF_FN void ref_norm_param_grad(const ref_norm_plan *r, int64_t c)
{
    const udnn_norm_problem *p = &r->p;
    const ref_norm_sets *g = &r->g;
    const udnn_tensor *dy = &p->dy, *sc = &p->scale;
    double dscale = 0.0, dbias = 0.0;
    for (int64_t set = 0; set < g->sets; set++) {
        if (g->grouped && (set % g->groups) != c / g->channels_per_group) continue;
        /* the elements of this set that parameter c scales */
        int64_t first = g->grouped ? (c % g->channels_per_group) * g->positions : c;
        int64_t count = g->grouped ? g->positions : 1;
        for (int64_t j = first; j < first + count; j++) {
            double dyv = ref_norm_load(g, dy, p->dy_ptr, set, j);
            dscale += dyv * ref_norm_xhat(p, g, r->rms, set, j);
            dbias += dyv;
        }
    }
    int64_t po = ref_norm_param_off(sc, c);
    ref_store(p->dscale_ptr, sc->dtype, po, dscale);
    if (!r->rms && p->dbias_ptr != NULL) ref_store(p->dbias_ptr, sc->dtype, po, dbias);
}

/* Set `set` of dx. With g = dy * scale and means over the set:
 * layer and group: dx = inv_std * (g - mean(g) - xhat * mean(g * xhat));
 * RMS:             dx = inv_rms * (g - xhat * mean(g * xhat)). */
UDNN_REF_FN void ref_norm_bwd_set(const ref_norm_plan *r, int64_t set)
{
    const udnn_norm_problem *p = &r->p;
    const ref_norm_sets *g = &r->g;
    const udnn_tensor *dy = &p->dy, *dx = &p->dx, *sc = &p->scale;
    double inv_std =
        ref_load(p->saved_inv_std_ptr, p->stats.dtype, ref_norm_stats_off(g, &p->stats, set));
    double sum_g = 0.0, sum_g_xhat = 0.0;
    for (int64_t j = 0; j < g->size; j++) {
        double scale = ref_load(p->scale_ptr, sc->dtype,
                                ref_norm_param_off(sc, ref_norm_param_index(g, set, j)));
        double grad = ref_norm_load(g, dy, p->dy_ptr, set, j) * scale;
        sum_g += grad;
        sum_g_xhat += grad * ref_norm_xhat(p, g, r->rms, set, j);
    }
    double mean_g = r->rms ? 0.0 : sum_g / (double)g->size;
    double mean_g_xhat = sum_g_xhat / (double)g->size;
    for (int64_t j = 0; j < g->size; j++) {
        double scale = ref_load(p->scale_ptr, sc->dtype,
                                ref_norm_param_off(sc, ref_norm_param_index(g, set, j)));
        double grad = ref_norm_load(g, dy, p->dy_ptr, set, j) * scale;
        double xhat = ref_norm_xhat(p, g, r->rms, set, j);
        double out = inv_std * (grad - mean_g - xhat * mean_g_xhat);
        ref_store(p->out_ptr, dx->dtype, ref_norm_elem_off(g, dx, set, j), out);
    }
}

#endif /* UDNN_REF_NORM_H */
