/*
 * Geometry shaders on the soft backend, exact: the vertices each call
 * receives (every input primitive kind, D3D10's adjacency orders, per
 * instance primitive ids), what it emits becoming primitives (point
 * sprites, strips with cuts, max_vertices dropping the rest, line strips),
 * SV_PrimitiveID reaching the pixel shader with and without a geometry
 * shader, layered rendering into the slices of color and depth arrays, PIPELINE_STATISTICS counting calls and emitted primitives, and
 * the order of emitted primitives under an order-dependent blend over many
 * geometry jobs: the image equals a CPU fold in input-then-emission order,
 * bit for bit, on SERIAL and ASYNC devices with 1, 2 and 4 workers.
 * Misuse: one log id each. A capture of a geometry-shader scene replays
 * ASYNC and SERIAL to the live image.
 */
#include "capture_util.h"
#include "raster_util.h"

#define W 64u
#define H 32u

/* ---- recording what each call receives ---- */

#define REC_PRIMS 16
#define REC_INST 2

typedef struct rec {
    /* [instance][primitive_id][k]: input vertex k's varying 0 x (its
     * vertex index), -1 where no call came. */
    float v[REC_INST][REC_PRIMS][6];
    uint32_t nv[REC_INST][REC_PRIMS];
} rec;

/* Records its input and emits nothing (each slot has one writer). */
static void gs_record(kiln_gs_args *a)
{
    rec *r = a->user;
    if (a->instance_id >= REC_INST || a->primitive_id >= REC_PRIMS)
        return;
    r->nv[a->instance_id][a->primitive_id] = a->num_vertices;
    for (uint32_t k = 0; k < a->num_vertices; k++)
        r->v[a->instance_id][a->primitive_id][k] = a->in[k * a->in_stride + 4];
}

typedef struct env {
    kiln_device *dev;
    kiln_context *ctx;
    ru_tex rt;
    kiln_rasterizer_state rs;
    ru_pipe pipe; /* position + 1 varying, PS = varying 0 */
} env;

static void env_init(env *e, kiln_exec_mode mode, uint32_t threads, kiln_format fmt)
{
    memset(e, 0, sizeof *e);
    e->dev = th_device(mode, threads);
    e->ctx = kiln_device_immediate_context(e->dev);
    e->rt = ru_rt(e->dev, W, H, fmt);
    e->rs = ru_target_2d(e->dev, e->ctx, &e->rt);
    e->pipe = ru_make_pipe(e->dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(e->ctx, &e->pipe);
    const float zero[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(e->ctx, e->rt.rtv, zero), KILN_OK);
}

static void env_free(env *e)
{
    kiln_destroy_rasterizer_state(e->dev, e->rs);
    ru_free_pipe(e->dev, &e->pipe);
    ru_free_tex(e->dev, &e->rt);
    kiln_device_destroy(e->dev);
}

static kiln_geometry_shader make_gs(kiln_device *dev, kiln_gs_fn fn, kiln_gs_input in,
                                    kiln_gs_output out, uint32_t maxv, uint32_t nvary, void *user)
{
    kiln_geometry_shader_desc d = {.fn = fn,
                                   .input = in,
                                   .output = out,
                                   .max_vertices = maxv,
                                   .num_varyings = nvary,
                                   .user = user};
    kiln_geometry_shader gs = {0};
    CHECK_RESULT(kiln_create_geometry_shader(dev, &d, &gs), KILN_OK);
    return gs;
}

/* n vertices whose varying 0 x is the vertex index, all at the center. */
static void draw_indexed_verts(env *e, uint32_t n, kiln_topology t, uint32_t instances)
{
    float v[32 * 8];
    for (uint32_t i = 0; i < n; i++) {
        float *p = ru_vtx(v + 8 * i, W, H, W / 2.0, H / 2.0, 0.5f);
        p[0] = (float)i;
        p[1] = p[2] = p[3] = 0.0f;
    }
    kiln_buffer vb = ru_buffer(e->dev, KILN_BIND_VERTEX_BUFFER, v, n * 32);
    uint32_t stride = 32, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e->ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(e->ctx, t), KILN_OK);
    CHECK_RESULT(kiln_draw_instanced(e->ctx, n, instances, 0, 0), KILN_OK);
    kiln_destroy_buffer(e->dev, vb);
}

