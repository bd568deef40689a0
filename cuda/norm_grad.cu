/* norm_grad.cu - the norms' parameter gradients, dscale and dbias: per
 * parameter, a sum over every set's elements of that parameter (norm.h). */
#include "cuda/norm.h"

/* ---- backward: dscale and dbias --------------------------------------------------------- */

/* ds and db of the block's BY rows of FT lanes added into red[0][tx] and
 * red[1][tx], in a fixed tree. */
__device__ __forceinline__ void nm_grad_tree(double ds, double db, double (*red)[UDNN_GPU_BLOCK])
{
    const int ft = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    red[0][ty * ft + tx] = ds;
    red[1][ty * ft + tx] = db;
    __syncthreads();
    for (int s = by / 2; s > 0; s /= 2) {
        if (ty < s) {
            red[0][ty * ft + tx] += red[0][(ty + s) * ft + tx];
            red[1][ty * ft + tx] += red[1][(ty + s) * ft + tx];
        }
        __syncthreads();
    }
}

/* Parameter f's sums, at po in the outputs: to the block's split partial
 * where there are splits, else to dscale and dbias. */
template <class T>
__device__ __forceinline__ void nm_grad_put(const nm_grad_args<T> &a, int64_t f, int64_t po,
                                            double ds, double db)
{
    if (a.partial != NULL) {
        a.partial[((int64_t)blockIdx.y * 2) * a.F + f] = ds;
        a.partial[((int64_t)blockIdx.y * 2 + 1) * a.F + f] = db;
        return;
    }
    a.dscale[po] = (typename udnn_gpu_param<T>::P)ds;
    if (a.dbias != NULL) a.dbias[po] = (typename udnn_gpu_param<T>::P)db;
}

/* blockDim (FT, BY), FT * BY == UDNN_GPU_BLOCK; grid (F / FT, splits).
 * Lanes of one parameter are added in a fixed tree. The terms and sums run
 * in double for every type: dy's terms cancel, so a float sum of a half
 * tensor's dscale missed 1e-5, and so did float terms of a few members
 * (four whose sum is a five-hundredth of each: 2e-5 to 4e-5).
 * Where the layout allows, a thread loads 16 bytes of x and dy at once:
 * PV adjacent parameters, where a member's parameters are one contiguous
 * run (one feature dim of unit stride, no statistics along it; layer
 * norm), or MV adjacent members, where the members' last dim is one with
 * the statistics constant along it (group norm's positions, NCHW; a.chunk
 * a multiple of MV). A member's mean and inv are then converted to double
 * once for 16 bytes' terms, and its index divided once, where an element
 * took a division and four conversions to double (16 a clock on a
 * multiprocessor) loading 2 bytes. A parameter's terms, their order and
 * its tree stay as with one element a load. On the H200 the few long
 * sets' backward (layer norm, 64 sets of 802816) went from 850 to 1013
 * GB/s f16 and from 1286 to 1585 f32, group norm's backward (8 groups, 32
 * x 256 x 112 x 112 f16) from 741 to 1414. */

template <class T, class I, int MV = 1, int PV = 1>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK) nm_grad(nm_grad_args<T> a)
{
    static_assert(MV == 1 || PV == 1, "members or parameters a load, not both");
    typedef udnn_gpu_pack<T, MV * PV> R;
    __shared__ double red[2][UDNN_GPU_BLOCK];
    const int ft = blockDim.x, by = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int64_t f = ((int64_t)blockIdx.x * ft + tx) * PV; /* the thread's first parameter */
    double ds[PV], db[PV];
    for (int e = 0; e < PV; e++) ds[e] = db[e] = 0.0;
    if (f < a.F) {
        int64_t fo[NM_SLOTS];
        udnn_gpu_space_offsets<I, NM_SLOTS>(a.feat, (I)f, fo);
        const int64_t start = (int64_t)blockIdx.y * a.chunk;
        const I j0 = (I)start, j1 = (I)(a.M - start < a.chunk ? a.M : start + a.chunk);
        for (I j = j0 + (I)(ty * MV); j < j1; j += (I)(2 * by * MV)) {
            R xv[2] = {}, gv[2] = {};
            double mv[2] = {0.0, 0.0}, iv[2] = {0.0, 0.0};
#pragma unroll
            for (int u = 0; u < 2; u++) {
                const I jj = j + (I)(u * by * MV);
                if (jj < j1) {
                    int64_t mo[NM_SLOTS];
                    udnn_gpu_space_offsets<I, NM_SLOTS>(a.memb, jj, mo);
                    const int64_t so = fo[N_ST] + mo[N_ST];
                    xv[u] = *(const R *)(a.x + fo[N_X] + mo[N_X]);
                    gv[u] = *(const R *)(a.dy + fo[N_DY] + mo[N_DY]);
                    mv[u] = a.mean != NULL ? (double)a.mean[so] : 0.0;
                    iv[u] = (double)a.inv[so];
                }
            }
#pragma unroll
            for (int u = 0; u < 2; u++)
                for (int e = 0; e < MV * PV; e++) {
                    const double g = (double)udnn_gpu_pack_ld(gv[u], e);
                    const int q = PV > 1 ? e : 0;
                    ds[q] += nm_dscale_term(g, (double)udnn_gpu_pack_ld(xv[u], e), mv[u], iv[u]);
                    db[q] += g;
                }
        }
    }
    for (int e = 0; e < PV; e++) {
        nm_grad_tree(ds[e], db[e], red);
        if (ty == 0 && f + e < a.F) {
            int64_t fo[NM_SLOTS];
            udnn_gpu_space_offsets<I, NM_SLOTS>(a.feat, (I)(f + e), fo);
            nm_grad_put(a, f + e, fo[N_P], red[0][tx], red[1][tx]);
        }
        if (PV > 1) __syncthreads(); /* red is read before the next parameter's sums */
    }
}

