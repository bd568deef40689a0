/* dropout.cu - dropout forward and backward for FLOAT, DOUBLE, HALF and
 * BFLOAT16, bit for bit the CPU's masks and values.
 *
 * The mask is backends/philox.h's contract: element i (logical row-major
 * index) of call t is kept when word i % 4 of Philox(block i / 4, t) is at
 * least the threshold of p. One Philox call yields the 4 words of a block,
 * so a thread draws a block and handles its 4 elements. The states
 * {key, call counter} live in device memory: the forward kernel reads the
 * counter, and a one-thread kernel launched after it on the same stream
 * increments it, so no thread ever sees a counter another has moved and
 * the host never waits.
 *
 * Values: out = in * (1 / (1 - p)) with the product taken in double and
 * rounded once to the storage type (through float for HALF and BFLOAT16),
 * exactly as cpu/ref/dropout.c, so FLOAT and DOUBLE outputs match the CPU
 * bit for bit; a dropped element is +0 whatever its input.
 *
 * Three paths per direction: packed row-major tensors (logical order is
 * memory order: 4 elements a thread, 8 for 16-bit types, as one 16-byte
 * access, their mask bytes as one word), packed channels-last tensors
 * (NHWC, NDHWC...: a tile of channels x positions staged through shared
 * memory, so that both the logical-order mask and the channel-innermost
 * values move coalesced), and any strides (offsets walked per element).
 * The packed paths load their values before they draw the mask, so that the
 * loads are in flight during the Philox rounds. An output may be its input's
 * buffer (core checks that the layouts agree): each element is read and
 * then written by one thread. */
#include "cuda/kernels.h"

#include "backends/philox.h"

/* ---- the mask --------------------------------------------------------------------- */

/* Where a kernel's mask comes from: drawn (forward) or read from the
 * reserve (backward). */
typedef struct {
    const uint64_t *states; /* {key, calls}; NULL: keep everything (forward, p = 0) */
    uint64_t threshold;     /* draws at or above are kept */
    double scale;           /* 1 / (1 - p) */
    unsigned char *reserve; /* one byte per element, logical order */
} drop_args;

/* The counter state one forward call draws with; read once per thread. */
typedef struct {
    uint64_t key, call;
    bool draw; /* false: every element is kept (no states, or p = 0) */
} drop_stream;

__device__ __forceinline__ drop_stream drop_stream_of(const drop_args &a)
{
    drop_stream s = {0, 0, false};
    if (a.states != NULL && a.threshold > 0) {
        s.key = a.states[0];
        s.call = a.states[1];
        s.draw = true;
    }
    return s;
}

/* Keep bits (bit w = word w) of Philox block `block`. */
__device__ __forceinline__ unsigned drop_block_bits(const drop_stream &s, uint64_t threshold,
                                                    uint64_t block)
{
    if (!s.draw) return 0xFu;
    udnn_philox_block ctr;
    ctr.v[0] = (uint32_t)block;
    ctr.v[1] = (uint32_t)(block >> 32);
    ctr.v[2] = (uint32_t)s.call;
    ctr.v[3] = (uint32_t)(s.call >> 32);
    const udnn_philox_block r = udnn_philox4x32_10(ctr, (uint32_t)s.key, (uint32_t)(s.key >> 32));
    unsigned bits = 0;
    for (int w = 0; w < 4; w++) bits |= (unsigned)((uint64_t)r.v[w] >= threshold) << w;
    return bits;
}

/* Keep bits of the 4 logical elements l0 .. l0+3 (bit k = element l0+k),
 * l0 at any alignment: a misaligned run spans two Philox blocks. */
__device__ __forceinline__ unsigned drop_run_bits(const drop_stream &s, uint64_t threshold,
                                                  uint64_t l0)
{
    const unsigned sh = (unsigned)(l0 & 3);
    unsigned bits = drop_block_bits(s, threshold, l0 >> 2) >> sh;
    if (sh != 0) bits |= drop_block_bits(s, threshold, (l0 >> 2) + 1) << (4 - sh);
    return bits & 0xFu;
}

