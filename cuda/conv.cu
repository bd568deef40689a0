/* conv.cu - convolution on the GPU, every direction: forward, backward
 * data, backward filter, backward bias and the fused
 * conv-bias-activation, for FLOAT, DOUBLE, HALF and BFLOAT16 (HALF and
 * BFLOAT16 load to float and accumulate in float whatever the compute
 * type, as cpu/ref does in double), any strides, 2-D and 3-D (problems are
 * always n, c, d, h, w), groups, dilation, padding, stride, both modes.
 *
 * Two kernels per direction:
 *  - a tiled implicit GEMM: 64x64 output tiles, 16-deep K slices staged in
 *    shared memory, a 4x4 register tile per thread, the next slice loaded
 *    into registers while the current one is multiplied. Forward and
 *    backward data are one gathered GEMM (rows: output positions, columns:
 *    output channels of the group, K: the (channel, tap) pairs that reach
 *    a row); backward filter is rows: output channels, columns: (input
 *    channel, tap), K: every (n, position) - split across blocks with
 *    partial sums in the context's scratch and a second pass that adds
 *    them in a fixed order.
 *  - a direct kernel for problems with few channels per group (depthwise
 *    and the like), where a 64-wide tile would mostly compute padding: one
 *    thread per output element (forward, backward data) or one block per
 *    filter element (backward filter).
 * The "auto" solvers pick between them; other algo values name one kernel
 * (see the solver table at the end). Every reduction has a fixed order, so
 * every solver is deterministic. No workspace: partial sums use
 * c->scratch, and a problem whose partials do not fit runs unsplit. */
#include "cuda/act.h"

/* ---- geometry ------------------------------------------------------------------- */

/* A problem's sizes and strides as the kernels take them. Spatial arrays
 * are d, h, w; strides are in elements, n, c, d, h, w. */
typedef struct {
    int n, groups, cpg, kpg;      /* batch, groups, input / output channels per group */
    int in[3], out[3], f[3];      /* x, y and filter spatial sizes */
    int pad[3], stride[3], dil[3];
    int flip;                     /* CONVOLUTION mode: tap t reads filter element f - 1 - t */
    int64_t xs[5], ws[5], ys[5];  /* x (dx), w (dw), y (dy) */
} conv_geom;

static conv_geom make_geom(const udnn_conv_problem *p)
{
    conv_geom g;
    memset(&g, 0, sizeof g);
    g.n = (int)p->x.dims[0];
    g.groups = p->groups;
    g.cpg = (int)p->w.dims[1];
    g.kpg = (int)(p->w.dims[0] / p->groups);
    for (int d = 0; d < 3; d++) {
        g.in[d] = (int)p->x.dims[2 + d];
        g.out[d] = (int)p->y.dims[2 + d];
        g.f[d] = (int)p->w.dims[2 + d];
        g.pad[d] = p->pad[d];
        g.stride[d] = p->stride[d];
        g.dil[d] = p->dilation[d];
    }
    g.flip = p->mode == UDNN_CONVOLUTION;
    for (int i = 0; i < 5; i++) {
        g.xs[i] = p->x.strides[i];
        g.ws[i] = p->w.strides[i];
        g.ys[i] = p->y.strides[i];
    }
    return g;
}

static int64_t taps_of(const conv_geom &g)
{
    return (int64_t)g.f[0] * g.f[1] * g.f[2];
}

static int64_t out_positions(const conv_geom &g)
{
    return (int64_t)g.out[0] * g.out[1] * g.out[2];
}

static int64_t in_positions(const conv_geom &g)
{
    return (int64_t)g.in[0] * g.in[1] * g.in[2];
}

/* Filter tap index -> (t, r, s) and the filter element it multiplies. */
__device__ __forceinline__ void split_tap(int tap, const int f[3], int flip, int t[3], int fi[3])
{
    const int rs = f[1] * f[2];
    t[0] = tap / rs;
    const int rem = tap - t[0] * rs;
    t[1] = rem / f[2];
    t[2] = rem - t[1] * f[2];
    for (int d = 0; d < 3; d++) fi[d] = flip ? f[d] - 1 - t[d] : t[d];
}

/* Row-major position index -> (p0, p1, p2) within sizes sz; returns the
 * index of the outer dims (n, or n and a channel). I is int where the
 * index fits, so that the divisions are 32-bit ones. */
template <class I>
__device__ __forceinline__ I split_pos(I i, const int sz[3], int p[3])
{
    I q = i / sz[2];
    p[2] = (int)(i - q * sz[2]);
    I q2 = q / sz[1];
    p[1] = (int)(q - q2 * sz[1]);
    q = q2 / sz[0];
    p[0] = (int)(q2 - q * sz[0]);
    return q;
}

/* ---- output blending and the fused epilogue --------------------------------------- */

/* What happens to a finished sum: out = alpha*acc + beta*out, or, fused,
 * out = act(alpha*acc + alpha2*z + bias[channel]). out is read only when
 * beta != 0 and never when fused; z only when alpha2 != 0. */
template <class T> struct epilogue {
    typedef typename io<T>::C C;
    C alpha, beta;
    int fused;
    C alpha2;
    const T *z;
    int64_t zs[5];
    const T *bias;
    int64_t bias_stride;
    act_args act;
};

template <class T>
__device__ __forceinline__ void put(const epilogue<T> &e, T *out, int64_t off, int64_t zoff,
                                    int64_t ch, typename io<T>::C acc)
{
    typedef typename io<T>::C C;
    C v = e.alpha * acc;
    if (e.fused) {
        if (e.alpha2 != C(0)) v += e.alpha2 * io<T>::ld(e.z[zoff]);
        v += io<T>::ld(e.bias[ch * e.bias_stride]);
        v = act_f<C>(e.act, v);
    } else if (e.beta != C(0)) {
        v = udnn_gpu_blend(acc, e.alpha, e.beta, (C)io<T>::ld(out[off]));
    }
    out[off] = io<T>::st(v);
}

template <class T> static epilogue<T> blend_epilogue(double alpha, double beta)
{
    typedef typename io<T>::C C;
    epilogue<T> e;
    memset(&e, 0, sizeof e);
    e.alpha = (C)alpha;
    e.beta = (C)beta;
    return e;
}

template <class T> static epilogue<T> fused_epilogue(const udnn_conv_problem *p)
{
    typedef typename io<T>::C C;
    epilogue<T> e = blend_epilogue<T>(p->alpha, 0.0);
    e.fused = 1;
    e.alpha2 = (C)p->alpha2;
    e.z = (const T *)p->z_ptr;
    for (int i = 0; i < 5; i++) e.zs[i] = p->z.strides[i];
    e.bias = (const T *)p->bias_ptr;
    e.bias_stride = p->bias.strides[1];
    e.act = udnn_gpu_act_args(&p->act);
    return e;
}

/* ---- tiled implicit GEMM: forward and backward data ---------------------------------- */

#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define TILE_PAD 4 /* keeps rows 16-byte aligned and spreads banks */
#define TILE_THREADS 256

