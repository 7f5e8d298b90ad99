/*
 * The texture formats of src/resources/texel.c (issue 12), against D3D10's
 * data conversion rules as this file implements them again, independently
 * (exact values from the bit layouts, searches instead of bit tricks):
 *
 *  - every float16, float11 and float10 code decodes to its exact value;
 *    encoding rounds toward zero (the largest representable magnitude not
 *    above the input), keeps INF, NaN, signed zero and denormals, turns
 *    finite overflow into the largest finite value and negatives into 0
 *    where there is no sign; checked on every code, the midpoints between
 *    codes and 200,000 random floats;
 *  - UNORM 8/10/16 and SNORM 8 round trip every code, and clamp and round
 *    as D3D10 says (NaN 0, add 0.5 and truncate, SNORM's two -1 codes);
 *  - sRGB: every 8-bit code decodes within 1 ulp of the IEC 61966-2-1
 *    curve computed in long double, every code round-trips, and 4,096
 *    linear values encode to the reference's nearest code;
 *  - on a device: clears and constant-color draws into every format write
 *    the reference bytes; additive blending on an sRGB target happens on
 *    linear values; point sampling returns the reference decode of every
 *    texel, bilinear sampling of an sRGB texture filters linear values,
 *    and generate_mips on sRGB averages linear values;
 *  - integer formats (UINT, SINT): float -> integer against a second
 *    implementation on every width's edges and 200,000 random floats;
 *    clears and draws write them, Load reads them (Sample reads zeros),
 *    blending is ignored on them and generate_mips refuses them;
 *  - Load (kiln_ps_load) through a draw returns every texel's decode;
 *  - the osmesa backend refuses the formats (BACKEND_FEATURE).
 */
#include "harness.h"
#include "raster_util.h"
#include "resources/texel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the reference ---- */

static float ref_small(uint32_t e, uint32_t m, int ebits, int mbits)
{
    int bias = (1 << (ebits - 1)) - 1;
    if (e == (1u << ebits) - 1u)
        return m ? NAN : INFINITY;
    double v = e ? (1.0 + m / (double)(1u << mbits)) * pow(2.0, (int)e - bias)
                 : m / (double)(1u << mbits) * pow(2.0, 1 - bias);
    return (float)v;
}

static float ref_half(uint16_t h) { return (h & 0x8000u ? -1.0f : 1.0f) * ref_small(h >> 10 & 31u, h & 1023u, 5, 10); }
static float ref_f11(uint32_t v) { return ref_small(v >> 6, v & 63u, 5, 6); }
static float ref_f10(uint32_t v) { return ref_small(v >> 5, v & 31u, 5, 5); }

/* The largest code (of the positive finite ones, ascending in value) whose
 * value is <= x. */
