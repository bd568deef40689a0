/* norm.h - the layer, RMS and group norms' pieces that their kernels
 * share (norm.cu: the sets and the dispatch; norm_rows.cu: sets that are
 * one contiguous row; norm_grad.cu: the parameter gradients): types, index
 * spaces, team sums, and the functions each file gives the others. */
#ifndef UDNN_CUDA_NORM_H
#define UDNN_CUDA_NORM_H

#include "cuda/kernels.h"

/* ---- types and index spaces ----------------------------------------------------------- */

/* The arithmetic type of the backward dx pass: the compute type, except
 * double for FLOAT. Over small sets dx is a small remainder of terms as
 * large as dy * scale (two elements: a (1 - xhat^2) fraction), so float
 * sums and normalized inputs would lose precision by that ratio. */
template <class T> struct nm_wide {
    typedef typename io<T>::C W;
};
template <> struct nm_wide<float> {
    typedef double W;
};

/* The tensors a space steps through: x, dy (x's strides in the forward
 * pass), the output (y or dx), the parameters (scale, bias and their
 * gradients share one layout) and the statistics. */
enum { N_X, N_DY, N_OUT, N_P, N_ST, NM_SLOTS };

typedef udnn_gpu_space<NM_SLOTS> nm_space;

/* The spaces of a problem: sets (their first elements) and the elements
 * of a set (inner); for the parameter gradients, parameters (features)
 * and, per parameter, its elements (members). */
typedef struct {
    nm_space sets, inner, feat, memb;
    int rms;
} nm_geom;

static inline int nm_small(int64_t n)
{
    return n < ((int64_t)1 << 31);
}

/* ---- team reductions --------------------------------------------------------------------- */

/* Teams of TX threads (blockDim.x) per set, TY (blockDim.y) teams per
 * block. */
#define NM_MAX_TEAM 512
#define NM_RED_SLOTS NM_MAX_TEAM /* shared values per quantity: the largest block */

/* Sums v over the team, in every thread of it, in a fixed order. Every
 * thread of the block calls it together. Teams up to 32 wide stay inside
 * one warp (any warp size of 32 or more) and use shuffles. */
template <class C> __device__ __forceinline__ C nm_team_sum(C v, C *red)
{
    const int tx = threadIdx.x, tw = blockDim.x;
    if (tw <= 32) {
        for (int m = tw / 2; m > 0; m /= 2) v += udnnGpuShflXor(v, m);
        return v;
    }
    const int base = threadIdx.y * tw;
    __syncthreads(); /* red may still be read by a previous call */
    red[base + tx] = v;
    __syncthreads();
    for (int s = tw / 2; s > 0; s /= 2) {
        if (tx < s) red[base + tx] += red[base + tx + s];
        __syncthreads();
    }
    return red[base];
}

/* One element's terms of a set's shifted sums: v - shift and its square. */
__device__ __forceinline__ void nm_fwd_add(double v, double shift, double &s1, double &s2)
{
    const double d = v - shift;
    s1 += d;
    s2 += d * d;
}

/* y of one element x of a set whose mean is hi + lo (the forward's
 * statistics), its scale sc: the bias is added after. */
template <class C> __device__ __forceinline__ C nm_fwd_y(C x, C hi, C lo, C inv, C sc)
{
    return ((x - hi) - lo) * inv * sc;
}

/* ---- forward: the arguments and statistics of every forward kernel --------------------- */

template <class T> struct nm_fwd_args {
    typedef typename udnn_gpu_param<T>::P P;
    nm_space sets, inner; /* inner in items (see nm_elem) */
    int64_t nsets, size, pstep;
    int rms;
    double eps;
    const T *x;
    T *y;
    const P *scale, *bias; /* bias nullable */
    P *save_mean, *save_inv; /* nullable */
    int64_t chunks, chunk;   /* split sets: ranges a set, items a range */
    double *partial;         /* split sets: [sets][chunks][2], then each set's shift */
};

/* Statistics of one set, the same in every thread of its team: hi + lo is
 * the mean, inv the inverse standard deviation. */
template <class C> struct nm_stats {
    C hi, lo, inv;
};

/* The set's statistics from its sums; the calling thread saves them where
 * `save`. */
