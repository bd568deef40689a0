/* norm_rows.cu - layer and RMS norm where each set is one contiguous row
 * (norm.h): a team holds its row in registers. */
#include "cuda/norm.h"

/* ---- rows: a layer or RMS norm set that is one contiguous run ------------------------------ */

/* Where each set is one contiguous run of len elements in x, the output
 * (and dy), a team holds its row in registers, so that x (and dy) is read
 * once and the output written once: the general kernels read x twice in
 * the forward pass and x and dy three times in the backward one. A team is
 * TX threads (blockDim.x, a power of two) and holds items j = tx + k * TX,
 * each of V elements (16 bytes where the rows allow it). The backward pass
 * also sums dscale and dbias over the rows its block walks, per thread for
 * the columns it owns, and leaves one partial per block in scratch for
 * nm_grad_finish. */

#define NM_FWD_NV 8 /* items a forward thread holds */
#define NM_FWD_BLOCK 256
#define NM_BWD_BLOCK 128

/* FLOAT rows of NM_FW_MIN_LEN elements or more compute dx in float
 * (nm_bwd_rows' FW), 4 columns a thread and 4 rows an iteration, in blocks
 * of at most NM_FW_THREADS threads (rows of 4 * NM_FW_THREADS elements at
 * most), NM_FW_MINB of them resident a multiprocessor. H100, 65536 rows of
 * 1024: 2630 GB/s (96% of copy), against 2246 in double and 2484 with 2
 * prefetched rows an iteration (4 prefetched spill). 16-bit rows as long
 * take FW too, 8 columns a thread (a vector) and 2 rows an iteration
 * (rows of 8 * NM_FW_THREADS at most): f16 65536 x 1024 2014 GB/s against
 * 1667 to 1687 with double terms each and prefetch; 4 rows spill (1054),
 * or take 197 registers (1772). Twice the resident warps did not gain on
 * the H200 (f16 2165 / 2188 against 2173 / 2194 at 64 registers: the
 * dscale and dbias sums in shared memory, xhat and g taken again for dx),
 * nor did loading the next rows ahead (1703 / 1727): PERF.md, twentieth
 * session. Nor did more rows in flight without registers (twenty-third
 * session): 16-bit rows of 32 to 512 vectors, a thread one vector of x
 * and dy a row, copied asynchronously by each thread into its own slots of
 * a ring of 4 rows in shared memory, 3 rows ahead of the one it computes
 * (its statistics likewise), no barrier but the row's sums. H200, GB/s,
 * two passes, these kernels against the ring with double dscale and
 * dbias terms, and with float partials over 4 rows: f16 65536 x 1024
 * 2209 / 2187 against 1931 / 1912 and 2014 / 2040; f16 262144 x 256 2656
 * / 2639 against 1989 / 1971 and 2178 / 2197; RMS f16 131072 x 512 2275
 * / 2279 against 2009 / 2026 and 2225 / 2191; f16 16384 x 4096 1824 /
 * 1838 against 1652 / 1664 and 1709 / 1712 (8 rows: 1374 / 1368, one
 * block a multiprocessor). The bytes in flight are not what holds these
 * rows back; each row's own work and its barrier are. */
#ifndef NM_FW_MIN_LEN
#define NM_FW_MIN_LEN 256
#endif
#ifndef NM_FW_THREADS
#define NM_FW_THREADS 256
#endif
#ifndef NM_FW_MINB
#define NM_FW_MINB 2
#endif
/* FW: the iterations whose dscale and dbias terms a thread adds in float
 * before its double sums. H200, bursts, GB/s, 1 / 2 / 4 iterations: f16
 * 65536 x 1024 2320 / 2347 / 2378, 262144 x 256 2839 / 2861 / 2899, RMS
 * 131072 x 512 2407 / 2426 / 2448 (4 keeps 128 registers, no spills) */
#ifndef NM_FW_FLUSH
#define NM_FW_FLUSH 4
#endif

/* The arithmetic type of nm_bwd_rows: nm_wide's, or float with FW. */
template <class T, bool FW> struct nm_row_wide {
    typedef typename nm_wide<T>::W W;
};
template <class T> struct nm_row_wide<T, true> {
    typedef float W;
};

template <class T> struct nm_row_args {
    typedef typename udnn_gpu_param<T>::P P;
    nm_space sets;
    int64_t nsets, pstep;
    int64_t flat[NM_SLOTS]; /* backward: the sets' one stride (sets.nd <= 1) */
    int len, rms;
    double rlen, eps; /* rlen = 1 / len */
    const T *x, *dy;
    T *out;
    const P *scale, *bias;   /* bias nullable */
    P *save_mean, *save_inv; /* forward, nullable */
    const P *mean, *inv;     /* backward; mean NULL for RMS */
    double *partial;         /* backward: [block][2][len] */
};

