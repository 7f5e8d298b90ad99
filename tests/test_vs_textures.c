/*
 * test_vs_textures: textures and samplers in the vertex stage (D3D10
 * VSSetShaderResources / VSSetSamplers; SampleLevel, Load and
 * GetDimensions from a vertex shader).
 *
 * - Exact values: a displacement map. Points read an R32G32B32A32_FLOAT
 *   texture of two mips (bound in vertex slot 100, samplers in slots 3
 *   and 9) with kiln_vs_load, kiln_vs_sample_level (POINT at texel
 *   centers, LINEAR half-way between two texels) and
 *   kiln_vs_get_dimensions; each point moves down by its texel's green
 *   channel (the displacement) and carries what it read to the target.
 *   37 points (batches of 16, 16 and 5). Expected values are computed here
 *   from the texel formula.
 * - Async equals serial: 24 draws, each after an update_subresource of the
 *   vertex-read texture and a WRITE_DISCARD Map of a DYNAMIC one (two
 *   vertex slots), on ASYNC devices of 1 and 3 workers and a SERIAL one:
 *   every draw reads the contents current at its call, bit for bit alike.
 * - Many bindings: 1,300 draws alternating two textures (a distinct
 *   binding each, so scenes end every KD_SCENE_MAX_TEXSETS): the last draw
 *   at each pixel wins, SERIAL and ASYNC.
 * - Locks: a gate holds the render target, so a draw reading the texture
 *   in its vertex stage is pending; an update of the texture queued after
 *   it must wait for it (the draw reads the old contents); a Map WRITE of
 *   a DYNAMIC texture the pending draw reads reports WAS_STILL_DRAWING with
 *   DO_NOT_WAIT, one of a texture it does not read does not.
 * - Validation: a vertex-stage view of a bound target (DRAW_HAZARD); on
 *   osmesa vertex-stage views and samplers and pixel views past slot 15
 *   are refused at bind time (BACKEND_FEATURE), slot 15 binds.
 * - Capture: the first scene captured (ops 120, 121) and replayed ASYNC
 *   and SERIAL to the same floats.
 */
#define _POSIX_C_SOURCE 200809L
#include "api/test_hooks.h"
#include "capture_util.h"
#include "raster_util.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>

enum { TW = 8, TH = 4, W = 16, H = 24, NPTS = 37, SLOT = 100, POINT_SAMP = 3, LINEAR_SAMP = 9 };

/* Texel (x, y) of mip m: red encodes the coordinates, green the
 * displacement in rows, blue a fraction, alpha the serial k. */
static void texel(uint32_t x, uint32_t y, uint32_t m, uint32_t k, float out[4])
{
    out[0] = (float)(x + 10 * y + 100 * m);
    out[1] = (float)((x + y + m + k) % 3);
    out[2] = 0.25f * (float)((x * 3 + y) % 4);
    out[3] = (float)k;
}

static void fill_mip(uint32_t m, uint32_t k, float *texels)
{
    uint32_t w = TW >> m, h = TH >> m;
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            texel(x, y, m, k, texels + 4 * (y * w + x));
}

/* Input 0: (px, py, a, b), input 1: (c, mode, 0, 0). Modes: 0 Load texel
 * (a, b) of mip c; 1 SampleLevel at (a, b) with lod c through the POINT
 * sampler; 2 the same through the LINEAR sampler; 3 GetDimensions of mip
 * c. The point goes to pixel (px, py + green of the Load of texel (a, b),
 * mip c) and varying 0 is what the mode read. */
