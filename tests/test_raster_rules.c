/*
 * test_raster_rules: the soft rasterizer follows D3D10's rasterization
 * rules (DESIGN "Rasterization rules"; kiln.h "Drawing").
 *
 * Coverage is measured by drawing with additive blending (ONE, ONE) into an
 * R32_FLOAT target: each triangle adds a weight (1, or a distinct power of
 * two so the sum says which triangles covered a pixel). Expected values are
 * never produced by kiln: they come from hand-derived pixel sets, or from a
 * scalar reference written here from the D3D10 rules:
 *
 *   - vertices snap to 16.8 fixed point (the tests place vertices at
 *     k/256 + j with |j| <= 1/1024 pixel, so the snapped value is k
 *     whatever the float rounding on the way through clip space);
 *   - a pixel is covered when its center (x + 0.5, y + 0.5) is inside the
 *     triangle, or on a "top" edge (exactly horizontal, above the third
 *     vertex) or a "left" edge (not horizontal, the third vertex to its
 *     right), computed with int64 edge functions.
 *
 * Depth is compared with the plane through the snapped vertices (z linear
 * in screen space), evaluated in double at the pixel center.
 *
 * Clipping is checked against a homogeneous reference: a screen point is
 * covered when the clip-space triangle has a point with w > 0 (and
 * 0 <= z <= w with depth clip) that projects onto it. Pixels whose
 * classification changes within 1/50 pixel of the center are skipped
 * (their fate depends on snapping of the clipped vertices); the tests check
 * that few are skipped.
 */
#include "raster_util.h"

#include <float.h>
#include <stdio.h>

static kiln_device *dev;
static kiln_context *ctx;
static ru_pipe P1; /* position + weight varying -> one target */
static ru_pipe PC; /* the same inputs, PS writes PS cb0 (1.0): exact
                      whatever w (a varying is only exact at w = 1) */
static kiln_buffer CB1;
static ru_pipe PZ; /* position only, PS without outputs */
static kiln_blend_state BADD;

/* ---- the reference ---- */

typedef struct fxv {
    int64_t x, y;
} fxv; /* 16.8 fixed point */

static int64_t cross3(fxv a, fxv b, int64_t px, int64_t py)
{
    return (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x);
}

/* D3D10: top edge = exactly horizontal and above the other edges (the
 * third vertex is below it, y grows downward); left edge = not horizontal
 * and the triangle lies to its right. */
static int top_or_left(fxv a, fxv b, fxv c)
{
    if (a.y == b.y)
        return c.y > a.y;
    /* x of the edge at c.y, compared with c.x: sign of (c.x - x_edge). */
    int64_t d = (c.x - a.x) * (b.y - a.y) - (c.y - a.y) * (b.x - a.x);
    return (d > 0) == (b.y - a.y > 0);
}

static int ref_covers(const fxv v[3], int px, int py)
{
    int64_t cx = (int64_t)px * 256 + 128, cy = (int64_t)py * 256 + 128;
    if (cross3(v[0], v[1], v[2].x, v[2].y) == 0)
        return 0;
    for (int i = 0; i < 3; i++) {
        fxv a = v[i], b = v[(i + 1) % 3], c = v[(i + 2) % 3];
        int64_t e = cross3(a, b, cx, cy), s = cross3(a, b, c.x, c.y);
        if (e == 0) {
            if (!top_or_left(a, b, c))
                return 0;
        } else if ((e > 0) != (s > 0)) {
            return 0;
        }
    }
    return 1;
}

/* Adds `w` to ref[] over the pixels the triangle covers in a W x H target. */
static void ref_add(float *ref, int W, int H, const fxv v[3], float w)
{
    int64_t mnx = v[0].x, mxx = v[0].x, mny = v[0].y, mxy = v[0].y;
    for (int k = 1; k < 3; k++) {
        mnx = v[k].x < mnx ? v[k].x : mnx;
        mxx = v[k].x > mxx ? v[k].x : mxx;
        mny = v[k].y < mny ? v[k].y : mny;
        mxy = v[k].y > mxy ? v[k].y : mxy;
    }
    int x0 = (int)(mnx / 256) - 2, x1 = (int)(mxx / 256) + 2, y0 = (int)(mny / 256) - 2,
        y1 = (int)(mxy / 256) + 2;
    x0 = x0 < 0 ? 0 : x0;
    y0 = y0 < 0 ? 0 : y0;
    x1 = x1 > W - 1 ? W - 1 : x1;
    y1 = y1 > H - 1 ? H - 1 : y1;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++)
            if (ref_covers(v, x, y))
                ref[(size_t)y * W + x] += w;
}

/* ---- drawing ---- */

static kiln_rasterizer_state rs_none;

/* A vertex: clip xyzw + weight float4. */
typedef struct vert {
    float p[4], wt[4];
} vert;

/* Pixel position of a fixed-point coordinate, off by at most 1/1024 pixel
 * (random) so that only snapping brings it back to k. */
static double jit(int64_t k, th_rng *r)
{
    int j = (int)th_below(r, 5) - 2; /* -2..2 quarter-steps of 1/1024 */
    return ((double)k + j * 0.125) / 256.0;
}

static vert mkv(int W, int H, double px, double py, float z, float wt)
{
    vert v;
    memset(&v, 0, sizeof v);
    ru_clip(W, H, px, py, v.p);
    v.p[2] = z;
    v.p[3] = 1.0f;
    v.wt[0] = wt;
    v.wt[3] = 1.0f;
    return v;
}

/* Draws `n` vertices (triangle list) into a fresh zeroed W x H R32_FLOAT
 * target with additive blending; returns the image (caller frees). */
static float *draw_sum_with(const ru_pipe *pipe, int W, int H, const vert *v, uint32_t n,
                            kiln_rasterizer_state rs)
{
    ru_tex t = ru_rt(dev, (uint32_t)W, (uint32_t)H, KILN_FORMAT_R32_FLOAT);
    const float zero[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, zero), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &t.rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, BADD, NULL), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_set_viewport(ctx, 0, 0, (float)W, (float)H, 0, 1);
    ru_bind_pipe(ctx, pipe);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &CB1), KILN_OK);
    if (n)
        ru_draw(dev, ctx, v, n, sizeof(vert), KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &t);
    ru_free_tex(dev, &t);
    return img;
}

static float *draw_sum(int W, int H, const vert *v, uint32_t n, kiln_rasterizer_state rs)
{
    return draw_sum_with(&P1, W, H, v, n, rs);
}

