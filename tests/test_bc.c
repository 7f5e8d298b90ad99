/*
 * Block-compressed formats BC1..BC5 (issue 12) against a decoder written
 * here from D3D10's description of the formats (bits read one at a time
 * from the block's little-endian bit stream, palettes in double):
 *
 *  - the decoder's bits pinned: a hash of every texel of 4,096 blocks per
 *    format equals the pre-palette decoder's (the tolerance below would
 *    not notice an ulp);
 *  - every texel of random blocks and of edge blocks (BC1 with c0 > c1,
 *    c0 == c1 and c0 < c1 under all four codes, transparent black; ramp
 *    blocks with e0 > e1, e0 == e1 and e0 < e1 under all eight codes;
 *    BC2's sixteen alpha values), read through a draw by Load and by
 *    POINT sampling at texel centers, for every BC format (the sRGB ones
 *    decoded to linear after the block's interpolation);
 *  - POINT and LINEAR SampleLevel on a 10x6 texture with its full chain
 *    (10x6, 5x3, 2x1, 1x1: every mip but the first partial or smaller
 *    than a block) at random coordinates in and outside [0, 1] under WRAP
 *    and CLAMP, against a bilinear filter over the reference's texels
 *    (8-bit fractions, as kiln's sampler documents);
 *  - Sample and SampleLevel of every BC chain, under every filter and
 *    address mode, equal bit for bit to the same calls on a float copy of
 *    its decoded texels (the sampler's block cache changes no value);
 *  - D3D10's rules: shader resource only, boxes, copy positions and
 *    UpdateSubresource in whole blocks (BOX_BLOCK_ALIGN), a box may reach
 *    the block-aligned size, Map's row pitch is a row of blocks and
 *    returns block rows, generate_mips refuses BC (MIPS_FORMAT), and the
 *    osmesa backend refuses BC textures (BACKEND_FEATURE);
 *  - a capture of BC textures (initial data with a padded pitch, an
 *    update, a DYNAMIC Map) replays to the live image, bit for bit.
 *
 * The decode's interpolation runs in float in kiln and in double here:
 * values agree within 2e-6 (a few float ulps at 1.0); the sRGB curve is
 * applied to that float, so sRGB texels agree within 4e-6.
 */
#include "capture_util.h"
#include "raster/effects.h"
#include "raster/raster.h"
#include "raster_util.h"
#include "resources/texel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 2e-6
#define TOL_SRGB 4e-6

/* ---- the reference decoder ---- */

/* `count` bits of the block's bit stream from bit `start` (bit 0: the
 * lowest bit of byte 0). */
static uint32_t bits(const uint8_t *b, uint32_t start, uint32_t count)
{
    uint32_t v = 0;
    for (uint32_t k = 0; k < count; k++) {
        uint32_t bit = start + k;
        v |= (uint32_t)(b[bit / 8] >> (bit % 8) & 1u) << k;
    }
    return v;
}

static double srgb_to_linear(double c)
{
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* D3D10's color block at texel t: two 5:6:5 endpoints, then 2-bit codes.
 * BC1 (bc1 = 1): c0 <= c1 selects 3 colors and transparent black. */
static void ref_color(const uint8_t *b, int t, int bc1, double o[4])
{
    uint32_t c0 = bits(b, 0, 16), c1 = bits(b, 16, 16);
    double e[2][3] = {{bits(b, 11, 5) / 31.0, bits(b, 5, 6) / 63.0, bits(b, 0, 5) / 31.0},
                      {bits(b, 27, 5) / 31.0, bits(b, 21, 6) / 63.0, bits(b, 16, 5) / 31.0}};
    uint32_t code = bits(b, 32 + 2 * (uint32_t)t, 2);
    int three = bc1 && c0 <= c1;
    for (int c = 0; c < 3; c++) {
        double pal[4];
        pal[0] = e[0][c];
        pal[1] = e[1][c];
        if (three) {
            pal[2] = 0.5 * e[0][c] + 0.5 * e[1][c];
            pal[3] = 0.0;
        } else {
            pal[2] = 2.0 / 3.0 * e[0][c] + 1.0 / 3.0 * e[1][c];
            pal[3] = 1.0 / 3.0 * e[0][c] + 2.0 / 3.0 * e[1][c];
        }
        o[c] = pal[code];
    }
    if (three && code == 3)
        o[3] = 0.0;
}

/* The 8-value / 6-value ramp (BC3 alpha, BC4, BC5). */
static double ref_ramp(const uint8_t *b, int t)
{
    double e0 = b[0] / 255.0, e1 = b[1] / 255.0, pal[8];
    pal[0] = e0;
    pal[1] = e1;
    if (b[0] > b[1]) {
        for (int k = 1; k <= 6; k++) /* pal[k + 1] = ((7 - k) e0 + k e1) / 7 */
            pal[k + 1] = ((7 - k) * e0 + k * e1) / 7.0;
    } else {
        for (int k = 1; k <= 4; k++)
            pal[k + 1] = ((5 - k) * e0 + k * e1) / 5.0;
        pal[6] = 0.0;
        pal[7] = 1.0;
    }
    return pal[bits(b, 16 + 3 * (uint32_t)t, 3)];
}

static int is_srgb(kiln_format f)
{
    return f == KILN_FORMAT_BC1_UNORM_SRGB || f == KILN_FORMAT_BC2_UNORM_SRGB ||
           f == KILN_FORMAT_BC3_UNORM_SRGB;
}

static void ref_decode(kiln_format f, const uint8_t *b, int t, double o[4])
{
    o[0] = o[1] = o[2] = 0.0;
    o[3] = 1.0;
    switch (f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        ref_color(b, t, 1, o);
        break;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB:
        o[3] = bits(b, 4 * (uint32_t)t, 4) / 15.0;
        ref_color(b + 8, t, 0, o);
        break;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB:
        o[3] = ref_ramp(b, t);
        ref_color(b + 8, t, 0, o);
        break;
    case KILN_FORMAT_BC4_UNORM:
        o[0] = ref_ramp(b, t);
        break;
    case KILN_FORMAT_BC5_UNORM:
        o[0] = ref_ramp(b, t);
        o[1] = ref_ramp(b + 8, t);
        break;
    default:
        break;
    }
    if (is_srgb(f))
        for (int c = 0; c < 3; c++)
            o[c] = srgb_to_linear(o[c]);
}

typedef struct bc_case {
    kiln_format f;
    const char *name;
    uint32_t size; /* bytes per block */
} bc_case;

static const bc_case BC[] = {
    {KILN_FORMAT_BC1_UNORM, "BC1_UNORM", 8},  {KILN_FORMAT_BC1_UNORM_SRGB, "BC1_UNORM_SRGB", 8},
    {KILN_FORMAT_BC2_UNORM, "BC2_UNORM", 16}, {KILN_FORMAT_BC2_UNORM_SRGB, "BC2_UNORM_SRGB", 16},
    {KILN_FORMAT_BC3_UNORM, "BC3_UNORM", 16}, {KILN_FORMAT_BC3_UNORM_SRGB, "BC3_UNORM_SRGB", 16},
    {KILN_FORMAT_BC4_UNORM, "BC4_UNORM", 8},  {KILN_FORMAT_BC5_UNORM, "BC5_UNORM", 16},
};
#define NBC (sizeof BC / sizeof BC[0])

/* ---- blocks ---- */

static th_rng rng = {0x9E3779B97F4A7C15ull};

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* A color block with endpoints c0, c1 and texel t's code t % 4 (every
 * code four times). */
