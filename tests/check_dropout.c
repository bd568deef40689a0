/* check_dropout.c - DropoutForward and DropoutBackward on every backend:
 * the mask against a Philox4x32-10 written here from udnn.h's contract
 * (itself checked on Random123's known answers), bit for bit over seeds,
 * shapes, layouts and successive calls; Set and Restore and the call
 * counter in the states; y = x * mask / (1 - p) in every type and layout;
 * the kept fraction; backward from the reserve; p = 0 with and without
 * states; in-place runs; finite differences in DOUBLE; every validation
 * rule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/testutil.h"

#define N_TYPES 4
#define N_LAYOUTS 3

/* ---- Philox4x32-10 from the published algorithm -------------------------------- */

/* Salmon et al., "Parallel random numbers: as easy as 1, 2, 3" (SC'11):
 * ten rounds of two 32x32->64 multiplies, the key bumped by the Weyl
 * constants before every round but the first. */
enum {
    PHILOX_M0 = 0xD2511F53u,
    PHILOX_M1 = 0xCD9E8D57u,
    PHILOX_W0 = 0x9E3779B9u,
    PHILOX_W1 = 0xBB67AE85u,
};

static void philox_round(uint32_t x[4], const uint32_t key[2])
{
    uint64_t a = (uint64_t)PHILOX_M0 * x[0], b = (uint64_t)PHILOX_M1 * x[2];
    uint32_t a_hi = (uint32_t)(a >> 32), a_lo = (uint32_t)a;
    uint32_t b_hi = (uint32_t)(b >> 32), b_lo = (uint32_t)b;
    uint32_t y0 = b_hi ^ x[1] ^ key[0], y2 = a_hi ^ x[3] ^ key[1];
    x[0] = y0;
    x[1] = b_lo;
    x[2] = y2;
    x[3] = a_lo;
}

static void philox4x32_10(const uint32_t ctr[4], const uint32_t key_in[2], uint32_t out[4])
{
    uint32_t key[2] = {key_in[0], key_in[1]};
    memcpy(out, ctr, 4 * sizeof *out);
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            key[0] += PHILOX_W0;
            key[1] += PHILOX_W1;
        }
        philox_round(out, key);
    }
}

/* udnn.h: element i of call t with seed s is kept when word i % 4 of
 * Philox(counter {lo(i/4), hi(i/4), lo(t), hi(t)}, key {lo(s), hi(s)}) is
 * at least round(p * 2^32). */
static uint64_t keep_threshold(float p)
{
    double t = round((double)p * 4294967296.0);
    return t > 4294967296.0 ? UINT64_C(4294967296) : (uint64_t)t;
}

static void expected_mask(uint64_t seed, uint64_t call, float p, int64_t count,
                          unsigned char *mask)
{
    const uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    const uint64_t threshold = keep_threshold(p);
    for (int64_t i = 0; i < count; i++) {
        uint64_t block = (uint64_t)i / 4;
        const uint32_t ctr[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)call,
                                 (uint32_t)(call >> 32)};
        uint32_t r[4];
        philox4x32_10(ctr, key, r);
        mask[i] = r[i % 4] >= threshold;
    }
}

/* Random123's kat_vectors, philox4x32 10: counter, key, result. */
static const uint32_t kat[3][10] = {
    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d,
     0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09,
     0x94fdcceb, 0x5001e420, 0x24126ea1},
};

START_TEST(test_philox_known_answers)
{
    uint32_t out[4];
    philox4x32_10(&kat[_i][0], &kat[_i][4], out);
    for (int w = 0; w < 4; w++)
        ck_assert_msg(out[w] == kat[_i][6 + w], "vector %d word %d: %08x, want %08x", _i, w,
                      out[w], kat[_i][6 + w]);
}
END_TEST

/* ---- a handle, its states and a descriptor ---------------------------------------- */

typedef struct {
    udnnHandle_t h;
    udnnDropoutDescriptor_t dd;
    tu_buf states; /* guarded, in the handle's memory */
    size_t state_bytes;
} rig;

static void rig_init(rig *r, udnnBackend_t be, float p, unsigned long long seed)
{
    r->h = tu_handle(be);
    tu_ok(udnnDropoutGetStatesSize(r->h, &r->state_bytes));
    ck_assert_uint_ge(r->state_bytes, 16);
    tu_buf_init(&r->states, r->h, r->state_bytes);
    tu_ok(udnnCreateDropoutDescriptor(&r->dd));
    tu_ok(udnnSetDropoutDescriptor(r->dd, r->h, p, tu_buf_ptr(&r->states), r->state_bytes, seed));
}

static void rig_free(rig *r)
{
    ck_assert_msg(tu_buf_guards_intact(&r->states), "a call wrote outside the states");
    udnnDestroyDropoutDescriptor(r->dd);
    tu_buf_free(&r->states);
    udnnDestroy(r->h);
}

