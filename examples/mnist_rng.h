/* mnist_rng.h - the example's own small random number generator.
 *
 * SplitMix64 (Steele, Lea and Flood, 2014): a 64-bit state advanced by the
 * golden-ratio constant, each output a bijective mix of the state. It is
 * tiny, passes BigCrush, and any seed (0 included) is a good one, so the
 * same --seed gives the same weights and the same shuffles on every
 * machine, whatever its C library's rand() does. */
#ifndef MNIST_RNG_H
#define MNIST_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t state;
} mnist_rng;

static inline mnist_rng mnist_rng_seeded(uint64_t seed)
{
    return (mnist_rng){seed};
}

static inline uint64_t mnist_rng_next(mnist_rng *r)
{
    uint64_t z = (r->state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in [0, 1) with the 53 bits a double holds. */
static inline double mnist_rng_uniform(mnist_rng *r)
{
    return (double)(mnist_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n) for n > 0. The modulo's bias is below n / 2^64, far
 * under anything a shuffle of 60,000 images could show. */
static inline uint32_t mnist_rng_below(mnist_rng *r, uint32_t n)
{
    return (uint32_t)(mnist_rng_next(r) % n);
}

#endif /* MNIST_RNG_H */
