/*
 * test_read_mask: kiln_pixel_shader_desc.read_mask (kiln.h). A pixel
 * shader that declares the varying components it reads gets exactly the
 * values it would get without the declaration in those components, and 0
 * in the others, for triangles in perspective, lines and points, at every
 * SIMD level the CPU has; the built-in effects declare theirs, and that
 * they never read the depth, KILN_PS_NO_Z (their images are the golden
 * tests'); a mask naming a varying past num_varyings is
 * refused with SHADER_DESC.
 *
 * The shader (ru_ps_vary) copies varying r to float target r, so the
 * targets show what the shader read.
 */
#include "raster_util.h"
#include "raster/effects.h"

#include <stdio.h>

#define W 61
#define H 47
#define NV 2
#define SENTINEL 7.0f /* the targets' clear value: no varying is ever 7 */

static kiln_device *dev;
static kiln_context *ctx;

static ru_pipe make_pipe(uint32_t read_mask)
{
    ru_pipe p;
    memset(&p, 0, sizeof p);
    p.nin = 1 + NV;
    p.stride = 16 * p.nin;
    p.vs = ru_make_vs(dev, p.nin, NV);
    p.il = ru_make_layout(dev, p.vs, p.nin);
    kiln_pixel_shader_desc pd = {0};
    pd.fn = ru_ps_vary;
    pd.num_varyings = NV;
    pd.num_outputs = NV;
    pd.user = RU_USER(NV, NV);
    pd.read_mask = read_mask;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &p.ps), KILN_OK);
    return p;
}

/* Random geometry of `topo`: n vertices, positions with w in [0.5, 2]
 * (perspective), varyings in [-1, 1]. */
static void make_vertices(th_rng *rng, float *v, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        float *p = v + k * 4 * (1 + NV);
        float w = 0.5f + (float)th_below(rng, 1000) / 1000.0f * 1.5f;
        p[0] = (-1.2f + (float)th_below(rng, 2400) / 1000.0f) * w;
        p[1] = (-1.2f + (float)th_below(rng, 2400) / 1000.0f) * w;
        p[2] = (float)th_below(rng, 1000) / 1000.0f * w;
        p[3] = w;
        for (int c = 0; c < 4 * NV; c++)
            p[4 + c] = -1.0f + (float)th_below(rng, 2000) / 1000.0f;
    }
}

/* Draws the vertices with pipe p into two fresh float targets; their
 * pixels (4 floats each) into out[0], out[1]. */