/* N mask bytes (N = 1, 2, 4 or 8; one a kept element) as bits, and back;
 * p is aligned to N. */
template <int N> __device__ __forceinline__ unsigned drop_load_bits(const unsigned char *p)
{
    typedef typename udnn_gpu_word<N>::t W;
    const W w = *(const W *)p;
    unsigned bits = 0;
    for (int k = 0; k < N; k++) bits |= (unsigned)((w >> (8 * k) & 0xFFu) != 0) << k;
    return bits;
}

template <int N> __device__ __forceinline__ void drop_store_bits(unsigned char *p, unsigned bits)
{
    typedef typename udnn_gpu_word<N>::t W;
    W w = 0;
    for (int k = 0; k < N; k++) w |= (W)(bits >> k & 1u) << (8 * k);
    *(W *)p = w;
}

/* out = in * scale in double, rounded once (through float for 16-bit
 * types, as the CPU stores them). */
template <class T> __device__ __forceinline__ T drop_scaled(T in, double scale)
{
    typedef typename io<T>::C C;
    return io<T>::st((C)((double)io<T>::ld(in) * scale));
}

template <class T> __device__ __forceinline__ T drop_value(T in, bool keep, double scale)
{
    return keep ? drop_scaled(in, scale) : io<T>::st(0);
}

/* ---- packed row-major --------------------------------------------------------------- */

/* Elements a thread takes at a time: 4 (one Philox block), or 8 for
 * 16-bit types so that each access moves 16 bytes. */
template <class T> struct drop_row {
    enum { N = sizeof(T) == 2 ? 8 : 4 };
};

/* The mask of the n (at most N) elements from logical index i0 (a
 * multiple of N): drawn and stored (FWD) or loaded; `full`: n == N and
 * the reserve is aligned, so one access moves it. */
template <bool FWD, int N>
__device__ __forceinline__ unsigned drop_chunk_bits(const drop_stream &s, const drop_args &a,
                                                    int64_t i0, int n, bool full)
{
    unsigned bits = 0;
    if (FWD) {
        for (int b = 0; b < N / 4; b++)
            bits |= drop_block_bits(s, a.threshold, (uint64_t)(i0 / 4 + b)) << (4 * b);
        if (full) {
            drop_store_bits<N>(a.reserve + i0, bits);
        } else {
            for (int k = 0; k < n; k++) a.reserve[i0 + k] = (unsigned char)(bits >> k & 1u);
        }
    } else if (full) {
        bits = drop_load_bits<N>(a.reserve + i0);
    } else {
        for (int k = 0; k < n; k++) bits |= (a.reserve[i0 + k] != 0 ? 1u : 0u) << k;
    }
    return bits;
}

/* Chunk j is logical elements N*j .. N*j+N-1, at the same memory offsets.
 * `vec`: in and out aligned to N elements, the reserve to N bytes. The
 * values are loaded before the mask is drawn, so that the load is in
 * flight during the Philox rounds (the reserve's byte stores may alias
 * them: the compiler would not hoist the load above them). */
template <class T, bool FWD>
__global__ void drop_rowmajor(int64_t count, const T *in, T *out, drop_args a, bool vec)
{
    enum { N = drop_row<T>::N };
    const drop_stream s = FWD ? drop_stream_of(a) : drop_stream{0, 0, false};
    const int64_t chunks = (count + N - 1) / N;
    UDNN_GPU_GRID_STRIDE_LOOP(j, chunks)
    {
        const int64_t i0 = j * N;
        if (vec && i0 + N <= count) {
            const udnn_gpu_pack<T, N> x = *(const udnn_gpu_pack<T, N> *)(in + i0);
            const unsigned bits = drop_chunk_bits<FWD, N>(s, a, i0, N, true);
            udnn_gpu_pack<T, N> y;
            for (int k = 0; k < N; k++) y.v[k] = drop_value(x.v[k], bits >> k & 1u, a.scale);
            *(udnn_gpu_pack<T, N> *)(out + i0) = y;
        } else {
            const int n = count - i0 < N ? (int)(count - i0) : N;
            const unsigned bits = drop_chunk_bits<FWD, N>(s, a, i0, n, false);
            for (int k = 0; k < n; k++)
                out[i0 + k] = drop_value(in[i0 + k], bits >> k & 1u, a.scale);
        }
    }
}