template <class T>
__device__ __forceinline__ nm_stats<typename io<T>::C>
nm_fwd_finish(const nm_fwd_args<T> &a, double s1, double s2, double shift, int64_t st, bool save)
{
    typedef typename io<T>::C C;
    typedef typename udnn_gpu_param<T>::P P;
    const double n = (double)a.size, dm = a.rms ? 0.0 : s1 / n;
    const double mean = a.rms ? 0.0 : shift + dm;
    double var = s2 / n - dm * dm;
    if (var < 0.0) var = 0.0; /* rounding only; NaN stays NaN */
    const double inv = 1.0 / sqrt(var + a.eps);
    if (save) {
        if (a.save_mean != NULL) a.save_mean[st] = (P)mean;
        if (a.save_inv != NULL) a.save_inv[st] = (P)inv;
    }
    nm_stats<C> r;
    r.hi = (C)mean;
    r.lo = (C)(mean - (double)r.hi);
    r.inv = (C)inv;
    return r;
}

/* A set's shift: its first element (0 for RMS); a mean far from 0 then
 * cancels nothing. */
template <class T>
__device__ __forceinline__ double nm_fwd_shift(const nm_fwd_args<T> &a, const T *x)
{
    return a.rms ? 0.0 : (double)io<T>::ld(x[0]);
}

/* dx of one element from its g = dy * scale and xhat, its set's inv,
 * mean(g) (0 for RMS) and mean(g * xhat). */
template <class W> __device__ __forceinline__ W nm_bwd_dx(W g, W xhat, W inv, W mean_g, W mean_gx)
{
    return inv * ((g - mean_g) - xhat * mean_gx);
}

/* Per parameter f and member slice: sum dy * xhat and sum dy. */
template <class T> struct nm_grad_args {
    typedef typename udnn_gpu_param<T>::P P;
    nm_space feat, memb;
    int64_t F, M, chunk;
    const T *x, *dy;
    const P *mean, *inv; /* mean NULL for RMS */
    double *partial;     /* [split][2][F]; NULL: one split, straight to the output */
    P *dscale, *dbias;   /* dbias nullable */
};

/* One term of dscale, dy * xhat, in double whatever the data's type: a
 * few terms that cancel leave their sum's rounding far above a float
 * term's (see nm_grad). */
__device__ __forceinline__ double nm_dscale_term(double dy, double x, double mean, double inv)
{
    return dy * ((x - mean) * inv);
}

/* The widest row team or block, and its warps on any warp size of 16 or
 * more (norm_rows.cu; the few long sets' reductions size theirs by it). */
#define NM_ROW_THREADS 512
#define NM_ROW_WARPS (NM_ROW_THREADS / 16)

/* the kernels' dynamic shared memory */
extern __shared__ double nm_dyn_smem[];

/* After nm_row_sum's barrier: lane q adds quantity q over the team's
 * warps (r: [warp][NQ], the team's from `first`), in warp order, and
 * every lane takes quantity q from lane q (a butterfly with mask l ^ q). */
template <class S, int NQ>
__device__ __forceinline__ void nm_row_sum_warps(const S *r, int first, int per, int lane,
                                                 S (&v)[NQ])
{
    S t = S(0);
    if (lane < NQ) {
        t = r[first * NQ + lane];
        for (int i = 1; i < per; i++) t += r[(first + i) * NQ + lane];
    }
    for (int q = 0; q < NQ; q++) v[q] = udnnGpuShflXor(t, lane ^ q);
}

/* Sums NQ values over the team, in every thread of it (the same bits: a
 * butterfly adds each pair in both lanes), in a fixed order: shuffles
 * inside a warp, then the team's warps through red ([2][NM_ROW_WARPS][NQ],
 * nm_row_sum_warps). Calls alternate `parity` so that one barrier per call
 * keeps a call's writes from a previous call's reads. Every thread of the
 * block calls it together. */
template <class S, int NQ>
__device__ __forceinline__ void nm_row_sum(S (&v)[NQ], S *red, int parity)
{
    const int tx = threadIdx.x, tw = blockDim.x, ws = udnnGpuWarpSize;
#pragma unroll
    for (int m = ws / 2; m > 0; m /= 2)
        if (m < tw)
            for (int q = 0; q < NQ; q++) v[q] += udnnGpuShflXor(v[q], m);
    if (tw <= ws) return;
    const int per = tw / ws, first = threadIdx.y * per, lane = tx % ws;
    S *r = red + parity * NM_ROW_WARPS * NQ;
    if (lane == 0)
        for (int q = 0; q < NQ; q++) r[(first + tx / ws) * NQ + q] = v[q];
    __syncthreads();
    nm_row_sum_warps<S, NQ>(r, first, per, lane, v);
}