/* Compares two W x H images exactly; reports the first few differences. */
static int compare(const char *what, const float *got, const float *want, int W, int H)
{
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            size_t i = (size_t)y * W + x;
            if (got[i] != want[i]) {
                if (bad < 8)
                    fprintf(stderr, "    %s: pixel (%d, %d) is %g, expected %g\n", what, x, y,
                            got[i], want[i]);
                bad++;
            }
        }
    if (bad)
        fprintf(stderr, "    %s: %d pixels differ\n", what, bad);
    th_check(bad == 0, what, __FILE__, __LINE__);
    return bad == 0;
}

/* Appends triangle (a, b, c) given in pixels with weight w. */
static uint32_t add_tri(vert *v, uint32_t n, int W, int H, const double *a, const double *b,
                        const double *c, float w)
{
    v[n++] = mkv(W, H, a[0], a[1], 0.5f, w);
    v[n++] = mkv(W, H, b[0], b[1], 0.5f, w);
    v[n++] = mkv(W, H, c[0], c[1], 0.5f, w);
    return n;
}

/* ---- D3D10 documentation cases ----
 *
 * The rasterization-rules pages illustrate the top-left rule with pixel
 * centers at integer coordinates; D3D10 puts them at +0.5, so each case is
 * shifted by (0.5, 0.5) here. */

static void test_doc_cases(void)
{
    enum { W = 8, H = 8 };
    vert v[24];
    uint32_t n;
    /* A rectangle from (0, 0) to (5, 5) fills 25 pixels. */
    {
        double a[2] = {0.5, 0.5}, b[2] = {5.5, 0.5}, c[2] = {5.5, 5.5}, d[2] = {0.5, 5.5};
        n = add_tri(v, 0, W, H, a, b, c, 1);
        n = add_tri(v, n, W, H, a, c, d, 1);
        float *img = draw_sum(W, H, v, n, rs_none);
        float want[W * H];
        int count = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                want[y * W + x] = x < 5 && y < 5 ? 1.0f : 0.0f;
                count += img[y * W + x] != 0.0f;
            }
        compare("doc: 5x5 rectangle fills 25 pixels", img, want, W, H);
        CHECK_EQ_INT(count, 25);
        free(img);
    }
    /* Triangles (0,0),(5,0),(5,5) and (0,5),(0,0),(5,5): the first gets 15
     * pixels, the second 10 (the shared edge is the first one's left edge). */
    {
        double a[2] = {0.5, 0.5}, b[2] = {5.5, 0.5}, c[2] = {5.5, 5.5}, d[2] = {0.5, 5.5};
        n = add_tri(v, 0, W, H, a, b, c, 1);
        n = add_tri(v, n, W, H, d, a, c, 2);
        float *img = draw_sum(W, H, v, n, rs_none);
        float want[W * H];
        int n1 = 0, n2 = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                want[y * W + x] = x < 5 && y < 5 ? (y <= x ? 1.0f : 2.0f) : 0.0f;
                n1 += img[y * W + x] == 1.0f;
                n2 += img[y * W + x] == 2.0f;
            }
        compare("doc: two triangles get 15 and 10 pixels", img, want, W, H);
        CHECK_EQ_INT(n1, 15);
        CHECK_EQ_INT(n2, 10);
        free(img);
    }
    /* A rectangle tessellated into four triangles around its center: from
     * (0.5, 0.5) to (2.5, 4.5) every covered center is strictly inside one
     * triangle; moved to (1, 1)..(3, 5) the top-left rule decides, and both
     * cover the same 8 pixels. Weights: top 1, right 2, bottom 4, left 8. */
    static const char *const labels[2] = {"TT"
                                          "LR"
                                          "LR"
                                          "BB",
                                          "TT"
                                          "LT"
                                          "LR"
                                          "LB"};
    static const double origin[2] = {1.0, 1.5}; /* shifted by +0.5 */
    for (int k = 0; k < 2; k++) {
        double o = origin[k];
        double tl[2] = {o, o}, tr[2] = {o + 2, o}, br[2] = {o + 2, o + 4}, bl[2] = {o, o + 4},
               ce[2] = {o + 1, o + 2};
        n = add_tri(v, 0, W, H, tl, tr, ce, 1);
        n = add_tri(v, n, W, H, tr, br, ce, 2);
        n = add_tri(v, n, W, H, br, bl, ce, 4);
        n = add_tri(v, n, W, H, bl, tl, ce, 8);
        float *img = draw_sum(W, H, v, n, rs_none);
        float want[W * H];
        memset(want, 0, sizeof want);
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 2; c++) {
                char l = labels[k][r * 2 + c];
                want[(1 + r) * W + 1 + c] = l == 'T'   ? 1.0f
                                            : l == 'R' ? 2.0f
                                            : l == 'B' ? 4.0f
                                                       : 8.0f;
            }
        compare(k == 0 ? "doc: quad of 4 triangles, centers strictly inside"
                       : "doc: quad of 4 triangles, top-left rule",
                img, want, W, H);
        free(img);
    }
    /* Top edge in, bottom edge out; left edge in, right edge out: two
     * right triangles with legs through pixel centers. */
    {
        double a[2] = {1.5, 1.5}, b[2] = {6.5, 1.5}, c[2] = {1.5, 6.5}; /* top + left legs */
        n = add_tri(v, 0, W, H, a, b, c, 1);
        float *img = draw_sum(W, H, v, n, rs_none);
        float want[W * H];
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) /* x + y < 5 strictly: the hypotenuse is a right edge */
                want[y * W + x] = x >= 1 && y >= 1 && (x - 1) + (y - 1) < 5 ? 1.0f : 0.0f;
        compare("top and left legs are in, the hypotenuse (right edge) is out", img, want, W, H);
        free(img);
        double d[2] = {6.5, 1.5}, e[2] = {6.5, 6.5}, f[2] = {1.5, 6.5}; /* right + bottom legs */
        n = add_tri(v, 0, W, H, d, e, f, 1);
        img = draw_sum(W, H, v, n, rs_none);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) /* hypotenuse is a left edge: on it counts */
                want[y * W + x] = x <= 5 && y <= 5 && x + y >= 7 ? 1.0f : 0.0f;
        compare("right and bottom legs are out, the hypotenuse (left edge) is in", img, want, W, H);
        free(img);
    }
}

/* ---- a mesh sharing edges, exactly once ---- */

