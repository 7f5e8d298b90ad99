/*
 * scenes_stream.c - draw scenes that stream data to the renderer through
 * DYNAMIC buffers every frame: "objects" (per-draw constants, Map
 * WRITE_DISCARD) and "particles" (a vertex ring, Map WRITE_NO_OVERWRITE).
 * See scenes.h for the contract, mat4.h for the conventions.
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

static uint32_t mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* A deterministic float in [0, 1) from a hash. */
static float unit(uint32_t h) { return (float)(h >> 8) / 16777216.0f; }

static uint8_t to_unorm8(float v)
{
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (uint8_t)(v * 255.0f + 0.5f);
}

/* ---------------------------------------------------------------------------
 * Scene "objects": 1,000 small lit cubes on a 40 x 25 grid, each spinning
 * and bobbing on its own, drawn with 1,000 draws. KILN_EFFECT_LIT reads
 * world_view_proj and world from VS cb0: one DYNAMIC constant buffer,
 * mapped with WRITE_DISCARD before every draw (1,000 renames per frame; each
 * draw keeps the storage it captured). The per-object color comes from a
 * per-instance element (slot 1, R8G8B8A8_UNORM) picked with start_instance.
 * PS cb0 (the light) is IMMUTABLE. Depth: D32_FLOAT; back faces culled.
 * ------------------------------------------------------------------------- */

#define OBJ_COLS 40u
#define OBJ_ROWS 25u
#define OBJ_COUNT (OBJ_COLS * OBJ_ROWS)

typedef struct lit_vertex {
    float pos[3];
    float normal[3];
} lit_vertex;

typedef struct object_constants {
    mat4 world_view_proj;
    mat4 world;
} object_constants;

typedef struct objects_scene {
    demo_effect fx;
    kiln_buffer vb, colors, ib, vs_cb, light_cb;
    kiln_dsv dsv;
    kiln_rasterizer_state rs;
} objects_scene;

/* Hue in [0, 1) to a saturated RGB. */
static void hue_rgb(float h, float rgb[3])
{
    for (int c = 0; c < 3; c++) {
        float x = h * 6.0f - (float)(c == 0 ? 3 : c == 1 ? 1 : 5) + 6.0f;
        x = x - 6.0f * floorf(x / 6.0f);  /* wrap to [0, 6) */
        float t = fabsf(x - 3.0f) - 1.0f; /* tent */
        rgb[c] = t < 0.0f ? 0.0f : t > 1.0f ? 1.0f : t;
    }
}

static int objects_setup(demo *d, void *state)
{
    objects_scene *s = state;
    demo_cube_vertex m[DEMO_CUBE_VERTICES];
    lit_vertex v[DEMO_CUBE_VERTICES];
    uint16_t idx[DEMO_CUBE_INDICES];
    uint8_t colors[OBJ_COUNT][4];

    demo_cube_mesh(m, idx);
    for (int i = 0; i < DEMO_CUBE_VERTICES; i++) {
        memcpy(v[i].pos, m[i].pos, sizeof v[i].pos);
        memcpy(v[i].normal, m[i].normal, sizeof v[i].normal);
    }
    for (uint32_t i = 0; i < OBJ_COUNT; i++) {
        uint32_t c = i % OBJ_COLS, r = i / OBJ_COLS;
        float rgb[3];
        hue_rgb((float)(c + r) / (float)(OBJ_COLS + OBJ_ROWS), rgb);
        for (int k = 0; k < 3; k++)
            colors[i][k] = to_unorm8(0.25f + 0.75f * rgb[k]);
        colors[i][3] = 255;
    }
    /* The light shines from the upper left, slightly from the front. */
    vec3 dir = v3_normalize(v3(0.5f, -1.0f, -0.35f));
    const float light[12] = {dir.x, dir.y, dir.z, 0, 1.0f, 0.96f, 0.88f, 0, 0.16f, 0.18f, 0.24f, 0};
    const kiln_input_element el[3] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(lit_vertex, pos)},
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(lit_vertex, normal)},
        {.format = KILN_FORMAT_R8G8B8A8_UNORM, .slot = 1, .per_instance = 1},
    };
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_BACK, .front_ccw = 1};
    if (demo_new_effect(d, KILN_EFFECT_LIT, el, 3, &s->fx) ||
        demo_new_buffer(d, sizeof v, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, v, &s->vb) ||
        demo_new_buffer(d, sizeof colors, KILN_USAGE_IMMUTABLE, KILN_BIND_VERTEX_BUFFER, colors,
                        &s->colors) ||
        demo_new_buffer(d, sizeof idx, KILN_USAGE_IMMUTABLE, KILN_BIND_INDEX_BUFFER, idx, &s->ib) ||
        demo_new_buffer(d, sizeof(object_constants), KILN_USAGE_DYNAMIC, KILN_BIND_CONSTANT_BUFFER,
                        NULL, &s->vs_cb) ||
        demo_new_buffer(d, sizeof light, KILN_USAGE_IMMUTABLE, KILN_BIND_CONSTANT_BUFFER, light,
                        &s->light_cb) ||
        demo_new_depth(d, d->w, d->h, KILN_FORMAT_D32_FLOAT, &s->dsv) ||
        demo_new_rasterizer(d, &rs, &s->rs))
        return -1;
    return 0;
}

