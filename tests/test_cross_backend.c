/*
 * Cross-backend check: every example scene (copy scenes and draw scenes)
 * and a few hundred seeded random scenes render on the soft backend and on
 * the osmesa backend (Mesa's llvmpipe), and the images are compared pixel
 * by pixel.
 *
 * The rule. A pixel agrees when every channel is within 1/255. A pixel
 * that differs by more is explained only if it lies within one pixel of
 * an edge of the soft image: some pixel of its 3x3 neighbourhood differs
 * from it by more than EDGE_STEP in a channel, or holds (within the
 * filtering tolerance) the value osmesa drew there, i.e. the pixel went to
 * the neighbouring surface. That is where D3D10's and
 * GL's rules genuinely part (fill-rule ties, GL's line and point
 * rasterization, where a texture's LOD switches), and nowhere else: an
 * interior pixel that differs fails at once. Explained pixels are counted
 * against a budget per scene (the fraction of the image; BUDGETS below,
 * each measured and then given headroom). Copy scenes run only CPU
 * operations and must agree exactly.
 *
 * On failure: cross-out/NAME.{soft,osmesa,diff}.png in the working
 * directory (diff: white for unexplained, red for explained, the soft image
 * dimmed elsewhere), the counts, and for random scenes the seed, which
 * `test_cross_backend --seed N` replays alone.
 *
 * Exits 77 (skip) when the osmesa backend is not built in.
 */
#include "harness.h"
#include "scenes.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stb/stb_image_write.h>

#define OUT_DIR "cross-out"
#define EDGE_STEP 24
#define RANDOM_SCENES 200
#define RW 96u
#define RH 64u

typedef struct budget {
    const char *scene;
    /* Textured scenes: llvmpipe filters unorm8 textures with 8-bit
     * fixed-point weights, kiln in float, so filtered interiors may differ
     * by a few units; 0 for scenes without texture filtering. */
    int filter_tol;
    double max_edge, max_filter; /* fractions of the image */
} budget;

/* Measured on this tree with Mesa 22.3's llvmpipe (the note has
 * the figures), then given headroom. Scenes not listed (the copy scenes,
 * pure CPU operations) must agree exactly. */
static const budget BUDGETS[] = {
    {"triangle", 0, 0.002, 0.0},  {"cube", 6, 0.03, 0.05},     {"rtt", 8, 0.05, 0.20},
    {"objects", 0, 0.002, 0.0},   {"particles", 4, 0.02, 0.02},  {"occlusion", 0, 0.002, 0.0},
    {"swirl", 0, 0.002, 0.0},     {"shadow", 0, 0.002, 0.0},
};
/* Scenes that need a geometry shader, an sRGB target or multisampling,
 * which osmesa refuses: there they draw a fallback of their own
 * (examples/scenes_sprites.c, scenes_skybox.c, scenes_srgb.c,
 * scenes_msaa.c), a different picture by design. Both backends must still
 * render them. */
static const char *const NOT_COMPARED[] = {"sprites", "skybox", "srgb", "msaa"};

static bool compared(const char *name)
{
    for (size_t i = 0; i < sizeof NOT_COMPARED / sizeof NOT_COMPARED[0]; i++)
        if (strcmp(name, NOT_COMPARED[i]) == 0)
            return false;
    return true;
}

static const budget RANDOM_BUDGET = {"random", 6, 0.005, 0.03};
static const budget EXACT = {"exact", 0, 0.0, 0.0};

static const budget *budget_for(const char *name)
{
    for (size_t i = 0; i < sizeof BUDGETS / sizeof *BUDGETS; i++)
        if (!strcmp(BUDGETS[i].scene, name))
            return &BUDGETS[i];
    return &EXACT;
}

typedef struct verdict {
    uint32_t agree, filtered, explained, unexplained;
    uint32_t worst;         /* largest channel difference */
    int first_x, first_y;   /* first unexplained pixel */
} verdict;

static int chan_diff(const uint8_t *a, const uint8_t *b)
{
    int m = 0;
    for (int c = 0; c < 4; c++) {
        int d = abs((int)a[c] - (int)b[c]);
        if (d > m)
            m = d;
    }
    return m;
}

/* A coverage decision that went the other way: the soft image has an edge
 * within one pixel (a step of more than EDGE_STEP), or the osmesa value is
 * what soft drew within one pixel (the pixel went to the neighbouring
 * surface, even across a faint edge). */