template <class T>
__device__ __forceinline__ void nm_row_offsets(const nm_row_args<T> &a, int64_t set,
                                               int64_t so[NM_SLOTS])
{
    if (a.nsets <= (int64_t)UINT32_MAX)
        udnn_gpu_space_offsets<uint32_t, NM_SLOTS>(a.sets, (uint32_t)set, so);
    else
        udnn_gpu_space_offsets<int64_t, NM_SLOTS>(a.sets, set, so);
}

/* The parameters of item j: with V > 1 they are contiguous (pstep 1) and
 * 16-byte aligned. */
template <class P, class C, int V>
__device__ __forceinline__ void nm_load_param(const P *p, int j, int64_t pstep, C (&o)[V])
{
    if constexpr (V == 1) {
        o[0] = (C)p[j * pstep];
    } else {
        constexpr int W = 16 / sizeof(P);
        const udnn_gpu_vec<P> *q = (const udnn_gpu_vec<P> *)(p + (int64_t)j * V);
        for (int h = 0; h < V / W; h++) {
            const udnn_gpu_vec<P> w = q[h];
            for (int k = 0; k < W; k++) o[h * W + k] = (C)w.v[k];
        }
    }
}

/* One row per team (blockDim.y teams per block), NM_FWD_NV items per
 * thread; the statistics as nm_fwd computes them. */
template <class T, int V>
__global__ void __launch_bounds__(NM_ROW_THREADS) nm_fwd_rows(nm_row_args<T> a)
{
    typedef typename io<T>::C C;
    typedef typename udnn_gpu_param<T>::P P;
    typedef udnn_gpu_pack<T, V> R;
    __shared__ double red[2 * NM_ROW_WARPS * 2];
    const int tx = threadIdx.x, tw = blockDim.x, items = a.len / V;
    const int64_t set = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    const bool live = set < a.nsets;
    int64_t so[NM_SLOTS];
    nm_row_offsets(a, live ? set : 0, so);
    const R *x = (const R *)(a.x + so[N_X]);
    R r[NM_FWD_NV];
#pragma unroll
    for (int k = 0; k < NM_FWD_NV; k++)
        if (live && tx + k * tw < items) r[k] = x[tx + k * tw];
    const double shift = live && !a.rms ? (double)io<T>::ld(a.x[so[N_X]]) : 0.0;
    double s[2] = {0.0, 0.0};
#pragma unroll
    for (int k = 0; k < NM_FWD_NV; k++)
        if (live && tx + k * tw < items)
            for (int e = 0; e < V; e++)
                nm_fwd_add((double)udnn_gpu_pack_ld(r[k], e), shift, s[0], s[1]);
    nm_row_sum<double, 2>(s, red, 0);
    if (!live) return;
    const double dm = a.rms ? 0.0 : s[0] * a.rlen, mean = a.rms ? 0.0 : shift + dm;
    double var = s[1] * a.rlen - dm * dm;
    if (var < 0.0) var = 0.0; /* rounding only; NaN stays NaN */
    const double inv = 1.0 / sqrt(var + a.eps);
    if (tx == 0) {
        if (a.save_mean != NULL) a.save_mean[so[N_ST]] = (P)mean;
        if (a.save_inv != NULL) a.save_inv[so[N_ST]] = (P)inv;
    }
    const C hi = (C)mean, lo = (C)(mean - (double)hi), invc = (C)inv;
    R *y = (R *)(a.out + so[N_OUT]);
#pragma unroll
    for (int k = 0; k < NM_FWD_NV; k++) {
        const int j = tx + k * tw;
        if (j >= items) continue;
        C sc[V], bi[V];
        nm_load_param<P, C, V>(a.scale, j, a.pstep, sc);
        if (a.bias != NULL) nm_load_param<P, C, V>(a.bias, j, a.pstep, bi);
        R o;
        for (int e = 0; e < V; e++) {
            C v = nm_fwd_y((C)udnn_gpu_pack_ld(r[k], e), hi, lo, invc, sc[e]);
            if (a.bias != NULL) v += bi[e];
            o.v[e] = io<T>::st(v);
        }
        y[j] = o;
    }
}

/* Row `set` of x and dy and its statistics, where it exists. */
template <class T, int V, int NV, class W>
__device__ __forceinline__ void
nm_bwd_row_load(const nm_row_args<T> &a, int64_t set, udnn_gpu_pack<T, V> (&xr)[NV],
                udnn_gpu_pack<T, V> (&gr)[NV], W &mean, W &inv, int64_t &out)
{
    typedef udnn_gpu_pack<T, V> R;
    const int tx = threadIdx.x, tw = blockDim.x, items = a.len / V;
    mean = inv = W(0);
    out = 0;
    if (set >= a.nsets) return;
    const R *x = (const R *)(a.x + set * a.flat[N_X]), *dy = (const R *)(a.dy + set * a.flat[N_DY]);
#pragma unroll
    for (int k = 0; k < NV; k++)
        if (tx + k * tw < items) {
            xr[k] = x[tx + k * tw];
            gr[k] = dy[tx + k * tw];
        }
    if (a.mean != NULL) mean = (W)a.mean[set * a.flat[N_ST]];
    inv = (W)a.inv[set * a.flat[N_ST]];
    out = set * a.flat[N_OUT];
}

