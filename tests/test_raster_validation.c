/*
 * test_raster_validation: bad input to the drawing API (kiln.h "Drawing")
 * returns its code, logs exactly once with its message id, and queues
 * nothing.
 *
 * Draw-time checks: each case starts from a complete, valid pipeline (a
 * "kit" of fresh objects) whose draw is shown to succeed and queue one
 * scene; then one thing is broken and the draw must fail with the expected
 * code and id, and kiln_flush afterwards must queue nothing
 * (commands_queued unchanged) - a rejected draw must not join the scene.
 *
 * Creation checks: shader, layout and state descs, setters with bad slot
 * ranges or buffers lacking the bind flag, render targets of different
 * sizes, generate_mips without the render-target bind, and stale or
 * wrong-typed handles of every new object type. A failing create zeroes
 * its out-handle.
 */
#include "raster_util.h"

#include <stdio.h>

static kiln_device *dev;
static kiln_context *ctx;

static uint64_t queued(void)
{
    kiln_device_stats s;
    memset(&s, 0, sizeof s);
    if (kiln_device_get_stats(dev, &s) != KILN_OK)
        return UINT64_MAX;
    return s.commands_queued;
}

/* The draw fails with code/id, and nothing reaches the queue even after a
 * flush. */
#define DFAILS(call, code, id)                                                                     \
    do {                                                                                           \
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);                                                    \
        uint64_t q0_ = queued();                                                                   \
        CHECK_FAILS(call, code, id);                                                               \
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);                                                    \
        th_check(queued() == q0_, #call " queues nothing", __FILE__, __LINE__);                    \
    } while (0)

/* The call succeeds without logging. */
#define OK(call)                                                                                   \
    do {                                                                                           \
        th_log_reset();                                                                            \
        CHECK_RESULT(call, KILN_OK);                                                               \
        th_check(th_log_count() == 0, #call " logs nothing", __FILE__, __LINE__);                  \
    } while (0)

/* ---- the kit: a complete valid pipeline ---- */

typedef struct kit {
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout il;
    kiln_buffer vb, ib, cb;
    kiln_rasterizer_state rs;
    kiln_depth_stencil_state dss;
    kiln_blend_state bs;
    kiln_sampler samp;
    kiln_texture tex, rt, ds;
    kiln_srv srv;
    kiln_rtv rtv;
    kiln_dsv dsv;
} kit;

static kit K;

static void kit_create(void)
{
    memset(&K, 0, sizeof K);
    K.vs = ru_make_vs(dev, 2, 1);
    K.il = ru_make_layout(dev, K.vs, 2);
    kiln_pixel_shader_desc pd = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &K.ps), KILN_OK);
    float verts[3][8];
    memset(verts, 0, sizeof verts);
    for (int k = 0; k < 3; k++) {
        verts[k][0] = k == 1 ? 1.0f : -1.0f;
        verts[k][1] = k == 2 ? -1.0f : 1.0f;
        verts[k][3] = 1.0f;
        verts[k][4] = 1.0f;
    }
    K.vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, verts, sizeof verts); /* 96 bytes: 3 vertices */
    uint16_t idx[3] = {0, 1, 2};
    K.ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx); /* 6 bytes */
    const float c[4] = {1, 2, 3, 4};
    K.cb = ru_cbuffer(dev, c, 4);
    K.rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    K.dss = ru_dss(dev, (kiln_depth_stencil_desc){0});
    K.bs = ru_bs(dev, &(kiln_blend_desc){0});
    CHECK_RESULT(kiln_create_sampler(dev, &(kiln_sampler_desc){0}, &K.samp), KILN_OK);
    kiln_texture2d_desc td = {
        4, 4, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &K.tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, K.tex, NULL, &K.srv), KILN_OK);
    kiln_texture2d_desc rd = {8,
                              8,
                              1,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &rd, NULL, &K.rt), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, K.rt, NULL, &K.rtv), KILN_OK);
    kiln_texture2d_desc dd = {8,
                              8,
                              1,
                              1,
                              KILN_FORMAT_D32_FLOAT,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &K.ds), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, K.ds, NULL, &K.dsv), KILN_OK);
}

/* Binds the kit into a context cleared of everything else. */
static void kit_bind(void)
{
    kiln_buffer nob[KILN_MAX_CONSTANT_BUFFERS] = {{0}}; /* 14: vertex buffers (8) and constant buffers */
    uint32_t zero[KILN_MAX_VERTEX_BUFFERS] = {0};
    kiln_srv nos[KILN_MAX_SHADER_RESOURCES] = {{0}};
    kiln_sampler nosm[KILN_MAX_SAMPLERS] = {{0}};
    OK(kiln_ia_set_vertex_buffers(ctx, 0, KILN_MAX_VERTEX_BUFFERS, nob, zero, zero));
    OK(kiln_ps_set_shader_resources(ctx, 0, KILN_MAX_SHADER_RESOURCES, nos));
    OK(kiln_ps_set_samplers(ctx, 0, KILN_MAX_SAMPLERS, nosm));
    OK(kiln_vs_set_constant_buffers(ctx, 0, KILN_MAX_CONSTANT_BUFFERS, nob));
    OK(kiln_ps_set_constant_buffers(ctx, 0, KILN_MAX_CONSTANT_BUFFERS, nob));
    OK(kiln_vs_set_shader(ctx, K.vs));
    OK(kiln_ps_set_shader(ctx, K.ps));
    OK(kiln_ia_set_input_layout(ctx, K.il));
    uint32_t stride = 32, off = 0;
    OK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &K.vb, &stride, &off));
    OK(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT16, 0));
    OK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    OK(kiln_vs_set_constant_buffers(ctx, 0, 1, &K.cb));
    OK(kiln_ps_set_constant_buffers(ctx, 0, 1, &K.cb));
    OK(kiln_ps_set_shader_resources(ctx, 0, 1, &K.srv));
    OK(kiln_ps_set_samplers(ctx, 0, 1, &K.samp));
    OK(kiln_rs_set_state(ctx, K.rs));
    OK(kiln_om_set_depth_stencil_state(ctx, K.dss, 0));
    OK(kiln_om_set_blend_state(ctx, K.bs, NULL));
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, K.dsv));
    kiln_viewport vp = {0, 0, 8, 8, 0, 1};
    OK(kiln_rs_set_viewport(ctx, &vp));
}

