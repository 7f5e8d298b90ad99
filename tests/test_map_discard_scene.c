/*
 * A WRITE_DISCARD Map between draws keeps the draws gathered so far in
 * their scene (kiln_map no longer submits it) and each draw still reads the
 * bytes that were current when it was recorded.
 *
 * Per-draw constants: eight draws into eight columns of a 64x16 target,
 * each preceded by Map(WRITE_DISCARD) of one DYNAMIC constant buffer with
 * that column's color, the pixel shader writing PS cb0. Per-draw vertices:
 * one DYNAMIC vertex buffer rewritten with WRITE_DISCARD before each of
 * four draws, each time with a quad over another row band. Every pixel is
 * checked against the color its draw was given, on SERIAL and on ASYNC
 * devices with 1 and 2 workers, and the sequence ends with a Map READ of a
 * STAGING copy (the Map that must follow the draws).
 *
 * textured: the same pattern with a texture bound (a shader multiplying
 * its sample by cb0), 2,000 draws of one-pixel-wide columns: the scene
 * ends at KD_SCENE_MAX_TEXSETS (512) draws whose *views* changed, and a
 * draw whose constants alone changed reads the views the last one read,
 * so all 2,000 stay one scene (one command queued; it was four), and
 * each column holds its last draw's color.
 *
 * batched: a DYNAMIC vertex buffer rewritten with WRITE_DISCARD three
 * times, 64 quads each time, and a draw of each quad after each rewrite.
 * A draw binding the storage the scene's newest bind record holds shares
 * it, DYNAMIC or not: the 192 draws make one scene and allocate no bind
 * record each (a handful of allocations for the scene's arrays and a
 * record per rename; it was one or more a draw), and each column holds
 * the color of its last draw.
 *
 * finish_while_mapped: a draw of a DYNAMIC vertex buffer, then a
 * NO_OVERWRITE Map of it (the next batch's bytes), then kiln_finish
 * before the Unmap: the draw was called before the Map and must complete
 * (the scene stays open across the Map; without its read granted beside
 * the CPU's, the read waited for the Unmap and the finish returned
 * WOULD_DEADLOCK).
 *
 * sprite_batch: quads appended with NO_OVERWRITE Maps (DISCARD at the
 * wrap), each drawn after its Unmap: one scene for all (it was one per
 * Map); with kiln_flush inside every 16th Map, a scene per flush, run
 * while the CPU writes the next quad. draw_while_mapped: a draw during
 * the Map goes to a scene that waits for the Unmap and sees the bytes
 * written after the call.
 *
 * renamed_elsewhere: the draw compares a DYNAMIC resource's storage
 * without the scheduler mutex while another context's WRITE_DISCARD may
 * rename it: 3,000 draws reading a constant buffer on one thread, 3,000
 * renames of it on another (for TSan and ASan); each column holds a color
 * one rename wrote, or the buffer's first zeros, never a mix.
 */
#include "count_alloc.h"
#include "raster_util.h"

#include <pthread.h>
#include <stdio.h>

enum { W = 64, H = 16, COLS = 8 };

static float col_color(uint32_t i, int c)
{
    static const float base[COLS][3] = {{1, 0, 0}, {0, 1, 0},       {0, 0, 1},       {1, 1, 0},
                                        {0, 1, 1}, {1, 0, 1},       {0.5f, 0.25f, 1}, {0.25f, 0.5f, 0}};
    return c == 3 ? 1.0f : base[i][c];
}

static void write_discard(kiln_context *ctx, kiln_buffer b, const void *data, size_t n)
{
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(b), 0, KILN_MAP_WRITE_DISCARD, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, data, n);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(b), 0), KILN_OK);
}

/* Checks every pixel of `rt` against the color (UNORM8-exact) of the
 * draw that covers it last: color(which(x, y), channel). */
static void check_image(kiln_device *dev, const ru_tex *rt, uint32_t (*which)(int x, int y),
                        float (*color)(uint32_t draw, int c))
{
    uint8_t img[W * H * 4];
    if (!ru_read(dev, rt->tex, 0, img))
        return;
    uint32_t bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint32_t d = which(x, y);
            for (int k = 0; k < 4; k++) {
                uint8_t want = (uint8_t)(color(d, k) * 255.0f + 0.5f);
                if (img[(y * W + x) * 4 + k] != want && bad++ < 3)
                    fprintf(stderr, "    (%d,%d) channel %d: %u, want %u (draw %u)\n", x, y, k,
                            img[(y * W + x) * 4 + k], want, d);
            }
        }
    CHECK_EQ_INT(bad, 0);
}