static void test_grid_mesh_odd_target(void)
{
    enum { W = 1281, H = 721, NX = 40, NY = 24 };
    /* The outer boundary in 16.8: left and top on pixel centers (in),
     * right on a pixel center (out), bottom between centers. */
    const int64_t L = 3 * 256 + 128, R = 1277 * 256 + 128, T = 2 * 256 + 128, B = 718 * 256 + 100;
    static fxv g[NY + 1][NX + 1];
    th_rng rng = {0x5eed1234ull};
    for (int j = 0; j <= NY; j++)
        for (int i = 0; i <= NX; i++) {
            int64_t x = L + (R - L) * i / NX, y = T + (B - T) * j / NY;
            int64_t cw = (R - L) / NX, ch = (B - T) / NY;
            bool ix = i > 0 && i<NX, iy = j> 0 && j < NY;
            if (ix) {
                x += (int64_t)th_below(&rng, (uint32_t)(cw * 2 / 5)) - cw / 5;
                if (th_below(&rng, 3) == 0)
                    x = (x / 256) * 256 + 128; /* on a pixel center */
            }
            if (iy) {
                y += (int64_t)th_below(&rng, (uint32_t)(ch * 2 / 5)) - ch / 5;
                if (th_below(&rng, 3) == 0)
                    y = (y / 256) * 256 + 128;
            }
            g[j][i] = (fxv){x, y};
        }
    uint32_t ntri = NX * NY * 2;
    vert *v = malloc(sizeof(vert) * ntri * 3);
    fxv(*tris)[3] = malloc(sizeof(fxv[3]) * ntri);
    uint32_t n = 0, t = 0;
    int folded = 0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            fxv a = g[j][i], b = g[j][i + 1], c = g[j + 1][i + 1], d = g[j + 1][i];
            fxv q[2][3];
            if ((i + j) & 1) {
                q[0][0] = a, q[0][1] = b, q[0][2] = c;
                q[1][0] = a, q[1][1] = c, q[1][2] = d;
            } else {
                q[0][0] = a, q[0][1] = b, q[0][2] = d;
                q[1][0] = b, q[1][1] = c, q[1][2] = d;
            }
            for (int k = 0; k < 2; k++) {
                folded += cross3(q[k][0], q[k][1], q[k][2].x, q[k][2].y) <= 0;
                for (int m = 0; m < 3; m++) {
                    tris[t][m] = q[k][m];
                    v[n++] = mkv(W, H, jit(q[k][m].x, &rng), jit(q[k][m].y, &rng), 0.5f, 1.0f);
                }
                t++;
            }
        }
    CHECK_EQ_INT(folded, 0); /* the jitter keeps every triangle clockwise */
    float *want = calloc((size_t)W * H, sizeof(float));
    float *ref = calloc((size_t)W * H, sizeof(float));
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int64_t cx = (int64_t)x * 256 + 128, cy = (int64_t)y * 256 + 128;
            want[(size_t)y * W + x] = cx >= L && cx < R && cy >= T && cy < B ? 1.0f : 0.0f;
        }
    for (uint32_t k = 0; k < t; k++)
        ref_add(ref, W, H, tris[k], 1.0f);
    compare("the reference covers the mesh exactly once (self-check)", ref, want, W, H);
    /* Both windings, each in its own pass. */
    float *img = draw_sum(W, H, v, n, rs_none);
    compare("grid mesh on 1281x721: every pixel inside exactly once", img, want, W, H);
    free(img);
    for (uint32_t k = 0; k < n; k += 3) {
        vert tmp = v[k + 1];
        v[k + 1] = v[k + 2];
        v[k + 2] = tmp;
    }
    img = draw_sum(W, H, v, n, rs_none);
    compare("grid mesh, counter-clockwise: every pixel inside exactly once", img, want, W, H);
    free(img);
    /* The same mesh with shared vertices, 32-bit indices: one draw whose
     * primitives span several geometry jobs that shade vertices shared
     * across them. */
    {
        vert *gv = malloc(sizeof(vert) * (NX + 1) * (NY + 1));
        uint32_t *idx = malloc(sizeof(uint32_t) * ntri * 3), ni = 0;
        for (int j = 0; j <= NY; j++)
            for (int i = 0; i <= NX; i++)
                gv[j * (NX + 1) + i] =
                    mkv(W, H, jit(g[j][i].x, &rng), jit(g[j][i].y, &rng), 0.5f, 1.0f);
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                uint32_t a = (uint32_t)(j * (NX + 1) + i), b = a + 1, c = a + NX + 2,
                         d = a + NX + 1;
                uint32_t q[6] = {a, b, c, a, c, d};
                if (!((i + j) & 1)) {
                    uint32_t r[6] = {a, b, d, b, c, d};
                    memcpy(q, r, sizeof q);
                }
                memcpy(idx + ni, q, sizeof q);
                ni += 6;
            }
        ru_tex t2 = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
        const float zero[4] = {0, 0, 0, 0};
        CHECK_RESULT(kiln_clear_rtv(ctx, t2.rtv, zero), KILN_OK);
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &t2.rtv, (kiln_dsv){0}), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, BADD, NULL), KILN_OK);
        CHECK_RESULT(kiln_rs_set_state(ctx, rs_none), KILN_OK);
        ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
        ru_bind_pipe(ctx, &P1);
        kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, gv,
                                   (uint32_t)(sizeof(vert) * (NX + 1) * (NY + 1)));
        kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, ni * 4);
        uint32_t stride = sizeof(vert), off = 0;
        CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT32, 0), KILN_OK);
        CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
        CHECK_RESULT(kiln_draw_indexed(ctx, ni, 0, 0), KILN_OK);
        img = ru_read_f32(dev, &t2);
        compare("indexed grid mesh: every pixel inside exactly once", img, want, W, H);
        free(img);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT16, 0),
                     KILN_OK);
        kiln_destroy_buffer(dev, vb);
        kiln_destroy_buffer(dev, ib);
        ru_free_tex(dev, &t2);
        free(gv);
        free(idx);
    }
    free(want);
    free(ref);
    free(v);
    free(tris);
}

static void test_fan(void)
{
    enum { W = 1281, H = 721, N = 61 };
    th_rng rng = {0xfa11fa11ull};
    const int64_t cx = 640 * 256 + 128, cy = 360 * 256 + 128;
    fxv rim[N];
    for (int k = 0; k < N; k++) {
        double a = 2.0 * 3.14159265358979 * k / N;
        double r = 300.0 + (double)th_below(&rng, 256) / 64.0;
        int64_t dx = (int64_t)llround(r * cos(a) * 256), dy = (int64_t)llround(r * sin(a) * 256);
        if (k % 3 == 0) { /* whole pixels from the center: edges through pixel centers */
            dx = (dx / 256) * 256;
            dy = (dy / 256) * 256;
        }
        rim[k] = (fxv){cx + dx, cy + dy};
    }
    vert v[N * 3];
    fxv tris[N][3];
    uint32_t n = 0;
    for (int k = 0; k < N; k++) {
        fxv t[3] = {{cx, cy}, rim[k], rim[(k + 1) % N]};
        for (int m = 0; m < 3; m++) {
            tris[k][m] = t[m];
            v[n++] = mkv(W, H, jit(t[m].x, &rng), jit(t[m].y, &rng), 0.5f, 1.0f);
        }
    }
    float *ref = calloc((size_t)W * H, sizeof(float));
    for (int k = 0; k < N; k++)
        ref_add(ref, W, H, tris[k], 1.0f);
    int over = 0, hole = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float r = ref[(size_t)y * W + x];
            double ddx = x + 0.5 - 640.5, ddy = y + 0.5 - 360.5;
            over += r > 1.0f;
            hole += ddx * ddx + ddy * ddy < 290.0 * 290.0 && r != 1.0f;
        }
    CHECK_EQ_INT(over, 0); /* reference self-checks */
    CHECK_EQ_INT(hole, 0);
    float *img = draw_sum(W, H, v, n, rs_none);
    compare("triangle fan around a pixel center: covered exactly once", img, ref, W, H);
    free(img);
    free(ref);
}

