/*
 * test_raster_async: DESIGN invariant 1 ("async equals serial") extended to
 * drawing. Random sequences of draws (random triangles, lines and points;
 * the four built-in effects; random rasterizer, depth-stencil, blend and
 * sampler states; several target sets, including rendering into a texture
 * that later draws sample), maps of DYNAMIC vertex and constant buffers
 * (WRITE_DISCARD, and WRITE_NO_OVERWRITE appends that never touch bytes a
 * queued draw reads), UpdateSubresource, copies, clears, generate_mips,
 * a 4x target and depth buffer (alpha to coverage among the blend states,
 * resolves into a single-sample target mid-sequence and at the end),
 * mid-sequence readbacks through STAGING maps, flushes and finishes run on
 * an ASYNC device (1-4 workers) and on a SERIAL device from the same seed.
 * Every call's result, every byte a staging Map shows, and the final bytes
 * of every target, texture and buffer must be identical. The SERIAL run
 * shades every fragment in order; the ASYNC one defers shading behind
 * each tile's visibility (hidden surface removal, kr_hsr) wherever the
 * rules allow it or, on even seeds, where it pays (the default). The
 * SERIAL run draws into the targets themselves; the ASYNC one runs a tile
 * whose plane a clear fills on a tile buffer (kr_tilebuf_mode, the
 * default).
 *
 * Every choice, including the bytes written through maps, is drawn from the
 * seed before the call; nothing depends on timing or on what kiln returns.
 *
 * Environment:
 *   KILN_RASTER_FUZZ=N       sequences (default 1000, about 15 s; 300 under ASan,
 *                           120 under TSan)
 *   KILN_RASTER_FUZZ_SEED=S  run only seed S
 *   KILN_RASTER_FUZZ_VERBOSE=1  print each operation
 */
#include "raster/prim.h"
#include "raster_util.h"

#include <stdio.h>

#if defined(__SANITIZE_THREAD__)
#define DEFAULT_SEQUENCES 120
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DEFAULT_SEQUENCES 120
#endif
#endif
#if !defined(DEFAULT_SEQUENCES) && defined(__SANITIZE_ADDRESS__)
#define DEFAULT_SEQUENCES 300
#endif
#ifndef DEFAULT_SEQUENCES
#define DEFAULT_SEQUENCES 1000
#endif

enum { W = 64, H = 48, TS = 32, TMIPS = 3, NV = 384, NI = 240, NOPS = 48, MAXTRACE = 512 };

typedef struct vtx {
    float pos[3];
    float normal[3];
    uint8_t color[4];
    float uv[2];
} vtx; /* 36 bytes */

typedef struct run {
    kiln_device *dev;
    kiln_context *ctx;
    th_rng rng;
    int verbose;
    /* pipeline objects */
    kiln_vertex_shader vs[KILN_EFFECT_COUNT];
    kiln_pixel_shader ps[KILN_EFFECT_COUNT];
    kiln_input_layout il[KILN_EFFECT_COUNT];
    kiln_rasterizer_state rs[4];
    kiln_depth_stencil_state dss[4];
    kiln_blend_state bs[5];
    kiln_sampler samp[3];
    /* resources */
    kiln_texture rt0, rt1, ds, tex, st_rt0, st_tex, ms_rt, ms_ds;
    kiln_rtv rt0v, rt1v, texv, ms_rtv;
    kiln_dsv dsv, ms_dsv;
    kiln_srv rt0s, texs;
    kiln_buffer vb_dyn, vb_def, vb_src, ib, cb_dyn, cb_def;
    /* model state, independent of the mode */
    uint32_t dyn_used; /* vertices of vb_dyn that queued draws may read */
    uint32_t dyn_written;
    bool has_ms; /* the backend has 4x targets and alpha to coverage */
    /* results */
    uint64_t trace[MAXTRACE];
    int ntrace;
} run;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static void tr(run *R, uint64_t v)
{
    if (R->ntrace < MAXTRACE)
        R->trace[R->ntrace++] = v;
}

static void res(run *R, kiln_result r) { tr(R, (uint64_t)(int64_t)r); }

static float frand(run *R, float lo, float hi)
{
    return lo + (hi - lo) * (float)(th_next(&R->rng) >> 40) / (float)(1u << 24);
}
static uint32_t below(run *R, uint32_t n) { return th_below(&R->rng, n); }

static void rand_vtx(run *R, vtx *v, float cx, float cy, float spread)
{
    v->pos[0] = cx + frand(R, -spread, spread);
    v->pos[1] = cy + frand(R, -spread, spread);
    v->pos[2] = frand(R, 0.05f, 0.95f);
    v->normal[0] = frand(R, -1, 1);
    v->normal[1] = frand(R, -1, 1);
    v->normal[2] = frand(R, -1, 1);
    for (int c = 0; c < 4; c++)
        v->color[c] = (uint8_t)below(R, 256);
    v->uv[0] = frand(R, -1, 2);
    v->uv[1] = frand(R, -1, 2);
}

