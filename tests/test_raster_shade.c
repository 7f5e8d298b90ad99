/*
 * test_raster_shade: the whole-block shading of KILN_EFFECT_VERTEX_COLOR,
 * KILN_EFFECT_LIT and KILN_EFFECT_TEXTURE_COLOR (kr_shade_select ->
 * pixel_avx2.c's kr_shade_color_avx2 / kr_shade_lit_avx2, fused_avx2.c's
 * kr_fused_shade_tc_avx2) writes exactly the bytes the general path
 * writes (shade_block -> interpolation -> the effect's pixel kernel ->
 * output).
 *
 * 1. Selection, on a kd_state / kr_drawx / kr_fb built by hand: each
 *    effect's kernel of every level is taken (they give the same bits),
 *    and any single broken condition refuses it (not the AVX2 level, no
 *    early depth test, other outputs, no write call chosen, a component
 *    the effect reads not interpolated, another function).
 * 2. The first two called directly on hand-made triangles (random planes,
 *    perspective and constant 1/w, random coverage masks, RGBA8 / BGRA8,
 *    constant buffers whole, short or missing) against an oracle:
 *    kr_interpolate_avx2, the effect's scalar kernel (effects.c) and the
 *    draw's write call, into a second copy of the same target. Every byte
 *    must match, uncovered pixels untouched. This proves the path runs and
 *    writes: the API comparison alone could not tell "specialized and
 *    equal" from "never taken".
 * 3. Through the public API: random overlapping perspective triangles,
 *    rendered with the effect's pixel shader (the specialized path) and
 *    with a desc identical but for `fn`, a wrapper of the same scalar
 *    kernel (the general path: selection keys on the function). Random
 *    blend factors, ops and write masks, every depth function, writes on
 *    or off, stencil with random ops, targets whose sides are not
 *    multiples of 4 (partial blocks), degenerate normals and constant
 *    buffers; for the texture effect, random RGBA8 / BGRA8 textures (one
 *    level or a chain) under random filters and address modes. Color and
 *    depth-stencil bytes must match.
 *
 * 2 and 3 need a CPU with AVX2 (the level the paths exist at); 3 runs at
 * each such level, forced with kr_effects_force_level.
 */
#include "raster/effects.h"
#include "raster/prim.h"
#include "raster/raster.h"
#include "raster_util.h"

#include <stdio.h>

#define B KILN_PS_BLOCK

/* The general path's pixel shaders: the effects' scalar kernels, reached
 * through a function of the test's own. */
static void ps_color_general(kiln_ps_args *a) { kr_effects_scalar.ps[KILN_EFFECT_VERTEX_COLOR](a); }
static void ps_lit_general(kiln_ps_args *a) { kr_effects_scalar.ps[KILN_EFFECT_LIT](a); }
static void ps_tc_general(kiln_ps_args *a) { kr_effects_scalar.ps[KILN_EFFECT_TEXTURE_COLOR](a); }

/* ==== 1. selection ==== */

static struct {
    kd_state s;
    kr_drawx dx;
    kr_fb fb;
    uint8_t rt[16 * 16 * 4];
} U;

/* An eligible draw of effect e: its kernel at `kernels`, one output into
 * an RGBA8 target written by one call (out1 1), early depth test. */
static void unit_init(kiln_effect e, const kr_effect_kernels *kernels)
{
    memset(&U, 0, sizeof U);
    U.s.ps = kernels->ps[e];
    U.s.ps_outputs = 1;
    U.s.blend[0].write_mask = 15u;
    U.dx.s = &U.s;
    U.dx.wide = 1;
    U.dx.early_z = 1;
    U.dx.nvary = e == KILN_EFFECT_VERTEX_COLOR ? 1 : 2;
    U.dx.vmask = e == KILN_EFFECT_LIT ? 0x7Fu : e == KILN_EFFECT_TEXTURE_COLOR ? 0x3Fu : 0xFu;
    U.dx.out1 = 1;
    U.fb.rt[0] = U.rt;
    U.fb.rt_pitch[0] = 64;
    U.fb.rt_format[0] = KILN_FORMAT_R8G8B8A8_UNORM;
    U.fb.nrt = 1;
    U.fb.width = U.fb.height = 16;
    U.fb.samples = 1;
}