static bool near_edge(const uint8_t *soft, const uint8_t *gl, uint32_t w, uint32_t h, uint32_t x, uint32_t y,
                      int tol)
{
    const uint8_t *c = soft + ((size_t)y * w + x) * 4, *g = gl + ((size_t)y * w + x) * 4;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int nx = (int)x + dx, ny = (int)y + dy;
            if (nx < 0 || ny < 0 || nx >= (int)w || ny >= (int)h || (!dx && !dy))
                continue;
            const uint8_t *n = soft + ((size_t)ny * w + (size_t)nx) * 4;
            if (chan_diff(c, n) > EDGE_STEP || chan_diff(g, n) <= (tol > 1 ? tol : 1))
                return true;
        }
    return false;
}

static verdict classify(const uint8_t *soft, const uint8_t *gl, uint32_t w, uint32_t h, int filter_tol, uint8_t *diff)
{
    verdict v = {0, 0, 0, 0, 0, -1, -1};
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++) {
            size_t i = ((size_t)y * w + x) * 4;
            int d = chan_diff(soft + i, gl + i);
            if ((uint32_t)d > v.worst)
                v.worst = (uint32_t)d;
            uint8_t px[4] = {(uint8_t)(soft[i] / 4), (uint8_t)(soft[i + 1] / 4), (uint8_t)(soft[i + 2] / 4), 255};
            if (d <= 1) {
                v.agree++;
            } else if (d <= filter_tol) {
                v.filtered++;
                px[0] = 0, px[1] = 0, px[2] = 255;
            } else if (near_edge(soft, gl, w, h, x, y, filter_tol)) {
                v.explained++;
                px[0] = 255, px[1] = 0, px[2] = 0;
            } else {
                if (!v.unexplained++)
                    v.first_x = (int)x, v.first_y = (int)y;
                px[0] = px[1] = px[2] = 255;
            }
            if (diff)
                memcpy(diff + i, px, 4);
        }
    return v;
}

static void write_images(const char *name, const uint8_t *soft, const uint8_t *gl, const uint8_t *diff, uint32_t w,
                         uint32_t h)
{
    if (mkdir(OUT_DIR, 0777) != 0 && errno != EEXIST)
        return;
    const char *kinds[3] = {"soft", "osmesa", "diff"};
    const uint8_t *imgs[3] = {soft, gl, diff};
    for (int k = 0; k < 3; k++) {
        char path[256];
        snprintf(path, sizeof path, OUT_DIR "/%s.%s.png", name, kinds[k]);
        stbi_write_png(path, (int)w, (int)h, 4, imgs[k], (int)w * 4);
        fprintf(stderr, "  wrote %s\n", path);
    }
}

/* Compares and reports; true when within the rule and the budget. */
static bool judge(const char *name, const uint8_t *soft, const uint8_t *gl, uint32_t w, uint32_t h, const budget *b,
                  verdict *out)
{
    uint8_t *diff = malloc((size_t)w * h * 4);
    verdict v = classify(soft, gl, w, h, b->filter_tol, diff);
    double px = (double)w * h;
    bool ok = v.unexplained == 0 && v.explained / px <= b->max_edge && v.filtered / px <= b->max_filter;
    if (!ok) {
        fprintf(stderr,
                "cross-check %s: %u pixels agree, %u differ by at most %d (filtering; %.4f of the image, budget "
                "%.4f), %u differ more at edges (%.4f, budget %.4f), %u differ more inside (first at %d,%d); "
                "largest channel difference %u\n",
                name, v.agree, v.filtered, b->filter_tol, v.filtered / px, b->max_filter, v.explained,
                v.explained / px, b->max_edge, v.unexplained, v.first_x, v.first_y, v.worst);
        write_images(name, soft, gl, diff, w, h);
    }
    if (out)
        *out = v;
    free(diff);
    return ok;
}

/* ---- the example scenes ---- */

static uint8_t *render_scene(const scene *sc, kiln_backend backend)
{
    size_t size = (size_t)DEMO_GOLDEN_W * DEMO_GOLDEN_H * 4;
    uint8_t *px = malloc(size);
    demo d = {.w = DEMO_GOLDEN_W, .h = DEMO_GOLDEN_H, .scene = sc->name};
    d.dev = th_device_desc((kiln_device_desc){.backend = backend, .num_threads = 2});
    d.ctx = kiln_device_immediate_context(d.dev);
    int rc = demo_render(&d, sc, DEMO_GOLDEN_FRAMES, px, NULL, NULL, NULL);
    kiln_device_destroy(d.dev);
    if (rc) {
        free(px);
        return NULL;
    }
    return px;
}