static void rand_vtxs(run *R, vtx *v, uint32_t n)
{
    float cx = 0, cy = 0, spread = 1.0f;
    for (uint32_t i = 0; i < n; i++) {
        if (i % 3 == 0) { /* each triangle around its own center */
            cx = frand(R, -1.1f, 1.1f);
            cy = frand(R, -1.1f, 1.1f);
            spread = below(R, 4) == 0 ? 1.2f : frand(R, 0.02f, 0.4f);
        }
        rand_vtx(R, &v[i], cx, cy, spread);
    }
}

/* 32 floats: world_view_proj then world (LIT). */
static void rand_matrices(run *R, float *m)
{
    memset(m, 0, 32 * sizeof(float));
    float s = frand(R, 0.6f, 1.3f), a = frand(R, -0.6f, 0.6f);
    float c = cosf(a), sn = sinf(a);
    m[0] = s * c;
    m[1] = -s * sn;
    m[3] = frand(R, -0.2f, 0.2f);
    m[4] = s * sn;
    m[5] = s * c;
    m[7] = frand(R, -0.2f, 0.2f);
    m[10] = 1.0f;
    if (below(R, 2)) { /* some perspective: w = 1 + k z */
        m[14] = frand(R, 0.0f, 1.5f);
        m[15] = 1.0f;
    } else {
        m[15] = 1.0f;
    }
    for (int i = 0; i < 16; i++)
        m[16 + i] = (i % 5 == 0) ? 1.0f : 0.0f;
    m[16 + 1] = frand(R, -0.5f, 0.5f);
}

static void log_op(run *R, const char *what, uint32_t a, uint32_t b)
{
    if (R->verbose)
        fprintf(stderr, "  [%d] %s %u %u\n", R->ntrace, what, a, b);
}

/* ---- setup ---- */