static void check_order(kiln_topology t, kiln_gs_input in, uint32_t n, uint32_t nprims, uint32_t nv,
                        const uint32_t *expect)
{
    static rec r;
    for (int i = 0; i < REC_INST; i++)
        for (int j = 0; j < REC_PRIMS; j++) {
            r.nv[i][j] = 0;
            for (int k = 0; k < 6; k++)
                r.v[i][j][k] = -1.0f;
        }
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 2, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_geometry_shader gs = make_gs(e.dev, gs_record, in, KILN_GS_OUTPUT_POINT_LIST, 1, 1, &r);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    draw_indexed_verts(&e, n, t, 2);
    CHECK_RESULT(kiln_finish(e.ctx), KILN_OK);
    for (uint32_t i = 0; i < REC_INST; i++)
        for (uint32_t j = 0; j < REC_PRIMS; j++) {
            CHECK_EQ_INT(r.nv[i][j], j < nprims ? nv : 0);
            for (uint32_t k = 0; j < nprims && k < nv; k++)
                CHECK_EQ_INT((int)r.v[i][j][k], (int)expect[j * nv + k]);
        }
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

static void input_orders(void)
{
    static const uint32_t points[] = {0, 1, 2};
    check_order(KILN_TOPOLOGY_POINT_LIST, KILN_GS_INPUT_POINT, 3, 3, 1, points);
    static const uint32_t lines[] = {0, 1, 2, 3};
    check_order(KILN_TOPOLOGY_LINE_LIST, KILN_GS_INPUT_LINE, 5, 2, 2, lines);
    static const uint32_t lstrip[] = {0, 1, 1, 2, 2, 3};
    check_order(KILN_TOPOLOGY_LINE_STRIP, KILN_GS_INPUT_LINE, 4, 3, 2, lstrip);
    static const uint32_t tris[] = {0, 1, 2, 3, 4, 5};
    check_order(KILN_TOPOLOGY_TRIANGLE_LIST, KILN_GS_INPUT_TRIANGLE, 7, 2, 3, tris);
    /* strips keep the winding: odd triangles swap their first two */
    static const uint32_t tstrip[] = {0, 1, 2, 2, 1, 3, 2, 3, 4};
    check_order(KILN_TOPOLOGY_TRIANGLE_STRIP, KILN_GS_INPUT_TRIANGLE, 5, 3, 3, tstrip);
    static const uint32_t ladj[] = {0, 1, 2, 3, 4, 5, 6, 7};
    check_order(KILN_TOPOLOGY_LINE_LIST_ADJ, KILN_GS_INPUT_LINE_ADJ, 9, 2, 4, ladj);
    static const uint32_t lsadj[] = {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, 4, 5};
    check_order(KILN_TOPOLOGY_LINE_STRIP_ADJ, KILN_GS_INPUT_LINE_ADJ, 6, 3, 4, lsadj);
    static const uint32_t tadj[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    check_order(KILN_TOPOLOGY_TRIANGLE_LIST_ADJ, KILN_GS_INPUT_TRIANGLE_ADJ, 13, 2, 6, tadj);
    /* D3D10's triangle strip with adjacency: (corner, adjacent) pairs;
     * one triangle alone, and first / middle (odd) / last (even). */
    static const uint32_t tsadj1[] = {0, 1, 2, 5, 4, 3};
    check_order(KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ, KILN_GS_INPUT_TRIANGLE_ADJ, 7, 1, 6, tsadj1);
    static const uint32_t tsadj3[] = {0, 1, 2, 6, 4, 3, /* first */
                                      4, 0, 2, 5, 6, 8, /* middle, odd: swapped */
                                      4, 2, 6, 9, 8, 7 /* last, even */};
    check_order(KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ, KILN_GS_INPUT_TRIANGLE_ADJ, 10, 3, 6, tsadj3);
    static const uint32_t tsadj4[] = {0, 1, 2, 6, 4,  3, 4,  0, 2,
                                      5, 6, 8, 4, 2,  6, 10, 8, 7, /* middle, even */
                                      8, 4, 6, 9, 10, 11 /* last, odd */};
    check_order(KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ, KILN_GS_INPUT_TRIANGLE_ADJ, 12, 4, 6, tsadj4);
}

/* ---- emitting ---- */

typedef struct sprite_params {
    float half;     /* half size in pixels */
    uint32_t cut;   /* 1: emit each quad as two strips of 3 with a cut (the
                       same triangles), plus a dangling 2-vertex strip */
    uint32_t extra; /* vertices emitted past max_vertices */
} sprite_params;

/* A quad of 2 * half pixels around the point, color = varying 0; its
 * triangles as one 4-vertex strip or as two cut strips. */
static void gs_sprite(kiln_gs_args *a)
{
    const sprite_params *sp = a->user;
    const float *p = a->in;
    float dx = 2.0f * sp->half / W * p[3], dy = 2.0f * sp->half / H * p[3];
    float q[4][8];
    for (int k = 0; k < 4; k++) {
        q[k][0] = p[0] + (k & 1 ? dx : -dx);
        q[k][1] = p[1] + (k & 2 ? -dy : dy);
        q[k][2] = p[2];
        q[k][3] = p[3];
        memcpy(&q[k][4], p + 4, 16);
    }
    if (!sp->cut) {
        for (int k = 0; k < 4; k++)
            kiln_gs_emit(a, q[k]);
    } else {
        kiln_gs_emit(a, q[0]);
        kiln_gs_emit(a, q[1]);
        kiln_gs_emit(a, q[2]);
        kiln_gs_cut(a);
        kiln_gs_emit(a, q[2]);
        kiln_gs_emit(a, q[1]);
        kiln_gs_emit(a, q[3]);
        kiln_gs_cut(a);
        kiln_gs_emit(a, q[0]); /* a strip of two: no triangle */
        kiln_gs_emit(a, q[3]);
        kiln_gs_cut(a);
    }
    for (uint32_t k = 0; k < sp->extra; k++)
        kiln_gs_emit(a, q[k & 3]); /* past max_vertices: dropped */
}

/* Points at pts (y moved to `y` when >= 0), colored, depth 0.5. */
static void draw_points_ctx(kiln_device *dev, kiln_context *ctx, const float (*pts)[2],
                            const float (*colors)[4], uint32_t n, float y)
{
    float v[64 * 8];
    for (uint32_t i = 0; i < n; i++) {
        float *p = ru_vtx(v + 8 * i, W, H, pts[i][0], y >= 0 ? y : pts[i][1], 0.5f);
        memcpy(p, colors[i], 16);
    }
    ru_draw(dev, ctx, v, n, 32, KILN_TOPOLOGY_POINT_LIST);
}

static void draw_points(env *e, const float (*pts)[2], const float (*colors)[4], uint32_t n)
{
    draw_points_ctx(e->dev, e->ctx, pts, colors, n, -1.0f);
}

static kiln_query_data_pipeline_statistics stats_of(env *e, kiln_query q)
{
    kiln_query_data_pipeline_statistics st;
    memset(&st, 0xff, sizeof st);
    CHECK_RESULT(kiln_query_end(e->ctx, q), KILN_OK);
    kiln_result r;
    while ((r = kiln_query_get_data(e->ctx, q, &st, sizeof st, 0)) == KILN_E_WAS_STILL_DRAWING)
        ;
    CHECK_RESULT(r, KILN_OK);
    return st;
}

/* Point sprites: each point becomes a square of (2 half)^2 pixels whose
 * edges lie on pixel edges: exactly those pixels, colored. */
static void sprites(int cut, uint32_t extra)
{
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 2, KILN_FORMAT_R8G8B8A8_UNORM);
    sprite_params sp = {2.0f, (uint32_t)cut, extra};
    uint32_t maxv = cut ? 8 : 4;
    kiln_geometry_shader gs =
        make_gs(e.dev, gs_sprite, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_TRIANGLE_STRIP, maxv, 1, &sp);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    kiln_query q = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, q), KILN_OK);
    static const float pts[3][2] = {{10, 10}, {30, 20}, {63, 31}}; /* the last one 3 x 3 inside */
    static const float col[3][4] = {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}};
    draw_points(&e, pts, col, 3);
    kiln_query_data_pipeline_statistics st = stats_of(&e, q);
    CHECK_EQ_INT(st.ia_primitives, 3);
    CHECK_EQ_INT(st.vs_invocations, 3);
    CHECK_EQ_INT(st.gs_invocations, 3);
    CHECK_EQ_INT(st.gs_primitives, 3 * 2);
    CHECK_EQ_INT(st.c_invocations, 3 * 2);
    CHECK_EQ_INT(st.ps_invocations, 16 + 16 + 9);
    uint8_t *px = ru_read_bytes(e.dev, &e.rt);
    uint32_t bad = 0;
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++) {
            uint8_t want[4] = {0, 0, 0, 0};
            for (int i = 0; i < 3; i++)
                if (x + 0.5f > pts[i][0] - 2 && x + 0.5f < pts[i][0] + 2 &&
                    y + 0.5f > pts[i][1] - 2 && y + 0.5f < pts[i][1] + 2)
                    for (int c = 0; c < 4; c++)
                        want[c] = (uint8_t)(col[i][c] * 255);
            bad += memcmp(px + 4 * (y * W + x), want, 4) != 0;
        }
    CHECK_EQ_INT(bad, 0);
    free(px);
    kiln_destroy_query(e.dev, q);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* A line strip of 4 vertices (3 lines) around the point, cut, then a
 * strip of 1 vertex (no line): 3 primitives a call. */