/* The gathered GEMM of one group, out[m][col] = sum over kk of
 * A[m][kk] * B[kk][col]:
 *  forward:       m = (n, y position), col = output channel, kk = (input
 *                 channel, tap); A = x at o*stride - pad + tap*dil, B = w.
 *  backward data: m = (n, x position), col = input channel, kk = (output
 *                 channel, tap); A = dy at (p + pad - tap*dil) / stride
 *                 where that divides and lands inside dy, B = w.
 * kk runs channel-major, or tap-major with the channel innermost
 * (chan_inner) when A's channel stride is its smallest (NHWC), so that
 * neighbouring kk are neighbours in memory. */
typedef struct {
    int64_t as[5];     /* A (x or dy) strides */
    int64_t os[5];     /* the output's (y or dx) strides */
    int64_t m_count;   /* rows: n * output positions */
    int abound[3];     /* A's spatial sizes */
    int opos[3];       /* the output's spatial sizes, which rows walk */
    int f[3], pad[3], stride[3], dil[3];
    int flip, groups;
    int cols;          /* output channels per group */
    int kc;            /* A channels per group */
    int taps, k_len;   /* filter taps; kc * taps */
    int chan_inner;    /* kk = tap * kc + channel, else channel * taps + tap */
    int a_kfast;       /* neighbouring threads load neighbouring kk of A (else m) */
    int64_t b_col;     /* w stride per output column */
    int64_t b_ch;      /* w stride per A channel */
    int64_t b_group;   /* w offset per group */
    int64_t w_sp[3];   /* w spatial strides */
} gather_view;

static gather_view make_gather_view(const conv_geom &g, bool bwd)
{
    gather_view v;
    memset(&v, 0, sizeof v);
    for (int i = 0; i < 5; i++) {
        v.as[i] = bwd ? g.ys[i] : g.xs[i];
        v.os[i] = bwd ? g.xs[i] : g.ys[i];
    }
    for (int d = 0; d < 3; d++) {
        v.abound[d] = bwd ? g.out[d] : g.in[d];
        v.opos[d] = bwd ? g.in[d] : g.out[d];
        v.f[d] = g.f[d];
        v.pad[d] = g.pad[d];
        v.stride[d] = g.stride[d];
        v.dil[d] = g.dil[d];
        v.w_sp[d] = g.ws[2 + d];
    }
    v.m_count = (int64_t)g.n * (bwd ? in_positions(g) : out_positions(g));
    v.flip = g.flip;
    v.groups = g.groups;
    v.cols = bwd ? g.cpg : g.kpg;
    v.kc = bwd ? g.kpg : g.cpg;
    v.taps = (int)taps_of(g);
    v.k_len = v.kc * v.taps;
    v.chan_inner = v.as[1] < v.as[4];
    v.a_kfast = v.chan_inner;
    v.b_col = bwd ? g.ws[1] : g.ws[0];
    v.b_ch = bwd ? g.ws[0] : g.ws[1];
    v.b_group = (int64_t)g.kpg * g.ws[0];
    return v;
}

/* Shared state of a gathered-GEMM block. Row tables are filled once per
 * group, the K table once per slice (two copies: one in use, one being
 * filled for the next slice). row_a < 0 and kt_a < 0 mark rows and kk
 * past the end. */
template <class C> struct gather_smem {
    C a[TILE_K][TILE_M + TILE_PAD];
    C b[TILE_K][TILE_N + TILE_PAD];
    int64_t row_a[TILE_M], row_o[TILE_M], row_z[TILE_M];
    int row_c[3][TILE_M];
    int64_t kt_a[2][TILE_K], kt_b[2][TILE_K];
    int kt_d[2][3][TILE_K];
};

/* Row mm of the tile: m -> (n, position); A's base offset and the
 * coordinates its taps start from; the output's (and z's) offsets. */
template <class T, bool BWD, class S>
__device__ void gather_row(const gather_view &v, const epilogue<T> &e, int g, int64_t m, int mm,
                           S &sm)
{
    if (m >= v.m_count) {
        sm.row_a[mm] = -1;
        return;
    }
    int p[3];
    const int64_t n = split_pos<int64_t>(m, v.opos, p);
    sm.row_a[mm] = n * v.as[0] + (int64_t)g * v.kc * v.as[1];
    const int64_t ch = (int64_t)g * v.cols;
    int64_t o = n * v.os[0] + ch * v.os[1], z = n * e.zs[0] + ch * e.zs[1];
    for (int d = 0; d < 3; d++) {
        o += p[d] * v.os[2 + d];
        z += p[d] * e.zs[2 + d];
        sm.row_c[d][mm] = BWD ? p[d] + v.pad[d] : p[d] * v.stride[d] - v.pad[d];
    }
    sm.row_o[mm] = o;
    sm.row_z[mm] = z;
}

/* K-table entry kk for kk_global: A's channel offset, tap * dilation per
 * dim, and w's offset (less the column and group parts). */
template <class S>
__device__ void gather_k(const gather_view &v, int kg, int buf, int kk, S &sm)
{
    if (kg >= v.k_len) {
        sm.kt_a[buf][kk] = -1;
        return;
    }
    int ch, tap;
    if (v.chan_inner) {
        tap = kg / v.kc;
        ch = kg - tap * v.kc;
    } else {
        ch = kg / v.taps;
        tap = kg - ch * v.taps;
    }
    int t[3], fi[3];
    split_tap(tap, v.f, v.flip, t, fi);
    int64_t b = ch * v.b_ch;
    for (int d = 0; d < 3; d++) {
        sm.kt_d[buf][d][kk] = t[d] * v.dil[d];
        b += fi[d] * v.w_sp[d];
    }
    sm.kt_a[buf][kk] = ch * v.as[1];
    sm.kt_b[buf][kk] = b;
}

/* A[mm][kk]: forward reads x at base + tap*dil; backward data reads dy at
 * (base - tap*dil) / stride when that divides and lies inside dy. 0 in
 * the padding, between strides and past the ends. */
template <class T, bool BWD, class S>
__device__ __forceinline__ typename io<T>::C gather_a(const gather_view &v, const T *a, int mm,
                                                      int kk, int buf, const S &sm)
{
    typedef typename io<T>::C C;
    const int64_t rb = sm.row_a[mm], kb = sm.kt_a[buf][kk];
    if (rb < 0 || kb < 0) return C(0);
    int64_t off = rb + kb;
    for (int d = 0; d < 3; d++) {
        int c;
        if (!BWD) {
            c = sm.row_c[d][mm] + sm.kt_d[buf][d][kk];
        } else {
            const int num = sm.row_c[d][mm] - sm.kt_d[buf][d][kk], s = v.stride[d];
            if (num < 0) return C(0);
            c = num;
            if (s != 1) {
                c = num / s;
                if (c * s != num) return C(0);
            }
        }
        if ((unsigned)c >= (unsigned)v.abound[d]) return C(0);
        off += c * v.as[2 + d];
    }
    return io<T>::ld(a[off]);
}