static void edge_color(uint8_t *b, uint32_t c0, uint32_t c1)
{
    put16(b, c0);
    put16(b + 2, c1);
    for (int t = 0; t < 16; t++) {
        uint32_t code = (uint32_t)t % 4u, bit = 32 + 2 * (uint32_t)t;
        b[bit / 8] = (uint8_t)(b[bit / 8] & ~(3u << (bit % 8)));
        b[bit / 8] |= (uint8_t)(code << (bit % 8));
    }
}

/* A ramp block with endpoints e0, e1 and texel t's code t % 8. */
static void edge_ramp(uint8_t *b, uint32_t e0, uint32_t e1)
{
    b[0] = (uint8_t)e0;
    b[1] = (uint8_t)e1;
    memset(b + 2, 0, 6);
    for (uint32_t t = 0; t < 16; t++)
        for (uint32_t k = 0; k < 3; k++) {
            uint32_t bit = 16 + 3 * t + k;
            b[bit / 8] |= (uint8_t)(((t % 8u) >> k & 1u) << (bit % 8));
        }
}

/* Edge block k (0..5) of format case fc into b: color c0 > c1, c0 == c1,
 * c0 < c1 (in turn), ramps with e0 > e1, e0 == e1, e0 < e1, and for BC2
 * the sixteen alphas 0..15 (in turn with their reverse). */
static void edge_block(const bc_case *fc, int k, uint8_t *b)
{
    static const uint32_t colors[3][2] = {
        {0xF81Fu, 0x07E0u}, {0x8410u, 0x8410u}, {0x001Fu, 0xFFE0u}};
    static const uint32_t ramps[3][2] = {{200, 13}, {77, 77}, {13, 200}};
    const uint32_t *c = colors[k % 3];
    const uint32_t *r = ramps[(k / 3 + k) % 3];
    switch (fc->f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        edge_color(b, c[0], c[1]);
        break;
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB:
        for (int t = 0; t < 16; t++) {
            uint32_t a = k & 1 ? 15u - (uint32_t)t : (uint32_t)t;
            b[t / 2] = (uint8_t)(t & 1 ? (b[t / 2] & 0x0F) | a << 4 : (b[t / 2] & 0xF0) | a);
        }
        edge_color(b + 8, c[0], c[1]);
        break;
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB:
        edge_ramp(b, r[0], r[1]);
        edge_color(b + 8, c[0], c[1]);
        break;
    case KILN_FORMAT_BC4_UNORM:
        edge_ramp(b, ramps[k % 3][0], ramps[k % 3][1]);
        break;
    default: /* BC5 */
        edge_ramp(b, ramps[k % 3][0], ramps[k % 3][1]);
        edge_ramp(b + 8, ramps[(k + 1) % 3][0], ramps[(k + 1) % 3][1]);
        break;
    }
}

/* bw x bh blocks, tight: the first six edge blocks, the rest random. */
static uint8_t *make_blocks(const bc_case *fc, uint32_t bw, uint32_t bh)
{
    uint8_t *p = calloc((size_t)bw * bh, fc->size);
    for (uint32_t k = 0; k < bw * bh; k++) {
        uint8_t *b = p + (size_t)k * fc->size;
        if (k < 6)
            edge_block(fc, (int)k, b);
        else
            for (uint32_t i = 0; i < fc->size; i++)
                b[i] = (uint8_t)th_next(&rng);
    }
    return p;
}

/* The reference texel (x, y) of a tight bw-blocks-wide level. */
static void ref_texel(const bc_case *fc, const uint8_t *blocks, uint32_t bw, uint32_t x, uint32_t y,
                      double o[4])
{
    const uint8_t *b = blocks + ((size_t)(y / 4) * bw + x / 4) * fc->size;
    ref_decode(fc->f, b, (int)((y % 4) * 4 + x % 4), o);
}

/* ---- through a draw: Load and POINT at texel centers ---- */

#define W 32
#define H 16

static void ps_load(kiln_ps_args *a)
{
    int32_t x[KILN_PS_BLOCK], y[KILN_PS_BLOCK], mip[KILN_PS_BLOCK];
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        x[i] = a->x + i % 4;
        y[i] = a->y + i / 4;
        mip[i] = 0;
    }
    kiln_ps_load(a, 0, x, y, mip, KILN_PS_COLOR(a, 0, 0));
}

