/*
 * The fused path of KILN_EFFECT_TEXTURE (sample.c): one texture level as
 * its 8-pixel AVX2 kernel reads it, and the kernel (fused_avx2.c, compiled
 * with -mavx2 and reached only on CPUs that have it).
 */
#ifndef KILN_RASTER_FUSED_H
#define KILN_RASTER_FUSED_H

#include "effects.h"
#include "raster.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* kr_fused_level (a level as the AVX2 kernels read it) is in raster.h:
 * kiln_ps_textures keeps prepared ones. */

/* kr_fused_shade_avx2's constants (in kr_drawx.shade_data), set by
 * kr_shade_select: when `one`, slot 0 is a view of one RGBA8 / BGRA8
 * level under a LINEAR, non-BORDER, non-anisotropic sampler whose level
 * the AVX2 kernel reads (kiln_ps_sample's shortcut to
 * kr_sample_rows_avx2) under sampler 0, and L is the level the draw's
 * views prepared (kiln_ps_textures.prep[0][0]); swap:
 * a BGRA8 texture (bytes 0 and 2 to channels 2 and 0). For
 * kr_fused_shade_add_avx2 and kr_fused_shade_alpha_avx2 also flip (texel
 * bytes 0 and 2 go to the target's bytes 2 and 0: one of the texture and
 * the target is BGRA8) and keep (the target bytes the write mask leaves
 * alone, in each word). */
typedef struct kr_fused_shade {
    kr_fused_level L;
    int one, swap, flip;
    uint32_t keep;
} kr_fused_shade;

/* The blends in registers under ADD of (ONE, ONE) take the float way for
 * a pixel one of whose channel sums M has (M + 32768) mod 65536 within
 * KR_ADD_BAND of 0 (fused_avx2.c explains the bound; fused_avx512.c uses
 * the same band). */
#define KR_ADD_BAND 4

/* A draw's constants (in kr_drawx.block_data), set by kr_block_select. */
typedef struct kr_fused_draw {
    const kr_texture *t;
    const kd_sampler *s;
    const kres_subresource *subs; /* the view's first mip */
    uint32_t nl;                  /* levels read */
    int swap;                     /* texel bytes 0 and 2 exchanged on the way */
    kr_fused_level L0;            /* AVX2: level 0, the only one, read directly */
} kr_fused_draw;

struct kr_prim;
struct kr_fb;

/* The block functions (kr_block_fn) of the fused path. SSE2 (sample.c):
 * any view, false where the quads do not all read one level bilinearly.
 * AVX2 (fused_avx2.c, for views of one level read directly): the u, v of
 * the 16 pixels as shade_block interpolates them, the sums on L0, each
 * channel's sum S rounded to a byte as (S + 32768) >> 16, stored under
 * mask; a block where a pixel's texel pair wraps around a WRAP axis goes
 * to the SSE2 function instead. */
bool kr_fused_block_sse2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                         uint32_t mask);
bool kr_fused_block_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                         uint32_t mask);
/* It over a rect inside a triangle (kr_span_fn), the constants once. */
bool kr_fused_span_block_avx2(const struct kr_prim *p, const struct kr_fb *fb, int x0, int y0,
                              int x1, int y1);
/* The AVX2 one at the AVX-512 level (fused_avx512.c): the 16 pixels in one
 * vector; pixels whose pair wraps a WRAP axis read texel by texel (the
 * same sums), so it never declines a triangle's block. */
bool kr_fused_block_avx512(const struct kr_prim *p, const struct kr_fb *fb, int x, int y,
                           uint32_t mask);
/* kiln_ps_sample's bilinear block on one level (sample.c's rgba8_rows),
 * eight pixels per vector: texel bytes 0..3 of the 16 pixels to o0..o3,
 * each sum S as S / (255 * 65536.0f), the same bits as the SSE2 kernel.
 * Always true (the return value is kept for the callers' fallbacks). */
bool kr_sample_rows_avx2(const kr_fused_level *L, const float *u, const float *v, float *o0,
                         float *o1, float *o2, float *o3);
/* The same at the AVX-512 level (fused_avx512.c, reached only on CPUs with
 * AVX-512 F, BW, VL and DQ): the whole block per vector, each row a
 * 128-bit lane doing what the AVX2 kernel's lanes do; the same bits. */
bool kr_sample_rows_avx512(const kr_fused_level *L, const float *u, const float *v, float *o0,
                           float *o1, float *o2, float *o3);

/* Those two kernels with kr_rows_fn's arguments (raster.h), for
 * kiln_ps_sample's prepared slots: five, so its call is a jump. */