/* The states' key and call counter, as udnn.h lays them out. */
static void read_states(rig *r, uint64_t *key, uint64_t *calls)
{
    tu_buf_download(&r->states);
    memcpy(key, r->states.host, 8);
    memcpy(calls, r->states.host + 8, 8);
}

static void reserve_init(tu_buf *b, udnnHandle_t h, const tu_tensor *x)
{
    size_t bytes = 0;
    tu_ok(udnnDropoutGetReserveSpaceSize(x->desc, &bytes));
    ck_assert_uint_eq(bytes, (size_t)x->count);
    tu_buf_init(b, h, bytes);
}

static udnnStatus_t run_fwd(rig *r, tu_tensor *x, tu_tensor *y, tu_buf *reserve)
{
    return udnnDropoutForward(r->h, r->dd, x->desc, tu_buf_ptr(&x->buf), y->desc,
                              tu_buf_ptr(&y->buf), tu_buf_ptr(reserve), reserve->bytes);
}

static udnnStatus_t run_bwd(rig *r, tu_tensor *dy, tu_tensor *dx, tu_buf *reserve)
{
    return udnnDropoutBackward(r->h, r->dd, dy->desc, tu_buf_ptr(&dy->buf), dx->desc,
                               tu_buf_ptr(&dx->buf), tu_buf_ptr(reserve), reserve->bytes);
}

/* Downloads the reserve and asserts it is the expected mask, byte for byte. */
static void check_reserve(tu_buf *reserve, const unsigned char *want, const char *what)
{
    tu_buf_download(reserve);
    ck_assert_msg(tu_buf_guards_intact(reserve), "%s: a call wrote outside the reserve", what);
    for (size_t i = 0; i < reserve->bytes; i++)
        ck_assert_msg(reserve->host[i] == want[i], "%s: mask[%zu] is %u, want %u (seed %llu)",
                      what, i, reserve->host[i], want[i], (unsigned long long)tu_seed_used());
}

/* out = in * mask * (1 / (1 - p)), logical element by element: kept
 * elements scaled as udnn.h words it, so FLOAT and DOUBLE match exactly. */
static void expect_masked(const tu_tensor *in, const unsigned char *mask, float p, double *out)
{
    const double scale = 1.0 / (1.0 - (double)p);
    for (int64_t i = 0; i < in->count; i++) out[i] = mask[i] ? tu_get(in, i) * scale : 0.0;
}

/* Asserts every element of t equals want exactly (FLOAT and DOUBLE, where
 * the scaling is one rounding of the same product). */
static void check_exact(tu_tensor *t, const double *want, const char *what)
{
    tu_download(t);
    ck_assert_msg(tu_buf_guards_intact(&t->buf), "%s: a call wrote outside its output", what);
    for (int64_t i = 0; i < t->count; i++)
        ck_assert_msg(tu_get(t, i) == tu_round(t->dtype, want[i]),
                      "%s: element %lld is %.9g, want %.9g (seed %llu)", what, (long long)i,
                      tu_get(t, i), want[i], (unsigned long long)tu_seed_used());
}

/* A seed with both 32-bit halves in play, fresh each run. */
static unsigned long long fresh_seed(void)
{
    return ((unsigned long long)tu_int(0, 0x7fffffff) << 33) ^
           (unsigned long long)tu_int(0, 0x7fffffff) ^ ((unsigned long long)tu_int(0, 3) << 31);
}

/* ---- the mask, bit for bit ---------------------------------------------------------- */

/* rank, dims: one element, one block, blocks and a tail, 5-D, 3-D, 8-D. */
static const int shapes[][9] = {
    {3, 1, 1, 1},       {4, 1, 1, 1, 4}, {4, 2, 3, 1, 7}, {5, 2, 3, 2, 1, 5},
    {5, 1, 5, 3, 1, 1}, {3, 3, 7, 11},   {4, 3, 5, 7, 3}, {8, 2, 1, 3, 1, 2, 1, 1, 3},
};
#define N_SHAPES ((int)(sizeof shapes / sizeof *shapes))

static const unsigned long long fixed_seeds[] = {0ull, 1ull, 0x123456789abcdef0ull,
                                                 0xffffffffffffffffull};
#define N_SEEDS ((int)(sizeof fixed_seeds / sizeof *fixed_seeds) + 1) /* + a fresh one */

static const float mask_ps[] = {0.5f, 0.1f, 0.9f, 0.3f, 0.75f};
#define N_MASK_PS ((int)(sizeof mask_ps / sizeof *mask_ps))