/* run's draw over pixel (x, y): a column's, or a row band's below */
static uint32_t col_at(int x, int y)
{
    return y < H / 2 ? (uint32_t)x / (W / COLS) : 4 + (uint32_t)(y - H / 2) / 2;
}

static kiln_buffer dynamic_buffer(kiln_device *dev, uint32_t bind, uint32_t size)
{
    kiln_buffer_desc d = {size, KILN_USAGE_DYNAMIC, bind, KILN_CPU_ACCESS_WRITE};
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(dev, &d, NULL, &b), KILN_OK);
    return b;
}

/* A quad over pixels [x0, x1) x [y0, y1) as two triangles, float4 positions. */
static void quad(float v[6][4], int x0, int y0, int x1, int y1)
{
    float l = 2.0f * x0 / W - 1, r = 2.0f * x1 / W - 1, t = 1 - 2.0f * y0 / H, b = 1 - 2.0f * y1 / H;
    const float p[6][2] = {{l, t}, {r, t}, {l, b}, {l, b}, {r, t}, {r, b}};
    for (int k = 0; k < 6; k++) {
        v[k][0] = p[k][0];
        v[k][1] = p[k][1];
        v[k][2] = 0.5f;
        v[k][3] = 1.0f;
    }
}

/* What every case here draws with: a W x H RGBA8 target, a pipeline
 * (vary: one varying, the pixel shader writing it; else the pixel shader
 * writing PS cb0) and the target-covering viewport and rasterizer state. */
typedef struct rig {
    kiln_device *dev;
    kiln_context *ctx;
    ru_tex rt;
    ru_pipe p;
    kiln_rasterizer_state rs;
} rig;

static rig rig_open(kiln_device *dev, int vary)
{
    rig g = {.dev = dev, .ctx = kiln_device_immediate_context(dev)};
    g.rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    g.p = vary ? ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0) : ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ru_bind_pipe(g.ctx, &g.p);
    g.rs = ru_target_2d(dev, g.ctx, &g.rt);
    return g;
}

/* Frees the rig and its device. */
static void rig_close(rig *g)
{
    kiln_destroy_rasterizer_state(g->dev, g->rs);
    ru_free_pipe(g->dev, &g->p);
    ru_free_tex(g->dev, &g->rt);
    kiln_device_destroy(g->dev);
}

static void run(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    rig g = rig_open(dev, 0);
    kiln_context *ctx = g.ctx;
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rt.rtv, black), KILN_OK);

    /* 1. per-draw constants: one static quad buffer, a constant buffer per draw */
    kiln_buffer cb = dynamic_buffer(dev, KILN_BIND_CONSTANT_BUFFER, 16);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    float quads[COLS][6][4];
    for (uint32_t i = 0; i < COLS; i++)
        quad(quads[i], (int)i * (W / COLS), 0, (int)(i + 1) * (W / COLS), H / 2);
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, quads, sizeof quads);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    for (uint32_t i = 0; i < COLS; i++) {
        float c[4];
        for (int k = 0; k < 4; k++)
            c[k] = col_color(i, k);
        write_discard(ctx, cb, c, sizeof c);
        CHECK_RESULT(kiln_draw(ctx, 6, 6 * i), KILN_OK);
    }

    /* 2. per-draw vertices: one DYNAMIC vertex buffer rewritten each time,
     * the color from the constant buffer, also rewritten */
    kiln_buffer dvb = dynamic_buffer(dev, KILN_BIND_VERTEX_BUFFER, sizeof(float) * 24);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &dvb, &stride, &off), KILN_OK);
    for (uint32_t i = 0; i < 4; i++) {
        float v[6][4], c[4];
        quad(v, 0, H / 2 + 2 * (int)i, W, H / 2 + 2 * (int)i + 2);
        for (int k = 0; k < 4; k++)
            c[k] = col_color(i + 4, k);
        write_discard(ctx, dvb, v, sizeof v);
        write_discard(ctx, cb, c, sizeof c);
        CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK);
    }

    check_image(dev, &g.rt, col_at, col_color);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_buffer(dev, dvb);
    rig_close(&g);
}

