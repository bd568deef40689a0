/* dispatch.c - picks and runs a backend's solver for an op; ranks and
 * measures algorithms for the conv queries. Written once for every op. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"

/* 1 when name is in the comma-separated list; an entry ending in '*'
 * matches every name that starts with the rest of it ("fast_*"). */
static int name_listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        while (n > 0 && *p == ' ') p++, n--;
        while (n > 0 && p[n - 1] == ' ') n--;
        if (n > 0 && p[n - 1] == '*') {
            if (strncmp(p, name, n - 1) == 0) return 1;
        } else if (n == len && strncmp(p, name, n) == 0) {
            return 1;
        }
        p = end ? end + 1 : p + strlen(p);
    }
    return 0;
}

int udnn_solver_enabled(const udnn_solver *s)
{
    const char *disabled = getenv("UDNN_DISABLE_SOLVERS");
    if (disabled != NULL && name_listed(disabled, s->name)) return 0;
    const char *det = getenv("UDNN_DETERMINISTIC");
    if (det == NULL) return 1;
    if (strcmp(det, "1") == 0) return s->deterministic != UDNN_SOLVER_NONDETERMINISTIC;
    if (strcmp(det, "reference") == 0) return s->deterministic == UDNN_SOLVER_REFERENCE_BITS;
    return 1;
}

static int solver_applies(const udnn_solver *s, const void *problem, const char **why)
{
    *why = NULL;
    if (!udnn_solver_enabled(s)) {
        *why = "disabled by UDNN_DISABLE_SOLVERS or UDNN_DETERMINISTIC";
        return 0;
    }
    if (s->applicable != NULL && !s->applicable(problem, why)) {
        if (*why == NULL) *why = "not applicable";
        return 0;
    }
    return 1;
}

const udnn_solver *udnn_find_solver(udnnHandle_t h, udnn_op op, int algo, int *disabled)
{
    const udnn_backend *be = h->backend;
    *disabled = 0;
    for (size_t i = 0; i < be->solver_count; i++) {
        const udnn_solver *s = be->solvers[i];
        if (s->op != op || s->algo != algo) continue;
        if (udnn_solver_enabled(s)) return s;
        *disabled = 1;
    }
    return NULL;
}

size_t udnn_dispatch_workspace(udnnHandle_t h, udnn_op op, const void *problem)
{
    const udnn_backend *be = h->backend;
    for (size_t i = 0; i < be->solver_count; i++) {
        const udnn_solver *s = be->solvers[i];
        const char *why;
        if (s->op == op && solver_applies(s, problem, &why))
            return s->workspace ? s->workspace(problem) : 0;
    }
    return 0;
}

static udnnStatus_t run_solver(udnnHandle_t h, const char *fn, const udnn_solver *s,
                               const void *problem, void *workspace, size_t workspace_bytes)
{
    udnn_log(UDNN_LOG_DISPATCH, "%s: %s backend runs solver %s", fn, h->backend->name, s->name);
    udnnStatus_t st = s->run(h->ctx, problem, workspace, workspace_bytes);
    if (st != UDNN_STATUS_SUCCESS) {
        char why[1024];
        udnnGetLastErrorString(why, sizeof why);
        return udnn_fail(st, "%s: solver %s failed: %s", fn, s->name, why);
    }
    return UDNN_STATUS_SUCCESS;
}

/* run_solver, checked against the CPU reference under UDNN_VERIFY. */
static udnnStatus_t run_verified(udnnHandle_t h, const char *fn, const udnn_solver *s, udnn_op op,
                                 int algo, const void *problem, void *workspace,
                                 size_t workspace_bytes)
{
    if (!udnn_verify_wanted(h)) return run_solver(h, fn, s, problem, workspace, workspace_bytes);
    udnn_verify_snapshot *snap = udnn_verify_begin(h, fn, op, problem);
    udnnStatus_t st = run_solver(h, fn, s, problem, workspace, workspace_bytes);
    if (snap == NULL) return st;
    if (st != UDNN_STATUS_SUCCESS) {
        udnn_verify_discard(snap);
        return st;
    }
    return udnn_verify_end(h, fn, op, algo, problem, snap);
}

