/*
 * Texture sampling (kiln_ps_sample, kr_texel_fetch) and generate_mips'
 * box filter, against values worked out by hand or by a one-line scalar
 * formula here. Textures are built directly over memory this test owns
 * (rows padded past their width, so row_pitch is honoured).
 */
#include "harness.h"
#include "raster/effects.h"
#include "raster/fused.h"
#include "raster/raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_NEAR(got, want, tol)                                                                 \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        int ok_ = fabs(g_ - w_) <= (tol);                                                          \
        th_check(ok_, #got " ~= " #want, __FILE__, __LINE__);                                      \
        if (!ok_)                                                                                  \
            fprintf(stderr, "    got %.9g, expected %.9g\n", g_, w_);                              \
    } while (0)

/* ---- a texture over our own memory ---- */

typedef struct tex {
    kr_texture t;
    kres_subresource subs[64];
    uint8_t *mem;
    uint32_t bpp;
} tex;

static void tex_init(tex *x, kiln_format f, uint32_t w, uint32_t h, uint32_t mips, uint32_t slices)
{
    memset(x, 0, sizeof *x);
    x->bpp = kiln_format_size(f);
    size_t off = 0;
    for (uint32_t s = 0; s < slices; s++)
        for (uint32_t m = 0; m < mips; m++) {
            kres_subresource *sub = &x->subs[m + s * mips];
            sub->width = w >> m ? w >> m : 1;
            sub->height = h >> m ? h >> m : 1;
            sub->row_pitch = sub->width * x->bpp + 8; /* padded rows */
            sub->size = (size_t)sub->row_pitch * sub->height;
            sub->offset = off;
            off += sub->size + 4;
        }
    x->mem = calloc(1, off);
    x->t.data = x->mem;
    x->t.subs = x->subs;
    x->t.format = f;
    x->t.res_mip_levels = mips;
    x->t.first_mip = 0;
    x->t.num_mips = mips;
    x->t.slice = 0;
}

static void tex_free(tex *x) { free(x->mem); }

static uint8_t *texel(tex *x, uint32_t mip, uint32_t slice, uint32_t px, uint32_t py)
{
    const kres_subresource *s = &x->subs[mip + slice * x->t.res_mip_levels];
    return x->mem + s->offset + (size_t)py * s->row_pitch + (size_t)px * x->bpp;
}

static void put_f(tex *x, uint32_t mip, uint32_t slice, uint32_t px, uint32_t py, const float *v,
                  int n)
{
    memcpy(texel(x, mip, slice, px, py), v, sizeof(float) * (size_t)n);
}

static void fill_level_f(tex *x, uint32_t mip, float value)
{
    const kres_subresource *s = &x->subs[mip];
    for (uint32_t y = 0; y < s->height; y++)
        for (uint32_t i = 0; i < s->width; i++)
            put_f(x, mip, 0, i, y, &value, 1);
}

/* Samples slot 0 of `x` with `samp` (NULL: default sampler). */
static void sample(const tex *x, const kd_sampler *samp, const float *u, const float *v, float *out)
{
    struct kiln_ps_textures pt;
    memset(&pt, 0, sizeof pt);
    pt.tex[0] = x->t;
    pt.samp[0] = samp;
    kiln_ps_args a;
    memset(&a, 0, sizeof a);
    a.mask = 0; /* helper pixels must be computed too */
    a.textures = &pt;
    kiln_ps_sample(&a, 0, 0, u, v, out);
}

static kd_sampler make_sampler(kiln_filter min, kiln_filter mag, kiln_filter mip, kiln_address au,
                               kiln_address av)
{
    kiln_sampler_desc d = {0};
    d.min_filter = min;
    d.mag_filter = mag;
    d.mip_filter = mip;
    d.address_u = au;
    d.address_v = av;
    d.border_color[0] = 0.25f;
    d.border_color[1] = 0.5f;
    d.border_color[2] = 0.75f;
    d.border_color[3] = 0.125f;
    kd_sampler s;
    kd_sampler_resolve(&d, &s);
    return s;
}

#define R(o, i) (o)[0 * 16 + (i)]
#define G(o, i) (o)[1 * 16 + (i)]
#define B(o, i) (o)[2 * 16 + (i)]
#define A(o, i) (o)[3 * 16 + (i)]

/* ---- sampler defaults ---- */

static void test_sampler_resolve_defaults(void)
{
    kd_sampler s;
    kd_sampler_resolve(&(kiln_sampler_desc){0}, &s);
    CHECK(s.min_filter == KILN_FILTER_LINEAR && s.mag_filter == KILN_FILTER_LINEAR &&
          s.mip_filter == KILN_FILTER_LINEAR);
    CHECK(s.address_u == KILN_ADDRESS_CLAMP && s.address_v == KILN_ADDRESS_CLAMP);
    CHECK(s.min_lod == 0.0f && s.max_lod == 1000.0f && s.mip_lod_bias == 0.0f);

    kiln_sampler_desc d = {0};
    d.min_filter = KILN_FILTER_POINT;
    d.address_u = KILN_ADDRESS_WRAP;
    d.address_v = KILN_ADDRESS_BORDER;
    d.mip_lod_bias = -1.5f;
    d.lod_clamp_enable = 1;
    d.min_lod = 1.0f;
    d.max_lod = 3.0f;
    d.border_color[2] = 0.5f;
    kd_sampler_resolve(&d, &s);
    CHECK(s.min_filter == KILN_FILTER_POINT && s.mag_filter == KILN_FILTER_LINEAR);
    CHECK(s.address_u == KILN_ADDRESS_WRAP && s.address_v == KILN_ADDRESS_BORDER);
    CHECK(s.min_lod == 1.0f && s.max_lod == 3.0f && s.mip_lod_bias == -1.5f);
    CHECK(s.border[2] == 0.5f && s.border[0] == 0.0f);

    d.lod_clamp_enable = 0; /* min/max ignored */
    kd_sampler_resolve(&d, &s);
    CHECK(s.min_lod == 0.0f && s.max_lod == 1000.0f);
}

/* ---- point sampling and the address modes ---- */

/* 16 coordinates on an axis of 4 texels, and the texel each address mode
 * reads there (-1: the border color), worked out by hand. */
static const float axis_coord[16] = {0.125f, 0.25f, 0.99f, 1.0f, 1.1f, 1.3f,   -0.1f, -0.3f,
                                     2.1f,   -1.1f, 1.75f, 0.0f, 0.5f, -0.25f, 3.0f,  -2.0f};
static const int axis_expect[4][16] = {
    /* WRAP */ {0, 1, 3, 0, 0, 1, 3, 2, 0, 3, 3, 0, 2, 3, 0, 0},
    /* MIRROR */ {0, 1, 3, 3, 3, 2, 0, 1, 0, 3, 0, 0, 2, 0, 3, 0},
    /* CLAMP */ {0, 1, 3, 3, 3, 3, 0, 0, 3, 0, 3, 0, 2, 0, 3, 0},
    /* BORDER */ {0, 1, 3, -1, -1, -1, -1, -1, -1, -1, -1, 0, 2, -1, -1, -1},
};

static void check_point_axis(int axis_v)
{
    /* texel (x, y) holds (x, y): R32G32_FLOAT reads (x, y, 0, 1) */
    tex x;
    uint32_t w = axis_v ? 2 : 4, h = axis_v ? 4 : 2;
    tex_init(&x, KILN_FORMAT_R32G32_FLOAT, w, h, 1, 1);
    for (uint32_t py = 0; py < h; py++)
        for (uint32_t px = 0; px < w; px++)
            put_f(&x, 0, 0, px, py, (float[]){(float)px, (float)py}, 2);

    for (int m = 0; m < 4; m++) {
        kiln_address mode = (kiln_address)(KILN_ADDRESS_WRAP + m);
        kd_sampler s =
            make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT,
                         axis_v ? KILN_ADDRESS_CLAMP : mode, axis_v ? mode : KILN_ADDRESS_CLAMP);
        float u[16], v[16], o[64];
        for (int i = 0; i < 16; i++) {
            u[i] = axis_v ? 0.25f : axis_coord[i]; /* other axis: texel 0 */
            v[i] = axis_v ? axis_coord[i] : 0.25f;
        }
        sample(&x, &s, u, v, o);
        for (int i = 0; i < 16; i++) {
            int e = axis_expect[m][i];
            if (e < 0) {
                CHECK(R(o, i) == 0.25f && G(o, i) == 0.5f && B(o, i) == 0.75f && A(o, i) == 0.125f);
            } else {
                float ex = axis_v ? 0.0f : (float)e, ey = axis_v ? (float)e : 0.0f;
                CHECK(R(o, i) == ex && G(o, i) == ey && B(o, i) == 0.0f && A(o, i) == 1.0f);
                if (!(R(o, i) == ex && G(o, i) == ey))
                    fprintf(stderr, "    mode %d axis %c pixel %d coord %g: got (%g, %g)\n", mode,
                            axis_v ? 'v' : 'u', i, axis_coord[i], R(o, i), G(o, i));
            }
        }
    }
    tex_free(&x);
}

static void test_point_address_modes(void)
{
    check_point_axis(0);
    check_point_axis(1);
}

/* ---- bilinear ---- */

static uint8_t tv(uint32_t px, uint32_t py, int c)
{
    switch (c) {
    case 0:
        return (uint8_t)(16 * px + 1);
    case 1:
        return (uint8_t)(60 * py + 2);
    case 2:
        return (uint8_t)(px * py * 10 + 5);
    default:
        return (uint8_t)(255 - px * 20 - py * 3);
    }
}

static void make_rgba8(tex *x, kiln_format f)
{
    tex_init(x, f, 4, 4, 1, 1);
    for (uint32_t py = 0; py < 4; py++)
        for (uint32_t px = 0; px < 4; px++) {
            uint8_t *p = texel(x, 0, 0, px, py);
            for (int c = 0; c < 4; c++)
                p[c] = tv(px, py, c);
            if (f == KILN_FORMAT_B8G8R8A8_UNORM) {
                uint8_t t = p[0];
                p[0] = p[2];
                p[2] = t;
            }
        }
}

