/*
 * scenes_srgb.c - draw scene "srgb": linear gradients rendered into an
 * R8G8B8A8_UNORM_SRGB target, showing where D3D10 converts (see scenes.h
 * for the contract).
 *
 * Four horizontal bands, each a gray ramp whose linear value v runs from
 * 0 at the left edge to 1 at the right (vertex colors, interpolated):
 *
 *   A  the ramp drawn into the sRGB target, blending off: stored as
 *      sRGB(v), the write encodes;
 *   B  the ramp drawn twice with blending src x 0.5 + dst x 1 (blend
 *      factor 0.5): the second draw reads the first one's stored value
 *      back as linear, adds in linear and encodes again, so the band
 *      ends up as band A (up to the rounding of the stored middle value);
 *   C  linear gray 0.5 drawn first, then white with alpha v blended over
 *      it (SRC_ALPHA, INV_SRC_ALPHA): v + (1 - v) x 0.5 in linear;
 *   D  the same ramp drawn straight into the canvas (R8G8B8A8_UNORM): v
 *      stored as it is, which a viewer that takes the image as sRGB (a
 *      PNG) shows too dark in the middle: the wrong way, for contrast.
 *
 * The sRGB target's bytes reach the canvas through a full-screen triangle
 * whose pixel shader Loads each texel (decoded to linear by the sampler)
 * and encodes it with the sRGB curve again, so the canvas holds the sRGB
 * target's bytes unchanged; bands A-C of the PNG are what an sRGB-correct
 * renderer shows. tests/test_srgb_scene.c checks pixels of every band
 * against the sRGB curve.
 *
 * The osmesa backend has no sRGB formats and runs no shader without GLSL:
 * there the scene says so once and draws band D's ramp over the whole
 * canvas (test_cross_backend does not compare it).
 */
#include "scenes.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct srgb_vertex {
    float pos[3];
    float color[4];
} srgb_vertex;

enum { QUADS = 6 }; /* A, B (x2: the same quad), C gray, C white, D */

typedef struct srgb_scene {
    demo_effect fx;
    kiln_rasterizer_state rs;
    kiln_buffer vb, identity; /* identity: the effect's world_view_proj */
    kiln_blend_state add_half, alpha;
    kiln_texture target;
    kiln_rtv target_rtv;
    kiln_srv target_srv;
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout layout;
    kiln_buffer tri;
    int fallback; /* no sRGB target here: band D's ramp everywhere */
    srgb_vertex v[QUADS * 6];
} srgb_scene;

/* ---- the copy-out pass: Load, then encode with the sRGB curve ---- */

static void vs_srgb_copy(const kiln_vs_args *a)
{
    for (uint32_t k = 0; k < a->count; k++) {
        const float *in = a->in + (size_t)k * a->in_stride;
        float *out = a->out + (size_t)k * a->out_stride;
        out[0] = in[0];
        out[1] = in[1];
        out[2] = 0.0f;
        out[3] = 1.0f;
    }
}

static float encode_srgb(float l)
{
    if (!(l > 0.0f))
        return 0.0f;
    if (l >= 1.0f)
        return 1.0f;
    return l <= 0.0031308f ? l * 12.92f : 1.055f * powf(l, 1.0f / 2.4f) - 0.055f;
}

static void ps_srgb_copy(kiln_ps_args *a)
{
    int32_t x[KILN_PS_BLOCK], y[KILN_PS_BLOCK], mip[KILN_PS_BLOCK];
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        x[i] = a->x + i % 4;
        y[i] = a->y + i / 4;
        mip[i] = 0;
    }
    kiln_ps_load(a, 0, x, y, mip, KILN_PS_COLOR(a, 0, 0));
    for (int c = 0; c < 3; c++) /* alpha is linear in sRGB formats */
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = encode_srgb(KILN_PS_COLOR(a, 0, c)[i]);
}

