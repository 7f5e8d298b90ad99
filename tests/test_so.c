/*
 * Stream output on the soft backend, byte for byte against the bytes the
 * CPU computes from D3D10's rules: a vertex-shader pass-through (strips
 * become lists, odd triangles keep their winding, an indexed strip's cut
 * restarts it), a geometry shader with
 * strips, cuts and amplification over several geometry jobs into two
 * buffers, offsets and append, overflow dropping whole primitives,
 * draw_auto drawing exactly what was written, SO_STATISTICS and
 * SO_OVERFLOW_PREDICATE in closed form, predication on overflow, a draw
 * that both streams out and rasterizes, a draw with rasterization off.
 * Dependencies (test gates): a command reading the buffer waits for the
 * draw that streams into it; the targets of a draw with rasterization off
 * and unrelated resources do not.
 * Every case runs SERIAL and ASYNC with 1 and 3 workers (the same bytes).
 * Misuse: one log id each; the osmesa backend refuses. A capture of an
 * SO scene replays ASYNC and SERIAL to the live image.
 */
#include "api/test_hooks.h"
#include "capture_util.h"
#include "raster_util.h"

#define SENTINEL 0xABu

typedef struct env {
    kiln_device *dev;
    kiln_context *ctx;
    ru_pipe pipe;  /* position + 1 varying; PS = varying 0 */
} env;

static void env_init(env *e, kiln_exec_mode mode, uint32_t threads)
{
    memset(e, 0, sizeof *e);
    e->dev = th_device(mode, threads);
    e->ctx = kiln_device_immediate_context(e->dev);
    e->pipe = ru_make_pipe(e->dev, 1, RU_PS_VARY, 1, 0);
    CHECK_RESULT(kiln_vs_set_shader(e->ctx, e->pipe.vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(e->ctx, e->pipe.il), KILN_OK);
}

static void env_free(env *e)
{
    ru_free_pipe(e->dev, &e->pipe);
    kiln_device_destroy(e->dev);
}

/* Vertex i of the inputs: position (i, i + 0.25, i + 0.5, 1), varying 0
 * (100 + i, 200 + i, 300 + i, 400 + i). */
static void vertex(uint32_t i, float out[8])
{
    out[0] = (float)i;
    out[1] = (float)i + 0.25f;
    out[2] = (float)i + 0.5f;
    out[3] = 1.0f;
    for (int c = 0; c < 4; c++)
        out[4 + c] = 100.0f * (float)(c + 1) + (float)i;
}

static kiln_buffer vertex_buffer(env *e, uint32_t n)
{
    float *v = malloc(sizeof(float) * 8 * n);
    for (uint32_t i = 0; i < n; i++)
        vertex(i, v + 8 * i);
    kiln_buffer b = ru_buffer(e->dev, KILN_BIND_VERTEX_BUFFER, v, 32 * n);
    free(v);
    return b;
}

static void bind_vb(env *e, kiln_buffer vb, uint32_t stride)
{
    uint32_t off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e->ctx, 0, 1, &vb, &stride, &off), KILN_OK);
}

/* A STREAM_OUTPUT buffer filled with SENTINEL bytes. */
static kiln_buffer so_buffer(env *e, uint32_t size, uint32_t extra_bind)
{
    uint8_t *init = malloc(size);
    memset(init, SENTINEL, size);
    kiln_buffer b = ru_buffer(e->dev, KILN_BIND_STREAM_OUTPUT | extra_bind, init, size);
    free(init);
    return b;
}

/* The buffer's bytes, through a STAGING copy (DEFAULT buffers are not
 * mapped): the copy reads what the draws wrote, so it waits for them. */
