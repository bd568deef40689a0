/* norm.cu - layer and RMS norm (NORM_FWD/BWD, over the trailing norm_dims
 * dims) and group norm (GROUPNORM_FWD/BWD, over each group of c/groups
 * channels and every spatial dim), forward and backward, for FLOAT, DOUBLE,
 * HALF and BFLOAT16 data in any strides, as cpu/ref/norm.c computes them.
 *
 * Both families normalize "sets": a set is an index of the leading dims
 * (layer, RMS) or an (n, group) pair, and its elements are walked through
 * an inner index space (the normalized dims, or a group's channels and the
 * spatial dims). Spaces order their dims by x's stride, largest first, and
 * merge neighbours that every tensor steps across evenly, so a packed row
 * is one contiguous run and a packed NHWC group a run of positions with
 * cpg adjacent channels each.
 *
 * Forward: a team of TX threads per set (a warp's worth for short sets, up
 * to a block for long ones) sums x - K and (x - K)^2 with K the set's first
 * element (RMS: K = 0, the sum of squares), then normalizes; the set is
 * read twice, the second time mostly from cache, 16 bytes per access where
 * the set's innermost dim is contiguous and aligned.
 * Backward: first the parameter gradients (dscale, dbias: per parameter,
 * a sum over every set), as FT x BY blocks over parameter and member
 * slices with partials in scratch and a fixed-order finish (norm_grad.cu);
 * then dx, a team per set. The parameter pass runs first since dx may be x's or dy's
 * buffer.
 * Rows: where each layer or RMS norm set is one contiguous run, a team
 * holds its row in registers instead (one read of x, and of dy, and one
 * write), and the backward pass sums dscale and dbias there too, into a
 * partial per block and the same finish (norm_rows.cu).
 *
 * HALF and BFLOAT16 compute in float, DOUBLE in double; every type sums
 * the forward statistics in double, and FLOAT runs the backward dx pass in
 * double (see nm_wide). Each set's statistics are finished in double.
 * Every sum has a fixed order. */
#include "cuda/norm.h"

/* One dim of a space before ordering and merging. Group norm splits C into
 * (group, channel in group), so dims are given explicitly. */
typedef struct {
    int64_t size;
    int64_t st[NM_SLOTS];
} nm_dim;

/* Dims of size 1 dropped, the rest ordered by x's stride (largest first,
 * stable), neighbours merged where every slot steps evenly. */
static nm_space nm_make_space(const nm_dim *dims, int n)
{
    nm_space s;
    memset(&s, 0, sizeof s);
    int order[UDNN_DIM_MAX + 1], k = 0;
    for (int i = 0; i < n; i++)
        if (dims[i].size > 1) order[k++] = i;
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && dims[order[j - 1]].st[N_X] < dims[order[j]].st[N_X]; j--) {
            int tmp = order[j];
            order[j] = order[j - 1];
            order[j - 1] = tmp;
        }
    s.size = 1;
    for (int i = 0; i < k; i++) {
        const nm_dim *d = &dims[order[i]];
        s.size *= d->size;
        int merge = s.nd > 0;
        for (int t = 0; t < NM_SLOTS && merge; t++)
            merge = s.st[t][s.nd - 1] == d->st[t] * d->size;
        if (merge) {
            s.dim[s.nd - 1] *= d->size;
            for (int t = 0; t < NM_SLOTS; t++) s.st[t][s.nd - 1] = d->st[t];
            continue;
        }
        s.dim[s.nd] = d->size;
        for (int t = 0; t < NM_SLOTS; t++) s.st[t][s.nd] = d->st[t];
        s.nd++;
    }
    return s;
}

/* A dim of x with each slot's stride; a slot whose tensor has size 1 there
 * gets stride 0. */
static nm_dim nm_dim_of(const udnn_tensor *const ts[NM_SLOTS], int d)
{
    nm_dim r;
    r.size = ts[N_X]->dims[d];
    for (int t = 0; t < NM_SLOTS; t++) r.st[t] = ts[t]->dims[d] == 1 ? 0 : ts[t]->strides[d];
    return r;
}

static nm_geom nm_geometry(const udnn_norm_problem *p, const udnn_tensor *dy,
                           const udnn_tensor *out)
{
    const udnn_tensor *x = &p->x;
    /* the statistics tensor is only described when used; x's shape with
     * zero strides never stops a merge or moves an offset otherwise */
    udnn_tensor none = p->stats;
    if (none.rank == 0) {
        none = p->x;
        for (int i = 0; i < none.rank; i++) none.strides[i] = 0;
    }
    const udnn_tensor *ts[NM_SLOTS] = {x, dy != NULL ? dy : x, out, &p->scale, &none};
    nm_dim lead[UDNN_DIM_MAX + 1], rest[UDNN_DIM_MAX + 1];
    int nl = 0, nr = 0;
    nm_geom g;
    memset(&g, 0, sizeof g);
    if (p->groups > 0) {
        /* (n, group) lead; (channel in group, spatial...) rest */
        const int64_t cpg = x->dims[1] / p->groups;
        nm_dim n = nm_dim_of(ts, 0), grp, ch;
        grp.size = p->groups;
        ch.size = cpg;
        for (int t = 0; t < NM_SLOTS; t++) {
            const int64_t s1 = ts[t]->dims[1] == 1 ? 0 : ts[t]->strides[1];
            grp.st[t] = t == N_ST ? (ts[t]->dims[1] == 1 ? 0 : ts[t]->strides[1]) : s1 * cpg;
            ch.st[t] = t == N_ST ? 0 : s1;
        }
        lead[nl++] = n;
        lead[nl++] = grp;
        rest[nr++] = ch;
        for (int d = 2; d < x->rank; d++) rest[nr++] = nm_dim_of(ts, d);
        g.sets = nm_make_space(lead, nl);
        g.inner = nm_make_space(rest, nr);
        /* gradients: per channel (group, channel in group) over (n, spatial...) */
        nm_dim f2[2] = {grp, ch}, m[UDNN_DIM_MAX];
        int nm = 0;
        m[nm++] = n;
        for (int d = 2; d < x->rank; d++) m[nm++] = nm_dim_of(ts, d);
        g.feat = nm_make_space(f2, 2);
        g.memb = nm_make_space(m, nm);
    } else {
        const int nlead = x->rank - p->norm_dims;
        for (int d = 0; d < x->rank; d++) {
            if (d < nlead) lead[nl++] = nm_dim_of(ts, d);
            else rest[nr++] = nm_dim_of(ts, d);
        }
        g.sets = nm_make_space(lead, nl);
        g.inner = nm_make_space(rest, nr);
        /* gradients: per normalized position over the sets */
        g.feat = g.inner;
        g.memb = g.sets;
        g.rms = p->mode == UDNN_NORM_RMS;
    }
    return g;
}

/* ---- forward --------------------------------------------------------------------------- */

/* Offsets of item j of a set in the first NT slots. An item is one
 * element, or with V > 1 a 16-byte vector of V elements contiguous in the
 * data tensors: the inner space's last dim then counts vectors, and
 * element k of the vector has parameter offset + k * pstep. */
template <class I, int NT, int V>
__device__ __forceinline__ void nm_elem(const nm_space &s, I j, int64_t off[NT])
{
    udnn_gpu_space_offsets<I, NT>(s, j, off);
}

/* V consecutive elements at element offset `off` (V == 1: one). */
template <class T, int V>
__device__ __forceinline__ void nm_load(const T *p, int64_t off, typename io<T>::C (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = io<T>::ld(p[off]);
    } else {
        const udnn_gpu_vec<T> w = *(const udnn_gpu_vec<T> *)(p + off);
        for (int k = 0; k < V; k++) v[k] = udnn_gpu_pack_ld(w, k);
    }
}

template <class T, int V>
__device__ __forceinline__ void nm_store(T *p, int64_t off, const typename io<T>::C (&v)[V])
{
    if constexpr (V == 1) {
        p[off] = io<T>::st(v[0]);
    } else {
        udnn_gpu_vec<T> w;
        for (int k = 0; k < V; k++) w.v[k] = io<T>::st(v[k]);
        *(udnn_gpu_vec<T> *)(p + off) = w;
    }
}

/* A set's shifted sums over items lo, lo + tw, ... below hi (the
 * calling thread's share); sums in double for every type: a mean near 0
 * is a small remainder of them, yet saved to the tolerance of FLOAT
 * statistics (HALF and BFLOAT16 data's too). */