/* ---- packed channels-last ------------------------------------------------------------ */

/* Logical [outer][C][R] (R: the positions, every dim after C) stored as
 * [outer][R][C]. A block takes tiles of TC channels x TR positions: first
 * the mask of the tile in logical order (4 positions of one channel a
 * thread, the reserve written or read 4 bytes at a time where aligned)
 * into shared memory, position-major; then the values in memory order, V
 * elements (16 bytes) a thread where the layout allows. A tile of every
 * channel (C <= DROP_TILE_C: "flat") is one contiguous run of memory,
 * walked as such, its mask rows packed (pitch C) so that the mask is in
 * memory order too. */
#define DROP_TILE 4096        /* elements of a tile at most */
#define DROP_TILE_C 64        /* channels of a tile at most */
#define DROP_TILE_R 512       /* positions of a tile at most */
#define DROP_PITCH_PAD 8      /* not flat: a mask row is the tile's channels rounded up to 8, + 8 */
/* the mask of the largest tile with its row padding */
#define DROP_MASK_BYTES (DROP_TILE + (DROP_PITCH_PAD + 7) * DROP_TILE_R)

/* Elements of a tile: a thread holds its share of the values in
 * registers: at most 16 elements and 64 bytes. (Tiles of 8192 16-bit
 * values measured no faster on an H100, and slower for BFLOAT16, whose
 * conversions then cost registers.) */
template <class T, int V> struct drop_tile {
    enum { ELEMS = sizeof(T) == 8 ? DROP_TILE / 2 : DROP_TILE };
};

typedef struct {
    int64_t outer, channels, positions; /* outer, C, R */
    int tc, tr;                         /* tile: channels, positions (a multiple of 4) */
    int pitch;                          /* bytes of a position's row of the mask tile */
    int64_t ctiles, rtiles;
    bool tiles32;                       /* outer * ctiles * rtiles fits 32 bits */
} drop_cl_shape;

/* Tile t as (outer index, channel tile, position tile), in 32-bit
 * arithmetic where the tile count allows (64-bit division is a long
 * software sequence, and a tile is only a few accesses per thread). */
__device__ __forceinline__ void drop_tile_of(const drop_cl_shape &sh, int64_t t, int64_t &o,
                                             int64_t &ct, int64_t &rt)
{
    if (sh.tiles32) {
        const uint32_t tt = (uint32_t)t, rts = (uint32_t)sh.rtiles, cts = (uint32_t)sh.ctiles;
        const uint32_t q = tt / rts, oo = q / cts;
        rt = tt - q * rts;
        ct = q - oo * cts;
        o = oo;
    } else {
        const int64_t q = t / sh.rtiles;
        rt = t - q * sh.rtiles;
        o = q / sh.ctiles;
        ct = q - o * sh.ctiles;
    }
}

/* Loads (BWD) or draws and stores (FWD) the mask of the 4 positions
 * r .. r+3 (those below R) of channel c of outer index o. */
