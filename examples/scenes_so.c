/*
 * scenes_so.c - draw scene "swirl": a particle simulation stepped by
 * stream output (see scenes.h for the contract, mat4.h for the
 * conventions, docs/raster.md "Stream output" for the mechanism).
 *
 * 4,096 particles start as a flat disc of 16 rings. Each simulation step
 * moves every particle with the built-in VERTEX_COLOR vertex shader, its
 * constant buffer holding the ring's step (a turn about the vertical axis,
 * faster near the center, and a slow bob), and streams the shader's output
 * (position and color, 32 bytes) into the other of two buffers: the rings
 * are 16 draws, the first writing from offset 0 and the others appending
 * where the previous one ended. No pixel shader is bound while stepping, so
 * rasterization is off. The buffers then swap (ping-pong). After the last
 * step, kiln_draw_auto draws the buffer written last as points: as many as
 * stream output wrote, which the application never reads back. The
 * differential turn winds the disc into spiral arms.
 *
 * Frame f runs SWIRL_STEPS(f) steps from the first state (so a frame does
 * not depend on the frames before it); nothing waits for the GPU.
 *
 * On a backend without stream output (osmesa refuses the geometry shader
 * with one logged BACKEND_FEATURE error) the scene steps the particles on
 * the CPU with the vertex shader's arithmetic, in its order, and draws
 * them from a DYNAMIC buffer: the same image.
 */
#include "mat4.h"
#include "scenes.h"

#include <stdlib.h>
#include <string.h>

#define SWIRL_RINGS 16u
#define SWIRL_PER_RING 256u
#define SWIRL_N (SWIRL_RINGS * SWIRL_PER_RING)
#define SWIRL_STEPS(f) (6u + 3u * (f))

typedef struct swirl_vertex {
    float pos[4]; /* w: 1, as the vertex shader writes it */
    float color[4];
} swirl_vertex;

typedef struct swirl_scene {
    kiln_device *dev; /* for teardown: the geometry shader is not demo-owned */
    demo_effect fx;
    kiln_buffer start;   /* IMMUTABLE: the first state */
    kiln_buffer buf[2];  /* DEFAULT, vertex and stream-output binds */
    kiln_buffer cb_step[SWIRL_RINGS], cb_view;
    kiln_geometry_shader so; /* a pass-through streaming position and color */
    int streams;         /* 0: the backend has no stream output */
    kiln_buffer cpu_vb;  /* without stream output: DYNAMIC, the CPU's result */
    swirl_vertex *cpu;   /* without stream output: the state */
    mat4 step[SWIRL_RINGS];
} swirl_scene;

/* A small deterministic hash in [0, 1). */
static float swirl_unit(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x7feb352du;
    k ^= k >> 15;
    k *= 0x846ca68bu;
    k ^= k >> 16;
    return (float)(k >> 8) / 16777216.0f;
}

static void swirl_start(swirl_vertex *v)
{
    for (uint32_t r = 0; r < SWIRL_RINGS; r++)
        for (uint32_t i = 0; i < SWIRL_PER_RING; i++) {
            uint32_t k = r * SWIRL_PER_RING + i;
            float rad = 0.25f + 0.1f * ((float)r + swirl_unit(3 * k));
            float a = 6.2831853f * ((float)i + swirl_unit(3 * k + 1)) / SWIRL_PER_RING;
            swirl_vertex *p = &v[k];
            p->pos[0] = rad * cosf(a);
            p->pos[1] = 0.04f * (swirl_unit(3 * k + 2) - 0.5f);
            p->pos[2] = rad * sinf(a);
            p->pos[3] = 1.0f;
            float t = (float)r / (SWIRL_RINGS - 1);
            p->color[0] = 1.0f - 0.6f * t;
            p->color[1] = 0.55f + 0.3f * t;
            p->color[2] = 0.3f + 0.7f * t;
            p->color[3] = 1.0f;
        }
}

/* Ring r's step: turn by an angle falling with the radius, then a bob. */
static mat4 swirl_step(uint32_t r)
{
    float turn = 0.9f / (1.0f + 0.35f * (float)r);
    mat4 m = mat4_rotate(v3(0, 1, 0), turn);
    m.m[7] = 0.004f * (((r & 1) ? 1.0f : -1.0f)); /* y += ... each step */
    return m;
}

/* The vertex shader's arithmetic (src/raster/effects.c, transform_position),
 * in its order, for the CPU path. */
static void swirl_cpu_step(const mat4 *m, swirl_vertex *p)
{
    float x = p->pos[0], y = p->pos[1], z = p->pos[2];
    for (int r = 0; r < 4; r++)
        p->pos[r] = ((m->m[4 * r] * x + m->m[4 * r + 1] * y) + m->m[4 * r + 2] * z) + m->m[4 * r + 3];
}