static void render(const ru_pipe *p, const float *v, uint32_t n, kiln_topology topo, float *out[NV])
{
    ru_tex rt[NV];
    kiln_rtv rtv[NV];
    for (int r = 0; r < NV; r++) {
        rt[r] = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        rtv[r] = rt[r].rtv;
        const float clear[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
        CHECK_RESULT(kiln_clear_rtv(ctx, rtv[r], clear), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, NV, rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_bind_pipe(ctx, p);
    ru_draw(dev, ctx, v, n, p->stride, topo);
    for (int r = 0; r < NV; r++) {
        out[r] = ru_read_f32(dev, &rt[r]);
        ru_free_tex(dev, &rt[r]);
    }
    kiln_destroy_rasterizer_state(dev, rs);
}

typedef struct tally {
    long pixels, read_same, unread_zero, bad;
} tally;

/* Compares the declared render (b) with the undeclared one (a): read
 * components equal bit for bit, the others 0 on covered pixels;
 * uncovered pixels untouched in both. */
static void compare(uint32_t mask, float *a[NV], float *b[NV], tally *t)
{
    for (uint32_t i = 0; i < (uint32_t)W * H; i++) {
        int covered = 0;
        for (int r = 0; r < NV; r++)
            for (int c = 0; c < 4; c++)
                covered |= a[r][4 * i + c] != SENTINEL;
        if (!covered) {
            for (int r = 0; r < NV; r++)
                for (int c = 0; c < 4; c++)
                    t->bad += b[r][4 * i + c] != SENTINEL;
            continue;
        }
        t->pixels++;
        for (int r = 0; r < NV; r++)
            for (int c = 0; c < 4; c++) {
                float x = a[r][4 * i + c], y = b[r][4 * i + c];
                if (mask >> (4 * r + c) & 1) {
                    bool same = memcmp(&x, &y, 4) == 0;
                    t->read_same += same;
                    t->bad += !same;
                } else {
                    t->unread_zero += y == 0.0f;
                    t->bad += y != 0.0f;
                }
            }
    }
}

static void test_declared_components(void)
{
    const kr_simd initial = kr_effects_active_level();
    const kr_simd levels[] = {KR_SIMD_SCALAR, KR_SIMD_SSE2, KR_SIMD_AVX2, KR_SIMD_AVX512};
    static const kiln_topology topos[] = {KILN_TOPOLOGY_TRIANGLE_LIST, KILN_TOPOLOGY_LINE_LIST,
                                          KILN_TOPOLOGY_POINT_LIST};
    static const uint32_t counts[] = {30, 40, 200};
    ru_pipe all = make_pipe(0);
    th_rng rng = {0xC0FFEE123ull};
    for (int l = 0; l < 4; l++) {
        if (!kr_effects_kernels(levels[l]))
            continue;
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        tally t = {0};
        for (int round = 0; round < 12; round++) {
            /* a random non-empty mask over both varyings (some rounds
             * one component, some all but one) */
            uint32_t mask = (uint32_t)th_below(&rng, 255) + 1u;
            if (round == 0)
                mask = 0x3u; /* a texture coordinate's u and v */
            ru_pipe dec = make_pipe(mask);
            for (int k = 0; k < 3; k++) {
                float v[200 * 4 * (1 + NV)];
                make_vertices(&rng, v, counts[k]);
                float *a[NV], *b[NV];
                render(&all, v, counts[k], topos[k], a);
                render(&dec, v, counts[k], topos[k], b);
                compare(mask, a, b, &t);
                for (int r = 0; r < NV; r++) {
                    free(a[r]);
                    free(b[r]);
                }
            }
            ru_free_pipe(dev, &dec);
        }
        CHECK(t.bad == 0);
        CHECK(t.pixels > 2000 && t.read_same > 2000 && t.unread_zero > 2000);
        if (t.bad || t.pixels <= 2000)
            fprintf(stderr, "    level %d: %ld pixels, %ld read equal, %ld unread zero, %ld bad\n", (int)levels[l],
                    t.pixels, t.read_same, t.unread_zero, t.bad);
    }
    ru_free_pipe(dev, &all);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
}

/* Masks naming varyings the shader does not declare are refused, and
 * full masks of what it declares are accepted. */
static void test_validation(void)
{
    static const struct {
        uint32_t nv, mask;
        kiln_result want;
    } cases[] = {
        {0, 0x1u, KILN_E_INVALID_ARG},        {1, 0x10u, KILN_E_INVALID_ARG},
        {2, 0x100u, KILN_E_INVALID_ARG},      {7, 0x10000000u, KILN_E_INVALID_ARG},
        {1, 0xFu, KILN_OK},                   {2, 0xA5u, KILN_OK},
        {8, 0xFFFFFFFFu, KILN_OK},            {8, 0x80000000u, KILN_OK},
        {0, 0, KILN_OK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_pixel_shader_desc pd = {0};
        pd.fn = ru_ps_none;
        pd.num_varyings = cases[i].nv;
        pd.read_mask = cases[i].mask;
        kiln_pixel_shader ps = {12345};
        if (cases[i].want != KILN_OK) {
            CHECK_FAILS(kiln_create_pixel_shader(dev, &pd, &ps), cases[i].want, KILN_LOG_SHADER_DESC);
            CHECK(ps.id == 0);
        } else {
            CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
            kiln_destroy_pixel_shader(dev, ps);
        }
    }
}

/* The built-in effects declare what their pixel shaders read. */
static void test_effect_masks(void)
{
    static const uint32_t want[KILN_EFFECT_COUNT] = {
        [KILN_EFFECT_VERTEX_COLOR] = 0xFu, [KILN_EFFECT_TEXTURE] = 0x3u,
        [KILN_EFFECT_TEXTURE_COLOR] = 0x3Fu, [KILN_EFFECT_LIT] = 0x7Fu};
    for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
        kiln_vertex_shader_desc vd;
        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get((kiln_effect)e, &vd, &pd), KILN_OK);
        CHECK(pd.read_mask == want[e]);
        CHECK(pd.flags == KILN_PS_NO_Z); /* none reads kiln_ps_args.z */
    }
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 0);
    ctx = kiln_device_immediate_context(dev);
    test_validation();
    test_effect_masks();
    test_declared_components();
    kiln_device_destroy(dev);
    return th_exit();
}
