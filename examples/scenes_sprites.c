/*
 * scenes_sprites.c - draw scene "sprites": particles as point sprites that a
 * geometry shader expands (see scenes.h for the contract, mat4.h for the
 * conventions, docs/raster.md "Geometry shader").
 *
 * 3,000 particles swirl around a pillar standing on a floor. Each is one
 * vertex of a POINT_LIST in an IMMUTABLE buffer: its orbit (radius, start
 * angle, height, phase), color and size, 8 bytes drawn from a fixed seed
 * (an xorshift stream). Each frame:
 *
 *   1. the floor and the pillar are drawn opaque (the built-in vertex-color
 *      effect, depth writes on);
 *   2. the particles are drawn in one draw: the vertex shader (ours) moves
 *      each along its orbit for the frame's time and projects it; the
 *      geometry shader turns each point into a camera-facing quad, a strip
 *      of 4 vertices with texture coordinates, offset in clip space by the
 *      particle's size times the projection's scale (a square in view
 *      space); the pixel shader makes it a soft round spot. Additive
 *      blending (the result does not depend on the order of overlapping
 *      sprites beyond the rounding, and kiln keeps the order anyway), depth
 *      test on so the pillar hides the particles behind it, depth writes
 *      off.
 *
 * Without a geometry stage (osmesa refuses creating the shader with
 * KILN_E_UNSUPPORTED) the scene says so once and draws each particle as a
 * one-pixel point with the vertex-color effect instead, its positions
 * computed on the CPU into a DYNAMIC buffer: a different, honest picture
 * (test_cross_backend does not compare this scene).
 *
 * The shaders are ours, so the scene registers them by name
 * (sprites_register) for captures.
 */
#include "mat4.h"
#include "mesh.h"
#include "scenes.h"

#include <stdio.h>
#include <string.h>

#define PI_F 3.14159265f
#define SPR_N 3000u

/* One particle, the vertex of the POINT_LIST, 8 bytes (two R8G8B8A8_UNORM
 * elements, read as [0, 1]): its orbit (radius, start angle, height,
 * phase) and its look (red, green, blue, size). */
typedef struct spr_particle {
    uint8_t orbit[4];
    uint8_t look[4];
} spr_particle;

/* The vertex shader's cb0. */
typedef struct spr_constants {
    mat4 view_proj;
    float time, scale_x, scale_y, pad; /* the projection's x and y scales */
} spr_constants;

/* A vertex of the opaque geometry (the vertex-color effect), and of the
 * fallback's points. */
typedef struct spr_vertex {
    float pos[3];
    float color[4];
} spr_vertex;

typedef struct spr_scene {
    int has_gs; /* 0: the backend has no geometry stage */
    demo_effect fx;
    kiln_vertex_shader vs;
    kiln_geometry_shader gs;
    kiln_pixel_shader ps;
    kiln_input_layout layout;
    kiln_buffer particles, points, cube_vb, cube_ib, cb, cb_floor, cb_pillar, cb_points;
    kiln_dsv dsv;
    kiln_rasterizer_state rs;
    kiln_blend_state additive;
    kiln_depth_stencil_state test_only;
    spr_particle part[SPR_N];
    spr_vertex point[SPR_N]; /* the fallback's CPU positions */
} spr_scene;

/* The particles' bytes come from one xorshift32 stream, from a fixed
 * seed, particle after particle. */
static uint8_t spr_byte(uint32_t *rng)
{
    uint32_t x = *rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *rng = x;
    return (uint8_t)(x >> 24);
}

static void make_particle(uint32_t *rng, spr_particle *p)
{
    for (uint32_t k = 0; k < 4; k++)
        p->orbit[k] = spr_byte(rng);
    /* warm near the pillar, cold outside, a little jitter */
    float k = (float)p->orbit[0] / 255.0f, j = 0.25f * (float)spr_byte(rng) / 255.0f;
    p->look[0] = (uint8_t)(255.0f * fminf(1.0f, 0.75f - 0.6f * k + j));
    p->look[1] = (uint8_t)(255.0f * (0.45f + 0.2f * k + j));
    p->look[2] = (uint8_t)(255.0f * (0.15f + 0.85f * k));
    p->look[3] = spr_byte(rng);
}

