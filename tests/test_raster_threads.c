/*
 * test_raster_threads: DESIGN invariant 2 for drawing. One scene - thousands
 * of random overlapping triangles with a depth test and alpha blending,
 * textured through KILN_EFFECT_TEXTURE_COLOR with a perspective matrix,
 * lines, points, indexed and instanced-free small draws with changing
 * states, clears inside the scene, and a draw large enough to need several
 * waves of the scene executor - is rendered in SERIAL mode and in ASYNC mode
 * with 1, 2, 3 and 8 worker threads. Color and depth-stencil bytes must be
 * identical in every run.
 *
 * The scene is described once (from a fixed seed) and replayed on each
 * device; the test also checks the image is not trivial (many distinct
 * colors, depth written), so that "all black everywhere" cannot pass.
 */
#include "raster_util.h"

#include <stdio.h>

enum { W = 517, H = 389, TEX = 64, NBIG = 4000, NSMALL = 150, NHUGE = 270000 };

typedef struct vtx {
    float pos[3];
    uint8_t color[4];
    float uv[2];
} vtx;

static vtx *big, *small, *lines, *points, *huge;
static uint32_t nlines, npoints;
static uint16_t idx16[600];
static uint8_t texels[TEX * TEX * 4 * 2]; /* mip 0 and room for the rest */

static vtx rvtx(th_rng *r, float cx, float cy, float spread)
{
    vtx v;
    v.pos[0] = cx + th_frand(r, -spread, spread);
    v.pos[1] = cy + th_frand(r, -spread, spread);
    v.pos[2] = th_frand(r, 1.5f, 9.0f); /* view depth for the perspective matrix */
    for (int c = 0; c < 4; c++)
        v.color[c] = (uint8_t)th_below(r, 256);
    v.uv[0] = th_frand(r, -2, 3);
    v.uv[1] = th_frand(r, -2, 3);
    return v;
}

static void build_scene(void)
{
    th_rng r = {0x7417ead5ull};
    big = malloc(sizeof(vtx) * NBIG * 3);
    for (int t = 0; t < NBIG; t++) {
        float cx = th_frand(&r, -1.3f, 1.3f), cy = th_frand(&r, -1.3f, 1.3f);
        float spread = t % 10 == 0 ? 1.0f : 0.15f;
        for (int k = 0; k < 3; k++)
            big[t * 3 + k] = rvtx(&r, cx, cy, spread);
    }
    small = malloc(sizeof(vtx) * NSMALL * 6);
    for (int t = 0; t < NSMALL * 6; t++)
        small[t] = rvtx(&r, th_frand(&r, -1, 1), th_frand(&r, -1, 1), 0.3f);
    for (int i = 0; i < 600; i++)
        idx16[i] = (uint16_t)th_below(&r, NSMALL * 6);
    nlines = 400;
    lines = malloc(sizeof(vtx) * nlines);
    for (uint32_t i = 0; i < nlines; i++)
        lines[i] = rvtx(&r, 0, 0, 1.2f);
    npoints = 500;
    points = malloc(sizeof(vtx) * npoints);
    for (uint32_t i = 0; i < npoints; i++)
        points[i] = rvtx(&r, 0, 0, 1.2f);
    huge = malloc(sizeof(vtx) * NHUGE * 3);
    for (int t = 0; t < NHUGE; t++) {
        float cx = th_frand(&r, -1.1f, 1.1f), cy = th_frand(&r, -1.1f, 1.1f);
        for (int k = 0; k < 3; k++)
            huge[t * 3 + k] = rvtx(&r, cx, cy, 0.02f);
    }
    for (size_t i = 0; i < sizeof texels; i++)
        texels[i] = (uint8_t)th_below(&r, 256);
}

/* Perspective: x' = x * z, y' = y * z... keeps the screen spread while w
 * (= z) varies from 1.5 to 9; z' maps [1, 10] to [0, 1]. */
static const float persp[16] = {
    1.0f, 0,    0.05f,        0,             /* x */
    0,    1.0f, -0.03f,       0,             /* y */
    0,    0,    10.0f / 9.0f, -10.0f / 9.0f, /* z: (z - 1) * 10/9 */
    0,    0,    1.0f,         0,             /* w = z */
};

typedef struct images {
    uint8_t *color, *depth;
} images;

static kiln_buffer vbuf(kiln_device *dev, const vtx *v, uint32_t n)
{
    return ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, (uint32_t)sizeof(vtx) * n);
}

