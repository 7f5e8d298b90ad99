/*
 * scenes_draw.c - draw scenes with static geometry: "triangle", "cube" and
 * "rtt" (see scenes.h for the contract, mat4.h for the conventions).
 *
 * These scenes have no CPU reference: tests/test_golden.c compares them
 * with tests/golden/NAME.png.
 */
#include "mat4.h"
#include "mesh.h"
#include "scenes.h"

#include <stdlib.h>
#include <string.h>

#define PI_F 3.14159265f

static float aspect(const demo *d) { return (float)d->w / (float)d->h; }

/* ---------------------------------------------------------------------------
 * Scene "triangle": the smallest draw. One IMMUTABLE vertex buffer of three
 * colored vertices, KILN_EFFECT_VERTEX_COLOR, its world_view_proj in a
 * DEFAULT constant buffer rewritten each frame with UpdateSubresource, and
 * every state at its default (so the triangle is listed clockwise on
 * screen, D3D10's front face, and culling keeps it).
 * ------------------------------------------------------------------------- */

typedef struct triangle_vertex {
    float pos[2];
    float color[4];
} triangle_vertex;

typedef struct triangle_scene {
    demo_effect fx;
    kiln_buffer vb, cb;
} triangle_scene;

static int triangle_setup(demo *d, void *state)
{
    triangle_scene *s = state;
    triangle_vertex v[3];
    static const float colors[3][4] = {{1, 0.2f, 0.2f, 1}, {0.2f, 1, 0.3f, 1}, {0.25f, 0.4f, 1, 1}};
    for (int k = 0; k < 3; k++) {
        float a = PI_F * 0.5f - (float)k * 2.0f * PI_F / 3.0f; /* clockwise */
        v[k].pos[0] = 0.85f * cosf(a);
        v[k].pos[1] = 0.85f * sinf(a);
        memcpy(v[k].color, colors[k], sizeof v[k].color);
    }
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(triangle_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(triangle_vertex, color)},
    };
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb))
        return -1;
    return 0;
}

static int triangle_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv,
                          uint32_t f)
{
    triangle_scene *s = state;
    const float bg[4] = {0.08f, 0.09f, 0.12f, 1};
    const uint32_t stride = sizeof(triangle_vertex), offset = 0;
    /* Rotate, then squeeze x so the triangle stays equilateral on screen. */
    mat4 wvp =
        mat4_mul(mat4_scale(1.0f / aspect(d), 1, 1), mat4_rotate(v3(0, 0, 1), (float)f * 0.05f));

    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb), 0, NULL, wvp.m, 0, 0));
    if (demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb));
    TRY(d, kiln_draw(d->ctx, 3, 0));
    (void)canvas;
    return 0;
}

const scene demo_scene_triangle = {
    .name = "triangle",
    .summary = "one colored triangle: VERTEX_COLOR, IMMUTABLE vertices, default states",
    .state_size = sizeof(triangle_scene),
    .setup = triangle_setup,
    .frame = triangle_frame,
    .expect = NULL, /* a draw scene: tests/golden/triangle.png */
};

/* ---------------------------------------------------------------------------
 * Scene "cube": two interpenetrating textured cubes with perspective and a
 * D24_UNORM_S8_UINT depth buffer. The texture (a checkerboard with a border
 * and a marker in one corner, so orientation shows) is made on the CPU with
 * its whole mip chain, each mip uploaded with UpdateSubresource, and
 * sampled trilinearly; KILN_EFFECT_TEXTURE_COLOR tints each face. Culling
 * is off, so every back face reaches the depth test, which must hide it;
 * where the cubes cut into each other the intersection is a straight line.
 * Both draws take their world_view_proj from one DEFAULT constant buffer
 * updated (UpdateSubresource) between them.
 * ------------------------------------------------------------------------- */

#define CUBE_TEX 64u

typedef struct cube_vertex {
    float pos[3];
    float color[4];
    float uv[2];
} cube_vertex;

typedef struct cube_scene {
    demo_effect fx;
    kiln_buffer vb, ib, cb;
    kiln_srv srv;
    kiln_dsv dsv;
    kiln_sampler sampler;
    kiln_rasterizer_state rs;
} cube_scene;