template <class T, class I, int V>
__device__ __forceinline__ void nm_fwd_sums(const nm_fwd_args<T> &a, const T *x, double shift,
                                            I lo, I hi, double &s1, double &s2)
{
    typedef typename io<T>::C C;
#pragma unroll 4
    for (I j = lo + (I)threadIdx.x; j < hi; j += (I)blockDim.x) {
        int64_t o[1];
        nm_elem<I, 1, V>(a.inner, j, o);
        C v[V];
        nm_load<T, V>(x, o[N_X], v);
        for (int k = 0; k < V; k++) nm_fwd_add((double)v[k], shift, s1, s2);
    }
}

/* y over items lo, lo + tw, ... below hi of the set at so. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_fwd_write(const nm_fwd_args<T> &a, const int64_t (&so)[NM_SLOTS],
                                             nm_stats<typename io<T>::C> f, I lo, I hi)
{
    typedef typename io<T>::C C;
    typedef typename udnn_gpu_param<T>::P P;
    const T *x = a.x + so[N_X];
    const P *scale = a.scale + so[N_P], *bias = a.bias != NULL ? a.bias + so[N_P] : NULL;
    T *y = a.y + so[N_OUT];
#pragma unroll 2
    for (I j = lo + (I)threadIdx.x; j < hi; j += (I)blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, j, o);
        C v[V];
        nm_load<T, V>(x, o[N_X], v);
        for (int k = 0; k < V; k++) {
            const int64_t po = o[N_P] + k * a.pstep;
            v[k] = nm_fwd_y(v[k], f.hi, f.lo, f.inv, (C)scale[po]);
            if (bias != NULL) v[k] += (C)bias[po];
        }
        nm_store<T, V>(y, o[N_OUT], v);
    }
}

/* nm_store, evict first where HINT (udnn_gpu_store_pack). */
template <bool HINT, class T, int V>
__device__ __forceinline__ void nm_store_hint(T *p, int64_t off, const typename io<T>::C (&v)[V])
{
    if constexpr (HINT) {
        udnn_gpu_pack<T, V> w;
        for (int k = 0; k < V; k++) w.v[k] = io<T>::st(v[k]);
        udnn_gpu_store_pack<true, T, V>(p + off, w);
    } else {
        nm_store<T, V>(p, off, v);
    }
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_fwd(nm_fwd_args<T> a)
{
    __shared__ double red[NM_RED_SLOTS];
    const int64_t set = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    const bool live = set < a.nsets;
    const I items = (I)a.inner.size;
    int64_t so[NM_SLOTS];
    udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)(live ? set : 0), so);
    const double shift = live ? nm_fwd_shift(a, a.x + so[N_X]) : 0.0;
    double s1 = 0.0, s2 = 0.0;
    if (live) nm_fwd_sums<T, I, V>(a, a.x + so[N_X], shift, I(0), items, s1, s2);
    s1 = nm_team_sum(s1, red);
    s2 = nm_team_sum(s2, red);
    if (!live) return;
    nm_fwd_write<T, I, V>(a, so, nm_fwd_finish(a, s1, s2, shift, so[N_ST], threadIdx.x == 0),
                          I(0), items);
}

/* Block b's share of a set split in a.chunks ranges of a.chunk items
 * (nm_split_chunks): its set, range k of the set's items, [lo, hi) (empty
 * past the end), and the set's offsets. A is nm_fwd_args or nm_bwd_args. */
template <class I> struct nm_part {
    int64_t set, k;
    I lo, hi;
    int64_t so[NM_SLOTS];
};

template <class I, class A> __device__ __forceinline__ nm_part<I> nm_part_of(const A &a, int64_t b)
{
    nm_part<I> r;
    r.set = b / a.chunks;
    r.k = b - r.set * a.chunks;
    const int64_t items = a.inner.size, l = r.k * a.chunk < items ? r.k * a.chunk : items;
    r.lo = (I)l;
    r.hi = (I)(items - l < a.chunk ? items : l + a.chunk);
    udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)r.set, r.so);
    return r;
}

/* Thread 0 puts block b's two team sums in partial[b][2]. */
__device__ __forceinline__ void nm_put_part(double *partial, int64_t b, double s1, double s2)
{
    if (threadIdx.x == 0) {
        partial[2 * b] = s1;
        partial[2 * b + 1] = s2;
    }
}

/* A split set's two sums: its ranges' partials joined in range order, so
 * that every block of the set gets the same bits. */
__device__ __forceinline__ void nm_join_parts(const double *partial, int64_t set, int64_t chunks,
                                              double &s1, double &s2)
{
    const double *p = partial + 2 * set * chunks;
    s1 = s2 = 0.0;
    for (int64_t i = 0; i < chunks; i++) {
        s1 += p[2 * i];
        s2 += p[2 * i + 1];
    }
}

/* Few long sets (nm_split_chunks): each set's items split into a.chunks
 * ranges of a.chunk, a block of one team each, in two launches.
 * nm_fwd_part: block b = set * chunks + k sums range k of its set into
 * a.partial[b][2]; range 0's block saves the set's shift (its first x)
 * after the partials: y may be x's buffer, and nm_fwd_split's range 0
 * overwrites that element while the set's other blocks may yet read it. */
template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_fwd_part(nm_fwd_args<T> a)
{
    __shared__ double red[NM_RED_SLOTS];
    const nm_part<I> p = nm_part_of<I>(a, blockIdx.x);
    const T *x = a.x + p.so[N_X];
    const double shift = nm_fwd_shift(a, x);
    double s1 = 0.0, s2 = 0.0;
    nm_fwd_sums<T, I, V>(a, x, shift, p.lo, p.hi, s1, s2);
    s1 = nm_team_sum(s1, red);
    s2 = nm_team_sum(s2, red);
    nm_put_part(a.partial, blockIdx.x, s1, s2);
    if (p.k == 0 && threadIdx.x == 0) a.partial[2 * a.nsets * a.chunks + p.set] = shift;
}

/* nm_fwd_split: each block joins its set's partials in range order (every
 * thread alike), then writes its range; blocks run last range first, so
 * that what nm_fwd_part read last is still in L2. */
template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_fwd_split(nm_fwd_args<T> a)
{
    const nm_part<I> p = nm_part_of<I>(a, (int64_t)gridDim.x - 1 - blockIdx.x);
    double s1, s2;
    nm_join_parts(a.partial, p.set, a.chunks, s1, s2);
    const double shift = a.partial[2 * a.nsets * a.chunks + p.set];
    nm_fwd_write<T, I, V>(a, p.so,
                          nm_fwd_finish(a, s1, s2, shift, p.so[N_ST], p.k == 0 && threadIdx.x == 0),
                          p.lo, p.hi);
}

/* The few long sets' second pass by groups of sets: where every set has
 * the same parameters (layer and RMS norm, whose scale and bias hold one
 * value per element of a set), a block takes one range of items of a
 * group's sets and loads each item's parameters once for them all.
 * nm_fwd_split's blocks each take one set, so each set's blocks load the
 * parameters again: for layer norm over 64 sets of 802816 f16 elements,
 * float scale and bias are 64 bytes through L2 for each 16 bytes of x.
 * On the H200 that forward went from 1153 to 1837 GB/s, f32 from 1950
 * to 2167, RMS bf16 (32 sets) from 1219 to 1586. The backward's first
 * pass by groups lost (nm_set_flow's comment). */
#define NM_SET_THREADS 256

/* The sets of a group for T: 8 of the 16-bit types, 4 of FLOAT and 2 of
 * DOUBLE, 16 bytes a set in flight per thread either way (more spill in
 * FLOAT's and DOUBLE's double arithmetic). */
template <class T> __host__ __device__ constexpr int nm_set_group() { return 16 / (int)sizeof(T); }

/* The grouped pass's grid: `ranges` ranges of `per` items for each group
 * of G sets; block b takes range b % ranges of group b / ranges, blocks
 * running last first as nm_fwd_split's. */
typedef struct {
    int64_t ranges, per;
} nm_set_grid;

/* Block b's group of G sets from s0 (gs of them) and its item range
 * [lo, hi). */
struct nm_set_part {
    int64_t s0, k;
    int gs;
    int64_t lo, hi;
};

template <int G>
__device__ __forceinline__ nm_set_part nm_set_part_of(int64_t nsets, int64_t items,
                                                      const nm_set_grid &r, int64_t b)
{
    nm_set_part p;
    const int64_t grp = b / r.ranges;
    p.k = b - grp * r.ranges;
    p.s0 = grp * G;
    p.gs = (int)(nsets - p.s0 < G ? nsets - p.s0 : G);
    p.lo = p.k * r.per < items ? p.k * r.per : items;
    p.hi = items - p.lo < r.per ? items : p.lo + r.per;
    return p;
}

