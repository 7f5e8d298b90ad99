/*
 * test_raster_tilebuf: tile buffers (tilebuf.c; docs/raster.md "Tile
 * buffers") leave exactly the bytes of drawing into the planes
 * themselves. A tile whose plane a clear fills, with something after it,
 * runs on its own copy of that plane and writes it back when the tile is
 * done; nothing else may change. Each scene is rendered with tile buffers
 * off on a SERIAL device (the reference), then with them on, SERIAL and
 * ASYNC with 1, 2, 3 and 8 workers, and every byte of both color targets
 * and of the depth-stencil buffer (at 4x: of both colors, resolved) must
 * match the reference. The scenes, at 201 x 147 (tiles cut by both edges),
 * 130 x 70 and 64 x 64 (one whole tile):
 *   - random rounds of triangles (overdraw; depth LESS with and without
 *     writes, stencil operations, no depth; blending off and additive, so
 *     draws read the buffer back), clears of either target, of depth and
 *     stencil, of depth alone and of stencil alone, in random order (the
 *     first depth clear of any of the three kinds), some scenes drawing
 *     before their first clear (the plane written before the tile
 *     switches), some ending on a clear (the held plane's last clear,
 *     which without a buffer would go past the cache); then a second
 *     scene without clears, small triangles depth-tested against what the
 *     first wrote back;
 *   - targets of 4-byte texels (RGBA8, BGRA8, R32_FLOAT, R10G10B10A2),
 *     which the buffers take, and of 8 and 16 (RGBA16F, RGBA32F), which
 *     they leave; depth D24S8 and D32 (taken), D16 and D32S8 (left); 4x
 *     targets (taken, four samples a buffer);
 *   - one view bound to two target slots (the plane must stay unbuffered:
 *     two copies would part);
 *   - an occlusion query around part of a scene (a counted scene: the
 *     same count);
 *   - 1,100 pairs of a small draw and a depth-stencil clear in one scene:
 *     more jobs than a wave holds, so a tile's planes are held and written
 *     back once per wave.
 * kr_tilebuf_count shows the buffers were used where they fit (so the
 * comparisons cannot pass by never using them) and never where nothing
 * fits, for a clear of depth alone or stencil alone, or when they are
 * off. The pool's slots and planes are checked on their own, and
 * KILN_TILEBUF=off in the environment turns the buffers off.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "raster/geom.h"
#include "raster_util.h"

#include <stdio.h>

enum { NVARY = 2, STRIDE = 16 * (1 + NVARY) };

typedef struct spec {
    const char *name;
    kiln_format rt0, rt1, ds;
    int alias;        /* rt0's view bound in slots 0 and 1 */
    int fits;         /* some plane a clear fills is one the buffers take */
    uint32_t w, h;    /* the targets' size */
    uint32_t samples; /* 1, or 4: drawn into 4x targets, the colors resolved */
} spec;

static const spec specs[] = {
    {"RGBA8 + R32F, D24S8", KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R32_FLOAT,
     KILN_FORMAT_D24_UNORM_S8_UINT, 0, 1, 201, 147, 1},
    {"BGRA8 + RGBA32F, D32", KILN_FORMAT_B8G8R8A8_UNORM, KILN_FORMAT_R32G32B32A32_FLOAT,
     KILN_FORMAT_D32_FLOAT, 0, 1, 201, 147, 1},
    {"RGB10A2 + RGBA16F, D16", KILN_FORMAT_R10G10B10A2_UNORM, KILN_FORMAT_R16G16B16A16_FLOAT,
     KILN_FORMAT_D16_UNORM, 0, 1, 201, 147, 1},
    {"RGBA8 + RGBA8, D32S8, one tile", KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R8G8B8A8_UNORM,
     KILN_FORMAT_D32_FLOAT_S8X24_UINT, 0, 1, 64, 64, 1},
    {"RGBA8 bound twice, D16", KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R8G8B8A8_UNORM,
     KILN_FORMAT_D16_UNORM, 1, 0, 201, 147, 1},
    {"RGBA32F + RGBA16F, D32S8: nothing fits", KILN_FORMAT_R32G32B32A32_FLOAT,
     KILN_FORMAT_R16G16B16A16_FLOAT, KILN_FORMAT_D32_FLOAT_S8X24_UINT, 0, 0, 201, 147, 1},
    {"4x RGBA8 + R32F, D24S8", KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R32_FLOAT,
     KILN_FORMAT_D24_UNORM_S8_UINT, 0, 1, 201, 147, 4},
    {"4x BGRA8 + RGBA32F, D32", KILN_FORMAT_B8G8R8A8_UNORM, KILN_FORMAT_R32G32B32A32_FLOAT,
     KILN_FORMAT_D32_FLOAT, 0, 1, 130, 70, 4},
};

