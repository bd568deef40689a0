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
 * slices with partials in scratch and a fixed-order finish; then dx, a
 * team per set. The parameter pass runs first since dx may be x's or dy's
 * buffer.
 * Rows: where each layer or RMS norm set is one contiguous run, a team
 * holds its row in registers instead (one read of x, and of dy, and one
 * write), and the backward pass sums dscale and dbias there too, into a
 * partial per block and the same finish (see nm_fwd_rows, nm_bwd_rows).
 *
 * HALF and BFLOAT16 compute in float, DOUBLE in double; every type sums
 * the forward statistics in double, and FLOAT runs the backward dx pass in
 * double (see nm_wide). Each set's statistics are finished in double.
 * Every sum has a fixed order. */
#include "cuda/kernels.h"

/* ---- types and index spaces ----------------------------------------------------------- */

template <class T> struct nm_param {
    typedef float P;
};
template <> struct nm_param<double> {
    typedef double P;
};

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

typedef struct {
    int nd;
    int64_t size;
    int64_t dim[UDNN_DIM_MAX];
    int64_t st[NM_SLOTS][UDNN_DIM_MAX];
} nm_space;

/* One dim of a space before ordering and merging. Group norm splits C into
 * (group, channel in group), so dims are given explicitly. */
typedef struct {
    int64_t size;
    int64_t st[NM_SLOTS];
} nm_dim;

template <class I, int NT>
__device__ __forceinline__ void nm_offsets(const nm_space &s, I idx, int64_t off[NT])
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

/* The spaces of a problem: sets (their first elements) and the elements
 * of a set (inner); for the parameter gradients, parameters (features)
 * and, per parameter, its elements (members). */
typedef struct {
    nm_space sets, inner, feat, memb;
    int rms;
} nm_geom;

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

/* ---- forward --------------------------------------------------------------------------- */

