/*
 * Queries on the soft backend, exact: OCCLUSION, OCCLUSION_PREDICATE and
 * PIPELINE_STATISTICS on scenes whose counts are known in closed form (a
 * full-target quad is W x H samples; a half rejected by the depth test; a
 * pixel shader that discards every other column; an indexed quad; clipped
 * and rejected triangles; instances; queries spanning scenes and
 * overlapping), each count also checked against the pixels the image
 * shows, and every count identical on SERIAL and on ASYNC devices with 1,
 * 2 and 4 workers. TIMESTAMP (ordered, never compared with a duration)
 * and TIMESTAMP_DISJOINT. Predication skips exactly the draws, clears,
 * copies and updates it should, and nothing else; a command that does not
 * name the predicate never waits for it (a test gate holds the predicate's
 * draw: only a hang, caught by a watchdog, could fail that part).
 * Validation: every misuse, one log id each. A capture of queries and
 * predication (built-in effect shaders) replays ASYNC and SERIAL to the
 * live image.
 */
#include "api/test_hooks.h"
#include "capture_util.h"
#include "raster_util.h"

#include <sched.h>
#include <signal.h>
#include <unistd.h>

#define W 130u /* 3 x 2 tiles of 64, the last ones partial */
#define H 70u

typedef struct scene {
    kiln_device *dev;
    kiln_context *ctx;
    ru_tex rt, ds;
    ru_pipe pipe;
    kiln_buffer cb;
    kiln_rasterizer_state rs;
    kiln_depth_stencil_state less, always;
    kiln_pixel_shader discard_ps;
} scene;

/* Writes white where the pixel's column is even; discards odd columns. */
static void ps_discard_odd(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        if ((a->x + i % 4) & 1)
            a->mask &= ~(1u << i);
        for (int c = 0; c < 4; c++)
            KILN_PS_COLOR(a, 0, c)[i] = 1.0f;
    }
}

static void scene_init(scene *s, kiln_exec_mode mode, uint32_t threads)
{
    memset(s, 0, sizeof *s);
    s->dev = th_device(mode, threads);
    s->ctx = kiln_device_immediate_context(s->dev);
    s->rt = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    s->ds = ru_ds(s->dev, W, H, KILN_FORMAT_D32_FLOAT);
    s->pipe = ru_make_pipe(s->dev, 0, RU_PS_CB, 1, 0);
    const float white[4] = {1, 1, 1, 1};
    s->cb = ru_cbuffer(s->dev, white, 4);
    kiln_pixel_shader_desc pd = {
        .fn = ps_discard_odd, .num_outputs = 1, .flags = KILN_PS_MAY_DISCARD};
    CHECK_RESULT(kiln_create_pixel_shader(s->dev, &pd, &s->discard_ps), KILN_OK);
    CHECK_RESULT(kiln_create_depth_stencil_state(
                     s->dev, &(kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS}, &s->less),
                 KILN_OK);
    CHECK_RESULT(
        kiln_create_depth_stencil_state(
            s->dev, &(kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS}, &s->always),
        KILN_OK);
    s->rs = ru_target_2d(s->dev, s->ctx, &s->rt);
    CHECK_RESULT(kiln_om_set_render_targets(s->ctx, 1, &s->rt.rtv, s->ds.dsv), KILN_OK);
    ru_bind_pipe(s->ctx, &s->pipe);
    CHECK_RESULT(kiln_ps_set_constant_buffers(s->ctx, 0, 1, &s->cb), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(s->ctx, s->always, 0), KILN_OK);
}

static void scene_free(scene *s)
{
    kiln_destroy_rasterizer_state(s->dev, s->rs);
    kiln_destroy_depth_stencil_state(s->dev, s->less);
    kiln_destroy_depth_stencil_state(s->dev, s->always);
    kiln_destroy_pixel_shader(s->dev, s->discard_ps);
    kiln_destroy_buffer(s->dev, s->cb);
    ru_free_pipe(s->dev, &s->pipe);
    ru_free_tex(s->dev, &s->rt);
    ru_free_tex(s->dev, &s->ds);
    kiln_device_destroy(s->dev);
}

