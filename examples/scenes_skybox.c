/*
 * scenes_skybox.c - draw scene "skybox": an environment rendered into the
 * six faces of a cube in one layered draw, then drawn around the camera as
 * a sky (see scenes.h for the contract, mat4.h for the conventions,
 * docs/raster.md "Geometry shader").
 *
 * The world: a sky dome (a large cube shaded from deep blue overhead to
 * haze at the horizon), a checkered ground and a ring of colored towers
 * with a sun above them, all in one IMMUTABLE vertex buffer, turning
 * slowly about the vertical axis. Each frame:
 *
 *   1. the world is drawn once into a 6-slice texture array (render target
 *      and depth views spanning all six slices): the built-in vertex-color
 *      effect places it in the world, and a geometry shader declaring
 *      KILN_GS_WRITES_RT_ARRAY_INDEX sends each triangle six times, once per
 *      slice, projected with that face's 90-degree view (out_rt_array_index
 *      = the face);
 *   2. a full-screen triangle is drawn with a vertex shader that gives each
 *      pixel its view direction and a pixel shader that looks that
 *      direction up in the cube (kiln_ps_sample_uvw on a TEXTURECUBE view).
 *
 * The faces are a TextureCube (kiln_create_texture_cube, issue 12): its six
 * faces are a 2D array for the render-target and depth views of step 1,
 * and one cube view for step 2, whose sampler picks the face (the major
 * axis) as D3D10 does. Each face is rendered in D3D10's orientation for
 * its face (kiln.h's face table: right along sc, down along tc). kiln's
 * cubes do not filter across a face's edge (each face is clamped).
 *
 * Without a geometry stage (osmesa refuses creating the shader with
 * KILN_E_UNSUPPORTED) the scene says so once and draws the world directly
 * from the camera with the vertex-color effect: the same view, without the
 * cube in between (test_cross_backend does not compare this scene).
 *
 * The shaders of steps 1 and 2 are ours, so the scene registers them by
 * name (skybox_register) for captures.
 */
#include "mat4.h"
#include "mesh.h"
#include "scenes.h"

#include <stdio.h>
#include <string.h>

#define PI_F 3.14159265f
#define SKY_FACE 128u /* face size in texels */
#define SKY_GRID 16   /* ground: SKY_GRID x SKY_GRID squares */
#define SKY_TOWERS 12
#define SKY_BOXES (1 + SKY_TOWERS + 1) /* dome, towers, sun */
#define SKY_VERTICES (SKY_BOXES * DEMO_CUBE_VERTICES + SKY_GRID * SKY_GRID * 4)
#define SKY_INDICES (SKY_BOXES * DEMO_CUBE_INDICES + SKY_GRID * SKY_GRID * 6)
#define SKY_NEAR 0.1f
#define SKY_FAR 60.0f

typedef struct sky_vertex {
    float pos[3];
    float color[4];
} sky_vertex;

/* The full-screen pass's vertex-shader cb0: the camera's right, up and
 * forward vectors (w unused), right and up scaled by the tangents of the
 * half fields of view. */
typedef struct sky_camera {
    float right[4], up[4], forward[4];
} sky_camera;

typedef struct sky_scene {
    int has_gs; /* 0: the backend has no geometry stage */
    demo_effect fx;
    kiln_geometry_shader gs;
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout layout;
    kiln_buffer vb, ib, tri, cb_world, cb_camera;
    kiln_rtv faces_rtv;
    kiln_dsv faces_dsv, dsv;
    kiln_srv cube_srv;
    kiln_sampler sampler;
    kiln_rasterizer_state rs;
    sky_vertex v[SKY_VERTICES];
    uint16_t idx[SKY_INDICES];
} sky_scene;

/* The faces, in slice order +x, -x, +y, -y, +z, -z: each looks along
 * `forward` with `up` up; right = up x forward, so that a direction d
 * lands on face k at (dot(right, d), dot(up, d)) / dot(forward, d) in
 * [-1, 1]^2 exactly where a D3D10 cube sampler reads it (sc / |m| and
 * -tc / |m|), which the 90-degree projection below maps to the whole
 * slice. */
static const float sky_forward[6][3] = {{1, 0, 0},  {-1, 0, 0}, {0, 1, 0},
                                        {0, -1, 0}, {0, 0, 1},  {0, 0, -1}};
static const float sky_up[6][3] = {{0, 1, 0}, {0, 1, 0}, {0, 0, -1},
                                   {0, 0, 1}, {0, 1, 0}, {0, 1, 0}};