#define NM_FIN_THREADS 512

/* Adds each parameter's split partials in double and writes dscale and
 * dbias. A block is `lanes` adjacent parameters (blockDim.x: 4 to 32, each
 * split's partials of them one run of 32 to 256 bytes) by 512 / lanes
 * rows (blockDim.y); a row takes every rows-th split in order, then the
 * rows join in a fixed tree. A warp over one parameter's splits read 8
 * bytes of each 32-byte sector (H200, f16 rows backward in bursts,
 * 16384 x 4096: 1906 / 1904 GB/s that way, 1965 / 1964 with 32 lanes).
 * nm_grad_finish_launch narrows the lanes until the grid fills the
 * multiprocessors twice over: with 32 lanes always, 256 parameters made 8
 * blocks, each thread 33 of 528 splits deep. H200, bursts, three passes,
 * this against 32 lanes: layer norm backward f16 262144 x 256 3260 / 3239
 * / 3262 GB/s against 3216 / 3220 / 3235, RMS 131072 x 512 2937 / 2925 /
 * 2942 against 2911 / 2922 / 2923, 65536 x 1024 and 16384 x 4096 level.
 * (ncu put the finish at 9 us of these rows' 127 to 180: it empties the
 * caches before each kernel, and the partials are read from L2 here.) */
template <class T>
__global__ void __launch_bounds__(NM_FIN_THREADS) nm_grad_finish(nm_grad_args<T> a, int64_t splits)
{
    __shared__ double red[2][NM_FIN_THREADS];
    udnn_gpu_follow();
    const int lanes = blockDim.x, rows = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const int at = ty * lanes + tx;
    const int64_t f = (int64_t)blockIdx.x * lanes + tx;
    double ds = 0.0, db = 0.0;
    if (f < a.F)
#pragma unroll 4
        for (int64_t s = ty; s < splits; s += rows) {
            ds += a.partial[(s * 2) * a.F + f];
            db += a.partial[(s * 2 + 1) * a.F + f];
        }
    red[0][at] = ds;
    red[1][at] = db;
    __syncthreads();
    for (int h = rows / 2; h > 0; h /= 2) {
        if (ty < h) {
            red[0][at] += red[0][at + h * lanes];
            red[1][at] += red[1][at + h * lanes];
        }
        __syncthreads();
    }
    if (ty != 0 || f >= a.F) return;
    int64_t fo[NM_SLOTS];
    udnn_gpu_space_offsets<int64_t, NM_SLOTS>(a.feat, f, fo);
    a.dscale[fo[N_P]] = (typename udnn_gpu_param<T>::P)red[0][tx];
    if (a.dbias != NULL) a.dbias[fo[N_P]] = (typename udnn_gpu_param<T>::P)red[1][tx];
}

/* nm_grad_finish over a's F parameters and their `splits` partials. */
template <class T>
udnnStatus_t nm_grad_finish_launch(const udnn_gpu_context *c, const nm_grad_args<T> &a,
                                   int64_t splits)
{
    int lanes = 32;
    while (lanes > 4 && (a.F + lanes - 1) / lanes < 2 * (int64_t)c->sm_count) lanes /= 2;
    const dim3 block((unsigned)lanes, (unsigned)(NM_FIN_THREADS / lanes));
    return udnn_gpu_follower_launch(c, "launching the norm's parameter gradients' finish",
                                    nm_grad_finish<T>, dim3((unsigned)((a.F + lanes - 1) / lanes)),
                                    block, 0, a, splits);
}

/* dscale and dbias: FT parameters by BY member lanes per block, splits of
 * the members enough to fill the SMs, partials in scratch (straight to
 * the outputs with one split). */
