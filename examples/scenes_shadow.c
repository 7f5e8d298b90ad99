/*
 * scenes_shadow.c - draw scene "shadow": a shadow map (see scenes.h for the
 * contract, mat4.h for the conventions, docs/raster.md "Depth-only draws"
 * and "Sampling calls").
 *
 * Three cubes stand on a ground slab under a spot light; one turns. Each
 * frame:
 *
 *   1. the depth pass: the light's view of the scene into a 512 x 512
 *      D32_FLOAT texture (depth-stencil and shader resource), with no
 *      pixel shader and no render target (D3D10's depth-only draw: depth
 *      is tested and written, nothing is shaded);
 *   2. the main pass: the camera's view; the vertex shader also projects
 *      each vertex into the light's clip space, and the pixel shader
 *      compares the pixel's light depth with the map through a comparison
 *      sampler (kiln_ps_sample_cmp, LESS_EQUAL, LINEAR: four-texel
 *      percentage-closer filtering; BORDER 1 outside the map: lit).
 *
 * Shading keeps the two ends exact: each object's pixel-stage constants
 * hold its lit and its shadowed color (computed here on the CPU, the
 * lambert term of a flat face towards the light and the ambient), and the
 * pixel writes lit * l + shadowed * (1 - l) with l the filtered comparison,
 * so a fully lit pixel (l = 1) is exactly the lit color and a fully
 * shadowed one (l = 0) exactly the shadowed color (tests/test_shadow.c
 * checks both). The vertex stage's cb0 holds the camera's and the light's
 * world-view-projection (rows 0-3, 4-7).
 *
 * The shaders are ours, with GLSL for the osmesa backend (a
 * sampler2DShadow), and registered by name (shadow_register) for
 * captures.
 */
#include "scenes_shadow.h"
#include "mat4.h"
#include "mesh.h"
#include "scenes.h"

#include <stdbool.h>
#include <string.h>

#define PI_F 3.14159265f
#define SHADOW_SIZE 512u
#define SHADOW_BIAS 0.003f /* light depth units subtracted before comparing */
#define SHADOW_OBJECTS 4   /* the ground, then three cubes */

typedef struct shadow_vertex {
    float pos[3];
    float normal[3];
} shadow_vertex;

/* The vertex stage's cb0 of one object. */
typedef struct shadow_vs_constants {
    mat4 camera_wvp, light_wvp;
} shadow_vs_constants;

/* The pixel stage's cb0: lit and shadowed colors (rgb, a 1). */
typedef struct shadow_ps_constants {
    float lit[4], shadowed[4];
} shadow_ps_constants;

typedef struct shadow_scene {
    kiln_vertex_shader vs_caster, vs_main;
    kiln_pixel_shader ps_main;
    kiln_input_layout layout;
    kiln_buffer vb, ib, vs_cb[SHADOW_OBJECTS], ps_cb[SHADOW_OBJECTS];
    kiln_texture map;
    kiln_dsv map_dsv, dsv;
    kiln_srv map_srv;
    kiln_sampler cmp;
    kiln_rasterizer_state rs, rs_caster;
} shadow_scene;

/* ---- the shaders ---- */

static void row_mul(const float *cb, int row, const float *p, float *out)
{
    for (int r = 0; r < 4; r++) {
        const float *m = cb + 4 * (row + r);
        out[r] = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3];
    }
}

static const float *vs_cb0(const kiln_vs_args *a, uint32_t floats)
{
    return a->cb && a->cb[0] && a->cb_size[0] >= floats * 4 ? (const float *)a->cb[0] : NULL;
}

/* The depth pass: position = light_wvp * p. */
static void vs_caster(const kiln_vs_args *a)
{
    const float *cb = vs_cb0(a, 32);
    for (uint32_t v = 0; v < a->count; v++) {
        float *o = a->out + (size_t)v * a->out_stride;
        if (!cb) {
            memset(o, 0, 4 * sizeof(float));
            continue;
        }
        row_mul(cb, 4, a->in + (size_t)v * a->in_stride, o);
    }
}

