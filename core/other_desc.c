/* other_desc.c - the descriptors of the reduce, LRN, dropout and batch
 * normalization ops, complete with validation before their ops arrive.
 *
 * Decisions where cuDNN is silent or lenient:
 *  - SetReduceTensorDescriptor rejects FLATTENED_INDICES for ops other than
 *    MIN, MAX and AMAX at once (cuDNN accepts the descriptor and fails at
 *    ReduceTensor): a descriptor that can never run is a bug at its source.
 *  - The Get calls accept NULL for any output they should not fill, as
 *    udnnGetTensor4dDescriptor does.
 *  - A failed Set leaves the descriptor as it was. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

/* ---- ReduceTensor --------------------------------------------------------------- */

static int reduce_has_indices(udnnReduceTensorOp_t op)
{
    return op == UDNN_REDUCE_TENSOR_MIN || op == UDNN_REDUCE_TENSOR_MAX ||
           op == UDNN_REDUCE_TENSOR_AMAX;
}

udnnStatus_t udnnCreateReduceTensorDescriptor(udnnReduceTensorDescriptor_t *reduceTensorDesc)
{
    static const char fn[] = "udnnCreateReduceTensorDescriptor";
    UDNN_LOG_API_CALL("%s(reduceTensorDesc=%p)", fn, (void *)reduceTensorDesc);
    UDNN_TRY(udnn_check_ptr(fn, "reduceTensorDesc", reduceTensorDesc));
    *reduceTensorDesc = calloc(1, sizeof **reduceTensorDesc);
    if (*reduceTensorDesc == NULL)
        return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyReduceTensorDescriptor(udnnReduceTensorDescriptor_t reduceTensorDesc)
{
    static const char fn[] = "udnnDestroyReduceTensorDescriptor";
    UDNN_LOG_API_CALL("%s(reduceTensorDesc=%p)", fn, (void *)reduceTensorDesc);
    free(reduceTensorDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetReduceTensorDescriptor(udnnReduceTensorDescriptor_t reduceTensorDesc,
                                           udnnReduceTensorOp_t reduceTensorOp,
                                           udnnDataType_t reduceTensorCompType,
                                           udnnNanPropagation_t reduceTensorNanOpt,
                                           udnnReduceTensorIndices_t reduceTensorIndices,
                                           udnnIndicesType_t reduceTensorIndicesType)
{
    static const char fn[] = "udnnSetReduceTensorDescriptor";
    UDNN_LOG_API_CALL("%s(reduceTensorDesc=%p, reduceTensorOp=%d, reduceTensorCompType=%s, "
                      "reduceTensorNanOpt=%d, reduceTensorIndices=%d, "
                      "reduceTensorIndicesType=%d)",
                      fn, (void *)reduceTensorDesc, (int)reduceTensorOp,
                      udnn_dtype_name(reduceTensorCompType), (int)reduceTensorNanOpt,
                      (int)reduceTensorIndices, (int)reduceTensorIndicesType);
    UDNN_TRY(udnn_check_ptr(fn, "reduceTensorDesc", reduceTensorDesc));
    if (reduceTensorOp < UDNN_REDUCE_TENSOR_ADD || reduceTensorOp > UDNN_REDUCE_TENSOR_MUL_NO_ZEROS)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorOp %d is not a udnnReduceTensorOp_t", fn,
                         (int)reduceTensorOp);
    if (reduceTensorCompType != UDNN_DATA_FLOAT && reduceTensorCompType != UDNN_DATA_DOUBLE)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorCompType is %s (%d); it must be FLOAT or DOUBLE", fn,
                         udnn_dtype_name(reduceTensorCompType), (int)reduceTensorCompType);
    if (reduceTensorNanOpt != UDNN_NOT_PROPAGATE_NAN && reduceTensorNanOpt != UDNN_PROPAGATE_NAN)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorNanOpt %d is not a udnnNanPropagation_t", fn,
                         (int)reduceTensorNanOpt);
    if (reduceTensorIndices != UDNN_REDUCE_TENSOR_NO_INDICES &&
        reduceTensorIndices != UDNN_REDUCE_TENSOR_FLATTENED_INDICES)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorIndices %d is not a udnnReduceTensorIndices_t", fn,
                         (int)reduceTensorIndices);
    if (reduceTensorIndicesType < UDNN_32BIT_INDICES ||
        reduceTensorIndicesType > UDNN_8BIT_INDICES)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorIndicesType %d is not a udnnIndicesType_t", fn,
                         (int)reduceTensorIndicesType);
    if (reduceTensorIndices == UDNN_REDUCE_TENSOR_FLATTENED_INDICES &&
        !reduce_has_indices(reduceTensorOp))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: reduceTensorIndices is FLATTENED_INDICES but reduceTensorOp %d has "
                         "none; only MIN, MAX and AMAX produce indices",
                         fn, (int)reduceTensorOp);
    reduceTensorDesc->op = reduceTensorOp;
    reduceTensorDesc->compute_type = reduceTensorCompType;
    reduceTensorDesc->nan_opt = reduceTensorNanOpt;
    reduceTensorDesc->indices = reduceTensorIndices;
    reduceTensorDesc->indices_type = reduceTensorIndicesType;
    reduceTensorDesc->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetReduceTensorDescriptor(const udnnReduceTensorDescriptor_t reduceTensorDesc,
                                           udnnReduceTensorOp_t *reduceTensorOp,
                                           udnnDataType_t *reduceTensorCompType,
                                           udnnNanPropagation_t *reduceTensorNanOpt,
                                           udnnReduceTensorIndices_t *reduceTensorIndices,
                                           udnnIndicesType_t *reduceTensorIndicesType)
{
    static const char fn[] = "udnnGetReduceTensorDescriptor";
    UDNN_LOG_API_CALL("%s(reduceTensorDesc=%p, reduceTensorOp=%p, reduceTensorCompType=%p, "
                      "reduceTensorNanOpt=%p, reduceTensorIndices=%p, reduceTensorIndicesType=%p)",
                      fn, (void *)reduceTensorDesc, (void *)reduceTensorOp,
                      (void *)reduceTensorCompType, (void *)reduceTensorNanOpt,
                      (void *)reduceTensorIndices, (void *)reduceTensorIndicesType);
    UDNN_TRY(udnn_check_ptr(fn, "reduceTensorDesc", reduceTensorDesc));
    if (!reduceTensorDesc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: reduceTensorDesc has not been set", fn);
    if (reduceTensorOp) *reduceTensorOp = reduceTensorDesc->op;
    if (reduceTensorCompType) *reduceTensorCompType = reduceTensorDesc->compute_type;
    if (reduceTensorNanOpt) *reduceTensorNanOpt = reduceTensorDesc->nan_opt;
    if (reduceTensorIndices) *reduceTensorIndices = reduceTensorDesc->indices;
    if (reduceTensorIndicesType) *reduceTensorIndicesType = reduceTensorDesc->indices_type;
    return UDNN_STATUS_SUCCESS;
}

/* ---- LRN ------------------------------------------------------------------------------ */

udnnStatus_t udnnCreateLRNDescriptor(udnnLRNDescriptor_t *normDesc)
{
    static const char fn[] = "udnnCreateLRNDescriptor";
    UDNN_LOG_API_CALL("%s(normDesc=%p)", fn, (void *)normDesc);
    UDNN_TRY(udnn_check_ptr(fn, "normDesc", normDesc));
    struct udnnLRNStruct *d = malloc(sizeof *d);
    if (d == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    /* cuDNN's defaults, so a new descriptor is usable as it is */
    d->n = 5;
    d->alpha = 1e-4;
    d->beta = 0.75;
    d->k = 2.0;
    *normDesc = d;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyLRNDescriptor(udnnLRNDescriptor_t lrnDesc)
{
    static const char fn[] = "udnnDestroyLRNDescriptor";
    UDNN_LOG_API_CALL("%s(lrnDesc=%p)", fn, (void *)lrnDesc);
    free(lrnDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnSetLRNDescriptor(udnnLRNDescriptor_t normDesc, unsigned lrnN, double lrnAlpha,
                                  double lrnBeta, double lrnK)
{
    static const char fn[] = "udnnSetLRNDescriptor";
    UDNN_LOG_API_CALL("%s(normDesc=%p, lrnN=%u, lrnAlpha=%g, lrnBeta=%g, lrnK=%g)", fn,
                      (void *)normDesc, lrnN, lrnAlpha, lrnBeta, lrnK);
    UDNN_TRY(udnn_check_ptr(fn, "normDesc", normDesc));
    if (lrnN < UDNN_LRN_MIN_N || lrnN > UDNN_LRN_MAX_N)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: lrnN is %u; it must be %d to %d", fn, lrnN,
                         UDNN_LRN_MIN_N, UDNN_LRN_MAX_N);
    if (!isfinite(lrnAlpha))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: lrnAlpha is %g; it must be finite", fn,
                         lrnAlpha);
    if (!isfinite(lrnBeta) || !(lrnBeta >= UDNN_LRN_MIN_BETA))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: lrnBeta is %g; it must be finite and >= %g", fn, lrnBeta,
                         UDNN_LRN_MIN_BETA);
    if (!isfinite(lrnK) || !(lrnK >= UDNN_LRN_MIN_K))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: lrnK is %g; it must be finite and >= %g",
                         fn, lrnK, UDNN_LRN_MIN_K);
    normDesc->n = lrnN;
    normDesc->alpha = lrnAlpha;
    normDesc->beta = lrnBeta;
    normDesc->k = lrnK;
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetLRNDescriptor(udnnLRNDescriptor_t normDesc, unsigned *lrnN,
                                  double *lrnAlpha, double *lrnBeta, double *lrnK)
{
    static const char fn[] = "udnnGetLRNDescriptor";
    UDNN_LOG_API_CALL("%s(normDesc=%p, lrnN=%p, lrnAlpha=%p, lrnBeta=%p, lrnK=%p)",
                      fn, (void *)normDesc, (void *)lrnN, (void *)lrnAlpha, (void *)lrnBeta,
                      (void *)lrnK);
    UDNN_TRY(udnn_check_ptr(fn, "normDesc", normDesc));
    if (lrnN) *lrnN = normDesc->n;
    if (lrnAlpha) *lrnAlpha = normDesc->alpha;
    if (lrnBeta) *lrnBeta = normDesc->beta;
    if (lrnK) *lrnK = normDesc->k;
    return UDNN_STATUS_SUCCESS;
}

/* ---- dropout ------------------------------------------------------------------------ */

/* The generator state in the handle's memory: the Philox key (the seed)
 * and the count of DropoutForward calls made so far. */
typedef struct {
    uint64_t key;
    uint64_t calls;
} dropout_state;

udnnStatus_t udnnCreateDropoutDescriptor(udnnDropoutDescriptor_t *dropoutDesc)
{
    static const char fn[] = "udnnCreateDropoutDescriptor";
    UDNN_LOG_API_CALL("%s(dropoutDesc=%p)", fn, (void *)dropoutDesc);
    UDNN_TRY(udnn_check_ptr(fn, "dropoutDesc", dropoutDesc));
    *dropoutDesc = calloc(1, sizeof **dropoutDesc);
    if (*dropoutDesc == NULL) return udnn_fail(UDNN_STATUS_ALLOC_FAILED, "%s: out of memory", fn);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDestroyDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc)
{
    static const char fn[] = "udnnDestroyDropoutDescriptor";
    UDNN_LOG_API_CALL("%s(dropoutDesc=%p)", fn, (void *)dropoutDesc);
    free(dropoutDesc);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDropoutGetStatesSize(udnnHandle_t handle, size_t *sizeInBytes)
{
    static const char fn[] = "udnnDropoutGetStatesSize";
    UDNN_LOG_API_CALL("%s(handle=%p, sizeInBytes=%p)", fn, (void *)handle, (void *)sizeInBytes);
    UDNN_TRY(udnn_check_handle(fn, handle));
    UDNN_TRY(udnn_check_ptr(fn, "sizeInBytes", sizeInBytes));
    *sizeInBytes = sizeof(dropout_state);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnDropoutGetReserveSpaceSize(udnnTensorDescriptor_t xdesc, size_t *sizeInBytes)
{
    static const char fn[] = "udnnDropoutGetReserveSpaceSize";
    char xbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(xdesc=%s, sizeInBytes=%p)",
                      fn, udnn_tensor_str(xdesc, xbuf, sizeof xbuf), (void *)sizeInBytes);
    UDNN_TRY(udnn_check_tensor(fn, "xdesc", xdesc));
    UDNN_TRY(udnn_check_ptr(fn, "sizeInBytes", sizeInBytes));
    size_t count = 1; /* one mask byte per element; the descriptor bounds the product */
    for (int i = 0; i < xdesc->nb_dims; i++) count *= (size_t)xdesc->dims[i];
    *sizeInBytes = count;
    return UDNN_STATUS_SUCCESS;
}

/* The checks Set and Restore share. */
static udnnStatus_t check_dropout_args(const char *fn, udnnDropoutDescriptor_t dropoutDesc,
                                       udnnHandle_t handle, float dropout, const void *states,
                                       size_t stateSizeInBytes)
{
    UDNN_TRY(udnn_check_ptr(fn, "dropoutDesc", dropoutDesc));
    UDNN_TRY(udnn_check_handle(fn, handle));
    if (!(dropout >= 0.0f && dropout < 1.0f))
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: dropout is %g; it must be in [0, 1)", fn,
                         (double)dropout);
    if (states == NULL) {
        if (dropout != 0.0f)
            return udnn_fail(UDNN_STATUS_BAD_PARAM,
                             "%s: states is NULL; only dropout 0 may go without states (dropout "
                             "is %g)",
                             fn, (double)dropout);
        return UDNN_STATUS_SUCCESS;
    }
    if (stateSizeInBytes < sizeof(dropout_state))
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: stateSizeInBytes is %zu; the states need %zu "
                         "(udnnDropoutGetStatesSize)",
                         fn, stateSizeInBytes, sizeof(dropout_state));
    return UDNN_STATUS_SUCCESS;
}

static void store_dropout(udnnDropoutDescriptor_t d, udnnHandle_t handle, float dropout,
                          void *states, size_t state_bytes, unsigned long long seed)
{
    d->handle = handle;
    d->dropout = dropout;
    d->states = states;
    d->state_bytes = state_bytes;
    d->seed = seed;
    d->is_set = 1;
}

udnnStatus_t udnnSetDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc, udnnHandle_t handle,
                                      float dropout, void *states, size_t stateSizeInBytes,
                                      unsigned long long seed)
{
    static const char fn[] = "udnnSetDropoutDescriptor";
    UDNN_LOG_API_CALL("%s(dropoutDesc=%p, handle=%p, dropout=%g, states=%p, "
                      "stateSizeInBytes=%zu, seed=%llu)",
                      fn, (void *)dropoutDesc, (void *)handle, (double)dropout, states,
                      stateSizeInBytes, seed);
    UDNN_TRY(check_dropout_args(fn, dropoutDesc, handle, dropout, states, stateSizeInBytes));
    if (states != NULL) {
        const dropout_state init = {(uint64_t)seed, 0};
        udnnStatus_t st = udnnMemcpy(handle, states, &init, sizeof init,
                                     UDNN_MEMCPY_HOST_TO_DEVICE);
        if (st != UDNN_STATUS_SUCCESS) {
            char why[1024];
            udnnGetLastErrorString(why, sizeof why);
            return udnn_fail(st, "%s: states could not be initialized: %s", fn, why);
        }
    }
    store_dropout(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnRestoreDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc,
                                          udnnHandle_t handle, float dropout, void *states,
                                          size_t stateSizeInBytes, unsigned long long seed)
{
    static const char fn[] = "udnnRestoreDropoutDescriptor";
    UDNN_LOG_API_CALL("%s(dropoutDesc=%p, handle=%p, dropout=%g, states=%p, "
                      "stateSizeInBytes=%zu, seed=%llu)",
                      fn, (void *)dropoutDesc, (void *)handle, (double)dropout, states,
                      stateSizeInBytes, seed);
    UDNN_TRY(check_dropout_args(fn, dropoutDesc, handle, dropout, states, stateSizeInBytes));
    store_dropout(dropoutDesc, handle, dropout, states, stateSizeInBytes, seed);
    return UDNN_STATUS_SUCCESS;
}

udnnStatus_t udnnGetDropoutDescriptor(udnnDropoutDescriptor_t dropoutDesc, udnnHandle_t handle,
                                      float *dropout, void **states, unsigned long long *seed)
{
    static const char fn[] = "udnnGetDropoutDescriptor";
    UDNN_LOG_API_CALL("%s(dropoutDesc=%p, handle=%p, dropout=%p, states=%p, seed=%p)",
                      fn, (void *)dropoutDesc, (void *)handle, (void *)dropout, (void *)states,
                      (void *)seed);
    UDNN_TRY(udnn_check_ptr(fn, "dropoutDesc", dropoutDesc));
    UDNN_TRY(udnn_check_handle(fn, handle));
    if (!dropoutDesc->is_set)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: dropoutDesc has not been set", fn);
    if (dropout) *dropout = dropoutDesc->dropout;
    if (states) *states = dropoutDesc->states;
    if (seed) *seed = dropoutDesc->seed;
    return UDNN_STATUS_SUCCESS;
}

/* ---- batch normalization --------------------------------------------------------------- */

udnnStatus_t udnnDeriveBNTensorDescriptor(udnnTensorDescriptor_t derivedBnDesc,
                                          const udnnTensorDescriptor_t xDesc,
                                          udnnBatchNormMode_t mode)
{
    static const char fn[] = "udnnDeriveBNTensorDescriptor";
    char xbuf[UDNN_STR_DESC];
    UDNN_LOG_API_CALL("%s(derivedBnDesc=%p, xDesc=%s, mode=%d)", fn, (void *)derivedBnDesc,
                      udnn_tensor_str(xDesc, xbuf, sizeof xbuf), (int)mode);
    UDNN_TRY(udnn_check_ptr(fn, "derivedBnDesc", derivedBnDesc));
    UDNN_TRY(udnn_check_tensor(fn, "xDesc", xDesc));
    UDNN_TRY(udnn_check_rank(fn, "xDesc", xDesc, 4, 5));
    UDNN_TRY(udnn_check_float_type(fn, "xDesc", xDesc));
    if (mode != UDNN_BATCHNORM_PER_ACTIVATION && mode != UDNN_BATCHNORM_SPATIAL &&
        mode != UDNN_BATCHNORM_SPATIAL_PERSISTENT)
        return udnn_fail(UDNN_STATUS_BAD_PARAM, "%s: mode %d is not a udnnBatchNormMode_t", fn,
                         (int)mode);

    const int nb = xDesc->nb_dims;
    int dims[UDNN_DIM_MAX];
    dims[0] = 1;
    dims[1] = xDesc->dims[1];
    const int per_activation = mode == UDNN_BATCHNORM_PER_ACTIVATION;
    for (int i = 2; i < nb; i++) dims[i] = per_activation ? xDesc->dims[i] : 1;
    int64_t strides[UDNN_DIM_MAX];
    udnn_packed_strides(UDNN_TENSOR_NCHW, nb, dims, strides);
    if (strides[0] > INT32_MAX)
        return udnn_fail(UDNN_STATUS_BAD_PARAM,
                         "%s: xDesc's per-activation statistics would have %lld elements; at "
                         "most INT_MAX are supported",
                         fn, (long long)strides[0]);

    /* statistics of half-width data are kept in float */
    const udnnDataType_t t = xDesc->dtype == UDNN_DATA_HALF || xDesc->dtype == UDNN_DATA_BFLOAT16
                                 ? UDNN_DATA_FLOAT
                                 : xDesc->dtype;
    derivedBnDesc->dtype = t;
    derivedBnDesc->nb_dims = nb;
    for (int i = 0; i < nb; i++) {
        derivedBnDesc->dims[i] = dims[i];
        derivedBnDesc->strides[i] = (int)strides[i];
    }
    derivedBnDesc->is_set = 1;
    return UDNN_STATUS_SUCCESS;
}