static void ps_sample(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                   KILN_PS_COLOR(a, 0, 0));
}

/* Draws W x H pixels with u, v over [0, 1] through fn, POINT sampler. */
static float *draw_into(kiln_device *dev, kiln_context *ctx, kiln_srv srv, kiln_ps_fn fn)
{
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    ru_pipe pipe = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    kiln_pixel_shader ps;
    kiln_pixel_shader_desc pd = {.fn = fn, .num_outputs = 1, .num_varyings = 1};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    ru_bind_pipe(ctx, &pipe);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    kiln_sampler_desc sd = {.min_filter = KILN_FILTER_POINT,
                            .mag_filter = KILN_FILTER_POINT,
                            .mip_filter = KILN_FILTER_POINT};
    kiln_sampler smp;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);
    float v[6 * 8], *p = v;
    const float corner[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1}};
    for (int k = 0; k < 6; k++) {
        p = ru_vtx(p, W, H, corner[k][0] * W, corner[k][1] * H, 0.5f);
        *p++ = corner[k][0];
        *p++ = corner[k][1];
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

static void test_decode_every_texel(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    for (size_t k = 0; k < NBC; k++) {
        const bc_case *fc = &BC[k];
        for (int round = 0; round < 4; round++) { /* 4 x 32 blocks, 6 edge ones each */
            uint8_t *blocks = make_blocks(fc, W / 4, H / 4);
            kiln_texture2d_desc td = {
                W, H, 1, 1, fc->f, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE, 0, 0};
            kiln_subresource_data init = {blocks, W / 4 * fc->size};
            kiln_texture tex;
            kiln_srv srv;
            CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
            CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
            for (int pass = 0; pass < 2; pass++) {
                float *out = draw_into(dev, ctx, srv, pass ? ps_sample : ps_load);
                int bad = 0;
                double tol = is_srgb(fc->f) ? TOL_SRGB : TOL;
                for (uint32_t y = 0; y < H; y++)
                    for (uint32_t x = 0; x < W; x++) {
                        double want[4];
                        ref_texel(fc, blocks, W / 4, x, y, want);
                        for (int c = 0; c < 4; c++)
                            if (!(fabs(out[4 * (y * W + x) + c] - want[c]) <= tol)) {
                                if (bad++ < 3)
                                    fprintf(stderr,
                                            "    %s %s texel (%u,%u) channel %d: %.9g, want %.9g\n",
                                            fc->name, pass ? "sample" : "load", x, y, c,
                                            out[4 * (y * W + x) + c], want[c]);
                            }
                    }
                th_check(bad == 0, fc->name, __FILE__, __LINE__);
                free(out);
            }
            kiln_destroy_srv(dev, srv);
            kiln_destroy_texture(dev, tex);
            free(blocks);
        }
    }
    kiln_device_destroy(dev);
}

/* ---- the decoder's bits pinned ----
 *
 * An FNV-1a hash of the float bits of every texel of 4,096 blocks per
 * format (random bytes from a fixed xorshift; every fifth block with equal
 * color endpoints, every tenth with equal ramp endpoints too). The
 * expected values are the per-texel decoder's before the palette
 * refactoring (e12c092), which the decoder must keep: the tolerance of
 * test_decode_every_texel would not notice an ulp. */
static uint64_t bc_decode_hash(kiln_format f)
{
    uint64_t r = 0x6A09E667F3BCC908ull, h = 0xcbf29ce484222325ull;
    for (int n = 0; n < 4096; n++) {
        uint8_t b[16];
        for (int j = 0; j < 16; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            b[j] = (uint8_t)(r >> 24);
        }
        if (n % 5 == 0) { /* equal endpoints: colors at 0 and 8, ramps at 0 and 8 */
            b[2] = b[0], b[3] = b[1], b[10] = b[8], b[11] = b[9];
            if (n % 10 == 0)
                b[1] = b[0], b[9] = b[8];
        }
        for (uint32_t i = 0; i < 16; i++) {
            float o[4];
            kres_decode_bc(f, b, i, o);
            uint8_t bytes[16];
            memcpy(bytes, o, 16);
            for (int k = 0; k < 16; k++)
                h = (h ^ bytes[k]) * 0x100000001b3ull;
        }
    }
    return h;
}

static void test_decode_pinned(void)
{
    static const uint64_t want[NBC] = {
        0x5e985e89934a258aull, 0x12d5f96d8e9cab26ull, 0x34eb9389a7bb32e0ull,
        0x516011058970f7dbull, 0x3096a0cc138cf17full, 0x551e1fc1b177b060ull,
        0x8bdb5c2524fe0bf7ull, 0x7927d26bc40898f2ull,
    };
    for (size_t k = 0; k < NBC; k++) {
        uint64_t got = bc_decode_hash(BC[k].f);
        if (got != want[k])
            fprintf(stderr, "    %s: decode hash %016llx, want %016llx\n", BC[k].name,
                    (unsigned long long)got, (unsigned long long)want[k]);
        th_check(got == want[k], BC[k].name, __FILE__, __LINE__);
    }
}

/* ---- SampleLevel on a 10x6 chain ---- */

typedef struct chain {
    kr_texture t;
    kres_subresource subs[4];
    uint8_t *mem;
    uint8_t *tight[4]; /* each level's blocks, tight, for the reference */
    uint32_t bw[4];
} chain;

/* w x h (10x6 here) with 4 mips over our own memory, block rows padded
 * past their width (the row pitch is honoured). */
static void chain_init(chain *c, const bc_case *fc, uint32_t w, uint32_t h)
{
    memset(c, 0, sizeof *c);
    size_t off = 0;
    for (uint32_t m = 0; m < 4; m++) {
        kres_subresource *s = &c->subs[m];
        s->width = w >> m ? w >> m : 1;
        s->height = h >> m ? h >> m : 1;
        c->bw[m] = (s->width + 3) / 4;
        uint32_t bh = (s->height + 3) / 4;
        s->row_pitch = c->bw[m] * fc->size + 24;
        s->size = (size_t)s->row_pitch * bh;
        s->offset = off;
        off += s->size + 8;
        c->tight[m] = make_blocks(fc, c->bw[m], bh);
    }
    c->mem = calloc(1, off);
    for (uint32_t m = 0; m < 4; m++)
        for (uint32_t by = 0; by < (c->subs[m].height + 3) / 4; by++)
            memcpy(c->mem + c->subs[m].offset + (size_t)by * c->subs[m].row_pitch,
                   c->tight[m] + (size_t)by * c->bw[m] * fc->size, (size_t)c->bw[m] * fc->size);
    c->t.data = c->mem;
    c->t.subs = c->subs;
    c->t.format = fc->f;
    c->t.res_mip_levels = 4;
    c->t.num_mips = 4;
}

static void chain_free(chain *c)
{
    free(c->mem);
    for (int m = 0; m < 4; m++)
        free(c->tight[m]);
}

static int32_t ref_address(int32_t i, int32_t n, kiln_address a)
{
    if (a == KILN_ADDRESS_WRAP)
        return ((i % n) + n) % n;
    return i < 0 ? 0 : i >= n ? n - 1 : i; /* CLAMP */
}

/* The reference sample of level m at (u, v): POINT reads texel
 * floor(u w); LINEAR blends around u w - 0.5 with the fraction rounded to
 * 1/256 (kiln's documented fixed-point weights). */
static void ref_sample(const bc_case *fc, const chain *c, uint32_t m, kiln_filter filter,
                       kiln_address a, double u, double v, double o[4])
{
    int32_t w = (int32_t)c->subs[m].width, h = (int32_t)c->subs[m].height;
    if (filter == KILN_FILTER_POINT) {
        int32_t x = ref_address((int32_t)floor(u * w), w, a),
                y = ref_address((int32_t)floor(v * h), h, a);
        ref_texel(fc, c->tight[m], c->bw[m], (uint32_t)x, (uint32_t)y, o);
        return;
    }
    double fx = u * w - 0.5, fy = v * h - 0.5;
    int32_t x0 = (int32_t)floor(fx), y0 = (int32_t)floor(fy);
    double ax = floor((fx - x0) * 256.0 + 0.5) / 256.0, ay = floor((fy - y0) * 256.0 + 0.5) / 256.0;
    for (int ch = 0; ch < 4; ch++)
        o[ch] = 0.0;
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            double t[4], wt = (dx ? ax : 1.0 - ax) * (dy ? ay : 1.0 - ay);
            ref_texel(fc, c->tight[m], c->bw[m], (uint32_t)ref_address(x0 + dx, w, a),
                      (uint32_t)ref_address(y0 + dy, h, a), t);
            for (int ch = 0; ch < 4; ch++)
                o[ch] += wt * t[ch];
        }
}

