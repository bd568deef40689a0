/* math.h - exp and log for the reference's arithmetic (backends/ref), in
 * additions, multiplications, divisions, floor and exact bit operations
 * only, so that a GPU backend's reference-bits solvers round exactly as
 * cpu/ref does: math libraries agree to an ulp or so, not to the bit.
 * Against glibc's on 2e7 arguments over the whole double range: exp within
 * 1 ulp, log within 2. */
#ifndef UDNN_REF_MATH_H
#define UDNN_REF_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "backends/ref/fn.h"

/* ln 2 split: REF_LN2_HI has its low 32 bits zero, so k * REF_LN2_HI is
 * exact for |k| < 2^20 */
#define REF_LN2_HI 6.93147180369123816490e-01
#define REF_LN2_LO 1.90821492927058770002e-10
#define REF_INV_LN2 1.44269504088896338700e+00

/* 2^k for k in [-1022, 1023], exactly */
UDNN_REF_FN double ref_pow2(int64_t k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

UDNN_REF_FN double ref_exp(double x)
{
    if (x != x) return x + x;                  /* NaN */
    if (x > 709.782712893384) return INFINITY; /* past DBL_MAX */
    if (x < -745.1332191019412) return 0.0;    /* below half the least subnormal */
    /* x = k ln2 + r, |r| <= ln2 / 2 */
    const double k = floor(x * REF_INV_LN2 + 0.5);
    const double r = (x - k * REF_LN2_HI) - k * REF_LN2_LO;
    /* exp(r) by its Taylor series to r^13 (the next term is under 2^-60) */
    double p = 1.0 / 6227020800.0;
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    const double e = 1.0 + (r + r * r * p);
    /* times 2^k, in two steps where 2^k alone would leave the normal range */
    const int64_t ki = (int64_t)k;
    if (ki > 1023) return e * ref_pow2(1023) * ref_pow2(ki - 1023);
    if (ki < -1022) return e * ref_pow2(ki + 600) * ref_pow2(-600);
    return e * ref_pow2(ki);
}

UDNN_REF_FN double ref_log(double x)
{
    if (x != x) return x + x; /* NaN */
    if (x < 0.0) return NAN;
    if (x == 0.0) return -INFINITY;
    if (x == INFINITY) return x;
    int64_t e = 0;
    if (x < 0x1p-1022) { /* subnormal: normalize */
        x *= 0x1p54;
        e = -54;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    e += (int64_t)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & 0x000fffffffffffffull) | 0x3ff0000000000000ull; /* m in [1, 2) */
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > 1.4142135623730951) { /* m in [sqrt(1/2), sqrt(2)) */
        m *= 0.5;
        e += 1;
    }
    /* log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: its series
     * to s^23 (the next term is under 2^-60 of it) */
    const double f = m - 1.0, s = f / (2.0 + f), s2 = s * s;
    double p = 1.0 / 23.0;
    p = p * s2 + 1.0 / 21.0;
    p = p * s2 + 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    p = p * s2 + 1.0 / 3.0;
    /* log(m) = f - (f - 2s) + 2 s^3 p, with f - 2s = s f exact enough */
    const double log_m = f - s * f + 2.0 * s * s2 * p;
    const double ed = (double)e;
    return ed * REF_LN2_HI + (ed * REF_LN2_LO + log_m);
}

/* x^y for x > 0, as exp(y log x): the log's rounding grows by |y log x|,
 * a few ulps for LRN's s^-beta (defined only for x > 0) */
UDNN_REF_FN double ref_pow(double x, double y)
{
    return ref_exp(y * ref_log(x));
}

#endif /* UDNN_REF_MATH_H */
