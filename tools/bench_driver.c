/* bench_driver.c - one problem on each of its backends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_check.h"
#include "tools/bench_data.h"
#include "tools/bench_device.h"
#include "tools/bench_driver.h"
#include "tools/bench_peer.h"
#include "tools/bench_probe.h"
#include "tools/bench_report.h"
#include "tools/bench_run.h"

/* One handle per backend for the whole session; the CPU one also runs the
 * oracle (with the fast solvers disabled around those calls). */
static udnnHandle_t handles[UDNN_BACKEND_HIP + 1];

static const char *backend_name(udnnBackend_t b)
{
    switch (b) {
    case UDNN_BACKEND_CPU: return "cpu";
    case UDNN_BACKEND_CUDA: return "cuda";
    case UDNN_BACKEND_HIP: return "hip";
    default: return "auto";
    }
}

static udnnStatus_t get_handle(udnnBackend_t b, udnnHandle_t *out)
{
    if (handles[b] == NULL) {
        udnnStatus_t st = udnnCreateWithBackend(&handles[b], b, 0);
        if (st != UDNN_STATUS_SUCCESS) {
            handles[b] = NULL;
            return st;
        }
    }
    *out = handles[b];
    return UDNN_STATUS_SUCCESS;
}

void bench_session_end(bench_session *s)
{
    (void)s;
    for (int b = 0; b <= UDNN_BACKEND_HIP; b++)
        if (handles[b] != NULL) {
            udnnDestroy(handles[b]);
            handles[b] = NULL;
        }
}

/* The backends --backend names: cpu, cuda, hip, all (those with a
 * device) or auto (what udnnCreate picks). */
static int backends_of(const char *name, udnnBackend_t out[3], char *err, size_t n)
{
    if (name == NULL || strcmp(name, "auto") == 0) {
        udnnHandle_t h;
        udnnBackend_t b = UDNN_BACKEND_CPU;
        if (udnnCreate(&h) == UDNN_STATUS_SUCCESS) {
            udnnGetBackend(h, &b);
            udnnDestroy(h);
        }
        out[0] = b;
        return 1;
    }
    if (strcmp(name, "all") == 0) {
        int count = 0;
        for (int b = UDNN_BACKEND_CPU; b <= UDNN_BACKEND_HIP; b++) {
            int devices = 0;
            if (udnnGetDeviceCount((udnnBackend_t)b, &devices) == UDNN_STATUS_SUCCESS &&
                devices > 0)
                out[count++] = (udnnBackend_t)b;
        }
        return count;
    }
    for (int b = UDNN_BACKEND_CPU; b <= UDNN_BACKEND_HIP; b++)
        if (strcmp(name, backend_name((udnnBackend_t)b)) == 0) {
            out[0] = (udnnBackend_t)b;
            return 1;
        }
    snprintf(err, n, "--backend %s: expected cpu, cuda, hip, all or auto", name);
    return -1;
}

/* "nchw", "nhwc", or "strided" when some tensor has explicit strides. */
static const char *layout_name(const bench_problem *p)
{
    for (int i = 0; i < p->nbufs; i++)
        if (p->buf[i].strided) return "strided";
    return p->layout == UDNN_TENSOR_NHWC ? "nhwc" : "nchw";
}

int bench_run_option(const char *key)
{
    static const char *const keys[] = {"backend", "iters",     "warmup",   "max-ms",
                                       "burst",   "check",     "no-check", "compare",
                                       "rotate",  "no-solver", "clock"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(keys[i], key) == 0) return 1;
    return 0;
}

/* --clock: the device's events where the bench has them for the backend
 * (auto, the default), always (device: a row fails without them), or the
 * host's clock. */
typedef enum { CLOCK_AUTO, CLOCK_DEVICE, CLOCK_HOST } clock_choice;

/* The driver's own per-problem options. */
typedef struct {
    const char *backend;
    int check, compare, probe_solver;
    clock_choice clock;
    bench_timing timing;
    long sets;
} run_opts;