/* Each iteration of a block takes R rows per team (row base + i * TY + ty
 * of R * TY), base stepping over the grid. PF: the next iteration's loads
 * are issued once this one's are consumed, in flight over the team sums
 * and the stores; else they wait for the next iteration (fewer registers).
 * A thread owns COLS columns: a double dscale and dbias sum each and its
 * rows' xhat and g in the wide type. dx as nm_bwd computes it; dscale's
 * terms from the wide xhat, except in double where rows are not whole
 * vectors (DT, below). A row's dx is stored after its x and dy are read,
 * so dx may be either's buffer.
 * FW (long rows only): the arithmetic in float, as the 16-bit types have
 * it anyway, and dscale's and dbias's terms in float partials (below).
 * nm_wide's double guards small sets, where dx is a small remainder; a
 * long row's dx is not. In double each element costs three
 * conversions to or from double (a quarter of the double rate) and some
 * nine double operations, all issued between a block's barriers, which
 * held up the row's bytes (FLOAT 1024-element rows: 82% of copy in
 * double, 96% in float). dscale's and dbias's terms of the rows of
 * NM_FW_FLUSH iterations are added in float (in row order) before the
 * double sums: one conversion and one double add each per NM_FW_FLUSH * R
 * elements. */
template <class T, int V, int COLS, int R, bool PF, bool FW = false>
__global__ void __launch_bounds__(FW ? NM_FW_THREADS : NM_ROW_THREADS, FW ? NM_FW_MINB : 1)
    nm_bwd_rows(nm_row_args<T> a)
{
    typedef typename io<T>::C C;
    typedef typename nm_row_wide<T, FW>::W W;
    typedef udnn_gpu_pack<T, V> RV;
    constexpr int NV = COLS / V;
    /* dscale's terms in double, as nm_grad's: rows of fewer than 8 columns
     * are never whole 16-bit vectors, and over so few columns one that
     * cancels (terms whose sum is a five-hundredth of each) fails 1e-5 by
     * a float term's rounding alone; over 8 or more the norm holds. */
    constexpr bool DT = V == 1;
    __shared__ W red[2 * NM_ROW_WARPS * 2 * R];
    __shared__ double fold[2 * COLS * (NM_BWD_BLOCK / 2)];
    udnn_gpu_follow();
    const int tx = threadIdx.x, tw = blockDim.x, ty = threadIdx.y, th = blockDim.y;
    const int items = a.len / V;
    /* the scale of the columns a thread owns, [column][tx], in the wide
     * type: in registers it would spill */
    W *sc = (W *)nm_dyn_smem;
    double ds[NV][V], db[NV][V];
#pragma unroll
    for (int k = 0; k < NV; k++)
        for (int e = 0; e < V; e++) {
            const int j = tx + k * tw;
            if (ty == 0)
                sc[(k * V + e) * tw + tx] =
                    j < items ? (W)a.scale[(int64_t)(j * V + e) * a.pstep] : W(0);
            ds[k][e] = db[k][e] = 0.0;
        }
    __syncthreads();
    const int64_t rows = (int64_t)th * R, step = (int64_t)gridDim.x * rows;
    RV xr[R][NV], gr[R][NV];
    W mean[R], inv[R];
    int64_t out[R];
    if (PF)
#pragma unroll
        for (int i = 0; i < R; i++)
            nm_bwd_row_load<T, V, NV, W>(a, (int64_t)blockIdx.x * rows + i * th + ty, xr[i],
                                         gr[i], mean[i], inv[i], out[i]);
    int parity = 0, pending = 0;
    /* FW: the dscale and dbias terms of NM_FW_FLUSH iterations, in row order */
    W pds[FW ? NV : 1][V], pdb[FW ? NV : 1][V];
    if constexpr (FW)
#pragma unroll
        for (int k = 0; k < NV; k++)
            for (int e = 0; e < V; e++) pds[k][e] = pdb[k][e] = W(0);
    for (int64_t base = (int64_t)blockIdx.x * rows; base < a.nsets; base += step) {
        if (!PF)
#pragma unroll
            for (int i = 0; i < R; i++)
                nm_bwd_row_load<T, V, NV, W>(a, base + i * th + ty, xr[i], gr[i], mean[i],
                                             inv[i], out[i]);
        W xh[R][NV][V], g[R][NV][V], q[2 * R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            const bool live = base + i * th + ty < a.nsets;
            q[2 * i] = q[2 * i + 1] = W(0);
#pragma unroll
            for (int k = 0; k < NV; k++) {
                for (int e = 0; e < V; e++) xh[i][k][e] = g[i][k][e] = W(0);
                /* tested once a vector: tested per element, each element
                 * took a branch of its own */
                if (!live || tx + k * tw >= items) continue;
                for (int e = 0; e < V; e++) {
                    const W gw = (W)udnn_gpu_pack_ld(gr[i][k], e);
                    xh[i][k][e] = ((W)udnn_gpu_pack_ld(xr[i][k], e) - mean[i]) * inv[i];
                    g[i][k][e] = udnnGpuMulRn(gw, sc[(k * V + e) * tw + tx]);
                    q[2 * i] += g[i][k][e];
                    q[2 * i + 1] += g[i][k][e] * xh[i][k][e];
                    if constexpr (FW) {
                        pds[k][e] += gw * xh[i][k][e];
                        pdb[k][e] += gw;
                    } else {
                        ds[k][e] += DT ? nm_dscale_term(gw, udnn_gpu_pack_ld(xr[i][k], e), mean[i],
                                                        inv[i])
                                       : (double)(gw * xh[i][k][e]);
                        db[k][e] += (double)gw;
                    }
                }
            }
        }
        if constexpr (FW)
            if (++pending == NM_FW_FLUSH || base + step >= a.nsets) {
#pragma unroll
                for (int k = 0; k < NV; k++)
                    for (int e = 0; e < V; e++) {
                        ds[k][e] += (double)pds[k][e];
                        db[k][e] += (double)pdb[k][e];
                        pds[k][e] = pdb[k][e] = W(0);
                    }
                pending = 0;
            }
        W inv_c[R];
        int64_t out_c[R];
#pragma unroll
        for (int i = 0; i < R; i++) {
            inv_c[i] = inv[i];
            out_c[i] = out[i];
        }
        if (PF)
#pragma unroll
            for (int i = 0; i < R; i++)
                nm_bwd_row_load<T, V, NV, W>(a, base + step + i * th + ty, xr[i], gr[i],
                                             mean[i], inv[i], out[i]);
        if (FW && tw >= udnnGpuWarpSize) nm_row_sum_t<W, 2 * R>(q, red, parity);
        else nm_row_sum<W, 2 * R>(q, red, parity);
        parity ^= 1;
#pragma unroll
        for (int i = 0; i < R; i++) {
            if (base + i * th + ty >= a.nsets) continue;
            const W mean_g = a.rms ? W(0) : (W)((double)q[2 * i] * a.rlen);
            const W mean_gx = (W)((double)q[2 * i + 1] * a.rlen);
            RV *dx = (RV *)(a.out + out_c[i]);
#pragma unroll
            for (int k = 0; k < NV; k++) {
                if (tx + k * tw >= items) continue;
                RV o;
                for (int e = 0; e < V; e++)
                    o.v[e] =
                        io<T>::st((C)nm_bwd_dx(g[i][k][e], xh[i][k][e], inv_c[i], mean_g, mean_gx));
                dx[tx + k * tw] = o;
            }
        }
    }
    /* the block's teams into team 0, a fixed tree */
    const int half = NM_BWD_BLOCK / 2;
    for (int h = th / 2; h > 0; h /= 2) {
        __syncthreads();
        if (ty >= h && ty < 2 * h) {
            const int slot = (ty - h) * tw + tx;
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) {
                    fold[(2 * (k * V + e)) * half + slot] = ds[k][e];
                    fold[(2 * (k * V + e) + 1) * half + slot] = db[k][e];
                }
        }
        __syncthreads();
        if (ty < h) {
            const int slot = ty * tw + tx;
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) {
                    ds[k][e] += fold[(2 * (k * V + e)) * half + slot];
                    db[k][e] += fold[(2 * (k * V + e) + 1) * half + slot];
                }
        }
    }
    if (ty != 0) return;
    double *pd = a.partial + (int64_t)blockIdx.x * 2 * a.len;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (tx + k * tw >= items) continue;
        for (int e = 0; e < V; e++) {
            const int col = (tx + k * tw) * V + e;
            pd[col] = ds[k][e];
            pd[a.len + col] = db[k][e];
        }
    }
}