static uint32_t floor_code(const float *values, uint32_t n, float x)
{
    uint32_t lo = 0, hi = n; /* values[lo] <= x < values[hi] */
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (values[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

static float half_values[0x7C00], f11_values[0x7C0], f10_values[0x3E0];

static uint16_t ref_to_half(float f)
{
    if (f != f)
        return 0x7E00; /* any NaN code is checked as NaN */
    uint16_t sign = signbit(f) ? 0x8000u : 0u;
    float a = fabsf(f);
    if (isinf(a))
        return sign | 0x7C00u;
    return (uint16_t)(sign | floor_code(half_values, 0x7C00, a));
}

static uint32_t ref_to_small(const float *values, uint32_t n, uint32_t inf, float f)
{
    if (f != f)
        return inf | 1u;
    if (f <= 0.0f)
        return 0;
    if (isinf(f))
        return inf;
    return floor_code(values, n, f);
}

static double ref_srgb_to_linear(int c)
{
    long double s = c / 255.0L;
    return (double)(s <= 0.04045L ? s / 12.92L : powl((s + 0.055L) / 1.055L, 2.4L));
}

static double ref_linear_to_srgb(double l)
{
    long double x = l;
    return (double)(x <= 0.0031308L ? x * 12.92L : 1.055L * powl(x, 1.0L / 2.4L) - 0.055L);
}

static uint32_t rng = 12345u;
static uint32_t next(void)
{
    rng = rng * 1664525u + 1013904223u;
    return rng;
}

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static int same(float a, float b) { return (a != a && b != b) || ru_fbits(a) == ru_fbits(b); }

static void test_small_floats(void)
{
    for (uint32_t c = 0; c < 0x7C00; c++)
        half_values[c] = ref_half((uint16_t)c);
    for (uint32_t c = 0; c < 0x7C0; c++)
        f11_values[c] = ref_f11(c);
    for (uint32_t c = 0; c < 0x3E0; c++)
        f10_values[c] = ref_f10(c);
    uint32_t bad = 0;
    for (uint32_t c = 0; c < 65536; c++)
        bad += !same(kres_half_to_float((uint16_t)c), ref_half((uint16_t)c));
    for (uint32_t c = 0; c < 2048; c++)
        bad += !same(kres_f11_to_float(c), ref_f11(c));
    for (uint32_t c = 0; c < 1024; c++)
        bad += !same(kres_f10_to_float(c), ref_f10(c));
    CHECK_EQ_INT(bad, 0);

    /* Encoding: every code, the midpoints, random floats. */
    uint32_t nbad = 0;
    for (uint32_t i = 0; i < 65536 * 2 + 200000; i++) {
        float f;
        if (i < 65536)
            f = kres_half_to_float((uint16_t)i);
        else if (i < 2 * 65536) {
            uint16_t c = (uint16_t)(i - 65536);
            f = (kres_half_to_float(c) + kres_half_to_float((uint16_t)(c + 1))) * 0.5f;
        } else
            f = from_bits(next());
        uint16_t h = kres_float_to_half(f), r = ref_to_half(f);
        int ok = f != f ? (h & 0x7C00u) == 0x7C00u && (h & 1023u) : h == r;
        uint32_t v11 = kres_float_to_f11(f), r11 = ref_to_small(f11_values, 0x7C0, 0x7C0, f);
        uint32_t v10 = kres_float_to_f10(f), r10 = ref_to_small(f10_values, 0x3E0, 0x3E0, f);
        if (f != f && !signbit(f)) {
            ok = ok && (v11 >> 6) == 31 && (v11 & 63u) && (v10 >> 5) == 31 && (v10 & 31u);
        } else if (f == f) {
            ok = ok && v11 == r11 && v10 == r10;
        }
        if (!ok && nbad++ < 5)
            fprintf(stderr, "    float %a (0x%08x): half 0x%04x (ref 0x%04x) f11 0x%03x (0x%03x) "
                            "f10 0x%03x (0x%03x)\n",
                    f, ru_fbits(f), h, r, v11, r11, v10, r10);
    }
    CHECK_EQ_INT(nbad, 0);
    /* The named cases. */
    CHECK_EQ_INT(kres_float_to_half(65520.0f), 0x7BFF);  /* overflow: largest finite */
    CHECK_EQ_INT(kres_float_to_half(-1e10f), 0xFBFF);
    CHECK_EQ_INT(kres_float_to_half(INFINITY), 0x7C00);
    CHECK_EQ_INT(kres_float_to_half(-0.0f), 0x8000);
    CHECK_EQ_INT(kres_float_to_half(0x1p-24f), 0x0001);   /* smallest denormal */
    CHECK_EQ_INT(kres_float_to_half(0x1.fp-25f), 0x0000); /* below it: toward zero */
    CHECK_EQ_INT(kres_float_to_f11(-3.0f), 0);
    CHECK_EQ_INT(kres_float_to_f11(-INFINITY), 0);
    CHECK_EQ_INT(kres_float_to_f11(1e9f), 0x7BF);          /* largest finite 65024 */
    CHECK_EQ_INT(kres_float_to_f10(1.0f), 15u << 5);
}

static void test_normalized(void)
{
    static const uint32_t bits[3] = {8, 10, 16};
    for (int b = 0; b < 3; b++) {
        uint32_t n = bits[b], max = (1u << n) - 1u, bad = 0;
        for (uint32_t c = 0; c <= max; c++) {
            float f = kres_unorm_to_float(c, n);
            bad += fabs(f - (double)c / max) > 0.5 * ldexp(1.0, -24) || kres_float_to_unorm(f, n) != c;
        }
        CHECK_EQ_INT(bad, 0);
        CHECK_EQ_INT(kres_float_to_unorm(NAN, n), 0);
        CHECK_EQ_INT(kres_float_to_unorm(-1.0f, n), 0);
        CHECK_EQ_INT(kres_float_to_unorm(7.0f, n), max);
        CHECK_EQ_INT(kres_float_to_unorm(INFINITY, n), max);
        /* 0.5 * max + 0.5, truncated */
        CHECK_EQ_INT(kres_float_to_unorm(0.5f, n), (uint32_t)(0.5 * max + 0.5));
    }
    uint32_t bad = 0;
    for (int c = -128; c <= 127; c++) {
        float f = kres_snorm8_to_float((int8_t)c);
        float want = c <= -127 ? -1.0f : (float)c / 127.0f;
        bad += f != want;
        if (c >= -127)
            bad += kres_float_to_snorm8(f) != c;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(kres_float_to_snorm8(NAN), 0);
    CHECK_EQ_INT(kres_float_to_snorm8(-5.0f), -127);
    CHECK_EQ_INT(kres_float_to_snorm8(0.5f), 64);   /* 63.5 + 0.5 */
    CHECK_EQ_INT(kres_float_to_snorm8(-0.5f), -64); /* away from zero */
}

static void test_srgb(void)
{
    uint32_t bad = 0;
    for (int c = 0; c < 256; c++) {
        float f = kres_srgb8_to_float((uint8_t)c);
        double want = ref_srgb_to_linear(c);
        bad += fabs(f - want) > (want == 0.0 ? 0.0 : ldexp(fabs(want), -23));
        bad += kres_float_to_srgb8(f) != c;
    }
    for (int i = 0; i <= 4096; i++) {
        double l = i / 4096.0, s = ref_linear_to_srgb(l) * 255.0;
        double frac = s - floor(s);
        if (fabs(frac - 0.5) < 1e-6)
            continue; /* a tie within the curve's rounding: either code */
        bad += kres_float_to_srgb8((float)l) != (uint8_t)(s + 0.5);
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(kres_float_to_srgb8(NAN), 0);
    CHECK_EQ_INT(kres_float_to_srgb8(-0.25f), 0);
    CHECK_EQ_INT(kres_float_to_srgb8(3.0f), 255);
}

/* ---- on a device ---- */

typedef struct fmt_case {
    kiln_format f;
    uint32_t size;
    const char *name;
} fmt_case;

static const fmt_case FORMATS[] = {
    {KILN_FORMAT_R8G8_UNORM, 2, "R8G8_UNORM"},
    {KILN_FORMAT_R8G8B8A8_SNORM, 4, "R8G8B8A8_SNORM"},
    {KILN_FORMAT_R8G8B8A8_UNORM_SRGB, 4, "R8G8B8A8_UNORM_SRGB"},
    {KILN_FORMAT_B8G8R8A8_UNORM_SRGB, 4, "B8G8R8A8_UNORM_SRGB"},
    {KILN_FORMAT_R10G10B10A2_UNORM, 4, "R10G10B10A2_UNORM"},
    {KILN_FORMAT_R11G11B10_FLOAT, 4, "R11G11B10_FLOAT"},
    {KILN_FORMAT_R16_UNORM, 2, "R16_UNORM"},
    {KILN_FORMAT_R16_FLOAT, 2, "R16_FLOAT"},
    {KILN_FORMAT_R16G16_FLOAT, 4, "R16G16_FLOAT"},
    {KILN_FORMAT_R16G16B16A16_FLOAT, 8, "R16G16B16A16_FLOAT"},
    {KILN_FORMAT_R16G16B16A16_UNORM, 8, "R16G16B16A16_UNORM"},
    {KILN_FORMAT_R8G8B8A8_UINT, 4, "R8G8B8A8_UINT"},
    {KILN_FORMAT_R8G8B8A8_SINT, 4, "R8G8B8A8_SINT"},
    {KILN_FORMAT_R16_UINT, 2, "R16_UINT"},
    {KILN_FORMAT_R32_UINT, 4, "R32_UINT"},
    {KILN_FORMAT_R32_SINT, 4, "R32_SINT"},
    {KILN_FORMAT_R32G32B32A32_UINT, 16, "R32G32B32A32_UINT"},
};

static int is_int(kiln_format f)
{
    return f >= KILN_FORMAT_R8G8B8A8_UINT && f <= KILN_FORMAT_R32G32B32A32_UINT;
}

/* FLOAT -> integer of `bits` bits as this file reads D3D10's ftou / ftoi:
 * NaN 0, toward zero (C's conversion of an in-range value), clamped. */
static uint32_t ref_ftou(float f, int bits)
{
    double top = ldexp(1.0, bits); /* 2^bits: the first value past the range */
    if (f != f || f < 1.0f)
        return 0;
    if ((double)f >= top)
        return (uint32_t)(top - 1.0);
    return (uint32_t)(uint64_t)f;
}

static int32_t ref_ftoi(float f, int bits)
{
    double half = ldexp(1.0, bits - 1);
    if (f != f)
        return 0;
    if ((double)f >= half)
        return (int32_t)(half - 1.0);
    if ((double)f < -half)
        return (int32_t)-half;
    return (int32_t)(int64_t)f;
}

static void put16(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v), put16(p + 2, v >> 16); }

static uint8_t ref_srgb8(float f)
{
    if (!(f > 0.0f))
        return 0;
    if (f >= 1.0f)
        return 255;
    return (uint8_t)(ref_linear_to_srgb(f) * 255.0 + 0.5);
}

/* One texel of `f` holding `c`, from the reference conversions. */
static void ref_encode(kiln_format f, const float c[4], uint8_t *p)
{
    switch (f) {
    case KILN_FORMAT_R8G8_UNORM:
        for (int i = 0; i < 2; i++)
            p[i] = (uint8_t)kres_float_to_unorm(c[i], 8); /* proven above on every code */
        break;
    case KILN_FORMAT_R8G8B8A8_SNORM:
        for (int i = 0; i < 4; i++)
            p[i] = (uint8_t)kres_float_to_snorm8(c[i]);
        break;
    case KILN_FORMAT_R8G8B8A8_UNORM_SRGB:
        for (int i = 0; i < 3; i++)
            p[i] = ref_srgb8(c[i]);
        p[3] = (uint8_t)kres_float_to_unorm(c[3], 8);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM_SRGB:
        p[0] = ref_srgb8(c[2]), p[1] = ref_srgb8(c[1]), p[2] = ref_srgb8(c[0]);
        p[3] = (uint8_t)kres_float_to_unorm(c[3], 8);
        break;
    case KILN_FORMAT_R10G10B10A2_UNORM:
        put32(p, kres_float_to_unorm(c[0], 10) | kres_float_to_unorm(c[1], 10) << 10 |
                     kres_float_to_unorm(c[2], 10) << 20 | kres_float_to_unorm(c[3], 2) << 30);
        break;
    case KILN_FORMAT_R11G11B10_FLOAT:
        put32(p, ref_to_small(f11_values, 0x7C0, 0x7C0, c[0]) |
                     ref_to_small(f11_values, 0x7C0, 0x7C0, c[1]) << 11 |
                     ref_to_small(f10_values, 0x3E0, 0x3E0, c[2]) << 22);
        break;
    case KILN_FORMAT_R16_UNORM:
        put16(p, kres_float_to_unorm(c[0], 16));
        break;
    case KILN_FORMAT_R16_FLOAT:
        put16(p, ref_to_half(c[0]));
        break;
    case KILN_FORMAT_R16G16_FLOAT:
        put16(p, ref_to_half(c[0])), put16(p + 2, ref_to_half(c[1]));
        break;
    case KILN_FORMAT_R16G16B16A16_FLOAT:
        for (int i = 0; i < 4; i++)
            put16(p + 2 * i, ref_to_half(c[i]));
        break;
    case KILN_FORMAT_R16G16B16A16_UNORM:
        for (int i = 0; i < 4; i++)
            put16(p + 2 * i, kres_float_to_unorm(c[i], 16));
        break;
    case KILN_FORMAT_R8G8B8A8_UINT:
        for (int i = 0; i < 4; i++)
            p[i] = (uint8_t)ref_ftou(c[i], 8);
        break;
    case KILN_FORMAT_R8G8B8A8_SINT:
        for (int i = 0; i < 4; i++)
            p[i] = (uint8_t)ref_ftoi(c[i], 8);
        break;
    case KILN_FORMAT_R16_UINT:
        put16(p, ref_ftou(c[0], 16));
        break;
    case KILN_FORMAT_R32_UINT:
        put32(p, ref_ftou(c[0], 32));
        break;
    case KILN_FORMAT_R32_SINT:
        put32(p, (uint32_t)ref_ftoi(c[0], 32));
        break;
    case KILN_FORMAT_R32G32B32A32_UINT:
        for (int i = 0; i < 4; i++)
            put32(p + 4 * i, ref_ftou(c[i], 32));
        break;
    default:
        break;
    }
}

#define W 8u
#define H 4u

static int all_texels(const uint8_t *px, const uint8_t *want, uint32_t size, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (memcmp(px + i * size, want, size))
            return 0;
    return 1;
}

/* Covers the W x H target with the constant color c (the RU_PS_CB
 * pipeline bound); the constant buffer is the caller's to destroy. */
static kiln_buffer draw_color(kiln_device *dev, kiln_context *ctx, const float c[4])
{
    kiln_buffer cb = ru_cbuffer(dev, c, 4);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    float v[6 * 4], *p = v;
    p = ru_vtx(p, W, H, 0, 0, 0.5f), p = ru_vtx(p, W, H, W, 0, 0.5f);
    p = ru_vtx(p, W, H, 0, H, 0.5f), p = ru_vtx(p, W, H, W, 0, 0.5f);
    p = ru_vtx(p, W, H, W, H, 0.5f), ru_vtx(p, W, H, 0, H, 0.5f);
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    return cb;
}

/* Clear and a constant-color draw write the reference bytes. */
static void test_writes(kiln_exec_mode mode)
{
    kiln_device *dev = th_device(mode, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    static const float colors[4][4] = {{0.25f, -0.5f, 0.75f, 1.5f},
                                       {0.1f, 0.2f, 0.3f, 0.4f},
                                       {70000.0f, 1e-6f, -0.0f, 0.6f},
                                       {200.7f, -3.9f, 1e10f, -70000.5f}};
    for (size_t k = 0; k < sizeof FORMATS / sizeof FORMATS[0]; k++) {
        const fmt_case *fc = &FORMATS[k];
        CHECK_EQ_INT(kiln_format_size(fc->f), fc->size);
        ru_tex rt = ru_rt(dev, W, H, fc->f);
        kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
        ru_bind_pipe(ctx, &pipe);
        for (int ci = 0; ci < 4; ci++) {
            uint8_t want[16] = {0};
            ref_encode(fc->f, colors[ci], want);
            CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, colors[ci]), KILN_OK);
            uint8_t *px = ru_read_bytes(dev, &rt);
            int ok = all_texels(px, want, fc->size, W * H);
            free(px);
            kiln_buffer cb = draw_color(dev, ctx, colors[(ci + 1) % 4]);
            ref_encode(fc->f, colors[(ci + 1) % 4], want);
            px = ru_read_bytes(dev, &rt);
            ok = ok && all_texels(px, want, fc->size, W * H);
            free(px);
            kiln_destroy_buffer(dev, cb);
            th_check(ok, fc->name, __FILE__, __LINE__);
        }
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
    }
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

/* (ONE, ONE) on sRGB targets adds linear values. */
static void test_srgb_blend(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    kiln_blend_state add = ru_bs_add(dev);
    for (int bgra = 0; bgra < 2; bgra++) {
        kiln_format f = bgra ? KILN_FORMAT_B8G8R8A8_UNORM_SRGB : KILN_FORMAT_R8G8B8A8_UNORM_SRGB;
        ru_tex rt = ru_rt(dev, W, H, f);
        kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
        ru_bind_pipe(ctx, &pipe);
        const float dst[4] = {0.2f, 0.05f, 0.6f, 0.5f}, src[4] = {0.1f, 0.3f, 0.5f, 0.25f};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, dst), KILN_OK);
        kiln_buffer cb = ru_cbuffer(dev, src, 4);
        CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
        float v[3 * 4], *p = v;
        p = ru_vtx(p, W, H, 0, 0, 0.5f), p = ru_vtx(p, W, H, 2 * W, 0, 0.5f);
        ru_vtx(p, W, H, 0, 2 * H, 0.5f);
        ru_draw(dev, ctx, v, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
        /* The stored destination, decoded, plus the source, encoded. */
        uint8_t stored[4];
        ref_encode(f, dst, stored);
        int r = bgra ? 2 : 0, b = bgra ? 0 : 2;
        float lin[4] = {(float)ref_srgb_to_linear(stored[r]) + src[0],
                        (float)ref_srgb_to_linear(stored[1]) + src[1],
                        (float)ref_srgb_to_linear(stored[b]) + src[2],
                        stored[3] / 255.0f + src[3]};
        uint8_t want[4];
        ref_encode(f, lin, want);
        uint8_t *px = ru_read_bytes(dev, &rt);
        th_check(all_texels(px, want, 4, W * H), bgra ? "BGRA sRGB blend" : "RGBA sRGB blend",
                 __FILE__, __LINE__);
        if (!all_texels(px, want, 4, W * H))
            fprintf(stderr, "    got %u %u %u %u, want %u %u %u %u\n", px[0], px[1], px[2], px[3],
                    want[0], want[1], want[2], want[3]);
        free(px);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
        kiln_destroy_buffer(dev, cb);
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
    }
    kiln_destroy_blend_state(dev, add);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

/* Sampling: u, v from varying 0. */
static void ps_sample(kiln_ps_args *a)
{
    float rgba[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1), rgba);
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = rgba[c * KILN_PS_BLOCK + i];
}

/* Load: each pixel reads its own texel of mip 0 (and GetDimensions must
 * report the W x H view of one mip, or the pixel reads -1). */
static void ps_load(kiln_ps_args *a)
{
    int32_t x[KILN_PS_BLOCK], y[KILN_PS_BLOCK], mip[KILN_PS_BLOCK];
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        x[i] = a->x + i % 4;
        y[i] = a->y + i / 4;
        mip[i] = 0;
    }
    kiln_ps_load(a, 0, x, y, mip, KILN_PS_COLOR(a, 0, 0));
    uint32_t w, h, n;
    kiln_ps_get_dimensions(a, 0, 0, &w, &h, &n);
    if (w != W || h != H || n != 1)
        for (int i = 0; i < 4 * KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, 0)[i] = -1.0f;
}

static kiln_ps_fn g_ps = ps_sample;

/* Draws the W x H target with u, v running over [u0, u1] x [v0, v1]
 * through g_ps. */
static float *sample_into(kiln_device *dev, kiln_context *ctx, kiln_srv srv, kiln_filter filter,
                          float u0, float v0, float u1, float v1)
{
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    ru_pipe pipe = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    kiln_pixel_shader ps;
    kiln_pixel_shader_desc pd = {.fn = g_ps, .num_outputs = 1, .num_varyings = 1};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    ru_bind_pipe(ctx, &pipe);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    kiln_sampler_desc sd = {filter, filter, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP,
                            0.0f, 0, 0.0f, 0.0f, {0, 0, 0, 0}, KILN_COMPARE_DEFAULT, 0, KILN_ADDRESS_DEFAULT};
    kiln_sampler smp;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);
    float v[6 * 8], *p = v;
    const float corner[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1}};
    for (int k = 0; k < 6; k++) {
        p = ru_vtx(p, W, H, corner[k][0] * W, corner[k][1] * H, 0.5f);
        *p++ = u0 + (u1 - u0) * corner[k][0];
        *p++ = v0 + (v1 - v0) * corner[k][1];
        *p++ = 0.0f;
        *p++ = 0.0f;
    }
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *out = ru_read_f32(dev, &rt);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &none), KILN_OK);
    kiln_destroy_sampler(dev, smp);
    kiln_destroy_pixel_shader(dev, ps);
    ru_free_pipe(dev, &pipe);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
    return out;
}