/* Item o's pack of each of a group's G sets, whose offsets in p are
 * base[0 .. gs - 1]: without branches, a group's missing sets loading set
 * 0's item again, so that the G loads can be in flight together. HINT:
 * evict first (udnn_gpu_load_pack). */
template <bool HINT, class T, int V, int G>
__device__ __forceinline__ void nm_group_load(const T *p, const int64_t (&base)[G], int gs,
                                              int64_t o, udnn_gpu_pack<T, V> (&r)[G])
{
#pragma unroll
    for (int s = 0; s < G; s++) r[s] = udnn_gpu_load_pack<HINT, T, V>(p + base[s < gs ? s : 0] + o);
}

/* Set p.s0 + s of a grouped block (s below p.gs), in every lane of the
 * warp that calls it: its offsets and its ranges' two sums joined, lane l
 * adding partials l, l + ws, ... in order and the lanes' sums then in a
 * butterfly (a + b and b + a are the same bits), so that every block of
 * the set gets the same sums, and the partials are read ws at a time
 * (from L2: in nm_set_flow other blocks of the launch wrote them). A is
 * nm_fwd_args or nm_bwd_args. */
template <class I, class A>
__device__ __forceinline__ void nm_set_sums(const A &a, const nm_set_part &p, int s,
                                            int64_t (&so)[NM_SLOTS], double &s1, double &s2)
{
    const int64_t set = p.s0 + s;
    const int ws = udnnGpuWarpSize, lane = threadIdx.x % ws;
    udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)set, so);
    const double *q = a.partial + 2 * set * a.chunks;
    s1 = s2 = 0.0;
    for (int64_t i = lane; i < a.chunks; i += ws) {
        s1 += udnnGpuLoadCoherent(q + 2 * i);
        s2 += udnnGpuLoadCoherent(q + 2 * i + 1);
    }
    for (int m = ws / 2; m > 0; m /= 2) {
        s1 += udnnGpuShflXor(s1, m);
        s2 += udnnGpuShflXor(s2, m);
    }
}

/* Set p.s0 + s's statistics from its partials and shift, in every lane of
 * the warp that calls it (nm_set_sums), and its offsets; the lane where
 * `save` saves them. */
template <class T, class I>
__device__ __forceinline__ nm_stats<typename io<T>::C>
nm_group_stats(const nm_fwd_args<T> &a, const nm_set_part &p, int s, int64_t (&so)[NM_SLOTS],
               bool save)
{
    double s1, s2;
    nm_set_sums<I>(a, p, s, so, s1, s2);
    const double shift = udnnGpuLoadCoherent(a.partial + 2 * a.nsets * a.chunks + p.s0 + s);
    return nm_fwd_finish(a, s1, s2, shift, so[N_ST], save);
}

/* y over p's item range of p's sets, their partials and shifts in.
 * HINT: x's loads and y's stores evict first (nm_set_flow). */
template <class T, class I, int V, bool HINT = false>
__device__ __forceinline__ void nm_group_write(const nm_fwd_args<T> &a, const nm_set_part &p)
{
    typedef typename io<T>::C C;
    constexpr int G = nm_set_group<T>();
    __shared__ nm_stats<C> st[G];
    __shared__ int64_t xo[G], yo[G];
    /* a warp a set */
    const int ws = udnnGpuWarpSize, lane = threadIdx.x % ws;
    for (int s = threadIdx.x / ws; s < p.gs; s += blockDim.x / ws) {
        int64_t so[NM_SLOTS];
        const nm_stats<C> f = nm_group_stats<T, I>(a, p, s, so, p.k == 0 && lane == 0);
        if (lane == 0) {
            st[s] = f;
            xo[s] = so[N_X];
            yo[s] = so[N_OUT];
        }
    }
    __syncthreads();
    for (I j = (I)p.lo + (I)threadIdx.x; j < (I)p.hi; j += (I)blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, j, o);
        C sc[V], bi[V];
        for (int k = 0; k < V; k++) {
            const int64_t po = o[N_P] + k * a.pstep;
            sc[k] = (C)a.scale[po];
            bi[k] = a.bias != NULL ? (C)a.bias[po] : C(0);
        }
        /* every set's loads in flight before the first store (y may be
         * x's buffer, so the compiler would not move them past one) */
        udnn_gpu_pack<T, V> xr[G];
        nm_group_load<HINT>(a.x, xo, p.gs, o[N_X], xr);
        /* y as nm_fwd_write computes it */
#pragma unroll
        for (int s = 0; s < G; s++) {
            if (s >= p.gs) break;
            const nm_stats<C> f = st[s];
            C v[V];
            for (int k = 0; k < V; k++) {
                v[k] = nm_fwd_y((C)udnn_gpu_pack_ld(xr[s], k), f.hi, f.lo, f.inv, sc[k]);
                if (a.bias != NULL) v[k] += bi[k];
            }
            nm_store_hint<HINT, T, V>(a.y + yo[s], o[N_OUT], v);
        }
    }
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_SET_THREADS, 2) nm_fwd_sets(nm_fwd_args<T> a, nm_set_grid r)
{
    const int64_t b = (int64_t)gridDim.x - 1 - blockIdx.x;
    nm_group_write<T, I, V>(a, nm_set_part_of<nm_set_group<T>()>(a.nsets, a.inner.size, r, b));
}

/* ---- backward: dx ---------------------------------------------------------------------------- */

template <class T> struct nm_bwd_args {
    typedef typename udnn_gpu_param<T>::P P;
    nm_space sets, inner; /* inner in items (see nm_elem) */
    int64_t nsets, size, pstep;
    int rms;
    const T *x, *dy;
    T *dx;
    const P *scale;
    const P *mean, *inv;   /* mean NULL for RMS */
    int64_t chunks, chunk; /* split sets, as nm_fwd_args */
    double *partial;
};

/* With g = dy * scale and xhat = (x - mean) * inv over the set:
 * layer and group: dx = inv * (g - mean(g) - xhat * mean(g * xhat));
 * RMS:             dx = inv * (g - xhat * mean(g * xhat)).
 * The set at so: its mean and inv (W, nm_wide's type). */
template <class W> struct nm_bwd_set {
    W mean, inv;
};

template <class T>
__device__ __forceinline__ nm_bwd_set<typename nm_wide<T>::W>
nm_bwd_set_of(const nm_bwd_args<T> &a, const int64_t (&so)[NM_SLOTS])
{
    typedef typename nm_wide<T>::W W;
    nm_bwd_set<W> r;
    r.mean = a.mean != NULL ? (W)a.mean[so[N_ST]] : W(0);
    r.inv = (W)a.inv[so[N_ST]];
    return r;
}

/* g of an element dy with its scale at po, rounded alone: the sums and dx
 * take the same bits */
template <class W, class P> __device__ __forceinline__ W nm_bwd_g(W dy, const P *scale, int64_t po)
{
    return udnnGpuMulRn(dy, (W)scale[po]);
}

template <class W> __device__ __forceinline__ W nm_bwd_xhat(W x, const nm_bwd_set<W> &st)
{
    return (x - st.mean) * st.inv;
}

/* What dx takes of a set: its mean and inv, mean(g) and mean(g * xhat). */
template <class W> struct nm_bwd_stats {
    W mean, inv, mean_g, mean_gx;
};