/* Where a particle with `orbit` (the bytes as [0, 1]) is at time t: the
 * vertex shader and the fallback's CPU positions both use this. Inner
 * particles turn faster; each bobs up and down by its phase. */
static vec3 particle_at(const float orbit[4], float t)
{
    float r = 0.25f + 1.6f * orbit[0], phase = 2.0f * PI_F * orbit[3];
    float a = 2.0f * PI_F * orbit[1] + 0.35f / (0.3f + r) * t;
    float y = 0.1f + 1.8f * orbit[2] * (1.0f - 0.35f * r);
    return v3(r * cosf(a), y + 0.08f * sinf(1.7f * t + phase), r * sinf(a));
}

/* ---- the shaders ---- */

/* Inputs: 0 orbit, 1 look. Outputs: the clip-space position, varying 0
 * the color (alpha: brightness, by the phase), varying 1 the sprite's half
 * size in clip units (x, y; w-independent: a view-space offset scales by
 * the projection). */
static void vs_particle(const kiln_vs_args *a)
{
    const spr_constants *c = a->cb[0];
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + v * a->in_stride;
        float *out = a->out + v * a->out_stride;
        vec3 p = particle_at(in, c->time);
        for (int r = 0; r < 4; r++) {
            const float *m = c->view_proj.m + 4 * r;
            out[r] = m[0] * p.x + m[1] * p.y + m[2] * p.z + m[3];
        }
        float size = 0.025f + 0.05f * in[7]; /* view-space half width */
        memcpy(out + 4, in + 4, 3 * sizeof(float));
        out[7] = 0.35f + 0.4f * in[3];
        out[8] = size * c->scale_x;
        out[9] = size * c->scale_y;
        out[10] = 0;
        out[11] = 0;
    }
}

/* One point in, a quad out: a strip of 4 vertices (top-left, top-right,
 * bottom-left, bottom-right) with the color in varying 0 and the texture
 * coordinates in varying 1. */
static void gs_sprite_quad(kiln_gs_args *a)
{
    const float *p = a->in;
    float v[12];
    for (int k = 0; k < 4; k++) {
        float sx = k & 1 ? 1.0f : -1.0f, sy = k & 2 ? -1.0f : 1.0f;
        v[0] = p[0] + sx * p[8];
        v[1] = p[1] + sy * p[9];
        v[2] = p[2];
        v[3] = p[3];
        memcpy(v + 4, p + 4, 4 * sizeof(float));
        v[8] = (float)(k & 1);
        v[9] = (float)(k >> 1);
        v[10] = 0;
        v[11] = 0;
        kiln_gs_emit(a, v);
    }
    kiln_gs_cut(a); /* each sprite its own strip */
}

/* A soft round spot: brightness falls off as (1 - d^2)^2 with the distance
 * d from the sprite's center (1 at the quad's edge). */
static void ps_soft_spot(kiln_ps_args *a)
{
    const float *u = KILN_PS_VARYING(a, 1, 0), *v = KILN_PS_VARYING(a, 1, 1);
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        float x = 2.0f * u[i] - 1.0f, y = 2.0f * v[i] - 1.0f;
        float f = 1.0f - (x * x + y * y);
        f = f > 0 ? f * f * KILN_PS_VARYING(a, 0, 3)[i] : 0;
        for (int c = 0; c < 3; c++)
            KILN_PS_COLOR(a, 0, c)[i] = KILN_PS_VARYING(a, 0, c)[i] * f;
        KILN_PS_COLOR(a, 0, 3)[i] = f;
    }
}

static const kiln_vertex_shader_desc spr_vs_desc = {
    .fn = vs_particle, .num_inputs = 2, .num_varyings = 2};
