/*
 * Blend arithmetic on 8 pixels, and the reads and writes of a block's
 * rows of 32-bit target words, shared by the files compiled for AVX2
 * only: pixel_avx2.c's blend of a block (kr_blend_rgba8_avx2) and
 * fused_avx2.c's texture shading that blends in registers
 * (kr_fused_shade_add_avx2, kr_fused_shade_alpha_avx2), so the two
 * cannot drift apart. The same
 * IEEE operations as tile.c's scalar and SSE2 code; no contraction (both
 * files switch it off; the fused multiply-adds below are explicit).
 */
#ifndef KILN_RASTER_BLEND_AVX2_H
#define KILN_RASTER_BLEND_AVX2_H

#include "prim.h"

#include <immintrin.h>
#include <stdint.h>

/* The lanes of a row's covered pixels (bit i: pixel i), as masks. */
static inline __m128i kr_row_lanes(uint32_t m)
{
    return _mm_setr_epi32(-(int32_t)(m & 1u), -(int32_t)(m >> 1 & 1u), -(int32_t)(m >> 2 & 1u),
                          -(int32_t)(m >> 3 & 1u));
}

/* A row's four target words: all of them, only the covered ones (the row
 * may end past the target: masked loads touch no other bytes), or none. */
static inline __m128i kr_load_row(const uint8_t *dst, uint32_t m)
{
    if (m == 15u)
        return _mm_loadu_si128((const __m128i *)(const void *)dst);
    if (!m)
        return _mm_setzero_si128();
    return _mm_maskload_epi32((const int *)(const void *)dst, kr_row_lanes(m));
}

/* The covered ones of a row's four words written (bit i: word i). */
static inline void kr_store_row(uint8_t *dst, __m128i px, uint32_t m)
{
    if (m == 15u) {
        _mm_storeu_si128((__m128i *)(void *)dst, px);
        return;
    }
    uint32_t w[4];
    _mm_storeu_si128((__m128i *)(void *)w, px);
    kr_store_row4(dst, w, m);
}

/* byte / 255.0f for eight bytes (the low byte of each 32-bit lane, the
 * rest zero): the rounded reciprocal's product and one exact-residual
 * correction, which gives the correctly rounded quotient for every byte
 * (kr_unorm8_float's bits: test_raster_blend_exact checks all 256
 * through kr_unorm8_avx2). */
static inline __m256 kr_unorm8_8(__m256i bytes)
{
    const __m256 k = _mm256_set1_ps(255.0f), r = _mm256_set1_ps(1.0f / 255.0f);
    __m256 f = _mm256_cvtepi32_ps(bytes);
    __m256 y = _mm256_mul_ps(f, r);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(y, k, f), r, y);
}

/* ADD of (SRC_ALPHA, INV_SRC_ALPHA): s * a + d * (1 - a), tile.c's
 * blend_known order, for source s, source alpha a and destination d. */
static inline __m256 kr_blend_alpha8(__m256 s, __m256 a, __m256 d)
{
    return _mm256_add_ps(_mm256_mul_ps(s, a),
                         _mm256_mul_ps(d, _mm256_sub_ps(_mm256_set1_ps(1.0f), a)));
}

#endif