static void vs_fetch(const kiln_vs_args *a)
{
    uint32_t n = a->count;
    float u[KILN_VS_BATCH], v[KILN_VS_BATCH], lod[KILN_VS_BATCH];
    int32_t x[KILN_VS_BATCH] = {0}, y[KILN_VS_BATCH] = {0}, mip[KILN_VS_BATCH] = {0};
    float ld[4 * KILN_VS_BATCH], sp[4 * KILN_VS_BATCH], sl[4 * KILN_VS_BATCH];
    for (uint32_t i = 0; i < n; i++) {
        const float *in = a->in + (size_t)i * a->in_stride;
        x[i] = (int32_t)in[2];
        y[i] = (int32_t)in[3];
        mip[i] = (int32_t)in[4];
        u[i] = in[2];
        v[i] = in[3];
        lod[i] = in[4];
    }
    kiln_vs_load(a, SLOT, n, x, y, mip, ld);
    float extra[4 * KILN_VS_BATCH]; /* vertex slot 0 (empty but in the update test: zeros) */
    kiln_vs_load(a, 0, n, x, y, mip, extra);
    kiln_vs_sample_level(a, SLOT, POINT_SAMP, n, u, v, lod, sp);
    kiln_vs_sample_level(a, SLOT, LINEAR_SAMP, n, u, v, lod, sl);
    for (uint32_t i = 0; i < n; i++) {
        const float *in = a->in + (size_t)i * a->in_stride;
        float *o = a->out + (size_t)i * a->out_stride;
        int mode = (int)in[5];
        float r[4];
        if (mode == 3) {
            uint32_t w, h, l;
            kiln_vs_get_dimensions(a, SLOT, (uint32_t)mip[i], &w, &h, &l);
            r[0] = (float)w, r[1] = (float)h, r[2] = (float)l, r[3] = 0.0f;
        } else {
            const float *src = mode == 0 ? ld : mode == 1 ? sp : sl;
            for (int c = 0; c < 4; c++)
                r[c] = src[(size_t)c * n + i];
        }
        /* pixel (px, py + displacement) of a W x H target, clip space */
        float px = in[0] + 0.5f, py = in[1] + ld[n + i] + 0.5f;
        o[0] = 2.0f * px / W - 1.0f;
        o[1] = 1.0f - 2.0f * py / H;
        o[2] = 0.5f;
        o[3] = 1.0f;
        for (int c = 0; c < 4; c++)
            o[4 + c] = r[c];
        o[7] += extra[i];
    }
}

static const kiln_vertex_shader_desc FETCH_VS = {vs_fetch, 2, 1, NULL, NULL};

enum { GS_SLOT = 2, GS_SAMP = 1 };

/* The geometry stage reads its own view: each point (from vs_fetch's
 * mode 0 at mip 0, whose red is x + 10 y) is emitted with the geometry
 * stage's texel (x, y) through kiln_gs_load, checked against
 * kiln_gs_sample_level at the texel's center (POINT) and
 * kiln_gs_get_dimensions (NaN where they disagree). */
static void gs_fetch(kiln_gs_args *a)
{
    const float *p = a->in;
    int32_t x = (int32_t)p[4] % 10, y = (int32_t)p[4] / 10 % 10, mip = 0;
    float ld[4], sp[4], u = (x + 0.5f) / TW, v = (y + 0.5f) / TH, lod = 0;
    kiln_gs_load(a, GS_SLOT, 1, &x, &y, &mip, ld);
    kiln_gs_sample_level(a, GS_SLOT, GS_SAMP, 1, &u, &v, &lod, sp);
    uint32_t w, h, l;
    kiln_gs_get_dimensions(a, GS_SLOT, 1, &w, &h, &l);
    float out[8];
    memcpy(out, p, 4 * sizeof(float));
    bool same = !memcmp(ld, sp, sizeof ld) && w == TW / 2 && h == TH / 2 && l == 2;
    for (int c = 0; c < 4; c++)
        out[4 + c] = same ? ld[c] : NAN;
    kiln_gs_emit(a, out);
}

static const kiln_geometry_shader_desc FETCH_GS = {
    .fn = gs_fetch, .input = KILN_GS_INPUT_POINT, .output = KILN_GS_OUTPUT_POINT_LIST, .max_vertices = 1,
    .num_varyings = 1};
static const kiln_pixel_shader_desc PASS_PS = {ru_ps_vary, 1, 1, 0, NULL, RU_USER(1, 1), 0};

static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.vs_fetch", &FETCH_VS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.pass", &PASS_PS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_geometry_shader(dev, "test.gs_fetch", &FETCH_GS), KILN_OK);
}

typedef struct rig {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    kiln_input_layout il;
    kiln_rasterizer_state rs;
    kiln_sampler point, linear;
    kiln_texture tex;
    kiln_srv srv;
    kiln_buffer cb;
    ru_tex rt;
} rig;