/* ---- slivers ---- */

static void test_slivers(void)
{
    enum { W = 64, H = 64 };
    const double e = 1.0 / 256;
    vert v[32];
    uint32_t n;
    float want[W * H];
    /* Two slivers sharing the vertical line x = 10.5 (column 10's centers):
     * the left one (weight 1) has it as right edge, the right one
     * (weight 2) as left edge. */
    {
        double a[2] = {10.5 - e, 2.25}, b[2] = {10.5, 2.25}, c[2] = {10.5, 40.25};
        double d[2] = {10.5, 2.25}, f[2] = {10.5 + e, 40.25}, g2[2] = {10.5, 40.25};
        n = add_tri(v, 0, W, H, a, b, c, 1);
        n = add_tri(v, n, W, H, d, f, g2, 2);
        float *img = draw_sum(W, H, v, n, rs_none);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                want[y * W + x] = x == 10 && y >= 2 && y <= 39 ? 2.0f : 0.0f;
        compare("vertical slivers on a center column: only the left edge covers", img, want, W, H);
        free(img);
    }
    /* Two slivers sharing y = 20.5 (row 20's centers): below it (top edge,
     * weight 1) covers, above it (bottom edge, weight 2) does not. */
    {
        double a[2] = {2.25, 20.5}, b[2] = {50.25, 20.5}, c[2] = {2.25, 20.5 + e};
        double d[2] = {2.25, 20.5 - e}, f[2] = {50.25, 20.5}, g2[2] = {2.25, 20.5};
        n = add_tri(v, 0, W, H, a, b, c, 1);
        n = add_tri(v, n, W, H, d, f, g2, 2);
        float *img = draw_sum(W, H, v, n, rs_none);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                want[y * W + x] = y == 20 && x >= 2 && x <= 49 ? 1.0f : 0.0f;
        compare("horizontal slivers on a center row: only the top edge covers", img, want, W, H);
        free(img);
    }
    /* A sliver between centers covers nothing; a diagonal pair through the
     * centers (k + 0.5, k + 0.5): the one on the right (left edge) covers
     * k = 0..59 (the end vertex lies on its right edge), the other none. */
    {
        double a[2] = {30.6, 1.0}, b[2] = {30.9, 1.0}, c[2] = {30.75, 60.0};
        n = add_tri(v, 0, W, H, a, b, c, 64);
        double p[2] = {0.5, 0.5}, q[2] = {60.5, 60.5}, r1[2] = {0.5 + e, 0.5},
               r2[2] = {0.5, 0.5 + e};
        n = add_tri(v, n, W, H, p, r1, q, 1);
        n = add_tri(v, n, W, H, p, q, r2, 2);
        float *img = draw_sum(W, H, v, n, rs_none);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                want[y * W + x] = x == y && x < 60 ? 1.0f : 0.0f;
        compare("diagonal slivers through centers; a sliver between centers draws nothing", img,
                want, W, H);
        free(img);
    }
}

/* ---- random triangles against the reference ---- */

static int64_t rnd_coord(th_rng *r, int size, int kind)
{
    switch (kind) {
    case 0:
        return (int64_t)th_below(r, (uint32_t)(size + 32) * 256) - 16 * 256; /* anywhere */
    case 1:
        return (int64_t)th_below(r, (uint32_t)size + 2) * 256 - 256 + 128; /* on a center */
    default:
        return (int64_t)th_below(r, (uint32_t)size + 2) * 256 - 256; /* on a corner */
    }
}

/* Random triangles against the reference: small ones (a window of 2x2
 * blocks or less, the rasterizer's 32-bit path), mid-size and target-wide
 * ones, big ones reaching 2,048 pixels out (edge values past int32 a few
 * pixels from an edge: the 64-bit path), with horizontal and vertical
 * edges. Every third batch under a scissor rect at odd bounds, half of
 * those a few pixels wide: rects that cut blocks on every side. */