void kr_sample_rows_rgba_avx2(const kr_fused_level *L, const float *u, const float *v, float *rgba,
                              int swap);
void kr_sample_rows_rgba_avx512(const kr_fused_level *L, const float *u, const float *v,
                                float *rgba, int swap);

/* kiln_ps_sample's POINT shortcut (raster.h, kr_point_fn) at AVX2 and
 * AVX-512: each axis CLAMP, MIRROR_ONCE, or WRAP or MIRROR over a
 * power-of-two size, and every texel's offset y pitch + 4 x within int32
 * (kr_textures_prepare chooses; sample.c's portable kernel takes the
 * other levels). A magnified block's texels from a window of rows and a
 * permute, any other block's by a gather; each byte over 255 by quot8 /
 * quot16, the divide's bits in the default rounding mode (as kiln's
 * other kernels assume: under FE_DOWNWARD byte 255 reads one ulp under
 * 1). */
void kr_sample_point_avx2(const kr_point_level *L, const float *u, const float *v, float *rgba,
                          int swap);
void kr_sample_point_avx512(const kr_point_level *L, const float *u, const float *v, float *rgba,
                            int swap);

/* kiln_ps_sample's BC block (sample.c's sample_bc) at the AVX-512 level
 * for BC1 to BC5 (and the _SRGB formats), for a block whose 16 pixels
 * are LINEAR on one level (lw: each pixel's level weight, 1 for every
 * one-pass plan kiln makes today) and whose taps
 * all fall in a window of 2 x 2 blocks, each axis CLAMP, MIRROR_ONCE, or
 * WRAP or MIRROR over a power-of-two size: the window's blocks decoded
 * once (bc.c's palettes, the same operations), every tap's palette entry
 * taken by a permute, and per channel the products and sums of sample_bc
 * in its order, so the same bits. rgba: 4 channels of 16 floats. False
 * (nothing written) for any other block: the caller samples it as before. */
typedef struct kr_bc_level {
    const uint8_t *base; /* the level's first block */
    size_t pitch;        /* bytes from one row of blocks to the next */
    int32_t w, h;        /* texels */
    float fw, fh;
    kiln_address au, av;
} kr_bc_level;

/* Whether axis8 / axis16 (the POINT and BC kernels' addressing) give
 * sample.c's address() for an axis of n texels under `mode`: CLAMP,
 * MIRROR_ONCE, or WRAP and MIRROR over a power of two (masks). */
static inline bool kr_simd_axis(int32_t n, kiln_address mode)
{
    if (mode == KILN_ADDRESS_WRAP || mode == KILN_ADDRESS_MIRROR)
        return (n & (n - 1)) == 0;
    return mode == KILN_ADDRESS_CLAMP || mode == KILN_ADDRESS_MIRROR_ONCE;
}

/* The two BC kernels' scalar parts. kr_bc_kind: 1 to 5 for BC1 to BC5
 * (either sRGB or not), 0 for any other format. */
static inline int kr_bc_kind(kiln_format f)
{
    return f == KILN_FORMAT_BC1_UNORM || f == KILN_FORMAT_BC1_UNORM_SRGB   ? 1
           : f == KILN_FORMAT_BC2_UNORM || f == KILN_FORMAT_BC2_UNORM_SRGB ? 2
           : f == KILN_FORMAT_BC3_UNORM || f == KILN_FORMAT_BC3_UNORM_SRGB ? 3
           : f == KILN_FORMAT_BC4_UNORM                                    ? 4
           : f == KILN_FORMAT_BC5_UNORM                                    ? 5
                                                                           : 0;
}

/* The channels a kind samples (the others read 0, alpha 1). */
static inline int kr_bc_channels(int kind) { return kind == 4 ? 1 : kind == 5 ? 2 : 4; }

/* Whether the BC kernels address an axis of n texels under `mode`
 * (kr_simd_axis, with n's bound for their 32-bit lanes). */
static inline bool kr_bc_axis_ok(int32_t n, kiln_address mode)
{
    return n >= 1 && n <= (1 << 28) && kr_simd_axis(n, mode);
}

/* The fields of the window's blocks the taps use (bit id of `used`; the
 * others stay 0), little-endian: the color endpoints c0 | c1 << 16 and
 * 2-bit codes (BC1-BC3); BC2's 4-bit alphas (lo: texels 0-7, hi: 8-15);
 * a ramp's endpoints e0 | e1 << 8 (e01) and 3-bit codes (lo: bits 0-31,
 * hi: bits 32-47), ramp 0 BC3's alpha, BC4's red and BC5's red, ramp 1
 * BC5's green. Block id of the window is at column bx0 + (id & 1), row
 * by0 + (id >> 1). */