static float dot3(const float *a, const float *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void right_of(int k, float r[3])
{
    const float *f = sky_forward[k], *u = sky_up[k];
    r[0] = u[1] * f[2] - u[2] * f[1];
    r[1] = u[2] * f[0] - u[0] * f[2];
    r[2] = u[0] * f[1] - u[1] * f[0];
}

/* ---- the shaders ---- */

/* One world-space triangle in (the vertex-color effect's output with a
 * world matrix), six out: face k's copy goes to slice k. The projection
 * is mat4_perspective's with a 90-degree field of view and aspect 1,
 * written out: x_clip = dot(right, p), y_clip = dot(up, p),
 * w_clip = dot(forward, p), z_clip = -a * w_clip + b. */
static void gs_cube_faces(kiln_gs_args *a)
{
    const float za = SKY_FAR / (SKY_NEAR - SKY_FAR), zb = SKY_NEAR * SKY_FAR / (SKY_NEAR - SKY_FAR);
    float out[8];
    for (int k = 0; k < 6; k++) {
        float r[3];
        right_of(k, r);
        a->out_rt_array_index = (uint32_t)k;
        for (uint32_t v = 0; v < 3; v++) {
            const float *p = a->in + v * a->in_stride;
            float w = dot3(sky_forward[k], p);
            out[0] = dot3(r, p);
            out[1] = dot3(sky_up[k], p);
            out[2] = -za * w + zb;
            out[3] = w;
            memcpy(out + 4, p + 4, 4 * sizeof(float));
            kiln_gs_emit(a, out);
        }
        kiln_gs_cut(a);
    }
}

/* Input 0: a full-screen triangle's corner in clip space (x, y). Varying
 * 0: the view direction there, forward + x * right + y * up (linear on
 * the screen, so its interpolation is exact). */
static void vs_sky(const kiln_vs_args *a)
{
    const sky_camera *c = a->cb[0];
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + v * a->in_stride;
        float *out = a->out + v * a->out_stride;
        out[0] = in[0];
        out[1] = in[1];
        out[2] = 1.0f; /* the far plane: behind anything */
        out[3] = 1.0f;
        for (int i = 0; i < 3; i++)
            out[4 + i] = c->forward[i] + in[0] * c->right[i] + in[1] * c->up[i];
        out[7] = 0;
    }
}

/* The sky: the cube (shader resource 0, sampler 0) along each pixel's
 * view direction. */
static void ps_sky(kiln_ps_args *a)
{
    kiln_ps_sample_uvw(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                       KILN_PS_VARYING(a, 0, 2), KILN_PS_COLOR(a, 0, 0));
}

static const kiln_geometry_shader_desc sky_gs_desc = {
    .fn = gs_cube_faces,
    .input = KILN_GS_INPUT_TRIANGLE,
    .output = KILN_GS_OUTPUT_TRIANGLE_STRIP,
    .max_vertices = 18,
    .num_varyings = 1,
    .flags = KILN_GS_WRITES_RT_ARRAY_INDEX,
};
static const kiln_vertex_shader_desc sky_vs_desc = {
    .fn = vs_sky, .num_inputs = 1, .num_varyings = 1};
static const kiln_pixel_shader_desc sky_ps_desc = {
    .fn = ps_sky, .num_varyings = 1, .num_outputs = 1, .flags = KILN_PS_NO_Z};

