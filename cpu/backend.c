/* backend.c - the CPU backend: host memory and its solver table. Built
 * into libudnn; it reaches core only through the udnn_host_api. */
#include <stdlib.h>
#include <string.h>

#include "cpu/cpu_solvers.h"

typedef struct {
    int device;
} cpu_context;

static const udnn_host_api *host;

static int cpu_device_count(void)
{
    return 1;
}

static udnnStatus_t cpu_context_create(int device, void **ctx)
{
    cpu_context *c = calloc(1, sizeof *c);
    if (c == NULL) {
        host->set_error("cpu backend: out of memory");
        return UDNN_STATUS_ALLOC_FAILED;
    }
    c->device = device;
    *ctx = c;
    return UDNN_STATUS_SUCCESS;
}

static void cpu_context_destroy(void *ctx)
{
    free(ctx);
}

static udnnStatus_t cpu_alloc(void *ctx, void **ptr, size_t bytes)
{
    (void)ctx;
    /* 64-byte alignment serves every vector width the fast kernels use */
    size_t rounded = (bytes + 63u) & ~(size_t)63u;
    if (rounded < bytes || (*ptr = aligned_alloc(64, rounded)) == NULL) {
        host->set_error("out of host memory");
        return UDNN_STATUS_ALLOC_FAILED;
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_free(void *ctx, void *ptr)
{
    (void)ctx;
    free(ptr);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_memcpy(void *ctx, void *dst, const void *src, size_t bytes,
                               udnnMemcpyKind_t kind)
{
    (void)ctx;
    (void)kind;
    memmove(dst, src, bytes);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_memset(void *ctx, void *ptr, int value, size_t bytes)
{
    (void)ctx;
    memset(ptr, value, bytes);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_set_stream(void *ctx, void *stream)
{
    (void)ctx;
    if (stream != NULL) {
        host->set_error("the cpu backend has no streams; only NULL is accepted");
        return UDNN_STATUS_BAD_PARAM;
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_get_stream(void *ctx, void **stream)
{
    (void)ctx;
    *stream = NULL;
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t cpu_synchronize(void *ctx)
{
    (void)ctx;
    return UDNN_STATUS_SUCCESS;
}

static const char *cpu_device_name(void *ctx)
{
    (void)ctx;
    return "cpu";
}

/* Fastest first; the reference solvers come last in each op's list. */
static const udnn_solver *const cpu_solvers[] = {
    &udnn_cpu_fast_act_fwd,
    &udnn_cpu_fast_act_bwd,
    &udnn_cpu_fast_bn_fwd_train,
    &udnn_cpu_fast_bn_fwd_infer,
    &udnn_cpu_fast_bn_bwd,
    &udnn_cpu_fast_conv_fwd,
    &udnn_cpu_fast_conv_bwd_data,
    &udnn_cpu_fast_conv_bwd_filter,
    &udnn_cpu_fast_conv_bias_act,
    &udnn_cpu_fast_matmul,
    &udnn_cpu_fast_pool_fwd,
    &udnn_cpu_fast_pool_bwd,
    &udnn_cpu_fast_softmax_fwd,
    &udnn_cpu_fast_softmax_bwd,
    &udnn_cpu_fast_set_tensor,
    &udnn_cpu_fast_scale_tensor,
    &udnn_cpu_fast_add_tensor,
    &udnn_cpu_fast_op_tensor,
    &udnn_cpu_fast_conv_bwd_bias,
    &udnn_cpu_ref_conv_fwd,     &udnn_cpu_ref_conv_bwd_data,   &udnn_cpu_ref_conv_bwd_filter,
    &udnn_cpu_ref_conv_bwd_bias, &udnn_cpu_ref_conv_bias_act,  &udnn_cpu_ref_act_fwd,
    &udnn_cpu_ref_act_bwd,      &udnn_cpu_ref_pool_fwd,        &udnn_cpu_ref_pool_bwd,
    &udnn_cpu_ref_softmax_fwd,  &udnn_cpu_ref_softmax_bwd,     &udnn_cpu_ref_set_tensor,
    &udnn_cpu_ref_scale_tensor, &udnn_cpu_ref_add_tensor,      &udnn_cpu_ref_transform_tensor,
    &udnn_cpu_ref_op_tensor,    &udnn_cpu_ref_bn_fwd_train,    &udnn_cpu_ref_bn_fwd_infer,
    &udnn_cpu_ref_bn_bwd,       &udnn_cpu_ref_norm_fwd,        &udnn_cpu_ref_norm_bwd,
    &udnn_cpu_ref_groupnorm_fwd, &udnn_cpu_ref_groupnorm_bwd,  &udnn_cpu_ref_lrn_fwd,
    &udnn_cpu_ref_lrn_bwd,      &udnn_cpu_ref_dropout_fwd,     &udnn_cpu_ref_dropout_bwd,
    &udnn_cpu_ref_reduce,       &udnn_cpu_ref_matmul,
};

static const udnn_backend cpu_backend = {
    /* .abi_version = */ UDNN_BACKEND_ABI_VERSION,
    /* .struct_size = */ sizeof(udnn_backend),
    /* .name = */ "cpu",
    /* .kind = */ UDNN_BACKEND_CPU,
    /* .device_count = */ cpu_device_count,
    /* .context_create = */ cpu_context_create,
    /* .context_destroy = */ cpu_context_destroy,
    /* .alloc = */ cpu_alloc,
    /* .free = */ cpu_free,
    /* .memcpy = */ cpu_memcpy,
    /* .memset = */ cpu_memset,
    /* .set_stream = */ cpu_set_stream,
    /* .get_stream = */ cpu_get_stream,
    /* .synchronize = */ cpu_synchronize,
    /* .device_name = */ cpu_device_name,
    /* .solvers = */ cpu_solvers,
    /* .solver_count = */ sizeof cpu_solvers / sizeof *cpu_solvers,
};

__attribute__((visibility("hidden"))) const udnn_backend *
udnn_cpu_backend(const udnn_host_api *host_api)
{
    host = host_api;
    return &cpu_backend;
}