static void cube_texel(uint32_t x, uint32_t y, uint8_t *p)
{
    static const uint8_t light[4] = {236, 226, 204, 255}, dark[4] = {196, 98, 64, 255},
                         border[4] = {40, 36, 48, 255}, marker[4] = {40, 120, 220, 255};
    const uint8_t *c = ((x / 8 + y / 8) & 1) ? dark : light;
    if (x < 3 || y < 3 || x >= CUBE_TEX - 3 || y >= CUBE_TEX - 3)
        c = border;
    else if (x >= 8 && x < 20 && y >= 8 && y < 20)
        c = marker;
    memcpy(p, c, 4);
}

/* 2x2 box filter, rounding to nearest. */
static void downsample(const uint8_t *src, uint32_t w, uint32_t h, uint8_t *dst)
{
    uint32_t dw = w > 1 ? w / 2 : 1, dh = h > 1 ? h / 2 : 1;
    for (uint32_t y = 0; y < dh; y++)
        for (uint32_t x = 0; x < dw; x++)
            for (uint32_t c = 0; c < 4; c++) {
                uint32_t x0 = 2 * x, x1 = w > 1 ? x0 + 1 : x0, y0 = 2 * y, y1 = h > 1 ? y0 + 1 : y0;
                uint32_t sum = src[(y0 * w + x0) * 4 + c] + src[(y0 * w + x1) * 4 + c] +
                               src[(y1 * w + x0) * 4 + c] + src[(y1 * w + x1) * 4 + c];
                dst[(y * dw + x) * 4 + c] = (uint8_t)((sum + 2) / 4);
            }
}

/* Makes the texture (all mips) and uploads each mip. */
static int cube_texture(demo *d, kiln_srv *out)
{
    kiln_texture2d_desc desc = {
        .width = CUBE_TEX,
        .height = CUBE_TEX,
        .mip_levels = 0, /* the full chain: 7 levels */
        .format = DEMO_FORMAT,
        .bind_flags = KILN_BIND_SHADER_RESOURCE,
    };
    kiln_texture tex;
    uint8_t *a = malloc(CUBE_TEX * CUBE_TEX * 4), *b = malloc(CUBE_TEX * CUBE_TEX * 4);
    int rc = -1;
    if (!a || !b) {
        demo_fail(d, "out of memory");
        goto done;
    }
    if (demo_new_texture_desc(d, &desc, NULL, &tex) || demo_new_srv(d, tex, out))
        goto done;
    for (uint32_t y = 0; y < CUBE_TEX; y++)
        for (uint32_t x = 0; x < CUBE_TEX; x++)
            cube_texel(x, y, a + (y * CUBE_TEX + x) * 4);
    for (uint32_t mip = 0, size = CUBE_TEX;; mip++, size /= 2) {
        kiln_result r = kiln_update_subresource(d->ctx, demo_res(tex), mip, NULL, a, 0, 0);
        if (r != KILN_OK) {
            demo_fail_call(d, "kiln_update_subresource(mip)", r, __FILE__, __LINE__);
            goto done;
        }
        if (size == 1)
            break;
        downsample(a, size, size, b);
        uint8_t *t = a;
        a = b;
        b = t;
    }
    rc = 0;
done:
    free(a);
    free(b);
    return rc;
}