/* The kit draws (plain and indexed) and the scene reaches the queue. */
static void kit_works_how(const char *what, int indexed)
{
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    uint64_t q0 = queued();
    th_log_reset();
    kiln_result a = kiln_draw(ctx, 3, 0), b = indexed ? kiln_draw_indexed(ctx, 3, 0, 0) : KILN_OK;
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    int ok = a == KILN_OK && b == KILN_OK && th_log_count() == 0 && queued() == q0 + 1;
    th_check(ok, what, __FILE__, __LINE__);
    if (!ok)
        fprintf(stderr, "    %s: draw %s, indexed %s, %u logs, %llu queued\n", what,
                kiln_result_string(a), kiln_result_string(b), th_log_count(),
                (unsigned long long)(queued() - q0));
}

static void kit_works(const char *what) { kit_works_how(what, 1); }

static void kit_destroy(void)
{
    /* unbind first (the context keeps references) */
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_destroy_vertex_shader(dev, K.vs);
    kiln_destroy_pixel_shader(dev, K.ps);
    kiln_destroy_input_layout(dev, K.il);
    kiln_destroy_buffer(dev, K.vb);
    kiln_destroy_buffer(dev, K.ib);
    kiln_destroy_buffer(dev, K.cb);
    kiln_destroy_rasterizer_state(dev, K.rs);
    kiln_destroy_depth_stencil_state(dev, K.dss);
    kiln_destroy_blend_state(dev, K.bs);
    kiln_destroy_sampler(dev, K.samp);
    kiln_destroy_srv(dev, K.srv);
    kiln_destroy_rtv(dev, K.rtv);
    kiln_destroy_dsv(dev, K.dsv);
    kiln_destroy_texture(dev, K.tex);
    kiln_destroy_texture(dev, K.rt);
    kiln_destroy_texture(dev, K.ds);
    th_log_reset();
}

static void fresh(void)
{
    kit_create();
    kit_bind();
}

/* ---- draw-time validation ---- */

static void test_missing_state(void)
{
    fresh();
    kit_works("the valid kit draws");

    OK(kiln_vs_set_shader(ctx, (kiln_vertex_shader){0}));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER);
    DFAILS(kiln_draw_indexed(ctx, 3, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER);
    OK(kiln_vs_set_shader(ctx, K.vs));
    OK(kiln_ps_set_shader(ctx, (kiln_pixel_shader){0}));
    OK(kiln_draw(ctx, 3, 0)); /* depth only: the kit's depth-stencil view is tested */
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, (kiln_dsv){0}));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER);
    DFAILS(kiln_draw_instanced(ctx, 3, 2, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER);
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, K.dsv));
    OK(kiln_ps_set_shader(ctx, K.ps));

    OK(kiln_ia_set_input_layout(ctx, (kiln_input_layout){0}));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_LAYOUT);
    OK(kiln_ia_set_input_layout(ctx, K.il));

    /* the layout reads slot 0, which has no buffer */
    kiln_buffer none = {0};
    uint32_t stride = 32, off = 0;
    OK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &none, &stride, &off));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_LAYOUT);
    DFAILS(kiln_draw_indexed(ctx, 3, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_LAYOUT);
    OK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &K.vb, &stride, &off));

    OK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_UNDEFINED));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_TOPOLOGY);
    OK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST));

    OK(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT16, 0));
    DFAILS(kiln_draw_indexed(ctx, 3, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_INDEX_BUFFER);
    DFAILS(kiln_draw_indexed_instanced(ctx, 3, 2, 0, 0, 0), KILN_E_INVALID_CALL,
           KILN_LOG_DRAW_NO_INDEX_BUFFER);
    kit_works_how("a plain draw needs no index buffer", 0);
    OK(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT16, 0));
    kit_works("the kit draws again once restored");
    kit_destroy();
}

/* A rejected draw leaves the draws gathered before it alone. */
static void test_rejected_draw_keeps_scene(void)
{
    fresh();
    const float zero[4] = {0, 0, 0, 0};
    OK(kiln_clear_rtv(ctx, K.rtv, zero));
    OK(kiln_clear_dsv(ctx, K.dsv, KILN_CLEAR_DEPTH, 1.0f, 0));
    OK(kiln_draw(ctx, 3, 0)); /* upper-left half, color (1, 0, 0, 0) */
    OK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_UNDEFINED));
    CHECK_FAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_TOPOLOGY);
    OK(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST));
    uint8_t px[8 * 8 * 4];
    OK(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}));
    th_check(ru_read(dev, K.rt, 0, px) && px[0] == 255 && px[1] == 0 && px[4 * 63] == 0,
             "the draw before a rejected one is rendered", __FILE__, __LINE__);
    kit_destroy();
}

