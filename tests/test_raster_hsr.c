/*
 * test_raster_hsr: hidden surface removal within a tile (prim.h, kr_hsr;
 * docs/raster.md) leaves exactly the bytes of shading every fragment in
 * order. The same scenes are rendered with the deferral off (the
 * reference), wherever it is allowed, and where it pays (the default), on
 * ASYNC devices of 1 and 2 workers and on a SERIAL one; every byte of two
 * color targets (RGBA8 and RGBA32F, so a shader output that changed in
 * its last bit shows) and of the depth-stencil buffer must match the
 * reference. The scenes:
 *   - overlapping triangles at random depths (overdraw) through a shader
 *     that writes its varyings, depth, primitive id, facing and block
 *     position, under every depth function, with and without depth
 *     writes, with stencil operations, culling off (both faces), on
 *     D24S8, D32, D16 and D32S8 depth buffers;
 *   - the built-in texture effect with a mip chain (trilinear) among those
 *     draws (two targets: the rules keep it in order), and a shader
 *     sampling the texture with kiln_ps_sample;
 *   - the four built-in effects into one RGBA8 target, where their
 *     specialised shading (kr_shade_select: the texture effect's is bench
 *     (e)'s path) is resolved with partial masks, at every SIMD level
 *     the CPU has;
 *   - breaks that must shade what was deferred first: a blended draw, a
 *     partial write mask, a discarding shader, clears of either target;
 *   - 3,000 triangles in one 64x64 tile: more than twice KR_HSR_PRIMS,
 *     so the tile resolves each time its list is full (counted);
 *   - a counted scene (occlusion and pipeline statistics queries): never
 *     deferred, the same counts;
 *   - the mixed scene into 4x targets (owners per sample) on the four
 *     depth formats, then small in-order triangles over some samples of
 *     each pixel, resolved.
 * The counters (kr_hsr_counts) show the deferral ran where it should, so
 * the comparisons cannot pass by never deferring. The mixed scenes'
 * reference also has tile buffers off (kr_tilebuf_mode), the others on.
 * The slot pool that tiles take their state from is checked on its own
 * (every slot once, then none), and KILN_HSR=off in the environment turns
 * the deferral off.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "raster/effects.h"
#include "raster/geom.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 201, H = 147, TEX = 64 };

/* Position (float4) then one float4 varying. */
enum { STRIDE = 32 };

/* Everything the fragment knows: targets 0 and 1. */
static void ps_probe(kiln_ps_args *a)
{
    const float *v0 = KILN_PS_VARYING(a, 0, 0), *v1 = KILN_PS_VARYING(a, 0, 1),
                *v2 = KILN_PS_VARYING(a, 0, 2), *v3 = KILN_PS_VARYING(a, 0, 3);
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = v0[i];
        KILN_PS_COLOR(a, 0, 1)[i] = v1[i] * a->z[i];
        KILN_PS_COLOR(a, 0, 2)[i] = (float)(a->primitive_id % 13) / 12.0f;
        KILN_PS_COLOR(a, 0, 3)[i] = a->front_facing ? 0.75f : 0.25f;
        KILN_PS_COLOR(a, 1, 0)[i] = v2[i] + (float)(a->x + i % 4) / 1024.0f;
        KILN_PS_COLOR(a, 1, 1)[i] = v3[i] + (float)(a->y + i / 4) / 1024.0f;
        KILN_PS_COLOR(a, 1, 2)[i] = a->z[i];
        KILN_PS_COLOR(a, 1, 3)[i] = (float)a->primitive_id;
    }
}

/* kiln_ps_sample of the varying's x, y (texture 0, sampler 0). */
static void ps_sampled(kiln_ps_args *a)
{
    float t[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1), t);
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++) {
            KILN_PS_COLOR(a, 0, c)[i] = t[c * KILN_PS_BLOCK + i];
            KILN_PS_COLOR(a, 1, c)[i] = t[c * KILN_PS_BLOCK + i] * KILN_PS_VARYING(a, 0, 2)[i];
        }
}

/* ps_probe, discarding where the varying's z is over 0.5. */
static void ps_discard(kiln_ps_args *a)
{
    ps_probe(a);
    const float *v2 = KILN_PS_VARYING(a, 0, 2);
    for (int i = 0; i < KILN_PS_BLOCK; i++)
        if (v2[i] > 0.5f)
            a->mask &= ~(1u << i);
}

static void vs_pass(const kiln_vs_args *a)
{
    for (uint32_t v = 0; v < a->count; v++)
        memcpy(a->out + (size_t)v * a->out_stride, a->in + (size_t)v * a->in_stride, 32);
}

/* The texture effect's vertex layout: position (float3), uv (float2). */
typedef struct vtx_tex {
    float pos[3], uv[2];
} vtx_tex;

typedef struct rig {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs, vs_tex;
    kiln_input_layout il, il_tex;
    kiln_pixel_shader ps_probe, ps_sampled, ps_discard, ps_tex;
    kiln_rasterizer_state rs;
    kiln_depth_stencil_state dss[8 * 2 + 2]; /* func x write, stencil, off */
    kiln_blend_state opaque, add, masked;
    kiln_texture tex;
    kiln_srv srv;
    kiln_sampler trilinear;
    kiln_buffer identity;
    ru_tex rt0, rt1, ds;
} rig;