template <bool FWD>
__device__ __forceinline__ unsigned drop_cl_bits(const drop_cl_shape &sh, const drop_stream &s,
                                                 const drop_args &a, int64_t o, int64_t c,
                                                 int64_t r)
{
    const int64_t l0 = (o * sh.channels + c) * sh.positions + r;
    const int n = sh.positions - r < 4 ? (int)(sh.positions - r) : 4;
    const bool word = n == 4 && (l0 & 3) == 0; /* the reserve is 4-byte aligned */
    unsigned bits = 0;
    if (FWD) {
        bits = drop_run_bits(s, a.threshold, (uint64_t)l0);
        if (word) {
            drop_store_bits<4>(a.reserve + l0, bits);
        } else {
            for (int k = 0; k < n; k++) a.reserve[l0 + k] = (unsigned char)(bits >> k & 1u);
        }
    } else if (word) {
        bits = drop_load_bits<4>(a.reserve + l0);
    } else {
        for (int k = 0; k < n; k++) bits |= (a.reserve[l0 + k] != 0 ? 1u : 0u) << k;
    }
    return bits;
}

/* A walk over a tile's values in memory order, V channels a step,
 * channels fastest (a warp reads consecutive addresses); the threads of a
 * block take turns. */
typedef struct {
    int cv, rr;         /* channel group and position within the tile */
    int tcv;            /* channel groups of the tile */
    int step_c, step_r; /* one block's worth of steps */
} drop_walk;

__device__ __forceinline__ drop_walk drop_walk_start(int tcv)
{
    drop_walk w;
    w.tcv = tcv;
    w.cv = threadIdx.x % tcv;
    w.rr = threadIdx.x / tcv;
    w.step_c = blockDim.x % tcv;
    w.step_r = blockDim.x / tcv;
    return w;
}

__device__ __forceinline__ void drop_walk_next(drop_walk &w)
{
    w.cv += w.step_c;
    w.rr += w.step_r;
    if (w.cv >= w.tcv) {
        w.cv -= w.tcv;
        w.rr++;
    }
}

/* V: elements a thread moves at once (16 / sizeof(T) where the layout and
 * the pointers allow, else 1). A thread loads its values of the tile into
 * registers first (at most a tile / V / block accesses), so that the
 * loads are in flight while the mask is drawn. FLAT: the tile holds every
 * channel and is walked as one run of memory. */
template <class T, bool FWD, int V, bool FLAT>
__global__ void __launch_bounds__(UDNN_GPU_BLOCK)
    drop_channels_last(drop_cl_shape sh, const T *in, T *out, drop_args a)
{
    enum { ITEMS = (drop_tile<T, V>::ELEMS / V + UDNN_GPU_BLOCK - 1) / UDNN_GPU_BLOCK };
    __shared__ __align__(16) unsigned char mask[DROP_MASK_BYTES];
    const drop_stream s = FWD ? drop_stream_of(a) : drop_stream{0, 0, false};
    const int quads = sh.tr / 4;
    const int64_t tiles = sh.outer * sh.ctiles * sh.rtiles;
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        int64_t o, ct, rt;
        drop_tile_of(sh, t, o, ct, rt);
        const int64_t c0 = ct * sh.tc, r0 = rt * sh.tr;
        const int tc = sh.channels - c0 < sh.tc ? (int)(sh.channels - c0) : sh.tc;
        const int tr = sh.positions - r0 < sh.tr ? (int)(sh.positions - r0) : sh.tr;
        const T *tin = in + (o * sh.positions + r0) * sh.channels + c0;
        T *tout = out + (o * sh.positions + r0) * sh.channels + c0;
        const int run = tr * tc; /* FLAT: elements of the tile */

        udnn_gpu_pack<T, V> x[ITEMS];
        drop_walk w = drop_walk_start(FLAT ? 1 : tc / V); /* FLAT: unused */
#pragma unroll
        for (int it = 0; it < ITEMS; it++, drop_walk_next(w)) {
            if (FLAT) {
                const int e = (threadIdx.x + it * blockDim.x) * V;
                if (e < run) x[it] = *(const udnn_gpu_pack<T, V> *)(tin + e);
            } else if (w.rr < tr) {
                x[it] =
                    *(const udnn_gpu_pack<T, V> *)(tin + (int64_t)w.rr * sh.channels + w.cv * V);
            }
        }

        /* the mask: 4 positions of one channel a thread, positions fastest
         * so that a warp's reserve accesses are consecutive */
        for (int e = threadIdx.x; e < tc * quads; e += blockDim.x) {
            const int cc = e / quads, rr = e % quads * 4;
            if (rr >= tr) continue;
            const unsigned bits = drop_cl_bits<FWD>(sh, s, a, o, c0 + cc, r0 + rr);
            for (int k = 0; k < 4; k++)
                mask[(rr + k) * sh.pitch + cc] = (unsigned char)(bits >> k & 1u);
        }
        __syncthreads();

        w = drop_walk_start(FLAT ? 1 : tc / V);
#pragma unroll
        for (int it = 0; it < ITEMS; it++, drop_walk_next(w)) {
            int64_t off;
            int m;
            if (FLAT) {
                m = (threadIdx.x + it * blockDim.x) * V;
                if (m >= run) continue;
                off = m;
            } else {
                if (w.rr >= tr) continue;
                m = w.rr * sh.pitch + w.cv * V;
                off = (int64_t)w.rr * sh.channels + w.cv * V;
            }
            const unsigned bits = drop_load_bits<V>(mask + m);
            udnn_gpu_pack<T, V> y;
            for (int k = 0; k < V; k++) y.v[k] = drop_value(x[it].v[k], bits >> k & 1u, a.scale);
            *(udnn_gpu_pack<T, V> *)(tout + off) = y;
        }
        __syncthreads(); /* the mask tile is reused */
    }
}