/* 16-bit rows too wide for FW's blocks (more than 8 * NM_FW_THREADS
 * elements) and up to 2 * V * NM_WIDE_THREADS: a block takes one row at a
 * time, 2 vectors (16 columns) a thread, NM_WIDE_MINB blocks a
 * multiprocessor, so that one block's barrier is another's loads (in
 * nm_bwd_rows such a row takes 512 threads of 128 registers, one block a
 * multiprocessor). To fit, a thread keeps only its row's raw vectors and
 * takes xhat and g again from them after the row's sums; its dscale and
 * dbias terms go to float partials over NM_WIDE_FLUSH rows (as FW's over
 * NM_FW_FLUSH iterations' rows), then into double sums in shared memory.
 * The next row's x and dy are copied into shared memory (asynchronous
 * copies, no registers) as soon as this row's are summed, so that its
 * loads are in flight over this row's barrier and stores. H200, bursts,
 * GB/s, f16 / bf16 16384 x 4096 and RMS f16 16384 x 3072, two passes:
 * 2494 / 2469 / 2345 and 2477 / 2467 / 2335 against 2229 / 2218 / 1984 and
 * 2237 / 2213 / 1972 loading each row when its turn came. Loading it ahead
 * into registers measured slower (H100, bf16 16384 x 4096: 1245 against
 * 1622 GB/s), and 3 blocks a multiprocessor spill (938). */