static void clear(scene *s)
{
    const float black[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(s->ctx, s->rt.rtv, black), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(s->ctx, s->ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
}

/* A rectangle [x0, x1) x [y0, y1) in pixels at depth z: two triangles. */
static void rect(scene *s, double x0, double y0, double x1, double y1, float z)
{
    float v[6 * 4], *p = v;
    p = ru_vtx(p, W, H, x0, y0, z);
    p = ru_vtx(p, W, H, x1, y0, z);
    p = ru_vtx(p, W, H, x0, y1, z);
    p = ru_vtx(p, W, H, x1, y0, z);
    p = ru_vtx(p, W, H, x1, y1, z);
    ru_vtx(p, W, H, x0, y1, z);
    ru_draw(s->dev, s->ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* Lit pixels (red channel set) of the target. */
static uint64_t lit(scene *s)
{
    uint8_t *px = ru_read_bytes(s->dev, &s->rt);
    uint64_t n = 0;
    for (uint32_t i = 0; i < W * H; i++)
        n += px[4 * i] != 0;
    free(px);
    return n;
}

static void get(kiln_context *ctx, kiln_query q, void *data, uint32_t size)
{
    kiln_result r;
    while ((r = kiln_query_get_data(ctx, q, data, size, 0)) == KILN_E_WAS_STILL_DRAWING)
        sched_yield();
    CHECK_RESULT(r, KILN_OK);
}

static uint64_t occlusion(kiln_context *ctx, kiln_query q)
{
    uint64_t n = UINT64_MAX;
    get(ctx, q, &n, sizeof n);
    return n;
}

typedef kiln_query_data_pipeline_statistics stats;

static void check_stats(const stats *g, uint64_t iav, uint64_t iap, uint64_t vs, uint64_t ci,
                        uint64_t cp, uint64_t ps)
{
    CHECK_EQ_INT(g->ia_vertices, iav);
    CHECK_EQ_INT(g->ia_primitives, iap);
    CHECK_EQ_INT(g->vs_invocations, vs);
    CHECK_EQ_INT(g->gs_invocations, 0);
    CHECK_EQ_INT(g->gs_primitives, 0);
    CHECK_EQ_INT(g->c_invocations, ci);
    CHECK_EQ_INT(g->c_primitives, cp);
    CHECK_EQ_INT(g->ps_invocations, ps);
}

/* Everything measured, in one array, to compare across devices. */
#define NVALUES 64
typedef struct values {
    uint64_t v[NVALUES];
    uint32_t n;
} values;

static void put(values *out, uint64_t v)
{
    if (out->n < NVALUES)
        out->v[out->n++] = v;
}

static void put_stats(values *out, const stats *g)
{
    const uint64_t *p = &g->ia_vertices;
    for (int i = 0; i < 8; i++)
        put(out, p[i]);
}

/* ---- the closed-form scenes ---- */

static void counts(kiln_exec_mode mode, uint32_t threads, values *out)
{
    scene s;
    scene_init(&s, mode, threads);
    kiln_query occ, pred, st, occ2;
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION, &occ2), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION_PREDICATE, &pred), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_PIPELINE_STATISTICS, &st), KILN_OK);
    stats g;
    uint32_t any;

    /* 1. The whole target: W x H samples, 2 triangles of 6 vertices. */
    clear(&s);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, pred), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, st), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, pred), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    uint64_t n = occlusion(s.ctx, occ);
    CHECK_EQ_INT(n, W * H);
    CHECK_EQ_INT(lit(&s), W * H);
    put(out, n);
    get(s.ctx, pred, &any, sizeof any);
    CHECK_EQ_INT(any, 1);
    get(s.ctx, st, &g, sizeof g);
    check_stats(&g, 6, 2, 6, 2, 2, W * H);
    put_stats(out, &g);

    /* 2. A right triangle (0,0) (64,0) (0,64): its hypotenuse is a right
     * edge, so the pixels with x + y < 63 are covered: 63 * 64 / 2. */
    clear(&s);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    float tri[3 * 4], *p = tri;
    p = ru_vtx(p, W, H, 0, 0, 0.5f);
    p = ru_vtx(p, W, H, 64, 0, 0.5f);
    ru_vtx(p, W, H, 0, 64, 0.5f);
    ru_draw(s.dev, s.ctx, tri, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    n = occlusion(s.ctx, occ);
    CHECK_EQ_INT(n, 63 * 64 / 2);
    CHECK_EQ_INT(lit(&s), n);
    put(out, n);

    /* 3. Depth: the left half already nearer; a full quad behind it with
     * LESS passes on the right half only, and (early depth: the shader
     * cannot discard) is shaded there only. */
    clear(&s);
    rect(&s, 0, 0, W / 2, H, 0.25f);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(s.ctx, s.less, 0), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, st), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(s.ctx, s.always, 0), KILN_OK);
    n = occlusion(s.ctx, occ);
    CHECK_EQ_INT(n, (W / 2) * H);
    put(out, n);
    get(s.ctx, st, &g, sizeof g);
    check_stats(&g, 6, 2, 6, 2, 2, (W / 2) * H);
    put_stats(out, &g);

    /* 4. Discard: every pixel is shaded, half of them pass; colour writes
     * off change nothing of the counts (and nothing in the image). */
    clear(&s);
    kiln_blend_desc bd = {0};
    bd.rt[0].write_mask = KILN_COLOR_WRITE_NONE;
    kiln_blend_state nowrite = ru_bs(s.dev, &bd);
    CHECK_RESULT(kiln_ps_set_shader(s.ctx, s.discard_ps), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, st), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ2), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(s.ctx, nowrite, NULL), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, occ2), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(s.ctx, (kiln_blend_state){0}, NULL), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(s.ctx, s.pipe.ps), KILN_OK);
    n = occlusion(s.ctx, occ);
    CHECK_EQ_INT(n, (W / 2) * H);
    CHECK_EQ_INT(lit(&s), n);
    put(out, n);
    CHECK_EQ_INT(occlusion(s.ctx, occ2), (W / 2) * H);
    get(s.ctx, st, &g, sizeof g);
    check_stats(&g, 12, 4, 12, 4, 4, 2 * W * H);
    put_stats(out, &g);
    kiln_destroy_blend_state(s.dev, nowrite);

    /* 5. Indexed quad: 6 indices, 4 vertices shaded; 3 instances of a
     * triangle; a triangle cut by the near plane (a quad: 2 triangles out
     * of the clipper) and one wholly in front of it (none). */
    clear(&s);
    float quad[4 * 4];
    p = quad;
    p = ru_vtx(p, W, H, 0, 0, 0.5f);
    p = ru_vtx(p, W, H, 10, 0, 0.5f);
    p = ru_vtx(p, W, H, 0, 10, 0.5f);
    ru_vtx(p, W, H, 10, 10, 0.5f);
    const uint16_t idx[6] = {0, 1, 2, 1, 3, 2};
    kiln_buffer vb = ru_buffer(s.dev, KILN_BIND_VERTEX_BUFFER, quad, sizeof quad);
    kiln_buffer ib = ru_buffer(s.dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_query_begin(s.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(s.ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(s.ctx, ib, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_draw_indexed(s.ctx, 6, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_draw_instanced(s.ctx, 3, 3, 0, 0), KILN_OK); /* the same triangle 3 times */
    float cut[3 * 4];
    p = cut;
    p = ru_vtx(p, W, H, 20, 20, -0.5f);
    p = ru_vtx(p, W, H, 60, 20, 0.5f);
    ru_vtx(p, W, H, 20, 60, 0.5f);
    ru_draw(s.dev, s.ctx, cut, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    cut[2] = cut[6] = cut[10] = -0.5f; /* all three in front of the near plane */
    ru_draw(s.dev, s.ctx, cut, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, st), KILN_OK);
    /* The quad's 100 pixels, the triangle's 9 * 10 / 2 three times over
     * them (depth always passes), and the clipped triangle's part. */
    n = occlusion(s.ctx, occ);
    CHECK(n > 100 + 3 * 45);
    CHECK_EQ_INT(lit(&s), n - 3 * 45);
    put(out, n);
    get(s.ctx, st, &g, sizeof g);
    /* ia: 6 + 9 + 3 + 3 vertices, 2 + 3 + 1 + 1 primitives; vs: 4 + 9 + 3
     * + 3; clipping: 2 + 3 + 1 + 1 in, 2 + 3 + 2 + 0 out; every shaded
     * pixel passes. */
    check_stats(&g, 21, 7, 19, 7, 7, n);
    put_stats(out, &g);
    kiln_destroy_buffer(s.dev, vb);
    kiln_destroy_buffer(s.dev, ib);

    /* 6. Spanning scenes, overlapping queries, begin again from zero:
     * occ counts A + B, occ2 counts B + C (B drawn to another target). */
    clear(&s);
    ru_tex rt2 = ru_rt(s.dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    rect(&s, 0, 0, 10, 10, 0.5f); /* A: 100 */
    CHECK_RESULT(kiln_query_begin(s.ctx, occ2), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(s.ctx, 1, &rt2.rtv, (kiln_dsv){0}), KILN_OK);
    rect(&s, 0, 0, 20, 10, 0.5f); /* B: 200 */
    CHECK_RESULT(kiln_om_set_render_targets(s.ctx, 1, &s.rt.rtv, s.ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    rect(&s, 0, 20, 40, 30, 0.5f); /* C: 400 */
    CHECK_RESULT(kiln_query_end(s.ctx, occ2), KILN_OK);
    CHECK_EQ_INT(occlusion(s.ctx, occ), 300);
    CHECK_EQ_INT(occlusion(s.ctx, occ2), 600);
    CHECK_RESULT(kiln_query_begin(s.ctx, occ), KILN_OK);
    rect(&s, 0, 0, 5, 5, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, occ), KILN_OK);
    CHECK_EQ_INT(occlusion(s.ctx, occ), 25);
    /* Nothing drawn: 0 samples, predicate 0. */
    CHECK_RESULT(kiln_query_begin(s.ctx, pred), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, pred), KILN_OK);
    get(s.ctx, pred, &any, sizeof any);
    CHECK_EQ_INT(any, 0);
    ru_free_tex(s.dev, &rt2);

    kiln_destroy_query(s.dev, occ);
    kiln_destroy_query(s.dev, occ2);
    kiln_destroy_query(s.dev, pred);
    kiln_destroy_query(s.dev, st);
    scene_free(&s);
}

/* ---- timestamps ---- */

static void timestamps(kiln_exec_mode mode, uint32_t threads)
{
    scene s;
    scene_init(&s, mode, threads);
    kiln_query t1, t2, dj;
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_TIMESTAMP, &t1), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_TIMESTAMP, &t2), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_TIMESTAMP_DISJOINT, &dj), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, dj), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, t1), KILN_OK);
    clear(&s);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, t2), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, dj), KILN_OK);
    uint64_t a = 0, b = 0;
    get(s.ctx, t2, &b, sizeof b);
    get(s.ctx, t1, &a, sizeof a);
    CHECK(a != 0);
    CHECK(a <= b); /* stream order, one monotonic clock */
    kiln_query_data_timestamp_disjoint d = {0, 7, 7};
    get(s.ctx, dj, &d, sizeof d);
    CHECK_EQ_INT(d.frequency, 1000000000);
    CHECK_EQ_INT(d.disjoint, 0);
    /* A second end gives a new, later stamp. */
    CHECK_RESULT(kiln_query_end(s.ctx, t1), KILN_OK);
    get(s.ctx, t1, &a, sizeof a);
    CHECK(a >= b);
    kiln_destroy_query(s.dev, t1);
    kiln_destroy_query(s.dev, t2);
    kiln_destroy_query(s.dev, dj);
    scene_free(&s);
}