static void gs_lines(kiln_gs_args *a)
{
    float v[8];
    memcpy(v, a->in, sizeof v);
    for (int k = 0; k < 4; k++) {
        v[0] = a->in[0] + 0.1f * (float)k;
        kiln_gs_emit(a, v);
    }
    kiln_gs_cut(a);
    kiln_gs_emit(a, v);
}

static void line_strips(void)
{
    env e;
    env_init(&e, KILN_EXEC_SERIAL, 0, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_geometry_shader gs =
        make_gs(e.dev, gs_lines, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_LINE_STRIP, 5, 1, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    kiln_query q = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, q), KILN_OK);
    static const float pts[2][2] = {{5, 5}, {5, 25}};
    static const float col[2][4] = {{1, 1, 1, 1}, {1, 1, 1, 1}};
    draw_points(&e, pts, col, 2);
    kiln_query_data_pipeline_statistics st = stats_of(&e, q);
    CHECK_EQ_INT(st.gs_invocations, 2);
    CHECK_EQ_INT(st.gs_primitives, 2 * 3);
    CHECK_EQ_INT(st.c_invocations, 2 * 3);
    kiln_destroy_query(e.dev, q);
    kiln_destroy_geometry_shader(e.dev, gs);
    env_free(&e);
}

/* ---- SV_PrimitiveID to the pixel shader ---- */