#define NM_WIDE_THREADS 256
#define NM_WIDE_MINB 2
#define NM_WIDE_FLUSH 4
#define NM_WIDE_NV 2

/* The dynamic shared memory of nm_bwd_wide for tw threads: double
 * dscale and dbias sums, then the scale, per column, then the next row's
 * vectors of x and dy. */
template <class T> static size_t nm_wide_smem(int tw)
{
    const size_t cols = (size_t)NM_WIDE_NV * (16 / sizeof(T)) * (size_t)tw;
    return cols * (2 * sizeof(double) + sizeof(typename io<T>::C)) +
           (size_t)2 * NM_WIDE_NV * 16 * tw;
}

template <class T>
__global__ void __launch_bounds__(NM_WIDE_THREADS, NM_WIDE_MINB) nm_bwd_wide(nm_row_args<T> a)
{
    typedef typename io<T>::C C;
    constexpr int V = 16 / sizeof(T), NV = NM_WIDE_NV;
    typedef udnn_gpu_pack<T, V> RV;
    __shared__ C red[2 * NM_ROW_WARPS * 2];
    udnn_gpu_follow();
    const int tx = threadIdx.x, tw = blockDim.x, items = a.len / V;
    double *sums = nm_dyn_smem;                /* [2][NV * V][tw]: dscale, dbias */
    C *sc = (C *)(sums + 2 * NV * V * tw);     /* [NV * V][tw] */
    C pds[NV][V], pdb[NV][V];
#pragma unroll
    for (int k = 0; k < NV; k++)
        for (int e = 0; e < V; e++) {
            const int j = tx + k * tw, col = (k * V + e) * tw + tx;
            sc[col] = j < items ? (C)a.scale[(int64_t)(j * V + e) * a.pstep] : C(0);
            sums[col] = sums[NV * V * tw + col] = 0.0;
            pds[k][e] = pdb[k][e] = C(0);
        }
    int parity = 0, pending = 0;
    /* [NV][tw] vectors of x, then of dy: each thread copies its own and
     * reads back only those (no barrier); the row's mean and inv loaded
     * with them */
    RV *px = (RV *)(sc + NV * V * tw), *pg = px + NV * tw;
    C nmean = C(0), ninv = C(0);
    auto fetch = [&](int64_t set) {
        if (set >= a.nsets) return;
        const RV *x = (const RV *)(a.x + set * a.flat[N_X]);
        const RV *dy = (const RV *)(a.dy + set * a.flat[N_DY]);
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (tx + k * tw < items) {
                udnnGpuCopyAsync16(px + k * tw + tx, x + tx + k * tw);
                udnnGpuCopyAsync16(pg + k * tw + tx, dy + tx + k * tw);
            }
        nmean = a.mean != NULL ? (C)a.mean[set * a.flat[N_ST]] : C(0);
        ninv = (C)a.inv[set * a.flat[N_ST]];
    };
    fetch(blockIdx.x);
    for (int64_t set = blockIdx.x; set < a.nsets; set += gridDim.x) {
        RV xr[NV], gr[NV];
        udnnGpuCopyAsyncWait();
#pragma unroll
        for (int k = 0; k < NV; k++)
            if (tx + k * tw < items) {
                xr[k] = px[k * tw + tx];
                gr[k] = pg[k * tw + tx];
            }
        const C mean = nmean, inv = ninv;
        const int64_t out = set * a.flat[N_OUT];
        C q[2] = {C(0), C(0)};
#pragma unroll
        for (int k = 0; k < NV; k++) {
            /* tested once a vector, as in nm_bwd_rows: tested per element,
             * each element took a branch of its own (3 of its 13
             * instructions) */
            if (tx + k * tw >= items) continue;
            for (int e = 0; e < V; e++) {
                const C gw = udnn_gpu_pack_ld(gr[k], e);
                const C xh = (udnn_gpu_pack_ld(xr[k], e) - mean) * inv;
                const C g = udnnGpuMulRn(gw, sc[(k * V + e) * tw + tx]);
                q[0] += g;
                q[1] += g * xh;
                pds[k][e] += gw * xh;
                pdb[k][e] += gw;
            }
        }
        /* H200, bursts, GB/s, f16 / bf16 16384 x 4096 and RMS f16 16384 x
         * 3072: the per-element test and nm_row_sum 2053 / 2050 / 1773, the
         * test a vector 2203 / 2193 / 1957, and nm_row_sum_t 2241 / 2213 /
         * 1991 */
        /* this row's vectors are summed (q depends on them): the slots are free */
        fetch(set + gridDim.x);
        if (tw >= udnnGpuWarpSize) nm_row_sum_t<C, 2>(q, red, parity);
        else nm_row_sum<C, 2>(q, red, parity);
        parity ^= 1;
        const C mean_g = a.rms ? C(0) : (C)((double)q[0] * a.rlen);
        const C mean_gx = (C)((double)q[1] * a.rlen);
        RV *dx = (RV *)(a.out + out);
#pragma unroll
        for (int k = 0; k < NV; k++) {
            if (tx + k * tw >= items) continue;
            RV o;
            for (int e = 0; e < V; e++) {
                const C gw = udnn_gpu_pack_ld(gr[k], e);
                const C xh = (udnn_gpu_pack_ld(xr[k], e) - mean) * inv;
                const C g = udnnGpuMulRn(gw, sc[(k * V + e) * tw + tx]);
                o.v[e] = io<T>::st((C)nm_bwd_dx(g, xh, inv, mean_g, mean_gx));
            }
            dx[tx + k * tw] = o;
        }
        if (++pending == NM_WIDE_FLUSH || set + gridDim.x >= a.nsets) {
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) {
                    const int col = (k * V + e) * tw + tx;
                    sums[col] += (double)pds[k][e];
                    sums[NV * V * tw + col] += (double)pdb[k][e];
                    pds[k][e] = pdb[k][e] = C(0);
                }
            pending = 0;
        }
    }
    double *pd = a.partial + (int64_t)blockIdx.x * 2 * a.len;