static kiln_result skybox_register(kiln_device *dev)
{
    kiln_result r = kiln_capture_register_geometry_shader(dev, "demo.skybox.gs", &sky_gs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_vertex_shader(dev, "demo.skybox.vs", &sky_vs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_pixel_shader(dev, "demo.skybox.ps", &sky_ps_desc);
    return r;
}

/* ---- the world ---- */

/* Appends the unit cube placed by `m`, each vertex colored by `color`
 * (given the vertex's height on the unit cube, -1 or 1). */
static void add_box(sky_scene *s, uint32_t *nv, uint32_t *ni, mat4 m,
                    void (*color)(float y, const void *arg, float out[4]), const void *arg)
{
    demo_cube_vertex c[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    demo_cube_mesh(c, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        sky_vertex *o = &s->v[*nv + (uint32_t)i];
        const float *p = c[i].pos;
        for (int r = 0; r < 3; r++)
            o->pos[r] =
                m.m[4 * r] * p[0] + m.m[4 * r + 1] * p[1] + m.m[4 * r + 2] * p[2] + m.m[4 * r + 3];
        color(p[1], arg, o->color);
        o->color[0] *= 0.8f + 0.04f * (float)c[i].face; /* faces apart */
        o->color[1] *= 0.8f + 0.04f * (float)c[i].face;
        o->color[2] *= 0.8f + 0.04f * (float)c[i].face;
    }
    for (int i = 0; i < DEMO_CUBE_INDICES; i++)
        s->idx[*ni + (uint32_t)i] = (uint16_t)(*nv + idx[i]);
    *nv += DEMO_CUBE_VERTICES;
    *ni += DEMO_CUBE_INDICES;
}

static void dome_color(float y, const void *arg, float out[4])
{
    (void)arg;
    static const float top[4] = {0.08f, 0.18f, 0.48f, 1}, bottom[4] = {0.78f, 0.72f, 0.66f, 1};
    memcpy(out, y > 0 ? top : bottom, sizeof top);
}

static void flat_color(float y, const void *arg, float out[4])
{
    (void)y;
    memcpy(out, arg, 4 * sizeof(float));
}

static void build_world(sky_scene *s)
{
    uint32_t nv = 0, ni = 0;
    /* The dome's faces are seen from inside (culling is off). The faces
     * shade the cube's +-1 heights: the dome's edges, far from the view
     * direction's middle, are where blue turns to haze. */
    add_box(s, &nv, &ni, mat4_scale(40.0f, 12.0f, 40.0f), dome_color, NULL);
    static const float tower[6][4] = {
        {0.90f, 0.30f, 0.25f, 1}, {0.95f, 0.65f, 0.20f, 1}, {0.35f, 0.75f, 0.40f, 1},
        {0.25f, 0.55f, 0.85f, 1}, {0.65f, 0.40f, 0.80f, 1}, {0.92f, 0.90f, 0.85f, 1},
    };
    for (int i = 0; i < SKY_TOWERS; i++) {
        float a = 2.0f * PI_F * (float)i / SKY_TOWERS, h = 1.0f + 0.9f * (float)(i % 4);
        mat4 m = mat4_mul(mat4_translate(7.0f * cosf(a), -1.5f + h, 7.0f * sinf(a)),
                          mat4_scale(0.6f, h, 0.6f));
        add_box(s, &nv, &ni, m, flat_color, tower[i % 6]);
    }
    static const float sun[4] = {1.0f, 0.95f, 0.6f, 1};
    add_box(s, &nv, &ni,
            mat4_mul(mat4_translate(-9.0f, 8.0f, -14.0f), mat4_scale(1.2f, 1.2f, 1.2f)), flat_color,
            sun);
    /* The ground at y = -1.5: squares of two greens, each its own 4
     * vertices so that the colors do not blend. */
    const float half = 20.0f, step = 2.0f * half / SKY_GRID;
    for (int gz = 0; gz < SKY_GRID; gz++) {
        for (int gx = 0; gx < SKY_GRID; gx++) {
            float g = (gx + gz) & 1 ? 0.34f : 0.24f;
            for (int c = 0; c < 4; c++) {
                sky_vertex *o = &s->v[nv + (uint32_t)c];
                o->pos[0] = -half + step * (float)(gx + (c & 1));
                o->pos[1] = -1.5f;
                o->pos[2] = -half + step * (float)(gz + (c >> 1));
                o->color[0] = 0.5f * g;
                o->color[1] = g + 0.1f;
                o->color[2] = 0.4f * g;
                o->color[3] = 1;
            }
            static const uint16_t q[6] = {0, 2, 1, 1, 2, 3};
            for (int i = 0; i < 6; i++)
                s->idx[ni + (uint32_t)i] = (uint16_t)(nv + q[i]);
            nv += 4;
            ni += 6;
        }
    }
}

/* ---- the scene ---- */

static int sky_setup(demo *d, void *state)
{
    sky_scene *s = state;
    build_world(s);
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(sky_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(sky_vertex, color)},
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_NONE};
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_rasterizer(d, &rs, &s->rs) ||
        demo_new_buffer(d, sizeof s->v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, s->v,
                        &s->vb) ||
        demo_new_buffer(d, sizeof s->idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, s->idx,
                        &s->ib) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb_world))
        return -1;

    int gs = demo_new_geometry_shader(d, &sky_gs_desc, &s->gs);
    if (gs < 0)
        return -1;
    s->has_gs = gs == 0;
    if (!s->has_gs) {
        fprintf(stderr,
                "kiln_demo: scene %s: the backend has no geometry shader: the world is drawn "
                "directly, without the cube\n",
                d->scene);
        return demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv);
    }

    /* The cube, with a depth cube beside it (its faces a 2D array). */
    const kiln_texture_cube_desc cd = {
        .size = SKY_FACE,
        .mip_levels = 1,
        .format = DEMO_FORMAT,
        .bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
    };
    kiln_texture_cube_desc zd = cd;
    zd.format = KILN_FORMAT_D32_FLOAT;
    zd.bind_flags = KILN_BIND_DEPTH_STENCIL;
    kiln_texture color = {0}, depth = {0};
    const kiln_sampler_desc sd = {0}; /* bilinear, clamped */
    static const float tri[3][2] = {{-1, -1}, {-1, 3}, {3, -1}};
    const kiln_input_element tl = {.format = KILN_FORMAT_R32G32_FLOAT};
    if (demo_new_texture_cube(d, &cd, &color) || demo_new_texture_cube(d, &zd, &depth) ||
        demo_new_rtv_desc(d, color, &(kiln_rtv_desc){.array_size = 6}, &s->faces_rtv) ||
        demo_new_dsv_desc(d, depth, &(kiln_dsv_desc){.array_size = 6}, &s->faces_dsv) ||
        demo_new_sampler(d, &sd, &s->sampler) || demo_new_vertex_shader(d, &sky_vs_desc, &s->vs) ||
        demo_new_pixel_shader(d, &sky_ps_desc, &s->ps) ||
        demo_new_layout(d, s->vs, &tl, 1, &s->layout) ||
        demo_new_buffer(d, sizeof tri, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, tri,
                        &s->tri) ||
        demo_new_buffer(d, sizeof(sky_camera), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb_camera))
        return -1;
    /* the cube view (the default dimension of a cube) */
    if (demo_new_srv_desc(d, color, NULL, &s->cube_srv))
        return -1;
    return 0;
}

