/* bn.cu - batch normalization: forward training, forward inference and
 * backward, in every mode (SPATIAL and SPATIAL_PERSISTENT compute the same
 * thing; PER_ACTIVATION), rank 4 and 5, FLOAT, DOUBLE, HALF and BFLOAT16
 * data in any strides, as cpu/ref/batchnorm.c computes them.
 *
 * Features and members, as in the reference: a feature is a channel
 * (spatial modes) or a channel at one position (PER_ACTIVATION); its
 * members are the elements of x it reduces over. Both are walked as index
 * spaces: the dims that make them up, ordered by x's stride (largest
 * first) and merged where every tensor steps evenly across a pair, so a
 * packed NCHW channel is (n, h*w) and a packed NHWC one a single run of
 * n*h*w rows C apart. A feature's number is its index in its space; every
 * pass numbers features alike.
 *
 * Training and backward in the spatial modes, where every tensor is dense
 * in one layout, are one launch: bn_keep, which holds a group of channels
 * in the registers of several blocks and reads x (and dy) once, where a
 * group fits; else bn_flow, the passes below as items of a persistent
 * grid, with the second read of x (and dy) from L2. Elsewhere they are
 * three launches:
 *  1. reduce: blocks of FT features x BY member lanes, each over one slice
 *     ("split") of the members, write per-split partial sums to scratch.
 *     FT is 32 where features are adjacent in memory (NHWC,
 *     PER_ACTIVATION), else 1 (NCHW: the block walks a channel's runs,
 *     16 bytes per load where they are contiguous and aligned). Splits
 *     fill the SMs when features are few.
 *  2. finalize: per feature, the splits' partials summed in a fixed order
 *     in double; the statistics, running averages, saved values and
 *     parameter gradients; and per-feature coefficients for pass 3.
 *  3. apply: y (or dx) element-wise from the coefficients; a vectorized
 *     walk of memory when every tensor shares one dense layout (NHWC-like:
 *     each thread keeps its features' coefficients in registers), else a
 *     strided one.
 * Inference is the apply pass alone where the tensors are dense and the
 * coefficients fit in shared memory (each block computes them), else a
 * coefficient launch and the apply pass. Where the
 * coefficients or partials do not fit in scratch (PER_ACTIVATION over huge
 * planes), one thread per feature does everything (bn_fused_*).
 *
 * Numerics: sums of x are shifted by a member of the feature (x - K), so a
 * mean far from 0 against the spread loses nothing to cancellation; they
 * accumulate in double for every type (a mean near 0 is a small remainder
 * of them, yet saved to float's tolerance), and the partials are combined
 * in double. The apply pass subtracts the mean as a pair (hi, lo) of the
 * compute type; FLOAT's backward applies in double (see bn_acc). Every sum has a fixed order:
 * the same bits on every run. y may be x, and dx may be dy or x: a
 * feature's statistics are complete before its output, whose pass reads
 * each element just before its own write. */
#include "cuda/kernels.h"

/* ---- types and index spaces --------------------------------------------------------- */

/* The statistics type: FLOAT for FLOAT, HALF and BFLOAT16 data. */
template <class T> struct bn_param {
    typedef float P;
};
template <> struct bn_param<double> {
    typedef double P;
};

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

/* The tensors an index space steps through: x, dy (x's strides again in
 * the forward passes), the output (y or dx) and the parameters (stride 0
 * over members). */
enum { S_X, S_DY, S_OUT, S_P, BN_SLOTS };

/* Dims walked in row-major order with each slot's element strides. */
typedef struct {
    int nd;
    int64_t size;
    int64_t dim[UDNN_DIM_MAX];
    int64_t st[BN_SLOTS][UDNN_DIM_MAX];
} bn_space;

/* The offsets in the first NT slots of element idx of s. The outermost dim
 * needs no division: idx is already below its size. */
template <class I, int NT>
__device__ __forceinline__ void bn_offsets(const bn_space &s, I idx, int64_t off[NT])
{
    for (int t = 0; t < NT; t++) off[t] = 0;
    for (int d = s.nd - 1; d > 0; d--) {
        const I n = (I)s.dim[d], q = idx / n, r = idx - q * n;
        for (int t = 0; t < NT; t++) off[t] += (int64_t)r * s.st[t][d];
        idx = q;
    }
    if (s.nd > 0)
        for (int t = 0; t < NT; t++) off[t] += (int64_t)idx * s.st[t][0];
}

/* The space of x's logical dims `which` (n of them): dims of size 1
 * dropped, the rest ordered by x's stride, largest first (so the last one
 * steps least in memory), neighbours merged where every slot allows. A
 * slot whose tensor has size 1 in a dim (the parameters over members) gets
 * stride 0 there. */
