/* A scene's setup runs in chunks of ops on all workers (backend.c,
 * SETUP_CHUNK: 16,384), each chunk counting and filling its own execution
 * contexts, texture sets, segments and jobs, with every sharing rule
 * starting over at its first op. The pixels must not see the cut: one
 * scene of 50,000 ops (four chunks) gives the image the same calls give
 * as 51 scenes of at most 997 ops (a kiln_flush after every 997th op, so
 * each scene is one chunk), bit for bit, on 2 and 1 workers and SERIAL.
 *
 * The ops repeat a pattern of 50, so that the chunks' first ops (16,384,
 * 32,768, 49,152: 34, 18 and 2 into the pattern) fall inside its runs:
 * - one-triangle draws of vertex colors (one state, one vertex buffer:
 *   one execution context, across the cuts at 32,768 and 49,152), but:
 * - op 30: a depth clear (a job of its own; the depth test is off);
 * - ops 31..39 of every tenth pattern: textured draws, one context and
 *   one texture set, across the cut at 16,384;
 * - ops 40..41: draws of their constant buffer's color, rewritten with
 *   WRITE_DISCARD before each: a context per draw;
 * - op 45: an instanced draw (3 instances);
 * - op 46 of every 100th pattern: a draw of all 4,096 triangles (four
 *   segments of 1,024).
 * Blending adds the colors, each draw's at most 1/255 a channel and red
 * 1/255 for every vertex-colored one, so every draw shows in the sums
 * (every color channel checked below 255); alpha is the last draw's
 * (ONE, ZERO), so the
 * order shows too. The trace shows the chunks: one scene, its setup in 8
 * "scene setup chunk" slices (4 counted, 4 filled). Mutation caught: the
 * last op of each chunk but the last left out.
 */
#include "harness.h"
#include "json_read.h"
#include "raster_util.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SIZE 64
#define NTRI 4096
#define OPS 50000u
#define PERIOD 50u
#define FLUSH_EVERY 997u

/* The textured draws' pixel shader: view 0 under sampler 0 at varying 0's
 * z, w (x, y: the small color), the color scaled to at most 1/255, the
 * alpha as sampled. */
static void ps_tex_fn(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 2), KILN_PS_VARYING(a, 0, 3),
                   KILN_PS_COLOR(a, 0, 0));
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] *= 1.0f / 255.0f;
}

/* The constant-color draws' pixel shader: cb0's float4. */
static void ps_cb0(kiln_ps_args *a)
{
    const float *cb = a->cb && a->cb[0] && a->cb_size[0] >= 16 ? (const float *)a->cb[0] : NULL;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = cb ? cb[c] : 0.0f;
}

/* Counts the X slices named `name` in the trace at `path`. */
static uint32_t count_slices(const char *path, const char *name)
{
    size_t err = 0;
    ju_value *doc = ju_parse_file(path, &err);
    CHECK(doc != NULL);
    const ju_value *list = doc ? ju_get(doc, "traceEvents") : NULL;
    uint32_t n = 0;
    for (size_t i = 0; list && list->type == JU_ARRAY && i < list->n; i++) {
        const char *nm = ju_str(list->items[i], "name"), *ph = ju_str(list->items[i], "ph");
        n += nm && ph && !strcmp(nm, name) && !strcmp(ph, "X");
    }
    if (doc)
        ju_free(doc);
    return n;
}

/* The image of the op stream on a device of `threads` workers in `mode`;
 * flush: a kiln_flush after every FLUSH_EVERY ops. The caller frees it. */