typedef struct images {
    uint8_t *rt0, *rt1, *ds;
    size_t n0, n1, nds;
    uint64_t occluded; /* the occlusion query's count, or 0 */
} images;

static void images_free(images *im)
{
    free(im->rt0);
    free(im->rt1);
    free(im->ds);
}

/* n triangles of random corners within `spread` pixels of random centers,
 * random depths and varyings. */
static void random_tris(th_rng *rng, float *v, uint32_t n, uint32_t w, uint32_t h, float spread)
{
    for (uint32_t t = 0; t < 3 * n; t++) {
        float cx = th_frand(rng, 0, (float)w), cy = th_frand(rng, 0, (float)h);
        float *p = ru_vtx(v + (size_t)t * (STRIDE / 4), w, h, cx + th_frand(rng, -spread, spread),
                          cy + th_frand(rng, -spread, spread), th_frand(rng, 0.05f, 0.95f));
        for (int c = 0; c < 4 * NVARY; c++)
            p[c] = th_frand(rng, 0.0f, 1.0f);
    }
}

typedef struct rig {
    kiln_device *dev;
    kiln_context *ctx;
    ru_pipe pipe;
    ru_tex rt0, rt1, ds;
    kiln_texture ms[3]; /* 4x: the targets drawn into (colors, depth) */
    kiln_rtv rtv[2];
    kiln_dsv dsv;
    kiln_depth_stencil_state dss[4]; /* LESS + write, LESS, stencil, none */
    kiln_blend_state opaque, add;
} rig;

static void rig_make(rig *r, const spec *sp, kiln_exec_mode mode, uint32_t threads)
{
    memset(r, 0, sizeof *r);
    r->dev = th_device(mode, threads);
    r->ctx = kiln_device_immediate_context(r->dev);
    r->pipe = ru_make_pipe(r->dev, NVARY, RU_PS_VARY, 2, 0);
    r->rt0 = ru_rt(r->dev, sp->w, sp->h, sp->rt0);
    r->rtv[0] = r->rtv[1] = r->rt0.rtv;
    if (!sp->alias) {
        r->rt1 = ru_rt(r->dev, sp->w, sp->h, sp->rt1);
        r->rtv[1] = r->rt1.rtv;
    }
    r->ds = ru_ds(r->dev, sp->w, sp->h, sp->ds);
    r->dsv = r->ds.dsv;
    if (sp->samples == 4) { /* drawn into 4x targets, resolved into rt0 and rt1 */
        const kiln_format f[3] = {sp->rt0, sp->rt1, sp->ds};
        for (int i = 0; i < 3; i++) {
            kiln_texture2d_desc d = {.width = sp->w,
                                     .height = sp->h,
                                     .mip_levels = 1,
                                     .array_size = 1,
                                     .format = f[i],
                                     .sample_count = 4,
                                     .bind_flags =
                                         i < 2 ? KILN_BIND_RENDER_TARGET : KILN_BIND_DEPTH_STENCIL};
            CHECK_RESULT(kiln_create_texture2d(r->dev, &d, NULL, &r->ms[i]), KILN_OK);
            if (i < 2)
                CHECK_RESULT(kiln_create_rtv(r->dev, r->ms[i], NULL, &r->rtv[i]), KILN_OK);
            else
                CHECK_RESULT(kiln_create_dsv(r->dev, r->ms[i], NULL, &r->dsv), KILN_OK);
        }
    }
    CHECK_RESULT(kiln_om_set_render_targets(r->ctx, 2, r->rtv, r->dsv), KILN_OK);
    ru_set_viewport(r->ctx, 0, 0, (float)sp->w, (float)sp->h, 0, 1);
    CHECK_RESULT(
        kiln_rs_set_state(r->ctx, ru_rs(r->dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE})),
        KILN_OK);
    ru_bind_pipe(r->ctx, &r->pipe);
    r->dss[0] = ru_dss(r->dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS});
    r->dss[1] = ru_dss(r->dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS,
                                                         .depth_write_disable = 1});
    kiln_depth_stencil_desc sd = {.depth_func = KILN_COMPARE_LESS_EQUAL};
    sd.stencil_enable =
        sp->ds == KILN_FORMAT_D24_UNORM_S8_UINT || sp->ds == KILN_FORMAT_D32_FLOAT_S8X24_UINT;
    sd.front = (kiln_stencil_face){KILN_STENCIL_OP_INCR, KILN_STENCIL_OP_DECR,
                                   KILN_STENCIL_OP_INCR_SAT, KILN_COMPARE_NOT_EQUAL};
    sd.back = (kiln_stencil_face){KILN_STENCIL_OP_ZERO, KILN_STENCIL_OP_INVERT,
                                  KILN_STENCIL_OP_REPLACE, KILN_COMPARE_GREATER_EQUAL};
    r->dss[2] = ru_dss(r->dev, sd);
    r->dss[3] = ru_dss(r->dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    kiln_blend_desc bd;
    memset(&bd, 0, sizeof bd);
    r->opaque = ru_bs(r->dev, &bd);
    r->add = ru_bs_add(r->dev);
}

