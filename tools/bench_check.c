/* bench_check.c - the check against cpu/ref. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_check.h"
#include "tools/bench_data.h"
#include "tools/bench_run.h"

/* Every solver of the CPU backend but the reference is named fast_...
 * (DESIGN.md); the oracle run disables them by that prefix. */
#define ORACLE_DISABLED "fast_*"

udnnStatus_t bench_with_oracle_env(udnnStatus_t (*f)(void *), void *arg)
{
    const char *old = getenv("UDNN_DISABLE_SOLVERS");
    char *saved = old ? strdup(old) : NULL;
    char list[1024];
    snprintf(list, sizeof list, "%s%s%s", ORACLE_DISABLED, old && *old ? "," : "",
             old ? old : "");
    setenv("UDNN_DISABLE_SOLVERS", list, 1);
    udnnStatus_t st = f(arg);
    if (saved) setenv("UDNN_DISABLE_SOLVERS", saved, 1);
    else unsetenv("UDNN_DISABLE_SOLVERS");
    free(saved);
    return st;
}

typedef struct {
    bench_problem *p;
    bench_exec *e;
    udnnHandle_t h;
} oracle_job;

static udnnStatus_t oracle_open_and_run(void *arg)
{
    oracle_job *j = arg;
    if (bench_exec_open(j->p, j->e, j->h, 1, 1) < 0) return UDNN_STATUS_EXECUTION_FAILED;
    udnnStatus_t st = j->p->family->run(j->p, j->e, 0);
    if (st == UDNN_STATUS_SUCCESS) st = udnnSynchronize(j->h);
    return st;
}

/* The error of output buffer i: normwise relative, or 0/inf when exact. */
static double output_error(const bench_buf *b, const void *out, const void *ref)
{
    if (b->exact) return memcmp(out, ref, b->bytes) == 0 ? 0.0 : INFINITY;
    return bench_rel_error(out, ref, b->dtype, b->rank, b->dims, b->strides);
}

void bench_check(bench_problem *p, bench_exec *e, udnnHandle_t oracle, bench_check_result *r)
{
    memset(r, 0, sizeof *r);
    r->tol = p->tolerance;
    void *got[BENCH_MAX_BUFS] = {0};
    bench_exec ox;
    memset(&ox, 0, sizeof ox);
    oracle_job job = {p, &ox, oracle};

    udnnStatus_t st = p->family->run(p, e, 0);
    if (st == UDNN_STATUS_SUCCESS) st = udnnSynchronize(e->h);
    if (st != UDNN_STATUS_SUCCESS) {
        bench_fail_udnn(p, st, "run");
        snprintf(r->msg, sizeof r->msg, "%s", p->err);
        goto done;
    }
    for (int i = 0; i < p->nbufs; i++) {
        if (p->buf[i].io == BENCH_IN) continue;
        if ((got[i] = malloc(p->buf[i].bytes)) == NULL ||
            udnnMemcpy(e->h, got[i], e->ptr[0][i], p->buf[i].bytes, UDNN_MEMCPY_DEVICE_TO_HOST) !=
                UDNN_STATUS_SUCCESS) {
            snprintf(r->msg, sizeof r->msg, "cannot read %s back", p->buf[i].role);
            goto done;
        }
    }

    p->err[0] = '\0';
    st = bench_with_oracle_env(oracle_open_and_run, &job);
    if (st != UDNN_STATUS_SUCCESS) {
        if (!p->err[0]) bench_fail_udnn(p, st, "the reference run");
        snprintf(r->msg, sizeof r->msg, "oracle: %.480s", p->err);
        goto done;
    }

    r->pass = 1;
    double worst = -1.0;
    for (int i = 0; i < p->nbufs; i++) {
        const bench_buf *b = &p->buf[i];
        if (b->io == BENCH_IN) continue;
        /* the oracle's buffers are CPU memory, which is host memory */
        const double err = output_error(b, got[i], ox.ptr[0][i]);
        double tol = b->exact ? 0.0 : bench_tolerance(b->dtype);
        if (!b->exact && tol < p->tolerance) tol = p->tolerance;
        /* the worst output by its share of its tolerance */
        const double share = err == 0.0 ? 0.0 : tol > 0.0 ? err / tol : INFINITY;
        if (!(err <= tol)) r->pass = 0;
        if (share > worst || isnan(share)) {
            worst = share;
            r->err = err;
            r->tol = tol;
            snprintf(r->what, sizeof r->what, "%s", b->role);
        }
    }
done:
    for (int i = 0; i < p->nbufs; i++) free(got[i]);
    if (ox.h != NULL) bench_exec_close(p, &ox);
    /* the timed runs start from the initial content again */
    bench_exec_upload(p, e, 0);
}