static bn_space bn_make_space(const udnn_tensor *const ts[BN_SLOTS], const int *which, int n)
{
    bn_space s;
    memset(&s, 0, sizeof s);
    const udnn_tensor *x = ts[S_X];
    int order[UDNN_DIM_MAX], k = 0;
    for (int i = 0; i < n; i++)
        if (x->dims[which[i]] > 1) order[k++] = which[i];
    for (int i = 1; i < k; i++) /* stable insertion sort, largest stride first */
        for (int j = i; j > 0 && x->strides[order[j - 1]] < x->strides[order[j]]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    s.size = 1;
    for (int i = 0; i < k; i++) {
        const int d = order[i];
        int64_t st[BN_SLOTS];
        for (int t = 0; t < BN_SLOTS; t++) st[t] = ts[t]->dims[d] == 1 ? 0 : ts[t]->strides[d];
        s.size *= x->dims[d];
        int merge = s.nd > 0;
        for (int t = 0; t < BN_SLOTS && merge; t++)
            merge = s.st[t][s.nd - 1] == st[t] * x->dims[d];
        if (merge) {
            s.dim[s.nd - 1] *= x->dims[d];
            for (int t = 0; t < BN_SLOTS; t++) s.st[t][s.nd - 1] = st[t];
            continue;
        }
        s.dim[s.nd] = x->dims[d];
        for (int t = 0; t < BN_SLOTS; t++) s.st[t][s.nd] = st[t];
        s.nd++;
    }
    return s;
}

/* The feature and member spaces of a problem; dy and out fill their slots
 * (NULL dy: x's strides, which never stop a merge). */
typedef struct {
    bn_space fs, ms;
    int64_t F, M;
} bn_geom;

static bn_geom bn_geometry(const udnn_bn_problem *p, const udnn_tensor *dy,
                           const udnn_tensor *out)
{
    const udnn_tensor *ts[BN_SLOTS] = {&p->x, dy != NULL ? dy : &p->x, out, &p->param};
    const int per_act = p->mode == UDNN_BATCHNORM_PER_ACTIVATION;
    int feat[UDNN_DIM_MAX], mem[UDNN_DIM_MAX], nf = 0, nm = 0;
    mem[nm++] = 0;
    feat[nf++] = 1;
    for (int d = 2; d < p->x.rank; d++) {
        if (per_act) feat[nf++] = d;
        else mem[nm++] = d;
    }
    bn_geom g;
    g.fs = bn_make_space(ts, feat, nf);
    g.ms = bn_make_space(ts, mem, nm);
    g.F = g.fs.size;
    g.M = g.ms.size;
    return g;
}

/* 32-bit index math where every index fits (with room for a stride). */
static inline int bn_small(int64_t n)
{
    return n < ((int64_t)1 << 31);
}

/* ---- per-feature finishing ------------------------------------------------------------ */

/* Everything a finishing step reads and writes; NULL where unused. */
template <class T> struct bn_side {
    typedef typename bn_param<T>::P P;
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
    typedef typename bn_param<T>::P P;
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

/* ---- pass 1: partial sums --------------------------------------------------------------- */

/* K sums per feature and split: forward d and d^2 with d = x - shift;
 * backward dy and dy * d, and without saved statistics d and d^2 too. */
template <class T, class C> struct bn_reduce_args {
    bn_space fs, ms;
    int64_t F, M, chunk;
    const T *x, *dy;
    const typename bn_param<T>::P *saved_mean; /* the shift when set */
    C *partial;                                /* [split][K][F] */
    C *shift;                                  /* [F], from split 0 */
};

template <class A, int K, bool BWD>
__device__ __forceinline__ void bn_accumulate(A (&acc)[K], A x, A dy, A shift)
{
    const A d = x - shift;
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

/* V members of one feature from element offset off (a 16-byte vector when
 * V > 1). */
template <class T, class C, int V>
__device__ __forceinline__ void bn_load(const T *p, int64_t off, C (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = (C)io<T>::ld(p[off]);
    } else {
        const udnn_gpu_vec<T> w = *(const udnn_gpu_vec<T> *)(p + off);
        for (int k = 0; k < V; k++) v[k] = (C)io<T>::ld(w.v[k]);
    }
}

/* blockDim (FT, BY), FT * BY == UDNN_GPU_BLOCK; grid (features / FT,
 * splits). Lane ty of feature tx takes member items j0 + ty, j0 + ty + BY,
 * ... two at a time (their loads issued together), and the BY lanes of a
 * feature are added in a fixed tree. An item is V members: with V > 1 the
 * member space's last dim counts 16-byte vectors of contiguous members. */
template <class T, class I, int K, bool BWD, int V>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bn_reduce(bn_reduce_args<T, typename bn_sum<T>::S> a)
{
    typedef typename bn_sum<T>::S C;
    __shared__ C red[K][UDNN_GPU_BLOCK];
    const int ft = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int64_t f = (int64_t)blockIdx.x * ft + tx;
    C acc[K];
    for (int k = 0; k < K; k++) acc[k] = C(0);
    C shift = C(0);
    if (f < a.F) {
        int64_t fo[BN_SLOTS];
        bn_offsets<I, BN_SLOTS>(a.fs, (I)f, fo);
        const T *x = a.x + fo[S_X];
        const T *dy = BWD ? a.dy + fo[S_DY] : NULL;
        shift = a.saved_mean != NULL ? (C)a.saved_mean[fo[S_P]] : (C)io<T>::ld(x[0]);
        const int64_t start = (int64_t)blockIdx.y * a.chunk;
        const I j0 = (I)start, j1 = (I)(a.M - start < a.chunk ? a.M : start + a.chunk);
        for (I j = j0 + ty; j < j1; j += 2 * by) {
            C xv[2][V], gv[2][V];
#pragma unroll
            for (int u = 0; u < 2; u++) {
                for (int k = 0; k < V; k++) xv[u][k] = gv[u][k] = C(0);
                const I jj = j + u * by;
                if (jj < j1) {
                    int64_t mo[2];
                    bn_offsets<I, 2>(a.ms, jj, mo);
                    bn_load<T, C, V>(x, mo[S_X], xv[u]);
                    if constexpr (BWD) bn_load<T, C, V>(dy, mo[S_DY], gv[u]);
                }
            }
#pragma unroll
            for (int u = 0; u < 2; u++)
                if (j + u * by < j1)
                    for (int k = 0; k < V; k++)
                        bn_accumulate<C, K, BWD>(acc, xv[u][k], gv[u][k], shift);
        }
    }
    for (int k = 0; k < K; k++) red[k][ty * ft + tx] = acc[k];
    __syncthreads();
    for (int s = by / 2; s > 0; s /= 2) {
        if (ty < s)
            for (int k = 0; k < K; k++) red[k][ty * ft + tx] += red[k][(ty + s) * ft + tx];
        __syncthreads();
    }
    if (ty == 0 && f < a.F) {
        for (int k = 0; k < K; k++) a.partial[((int64_t)blockIdx.y * K + k) * a.F + f] = red[k][tx];
        if (blockIdx.y == 0) a.shift[f] = shift;
    }
}

/* ---- pass 2: finishing each feature -------------------------------------------------------- */

template <class T, class C> struct bn_finalize_args {
    typedef typename bn_sum<T>::S S;
    bn_space fs;
    int64_t F, M;
    int64_t splits;
    const S *partial, *shift;
    C *coef; /* [BN_NCOEF][F] */
    bn_side<T> side;
};

#define BN_FIN_LANES 32 /* threads adding one feature's splits */
#define BN_FIN_ROWS 8   /* features per block */

template <class C>
__device__ __forceinline__ void bn_store_coef(C *coef, int64_t F, int64_t f, const bn_coef<C> &k)
{
    coef[f] = k.hi;
    coef[F + f] = k.lo;
    coef[2 * F + f] = k.a;
    coef[3 * F + f] = k.b;
    coef[4 * F + f] = k.d;
}

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

/* blockDim (BN_FIN_LANES, BN_FIN_ROWS): row ty finishes feature
 * blockIdx.x * BN_FIN_ROWS + ty, its lanes adding splits tx, tx + 32, ...
 * then each other in a fixed tree. */
template <class T, int K, bool BWD>
__global__ void __launch_bounds__(BN_FIN_LANES *BN_FIN_ROWS)
    bn_finalize(bn_finalize_args<T, typename bn_acc<T, BWD>::A> a)
{
    __shared__ double red[K][BN_FIN_ROWS][BN_FIN_LANES];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t f = (int64_t)blockIdx.x * BN_FIN_ROWS + ty;
    double acc[K];
    for (int k = 0; k < K; k++) acc[k] = 0.0;
    if (f < a.F)
        for (int64_t s = tx; s < a.splits; s += BN_FIN_LANES)
            for (int k = 0; k < K; k++) acc[k] += (double)a.partial[(s * K + k) * a.F + f];
    for (int k = 0; k < K; k++) red[k][ty][tx] = acc[k];
    __syncthreads();
    for (int w = BN_FIN_LANES / 2; w > 0; w /= 2) {
        if (tx < w)
            for (int k = 0; k < K; k++) red[k][ty][tx] += red[k][ty][tx + w];
        __syncthreads();
    }
    if (tx != 0 || f >= a.F) return;
    double q[K];
    for (int k = 0; k < K; k++) q[k] = red[k][ty][0];
    int64_t fo[BN_SLOTS];
    bn_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
    const double shift = (double)a.shift[f];
    if constexpr (BWD)
        bn_store_coef(a.coef, a.F, f, bn_finish_bwd<T>(a.side, fo[S_P], shift, q, a.M));
    else
        bn_store_coef(a.coef, a.F, f, bn_finish_train<T>(a.side, fo[S_P], shift, q, a.M));
}

/* Inference: one thread per feature. */
template <class T> __global__ void bn_infer_coef(bn_finalize_args<T, typename io<T>::C> a)
{
    UDNN_GPU_GRID_STRIDE_LOOP(f, a.F)
    {
        int64_t fo[BN_SLOTS];
        bn_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
        bn_store_coef(a.coef, a.F, f, bn_finish_infer<T>(a.side, fo[S_P]));
    }
}

/* ---- pass 3: the element-wise output ------------------------------------------------------- */

template <class T, class C> struct bn_apply_args {
    const T *x, *dy;
    T *out;
    const C *coef;
    int64_t F;
    C alpha, beta;
    /* dense: the feature of memory offset i is (i / div) % mod (mod == F) */
    int64_t n, div;
    bool vec;   /* 16-byte accesses; each vector's features are one or consecutive */
    bool hoist; /* vec with div 1, and the grid's stride a multiple of F: each
                   thread keeps its V features' coefficients in registers */
    /* strided */
    bn_space fs, ms;
    bool feature_inner; /* element i is (member i / F, feature i % F) */
    /* inference in one launch (bn_apply_dense's FUSE): each block computes
     * the coefficients into shared memory */
    bn_side<T> side;
};

template <class T, class I, bool BWD, class C>
__device__ __forceinline__ void bn_apply_one(const bn_apply_args<T, C> &a, const C *coef, I f,
                                             int64_t xo, int64_t go, int64_t oo)
{
    typedef typename io<T>::C S;
    const bn_coef<C> k = bn_load_coef(coef, a.F, (int64_t)f);
    const C v = bn_value<C, BWD>(k, (C)io<T>::ld(a.x[xo]), BWD ? (C)io<T>::ld(a.dy[go]) : C(0));
    const C old = a.beta != C(0) ? (C)io<T>::ld(a.out[oo]) : C(0);
    a.out[oo] = io<T>::st((S)udnn_gpu_scale_blend(v, a.alpha, a.beta, old));
}

/* One 16-byte vector of the dense walk: vector jv from the coefficients of
 * its V features (kc) or its one feature (kc[0]). */
template <class T, bool BWD, bool ONE, class C>
__device__ __forceinline__ void bn_apply_vec(const bn_apply_args<T, C> &a, const bn_coef<C> *kc,
                                             const udnn_gpu_vec<T> &xv, const udnn_gpu_vec<T> &gv,
                                             udnn_gpu_vec<T> &ov)
{
    typedef typename io<T>::C S;
    const int V = 16 / sizeof(T);
#pragma unroll
    for (int k = 0; k < V; k++) {
        const C v = bn_value<C, BWD>(kc[ONE ? 0 : k], (C)io<T>::ld(xv.v[k]),
                                     BWD ? (C)io<T>::ld(gv.v[k]) : C(0));
        const C old = a.beta != C(0) ? (C)io<T>::ld(ov.v[k]) : C(0);
        ov.v[k] = io<T>::st((S)udnn_gpu_scale_blend(v, a.alpha, a.beta, old));
    }
}

/* Every tensor dense in one layout: memory offsets shared by all. Each
 * thread takes two vectors a step, their loads issued together. FUSE
 * (inference): the block first computes every feature's coefficients
 * into dynamic shared memory (F of each), as bn_infer_coef would, and
 * needs no launch of its own for them. */
template <class T, class I, bool BWD, bool FUSE>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bn_apply_dense(bn_apply_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    const C *coef = a.coef;
    if constexpr (FUSE) {
        extern __shared__ double bn_table[];
        C *t = (C *)bn_table;
        for (int64_t f = threadIdx.x; f < a.F; f += blockDim.x) {
            int64_t fo[BN_SLOTS];
            bn_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
            bn_store_coef(t, a.F, f, bn_finish_infer<T>(a.side, fo[S_P]));
        }
        __syncthreads();
        coef = t;
    }
    const int V = 16 / sizeof(T);
    const I n = (I)a.n, div = (I)a.div, mod = (I)a.F;
    const I nvec = a.vec ? n / V : 0;
    const I step = (I)gridDim.x * blockDim.x;
    const udnn_gpu_vec<T> *xs = (const udnn_gpu_vec<T> *)a.x, *gs = (const udnn_gpu_vec<T> *)a.dy;
    udnn_gpu_vec<T> *os = (udnn_gpu_vec<T> *)a.out;
    if (a.hoist) {
        /* NHWC-like: the features repeat every F elements, so a thread's
         * vectors all start at the same feature */
        const I jv0 = (I)blockIdx.x * blockDim.x + threadIdx.x;
        if (jv0 >= nvec) return;
        const I f0 = (jv0 * V) % mod;
        bn_coef<C> kc[V];
#pragma unroll
        for (int k = 0; k < V; k++) kc[k] = bn_load_coef(coef, a.F, (int64_t)(f0 + k));
        for (I jv = jv0; jv < nvec; jv += 2 * step) {
            const bool two = jv + step < nvec; /* stays below 2^31 (or 2^63): nvec + step does */
            udnn_gpu_vec<T> xv[2], gv[2], ov[2];
#pragma unroll
    #pragma unroll
        for (int u = 0; u < 2; u++)
                if (u == 0 || two) {
                    xv[u] = xs[jv + u * step];
                    if (BWD) gv[u] = gs[jv + u * step];
                    if (a.beta != C(0)) ov[u] = os[jv + u * step];
                }
#pragma unroll
    #pragma unroll
        for (int u = 0; u < 2; u++)
                if (u == 0 || two) {
                    bn_apply_vec<T, BWD, false, C>(a, kc, xv[u], gv[u], ov[u]);
                    os[jv + u * step] = ov[u];
                }
        }
        return; /* n is a multiple of F, so of V: no tail */
    }
    for (I jv = (I)blockIdx.x * blockDim.x + threadIdx.x; jv < nvec; jv += 2 * step) {
        const bool two = jv + step < nvec;
        udnn_gpu_vec<T> xv[2], gv[2], ov[2];
#pragma unroll
        for (int u = 0; u < 2; u++)
            if (u == 0 || two) {
                xv[u] = xs[jv + u * step];
                if (BWD) gv[u] = gs[jv + u * step];
                if (a.beta != C(0)) ov[u] = os[jv + u * step];
            }
#pragma unroll
        for (int u = 0; u < 2; u++)
            if (u == 0 || two) {
                const I f0 = ((jv + u * step) * V / div) % mod;
                if (div == 1) {
                    bn_coef<C> kc[V];
#pragma unroll
                    for (int k = 0; k < V; k++) kc[k] = bn_load_coef(coef, a.F, (int64_t)(f0 + k));
                    bn_apply_vec<T, BWD, false, C>(a, kc, xv[u], gv[u], ov[u]);
                } else {
                    const bn_coef<C> kc = bn_load_coef(coef, a.F, (int64_t)f0);
                    bn_apply_vec<T, BWD, true, C>(a, &kc, xv[u], gv[u], ov[u]);
                }
                os[jv + u * step] = ov[u];
            }
    }
    for (I i = nvec * V + (I)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        bn_apply_one<T, I, BWD, C>(a, coef, (i / div) % mod, (int64_t)i, (int64_t)i, (int64_t)i);
}

template <class T, class I, bool BWD>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bn_apply_strided(bn_apply_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    const I F = (I)a.F, total = (I)a.n, M = total / F;
    const I step = (I)gridDim.x * blockDim.x;
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
        I f, j;
        if (a.feature_inner) {
            j = i / F;
            f = i - j * F;
        } else {
            f = i / M;
            j = i - f * M;
        }
        int64_t fo[3], mo[3];
        bn_offsets<I, 3>(a.fs, f, fo);
        bn_offsets<I, 3>(a.ms, j, mo);
        bn_apply_one<T, I, BWD, C>(a, a.coef, f, fo[S_X] + mo[S_X], fo[S_DY] + mo[S_DY],
                                   fo[S_OUT] + mo[S_OUT]);
    }
}

/* ---- the fallback: one thread per feature --------------------------------------------------- */

template <class T> struct bn_fused_args {
    bn_space fs, ms;
    int64_t F, M;
    const T *x, *dy;
    T *out;
    double alpha, beta;
    bn_side<T> side;
};

/* Writes the feature's output from its coefficients, in C. */
template <class T, class I, bool BWD, class C>
__device__ void bn_fused_write(const bn_fused_args<T> &a, const int64_t fo[BN_SLOTS],
                               const bn_coef<C> &k)
{
    typedef typename io<T>::C S;
    const C alpha = (C)a.alpha, beta = (C)a.beta;
    for (I j = 0; j < (I)a.M; j++) {
        int64_t mo[3];
        bn_offsets<I, 3>(a.ms, j, mo);
        const C x = (C)io<T>::ld(a.x[fo[S_X] + mo[S_X]]);
        const C g = BWD ? (C)io<T>::ld(a.dy[fo[S_DY] + mo[S_DY]]) : C(0);
        T *o = a.out + fo[S_OUT] + mo[S_OUT];
        const C old = beta != C(0) ? (C)io<T>::ld(*o) : C(0);
        *o = io<T>::st((S)udnn_gpu_scale_blend(bn_value<C, BWD>(k, x, g), alpha, beta, old));
    }
}

/* Training or backward of one feature: K sums over every member. */
template <class T, class I, bool BWD, int K>
__device__ void bn_fused_stats(const bn_fused_args<T> &a, const int64_t fo[BN_SLOTS])
{
    typedef typename bn_sum<T>::S C;
    const int64_t po = fo[S_P];
    const C shift = BWD && a.side.saved_mean != NULL ? (C)a.side.saved_mean[po]
                                                     : (C)io<T>::ld(a.x[fo[S_X]]);
    C acc[K];
    for (int i = 0; i < K; i++) acc[i] = C(0);
    for (I j = 0; j < (I)a.M; j++) {
        int64_t mo[2];
        bn_offsets<I, 2>(a.ms, j, mo);
        const C x = (C)io<T>::ld(a.x[fo[S_X] + mo[S_X]]);
        const C g = BWD ? (C)io<T>::ld(a.dy[fo[S_DY] + mo[S_DY]]) : C(0);
        bn_accumulate<C, K, BWD>(acc, x, g, shift);
    }
    double q[K];
    for (int i = 0; i < K; i++) q[i] = (double)acc[i];
    if constexpr (BWD)
        bn_fused_write<T, I, true>(a, fo, bn_finish_bwd<T>(a.side, po, (double)shift, q, a.M));
    else
        bn_fused_write<T, I, false>(a, fo, bn_finish_train<T>(a.side, po, (double)shift, q, a.M));
}

/* MODE: 0 training, 1 inference, 2 backward (all four sums: the last two
 * go unused with saved statistics). */
template <class T, class I, int MODE>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK) bn_fused(bn_fused_args<T> a)
{
    UDNN_GPU_GRID_STRIDE_LOOP(f, a.F)
    {
        int64_t fo[BN_SLOTS];
        bn_offsets<I, BN_SLOTS>(a.fs, (I)f, fo);
        if constexpr (MODE == 1)
            bn_fused_write<T, I, false>(a, fo, bn_finish_infer<T>(a.side, fo[S_P]));
        else if constexpr (MODE == 2) bn_fused_stats<T, I, true, 4>(a, fo);
        else bn_fused_stats<T, I, false, 2>(a, fo);
    }
}

/* ---- one pass: training and backward in one launch -------------------------------------- */

/* The three passes read x (and dy) twice, for the statistics and for the
 * output: 3 tensors of traffic for 2 (5 for 3 backward). Where every
 * tensor is dense in one layout (spatial modes), bn_flow serves the second
 * read from L2. Its work is items, each a slice of one group of channels:
 * a channel where a channel is runs of contiguous members (NCHW-like); the
 * FG channels of a BN_FLOW_SLICE-byte slice of each row where channels are
 * innermost (NHWC-like), so that a group is a small part of x. A reduce
 * item (R) sums its slice into partials; the group's last R item to finish
 * adds the group's partials in a fixed order, finishes its channels as
 * pass 2 does and raises the group's ready flag; an apply item (A) waits
 * for the flag and writes its slice's output.
 *
 * A persistent grid takes items in ticket order (an atomic counter), R
 * items `lag` ahead of A items: a group plus about the items in progress
 * at once, so that a group is finished when its first A item comes and
 * its slices are still in L2 (A items read them, and store the output,
 * marked evict-first). An item waits only for items of lower tickets,
 * which running blocks hold, and those wait only for lower ones still: the
 * lowest unfinished ticket always progresses, so the grid needs no
 * co-residency (nor a cooperative launch). Same bits on every run: each R
 * item sums a fixed slice in a fixed order, and the partials are added in
 * item order. */

/* bn_keep's knob that the flow's functions see: whether every block of
 * a group finishes it for itself (1) or waits for the last one's
 * coefficients (0; H200 f32 NCHW training 2194 against 2348 GB/s). */
#ifndef BN_KEEP_SELF
#define BN_KEEP_SELF 1
#endif
/* whether training and backward try bn_keep before bn_flow; and, where
 * channels are innermost, for 4- and 8-byte data too */
#ifndef BN_KEEP
#define BN_KEEP 1
#endif
#ifndef BN_KEEP_ROWS_WIDE
#define BN_KEEP_ROWS_WIDE 0
#endif

/* Whether channels-innermost layouts take the one-pass flow (see bn_flow_run). */
#ifndef BN_FLOW_ROWS
#define BN_FLOW_ROWS 0
#endif

/* Tuning, at compile time: the row-slice bytes of a channels-innermost
 * group (FG = BN_FLOW_SLICE / sizeof(T) channels, bn_flow_fg; bn_keep's
 * too: 64 bytes served its f16 NHWC backward at 939 GB/s on the H200
 * where 32 gave 686, training alike; on the H100 128 took f16 NHWC
 * training from 1340 to 1361 GB/s, 1273 to 1440 at 128 x 256 x 28 x 28,
 * but 64 x 256 x 56 x 56's backward groups then outgrew the grid, 991 to
 * 889 by the three passes); the loads of
 * each tensor a thread issues together for an item; the most resident
 * blocks per multiprocessor, and the fewest the registers must allow
 * (training: 80 registers a thread; backward, which holds dy too: 128);
 * the lag beyond a group, in items per block of the grid (the last R item
 * of a group has about twice that many tickets' time to finish it); L2
 * hints (1) or plain accesses (0). */
#ifndef BN_FLOW_SLICE
#define BN_FLOW_SLICE 64
#endif
#ifndef BN_FLOW_LOADS
#define BN_FLOW_LOADS 4
#endif
#ifndef BN_FLOW_BLOCKS
#define BN_FLOW_BLOCKS 4
#endif
#ifndef BN_FLOW_MIN_FWD
#define BN_FLOW_MIN_FWD 3
#endif
#ifndef BN_FLOW_MIN_BWD
#define BN_FLOW_MIN_BWD 2
#endif
#ifndef BN_FLOW_LAG
#define BN_FLOW_LAG 2
#endif
#ifndef BN_FLOW_HINTS
#define BN_FLOW_HINTS 1
#endif

/* Channels of a group, W to a load. Its sums (4 at most) must not
 * outnumber a block's threads, nor its lanes (FG / W) 32, the fewest a
 * warp's sums are written for. */
template <class T, bool ROWS, int W> struct bn_flow_fg {
    static constexpr int SLICE = BN_FLOW_SLICE / (int)sizeof(T);
    static constexpr int FG = !ROWS ? 1 : SLICE < 32 * W ? SLICE : 32 * W;
    static_assert(FG >= 1 && (FG & (FG - 1)) == 0, "BN_FLOW_SLICE");
    static_assert(4 * FG <= UDNN_GPU_BLOCK, "BN_FLOW_SLICE");
};

template <class T, class C> struct bn_flow_args {
    const T *x, *dy;
    T *out;
    int64_t F, M;           /* channels, members of each */
    int64_t run, rstep;     /* channel runs: a run's elements, the step from run to run */
    udnn_gpu_div32 per_run; /* channel runs: loads in a run */
    int64_t pstride;        /* the parameters' channel stride */
    int64_t loads;          /* a group's loads of each tensor (channel runs) or rows */
    int64_t chunk;          /* an item's share of them */
    uint32_t S, NR, lag;    /* items per group, R items, the lag */
    uint32_t *ticket, *done, *ready; /* [1], [groups], [groups]: zero at the launch */
    double *partial;        /* [NR][K][FG] */
    C *coef;                /* [BN_NCOEF][F] */
    bn_side<T> side;
    C alpha, beta;
};

template <class C, int FG, int K> struct bn_flow_smem {
    double red[UDNN_GPU_BLOCK_SUM_SLOTS * FG * K]; /* per warp, an R item's sums */
    double fin[UDNN_GPU_BLOCK];                    /* a group's finishing */
    C kc[BN_NCOEF * FG];                           /* an A item's coefficients */
    uint32_t ticket, last;
};

/* Measurement only: bn_keep without its sums' arithmetic (1), without
 * its stores (2), or without waiting for and finishing its group (3);
 * wrong results. H100, f16 NHWC training 64 x 256 x 56 x 56 (1139 GB/s
 * with double sums, 1340 with float): 1 gave 1393 and 2 1699 (double
 * sums), 3 1569 (float): loading, summing and waiting take two thirds of
 * the time, and the group's finish is not most of that. */
#ifndef BN_KEEP_PROBE
#define BN_KEEP_PROBE 0
#endif
/* A thread's sums over its loads (at most U + H members a channel): in
 * double, except bn_keep's 16-bit data, whose float sums are added into
 * double after. Their rounding, about 1e-7 of a thread's sum, is a
 * ten-thousandth of the 16-bit inputs' own rounding or less, and goes
 * either way over the thousands of threads' sums. The double conversions
 * and adds were a seventh of the f16 NHWC training's time (H100, 64 x 256
 * x 56 x 56: 1139 to 1340 GB/s; backward 899 to 991). */
template <bool FLOAT> struct bn_thread_sum_of {
    typedef double S;
};
template <> struct bn_thread_sum_of<true> {
    typedef float S;
};
template <class T, bool KEEP> struct bn_thread_sum : bn_thread_sum_of<KEEP && sizeof(T) == 2> {};

/* LAST: the data's last read (evict first). */
template <class T, int W, bool LAST>
__device__ __forceinline__ udnn_gpu_pack<T, W> bn_get(const T *p)
{
#if BN_FLOW_HINTS
    if constexpr (LAST && W * sizeof(T) == 16) {
        const uint4 u = udnnGpuLoadLast((const uint4 *)p);
        udnn_gpu_pack<T, W> r;
        memcpy(&r, &u, 16);
        return r;
    } else {
        return *(const udnn_gpu_pack<T, W> *)p;
    }
#else
    return *(const udnn_gpu_pack<T, W> *)p;
#endif
}

template <class T, int W>
__device__ __forceinline__ void bn_put(T *p, const udnn_gpu_pack<T, W> &v)
{
#if BN_FLOW_HINTS
    if constexpr (W * sizeof(T) == 16) {
        uint4 u;
        memcpy(&u, &v, 16);
        udnnGpuStoreStream((uint4 *)p, u);
    } else {
        *(udnn_gpu_pack<T, W> *)p = v;
    }
#else
    *(udnn_gpu_pack<T, W> *)p = v;
#endif
}

/* Element offset of position pos of group g (a load of channel g's runs,
 * or a row) for a thread whose first channel is f0. */
template <bool ROWS, int W, class T, class C>
__device__ __forceinline__ int64_t bn_flow_off(const bn_flow_args<T, C> &a, int64_t g,
                                               int64_t f0, int64_t pos)
{
    if constexpr (ROWS) {
        return pos * a.F + f0;
    } else {
        const int64_t q = udnn_gpu_div32_q(a.per_run, (uint32_t)pos);
        return g * a.run + q * a.rstep + (pos - q * a.per_run.d) * W;
    }
}

/* Channel f's shift: its saved mean (backward), else its first member;
 * exact in the statistics type. */
template <bool BWD, bool ROWS, class T, class C>
__device__ __forceinline__ typename bn_param<T>::P bn_flow_shift(const bn_flow_args<T, C> &a,
                                                                 int64_t f)
{
    typedef typename bn_param<T>::P P;
    if (BWD && a.side.saved_mean != NULL) return a.side.saved_mean[f * a.pstride];
    return (P)io<T>::ld(a.x[ROWS ? f : f * a.run]);
}

/* Adds v[0..NV) over the lanes of a warp that share lane % L, spreading
 * the sums: each round (mask m = L, 2L, ... below the warp size) sends
 * half of the H values a lane holds to the lane across m and adds the
 * half it gets to the half it keeps, one send per value rather than one
 * per value and round. The lane ends with n sums, of values first.. first
 * + n - 1; dup: another lane holds the same. D: rounds left for a warp of
 * up to 64. */
template <int NV, int H, int D>
__device__ __forceinline__ void bn_warp_spread(double (&v)[NV], int m, int lane, int &n,
                                               int &first, bool &dup)
{
    if constexpr (D > 0) {
        if (m >= udnnGpuWarpSize) return;
        const bool hi = (lane & m) != 0;
        if constexpr (H >= 2) {
            constexpr int h = H / 2;
#pragma unroll
            for (int j = 0; j < h; j++) {
                const double send = hi ? v[j] : v[h + j];
                const double keep = hi ? v[h + j] : v[j];
                v[j] = keep + udnnGpuShflXor(send, m);
            }
            if (hi) first += h;
            n = h;
            bn_warp_spread<NV, h, D - 1>(v, 2 * m, lane, n, first, dup);
        } else {
            v[0] += udnnGpuShflXor(v[0], m);
            dup = dup || hi;
            bn_warp_spread<NV, 1, D - 1>(v, 2 * m, lane, n, first, dup);
        }
    }
}

/* The lanes of an item: L per row (rows: FG / W channels, W each), else
 * one per load; STEP positions a round of loads. */
template <class T, bool ROWS, int W> struct bn_flow_lanes {
    static constexpr int FG = bn_flow_fg<T, ROWS, W>::FG, L = ROWS ? FG / W : 1,
                         NF = ROWS ? W : 1, STEP = UDNN_GPU_BLOCK / L;
};

/* Spins until *counter reaches n. */
__device__ __forceinline__ void bn_flow_spin(const uint32_t *counter, uint32_t n)
{
    while (*(const volatile uint32_t *)counter < n) {
    }
}

__device__ __forceinline__ void bn_flow_wait(const uint32_t *flag)
{
    bn_flow_spin(flag, 1u);
}

/* A group's last R item: its channels' statistics and coefficients from
 * the partials (lanes of a sum adding every LP-th item, then a fixed
 * tree), then the ready flag. */
template <class T, int K, bool BWD, bool ROWS, int W, class C>
__device__ void bn_flow_finish(const bn_flow_args<T, C> &a, uint32_t g,
                               bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm, bool publish)
{
    constexpr int FG = bn_flow_fg<T, ROWS, W>::FG, LP = UDNN_GPU_BLOCK / (FG * K), B = 16;
    const int tid = threadIdx.x, pair = tid / LP, sub = tid % LP, k = pair / FG, fl = pair % FG;
    const int64_t f = (int64_t)g * FG + fl;
    const volatile double *part = a.partial + ((int64_t)g * a.S * K + k) * FG + fl;
    const int64_t ps = (int64_t)K * FG; /* from one item's partials to the next */
    __threadfence(); /* the count said every partial is in: read them after it */
    double acc = 0.0;
    if (f < a.F) {
        /* B loads in flight */
        for (uint32_t s0 = sub; s0 < a.S; s0 += B * LP) {
            double v[B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                const uint32_t s = s0 + b * LP;
                v[b] = s < a.S ? part[s * ps] : 0.0;
            }
#pragma unroll
            for (int b = 0; b < B; b++)
                if (s0 + b * LP < a.S) acc += v[b];
        }
    }
    sm.fin[tid] = acc;
    __syncthreads();
    for (int w = LP / 2; w > 0; w /= 2) {
        if (sub < w) sm.fin[tid] += sm.fin[tid + w];
        __syncthreads();
    }
    const int64_t ff = (int64_t)g * FG + tid;
    if (tid < FG && ff < a.F) {
        double q[K];
        for (int i = 0; i < K; i++) q[i] = sm.fin[(i * FG + tid) * LP];
        const double shift = (double)bn_flow_shift<BWD, ROWS>(a, ff);
        const int64_t po = ff * a.pstride;
        bn_side<T> side = a.side;
        if (!publish) side.running_mean = side.save_mean = side.dscale = NULL;
        bn_coef<C> k;
        if constexpr (BWD) k = bn_finish_bwd<T>(side, po, shift, q, a.M);
        else k = bn_finish_train<T>(side, po, shift, q, a.M);
        bn_store_coef(sm.kc, (int64_t)FG, (int64_t)tid, k); /* for the block's own item */
        if (publish) {
            bn_store_coef(a.coef, a.F, ff, k);
            __threadfence();
        }
    }
    __syncthreads();
    if (publish && tid == 0) atomicExch(&a.ready[g], 1u);
}

/* Where an item's loads are: its group g; the thread's first channel f0
 * (nothing to do unless below F) and its positions p0, p0 + STEP, ...
 * below p1. */
struct bn_flow_at {
    uint32_t g;
    int64_t f0, p0, p1;
    bool valid;
};

template <class T, bool ROWS, int W, class C>
__device__ __forceinline__ bn_flow_at bn_flow_locate(const bn_flow_args<T, C> &a, uint32_t item)
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    const int tid = threadIdx.x, lane = tid % G::L;
    bn_flow_at at;
    at.g = item / a.S;
    const int64_t first = (int64_t)(item - at.g * a.S) * a.chunk, end = first + a.chunk;
    at.f0 = ROWS ? (int64_t)at.g * G::FG + lane * W : (int64_t)at.g;
    at.valid = at.f0 < a.F;
    at.p0 = first + tid / G::L;
    at.p1 = end < a.loads ? end : a.loads;
    return at;
}

/* Where the loads of an item beyond a thread's U registers are held:
 * H more of each tensor in shared memory (bn_keep), copied without
 * passing through registers, each read back only by the thread that
 * copied it. held: the thread's first, the next a block's width on; dy's
 * after x's H. */
template <class T, int W, int H> struct bn_held {
    static_assert(H == 0 || W * sizeof(T) == 16, "held loads are 16 bytes");
    udnn_gpu_pack<T, W> *at;
};

/* Load u of a thread holding U in registers and the rest in `h`; t: which
 * tensor (0 x, 1 dy). */
template <int U, int H, class T, int W>
__device__ __forceinline__ udnn_gpu_pack<T, W> *bn_held_slot(const bn_held<T, W, H> &h, int u,
                                                             int t)
{
    return h.at + (int64_t)(t * H + u - U) * UDNN_GPU_BLOCK;
}

/* The thread's U + H loads of x (and dy) for an item, U into registers, H
 * into shared memory; LAST: their last read. */
template <class T, bool BWD, bool ROWS, int W, int U, bool LAST, int H = 0, class C>
__device__ __forceinline__ void bn_flow_load(const bn_flow_args<T, C> &a, const bn_flow_at &at,
                                             udnn_gpu_pack<T, W> (&xr)[U],
                                             udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                             bn_held<T, W, H> held = {})
{
    typedef bn_flow_lanes<T, ROWS, W> G;
#pragma unroll
    for (int u = 0; u < U + H; u++) {
        const int64_t pos = at.p0 + (int64_t)u * G::STEP;
        if (at.valid && pos < at.p1) {
            const int64_t off = bn_flow_off<ROWS, W>(a, at.g, at.f0, pos);
            if (u >= U) {
                udnnGpuCopyAsync16(bn_held_slot<U>(held, u, 0), a.x + off);
                if constexpr (BWD) udnnGpuCopyAsync16(bn_held_slot<U>(held, u, 1), a.dy + off);
            } else {
                xr[u] = bn_get<T, W, LAST>(a.x + off);
                if constexpr (BWD) gr[u] = bn_get<T, W, LAST>(a.dy + off);
            }
        }
    }
}

/* Load u of x (t 0) or dy (t 1): from the registers or the held. */
template <int U, int H, class T, int W>
__device__ __forceinline__ udnn_gpu_pack<T, W>
bn_pick(const udnn_gpu_pack<T, W> (&r)[U > 0 ? U : 1], const bn_held<T, W, H> &held, int u, int t)
{
    return u < U ? r[u < U ? u : 0] /* in bounds where not taken too */
                 : *bn_held_slot<U>(held, u, t);
}

/* The sums of an item's loads: each thread's over its positions, the
 * warp's over its lanes (bn_warp_spread), the block's over its warps in
 * order, into the item's partials; then the group's count of items summed,
 * and its finishing by the last. */
template <class T, int K, bool BWD, bool ROWS, int W, int U, bool KEEP, int H = 0, class C>
__device__ __forceinline__ void bn_flow_sum(const bn_flow_args<T, C> &a, uint32_t item,
                                            const bn_flow_at &at,
                                            bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm,
                                            const udnn_gpu_pack<T, W> (&xr)[U],
                                            const udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                            bn_held<T, W, H> held = {})
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    constexpr int FG = G::FG, L = G::L, NF = G::NF, NV = NF * K;
    const int tid = threadIdx.x, lane = tid % L;
    const uint32_t g = at.g;
    typename bn_param<T>::P shift[NF];
    typedef typename bn_thread_sum<T, KEEP>::S SA;
    SA acc[NV];
#pragma unroll
    for (int v = 0; v < NF; v++)
        shift[v] = at.valid ? bn_flow_shift<BWD, ROWS>(a, at.f0 + v) : 0;
#pragma unroll
    for (int i = 0; i < NV; i++) acc[i] = SA(0);
#pragma unroll
    for (int u = 0; u < U + H; u++) {
        if (H > 0 && u == U) udnnGpuCopyAsyncWait(); /* the held have landed */
        if (KEEP && BN_KEEP_PROBE == 1) continue;
        if (!at.valid || at.p0 + (int64_t)u * G::STEP >= at.p1) continue;
        const udnn_gpu_pack<T, W> xv = bn_pick<U>(xr, held, u, 0);
        udnn_gpu_pack<T, W> gv;
        if constexpr (BWD) gv = bn_pick<U>(gr, held, u, 1);
#pragma unroll
        for (int e = 0; e < W; e++) {
            const int v = ROWS ? e : 0;
            const SA d = (SA)io<T>::ld(xv.v[e]) - (SA)shift[v];
            if constexpr (BWD) {
                const SA dy = (SA)io<T>::ld(gv.v[e]);
                acc[v * K] += dy;
                acc[v * K + 1] += dy * d;
                if constexpr (K == 4) {
                    acc[v * K + 2] += d;
                    acc[v * K + 3] += d * d;
                }
            } else {
                acc[v * K] += d;
                acc[v * K + 1] += d * d;
            }
        }
    }
    double sum[NV];
#pragma unroll
    for (int i = 0; i < NV; i++) sum[i] = (double)acc[i];
    int n = NV, first = 0;
    bool dup = false;
    bn_warp_spread<NV, NV, 6>(sum, L, tid % udnnGpuWarpSize, n, first, dup);
    const int warp = tid / udnnGpuWarpSize;
    if (!dup)
#pragma unroll
        for (int j = 0; j < NV; j++)
            if (j < n) sm.red[(warp * L + lane) * NV + first + j] = sum[j];
    __syncthreads();
    if (tid < L * NV) {
        const int warps = UDNN_GPU_BLOCK / udnnGpuWarpSize;
        double sum = 0.0;
        for (int w = 0; w < warps; w++) sum += sm.red[w * L * NV + tid];
        const int l = tid / NV, i = tid % NV;
        a.partial[((int64_t)item * K + i % K) * FG + l * W + i / K] = sum;
        __threadfence();
    }
    __syncthreads();
    if (KEEP && BN_KEEP_PROBE == 3) return;
    /* a group of one item needs no count: the block's own partials are
     * visible to it after the barrier. KEEP: every block of a group waits
     * for the count and finishes the group for itself (the same sums in
     * the same order: the same coefficients); the last also publishes. */
    if (tid == 0) {
        sm.last = a.S == 1 || atomicAdd(&a.done[g], 1u) == a.S - 1;
        if (KEEP && BN_KEEP_SELF && !sm.last) {
            bn_flow_spin(&a.done[g], a.S);
            __threadfence();
        }
    }
    __syncthreads();
    if (sm.last) bn_flow_finish<T, K, BWD, ROWS, W>(a, g, sm, true);
    else if (KEEP && BN_KEEP_SELF) bn_flow_finish<T, K, BWD, ROWS, W>(a, g, sm, false);
}