/* The main pass: position = camera_wvp * p; varying 0 = light_wvp * p. */
static void vs_main(const kiln_vs_args *a)
{
    const float *cb = vs_cb0(a, 32);
    for (uint32_t v = 0; v < a->count; v++) {
        float *o = a->out + (size_t)v * a->out_stride;
        if (!cb) {
            memset(o, 0, 8 * sizeof(float));
            continue;
        }
        const float *p = a->in + (size_t)v * a->in_stride;
        row_mul(cb, 0, p, o);
        row_mul(cb, 4, p, o + 4);
    }
}

/* lit * l + shadowed * (1 - l), l the comparison of the pixel's light
 * depth (minus the bias) with the map around its light-space position. */
static void ps_main(kiln_ps_args *a)
{
    const float *cb = a->cb && a->cb[0] && a->cb_size[0] >= 32 ? (const float *)a->cb[0] : NULL;
    float u[KILN_PS_BLOCK], v[KILN_PS_BLOCK], ref[KILN_PS_BLOCK], l[KILN_PS_BLOCK];
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        float w = KILN_PS_VARYING(a, 0, 3)[i];
        u[i] = 0.5f + 0.5f * KILN_PS_VARYING(a, 0, 0)[i] / w;
        v[i] = 0.5f - 0.5f * KILN_PS_VARYING(a, 0, 1)[i] / w;
        ref[i] = KILN_PS_VARYING(a, 0, 2)[i] / w - SHADOW_BIAS;
    }
    kiln_ps_sample_cmp(a, 0, 0, u, v, ref, l);
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = cb ? cb[c] * l[i] + cb[4 + c] * (1.0f - l[i]) : 0.0f;
}

#define GLSL_VS_HEAD                                                                               \
    "#version 130\n"                                                                               \
    "uniform vec4 u_cb0[8];\n"                                                                     \
    "in vec4 a_position;\n"                                                                        \
    "in vec4 a_normal;\n"
#define GLSL_ROWS(o, row)                                                                          \
    "    " o " = vec4(dot(u_cb0[" #row "], p), dot(u_cb0[" #row " + 1], p), dot(u_cb0[" #row       \
    " + 2], p), dot(u_cb0[" #row " + 3], p));\n"

static const char glsl_caster[] =
    GLSL_VS_HEAD "void main()\n"
                 "{\n"
                 "    vec4 p = vec4(a_position.xyz, 1.0);\n" GLSL_ROWS("gl_Position", 4) "}\n";

static const char glsl_main[] = GLSL_VS_HEAD
    "out vec4 v_light;\n"
    "void main()\n"
    "{\n"
    "    vec4 p = vec4(a_position.xyz, 1.0);\n" GLSL_ROWS("gl_Position", 0)
        GLSL_ROWS("v_light", 4) "}\n"
                                "//--- fragment\n"
                                "#version 130\n"
                                "uniform vec4 u_ps_cb0[2];\n"
                                "uniform sampler2DShadow u_tex0;\n"
                                "in vec4 v_light;\n"
                                "out vec4 o_color;\n"
                                "void main()\n"
                                "{\n"
                                "    vec3 t = vec3(0.5 + 0.5 * v_light.x / v_light.w,\n"
                                "                  0.5 - 0.5 * v_light.y / v_light.w,\n"
                                "                  v_light.z / v_light.w - 0.003);\n"
                                "    float l = texture(u_tex0, t);\n"
                                "    o_color = u_ps_cb0[0] * l + u_ps_cb0[1] * (1.0 - l);\n"
                                "}\n";

static const kiln_vertex_shader_desc caster_vs_desc = {
    .fn = vs_caster, .num_inputs = 2, .num_varyings = 0, .glsl = glsl_caster};
static const kiln_vertex_shader_desc main_vs_desc = {
    .fn = vs_main, .num_inputs = 2, .num_varyings = 1, .glsl = glsl_main};
static const kiln_pixel_shader_desc main_ps_desc = {
    .fn = ps_main, .num_varyings = 1, .num_outputs = 1, .flags = KILN_PS_NO_Z, .glsl = glsl_main};