static int read_run_opts(bench_problem *p, run_opts *o)
{
    long warmup, iters, burst;
    double max_ms;
    o->backend = bench_arg(p->args, "backend");
    o->check = !bench_arg_flag(p->args, "no-check");
    bench_arg_flag(p->args, "check"); /* on by default; accepted */
    o->compare = bench_arg_flag(p->args, "compare");
    o->probe_solver = !bench_arg_flag(p->args, "no-solver");
    const char *clock = bench_arg(p->args, "clock");
    if (clock == NULL || strcmp(clock, "auto") == 0)
        o->clock = CLOCK_AUTO;
    else if (strcmp(clock, "device") == 0)
        o->clock = CLOCK_DEVICE;
    else if (strcmp(clock, "host") == 0)
        o->clock = CLOCK_HOST;
    else
        return bench_fail(p, "--clock %s: expected auto, device or host", clock);
    if (bench_opt_int(p, "warmup", 1, &warmup) < 0 || bench_opt_int(p, "iters", 10, &iters) < 0 ||
        bench_opt_int(p, "burst", 1, &burst) < 0 ||
        bench_opt_real(p, "max-ms", 2000.0, &max_ms) < 0 ||
        bench_opt_int(p, "rotate", 0, &o->sets) < 0)
        return -1;
    if (burst < 1 || burst > 1000) return bench_fail(p, "--burst %ld: expected 1 to 1000", burst);
    o->timing.warmup = (int)warmup;
    o->timing.iters = iters < 0 ? 0 : (int)iters;
    o->timing.burst = (int)burst;
    o->timing.max_ms = max_ms;
    if (o->sets <= 0) o->sets = bench_auto_sets(p);
    return 0;
}

typedef struct {
    bench_problem *p;
    udnnHandle_t cpu;
} derive_job;

static udnnStatus_t derive_on_oracle(void *arg)
{
    derive_job *j = arg;
    return j->p->family->derive(j->p, j->cpu) < 0 ? UDNN_STATUS_EXECUTION_FAILED
                                                   : UDNN_STATUS_SUCCESS;
}

/* Builds the problem: family, options, buffers, derived inputs. */
static int build(bench_problem *p, bench_args *a, run_opts *o, udnnHandle_t *cpu)
{
    const bench_family *f = bench_family_find(a->family);
    memset(p, 0, sizeof *p);
    if (f == NULL)
        return bench_fail(p, "'%s' is not an op family (%s)", a->family[0] ? a->family : "",
                          bench_family_list());
    /* the same data for the same problem, run after run */
    bench_seed(0x5eed0001u);
    if (bench_problem_init(p, f, a) < 0 || read_run_opts(p, o) < 0) return -1;
    if (bench_args_check_used(a, p->err, sizeof p->err) < 0) return -1;
    udnnStatus_t st = get_handle(UDNN_BACKEND_CPU, cpu);
    if (st != UDNN_STATUS_SUCCESS) return bench_fail_udnn(p, st, "the cpu handle");
    if (f->derive != NULL) {
        derive_job job = {p, *cpu};
        if (bench_with_oracle_env(derive_on_oracle, &job) != UDNN_STATUS_SUCCESS) return -1;
    }
    return 0;
}

static void fill_rate(const bench_problem *p, bench_row *r)
{
    const double seconds = r->times.median_ms * 1e-3;
    if (p->flops > 0) {
        r->rate = seconds > 0 ? p->flops / seconds * 1e-12 : 0.0;
        r->rate_unit = "TFLOP/s";
    } else {
        r->rate = seconds > 0 ? p->bytes_moved / seconds * 1e-9 : 0.0;
        r->rate_unit = "GB/s";
    }
}

/* The device clock of e's handle as --clock asks: 0, or -1 with p->err
 * where --clock device finds none. */
static int open_clock(bench_problem *p, bench_exec *e, const run_opts *o)
{
    if (o->clock == CLOCK_HOST) return 0;
    char msg[BENCH_ERR] = "";
    e->dev = bench_device_open(e->h, msg, sizeof msg);
    if (e->dev == NULL && o->clock == CLOCK_DEVICE) return bench_fail(p, "%s", msg);
    return 0;
}

