/*
 * Blend arithmetic on a block of 16 pixels (row r in 128-bit lane r), and
 * the reads and writes of its rows of 32-bit target words, shared by the
 * files compiled for AVX-512: pixel_avx512.c's block writers
 * (kr_write8_select_avx512) and fused_avx512.c's texture shading that
 * blends in registers (kr_fused_shade_add_avx512,
 * kr_fused_shade_alpha_avx512), so the two cannot drift apart. The same
 * IEEE operations as blend_avx2.h's, lane for lane; no contraction (both
 * files switch it off; the fused multiply-adds below are explicit).
 */
#ifndef KILN_RASTER_BLEND_AVX512_H
#define KILN_RASTER_BLEND_AVX512_H

#include "prim.h"

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

/* kr_unorm8_8 of blend_avx2.h: byte / 255.0f as the rounded reciprocal's
 * product and one exact-residual correction. */
static inline __m512 kr_unorm8_16(__m512i bytes)
{
    const __m512 k = _mm512_set1_ps(255.0f), r = _mm512_set1_ps(1.0f / 255.0f);
    __m512 f = _mm512_cvtepi32_ps(bytes);
    __m512 y = _mm512_mul_ps(f, r);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(y, k, f), r, y);
}

/* The block's target words, row r in lane r: a covered row whole, a
 * partly covered one with a masked load (uncovered words read as 0,
 * their bytes untouched), an uncovered one as zeros. */
static inline __m512i kr_load_block16(const uint8_t *dst, size_t pitch, uint32_t mask)
{
    __m128i r0, r1, r2, r3;
    if (mask == 0xffffu) {
        r0 = _mm_loadu_si128((const __m128i *)(const void *)dst);
        r1 = _mm_loadu_si128((const __m128i *)(const void *)(dst + pitch));
        r2 = _mm_loadu_si128((const __m128i *)(const void *)(dst + 2 * pitch));
        r3 = _mm_loadu_si128((const __m128i *)(const void *)(dst + 3 * pitch));
    } else {
        /* rows past the target's bottom are uncovered: no pointer to them */
#define KR_ROW(i)                                                                                  \
    ((mask >> (4 * (i)) & 15u) ? _mm_maskz_loadu_epi32((__mmask8)(mask >> (4 * (i)) & 15u),        \
                                                       (const void *)(dst + (size_t)(i)*pitch))    \
                               : _mm_setzero_si128())
        r0 = KR_ROW(0);
        r1 = KR_ROW(1);
        r2 = KR_ROW(2);
        r3 = KR_ROW(3);
#undef KR_ROW
    }
    __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(r0), r1, 1);
    __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(r2), r3, 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/* The covered words of each row (masked stores for partial rows). */
static inline void kr_store_block16(uint8_t *dst, size_t pitch, __m512i px, uint32_t mask)
{
    if (mask == 0xffffu) {
        _mm_storeu_si128((__m128i *)(void *)dst, _mm512_castsi512_si128(px));
        _mm_storeu_si128((__m128i *)(void *)(dst + pitch), _mm512_extracti32x4_epi32(px, 1));
        _mm_storeu_si128((__m128i *)(void *)(dst + 2 * pitch), _mm512_extracti32x4_epi32(px, 2));
        _mm_storeu_si128((__m128i *)(void *)(dst + 3 * pitch), _mm512_extracti32x4_epi32(px, 3));
        return;
    }
#define KR_ROW(i, v)                                                                               \
    if (mask >> (4 * (i)) & 15u)                                                                   \
        _mm_mask_storeu_epi32((void *)(dst + (size_t)(i)*pitch),                                   \
                              (__mmask8)(mask >> (4 * (i)) & 15u), v);
    KR_ROW(0, _mm512_castsi512_si128(px))
    KR_ROW(1, _mm512_extracti32x4_epi32(px, 1))
    KR_ROW(2, _mm512_extracti32x4_epi32(px, 2))
    KR_ROW(3, _mm512_extracti32x4_epi32(px, 3))
#undef KR_ROW
}

/* ADD of (SRC_ALPHA, INV_SRC_ALPHA): s * a + d * (1 - a), blend_avx2.h's
 * kr_blend_alpha8 on 16 lanes. */
static inline __m512 kr_blend_alpha16(__m512 s, __m512 a, __m512 d)
{
    return _mm512_add_ps(_mm512_mul_ps(s, a),
                         _mm512_mul_ps(d, _mm512_sub_ps(_mm512_set1_ps(1.0f), a)));
}

#endif
