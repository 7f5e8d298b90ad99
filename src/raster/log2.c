/*
 * kr_log2f and kr_log2f4 (log2.h). The float, converted to double (exact,
 * subnormals included), is m * 2^e with m in [1, 2) read off its bits;
 * m above sqrt(2) is halved (e + 1), so m lies in [sqrt(2) / 2, sqrt(2)).
 * With s = (m - 1) / (m + 1),
 *   log2(m) = 2 / ln 2 * (s + s^3 / 3 + s^5 / 5 + ...),
 * and |s| <= 3 - 2 sqrt(2) = 0.1716, so s^2 <= 0.02944: the eight terms
 * below (a polynomial in s^2 by Estrin's scheme: a short dependency
 * chain) leave out about 0.02944^8 / 17 = 3.4e-14 of log2(m). e +
 * log2(m) adds no cancellation (|log2(m)| <= 1/2, so a nonzero e
 * dominates), and the double result is rounded to float once.
 *
 * Where SSE2 is there, kr_log2f is a lane of kr_log2f4 (one code, so the
 * same bits whatever the compiler makes of scalar code); kr_log2f_c is the
 * same operations in portable C, what other targets take, and test_log2
 * holds it to the lanes' bits, so images agree across targets.
 * Compiled without floating-point contraction and without fast-math
 * (effects.cmake): each multiply and add rounds on its own in both forms,
 * in the same order, and the special values are tested as written.
 */
#include "log2.h"

#include <stdint.h>
#include <string.h>

#if defined(__FAST_MATH__)
#error "log2.c must be compiled without -ffast-math (effects.cmake adds -fno-fast-math)"
#endif

/* 2 / ((2k + 1) ln 2), k = 0..7, each the double nearest it */
#define K0 2.8853900817779268
#define K1 0.9617966939259756
#define K2 0.5770780163555853
#define K3 0.4121985831111324
#define K4 0.3205988979753252
#define K5 0.2623081892525388
#define K6 0.22195308321368667
#define K7 0.19235933878519512
#define SQRT2 1.4142135623730951
#define MANTISSA 0x000fffffffffffffull
#define ONE_BITS 0x3ff0000000000000ull /* 1.0: a mantissa's exponent field */
#define QNAN_BITS 0x7fc00000u

double kr_log2d_c(float x)
{
    double d = x, m;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    int32_t e = (int32_t)(bits >> 52) - 1023;
    bits = (bits & MANTISSA) | ONE_BITS;
    memcpy(&m, &bits, sizeof m);
    if (m > SQRT2) {
        m = m * 0.5;
        e = e + 1;
    }
    double s = (m - 1.0) / (m + 1.0);
    double z = s * s, z2 = z * z, z4 = z2 * z2;
    /* Estrin's scheme: four independent pairs, then two levels */
    double a01 = K1 * z + K0, a23 = K3 * z + K2, a45 = K5 * z + K4, a67 = K7 * z + K6;
    double p = (a67 * z2 + a45) * z4 + (a23 * z2 + a01);
    return (double)e + s * p;
}

float kr_log2f_c(float x)
{
    if (!(x > 0.0f)) { /* zero, negative or NaN */
        if (x == 0.0f)
            return -__builtin_inff();
        float n;
        uint32_t b = QNAN_BITS;
        memcpy(&n, &b, sizeof n);
        return n;
    }
    if (x == __builtin_inff())
        return x;
    return (float)kr_log2d_c(x);
}

#if defined(__SSE2__)
/* Two lanes of kr_log2f's positive, finite path, as doubles (the
 * special values are set by the caller). */