static uint8_t *read_buffer(env *e, kiln_buffer b, uint32_t size)
{
    kiln_buffer_desc d = {size, KILN_USAGE_STAGING, 0, 0};
    kiln_buffer st = {0};
    CHECK_RESULT(kiln_create_buffer(e->dev, &d, NULL, &st), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(e->ctx, kiln_buffer_resource(st), kiln_buffer_resource(b)), KILN_OK);
    kiln_mapped_subresource m = {0};
    uint8_t *out = malloc(size);
    memset(out, 0, size);
    CHECK_RESULT(kiln_map(e->ctx, kiln_buffer_resource(st), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    if (m.data)
        memcpy(out, m.data, size);
    kiln_unmap(e->ctx, kiln_buffer_resource(st), 0);
    kiln_destroy_buffer(e->dev, st);
    return out;
}

/* Expected bytes: a sentinel-filled image of a buffer, written float by float. */
typedef struct expect {
    uint8_t *b;
    uint32_t size, pos;
} expect;

static void expect_init(expect *x, uint32_t size)
{
    x->b = malloc(size);
    memset(x->b, SENTINEL, size);
    x->size = size;
    x->pos = 0;
}

static void expect_f(expect *x, float f)
{
    if (x->pos + 4 <= x->size)
        memcpy(x->b + x->pos, &f, 4);
    x->pos += 4;
}

static void check_bytes(env *e, kiln_buffer b, const expect *x, const char *what)
{
    uint8_t *got = read_buffer(e, b, x->size);
    int same = memcmp(got, x->b, x->size) == 0;
    th_check(same, what, __FILE__, __LINE__);
    if (!same)
        for (uint32_t i = 0; i < x->size; i++)
            if (got[i] != x->b[i]) {
                fprintf(stderr, "    first difference at byte %u: got 0x%02x, expected 0x%02x\n", i, got[i],
                        x->b[i]);
                break;
            }
    free(got);
}

/* A query's data, waiting for it (get_data flushes and never blocks). */
static kiln_result get_data(kiln_context *ctx, kiln_query q, void *data, uint32_t size)
{
    kiln_result r;
    while ((r = kiln_query_get_data(ctx, q, data, size, 0)) == KILN_E_WAS_STILL_DRAWING)
        kiln_finish(ctx);
    return r;
}

static kiln_geometry_shader so_shader(kiln_device *dev, const kiln_geometry_shader_desc *gs,
                                      const kiln_so_element *el, uint32_t n, uint32_t stride)
{
    kiln_so_desc so = {el, n, stride};
    kiln_geometry_shader out = {0};
    CHECK_RESULT(kiln_create_geometry_shader_with_so(dev, gs, &so, &out), KILN_OK);
    return out;
}

static void so_targets(env *e, uint32_t n, const kiln_buffer *b, const uint32_t *off)
{
    CHECK_RESULT(kiln_so_set_targets(e->ctx, n, b, off), KILN_OK);
}

/* ---- a pass-through of the vertex shader: strips become lists ---- */

static void vs_pass_through(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    /* position xyzw, then varying 0's y and z: 24 bytes a vertex. */
    const kiln_so_element el[] = {{0, 0, 4, 0}, {1, 1, 2, 0}};
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 2, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    kiln_buffer vb = vertex_buffer(&e, 7), so = so_buffer(&e, 512, 0);
    bind_vb(&e, vb, 32);
    so_targets(&e, 1, &so, NULL);
    /* No pixel shader, no target: rasterization off. */
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_TRIANGLE_STRIP), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 5, 1), KILN_OK); /* vertices 1..5: 3 triangles */
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_LINE_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 4, 3), KILN_OK); /* appends 2 lines: 3-4, 5-6 */
    expect x;
    expect_init(&x, 512);
    /* A strip's triangle j is (j, j + 1, j + 2), odd ones (j + 1, j, j + 2). */
    uint32_t tri[3][3] = {{1, 2, 3}, {3, 2, 4}, {3, 4, 5}};
    uint32_t line[4] = {3, 4, 5, 6};
    for (int p = 0; p < 9 + 4; p++) {
        uint32_t i = p < 9 ? tri[p / 3][p % 3] : line[p - 9];
        float v[8];
        vertex(i, v);
        for (int c = 0; c < 4; c++)
            expect_f(&x, v[c]);
        expect_f(&x, v[5]);
        expect_f(&x, v[6]);
    }
    check_bytes(&e, so, &x, "pass-through strip and lines, byte for byte");
    free(x.b);

    /* An indexed strip with a cut: each strip's winding counts from its
     * start, the primitives touching the cut are not streamed. */
    const uint16_t idx[8] = {0, 1, 2, 3, 0xffff, 4, 5, 6};
    kiln_buffer ib = ru_buffer(e.dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
    CHECK_RESULT(kiln_ia_set_index_buffer(e.ctx, ib, KILN_INDEX_UINT16, 0), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_TRIANGLE_STRIP), KILN_OK);
    uint32_t zero = 0;
    so_targets(&e, 1, &so, &zero);
    CHECK_RESULT(kiln_draw_indexed(e.ctx, 8, 0, 0), KILN_OK);
    expect_init(&x, 512);
    const uint32_t cut[9] = {0, 1, 2, 2, 1, 3, 4, 5, 6};
    for (int p = 0; p < 9; p++) {
        float v[8];
        vertex(cut[p], v);
        for (int c = 0; c < 4; c++)
            expect_f(&x, v[c]);
        expect_f(&x, v[5]);
        expect_f(&x, v[6]);
    }
    /* Offset 0 again: the lines written before stay after these. */
    for (int p = 0; p < 4; p++) {
        float v[8];
        vertex(line[p], v);
        for (int c = 0; c < 4; c++)
            expect_f(&x, v[c]);
        expect_f(&x, v[5]);
        expect_f(&x, v[6]);
    }
    check_bytes(&e, so, &x, "pass-through indexed strip with a cut");
    free(x.b);
    kiln_destroy_buffer(e.dev, ib);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* ---- a geometry shader: strips, cuts, amplification, two buffers ---- */

/* Per input point p (its varying 0 x is 100 + p): a 4-vertex strip (two
 * triangles), a cut, 2 vertices (no triangle), a cut, 3 vertices (one
 * triangle). Vertex k: position (p, k, 0.5, 1), varying 0 (p * 16 + k, -k, 0, 1). */
static void gs_strips(kiln_gs_args *a)
{
    float p = a->in[4] - 100.0f;
    for (int k = 0; k < 9; k++) {
        if (k == 4 || k == 6)
            kiln_gs_cut(a);
        float v[8] = {p, (float)k, 0.5f, 1.0f, p * 16.0f + (float)k, -(float)k, 0.0f, 1.0f};
        kiln_gs_emit(a, v);
    }
}

#define GS_POINTS 300u /* 9 vertices each: several geometry jobs */

static void gs_expect(expect *pos, expect *var, uint32_t npoints)
{
    static const int order[3][3] = {{0, 1, 2}, {2, 1, 3}, {6, 7, 8}};
    for (uint32_t p = 0; p < npoints; p++)
        for (int t = 0; t < 3; t++)
            for (int k = 0; k < 3; k++) {
                int vk = order[t][k];
                expect_f(pos, (float)p);
                expect_f(pos, (float)vk);
                expect_f(pos, 0.5f);
                expect_f(pos, 1.0f);
                expect_f(var, -(float)vk); /* varying 0's y */
            }
}

