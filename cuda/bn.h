/* bn.h - what the batch normalization sources share (bn.cu's three
 * passes and fallback, bn_flow.cu's one-launch training and backward):
 * the statistics and arithmetic types, each feature's finishing step and
 * its coefficients, and the host's view of the side tensors. */
#ifndef UDNN_CUDA_BN_H
#define UDNN_CUDA_BN_H

#include "cuda/kernels.h"

/* ---- types ------------------------------------------------------------------------- */

/* The type of pass 1's sums: double for every type (a batch mean near 0
 * is a small remainder of large sums, and must still meet the tolerance of
 * the FLOAT statistics, HALF and BFLOAT16 data's too). */
template <class T> struct bn_sum {
    typedef double S;
};

/* The arithmetic type of pass 3: the compute type, except that FLOAT's
 * backward works in double. Backward over few members (PER_ACTIVATION with
 * a small batch) is ill-conditioned: dx is a small remainder of terms as
 * large as dy, so float sums or coefficients would lose precision by that
 * ratio. */
template <class T, bool BWD> struct bn_acc {
    typedef typename io<T>::C A;
};
template <> struct bn_acc<float, true> {
    typedef double A;
};

/* ---- per-feature finishing ------------------------------------------------------------ */

/* Everything a finishing step reads and writes; NULL where unused. */
template <class T> struct bn_side {
    typedef typename udnn_gpu_param<T>::P P;
    const P *scale, *bias;
    const P *est_mean, *est_var;       /* inference */
    const P *saved_mean, *saved_inv;   /* backward, nullable */
    P *running_mean, *running_var;     /* training, nullable */
    P *save_mean, *save_inv;           /* training, nullable */
    P *dscale, *dbias;                 /* backward */
    double eps, factor, alpha_param, beta_param;
};

/* Per feature: the output is ((x - hi) - lo) * a + b forward, and
 * a * dy + b * ((x - hi) - lo) + d backward, before the alpha/beta blend.
 * hi + lo is the mean to twice the compute type's precision. */
template <class C> struct bn_coef {
    C hi, lo, a, b, d;
};
#define BN_NCOEF 5

template <class C> __device__ __forceinline__ void bn_split_mean(double mean, bn_coef<C> &k)
{
    k.hi = (C)mean;
    k.lo = (C)(mean - (double)k.hi);
}

/* out = alpha * v + beta * out, out read only when beta != 0 (ref_blend). */
template <class P> __device__ __forceinline__ void bn_blend_param(P *out, double v, double alpha,
                                                                   double beta)
{
    double r = alpha * v;
    if (beta != 0.0) r += beta * (double)*out;
    *out = (P)r;
}

/* Training, from the sums of d = x - shift: q[0] = sum d, q[1] = sum d^2. */
template <class T>
__device__ bn_coef<typename io<T>::C> bn_finish_train(const bn_side<T> &s, int64_t po,
                                                      double shift, const double *q, int64_t m)
{
    typedef typename io<T>::C C;
    typedef typename udnn_gpu_param<T>::P P;
    const double md = (double)m, dm = q[0] / md, mean = shift + dm;
    double var = q[1] / md - dm * dm;
    if (var < 0.0) var = 0.0; /* rounding only; NaN stays NaN */
    const double inv_std = 1.0 / sqrt(var + s.eps);
    if (s.running_mean != NULL) {
        /* the running variance estimates the population's: unbiased */
        bn_blend_param(s.running_mean + po, mean, s.factor, 1.0 - s.factor);
        bn_blend_param(s.running_var + po, var * md / (md - 1.0), s.factor, 1.0 - s.factor);
    }
    if (s.save_mean != NULL) {
        s.save_mean[po] = (P)mean;
        s.save_inv[po] = (P)inv_std;
    }
    bn_coef<C> k;
    bn_split_mean(mean, k);
    k.a = (C)((double)s.scale[po] * inv_std);
    k.b = (C)s.bias[po];
    k.d = C(0);
    return k;
}

