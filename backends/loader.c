/* loader.c - finds each backend: the CPU one built in, the GPU ones as
 * plugins loaded with dlopen from UDNN_BACKEND_PATH, then $(pkglibdir). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

#ifndef UDNN_PKGLIBDIR
#define UDNN_PKGLIBDIR "/usr/local/lib/udnn"
#endif

#define LOAD_MESSAGE_MAX 1024

typedef struct {
    int tried;
    const udnn_backend *backend;
    char why[LOAD_MESSAGE_MAX]; /* when backend is NULL */
} backend_slot;

static pthread_mutex_t loader_mutex = PTHREAD_MUTEX_INITIALIZER;
static backend_slot slots[UDNN_BACKEND_HIP + 1];

/* The smallest backend struct core can use: everything up to the solvers. */
#define BACKEND_MIN_SIZE (offsetof(udnn_backend, solver_count) + sizeof(size_t))

static const char *plugin_file(udnnBackend_t kind)
{
    return kind == UDNN_BACKEND_CUDA ? "udnn_cuda.so" : "udnn_hip.so";
}

/* Tries one path; on failure appends the reason to why. */
static const udnn_backend *try_plugin(const char *path, char *why, size_t why_size)
{
    size_t used = strlen(why);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *err = dlerror();
        snprintf(why + used, why_size - used, "%s%s", used ? "; " : "",
                 err ? err : path);
        return NULL;
    }
    udnn_backend_entry_fn entry;
    *(void **)&entry = dlsym(lib, UDNN_BACKEND_ENTRY_SYMBOL);
    if (entry == NULL) {
        snprintf(why + used, why_size - used, "%s%s: no symbol %s", used ? "; " : "", path,
                 UDNN_BACKEND_ENTRY_SYMBOL);
        dlclose(lib);
        return NULL;
    }
    const udnn_backend *be = entry(udnn_host_services());
    if (be == NULL || be->abi_version != UDNN_BACKEND_ABI_VERSION ||
        be->struct_size < BACKEND_MIN_SIZE) {
        snprintf(why + used, why_size - used,
                 "%s%s: plugin ABI version %u (size %u), this library needs version %u",
                 used ? "; " : "", path, be ? be->abi_version : 0u, be ? be->struct_size : 0u,
                 UDNN_BACKEND_ABI_VERSION);
        dlclose(lib);
        return NULL;
    }
    return be; /* the module stays loaded for the life of the process */
}

static const udnn_backend *load_plugin(udnnBackend_t kind, char *why, size_t why_size)
{
    const char *file = plugin_file(kind);
    char path[4096];
    why[0] = '\0';
    const char *env = getenv("UDNN_BACKEND_PATH");
    if (env != NULL && *env != '\0') {
        /* a colon-separated list of directories */
        const char *p = env;
        while (*p) {
            const char *end = strchr(p, ':');
            size_t len = end ? (size_t)(end - p) : strlen(p);
            if (len > 0 && len < sizeof path - strlen(file) - 2) {
                snprintf(path, sizeof path, "%.*s/%s", (int)len, p, file);
                const udnn_backend *be = try_plugin(path, why, why_size);
                if (be) return be;
            }
            p += len;
            if (*p == ':') p++;
        }
    }
    snprintf(path, sizeof path, "%s/%s", UDNN_PKGLIBDIR, file);
    return try_plugin(path, why, why_size);
}

const udnn_backend *udnn_backend_get(udnnBackend_t kind, const char **why)
{
    if (kind == UDNN_BACKEND_CPU) return udnn_cpu_backend(udnn_host_services());
    if (kind != UDNN_BACKEND_CUDA && kind != UDNN_BACKEND_HIP) {
        if (why) *why = "not a udnn backend";
        return NULL;
    }
    pthread_mutex_lock(&loader_mutex);
    backend_slot *slot = &slots[kind];
    if (!slot->tried) {
        slot->backend = load_plugin(kind, slot->why, sizeof slot->why);
        slot->tried = 1;
    }
    const udnn_backend *be = slot->backend;
    pthread_mutex_unlock(&loader_mutex);
    /* a slot is written once, under the mutex, and never changes after */
    if (be == NULL && why) *why = slot->why;
    return be;
}