static void gs_so(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    kiln_geometry_shader_desc gd = {gs_strips, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_TRIANGLE_STRIP, 9, 1, 0, NULL};
    /* Two slots, one element each: the position, varying 0's y. */
    const kiln_so_element el[] = {{0, 0, 4, 0}, {1, 1, 1, 1}};
    kiln_geometry_shader gs = so_shader(e.dev, &gd, el, 2, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    uint32_t size0 = GS_POINTS * 9 * 16, size1 = GS_POINTS * 9 * 4 + 64;
    kiln_buffer vb = vertex_buffer(&e, GS_POINTS);
    kiln_buffer so[2] = {so_buffer(&e, size0, 0), so_buffer(&e, size1, 0)};
    bind_vb(&e, vb, 32);
    so_targets(&e, 2, so, NULL);
    kiln_query st = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_SO_STATISTICS, &st), KILN_OK);
    kiln_query ps = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_PIPELINE_STATISTICS, &ps), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, GS_POINTS, 0), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, st), KILN_OK);
    expect x0, x1;
    expect_init(&x0, size0);
    expect_init(&x1, size1);
    gs_expect(&x0, &x1, GS_POINTS);
    check_bytes(&e, so[0], &x0, "geometry shader strips, slot 0 (positions)");
    check_bytes(&e, so[1], &x1, "geometry shader strips, slot 1 (varying y), the rest untouched");
    kiln_query_data_so_statistics s = {0};
    CHECK_RESULT(get_data(e.ctx, st, &s, sizeof s), KILN_OK);
    CHECK_EQ_INT(s.primitives_written, 3 * GS_POINTS);
    CHECK_EQ_INT(s.primitives_storage_needed, 3 * GS_POINTS);
    kiln_query_data_pipeline_statistics p = {0};
    CHECK_RESULT(get_data(e.ctx, ps, &p, sizeof p), KILN_OK);
    CHECK_EQ_INT(p.ia_primitives, GS_POINTS);
    CHECK_EQ_INT(p.gs_invocations, GS_POINTS);
    CHECK_EQ_INT(p.gs_primitives, 3 * GS_POINTS);
    CHECK_EQ_INT(p.c_invocations, 0); /* rasterization off */
    CHECK_EQ_INT(p.ps_invocations, 0);
    free(x0.b);
    free(x1.b);
    kiln_destroy_query(e.dev, st);
    kiln_destroy_query(e.dev, ps);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so[0]);
    kiln_destroy_buffer(e.dev, so[1]);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* ---- offsets, append and draw_auto ---- */

/* A vertex shader and layout reading one float a vertex (as position x;
 * varying 0 reads zeros): a stream-output buffer of 4-byte vertices as
 * vertex-buffer slot 0. */
static void float_reader(env *e, kiln_vertex_shader *vs, kiln_input_layout *il)
{
    kiln_vertex_shader_desc vd = {ru_vs_pass, 1, 1, NULL, RU_USER(1, 1)};
    CHECK_RESULT(kiln_create_vertex_shader(e->dev, &vd, vs), KILN_OK);
    kiln_input_layout_desc ld = {1, {{KILN_FORMAT_R32_FLOAT, 0, 0, 0, 0}}};
    CHECK_RESULT(kiln_create_input_layout(e->dev, &ld, *vs, il), KILN_OK);
}

static void offsets_append_auto(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    /* Varying 0's x alone: 4 bytes a vertex. */
    const kiln_so_element el[] = {{1, 0, 1, 0}};
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 1, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    kiln_buffer vb = vertex_buffer(&e, 8), so = so_buffer(&e, 64, KILN_BIND_VERTEX_BUFFER);
    bind_vb(&e, vb, 32);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    uint32_t off = 8;
    so_targets(&e, 1, &so, &off);
    CHECK_RESULT(kiln_draw(e.ctx, 3, 0), KILN_OK); /* bytes 8..20: vertices 0, 1, 2 */
    CHECK_RESULT(kiln_draw(e.ctx, 2, 5), KILN_OK); /* continues: 20..28: 5, 6 */
    off = KILN_SO_APPEND;
    so_targets(&e, 1, &so, &off);
    CHECK_RESULT(kiln_draw(e.ctx, 1, 7), KILN_OK); /* where the last ended: 28..32: 7 */
    expect x;
    expect_init(&x, 64);
    x.pos = 8;
    const uint32_t seq[] = {0, 1, 2, 5, 6, 7};
    for (int i = 0; i < 6; i++)
        expect_f(&x, 100.0f + (float)seq[i]);
    check_bytes(&e, so, &x, "offset 8, then continued, then KILN_SO_APPEND");

    /* draw_auto: the buffer as vertex-buffer slot 0, 4 bytes a vertex, from
     * offset 12: (32 - 12) / 4 = 5 vertices, streamed out again through a
     * layout reading one float (as position x; varying 0 reads zeros). */
    kiln_vertex_shader vs = {0};
    kiln_input_layout il = {0};
    float_reader(&e, &vs, &il);
    const kiln_so_element el2[] = {{0, 0, 2, 0}}; /* position xy */
    kiln_geometry_shader gs2 = so_shader(e.dev, NULL, el2, 1, 0);
    kiln_buffer out = so_buffer(&e, 64, 0);
    CHECK_RESULT(kiln_vs_set_shader(e.ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(e.ctx, il), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs2), KILN_OK);
    uint32_t stride = 4, voff = 12;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e.ctx, 0, 1, &so, &stride, &voff), KILN_OK);
    so_targets(&e, 1, &out, NULL);
    kiln_query st = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_SO_STATISTICS, &st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_draw_auto(e.ctx), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, st), KILN_OK);
    expect y;
    expect_init(&y, 64);
    for (int i = 1; i < 6; i++) { /* the floats at 12, 16, ... 28 */
        expect_f(&y, 100.0f + (float)seq[i]);
        expect_f(&y, 0.0f); /* y: missing components read 0 */
    }
    check_bytes(&e, out, &y, "draw_auto drew exactly the vertices written");
    kiln_query_data_so_statistics s = {0};
    CHECK_RESULT(get_data(e.ctx, st, &s, sizeof s), KILN_OK);
    CHECK_EQ_INT(s.primitives_written, 5);
    CHECK_EQ_INT(s.primitives_storage_needed, 5);

    /* Offset 0 again: the buffer's end moves back, and draw_auto follows. */
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(e.ctx, e.pipe.vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(e.ctx, e.pipe.il), KILN_OK);
    bind_vb(&e, vb, 32);
    off = 0;
    so_targets(&e, 1, &so, &off);
    CHECK_RESULT(kiln_draw(e.ctx, 4, 0), KILN_OK); /* ends at 16 */
    CHECK_RESULT(kiln_vs_set_shader(e.ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(e.ctx, il), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs2), KILN_OK);
    voff = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e.ctx, 0, 1, &so, &stride, &voff), KILN_OK);
    so_targets(&e, 1, &out, NULL);
    CHECK_RESULT(kiln_query_begin(e.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_draw_auto(e.ctx), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, st), KILN_OK);
    CHECK_RESULT(get_data(e.ctx, st, &s, sizeof s), KILN_OK);
    CHECK_EQ_INT(s.primitives_written, 4);
    expect z;
    expect_init(&z, 64);
    for (int i = 0; i < 4; i++) {
        expect_f(&z, 100.0f + (float)i);
        expect_f(&z, 0.0f);
    }
    expect_f(&z, 100.0f + (float)seq[5]); /* the first draw_auto's fifth vertex stays */
    expect_f(&z, 0.0f);
    check_bytes(&e, out, &z, "draw_auto after a rewrite from offset 0");

    free(x.b);
    free(y.b);
    free(z.b);
    kiln_destroy_query(e.dev, st);
    kiln_destroy_input_layout(e.dev, il);
    kiln_destroy_vertex_shader(e.dev, vs);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so);
    kiln_destroy_buffer(e.dev, out);
    kiln_destroy_geometry_shader(e.dev, gs);
    kiln_destroy_geometry_shader(e.dev, gs2);
    env_free(&e);
}