static int objects_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv, uint32_t f)
{
    objects_scene *s = state;
    const float bg[4] = {0.05f, 0.06f, 0.08f, 1};
    const kiln_buffer vbs[2] = {s->vb, s->colors};
    const uint32_t strides[2] = {sizeof(lit_vertex), 4}, offsets[2] = {0, 0};
    mat4 vp = mat4_mul(mat4_perspective(55.0f * PI_F / 180.0f, aspect(d), 1.0f, 80.0f),
                       mat4_look_at(v3(0, 16.0f, 22.0f), v3(0, 0, -2.0f), v3(0, 1, 0)));
    float t = (float)f;

    if (demo_bind_target(d, canvas_rtv, s->dsv, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_clear_dsv(d->ctx, s->dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 2, vbs, strides, offsets));
    TRY(d, kiln_ia_set_index_buffer(d->ctx, s->ib, KILN_INDEX_UINT16, 0));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->vs_cb));
    TRY(d, kiln_ps_set_constant_buffers(d->ctx, 0, 1, &s->light_cb));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    for (uint32_t i = 0; i < OBJ_COUNT; i++) {
        uint32_t c = i % OBJ_COLS, r = i / OBJ_COLS, h = mix32(i + 1);
        vec3 axis = v3_normalize(v3(unit(h) - 0.5f, 1.0f, unit(mix32(h)) - 0.5f));
        float x = ((float)c - (OBJ_COLS - 1) * 0.5f) * 1.0f;
        float z = ((float)r - (OBJ_ROWS - 1) * 0.5f) * 1.0f;
        float y = 0.3f * sinf(t * 0.15f + (float)c * 0.45f + (float)r * 0.3f);
        object_constants k;
        k.world = mat4_mul(mat4_translate(x, y, z),
                           mat4_mul(mat4_rotate(axis, t * 0.08f + unit(h >> 3) * 2.0f * PI_F),
                                    mat4_scale(0.32f, 0.32f, 0.32f)));
        k.world_view_proj = mat4_mul(vp, k.world);
        if (demo_write_discard(d, s->vs_cb, &k, sizeof k))
            return -1;
        TRY(d, kiln_draw_indexed_instanced(d->ctx, DEMO_CUBE_INDICES, 1, 0, 0, i));
    }
    (void)canvas;
    return 0;
}

const scene demo_scene_objects = {
    .name = "objects",
    .summary = "1,000 lit cubes, per-draw constants through one DYNAMIC buffer (WRITE_DISCARD)",
    .state_size = sizeof(objects_scene),
    .setup = objects_setup,
    .frame = objects_frame,
    .expect = NULL, /* a draw scene: tests/golden/objects.png */
};