static images rig_read(rig *r, const spec *sp)
{
    images im = {0};
    if (sp->samples == 4)
        for (int i = 0; i < 2; i++)
            CHECK_RESULT(kiln_resolve_subresource(
                             r->ctx, kiln_texture_resource(i ? r->rt1.tex : r->rt0.tex), 0,
                             kiln_texture_resource(r->ms[i]), 0, KILN_FORMAT_UNKNOWN),
                         KILN_OK);
    im.n0 = (size_t)sp->w * sp->h * kiln_format_size(sp->rt0);
    im.rt0 = ru_read_bytes(r->dev, &r->rt0);
    if (!sp->alias) {
        im.n1 = (size_t)sp->w * sp->h * kiln_format_size(sp->rt1);
        im.rt1 = ru_read_bytes(r->dev, &r->rt1);
    }
    /* 4x: the depth buffer's samples decide the colors, and are not read */
    im.nds = sp->samples == 1 ? (size_t)sp->w * sp->h * kiln_format_size(sp->ds) : 0;
    im.ds = sp->samples == 1 ? ru_read_bytes(r->dev, &r->ds) : NULL;
    return im;
}

static void rig_free(rig *r)
{
    kiln_finish(r->ctx);
    ru_free_pipe(r->dev, &r->pipe);
    ru_free_tex(r->dev, &r->rt0);
    if (r->rt1.tex.id)
        ru_free_tex(r->dev, &r->rt1);
    ru_free_tex(r->dev, &r->ds);
    if (r->ms[0].id) {
        kiln_destroy_rtv(r->dev, r->rtv[0]);
        kiln_destroy_rtv(r->dev, r->rtv[1]);
        kiln_destroy_dsv(r->dev, r->dsv);
        for (int i = 0; i < 3; i++)
            kiln_destroy_texture(r->dev, r->ms[i]);
    }
    kiln_device_destroy(r->dev);
}

static void clear_color(rig *r, int slot, th_rng *rng)
{
    const float c[4] = {th_frand(rng, 0, 1), th_frand(rng, 0, 1), th_frand(rng, 0, 1),
                        th_frand(rng, 0, 1)};
    CHECK_RESULT(kiln_clear_rtv(r->ctx, r->rtv[slot], c), KILN_OK);
}

/* The random scene of `seed` (one scene: nothing ends it before the
 * read-back), with an occlusion query around rounds 4..9 when seed % 3 is
 * 0. */