/* ---- predication ---- */

static uint32_t first_texel(scene *s, kiln_texture t)
{
    uint8_t px[W * H * 4];
    ru_read(s->dev, t, 0, px);
    uint32_t v;
    memcpy(&v, px, 4);
    return v;
}

/* Runs every predicated kind of command under predicate `q` with `value`;
 * checks that all ran (skip == 0) or none did (skip == 1). */
static void predicated_ops(scene *s, kiln_query q, int value, int skip, values *out)
{
    kiln_context *ctx = s->ctx;
    const float red[4] = {1, 0, 0, 1}, black[4] = {0, 0, 0, 0};
    ru_tex a = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex b = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex c = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex d = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex src = ru_rt(s->dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_clear_rtv(ctx, src.rtv, red), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, s->ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    kiln_query counted;
    CHECK_RESULT(kiln_create_query(s->dev, KILN_QUERY_OCCLUSION, &counted), KILN_OK);

    CHECK_RESULT(kiln_set_predication(ctx, q, value), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, counted), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &a.rtv, s->ds.dsv), KILN_OK);
    rect(s, 0, 0, W, H, 0.5f); /* draw */
    CHECK_RESULT(kiln_query_end(ctx, counted), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, b.rtv, red), KILN_OK); /* clear */
    CHECK_RESULT(kiln_clear_dsv(ctx, s->ds.dsv, KILN_CLEAR_DEPTH, 0.0f, 0), KILN_OK);
    CHECK_RESULT(
        kiln_copy_resource(ctx, kiln_texture_resource(c.tex), kiln_texture_resource(src.tex)),
        KILN_OK); /* copies */
    kiln_box box = {0, 0, 0, 1, 1, 1};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, kiln_texture_resource(d.tex), 0, 0, 0, 0,
                                              kiln_texture_resource(src.tex), 0, &box),
                 KILN_OK);
    const uint8_t green[4] = {0, 255, 0, 255};
    kiln_box one = {1, 0, 0, 2, 1, 1};
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(d.tex), 0, &one, green, 4, 0),
                 KILN_OK); /* update */
    /* Not predicated: generate_mips and the query's own counting stay. */
    CHECK_RESULT(kiln_set_predication(ctx, (kiln_query){0}, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &s->rt.rtv, s->ds.dsv), KILN_OK);

    uint32_t drawn = first_texel(s, a.tex), cleared = first_texel(s, b.tex),
             copied = first_texel(s, c.tex);
    uint8_t px[W * H * 4];
    ru_read(s->dev, d.tex, 0, px);
    uint32_t region, updated;
    memcpy(&region, px, 4);
    memcpy(&updated, px + 4, 4);
    uint64_t n = occlusion(ctx, counted);
    /* The depth clear: nearer than anything when it ran. */
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, s->less, 0), KILN_OK);
    kiln_query probe;
    CHECK_RESULT(kiln_create_query(s->dev, KILN_QUERY_OCCLUSION, &probe), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, probe), KILN_OK);
    rect(s, 0, 0, 10, 10, 0.5f);
    CHECK_RESULT(kiln_query_end(ctx, probe), KILN_OK);
    uint64_t behind = occlusion(ctx, probe);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, s->always, 0), KILN_OK);
    if (skip) {
        CHECK_EQ_INT(drawn, 0);
        CHECK_EQ_INT(cleared, 0);
        CHECK_EQ_INT(copied, 0);
        CHECK_EQ_INT(region, 0);
        CHECK_EQ_INT(updated, 0);
        CHECK_EQ_INT(n, 0);
        CHECK_EQ_INT(behind, 100);
    } else {
        CHECK_EQ_INT(drawn, 0xffffffffu);
        CHECK_EQ_INT(cleared, 0xff0000ffu);
        CHECK_EQ_INT(copied, 0xff0000ffu);
        CHECK_EQ_INT(region, 0xff0000ffu);
        CHECK_EQ_INT(updated, 0xff00ff00u);
        CHECK_EQ_INT(n, W * H);
        CHECK_EQ_INT(behind, 0);
    }
    put(out, n);
    put(out, behind);
    (void)black;
    kiln_destroy_query(s->dev, counted);
    kiln_destroy_query(s->dev, probe);
    ru_free_tex(s->dev, &a);
    ru_free_tex(s->dev, &b);
    ru_free_tex(s->dev, &c);
    ru_free_tex(s->dev, &d);
    ru_free_tex(s->dev, &src);
}