/* draw_auto in a scene that shades nothing (its one render target view
 * slot empty, a pixel shader bound): the scene only counts its draws, and
 * a pipeline-statistics query reads the vertices stream output wrote, not
 * what the buffer could hold. */
static void auto_without_target(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    const kiln_so_element el[] = {{1, 0, 1, 0}}; /* varying 0's x: 4 bytes a vertex */
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 1, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    kiln_buffer vb = vertex_buffer(&e, 8), so = so_buffer(&e, 64, KILN_BIND_VERTEX_BUFFER);
    bind_vb(&e, vb, 32);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    so_targets(&e, 1, &so, NULL);
    CHECK_RESULT(kiln_draw(e.ctx, 5, 0), KILN_OK); /* 20 of the 64 bytes */
    so_targets(&e, 0, NULL, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, (kiln_geometry_shader){0}), KILN_OK);

    kiln_vertex_shader vs = {0};
    kiln_input_layout il = {0};
    float_reader(&e, &vs, &il);
    CHECK_RESULT(kiln_vs_set_shader(e.ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(e.ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(e.ctx, e.pipe.ps), KILN_OK);
    const kiln_rtv none = {0};
    CHECK_RESULT(kiln_om_set_render_targets(e.ctx, 1, &none, (kiln_dsv){0}), KILN_OK);
    uint32_t stride = 4, voff = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e.ctx, 0, 1, &so, &stride, &voff), KILN_OK);
    kiln_query q = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, q), KILN_OK);
    CHECK_RESULT(kiln_draw_auto(e.ctx), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, q), KILN_OK);
    kiln_query_data_pipeline_statistics st = {0};
    CHECK_RESULT(get_data(e.ctx, q, &st, sizeof st), KILN_OK);
    CHECK_EQ_INT(st.ia_vertices, 5);
    CHECK_EQ_INT(st.ia_primitives, 5);

    kiln_destroy_query(e.dev, q);
    kiln_destroy_input_layout(e.dev, il);
    kiln_destroy_vertex_shader(e.dev, vs);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* ---- overflow, statistics, the overflow predicate ---- */