/* NQ values (a power of two up to the warp) summed over a warp by a
 * transposing butterfly: at each of the first log2(NQ) levels a lane keeps
 * half of its values, the half its bit at that level picks, and adds its
 * partner's other half, so a warp shuffles NQ - 1 times before the plain
 * levels, where a butterfly of each value shuffles NQ times a level.
 * Returns, in lane l, quantity l / (ws / NQ) over the warp, in a fixed
 * order with the same bits in every lane holding it. */
template <class S, int NQ> __device__ __forceinline__ S nm_warp_sum_t(const S (&v)[NQ], int lane)
{
    constexpr int ws = udnnGpuWarpSize, per_q = ws / NQ;
    S w[NQ];
#pragma unroll
    for (int q = 0; q < NQ; q++) w[q] = v[q];
#pragma unroll
    for (int n = NQ, m = ws / 2; n > 1; n /= 2, m /= 2) {
        const bool hi = (lane & m) != 0;
#pragma unroll
        for (int j = 0; j < n / 2; j++) {
            const S send = hi ? w[j] : w[j + n / 2], keep = hi ? w[j + n / 2] : w[j];
            w[j] = keep + udnnGpuShflXor(send, m);
        }
    }
    S t = w[0];
#pragma unroll
    for (int m = per_q / 2; m > 0; m /= 2) t += udnnGpuShflXor(t, m);
    return t;
}

/* nm_row_sum by nm_warp_sum_t, for teams of a warp or more (blockDim.x >=
 * udnnGpuWarpSize): also a fixed order, with the same bits in every
 * thread, though not nm_row_sum's. The 16-bit layer norm rows backward's four
 * sums of two rows (H200, bursts, against nm_row_sum, GB/s): f16 65536 x
 * 1024 2760 / 2758 against 2686 / 2698, 262144 x 256 3172 / 3190 against
 * 3149 / 3156, RMS 131072 x 512 2884 / 2884 against 2818 / 2809. */
template <class S, int NQ>
__device__ __forceinline__ void nm_row_sum_t(S (&v)[NQ], S *red, int parity)
{
    constexpr int ws = udnnGpuWarpSize, per_q = ws / NQ;
    const int tx = threadIdx.x, tw = blockDim.x, lane = tx % ws;
    const S t = nm_warp_sum_t<S, NQ>(v, lane);
    if (tw > ws) {
        const int per = tw / ws, first = threadIdx.y * per;
        S *r = red + parity * NM_ROW_WARPS * NQ;
        if (lane % per_q == 0) r[(first + tx / ws) * NQ + lane / per_q] = t;
        __syncthreads();
        nm_row_sum_warps<S, NQ>(r, first, per, lane, v);
    } else {
#pragma unroll
        for (int q = 0; q < NQ; q++) v[q] = udnnGpuShflXor(t, lane ^ (q * per_q));
    }
}

/* norm_grad.cu: dscale and dbias of p (nm_param_grads), and the finish
 * that adds a's split partials into them (nm_grad_finish, `splits` of
 * them; norm_rows.cu's backward leaves a partial a block). */
template <class T>
udnnStatus_t nm_param_grads(const udnn_gpu_context *c, const udnn_norm_problem *p,
                            const nm_geom *g);
template <class T>
udnnStatus_t nm_grad_finish_launch(const udnn_gpu_context *c, const nm_grad_args<T> &a,
                                   int64_t splits);

/* norm_cluster.cu: a's forward in thread-block clusters, where its sets are
 * runs of contiguous elements under one parameter each and a set fits a
 * cluster's shared memory; 0 where not (nothing launched), else 1 with *st
 * the launch's status. */
template <class T>
int nm_forward_cluster(const udnn_gpu_context *c, const nm_geom *g, const nm_fwd_args<T> &a,
                       udnnStatus_t *st);
/* norm_cluster.cu: group norm's backward in thread-block clusters, where
 * the forward's criteria hold for x, dy and dx; 0 where not (nothing
 * launched), else 1 with *st the launches' status. */
template <class T>
int nm_backward_cluster(const udnn_gpu_context *c, const udnn_norm_problem *p, const nm_geom *g,
                        udnnStatus_t *st);

/* norm_rows.cu: p in the row kernels where its sets are rows; 0 where not
 * (nothing launched), else 1 with *st the launches' status. */
template <class T>
int nm_forward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p, const nm_geom *g,
                    udnnStatus_t *st);
template <class T>
int nm_backward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p, const nm_geom *g,
                     udnnStatus_t *st);

#endif