static void test_sample_level_chain(void)
{
    for (size_t k = 0; k < NBC; k++) {
        const bc_case *fc = &BC[k];
        chain c;
        chain_init(&c, fc, 10, 6);
        int bad = 0;
        for (int fi = 0; fi < 2; fi++)
            for (int ai = 0; ai < 2; ai++) {
                kiln_filter f = fi ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
                kiln_address a = ai ? KILN_ADDRESS_WRAP : KILN_ADDRESS_CLAMP;
                kiln_sampler_desc d = {.min_filter = f,
                                       .mag_filter = f,
                                       .mip_filter = KILN_FILTER_POINT,
                                       .address_u = a,
                                       .address_v = a};
                kd_sampler s;
                kd_sampler_resolve(&d, &s);
                struct kiln_ps_textures pt;
                memset(&pt, 0, sizeof pt);
                pt.tex[0] = c.t;
                pt.samp[0] = &s;
                kiln_ps_args args;
                memset(&args, 0, sizeof args);
                args.textures = &pt;
                for (int rep = 0; rep < 64; rep++) {
                    float u[16], v[16], lod[16], out[64];
                    for (int i = 0; i < 16; i++) {
                        /* coordinates on a 1/1024 grid in [-0.5, 1.5) */
                        u[i] = (float)((int)th_below(&rng, 2048) - 512) / 1024.0f;
                        v[i] = (float)((int)th_below(&rng, 2048) - 512) / 1024.0f;
                        lod[i] = (float)th_below(&rng, 4);
                    }
                    kiln_ps_sample_level(&args, 0, 0, u, v, lod, out);
                    double tol = (is_srgb(fc->f) ? TOL_SRGB : TOL) * 2.0;
                    for (int i = 0; i < 16; i++) {
                        double want[4];
                        ref_sample(fc, &c, (uint32_t)lod[i], f, a, u[i], v[i], want);
                        for (int ch = 0; ch < 4; ch++)
                            if (!(fabs(out[ch * 16 + i] - want[ch]) <= tol) && bad++ < 3)
                                fprintf(stderr,
                                        "    %s %s %s lod %g (%g,%g) ch %d: %.9g, want %.9g\n",
                                        fc->name, fi ? "LINEAR" : "POINT", ai ? "WRAP" : "CLAMP",
                                        lod[i], u[i], v[i], ch, out[ch * 16 + i], want[ch]);
                    }
                }
            }
        th_check(bad == 0, fc->name, __FILE__, __LINE__);
        chain_free(&c);
    }
}

/* ---- the same taps as the decoded texels ----
 *
 * A BC view samples exactly as a float texture holding its decoded texels
 * (the general path's read loops weigh each tap's floats in the same
 * order): every BC format's chain (10x6 and 64x48, 4 mips) against a copy
 * decoded by kr_texel_fetch
 * into R32G32B32A32_FLOAT (R32 for BC4, R32G32 for BC5), Sample (LOD from
 * the quads, so also minified and trilinear) and SampleLevel at random
 * coordinates, under every filter and every address mode (u and v the same
 * or different), bit for bit. The BC sampling path (sample.c's sample_bc, every address mode but
 * BORDER) and its block cache must not change a value. */

