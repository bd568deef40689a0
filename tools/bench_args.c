/* bench_args.c - udnn-bench's option list and the benchdnn-style problem
 * descriptor.
 *
 * Descriptor grammar (one positional word; see tools/udnn-bench.md):
 *
 *   descriptor := dims | fields
 *   dims       := INT ("x" INT)+              2x16x8x8: the same as --dims 2,16,8,8
 *   fields     := ( ["_"] KEY INT )+
 *   KEY        := g mb ic id ih iw oc od oh ow kd kh kw   groups, n, c, d, h, w, k,
 *                                                         output d/h/w, t, r, s
 *               | sd sh sw | pd ph pw | dd dh dw          stride, pad, dilation
 *               | bs m n k                                matmul batch and sizes
 *
 * As in benchdnn, a missing w-field takes the h-field's value (and the
 * reverse), the d-fields make a problem 3-D (a missing one takes h's), and
 * dilation counts the gaps: dh0 is a dense filter, dh1 cuDNN's dilation 2.
 * Keys are read greedily as the longest run of letters, so "mb64" is the
 * minibatch and "m64n32k16" a matmul. Options given as flags win over the
 * descriptor's fields.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench_args.h"

/* Options that take no value. */
static const char *const flags[] = {
    "check",   "no-check",   "csv",      "compare", "find",     "trans-a",   "trans-b", "nan-prop",
    "z-is-y",  "no-running", "no-saved", "no-bias", "no-stats", "no-solver", "help",    "probe",
};

static int is_flag(const char *key)
{
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (strcmp(flags[i], key) == 0) return 1;
    return 0;
}

static bench_opt *find(const bench_args *a, const char *key)
{
    for (int i = 0; i < a->count; i++)
        if (strcmp(a->opt[i].key, key) == 0) return (bench_opt *)&a->opt[i];
    return NULL;
}

void bench_args_set(bench_args *a, const char *key, const char *value)
{
    bench_opt *o = find(a, key);
    if (o == NULL) {
        if (a->count == BENCH_MAX_OPTS) return;
        o = &a->opt[a->count++];
        memset(o, 0, sizeof *o);
        snprintf(o->key, sizeof o->key, "%s", key);
    }
    snprintf(o->value, sizeof o->value, "%s", value);
    o->inherited = 0;
}

void bench_args_remove(bench_args *a, const char *key)
{
    bench_opt *o = find(a, key);
    if (o == NULL) return;
    *o = a->opt[--a->count];
}

const char *bench_arg(bench_args *a, const char *key)
{
    bench_opt *o = find(a, key);
    if (o == NULL) return NULL;
    o->used = 1;
    return o->value;
}

int bench_arg_flag(bench_args *a, const char *key)
{
    return bench_arg(a, key) != NULL;
}

int bench_arg_has(const bench_args *a, const char *key)
{
    return find(a, key) != NULL;
}

void bench_args_inherit(bench_args *a, const bench_args *from)
{
    for (int i = 0; i < from->count; i++) {
        if (find(a, from->opt[i].key) != NULL || a->count == BENCH_MAX_OPTS) continue;
        a->opt[a->count] = from->opt[i];
        a->opt[a->count].used = 0;
        a->opt[a->count].inherited = 1;
        a->count++;
    }
}

int bench_args_check_used(const bench_args *a, char *err, size_t n)
{
    for (int i = 0; i < a->count; i++)
        if (!a->opt[i].used && !a->opt[i].inherited) {
            snprintf(err, n, "%s does not take --%s", a->family[0] ? a->family : "udnn-bench",
                     a->opt[i].key);
            return -1;
        }
    return 0;
}

void bench_args_format(const bench_args *a, int own_only, char *out, size_t n)
{
    size_t len = (size_t)snprintf(out, n, "%s", a->family);
    for (int i = 0; i < a->count && len < n; i++) {
        const bench_opt *o = &a->opt[i];
        if (own_only && o->inherited) continue;
        int w = is_flag(o->key) ? snprintf(out + len, n - len, " --%s", o->key)
                                : snprintf(out + len, n - len, " --%s %s", o->key, o->value);
        if (w > 0) len += (size_t)w;
    }
}

/* ---- the descriptor ---------------------------------------------------------------- */