static const kiln_vertex_shader_desc srgb_vs_desc = {.fn = vs_srgb_copy, .num_inputs = 1};
/* KILN_PS_NO_Z: a full-screen copy reads no depth, and has no test to
 * work it out for. */
static const kiln_pixel_shader_desc srgb_ps_desc = {
    .fn = ps_srgb_copy, .num_outputs = 1, .flags = KILN_PS_NO_Z};

static kiln_result srgb_register(kiln_device *dev)
{
    kiln_result r = kiln_capture_register_vertex_shader(dev, "demo.srgb.vs", &srgb_vs_desc);
    if (r == KILN_OK)
        r = kiln_capture_register_pixel_shader(dev, "demo.srgb.ps", &srgb_ps_desc);
    return r;
}

/* ---- geometry ---- */

/* Quad q: rows [y0, y1) of the canvas (clip space y up), the ramp's left
 * color `l` to its right color `r` (gray, alpha). */
static void quad(srgb_scene *s, int q, float y0, float y1, const float l[4], const float r[4])
{
    const float xs[6] = {-1, 1, -1, 1, 1, -1};
    const float ys[6] = {y0, y0, y1, y0, y1, y1};
    for (int k = 0; k < 6; k++) {
        srgb_vertex *v = &s->v[q * 6 + k];
        v->pos[0] = xs[k];
        v->pos[1] = 1.0f - 2.0f * ys[k]; /* row fraction to clip y */
        v->pos[2] = 0.5f;
        memcpy(v->color, xs[k] < 0 ? l : r, sizeof v->color);
    }
}

static void build(srgb_scene *s)
{
    const float black[4] = {0, 0, 0, 1}, white[4] = {1, 1, 1, 1};
    const float gray[4] = {0.5f, 0.5f, 0.5f, 1}, clear_white[4] = {1, 1, 1, 0};
    quad(s, 0, 0.0f, 0.25f, black, white);       /* A */
    quad(s, 1, 0.25f, 0.5f, black, white);       /* B, drawn twice */
    quad(s, 2, 0.5f, 0.75f, gray, gray);         /* C: the linear gray */
    quad(s, 3, 0.5f, 0.75f, clear_white, white); /* C: white, alpha v */
    quad(s, 4, 0.75f, 1.0f, black, white);       /* D */
    quad(s, 5, 0.0f, 1.0f, black, white);        /* the fallback */
}

/* ---- the scene ---- */

static int srgb_setup(demo *d, void *state)
{
    static const float identity[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    srgb_scene *s = state;
    build(s);
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(srgb_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(srgb_vertex, color)},
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_NONE};
    const kiln_blend_desc add_half = {.rt = {{.enable = 1,
                                              .src = KILN_BLEND_BLEND_FACTOR,
                                              .dst = KILN_BLEND_ONE,
                                              .op = KILN_BLEND_OP_ADD,
                                              .src_alpha = KILN_BLEND_ZERO,
                                              .dst_alpha = KILN_BLEND_ONE,
                                              .op_alpha = KILN_BLEND_OP_ADD}}};
    const kiln_blend_desc alpha = {.rt = {{.enable = 1,
                                           .src = KILN_BLEND_SRC_ALPHA,
                                           .dst = KILN_BLEND_INV_SRC_ALPHA,
                                           .op = KILN_BLEND_OP_ADD,
                                           .src_alpha = KILN_BLEND_ZERO,
                                           .dst_alpha = KILN_BLEND_ONE,
                                           .op_alpha = KILN_BLEND_OP_ADD}}};
    if (demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
        demo_new_rasterizer(d, &rs, &s->rs) ||
        demo_new_buffer(d, sizeof s->v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, s->v,
                        &s->vb) ||
        demo_new_buffer(d, sizeof identity, KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER,
                        identity, &s->identity))
        return -1;

    /* The sRGB target, or the fallback where the backend has none. */
    const kiln_texture2d_desc td = {
        .width = d->w,
        .height = d->h,
        .mip_levels = 1,
        .format = KILN_FORMAT_R8G8B8A8_UNORM_SRGB,
        .bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
    };
    int got = demo_try_texture_desc(d, &td, NULL, &s->target);
    if (got < 0)
        return -1;
    if (got == 1) {
        fprintf(stderr,
                "kiln_demo: scene %s: the backend has no sRGB formats: a linear ramp only\n",
                d->scene);
        s->fallback = 1;
        return 0;
    }
    static const float tri[3][2] = {{-1, -1}, {-1, 3}, {3, -1}};
    const kiln_input_element tl = {.format = KILN_FORMAT_R32G32_FLOAT};
    if (demo_new_rtv(d, s->target, 0, &s->target_rtv) ||
        demo_new_srv(d, s->target, &s->target_srv) || demo_new_blend(d, &add_half, &s->add_half) ||
        demo_new_blend(d, &alpha, &s->alpha) || demo_new_vertex_shader(d, &srgb_vs_desc, &s->vs) ||
        demo_new_pixel_shader(d, &srgb_ps_desc, &s->ps) ||
        demo_new_layout(d, s->vs, &tl, 1, &s->layout) ||
        demo_new_buffer(d, sizeof tri, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, tri, &s->tri))
        return -1;
    return 0;
}