static kiln_format decoded_format(kiln_format f, int *nch)
{
    *nch = f == KILN_FORMAT_BC4_UNORM ? 1 : f == KILN_FORMAT_BC5_UNORM ? 2 : 4;
    return *nch == 1 ? KILN_FORMAT_R32_FLOAT
           : *nch == 2 ? KILN_FORMAT_R32G32_FLOAT
                       : KILN_FORMAT_R32G32B32A32_FLOAT;
}

/* reach (NULL: not kept): per format k and address pair ai, the blocks
 * the BC kernels sampled (kr_bc_wide_force(2) counts them). */
static void sample_matches_decoded(uint32_t w, uint32_t h, uint32_t mips, uint64_t reach[][10])
{
    for (size_t k = 0; k < NBC; k++) {
        const bc_case *fc = &BC[k];
        chain c;
        chain_init(&c, fc, w, h);
        c.t.num_mips = mips; /* 1: a view of level 0 alone */
        int nch;
        kr_texture ft = c.t;
        ft.format = decoded_format(fc->f, &nch);
        kres_subresource fsubs[4];
        size_t off = 0;
        for (uint32_t m = 0; m < 4; m++) {
            fsubs[m] = c.subs[m];
            fsubs[m].row_pitch = c.subs[m].width * 4u * (uint32_t)nch + 16u; /* padded too */
            fsubs[m].size = (size_t)fsubs[m].row_pitch * c.subs[m].height;
            fsubs[m].offset = off;
            off += fsubs[m].size;
        }
        uint8_t *fmem = calloc(1, off);
        for (uint32_t m = 0; m < 4; m++)
            for (uint32_t y = 0; y < c.subs[m].height; y++)
                for (uint32_t x = 0; x < c.subs[m].width; x++) {
                    float t[4];
                    kr_texel_fetch(&c.t, m, x, y, t);
                    memcpy(fmem + fsubs[m].offset + (size_t)y * fsubs[m].row_pitch +
                               (size_t)x * 4u * (uint32_t)nch,
                           t, 4u * (size_t)nch);
                }
        ft.data = fmem;
        ft.subs = fsubs;
        int bad = 0;
        static const kiln_address modes[5] = {KILN_ADDRESS_WRAP, KILN_ADDRESS_CLAMP,
                                              KILN_ADDRESS_MIRROR, KILN_ADDRESS_BORDER,
                                              KILN_ADDRESS_MIRROR_ONCE};
        for (int fi = 0; fi < 8; fi++)
            for (int ai = 0; ai < 10; ai++) { /* u's mode, v's the same or the next */
                const uint64_t reach0 = kr_bc_wide_count();
                kiln_sampler_desc d = {
                    .min_filter = fi & 1 ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                    .mag_filter = fi & 2 ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                    .mip_filter = fi & 4 ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                    .address_u = modes[ai / 2],
                    .address_v = modes[(ai / 2 + ai % 2) % 5],
                    .border_color = {0.25f, 0.5f, 0.75f, 0.375f},
                    .max_lod = 1000.0f,
                };
                kd_sampler s;
                kd_sampler_resolve(&d, &s);
                struct kiln_ps_textures pb, pf;
                memset(&pb, 0, sizeof pb);
                memset(&pf, 0, sizeof pf);
                pb.tex[0] = c.t;
                pf.tex[0] = ft;
                pb.samp[0] = pf.samp[0] = &s;
                kiln_ps_args ab, af;
                memset(&ab, 0, sizeof ab);
                memset(&af, 0, sizeof af);
                ab.textures = &pb;
                af.textures = &pf;
                for (int rep = 0; rep < 48; rep++) {
                    float u[16], v[16], lod[16], ob[64], of[64];
                    /* each quad from its own corner, its pixels a spread
                     * of 0 (magnified) to 8 texels of mip 0 apart, so
                     * Sample's LOD covers every level */
                    static const float tpp[7] = {0.0f, 0.25f, 0.5f, 1.0f, 2.0f, 4.0f, 8.0f};
                    const float spread = tpp[th_below(&rng, 7)] / (float)w;
                    float ub[4], vb[4];
                    for (int q = 0; q < 4; q++) {
                        ub[q] = (float)((int)th_below(&rng, 4096) - 1024) / 2048.0f;
                        vb[q] = (float)((int)th_below(&rng, 4096) - 1024) / 2048.0f;
                    }
                    for (int i = 0; i < 16; i++) {
                        int q = i / 8 * 2 + i % 4 / 2;
                        u[i] = ub[q] + spread * (float)(i % 2);
                        v[i] = vb[q] + spread * (float)(i / 4 % 2);
                        lod[i] = (float)th_below(&rng, 64) / 16.0f - 0.5f;
                    }
                    for (int call = 0; call < 2; call++) {
                        if (call) {
                            kiln_ps_sample_level(&ab, 0, 0, u, v, lod, ob);
                            kiln_ps_sample_level(&af, 0, 0, u, v, lod, of);
                        } else {
                            kiln_ps_sample(&ab, 0, 0, u, v, ob);
                            kiln_ps_sample(&af, 0, 0, u, v, of);
                        }
                        if (memcmp(ob, of, sizeof ob) && bad++ < 3)
                            for (int j = 0; j < 64; j++)
                                if (memcmp(&ob[j], &of[j], sizeof ob[j])) {
                                    fprintf(stderr,
                                            "    %s filter %d address %d %s pixel %d ch %d: "
                                            "%.9g, decoded %.9g\n",
                                            fc->name, fi, ai, call ? "level" : "sample", j % 16,
                                            j / 16, ob[j], of[j]);
                                    break;
                                }
                    }
                }
                if (reach)
                    reach[k][ai] += kr_bc_wide_count() - reach0;
            }
        th_check(bad == 0, fc->name, __FILE__, __LINE__);
        free(fmem);
        chain_free(&c);
    }
}

