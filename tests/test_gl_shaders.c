/*
 * The osmesa backend's shader rules (docs/backends.md):
 * - a vertex or pixel shader without GLSL is refused at creation with
 *   KILN_E_UNSUPPORTED and one SHADER_NO_GLSL log (on soft it is fine);
 * - GLSL that does not compile is reported at its first draw through the
 *   log callback: one GL_SHADER_FAILED (carrying GL's info log) for the
 *   program, however many draws use it, and the scene command fails
 *   (COMMAND_FAILED), while later valid draws still render;
 * - a user shader's GLSL in the documented convention (one string for both
 *   stages, u_cb0 rows, a #version 330 `out` for the target) renders the
 *   color its constant buffer names.
 * Skips (77) when the osmesa backend is not built in.
 */
#include "raster_util.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static uint32_t counts[KILN_LOG_ID_COUNT];
static char last_gl_message[2048];

static void log_fn(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)level, (void)user;
    pthread_mutex_lock(&mu);
    if ((unsigned)id < KILN_LOG_ID_COUNT)
        counts[id]++;
    if (id == KILN_LOG_GL_SHADER_FAILED)
        snprintf(last_gl_message, sizeof last_gl_message, "%s", message);
    pthread_mutex_unlock(&mu);
}

static uint32_t count(kiln_log_id id)
{
    pthread_mutex_lock(&mu);
    uint32_t n = counts[id];
    pthread_mutex_unlock(&mu);
    return n;
}

static void vs_fn(const kiln_vs_args *a) { (void)a; }
static void ps_fn(kiln_ps_args *a) { (void)a; }

/* Position from input 0 (clip space as given); color from PS cb0[0]. */
static const char user_glsl[] = "#version 330\n"
                                "in vec4 a_position;\n"
                                "void main() { gl_Position = a_position; }\n"
                                "//--- fragment\n"
                                "#version 330\n"
                                "uniform vec4 u_ps_cb0[1];\n"
                                "out vec4 o_color;\n"
                                "void main() { o_color = u_ps_cb0[0]; }\n";

static const char broken_glsl[] = "#version 330\n"
                                  "in vec4 a_position;\n"
                                  "void main() { gl_Position = a_position; }\n"
                                  "//--- fragment\n"
                                  "#version 330\n"
                                  "out vec4 o_color;\n"
                                  "void main() { o_color = this_is_not_declared; }\n";

static void draw_quad(kiln_device *dev, kiln_context *ctx, kiln_vertex_shader vs, kiln_pixel_shader ps,
                      kiln_buffer cb)
{
    kiln_input_layout_desc ld = {.num_elements = 1, .elements = {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0}}};
    kiln_input_layout il;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE})), KILN_OK);
    float v[6][4] = {{-1, -1, 0.5f, 1}, {-1, 1, 0.5f, 1}, {1, 1, 0.5f, 1},
                     {-1, -1, 0.5f, 1}, {1, 1, 0.5f, 1},  {1, -1, 0.5f, 1}};
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    kiln_destroy_input_layout(dev, il);
}

int main(void)
{
    kiln_device *dev = NULL;
    if (kiln_device_create(&(kiln_device_desc){.backend = KILN_BACKEND_OSMESA, .log_fn = log_fn}, &dev) != KILN_OK) {
        printf("skip: the osmesa backend is not available\n");
        return 77;
    }
    kiln_context *ctx = kiln_device_immediate_context(dev);

    /* No GLSL: refused at creation, once logged. */
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    uint32_t before = count(KILN_LOG_SHADER_NO_GLSL);
    CHECK_RESULT(kiln_create_vertex_shader(dev, &(kiln_vertex_shader_desc){.fn = vs_fn, .num_inputs = 1}, &vs),
                 KILN_E_UNSUPPORTED);
    CHECK(vs.id == 0 && count(KILN_LOG_SHADER_NO_GLSL) == before + 1);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &(kiln_pixel_shader_desc){.fn = ps_fn, .num_outputs = 1}, &ps),
                 KILN_E_UNSUPPORTED);
    CHECK(ps.id == 0 && count(KILN_LOG_SHADER_NO_GLSL) == before + 2);

    /* A user shader in the convention renders its constant color. */
    ru_tex rt = ru_rt(dev, 16, 16, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, 16, 16, 0, 1);
    CHECK_RESULT(kiln_create_vertex_shader(
                     dev, &(kiln_vertex_shader_desc){.fn = vs_fn, .num_inputs = 1, .glsl = user_glsl}, &vs),
                 KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(
                     dev, &(kiln_pixel_shader_desc){.fn = ps_fn, .num_outputs = 1, .glsl = user_glsl}, &ps),
                 KILN_OK);
    float color[4] = {1.0f, 0.5f, 0.0f, 1.0f};
    kiln_buffer cb = ru_cbuffer(dev, color, 4);
    draw_quad(dev, ctx, vs, ps, cb);
    uint8_t *px = ru_read_bytes(dev, &rt);
    CHECK(px && px[0] == 255 && px[1] == 128 && px[2] == 0 && px[3] == 255);
    CHECK(px && px[4 * (16 * 9 + 7)] == 255 && px[4 * (16 * 9 + 7) + 1] == 128);
    free(px);

    /* Broken GLSL: creation succeeds (compiled on the GL thread at the
     * first draw); two draws, one GL_SHADER_FAILED, the scene fails. */
    kiln_pixel_shader bad;
    CHECK_RESULT(kiln_create_pixel_shader(
                     dev, &(kiln_pixel_shader_desc){.fn = ps_fn, .num_outputs = 1, .glsl = broken_glsl}, &bad),
                 KILN_OK);
    uint32_t gl_before = count(KILN_LOG_GL_SHADER_FAILED), failed_before = count(KILN_LOG_COMMAND_FAILED);
    const float clear[4] = {0, 0, 1, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
    draw_quad(dev, ctx, vs, bad, cb);
    draw_quad(dev, ctx, vs, bad, cb);
    kiln_fence f;
    CHECK_RESULT(kiln_context_insert_fence(ctx, &f), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, f, UINT64_MAX), KILN_E_COMMAND_FAILED);
    kiln_destroy_fence(dev, f);
    CHECK(count(KILN_LOG_GL_SHADER_FAILED) == gl_before + 1);
    CHECK(count(KILN_LOG_COMMAND_FAILED) == failed_before + 1);
    CHECK(strstr(last_gl_message, "this_is_not_declared") != NULL);
    /* The clear before the failed draws still ran; a valid draw renders. */
    px = ru_read_bytes(dev, &rt);
    CHECK(px && px[0] == 0 && px[2] == 255);
    free(px);
    draw_quad(dev, ctx, vs, ps, cb);
    px = ru_read_bytes(dev, &rt);
    CHECK(px && px[0] == 255 && px[1] == 128 && px[2] == 0);
    free(px);

    ru_free_tex(dev, &rt);
    kiln_device_destroy(dev);
    return th_exit();
}
