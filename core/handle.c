/* handle.c - handles, backend choice, and the memory and stream calls. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/core.h"

static const char *backend_name(udnnBackend_t b)
{
    switch (b) {
    case UDNN_BACKEND_CPU: return "cpu";
    case UDNN_BACKEND_CUDA: return "cuda";
    case UDNN_BACKEND_HIP: return "hip";
    default: return "auto";
    }
}

/* The backend of UDNN_BACKEND, or AUTO when unset. */
static udnnStatus_t backend_from_env(const char *fn, udnnBackend_t *out)
{
    const char *env = getenv("UDNN_BACKEND");
    *out = UDNN_BACKEND_AUTO;
    if (env == NULL || *env == '\0' || strcasecmp(env, "auto") == 0) return UDNN_STATUS_SUCCESS;
    for (int b = UDNN_BACKEND_CPU; b <= UDNN_BACKEND_HIP; b++)
        if (strcasecmp(env, backend_name((udnnBackend_t)b)) == 0) {
            *out = (udnnBackend_t)b;
            return UDNN_STATUS_SUCCESS;
        }
    return udnn_fail(UDNN_STATUS_BAD_PARAM,
                     "%s: UDNN_BACKEND is '%s'; expected cpu, cuda, hip or auto", fn, env);
}

/* The count of devices of a backend; 0 when it cannot be loaded, which is
 * no failure here. */
static int device_count(udnnBackend_t kind)
{
    const char *why = NULL;
    const udnn_backend *be = udnn_backend_get(kind, &why);
    if (be == NULL) {
        udnn_log(UDNN_LOG_INFO, "backend %s unavailable: %s", backend_name(kind), why);
        return 0;
    }
    int n = be->device_count();
    return n > 0 ? n : 0;
}

static udnnStatus_t create(const char *fn, udnnHandle_t *handle, udnnBackend_t kind, int device)
{
    UDNN_TRY(udnn_check_ptr(fn, "handle", handle));
    *handle = NULL;
    if (kind < UDNN_BACKEND_AUTO || kind > UDNN_BACKEND_HIP)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: backend %d is not a udnnBackend_t", fn,
                         (int)kind);
    if (kind == UDNN_BACKEND_AUTO) {
        static const udnnBackend_t order[] = {UDNN_BACKEND_CUDA, UDNN_BACKEND_HIP,
                                              UDNN_BACKEND_CPU};
        for (size_t i = 0; i < sizeof order / sizeof *order; i++)
            if (device_count(order[i]) > 0) {
                kind = order[i];
                break;
            }
    }
    const char *why = NULL;
    const udnn_backend *be = udnn_backend_get(kind, &why);
    if (be == NULL)
        return udnn_fail(UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING,
                         "%s: cannot load the %s backend: %s", fn, backend_name(kind), why);
    int count = be->device_count();
    if (count <= 0)
        return udnn_fail(UDNN_STATUS_RUNTIME_PREREQUISITE_MISSING,
                         "%s: the %s backend has no device", fn, be->name);
    if (device < 0 || device >= count)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: device is %d; the %s backend has devices 0 to %d", fn, device,
                         be->name, count - 1);
    struct udnnContext *h = calloc(1, sizeof *h);
    if (h == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    udnnStatus_t st = be->context_create(device, &h->ctx);
    if (st != UDNN_STATUS_SUCCESS) {
        free(h);
        char why[1024];
        udnnGetLastErrorString(why, sizeof why);
        return udnn_fail(st, "%s: the %s backend could not create a context on device %d: %s",
                         fn, be->name, device, why);
    }
    h->backend = be;
    h->device = device;
    *handle = h;
    udnn_log(UDNN_LOG_INFO, "%s: backend %s, device %d", fn, be->name, device);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnCreate(udnnHandle_t *handle)
{
    static const char fn[] = "udnnCreate";
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    UDNN_TRY(udnn_check_ptr(fn, "handle", handle));
    *handle = NULL;
    udnnBackend_t kind;
    UDNN_TRY(backend_from_env(fn, &kind));
    return create(fn, handle, kind, 0);
}

udnnStatus_t udnnCreateWithBackend(udnnHandle_t *handle, udnnBackend_t backend, int device)
{
    static const char fn[] = "udnnCreateWithBackend";
    UDNN_LOG_API_CALL("%s(handle=%p, backend=%s, device=%d)", fn, (void *)handle,
                      backend_name(backend), device);
    return create(fn, handle, backend, device);
}

udnnStatus_t udnnDestroy(udnnHandle_t handle)
{
    static const char fn[] = "udnnDestroy";
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    if (handle == NULL) return UDNN_STATUS_SUCCESS;
    UDNN_TRY(udnn_check_handle(fn, handle));
    handle->backend->context_destroy(handle->ctx);
    free(handle);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetBackend(udnnHandle_t handle, udnnBackend_t *backend)
{
    static const char fn[] = "udnnGetBackend";
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "backend", backend));
    *backend = handle->backend->kind;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetDeviceCount(udnnBackend_t backend, int *count)
{
    static const char fn[] = "udnnGetDeviceCount";
    UDNN_LOG_API_CALL("%s(backend=%s)", fn, backend_name(backend));
    UDNN_TRY(udnn_check_ptr(fn, "count", count));
    if (backend == UDNN_BACKEND_AUTO) {
        UDNN_TRY(backend_from_env(fn, &backend));
        if (backend == UDNN_BACKEND_AUTO)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: backend is UDNN_BACKEND_AUTO; name a backend", fn);
    }
    if (backend < UDNN_BACKEND_CPU || backend > UDNN_BACKEND_HIP)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: backend %d is not a udnnBackend_t", fn,
                         (int)backend);
    *count = device_count(backend);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetStream(udnnHandle_t handle, udnnStream_t streamId)
{
    static const char fn[] = "udnnSetStream";
    UDNN_LOG_API_CALL("%s(handle=%p, streamId=%p)", fn, (void *)handle, streamId);
    UDNN_TRY(udnn_check_handle(fn, handle));
    udnnStatus_t st = handle->backend->set_stream(handle->ctx, streamId);
    if (st != UDNN_STATUS_SUCCESS) {
        char why[1024];
        udnnGetLastErrorString(why, sizeof why);
        return udnn_fail(st, "%s: streamId: %s", fn, why);
    }
    handle->stream = streamId;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetStream(udnnHandle_t handle, udnnStream_t *streamId)
{
    static const char fn[] = "udnnGetStream";
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "streamId", streamId));
    *streamId = handle->stream;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnMalloc(udnnHandle_t handle, void **ptr, size_t bytes)
{
    static const char fn[] = "udnnMalloc";
    UDNN_LOG_API_CALL("%s(handle=%p, bytes=%zu)", fn, (void *)handle, bytes);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "ptr", ptr));
    *ptr = NULL;
    if (bytes == 0) return UDNN_STATUS_SUCCESS;
    udnnStatus_t st = handle->backend->alloc(handle->ctx, ptr, bytes);
    if (st != UDNN_STATUS_SUCCESS) {
        char why[1024];
        udnnGetLastErrorString(why, sizeof why);
        return udnn_fail(st, "%s: bytes: cannot allocate %zu bytes on the %s backend: %s", fn,
                         bytes, handle->backend->name, why);
    }
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnFree(udnnHandle_t handle, void *ptr)
{
    static const char fn[] = "udnnFree";
    UDNN_LOG_API_CALL("%s(handle=%p, ptr=%p)", fn, (void *)handle, ptr);
    UDNN_TRY(udnn_check_handle(fn, handle));
    if (ptr == NULL) return UDNN_STATUS_SUCCESS;
    return handle->backend->free(handle->ctx, ptr);
}