/* A vertex buffer of a quad over each column (quad x: vertices 6x..6x+5),
 * bound in slot 0. */
static kiln_buffer bind_columns(kiln_device *dev, kiln_context *ctx)
{
    float cols[W][6][4];
    for (int x = 0; x < W; x++)
        quad(cols[x], x, 0, x + 1, H);
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, cols, sizeof cols);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    return vb;
}

/* cb0's float4 times view 0's texel at (0.5, 0.5) under sampler 0 */
static void ps_tex_cb(kiln_ps_args *a)
{
    float u[KILN_PS_BLOCK], v[KILN_PS_BLOCK], rgba[4 * KILN_PS_BLOCK];
    for (int i = 0; i < KILN_PS_BLOCK; i++)
        u[i] = v[i] = 0.5f;
    kiln_ps_sample(a, 0, 0, u, v, rgba);
    const float *cb = a->cb && a->cb[0] && a->cb_size[0] >= 16 ? (const float *)a->cb[0] : NULL;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = rgba[c * KILN_PS_BLOCK + i] * (cb ? cb[c] : 0.0f);
}

enum { TEX_DRAWS = 2000 };

/* Draw i's color (exact in UNORM8; the texel is white) */
static float tex_color(uint32_t i, int c)
{
    return c == 3 ? 1.0f : (float)((i * (3u + (uint32_t)c * 7u)) % 256u) / 255.0f;
}

/* textured's last draw over column x (draw i covers column i % W) */
static uint32_t tex_at(int x, int y)
{
    (void)y;
    return (TEX_DRAWS - 1) - ((TEX_DRAWS - 1 - (uint32_t)x) % W);
}

static void textured(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    rig g = rig_open(dev, 0);
    kiln_context *ctx = g.ctx;
    kiln_pixel_shader ps;
    kiln_pixel_shader_desc pd = {.fn = ps_tex_cb, .num_outputs = 1};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    const uint8_t white[4] = {255, 255, 255, 255};
    kiln_texture2d_desc td = {.width = 1,
                              .height = 1,
                              .mip_levels = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_SHADER_RESOURCE,
                              .usage = KILN_USAGE_IMMUTABLE};
    kiln_subresource_data init = {white, 4};
    kiln_texture tex;
    kiln_srv srv;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    kiln_buffer cb = dynamic_buffer(dev, KILN_BIND_CONSTANT_BUFFER, 16);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    kiln_buffer vb = bind_columns(dev, ctx);
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rt.rtv, black), KILN_OK);
    kiln_device_stats before, after;
    kiln_device_get_stats(dev, &before);
    for (uint32_t i = 0; i < TEX_DRAWS; i++) {
        float c[4];
        for (int k = 0; k < 4; k++)
            c[k] = tex_color(i, k);
        write_discard(ctx, cb, c, sizeof c);
        CHECK_RESULT(kiln_draw(ctx, 6, 6 * (i % W)), KILN_OK);
    }
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    kiln_device_get_stats(dev, &after);
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, 1);
    check_image(dev, &g.rt, tex_at, tex_color);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    kiln_destroy_pixel_shader(dev, ps);
    rig_close(&g);
}

enum { BATCH_QUADS = W, BATCH_DRAWS = 3 * W };

/* batched's draw i's color (the quad over column i % W) */
static float batch_color(uint32_t i, int c)
{
    return c == 3 ? 1.0f : (float)((i * (5u + (uint32_t)c * 11u) + 17u) % 256u) / 255.0f;
}

static uint32_t batch_at(int x, int y)
{
    (void)y;
    return (BATCH_DRAWS - 1) - ((BATCH_DRAWS - 1 - (uint32_t)x) % W);
}

enum { QUAD_STRIDE = 32, QUAD_BYTES = 6 * QUAD_STRIDE };

/* A DYNAMIC vertex buffer of BATCH_QUADS quads (position, color) bound in
 * slot 0, and the target cleared to black. */
