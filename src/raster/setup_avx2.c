/*
 * Eight triangles' outcodes, screen mapping and setup at the AVX2 level
 * (setup8.h: a CPU with AVX2 but not AVX-512, or KILN_SIMD=avx2). The
 * floats are the same 8-lane vectors; the 64-bit integers and the
 * doubles are two 4-lane halves, and what AVX2 lacks is built from what
 * it has, exactly:
 * - the float to int64 conversion and int64 to double go through
 *   2^52 + 2^51, whose ulp is 1: x + that rounds x to an integer in the
 *   low 51 bits of the sum's mantissa, for |x| < 2^51 (the snapped
 *   coordinates are under 2^32). In the default rounding mode, round to
 *   nearest even, the one kiln's images are defined in, that is
 *   cvtps2qq's and the scalar llrintf's rounding (under round toward
 *   zero a negative fraction would round down here);
 * - the 64-bit product is the low 64 bits of lo*lo + (hi*lo + lo*hi)
 *   << 32 (the scalar code's wrapping product);
 * - the 64-bit arithmetic shift, min, max and blends from compares.
 * The setup itself is setup8_lanes.h, shared with setup_avx512.c;
 * test_setup8 draws with and without this path and compares, and
 * compares its records with the AVX-512 lanes' where the CPU has both.
 *
 * Compiled with AVX2 (effects.cmake); geom.c calls it only at that level.
 * Elsewhere the file compiles to nothing.
 */
#include "setup8.h"

#if KR_SETUP8

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

typedef __m256 v8f; /* a float per triangle */
typedef struct {
    __m256i h[2]; /* an int64 per triangle: lanes 0-3, 4-7 */
} v8q;
typedef struct {
    __m256d h[2]; /* a double per triangle */
} v8d;
typedef unsigned m8; /* a bit per triangle */

#define MAGIC_D 6755399441055744.0 /* 2^52 + 2^51 */
#define MAGIC_Q 0x4338000000000000LL

static inline v8f f8(float f) { return _mm256_set1_ps(f); }
static inline v8q q8(int64_t i)
{
    const __m256i v = _mm256_set1_epi64x(i);
    return (v8q){{v, v}};
}
static inline v8d d8(double d)
{
    const __m256d v = _mm256_set1_pd(d);
    return (v8d){{v, v}};
}

/* an operation on both halves */
#define HALVES(type, name, op)                                                                     \
    static inline type name(type a, type b)                                                        \
    {                                                                                              \
        return (type){{op(a.h[0], b.h[0]), op(a.h[1], b.h[1])}};                                   \
    }

static inline __m256i mul64(__m256i a, __m256i b)
{
    const __m256i lo = _mm256_mul_epu32(a, b);
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), b),
                                           _mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)));
    return _mm256_add_epi64(lo, _mm256_slli_epi64(cross, 32));
}

HALVES(v8q, addq, _mm256_add_epi64)
HALVES(v8q, subq, _mm256_sub_epi64)
HALVES(v8q, mulq, mul64)
HALVES(v8q, gtv, _mm256_cmpgt_epi64)
HALVES(v8q, eqv, _mm256_cmpeq_epi64)
HALVES(v8d, subd, _mm256_sub_pd)
HALVES(v8d, muld, _mm256_mul_pd)
HALVES(v8d, divd, _mm256_div_pd)

/* all-ones lanes as lane bits */
static inline m8 bitsq(v8q m)
{
    return (m8)_mm256_movemask_pd(_mm256_castsi256_pd(m.h[0])) |
           (m8)_mm256_movemask_pd(_mm256_castsi256_pd(m.h[1])) << 4;
}
static inline m8 gtq(v8q a, v8q b) { return bitsq(gtv(a, b)); }
static inline m8 eqq(v8q a, v8q b) { return bitsq(eqv(a, b)); }
#define CMPF(a, b, pred) ((m8)_mm256_movemask_ps(_mm256_cmp_ps(a, b, pred)))