typedef struct kr_bc_fields {
    uint32_t ends[4], codes[4];
    uint32_t e01[2][4], lo[2][4], hi[2][4];
} kr_bc_fields;

/* A ramp block's (8 bytes at b) fields into ramp r, block id. */
static inline void kr_bc_ramp_fields(const uint8_t *b, kr_bc_fields *o, int r, uint32_t id)
{
    uint16_t hi;
    o->e01[r][id] = (uint32_t)b[0] | (uint32_t)b[1] << 8;
    memcpy(&o->lo[r][id], b + 2, 4);
    memcpy(&hi, b + 6, 2);
    o->hi[r][id] = hi;
}

static inline void kr_bc_read(const kr_bc_level *L, int kind, int32_t bx0, int32_t by0,
                              uint32_t used, kr_bc_fields *o)
{
    const size_t size = kind == 1 || kind == 4 ? 8u : 16u, color = kind == 1 ? 0u : 8u;
    memset(o, 0, sizeof *o);
    for (uint32_t id = 0; id < 4; id++) {
        if (!(used >> id & 1u))
            continue;
        const uint8_t *blk = L->base + (size_t)(by0 + (int32_t)(id >> 1)) * L->pitch +
                             (size_t)(bx0 + (int32_t)(id & 1u)) * size;
        if (kind <= 3) {
            memcpy(&o->ends[id], blk + color, 4);
            memcpy(&o->codes[id], blk + color + 4, 4);
        }
        if (kind == 2) {
            memcpy(&o->lo[0][id], blk, 4);
            memcpy(&o->hi[0][id], blk + 4, 4);
        } else if (kind >= 3) {
            kr_bc_ramp_fields(blk, o, 0, id);
            if (kind == 5)
                kr_bc_ramp_fields(blk + 8, o, 1, id);
        }
    }
}

bool kr_sample_bc_avx512(kiln_format f, const kr_bc_level *L, const float *u, const float *v,
                         const float *lw, float *rgba);
/* The same at the AVX2 level (fused_avx2.c), eight pixels per vector. */
bool kr_sample_bc_avx2(kiln_format f, const kr_bc_level *L, const float *u, const float *v,
                       const float *lw, float *rgba);

#if KR_EFFECTS_X86
/* The rows kernel of the active level (AVX2 or above: its callers have
 * checked that level). */
static inline void kr_sample_rows(const kr_fused_level *L, const float *u, const float *v, float *o0,
                                  float *o1, float *o2, float *o3)
{
    if (kr_effects_active_level() >= KR_SIMD_AVX512)
        kr_sample_rows_avx512(L, u, v, o0, o1, o2, o3);
    else
        kr_sample_rows_avx2(L, u, v, o0, o1, o2, o3);
}
#endif

/* One quad's plan for kr_sample_quads_avx2: its level per pass (L[1] is
 * L[0] with one pass) and their weights. */
typedef struct kr_fused_quad {
    const kr_fused_level *L[2];
    float lw[2];
    int passes;
} kr_fused_quad;

/* kiln_ps_sample's bilinear or trilinear RGBA8 block (sample.c's
 * rgba8_block) when every quad filters LINEAR on levels the kernels read
 * (kr_fused_level), each quad with its own plan q[quad]: two quads per
 * vector, one per 128-bit lane, each lane rgba8_plan4's operations, so
 * the same floats. out[b] receives texel byte b of the 16 pixels. Always
 * true. */
bool kr_sample_quads_avx2(const kr_fused_quad q[4], const float *u, const float *v, float *out[4]);
/* The same at the AVX-512 level (fused_avx512.c): the four quads in one
 * vector, one per 128-bit lane; the same floats. */
bool kr_sample_quads_avx512(const kr_fused_quad q[4], const float *u, const float *v,
                            float *out[4]);

#if KR_EFFECTS_X86
/* The quads kernel of the active level (AVX2 or above). */
static inline void kr_sample_quads(const kr_fused_quad q[4], const float *u, const float *v,
                                   float *out[4])
{
    if (kr_effects_active_level() >= KR_SIMD_AVX512)
        kr_sample_quads_avx512(q, u, v, out);
    else
        kr_sample_quads_avx2(q, u, v, out);
}
#endif

/* The AVX2 kernels' in[i] / k for eight values (no divide: the rounded
 * reciprocal's product and one exact-residual FMA step), exposed for the
 * exhaustive test that it is the divide's quotient for their inputs. */
void kr_quot_avx2(const float in[8], float k, float out[8]);
/* The same for sixteen values at the AVX-512 level (fused_avx512.c). */
void kr_quot_avx512(const float in[16], float k, float out[16]);

#endif