static kiln_buffer batch_buffer(const rig *g)
{
    const uint32_t stride = QUAD_STRIDE, off = 0;
    kiln_buffer vb = dynamic_buffer(g->dev, KILN_BIND_VERTEX_BUFFER, BATCH_QUADS * QUAD_BYTES);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(g->ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(g->ctx, g->rt.rtv, black), KILN_OK);
    return vb;
}

/* Quad `slot` of a mapped batch buffer: column `slot`, draw i's color. */
static void write_batch_quad(void *data, uint32_t slot, uint32_t i)
{
    float q[6][4], (*v)[8] = (void *)((uint8_t *)data + slot * QUAD_BYTES);
    quad(q, (int)slot, 0, (int)slot + 1, H);
    for (int j = 0; j < 6; j++)
        for (int c = 0; c < 4; c++) {
            v[j][c] = q[j][c];
            v[j][4 + c] = batch_color(i, c);
        }
}

static void batched(kiln_exec_mode mode, uint32_t threads)
{
    counter cnt = COUNTER_INIT;
    kiln_result res;
    kiln_device *dev = counter_device(&cnt, mode, threads, &res);
    CHECK_RESULT(res, KILN_OK);
    if (!dev)
        return;
    rig g = rig_open(dev, 1);
    kiln_context *ctx = g.ctx;
    kiln_buffer vb = batch_buffer(&g);
    kiln_device_stats before, after;
    kiln_device_get_stats(dev, &before);
    uint64_t allocs = 0;
    for (uint32_t i = 0; i < BATCH_DRAWS; i++) {
        uint32_t slot = i % BATCH_QUADS;
        if (slot == 0) { /* the next 64 quads, in fresh storage */
            kiln_mapped_subresource m;
            CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(vb), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                         KILN_OK);
            for (uint32_t k = 0; m.data && k < BATCH_QUADS; k++)
                write_batch_quad(m.data, k, i + k);
            CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(vb), 0), KILN_OK);
        }
        uint64_t at = counter_allocs(&cnt);
        CHECK_RESULT(kiln_draw(ctx, 6, 6 * slot), KILN_OK);
        allocs += counter_allocs(&cnt) - at;
    }
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    kiln_device_get_stats(dev, &after);
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, 1); /* one scene */
    /* the draw chunk, the op array's growth, a bind record per rename */
    CHECK(allocs <= 16);
    if (allocs > 16)
        fprintf(stderr, "    %llu allocations in %u draws\n", (unsigned long long)allocs,
                BATCH_DRAWS);
    check_image(dev, &g.rt, batch_at, batch_color);
    kiln_destroy_buffer(dev, vb);
    rig_close(&g);
}

static void finish_while_mapped(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    rig g = rig_open(dev, 0);
    kiln_context *ctx = g.ctx;
    kiln_buffer cb = dynamic_buffer(dev, KILN_BIND_CONSTANT_BUFFER, 16);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    const float green[4] = {0, 1, 0, 1};
    write_discard(ctx, cb, green, sizeof green);
    kiln_buffer vb = dynamic_buffer(dev, KILN_BIND_VERTEX_BUFFER, sizeof(float) * 24);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    float v[6][4];
    quad(v, 0, 0, W, H);
    write_discard(ctx, vb, v, sizeof v);
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rt.rtv, black), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(vb), 0, KILN_MAP_WRITE_NO_OVERWRITE, 0, &m),
                 KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(vb), 0), KILN_OK);
    uint8_t img[W * H * 4];
    if (ru_read(dev, g.rt.tex, 0, img)) {
        uint32_t bad = 0;
        for (int i = 0; i < W * H; i++)
            bad += img[4 * i] != 0 || img[4 * i + 1] != 255 || img[4 * i + 2] != 0;
        CHECK_EQ_INT(bad, 0);
    }
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_buffer(dev, vb);
    rig_close(&g);
}