static int sky_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    sky_scene *s = state;
    const uint32_t stride = sizeof(sky_vertex), tstride = 2 * sizeof(float), offset = 0;
    const float black[4] = {0, 0, 0, 1};
    float t = (float)f;
    mat4 world = mat4_rotate(v3(0, 1, 0), 0.05f * t);
    /* The camera at the origin, turning and looking a little up. */
    float yaw = 0.5f + 0.3f * t, pitch = 0.12f, fovy = 70.0f * PI_F / 180.0f;
    float aspect = (float)d->w / (float)d->h;
    vec3 fwd = v3(cosf(pitch) * sinf(yaw), sinf(pitch), -cosf(pitch) * cosf(yaw));

    if (!s->has_gs) /* the fallback projects the world with the camera */
        world = mat4_mul(mat4_mul(mat4_perspective(fovy, aspect, SKY_NEAR, SKY_FAR),
                                  mat4_look_at(v3(0, 0, 0), fwd, v3(0, 1, 0))),
                         world);
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb_world), 0, NULL, world.m, 0, 0));
    if (demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_world));
    if (!s->has_gs) { /* the fallback: the world seen directly */
        if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h))
            return -1;
        TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, black));
        TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
        TRY(d, kiln_draw_indexed(d->ctx, SKY_INDICES, 0, 0));
        return 0;
    }

    /* 1. the world into the six faces: one draw, six slices */
    if (demo_bind_target(d, s->faces_rtv, s->faces_dsv, SKY_FACE, SKY_FACE))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, s->faces_rtv, black));
    TRY(d, kiln_clear_dsv(d->ctx, s->faces_dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_gs_set_shader(d->ctx, s->gs));
    TRY(d, kiln_draw_indexed(d->ctx, SKY_INDICES, 0, 0));
    TRY(d, kiln_gs_set_shader(d->ctx, (kiln_geometry_shader){0}));

    /* 2. the sky: every pixel looks its direction up in the cube */
    float ty = tanf(0.5f * fovy), tx = ty * aspect;
    vec3 right = v3_normalize(v3_cross(fwd, v3(0, 1, 0))), up = v3_cross(right, fwd);
    sky_camera cam = {{right.x * tx, right.y * tx, right.z * tx, 0},
                      {up.x * ty, up.y * ty, up.z * ty, 0},
                      {fwd.x, fwd.y, fwd.z, 0}};
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb_camera), 0, NULL, &cam, 0, 0));
    if (demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h))
        return -1;
    TRY(d, kiln_ia_set_input_layout(d->ctx, s->layout));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->tri, &tstride, &offset));
    TRY(d, kiln_vs_set_shader(d->ctx, s->vs));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_camera));
    TRY(d, kiln_ps_set_shader(d->ctx, s->ps));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->cube_srv));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, 1, &s->sampler));
    TRY(d, kiln_draw(d->ctx, 3, 0));
    (void)canvas;
    return 0;
}

const scene demo_scene_skybox = {
    .name = "skybox",
    .summary = "a world drawn into the 6 faces of a cube in one layered draw, then sampled as a sky",
    .state_size = sizeof(sky_scene),
    .setup = sky_setup,
    .frame = sky_frame,
    .expect = NULL, /* a draw scene: tests/golden/skybox.png */
    .register_shaders = skybox_register,
};