template <class T> struct nm_fwd_args {
    typedef typename nm_param<T>::P P;
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

/* Offsets of item j of a set in the first NT slots. An item is one
 * element, or with V > 1 a 16-byte vector of V elements contiguous in the
 * data tensors: the inner space's last dim then counts vectors, and
 * element k of the vector has parameter offset + k * pstep. */
template <class I, int NT, int V>
__device__ __forceinline__ void nm_elem(const nm_space &s, I j, int64_t off[NT])
{
    nm_offsets<I, NT>(s, j, off);
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

/* One element's terms of a set's shifted sums: v - shift and its square. */
__device__ __forceinline__ void nm_fwd_add(double v, double shift, double &s1, double &s2)
{
    const double d = v - shift;
    s1 += d;
    s2 += d * d;
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

/* The set's statistics from its sums; the calling thread saves them where
 * `save`. */
template <class T>
__device__ __forceinline__ nm_stats<typename io<T>::C>
nm_fwd_finish(const nm_fwd_args<T> &a, double s1, double s2, double shift, int64_t st, bool save)
{
    typedef typename io<T>::C C;
    typedef typename nm_param<T>::P P;
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

/* y over items lo, lo + tw, ... below hi of the set at so. */
template <class T, class I, int V>
__device__ __forceinline__ void nm_fwd_write(const nm_fwd_args<T> &a, const int64_t (&so)[NM_SLOTS],
                                             nm_stats<typename io<T>::C> f, I lo, I hi)
{
    typedef typename io<T>::C C;
    typedef typename nm_param<T>::P P;
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
            v[k] = ((v[k] - f.hi) - f.lo) * f.inv * (C)scale[po];
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

/* A set's shift: its first element (0 for RMS); a mean far from 0 then
 * cancels nothing. */
template <class T>
__device__ __forceinline__ double nm_fwd_shift(const nm_fwd_args<T> &a, const T *x)
{
    return a.rms ? 0.0 : (double)io<T>::ld(x[0]);
}

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_MAX_TEAM) nm_fwd(nm_fwd_args<T> a)
{
    __shared__ double red[NM_RED_SLOTS];
    const int64_t set = (int64_t)blockIdx.x * blockDim.y + threadIdx.y;
    const bool live = set < a.nsets;
    const I items = (I)a.inner.size;
    int64_t so[NM_SLOTS];
    nm_offsets<I, NM_SLOTS>(a.sets, (I)(live ? set : 0), so);
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
    nm_offsets<I, NM_SLOTS>(a.sets, (I)r.set, r.so);
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
    nm_offsets<I, NM_SLOTS>(a.sets, (I)set, so);
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
                v[k] = ((udnn_gpu_pack_ld(xr[s], k) - f.hi) - f.lo) * f.inv * sc[k];
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
    typedef typename nm_param<T>::P P;
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
    const typename nm_param<T>::P *scale = a.scale + so[N_P];
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
    const typename nm_param<T>::P *scale = a.scale + so[N_P];
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
            xv[k] = (C)(st.inv * ((g - mean_g) - xhat * mean_gx));
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
    nm_offsets<I, NM_SLOTS>(a.sets, (I)(live ? set : 0), so);
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
                v[k] = (C)(st.inv * ((g - mean_g) - xhat * mean_gx));
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

/* ---- backward: dscale and dbias --------------------------------------------------------- */

/* Per parameter f and member slice: sum dy * xhat and sum dy. */
template <class T> struct nm_grad_args {
    typedef typename nm_param<T>::P P;
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
    a.dscale[po] = (typename nm_param<T>::P)ds;
    if (a.dbias != NULL) a.dbias[po] = (typename nm_param<T>::P)db;
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
        nm_offsets<I, NM_SLOTS>(a.feat, (I)f, fo);
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
                    nm_offsets<I, NM_SLOTS>(a.memb, jj, mo);
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
            nm_offsets<I, NM_SLOTS>(a.feat, (I)(f + e), fo);
            nm_grad_put(a, f + e, fo[N_P], red[0][tx], red[1][tx]);
        }
        if (PV > 1) __syncthreads(); /* red is read before the next parameter's sums */
    }
}

#define NM_FIN_LANES 32
#define NM_FIN_ROWS 8

/* Adds each parameter's split partials (lanes tx, tx + 32, ..., then a
 * fixed tree) in double and writes dscale and dbias. */
template <class T>
__global__ void __launch_bounds__(NM_FIN_LANES *NM_FIN_ROWS) nm_grad_finish(nm_grad_args<T> a,
                                                                            int64_t splits)
{
    __shared__ double red[2][NM_FIN_ROWS][NM_FIN_LANES];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int64_t f = (int64_t)blockIdx.x * NM_FIN_ROWS + ty;
    double ds = 0.0, db = 0.0;
    if (f < a.F)
#pragma unroll 4
        for (int64_t s = tx; s < splits; s += NM_FIN_LANES) {
            ds += a.partial[(s * 2) * a.F + f];
            db += a.partial[(s * 2 + 1) * a.F + f];
        }
    red[0][ty][tx] = ds;
    red[1][ty][tx] = db;
    __syncthreads();
    for (int w = NM_FIN_LANES / 2; w > 0; w /= 2) {
        if (tx < w) {
            red[0][ty][tx] += red[0][ty][tx + w];
            red[1][ty][tx] += red[1][ty][tx + w];
        }
        __syncthreads();
    }
    if (tx != 0 || f >= a.F) return;
    int64_t fo[NM_SLOTS];
    nm_offsets<int64_t, NM_SLOTS>(a.feat, f, fo);
    a.dscale[fo[N_P]] = (typename nm_param<T>::P)red[0][ty][0];
    if (a.dbias != NULL) a.dbias[fo[N_P]] = (typename nm_param<T>::P)red[1][ty][0];
}

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

#define NM_ROW_THREADS 512                  /* the widest team or block */
#define NM_ROW_WARPS (NM_ROW_THREADS / 16) /* its warps on any warp size of 16 or more */
#define NM_FWD_NV 8                         /* items a forward thread holds */
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
 * session. */
#ifndef NM_FW_MIN_LEN
#define NM_FW_MIN_LEN 256
#endif
#ifndef NM_FW_THREADS
#define NM_FW_THREADS 256
#endif
#ifndef NM_FW_MINB
#define NM_FW_MINB 2
#endif

/* The arithmetic type of nm_bwd_rows: nm_wide's, or float with FW. */
template <class T, bool FW> struct nm_row_wide {
    typedef typename nm_wide<T>::W W;
};
template <class T> struct nm_row_wide<T, true> {
    typedef float W;
};

template <class T> struct nm_row_args {
    typedef typename nm_param<T>::P P;
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

extern __shared__ double nm_dyn_smem[];

template <class T>
__device__ __forceinline__ void nm_row_offsets(const nm_row_args<T> &a, int64_t set,
                                               int64_t so[NM_SLOTS])
{
    if (a.nsets <= (int64_t)UINT32_MAX) nm_offsets<uint32_t, NM_SLOTS>(a.sets, (uint32_t)set, so);
    else nm_offsets<int64_t, NM_SLOTS>(a.sets, set, so);
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

/* Sums NQ values over the team, in every thread of it (the same bits: a
 * butterfly adds each pair in both lanes), in a fixed order: shuffles
 * inside a warp, then the team's warps through red ([2][NM_ROW_WARPS][NQ]):
 * lane q adds quantity q over them in warp order and every lane reads it
 * from lane q (a butterfly with mask l ^ q). Calls alternate `parity` so
 * that one barrier per call keeps a call's writes from a previous call's
 * reads. Every thread of the block calls it together. */
template <class S, int NQ>
__device__ __forceinline__ void nm_row_sum(S (&v)[NQ], S *red, int parity)
{
    const int tx = threadIdx.x, tw = blockDim.x, ws = udnnGpuWarpSize;
    for (int m = (tw < ws ? tw : ws) / 2; m > 0; m /= 2)
        for (int q = 0; q < NQ; q++) v[q] += udnnGpuShflXor(v[q], m);
    if (tw <= ws) return;
    const int per = tw / ws, first = threadIdx.y * per, lane = tx % ws;
    S *r = red + parity * NM_ROW_WARPS * NQ;
    if (lane == 0)
        for (int q = 0; q < NQ; q++) r[(first + tx / ws) * NQ + q] = v[q];
    __syncthreads();
    S t = S(0);
    if (lane < NQ) {
        t = r[first * NQ + lane];
        for (int i = 1; i < per; i++) t += r[(first + i) * NQ + lane];
    }
    for (int q = 0; q < NQ; q++) v[q] = udnnGpuShflXor(t, lane ^ q);
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
 *   passes), and f16 1061 / 1060, below nm_bwd_fused. */
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
        nm_offsets<I, NM_SLOTS>(a.sets, (I)(p.s0 + threadIdx.x), so);
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

/* The few long sets' forward where a set's x fits the shared memory of a
 * thread-block cluster (NM_FWD_CLUSTER, a candidate, off until measured),
 * as bn_cluster.cu does for batch norm's channels: the cluster's blocks
 * each copy their share of the set's items into shared memory, sum it,
 * join the cluster's sums through each other's shared memory, and write
 * their share of y from it. x is read once, where the two launches read
 * it twice (all of it from DRAM again once the sets outgrow L2), and no
 * block waits for any block outside its cluster. Sets of up to 16 blocks
 * of 100 KB: layer norm's 64 sets of 802816 f16 elements in clusters of
 * 16 blocks of 512 threads, group norm's 32 groups of 10 x 128 x 128 f16
 * in clusters of 8 blocks of 256 threads (40 KB each). Items are 16-byte
 * vectors (the vectorized sets). Block b of the grid is block b % a.chunks
 * of set b / a.chunks's cluster and holds its items [rank a.chunk, (rank
 * + 1) a.chunk); the sums run in double per element, as nm_fwd_sums';
 * every block adds the cluster's partials in rank order itself, so that
 * all take the same statistics, and rank 0 saves them. */
#ifndef NM_FWD_CLUSTER
#define NM_FWD_CLUSTER 0
#endif
#define NM_CLUSTER_MAX 16
#define NM_CLUSTER_SHARE(threads) ((size_t)200 * (threads))

#if UDNN_GPU_CLUSTERS
template <class T, class I, int THREADS>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS) nm_fwd_cluster(nm_fwd_args<T> a)
{
    typedef typename io<T>::C C;
    typedef typename nm_param<T>::P P;
    constexpr int V = 16 / (int)sizeof(T);
    typedef udnn_gpu_pack<T, V> R;
    extern __shared__ uint4 nm_cluster_held[];
    __shared__ double red[THREADS / 16], part[2];
    __shared__ nm_stats<C> st;
    const unsigned rank = udnnGpuClusterRank();
    const int64_t set = blockIdx.x / a.chunks, lo = rank * a.chunk;
    const int64_t hi = lo + a.chunk < a.inner.size ? lo + a.chunk : a.inner.size;
    const int n = hi > lo ? (int)(hi - lo) : 0;
    R *held = (R *)nm_cluster_held;
    int64_t so[NM_SLOTS];
    nm_offsets<I, NM_SLOTS>(a.sets, (I)set, so);
    const T *x = a.x + so[N_X];
    /* read before the cluster's barrier: in place, rank 0 overwrites it after */
    const double shift = nm_fwd_shift(a, x);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t o[1];
        nm_elem<I, 1, V>(a.inner, (I)(lo + i), o);
        udnnGpuCopyAsync16(held + i, x + o[N_X]);
    }
    udnnGpuCopyAsyncWait();
    /* each thread reads back only the items it copied: no barrier */
    double s1 = 0.0, s2 = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const R v = held[i];
        for (int k = 0; k < V; k++) nm_fwd_add((double)udnn_gpu_pack_ld(v, k), shift, s1, s2);
    }
    s1 = udnn_gpu_block_sum(s1, red);
    s2 = udnn_gpu_block_sum(s2, red);
    if (threadIdx.x == 0) {
        part[0] = s1;
        part[1] = s2;
    }
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (threadIdx.x == 0) {
        double q1 = 0.0, q2 = 0.0;
        for (unsigned r = 0; r < (unsigned)a.chunks; r++) {
            const double *pr = udnnGpuClusterMap(part, r);
            q1 += pr[0];
            q2 += pr[1];
        }
        st = nm_fwd_finish(a, q1, q2, shift, so[N_ST], rank == 0);
    }
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' partials */
    const nm_stats<C> f = st;
    const P *scale = a.scale + so[N_P], *bias = a.bias != NULL ? a.bias + so[N_P] : NULL;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, (I)(lo + i), o);
        const R v = held[i];
        C y[V];
        for (int k = 0; k < V; k++) {
            const int64_t po = o[N_P] + k * a.pstep;
            y[k] = ((udnn_gpu_pack_ld(v, k) - f.hi) - f.lo) * f.inv * (C)scale[po];
            if (bias != NULL) y[k] += (C)bias[po];
        }
        nm_store<T, V>(a.y + so[N_OUT], o[N_OUT], y);
    }
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}
#endif