static int cube_setup(demo *d, void *state)
{
    cube_scene *s = state;
    static const float tint[6][4] = {
        {1, 1, 1, 1},       {1, 0.85f, 0.6f, 1}, {0.7f, 1, 0.7f, 1},
        {0.6f, 0.8f, 1, 1}, {1, 0.7f, 0.9f, 1},  {0.85f, 0.85f, 0.85f, 1},
    };
    demo_cube_vertex m[DEMO_CUBE_VERTICES];
    cube_vertex v[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    demo_cube_mesh(m, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        memcpy(v[i].pos, m[i].pos, sizeof v[i].pos);
        memcpy(v[i].color, tint[m[i].face], sizeof v[i].color);
        memcpy(v[i].uv, m[i].uv, sizeof v[i].uv);
    }
    const kiln_input_element el[3] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(cube_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(cube_vertex, color)},
        {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(cube_vertex, uv)},
    };
    const kiln_sampler_desc trilinear_wrap = {
        .min_filter = KILN_FILTER_LINEAR,
        .mag_filter = KILN_FILTER_LINEAR,
        .mip_filter = KILN_FILTER_LINEAR,
        .address_u = KILN_ADDRESS_WRAP,
        .address_v = KILN_ADDRESS_WRAP,
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_NONE, .front_ccw = 1};
    if (demo_new_effect(d, KILN_EFFECT_TEXTURE_COLOR, el, 3, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx, &s->ib) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb) ||
        cube_texture(d, &s->srv) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D24_UNORM_S8_UINT, &s->dsv) ||
        demo_new_sampler(d, &trilinear_wrap, &s->sampler) || demo_new_rasterizer(d, &rs, &s->rs))
        return -1;
    return 0;
}

static int cube_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    cube_scene *s = state;
    const float bg[4] = {0.16f, 0.18f, 0.22f, 1};
    const uint32_t stride = sizeof(cube_vertex), offset = 0;
    mat4 vp = mat4_mul(mat4_perspective(45.0f * PI_F / 180.0f, aspect(d), 1.0f, 12.0f),
                       mat4_look_at(v3(0, 1.8f, 4.6f), v3(0, 0, 0), v3(0, 1, 0)));
    float t = (float)f;
    mat4 big = mat4_mul(mat4_rotate(v3(0, 1, 0), 0.5f + t * 0.06f),
                        mat4_rotate(v3_normalize(v3(1, 0, 0.4f)), 0.35f + t * 0.03f));
    float orbit = 0.6f + t * 0.11f;
    mat4 small =
        mat4_mul(mat4_translate(1.15f * cosf(orbit), 0.35f * sinf(2 * orbit), 1.15f * sinf(orbit)),
                 mat4_mul(mat4_rotate(v3_normalize(v3(0.3f, 1, 0.2f)), -t * 0.13f),
                          mat4_scale(0.45f, 0.45f, 0.45f)));
    mat4 wvp[2] = {mat4_mul(vp, big), mat4_mul(vp, small)};

    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->srv));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, 1, &s->sampler));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    for (int i = 0; i < 2; i++) {
        TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb), 0, NULL, wvp[i].m, 0, 0));
        TRY(d, kiln_draw_indexed(d->ctx, DEMO_CUBE_INDICES, 0, 0));
    }
    (void)canvas;
    return 0;
}

const scene demo_scene_cube = {
    .name = "cube",
    .summary = "two textured cubes cutting into each other: mipmaps, D24S8, perspective",
    .state_size = sizeof(cube_scene),
    .setup = cube_setup,
    .frame = cube_frame,
    .expect = NULL, /* a draw scene: tests/golden/cube.png */
};

/* ---------------------------------------------------------------------------
 * Scene "rtt": render to texture. Each frame first draws into a 256 x 256
 * texture with render-target and shader-resource binds and its full mip
 * chain: a grid of one-pixel lines (LINE_LIST) and a turning pinwheel of
 * colored triangles. kiln_generate_mips fills the smaller mips. Then the
 * canvas shows that texture twice, in perspective, through
 * KILN_EFFECT_TEXTURE with trilinear samplers: once on a standing panel
 * (clamped), and tiled across a floor that runs to the horizon (wrapped),
 * where the lines blur into the averaged color of the smaller mips with
 * distance. The canvas has a D32_FLOAT depth buffer.
 * ------------------------------------------------------------------------- */

#define RTT_SIZE 256u
#define RTT_GRID 8u    /* lines each way */
#define RTT_BLADES 12u /* pinwheel triangles */

typedef struct color_vertex {
    float pos[2];
    float color[4];
} color_vertex;

typedef struct tex_vertex {
    float pos[3];
    float uv[2];
} tex_vertex;