START_TEST(test_mask_contract)
{
    tu_seed_fresh();
    int si = _i % N_SEEDS;
    unsigned long long seed = si < N_SEEDS - 1 ? fixed_seeds[si] : fresh_seed();
    tu_layout l = (tu_layout)(_i / N_SEEDS);
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++)
        for (int s = 0; s < N_SHAPES; s++) {
            float p = mask_ps[(s + _i) % N_MASK_PS];
            rig r;
            rig_init(&r, be[b], p, seed);
            tu_tensor x, y;
            tu_tensor_init(&x, r.h, UDNN_DATA_FLOAT, shapes[s][0], &shapes[s][1], l);
            tu_tensor_init(&y, r.h, UDNN_DATA_FLOAT, shapes[s][0], &shapes[s][1], l);
            tu_fill_uniform(&x, -2.0, 2.0);
            tu_buf reserve;
            reserve_init(&reserve, r.h, &x);
            unsigned char *want = malloc((size_t)x.count);
            double *ref = malloc((size_t)x.count * sizeof *ref);
            char what[128];
            snprintf(what, sizeof what, "%s %s shape %d p %g seed %llu", tu_backend_name(be[b]),
                     tu_layout_name(l), s, (double)p, seed);

            tu_ok(run_fwd(&r, &x, &y, &reserve));
            expected_mask(seed, 0, p, x.count, want);
            check_reserve(&reserve, want, what);
            expect_masked(&x, want, p, ref);
            check_exact(&y, ref, what);

            free(want);
            free(ref);
            tu_buf_free(&reserve);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            rig_free(&r);
        }
}
END_TEST

/* ---- successive calls, Set and Restore ------------------------------------------------ */

/* Runs one forward call and asserts it drew call `call` of key `key`. */
static void forward_as_call(rig *r, tu_tensor *x, tu_tensor *y, tu_buf *reserve, float p,
                            uint64_t key, uint64_t call, unsigned char *mask, const char *what)
{
    tu_ok(run_fwd(r, x, y, reserve));
    expected_mask(key, call, p, x->count, mask);
    char buf[160];
    snprintf(buf, sizeof buf, "%s, call %llu", what, (unsigned long long)call);
    check_reserve(reserve, mask, buf);
    uint64_t k, calls;
    read_states(r, &k, &calls);
    ck_assert_msg(k == key && calls == call + 1, "%s: states hold key %llu and %llu calls", buf,
                  (unsigned long long)k, (unsigned long long)calls);
}

START_TEST(test_successive_calls)
{
    tu_seed_fresh();
    tu_layout l = (tu_layout)_i;
    const float p = 0.5f;
    static const int dims[4] = {2, 3, 5, 7};
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        unsigned long long seed = fresh_seed(), other = seed ^ 0x5555aaaa5555aaaaull;
        rig r;
        rig_init(&r, be[b], p, seed);
        tu_tensor x, y;
        tu_tensor_init(&x, r.h, UDNN_DATA_FLOAT, 4, dims, l);
        tu_tensor_init(&y, r.h, UDNN_DATA_FLOAT, 4, dims, l);
        tu_fill_uniform(&x, 0.5, 2.0);
        tu_buf reserve;
        reserve_init(&reserve, r.h, &x);
        unsigned char *masks[3];
        for (int t = 0; t < 3; t++) {
            masks[t] = malloc((size_t)x.count);
            forward_as_call(&r, &x, &y, &reserve, p, seed, (uint64_t)t, masks[t], "after Set");
        }
        for (int t = 1; t < 3; t++)
            ck_assert_msg(memcmp(masks[t], masks[t - 1], (size_t)x.count) != 0,
                          "calls %d and %d drew the same mask", t - 1, t);

        /* Restore keeps the states: the count goes on, and as cuDNN's Restore,
         * a different seed there has no effect on the key */
        tu_ok(udnnRestoreDropoutDescriptor(r.dd, r.h, p, tu_buf_ptr(&r.states), r.state_bytes,
                                           other));
        forward_as_call(&r, &x, &y, &reserve, p, seed, 3, masks[0], "after Restore");

        /* a second descriptor restored on the same states shares the count */
        udnnDropoutDescriptor_t second;
        tu_ok(udnnCreateDropoutDescriptor(&second));
        tu_ok(udnnRestoreDropoutDescriptor(second, r.h, p, tu_buf_ptr(&r.states), r.state_bytes,
                                           seed));
        udnnDropoutDescriptor_t first = r.dd;
        r.dd = second;
        forward_as_call(&r, &x, &y, &reserve, p, seed, 4, masks[0], "second descriptor");
        r.dd = first;
        udnnDestroyDropoutDescriptor(second);

        /* Set starts again from call 0 with the new seed */
        tu_ok(udnnSetDropoutDescriptor(r.dd, r.h, p, tu_buf_ptr(&r.states), r.state_bytes,
                                       other));
        forward_as_call(&r, &x, &y, &reserve, p, other, 0, masks[0], "after a new Set");
        tu_ok(udnnSetDropoutDescriptor(r.dd, r.h, p, tu_buf_ptr(&r.states), r.state_bytes,
                                       seed));
        forward_as_call(&r, &x, &y, &reserve, p, seed, 0, masks[1], "after Set again");
        forward_as_call(&r, &x, &y, &reserve, p, seed, 1, masks[2], "after Set again");

        for (int t = 0; t < 3; t++) free(masks[t]);
        tu_buf_free(&reserve);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        rig_free(&r);
    }
}
END_TEST

