/*
 * The eight-lane triangle setup (src/raster/setup_avx512.c at the
 * AVX-512 level, setup_avx2.c at the AVX2 level) against the one-triangle
 * setup (geom.c's outcode, to_screen3 and setup_tri, run at the SSE2
 * level): the same triangle soups drawn at each level must give the same
 * bits. Each soup mixes what setup
 * decides on: small, mid-size and huge triangles of both windings,
 * perspective (w from 0.3 to 3), vertices behind the eye, past the guard
 * band, in front of or behind the depth range, degenerate and sub-pixel
 * triangles, NaN and infinite positions; one draw of two jobs (the
 * second starting at triangle 1,024), batches of eight and a tail, a
 * draw from an offset, an indexed draw whose vertices repeat, a stream
 * of draws of one to three triangles (batched across draws). Every
 * soup is drawn under each cull mode, winding, depth clip, scissor,
 * viewport (offset, depth range) and sample count:
 *   - additively blended into two RGBA32F targets (the varyings over w
 *     and the primitive id, every triangle's fragments summed: a plane,
 *     an edge or an id that differs shows);
 *   - depth-tested into a D32 target (the z planes);
 *   - with pipeline statistics (clipper invocations and primitives).
 * Without AVX2 on this CPU, or outside x86-64 builds, there is no
 * eight-lane path to compare: the test says so and passes.
 */
#include "raster/effects.h"
#include "raster/geom.h"
#include "raster/setup8.h"
#include "raster_util.h"

#include <stdio.h>

#define W 96
#define H 80
/* Triangles per soup: two jobs (1,024 and 76), batches of eight, a tail
 * of four. */
#define NT 1100
#define NI 192 /* indices of the indexed draw */

typedef struct vtx {
    float p[4];
    float c[2][4];
} vtx;

static kiln_device *dev;
static kiln_context *ctx;

static float frand(th_rng *r, float lo, float hi) { return th_frand(r, lo, hi); }

/* A vertex at pixel (px, py) of the full viewport, depth z, with w. */
static void place(vtx *v, th_rng *r, double px, double py, float z, float w)
{
    v->p[0] = (float)(2.0 * px / W - 1.0) * w;
    v->p[1] = (float)(1.0 - 2.0 * py / H) * w;
    v->p[2] = z * w;
    v->p[3] = w;
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 4; c++)
            v->c[k][c] = frand(r, -2.0f, 2.0f);
}

static void soup(th_rng *r, vtx *v)
{
    for (int t = 0; t < NT; t++) {
        vtx *tri = v + 3 * t;
        int kind = (int)th_below(r, 14);
        if (kind >= 7 && kind <= 9 && th_below(r, 4)) /* clipped: often huge, a quarter as many */
            kind = 0;
        double cx = frand(r, -8, W + 8), cy = frand(r, -8, H + 8);
        float w = frand(r, 0.3f, 3.0f), z = frand(r, 0.05f, 0.95f);
        /* sizes: kind 0-3 and 7-11 small, 4-5 mid, 6 huge (few: their pixels
         * cost the test's time, not setup's) */
        double rad = kind == 6                ? frand(r, 40.0f, 200.0f)
                     : kind == 4 || kind == 5 ? frand(r, 6.0f, 40.0f)
                                              : frand(r, 0.4f, 8.0f);
        for (int k = 0; k < 3; k++) {
            double a = k * 2.0944 + frand(r, -0.4f, 0.4f);
            /* per vertex w in perspective soups */
            float wk = kind == 2 ? frand(r, 0.3f, 3.0f) : w;
            place(&tri[k], r, cx + rad * cos(a), cy + rad * sin(a), z + frand(r, -0.02f, 0.02f),
                  wk);
        }
        switch (kind) {
        case 7: /* a vertex behind the eye */
            tri[th_below(r, 3)].p[3] = frand(r, -2.0f, 0.0f);
            break;
        case 8: /* a vertex past the guard band, or just inside it */
            tri[th_below(r, 3)].p[th_below(r, 2)] *= th_below(r, 2) ? 6000.0f : 900.0f;
            break;
        case 9: /* in front of or behind the depth range */
            tri[th_below(r, 3)].p[2] = tri[0].p[3] * (th_below(r, 2) ? -0.3f : 1.4f);
            break;
        case 10: /* no area: a repeated vertex, or three on a line */
            if (th_below(r, 2))
                tri[1] = tri[0];
            else
                for (int c = 0; c < 4; c++)
                    tri[2].p[c] = 0.5f * (tri[0].p[c] + tri[1].p[c]);
            break;
        case 11: { /* NaN, infinity, or a w of zero */
            uint32_t k = th_below(r, 3), c = th_below(r, 4);
            uint32_t what = th_below(r, 3);
            tri[k].p[c] = what == 0 ? NAN : what == 1 ? INFINITY : 0.0f;
            break;
        }
        case 12:
        case 13: { /* corners on pixel centers: edges through centers (the fill rule) */
            int x0 = (int)th_below(r, W), y0 = (int)th_below(r, H);
            int dx = (int)th_below(r, 9) - 4, dy = (int)th_below(r, 9) - 4;
            const int px[3] = {x0, x0 + dx, kind == 12 ? x0 : x0 + dx};
            const int py[3] = {y0, kind == 12 ? y0 : y0 + dy, y0 + dy};
            for (int k = 0; k < 3; k++)
                place(&tri[k], r, px[k] + 0.5, py[k] + 0.5, z, 1.0f);
            break;
        }
        default:
            break;
        }
    }
}