static void rig_init(rig *r, kiln_device *dev)
{
    memset(r, 0, sizeof *r);
    r->dev = dev;
    r->ctx = kiln_device_immediate_context(dev);
    register_shaders(dev, NULL);
    CHECK_RESULT(kiln_create_vertex_shader(dev, &FETCH_VS, &r->vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &PASS_PS, &r->ps), KILN_OK);
    r->il = ru_make_layout(dev, r->vs, 2);
    kiln_sampler_desc sd = {0};
    sd.min_filter = sd.mag_filter = sd.mip_filter = KILN_FILTER_POINT;
    sd.address_u = sd.address_v = KILN_ADDRESS_CLAMP;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &r->point), KILN_OK);
    sd.min_filter = sd.mag_filter = KILN_FILTER_LINEAR;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &r->linear), KILN_OK);
    float m0[TW * TH * 4], m1[TW * TH];
    fill_mip(0, 0, m0);
    fill_mip(1, 0, m1);
    kiln_subresource_data init[2] = {{m0, TW * 16}, {m1, TW / 2 * 16}};
    kiln_texture2d_desc td = {
        TW, TH, 2, 1, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE,
        0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &r->tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, r->tex, NULL, &r->srv), KILN_OK);
    r->rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    r->rs = ru_target_2d(dev, r->ctx, &r->rt);
    const float clear[4] = {-1, -1, -1, -1};
    CHECK_RESULT(kiln_clear_rtv(r->ctx, r->rt.rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(r->ctx, r->vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(r->ctx, r->ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(r->ctx, r->il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(r->ctx, SLOT, 1, &r->srv), KILN_OK);
    CHECK_RESULT(kiln_vs_set_samplers(r->ctx, POINT_SAMP, 1, &r->point), KILN_OK);
    CHECK_RESULT(kiln_vs_set_samplers(r->ctx, LINEAR_SAMP, 1, &r->linear), KILN_OK);
    /* Slots past the old limits in the other arrays too (the pixel stage
     * reads none of them: captured, replayed, harmless). */
    r->cb = ru_cbuffer(dev, (const float[4]){1, 2, 3, 4}, 4);
    CHECK_RESULT(kiln_vs_set_constant_buffers(r->ctx, KILN_MAX_CONSTANT_BUFFERS - 1, 1, &r->cb),
                 KILN_OK);
    CHECK_RESULT(kiln_ps_set_constant_buffers(r->ctx, 9, 1, &r->cb), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(r->ctx, 120, 1, &r->srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(r->ctx, KILN_MAX_SAMPLERS - 1, 1, &r->linear), KILN_OK);
}

static void rig_free(rig *r)
{
    kiln_srv none = {0};
    kiln_vs_set_shader_resources(r->ctx, SLOT, 1, &none);
    kiln_ps_set_shader_resources(r->ctx, 120, 1, &none);
    kiln_buffer nob = {0};
    kiln_vs_set_constant_buffers(r->ctx, KILN_MAX_CONSTANT_BUFFERS - 1, 1, &nob);
    kiln_ps_set_constant_buffers(r->ctx, 9, 1, &nob);
    kiln_destroy_buffer(r->dev, r->cb);
    kiln_destroy_srv(r->dev, r->srv);
    kiln_destroy_texture(r->dev, r->tex);
    ru_free_tex(r->dev, &r->rt);
    kiln_destroy_sampler(r->dev, r->point);
    kiln_destroy_sampler(r->dev, r->linear);
    kiln_destroy_rasterizer_state(r->dev, r->rs);
    kiln_destroy_input_layout(r->dev, r->il);
    kiln_destroy_vertex_shader(r->dev, r->vs);
    kiln_destroy_pixel_shader(r->dev, r->ps);
}

typedef struct pt {
    float in[8];
} pt;

/* The 37 points of the exact test: point i at column i % W, row 3 * (i / W)
 * (before its displacement), mode i % 4. */
static void exact_points(pt *p)
{
    for (int i = 0; i < NPTS; i++) {
        int mode = i % 4;
        uint32_t m = (i / 4) % 2;
        uint32_t w = TW >> m, h = TH >> m;
        uint32_t tx = (uint32_t)i % w, ty = ((uint32_t)i / 3) % h;
        float a = (float)tx, b = (float)ty;
        if (mode == 1) { /* texel centers, normalized */
            a = (tx + 0.5f) / (float)w;
            b = (ty + 0.5f) / (float)h;
        } else if (mode == 2) { /* half-way between texel tx and tx + 1 (clamped) */
            a = (tx + 1.0f) / (float)w;
            b = (ty + 0.5f) / (float)h;
        }
        p[i] = (pt){{(float)(i % W), (float)(3 * (i / W)), a, b, (float)m, (float)mode, 0, 0}};
    }
}

/* What point i must write, and where (its displaced row). */
static void exact_expect(const pt *p, uint32_t k, float out[4], int *row)
{
    int mode = (int)p->in[5];
    uint32_t m = (uint32_t)p->in[4], w = TW >> m, h = TH >> m;
    uint32_t tx, ty;
    if (mode == 0 || mode == 3) {
        tx = (uint32_t)p->in[2];
        ty = (uint32_t)p->in[3];
    } else {
        tx = (uint32_t)(p->in[2] * w - (mode == 2 ? 1.0f : 0.5f));
        ty = (uint32_t)(p->in[3] * h - 0.5f);
    }
    float load[4];
    /* the displacement always comes from the Load at (a, b) as integers */
    texel((uint32_t)p->in[2], (uint32_t)p->in[3], m, k, load);
    if ((uint32_t)p->in[2] >= w || (uint32_t)p->in[3] >= h)
        load[1] = 0.0f;
    *row = (int)p->in[1] + (int)load[1];
    if (mode == 3) {
        out[0] = (float)w, out[1] = (float)h, out[2] = 2.0f, out[3] = 0.0f;
    } else if (mode == 2) {
        float t0[4], t1[4];
        texel(tx, ty, m, k, t0);
        texel(tx + 1 < w ? tx + 1 : w - 1, ty, m, k, t1);
        for (int c = 0; c < 4; c++)
            out[c] = 0.5f * t0[c] + 0.5f * t1[c];
    } else {
        texel(tx, ty, m, k, out);
    }
}

static void draw_points(rig *r, const pt *p, uint32_t n)
{
    ru_draw(r->dev, r->ctx, p, n, sizeof(pt), KILN_TOPOLOGY_POINT_LIST);
}

static float *exact_scene(kiln_device *dev)
{
    rig r;
    rig_init(&r, dev);
    pt p[NPTS];
    exact_points(p);
    draw_points(&r, p, NPTS);
    float *img = ru_read_f32(dev, &r.rt);
    rig_free(&r);
    return img;
}

static void check_exact(const float *img, const char *what)
{
    pt p[NPTS];
    exact_points(p);
    int bad = 0;
    for (int i = 0; i < NPTS; i++) {
        float want[4];
        int row;
        exact_expect(&p[i], 0, want, &row);
        const float *got = img + 4 * ((size_t)row * W + (size_t)p[i].in[0]);
        if (memcmp(got, want, 16) != 0) {
            if (bad++ < 4)
                fprintf(stderr,
                        "    point %d (mode %d) at row %d: got %g %g %g %g, want %g %g %g %g\n", i,
                        (int)p[i].in[5], row, got[0], got[1], got[2], got[3], want[0], want[1],
                        want[2], want[3]);
        }
    }
    th_check(bad == 0, what, __FILE__, __LINE__);
}

/* ---- async equals serial with the texture updated between draws ---- */

enum { NDRAWS = 24 };

static float *update_scene(kiln_device *dev)
{
    rig r;
    rig_init(&r, dev);
    /* a second, DYNAMIC texture in vertex slot 0: vs_fetch adds its
     * Load's red channel to alpha */
    kiln_texture dyn;
    kiln_srv dyn_srv;
    kiln_texture2d_desc td = {TW,
                              TH,
                              1,
                              1,
                              KILN_FORMAT_R32G32B32A32_FLOAT,
                              KILN_USAGE_DYNAMIC,
                              KILN_BIND_SHADER_RESOURCE,
                              KILN_CPU_ACCESS_WRITE, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &dyn), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, dyn, NULL, &dyn_srv), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 1, &dyn_srv), KILN_OK);
    pt p[TW];
    for (uint32_t k = 0; k < NDRAWS; k++) {
        float m0[TW * TH * 4];
        fill_mip(0, k + 1, m0);
        CHECK_RESULT(
            kiln_update_subresource(r.ctx, kiln_texture_resource(r.tex), 0, NULL, m0, 0, 0),
            KILN_OK);
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(r.ctx, kiln_texture_resource(dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                     KILN_OK);
        for (uint32_t y = 0; y < TH; y++)
            for (uint32_t x = 0; x < TW * 4; x++)
                ((float *)((uint8_t *)m.data + y * m.row_pitch))[x] =
                    (float)(k * 1000 + y * 100 + x);
        CHECK_RESULT(kiln_unmap(r.ctx, kiln_texture_resource(dyn), 0), KILN_OK);
        /* one row of Loads: texel (x, k % TH) into column x, rows from k */
        for (uint32_t x = 0; x < TW; x++)
            p[x] = (pt){{(float)(x + (k % 2) * TW), (float)(k / 2 * 2 % (H - 2)), (float)x,
                         (float)(k % TH), 0, 0, 0, 0}};
        draw_points(&r, p, TW);
    }
    float *img = ru_read_f32(dev, &r.rt);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 1, &none), KILN_OK);
    kiln_destroy_srv(dev, dyn_srv);
    kiln_destroy_texture(dev, dyn);
    rig_free(&r);
    return img;
}