static void ps_prim_id(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = (float)a->primitive_id;
        KILN_PS_COLOR(a, 0, 1)[i] = 0.0f;
        KILN_PS_COLOR(a, 0, 2)[i] = 0.0f;
        KILN_PS_COLOR(a, 0, 3)[i] = 1.0f;
    }
}

/* The sprite quad, each emitted with out_primitive_id = 100 + id. */
static void gs_sprite_id(kiln_gs_args *a)
{
    a->out_primitive_id = 100 + a->primitive_id;
    gs_sprite(a);
}

static void primitive_ids(void)
{
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 4, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_pixel_shader ps = {0};
    kiln_pixel_shader_desc pd = {.fn = ps_prim_id, .num_outputs = 1};
    CHECK_RESULT(kiln_create_pixel_shader(e.dev, &pd, &ps), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(e.ctx, ps), KILN_OK);
    /* Without a geometry shader: three triangles, instanced twice (the
     * second instance's vertices come from the same buffer: it overdraws
     * the first with the same ids). */
    float v[9 * 8];
    for (int t = 0; t < 3; t++) {
        float x = 4.0f + 12.0f * t;
        ru_vtx(v + 8 * (3 * t), W, H, x, 2, 0.5f);
        ru_vtx(v + 8 * (3 * t + 1), W, H, x + 8, 2, 0.5f);
        ru_vtx(v + 8 * (3 * t + 2), W, H, x, 10, 0.5f);
    }
    kiln_buffer vb = ru_buffer(e.dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = 32, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e.ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_draw_instanced(e.ctx, 9, 2, 0, 0), KILN_OK);
    kiln_destroy_buffer(e.dev, vb);
    /* With one: the ids it writes. */
    sprite_params sp = {2.0f, 0, 0};
    kiln_geometry_shader gs =
        make_gs(e.dev, gs_sprite_id, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_TRIANGLE_STRIP, 4, 1, &sp);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    static const float pts[3][2] = {{10, 20}, {20, 20}, {30, 20}};
    static const float col[3][4] = {{0}};
    draw_points(&e, pts, col, 3);
    float *px = ru_read_f32(e.dev, &e.rt);
    for (int t = 0; t < 3; t++)
        CHECK_EQ_INT((int)px[4 * (3 * W + 5 + 12 * t)], t);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT((int)px[4 * (20 * W + (uint32_t)pts[i][0])], 100 + i);
    free(px);
    kiln_destroy_geometry_shader(e.dev, gs);
    kiln_destroy_pixel_shader(e.dev, ps);
    env_free(&e);
}

/* ---- order under an order-dependent blend ---- */

#define ORDER_POINTS 3000u

/* The 8x8 cell (of 8 x 4) of quad q of point i: points 2m and 2m + 1 and
 * both quads of an even point share one, an odd point's second quad is in
 * the next cell. */
static uint32_t order_cell(uint32_t i, uint32_t q) { return (i / 2 + q * (i & 1)) % 32; }

/* Two full 8x8-pixel quads per point, value = varying 0 for the first
 * and x / 2 + 1/4 for the second, cut apart; blended as dst = src + dst /
 * 2, which depends on the order of every primitive. */
static void gs_two_quads(kiln_gs_args *a)
{
    const float *p = a->in;
    for (int q = 0; q < 2; q++) {
        uint32_t cell = order_cell(a->primitive_id, (uint32_t)q);
        float x0 = (float)(cell % 8) * 8, y0 = (float)(cell / 8) * 8;
        float v[8];
        for (int k = 0; k < 4; k++) {
            float px = x0 + (k & 1 ? 8 : 0), py = y0 + (k & 2 ? 8 : 0);
            ru_clip(W, H, px, py, v);
            v[2] = 0.5f;
            v[3] = 1.0f;
            v[4] = q ? p[4] * 0.5f + 0.25f : p[4];
            v[5] = p[5];
            v[6] = 0.0f;
            v[7] = 0.5f; /* alpha: the blend's dst factor */
            kiln_gs_emit(a, v);
        }
        kiln_gs_cut(a);
    }
}

static float order_value(uint32_t i) { return (float)((i * 7u) % 11u) / 4.0f; }