static void overflow(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    /* Slot 0: position (48 bytes a triangle); slot 1: varying 0's w (12). */
    const kiln_so_element el[] = {{0, 0, 4, 0}, {1, 3, 1, 1}};
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 2, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    /* Slot 0 holds 3 triangles (and 20 bytes), slot 1 five: a triangle
     * fits only where it fits in both. */
    kiln_buffer vb = vertex_buffer(&e, 18);
    kiln_buffer so[2] = {so_buffer(&e, 3 * 48 + 20, 0), so_buffer(&e, 5 * 12, 0)};
    bind_vb(&e, vb, 32);
    so_targets(&e, 2, so, NULL);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    kiln_query st = {0}, ov = {0}, ok = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_SO_STATISTICS, &st), KILN_OK);
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_SO_OVERFLOW_PREDICATE, &ov), KILN_OK);
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_SO_OVERFLOW_PREDICATE, &ok), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, ok), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 6, 0), KILN_OK); /* 2 triangles: fit */
    CHECK_RESULT(kiln_query_end(e.ctx, ok), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, ov), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 12, 6), KILN_OK); /* 4 more: 1 fits, 3 dropped */
    CHECK_RESULT(kiln_query_end(e.ctx, ov), KILN_OK);
    CHECK_RESULT(kiln_query_end(e.ctx, st), KILN_OK);
    expect x0, x1;
    expect_init(&x0, 3 * 48 + 20);
    expect_init(&x1, 5 * 12);
    for (uint32_t i = 0; i < 9; i++) {
        float v[8];
        vertex(i, v);
        for (int c = 0; c < 4; c++)
            expect_f(&x0, v[c]);
        expect_f(&x1, v[7]);
    }
    check_bytes(&e, so[0], &x0, "overflow: slot 0 holds 3 whole triangles, its last 20 bytes untouched");
    check_bytes(&e, so[1], &x1, "overflow: slot 1 holds the same 3, not the 2 it had room for");
    kiln_query_data_so_statistics s = {0};
    CHECK_RESULT(get_data(e.ctx, st, &s, sizeof s), KILN_OK);
    CHECK_EQ_INT(s.primitives_written, 1);
    CHECK_EQ_INT(s.primitives_storage_needed, 4);
    uint32_t b = 7;
    CHECK_RESULT(get_data(e.ctx, ov, &b, sizeof b), KILN_OK);
    CHECK_EQ_INT(b, 1);
    CHECK_RESULT(get_data(e.ctx, ok, &b, sizeof b), KILN_OK);
    CHECK_EQ_INT(b, 0);

    /* Predication on overflow: updates skipped when the result equals
     * `value`. */
    uint8_t zero[16] = {0}, ones[16];
    memset(ones, 1, sizeof ones);
    kiln_buffer dst = ru_buffer(e.dev, KILN_BIND_VERTEX_BUFFER, zero, 16);
    kiln_box box = {0, 0, 0, 8, 1, 1};
    CHECK_RESULT(kiln_set_predication(e.ctx, ov, 1), KILN_OK); /* overflowed: skipped */
    CHECK_RESULT(kiln_update_subresource(e.ctx, kiln_buffer_resource(dst), 0, &box, ones, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_set_predication(e.ctx, ok, 1), KILN_OK); /* no overflow: runs */
    box.left = 8;
    box.right = 16;
    CHECK_RESULT(kiln_update_subresource(e.ctx, kiln_buffer_resource(dst), 0, &box, ones, 0, 0), KILN_OK);
    /* A predicated stream-output draw that is skipped writes nothing. */
    CHECK_RESULT(kiln_set_predication(e.ctx, ov, 1), KILN_OK);
    uint32_t zoff[2] = {0, 0};
    so_targets(&e, 2, so, zoff);
    CHECK_RESULT(kiln_draw(e.ctx, 3, 15), KILN_OK);
    CHECK_RESULT(kiln_set_predication(e.ctx, (kiln_query){0}, 0), KILN_OK);
    uint8_t *got = read_buffer(&e, dst, 16);
    CHECK(got[0] == 0 && got[7] == 0 && got[8] == 1 && got[15] == 1);
    free(got);
    check_bytes(&e, so[0], &x0, "a skipped predicated draw streams nothing out");

    free(x0.b);
    free(x1.b);
    kiln_destroy_query(e.dev, st);
    kiln_destroy_query(e.dev, ov);
    kiln_destroy_query(e.dev, ok);
    kiln_destroy_buffer(e.dev, dst);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so[0]);
    kiln_destroy_buffer(e.dev, so[1]);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* ---- streaming out and rasterizing in one draw ---- */