typedef struct images {
    float *c[2], *d, *cd, *d0; /* d0: the depth-only pass's */
    kiln_query_data_pipeline_statistics st[2];
} images;

static void images_free(images *im)
{
    free(im->c[0]);
    free(im->c[1]);
    free(im->d);
    free(im->cd);
    free(im->d0);
}

typedef struct config {
    kiln_cull_mode cull;
    uint32_t front_ccw, depth_clip_disable, scissor, offset_vp, samples;
} config;

static void draw_soup(kiln_buffer vb, kiln_buffer ib)
{
    uint32_t stride = sizeof(vtx), off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT32, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 3 * NT, 0), KILN_OK);
    CHECK_RESULT(kiln_draw(ctx, 3 * 203, 3 * 5), KILN_OK);
    CHECK_RESULT(kiln_draw_indexed(ctx, NI, 0, 0), KILN_OK);
    /* a stream of small draws (set up together, eight triangles at a
     * time across draws, each with its own primitive ids) */
    for (uint32_t i = 0; i < 60; i++)
        CHECK_RESULT(kiln_draw(ctx, 3 * (1 + i % 3), 3 * (7 * i % (NT - 3))), KILN_OK);
}

/* Target 0: varying 0; target 1: varying 1's x, y, z and the primitive id
 * and face (2 id + front_facing). */
static void ps_vary_id(kiln_ps_args *a)
{
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++) {
            KILN_PS_COLOR(a, 0, c)[i] = KILN_PS_VARYING(a, 0, c)[i];
            KILN_PS_COLOR(a, 1, c)
            [i] = c < 3 ? KILN_PS_VARYING(a, 1, c)[i]
                        : (float)(2 * a->primitive_id + a->front_facing);
        }
}

/* A color target's floats: a 4x one through its resolve into `res`. */
static float *read_color(kiln_texture t, ru_tex *res, uint32_t samples)
{
    if (samples > 1) {
        CHECK_RESULT(kiln_resolve_subresource(ctx, kiln_texture_resource(res->tex), 0,
                                              kiln_texture_resource(t), 0,
                                              KILN_FORMAT_R32G32B32A32_FLOAT),
                     KILN_OK);
        return ru_read_f32(dev, res);
    }
    float *p = calloc((size_t)W * H * 4, sizeof(float));
    ru_read(dev, t, 0, p);
    return p;
}