udnnStatus_t udnn_dispatch(udnnHandle_t h, const char *fn, udnn_op op, int algo,
                           const void *problem, void *workspace, size_t workspace_bytes)
{
    const udnn_backend *be = h->backend;
    const char *why = NULL;
    const udnn_solver *rejected = NULL;
    /* every op passes here, valid: the one place to print its reproducer */
    if (udnn_log_enabled(UDNN_LOG_API)) udnn_log_repro(h, fn, op, algo, problem);
    for (size_t i = 0; i < be->solver_count; i++) {
        const udnn_solver *s = be->solvers[i];
        if (s->op != op || (algo >= 0 && s->algo != algo)) continue;
        if (!solver_applies(s, problem, &why)) {
            udnn_log(UDNN_LOG_DISPATCH, "%s: solver %s rejected: %s", fn, s->name, why);
            rejected = s;
            continue;
        }
        size_t need = s->workspace ? s->workspace(problem) : 0;
        if (need > workspace_bytes || (need > 0 && workspace == NULL)) {
            if (algo >= 0)
                return udnn_fail(UDNN_STATUS_BAD_PARAM,
                                 "%s: workSpaceSizeInBytes is %zu (workSpace %s); algo %d needs "
                                 "%zu bytes",
                                 fn, workspace_bytes, workspace ? "set" : "NULL", algo, need);
            udnn_log(UDNN_LOG_DISPATCH, "%s: solver %s rejected: needs %zu workspace bytes", fn,
                     s->name, need);
            rejected = s;
            why = "needs more workspace than given";
            continue;
        }
        return run_verified(h, fn, s, op, algo, problem, workspace, workspace_bytes);
    }
    if (rejected != NULL)
        return udnn_fail(UDNN_STATUS_NOT_SUPPORTED, "%s: solver %s of the %s backend: %s", fn,
                         rejected->name, be->name, why);
    if (algo >= 0)
        return udnn_fail(UDNN_STATUS_NOT_SUPPORTED,
                         "%s: algo %d is not available on the %s backend", fn, algo, be->name);
    return udnn_fail(UDNN_STATUS_NOT_SUPPORTED, "%s: the %s backend has no solver for this op",
                     fn, be->name);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* Applicable first (by measured time when measured, else table order), then
 * the rest by algo value. */
static int compare_rank(const void *pa, const void *pb)
{
    const udnn_algo_rank *a = pa, *b = pb;
    int oka = a->status == UDNN_STATUS_SUCCESS, okb = b->status == UDNN_STATUS_SUCCESS;
    if (oka != okb) return okb - oka;
    if (oka && a->time_ms != b->time_ms) return a->time_ms < b->time_ms ? -1 : 1;
    return a->algo - b->algo;
}

int udnn_rank_algos(udnnHandle_t h, udnn_op op, int algo_count, void *problem, int measure,
                    void *workspace, size_t workspace_bytes, udnn_algo_rank *out, int max)
{
    const udnn_backend *be = h->backend;
    udnn_algo_rank *all = calloc((size_t)algo_count, sizeof *all);
    if (all == NULL) return -1;
    int n = 0;
    /* the backend's solvers in table order: fastest first */
    for (size_t i = 0; i < be->solver_count; i++) {
        const udnn_solver *s = be->solvers[i];
        if (s->op != op || s->algo < 0 || s->algo >= algo_count) continue;
        /* an algo's first applicable solver ranks it; a later one of the
         * same algo stands in where the first does not apply (or is
         * disabled) */
        udnn_algo_rank *r = NULL;
        for (int j = 0; j < n && r == NULL; j++)
            if (all[j].algo == s->algo) r = &all[j];
        if (r != NULL && r->status != UDNN_STATUS_NOT_SUPPORTED) continue;
        const char *why;
        if (r == NULL) r = &all[n++];
        r->algo = s->algo;
        r->deterministic = s->deterministic;
        r->time_ms = -1.0f;
        if (!solver_applies(s, problem, &why)) {
            r->status = UDNN_STATUS_NOT_SUPPORTED;
            continue;
        }
        r->memory = s->workspace ? s->workspace(problem) : 0;
        r->status = UDNN_STATUS_SUCCESS;
        r->time_ms = (float)n; /* table order until measured */
        if (measure) {
            if (r->memory > workspace_bytes) {
                r->status = UDNN_STATUS_ALLOC_FAILED;
                r->time_ms = -1.0f;
                continue;
            }
            be->synchronize(h->ctx);
            double t0 = now_ms();
            udnnStatus_t st = s->run(h->ctx, problem, workspace, workspace_bytes);
            if (st == UDNN_STATUS_SUCCESS) st = be->synchronize(h->ctx);
            r->time_ms = st == UDNN_STATUS_SUCCESS ? (float)(now_ms() - t0) : -1.0f;
            r->status = st;
        }
    }
    /* the algorithms this backend lacks */
    for (int a = 0; a < algo_count; a++) {
        int seen = 0;
        for (int j = 0; j < n; j++) seen |= all[j].algo == a;
        if (seen) continue;
        all[n].algo = a;
        all[n].status = UDNN_STATUS_NOT_SUPPORTED;
        all[n].time_ms = -1.0f;
        n++;
    }
    qsort(all, (size_t)n, sizeof *all, compare_rank);
    if (!measure)
        for (int j = 0; j < n; j++) all[j].time_ms = -1.0f;
    int count = n < max ? n : max;
    memcpy(out, all, (size_t)count * sizeof *out);
    free(all);
    return count;
}