static void test_async_equals_serial(void)
{
    kiln_device *s = th_device(KILN_EXEC_SERIAL, 0);
    float *ref = update_scene(s);
    kiln_device_destroy(s);
    /* the serial image holds the last draws' contents: check a few against
     * the formula (draw k's Load of texel (x, k % 4) with serial k + 1) */
    int bad = 0;
    for (uint32_t k = NDRAWS - 4; k < NDRAWS; k++)
        for (uint32_t x = 0; x < TW; x++) {
            float want[4];
            texel(x, k % TH, 0, k + 1, want);
            want[3] += (float)(k * 1000 + (k % TH) * 100 + 4 * x); /* the DYNAMIC texture's red */
            int row = (int)(k / 2 * 2 % (H - 2)) + (int)want[1];
            const float *got = ref + 4 * ((size_t)row * W + x + (k % 2) * TW);
            bad += memcmp(got, want, 16) != 0;
        }
    CHECK_EQ_INT(bad, 0);
    for (uint32_t t = 1; t <= 3; t += 2) {
        kiln_device *a = th_device(KILN_EXEC_ASYNC, t);
        float *img = update_scene(a);
        CHECK(memcmp(img, ref, sizeof(float) * 4 * W * H) == 0);
        free(img);
        kiln_device_destroy(a);
    }
    free(ref);
}