/* The soup under config `cf` at the current SIMD level. */
static void render(const config *cf, kiln_buffer vb, kiln_buffer ib, const ru_pipe *pipe,
                   const ru_pipe *depth_only, kiln_blend_state add, kiln_blend_state off,
                   kiln_depth_stencil_state ds_off, kiln_depth_stencil_state ds_less, images *out)
{
    const uint32_t S = cf->samples;
    kiln_texture ms[3] = {{0}};
    kiln_rtv rtv[2];
    kiln_dsv dsv;
    ru_tex res[2] = {ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT),
                     ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT)};
    for (int k = 0; k < 3; k++) {
        kiln_texture2d_desc d = {
            .width = W,
            .height = H,
            .mip_levels = 1,
            .array_size = 1,
            .format = k < 2 ? KILN_FORMAT_R32G32B32A32_FLOAT : KILN_FORMAT_D32_FLOAT,
            .bind_flags = k < 2 ? KILN_BIND_RENDER_TARGET : KILN_BIND_DEPTH_STENCIL,
            .sample_count = S};
        CHECK_RESULT(kiln_create_texture2d(dev, &d, NULL, &ms[k]), KILN_OK);
        if (k < 2)
            CHECK_RESULT(kiln_create_rtv(dev, ms[k], NULL, &rtv[k]), KILN_OK);
        else
            CHECK_RESULT(kiln_create_dsv(dev, ms[k], NULL, &dsv), KILN_OK);
    }
    kiln_rasterizer_state rs =
        ru_rs(dev, (kiln_rasterizer_desc){.cull = cf->cull,
                                          .front_ccw = cf->front_ccw,
                                          .depth_clip_disable = cf->depth_clip_disable,
                                          .scissor_enable = cf->scissor});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    kiln_rect sc = {9, 6, 83, 71};
    CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
    if (cf->offset_vp)
        ru_set_viewport(ctx, 5.5f, 3.25f, 80.0f, 70.0f, 0.25f, 0.75f);
    else
        ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    ru_bind_pipe(ctx, pipe);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    const float zero[4] = {0, 0, 0, 0};
    kiln_query q;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_PIPELINE_STATISTICS, &q), KILN_OK);
    /* pass 0: everything summed, no depth; pass 1: the nearest fragment */
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < 2; k++)
            CHECK_RESULT(kiln_clear_rtv(ctx, rtv[k], zero), KILN_OK);
        CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 2, rtv, pass ? dsv : (kiln_dsv){0}), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, pass ? off : add, NULL), KILN_OK);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, pass ? ds_less : ds_off, 0), KILN_OK);
        CHECK_RESULT(kiln_query_begin(ctx, q), KILN_OK);
        draw_soup(vb, ib);
        CHECK_RESULT(kiln_query_end(ctx, q), KILN_OK);
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        CHECK_RESULT(kiln_query_get_data(ctx, q, &out->st[pass], sizeof out->st[pass], 0), KILN_OK);
        if (pass == 0)
            for (int k = 0; k < 2; k++)
                out->c[k] = read_color(ms[k], &res[k], S);
    }
    out->cd = read_color(ms[0], &res[0], S);
    out->d = calloc((size_t)W * H, sizeof(float));
    /* a 4x target: its first sample's plane (what a copy to staging maps) */
    ru_read(dev, ms[2], 0, out->d);
    /* pass 2: depth alone (no varyings, no pixel shader outputs) */
    CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, dsv), KILN_OK);
    ru_bind_pipe(ctx, depth_only);
    draw_soup(vb, ib);
    out->d0 = calloc((size_t)W * H, sizeof(float));
    ru_read(dev, ms[2], 0, out->d0);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_destroy_query(dev, q);
    kiln_destroy_rasterizer_state(dev, rs);
    for (int k = 0; k < 2; k++) {
        kiln_destroy_rtv(dev, rtv[k]);
        kiln_destroy_texture(dev, ms[k]);
        ru_free_tex(dev, &res[k]);
    }
    kiln_destroy_dsv(dev, dsv);
    kiln_destroy_texture(dev, ms[2]);
}

/* SV_PrimitiveID through a stream of small draws (set up together, eight
 * at a time across draws at AVX2 and AVX-512): twelve draws of three triangles,
 * one to a cell of a 6 x 6 grid; each cell's pixels hold the index of its
 * triangle within its draw. */
