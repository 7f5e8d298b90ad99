/*
 * Built-in pixel kernels, AVX2: the 16 pixels of a block as two vectors of
 * 8. Compiled with -mavx2 -mfma (src/raster/effects.cmake) and reached only
 * when the CPU has both. Same operations, same order as the scalar
 * reference in effects.c (see effects.h): results are bit-identical to it
 * and to SSE2.
 *
 * No FMA: a fused a * b + c rounds once where SSE2 rounds twice. GCC and
 * Clang implement these intrinsics as plain vector arithmetic, which they
 * may contract under -mfma, so contraction is switched off here as well as
 * by -ffp-contract=off in effects.cmake.
 */
#include "effects.h"

#if KR_EFFECTS_X86

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

#include "lit_avx2.h"

static void ps_vertex_color(kiln_ps_args *a)
{
    const float *in = KILN_PS_VARYING(a, 0, 0);
    float *out = KILN_PS_COLOR(a, 0, 0);
    for (int i = 0; i < 4 * KILN_PS_BLOCK; i += 8)
        _mm256_storeu_ps(out + i, _mm256_loadu_ps(in + i));
}

static void ps_texture_color(kiln_ps_args *a)
{
    _Alignas(32) float t[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1), t);
    const float *col = KILN_PS_VARYING(a, 0, 0);
    float *out = KILN_PS_COLOR(a, 0, 0);
    for (int i = 0; i < 4 * KILN_PS_BLOCK; i += 8)
        _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_load_ps(t + i), _mm256_loadu_ps(col + i)));
}

static void ps_lit(kiln_ps_args *a)
{
    kr_lit_constants kc;
    kr_lit_constants_read(a, &kc);
    kr_lit8 k;
    kr_lit8_init(&kc, &k);
    /* Both halves of the block at once, every input loaded before the
     * first store: the outputs may alias the varyings as far as the
     * compiler knows, so a loop over the halves ran the second half's
     * sqrt-then-divide chain only after the first half's stores (ps_lit
     * was 17% of bench (f), most of it waiting on that chain). */
    const float *nxp = KILN_PS_VARYING(a, 1, 0), *nyp = KILN_PS_VARYING(a, 1, 1),
                *nzp = KILN_PS_VARYING(a, 1, 2);
    _Static_assert(KILN_PS_BLOCK == 16, "a block is two vectors of 8");
    __m256 d[2], col[2][4];
    for (int h = 0; h < 2; h++) {
        d[h] = kr_lit8_d(&k, _mm256_loadu_ps(nxp + 8 * h), _mm256_loadu_ps(nyp + 8 * h),
                         _mm256_loadu_ps(nzp + 8 * h));
        for (int c = 0; c < 4; c++)
            col[h][c] = _mm256_loadu_ps(KILN_PS_VARYING(a, 0, c) + 8 * h);
    }
    for (int h = 0; h < 2; h++) {
        for (int c = 0; c < 3; c++)
            _mm256_storeu_ps(KILN_PS_COLOR(a, 0, c) + 8 * h, kr_lit8_rgb(&k, c, col[h][c], d[h]));
        _mm256_storeu_ps(KILN_PS_COLOR(a, 0, 3) + 8 * h, col[h][3]);
    }
}

const kr_effect_kernels kr_effects_avx2 = {
    "avx2", {ps_vertex_color, kr_ps_texture, ps_texture_color, ps_lit}};
const kr_effect_kernels kr_effects_avx512 = {
    "avx512", {ps_vertex_color, kr_ps_texture, ps_texture_color, ps_lit}};

#else

/* Non-x86 builds use the scalar kernels only (an empty file is not ISO C). */
typedef int kr_effects_avx2_unused;

#endif
