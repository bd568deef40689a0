/* error.c - status strings and the thread-local last-error message. */
#include <stdio.h>
#include <string.h>

#include "core/core.h"

#define UDNN_ERROR_MAX 1024

static _Thread_local char last_error[UDNN_ERROR_MAX];

const char *udnnGetErrorString(udnnStatus_t status)
{
    switch (status) {
#define UDNN_STATUS_CASE_(name, value, text) \
    case UDNN_STATUS_##name:                 \
        return "UDNN_STATUS_" #name ": " text;
        UDNN_STATUS_MAP(UDNN_STATUS_CASE_)
#undef UDNN_STATUS_CASE_
    }
    return "UDNN_STATUS_UNKNOWN: not a udnn status";
}

void udnnGetLastErrorString(char *message, size_t max_size)
{
    if (message == NULL || max_size == 0) return;
    snprintf(message, max_size, "%s", last_error);
}

void udnn_set_error_v(const char *fmt, va_list ap)
{
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    udnn_log(UDNN_LOG_ERROR, "%s", last_error);
}

void udnn_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    udnn_set_error_v(fmt, ap);
    va_end(ap);
}

udnnStatus_t udnn_fail(udnnStatus_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    udnn_set_error_v(fmt, ap);
    va_end(ap);
    return status;
}

size_t udnnGetVersion(void)
{
    static const char fn[] = "udnnGetVersion";
    UDNN_LOG_API_CALL("%s()", fn);
    return UDNN_VERSION;
}