static void check_group_ids(const ru_pipe *pipe, kiln_blend_state off,
                            kiln_depth_stencil_state ds_off)
{
    th_rng r = {5};
    vtx v[3 * 36];
    for (int t = 0; t < 36; t++) {
        double x = (t % 6) * 16 + 1, y = (t / 6) * 13 + 1;
        place(&v[3 * t], &r, x, y, 0.5f, 1.0f);
        place(&v[3 * t + 1], &r, x + 12, y, 0.5f, 1.0f);
        place(&v[3 * t + 2], &r, x, y + 10, 0.5f, 1.0f);
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    ru_tex rt[2] = {ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT),
                    ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT)};
    const kiln_rtv rtv[2] = {rt[0].rtv, rt[1].rtv};
    const float clear[4] = {-1, -1, -1, -1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt[1].rtv, clear), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 2, rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, off, NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, ds_off, 0), KILN_OK);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    ru_bind_pipe(ctx, pipe);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    uint32_t stride = sizeof(vtx), zero = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &zero), KILN_OK);
    for (uint32_t d = 0; d < 12; d++)
        CHECK_RESULT(kiln_draw(ctx, 9, 9 * d), KILN_OK);
    float *img = ru_read_f32(dev, &rt[1]);
    uint32_t bad = 0;
    for (int t = 0; t < 36; t++) {
        int x = (t % 6) * 16 + 3, y = (t / 6) * 13 + 3; /* inside triangle t */
        if (img[4 * (y * W + x) + 3] != (float)(2 * (t % 3) + 1)) /* clockwise: front */
            bad++;
    }
    th_check(bad == 0,
             "a stream of small draws: each triangle's SV_PrimitiveID counts within its draw",
             __FILE__, __LINE__);
    if (bad)
        fprintf(stderr, "    %u of 36 triangles had another id\n", bad);
    free(img);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_tex(dev, &rt[0]);
    ru_free_tex(dev, &rt[1]);
    kiln_destroy_buffer(dev, vb);
}

#if KR_SETUP8
/* Lane i of two kr_tri8 records and their planes: the same status and
 * face, and for a lane set up (the only lanes geom.c reads) every field
 * and plane the same bits. A lane not set up may hold NaNs whose sign and
 * payload depend on the compiler's operand order (NaN times NaN). */
static bool same_lane(const kr_tri8 *a, const kr_tri8 *b, const float *fa, const float *fb, int i,
                      uint32_t ncomp)
{
    if (a->status[i] != b->status[i] || a->front[i] != b->front[i])
        return false;
    if (a->status[i] != KR_TRI8_EMIT)
        return true;
    bool ok = a->minx[i] == b->minx[i] && a->miny[i] == b->miny[i] && a->maxx[i] == b->maxx[i] &&
              a->maxy[i] == b->maxy[i] && !memcmp(&a->ox[i], &b->ox[i], 4) &&
              !memcmp(&a->oy[i], &b->oy[i], 4);
    for (int e = 0; e < 3; e++)
        ok &= a->a[e][i] == b->a[e][i] && a->b[e][i] == b->b[e][i] && a->c[e][i] == b->c[e][i] &&
              !memcmp(&a->z[e][i], &b->z[e][i], 4) && !memcmp(&a->q[e][i], &b->q[e][i], 4);
    for (uint32_t k = 0; k < 3 * ncomp; k++)
        ok &= !memcmp(&fa[8 * k + i], &fb[8 * k + i], 4);
    return ok;
}

/* The AVX2 lanes against the AVX-512 ones, record by record, where the
 * CPU has both, under 64 sets of constants: the soup, then triangles with
 * corners up to 1e7 pixels out (under a guard band wide enough to set
 * them up: their 16.8 coordinates pass 2^31 and their area products
 * wrap). What the images cannot show (a bounding box larger than the
 * triangle's pixels, which the edges then reject) differs here. */