static void bind_vb(kiln_context *ctx, kiln_buffer b)
{
    uint32_t stride = sizeof(vtx), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &b, &stride, &off), KILN_OK);
}

static images render(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    if (mode == KILN_EXEC_ASYNC)
        CHECK_EQ_INT(kiln_device_num_threads(dev), threads);

    kiln_vertex_shader_desc vsd;
    kiln_pixel_shader_desc psd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_TEXTURE_COLOR, &vsd, &psd), KILN_OK);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vsd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &psd, &ps), KILN_OK);
    kiln_input_layout_desc ld = {3,
                                 {{KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0},
                                  {KILN_FORMAT_R8G8B8A8_UNORM, 0, 12, 0, 0},
                                  {KILN_FORMAT_R32G32_FLOAT, 0, 16, 0, 0}}};
    kiln_input_layout il;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);

    /* texture with 3 mips: mip 0 random, 1 and 2 generated */
    kiln_texture2d_desc td = {TEX,
                              TEX,
                              3,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET,
                              0, 0};
    kiln_texture tex;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_OK);
    CHECK_RESULT(
        kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, NULL, texels, TEX * 4, 0),
        KILN_OK);
    kiln_srv srv;
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(ctx, srv), KILN_OK);
    kiln_sampler_desc sd = {0};
    sd.address_u = KILN_ADDRESS_WRAP;
    sd.address_v = KILN_ADDRESS_MIRROR;
    kiln_sampler samp;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &samp), KILN_OK);

    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D24_UNORM_S8_UINT);
    kiln_buffer cb = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, persp, sizeof persp);

    kiln_blend_desc bd = {0};
    bd.rt[0] = (kiln_blend_target){1,
                                   KILN_BLEND_SRC_ALPHA,
                                   KILN_BLEND_INV_SRC_ALPHA,
                                   KILN_BLEND_OP_ADD,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_INV_SRC_ALPHA,
                                   KILN_BLEND_OP_ADD,
                                   0};
    kiln_blend_state alpha = ru_bs(dev, &bd);
    kiln_blend_state add = ru_bs_add(dev);
    kiln_depth_stencil_state less = ru_dss(dev, (kiln_depth_stencil_desc){0});
    kiln_depth_stencil_desc sten = {0};
    sten.depth_func = KILN_COMPARE_LESS_EQUAL;
    sten.stencil_enable = 1;
    sten.front = (kiln_stencil_face){KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_INCR,
                                     KILN_STENCIL_OP_INCR_SAT, KILN_COMPARE_ALWAYS};
    sten.back = (kiln_stencil_face){KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_DECR,
                                    KILN_STENCIL_OP_INVERT, KILN_COMPARE_ALWAYS};
    kiln_depth_stencil_state stencil = ru_dss(dev, sten);
    kiln_rasterizer_state none = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    kiln_rasterizer_state back = ru_rs(dev, (kiln_rasterizer_desc){0});
    kiln_rasterizer_state scissor =
        ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE, .scissor_enable = 1});

    kiln_buffer vb_big = vbuf(dev, big, NBIG * 3), vb_small = vbuf(dev, small, NSMALL * 6);
    kiln_buffer vb_lines = vbuf(dev, lines, nlines), vb_points = vbuf(dev, points, npoints);
    kiln_buffer vb_huge = vbuf(dev, huge, NHUGE * 3);
    kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx16, sizeof idx16);

    const float clear[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 7),
                 KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &samp), KILN_OK);

    /* 1. the big draw: depth test, alpha blending, no culling */
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, none), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, alpha, NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);
    bind_vb(ctx, vb_big);
    CHECK_RESULT(kiln_draw(ctx, NBIG * 3, 0), KILN_OK);

    /* 2. many small draws with changing states */
    bind_vb(ctx, vb_small);
    for (uint32_t i = 0; i < NSMALL; i++) {
        CHECK_RESULT(kiln_om_set_blend_state(ctx,
                                             i % 3 == 0   ? add
                                             : i % 3 == 1 ? alpha
                                                          : (kiln_blend_state){0},
                                             NULL),
                     KILN_OK);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, i % 2 ? stencil : less, i), KILN_OK);
        CHECK_RESULT(kiln_rs_set_state(ctx, i % 4 == 0   ? back
                                            : i % 4 == 1 ? scissor
                                                         : none),
                     KILN_OK);
        kiln_rect sc = {(int32_t)(i * 3 % W), (int32_t)(i * 7 % H), (int32_t)(i * 3 % W) + 200,
                        (int32_t)(i * 7 % H) + 150};
        CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
        CHECK_RESULT(kiln_draw(ctx, 6, i * 6), KILN_OK);
        if (i == NSMALL / 2) { /* a clear inside the scene, and a flush */
            CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 0.97f, 0), KILN_OK);
            CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        }
    }
    /* 3. an indexed draw with 16-bit indices */
    CHECK_RESULT(kiln_rs_set_state(ctx, none), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, alpha, NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_draw_indexed(ctx, 600, 0, 0), KILN_OK);
    /* 4. lines (list and strip) and points, no depth test */
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, stencil, 3), KILN_OK);
    bind_vb(ctx, vb_lines);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_LINE_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, nlines / 2, 0), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_LINE_STRIP), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, nlines / 2, nlines / 2), KILN_OK);
    bind_vb(ctx, vb_points);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, npoints, 0), KILN_OK);
    /* 5. a draw of more primitives than one wave of the executor */
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
    bind_vb(ctx, vb_huge);
    CHECK_RESULT(kiln_draw(ctx, NHUGE * 3, 0), KILN_OK);
    /* 6. one more big pass over it, then read back */
    bind_vb(ctx, vb_big);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, alpha, NULL), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, NBIG * 3 / 2, 0), KILN_OK);

    images out;
    out.color = ru_read_bytes(dev, &rt);
    out.depth = ru_read_bytes(dev, &ds);

    kiln_destroy_buffer(dev, vb_big);
    kiln_destroy_buffer(dev, vb_small);
    kiln_destroy_buffer(dev, vb_lines);
    kiln_destroy_buffer(dev, vb_points);
    kiln_destroy_buffer(dev, vb_huge);
    kiln_destroy_buffer(dev, ib);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_sampler(dev, samp);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &ds);
    kiln_device_destroy(dev); /* the rest goes with the device */
    return out;
}