static int swirl_setup(demo *d, void *state)
{
    swirl_scene *s = state;
    s->dev = d->dev;
    swirl_vertex *v = malloc(sizeof(swirl_vertex) * SWIRL_N);
    if (!v)
        return demo_fail(d, "out of memory");
    swirl_start(v);
    const kiln_input_element el[2] = {
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(swirl_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32A32_FLOAT, .offset = offsetof(swirl_vertex, color)},
    };
    int bad = demo_new_effect(d, KILN_EFFECT_VERTEX_COLOR, el, 2, &s->fx) ||
              demo_new_buffer(d, sizeof(swirl_vertex) * SWIRL_N, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v,
                              &s->start) ||
              demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL, &s->cb_view);
    free(v);
    if (bad)
        return -1;
    for (uint32_t r = 0; r < SWIRL_RINGS; r++) {
        s->step[r] = swirl_step(r);
        if (demo_new_buffer(d, sizeof(mat4), KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER, s->step[r].m,
                            &s->cb_step[r]))
            return -1;
    }
    /* Position and color, side by side: what the next step reads. */
    const kiln_so_element out[2] = {{0, 0, 4, 0}, {1, 0, 4, 0}};
    const kiln_so_desc so = {out, 2, 0};
    s->streams = kiln_create_geometry_shader_with_so(d->dev, NULL, &so, &s->so) == KILN_OK;
    if (s->streams) {
        for (int i = 0; i < 2; i++)
            if (demo_new_buffer(d, sizeof(swirl_vertex) * SWIRL_N, KILN_USAGE_DEFAULT,
                                KILN_BIND_VERTEX_BUFFER | KILN_BIND_STREAM_OUTPUT, NULL, &s->buf[i]))
                return -1;
        return 0;
    }
    s->cpu = malloc(sizeof(swirl_vertex) * SWIRL_N);
    if (!s->cpu)
        return demo_fail(d, "out of memory");
    return demo_new_buffer(d, sizeof(swirl_vertex) * SWIRL_N, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, NULL,
                           &s->cpu_vb);
}

static void swirl_teardown(void *state)
{
    swirl_scene *s = state;
    if (s->so.id)
        kiln_destroy_geometry_shader(s->dev, s->so);
    free(s->cpu);
}

/* The steps of frame f, on the device: each ring a draw streaming into the
 * other buffer. Returns the buffer written last. */
static int swirl_simulate(demo *d, swirl_scene *s, uint32_t f, kiln_buffer *last)
{
    uint32_t stride = sizeof(swirl_vertex), zero = 0;
    TRY(d, kiln_gs_set_shader(d->ctx, s->so));
    TRY(d, kiln_ps_set_shader(d->ctx, (kiln_pixel_shader){0})); /* rasterization off */
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_POINT_LIST));
    kiln_buffer src = s->start;
    for (uint32_t k = 0; k < SWIRL_STEPS(f); k++) {
        kiln_buffer dst = s->buf[k & 1];
        TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &src, &stride, &zero));
        /* From offset 0; each later draw appends where the last ended. */
        TRY(d, kiln_so_set_targets(d->ctx, 1, &dst, &zero));
        for (uint32_t r = 0; r < SWIRL_RINGS; r++) {
            TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_step[r]));
            TRY(d, kiln_draw(d->ctx, SWIRL_PER_RING, r * SWIRL_PER_RING));
        }
        src = dst;
    }
    TRY(d, kiln_so_set_targets(d->ctx, 0, NULL, NULL));
    TRY(d, kiln_gs_set_shader(d->ctx, (kiln_geometry_shader){0}));
    *last = src;
    return 0;
}

static int swirl_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    swirl_scene *s = state;
    (void)canvas;
    float aspect = (float)d->w / (float)d->h;
    mat4 view = mat4_mul(mat4_perspective(0.8f, aspect, 0.1f, 20.0f),
                         mat4_look_at(v3(0.0f, 2.1f, 2.6f), v3(0.0f, -0.15f, 0.0f), v3(0, 1, 0)));
    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb_view), 0, NULL, view.m, 0, 0));
    const float clear[4] = {0.02f, 0.02f, 0.06f, 1.0f};
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, clear));
    if (demo_bind_effect(d, &s->fx) || demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h))
        return -1;
    uint32_t stride = sizeof(swirl_vertex), zero = 0;
    if (s->streams) {
        kiln_buffer last;
        if (swirl_simulate(d, s, f, &last))
            return -1;
        TRY(d, kiln_ps_set_shader(d->ctx, s->fx.ps));
        TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_view));
        TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &last, &stride, &zero));
        TRY(d, kiln_draw_auto(d->ctx)); /* what the last step wrote */
        return 0;
    }
    swirl_start(s->cpu);
    for (uint32_t k = 0; k < SWIRL_STEPS(f); k++)
        for (uint32_t i = 0; i < SWIRL_N; i++)
            swirl_cpu_step(&s->step[i / SWIRL_PER_RING], &s->cpu[i]);
    if (demo_write_discard(d, s->cpu_vb, s->cpu, sizeof(swirl_vertex) * SWIRL_N))
        return -1;
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb_view));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->cpu_vb, &stride, &zero));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_POINT_LIST));
    TRY(d, kiln_draw(d->ctx, SWIRL_N, 0));
    return 0;
}

const scene demo_scene_swirl = {
    .name = "swirl",
    .summary = "particles stepped by stream output (ping-pong buffers, append), drawn with draw_auto",
    .state_size = sizeof(swirl_scene),
    .setup = swirl_setup,
    .teardown = swirl_teardown,
    .frame = swirl_frame,
    .expect = NULL, /* a draw scene: tests/golden/swirl.png */
};
