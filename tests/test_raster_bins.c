/*
 * test_raster_bins: per-tile primitive lists keep every primitive, in
 * order, whatever their length (a job holds 1,024 primitives and stages
 * its (tile, primitive) pairs in blocks of 1,024 before sorting them by
 * tile), and the per-pixel paths that work on four pixels at a time stay
 * inside the target at its right and bottom edges.
 *
 * - Distinct pixels: N one-pixel triangles, each around its own pixel
 *   center in one 64x64 tile, for N small and large and on both sides of each job
 *   boundary: each pixel has its triangle's color, the others the clear
 *   color.
 * - Order: N triangles over the same pixel, depth test off: the last one
 *   drawn is what the pixel shows.
 * - Layers: N triangles in one draw, each over the whole target (all 12
 *   tiles) or, every third one, over its upper left part only (9 tiles),
 *   depth test off: a job stages a pair per tile per triangle (33 per
 *   three), so N from 94 on crosses a staging block, and the sort must
 *   keep each tile's order: every pixel shows the last triangle covering
 *   it.
 * - Straddling: N triangles on distinct pixel pairs across tile column
 *   boundaries of a 512 x 256 target, two pairs staged each (a second
 *   block from the 513th on): every primitive must be in both its tiles'
 *   lists, each pixel showing its own triangle, the others the clear.
 * - Edges: a target whose width and height are not multiples of 4 (or of
 *   the tile), covered by two triangles with a D32_FLOAT depth test
 *   (LESS, writes on), drawn twice at two depths: every pixel passes the
 *   first time, only the nearer draw passes the second, and the depth
 *   buffer holds the nearer depth everywhere (ASan sees any access past a
 *   row or the buffer).
 */
#include "raster_util.h"

#include <stdio.h>

enum { W = 202, H = 139 };

static kiln_device *dev;
static kiln_context *ctx;
static ru_pipe pipe1; /* position + color varying -> one target */

/* One vertex: pixel position on a w x h target, z, color from a 24-bit id. */
static float *vtx_on(float *v, int w, int h, double px, double py, float z, uint32_t id)
{
    v = ru_vtx(v, w, h, px, py, z);
    v[0] = (float)(id & 255u) / 255.0f;
    v[1] = (float)(id >> 8 & 255u) / 255.0f;
    v[2] = (float)(id >> 16 & 255u) / 255.0f;
    v[3] = 1.0f;
    return v + 4;
}

static float *vtx(float *v, double px, double py, float z, uint32_t id)
{
    return vtx_on(v, W, H, px, py, z, id);
}

/* A triangle that covers exactly the center of pixel (x, y). */
static float *pixel_tri(float *v, int x, int y, uint32_t id)
{
    double cx = x + 0.5, cy = y + 0.5;
    v = vtx(v, cx - 0.3, cy - 0.3, 0.5f, id);
    v = vtx(v, cx + 0.4, cy - 0.3, 0.5f, id);
    return vtx(v, cx - 0.3, cy + 0.4, 0.5f, id);
}

static uint32_t rgba_of(uint32_t id)
{
    return (id & 0xffffffu) | 0xff000000u;
}

static uint32_t pixel(const uint8_t *img, int x, int y)
{
    uint32_t p;
    memcpy(&p, img + ((size_t)y * W + (size_t)x) * 4, 4);
    return p;
}

static void clear(ru_tex *rt)
{
    const float black[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt->rtv, black), KILN_OK);
}

static void distinct_pixels(ru_tex *rt, uint32_t n)
{
    float *v = malloc(sizeof(float) * 24 * n);
    float *w = v;
    for (uint32_t i = 0; i < n; i++)
        w = pixel_tri(w, (int)(i % 64), (int)(i / 64), i + 1);
    clear(rt);
    ru_draw(dev, ctx, v, 3 * n, pipe1.stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *img = ru_read_bytes(dev, rt);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < 64 * 64; i++) {
        uint32_t want = i < n ? rgba_of(i + 1) : 0;
        wrong += pixel(img, (int)(i % 64), (int)(i / 64)) != want;
    }
    CHECK_EQ_INT(wrong, 0);
    if (wrong)
        fprintf(stderr, "    %u triangles on distinct pixels of one tile\n", n);
    free(img);
    free(v);
}