/* The calling thread's share of sum g and sum g * xhat over items lo, lo
 * + tw, ... below hi. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_bwd_sums(const nm_bwd_args<T> &a, const int64_t (&so)[NM_SLOTS],
                                            nm_bwd_set<typename nm_wide<T>::W> st, I lo, I hi,
                                            typename nm_wide<T>::W &sg,
                                            typename nm_wide<T>::W &sgx)
{
    typedef typename nm_wide<T>::W W;
    typedef typename io<T>::C C;
    const T *x = a.x + so[N_X], *dy = a.dy + so[N_DY];
    const typename udnn_gpu_param<T>::P *scale = a.scale + so[N_P];
#pragma unroll 2
    for (I j = lo + (I)threadIdx.x; j < hi; j += (I)blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, j, o);
        C xv[V], gv[V];
        nm_load<T, V>(x, o[N_X], xv);
        nm_load<T, V>(dy, o[N_DY], gv);
        for (int k = 0; k < V; k++) {
            const W g = nm_bwd_g((W)gv[k], scale, o[N_P] + k * a.pstep);
            sg += g;
            sgx += g * nm_bwd_xhat((W)xv[k], st);
        }
    }
}

/* dx over items lo, lo + tw, ... below hi, from the set's sums. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_bwd_write(const nm_bwd_args<T> &a, const int64_t (&so)[NM_SLOTS],
                                             nm_bwd_set<typename nm_wide<T>::W> st, double sg,
                                             double sgx, I lo, I hi)
{
    typedef typename nm_wide<T>::W W;
    typedef typename io<T>::C C;
    const T *x = a.x + so[N_X], *dy = a.dy + so[N_DY];
    const typename udnn_gpu_param<T>::P *scale = a.scale + so[N_P];
    const double n = (double)a.size;
    const W mean_g = a.rms ? W(0) : (W)(sg / n), mean_gx = (W)(sgx / n);
    T *dx = a.dx + so[N_OUT];
#pragma unroll 2
    for (I j = lo + (I)threadIdx.x; j < hi; j += (I)blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, j, o);
        C xv[V], gv[V];
        nm_load<T, V>(x, o[N_X], xv);
        nm_load<T, V>(dy, o[N_DY], gv);
        for (int k = 0; k < V; k++) {
            const W xhat = nm_bwd_xhat((W)xv[k], st);
            const W g = nm_bwd_g((W)gv[k], scale, o[N_P] + k * a.pstep);
            xv[k] = (C)nm_bwd_dx(g, xhat, st.inv, mean_g, mean_gx);
        }
        nm_store<T, V>(dx, o[N_OUT], xv);
    }
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_bwd(nm_bwd_args<T> a)
{
    typedef typename nm_wide<T>::W W;
    __shared__ W red[NM_RED_SLOTS];
    const int64_t set = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    const bool live = set < a.nsets;
    const I items = (I)a.inner.size;
    int64_t so[NM_SLOTS];
    udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)(live ? set : 0), so);
    nm_bwd_set<W> st = {W(0), W(0)};
    if (live) st = nm_bwd_set_of<T>(a, so);
    W sg = W(0), sgx = W(0);
    if (live) nm_bwd_sums<T, I, V>(a, so, st, I(0), items, sg, sgx);
    sg = nm_team_sum(sg, red);
    sgx = nm_team_sum(sgx, red);
    if (!live) return;
    nm_bwd_write<T, I, V>(a, so, st, (double)sg, (double)sgx, I(0), items);
}

/* Few long sets, as nm_fwd_part and nm_fwd_split: the sums of range k of
 * a set into a.partial[set * chunks + k][2] (in double), then dx by range,
 * last range first. */
template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_bwd_part(nm_bwd_args<T> a)
{
    typedef typename nm_wide<T>::W W;
    __shared__ W red[NM_RED_SLOTS];
    const nm_part<I> p = nm_part_of<I>(a, blockIdx.x);
    W sg = W(0), sgx = W(0);
    nm_bwd_sums<T, I, V>(a, p.so, nm_bwd_set_of<T>(a, p.so), p.lo, p.hi, sg, sgx);
    sg = nm_team_sum(sg, red);
    sgx = nm_team_sum(sgx, red);
    nm_put_part(a.partial, blockIdx.x, (double)sg, (double)sgx);
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_bwd_split(nm_bwd_args<T> a)
{
    const nm_part<I> p = nm_part_of<I>(a, (int64_t)gridDim.x - 1 - blockIdx.x);
    double sg, sgx;
    nm_join_parts(a.partial, p.set, a.chunks, sg, sgx);
    nm_bwd_write<T, I, V>(a, p.so, nm_bwd_set_of<T>(a, p.so), sg, sgx, p.lo, p.hi);
}

/* Set p.s0 + s's nm_bwd_stats from its partials, in every lane of the
 * warp that calls it (nm_set_sums), and its offsets. */
template <class T, class I>
__device__ __forceinline__ nm_bwd_stats<typename nm_wide<T>::W>
nm_group_stats(const nm_bwd_args<T> &a, const nm_set_part &p, int s, int64_t (&so)[NM_SLOTS])
{
    typedef typename nm_wide<T>::W W;
    double sg, sgx;
    nm_set_sums<I>(a, p, s, so, sg, sgx);
    const nm_bwd_set<W> st = nm_bwd_set_of<T>(a, so);
    const double n = (double)a.size;
    return {st.mean, st.inv, a.rms ? W(0) : (W)(sg / n), (W)(sgx / n)};
}

/* nm_bwd_split by groups of sets (as nm_fwd_sets): dx over p's item range
 * of p's sets, each item's scale loaded once for them, from their
 * partials; dx as nm_bwd_write computes it. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_group_write(const nm_bwd_args<T> &a, const nm_set_part &p)
{
    typedef typename nm_wide<T>::W W;
    typedef typename io<T>::C C;
    constexpr int G = nm_set_group<T>();
    __shared__ nm_bwd_stats<W> sw[G];
    __shared__ int64_t xo[G], dyo[G], dxo[G];
    /* a warp a set */
    const int ws = udnnGpuWarpSize;
    for (int s = threadIdx.x / ws; s < p.gs; s += blockDim.x / ws) {
        int64_t so[NM_SLOTS];
        const nm_bwd_stats<W> f = nm_group_stats<T, I>(a, p, s, so);
        if (threadIdx.x % ws != 0) continue;
        sw[s] = f;
        xo[s] = so[N_X];
        dyo[s] = so[N_DY];
        dxo[s] = so[N_OUT];
    }
    __syncthreads();
    for (I j = (I)p.lo + (I)threadIdx.x; j < (I)p.hi; j += (I)blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, j, o);
        W sc[V];
        for (int k = 0; k < V; k++) sc[k] = (W)a.scale[o[N_P] + k * a.pstep];
        /* every set's loads in flight before the first store (as nm_fwd_sets) */
        udnn_gpu_pack<T, V> xr[G], gr[G];
        nm_group_load<false>(a.x, xo, p.gs, o[N_X], xr);
        nm_group_load<false>(a.dy, dyo, p.gs, o[N_DY], gr);
#pragma unroll
        for (int s = 0; s < G; s++) {
            if (s >= p.gs) break;
            const nm_bwd_set<W> st = {sw[s].mean, sw[s].inv};
            const W mean_g = sw[s].mean_g, mean_gx = sw[s].mean_gx;
            C v[V];
            for (int k = 0; k < V; k++) {
                const W xhat = nm_bwd_xhat((W)udnn_gpu_pack_ld(xr[s], k), st);
                const W g = udnnGpuMulRn((W)udnn_gpu_pack_ld(gr[s], k), sc[k]);
                v[k] = (C)nm_bwd_dx(g, xhat, st.inv, mean_g, mean_gx);
            }
            nm_store<T, V>(a.dx + dxo[s], o[N_OUT], v);
        }
    }
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_SET_THREADS, 2) nm_bwd_sets(nm_bwd_args<T> a, nm_set_grid r)
{
    const int64_t b = (int64_t)gridDim.x - 1 - blockIdx.x;
    nm_group_write<T, I, V>(a, nm_set_part_of<nm_set_group<T>()>(a.nsets, a.inner.size, r, b));
}

