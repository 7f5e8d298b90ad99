/*
 * test_mrt8: eight render targets at once, of eight formats, each with its
 * own blend state (D3D10.1's independent blend). A clear and two
 * overlapping draws into all eight targets must give, target by target,
 * the bytes of the same clear and draws into that target alone with its
 * blend state as target 0's (the single-target path the other tests
 * check against the formulas), ASYNC and SERIAL. The eight-target scene
 * is captured (its blend states past target 3 make CREATE_BLEND_STATE_8
 * records) and replayed to the same bytes. Nine targets are refused
 * (BIND_RANGE).
 */
#define _POSIX_C_SOURCE 200809L
#include "capture_util.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 12, H = 8, N = KILN_MAX_RENDER_TARGETS };

static const kiln_format FMT[N] = {
    KILN_FORMAT_R8G8B8A8_UNORM,     KILN_FORMAT_R32_FLOAT,       KILN_FORMAT_R32G32B32A32_FLOAT,
    KILN_FORMAT_B8G8R8A8_UNORM,     KILN_FORMAT_R16G16B16A16_FLOAT, KILN_FORMAT_R8_UNORM,
    KILN_FORMAT_R8G8B8A8_UNORM_SRGB, KILN_FORMAT_R32_UINT};

/* One blend state per target, all different (target 7 is an integer
 * format: its blending is ignored). */
static kiln_blend_target blend_of(int t, int second)
{
    static const kiln_blend_target b[N] = {
        {1, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, 0},
        {1, KILN_BLEND_SRC_COLOR, KILN_BLEND_ONE, KILN_BLEND_OP_SUBTRACT, KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0},
        {1, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_MIN, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_MAX, 0},
        {1, KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA, KILN_BLEND_OP_ADD, KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0},
        {0, 0, 0, 0, 0, 0, 0, KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_A},
        {1, KILN_BLEND_DEST_COLOR, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0},
        {1, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, KILN_BLEND_ZERO, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, 0},
        {1, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, 0},
    };
    kiln_blend_target x = b[t];
    if (second) /* the second draw: reverse subtract on the color */
        x = (kiln_blend_target){1, KILN_BLEND_ONE, KILN_BLEND_ONE, t % 2 ? KILN_BLEND_OP_REV_SUBTRACT : KILN_BLEND_OP_ADD,
                                KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0};
    return x;
}

static float color_of(int t, int draw, int c)
{
    if (FMT[t] == KILN_FORMAT_R32_UINT)
        return (float)(11 * t + 5 * draw + c);
    return 0.1f + 0.07f * (float)t + 0.2f * (float)draw + 0.13f * (float)c;
}

/* The shaders ru_make_pipe(dev, 0, RU_PS_CB, N, 0) creates, by name for
 * the capture and its replays. */
static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    kiln_vertex_shader_desc vd = {ru_vs_pass, 1, 0, NULL, RU_USER(1, 0)};
    kiln_pixel_shader_desc pd = {0};
    pd.fn = ru_ps_cb;
    pd.num_outputs = N;
    pd.user = RU_USER(N, 0);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.pass", &vd), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.cb8", &pd), KILN_OK);
}

