/* half.h - IEEE binary16 and bfloat16 conversions, rounding to nearest
 * even, in integer operations only: the same bits on every backend that
 * builds them (see fn.h). */
#ifndef UDNN_REF_HALF_H
#define UDNN_REF_HALF_H

#include <stdint.h>
#include <string.h>

#include "backends/ref/fn.h"

UDNN_REF_FN float udnn_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13); /* inf or NaN */
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (man << 13);
    } else if (man == 0) {
        bits = sign;
    } else { /* subnormal: normalize */
        int e = -1;
        do {
            man <<= 1;
            e++;
        } while ((man & 0x400u) == 0);
        bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

UDNN_REF_FN uint16_t udnn_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) /* inf or NaN (keep a quiet NaN) */
        return sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (absx >= 0x477ff000u) return sign | 0x7c00u; /* rounds to inf */
    if (absx < 0x38800000u) {                       /* subnormal or zero in half */
        if (absx < 0x33000000u) return sign;        /* below half the smallest */
        uint32_t e = absx >> 23;
        uint32_t man = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126u - e; /* 14 + (113 - e) - 1 */
        uint32_t half_man = man >> (shift);
        uint32_t rem = man & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (half_man & 1u))) half_man++;
        return sign | (uint16_t)half_man;
    }
    uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1u); /* nearest even */
    return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

UDNN_REF_FN float udnn_bf16_to_float(uint16_t b)
{
    uint32_t bits = (uint32_t)b << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

UDNN_REF_FN uint16_t udnn_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif /* UDNN_REF_HALF_H */