#pragma unroll
    for (int k = 0; k < NV; k++) {
        if (tx + k * tw >= items) continue;
        for (int e = 0; e < V; e++) {
            const int c = (tx + k * tw) * V + e, col = (k * V + e) * tw + tx;
            pd[c] = sums[col];
            pd[a.len + c] = sums[NV * V * tw + col];
        }
    }
}

/* The length of every row where the sets of a layer or RMS norm are each
 * one contiguous run in the slots given and the parameters stay put from
 * set to set; else 0. Rows no team can hold (16-byte items of 8 elements
 * at most) give 0 too. */
static int64_t nm_row_len(const udnn_norm_problem *p, const nm_geom *g, const int *slots, int ns)
{
    if (p->groups > 0 || g->inner.nd != 1) return 0;
    if (g->inner.dim[0] > (int64_t)NM_ROW_THREADS * NM_FWD_NV * 8) return 0;
    for (int i = 0; i < ns; i++)
        if (g->inner.st[slots[i]][0] != 1) return 0;
    for (int d = 0; d < g->sets.nd; d++)
        if (g->sets.st[N_P][d] != 0) return 0;
    return g->inner.dim[0];
}

/* Whether rows of len elements may move 16 bytes per access in the slots
 * given: a whole number of vectors, each row starting on a vector
 * boundary, the buffers aligned. */
static int nm_row_vec(const nm_space *sets, int64_t len, size_t elem, const void *const *ptrs,
                      int np, const int *slots, int ns)
{
    const int64_t V = (int64_t)(16 / elem);
    if (len % V != 0) return 0;
    for (int i = 0; i < np; i++)
        if (!udnn_gpu_aligned16(ptrs[i])) return 0;
    for (int i = 0; i < ns; i++)
        for (int d = 0; d < sets->nd; d++)
            if (sets->st[slots[i]][d] % V != 0) return 0;
    return 1;
}

/* The narrowest team that holds `items` at `per` a thread; 0 when even
 * the widest cannot. */
static int nm_row_team(int64_t items, int per)
{
    int tw = 1;
    while ((int64_t)tw * per < items) {
        if (tw == NM_ROW_THREADS) return 0;
        tw *= 2;
    }
    return tw;
}

template <class T>
static void nm_row_fill(nm_row_args<T> *a, const udnn_norm_problem *p, const nm_geom *g,
                        int64_t len)
{
    typedef typename udnn_gpu_param<T>::P P;
    memset(a, 0, sizeof *a);
    a->sets = g->sets;
    a->nsets = g->sets.size;
    a->pstep = g->inner.st[N_P][0];
    a->len = (int)len;
    a->rms = g->rms;
    a->rlen = 1.0 / (double)len;
    a->x = (const T *)p->x_ptr;
    a->out = (T *)p->out_ptr;
    a->scale = (const P *)p->scale_ptr;
}