static void ps_other(kiln_ps_args *a) { (void)a; }

#define SHADE_CASE(e, kernels, what, change, expect)                                               \
    do {                                                                                           \
        unit_init(e, kernels);                                                                     \
        change;                                                                                    \
        kr_shade_fn got_ = kr_shade_select(&U.dx, &U.fb);                                          \
        th_check(got_ == (expect), "kr_shade_select: " what, __FILE__, __LINE__);                  \
        if (got_ != (expect))                                                                      \
            fprintf(stderr, "    %s (%s, effect %d)\n", what, (kernels)->name, (int)(e));          \
    } while (0)

static void test_selection(void)
{
#if KR_EFFECTS_X86
    /* the tables exist whatever this CPU runs; only their pointers count */
    const kr_effect_kernels *tables[] = {&kr_effects_scalar, &kr_effects_sse2, &kr_effects_avx2,
                                         &kr_effects_avx512};
    uint32_t cases = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        const kr_effect_kernels *k = tables[t];
        const kiln_effect lit = KILN_EFFECT_LIT, col = KILN_EFFECT_VERTEX_COLOR;
        SHADE_CASE(lit, k, "lit, eligible", (void)0, kr_shade_lit_avx2);
        SHADE_CASE(col, k, "vertex color, eligible", (void)0, kr_shade_color_avx2);
        SHADE_CASE(lit, k, "lit, nothing written (out1 2)", U.dx.out1 = 2, kr_shade_lit_avx2);
        SHADE_CASE(lit, k, "lit, blending and a depth buffer",
                   (U.s.blend[0].enable = 1, U.s.depth_enable = 1, U.fb.ds = U.rt),
                   kr_shade_lit_avx2);
        SHADE_CASE(lit, k, "lit, a desc with more varyings", (U.dx.nvary = 3, U.dx.vmask = 0xFFFu),
                   kr_shade_lit_avx2);
        SHADE_CASE(col, k, "vertex color, BGRA8 target",
                   U.fb.rt_format[0] = KILN_FORMAT_B8G8R8A8_UNORM, kr_shade_color_avx2);
        SHADE_CASE(lit, k, "lit, not the AVX2 level", U.dx.wide = 0, NULL);
        SHADE_CASE(col, k, "vertex color, not the AVX2 level", U.dx.wide = 0, NULL);
        SHADE_CASE(lit, k, "lit, no early depth test", U.dx.early_z = 0, NULL);
        SHADE_CASE(col, k, "vertex color, no early depth test", U.dx.early_z = 0, NULL);
        SHADE_CASE(lit, k, "lit, ps_outputs 2", U.s.ps_outputs = 2, NULL);
        SHADE_CASE(col, k, "vertex color, ps_outputs 0", U.s.ps_outputs = 0, NULL);
        SHADE_CASE(lit, k, "lit, output() needed (out1 0)", U.dx.out1 = 0, NULL);
        SHADE_CASE(col, k, "vertex color, output() needed (out1 0)", U.dx.out1 = 0, NULL);
        SHADE_CASE(lit, k, "lit, one varying", (U.dx.nvary = 1, U.dx.vmask = 0xFu), NULL);
        SHADE_CASE(lit, k, "lit, normal z not interpolated", U.dx.vmask = 0x3Fu, NULL);
        SHADE_CASE(lit, k, "lit, color alpha not interpolated", U.dx.vmask = 0x77u, NULL);
        SHADE_CASE(col, k, "vertex color, alpha not interpolated", U.dx.vmask = 0x7u, NULL);
        SHADE_CASE(col, k, "vertex color, no varyings", U.dx.nvary = 0, NULL);
        SHADE_CASE(lit, k, "the general path's wrapper of the lit kernel", U.s.ps = ps_lit_general,
                   NULL);
        SHADE_CASE(col, k, "the general path's wrapper of the color kernel",
                   U.s.ps = ps_color_general, NULL);
        SHADE_CASE(lit, k, "another function", U.s.ps = ps_other, NULL);
        SHADE_CASE(col, k, "the lit kernel with the vertex color's varyings",
                   U.s.ps = k->ps[KILN_EFFECT_LIT], NULL);
        const kiln_effect tc = KILN_EFFECT_TEXTURE_COLOR;
        SHADE_CASE(tc, k, "texture color, eligible", (void)0, kr_fused_shade_tc_avx2);
        SHADE_CASE(tc, k, "texture color, nothing written (out1 2)", U.dx.out1 = 2,
                   kr_fused_shade_tc_avx2);
        SHADE_CASE(tc, k, "texture color, not the AVX2 level", U.dx.wide = 0, NULL);
        SHADE_CASE(tc, k, "texture color, no early depth test", U.dx.early_z = 0, NULL);
        SHADE_CASE(tc, k, "texture color, output() needed (out1 0)", U.dx.out1 = 0, NULL);
        SHADE_CASE(tc, k, "texture color, v not interpolated", U.dx.vmask = 0x1Fu, NULL);
        SHADE_CASE(tc, k, "texture color, one varying", (U.dx.nvary = 1, U.dx.vmask = 0xFu), NULL);
        SHADE_CASE(tc, k, "the general path's wrapper of the texture color kernel",
                   U.s.ps = ps_tc_general, NULL);
        cases += 31;
    }
    CHECK(!kr_effect_ps_is(NULL, KILN_EFFECT_LIT));
    CHECK(!kr_effect_ps_is(kr_effects_scalar.ps[KILN_EFFECT_LIT], KILN_EFFECT_COUNT));
    CHECK(!kr_effect_ps_is(kr_effects_avx2.ps[KILN_EFFECT_LIT], KILN_EFFECT_VERTEX_COLOR));
    printf("selection: %u cases\n", cases);