static void test_random_vs_reference(void)
{
    enum { W = 131, H = 93, BATCH = 24, BATCHES = 90 };
    th_rng rng = {0x1234abcdull};
    float *ref = malloc(sizeof(float) * W * H);
    kiln_rasterizer_state rs_sc =
        ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE, .scissor_enable = 1});
    int total_bad = 0;
    for (int b = 0; b < BATCHES; b++) {
        vert v[BATCH * 3];
        fxv tris[BATCH][3];
        memset(ref, 0, sizeof(float) * W * H);
        for (int t = 0; t < BATCH; t++) {
            int shape = (int)th_below(&rng, 6);
            int kind = (int)th_below(&rng, 3);
            fxv p[3];
            p[0] = (fxv){rnd_coord(&rng, W, kind), rnd_coord(&rng, H, kind)};
            for (int k = 1; k < 3; k++) {
                if (shape == 5) { /* big: up to 2,048 pixels from vertex 0 */
                    const int64_t s = 2048 * 256;
                    p[k].x = p[0].x + ((int64_t)th_below(&rng, (uint32_t)(2 * s)) - s) / 256 * 256;
                    p[k].y = p[0].y + ((int64_t)th_below(&rng, (uint32_t)(2 * s)) - s) / 256 * 256;
                    if (!kind) /* anywhere, not only on the class of vertex 0 */
                        p[k].x += (int64_t)th_below(&rng, 256);
                } else if (shape == 0 || shape == 1) { /* small, around vertex 0 */
                    int64_t s = shape == 0 ? 4 * 256 : 24 * 256;
                    p[k].x = p[0].x + (int64_t)th_below(&rng, (uint32_t)(2 * s)) - s;
                    p[k].y = p[0].y + (int64_t)th_below(&rng, (uint32_t)(2 * s)) - s;
                    if (kind) { /* keep the class (center or corner) */
                        p[k].x = p[0].x + (p[k].x - p[0].x) / 256 * 256;
                        p[k].y = p[0].y + (p[k].y - p[0].y) / 256 * 256;
                    }
                } else {
                    p[k] = (fxv){rnd_coord(&rng, W, kind), rnd_coord(&rng, H, kind)};
                }
            }
            if (shape == 3) /* a horizontal edge */
                p[1].y = p[0].y;
            if (shape == 4) /* a vertical edge */
                p[2].x = p[1].x;
            float w = (float)(1u << t);
            for (int k = 0; k < 3; k++) {
                tris[t][k] = p[k];
                v[t * 3 + k] = mkv(W, H, jit(p[k].x, &rng), jit(p[k].y, &rng), 0.5f, w);
            }
            ref_add(ref, W, H, tris[t], w);
        }
        bool scissor = b % 3 == 2;
        if (scissor) {
            int sw = b % 2 ? 1 + (int)th_below(&rng, 12) : 1 + (int)th_below(&rng, W - 1);
            int sh = b % 2 ? 1 + (int)th_below(&rng, 12) : 1 + (int)th_below(&rng, H - 1);
            kiln_rect sc;
            sc.left = (int32_t)th_below(&rng, (uint32_t)(W - sw + 1));
            sc.top = (int32_t)th_below(&rng, (uint32_t)(H - sh + 1));
            sc.right = sc.left + sw;
            sc.bottom = sc.top + sh;
            CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++)
                    if (x < sc.left || x >= sc.right || y < sc.top || y >= sc.bottom)
                        ref[(size_t)y * W + x] = 0.0f;
        }
        float *img = draw_sum(W, H, v, BATCH * 3, scissor ? rs_sc : rs_none);
        int bad = 0;
        for (int i = 0; i < W * H && bad < 4; i++) {
            if (img[i] != ref[i]) {
                uint32_t diff = (uint32_t)img[i] ^ (uint32_t)ref[i];
                int t = 0;
                while (!(diff >> t & 1))
                    t++;
                fprintf(stderr,
                        "    batch %d pixel (%d, %d): got %.0f, want %.0f; triangle %d "
                        "(%lld,%lld) (%lld,%lld) (%lld,%lld) [1/256 px]\n",
                        b, i % W, i / W, img[i], ref[i], t, (long long)tris[t][0].x,
                        (long long)tris[t][0].y, (long long)tris[t][1].x, (long long)tris[t][1].y,
                        (long long)tris[t][2].x, (long long)tris[t][2].y);
                bad++;
            }
        }
        total_bad += bad;
        free(img);
    }
    CHECK_EQ_INT(total_bad, 0);
    kiln_destroy_rasterizer_state(dev, rs_sc);
    free(ref);
}

/* Small rects whose edge values cross int32's range: a right triangle of
 * 24,200 pixels (twice its area is 3.2e9 in 16.8 units squared, the
 * hypotenuse's value at the right angle), cut by scissor rects of one or
 * two blocks' width swept across the line where that value passes 2^31.
 * The legs' values there fit, so the rasterizer's 32-bit window path
 * decides which rects it takes by its own range check, and every rect
 * must cover exactly the reference's pixels (a value past int32 computed
 * in 32-bit lanes would wrap and drop inside pixels). */
static void test_window_int32_edge(void)
{
    enum { W = 256, H = 256 };
    th_rng rng = {0x5eed0123ull};
    const fxv tri[3] = {{10 * 256, 230 * 256}, {230 * 256, 230 * 256}, {10 * 256, 10 * 256}};
    vert v[3];
    for (int k = 0; k < 3; k++)
        v[k] = mkv(W, H, jit(tri[k].x, &rng), jit(tri[k].y, &rng), 0.5f, 1.0f);
    float *ref = malloc(sizeof(float) * W * H);
    kiln_rasterizer_state rs_sc =
        ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE, .scissor_enable = 1});
    int bad = 0, rects = 0, near = 0;
    for (int top = 168; top <= 186; top++)
        for (int h = 1; h <= 8 - (top & 3); h++)
            for (int w = 4; w <= 8; w += 4) {
                kiln_rect sc = {32, top, 32 + w, top + h};
                memset(ref, 0, sizeof(float) * W * H);
                ref_add(ref, W, H, tri, 1.0f);
                for (int y = 0; y < H; y++)
                    for (int x = 0; x < W; x++)
                        if (x < sc.left || x >= sc.right || y < sc.top || y >= sc.bottom)
                            ref[(size_t)y * W + x] = 0.0f;
                /* the hypotenuse's value at the rect's lowest left pixel
                 * (its largest there) */
                int64_t e =
                    cross3(tri[1], tri[2], 32 * 256 + 128, (int64_t)(top + h - 1) * 256 + 128);
                near += (e < 0 ? -e : e) > INT32_MAX;
                CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
                float *img = draw_sum(W, H, v, 3, rs_sc);
                for (int i = 0; i < W * H; i++)
                    if (img[i] != ref[i] && bad++ < 4)
                        fprintf(stderr,
                                "    rect (%d, %d) %dx%d: pixel (%d, %d) is %g, expected %g\n",
                                sc.left, sc.top, w, h, i % W, i / W, img[i], ref[i]);
                free(img);
                rects++;
            }
    CHECK_EQ_INT(bad, 0);
    /* the sweep crosses the line: some rects reach past int32, some not */
    CHECK(near > 0 && near < rects);
    kiln_destroy_rasterizer_state(dev, rs_sc);
    free(ref);
}

/* ---- depth: the plane through the snapped vertices ---- */

