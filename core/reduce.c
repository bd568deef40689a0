/* reduce.c - ReduceTensor and its size queries: validation, then one
 * udnn_reduce_problem.
 *
 * Decisions where cuDNN is silent or lenient:
 *  - A and C have one data type (cuDNN also takes some mixed pairs).
 *  - The indices, when the descriptor asks for them, are packed in C's
 *    row-major logical order whatever C's strides, in the descriptor's
 *    width, unsigned, host byte order. A reduction whose group is too large
 *    for that width is refused rather than truncated.
 *  - With NO_INDICES, the indices argument is ignored (it may be NULL) and
 *    never written.
 *  - Nothing reduced (C has A's dims) is a valid, element-wise reduction;
 *    only then may C be A's buffer, with A's layout. */
#include <stdio.h>

#include "core/core.h"

static const char *reduce_desc_str(const udnnReduceTensorDescriptor_t d, char *buf, size_t n)
{
    if (d == NULL) snprintf(buf, n, "NULL");
    else if (!d->is_set) snprintf(buf, n, "unset");
    else
        snprintf(buf, n, "{op=%d, compType=%s, nanOpt=%d, indices=%d, indicesType=%d}",
                 (int)d->op, udnn_dtype_name(d->compute_type), (int)d->nan_opt, (int)d->indices,
                 (int)d->indices_type);
    return buf;
}

static size_t index_bytes(udnnIndicesType_t t)
{
    switch (t) {
    case UDNN_8BIT_INDICES: return 1;
    case UDNN_16BIT_INDICES: return 2;
    case UDNN_32BIT_INDICES: return 4;
    case UDNN_64BIT_INDICES: return 8;
    }
    return 0;
}

static int64_t element_count(const udnnTensorDescriptor_t d)
{
    int64_t n = 1;
    for (int i = 0; i < d->nb_dims; i++) n *= d->dims[i];
    return n;
}

static int wants_indices(const udnnReduceTensorDescriptor_t d)
{
    return d->indices == UDNN_REDUCE_TENSOR_FLATTENED_INDICES;
}

/* Bytes of the indices output: one index per element of C, or none. */
static size_t indices_size(const udnnReduceTensorDescriptor_t d, const udnnTensorDescriptor_t c)
{
    if (!wants_indices(d)) return 0;
    return (size_t)element_count(c) * index_bytes(d->indices_type);
}

/* The descriptor, the shapes and the types; what the size queries and the
 * op check alike. */