/* One row: the problem on backend b. Returns 1 when it failed. */
static int run_on(bench_session *s, bench_problem *p, bench_args *a, const run_opts *o,
                  udnnBackend_t b, udnnHandle_t cpu)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    r.family = a->family;
    r.problem = p->name;
    r.backend = backend_name(b);
    r.dtype = bench_dtype_name(p->dtype);
    r.layout = layout_name(p);
    r.algo = -1;
    bench_exec e;
    memset(&e, 0, sizeof e);
    udnnHandle_t h;
    udnnStatus_t st = get_handle(b, &h);
    if (st != UDNN_STATUS_SUCCESS) {
        bench_fail_udnn(p, st, "creating the handle");
    } else if (bench_exec_open(p, &e, h, (int)o->sets, 0) == 0 && open_clock(p, &e, o) == 0) {
        r.algo = e.algo;
        if (o->check) {
            r.checked = 1;
            bench_check(p, &e, cpu, &r.check);
        }
        if (p->family->solver != NULL)
            snprintf(r.solver, sizeof r.solver, "%s", p->family->solver);
        else if (o->probe_solver &&
                 bench_probe_solver(a, r.backend, r.solver, sizeof r.solver) < 0)
            snprintf(r.solver, sizeof r.solver, "?");
        p->err[0] = '\0';
        if (o->timing.iters > 0 && bench_time(p, &e, &o->timing, &r.times) == 0) {
            r.timed = 1;
            fill_rate(p, &r);
        }
        /* the peer, while udnn's buffers are still there: a GPU peer runs
         * on them */
        if (r.timed && o->compare) {
            bench_peer_result peer;
            char msg[BENCH_ERR] = "";
            int got = bench_peer_time(p, &e, b, &o->timing, &peer, msg, sizeof msg);
            if (got == 0 && peer.times.median_ms > 0) {
                r.have_peer = 1;
                snprintf(r.peer, sizeof r.peer, "%s", peer.name);
                r.peer_ms = peer.times.median_ms;
                r.ratio = r.peer_ms / r.times.median_ms;
                s->ratios++;
                s->log_ratio_sum += log(r.ratio);
            } else if (got < 0) {
                fprintf(stderr, "udnn-bench: peer for %s %s: %s\n", a->family, p->name, msg);
            }
        }
    }
    bench_exec_close(p, &e);
    if (p->err[0]) snprintf(r.error, sizeof r.error, "%s", p->err);
    bench_report_row(&r, s->csv);
    s->rows++;
    const int failed = r.error[0] || (r.checked && !r.check.pass);
    s->failed += failed;
    return failed;
}

int bench_run_problem(bench_session *s, bench_args *a)
{
    bench_problem p;
    run_opts o;
    udnnHandle_t cpu = NULL;
    int failed = 0;
    if (build(&p, a, &o, &cpu) < 0) {
        bench_row r;
        memset(&r, 0, sizeof r);
        r.family = a->family;
        r.problem = p.name[0] ? p.name : "-";
        r.backend = bench_arg(a, "backend") ? bench_arg(a, "backend") : "auto";
        r.dtype = bench_dtype_name(p.dtype);
        r.layout = "-";
        r.algo = -1;
        snprintf(r.error, sizeof r.error, "%s", p.err);
        bench_report_row(&r, s->csv);
        s->rows++;
        s->failed++;
        bench_problem_free(&p);
        return 1;
    }
    udnnBackend_t list[3];
    char err[BENCH_ERR];
    int n = backends_of(o.backend, list, err, sizeof err);
    if (n < 0) {
        fprintf(stderr, "udnn-bench: %s\n", err);
        s->failed++;
        failed = 1;
    }
    for (int i = 0; i < n; i++) failed |= run_on(s, &p, a, &o, list[i], cpu);
    bench_problem_free(&p);
    return failed;
}

int bench_probe_problem(bench_args *a)
{
    bench_problem p;
    run_opts o;
    udnnHandle_t cpu = NULL, h;
    udnnBackend_t list[3];
    char err[BENCH_ERR];
    int rc = 1;
    bench_arg_flag(a, "probe");
    if (build(&p, a, &o, &cpu) == 0 && backends_of(o.backend, list, err, sizeof err) > 0 &&
        get_handle(list[0], &h) == UDNN_STATUS_SUCCESS) {
        bench_exec e;
        if (bench_exec_open(&p, &e, h, 1, 0) == 0 &&
            p.family->run(&p, &e, 0) == UDNN_STATUS_SUCCESS)
            rc = 0;
        bench_exec_close(&p, &e);
    }
    bench_problem_free(&p);
    return rc;
}