static void test_bilinear_centers_and_midpoints(void)
{
    for (int fmt = 0; fmt < 2; fmt++) {
        kiln_format f = fmt ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
        tex x;
        make_rgba8(&x, f);
        kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                    KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
        float u[16], v[16], o[64];

        /* texel centers: exactly the texel */
        for (int i = 0; i < 16; i++) {
            u[i] = ((float)(i % 4) + 0.5f) / 4.0f;
            v[i] = ((float)(i / 4) + 0.5f) / 4.0f;
        }
        sample(&x, &s, u, v, o);
        for (int i = 0; i < 16; i++)
            for (int c = 0; c < 4; c++)
                CHECK_NEAR(o[c * 16 + i], (float)tv(i % 4, i / 4, c) / 255.0f, 0.0);

        /* halfway between horizontal neighbours (x, x+1), and the middle of
         * four texels */
        for (int i = 0; i < 16; i++) {
            u[i] = (float)(i % 3 + 1) / 4.0f;
            v[i] = ((float)(i / 4) + 0.5f) / 4.0f;
        }
        sample(&x, &s, u, v, o);
        for (int i = 0; i < 16; i++) {
            uint32_t px = i % 3, py = i / 4;
            for (int c = 0; c < 4; c++)
                CHECK_NEAR(o[c * 16 + i], (tv(px, py, c) + tv(px + 1, py, c)) / 2.0 / 255.0, 1e-6);
        }
        for (int i = 0; i < 16; i++) {
            u[i] = (float)(i % 3 + 1) / 4.0f;
            v[i] = (float)(i / 4 % 3 + 1) / 4.0f;
        }
        sample(&x, &s, u, v, o);
        for (int i = 0; i < 16; i++) {
            uint32_t px = i % 3, py = i / 4 % 3;
            for (int c = 0; c < 4; c++)
                CHECK_NEAR(o[c * 16 + i],
                           (tv(px, py, c) + tv(px + 1, py, c) + tv(px, py + 1, c) +
                            tv(px + 1, py + 1, c)) /
                               4.0 / 255.0,
                           1e-6);
        }
        /* a quarter of the way: weights 3/4 and 1/4 */
        for (int i = 0; i < 16; i++) {
            u[i] = (0.5f + 0.25f) / 4.0f;
            v[i] = 0.5f / 4.0f;
        }
        sample(&x, &s, u, v, o);
        CHECK_NEAR(R(o, 0), (0.75 * tv(0, 0, 0) + 0.25 * tv(1, 0, 0)) / 255.0, 1e-6);
        tex_free(&x);
    }
}

/* The 4-texel R32_FLOAT row 10, 20, 30, 40 with LINEAR at both edges. */
static void test_bilinear_address_modes(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 4, 1, 1, 1);
    for (uint32_t i = 0; i < 4; i++)
        put_f(&x, 0, 0, i, 0, (float[]){10.0f * (float)(i + 1)}, 1);
    const float us[4] = {0.0f, 1.0f, 1.125f, -0.125f};
    /* per mode, per coordinate; NAN marks "half texel, half border" and
     * INFINITY "border only" */
    const float want[4][4] = {
        /* WRAP: x = -0.5 blends 40|10, 3.5 blends 40|10, 4.0 is 10, -1.0 is 40 */
        {25.0f, 25.0f, 10.0f, 40.0f},
        /* MIRROR: -1 -> 0, 4 -> 3 */
        {10.0f, 40.0f, 40.0f, 10.0f},
        /* CLAMP */
        {10.0f, 40.0f, 40.0f, 10.0f},
        /* BORDER: (border + 10) / 2, (40 + border) / 2, border, border */
        {NAN, NAN, INFINITY, INFINITY},
    };
    for (int m = 0; m < 4; m++) {
        kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                    (kiln_address)(KILN_ADDRESS_WRAP + m), KILN_ADDRESS_CLAMP);
        float u[16], v[16], o[64];
        for (int i = 0; i < 16; i++) {
            u[i] = us[i % 4];
            v[i] = 0.5f;
        }
        sample(&x, &s, u, v, o);
        for (int i = 0; i < 4; i++) {
            float e = want[m][i];
            if (isnan(e)) {
                float tx = i == 0 ? 10.0f : 40.0f;
                CHECK_NEAR(R(o, i), (0.25 + tx) / 2.0, 1e-6);
                CHECK_NEAR(G(o, i), 0.5 / 2.0, 1e-6);
                CHECK_NEAR(B(o, i), 0.75 / 2.0, 1e-6);
                CHECK_NEAR(A(o, i), (1.0 + 0.125) / 2.0, 1e-6);
            } else if (isinf(e)) {
                CHECK(R(o, i) == 0.25f && G(o, i) == 0.5f && B(o, i) == 0.75f && A(o, i) == 0.125f);
            } else {
                CHECK_NEAR(R(o, i), e, 1e-5);
                CHECK(G(o, i) == 0.0f && B(o, i) == 0.0f && A(o, i) == 1.0f);
            }
        }
    }
    tex_free(&x);
}

/* The RGBA8 kernel left of and above the texture (negative texel
 * coordinates): u = 0 is texel x = -0.5, u = -0.25 is x = -1.5. */
static void test_rgba8_kernel_address_modes(void)
{
    tex x;
    make_rgba8(&x, KILN_FORMAT_R8G8B8A8_UNORM);
    const float us[2] = {0.0f, -0.25f};
    /* texel pairs (left, right) blended half and half, per mode and u */
    const int pair[3][2][2] = {
        /* WRAP */ {{3, 0}, {2, 3}},
        /* MIRROR */ {{0, 0}, {1, 0}},
        /* CLAMP */ {{0, 0}, {0, 0}},
    };
    for (int m = 0; m < 3; m++) {
        kiln_address mode = (kiln_address)(KILN_ADDRESS_WRAP + m);
        kd_sampler s =
            make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, mode, mode);
        for (int k = 0; k < 2; k++) {
            float u[16], v[16], o[64];
            for (int i = 0; i < 16; i++) {
                u[i] = us[k];
                v[i] = 1.5f / 4.0f; /* row 1 */
            }
            sample(&x, &s, u, v, o);
            for (int c = 0; c < 4; c++)
                CHECK_NEAR(o[c * 16 + 6],
                           (tv(pair[m][k][0], 1, c) + tv(pair[m][k][1], 1, c)) / 2.0 / 255.0, 1e-6);
            /* and the same along v: column 2, v = us[k] */
            for (int i = 0; i < 16; i++) {
                u[i] = 2.5f / 4.0f;
                v[i] = us[k];
            }
            sample(&x, &s, u, v, o);
            for (int c = 0; c < 4; c++)
                CHECK_NEAR(o[c * 16 + 9],
                           (tv(2, pair[m][k][0], c) + tv(2, pair[m][k][1], c)) / 2.0 / 255.0, 1e-6);
        }
    }
    tex_free(&x);
}

/* The RGBA8 kernel (LINEAR, CLAMP) and the general path (BORDER, which
 * these interior coordinates never reach) give identical bits, for
 * magnification, minification and trilinear blends across three levels. */
static void test_rgba8_kernel_matches_general_path(void)
{
    th_rng rng = {0x9E3779B97F4A7C15ull};
    tex x;
    tex_init(&x, KILN_FORMAT_R8G8B8A8_UNORM, 64, 64, 7, 1);
    for (uint32_t m = 0; m < 7; m++)
        for (uint32_t py = 0; py < x.subs[m].height; py++)
            for (uint32_t px = 0; px < x.subs[m].width; px++)
                for (int c = 0; c < 4; c++)
                    texel(&x, m, 0, px, py)[c] = (uint8_t)th_below(&rng, 256);
    kd_sampler fast = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                   KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    kd_sampler gen = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                  KILN_ADDRESS_BORDER, KILN_ADDRESS_BORDER);
    int same = 1, blended = 0;
    for (int round = 0; round < 400; round++) {
        float u[16], v[16], a[64], b[64];
        float u0 = 0.1f + (float)th_below(&rng, 10000) / 10000.0f * 0.4f;
        float v0 = 0.1f + (float)th_below(&rng, 10000) / 10000.0f * 0.4f;
        /* 0.2 .. 3 texels of level 0 per pixel: LOD from -2.3 to 1.6 */
        float du = (0.2f + (float)th_below(&rng, 1000) / 1000.0f * 2.8f) / 64.0f;
        float dv = (float)th_below(&rng, 1000) / 1000.0f * du;
        for (int i = 0; i < 16; i++) {
            u[i] = u0 + (float)(i % 4) * du + (float)th_below(&rng, 100) * 1e-5f;
            v[i] = v0 + (float)(i / 4) * dv + (float)(i % 4) * dv * 0.5f;
        }
        sample(&x, &fast, u, v, a);
        sample(&x, &gen, u, v, b);
        same &= memcmp(a, b, sizeof a) == 0;
        blended += du * 64.0f > 1.1f;
    }
    CHECK(same);
    CHECK(blended > 100); /* the rounds did exercise minification */
    tex_free(&x);

    /* and BGRA8, swizzled the same way on both paths */
    tex y;
    make_rgba8(&y, KILN_FORMAT_B8G8R8A8_UNORM);
    float u[16], v[16], a[64], b[64];
    for (int i = 0; i < 16; i++) {
        u[i] = 0.2f + (float)(i % 4) * 0.09f;
        v[i] = 0.3f + (float)(i / 4) * 0.07f;
    }
    sample(&y, &fast, u, v, a);
    sample(&y, &gen, u, v, b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    tex_free(&y);
}

/* kr_textures_prepare (the levels a draw sets up once for kiln_ps_sample's
 * shortcuts) gives the bits of the same set never prepared, for every
 * view slot and sampler slot pair: views of one to eight RGBA8 / BGRA8
 * levels, 1 to 64 texels a side, under samplers of every address mode
 * (anisotropic and POINT ones too, min and mag POINT for the POINT
 * shortcut, POINT and LINEAR mips, LOD biases and clamps), coordinates
 * across WRAP seams and past the edges, steps from magnification to
 * minification past the last level; at each SIMD level (the LINEAR
 * levels are prepared at AVX2 and above, the POINT shortcut at every
 * level). */