static int srgb_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    srgb_scene *s = state;
    const uint32_t stride = sizeof(srgb_vertex), tstride = 2 * sizeof(float), offset = 0;
    const float black[4] = {0, 0, 0, 1}, half[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    (void)f; /* the same image every frame */
    (void)canvas;
    if (demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->identity));
    if (s->fallback) {
        if (demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h))
            return -1;
        TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, black));
        TRY(d, kiln_draw(d->ctx, 6, 5 * 6));
        return 0;
    }

    /* A, B, C into the sRGB target */
    if (demo_bind_target(d, s->target_rtv, (kiln_dsv){0}, d->w, d->h))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, s->target_rtv, black));
    TRY(d, kiln_draw(d->ctx, 6, 0 * 6)); /* A: encoded on write */
    TRY(d, kiln_om_set_blend_state(d->ctx, s->add_half, half));
    TRY(d, kiln_draw(d->ctx, 6, 1 * 6)); /* B: 0.5 v */
    TRY(d, kiln_draw(d->ctx, 6, 1 * 6)); /* B: + 0.5 v, in linear */
    TRY(d, kiln_om_set_blend_state(d->ctx, (kiln_blend_state){0}, NULL));
    TRY(d, kiln_draw(d->ctx, 6, 2 * 6)); /* C: linear gray 0.5 */
    TRY(d, kiln_om_set_blend_state(d->ctx, s->alpha, NULL));
    TRY(d, kiln_draw(d->ctx, 6, 3 * 6)); /* C: white over it, alpha v */
    TRY(d, kiln_om_set_blend_state(d->ctx, (kiln_blend_state){0}, NULL));

    /* the target's bytes into the canvas, then D straight into the canvas */
    if (demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h))
        return -1;
    TRY(d, kiln_ia_set_input_layout(d->ctx, s->layout));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->tri, &tstride, &offset));
    TRY(d, kiln_vs_set_shader(d->ctx, s->vs));
    TRY(d, kiln_ps_set_shader(d->ctx, s->ps));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->target_srv));
    TRY(d, kiln_draw(d->ctx, 3, 0));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &(kiln_srv){0}));
    if (demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->vb, &stride, &offset));
    TRY(d, kiln_draw(d->ctx, 6, 4 * 6)); /* D: no conversion */
    return 0;
}

const scene demo_scene_srgb = {
    .name = "srgb",
    .summary = "linear ramps into an sRGB target: encoded on write, blended in linear",
    .state_size = sizeof(srgb_scene),
    .setup = srgb_setup,
    .frame = srgb_frame,
    .expect = NULL, /* a draw scene: tests/golden/srgb.png */
    .register_shaders = srgb_register,
};