template <class T>
udnnStatus_t nm_param_grads(const udnn_gpu_context *c, const udnn_norm_problem *p, const nm_geom *g)
{
    typedef typename udnn_gpu_param<T>::P P;
    nm_grad_args<T> a;
    memset(&a, 0, sizeof a);
    a.feat = g->feat;
    a.memb = g->memb;
    a.F = g->feat.size;
    a.M = g->memb.size;
    a.x = (const T *)p->x_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.mean = g->rms ? NULL : (const P *)p->saved_mean_ptr;
    a.inv = (const P *)p->saved_inv_std_ptr;
    a.dscale = (P *)p->dscale_ptr;
    a.dbias = g->rms ? NULL : (P *)p->dbias_ptr;

    const int adjacent = a.feat.nd > 0 && a.feat.st[N_X][a.feat.nd - 1] == 1;
    int ft = 1;
    if (adjacent || a.M < 64)
        while (ft < 32 && ft < a.F) ft *= 2;
    const int by = UDNN_GPU_BLOCK / ft;
    /* 16 bytes of x and dy a load where the layout allows: V
     * parameters a thread (nm_grad's PV) where a member's parameters are
     * one run, else V members (MV) where the members' last dim is */
    constexpr int V = 16 / sizeof(T);
    const bool aligned = (uintptr_t)a.x % 16 == 0 && (uintptr_t)a.dy % 16 == 0;
    bool vec = aligned && ft == 32 && a.feat.nd == 1 && a.feat.st[N_X][0] == 1 &&
               a.feat.st[N_DY][0] == 1 && a.feat.st[N_ST][0] == 0 && a.F % V == 0;
    for (int d = 0; d < a.memb.nd; d++)
        vec = vec && a.memb.st[N_X][d] % V == 0 && a.memb.st[N_DY][d] % V == 0;
    const int ml = a.memb.nd - 1;
    bool mvec = aligned && !vec && ft == 1 && ml >= 0 && a.memb.st[N_X][ml] == 1 &&
                a.memb.st[N_DY][ml] == 1 && a.memb.st[N_ST][ml] == 0 && a.memb.dim[ml] % V == 0;
    for (int d = 0; d < ml; d++)
        mvec = mvec && a.memb.st[N_X][d] % V == 0 && a.memb.st[N_DY][d] % V == 0;
    for (int d = 0; d < a.feat.nd; d++)
        mvec = mvec && a.feat.st[N_X][d] % V == 0 && a.feat.st[N_DY][d] % V == 0;
    const int64_t fblocks = (a.F + ft * (vec ? V : 1) - 1) / (ft * (vec ? V : 1));
    const int64_t target = (int64_t)c->sm_count * 8;
    int64_t splits = (target + fblocks - 1) / fblocks;
    const int64_t by_work = (a.M + 16 * by - 1) / (16 * by);
    if (splits > by_work) splits = by_work;
    if (splits > 65535) splits = 65535;
    const size_t per_split = (size_t)2 * a.F * sizeof(double);
    if (per_split > 0 && splits > (int64_t)(c->scratch_bytes / per_split))
        splits = (int64_t)(c->scratch_bytes / per_split);
    if (splits < 1) splits = 1;
    a.chunk = (a.M + splits - 1) / splits;
    if (a.chunk < 1) a.chunk = 1;
    if (mvec) a.chunk = (a.chunk + V - 1) / V * V;
    splits = (a.M + a.chunk - 1) / a.chunk;
    if (splits < 1) splits = 1;
    a.partial = splits > 1 ? (double *)c->scratch : NULL;

    const dim3 block((unsigned)ft, (unsigned)by), grid((unsigned)fblocks, (unsigned)splits);
    const bool small = nm_small(a.F * a.M);
    auto launch = [&](auto kernel) { kernel<<<grid, block, 0, c->stream>>>(a); };
    if (vec) small ? launch(nm_grad<T, uint32_t, 1, V>) : launch(nm_grad<T, int64_t, 1, V>);
    else if (mvec) small ? launch(nm_grad<T, uint32_t, V, 1>) : launch(nm_grad<T, int64_t, V, 1>);
    else small ? launch(nm_grad<T, uint32_t>) : launch(nm_grad<T, int64_t>);
    udnnStatus_t st = udnn_gpu_launched();
    if (st != UDNN_STATUS_SUCCESS || a.partial == NULL) return st;
    return nm_grad_finish_launch<T>(c, a, splits);
}

#define NM_GRAD_TYPE(T)                                                                            \
    template udnnStatus_t nm_param_grads<T>(const udnn_gpu_context *, const udnn_norm_problem *,   \
                                            const nm_geom *);                                      \
    template udnnStatus_t nm_grad_finish_launch<T>(const udnn_gpu_context *,                       \
                                                   const nm_grad_args<T> &, int64_t);
UDNN_GPU_FLOAT_TYPES(NM_GRAD_TYPE)