static void test_depth_plane(void)
{
    enum { W = 97, H = 75, NT = 300 };
    th_rng rng = {0xdeadbeefull};
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    kiln_depth_stencil_state always =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS});
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, ds.dsv), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, always, 0), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs_none), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    ru_bind_pipe(ctx, &PZ);
    static float verts[NT * 3][4];
    static fxv tris[NT][3];
    static float zs[NT][3];
    for (int t = 0; t < NT; t++)
        for (int k = 0; k < 3; k++) {
            fxv p = {rnd_coord(&rng, W, 0), rnd_coord(&rng, H, 0)};
            if (t % 3 && k) /* smaller ones too */
                p = (fxv){tris[t][0].x + (int64_t)th_below(&rng, 20 * 256) - 10 * 256,
                          tris[t][0].y + (int64_t)th_below(&rng, 20 * 256) - 10 * 256};
            tris[t][k] = p;
            zs[t][k] = 0.05f + 0.9f * (float)th_below(&rng, 1u << 20) / (float)(1u << 20);
            ru_clip(W, H, jit(p.x, &rng), jit(p.y, &rng), verts[t * 3 + k]);
            verts[t * 3 + k][2] = zs[t][k];
            verts[t * 3 + k][3] = 1.0f;
        }
    ru_draw(dev, ctx, verts, NT * 3, 16, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &ds);
    /* Tolerance: kiln evaluates z0 + dzdx * dx + dzdy * dy in float with
     * float plane coefficients; we allow 4 float ulps of the largest term
     * of that sum (the rounding of each term and of both additions), plus
     * one ulp of 1. */
    int bad = 0, covered = 0;
    double worst = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int last = -1;
            for (int t = 0; t < NT; t++)
                if (ref_covers(tris[t], x, y))
                    last = t;
            float got = img[y * W + x];
            if (last < 0) {
                if (got != 1.0f && bad++ < 6)
                    fprintf(stderr,
                            "    depth: pixel (%d, %d) written (%g) but covered by no triangle\n",
                            x, y, got);
                continue;
            }
            covered++;
            const fxv *p = tris[last];
            const float *z = zs[last];
            double x0 = p[0].x / 256.0, y0 = p[0].y / 256.0;
            double x1 = p[1].x / 256.0 - x0, y1 = p[1].y / 256.0 - y0, x2 = p[2].x / 256.0 - x0,
                   y2 = p[2].y / 256.0 - y0;
            double det = x1 * y2 - x2 * y1;
            double d1 = (double)z[1] - z[0], d2 = (double)z[2] - z[0];
            double gx = (d1 * y2 - d2 * y1) / det, gy = (d2 * x1 - d1 * x2) / det;
            double fx = x + 0.5 - x0, fy = y + 0.5 - y0;
            double want = z[0] + gx * fx + gy * fy;
            double mag = fabs((double)z[0]);
            mag = fabs(gx * fx) > mag ? fabs(gx * fx) : mag;
            mag = fabs(gy * fy) > mag ? fabs(gy * fy) : mag;
            double tol = 4.0 * mag * FLT_EPSILON + FLT_EPSILON;
            double err = fabs(got - want);
            worst = err / tol > worst ? err / tol : worst;
            if (!(err <= tol) && bad++ < 6)
                fprintf(stderr,
                        "    depth: pixel (%d, %d) = %.9g, plane of triangle %d gives %.9g "
                        "(tolerance %.3g)\n",
                        x, y, got, last, want, tol);
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(covered > W * H / 2);
    free(img);
    kiln_destroy_depth_stencil_state(dev, always);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    ru_free_tex(dev, &ds);
}

/* ---- perspective: varyings are perspective-correct, depth is linear in
 * screen space ---- */

static void test_perspective(void)
{
    enum { W = 64, H = 48 };
    /* screen positions (multiples of 1/256), w, z/w and a varying u */
    static const double sx[3] = {3.25, 60.5, 20.75}, sy[3] = {2.5, 10.0, 45.125};
    static const double w[3] = {1.0, 4.0, 0.5}, zn[3] = {0.2, 0.9, 0.5}, u[3] = {0.0, 1.0, 0.25};
    vert v[3];
    for (int k = 0; k < 3; k++) {
        memset(&v[k], 0, sizeof v[k]);
        v[k].p[0] = (float)((2.0 * sx[k] / W - 1.0) * w[k]);
        v[k].p[1] = (float)((1.0 - 2.0 * sy[k] / H) * w[k]);
        v[k].p[2] = (float)(zn[k] * w[k]);
        v[k].p[3] = (float)w[k];
        v[k].wt[0] = (float)u[k];
        v[k].wt[1] = 1.0f;
    }
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    const float zero[4] = {0, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, zero), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
    kiln_depth_stencil_state always =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, always, 0), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs_none), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    ru_bind_pipe(ctx, &P1);
    ru_draw(dev, ctx, v, 3, sizeof(vert), KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt), *dimg = ru_read_f32(dev, &ds);
    fxv t[3];
    for (int k = 0; k < 3; k++)
        t[k] = (fxv){(int64_t)llround(sx[k] * 256), (int64_t)llround(sy[k] * 256)};
    int bad = 0, covered = 0;
    double area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            if (!ref_covers(t, x, y)) {
                bad += img[4 * (y * W + x) + 1] != 0.0f;
                continue;
            }
            covered++;
            double px = x + 0.5, py = y + 0.5, l[3];
            for (int k = 0; k < 3; k++) { /* screen-space barycentrics */
                int a = (k + 1) % 3, b = (k + 2) % 3;
                l[k] = ((sx[b] - sx[a]) * (py - sy[a]) - (sy[b] - sy[a]) * (px - sx[a])) / area;
            }
            double num = 0, den = 0, z = 0;
            for (int k = 0; k < 3; k++) {
                num += l[k] * u[k] / w[k];
                den += l[k] / w[k];
                z += l[k] * zn[k];
            }
            double wu = num / den;
            float gu = img[4 * (y * W + x)], gz = dimg[y * W + x];
            if ((fabs(gu - wu) > 2e-5 || fabs(gz - z) > 2e-6) && bad++ < 5)
                fprintf(
                    stderr,
                    "    perspective (%d, %d): varying %.7f (want %.7f), depth %.7f (want %.7f)\n",
                    x, y, gu, wu, gz, z);
        }
    th_check(bad == 0, "perspective-correct varyings, screen-linear depth", __FILE__, __LINE__);
    CHECK(covered > 500);
    free(img);
    free(dimg);
    kiln_destroy_depth_stencil_state(dev, always);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &ds);
}

/* ---- clipping: the homogeneous reference ---- */

/* 1 if the screen point (sx, sy) is covered by the clip-space triangle
 * c[3][4] in a W x H viewport. */
static int hom_inside(const double c[3][4], double W, double H, double sx, double sy,
                      int depth_clip)
{
    double nx = 2.0 * sx / W - 1.0, ny = 1.0 - 2.0 * sy / H;
    double a[3], b[3];
    for (int i = 0; i < 3; i++) {
        a[i] = c[i][0] - nx * c[i][3];
        b[i] = c[i][1] - ny * c[i][3];
    }
    /* Solve a.l = 0, b.l = 0, l0 + l1 + l2 = 1. */
    double det = a[0] * (b[1] - b[2]) - a[1] * (b[0] - b[2]) + a[2] * (b[0] - b[1]);
    if (det == 0.0)
        return 0;
    double l[3] = {(a[1] * b[2] - a[2] * b[1]) / det, (a[2] * b[0] - a[0] * b[2]) / det,
                   (a[0] * b[1] - a[1] * b[0]) / det};
    if (l[0] < 0 || l[1] < 0 || l[2] < 0)
        return 0;
    double w = l[0] * c[0][3] + l[1] * c[1][3] + l[2] * c[2][3];
    double z = l[0] * c[0][2] + l[1] * c[1][2] + l[2] * c[2][2];
    if (!(w > 0))
        return 0;
    if (depth_clip && (z < 0 || z > w))
        return 0;
    return 1;
}