/* ---- many bindings: scenes end at KD_SCENE_MAX_TEXSETS ---- */

enum { NMANY = 1300 };

/* 1,300 one-point draws alternating two textures in the vertex slot: each
 * a distinct binding, so the API ends the scene every 512 of them (the
 * bound on the backend's resolved views); the last draw at each pixel
 * wins. */
static void test_many_bindings(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device *dev = th_device(mode, threads);
    rig r;
    rig_init(&r, dev);
    kiln_texture t2;
    kiln_srv s2;
    float m0[TW * TH * 4], m1[TW * TH];
    fill_mip(0, 5, m0);
    fill_mip(1, 5, m1);
    kiln_subresource_data init[2] = {{m0, TW * 16}, {m1, TW / 2 * 16}};
    kiln_texture2d_desc td = {
        TW, TH, 2, 1, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE,
        0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &t2), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, t2, NULL, &s2), KILN_OK);
    pt p[NMANY];
    for (uint32_t i = 0; i < NMANY; i++)
        p[i] = (pt){{(float)(i % W), (float)(i / W % (H - 2)), (float)(i % TW),
                     (float)(i / TW % TH), 0, 0, 0, 0}};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, p, sizeof p);
    uint32_t stride = sizeof(pt), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(r.ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(r.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    for (uint32_t i = 0; i < NMANY; i++) {
        CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, SLOT, 1, i % 2 ? &s2 : &r.srv), KILN_OK);
        CHECK_RESULT(kiln_draw(r.ctx, 1, i), KILN_OK);
    }
    float *img = ru_read_f32(dev, &r.rt);
    static float want[W * H * 4];
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        want[i] = -1.0f;
    for (uint32_t i = 0; i < NMANY; i++) {
        float t[4];
        texel(i % TW, i / TW % TH, 0, i % 2 ? 5 : 0, t);
        int row = (int)p[i].in[1] + (int)t[1];
        memcpy(want + 4 * ((size_t)row * W + i % W), t, 16);
    }
    CHECK(memcmp(img, want, sizeof want) == 0);
    free(img);
    kiln_destroy_buffer(dev, vb);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, SLOT, 1, &none), KILN_OK);
    kiln_destroy_srv(dev, s2);
    kiln_destroy_texture(dev, t2);
    rig_free(&r);
    kiln_device_destroy(dev);
}