/* B[kk][cc] = w(group's channel, ...) for column n0 + cc. */
template <class T, class S>
__device__ __forceinline__ typename io<T>::C gather_b(const gather_view &v, const T *w, int g,
                                                      int col, int kk, int buf, const S &sm)
{
    typedef typename io<T>::C C;
    if (col >= v.cols || sm.kt_a[buf][kk] < 0) return C(0);
    return io<T>::ld(w[g * v.b_group + col * v.b_col + sm.kt_b[buf][kk]]);
}

/* This thread's 4 elements of A and of B for the slice of table buf. */
template <class T, bool BWD, class S>
__device__ __forceinline__ void gather_load(const gather_view &v, const T *a, const T *w, int g,
                                            int n0, int buf, const S &sm,
                                            typename io<T>::C ra[4], typename io<T>::C rb[4])
{
    const int tid = threadIdx.x;
    for (int e = 0; e < 4; e++) {
        const int mm = v.a_kfast ? tid / TILE_K + 16 * e : tid % TILE_M;
        const int kk = v.a_kfast ? tid % TILE_K : tid / TILE_M + 4 * e;
        ra[e] = gather_a<T, BWD>(v, a, mm, kk, buf, sm);
        rb[e] = gather_b<T>(v, w, g, n0 + tid / TILE_K + 16 * e, tid % TILE_K, buf, sm);
    }
}

template <class T, class S>
__device__ __forceinline__ void gather_store(const gather_view &v, const typename io<T>::C ra[4],
                                             const typename io<T>::C rb[4], S &sm)
{
    const int tid = threadIdx.x;
    for (int e = 0; e < 4; e++) {
        const int mm = v.a_kfast ? tid / TILE_K + 16 * e : tid % TILE_M;
        const int kk = v.a_kfast ? tid % TILE_K : tid / TILE_M + 4 * e;
        sm.a[kk][mm] = ra[e];
        sm.b[tid % TILE_K][tid / TILE_K + 16 * e] = rb[e];
    }
}

/* acc[i][j] += sum over the slice of a[k][ty*4 + i] * b[k][tx*4 + j] */
template <class C, class S>
__device__ __forceinline__ void tile_multiply(const S &sm, int ty, int tx, C acc[4][4])
{
#pragma unroll
    for (int k = 0; k < TILE_K; k++) {
        C av[4], bv[4];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            av[i] = sm.a[k][ty * 4 + i];
            bv[i] = sm.b[k][tx * 4 + i];
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
    }
}

/* One block: a TILE_M x TILE_N tile of one group's output (blockIdx.x:
 * rows, blockIdx.y: columns, blockIdx.z: groups, looping when there are
 * more groups than grid.z). */
template <class T, bool BWD>
__global__ void __launch_bounds__(TILE_THREADS)
    gather_gemm(gather_view v, const T *a, const T *w, T *out, epilogue<T> e)
{
    typedef typename io<T>::C C;
    __shared__ __align__(16) gather_smem<C> sm;
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int64_t m0 = (int64_t)blockIdx.x * TILE_M;
    const int n0 = blockIdx.y * TILE_N;
    for (int g = blockIdx.z; g < v.groups; g += gridDim.z) {
        __syncthreads(); /* the previous group's epilogue is done with the tables */
        if (tid < TILE_M) gather_row<T, BWD>(v, e, g, m0 + tid, tid, sm);
        if (tid < TILE_K) gather_k(v, tid, 0, tid, sm);
        __syncthreads();
        C ra[4], rb[4], acc[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) acc[i][j] = C(0);
        gather_load<T, BWD>(v, a, w, g, n0, 0, sm, ra, rb);
        int buf = 0;
        for (int k0 = 0; k0 < v.k_len; k0 += TILE_K, buf ^= 1) {
            const bool more = k0 + TILE_K < v.k_len;
            gather_store<T>(v, ra, rb, sm);
            if (tid < TILE_K && more) gather_k(v, k0 + TILE_K + tid, buf ^ 1, tid, sm);
            __syncthreads();
            if (more) gather_load<T, BWD>(v, a, w, g, n0, buf ^ 1, sm, ra, rb);
            tile_multiply<C>(sm, ty, tx, acc);
            __syncthreads();
        }
        for (int i = 0; i < 4; i++) {
            const int mm = ty * 4 + i;
            if (sm.row_a[mm] < 0) continue;
            for (int j = 0; j < 4; j++) {
                const int col = n0 + tx * 4 + j;
                if (col >= v.cols) continue;
                put<T>(e, out, sm.row_o[mm] + col * v.os[1], sm.row_z[mm] + col * e.zs[1],
                       (int64_t)g * v.cols + col, acc[i][j]);
            }
        }
    }
}

template <class T, bool BWD>
static udnnStatus_t launch_gather_gemm(const udnn_gpu_context *c, const conv_geom &g, const T *a,
                                       const T *w, T *out, const epilogue<T> &e)
{
    const gather_view v = make_gather_view(g, BWD);
    if (v.m_count == 0 || v.cols == 0) return UDNN_STATUS_SUCCESS;
    dim3 grid((unsigned)((v.m_count + TILE_M - 1) / TILE_M),
              (unsigned)((v.cols + TILE_N - 1) / TILE_N),
              (unsigned)(v.groups < 65535 ? v.groups : 65535));
    gather_gemm<T, BWD><<<grid, TILE_THREADS, 0, c->stream>>>(v, a, w, out, e);
    return udnn_gpu_launched();
}

/* ---- direct kernels: forward and backward data ----------------------------------------- */

/* Index math in 32 bits below this many items (with room for a grid
 * stride past the end), else 64. */
#define SMALL_INDEX ((int64_t)1 << 30)

#define GRID_STRIDE_LOOP_I(I, i, n)                                                                \
    for (I i = (I)blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += (I)gridDim.x * blockDim.x)

/* One thread per y element (n, k, o): the sum over the group's input
 * channels and the taps that land inside x. */
template <class T, class I>
__global__ void direct_fwd(conv_geom g, I count, const T *x, const T *w, T *y, epilogue<T> e)
{
    typedef typename io<T>::C C;
    const int kall = g.groups * g.kpg;
    GRID_STRIDE_LOOP_I(I, i, count)
    {
        int o[3];
        const I nk = split_pos<I>(i, g.out, o);
        const I n = nk / kall;
        const int k = (int)(nk - n * kall), grp = k / g.kpg;
        const T *xb = x + (int64_t)n * g.xs[0] + (int64_t)grp * g.cpg * g.xs[1];
        const T *wb = w + k * g.ws[0];
        C acc = C(0);
        for (int t0 = 0; t0 < g.f[0]; t0++) {
            const int i0 = o[0] * g.stride[0] - g.pad[0] + t0 * g.dil[0];
            if ((unsigned)i0 >= (unsigned)g.in[0]) continue;
            const int f0 = g.flip ? g.f[0] - 1 - t0 : t0;
            for (int t1 = 0; t1 < g.f[1]; t1++) {
                const int i1 = o[1] * g.stride[1] - g.pad[1] + t1 * g.dil[1];
                if ((unsigned)i1 >= (unsigned)g.in[1]) continue;
                const int f1 = g.flip ? g.f[1] - 1 - t1 : t1;
                for (int t2 = 0; t2 < g.f[2]; t2++) {
                    const int i2 = o[2] * g.stride[2] - g.pad[2] + t2 * g.dil[2];
                    if ((unsigned)i2 >= (unsigned)g.in[2]) continue;
                    const int f2 = g.flip ? g.f[2] - 1 - t2 : t2;
                    const T *xp = xb + i0 * g.xs[2] + i1 * g.xs[3] + i2 * g.xs[4];
                    const T *wp = wb + f0 * g.ws[2] + f1 * g.ws[3] + f2 * g.ws[4];
                    for (int ch = 0; ch < g.cpg; ch++)
                        acc += io<T>::ld(xp[ch * g.xs[1]]) * io<T>::ld(wp[ch * g.ws[1]]);
                }
            }
        }
        int64_t yo = (int64_t)n * g.ys[0] + k * g.ys[1], zo = (int64_t)n * e.zs[0] + k * e.zs[1];
        for (int d = 0; d < 3; d++) {
            yo += o[d] * g.ys[2 + d];
            zo += o[d] * e.zs[2 + d];
        }
        put<T>(e, y, yo, zo, k, acc);
    }
}