/* The sprite batch of D3D10 applications: one DYNAMIC vertex buffer of W
 * quads, each quad appended with a WRITE_NO_OVERWRITE Map (WRITE_DISCARD
 * when the buffer is full and starts over) and drawn after its Unmap:
 * BATCH_DRAWS draws stay one scene (it was a scene per Map), each column
 * holding its last draw's color. `flush_mapped`: a kiln_flush inside every
 * 16th NO_OVERWRITE Map, before the quad is written: the scene so far is
 * queued while the buffer is mapped, its reads granted beside the CPU's
 * (the workers read earlier quads while this thread writes the next one;
 * TSan), so each flush cuts one scene and nothing waits for the Unmap. */
static void sprite_batch(kiln_exec_mode mode, uint32_t threads, bool flush_mapped)
{
    kiln_device *dev = th_device(mode, threads);
    rig g = rig_open(dev, 1);
    kiln_context *ctx = g.ctx;
    kiln_buffer vb = batch_buffer(&g);
    kiln_device_stats before, after;
    kiln_device_get_stats(dev, &before);
    uint32_t flushes = 0;
    for (uint32_t i = 0; i < BATCH_DRAWS; i++) {
        uint32_t slot = i % BATCH_QUADS;
        kiln_map_type type = slot ? KILN_MAP_WRITE_NO_OVERWRITE : KILN_MAP_WRITE_DISCARD;
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(vb), 0, type, 0, &m), KILN_OK);
        if (flush_mapped && i % 16 == 15) {
            CHECK_RESULT(kiln_flush(ctx), KILN_OK);
            flushes++;
        }
        if (m.data)
            write_batch_quad(m.data, slot, i);
        CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(vb), 0), KILN_OK);
        CHECK_RESULT(kiln_draw(ctx, 6, 6 * slot), KILN_OK);
    }
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    kiln_device_get_stats(dev, &after);
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, flushes + 1);
    check_image(dev, &g.rt, batch_at, batch_color);
    kiln_destroy_buffer(dev, vb);
    rig_close(&g);
}

/* draw_while_mapped's halves: draw 0 the left, draw 1 the right */
static float half_color(uint32_t i, int c)
{
    static const float k[2][4] = {{1, 0.5f, 0, 1}, {0, 0.25f, 1, 1}};
    return k[i][c];
}

static uint32_t half_at(int x, int y)
{
    (void)y;
    return x < W / 2 ? 0u : 1u;
}

/* A draw recorded while a NO_OVERWRITE Map of its vertex buffer is open
 * (D3D10 leaves this undefined; kiln orders it after the Unmap): the open
 * scene keeps the draws from before the Map, the new draw goes to a scene
 * of its own that waits for the Unmap. A kiln_flush while still mapped
 * queues both; the first runs (its reads beside the CPU's grant), the
 * second sees the quad written after the draw call. With the draw in the
 * first scene it would read the quad's zeros (every case here; SERIAL at
 * once) and TSan would see the CPU's write race with its read. */
static void draw_while_mapped(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    rig g = rig_open(dev, 1);
    kiln_context *ctx = g.ctx;
    const uint32_t stride = QUAD_STRIDE, off = 0;
    kiln_buffer vb = dynamic_buffer(dev, KILN_BIND_VERTEX_BUFFER, 2 * QUAD_BYTES);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    float v[2][6][8] = {{{0}}};
    for (uint32_t h = 0; h < 2; h++) {
        float q[6][4];
        quad(q, (int)h * W / 2, 0, (int)(h + 1) * W / 2, H);
        for (int j = 0; j < 6; j++)
            for (int c = 0; c < 4; c++) {
                v[h][j][c] = q[j][c];
                v[h][j][4 + c] = half_color(h, c);
            }
    }
    write_discard(ctx, vb, v[0], QUAD_BYTES); /* the right half's quad: zeros */
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rt.rtv, black), KILN_OK);
    kiln_device_stats before, after;
    kiln_device_get_stats(dev, &before);
    CHECK_RESULT(kiln_draw(ctx, 6, 0), KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(vb), 0, KILN_MAP_WRITE_NO_OVERWRITE, 0, &m),
                 KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 6, 6), KILN_OK);
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    if (m.data)
        memcpy((uint8_t *)m.data + QUAD_BYTES, v[1], QUAD_BYTES);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(vb), 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_get_stats(dev, &after);
    CHECK_EQ_INT(after.commands_queued - before.commands_queued, 2);
    check_image(dev, &g.rt, half_at, half_color);
    kiln_destroy_buffer(dev, vb);
    rig_close(&g);
}