static void rig_make(rig *r, kiln_exec_mode mode, uint32_t threads, kiln_format ds_format,
                     uint32_t w, uint32_t h)
{
    memset(r, 0, sizeof *r);
    r->dev = th_device(mode, threads);
    r->ctx = kiln_device_immediate_context(r->dev);
    kiln_device *dev = r->dev;
    kiln_vertex_shader_desc vd = {vs_pass, 2, 1, NULL, NULL};
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &r->vs), KILN_OK);
    r->il = ru_make_layout(dev, r->vs, 2);
    kiln_pixel_shader_desc pd = {.fn = ps_probe, .num_varyings = 1, .num_outputs = 2};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &r->ps_probe), KILN_OK);
    pd.fn = ps_sampled;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &r->ps_sampled), KILN_OK);
    pd.fn = ps_discard;
    pd.flags = KILN_PS_MAY_DISCARD;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &r->ps_discard), KILN_OK);
    kiln_pixel_shader_desc tpd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_TEXTURE, &vd, &tpd), KILN_OK);
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &r->vs_tex), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &tpd, &r->ps_tex), KILN_OK);
    kiln_input_layout_desc ld;
    memset(&ld, 0, sizeof ld);
    ld.num_elements = 2;
    ld.elements[0] = (kiln_input_element){KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0};
    ld.elements[1] = (kiln_input_element){KILN_FORMAT_R32G32_FLOAT, 0, 12, 0, 0};
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, r->vs_tex, &r->il_tex), KILN_OK);
    r->rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    for (int f = 0; f < 8; f++)
        for (int wr = 0; wr < 2; wr++)
            r->dss[2 * f + wr] = ru_dss(
                dev, (kiln_depth_stencil_desc){.depth_func = (kiln_compare)(KILN_COMPARE_NEVER + f),
                                               .depth_write_disable = (uint32_t)wr});
    kiln_depth_stencil_desc sd = {.depth_func = KILN_COMPARE_LESS_EQUAL, .stencil_enable = 1};
    sd.front = (kiln_stencil_face){KILN_STENCIL_OP_INCR, KILN_STENCIL_OP_DECR,
                                   KILN_STENCIL_OP_INCR_SAT, KILN_COMPARE_NOT_EQUAL};
    sd.back = (kiln_stencil_face){KILN_STENCIL_OP_ZERO, KILN_STENCIL_OP_INVERT,
                                  KILN_STENCIL_OP_REPLACE, KILN_COMPARE_GREATER_EQUAL};
    r->dss[16] =
        ds_format == KILN_FORMAT_D24_UNORM_S8_UINT || ds_format == KILN_FORMAT_D32_FLOAT_S8X24_UINT
            ? ru_dss(dev, sd)
            : ru_dss(dev, (kiln_depth_stencil_desc){0});
    r->dss[17] = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    r->opaque = ru_bs(dev, &bd);
    r->add = ru_bs_add(dev);
    bd.rt[1].write_mask = KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_A;
    r->masked = ru_bs(dev, &bd);
    /* a 64x64 RGBA8 texture with its mips: a pattern kiln_generate_mips filters */
    kiln_texture2d_desc td = {.width = TEX,
                              .height = TEX,
                              .mip_levels = 0,
                              .array_size = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &r->tex), KILN_OK);
    static uint8_t texels[TEX * TEX * 4];
    for (uint32_t i = 0; i < TEX * TEX; i++) {
        uint32_t x = i % TEX, y = i / TEX;
        texels[4 * i + 0] = (uint8_t)(x * 4);
        texels[4 * i + 1] = (uint8_t)(y * 4);
        texels[4 * i + 2] = (uint8_t)(((x / 4) ^ (y / 4)) & 1 ? 230 : 20);
        texels[4 * i + 3] = 255;
    }
    CHECK_RESULT(
        kiln_update_subresource(r->ctx, kiln_texture_resource(r->tex), 0, NULL, texels, TEX * 4, 0),
        KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, r->tex, NULL, &r->srv), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(r->ctx, r->srv), KILN_OK);
    kiln_sampler_desc smp = {.min_filter = KILN_FILTER_LINEAR,
                             .mag_filter = KILN_FILTER_LINEAR,
                             .mip_filter = KILN_FILTER_LINEAR,
                             .address_u = KILN_ADDRESS_WRAP,
                             .address_v = KILN_ADDRESS_WRAP};
    CHECK_RESULT(kiln_create_sampler(dev, &smp, &r->trilinear), KILN_OK);
    const float id[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    r->identity = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, id, sizeof id);
    r->rt0 = ru_rt(dev, w, h, KILN_FORMAT_R8G8B8A8_UNORM);
    r->rt1 = ru_rt(dev, w, h, KILN_FORMAT_R32G32B32A32_FLOAT);
    r->ds = ru_ds(dev, w, h, ds_format);
    kiln_rtv rtv[2] = {r->rt0.rtv, r->rt1.rtv};
    CHECK_RESULT(kiln_om_set_render_targets(r->ctx, 2, rtv, r->ds.dsv), KILN_OK);
    ru_set_viewport(r->ctx, 0, 0, (float)w, (float)h, 0, 1);
    CHECK_RESULT(kiln_rs_set_state(r->ctx, r->rs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(r->ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    const float clear0[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    CHECK_RESULT(kiln_clear_rtv(r->ctx, r->rt0.rtv, clear0), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(r->ctx, r->rt1.rtv, clear0), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(r->ctx, r->ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 3),
                 KILN_OK);
}

static void rig_free(rig *r)
{
    kiln_device *dev = r->dev;
    kiln_finish(r->ctx);
    ru_free_tex(dev, &r->rt0);
    ru_free_tex(dev, &r->rt1);
    ru_free_tex(dev, &r->ds);
    kiln_destroy_buffer(dev, r->identity);
    kiln_destroy_sampler(dev, r->trilinear);
    kiln_destroy_srv(dev, r->srv);
    kiln_destroy_texture(dev, r->tex);
    kiln_device_destroy(dev);
}

/* n triangles with corners within `spread` pixels of random centers in
 * [x0, x1) x [y0, y1), depths in [0.05, 0.95] (each corner its own, so
 * triangles cross), varyings in [0, 1]. */
static void probe_tris(th_rng *rng, float *v, uint32_t n, float x0, float y0, float x1, float y1,
                       float spread)
{
    for (uint32_t t = 0; t < n; t++) {
        float cx = th_frand(rng, x0, x1), cy = th_frand(rng, y0, y1);
        for (int k = 0; k < 3; k++) {
            float *p = ru_vtx(v, W, H, cx + th_frand(rng, -spread, spread),
                              cy + th_frand(rng, -spread, spread), th_frand(rng, 0.05f, 0.95f));
            for (int c = 0; c < 4; c++)
                p[c] = th_frand(rng, 0.0f, 1.0f);
            v += 8;
        }
    }
}

static void draw_probe(rig *r, kiln_pixel_shader ps, const float *v, uint32_t n)
{
    CHECK_RESULT(kiln_vs_set_shader(r->ctx, r->vs), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(r->ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(r->ctx, r->il), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(r->ctx, 0, 1, &r->srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(r->ctx, 0, 1, &r->trilinear), KILN_OK);
    ru_draw(r->dev, r->ctx, v, 3 * n, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* n textured quads (two triangles each) in perspective: w from 1 to 4,
 * uv repeating 1 to 3 times, random depths. */
static void draw_textured(rig *r, th_rng *rng, uint32_t n)
{
    vtx_tex *v = malloc(sizeof(vtx_tex) * 6 * n);
    for (uint32_t q = 0; q < n; q++) {
        float cx = th_frand(rng, -0.9f, 0.9f), cy = th_frand(rng, -0.9f, 0.9f),
              s = th_frand(rng, 0.2f, 0.7f);
        float z = th_frand(rng, 0.1f, 0.9f), lean = th_frand(rng, -0.3f, 0.3f),
              rep = th_frand(rng, 1, 3);
        vtx_tex c[4];
        for (int k = 0; k < 4; k++) {
            float ex = (k & 1) ? 0.5f : -0.5f, ey = (k & 2) ? 0.5f : -0.5f;
            c[k] = (vtx_tex){{cx + ex * s, cy + ey * s, z + ex * lean},
                             {(ex + 0.5f) * rep, (0.5f - ey) * rep}};
        }
        vtx_tex *o = &v[6 * q];
        o[0] = c[0], o[1] = c[1], o[2] = c[2], o[3] = c[2], o[4] = c[1], o[5] = c[3];
    }
    CHECK_RESULT(kiln_vs_set_shader(r->ctx, r->vs_tex), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(r->ctx, r->ps_tex), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(r->ctx, r->il_tex), KILN_OK);
    CHECK_RESULT(kiln_vs_set_constant_buffers(r->ctx, 0, 1, &r->identity), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(r->ctx, 0, 1, &r->srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(r->ctx, 0, 1, &r->trilinear), KILN_OK);
    ru_draw(r->dev, r->ctx, v, 6 * n, sizeof(vtx_tex), KILN_TOPOLOGY_TRIANGLE_LIST);
    free(v);
}

typedef struct images {
    uint8_t *rt0, *ds;
    float *rt1;
} images;

static images grab(rig *r)
{
    images im = {ru_read_bytes(r->dev, &r->rt0), ru_read_bytes(r->dev, &r->ds),
                 ru_read_f32(r->dev, &r->rt1)};
    return im;
}

static void images_free(images *im)
{
    free(im->rt0);
    free(im->ds);
    free(im->rt1);
}

/* A 4x target set: color 0 (RGBA8), color 1 (RGBA32F), depth. */
typedef struct ms_set {
    kiln_texture tex[3];
    kiln_rtv rtv[2];
    kiln_dsv dsv;
} ms_set;

static void ms_make(rig *r, ms_set *m, kiln_format ds_format)
{
    static const kiln_format f[2] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R32G32B32A32_FLOAT};
    for (int i = 0; i < 3; i++) {
        kiln_texture2d_desc d = {.width = W,
                                 .height = H,
                                 .mip_levels = 1,
                                 .array_size = 1,
                                 .format = i < 2 ? f[i] : ds_format,
                                 .sample_count = 4,
                                 .bind_flags =
                                     i < 2 ? KILN_BIND_RENDER_TARGET : KILN_BIND_DEPTH_STENCIL};
        CHECK_RESULT(kiln_create_texture2d(r->dev, &d, NULL, &m->tex[i]), KILN_OK);
        if (i < 2)
            CHECK_RESULT(kiln_create_rtv(r->dev, m->tex[i], NULL, &m->rtv[i]), KILN_OK);
        else
            CHECK_RESULT(kiln_create_dsv(r->dev, m->tex[i], NULL, &m->dsv), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(r->ctx, 2, m->rtv, m->dsv), KILN_OK);
    const float c[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    CHECK_RESULT(kiln_clear_rtv(r->ctx, m->rtv[0], c), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(r->ctx, m->rtv[1], c), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(r->ctx, m->dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 3),
                 KILN_OK);
}

/* The 4x colors resolved into the rig's single-sample targets. */
static void ms_resolve(rig *r, ms_set *m)
{
    CHECK_RESULT(kiln_resolve_subresource(r->ctx, kiln_texture_resource(r->rt0.tex), 0,
                                          kiln_texture_resource(m->tex[0]), 0, KILN_FORMAT_UNKNOWN),
                 KILN_OK);
    CHECK_RESULT(kiln_resolve_subresource(r->ctx, kiln_texture_resource(r->rt1.tex), 0,
                                          kiln_texture_resource(m->tex[1]), 0, KILN_FORMAT_UNKNOWN),
                 KILN_OK);
}

/* The mixed scene: every kind of draw above, in one scene per frame; with
 * `samples` 4 into 4x targets, resolved at the end (the depth buffer's
 * bytes are then not compared: its samples decide the colors). */
static images mixed_scene(kiln_exec_mode mode, uint32_t threads, kiln_format ds_format,
                          uint64_t seed, uint32_t samples)
{
    rig r;
    rig_make(&r, mode, threads, ds_format, W, H);
    ms_set m;
    kiln_rtv rt[2] = {r.rt0.rtv, r.rt1.rtv};
    kiln_dsv ds = r.ds.dsv;
    if (samples == 4) {
        ms_make(&r, &m, ds_format);
        rt[0] = m.rtv[0], rt[1] = m.rtv[1], ds = m.dsv;
    }
    th_rng rng = {seed};
    float *v = malloc(sizeof(float) * 8 * 3 * 400);
    for (int round = 0; round < 24; round++) {
        uint32_t pick = th_below(&rng, 18);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[pick], 1 + th_below(&rng, 4)),
                     KILN_OK);
        uint32_t b = th_below(&rng, 10);
        CHECK_RESULT(kiln_om_set_blend_state(r.ctx,
                                             b == 0   ? r.add
                                             : b == 1 ? r.masked
                                                      : r.opaque,
                                             NULL),
                     KILN_OK);
        uint32_t kind = th_below(&rng, 10), n = 20 + th_below(&rng, 200);
        if (kind < 2) {
            draw_textured(&r, &rng, 4 + th_below(&rng, 30));
        } else {
            probe_tris(&rng, v, n, 0, 0, W, H, 4 + th_frand(&rng, 0, 60));
            draw_probe(&r, kind == 2 ? r.ps_sampled : kind == 3 ? r.ps_discard : r.ps_probe, v, n);
        }
        if (round < 20 && th_below(&rng, 8) == 0) { /* the last rounds draw over everything */
            const float c[4] = {0.5f, 0.25f, 0.125f, 1.0f};
            CHECK_RESULT(kiln_clear_rtv(r.ctx, rt[th_below(&rng, 2)], c), KILN_OK);
        }
        if (round < 20 && th_below(&rng, 8) == 0)
            CHECK_RESULT(kiln_clear_dsv(r.ctx, ds, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL,
                                        th_frand(&rng, 0.3f, 1.0f), 2),
                         KILN_OK);
    }
    if (samples == 4) {
        /* Last, small opaque triangles without a depth test (in order,
         * never deferred) over part of each pixel's samples: what the
         * others keep then shows in the average, so colors that went to
         * the wrong sample of their pixel do not average out. */
        CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[17], 0), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(r.ctx, r.opaque, NULL), KILN_OK);
        probe_tris(&rng, v, 400, 0, 0, W, H, 3);
        draw_probe(&r, r.ps_probe, v, 400);
        ms_resolve(&r, &m);
    }
    free(v);
    images im = grab(&r);
    if (samples == 4) {
        memset(im.ds, 0, (size_t)W * H * kiln_format_size(ds_format));
        for (int i = 0; i < 3; i++)
            kiln_destroy_texture(r.dev, m.tex[i]);
    }
    rig_free(&r);
    return im;
}

static int same_images(const char *what, const images *a, const images *b, kiln_format ds_format)
{
    size_t px = (size_t)W * H;
    int ok = memcmp(a->rt0, b->rt0, px * 4) == 0 && memcmp(a->rt1, b->rt1, px * 16) == 0 &&
             memcmp(a->ds, b->ds, px * kiln_format_size(ds_format)) == 0;
    if (!ok)
        fprintf(stderr, "    %s: the targets differ from the in-order reference\n", what);
    return ok;
}

/* Not trivial: many distinct colors in target 0, and depth written. */
static void check_rich(const images *im)
{
    uint32_t distinct = 0;
    for (size_t i = 1; i < (size_t)W * H && distinct < 500; i++)
        distinct += memcmp(im->rt0 + 4 * i, im->rt0 + 4 * (i - 1), 4) != 0;
    CHECK(distinct >= 500);
}

/* The depth-stencil formats the scenes run on. */
static const kiln_format ds_formats[4] = {KILN_FORMAT_D24_UNORM_S8_UINT, KILN_FORMAT_D32_FLOAT,
                                          KILN_FORMAT_D16_UNORM, KILN_FORMAT_D32_FLOAT_S8X24_UINT};
static const char *const ds_names[4] = {"D24S8", "D32", "D16", "D32S8"};

static void test_mixed(void)
{
    for (int f = 0; f < 4; f++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            kr_hsr_force(1);
            kr_tilebuf_force(0); /* the reference draws into the targets themselves */
            uint64_t d0, r0;
            kr_hsr_counts(&d0, &r0);
            images ref = mixed_scene(KILN_EXEC_SERIAL, 0, ds_formats[f], seed * 7919, 1);
            uint64_t d1, r1;
            kr_hsr_counts(&d1, &r1);
            CHECK(d1 == d0 && r1 == r0); /* off: nothing deferred */
            kr_tilebuf_force(1);
            check_rich(&ref);
            static const int modes[3] = {2, 0, 2};
            static const kiln_exec_mode ex[3] = {KILN_EXEC_ASYNC, KILN_EXEC_ASYNC,
                                                 KILN_EXEC_SERIAL};
            for (int m = 0; m < 3; m++) {
                kr_hsr_force(modes[m]);
                kr_hsr_counts(&d0, &r0);
                images got = mixed_scene(ex[m], 1 + (uint32_t)m % 2, ds_formats[f], seed * 7919, 1);
                kr_hsr_counts(&d1, &r1);
                CHECK(d1 > d0 && r1 > r0); /* the scene deferred */
                char what[96];
                snprintf(what, sizeof what, "mixed scene, seed %llu, %s, mode %d",
                         (unsigned long long)seed, ds_names[f], modes[m]);
                th_check(same_images(what, &ref, &got, ds_formats[f]), what, __FILE__, __LINE__);
                images_free(&got);
            }
            images_free(&ref);
        }
    kr_hsr_force(0);
}

/* ---- the built-in effects, one RGBA8 target: their specialised shading
 * (kr_shade_select) resolved with partial masks ---- */

typedef struct vtx_fx {
    float pos[3], nrm[3];
    uint8_t color[4];
    float uv[2];
} vtx_fx;

/* Draws of the four effects in random order at random depths in
 * perspective (quads leaning in depth, so LODs vary), under LESS,
 * LESS_EQUAL, GREATER_EQUAL or ALWAYS, with and without depth writes, a
 * blended draw now and then; target 0 and the depth buffer's bytes. */
static images effects_scene(kiln_exec_mode mode, uint32_t threads, kiln_format ds_format,
                            uint64_t seed)
{
    rig r;
    rig_make(&r, mode, threads, ds_format, W, H);
    kiln_device *dev = r.dev;
    kiln_context *ctx = r.ctx;
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &r.rt0.rtv, r.ds.dsv), KILN_OK);
    kiln_vertex_shader vs[KILN_EFFECT_COUNT];
    kiln_pixel_shader ps[KILN_EFFECT_COUNT];
    kiln_input_layout il[KILN_EFFECT_COUNT];
    const kiln_input_element pos = {KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0};
    const kiln_input_element nrm = {KILN_FORMAT_R32G32B32_FLOAT, 0, 12, 0, 0};
    const kiln_input_element col = {KILN_FORMAT_R8G8B8A8_UNORM, 0, 24, 0, 0};
    const kiln_input_element uv = {KILN_FORMAT_R32G32_FLOAT, 0, 28, 0, 0};
    for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
        kiln_vertex_shader_desc vd;
        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get((kiln_effect)e, &vd, &pd), KILN_OK);
        CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs[e]), KILN_OK);
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps[e]), KILN_OK);
        kiln_input_layout_desc ld;
        memset(&ld, 0, sizeof ld);
        ld.elements[0] = pos;
        ld.num_elements = e == KILN_EFFECT_TEXTURE_COLOR || e == KILN_EFFECT_LIT ? 3 : 2;
        ld.elements[1] = e == KILN_EFFECT_TEXTURE ? uv : e == KILN_EFFECT_LIT ? nrm : col;
        ld.elements[2] = e == KILN_EFFECT_LIT ? col : uv;
        CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs[e], &il[e]), KILN_OK);
    }
    /* VS cb0: a row-major perspective (60 degrees, z 1..20), then the
     * world matrix (identity) the lit effect reads; PS cb0: the light */
    const float ys = 1.7320508f, xs = ys * (float)H / (float)W, pa = 20.0f / (1.0f - 20.0f);
    const float vcb[32] = {xs, 0, 0, 0, 0, ys, 0, 0, 0, 0, pa, pa, 0, 0, -1, 0,
                           1,  0, 0, 0, 0, 1,  0, 0, 0, 0, 1,  0,  0, 0, 0,  1};
    const float pcb[12] = {0.3f, -0.5f, -0.8f, 0, 0.9f, 0.8f, 0.7f, 0, 0.2f, 0.25f, 0.3f, 0};
    kiln_buffer vcbuf = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, vcb, sizeof vcb);
    kiln_buffer pcbuf = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, pcb, sizeof pcb);
    CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &vcbuf), KILN_OK);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &pcbuf), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &r.srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &r.trilinear), KILN_OK);
    static const kiln_compare funcs[4] = {KILN_COMPARE_LESS, KILN_COMPARE_LESS_EQUAL,
                                          KILN_COMPARE_GREATER_EQUAL, KILN_COMPARE_ALWAYS};
    th_rng rng = {seed};
    enum { QUADS = 60 };
    vtx_fx v[6 * QUADS];
    for (int round = 0; round < 16; round++) {
        int e = (int)th_below(&rng, KILN_EFFECT_COUNT);
        uint32_t f = th_below(&rng, 4), wr = th_below(&rng, 3) == 0;
        CHECK_RESULT(kiln_om_set_depth_stencil_state(
                         ctx, r.dss[2 * (funcs[f] - KILN_COMPARE_NEVER) + wr], 0),
                     KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, th_below(&rng, 8) == 0 ? r.add : r.opaque, NULL),
                     KILN_OK);
        for (int q = 0; q < QUADS; q++) {
            float cx = th_frand(&rng, -6, 6), cy = th_frand(&rng, -3.6f, 3.6f),
                  cz = th_frand(&rng, -12, -3);
            float sx = th_frand(&rng, 0.3f, 2.5f), sy = th_frand(&rng, 0.3f, 2.5f),
                  lean = th_frand(&rng, -0.6f, 0.6f);
            float rep = th_frand(&rng, 1, 4);
            vtx_fx c[4];
            for (int k = 0; k < 4; k++) {
                float ex = (k & 1) ? 0.5f : -0.5f, ey = (k & 2) ? 0.5f : -0.5f;
                c[k] = (vtx_fx){{cx + ex * sx, cy + ey * sy, cz + ex * lean * sx},
                                {th_frand(&rng, -1, 1), th_frand(&rng, -1, 1), 1},
                                {(uint8_t)th_below(&rng, 256), (uint8_t)th_below(&rng, 256),
                                 (uint8_t)th_below(&rng, 256), 255},
                                {(ex + 0.5f) * rep, (0.5f - ey) * rep}};
            }
            vtx_fx *o = &v[6 * q];
            o[0] = c[0], o[1] = c[1], o[2] = c[2], o[3] = c[2], o[4] = c[1], o[5] = c[3];
        }
        CHECK_RESULT(kiln_vs_set_shader(ctx, vs[e]), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, ps[e]), KILN_OK);
        CHECK_RESULT(kiln_ia_set_input_layout(ctx, il[e]), KILN_OK);
        ru_draw(dev, ctx, v, 6 * QUADS, sizeof(vtx_fx), KILN_TOPOLOGY_TRIANGLE_LIST);
    }
    images im = {ru_read_bytes(dev, &r.rt0), ru_read_bytes(dev, &r.ds), NULL};
    kiln_destroy_buffer(dev, vcbuf);
    kiln_destroy_buffer(dev, pcbuf);
    rig_free(&r);
    return im;
}