/* Two handles of one backend: states set through one serve calls on the
 * other, and the mask is the contract's. */
START_TEST(test_other_handle)
{
    tu_seed_fresh();
    static const int dims[3] = {3, 5, 7};
    const float p = 0.4f;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        unsigned long long seed = fresh_seed();
        rig r;
        rig_init(&r, be[b], p, seed);
        udnnHandle_t owner = r.h;
        r.h = tu_handle(be[b]);
        tu_tensor x, y;
        tu_tensor_init(&x, r.h, UDNN_DATA_DOUBLE, 3, dims, TU_NCHW);
        tu_tensor_init(&y, r.h, UDNN_DATA_DOUBLE, 3, dims, TU_NCHW);
        tu_fill_uniform(&x, -1.0, 1.0);
        tu_buf reserve;
        reserve_init(&reserve, r.h, &x);
        unsigned char *mask = malloc((size_t)x.count);
        forward_as_call(&r, &x, &y, &reserve, p, seed, 0, mask, "other handle");
        free(mask);
        tu_buf_free(&reserve);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        udnnDestroy(r.h);
        r.h = owner;
        rig_free(&r);
    }
}
END_TEST

/* ---- values in every type and layout ------------------------------------------------------ */

/* Shapes of at least 42 elements, so no p here drops them all. */
static const int value_shapes[][6] = {{4, 2, 3, 1, 7}, {5, 2, 3, 2, 1, 5}, {3, 3, 7, 11},
                                      {4, 1, 5, 3, 4}};
#define N_VALUE_SHAPES ((int)(sizeof value_shapes / sizeof *value_shapes))
static const float value_ps[] = {0.25f, 0.5f, 0.125f, 0.4f};

START_TEST(test_forward_values)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++)
        for (int s = 0; s < N_VALUE_SHAPES; s++) {
            float p = value_ps[s];
            unsigned long long seed = fresh_seed();
            rig r;
            rig_init(&r, be[b], p, seed);
            tu_tensor x, y;
            tu_tensor_init(&x, r.h, t, value_shapes[s][0], &value_shapes[s][1], l);
            tu_tensor_init(&y, r.h, t, value_shapes[s][0], &value_shapes[s][1], l);
            tu_fill_uniform(&x, -3.0, 3.0);
            tu_buf reserve;
            reserve_init(&reserve, r.h, &x);
            unsigned char *mask = malloc((size_t)x.count);
            double *ref = malloc((size_t)x.count * sizeof *ref);
            char what[128];
            snprintf(what, sizeof what, "%s %s %s shape %d p %g", tu_backend_name(be[b]),
                     tu_dtype_name(t), tu_layout_name(l), s, (double)p);
            /* a few calls in: the counter moves the mask, the values follow it */
            for (uint64_t call = 0; call < 3; call++) {
                forward_as_call(&r, &x, &y, &reserve, p, seed, call, mask, what);
                expect_masked(&x, mask, p, ref);
                tu_check_tensor(&y, ref, what);
                tu_buf_poison(&y.buf);
            }
            free(mask);
            free(ref);
            tu_buf_free(&reserve);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            rig_free(&r);
        }
}
END_TEST

/* ---- backward ------------------------------------------------------------------------------ */

START_TEST(test_backward)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++)
        for (int s = 0; s < N_VALUE_SHAPES; s++) {
            float p = value_ps[(s + 1) % N_VALUE_SHAPES];
            unsigned long long seed = fresh_seed();
            rig r;
            rig_init(&r, be[b], p, seed);
            const int rank = value_shapes[s][0], *dims = &value_shapes[s][1];
            tu_tensor x, y, dy, dx;
            tu_tensor_init(&x, r.h, t, rank, dims, l);
            tu_tensor_init(&y, r.h, t, rank, dims, l);
            tu_tensor_init(&dy, r.h, t, rank, dims, l);
            tu_tensor_init(&dx, r.h, t, rank, dims, l);
            tu_fill_uniform(&x, -3.0, 3.0);
            tu_fill_uniform(&dy, -1.0, 1.0);
            tu_buf reserve;
            reserve_init(&reserve, r.h, &x);
            unsigned char *mask = malloc((size_t)x.count);
            double *ref = malloc((size_t)x.count * sizeof *ref);
            char what[128];
            snprintf(what, sizeof what, "%s %s %s shape %d p %g", tu_backend_name(be[b]),
                     tu_dtype_name(t), tu_layout_name(l), s, (double)p);

            forward_as_call(&r, &x, &y, &reserve, p, seed, 0, mask, what);
            tu_ok(run_bwd(&r, &dy, &dx, &reserve));
            expect_masked(&dy, mask, p, ref);
            tu_check_tensor(&dx, ref, what);

            /* the mask is the reserve's, whatever wrote it; the states stay */
            for (int64_t i = 0; i < x.count; i++) mask[i] = (unsigned char)(i % 3 != 1);
            memcpy(reserve.host, mask, (size_t)x.count);
            tu_buf_upload(&reserve);
            tu_buf_poison(&dx.buf);
            tu_ok(run_bwd(&r, &dy, &dx, &reserve));
            expect_masked(&dy, mask, p, ref);
            tu_check_tensor(&dx, ref, what);
            uint64_t key, calls;
            read_states(&r, &key, &calls);
            ck_assert_msg(key == seed && calls == 1, "%s: backward changed the states", what);

            free(mask);
            free(ref);
            tu_buf_free(&reserve);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            tu_tensor_free(&dy);
            tu_tensor_free(&dx);
            rig_free(&r);
        }
}
END_TEST

