/*
 * test_depth_only: draws with no pixel shader and a depth-stencil test on
 * (D3D10's NULL pixel shader: rasterize, test and write depth/stencil,
 * write no color).
 *
 * - A pixel-aligned rect at z = 0.5 over a depth buffer cleared to 1: the
 *   depth inside is exactly 0.5, outside 1, the render target keeps its
 *   clear color, and an OCCLUSION query counts exactly the rect's pixels.
 * - 60 random overlapping triangles (D32_FLOAT, then D24_UNORM_S8_UINT
 *   with stencil INCR_SAT on pass and a stencil test) drawn depth-only on
 *   an ASYNC device of 3 workers, and the same draws with the VERTEX_COLOR
 *   pixel shader and color writes masked off on a SERIAL device: the depth
 *   (and stencil) bytes are equal, the render target is untouched in both,
 *   the occlusion counts are equal and not zero, and PIPELINE_STATISTICS
 *   counts no pixel-shader invocations for the depth-only draws.
 * - Validation: no pixel shader and no depth-stencil view (DRAW_NO_SHADER),
 *   no pixel shader with depth and stencil off (DRAW_NO_RASTER).
 * - osmesa (when there is a GL provider): the rect, depth-only, to the same
 *   depth and untouched color.
 */
#define _POSIX_C_SOURCE 200809L
#include "raster_util.h"

#include <sched.h>
#include <stdio.h>

enum { W = 37, H = 23, NTRI = 60 };

typedef struct fixture {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout il;
    kiln_buffer cb;
    kiln_rasterizer_state rs;
    kiln_blend_state mask_off;
    ru_tex rt, ds;
} fixture;

static const float CLEAR[4] = {0.25f, 0.5f, 0.75f, 1.0f};