/* ---------------------------------------------------------------------------
 * Scene "particles": a fountain of sparks that rise, fall, bounce once and
 * fade. Each particle is a camera-facing quad (two triangles) whose
 * vertices are built on the CPU every frame and appended to one DYNAMIC
 * vertex buffer used as a ring: each batch is written with Map
 * WRITE_NO_OVERWRITE after what earlier draws still read, and when the ring
 * is full the next batch starts over at 0 with Map WRITE_DISCARD (the
 * queued draws keep the old storage). KILN_EFFECT_TEXTURE_COLOR with a soft
 * round sprite, blended additively (SRC_ALPHA, ONE) without depth.
 *
 * Particle k leaves the emitter at time k / PART_RATE seconds; frame f is
 * at (f + PART_WARMUP) / 30 seconds, so the fountain runs at full height
 * from frame 0, and every particle's state is a closed-form function of
 * its age.
 * ------------------------------------------------------------------------- */

#define PART_RATE 300.0f   /* particles per second */
#define PART_LIFE_MAX 3.2f /* seconds */
#define PART_WARMUP 150u   /* frames */
#define PART_GRAVITY 6.0f
#define PART_BATCH 200u         /* particles per draw */
#define PART_RING (96u * 1024u) /* bytes of the vertex ring */
#define PART_SPRITE 32u

typedef struct part_vertex {
    float pos[3];
    uint8_t color[4];
    float uv[2];
} part_vertex;

#define PART_VERTS 6u /* per particle */
#define PART_BYTES (PART_VERTS * (uint32_t)sizeof(part_vertex))
#define PART_MAX ((uint32_t)(PART_RATE * PART_LIFE_MAX) + 2u)

typedef struct particles_scene {
    demo_effect fx;
    kiln_buffer ring, cb;
    uint32_t ring_used; /* bytes written since the last DISCARD */
    kiln_srv sprite;
    kiln_blend_state additive;
    kiln_depth_stencil_state no_depth;
    kiln_rasterizer_state rs;
    part_vertex *verts; /* this frame's vertices, PART_MAX * PART_VERTS */
} particles_scene;

static int particles_setup(demo *d, void *state)
{
    particles_scene *s = state;
    uint8_t sprite[PART_SPRITE * PART_SPRITE * 4];
    for (uint32_t y = 0; y < PART_SPRITE; y++)
        for (uint32_t x = 0; x < PART_SPRITE; x++) {
            float dx = ((float)x + 0.5f) / PART_SPRITE * 2.0f - 1.0f;
            float dy = ((float)y + 0.5f) / PART_SPRITE * 2.0f - 1.0f;
            float a = 1.0f - sqrtf(dx * dx + dy * dy);
            uint8_t *p = sprite + (y * PART_SPRITE + x) * 4;
            p[0] = p[1] = p[2] = 255;
            p[3] = to_unorm8(a > 0.0f ? a * a * 1.3f : 0.0f);
        }
    kiln_texture2d_desc desc = {
        .width = PART_SPRITE,
        .height = PART_SPRITE,
        .mip_levels = 1,
        .format = DEMO_FORMAT,
        .usage = KILN_USAGE_IMMUTABLE,
        .bind_flags = KILN_BIND_SHADER_RESOURCE,
    };
    kiln_subresource_data init = {sprite, PART_SPRITE * 4};
    kiln_texture tex;
    const kiln_input_element el[3] = {
        {.format = KILN_FORMAT_R32G32B32_FLOAT, .offset = offsetof(part_vertex, pos)},
        {.format = KILN_FORMAT_R8G8B8A8_UNORM, .offset = offsetof(part_vertex, color)},
        {.format = KILN_FORMAT_R32G32_FLOAT, .offset = offsetof(part_vertex, uv)},
    };
    kiln_blend_desc blend = {0};
    blend.rt[0] = (kiln_blend_target){
        .enable = 1,
        .src = KILN_BLEND_SRC_ALPHA,
        .dst = KILN_BLEND_ONE,
        .op = KILN_BLEND_OP_ADD,
        .src_alpha = KILN_BLEND_ZERO,
        .dst_alpha = KILN_BLEND_ONE,
        .op_alpha = KILN_BLEND_OP_ADD,
    };
    const kiln_depth_stencil_desc ds = {.depth_disable = 1, .depth_write_disable = 1};
    const kiln_rasterizer_desc rs = {.cull = KILN_CULL_NONE};

    s->verts = malloc(sizeof(part_vertex) * PART_MAX * PART_VERTS);
    if (!s->verts)
        return demo_fail(d, "out of memory");
    s->ring_used = PART_RING; /* the first batch discards */
    if (demo_new_effect(d, KILN_EFFECT_TEXTURE_COLOR, el, 3, &s->fx) ||
        demo_new_buffer(d, PART_RING, KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER, NULL,
                        &s->ring) ||
        demo_new_buffer(d, sizeof(mat4), KILN_USAGE_DEFAULT, KILN_BIND_CONSTANT_BUFFER, NULL,
                        &s->cb) ||
        demo_new_texture_desc(d, &desc, &init, &tex) || demo_new_srv(d, tex, &s->sprite) ||
        demo_new_blend(d, &blend, &s->additive) || demo_new_depth_stencil(d, &ds, &s->no_depth) ||
        demo_new_rasterizer(d, &rs, &s->rs))
        return -1;
    return 0;
}

