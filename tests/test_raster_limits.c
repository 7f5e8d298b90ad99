/* kiln's per-draw limit (2^28 vertices, 2^20 instances) is checked at call
 * time: an instanced draw whose segment count once wrapped 32 bits (and
 * overflowed the scene's job arrays on a worker) is refused, logged once,
 * and queues nothing; draws at the limit still work. */
#include "harness.h"

#include <string.h>

static void vs_zero(const kiln_vs_args *a)
{
    for (uint32_t v = 0; v < a->count; v++)
        for (int c = 0; c < 4; c++)
            a->out[v * a->out_stride + c] = c == 3 ? 1.0f : 0.0f; /* all at the origin */
}

static void ps_zero(kiln_ps_args *a) { (void)a; }

int main(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &(kiln_vertex_shader_desc){.fn = vs_zero, .num_inputs = 1}, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &(kiln_pixel_shader_desc){.fn = ps_zero, .num_outputs = 1}, &ps), KILN_OK);
    kiln_input_layout_desc ld = {1, {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0}}};
    kiln_input_layout il;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    float v[4] = {0, 0, 0, 1};
    kiln_buffer vb;
    CHECK_RESULT(kiln_create_buffer(dev, &(kiln_buffer_desc){16, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0},
                                    &(kiln_subresource_data){v, 0}, &vb),
                 KILN_OK);
    kiln_texture rt;
    kiln_rtv rtv;
    CHECK_RESULT(kiln_create_texture2d(dev, &(kiln_texture2d_desc){8, 8, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0, 0}, NULL, &rt), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, rt, NULL, &rtv), KILN_OK);
    uint32_t stride = 0, offset = 0; /* every vertex reads the same 16 bytes */
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &offset), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);

    kiln_device_stats s0, s1;
    kiln_device_get_stats(dev, &s0);
    /* 2^26 triangles x 2^16 instances: 2^32 segments, which wrapped to 0. */
    CHECK_FAILS(kiln_draw_instanced(ctx, 3u << 26, 1u << 16, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_TOO_LARGE);
    CHECK_FAILS(kiln_draw_instanced(ctx, 3, (1u << 20) + 1, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_TOO_LARGE);
    CHECK_FAILS(kiln_draw(ctx, (1u << 28) + 3, 0), KILN_E_INVALID_ARG, KILN_LOG_DRAW_TOO_LARGE);
    CHECK_RESULT(kiln_flush(ctx), KILN_OK);
    kiln_device_get_stats(dev, &s1);
    CHECK_EQ_INT(s1.commands_queued, s0.commands_queued);

    /* At the limits: accepted and executed (degenerate triangles: nothing
     * is drawn, but every instance is shaded and set up). */
    CHECK_RESULT(kiln_draw_instanced(ctx, 3, 1u << 20, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_draw_instanced(ctx, 255, 1u << 10, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);

    kiln_device_destroy(dev);
    return th_exit();
}