static void predication(kiln_exec_mode mode, uint32_t threads, values *out)
{
    scene s;
    scene_init(&s, mode, threads);
    kiln_query hidden, seen;
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION_PREDICATE, &hidden), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION_PREDICATE, &seen), KILN_OK);
    /* hidden: a box behind the depth buffer (0 samples); seen: visible. */
    clear(&s);
    rect(&s, 0, 0, W, H, 0.25f);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(s.ctx, s.less, 0), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, hidden), KILN_OK);
    rect(&s, 10, 10, 20, 20, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, hidden), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, seen), KILN_OK);
    rect(&s, 10, 10, 20, 20, 0.125f);
    CHECK_RESULT(kiln_query_end(s.ctx, seen), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(s.ctx, s.always, 0), KILN_OK);
    /* Not read back first: the predicate is evaluated in stream order. */
    predicated_ops(&s, hidden, 0, 1, out); /* result 0 == 0: skipped */
    predicated_ops(&s, hidden, 1, 0, out); /* 0 != 1: run */
    predicated_ops(&s, seen, 1, 1, out);
    predicated_ops(&s, seen, 0, 0, out);
    kiln_destroy_query(s.dev, hidden);
    kiln_destroy_query(s.dev, seen);
    scene_free(&s);
}

/* ---- only predicated commands wait for the predicate ---- */

static void no_wait(uint32_t threads)
{
    scene s;
    scene_init(&s, KILN_EXEC_ASYNC, threads);
    kiln_context *ctx = s.ctx;
    kiln_query p;
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION_PREDICATE, &p), KILN_OK);
    kiln_buffer_desc bd = {.size = 64};
    kiln_buffer ba, bb, sa, sb;
    CHECK_RESULT(kiln_create_buffer(s.dev, &bd, NULL, &ba), KILN_OK);
    CHECK_RESULT(kiln_create_buffer(s.dev, &bd, NULL, &bb), KILN_OK);
    kiln_buffer_desc sd = {
        .size = 64, .usage = KILN_USAGE_STAGING, .cpu_access = KILN_CPU_ACCESS_READ};
    CHECK_RESULT(kiln_create_buffer(s.dev, &sd, NULL, &sa), KILN_OK);
    CHECK_RESULT(kiln_create_buffer(s.dev, &sd, NULL, &sb), KILN_OK);
    ru_tex other = ru_rt(s.dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);

    /* The gate holds the target the predicate's draw writes: the draw,
     * and so the predicate's end, cannot run until it opens. */
    kiln_test_gate *gate;
    CHECK_RESULT(kiln_test_gate_create(s.dev, &gate), KILN_OK);
    kiln_resource held = kiln_texture_resource(s.rt.tex);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, gate, &held, &w, 1), KILN_OK);
    kiln_test_gate_wait_entered(gate, 1);
    CHECK_RESULT(kiln_query_begin(ctx, p), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(ctx, p), KILN_OK);
    CHECK_RESULT(kiln_query_get_data(ctx, p, NULL, 0, KILN_GET_DATA_DO_NOT_FLUSH),
                 KILN_E_WAS_STILL_DRAWING);
    CHECK_RESULT(kiln_query_get_data(ctx, p, NULL, 0, 0), KILN_E_WAS_STILL_DRAWING);

    uint8_t ones[64];
    memset(ones, 1, sizeof ones);
    CHECK_RESULT(kiln_set_predication(ctx, p, 1), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(ba), 0, NULL, ones, 0, 0),
                 KILN_OK);
    /* Not predicated (maps, mips, other commands once it is off), or
     * predicated by nothing: none of these may wait for the gate. */
    CHECK_RESULT(kiln_set_predication(ctx, (kiln_query){0}, 0), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(bb), 0, NULL, ones, 0, 0),
                 KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_buffer_resource(sb), kiln_buffer_resource(bb)),
                 KILN_OK);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(sb), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_EQ_INT(((const uint8_t *)m.data)[63], 1);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(sb), 0), KILN_OK);
    /* A scene to another target, with no query: not held either. */
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &other.rtv, (kiln_dsv){0}), KILN_OK);
    rect(&s, 0, 0, 4, 4, 0.5f);
    uint8_t *px = ru_read_bytes(s.dev, &other);
    CHECK_EQ_INT(px[0], 255);
    free(px);
    /* The predicated update is still behind the predicate's end. */
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_buffer_resource(sa), kiln_buffer_resource(ba)),
                 KILN_OK);
    CHECK_RESULT(
        kiln_map(ctx, kiln_buffer_resource(sa), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m),
        KILN_E_WAS_STILL_DRAWING);
    CHECK_EQ_INT(kiln_test_gate_entered(gate), 1);
    kiln_test_gate_open(gate);
    /* Samples passed (1) == value (1): the update was skipped. */
    CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(sa), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_EQ_INT(((const uint8_t *)m.data)[63], 0);
    CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(sa), 0), KILN_OK);
    uint32_t any = 0;
    get(ctx, p, &any, sizeof any);
    CHECK_EQ_INT(any, 1);
    kiln_test_gate_destroy(gate);
    ru_free_tex(s.dev, &other);
    kiln_destroy_buffer(s.dev, ba);
    kiln_destroy_buffer(s.dev, bb);
    kiln_destroy_buffer(s.dev, sa);
    kiln_destroy_buffer(s.dev, sb);
    kiln_destroy_query(s.dev, p);
    scene_free(&s);
}