static void fixture_init(fixture *f, kiln_device *dev, kiln_format ds_format)
{
    memset(f, 0, sizeof *f);
    f->dev = dev;
    f->ctx = kiln_device_immediate_context(dev);
    kiln_vertex_shader_desc vd;
    kiln_pixel_shader_desc pd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vd, &pd), KILN_OK);
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &f->vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &f->ps), KILN_OK);
    f->il = ru_make_layout(dev, f->vs, 2);
    const float ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    f->cb = ru_cbuffer(dev, ident, 16);
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    bd.rt[0].write_mask = KILN_COLOR_WRITE_NONE;
    f->mask_off = ru_bs(dev, &bd);
    f->rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    f->ds = ru_ds(dev, W, H, ds_format);
    f->rs = ru_target_2d(dev, f->ctx, &f->rt);
    CHECK_RESULT(kiln_om_set_render_targets(f->ctx, 1, &f->rt.rtv, f->ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(f->ctx, f->vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(f->ctx, f->il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_constant_buffers(f->ctx, 0, 1, &f->cb), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(f->ctx, f->rt.rtv, CLEAR), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(f->ctx, f->ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0),
                 KILN_OK);
}

static void fixture_free(fixture *f)
{
    ru_free_tex(f->dev, &f->rt);
    ru_free_tex(f->dev, &f->ds);
    kiln_destroy_buffer(f->dev, f->cb);
    kiln_destroy_input_layout(f->dev, f->il);
    kiln_destroy_vertex_shader(f->dev, f->vs);
    kiln_destroy_pixel_shader(f->dev, f->ps);
    kiln_destroy_rasterizer_state(f->dev, f->rs);
    kiln_destroy_blend_state(f->dev, f->mask_off);
}

/* Binds the pixel shader (with color writes masked off) or none. */
static void set_ps(fixture *f, bool with_ps)
{
    CHECK_RESULT(kiln_ps_set_shader(f->ctx, with_ps ? f->ps : (kiln_pixel_shader){0}), KILN_OK);
    CHECK_RESULT(
        kiln_om_set_blend_state(f->ctx, with_ps ? f->mask_off : (kiln_blend_state){0}, NULL),
        KILN_OK);
}

static void rect(fixture *f, double x0, double y0, double x1, double y1, float z)
{
    float v[6 * 8], *p = v;
    const double xs[6] = {x0, x1, x0, x1, x1, x0}, ys[6] = {y0, y0, y1, y0, y1, y1};
    for (int i = 0; i < 6; i++) {
        p = ru_vtx(p, W, H, xs[i], ys[i], z);
        for (int c = 0; c < 4; c++)
            *p++ = 1.0f; /* white: would show if color were written */
    }
    ru_draw(f->dev, f->ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
}

static void get(kiln_context *ctx, kiln_query q, void *data, uint32_t size)
{
    kiln_result r;
    while ((r = kiln_query_get_data(ctx, q, data, size, 0)) == KILN_E_WAS_STILL_DRAWING)
        sched_yield();
    CHECK_RESULT(r, KILN_OK);
}

static uint64_t query_u64(kiln_context *ctx, kiln_query q)
{
    uint64_t n = UINT64_MAX;
    get(ctx, q, &n, sizeof n);
    return n;
}

/* The render target still holds the clear color everywhere. */
static void check_untouched(kiln_device *dev, const ru_tex *rt)
{
    uint8_t *px = ru_read_bytes(dev, rt);
    const uint8_t want[4] = {64, 128, 191, 255}; /* CLEAR as UNORM8 */
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        bad += memcmp(px + 4 * i, want, 4) != 0;
    CHECK_EQ_INT(bad, 0);
    free(px);
}

static void test_rect_exact(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    fixture f;
    fixture_init(&f, dev, KILN_FORMAT_D32_FLOAT);
    set_ps(&f, false);
    kiln_query occ;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(f.ctx, occ), KILN_OK);
    rect(&f, 3, 2, 20, 15, 0.5f);
    CHECK_RESULT(kiln_query_end(f.ctx, occ), KILN_OK);
    CHECK_EQ_INT(query_u64(f.ctx, occ), 17 * 13);
    float *z = ru_read_f32(dev, &f.ds);
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            bool in = x >= 3 && x < 20 && y >= 2 && y < 15;
            bad += z[y * W + x] != (in ? 0.5f : 1.0f);
        }
    CHECK_EQ_INT(bad, 0);
    free(z);
    check_untouched(dev, &f.rt);
    /* Behind it now: nothing passes, nothing changes. */
    CHECK_RESULT(kiln_query_begin(f.ctx, occ), KILN_OK);
    rect(&f, 0, 0, W, H, 0.75f);
    CHECK_RESULT(kiln_query_end(f.ctx, occ), KILN_OK);
    CHECK_EQ_INT(query_u64(f.ctx, occ), W * H - 17 * 13);
    kiln_destroy_query(dev, occ);
    fixture_free(&f);
    kiln_device_destroy(dev);
}

/* Random triangles; returns the depth-stencil bytes, and the occlusion and
 * pixel-shader-invocation counts through `samples` / `ps_inv`. */
static uint8_t *random_pass(kiln_device *dev, kiln_format ds_format, bool with_ps,
                            uint64_t *samples, uint64_t *ps_inv)
{
    fixture f;
    fixture_init(&f, dev, ds_format);
    set_ps(&f, with_ps);
    kiln_depth_stencil_state dss = {0};
    if (ds_format == KILN_FORMAT_D24_UNORM_S8_UINT) {
        /* Stencil counts passes (saturating at 3), and a pixel whose count
         * has reached 2 is tested no more. */
        kiln_stencil_face face = {KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_INCR_SAT,
                                  KILN_STENCIL_OP_INCR_SAT, KILN_COMPARE_GREATER};
        dss = ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS_EQUAL,
                                                    .stencil_enable = 1,
                                                    .front = face,
                                                    .back = face});
        CHECK_RESULT(kiln_om_set_depth_stencil_state(f.ctx, dss, 2), KILN_OK);
    }
    kiln_query occ, stats;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_PIPELINE_STATISTICS, &stats), KILN_OK);
    CHECK_RESULT(kiln_query_begin(f.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_begin(f.ctx, stats), KILN_OK);
    uint32_t seed = 12345;
    float v[NTRI * 3 * 8], *p = v;
    for (int t = 0; t < NTRI * 3; t++) {
        seed = seed * 1664525u + 1013904223u;
        double x = (seed >> 8) % 4000 / 4000.0 * (W + 8) - 4;
        seed = seed * 1664525u + 1013904223u;
        double y = (seed >> 8) % 4000 / 4000.0 * (H + 8) - 4;
        seed = seed * 1664525u + 1013904223u;
        p = ru_vtx(p, W, H, x, y, (float)((seed >> 8) % 1000) / 1000.0f);
        for (int c = 0; c < 4; c++)
            *p++ = 1.0f;
    }
    for (int t = 0; t < NTRI; t++) /* one draw each: many draws of one scene */
        ru_draw(dev, f.ctx, v + t * 24, 3, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_query_end(f.ctx, occ), KILN_OK);
    CHECK_RESULT(kiln_query_end(f.ctx, stats), KILN_OK);
    *samples = query_u64(f.ctx, occ);
    kiln_query_data_pipeline_statistics st;
    get(f.ctx, stats, &st, sizeof st);
    *ps_inv = st.ps_invocations;
    uint8_t *ds = ru_read_bytes(dev, &f.ds);
    check_untouched(dev, &f.rt);
    kiln_destroy_query(dev, occ);
    kiln_destroy_query(dev, stats);
    if (dss.id)
        kiln_destroy_depth_stencil_state(dev, dss);
    fixture_free(&f);
    return ds;
}