static void test_sample_matches_decoded(void)
{
    /* Magnified blocks go to the AVX-512 or the AVX2 kernel where the CPU
     * has them (sample.c's bc_wide): the
     * comparison runs at every level the CPU has, counting the kernel's
     * blocks, so that it checks each kernel's bits as well as
     * sample_bc's */
    const kr_simd initial = kr_effects_active_level();
    static const kr_simd levels[3] = {KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    static const char *const names[3] = {"SSE2 (no kernel)", "AVX2", "AVX-512"};
    kr_bc_wide_force(2);
    for (int l = 0; l < 3; l++) {
        if (kr_effects_force_level(levels[l]) != KILN_OK)
            continue; /* not on this CPU */
        uint64_t wide0 = kr_bc_wide_count();
        sample_matches_decoded(10, 6, 4, NULL);
        /* 16x12 blocks on mip 0, 256 in the chain: a call's taps fall in
         * more blocks than the sampler keeps decoded, so entries are
         * replaced while a block's pixels are read */
        sample_matches_decoded(64, 48, 4, NULL);
        /* powers of two: WRAP and MIRROR in the kernels too; and views of
         * one level (sample_block's one-level way to them) */
        uint64_t reach[NBC][10];
        memset(reach, 0, sizeof reach);
        sample_matches_decoded(32, 16, 4, reach);
        sample_matches_decoded(32, 16, 1, NULL);
        sample_matches_decoded(10, 6, 1, NULL);
        uint64_t wide = kr_bc_wide_count() - wide0;
        if (levels[l] >= KR_SIMD_AVX2) {
            CHECK(wide > 100);
            /* on 32x16, every BC format (sRGB too) under every pair of
             * address modes without BORDER reached the kernel */
            int missed = 0;
            for (size_t k = 0; k < NBC; k++) {
                for (int ai = 0; ai < 10; ai++)
                    if (ai / 2 != 3 && (ai / 2 + ai % 2) % 5 != 3 && !reach[k][ai] && missed++ < 3)
                        fprintf(stderr, "    %s address pair %d: no block in the kernel\n",
                                BC[k].name, ai);
            }
            CHECK_EQ_INT(missed, 0);
        } else {
            CHECK_EQ_INT(wide, 0);
        }
        fprintf(stderr, "    %s: BC blocks sampled by the kernel: %llu\n", names[l],
                (unsigned long long)wide);
    }
    kr_bc_wide_force(0);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
}

/* ---- D3D10's rules on a device ---- */

/* The bytes of subresource `sub` of `tex` through a STAGING copy and a
 * READ Map: `rows` rows of `row` bytes, tight. Returns Map's row pitch. */
static uint32_t read_blocks(kiln_device *dev, kiln_texture tex, uint32_t sub, uint32_t row,
                            uint32_t rows, uint8_t *out)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture2d_desc d;
    CHECK_RESULT(kiln_texture_get_desc(dev, tex, &d), KILN_OK);
    d.usage = KILN_USAGE_STAGING;
    d.bind_flags = 0;
    d.cpu_access = KILN_CPU_ACCESS_READ;
    kiln_texture st;
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &st), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(st), kiln_texture_resource(tex)),
                 KILN_OK);
    kiln_mapped_subresource m;
    uint32_t pitch = 0;
    if (kiln_map(ctx, kiln_texture_resource(st), sub, KILN_MAP_READ, 0, &m) == KILN_OK) {
        pitch = m.row_pitch;
        for (uint32_t y = 0; y < rows; y++)
            memcpy(out + (size_t)y * row, (const uint8_t *)m.data + (size_t)y * m.row_pitch, row);
        CHECK_EQ_INT(m.depth_pitch >= rows * m.row_pitch, 1);
        CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(st), sub), KILN_OK);
    } else {
        CHECK(0);
    }
    kiln_destroy_texture(dev, st);
    return pitch;
}