/* The few long sets' forward in one launch (nm_set_flow), for 4- and
 * 8-byte types where the groups serve: nm_fwd_part's sums and
 * nm_fwd_sets' output as the reduce and apply items of a flow
 * (udnn_gpu_flow), item b being block b's of nm_fwd_sets (group b /
 * ranges, range b % ranges). The two launches read x twice from DRAM
 * where the sets outgrow L2, less the last part's ranges, which
 * nm_fwd_sets reads first; here an apply item reads its range about `lag`
 * tickets after its reduce item did, and marks x (its last read) and y
 * evict first, so that L2 keeps the ranges still to be applied. H200,
 * layer norm forward over sets of 256 x 56 x 56, GB/s, two launches
 * against the flow (without the marks): f32 64 sets 2172 /
 * 2137 against 2374 / 2418 (2335 / 2339), 32 sets 1975 / 1976 against
 * 2024 / 2104, 16 sets 1609 / 1660 against 1606 / 1645; RMS f32 64 sets
 * 2162 / 2197 against 2407 / 2457; f64 32 sets 2192 / 2226 against 2254 /
 * 2253. 16-bit types lost: f16 64 sets 1868 / 1834 against 1801 / 1817
 * (1777 / 1740), 16 sets 1333 / 1404 against 1070 / 1116, RMS bf16 32
 * sets 1580 / 1590 against 1257 / 1302, f16 128 sets level (2150 / 2148,
 * 2143 / 2151): half the bytes for the same reduce and apply work.
 *
 * Tried and not kept (H200, 64 sets of 256 x 56 x 56 unless said, GB/s,
 * two passes against the kept kernels in the same call):
 * - a group's last reduce item finishing its sets' statistics once, where
 *   each apply item joins all of its sets' range partials: f32 forward
 *   2383 / 2349 against 2413 / 2401;
 * - the flow for 16-bit types as well, with that finish: f16 forward 1851 /
 *   1792 against 1886 / 1855, RMS bf16 32 sets 1344 / 1308 against 1569 /
 *   1636;
 * - the backward's first pass by groups (each item's scale loaded once for
 *   the group, the sums in registers): f16 1046 / 1048 against 1004 /
 *   1008 (nm_bwd_fused, below, took 1228 / 1230), f32 1580 / 1577 against
 *   1584 / 1599, f64 32 sets 1616 / 1624 against 1638 / 1652;
 * - that pass and nm_bwd_sets as one flow: f32 1618 / 1578, f64 32 sets
 *   1683 / 1661, within the runs' spread (the copy moved 6% between
 *   passes), and f16 1061 / 1060, below nm_bwd_fused;
 * - a set held in the shared memory of a thread-block cluster of up to 16
 *   blocks (as bn_cluster holds a channel), x read once: f16 forward 1041
 *   / 1028 against 1783 / 1839, RMS bf16 32 sets 1252 / 1242 against 1601
 *   / 1551, group norm 16 x 320 x 128 x 128 f16 1859 / 1841 against 1893
 *   / 1870, f32 2232 / 2197 against 2177 / 2203; only the launch-bound 1 x
 *   320 x 128 x 128 f16 gained, 720 / 666 against 612 / 600 (one launch
 *   where there were two). A cluster's blocks load, join and write in
 *   turn with nothing to cover the join, and few clusters of 16 run at
 *   once, where the split kernels keep many blocks in flight;
 * - the backward likewise, x and dy held, for group norm with the
 *   parameter gradients from the held data (x and dy read once where
 *   they are read three times): 32 x 256 x 112 x 112 f16 1270 / 1245
 *   against 1433 / 1432, 4 x 256 x 112 x 112 864 / 844 against 899 / 910. */
struct nm_flow {
    uint32_t *ticket, *done; /* [1], [groups]: zero at the launch */
    uint32_t n, lag;         /* items of each kind, the lag (udnn_gpu_flow) */
};

/* p's sets' shifted sums over its item range, summed over the block into
 * a.partial[set * a.chunks + p.k] (a.chunks: the ranges); range 0's item
 * also leaves each set's shift after the partials, as nm_fwd_part does. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_group_sums(const nm_fwd_args<T> &a, const nm_set_part &p,
                                              double *red)
{
    constexpr int G = nm_set_group<T>();
    __shared__ double sh[G];
    __shared__ int64_t xo[G];
    if ((int)threadIdx.x < p.gs) {
        int64_t so[NM_SLOTS];
        udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)(p.s0 + threadIdx.x), so);
        xo[threadIdx.x] = so[N_X];
        sh[threadIdx.x] = nm_fwd_shift(a, a.x + so[N_X]);
    }
    __syncthreads();
    double q[2 * G];
#pragma unroll
    for (int i = 0; i < 2 * G; i++) q[i] = 0.0;
    for (I j = (I)p.lo + (I)threadIdx.x; j < (I)p.hi; j += (I)blockDim.x) {
        int64_t o[1];
        nm_elem<I, 1, V>(a.inner, j, o);
        /* a group's missing sets' loads (nm_group_load) add nothing */
        udnn_gpu_pack<T, V> xr[G];
        nm_group_load<false>(a.x, xo, p.gs, o[N_X], xr);
#pragma unroll
        for (int s = 0; s < G; s++) {
            double s1 = 0.0, s2 = 0.0;
            for (int k = 0; k < V; k++)
                nm_fwd_add((double)udnn_gpu_pack_ld(xr[s], k), sh[s < p.gs ? s : 0], s1, s2);
            q[2 * s] += s < p.gs ? s1 : 0.0;
            q[2 * s + 1] += s < p.gs ? s2 : 0.0;
        }
    }
    nm_row_sum<double, 2 * G>(q, red, 0);
    if (threadIdx.x != 0) return;
#pragma unroll /* q in registers: constant indices */
    for (int s = 0; s < G; s++) {
        if (s >= p.gs) break;
        const int64_t set = p.s0 + s;
        a.partial[2 * (set * a.chunks + p.k)] = q[2 * s];
        a.partial[2 * (set * a.chunks + p.k) + 1] = q[2 * s + 1];
        if (p.k == 0) a.partial[2 * a.nsets * a.chunks + set] = sh[s];
    }
}

/* nm_group_sums and nm_group_write as the reduce and apply items of a
 * flow: the count of group grp reaches r.ranges when its partials are in. */
template <class T, class I, int V>
__global__ void __launch_bounds__(NM_SET_THREADS, 2)
    nm_set_flow(nm_fwd_args<T> a, nm_set_grid r, nm_flow f)
{
    constexpr int G = nm_set_group<T>();
    __shared__ double red[2 * NM_ROW_WARPS * 2 * G];
    __shared__ uint32_t held;
    udnn_gpu_flow(f.ticket, f.n, f.lag, &held, [&](bool reduce, uint32_t item) {
        const nm_set_part p = nm_set_part_of<G>(a.nsets, a.inner.size, r, item);
        const int64_t grp = item / r.ranges;
        if (reduce) {
            nm_group_sums<T, I, V>(a, p, red);
            if (threadIdx.x == 0) {
                __threadfence(); /* the partials before the count */
                atomicAdd(&f.done[grp], 1u);
            }
            return;
        }
        if (threadIdx.x == 0) {
            udnn_gpu_spin_until(&f.done[grp], (uint32_t)r.ranges);
            __threadfence(); /* the count said the group is in: read it after it */
        }
        __syncthreads();
        nm_group_write<T, I, V, true>(a, p);
    });
}

/* The few long sets' backward of 16-bit types with its parameter
 * gradients in the same read, where every set has the same parameters and
 * each element of a set its own (layer and RMS norm over all of a set's
 * dims): thread j takes item j of every set in set order, so that its
 * dscale and dbias terms over the sets (nm_grad's, in double) are whole
 * in its registers and go straight to the outputs, and nm_grad's own
 * read of x and dy is gone (three reads of x and dy become two). Its sum
 * g and sum g * xhat of each set (nm_bwd_sums' terms) go through the
 * warp's butterfly into red[warp][set], then the block's, in warp order,
 * into a.partial[set * a.chunks + block] (a.chunks: the grid); the last
 * block to finish joins each set's partials in block order into
 * f.joined[set][2], for nm_bwd_sets with one chunk. H200,
 * layer norm backward over 64 sets of 256 x 56 x 56, GB/s, two passes:
 * f16 1228 / 1230 against 1004 / 1008 with nm_grad, nm_bwd_part and
 * nm_bwd_sets; f32 lost, 1479 / 1498 against 1584 / 1599, and f64 (32
 * sets) 1449 / 1465 against 1638 / 1652, so that 4- and 8-byte types keep
 * the three kernels.
 * The grid is one item a thread: at 64 sets of 802816 f16 elements 392
 * blocks. Built for 2 blocks a multiprocessor (112 registers) they took a
 * wave and a half, at a quarter of the warps a multiprocessor holds
 * (ncu: DRAM 27% busy, issue 35%, 165 of the backward's 254 us); built
 * for 3 (80 registers, no spill) they fit one wave: f16 1561 / 1561
 * against 1242 / 1232, RMS bf16 32 sets 1331 / 1326 against 1065 / 1057,
 * f16 16 sets 1016 / 1055 against 920 / 898. For 4 (64 registers; the
 * int64_t index's form spills 76 bytes): 1493 / 1507. Terms in float
 * instead of double, a yardstick that fails nm_grad's cancelling sums,
 * took 1654 / 1617.
 * At 3 blocks for 4- and 8-byte types too: f32 64 sets 1610 / 1619
 * against the three kernels' 1598 / 1596 (level), f64 32 sets 1413 /
 * 1385 against 1652 / 1645; they keep the three kernels. */

template <class T> struct nm_fused {
    typedef typename udnn_gpu_param<T>::P P;
    P *dscale, *dbias; /* dbias NULL for RMS */
    double *joined;    /* [sets][2] */
    uint32_t *count;   /* blocks finished: zero at the launch */
};

