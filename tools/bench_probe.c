/* bench_probe.c - which solver ran. The public API does not say, but
 * UDNN_LOG=dispatch does; logging is set once per process, and logging
 * every timed call would slow it, so the problem runs once more in a child
 * udnn-bench (--probe) whose log goes to a temporary file. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench_driver.h"
#include "tools/bench_probe.h"

/* Options of the driver the child must not see: how to run, not what. */
static int driver_only(const char *key)
{
    return bench_run_option(key) || strcmp(key, "batch") == 0 || strcmp(key, "suite") == 0 ||
           strcmp(key, "csv") == 0 || strcmp(key, "probe") == 0;
}

/* The solver named by the last "runs solver NAME" line of the log. */
static void last_solver(FILE *log, char *out, size_t n)
{
    char line[2048];
    while (fgets(line, sizeof line, log) != NULL) {
        const char *at = strstr(line, " runs solver ");
        if (at == NULL) continue;
        at += strlen(" runs solver ");
        size_t len = strcspn(at, " \r\n");
        snprintf(out, n, "%.*s", (int)len, at);
    }
}

int bench_probe_solver(const bench_args *a, const char *backend, char *out, size_t n)
{
    snprintf(out, n, "?");
    char path[] = "/tmp/udnn-bench-probe-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    close(fd);

    char *argv[2 * BENCH_MAX_OPTS + 8];
    int argc = 0;
    argv[argc++] = "udnn-bench";
    argv[argc++] = (char *)a->family;
    for (int i = 0; i < a->count; i++) {
        if (driver_only(a->opt[i].key)) continue;
        static char keys[BENCH_MAX_OPTS][40];
        snprintf(keys[i], sizeof keys[i], "--%s", a->opt[i].key);
        argv[argc++] = keys[i];
        /* flags have an empty value and take no argument */
        if (a->opt[i].value[0] != '\0') argv[argc++] = (char *)a->opt[i].value;
    }
    argv[argc++] = "--backend";
    argv[argc++] = (char *)backend;
    argv[argc++] = "--probe";
    argv[argc] = NULL;

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        unlink(path);
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        setenv("UDNN_LOG", "dispatch", 1);
        setenv("UDNN_LOG_FILE", path, 1);
        unsetenv("UDNN_VERIFY");
        execv("/proc/self/exe", argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *log = fopen(path, "r");
    if (log != NULL) {
        last_solver(log, out, n);
        fclose(log);
    }
    unlink(path);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