/* ---- misuse: one code and one log id each ---- */

static void validation(void)
{
    scene s;
    scene_init(&s, KILN_EXEC_ASYNC, 2);
    kiln_device *dev = s.dev;
    kiln_context *ctx = s.ctx, *ctx2;
    CHECK_RESULT(kiln_context_create(dev, &ctx2), KILN_OK);
    kiln_query q = {0}, occ, pred, ts, ev, dj;
    /* The SO types: test_so. */
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_TYPE_COUNT, &q), KILN_E_INVALID_ARG,
                KILN_LOG_QUERY_TYPE);
    CHECK_FAILS(kiln_create_query(dev, (kiln_query_type)-1, &q), KILN_E_INVALID_ARG,
                KILN_LOG_QUERY_TYPE);
    CHECK_RESULT(kiln_create_query(NULL, KILN_QUERY_OCCLUSION, &q),
                 KILN_E_INVALID_ARG); /* logs to stderr */
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_OCCLUSION, NULL), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION_PREDICATE, &pred), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_TIMESTAMP, &ts), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_EVENT, &ev), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_TIMESTAMP_DISJOINT, &dj), KILN_OK);

    uint64_t u64 = 0;
    uint32_t u32 = 0;
    /* Begin and end. */
    CHECK_FAILS(kiln_query_begin(ctx, ts), KILN_E_INVALID_CALL, KILN_LOG_QUERY_TYPE);
    CHECK_RESULT(kiln_query_begin(NULL, occ), KILN_E_INVALID_ARG);
    CHECK_FAILS(kiln_query_end(ctx, occ), KILN_E_INVALID_CALL, KILN_LOG_QUERY_NOT_ACTIVE);
    CHECK_FAILS(kiln_query_end(ctx, dj), KILN_E_INVALID_CALL, KILN_LOG_QUERY_NOT_ACTIVE);
    CHECK_FAILS(kiln_query_get_data(ctx, occ, &u64, sizeof u64, 0), KILN_E_INVALID_CALL,
                KILN_LOG_QUERY_NOT_ENDED);
    CHECK_FAILS(kiln_query_get_data(ctx, ts, &u64, sizeof u64, 0), KILN_E_INVALID_CALL,
                KILN_LOG_QUERY_NOT_ENDED);
    CHECK_RESULT(kiln_query_begin(ctx, occ), KILN_OK);
    CHECK_FAILS(kiln_query_begin(ctx, occ), KILN_E_INVALID_CALL, KILN_LOG_QUERY_ACTIVE);
    CHECK_FAILS(kiln_query_begin(ctx2, occ), KILN_E_INVALID_CALL, KILN_LOG_QUERY_ACTIVE);
    CHECK_FAILS(kiln_query_end(ctx2, occ), KILN_E_INVALID_CALL, KILN_LOG_QUERY_NOT_ACTIVE);
    CHECK_FAILS(kiln_query_get_data(ctx, occ, &u64, sizeof u64, 0), KILN_E_INVALID_CALL,
                KILN_LOG_QUERY_NOT_ENDED);
    CHECK_RESULT(kiln_query_end(ctx, occ), KILN_OK);
    get(ctx, occ, &u64, sizeof u64);
    CHECK_EQ_INT(u64, 0);
    CHECK_RESULT(kiln_query_begin(ctx, occ), KILN_OK); /* begun again: no result until its end */
    CHECK_FAILS(kiln_query_get_data(ctx, occ, &u64, sizeof u64, 0), KILN_E_INVALID_CALL,
                KILN_LOG_QUERY_NOT_ENDED);
    CHECK_RESULT(kiln_query_end(ctx, occ), KILN_OK);

    /* Data sizes and flags. */
    CHECK_FAILS(kiln_query_get_data(ctx, occ, &u32, sizeof u32, 0), KILN_E_INVALID_ARG,
                KILN_LOG_DATA_SIZE);
    CHECK_FAILS(kiln_query_get_data(ctx, occ, NULL, 8, 0), KILN_E_INVALID_ARG, KILN_LOG_DATA_SIZE);
    CHECK_FAILS(kiln_query_get_data(ctx, occ, &u64, sizeof u64, 2), KILN_E_INVALID_ARG,
                KILN_LOG_DESC_INVALID_ENUM);
    stats g;
    kiln_query st;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_PIPELINE_STATISTICS, &st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_end(ctx, st), KILN_OK);
    CHECK_FAILS(kiln_query_get_data(ctx, st, &g, sizeof g - 8, 0), KILN_E_INVALID_ARG,
                KILN_LOG_DATA_SIZE);
    get(ctx, st, &g, sizeof g);
    get(ctx, st, NULL, 0);
    CHECK_RESULT(kiln_query_begin(ctx, dj), KILN_OK);
    CHECK_RESULT(kiln_query_end(ctx, dj), KILN_OK);
    CHECK_FAILS(kiln_query_get_data(ctx, dj, &u64, sizeof u64, 0), KILN_E_INVALID_ARG,
                KILN_LOG_DATA_SIZE);

    /* Predication. */
    CHECK_FAILS(kiln_set_predication(ctx, occ, 0), KILN_E_INVALID_ARG, KILN_LOG_PREDICATE_TYPE);
    CHECK_FAILS(kiln_set_predication(ctx, ev, 0), KILN_E_INVALID_ARG, KILN_LOG_PREDICATE_TYPE);
    CHECK_FAILS(kiln_set_predication(ctx, pred, 0), KILN_E_INVALID_CALL,
                KILN_LOG_PREDICATE_NOT_ISSUED);
    CHECK_RESULT(kiln_query_begin(ctx, pred), KILN_OK);
    CHECK_FAILS(kiln_set_predication(ctx, pred, 0), KILN_E_INVALID_CALL,
                KILN_LOG_PREDICATE_NOT_ISSUED);
    CHECK_RESULT(kiln_query_end(ctx, pred), KILN_OK);
    CHECK_RESULT(kiln_set_predication(ctx, pred, 1), KILN_OK);
    CHECK_FAILS(kiln_query_begin(ctx, pred), KILN_E_INVALID_CALL, KILN_LOG_QUERY_IS_PREDICATE);
    CHECK_FAILS(kiln_query_begin(ctx2, pred), KILN_E_INVALID_CALL, KILN_LOG_QUERY_IS_PREDICATE);
    CHECK_FAILS(kiln_query_end(ctx, pred), KILN_E_INVALID_CALL, KILN_LOG_QUERY_IS_PREDICATE);
    get(ctx, pred, &u32, sizeof u32); /* reading it is fine */
    CHECK_RESULT(kiln_set_predication(NULL, pred, 1), KILN_E_INVALID_ARG);
    CHECK_FAILS(kiln_set_predication(ctx, (kiln_query){12345}, 1), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_RESULT(kiln_set_predication(ctx, (kiln_query){0}, 1), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, pred), KILN_OK); /* free again */
    CHECK_RESULT(kiln_query_end(ctx, pred), KILN_OK);

    /* A query destroyed while a context predicates with it stays usable
     * there; its handle is gone. */
    CHECK_RESULT(kiln_set_predication(ctx, pred, 0), KILN_OK);
    CHECK_RESULT(kiln_destroy_query(dev, pred), KILN_OK);
    CHECK_FAILS(kiln_set_predication(ctx, pred, 0), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_query_get_data(ctx, pred, &u32, sizeof u32, 0), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    clear(&s);
    CHECK_RESULT(kiln_set_predication(ctx, (kiln_query){0}, 0), KILN_OK);

    /* At most KILN_MAX_ACTIVE_QUERIES active on one context. */
    kiln_query many[KILN_MAX_ACTIVE_QUERIES + 1];
    for (int i = 0; i <= KILN_MAX_ACTIVE_QUERIES; i++)
        CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &many[i]), KILN_OK);
    for (int i = 0; i < KILN_MAX_ACTIVE_QUERIES; i++)
        CHECK_RESULT(kiln_query_begin(ctx, many[i]), KILN_OK);
    CHECK_FAILS(kiln_query_begin(ctx, many[KILN_MAX_ACTIVE_QUERIES]), KILN_E_UNSUPPORTED,
                KILN_LOG_QUERY_TOO_MANY_ACTIVE);
    CHECK_RESULT(kiln_query_begin(ctx2, many[KILN_MAX_ACTIVE_QUERIES]),
                 KILN_OK); /* another context */
    rect(&s, 0, 0, 8, 8, 0.5f);
    for (int i = 0; i < KILN_MAX_ACTIVE_QUERIES; i++) {
        CHECK_RESULT(kiln_query_end(ctx, many[i]), KILN_OK);
        CHECK_EQ_INT(occlusion(ctx, many[i]), 64);
    }
    /* Destroyed while active, and a context destroyed with one active. */
    CHECK_RESULT(kiln_query_begin(ctx, many[0]), KILN_OK);
    CHECK_RESULT(kiln_destroy_query(dev, many[0]), KILN_OK);
    rect(&s, 0, 0, 8, 8, 0.5f);
    CHECK_RESULT(kiln_context_destroy(ctx2), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, many[KILN_MAX_ACTIVE_QUERIES]),
                 KILN_OK); /* no longer active */
    CHECK_RESULT(kiln_query_end(ctx, many[KILN_MAX_ACTIVE_QUERIES]), KILN_OK);
    for (int i = 1; i <= KILN_MAX_ACTIVE_QUERIES; i++)
        kiln_destroy_query(dev, many[i]);

