/*
 * test_msaa: 4x multisampled targets, checked against a model of the
 * standard sample pattern written here, not against the renderer.
 *
 * - Coverage: random triangles with vertices on a 1/16-pixel grid (exact
 *   in clip space and in 16.8) are drawn white on black into a 4x target
 *   and resolved; each pixel must be count/4 of white, count being the
 *   samples of KILN_SAMPLE_PATTERN4 strictly inside the triangle (integer
 *   edge functions; triangles with a sample exactly on an edge are
 *   redrawn). An occlusion query must count the covered samples, and a
 *   half-covered edge pixel resolves to exactly 128.
 * - Depth per sample: a plane whose depth crosses a constant plane in the
 *   middle of a pixel column: that column resolves to the average of the
 *   two colors (two samples each side); with depth at the pixel center it
 *   would be one color.
 * - Alpha to coverage: alpha a keeps floor(a * 4 + 0.5) samples (4x) and
 *   a pixel with a >= 0.5 (1x).
 * - Thread counts: a scene of overlapping blended triangles resolves to
 *   the same bytes SERIAL and ASYNC with 1, 2 and 3 workers.
 * - Capture: the scene's capture holds CREATE_TEXTURE2D_MS,
 *   RESOLVE_SUBRESOURCE and CREATE_BLEND_STATE_A2C records and replays to
 *   the same resolved bytes.
 * - Every rule: TEXTURE_SAMPLES_INVALID, MSAA_OPERATION,
 *   RT_SAMPLES_MISMATCH, RESOLVE_INVALID, COPY_MISMATCH, and the osmesa
 *   backend's refusal (BACKEND_FEATURE).
 */
#define _POSIX_C_SOURCE 200809L
#include "capture_util.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 128, H = 128 };

static const int PAT[4][2] = KILN_SAMPLE_PATTERN4;

typedef struct ms_target {
    kiln_texture ms;      /* 4x */
    kiln_rtv rtv;
    kiln_texture ds;      /* 4x D32_FLOAT, or 0 */
    kiln_dsv dsv;
    ru_tex resolved;      /* 1x, RT-bound so that a replay reports it */
} ms_target;

static ms_target ms_make(kiln_device *dev, kiln_format fmt, bool depth)
{
    ms_target t;
    memset(&t, 0, sizeof t);
    kiln_texture2d_desc d = {.width = W, .height = H, .mip_levels = 1, .format = fmt,
                             .bind_flags = KILN_BIND_RENDER_TARGET, .sample_count = 4};
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &t.ms), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, t.ms, NULL, &t.rtv), KILN_OK);
    if (depth) {
        kiln_texture2d_desc dd = {.width = W, .height = H, .mip_levels = 1, .format = KILN_FORMAT_D32_FLOAT,
                                  .bind_flags = KILN_BIND_DEPTH_STENCIL, .sample_count = 4};
        CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &t.ds), KILN_OK);
        CHECK_RESULT(kiln_create_dsv(dev, t.ds, NULL, &t.dsv), KILN_OK);
    }
    t.resolved = ru_rt(dev, W, H, fmt);
    return t;
}

static void ms_free(kiln_device *dev, ms_target *t)
{
    kiln_destroy_rtv(dev, t->rtv);
    kiln_destroy_texture(dev, t->ms);
    if (t->ds.id) {
        kiln_destroy_dsv(dev, t->dsv);
        kiln_destroy_texture(dev, t->ds);
    }
    ru_free_tex(dev, &t->resolved);
}

/* Binds the 4x target (and depth) with a full viewport, culling off. */
static kiln_rasterizer_state ms_bind(kiln_device *dev, kiln_context *ctx, const ms_target *t)
{
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &t->rtv, t->dsv), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    return rs;
}