static void ref_decode(kiln_format f, const uint8_t *p, float o[4])
{
    uint32_t x = p[0] | (uint32_t)p[1] << 8 | (f == KILN_FORMAT_R8G8_UNORM || f == KILN_FORMAT_R16_UNORM ||
                                                       f == KILN_FORMAT_R16_FLOAT || f == KILN_FORMAT_R16_UINT
                                                   ? 0u
                                                   : (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
    o[0] = o[1] = o[2] = 0.0f;
    o[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8_UNORM: o[0] = p[0] / 255.0f, o[1] = p[1] / 255.0f; break;
    case KILN_FORMAT_R8G8B8A8_SNORM:
        for (int c = 0; c < 4; c++)
            o[c] = (int8_t)p[c] == -128 ? -1.0f : (int8_t)p[c] / 127.0f;
        break;
    case KILN_FORMAT_R8G8B8A8_UNORM_SRGB:
    case KILN_FORMAT_B8G8R8A8_UNORM_SRGB: {
        int bgra = f == KILN_FORMAT_B8G8R8A8_UNORM_SRGB;
        o[0] = (float)ref_srgb_to_linear(p[bgra ? 2 : 0]);
        o[1] = (float)ref_srgb_to_linear(p[1]);
        o[2] = (float)ref_srgb_to_linear(p[bgra ? 0 : 2]);
        o[3] = p[3] / 255.0f;
        break;
    }
    case KILN_FORMAT_R10G10B10A2_UNORM:
        o[0] = (x & 1023u) / 1023.0f, o[1] = (x >> 10 & 1023u) / 1023.0f;
        o[2] = (x >> 20 & 1023u) / 1023.0f, o[3] = (x >> 30) / 3.0f;
        break;
    case KILN_FORMAT_R11G11B10_FLOAT:
        o[0] = ref_f11(x & 2047u), o[1] = ref_f11(x >> 11 & 2047u), o[2] = ref_f10(x >> 22);
        break;
    case KILN_FORMAT_R16_UNORM: o[0] = (x & 0xFFFFu) / 65535.0f; break;
    case KILN_FORMAT_R16_FLOAT: o[0] = ref_half((uint16_t)x); break;
    case KILN_FORMAT_R16G16_FLOAT: o[0] = ref_half((uint16_t)x), o[1] = ref_half((uint16_t)(x >> 16)); break;
    case KILN_FORMAT_R16G16B16A16_FLOAT:
        for (int c = 0; c < 4; c++)
            o[c] = ref_half((uint16_t)(p[2 * c] | p[2 * c + 1] << 8));
        break;
    case KILN_FORMAT_R16G16B16A16_UNORM:
        for (int c = 0; c < 4; c++)
            o[c] = (p[2 * c] | p[2 * c + 1] << 8) / 65535.0f;
        break;
    case KILN_FORMAT_R8G8B8A8_UINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)p[c];
        break;
    case KILN_FORMAT_R8G8B8A8_SINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)(p[c] >= 128 ? (int)p[c] - 256 : (int)p[c]);
        break;
    case KILN_FORMAT_R16_UINT: o[0] = (float)(x & 0xFFFFu); break;
    case KILN_FORMAT_R32_UINT: o[0] = (float)x; break;
    case KILN_FORMAT_R32_SINT: o[0] = (float)(x >= 0x80000000u ? (double)x - 4294967296.0 : (double)x); break;
    case KILN_FORMAT_R32G32B32A32_UINT:
        for (int c = 0; c < 4; c++)
            o[c] = (float)((uint32_t)p[4 * c] | (uint32_t)p[4 * c + 1] << 8 |
                           (uint32_t)p[4 * c + 2] << 16 | (uint32_t)p[4 * c + 3] << 24);
        break;
    default:
        break;
    }
}

