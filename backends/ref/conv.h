/* conv.h - the reference convolution (cpu/ref/conv.c, and the GPU
 * backends' reference-bits solvers): an output element of the forward,
 * backward data, backward filter, backward bias and the fused
 * conv-bias-activation.
 *
 * Every kernel gathers: it loops over the elements of its output and sums,
 * in double, every product that reaches that element, so each output is
 * written once and blended once. Outputs are independent, so a backend
 * computes them in parallel, with the same result on any number of
 * threads. Tensors are n, c, d, h, w (see
 * backends/backend.h); the geometry of output position o and filter tap t
 * in one spatial dim is  in = o * stride - pad + t * dilation.  In
 * CONVOLUTION mode tap t multiplies the filter element extent - 1 - t. */
#ifndef UDNN_REF_CONV_H
#define UDNN_REF_CONV_H

#include "backends/ref/act.h"
#include "backends/ref/ref.h"

/* The filter element tap[] multiplies, flipped in CONVOLUTION mode. */
UDNN_REF_FN int64_t ref_conv_filter_off(const udnn_conv_problem *p, int64_t k, int64_t c,
                                        const int64_t tap[3])
{
    int64_t f[3];
    for (int j = 0; j < 3; j++)
        f[j] = p->mode == UDNN_CONVOLUTION ? p->w.dims[2 + j] - 1 - tap[j] : tap[j];
    return ref_off5(&p->w, k, c, f[0], f[1], f[2]);
}

/* The input position that output position o reads through tap; 0 when it
 * falls in the padding. */
UDNN_REF_FN int ref_conv_input_at(const udnn_conv_problem *p, const int64_t o[3],
                                  const int64_t tap[3], int64_t in[3])
{
    for (int j = 0; j < 3; j++) {
        in[j] = o[j] * p->stride[j] - p->pad[j] + tap[j] * p->dilation[j];
        if (in[j] < 0 || in[j] >= p->x.dims[2 + j]) return 0;
    }
    return 1;
}

/* The output position that reads input position in through tap; 0 when
 * there is none (between strides or past the edges). */
UDNN_REF_FN int ref_conv_output_at(const udnn_conv_problem *p, const int64_t in[3],
                                   const int64_t tap[3], int64_t o[3])
{
    for (int j = 0; j < 3; j++) {
        int64_t num = in[j] + p->pad[j] - tap[j] * p->dilation[j];
        if (num < 0 || num % p->stride[j] != 0) return 0;
        o[j] = num / p->stride[j];
        if (o[j] >= p->y.dims[2 + j]) return 0;
    }
    return 1;
}

/* Steps tap[] through the filter's spatial extent; 0 after the last. */
UDNN_REF_FN int ref_conv_next_tap(const udnn_conv_problem *p, int64_t tap[3])
{
    for (int j = 2; j >= 0; j--) {
        if (++tap[j] < p->w.dims[2 + j]) return 1;
        tap[j] = 0;
    }
    return 0;
}

UDNN_REF_FN int64_t ref_conv_kpg(const udnn_conv_problem *p)
{
    return p->w.dims[0] / p->groups;
}

/* conv(x, w) at y's element (n, k, o). The channel loop is innermost so
 * that the tap's geometry is worked out once for all channels. */
UDNN_REF_FN double ref_conv_fwd_sum(const udnn_conv_problem *p, int64_t n, int64_t k,
                                    const int64_t o[3])
{
    const int64_t cpg = p->w.dims[1], g = k / ref_conv_kpg(p);
    double acc = 0.0;
    int64_t tap[3] = {0, 0, 0}, in[3];
    do {
        if (!ref_conv_input_at(p, o, tap, in)) continue;
        const int64_t x0 = ref_off5(&p->x, n, g * cpg, in[0], in[1], in[2]);
        const int64_t w0 = ref_conv_filter_off(p, k, 0, tap);
        acc = ref_dot(acc, p->x_ptr, p->x.dtype, x0, p->x.strides[1], p->w_ptr, p->w.dtype, w0,
                      p->w.strides[1], cpg);
    } while (ref_conv_next_tap(p, tap));
    return acc;
}

/* The gradient reaching x's element (n, ci, in) from dy through w; the
 * output-channel loop is innermost, as in forward_sum. */
UDNN_REF_FN double ref_conv_bwd_data_sum(const udnn_conv_problem *p, int64_t n, int64_t ci,
                                         const int64_t in[3])
{
    const int64_t cpg = p->w.dims[1], kpg = ref_conv_kpg(p);
    const int64_t g = ci / cpg, c = ci % cpg;
    double acc = 0.0;
    int64_t tap[3] = {0, 0, 0}, o[3];
    do {
        if (!ref_conv_output_at(p, in, tap, o)) continue;
        const int64_t y0 = ref_off5(&p->y, n, g * kpg, o[0], o[1], o[2]);
        const int64_t w0 = ref_conv_filter_off(p, g * kpg, c, tap);
        acc = ref_dot(acc, p->y_ptr, p->y.dtype, y0, p->y.strides[1], p->w_ptr, p->w.dtype, w0,
                      p->w.strides[0], kpg);
    } while (ref_conv_next_tap(p, tap));
    return acc;
}

/* The output positions [lo, hi) of spatial dim j that read an input
 * position (not padding) through tap t: 0 <= o * stride - pad + t * dilation
 * < extent. */
UDNN_REF_FN void ref_conv_outputs_reading(const udnn_conv_problem *p, int j, int64_t t, int64_t *lo,
                                          int64_t *hi)
{
    const int64_t s = p->stride[j], shift = t * p->dilation[j] - p->pad[j];
    const int64_t first = shift >= 0 ? 0 : (-shift + s - 1) / s;
    const int64_t last = p->x.dims[2 + j] - 1 - shift; /* o * s <= last */
    *lo = first;
    *hi = last < 0 ? 0 : last / s + 1;
    if (*hi > p->y.dims[2 + j]) *hi = p->y.dims[2 + j];
    if (*hi < *lo) *hi = *lo;
}