/* The y coordinate that x coordinate p reads through tap t in one dim, or
 * -1 when none does (between strides or outside y). */
__device__ __forceinline__ int source_of(int p, int t, int pad, int stride, int dil, int out)
{
    const int num = p + pad - t * dil;
    if (num < 0) return -1;
    const int q = num / stride;
    return q * stride == num && q < out ? q : -1;
}

/* One thread per dx element (n, ci, p): the sum over the group's output
 * channels and the taps whose output position reads p. */
template <class T, class I>
__global__ void direct_bwd_data(conv_geom g, I count, const T *dy, const T *w, T *dx,
                                epilogue<T> e)
{
    typedef typename io<T>::C C;
    const int call = g.groups * g.cpg;
    GRID_STRIDE_LOOP_I(I, i, count)
    {
        int p[3];
        const I nc = split_pos<I>(i, g.in, p);
        const I n = nc / call;
        const int ci = (int)(nc - n * call), grp = ci / g.cpg, c = ci - grp * g.cpg;
        const int64_t k0 = (int64_t)grp * g.kpg;
        const T *yb = dy + (int64_t)n * g.ys[0] + k0 * g.ys[1];
        const T *wb = w + k0 * g.ws[0] + c * g.ws[1];
        C acc = C(0);
        for (int t0 = 0; t0 < g.f[0]; t0++) {
            const int q0 = source_of(p[0], t0, g.pad[0], g.stride[0], g.dil[0], g.out[0]);
            if (q0 < 0) continue;
            const int f0 = g.flip ? g.f[0] - 1 - t0 : t0;
            for (int t1 = 0; t1 < g.f[1]; t1++) {
                const int q1 = source_of(p[1], t1, g.pad[1], g.stride[1], g.dil[1], g.out[1]);
                if (q1 < 0) continue;
                const int f1 = g.flip ? g.f[1] - 1 - t1 : t1;
                for (int t2 = 0; t2 < g.f[2]; t2++) {
                    const int q2 = source_of(p[2], t2, g.pad[2], g.stride[2], g.dil[2], g.out[2]);
                    if (q2 < 0) continue;
                    const int f2 = g.flip ? g.f[2] - 1 - t2 : t2;
                    const T *yp = yb + q0 * g.ys[2] + q1 * g.ys[3] + q2 * g.ys[4];
                    const T *wp = wb + f0 * g.ws[2] + f1 * g.ws[3] + f2 * g.ws[4];
                    for (int k = 0; k < g.kpg; k++)
                        acc += io<T>::ld(yp[k * g.ys[1]]) * io<T>::ld(wp[k * g.ws[0]]);
                }
            }
        }
        int64_t xo = (int64_t)n * g.xs[0] + ci * g.xs[1];
        for (int d = 0; d < 3; d++) xo += p[d] * g.xs[2 + d];
        put<T>(e, dx, xo, 0, ci, acc);
    }
}

/* ---- backward filter ------------------------------------------------------------------ */

/* dw as a GEMM per group: rows m = output channel, columns = (input
 * channel, tap) in the order chan_inner says (as the gathered GEMM), and
 * the reduction over q = (n, y position), cut into `splits` chunks of
 * `chunk` positions. */
typedef struct {
    conv_geom g;
    int64_t q_count;   /* n * y positions */
    int64_t chunk;     /* positions per split, a multiple of TILE_K */
    int splits;
    int cols, taps;    /* cpg * taps; taps */
    int chan_inner;    /* columns tap-major with the channel innermost */
    int a_kfast;       /* neighbouring threads load neighbouring q of dy (else m) */
    int b_kfast;       /* neighbouring threads load neighbouring q of x (else columns) */
} filter_view;

static filter_view make_filter_view(const conv_geom &g, int splits, int64_t chunk)
{
    filter_view v;
    memset(&v, 0, sizeof v);
    v.g = g;
    v.q_count = (int64_t)g.n * out_positions(g);
    v.chunk = chunk;
    v.splits = splits;
    v.taps = (int)taps_of(g);
    v.cols = g.cpg * v.taps;
    v.chan_inner = g.xs[1] < g.xs[4];
    v.a_kfast = !(g.ys[1] < g.ys[4]);
    v.b_kfast = !v.chan_inner;
    return v;
}

/* Column col -> (input channel, tap), and the tap's filter element. */
__device__ __forceinline__ int split_col(const filter_view &v, int col, int t[3], int fi[3])
{
    int ch, tap;
    if (v.chan_inner) {
        tap = col / v.g.cpg;
        ch = col - tap * v.g.cpg;
    } else {
        ch = col / v.taps;
        tap = col - ch * v.taps;
    }
    split_tap(tap, v.g.f, v.g.flip, t, fi);
    return ch;
}

template <class C> struct filter_smem {
    C a[TILE_K][TILE_M + TILE_PAD]; /* dy: [q][m] */
    C b[TILE_K][TILE_N + TILE_PAD]; /* x: [q][col] */
    int64_t row_dy[TILE_M], row_w[TILE_M];
    int64_t col_x[TILE_N], col_w[TILE_N];
    int col_d[3][TILE_N];
    int64_t kt_dy[2][TILE_K], kt_x[2][TILE_K];
    int kt_c[2][3][TILE_K];
};

/* q-table entry kk: dy's offset at (n, o), x's batch offset and the input
 * coordinates o*stride - pad; kt_dy < 0 past the chunk's end. */
template <class S>
__device__ void filter_k(const filter_view &v, int64_t q, int64_t q_end, int buf, int kk, S &sm)
{
    if (q >= q_end) {
        sm.kt_dy[buf][kk] = -1;
        return;
    }
    int o[3];
    const int64_t n = split_pos<int64_t>(q, v.g.out, o);
    int64_t dy = n * v.g.ys[0];
    for (int d = 0; d < 3; d++) {
        dy += o[d] * v.g.ys[2 + d];
        sm.kt_c[buf][d][kk] = o[d] * v.g.stride[d] - v.g.pad[d];
    }
    sm.kt_dy[buf][kk] = dy;
    sm.kt_x[buf][kk] = n * v.g.xs[0];
}