static void test_rules(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    th_logs.quiet = 1;
    kiln_texture tex = {0}, t2 = {0};
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_BC1_UNORM), 8);
    CHECK_EQ_INT(kiln_format_size(KILN_FORMAT_BC5_UNORM), 16);
    CHECK_EQ_INT(kiln_format_block_dim(KILN_FORMAT_BC3_UNORM_SRGB), 4);
    CHECK_EQ_INT(kiln_format_block_dim(KILN_FORMAT_R8G8B8A8_UNORM), 1);
    CHECK_EQ_INT(kiln_format_block_dim(KILN_FORMAT_UNKNOWN), 0);

    /* shader resource only */
    kiln_texture2d_desc td = {10,
                              6,
                              1,
                              1,
                              KILN_FORMAT_BC1_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET,
                              0, 0};
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_INVALID_ARG,
                KILN_LOG_FORMAT_BIND_MISMATCH);
    td.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_INVALID_ARG,
                KILN_LOG_FORMAT_BIND_MISMATCH);

    /* not a vertex format */
    kiln_vertex_shader vs = ru_make_vs(dev, 1, 0);
    kiln_input_layout_desc ld = {.num_elements = 1, .elements = {{.format = KILN_FORMAT_BC1_UNORM}}};
    kiln_input_layout il;
    CHECK_FAILS(kiln_create_input_layout(dev, &ld, vs, &il), KILN_E_INVALID_ARG, KILN_LOG_LAYOUT_DESC);
    kiln_destroy_vertex_shader(dev, vs);

    /* 10x6: 3x2 blocks; initial data with a padded pitch */
    uint8_t init_bytes[2 * 40], up[2 * 16], got[2 * 24];
    for (size_t i = 0; i < sizeof init_bytes; i++)
        init_bytes[i] = (uint8_t)(i * 7 + 1);
    for (size_t i = 0; i < sizeof up; i++)
        up[i] = (uint8_t)(200 + i);
    td.bind_flags = KILN_BIND_SHADER_RESOURCE;
    kiln_subresource_data init = {init_bytes, 40};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    kiln_resource res = kiln_texture_resource(tex);
    CHECK_EQ_INT(read_blocks(dev, tex, 0, 24, 2, got) >= 24, 1);
    CHECK(memcmp(got, init_bytes, 24) == 0 && memcmp(got + 24, init_bytes + 40, 24) == 0);

    /* UpdateSubresource in blocks: columns 4..10 (the right edge), rows
     * 0..6: two blocks across, two block rows, pitch 16 */
    kiln_box box = {4, 0, 0, 10, 6, 1};
    CHECK_RESULT(kiln_update_subresource(ctx, res, 0, &box, up, 16, 0), KILN_OK);
    CHECK_EQ_INT(read_blocks(dev, tex, 0, 24, 2, got) >= 24, 1);
    CHECK(memcmp(got, init_bytes, 8) == 0 && memcmp(got + 8, up, 16) == 0);
    CHECK(memcmp(got + 24, init_bytes + 40, 8) == 0 && memcmp(got + 32, up + 16, 16) == 0);
    box = (kiln_box){2, 0, 0, 6, 4, 1};
    CHECK_FAILS(kiln_update_subresource(ctx, res, 0, &box, up, 16, 0), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_BLOCK_ALIGN);
    box = (kiln_box){0, 0, 0, 6, 4, 1}; /* 6 is neither a multiple of 4 nor the edge */
    CHECK_FAILS(kiln_update_subresource(ctx, res, 0, &box, up, 16, 0), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_BLOCK_ALIGN);
    box = (kiln_box){0, 2, 0, 4, 6, 1};
    CHECK_FAILS(kiln_update_subresource(ctx, res, 0, &box, up, 16, 0), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_BLOCK_ALIGN);
    box = (kiln_box){8, 4, 0, 12, 8, 1}; /* the block-aligned size: allowed */
    CHECK_RESULT(kiln_update_subresource(ctx, res, 0, &box, up, 8, 0), KILN_OK);
    box = (kiln_box){8, 4, 0, 16, 8, 1};
    CHECK_FAILS(kiln_update_subresource(ctx, res, 0, &box, up, 8, 0), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_INVALID);
    box = (kiln_box){0, 0, 0, 8, 4, 1}; /* a row of the box is 16 bytes */
    CHECK_FAILS(kiln_update_subresource(ctx, res, 0, &box, up, 12, 0), KILN_E_INVALID_ARG,
                KILN_LOG_ROW_PITCH_INVALID);
    CHECK_EQ_INT(read_blocks(dev, tex, 0, 24, 2, got) >= 24, 1);
    CHECK(memcmp(got + 40, up, 8) == 0); /* block (2, 1) */

    /* CopySubresourceRegion in blocks, into a 2x2 mip (one whole block);
     * mip 2 of an 8x8 */
    kiln_texture2d_desc td2 = {
        8, 8, 3, 1, KILN_FORMAT_BC1_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td2, NULL, &t2), KILN_OK);
    kiln_resource r2 = kiln_texture_resource(t2);
    box = (kiln_box){4, 4, 0, 8, 6, 1}; /* block (1, 1) of the 10x6 */
    CHECK_RESULT(kiln_copy_subresource_region(ctx, r2, 2, 0, 0, 0, res, 0, &box), KILN_OK);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, r2, 0, 2, 0, 0, res, 0, &box), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_BLOCK_ALIGN);
    kiln_box odd = {1, 0, 0, 4, 4, 1};
    CHECK_FAILS(kiln_copy_subresource_region(ctx, r2, 0, 0, 0, 0, res, 0, &odd), KILN_E_INVALID_ARG,
                KILN_LOG_BOX_BLOCK_ALIGN);
    kiln_box wide = {0, 0, 0, 10, 4, 1}; /* three blocks into a two-block row */
    CHECK_FAILS(kiln_copy_subresource_region(ctx, r2, 0, 0, 0, 0, res, 0, &wide),
                KILN_E_INVALID_ARG, KILN_LOG_BOX_INVALID);
    CHECK_EQ_INT(read_blocks(dev, t2, 2, 8, 1, got) >= 8, 1);
    CHECK(memcmp(got, up + 16, 8) == 0);
    /* the 2x2 mip's block back into the 10x6 at (8, 4) */
    CHECK_RESULT(kiln_copy_subresource_region(ctx, res, 0, 8, 4, 0, r2, 2, NULL), KILN_OK);
    CHECK_EQ_INT(read_blocks(dev, tex, 0, 24, 2, got) >= 24, 1);
    CHECK(memcmp(got + 40, up + 16, 8) == 0);

    /* Map of a DYNAMIC BC3: a row pitch of one block row, block rows */
    kiln_texture2d_desc td3 = {6,
                               5,
                               1,
                               1,
                               KILN_FORMAT_BC3_UNORM,
                               KILN_USAGE_DYNAMIC,
                               KILN_BIND_SHADER_RESOURCE,
                               KILN_CPU_ACCESS_WRITE, 0};
    kiln_texture t3;
    CHECK_RESULT(kiln_create_texture2d(dev, &td3, NULL, &t3), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(t3), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                 KILN_OK);
    CHECK(m.row_pitch >= 32 && m.depth_pitch >= 2 * m.row_pitch);
    for (uint32_t y = 0; y < 2; y++)
        memset((uint8_t *)m.data + (size_t)y * m.row_pitch, 0x5A + (int)y, 32);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(t3), 0), KILN_OK);

    /* generate_mips refuses BC */
    kiln_srv srv;
    CHECK_RESULT(kiln_create_srv(dev, t2, NULL, &srv), KILN_OK);
    CHECK_FAILS(kiln_generate_mips(ctx, srv), KILN_E_INVALID_ARG, KILN_LOG_MIPS_FORMAT);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, t3);
    kiln_destroy_texture(dev, t2);
    kiln_destroy_texture(dev, tex);
    kiln_device_destroy(dev);

    /* the osmesa backend refuses BC textures at creation */
    kiln_device *gl = th_osmesa_device();
    if (gl) {
        td.bind_flags = KILN_BIND_SHADER_RESOURCE;
        for (size_t k = 0; k < NBC; k++) {
            td.format = BC[k].f;
            CHECK_FAILS(kiln_create_texture2d(gl, &td, NULL, &tex), KILN_E_UNSUPPORTED,
                        KILN_LOG_BACKEND_FEATURE);
        }
        kiln_device_destroy(gl);
    }
    th_logs.quiet = 0;
}