static void order_scene(kiln_exec_mode mode, uint32_t threads, float *out)
{
    env e;
    env_init(&e, mode, threads, KILN_FORMAT_R32G32B32A32_FLOAT);
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.rt[0] = (kiln_blend_target){1,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_SRC_ALPHA,
                                   KILN_BLEND_OP_ADD,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_ZERO,
                                   KILN_BLEND_OP_ADD,
                                   0};
    kiln_blend_state bs = ru_bs(e.dev, &bd);
    CHECK_RESULT(kiln_om_set_blend_state(e.ctx, bs, NULL), KILN_OK);
    kiln_geometry_shader gs = make_gs(e.dev, gs_two_quads, KILN_GS_INPUT_POINT,
                                      KILN_GS_OUTPUT_TRIANGLE_STRIP, 8, 1, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, gs), KILN_OK);
    static float v[ORDER_POINTS * 8];
    for (uint32_t i = 0; i < ORDER_POINTS; i++) {
        float *p = ru_vtx(v + 8 * i, W, H, 1, 1, 0.5f);
        p[0] = order_value(i);
        p[1] = (float)i;
        p[2] = 0.0f;
        p[3] = 0.5f;
    }
    kiln_query q = {0};
    CHECK_RESULT(kiln_create_query(e.dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
    CHECK_RESULT(kiln_query_begin(e.ctx, q), KILN_OK);
    ru_draw(e.dev, e.ctx, v, ORDER_POINTS, 32, KILN_TOPOLOGY_POINT_LIST);
    kiln_query_data_pipeline_statistics st = stats_of(&e, q);
    CHECK_EQ_INT(st.gs_invocations, ORDER_POINTS);
    CHECK_EQ_INT(st.gs_primitives, ORDER_POINTS * 4);
    CHECK_EQ_INT(st.ps_invocations, ORDER_POINTS * 2 * 64);
    float *px = ru_read_f32(e.dev, &e.rt);
    memcpy(out, px, sizeof(float) * 4 * W * H);
    free(px);
    kiln_destroy_query(e.dev, q);
    kiln_destroy_geometry_shader(e.dev, gs);
    kiln_destroy_blend_state(e.dev, bs);
    env_free(&e);
}

/* The gs_two_quads scene's red channel folded on the CPU in input, then
 * emission order (two triangles a quad: each pixel is covered once). */
static void order_expected(float *out)
{
    for (uint32_t i = 0; i < W * H; i++)
        out[i] = 0.0f;
    for (uint32_t i = 0; i < ORDER_POINTS; i++)
        for (uint32_t q = 0; q < 2; q++) {
            uint32_t cell = order_cell(i, q);
            float src = q ? order_value(i) * 0.5f + 0.25f : order_value(i);
            for (uint32_t y = (cell / 8) * 8; y < (cell / 8) * 8 + 8; y++)
                for (uint32_t x = (cell % 8) * 8; x < (cell % 8) * 8 + 8; x++)
                    out[y * W + x] = src * 1.0f + out[y * W + x] * 0.5f;
        }
}

static void order_all_configs(void)
{
    static float expect[W * H], ref[4 * W * H], img[4 * W * H];
    order_expected(expect);
    order_scene(KILN_EXEC_SERIAL, 0, ref);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < W * H; i++)
        bad += ru_fbits(ref[4 * i]) != ru_fbits(expect[i]);
    CHECK_EQ_INT(bad, 0);
    static const uint32_t threads[] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        order_scene(KILN_EXEC_ASYNC, threads[t], img);
        CHECK(memcmp(img, ref, sizeof img) == 0);
    }
}

/* ---- layered rendering ---- */

/* The sprite, into slice primitive_id (declared or not by the desc). */
static void gs_layer(kiln_gs_args *a)
{
    a->out_rt_array_index = a->primitive_id;
    gs_sprite(a);
}

#define SLICES 3u

/* Point i at (8 + 12 i, 8) into slice i of a 3-slice color and depth
 * array: i = 3 is past them and draws into slice 0; a shader that does
 * not declare the index draws its sprites (at y = 20) into slice 0; a
 * draw without a geometry shader too. Every slice holds exactly its
 * primitives. */