/* Layer and RMS norm forward over contiguous rows (nm_fwd_rows); 0 where
 * it does not apply. */
template <class T>
int nm_forward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p,
                           const nm_geom *g, udnnStatus_t *st)
{
    typedef typename udnn_gpu_param<T>::P P;
    static const int slots[2] = {N_X, N_OUT};
    const int64_t len = nm_row_len(p, g, slots, 2);
    if (len == 0) return 0;
    nm_row_args<T> a;
    nm_row_fill<T>(&a, p, g, len);
    a.eps = p->epsilon;
    a.bias = g->rms ? NULL : (const P *)p->bias_ptr;
    a.save_mean = (P *)p->save_mean_ptr;
    a.save_inv = (P *)p->save_inv_std_ptr;
    const void *ptrs[4] = {a.x, a.out, a.scale, a.bias};
    const int vec = a.pstep == 1 &&
                    nm_row_vec(&g->sets, len, sizeof(T), ptrs, a.bias != NULL ? 4 : 3, slots, 2);
    const int V = vec ? (int)(16 / sizeof(T)) : 1;
    const int tw = nm_row_team(len / V, NM_FWD_NV);
    if (tw == 0) return 0;
    const int th = tw >= NM_FWD_BLOCK ? 1 : NM_FWD_BLOCK / tw;
    const int64_t blocks = (a.nsets + th - 1) / th;
    if (blocks > INT32_MAX) return 0;
    const dim3 block((unsigned)tw, (unsigned)th);
    if (vec) nm_fwd_rows<T, 16 / sizeof(T)><<<(unsigned)blocks, block, 0, c->stream>>>(a);
    else nm_fwd_rows<T, 1><<<(unsigned)blocks, block, 0, c->stream>>>(a);
    *st = udnn_gpu_launched();
    return 1;
}

/* Launches nm_bwd_rows<T, V, COLS, R, PF> for rows of `items` items
 * on at most one wave of resident blocks and at most `room` (each block's
 * partial dscale and dbias take scratch); returns the blocks, 0 when a
 * team cannot hold a row. */
template <class T, int V, int COLS, int R, bool PF, bool FW = false>
static int64_t nm_bwd_rows_launch(const udnn_gpu_context *c, const nm_row_args<T> &a,
                                  int64_t items, int64_t room)
{
    const int tw = nm_row_team(items, COLS / V);
    if (tw == 0 || (FW && tw > NM_FW_THREADS)) return 0;
    const int th = tw >= NM_BWD_BLOCK ? 1 : NM_BWD_BLOCK / tw;
    const size_t smem = (size_t)COLS * (size_t)tw * sizeof(typename nm_row_wide<T, FW>::W);
    /* resident blocks per multiprocessor, asked once per process and width */
    static udnn_gpu_cache cached[16];
    int i = 0;
    while ((1 << i) < tw) i++;
    const int64_t n =
        udnn_gpu_occupancy(c, nm_bwd_rows<T, V, COLS, R, PF, FW>, tw * th, smem, &cached[i]);
    int64_t blocks = (a.nsets + (int64_t)th * R - 1) / ((int64_t)th * R);
    if (blocks > (int64_t)n * c->sm_count) blocks = (int64_t)n * c->sm_count;
    if (blocks > room) blocks = room;
    if (blocks < 1) blocks = 1;
    /* a failed launch reaches the caller's udnn_gpu_launched */
    (void)udnnGpuLaunch(nm_bwd_rows<T, V, COLS, R, PF, FW>, dim3((unsigned)blocks),
                        dim3((unsigned)tw, (unsigned)th), smem, c->stream, 0, c->follows != 0, a);
    return blocks;
}

/* nm_bwd_wide for 16-bit rows of `items` vectors: one block a row at a
 * time on at most one wave and `room`; 0 where a block cannot hold a row
 * or the shared memory is refused. */
template <class T>
static int64_t nm_bwd_wide_launch(const udnn_gpu_context *c, const nm_row_args<T> &a,
                                  int64_t items, int64_t room)
{
    const int tw = nm_row_team(items, NM_WIDE_NV);
    if (tw == 0 || tw > NM_WIDE_THREADS) return 0;
    const size_t smem = nm_wide_smem<T>(NM_WIDE_THREADS);
    static udnn_gpu_cache granted, occupancy;
    if (!udnn_gpu_allow_shared(c, nm_bwd_wide<T>, smem, &granted)) return 0;
    const int64_t n = udnn_gpu_occupancy(c, nm_bwd_wide<T>, NM_WIDE_THREADS, smem, &occupancy);
    int64_t blocks = a.nsets;
    if (blocks > n * c->sm_count) blocks = n * c->sm_count;
    if (blocks > room) blocks = room;
    if (blocks < 1) return 0;
    (void)udnnGpuLaunch(nm_bwd_wide<T>, dim3((unsigned)blocks), dim3((unsigned)tw),
                        nm_wide_smem<T>(tw), c->stream, 0, c->follows != 0, a);
    return blocks;
}