#endif
}

/* ==== 2. the functions against interpolation + scalar kernel + write ==== */

#if KR_EFFECTS_X86
enum { DW = 24, DH = 20, DPITCH = DW * 4 + 8 };

static void direct_case(uint64_t seed, kiln_effect e, uint32_t *ok, uint32_t *wrote,
                        uint32_t *failed)
{
    th_rng r = {seed};
    kd_state s;
    memset(&s, 0, sizeof s);
    s.ps = kr_effects_avx2.ps[e];
    s.ps_outputs = 1;
    /* sometimes blending, so that the write reads the target too */
    s.blend[0].enable = th_below(&r, 3) == 0;
    s.blend[0].src = s.blend[0].src_a = KILN_BLEND_SRC_ALPHA;
    s.blend[0].dst = s.blend[0].dst_a = KILN_BLEND_INV_SRC_ALPHA;
    s.blend[0].op = s.blend[0].op_a = KILN_BLEND_OP_ADD;
    s.blend[0].write_mask = th_below(&r, 4) ? 15u : 1u + th_below(&r, 14);
    for (int c = 0; c < 4; c++)
        s.blend_factor[c] = 1.0f;
    bool bgra = th_below(&r, 2);
    kr_drawx dx;
    memset(&dx, 0, sizeof dx);
    dx.s = &s;
    dx.wide = 1;
    dx.early_z = 1;
    dx.nvary = e == KILN_EFFECT_LIT ? 2 : 1;
    dx.vmask = e == KILN_EFFECT_LIT ? 0x7Fu : 0xFu;
    dx.write8 = kr_write8_select(&s.blend[0], bgra);
    dx.out1 = dx.write8 ? 1 : 2;
    /* cb0: direction, light, ambient; whole, short (zeros past the end)
     * or missing */
    float cb[12];
    for (int i = 0; i < 12; i++)
        cb[i] = th_frand(&r, -1.0f, 1.0f);
    uint32_t kcb = th_below(&r, 6);
    if (kcb == 0)
        cb[0] = cb[1] = cb[2] = 0.0f; /* no direction: d = 0 */
    dx.ps_cb[0] = kcb == 5 ? NULL : cb;
    dx.ps_cb_size[0] = kcb == 4 ? 20u : 48u;

    float attr[8 * 3];
    for (int i = 0; i < 8 * 3; i++)
        attr[i] = th_frand(&r, -2.0f, 2.0f);
    if (th_below(&r, 8) == 0) /* a normal that is 0 everywhere */
        for (int i = 12; i < 21; i++)
            attr[i] = 0.0f;
    kr_prim p;
    memset(&p, 0, sizeof p);
    p.kind = KR_TRI;
    p.dx = &dx;
    p.ox = th_frand(&r, 0.0f, DW);
    p.oy = th_frand(&r, 0.0f, DH);
    bool affine = th_below(&r, 3) == 0;
    p.q[0] = th_frand(&r, 0.3f, 2.0f);
    p.q[1] = affine ? 0.0f : th_frand(&r, -0.02f, 0.02f);
    p.q[2] = affine ? 0.0f : th_frand(&r, -0.02f, 0.02f);
    p.attr = attr;

    static uint8_t img[2][DH * DPITCH], orig[DH * DPITCH];
    for (size_t i = 0; i < sizeof img[0]; i++)
        orig[i] = img[0][i] = img[1][i] = (uint8_t)th_next(&r);
    kr_fb fb;
    memset(&fb, 0, sizeof fb);
    fb.rt[0] = img[0];
    fb.rt_pitch[0] = DPITCH;
    fb.rt_format[0] = bgra ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
    fb.nrt = 1;
    fb.width = DW;
    fb.height = DH;
    fb.samples = 1;

    kr_shade_fn fn = kr_shade_select(&dx, &fb);
    if (fn != (e == KILN_EFFECT_LIT ? kr_shade_lit_avx2 : kr_shade_color_avx2)) {
        (*failed)++;
        fprintf(stderr, "    case %llx: not selected\n", (unsigned long long)seed);
        return;
    }
    for (int k = 0; k < 6; k++) {
        int x = 4 * (int)th_below(&r, DW / 4), y = 4 * (int)th_below(&r, DH / 4);
        uint32_t mask = th_below(&r, 2) ? 0xFFFFu : (uint32_t)th_next(&r) & 0xFFFFu;
        fb.rt[0] = img[0];
        if (!fn(&p, &fb, x, y, mask)) {
            (*failed)++;
            fprintf(stderr, "    case %llx: a triangle's block refused\n",
                    (unsigned long long)seed);
            return;
        }
        /* the oracle */
        _Alignas(32) float vary[KILN_MAX_VARYINGS * 4 * B], color[4 * B];
        memset(color, 0, sizeof color);
        kr_interpolate_avx2(&p, x, y, dx.nvary * 4, dx.vmask, vary);
        static const float zeros[B];
        kiln_ps_args a = {.x = x,
                          .y = y,
                          .mask = mask,
                          .front_facing = 1,
                          .varyings = vary,
                          .z = zeros,
                          .color = color,
                          .cb = dx.ps_cb,
                          .cb_size = dx.ps_cb_size};
        kr_effects_scalar.ps[e](&a);
        dx.write8(&s.blend[0], s.blend_factor, img[1], DPITCH, x, y, color, mask);
    }
    for (size_t i = 0; i < sizeof img[0]; i++) {
        if (img[0][i] != img[1][i]) {
            (*failed)++;
            size_t px = i % DPITCH / 4, py = i / DPITCH;
            fprintf(stderr, "    case %llx (%s): pixel (%zu, %zu) byte %zu: %u, expected %u\n",
                    (unsigned long long)seed, e == KILN_EFFECT_LIT ? "lit" : "vertex color", px, py,
                    i % 4, img[0][i], img[1][i]);
            return;
        }
    }
    *ok += 1;
    *wrote += memcmp(img[0], orig, sizeof orig) != 0;
}
#endif