template <class T, class S>
__device__ __forceinline__ void filter_load(const filter_view &v, const T *x, const T *dy, int buf,
                                            const S &sm, typename io<T>::C ra[4],
                                            typename io<T>::C rb[4])
{
    typedef typename io<T>::C C;
    const int tid = threadIdx.x;
    for (int e = 0; e < 4; e++) {
        int mm = v.a_kfast ? tid / TILE_K + 16 * e : tid % TILE_M;
        int kk = v.a_kfast ? tid % TILE_K : tid / TILE_M + 4 * e;
        const int64_t rd = sm.row_dy[mm], kd = sm.kt_dy[buf][kk];
        ra[e] = rd >= 0 && kd >= 0 ? io<T>::ld(dy[rd + kd]) : C(0);

        const int cc = v.b_kfast ? tid / TILE_K + 16 * e : tid % TILE_N;
        kk = v.b_kfast ? tid % TILE_K : tid / TILE_N + 4 * e;
        rb[e] = C(0);
        const int64_t cx = sm.col_x[cc];
        if (cx < 0 || sm.kt_dy[buf][kk] < 0) continue;
        int64_t off = sm.kt_x[buf][kk] + cx;
        bool inside = true;
        for (int d = 0; d < 3; d++) {
            const int c = sm.kt_c[buf][d][kk] + sm.col_d[d][cc];
            inside = inside && (unsigned)c < (unsigned)v.g.in[d];
            off += c * v.g.xs[2 + d];
        }
        if (inside) rb[e] = io<T>::ld(x[off]);
    }
}

template <class T, class S>
__device__ __forceinline__ void filter_store(const filter_view &v, const typename io<T>::C ra[4],
                                             const typename io<T>::C rb[4], S &sm)
{
    const int tid = threadIdx.x;
    for (int e = 0; e < 4; e++) {
        const int mm = v.a_kfast ? tid / TILE_K + 16 * e : tid % TILE_M;
        int kk = v.a_kfast ? tid % TILE_K : tid / TILE_M + 4 * e;
        sm.a[kk][mm] = ra[e];
        const int cc = v.b_kfast ? tid / TILE_K + 16 * e : tid % TILE_N;
        kk = v.b_kfast ? tid % TILE_K : tid / TILE_N + 4 * e;
        sm.b[kk][cc] = rb[e];
    }
}

/* One block: a TILE_M x TILE_N tile of one group's dw (blockIdx.y: rows,
 * blockIdx.x: columns) over one chunk of q (blockIdx.z walks group x
 * split). With one split it blends into dw; else it writes its partial
 * sums to part[split][k][col] for filter_finish. */
template <class T>
__global__ void __launch_bounds__(TILE_THREADS)
    filter_gemm(filter_view v, const T *x, const T *dy, T *dw, typename io<T>::C *part,
                typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    __shared__ __align__(16) filter_smem<C> sm;
    const int tid = threadIdx.x, ty = tid / 16, tx = tid % 16;
    const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
    const int kall = v.g.groups * v.g.kpg;
    for (int gz = blockIdx.z; gz < v.g.groups * v.splits; gz += gridDim.z) {
        const int grp = gz / v.splits, split = gz - grp * v.splits;
        const int64_t q0 = split * v.chunk;
        const int64_t q_end = q0 + v.chunk < v.q_count ? q0 + v.chunk : v.q_count;
        __syncthreads(); /* the previous round's epilogue is done with the tables */
        if (tid < TILE_M) {
            const int m = m0 + tid;
            const int64_t k = (int64_t)grp * v.g.kpg + m;
            sm.row_dy[tid] = m < v.g.kpg ? k * v.g.ys[1] : -1;
            sm.row_w[tid] = k * v.g.ws[0];
        } else if (tid < TILE_M + TILE_N) {
            const int cc = tid - TILE_M, col = n0 + cc;
            if (col < v.cols) {
                int t[3], fi[3];
                const int ch = split_col(v, col, t, fi);
                int64_t wo = ch * v.g.ws[1];
                for (int d = 0; d < 3; d++) {
                    sm.col_d[d][cc] = t[d] * v.g.dil[d];
                    wo += fi[d] * v.g.ws[2 + d];
                }
                sm.col_x[cc] = ((int64_t)grp * v.g.cpg + ch) * v.g.xs[1];
                sm.col_w[cc] = wo;
            } else {
                sm.col_x[cc] = -1;
            }
        } else if (tid < TILE_M + TILE_N + TILE_K) {
            const int kk = tid - TILE_M - TILE_N;
            filter_k(v, q0 + kk, q_end, 0, kk, sm);
        }
        __syncthreads();
        C ra[4], rb[4], acc[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) acc[i][j] = C(0);
        filter_load<T>(v, x, dy, 0, sm, ra, rb);
        int buf = 0;
        for (int64_t k0 = q0; k0 < q_end; k0 += TILE_K, buf ^= 1) {
            const bool more = k0 + TILE_K < q_end;
            filter_store<T>(v, ra, rb, sm);
            if (tid < TILE_K && more) filter_k(v, k0 + TILE_K + tid, q_end, buf ^ 1, tid, sm);
            __syncthreads();
            if (more) filter_load<T>(v, x, dy, buf ^ 1, sm, ra, rb);
            tile_multiply<C>(sm, ty, tx, acc);
            __syncthreads();
        }
        for (int i = 0; i < 4; i++) {
            const int mm = ty * 4 + i;
            if (sm.row_dy[mm] < 0) continue;
            for (int j = 0; j < 4; j++) {
                const int cc = tx * 4 + j;
                if (sm.col_x[cc] < 0) continue;
                if (v.splits > 1) {
                    const int64_t k = (int64_t)grp * v.g.kpg + m0 + mm;
                    part[((int64_t)split * kall + k) * v.cols + n0 + cc] = acc[i][j];
                } else {
                    const int64_t off = sm.row_w[mm] + sm.col_w[cc];
                    udnn_gpu_blend_store(dw + off, acc[i][j], alpha, beta);
                }
            }
        }
    }
}

/* One block per dw element (blockIdx.x: k * cols + col) and split
 * (blockIdx.y): the sum over the chunk's q of dy(n, k, o) * x(n, ci, o *
 * stride - pad + tap * dil), for problems with few channels per group.
 * Blends into dw with one split, else writes part[split][element]. */
