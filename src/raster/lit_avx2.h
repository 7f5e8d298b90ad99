/*
 * The lit effect's arithmetic (effects.h's contract) on 8 pixels, for the
 * files compiled for AVX2 only: effects_avx2.c's pixel kernel and
 * pixel_avx2.c's whole-block shading of the effect (kr_shade_lit_avx2)
 * share it, so the two cannot drift apart. The same IEEE operations in
 * the same order as the scalar reference; no contraction (both files
 * switch it off).
 */
#ifndef KILN_RASTER_LIT_AVX2_H
#define KILN_RASTER_LIT_AVX2_H

#include "effects.h"

#include <immintrin.h>

/* The constants broadcast: l (minus the light direction), light, ambient. */
typedef struct kr_lit8 {
    __m256 l[3], light[3], ambient[3];
} kr_lit8;

static inline void kr_lit8_init(const kr_lit_constants *k, kr_lit8 *o)
{
    for (int c = 0; c < 3; c++) {
        o->l[c] = _mm256_set1_ps(k->l[c]);
        o->light[c] = _mm256_set1_ps(k->light[c]);
        o->ambient[c] = _mm256_set1_ps(k->ambient[c]);
    }
}

/* d = max(((n.x * l.x + n.y * l.y) + n.z * l.z) * inv, 0), inv = len2 > 0
 * ? 1 / sqrt(len2) : 0, len2 = (n.x * n.x + n.y * n.y) + n.z * n.z. */
static inline __m256 kr_lit8_d(const kr_lit8 *k, __m256 nx, __m256 ny, __m256 nz)
{
    const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    __m256 len2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(nx, nx), _mm256_mul_ps(ny, ny)),
                                _mm256_mul_ps(nz, nz));
    /* GT_OQ: false for NaN, as SSE2's cmpgt. */
    __m256 inv = _mm256_and_ps(_mm256_cmp_ps(len2, zero, _CMP_GT_OQ),
                               _mm256_div_ps(one, _mm256_sqrt_ps(len2)));
    __m256 dot =
        _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(nx, k->l[0]), _mm256_mul_ps(ny, k->l[1])),
                      _mm256_mul_ps(nz, k->l[2]));
    /* vmaxps returns its second operand when either is NaN: 0. */
    return _mm256_max_ps(_mm256_mul_ps(dot, inv), zero);
}

/* Output channel c < 3: col * (ambient + light * d); alpha is col's. */
static inline __m256 kr_lit8_rgb(const kr_lit8 *k, int c, __m256 col, __m256 d)
{
    return _mm256_mul_ps(col, _mm256_add_ps(k->ambient[c], _mm256_mul_ps(k->light[c], d)));
}

#endif