static void test_effects(void)
{
    size_t px = (size_t)W * H;
#if KR_EFFECTS_X86
    kr_simd lv[3];
    int nlv = kr_effects_vector_levels(lv);
    kr_simd initial = kr_effects_active_level();
#else
    int nlv = 1;
#endif
    for (int l = 0; l < nlv; l++) {
#if KR_EFFECTS_X86
        CHECK_RESULT(kr_effects_force_level(lv[l]), KILN_OK);
#endif
        for (uint64_t seed = 1; seed <= 4; seed++) {
            kiln_format fmt = seed % 2 ? KILN_FORMAT_D32_FLOAT : KILN_FORMAT_D24_UNORM_S8_UINT;
            kr_hsr_force(1);
            images ref = effects_scene(KILN_EXEC_SERIAL, 0, fmt, seed * 104729);
            check_rich(&ref);
            for (int m = 0; m < 2; m++) {
                kr_hsr_force(m ? 0 : 2);
                uint64_t d0, r0, d1, r1;
                kr_hsr_counts(&d0, &r0);
                images got = effects_scene(KILN_EXEC_ASYNC, 2, fmt, seed * 104729);
                kr_hsr_counts(&d1, &r1);
                CHECK(d1 > d0 && r1 > r0);
                char what[96];
                snprintf(what, sizeof what, "effects scene, seed %llu, level %d, mode %d",
                         (unsigned long long)seed, l, m ? 0 : 2);
                th_check(memcmp(ref.rt0, got.rt0, px * 4) == 0 &&
                             memcmp(ref.ds, got.ds, px * kiln_format_size(fmt)) == 0,
                         what, __FILE__, __LINE__);
                images_free(&got);
            }
            images_free(&ref);
        }
    }
#if KR_EFFECTS_X86
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
#endif
    kr_hsr_force(0);
}