static uint8_t *ms_resolve_read(kiln_device *dev, kiln_context *ctx, ms_target *t)
{
    CHECK_RESULT(kiln_resolve_subresource(ctx, kiln_texture_resource(t->resolved.tex), 0,
                                          kiln_texture_resource(t->ms), 0, KILN_FORMAT_UNKNOWN),
                 KILN_OK);
    return ru_read_bytes(dev, &t->resolved);
}

static void set_color(kiln_device *dev, kiln_context *ctx, const float c[4], kiln_buffer *cb)
{
    if (cb->id)
        kiln_destroy_buffer(dev, *cb);
    *cb = ru_cbuffer(dev, c, 4);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, cb), KILN_OK);
}

/* A triangle in 1/16 pixels. */
typedef struct tri16 {
    int x[3], y[3];
} tri16;

/* The edge function of a->b at (px, py), all in 1/16 pixels (times 2 for
 * the sample positions' halves): > 0 inside for the triangle's winding. */
static int64_t edge(const tri16 *t, int k, int64_t px, int64_t py)
{
    int64_t ax = 2 * t->x[k], ay = 2 * t->y[k], bx = 2 * t->x[(k + 1) % 3], by = 2 * t->y[(k + 1) % 3];
    return (bx - ax) * (py - ay) - (by - ay) * (px - ax);
}

/* Samples of pixel (x, y) inside t; -1 when one lies on an edge. */
static int covered(const tri16 *t, int x, int y, uint32_t *bits)
{
    int n = 0;
    *bits = 0;
    for (int k = 0; k < 4; k++) {
        /* sample position in 1/32 pixel: (16x + 8 + PAT) * 2 */
        int64_t px = 2 * (16 * x + 8 + PAT[k][0]), py = 2 * (16 * y + 8 + PAT[k][1]);
        int64_t e[3];
        int pos = 0, neg = 0;
        for (int j = 0; j < 3; j++) {
            e[j] = edge(t, j, px, py);
            if (e[j] == 0)
                return -1;
            pos += e[j] > 0;
            neg += e[j] < 0;
        }
        if (pos == 3 || neg == 3) {
            n++;
            *bits |= 1u << k;
        }
    }
    return n;
}