/* The rule itself must be able to fail: an interior block changed by 40
 * and a shifted copy are unexplained; a copy is exact. */
static void check_rule(void)
{
    uint32_t w = 64, h = 64;
    uint8_t *a = calloc((size_t)w * h, 4), *b = calloc((size_t)w * h, 4);
    for (uint32_t i = 0; i < w * h; i++)
        a[4 * i] = (uint8_t)(i % w * 2), a[4 * i + 3] = 255;
    memcpy(b, a, (size_t)w * h * 4);
    verdict v;
    CHECK(judge("rule-copy", a, b, w, h, &EXACT, &v) && v.agree == w * h);
    for (uint32_t y = 30; y < 35; y++)
        for (uint32_t x = 30; x < 35; x++)
            b[(y * w + x) * 4 + 1] = 40;
    fprintf(stderr, "(the next report is expected: the rule's self-test)\n");
    CHECK(!judge("rule-interior", a, b, w, h, &RANDOM_BUDGET, &v) && v.unexplained == 25);
    free(a);
    free(b);
}

static void check_scenes(const char *only)
{
    for (size_t i = 0; i < demo_num_scenes; i++) {
        const scene *sc = demo_scenes[i];
        if (only && strcmp(only, sc->name))
            continue;
        uint8_t *a = render_scene(sc, KILN_BACKEND_SOFT);
        uint8_t *b = render_scene(sc, KILN_BACKEND_OSMESA);
        CHECK(a != NULL && b != NULL);
        if (a && b && !compared(sc->name)) {
            printf("scene %-10s rendered on both; osmesa draws its fallback (no geometry shader): "
                   "not compared\n",
                   sc->name);
        } else if (a && b) {
            verdict v;
            const budget *bu = budget_for(sc->name);
            bool ok = judge(sc->name, a, b, DEMO_GOLDEN_W, DEMO_GOLDEN_H, bu, &v);
            CHECK(ok);
            double px = (double)DEMO_GOLDEN_W * DEMO_GOLDEN_H;
            printf("scene %-10s %s: edges %.4f (budget %.4f), filtering <= %d: %.4f (budget %.4f), largest "
                   "difference %u\n",
                   sc->name, ok ? "agrees " : "DIFFERS", v.explained / px, bu->max_edge, bu->filter_tol,
                   v.filtered / px, bu->max_filter, v.worst);
        }
        free(a);
        free(b);
    }
}

/* ---- random scenes ---- */

static uint64_t rng_state;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
static float rndf(float lo, float hi) { return lo + (hi - lo) * (float)(rnd() & 0xffffff) / 16777216.0f; }

typedef struct vtx {
    float pos[4];
    float color[4];
    float uv[4];
} vtx;

/* One random scene on one backend: a cleared target with depth, 1..12
 * triangles of random vertex colors (or texture times color), random
 * cull/fill/depth/blend states and scissor. Returns RW*RH RGBA8 pixels. */