template <class T, class I>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    filter_direct(filter_view v, const T *x, const T *dy, T *dw, typename io<T>::C *part,
                  typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    __shared__ C red[UDNN_GPU_BLOCK_SUM_SLOTS];
    const int64_t elem = blockIdx.x;
    const int64_t k = elem / v.cols;
    const int col = (int)(elem - k * v.cols);
    int t[3], fi[3];
    const int ch = split_col(v, col, t, fi);
    const int grp = (int)(k / v.g.kpg);
    const T *xb = x + ((int64_t)grp * v.g.cpg + ch) * v.g.xs[1];
    const T *yb = dy + k * v.g.ys[1];
    const I q0 = (I)(blockIdx.y * v.chunk);
    const I q_end = (I)(q0 + v.chunk < v.q_count ? q0 + v.chunk : v.q_count);
    C acc = C(0);
    for (I q = q0 + threadIdx.x; q < q_end; q += blockDim.x) {
        int o[3];
        const I n = split_pos<I>(q, v.g.out, o);
        int64_t xo = (int64_t)n * v.g.xs[0], yo = (int64_t)n * v.g.ys[0];
        bool inside = true;
        for (int d = 0; d < 3; d++) {
            const int c = o[d] * v.g.stride[d] - v.g.pad[d] + t[d] * v.g.dil[d];
            inside = inside && (unsigned)c < (unsigned)v.g.in[d];
            xo += c * v.g.xs[2 + d];
            yo += o[d] * v.g.ys[2 + d];
        }
        if (inside) acc += io<T>::ld(yb[yo]) * io<T>::ld(xb[xo]);
    }
    acc = udnn_gpu_block_sum(acc, red);
    if (threadIdx.x != 0) return;
    if (v.splits > 1) {
        part[(int64_t)blockIdx.y * gridDim.x + elem] = acc;
        return;
    }
    const int64_t off = k * v.g.ws[0] + ch * v.g.ws[1] + fi[0] * v.g.ws[2] + fi[1] * v.g.ws[3] +
                        fi[2] * v.g.ws[4];
    udnn_gpu_blend_store(dw + off, acc, alpha, beta);
}

/* dw element i = k * cols + col = the splits' partial sums of i, added in
 * split order, blended. */
template <class T>
__global__ void filter_finish(filter_view v, const typename io<T>::C *part, T *dw,
                              typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    const int64_t count = (int64_t)v.g.groups * v.g.kpg * v.cols;
    UDNN_GPU_GRID_STRIDE_LOOP(i, count)
    {
        C acc = C(0);
        for (int s = 0; s < v.splits; s++) acc += part[s * count + i];
        const int64_t k = i / v.cols;
        int t[3], fi[3];
        const int ch = split_col(v, (int)(i - k * v.cols), t, fi);
        const int64_t off = k * v.g.ws[0] + ch * v.g.ws[1] + fi[0] * v.g.ws[2] +
                            fi[1] * v.g.ws[3] + fi[2] * v.g.ws[4];
        udnn_gpu_blend_store(dw + off, acc, alpha, beta);
    }
}

/* How many chunks to cut a reduction of `len` into: enough blocks to give
 * every multiprocessor about four (`blocks` run per chunk), chunks of at
 * least min_len, partials (bytes_per_split each) that fit the scratch.
 * 1 means no split (and no partials). */
static int pick_splits(const udnn_gpu_context *c, int64_t blocks, int64_t len, int64_t min_len,
                       size_t bytes_per_split)
{
    int64_t want = (4 * (int64_t)c->sm_count + blocks - 1) / (blocks > 0 ? blocks : 1);
    const int64_t by_len = len / min_len;
    if (want > by_len) want = by_len;
    if (bytes_per_split > 0 && want > (int64_t)(c->scratch_bytes / bytes_per_split))
        want = (int64_t)(c->scratch_bytes / bytes_per_split);
    if (want > 65535) want = 65535;
    return want < 2 ? 1 : (int)want;
}

/* Cuts len into `splits` chunks of a multiple of `align`, none empty;
 * returns the chunk and updates splits. */
static int64_t chunk_of(int64_t len, int *splits, int64_t align)
{
    int64_t chunk = (len + *splits - 1) / *splits;
    chunk = (chunk + align - 1) / align * align;
    *splits = (int)((len + chunk - 1) / chunk);
    return chunk;
}

template <class T>
static udnnStatus_t launch_filter(const udnn_gpu_context *c, const udnn_conv_problem *p,
                                  bool tiled)
{
    typedef typename io<T>::C C;
    const conv_geom g = make_geom(p);
    const int64_t q_count = (int64_t)g.n * out_positions(g);
    const int64_t cols = (int64_t)g.cpg * taps_of(g), elems = (int64_t)g.groups * g.kpg * cols;
    if (q_count == 0 || elems == 0) return UDNN_STATUS_SUCCESS;
    const T *x = (const T *)p->x_ptr, *dy = (const T *)p->y_ptr;
    T *dw = (T *)p->out_ptr;
    C *part = (C *)c->scratch;
    const C alpha = (C)p->alpha, beta = (C)p->beta;
    const size_t part_bytes = (size_t)elems * sizeof(C);
    int splits;
    filter_view v;
    if (tiled) {
        const int64_t tiles = ((cols + TILE_N - 1) / TILE_N) *
                              ((g.kpg + TILE_M - 1) / TILE_M) * g.groups;
        splits = pick_splits(c, tiles, q_count, 8 * TILE_K, part_bytes);
        v = make_filter_view(g, splits, 0);
        v.chunk = chunk_of(q_count, &splits, TILE_K);
        v.splits = splits;
        const int64_t z = (int64_t)g.groups * splits;
        dim3 grid((unsigned)((cols + TILE_N - 1) / TILE_N),
                  (unsigned)((g.kpg + TILE_M - 1) / TILE_M), (unsigned)(z < 65535 ? z : 65535));
        filter_gemm<T><<<grid, TILE_THREADS, 0, c->stream>>>(v, x, dy, dw, part, alpha, beta);
    } else {
        splits = pick_splits(c, elems, q_count, 4 * UDNN_GPU_BLOCK, part_bytes);
        v = make_filter_view(g, splits, 0);
        v.chunk = chunk_of(q_count, &splits, 1);
        v.splits = splits;
        dim3 grid((unsigned)elems, (unsigned)splits);
        if (q_count < SMALL_INDEX)
            filter_direct<T, int><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(v, x, dy, dw, part, alpha,
                                                                           beta);
        else
            filter_direct<T, int64_t><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(v, x, dy, dw, part,
                                                                               alpha, beta);
    }
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS || splits == 1) return st;
    filter_finish<T><<<udnn_gpu_grid(c, elems), UDNN_GPU_BLOCK, 0, c->stream>>>(v, part, dw,
                                                                               alpha, beta);
    return udnn_gpu_launched();
}

/* ---- backward bias ---------------------------------------------------------------------- */

/* db[k] = alpha * sum over n and positions of dy(n, k, ...) + beta * db[k].
 * A block covers `kb` channels (kb = 32 when the channel is dy's innermost
 * dim, so that a warp reads neighbours; else 1) and one chunk of the
 * (n, position) pairs; its threads add in a fixed order. */
typedef struct {
    int64_t ys[5];
    int sp[3];
    int k, kb, splits;
    int64_t q_count, chunk;
    int64_t db_stride;
} bias_view;

