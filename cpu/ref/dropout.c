/* dropout.c - reference dropout, forward and backward.
 *
 * The mask is udnn.h's contract, drawn through backends/philox.h so that
 * every backend keeps the same elements. Dropped elements are written as
 * 0 whatever their input (a NaN input does not leak through the mask).
 * Each element is read and written at its own position only, so an output
 * may share its input's buffer (core checks the layouts agree). */
#include <string.h>

#include "backends/philox.h"
#include "cpu/cpu_solvers.h"

/* The states as DropoutForward finds them in host memory. */
typedef struct {
    uint64_t key;
    uint64_t calls;
} dropout_state;

static double keep_scale(float p)
{
    return 1.0 / (1.0 - (double)p);
}

/* out[i] = in[i] * scale where mask[i], else 0; i the logical index. */
static void apply_mask(const udnn_dropout_problem *p, const unsigned char *mask)
{
    const double scale = keep_scale(p->p);
    const int64_t count = ref_count(&p->in);
    for (int64_t i = 0; i < count; i++) {
        double v = mask[i] ? ref_load(p->in_ptr, p->in.dtype, ref_offset(&p->in, i)) * scale : 0.0;
        ref_store(p->out_ptr, p->out.dtype, ref_offset(&p->out, i), v);
    }
}

static udnnStatus_t dropout_fwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_dropout_problem *p = problem;
    unsigned char *mask = p->reserve;
    const int64_t count = ref_count(&p->in);
    /* dropout 0 may come without states: it keeps everything and counts nothing */
    if (p->states == NULL) {
        memset(mask, 1, (size_t)count);
    } else {
        dropout_state st;
        memcpy(&st, p->states, sizeof st);
        const uint64_t threshold = udnn_dropout_threshold(p->p);
        for (int64_t i = 0; i < count; i++)
            mask[i] = udnn_dropout_draw(st.key, st.calls, (uint64_t)i) >= threshold;
        st.calls++;
        memcpy(p->states, &st, sizeof st);
    }
    apply_mask(p, mask);
    return UDNN_STATUS_SUCCESS;
}

static udnnStatus_t dropout_bwd_run(void *ctx, const void *problem, void *workspace,
                                    size_t workspace_bytes)
{
    (void)ctx;
    (void)workspace;
    (void)workspace_bytes;
    const udnn_dropout_problem *p = problem;
    apply_mask(p, p->reserve);
    return UDNN_STATUS_SUCCESS;
}

const udnn_solver udnn_cpu_ref_dropout_fwd = {
    /* .name = */ "ref_dropout_fwd",
    /* .op = */ UDNN_OP_DROPOUT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ dropout_fwd_run,
};

const udnn_solver udnn_cpu_ref_dropout_bwd = {
    /* .name = */ "ref_dropout_bwd",
    /* .op = */ UDNN_OP_DROPOUT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ NULL,
    /* .workspace = */ NULL,
    /* .run = */ dropout_bwd_run,
};