static uint8_t *render_random(uint64_t seed, kiln_backend backend)
{
    rng_state = seed * 2654435761u + 1;
    kiln_device *dev = th_device_desc((kiln_device_desc){.backend = backend, .num_threads = 2});
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_texture rt, ds, staging, tex;
    CHECK_RESULT(kiln_create_texture2d(dev,
                                       &(kiln_texture2d_desc){.width = RW, .height = RH, .mip_levels = 1, .format = KILN_FORMAT_R8G8B8A8_UNORM,
                                                              .bind_flags = KILN_BIND_RENDER_TARGET},
                                       NULL, &rt),
                 KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev,
                                       &(kiln_texture2d_desc){.width = RW, .height = RH, .mip_levels = 1, .format = KILN_FORMAT_D24_UNORM_S8_UINT,
                                                              .bind_flags = KILN_BIND_DEPTH_STENCIL},
                                       NULL, &ds),
                 KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev,
                                       &(kiln_texture2d_desc){.width = RW, .height = RH, .mip_levels = 1, .format = KILN_FORMAT_R8G8B8A8_UNORM,
                                                              .usage = KILN_USAGE_STAGING, .cpu_access = KILN_CPU_ACCESS_READ},
                                       NULL, &staging),
                 KILN_OK);
    /* A smooth 16x16 texture: bilinear filtering differs little between
     * implementations on smooth data, so interiors must agree. */
    uint8_t texels[16 * 16 * 4];
    for (int y = 0; y < 16; y++)
        for (int x = 0; x < 16; x++) {
            uint8_t *t = texels + (y * 16 + x) * 4;
            t[0] = (uint8_t)(x * 16), t[1] = (uint8_t)(y * 16), t[2] = 128, t[3] = 255;
        }
    CHECK_RESULT(kiln_create_texture2d(dev,
                                       &(kiln_texture2d_desc){.width = 16, .height = 16, .mip_levels = 1, .format = KILN_FORMAT_R8G8B8A8_UNORM,
                                                              .bind_flags = KILN_BIND_SHADER_RESOURCE},
                                       &(kiln_subresource_data){.data = texels, .row_pitch = 64}, &tex),
                 KILN_OK);
    kiln_rtv rtv;
    kiln_dsv dsv;
    kiln_srv srv;
    CHECK_RESULT(kiln_create_rtv(dev, rt, NULL, &rtv), KILN_OK);
    CHECK_RESULT(kiln_create_dsv(dev, ds, NULL, &dsv), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);

    bool textured = rnd() & 1;
    kiln_effect effect = textured ? KILN_EFFECT_TEXTURE_COLOR : KILN_EFFECT_VERTEX_COLOR;
    kiln_vertex_shader_desc vsd;
    kiln_pixel_shader_desc psd;
    kiln_effect_get(effect, &vsd, &psd);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vsd, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &psd, &ps), KILN_OK);
    kiln_input_layout_desc ld = {.num_elements = textured ? 3u : 2u};
    ld.elements[0] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0};
    ld.elements[1] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 16, 0, 0};
    ld.elements[2] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 32, 0, 0};
    kiln_input_layout layout;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &layout), KILN_OK);

    /* The effects' VS multiplies by cb0 (row-major): identity. */
    float ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    kiln_buffer cb;
    CHECK_RESULT(kiln_create_buffer(dev, &(kiln_buffer_desc){.size = 64, .bind_flags = KILN_BIND_CONSTANT_BUFFER},
                                    &(kiln_subresource_data){.data = ident}, &cb),
                 KILN_OK);
    uint32_t ntri = 1 + rnd() % 12;
    vtx v[36];
    for (uint32_t i = 0; i < ntri * 3; i++) {
        /* Positions on a 1/8-pixel-ish grid away from exact pixel centers
         * would still tie sometimes: ties are edge pixels, explained. */
        v[i] = (vtx){{rndf(-1.2f, 1.2f), rndf(-1.2f, 1.2f), rndf(0.05f, 0.95f), 1.0f},
                     {rndf(0, 1), rndf(0, 1), rndf(0, 1), rndf(0.3f, 1)},
                     {rndf(0, 1), rndf(0, 1), 0, 1}};
        /* Flat color per triangle keeps interiors comparable. */
        if (i % 3)
            memcpy(v[i].color, v[i - i % 3].color, sizeof v[i].color);
    }
    kiln_buffer vb;
    CHECK_RESULT(kiln_create_buffer(dev, &(kiln_buffer_desc){.size = (uint32_t)(sizeof(vtx) * ntri * 3), .bind_flags = KILN_BIND_VERTEX_BUFFER},
                                    &(kiln_subresource_data){.data = v}, &vb),
                 KILN_OK);

    kiln_rasterizer_desc rsd = {.cull = (kiln_cull_mode)(1 + rnd() % 3), .front_ccw = rnd() & 1,
                                .scissor_enable = (rnd() % 4) == 0};
    kiln_depth_stencil_desc dsd = {.depth_disable = (rnd() % 3) == 0, .depth_func = (kiln_compare)(1 + rnd() % 8)};
    kiln_blend_desc bd = {0};
    if (rnd() & 1)
        bd.rt[0] = (kiln_blend_target){1, KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA, KILN_BLEND_OP_ADD,
                                       KILN_BLEND_ONE, KILN_BLEND_ZERO, KILN_BLEND_OP_ADD, 0};
    kiln_rasterizer_state rs;
    kiln_depth_stencil_state dss;
    kiln_blend_state bs;
    kiln_sampler samp;
    CHECK_RESULT(kiln_create_rasterizer_state(dev, &rsd, &rs), KILN_OK);
    CHECK_RESULT(kiln_create_depth_stencil_state(dev, &dsd, &dss), KILN_OK);
    CHECK_RESULT(kiln_create_blend_state(dev, &bd, &bs), KILN_OK);
    CHECK_RESULT(kiln_create_sampler(dev, &(kiln_sampler_desc){.address_u = KILN_ADDRESS_WRAP, .address_v = KILN_ADDRESS_CLAMP}, &samp),
                 KILN_OK);

    float clear[4] = {rndf(0, 1), rndf(0, 1), rndf(0, 1), 1};
    kiln_clear_rtv(ctx, rtv, clear);
    kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, rndf(0.5f, 1.0f), 0);
    kiln_om_set_render_targets(ctx, 1, &rtv, dsv);
    kiln_rs_set_viewport(ctx, &(kiln_viewport){0, 0, (float)RW, (float)RH, 0, 1});
    kiln_rect sr = {(int32_t)(rnd() % 30), (int32_t)(rnd() % 20), (int32_t)(40 + rnd() % 56), (int32_t)(30 + rnd() % 34)};
    kiln_rs_set_scissor_rect(ctx, &sr);
    kiln_rs_set_state(ctx, rs);
    kiln_om_set_depth_stencil_state(ctx, dss, 0);
    kiln_om_set_blend_state(ctx, bs, NULL);
    kiln_ia_set_input_layout(ctx, layout);
    kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint32_t stride = sizeof(vtx), off = 0;
    kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off);
    kiln_vs_set_shader(ctx, vs);
    kiln_ps_set_shader(ctx, ps);
    kiln_vs_set_constant_buffers(ctx, 0, 1, &cb);
    kiln_ps_set_shader_resources(ctx, 0, 1, &srv);
    kiln_ps_set_samplers(ctx, 0, 1, &samp);
    CHECK_RESULT(kiln_draw(ctx, ntri * 3, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(staging), kiln_texture_resource(rt)), KILN_OK);
    kiln_mapped_subresource m;
    uint8_t *out = malloc((size_t)RW * RH * 4);
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(staging), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    for (uint32_t y = 0; y < RH; y++)
        memcpy(out + (size_t)y * RW * 4, (const uint8_t *)m.data + (size_t)y * m.row_pitch, RW * 4);
    kiln_unmap(ctx, kiln_texture_resource(staging), 0);
    kiln_device_destroy(dev);
    return out;
}

