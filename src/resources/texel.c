/* Texel conversions for the formats without a hand-tuned path: D3D10's data
 * conversion rules, one scalar function per representation, and a decode
 * and an encode per format built from them (texel.h). */
#include "texel.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

/* ---- normalized integers ---- */

float kres_unorm_to_float(uint32_t v, uint32_t bits)
{
    return (float)v / (float)((1u << bits) - 1u);
}

/* FLOAT -> UNORM: NaN 0, clamp to [0, 1], scale, add 0.5, truncate. */
uint32_t kres_float_to_unorm(float f, uint32_t bits)
{
    float max = (float)((1u << bits) - 1u);
    if (!(f > 0.0f))
        return 0;
    if (f >= 1.0f)
        return (uint32_t)max;
    return (uint32_t)(f * max + 0.5f);
}

/* Both most negative codes are -1. */
float kres_snorm8_to_float(int8_t v)
{
    float f = (float)v / 127.0f;
    return f < -1.0f ? -1.0f : f;
}

/* FLOAT -> SNORM: NaN 0, clamp to [-1, 1], scale, round half away from 0. */
int8_t kres_float_to_snorm8(float f)
{
    if (f != f)
        return 0;
    if (f >= 1.0f)
        return 127;
    if (f <= -1.0f)
        return -127;
    float s = f * 127.0f;
    return (int8_t)(s >= 0.0f ? s + 0.5f : s - 0.5f);
}

/* ---- sRGB (IEC 61966-2-1) ---- */

static float srgb_lut[256];
static pthread_once_t srgb_once = PTHREAD_ONCE_INIT;

static void srgb_init(void)
{
    for (int i = 0; i < 256; i++) {
        double c = i / 255.0;
        srgb_lut[i] = (float)(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
    }
}

float kres_srgb8_to_float(uint8_t v)
{
    pthread_once(&srgb_once, srgb_init);
    return srgb_lut[v];
}

float kres_srgb_to_linear(float v)
{
    if (!(v > 0.0f))
        return 0.0f;
    if (v >= 1.0f)
        return 1.0f;
    double c = v;
    return (float)(c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4));
}

/* FLOAT -> SRGB: NaN 0, clamp to [0, 1], the curve (in double), then as
 * FLOAT -> UNORM. */
uint8_t kres_float_to_srgb8(float f)
{
    if (!(f > 0.0f))
        return 0;
    if (f >= 1.0f)
        return 255;
    double l = f, s = l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
    return (uint8_t)(s * 255.0 + 0.5);
}

/* ---- small floats ---- */

/* A float with `ebits` exponent bits (bias 2^(ebits-1) - 1) and `mbits`
 * mantissa bits, no sign, as a float: denormals, INF and NaN included. */
static float small_to_float(uint32_t e, uint32_t m, uint32_t ebits, uint32_t mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t emax = (1u << ebits) - 1u;
    if (e == emax)
        return m ? NAN : INFINITY;
    if (e == 0)
        return ldexpf((float)m, 1 - bias - (int)mbits);
    return ldexpf((float)(m | 1u << mbits), (int)e - bias - (int)mbits);
}

/* FLOAT -> a smaller float (D3D10: round toward zero, so a finite value
 * beyond the range becomes the largest finite one; INF stays INF, NaN
 * stays NaN, denormals where representable). Returns the magnitude bits
 * (exponent, mantissa); `sign` gets the sign. */