static void test_prepared_slots_match_unprepared(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 7, 8, 16, 31, 32, 64};
    static const kiln_address modes[] = {KILN_ADDRESS_WRAP,   KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP,
                                         KILN_ADDRESS_CLAMP,  KILN_ADDRESS_MIRROR, KILN_ADDRESS_BORDER};
    const kr_simd initial = kr_effects_active_level();
    const kr_simd levels[] = {KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    th_rng rng = {0x5DEECE66Dull};
    for (int l = 0; l < 3; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        int differ = 0, engaged = 0, chains = 0, points = 0, calls = 0, cleared = 1;
        for (int round = 0; round < 150; round++) {
            tex x[KR_PREPARED];
            kd_sampler sm[KR_PREPARED + 1];
            struct kiln_ps_textures pt, pp;
            memset(&pt, 0, sizeof pt);
            for (int i = 0; i < KR_PREPARED; i++) {
                kiln_format f = th_below(&rng, 2) ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
                uint32_t w = sizes[th_below(&rng, 10)], h = sizes[th_below(&rng, 10)];
                tex_init(&x[i], f, w, h, th_below(&rng, 3) ? 1 + th_below(&rng, 8) : 1, 1);
                for (uint32_t m = 0; m < x[i].t.num_mips; m++)
                    for (uint32_t py = 0; py < x[i].subs[m].height; py++)
                        for (uint32_t px = 0; px < x[i].subs[m].width; px++)
                            for (int c = 0; c < 4; c++)
                                texel(&x[i], m, 0, px, py)[c] = (uint8_t)th_below(&rng, 256);
                x[i].t.dim = KILN_SRV_DIMENSION_TEXTURE2D;
                x[i].t.quick = kr_texture_quick(&x[i].t);
                pt.tex[i] = x[i].t;
            }
            for (int j = 0; j <= KR_PREPARED; j++) {
                uint32_t k = th_below(&rng, 8);
                kiln_filter mag = k == 0 || k == 2 ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
                kiln_filter min =
                    k == 2 ? KILN_FILTER_POINT : KILN_FILTER_LINEAR; /* 2: the POINT shortcut's */
                sm[j] = make_sampler(min, mag,
                                     th_below(&rng, 3) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                     modes[th_below(&rng, 6)], modes[th_below(&rng, 6)]);
                if (th_below(&rng, 2)) { /* LOD bias and clamps */
                    sm[j].mip_lod_bias = -2.0f + (float)th_below(&rng, 17) * 0.25f;
                    sm[j].min_lod = (float)th_below(&rng, 3) * 0.5f;
                    sm[j].max_lod = sm[j].min_lod + (float)th_below(&rng, 8);
                }
                if (k == 1) /* anisotropic: LINEAR filters, max_aniso 4 */
                    sm[j].max_aniso = 4;
                pt.samp[j] = &sm[j];
            }
            pp = pt;
            kr_textures_prepare(&pp);
            for (int i = 0; i < KR_PREPARED; i++) {
                cleared &= levels[l] >= KR_SIMD_AVX2 || pp.prep_sampler[i] == 0;
                for (uint32_t j = 0; j <= KR_PREPARED; j++) {
                    float u[16], v[16], a[64], b[64];
                    /* a start, and steps per pixel from none to many
                     * texels of level 0 (LOD down to -inf, up past the
                     * last level), with jitter */
                    float u0 = -1.5f + (float)th_below(&rng, 40000) / 10000.0f;
                    float v0 = -1.5f + (float)th_below(&rng, 40000) / 10000.0f;
                    float du = (float)th_below(&rng, 10000) / 10000.0f * (th_below(&rng, 2) ? 0.02f : 0.5f);
                    float dv = (float)th_below(&rng, 10000) / 10000.0f * (th_below(&rng, 2) ? 0.02f : 0.5f);
                    for (int p = 0; p < 16; p++) {
                        u[p] = u0 + (float)(p % 4) * du + (float)th_below(&rng, 100) * 1e-5f;
                        v[p] = v0 + (float)(p / 4) * dv + (float)(p % 4) * dv * 0.25f;
                    }
                    kiln_ps_args a0, a1;
                    memset(&a0, 0, sizeof a0);
                    a0.mask = 0xffffu;
                    a1 = a0;
                    a0.textures = &pt;
                    a1.textures = &pp;
                    kiln_ps_sample(&a0, (uint32_t)i, j, u, v, a);
                    kiln_ps_sample(&a1, (uint32_t)i, j, u, v, b);
                    differ += memcmp(a, b, sizeof a) != 0;
                    engaged += pp.prep_sampler[i] == j + 1;
                    chains += pp.prep_sampler[i] == j + 1 && pp.prep_levels[i] > 1;
                    points += pp.point_sampler[i] == j + 1;
                    calls++;
                }
            }
            for (int i = 0; i < KR_PREPARED; i++)
                tex_free(&x[i]);
        }
        CHECK(differ == 0);
        CHECK(cleared);
        /* at AVX2 the prepared levels were taken often enough to count
         * (at most one sampler slot in five is the one prepared) */
        CHECK(levels[l] < KR_SIMD_AVX2 || engaged > calls / 20);
        CHECK(levels[l] < KR_SIMD_AVX2 || chains > calls / 40);
        CHECK(points > calls / 150); /* the POINT shortcut, at every level */
        if (differ || points <= calls / 150 ||
            (levels[l] >= KR_SIMD_AVX2 && (engaged <= calls / 20 || chains <= calls / 40)))
            fprintf(stderr,
                    "    %s: %d of %d calls differ, %d took prepared levels (%d a chain), %d the "
                    "POINT shortcut\n",
                    kr_simd_name(levels[l]), differ, calls, engaged, chains, points);
    }
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
}

/* ---- the POINT shortcut (raster.h, kr_point_level) ---- */

/* The general path's POINT index along an axis of n texels, worked out
 * here: floor of c * n clamped to +-2^30 (NaN: -2^30), then the mode. */
static int64_t point_ref_axis(float c, uint32_t n, kiln_address mode)
{
    float x = c * (float)n;
    double d = x != x               ? -1073741824.0
               : x < -1073741824.0f ? -1073741824.0
               : x > 1073741824.0f  ? 1073741824.0
                                    : (double)x;
    int64_t i = (int64_t)floor(d), N = n;
    switch (mode) {
    case KILN_ADDRESS_WRAP:
        i %= N;
        return i < 0 ? i + N : i;
    case KILN_ADDRESS_MIRROR:
        i %= 2 * N;
        i = i < 0 ? i + 2 * N : i;
        return i >= N ? 2 * N - 1 - i : i;
    case KILN_ADDRESS_MIRROR_ONCE:
        i = i < 0 ? -1 - i : i;
        return i >= N ? N - 1 : i;
    default: /* CLAMP */
        return i < 0 ? 0 : i >= N ? N - 1 : i;
    }
}

/* The block as the general path reads it under POINT from level 0 of x:
 * each channel's byte / 255 (BGRA8: bytes 2 and 0 to R and B). */
static void point_ref(tex *x, const kd_sampler *s, const float *u, const float *v, float *out)
{
    const int swap = x->t.format == KILN_FORMAT_B8G8R8A8_UNORM;
    for (int i = 0; i < 16; i++) {
        const uint8_t *p =
            texel(x, 0, 0, (uint32_t)point_ref_axis(u[i], x->subs[0].width, s->address_u),
                  (uint32_t)point_ref_axis(v[i], x->subs[0].height, s->address_v));
        for (int c = 0; c < 4; c++)
            out[c * 16 + i] = (float)p[swap && c != 1 && c != 3 ? 2 - c : c] / 255.0f;
    }
}

static const float point_specials[] = {
    NAN,   INFINITY,    -INFINITY,   1e10f,        -1e10f,       3e38f, -3e38f,
    -0.0f, 0.0f,        1.0f,        0.5f,         0.25f,        0.75f, -1.0f,
    2.0f,  1e-30f,      -1e-30f,     0.99999994f,  1.0000001f,   -0.5f, 4.0f,
    -4.0f, 1.0f / 3.0f, 2.0f / 3.0f, 7.0f / 31.0f, -7.0f / 31.0f};

/* kiln_ps_sample under min and mag POINT on a view of one RGBA8 / BGRA8
 * level, with no BORDER axis: prepared (the AVX2 and AVX-512 kernels where
 * both axes are CLAMP, MIRROR_ONCE, or WRAP or MIRROR over a power of two;
 * the portable one otherwise and at SSE2) and never prepared, each equal
 * bit for bit to the formula above, and for magnified blocks to the
 * general path (the same level 0 in a view of two levels, which the
 * shortcut leaves to it). Blocks magnified (the SIMD kernels' window of
 * texels, increasing and mirrored), across WRAP and MIRROR seams, spread
 * (their gather), and special coordinates (NaN, infinities, huge, -0,
 * texel edges); sizes 1 to 64 each way, every non-BORDER mode each way,
 * at each SIMD level. */
static void test_point_shortcut(void)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 16, 31, 32, 64};
    static const kiln_address modes[] = {KILN_ADDRESS_WRAP, KILN_ADDRESS_MIRROR, KILN_ADDRESS_CLAMP,
                                         KILN_ADDRESS_MIRROR_ONCE};
    const kr_simd initial = kr_effects_active_level();
    const kr_simd levels[] = {KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    th_rng rng = {0x243F6A8885A308D3ull};
    for (int l = 0; l < 3; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        int bad_ref = 0, bad_unprep = 0, bad_gen = 0, gen = 0, calls = 0, simd = 0, unset = 0;
        for (int round = 0; round < 400; round++) {
            kiln_format f =
                th_below(&rng, 2) ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
            uint32_t w = sizes[th_below(&rng, 11)], h = sizes[th_below(&rng, 11)];
            tex x;
            tex_init(&x, f, w, h, 2, 1);
            for (uint32_t m = 0; m < 2; m++)
                for (uint32_t py = 0; py < x.subs[m].height; py++)
                    for (uint32_t px = 0; px < x.subs[m].width; px++)
                        for (int c = 0; c < 4; c++)
                            texel(&x, m, 0, px, py)[c] = (uint8_t)th_below(&rng, 256);
            x.t.dim = KILN_SRV_DIMENSION_TEXTURE2D;
            kr_texture two = x.t; /* both levels: the general path's */
            x.t.num_mips = 1;
            x.t.quick = kr_texture_quick(&x.t);
            two.quick = kr_texture_quick(&two);
            kd_sampler s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT,
                                        th_below(&rng, 2) ? KILN_FILTER_POINT : KILN_FILTER_LINEAR,
                                        modes[th_below(&rng, 4)], modes[th_below(&rng, 4)]);
            struct kiln_ps_textures pp;
            memset(&pp, 0, sizeof pp);
            pp.tex[0] = x.t;
            pp.samp[0] = &s;
            kr_textures_prepare(&pp);
            unset += pp.point_sampler[0] != 1;
            simd +=
                pp.point_fn[0] == kr_sample_point_avx2 || pp.point_fn[0] == kr_sample_point_avx512;
            for (int k = 0; k < 12; k++) {
                float u[16], v[16], a[64], b[64], r[64];
                const uint32_t kind = th_below(&rng, 4); /* 0, 1 magnified; 2 spread; 3 specials */
                const float u0 = th_frand(&rng, -2.5f, 3.5f), v0 = th_frand(&rng, -2.5f, 3.5f);
                /* under a texel per pixel (the LOD magnifies), a quarter mirrored */
                float du = th_frand(&rng, 0.0f, 0.9f) / (float)w,
                      dv = th_frand(&rng, 0.0f, 0.9f) / (float)h;
                if (th_below(&rng, 4) == 0)
                    du = -du;
                for (int p = 0; p < 16; p++) {
                    if (kind < 2) {
                        u[p] = u0 + (float)(p % 4) * du;
                        v[p] = v0 + (float)(p / 4) * dv;
                    } else if (kind == 2) {
                        u[p] = th_frand(&rng, -3.0f, 4.0f);
                        v[p] = th_frand(&rng, -3.0f, 4.0f);
                    } else {
                        const uint32_t n = sizeof point_specials / sizeof point_specials[0];
                        u[p] = th_below(&rng, 3)
                                   ? point_specials[th_below(&rng, n)]
                                   : (float)th_below(&rng, 2 * w + 1) / (float)w - 0.5f;
                        v[p] = th_below(&rng, 3)
                                   ? point_specials[th_below(&rng, n)]
                                   : (float)th_below(&rng, 2 * h + 1) / (float)h - 0.5f;
                    }
                }
                kiln_ps_args pa;
                memset(&pa, 0, sizeof pa);
                pa.mask = 0xffffu;
                pa.textures = &pp;
                kiln_ps_sample(&pa, 0, 0, u, v, a);
                sample(&x, &s, u, v, b);
                point_ref(&x, &s, u, v, r);
                bad_ref += memcmp(a, r, sizeof a) != 0;
                bad_unprep += memcmp(b, r, sizeof b) != 0;
                if (kind < 2) {
                    tex y = x;
                    y.t = two;
                    sample(&y, &s, u, v, b);
                    bad_gen += memcmp(b, r, sizeof b) != 0;
                    gen++;
                }
                calls++;
            }
            tex_free(&x);
        }
        CHECK(bad_ref == 0 && bad_unprep == 0 && bad_gen == 0 && unset == 0);
        /* at AVX2 and up, the vector kernels read most views (the sizes
         * are mostly powers of two, half the modes need none) */
        CHECK(levels[l] < KR_SIMD_AVX2 ? simd == 0 : simd > 400 / 3);
        CHECK(gen > calls / 3);
        if (bad_ref || bad_unprep || bad_gen || unset ||
            (levels[l] >= KR_SIMD_AVX2 && simd <= 400 / 3))
            fprintf(
                stderr,
                "    %s: of %d calls, prepared %d and unprepared %d differ from the formula, %d "
                "of %d from the general path; %d views not set up, %d on a vector kernel\n",
                kr_simd_name(levels[l]), calls, bad_ref, bad_unprep, bad_gen, gen, unset, simd);
    }
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
}

