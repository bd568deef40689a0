/* verify_backend.c - a fake HIP backend for the UDNN_VERIFY tests: its
 * device memory is host memory, its AddTensor and SetTensor are right and
 * its ScaleTensor is deliberately wrong (it adds 0.5), so that verifying
 * against the CPU reference has one op to pass and one to catch. FLOAT
 * data only. */
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"

static int device_count(void)
{
    return 1;
}

static udnnStatus_t context_create(int device, void **ctx)
{
    (void)device;
    *ctx = malloc(1);
    return *ctx ? UDNN_STATUS_SUCCESS : UDNN_STATUS_ALLOC_FAILED;
}

static void context_destroy(void *ctx)
{
    free(ctx);
}

static udnnStatus_t mem_alloc(void *ctx, void **ptr, size_t bytes)
{
    (void)ctx;
    *ptr = malloc(bytes ? bytes : 1);
    return *ptr ? UDNN_STATUS_SUCCESS : UDNN_STATUS_ALLOC_FAILED;
}

static udnnStatus_t mem_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t mem_copy(void *ctx, void *dst, const void *src, size_t bytes,
                             udnnMemcpyKind_t kind)
{
    (void)ctx, (void)kind;
    memmove(dst, src, bytes);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t mem_set(void *ctx, void *ptr, int value, size_t bytes)
{
    (void)ctx;
    memset(ptr, value, bytes);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t set_stream(void *ctx, void *stream)
{
    (void)ctx;
    return stream == NULL ? UDNN_STATUS_SUCCESS : UDNN_STATUS_BAD_PARAM;
}

static udnnStatus_t get_stream(void *ctx, void **stream)
{
    (void)ctx;
    *stream = NULL;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t synchronize(void *ctx)
{
    (void)ctx;
    return UDNN_STATUS_SUCCESS;
}

/* Offset of logical element i of t; a dim of size 1 in `of`'s place
 * broadcasts. */
static int64_t offset(const udnn_tensor *t, const udnn_tensor *of, int64_t i)
{
    int64_t off = 0;
    for (int d = of->rank - 1; d >= 0; d--) {
        const int64_t idx = i % of->dims[d];
        i /= of->dims[d];
        if (t->dims[d] != 1) off += idx * t->strides[d];
    }
    return off;
}

static int64_t count(const udnn_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank; d++) n *= t->dims[d];
    return n;
}

static int float_only(const void *problem, const char **why)
{
    const udnn_tensor_problem *p = problem;
    if (p->c.dtype != UDNN_DATA_FLOAT) {
        *why = "the fake backend takes FLOAT only";
        return 0;
    }
    return 1;
}

static udnnStatus_t run_add(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    const float *a = p->a_ptr;
    float *c = p->c_ptr;
    for (int64_t i = 0; i < count(&p->c); i++) {
        float *out = c + offset(&p->c, &p->c, i);
        const double blend = p->beta != 0.0 ? p->beta * *out : 0.0;
        *out = (float)(p->alpha1 * a[offset(&p->a, &p->c, i)] + blend);
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t run_set(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    float *c = p->c_ptr;
    for (int64_t i = 0; i < count(&p->c); i++) c[offset(&p->c, &p->c, i)] = (float)p->value;
    return UDNN_STATUS_SUCCESS;
}

/* Wrong on purpose: y = alpha * y + 0.5. */
static udnnStatus_t run_scale_wrong(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    (void)ctx, (void)ws, (void)ws_bytes;
    const udnn_tensor_problem *p = problem;
    float *c = p->c_ptr;
    for (int64_t i = 0; i < count(&p->c); i++) {
        float *v = c + offset(&p->c, &p->c, i);
        *v = (float)(p->alpha1 * *v + 0.5);
    }
    return UDNN_STATUS_SUCCESS;
}

static const udnn_solver add = {"fake_add_tensor", UDNN_OP_ADD_TENSOR, -1, 1, float_only, NULL,
                                run_add};
static const udnn_solver set = {"fake_set_tensor", UDNN_OP_SET_TENSOR, -1, 1, float_only, NULL,
                                run_set};
static const udnn_solver scale = {"fake_scale_tensor_wrong", UDNN_OP_SCALE_TENSOR, -1, 1,
                                  float_only, NULL, run_scale_wrong};
static const udnn_solver *const solvers[] = {&add, &set, &scale};

static const udnn_backend fake = {
    /* .abi_version = */ UDNN_BACKEND_ABI_VERSION,
    /* .struct_size = */ sizeof(udnn_backend),
    /* .name = */ "hip",
    /* .kind = */ UDNN_BACKEND_HIP,
    /* .device_count = */ device_count,
    /* .context_create = */ context_create,
    /* .context_destroy = */ context_destroy,
    /* .alloc = */ mem_alloc,
    /* .free = */ mem_free,
    /* .memcpy = */ mem_copy,
    /* .memset = */ mem_set,
    /* .set_stream = */ set_stream,
    /* .get_stream = */ get_stream,
    /* .synchronize = */ synchronize,
    /* .device_name = */ NULL,
    /* .solvers = */ solvers,
    /* .solver_count = */ sizeof solvers / sizeof *solvers,
};

__attribute__((visibility("default"))) const udnn_backend *
udnn_backend_entry(const udnn_host_api *host)
{
    (void)host;
    return &fake;
}