/* -1 when the classification changes within 1/50 pixel of the center. */
static int hom_robust(const double c[3][4], double W, double H, int x, int y, int depth_clip)
{
    const double e = 0.02;
    double cx = x + 0.5, cy = y + 0.5;
    int r = hom_inside(c, W, H, cx, cy, depth_clip);
    static const int off[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
    for (int k = 0; k < 4; k++)
        if (hom_inside(c, W, H, cx + off[k][0] * e, cy + off[k][1] * e, depth_clip) != r)
            return -1;
    return r;
}

typedef struct clip_case {
    const char *name;
    int ntri;
    double v[4][3][4];
    int depth_clip;
    int all_once; /* every pixel exactly once, no skipping */
} clip_case;

static void run_clip_case(const clip_case *cc, int W, int H)
{
    vert v[12];
    for (int t = 0; t < cc->ntri; t++)
        for (int k = 0; k < 3; k++) {
            vert *o = &v[t * 3 + k];
            memset(o, 0, sizeof *o);
            for (int c = 0; c < 4; c++)
                o->p[c] = (float)cc->v[t][k][c];
            o->wt[0] = 1.0f;
        }
    kiln_rasterizer_state rs = ru_rs(
        dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE, .depth_clip_disable = !cc->depth_clip});
    float *img = draw_sum_with(&PC, W, H, v, (uint32_t)cc->ntri * 3, rs);
    kiln_destroy_rasterizer_state(dev, rs);
    int bad = 0, skipped = 0, in = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float got = img[y * W + x];
            float want = 0;
            int amb = 0;
            if (cc->all_once) {
                want = 1;
            } else {
                for (int t = 0; t < cc->ntri; t++) {
                    double c[3][4];
                    for (int k = 0; k < 3; k++)
                        for (int m = 0; m < 4; m++)
                            c[k][m] = (float)cc->v[t][k][m]; /* what the vertex buffer holds */
                    int r = hom_robust(c, W, H, x, y, cc->depth_clip);
                    if (r < 0)
                        amb = 1;
                    else
                        want += (float)r;
                }
            }
            if (amb) {
                skipped++;
                continue;
            }
            in += want != 0;
            if (got != want && bad++ < 6)
                fprintf(stderr, "    %s: pixel (%d, %d) = %g, expected %g\n", cc->name, x, y, got,
                        want);
        }
    th_check(bad == 0, cc->name, __FILE__, __LINE__);
    if (bad)
        fprintf(stderr, "    %s: %d pixels wrong\n", cc->name, bad);
    /* The case must mean something: pixels both in and out (unless all in),
     * few skipped. */
    CHECK(skipped <= W + H);
    CHECK(in > 0 && (cc->all_once || in < W * H - skipped));
    free(img);
}

static void test_clipping(void)
{
    enum { W = 64, H = 48 };
    static const clip_case cases[] = {
        {"near and far planes cross the triangle (z from -0.8 to 1.3)",
         1,
         {{{-3, -1.5, -0.8, 1}, {3, -1.5, 1.3, 1}, {0, 3, 0.2, 1}}},
         1,
         0},
        {"depth clip disabled: the whole triangle",
         1,
         {{{-1.5, -0.9, -0.8, 1}, {0.8, -1.5, 1.3, 1}, {0.5, 0.7, 0.2, 1}}},
         0,
         0},
        {"one vertex behind the eye (w < 0)",
         1,
         {{{-0.6, -0.8, 0.5, 1}, {0.7, -0.5, 0.5, 1}, {0.3, 0.9, -0.2, -0.5}}},
         1,
         0},
        {"one vertex with w = 1e-6 (projects far outside)",
         1,
         {{{-0.6, -0.8, 0.5, 1}, {0.7, -0.5, 0.5, 1}, {0.2, 0.5, 0.5e-6, 1e-6}}},
         1,
         0},
        {"one vertex with w = -1e-6",
         1,
         {{{-0.6, -0.8, 0.5, 1}, {0.7, -0.5, 0.5, 1}, {0.2, 0.5, -0.5e-6, -1e-6}}},
         1,
         0},
        {"one vertex with w = 0",
         1,
         {{{-0.6, -0.8, 0.5, 1}, {0.7, -0.5, 0.5, 1}, {0.2, 0.5, 0.0, 0.0}}},
         1,
         0},
        {"perspective: w from 0.3 to 3, crossing the near plane",
         1,
         {{{-0.5, -0.5, 0.9, 3}, {1.2, -0.2, 0.1, 0.3}, {-0.2, 1.1, -0.4, 1.0}}},
         1,
         0},
        /* Past the guard band on one side only (off screen past 1e7
         * pixels unclipped): clipped against that plane and no other. */
        {"one vertex at x = 1e6 in clip space, y in range",
         1,
         {{{-0.5, -0.6, 0.5, 1}, {-0.3, 0.5, 0.5, 1}, {1e6, 0.3, 0.5, 1}}},
         1,
         0},
        {"one vertex at y = -1e6 in clip space, x in range",
         1,
         {{{-0.6, 0.5, 0.5, 1}, {0.5, 0.3, 0.5, 1}, {0.2, -1e6, 0.5, 1}}},
         1,
         0},
        {"vertices at 1e6 in clip space: the whole target once",
         1,
         {{{-1e6, -1e6, 0.5, 1}, {1e6, -1e6, 0.5, 1}, {0, 1e6, 0.5, 1}}},
         1,
         1},
        {"two huge perspective triangles sharing an edge: the whole target once",
         2,
         {{{-5, -5, 0.5, 2}, {5, -5, 0.5, 1}, {5, 5, 0.5, 0.5}},
          {{-5, -5, 0.5, 2}, {5, 5, 0.5, 0.5}, {-5, 5, 0.5, 1}}},
         1,
         1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        run_clip_case(&cases[i], W, H);

    /* Two triangles far outside the guard band sharing an edge that passes
     * exactly through 32 pixel centers (0.5 + 2t, 16.5 + t) of a 64x64
     * target. The clip-space values are exact in float. Every pixel must
     * be covered exactly once whatever the clipper does to the far ends. */
    {
        static const clip_case shared = {
            "guard-band clipped triangles sharing an edge through pixel centers",
            2,
            {{{-20000.984375, 10000.484375, 0.5, 1},
              {19999.0, 20001.0, 0.5, 1},
              {19999.015625, -9999.515625, 0.5, 1}},
             {{-20000.984375, 10000.484375, 0.5, 1},
              {19999.015625, -9999.515625, 0.5, 1},
              {-20001.0, -19999.0, 0.5, 1}}},
            1,
            1};
        run_clip_case(&shared, 64, 64);
    }

    /* A mesh crossing the near and far planes, edges through pixel
     * centers: the visible part exactly once. */
    {
        enum { GW = 64, GH = 64, N = 8 };
        vert v[N * N * 6];
        uint32_t n = 0;
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                /* corners on pixel centers: -3.5 + 8k */
                double xs[2] = {-3.5 + 8 * i, -3.5 + 8 * (i + 1)},
                       ys[2] = {-3.5 + 8 * j, -3.5 + 8 * (j + 1)};
                int idx[6][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 0}, {1, 1}, {0, 1}};
                for (int k = 0; k < 6; k++) {
                    double px = xs[idx[k][0]], py = ys[idx[k][1]];
                    /* z from -0.6 (left) to 1.7 (right): both planes cross */
                    float z = (float)(-0.6 + 2.3 * px / GW);
                    v[n++] = mkv(GW, GH, px, py, z, 1.0f);
                }
            }
        float *img = draw_sum(GW, GH, v, n, rs_none);
        int bad = 0, in = 0;
        for (int y = 0; y < GH; y++)
            for (int x = 0; x < GW; x++) {
                /* z at the center; the mesh spans [-3.5, 60.5) on both axes */
                double cx = x + 0.5, cy = y + 0.5, z = -0.6 + 2.3 * cx / GW;
                if (fabs(z) < 0.01 || fabs(z - 1) < 0.01)
                    continue;
                float want = cx >= -3.5 && cx < 60.5 && cy >= -3.5 && cy < 60.5 && z > 0 && z < 1
                                 ? 1.0f
                                 : 0.0f;
                in += want != 0;
                if (img[y * GW + x] != want && bad++ < 6)
                    fprintf(stderr, "    near/far mesh: pixel (%d, %d) = %g, expected %g\n", x, y,
                            img[y * GW + x], want);
            }
        CHECK_EQ_INT(bad, 0);
        CHECK(in > 500);
        free(img);
    }
}