static void with_raster(kiln_exec_mode mode, uint32_t threads)
{
    env e;
    env_init(&e, mode, threads);
    ru_tex rt = ru_rt(e.dev, 16, 16, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_rasterizer_state rs = ru_target_2d(e.dev, e.ctx, &rt);
    CHECK_RESULT(kiln_ps_set_shader(e.ctx, e.pipe.ps), KILN_OK);
    const float black[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(e.ctx, rt.rtv, black), KILN_OK);
    const kiln_so_element el[] = {{1, 0, 4, 0}};
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 1, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    /* A triangle over the whole target, color (0.25, 0.5, 0.75, 1). */
    float v[3 * 8];
    const double px[3][2] = {{-4, -4}, {40, -4}, {-4, 40}};
    for (int i = 0; i < 3; i++) {
        float *p = ru_vtx(v + 8 * i, 16, 16, px[i][0], px[i][1], 0.5f);
        p[0] = 0.25f;
        p[1] = 0.5f;
        p[2] = 0.75f;
        p[3] = 1.0f;
    }
    kiln_buffer so = so_buffer(&e, 48, 0);
    so_targets(&e, 1, &so, NULL);
    ru_draw(e.dev, e.ctx, v, 3, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(e.dev, &rt);
    CHECK(img && img[0] == 0.25f && img[(15 * 16 + 15) * 4 + 2] == 0.75f);
    free(img);
    expect x;
    expect_init(&x, 48);
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 4; c++)
            expect_f(&x, v[8 * i + 4 + c]);
    check_bytes(&e, so, &x, "a draw that rasterizes streams out too");
    free(x.b);
    kiln_destroy_buffer(e.dev, so);
    kiln_destroy_geometry_shader(e.dev, gs);
    kiln_destroy_rasterizer_state(e.dev, rs);
    ru_free_tex(e.dev, &rt);
    env_free(&e);
}

/* ---- what waits for a stream-out draw ---- */

static void dependencies(void)
{
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 2);
    const kiln_so_element el[] = {{1, 0, 4, 0}};
    kiln_geometry_shader gs = so_shader(e.dev, NULL, el, 1, 0);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    ru_tex rt = ru_rt(e.dev, 8, 8, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(e.ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    kiln_buffer vb = vertex_buffer(&e, 4), so = so_buffer(&e, 64, 0);
    bind_vb(&e, vb, 32);
    so_targets(&e, 1, &so, NULL);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    kiln_test_gate *input = NULL, *reader = NULL, *target = NULL;
    CHECK_RESULT(kiln_test_gate_create(e.dev, &input), KILN_OK);
    CHECK_RESULT(kiln_test_gate_create(e.dev, &reader), KILN_OK);
    CHECK_RESULT(kiln_test_gate_create(e.dev, &target), KILN_OK);
    /* The draw waits for its input, held for writing. */
    kiln_resource r_vb = kiln_buffer_resource(vb), r_so = kiln_buffer_resource(so),
                  r_rt = kiln_texture_resource(rt.tex);
    int w = 1, rd = 0;
    CHECK_RESULT(kiln_test_hold(e.ctx, input, &r_vb, &w, 1), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 4, 0), KILN_OK); /* no pixel shader: streams out only */
    CHECK_RESULT(kiln_test_hold(e.ctx, reader, &r_so, &rd, 1), KILN_OK);
    CHECK_RESULT(kiln_test_hold(e.ctx, target, &r_rt, &w, 1), KILN_OK);
    kiln_flush(e.ctx);
    kiln_test_gate_wait_entered(input, 1);
    /* The bound render target is not the draw's: its writer passes. */
    kiln_test_gate_wait_entered(target, 1);
    CHECK_EQ_INT(kiln_test_gate_entered(reader), 0); /* behind the draw */
    kiln_test_gate_open(input);
    kiln_test_gate_wait_entered(reader, 1); /* the draw ran */
    kiln_test_gate_open(reader);
    kiln_test_gate_open(target);
    expect x;
    expect_init(&x, 64);
    for (uint32_t i = 0; i < 4; i++) {
        float v[8];
        vertex(i, v);
        for (int c = 0; c < 4; c++)
            expect_f(&x, v[4 + c]);
    }
    check_bytes(&e, so, &x, "the reader after the draw saw its bytes");
    free(x.b);
    kiln_test_gate_destroy(input);
    kiln_test_gate_destroy(reader);
    kiln_test_gate_destroy(target);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_buffer(e.dev, so);
    kiln_destroy_geometry_shader(e.dev, gs);
    ru_free_tex(e.dev, &rt);
    env_free(&e);
}

static void all_configs(void)
{
    static const struct {
        kiln_exec_mode mode;
        uint32_t threads;
    } cfg[] = {{KILN_EXEC_SERIAL, 0}, {KILN_EXEC_ASYNC, 1}, {KILN_EXEC_ASYNC, 3}};
    for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        fprintf(stderr, "-- %s, %u workers\n", cfg[i].mode == KILN_EXEC_SERIAL ? "SERIAL" : "ASYNC",
                cfg[i].threads);
        vs_pass_through(cfg[i].mode, cfg[i].threads);
        gs_so(cfg[i].mode, cfg[i].threads);
        offsets_append_auto(cfg[i].mode, cfg[i].threads);
        auto_without_target(cfg[i].mode, cfg[i].threads);
        overflow(cfg[i].mode, cfg[i].threads);
        with_raster(cfg[i].mode, cfg[i].threads);
    }
}

/* ---- misuse ---- */

static void gs_nothing(kiln_gs_args *a) { (void)a; }