static void draw_tri16(kiln_device *dev, kiln_context *ctx, const tri16 *t, float z)
{
    float v[3 * 4], *p = v;
    for (int k = 0; k < 3; k++)
        p = ru_vtx(p, W, H, t->x[k] / 16.0, t->y[k] / 16.0, z);
    ru_draw(dev, ctx, v, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* The resolved byte of `count` of 4 samples at 1.0 (the rest 0):
 * (sum in float) * 0.25, then UNORM8. */
static uint8_t resolved_byte(int count, float one, float zero)
{
    float sum = 0.0f;
    for (int k = 0; k < 4; k++)
        sum += k < count ? one : zero;
    float f = sum * 0.25f;
    return (uint8_t)(f * 255.0f + 0.5f);
}

static void test_coverage(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ms_target t = ms_make(dev, KILN_FORMAT_R8G8B8A8_UNORM, false);
    kiln_rasterizer_state rs = ms_bind(dev, ctx, &t);
    ru_bind_pipe(ctx, &pipe);
    kiln_buffer cb = {0};
    set_color(dev, ctx, (const float[4]){1, 1, 1, 1}, &cb);
    kiln_query q;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &q), KILN_OK);
    th_rng rng = {0x5eed1234u};
    int tris = 0, partial = 0, mism = 0, qmism = 0;
    while (tris < 150) {
        tri16 tr;
        for (int k = 0; k < 3; k++) {
            tr.x[k] = (int)th_below(&rng, 16 * W + 1);
            tr.y[k] = (int)th_below(&rng, 16 * H + 1);
        }
        if (tris == 0) /* left edge at x = 63.75: of the first tile's last
                          column only sample 1 (x 63.875) is inside */
            tr = (tri16){{1020, 1280, 1020}, {0, 0, 640}};
        uint8_t want[W * H];
        uint64_t samples = 0;
        bool on_edge = false;
        for (int y = 0; y < H && !on_edge; y++)
            for (int x = 0; x < W; x++) {
                uint32_t bits;
                int n = covered(&tr, x, y, &bits);
                if (n < 0) {
                    on_edge = true;
                    break;
                }
                samples += (uint64_t)n;
                partial += n > 0 && n < 4;
                want[y * W + x] = resolved_byte(n, 1.0f, 0.0f);
            }
        if (on_edge)
            continue;
        tris++;
        CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, (const float[4]){0, 0, 0, 1}), KILN_OK);
        CHECK_RESULT(kiln_query_begin(ctx, q), KILN_OK);
        draw_tri16(dev, ctx, &tr, 0.5f);
        CHECK_RESULT(kiln_query_end(ctx, q), KILN_OK);
        uint8_t *got = ms_resolve_read(dev, ctx, &t);
        for (int i = 0; i < W * H; i++)
            for (int c = 0; c < 3; c++)
                mism += got[4 * i + c] != want[i];
        for (int i = 0; i < W * H; i++)
            mism += got[4 * i + 3] != 255;
        free(got);
        uint64_t n = 0;
        while (kiln_query_get_data(ctx, q, &n, sizeof n, 0) == KILN_E_WAS_STILL_DRAWING)
            ;
        qmism += n != samples;
    }
    CHECK_EQ_INT(mism, 0);
    CHECK_EQ_INT(qmism, 0);
    CHECK(partial > 200); /* the edges were exercised */

    /* A half-covered edge pixel: x < 2.5 covers samples 0 and 2 of column 2. */
    CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, (const float[4]){0, 0, 0, 1}), KILN_OK);
    const tri16 a = {{0, 40, 0}, {0, 0, 16 * H}}, b = {{40, 40, 0}, {0, 16 * H, 16 * H}};
    draw_tri16(dev, ctx, &a, 0.5f);
    draw_tri16(dev, ctx, &b, 0.5f);
    uint8_t *got = ms_resolve_read(dev, ctx, &t);
    CHECK_EQ_INT(got[4 * (5 * W + 1)], 255);
    CHECK_EQ_INT(got[4 * (5 * W + 2)], 128);
    CHECK_EQ_INT(got[4 * (5 * W + 3)], 0);
    free(got);

    kiln_destroy_query(dev, q);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_rasterizer_state(dev, rs);
    ms_free(dev, &t);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

/* Depth per sample: red at depth 15.5/W everywhere, then green at depth
 * x/W with LESS: green wins at the samples left of x = 15.5. */
static void test_depth(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ms_target t = ms_make(dev, KILN_FORMAT_R8G8B8A8_UNORM, true);
    kiln_rasterizer_state rs = ms_bind(dev, ctx, &t);
    ru_bind_pipe(ctx, &pipe);
    kiln_depth_stencil_state dss = ru_dss(dev, (kiln_depth_stencil_desc){0});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, (const float[4]){0, 0, 0, 1}), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, t.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    kiln_buffer cb = {0};
    set_color(dev, ctx, (const float[4]){1, 0, 0, 1}, &cb);
    float v[6 * 4], *p = v;
    const double xs[6] = {0, W, 0, W, W, 0}, ys[6] = {0, 0, H, 0, H, H};
    for (int i = 0; i < 6; i++)
        p = ru_vtx(p, W, H, xs[i], ys[i], 15.5f / (float)W);
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    set_color(dev, ctx, (const float[4]){0, 1, 0, 1}, &cb);
    p = v;
    for (int i = 0; i < 6; i++)
        p = ru_vtx(p, W, H, xs[i], ys[i], (float)(xs[i] / W));
    ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *got = ms_resolve_read(dev, ctx, &t);
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            /* samples left of 15.5: x + 0.5 + PAT/16 < 15.5 */
            int n = 0;
            for (int k = 0; k < 4; k++)
                n += 16 * x + 8 + PAT[k][0] < 16 * 15 + 8;
            const uint8_t *px = got + 4 * (y * W + x);
            bad += px[0] != resolved_byte(4 - n, 1.0f, 0.0f) || px[1] != resolved_byte(n, 1.0f, 0.0f) ||
                   px[2] != 0;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(got[4 * 15], 128); /* column 15: two samples each */
    CHECK_EQ_INT(got[4 * 15 + 1], 128);
    free(got);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_depth_stencil_state(dev, dss);
    kiln_destroy_rasterizer_state(dev, rs);
    ms_free(dev, &t);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