static const kiln_geometry_shader_desc spr_gs_desc = {
    .fn = gs_sprite_quad,
    .input = KILN_GS_INPUT_POINT,
    .output = KILN_GS_OUTPUT_TRIANGLE_STRIP,
    .max_vertices = 4,
    .num_varyings = 2,
};
static const kiln_pixel_shader_desc spr_ps_desc = {
    .fn = ps_soft_spot, .num_varyings = 2, .num_outputs = 1, .flags = KILN_PS_NO_Z};

static kiln_result sprites_register(kiln_device *dev)
{
    kiln_result r = kiln_capture_register_vertex_shader(dev, "demo.sprites.vs", &spr_vs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_geometry_shader(dev, "demo.sprites.gs", &spr_gs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_pixel_shader(dev, "demo.sprites.ps", &spr_ps_desc);
    return r;
}

/* ---- the scene ---- */

static int spr_setup(demo *d, void *state)
{
    spr_scene *s = state;
    uint32_t rng = 0x5eed5eedu;
    for (uint32_t i = 0; i < SPR_N; i++)
        make_particle(&rng, &s->part[i]);

    static const float tint[6][4] = {
        {0.34f, 0.33f, 0.40f, 1}, {0.26f, 0.25f, 0.32f, 1}, {0.45f, 0.44f, 0.52f, 1},
        {0.18f, 0.17f, 0.22f, 1}, {0.30f, 0.29f, 0.36f, 1}, {0.22f, 0.21f, 0.28f, 1},
    };
    demo_cube_vertex m[DEMO_CUBE_VERTICES];
    spr_vertex v[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    demo_cube_mesh(m, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        memcpy(v[i].pos, m[i].pos, sizeof v[i].pos);
        memcpy(v[i].color, tint[m[i].face], sizeof v[i].color);
    }
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(spr_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(spr_vertex, color)},
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_BACK, .front_ccw = 1};
    kiln_blend_desc bd = {0};
    bd.rt[0] = (kiln_blend_target){.enable = 1,
                                   .src = KILN_BLEND_ONE,
                                   .dst = KILN_BLEND_ONE,
                                   .src_alpha = KILN_BLEND_ONE,
                                   .dst_alpha = KILN_BLEND_ONE};
    const kiln_depth_stencil_desc dsd = {.depth_write_disable = 1};
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v,
                        &s->cube_vb) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx,
                        &s->cube_ib) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb_floor) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb_pillar) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv) ||
        demo_new_rasterizer(d, &rs, &s->rs) || demo_new_blend(d, &bd, &s->additive) ||
        demo_new_depth_stencil(d, &dsd, &s->test_only))
        return -1;

    int gs = demo_new_geometry_shader(d, &spr_gs_desc, &s->gs);
    if (gs < 0)
        return -1;
    s->has_gs = gs == 0;
    if (!s->has_gs) {
        fprintf(stderr,
                "kiln_demo: scene %s: the backend has no geometry shader: the particles are "
                "drawn as one-pixel points\n",
                d->scene);
        return demo_new_buffer(d, sizeof s->point, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER,
                               NULL, &s->points) ||
                       demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT,
                                       KILN_BIND_CONSTANT_BUFFER, NULL, &s->cb_points)
                   ? -1
                   : 0;
    }
    const kiln_input_element pl[2] = {
        {.format = KILN_FORMAT_R8G8B8A8_UNORM, .offset = offsetof(spr_particle, orbit)},
        {.format = KILN_FORMAT_R8G8B8A8_UNORM, .offset = offsetof(spr_particle, look)},
    };
    if (demo_new_vertex_shader(d, &spr_vs_desc, &s->vs) ||
        demo_new_pixel_shader(d, &spr_ps_desc, &s->ps) ||
        demo_new_layout(d, s->vs, pl, 2, &s->layout) ||
        demo_new_buffer(d, sizeof s->part, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, s->part,
                        &s->particles) ||
        demo_new_buffer(d, sizeof(spr_constants), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER,
                        NULL, &s->cb))
        return -1;
    return 0;
}

static int update(demo *d, kiln_buffer cb, const void *data)
{
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(cb), 0, NULL, data, 0, 0));
    return 0;
}