static uint32_t float_to_small(float f, uint32_t ebits, uint32_t mbits, uint32_t *sign)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    *sign = x >> 31;
    uint32_t ax = x & 0x7FFFFFFFu;
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t emax = (1u << ebits) - 1u;
    if (ax > 0x7F800000u) /* NaN */
        return emax << mbits | 1u << (mbits - 1);
    if (ax == 0x7F800000u)
        return emax << mbits;
    int e = (int)(ax >> 23) - 127; /* unbiased (f32 denormals: far below) */
    uint32_t m = (ax & 0x7FFFFFu) | (ax >> 23 ? 0x800000u : 0u);
    if (e + bias >= (int)emax) /* beyond the largest finite: that one */
        return (emax - 1u) << mbits | ((1u << mbits) - 1u);
    if (e + bias >= 1) /* normal: drop mantissa bits (toward zero) */
        return (uint32_t)(e + bias) << mbits | ((m >> (23 - mbits)) & ((1u << mbits) - 1u));
    /* denormal: value = m * 2^(e - 23) = d * 2^(1 - bias - mbits) */
    int shift = 23 - (int)mbits + (1 - bias - e);
    return shift >= 32 ? 0u : m >> shift;
}

float kres_half_to_float(uint16_t h)
{
    float f = small_to_float(h >> 10 & 31u, h & 1023u, 5, 10);
    return h & 0x8000u ? -f : f;
}

uint16_t kres_float_to_half(float f)
{
    uint32_t sign;
    uint32_t v = float_to_small(f, 5, 10, &sign);
    return (uint16_t)(sign << 15 | v);
}

float kres_f11_to_float(uint32_t v) { return small_to_float(v >> 6 & 31u, v & 63u, 5, 6); }
float kres_f10_to_float(uint32_t v) { return small_to_float(v >> 5 & 31u, v & 31u, 5, 5); }

/* No sign bit: negative values (and -INF) become 0, a negative NaN NaN. */
uint32_t kres_float_to_f11(float f)
{
    uint32_t sign, v = float_to_small(f, 5, 6, &sign);
    return sign && f == f ? 0u : v;
}

uint32_t kres_float_to_f10(float f)
{
    uint32_t sign, v = float_to_small(f, 5, 5, &sign);
    return sign && f == f ? 0u : v;
}

/* ---- per format ---- */

static uint16_t ld16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static uint32_t ld32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void st16(uint8_t *p, uint16_t v) { memcpy(p, &v, sizeof v); }
static void st32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }

bool kres_texel_generic(kiln_format f)
{
    return f >= KILN_FORMAT_R8G8_UNORM && f < KILN_FORMAT_COUNT && !kres_format_bc(f);
}

bool kres_format_srgb(kiln_format f)
{
    return f == KILN_FORMAT_R8G8B8A8_UNORM_SRGB || f == KILN_FORMAT_B8G8R8A8_UNORM_SRGB ||
           f == KILN_FORMAT_BC1_UNORM_SRGB || f == KILN_FORMAT_BC2_UNORM_SRGB ||
           f == KILN_FORMAT_BC3_UNORM_SRGB;
}

bool kres_format_unorm(kiln_format f)
{
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
    case KILN_FORMAT_B8G8R8A8_UNORM:
    case KILN_FORMAT_R8_UNORM:
    case KILN_FORMAT_R8G8_UNORM:
    case KILN_FORMAT_R8G8B8A8_UNORM_SRGB:
    case KILN_FORMAT_B8G8R8A8_UNORM_SRGB:
    case KILN_FORMAT_R10G10B10A2_UNORM:
    case KILN_FORMAT_R16_UNORM:
    case KILN_FORMAT_R16G16B16A16_UNORM:
        return true;
    default:
        return kres_format_bc(f); /* all UNORM or UNORM_SRGB */
    }
}

bool kres_format_integer(kiln_format f)
{
    return f >= KILN_FORMAT_R8G8B8A8_UINT && f <= KILN_FORMAT_R32G32B32A32_UINT;
}

/* ---- integers ---- */

uint32_t kres_float_to_uint(float f, uint32_t bits)
{
    double max = bits >= 32 ? 4294967295.0 : (double)((1u << bits) - 1u);
    if (!(f > 0.0f)) /* NaN, negatives and -0 */
        return 0;
    double t = trunc((double)f); /* exact: a float's integer part fits a double */
    return t >= max ? (uint32_t)max : (uint32_t)t;
}