/* Every byte value in every channel reads back as exactly byte / 255
 * through the POINT shortcut at each SIMD level: a 16 x 16 view whose 256
 * texels hold every value in each channel, read a 4 x 4 group of texels
 * per block (magnified by one: the vector kernels' window). */
static void test_point_every_byte(void)
{
    const kr_simd initial = kr_effects_active_level();
    const kr_simd levels[] = {KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    tex x;
    tex_init(&x, KILN_FORMAT_R8G8B8A8_UNORM, 16, 16, 1, 1);
    for (uint32_t k = 0; k < 256; k++) {
        uint8_t *p = texel(&x, 0, 0, k % 16, k / 16);
        p[0] = (uint8_t)k;
        p[1] = (uint8_t)(k ^ 0x55u);
        p[2] = (uint8_t)(255 - k);
        p[3] = (uint8_t)(k * 7);
    }
    x.t.dim = KILN_SRV_DIMENSION_TEXTURE2D;
    x.t.quick = kr_texture_quick(&x.t);
    kd_sampler s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP);
    for (int l = 0; l < 3; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        struct kiln_ps_textures pp;
        memset(&pp, 0, sizeof pp);
        pp.tex[0] = x.t;
        pp.samp[0] = &s;
        kr_textures_prepare(&pp);
        CHECK(pp.point_sampler[0] == 1);
        int bad = 0;
        for (uint32_t by = 0; by < 16; by += 4)
            for (uint32_t bx = 0; bx < 16; bx += 4) {
                float u[16], v[16], o[64];
                for (uint32_t p = 0; p < 16; p++) {
                    u[p] = ((float)(bx + p % 4) + 0.5f) / 16.0f;
                    v[p] = ((float)(by + p / 4) + 0.5f) / 16.0f;
                }
                kiln_ps_args pa;
                memset(&pa, 0, sizeof pa);
                pa.textures = &pp;
                kiln_ps_sample(&pa, 0, 0, u, v, o);
                for (uint32_t p = 0; p < 16; p++) {
                    const uint8_t *t = texel(&x, 0, 0, bx + p % 4, by + p / 4);
                    for (int c = 0; c < 4; c++)
                        bad += o[c * 16 + (int)p] != (float)t[c] / 255.0f;
                }
            }
        CHECK(bad == 0);
        if (bad)
            fprintf(stderr, "    %s: %d of 1024 channels differ from byte / 255\n",
                    kr_simd_name(levels[l]), bad);
    }
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    tex_free(&x);
}

/* A view whose texel offsets y pitch + 4 x pass int32 (rows of 300,000
 * bytes, 8,192 of them: memory a caller's view might describe, never a
 * kiln resource's) keeps the POINT shortcut but not the vector kernels,
 * whose gathers take signed 32-bit offsets; 8,191 rows of 262,144 bytes
 * (the last offset just within) keeps them. The decision only: the
 * memory is not there to read. */
static void test_point_offsets_past_int32(void)
{
    const kr_simd initial = kr_effects_active_level();
    static uint8_t one_texel[4];
    kd_sampler s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    const kr_simd levels[] = {KR_SIMD_AVX2, KR_SIMD_AVX512};
    for (int l = 0; l < 2; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        for (int k = 0; k < 2; k++) {
            kres_subresource sub = {0};
            sub.width = 4;
            sub.height = k ? 8192 : 8191;
            sub.row_pitch = k ? 300000 : 262144;
            sub.size = (size_t)sub.row_pitch * sub.height;
            struct kiln_ps_textures pp;
            memset(&pp, 0, sizeof pp);
            pp.tex[0].data = one_texel;
            pp.tex[0].subs = &sub;
            pp.tex[0].format = KILN_FORMAT_R8G8B8A8_UNORM;
            pp.tex[0].res_mip_levels = pp.tex[0].num_mips = pp.tex[0].num_slices = 1;
            pp.tex[0].dim = KILN_SRV_DIMENSION_TEXTURE2D;
            pp.samp[0] = &s;
            kr_textures_prepare(&pp);
            const bool vec =
                pp.point_fn[0] == kr_sample_point_avx2 || pp.point_fn[0] == kr_sample_point_avx512;
            CHECK(pp.point_sampler[0] == 1);
            CHECK(vec == (k == 0));
        }
    }
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
}

/* A sampler slot past the last one: UINT32_MAX, whose + 1 wraps to 0,
 * the mark of a slot never prepared, once sent a prepared set's call
 * to an unprepared slot's levels and to samp[UINT32_MAX]. Now every slot
 * reads as the never-prepared set does (under the default sampler). */
static void test_sampler_slot_past_the_last(void)
{
    const kr_simd initial = kr_effects_active_level();
    const kr_simd levels[] = {KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 8, 8, 1, 1); /* a slot neither shortcut takes */
    fill_level_f(&x, 0, 0.75f);
    x.t.dim = KILN_SRV_DIMENSION_TEXTURE2D;
    x.t.quick = kr_texture_quick(&x.t);
    kd_sampler s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    for (int l = 0; l < 3; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        struct kiln_ps_textures pt, pp;
        memset(&pt, 0, sizeof pt);
        pt.tex[0] = x.t;
        pt.samp[0] = &s;
        pp = pt;
        kr_textures_prepare(&pp);
        const uint32_t slots[] = {UINT32_MAX, KILN_MAX_SAMPLERS, 0};
        for (int k = 0; k < 3; k++) {
            float u[16], v[16], a[64], b[64];
            for (int p = 0; p < 16; p++) {
                u[p] = 0.1f + 0.05f * (float)p;
                v[p] = 0.3f;
            }
            kiln_ps_args a0, a1;
            memset(&a0, 0, sizeof a0);
            a1 = a0;
            a0.textures = &pt;
            a1.textures = &pp;
            kiln_ps_sample(&a0, 0, slots[k], u, v, a);
            kiln_ps_sample(&a1, 0, slots[k], u, v, b);
            CHECK(memcmp(a, b, sizeof a) == 0);
            CHECK(a[0] == 0.75f && a[16] == 0.0f && a[48] == 1.0f);
        }
    }
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    tex_free(&x);
}

/* ---- mip selection ---- */

/* 8x8 R32_FLOAT with 4 levels, level L solid L: a trilinear read returns
 * the LOD itself. */
static void make_levels(tex *x)
{
    tex_init(x, KILN_FORMAT_R32_FLOAT, 8, 8, 4, 1);
    for (uint32_t m = 0; m < 4; m++)
        fill_level_f(x, m, (float)m);
}

/* u[i] = 0.3 + (i % 4) * du, v constant: |du/dx| = du * 8 texels. */
static float sample_lod(const tex *x, const kd_sampler *s, double du, int along_y)
{
    float u[16], v[16], o[64];
    for (int i = 0; i < 16; i++) {
        int k = along_y ? i / 4 : i % 4;
        u[i] = 0.3f + (float)(k * du);
        v[i] = 0.4f;
    }
    sample(x, s, u, v, o);
    for (int i = 1; i < 16; i++)
        if (fabsf(R(o, i) - R(o, 0)) > 1e-5f)
            return -100.0f; /* every quad sees the same LOD */
    return R(o, 0);
}

static double du_for_lod(double lod, double size) { return pow(2.0, lod) / size; }