static void particles_teardown(void *state)
{
    particles_scene *s = state;
    free(s->verts);
}

/* Fills the six vertices of particle k at time `now` (seconds); returns 0
 * when it is not alive. `right` and `up` span the camera's image plane. */
static int particle(uint32_t k, float now, vec3 right, vec3 up, part_vertex *out)
{
    uint32_t h0 = mix32(k * 2654435761u + 17u), h1 = mix32(h0), h2 = mix32(h1), h3 = mix32(h2);
    float born = (float)k / PART_RATE, life = 2.2f + unit(h0) * (PART_LIFE_MAX - 2.2f);
    float age = now - born;
    if (age < 0.0f || age >= life)
        return 0;
    float phi = unit(h1) * 2.0f * PI_F, spread = 0.45f + unit(h2) * 1.1f;
    float vx = spread * cosf(phi), vz = spread * sinf(phi), vy = 4.6f + unit(h3) * 1.4f;
    float land = 2.0f * vy / PART_GRAVITY, y;
    if (age < land) {
        y = vy * age - 0.5f * PART_GRAVITY * age * age;
    } else { /* one bounce at 40% of the landing speed, then it slides */
        float a2 = age - land, vy2 = 0.4f * vy;
        y = vy2 * a2 - 0.5f * PART_GRAVITY * a2 * a2;
        y = y > 0.0f ? y : 0.0f;
    }
    vec3 p = v3(vx * age, y, vz * age);

    /* Color by age: white-hot, orange, fading to a dim red; one in four
     * sparks burns blue instead. */
    float u = age / life, rgb[3];
    static const float warm[3][3] = {{1, 0.95f, 0.75f}, {1, 0.5f, 0.12f}, {0.6f, 0.08f, 0.2f}};
    static const float cool[3][3] = {{0.85f, 0.95f, 1}, {0.3f, 0.6f, 1}, {0.25f, 0.1f, 0.6f}};
    const float(*ramp)[3] = (h3 & 3) == 0 ? cool : warm;
    int seg = u < 0.5f ? 0 : 1;
    float w = u < 0.5f ? u * 2.0f : u * 2.0f - 1.0f;
    for (int c = 0; c < 3; c++)
        rgb[c] = ramp[seg][c] + (ramp[seg + 1][c] - ramp[seg][c]) * w;
    uint8_t color[4] = {to_unorm8(rgb[0]), to_unorm8(rgb[1]), to_unorm8(rgb[2]),
                        to_unorm8(0.9f * (1.0f - u))};

    float size = 0.08f + 0.06f * unit(h2 >> 5);
    vec3 r = v3_scale(right, size), q = v3_scale(up, size);
    static const float corner[6][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, -1}, {1, 1}, {-1, 1}};
    for (int i = 0; i < 6; i++) {
        vec3 c = v3_add(p, v3_add(v3_scale(r, corner[i][0]), v3_scale(q, corner[i][1])));
        out[i].pos[0] = c.x;
        out[i].pos[1] = c.y;
        out[i].pos[2] = c.z;
        memcpy(out[i].color, color, 4);
        out[i].uv[0] = (corner[i][0] + 1.0f) * 0.5f;
        out[i].uv[1] = (1.0f - corner[i][1]) * 0.5f;
    }
    return 1;
}

