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
 * grid, with the second read of x (and dy) from L2 (both in bn_flow.cu;
 * bn.h holds what the two files share). Elsewhere they are three
 * launches:
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
#include "cuda/bn.h"

/* ---- index spaces ------------------------------------------------------------------ */

/* The tensors an index space steps through: x, dy (x's strides again in
 * the forward passes), the output (y or dx) and the parameters (stride 0
 * over members). */
enum { S_X, S_DY, S_OUT, S_P, BN_SLOTS };

/* Dims walked in row-major order with each slot's element strides. */
typedef udnn_gpu_space<BN_SLOTS> bn_space;

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

/* ---- pass 1: partial sums --------------------------------------------------------------- */

/* K sums per feature and split: forward d and d^2 with d = x - shift;
 * backward dy and dy * d, and without saved statistics d and d^2 too. */
template <class T, class C> struct bn_reduce_args {
    bn_space fs, ms;
    int64_t F, M, chunk;
    const T *x, *dy;
    const typename udnn_gpu_param<T>::P *saved_mean; /* the shift when set */
    C *partial;                                      /* [split][K][F] */
    C *shift;                                        /* [F], from split 0 */
};

/* V members of one feature from element offset off (a 16-byte vector when
 * V > 1). */
template <class T, class C, int V>
__device__ __forceinline__ void bn_load(const T *p, int64_t off, C (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = (C)io<T>::ld(p[off]);
    } else {
        const udnn_gpu_vec<T> w = *(const udnn_gpu_vec<T> *)(p + off);
        for (int k = 0; k < V; k++) v[k] = (C)udnn_gpu_pack_ld(w, k);
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
        udnn_gpu_space_offsets<I, BN_SLOTS>(a.fs, (I)f, fo);
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
                    udnn_gpu_space_offsets<I, 2>(a.ms, jj, mo);
                    bn_load<T, C, V>(x, mo[S_X], xv[u]);
                    if constexpr (BWD) bn_load<T, C, V>(dy, mo[S_DY], gv[u]);
                }
            }
#pragma unroll
            for (int u = 0; u < 2; u++)
                if (j + u * by < j1)
                    for (int k = 0; k < V; k++)
                        bn_accumulate<K, BWD>(acc, xv[u][k] - shift, gv[u][k]);
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
    udnn_gpu_space_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
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
        udnn_gpu_space_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
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

/* The vectors a thread of the dense walk loads together before computing
 * any, `step` apart. With the blend chosen per element (where the compiler
 * predicates it, an element pays for both sides: see udnn_gpu_blending)
 * and two vectors a step, the H200 ran inference f16 NHWC 64 x 256 x 56 x
 * 56 at 3418 / 3417 GB/s in bursts, 85% of copy; with the blend chosen
 * once a launch and the stores evict first (bn_store_pack) 3523 / 3533
 * (f32 NCHW 3733 / 3745 to 3760 / 3745); 4 vectors a step 3490 / 3513. */
#ifndef BN_APPLY_U
#define BN_APPLY_U 2
#endif

/* Every tensor dense in one layout: memory offsets shared by all. Each
 * thread takes BN_APPLY_U vectors a step; the blend is chosen once a
 * launch (udnn_gpu_blending). FUSE (inference): the block first computes
 * every feature's coefficients into dynamic shared memory (F of each), as
 * bn_infer_coef would, and needs no launch of its own for them. */