udnnStatus_t udnnMemcpy(udnnHandle_t handle, void *dst, const void *src, size_t bytes,
                        udnnMemcpyKind_t kind)
{
    static const char fn[] = "udnnMemcpy";
    UDNN_LOG_API_CALL("%s(handle=%p, dst=%p, src=%p, bytes=%zu, kind=%d)", fn, (void *)handle,
                      dst, src, bytes, (int)kind);
    UDNN_TRY(udnn_check_handle(fn, handle));
    if (kind != UDNN_MEMCPY_HOST_TO_DEVICE && kind != UDNN_MEMCPY_DEVICE_TO_HOST &&
        kind != UDNN_MEMCPY_DEVICE_TO_DEVICE)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: kind %d is not a udnnMemcpyKind_t", fn,
                         (int)kind);
    if (bytes == 0) return UDNN_STATUS_SUCCESS;
    UDNN_TRY(udnn_check_ptr(fn, "dst", dst));
    UDNN_TRY(udnn_check_ptr(fn, "src", src));
    return handle->backend->memcpy(handle->ctx, dst, src, bytes, kind);
}

udnnStatus_t udnnMemset(udnnHandle_t handle, void *ptr, int value, size_t bytes)
{
    static const char fn[] = "udnnMemset";
    UDNN_LOG_API_CALL("%s(handle=%p, ptr=%p, value=%d, bytes=%zu)", fn, (void *)handle, ptr,
                      value, bytes);
    UDNN_TRY(udnn_check_handle(fn, handle));
    if (bytes == 0) return UDNN_STATUS_SUCCESS;
    UDNN_TRY(udnn_check_ptr(fn, "ptr", ptr));
    return handle->backend->memset(handle->ctx, ptr, value, bytes);
}

udnnStatus_t udnnSynchronize(udnnHandle_t handle)
{
    static const char fn[] = "udnnSynchronize";
    UDNN_LOG_API_CALL("%s(handle=%p)", fn, (void *)handle);
    UDNN_TRY(udnn_check_handle(fn, handle));
    return handle->backend->synchronize(handle->ctx);
}