/* The shapes of nm_bwd_rows by reach: columns a thread owns, rows a team
 * takes at once, prefetch. A thread keeps a double dscale and dbias sum
 * per column and, per row, xhat and g in the wide type. Where that type
 * is double (FLOAT, DOUBLE), 4 columns and 2 prefetched rows fit 128
 * registers with as many bytes in flight as 8 columns and one prefetched
 * row would in 150; with float, 8 and 2 fit. Longer rows (beyond 512
 * threads) and element-wise accesses take one row and no prefetch. */
template <class T, int V>
static int64_t nm_bwd_rows_run(const udnn_gpu_context *c, const nm_row_args<T> &a, int64_t room)
{
    const int64_t items = a.len / V;
    constexpr bool wide = sizeof(typename nm_wide<T>::W) == 8;
    int64_t b = 0;
    /* long rows in float (FW): FLOAT (the only 4-byte type) 4 columns a
     * thread and 4 rows an iteration, the 16-bit types 8 and 2 */
    if constexpr (sizeof(T) <= 4 && V > 1)
        if (a.len >= NM_FW_MIN_LEN) {
            if constexpr (sizeof(T) == 4)
                b = nm_bwd_rows_launch<T, V, 4, 4, false, true>(c, a, items, room);
            else b = nm_bwd_rows_launch<T, V, 8, 2, false, true>(c, a, items, room);
            if (b != 0) return b;
            if constexpr (sizeof(T) == 2) b = nm_bwd_wide_launch<T>(c, a, items, room);
            if (b != 0) return b;
        }
    if constexpr (wide && V > 1) b = nm_bwd_rows_launch<T, V, 4, 2, true>(c, a, items, room);
    else if constexpr (wide) b = nm_bwd_rows_launch<T, V, 4, 1, false>(c, a, items, room);
    else if constexpr (V > 1) b = nm_bwd_rows_launch<T, V, 8, 2, true>(c, a, items, room);
    if (b == 0) b = nm_bwd_rows_launch<T, V, 8, 1, false>(c, a, items, room);
    return b;
}

/* Layer and RMS norm backward over contiguous rows: nm_bwd_rows, then
 * nm_grad_finish over its blocks' partials; 0 where it does not apply. */
template <class T>
int nm_backward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p,
                            const nm_geom *g, udnnStatus_t *st)
{
    typedef typename udnn_gpu_param<T>::P P;
    static const int slots[3] = {N_X, N_DY, N_OUT};
    const int64_t len = nm_row_len(p, g, slots, 3);
    if (len == 0 || g->sets.nd > 1) return 0;
    const int64_t per_block = 2 * len * (int64_t)sizeof(double);
    const int64_t room = (int64_t)(c->scratch_bytes / (size_t)per_block);
    if (room < 1) return 0;
    nm_row_args<T> a;
    nm_row_fill<T>(&a, p, g, len);
    a.dy = (const T *)p->dy_ptr;
    a.mean = g->rms ? NULL : (const P *)p->saved_mean_ptr;
    a.inv = (const P *)p->saved_inv_std_ptr;
    a.partial = (double *)c->scratch;
    for (int t = 0; t < NM_SLOTS; t++) a.flat[t] = g->sets.nd == 1 ? g->sets.st[t][0] : 0;
    const void *ptrs[3] = {a.x, a.dy, a.out};
    const int64_t blocks = nm_row_vec(&g->sets, len, sizeof(T), ptrs, 3, slots, 3)
                               ? nm_bwd_rows_run<T, 16 / sizeof(T)>(c, a, room)
                               : nm_bwd_rows_run<T, 1>(c, a, room);
    if (blocks == 0) return 0;
    *st = udnn_gpu_launched();
    if (*st != UDNN_STATUS_SUCCESS) return 1;
    nm_grad_args<T> f;
    memset(&f, 0, sizeof f);
    f.feat = g->feat;
    f.F = len;
    f.partial = a.partial;
    f.dscale = (P *)p->dscale_ptr;
    f.dbias = g->rms ? NULL : (P *)p->dbias_ptr;
    *st = nm_grad_finish_launch<T>(c, f, blocks);
    return 1;
}

#define NM_ROWS_TYPE(T)                                                                            \
    template int nm_forward_rows<T>(const udnn_gpu_context *, const udnn_norm_problem *,           \
                                    const nm_geom *, udnnStatus_t *);                              \
    template int nm_backward_rows<T>(const udnn_gpu_context *, const udnn_norm_problem *,          \
                                     const nm_geom *, udnnStatus_t *);
UDNN_GPU_FLOAT_TYPES(NM_ROWS_TYPE)