static void create_all(run *R, uint64_t seed)
{
    kiln_device *dev = R->dev;
    for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
        kiln_vertex_shader_desc vd;
        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get((kiln_effect)e, &vd, &pd), KILN_OK);
        CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &R->vs[e]), KILN_OK);
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &R->ps[e]), KILN_OK);
        kiln_input_layout_desc ld;
        memset(&ld, 0, sizeof ld);
        const kiln_input_element pos = {KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0};
        const kiln_input_element nrm = {KILN_FORMAT_R32G32B32_FLOAT, 0, 12, 0, 0};
        const kiln_input_element col = {KILN_FORMAT_R8G8B8A8_UNORM, 0, 24, 0, 0};
        const kiln_input_element uv = {KILN_FORMAT_R32G32_FLOAT, 0, 28, 0, 0};
        ld.elements[0] = pos;
        switch (e) {
        case KILN_EFFECT_VERTEX_COLOR:
            ld.num_elements = 2, ld.elements[1] = col;
            break;
        case KILN_EFFECT_TEXTURE:
            ld.num_elements = 2, ld.elements[1] = uv;
            break;
        case KILN_EFFECT_TEXTURE_COLOR:
            ld.num_elements = 3, ld.elements[1] = col, ld.elements[2] = uv;
            break;
        default:
            ld.num_elements = 3, ld.elements[1] = nrm, ld.elements[2] = col;
            break;
        }
        CHECK_RESULT(kiln_create_input_layout(dev, &ld, R->vs[e], &R->il[e]), KILN_OK);
    }
    R->rs[0] = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    R->rs[1] = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_BACK, .front_ccw = 1});
    R->rs[2] =
        ru_rs(dev, (kiln_rasterizer_desc){
                       .fill = KILN_FILL_WIREFRAME, .cull = KILN_CULL_NONE, .scissor_enable = 1});
    R->rs[3] = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE,
                                                 .depth_bias = 50,
                                                 .slope_scaled_depth_bias = 1.0f,
                                                 .depth_clip_disable = 1});
    R->dss[0] = ru_dss(dev, (kiln_depth_stencil_desc){0});
    R->dss[1] = ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS,
                                                      .depth_write_disable = 1});
    kiln_depth_stencil_desc sd = {0};
    sd.depth_func = KILN_COMPARE_LESS_EQUAL;
    sd.stencil_enable = 1;
    sd.front = (kiln_stencil_face){KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_DECR, KILN_STENCIL_OP_INCR,
                                   KILN_COMPARE_ALWAYS};
    sd.back = (kiln_stencil_face){KILN_STENCIL_OP_ZERO, KILN_STENCIL_OP_KEEP,
                                  KILN_STENCIL_OP_INVERT, KILN_COMPARE_GREATER};
    R->dss[2] = ru_dss(dev, sd);
    R->dss[3] = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    kiln_blend_desc bd = {0};
    R->bs[0] = ru_bs(dev, &bd);
    bd.rt[0] = (kiln_blend_target){1,
                                   KILN_BLEND_SRC_ALPHA,
                                   KILN_BLEND_INV_SRC_ALPHA,
                                   KILN_BLEND_OP_ADD,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_INV_SRC_ALPHA,
                                   KILN_BLEND_OP_ADD,
                                   0};
    R->bs[1] = ru_bs(dev, &bd);
    R->bs[2] = ru_bs_add(dev);
    bd.rt[0] = (kiln_blend_target){1,
                                   KILN_BLEND_BLEND_FACTOR,
                                   KILN_BLEND_DEST_COLOR,
                                   KILN_BLEND_OP_REV_SUBTRACT,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_OP_MAX,
                                   KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_B};
    R->bs[3] = ru_bs(dev, &bd);
    /* multisampling and alpha to coverage: not on osmesa (refused there) */
    const char *backend = getenv("KILN_TEST_BACKEND");
    R->has_ms = !(backend && !strcmp(backend, "osmesa"));
    kiln_blend_desc a2c = {0};
    a2c.alpha_to_coverage = R->has_ms;
    R->bs[4] = ru_bs(dev, &a2c);
    kiln_sampler_desc s0 = {0}, s1 = {0}, s2 = {0};
    s1.min_filter = s1.mag_filter = s1.mip_filter = KILN_FILTER_POINT;
    s1.address_u = s1.address_v = KILN_ADDRESS_WRAP;
    s2.address_u = KILN_ADDRESS_MIRROR;
    s2.address_v = KILN_ADDRESS_BORDER;
    s2.border_color[1] = 1.0f;
    s2.mip_lod_bias = 0.5f;
    CHECK_RESULT(kiln_create_sampler(dev, &s0, &R->samp[0]), KILN_OK);
    CHECK_RESULT(kiln_create_sampler(dev, &s1, &R->samp[1]), KILN_OK);
    CHECK_RESULT(kiln_create_sampler(dev, &s2, &R->samp[2]), KILN_OK);

    kiln_texture2d_desc rd = {W,
                              H,
                              1,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &rd, NULL, &R->rt0), KILN_OK);
    kiln_texture2d_desc r1 = {
        W, H, 1, 1, KILN_FORMAT_R32G32B32A32_FLOAT, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &r1, NULL, &R->rt1), KILN_OK);
    kiln_texture2d_desc dd = {
        W, H, 1, 1, KILN_FORMAT_D24_UNORM_S8_UINT, KILN_USAGE_DEFAULT, KILN_BIND_DEPTH_STENCIL, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &dd, NULL, &R->ds), KILN_OK);
    kiln_texture2d_desc td = {TS,
                              TS,
                              TMIPS,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE,
                              0, 0};
    /* initial texel data from the seed */
    th_rng init = {seed * 0x9E3779B97F4A7C15ull + 1};
    static uint8_t texels[TS * TS * 4];
    for (size_t i = 0; i < sizeof texels; i++)
        texels[i] = (uint8_t)th_below(&init, 256);
    kiln_subresource_data tinit[TMIPS] = {{texels, TS * 4}, {texels, TS * 2}, {texels, TS}};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, tinit, &R->tex), KILN_OK);
    kiln_texture2d_desc sr = rd, st = td;
    sr.usage = st.usage = KILN_USAGE_STAGING;
    sr.bind_flags = st.bind_flags = 0;
    sr.cpu_access = st.cpu_access = KILN_CPU_ACCESS_READ;
    CHECK_RESULT(kiln_create_texture2d(dev, &sr, NULL, &R->st_rt0), KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev, &st, NULL, &R->st_tex), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, R->rt0, NULL, &R->rt0v), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, R->rt1, NULL, &R->rt1v), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, R->tex, NULL, &R->texv), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, R->ds, NULL, &R->dsv), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, R->rt0, NULL, &R->rt0s), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, R->tex, NULL, &R->texs), KILN_OK);
    kiln_texture2d_desc md = {.width = W, .height = H, .mip_levels = 1, .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_RENDER_TARGET, .sample_count = R->has_ms ? 4 : 1};
    CHECK_RESULT(kiln_create_texture2d(dev, &md, NULL, &R->ms_rt), KILN_OK);
    md.format = KILN_FORMAT_D24_UNORM_S8_UINT;
    md.bind_flags = KILN_BIND_DEPTH_STENCIL;
    CHECK_RESULT(kiln_create_texture2d(dev, &md, NULL, &R->ms_ds), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, R->ms_rt, NULL, &R->ms_rtv), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, R->ms_ds, NULL, &R->ms_dsv), KILN_OK);

    static vtx verts[NV];
    rand_vtxs(R, verts, NV);
    kiln_buffer_desc dyn = {NV * sizeof(vtx), KILN_USAGE_DYNAMIC, KILN_BIND_VERTEX_BUFFER,
                            KILN_CPU_ACCESS_WRITE};
    CHECK_RESULT(kiln_create_buffer(dev, &dyn, NULL, &R->vb_dyn), KILN_OK);
    R->vb_def = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, verts, NV * sizeof(vtx));
    rand_vtxs(R, verts, NV);
    R->vb_src = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, verts, NV * sizeof(vtx));
    static uint32_t idx[NI];
    for (int i = 0; i < NI; i++)
        idx[i] = below(R, NV);
    R->ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
    kiln_buffer_desc cbd = {128, KILN_USAGE_DYNAMIC, KILN_BIND_CONSTANT_BUFFER,
                            KILN_CPU_ACCESS_WRITE};
    CHECK_RESULT(kiln_create_buffer(dev, &cbd, NULL, &R->cb_dyn), KILN_OK);
    float light[12] = {0.3f, -0.5f, -0.8f, 0, 0.9f, 0.8f, 0.7f, 0, 0.1f, 0.15f, 0.2f, 0};
    R->cb_def = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, light, sizeof light);
    R->dyn_used = NV; /* unknown contents until the first DISCARD: never append */
    R->dyn_written = 0;
}