static void test_trilinear_blends_by_lod_fraction(void)
{
    tex x;
    make_levels(&x);
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    const double lods[] = {0.25, 0.5, 1.0, 1.585, 2.75};
    for (int k = 0; k < 5; k++) {
        CHECK_NEAR(sample_lod(&x, &s, du_for_lod(lods[k], 8), 0), lods[k], 1e-5);
        CHECK_NEAR(sample_lod(&x, &s, du_for_lod(lods[k], 8), 1), lods[k], 1e-5);
    }
    /* any spacing: LOD = log2(du * width) */
    CHECK_NEAR(sample_lod(&x, &s, 0.3, 0), log2(0.3 * 8), 1e-5);
    /* beyond the chain: the last level; tiny derivatives: level 0 */
    CHECK_NEAR(sample_lod(&x, &s, 10.0, 0), 3.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, 1e-4, 0), 0.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, 0.0, 0), 0.0, 0.0);

    /* v derivatives scale by the height: 8x2 -> 4x1 -> 2x1 -> 1x1 */
    tex y;
    tex_init(&y, KILN_FORMAT_R32_FLOAT, 8, 2, 4, 1);
    for (uint32_t m = 0; m < 4; m++)
        fill_level_f(&y, m, (float)m);
    float u[16], v[16], o[64];
    double dv = du_for_lod(1.5, 2); /* 1.5 levels along v, nothing along u */
    for (int i = 0; i < 16; i++) {
        u[i] = 0.5f;
        v[i] = 0.1f + (float)((i % 4) * dv);
    }
    sample(&y, &s, u, v, o);
    CHECK_NEAR(R(o, 0), 1.5, 1e-5);
    tex_free(&y);

    /* RGBA8: level 0 black, level 1 white: every channel reads the fraction */
    tex z;
    tex_init(&z, KILN_FORMAT_R8G8B8A8_UNORM, 4, 4, 2, 1);
    for (uint32_t py = 0; py < 2; py++)
        for (uint32_t px = 0; px < 2; px++)
            memset(texel(&z, 1, 0, px, py), 255, 4);
    for (int i = 0; i < 16; i++) {
        u[i] = 0.2f + (float)((i % 4) * du_for_lod(0.3, 4));
        v[i] = 0.6f;
    }
    sample(&z, &s, u, v, o);
    for (int c = 0; c < 3; c++)
        CHECK_NEAR(o[c * 16 + 5], 0.3, 1e-5);
    CHECK_NEAR(A(o, 5), 0.3, 1e-5);
    tex_free(&z);
    tex_free(&x);
}

static void test_mip_point_rounds(void)
{
    tex x;
    make_levels(&x);
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_POINT,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.4, 8), 0), 0.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.6, 8), 0), 1.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(1.4, 8), 0), 1.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(1.6, 8), 0), 2.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(2.49, 8), 0), 2.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(2.51, 8), 0), 3.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(7.0, 8), 0), 3.0, 0.0);
    tex_free(&x);
}

static void test_lod_bias_and_clamp(void)
{
    tex x;
    make_levels(&x);
    kiln_sampler_desc d = {0};
    kd_sampler s;

    d.mip_lod_bias = 1.0f;
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.5, 8), 0), 1.5, 1e-5);
    d.mip_lod_bias = -0.25f;
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(2.0, 8), 0), 1.75, 1e-5);
    d.mip_lod_bias = -2.0f; /* below 0: level 0 */
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.5, 8), 0), 0.0, 0.0);

    d.mip_lod_bias = 0.0f;
    d.lod_clamp_enable = 1;
    d.min_lod = 2.25f;
    d.max_lod = 100.0f;
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.5, 8), 0), 2.25, 1e-6);
    CHECK_NEAR(sample_lod(&x, &s, 0.0, 0), 2.25, 1e-6); /* zero derivatives too */
    d.min_lod = 0.0f;
    d.max_lod = 0.75f;
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(2.5, 8), 0), 0.75, 1e-6);
    d.max_lod = 0.0f; /* clamp to the top level */
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(2.5, 8), 0), 0.0, 0.0);

    /* lod clamp disabled: min/max are ignored */
    d.lod_clamp_enable = 0;
    d.min_lod = 3.0f;
    kd_sampler_resolve(&d, &s);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(1.25, 8), 0), 1.25, 1e-5);
    tex_free(&x);
}

/* A view of mips 1..2: derivatives scale by mip 1's size (4) and the LOD
 * stays inside the view's range. */
static void test_view_mip_range(void)
{
    tex x;
    make_levels(&x);
    x.t.first_mip = 1;
    x.t.num_mips = 2;
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(0.5, 4), 0), 1.5, 1e-5);
    CHECK_NEAR(sample_lod(&x, &s, du_for_lod(3.0, 4), 0), 2.0, 0.0);
    CHECK_NEAR(sample_lod(&x, &s, 0.0, 0), 1.0, 0.0);
    tex_free(&x);
}

/* mag_filter applies when LOD <= 0, min_filter otherwise. Row 0 1 2 3; at
 * u = 0.3125 (texel x = 1.25) POINT reads 1, LINEAR blends to 0.75. */
static void test_mag_and_min_filters(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 4, 1, 1, 1);
    for (uint32_t i = 0; i < 4; i++)
        put_f(&x, 0, 0, i, 0, (float[]){(float)i}, 1);
    float u[16], v[16], o[64];
    for (int k = 0; k < 2; k++) {
        kd_sampler s = make_sampler(k ? KILN_FILTER_POINT : KILN_FILTER_LINEAR,
                                    k ? KILN_FILTER_LINEAR : KILN_FILTER_POINT, KILN_FILTER_LINEAR,
                                    KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
        /* magnified: derivatives 0 */
        for (int i = 0; i < 16; i++) {
            u[i] = 0.3125f;
            v[i] = 0.5f;
        }
        sample(&x, &s, u, v, o);
        CHECK_NEAR(R(o, 0), k ? 0.75 : 1.0, 0.0);
        /* minified: two texels per pixel */
        for (int i = 0; i < 16; i++)
            u[i] = 0.3125f + (float)(i % 4) * 0.5f;
        sample(&x, &s, u, v, o);
        CHECK_NEAR(R(o, 0), k ? 1.0 : 0.75, 0.0);
        CHECK_NEAR(R(o, 12), k ? 1.0 : 0.75, 0.0);
    }
    /* NULL sampler: the default (LINEAR, CLAMP) */
    for (int i = 0; i < 16; i++) {
        u[i] = i < 8 ? 0.3125f : -1.0f;
        v[i] = 0.5f;
    }
    sample(&x, NULL, u, v, o);
    CHECK_NEAR(R(o, 0), 0.75, 0.0);
    CHECK_NEAR(R(o, 8), 0.0, 0.0);
    tex_free(&x);
}

/* ---- formats ---- */

static void check_format(kiln_format f, const void *bytes, size_t n, const float want[4])
{
    tex x;
    tex_init(&x, f, 2, 2, 1, 1);
    memcpy(texel(&x, 0, 0, 1, 1), bytes, n);
    float got[4];
    kr_texel_fetch(&x.t, 0, 1, 1, got);
    for (int c = 0; c < 4; c++)
        CHECK_NEAR(got[c], want[c], 0.0);
    /* POINT and LINEAR at the texel center read the same */
    float u[16], v[16], o[64];
    for (int i = 0; i < 16; i++)
        u[i] = v[i] = 0.75f;
    for (int k = 0; k < 2; k++) {
        kiln_filter fl = k ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
        kd_sampler s = make_sampler(fl, fl, fl, KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
        sample(&x, &s, u, v, o);
        for (int c = 0; c < 4; c++)
            CHECK_NEAR(o[c * 16 + 7], want[c], 0.0);
    }
    tex_free(&x);
}

static void test_format_conversions(void)
{
    const uint8_t b4[4] = {10, 128, 200, 255};
    check_format(KILN_FORMAT_R8G8B8A8_UNORM, b4, 4,
                 (float[]){10 / 255.0f, 128 / 255.0f, 200 / 255.0f, 1.0f});
    check_format(KILN_FORMAT_B8G8R8A8_UNORM, b4, 4,
                 (float[]){200 / 255.0f, 128 / 255.0f, 10 / 255.0f, 1.0f});
    check_format(KILN_FORMAT_R8_UNORM, (uint8_t[]){77}, 1, (float[]){77 / 255.0f, 0, 0, 1});
    check_format(KILN_FORMAT_R32_FLOAT, (float[]){-3.5f}, 4, (float[]){-3.5f, 0, 0, 1});
    check_format(KILN_FORMAT_R32G32_FLOAT, (float[]){1.25f, 1e6f}, 8, (float[]){1.25f, 1e6f, 0, 1});
    check_format(KILN_FORMAT_R32G32B32A32_FLOAT, (float[]){0.1f, -2.0f, 3.0f, 0.5f}, 16,
                 (float[]){0.1f, -2.0f, 3.0f, 0.5f});
    check_format(KILN_FORMAT_D32_FLOAT, (float[]){0.625f}, 4, (float[]){0.625f, 0, 0, 1});

    /* every UNORM8 value is exactly v / 255 */
    tex x;
    tex_init(&x, KILN_FORMAT_R8G8B8A8_UNORM, 64, 4, 1, 1);
    for (uint32_t i = 0; i < 256; i++)
        texel(&x, 0, 0, i % 64, i / 64)[(i * 7) % 4] = (uint8_t)i;
    int exact = 1;
    for (uint32_t i = 0; i < 256; i++) {
        float got[4];
        kr_texel_fetch(&x.t, 0, i % 64, i / 64, got);
        exact &= got[(i * 7) % 4] == (float)i / 255.0f;
    }
    CHECK(exact);
    tex_free(&x);
}

/* Mip level and array slice select the subresource mip + slice * mips. */
static void test_fetch_level_and_slice(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 4, 4, 3, 2);
    put_f(&x, 1, 1, 1, 0, (float[]){7.0f}, 1);
    put_f(&x, 1, 0, 1, 0, (float[]){3.0f}, 1);
    put_f(&x, 2, 1, 0, 0, (float[]){9.0f}, 1);
    float got[4];
    x.t.slice = 1;
    kr_texel_fetch(&x.t, 1, 1, 0, got);
    CHECK_NEAR(got[0], 7.0, 0.0);
    kr_texel_fetch(&x.t, 2, 0, 0, got);
    CHECK_NEAR(got[0], 9.0, 0.0);
    x.t.slice = 0;
    kr_texel_fetch(&x.t, 1, 1, 0, got);
    CHECK_NEAR(got[0], 3.0, 0.0);

    /* a view of slice 1, mip 2 only: sampling anywhere reads 9 */
    x.t.slice = 1;
    x.t.first_mip = 2;
    x.t.num_mips = 1;
    float u[16], v[16], o[64];
    for (int i = 0; i < 16; i++) {
        u[i] = (float)i * 0.1f;
        v[i] = 0.5f;
    }
    sample(&x, NULL, u, v, o);
    CHECK_NEAR(R(o, 3), 9.0, 0.0);
    tex_free(&x);
}

static void test_empty_slot_reads_zero(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 2, 2, 1, 1);
    fill_level_f(&x, 0, 5.0f);
    struct kiln_ps_textures pt;
    memset(&pt, 0, sizeof pt);
    pt.tex[0] = x.t;
    kiln_ps_args a;
    memset(&a, 0, sizeof a);
    a.textures = &pt;
    float u[16] = {0}, v[16] = {0}, o[64];
    int zero;

    /* slot 1 is empty (data NULL) */
    memset(o, 0x7F, sizeof o);
    kiln_ps_sample(&a, 1, 0, u, v, o);
    zero = 1;
    for (int i = 0; i < 64; i++)
        zero &= o[i] == 0.0f;
    CHECK(zero);

    /* slot out of range */
    memset(o, 0x7F, sizeof o);
    kiln_ps_sample(&a, KILN_MAX_SHADER_RESOURCES, 0, u, v, o);
    zero = 1;
    for (int i = 0; i < 64; i++)
        zero &= o[i] == 0.0f;
    CHECK(zero);

    /* no textures at all */
    a.textures = NULL;
    memset(o, 0x7F, sizeof o);
    kiln_ps_sample(&a, 0, 0, u, v, o);
    zero = 1;
    for (int i = 0; i < 64; i++)
        zero &= o[i] == 0.0f;
    CHECK(zero);

    /* and slot 0 itself is not empty */
    a.textures = &pt;
    kiln_ps_sample(&a, 0, 0, u, v, o);
    CHECK(R(o, 0) == 5.0f && A(o, 15) == 1.0f);
    tex_free(&x);
}

