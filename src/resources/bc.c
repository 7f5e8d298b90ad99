/* Block-compressed formats (BC1..BC5): one texel decoded from its 4x4
 * block, as D3D10 specifies the decoding (texel.h). Texel i of a block is
 * at (i % 4, i / 4); every multi-byte field is little-endian. The sampler
 * decodes each texel it reads from its block (no cache: a tap costs a few
 * loads and one palette entry). */
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

/* The color block (8 bytes: c0, c1, 2-bit codes) at texel i. `four`:
 * always the 4-color mode (BC2, BC3); else BC1's c0 <= c1 rule. Alpha is
 * written only by BC1's transparent code (0) or left as is. */
static void color_block(const uint8_t *b, uint32_t i, int four, float o[4])
{
    uint32_t c0 = ld16(b), c1 = ld16(b + 2), code = ld32(b + 4) >> (2 * i) & 3u;
    float e0[3], e1[3];
    rgb565(c0, e0);
    rgb565(c1, e1);
    four = four || c0 > c1; /* as 16-bit numbers */
    for (int c = 0; c < 3; c++) {
        switch (code) {
        case 0:
            o[c] = e0[c];
            break;
        case 1:
            o[c] = e1[c];
            break;
        case 2:
            o[c] = four ? (2.0f * e0[c] + e1[c]) / 3.0f : (e0[c] + e1[c]) * 0.5f;
            break;
        default:
            o[c] = four ? (e0[c] + 2.0f * e1[c]) / 3.0f : 0.0f;
            break;
        }
    }
    if (!four && code == 3)
        o[3] = 0.0f; /* transparent black */
}

/* The 8-byte ramp block of BC3's alpha, BC4 and BC5 (e0, e1, 3-bit
 * codes) at texel i: e0 > e1 interpolates 6 values between them, else 4,
 * with codes 6 and 7 then reading 0 and 1. */
static float ramp_block(const uint8_t *b, uint32_t i)
{
    uint32_t e0 = b[0], e1 = b[1];
    uint32_t lo = ld32(b + 2), hi = ld16(b + 6); /* 48 bits of codes */
    uint64_t bits = (uint64_t)lo | (uint64_t)hi << 32;
    uint32_t code = (uint32_t)(bits >> (3 * i)) & 7u;
    float a = (float)e0 / 255.0f, z = (float)e1 / 255.0f;
    if (code == 0)
        return a;
    if (code == 1)
        return z;
    if (e0 > e1) /* codes 2..7: (8 - code) / 7 of e0 */
        return ((float)(8u - code) * a + (float)(code - 1u) * z) / 7.0f;
    if (code == 6)
        return 0.0f;
    if (code == 7)
        return 1.0f;
    return ((float)(6u - code) * a + (float)(code - 1u) * z) / 5.0f; /* codes 2..5 */
}

void kres_decode_bc(kiln_format f, const uint8_t *b, uint32_t i, float o[4])
{
    o[0] = o[1] = o[2] = 0.0f;
    o[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        color_block(b, i, 0, o);
        break;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB: {
        uint32_t word = ld32(b + (i < 8 ? 0 : 4)); /* 4-bit alphas, texel 0 lowest */
        o[3] = (float)(word >> (4 * (i & 7u)) & 15u) / 15.0f;
        color_block(b + 8, i, 1, o);
        break;
    }
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB:
        o[3] = ramp_block(b, i);
        color_block(b + 8, i, 1, o);
        break;
    case KILN_FORMAT_BC4_UNORM:
        o[0] = ramp_block(b, i);
        break;
    case KILN_FORMAT_BC5_UNORM:
        o[0] = ramp_block(b, i);
        o[1] = ramp_block(b + 8, i);
        break;
    default:
        return;
    }
    if (kres_format_srgb(f))
        for (int c = 0; c < 3; c++)
            o[c] = kres_srgb_to_linear(o[c]);
}