int32_t kres_float_to_sint(float f, uint32_t bits)
{
    double max = bits >= 32 ? 2147483647.0 : (double)((1u << (bits - 1)) - 1u), min = -max - 1.0;
    if (f != f)
        return 0;
    double t = trunc((double)f);
    return t >= max ? (int32_t)max : t <= min ? (int32_t)min : (int32_t)t;
}

void kres_decode_texel(kiln_format f, const uint8_t *p, float o[4])
{
    o[0] = o[1] = o[2] = 0.0f;
    o[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8_UNORM:
        o[0] = kres_unorm_to_float(p[0], 8);
        o[1] = kres_unorm_to_float(p[1], 8);
        break;
    case KILN_FORMAT_R8G8B8A8_SNORM:
        for (int c = 0; c < 4; c++)
            o[c] = kres_snorm8_to_float((int8_t)p[c]);
        break;
    case KILN_FORMAT_R8G8B8A8_UNORM_SRGB:
        for (int c = 0; c < 3; c++)
            o[c] = kres_srgb8_to_float(p[c]);
        o[3] = kres_unorm_to_float(p[3], 8); /* alpha is linear */
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM_SRGB:
        o[0] = kres_srgb8_to_float(p[2]);
        o[1] = kres_srgb8_to_float(p[1]);
        o[2] = kres_srgb8_to_float(p[0]);
        o[3] = kres_unorm_to_float(p[3], 8);
        break;
    case KILN_FORMAT_R10G10B10A2_UNORM: {
        uint32_t v = ld32(p);
        o[0] = kres_unorm_to_float(v & 1023u, 10);
        o[1] = kres_unorm_to_float(v >> 10 & 1023u, 10);
        o[2] = kres_unorm_to_float(v >> 20 & 1023u, 10);
        o[3] = kres_unorm_to_float(v >> 30, 2);
        break;
    }
    case KILN_FORMAT_R11G11B10_FLOAT: {
        uint32_t v = ld32(p);
        o[0] = kres_f11_to_float(v & 2047u);
        o[1] = kres_f11_to_float(v >> 11 & 2047u);
        o[2] = kres_f10_to_float(v >> 22);
        break;
    }
    case KILN_FORMAT_R16_UNORM:
    case KILN_FORMAT_D16_UNORM:
        o[0] = kres_unorm_to_float(ld16(p), 16);
        break;
    case KILN_FORMAT_R16_FLOAT:
        o[0] = kres_half_to_float(ld16(p));
        break;
    case KILN_FORMAT_R16G16_FLOAT:
        o[0] = kres_half_to_float(ld16(p));
        o[1] = kres_half_to_float(ld16(p + 2));
        break;
    case KILN_FORMAT_R16G16B16A16_FLOAT:
        for (int c = 0; c < 4; c++)
            o[c] = kres_half_to_float(ld16(p + 2 * c));
        break;
    case KILN_FORMAT_R16G16B16A16_UNORM:
        for (int c = 0; c < 4; c++)
            o[c] = kres_unorm_to_float(ld16(p + 2 * c), 16);
        break;
    /* integers: their values (rounded to float beyond 2^24) */
    case KILN_FORMAT_R8G8B8A8_UINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)p[c];
        break;
    case KILN_FORMAT_R8G8B8A8_SINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)(int8_t)p[c];
        break;
    case KILN_FORMAT_R16_UINT:
        o[0] = (float)ld16(p);
        break;
    case KILN_FORMAT_R32_UINT:
        o[0] = (float)ld32(p);
        break;
    case KILN_FORMAT_R32_SINT:
        o[0] = (float)(int32_t)ld32(p);
        break;
    case KILN_FORMAT_R32G32B32A32_UINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)ld32(p + 4 * c);
        break;
    default:
        break;
    }
}