/* ---- generate_mips ---- */

typedef struct mipres {
    kres_resource res;
    kres_storage st;
    tex x;
} mipres;

static void mipres_init(mipres *m, kiln_format f, uint32_t w, uint32_t h, uint32_t mips,
                        uint32_t slices)
{
    memset(m, 0, sizeof *m);
    tex_init(&m->x, f, w, h, mips, slices);
    m->res.format = f;
    m->res.width = w;
    m->res.height = h;
    m->res.mip_levels = mips;
    m->res.array_size = slices;
    m->res.num_subresources = mips * slices;
    m->res.subs = m->x.subs;
    m->st.data = m->x.mem;
}

/* 5x3 -> 2x1 -> 1x1, RGBA8. The odd column 4 and row 2 fall outside the
 * 2x2 boxes; the 2x1 -> 1x1 step takes row 0 twice. */
static void test_generate_mips_odd_rgba8(void)
{
    mipres m;
    mipres_init(&m, KILN_FORMAT_R8G8B8A8_UNORM, 5, 3, 3, 1);
    const uint8_t r[3][5] = {{0, 10, 20, 30, 40}, {1, 11, 21, 31, 41}, {255, 255, 255, 255, 255}};
    const uint8_t g[3][5] = {{1, 1, 3, 0, 9}, {0, 0, 0, 0, 9}, {9, 9, 9, 9, 9}};
    for (uint32_t y = 0; y < 3; y++)
        for (uint32_t x = 0; x < 5; x++) {
            uint8_t *p = texel(&m.x, 0, 0, x, y);
            p[0] = r[y][x];
            p[1] = g[y][x];
            p[2] = 255;
            p[3] = 0;
        }
    /* garbage in the lower mips must be overwritten */
    memset(texel(&m.x, 1, 0, 0, 0), 0xAB, 8);
    memset(texel(&m.x, 2, 0, 0, 0), 0xAB, 4);
    kr_generate_mips(&m.res, &m.st, 0, 3, 0, 1);

    CHECK_EQ_INT(m.x.subs[1].width, 2);
    CHECK_EQ_INT(m.x.subs[1].height, 1);
    /* R: (0+10+1+11+2)/4 = 6, (20+30+21+31+2)/4 = 26; G: (1+1+0+0+2)/4 = 1,
     * (3+0+0+0+2)/4 = 1; B stays 255, A 0 */
    const uint8_t mip1[8] = {6, 1, 255, 0, 26, 1, 255, 0};
    CHECK(memcmp(texel(&m.x, 1, 0, 0, 0), mip1, 8) == 0);
    /* R: (6+26+6+26+2)/4 = 16; G: (1+1+1+1+2)/4 = 1 */
    const uint8_t mip2[4] = {16, 1, 255, 0};
    CHECK(memcmp(texel(&m.x, 2, 0, 0, 0), mip2, 4) == 0);
    /* the source level is untouched */
    CHECK_EQ_INT(texel(&m.x, 0, 0, 4, 2)[0], 255);
    tex_free(&m.x);
}

/* Rounding: (a+b+c+d+2)/4, so 0.5 rounds up and 0.25 down; no overflow at
 * 255; BGRA averages per byte as well. */
static void test_generate_mips_unorm_rounding(void)
{
    mipres m;
    mipres_init(&m, KILN_FORMAT_B8G8R8A8_UNORM, 2, 2, 2, 1);
    const uint8_t px[4][4] = {{1, 1, 255, 0}, {1, 0, 255, 3}, {0, 0, 255, 0}, {0, 0, 255, 0}};
    for (int i = 0; i < 4; i++)
        memcpy(texel(&m.x, 0, 0, i % 2, i / 2), px[i], 4);
    kr_generate_mips(&m.res, &m.st, 0, 2, 0, 1);
    /* sums 2 -> 1, 1 -> 0, 1020 -> 255, 3 -> 1 */
    const uint8_t want[4] = {1, 0, 255, 1};
    CHECK(memcmp(texel(&m.x, 1, 0, 0, 0), want, 4) == 0);
    tex_free(&m.x);

    mipres_init(&m, KILN_FORMAT_R8_UNORM, 4, 2, 3, 1);
    const uint8_t row0[4] = {100, 101, 7, 8}, row1[4] = {102, 103, 9, 9};
    memcpy(texel(&m.x, 0, 0, 0, 0), row0, 4);
    memcpy(texel(&m.x, 0, 0, 0, 1), row1, 4);
    kr_generate_mips(&m.res, &m.st, 0, 3, 0, 1);
    /* (100+101+102+103+2)/4 = 102, (7+8+9+9+2)/4 = 8; then (102*2+8*2+2)/4 = 55 */
    CHECK_EQ_INT(texel(&m.x, 1, 0, 0, 0)[0], 102);
    CHECK_EQ_INT(texel(&m.x, 1, 0, 1, 0)[0], 8);
    CHECK_EQ_INT(texel(&m.x, 2, 0, 0, 0)[0], 55);
    tex_free(&m.x);
}

static void test_generate_mips_float_and_ranges(void)
{
    /* 3x3 -> 1x1: the top-left 2x2 box */
    mipres m;
    mipres_init(&m, KILN_FORMAT_R32G32B32A32_FLOAT, 3, 3, 2, 1);
    for (uint32_t y = 0; y < 3; y++)
        for (uint32_t x = 0; x < 3; x++) {
            float c = (float)(1u << (x + 3 * y)); /* 1 2 4 / 8 16 32 / ... */
            put_f(&m.x, 0, 0, x, y, (float[]){c, -c, 0.5f, 1.0f}, 4);
        }
    kr_generate_mips(&m.res, &m.st, 0, 2, 0, 1);
    float *p = (float *)texel(&m.x, 1, 0, 0, 0);
    CHECK(p[0] == 6.75f && p[1] == -6.75f && p[2] == 0.5f && p[3] == 1.0f); /* (1+2+8+16)/4 */
    tex_free(&m.x);

    /* 1x4 -> 1x2 -> 1x1 R32G32: the x axis of 1 texel takes it twice */
    mipres_init(&m, KILN_FORMAT_R32G32_FLOAT, 1, 4, 3, 1);
    for (uint32_t y = 0; y < 4; y++)
        put_f(&m.x, 0, 0, 0, y, (float[]){(float)(y + 1), 10.0f * (float)y}, 2);
    kr_generate_mips(&m.res, &m.st, 0, 3, 0, 1);
    p = (float *)texel(&m.x, 1, 0, 0, 0);
    CHECK(p[0] == 1.5f && p[1] == 5.0f);
    p = (float *)texel(&m.x, 1, 0, 0, 1);
    CHECK(p[0] == 3.5f && p[1] == 25.0f);
    p = (float *)texel(&m.x, 2, 0, 0, 0);
    CHECK(p[0] == 2.5f && p[1] == 15.0f);
    tex_free(&m.x);

    /* slices and a mip sub-range: only slice 1's mip 2 is written, from
     * its mip 1 */
    mipres_init(&m, KILN_FORMAT_R32_FLOAT, 4, 4, 3, 2);
    for (uint32_t s = 0; s < 2; s++)
        for (uint32_t y = 0; y < 2; y++)
            for (uint32_t x = 0; x < 2; x++) {
                put_f(&m.x, 1, s, x, y, (float[]){(float)(4 * s + 2 * y + x)}, 1);
                put_f(&m.x, 0, s, 2 * x, 2 * y, (float[]){100.0f}, 1);
            }
    put_f(&m.x, 2, 0, 0, 0, (float[]){-1.0f}, 1);
    kr_generate_mips(&m.res, &m.st, 1, 2, 1, 1);
    CHECK(*(float *)texel(&m.x, 2, 1, 0, 0) == 5.5f);  /* (4+5+6+7)/4 */
    CHECK(*(float *)texel(&m.x, 2, 0, 0, 0) == -1.0f); /* slice 0 untouched */
    CHECK(*(float *)texel(&m.x, 1, 1, 0, 0) == 4.0f);  /* mip 1 untouched */
    tex_free(&m.x);

    /* depth formats are not mip-generated */
    mipres_init(&m, KILN_FORMAT_D32_FLOAT, 2, 2, 2, 1);
    for (uint32_t i = 0; i < 4; i++)
        put_f(&m.x, 0, 0, i % 2, i / 2, (float[]){1.0f}, 1);
    kr_generate_mips(&m.res, &m.st, 0, 2, 0, 1);
    CHECK(*(float *)texel(&m.x, 1, 0, 0, 0) == 0.0f);
    tex_free(&m.x);
}

/* Same inputs, same bits, and a generated chain samples as expected: the
 * end-to-end use of both halves. */
static void test_generated_chain_samples(void)
{
    mipres m;
    mipres_init(&m, KILN_FORMAT_R8G8B8A8_UNORM, 8, 8, 4, 1);
    for (uint32_t y = 0; y < 8; y++)
        for (uint32_t x = 0; x < 8; x++)
            memset(texel(&m.x, 0, 0, x, y), (x + y) % 2 ? 255 : 0, 4); /* checkerboard */
    kr_generate_mips(&m.res, &m.st, 0, 4, 0, 1);
    /* (0 + 255 + 255 + 0 + 2) / 4 = 128 everywhere below */
    CHECK_EQ_INT(texel(&m.x, 1, 0, 3, 2)[1], 128);
    CHECK_EQ_INT(texel(&m.x, 3, 0, 0, 0)[3], 128);
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_POINT,
                                KILN_ADDRESS_WRAP, KILN_ADDRESS_WRAP);
    float u[16], v[16], a[64], b[64];
    for (int i = 0; i < 16; i++) {
        u[i] = 0.1f + (float)(i % 4) * 0.25f; /* 2 texels per pixel: level 1 */
        v[i] = 0.7f + (float)(i / 4) * 0.25f;
    }
    sample(&m.x, &s, u, v, a);
    sample(&m.x, &s, u, v, b);
    CHECK(memcmp(a, b, sizeof a) == 0);
    CHECK_NEAR(R(a, 9), 128 / 255.0f, 0.0);
    tex_free(&m.x);
}

