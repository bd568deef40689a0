/* log.c - UDNN_LOG levels and UDNN_LOG_FILE; silent unless asked. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static int log_level = -1; /* -1: off */
static FILE *log_stream;
static pthread_mutex_t log_mutex = PTHREAD_MUTEX_INITIALIZER;

static const char *const level_names[] = {"error", "warn", "info", "api", "dispatch"};

static void log_init(void)
{
    const char *env = getenv("UDNN_LOG");
    if (env == NULL || *env == '\0') return;
    for (int i = 0; i < (int)(sizeof level_names / sizeof *level_names); i++)
        if (strcasecmp(env, level_names[i]) == 0) log_level = i;
    if (log_level < 0) return;
    const char *path = getenv("UDNN_LOG_FILE");
    if (path != NULL && *path != '\0') log_stream = fopen(path, "a");
    if (log_stream == NULL) log_stream = stderr;
}

int udnn_log_enabled(int level)
{
    pthread_once(&log_once, log_init);
    return log_level >= level;
}

void udnn_log_v(int level, const char *fmt, va_list ap)
{
    if (!udnn_log_enabled(level)) return;
    pthread_mutex_lock(&log_mutex);
    fprintf(log_stream, "udnn[%s] ", level_names[level]);
    vfprintf(log_stream, fmt, ap);
    fputc('\n', log_stream);
    fflush(log_stream);
    pthread_mutex_unlock(&log_mutex);
}

void udnn_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    udnn_log_v(level, fmt, ap);
    va_end(ap);
}

const char *udnn_dtype_name(udnnDataType_t t)
{
    switch (t) {
    case UDNN_DATA_FLOAT: return "f32";
    case UDNN_DATA_DOUBLE: return "f64";
    case UDNN_DATA_HALF: return "f16";
    case UDNN_DATA_BFLOAT16: return "bf16";
    case UDNN_DATA_INT8: return "s8";
    case UDNN_DATA_INT32: return "s32";
    case UDNN_DATA_INT64: return "s64";
    }
    return "?";
}

/* Appends "[a,b,c]" of n ints to buf at *pos. */
static void append_ints(char *buf, size_t size, size_t *pos, const int *v, int n)
{
    for (int i = 0; i < n && *pos < size; i++) {
        int w = snprintf(buf + *pos, size - *pos, "%s%d", i ? "," : "[", v[i]);
        if (w > 0) *pos += (size_t)w;
    }
    if (*pos < size) {
        int w = snprintf(buf + *pos, size - *pos, "]");
        if (w > 0) *pos += (size_t)w;
    }
}

const char *udnn_tensor_str(const udnnTensorDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) return snprintf(buf, n, "NULL"), buf;
    if (!d->is_set) return snprintf(buf, n, "unset"), buf;
    size_t pos = 0;
    int w = snprintf(buf, n, "%s", udnn_dtype_name(d->dtype));
    if (w > 0) pos = (size_t)w;
    append_ints(buf, n, &pos, d->dims, d->nb_dims);
    if (pos < n) buf[pos++] = ':';
    append_ints(buf, n, &pos, d->strides, d->nb_dims);
    buf[pos < n ? pos : n - 1] = '\0';
    return buf;
}

const char *udnn_filter_str(const udnnFilterDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) return snprintf(buf, n, "NULL"), buf;
    if (!d->is_set) return snprintf(buf, n, "unset"), buf;
    size_t pos = 0;
    int w = snprintf(buf, n, "%s:%s", udnn_dtype_name(d->dtype),
                     d->format == UDNN_TENSOR_NHWC ? "nhwc" : "nchw");
    if (w > 0) pos = (size_t)w;
    append_ints(buf, n, &pos, d->dims, d->nb_dims);
    buf[pos < n ? pos : n - 1] = '\0';
    return buf;
}

udnnDataType_t udnn_log_scalar_type(const udnnTensorDescriptor_t d)
{
    return d != NULL && d->is_set ? d->dtype : UDNN_DATA_FLOAT;
}

const char *udnn_scalar_str(const void *p, udnnDataType_t t, char *buf, size_t n)
{
    if (p == NULL) snprintf(buf, n, "NULL");
    else snprintf(buf, n, "%g", udnn_read_scalar(p, t));
    return buf;
}

static void host_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    udnn_log_v(level, fmt, ap);
    va_end(ap);
}

const udnn_host_api *udnn_host_services(void)
{
    static const udnn_host_api host = {
        /* .abi_version = */ UDNN_BACKEND_ABI_VERSION,
        /* .struct_size = */ sizeof(udnn_host_api),
        /* .set_error = */ udnn_set_error,
        /* .log = */ host_log,
    };
    return &host;
}