/* Zero-area triangles draw nothing: collinear vertices, a repeated vertex,
 * and vertices that only snapping makes collinear. */
static void test_degenerate(void)
{
    enum { W = 40, H = 40 };
    const double q = 1.0 / 1024;
    vert v[12];
    double a[2] = {10.5, 10.5}, b[2] = {20.5, 20.5}, c[2] = {30.5, 30.5};
    double d[2] = {5.25, 7.75}, f[2] = {33.0, 7.0};
    double g1[2] = {2.0, 30.0}, g2[2] = {30.0, 2.0}, g3[2] = {16.0 + q, 16.0};
    uint32_t n = add_tri(v, 0, W, H, a, b, c, 1);
    n = add_tri(v, n, W, H, d, f, d, 1);
    n = add_tri(v, n, W, H, g1, g2, g3, 1);
    n = add_tri(v, n, W, H, a, a, a, 1);
    float *img = draw_sum(W, H, v, n, rs_none);
    float want[W * H];
    memset(want, 0, sizeof want);
    compare("zero-area triangles draw nothing", img, want, W, H);
    free(img);

    /* A clip-space vertex at the origin (0, 0, 0, 0) - what an out-of-range
     * vertex fetch reads (zeros, as D3D10 defines) and what shaders emit to
     * kill a vertex. Every point of such a triangle projects onto the
     * segment between the other two vertices: zero area, nothing drawn
     * (and no arithmetic on infinities). */
    {
        vert z[6];
        memset(z, 0, sizeof z);
        z[0] = mkv(W, H, 5.5, 5.5, 0.5f, 1);
        z[1] = mkv(W, H, 35.5, 8.5, 0.5f, 1);
        z[3] = mkv(W, H, 3.5, 30.5, 0.5f, 1);
        z[5] = mkv(W, H, 30.5, 36.5, 0.5f, 1); /* z[2], z[4]: the origin */
        img = draw_sum_with(&PC, W, H, z, 6, rs_none);
        compare("triangles with a vertex at the clip-space origin draw nothing", img, want, W, H);
        free(img);
        /* a NaN position (bad shader output): the triangle is dropped */
        z[2] = z[1];
        z[2].p[0] = NAN;
        img = draw_sum_with(&PC, W, H, z, 3, rs_none);
        compare("a triangle with a NaN position draws nothing", img, want, W, H);
        free(img);
    }
    /* The same through an indexed draw reading past the vertex buffer. */
    {
        vert z[3] = {mkv(W, H, 5.5, 5.5, 0.5f, 1), mkv(W, H, 35.5, 8.5, 0.5f, 1),
                     mkv(W, H, 3.5, 30.5, 0.5f, 1)};
        const uint16_t idx[6] = {0, 1, 2,
                                 0, 1, 1000}; /* the second triangle reads vertex 1000: zeros */
        ru_tex t = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
        const float zero[4] = {0, 0, 0, 0};
        CHECK_RESULT(kiln_clear_rtv(ctx, t.rtv, zero), KILN_OK);
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &t.rtv, (kiln_dsv){0}), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, BADD, NULL), KILN_OK);
        CHECK_RESULT(kiln_rs_set_state(ctx, rs_none), KILN_OK);
        ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
        ru_bind_pipe(ctx, &PC);
        CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &CB1), KILN_OK);
        kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, z, sizeof z);
        kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
        uint32_t stride = sizeof(vert), off = 0;
        CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT16, 0), KILN_OK);
        CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
        CHECK_RESULT(kiln_draw_indexed(ctx, 6, 0, 0), KILN_OK);
        img = ru_read_f32(dev, &t);
        /* only the first triangle: reference coverage */
        fxv tri[3] = {{5 * 256 + 128, 5 * 256 + 128},
                      {35 * 256 + 128, 8 * 256 + 128},
                      {3 * 256 + 128, 30 * 256 + 128}};
        float ref[W * H];
        memset(ref, 0, sizeof ref);
        ref_add(ref, W, H, tri, 1.0f);
        compare("an out-of-range index reads a zero vertex: its triangle draws nothing", img, ref,
                W, H);
        free(img);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT16, 0),
                     KILN_OK);
        kiln_destroy_buffer(dev, vb);
        kiln_destroy_buffer(dev, ib);
        ru_free_tex(dev, &t);
    }
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 0);
    ctx = kiln_device_immediate_context(dev);
    P1 = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    PC = ru_make_pipe(dev, 1, RU_PS_CB, 1, 0);
    const float one[4] = {1, 0, 0, 0};
    CB1 = ru_cbuffer(dev, one, 4);
    PZ = ru_make_pipe(dev, 0, RU_PS_NONE, 0, 0);
    BADD = ru_bs_add(dev);
    rs_none = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});

    test_doc_cases();
    test_slivers();
    test_grid_mesh_odd_target();
    test_fan();
    test_random_vs_reference();
    test_window_int32_edge();
    test_depth_plane();
    test_perspective();
    test_clipping();
    test_degenerate();

    kiln_destroy_rasterizer_state(dev, rs_none);
    kiln_destroy_blend_state(dev, BADD);
    ru_free_pipe(dev, &P1);
    ru_free_pipe(dev, &PC);
    kiln_destroy_buffer(dev, CB1);
    ru_free_pipe(dev, &PZ);
    kiln_device_destroy(dev);
    return th_exit();
}