/* 3,000 triangles in one tile: the tile resolves when KR_HSR_PRIMS are
 * deferred, twice, and once at its end. */
static void test_full_tile(void)
{
    float *v = malloc(sizeof(float) * 8 * 3 * 3000);
    images ref = {0};
    for (int mode = 1; mode >= 0; mode--) {
        kr_hsr_force(mode == 1 ? 1 : 2);
        rig r;
        rig_make(&r, KILN_EXEC_ASYNC, 2, KILN_FORMAT_D32_FLOAT, 64, 64);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[2 * 1 + 0], 0),
                     KILN_OK); /* LESS */
        th_rng rng = {99};
        /* corners within 3 px of centers 4 px inside the target: every
         * triangle's box meets the tile */
        for (uint32_t t = 0; t < 3000; t++) {
            float cx = th_frand(&rng, 4, 60), cy = th_frand(&rng, 4, 60);
            for (int k = 0; k < 3; k++) {
                float *p = ru_vtx(v + 24 * t + 8 * k, 64, 64, cx + th_frand(&rng, -3, 3),
                                  cy + th_frand(&rng, -3, 3), th_frand(&rng, 0.05f, 0.95f));
                for (int c = 0; c < 4; c++)
                    p[c] = th_frand(&rng, 0, 1);
            }
        }
        uint64_t d0, r0, d1, r1;
        kiln_finish(r.ctx);
        kr_hsr_counts(&d0, &r0);
        draw_probe(&r, r.ps_probe, v, 3000);
        kiln_finish(r.ctx);
        kr_hsr_counts(&d1, &r1);
        uint8_t *rt0 = ru_read_bytes(r.dev, &r.rt0), *ds = ru_read_bytes(r.dev, &r.ds);
        float *rt1 = ru_read_f32(r.dev, &r.rt1);
        if (mode == 1) {
            CHECK(d1 == d0 && r1 == r0);
            ref = (images){rt0, ds, rt1};
        } else {
            /* the triangles that cover some pixel center (setup drops
             * the others): more than twice KR_HSR_PRIMS, a resolve at
             * each full list and one at the end */
            CHECK(d1 - d0 > 2 * KR_HSR_PRIMS);
            CHECK(r1 - r0 == 1 + (d1 - d0 - 1) / KR_HSR_PRIMS);
            CHECK(memcmp(rt0, ref.rt0, 64 * 64 * 4) == 0);
            CHECK(memcmp(rt1, ref.rt1, 64 * 64 * 16) == 0);
            CHECK(memcmp(ds, ref.ds, 64 * 64 * 4) == 0);
            free(rt0);
            free(ds);
            free(rt1);
        }
        rig_free(&r);
    }
    images_free(&ref);
    free(v);
    kr_hsr_force(0);
}