static void layered(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture2d_desc td = {W, H, 1, SLICES, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT,
                              KILN_BIND_RENDER_TARGET, 0, 0};
    kiln_texture color = {0}, depth = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &color), KILN_OK);
    td.format = KILN_FORMAT_D32_FLOAT;
    td.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &depth), KILN_OK);
    kiln_rtv rtv = {0};
    kiln_dsv dsv = {0};
    CHECK_RESULT(kiln_create_rtv(dev, color, &(kiln_rtv_desc){0, 0, 0, SLICES}, &rtv), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, depth, &(kiln_dsv_desc){0, 0, 0, SLICES}, &dsv), KILN_OK);
    const float zero[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rtv, zero), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rtv, dsv), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_pipe pipe = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &pipe);
    sprite_params sp = {2.0f, 0, 0};
    kiln_geometry_shader_desc gd = {gs_layer, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_TRIANGLE_STRIP, 4, 1,
                                    KILN_GS_WRITES_RT_ARRAY_INDEX, &sp};
    kiln_geometry_shader declared = {0}, undeclared = {0};
    CHECK_RESULT(kiln_create_geometry_shader(dev, &gd, &declared), KILN_OK);
    gd.flags = 0;
    CHECK_RESULT(kiln_create_geometry_shader(dev, &gd, &undeclared), KILN_OK);
    static const float col[4][4] = {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {1, 1, 0, 1}};
    float pts[4][2];
    for (int i = 0; i < 4; i++) {
        pts[i][0] = 8.0f + 12.0f * (float)i;
        pts[i][1] = 8.0f;
    }
    CHECK_RESULT(kiln_gs_set_shader(ctx, declared), KILN_OK);
    draw_points_ctx(dev, ctx, (const float(*)[2])pts, col, 4, -1.0f);
    CHECK_RESULT(kiln_gs_set_shader(ctx, undeclared), KILN_OK);
    draw_points_ctx(dev, ctx, (const float(*)[2])pts, col, 3, 20.0f);
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
    float tri[3 * 8];
    static const float tx[3] = {2, 10, 2}, ty[3] = {26, 26, 31};
    for (int k = 0; k < 3; k++) {
        float *p = ru_vtx(tri + 8 * k, W, H, tx[k], ty[k], 0.5f);
        p[0] = p[1] = p[2] = p[3] = 1.0f;
    }
    ru_draw(dev, ctx, tri, 3, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    static uint8_t px[SLICES][W * H * 4];
    for (uint32_t sl = 0; sl < SLICES; sl++)
        ru_read(dev, color, sl, px[sl]);
    for (uint32_t sl = 0; sl < SLICES; sl++) {
        for (uint32_t i = 0; i < 4; i++) {
            /* the first draw's sprite i: slice i, and 3 past them: 0 */
            const uint8_t *p = px[sl] + 4 * (8 * W + (uint32_t)pts[i][0]);
            bool here = i < SLICES ? i == sl : sl == 0;
            bool colored = p[0] == (uint8_t)(col[i][0] * 255) && p[1] == (uint8_t)(col[i][1] * 255) &&
                           p[2] == (uint8_t)(col[i][2] * 255) && p[3] == 255;
            CHECK_EQ_INT(colored, here);
            CHECK_EQ_INT(p[3], here ? 255 : 0);
            /* the undeclared shader's sprites: slice 0 */
            const uint8_t *q = px[sl] + 4 * (20 * W + (uint32_t)pts[i][0]);
            CHECK_EQ_INT(q[3], i < 3 && sl == 0 ? 255 : 0);
        }
        /* written pixels: 16 a sprite, and the triangle in slice 0 */
        uint32_t n = 0, tri_px = 0;
        for (uint32_t i = 0; i < W * H; i++)
            n += px[sl][4 * i + 3] != 0;
        for (uint32_t y = 24; y < 32; y++)
            for (uint32_t x = 0; x < 12; x++)
                tri_px += px[sl][4 * (y * W + x) + 3] != 0;
        CHECK_EQ_INT(n, (sl == 0 ? 2u + 3u : 1u) * 16u + tri_px);
        CHECK(sl == 0 ? tri_px >= 16 : tri_px == 0);
    }
    kiln_destroy_geometry_shader(dev, declared);
    kiln_destroy_geometry_shader(dev, undeclared);
    ru_free_pipe(dev, &pipe);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_rtv(dev, rtv);
    kiln_destroy_dsv(dev, dsv);
    kiln_destroy_texture(dev, color);
    kiln_destroy_texture(dev, depth);
    kiln_device_destroy(dev);
}

/* ---- misuse ---- */

static void gs_nothing(kiln_gs_args *a) { (void)a; }