/* The gradient reaching w's element (k, c, f): every output of channel k
 * times the input its tap read. */
UDNN_REF_FN double ref_conv_bwd_filter_sum(const udnn_conv_problem *p, int64_t k, int64_t c,
                                           const int64_t f[3])
{
    const int64_t cpg = p->w.dims[1], g = k / ref_conv_kpg(p);
    int64_t tap[3], lo[3], hi[3];
    for (int j = 0; j < 3; j++) { /* the flip is its own inverse */
        tap[j] = p->mode == UDNN_CONVOLUTION ? p->w.dims[2 + j] - 1 - f[j] : f[j];
        ref_conv_outputs_reading(p, j, tap[j], &lo[j], &hi[j]);
    }
    double acc = 0.0;
    for (int64_t n = 0; n < p->y.dims[0]; n++)
        for (int64_t od = lo[0]; od < hi[0]; od++)
            for (int64_t oh = lo[1]; oh < hi[1]; oh++) {
                /* the row of outputs (od, oh, lo[2]..) and the inputs they read */
                const int64_t o[3] = {od, oh, lo[2]};
                int64_t in[3];
                ref_conv_input_at(p, o, tap, in); /* inside x: o lies in [lo, hi) */
                const int64_t y0 = ref_off5(&p->y, n, k, od, oh, lo[2]);
                const int64_t x0 = ref_off5(&p->x, n, g * cpg + c, in[0], in[1], in[2]);
                const int64_t x_step = p->stride[2] * p->x.strides[4];
                acc = ref_dot(acc, p->y_ptr, p->y.dtype, y0, p->y.strides[4], p->x_ptr, p->x.dtype,
                              x0, x_step, hi[2] - lo[2]);
            }
    return acc;
}

/* Element i (t's logical order) of out = alpha * sum + beta * out, t the
 * output tensor and sum the direction's gather for t's (n, c, spatial). */
typedef double (*ref_conv_sum)(const udnn_conv_problem *p, int64_t n, int64_t c,
                               const int64_t at[3]);
UDNN_REF_FN void ref_conv_blend_at(const udnn_conv_problem *p, const udnn_tensor *t,
                                   ref_conv_sum sum, int64_t i)
{
    int64_t idx[5];
    ref_index5(t, i, idx);
    double v = sum(p, idx[0], idx[1], idx + 2);
    ref_blend(p->out_ptr, t->dtype, ref_off5(t, idx[0], idx[1], idx[2], idx[3], idx[4]), v,
              p->alpha, p->beta);
}

/* Element i (y's logical order) of y = alpha * conv(x, w) + beta * y. */
UDNN_REF_FN void ref_conv_fwd_at(const udnn_conv_problem *p, int64_t i)
{
    ref_conv_blend_at(p, &p->y, ref_conv_fwd_sum, i);
}

/* Element i (x's logical order) of dx = alpha * conv^T(dy, w) + beta * dx. */
UDNN_REF_FN void ref_conv_bwd_data_at(const udnn_conv_problem *p, int64_t i)
{
    ref_conv_blend_at(p, &p->x, ref_conv_bwd_data_sum, i);
}

/* Element i (w's logical order) of dw = alpha * sum(x dy) + beta * dw. */
UDNN_REF_FN void ref_conv_bwd_filter_at(const udnn_conv_problem *p, int64_t i)
{
    ref_conv_blend_at(p, &p->w, ref_conv_bwd_filter_sum, i);
}

/* Channel k of db = alpha * sum(dy) + beta * db. */
UDNN_REF_FN void ref_conv_bwd_bias_at(const udnn_conv_bias_problem *p, int64_t k)
{
    const udnn_tensor *dy = &p->dy;
    double acc = 0.0;
    for (int64_t n = 0; n < dy->dims[0]; n++)
        for (int64_t d = 0; d < dy->dims[2]; d++)
            for (int64_t h = 0; h < dy->dims[3]; h++)
                for (int64_t w = 0; w < dy->dims[4]; w++)
                    acc += ref_load(p->dy_ptr, dy->dtype, ref_off5(dy, n, k, d, h, w));
    ref_blend(p->db_ptr, p->db.dtype, ref_off5(&p->db, 0, k, 0, 0, 0), acc, p->alpha, p->beta);
}

/* Element i of y = act(alpha * conv(x, w) + alpha2 * z + bias). z may be y
 * itself (with y's strides): each element of z is read just before the
 * same element of y is written. z is not read when alpha2 is 0. */
UDNN_REF_FN void ref_conv_bias_act_at(const udnn_conv_problem *p, int64_t i)
{
    int64_t idx[5];
    ref_index5(&p->y, i, idx);
    double v = p->alpha * ref_conv_fwd_sum(p, idx[0], idx[1], idx + 2);
    if (p->alpha2 != 0.0)
        v += p->alpha2 * ref_load(p->z_ptr, p->z.dtype,
                                  ref_off5(&p->z, idx[0], idx[1], idx[2], idx[3], idx[4]));
    v += ref_load(p->bias_ptr, p->bias.dtype, ref_off5(&p->bias, 0, idx[1], 0, 0, 0));
    ref_store(p->out_ptr, p->y.dtype, ref_off5(&p->y, idx[0], idx[1], idx[2], idx[3], idx[4]),
              udnn_ref_act(&p->act, v));
}

#endif /* UDNN_REF_CONV_H */
