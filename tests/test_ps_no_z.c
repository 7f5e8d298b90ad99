/*
 * test_ps_no_z: KILN_PS_NO_Z (kiln.h). A pixel shader created with it
 * reads 16 zeros from kiln_ps_args.z, and everything else is what the
 * same shader gets without the flag: its varyings, its coverage, the depth
 * test (early, and after shading with KILN_PS_MAY_DISCARD) and the depth
 * it writes, on 1x and 4x targets, SERIAL and ASYNC. Without the flag the
 * shader reads the true depth (so the comparison can fail). Unknown flag
 * bits are refused with SHADER_DESC.
 *
 * The shader writes (z, varying 0's x, varying 0's y, 1) to a float
 * target cleared to 0, so the target shows what it read.
 */
#include "raster_util.h"

#include <stdio.h>

#define W 45
#define H 37
#define NTRI 24
#define DISCARD_USER ((void *)(uintptr_t)1)

static void ps_z(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = a->z[i];
        KILN_PS_COLOR(a, 0, 1)[i] = KILN_PS_VARYING(a, 0, 0)[i];
        KILN_PS_COLOR(a, 0, 2)[i] = KILN_PS_VARYING(a, 0, 1)[i];
        KILN_PS_COLOR(a, 0, 3)[i] = 1.0f;
    }
    if (a->user == DISCARD_USER) /* every third pixel of a block, whatever its depth */
        a->mask &= ~0x9249u;
}

/* Position (w in [0.5, 2], depth z / w in [0, 1]) and one varying. */
static void make_tris(th_rng *r, float *v)
{
    for (int k = 0; k < 3 * NTRI; k++) {
        float *p = v + (size_t)k * 8;
        float w = th_frand(r, 0.5f, 2.0f);
        p[0] = th_frand(r, -1.1f, 1.1f) * w;
        p[1] = th_frand(r, -1.1f, 1.1f) * w;
        p[2] = th_frand(r, 0.0f, 1.0f) * w;
        p[3] = w;
        for (int c = 0; c < 4; c++)
            p[4 + c] = th_frand(r, -1.0f, 1.0f);
    }
}

typedef struct image {
    float *color;   /* W x H x 4 (resolved for 4x) */
    uint8_t *depth; /* W x H x 4 (1x with depth), or NULL */
} image;

/* The triangles drawn with a shader of `flags` into a fresh target of
 * `samples`, with a LESS depth test and writes when `depth`. */
static image render(kiln_device *dev, const float *v, uint32_t flags, bool depth, uint32_t samples)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader vs = ru_make_vs(dev, 2, 1);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    kiln_pixel_shader_desc pd = {0};
    pd.fn = ps_z;
    pd.num_varyings = 1;
    pd.num_outputs = 1;
    pd.flags = flags;
    pd.user = flags & KILN_PS_MAY_DISCARD ? DISCARD_USER : NULL;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);

    const kiln_format fmt = KILN_FORMAT_R32G32B32A32_FLOAT;
    kiln_texture ms = {0}, ds = {0};
    kiln_rtv rtv;
    kiln_dsv dsv = {0};
    ru_tex one = ru_rt(dev, W, H, fmt);
    if (samples > 1) {
        kiln_texture2d_desc d = {.width = W,
                                 .height = H,
                                 .mip_levels = 1,
                                 .format = fmt,
                                 .bind_flags = KILN_BIND_RENDER_TARGET,
                                 .sample_count = samples};
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &ms), KILN_OK);
        CHECK_RESULT(kiln_create_rtv(dev, ms, NULL, &rtv), KILN_OK);
    } else {
        rtv = one.rtv;
    }
    if (depth) {
        kiln_texture2d_desc d = {.width = W,
                                 .height = H,
                                 .mip_levels = 1,
                                 .format = KILN_FORMAT_D32_FLOAT,
                                 .bind_flags = KILN_BIND_DEPTH_STENCIL,
                                 .sample_count = samples};
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &ds), KILN_OK);
        CHECK_RESULT(kiln_create_dsv(dev, ds, NULL, &dsv), KILN_OK);
        CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    }
    static const float zero[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rtv, zero), KILN_OK);
    kiln_depth_stencil_desc dd = {0};
    dd.depth_disable = !depth;
    dd.depth_func = KILN_COMPARE_LESS;
    kiln_depth_stencil_state dss = ru_dss(dev, dd);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rtv, dsv), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_draw(dev, ctx, v, 3 * NTRI, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);

    image img = {0};
    if (samples > 1)
        CHECK_RESULT(kiln_resolve_subresource(ctx, kiln_texture_resource(one.tex), 0,
                                              kiln_texture_resource(ms), 0, KILN_FORMAT_UNKNOWN),
                     KILN_OK);
    img.color = ru_read_f32(dev, &one);
    if (depth && samples == 1) {
        img.depth = malloc((size_t)W * H * 4);
        CHECK(img.depth && ru_read(dev, ds, 0, img.depth) != 0);
    }
    if (depth) {
        kiln_destroy_dsv(dev, dsv);
        kiln_destroy_texture(dev, ds);
    }
    if (samples > 1) {
        kiln_destroy_rtv(dev, rtv);
        kiln_destroy_texture(dev, ms);
    }
    ru_free_tex(dev, &one);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_depth_stencil_state(dev, dss);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    return img;
}

