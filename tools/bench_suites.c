/* bench_suites.c - suites as CSV tables: '#' lines are comments (each
 * table names its source), the first other line is the header, and each
 * row becomes one problem. Tables are looked up in $UDNN_BENCH_SUITES,
 * the installed $(pkgdatadir)/suites, then the source tree's
 * tools/suites. Rows that repeat a problem run once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_suites.h"

#ifndef UDNN_BENCH_SUITEDIR
#define UDNN_BENCH_SUITEDIR ""
#endif
#ifndef UDNN_BENCH_SRC_SUITEDIR
#define UDNN_BENCH_SRC_SUITEDIR ""
#endif

typedef enum { ROWS_RESNET, ROWS_DEEPBENCH_CONV, ROWS_DEEPBENCH_GEMM } row_kind;

static const struct {
    const char *name, *file;
    row_kind kind;
} suites[] = {
    {"resnet50", "resnet50.csv", ROWS_RESNET},
    {"deepbench-conv-train", "deepbench_conv_training.csv", ROWS_DEEPBENCH_CONV},
    {"deepbench-conv-infer", "deepbench_conv_inference_server.csv", ROWS_DEEPBENCH_CONV},
    {"deepbench-conv-infer-device", "deepbench_conv_inference_device.csv", ROWS_DEEPBENCH_CONV},
    {"deepbench-gemm-train", "deepbench_gemm_training.csv", ROWS_DEEPBENCH_GEMM},
    {"deepbench-gemm-infer", "deepbench_gemm_inference_server.csv", ROWS_DEEPBENCH_GEMM},
};

const char *bench_suite_list(void)
{
    static char list[256];
    if (list[0] == '\0')
        for (size_t i = 0; i < sizeof suites / sizeof *suites; i++) {
            if (i) strncat(list, ", ", sizeof list - strlen(list) - 1);
            strncat(list, suites[i].name, sizeof list - strlen(list) - 1);
        }
    return list;
}

static FILE *open_table(const char *file, char *tried, size_t n)
{
    const char *dirs[] = {getenv("UDNN_BENCH_SUITES"), UDNN_BENCH_SUITEDIR,
                          UDNN_BENCH_SRC_SUITEDIR};
    tried[0] = '\0';
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        if (dirs[i] == NULL || dirs[i][0] == '\0') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dirs[i], file);
        FILE *f = fopen(path, "r");
        if (f != NULL) return f;
        size_t len = strlen(tried);
        if (len + 1 < n)
            snprintf(tried + len, n - len, "%s%.*s", len ? ", " : "", (int)(n - len - 3), path);
    }
    return NULL;
}

#define MAX_COLS 24

/* Splits a CSV line (no quoting in these tables) into fields. */
static int split(char *line, char *fields[MAX_COLS])
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < MAX_COLS;) {
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (comma == NULL) break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

/* The value of column `name` of a row, "" when the table lacks it. */
static const char *col(char *const header[], int ncols, char *const row[], int nrow,
                       const char *name)
{
    for (int i = 0; i < ncols && i < nrow; i++)
        if (strcmp(header[i], name) == 0) return row[i];
    return "";
}

/* The problem of one row as a command line. */
static void row_line(row_kind kind, char *const h[], int nh, char *const r[], int nr,
                     const char *batch, char *out, size_t n)
{
#define C(name) col(h, nh, r, nr, name)
    switch (kind) {
    case ROWS_RESNET:
        snprintf(out, n,
                 "conv --n %s --c %s --h %s --w %s --k %s --r %s --s %s --pad %s --stride %s",
                 batch, C("C"), C("H"), C("W"), C("K"), C("R"), C("S"), C("pad"), C("stride"));
        break;
    case ROWS_DEEPBENCH_CONV:
        snprintf(out, n,
                 "conv --n %s --c %s --h %s --w %s --k %s --r %s --s %s --pad %s,%s --stride %s,%s",
                 C("N"), C("C"), C("H"), C("W"), C("K"), C("R"), C("S"), C("pad_h"), C("pad_w"),
                 C("stride_h"), C("stride_w"));
        break;
    case ROWS_DEEPBENCH_GEMM: {
        /* DeepBench's GEMMs are column-major (cuBLAS): C = op(A) op(B) with C
         * M x N. Row-major, that is C^T = op(B)^T op(A)^T: M and N swap,
         * and so do the operands and their transposes. */
        const int ta = strcmp(C("a_t"), "1") == 0, tb = strcmp(C("b_t"), "1") == 0;
        snprintf(out, n, "matmul --m %s --n %s --k %s%s%s", C("N"), C("M"), C("K"),
                 tb ? " --trans-a" : "", ta ? " --trans-b" : "");
        break;
    }
    }
#undef C
}

int bench_suite_each(const char *name, bench_args *global,
                     int (*fn)(void *ctx, bench_args *problem), void *ctx, char *err, size_t n)
{
    size_t which = 0;
    while (which < sizeof suites / sizeof *suites && strcmp(suites[which].name, name) != 0)
        which++;
    if (which == sizeof suites / sizeof *suites) {
        snprintf(err, n, "--suite %s: expected one of %s", name, bench_suite_list());
        return -1;
    }
    char tried[1024];
    FILE *f = open_table(suites[which].file, tried, sizeof tried);
    if (f == NULL) {
        snprintf(err, n, "--suite %s: cannot open %s (tried %s)", name, suites[which].file,
                 tried[0] ? tried : "no directory");
        return -1;
    }
    /* the batch of a suite that has none of its own */
    const char *batch = suites[which].kind == ROWS_RESNET && bench_arg(global, "n")
                            ? bench_arg(global, "n")
                            : "1";
    char line[1024], header_line[1024];
    char *header[MAX_COLS], *row[MAX_COLS];
    int nh = 0;
    char (*seen)[256] = NULL;
    int nseen = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f) != NULL) {
        if (line[0] == '#' || line[0] == '\n') continue;
        if (nh == 0) {
            snprintf(header_line, sizeof header_line, "%s", line);
            nh = split(header_line, header);
            continue;
        }
        int nr = split(line, row);
        char cmd[256];
        row_line(suites[which].kind, header, nh, row, nr, batch, cmd, sizeof cmd);
        int dup = 0;
        for (int i = 0; i < nseen && !dup; i++) dup = strcmp(seen[i], cmd) == 0;
        if (dup) continue;
        void *grown = realloc(seen, sizeof *seen * (size_t)(nseen + 1));
        if (grown == NULL) break;
        seen = grown;
        snprintf(seen[nseen++], sizeof *seen, "%s", cmd);
        bench_args problem;
        memset(&problem, 0, sizeof problem);
        if (bench_args_parse_line(&problem, cmd, err, n) < 0) rc = -1;
        else if (fn(ctx, &problem) < 0) rc = -1;
    }
    free(seen);
    fclose(f);
    return rc;
}