template <class T>
__device__ bn_coef<typename io<T>::C> bn_finish_infer(const bn_side<T> &s, int64_t po)
{
    typedef typename io<T>::C C;
    const double inv_std = 1.0 / sqrt((double)s.est_var[po] + s.eps);
    bn_coef<C> k;
    bn_split_mean((double)s.est_mean[po], k);
    k.a = (C)((double)s.scale[po] * inv_std);
    k.b = (C)s.bias[po];
    k.d = C(0);
    return k;
}

/* Backward, from q[0] = sum dy and q[1] = sum dy * (x - shift), and without
 * saved statistics q[2] = sum (x - shift), q[3] = sum (x - shift)^2 (with
 * them, shift is the saved mean). dbias = sum dy, dscale = sum dy * xhat,
 * dx = scale * inv_std / m * (m * dy - dbias - xhat * dscale). */
template <class T>
__device__ bn_coef<typename bn_acc<T, true>::A> bn_finish_bwd(const bn_side<T> &s, int64_t po,
                                                              double shift, const double *q,
                                                              int64_t m)
{
    typedef typename bn_acc<T, true>::A C;
    const double md = (double)m;
    double mean, inv_std, dm = 0.0;
    if (s.saved_mean != NULL) {
        mean = (double)s.saved_mean[po];
        inv_std = (double)s.saved_inv[po];
    } else {
        dm = q[2] / md;
        mean = shift + dm;
        double var = q[3] / md - dm * dm;
        if (var < 0.0) var = 0.0;
        inv_std = 1.0 / sqrt(var + s.eps);
    }
    const double dbias = q[0], dscale = (q[1] - dm * q[0]) * inv_std;
    if (s.dscale != NULL) { /* NULL: a copy that only wants the coefficients */
        bn_blend_param(s.dscale + po, dscale, s.alpha_param, s.beta_param);
        bn_blend_param(s.dbias + po, dbias, s.alpha_param, s.beta_param);
    }
    const double a = (double)s.scale[po] * inv_std;
    bn_coef<C> k;
    bn_split_mean(mean, k);
    k.a = (C)a;
    k.b = (C)(-a * inv_std * dscale / md);
    k.d = (C)(-a * dbias / md);
    return k;
}

/* The element value before blending, for x (and dy). */
template <class C, bool BWD>
__device__ __forceinline__ C bn_value(const bn_coef<C> &k, C x, C dy)
{
    const C d = (x - k.hi) - k.lo;
    if (BWD) return k.a * dy + k.b * d + k.d;
    return d * k.a + k.b;
}

/* Adds one member to a channel's K sums (acc[0..K)): forward d = x -
 * shift (sum d, sum d^2); backward dy too (sum dy, sum dy * d, and where K
 * is 4, sum d and sum d^2). */
template <int K, bool BWD, class S>
__device__ __forceinline__ void bn_accumulate(S *acc, S d, S dy)
{
    if constexpr (BWD) {
        acc[0] += dy;
        acc[1] += dy * d;
        if constexpr (K == 4) {
            acc[2] += d;
            acc[3] += d * d;
        }
    } else {
        acc[0] += d;
        acc[1] += d * d;
    }
}

/* Channel f's shift for the one-launch flows' sums: its saved mean
 * (backward, po its parameters' offset), else its first member *x0;
 * exact in the statistics type. */
template <bool BWD, class T>
__device__ __forceinline__ typename udnn_gpu_param<T>::P bn_shift(const bn_side<T> &s, int64_t po,
                                                                  const T *x0)
{
    typedef typename udnn_gpu_param<T>::P P;
    if (BWD && s.saved_mean != NULL) return s.saved_mean[po];
    return (P)io<T>::ld(*x0);
}

/* Element offset of load pos of channel f where a channel is runs of
 * `run` elements, `rstep` apart (NCHW-like), W elements to a load and
 * per_run loads to a run. */
template <int W>
__device__ __forceinline__ int64_t bn_run_off(int64_t run, int64_t rstep,
                                              const udnn_gpu_div32 &per_run, int64_t f,
                                              int64_t pos)
{
    return f * run + udnn_gpu_run_locate<W>(per_run, rstep, pos).off;
}

/* ---- one-launch flows' accesses (bn_flow.cu, bn_rows.cu) ---------------------------------- */