/* The few long sets' dx where a set's x and dy fit the shared memory of
 * a thread-block cluster (NM_BWD_CLUSTER, a candidate, off until
 * measured), as nm_fwd_cluster: each block holds its share of the set's
 * items of x and dy (x's at held[i], dy's at held[a.chunk + i]), sums g
 * and g * xhat over it (nm_bwd_sums' terms), joins the cluster's sums in
 * rank order, and writes dx from what it holds. x and dy are read once
 * for dx where nm_bwd_part and nm_bwd_split read them twice; the
 * parameter gradients (nm_grad) read them once more before, as with the
 * two launches. Sets of up to 16 blocks of 100 KB, 800 KB of 16-bit x: group
 * norm's 8 groups of 32 x 112 x 112 f16 in clusters of 16 blocks of 512
 * threads. */
#ifndef NM_BWD_CLUSTER
#define NM_BWD_CLUSTER 0
#endif

#if UDNN_GPU_CLUSTERS
template <class T, class I, int THREADS>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS) nm_bwd_cluster(nm_bwd_args<T> a)
{
    typedef typename nm_wide<T>::W W;
    typedef typename io<T>::C C;
    constexpr int V = 16 / (int)sizeof(T);
    typedef udnn_gpu_pack<T, V> R;
    extern __shared__ uint4 nm_cluster_held[];
    __shared__ W red[THREADS / 16];
    __shared__ double part[2];
    __shared__ W mg[2];
    const unsigned rank = udnnGpuClusterRank();
    const int64_t set = blockIdx.x / a.chunks, lo = rank * a.chunk;
    const int64_t hi = lo + a.chunk < a.inner.size ? lo + a.chunk : a.inner.size;
    const int n = hi > lo ? (int)(hi - lo) : 0;
    R *held = (R *)nm_cluster_held;
    int64_t so[NM_SLOTS];
    nm_offsets<I, NM_SLOTS>(a.sets, (I)set, so);
    const nm_bwd_set<W> st = nm_bwd_set_of<T>(a, so);
    const typename nm_param<T>::P *scale = a.scale + so[N_P];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, (I)(lo + i), o);
        udnnGpuCopyAsync16(held + i, a.x + so[N_X] + o[N_X]);
        udnnGpuCopyAsync16(held + a.chunk + i, a.dy + so[N_DY] + o[N_DY]);
    }
    udnnGpuCopyAsyncWait();
    /* each thread reads back only the items it copied: no barrier */
    W sg = W(0), sgx = W(0);
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, (I)(lo + i), o);
        const R xv = held[i], gv = held[a.chunk + i];
        for (int k = 0; k < V; k++) {
            const W g = nm_bwd_g((W)udnn_gpu_pack_ld(gv, k), scale, o[N_P] + k * a.pstep);
            sg += g;
            sgx += g * nm_bwd_xhat((W)udnn_gpu_pack_ld(xv, k), st);
        }
    }
    sg = udnn_gpu_block_sum(sg, red);
    sgx = udnn_gpu_block_sum(sgx, red);
    if (threadIdx.x == 0) {
        part[0] = (double)sg;
        part[1] = (double)sgx;
    }
    udnnGpuClusterArrive();
    udnnGpuClusterWait();
    if (threadIdx.x == 0) {
        double q1 = 0.0, q2 = 0.0;
        for (unsigned r = 0; r < (unsigned)a.chunks; r++) {
            const double *pr = udnnGpuClusterMap(part, r);
            q1 += pr[0];
            q2 += pr[1];
        }
        const double size = (double)a.size;
        mg[0] = a.rms ? W(0) : (W)(q1 / size);
        mg[1] = (W)(q2 / size);
    }
    __syncthreads();
    udnnGpuClusterArrive(); /* this block is done with the others' partials */
    const W mean_g = mg[0], mean_gx = mg[1];
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        int64_t o[4];
        nm_elem<I, 4, V>(a.inner, (I)(lo + i), o);
        const R xv = held[i], gv = held[a.chunk + i];
        C d[V];
        for (int k = 0; k < V; k++) {
            const W xhat = nm_bwd_xhat((W)udnn_gpu_pack_ld(xv, k), st);
            const W g = nm_bwd_g((W)udnn_gpu_pack_ld(gv, k), scale, o[N_P] + k * a.pstep);
            d[k] = (C)(st.inv * ((g - mean_g) - xhat * mean_gx));
        }
        nm_store<T, V>(a.dx + so[N_OUT], o[N_OUT], d);
    }
    udnnGpuClusterWait(); /* the others are done with this block's partials */
}
#endif

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
 * took 1654 / 1617. */

