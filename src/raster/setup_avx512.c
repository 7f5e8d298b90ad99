/*
 * Eight triangles' outcodes, screen mapping and setup at the AVX-512
 * level (setup8.h): setup8_lanes.h with floats in 8-lane vectors, the
 * 16.8 fixed-point positions, edges and the planes' doubles in 8 x
 * 64-bit ones, lane sets in mask registers. test_setup8 draws with and
 * without this path and compares.
 *
 * Compiled with AVX-512 F, BW, VL and DQ (effects.cmake); geom.c calls
 * it only at that level. Elsewhere the file compiles to nothing.
 */
#include "setup8.h"

#if KR_SETUP8

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

typedef __m256 v8f;  /* a float per triangle */
typedef __m512i v8q; /* an int64 per triangle */
typedef __m512d v8d; /* a double per triangle */
typedef __mmask8 m8; /* a bit per triangle */

static inline v8f f8(float f) { return _mm256_set1_ps(f); }
static inline v8q q8(int64_t i) { return _mm512_set1_epi64(i); }
static inline v8d d8(double d) { return _mm512_set1_pd(d); }

static inline v8q addq(v8q a, v8q b) { return _mm512_add_epi64(a, b); }
static inline v8q subq(v8q a, v8q b) { return _mm512_sub_epi64(a, b); }
static inline v8q mulq(v8q a, v8q b) { return _mm512_mullo_epi64(a, b); }
static inline m8 gtq(v8q a, v8q b) { return _mm512_cmpgt_epi64_mask(a, b); }
static inline m8 eqq(v8q a, v8q b) { return _mm512_cmpeq_epi64_mask(a, b); }
#define CMPF(a, b, pred) _mm256_cmp_ps_mask(a, b, pred)

static inline v8q blendq(m8 m, v8q a, v8q b) { return _mm512_mask_blend_epi64(m, a, b); }
static inline v8f blendf(m8 m, v8f a, v8f b) { return _mm256_mask_blend_ps(m, a, b); }
static inline __m256i blendi(m8 m, __m256i a, __m256i b)
{
    return _mm256_mask_blend_epi32(m, a, b);
}
static inline v8q minq(v8q a, v8q b) { return _mm512_min_epi64(a, b); }
static inline v8q maxq(v8q a, v8q b) { return _mm512_max_epi64(a, b); }
static inline v8q sra8q(v8q a) { return _mm512_srai_epi64(a, 8); }
static inline v8q add1q(m8 m, v8q a) { return _mm512_mask_add_epi64(a, m, a, q8(1)); }
static inline v8f maskz_mulf(m8 m, v8f a, v8f b) { return _mm256_maskz_mul_ps(m, a, b); }

static inline v8q cvtps_q8(v8f f) { return _mm512_cvtps_epi64(f); }
static inline v8d cvtq_pd8(v8q x) { return _mm512_cvtepi64_pd(x); }
static inline v8d cvtps_pd8(v8f f) { return _mm512_cvtps_pd(f); }
static inline v8f cvtpd_ps8(v8d d) { return _mm512_cvtpd_ps(d); }
static inline v8d subd(v8d a, v8d b) { return _mm512_sub_pd(a, b); }
static inline v8d muld(v8d a, v8d b) { return _mm512_mul_pd(a, b); }
static inline v8d divd(v8d a, v8d b) { return _mm512_div_pd(a, b); }

static inline void store_lo32(int32_t *out, v8q x)
{
    _mm256_storeu_si256((__m256i *)(void *)out, _mm512_cvtepi64_epi32(x));
}
static inline void store_q(int64_t *out, v8q x) { _mm512_storeu_si512(out, x); }

#define SETUP8_NAME kr_setup_tri8_avx512
#include "setup8_lanes.h"

#else

/* Other targets never call it (an empty file is not ISO C). */
typedef int kr_setup_avx512_unused;

#endif