static void test_direct(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("direct: no AVX2 on this CPU, skipped\n");
        return;
    }
    /* the writes must change something: the same test against an image
     * the functions never touched would pass too */
    uint32_t ok = 0, wrote = 0, failed = 0, cases = 0;
    for (uint64_t i = 0; i < 400; i++, cases++)
        direct_case(0xD1EC7000ull + i, i & 1 ? KILN_EFFECT_LIT : KILN_EFFECT_VERTEX_COLOR, &ok,
                    &wrote, &failed);
    printf("direct calls: %u cases, %u wrote, %u failed\n", cases, wrote, failed);
    CHECK_EQ_INT(failed, 0);
    CHECK_EQ_INT(ok, cases);
    CHECK(wrote > cases * 3 / 4);
#endif
}

/* ==== 3. through the API: specialized == general ==== */

enum { W = 61, H = 45, NTRI = 6 };

typedef struct apipe {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_input_layout il;
    kiln_rasterizer_state rs;
    kiln_pixel_shader fast[3], general[3]; /* vertex color, lit, texture color */
} apipe;

typedef struct acase {
    int effect; /* 0 vertex color, 1 lit, 2 texture color (varying 1: u, v) */
    uint32_t tw, th, mips;
    kiln_format tfmt;
    kiln_sampler_desc sd;
    kiln_format rfmt, dsfmt; /* dsfmt 0: no depth-stencil buffer */
    kiln_blend_desc bd;
    float bfactor[4];
    kiln_depth_stencil_desc dd;
    uint32_t sref;
    float zclear;
    float cb[12];
    uint32_t cb_bytes; /* 0: none bound */
    float v[NTRI * 3][12];
} acase;