static void destroy_all(run *R)
{
    kiln_device_destroy(R->dev); /* releases everything */
    R->dev = NULL;
}

/* ---- operations ---- */

static void op_map_dyn_vb(run *R)
{
    static vtx v[NV];
    int append = R->dyn_used + 12 <= NV && below(R, 2);
    kiln_mapped_subresource m;
    if (append) {
        /* NO_OVERWRITE: new vertices after those queued draws may read */
        uint32_t n = 3 * (1 + below(R, (NV - R->dyn_used) / 3 < 8 ? (NV - R->dyn_used) / 3 : 8));
        rand_vtxs(R, v, n);
        log_op(R, "map vb NO_OVERWRITE at", R->dyn_used, n);
        kiln_result r = kiln_map(R->ctx, kiln_buffer_resource(R->vb_dyn), 0,
                                 KILN_MAP_WRITE_NO_OVERWRITE, 0, &m);
        res(R, r);
        if (r == KILN_OK) {
            memcpy((uint8_t *)m.data + (size_t)R->dyn_used * sizeof(vtx), v, n * sizeof(vtx));
            res(R, kiln_unmap(R->ctx, kiln_buffer_resource(R->vb_dyn), 0));
        }
        R->dyn_written = R->dyn_used + n;
    } else {
        /* DISCARD: fresh storage, every byte written */
        rand_vtxs(R, v, NV);
        uint32_t keep = 3 * (4 + below(R, 60)); /* vertices valid for draws */
        log_op(R, "map vb DISCARD valid", keep, 0);
        kiln_result r =
            kiln_map(R->ctx, kiln_buffer_resource(R->vb_dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
        res(R, r);
        if (r == KILN_OK) {
            memcpy(m.data, v, NV * sizeof(vtx));
            res(R, kiln_unmap(R->ctx, kiln_buffer_resource(R->vb_dyn), 0));
        }
        R->dyn_written = keep;
        R->dyn_used = 0;
    }
}

static void op_map_cb(run *R)
{
    float m[32];
    rand_matrices(R, m);
    log_op(R, "map cb DISCARD", 0, 0);
    kiln_mapped_subresource ms;
    kiln_result r =
        kiln_map(R->ctx, kiln_buffer_resource(R->cb_dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &ms);
    res(R, r);
    if (r == KILN_OK) {
        memcpy(ms.data, m, sizeof m);
        res(R, kiln_unmap(R->ctx, kiln_buffer_resource(R->cb_dyn), 0));
    }
}

static void op_update(run *R)
{
    uint32_t what = below(R, 4);
    if (what == 0) { /* vertices of the DEFAULT vertex buffer */
        static vtx v[NV];
        uint32_t first = below(R, NV), n = 1 + below(R, NV - first);
        rand_vtxs(R, v, n);
        kiln_box b = {first * (uint32_t)sizeof(vtx),       0, 0,
                      (first + n) * (uint32_t)sizeof(vtx), 1, 1};
        log_op(R, "update vb_def", first, n);
        res(R, kiln_update_subresource(R->ctx, kiln_buffer_resource(R->vb_def), 0, &b, v, 0, 0));
    } else if (what == 1) { /* indices */
        uint32_t idx[NI];
        uint32_t first = below(R, NI), n = 1 + below(R, NI - first);
        for (uint32_t i = 0; i < n; i++)
            idx[i] = below(R, NV);
        kiln_box b = {first * 4, 0, 0, (first + n) * 4, 1, 1};
        log_op(R, "update ib", first, n);
        res(R, kiln_update_subresource(R->ctx, kiln_buffer_resource(R->ib), 0, &b, idx, 0, 0));
    } else if (what == 2) { /* the light */
        float light[12];
        for (int i = 0; i < 12; i++)
            light[i] = frand(R, -1, 1);
        log_op(R, "update cb_def", 0, 0);
        res(R,
            kiln_update_subresource(R->ctx, kiln_buffer_resource(R->cb_def), 0, NULL, light, 0, 0));
    } else { /* a box of a texture mip */
        uint32_t mip = below(R, TMIPS), sz = TS >> mip;
        uint32_t x0 = below(R, sz), y0 = below(R, sz);
        uint32_t x1 = x0 + 1 + below(R, sz - x0), y1 = y0 + 1 + below(R, sz - y0);
        uint8_t data[TS * TS * 4];
        for (uint32_t i = 0; i < (x1 - x0) * (y1 - y0) * 4; i++)
            data[i] = (uint8_t)below(R, 256);
        kiln_box b = {x0, y0, 0, x1, y1, 1};
        log_op(R, "update tex mip", mip, x0);
        res(R, kiln_update_subresource(R->ctx, kiln_texture_resource(R->tex), mip, &b, data,
                                       (x1 - x0) * 4, 0));
    }
}

static void op_copy(run *R)
{
    uint32_t what = below(R, 3);
    if (what == 0) {
        log_op(R, "copy vb_src -> vb_def", 0, 0);
        res(R, kiln_copy_resource(R->ctx, kiln_buffer_resource(R->vb_def),
                                  kiln_buffer_resource(R->vb_src)));
    } else if (what == 1) { /* a region of rt0 into texture mip 0 */
        uint32_t x0 = below(R, W - 8), y0 = below(R, H - 8), w = 1 + below(R, 16),
                 h = 1 + below(R, 16);
        w = x0 + w > W ? W - x0 : w;
        h = y0 + h > H ? H - y0 : h;
        uint32_t dx = below(R, TS - (w < TS ? w : TS) + 1),
                 dy = below(R, TS - (h < TS ? h : TS) + 1);
        w = dx + w > TS ? TS - dx : w;
        h = dy + h > TS ? TS - dy : h;
        kiln_box b = {x0, y0, 0, x0 + w, y0 + h, 1};
        log_op(R, "copy rt0 region -> tex", x0, y0);
        res(R, kiln_copy_subresource_region(R->ctx, kiln_texture_resource(R->tex), 0, dx, dy, 0,
                                            kiln_texture_resource(R->rt0), 0, &b));
    } else { /* a texture mip into rt0 */
        uint32_t mip = below(R, TMIPS), sz = TS >> mip;
        log_op(R, "copy tex mip -> rt0", mip, 0);
        res(R, kiln_copy_subresource_region(R->ctx, kiln_texture_resource(R->rt0), 0,
                                            below(R, W - sz), below(R, H - sz), 0,
                                            kiln_texture_resource(R->tex), mip, NULL));
    }
}

/* The 4x target into rt0; on osmesa, where it is a 1x target, a copy. */
static kiln_result resolve_ms(run *R)
{
    if (!R->has_ms)
        return kiln_copy_resource(R->ctx, kiln_texture_resource(R->rt0), kiln_texture_resource(R->ms_rt));
    return kiln_resolve_subresource(R->ctx, kiln_texture_resource(R->rt0), 0, kiln_texture_resource(R->ms_rt), 0,
                                    KILN_FORMAT_UNKNOWN);
}

static void op_clear(run *R)
{
    uint32_t what = below(R, 7);
    float c[4] = {frand(R, 0, 1), frand(R, 0, 1), frand(R, -1, 2), frand(R, 0, 1)};
    log_op(R, "clear", what, 0);
    switch (what) {
    case 4:
        res(R, kiln_clear_rtv(R->ctx, R->ms_rtv, c));
        break;
    case 5:
        res(R, kiln_clear_dsv(R->ctx, R->ms_dsv, 1 + below(R, 3), frand(R, 0.5f, 1.0f), (uint8_t)below(R, 256)));
        break;
    case 6: /* the 4x target into rt0 (unbound first: rt0 may be a target) */
        res(R, kiln_om_set_render_targets(R->ctx, 0, NULL, (kiln_dsv){0}));
        res(R, resolve_ms(R));
        break;
    case 0:
        res(R, kiln_clear_rtv(R->ctx, R->rt0v, c));
        break;
    case 1:
        res(R, kiln_clear_rtv(R->ctx, R->rt1v, c));
        break;
    case 2:
        res(R, kiln_clear_rtv(R->ctx, R->texv, c));
        break;
    default:
        res(R, kiln_clear_dsv(R->ctx, R->dsv, 1 + below(R, 3), frand(R, 0.5f, 1.0f),
                              (uint8_t)below(R, 256)));
        break;
    }
}

static void op_readback(run *R)
{
    int which = (int)below(R, 2);
    kiln_texture src = which ? R->tex : R->rt0, st = which ? R->st_tex : R->st_rt0;
    uint32_t sub = which ? below(R, TMIPS) : 0;
    log_op(R, "readback", (uint32_t)which, sub);
    res(R, kiln_copy_resource(R->ctx, kiln_texture_resource(st), kiln_texture_resource(src)));
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(R->ctx, kiln_texture_resource(st), sub, KILN_MAP_READ, 0, &m);
    res(R, r);
    if (r == KILN_OK) {
        uint32_t w = which ? TS >> sub : W, h = which ? TS >> sub : H;
        uint64_t hh = 1469598103934665603ull;
        for (uint32_t y = 0; y < h; y++)
            hh = fnv(hh, (const uint8_t *)m.data + (size_t)y * m.row_pitch, w * 4);
        tr(R, hh);
        res(R, kiln_unmap(R->ctx, kiln_texture_resource(st), sub));
    }
}

static void op_draw(run *R)
{
    kiln_context *ctx = R->ctx;
    kiln_effect e = (kiln_effect)below(R, KILN_EFFECT_COUNT);
    int textured = e == KILN_EFFECT_TEXTURE || e == KILN_EFFECT_TEXTURE_COLOR;
    /* targets: 0 rt0+ds, 1 rt0+rt1+ds, 2 rt1+ds, 3 tex (32x32, no depth),
     * 4 the 4x target and depth */
    uint32_t tset = below(R, 5);
    kiln_rtv rtvs[2];
    uint32_t nrt;
    kiln_dsv dsv = R->dsv;
    float vw = W, vh = H;
    switch (tset) {
    case 0:
        rtvs[0] = R->rt0v, nrt = 1;
        break;
    case 1:
        rtvs[0] = R->rt0v, rtvs[1] = R->rt1v, nrt = 2;
        break;
    case 2:
        rtvs[0] = R->rt1v, nrt = 1;
        break;
    case 4:
        rtvs[0] = R->ms_rtv, nrt = 1, dsv = R->ms_dsv;
        break;
    default:
        rtvs[0] = R->texv, nrt = 1, dsv = (kiln_dsv){0}, vw = TS, vh = TS;
        break;
    }
    res(R, kiln_om_set_render_targets(ctx, nrt, rtvs, dsv));
    /* a texture that is not a target */
    kiln_srv srv = tset == 3 ? R->rt0s : (tset == 2 && below(R, 2) ? R->rt0s : R->texs);
    if (!textured)
        srv = (kiln_srv){0};
    res(R, kiln_ps_set_shader_resources(ctx, 0, 1, &srv));
    kiln_sampler sm = R->samp[below(R, 3)];
    res(R, kiln_ps_set_samplers(ctx, 0, 1, &sm));
    res(R, kiln_vs_set_shader(ctx, R->vs[e]));
    res(R, kiln_ps_set_shader(ctx, R->ps[e]));
    res(R, kiln_ia_set_input_layout(ctx, R->il[e]));
    res(R, kiln_vs_set_constant_buffers(ctx, 0, 1, &R->cb_dyn));
    res(R, kiln_ps_set_constant_buffers(ctx, 0, 1, &R->cb_def));
    res(R, kiln_rs_set_state(ctx, R->rs[below(R, 4)]));
    const float bf[4] = {frand(R, 0, 1), frand(R, 0, 1), frand(R, 0, 1), frand(R, 0, 1)};
    res(R, kiln_om_set_blend_state(ctx, R->bs[below(R, 5)], bf));
    res(R, kiln_om_set_depth_stencil_state(ctx, R->dss[below(R, 4)], below(R, 256)));
    kiln_viewport vp = {frand(R, -8, 8),           frand(R, -8, 8),   vw * frand(R, 0.7f, 1.2f),
                        vh * frand(R, 0.7f, 1.2f), frand(R, 0, 0.3f), frand(R, 0.7f, 1)};
    res(R, kiln_rs_set_viewport(ctx, &vp));
    kiln_rect sc = {(int32_t)below(R, 20), (int32_t)below(R, 20), 20 + (int32_t)below(R, 50),
                    20 + (int32_t)below(R, 40)};
    res(R, kiln_rs_set_scissor_rect(ctx, &sc));
    static const kiln_topology topos[] = {KILN_TOPOLOGY_TRIANGLE_LIST,  KILN_TOPOLOGY_TRIANGLE_LIST,
                                          KILN_TOPOLOGY_TRIANGLE_STRIP, KILN_TOPOLOGY_LINE_LIST,
                                          KILN_TOPOLOGY_LINE_STRIP,     KILN_TOPOLOGY_POINT_LIST};
    kiln_topology topo = topos[below(R, 6)];
    res(R, kiln_ia_set_topology(ctx, topo));
    uint32_t stride = sizeof(vtx), off = 0;
    uint32_t kind = below(R, 3); /* 0 dynamic buffer, 1 default buffer, 2 indexed */
    if (kind == 0 && R->dyn_written > R->dyn_used) {
        /* vertices [0, dyn_written) are valid; reading them marks them used */
        uint32_t first = below(R, R->dyn_written), n = 1 + below(R, R->dyn_written - first);
        res(R, kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->vb_dyn, &stride, &off));
        log_op(R, "draw dyn", first, n);
        res(R, kiln_draw(ctx, n, first));
        if (first + n > R->dyn_used)
            R->dyn_used = first + n;
    } else if (kind == 2) {
        res(R, kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->vb_def, &stride, &off));
        int wide = (int)below(R, 2);
        /* the index buffer holds 32-bit indices < NV; as 16-bit each is two
         * indices, the high half 0 */
        res(R, kiln_ia_set_index_buffer(ctx, R->ib, wide ? KILN_INDEX_UINT32 : KILN_INDEX_UINT16,
                                        4 * below(R, 4)));
        uint32_t total = wide ? NI - 4 : 2 * NI - 8;
        uint32_t first = below(R, total), n = 1 + below(R, total - first);
        uint32_t inst = 1 + below(R, 3);
        log_op(R, "draw indexed", first, n);
        res(R, kiln_draw_indexed_instanced(ctx, n, inst, first, 0, 0));
    } else {
        res(R, kiln_ia_set_vertex_buffers(ctx, 0, 1, &R->vb_def, &stride, &off));
        uint32_t first = below(R, NV), n = 1 + below(R, NV - first);
        log_op(R, "draw def", first, n);
        res(R, kiln_draw_instanced(ctx, n, 1 + below(R, 2), first, 0));
    }
}

static void run_sequence(run *R, uint64_t seed, kiln_exec_mode mode, uint32_t threads)
{
    memset(R->trace, 0, sizeof R->trace);
    R->ntrace = 0;
    R->rng.s = seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
    R->dev = th_device(mode, threads);
    R->ctx = kiln_device_immediate_context(R->dev);
    create_all(R, seed);
    {
        float m[32];
        rand_matrices(R, m);
        kiln_mapped_subresource ms;
        CHECK_RESULT(
            kiln_map(R->ctx, kiln_buffer_resource(R->cb_dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &ms),
            KILN_OK);
        memcpy(ms.data, m, sizeof m);
        CHECK_RESULT(kiln_unmap(R->ctx, kiln_buffer_resource(R->cb_dyn), 0), KILN_OK);
    }
    const float one[4] = {0.2f, 0.3f, 0.4f, 1.0f};
    CHECK_RESULT(kiln_clear_rtv(R->ctx, R->rt0v, one), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(R->ctx, R->dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0),
                 KILN_OK);
    for (int i = 0; i < NOPS; i++) {
        uint32_t op = below(R, 100);
        if (op < 45)
            op_draw(R);
        else if (op < 55)
            op_map_dyn_vb(R);
        else if (op < 62)
            op_map_cb(R);
        else if (op < 72)
            op_update(R);
        else if (op < 80)
            op_copy(R);
        else if (op < 86)
            op_clear(R);
        else if (op < 90) {
            log_op(R, "generate_mips", 0, 0);
            kiln_rtv none[1] = {{0}};
            /* the texture must not be bound as a target or be sampled
             * while bound: unbind the targets first */
            res(R, kiln_om_set_render_targets(R->ctx, 0, none, (kiln_dsv){0}));
            res(R, kiln_generate_mips(R->ctx, R->texs));
        } else if (op < 95)
            op_readback(R);
        else if (op < 98) {
            log_op(R, "flush", 0, 0);
            res(R, kiln_flush(R->ctx));
        } else {
            log_op(R, "finish", 0, 0);
            res(R, kiln_finish(R->ctx));
        }
    }
    /* final bytes of everything */
    static uint8_t buf[W * H * 16];
    kiln_texture texs[4] = {R->rt0, R->rt1, R->ds, R->tex};
    for (int t = 0; t < 4; t++) {
        uint32_t nsub = t == 3 ? TMIPS : 1;
        for (uint32_t s = 0; s < nsub; s++) {
            memset(buf, 0, sizeof buf);
            ru_read(R->dev, texs[t], s, buf);
            tr(R, fnv(1469598103934665603ull, buf, sizeof buf));
        }
    }
    /* and the 4x target, resolved */
    res(R, kiln_om_set_render_targets(R->ctx, 0, NULL, (kiln_dsv){0}));
    res(R, resolve_ms(R));
    memset(buf, 0, sizeof buf);
    ru_read(R->dev, R->rt0, 0, buf);
    tr(R, fnv(1469598103934665603ull, buf, sizeof buf));
    static uint8_t bb[NV * sizeof(vtx)];
    kiln_buffer bufs[3] = {R->vb_def, R->ib, R->cb_def};
    for (int b = 0; b < 3; b++) {
        kiln_buffer_desc d;
        CHECK_RESULT(kiln_buffer_get_desc(R->dev, bufs[b], &d), KILN_OK);
        kiln_buffer_desc sd = {d.size, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
        kiln_buffer st;
        CHECK_RESULT(kiln_create_buffer(R->dev, &sd, NULL, &st), KILN_OK);
        CHECK_RESULT(
            kiln_copy_resource(R->ctx, kiln_buffer_resource(st), kiln_buffer_resource(bufs[b])),
            KILN_OK);
        kiln_mapped_subresource m;
        memset(bb, 0, sizeof bb);
        if (kiln_map(R->ctx, kiln_buffer_resource(st), 0, KILN_MAP_READ, 0, &m) == KILN_OK) {
            memcpy(bb, m.data, d.size);
            kiln_unmap(R->ctx, kiln_buffer_resource(st), 0);
        }
        tr(R, fnv(1469598103934665603ull, bb, d.size));
        kiln_destroy_buffer(R->dev, st);
    }
    destroy_all(R);
}

int main(void)
{
    uint32_t nseq = DEFAULT_SEQUENCES;
    const char *env = getenv("KILN_RASTER_FUZZ");
    if (env && atoi(env) > 0)
        nseq = (uint32_t)atoi(env);
    uint64_t first = 1;
    const char *one = getenv("KILN_RASTER_FUZZ_SEED");
    if (one) {
        first = strtoull(one, NULL, 10);
        nseq = 1;
    }
    int verbose = getenv("KILN_RASTER_FUZZ_VERBOSE") != NULL;
    static run a, s;
    int failures = 0;
    uint64_t nonzero_draw_hashes = 0;
    uint64_t *rt0_hash = calloc(nseq, sizeof(uint64_t));
    uint64_t deferred0, resolves0, held0 = kr_tilebuf_count();
    kr_hsr_counts(&deferred0, &resolves0);
    for (uint64_t seed = first; seed < first + nseq; seed++) {
        uint32_t threads = 1 + (uint32_t)(seed % 4);
        a.verbose = verbose;
        s.verbose = 0;
        th_logs.quiet = 1;
        /* The ASYNC run defers shading behind the tiles' visibility
         * (kr_hsr) wherever allowed (odd seeds) or where it pays (even);
         * the SERIAL one shades every fragment in order. */
        kr_hsr_force(seed % 2 ? 2 : 0);
        kr_tilebuf_force(1);
        run_sequence(&a, seed, KILN_EXEC_ASYNC, threads);
        kr_hsr_force(1);
        kr_tilebuf_force(0);
        run_sequence(&s, seed, KILN_EXEC_SERIAL, 0);
        kr_hsr_force(0);
        kr_tilebuf_force(1);
        int same = a.ntrace == s.ntrace &&
                   memcmp(a.trace, s.trace, sizeof(uint64_t) * (size_t)a.ntrace) == 0;
        if (!same) {
            int k = 0;
            while (k < a.ntrace && k < s.ntrace && a.trace[k] == s.trace[k])
                k++;
            if (failures < 5)
                fprintf(
                    stderr,
                    "    seed %llu (%u threads): traces differ at entry %d of %d/%d (replay with "
                    "KILN_RASTER_FUZZ_SEED=%llu KILN_RASTER_FUZZ_VERBOSE=1)\n",
                    (unsigned long long)seed, threads, k, a.ntrace, s.ntrace,
                    (unsigned long long)seed);
            failures++;
        }
        /* every result code recorded must be OK (small values); hashes are large */
        for (int k = 0; k < s.ntrace; k++)
            if ((int64_t)s.trace[k] < 0 && (int64_t)s.trace[k] > -100) {
                if (failures < 5)
                    fprintf(stderr, "    seed %llu: call %d returned %s\n",
                            (unsigned long long)seed, k,
                            kiln_result_string((kiln_result)(int64_t)s.trace[k]));
                failures++;
                break;
            }
        nonzero_draw_hashes += s.ntrace > 8;
        rt0_hash[seed - first] = s.ntrace >= 9 ? s.trace[s.ntrace - 9] : 0; /* rt0's final bytes */
    }
    /* The sequences draw something that depends on the seed. */
    uint32_t distinct = 0;
    for (uint32_t i = 0; i < nseq; i++) {
        int seen = 0;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = rt0_hash[j] == rt0_hash[i];
        distinct += !seen;
    }
    CHECK(distinct * 10 >= nseq * 9);
    free(rt0_hash);
    th_check(failures == 0, "ASYNC and SERIAL runs of random draw sequences give identical bytes",
             __FILE__, __LINE__);
    CHECK(nonzero_draw_hashes == nseq);
    /* the deferral and the tile buffers ran (the soft backend's; none on
     * osmesa) */
    uint64_t deferred1, resolves1;
    kr_hsr_counts(&deferred1, &resolves1);
    const char *backend = getenv("KILN_TEST_BACKEND");
    if (!backend || !strcmp(backend, "soft"))
        CHECK(nseq < 20 ||
              (deferred1 > deferred0 && resolves1 > resolves0 && kr_tilebuf_count() > held0));
    printf("%u sequences\n", nseq);
    return th_exit();
}