/* A counted scene defers nothing and counts what the in-order one does. */
static void test_counted(void)
{
    uint64_t samples[2];
    kiln_query_data_pipeline_statistics stats[2];
    float *v = malloc(sizeof(float) * 8 * 3 * 300);
    for (int m = 0; m < 2; m++) {
        kr_hsr_force(m ? 2 : 1);
        rig r;
        rig_make(&r, KILN_EXEC_ASYNC, 2, KILN_FORMAT_D32_FLOAT, W, H);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[2], 0), KILN_OK);
        kiln_query occ = {0}, ps = {0};
        CHECK_RESULT(kiln_create_query(r.dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
        CHECK_RESULT(kiln_create_query(r.dev, KILN_QUERY_PIPELINE_STATISTICS, &ps), KILN_OK);
        th_rng rng = {5};
        probe_tris(&rng, v, 300, 0, 0, W, H, 30);
        kiln_finish(r.ctx);
        uint64_t d0, r0, d1, r1;
        kr_hsr_counts(&d0, &r0);
        CHECK_RESULT(kiln_query_begin(r.ctx, occ), KILN_OK);
        CHECK_RESULT(kiln_query_begin(r.ctx, ps), KILN_OK);
        draw_probe(&r, r.ps_probe, v, 300);
        CHECK_RESULT(kiln_query_end(r.ctx, ps), KILN_OK);
        CHECK_RESULT(kiln_query_end(r.ctx, occ), KILN_OK);
        kiln_result res;
        while ((res = kiln_query_get_data(r.ctx, occ, &samples[m], sizeof samples[m], 0)) ==
               KILN_E_WAS_STILL_DRAWING)
            ;
        CHECK_RESULT(res, KILN_OK);
        kiln_query_data_pipeline_statistics st;
        while ((res = kiln_query_get_data(r.ctx, ps, &st, sizeof st, 0)) ==
               KILN_E_WAS_STILL_DRAWING)
            ;
        CHECK_RESULT(res, KILN_OK);
        stats[m] = st;
        kiln_finish(r.ctx);
        kr_hsr_counts(&d1, &r1);
        CHECK(d1 == d0 && r1 == r0);
        CHECK(samples[m] > 0 && st.ps_invocations == samples[m] && st.c_primitives == 300);
        kiln_destroy_query(r.dev, occ);
        kiln_destroy_query(r.dev, ps);
        rig_free(&r);
    }
    CHECK(samples[0] == samples[1]);
    CHECK(memcmp(&stats[0], &stats[1], sizeof stats[0]) == 0);
    free(v);
    kr_hsr_force(0);
}