static int close_to(float a, float b)
{
    return (a != a && b != b) || a == b || fabsf(a - b) <= 1e-6f * (1.0f + fabsf(b));
}

/* Point sampling at texel centers, and Load (kiln_ps_load) at each
 * pixel's texel, return every texel's decode. */
static void test_sampling(kiln_ps_fn fn)
{
    g_ps = fn;
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    for (size_t k = 0; k < sizeof FORMATS / sizeof FORMATS[0]; k++) {
        const fmt_case *fc = &FORMATS[k];
        uint8_t texels[W * H * 16];
        for (uint32_t i = 0; i < W * H * fc->size; i++)
            texels[i] = (uint8_t)next();
        if (fc->f == KILN_FORMAT_R11G11B10_FLOAT || fc->f == KILN_FORMAT_R16_FLOAT ||
            fc->f == KILN_FORMAT_R16G16_FLOAT || fc->f == KILN_FORMAT_R16G16B16A16_FLOAT)
            for (uint32_t i = 0; i < W * H * fc->size; i += 2)
                texels[i + 1] &= 0x3B; /* finite, moderate exponents */
        kiln_texture2d_desc td = {W, H, 1, 1, fc->f, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
        kiln_subresource_data init = {texels, W * fc->size};
        kiln_texture tex;
        kiln_srv srv;
        CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
        CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
        float *out = sample_into(dev, ctx, srv, KILN_FILTER_POINT, 0, 0, 1, 1);
        int ok = 1;
        for (uint32_t i = 0; i < W * H; i++) {
            float want[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (!is_int(fc->f) || fn == ps_load) /* D3D10 samples no integers: zeros */
                ref_decode(fc->f, texels + i * fc->size, want);
            for (int c = 0; c < 4; c++)
                ok = ok && close_to(out[4 * i + c], want[c]);
        }
        th_check(ok, fc->name, __FILE__, __LINE__);
        if (!ok)
            fprintf(stderr, "    (%s)\n", fn == ps_load ? "kiln_ps_load" : "kiln_ps_sample");
        free(out);
        kiln_destroy_srv(dev, srv);
        kiln_destroy_texture(dev, tex);
    }
    kiln_device_destroy(dev);
}

/* Bilinear filtering and mip generation of sRGB work on linear values. */
static void test_srgb_filtering(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    /* A 2x2 texture (and its 1x1 mip): dark and light columns. */
    uint8_t texels[2 * 2 * 4] = {10, 10, 10, 255, 240, 240, 240, 255, 10, 10, 10, 255, 240, 240, 240, 255};
    kiln_texture2d_desc td = {2, 2, 2, 1, KILN_FORMAT_R8G8B8A8_UNORM_SRGB, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET, 0, 0};
    kiln_subresource_data init[2] = {{texels, 8}, {texels, 4}};
    kiln_texture tex;
    kiln_srv srv;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    /* u = 0.5 everywhere: halfway between the columns' centers. */
    float *out = sample_into(dev, ctx, srv, KILN_FILTER_LINEAR, 0.5f, 0.25f, 0.5f, 0.75f);
    float want = (float)((ref_srgb_to_linear(10) + ref_srgb_to_linear(240)) * 0.5);
    th_check(close_to(out[0], want) && close_to(out[3], 1.0f), "bilinear sRGB is linear", __FILE__,
             __LINE__);
    free(out);
    CHECK_RESULT(kiln_generate_mips(ctx, srv), KILN_OK);
    uint8_t mip[4] = {0};
    ru_read(dev, tex, 1, mip);
    float lin[4] = {want, want, want, 1.0f};
    uint8_t wantb[4];
    ref_encode(KILN_FORMAT_R8G8B8A8_UNORM_SRGB, lin, wantb);
    CHECK(!memcmp(mip, wantb, 4));
    if (memcmp(mip, wantb, 4))
        fprintf(stderr, "    mip %u %u %u %u, want %u %u %u %u\n", mip[0], mip[1], mip[2], mip[3],
                wantb[0], wantb[1], wantb[2], wantb[3]);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    kiln_device_destroy(dev);
}

/* D16_UNORM: depth quantized to 16-bit UNORM, tested and written as such;
 * a stencil-only clear changes nothing; it samples as R16_UNORM. */
static void d16_rect(kiln_device *dev, kiln_context *ctx, float z)
{
    float v[6 * 4], *p = v;
    p = ru_vtx(p, W, H, 0, 0, z), p = ru_vtx(p, W, H, W, 0, z);
    p = ru_vtx(p, W, H, 0, H, z), p = ru_vtx(p, W, H, W, 0, z);
    p = ru_vtx(p, W, H, W, H, z), ru_vtx(p, W, H, 0, H, z);
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

static int all16(kiln_device *dev, kiln_texture tex, uint16_t want)
{
    uint16_t px[W * H];
    ru_read(dev, tex, 0, px);
    for (uint32_t i = 0; i < W * H; i++)
        if (px[i] != want)
            return 0;
    return 1;
}

static void test_d16(kiln_exec_mode mode)
{
    kiln_device *dev = th_device(mode, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_texture2d_desc dd = {W, H, 1, 1, KILN_FORMAT_D16_UNORM, KILN_USAGE_DEFAULT,
                              KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture ds;
    kiln_dsv dsv;
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &ds), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, ds, NULL, &dsv), KILN_OK);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, dsv), KILN_OK);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_bind_pipe(ctx, &pipe);
    const float red[4] = {1, 0, 0, 1};
    kiln_buffer cb = ru_cbuffer(dev, red, 4);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    kiln_depth_stencil_state less = ru_dss(dev, (kiln_depth_stencil_desc){
        .depth_func = KILN_COMPARE_LESS, .stencil_enable = 1});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);

    CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 0.5f, 0), KILN_OK);
    CHECK(all16(dev, ds, 32768)); /* 0.5 * 65535 + 0.5, truncated */
    CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_STENCIL, 0.0f, 7), KILN_OK);
    CHECK(all16(dev, ds, 32768));
    d16_rect(dev, ctx, 0.25f); /* passes (the stencil test has no bits: passes too) */
    CHECK(all16(dev, ds, 16384));
    const float black[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
    d16_rect(dev, ctx, 0.2500001f); /* the same 16-bit depth: LESS fails */
    d16_rect(dev, ctx, 0.75f);
    uint8_t *px = ru_read_bytes(dev, &rt);
    int dark = 1;
    for (uint32_t i = 0; i < W * H; i++)
        dark = dark && px[4 * i] == 0;
    free(px);
    CHECK(dark);
    CHECK(all16(dev, ds, 16384));
    d16_rect(dev, ctx, 0.1f);
    CHECK(all16(dev, ds, (uint16_t)(0.1f * 65535.0f + 0.5f)));

    /* Sampled: the stored value as UNORM. */
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    kiln_srv srv;
    CHECK_RESULT(kiln_create_srv(dev, ds, NULL, &srv), KILN_OK);
    float *out = sample_into(dev, ctx, srv, KILN_FILTER_POINT, 0, 0, 1, 1);
    CHECK(out[0] == (uint16_t)(0.1f * 65535.0f + 0.5f) / 65535.0f && out[3] == 1.0f);
    free(out);

    kiln_destroy_srv(dev, srv);
    kiln_destroy_depth_stencil_state(dev, less);
    kiln_destroy_buffer(dev, cb);
    ru_free_pipe(dev, &pipe);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_dsv(dev, dsv);
    kiln_destroy_texture(dev, ds);
    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
}