/* ---- SampleLevel, SampleBias, SampleGrad, Load, GetDimensions ---- */

static kiln_ps_args args_for(struct kiln_ps_textures *pt, const tex *x, const kd_sampler *samp)
{
    memset(pt, 0, sizeof *pt);
    pt->tex[0] = x->t;
    pt->samp[0] = samp;
    kiln_ps_args a;
    memset(&a, 0, sizeof a);
    a.textures = pt;
    return a;
}

/* SampleLevel on make_levels' chain (level L solid L, so a read returns
 * the LOD it used): each pixel its own LOD in one block (the per-pixel
 * plans), the sampler's bias added and its clamps applied, POINT mips
 * rounding; on RGBA8 levels of distinct solid colors the uniform case
 * (the RGBA8 kernel) gives lw0 * b0 + lw1 * b1 over 255 in float exactly. */
static void test_sample_level(void)
{
    tex x;
    make_levels(&x);
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    struct kiln_ps_textures pt;
    kiln_ps_args a = args_for(&pt, &x, &s);
    float u[16], v[16], lod[16], o[64];
    static const float want_lin[16] = {0.0f, 0.0f, 0.25f, 0.5f, 1.0f, 1.75f, 2.0f, 3.0f,
                                       3.0f, 0.0f, 2.5f,  1.125f, 0.0f, 3.0f, 0.75f, 2.25f};
    static const float lods[16] = {-3.0f, 0.0f, 0.25f, 0.5f, 1.0f, 1.75f, 2.0f, 3.0f,
                                   9.0f,  -0.0f, 2.5f, 1.125f, -100.0f, 100.0f, 0.75f, 2.25f};
    for (int i = 0; i < 16; i++) {
        u[i] = 0.1f + 0.37f * (float)(i % 4); /* derivatives that would ask for ~lod 1.6 */
        v[i] = 0.3f;
        lod[i] = lods[i];
    }
    kiln_ps_sample_level(&a, 0, 0, u, v, lod, o);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(R(o, i), want_lin[i], 0.0);
    /* NaN LOD: min_lod (0) */
    for (int i = 0; i < 16; i++)
        lod[i] = NAN;
    kiln_ps_sample_level(&a, 0, 0, u, v, lod, o);
    CHECK_NEAR(R(o, 5), 0.0, 0.0);

    /* the sampler's bias, then its clamp [1, 2.5] */
    kiln_sampler_desc d = {0};
    d.mip_filter = KILN_FILTER_LINEAR;
    d.mip_lod_bias = 0.5f;
    d.lod_clamp_enable = 1;
    d.min_lod = 1.0f;
    d.max_lod = 2.5f;
    kd_sampler sb;
    kd_sampler_resolve(&d, &sb);
    a = args_for(&pt, &x, &sb);
    static const float in_b[4] = {0.0f, 1.0f, 1.25f, 3.0f}, want_b[4] = {1.0f, 1.5f, 1.75f, 2.5f};
    for (int i = 0; i < 16; i++)
        lod[i] = in_b[i % 4];
    kiln_ps_sample_level(&a, 0, 0, u, v, lod, o);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(R(o, i), want_b[i % 4], 0.0);

    /* POINT mips round to the nearest level */
    kd_sampler sp = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_POINT,
                                 KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    a = args_for(&pt, &x, &sp);
    static const float in_p[8] = {0.4f, 0.6f, 1.49f, 1.51f, 2.2f, 2.7f, 5.0f, -1.0f};
    static const float want_p[8] = {0.0f, 1.0f, 1.0f, 2.0f, 2.0f, 3.0f, 3.0f, 0.0f};
    for (int i = 0; i < 16; i++)
        lod[i] = in_p[i % 8];
    kiln_ps_sample_level(&a, 0, 0, u, v, lod, o);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(R(o, i), want_p[i % 8], 0.0);
    tex_free(&x);

    /* RGBA8, level L solid (10 + 40 L, 200 - 30 L, 3 L, 255 - 50 L) */
    tex y;
    tex_init(&y, KILN_FORMAT_R8G8B8A8_UNORM, 16, 16, 5, 1);
    for (uint32_t m = 0; m < 5; m++)
        for (uint32_t py = 0; py < (16u >> m); py++)
            for (uint32_t px = 0; px < (16u >> m); px++) {
                uint8_t *p = texel(&y, m, 0, px, py);
                p[0] = (uint8_t)(10 + 40 * m);
                p[1] = (uint8_t)(200 - 30 * m);
                p[2] = (uint8_t)(3 * m);
                p[3] = (uint8_t)(255 - 50 * m);
            }
    a = args_for(&pt, &y, &s);
    static const float uni[5] = {0.0f, 1.0f, 1.3f, 2.625f, 3.9f};
    for (int k = 0; k < 5; k++) {
        for (int i = 0; i < 16; i++)
            lod[i] = uni[k];
        kiln_ps_sample_level(&a, 0, 0, u, v, lod, o);
        int l0 = (int)floorf(uni[k]);
        volatile float lw1 = uni[k] - (float)l0, lw0 = 1.0f - lw1;
        int bad = 0;
        for (int c = 0; c < 4; c++) {
            float b0 = (float)texel(&y, (uint32_t)l0, 0, 0, 0)[c];
            float b1 = l0 + 1 < 5 ? (float)texel(&y, (uint32_t)l0 + 1, 0, 0, 0)[c] : 0.0f;
            volatile float p0 = lw0 * b0, p1 = lw1 * b1;
            volatile float acc = lw1 != 0.0f ? p0 + p1 : b0;
            volatile float want = acc / 255.0f;
            for (int i = 0; i < 16; i++)
                bad += o[c * 16 + i] != want;
        }
        CHECK_EQ_INT(bad, 0);
    }
    tex_free(&y);
}

/* A random RGBA8 texture with a full mip chain and random samplers. */
static void random_mips(tex *x, th_rng *r, kiln_format f)
{
    uint32_t w = 4u << th_below(r, 4), h = 4u << th_below(r, 4), mips = 1;
    while ((w >> mips) || (h >> mips))
        mips++;
    tex_init(x, f, w, h, mips, 1);
    for (uint32_t m = 0; m < mips; m++) {
        const kres_subresource *sub = &x->subs[m];
        for (uint32_t py = 0; py < sub->height; py++)
            for (uint32_t px = 0; px < sub->width; px++)
                for (uint32_t b = 0; b < x->bpp; b++)
                    texel(x, m, 0, px, py)[b] = (uint8_t)th_next(r);
    }
}

/* SampleBias with a bias of 0 and SampleGrad with each quad's own
 * differences are kiln_ps_sample bit for bit (random textures, samplers,
 * coordinates: minified, magnified, trilinear, point); a bias shifts the
 * LOD by exactly itself (make_levels' chain reads the LOD). */
static void test_sample_bias_grad(void)
{
    th_rng r = {0xb1a5ull};
    static const kiln_address modes[4] = {KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP,
                                          KILN_ADDRESS_MIRROR, KILN_ADDRESS_BORDER};
    int bad_bias = 0, bad_grad = 0, n = 0;
    for (int k = 0; k < 300; k++) {
        tex x;
        random_mips(&x, &r, th_below(&r, 3) == 0 ? KILN_FORMAT_R32_FLOAT : KILN_FORMAT_R8G8B8A8_UNORM);
        if (x.t.format == KILN_FORMAT_R32_FLOAT)
            for (uint32_t m = 0; m < x.t.num_mips; m++)
                fill_level_f(&x, m, (float)th_below(&r, 1000) / 7.0f);
        kd_sampler s = make_sampler(th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                    th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                    th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                    modes[th_below(&r, 4)], modes[th_below(&r, 4)]);
        s.mip_lod_bias = th_below(&r, 2) ? 0.0f : (float)th_below(&r, 9) * 0.25f - 1.0f;
        struct kiln_ps_textures pt;
        kiln_ps_args a = args_for(&pt, &x, &s);
        float u[16], v[16], zero[16], dudx[16], dvdx[16], dudy[16], dvdy[16];
        float o1[64], o2[64], o3[64];
        float su = (float)th_below(&r, 4000) / 1000.0f / (float)x.subs[0].width;
        float sv = (float)th_below(&r, 4000) / 1000.0f / (float)x.subs[0].height;
        for (int i = 0; i < 16; i++) {
            u[i] = -0.3f + su * (float)(i % 4) + 0.01f * (float)th_below(&r, 3) + 0.2f * (float)(i / 4) * su;
            v[i] = 0.2f + sv * (float)(i / 4) + 0.05f * su * (float)(i % 4);
            zero[i] = 0.0f;
        }
        for (int q = 0; q < 4; q++) {
            static const int tl[4] = {0, 2, 8, 10};
            for (int j = 0; j < 4; j++) {
                int i = tl[q] + (j & 1) + (j >> 1) * 4, t0 = tl[q];
                dudx[i] = u[t0 + 1] - u[t0];
                dvdx[i] = v[t0 + 1] - v[t0];
                dudy[i] = u[t0 + 4] - u[t0];
                dvdy[i] = v[t0 + 4] - v[t0];
            }
        }
        kiln_ps_sample(&a, 0, 0, u, v, o1);
        kiln_ps_sample_bias(&a, 0, 0, u, v, zero, o2);
        kiln_ps_sample_grad(&a, 0, 0, u, v, dudx, dvdx, dudy, dvdy, o3);
        bad_bias += memcmp(o1, o2, sizeof o1) != 0;
        bad_grad += memcmp(o1, o3, sizeof o1) != 0;
        n++;
        tex_free(&x);
    }
    CHECK_EQ_INT(bad_bias, 0);
    CHECK_EQ_INT(bad_grad, 0);
    printf("SampleBias(0) and SampleGrad(quad differences) against Sample: %d blocks, %d and %d "
           "differ\n",
           n, bad_bias, bad_grad);

    /* on the LOD-reading chain: u steps of du_for_lod(1, 8) ask for LOD 1 */
    tex y;
    make_levels(&y);
    kd_sampler s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    struct kiln_ps_textures pt;
    kiln_ps_args a = args_for(&pt, &y, &s);
    float u[16], v[16], bias[16], o[64], g0[16], g1[16];
    static const float biases[8] = {0.0f, 0.5f, 1.25f, -0.5f, -4.0f, 30.0f, -30.0f, 0.75f};
    static const float want[8] = {1.0f, 1.5f, 2.25f, 0.5f, 0.0f, 3.0f, 0.0f, 1.75f};
    for (int i = 0; i < 16; i++) {
        u[i] = 0.3f + (float)((i % 4) * du_for_lod(1.0, 8));
        v[i] = 0.4f;
        bias[i] = biases[i % 8];
    }
    kiln_ps_sample_bias(&a, 0, 0, u, v, bias, o);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(R(o, i), want[i % 8], 1e-5); /* the derivative LOD: log2 of a float */
    /* explicit gradients: 4 texels per pixel along y asks for LOD 2,
     * 0.5 along x for LOD -1 (magnified: level 0) */
    for (int i = 0; i < 16; i++) {
        g0[i] = i < 8 ? 0.0f : 0.5f / 8.0f;
        g1[i] = i < 8 ? 4.0f / 8.0f : 0.0f;
    }
    kiln_ps_sample_grad(&a, 0, 0, u, v, g0, g0, g1, g0, o);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(R(o, i), i < 8 ? 2.0 : 0.0, 0.0);
    tex_free(&y);
}

