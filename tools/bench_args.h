/*
 * bench_args.h - udnn-bench's options: a list of --key value pairs read
 * from the command line, a batch file line or a benchdnn-style problem
 * descriptor, each marked once something reads it, so that an option no
 * one reads is reported instead of silently ignored.
 */
#ifndef UDNN_BENCH_ARGS_H
#define UDNN_BENCH_ARGS_H

#include <stddef.h>

#define BENCH_MAX_OPTS 96

typedef struct {
    char key[32];
    char value[192];
    int used;
    int inherited; /* a default from the command line of a --batch or --suite run */
} bench_opt;

typedef struct {
    char family[16]; /* the first word that is no option; "" when none */
    int count;
    bench_opt opt[BENCH_MAX_OPTS];
} bench_args;

/* Reads tokens: a family name, "--key value", "--key=value", a flag
 * ("--csv"), and at most one positional problem descriptor (see
 * bench_args.c for its grammar). 0, or -1 with a message in err. */
int bench_args_parse(bench_args *a, int argc, char *const argv[], char *err, size_t n);
/* The same from one line of text, split at blanks; '#' starts a comment. */
int bench_args_parse_line(bench_args *a, const char *line, char *err, size_t n);
/* Adds every option of `from` that a lacks, marked inherited. */
void bench_args_inherit(bench_args *a, const bench_args *from);
/* Sets (or replaces) an option. */
void bench_args_set(bench_args *a, const char *key, const char *value);
/* Removes an option, if present. */
void bench_args_remove(bench_args *a, const char *key);

/* The value of --key, marking it read; NULL when absent. */
const char *bench_arg(bench_args *a, const char *key);
/* 1 when the flag --key is present (marking it read). */
int bench_arg_flag(bench_args *a, const char *key);
/* 1 when --key is present, without marking it. */
int bench_arg_has(const bench_args *a, const char *key);
/* The first option given (not inherited) that nothing read: 0 when none,
 * else -1 with "FAMILY does not take --key" in err. */
int bench_args_check_used(const bench_args *a, char *err, size_t n);

/* Writes the options back as a command line ("conv --n 2 ...") into out;
 * inherited options are left out when own_only. */
void bench_args_format(const bench_args *a, int own_only, char *out, size_t n);

#endif /* UDNN_BENCH_ARGS_H */