/* An R item: its loads, then its sums. */
template <class T, int K, bool BWD, bool ROWS, int W, class C>
__device__ __forceinline__ void bn_flow_reduce(const bn_flow_args<T, C> &a, uint32_t item,
                                               bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm)
{
    constexpr int U = BN_FLOW_LOADS;
    const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, item);
    udnn_gpu_pack<T, W> xr[U], gr[BWD ? U : 1];
    bn_flow_load<T, BWD, ROWS, W, U, false>(a, at, xr, gr);
    bn_flow_sum<T, K, BWD, ROWS, W, U, false>(a, item, at, sm, xr, gr);
}

/* An item's output from its loads, once its group's coefficients are
 * ready; `own`: this block finished the group, and they are in sm.kc. */
template <class T, int K, bool BWD, bool ROWS, int W, int U, int H = 0, class C>
__device__ __forceinline__ void bn_flow_write(const bn_flow_args<T, C> &a, const bn_flow_at &at,
                                              bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm,
                                              const udnn_gpu_pack<T, W> (&xr)[U],
                                              const udnn_gpu_pack<T, W> (&gr)[BWD ? U : 1],
                                              bool own, bn_held<T, W, H> held = {})
{
    typedef typename io<T>::C S;
    typedef bn_flow_lanes<T, ROWS, W> G;
    constexpr int FG = G::FG, L = G::L, NF = G::NF;
    const int tid = threadIdx.x, lane = tid % L;
    const uint32_t g = at.g;
    const bool blend = a.beta != C(0);
    if (!own) {
        if (tid == 0) {
            bn_flow_wait(&a.ready[g]);
            __threadfence();
        }
        __syncthreads();
        for (int i = tid; i < BN_NCOEF * FG; i += UDNN_GPU_BLOCK) {
            const int64_t f = (int64_t)g * FG + i % FG;
            if (f < a.F) sm.kc[i] = ((const volatile C *)a.coef)[(i / FG) * a.F + f];
        }
        __syncthreads();
    }
    if (!at.valid) return;
    bn_coef<C> kc[NF];
#pragma unroll
    for (int v = 0; v < NF; v++) {
        const int fl = ROWS ? lane * W + v : 0;
        kc[v].hi = sm.kc[fl];
        kc[v].lo = sm.kc[FG + fl];
        kc[v].a = sm.kc[2 * FG + fl];
        kc[v].b = sm.kc[3 * FG + fl];
        kc[v].d = sm.kc[4 * FG + fl];
    }
#pragma unroll
    for (int u = 0; u < U + H; u++) {
        const int64_t pos = at.p0 + (int64_t)u * G::STEP;
        if (BN_KEEP_PROBE == 2 && U > BN_FLOW_LOADS) break; /* bn_keep's U only */
        if (pos < at.p1) {
            T *out = a.out + bn_flow_off<ROWS, W>(a, g, at.f0, pos);
            const udnn_gpu_pack<T, W> xv = bn_pick<U>(xr, held, u, 0);
            udnn_gpu_pack<T, W> gv;
            if constexpr (BWD) gv = bn_pick<U>(gr, held, u, 1);
            udnn_gpu_pack<T, W> o;
            if (blend) o = bn_get<T, W, false>(out); /* rare: read it late */
#pragma unroll
            for (int e = 0; e < W; e++) {
                const bn_coef<C> &k = kc[ROWS ? e : 0];
                const C v = bn_value<C, BWD>(k, (C)io<T>::ld(xv.v[e]),
                                             BWD ? (C)io<T>::ld(gv.v[e]) : C(0));
                const C old = blend ? (C)io<T>::ld(o.v[e]) : C(0);
                o.v[e] = io<T>::st((S)udnn_gpu_scale_blend(v, a.alpha, a.beta, old));
            }
            bn_put<T, W>(out, o);
        }
    }
}