static void misuse(void)
{
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 2);
    kiln_device *dev = e.dev;
    kiln_context *ctx = e.ctx;
    kiln_buffer out = {0};
    kiln_buffer_desc bd = {64, KILN_USAGE_DYNAMIC, KILN_BIND_STREAM_OUTPUT, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &bd, NULL, &out), KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    bd.usage = KILN_USAGE_IMMUTABLE;
    uint8_t init[64] = {0};
    kiln_subresource_data sd = {init, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &bd, &sd, &out), KILN_E_INVALID_ARG, KILN_LOG_USAGE_BIND);
    bd = (kiln_buffer_desc){64, KILN_USAGE_DEFAULT, KILN_BIND_STREAM_OUTPUT | KILN_BIND_CONSTANT_BUFFER, 0};
    CHECK_FAILS(kiln_create_buffer(dev, &bd, NULL, &out), KILN_E_INVALID_ARG, KILN_LOG_CONSTANT_BUFFER_BIND);
    kiln_texture2d_desc td = {4, 4, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_STREAM_OUTPUT, 0, 0};
    kiln_texture tex = {0};
    CHECK_FAILS(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_E_INVALID_ARG, KILN_LOG_BIND_FLAGS_INVALID);

    /* Declarations. */
    kiln_geometry_shader gs = {0};
    kiln_so_element el[KILN_SO_MAX_ELEMENTS + 1];
    for (int i = 0; i <= KILN_SO_MAX_ELEMENTS; i++)
        el[i] = (kiln_so_element){0, 0, 1, 0};
    kiln_so_desc so = {el, 1, 0};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, NULL, &gs), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    so.num_elements = 0;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    so.num_elements = KILN_SO_MAX_ELEMENTS + 1;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    so.num_elements = 1;
    so.elements = NULL;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    so.elements = el;
    const kiln_so_element bad[] = {{0, 2, 3, 0}, {0, 4, 1, 0}, {0, 0, 0, 0}, {0, 0, 1, 4}, {KILN_MAX_VARYINGS + 1, 0, 1, 0}};
    for (int i = 0; i < 5; i++) {
        so.elements = &bad[i];
        CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    }
    /* 17 elements of 4 components: 68 > 64 components. */
    for (int i = 0; i < 17; i++)
        el[i] = (kiln_so_element){0, 0, 4, 0};
    so = (kiln_so_desc){el, 17, 0};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    /* Several slots: one element each, no stride. */
    const kiln_so_element two[] = {{0, 0, 4, 0}, {1, 0, 4, 1}, {1, 0, 1, 1}};
    so = (kiln_so_desc){two, 3, 0};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    so = (kiln_so_desc){two, 2, 32};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    /* One slot: the stride a multiple of 4, covering the elements, <= 2048. */
    so = (kiln_so_desc){two, 1, 18};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    so.stride = 12;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    so.stride = 2052;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    /* Against the geometry shader: varyings it writes, its own desc. */
    kiln_geometry_shader_desc gd = {gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 0, NULL};
    so = (kiln_so_desc){&two[1], 1, 0};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, &gd, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SO_DECL);
    gd.max_vertices = 0;
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, &gd, &so, &gs), KILN_E_INVALID_ARG, KILN_LOG_SHADER_DESC);
    CHECK_EQ_INT(gs.id, 0);

    /* Targets. */
    kiln_buffer sob = so_buffer(&e, 64, 0), vbuf = vertex_buffer(&e, 4);
    kiln_buffer five[5] = {sob, sob, sob, sob, sob};
    CHECK_FAILS(kiln_so_set_targets(ctx, 5, five, NULL), KILN_E_INVALID_ARG, KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_so_set_targets(ctx, 2, five, NULL), KILN_E_INVALID_ARG, KILN_LOG_SO_TARGET_DUPLICATE);
    CHECK_FAILS(kiln_so_set_targets(ctx, 1, &vbuf, NULL), KILN_E_INVALID_ARG, KILN_LOG_BIND_USAGE);
    CHECK_FAILS(kiln_so_set_targets(ctx, 1, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    uint32_t odd = 2;
    CHECK_FAILS(kiln_so_set_targets(ctx, 1, &sob, &odd), KILN_E_INVALID_ARG, KILN_LOG_SO_OFFSET);
    kiln_buffer gone = so_buffer(&e, 64, 0);
    kiln_destroy_buffer(dev, gone);
    CHECK_FAILS(kiln_so_set_targets(ctx, 1, &gone, NULL), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_RESULT(kiln_so_set_targets(ctx, 0, NULL, NULL), KILN_OK);

    /* Draws. */
    const kiln_so_element pos[] = {{0, 0, 4, 0}}, vary2[] = {{2, 0, 4, 0}}, slot1[] = {{0, 0, 4, 1}};
    kiln_geometry_shader g_pos = so_shader(dev, NULL, pos, 1, 0);
    kiln_geometry_shader g_v2 = so_shader(dev, NULL, vary2, 1, 0);
    kiln_geometry_shader g_s1 = so_shader(dev, NULL, slot1, 1, 0);
    bind_vb(&e, vbuf, 32);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER); /* no PS, no SO */
    CHECK_RESULT(kiln_gs_set_shader(ctx, g_pos), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_SO_MISMATCH); /* slot 0 empty */
    so_targets(&e, 1, &sob, NULL);
    CHECK_RESULT(kiln_draw(ctx, 1, 0), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, g_s1), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_SO_MISMATCH); /* slot 1 empty */
    CHECK_RESULT(kiln_gs_set_shader(ctx, g_v2), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_SO_MISMATCH); /* VS has 1 varying */
    CHECK_RESULT(kiln_gs_set_shader(ctx, g_pos), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_LINE_LIST_ADJ), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 4, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_ADJACENCY_NO_GS);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    /* No pixel shader while a depth-stencil view is tested: streams out
     * and draws depth only (test_depth_only checks the depth). */
    ru_tex ds = ru_ds(dev, 8, 8, KILN_FORMAT_D32_FLOAT);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 1, 0), KILN_OK);
    kiln_depth_stencil_state off = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, off, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 1, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    /* A target that is also an input. */
    kiln_buffer both = so_buffer(&e, 128, KILN_BIND_VERTEX_BUFFER);
    bind_vb(&e, both, 32);
    so_targets(&e, 1, &both, NULL);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    /* draw_auto needs a stream-output buffer and a stride in slot 0. */
    so_targets(&e, 1, &sob, NULL);
    CHECK_RESULT(kiln_draw_auto(ctx), KILN_OK); /* never written: draws nothing */
    bind_vb(&e, vbuf, 32);
    CHECK_FAILS(kiln_draw_auto(ctx), KILN_E_INVALID_CALL, KILN_LOG_DRAW_AUTO_NO_SO);
    bind_vb(&e, both, 0);
    CHECK_FAILS(kiln_draw_auto(ctx), KILN_E_INVALID_CALL, KILN_LOG_DRAW_AUTO_NO_SO);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &(kiln_buffer){0}, &(uint32_t){0}, &(uint32_t){0}), KILN_OK);
    CHECK_FAILS(kiln_draw_auto(ctx), KILN_E_INVALID_CALL, KILN_LOG_DRAW_AUTO_NO_SO);
    /* A destroyed target. */
    bind_vb(&e, vbuf, 32);
    kiln_buffer doomed = so_buffer(&e, 64, 0);
    so_targets(&e, 1, &doomed, NULL);
    kiln_destroy_buffer(dev, doomed);
    CHECK_FAILS(kiln_draw(ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_BOUND_DESTROYED);
    /* Queries. */
    kiln_query st = {0};
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_SO_STATISTICS, &st), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, st), KILN_OK);
    CHECK_RESULT(kiln_query_end(ctx, st), KILN_OK);
    uint32_t small = 0;
    CHECK_FAILS(get_data(ctx, st, &small, sizeof small), KILN_E_INVALID_ARG, KILN_LOG_DATA_SIZE);
    CHECK_FAILS(kiln_set_predication(ctx, st, 1), KILN_E_INVALID_ARG, KILN_LOG_PREDICATE_TYPE);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);

    kiln_destroy_query(dev, st);
    kiln_destroy_depth_stencil_state(dev, off);
    ru_free_tex(dev, &ds);
    kiln_destroy_buffer(dev, both);
    kiln_destroy_buffer(dev, sob);
    kiln_destroy_buffer(dev, vbuf);
    kiln_destroy_geometry_shader(dev, g_pos);
    kiln_destroy_geometry_shader(dev, g_v2);
    kiln_destroy_geometry_shader(dev, g_s1);
    env_free(&e);
}