static kiln_blend_state a2c_state(kiln_device *dev)
{
    kiln_blend_desc bd = {0};
    bd.alpha_to_coverage = 1;
    return ru_bs(dev, &bd);
}

static void test_a2c(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 0, RU_PS_CB, 1, 0);
    ms_target t = ms_make(dev, KILN_FORMAT_R8G8B8A8_UNORM, false);
    kiln_rasterizer_state rs = ms_bind(dev, ctx, &t);
    ru_bind_pipe(ctx, &pipe);
    kiln_blend_state bs = a2c_state(dev);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);
    kiln_buffer cb = {0};
    const float alphas[] = {0.0f, 0.1f, 0.13f, 0.3f, 0.5f, 0.62f, 0.9f, 1.0f, 2.0f};
    for (size_t i = 0; i < sizeof alphas / sizeof alphas[0]; i++) {
        CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, (const float[4]){0, 0, 0, 0}), KILN_OK);
        set_color(dev, ctx, (const float[4]){1, 1, 1, alphas[i]}, &cb);
        float v[6 * 4], *p = v;
        const double xs[6] = {0, W, 0, W, W, 0}, ys[6] = {0, 0, H, 0, H, H};
        for (int k = 0; k < 6; k++)
            p = ru_vtx(p, W, H, xs[k], ys[k], 0.5f);
        ru_draw(dev, ctx, v, 6, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
        uint8_t *got = ms_resolve_read(dev, ctx, &t);
        float a = alphas[i] < 1.0f ? alphas[i] : 1.0f;
        int n = (int)floor(a * 4.0 + 0.5);
        CHECK_EQ_INT(got[4 * (7 * W + 9)], resolved_byte(n, 1.0f, 0.0f));
        free(got);
    }
    /* 1x: kept at alpha >= 0.5 */
    ru_tex one = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_rasterizer_state rs1 = ru_target_2d(dev, ctx, &one);
    for (int i = 0; i < 2; i++) {
        CHECK_RESULT(kiln_clear_rtv(ctx, one.rtv, (const float[4]){0, 0, 0, 0}), KILN_OK);
        set_color(dev, ctx, (const float[4]){1, 1, 1, i ? 0.5f : 0.49f}, &cb);
        float v[3 * 4], *p = v;
        p = ru_vtx(p, W, H, 0, 0, 0.5f);
        p = ru_vtx(p, W, H, 2 * W, 0, 0.5f);
        ru_vtx(p, W, H, 0, 2 * H, 0.5f);
        ru_draw(dev, ctx, v, 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
        uint8_t *got = ru_read_bytes(dev, &one);
        CHECK_EQ_INT(got[4 * (3 * W + 3)], i ? 255 : 0);
        free(got);
    }
    ru_free_tex(dev, &one);
    kiln_destroy_rasterizer_state(dev, rs1);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_blend_state(dev, bs);
    kiln_destroy_rasterizer_state(dev, rs);
    ms_free(dev, &t);
    ru_free_pipe(dev, &pipe);
    kiln_device_destroy(dev);
}

/* The shaders of the scene, by name for its capture. */
static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    kiln_vertex_shader_desc vd = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};
    kiln_pixel_shader_desc pd = {0};
    pd.fn = ru_ps_vary;
    pd.num_outputs = 1;
    pd.num_varyings = 1;
    pd.user = RU_USER(1, 1);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.pass2", &vd), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.vary1", &pd), KILN_OK);
}