static void test_random_equals_masked(kiln_format fmt)
{
    kiln_device *a = th_device(KILN_EXEC_ASYNC, 3), *s = th_device(KILN_EXEC_SERIAL, 0);
    uint64_t n_only = 0, n_ps = 0, inv_only = 1, inv_ps = 0;
    uint8_t *only = random_pass(a, fmt, false, &n_only, &inv_only);
    uint8_t *ref = random_pass(s, fmt, true, &n_ps, &inv_ps);
    CHECK(memcmp(only, ref, (size_t)W * H * 4) == 0);
    CHECK_EQ_INT(n_only, n_ps);
    CHECK(n_only > 0);
    CHECK_EQ_INT(inv_only, 0);
    CHECK(inv_ps >= n_ps);
    /* The pass changed depth (and, with D24S8, stencil) somewhere. */
    int changed = 0, stencil = 0;
    for (int i = 0; i < W * H; i++) {
        uint32_t w;
        memcpy(&w, only + 4 * i, 4);
        if (fmt == KILN_FORMAT_D32_FLOAT) {
            float z;
            memcpy(&z, &w, 4);
            changed += z != 1.0f;
        } else {
            changed += (w & 0xffffffu) != 0xffffffu;
            stencil += (w >> 24) != 0;
        }
    }
    CHECK(changed > W * H / 4);
    if (fmt == KILN_FORMAT_D24_UNORM_S8_UINT)
        CHECK(stencil > 0);
    printf("format %d: %llu samples passed, %d texels changed\n", (int)fmt,
           (unsigned long long)n_only, changed);
    free(only);
    free(ref);
    kiln_device_destroy(a);
    kiln_device_destroy(s);
}

static void test_validation(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 1);
    fixture f;
    fixture_init(&f, dev, KILN_FORMAT_D32_FLOAT);
    set_ps(&f, false);
    kiln_depth_stencil_state off = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(f.ctx, off, 0), KILN_OK);
    float v[3 * 8] = {0};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = 32, off0 = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(f.ctx, 0, 1, &vb, &stride, &off0), KILN_OK);
    CHECK_FAILS(kiln_draw(f.ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_RASTER);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(f.ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(f.ctx, 3, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(f.ctx, 1, &f.rt.rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_FAILS(kiln_draw(f.ctx, 3, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_NO_SHADER);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_depth_stencil_state(dev, off);
    fixture_free(&f);
    kiln_device_destroy(dev);
}

static void test_osmesa(void)
{
#if KILN_HAVE_GL
    kiln_device *dev = th_osmesa_device();
    if (!dev)
        return;
    fixture f;
    fixture_init(&f, dev, KILN_FORMAT_D32_FLOAT);
    set_ps(&f, false);
    rect(&f, 3, 2, 20, 15, 0.5f);
    float *z = ru_read_f32(dev, &f.ds);
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            bool in = x >= 3 && x < 20 && y >= 2 && y < 15;
            bad += z[y * W + x] != (in ? 0.5f : 1.0f);
        }
    CHECK_EQ_INT(bad, 0);
    free(z);
    check_untouched(dev, &f.rt);
    fixture_free(&f);
    kiln_device_destroy(dev);
#endif
}

int main(void)
{
    test_rect_exact();
    test_random_equals_masked(KILN_FORMAT_D32_FLOAT);
    test_random_equals_masked(KILN_FORMAT_D24_UNORM_S8_UINT);
    test_validation();
    test_osmesa();
    return th_exit();
}