/* ---- any strides ---------------------------------------------------------------------- */

/* Shape tensor 0 is out, 1 is in; a thread takes the 4 elements of one
 * Philox block. */
template <class T, bool FWD>
__global__ void drop_strided(udnn_gpu_shape sh, const T *in, T *out, drop_args a)
{
    const drop_stream s = FWD ? drop_stream_of(a) : drop_stream{0, 0, false};
    const int64_t groups = (sh.count + 3) / 4;
    UDNN_GPU_GRID_STRIDE_LOOP(g, groups)
    {
        const int64_t i0 = g * 4;
        const int n = sh.count - i0 < 4 ? (int)(sh.count - i0) : 4;
        const unsigned bits = FWD ? drop_block_bits(s, a.threshold, (uint64_t)g) : 0u;
        for (int k = 0; k < n; k++) {
            bool keep;
            if (FWD) {
                keep = bits >> k & 1u;
                a.reserve[i0 + k] = (unsigned char)keep;
            } else {
                keep = a.reserve[i0 + k] != 0;
            }
            int64_t off[2];
            udnn_gpu_offsets<2>(sh, i0 + k, off);
            out[off[0]] = drop_value(in[off[1]], keep, a.scale);
        }
    }
}

/* the call is drawn: the next forward call draws the next mask */
__global__ void drop_advance(uint64_t *states)
{
    states[1] += 1;
}

udnnStatus_t udnn_gpu_dropout_advance(const udnn_gpu_context *c, void *states)
{
    drop_advance<<<1, 1, 0, c->stream>>>((uint64_t *)states);
    return udnn_gpu_launched();
}

/* ---- layouts ----------------------------------------------------------------------------- */

/* Packed with logical order as memory order (dims of 1 place no
 * constraint). */
static int drop_row_major(const udnn_tensor *t)
{
    int64_t want = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->dims[d] != 1 && t->strides[d] != want) return 0;
        want *= t->dims[d];
    }
    return 1;
}

/* Packed channels-last: C innermost, then the later dims in order, then
 * dim 0. */