/* An A item: its loads issued (its second read of the data), then its
 * output once the group is ready. */
template <class T, int K, bool BWD, bool ROWS, int W, class C>
__device__ __forceinline__ void bn_flow_apply(const bn_flow_args<T, C> &a, uint32_t item,
                                              bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> &sm)
{
    constexpr int U = BN_FLOW_LOADS;
    const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, item);
    udnn_gpu_pack<T, W> xr[U], gr[BWD ? U : 1];
    bn_flow_load<T, BWD, ROWS, W, U, true>(a, at, xr, gr);
    bn_flow_write<T, K, BWD, ROWS, W, U>(a, at, sm, xr, gr, false);
}

/* Ticket t: the first `lag` are R items 0..lag-1; then pairs (R lag + i,
 * A i); then the last A items. */
template <class T, int K, bool BWD, bool ROWS, int W>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, BWD ? BN_FLOW_MIN_BWD : BN_FLOW_MIN_FWD)
    bn_flow(bn_flow_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    __shared__ bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> sm;
    const uint32_t total = 2 * a.NR, pairs = a.NR - a.lag;
    uint32_t next = 0;
    if (threadIdx.x == 0) next = atomicAdd(a.ticket, 1u);
    for (;;) {
        if (threadIdx.x == 0) {
            /* the next ticket is fetched while this one's item runs */
            sm.ticket = next;
            if (next < total) next = atomicAdd(a.ticket, 1u);
        }
        __syncthreads();
        const uint32_t t = sm.ticket;
        if (t >= total) return;
        bool reduce = true;
        uint32_t item = t;
        if (t >= a.lag) {
            const uint32_t u = t - a.lag;
            reduce = u < 2 * pairs && u % 2 == 0;
            item = u >= 2 * pairs ? u - pairs : reduce ? a.lag + u / 2 : u / 2;
        }
        if (reduce) bn_flow_reduce<T, K, BWD, ROWS, W>(a, item, sm);
        else bn_flow_apply<T, K, BWD, ROWS, W>(a, item, sm);
        __syncthreads();
    }
}