static const char *fmt_name(kiln_format f)
{
    return f == KILN_FORMAT_B8G8R8A8_UNORM      ? "BGRA8"
           : f == KILN_FORMAT_R8G8B8A8_UNORM    ? "RGBA8"
           : f == KILN_FORMAT_D32_FLOAT         ? "D32"
           : f == KILN_FORMAT_D24_UNORM_S8_UINT ? "D24S8"
                                                : "none";
}

static void make_acase(uint64_t seed, acase *c)
{
    th_rng r = {seed};
    memset(c, 0, sizeof *c);
    c->effect = (int)th_below(&r, 3);
    /* half of them powers of two (WRAP read directly) */
    bool pow2 = th_below(&r, 2);
    c->tw = pow2 ? 1u << th_below(&r, 6) : 1u + th_below(&r, 40);
    c->th = pow2 ? 1u << th_below(&r, 6) : 1u + th_below(&r, 40);
    c->mips = th_below(&r, 2) ? 1u : 0u; /* 0: the whole chain */
    c->tfmt = th_below(&r, 2) ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
    static const kiln_address addr[] = {KILN_ADDRESS_WRAP, KILN_ADDRESS_CLAMP, KILN_ADDRESS_MIRROR,
                                        KILN_ADDRESS_BORDER};
    /* mostly what the rows kernel takes (LINEAR, no BORDER) */
    bool easy = th_below(&r, 3) != 0;
    c->sd.min_filter = easy || th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
    c->sd.mag_filter = easy || th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
    c->sd.mip_filter = th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
    c->sd.address_u = addr[th_below(&r, easy ? 3 : 4)];
    c->sd.address_v = th_below(&r, 2) ? c->sd.address_u : addr[th_below(&r, easy ? 3 : 4)];
    c->sd.max_lod = 1000.0f;
    for (int k = 0; k < 4; k++)
        c->sd.border_color[k] = th_frand(&r, 0.0f, 1.0f);
    c->rfmt = th_below(&r, 2) ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM;
    uint32_t kd = th_below(&r, 4);
    c->dsfmt = kd == 0   ? (kiln_format)0
               : kd == 1 ? KILN_FORMAT_D24_UNORM_S8_UINT
                         : KILN_FORMAT_D32_FLOAT;
    kiln_blend_target *b = &c->bd.rt[0];
    uint32_t kb = th_below(&r, 10);
    b->enable = kb >= 3;
    ru_blend_random(&r, kb < 6 ? 0 : kb < 8 ? 1 : 2, b);
    for (int ch = 0; ch < 4; ch++)
        c->bfactor[ch] = th_frand(&r, 0.0f, 1.0f);
    c->dd.depth_disable = th_below(&r, 5) == 0;
    c->dd.depth_func = (kiln_compare)(1 + th_below(&r, 8));
    c->dd.depth_write_disable = th_below(&r, 3) == 0;
    if (c->dsfmt == KILN_FORMAT_D24_UNORM_S8_UINT && th_below(&r, 2)) {
        c->dd.stencil_enable = 1;
        c->dd.stencil_read_mask = 1u + th_below(&r, 255);
        c->dd.stencil_write_mask = 1u + th_below(&r, 255);
        kiln_stencil_face *f[2] = {&c->dd.front, &c->dd.back};
        for (int k = 0; k < 2; k++) {
            f[k]->fail_op = (kiln_stencil_op)(1 + th_below(&r, 8));
            f[k]->depth_fail_op = (kiln_stencil_op)(1 + th_below(&r, 8));
            f[k]->pass_op = (kiln_stencil_op)(1 + th_below(&r, 8));
            f[k]->func = (kiln_compare)(1 + th_below(&r, 8));
        }
        c->sref = th_below(&r, 256);
    }
    c->zclear = th_frand(&r, 0.3f, 1.0f);
    for (int i = 0; i < 12; i++)
        c->cb[i] = th_frand(&r, -1.0f, 1.0f);
    uint32_t kc = th_below(&r, 8);
    c->cb_bytes = kc == 0 ? 0u : kc == 1 ? 32u : 48u;
    for (int t = 0; t < NTRI * 3; t++) {
        float *v = c->v[t];
        float w = th_frand(&r, 0.4f, 3.0f);
        double px = th_frand(&r, -12.0f, W + 12.0f), py = th_frand(&r, -12.0f, H + 12.0f);
        ru_clip(W, H, px, py, v);
        v[2] = th_frand(&r, 0.0f, 1.0f);
        v[3] = 1.0f;
        for (int k = 0; k < 3; k++)
            v[k] *= w;
        v[3] = w;
        for (int k = 4; k < 8; k++) /* color */
            v[k] = th_frand(&r, -0.2f, 1.2f);
        for (int k = 8; k < 11; k++) /* normal; u, v */
            v[k] = c->effect == 2 ? th_frand(&r, -1.5f, 2.5f) : th_frand(&r, -1.0f, 1.0f);
        v[11] = 0.0f;
    }
    if (th_below(&r, 6) == 0) /* a triangle with no normal */
        for (int t = 0; t < 3; t++)
            c->v[t][8] = c->v[t][9] = c->v[t][10] = 0.0f;
}