#if KILN_HAVE_GL
    kiln_device *gl = th_osmesa_device();
    if (gl) {
        CHECK_FAILS(kiln_create_query(gl, KILN_QUERY_OCCLUSION, &q), KILN_E_UNSUPPORTED,
                    KILN_LOG_BACKEND_FEATURE);
        CHECK_FAILS(kiln_create_query(gl, KILN_QUERY_OCCLUSION_PREDICATE, &q), KILN_E_UNSUPPORTED,
                    KILN_LOG_BACKEND_FEATURE);
        CHECK_FAILS(kiln_create_query(gl, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_E_UNSUPPORTED,
                    KILN_LOG_BACKEND_FEATURE);
        CHECK_RESULT(kiln_create_query(gl, KILN_QUERY_TIMESTAMP, &q), KILN_OK);
        kiln_context *gctx = kiln_device_immediate_context(gl);
        CHECK_RESULT(kiln_query_end(gctx, q), KILN_OK);
        get(gctx, q, &u64, sizeof u64);
        CHECK(u64 != 0);
        CHECK_RESULT(kiln_set_predication(gctx, (kiln_query){0}, 0), KILN_OK);
        kiln_device_destroy(gl);
    }
#endif
    kiln_destroy_query(dev, occ);
    kiln_destroy_query(dev, ts);
    kiln_destroy_query(dev, ev);
    kiln_destroy_query(dev, dj);
    kiln_destroy_query(dev, st);
    scene_free(&s);
}