static void test_buffer_sizes(void)
{
    fresh();
    /* vertex buffer: 3 vertices of 32 bytes */
    DFAILS(kiln_draw(ctx, 4, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    DFAILS(kiln_draw(ctx, 3, 1), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    DFAILS(kiln_draw_instanced(ctx, 3, 5, 1, 0), KILN_E_INVALID_ARG,
           KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    /* the last vertex that fits, and the one after (the limit a draw
     * compares with is kept while nothing is rebound: both sides of it) */
    OK(kiln_draw(ctx, 1, 2));
    DFAILS(kiln_draw(ctx, 1, 3), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    OK(kiln_draw(ctx, 1, 2));
    uint32_t stride = 32, off = 16;
    OK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &K.vb, &stride, &off));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    OK(kiln_draw(ctx, 1, 1)); /* 16 bytes in: vertices 0 and 1 fit */
    DFAILS(kiln_draw(ctx, 1, 2), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    off = 0;
    OK(kiln_ia_set_vertex_buffers(ctx, 0, 1, &K.vb, &stride, &off));
    /* index buffer: 3 uint16 indices */
    DFAILS(kiln_draw_indexed(ctx, 4, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    DFAILS(kiln_draw_indexed(ctx, 2, 2, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    DFAILS(kiln_draw_indexed(ctx, 1, 0xffffffffu, 0), KILN_E_INVALID_ARG,
           KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    OK(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT16, 2));
    DFAILS(kiln_draw_indexed(ctx, 3, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    OK(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT32, 0)); /* 6 bytes: one 32-bit index */
    DFAILS(kiln_draw_indexed(ctx, 2, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    OK(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT16, 0));
    kit_works("the kit draws with its buffers restored");
    kit_destroy();

    /* per-instance data: 2 elements of 16 bytes in slot 1, step rates */
    kit_create();
    kit_bind();
    kiln_input_layout_desc ld = {2,
                                 {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0},
                                  {KILN_FORMAT_R32G32B32A32_FLOAT, 1, 0, 1, 1}}};
    kiln_input_layout il;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, K.vs, &il), KILN_OK);
    float inst[2][4] = {{1, 1, 1, 1}, {2, 2, 2, 2}};
    kiln_buffer ib = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, inst, sizeof inst);
    uint32_t s16 = 16, o0 = 0;
    OK(kiln_ia_set_vertex_buffers(ctx, 1, 1, &ib, &s16, &o0));
    OK(kiln_ia_set_input_layout(ctx, il));
    OK(kiln_draw_instanced(ctx, 3, 2, 0, 0));
    DFAILS(kiln_draw_instanced(ctx, 3, 3, 0, 0), KILN_E_INVALID_ARG,
           KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    DFAILS(kiln_draw_instanced(ctx, 3, 1, 0, 2), KILN_E_INVALID_ARG,
           KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    kiln_input_layout_desc ld2 = ld;
    ld2.elements[1].instance_step_rate = 2; /* 4 instances read elements 0, 0, 1, 1 */
    kiln_input_layout il2;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld2, K.vs, &il2), KILN_OK);
    OK(kiln_ia_set_input_layout(ctx, il2));
    OK(kiln_draw_instanced(ctx, 3, 4, 0, 0));
    DFAILS(kiln_draw_instanced(ctx, 3, 5, 0, 0), KILN_E_INVALID_ARG,
           KILN_LOG_DRAW_BUFFER_TOO_SMALL);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_buffer nob = {0};
    OK(kiln_ia_set_vertex_buffers(ctx, 1, 1, &nob, &s16, &o0));
    OK(kiln_ia_set_input_layout(ctx, K.il));
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_input_layout(dev, il2);
    kiln_destroy_buffer(dev, ib);
    kit_destroy();
}

static void test_shader_mismatches(void)
{
    fresh();
    /* PS reads 2 varyings, the VS writes 1 */
    kiln_pixel_shader_desc pd = {ru_ps_vary, 2, 1, 0, NULL, RU_USER(1, 2), 0};
    kiln_pixel_shader ps2;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps2), KILN_OK);
    OK(kiln_ps_set_shader(ctx, ps2));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_VARYINGS_MISMATCH);
    OK(kiln_ps_set_shader(ctx, K.ps));
    /* a layout made for a 2-input VS, used with a 3-input VS */
    kiln_vertex_shader vs3 = ru_make_vs(dev, 3, 1);
    OK(kiln_vs_set_shader(ctx, vs3));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_LAYOUT_SHADER_MISMATCH);
    OK(kiln_vs_set_shader(ctx, K.vs));
    kit_works("matching shaders draw");
    kiln_destroy_pixel_shader(dev, ps2);
    kiln_destroy_vertex_shader(dev, vs3);
    kit_destroy();
}

/* Destroying any bound object makes the next draw fail. */
static void test_bound_destroyed(void)
{
    static const char *const names[] = {"vertex shader",
                                        "pixel shader",
                                        "input layout",
                                        "vertex buffer",
                                        "index buffer",
                                        "constant buffer",
                                        "rasterizer state",
                                        "depth-stencil state",
                                        "blend state",
                                        "sampler",
                                        "shader-resource texture",
                                        "render-target texture",
                                        "depth-stencil texture",
                                        "render-target view",
                                        "shader-resource view",
                                        "depth-stencil view"};
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
        fresh();
        kiln_result r = KILN_OK;
        switch (k) {
        case 0:
            r = kiln_destroy_vertex_shader(dev, K.vs);
            break;
        case 1:
            r = kiln_destroy_pixel_shader(dev, K.ps);
            break;
        case 2:
            r = kiln_destroy_input_layout(dev, K.il);
            break;
        case 3:
            r = kiln_destroy_buffer(dev, K.vb);
            break;
        case 4:
            r = kiln_destroy_buffer(dev, K.ib);
            break;
        case 5:
            r = kiln_destroy_buffer(dev, K.cb);
            break;
        case 6:
            r = kiln_destroy_rasterizer_state(dev, K.rs);
            break;
        case 7:
            r = kiln_destroy_depth_stencil_state(dev, K.dss);
            break;
        case 8:
            r = kiln_destroy_blend_state(dev, K.bs);
            break;
        case 9:
            r = kiln_destroy_sampler(dev, K.samp);
            break;
        case 10:
            r = kiln_destroy_texture(dev, K.tex);
            break;
        case 11:
            r = kiln_destroy_texture(dev, K.rt);
            break;
        case 12:
            r = kiln_destroy_texture(dev, K.ds);
            break;
        case 13:
            r = kiln_destroy_rtv(dev, K.rtv);
            break;
        case 14:
            r = kiln_destroy_srv(dev, K.srv);
            break;
        default:
            r = kiln_destroy_dsv(dev, K.dsv);
            break;
        }
        CHECK_RESULT(r, KILN_OK);
        char what[96];
        if (strcmp(names[k], "sampler") == 0) {
            /* A bound sampler's desc is captured when bound: destroying its
             * handle leaves nothing dangling, and the draw goes on. */
            snprintf(what, sizeof what, "a draw with a destroyed sampler bound still draws");
            th_log_reset();
            CHECK_RESULT(kiln_draw(ctx, 3, 0), KILN_OK);
            th_check(th_log_count() == 0, what, __FILE__, __LINE__);
            CHECK_RESULT(kiln_finish(ctx), KILN_OK);
            th_logs.quiet = 1;
            kit_destroy();
            th_logs.quiet = 0;
            continue;
        }
        snprintf(what, sizeof what,
                 "a draw with a destroyed %s bound fails with DRAW_BOUND_DESTROYED", names[k]);
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        uint64_t q0 = queued();
        th_log_reset();
        kiln_result d = k == 4 ? kiln_draw_indexed(ctx, 3, 0, 0) : kiln_draw(ctx, 3, 0);
        int ok = d == KILN_E_INVALID_CALL && th_log_count() == 1 &&
                 th_log_last() == KILN_LOG_DRAW_BOUND_DESTROYED;
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        ok &= queued() == q0;
        th_check(ok, what, __FILE__, __LINE__);
        if (!ok)
            fprintf(stderr, "    %s: got %s, %u logs (last %s)\n", what, kiln_result_string(d),
                    th_log_count(), kiln_log_id_string(th_log_last()));
        th_logs.quiet = 1; /* kit_destroy destroys the destroyed object again */
        kit_destroy();
        th_logs.quiet = 0;
    }
}

static void test_hazards(void)
{
    fresh();
    /* the render target's own texture as a shader resource */
    kiln_srv rsrv;
    CHECK_RESULT(kiln_create_srv(dev, K.rt, NULL, &rsrv), KILN_OK);
    OK(kiln_ps_set_shader_resources(ctx, 3, 1, &rsrv));
    DFAILS(kiln_draw(ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    kiln_srv none = {0};
    OK(kiln_ps_set_shader_resources(ctx, 3, 1, &none));
    /* the depth buffer as a shader resource */
    kiln_srv dsrv;
    CHECK_RESULT(kiln_create_srv(dev, K.ds, NULL, &dsrv), KILN_OK);
    OK(kiln_ps_set_shader_resources(ctx, 0, 1, &dsrv));
    DFAILS(kiln_draw_indexed(ctx, 3, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    /* no hazard once the depth buffer is unbound */
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, (kiln_dsv){0}));
    kit_works("sampling the depth texture with it unbound as target draws");
    OK(kiln_ps_set_shader_resources(ctx, 0, 1, &K.srv));
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, K.dsv));
    kiln_destroy_srv(dev, rsrv);
    kiln_destroy_srv(dev, dsrv);
    kit_destroy();
}

/* ---- creation ---- */

static void test_shader_descs(void)
{
    kiln_vertex_shader vs = {12345};
    kiln_pixel_shader ps = {12345};
    CHECK_FAILS(kiln_create_vertex_shader(dev, NULL, &vs), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    CHECK_EQ_INT(vs.id, 0);
    const kiln_vertex_shader_desc bad_vs[] = {
        {NULL, 1, 0, NULL, NULL},
        {ru_vs_pass, 0, 0, NULL, NULL},
        {ru_vs_pass, KILN_MAX_INPUT_ELEMENTS + 1, 0, NULL, NULL},
        {ru_vs_pass, 1, KILN_MAX_VARYINGS + 1, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof bad_vs / sizeof bad_vs[0]; i++) {
        vs.id = 12345;
        CHECK_FAILS(kiln_create_vertex_shader(dev, &bad_vs[i], &vs), KILN_E_INVALID_ARG,
                    KILN_LOG_SHADER_DESC);
        CHECK_EQ_INT(vs.id, 0);
    }
    const kiln_pixel_shader_desc bad_ps[] = {
        {NULL, 0, 1, 0, NULL, NULL, 0},
        {ru_ps_none, KILN_MAX_VARYINGS + 1, 1, 0, NULL, NULL, 0},
        {ru_ps_none, 0, KILN_MAX_RENDER_TARGETS + 1, 0, NULL, NULL, 0},
        {ru_ps_none, 0, 1, 4u, NULL, NULL, 0}, /* past KILN_PS_NO_Z */
        {ru_ps_none, 0, 1, 0x80000000u, NULL, NULL, 0},
    };
    for (size_t i = 0; i < sizeof bad_ps / sizeof bad_ps[0]; i++) {
        ps.id = 12345;
        CHECK_FAILS(kiln_create_pixel_shader(dev, &bad_ps[i], &ps), KILN_E_INVALID_ARG,
                    KILN_LOG_SHADER_DESC);
        CHECK_EQ_INT(ps.id, 0);
    }
    /* the limits themselves are fine */
    kiln_vertex_shader_desc okv = {ru_vs_pass, KILN_MAX_INPUT_ELEMENTS, KILN_MAX_VARYINGS, NULL,
                                   NULL};
    OK(kiln_create_vertex_shader(dev, &okv, &vs));
    kiln_pixel_shader_desc okp = {
        ru_ps_none, KILN_MAX_VARYINGS, KILN_MAX_RENDER_TARGETS, KILN_PS_MAY_DISCARD, NULL, NULL, 0};
    OK(kiln_create_pixel_shader(dev, &okp, &ps));
    kiln_destroy_vertex_shader(dev, vs);
    kiln_destroy_pixel_shader(dev, ps);
}

static void test_layout_descs(void)
{
    kiln_vertex_shader vs2 = ru_make_vs(dev, 2, 0);
    kiln_input_layout il = {12345};
    kiln_input_layout_desc good = {
        2,
        {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0}, {KILN_FORMAT_R8G8B8A8_UNORM, 1, 16, 1, 3}}};
    OK(kiln_create_input_layout(dev, &good, vs2, &il));
    kiln_destroy_input_layout(dev, il);
    CHECK_FAILS(kiln_create_input_layout(dev, NULL, vs2, &il), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    struct {
        int field;
        uint32_t value;
    } bad[] = {
        {0, 0},                           /* no elements */
        {0, KILN_MAX_INPUT_ELEMENTS + 1}, /* too many */
        {1, KILN_FORMAT_R8_UNORM},        /* not a vertex format */
        {1, KILN_FORMAT_D32_FLOAT},
        {1, KILN_FORMAT_UNKNOWN},
        {1, 999},
        {2, KILN_MAX_VERTEX_BUFFERS}, /* slot */
        {3, 2},                       /* per_instance must be 0 or 1 */
        {4, 4096},                    /* offset */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kiln_input_layout_desc d = good;
        switch (bad[i].field) {
        case 0:
            d.num_elements = bad[i].value;
            break;
        case 1:
            d.elements[1].format = (kiln_format)bad[i].value;
            break;
        case 2:
            d.elements[1].slot = bad[i].value;
            break;
        case 3:
            d.elements[1].per_instance = bad[i].value;
            break;
        default:
            d.elements[1].offset = bad[i].value;
            break;
        }
        il.id = 12345;
        CHECK_FAILS(kiln_create_input_layout(dev, &d, vs2, &il), KILN_E_INVALID_ARG,
                    KILN_LOG_LAYOUT_DESC);
        CHECK_EQ_INT(il.id, 0);
    }
    /* element count differs from the shader's inputs */
    kiln_input_layout_desc one = good;
    one.num_elements = 1;
    CHECK_FAILS(kiln_create_input_layout(dev, &one, vs2, &il), KILN_E_INVALID_ARG,
                KILN_LOG_LAYOUT_SHADER_MISMATCH);
    kiln_input_layout_desc three = good;
    three.num_elements = 3;
    three.elements[2] = three.elements[0];
    CHECK_FAILS(kiln_create_input_layout(dev, &three, vs2, &il), KILN_E_INVALID_ARG,
                KILN_LOG_LAYOUT_SHADER_MISMATCH);
    /* the shader handle: 0, stale, wrong type */
    CHECK_FAILS(kiln_create_input_layout(dev, &good, (kiln_vertex_shader){0}, &il),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_NULL);
    kiln_pixel_shader ps;
    kiln_pixel_shader_desc pd = {ru_ps_none, 0, 0, 0, NULL, NULL, 0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    CHECK_FAILS(kiln_create_input_layout(dev, &good, (kiln_vertex_shader){ps.id}, &il),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    kiln_destroy_vertex_shader(dev, vs2);
    CHECK_FAILS(kiln_create_input_layout(dev, &good, vs2, &il), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    kiln_destroy_pixel_shader(dev, ps);
}

static void test_state_descs(void)
{
    kiln_rasterizer_state rs = {12345};
    const kiln_rasterizer_desc bad_rs[] = {
        {.fill = (kiln_fill_mode)2},           {.cull = (kiln_cull_mode)4},
        {.cull = (kiln_cull_mode)-1},          {.depth_bias_clamp = NAN},
        {.slope_scaled_depth_bias = INFINITY},
    };
    for (size_t i = 0; i < sizeof bad_rs / sizeof bad_rs[0]; i++) {
        rs.id = 12345;
        CHECK_FAILS(kiln_create_rasterizer_state(dev, &bad_rs[i], &rs), KILN_E_INVALID_ARG,
                    KILN_LOG_STATE_DESC);
        CHECK_EQ_INT(rs.id, 0);
    }
    CHECK_FAILS(kiln_create_rasterizer_state(dev, NULL, &rs), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);

    kiln_depth_stencil_state ds = {12345};
    kiln_depth_stencil_desc bad_ds[6];
    memset(bad_ds, 0, sizeof bad_ds);
    bad_ds[0].depth_func = (kiln_compare)9;
    bad_ds[1].front.fail_op = (kiln_stencil_op)9;
    bad_ds[2].back.pass_op = (kiln_stencil_op)100;
    bad_ds[3].back.func = (kiln_compare)9;
    bad_ds[4].stencil_read_mask = 0x101;
    bad_ds[5].stencil_write_mask = 0x200;
    for (size_t i = 0; i < 6; i++) {
        ds.id = 12345;
        CHECK_FAILS(kiln_create_depth_stencil_state(dev, &bad_ds[i], &ds), KILN_E_INVALID_ARG,
                    KILN_LOG_STATE_DESC);
        CHECK_EQ_INT(ds.id, 0);
    }

    kiln_blend_state bs = {12345};
    kiln_blend_desc bad_bs[7];
    memset(bad_bs, 0, sizeof bad_bs);
    bad_bs[0].rt[0].src = (kiln_blend_factor)14;
    bad_bs[1].rt[3].dst = (kiln_blend_factor)14;
    bad_bs[2].rt[1].op = (kiln_blend_op)6;
    bad_bs[3].rt[2].op_alpha = (kiln_blend_op)6;
    bad_bs[4].rt[0].write_mask = 0x11;
    bad_bs[5].rt[0].enable = 2;
    bad_bs[6].rt[3].src_alpha = (kiln_blend_factor)-1;
    for (size_t i = 0; i < 7; i++) {
        bs.id = 12345;
        CHECK_FAILS(kiln_create_blend_state(dev, &bad_bs[i], &bs), KILN_E_INVALID_ARG,
                    KILN_LOG_STATE_DESC);
        CHECK_EQ_INT(bs.id, 0);
    }

    kiln_sampler sm = {12345};
    kiln_sampler_desc bad_sm[6];
    memset(bad_sm, 0, sizeof bad_sm);
    bad_sm[0].min_filter = (kiln_filter)(KILN_FILTER_ANISOTROPIC + 1);
    bad_sm[1].mip_filter = KILN_FILTER_ANISOTROPIC; /* only with min_filter ANISOTROPIC */
    bad_sm[2].address_u = (kiln_address)(KILN_ADDRESS_MIRROR_ONCE + 1);
    bad_sm[3].address_v = (kiln_address)(KILN_ADDRESS_MIRROR_ONCE + 1);
    bad_sm[4].mip_lod_bias = NAN;
    bad_sm[5].lod_clamp_enable = 1;
    bad_sm[5].min_lod = 3;
    bad_sm[5].max_lod = 2;
    for (size_t i = 0; i < 6; i++) {
        sm.id = 12345;
        CHECK_FAILS(kiln_create_sampler(dev, &bad_sm[i], &sm), KILN_E_INVALID_ARG,
                    KILN_LOG_STATE_DESC);
        CHECK_EQ_INT(sm.id, 0);
    }
    /* zero descs are valid */
    OK(kiln_create_rasterizer_state(dev, &(kiln_rasterizer_desc){0}, &rs));
    OK(kiln_create_depth_stencil_state(dev, &(kiln_depth_stencil_desc){0}, &ds));
    OK(kiln_create_blend_state(dev, &(kiln_blend_desc){0}, &bs));
    OK(kiln_create_sampler(dev, &(kiln_sampler_desc){0}, &sm));
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_depth_stencil_state(dev, ds);
    kiln_destroy_blend_state(dev, bs);
    kiln_destroy_sampler(dev, sm);

    /* viewport ranges, topology and index format enums */
    const kiln_viewport bad_vp[] = {
        {0, 0, -1, 8, 0, 1},      {0, 0, 8, 8, -0.1f, 1}, {0, 0, 8, 8, 0, 1.5f},
        {0, 0, 8, 8, 0.8f, 0.2f}, {0, 0, NAN, 8, 0, 1},
    };
    for (size_t i = 0; i < sizeof bad_vp / sizeof bad_vp[0]; i++)
        CHECK_FAILS(kiln_rs_set_viewport(ctx, &bad_vp[i]), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    CHECK_FAILS(kiln_ia_set_topology(ctx, (kiln_topology)(KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ + 1)), KILN_E_INVALID_ARG,
                KILN_LOG_DESC_INVALID_ENUM);
    CHECK_FAILS(kiln_rs_set_viewport(ctx, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
}

static void test_setters(void)
{
    kit_create();
    kit_bind();
    uint32_t st[9] = {32, 32, 32, 32, 32, 32, 32, 32, 32}, of[9] = {0};
    kiln_buffer vbs[9] = {K.vb, K.vb, K.vb, K.vb, K.vb, K.vb, K.vb, K.vb, K.vb};
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 7, 2, vbs, st, of), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 0, 9, vbs, st, of), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 9, 0, vbs, st, of), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    /* D3D10's slot counts: 14 constant buffers, 128 views, 16 samplers per
     * stage; the last slot binds, one past it is refused. */
    CHECK_FAILS(kiln_vs_set_constant_buffers(ctx, 14, 1, &K.cb), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ps_set_constant_buffers(ctx, 12, 3, vbs), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ps_set_shader_resources(ctx, 128, 1, &K.srv), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_vs_set_shader_resources(ctx, 127, 2, (kiln_srv[2]){K.srv, K.srv}), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ps_set_samplers(ctx, 13, 4, (kiln_sampler[4]){K.samp, K.samp, K.samp, K.samp}),
                KILN_E_INVALID_ARG, KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_vs_set_samplers(ctx, 16, 1, &K.samp), KILN_E_INVALID_ARG, KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_vs_set_samplers(ctx, 0, 1, (kiln_sampler[1]){{K.srv.id}}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    OK(kiln_vs_set_constant_buffers(ctx, 13, 1, &K.cb));
    OK(kiln_ps_set_shader_resources(ctx, 127, 1, &K.srv));
    OK(kiln_vs_set_shader_resources(ctx, 127, 1, &K.srv));
    OK(kiln_ps_set_samplers(ctx, 15, 1, &K.samp));
    OK(kiln_vs_set_samplers(ctx, 15, 1, &K.samp));
    kit_works("the highest slots bound");
    kiln_srv nos[1] = {{0}};
    kiln_sampler nosm[1] = {{0}};
    kiln_buffer nob[1] = {{0}};
    OK(kiln_vs_set_constant_buffers(ctx, 13, 1, nob));
    OK(kiln_ps_set_shader_resources(ctx, 127, 1, nos));
    OK(kiln_vs_set_shader_resources(ctx, 127, 1, nos));
    OK(kiln_ps_set_samplers(ctx, 15, 1, nosm));
    OK(kiln_vs_set_samplers(ctx, 15, 1, nosm));
    kiln_rtv rtvs[KILN_MAX_RENDER_TARGETS + 1];
    for (int i = 0; i <= KILN_MAX_RENDER_TARGETS; i++)
        rtvs[i] = K.rtv;
    CHECK_FAILS(kiln_om_set_render_targets(ctx, KILN_MAX_RENDER_TARGETS + 1, rtvs, K.dsv),
                KILN_E_INVALID_ARG, KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT32, 2), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ia_set_index_buffer(ctx, K.ib, KILN_INDEX_UINT16, 1), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_RANGE);
    CHECK_FAILS(kiln_ia_set_index_buffer(ctx, K.ib, (kiln_index_format)2, 0), KILN_E_INVALID_ARG,
                KILN_LOG_DESC_INVALID_ENUM);
    /* buffers without the bind flag for the slot */
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 0, 1, &K.ib, st, of), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_USAGE);
    CHECK_FAILS(kiln_ia_set_index_buffer(ctx, K.vb, KILN_INDEX_UINT16, 0), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_USAGE);
    CHECK_FAILS(kiln_vs_set_constant_buffers(ctx, 0, 1, &K.vb), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_USAGE);
    CHECK_FAILS(kiln_ps_set_constant_buffers(ctx, 1, 1, &K.ib), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_USAGE);
    /* a failing range binds none of it: slot 0 keeps the kit's buffer */
    kiln_buffer mixed[2] = {{0}, K.ib};
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 0, 2, mixed, st, of), KILN_E_INVALID_ARG,
                KILN_LOG_BIND_USAGE);
    kit_works("the failed setters changed nothing");
    /* render targets of different sizes, and a depth buffer of another size */
    kiln_texture2d_desc td = {
        16, 8, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0, 0};
    kiln_texture big;
    kiln_rtv bigv;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &big), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, big, NULL, &bigv), KILN_OK);
    kiln_rtv two[2] = {K.rtv, bigv};
    CHECK_FAILS(kiln_om_set_render_targets(ctx, 2, two, (kiln_dsv){0}), KILN_E_INVALID_ARG,
                KILN_LOG_RT_MISMATCH);
    CHECK_FAILS(kiln_om_set_render_targets(ctx, 1, &bigv, K.dsv), KILN_E_INVALID_ARG,
                KILN_LOG_RT_MISMATCH);
    OK(kiln_om_set_render_targets(ctx, 1, &bigv, (kiln_dsv){0}));
    OK(kiln_om_set_render_targets(ctx, 1, &K.rtv, K.dsv));
    kit_works("the kit still draws after the rejected target sets");
    /* generate_mips needs RENDER_TARGET and SHADER_RESOURCE binds */
    kiln_texture2d_desc md = {
        8, 8, 0, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture mt;
    kiln_srv ms;
    CHECK_RESULT(kiln_create_texture2d(dev, &md, NULL, &mt), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, mt, NULL, &ms), KILN_OK);
    {
        CHECK_RESULT(kiln_flush(ctx), KILN_OK);
        uint64_t q0 = queued();
        CHECK_FAILS(kiln_generate_mips(ctx, ms), KILN_E_INVALID_ARG, KILN_LOG_MIPS_NO_RT);
        th_check(queued() == q0, "generate_mips without RT bind queues nothing", __FILE__,
                 __LINE__);
    }
    CHECK_FAILS(kiln_generate_mips(ctx, (kiln_srv){K.rtv.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    kiln_destroy_srv(dev, ms);
    kiln_destroy_texture(dev, mt);
    kiln_destroy_rtv(dev, bigv);
    kiln_destroy_texture(dev, big);
    kit_destroy();
}

/* Stale and wrong-typed handles of every drawing object type, in setters
 * and destroys. */
static void test_handles(void)
{
    kit_create();
    kit_bind();
    kiln_vertex_shader vs = ru_make_vs(dev, 2, 1);
    kiln_pixel_shader ps;
    kiln_pixel_shader_desc pd = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){0});
    kiln_depth_stencil_state ds = ru_dss(dev, (kiln_depth_stencil_desc){0});
    kiln_blend_state bs = ru_bs(dev, &(kiln_blend_desc){0});
    kiln_sampler sm;
    CHECK_RESULT(kiln_create_sampler(dev, &(kiln_sampler_desc){0}, &sm), KILN_OK);
    /* wrong types: each id passed where another type is expected */
    CHECK_FAILS(kiln_vs_set_shader(ctx, (kiln_vertex_shader){ps.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_ps_set_shader(ctx, (kiln_pixel_shader){vs.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_ia_set_input_layout(ctx, (kiln_input_layout){rs.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_rs_set_state(ctx, (kiln_rasterizer_state){ds.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){bs.id}, 0),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_om_set_blend_state(ctx, (kiln_blend_state){sm.id}, NULL),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    kiln_sampler wrong_sm = {il.id};
    CHECK_FAILS(kiln_ps_set_samplers(ctx, 0, 1, &wrong_sm), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    kiln_buffer wrong_b = {vs.id};
    uint32_t st = 32, of = 0;
    CHECK_FAILS(kiln_ia_set_vertex_buffers(ctx, 0, 1, &wrong_b, &st, &of), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    kiln_srv wrong_srv = {sm.id};
    CHECK_FAILS(kiln_ps_set_shader_resources(ctx, 0, 1, &wrong_srv), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_vertex_shader(dev, (kiln_vertex_shader){ps.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_pixel_shader(dev, (kiln_pixel_shader){il.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_input_layout(dev, (kiln_input_layout){vs.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_rasterizer_state(dev, (kiln_rasterizer_state){bs.id}),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_depth_stencil_state(dev, (kiln_depth_stencil_state){rs.id}),
                KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_blend_state(dev, (kiln_blend_state){ds.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_sampler(dev, (kiln_sampler){K.vb.id}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_WRONG_TYPE);
    kit_works("wrong-typed handles changed nothing");
    /* stale: destroyed, then used */
    OK(kiln_destroy_vertex_shader(dev, vs));
    OK(kiln_destroy_pixel_shader(dev, ps));
    OK(kiln_destroy_input_layout(dev, il));
    OK(kiln_destroy_rasterizer_state(dev, rs));
    OK(kiln_destroy_depth_stencil_state(dev, ds));
    OK(kiln_destroy_blend_state(dev, bs));
    OK(kiln_destroy_sampler(dev, sm));
    CHECK_FAILS(kiln_vs_set_shader(ctx, vs), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_ps_set_shader(ctx, ps), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_ia_set_input_layout(ctx, il), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_rs_set_state(ctx, rs), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_om_set_depth_stencil_state(ctx, ds, 0), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_om_set_blend_state(ctx, bs, NULL), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_ps_set_samplers(ctx, 2, 1, &sm), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_vertex_shader(dev, vs), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_pixel_shader(dev, ps), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_input_layout(dev, il), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_rasterizer_state(dev, rs), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_depth_stencil_state(dev, ds), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_blend_state(dev, bs), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_sampler(dev, sm), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    /* 0 is never valid for destroy; 0 unbinds for setters */
    CHECK_FAILS(kiln_destroy_sampler(dev, (kiln_sampler){0}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_NULL);
    CHECK_FAILS(kiln_destroy_input_layout(dev, (kiln_input_layout){0}), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_NULL);
    kit_works("stale handles changed nothing");
    /* NULL context / device */
    CHECK_RESULT(kiln_draw(NULL, 3, 0), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_vs_set_shader(NULL, K.vs), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_create_sampler(NULL, &(kiln_sampler_desc){0}, &sm), KILN_E_INVALID_ARG);
    kit_destroy();
}

/* Draws with zero vertices or instances, or fewer vertices than one
 * primitive, are no-ops (D3D10): OK, nothing queued. */
static void test_empty_draws(void)
{
    fresh();
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    uint64_t q0 = queued();
    OK(kiln_draw(ctx, 0, 0));
    OK(kiln_draw_instanced(ctx, 3, 0, 0, 0));
    OK(kiln_draw_indexed(ctx, 0, 0, 0));
    OK(kiln_draw(ctx, 2, 0)); /* fewer vertices than one triangle */
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    CHECK(queued() == q0);
    kit_destroy();
}

int main(void)
{
    th_logs.quiet = 1;
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    th_logs.quiet = 0;

    test_missing_state();
    test_rejected_draw_keeps_scene();
    test_buffer_sizes();
    test_shader_mismatches();
    test_bound_destroyed();
    test_hazards();
    test_shader_descs();
    test_layout_descs();
    test_state_descs();
    test_setters();
    test_handles();
    test_empty_draws();

    kiln_device_destroy(dev);
    return th_exit();
}
