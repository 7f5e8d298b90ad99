/*
 * Built-in pixel kernels, SSE2 (the x86-64 baseline): the 16 pixels of a
 * block as four vectors of 4. Same operations, same order as the scalar
 * reference in effects.c (see effects.h): results are bit-identical.
 */
#include "effects.h"

#if KR_EFFECTS_X86

#include <emmintrin.h>

static void ps_vertex_color(kiln_ps_args *a)
{
    const float *in = KILN_PS_VARYING(a, 0, 0);
    float *out = KILN_PS_COLOR(a, 0, 0);
    for (int i = 0; i < 4 * KILN_PS_BLOCK; i += 4)
        _mm_storeu_ps(out + i, _mm_loadu_ps(in + i));
}

static void ps_texture_color(kiln_ps_args *a)
{
    _Alignas(16) float t[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 1, 0), KILN_PS_VARYING(a, 1, 1), t);
    const float *col = KILN_PS_VARYING(a, 0, 0);
    float *out = KILN_PS_COLOR(a, 0, 0);
    for (int i = 0; i < 4 * KILN_PS_BLOCK; i += 4)
        _mm_storeu_ps(out + i, _mm_mul_ps(_mm_load_ps(t + i), _mm_loadu_ps(col + i)));
}

static void ps_lit(kiln_ps_args *a)
{
    kr_lit_constants k;
    kr_lit_constants_read(a, &k);
    const __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    const __m128 lx = _mm_set1_ps(k.l[0]), ly = _mm_set1_ps(k.l[1]), lz = _mm_set1_ps(k.l[2]);
    __m128 light[3], ambient[3];
    for (int c = 0; c < 3; c++) {
        light[c] = _mm_set1_ps(k.light[c]);
        ambient[c] = _mm_set1_ps(k.ambient[c]);
    }
    for (int i = 0; i < KILN_PS_BLOCK; i += 4) {
        __m128 nx = _mm_loadu_ps(KILN_PS_VARYING(a, 1, 0) + i);
        __m128 ny = _mm_loadu_ps(KILN_PS_VARYING(a, 1, 1) + i);
        __m128 nz = _mm_loadu_ps(KILN_PS_VARYING(a, 1, 2) + i);
        __m128 len2 = _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, nx), _mm_mul_ps(ny, ny)),
                                 _mm_mul_ps(nz, nz));
        /* 1 / sqrt(0) is inf: masked to 0 with every len2 <= 0 or NaN. */
        __m128 inv = _mm_and_ps(_mm_cmpgt_ps(len2, zero), _mm_div_ps(one, _mm_sqrt_ps(len2)));
        __m128 dot = _mm_add_ps(_mm_add_ps(_mm_mul_ps(nx, lx), _mm_mul_ps(ny, ly)),
                                _mm_mul_ps(nz, lz));
        /* maxps returns its second operand when either is NaN: 0. */
        __m128 d = _mm_max_ps(_mm_mul_ps(dot, inv), zero);
        for (int c = 0; c < 3; c++) {
            __m128 col = _mm_loadu_ps(KILN_PS_VARYING(a, 0, c) + i);
            __m128 l = _mm_add_ps(ambient[c], _mm_mul_ps(light[c], d));
            _mm_storeu_ps(KILN_PS_COLOR(a, 0, c) + i, _mm_mul_ps(col, l));
        }
        _mm_storeu_ps(KILN_PS_COLOR(a, 0, 3) + i, _mm_loadu_ps(KILN_PS_VARYING(a, 0, 3) + i));
    }
}

const kr_effect_kernels kr_effects_sse2 = {
    "sse2", {ps_vertex_color, kr_ps_texture, ps_texture_color, ps_lit}};

#else

/* Non-x86 builds use the scalar kernels only (an empty file is not ISO C). */
typedef int kr_effects_sse2_unused;

#endif