/* Load: exact texels at any mip of the view (first_mip shifts level 0),
 * 0 for every coordinate or mip out of range; GetDimensions. */
static void test_load_and_dimensions(void)
{
    th_rng r = {0x10adull};
    tex x;
    random_mips(&x, &r, KILN_FORMAT_B8G8R8A8_UNORM);
    while (x.t.num_mips < 3) {
        tex_free(&x);
        random_mips(&x, &r, KILN_FORMAT_B8G8R8A8_UNORM);
    }
    x.t.first_mip = 1;
    x.t.num_mips = x.t.res_mip_levels - 1;
    struct kiln_ps_textures pt;
    kiln_ps_args a = args_for(&pt, &x, NULL);
    int32_t px[16], py[16], mip[16];
    float o[64];
    int bad = 0, zeros = 0;
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 16; i++) {
            mip[i] = (int32_t)th_below(&r, x.t.num_mips + 2) - 1; /* -1 .. num_mips */
            px[i] = (int32_t)th_below(&r, 40) - 4;
            py[i] = (int32_t)th_below(&r, 40) - 4;
        }
        kiln_ps_load(&a, 0, px, py, mip, o);
        for (int i = 0; i < 16; i++) {
            float want[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            if (mip[i] >= 0 && (uint32_t)mip[i] < x.t.num_mips) {
                const kres_subresource *sub = &x.subs[1 + mip[i]];
                if (px[i] >= 0 && py[i] >= 0 && (uint32_t)px[i] < sub->width &&
                    (uint32_t)py[i] < sub->height) {
                    const uint8_t *b = texel(&x, 1 + (uint32_t)mip[i], 0, (uint32_t)px[i], (uint32_t)py[i]);
                    /* BGRA bytes to RGBA */
                    want[0] = (float)b[2] / 255.0f;
                    want[1] = (float)b[1] / 255.0f;
                    want[2] = (float)b[0] / 255.0f;
                    want[3] = (float)b[3] / 255.0f;
                }
            }
            zeros += want[3] == 0.0f;
            for (int c = 0; c < 4; c++)
                bad += o[c * 16 + i] != want[c];
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(zeros > 100); /* the out-of-range reads were exercised */

    uint32_t w = 9, h = 9, n = 9;
    kiln_ps_get_dimensions(&a, 0, 0, &w, &h, &n);
    CHECK_EQ_INT(w, x.subs[1].width);
    CHECK_EQ_INT(h, x.subs[1].height);
    CHECK_EQ_INT(n, x.t.res_mip_levels - 1);
    kiln_ps_get_dimensions(&a, 0, 1, &w, NULL, NULL);
    CHECK_EQ_INT(w, x.subs[2].width);
    kiln_ps_get_dimensions(&a, 0, n, &w, &h, &n);
    CHECK(w == 0 && h == 0 && n == x.t.res_mip_levels - 1);
    kiln_ps_get_dimensions(&a, 1, 0, &w, &h, &n); /* empty slot */
    CHECK(w == 0 && h == 0 && n == 0);
    kiln_ps_get_dimensions(&a, KILN_MAX_SHADER_RESOURCES, 0, &w, &h, &n);
    CHECK(w == 0 && h == 0 && n == 0);
    /* empty slots read zeros in every call */
    float lod[16] = {0}, g[16] = {0}, uu[16] = {0};
    for (int i = 0; i < 64; i++)
        o[i] = 5.0f;
    kiln_ps_sample_level(&a, 3, 0, uu, uu, lod, o);
    int nz = 0;
    for (int i = 0; i < 64; i++)
        nz += o[i] != 0.0f;
    kiln_ps_sample_bias(&a, 3, 0, uu, uu, lod, o);
    for (int i = 0; i < 64; i++)
        nz += o[i] != 0.0f;
    kiln_ps_sample_grad(&a, 3, 0, uu, uu, g, g, g, g, o);
    for (int i = 0; i < 64; i++)
        nz += o[i] != 0.0f;
    kiln_ps_load(&a, 3, px, py, mip, o);
    for (int i = 0; i < 64; i++)
        nz += o[i] != 0.0f;
    CHECK_EQ_INT(nz, 0);
    tex_free(&x);
}

/* SampleCmp: texel values v(x, y) = (x + 4y) / 16 of a 4x4 R32_FLOAT;
 * POINT reads compare one texel (every function), LINEAR at a texel
 * corner averages four comparisons, BORDER compares the border's red,
 * UNORM formats clamp the reference, level zero ignores the LOD, and a
 * plain sampler reads 0. */
static void test_sample_cmp_pcf(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 4, 4, 2, 1);
    for (uint32_t py = 0; py < 4; py++)
        for (uint32_t px = 0; px < 4; px++) {
            float f = (float)(px + 4 * py) / 16.0f;
            put_f(&x, 0, 0, px, py, &f, 1);
        }
    fill_level_f(&x, 1, 2.0f); /* level 1: above every reference */
    kd_sampler s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT,
                                KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP);
    struct kiln_ps_textures pt;
    kiln_ps_args a = args_for(&pt, &x, &s);
    float u[16], v[16], ref[16], o[16];
    for (int i = 0; i < 16; i++) { /* pixel i at texel i's center, 1:1 */
        u[i] = ((float)(i % 4) + 0.5f) / 4.0f;
        v[i] = ((float)(i / 4) + 0.5f) / 4.0f;
        ref[i] = 7.0f / 16.0f;
    }
    int bad = 0;
    for (int f = KILN_COMPARE_NEVER; f <= KILN_COMPARE_ALWAYS; f++) {
        s.cmp = (kiln_compare)f;
        kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
        for (int i = 0; i < 16; i++) {
            float t = (float)i / 16.0f, r = ref[i];
            int want = f == KILN_COMPARE_NEVER ? 0 : f == KILN_COMPARE_LESS ? r < t
                     : f == KILN_COMPARE_EQUAL ? r == t : f == KILN_COMPARE_LESS_EQUAL ? r <= t
                     : f == KILN_COMPARE_GREATER ? r > t : f == KILN_COMPARE_NOT_EQUAL ? r != t
                     : f == KILN_COMPARE_GREATER_EQUAL ? r >= t : 1;
            bad += o[i] != (float)want;
        }
    }
    CHECK_EQ_INT(bad, 0);

    /* LINEAR at the corner of texels (1,1), (2,1), (1,2), (2,2) = 5, 6, 9,
     * 10 sixteenths: a reference of 8/16 with LESS passes two of four */
    s = make_sampler(KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP,
                     KILN_ADDRESS_CLAMP);
    s.cmp = KILN_COMPARE_LESS;
    a = args_for(&pt, &x, &s);
    for (int i = 0; i < 16; i++) {
        u[i] = 0.5f;
        v[i] = 0.5f;
        ref[i] = 8.0f / 16.0f;
    }
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 0.5, 0.0);
    ref[0] = 4.0f / 16.0f; /* below all four */
    ref[1] = 10.0f / 16.0f; /* none above it */
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 1.0, 0.0);
    CHECK_NEAR(o[1], 0.0, 0.0);

    /* BORDER: outside reads compare the border's red (0.25) */
    s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_BORDER,
                     KILN_ADDRESS_BORDER);
    s.cmp = KILN_COMPARE_LESS;
    a = args_for(&pt, &x, &s);
    for (int i = 0; i < 16; i++) {
        u[i] = -0.5f;
        ref[i] = i < 8 ? 0.2f : 0.3f;
    }
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK(o[0] == 1.0f && o[15] == 0.0f);

    /* level zero: a minified block would read level 1 (2.0 passes LESS) */
    s = make_sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP,
                     KILN_ADDRESS_CLAMP);
    s.cmp = KILN_COMPARE_LESS;
    a = args_for(&pt, &x, &s);
    for (int i = 0; i < 16; i++) {
        u[i] = 0.1f + 0.5f * (float)(i % 4); /* two texels a pixel: LOD 1 */
        v[i] = 0.1f + 0.5f * (float)(i / 4);
        ref[i] = 0.99f;
    }
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 1.0, 0.0);
    kiln_ps_sample_cmp_level_zero(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 0.0, 0.0);

    /* a plain sampler compares nothing */
    s.cmp = KILN_COMPARE_DEFAULT;
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 0.0, 0.0);
    tex_free(&x);

    /* UNORM: the reference is clamped to [0, 1] (1.5 <= 1.0 passes) */
    tex y;
    tex_init(&y, KILN_FORMAT_R16_UNORM, 4, 4, 1, 1);
    for (uint32_t py = 0; py < 4; py++)
        memset(texel(&y, 0, 0, 0, py), 0xff, 8);
    s.cmp = KILN_COMPARE_LESS_EQUAL;
    a = args_for(&pt, &y, &s);
    for (int i = 0; i < 16; i++)
        ref[i] = 1.5f;
    kiln_ps_sample_cmp(&a, 0, 0, u, v, ref, o);
    CHECK_NEAR(o[0], 1.0, 0.0);
    tex_free(&y);
}

int main(void)
{
    test_sampler_resolve_defaults();
    test_point_address_modes();
    test_bilinear_centers_and_midpoints();
    test_bilinear_address_modes();
    test_rgba8_kernel_address_modes();
    test_rgba8_kernel_matches_general_path();
    test_prepared_slots_match_unprepared();
    test_point_shortcut();
    test_point_every_byte();
    test_point_offsets_past_int32();
    test_sampler_slot_past_the_last();
    test_trilinear_blends_by_lod_fraction();
    test_mip_point_rounds();
    test_lod_bias_and_clamp();
    test_view_mip_range();
    test_mag_and_min_filters();
    test_format_conversions();
    test_fetch_level_and_slice();
    test_empty_slot_reads_zero();
    test_generate_mips_odd_rgba8();
    test_generate_mips_unorm_rounding();
    test_generate_mips_float_and_ranges();
    test_generated_chain_samples();
    test_sample_level();
    test_sample_bias_grad();
    test_load_and_dimensions();
    test_sample_cmp_pcf();
    return th_exit();
}
