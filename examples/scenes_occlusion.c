/*
 * scenes_occlusion.c - draw scene "occlusion": occlusion culling with
 * predication (see scenes.h for the contract, mat4.h for the conventions,
 * docs/queries.md for the queries).
 *
 * A wall stands in front of a grid of 16 turning cubes; it slides left and
 * right, so different cubes hide behind it from frame to frame. Each frame:
 *
 *   1. the wall is drawn (it fills the depth buffer);
 *   2. each cube's bounding box (the cube a little larger) is drawn with
 *      color and depth writes off, inside an OCCLUSION_PREDICATE query of
 *      its own: the query records whether any of it would be seen;
 *   3. each cube is drawn with kiln_set_predication(query, 0): skipped when
 *      its box had no visible sample.
 *
 * The application never waits for a query: the predicate is evaluated as
 * the draws execute, in stream order. The image is the one drawing every
 * cube would give (a cube inside a hidden box is hidden), so on a backend
 * without occlusion queries (osmesa refuses to create them, with one
 * logged BACKEND_FEATURE error) the scene draws every cube and looks the
 * same.
 *
 * Constant buffers: one per box and one per cube, all written before any
 * predicate is set (kiln_update_subresource is itself predicated, so an
 * update issued under a hidden cube's predicate would be skipped).
 */
#include "mat4.h"
#include "mesh.h"
#include "scenes.h"

#include <string.h>

#define PI_F 3.14159265f
#define OCC_N 16 /* cubes: a 4 x 4 grid */

typedef struct occ_vertex {
    float pos[3];
    float color[4];
} occ_vertex;

typedef struct occ_scene {
    kiln_device *dev; /* for teardown: the queries are not demo-owned objects */
    demo_effect fx;
    kiln_buffer vb, vb_wall, ib;
    kiln_buffer cb_wall, cb_box[OCC_N], cb_cube[OCC_N];
    kiln_dsv dsv;
    kiln_rasterizer_state rs;
    kiln_blend_state no_color;
    kiln_depth_stencil_state no_depth_write;
    kiln_query visible[OCC_N];
    int culling; /* 0: the backend has no occlusion queries */
} occ_scene;

static int occ_setup(demo *d, void *state)
{
    occ_scene *s = state;
    s->dev = d->dev;
    static const float tint[6][4] = {
        {1, 0.55f, 0.4f, 1},    {0.8f, 0.4f, 0.3f, 1},  {1, 0.8f, 0.5f, 1},
        {0.6f, 0.3f, 0.25f, 1}, {0.9f, 0.5f, 0.45f, 1}, {0.7f, 0.35f, 0.3f, 1},
    };
    demo_cube_vertex m[DEMO_CUBE_VERTICES];
    occ_vertex v[DEMO_CUBE_VERTICES], w[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    demo_cube_mesh(m, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        memcpy(v[i].pos, m[i].pos, sizeof v[i].pos);
        memcpy(v[i].color, tint[m[i].face], sizeof v[i].color);
        float g = 0.35f + 0.05f * (float)m[i].face; /* the wall: grey-blue */
        memcpy(w[i].pos, m[i].pos, sizeof w[i].pos);
        w[i].color[0] = g;
        w[i].color[1] = g + 0.05f;
        w[i].color[2] = g + 0.15f;
        w[i].color[3] = 1;
    }
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(occ_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(occ_vertex, color)},
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_BACK, .front_ccw = 1};
    kiln_blend_desc bd = {0};
    bd.rt[0].write_mask = KILN_COLOR_WRITE_NONE;
    const kiln_depth_stencil_desc dsd = {.depth_write_disable = 1};
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof w, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, w,
                        &s->vb_wall) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx, &s->ib) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb_wall) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D24_UNORM_S8_UINT, &s->dsv) ||
        demo_new_rasterizer(d, &rs, &s->rs) || demo_new_blend(d, &bd, &s->no_color) ||
        demo_new_depth_stencil(d, &dsd, &s->no_depth_write))
        return -1;
    for (int i = 0; i < OCC_N; i++)
        if (demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                            &s->cb_box[i]) ||
            demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                            &s->cb_cube[i]))
            return -1;
    /* Refused where the backend cannot count (osmesa): draw every cube. */
    s->culling =
        kiln_create_query(d->dev, KILN_QUERY_OCCLUSION_PREDICATE, &s->visible[0]) == KILN_OK;
    for (int i = 1; i < OCC_N && s->culling; i++)
        TRY(d, kiln_create_query(d->dev, KILN_QUERY_OCCLUSION_PREDICATE, &s->visible[i]));
    return 0;
}

