/* Texel conversions by D3D10's data conversion rules (texel.c): the scalar
 * conversions per representation, and a decode and an encode per format
 * for the formats that have no hand-tuned path (kres_texel_generic). The
 * rasterizer's fast paths keep their own code for RGBA8, BGRA8, R8 and
 * the 32-bit floats. */
#ifndef KILN_RESOURCES_TEXEL_H
#define KILN_RESOURCES_TEXEL_H

#include "kiln.h"

#include <stdbool.h>
#include <stdint.h>

float kres_unorm_to_float(uint32_t v, uint32_t bits);
uint32_t kres_float_to_unorm(float f, uint32_t bits);
float kres_snorm8_to_float(int8_t v);
int8_t kres_float_to_snorm8(float f);
float kres_srgb8_to_float(uint8_t v);
/* The sRGB curve's decode on a float in [0, 1] (BC formats' colors). */
float kres_srgb_to_linear(float v);
uint8_t kres_float_to_srgb8(float f);
float kres_half_to_float(uint16_t h);
uint16_t kres_float_to_half(float f);
float kres_f11_to_float(uint32_t v);
float kres_f10_to_float(uint32_t v);
uint32_t kres_float_to_f11(float f);
uint32_t kres_float_to_f10(float f);

/* The block-compressed formats (BC1 .. BC5; bc.c). */
bool kres_format_bc(kiln_format f);
/* Texel i (x + 4 y) of one BC block of `f` as RGBA, as kres_decode_texel
 * gives texels (sRGB decoded to linear after the block's interpolation). */
void kres_decode_bc(kiln_format f, const uint8_t *block, uint32_t i, float out[4]);

/* One BC block decoded for all its texels: the value of every code its
 * fields can hold, and the codes. kres_decode_bc is decode then texel;
 * the sampler keeps a few decoded blocks per call (sample.c's read_bc),
 * since the taps of a block of pixels fall in few texture blocks. */
typedef struct kres_bc_block {
    float color[4][4];    /* BC1..BC3: color code -> RGBA (sRGB decoded) */
    float ramp[2][8];     /* ramp code -> value: BC3's alpha, BC4; BC5's two */
    uint64_t codes[2];    /* ramp codes, 3 bits a texel; BC2: 4-bit alphas */
    uint32_t color_codes; /* 2 bits a texel */
} kres_bc_block;

void kres_bc_block_decode(kiln_format f, const uint8_t *block, kres_bc_block *out);

/* Texel i's parts in a decoded block: its color (BC1-3: RGBA, A used by
 * BC1 only), its BC2 alpha, and its value on ramp ch (BC3 alpha and BC4:
 * ramp 0; BC5: ramps 0 and 1). */
static inline const float *kres_bc_color(const kres_bc_block *k, uint32_t i)
{
    return k->color[k->color_codes >> (2 * i) & 3u];
}
static inline float kres_bc2_alpha(const kres_bc_block *k, uint32_t i)
{
    return (float)(uint32_t)(k->codes[0] >> (4 * i) & 15u) / 15.0f;
}
static inline float kres_bc_ramp(const kres_bc_block *k, int ch, uint32_t i)
{
    return k->ramp[ch][k->codes[ch] >> (3 * i) & 7u];
}

/* Texel i of a decoded block of BC format f (f a constant where this is
 * inlined: the switch folds). */
static inline void kres_bc_texel(kiln_format f, const kres_bc_block *k, uint32_t i, float o[4])
{
    const float *c;
    switch (f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        c = kres_bc_color(k, i);
        o[0] = c[0], o[1] = c[1], o[2] = c[2], o[3] = c[3];
        break;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB:
        c = kres_bc_color(k, i);
        o[0] = c[0], o[1] = c[1], o[2] = c[2];
        o[3] = kres_bc2_alpha(k, i);
        break;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB:
        c = kres_bc_color(k, i);
        o[0] = c[0], o[1] = c[1], o[2] = c[2];
        o[3] = kres_bc_ramp(k, 0, i);
        break;
    case KILN_FORMAT_BC4_UNORM:
        o[0] = kres_bc_ramp(k, 0, i);
        o[1] = o[2] = 0.0f;
        o[3] = 1.0f;
        break;
    case KILN_FORMAT_BC5_UNORM:
        o[0] = kres_bc_ramp(k, 0, i);
        o[1] = kres_bc_ramp(k, 1, i);
        o[2] = 0.0f;
        o[3] = 1.0f;
        break;
    default:
        o[0] = o[1] = o[2] = 0.0f;
        o[3] = 1.0f;
        break;
    }
}

/* The formats decoded and encoded here (R8G8_UNORM and after, not BC). */
bool kres_texel_generic(kiln_format f);
/* sRGB formats: color channels stored on the sRGB curve, alpha linear. */
bool kres_format_srgb(kiln_format f);
/* UNORM and UNORM_SRGB formats (blend sources are clamped to [0, 1]). */
bool kres_format_unorm(kiln_format f);
/* UINT and SINT formats: no filtering, no blending, no mip generation. */
bool kres_format_integer(kiln_format f);
/* FLOAT -> integer of `bits` bits (D3D10's ftou / ftoi, then the
 * channel's range): NaN 0, toward zero, clamped. */
uint32_t kres_float_to_uint(float f, uint32_t bits);
int32_t kres_float_to_sint(float f, uint32_t bits);

/* One texel as RGBA (missing channels 0, alpha 1); sRGB decoded to linear. */
void kres_decode_texel(kiln_format f, const uint8_t *p, float out[4]);
/* The channels of `v` set in `write_mask` (bit c: channel c) into one
 * texel, the others kept. */
void kres_encode_texel(kiln_format f, const float v[4], uint8_t *p, uint32_t write_mask);

#endif