/* ---- one read: training and backward with the data held on chip -------------------- */

/* Where a group's data fits in the registers of the resident blocks,
 * bn_keep reads x (and dy) once: each block loads an item (a slice of one
 * group, its registers' worth), sums it into the group's partials, waits
 * for the group's coefficients (the last item summed finishes them, as in
 * bn_flow, and keeps them in shared memory for its own item) and writes
 * its output from the registers, 2 tensors of traffic for 2 (3 for 3
 * backward). Every block of a group waits for the group's count of
 * items summed, then adds the partials itself, in one fixed order (no
 * second wait for a finisher's coefficients; the last in also writes the
 * statistics). Every item of a group must be resident at once: the grid
 * is a cooperative launch of the resident blocks (co-resident by
 * contract, even beside other kernels), and a group has no more items
 * than the grid. With TEAMS (the default), teams of S blocks take whole
 * groups, so an item waits only for its own team's current items; else
 * item i runs on block i % grid in round i / grid and waits only for
 * items of its round or of rounds before on other blocks, whose groups are
 * older (the oldest group always finishes). Same bits as bn_flow: the same
 * sums in the same order.
 *
 * An item is a thread's registers' worth and, for 16-byte loads, as many
 * again in shared memory (bn_held): fewer, larger items, so fewer rounds
 * of load, wait and store.
 *
 * Measured on the H100 (64 x 256 x 56 x 56, copy 2760 GB/s): f32 NCHW
 * training 2260 GB/s (registers alone 2031, bn_flow 1875), backward 2083
 * (1860, 1894); the blocks of a team load, then wait, then store
 * together, so memory idles part of each item. Loading the next item into
 * a second set of registers while finishing one ran slower (1411: half the
 * registers an item), as did 4 smaller blocks per multiprocessor (1910),
 * pausing between polls, and summing each load in float before double
 * (no faster; f16 NHWC training 830 against 1175). */