static int drop_channels_last_packed(const udnn_tensor *t)
{
    if (t->rank < 3) return 0;
    if (t->dims[1] != 1 && t->strides[1] != 1) return 0;
    int64_t want = t->dims[1];
    for (int d = t->rank - 1; d >= 2; d--) {
        if (t->dims[d] != 1 && t->strides[d] != want) return 0;
        want *= t->dims[d];
    }
    return t->dims[0] == 1 || t->strides[0] == want;
}

static drop_cl_shape drop_cl_shape_of(const udnn_tensor *t, int tile)
{
    drop_cl_shape sh;
    sh.outer = t->dims[0];
    sh.channels = t->dims[1];
    sh.positions = 1;
    for (int d = 2; d < t->rank; d++) sh.positions *= t->dims[d];
    /* all channels in one tile below DROP_TILE_C (the tile is then one
     * contiguous run of memory), else DROP_TILE_C of them */
    sh.tc = sh.channels < DROP_TILE_C ? (int)sh.channels : DROP_TILE_C;
    sh.tr = tile / sh.tc / 4 * 4;
    if (sh.tr > DROP_TILE_R) sh.tr = DROP_TILE_R;
    sh.pitch = sh.tc == sh.channels ? sh.tc : (sh.tc + 7) / 8 * 8 + DROP_PITCH_PAD;
    sh.ctiles = (sh.channels + sh.tc - 1) / sh.tc;
    sh.rtiles = (sh.positions + sh.tr - 1) / sh.tr;
    sh.tiles32 = sh.outer * sh.ctiles * sh.rtiles <= (int64_t)UINT32_MAX;
    return sh;
}

static int drop_aligned(const void *p, size_t bytes)
{
    return ((uintptr_t)p & (bytes - 1)) == 0;
}

/* ---- running -------------------------------------------------------------------------------- */

template <class T, bool FWD, int V, bool FLAT>
static void drop_launch_cl(const udnn_gpu_context *c, const drop_cl_shape &sh, const T *in, T *out,
                           const drop_args &a)
{
    const int64_t tiles = sh.outer * sh.ctiles * sh.rtiles;
    const unsigned blocks =
        (unsigned)(tiles < (int64_t)c->max_blocks ? tiles : (int64_t)c->max_blocks);
    drop_channels_last<T, FWD, V, FLAT><<<blocks, UDNN_GPU_BLOCK, 0, c->stream>>>(sh, in, out, a);
}

/* 16-byte accesses need every access of a tile to start at a multiple of
 * V elements: flat tiles start at multiples of tr * C and R * C, the
 * others' rows at multiples of C. */
template <class T, bool FWD>
static void drop_launch_channels_last(const udnn_gpu_context *c, const udnn_dropout_problem *p,
                                      const drop_args &a)
{
    enum { V = 16 / sizeof(T) };
    const T *in = (const T *)p->in_ptr;
    T *out = (T *)p->out_ptr;
    const drop_cl_shape sh = drop_cl_shape_of(&p->in, drop_tile<T, V>::ELEMS);
    const bool flat = sh.tc == sh.channels;
    bool vec = drop_aligned(in, 16) && drop_aligned(out, 16);
    if (flat)
        vec = vec && sh.positions * sh.channels % V == 0 && (int64_t)sh.tr * sh.channels % V == 0;
    else
        vec = vec && sh.channels % V == 0;
    if (vec) {
        if (flat) drop_launch_cl<T, FWD, V, true>(c, sh, in, out, a);
        else drop_launch_cl<T, FWD, V, false>(c, sh, in, out, a);
        return;
    }
    const drop_cl_shape sh1 = drop_cl_shape_of(&p->in, drop_tile<T, 1>::ELEMS);
    if (flat) drop_launch_cl<T, FWD, 1, true>(c, sh1, in, out, a);
    else drop_launch_cl<T, FWD, 1, false>(c, sh1, in, out, a);
}