static void free_image(image *m)
{
    free(m->color);
    free(m->depth);
}

typedef struct tally {
    long covered, z_read, zero_read, bad;
} tally;

/* b (with KILN_PS_NO_Z) against a (without): the same varyings, coverage
 * and depth; b's z channel 0 wherever anything was drawn. */
static void compare(const image *a, const image *b, tally *t)
{
    for (int i = 0; i < W * H; i++) {
        const float *pa = a->color + 4 * i, *pb = b->color + 4 * i;
        t->bad += memcmp(pa + 1, pb + 1, 3 * sizeof(float)) != 0;
        if (pa[3] == 0.0f)
            continue;
        t->covered++;
        t->z_read += pa[0] != 0.0f;
        t->zero_read += pb[0] == 0.0f;
        t->bad += pb[0] != 0.0f;
    }
    if (a->depth)
        t->bad += memcmp(a->depth, b->depth, (size_t)W * H * 4) != 0;
}

static void run(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    th_rng r = {0x5EED2026ull ^ threads};
    static float v[3 * NTRI * 8];
    static const struct {
        uint32_t flags;
        bool depth;
        uint32_t samples;
    } cases[] = {
        {0, false, 1},
        {0, true, 1},
        {KILN_PS_MAY_DISCARD, true, 1},
        {KILN_PS_MAY_DISCARD, false, 1},
        {0, false, 4},
        {0, true, 4},
        {KILN_PS_MAY_DISCARD, true, 4},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        tally t = {0};
        for (int round = 0; round < 4; round++) {
            make_tris(&r, v);
            image a = render(dev, v, cases[c].flags, cases[c].depth, cases[c].samples);
            image b =
                render(dev, v, cases[c].flags | KILN_PS_NO_Z, cases[c].depth, cases[c].samples);
            compare(&a, &b, &t);
            free_image(&a);
            free_image(&b);
        }
        if (t.bad || t.covered <= 1000 || t.z_read <= t.covered / 2)
            fprintf(stderr,
                    "    mode %d x%u, case %zu: %ld covered, %ld read z, %ld read zeros, %ld bad\n",
                    (int)mode, threads, c, t.covered, t.z_read, t.zero_read, t.bad);
        CHECK(t.bad == 0);
        CHECK(t.covered > 1000 && t.zero_read == t.covered);
        CHECK(t.z_read > t.covered / 2); /* without the flag the shader sees depth */
    }
    kiln_device_destroy(dev);
}

static void test_validation(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    static const struct {
        uint32_t flags;
        kiln_result want;
    } cases[] = {
        {KILN_PS_NO_Z, KILN_OK},
        {KILN_PS_NO_Z | KILN_PS_MAY_DISCARD, KILN_OK},
        {1u << 2, KILN_E_INVALID_ARG},
        {KILN_PS_NO_Z | 1u << 31, KILN_E_INVALID_ARG},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kiln_pixel_shader_desc pd = {0};
        pd.fn = ru_ps_none;
        pd.flags = cases[i].flags;
        kiln_pixel_shader ps = {12345};
        if (cases[i].want != KILN_OK) {
            CHECK_FAILS(kiln_create_pixel_shader(dev, &pd, &ps), cases[i].want,
                        KILN_LOG_SHADER_DESC);
            CHECK(ps.id == 0);
        } else {
            CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
            kiln_destroy_pixel_shader(dev, ps);
        }
    }
    kiln_device_destroy(dev);
}

int main(void)
{
    test_validation();
    run(KILN_EXEC_SERIAL, 0);
    run(KILN_EXEC_ASYNC, 1);
    run(KILN_EXEC_ASYNC, 3);
    return th_exit();
}
