/* dropout.h - the reference dropout (cpu/ref/dropout.c and the GPU
 * backends' reference-bits solvers), an element at a time.
 *
 * The mask is udnn.h's contract, drawn through backends/philox.h so that
 * every backend keeps the same elements. Dropped elements are written as
 * 0 whatever their input (a NaN input does not leak through the mask).
 * Each element is read and written at its own position only, so an output
 * may share its input's buffer (core checks the layouts agree). The
 * forward's caller advances the states' call count once every element is
 * drawn. */
#ifndef UDNN_REF_DROPOUT_H
#define UDNN_REF_DROPOUT_H

#include <string.h>

#include "backends/philox.h"
#include "backends/ref/ref.h"

/* The states as DropoutForward finds them in the handle's memory. */
typedef struct {
    uint64_t key;
    uint64_t calls;
} ref_dropout_state;

/* Element i (logical) of out = in / (1 - p) where mask[i], else 0. */
UDNN_REF_FN void ref_dropout_apply_at(const udnn_dropout_problem *p, int64_t i)
{
    const unsigned char *mask = (const unsigned char *)p->reserve;
    const double scale = 1.0 / (1.0 - (double)p->p);
    double v = mask[i] ? ref_load(p->in_ptr, p->in.dtype, ref_offset(&p->in, i)) * scale : 0.0;
    ref_store(p->out_ptr, p->out.dtype, ref_offset(&p->out, i), v);
}

/* Element i of the forward: its mask entry from the states (every element
 * kept without them: dropout 0 may come without states), then out. */
UDNN_REF_FN void ref_dropout_fwd_at(const udnn_dropout_problem *p, int64_t i)
{
    unsigned char *mask = (unsigned char *)p->reserve;
    if (p->states == NULL) {
        mask[i] = 1;
    } else {
        ref_dropout_state st;
        memcpy(&st, p->states, sizeof st);
        mask[i] = udnn_dropout_draw(st.key, st.calls, (uint64_t)i) >= udnn_dropout_threshold(p->p);
    }
    ref_dropout_apply_at(p, i);
}

#endif /* UDNN_REF_DROPOUT_H */