/* ---- the kept fraction --------------------------------------------------------------------- */

static const float fraction_ps[] = {0.01f, 0.1f, 0.5f, 0.9f};
#define N_FRACTION_PS ((int)(sizeof fraction_ps / sizeof *fraction_ps))

/* On 2^20 elements, the kept fraction, overall and of each Philox word,
 * is within 6 standard deviations of 1 - p. */
START_TEST(test_kept_fraction)
{
    tu_seed_fresh();
    const float p = fraction_ps[_i];
    static const int dims[4] = {16, 16, 64, 64};
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        rig r;
        rig_init(&r, be[b], p, fresh_seed());
        tu_tensor x, y;
        tu_tensor_init(&x, r.h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
        tu_tensor_init(&y, r.h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
        tu_fill_uniform(&x, 1.0, 2.0);
        tu_buf reserve;
        reserve_init(&reserve, r.h, &x);
        tu_ok(run_fwd(&r, &x, &y, &reserve));
        tu_buf_download(&reserve);
        int64_t kept[4] = {0, 0, 0, 0};
        for (int64_t i = 0; i < x.count; i++) kept[i % 4] += reserve.host[i];
        const double keep = 1.0 - (double)p;
        double all = (double)(kept[0] + kept[1] + kept[2] + kept[3]) / (double)x.count;
        double sigma = sqrt((double)p * keep / (double)x.count);
        ck_assert_msg(fabs(all - keep) < 6.0 * sigma, "p %g: kept %g of the elements",
                      (double)p, all);
        for (int w = 0; w < 4; w++) {
            double f = (double)kept[w] * 4.0 / (double)x.count;
            ck_assert_msg(fabs(f - keep) < 12.0 * sigma, "p %g: word %d kept %g", (double)p, w,
                          f);
        }
        tu_buf_free(&reserve);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        rig_free(&r);
    }
}
END_TEST

/* ---- dropout 0 ------------------------------------------------------------------------------ */

/* x passes through unchanged and the mask is all ones; with states the
 * call still counts, without states (allowed for 0 only) there is none. */
START_TEST(test_zero_dropout)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    int with_states = _i / N_TYPES;
    static const int dims[5] = {2, 3, 2, 1, 5};
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        unsigned long long seed = fresh_seed();
        rig r;
        rig_init(&r, be[b], 0.0f, seed);
        if (!with_states)
            tu_ok(udnnSetDropoutDescriptor(r.dd, r.h, 0.0f, NULL, 0, seed));
        tu_tensor x, y, dx;
        tu_tensor_init(&x, r.h, t, 5, dims, TU_STRIDED);
        tu_tensor_init(&y, r.h, t, 5, dims, TU_NHWC);
        tu_tensor_init(&dx, r.h, t, 5, dims, TU_NCHW);
        tu_fill_uniform(&x, -3.0, 3.0);
        tu_buf reserve;
        reserve_init(&reserve, r.h, &x);
        unsigned char *ones = malloc((size_t)x.count);
        memset(ones, 1, (size_t)x.count);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        tu_values(&x, ref);
        for (int call = 0; call < 2; call++) {
            tu_ok(run_fwd(&r, &x, &y, &reserve));
            check_reserve(&reserve, ones, "dropout 0");
            check_exact(&y, ref, "dropout 0 forward");
        }
        tu_ok(run_bwd(&r, &x, &dx, &reserve));
        check_exact(&dx, ref, "dropout 0 backward");
        uint64_t key, calls;
        read_states(&r, &key, &calls);
        ck_assert_msg(key == seed && calls == (with_states ? 2u : 0u),
                      "states hold key %llu and %llu calls", (unsigned long long)key,
                      (unsigned long long)calls);
        free(ones);
        free(ref);
        tu_buf_free(&reserve);
        tu_tensor_free(&x);
        tu_tensor_free(&y);
        tu_tensor_free(&dx);
        rig_free(&r);
    }
}
END_TEST

