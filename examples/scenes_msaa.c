/*
 * scenes_msaa.c - draw scene "msaa": 4x multisampling resolved into the
 * canvas (see scenes.h for the contract, mat4.h for the conventions).
 *
 * A fan of 24 thin spokes turns over a tilted square that cuts through
 * them in depth. Everything is drawn into a 4x render target with a 4x
 * D32_FLOAT depth buffer, then kiln_resolve_subresource averages each
 * pixel's four samples into the canvas: the spokes' edges and the line
 * where the square passes through them (depth is tested per sample) come
 * out with the in-between shades a 1x target has none of. The built-in
 * VERTEX_COLOR effect draws everything, so the capture replays by itself.
 *
 * On a backend without multisampling (osmesa: KILN_E_UNSUPPORTED) the
 * same geometry is drawn straight into the canvas at one sample.
 */
#include "mat4.h"
#include "scenes.h"

#include <stdio.h>
#include <string.h>

#define PI_F 3.14159265f
#define SPOKES 24

typedef struct msaa_vertex {
    float pos[3];
    float color[4];
} msaa_vertex;

typedef struct msaa_scene {
    demo_effect fx;
    kiln_buffer vb, cb;
    kiln_texture ms;     /* 4x color, or 0 (one sample: the fallback) */
    kiln_rtv ms_rtv;
    kiln_dsv ms_dsv, dsv; /* 4x depth; the fallback's 1x depth */
    kiln_depth_stencil_state dss;
    kiln_rasterizer_state rs;
} msaa_scene;

enum { MSAA_VERTS = SPOKES * 3 + 6 };

static void geometry(msaa_vertex *v)
{
    /* thin spokes from the center, each a sliver of a triangle at depth 0.5 */
    for (int i = 0; i < SPOKES; i++) {
        float a = 2.0f * PI_F * (float)i / SPOKES, w = 0.035f;
        float c[4] = {0.5f + 0.5f * cosf(a), 0.5f + 0.5f * cosf(a + 2.1f), 0.5f + 0.5f * cosf(a + 4.2f), 1};
        msaa_vertex *t = v + 3 * i;
        t[0] = (msaa_vertex){{0, 0, 0.5f}, {1, 1, 1, 1}};
        t[1] = (msaa_vertex){{cosf(a - w), sinf(a - w), 0.5f}, {c[0], c[1], c[2], c[3]}};
        t[2] = (msaa_vertex){{cosf(a + w), sinf(a + w), 0.5f}, {c[0], c[1], c[2], c[3]}};
        /* clockwise on screen either way: culling is off */
    }
    /* a square tilted in depth: in front of the spokes on the left, behind
     * on the right */
    static const float sq[6][2] = {{-0.6f, -0.6f}, {0.6f, -0.6f}, {-0.6f, 0.6f},
                                   {0.6f, -0.6f},  {0.6f, 0.6f},  {-0.6f, 0.6f}};
    for (int k = 0; k < 6; k++)
        v[3 * SPOKES + k] = (msaa_vertex){{sq[k][0], sq[k][1], 0.5f + 0.4f * sq[k][0]}, {0.15f, 0.2f, 0.3f, 1}};
}

static int msaa_setup(demo *d, void *state)
{
    msaa_scene *s = state;
    msaa_vertex v[MSAA_VERTS];
    geometry(v);
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(msaa_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(msaa_vertex, color)},
    };
    const kiln_rasterizer_desc rd = {.cull = KILN_CULL_NONE};
    const kiln_depth_stencil_desc dd = {.depth_func = KILN_COMPARE_LESS};
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL, &s->cb) ||
        demo_new_rasterizer(d, &rd, &s->rs) || demo_new_depth_stencil(d, &dd, &s->dss))
        return -1;
    const kiln_texture2d_desc cd = {.width = d->w, .height = d->h, .mip_levels = 1, .format = DEMO_FORMAT,
                                    .bind_flags = KILN_BIND_RENDER_TARGET, .sample_count = 4};
    int got = demo_try_texture_desc(d, &cd, NULL, &s->ms);
    if (got < 0)
        return -1;
    if (got == 1) { /* the fallback: one sample */
        fprintf(stderr, "kiln_demo: scene msaa: this backend has no multisampling; drawing at one sample\n");
        return demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv);
    }
    kiln_texture ds;
    kiln_texture2d_desc dsd = cd;
    dsd.format = KILN_FORMAT_D32_FLOAT;
    dsd.bind_flags = KILN_BIND_DEPTH_STENCIL;
    if (demo_new_texture_desc(d, &dsd, NULL, &ds) || demo_new_rtv(d, s->ms, 0, &s->ms_rtv) ||
        demo_new_dsv(d, ds, &s->ms_dsv))
        return -1;
    return 0;
}

static int msaa_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    msaa_scene *s = state;
    const float bg[4] = {0.93f, 0.92f, 0.88f, 1};
    const uint32_t stride = sizeof(msaa_vertex), offset = 0;
    mat4 wvp = mat4_mul(mat4_scale(0.9f * (float)d->h / (float)d->w, 0.9f, 1),
                        mat4_rotate(v3(0, 0, 1), 0.11f + (float)f * 0.02f));
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb), 0, NULL, wvp.m, 0, 0));
    kiln_rtv rtv = s->ms.id ? s->ms_rtv : canvas_rtv;
    kiln_dsv dsv = s->ms.id ? s->ms_dsv : s->dsv;
    if (demo_bind_target(d, rtv, dsv, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_om_set_depth_stencil_state(d->ctx, s->dss, 0));
    TRY(d, kiln_clear_rtv(d->ctx, rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb));
    TRY(d, kiln_draw(d->ctx, MSAA_VERTS, 0));
    if (s->ms.id)
        TRY(d, kiln_resolve_subresource(d->ctx, demo_res(canvas), 0, demo_res(s->ms), 0, KILN_FORMAT_UNKNOWN));
    return 0;
}

const scene demo_scene_msaa = {
    .name = "msaa",
    .summary = "4x multisampling: thin spokes through a tilted square, resolved into the canvas",
    .state_size = sizeof(msaa_scene),
    .setup = msaa_setup,
    .frame = msaa_frame,
    .expect = NULL, /* a draw scene: tests/golden/msaa.png */
};