/* ---- capture and replay ---- */

/* Pixel x < 16 loads texel (x, y) of slot 0, the others (x - 16, y) of
 * slot 1. */
static void ps_load2(kiln_ps_args *a)
{
    int32_t x[KILN_PS_BLOCK], y[KILN_PS_BLOCK], mip[KILN_PS_BLOCK];
    uint32_t slot = a->x >= 16 ? 1 : 0;
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        x[i] = a->x + i % 4 - (int32_t)(16 * slot);
        y[i] = a->y + i / 4;
        mip[i] = 0;
    }
    kiln_ps_load(a, slot, x, y, mip, KILN_PS_COLOR(a, 0, 0));
}

static const kiln_pixel_shader_desc LOAD2_PS = {
    .fn = ps_load2, .num_outputs = 1, .num_varyings = 1};
static const kiln_vertex_shader_desc PASS_VS = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};

static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.load2", &LOAD2_PS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.pass", &PASS_VS), KILN_OK);
}

static void test_capture_replay(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_capture_begin(dev, "bc.kcap"), KILN_OK);
    register_shaders(dev, NULL);
    const bc_case *b3 = &BC[4], *b1 = &BC[0]; /* BC3_UNORM, BC1_UNORM */
    /* 14x9 BC3 with 2 mips (4x3 blocks, then 2x2), padded pitches */
    uint8_t *m0 = make_blocks(b3, 4, 3), *m1 = make_blocks(b3, 2, 2);
    uint8_t pad0[3 * 80], pad1[2 * 40];
    for (int r = 0; r < 3; r++)
        memcpy(pad0 + r * 80, m0 + r * 64, 64);
    for (int r = 0; r < 2; r++)
        memcpy(pad1 + r * 40, m1 + r * 32, 32);
    kiln_subresource_data init[2] = {{pad0, 80}, {pad1, 40}};
    kiln_texture2d_desc td = {14, 9, 2, 1, b3->f, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture ta, tb;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &ta), KILN_OK);
    uint8_t *up = make_blocks(b3, 2, 1);
    kiln_box box = {8, 4, 0, 14, 8, 1};
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(ta), 0, &box, up, 32, 0),
                 KILN_OK);
    kiln_texture2d_desc dd = {15, 16, 1, 1, b1->f, KILN_USAGE_DYNAMIC, KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &tb), KILN_OK);
    uint8_t *dyn = make_blocks(b1, 4, 4);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(tb), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                 KILN_OK);
    for (int r = 0; r < 4; r++)
        memcpy((uint8_t *)m.data + (size_t)r * m.row_pitch, dyn + r * 32, 32);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(tb), 0), KILN_OK);
    kiln_srv srv[2];
    CHECK_RESULT(kiln_create_srv(dev, ta, NULL, &srv[0]), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tb, NULL, &srv[1]), KILN_OK);

    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &PASS_VS, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &LOAD2_PS, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 2, srv), KILN_OK);
    float v[6 * 8], *p = v;
    const float corner[6][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 1}};
    for (int k = 0; k < 6; k++) {
        p = ru_vtx(p, W, H, corner[k][0] * W, corner[k][1] * H, 0.5f);
        for (int c = 0; c < 4; c++)
            *p++ = 0.0f;
    }
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    float *live = ru_read_f32(dev, &rt);
    /* the live image is the reference decode (texels past a texture: 0) */
    int bad = 0;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            double want[4] = {0, 0, 0, 0};
            uint32_t tx = x % 16;
            if (x < 16 && tx < 14 && y < 9) {
                int upd = tx >= 8 && y >= 4 && y < 8;
                ref_texel(b3, upd ? up : m0, upd ? 2 : 4, upd ? tx - 8 : tx, upd ? y - 4 : y, want);
            } else if (x >= 16 && tx < 15) {
                ref_texel(b1, dyn, 4, tx, y, want);
            }
            for (int c = 0; c < 4; c++)
                bad += !(fabs(live[4 * (y * W + x) + c] - want[c]) <= TOL);
        }
    CHECK_EQ_INT(bad, 0);

    size_t len;
    uint8_t *bytes = cu_read("bc.kcap", &len);
    CHECK(bytes != NULL);
    for (int mode = 0; bytes && mode < 2; mode++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, mode ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3,
                               register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = NULL;
        for (uint32_t k = 0; k < out.n && !t; k++)
            if (out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].width == W && out.v[k].bpp == 16)
                t = &out.v[k];
        CHECK(t != NULL);
        if (t)
            CHECK(memcmp(t->pixels, live, (size_t)W * H * 16) == 0);
        cu_free(&out);
    }
    free(bytes);
    remove("bc.kcap");
    free(live);
    free(m0);
    free(m1);
    free(up);
    free(dyn);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
    kiln_destroy_srv(dev, srv[0]);
    kiln_destroy_srv(dev, srv[1]);
    kiln_destroy_texture(dev, ta);
    kiln_destroy_texture(dev, tb);
    kiln_device_destroy(dev);
}

int main(void)
{
    test_capture_replay();
    test_decode_every_texel();
    test_decode_pinned();
    test_sample_level_chain();
    test_sample_matches_decoded();
    test_rules();
    return th_exit();
}