static void check_lanes(void)
{
    static vtx v[2][3 * NT];
    th_rng r = {202612021};
    soup(&r, v[0]);
    for (int i = 0; i < 3 * NT; i++) {
        const float w = frand(&r, 0.3f, 3.0f);
        place(&v[1][i], &r, frand(&r, -9.9e6f, 9.9e6f), frand(&r, -9.9e6f, 9.9e6f),
              frand(&r, 0.05f, 0.95f), w);
    }
    const int32_t stride = (int32_t)(sizeof(vtx) / sizeof(float));
    uint32_t sets = 0, bad = 0, live = 0, wide = 0;
    for (uint32_t bits = 0; bits < 128; bits++) {
        const bool offset = bits & 1, scissor = bits >> 1 & 1, huge = bits >> 6 & 1;
        const float *rows = (const float *)(const void *)v[huge];
        const kr_tri8_consts k = {
            .vp_x = offset ? 5.5f : 0.0f,
            .vp_y = offset ? 3.25f : 0.0f,
            .vp_w = offset ? 80.0f : (float)W,
            .vp_h = offset ? 70.0f : (float)H,
            .vp_min = offset ? 0.25f : 0.0f,
            .vp_range = offset ? 0.5f : 1.0f,
            .guard = huge            ? 1e6f
                     : bits >> 2 & 1 ? 262144.0f / (float)W
                                     : 1.0f,
            .depth_clip = !(bits >> 3 & 1),
            .rx0 = scissor ? 9 : 0,
            .ry0 = scissor ? 6 : 0,
            .rx1 = scissor ? 83 : W,
            .ry1 = scissor ? 71 : H,
            .reach = bits >> 4 & 1 ? 96 : 0,
            .cull_front = (bits >> 5 & 1) && offset,
            .cull_back = (bits >> 5 & 1) && !offset,
            .front_ccw = (bits >> 2 & 1) != 0,
            .ncomp = 8,
        };
        for (int t0 = 0; t0 + 8 <= NT; t0 += 8) {
            int32_t off[3][8];
            for (int i = 0; i < 8; i++)
                for (int m = 0; m < 3; m++)
                    off[m][i] = (3 * (t0 + i) + m) * stride;
            kr_tri8 a, b;
            float fa[3 * 8 * 8], fb[3 * 8 * 8];
            memset(&a, 0x5a, sizeof a);
            memset(&b, 0x5a, sizeof b);
            memset(fa, 0x5a, sizeof fa);
            memset(fb, 0x5a, sizeof fb);
            kr_setup_tri8_avx2(&k, rows, (const int32_t(*)[8])off, &a, fa);
            kr_setup_tri8_avx512(&k, rows, (const int32_t(*)[8])off, &b, fb);
            bool ok = true;
            for (int i = 0; i < 8; i++) {
                ok &= same_lane(&a, &b, fa, fb, i, k.ncomp);
                if (a.status[i] != KR_TRI8_EMIT)
                    continue;
                live++;
                for (int e = 0; e < 3; e++) /* an edge coefficient past 2^31 */
                    if (a.c[e][i] > INT32_MAX || a.c[e][i] < INT32_MIN) {
                        wide++;
                        break;
                    }
            }
            if (!ok) {
                if (!bad)
                    fprintf(stderr, "    lanes differ: triangles %d..%d, constants %u\n", t0,
                            t0 + 7, bits);
                bad++;
            }
            sets++;
        }
    }
    printf("%u of %u batches of eight set up to the same bits by the AVX2 and AVX-512 lanes (%u "
           "triangles set up, %u with an edge coefficient past 32 bits)\n",
           sets - bad, sets, live, wide);
    th_check(bad == 0 && live > 0 && wide > 0,
             "the AVX2 lanes' records are the AVX-512 lanes' bit for bit", __FILE__, __LINE__);
}
#endif

static bool same(const float *a, const float *b, size_t n, const char *what, const config *cf)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) && !(isnan(a[i]) && isnan(b[i])))
            if (!bad++)
                first = i;
    if (bad)
        fprintf(stderr,
                "    %s: %zu values differ (first at %zu: %a against %a); cull %d ccw %u no-clip "
                "%u scissor %u "
                "offset %u samples %u\n",
                what, bad, first, (double)a[first], (double)b[first], (int)cf->cull, cf->front_ccw,
                cf->depth_clip_disable, cf->scissor, cf->offset_vp, cf->samples);
    return !bad;
}

int main(void)
{
    kr_simd lv[3];
    int nl = kr_effects_vector_levels(lv);
    /* the reference (one triangle at a time), then the eight-lane levels */
    kr_simd levels[3] = {KR_SIMD_SSE2};
    int nlev = 1;
    for (int i = 0; i < nl; i++)
        if (lv[i] == KR_SIMD_AVX2 || lv[i] == KR_SIMD_AVX512)
            levels[nlev++] = lv[i];
    if (!KR_SETUP8 || nl < 1 || lv[0] != KR_SIMD_SSE2 || nlev < 2) {
        printf("no AVX2 on this CPU or not an x86-64 build: the eight-lane setup does not run "
               "here, nothing to compare\n");
        return 0;
    }
    const kr_simd initial = kr_effects_active_level();
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    ru_pipe pipe = ru_make_pipe(dev, 2, RU_PS_VARY, 2, 0);
    kiln_destroy_pixel_shader(dev, pipe.ps);
    kiln_pixel_shader_desc pd = {.fn = ps_vary_id, .num_outputs = 2, .num_varyings = 2};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &pipe.ps), KILN_OK);
    kiln_blend_state add = ru_bs_add(dev);
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    kiln_blend_state off = ru_bs(dev, &bd);
    kiln_depth_stencil_state ds_off = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    kiln_depth_stencil_state ds_less =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS});

    for (int l = 0; l < nlev; l++) {
        CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
        check_group_ids(&pipe, off, ds_off);
    }