/* Overlapping colored triangles, depth-tested at varying depths, the
 * second half blended and the last few with alpha to coverage. */
static uint8_t *scene(kiln_device *dev, const char *capture)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    register_shaders(dev, NULL);
    if (capture)
        CHECK_RESULT(kiln_capture_begin(dev, capture), KILN_OK);
    ru_pipe pipe = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ms_target t = ms_make(dev, KILN_FORMAT_R8G8B8A8_UNORM, true);
    kiln_rasterizer_state rs = ms_bind(dev, ctx, &t);
    ru_bind_pipe(ctx, &pipe);
    kiln_depth_stencil_state dss = ru_dss(dev, (kiln_depth_stencil_desc){0});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, (const float[4]){0.1f, 0.2f, 0.3f, 1}), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, t.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    kiln_blend_state add = ru_bs_add(dev), a2c = a2c_state(dev);
    th_rng rng = {77};
    for (int i = 0; i < 90; i++) {
        if (i == 45)
            CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
        if (i == 80)
            CHECK_RESULT(kiln_om_set_blend_state(ctx, a2c, NULL), KILN_OK);
        float v[3 * 8], *p = v;
        for (int k = 0; k < 3; k++) {
            p = ru_vtx(p, W, H, th_below(&rng, 16 * W * 3 / 2) / 16.0 - W / 4.0,
                       th_below(&rng, 16 * H * 3 / 2) / 16.0 - H / 4.0, (float)th_below(&rng, 1000) / 1000.0f);
            for (int c = 0; c < 4; c++)
                *p++ = (float)th_below(&rng, 256) / 400.0f;
        }
        ru_draw(dev, ctx, v, 3, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    }
    uint8_t *img = ms_resolve_read(dev, ctx, &t);
    if (capture)
        CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_destroy_blend_state(dev, add);
    kiln_destroy_blend_state(dev, a2c);
    kiln_destroy_depth_stencil_state(dev, dss);
    kiln_destroy_rasterizer_state(dev, rs);
    ms_free(dev, &t);
    ru_free_pipe(dev, &pipe);
    return img;
}

static void test_threads_and_capture(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    uint8_t *ref = scene(dev, NULL);
    kiln_device_destroy(dev);
    for (uint32_t n = 1; n <= 3; n++) {
        dev = th_device(KILN_EXEC_ASYNC, n);
        uint8_t *img = scene(dev, n == 2 ? "msaa.kcap" : NULL);
        char msg[64];
        snprintf(msg, sizeof msg, "%u workers resolve to SERIAL's bytes", n);
        th_check(!memcmp(img, ref, (size_t)W * H * 4), msg, __FILE__, __LINE__);
        free(img);
        kiln_device_destroy(dev);
    }
    size_t len;
    uint8_t *bytes = cu_read("msaa.kcap", &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_TEXTURE2D_MS), 2);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_RESOLVE_SUBRESOURCE), 1);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_BLEND_STATE_A2C), 1);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2, register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        int found = 0;
        for (uint32_t k = 0; k < out.n; k++)
            found += out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].width == W && out.v[k].bpp == 4 &&
                     !memcmp(out.v[k].pixels, ref, (size_t)W * H * 4);
        CHECK_EQ_INT(found, 1);
        cu_free(&out);
    }
    free(bytes);
    free(ref);
}