/* kres_float_to_uint / _sint (clears and writes into integer targets)
 * against ref_ftou / ref_ftoi on the edges of every width and 200,000
 * random bit patterns (NaN, INF, denormals and huge values included). */
static void test_integer_conversions(void)
{
    static const int widths[3] = {8, 16, 32};
    static const float edges[] = {0.0f, -0.0f, 0.5f, 0.999f, 1.0f, -0.999f, -1.0f, 126.9f, 127.0f,
                                  127.5f, 128.0f, -128.0f, -128.9f, -129.0f, 254.99f, 255.0f,
                                  255.5f, 256.0f, 32767.9f, 65535.0f, 65535.5f, 65536.0f,
                                  16777216.0f, 16777218.0f, 2147483520.0f, 2147483648.0f,
                                  -2147483648.0f, -2147483904.0f, 4294967040.0f, 4294967296.0f,
                                  1e30f, -1e30f, INFINITY, -INFINITY, NAN, 1e-40f, -1e-40f};
    int bad = 0, n = 0;
    for (int w = 0; w < 3; w++) {
        for (size_t k = 0; k < sizeof edges / sizeof edges[0] + 200000 / 3; k++) {
            float f = k < sizeof edges / sizeof edges[0] ? edges[k] : from_bits(next());
            uint32_t bits = (uint32_t)widths[w];
            bad += kres_float_to_uint(f, bits) != ref_ftou(f, widths[w]);
            bad += kres_float_to_sint(f, bits) != ref_ftoi(f, widths[w]);
            n += 2;
        }
    }
    CHECK_EQ_INT(bad, 0);
    printf("float -> 8/16/32-bit UINT and SINT: %d conversions, %d differ\n", n, bad);
}