static void check_random(uint64_t first, uint32_t count)
{
    uint32_t failed = 0;
    double worst = 0, worst_f = 0;
    for (uint64_t s = first; s < first + count; s++) {
        uint8_t *a = render_random(s, KILN_BACKEND_SOFT);
        uint8_t *b = render_random(s, KILN_BACKEND_OSMESA);
        char name[64];
        snprintf(name, sizeof name, "random-%llu", (unsigned long long)s);
        verdict v;
        bool ok = judge(name, a, b, RW, RH, &RANDOM_BUDGET, &v);
        double px = (double)RW * RH;
        if (v.explained / px > worst)
            worst = v.explained / px;
        if (v.filtered / px > worst_f)
            worst_f = v.filtered / px;
        if (!ok) {
            failed++;
            fprintf(stderr, "  replay: test_cross_backend --seed %llu\n", (unsigned long long)s);
        }
        CHECK(ok);
        free(a);
        free(b);
    }
    printf("random scenes: %u of %u agree; the most in one: edges %.4f of the image (budget %.4f), "
           "filtering %.4f (budget %.4f)\n",
           count - failed, count, worst, RANDOM_BUDGET.max_edge, worst_f, RANDOM_BUDGET.max_filter);
}

static void quiet_log(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)level, (void)id, (void)message, (void)user;
}

int main(int argc, char **argv)
{
    kiln_device *probe = NULL;
    if (kiln_device_create(&(kiln_device_desc){.backend = KILN_BACKEND_OSMESA, .log_fn = quiet_log}, &probe) !=
        KILN_OK) {
        printf("skip: the osmesa backend is not available\n");
        return 77;
    }
    kiln_device_destroy(probe);
    if (argc == 3 && !strcmp(argv[1], "--seed")) {
        check_random(strtoull(argv[2], NULL, 10), 1);
    } else if (argc == 3 && !strcmp(argv[1], "--scene")) {
        check_scenes(argv[2]);
    } else {
        check_rule();
        check_scenes(NULL);
        check_random(1, RANDOM_SCENES);
    }
    return th_exit();
}