/* Renders the case with pixel shader ps; the target's and the
 * depth-stencil buffer's bytes into col / ds (ds may stay unset). */
static void render(apipe *pp, const acase *c, kiln_pixel_shader ps, uint8_t *col, uint8_t *ds)
{
    kiln_device *dev = pp->dev;
    kiln_context *ctx = pp->ctx;
    ru_tex rt = ru_rt(dev, W, H, c->rfmt);
    ru_tex dt;
    memset(&dt, 0, sizeof dt);
    if (c->dsfmt)
        dt = ru_ds(dev, W, H, c->dsfmt);
    kiln_blend_state bs = ru_bs(dev, &c->bd);
    kiln_depth_stencil_state dss = ru_dss(dev, c->dd);
    kiln_buffer cb = {0};
    if (c->cb_bytes) {
        cb = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, c->cb, c->cb_bytes);
        CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    } else {
        kiln_buffer none = {0};
        CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &none), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, dt.dsv), KILN_OK);
    const float clear[4] = {0.25f, 0.5f, 0.75f, 0.4f};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    if (c->dsfmt)
        CHECK_RESULT(
            kiln_clear_dsv(ctx, dt.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, c->zclear, 0x5A),
            KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, c->bfactor), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, c->sref), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, pp->vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, pp->il), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, pp->rs), KILN_OK);
    ru_set_viewport(ctx, 0.0f, 0.0f, W, H, 0.0f, 1.0f);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    kiln_texture tex = {0};
    kiln_srv srv = {0};
    kiln_sampler samp = {0};
    if (c->effect == 2) {
        th_rng r = {c->tw * 977u + c->th};
        static uint8_t texels[2 * 40 * 40 * 4];
        for (size_t i = 0; i < sizeof texels; i++)
            texels[i] = (uint8_t)th_next(&r);
        kiln_texture2d_desc td = {
            c->tw, c->th, c->mips, 1, c->tfmt, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
        /* every level from the same bytes (shifted), each tightly packed */
        kiln_subresource_data init[8];
        uint32_t levels = 0;
        for (uint32_t w = c->tw, h = c->th;; w = w > 1 ? w / 2 : 1, h = h > 1 ? h / 2 : 1) {
            init[levels] = (kiln_subresource_data){texels + 16 * levels, w * 4};
            levels++;
            if (c->mips == 1 || (w == 1 && h == 1))
                break;
        }
        CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &tex), KILN_OK);
        CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
        CHECK_RESULT(kiln_create_sampler(dev, &c->sd, &samp), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
        CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &samp), KILN_OK);
    }
    ru_draw(dev, ctx, c->v, NTRI * 3, sizeof c->v[0], KILN_TOPOLOGY_TRIANGLE_LIST);
    if (c->effect == 2) {
        kiln_srv none = {0};
        kiln_sampler nos = {0};
        CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &none), KILN_OK);
        CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &nos), KILN_OK);
        kiln_destroy_sampler(dev, samp);
        kiln_destroy_srv(dev, srv);
        kiln_destroy_texture(dev, tex);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    ru_read(dev, rt.tex, 0, col);
    if (c->dsfmt)
        ru_read(dev, dt.tex, 0, ds);
    if (cb.id)
        kiln_destroy_buffer(dev, cb);
    kiln_destroy_blend_state(dev, bs);
    kiln_destroy_depth_stencil_state(dev, dss);
    ru_free_tex(dev, &rt);
    if (c->dsfmt)
        ru_free_tex(dev, &dt);
}