/* 4x targets: each sample owned by the last triangle that passed there,
 * the shader run once per pixel for each owner of some of its samples.
 * The mixed scene into 4x targets, resolved, against the in-order one. */
static void test_multisampled(void)
{
    kiln_device *probe = th_device(KILN_EXEC_SERIAL, 0);
    kiln_texture2d_desc d = {.width = 8,
                             .height = 8,
                             .mip_levels = 1,
                             .array_size = 1,
                             .format = KILN_FORMAT_R8G8B8A8_UNORM,
                             .sample_count = 4,
                             .bind_flags = KILN_BIND_RENDER_TARGET};
    kiln_texture t = {0};
    kiln_result ok = kiln_create_texture2d(probe, &d, NULL, &t);
    kiln_device_destroy(probe);
    if (ok != KILN_OK) /* a backend without 4x */
        return;
    for (int f = 0; f < 4; f++)
        for (uint64_t seed = 1; seed <= 2; seed++) {
            kr_hsr_force(1);
            images ref = mixed_scene(KILN_EXEC_SERIAL, 0, ds_formats[f], seed * 6151, 4);
            check_rich(&ref);
            for (int m = 0; m < 2; m++) {
                kr_hsr_force(m ? 0 : 2);
                uint64_t d0, r0, d1, r1;
                kr_hsr_counts(&d0, &r0);
                images got = mixed_scene(KILN_EXEC_ASYNC, 2, ds_formats[f], seed * 6151, 4);
                kr_hsr_counts(&d1, &r1);
                CHECK(m || (d1 > d0 && r1 > r0));
                char what[96];
                snprintf(what, sizeof what, "4x mixed scene, seed %llu, %s, mode %d",
                         (unsigned long long)seed, ds_names[f], m ? 0 : 2);
                th_check(same_images(what, &ref, &got, ds_formats[f]), what, __FILE__, __LINE__);
                images_free(&got);
            }
            images_free(&ref);
        }
    kr_hsr_force(0);
}