static uint8_t *render(kiln_exec_mode mode, uint32_t threads, bool flush, const char *trace)
{
    if (trace)
        remove(trace);
    kiln_device_desc desc = {.exec_mode = mode, .num_threads = threads, .trace_path = trace};
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_tex rt = ru_rt(dev, SIZE, SIZE, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex ds = ru_ds(dev, SIZE, SIZE, KILN_FORMAT_D32_FLOAT);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    kiln_pixel_shader ps_tex, ps_cb;
    kiln_pixel_shader_desc pd = {.fn = ps_tex_fn, .num_varyings = 1, .num_outputs = 1};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps_tex), KILN_OK);
    pd = (kiln_pixel_shader_desc){.fn = ps_cb0, .num_outputs = 1};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps_cb), KILN_OK);
    ru_bind_pipe(ctx, &p);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
    kiln_depth_stencil_state dss = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    kiln_blend_desc bd = {.rt[0] = {1, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD,
                                    KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0}};
    kiln_blend_state bs = ru_bs(dev, &bd);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);

    /* Triangle t: pixel t's (row by row) and its right and lower
     * neighbors' centers; varying 0:
     * red 1/255, green and blue 0 or 1/255, the textured draws' u, v in
     * z, w (as alpha: the last draw's shows). */
    th_rng r = {2026};
    float(*v)[8] = malloc(sizeof(float[8]) * 3 * NTRI);
    CHECK(v != NULL);
    if (!v)
        return NULL;
    for (uint32_t t = 0; t < NTRI; t++) {
        double x = t % SIZE, y = t / SIZE;
        const double at[3][2] = {{x + 0.2, y + 0.2}, {x + 2.2, y + 0.3}, {x + 0.3, y + 2.2}};
        float col[4] = {1.0f / 255.0f, (float)(t & 1) / 255.0f, (float)(t >> 1 & 1) / 255.0f,
                        (float)th_below(&r, 256) / 255.0f};
        for (int k = 0; k < 3; k++) {
            ru_vtx(v[3 * t + k], SIZE, SIZE, at[k][0], at[k][1], 0.5f);
            memcpy(&v[3 * t + k][4], col, sizeof col);
        }
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof(float[8]) * 3 * NTRI);
    free(v);
    uint32_t stride = sizeof(float[8]), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);

    /* A 16 x 16 texture of its own bytes, sampled bilinearly with wrap. */
    uint8_t texels[16 * 16 * 4];
    for (size_t i = 0; i < sizeof texels; i++)
        texels[i] = (uint8_t)th_below(&r, 256);
    kiln_texture2d_desc td = {.width = 16,
                              .height = 16,
                              .mip_levels = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_SHADER_RESOURCE,
                              .usage = KILN_USAGE_IMMUTABLE};
    kiln_subresource_data init = {texels, 16 * 4};
    kiln_texture tex;
    kiln_srv srv;
    kiln_sampler smp;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    kiln_sampler_desc sd = {.min_filter = KILN_FILTER_LINEAR,
                            .mag_filter = KILN_FILTER_LINEAR,
                            .address_u = KILN_ADDRESS_WRAP,
                            .address_v = KILN_ADDRESS_WRAP};
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);
    kiln_buffer_desc cbd = {.size = 16,
                            .usage = KILN_USAGE_DYNAMIC,
                            .bind_flags = KILN_BIND_CONSTANT_BUFFER,
                            .cpu_access = KILN_CPU_ACCESS_WRITE};
    kiln_buffer cb;
    CHECK_RESULT(kiln_create_buffer(dev, &cbd, NULL, &cb), KILN_OK);
    /* bound throughout: with a DYNAMIC buffer bound each draw has a bind
     * record of its own, and a textured run's draws, whose views are the
     * same, count one texture set (kd_bind_same_views), not one each */
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);

    const float black[4] = {0, 0, 0, 1};
    for (uint32_t op = 0; op < OPS; op++) {
        uint32_t k = op % PERIOD, pattern = op / PERIOD, t = op * 2654435761u % NTRI;
        bool textured = pattern % 10 == 7;
        if (op == 0) {
            CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
        } else if (k == 30) {
            CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
        } else if (k >= 31 && k <= 39 && textured) {
            /* the view bound for the run alone: a scene ends at
             * KD_SCENE_MAX_TEXSETS draws whose state or views changed, and
             * every other draw here changes the state */
            if (k == 31) {
                CHECK_RESULT(kiln_ps_set_shader(ctx, ps_tex), KILN_OK);
                CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
            }
            CHECK_RESULT(kiln_draw(ctx, 3, 3 * t), KILN_OK);
            if (k == 39) {
                CHECK_RESULT(kiln_ps_set_shader(ctx, p.ps), KILN_OK);
                CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &(kiln_srv){0}), KILN_OK);
            }
        } else if (k >= 40 && k <= 41) {
            if (k == 40)
                CHECK_RESULT(kiln_ps_set_shader(ctx, ps_cb), KILN_OK);
            kiln_mapped_subresource m;
            CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(cb), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                         KILN_OK);
            float color[4] = {0.0f, (float)(op % 2) / 255.0f, 1.0f / 255.0f,
                              (float)(op % 251) / 255.0f};
            memcpy(m.data, color, sizeof color);
            CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(cb), 0), KILN_OK);
            CHECK_RESULT(kiln_draw(ctx, 3, 3 * t), KILN_OK);
            if (k == 41)
                CHECK_RESULT(kiln_ps_set_shader(ctx, p.ps), KILN_OK);
        } else if (k == 45) {
            CHECK_RESULT(kiln_draw_instanced(ctx, 3, 3, 3 * t, 0), KILN_OK);
        } else if (k == 46 && pattern % 100 == 99) {
            CHECK_RESULT(kiln_draw(ctx, 3 * NTRI, 0), KILN_OK);
        } else {
            CHECK_RESULT(kiln_draw(ctx, 3, 3 * t), KILN_OK);
        }
        if (flush && op % FLUSH_EVERY == FLUSH_EVERY - 1)
            CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    }
    uint8_t *img = ru_read_bytes(dev, &rt);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_sampler(dev, smp);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_pixel_shader(dev, ps_tex);
    kiln_destroy_pixel_shader(dev, ps_cb);
    kiln_destroy_depth_stencil_state(dev, dss);
    kiln_destroy_blend_state(dev, bs);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &ds);
    kiln_device_destroy(dev); /* completes the trace */
    return img;
}