/* Tuning, at compile time: the 16-byte loads of each tensor a thread
 * holds for an item (training; backward holds x and dy); the fewest
 * resident blocks per multiprocessor the registers must allow; teams. */
#ifndef BN_KEEP_LOADS_FWD
#define BN_KEEP_LOADS_FWD 16
#endif
#ifndef BN_KEEP_LOADS_BWD
#define BN_KEEP_LOADS_BWD 8
#endif
#ifndef BN_KEEP_MIN
#define BN_KEEP_MIN 2
#endif
#ifndef BN_KEEP_TEAMS
#define BN_KEEP_TEAMS 1
#endif
/* the loads of each tensor held in shared memory besides, for 16-byte
 * loads; channels innermost (ROWS) apart: H100, 64 x 256 x 56 x 56, f16
 * NHWC training 1164 GB/s with 16, 1004 with 24 */
#ifndef BN_KEEP_HELD_FWD
#define BN_KEEP_HELD_FWD 24
#endif
#ifndef BN_KEEP_HELD_BWD
#define BN_KEEP_HELD_BWD 12
#endif
#ifndef BN_KEEP_HELD_ROWS_FWD
#define BN_KEEP_HELD_ROWS_FWD 16
#endif
#ifndef BN_KEEP_HELD_ROWS_BWD
#define BN_KEEP_HELD_ROWS_BWD 8
#endif

template <class T, bool BWD, bool ROWS, int W> struct bn_keep_loads {
    static constexpr int U = BWD ? BN_KEEP_LOADS_BWD : BN_KEEP_LOADS_FWD;
    static constexpr int H = W * sizeof(T) != 16 ? 0
                             : ROWS ? (BWD ? BN_KEEP_HELD_ROWS_BWD : BN_KEEP_HELD_ROWS_FWD)
                                    : (BWD ? BN_KEEP_HELD_BWD : BN_KEEP_HELD_FWD);
    /* a block's dynamic shared memory */
    static constexpr size_t SHARED = (size_t)H * (BWD ? 2 : 1) * 16 * UDNN_GPU_BLOCK;
};