static udnnStatus_t check_reduction(const char *fn, const udnnReduceTensorDescriptor_t desc,
                                    const udnnTensorDescriptor_t aDesc,
                                    const udnnTensorDescriptor_t cDesc)
{
    UDNN_TRY(udnn_check_float_type(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_same_type(fn, "aDesc", aDesc, "cDesc", cDesc));
    if (aDesc->dtype == UDNN_DATA_DOUBLE && desc->compute_type != UDNN_DATA_DOUBLE)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorDesc computes in %s; DOUBLE data needs compType DOUBLE",
                         fn, udnn_dtype_name(desc->compute_type));
    UDNN_TRY(udnn_check_rank(fn, "aDesc", aDesc, 2, UDNN_DIM_MAX));
    if (cDesc->nb_dims != aDesc->nb_dims)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: cDesc has %d dimensions, aDesc has %d", fn,
                         cDesc->nb_dims, aDesc->nb_dims);
    for (int i = 0; i < aDesc->nb_dims; i++)
        if (cDesc->dims[i] != aDesc->dims[i] && cDesc->dims[i] != 1)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: cDesc has dimension %d of size %d, aDesc has %d; it must be %d "
                             "(kept) or 1 (reduced)",
                             fn, i, cDesc->dims[i], aDesc->dims[i], aDesc->dims[i]);
    if (wants_indices(desc) && desc->indices_type != UDNN_64BIT_INDICES) {
        const int bits = (int)index_bytes(desc->indices_type) * 8;
        const int64_t group = element_count(aDesc) / element_count(cDesc);
        if (group - 1 > (int64_t)((UINT64_C(1) << bits) - 1))
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: reduceTensorDesc has %d-bit indices, but aDesc reduces %lld "
                             "elements into each of cDesc's; use a wider indices type",
                             fn, bits, (long long)group);
    }
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t check_query(const char *fn, udnnHandle_t handle,
                                const udnnReduceTensorDescriptor_t desc,
                                const udnnTensorDescriptor_t aDesc,
                                const udnnTensorDescriptor_t cDesc, const size_t *sizeInBytes)
{
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "reduceTensorDesc", desc));
    if (!desc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: reduceTensorDesc has not been set", fn);
    UDNN_TRY(udnn_check_tensor(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_tensor(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_ptr(fn, "sizeInBytes", sizeInBytes));
    return check_reduction(fn, desc, aDesc, cDesc);
}

static void make_problem(udnn_reduce_problem *p, const udnnReduceTensorDescriptor_t desc,
                         const udnnTensorDescriptor_t aDesc, const udnnTensorDescriptor_t cDesc)
{
    *p = (udnn_reduce_problem){0};
    p->op = desc->op;
    p->compute_type = desc->compute_type;
    p->nan_opt = desc->nan_opt;
    p->indices_type = desc->indices_type;
    udnn_tensor_from_desc(aDesc, &p->a);
    udnn_tensor_from_desc(cDesc, &p->c);
}

udnnStatus_t udnnGetReductionIndicesSize(udnnHandle_t handle,
                                         const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                         const udnnTensorDescriptor_t aDesc,
                                         const udnnTensorDescriptor_t cDesc, size_t *sizeInBytes)
{
    static const char fn[] = "udnnGetReductionIndicesSize";
    char rd[UDNN_STR_DESC], ad[UDNN_STR_DESC], cd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, reduceTensorDesc=%s, aDesc=%s, cDesc=%s, sizeInBytes=%p)",
                      fn, (void *)handle, reduce_desc_str(reduceTensorDesc, rd, sizeof rd),
                      udnn_tensor_str(aDesc, ad, sizeof ad), udnn_tensor_str(cDesc, cd, sizeof cd),
                      (void *)sizeInBytes);
    UDNN_TRY(check_query(fn, handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes));
    *sizeInBytes = indices_size(reduceTensorDesc, cDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetReductionWorkspaceSize(udnnHandle_t handle,
                                           const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                           const udnnTensorDescriptor_t aDesc,
                                           const udnnTensorDescriptor_t cDesc,
                                           size_t *sizeInBytes)
{
    static const char fn[] = "udnnGetReductionWorkspaceSize";
    char rd[UDNN_STR_DESC], ad[UDNN_STR_DESC], cd[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(handle=%p, reduceTensorDesc=%s, aDesc=%s, cDesc=%s, sizeInBytes=%p)",
                      fn, (void *)handle, reduce_desc_str(reduceTensorDesc, rd, sizeof rd),
                      udnn_tensor_str(aDesc, ad, sizeof ad), udnn_tensor_str(cDesc, cd, sizeof cd),
                      (void *)sizeInBytes);
    UDNN_TRY(check_query(fn, handle, reduceTensorDesc, aDesc, cDesc, sizeInBytes));
    udnn_reduce_problem p;
    make_problem(&p, reduceTensorDesc, aDesc, cDesc);
    *sizeInBytes = udnn_dispatch_workspace(handle, UDNN_OP_REDUCE, &p);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnReduceTensor(udnnHandle_t handle,
                              const udnnReduceTensorDescriptor_t reduceTensorDesc, void *indices,
                              size_t indicesSizeInBytes, void *workspace,
                              size_t workspaceSizeInBytes, const void *alpha,
                              const udnnTensorDescriptor_t aDesc, const void *A, const void *beta,
                              const udnnTensorDescriptor_t cDesc, void *C)
{
    static const char fn[] = "udnnReduceTensor";
    char rd[UDNN_STR_DESC], ad[UDNN_STR_DESC], cd[UDNN_STR_DESC];
    char as[UDNN_STR_SCALAR], bs[UDNN_STR_SCALAR];
    UDNN_LOG_API_CALL("%s(handle=%p, reduceTensorDesc=%s, indices=%p, indicesSizeInBytes=%zu, "
                      "workspace=%p, workspaceSizeInBytes=%zu, alpha=%s, aDesc=%s, A=%p, "
                      "beta=%s, cDesc=%s, C=%p)",
                      fn, (void *)handle, reduce_desc_str(reduceTensorDesc, rd, sizeof rd),
                      indices, indicesSizeInBytes, workspace, workspaceSizeInBytes,
                      udnn_scalar_str(alpha, udnn_log_scalar_type(cDesc), as, sizeof as),
                      udnn_tensor_str(aDesc, ad, sizeof ad), A,
                      udnn_scalar_str(beta, udnn_log_scalar_type(cDesc), bs, sizeof bs),
                      udnn_tensor_str(cDesc, cd, sizeof cd), C);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "reduceTensorDesc", reduceTensorDesc));
    if (!reduceTensorDesc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: reduceTensorDesc has not been set", fn);
    UDNN_TRY(udnn_check_ptr(fn, "alpha", alpha));
    UDNN_TRY(udnn_check_tensor(fn, "aDesc", aDesc));
    UDNN_TRY(udnn_check_ptr(fn, "A", A));
    UDNN_TRY(udnn_check_ptr(fn, "beta", beta));
    UDNN_TRY(udnn_check_tensor(fn, "cDesc", cDesc));
    UDNN_TRY(udnn_check_ptr(fn, "C", C));
    UDNN_TRY(check_reduction(fn, reduceTensorDesc, aDesc, cDesc));
    UDNN_TRY(udnn_check_in_place(fn, "C", "cDesc", cDesc, C, "A", "aDesc", aDesc, A));

    const size_t need_indices = indices_size(reduceTensorDesc, cDesc);
    if (wants_indices(reduceTensorDesc)) {
        if (indices == NULL)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: indices is NULL, but reduceTensorDesc asks for "
                             "FLATTENED_INDICES (%zu bytes; udnnGetReductionIndicesSize)",
                             fn, need_indices);
        if (indicesSizeInBytes < need_indices)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: indicesSizeInBytes is %zu; cDesc's indices need %zu "
                             "(udnnGetReductionIndicesSize)",
                             fn, indicesSizeInBytes, need_indices);
    }

    udnn_reduce_problem p;
    make_problem(&p, reduceTensorDesc, aDesc, cDesc);
    p.alpha = udnn_read_scalar(alpha, cDesc->dtype);
    p.beta = udnn_read_scalar(beta, cDesc->dtype);
    p.a_ptr = A;
    p.c_ptr = C;
    p.indices_ptr = wants_indices(reduceTensorDesc) ? indices : NULL;

    const size_t need_ws = udnn_dispatch_workspace(handle, UDNN_OP_REDUCE, &p);
    if (workspaceSizeInBytes < need_ws)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: workspaceSizeInBytes is %zu; this reduction needs %zu "
                         "(udnnGetReductionWorkspaceSize)",
                         fn, workspaceSizeInBytes, need_ws);
    if (need_ws > 0 && workspace == NULL)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: workspace is NULL; this reduction needs %zu bytes", fn, need_ws);
    return udnn_dispatch(handle, fn, UDNN_OP_REDUCE, -1, &p, workspace, workspaceSizeInBytes);
}