static void occ_teardown(void *state)
{
    occ_scene *s = state;
    for (int i = 0; i < OCC_N; i++)
        if (s->visible[i].id)
            kiln_destroy_query(s->dev, s->visible[i]);
}

static int update(demo *d, kiln_buffer cb, mat4 m)
{
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(cb), 0, NULL, m.m, 0, 0));
    return 0;
}

static int draw_cube(demo *d, kiln_buffer cb)
{
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &cb));
    TRY(d, kiln_draw_indexed(d->ctx, DEMO_CUBE_INDICES, 0, 0));
    return 0;
}

static int occ_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    occ_scene *s = state;
    const float bg[4] = {0.1f, 0.12f, 0.16f, 1};
    const uint32_t stride = sizeof(occ_vertex), offset = 0;
    float t = (float)f;
    mat4 vp =
        mat4_mul(mat4_perspective(50.0f * PI_F / 180.0f, (float)d->w / (float)d->h, 1.0f, 20.0f),
                 mat4_look_at(v3(0, 0.5f, 8.0f), v3(0, 0, -1), v3(0, 1, 0)));
    /* The wall slides; the cubes turn in a 4 x 4 grid behind it. */
    TRY(d, update(d, s->cb_wall,
                  mat4_mul(vp, mat4_mul(mat4_translate(2.2f * sinf(0.4f + t * 0.35f), 0, 2.0f),
                                        mat4_scale(0.9f, 1.0f, 0.1f)))));
    for (int i = 0; i < OCC_N; i++) {
        float x = -3.3f + 2.2f * (float)(i % 4), y = -1.35f + 0.9f * (float)(i / 4);
        mat4 place =
            mat4_mul(mat4_translate(x, y, -2.0f),
                     mat4_rotate(v3_normalize(v3(0.4f, 1, 0.2f)), 0.3f * (float)i + t * 0.1f));
        TRY(d,
            update(d, s->cb_cube[i], mat4_mul(vp, mat4_mul(place, mat4_scale(0.3f, 0.3f, 0.3f)))));
        /* The box: the cube's corners lie within 0.3 * sqrt(3) < 0.55. */
        TRY(d, update(d, s->cb_box[i],
                      mat4_mul(vp, mat4_mul(mat4_translate(x, y, -2.0f),
                                            mat4_scale(0.55f, 0.55f, 0.55f)))));
    }

    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb_wall, &stride, &offset));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    if (draw_cube(d, s->cb_wall))
        return -1;
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    if (s->culling) {
        TRY(d, kiln_om_set_blend_state(d->ctx, s->no_color, NULL));
        TRY(d, kiln_om_set_depth_stencil_state(d->ctx, s->no_depth_write, 0));
        for (int i = 0; i < OCC_N; i++) {
            TRY(d, kiln_query_begin(d->ctx, s->visible[i]));
            if (draw_cube(d, s->cb_box[i]))
                return -1;
            TRY(d, kiln_query_end(d->ctx, s->visible[i]));
        }
        TRY(d, kiln_om_set_blend_state(d->ctx, (kiln_blend_state){0}, NULL));
        TRY(d, kiln_om_set_depth_stencil_state(d->ctx, (kiln_depth_stencil_state){0}, 0));
    }
    for (int i = 0; i < OCC_N; i++) {
        if (s->culling) /* skipped when no sample of the box passed (0) */
            TRY(d, kiln_set_predication(d->ctx, s->visible[i], 0));
        if (draw_cube(d, s->cb_cube[i]))
            return -1;
    }
    if (s->culling)
        TRY(d, kiln_set_predication(d->ctx, (kiln_query){0}, 0));
    (void)canvas;
    return 0;
}

const scene demo_scene_occlusion = {
    .name = "occlusion",
    .summary =
        "occlusion culling: boxes in OCCLUSION_PREDICATE queries, cubes drawn under predication",
    .state_size = sizeof(occ_scene),
    .setup = occ_setup,
    .teardown = occ_teardown,
    .frame = occ_frame,
    .expect = NULL, /* a draw scene: tests/golden/occlusion.png */
};