template <class T, int K, bool BWD, bool ROWS, int W>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK, BN_KEEP_MIN)
    bn_keep(bn_flow_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    typedef bn_keep_loads<T, BWD, ROWS, W> L;
    constexpr int U = L::U, H = L::H;
    __shared__ bn_flow_smem<C, bn_flow_fg<T, ROWS, W>::FG, K> sm;
    extern __shared__ uint4 bn_keep_shared[];
    const bn_held<T, W, H> held = {(udnn_gpu_pack<T, W> *)bn_keep_shared + threadIdx.x};
    /* TEAMS: the grid is teams of S blocks, block m of a team taking slice
     * m of the team's groups, so that a team waits only for itself and
     * teams drift apart (some load while others wait or store); else
     * items go round the whole grid */
    const uint32_t step = BN_KEEP_TEAMS ? gridDim.x / a.S * a.S : gridDim.x;
    uint32_t item = blockIdx.x;
    if (item >= a.NR || item >= step) return;
    for (; item < a.NR; item += step) {
        const bn_flow_at at = bn_flow_locate<T, ROWS, W>(a, item);
        udnn_gpu_pack<T, W> xr[U], gr[BWD ? U : 1];
        bn_flow_load<T, BWD, ROWS, W, U, true, H>(a, at, xr, gr, held);
        bn_flow_sum<T, K, BWD, ROWS, W, U, true, H>(a, item, at, sm, xr, gr, held);
        bn_flow_write<T, K, BWD, ROWS, W, U, H>(a, at, sm, xr, gr, BN_KEEP_SELF || sm.last,
                                                held);
        __syncthreads();
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

template <class T> static bn_side<T> bn_side_of(const udnn_bn_problem *p)
{
    typedef typename bn_param<T>::P P;
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

/* How pass 1 runs: FT features by BY lanes per block, `splits` slices of
 * the members, `chunk` members each. */
typedef struct {
    int ft, by;
    int64_t splits, chunk;
} bn_plan;

/* Plans pass 1 for K sums of `elem` bytes, leaving `reserved` bytes of
 * scratch for the coefficients and shifts; 0 when the partials of even one
 * split do not fit. */
static int bn_plan_reduce(const udnn_gpu_context *c, const bn_geom *g, int K, size_t elem,
                          size_t reserved, bn_plan *pl)
{
    const int adjacent = g->fs.nd > 0 && g->fs.st[S_X][g->fs.nd - 1] == 1;
    pl->ft = 1;
    if (adjacent || g->M < 64)
        while (pl->ft < 32 && pl->ft < g->F) pl->ft *= 2;
    pl->by = UDNN_GPU_BLOCK / pl->ft;
    const int64_t fblocks = (g->F + pl->ft - 1) / pl->ft;
    const int64_t target = (int64_t)c->sm_count * 8; /* about the resident blocks */
    int64_t splits = (target + fblocks - 1) / fblocks;
    /* at least 16 members per lane, so the partials stay few */
    const int64_t by_work = (g->M + 16 * pl->by - 1) / (16 * pl->by);
    if (splits > by_work) splits = by_work;
    if (splits > 65535) splits = 65535;
    if (splits < 1) splits = 1;
    const size_t per_split = udnn_gpu_align256((size_t)K * (size_t)g->F * elem);
    if (reserved + per_split > c->scratch_bytes) return 0;
    const int64_t room = (int64_t)((c->scratch_bytes - reserved) / per_split);
    if (splits > room) splits = room;
    pl->chunk = (g->M + splits - 1) / splits;
    pl->splits = (g->M + pl->chunk - 1) / pl->chunk;
    return 1;
}

/* The dense walk: every tensor shares one dense layout in which the
 * feature of memory offset i is (i / div) % F. Spatial modes: the channel,
 * div = C's stride. PER_ACTIVATION: the offset within an image, when n
 * steps over whole images (its feature space is then numbered in memory
 * order). */
static int bn_dense_div(const udnn_bn_problem *p, const udnn_tensor *const *ts, int nt,
                        const bn_geom *g, int64_t *div)
{
    if (!udnn_gpu_same_dense(ts, nt)) return 0;
    if (p->mode != UDNN_BATCHNORM_PER_ACTIVATION) {
        *div = p->x.dims[1] > 1 ? p->x.strides[1] : 1;
        return 1;
    }
    if (p->x.dims[0] > 1 && p->x.strides[0] != g->F) return 0;
    *div = 1;
    return 1;
}

/* The most shared memory bn_apply_dense's FUSE takes for its table. */
#define BN_FUSE_TABLE ((size_t)16 << 10)

template <class T, class I, bool BWD, bool FUSE>
static void bn_launch_apply(const udnn_gpu_context *c,
                            bn_apply_args<T, typename bn_acc<T, BWD>::A> a, bool dense)
{
    typedef typename bn_acc<T, BWD>::A C;
    if (dense) {
        const int64_t V = (int64_t)(16 / sizeof(T));
        const int64_t items = a.vec ? a.n / V + 1 : a.n;
        unsigned blocks = udnn_gpu_grid(c, items);
        const size_t smem = FUSE ? (size_t)BN_NCOEF * a.F * sizeof(C) : 0;
        if (FUSE) {
            /* one wave, so that each block computes the table once */
            static int occupancy;
            const int64_t wave =
                c->sm_count * udnn_gpu_occupancy(bn_apply_dense<T, I, BWD, FUSE>,
                                                 UDNN_GPU_BLOCK, BN_FUSE_TABLE, &occupancy);
            if ((int64_t)blocks > wave) blocks = (unsigned)wave;
        }
        if (a.vec && a.div == 1) {
            /* blocks * UDNN_GPU_BLOCK * V must be a multiple of F */
            int64_t gcd = a.F, b = (int64_t)UDNN_GPU_BLOCK * V;
            while (b != 0) {
                const int64_t t = gcd % b;
                gcd = b;
                b = t;
            }
            const int64_t q = a.F / gcd;
            if (q <= c->max_blocks) {
                a.hoist = true;
                blocks = (unsigned)(blocks < q ? q : blocks / q * q);
            }
        }
        bn_apply_dense<T, I, BWD, FUSE><<<blocks, UDNN_GPU_BLOCK, smem, c->stream>>>(a);
    } else {
        bn_apply_strided<T, I, BWD><<<udnn_gpu_grid(c, a.n), UDNN_GPU_BLOCK, 0, c->stream>>>(a);
    }
}

/* Pass 3 (or inference's only pass) over x, dy (backward) and out, from
 * the coefficients that bn_statistics or bn_infer left at the start of
 * scratch; or, with `fuse` (inference), computing them itself where every
 * tensor is dense in one layout and their table fits in shared memory.
 * Returns NOT_SUPPORTED, launching nothing, when asked to fuse where it
 * cannot. */
template <class T, bool BWD>
static udnnStatus_t bn_apply(const udnn_gpu_context *c, const udnn_bn_problem *p,
                             const bn_geom *g, bool fuse = false)
{
    typedef typename bn_acc<T, BWD>::A C;
    const udnn_tensor *out = BWD ? &p->dx : &p->y;
    const udnn_tensor *ts[3] = {out, &p->x, &p->dy};
    bn_apply_args<T, C> a;
    memset(&a, 0, sizeof a);
    a.x = (const T *)p->x_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.out = (T *)p->out_ptr;
    a.coef = (const C *)c->scratch;
    a.F = g->F;
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    a.n = g->F * g->M;
    a.fs = g->fs;
    a.ms = g->ms;
    a.feature_inner = g->fs.nd > 0 && g->fs.st[S_X][g->fs.nd - 1] == 1;
    const bool dense = bn_dense_div(p, ts, BWD ? 3 : 2, g, &a.div) != 0;
    if (dense) {
        const int64_t V = 16 / sizeof(T);
        a.vec = udnn_gpu_aligned16(a.x) && udnn_gpu_aligned16(a.out) &&
                (!BWD || udnn_gpu_aligned16(a.dy)) &&
                (a.div % V == 0 || (a.div == 1 && g->F % V == 0));
    }
    if (fuse) {
        if constexpr (BWD) {
            return UDNN_STATUS_NOT_SUPPORTED;
        } else {
            if (!dense || (size_t)BN_NCOEF * g->F * sizeof(C) > BN_FUSE_TABLE)
                return UDNN_STATUS_NOT_SUPPORTED;
            a.side = bn_side_of<T>(p);
            if (bn_small(a.n)) bn_launch_apply<T, uint32_t, false, true>(c, a, true);
            else bn_launch_apply<T, int64_t, false, true>(c, a, true);
            return udnn_gpu_launched();
        }
    }
    if (bn_small(a.n)) bn_launch_apply<T, uint32_t, BWD, false>(c, a, dense);
    else bn_launch_apply<T, int64_t, BWD, false>(c, a, dense);
    return udnn_gpu_launched();
}

/* The fallback for every op: one thread per feature. */
template <class T, int MODE>
static udnnStatus_t bn_run_fused(const udnn_gpu_context *c, const udnn_bn_problem *p,
                                 const bn_geom *g)
{
    bn_fused_args<T> a;
    memset(&a, 0, sizeof a);
    a.fs = g->fs;
    a.ms = g->ms;
    a.F = g->F;
    a.M = g->M;
    a.x = (const T *)p->x_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.out = (T *)p->out_ptr;
    a.alpha = p->alpha;
    a.beta = p->beta;
    a.side = bn_side_of<T>(p);
    if (bn_small(g->F * g->M))
        bn_fused<T, uint32_t, MODE><<<udnn_gpu_grid(c, g->F), UDNN_GPU_BLOCK, 0, c->stream>>>(a);
    else
        bn_fused<T, int64_t, MODE><<<udnn_gpu_grid(c, g->F), UDNN_GPU_BLOCK, 0, c->stream>>>(a);
    return udnn_gpu_launched();
}

/* Whether pass 1 may read members 16 bytes at a time: the last member dim
 * is contiguous in x (and dy) and a whole number of vectors, and every
 * other step of a feature or member lands on a vector boundary of aligned
 * buffers. */
static int bn_vector_members(const bn_geom *g, const void *x, const void *dy, size_t elem)
{
    const int64_t V = (int64_t)(16 / elem);
    const bn_space *ms = &g->ms, *fs = &g->fs;
    if (ms->nd < 1 || ms->dim[ms->nd - 1] % V != 0) return 0;
    const int slots[2] = {S_X, S_DY};
    const void *ptrs[2] = {x, dy};
    for (int i = 0; i < 2; i++) {
        if (ptrs[i] == NULL) continue;
        const int t = slots[i];
        if (!udnn_gpu_aligned16(ptrs[i]) || ms->st[t][ms->nd - 1] != 1) return 0;
        for (int d = 0; d < ms->nd - 1; d++)
            if (ms->st[t][d] % V != 0) return 0;
        for (int d = 0; d < fs->nd; d++)
            if (fs->st[t][d] % V != 0) return 0;
    }
    return 1;
}

/* Passes 1 and 2 for K sums; the coefficients land at the start of
 * scratch. Returns NOT_SUPPORTED (before launching anything) when scratch
 * is too small, for the caller's fallback. */
template <class T, int K, bool BWD>
static udnnStatus_t bn_statistics(const udnn_gpu_context *c, const udnn_bn_problem *p,
                                  const bn_geom *g)
{
    typedef typename bn_acc<T, BWD>::A C;
    typedef typename bn_sum<T>::S S;
    const size_t coef_bytes = udnn_gpu_align256((size_t)BN_NCOEF * g->F * sizeof(C));
    const size_t shift_bytes = udnn_gpu_align256((size_t)g->F * sizeof(S));
    /* pass 1 walks items: single members, or 16-byte vectors of them (with
     * 32-bit indices only: the 64-bit kernel reads one member per item) */
    bn_geom items = *g;
    const int vec = bn_small(g->F * g->M) &&
                    bn_vector_members(g, p->x_ptr, BWD ? p->dy_ptr : NULL, sizeof(T));
    if (vec) {
        const int V = 16 / sizeof(T), last = g->ms.nd - 1;
        items.ms.dim[last] /= V;
        for (int t = 0; t < BN_SLOTS; t++) items.ms.st[t][last] *= V;
        items.M = g->M / V;
        items.ms.size = items.M;
    }
    bn_plan pl;
    if (!bn_plan_reduce(c, &items, K, sizeof(S), coef_bytes + shift_bytes, &pl))
        return UDNN_STATUS_NOT_SUPPORTED;
    char *scratch = (char *)c->scratch;
    bn_reduce_args<T, S> r;
    memset(&r, 0, sizeof r);
    r.fs = items.fs;
    r.ms = items.ms;
    r.F = items.F;
    r.M = items.M;
    r.chunk = pl.chunk;
    r.x = (const T *)p->x_ptr;
    r.dy = (const T *)p->dy_ptr;
    r.saved_mean = BWD ? (const typename bn_param<T>::P *)p->saved_mean_ptr : NULL;
    r.shift = (S *)(scratch + coef_bytes);
    r.partial = (S *)(scratch + coef_bytes + shift_bytes);
    const dim3 block((unsigned)pl.ft, (unsigned)pl.by);
    const dim3 grid((unsigned)((g->F + pl.ft - 1) / pl.ft), (unsigned)pl.splits);
    const int V = 16 / sizeof(T);
    if (!bn_small(g->F * g->M)) bn_reduce<T, int64_t, K, BWD, 1><<<grid, block, 0, c->stream>>>(r);
    else if (vec) bn_reduce<T, uint32_t, K, BWD, V><<<grid, block, 0, c->stream>>>(r);
    else bn_reduce<T, uint32_t, K, BWD, 1><<<grid, block, 0, c->stream>>>(r);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS) return st;

    bn_finalize_args<T, C> f;
    memset(&f, 0, sizeof f);
    f.fs = g->fs;
    f.F = g->F;
    f.M = g->M; /* members, not items */
    f.splits = pl.splits;
    f.partial = r.partial;
    f.shift = r.shift;
    f.coef = (C *)scratch;
    f.side = bn_side_of<T>(p);
    const dim3 fblock(BN_FIN_LANES, BN_FIN_ROWS);
    const unsigned fgrid = (unsigned)((g->F + BN_FIN_ROWS - 1) / BN_FIN_ROWS);
    bn_finalize<T, K, BWD><<<fgrid, fblock, 0, c->stream>>>(f);
    return udnn_gpu_launched();
}

/* Scratch for bn_flow and bn_keep: the counters (cleared before the
 * launch), the coefficients and the partials; false where they do not
 * fit. */
template <class T, int K, bool BWD, bool ROWS, int W>
static bool bn_flow_scratch(const udnn_gpu_context *c,
                            bn_flow_args<T, typename bn_acc<T, BWD>::A> &a, int64_t groups,
                            size_t *counters)
{
    typedef typename bn_acc<T, BWD>::A C;
    typedef bn_flow_lanes<T, ROWS, W> G;
    *counters = udnn_gpu_align256((size_t)(1 + 2 * groups) * sizeof(uint32_t));
    const size_t coef = udnn_gpu_align256((size_t)BN_NCOEF * a.F * sizeof(C));
    const size_t partial = (size_t)a.NR * K * G::FG * sizeof(double);
    if (*counters + coef + partial > c->scratch_bytes) return false;
    char *scratch = (char *)c->scratch;
    a.ticket = (uint32_t *)scratch;
    a.done = a.ticket + 1;
    a.ready = a.done + groups;
    a.coef = (C *)(scratch + *counters);
    a.partial = (double *)(scratch + *counters + coef);
    return true;
}

/* bn_keep where `keep` and each group's items fit in the resident
 * blocks, else bn_flow where `flow`; NOT_SUPPORTED, launching nothing,
 * where neither runs, the partials do not fit in scratch or the items in
 * 32 bits (bn_keep's partials are never more than bn_flow's: its items
 * are larger). */
template <class T, int K, bool BWD, bool ROWS, int W>
static udnnStatus_t bn_flow_go(const udnn_gpu_context *c,
                               bn_flow_args<T, typename bn_acc<T, BWD>::A> a, bool keep,
                               bool flow)
{
    typedef bn_flow_lanes<T, ROWS, W> G;
    const int64_t groups = ROWS ? (a.F + G::FG - 1) / G::FG : a.F;
    typedef bn_keep_loads<T, BWD, ROWS, W> L;
    static int keep_occupancy, flow_occupancy, keep_shared;
    /* bn_flow where the held loads' shared memory is refused */
    keep = keep && udnn_gpu_allow_shared(bn_keep<T, K, BWD, ROWS, W>, L::SHARED, &keep_shared);
    const int64_t keep_grid =
        keep ? c->sm_count * udnn_gpu_occupancy(bn_keep<T, K, BWD, ROWS, W>, UDNN_GPU_BLOCK,
                                                L::SHARED, &keep_occupancy)
             : 0;
    const int64_t keep_chunk = (int64_t)G::STEP * (L::U + L::H);
    const int64_t keep_S = (a.loads + keep_chunk - 1) / keep_chunk;
    keep = keep && keep_S <= keep_grid;
    if (keep) {
        /* slices of equal size, so that a group's items end together */
        const int64_t per_thread = (a.loads + keep_S * G::STEP - 1) / (keep_S * G::STEP);
        a.chunk = per_thread * G::STEP;
    } else {
        if (!flow) return UDNN_STATUS_NOT_SUPPORTED;
        a.chunk = (int64_t)G::STEP * BN_FLOW_LOADS;
    }
    const int64_t S = (a.loads + a.chunk - 1) / a.chunk, NR = groups * S;
    if (NR >= ((int64_t)1 << 30)) return UDNN_STATUS_NOT_SUPPORTED;
    a.S = (uint32_t)S;
    a.NR = (uint32_t)NR;
    size_t counters;
    if (!bn_flow_scratch<T, K, BWD, ROWS, W>(c, a, groups, &counters))
        return UDNN_STATUS_NOT_SUPPORTED;
    udnnGpuError_t e = udnnGpuMemsetAsync(a.ticket, 0, counters, c->stream);
    if (e != udnnGpuSuccess)
        return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED, "clearing batch norm's counters");
    if (keep) {
        const int64_t blocks = keep_grid < NR ? keep_grid : NR;
        void *args[] = {&a};
        e = udnnGpuLaunchCooperativeKernel(bn_keep<T, K, BWD, ROWS, W>, (unsigned)blocks,
                                           UDNN_GPU_BLOCK, args, L::SHARED, c->stream);
        if (e != udnnGpuSuccess)
            return udnn_gpu_fail(e, UDNN_STATUS_EXECUTION_FAILED,
                                 "launching batch norm's one-read kernel");
        return UDNN_STATUS_SUCCESS;
    }
    int64_t per_sm =
        udnn_gpu_occupancy(bn_flow<T, K, BWD, ROWS, W>, UDNN_GPU_BLOCK, 0, &flow_occupancy);
    if (per_sm > BN_FLOW_BLOCKS) per_sm = BN_FLOW_BLOCKS;
    const int64_t resident = c->sm_count * per_sm;
    const int64_t lag = S + resident * BN_FLOW_LAG;
    a.lag = (uint32_t)(lag < NR ? lag : NR);
    const int64_t blocks = resident < 2 * NR ? resident : 2 * NR;
    bn_flow<T, K, BWD, ROWS, W><<<(unsigned)blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(a);
    return udnn_gpu_launched();
}

/* Training (K = 2, !BWD) or backward in one launch (bn_flow), where the
 * mode is spatial and every tensor is dense in one layout; NOT_SUPPORTED,
 * launching nothing, elsewhere. 16-byte loads where the pointers are
 * aligned and a run (a row) is a whole number of vectors. */
template <class T, int K, bool BWD>
static udnnStatus_t bn_flow_run(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    typedef typename bn_acc<T, BWD>::A C;
    if (p->mode == UDNN_BATCHNORM_PER_ACTIVATION) return UDNN_STATUS_NOT_SUPPORTED;
    const udnn_tensor *out = BWD ? &p->dx : &p->y;
    const udnn_tensor *ts[3] = {out, &p->x, &p->dy};
    if (!udnn_gpu_same_dense(ts, BWD ? 3 : 2)) return UDNN_STATUS_NOT_SUPPORTED;
    const int64_t total = udnn_gpu_count(&p->x), F = p->x.dims[1];
    if (total == 0) return UDNN_STATUS_NOT_SUPPORTED;
    bn_flow_args<T, C> a;
    memset(&a, 0, sizeof a);
    a.x = (const T *)p->x_ptr;
    a.dy = BWD ? (const T *)p->dy_ptr : NULL;
    a.out = (T *)p->out_ptr;
    a.F = F;
    a.M = total / F;
    a.pstride = p->param.dims[1] > 1 ? p->param.strides[1] : 0;
    a.side = bn_side_of<T>(p);
    a.alpha = (C)p->alpha;
    a.beta = (C)p->beta;
    const int V = 16 / sizeof(T);
    const bool aligned = udnn_gpu_aligned16(p->x_ptr) && udnn_gpu_aligned16(p->out_ptr) &&
                         (!BWD || udnn_gpu_aligned16(p->dy_ptr));
    /* dense: element (o, f, i) of channel f is at (o * F + f) * run + i */
    const int64_t run = F == 1 ? total : p->x.strides[1];
    if (run == 1 && F > 1) {
        /* channels innermost, as measured on the H100 against the three
         * passes (64 x 256 x 56 x 56): bn_keep for 16-bit data (f16 NHWC
         * training 928 against 733 GB/s, backward 889 against 892), not
         * for FLOAT (training 1029 against 1188); bn_flow was slower than
         * both (f16 training 662), so only with BN_FLOW_ROWS */
        const bool keep = BN_KEEP && (BN_KEEP_ROWS_WIDE || sizeof(T) == 2);
        a.loads = a.M; /* rows of F channels */
        if (aligned && F % V == 0)
            return bn_flow_go<T, K, BWD, true, 16 / sizeof(T)>(c, a, keep, BN_FLOW_ROWS);
        return bn_flow_go<T, K, BWD, true, 1>(c, a, keep, BN_FLOW_ROWS);
    }
    const int w = aligned && run % V == 0 ? V : 1;
    a.run = run;
    a.rstep = F * run;
    a.loads = a.M / w;
    if (a.loads >= ((int64_t)1 << 31)) return UDNN_STATUS_NOT_SUPPORTED;
    a.per_run = udnn_gpu_div32_make((uint32_t)(run / w));
    if (w > 1) return bn_flow_go<T, K, BWD, false, 16 / sizeof(T)>(c, a, BN_KEEP, true);
    return bn_flow_go<T, K, BWD, false, 1>(c, a, BN_KEEP, true);
}

template <class T> static udnnStatus_t bn_train(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    udnnStatus_t st = bn_flow_run<T, 2, false>(c, p);
    if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
    const bn_geom g = bn_geometry(p, NULL, &p->y);
    st = bn_statistics<T, 2, false>(c, p, &g);
    if (st == UDNN_STATUS_NOT_SUPPORTED) return bn_run_fused<T, 0>(c, p, &g);
    if (st != UDNN_STATUS_SUCCESS) return st;
    return bn_apply<T, false>(c, p, &g);
}

template <class T> static udnnStatus_t bn_infer(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    typedef typename io<T>::C C;
    const bn_geom g = bn_geometry(p, NULL, &p->y);
    udnnStatus_t st = bn_apply<T, false>(c, p, &g, true);
    if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
    if ((size_t)BN_NCOEF * g.F * sizeof(C) > c->scratch_bytes) return bn_run_fused<T, 1>(c, p, &g);
    bn_finalize_args<T, C> f;
    memset(&f, 0, sizeof f);
    f.fs = g.fs;
    f.F = g.F;
    f.M = g.M;
    f.coef = (C *)c->scratch;
    f.side = bn_side_of<T>(p);
    bn_infer_coef<T><<<udnn_gpu_grid(c, g.F), UDNN_GPU_BLOCK, 0, c->stream>>>(f);
    st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS) return st;
    return bn_apply<T, false>(c, p, &g);
}