/* ---- capture and replay ---- */

/* A quad of the built-in VERTEX_COLOR effect: position, color. */
static void vc_rect(kiln_device *dev, kiln_context *ctx, double x0, double y0, double x1, double y1,
                    float z, const float color[4])
{
    float v[6 * 8], *p = v;
    const double xs[6] = {x0, x1, x0, x1, x1, x0}, ys[6] = {y0, y0, y1, y0, y1, y1};
    for (int i = 0; i < 6; i++) {
        p = ru_vtx(p, W, H, xs[i], ys[i], z);
        memcpy(p, color, 16);
        p += 4;
    }
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
}

static void capture_live(uint8_t *pixels, uint64_t *samples)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    CHECK_RESULT(kiln_capture_begin(dev, "queries.kcap"), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    kiln_vertex_shader_desc vd;
    kiln_pixel_shader_desc pd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vd, &pd), KILN_OK);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    const float ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    kiln_buffer cb = ru_cbuffer(dev, ident, 16);
    kiln_depth_stencil_state less;
    CHECK_RESULT(kiln_create_depth_stencil_state(dev, &(kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS},
                                                 &less),
                 KILN_OK);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    const float black[4] = {0, 0, 0, 1}, red[4] = {1, 0, 0, 1}, green[4] = {0, 1, 0, 1},
                blue[4] = {0, 0, 1, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);

    kiln_query hidden, seen, occ;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION_PREDICATE, &hidden), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION_PREDICATE, &seen), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    vc_rect(dev, ctx, 0, 0, 64, 64, 0.25f, red); /* an occluder */
    CHECK_RESULT(kiln_query_begin(ctx, hidden), KILN_OK);
    vc_rect(dev, ctx, 8, 8, 32, 32, 0.5f, green); /* behind it */
    CHECK_RESULT(kiln_query_end(ctx, hidden), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, seen), KILN_OK);
    vc_rect(dev, ctx, 80, 8, 100, 32, 0.5f, green); /* beside it */
    CHECK_RESULT(kiln_query_end(ctx, seen), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_set_predication(ctx, hidden, 0), KILN_OK);
    vc_rect(dev, ctx, 0, 40, W, H, 0.125f, blue); /* skipped */
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 0.0f, 0), KILN_OK); /* skipped */
    CHECK_RESULT(kiln_set_predication(ctx, seen, 0), KILN_OK);
    vc_rect(dev, ctx, 100, 40, W, H, 0.125f, blue); /* drawn: 30 x 30 */
    CHECK_RESULT(kiln_set_predication(ctx, (kiln_query){0}, 0), KILN_OK);
    CHECK_RESULT(kiln_query_end(ctx, occ), KILN_OK);
    get(ctx, occ, samples, sizeof *samples);
    CHECK(ru_read(dev, rt.tex, 0, pixels));

    kiln_destroy_query(dev, hidden);
    kiln_destroy_query(dev, seen);
    kiln_destroy_query(dev, occ);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_depth_stencil_state(dev, less);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    ru_free_tex(dev, &ds);
    ru_free_tex(dev, &rt);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);
}

/* A rectangle with texture coordinates (x / W * su + ou, y / H * sv + ov). */
static void tex_rect(kiln_device *dev, kiln_context *ctx, double x0, double y0, double x1, double y1,
                     const float s[4])
{
    float v[6 * 8], *p = v;
    const double xs[6] = {x0, x1, x0, x1, x1, x0}, ys[6] = {y0, y0, y1, y0, y1, y1};
    for (int i = 0; i < 6; i++) {
        p = ru_vtx(p, W, H, xs[i], ys[i], 0.5f);
        p[0] = (float)(xs[i] / W) * s[0] + s[2];
        p[1] = (float)(ys[i] / H) * s[1] + s[3];
        p[2] = p[3] = 0;
        p += 4;
    }
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* A counted scene takes the general pixel path instead of the specialised
 * block kernels (the TEXTURE effect, no depth): the image must not change,
 * and the pixels must be counted. */
static void counted_same_image(void)
{
    uint8_t img[2][W * H * 4];
    for (int counted = 0; counted < 2; counted++) {
        kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
        kiln_context *ctx = kiln_device_immediate_context(dev);
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
        uint8_t texels[16 * 16 * 4];
        for (int i = 0; i < 16 * 16 * 4; i++)
            texels[i] = (uint8_t)(i * 37 + (i >> 6) * 11);
        kiln_texture2d_desc td = {16, 16, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT,
                                  KILN_BIND_SHADER_RESOURCE, 0, 0};
        kiln_texture tex;
        kiln_srv srv;
        CHECK_RESULT(kiln_create_texture2d(dev, &td, &(kiln_subresource_data){texels, 64}, &tex), KILN_OK);
        CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
        kiln_vertex_shader_desc vd;
        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get(KILN_EFFECT_TEXTURE, &vd, &pd), KILN_OK);
        kiln_vertex_shader vs;
        kiln_pixel_shader ps;
        CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
        kiln_input_layout_desc ld = {0};
        ld.num_elements = 2;
        ld.elements[0] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0};
        ld.elements[1] = (kiln_input_element){KILN_FORMAT_R32G32_FLOAT, 0, 16, 0, 0};
        kiln_input_layout il;
        CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
        const float ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        kiln_buffer cb = ru_cbuffer(dev, ident, 16);
        kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
        CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
        CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
        CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
        const float black[4] = {0, 0, 0, 1};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
        kiln_query q;
        CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
        if (counted)
            CHECK_RESULT(kiln_query_begin(ctx, q), KILN_OK);
        /* The full target (uv 0..2 over it), then rectangles over it. */
        const float full[4] = {2, 2, 0, 0};
        tex_rect(dev, ctx, 0, 0, W, H, full);
        for (int i = 0; i < 6; i++) {
            const float uv[4] = {1.0f + 0.7f * (float)i, 3.0f - 0.4f * (float)i, 0.1f * (float)i, 0.05f};
            tex_rect(dev, ctx, 3.5 + 9 * i, 2.25 + 4 * i, 40.75 + 7 * i, 30.5 + 3 * i, uv);
        }
        if (counted) {
            CHECK_RESULT(kiln_query_end(ctx, q), KILN_OK);
            stats g;
            get(ctx, q, &g, sizeof g);
            CHECK_EQ_INT(g.ia_vertices, 42);
            CHECK(g.ps_invocations > W * H); /* the block kernels would count nothing */
        }
        CHECK(ru_read(dev, rt.tex, 0, img[counted]));
        kiln_destroy_query(dev, q);
        kiln_destroy_rasterizer_state(dev, rs);
        kiln_destroy_buffer(dev, cb);
        kiln_destroy_input_layout(dev, il);
        kiln_destroy_vertex_shader(dev, vs);
        kiln_destroy_pixel_shader(dev, ps);
        kiln_destroy_srv(dev, srv);
        kiln_destroy_texture(dev, tex);
        ru_free_tex(dev, &rt);
        kiln_device_destroy(dev);
    }
    CHECK(memcmp(img[0], img[1], sizeof img[0]) == 0);
}