static void compare_bytes(const char *what, uint32_t threads, const uint8_t *got,
                          const uint8_t *want, size_t n)
{
    size_t first = n, count = 0;
    for (size_t i = 0; i < n; i++)
        if (got[i] != want[i]) {
            if (first == n)
                first = i;
            count++;
        }
    th_check(count == 0, what, __FILE__, __LINE__);
    if (count)
        fprintf(stderr,
                "    %s with %u threads: %zu bytes differ from SERIAL, first at pixel (%zu, %zu)\n",
                what, threads, count, first / 4 % W, first / 4 / W);
}

int main(void)
{
    build_scene();
    images ref = render(KILN_EXEC_SERIAL, 0);
    /* The image is not trivial: many colors, depth written, stencil used. */
    {
        uint32_t distinct = 0, zwritten = 0, stencil_changed = 0;
        static uint8_t seen[1 << 15];
        for (size_t i = 0; i < (size_t)W * H; i++) {
            const uint8_t *p = ref.color + 4 * i;
            uint32_t key =
                (uint32_t)(p[0] >> 3) | (uint32_t)(p[1] >> 3) << 5 | (uint32_t)(p[2] >> 3) << 10;
            distinct += !seen[key];
            seen[key] = 1;
            uint32_t d;
            memcpy(&d, ref.depth + 4 * i, 4);
            zwritten +=
                (d & 0xffffff) != 0xffffff && (d & 0xffffff) != (uint32_t)(0.97 * 16777215.0 + 0.5);
            stencil_changed += (d >> 24) != 7 && (d >> 24) != 0;
        }
        printf("distinct colors %u, depth written %u of %u, stencil changed %u\n", distinct,
               zwritten, W * H, stencil_changed);
        CHECK(distinct > 1000);
        CHECK(zwritten > (uint32_t)(W * H / 4));
        CHECK(stencil_changed > 100);
    }
    static const uint32_t counts[] = {1, 2, 3, 8};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        images got = render(KILN_EXEC_ASYNC, counts[k]);
        compare_bytes("color target", counts[k], got.color, ref.color, (size_t)W * H * 4);
        compare_bytes("depth-stencil", counts[k], got.depth, ref.depth, (size_t)W * H * 4);
        free(got.color);
        free(got.depth);
    }
    /* SERIAL twice gives the same too (no hidden state between devices). */
    images again = render(KILN_EXEC_SERIAL, 0);
    compare_bytes("color target (SERIAL again)", 0, again.color, ref.color, (size_t)W * H * 4);
    free(again.color);
    free(again.depth);
    free(ref.color);
    free(ref.depth);
    free(big);
    free(small);
    free(lines);
    free(points);
    free(huge);
    return th_exit();
}
