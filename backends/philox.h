/* philox.h - Philox4x32-10, the counter-based generator behind dropout's
 * cross-backend contract: every backend draws the same mask for the same
 * seed, shape and call. Plain C99 that also compiles as CUDA/HIP host and
 * device code.
 *
 * The contract (also stated in udnn.h): for element i (row-major logical
 * index over x's dims) of the dropout call numbered t (0 for the first
 * forward call on freshly set states) with seed s,
 *   r = philox4x32_10(counter = {lo(i/4), hi(i/4), lo(t), hi(t)},
 *                     key = {lo(s), hi(s)})[i % 4]
 * and the element is kept when r >= udnn_dropout_threshold(p). */
#ifndef UDNN_PHILOX_H
#define UDNN_PHILOX_H

#include <stdint.h>

#ifndef UDNN_PHILOX_QUALIFIER
#if defined(__CUDACC__) || defined(__HIPCC__)
#define UDNN_PHILOX_QUALIFIER __host__ __device__
#else
#define UDNN_PHILOX_QUALIFIER
#endif
#endif

typedef struct {
    uint32_t v[4];
} udnn_philox_block;

static inline UDNN_PHILOX_QUALIFIER udnn_philox_block
udnn_philox4x32_10(udnn_philox_block ctr, uint32_t key0, uint32_t key1)
{
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * ctr.v[0];
        uint64_t p1 = (uint64_t)0xCD9E8D57u * ctr.v[2];
        udnn_philox_block next;
        next.v[0] = (uint32_t)(p1 >> 32) ^ ctr.v[1] ^ key0;
        next.v[1] = (uint32_t)p1;
        next.v[2] = (uint32_t)(p0 >> 32) ^ ctr.v[3] ^ key1;
        next.v[3] = (uint32_t)p0;
        ctr = next;
        key0 += 0x9E3779B9u;
        key1 += 0xBB67AE85u;
    }
    return ctr;
}

/* The 32-bit draw of element `index` in dropout call `call` with `seed`. */
static inline UDNN_PHILOX_QUALIFIER uint32_t udnn_dropout_draw(uint64_t seed, uint64_t call,
                                                               uint64_t index)
{
    udnn_philox_block ctr;
    uint64_t block = index >> 2;
    ctr.v[0] = (uint32_t)block;
    ctr.v[1] = (uint32_t)(block >> 32);
    ctr.v[2] = (uint32_t)call;
    ctr.v[3] = (uint32_t)(call >> 32);
    return udnn_philox4x32_10(ctr, (uint32_t)seed, (uint32_t)(seed >> 32)).v[index & 3];
}

/* Draws at or above this are kept: round(p * 2^32), saturated. */
static inline UDNN_PHILOX_QUALIFIER uint64_t udnn_dropout_threshold(float p)
{
    double t = (double)p * 4294967296.0;
    return t >= 4294967296.0 ? (uint64_t)4294967296u : (uint64_t)(t + 0.5);
}

#endif /* UDNN_PHILOX_H */