/* lane bits as all-ones 32-bit and 64-bit lanes */
static inline __m256i mask32(m8 m)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int32_t)m), bit), bit);
}
static inline v8q mask64(m8 m)
{
    const __m256i bit = _mm256_setr_epi64x(1, 2, 4, 8);
    const __m256i lo = _mm256_set1_epi64x(m & 15u), hi = _mm256_set1_epi64x(m >> 4 & 15u);
    return (v8q){{_mm256_cmpeq_epi64(_mm256_and_si256(lo, bit), bit),
                  _mm256_cmpeq_epi64(_mm256_and_si256(hi, bit), bit)}};
}

/* b where v is all-ones, else a */
static inline v8q blendv(v8q v, v8q a, v8q b)
{
    return (v8q){
        {_mm256_blendv_epi8(a.h[0], b.h[0], v.h[0]), _mm256_blendv_epi8(a.h[1], b.h[1], v.h[1])}};
}
static inline v8q blendq(m8 m, v8q a, v8q b) { return blendv(mask64(m), a, b); }
static inline v8f blendf(m8 m, v8f a, v8f b)
{
    return _mm256_blendv_ps(a, b, _mm256_castsi256_ps(mask32(m)));
}
static inline __m256i blendi(m8 m, __m256i a, __m256i b)
{
    return _mm256_blendv_epi8(a, b, mask32(m));
}
static inline v8q minq(v8q a, v8q b) { return blendv(gtv(a, b), a, b); }
static inline v8q maxq(v8q a, v8q b) { return blendv(gtv(a, b), b, a); }

/* a >> 8, arithmetic: the logical shift, its top byte set where a < 0 */
static inline __m256i sra8(__m256i a)
{
    const __m256i top = _mm256_set1_epi64x((int64_t)0xFF00000000000000ULL);
    return _mm256_or_si256(_mm256_srli_epi64(a, 8),
                           _mm256_and_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), a), top));
}
static inline v8q sra8q(v8q a) { return (v8q){{sra8(a.h[0]), sra8(a.h[1])}}; }

/* a + 1 in the lanes of m: all-ones lanes are -1 */
static inline v8q add1q(m8 m, v8q a) { return subq(a, mask64(m)); }

static inline v8f maskz_mulf(m8 m, v8f a, v8f b)
{
    return _mm256_and_ps(_mm256_castsi256_ps(mask32(m)), _mm256_mul_ps(a, b));
}

static inline v8d cvtps_pd8(v8f f)
{
    return (v8d){
        {_mm256_cvtps_pd(_mm256_castps256_ps128(f)), _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1))}};
}
static inline v8f cvtpd_ps8(v8d d)
{
    return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(d.h[0])),
                                _mm256_cvtpd_ps(d.h[1]), 1);
}

/* floats (|f| < 2^51) to int64, rounded to nearest even */
static inline v8q cvtps_q8(v8f f)
{
    const v8d d = cvtps_pd8(f);
    const __m256d m = _mm256_set1_pd(MAGIC_D);
    const __m256i mq = _mm256_set1_epi64x(MAGIC_Q);
    return (v8q){{_mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(d.h[0], m)), mq),
                  _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(d.h[1], m)), mq)}};
}

/* int64 (|x| < 2^51) to double, exactly */
static inline v8d cvtq_pd8(v8q x)
{
    const __m256d m = _mm256_set1_pd(MAGIC_D);
    const __m256i mq = _mm256_set1_epi64x(MAGIC_Q);
    return (v8d){{_mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x.h[0], mq)), m),
                  _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x.h[1], mq)), m)}};
}

/* the low 32 bits of each lane (the values fit) */
static inline void store_lo32(int32_t *out, v8q x)
{
    const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    _mm_storeu_si128((__m128i *)(void *)out,
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x.h[0], pick)));
    _mm_storeu_si128((__m128i *)(void *)(out + 4),
                     _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(x.h[1], pick)));
}
static inline void store_q(int64_t *out, v8q x)
{
    _mm256_storeu_si256((__m256i *)(void *)out, x.h[0]);
    _mm256_storeu_si256((__m256i *)(void *)(out + 4), x.h[1]);
}

#define SETUP8_NAME kr_setup_tri8_avx2
#include "setup8_lanes.h"

#else

/* Other targets never call it (an empty file is not ISO C). */
typedef int kr_setup_avx2_unused;

#endif