static void same_pixel(ru_tex *rt, uint32_t n)
{
    float *v = malloc(sizeof(float) * 24 * n);
    float *w = v;
    for (uint32_t i = 0; i < n; i++)
        w = pixel_tri(w, 70, 5, i + 1); /* tile (1, 0) */
    clear(rt);
    ru_draw(dev, ctx, v, 3 * n, pipe1.stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *img = ru_read_bytes(dev, rt);
    CHECK_EQ_INT(pixel(img, 70, 5), rgba_of(n));
    CHECK_EQ_INT(pixel(img, 71, 5), 0);
    free(img);
    free(v);
}

static void layers(ru_tex *rt, uint32_t n)
{
    float *v = malloc(sizeof(float) * 24 * n);
    float *w = v;
    for (uint32_t i = 0; i < n; i++) {
        double right =
            i % 3 == 1 ? 100.0 : W + 1.0; /* the hypotenuse's x at the top: 2 * right + 1 */
        w = vtx(w, -1, -1, 0.5f, i + 1);
        w = vtx(w, 2 * right + 1, -1, 0.5f, i + 1);
        w = vtx(w, -1, 2 * H + 1, 0.5f, i + 1);
    }
    clear(rt);
    ru_draw(dev, ctx, v, 3 * n, pipe1.stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *img = ru_read_bytes(dev, rt);
    uint32_t wrong = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            /* inside the smaller triangle: u < 1 (pixels near its edge skipped) */
            double u = (x + 1.5) / (2 * 100.0 + 2) + (y + 1.5) / (2.0 * H + 2);
            if (u > 0.99 && u < 1.01)
                continue;
            uint32_t want = 0;
            for (uint32_t i = 0; i < n; i++)
                if (i % 3 != 1 || u < 1.0)
                    want = i + 1;
            wrong += pixel(img, x, y) != rgba_of(want);
        }
    CHECK_EQ_INT(wrong, 0);
    if (wrong)
        fprintf(stderr, "    %u layers\n", n);
    free(img);
    free(v);
}

/* N triangles in one draw, each over two pixel centers on both sides of
 * a tile column boundary, (64 b - 1, y) and (64 b, y), all on distinct
 * pixels of a 512 x 256 target: every primitive stages two pairs, so a
 * job of 1,024 stages 2,048 (two blocks, the second from its 513th
 * triangle on), and every pixel must show its own triangle or nothing. */
static void straddle(uint32_t n)
{
    enum { SW = 512, SH = 256 };
    ru_tex rt = ru_rt(dev, SW, SH, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, SW, SH, 0, 1);
    float *v = malloc(sizeof(float) * 24 * n);
    float *w = v;
    uint32_t *want = calloc((size_t)SW * SH, sizeof *want);
    for (uint32_t i = 0; i < n; i++) {
        int x = 64 * (int)(1 + i % 7) - 1, y = (int)(i / 7);
        /* covers the centers (x + 0.5, y + 0.5) and (x + 1.5, y + 0.5) only */
        w = vtx_on(w, SW, SH, x + 0.2, y + 0.2, 0.5f, i + 1);
        w = vtx_on(w, SW, SH, x + 2.6, y + 0.2, 0.5f, i + 1);
        w = vtx_on(w, SW, SH, x + 0.2, y + 0.9, 0.5f, i + 1);
        want[(size_t)y * SW + (size_t)x] = want[(size_t)y * SW + (size_t)x + 1] = rgba_of(i + 1);
    }
    const float black[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
    ru_draw(dev, ctx, v, 3 * n, pipe1.stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *img = ru_read_bytes(dev, &rt);
    uint32_t wrong = 0;
    for (size_t i = 0; i < (size_t)SW * SH; i++) {
        uint32_t p;
        memcpy(&p, img + i * 4, 4);
        wrong += p != want[i];
    }
    CHECK_EQ_INT(wrong, 0);
    if (wrong)
        fprintf(stderr, "    %u triangles across tile boundaries\n", n);
    free(img);
    free(want);
    free(v);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    ru_free_tex(dev, &rt);
}

static void edges(ru_tex *rt)
{
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    kiln_depth_stencil_state less = ru_dss(dev, (kiln_depth_stencil_desc){0});
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt->rtv, ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, less, 0), KILN_OK);
    clear(rt);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    const float z[3] = {0.5f, 0.25f, 0.75f}; /* drawn in this order */
    for (int d = 0; d < 3; d++) {
        float v[6 * 8], *w = v;
        w = vtx(w, -1, -1, z[d], (uint32_t)d + 1);
        w = vtx(w, W + 1, -1, z[d], (uint32_t)d + 1);
        w = vtx(w, -1, H + 1, z[d], (uint32_t)d + 1);
        w = vtx(w, W + 1, -1, z[d], (uint32_t)d + 1);
        w = vtx(w, W + 1, H + 1, z[d], (uint32_t)d + 1);
        vtx(w, -1, H + 1, z[d], (uint32_t)d + 1);
        ru_draw(dev, ctx, v, 6, pipe1.stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    }
    uint8_t *img = ru_read_bytes(dev, rt);
    float *depth = ru_read_f32(dev, &ds);
    uint32_t wrong_color = 0, wrong_depth = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            wrong_color += pixel(img, x, y) != rgba_of(2);
            wrong_depth += depth[(size_t)y * W + (size_t)x] != 0.25f;
        }
    CHECK_EQ_INT(wrong_color, 0);
    CHECK_EQ_INT(wrong_depth, 0);
    free(img);
    free(depth);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt->rtv, (kiln_dsv){0}), KILN_OK);
    ru_free_tex(dev, &ds);
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    pipe1 = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &pipe1);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    kiln_rasterizer_state rs = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    kiln_depth_stencil_state off =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1, .depth_write_disable = 1});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, off, 0), KILN_OK);

    /* Small and large lists of one tile, and around each job boundary
     * (1024). */
    static const uint32_t counts[] = {1,  2,  3,  6,  7,   14,   15,   30,   31,  62,
                                      63, 94, 95, 1023, 1024, 1025, 2047, 2049, 4096};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        distinct_pixels(&rt, counts[i]);
        same_pixel(&rt, counts[i]);
    }
    static const uint32_t layer_counts[] = {1, 2, 3, 93, 94, 95, 100, 200, 401};
    for (size_t i = 0; i < sizeof layer_counts / sizeof layer_counts[0]; i++)
        layers(&rt, layer_counts[i]);
    static const uint32_t straddle_counts[] = {1, 511, 512, 513, 1023, 1024, 1025, 1792};
    for (size_t i = 0; i < sizeof straddle_counts / sizeof straddle_counts[0]; i++)
        straddle(straddle_counts[i]);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    edges(&rt);

    ru_free_tex(dev, &rt);
    ru_free_pipe(dev, &pipe1);
    kiln_device_destroy(dev);
    return th_exit();
}