static void misuse(void)
{
    env e;
    env_init(&e, KILN_EXEC_ASYNC, 2, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_geometry_shader gs = {0};
    kiln_geometry_shader_desc d = {
        gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 256, 0, 0, NULL};
    /* D3D10's limit: 256 x 4 scalars is the most; 257 x 4 or 128 x 8 + 1 not */
    CHECK_RESULT(kiln_create_geometry_shader(e.dev, &d, &gs), KILN_OK);
    kiln_destroy_geometry_shader(e.dev, gs);
    d.max_vertices = 257;
    CHECK_FAILS(kiln_create_geometry_shader(e.dev, &d, &gs), KILN_E_INVALID_ARG,
                KILN_LOG_GS_OUTPUT_LIMIT);
    CHECK_EQ_INT(gs.id, 0);
    d.max_vertices = 129;
    d.num_varyings = 1;
    CHECK_FAILS(kiln_create_geometry_shader(e.dev, &d, &gs), KILN_E_INVALID_ARG,
                KILN_LOG_GS_OUTPUT_LIMIT);
    d.max_vertices = 28;
    d.num_varyings = KILN_MAX_VARYINGS; /* 28 x 36 = 1008 */
    CHECK_RESULT(kiln_create_geometry_shader(e.dev, &d, &gs), KILN_OK);
    kiln_destroy_geometry_shader(e.dev, gs);
    kiln_geometry_shader_desc bad[] = {
        {NULL, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 0, NULL},
        {gs_nothing, KILN_GS_INPUT_UNDEFINED, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 0, NULL},
        {gs_nothing, (kiln_gs_input)6, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 0, NULL},
        {gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_UNDEFINED, 1, 0, 0, NULL},
        {gs_nothing, KILN_GS_INPUT_POINT, (kiln_gs_output)4, 1, 0, 0, NULL},
        {gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 0, 0, 0, NULL},
        {gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, KILN_MAX_VARYINGS + 1, 0,
         NULL},
        {gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 2, NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_FAILS(kiln_create_geometry_shader(e.dev, &bad[i], &gs), KILN_E_INVALID_ARG,
                    KILN_LOG_SHADER_DESC);
    CHECK_FAILS(kiln_create_geometry_shader(e.dev, NULL, &gs), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    d = (kiln_geometry_shader_desc){gs_nothing,
                                    KILN_GS_INPUT_POINT,
                                    KILN_GS_OUTPUT_POINT_LIST,
                                    1,
                                    1,
                                    KILN_GS_WRITES_RT_ARRAY_INDEX,
                                    NULL};

    /* draws */
    float v[6 * 8] = {0};
    kiln_buffer vb = ru_buffer(e.dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = 32, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(e.ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    static const kiln_topology adj[] = {KILN_TOPOLOGY_LINE_LIST_ADJ, KILN_TOPOLOGY_LINE_STRIP_ADJ,
                                        KILN_TOPOLOGY_TRIANGLE_LIST_ADJ,
                                        KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ};
    for (int i = 0; i < 4; i++) {
        CHECK_RESULT(kiln_ia_set_topology(e.ctx, adj[i]), KILN_OK);
        CHECK_FAILS(kiln_draw(e.ctx, 6, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_ADJACENCY_NO_GS);
    }
    kiln_geometry_shader pt =
        make_gs(e.dev, gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 1, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, pt), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_FAILS(kiln_draw(e.ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_GS_INPUT_MISMATCH);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_LINE_STRIP_ADJ), KILN_OK);
    CHECK_FAILS(kiln_draw(e.ctx, 4, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_GS_INPUT_MISMATCH);
    CHECK_RESULT(kiln_ia_set_topology(e.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(e.ctx, 3, 0), KILN_OK);
    /* The draw limit (2^28) counts what the shader may emit: 2^22 points
     * x 128 vertices is refused before anything is allocated. */
    kiln_geometry_shader amp =
        make_gs(e.dev, gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 128, 1, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, amp), KILN_OK);
    CHECK_FAILS(kiln_draw(e.ctx, 1u << 22, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_TOO_LARGE);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, pt), KILN_OK);
    kiln_destroy_geometry_shader(e.dev, amp);
    /* the pixel shader reads 1 varying; this one writes none */
    kiln_geometry_shader none =
        make_gs(e.dev, gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 0, NULL);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, none), KILN_OK);
    CHECK_FAILS(kiln_draw(e.ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_VARYINGS_MISMATCH);
    kiln_destroy_geometry_shader(e.dev, none);
    CHECK_FAILS(kiln_draw(e.ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_BOUND_DESTROYED);
    CHECK_FAILS(kiln_gs_set_shader(e.ctx, none), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_gs_set_shader(e.ctx, (kiln_geometry_shader){e.pipe.ps.id}),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_RESULT(kiln_gs_set_shader(NULL, pt),
                 KILN_E_INVALID_ARG); /* logged to stderr: no device */
    CHECK_FAILS(kiln_destroy_geometry_shader(e.dev, none), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_RESULT(kiln_gs_set_shader(e.ctx, (kiln_geometry_shader){0}), KILN_OK); /* unbinds */
    CHECK_RESULT(kiln_draw(e.ctx, 3, 0), KILN_OK);
    CHECK_FAILS(kiln_capture_register_geometry_shader(e.dev, "kiln.gs", &d), KILN_E_INVALID_ARG,
                KILN_LOG_CAPTURE_SHADER_NAME);
    CHECK_FAILS(kiln_capture_register_geometry_shader(e.dev, "gs", NULL), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    CHECK_RESULT(kiln_capture_register_geometry_shader(e.dev, "gs", &d), KILN_OK);
    kiln_geometry_shader_desc d2 = d;
    d2.fn = gs_sprite;
    CHECK_FAILS(kiln_capture_register_geometry_shader(e.dev, "gs", &d2), KILN_E_INVALID_ARG,
                KILN_LOG_CAPTURE_SHADER_NAME);
    CHECK_RESULT(kiln_finish(e.ctx), KILN_OK);
    kiln_destroy_buffer(e.dev, vb);
    kiln_destroy_geometry_shader(e.dev, pt);
    env_free(&e);
}

#if KILN_HAVE_GL
/* The osmesa backend has no geometry stage: creation of a geometry shader
 * and adjacency draws are refused as backend features. */
static void osmesa_refuses(void)
{
    kiln_device *dev = th_osmesa_device();
    if (!dev)
        return;
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_geometry_shader gs = {0};
    kiln_geometry_shader_desc d = {
        gs_nothing, KILN_GS_INPUT_POINT, KILN_GS_OUTPUT_POINT_LIST, 1, 0, 0, NULL};
    CHECK_FAILS(kiln_create_geometry_shader(dev, &d, &gs), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    kiln_vertex_shader_desc vd;
    kiln_pixel_shader_desc pd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vd, &pd), KILN_OK);
    kiln_vertex_shader vs = {0};
    kiln_pixel_shader ps = {0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    kiln_input_layout_desc ld = {2,
                                 {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0},
                                  {KILN_FORMAT_R32G32B32A32_FLOAT, 0, 16, 0, 0}}};
    kiln_input_layout il = {0};
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    ru_tex rt = ru_rt(dev, 8, 8, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    float v[8 * 8] = {0};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = 32, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_LINE_LIST_ADJ), KILN_OK);
    CHECK_FAILS(kiln_draw(ctx, 8, 0), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_LINE_LIST), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 8, 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_destroy_buffer(dev, vb);
    ru_free_tex(dev, &rt);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_device_destroy(dev);
}
#endif

/* ---- capture and replay ---- */

static sprite_params capture_sprite = {3.0f, 1, 2};

static void register_gs(kiln_device *dev, void *user)
{
    (void)user;
    kiln_geometry_shader_desc d = {.fn = gs_sprite, .user = &capture_sprite};
    CHECK_RESULT(kiln_capture_register_geometry_shader(dev, "test.sprite", &d), KILN_OK);
}

static void capture_live(uint8_t *pixels)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    register_gs(dev, NULL);
    CHECK_RESULT(kiln_capture_begin(dev, "gs.kcap"), KILN_OK);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader_desc vd;
    kiln_pixel_shader_desc pd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vd, &pd), KILN_OK);
    kiln_vertex_shader vs = {0};
    kiln_pixel_shader ps = {0};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    kiln_input_layout_desc ld = {2,
                                 {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0},
                                  {KILN_FORMAT_R32G32B32A32_FLOAT, 0, 16, 0, 0}}};
    kiln_input_layout il = {0};
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    kiln_geometry_shader gs = make_gs(dev, gs_sprite, KILN_GS_INPUT_POINT,
                                      KILN_GS_OUTPUT_TRIANGLE_STRIP, 12, 1, &capture_sprite);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    const float clear[4] = {0.1f, 0.2f, 0.3f, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(ctx, gs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    float v[16 * 8];
    for (int i = 0; i < 16; i++) {
        float *p = ru_vtx(v + 8 * i, W, H, 4 + 3.7 * i, 5 + 1.5 * i, 0.5f);
        p[0] = (float)(i & 1);
        p[1] = (float)(i % 3) / 2;
        p[2] = 1.0f - (float)i / 16;
        p[3] = 1.0f;
    }
    ru_draw(dev, ctx, v, 16, 32, KILN_TOPOLOGY_POINT_LIST);
    CHECK_RESULT(kiln_gs_set_shader(ctx, (kiln_geometry_shader){0}), KILN_OK);
    CHECK_RESULT(kiln_destroy_geometry_shader(dev, gs), KILN_OK);
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    ru_read(dev, rt.tex, 0, pixels);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_device_destroy(dev);
}

static void capture_replay(void)
{
    static uint8_t live[W * H * 4];
    capture_live(live);
    size_t len;
    uint8_t *bytes = cu_read("gs.kcap", &len);
    CHECK(bytes != NULL);
    if (!bytes)
        return;
    for (int m = 0; m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3, register_gs,
                               &img, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = cu_target(&img, 0);
        CHECK(t && t->width == W && memcmp(t->pixels, live, sizeof live) == 0);
        cu_free(&img);
    }
    /* Without the name registered, the replay stops at the shader. */
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_SERIAL, 1, NULL, NULL, &rep), KILN_E_UNSUPPORTED);
    free(bytes);
}

int main(void)
{
    th_logs.quiet = 1;
    fprintf(stderr, "-- input orders\n");
    input_orders();
    fprintf(stderr, "-- sprites\n");
    sprites(0, 0);
    sprites(1, 0);
    sprites(0, 3);
    fprintf(stderr, "-- line strips\n");
    line_strips();
    fprintf(stderr, "-- primitive ids\n");
    primitive_ids();
    fprintf(stderr, "-- order\n");
    order_all_configs();
    fprintf(stderr, "-- layered\n");
    layered(KILN_EXEC_SERIAL, 0);
    layered(KILN_EXEC_ASYNC, 4);
    fprintf(stderr, "-- misuse\n");
    misuse();
#if KILN_HAVE_GL
    osmesa_refuses();
#endif
    fprintf(stderr, "-- capture\n");
    capture_replay();
    return th_exit();
}