/* Field values by key; -1 when absent. */
typedef struct {
    const char *key;
    long value;
} field;

static long *field_slot(field *fs, int count, const char *key)
{
    for (int i = 0; i < count; i++)
        if (strcmp(fs[i].key, key) == 0) return &fs[i].value;
    return NULL;
}

/* The value of key, else of `alt` (the square default), else -1. */
static long either(field *fs, int count, const char *key, const char *alt)
{
    long v = *field_slot(fs, count, key);
    return v >= 0 ? v : *field_slot(fs, count, alt);
}

/* Sets a flag from a field unless the flag was given. */
static void set_long(bench_args *a, const char *key, long v)
{
    char buf[32];
    if (v < 0 || find(a, key) != NULL) return;
    snprintf(buf, sizeof buf, "%ld", v);
    bench_args_set(a, key, buf);
}

/* A per-dim list "d,h,w" or "h,w" (add is 1 for dilation's gap count). */
static void set_list(bench_args *a, const char *key, field *fs, int count, int three_d,
                     const char *d, const char *h, const char *w, long add)
{
    long vh = either(fs, count, h, w), vw = either(fs, count, w, h);
    long vd = *field_slot(fs, count, d) >= 0 ? *field_slot(fs, count, d) : vh;
    if (vh < 0 || find(a, key) != NULL) return;
    char buf[64];
    if (three_d) snprintf(buf, sizeof buf, "%ld,%ld,%ld", vd + add, vh + add, vw + add);
    else snprintf(buf, sizeof buf, "%ld,%ld", vh + add, vw + add);
    bench_args_set(a, key, buf);
}

static int parse_dims_word(bench_args *a, const char *word, char *err, size_t n)
{
    char list[192];
    size_t len = 0;
    for (const char *p = word; *p; p++) {
        if (!isdigit((unsigned char)*p) && *p != 'x') {
            snprintf(err, n, "descriptor '%s': '%c' in a dims descriptor", word, *p);
            return -1;
        }
        if (len + 1 < sizeof list) list[len++] = *p == 'x' ? ',' : *p;
    }
    list[len] = '\0';
    if (find(a, "dims") == NULL) bench_args_set(a, "dims", list);
    return 0;
}

static int parse_descriptor(bench_args *a, const char *word, char *err, size_t n)
{
    if (isdigit((unsigned char)word[0])) return parse_dims_word(a, word, err, n);
    field fs[] = {{"g", -1},  {"mb", -1}, {"ic", -1}, {"id", -1}, {"ih", -1}, {"iw", -1},
                  {"oc", -1}, {"od", -1}, {"oh", -1}, {"ow", -1}, {"kd", -1}, {"kh", -1},
                  {"kw", -1}, {"sd", -1}, {"sh", -1}, {"sw", -1}, {"pd", -1}, {"ph", -1},
                  {"pw", -1}, {"dd", -1}, {"dh", -1}, {"dw", -1}, {"bs", -1}, {"m", -1},
                  {"n", -1},  {"k", -1}};
    const int count = (int)(sizeof fs / sizeof *fs);
    const char *p = word;
    while (*p) {
        if (*p == '_') {
            p++;
            continue;
        }
        char key[8];
        size_t kl = 0;
        while (isalpha((unsigned char)*p) && kl + 1 < sizeof key) key[kl++] = *p++;
        key[kl] = '\0';
        long *slot = kl ? field_slot(fs, count, key) : NULL;
        if (slot == NULL || !isdigit((unsigned char)*p)) {
            snprintf(err, n, "descriptor '%s': '%s' is not a field followed by a number", word,
                     kl ? key : p);
            return -1;
        }
        *slot = strtol(p, (char **)&p, 10);
    }
    const int three_d = *field_slot(fs, count, "id") >= 0 || *field_slot(fs, count, "kd") >= 0 ||
                        *field_slot(fs, count, "od") >= 0 || *field_slot(fs, count, "pd") >= 0 ||
                        *field_slot(fs, count, "sd") >= 0 || *field_slot(fs, count, "dd") >= 0;
    set_long(a, "groups", *field_slot(fs, count, "g"));
    set_long(a, "n", *field_slot(fs, count, "mb"));
    set_long(a, "c", *field_slot(fs, count, "ic"));
    set_long(a, "k", *field_slot(fs, count, "oc"));
    set_long(a, "h", either(fs, count, "ih", "iw"));
    set_long(a, "w", either(fs, count, "iw", "ih"));
    set_long(a, "r", either(fs, count, "kh", "kw"));
    set_long(a, "s", either(fs, count, "kw", "kh"));
    set_long(a, "oh", either(fs, count, "oh", "ow"));
    set_long(a, "ow", either(fs, count, "ow", "oh"));
    if (three_d) {
        long id = *field_slot(fs, count, "id"), kd = *field_slot(fs, count, "kd");
        long od = *field_slot(fs, count, "od");
        set_long(a, "d", id >= 0 ? id : either(fs, count, "ih", "iw"));
        set_long(a, "t", kd >= 0 ? kd : either(fs, count, "kh", "kw"));
        set_long(a, "od", od >= 0 ? od : either(fs, count, "oh", "ow"));
    }
    set_list(a, "stride", fs, count, three_d, "sd", "sh", "sw", 0);
    set_list(a, "pad", fs, count, three_d, "pd", "ph", "pw", 0);
    set_list(a, "dilation", fs, count, three_d, "dd", "dh", "dw", 1);
    /* matmul: n is its columns, not the minibatch */
    set_long(a, "bs", *field_slot(fs, count, "bs"));
    set_long(a, "m", *field_slot(fs, count, "m"));
    if (*field_slot(fs, count, "n") >= 0 && *field_slot(fs, count, "mb") < 0)
        set_long(a, "n", *field_slot(fs, count, "n"));
    if (*field_slot(fs, count, "k") >= 0 && *field_slot(fs, count, "oc") < 0)
        set_long(a, "k", *field_slot(fs, count, "k"));
    return 0;
}