typedef struct rtt_scene {
    demo_effect color_fx, tex_fx;
    kiln_buffer grid_vb, blade_vb, quad_vb, quad_ib, identity_cb, spin_cb, view_cb[2];
    kiln_rtv rtv;
    kiln_srv srv;
    kiln_dsv dsv;
    kiln_sampler wrap, clamp;
    kiln_rasterizer_state rs;
} rtt_scene;

static int rtt_geometry(demo *d, rtt_scene *s)
{
    color_vertex grid[RTT_GRID * 4], blades[RTT_BLADES * 3];
    static const float line[4] = {0.95f, 0.95f, 0.8f, 1};
    for (uint32_t k = 0; k < RTT_GRID; k++) {
        /* Through texel centers, so each line is one texel wide. */
        float p = ((float)(k * (RTT_SIZE / RTT_GRID)) + 0.5f) / RTT_SIZE * 2.0f - 1.0f;
        color_vertex *v = grid + k * 4;
        v[0] = (color_vertex){{p, -1}, {0}};
        v[1] = (color_vertex){{p, 1}, {0}};
        v[2] = (color_vertex){{-1, p}, {0}};
        v[3] = (color_vertex){{1, p}, {0}};
        for (int i = 0; i < 4; i++)
            memcpy(v[i].color, line, sizeof line);
    }
    static const float hue[4][4] = {{0.95f, 0.3f, 0.25f, 1},
                                    {0.98f, 0.8f, 0.2f, 1},
                                    {0.2f, 0.75f, 0.45f, 1},
                                    {0.3f, 0.45f, 0.95f, 1}};
    for (uint32_t k = 0; k < RTT_BLADES; k++) {
        float a0 = (float)k * 2.0f * PI_F / RTT_BLADES, a1 = a0 - 0.42f;
        color_vertex *v = blades + k * 3; /* clockwise on screen */
        v[0] = (color_vertex){{0, 0}, {1, 1, 1, 1}};
        v[1] = (color_vertex){{0.8f * cosf(a0), 0.8f * sinf(a0)}, {0}};
        v[2] = (color_vertex){{0.55f * cosf(a1), 0.55f * sinf(a1)}, {0}};
        memcpy(v[1].color, hue[k % 4], sizeof v[1].color);
        memcpy(v[2].color, hue[(k + 1) % 4], sizeof v[2].color);
    }
    /* A floor (y = 0, tiled every 4 units) and a 2 x 2 panel at the origin,
     * counter-clockwise from above and from +z. */
    const float fx = 40.0f, fz0 = -90.0f, fz1 = 8.0f, tile = 4.0f;
    tex_vertex quads[8] = {
        {{-fx, 0, fz1}, {-fx / tile, fz1 / tile}},
        {{fx, 0, fz1}, {fx / tile, fz1 / tile}},
        {{fx, 0, fz0}, {fx / tile, fz0 / tile}},
        {{-fx, 0, fz0}, {-fx / tile, fz0 / tile}},
        {{-1, -1, 0}, {0, 1}},
        {{1, -1, 0}, {1, 1}},
        {{1, 1, 0}, {1, 0}},
        {{-1, 1, 0}, {0, 0}},
    };
    const uint16_t idx[12] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7};
    const mat4 identity = mat4_identity();
    if (demo_new_buffer(d, sizeof grid, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, grid,
                        &s->grid_vb) ||
        demo_new_buffer(d, sizeof blades, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, blades,
                        &s->blade_vb) ||
        demo_new_buffer(d, sizeof quads, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, quads,
                        &s->quad_vb) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx,
                        &s->quad_ib) ||
        demo_new_buffer(d, sizeof identity, KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER,
                        identity.m, &s->identity_cb))
        return -1;
    for (int i = 0; i < 2; i++)
        if (demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                            &s->view_cb[i]))
            return -1;
    return demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                           &s->spin_cb);
}