static images random_scene(const spec *sp, uint64_t seed, kiln_exec_mode mode, uint32_t threads)
{
    rig r;
    rig_make(&r, sp, mode, threads);
    th_rng rng = {seed * 2654435761u + 17};
    float *v = malloc((size_t)STRIDE * 3 * 120);
    kiln_query occ = {0};
    if (seed % 3 == 0)
        CHECK_RESULT(kiln_create_query(r.dev, KILN_QUERY_OCCLUSION, &occ), KILN_OK);
    if (seed % 2) { /* draws before the first clear */
        random_tris(&rng, v, 60, sp->w, sp->h, 40);
        ru_draw(r.dev, r.ctx, v, 180, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
    }
    clear_color(&r, 0, &rng);
    clear_color(&r, 1, &rng);
    /* the first depth-stencil clear: of both, of depth alone, of stencil
     * alone (a D24S8 plane then not held until a clear of both) */
    static const uint32_t first[3] = {KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, KILN_CLEAR_DEPTH,
                                      KILN_CLEAR_STENCIL};
    CHECK_RESULT(kiln_clear_dsv(r.ctx, r.dsv, first[seed / 2 % 3], 1.0f, 3), KILN_OK);
    for (int round = 0; round < 14; round++) {
        if (occ.id && round == 4)
            CHECK_RESULT(kiln_query_begin(r.ctx, occ), KILN_OK);
        if (occ.id && round == 10)
            CHECK_RESULT(kiln_query_end(r.ctx, occ), KILN_OK);
        uint32_t op = th_below(&rng, 12);
        if (op < 7) {
            CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[th_below(&rng, 4)],
                                                         1 + th_below(&rng, 4)),
                         KILN_OK);
            CHECK_RESULT(kiln_om_set_blend_state(r.ctx, th_below(&rng, 3) ? r.opaque : r.add, NULL),
                         KILN_OK);
            uint32_t n = 10 + th_below(&rng, 110);
            random_tris(&rng, v, n, sp->w, sp->h, 4 + th_frand(&rng, 0, 60));
            ru_draw(r.dev, r.ctx, v, 3 * n, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
        } else if (op < 9) {
            clear_color(&r, (int)op - 7, &rng);
        } else {
            static const uint32_t what[3] = {KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL,
                                             KILN_CLEAR_DEPTH, KILN_CLEAR_STENCIL};
            CHECK_RESULT(kiln_clear_dsv(r.ctx, r.dsv, what[op - 9], th_frand(&rng, 0.3f, 1.0f),
                                        (uint8_t)th_below(&rng, 256)),
                         KILN_OK);
        }
    }
    /* last, triangles over the whole target (whatever the rounds cleared) */
    CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[0], 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(r.ctx, r.opaque, NULL), KILN_OK);
    random_tris(&rng, v, 120, sp->w, sp->h, 30);
    ru_draw(r.dev, r.ctx, v, 360, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
    if (seed % 2 == 0) /* ends on a clear of a plane drawn after its first */
        clear_color(&r, 0, &rng);
    /* A second scene, no clears: small triangles tested against the depth
     * (and, at 4x, the samples) the first one wrote back, each covering
     * some samples of its pixels (so a depth plane, or a sample, written
     * back wrong, changes which of them pass: the resolved colors show
     * it). */
    CHECK_RESULT(kiln_flush(r.ctx), KILN_OK);
    random_tris(&rng, v, 120, sp->w, sp->h, 3);
    ru_draw(r.dev, r.ctx, v, 360, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
    images im = rig_read(&r, sp);
    if (occ.id) {
        kiln_result res;
        while ((res = kiln_query_get_data(r.ctx, occ, &im.occluded, sizeof im.occluded, 0)) ==
               KILN_E_WAS_STILL_DRAWING)
            ;
        CHECK_RESULT(res, KILN_OK);
        CHECK(im.occluded > 0);
        kiln_destroy_query(r.dev, occ);
    }
    free(v);
    rig_free(&r);
    return im;
}

/* 1,100 pairs of a small draw and a clear of the depth-stencil buffer
 * (each a job of its own: more than KR_WAVE_JOBS), after clears of
 * everything. */
static images wave_scene(const spec *sp, kiln_exec_mode mode, uint32_t threads)
{
    rig r;
    rig_make(&r, sp, mode, threads);
    th_rng rng = {99};
    float *v = malloc((size_t)STRIDE * 3 * 4);
    clear_color(&r, 0, &rng);
    clear_color(&r, 1, &rng);
    CHECK_RESULT(kiln_clear_dsv(r.ctx, r.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0),
                 KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(r.ctx, r.dss[0], 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(r.ctx, r.add, NULL), KILN_OK);
    for (int i = 0; i < 1100; i++) {
        random_tris(&rng, v, 4, sp->w, sp->h, 30);
        ru_draw(r.dev, r.ctx, v, 12, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
        CHECK_RESULT(kiln_clear_dsv(r.ctx, r.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL,
                                    th_frand(&rng, 0.5f, 1.0f), 0),
                     KILN_OK);
    }
    images im = rig_read(&r, sp);
    free(v);
    rig_free(&r);
    return im;
}

static int same(const char *what, const images *a, const images *b)
{
    int ok = memcmp(a->rt0, b->rt0, a->n0) == 0 &&
             (!a->rt1 || memcmp(a->rt1, b->rt1, a->n1) == 0) &&
             (!a->ds || memcmp(a->ds, b->ds, a->nds) == 0) && a->occluded == b->occluded;
    if (!ok)
        fprintf(stderr, "    %s: the targets differ from the reference\n", what);
    return ok;
}

/* Not a blank scene: many distinct neighbouring texels in the targets
 * read back, together (a scene may end on a clear of target 0). */
static uint32_t distinct(const uint8_t *t, size_t n, size_t texel)
{
    uint32_t d = 0;
    for (size_t i = texel; t && i < n && d < 200; i += texel)
        d += memcmp(t + i, t + i - texel, texel) != 0;
    return d;
}

static void check_rich(const images *im, const spec *sp)
{
    CHECK(distinct(im->rt0, im->n0, kiln_format_size(sp->rt0)) +
              distinct(im->rt1, im->n1, kiln_format_size(sp->rt1)) +
              distinct(im->ds, im->nds, kiln_format_size(sp->ds)) >=
          200);
}

static const kiln_exec_mode modes[5] = {KILN_EXEC_SERIAL, KILN_EXEC_ASYNC, KILN_EXEC_ASYNC,
                                        KILN_EXEC_ASYNC, KILN_EXEC_ASYNC};
static const uint32_t threads[5] = {0, 1, 2, 3, 8};

static void test_scenes(void)
{
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            const spec *sp = &specs[s];
            kr_tilebuf_force(0);
            uint64_t c0 = kr_tilebuf_count();
            images ref = random_scene(sp, seed, KILN_EXEC_SERIAL, 0);
            CHECK(kr_tilebuf_count() == c0); /* off: nothing held */
            check_rich(&ref, sp);
            kr_tilebuf_force(1);
            for (int m = 0; m < 5; m++) {
                c0 = kr_tilebuf_count();
                images got = random_scene(sp, seed, modes[m], threads[m]);
                uint64_t held = kr_tilebuf_count() - c0;
                char what[128];
                snprintf(what, sizeof what, "%s, seed %llu, %u threads", sp->name,
                         (unsigned long long)seed, threads[m]);
                th_check(same(what, &ref, &got), what, __FILE__, __LINE__);
                th_check(sp->fits ? held > 0 : held == 0, "planes held where they fit, only there",
                         __FILE__, __LINE__);
                images_free(&got);
            }
            images_free(&ref);
        }
}

static void test_waves(void)
{
    const spec *sp = &specs[0];
    kr_tilebuf_force(0);
    images ref = wave_scene(sp, KILN_EXEC_SERIAL, 0);
    kr_tilebuf_force(1);
    for (int m = 0; m < 5; m += 2) {
        uint64_t c0 = kr_tilebuf_count();
        images got = wave_scene(sp, modes[m], threads[m]);
        /* the first wave holds at most three planes a tile (both targets
         * and the depth buffer); the later ones hold the depth buffer
         * again */
        uint32_t tiles = ((sp->w + KR_TILE - 1) / KR_TILE) * ((sp->h + KR_TILE - 1) / KR_TILE);
        CHECK(kr_tilebuf_count() - c0 > 3 * (uint64_t)tiles);
        th_check(same("1,100 draws and clears", &ref, &got), "waves", __FILE__, __LINE__);
        images_free(&got);
    }
    images_free(&ref);
}

/* Clears that do not write every bit of a D24S8 texel (depth alone,
 * stencil alone) hold nothing; a clear of both holds the plane. */
static void test_partial(void)
{
    const spec *sp = &specs[0];
    rig r;
    rig_make(&r, sp, KILN_EXEC_ASYNC, 2);
    th_rng rng = {7};
    float *v = malloc((size_t)STRIDE * 3 * 50);
    static const uint32_t what[3] = {KILN_CLEAR_DEPTH, KILN_CLEAR_STENCIL,
                                     KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL};
    for (int i = 0; i < 3; i++) {
        uint64_t c0 = kr_tilebuf_count();
        CHECK_RESULT(kiln_clear_dsv(r.ctx, r.dsv, what[i], 0.5f, 1), KILN_OK);
        random_tris(&rng, v, 50, sp->w, sp->h, 30);
        ru_draw(r.dev, r.ctx, v, 150, STRIDE, KILN_TOPOLOGY_TRIANGLE_LIST);
        kiln_finish(r.ctx);
        uint64_t held = kr_tilebuf_count() - c0;
        CHECK(i < 2 ? held == 0 : held > 0);
    }
    free(v);
    rig_free(&r);
}

/* The pool's slots: each handed out once, none when all are out, a slot
 * given back handed out again with its planes; a plane is made once,
 * 64-byte aligned, and kept, made again for more samples. */
static void test_slots(void)
{
    kiln_device_desc dd = {0};
    kb_env env;
    kb_env_init(&env, &dd);
    kr_pool *p = kr_pool_create(&env);
    CHECK(p != NULL);
    p->threads = 3;
    CHECK(kr_pool_tilebuf_ready(p));
    CHECK(p->ntb == 5);
    kr_tilebuf *b[5];
    for (int i = 0; i < 5; i++) {
        b[i] = kr_pool_tilebuf_get(p);
        CHECK(b[i] != NULL);
        for (int j = 0; j < i; j++)
            CHECK(b[j] != b[i]);
    }
    CHECK(kr_pool_tilebuf_get(p) == NULL);
    const size_t one = KR_TILEBUF_SAMPLE;
    uint8_t *pl = kr_tilebuf_plane(p, b[3], KILN_MAX_RENDER_TARGETS, 1);
    CHECK(pl != NULL && ((uintptr_t)pl & 63u) == 0);
    memset(pl, 0x5a, one); /* all of it writable (ASan) */
    kr_pool_tilebuf_put(p, b[3]);
    CHECK(kr_pool_tilebuf_get(p) == b[3]);
    CHECK(kr_tilebuf_plane(p, b[3], KILN_MAX_RENDER_TARGETS, 1) == pl);
    CHECK(kr_tilebuf_plane(p, b[3], 0, 1) != pl);
    /* four samples: made again, four times the bytes; then kept for one */
    uint8_t *pl4 = kr_tilebuf_plane(p, b[3], KILN_MAX_RENDER_TARGETS, 4);
    CHECK(pl4 != NULL && ((uintptr_t)pl4 & 63u) == 0);
    memset(pl4, 0xa5, 4 * one);
    CHECK(kr_tilebuf_plane(p, b[3], KILN_MAX_RENDER_TARGETS, 1) == pl4);
    for (int i = 0; i < 5; i++)
        kr_pool_tilebuf_put(p, b[i]);
    CHECK(kr_pool_tilebuf_ready(p) && p->ntb == 5); /* made once */
    kr_pool_destroy(p);
}

/* KILN_TILEBUF=off, read at the first scene: nothing held. (First in
 * main: the mode is read once.) */
static void test_env_off(void)
{
    setenv("KILN_TILEBUF", "off", 1);
    uint64_t c0 = kr_tilebuf_count();
    images im = random_scene(&specs[0], 2, KILN_EXEC_ASYNC, 2);
    CHECK(kr_tilebuf_count() == c0);
    CHECK(kr_tilebuf_mode() == 0);
    images_free(&im);
    unsetenv("KILN_TILEBUF");
    kr_tilebuf_force(-1);
    CHECK(kr_tilebuf_mode() == 1); /* read again: on by default */
}

int main(void)
{
    const char *be = getenv("KILN_TEST_BACKEND");
    if (be && strcmp(be, "soft")) {
        printf("soft backend only\n");
        return 0;
    }
    test_env_off();
    test_slots();
    test_partial();
    test_scenes();
    test_waves();
    return th_exit();
}