/* L2 hints on the flows' 16-byte accesses (1) or plain accesses (0). */
#ifndef BN_FLOW_HINTS
#define BN_FLOW_HINTS 1
#endif

/* A thread's sums over the members it loads: in double, or in float
 * where FLOAT (16-bit data in bn_keep and bn_rows), added into double
 * after. Their rounding, about 1e-7 of a thread's sum, is a
 * ten-thousandth of the 16-bit inputs' own rounding or less, and goes
 * either way over the thousands of threads' sums. The double conversions
 * and adds were a seventh of bn_keep's f16 NHWC training time (H100, 64 x
 * 256 x 56 x 56: 1139 to 1340 GB/s; backward 899 to 991). */
template <bool FLOAT> struct bn_thread_sum_of {
    typedef double S;
};
template <> struct bn_thread_sum_of<true> {
    typedef float S;
};

/* LAST: the data's last read (evict first, with BN_FLOW_HINTS). */
template <class T, int W, bool LAST>
__device__ __forceinline__ udnn_gpu_pack<T, W> bn_get(const T *p)
{
    return udnn_gpu_load_pack<BN_FLOW_HINTS && LAST, T, W>(p);
}

/* A store of output not read again soon (evict first, with BN_FLOW_HINTS). */
template <class T, int W>
__device__ __forceinline__ void bn_put(T *p, const udnn_gpu_pack<T, W> &v)
{
    udnn_gpu_store_pack<BN_FLOW_HINTS, T, W>(p, v);
}

/* One pack's output at out: each element's bn_value through its
 * channel's coefficients (kc[e], or kc[0] for every element where NK is
 * 1), blended where BLEND (out read first). */
template <class T, bool BWD, bool BLEND, int W, int NK, class C>
__device__ __forceinline__ void bn_store_pack(T *out, const bn_coef<C> (&kc)[NK],
                                              const udnn_gpu_pack<T, W> &xv,
                                              const udnn_gpu_pack<T, W> &gv, C alpha, C beta)
{
    typedef typename io<T>::C S;
    udnn_gpu_pack<T, W> o;
    if constexpr (BLEND) o = bn_get<T, W, false>(out); /* rare: read it late */
#pragma unroll
    for (int e = 0; e < W; e++) {
        const bn_coef<C> &k = kc[NK == 1 ? 0 : e];
        const C v = bn_value<C, BWD>(k, (C)udnn_gpu_pack_ld(xv, e),
                                     BWD ? (C)udnn_gpu_pack_ld(gv, e) : C(0));
        const C old = BLEND ? (C)udnn_gpu_pack_ld(o, e) : C(0);
        o.v[e] = io<T>::st((S)udnn_gpu_blend_if<BLEND>(v, alpha, beta, old));
    }
    bn_put<T, W>(out, o);
}

/* A feature's coefficients into coef (5 arrays of F), as pass 3 and
 * bn_flow's apply read them. */
template <class C>
__device__ __forceinline__ void bn_store_coef(C *coef, int64_t F, int64_t f, const bn_coef<C> &k)
{
    coef[f] = k.hi;
    coef[F + f] = k.lo;
    coef[2 * F + f] = k.a;
    coef[3 * F + f] = k.b;
    coef[4 * F + f] = k.d;
}

/* A feature's coefficients from coef (bn_store_coef's layout). */
template <class C>
__device__ __forceinline__ bn_coef<C> bn_load_coef(const C *coef, int64_t F, int64_t f)
{
    bn_coef<C> k;
    k.hi = coef[f];
    k.lo = coef[F + f];
    k.a = coef[2 * F + f];
    k.b = coef[3 * F + f];
    k.d = coef[4 * F + f];
    return k;
}

/* ---- host side ---------------------------------------------------------------------------- */

/* The one-launch flows' scratch, each part from a 256-byte boundary:
 * n_counts counters, cleared in the stream for the launch that follows;
 * the coefficients (BN_NCOEF arrays of F); n_partial doubles.
 * NOT_SUPPORTED, clearing nothing, where they do not fit. */