static kiln_result shadow_register(kiln_device *dev)
{
    kiln_result r =
        kiln_capture_register_vertex_shader(dev, "demo.shadow.caster_vs", &caster_vs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_vertex_shader(dev, "demo.shadow.main_vs", &main_vs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_pixel_shader(dev, "demo.shadow.main_ps", &main_ps_desc);
    return r;
}

/* ---- the world ---- */

static const float base_color[SHADOW_OBJECTS][3] = {
    {1.0f, 0.5f, 0.25f}, /* the ground: its ends exact in binary */
    {0.3f, 0.6f, 0.9f},
    {0.9f, 0.85f, 0.3f},
    {0.5f, 0.9f, 0.4f},
};

/* Object k's world matrix at frame f. */
static mat4 object_world(int k, uint32_t f)
{
    switch (k) {
    case 0:
        return mat4_mul(mat4_translate(0, -1.1f, 0), mat4_scale(5.0f, 0.1f, 5.0f));
    case 1:
        return mat4_mul(mat4_translate(-1.2f, -0.4f, 0.2f), mat4_scale(0.6f, 0.6f, 0.6f));
    case 2:
        return mat4_mul(
            mat4_translate(1.0f, -0.25f, -1.0f),
            mat4_mul(mat4_rotate(v3(0, 1, 0), 0.25f * (float)f), mat4_scale(0.5f, 0.75f, 0.5f)));
    default:
        return mat4_mul(mat4_translate(0.9f, -0.7f, 1.6f), mat4_scale(0.3f, 0.3f, 0.3f));
    }
}

void demo_shadow_light(vec3 *eye, mat4 *view_proj)
{
    *eye = v3(-3.5f, 7.0f, 4.0f);
    *view_proj = mat4_mul(mat4_perspective(55.0f * PI_F / 180.0f, 1.0f, 4.0f, 16.0f),
                          mat4_look_at(*eye, v3(0, -1, 0), v3(0, 1, 0)));
}

void demo_shadow_eye(vec3 *eye, vec3 *at)
{
    *eye = v3(0.5f, 4.5f, 8.5f);
    *at = v3(0, -0.6f, 0);
}

mat4 demo_shadow_camera(uint32_t w, uint32_t h)
{
    vec3 eye, at;
    demo_shadow_eye(&eye, &at);
    return mat4_mul(
        mat4_perspective(DEMO_SHADOW_FOVY_DEG * PI_F / 180.0f, (float)w / (float)h, 1.0f, 30.0f),
        mat4_look_at(eye, at, v3(0, 1, 0)));
}

mat4 demo_shadow_world(int object, uint32_t frame) { return object_world(object, frame); }

void demo_shadow_colors(int object, float lit[4], float shadowed[4])
{
    /* The ground (object 0) is lit at full strength and its colors are
     * powers of two, so both ends are exact; the cubes get a flat lambert
     * term of the light's height. Ambient: 1/4 in shadow. */
    vec3 eye;
    mat4 vp;
    demo_shadow_light(&eye, &vp);
    vec3 to_light = v3_normalize(v3_sub(eye, v3(0, -1.0f, 0)));
    float diffuse = object == 0 ? 1.0f : 0.35f + 0.65f * to_light.y;
    for (int c = 0; c < 3; c++) {
        lit[c] = base_color[object][c] * diffuse;
        shadowed[c] = base_color[object][c] * 0.25f;
    }
    lit[3] = shadowed[3] = 1.0f;
}

/* ---- the scene ---- */

static int shadow_setup(demo *d, void *state)
{
    shadow_scene *s = state;
    demo_cube_vertex m[DEMO_CUBE_VERTICES];
    shadow_vertex v[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    demo_cube_mesh(m, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        memcpy(v[i].pos, m[i].pos, sizeof v[i].pos);
        memcpy(v[i].normal, m[i].normal, sizeof v[i].normal);
    }
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(shadow_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(shadow_vertex, normal)},
    };
    const kiln_texture2d_desc md = {SHADOW_SIZE,
                                    SHADOW_SIZE,
                                    1,
                                    1,
                                    KILN_FORMAT_D32_FLOAT,
                                    KILN_USAGE_DEFAULT,
                                    KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE,
                                    0, 0};
    kiln_sampler_desc sd = {0};
    sd.min_filter = sd.mag_filter = KILN_FILTER_LINEAR;
    sd.mip_filter = KILN_FILTER_POINT;
    sd.address_u = sd.address_v = KILN_ADDRESS_BORDER;
    sd.border_color[0] = sd.border_color[1] = sd.border_color[2] = sd.border_color[3] = 1.0f;
    sd.comparison_func = KILN_COMPARE_LESS_EQUAL;
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_BACK, .front_ccw = 1};
    /* the depth pass: a slope-scaled bias against self-shadowing ("acne") */
    const kiln_rasterizer_desc rs_caster = {
        .cull = KILN_CULL_BACK, .front_ccw = 1, .slope_scaled_depth_bias = 2.0f};
    if (demo_new_vertex_shader(d, &caster_vs_desc, &s->vs_caster) ||
        demo_new_vertex_shader(d, &main_vs_desc, &s->vs_main) ||
        demo_new_pixel_shader(d, &main_ps_desc, &s->ps_main) ||
        demo_new_layout(d, s->vs_main, el, 2, &s->layout) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx, &s->ib) ||
        demo_new_texture_desc(d, &md, NULL, &s->map) || demo_new_dsv(d, s->map, &s->map_dsv) ||
        demo_new_srv(d, s->map, &s->map_srv) || demo_new_sampler(d, &sd, &s->cmp) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv) ||
        demo_new_rasterizer(d, &rs, &s->rs) || demo_new_rasterizer(d, &rs_caster, &s->rs_caster))
        return -1;
    for (int k = 0; k < SHADOW_OBJECTS; k++) {
        shadow_ps_constants pc;
        demo_shadow_colors(k, pc.lit, pc.shadowed);
        if (demo_new_buffer(d, sizeof(shadow_vs_constants), KILN_USAGE_DEFAULT,
                            KILN_BIND_CONSTANT_BUFFER, NULL, &s->vs_cb[k]) ||
            demo_new_buffer(d, sizeof pc, KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER, &pc,
                            &s->ps_cb[k]))
            return -1;
    }
    return 0;
}

