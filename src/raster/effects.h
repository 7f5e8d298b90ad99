/*
 * effects: the built-in effects' pixel kernels at each SIMD level, and the
 * choice among them (internal to src/raster and the tests).
 *
 * Contract:
 * - Every level computes the same IEEE operations in the same order, with
 *   no fused multiply-add and no approximate reciprocals, so all levels
 *   (and the scalar reference) give bit-identical colors for the same
 *   inputs. The lit kernel, per pixel i, with n = varying 1, c = varying 0,
 *   l = -light_dir (negation is exact):
 *
 *       len2 = (n.x * n.x + n.y * n.y) + n.z * n.z
 *       inv  = len2 > 0 ? 1 / sqrt(len2) : 0        (correctly rounded sqrt, div)
 *       d    = ((n.x * l.x + n.y * l.y) + n.z * l.z) * inv
 *       d    = d > 0 ? d : 0                        (NaN gives 0)
 *       out.rgb = c.rgb * (ambient.rgb + light.rgb * d),  out.a = c.a
 *
 * - Kernels shade all 16 pixels of the block whatever the mask (the
 *   rasterizer ignores uncovered ones) and never change the mask.
 * - A constant buffer that is missing or shorter than the effect's layout
 *   reads as zeros past its end (D3D10 reads 0 from an unbound buffer).
 * - The level is chosen once, on the first call of kiln_effect_get or
 *   kiln_effect_simd_level, thread-safely; kr_effects_force_level changes
 *   it for descs filled afterwards (shaders already created keep theirs).
 */
#ifndef KILN_RASTER_EFFECTS_H
#define KILN_RASTER_EFFECTS_H

#include "kiln.h"

#include <stdbool.h>
#include <string.h>

/* x86 builds compile the SSE2 and AVX2 kernels (effects_sse2.c,
 * effects_avx2.c); other targets use the scalar ones only. 32-bit x86
 * needs SSE2 enabled at compile time. */
#if defined(__x86_64__) || (defined(__i386__) && defined(__SSE2__))
#define KR_EFFECTS_X86 1
#else
#define KR_EFFECTS_X86 0
#endif

typedef enum kr_simd {
    KR_SIMD_SCALAR = 0,
    KR_SIMD_SSE2,
    KR_SIMD_AVX2,
    KR_SIMD_AVX512, /* AVX2's kernels, and 16-lane ones where they exist */
    KR_SIMD_COUNT
} kr_simd;

/* The pixel kernels of one level, indexed by kiln_effect. */
typedef struct kr_effect_kernels {
    const char *name; /* "scalar", "sse2", "avx2", "avx512": kiln_effect_simd_level */
    kiln_ps_fn ps[KILN_EFFECT_COUNT];
} kr_effect_kernels;

extern const kr_effect_kernels kr_effects_scalar; /* effects.c */
#if KR_EFFECTS_X86
extern const kr_effect_kernels kr_effects_sse2; /* effects_sse2.c */
extern const kr_effect_kernels kr_effects_avx2; /* effects_avx2.c (-mavx2 -mfma) */
/* effects_avx2.c too: the AVX-512 level runs the AVX2 effect kernels; what
 * it adds are the 16-lane sampling kernels (fused_avx512.c) */
extern const kr_effect_kernels kr_effects_avx512;
#endif

/* Lit constants (PS cb0) as the kernels use them: l is minus the light
 * direction. Missing bytes of cb0 read as zeros. */
typedef struct kr_lit_constants {
    float l[3];
    float light[3];
    float ambient[3];
} kr_lit_constants;

/* Copies floats [0, count) of constant buffer `slot` into out, zeros
 * where the buffer is missing or ends. Inline, with kr_lit_constants_read:
 * the lit kernels read their constants once per block, and as a call into
 * effects.c that was 5% of bench (f) (perf, an AVX2 host). */
static inline void kr_cb_read(const void *const *cb, const uint32_t *cb_size, uint32_t slot,
                              float *out, uint32_t count)
{
    size_t want = (size_t)count * sizeof(float);
    if (!cb || !cb_size || !cb[slot]) {
        memset(out, 0, want);
        return;
    }
    if (cb_size[slot] >= want) {
        memcpy(out, cb[slot], want); /* the usual case: a copy of a size known here */
        return;
    }
    size_t bytes = cb_size[slot] & ~(sizeof(float) - 1);
    memcpy(out, cb[slot], bytes); /* cb data need not be float-aligned */
    memset((char *)out + bytes, 0, want - bytes);
}

/* From the pixel stage's constant buffers (kiln_ps_args.cb, .cb_size). */
static inline void kr_lit_constants_from(const void *const *cbs, const uint32_t *cb_size,
                                         kr_lit_constants *out)
{
    float cb[12]; /* direction, light color, ambient: a float4 each */
    kr_cb_read(cbs, cb_size, 0, cb, 12);
    for (int c = 0; c < 3; c++) {
        out->l[c] = -cb[c];
        out->light[c] = cb[4 + c];
        out->ambient[c] = cb[8 + c];
    }
}

static inline void kr_lit_constants_read(const kiln_ps_args *a, kr_lit_constants *out)
{
    kr_lit_constants_from(a->cb, a->cb_size, out);
}

/* The TEXTURE kernel, the same at every level: kiln_ps_sample writes
 * straight into target 0 (its rgba layout is KILN_PS_COLOR's). */
void kr_ps_texture(kiln_ps_args *a);

/* Whether fn is an effect's vertex shader run with the varyings that
 * effect declares: it then writes every float of its output rows (the
 * geometry skips zeroing them). */
bool kr_effect_vs_writes(kiln_vs_fn fn, uint32_t num_varyings);

/* Whether fn is effect e's pixel kernel at any level (they all give the
 * same bits): what the specialized paths key on. */
bool kr_effect_ps_is(kiln_ps_fn fn, kiln_effect e);

/* The kernels of `level`, or NULL when this build or this CPU lacks it. */
const kr_effect_kernels *kr_effects_kernels(kr_simd level);

/* The vector levels (SSE2, AVX2, AVX512) this build and CPU have, in that
 * order, into out; their count. Tests run a path at each and compare. */
static inline int kr_effects_vector_levels(kr_simd out[3])
{
    int n = 0;
    if (kr_effects_kernels(KR_SIMD_SSE2))
        out[n++] = KR_SIMD_SSE2;
    if (kr_effects_kernels(KR_SIMD_AVX2))
        out[n++] = KR_SIMD_AVX2;
    if (kr_effects_kernels(KR_SIMD_AVX512))
        out[n++] = KR_SIMD_AVX512;
    return n;
}

/* A level's name as kiln_effect_simd_level gives it. */
static inline const char *kr_simd_name(kr_simd l)
{
    static const char *const names[KR_SIMD_COUNT] = {"scalar", "sse2", "avx2", "avx512"};
    return (unsigned)l < KR_SIMD_COUNT ? names[l] : "?";
}

/* The level chosen for a KILN_SIMD value (NULL: unset): the best the CPU
 * has; SSE2 when the value is "sse2", AVX2 when it is "avx2" and the CPU
 * has AVX2 (the 16-lane kernels off). Other values are ignored. */
kr_simd kr_effects_detect(const char *env_simd);

/* The level kiln_effect_get hands out now (the fused texture path of
 * sample.c follows it too). */
kr_simd kr_effects_active_level(void);

/* Tests: kiln_effect_get hands out the kernels of `level` from now on.
 * KILN_E_INVALID_ARG (nothing changes) when kr_effects_kernels(level) is
 * NULL. */
kiln_result kr_effects_force_level(kr_simd level);

#endif