template <class T, bool FWD>
static udnnStatus_t drop_launch(const udnn_gpu_context *c, const udnn_dropout_problem *p,
                                const drop_args &a)
{
    const T *in = (const T *)p->in_ptr;
    T *out = (T *)p->out_ptr;
    const int64_t count = udnn_gpu_count(&p->in);
    if (drop_row_major(&p->in) && drop_row_major(&p->out)) {
        const int n = drop_row<T>::N;
        const bool vec = drop_aligned(in, n * sizeof(T)) && drop_aligned(out, n * sizeof(T)) &&
                         drop_aligned(a.reserve, n);
        drop_rowmajor<T, FWD>
            <<<udnn_gpu_grid(c, (count + n - 1) / n), UDNN_GPU_BLOCK, 0, c->stream>>>(
                count, in, out, a, vec);
    } else if (drop_channels_last_packed(&p->in) && drop_channels_last_packed(&p->out) &&
               drop_aligned(a.reserve, 4)) {
        drop_launch_channels_last<T, FWD>(c, p, a);
    } else {
        const udnn_tensor *ts[2] = {&p->out, &p->in};
        const udnn_gpu_shape sh = udnn_gpu_make_shape(ts, 2);
        drop_strided<T, FWD>
            <<<udnn_gpu_grid(c, (count + 3) / 4), UDNN_GPU_BLOCK, 0, c->stream>>>(sh, in, out, a);
    }
    return udnn_gpu_launched();
}

static drop_args drop_args_of(const udnn_dropout_problem *p)
{
    drop_args a;
    a.states = (const uint64_t *)p->states;
    a.threshold = udnn_dropout_threshold(p->p);
    a.scale = 1.0 / (1.0 - (double)p->p);
    a.reserve = (unsigned char *)p->reserve;
    return a;
}

static int dropout_applicable(const void *problem, const char **why)
{
    const udnn_dropout_problem *p = (const udnn_dropout_problem *)problem;
    if (!udnn_gpu_float_type(p->in.dtype) || p->out.dtype != p->in.dtype) {
        *why = "the GPU dropout takes FLOAT, DOUBLE, HALF and BFLOAT16, input and output alike";
        return 0;
    }
    return 1;
}

static udnnStatus_t dropout_fwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_dropout_problem);
    const drop_args a = drop_args_of(p);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    if (udnn_gpu_count(&p->in) > 0) {
        UDNN_GPU_DISPATCH(p->in.dtype, st = drop_launch<T, true>(c, p, a));
        if (st != UDNN_STATUS_SUCCESS) return st;
    }
    /* dropout 0 without states counts nothing (as cpu/ref) */
    if (p->states == NULL) return st;
    return udnn_gpu_dropout_advance(c, p->states);
}

static udnnStatus_t dropout_bwd_run(void *ctx, const void *problem, void *ws, size_t ws_bytes)
{
    UDNN_GPU_RUN_PROLOGUE(udnn_dropout_problem);
    if (udnn_gpu_count(&p->in) == 0) return UDNN_STATUS_SUCCESS;
    const drop_args a = drop_args_of(p);
    udnnStatus_t st = UDNN_STATUS_SUCCESS;
    UDNN_GPU_DISPATCH(p->in.dtype, st = drop_launch<T, false>(c, p, a));
    return st;
}

static const udnn_solver dropout_fwd = {
    /* .name = */ "gpu_dropout_fwd",
    /* .op = */ UDNN_OP_DROPOUT_FWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ dropout_applicable,
    /* .workspace = */ NULL,
    /* .run = */ dropout_fwd_run,
};

static const udnn_solver dropout_bwd = {
    /* .name = */ "gpu_dropout_bwd",
    /* .op = */ UDNN_OP_DROPOUT_BWD,
    /* .algo = */ -1,
    /* .deterministic = */ 1,
    /* .applicable = */ dropout_applicable,
    /* .workspace = */ NULL,
    /* .run = */ dropout_bwd_run,
};

UDNN_GPU_SOLVER_TABLE(dropout, &dropout_fwd, &dropout_bwd);