static inline __m128d log2_pd(__m128d d)
{
    const __m128i bits = _mm_castpd_si128(d);
    __m128d m =
        _mm_castsi128_pd(_mm_or_si128(_mm_and_si128(bits, _mm_set1_epi64x((long long)MANTISSA)),
                                      _mm_set1_epi64x((long long)ONE_BITS)));
    /* each lane's exponent field (sign 0 here) in its low 32 bits, then
     * the two packed into int32 lanes 0 and 1 */
    __m128i e = _mm_shuffle_epi32(_mm_srli_epi64(bits, 52), _MM_SHUFFLE(2, 0, 2, 0));
    const __m128d big = _mm_cmpgt_pd(m, _mm_set1_pd(SQRT2));
    m = _mm_or_pd(_mm_and_pd(big, _mm_mul_pd(m, _mm_set1_pd(0.5))), _mm_andnot_pd(big, m));
    /* - 1023, and + 1 where m was halved (the mask's words are -1) */
    e = _mm_sub_epi32(_mm_sub_epi32(e, _mm_set1_epi32(1023)),
                      _mm_shuffle_epi32(_mm_castpd_si128(big), _MM_SHUFFLE(2, 0, 2, 0)));
    const __m128d one = _mm_set1_pd(1.0);
    const __m128d s = _mm_div_pd(_mm_sub_pd(m, one), _mm_add_pd(m, one));
    const __m128d z = _mm_mul_pd(s, s), z2 = _mm_mul_pd(z, z), z4 = _mm_mul_pd(z2, z2);
#define KR_PAIR(hi, lo) _mm_add_pd(_mm_mul_pd(_mm_set1_pd(hi), z), _mm_set1_pd(lo))
    const __m128d a01 = KR_PAIR(K1, K0), a23 = KR_PAIR(K3, K2), a45 = KR_PAIR(K5, K4),
                  a67 = KR_PAIR(K7, K6);
#undef KR_PAIR
    const __m128d p = _mm_add_pd(_mm_mul_pd(_mm_add_pd(_mm_mul_pd(a67, z2), a45), z4),
                                 _mm_add_pd(_mm_mul_pd(a23, z2), a01));
    return _mm_add_pd(_mm_cvtepi32_pd(e), _mm_mul_pd(s, p));
}

void kr_log2d4(__m128 x, double out[4])
{
    _mm_storeu_pd(out, log2_pd(_mm_cvtps_pd(x)));
    _mm_storeu_pd(out + 2, log2_pd(_mm_cvtps_pd(_mm_movehl_ps(x, x))));
}

__m128 kr_log2f4(__m128 x)
{
    const __m128 lo = _mm_cvtpd_ps(log2_pd(_mm_cvtps_pd(x)));
    const __m128 hi = _mm_cvtpd_ps(log2_pd(_mm_cvtps_pd(_mm_movehl_ps(x, x))));
    __m128 r = _mm_movelh_ps(lo, hi);
    const __m128 zero = _mm_setzero_ps(), inf = _mm_castsi128_ps(_mm_set1_epi32(0x7f800000));
    const __m128 is_zero = _mm_cmpeq_ps(x, zero);
    const __m128 is_inf = _mm_cmpeq_ps(x, inf);
    const __m128 bad = _mm_andnot_ps(is_zero, _mm_cmpngt_ps(x, zero)); /* negative or NaN */
    const __m128 ninf = _mm_castsi128_ps(_mm_set1_epi32((int)0xff800000u));
    const __m128 qnan = _mm_castsi128_ps(_mm_set1_epi32((int)QNAN_BITS));
    r = _mm_or_ps(_mm_andnot_ps(is_zero, r), _mm_and_ps(is_zero, ninf));
    r = _mm_or_ps(_mm_andnot_ps(is_inf, r), _mm_and_ps(is_inf, inf));
    r = _mm_or_ps(_mm_andnot_ps(bad, r), _mm_and_ps(bad, qnan));
    return r;
}

float kr_log2f(float x) { return _mm_cvtss_f32(kr_log2f4(_mm_set1_ps(x))); }
#else
float kr_log2f(float x) { return kr_log2f_c(x); }
#endif
