/* Block-compressed formats (BC1..BC5): a 4x4 block decoded as D3D10
 * specifies the decoding (texel.h), as the values of its codes (palettes)
 * and the codes, from which kres_bc_texel reads texel i at (i % 4, i / 4);
 * every multi-byte field is little-endian. The sampler keeps the blocks
 * its taps read decoded (sample.c's read_bc). */
#include "texel.h"

#include <string.h>

bool kres_format_bc(kiln_format f)
{
    return f >= KILN_FORMAT_BC1_UNORM && f <= KILN_FORMAT_BC5_UNORM;
}

static uint32_t ld16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }

static uint32_t ld32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* A 5:6:5 color (R in bits 11..15, B in 0..4) as UNORM floats. */
static void rgb565(uint32_t c, float o[3])
{
    o[0] = (float)(c >> 11 & 31u) / 31.0f;
    o[1] = (float)(c >> 5 & 63u) / 63.0f;
    o[2] = (float)(c & 31u) / 31.0f;
}

/* The color block's (8 bytes: c0, c1, 2-bit codes) four colors, RGBA.
 * `four`: always the 4-color mode (BC2, BC3, whose alpha comes from its
 * own field); else BC1's c0 <= c1 rule, where code 3 is transparent
 * black. */
static void color_palette(const uint8_t *b, int four, float pal[4][4])
{
    uint32_t c0 = ld16(b), c1 = ld16(b + 2);
    float e0[3], e1[3];
    rgb565(c0, e0);
    rgb565(c1, e1);
    four = four || c0 > c1; /* as 16-bit numbers */
    for (int c = 0; c < 3; c++) {
        pal[0][c] = e0[c];
        pal[1][c] = e1[c];
        pal[2][c] = four ? (2.0f * e0[c] + e1[c]) / 3.0f : (e0[c] + e1[c]) * 0.5f;
        pal[3][c] = four ? (e0[c] + 2.0f * e1[c]) / 3.0f : 0.0f;
    }
    pal[0][3] = pal[1][3] = pal[2][3] = 1.0f;
    pal[3][3] = four ? 1.0f : 0.0f;
}

/* The ramp block's (BC3's alpha, BC4, BC5: e0, e1, 3-bit codes) eight
 * values: e0 > e1 interpolates 6 values between them, else 4, with codes
 * 6 and 7 then reading 0 and 1. */
static void ramp_palette(const uint8_t *b, float r[8])
{
    uint32_t e0 = b[0], e1 = b[1];
    float a = (float)e0 / 255.0f, z = (float)e1 / 255.0f;
    r[0] = a;
    r[1] = z;
    for (uint32_t code = 2; code < 8; code++) {
        if (e0 > e1) /* codes 2..7: (8 - code) / 7 of e0 */
            r[code] = ((float)(8u - code) * a + (float)(code - 1u) * z) / 7.0f;
        else if (code < 6)
            r[code] = ((float)(6u - code) * a + (float)(code - 1u) * z) / 5.0f;
        else
            r[code] = code == 6 ? 0.0f : 1.0f;
    }
}

/* The ramp block's 48 bits of codes. */
static uint64_t ramp_codes(const uint8_t *b) { return (uint64_t)ld32(b + 2) | (uint64_t)ld16(b + 6) << 32; }

/* kres_bc_block_decode, with the sRGB curve applied to the colors when
 * `linear` (kres_decode_bc applies it to its one texel instead: 3 curves
 * rather than 12). */
static void block_decode(kiln_format f, const uint8_t *b, kres_bc_block *k, bool linear)
{
    switch (f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        color_palette(b, 0, k->color);
        k->color_codes = ld32(b + 4);
        break;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB:
        color_palette(b + 8, 1, k->color);
        k->color_codes = ld32(b + 12);
        k->codes[0] = (uint64_t)ld32(b) | (uint64_t)ld32(b + 4) << 32; /* 4-bit alphas */
        break;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB:
        ramp_palette(b, k->ramp[0]);
        k->codes[0] = ramp_codes(b);
        color_palette(b + 8, 1, k->color);
        k->color_codes = ld32(b + 12);
        break;
    case KILN_FORMAT_BC5_UNORM:
        ramp_palette(b + 8, k->ramp[1]);
        k->codes[1] = ramp_codes(b + 8);
        ramp_palette(b, k->ramp[0]);
        k->codes[0] = ramp_codes(b);
        break;
    case KILN_FORMAT_BC4_UNORM:
        ramp_palette(b, k->ramp[0]);
        k->codes[0] = ramp_codes(b);
        break;
    default:
        return;
    }
    /* sRGB: the colors decoded to linear after the interpolation; alpha
     * stays linear */
    if (linear && kres_format_srgb(f))
        for (int j = 0; j < 4; j++)
            for (int c = 0; c < 3; c++)
                k->color[j][c] = kres_srgb_to_linear(k->color[j][c]);
}

void kres_bc_block_decode(kiln_format f, const uint8_t *b, kres_bc_block *k)
{
    block_decode(f, b, k, true);
}

void kres_decode_bc(kiln_format f, const uint8_t *b, uint32_t i, float o[4])
{
    if (!kres_format_bc(f)) {
        o[0] = o[1] = o[2] = 0.0f;
        o[3] = 1.0f;
        return;
    }
    kres_bc_block k;
    block_decode(f, b, &k, false);
    kres_bc_texel(f, &k, i, o);
    if (kres_format_srgb(f))
        for (int c = 0; c < 3; c++)
            o[c] = kres_srgb_to_linear(o[c]);
}