#if KILN_HAVE_GL
static void osmesa_refuses(void)
{
    kiln_device *dev = th_osmesa_device();
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    const kiln_so_element el[] = {{0, 0, 4, 0}};
    kiln_so_desc so = {el, 1, 0};
    kiln_geometry_shader gs = {0};
    CHECK_FAILS(kiln_create_geometry_shader_with_so(dev, NULL, &so, &gs), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    kiln_query q = {0};
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_SO_STATISTICS, &q), KILN_E_UNSUPPORTED,
                KILN_LOG_QUERY_NO_STREAM_OUTPUT);
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_SO_OVERFLOW_PREDICATE, &q), KILN_E_UNSUPPORTED,
                KILN_LOG_QUERY_NO_STREAM_OUTPUT);
    kiln_buffer_desc bd = {64, KILN_USAGE_DEFAULT, KILN_BIND_STREAM_OUTPUT | KILN_BIND_VERTEX_BUFFER, 0};
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &b), KILN_OK); /* valid D3D10 */
    CHECK_FAILS(kiln_so_set_targets(ctx, 1, &b, NULL), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    uint32_t stride = 16, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &b, &stride, &off), KILN_OK);
    CHECK_FAILS(kiln_draw_auto(ctx), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    kiln_destroy_buffer(dev, b);
    kiln_device_destroy(dev);
}
#endif

/* ---- capture and replay ---- */

#define CW 16u
#define CH 16u

static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    kiln_vertex_shader_desc vd = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};
    kiln_pixel_shader_desc pd = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.so.vs", &vd), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.so.ps", &pd), KILN_OK);
}

/* Points stream out (rasterization off), then draw_auto draws them from
 * the buffer into the target: the image depends on what was written. */
static void capture_live(uint8_t *pixels)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    register_shaders(dev, NULL);
    CHECK_RESULT(kiln_capture_begin(dev, "so.kcap"), KILN_OK);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader_desc vd = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};
    kiln_pixel_shader_desc pd = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    kiln_vertex_shader vs = {0};
    kiln_pixel_shader ps = {0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    const kiln_so_element el[] = {{0, 0, 4, 0}, {1, 0, 4, 0}};
    kiln_geometry_shader gs = so_shader(dev, NULL, el, 2, 0);
    ru_tex rt = ru_rt(dev, CW, CH, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    const float clear[4] = {0.1f, 0.2f, 0.3f, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    float v[12 * 8];
    for (int i = 0; i < 12; i++) {
        float *p = ru_vtx(v + 8 * i, CW, CH, 1.5 + i, 2.5 + (i * 5) % 11, 0.5f);
        p[0] = (float)(i & 1);
        p[1] = (float)(i % 3) / 2;
        p[2] = 1.0f - (float)i / 12;
        p[3] = 1.0f;
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    kiln_buffer so = ru_buffer(dev, KILN_BIND_STREAM_OUTPUT | KILN_BIND_VERTEX_BUFFER, NULL, 64 * 32);
    kiln_query st = {0};
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_SO_STATISTICS, &st), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, gs), KILN_OK);
    uint32_t stride = 32, off = 0, so_off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_RESULT(kiln_so_set_targets(ctx, 1, &so, &so_off), KILN_OK);
    CHECK_RESULT(kiln_query_begin(ctx, st), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 12, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 5, 2), KILN_OK); /* appended */
    CHECK_RESULT(kiln_query_end(ctx, st), KILN_OK);
    CHECK_RESULT(kiln_so_set_targets(ctx, 0, NULL, NULL), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &so, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_draw_auto(ctx), KILN_OK);
    kiln_query_data_so_statistics s = {0};
    CHECK_RESULT(get_data(ctx, st, &s, sizeof s), KILN_OK);
    CHECK_EQ_INT(s.primitives_written, 17);
    ru_read(dev, rt.tex, 0, pixels);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_destroy_query(dev, st);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_buffer(dev, so);
    kiln_destroy_geometry_shader(dev, gs);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_device_destroy(dev);
}

static void capture_replay(void)
{
    static uint8_t live[CW * CH * 4];
    capture_live(live);
    /* The points drew: the image is not just the clear color. */
    int drawn = 0;
    for (uint32_t i = 0; i < CW * CH; i++)
        drawn += live[4 * i + 2] != (uint8_t)(0.3f * 255.0f + 0.5f);
    CHECK(drawn >= 12);
    size_t len;
    uint8_t *bytes = cu_read("so.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    for (int m = 0; m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3, register_shaders, &img, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = cu_target(&img, 0);
        CHECK(t && t->width == CW && memcmp(t->pixels, live, sizeof live) == 0);
        cu_free(&img);
    }
    free(bytes);
}

int main(void)
{
    th_logs.quiet = 1;
    all_configs();
    fprintf(stderr, "-- dependencies\n");
    dependencies();
    fprintf(stderr, "-- misuse\n");
    misuse();
#if KILN_HAVE_GL
    osmesa_refuses();
#endif
    fprintf(stderr, "-- capture\n");
    capture_replay();
    return th_exit();
}