static int rtt_setup(demo *d, void *state)
{
    rtt_scene *s = state;
    const kiln_input_element color_el[2] = {
        {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(color_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(color_vertex, color)},
    };
    const kiln_input_element tex_el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(tex_vertex, pos)},
        {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(tex_vertex, uv)},
    };
    kiln_texture2d_desc desc = {
        .width = RTT_SIZE,
        .height = RTT_SIZE,
        .mip_levels = 0, /* full chain: 9 levels */
        .format = DEMO_FORMAT,
        .bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
    };
    kiln_sampler_desc trilinear = {
        .min_filter = KILN_FILTER_LINEAR,
        .mag_filter = KILN_FILTER_LINEAR,
        .mip_filter = KILN_FILTER_LINEAR,
        .address_u = KILN_ADDRESS_WRAP,
        .address_v = KILN_ADDRESS_WRAP,
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_NONE, .front_ccw = 1};
    kiln_texture tex;
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, color_el, 2, &s->color_fx) ||
        demo_new_effect(d, KILN_EFFECT_TEXTURE, tex_el, 2, &s->tex_fx) || rtt_geometry(d, s) ||
        demo_new_texture_desc(d, &desc, NULL, &tex) || demo_new_rtv(d, tex, 0, &s->rtv) ||
        demo_new_srv(d, tex, &s->srv) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv) ||
        demo_new_sampler(d, &trilinear, &s->wrap) || demo_new_rasterizer(d, &rs, &s->rs))
        return -1;
    trilinear.address_u = trilinear.address_v = KILN_ADDRESS_CLAMP;
    return demo_new_sampler(d, &trilinear, &s->clamp);
}

/* The offscreen pass: grid and pinwheel into mip 0, then the mips. */
static int rtt_offscreen(demo *d, rtt_scene *s, uint32_t f)
{
    const float bg[4] = {0.12f, 0.1f, 0.3f, 1};
    const uint32_t stride = sizeof(color_vertex), offset = 0;
    mat4 spin = mat4_rotate(v3(0, 0, 1), -(float)f * 0.09f);

    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->spin_cb), 0, NULL, spin.m, 0, 0));
    if (demo_bind_target(d, s->rtv, (kiln_dsv){0}, RTT_SIZE, RTT_SIZE) ||
        demo_bind_effect(d, &s->color_fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, s->rtv, bg));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->grid_vb, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_LINE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->identity_cb));
    TRY(d, kiln_draw(d->ctx, RTT_GRID * 4, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->blade_vb, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->spin_cb));
    TRY(d, kiln_draw(d->ctx, RTT_BLADES * 3, 0));
    TRY(d, kiln_generate_mips(d->ctx, s->srv));
    return 0;
}

static int rtt_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    rtt_scene *s = state;
    const float sky[4] = {0.62f, 0.74f, 0.88f, 1};
    const uint32_t stride = sizeof(tex_vertex), offset = 0;
    mat4 vp = mat4_mul(mat4_perspective(50.0f * PI_F / 180.0f, aspect(d), 0.1f, 120.0f),
                       mat4_look_at(v3(0, 1.5f, 4.2f), v3(0, 1.0f, -3.0f), v3(0, 1, 0)));
    mat4 panel = mat4_mul(mat4_translate(0.3f, 1.45f, -1.2f),
                          mat4_mul(mat4_rotate(v3(0, 1, 0), -0.45f), mat4_scale(1.1f, 1.1f, 1)));
    mat4 wvp[2] = {vp, mat4_mul(vp, panel)};

    if (rtt_offscreen(d, s, f))
        return -1;
    for (int i = 0; i < 2; i++)
        TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->view_cb[i]), 0, NULL, wvp[i].m, 0, 0));
    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h) || demo_bind_effect(d, &s->tex_fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, sky));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->quad_vb, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->quad_ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->srv));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    /* The floor, tiled. */
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->view_cb[0]));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, 1, &s->wrap));
    TRY(d, kiln_draw_indexed(d->ctx, 6, 0, 0));
    /* The panel, once. */
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->view_cb[1]));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, 1, &s->clamp));
    TRY(d, kiln_draw_indexed(d->ctx, 6, 6, 0));
    (void)canvas;
    return 0;
}

const scene demo_scene_rtt = {
    .name = "rtt",
    .summary = "render to texture, generate_mips, trilinear sampling on planes in perspective",
    .state_size = sizeof(rtt_scene),
    .setup = rtt_setup,
    .frame = rtt_frame,
    .expect = NULL, /* a draw scene: tests/golden/rtt.png */
};