/* ---- the geometry stage ---- */

enum { NGS = 20 };

static float *gs_scene(kiln_device *dev)
{
    rig r;
    rig_init(&r, dev);
    kiln_texture t2;
    kiln_srv s2;
    float m0[TW * TH * 4], m1[TW * TH];
    fill_mip(0, 9, m0);
    fill_mip(1, 9, m1);
    kiln_subresource_data init[2] = {{m0, TW * 16}, {m1, TW / 2 * 16}};
    kiln_texture2d_desc td = {TW, TH, 2, 1, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &t2), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, t2, NULL, &s2), KILN_OK);
    kiln_geometry_shader gs;
    CHECK_RESULT(kiln_create_geometry_shader(dev, &FETCH_GS, &gs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(r.ctx, gs), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader_resources(r.ctx, GS_SLOT, 1, &s2), KILN_OK);
    CHECK_RESULT(kiln_gs_set_samplers(r.ctx, GS_SAMP, 1, &r.point), KILN_OK);
    pt p[NGS];
    for (uint32_t i = 0; i < NGS; i++)
        p[i] = (pt){{(float)(i % W), (float)(12 + 3 * (i / W)), (float)(i % TW), (float)(i / TW % TH), 0, 0, 0, 0}};
    draw_points(&r, p, NGS);
    float *img = ru_read_f32(dev, &r.rt);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_gs_set_shader_resources(r.ctx, GS_SLOT, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_gs_set_shader(r.ctx, (kiln_geometry_shader){0}), KILN_OK);
    kiln_destroy_geometry_shader(dev, gs);
    kiln_destroy_srv(dev, s2);
    kiln_destroy_texture(dev, t2);
    rig_free(&r);
    return img;
}

static void check_gs(const float *img, const char *what)
{
    int bad = 0;
    for (uint32_t i = 0; i < NGS; i++) {
        uint32_t x = i % TW, y = i / TW % TH;
        float disp[4], want[4];
        texel(x, y, 0, 0, disp); /* the vertex stage's displacement */
        texel(x, y, 0, 9, want); /* what the geometry stage read */
        int row = 12 + 3 * (int)(i / W) + (int)disp[1];
        bad += memcmp(img + 4 * ((size_t)row * W + i % W), want, 16) != 0;
    }
    th_check(bad == 0, what, __FILE__, __LINE__);
}

static void test_gs(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    CHECK_RESULT(kiln_capture_begin(dev, "gs_textures.kcap"), KILN_OK);
    float *img = gs_scene(dev);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    check_gs(img, "geometry-stage Load, SampleLevel, GetDimensions");
    free(img);
    kiln_device_destroy(dev);
    size_t len;
    uint8_t *bytes = cu_read("gs_textures.kcap", &len);
    CHECK(bytes != NULL);
    CHECK(cu_count_op(bytes, len, KCAP_OP_GS_SET_SHADER_RESOURCES) >= 1);
    CHECK(cu_count_op(bytes, len, KCAP_OP_GS_SET_SAMPLERS) >= 1);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 2, register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = NULL;
        for (uint32_t k = 0; k < out.n && !t; k++)
            if (out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].width == W && out.v[k].bpp == 16)
                t = &out.v[k];
        CHECK(t != NULL);
        if (t)
            check_gs((const float *)t->pixels, "replayed geometry-stage reads");
        cu_free(&out);
    }
    free(bytes);
}

