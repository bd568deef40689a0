/* bench_main.c - udnn-bench's command line: one problem, a batch file of
 * problems (--batch), or a named suite (--suite). tools/udnn-bench.md is
 * its manual. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_driver.h"
#include "tools/bench_report.h"
#include "tools/bench_suites.h"
#include "tools/bench.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: udnn-bench FAMILY [options] [DESCRIPTOR]\n"
            "       udnn-bench --batch FILE [options]\n"
            "       udnn-bench --suite NAME [options]\n"
            "families: %s\n"
            "suites: %s\n"
            "common options: --backend cpu|cuda|hip|all|auto  --dtype f32|f64|f16|bf16\n"
            "  --layout nchw|nhwc  --algo N | --find  --math default|tensor-op|allow-conversion\n"
            "  --warmup N  --iters N  --burst K  --max-ms MS  --clock auto|device|host\n"
            "  --check (default) | --no-check\n"
            "  --compare  --csv  --no-solver  --rotate N  --alpha A  --beta B\n"
            "  --ROLE-dims, --ROLE-strides, --ROLE-layout, --ROLE-dtype for any tensor ROLE\n"
            "shapes: --n --c --d --h --w --k --t --r --s --pad --stride --dilation --groups,\n"
            "  --dims A,B,..., or a descriptor: g1mb2ic5ih13iw11oc7kh3kw3ph1pw1, 2x16x8x8\n"
            "see tools/udnn-bench.md for every family's options\n",
            bench_family_list(), bench_suite_list());
}

/* Options the batch and suite modes read themselves. */
static const char *const session_keys[] = {"batch", "suite", "csv"};

typedef struct {
    bench_session *s;
    bench_args *global;
    int failed;
} each_ctx;

/* Runs one problem of a batch or suite with the command line's options as
 * its defaults; marks the global options the problem read. */
static int run_one(void *arg, bench_args *a)
{
    each_ctx *c = arg;
    for (int i = 0; i < c->global->count; i++)
        if (bench_run_option(c->global->opt[i].key))
            bench_args_set(a, c->global->opt[i].key, c->global->opt[i].value);
    bench_args_inherit(a, c->global);
    c->failed |= bench_run_problem(c->s, a);
    for (int i = 0; i < a->count; i++)
        if ((a->opt[i].inherited || bench_run_option(a->opt[i].key)) && a->opt[i].used &&
            bench_arg_has(c->global, a->opt[i].key))
            bench_arg(c->global, a->opt[i].key);
    return 0;
}

static int run_batch(each_ctx *c, const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "udnn-bench: --batch %s: cannot open it\n", path);
        return -1;
    }
    char line[2048];
    int lineno = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        lineno++;
        bench_args a;
        memset(&a, 0, sizeof a);
        char err[512];
        if (bench_args_parse_line(&a, line, err, sizeof err) < 0) {
            fprintf(stderr, "udnn-bench: %s:%d: %s\n", path, lineno, err);
            c->failed = 1;
            continue;
        }
        if (a.family[0] == '\0' && a.count == 0) continue; /* blank or comment */
        run_one(c, &a);
    }
    if (f != stdin) fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    bench_args g;
    memset(&g, 0, sizeof g);
    char err[512];
    if (bench_args_parse(&g, argc - 1, argv + 1, err, sizeof err) < 0) {
        fprintf(stderr, "udnn-bench: %s\n", err);
        usage(stderr);
        return 2;
    }
    if (bench_arg_flag(&g, "help")) {
        usage(stdout);
        return 0;
    }
    if (bench_arg_has(&g, "probe")) return bench_probe_problem(&g);

    bench_session s;
    memset(&s, 0, sizeof s);
    s.csv = bench_arg_flag(&g, "csv");
    const char *batch = bench_arg(&g, "batch"), *suite = bench_arg(&g, "suite");
    int status;
    if (batch != NULL || suite != NULL) {
        if (g.family[0] != '\0') {
            fprintf(stderr, "udnn-bench: a family (%s) with --batch or --suite; give one\n",
                    g.family);
            return 2;
        }
        each_ctx c = {&s, &g, 0};
        bench_args defaults = g;
        for (size_t i = 0; i < sizeof session_keys / sizeof *session_keys; i++)
            bench_args_remove(&defaults, session_keys[i]);
        c.global = &defaults;
        bench_report_begin(s.csv);
        int rc = batch ? run_batch(&c, batch)
                       : bench_suite_each(suite, &defaults, run_one, &c, err, sizeof err);
        if (rc < 0 && suite) fprintf(stderr, "udnn-bench: %s\n", err);
        /* a command-line option no problem read is a mistake worth saying */
        int unused = 0;
        for (int i = 0; i < defaults.count; i++)
            if (!defaults.opt[i].used) {
                fprintf(stderr, "udnn-bench: no problem took --%s\n", defaults.opt[i].key);
                unused = 1;
            }
        bench_report_summary(s.csv, s.rows, s.failed, s.ratios, s.log_ratio_sum);
        status = rc < 0 || c.failed || unused ? 1 : 0;
    } else if (g.family[0] == '\0') {
        usage(stderr);
        return 2;
    } else {
        bench_report_begin(s.csv);
        status = bench_run_problem(&s, &g);
        if (s.ratios > 1) bench_report_summary(s.csv, s.rows, s.failed, s.ratios, s.log_ratio_sum);
    }
    bench_session_end(&s);
    return status;
}