int main(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/kiln-test-chunks-%d.json", (int)getpid());
    uint8_t *want = render(KILN_EXEC_ASYNC, 2, true, NULL);
    CHECK(want != NULL);
    /* every pixel drawn (red counts the vertex-colored draws over it), no
     * color channel saturated */
    uint32_t drawn = 0, hi = 0;
    for (uint32_t i = 0; want && i < SIZE * SIZE; i++) {
        drawn += want[4 * i] != 0;
        for (int c = 0; c < 3; c++)
            hi = want[4 * i + c] > hi ? want[4 * i + c] : hi;
    }
    CHECK(drawn == SIZE * SIZE && hi < 255);
    if (!(drawn == SIZE * SIZE && hi < 255))
        fprintf(stderr, "    %u pixels drawn, a color channel up to %u\n", drawn, hi);
    const struct {
        kiln_exec_mode mode;
        uint32_t threads;
    } runs[] = {{KILN_EXEC_ASYNC, 2}, {KILN_EXEC_ASYNC, 1}, {KILN_EXEC_SERIAL, 1}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        uint8_t *got = render(runs[i].mode, runs[i].threads, false, i == 0 ? path : NULL);
        CHECK(got != NULL);
        int bad = -1;
        for (uint32_t px = 0; got && want && px < SIZE * SIZE && bad < 0; px++)
            if (memcmp(got + 4 * px, want + 4 * px, 4))
                bad = (int)px;
        th_check(bad < 0, "one scene of four chunks draws what scenes of one chunk draw", __FILE__,
                 __LINE__);
        if (bad >= 0)
            fprintf(stderr, "    run %zu, pixel %d: %u %u %u %u, want %u %u %u %u\n", i, bad,
                    got[4 * bad], got[4 * bad + 1], got[4 * bad + 2], got[4 * bad + 3],
                    want[4 * bad], want[4 * bad + 1], want[4 * bad + 2], want[4 * bad + 3]);
        if (i == 0) { /* one scene, cut into four chunks */
            uint32_t scenes = count_slices(path, "scene setup"),
                     chunks = count_slices(path, "scene setup chunk");
            CHECK(scenes == 1 && chunks == 8);
            if (scenes != 1 || chunks != 8)
                fprintf(stderr, "    %u scenes, %u setup chunk slices\n", scenes, chunks);
            remove(path);
        }
        free(got);
    }
    free(want);
    return th_exit();
}