/* The fallback: each particle a one-pixel point of its color. */
static int draw_points(demo *d, spr_scene *s, mat4 vp, float t)
{
    const uint32_t stride = sizeof(spr_vertex), offset = 0;
    for (uint32_t i = 0; i < SPR_N; i++) {
        const spr_particle *p = &s->part[i];
        float orbit[4], c[3];
        for (int k = 0; k < 4; k++)
            orbit[k] = (float)p->orbit[k] / 255.0f;
        for (int k = 0; k < 3; k++)
            c[k] = (float)p->look[k] / 255.0f;
        vec3 q = particle_at(orbit, t);
        s->point[i] = (spr_vertex){{q.x, q.y, q.z}, {c[0], c[1], c[2], 1}};
    }
    if (demo_write_discard(d, s->points, s->point, sizeof s->point) ||
        update(d, s->cb_points, vp.m))
        return -1;
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_points));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->points, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_POINT_LIST));
    TRY(d, kiln_draw(d->ctx, SPR_N, 0));
    return 0;
}

static int spr_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    spr_scene *s = state;
    const float bg[4] = {0.03f, 0.03f, 0.06f, 1};
    const uint32_t stride = sizeof(spr_vertex), pstride = sizeof(spr_particle), offset = 0;
    float t = 0.5f * (float)f, orbit = 0.3f + 0.06f * (float)f;
    mat4 proj = mat4_perspective(55.0f * PI_F / 180.0f, (float)d->w / (float)d->h, 0.5f, 20.0f);
    mat4 vp = mat4_mul(proj, mat4_look_at(v3(4.0f * sinf(orbit), 1.9f, 4.0f * cosf(orbit)),
                                          v3(0, 0.55f, 0), v3(0, 1, 0)));
    mat4 floor =
        mat4_mul(vp, mat4_mul(mat4_translate(0, -0.05f, 0), mat4_scale(2.4f, 0.05f, 2.4f)));
    mat4 pillar =
        mat4_mul(vp, mat4_mul(mat4_translate(0, 0.9f, 0), mat4_scale(0.16f, 0.9f, 0.16f)));

    if (update(d, s->cb_floor, floor.m) || update(d, s->cb_pillar, pillar.m))
        return -1;
    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));

    /* 1. the floor and the pillar, opaque */
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->cube_vb, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->cube_ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_floor));
    TRY(d, kiln_draw_indexed(d->ctx, DEMO_CUBE_INDICES, 0, 0));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_pillar));
    TRY(d, kiln_draw_indexed(d->ctx, DEMO_CUBE_INDICES, 0, 0));

    /* 2. the particles: added, tested against the depth, not writing it */
    TRY(d, kiln_rs_set_state(d->ctx, (kiln_rasterizer_state){0}));
    TRY(d, kiln_om_set_blend_state(d->ctx, s->additive, NULL));
    TRY(d, kiln_om_set_depth_stencil_state(d->ctx, s->test_only, 0));
    if (!s->has_gs)
        return draw_points(d, s, vp, t);
    spr_constants c = {vp, t, proj.m[0], proj.m[5], 0};
    if (update(d, s->cb, &c))
        return -1;
    TRY(d, kiln_ia_set_input_layout(d->ctx, s->layout));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->particles, &pstride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_POINT_LIST));
    TRY(d, kiln_vs_set_shader(d->ctx, s->vs));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb));
    TRY(d, kiln_gs_set_shader(d->ctx, s->gs));
    TRY(d, kiln_ps_set_shader(d->ctx, s->ps));
    TRY(d, kiln_draw(d->ctx, SPR_N, 0));
    /* demo_reset_pipeline leaves the geometry stage alone: unbind it here */
    TRY(d, kiln_gs_set_shader(d->ctx, (kiln_geometry_shader){0}));
    (void)canvas;
    return 0;
}

const scene demo_scene_sprites = {
    .name = "sprites",
    .summary = "3,000 particles as point sprites a geometry shader expands to quads, added",
    .state_size = sizeof(spr_scene),
    .setup = spr_setup,
    .frame = spr_frame,
    .expect = NULL, /* a draw scene: tests/golden/sprites.png */
    .register_shaders = sprites_register,
};