#if KR_SETUP8
    if (levels[nlev - 1] == KR_SIMD_AVX512 && levels[1] == KR_SIMD_AVX2)
        check_lanes();
#endif
    th_rng r = {20261202};
    uint32_t configs = 0, passed = 0;
    bool lanes_ok = true;
    ru_pipe depth_only = ru_make_pipe(dev, 0, RU_PS_NONE, 0, 0);
    {
        static vtx v[3 * NT];
        soup(&r, v);
        uint32_t idx[NI];
        for (int i = 0; i < NI; i++)
            idx[i] = th_below(&r, 3 * NT); /* repeated vertices, in any order */
        kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
        kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
        for (int cull = 0; cull < 3; cull++)
            for (uint32_t bits = 0; bits < 16; bits++) {
                config cf = {.cull = cull == 0   ? KILN_CULL_NONE
                                     : cull == 1 ? KILN_CULL_FRONT
                                                 : KILN_CULL_BACK,
                             .front_ccw = bits & 1,
                             .depth_clip_disable = bits >> 1 & 1,
                             /* the scissor on with the viewport at 0 or offset */
                             .scissor = (bits >> 2 & 1) != (bits >> 3 & 1),
                             .offset_vp = bits >> 2 & 1,
                             .samples = bits >> 3 & 1 ? 4 : 1};
                images im[3];
                for (int l = 0; l < nlev; l++) {
                    CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
                    uint64_t before = kr_setup8_count();
                    render(&cf, vb, ib, &pipe, &depth_only, add, off, ds_off, ds_less, &im[l]);
                    /* eight at a time at AVX2 and AVX-512, never at SSE2 */
                    lanes_ok &= l ? kr_setup8_count() > before : kr_setup8_count() == before;
                }
                size_t n = (size_t)W * H * 4;
                for (int l = 1; l < nlev; l++) {
                    bool ok = same(im[0].c[0], im[l].c[0], n, "summed varying 0", &cf) &
                              same(im[0].c[1], im[l].c[1], n, "summed varying 1", &cf) &
                              same(im[0].cd, im[l].cd, n, "nearest varying 0", &cf) &
                              same(im[0].d, im[l].d, (size_t)W * H, "depth", &cf) &
                              same(im[0].d0, im[l].d0, (size_t)W * H, "depth, no varyings", &cf);
                    if (memcmp(im[0].st, im[l].st, sizeof im[0].st)) {
                        ok = false;
                        fprintf(stderr,
                                "    pipeline statistics differ: c_invocations %llu/%llu, "
                                "c_primitives %llu/%llu\n",
                                (unsigned long long)im[0].st[0].c_invocations,
                                (unsigned long long)im[l].st[0].c_invocations,
                                (unsigned long long)im[0].st[0].c_primitives,
                                (unsigned long long)im[l].st[0].c_primitives);
                    }
                    if (!ok)
                        fprintf(stderr, "    (at %s)\n", kr_simd_name(levels[l]));
                    configs++;
                    passed += ok;
                }
                for (int l = 0; l < nlev; l++)
                    images_free(&im[l]);
            }
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT32, 0),
                     KILN_OK);
        kiln_destroy_buffer(dev, vb);
        kiln_destroy_buffer(dev, ib);
    }
    printf("%u of %u soups and states the same at %s%s%s (eight lanes) as at sse2 (one triangle "
           "at a time)\n",
           passed, configs, kr_simd_name(levels[1]), nlev > 2 ? " and " : "",
           nlev > 2 ? kr_simd_name(levels[2]) : "");
    CHECK(configs > 0 && passed == configs);
    th_check(lanes_ok,
             "the soups were set up eight at a time at AVX2 and AVX-512 and one at a time at SSE2",
             __FILE__, __LINE__);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    kiln_destroy_blend_state(dev, add);
    kiln_destroy_blend_state(dev, off);
    kiln_destroy_depth_stencil_state(dev, ds_off);
    kiln_destroy_depth_stencil_state(dev, ds_less);
    ru_free_pipe(dev, &pipe);
    ru_free_pipe(dev, &depth_only);
    kiln_device_destroy(dev);
    return th_exit();
}