static int draw_objects(demo *d, const shadow_scene *s, bool main_pass)
{
    for (int k = 0; k < SHADOW_OBJECTS; k++) {
        TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->vs_cb[k]));
        if (main_pass)
            TRY(d, kiln_ps_set_constant_buffers(d->ctx, 0, 1, &s->ps_cb[k]));
        TRY(d, kiln_draw_indexed(d->ctx, DEMO_CUBE_INDICES, 0, 0));
    }
    return 0;
}

static int shadow_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    shadow_scene *s = state;
    (void)canvas;
    vec3 eye;
    mat4 light;
    demo_shadow_light(&eye, &light);
    mat4 camera = demo_shadow_camera(d->w, d->h);
    for (int k = 0; k < SHADOW_OBJECTS; k++) {
        mat4 world = object_world(k, f);
        shadow_vs_constants c = {mat4_mul(camera, world), mat4_mul(light, world)};
        TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->vs_cb[k]), 0, NULL, &c, 0, 0));
    }
    const uint32_t stride = sizeof(shadow_vertex), offset = 0;
    TRY(d, kiln_ia_set_input_layout(d->ctx, s->layout));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs_caster));

    /* 1. depth only, from the light: no render target, no pixel shader */
    const kiln_viewport lvp = {0, 0, SHADOW_SIZE, SHADOW_SIZE, 0, 1};
    TRY(d, kiln_om_set_render_targets(d->ctx, 0, NULL, s->map_dsv));
    TRY(d, kiln_rs_set_viewport(d->ctx, &lvp));
    TRY(d, kiln_clear_dsv(d->ctx, s->map_dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_vs_set_shader(d->ctx, s->vs_caster));
    TRY(d, kiln_ps_set_shader(d->ctx, (kiln_pixel_shader){0}));
    if (draw_objects(d, s, false))
        return -1;

    /* 2. the camera's view, comparing with the map */
    const float bg[4] = {0.55f, 0.7f, 0.85f, 1};
    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_vs_set_shader(d->ctx, s->vs_main));
    TRY(d, kiln_ps_set_shader(d->ctx, s->ps_main));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->map_srv));
    TRY(d, kiln_ps_set_samplers(d->ctx, 0, 1, &s->cmp));
    return draw_objects(d, s, true);
}

const scene demo_scene_shadow = {
    .name = "shadow",
    .summary = "a shadow map: a depth-only pass from the light into D32_FLOAT, then "
               "kiln_ps_sample_cmp (PCF)",
    .state_size = sizeof(shadow_scene),
    .setup = shadow_setup,
    .frame = shadow_frame,
    .expect = NULL, /* a draw scene: tests/golden/shadow.png */
    .register_shaders = shadow_register,
};