/* Blending is ignored on integer targets (ONE, ONE over a cleared target
 * writes the source alone), and generate_mips refuses integer formats. */
static void test_integer_rules(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UINT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    ru_bind_pipe(ctx, &pipe);
    kiln_blend_state add = ru_bs_add(dev);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
    const float clear[4] = {10.0f, 20.0f, 30.0f, 40.0f}, src[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    kiln_buffer cb = draw_color(dev, ctx, src);
    uint8_t *px = ru_read_bytes(dev, &rt);
    const uint8_t want[4] = {1, 2, 3, 4};
    th_check(all_texels(px, want, 4, W * H), "integer target: blending ignored", __FILE__, __LINE__);
    free(px);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_blend_state(dev, add);

    kiln_texture2d_desc td = {8, 8, 0, 1, KILN_FORMAT_R32_UINT, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET, 0, 0};
    kiln_texture tex;
    kiln_srv srv;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    CHECK_FAILS(kiln_generate_mips(ctx, srv), KILN_E_INVALID_ARG, KILN_LOG_MIPS_FORMAT);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

/* D32_FLOAT_S8X24_UINT against D24_UNORM_S8_UINT: 300 random full-target
 * and partial rects, each with a random depth-stencil state (depth
 * functions, writes, stencil functions, the three ops per face, masks,
 * reference) and depths on a 1/16 grid (no two closer than D24 resolves),
 * drawn front- or back-facing, with clears of depth alone or stencil
 * alone in between: the color image and every stencil byte must be the
 * same for both formats, each D32S8 depth one of the values drawn or
 * cleared, and bytes 5..7 of every texel untouched. */
static void test_d32s8(kiln_exec_mode mode)
{
    enum { DW = 16, DH = 8, NDRAW = 300 };
    kiln_device *dev = th_device(mode, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    static const kiln_format dfmt[2] = {KILN_FORMAT_D24_UNORM_S8_UINT,
                                        KILN_FORMAT_D32_FLOAT_S8X24_UINT};
    uint8_t *color[2], *depth[2];
    for (int k = 0; k < 2; k++) {
        uint32_t seed = 0xd32u;
        ru_tex rt = ru_rt(dev, DW, DH, KILN_FORMAT_R8G8B8A8_UNORM);
        /* D32S8 starts with bytes 5..7 marked: no operation may write them */
        static uint8_t init[DW * DH * 8];
        for (int i = 0; i < DW * DH; i++)
            init[8 * i + 5] = 0xa5, init[8 * i + 6] = 0x5a, init[8 * i + 7] = (uint8_t)i;
        ru_tex ds;
        memset(&ds, 0, sizeof ds);
        kiln_texture2d_desc dd = {DW, DH, 1, 1, dfmt[k], KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0, 0};
        kiln_subresource_data dinit = {init, DW * 8};
        CHECK_RESULT(kiln_create_texture2d(dev, &dd, k == 1 ? &dinit : NULL, &ds.tex), KILN_OK);
        CHECK_RESULT(kiln_create_dsv(dev, ds.tex, NULL, &ds.dsv), KILN_OK);
        kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
        ru_bind_pipe(ctx, &pipe);
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
        const float black[4] = {0, 0, 0, 0};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
        CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 0.5f, 0x40),
                     KILN_OK);
        for (int n = 0; n < NDRAW; n++) {
            seed = seed * 1664525u + 1013904223u;
            uint32_t r = seed;
            if ((r & 31u) == 0) {
                float z = (float)((r >> 8) & 15u) / 16.0f;
                CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, (r >> 5 & 1) ? KILN_CLEAR_DEPTH : KILN_CLEAR_STENCIL, z,
                                            (uint8_t)(r >> 12)),
                             KILN_OK);
                continue;
            }
            kiln_depth_stencil_desc d = {0};
            d.depth_func = (kiln_compare)(1 + (r >> 3) % 8);
            d.depth_write_disable = r >> 6 & 1;
            d.depth_disable = (r >> 7 & 7) == 0;
            d.stencil_enable = (r >> 10 & 3) != 0;
            seed = seed * 1664525u + 1013904223u;
            uint32_t q = seed;
            kiln_stencil_face f[2];
            for (int fc = 0; fc < 2; fc++) {
                f[fc].fail_op = (kiln_stencil_op)(1 + (q >> (fc * 12)) % 8);
                f[fc].depth_fail_op = (kiln_stencil_op)(1 + (q >> (fc * 12 + 3)) % 8);
                f[fc].pass_op = (kiln_stencil_op)(1 + (q >> (fc * 12 + 6)) % 8);
                f[fc].func = (kiln_compare)(1 + (q >> (fc * 12 + 9)) % 8);
            }
            d.front = f[0];
            d.back = f[1];
            d.stencil_read_mask = (r >> 12 & 1) ? 0xf7 : KILN_MASK_DEFAULT;
            d.stencil_write_mask = (r >> 13 & 1) ? 0x7e : KILN_MASK_DEFAULT;
            kiln_depth_stencil_state dss = ru_dss(dev, d);
            CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, (r >> 14) & 0xff), KILN_OK);
            const float c[4] = {(float)(n % 7) / 7.0f, (float)(n % 5) / 5.0f, (float)(n % 3) / 3.0f, 1.0f};
            kiln_buffer cb = ru_cbuffer(dev, c, 4);
            CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
            float z = (float)(1 + (r >> 22) % 15) / 16.0f;
            int x0 = (int)(q >> 24) % 8, y0 = (int)(q >> 27) % 4, ccw = q >> 31;
            float v[6 * 4], *p = v;
            /* clockwise (front) or the reverse (back) */
            p = ru_vtx(p, DW, DH, x0, y0, z), p = ru_vtx(p, DW, DH, ccw ? x0 : DW, ccw ? DH : y0, z);
            p = ru_vtx(p, DW, DH, ccw ? DW : x0, ccw ? y0 : DH, z), p = ru_vtx(p, DW, DH, DW, y0, z);
            p = ru_vtx(p, DW, DH, ccw ? x0 : DW, DH, z), ru_vtx(p, DW, DH, ccw ? DW : x0, ccw ? DH : DH, z);
            ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
            kiln_destroy_buffer(dev, cb);
            kiln_destroy_depth_stencil_state(dev, dss);
        }
        color[k] = ru_read_bytes(dev, &rt);
        depth[k] = malloc((size_t)DW * DH * 8);
        ru_read(dev, ds.tex, 0, depth[k]);
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
        ru_free_tex(dev, &ds);
    }
    th_check(memcmp(color[0], color[1], (size_t)DW * DH * 4) == 0, "D32S8: the image of D24S8",
             __FILE__, __LINE__);
    int bad_st = 0, bad_z = 0, bad_x = 0, distinct = 0;
    uint32_t seen = 0;
    for (int i = 0; i < DW * DH; i++) {
        uint32_t w24;
        memcpy(&w24, depth[0] + 4 * i, 4);
        const uint8_t *t = depth[1] + 8 * i;
        bad_st += (w24 >> 24) != t[4];
        float z;
        memcpy(&z, t, 4);
        float k16 = z * 16.0f;
        bad_z += !(k16 >= 0.0f && k16 <= 16.0f && k16 == (float)(int)k16);
        if (k16 == (float)(int)k16 && k16 >= 0.0f && k16 < 32.0f && !(seen >> (int)k16 & 1)) {
            seen |= 1u << (int)k16;
            distinct++;
        }
        bad_x += t[5] != 0xa5 || t[6] != 0x5a || t[7] != (uint8_t)i;
    }
    CHECK_EQ_INT(bad_st, 0);
    CHECK_EQ_INT(bad_z, 0);
    CHECK_EQ_INT(bad_x, 0);
    CHECK(distinct > 2); /* the depths were really written */
    for (int k = 0; k < 2; k++)
        free(color[k]), free(depth[k]);
    /* not a shader resource (no typeless formats), and osmesa refuses it */
    kiln_texture2d_desc td = {4, 4, 1, 1, KILN_FORMAT_D32_FLOAT_S8X24_UINT, KILN_USAGE_DEFAULT,
                              KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture tex;
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_UNSUPPORTED, KILN_LOG_FORMAT_BIND_MISMATCH);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

static void test_osmesa_refuses(void)
{
#ifdef KILN_HAVE_GL
    kiln_device *dev = th_osmesa_device();
    if (!dev)
        return; /* no GL provider on this machine: nothing to refuse */
    kiln_texture2d_desc td = {4, 4, 1, 1, KILN_FORMAT_R16G16B16A16_FLOAT, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture tex;
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    td.format = KILN_FORMAT_R32_UINT;
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    td.format = KILN_FORMAT_D32_FLOAT_S8X24_UINT;
    td.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    kiln_device_destroy(dev);
#endif
}

int main(void)
{
    test_small_floats();
    test_normalized();
    test_srgb();
    test_writes(KILN_EXEC_ASYNC);
    test_writes(KILN_EXEC_SERIAL);
    test_srgb_blend();
    test_sampling(ps_sample);
    test_sampling(ps_load);
    g_ps = ps_sample;
    test_srgb_filtering();
    test_d16(KILN_EXEC_ASYNC);
    test_d16(KILN_EXEC_SERIAL);
    test_integer_conversions();
    test_integer_rules();
    test_d32s8(KILN_EXEC_ASYNC);
    test_d32s8(KILN_EXEC_SERIAL);
    test_osmesa_refuses();
    return th_exit();
}