template <class C>
static udnnStatus_t bn_scratch(const udnn_gpu_context *c, int64_t n_counts, int64_t F,
                               int64_t n_partial, uint32_t **counts, C **coef, double **partial)
{
    const size_t counts_bytes = udnn_gpu_align256((size_t)n_counts * sizeof(uint32_t));
    const size_t coef_bytes = udnn_gpu_align256((size_t)BN_NCOEF * F * sizeof(C));
    if (counts_bytes + coef_bytes + (size_t)n_partial * sizeof(double) > c->scratch_bytes)
        return UDNN_STATUS_NOT_SUPPORTED;
    char *scratch = (char *)c->scratch;
    *counts = (uint32_t *)scratch;
    *coef = (C *)(scratch + counts_bytes);
    *partial = (double *)(scratch + counts_bytes + coef_bytes);
    const udnnGpuError_t e = udnnGpuMemsetAsync(scratch, 0, counts_bytes, c->stream);
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "clearing batch norm's counters");
    return UDNN_STATUS_SUCCESS;
}

template <class T> static bn_side<T> bn_side_of(const udnn_bn_problem *p)
{
    typedef typename udnn_gpu_param<T>::P P;
    bn_side<T> s;
    memset(&s, 0, sizeof s);
    s.scale = (const P *)p->scale_ptr;
    s.bias = (const P *)p->bias_ptr;
    s.est_mean = (const P *)p->est_mean_ptr;
    s.est_var = (const P *)p->est_var_ptr;
    s.saved_mean = (const P *)p->saved_mean_ptr;
    s.saved_inv = (const P *)p->saved_inv_std_ptr;
    s.running_mean = (P *)p->running_mean_ptr;
    s.running_var = (P *)p->running_var_ptr;
    s.save_mean = (P *)p->save_mean_ptr;
    s.save_inv = (P *)p->save_inv_std_ptr;
    s.dscale = (P *)p->dscale_ptr;
    s.dbias = (P *)p->dbias_ptr;
    s.eps = p->epsilon;
    s.factor = p->exp_avg_factor;
    s.alpha_param = p->alpha_param;
    s.beta_param = p->beta_param;
    return s;
}

/* The fields the one-launch flows' arguments (bn_flow_args, bn_rows_args)
 * share, from the problem: the tensors, F channels of M members each, the
 * parameters' channel stride, the side arrays and the blend. */
template <class T, bool BWD, class A> static void bn_args_from(A &a, const udnn_bn_problem *p)
{
    typedef decltype(a.alpha) C;
    a.x = (const T *)p->x_ptr;
    a.dy = BWD ? (const T *)p->dy_ptr : NULL;
    a.out = (T *)p->out_ptr;
    a.F = p->x.dims[1];
    a.M = udnn_gpu_count(&p->x) / a.F;
    a.pstride = p->param.dims[1] > 1 ? p->param.strides[1] : 0;
    a.side = bn_side_of<T>(p);
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
}

/* Training or backward where channels are innermost: every tensor dense
 * in one layout with stride 1 over channels, 16-byte aligned, and F a
 * whole number of 16-byte loads (bn_rows.cu); NOT_SUPPORTED, launching
 * nothing, where a row needs more lanes than a block or the partials do
 * not fit in scratch. */
template <class T, int K, bool BWD>
udnnStatus_t bn_rows_run(const udnn_gpu_context *c, const udnn_bn_problem *p);

/* Training where one channel's x fits in the shared memory of a
 * thread-block cluster (bn_cluster.cu; FLOAT and the 16-bit types), for
 * bn_flow_run once it has found every tensor dense in one layout and
 * 16-byte aligned, with channels of runs of `run` elements (a whole number
 * of 16-byte loads), `run * F` apart; NOT_SUPPORTED, launching nothing,
 * elsewhere (no clusters, or channels too large). */
template <class T>
udnnStatus_t bn_cluster_run(const udnn_gpu_context *c, const udnn_bn_problem *p, int64_t run);

/* Training (K = 2, !BWD) or backward (K = 2 with saved statistics, else
 * 4) in one launch where the mode is spatial and every tensor is dense in
 * one layout (bn_flow.cu); NOT_SUPPORTED, launching nothing, elsewhere. */
template <class T, int K, bool BWD>
udnnStatus_t bn_flow_run(const udnn_gpu_context *c, const udnn_bn_problem *p);

#endif