void kres_encode_texel(kiln_format f, const float v[4], uint8_t *p, uint32_t wm)
{
    switch (f) {
    case KILN_FORMAT_R8G8_UNORM:
        for (int c = 0; c < 2; c++)
            if (wm >> c & 1)
                p[c] = (uint8_t)kres_float_to_unorm(v[c], 8);
        break;
    case KILN_FORMAT_R8G8B8A8_SNORM:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                p[c] = (uint8_t)kres_float_to_snorm8(v[c]);
        break;
    case KILN_FORMAT_R8G8B8A8_UNORM_SRGB:
        for (int c = 0; c < 3; c++)
            if (wm >> c & 1)
                p[c] = kres_float_to_srgb8(v[c]);
        if (wm & 8)
            p[3] = (uint8_t)kres_float_to_unorm(v[3], 8);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM_SRGB:
        if (wm & 1) p[2] = kres_float_to_srgb8(v[0]);
        if (wm & 2) p[1] = kres_float_to_srgb8(v[1]);
        if (wm & 4) p[0] = kres_float_to_srgb8(v[2]);
        if (wm & 8) p[3] = (uint8_t)kres_float_to_unorm(v[3], 8);
        break;
    case KILN_FORMAT_R10G10B10A2_UNORM: {
        static const uint32_t shift[4] = {0, 10, 20, 30}, bits[4] = {10, 10, 10, 2};
        uint32_t x = ld32(p);
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1) {
                uint32_t m = (1u << bits[c]) - 1u;
                x = (x & ~(m << shift[c])) | kres_float_to_unorm(v[c], bits[c]) << shift[c];
            }
        st32(p, x);
        break;
    }
    case KILN_FORMAT_R11G11B10_FLOAT: {
        uint32_t x = ld32(p);
        if (wm & 1) x = (x & ~2047u) | kres_float_to_f11(v[0]);
        if (wm & 2) x = (x & ~(2047u << 11)) | kres_float_to_f11(v[1]) << 11;
        if (wm & 4) x = (x & ~(1023u << 22)) | kres_float_to_f10(v[2]) << 22;
        st32(p, x);
        break;
    }
    case KILN_FORMAT_R16_UNORM:
    case KILN_FORMAT_D16_UNORM:
        if (wm & 1)
            st16(p, (uint16_t)kres_float_to_unorm(v[0], 16));
        break;
    case KILN_FORMAT_R16_FLOAT:
        if (wm & 1)
            st16(p, kres_float_to_half(v[0]));
        break;
    case KILN_FORMAT_R16G16_FLOAT:
        for (int c = 0; c < 2; c++)
            if (wm >> c & 1)
                st16(p + 2 * c, kres_float_to_half(v[c]));
        break;
    case KILN_FORMAT_R16G16B16A16_FLOAT:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                st16(p + 2 * c, kres_float_to_half(v[c]));
        break;
    case KILN_FORMAT_R16G16B16A16_UNORM:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                st16(p + 2 * c, (uint16_t)kres_float_to_unorm(v[c], 16));
        break;
    case KILN_FORMAT_R8G8B8A8_UINT:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                p[c] = (uint8_t)kres_float_to_uint(v[c], 8);
        break;
    case KILN_FORMAT_R8G8B8A8_SINT:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                p[c] = (uint8_t)kres_float_to_sint(v[c], 8);
        break;
    case KILN_FORMAT_R16_UINT:
        if (wm & 1)
            st16(p, (uint16_t)kres_float_to_uint(v[0], 16));
        break;
    case KILN_FORMAT_R32_UINT:
        if (wm & 1)
            st32(p, kres_float_to_uint(v[0], 32));
        break;
    case KILN_FORMAT_R32_SINT:
        if (wm & 1)
            st32(p, (uint32_t)kres_float_to_sint(v[0], 32));
        break;
    case KILN_FORMAT_R32G32B32A32_UINT:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                st32(p + 4 * c, kres_float_to_uint(v[c], 32));
        break;
    default:
        break;
    }
}