template <class T> struct nm_fused {
    typedef typename nm_param<T>::P P;
    P *dscale, *dbias; /* dbias NULL for RMS */
    double *joined;    /* [sets][2] */
    uint32_t *count;   /* blocks finished: zero at the launch */
};

template <class T, class I, int V>
__global__ void __launch_bounds__(NM_SET_THREADS, 3) nm_bwd_fused(nm_bwd_args<T> a, nm_fused<T> f)
{
    typedef typename nm_wide<T>::W W;
    typedef typename nm_param<T>::P P;
    W *red = (W *)nm_dyn_smem; /* [warps][sets][2] */
    __shared__ bool last;
    const int ws = udnnGpuWarpSize, warp = threadIdx.x / ws, lane = threadIdx.x % ws;
    const int warps = blockDim.x / ws;
    const I j = (I)blockIdx.x * (I)blockDim.x + (I)threadIdx.x;
    const bool live = j < (I)a.inner.size;
    int64_t o[4] = {0, 0, 0, 0};
    if (live) nm_elem<I, 4, V>(a.inner, j, o);
    W sc[V];
    double ds[V], db[V];
    for (int k = 0; k < V; k++) {
        sc[k] = live ? (W)a.scale[o[N_P] + k * a.pstep] : W(0);
        ds[k] = db[k] = 0.0;
    }
#pragma unroll 4
    for (int64_t s = 0; s < a.nsets; s++) {
        int64_t so[NM_SLOTS];
        nm_offsets<I, NM_SLOTS>(a.sets, (I)s, so);
        const nm_bwd_set<W> st = nm_bwd_set_of<T>(a, so);
        W tg = W(0), tgx = W(0);
        if (live) {
            const udnn_gpu_pack<T, V> xr = *(const udnn_gpu_pack<T, V> *)(a.x + so[N_X] + o[N_X]);
            const udnn_gpu_pack<T, V> gr =
                *(const udnn_gpu_pack<T, V> *)(a.dy + so[N_DY] + o[N_DY]);
            const double mv = a.mean != NULL ? (double)a.mean[so[N_ST]] : 0.0;
            const double iv = (double)a.inv[so[N_ST]];
            for (int k = 0; k < V; k++) {
                const typename io<T>::C xv = udnn_gpu_pack_ld(xr, k), gv = udnn_gpu_pack_ld(gr, k);
                const W g = udnnGpuMulRn((W)gv, sc[k]);
                tg += g;
                tgx += g * nm_bwd_xhat((W)xv, st);
                ds[k] += nm_dscale_term((double)gv, (double)xv, mv, iv);
                db[k] += (double)gv;
            }
        }
        for (int m = ws / 2; m > 0; m /= 2) {
            tg += udnnGpuShflXor(tg, m);
            tgx += udnnGpuShflXor(tgx, m);
        }
        if (lane == 0) {
            red[2 * (warp * a.nsets + s)] = tg;
            red[2 * (warp * a.nsets + s) + 1] = tgx;
        }
    }
    if (live)
        for (int k = 0; k < V; k++) {
            const int64_t po = o[N_P] + k * a.pstep;
            f.dscale[po] = (P)ds[k];
            if (f.dbias != NULL) f.dbias[po] = (P)db[k];
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

/* One row per team (blockDim.y teams per block), NM_FWD_NV items per
 * thread; the statistics as nm_fwd computes them. */
template <class T, int V>
__global__ void __launch_bounds__(NM_ROW_THREADS) nm_fwd_rows(nm_row_args<T> a)
{
    typedef typename io<T>::C C;
    typedef typename nm_param<T>::P P;
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
            C v = (((C)udnn_gpu_pack_ld(r[k], e) - hi) - lo) * invc * sc[e];
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
 * double, 96% in float). dscale's and dbias's terms of the R rows an
 * iteration takes are added in float (in row order) before the double
 * sums: one conversion and one double add each per R elements. */
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
    int parity = 0;
    for (int64_t base = (int64_t)blockIdx.x * rows; base < a.nsets; base += step) {
        if (!PF)
#pragma unroll
            for (int i = 0; i < R; i++)
                nm_bwd_row_load<T, V, NV, W>(a, base + i * th + ty, xr[i], gr[i], mean[i],
                                             inv[i], out[i]);
        W xh[R][NV][V], g[R][NV][V], q[2 * R];
        /* FW: this iteration's dscale and dbias terms, in row order */
        W pds[FW ? NV : 1][V], pdb[FW ? NV : 1][V];
        if constexpr (FW)
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) pds[k][e] = pdb[k][e] = W(0);
#pragma unroll
        for (int i = 0; i < R; i++) {
            const bool live = base + i * th + ty < a.nsets;
            q[2 * i] = q[2 * i + 1] = W(0);
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) {
                    xh[i][k][e] = g[i][k][e] = W(0);
                    if (!live || tx + k * tw >= items) continue;
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
        if constexpr (FW)
#pragma unroll
            for (int k = 0; k < NV; k++)
                for (int e = 0; e < V; e++) {
                    ds[k][e] += (double)pds[k][e];
                    db[k][e] += (double)pdb[k][e];
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
        nm_row_sum<W, 2 * R>(q, red, parity);
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
                    o.v[e] = io<T>::st(
                        (C)(inv_c[i] * ((g[i][k][e] - mean_g) - xh[i][k][e] * mean_gx)));
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
 * dbias terms go to float partials over NM_WIDE_FLUSH rows (as FW's over an
 * iteration's rows), then into double sums in shared memory. Loading the
 * next row ahead measured slower (H100, bf16 16384 x 4096: 1245 against
 * 1622 GB/s), and 3 blocks a multiprocessor spill (938). */
#define NM_WIDE_THREADS 256
#define NM_WIDE_MINB 2
#define NM_WIDE_FLUSH 4
#define NM_WIDE_NV 2

/* The dynamic shared memory of nm_bwd_wide for tw threads: double
 * dscale and dbias sums, then the scale, per column. */
template <class T> static size_t nm_wide_smem(int tw)
{
    const size_t cols = (size_t)NM_WIDE_NV * (16 / sizeof(T)) * (size_t)tw;
    return cols * (2 * sizeof(double) + sizeof(typename io<T>::C));
}

template <class T>
__global__ void __launch_bounds__(NM_WIDE_THREADS, NM_WIDE_MINB) nm_bwd_wide(nm_row_args<T> a)
{
    typedef typename io<T>::C C;
    constexpr int V = 16 / sizeof(T), NV = NM_WIDE_NV;
    typedef udnn_gpu_pack<T, V> RV;
    __shared__ C red[2 * NM_ROW_WARPS * 2];
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
    for (int64_t set = blockIdx.x; set < a.nsets; set += gridDim.x) {
        RV xr[NV], gr[NV];
        C mean, inv;
        int64_t out;
        nm_bwd_row_load<T, V, NV, C>(a, set, xr, gr, mean, inv, out);
        C q[2] = {C(0), C(0)};
#pragma unroll
        for (int k = 0; k < NV; k++)
            for (int e = 0; e < V; e++) {
                if (tx + k * tw >= items) continue;
                const C gw = udnn_gpu_pack_ld(gr[k], e);
                const C xh = (udnn_gpu_pack_ld(xr[k], e) - mean) * inv;
                const C g = udnnGpuMulRn(gw, sc[(k * V + e) * tw + tx]);
                q[0] += g;
                q[1] += g * xh;
                pds[k][e] += gw * xh;
                pdb[k][e] += gw;
            }
        nm_row_sum<C, 2>(q, red, parity);
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
                o.v[e] = io<T>::st((C)(inv * ((g - mean_g) - xh * mean_gx)));
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
    typedef typename nm_param<T>::P P;
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
static int nm_forward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p,
                           const nm_geom *g, udnnStatus_t *st)
{
    typedef typename nm_param<T>::P P;
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
    nm_bwd_rows<T, V, COLS, R, PF, FW>
        <<<(unsigned)blocks, dim3((unsigned)tw, (unsigned)th), smem, c->stream>>>(a);
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
    nm_bwd_wide<T><<<(unsigned)blocks, (unsigned)tw, nm_wide_smem<T>(tw), c->stream>>>(a);
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
static int nm_backward_rows(const udnn_gpu_context *c, const udnn_norm_problem *p,
                            const nm_geom *g, udnnStatus_t *st)
{
    typedef typename nm_param<T>::P P;
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
    const dim3 fblock(NM_FIN_LANES, NM_FIN_ROWS);
    nm_grad_finish<T><<<(unsigned)((len + NM_FIN_ROWS - 1) / NM_FIN_ROWS), fblock, 0, c->stream>>>(
        f, blocks);
    *st = udnn_gpu_launched();
    return 1;
}

/* Ranges a set for the split kernels (nm_fwd_part and nm_fwd_split,
 * nm_bwd_part and nm_bwd_split) where sets are few and long: a team a set
 * leaves multiprocessors idle (H100, 64 sets of 802816 f16 elements:
 * forward 597 GB/s, backward 570; split 1066 and 709, where 4 blocks a
 * multiprocessor gave 898 and 655). Enough blocks for NM_SPLIT_BLOCKS of
 * NM_MAX_TEAM threads a multiprocessor, ranges of NM_SPLIT_MIN items or
 * more; 0 (the team kernels) where the sets fill the device already, a
 * range would be shorter, or the partials do not fit in scratch. */
#define NM_SPLIT_BLOCKS 8
#define NM_SPLIT_MIN 4096
static int64_t nm_split_chunks(const udnn_gpu_context *c, int64_t nsets, int64_t items)
{
    const int64_t target = (int64_t)c->sm_count * NM_SPLIT_BLOCKS;
    if (2 * nsets >= target) return 0;
    int64_t chunks = (target + nsets - 1) / nsets;
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

#if UDNN_GPU_CLUSTERS
/* The cluster kernel of a's direction, built for THREADS threads a block. */
template <class T, class I, int THREADS> static auto nm_cluster_kernel(const nm_fwd_args<T> &)
{
    return nm_fwd_cluster<T, I, THREADS>;
}
template <class T, class I, int THREADS> static auto nm_cluster_kernel(const nm_bwd_args<T> &)
{
    return nm_bwd_cluster<T, I, THREADS>;
}

/* nm_fwd_cluster or nm_bwd_cluster (by A) at one block shape for a's
 * vectorized sets, `unit` bytes of shared memory an item; false,
 * launching nothing, where a set does not fit 16 blocks' shares or the
 * device runs no such cluster (`fits`: the call site's answer). */
template <class T, class I, int THREADS, class A>
static bool nm_cluster_launch(const udnn_gpu_context *c, A a, size_t unit, udnn_gpu_cache *fits)
{
    constexpr size_t share = NM_CLUSTER_SHARE(THREADS);
    const auto kernel = nm_cluster_kernel<T, I, THREADS>(a);
    unsigned cs = 0;
    if (!udnn_gpu_cluster_split(a.inner.size, unit, share, NM_CLUSTER_MAX, &cs, &a.chunk) ||
        a.nsets * cs >= ((int64_t)1 << 31) ||
        !udnn_gpu_cluster_fits(c, kernel, THREADS, share, NM_CLUSTER_MAX, fits))
        return false;
    a.chunks = cs;
    int64_t threads =
        (a.chunk + UDNN_GPU_WHOLE_WARPS - 1) / UDNN_GPU_WHOLE_WARPS * UDNN_GPU_WHOLE_WARPS;
    if (threads > THREADS) threads = THREADS;
    if (udnnGpuLaunchClusters(kernel, (unsigned)(a.nsets * cs), (unsigned)threads,
                              (size_t)a.chunk * unit, c->stream, cs, a) != udnnGpuSuccess) {
        udnnGpuGetLastError(); /* the split kernels instead */
        return false;
    }
    return true;
}

/* The cluster kernel for a's vectorized sets: in blocks of 256 threads
 * (four a multiprocessor) where a set takes more than one block of 512,
 * else of 512; false, launching nothing, where neither fits. */
template <class T, class I, class A>
static bool nm_cluster_run(const udnn_gpu_context *c, const A &a, size_t unit)
{
    static udnn_gpu_cache fits256, fits512;
    if ((size_t)a.inner.size * unit > NM_CLUSTER_SHARE(512) &&
        nm_cluster_launch<T, I, 256>(c, a, unit, &fits256))
        return true;
    return nm_cluster_launch<T, I, 512>(c, a, unit, &fits512);
}
#else
template <class T, class I, class A>
static bool nm_cluster_run(const udnn_gpu_context *, const A &, size_t)
{
    return false;
}
#endif

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
    typedef typename nm_param<T>::P P;
    if (g.feat.size != a.size) return false;
    const int64_t blocks = (a.inner.size + NM_SET_THREADS - 1) / NM_SET_THREADS;
    /* red for the most warps a block can have (a warp of 16 or more) */
    const size_t smem = (size_t)(NM_SET_THREADS / 16) * a.nsets * 2 * sizeof(W);
    const size_t parts = udnn_gpu_align256((size_t)(2 * blocks * a.nsets) * sizeof(double));
    const size_t joined = udnn_gpu_align256((size_t)(2 * a.nsets) * sizeof(double));
    if (blocks > 65535 || smem > ((size_t)48 << 10) ||
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
    typedef typename nm_param<T>::P P;
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
    const void *ptrs[2] = {a.x, a.y};
    static const int slots[2] = {N_X, N_OUT};
    return nm_launch_sets<T>(
        c, a, g, ptrs, slots, 2,
        [&](auto i, auto v, unsigned blocks) {
            typedef decltype(i) I;
            constexpr int V = decltype(v)::value;
            unsigned sb = 0;
            const nm_set_grid r = nm_set_grid_of<T>(c, a, &sb);
            if constexpr (NM_FWD_CLUSTER && V == 16 / (int)sizeof(T))
                if (nm_cluster_run<T, I>(c, a, 16)) return;
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

/* dscale and dbias: FT parameters by BY member lanes per block, splits of
 * the members enough to fill the SMs, partials in scratch (straight to
 * the outputs with one split). */
template <class T> static udnnStatus_t nm_param_grads(const udnn_gpu_context *c,
                                                      const udnn_norm_problem *p, const nm_geom *g)
{
    typedef typename nm_param<T>::P P;
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
    const dim3 fblock(NM_FIN_LANES, NM_FIN_ROWS);
    nm_grad_finish<T><<<(unsigned)((a.F + NM_FIN_ROWS - 1) / NM_FIN_ROWS), fblock, 0, c->stream>>>(
        a, splits);
    return udnn_gpu_launched();
}

template <class T>
static udnnStatus_t nm_backward(const udnn_gpu_context *c, const udnn_norm_problem *p)
{
    typedef typename nm_param<T>::P P;
    const nm_geom g = nm_geometry(p, &p->dy, &p->dx);
    if (g.sets.size == 0 || g.inner.size == 0) return UDNN_STATUS_SUCCESS;
    udnnStatus_t st;
    if (nm_backward_rows<T>(c, p, &g, &st)) return st;
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
            if constexpr (NM_BWD_CLUSTER && V == 16 / (int)sizeof(T))
                if (nm_cluster_run<T, I>(c, a, 32)) return;
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