static void capture_replay(void)
{
    static uint8_t live[W * H * 4];
    uint64_t samples = 0;
    capture_live(live, &samples);
    CHECK_EQ_INT(samples, 30 * 30);
    size_t len;
    uint8_t *bytes = cu_read("queries.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    for (int m = 0; m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3, NULL, &img, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        if (rep.mismatches)
            fprintf(stderr, "    %s\n", rep.first_mismatch);
        const cu_image *t = cu_target(&img, 0);
        CHECK(t && t->width == W && memcmp(t->pixels, live, sizeof live) == 0);
        cu_free(&img);
    }
    free(bytes);
}

/* A query ended on one context and read on another, with no later call on
 * the first: the end must not wait in the first context's batch (it would
 * never run, and get_data on the second would say WAS_STILL_DRAWING
 * forever; the watchdog catches that). Likewise a predicate ended on one
 * context and used on another sees the end in call order. */
static void other_context(uint32_t threads)
{
    scene s;
    scene_init(&s, KILN_EXEC_ASYNC, threads);
    kiln_context *ctx2 = NULL;
    CHECK_RESULT(kiln_context_create(s.dev, &ctx2), KILN_OK);
    kiln_query q = {0}, pred = {0};
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION, &q), KILN_OK);
    CHECK_RESULT(kiln_create_query(s.dev, KILN_QUERY_OCCLUSION_PREDICATE, &pred), KILN_OK);
    clear(&s);
    CHECK_RESULT(kiln_query_begin(s.ctx, q), KILN_OK);
    CHECK_RESULT(kiln_query_begin(s.ctx, pred), KILN_OK);
    rect(&s, 0, 0, W, H, 0.5f);
    CHECK_RESULT(kiln_query_end(s.ctx, pred), KILN_OK);
    CHECK_RESULT(kiln_query_end(s.ctx, q), KILN_OK);
    uint64_t n = 0;
    get(ctx2, q, &n, sizeof n);
    CHECK_EQ_INT(n, (uint64_t)W * H);
    uint32_t passed = 0;
    get(ctx2, pred, &passed, sizeof passed);
    CHECK_EQ_INT(passed, 1);
    CHECK_RESULT(kiln_destroy_query(s.dev, q), KILN_OK);
    CHECK_RESULT(kiln_destroy_query(s.dev, pred), KILN_OK);
    CHECK_RESULT(kiln_context_destroy(ctx2), KILN_OK);
    scene_free(&s);
}

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: a command waited for a predicate it does not name (hang)\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    _exit(1);
}

int main(void)
{
    th_logs.quiet = 1;
    static const struct {
        kiln_exec_mode mode;
        uint32_t threads;
        const char *name;
    } cfg[] = {{KILN_EXEC_SERIAL, 0, "SERIAL"},
               {KILN_EXEC_ASYNC, 1, "ASYNC 1"},
               {KILN_EXEC_ASYNC, 2, "ASYNC 2"},
               {KILN_EXEC_ASYNC, 4, "ASYNC 4"}};
    values first = {{0}, 0};
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        fprintf(stderr, "-- %s\n", cfg[i].name);
        values v = {{0}, 0};
        counts(cfg[i].mode, cfg[i].threads, &v);
        predication(cfg[i].mode, cfg[i].threads, &v);
        timestamps(cfg[i].mode, cfg[i].threads);
        if (i == 0)
            first = v;
        CHECK_EQ_INT(v.n, first.n);
        CHECK(!memcmp(v.v, first.v, sizeof v.v)); /* identical for every device */
    }
    fprintf(stderr, "-- no wait\n");
    signal(SIGALRM, watchdog);
    alarm(120); /* a guard against a hang only; nothing is timed */
    no_wait(1);
    no_wait(2);
    fprintf(stderr, "-- another context\n");
    other_context(1);
    other_context(2);
    alarm(0);
    fprintf(stderr, "-- validation\n");
    validation();
    fprintf(stderr, "-- capture\n");
    capture_replay();
    counted_same_image();
    return th_exit();
}