#ifndef NM_FUSED_FLUSH
#define NM_FUSED_FLUSH 8
#endif
/* Sets an iteration of nm_bwd_fused: their loads in
 * flight together, their sums of g and g xhat over a warp by one
 * transposing butterfly (nm_warp_sum_t: 5 shuffles a set where each sum's
 * own took 10). Each set's loads had waited for the last set's sums.
 * H200, two passes, bursts, 64 x 256 x 56 x 56 (copy 4018 GB/s): layer
 * f16 1843 / 1850 GB/s against 1744 / 1743 a set at a time, RMS bf16 32 x
 * 256 x 56 x 56 1598 / 1608 against 1530 / 1535; 4 sets 1838 / 1831 and
 * 1576 / 1580. */
#ifndef NM_FUSED_SETS
#define NM_FUSED_SETS 2
#endif
/* nm_bwd_fused's static shared memory, in doubles: the dscale and dbias
 * sums, [2][V][threads]. In registers they took 32 of the 80 that three
 * blocks a multiprocessor leave, and two sets an iteration spilled. */
template <int V> __host__ __device__ constexpr int nm_fused_held()
{
    return 2 * V * NM_SET_THREADS;
}
template <class T, class I, int V>
__global__ void __launch_bounds__(NM_SET_THREADS, 3) nm_bwd_fused(nm_bwd_args<T> a, nm_fused<T> f)
{
    static_assert(sizeof(T) == 2, "the 16-bit types only: the others keep the three kernels");
    typedef typename nm_wide<T>::W W;
    typedef typename udnn_gpu_param<T>::P P;
    W *red = (W *)nm_dyn_smem; /* [warps][sets][2] */
    __shared__ bool last;
    const int ws = udnnGpuWarpSize, warp = threadIdx.x / ws, lane = threadIdx.x % ws;
    const int warps = blockDim.x / ws;
    const I j = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
    const bool live = j < (I)a.inner.size;
    int64_t o[4] = {0, 0, 0, 0};
    if (live) nm_elem<I, 4, V>(a.inner, j, o);
    /* dscale's and dbias's terms in float (W) over NM_FUSED_FLUSH sets
     * before the double sums, as nm_bwd_rows' FW: in double each element
     * took two conversions and three double operations. H200, two passes,
     * bursts, 64 x 256 x 56 x 56 (copy 4002 GB/s): layer f16 1751 / 1753
     * GB/s against 1678 / 1677, RMS bf16 32 x 256 x 56 x 56 1531 / 1544
     * against 1477 / 1475 */
    constexpr int G = NM_FUSED_SETS;
    W sc[V], pds[V], pdb[V];
    __shared__ double sums[nm_fused_held<V>()]; /* dscale's, then dbias's */
    double *const ds = sums + threadIdx.x, *const db = ds + V * NM_SET_THREADS;
    for (int k = 0; k < V; k++) {
        sc[k] = live ? (W)a.scale[o[N_P] + k * a.pstep] : W(0);
        pds[k] = pdb[k] = W(0);
        ds[k * NM_SET_THREADS] = db[k * NM_SET_THREADS] = 0.0;
    }
    int pending = 0;
    for (int64_t s0 = 0; s0 < a.nsets; s0 += G) {
        /* the group's loads in flight together, then its sums */
        udnn_gpu_pack<T, V> xr[G], gr[G];
        nm_bwd_set<W> st[G];
#pragma unroll
        for (int i = 0; i < G; i++) {
            st[i].mean = st[i].inv = W(0);
            if (s0 + i < a.nsets) {
                int64_t so[NM_SLOTS];
                udnn_gpu_space_offsets<I, NM_SLOTS>(a.sets, (I)(s0 + i), so);
                st[i] = nm_bwd_set_of<T>(a, so);
                if (live) {
                    xr[i] = *(const udnn_gpu_pack<T, V> *)(a.x + so[N_X] + o[N_X]);
                    gr[i] = *(const udnn_gpu_pack<T, V> *)(a.dy + so[N_DY] + o[N_DY]);
                }
            }
        }
        W q[2 * G]; /* set s0 + i's sums of g and g xhat: q[2i], q[2i + 1] */
#pragma unroll
        for (int i = 0; i < G; i++) {
            W tg = W(0), tgx = W(0);
            if (live && s0 + i < a.nsets)
                for (int k = 0; k < V; k++) {
                    const W xv = udnn_gpu_pack_ld(xr[i], k), gv = udnn_gpu_pack_ld(gr[i], k);
                    const W g = udnnGpuMulRn(gv, sc[k]), xh = nm_bwd_xhat(xv, st[i]);
                    tg += g;
                    tgx += g * xh;
                    pds[k] += gv * xh;
                    pdb[k] += gv;
                }
            q[2 * i] = tg;
            q[2 * i + 1] = tgx;
        }
        pending += G;
        if (pending >= NM_FUSED_FLUSH || s0 + G >= a.nsets) {
            for (int k = 0; k < V; k++) {
                ds[k * NM_SET_THREADS] += (double)pds[k];
                db[k * NM_SET_THREADS] += (double)pdb[k];
                pds[k] = pdb[k] = W(0);
            }
            pending = 0;
        }
        constexpr int per_q = udnnGpuWarpSize / (2 * G);
        const W t = nm_warp_sum_t<W, 2 * G>(q, lane);
        const int qi = lane / per_q;
        if (lane % per_q == 0 && s0 + qi / 2 < a.nsets) red[2 * (warp * a.nsets + s0) + qi] = t;
    }
    if (live)
        for (int k = 0; k < V; k++) {
            const int64_t po = o[N_P] + k * a.pstep;
            f.dscale[po] = (P)ds[k * NM_SET_THREADS];
            if (f.dbias != NULL) f.dbias[po] = (P)db[k * NM_SET_THREADS];
        }
    __syncthreads();
    for (int64_t s = threadIdx.x; s < a.nsets; s += blockDim.x) {
        W q0 = W(0), q1 = W(0);
        for (int w = 0; w < warps; w++) {
            q0 += red[2 * (w * a.nsets + s)];
            q1 += red[2 * (w * a.nsets + s) + 1];
        }
        a.partial[2 * (s * a.chunks + blockIdx.x)] = (double)q0;
        a.partial[2 * (s * a.chunks + blockIdx.x) + 1] = (double)q1;
    }
    __threadfence(); /* the partials before the count */
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(f.count, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence(); /* the count said every partial is in: read them after it */
    for (int64_t s = threadIdx.x; s < a.nsets; s += blockDim.x) {
        double q0 = 0.0, q1 = 0.0;
        for (int64_t b = 0; b < a.chunks; b++) {
            q0 += udnnGpuLoadCoherent(a.partial + 2 * (s * a.chunks + b));
            q1 += udnnGpuLoadCoherent(a.partial + 2 * (s * a.chunks + b) + 1);
        }
        f.joined[2 * s] = q0;
        f.joined[2 * s + 1] = q1;
    }
}

/* ---- host side ----------------------------------------------------------------------------- */

/* Team width for sets of `size` elements: the next power of two up to 32,
 * a warp's worth up to 2048 elements, then wider. */
static int nm_team(int64_t size)
{
    if (size <= 32) {
        int tw = 1;
        while (tw < size) tw *= 2;
        return tw;
    }
    if (size <= 2048) return 32;
    if (size <= 8192) return 128;
    return NM_MAX_TEAM;
}

/* Whether the team kernels may move 16 bytes per access in the first nt
 * slots: the last inner dim is contiguous there and a whole number of
 * vectors, every other step lands on a vector boundary, and the buffers
 * are aligned. Then *items is the inner space in vectors. */
static int nm_vectorize(const nm_space *sets, const nm_space *inner, const void *const *ptrs,
                        const int *slots, int nt, size_t elem, nm_space *items)
{
    const int64_t V = (int64_t)(16 / elem);
    const int last = inner->nd - 1;
    if (last < 0 || inner->dim[last] % V != 0) return 0;
    for (int i = 0; i < nt; i++) {
        const int t = slots[i];
        if (inner->st[t][last] != 1 || !udnn_gpu_aligned16(ptrs[i])) return 0;
        for (int d = 0; d < last; d++)
            if (inner->st[t][d] % V != 0) return 0;
        for (int d = 0; d < sets->nd; d++)
            if (sets->st[t][d] % V != 0) return 0;
    }
    *items = *inner;
    items->dim[last] /= V;
    items->size /= V;
    for (int t = 0; t < NM_SLOTS; t++) items->st[t][last] *= V;
    return 1;
}

static void nm_team_launch(int64_t nsets, int64_t size, dim3 *grid, dim3 *block)
{
    const int tw = nm_team(size);
    const int ty = tw >= UDNN_GPU_BLOCK ? 1 : UDNN_GPU_BLOCK / tw;
    *block = dim3((unsigned)tw, (unsigned)ty);
    *grid = dim3((unsigned)((nsets + ty - 1) / ty));
}

/* Ranges a set for the split kernels (nm_fwd_part and nm_fwd_split,
 * nm_bwd_part and nm_bwd_split) where sets are few and long: a team a set
 * leaves multiprocessors idle (H100, 64 sets of 802816 f16 elements:
 * forward 597 GB/s, backward 570; split 1066 and 709, where 4 blocks a
 * multiprocessor gave 898 and 655). Enough blocks for NM_SPLIT_BLOCKS of
 * NM_MAX_TEAM threads a multiprocessor, ranges of NM_SPLIT_MIN items or
 * more; 0 (the team kernels) where the sets fill the device already, a
 * range would be shorter, or the partials do not fit in scratch. The
 * ranges a set are rounded down, so that the blocks stay within the
 * waves aimed at: rounded up, 64 sets took 17 ranges each, 1088 blocks
 * where 1056 fill two waves, and the 32 left ran as a third (H200, GB/s
 * in bursts, two passes, up against down: layer norm forward over 64 sets
 * of 256 x 56 x 56 f16 2017 / 2028 against 2145 / 2129; group norm
 * forward 16 x 320 x 128 x 128 f16 1974 / 1985 against 2073 / 2062,
 * backward 32 x 256 x 112 x 112 1455 / 1460 against 1492 / 1489). */
#define NM_SPLIT_BLOCKS 8
#define NM_SPLIT_MIN 4096
static int64_t nm_split_chunks(const udnn_gpu_context *c, int64_t nsets, int64_t items)
{
    const int64_t target = (int64_t)c->sm_count * NM_SPLIT_BLOCKS;
    if (2 * nsets >= target) return 0;
    int64_t chunks = target / nsets;
    if (chunks > items / NM_SPLIT_MIN) chunks = items / NM_SPLIT_MIN;
    if (chunks < 2) return 0;
    /* the partials and the forward's shifts */
    if ((size_t)((2 * chunks + 1) * nsets) * sizeof(double) > c->scratch_bytes) return 0;
    return chunks;
}

/* Sets a's split (nm_split_chunks; A is nm_fwd_args or nm_bwd_args) and
 * returns its blocks, a block a range; 0: the team kernels. */
template <class A> static unsigned nm_split_setup(const udnn_gpu_context *c, A &a)
{
    a.chunks = nm_split_chunks(c, a.nsets, a.inner.size);
    if (a.chunks == 0) return 0;
    a.chunk = (a.inner.size + a.chunks - 1) / a.chunks;
    a.partial = (double *)c->scratch;
    return (unsigned)(a.nsets * a.chunks);
}

/* The grid of nm_fwd_sets and nm_bwd_sets for a's sets: about as many
 * threads as nm_split_chunks aims at, in blocks of NM_SET_THREADS taking
 * whole rounds of items; ranges 0 where the sets' parameters differ (group
 * norm). */
template <class T, class A>
static nm_set_grid nm_set_grid_of(const udnn_gpu_context *c, const A &a, unsigned *blocks)
{
    constexpr int G = nm_set_group<T>();
    nm_set_grid r = {0, 0};
    bool alike = true;
    for (int d = 0; d < a.sets.nd; d++) alike = alike && a.sets.st[N_P][d] == 0;
    if (!alike) return r;
    const int64_t groups = (a.nsets + G - 1) / G, items = a.inner.size;
    const int64_t target = (int64_t)c->sm_count * NM_SPLIT_BLOCKS * (NM_MAX_TEAM / NM_SET_THREADS);
    const int64_t most = (items + NM_SET_THREADS - 1) / NM_SET_THREADS;
    int64_t ranges = (target + groups - 1) / groups;
    if (ranges > most) ranges = most;
    if (ranges < 1) ranges = 1;
    /* whole rounds of the block's threads */
    r.per = ((items + ranges - 1) / ranges + NM_SET_THREADS - 1) / NM_SET_THREADS * NM_SET_THREADS;
    r.ranges = (items + r.per - 1) / r.per;
    *blocks = (unsigned)(groups * r.ranges);
    return r;
}

/* nm_set_flow over r's n items of each kind, in a persistent grid of the
 * resident blocks; false, launching nothing, where its partials, shifts
 * and counters do not fit in scratch. */
template <class T, class I, int V>
static bool nm_set_flow_launch(const udnn_gpu_context *c, const nm_fwd_args<T> &a,
                               const nm_set_grid &r, unsigned n)
{
    const int64_t groups = (a.nsets + nm_set_group<T>() - 1) / nm_set_group<T>();
    const size_t sums = udnn_gpu_align256((size_t)(2 * r.ranges + 1) * a.nsets * sizeof(double));
    if (sums + (size_t)(1 + groups) * sizeof(uint32_t) > c->scratch_bytes || n >= (1u << 30))
        return false;
    nm_fwd_args<T> fa = a;
    fa.chunks = r.ranges;
    fa.partial = (double *)c->scratch;
    nm_flow f;
    f.ticket = (uint32_t *)((char *)c->scratch + sums);
    f.done = f.ticket + 1;
    if (udnnGpuMemsetAsync(f.ticket, 0, (size_t)(1 + groups) * sizeof(uint32_t), c->stream) !=
        udnnGpuSuccess)
        return false;
    static udnn_gpu_cache occupancy;
    const int64_t resident = c->sm_count * udnn_gpu_occupancy(c, nm_set_flow<T, I, V>,
                                                              NM_SET_THREADS, 0, &occupancy);
    const int64_t lag = r.ranges + resident;
    f.n = n;
    f.lag = (uint32_t)(lag < n ? lag : n);
    const int64_t blocks = resident < 2 * (int64_t)n ? resident : 2 * (int64_t)n;
    nm_set_flow<T, I, V><<<(unsigned)blocks, NM_SET_THREADS, 0, c->stream>>>(fa, r, f);
    return true;
}

/* nm_bwd_fused, then nm_bwd_sets over its joined sums, for a's sets (r
 * their grid, g their geometry); false, launching nothing, unless each
 * element of a set has its own parameters (as many as a set's elements),
 * or where its scratch does not fit. */
template <class T, class I, int V>
static bool nm_bwd_fused_launch(const udnn_gpu_context *c, const nm_bwd_args<T> &a,
                                const nm_set_grid &r, unsigned sb, const nm_geom &g,
                                const udnn_norm_problem *p)
{
    typedef typename nm_wide<T>::W W;
    typedef typename udnn_gpu_param<T>::P P;
    if (g.feat.size != a.size) return false;
    const int64_t blocks = (a.inner.size + NM_SET_THREADS - 1) / NM_SET_THREADS;
    /* red for the most warps a block can have (a warp of 16 or more) */
    const size_t smem = (size_t)(NM_SET_THREADS / 16) * a.nsets * 2 * sizeof(W);
    const size_t parts = udnn_gpu_align256((size_t)(2 * blocks * a.nsets) * sizeof(double));
    const size_t joined = udnn_gpu_align256((size_t)(2 * a.nsets) * sizeof(double));
    if (blocks > 65535 || smem + nm_fused_held<V>() * sizeof(double) > ((size_t)48 << 10) ||
        parts + joined + sizeof(uint32_t) > c->scratch_bytes)
        return false;
    nm_bwd_args<T> fa = a;
    fa.chunks = blocks;
    fa.partial = (double *)c->scratch;
    nm_fused<T> f;
    f.dscale = (P *)p->dscale_ptr;
    f.dbias = a.rms ? NULL : (P *)p->dbias_ptr;
    f.joined = (double *)((char *)c->scratch + parts);
    f.count = (uint32_t *)((char *)c->scratch + parts + joined);
    if (udnnGpuMemsetAsync(f.count, 0, sizeof(uint32_t), c->stream) != udnnGpuSuccess) return false;
    nm_bwd_fused<T, I, V><<<(unsigned)blocks, NM_SET_THREADS, smem, c->stream>>>(fa, f);
    nm_bwd_args<T> ja = a;
    ja.chunks = 1;
    ja.partial = f.joined;
    nm_bwd_sets<T, I, V><<<sb, NM_SET_THREADS, 0, c->stream>>>(ja, r);
    return true;
}

/* launch(i, v) with the team kernels' index type (a value of it: int64_t
 * where the tensor passes 2^31 elements) and vector width (a
 * std::integral_constant). */
template <class T, class L> static void nm_by_index(bool small, bool vec, L &&launch)
{
    if (!small) launch((int64_t)0, std::integral_constant<int, 1>{});
    else if (vec) launch((uint32_t)0, std::integral_constant<int, 16 / sizeof(T)>{});
    else launch((uint32_t)0, std::integral_constant<int, 1>{});
}

/* The set kernels of either direction for a (nm_fwd_args or nm_bwd_args,
 * its sets and pointers set): vectorized over ptrs' n slots where their
 * layouts allow, then split(i, v, blocks) for few long sets, else
 * team(i, v, grid, block), as nm_by_index calls them. */
template <class T, class A, class Split, class Team>
static udnnStatus_t nm_launch_sets(const udnn_gpu_context *c, A &a, const nm_geom &g,
                                   const void *const *ptrs, const int *slots, int n, Split split,
                                   Team team)
{
    a.size = g.inner.size;
    a.pstep = g.inner.nd > 0 ? g.inner.st[N_P][g.inner.nd - 1] : 0;
    const bool small = nm_small(a.nsets * a.size);
    const bool vec = small && nm_vectorize(&g.sets, &g.inner, ptrs, slots, n, sizeof(T), &a.inner);
    if (const unsigned blocks = nm_split_setup(c, a)) {
        nm_by_index<T>(small, vec, [&](auto i, auto v) { split(i, v, blocks); });
        return udnn_gpu_launched();
    }
    dim3 grid, block;
    nm_team_launch(a.nsets, a.inner.size, &grid, &block);
    nm_by_index<T>(small, vec, [&](auto i, auto v) { team(i, v, grid, block); });
    return udnn_gpu_launched();
}

template <class T>
static udnnStatus_t nm_forward(const udnn_gpu_context *c, const udnn_norm_problem *p)
{
    typedef typename udnn_gpu_param<T>::P P;
    const nm_geom g = nm_geometry(p, NULL, &p->y);
    udnnStatus_t st;
    if (g.sets.size == 0 || g.inner.size == 0) return UDNN_STATUS_SUCCESS;
    if (nm_forward_rows<T>(c, p, &g, &st)) return st;
    nm_fwd_args<T> a;
    memset(&a, 0, sizeof a);
    a.sets = g.sets;
    a.inner = g.inner;
    a.nsets = g.sets.size;
    a.rms = g.rms;
    a.eps = p->epsilon;
    a.x = (const T *)p->x_ptr;
    a.y = (T *)p->out_ptr;
    a.scale = (const P *)p->scale_ptr;
    a.bias = g.rms ? NULL : (const P *)p->bias_ptr;
    a.save_mean = (P *)p->save_mean_ptr;
    a.save_inv = (P *)p->save_inv_std_ptr;
    if (a.nsets == 0 || a.inner.size == 0) return UDNN_STATUS_SUCCESS;
    if (nm_forward_cluster<T>(c, &g, a, &st)) return st;
    const void *ptrs[2] = {a.x, a.y};
    static const int slots[2] = {N_X, N_OUT};
    return nm_launch_sets<T>(
        c, a, g, ptrs, slots, 2,
        [&](auto i, auto v, unsigned blocks) {
            typedef decltype(i) I;
            constexpr int V = decltype(v)::value;
            unsigned sb = 0;
            const nm_set_grid r = nm_set_grid_of<T>(c, a, &sb);
            if constexpr (sizeof(T) >= 4)
                if (r.ranges > 0 && nm_set_flow_launch<T, I, V>(c, a, r, sb)) return;
            nm_fwd_part<T, I, V><<<blocks, NM_MAX_TEAM, 0, c->stream>>>(a);
            if (r.ranges > 0) nm_fwd_sets<T, I, V><<<sb, NM_SET_THREADS, 0, c->stream>>>(a, r);
            else nm_fwd_split<T, I, V><<<blocks, NM_MAX_TEAM, 0, c->stream>>>(a);
        },
        [&](auto i, auto v, dim3 grid, dim3 block) {
            nm_fwd<T, decltype(i), decltype(v)::value><<<grid, block, 0, c->stream>>>(a);
        });
}

template <class T>
static udnnStatus_t nm_backward(const udnn_gpu_context *c, const udnn_norm_problem *p)
{
    typedef typename udnn_gpu_param<T>::P P;
    const nm_geom g = nm_geometry(p, &p->dy, &p->dx);
    if (g.sets.size == 0 || g.inner.size == 0) return UDNN_STATUS_SUCCESS;
    udnnStatus_t st;
    if (nm_backward_rows<T>(c, p, &g, &st)) return st;
    if (nm_backward_cluster<T>(c, p, &g, &st)) return st;
    /* the parameter gradients before dx (dx may be x's or dy's buffer), in
     * the set kernels' launch where nm_bwd_fused does not take them */
    udnnStatus_t grads = UDNN_STATUS_SUCCESS;
    nm_bwd_args<T> a;
    memset(&a, 0, sizeof a);
    a.sets = g.sets;
    a.inner = g.inner;
    a.nsets = g.sets.size;
    a.rms = g.rms;
    a.x = (const T *)p->x_ptr;
    a.dy = (const T *)p->dy_ptr;
    a.dx = (T *)p->out_ptr;
    a.scale = (const P *)p->scale_ptr;
    a.mean = g.rms ? NULL : (const P *)p->saved_mean_ptr;
    a.inv = (const P *)p->saved_inv_std_ptr;
    const void *ptrs[3] = {a.x, a.dy, a.dx};
    static const int slots[3] = {N_X, N_DY, N_OUT};
    /* the split's partials in scratch: the parameter gradients' were
     * consumed by their finish, earlier in the stream */
    st = nm_launch_sets<T>(
        c, a, g, ptrs, slots, 3,
        [&](auto i, auto v, unsigned blocks) {
            typedef decltype(i) I;
            constexpr int V = decltype(v)::value;
            unsigned sb = 0;
            const nm_set_grid r = nm_set_grid_of<T>(c, a, &sb);
            if constexpr (sizeof(T) == 2)
                if (r.ranges > 0 && nm_bwd_fused_launch<T, I, V>(c, a, r, sb, g, p)) return;
            grads = nm_param_grads<T>(c, p, &g);
            if (grads != UDNN_STATUS_SUCCESS) return;
            nm_bwd_part<T, I, V><<<blocks, NM_MAX_TEAM, 0, c->stream>>>(a);
            if (r.ranges > 0)
                nm_bwd_sets<T, I, V><<<sb, NM_SET_THREADS, 0, c->stream>>>(a, r);
            else
                nm_bwd_split<T, I, V><<<blocks, NM_MAX_TEAM, 0, c->stream>>>(a);
        },
        [&](auto i, auto v, dim3 grid, dim3 block) {
            grads = nm_param_grads<T>(c, p, &g);
            if (grads != UDNN_STATUS_SUCCESS) return;
            nm_bwd<T, decltype(i), decltype(v)::value><<<grid, block, 0, c->stream>>>(a);
        });
    return grads != UDNN_STATUS_SUCCESS ? grads : st;
}

/* ---- solvers ------------------------------------------------------------------------------- */

static int nm_applicable(const void *problem, const char **why)
{
    const udnn_norm_problem *p = (const udnn_norm_problem *)problem;
    const udnnDataType_t want =
        p->x.dtype == UDNN_DATA_DOUBLE ? UDNN_DATA_DOUBLE : UDNN_DATA_FLOAT;
    if (!udnn_gpu_float_type(p->x.dtype) || p->scale.dtype != want) {
        *why = "the GPU norms take FLOAT, DOUBLE, HALF and BFLOAT16 data with FLOAT (DOUBLE "
               "for DOUBLE) parameters";
        return 0;
    }
    return 1;
}

UDNN_GPU_TYPED_RUN(nm_fwd_run, udnn_norm_problem, x, nm_forward)

UDNN_GPU_TYPED_RUN(nm_bwd_run, udnn_norm_problem, x, nm_backward)

static const udnn_solver norm_fwd_solver = {
    "gpu_norm_fwd", UDNN_OP_NORM_FWD, -1, 1, nm_applicable, NULL, nm_fwd_run,
};
static const udnn_solver norm_bwd_solver = {
    "gpu_norm_bwd", UDNN_OP_NORM_BWD, -1, 1, nm_applicable, NULL, nm_bwd_run,
};
static const udnn_solver groupnorm_fwd_solver = {
    "gpu_groupnorm_fwd", UDNN_OP_GROUPNORM_FWD, -1, 1, nm_applicable, NULL, nm_fwd_run,
};
static const udnn_solver groupnorm_bwd_solver = {
    "gpu_groupnorm_bwd", UDNN_OP_GROUPNORM_BWD, -1, 1, nm_applicable, NULL, nm_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(norm, &norm_fwd_solver, &norm_bwd_solver, &groupnorm_fwd_solver,
                      &groupnorm_bwd_solver);