template <class T, class I>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    bias_sum(bias_view v, const T *dy, T *db, typename io<T>::C *part, typename io<T>::C alpha,
             typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    __shared__ C red[UDNN_GPU_BLOCK];
    const int lane = threadIdx.x % v.kb, row = threadIdx.x / v.kb, rows = blockDim.x / v.kb;
    const int k = blockIdx.x * v.kb + lane;
    const I q0 = (I)(blockIdx.y * v.chunk);
    const I q_end = (I)(q0 + v.chunk < v.q_count ? q0 + v.chunk : v.q_count);
    C acc = C(0);
    if (k < v.k)
        for (I q = q0 + row; q < q_end; q += rows) {
            int o[3];
            const I n = split_pos<I>(q, v.sp, o);
            acc += io<T>::ld(dy[(int64_t)n * v.ys[0] + k * v.ys[1] + o[0] * v.ys[2] +
                                o[1] * v.ys[3] + o[2] * v.ys[4]]);
        }
    red[threadIdx.x] = acc;
    __syncthreads();
    if (row != 0 || k >= v.k) return;
    for (int r = 1; r < rows; r++) acc += red[r * v.kb + lane];
    if (v.splits > 1) {
        part[(int64_t)blockIdx.y * v.k + k] = acc;
        return;
    }
    udnn_gpu_blend_store(db + k * v.db_stride, acc, alpha, beta);
}

template <class T>
__global__ void bias_finish(bias_view v, const typename io<T>::C *part, T *db,
                            typename io<T>::C alpha, typename io<T>::C beta)
{
    typedef typename io<T>::C C;
    UDNN_GPU_GRID_STRIDE_LOOP(k, v.k)
    {
        C acc = C(0);
        for (int s = 0; s < v.splits; s++) acc += part[s * v.k + k];
        udnn_gpu_blend_store(db + k * v.db_stride, acc, alpha, beta);
    }
}

template <class T>
static udnnStatus_t launch_bias(const udnn_gpu_context *c, const udnn_conv_bias_problem *p)
{
    typedef typename io<T>::C C;
    bias_view v;
    memset(&v, 0, sizeof v);
    for (int i = 0; i < 5; i++) v.ys[i] = p->dy.strides[i];
    for (int d = 0; d < 3; d++) v.sp[d] = (int)p->dy.dims[2 + d];
    v.k = (int)p->dy.dims[1];
    v.kb = v.ys[1] < v.ys[4] && v.k > 1 ? 32 : 1;
    v.q_count = p->dy.dims[0] * p->dy.dims[2] * p->dy.dims[3] * p->dy.dims[4];
    v.db_stride = p->db.strides[1];
    if (v.k == 0 || v.q_count == 0) return UDNN_STATUS_SUCCESS;
    const int64_t kblocks = (v.k + v.kb - 1) / v.kb;
    v.splits = pick_splits(c, kblocks, v.q_count, 4 * (UDNN_GPU_BLOCK / v.kb),
                           (size_t)v.k * sizeof(C));
    v.chunk = chunk_of(v.q_count, &v.splits, 1);
    C *part = (C *)c->scratch;
    const C alpha = (C)p->alpha, beta = (C)p->beta;
    dim3 grid((unsigned)kblocks, (unsigned)v.splits);
    const T *dy = (const T *)p->dy_ptr;
    T *db = (T *)p->db_ptr;
    if (v.q_count < SMALL_INDEX)
        bias_sum<T, int><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(v, dy, db, part, alpha, beta);
    else
        bias_sum<T, int64_t><<<grid, UDNN_GPU_BLOCK, 0, c->stream>>>(v, dy, db, part, alpha, beta);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS || v.splits == 1) return st;
    bias_finish<T><<<udnn_gpu_grid(c, v.k), UDNN_GPU_BLOCK, 0, c->stream>>>(v, part, db, alpha,
                                                                           beta);
    return udnn_gpu_launched();
}

/* ---- choosing a kernel ------------------------------------------------------------------ */

/* Which kernel a solver runs. AUTO takes the tiled GEMM when the group's
 * columns and rows fill a good part of a 64 x 64 tile, else the direct
 * kernel. */
typedef enum { KERNEL_AUTO, KERNEL_TILED, KERNEL_DIRECT } conv_kernel;

#define TILED_MIN_COLS 16

static bool use_tiled(conv_kernel k, int64_t cols, int64_t rows)
{
    if (k != KERNEL_AUTO) return k == KERNEL_TILED;
    return cols >= TILED_MIN_COLS && rows >= TILED_MIN_COLS;
}

template <class T>
static udnnStatus_t run_forward(const udnn_gpu_context *c, const udnn_conv_problem *p,
                                conv_kernel kernel, const epilogue<T> &e)
{
    const conv_geom g = make_geom(p);
    const T *x = (const T *)p->x_ptr, *w = (const T *)p->w_ptr;
    T *y = (T *)p->out_ptr;
    if (use_tiled(kernel, g.kpg, g.n * out_positions(g)))
        return launch_gather_gemm<T, false>(c, g, x, w, y, e);
    const int64_t count = udnn_gpu_count(&p->y);
    if (count == 0) return UDNN_STATUS_SUCCESS;
    const unsigned blocks = udnn_gpu_grid(c, count);
    if (count < SMALL_INDEX)
        direct_fwd<T, int><<<blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(g, (int)count, x, w, y, e);
    else
        direct_fwd<T, int64_t><<<blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(g, count, x, w, y, e);
    return udnn_gpu_launched();
}

template <class T>
static udnnStatus_t run_bwd_data(const udnn_gpu_context *c, const udnn_conv_problem *p,
                                 conv_kernel kernel)
{
    const conv_geom g = make_geom(p);
    const T *dy = (const T *)p->y_ptr, *w = (const T *)p->w_ptr;
    T *dx = (T *)p->out_ptr;
    const epilogue<T> e = blend_epilogue<T>(p->alpha, p->beta);
    if (use_tiled(kernel, g.cpg, g.n * in_positions(g)))
        return launch_gather_gemm<T, true>(c, g, dy, w, dx, e);
    const int64_t count = udnn_gpu_count(&p->x);
    if (count == 0) return UDNN_STATUS_SUCCESS;
    const unsigned blocks = udnn_gpu_grid(c, count);
    if (count < SMALL_INDEX)
        direct_bwd_data<T, int><<<blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(g, (int)count, dy, w,
                                                                           dx, e);
    else
        direct_bwd_data<T, int64_t><<<blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(g, count, dy, w,
                                                                               dx, e);
    return udnn_gpu_launched();
}

/* ---- solvers ---------------------------------------------------------------------------- */

static int conv_applicable(const void *problem, const char **why)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    if (!udnn_gpu_float_type(p->x.dtype) || p->w.dtype != p->x.dtype ||
        p->y.dtype != p->x.dtype) {
        *why = "the GPU convolution takes FLOAT, DOUBLE, HALF and BFLOAT16, x, w and y alike";
        return 0;
    }
    return 1;
}

static int bias_act_applicable(const void *problem, const char **why)
{
    const udnn_conv_problem *p = (const udnn_conv_problem *)problem;
    if (!conv_applicable(problem, why)) return 0;
    if (p->z.dtype != p->y.dtype || p->bias.dtype != p->y.dtype) {
        *why = "the GPU fused convolution takes z and bias of y's type";
        return 0;
    }
    return 1;
}