/* The pool's slots: each handed out once, none when all are out, a slot
 * given back is handed out again. */
static void test_slots(void)
{
    kiln_device_desc dd = {0};
    kb_env env;
    kb_env_init(&env, &dd);
    kr_pool *p = kr_pool_create(&env);
    CHECK(p != NULL);
    p->threads = 2;
    CHECK(kr_pool_hsr_ready(p));
    CHECK(p->nhsr == 4);
    kr_hsr *h[4];
    for (int i = 0; i < 4; i++) {
        h[i] = kr_pool_hsr_get(p);
        CHECK(h[i] != NULL);
        for (int j = 0; j < i; j++)
            CHECK(h[j] != h[i]);
    }
    CHECK(kr_pool_hsr_get(p) == NULL);
    kr_pool_hsr_put(p, h[2]);
    CHECK(kr_pool_hsr_get(p) == h[2]);
    for (int i = 0; i < 4; i++)
        kr_pool_hsr_put(p, h[i]);
    /* a fresh slot's owner map is clear */
    for (uint32_t k = 0; k < 4; k++)
        for (uint32_t i = 0; i < KR_TILE * KR_TILE; i++)
            CHECK(h[0]->owner[k][i] == 0);
    kr_pool_destroy(p);
}

/* KILN_HSR=off, read at the first scene: nothing defers. (First in
 * main: the mode is read once.) */
static void test_env_off(void)
{
    setenv("KILN_HSR", "off", 1);
    uint64_t d0, r0, d1, r1;
    kr_hsr_counts(&d0, &r0);
    images im = effects_scene(KILN_EXEC_ASYNC, 2, KILN_FORMAT_D32_FLOAT, 104729);
    kr_hsr_counts(&d1, &r1);
    CHECK(d1 == d0 && r1 == r0);
    CHECK(kr_hsr_mode() == 1);
    images_free(&im);
    unsetenv("KILN_HSR");
    kr_hsr_force(0);
}

int main(void)
{
    const char *b = getenv("KILN_TEST_BACKEND");
    if (b && strcmp(b, "soft")) {
        printf("soft backend only\n");
        return 0;
    }
    test_env_off();
    test_slots();
    test_mixed();
    test_effects();
    test_full_tile();
    test_counted();
    test_multisampled();
    return th_exit();
}