static void test_api(apipe *pp, kr_simd level)
{
    enum { NCASE = 360 };
    static uint8_t col[2][W * H * 4], ds[2][W * H * 4];
    uint32_t failed = 0, per[3] = {0, 0, 0}, changed = 0, stencil = 0;
    static const char *const names[3] = {"vertex color", "lit", "texture color"};
    for (uint32_t i = 0; i < NCASE; i++) {
        acase c;
        make_acase(0xA91C0000ull + i, &c);
        memset(ds, 0, sizeof ds);
        render(pp, &c, pp->fast[c.effect], col[0], ds[0]);
        render(pp, &c, pp->general[c.effect], col[1], ds[1]);
        per[c.effect]++;
        stencil += c.dd.stencil_enable;
        bool bad = false;
        for (size_t k = 0; k < sizeof col[0] && !bad; k++) {
            if (col[0][k] != col[1][k]) {
                bad = true;
                fprintf(stderr,
                        "    [%s] case %u (%s, %s, ds %s, blend %u, mask %u, depth %s func %d, "
                        "stencil %u): "
                        "pixel (%zu, %zu) byte %zu: %u, general %u\n",
                        kr_simd_name(level), i, names[c.effect], fmt_name(c.rfmt),
                        fmt_name(c.dsfmt), c.bd.rt[0].enable, c.bd.rt[0].write_mask,
                        c.dd.depth_disable ? "off" : "on", (int)c.dd.depth_func,
                        c.dd.stencil_enable, k / 4 % W, k / 4 / W, k % 4, col[0][k], col[1][k]);
            }
        }
        if (!bad && memcmp(ds[0], ds[1], sizeof ds[0]) != 0) {
            bad = true;
            fprintf(stderr, "    [%s] case %u: depth-stencil bytes differ\n", kr_simd_name(level),
                    i);
        }
        failed += bad;
        /* a case that drew nothing would prove nothing */
        static const uint8_t cleared[4] = {64, 128, 191, 102};
        for (size_t k = 0; k < sizeof col[0]; k += 4) {
            uint8_t want[4] = {cleared[0], cleared[1], cleared[2], cleared[3]};
            if (c.rfmt == KILN_FORMAT_B8G8R8A8_UNORM) {
                want[0] = cleared[2];
                want[2] = cleared[0];
            }
            if (memcmp(col[0] + k, want, 4) != 0) {
                changed++;
                break;
            }
        }
    }
    printf("API [%s]: %u cases (%u vertex color, %u lit, %u texture color; %u stencil), %u drew, "
           "%u failed\n",
           kr_simd_name(level), NCASE, per[0], per[1], per[2], stencil, changed, failed);
    CHECK_EQ_INT(failed, 0);
    CHECK(changed > NCASE / 2);
}