enum { RENAMES = 3000 };

typedef struct renamer {
    kiln_device *dev;
    kiln_buffer cb;
    uint32_t done, failed; /* the main thread reads them after the join */
} renamer;

/* The harness's checks are the main thread's: this one counts. */
static void *rename_loop(void *arg)
{
    renamer *r = arg;
    kiln_context *ctx = NULL;
    if (kiln_context_create(r->dev, &ctx) != KILN_OK) {
        r->failed++;
        return NULL;
    }
    for (uint32_t k = 0; k < RENAMES; k++) {
        float c[4] = {(float)(k % 256u) / 255.0f, (float)(255u - k % 256u) / 255.0f, 0.0f, 1.0f};
        kiln_mapped_subresource m;
        if (kiln_map(ctx, kiln_buffer_resource(r->cb), 0, KILN_MAP_WRITE_DISCARD, 0, &m) !=
            KILN_OK) {
            r->failed++;
            continue;
        }
        memcpy(m.data, c, sizeof c);
        r->failed += kiln_unmap(ctx, kiln_buffer_resource(r->cb), 0) != KILN_OK;
        r->done++;
    }
    r->failed += kiln_context_destroy(ctx) != KILN_OK;
    return NULL;
}

static void renamed_elsewhere(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    rig g = rig_open(dev, 0);
    kiln_context *ctx = g.ctx;
    renamer r = {dev, dynamic_buffer(dev, KILN_BIND_CONSTANT_BUFFER, 16), 0, 0};
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &r.cb), KILN_OK);
    kiln_buffer vb = bind_columns(dev, ctx);
    const float blue[4] = {0, 0, 1, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rt.rtv, blue), KILN_OK);
    pthread_t th;
    bool started = pthread_create(&th, NULL, rename_loop, &r) == 0;
    CHECK(started);
    for (uint32_t i = 0; i < RENAMES; i++)
        CHECK_RESULT(kiln_draw(ctx, 6, 6 * (i % W)), KILN_OK);
    if (started) {
        pthread_join(th, NULL);
        CHECK_EQ_INT(r.done, RENAMES);
        CHECK_EQ_INT(r.failed, 0);
    }
    uint8_t img[W * H * 4];
    if (ru_read(dev, g.rt.tex, 0, img)) {
        uint32_t bad = 0;
        for (uint32_t i = 0; i < W * H; i++) {
            const uint8_t *px = img + 4 * i;
            bool zeros = px[0] == 0 && px[1] == 0 && px[3] == 0;
            bool written = px[0] + px[1] == 255 && px[3] == 255;
            if (px[2] != 0 || !(zeros || written))
                bad++;
        }
        CHECK_EQ_INT(bad, 0);
    }
    kiln_destroy_buffer(dev, r.cb);
    kiln_destroy_buffer(dev, vb);
    rig_close(&g);
}

int main(void)
{
    for (int f = 0; f < 2; f++) {
        sprite_batch(KILN_EXEC_SERIAL, 0, f);
        sprite_batch(KILN_EXEC_ASYNC, 1, f);
        sprite_batch(KILN_EXEC_ASYNC, 2, f);
    }
    draw_while_mapped(KILN_EXEC_SERIAL, 0);
    draw_while_mapped(KILN_EXEC_ASYNC, 1);
    draw_while_mapped(KILN_EXEC_ASYNC, 2);
    finish_while_mapped(KILN_EXEC_SERIAL, 0);
    finish_while_mapped(KILN_EXEC_ASYNC, 1);
    finish_while_mapped(KILN_EXEC_ASYNC, 2);
    renamed_elsewhere();
    batched(KILN_EXEC_SERIAL, 0);
    batched(KILN_EXEC_ASYNC, 1);
    batched(KILN_EXEC_ASYNC, 2);
    textured(KILN_EXEC_SERIAL, 0);
    textured(KILN_EXEC_ASYNC, 1);
    textured(KILN_EXEC_ASYNC, 2);
    run(KILN_EXEC_SERIAL, 0);
    run(KILN_EXEC_ASYNC, 1);
    run(KILN_EXEC_ASYNC, 2);
    return th_exit();
}