/* ---- in place ------------------------------------------------------------------------------- */

START_TEST(test_in_place)
{
    tu_seed_fresh();
    udnnDataType_t t = tu_float_types[_i % N_TYPES];
    tu_layout l = (tu_layout)(_i / N_TYPES);
    static const int dims[4] = {3, 5, 2, 7};
    const float p = 0.3f;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        unsigned long long seed = fresh_seed();
        rig r;
        rig_init(&r, be[b], p, seed);
        tu_tensor x, dy;
        tu_tensor_init(&x, r.h, t, 4, dims, l);
        tu_tensor_init(&dy, r.h, t, 4, dims, l);
        tu_fill_uniform(&x, -3.0, 3.0);
        tu_fill_uniform(&dy, -1.0, 1.0);
        tu_buf reserve;
        reserve_init(&reserve, r.h, &x);
        unsigned char *mask = malloc((size_t)x.count);
        double *ref = malloc((size_t)x.count * sizeof *ref);
        expected_mask(seed, 0, p, x.count, mask);
        expect_masked(&x, mask, p, ref);
        tu_ok(run_fwd(&r, &x, &x, &reserve));
        check_reserve(&reserve, mask, "forward in place");
        tu_check_tensor(&x, ref, "forward in place");
        expect_masked(&dy, mask, p, ref);
        tu_ok(run_bwd(&r, &dy, &dy, &reserve));
        tu_check_tensor(&dy, ref, "backward in place");
        free(mask);
        free(ref);
        tu_buf_free(&reserve);
        tu_tensor_free(&x);
        tu_tensor_free(&dy);
        rig_free(&r);
    }
}
END_TEST

/* ---- finite differences in DOUBLE ----------------------------------------------------------- */

/* L = sum(dy . dropout(x)) for call 0 of the seed: Set before each forward
 * call brings the counter back, so every call draws the same mask. */
static double loss(rig *r, unsigned long long seed, float p, tu_tensor *x, tu_tensor *y,
                   tu_buf *reserve, const double *dy)
{
    tu_ok(udnnSetDropoutDescriptor(r->dd, r->h, p, tu_buf_ptr(&r->states), r->state_bytes,
                                   seed));
    tu_upload(x);
    tu_ok(run_fwd(r, x, y, reserve));
    tu_download(y);
    return tu_dot(y, dy);
}

START_TEST(test_finite_differences)
{
    tu_seed_fresh();
    tu_layout l = (tu_layout)_i;
    const double step = 1e-6;
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++)
        for (int s = 0; s < N_VALUE_SHAPES; s++) {
            float p = value_ps[s];
            unsigned long long seed = fresh_seed();
            rig r;
            rig_init(&r, be[b], p, seed);
            const int rank = value_shapes[s][0], *dims = &value_shapes[s][1];
            tu_tensor x, y, dy, dx;
            tu_tensor_init(&x, r.h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&y, r.h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&dy, r.h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_tensor_init(&dx, r.h, UDNN_DATA_DOUBLE, rank, dims, l);
            tu_fill_uniform(&x, -2.0, 2.0);
            tu_fill_uniform(&dy, -1.0, 1.0);
            tu_buf reserve;
            reserve_init(&reserve, r.h, &x);
            double *dyv = malloc((size_t)x.count * sizeof *dyv);
            double *num = malloc((size_t)x.count * sizeof *num);
            double *ana = malloc((size_t)x.count * sizeof *ana);
            tu_values(&dy, dyv);
            loss(&r, seed, p, &x, &y, &reserve, dyv);
            tu_ok(run_bwd(&r, &dy, &dx, &reserve));
            for (int64_t i = 0; i < x.count; i++) {
                double xi = tu_get(&x, i);
                tu_set(&x, i, xi + step);
                double up = loss(&r, seed, p, &x, &y, &reserve, dyv);
                tu_set(&x, i, xi - step);
                double down = loss(&r, seed, p, &x, &y, &reserve, dyv);
                tu_set(&x, i, xi);
                num[i] = (up - down) / (2.0 * step);
            }
            tu_download(&dx);
            tu_values(&dx, ana);
            double err = tu_rel_error(ana, num, x.count);
            ck_assert_msg(err < 1e-6, "%s %s shape %d p %g: rel err %g vs finite differences "
                                      "(seed %llu)",
                          tu_backend_name(be[b]), tu_layout_name(l), s, (double)p, err,
                          (unsigned long long)tu_seed_used());
            free(dyv);
            free(num);
            free(ana);
            tu_buf_free(&reserve);
            tu_tensor_free(&x);
            tu_tensor_free(&y);
            tu_tensor_free(&dy);
            tu_tensor_free(&dx);
            rig_free(&r);
        }
}
END_TEST