int main(void)
{
    test_selection();
    test_direct();

    kr_simd lv[3];
    int nlv = kr_effects_vector_levels(lv);
    kr_simd initial = kr_effects_active_level();
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    apipe pp;
    memset(&pp, 0, sizeof pp);
    pp.dev = dev;
    pp.ctx = kiln_device_immediate_context(dev);
    pp.vs = ru_make_vs(dev, 3, 2);
    pp.il = ru_make_layout(dev, pp.vs, 3);
    pp.rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    int ran = 0;
    for (int l = 0; l < nlv; l++) {
        if (lv[l] < KR_SIMD_AVX2)
            continue;
        CHECK_RESULT(kr_effects_force_level(lv[l]), KILN_OK);
        const kiln_effect eff[3] = {KILN_EFFECT_VERTEX_COLOR, KILN_EFFECT_LIT,
                                    KILN_EFFECT_TEXTURE_COLOR};
        const kiln_ps_fn gen[3] = {ps_color_general, ps_lit_general, ps_tc_general};
        for (int k = 0; k < 3; k++) {
            kiln_pixel_shader_desc pd;
            CHECK_RESULT(kiln_effect_get(eff[k], NULL, &pd), KILN_OK);
            CHECK(kr_effect_ps_is(pd.fn, eff[k]));
            CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &pp.fast[k]), KILN_OK);
            pd.fn = gen[k];
            CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &pp.general[k]), KILN_OK);
        }
        test_api(&pp, lv[l]);
        ran++;
        for (int k = 0; k < 3; k++) {
            kiln_destroy_pixel_shader(dev, pp.fast[k]);
            kiln_destroy_pixel_shader(dev, pp.general[k]);
        }
    }
    if (!ran)
        printf("API: no AVX2 on this CPU, the specialized paths do not exist here\n");
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    kiln_destroy_rasterizer_state(dev, pp.rs);
    kiln_destroy_input_layout(dev, pp.il);
    kiln_destroy_vertex_shader(dev, pp.vs);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(th_log_count(), 0);
    return th_exit();
}