template <class T> static udnnStatus_t bn_bwd(const udnn_gpu_context *c, const udnn_bn_problem *p)
{
    udnnStatus_t st = p->saved_mean_ptr != NULL ? bn_flow_run<T, 2, true>(c, p)
                                                : bn_flow_run<T, 4, true>(c, p);
    if (st != UDNN_STATUS_NOT_SUPPORTED) return st;
    const bn_geom g = bn_geometry(p, &p->dy, &p->dx);
    st = p->saved_mean_ptr != NULL ? bn_statistics<T, 2, true>(c, p, &g)
                                   : bn_statistics<T, 4, true>(c, p, &g);
    if (st == UDNN_STATUS_NOT_SUPPORTED) return bn_run_fused<T, 2>(c, p, &g);
    if (st != UDNN_STATUS_SUCCESS) return st;
    return bn_apply<T, true>(c, p, &g);
}

/* ---- solvers ------------------------------------------------------------------------------- */

static int bn_applicable(const void *problem, const char **why)
{
    const udnn_bn_problem *p = (const udnn_bn_problem *)problem;
    const udnnDataType_t want =
        p->x.dtype == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    if (!udnn_gpu_float_type(p->x.dtype) || p->param.dtype != want) {
        *why = "the GPU batch norm takes FLOAT, DOUBLE, HALF and BFLOAT16 data with FLOAT "
               "(DOUBLE for DOUBLE) statistics";
        return 0;
    }
    return 1;
}

UDNN_GPU_TYPED_RUN(bn_fwd_train_run, udnn_bn_problem, x, bn_train)

UDNN_GPU_TYPED_RUN(bn_fwd_infer_run, udnn_bn_problem, x, bn_infer)

UDNN_GPU_TYPED_RUN(bn_bwd_run, udnn_bn_problem, x, bn_bwd)

static const udnn_solver bn_fwd_train_solver = {
    "gpu_bn_fwd_train", UDNN_OP_BN_FWD_TRAIN, -1, 1, bn_applicable, NULL, bn_fwd_train_run,
};
static const udnn_solver bn_fwd_infer_solver = {
    "gpu_bn_fwd_infer", UDNN_OP_BN_FWD_INFER, -1, 1, bn_applicable, NULL, bn_fwd_infer_run,
};
static const udnn_solver bn_bwd_solver = {
    "gpu_bn_bwd", UDNN_OP_BN_BWD, -1, 1, bn_applicable, NULL, bn_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(bn, &bn_fwd_train_solver, &bn_fwd_infer_solver, &bn_bwd_solver);