static void test_rules(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture x = {0};
    kiln_texture2d_desc d = {.width = 8, .height = 8, .mip_levels = 1, .format = KILN_FORMAT_R8G8B8A8_UNORM,
                             .bind_flags = KILN_BIND_RENDER_TARGET, .sample_count = 2};
    CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);
    d.sample_count = 4;
    d.mip_levels = 2;
    CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);
    d.mip_levels = 0; /* the full chain: 4 levels */
    CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);
    d.mip_levels = 1;
    d.bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
    CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);
    d.bind_flags = 0;
    d.usage = KILN_USAGE_STAGING;
    d.cpu_access = KILN_CPU_ACCESS_READ;
    CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);
    d.usage = KILN_USAGE_DEFAULT;
    d.cpu_access = 0;
    d.bind_flags = KILN_BIND_RENDER_TARGET;
    uint8_t pixels[8 * 8 * 4] = {0};
    kiln_subresource_data init = {pixels, 0};
    CHECK_FAILS(kiln_create_texture2d(dev, &d, &init, &x), KILN_E_INVALID_ARG, KILN_LOG_TEXTURE_SAMPLES_INVALID);

    kiln_texture ms, ms_u, ms2;
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &ms), KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &ms2), KILN_OK);
    kiln_texture2d_desc du = d;
    du.format = KILN_FORMAT_R32_UINT;
    CHECK_RESULT(kiln_create_texture2d(dev, &du, NULL, &ms_u), KILN_OK);
    kiln_texture2d_desc d1 = d;
    d1.sample_count = 0;
    kiln_texture one, one_u, small;
    CHECK_RESULT(kiln_create_texture2d(dev, &d1, NULL, &one), KILN_OK);
    d1.format = KILN_FORMAT_R32_UINT;
    CHECK_RESULT(kiln_create_texture2d(dev, &d1, NULL, &one_u), KILN_OK);
    d1.format = KILN_FORMAT_R8G8B8A8_UNORM;
    d1.width = 4;
    CHECK_RESULT(kiln_create_texture2d(dev, &d1, NULL, &small), KILN_OK);
    kiln_resource MS = kiln_texture_resource(ms), ONE = kiln_texture_resource(one);
    kiln_texture2d_desc got_desc;
    CHECK_RESULT(kiln_texture_get_desc(dev, ms, &got_desc), KILN_OK);
    CHECK_EQ_INT(got_desc.sample_count, 4);
    CHECK_RESULT(kiln_texture_get_desc(dev, one, &got_desc), KILN_OK);
    CHECK_EQ_INT(got_desc.sample_count, 1);

    /* what a 4x resource does not take */
    CHECK_FAILS(kiln_update_subresource(ctx, MS, 0, NULL, pixels, 32, 0), KILN_E_INVALID_ARG,
                KILN_LOG_MSAA_OPERATION);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, ONE, 0, 0, 0, 0, MS, 0, NULL), KILN_E_INVALID_ARG,
                KILN_LOG_MSAA_OPERATION);
    CHECK_FAILS(kiln_copy_subresource_region(ctx, MS, 0, 0, 0, 0, ONE, 0, NULL), KILN_E_INVALID_ARG,
                KILN_LOG_MSAA_OPERATION);
    CHECK_FAILS(kiln_copy_resource(ctx, ONE, MS), KILN_E_INVALID_ARG, KILN_LOG_COPY_MISMATCH);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(ms2), MS), KILN_OK);
    kiln_srv srv;
    CHECK_FAILS(kiln_create_srv(dev, ms, NULL, &srv), KILN_E_INVALID_ARG, KILN_LOG_VIEW_RESOURCE_BIND);
    kiln_blend_desc bad = {0};
    bad.alpha_to_coverage = 2;
    kiln_blend_state bs;
    CHECK_FAILS(kiln_create_blend_state(dev, &bad, &bs), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);

    /* resolve */
    CHECK_RESULT(kiln_resolve_subresource(ctx, ONE, 0, MS, 0, KILN_FORMAT_R8G8B8A8_UNORM), KILN_OK);
    CHECK_FAILS(kiln_resolve_subresource(ctx, ONE, 0, kiln_texture_resource(one_u), 0, KILN_FORMAT_UNKNOWN),
                KILN_E_INVALID_ARG, KILN_LOG_RESOLVE_INVALID); /* a 1x source */
    CHECK_FAILS(kiln_resolve_subresource(ctx, kiln_texture_resource(ms2), 0, MS, 0, KILN_FORMAT_UNKNOWN),
                KILN_E_INVALID_ARG, KILN_LOG_RESOLVE_INVALID); /* a 4x destination */
    CHECK_FAILS(kiln_resolve_subresource(ctx, ONE, 0, MS, 0, KILN_FORMAT_B8G8R8A8_UNORM), KILN_E_INVALID_ARG,
                KILN_LOG_RESOLVE_INVALID); /* another format named */
    CHECK_FAILS(kiln_resolve_subresource(ctx, kiln_texture_resource(one_u), 0, MS, 0, KILN_FORMAT_UNKNOWN),
                KILN_E_INVALID_ARG, KILN_LOG_RESOLVE_INVALID); /* formats differ */
    CHECK_FAILS(kiln_resolve_subresource(ctx, kiln_texture_resource(one_u), 0, kiln_texture_resource(ms_u), 0,
                                         KILN_FORMAT_UNKNOWN),
                KILN_E_INVALID_ARG, KILN_LOG_RESOLVE_INVALID); /* integer */
    CHECK_FAILS(kiln_resolve_subresource(ctx, kiln_texture_resource(small), 0, MS, 0, KILN_FORMAT_UNKNOWN),
                KILN_E_INVALID_ARG, KILN_LOG_RESOLVE_INVALID); /* sizes differ */
    CHECK_FAILS(kiln_resolve_subresource(ctx, ONE, 1, MS, 0, KILN_FORMAT_UNKNOWN), KILN_E_INVALID_ARG,
                KILN_LOG_SUBRESOURCE_OUT_OF_RANGE);

    /* targets of different sample counts */
    kiln_rtv rv_ms, rv_one;
    CHECK_RESULT(kiln_create_rtv(dev, ms, NULL, &rv_ms), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, one, NULL, &rv_one), KILN_OK);
    kiln_rtv both[2] = {rv_ms, rv_one};
    CHECK_FAILS(kiln_om_set_render_targets(ctx, 2, both, (kiln_dsv){0}), KILN_E_INVALID_ARG,
                KILN_LOG_RT_SAMPLES_MISMATCH);
    kiln_texture2d_desc dd = {.width = 8, .height = 8, .mip_levels = 1, .format = KILN_FORMAT_D32_FLOAT,
                              .bind_flags = KILN_BIND_DEPTH_STENCIL};
    kiln_texture ds1;
    kiln_dsv dsv1;
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &ds1), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, ds1, NULL, &dsv1), KILN_OK);
    CHECK_FAILS(kiln_om_set_render_targets(ctx, 1, &rv_ms, dsv1), KILN_E_INVALID_ARG, KILN_LOG_RT_SAMPLES_MISMATCH);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rv_one, dsv1), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_destroy_dsv(dev, dsv1);
    kiln_destroy_texture(dev, ds1);
    kiln_destroy_rtv(dev, rv_ms);
    kiln_destroy_rtv(dev, rv_one);
    kiln_texture all[] = {ms, ms2, ms_u, one, one_u, small};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        kiln_destroy_texture(dev, all[i]);
    kiln_device_destroy(dev);

    /* osmesa: no 4x textures */
    dev = th_osmesa_device();
    if (dev) {
        d.usage = KILN_USAGE_DEFAULT;
        d.bind_flags = KILN_BIND_RENDER_TARGET;
        CHECK_FAILS(kiln_create_texture2d(dev, &d, NULL, &x), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
        kiln_blend_desc bd = {0};
        bd.alpha_to_coverage = 1;
        kiln_blend_state bs;
        CHECK_FAILS(kiln_create_blend_state(dev, &bd, &bs), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
        kiln_device_destroy(dev);
    }
}

int main(void)
{
    test_coverage();
    test_depth();
    test_a2c();
    test_threads_and_capture();
    test_rules();
    return th_exit();
}