/* ---- locks ---- */

static void test_locks(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    rig r;
    rig_init(&r, dev);
    kiln_texture dyn, other;
    kiln_srv dyn_srv;
    kiln_texture2d_desc td = {TW,
                              TH,
                              1,
                              1,
                              KILN_FORMAT_R32G32B32A32_FLOAT,
                              KILN_USAGE_DYNAMIC,
                              KILN_BIND_SHADER_RESOURCE,
                              KILN_CPU_ACCESS_WRITE, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &dyn), KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &other), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, dyn, NULL, &dyn_srv), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 1, &dyn_srv), KILN_OK);
    CHECK_RESULT(kiln_finish(r.ctx), KILN_OK);

    kiln_test_gate *g;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource rt = kiln_texture_resource(r.rt.tex);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(r.ctx, g, &rt, &w, 1), KILN_OK);
    kiln_test_gate_wait_entered(g, 1);
    pt p[TW];
    for (uint32_t x = 0; x < TW; x++)
        p[x] = (pt){{(float)x, 0, (float)x, 1, 0, 0, 0, 0}};
    draw_points(&r, p, TW);
    CHECK_RESULT(kiln_flush(r.ctx), KILN_OK); /* the draw is queued, behind the gate */
    /* The texture the pending draw reads: an update must wait for it. */
    float m0[TW * TH * 4];
    fill_mip(0, 7, m0);
    CHECK_RESULT(kiln_update_subresource(r.ctx, kiln_texture_resource(r.tex), 0, NULL, m0, 0, 0),
                 KILN_OK);
    /* A Map WRITE of the DYNAMIC texture it reads in the vertex stage
     * conflicts with it; one of a texture it does not read does not. */
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(r.ctx, kiln_texture_resource(dyn), 0, KILN_MAP_WRITE,
                          KILN_MAP_FLAG_DO_NOT_WAIT, &m),
                 KILN_E_WAS_STILL_DRAWING);
    CHECK_RESULT(kiln_map(r.ctx, kiln_texture_resource(other), 0, KILN_MAP_WRITE,
                          KILN_MAP_FLAG_DO_NOT_WAIT, &m),
                 KILN_OK);
    CHECK_RESULT(kiln_unmap(r.ctx, kiln_texture_resource(other), 0), KILN_OK);
    kiln_test_gate_open(g);
    CHECK_RESULT(kiln_map(r.ctx, kiln_texture_resource(dyn), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(r.ctx, kiln_texture_resource(dyn), 0), KILN_OK);
    float *img = ru_read_f32(dev, &r.rt);
    int bad = 0;
    for (uint32_t x = 0; x < TW; x++) {
        float want[4];
        texel(x, 1, 0, 0, want); /* the contents before the update */
        bad += memcmp(img + 4 * ((size_t)want[1] * W + x), want, 16) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    free(img);
    /* and a draw after the update reads the new contents */
    const float clear[4] = {-1, -1, -1, -1};
    CHECK_RESULT(kiln_clear_rtv(r.ctx, r.rt.rtv, clear), KILN_OK);
    draw_points(&r, p, TW);
    img = ru_read_f32(dev, &r.rt);
    bad = 0;
    for (uint32_t x = 0; x < TW; x++) {
        float want[4];
        texel(x, 1, 0, 7, want);
        bad += memcmp(img + 4 * ((size_t)want[1] * W + x), want, 16) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    free(img);
    kiln_test_gate_destroy(g);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 0, 1, &none), KILN_OK);
    kiln_destroy_srv(dev, dyn_srv);
    kiln_destroy_texture(dev, dyn);
    kiln_destroy_texture(dev, other);
    rig_free(&r);
    kiln_device_destroy(dev);
}

/* ---- validation ---- */