/* ---- tokens -------------------------------------------------------------------------- */

int bench_args_parse(bench_args *a, int argc, char *const argv[], char *err, size_t n)
{
    const char *descriptor = NULL;
    for (int i = 0; i < argc; i++) {
        const char *tok = argv[i];
        if (strncmp(tok, "--", 2) == 0 && tok[2] != '\0') {
            char key[32];
            const char *eq = strchr(tok + 2, '=');
            size_t kl = eq ? (size_t)(eq - tok - 2) : strlen(tok + 2);
            if (kl >= sizeof key) {
                snprintf(err, n, "option %s is too long", tok);
                return -1;
            }
            memcpy(key, tok + 2, kl);
            key[kl] = '\0';
            if (is_flag(key)) {
                if (eq) {
                    snprintf(err, n, "--%s takes no value", key);
                    return -1;
                }
                bench_args_set(a, key, "");
            } else if (eq) {
                bench_args_set(a, key, eq + 1);
            } else if (i + 1 < argc) {
                bench_args_set(a, key, argv[++i]);
            } else {
                snprintf(err, n, "--%s needs a value", key);
                return -1;
            }
        } else if (a->family[0] == '\0' && isalpha((unsigned char)tok[0]) &&
                   strspn(tok, "abcdefghijklmnopqrstuvwxyz") == strlen(tok) &&
                   strpbrk(tok, "0123456789") == NULL && descriptor == NULL &&
                   strlen(tok) < sizeof a->family) {
            snprintf(a->family, sizeof a->family, "%s", tok);
        } else if (descriptor == NULL) {
            descriptor = tok;
        } else {
            snprintf(err, n, "two problem descriptors: '%s' and '%s'", descriptor, tok);
            return -1;
        }
    }
    return descriptor ? parse_descriptor(a, descriptor, err, n) : 0;
}

int bench_args_parse_line(bench_args *a, const char *line, char *err, size_t n)
{
    char copy[2048];
    char *tokens[256];
    int count = 0;
    snprintf(copy, sizeof copy, "%s", line);
    char *hash = strchr(copy, '#');
    if (hash) *hash = '\0';
    for (char *save = NULL, *t = strtok_r(copy, " \t\r\n", &save); t && count < 256;
         t = strtok_r(NULL, " \t\r\n", &save))
        tokens[count++] = t;
    /* a pasted log line may still start with the program's name */
    int first = count > 0 && strcmp(tokens[0], "udnn-bench") == 0;
    return bench_args_parse(a, count - first, tokens + first, err, n);
}