static int bias_applicable(const void *problem, const char **why)
{
    const udnn_conv_bias_problem *p = (const udnn_conv_bias_problem *)problem;
    if (!udnn_gpu_float_type(p->dy.dtype) || p->db.dtype != p->dy.dtype) {
        *why = "the GPU backward bias takes FLOAT, DOUBLE, HALF and BFLOAT16, dy and db alike";
        return 0;
    }
    return 1;
}

static udnnStatus_t fwd_with(void *ctx, const void *problem, void *ws, size_t ws_bytes,
                             conv_kernel kernel)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_conv_problem);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype,
                      st = run_forward<T>(c, p, kernel, blend_epilogue<T>(p->alpha, p->beta)));
    return st;
}

static udnnStatus_t bias_act_with(void *ctx, const void *problem, void *ws, size_t ws_bytes,
                                  conv_kernel kernel)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_conv_problem);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, st = run_forward<T>(c, p, kernel, fused_epilogue<T>(p)));
    return st;
}

static udnnStatus_t bwd_data_with(void *ctx, const void *problem, void *ws, size_t ws_bytes,
                                  conv_kernel kernel)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_conv_problem);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, st = run_bwd_data<T>(c, p, kernel));
    return st;
}

static udnnStatus_t bwd_filter_with(void *ctx, const void *problem, void *ws, size_t ws_bytes,
                                    conv_kernel kernel)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_conv_problem);
    const conv_geom g = make_geom(p);
    const bool tiled = use_tiled(kernel, (int64_t)g.cpg * taps_of(g), g.kpg);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->x.dtype, st = launch_filter<T>(c, p, tiled));
    return st;
}

UDNN_GPU_TYPED_RUN(bwd_bias_run, udnn_conv_bias_problem, dy, launch_bias)

#define CONV_RUNNER(name, with, kernel)                                                            \
    static udnnStatus_t name(void *ctx, const void *problem, void *ws, size_t ws_bytes)            \
    {                                                                                              \
        return with(ctx, problem, ws, ws_bytes, kernel);                                           \
    }

CONV_RUNNER(fwd_auto_run, fwd_with, KERNEL_AUTO)
CONV_RUNNER(fwd_tiled_run, fwd_with, KERNEL_TILED)
CONV_RUNNER(fwd_direct_run, fwd_with, KERNEL_DIRECT)
CONV_RUNNER(bias_act_auto_run, bias_act_with, KERNEL_AUTO)
CONV_RUNNER(bias_act_tiled_run, bias_act_with, KERNEL_TILED)
CONV_RUNNER(bias_act_direct_run, bias_act_with, KERNEL_DIRECT)
CONV_RUNNER(bwd_data_auto_run, bwd_data_with, KERNEL_AUTO)
CONV_RUNNER(bwd_data_tiled_run, bwd_data_with, KERNEL_TILED)
CONV_RUNNER(bwd_filter_auto_run, bwd_filter_with, KERNEL_AUTO)
CONV_RUNNER(bwd_filter_tiled_run, bwd_filter_with, KERNEL_TILED)

/* Algo values, fastest first (the order _v7 ranks in): the auto solvers
 * pick the tiled GEMM or the direct kernel per problem; the others name
 * one kernel. IMPLICIT_PRECOMP_GEMM and GEMM are both the tiled GEMM (it
 * precomputes its index tables per tile and needs no workspace); the fused
 * op serves the forward's algo values so that any of them can be passed
 * to it. */
static const udnn_solver fwd_auto = {
    "gpu_conv_fwd_implicit_gemm", UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1,
    conv_applicable, NULL, fwd_auto_run,
};
static const udnn_solver fwd_precomp = {
    "gpu_conv_fwd_precomp_gemm", UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM,
    1, conv_applicable, NULL, fwd_tiled_run,
};
static const udnn_solver fwd_gemm = {
    "gpu_conv_fwd_gemm", UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_GEMM, 1,
    conv_applicable, NULL, fwd_tiled_run,
};
static const udnn_solver fwd_direct = {
    "gpu_conv_fwd_direct", UDNN_OP_CONV_FWD, UDNN_CONVOLUTION_FWD_ALGO_DIRECT, 1,
    conv_applicable, NULL, fwd_direct_run,
};
static const udnn_solver bias_act_auto = {
    "gpu_conv_bias_act_implicit_gemm", UDNN_OP_CONV_BIAS_ACT,
    UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM, 1, bias_act_applicable, NULL, bias_act_auto_run,
};
static const udnn_solver bias_act_precomp = {
    "gpu_conv_bias_act_precomp_gemm", UDNN_OP_CONV_BIAS_ACT,
    UDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, 1, bias_act_applicable, NULL,
    bias_act_tiled_run,
};
static const udnn_solver bias_act_gemm = {
    "gpu_conv_bias_act_gemm", UDNN_OP_CONV_BIAS_ACT, UDNN_CONVOLUTION_FWD_ALGO_GEMM, 1,
    bias_act_applicable, NULL, bias_act_tiled_run,
};
static const udnn_solver bias_act_direct = {
    "gpu_conv_bias_act_direct", UDNN_OP_CONV_BIAS_ACT, UDNN_CONVOLUTION_FWD_ALGO_DIRECT, 1,
    bias_act_applicable, NULL, bias_act_direct_run,
};
static const udnn_solver bwd_data_auto = {
    "gpu_conv_bwd_data_algo0", UDNN_OP_CONV_BWD_DATA, UDNN_CONVOLUTION_BWD_DATA_ALGO_0, 1,
    conv_applicable, NULL, bwd_data_auto_run,
};
static const udnn_solver bwd_data_tiled = {
    "gpu_conv_bwd_data_algo1", UDNN_OP_CONV_BWD_DATA, UDNN_CONVOLUTION_BWD_DATA_ALGO_1, 1,
    conv_applicable, NULL, bwd_data_tiled_run,
};
static const udnn_solver bwd_filter_auto = {
    "gpu_conv_bwd_filter_algo0", UDNN_OP_CONV_BWD_FILTER, UDNN_CONVOLUTION_BWD_FILTER_ALGO_0, 1,
    conv_applicable, NULL, bwd_filter_auto_run,
};
static const udnn_solver bwd_filter_tiled = {
    "gpu_conv_bwd_filter_algo1", UDNN_OP_CONV_BWD_FILTER, UDNN_CONVOLUTION_BWD_FILTER_ALGO_1, 1,
    conv_applicable, NULL, bwd_filter_tiled_run,
};
static const udnn_solver bwd_bias = {
    "gpu_conv_bwd_bias", UDNN_OP_CONV_BWD_BIAS, -1, 1, bias_applicable, NULL, bwd_bias_run,
};

UDNN_GPU_SOLVER_TABLE(conv, &fwd_auto, &fwd_precomp, &fwd_gemm, &fwd_direct, &bias_act_auto,
                      &bias_act_precomp, &bias_act_gemm, &bias_act_direct, &bwd_data_auto,
                      &bwd_data_tiled, &bwd_filter_auto, &bwd_filter_tiled, &bwd_bias);