static void test_validation(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    rig r;
    rig_init(&r, dev);
    kiln_srv rt_srv;
    CHECK_RESULT(kiln_create_srv(dev, r.rt.tex, NULL, &rt_srv), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 7, 1, &rt_srv), KILN_OK);
    pt p[1] = {{{0, 0, 0, 0, 0, 0, 0, 0}}};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, p, sizeof p);
    uint32_t stride = sizeof(pt), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(r.ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(r.ctx, KILN_TOPOLOGY_POINT_LIST), KILN_OK);
    CHECK_FAILS(kiln_draw(r.ctx, 1, 0), KILN_E_INVALID_CALL, KILN_LOG_DRAW_HAZARD);
    kiln_srv none = {0};
    CHECK_RESULT(kiln_vs_set_shader_resources(r.ctx, 7, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_draw(r.ctx, 1, 0), KILN_OK);
    CHECK_FAILS(kiln_vs_set_shader_resources(r.ctx, 0, 1, NULL), KILN_E_INVALID_ARG,
                KILN_LOG_NULL_POINTER);
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_srv(dev, rt_srv);
    rig_free(&r);
    kiln_device_destroy(dev);

#if KILN_HAVE_GL
    kiln_device *gl = th_osmesa_device();
    if (!gl)
        return;
    kiln_context *ctx = kiln_device_immediate_context(gl);
    ru_tex t = ru_rt(gl, 4, 4, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_create_srv(gl, t.tex, NULL, &t.srv), KILN_OK);
    kiln_sampler smp;
    kiln_sampler_desc sd = {0};
    CHECK_RESULT(kiln_create_sampler(gl, &sd, &smp), KILN_OK);
    CHECK_FAILS(kiln_vs_set_shader_resources(ctx, 0, 1, &t.srv), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK_FAILS(kiln_vs_set_samplers(ctx, 0, 1, &smp), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK_RESULT(kiln_vs_set_shader_resources(ctx, 0, 1, &none), KILN_OK); /* empty slots bind */
    CHECK_FAILS(kiln_ps_set_shader_resources(ctx, 16, 1, &t.srv), KILN_E_UNSUPPORTED,
                KILN_LOG_BACKEND_FEATURE);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 15, 1, &t.srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 15, 1, &smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 15, 1, &none), KILN_OK);
    CHECK_FAILS(kiln_gs_set_shader_resources(ctx, 0, 1, &t.srv), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    CHECK_FAILS(kiln_gs_set_samplers(ctx, 0, 1, &smp), KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_FEATURE);
    kiln_destroy_sampler(gl, smp);
    ru_free_tex(gl, &t);
    kiln_device_destroy(gl);
#endif
}

int main(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 3);
    CHECK_RESULT(kiln_capture_begin(dev, "vs_textures.kcap"), KILN_OK);
    float *img = exact_scene(dev);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    check_exact(img,
                "vertex-stage Load, SampleLevel (POINT, LINEAR), GetDimensions and displacement");
    free(img);
    kiln_device_destroy(dev);

    size_t len;
    uint8_t *bytes = cu_read("vs_textures.kcap", &len);
    CHECK(bytes != NULL);
    CHECK(cu_count_op(bytes, len, KCAP_OP_VS_SET_SHADER_RESOURCES) >= 1);
    CHECK(cu_count_op(bytes, len, KCAP_OP_VS_SET_SAMPLERS) >= 2);
    CHECK(cu_count_op(bytes, len, KCAP_OP_PS_SET_SHADER_RESOURCES) >= 1);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3,
                               register_shaders, &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = NULL;
        for (uint32_t k = 0; k < out.n && !t; k++)
            if (out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].width == W && out.v[k].bpp == 16)
                t = &out.v[k];
        CHECK(t != NULL);
        if (t)
            check_exact((const float *)t->pixels, "replayed vertex-stage reads");
        cu_free(&out);
    }
    free(bytes);

    test_async_equals_serial();
    test_gs();
    test_many_bindings(KILN_EXEC_SERIAL, 0);
    test_many_bindings(KILN_EXEC_ASYNC, 3);
    test_locks();
    test_validation();
    return th_exit();
}