template <class T, class I, bool BWD, bool FUSE>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bn_apply_dense(bn_apply_args<T, typename bn_acc<T, BWD>::A> a)
{
    typedef typename bn_acc<T, BWD>::A C;
    constexpr int V = 16 / sizeof(T), U = BN_APPLY_U;
    const C *coef = a.coef;
    if constexpr (FUSE) {
        extern __shared__ double bn_table[];
        C *t = (C *)bn_table;
        for (int64_t f = threadIdx.x; f < a.F; f += blockDim.x) {
            int64_t fo[BN_SLOTS];
            udnn_gpu_space_offsets<int64_t, BN_SLOTS>(a.fs, f, fo);
            bn_store_coef(t, a.F, f, bn_finish_infer<T>(a.side, fo[S_P]));
        }
        __syncthreads();
        coef = t;
    }
    const I n = (I)a.n, div = (I)a.div, mod = (I)a.F;
    const I nvec = a.vec ? n / V : 0;
    const I step = (I)gridDim.x * blockDim.x, first = (I)blockIdx.x * blockDim.x + threadIdx.x;
    const udnn_gpu_vec<T> *xs = (const udnn_gpu_vec<T> *)a.x, *gs = (const udnn_gpu_vec<T> *)a.dy;
    /* U vectors from jv, each through coefficients that coefs(j, kc) sets
     * (NK of them: one a feature of the vector, or its one feature) */
    auto walk = [&](auto blending, I jv, auto nk, auto coefs) {
        constexpr bool BLEND = decltype(blending)::value;
        constexpr int NK = decltype(nk)::value;
        for (; jv < nvec; jv += U * step) {
            udnn_gpu_vec<T> xv[U], gv[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (jv + u * step < nvec) { /* below 2^31 (or 2^63): nvec + U * step is */
                    xv[u] = xs[jv + u * step];
                    if (BWD) gv[u] = gs[jv + u * step];
                }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (jv + u * step < nvec) {
                    bn_coef<C> kc[NK];
                    coefs(jv + u * step, kc);
                    bn_store_pack<T, BWD, BLEND>(a.out + (int64_t)(jv + u * step) * V, kc, xv[u],
                                                 gv[u], a.alpha, a.beta);
                }
        }
    };
    typedef std::integral_constant<int, V> each;
    typedef std::integral_constant<int, 1> one;
    if (a.hoist) {
        /* NHWC-like: the features repeat every F elements, so a thread's
         * vectors all start at the same feature */
        if (first >= nvec) return;
        const I f0 = (first * V) % mod;
        bn_coef<C> kh[V];
#pragma unroll
        for (int k = 0; k < V; k++) kh[k] = bn_load_coef(coef, a.F, (int64_t)(f0 + k));
        udnn_gpu_blending(a.beta, [&](auto blending) {
            walk(blending, first, each{}, [&](I, bn_coef<C>(&kc)[V]) {
#pragma unroll
                for (int k = 0; k < V; k++) kc[k] = kh[k];
            });
        });
        return; /* n is a multiple of F, so of V: no tail */
    }
    udnn_gpu_blending(a.beta, [&](auto blending) {
        if (div == 1)
            walk(blending, first, each{}, [&](I jv, bn_coef<C>(&kc)[V]) {
                const I f0 = (jv * V) % mod;
#pragma unroll
                for (int k = 0; k < V; k++) kc[k] = bn_load_coef(coef, a.F, (int64_t)(f0 + k));
            });
        else
            walk(blending, first, one{}, [&](I jv, bn_coef<C>(&kc)[1]) {
                kc[0] = bn_load_coef(coef, a.F, (int64_t)((jv * V / div) % mod));
            });
    });
    for (I i = nvec * V + first; i < n; i += step)
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
        udnn_gpu_space_offsets<I, 3>(a.fs, f, fo);
        udnn_gpu_space_offsets<I, 3>(a.ms, j, mo);
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
        udnn_gpu_space_offsets<I, 3>(a.ms, j, mo);
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
        udnn_gpu_space_offsets<I, 2>(a.ms, j, mo);
        const C x = (C)io<T>::ld(a.x[fo[S_X] + mo[S_X]]);
        const C g = BWD ? (C)io<T>::ld(a.dy[fo[S_DY] + mo[S_DY]]) : C(0);
        bn_accumulate<K, BWD>(acc, x - shift, g);
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
        udnn_gpu_space_offsets<I, BN_SLOTS>(a.fs, (I)f, fo);
        if constexpr (MODE == 1)
            bn_fused_write<T, I, false>(a, fo, bn_finish_infer<T>(a.side, fo[S_P]));
        else if constexpr (MODE == 2) bn_fused_stats<T, I, true, 4>(a, fo);
        else bn_fused_stats<T, I, false, 2>(a, fo);
    }
}

/* ---- host side ---------------------------------------------------------------------------- */

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
            static udnn_gpu_cache occupancy;
            const int64_t wave =
                c->sm_count * udnn_gpu_occupancy(c, bn_apply_dense<T, I, BWD, FUSE>,
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
    r.saved_mean = BWD ? (const typename udnn_gpu_param<T>::P *)p->saved_mean_ptr : NULL;
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