static void rect(kiln_device *dev, kiln_context *ctx, double x0, double y0, double x1, double y1)
{
    float v[6 * 4], *p = v;
    const double xs[6] = {x0, x1, x0, x1, x1, x0}, ys[6] = {y0, y0, y1, y0, y1, y1};
    for (int i = 0; i < 6; i++)
        p = ru_vtx(p, W, H, xs[i], ys[i], 0.5f);
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* Renders into targets `first`.. `first + count - 1` (bound as 0..count-1)
 * and reads them back into img[first..]. */
static void render(kiln_device *dev, int first, int count, uint8_t *img[N])
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, (uint32_t)count, 0);
    ru_tex rt[N];
    kiln_rtv rtv[N];
    for (int k = 0; k < count; k++) {
        rt[k] = ru_rt(dev, W, H, FMT[first + k]);
        rtv[k] = rt[k].rtv;
        const float clear[4] = {0.3f, 0.5f, 0.7f, 0.9f};
        const float iclear[4] = {3, 5, 7, 9};
        CHECK_RESULT(kiln_clear_rtv(ctx, rtv[k], FMT[first + k] == KILN_FORMAT_R32_UINT ? iclear : clear),
                     KILN_OK);
    }
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt[0]);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, (uint32_t)count, rtv, (kiln_dsv){0}), KILN_OK);
    ru_bind_pipe(ctx, &pipe);
    for (int draw = 0; draw < 2; draw++) {
        kiln_blend_desc bd = {0};
        float cb[4 * N];
        for (int k = 0; k < count; k++) {
            bd.rt[k] = blend_of(first + k, draw);
            for (int c = 0; c < 4; c++)
                cb[4 * k + c] = color_of(first + k, draw, c);
        }
        kiln_blend_state bs = ru_bs(dev, &bd);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, (const float[4]){0.5f, 0.5f, 0.5f, 0.5f}), KILN_OK);
        kiln_buffer buf = ru_cbuffer(dev, cb, 4u * (uint32_t)count);
        CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &buf), KILN_OK);
        if (draw == 0)
            rect(dev, ctx, 1, 1, W - 2, H - 1);
        else
            rect(dev, ctx, 3, 0, W, H - 3);
        kiln_destroy_buffer(dev, buf);
        kiln_destroy_blend_state(dev, bs);
    }
    for (int k = 0; k < count; k++) {
        img[first + k] = ru_read_bytes(dev, &rt[k]);
        ru_free_tex(dev, &rt[k]);
    }
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &pipe);
}

static void compare(uint8_t *const got[N], uint8_t *const want[N], const char *what)
{
    for (int t = 0; t < N; t++) {
        int same = got[t] && want[t] && !memcmp(got[t], want[t], (size_t)W * H * kiln_format_size(FMT[t]));
        char msg[96];
        snprintf(msg, sizeof msg, "%s: target %d equals the target drawn alone", what, t);
        th_check(same, msg, __FILE__, __LINE__);
    }
}

int main(void)
{
    uint8_t *alone[N] = {0}, *all[N] = {0};
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    for (int t = 0; t < N; t++)
        render(dev, t, 1, alone);
    kiln_device_destroy(dev);
    for (int m = 0; m < 2; m++) {
        dev = th_device(m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2);
        register_shaders(dev, NULL);
        if (m == 0)
            CHECK_RESULT(kiln_capture_begin(dev, "mrt8.kcap"), KILN_OK);
        render(dev, 0, N, all);
        if (m == 0)
            CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
        compare(all, alone, m ? "SERIAL" : "ASYNC");
        for (int t = 0; t < N; t++) {
            free(all[t]);
            all[t] = NULL;
        }
        kiln_device_destroy(dev);
    }

    /* the capture: CREATE_BLEND_STATE_8 records, replayed to the bytes */
    size_t len;
    uint8_t *bytes = cu_read("mrt8.kcap", &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_BLEND_STATE_8), 2);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3, register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        /* the targets are the capture's render targets in creation order */
        uint8_t *replayed[N] = {0};
        for (uint32_t k = 0; k < out.n; k++)
            if (out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].target < N)
                replayed[out.v[k].target] = out.v[k].pixels;
        compare(replayed, alone, "replayed");
        cu_free(&out);
    }
    free(bytes);

    dev = th_device(KILN_EXEC_SERIAL, 0);
    ru_tex t = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_rtv nine[N + 1];
    for (int i = 0; i <= N; i++)
        nine[i] = t.rtv;
    CHECK_FAILS(kiln_om_set_render_targets(kiln_device_immediate_context(dev), N + 1, nine, (kiln_dsv){0}),
                KILN_E_INVALID_ARG, KILN_LOG_BIND_RANGE);
    ru_free_tex(dev, &t);
    kiln_device_destroy(dev);
    for (int i = 0; i < N; i++)
        free(alone[i]);
    return th_exit();
}