/* ---- validation --------------------------------------------------------------------------- */

/* A rig with p 0.5, f32 2x3x4x5 input and output, their reserve, and the
 * wrong descriptors the cases swap in. */
typedef struct {
    rig r;
    udnnDropoutDescriptor_t unset;
    tu_tensor in, out;
    tu_buf reserve;
    udnnTensorDescriptor_t unset_t, s8, f64, other_dims, rank2, rank5, nhwc;
} fixture;

static void fixture_init(fixture *f, udnnBackend_t be)
{
    static const int dims[4] = {2, 3, 4, 5}, other[4] = {2, 3, 5, 4}, r2[2] = {6, 20},
                     r5[5] = {2, 3, 4, 5, 1};
    rig_init(&f->r, be, 0.5f, 7);
    tu_ok(udnnCreateDropoutDescriptor(&f->unset));
    tu_tensor_init(&f->in, f->r.h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_tensor_init(&f->out, f->r.h, UDNN_DATA_FLOAT, 4, dims, TU_NCHW);
    tu_fill_uniform(&f->in, -1, 1);
    reserve_init(&f->reserve, f->r.h, &f->in);
    tu_ok(udnnCreateTensorDescriptor(&f->unset_t));
    f->s8 = tu_packed_desc(UDNN_DATA_INT8, 4, dims);
    f->f64 = tu_packed_desc(UDNN_DATA_DOUBLE, 4, dims);
    f->other_dims = tu_packed_desc(UDNN_DATA_FLOAT, 4, other);
    f->rank2 = tu_packed_desc(UDNN_DATA_FLOAT, 2, r2);
    f->rank5 = tu_packed_desc(UDNN_DATA_FLOAT, 5, r5);
    tu_ok(udnnCreateTensorDescriptor(&f->nhwc));
    tu_ok(udnnSetTensor4dDescriptor(f->nhwc, UDNN_TENSOR_NHWC, UDNN_DATA_FLOAT, 2, 3, 4, 5));
}

/* Asserts a rejected call left the output, the reserve and the states as
 * they were, then frees the fixture. */
static void fixture_check_and_free(fixture *f)
{
    tu_download(&f->out);
    for (size_t i = 0; i < f->out.buf.bytes; i++)
        ck_assert_msg(f->out.buf.host[i] == 0xFF, "a rejected call wrote its output");
    tu_buf_download(&f->reserve);
    for (size_t i = 0; i < f->reserve.bytes; i++)
        ck_assert_msg(f->reserve.host[i] == 0xFF, "a rejected call wrote the reserve");
    ck_assert(tu_buf_guards_intact(&f->out.buf) && tu_buf_guards_intact(&f->reserve));
    uint64_t key, calls;
    read_states(&f->r, &key, &calls);
    ck_assert_msg(key == 7 && calls == 0, "a rejected call changed the states");

    tu_tensor_free(&f->in);
    tu_tensor_free(&f->out);
    tu_buf_free(&f->reserve);
    udnnTensorDescriptor_t descs[] = {f->unset_t, f->s8, f->f64, f->other_dims, f->rank2,
                                      f->rank5, f->nhwc};
    for (size_t i = 0; i < sizeof descs / sizeof *descs; i++) udnnDestroyTensorDescriptor(descs[i]);
    udnnDestroyDropoutDescriptor(f->unset);
    rig_free(&f->r);
}

typedef struct {
    udnnStatus_t status;
    const char *arg;
} bad_expect;

/* The cases, with "in"/"out" read as x/y forward and dy/dx backward. */
enum {
    BAD_HANDLE,
    BAD_DESC_NULL,
    BAD_DESC_UNSET,
    BAD_IN_DESC_NULL,
    BAD_IN_DESC_UNSET,
    BAD_IN_NULL,
    BAD_OUT_DESC_NULL,
    BAD_OUT_DESC_UNSET,
    BAD_OUT_NULL,
    BAD_RESERVE_NULL,
    BAD_TYPE,
    BAD_RANK2,
    BAD_OUT_TYPE,
    BAD_OUT_DIMS,
    BAD_OUT_RANK,
    BAD_IN_PLACE,
    BAD_RESERVE_SIZE,
    BAD_RESERVE_ZERO,
    N_BAD
};

static const bad_expect fwd_bad[N_BAD] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dropoutDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dropoutDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "xdesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "xdesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "x is NULL"},
    {UDNN_STATUS_BAD_PARAM, "ydesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "ydesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "y is NULL"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpace is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "xdesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "xdesc has 2 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "ydesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "ydesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "ydesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "y is the buffer of x (in place), but ydesc and xdesc"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes is 119; xdesc needs 120"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes is 0"},
};