/* Appends `n` particles' vertices to the ring and draws them. */
static int particles_batch(demo *d, particles_scene *s, const part_vertex *v, uint32_t n)
{
    uint32_t bytes = n * PART_BYTES;
    kiln_map_type type = KILN_MAP_WRITE_NO_OVERWRITE;
    kiln_mapped_subresource m;
    if (s->ring_used + bytes > PART_RING) {
        type = KILN_MAP_WRITE_DISCARD;
        s->ring_used = 0;
    }
    TRY(d, kiln_map(d->ctx, demo_buf(s->ring), 0, type, 0, &m));
    memcpy((uint8_t *)m.data + s->ring_used, v, bytes);
    TRY(d, kiln_unmap(d->ctx, demo_buf(s->ring), 0));
    TRY(d, kiln_draw(d->ctx, n * PART_VERTS, s->ring_used / (uint32_t)sizeof(part_vertex)));
    s->ring_used += bytes;
    return 0;
}

static int particles_frame(demo *d, void *state, kiln_texture canvas, kiln_rtv canvas_rtv,
                           uint32_t f)
{
    particles_scene *s = state;
    const float bg[4] = {0.03f, 0.03f, 0.06f, 1};
    const uint32_t stride = sizeof(part_vertex), offset = 0;
    vec3 eye = v3(0, 2.0f, 5.6f), at = v3(0, 1.7f, 0);
    mat4 view = mat4_look_at(eye, at, v3(0, 1, 0));
    mat4 wvp = mat4_mul(mat4_perspective(50.0f * PI_F / 180.0f, aspect(d), 0.5f, 50.0f), view);
    /* The view matrix's first two rows are the camera's right and up. */
    vec3 right = v3(view.m[0], view.m[1], view.m[2]), up = v3(view.m[4], view.m[5], view.m[6]);
    float now = (float)(f + PART_WARMUP) / 30.0f;

    TRY(d, kiln_update_subresource(d->ctx, demo_buf(s->cb), 0, NULL, wvp.m, 0, 0));
    uint32_t n = 0;
    int64_t k1 = (int64_t)(now * PART_RATE), k0 = (int64_t)((now - PART_LIFE_MAX) * PART_RATE);
    for (int64_t k = k0 < 0 ? 0 : k0; k <= k1 && n < PART_MAX; k++)
        n += (uint32_t)particle((uint32_t)k, now, right, up, s->verts + n * PART_VERTS);

    if (demo_bind_target(d, canvas_rtv, (kiln_dsv){0}, d->w, d->h) || demo_bind_effect(d, &s->fx))
        return -1;
    TRY(d, kiln_clear_rtv(d->ctx, canvas_rtv, bg));
    TRY(d, kiln_ia_set_vertex_buffers(d->ctx, 0, 1, &s->ring, &stride, &offset));
    TRY(d, kiln_ia_set_topology(d->ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    TRY(d, kiln_vs_set_constant_buffers(d->ctx, 0, 1, &s->cb));
    TRY(d, kiln_ps_set_shader_resources(d->ctx, 0, 1, &s->sprite));
    TRY(d, kiln_rs_set_state(d->ctx, s->rs));
    TRY(d, kiln_om_set_blend_state(d->ctx, s->additive, NULL));
    TRY(d, kiln_om_set_depth_stencil_state(d->ctx, s->no_depth, 0));
    for (uint32_t i = 0; i < n; i += PART_BATCH)
        if (particles_batch(d, s, s->verts + i * PART_VERTS,
                            n - i < PART_BATCH ? n - i : PART_BATCH))
            return -1;
    (void)canvas;
    return 0;
}

const scene demo_scene_particles = {
    .name = "particles",
    .summary = "a spark fountain streamed through a DYNAMIC vertex ring (NO_OVERWRITE/DISCARD)",
    .state_size = sizeof(particles_scene),
    .setup = particles_setup,
    .teardown = particles_teardown,
    .frame = particles_frame,
    .expect = NULL, /* a draw scene: tests/golden/particles.png */
};
