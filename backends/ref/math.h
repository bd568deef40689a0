/* math.h - exp, log and the functions built on them (expm1, log1p, tanh,
 * erf, pow) for the reference's arithmetic (backends/ref), in additions,
 * multiplications, divisions, floor and exact bit operations only, so that
 * a GPU backend's reference-bits solvers round exactly as cpu/ref does:
 * math libraries agree to an ulp or so, not to the bit. Against glibc's:
 * exp within 1 ulp and log within 2 (2e7 arguments over the whole double
 * range); expm1 within 3.5e-16 relative, log1p 1.8e-15, tanh 5e-16, erf
 * 1.6e-15 (5e6 arguments each). */
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

/* 1/2! + x/3! + x^2/4! + ... by Horner's rule, to x^11/13! (exp's
 * series past its first terms) or, where longer, to x^16/18! (expm1's) */
UDNN_REF_FN double ref_exp_series(double x, int longer)
{
    double p = 1.0 / 6227020800.0;
    if (longer) {
        p = 1.0 / 6402373705728000.0;
        p = p * x + 1.0 / 355687428096000.0;
        p = p * x + 1.0 / 20922789888000.0;
        p = p * x + 1.0 / 1307674368000.0;
        p = p * x + 1.0 / 87178291200.0;
        p = p * x + 1.0 / 6227020800.0;
    }
    p = p * x + 1.0 / 479001600.0;
    p = p * x + 1.0 / 39916800.0;
    p = p * x + 1.0 / 3628800.0;
    p = p * x + 1.0 / 362880.0;
    p = p * x + 1.0 / 40320.0;
    p = p * x + 1.0 / 5040.0;
    p = p * x + 1.0 / 720.0;
    p = p * x + 1.0 / 120.0;
    p = p * x + 1.0 / 24.0;
    p = p * x + 1.0 / 6.0;
    return p * x + 0.5;
}

/* 1/3 + s2/5 + s2^2/7 + ... by Horner's rule, to s2^10/23 (log's) or,
 * where longer, to s2^12/27 (log1p's): 2 atanh(s) = 2s + 2 s^3 (this) */
UDNN_REF_FN double ref_atanh_series(double s2, int longer)
{
    double p = 1.0 / 23.0;
    if (longer) {
        p = 1.0 / 27.0;
        p = p * s2 + 1.0 / 25.0;
        p = p * s2 + 1.0 / 23.0;
    }
    p = p * s2 + 1.0 / 21.0;
    p = p * s2 + 1.0 / 19.0;
    p = p * s2 + 1.0 / 17.0;
    p = p * s2 + 1.0 / 15.0;
    p = p * s2 + 1.0 / 13.0;
    p = p * s2 + 1.0 / 11.0;
    p = p * s2 + 1.0 / 9.0;
    p = p * s2 + 1.0 / 7.0;
    p = p * s2 + 1.0 / 5.0;
    return p * s2 + 1.0 / 3.0;
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
    const double p = ref_exp_series(r, 0);
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
    const double p = ref_atanh_series(s2, 0);
    /* log(m) = f - (f - 2s) + 2 s^3 p, with f - 2s = s f exact enough */
    const double log_m = f - s * f + 2.0 * s * s2 * p;
    const double ed = (double)e;
    return ed * REF_LN2_HI + (ed * REF_LN2_LO + log_m);
}

/* exp(x) - 1, accurate near 0: its Taylor series to x^18 where |x| <=
 * 1/2 (the next term is under 2^-60 of the sum), else exp(x) - 1, which
 * loses no more than a bit there */
UDNN_REF_FN double ref_expm1(double x)
{
    if (x != x) return x + x;
    if (x > 0.5 || x < -0.5) return ref_exp(x) - 1.0;
    return x + x * x * ref_exp_series(x, 1);
}

/* log(1 + x), accurate near 0: 2 atanh(s) with s = x / (2 + x) where
 * |x| <= 1/2, else log(1 + x), where 1 + x is exact or its rounding small
 * beside the result */
UDNN_REF_FN double ref_log1p(double x)
{
    if (x != x) return x + x;
    if (x > 0.5 || x < -0.5) return ref_log(1.0 + x);
    const double s = x / (2.0 + x), s2 = s * s;
    return 2.0 * s + 2.0 * s * s2 * ref_atanh_series(s2, 1);
}

/* tanh(x) = expm1(2|x|) / (expm1(2|x|) + 2), signed; 1 past |x| = 22,
 * where tanh rounds to 1 */
UDNN_REF_FN double ref_tanh(double x)
{
    if (x != x) return x + x;
    const double a = x < 0.0 ? -x : x;
    double t = 1.0;
    if (a <= 22.0) {
        const double e = ref_expm1(2.0 * a);
        t = e / (e + 2.0);
    }
    return x < 0.0 ? -t : t;
}

/* erf(x). |x| < 3: 2x/sqrt(pi) e^(-x^2) sum (2x^2)^n / (1 3 5 ... (2n+1)),
 * whose terms are all positive (no cancellation), until a term is under
 * 2^-60 of the sum. |x| >= 3: 1 - erfc(x), erfc from its continued
 * fraction e^(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))),
 * evaluated bottom up from 60 levels (ample at x >= 3); 1 past |x| = 6. */
UDNN_REF_FN double ref_erf(double x)
{
    if (x != x) return x + x;
    const double a = x < 0.0 ? -x : x;
    const double inv_sqrt_pi = 0.56418958354775628695;
    double r;
    if (a >= 6.0) {
        r = 1.0;
    } else if (a >= 3.0) {
        double f = a;
        for (int k = 60; k >= 1; k--) f = a + (0.5 * k) / f;
        r = 1.0 - ref_exp(-a * a) * inv_sqrt_pi / f;
    } else {
        const double two_a2 = 2.0 * a * a;
        double term = 1.0, sum = 1.0;
        for (int n = 1; n < 200 && term > sum * 0x1p-60; n++) {
            term = term * two_a2 / (double)(2 * n + 1);
            sum += term;
        }
        r = 2.0 * a * inv_sqrt_pi * ref_exp(-a * a) * sum;
    }
    return x < 0.0 ? -r : r;
}

/* x^y for x > 0, as exp(y log x): the log's rounding grows by |y log x|,
 * a few ulps for LRN's s^-beta (defined only for x > 0) */
UDNN_REF_FN double ref_pow(double x, double y)
{
    return ref_exp(y * ref_log(x));
}

#endif /* UDNN_REF_MATH_H */