static const bad_expect bwd_bad[N_BAD] = {
    {UDNN_STATUS_BAD_PARAM, "handle is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dropoutDesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dropoutDesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dydesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dydesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dy is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxdesc is NULL"},
    {UDNN_STATUS_BAD_PARAM, "dxdesc has not been set"},
    {UDNN_STATUS_BAD_PARAM, "dx is NULL"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpace is NULL"},
    {UDNN_STATUS_NOT_SUPPORTED, "dydesc has data type s8"},
    {UDNN_STATUS_BAD_PARAM, "dydesc has 2 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dxdesc has data type f64"},
    {UDNN_STATUS_BAD_PARAM, "dxdesc has dimension 2"},
    {UDNN_STATUS_BAD_PARAM, "dxdesc has 5 dimensions"},
    {UDNN_STATUS_BAD_PARAM, "dx is the buffer of dy (in place), but dxdesc and dydesc"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes is 119; dydesc needs 120"},
    {UDNN_STATUS_BAD_PARAM, "reserveSpaceSizeInBytes is 0"},
};

/* Runs case `bad` forward (backward == 0) or backward and checks the rejection. */
static void check_bad(int bad, int backward)
{
    udnnBackend_t be[3];
    int nb = tu_backends(be);
    for (int b = 0; b < nb; b++) {
        fixture f;
        fixture_init(&f, be[b]);
        udnnHandle_t h = f.r.h;
        udnnDropoutDescriptor_t dd = f.r.dd;
        udnnTensorDescriptor_t in_d = f.in.desc, out_d = f.out.desc;
        const void *in = tu_buf_ptr(&f.in.buf);
        void *out = tu_buf_ptr(&f.out.buf), *reserve = tu_buf_ptr(&f.reserve);
        size_t reserve_bytes = f.reserve.bytes;
        switch (bad) {
        case BAD_HANDLE: h = NULL; break;
        case BAD_DESC_NULL: dd = NULL; break;
        case BAD_DESC_UNSET: dd = f.unset; break;
        case BAD_IN_DESC_NULL: in_d = NULL; break;
        case BAD_IN_DESC_UNSET: in_d = f.unset_t; break;
        case BAD_IN_NULL: in = NULL; break;
        case BAD_OUT_DESC_NULL: out_d = NULL; break;
        case BAD_OUT_DESC_UNSET: out_d = f.unset_t; break;
        case BAD_OUT_NULL: out = NULL; break;
        case BAD_RESERVE_NULL: reserve = NULL; break;
        case BAD_TYPE: in_d = out_d = f.s8; break;
        case BAD_RANK2: in_d = out_d = f.rank2; break;
        case BAD_OUT_TYPE: out_d = f.f64; break;
        case BAD_OUT_DIMS: out_d = f.other_dims; break;
        case BAD_OUT_RANK: out_d = f.rank5; break;
        case BAD_IN_PLACE: in_d = f.nhwc, in = out; break;
        case BAD_RESERVE_SIZE: reserve_bytes -= 1; break;
        case BAD_RESERVE_ZERO: reserve_bytes = 0; break;
        }
        const bad_expect *e = backward ? &bwd_bad[bad] : &fwd_bad[bad];
        udnnStatus_t st =
            backward ? udnnDropoutBackward(h, dd, in_d, in, out_d, out, reserve, reserve_bytes)
                     : udnnDropoutForward(h, dd, in_d, in, out_d, out, reserve, reserve_bytes);
        tu_assert_fails(st, e->status, backward ? "udnnDropoutBackward" : "udnnDropoutForward",
                        e->arg);
        fixture_check_and_free(&f);
    }
}

START_TEST(test_fwd_bad)
{
    check_bad(_i, 0);
}
END_TEST

START_TEST(test_bwd_bad)
{
    check_bad(_i, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dropout");
    TCase *ops = tcase_create("ops");
    tcase_set_timeout(ops, 60);
    tcase_add_loop_test(ops, test_philox_known_answers, 0, 3);
    tcase_add_loop_test(ops, test_mask_contract, 0, N_SEEDS * N_LAYOUTS);
    tcase_add_loop_test(ops, test_successive_calls, 0, N_LAYOUTS);
    tcase_add_test(ops, test_other_handle);
    tcase_add_loop_test(ops, test_forward_values, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_backward, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_kept_fraction, 0, N_FRACTION_PS);
    tcase_add_loop_test(ops, test_zero_dropout, 0, 2 * N_TYPES);
    tcase_add_loop_test(ops, test_in_place, 0, N_TYPES * N_LAYOUTS);
    tcase_add_loop_test(ops, test_finite_differences, 0, N_LAYOUTS);
    suite_add_tcase(s, ops);

    TCase *bad = tcase_create("validation");
    tcase_add_loop_test(bad, test_fwd_bad, 0, N_BAD);
    tcase_add_loop_test(bad, test_bwd_bad, 0, N_BAD);
    suite_add_tcase(s, bad);
    return tu_run_suite(s);
}
