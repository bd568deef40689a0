/* bench_report.c - human lines and CSV rows. */
#include <math.h>
#include <stdio.h>

#include "tools/bench_report.h"

void bench_report_begin(int csv)
{
    if (csv)
        printf("op,problem,backend,dtype,layout,solver,time_ms,rate,rate_unit,peer,peer_time_ms,"
               "ratio\n");
}

static void print_check(const bench_row *r)
{
    if (!r->checked) return;
    if (r->check.msg[0]) printf("  FAIL (%s)", r->check.msg);
    else
        printf("  %s %s err %.3g (tol %.3g)", r->check.pass ? "PASS" : "FAIL", r->check.what,
               r->check.err, r->check.tol);
}

void bench_report_row(const bench_row *r, int csv)
{
    if (csv) {
        if (r->error[0] || !r->timed) {
            fprintf(stderr, "udnn-bench: %s %s on %s: %s\n", r->family, r->problem, r->backend,
                    r->error[0] ? r->error : "not timed");
            return;
        }
        printf("%s,%s,%s,%s,%s,%s,%.6g,%.6g,%s,", r->family, r->problem, r->backend, r->dtype,
               r->layout, r->solver, r->times.median_ms, r->rate, r->rate_unit);
        if (r->have_peer) printf("%s,%.6g,%.4g\n", r->peer, r->peer_ms, r->ratio);
        else printf(",,\n");
        if (r->checked && !r->check.pass)
            fprintf(stderr, "udnn-bench: FAIL %s %s on %s: %s err %.3g (tol %.3g)%s%s\n",
                    r->family, r->problem, r->backend, r->check.what, r->check.err, r->check.tol,
                    r->check.msg[0] ? ": " : "", r->check.msg);
        fflush(stdout);
        return;
    }
    printf("%s %s  %s %s %s", r->family, r->problem, r->backend, r->dtype, r->layout);
    if (r->error[0]) {
        print_check(r);
        printf("  ERROR %s\n", r->error);
        fflush(stdout);
        return;
    }
    print_check(r);
    if (r->solver[0]) printf("  solver %s", r->solver);
    if (r->algo >= 0) printf(" (algo %d)", r->algo);
    if (r->timed)
        printf("  median %.4g ms  min %.4g ms  %.4g %s", r->times.median_ms, r->times.min_ms,
               r->rate, r->rate_unit);
    if (r->have_peer) printf("  %s %.4g ms  ratio %.3g", r->peer, r->peer_ms, r->ratio);
    printf("\n");
    fflush(stdout);
}

void bench_report_summary(int csv, int rows, int failed, int ratios, double log_ratio_sum)
{
    const char *lead = csv ? "# " : "";
    if (ratios > 0)
        printf("%ssummary: %d problems, %d failed; geometric mean of %d ratios (peer time / udnn "
               "time) %.3g\n",
               lead, rows, failed, ratios, exp(log_ratio_sum / ratios));
    else printf("%ssummary: %d problems, %d failed\n", lead, rows, failed);
}
