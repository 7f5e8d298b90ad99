/*
 * test_raster_states: every pipeline state has a test with exact expected
 * pixel values at chosen points (kiln.h "Drawing"; D3D10 semantics).
 *
 * Expected values are derived by hand or from the D3D10 formulas written
 * out here (blend factors and ops, UNORM conversion, stencil ops, depth
 * bias, address modes); kiln never produces its own expectations.
 *
 * Geometry is placed in pixel coordinates (ru_clip) with edges on pixel
 * boundaries or centers, so that coverage is unambiguous.
 *
 * UNORM conversion: D3D10 converts float to UNORM by clamping to [0, 1],
 * scaling by 255 and rounding to nearest, with a 0.6 ULP tolerance; the
 * blend checks demand the exact byte except when the scaled value lies
 * within 0.01 of a rounding tie, where either neighbour is accepted.
 */
#include "raster_util.h"

#include <float.h>
#include <stdio.h>

static kiln_device *dev;
static kiln_context *ctx;

/* A vertex: clip position, then two float4 attributes (varyings 0, 1). */
typedef struct sv {
    float p[4], a[4], b[4];
} sv;

static ru_pipe PV1, PV2, PC1, PC4, PZ; /* varying->1 target, 2 targets, cb->1, cb->4, no outputs */
static const float Z4[4] = {0, 0, 0, 0};

static sv mk(int W, int H, double x, double y, float z, const float *a, const float *b)
{
    sv v;
    memset(&v, 0, sizeof v);
    ru_clip(W, H, x, y, v.p);
    v.p[2] = z;
    v.p[3] = 1.0f;
    if (a)
        memcpy(v.a, a, 16);
    if (b)
        memcpy(v.b, b, 16);
    return v;
}

/* Two clockwise triangles covering pixels [x0, x1) x [y0, y1). */
static uint32_t rect(sv *o, uint32_t n, int W, int H, double x0, double y0, double x1, double y1,
                     float z, const float *a, const float *b)
{
    o[n++] = mk(W, H, x0, y0, z, a, b);
    o[n++] = mk(W, H, x1, y0, z, a, b);
    o[n++] = mk(W, H, x1, y1, z, a, b);
    o[n++] = mk(W, H, x0, y0, z, a, b);
    o[n++] = mk(W, H, x1, y1, z, a, b);
    o[n++] = mk(W, H, x0, y1, z, a, b);
    return n;
}

static void draw_sv(const sv *v, uint32_t n, kiln_topology topo)
{
    ru_draw(dev, ctx, v, n, sizeof(sv), topo);
}

/* Unbinds vertex buffers 1.. and the index buffer: kiln refuses draws
 * while a destroyed object stays bound (DRAW_BOUND_DESTROYED). */
static void unbind_buffers(void)
{
    kiln_buffer none[KILN_MAX_VERTEX_BUFFERS] = {{0}};
    uint32_t zero[KILN_MAX_VERTEX_BUFFERS] = {0};
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, KILN_MAX_VERTEX_BUFFERS, none, zero, zero),
                 KILN_OK);
    CHECK_RESULT(kiln_ia_set_index_buffer(ctx, (kiln_buffer){0}, KILN_INDEX_UINT16, 0), KILN_OK);
}

/* Binds rt (may be NULL) and ds (may be NULL), full viewport, default
 * states, pipe p. */
static void bind(ru_tex *rt, ru_tex *ds, const ru_pipe *p)
{
    kiln_rtv rtv = rt ? rt->rtv : (kiln_rtv){0};
    CHECK_RESULT(
        kiln_om_set_render_targets(ctx, rt ? 1 : 0, rt ? &rtv : NULL, ds ? ds->dsv : (kiln_dsv){0}),
        KILN_OK);
    uint32_t w = rt ? rt->w : ds->w, h = rt ? rt->h : ds->h;
    ru_set_viewport(ctx, 0, 0, (float)w, (float)h, 0, 1);
    CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    if (p)
        ru_bind_pipe(ctx, p);
}

static kiln_buffer CB; /* PS cb0 for the cb pipes, replaced by set_cb */

static void set_cb(const float *f, uint32_t n)
{
    if (CB.id)
        kiln_destroy_buffer(dev, CB);
    CB = ru_cbuffer(dev, f, n);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &CB), KILN_OK);
}

static int near_f(float got, double want, double tol) { return fabs((double)got - want) <= tol; }

static void expect_f4(const char *what, int x, int y, const float *got, const float *want,
                      double tol)
{
    int ok = 1;
    for (int c = 0; c < 4; c++)
        ok &= near_f(got[c], want[c], tol);
    th_check(ok, what, __FILE__, __LINE__);
    if (!ok)
        fprintf(
            stderr,
            "    %s at (%d, %d): got (%.9g, %.9g, %.9g, %.9g), expected (%.9g, %.9g, %.9g, %.9g)\n",
            what, x, y, got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
}

static void expect_u8(const char *what, int x, int y, const uint8_t *got, const uint8_t *want)
{
    int ok = memcmp(got, want, 4) == 0;
    th_check(ok, what, __FILE__, __LINE__);
    if (!ok)
        fprintf(stderr, "    %s at (%d, %d): got (%u, %u, %u, %u), expected (%u, %u, %u, %u)\n",
                what, x, y, got[0], got[1], got[2], got[3], want[0], want[1], want[2], want[3]);
}

/* ---- culling and winding ---- */

static void ps_front(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = a->front_facing ? 1.0f : 0.25f;
        KILN_PS_COLOR(a, 0, 1)[i] = 1.0f;
        KILN_PS_COLOR(a, 0, 2)[i] = 0.0f;
        KILN_PS_COLOR(a, 0, 3)[i] = 1.0f;
    }
}

static void test_cull_modes(void)
{
    enum { W = 16, H = 8 };
    kiln_pixel_shader_desc pd = {ps_front, 0, 1, 0, NULL, NULL, 0};
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    sv v[6];
    /* left: (0,0) (6,0) (0,6) clockwise on screen; right: (8,0) (8,6)
     * (14,0) counter-clockwise */
    v[0] = mk(W, H, 0, 0, 0.5f, NULL, NULL);
    v[1] = mk(W, H, 6, 0, 0.5f, NULL, NULL);
    v[2] = mk(W, H, 0, 6, 0.5f, NULL, NULL);
    v[3] = mk(W, H, 8, 0, 0.5f, NULL, NULL);
    v[4] = mk(W, H, 8, 6, 0.5f, NULL, NULL);
    v[5] = mk(W, H, 14, 0, 0.5f, NULL, NULL);
    static const struct {
        kiln_cull_mode cull;
        uint32_t ccw;
        int left, right; /* drawn? */
    } cases[] = {
        {KILN_CULL_NONE, 0, 1, 1},    {KILN_CULL_NONE, 1, 1, 1},    {KILN_CULL_BACK, 0, 1, 0},
        {KILN_CULL_BACK, 1, 0, 1},    {KILN_CULL_FRONT, 0, 0, 1},   {KILN_CULL_FRONT, 1, 1, 0},
        {KILN_CULL_DEFAULT, 0, 1, 0}, {KILN_CULL_DEFAULT, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PV1);
        CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
        kiln_rasterizer_state rs =
            ru_rs(dev, (kiln_rasterizer_desc){.cull = cases[i].cull, .front_ccw = cases[i].ccw});
        CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
        draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
        float *img = ru_read_f32(dev, &rt);
        /* front faces: clockwise unless front_ccw */
        float lf = cases[i].ccw ? 0.25f : 1.0f, rf = cases[i].ccw ? 1.0f : 0.25f;
        float wl[4] = {lf, 1, 0, 1}, wr[4] = {rf, 1, 0, 1};
        char what[96];
        snprintf(what, sizeof what, "cull %d front_ccw %u: clockwise triangle", (int)cases[i].cull,
                 cases[i].ccw);
        expect_f4(what, 1, 1, img + 4 * (1 * W + 1), cases[i].left ? wl : Z4, 0);
        snprintf(what, sizeof what, "cull %d front_ccw %u: counter-clockwise triangle",
                 (int)cases[i].cull, cases[i].ccw);
        expect_f4(what, 9, 1, img + 4 * (1 * W + 9), cases[i].right ? wr : Z4, 0);
        free(img);
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
    }
    kiln_destroy_pixel_shader(dev, ps);
}

/* ---- wireframe ---- */

static void test_wireframe(void)
{
    enum { W = 16, H = 16 };
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PC1);
    const float one[4] = {1, 0, 0, 0};
    set_cb(one, 4);
    kiln_blend_state add = ru_bs_add(dev);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
    kiln_rasterizer_state wf = ru_rs(dev, (kiln_rasterizer_desc){.fill = KILN_FILL_WIREFRAME});
    CHECK_RESULT(kiln_rs_set_state(ctx, wf), KILN_OK);
    sv v[6];
    /* clockwise, vertices on pixel centers */
    v[0] = mk(W, H, 2.5, 2.5, 0.5f, NULL, NULL);
    v[1] = mk(W, H, 12.5, 2.5, 0.5f, NULL, NULL);
    v[2] = mk(W, H, 2.5, 12.5, 0.5f, NULL, NULL);
    /* a back-facing one (culled by the default BACK) */
    v[3] = mk(W, H, 13.5, 13.5, 0.5f, NULL, NULL);
    v[4] = mk(W, H, 13.5, 6.5, 0.5f, NULL, NULL);
    v[5] = mk(W, H, 6.5, 13.5, 0.5f, NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt);
    /* Each edge is a line (ends excluded): top row 2..11 of row 2, the
     * diagonal from (12,2) to (3,11), the left column rows 3..12. */
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int want = (y == 2 && x >= 2 && x <= 12) || (x + y == 14 && x >= 3 && x <= 11) ||
                       (x == 2 && y >= 3 && y <= 12);
            if (img[y * W + x] != (float)want && bad++ < 5)
                fprintf(stderr, "    wireframe: (%d, %d) = %g, expected %d\n", x, y, img[y * W + x],
                        want);
        }
    CHECK_EQ_INT(bad, 0);
    free(img);
    kiln_destroy_rasterizer_state(dev, wf);
    kiln_destroy_blend_state(dev, add);
    ru_free_tex(dev, &rt);
}

/* Wireframe triangles keep their facing: SV_IsFrontFace is true for lines
 * and points except lines drawn out of triangles (wireframe), which face
 * as the triangle does in solid mode. */
static void test_wireframe_facing(void)
{
    enum { W = 16, H = 8 };
    kiln_pixel_shader_desc pd = {ps_front, 0, 1, 0, NULL, NULL, 0};
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PV1);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    kiln_rasterizer_state wf =
        ru_rs(dev, (kiln_rasterizer_desc){.fill = KILN_FILL_WIREFRAME, .cull = KILN_CULL_NONE});
    CHECK_RESULT(kiln_rs_set_state(ctx, wf), KILN_OK);
    sv v[6];
    /* clockwise (front) at the left, counter-clockwise (back) at the right;
     * their top edges run along row 1 */
    v[0] = mk(W, H, 1.5, 1.5, 0.5f, NULL, NULL);
    v[1] = mk(W, H, 6.5, 1.5, 0.5f, NULL, NULL);
    v[2] = mk(W, H, 1.5, 6.5, 0.5f, NULL, NULL);
    v[3] = mk(W, H, 9.5, 1.5, 0.5f, NULL, NULL);
    v[4] = mk(W, H, 9.5, 6.5, 0.5f, NULL, NULL);
    v[5] = mk(W, H, 14.5, 1.5, 0.5f, NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt);
    const float front[4] = {1, 1, 0, 1}, back[4] = {0.25f, 1, 0, 1};
    expect_f4("wireframe edge of a front-facing triangle", 3, 1, img + 4 * (1 * W + 3), front, 0);
    expect_f4("wireframe edge of a back-facing triangle faces back", 11, 1, img + 4 * (1 * W + 11),
              back, 0);
    free(img);
    kiln_destroy_rasterizer_state(dev, wf);
    kiln_destroy_pixel_shader(dev, ps);
    ru_free_tex(dev, &rt);
}

/* ---- scissor ---- */

static void test_scissor(void)
{
    enum { W = 16, H = 12 };
    const float c[4] = {0.5f, 0.25f, 1.0f, 1.0f};
    for (int enable = 0; enable < 2; enable++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PC1);
        set_cb(c, 4);
        kiln_rasterizer_state rs =
            ru_rs(dev, (kiln_rasterizer_desc){.scissor_enable = (uint32_t)enable});
        CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
        kiln_rect sc = {3, 4, 10, 9};
        CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
        sv v[6];
        uint32_t n = rect(v, 0, W, H, 0, 0, W, H, 0.5f, NULL, NULL);
        draw_sv(v, n, KILN_TOPOLOGY_TRIANGLE_LIST);
        float *img = ru_read_f32(dev, &rt);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int in = !enable || (x >= 3 && x < 10 && y >= 4 && y < 9);
                if (img[4 * (y * W + x)] != (in ? 0.5f : 0.0f) && bad++ < 4)
                    fprintf(stderr, "    scissor %d: (%d, %d) = %g\n", enable, x, y,
                            img[4 * (y * W + x)]);
            }
        th_check(bad == 0,
                 enable ? "scissor enabled: only the rect"
                        : "scissor disabled: the rect is ignored",
                 __FILE__, __LINE__);
        free(img);
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
    }
}

/* ---- viewport ---- */

static void test_viewport(void)
{
    enum { W = 16, H = 12 };
    static const struct {
        float x, y, w, h, zmin, zmax;
        int px0, px1, py0, py1;
    } cases[] = {
        {4, 2, 8, 6, 0.25f, 0.75f, 4, 12, 2, 8},
        {2.5f, 1.25f, 8, 6, 0.0f, 1.0f, 2, 10, 1, 7}, /* fractional: centers 2.5..9.5, 1.5..6.5 */
        {0, 0, 16, 12, 0.6f, 0.6f, 0, 16, 0, 12},     /* a flat depth range */
    };
    const float one[4] = {1, 0, 0, 0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
        ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
        bind(&rt, &ds, &PC1);
        set_cb(one, 4);
        ru_set_viewport(ctx, cases[i].x, cases[i].y, cases[i].w, cases[i].h, cases[i].zmin,
                        cases[i].zmax);
        /* a quad larger than the viewport, z = 0.2 */
        sv v[6];
        float q[4][2] = {{-2, 2}, {2, 2}, {2, -2}, {-2, -2}};
        int idx[6] = {0, 1, 2, 0, 2, 3};
        for (int k = 0; k < 6; k++) {
            memset(&v[k], 0, sizeof v[k]);
            v[k].p[0] = q[idx[k]][0];
            v[k].p[1] = q[idx[k]][1];
            v[k].p[2] = 0.2f;
            v[k].p[3] = 1.0f;
        }
        draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
        float *img = ru_read_f32(dev, &rt), *dimg = ru_read_f32(dev, &ds);
        double zw = cases[i].zmin + 0.2 * (cases[i].zmax - cases[i].zmin);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                int in =
                    x >= cases[i].px0 && x < cases[i].px1 && y >= cases[i].py0 && y < cases[i].py1;
                float c = img[y * W + x], d = dimg[y * W + x];
                int ok = in ? c == 1.0f && near_f(d, zw, 1e-7) : c == 0.0f && d == 1.0f;
                if (!ok && bad++ < 4)
                    fprintf(
                        stderr,
                        "    viewport case %zu: (%d, %d) color %g depth %.9g (in %d, depth %.9g)\n",
                        i, x, y, c, d, in, zw);
            }
        th_check(bad == 0, "viewport offsets, sizes and depth range", __FILE__, __LINE__);
        free(img);
        free(dimg);
        ru_free_tex(dev, &rt);
        ru_free_tex(dev, &ds);
    }
}

/* ---- depth functions and depth write ---- */

static int cmp_ref(kiln_compare f, double a, double b)
{
    switch (f) {
    case KILN_COMPARE_NEVER:
        return 0;
    case KILN_COMPARE_LESS:
        return a < b;
    case KILN_COMPARE_EQUAL:
        return a == b;
    case KILN_COMPARE_LESS_EQUAL:
        return a <= b;
    case KILN_COMPARE_GREATER:
        return a > b;
    case KILN_COMPARE_NOT_EQUAL:
        return a != b;
    case KILN_COMPARE_GREATER_EQUAL:
        return a >= b;
    default:
        return 1;
    }
}

static void test_depth_funcs(void)
{
    enum { W = 12, H = 4 };
    static const float zs[3] = {0.25f, 0.5f, 0.75f};
    const float one[4] = {1, 0, 0, 0};
    for (int fmt = 0; fmt < 2; fmt++)
        for (int f = 0; f <= KILN_COMPARE_ALWAYS; f++)
            for (int nowrite = 0; nowrite < 2; nowrite++) {
                kiln_compare func =
                    f == 0 ? KILN_COMPARE_LESS : (kiln_compare)f; /* 0: the default, LESS */
                ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
                ru_tex ds =
                    ru_ds(dev, W, H, fmt ? KILN_FORMAT_D24_UNORM_S8_UINT : KILN_FORMAT_D32_FLOAT);
                CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
                CHECK_RESULT(
                    kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 0.5f, 0),
                    KILN_OK);
                bind(&rt, &ds, &PC1);
                set_cb(one, 4);
                kiln_depth_stencil_state dss = ru_dss(
                    dev, (kiln_depth_stencil_desc){.depth_func = (kiln_compare)f,
                                                   .depth_write_disable = (uint32_t)nowrite});
                CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
                sv v[18];
                uint32_t n = 0;
                for (int k = 0; k < 3; k++)
                    n = rect(v, n, W, H, 4 * k, 0, 4 * k + 4, H, zs[k], NULL, NULL);
                draw_sv(v, n, KILN_TOPOLOGY_TRIANGLE_LIST);
                float *img = ru_read_f32(dev, &rt);
                uint32_t *dimg = (uint32_t *)(void *)ru_read_f32(dev, &ds);
                for (int k = 0; k < 3; k++) {
                    int pass = cmp_ref(func, zs[k], 0.5);
                    float c = img[4 * k + 1];
                    uint32_t word = dimg[4 * k + 1];
                    double d;
                    if (fmt) {
                        d = (double)(word & 0xffffff) / 16777215.0;
                    } else {
                        float df;
                        memcpy(&df, &word, 4);
                        d = df;
                    }
                    double wantd = pass && !nowrite ? zs[k] : 0.5;
                    double tol = fmt ? 0.5 / 16777215.0 + 1e-12 : 0.0;
                    char what[96];
                    snprintf(what, sizeof what, "%s depth func %d%s, z %.2f vs 0.5",
                             fmt ? "D24S8" : "D32", f, nowrite ? " (write disabled)" : "", zs[k]);
                    int ok = c == (pass ? 1.0f : 0.0f) && fabs(d - wantd) <= tol;
                    th_check(ok, what, __FILE__, __LINE__);
                    if (!ok)
                        fprintf(stderr,
                                "    %s: color %g depth %.9g (expected pass %d, depth %.9g)\n",
                                what, c, d, pass, wantd);
                    if (fmt)
                        CHECK_EQ_INT(word >> 24, 0); /* stencil untouched */
                }
                free(img);
                free(dimg);
                kiln_destroy_depth_stencil_state(dev, dss);
                ru_free_tex(dev, &rt);
                ru_free_tex(dev, &ds);
            }
}

/* ---- stencil ---- */

static uint32_t sop_ref(kiln_stencil_op op, uint32_t s, uint32_t ref)
{
    switch (op) {
    case KILN_STENCIL_OP_ZERO:
        return 0;
    case KILN_STENCIL_OP_REPLACE:
        return ref;
    case KILN_STENCIL_OP_INCR_SAT:
        return s == 255 ? 255 : s + 1;
    case KILN_STENCIL_OP_DECR_SAT:
        return s == 0 ? 0 : s - 1;
    case KILN_STENCIL_OP_INVERT:
        return 255 - s;
    case KILN_STENCIL_OP_INCR:
        return s == 255 ? 0 : s + 1;
    case KILN_STENCIL_OP_DECR:
        return s == 0 ? 255 : s - 1;
    default:
        return s; /* KEEP */
    }
}

/* Draws a one-pixel-wide rect at column x with the given state. */
static void stencil_column(int W, int H, int x, kiln_depth_stencil_desc d, uint32_t ref, float z,
                           int ccw)
{
    kiln_depth_stencil_state s = ru_dss(dev, d);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, s, ref), KILN_OK);
    sv v[6];
    rect(v, 0, W, H, x, 0, x + 1, H, z, NULL, NULL);
    if (ccw)
        for (int k = 0; k < 6; k += 3) {
            sv t = v[k + 1];
            v[k + 1] = v[k + 2];
            v[k + 2] = t;
        }
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    kiln_destroy_depth_stencil_state(dev, s);
}

static void test_stencil(void)
{
    enum { W = 32, H = 2 };
    const uint32_t ref = 0x5a;
    kiln_rasterizer_state none = ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE});
    static const uint32_t s0s[3] = {0, 0x7f, 0xff};
    for (int si = 0; si < 3; si++) {
        uint32_t s0 = s0s[si];
        ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D24_UNORM_S8_UINT);
        CHECK_RESULT(
            kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 0.5f, (uint8_t)s0),
            KILN_OK);
        bind(NULL, &ds, &PZ);
        for (int op = KILN_STENCIL_OP_KEEP; op <= KILN_STENCIL_OP_DECR; op++)
            for (int sc = 0; sc < 3; sc++) { /* 0 stencil fails, 1 depth fails, 2 both pass */
                kiln_depth_stencil_desc d = {0};
                d.stencil_enable = 1;
                kiln_stencil_face f = {KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_KEEP,
                                       KILN_STENCIL_OP_KEEP,
                                       sc == 0 ? KILN_COMPARE_NEVER : KILN_COMPARE_ALWAYS};
                if (sc == 0)
                    f.fail_op = (kiln_stencil_op)op;
                else if (sc == 1)
                    f.depth_fail_op = (kiln_stencil_op)op;
                else
                    f.pass_op = (kiln_stencil_op)op;
                d.front = d.back = f;
                stencil_column(W, H, (op - 1) + 8 * sc, d, ref, sc == 1 ? 0.75f : 0.25f, 0);
            }
        uint32_t *img = malloc(4 * W * H);
        ru_read(dev, ds.tex, 0, img);
        uint32_t untouched = img[31];
        CHECK(fabs((double)(untouched & 0xffffff) - 0.5 * 16777215.0) <= 0.5);
        CHECK_EQ_INT(untouched >> 24, s0);
        for (int op = KILN_STENCIL_OP_KEEP; op <= KILN_STENCIL_OP_DECR; op++)
            for (int sc = 0; sc < 3; sc++) {
                int x = (op - 1) + 8 * sc;
                uint32_t w = img[W + x];
                uint32_t want_s = sop_ref((kiln_stencil_op)op, s0, ref);
                uint32_t want_z =
                    sc == 2 ? 4194304u /* round(0.25 * (2^24 - 1)) */ : (untouched & 0xffffff);
                char what[80];
                snprintf(what, sizeof what, "stencil op %d on %s, stencil 0x%02x", op,
                         sc == 0   ? "stencil fail"
                         : sc == 1 ? "depth fail"
                                   : "pass",
                         s0);
                th_check((w >> 24) == want_s && (w & 0xffffff) == want_z, what, __FILE__, __LINE__);
                if (!((w >> 24) == want_s && (w & 0xffffff) == want_z))
                    fprintf(stderr, "    %s: got stencil 0x%02x depth %u, expected 0x%02x, %u\n",
                            what, w >> 24, w & 0xffffff, want_s, want_z);
            }
        free(img);
        ru_free_tex(dev, &ds);
    }

    /* Read and write masks, compare functions against the reference value
     * ((ref & read_mask) func (stencil & read_mask)), separate faces. */
    {
        ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D24_UNORM_S8_UINT);
        CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0x3f),
                     KILN_OK);
        bind(NULL, &ds, &PZ);
        CHECK_RESULT(kiln_rs_set_state(ctx, none), KILN_OK);
        kiln_stencil_face eq = {KILN_STENCIL_OP_INVERT, KILN_STENCIL_OP_KEEP,
                                KILN_STENCIL_OP_REPLACE, KILN_COMPARE_EQUAL};
        kiln_depth_stencil_desc d = {0};
        d.stencil_enable = 1;
        d.front = d.back = eq;
        d.stencil_read_mask = 0xf0;
        stencil_column(W, H, 0, d, 0x35, 0.5f, 0); /* 0x30 == 0x30: pass -> 0x35 */
        d.stencil_read_mask = KILN_MASK_DEFAULT;
        stencil_column(W, H, 1, d, 0x35, 0.5f, 0); /* 0x35 != 0x3f: fail -> invert = 0xc0 */
        d.stencil_read_mask = KILN_MASK_NONE;
        stencil_column(W, H, 2, d, 0x35, 0.5f, 0); /* 0 == 0: pass -> 0x35 */
        d.stencil_read_mask = KILN_MASK_DEFAULT;
        d.front.func = d.back.func = KILN_COMPARE_ALWAYS;
        d.stencil_write_mask = 0x0f;
        stencil_column(W, H, 3, d, 0xa5, 0.5f, 0); /* (0x3f & ~0x0f) | (0xa5 & 0x0f) = 0x35 */
        d.stencil_write_mask = KILN_MASK_NONE;
        stencil_column(W, H, 4, d, 0xa5, 0.5f, 0); /* unchanged 0x3f */
        d.stencil_write_mask = KILN_MASK_DEFAULT;
        kiln_stencil_face lt = {KILN_STENCIL_OP_DECR, KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_INCR,
                                KILN_COMPARE_LESS};
        d.front = d.back = lt;
        stencil_column(W, H, 5, d, 0x10, 0.5f, 0); /* 0x10 < 0x3f: pass -> 0x40 */
        d.front.func = d.back.func = KILN_COMPARE_GREATER;
        stencil_column(W, H, 6, d, 0x10, 0.5f, 0); /* 0x10 > 0x3f false: fail -> 0x3e */
        /* separate faces: front INCR, back DECR */
        kiln_depth_stencil_desc f2 = {0};
        f2.stencil_enable = 1;
        f2.front = (kiln_stencil_face){KILN_STENCIL_OP_ZERO, KILN_STENCIL_OP_KEEP,
                                       KILN_STENCIL_OP_INCR, KILN_COMPARE_ALWAYS};
        f2.back = (kiln_stencil_face){KILN_STENCIL_OP_ZERO, KILN_STENCIL_OP_KEEP,
                                      KILN_STENCIL_OP_DECR, KILN_COMPARE_ALWAYS};
        stencil_column(W, H, 7, f2, 0, 0.5f, 0); /* clockwise: front -> 0x40 */
        stencil_column(W, H, 8, f2, 0, 0.5f, 1); /* counter-clockwise: back -> 0x3e */
        f2.front.func = KILN_COMPARE_NEVER;      /* front fails -> 0; back passes */
        f2.back.pass_op = KILN_STENCIL_OP_REPLACE;
        stencil_column(W, H, 9, f2, 0x77, 0.5f, 0);  /* front: zero */
        stencil_column(W, H, 10, f2, 0x77, 0.5f, 1); /* back: 0x77 */
        kiln_rasterizer_state ccwfront =
            ru_rs(dev, (kiln_rasterizer_desc){.cull = KILN_CULL_NONE, .front_ccw = 1});
        CHECK_RESULT(kiln_rs_set_state(ctx, ccwfront), KILN_OK);
        stencil_column(W, H, 11, f2, 0x77, 0.5f, 0); /* clockwise is back now: 0x77 */
        stencil_column(W, H, 12, f2, 0x77, 0.5f, 1); /* counter-clockwise is front: 0 */
        uint32_t *img = malloc(4 * W * H);
        ru_read(dev, ds.tex, 0, img);
        static const uint32_t want[13] = {0x35, 0xc0, 0x35, 0x35, 0x3f, 0x40, 0x3e,
                                          0x40, 0x3e, 0x00, 0x77, 0x77, 0x00};
        for (int x = 0; x < 13; x++) {
            char what[64];
            snprintf(what, sizeof what, "stencil masks/funcs/faces column %d", x);
            th_check((img[W + x] >> 24) == want[x], what, __FILE__, __LINE__);
            if ((img[W + x] >> 24) != want[x])
                fprintf(stderr, "    %s: stencil 0x%02x, expected 0x%02x\n", what, img[W + x] >> 24,
                        want[x]);
        }
        free(img);
        kiln_destroy_rasterizer_state(dev, ccwfront);
        ru_free_tex(dev, &ds);
    }
    kiln_destroy_rasterizer_state(dev, none);
}

/* ---- blending ---- */

static double bfactor(kiln_blend_factor f, int c, const double *s, const double *d, const double *k)
{
    switch (f) {
    case KILN_BLEND_ZERO:
        return 0;
    case KILN_BLEND_ONE:
        return 1;
    case KILN_BLEND_SRC_COLOR:
        return s[c];
    case KILN_BLEND_INV_SRC_COLOR:
        return 1 - s[c];
    case KILN_BLEND_SRC_ALPHA:
        return s[3];
    case KILN_BLEND_INV_SRC_ALPHA:
        return 1 - s[3];
    case KILN_BLEND_DEST_ALPHA:
        return d[3];
    case KILN_BLEND_INV_DEST_ALPHA:
        return 1 - d[3];
    case KILN_BLEND_DEST_COLOR:
        return d[c];
    case KILN_BLEND_INV_DEST_COLOR:
        return 1 - d[c];
    case KILN_BLEND_SRC_ALPHA_SAT:
        return c == 3 ? 1 : (s[3] < 1 - d[3] ? s[3] : 1 - d[3]);
    case KILN_BLEND_BLEND_FACTOR:
        return k[c];
    case KILN_BLEND_INV_BLEND_FACTOR:
        return 1 - k[c];
    default:
        return -1;
    }
}

/* D3D10: ADD s*fs + d*fd, SUBTRACT s*fs - d*fd, REV_SUBTRACT d*fd - s*fs;
 * MIN and MAX compare the unweighted source and destination. */
static double bop(kiln_blend_op op, double s, double fs, double d, double fd)
{
    switch (op) {
    case KILN_BLEND_OP_SUBTRACT:
        return s * fs - d * fd;
    case KILN_BLEND_OP_REV_SUBTRACT:
        return d * fd - s * fs;
    case KILN_BLEND_OP_MIN:
        return s < d ? s : d;
    case KILN_BLEND_OP_MAX:
        return s > d ? s : d;
    default:
        return s * fs + d * fd;
    }
}

/* Accepts the D3D10 UNORM result of v: exact, or either neighbour at a tie. */
static int unorm_ok(uint8_t got, double v)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    double x = v * 255.0;
    double fl = floor(x);
    if (fabs(x - fl - 0.5) < 0.01)
        return got == (uint8_t)fl || got == (uint8_t)fl + 1;
    return got == (uint8_t)floor(x + 0.5);
}

typedef struct bcase {
    kiln_blend_factor src, dst;
    kiln_blend_op op;
    kiln_blend_factor src_a, dst_a;
    kiln_blend_op op_a;
    int clamp_src; /* use an out-of-range source */
} bcase;

static void test_blend(void)
{
    enum { W = 16, H = 8 };
    const double s[4] = {0.8, 0.3, 0.55, 0.6};
    const double sx[4] = {1.5, -0.5, 0.55, 2.0}; /* clamped to [0, 1] before blending on UNORM */
    const uint8_t db[4] = {51, 204, 100, 153};
    const double k[4] = {0.25, 0.5, 0.75, 0.4};
    double d[4];
    for (int c = 0; c < 4; c++)
        d[c] = db[c] / 255.0;
    bcase cases[64];
    int n = 0;
    /* every source factor, with destination ZERO */
    for (int f = KILN_BLEND_ZERO; f <= KILN_BLEND_INV_BLEND_FACTOR; f++)
        cases[n++] = (bcase){(kiln_blend_factor)f,
                             KILN_BLEND_ZERO,
                             KILN_BLEND_OP_ADD,
                             KILN_BLEND_ONE,
                             KILN_BLEND_ZERO,
                             KILN_BLEND_OP_ADD,
                             0};
    /* every destination factor, with source ZERO */
    for (int f = KILN_BLEND_ZERO; f <= KILN_BLEND_INV_BLEND_FACTOR; f++)
        cases[n++] = (bcase){KILN_BLEND_ZERO,
                             (kiln_blend_factor)f,
                             KILN_BLEND_OP_ADD,
                             KILN_BLEND_ZERO,
                             KILN_BLEND_ONE,
                             KILN_BLEND_OP_ADD,
                             0};
    /* alpha factors that differ from the color ones */
    static const kiln_blend_factor afs[] = {
        KILN_BLEND_ZERO,          KILN_BLEND_ONE,          KILN_BLEND_SRC_ALPHA,
        KILN_BLEND_INV_SRC_ALPHA, KILN_BLEND_DEST_ALPHA,   KILN_BLEND_INV_DEST_ALPHA,
        KILN_BLEND_SRC_ALPHA_SAT, KILN_BLEND_BLEND_FACTOR, KILN_BLEND_INV_BLEND_FACTOR};
    for (size_t i = 0; i < sizeof afs / sizeof afs[0]; i++)
        cases[n++] = (bcase){KILN_BLEND_ONE,
                             KILN_BLEND_ZERO,
                             KILN_BLEND_OP_ADD,
                             afs[i],
                             afs[(i + 3) % 9],
                             KILN_BLEND_OP_ADD,
                             0};
    /* every op, on color and alpha, with non-trivial factors */
    for (int op = KILN_BLEND_OP_ADD; op <= KILN_BLEND_OP_MAX; op++)
        cases[n++] = (bcase){KILN_BLEND_SRC_ALPHA,
                             KILN_BLEND_INV_SRC_ALPHA,
                             (kiln_blend_op)op,
                             KILN_BLEND_ONE,
                             KILN_BLEND_ONE,
                             (kiln_blend_op)op,
                             0};
    for (int op = KILN_BLEND_OP_ADD; op <= KILN_BLEND_OP_MAX; op++)
        cases[n++] = (bcase){KILN_BLEND_ONE,
                             KILN_BLEND_ONE,
                             KILN_BLEND_OP_ADD,
                             KILN_BLEND_SRC_ALPHA,
                             KILN_BLEND_DEST_ALPHA,
                             (kiln_blend_op)op,
                             0};
    /* source out of [0, 1]: clamped first */
    cases[n++] = (bcase){KILN_BLEND_ONE,
                         KILN_BLEND_ZERO,
                         KILN_BLEND_OP_ADD,
                         KILN_BLEND_ONE,
                         KILN_BLEND_ZERO,
                         KILN_BLEND_OP_ADD,
                         1};
    cases[n++] = (bcase){KILN_BLEND_ONE,
                         KILN_BLEND_ONE,
                         KILN_BLEND_OP_ADD,
                         KILN_BLEND_ONE,
                         KILN_BLEND_ONE,
                         KILN_BLEND_OP_ADD,
                         1};
    cases[n++] = (bcase){KILN_BLEND_DEST_COLOR,
                         KILN_BLEND_ONE,
                         KILN_BLEND_OP_REV_SUBTRACT,
                         KILN_BLEND_SRC_ALPHA,
                         KILN_BLEND_ZERO,
                         KILN_BLEND_OP_ADD,
                         1};
    CHECK(n <= W * H);
    for (int fmt = 0; fmt < 2; fmt++) { /* R8G8B8A8 and B8G8R8A8 */
        ru_tex rt = ru_rt(dev, W, H, fmt ? KILN_FORMAT_B8G8R8A8_UNORM : KILN_FORMAT_R8G8B8A8_UNORM);
        const float dclear[4] = {db[0] / 255.0f, db[1] / 255.0f, db[2] / 255.0f, db[3] / 255.0f};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, dclear), KILN_OK);
        bind(&rt, NULL, &PC1);
        const float kf[4] = {(float)k[0], (float)k[1], (float)k[2], (float)k[3]};
        for (int i = 0; i < n; i++) {
            const double *src = cases[i].clamp_src ? sx : s;
            float sf[4] = {(float)src[0], (float)src[1], (float)src[2], (float)src[3]};
            set_cb(sf, 4);
            kiln_blend_desc bd = {0};
            bd.rt[0] = (kiln_blend_target){1,
                                           cases[i].src,
                                           cases[i].dst,
                                           cases[i].op,
                                           cases[i].src_a,
                                           cases[i].dst_a,
                                           cases[i].op_a,
                                           0};
            kiln_blend_state bs = ru_bs(dev, &bd);
            CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, kf), KILN_OK);
            sv v[6];
            rect(v, 0, W, H, i % W, i / W, i % W + 1, i / W + 1, 0.5f, NULL, NULL);
            draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
            kiln_destroy_blend_state(dev, bs);
        }
        uint8_t *img = ru_read_bytes(dev, &rt);
        for (int i = 0; i < n; i++) {
            const double *src = cases[i].clamp_src ? sx : s;
            double sc[4];
            for (int c = 0; c < 4; c++) /* UNORM target: the source is clamped */
                sc[c] = src[c] < 0 ? 0 : src[c] > 1 ? 1 : src[c];
            double out[4];
            for (int c = 0; c < 3; c++)
                out[c] = bop(cases[i].op, sc[c], bfactor(cases[i].src, c, sc, d, k), d[c],
                             bfactor(cases[i].dst, c, sc, d, k));
            out[3] = bop(cases[i].op_a, sc[3], bfactor(cases[i].src_a, 3, sc, d, k), d[3],
                         bfactor(cases[i].dst_a, 3, sc, d, k));
            const uint8_t *p = img + 4 * i;
            uint8_t rgba[4] = {p[0], p[1], p[2], p[3]};
            if (fmt) { /* B8G8R8A8 stores B, G, R, A */
                rgba[0] = p[2];
                rgba[2] = p[0];
            }
            int ok = 1;
            for (int c = 0; c < 4; c++)
                ok &= unorm_ok(rgba[c], out[c]);
            char what[128];
            snprintf(what, sizeof what, "%s blend src %d dst %d op %d / alpha %d %d op %d%s",
                     fmt ? "BGRA8" : "RGBA8", cases[i].src, cases[i].dst, cases[i].op,
                     cases[i].src_a, cases[i].dst_a, cases[i].op_a,
                     cases[i].clamp_src ? " (source clamped)" : "");
            th_check(ok, what, __FILE__, __LINE__);
            if (!ok)
                fprintf(stderr,
                        "    %s: got (%u, %u, %u, %u), expected about (%.2f, %.2f, %.2f, %.2f)\n",
                        what, rgba[0], rgba[1], rgba[2], rgba[3], out[0] * 255, out[1] * 255,
                        out[2] * 255, out[3] * 255);
        }
        free(img);
        ru_free_tex(dev, &rt);
    }
}

/* ---- write masks ---- */

static void test_write_masks(void)
{
    enum { W = 8, H = 2 };
    static const uint32_t masks[] = {KILN_COLOR_WRITE_R,
                                     KILN_COLOR_WRITE_G | KILN_COLOR_WRITE_A,
                                     KILN_COLOR_WRITE_NONE,
                                     KILN_COLOR_WRITE_DEFAULT,
                                     KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_G | KILN_COLOR_WRITE_B,
                                     KILN_COLOR_WRITE_B};
    const float c[4] = {1.0f, 0.2f, 0.6f, 0.4f};
    const uint8_t cb[4] = {255, 51, 153, 102};
    const uint8_t clr[4] = {10, 20, 30, 40};
    for (int fmt = 0; fmt < 2; fmt++) {
        ru_tex rt =
            ru_rt(dev, W, H, fmt ? KILN_FORMAT_R32G32B32A32_FLOAT : KILN_FORMAT_R8G8B8A8_UNORM);
        const float cf[4] = {clr[0] / 255.0f, clr[1] / 255.0f, clr[2] / 255.0f, clr[3] / 255.0f};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, cf), KILN_OK);
        bind(&rt, NULL, &PC1);
        set_cb(c, 4);
        for (int i = 0; i < 6; i++) {
            kiln_blend_desc bd = {0};
            bd.rt[0].write_mask = masks[i];
            bd.rt[0].enable = (uint32_t)(i & 1); /* with and without blending (ONE, ZERO) */
            kiln_blend_state bs = ru_bs(dev, &bd);
            CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);
            sv v[6];
            rect(v, 0, W, H, i, 0, i + 1, H, 0.5f, NULL, NULL);
            draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
            kiln_destroy_blend_state(dev, bs);
        }
        if (fmt) {
            float *img = ru_read_f32(dev, &rt);
            for (int i = 0; i < 6; i++) {
                uint32_t m = masks[i] == KILN_COLOR_WRITE_DEFAULT ? 15u
                             : masks[i] == KILN_COLOR_WRITE_NONE  ? 0u
                                                                  : masks[i];
                float want[4];
                for (int ch = 0; ch < 4; ch++)
                    want[ch] = m >> ch & 1 ? c[ch] : cf[ch];
                expect_f4("write mask on RGBA32F", i, 0, img + 4 * i, want, 0);
            }
            free(img);
        } else {
            uint8_t *img = ru_read_bytes(dev, &rt);
            for (int i = 0; i < 6; i++) {
                uint32_t m = masks[i] == KILN_COLOR_WRITE_DEFAULT ? 15u
                             : masks[i] == KILN_COLOR_WRITE_NONE  ? 0u
                                                                  : masks[i];
                uint8_t want[4];
                for (int ch = 0; ch < 4; ch++)
                    want[ch] = m >> ch & 1 ? cb[ch] : clr[ch];
                expect_u8("write mask on RGBA8", i, 0, img + 4 * i, want);
            }
            free(img);
        }
        ru_free_tex(dev, &rt);
    }
}

/* ---- multiple render targets, float and BGRA formats ---- */

static void test_mrt_and_formats(void)
{
    enum { W = 8, H = 4 };
    ru_tex t0 = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_tex t1 = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    ru_tex t2 = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    ru_tex t3 = ru_rt(dev, W, H, KILN_FORMAT_B8G8R8A8_UNORM);
    const float c1clr[4] = {0.25f, 0, 0, 0};
    CHECK_RESULT(kiln_clear_rtv(ctx, t0.rtv, Z4), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, t1.rtv, c1clr), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, t2.rtv, Z4), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, t3.rtv, Z4), KILN_OK);
    kiln_rtv rtvs[4] = {t0.rtv, t1.rtv, t2.rtv, t3.rtv};
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 4, rtvs, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    /* independent blending: target 1 adds, the others replace */
    kiln_blend_desc bd = {0};
    bd.rt[1] = (kiln_blend_target){1,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_OP_ADD,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_ONE,
                                   KILN_BLEND_OP_ADD,
                                   0};
    kiln_blend_state bs = ru_bs(dev, &bd);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);
    ru_bind_pipe(ctx, &PC4);
    const float cols[16] = {0.2f,  0.4f,  0.6f,  0.8f,  /* t0 */
                            1.5f,  9.0f,  9.0f,  9.0f,  /* t1: R only, added to 0.25 */
                            -2.5f, 3.25f, 1e-3f, 1e30f, /* t2: stored as is */
                            1.0f,  0.0f,  0.2f,  0.6f}; /* t3: stored as B, G, R, A */
    set_cb(cols, 16);
    sv v[6];
    rect(v, 0, W, H, 2, 1, 6, 3, 0.5f, NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint8_t *i0 = ru_read_bytes(dev, &t0), *i3 = ru_read_bytes(dev, &t3);
    float *i1 = ru_read_f32(dev, &t1), *i2 = ru_read_f32(dev, &t2);
    const uint8_t w0[4] = {51, 102, 153, 204}, w3[4] = {51, 0, 255, 153}, z8[4] = {0, 0, 0, 0};
    int at = 1 * W + 3, out = 0;
    expect_u8("MRT target 0 (RGBA8)", 3, 1, i0 + 4 * at, w0);
    expect_u8("MRT target 0 outside", 0, 0, i0 + 4 * out, z8);
    CHECK(i1[at] == 1.75f && i1[out] == 0.25f);
    expect_f4("MRT target 2 (RGBA32F) keeps out-of-range values", 3, 1, i2 + 4 * at, cols + 8, 0);
    expect_u8("MRT target 3 (BGRA8 byte order)", 3, 1, i3 + 4 * at, w3);
    free(i0);
    free(i1);
    free(i2);
    free(i3);
    kiln_destroy_blend_state(dev, bs);
    /* A shader writing 2 targets into 2 bound targets, from varyings */
    ru_tex a = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT),
           b = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, a.rtv, Z4), KILN_OK);
    CHECK_RESULT(kiln_clear_rtv(ctx, b.rtv, Z4), KILN_OK);
    kiln_rtv two[2] = {a.rtv, b.rtv};
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 2, two, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
    ru_bind_pipe(ctx, &PV2);
    const float va[4] = {0.5f, -1.0f, 2.0f, 0.125f}, vb[4] = {3.0f, 0.25f, -0.75f, 1.0f};
    rect(v, 0, W, H, 0, 0, W, H, 0.5f, va, vb);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *ia = ru_read_f32(dev, &a), *ib = ru_read_f32(dev, &b);
    expect_f4("two targets: target 0 = varying 0", 5, 2, ia + 4 * (2 * W + 5), va, 0);
    expect_f4("two targets: target 1 = varying 1", 5, 2, ib + 4 * (2 * W + 5), vb, 0);
    free(ia);
    free(ib);
    ru_free_tex(dev, &a);
    ru_free_tex(dev, &b);
    ru_free_tex(dev, &t0);
    ru_free_tex(dev, &t1);
    ru_free_tex(dev, &t2);
    ru_free_tex(dev, &t3);
}

/* ---- depth bias, depth clip ---- */

static float draw_depth_at(kiln_format fmt, kiln_rasterizer_desc rd, const float *zcorner, int px,
                           int py, uint32_t *raw)
{
    enum { W = 8, H = 8 };
    ru_tex ds = ru_ds(dev, W, H, fmt);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    bind(NULL, &ds, &PZ);
    kiln_depth_stencil_state always =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS});
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, always, 0), KILN_OK);
    rd.cull = KILN_CULL_NONE;
    kiln_rasterizer_state rs = ru_rs(dev, rd);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    /* quad over the target; z given at (0,0), (W,0), (W,H), (0,H) */
    double cx[4] = {0, W, W, 0}, cy[4] = {0, 0, H, H};
    int idx[6] = {0, 1, 2, 0, 2, 3};
    sv v[6];
    for (int k = 0; k < 6; k++)
        v[k] = mk(W, H, cx[idx[k]], cy[idx[k]], zcorner[idx[k]], NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    uint32_t *img = malloc(4 * W * H);
    ru_read(dev, ds.tex, 0, img);
    uint32_t w = img[py * W + px];
    free(img);
    if (raw)
        *raw = w;
    float f;
    memcpy(&f, &w, 4);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_depth_stencil_state(dev, always);
    ru_free_tex(dev, &ds);
    return f;
}

static void test_depth_bias_and_clip(void)
{
    const float flat05[4] = {0.5f, 0.5f, 0.5f, 0.5f}, flat075[4] = {0.75f, 0.75f, 0.75f, 0.75f};
    /* D32_FLOAT: bias * 2^(exponent(max z) - 23); z = 0.5 and 0.75 have
     * exponent -1, so one unit is 2^-24. */
    float got = draw_depth_at(KILN_FORMAT_D32_FLOAT, (kiln_rasterizer_desc){.depth_bias = 1000},
                              flat05, 3, 3, NULL);
    double want = 0.5 + 1000.0 * ldexp(1.0, -24);
    th_check(near_f(got, want, 1e-7), "D32 depth bias 1000 at z = 0.5 adds 1000 * 2^-24", __FILE__,
             __LINE__);
    if (!near_f(got, want, 1e-7))
        fprintf(stderr, "    got %.9g, expected %.9g\n", got, want);
    got = draw_depth_at(KILN_FORMAT_D32_FLOAT, (kiln_rasterizer_desc){.depth_bias = -1000}, flat075,
                        3, 3, NULL);
    want = 0.75 - 1000.0 * ldexp(1.0, -24);
    th_check(near_f(got, want, 1e-7), "D32 depth bias -1000 at z = 0.75 subtracts 1000 * 2^-24",
             __FILE__, __LINE__);
    if (!near_f(got, want, 1e-7))
        fprintf(stderr, "    got %.9g, expected %.9g\n", got, want);
    /* D24: one unit is the format's resolution, 1 / (2^24 - 1). */
    uint32_t raw;
    const float flat025[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    draw_depth_at(KILN_FORMAT_D24_UNORM_S8_UINT, (kiln_rasterizer_desc){.depth_bias = 100}, flat025,
                  3, 3, &raw);
    CHECK_EQ_INT(raw & 0xffffff, 4194404); /* round(0.25 * 16777215) + 100 */
    /* Slope-scaled: z = 0.25 + x / 64 across the quad (dz/dx = 1/64,
     * dz/dy = 0): bias = 2 * 1/64; the pixel center x = 3.5. */
    const float slope[4] = {0.25f, 0.375f, 0.375f, 0.25f};
    got = draw_depth_at(KILN_FORMAT_D32_FLOAT,
                        (kiln_rasterizer_desc){.slope_scaled_depth_bias = 2.0f}, slope, 3, 3, NULL);
    want = 0.25 + 3.5 / 64.0 + 2.0 / 64.0;
    th_check(near_f(got, want, 1e-6), "slope-scaled depth bias", __FILE__, __LINE__);
    if (!near_f(got, want, 1e-6))
        fprintf(stderr, "    got %.9g, expected %.9g\n", got, want);
    /* Clamp: the bias is limited to depth_bias_clamp. */
    got = draw_depth_at(
        KILN_FORMAT_D32_FLOAT,
        (kiln_rasterizer_desc){.slope_scaled_depth_bias = 2.0f, .depth_bias_clamp = 0.01f}, slope,
        3, 3, NULL);
    want = 0.25 + 3.5 / 64.0 + 0.01;
    th_check(near_f(got, want, 1e-6), "depth bias clamp", __FILE__, __LINE__);
    if (!near_f(got, want, 1e-6))
        fprintf(stderr, "    got %.9g, expected %.9g\n", got, want);

    /* Depth clip: z from -0.5 (x = 0) to 1.5 (x = 8) across an 8-wide
     * quad, so at centers z = -0.5 + (x + 0.5) / 4. With clipping only
     * pixels with 0 <= z <= 1 draw (x = 2..5); without, every pixel draws
     * and depth is clamped to the viewport range. */
    const float ramp[4] = {-0.5f, 1.5f, 1.5f, -0.5f};
    for (int x = 0; x < 8; x++) {
        double z = -0.5 + (x + 0.5) / 4.0;
        float on =
            draw_depth_at(KILN_FORMAT_D32_FLOAT, (kiln_rasterizer_desc){0}, ramp, x, 4, NULL);
        float off =
            draw_depth_at(KILN_FORMAT_D32_FLOAT, (kiln_rasterizer_desc){.depth_clip_disable = 1},
                          ramp, x, 4, NULL);
        double clamped = z < 0 ? 0 : z > 1 ? 1 : z;
        char what[80];
        snprintf(what, sizeof what, "depth clip on, column %d (z %.3f)", x, z);
        th_check(z >= 0 && z <= 1 ? near_f(on, z, 1e-6) : on == 1.0f, what, __FILE__, __LINE__);
        snprintf(what, sizeof what, "depth clip off, column %d (z %.3f) clamps", x, z);
        th_check(near_f(off, clamped, 1e-6), what, __FILE__, __LINE__);
        if (!near_f(off, clamped, 1e-6))
            fprintf(stderr, "    %s: got %.9g\n", what, off);
    }
}

/* ---- discard with late depth ---- */

/* Discards pixels with odd x; writes PS cb0. */
static void ps_discard_odd(kiln_ps_args *a)
{
    ru_ps_cb(a);
    for (int i = 0; i < KILN_PS_BLOCK; i++)
        if ((a->x + i % 4) & 1)
            a->mask &= ~(1u << i);
}

static void test_discard(void)
{
    enum { W = 8, H = 4 };
    kiln_pixel_shader_desc pd = {ps_discard_odd, 0, 1, KILN_PS_MAY_DISCARD, NULL, RU_USER(1, 0), 0};
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D24_UNORM_S8_UINT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH | KILN_CLEAR_STENCIL, 1.0f, 0),
                 KILN_OK);
    bind(&rt, &ds, &PC1);
    kiln_depth_stencil_desc dd = {0};
    dd.stencil_enable = 1;
    dd.front = dd.back = (kiln_stencil_face){KILN_STENCIL_OP_KEEP, KILN_STENCIL_OP_KEEP,
                                             KILN_STENCIL_OP_INCR, KILN_COMPARE_ALWAYS};
    kiln_depth_stencil_state dss = ru_dss(dev, dd);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    const float a[4] = {2, 0, 0, 0}, b[4] = {3, 0, 0, 0};
    set_cb(a, 4);
    sv v[6];
    rect(v, 0, W, H, 0, 0, W, H, 0.25f, NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    /* behind the first one, no discard: fills exactly the discarded pixels */
    CHECK_RESULT(kiln_ps_set_shader(ctx, PC1.ps), KILN_OK);
    set_cb(b, 4);
    rect(v, 0, W, H, 0, 0, W, H, 0.5f, NULL, NULL);
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt);
    uint32_t *dimg = (uint32_t *)(void *)ru_read_f32(dev, &ds);
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int odd = x & 1;
            float wc = odd ? 3.0f : 2.0f;
            uint32_t wz = odd ? 8388608u /* 0.5: round(0.5 * (2^24 - 1)) */ : 4194304u; /* 0.25 */
            uint32_t ws = 1; /* even: first pass; odd: second pass only (a discarded pixel does not
                                update stencil) */
            uint32_t w = dimg[y * W + x];
            int zok = (w & 0xffffff) == wz ||
                      (odd && (w & 0xffffff) == 8388607u); /* 0.5 is a rounding tie */
            if ((img[y * W + x] != wc || !zok || (w >> 24) != ws) && bad++ < 4)
                fprintf(stderr,
                        "    discard: (%d, %d) color %g depth %u stencil %u; expected %g, %u, %u\n",
                        x, y, img[y * W + x], w & 0xffffff, w >> 24, wc, wz, ws);
        }
    th_check(bad == 0, "discarded pixels write neither color, depth nor stencil", __FILE__,
             __LINE__);
    free(img);
    free(dimg);
    kiln_destroy_depth_stencil_state(dev, dss);
    kiln_destroy_pixel_shader(dev, ps);
    ru_free_tex(dev, &rt);
    ru_free_tex(dev, &ds);
}

/* ---- sampling ---- */

/* Samples srv 0 / sampler 0 at varying 0 (u, v). */
static void ps_tex(kiln_ps_args *a)
{
    float rgba[4 * KILN_PS_BLOCK];
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1), rgba);
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = rgba[c * KILN_PS_BLOCK + i];
}

static kiln_pixel_shader PSTEX;

/* Draws a quad over a W x H RGBA32F target with texcoords from (u0, v0) at
 * the top-left corner to (u1, v1) at the bottom-right, sampling `srv` with
 * `samp`; returns the image. */
static float *draw_textured(int W, int H, kiln_srv srv, kiln_sampler samp, double u0, double v0,
                            double u1, double v1)
{
    ru_tex rt = ru_rt(dev, (uint32_t)W, (uint32_t)H, KILN_FORMAT_R32G32B32A32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PV1);
    CHECK_RESULT(kiln_ps_set_shader(ctx, PSTEX), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &samp), KILN_OK);
    double cx[4] = {0, W, W, 0}, cy[4] = {0, 0, H, H};
    double cu[4] = {u0, u1, u1, u0}, cv[4] = {v0, v0, v1, v1};
    int idx[6] = {0, 1, 2, 0, 2, 3};
    sv v[6];
    for (int k = 0; k < 6; k++) {
        float uv[4] = {(float)cu[idx[k]], (float)cv[idx[k]], 0, 1};
        v[k] = mk(W, H, cx[idx[k]], cy[idx[k]], 0.5f, uv, NULL);
    }
    draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    float *img = ru_read_f32(dev, &rt);
    kiln_srv none = {0};
    kiln_sampler nos = {0};
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &none), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &nos), KILN_OK);
    ru_free_tex(dev, &rt);
    return img;
}

static uint8_t tex4(int i, int j, int c)
{
    static const uint8_t base[4] = {1, 2, 50, 255};
    return c == 0   ? (uint8_t)(base[0] + 16 * i)
           : c == 1 ? (uint8_t)(base[1] + 16 * j)
           : c == 2 ? (uint8_t)(base[2] + i + 4 * j)
                    : 255;
}

static int addr_ref(kiln_address m, int i, int n)
{
    switch (m) {
    case KILN_ADDRESS_WRAP:
        return ((i % n) + n) % n;
    case KILN_ADDRESS_MIRROR: {
        int p = ((i % (2 * n)) + 2 * n) % (2 * n);
        return p < n ? p : 2 * n - 1 - p;
    }
    case KILN_ADDRESS_BORDER:
        return i < 0 || i >= n ? -1 : i;
    default:
        return i < 0 ? 0 : i >= n ? n - 1 : i;
    }
}

static void test_sampling(void)
{
    enum { W = 16, H = 16 };
    uint8_t texels[4 * 4 * 4];
    for (int j = 0; j < 4; j++)
        for (int i = 0; i < 4; i++)
            for (int c = 0; c < 4; c++)
                texels[(j * 4 + i) * 4 + c] = tex4(i, j, c);
    kiln_texture2d_desc td = {
        4, 4, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_IMMUTABLE, KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_subresource_data init = {texels, 16};
    kiln_texture tex;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    kiln_srv srv;
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    const float border[4] = {0.25f, 0.5f, 0.75f, 1.0f};
    static const kiln_address modes[] = {KILN_ADDRESS_WRAP, KILN_ADDRESS_MIRROR, KILN_ADDRESS_CLAMP,
                                         KILN_ADDRESS_BORDER, KILN_ADDRESS_DEFAULT};
    for (int filt = 0; filt < 2; filt++)
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            kiln_sampler_desc sd = {0};
            sd.min_filter = sd.mag_filter = sd.mip_filter =
                filt ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
            sd.address_u = modes[m];
            sd.address_v = modes[(m + 1) % 4]; /* another mode on v */
            memcpy(sd.border_color, border, sizeof border);
            kiln_sampler samp;
            CHECK_RESULT(kiln_create_sampler(dev, &sd, &samp), KILN_OK);
            /* uv from -1 to 3: texel index x - 4 at pixel x, at texel centers */
            float *img = draw_textured(W, H, srv, samp, -1, -1, 3, 3);
            int bad = 0;
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    int ti = addr_ref(modes[m], x - 4, 4), tj = addr_ref(sd.address_v, y - 4, 4);
                    float want[4];
                    for (int c = 0; c < 4; c++)
                        want[c] = ti < 0 || tj < 0 ? border[c] : (float)tex4(ti, tj, c) / 255.0f;
                    const float *g = img + 4 * (y * W + x);
                    int ok = 1;
                    for (int c = 0; c < 4; c++)
                        ok &= near_f(g[c], want[c], 1e-6);
                    if (!ok && bad++ < 3)
                        fprintf(stderr,
                                "    %s address %d/%d at (%d, %d): got (%g, %g, %g, %g), want (%g, "
                                "%g, %g, %g)\n",
                                filt ? "linear" : "point", modes[m], sd.address_v, x, y, g[0], g[1],
                                g[2], g[3], want[0], want[1], want[2], want[3]);
                }
            char what[80];
            snprintf(what, sizeof what, "%s sampling at texel centers, address modes %d/%d",
                     filt ? "linear" : "point", modes[m], sd.address_v);
            th_check(bad == 0, what, __FILE__, __LINE__);
            free(img);
            kiln_destroy_sampler(dev, samp);
        }
    /* Linear halfway between texel centers along u (clamp): the average of
     * the two texels, up to the 8-bit fraction D3D quantizes to. */
    {
        kiln_sampler_desc sd = {0};
        kiln_sampler samp;
        CHECK_RESULT(kiln_create_sampler(dev, &sd, &samp), KILN_OK);
        /* 16 px over u in [0, 4): texel coordinate x / 4 * 4 ... use 4 px */
        float *img = draw_textured(4, 4, srv, samp, 0.125, 0, 1.125, 1);
        int bad = 0;
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 3; x++) { /* u*4 - 0.5 = x + 0.5: between texels x and x + 1 */
                const float *g = img + 4 * (y * 4 + x);
                for (int c = 0; c < 4; c++) {
                    double a = tex4(x, y, c) / 255.0, b = tex4(x + 1, y, c) / 255.0;
                    double tol = fabs(a - b) / 256.0 + 1e-6;
                    if (!near_f(g[c], (a + b) / 2, tol) && bad++ < 3)
                        fprintf(stderr, "    linear midpoint (%d, %d) channel %d: %g, want %g\n", x,
                                y, c, g[c], (a + b) / 2);
                }
            }
        th_check(bad == 0, "linear filtering between texel centers averages", __FILE__, __LINE__);
        free(img);
        kiln_destroy_sampler(dev, samp);
    }
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
}

/* ---- generate_mips, then sample lower mips ---- */

static void test_generate_mips(void)
{
    /* mip 0 (8x8): texel (x, y) = B[x/4][y/4] + D2[(x/2)%2][(y/2)%2] +
     * D1[x%2][y%2] per channel; every 2x2 average is exact:
     * mip 1 (4x4) = B + D2 + 6, mip 2 (2x2) = B + 9 + 6. */
    static const int D1[2][2] = {{0, 4}, {8, 12}};  /* mean 6 */
    static const int D2[2][2] = {{0, 12}, {4, 20}}; /* mean 9 */
    uint8_t m0[8 * 8 * 4];
    int Bv[2][2][4];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            for (int c = 0; c < 4; c++)
                Bv[i][j][c] = 10 + 60 * i + 100 * j + 7 * c;
    for (int y = 0; y < 8; y++)
        for (int x = 0; x < 8; x++)
            for (int c = 0; c < 4; c++)
                m0[(y * 8 + x) * 4 + c] =
                    (uint8_t)(Bv[x / 4][y / 4][c] + D2[(x / 2) % 2][(y / 2) % 2] +
                              D1[x % 2][y % 2]);
    kiln_texture2d_desc td = {8,
                              8,
                              0,
                              1,
                              KILN_FORMAT_R8G8B8A8_UNORM,
                              KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET,
                              0, 0};
    kiln_texture tex;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_texture_resource(tex), 0, NULL, m0, 32, 0),
                 KILN_OK);
    kiln_srv all;
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &all), KILN_OK);
    CHECK_RESULT(kiln_generate_mips(ctx, all), KILN_OK);
    kiln_sampler_desc sd = {0};
    sd.min_filter = sd.mag_filter = sd.mip_filter = KILN_FILTER_POINT;
    kiln_sampler samp;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &samp), KILN_OK);
    /* mip 1 through a view of it alone, and through LOD selection (8 texels
     * over 4 pixels: lod 1); mip 2 through a view */
    kiln_srv v1, v2;
    kiln_srv_desc d1 = {KILN_FORMAT_UNKNOWN, 1, 1, 0, 0, 0}, d2 = {KILN_FORMAT_UNKNOWN, 2, 1, 0, 0, 0};
    CHECK_RESULT(kiln_create_srv(dev, tex, &d1, &v1), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, &d2, &v2), KILN_OK);
    for (int k = 0; k < 3; k++) {
        int n = k == 2 ? 2 : 4;
        float *img = draw_textured(n, n, k == 0 ? v1 : k == 1 ? all : v2, samp, 0, 0, 1, 1);
        int bad = 0;
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++)
                for (int c = 0; c < 4; c++) {
                    int want =
                        k < 2 ? Bv[x / 2][y / 2][c] + D2[x % 2][y % 2] + 6 : Bv[x][y][c] + 9 + 6;
                    float g = img[4 * (y * n + x) + c];
                    if (!near_f(g, want / 255.0, 1e-6) && bad++ < 3)
                        fprintf(
                            stderr,
                            "    mips case %d (%d, %d) channel %d: got %g (%g/255), want %d/255\n",
                            k, x, y, c, g, g * 255, want);
                }
        th_check(bad == 0,
                 k == 0   ? "generated mip 1 through a view"
                 : k == 1 ? "generated mip 1 through LOD selection"
                          : "generated mip 2 through a view",
                 __FILE__, __LINE__);
        free(img);
    }
    kiln_destroy_srv(dev, v1);
    kiln_destroy_srv(dev, v2);
    kiln_destroy_srv(dev, all);
    kiln_destroy_sampler(dev, samp);
    kiln_destroy_texture(dev, tex);
}

/* ---- instancing ---- */

/* inputs: 0 position, 1 per-instance offset (clip x, y), 2 per-instance
 * color. varying 0 = color, varying 1 = (instance_id, vertex_id, 0, 1). */
static void vs_inst(const kiln_vs_args *a)
{
    for (uint32_t v = 0; v < a->count; v++) {
        const float *in = a->in + (size_t)v * a->in_stride;
        float *out = a->out + (size_t)v * a->out_stride;
        out[0] = in[0] + in[4];
        out[1] = in[1] + in[5];
        out[2] = in[2];
        out[3] = in[3];
        for (int c = 0; c < 4; c++)
            out[4 + c] = in[8 + c];
        out[8] = (float)a->instance_id;
        out[9] = (float)a->vertex_id[v];
        out[10] = 0;
        out[11] = 1;
    }
}

static void test_instancing(void)
{
    enum { W = 16, H = 4 };
    kiln_vertex_shader_desc vd = {vs_inst, 3, 2, NULL, NULL};
    kiln_vertex_shader vs;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &vd, &vs), KILN_OK);
    kiln_input_layout_desc ld = {3,
                                 {{KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0},
                                  {KILN_FORMAT_R32G32_FLOAT, 1, 0, 1, 0},
                                  {KILN_FORMAT_R32G32B32A32_FLOAT, 2, 0, 1, 2}}};
    kiln_input_layout il;
    CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
    /* a 2x2-pixel quad at (0,0); instance k moves it by 4k pixels */
    float quad[6][4];
    double qx[6] = {0, 2, 2, 0, 2, 0}, qy[6] = {0, 0, 2, 0, 2, 2};
    for (int k = 0; k < 6; k++) {
        ru_clip(W, H, qx[k], qy[k], quad[k]);
        quad[k][2] = 0.5f;
        quad[k][3] = 1.0f;
    }
    float offs[5][2], cols[4][4];
    for (int k = 0; k < 5; k++) {
        offs[k][0] = 4.0f * k * 2.0f / W;
        offs[k][1] = 0;
    }
    for (int k = 0; k < 4; k++)
        for (int c = 0; c < 4; c++)
            cols[k][c] = 0.1f * (float)(k + 1) + 0.01f * (float)c;
    kiln_buffer b0 = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, quad, sizeof quad);
    kiln_buffer b1 = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, offs, sizeof offs);
    kiln_buffer b2 = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, cols, sizeof cols);
    uint16_t idx[6] = {0, 1, 2, 3, 4, 5};
    kiln_buffer ib = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, idx, sizeof idx);
    for (int indexed = 0; indexed < 2; indexed++) {
        ru_tex a = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT),
               b = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, a.rtv, Z4), KILN_OK);
        CHECK_RESULT(kiln_clear_rtv(ctx, b.rtv, Z4), KILN_OK);
        kiln_rtv two[2] = {a.rtv, b.rtv};
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 2, two, (kiln_dsv){0}), KILN_OK);
        ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
        CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0),
                     KILN_OK);
        CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, PV2.ps), KILN_OK);
        CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
        kiln_buffer bufs[3] = {b0, b1, b2};
        uint32_t strides[3] = {16, 8, 16}, offsets[3] = {0, 0, 0};
        CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 3, bufs, strides, offsets), KILN_OK);
        CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
        /* 3 instances from instance 1: offsets 1, 2, 3; colors (step 2)
         * 1 + i / 2 = 1, 1, 2 */
        if (indexed) {
            CHECK_RESULT(kiln_ia_set_index_buffer(ctx, ib, KILN_INDEX_UINT16, 0), KILN_OK);
            CHECK_RESULT(kiln_draw_indexed_instanced(ctx, 6, 3, 0, 0, 1), KILN_OK);
        } else {
            CHECK_RESULT(kiln_draw_instanced(ctx, 6, 3, 0, 1), KILN_OK);
        }
        float *ia = ru_read_f32(dev, &a), *ibm = ru_read_f32(dev, &b);
        for (int i = 0; i < 3; i++) {
            int x = 4 * (1 + i);
            char what[80];
            snprintf(what, sizeof what, "%s instance %d: per-instance color (step rate 2)",
                     indexed ? "indexed" : "plain", i);
            expect_f4(what, x, 1, ia + 4 * (1 * W + x), cols[1 + i / 2], 0);
            /* D3D10: SV_InstanceID counts from 0 whatever the start instance */
            snprintf(what, sizeof what, "%s instance %d: instance_id",
                     indexed ? "indexed" : "plain", i);
            th_check(ibm[4 * (1 * W + x)] == (float)i, what, __FILE__, __LINE__);
            if (ibm[4 * (1 * W + x)] != (float)i)
                fprintf(stderr, "    %s: got %g, expected %d\n", what, ibm[4 * (1 * W + x)], i);
        }
        expect_f4("no instance at offset 0", 1, 1, ia + 4 * (1 * W + 1), Z4, 0);
        expect_f4("nothing at x = 15", 15, 1, ia + 4 * (1 * W + 15), Z4, 0);
        free(ia);
        free(ibm);
        ru_free_tex(dev, &a);
        ru_free_tex(dev, &b);
    }
    unbind_buffers();
    kiln_destroy_buffer(dev, b0);
    kiln_destroy_buffer(dev, b1);
    kiln_destroy_buffer(dev, b2);
    kiln_destroy_buffer(dev, ib);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
}

/* ---- indexed draws ---- */

static void test_indexed(void)
{
    enum { W = 16, H = 4 };
    /* vertices 0-3: quad A at pixels [0,4) x [0,4), color A; 4-7: quad B at
     * [8,12), color B */
    const float ca[4] = {1, 0, 0, 1}, cb[4] = {0, 1, 0, 1};
    sv vt[8];
    double xs[2] = {0, 8};
    for (int q = 0; q < 2; q++) {
        vt[4 * q + 0] = mk(W, H, xs[q], 0, 0.5f, q ? cb : ca, NULL);
        vt[4 * q + 1] = mk(W, H, xs[q] + 4, 0, 0.5f, q ? cb : ca, NULL);
        vt[4 * q + 2] = mk(W, H, xs[q] + 4, 4, 0.5f, q ? cb : ca, NULL);
        vt[4 * q + 3] = mk(W, H, xs[q], 4, 0.5f, q ? cb : ca, NULL);
    }
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, vt, sizeof vt);
    /* indices: quad A, quad B, then quad B again as 4..7 - 4 for base 4 */
    const uint32_t i32[18] = {0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7, 0, 1, 2, 0, 2, 3};
    uint16_t i16[18];
    for (int k = 0; k < 18; k++)
        i16[k] = (uint16_t)i32[k];
    kiln_buffer b16 = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, i16, sizeof i16);
    kiln_buffer b32 = ru_buffer(dev, KILN_BIND_INDEX_BUFFER, i32, sizeof i32);
    static const struct {
        int wide;
        uint32_t ib_offset, start;
        int32_t base;
        int a, b; /* quad drawn */
        const char *what;
    } cases[] = {
        {0, 0, 0, 0, 1, 0, "16-bit, first 6 indices: quad A"},
        {0, 0, 6, 0, 0, 1, "16-bit, start index 6: quad B"},
        {0, 0, 12, 4, 0, 1, "16-bit, base vertex 4: quad B"},
        {0, 12, 0, 0, 0, 1, "16-bit, index buffer offset 12 bytes: quad B"},
        {1, 0, 6, -4, 1, 0, "32-bit, base vertex -4 on indices 4..7: quad A"},
        {1, 0, 0, 0, 1, 0, "32-bit, first 6 indices: quad A"},
        {1, 24, 6, 0, 1, 0, "32-bit, offset 24 bytes + start 6: quad A"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PV1);
        uint32_t stride = sizeof(sv), off = 0;
        CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
        CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
        CHECK_RESULT(kiln_ia_set_index_buffer(ctx, cases[i].wide ? b32 : b16,
                                              cases[i].wide ? KILN_INDEX_UINT32 : KILN_INDEX_UINT16,
                                              cases[i].ib_offset),
                     KILN_OK);
        CHECK_RESULT(kiln_draw_indexed(ctx, 6, cases[i].start, cases[i].base), KILN_OK);
        float *img = ru_read_f32(dev, &rt);
        int ok = 1;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const float *want = x < 4 && cases[i].a              ? ca
                                    : x >= 8 && x < 12 && cases[i].b ? cb
                                                                     : Z4;
                for (int c = 0; c < 4; c++)
                    ok &= img[4 * (y * W + x) + c] == want[c];
            }
        th_check(ok, cases[i].what, __FILE__, __LINE__);
        free(img);
        ru_free_tex(dev, &rt);
    }
    unbind_buffers();
    kiln_destroy_buffer(dev, vb);
    kiln_destroy_buffer(dev, b16);
    kiln_destroy_buffer(dev, b32);
}

/* ---- strips, lines, points ---- */

static void test_strips(void)
{
    enum { W = 16, H = 8 };
    const float one[4] = {1, 0, 0, 0};
    kiln_blend_state add = ru_bs_add(dev);
    for (int cull = 0; cull < 2; cull++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PC1);
        set_cb(one, 4);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
        kiln_rasterizer_state rs =
            ru_rs(dev, (kiln_rasterizer_desc){.cull = cull ? KILN_CULL_FRONT : KILN_CULL_BACK});
        CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
        /* zig-zag strip over [0, 12) x [2, 6); its first triangle (0,6)
         * (0,2) (4,6) is clockwise, so every triangle is front-facing once
         * the odd ones have their winding flipped as D3D10 defines. */
        sv v[8];
        for (int k = 0; k < 8; k++)
            v[k] = mk(W, H, 4.0 * (k / 2), k % 2 ? 2 : 6, 0.5f, NULL, NULL);
        /* v: (0,6) (0,2) (4,6) (4,2) (8,6) (8,2) (12,6) (12,2) */
        draw_sv(v, 8, KILN_TOPOLOGY_TRIANGLE_STRIP);
        float *img = ru_read_f32(dev, &rt);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float want = !cull && x < 12 && y >= 2 && y < 6 ? 1.0f : 0.0f;
                if (img[y * W + x] != want && bad++ < 4)
                    fprintf(stderr, "    strip (cull %s): (%d, %d) = %g, want %g\n",
                            cull ? "front" : "back", x, y, img[y * W + x], want);
            }
        th_check(bad == 0,
                 cull ? "triangle strip: all front-facing, culled by FRONT"
                      : "triangle strip: winding alternates, every triangle front-facing, once",
                 __FILE__, __LINE__);
        free(img);
        kiln_destroy_rasterizer_state(dev, rs);
        ru_free_tex(dev, &rt);
    }
    /* A long zig-zag strip (2050 triangles, more than one geometry job):
     * the winding alternation follows the strip's global triangle index. */
    {
        enum { LW = 64, LH = 8, NS = 2052 };
        sv *ls = malloc(sizeof(sv) * NS);
        for (int k = 0; k < NS; k++)
            ls[k] = mk(LW, LH, 64.0 * (k / 2) / ((NS - 2) / 2), k % 2 ? 2 : 6, 0.5f, NULL, NULL);
        ru_tex rt = ru_rt(dev, LW, LH, KILN_FORMAT_R32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PC1);
        set_cb(one, 4);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
        draw_sv(ls, NS, KILN_TOPOLOGY_TRIANGLE_STRIP); /* default cull BACK */
        float *img = ru_read_f32(dev, &rt);
        int bad = 0;
        for (int y = 0; y < LH; y++)
            for (int x = 0; x < LW; x++)
                bad += img[y * LW + x] != (y >= 2 && y < 6 ? 1.0f : 0.0f);
        CHECK_EQ_INT(bad, 0);
        free(img);
        free(ls);
        ru_free_tex(dev, &rt);
    }
    /* Indexed strips: D3D10 (feature level 10.0) cuts a strip at the index
     * 0xFFFF (16-bit) or 0xFFFFFFFF (32-bit); the next strip starts with
     * an even (not flipped) triangle. Two quads, culling BACK: both drawn,
     * each pixel once, nothing between them. */
    for (int wide = 0; wide < 2; wide++) {
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
        bind(&rt, NULL, &PC1);
        set_cb(one, 4);
        CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
        /* quad A over [0, 4) x [2, 6), quad B over [8, 12) x [2, 6), each
         * as the strip (x0,6) (x0,2) (x1,6) (x1,2) */
        sv qv[8];
        for (int k = 0; k < 8; k++)
            qv[k] =
                mk(W, H, (k < 4 ? 0 : 8) + 4.0 * ((k % 4) / 2), k % 2 ? 2 : 6, 0.5f, NULL, NULL);
        kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, qv, sizeof qv);
        const uint32_t i32[9] = {0, 1, 2, 3, 0xffffffffu, 4, 5, 6, 7};
        const uint16_t i16[9] = {0, 1, 2, 3, 0xffff, 4, 5, 6, 7};
        kiln_buffer ib = wide ? ru_buffer(dev, KILN_BIND_INDEX_BUFFER, i32, sizeof i32)
                              : ru_buffer(dev, KILN_BIND_INDEX_BUFFER, i16, sizeof i16);
        uint32_t stride = sizeof(sv), off = 0;
        CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
        CHECK_RESULT(
            kiln_ia_set_index_buffer(ctx, ib, wide ? KILN_INDEX_UINT32 : KILN_INDEX_UINT16, 0),
            KILN_OK);
        CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_STRIP), KILN_OK);
        CHECK_RESULT(kiln_draw_indexed(ctx, 9, 0, 0), KILN_OK);
        float *img = ru_read_f32(dev, &rt);
        int bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float want = (x < 4 || (x >= 8 && x < 12)) && y >= 2 && y < 6 ? 1.0f : 0.0f;
                if (img[y * W + x] != want && bad++ < 4)
                    fprintf(stderr, "    strip cut (%s): (%d, %d) = %g, want %g\n",
                            wide ? "32-bit" : "16-bit", x, y, img[y * W + x], want);
            }
        th_check(bad == 0, wide ? "indexed strip cut at 0xFFFFFFFF" : "indexed strip cut at 0xFFFF",
                 __FILE__, __LINE__);
        free(img);
        unbind_buffers();
        kiln_destroy_buffer(dev, vb);
        kiln_destroy_buffer(dev, ib);
        ru_free_tex(dev, &rt);
    }
    kiln_destroy_blend_state(dev, add);
}

static void test_lines_points(void)
{
    enum { W = 24, H = 24 };
    const float one[4] = {1, 0, 0, 0};
    kiln_blend_state add = ru_bs_add(dev);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PC1);
    set_cb(one, 4);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
    /* Line list, endpoints on pixel centers: pixels whose center the line
     * crosses along its major axis, the end excluded. */
    const double L[][4] = {
        {2.5, 3.5, 9.5, 3.5},   /* right: x 2..8, row 3 */
        {9.5, 5.5, 2.5, 5.5},   /* left: x 3..9, row 5 */
        {12.5, 1.5, 12.5, 8.5}, /* down: rows 1..7, column 12 */
        {1.5, 10.5, 8.5, 13.5}, /* shallow: x-major */
    };
    sv v[16];
    uint32_t n = 0;
    for (int k = 0; k < 4; k++) {
        v[n++] = mk(W, H, L[k][0], L[k][1], 0.5f, NULL, NULL);
        v[n++] = mk(W, H, L[k][2], L[k][3], 0.5f, NULL, NULL);
    }
    draw_sv(v, n, KILN_TOPOLOGY_LINE_LIST);
    /* Line strip: right, down, left along a 5x5 square's edges */
    sv s[4] = {mk(W, H, 2.5, 15.5, 0.5f, NULL, NULL), mk(W, H, 7.5, 15.5, 0.5f, NULL, NULL),
               mk(W, H, 7.5, 20.5, 0.5f, NULL, NULL), mk(W, H, 2.5, 20.5, 0.5f, NULL, NULL)};
    draw_sv(s, 4, KILN_TOPOLOGY_LINE_STRIP);
    float *img = ru_read_f32(dev, &rt);
    static float want[W * H];
    memset(want, 0, sizeof want);
    for (int x = 2; x <= 8; x++)
        want[3 * W + x] += 1;
    for (int x = 3; x <= 9; x++)
        want[5 * W + x] += 1;
    for (int y = 1; y <= 7; y++)
        want[y * W + 12] += 1;
    static const int shallow[7][2] = {{1, 10}, {2, 10}, {3, 11}, {4, 11},
                                      {5, 12}, {6, 12}, {7, 13}};
    for (int k = 0; k < 7; k++)
        want[shallow[k][1] * W + shallow[k][0]] += 1;
    for (int x = 2; x <= 6; x++)
        want[15 * W + x] += 1;
    for (int y = 15; y <= 19; y++)
        want[y * W + 7] += 1;
    for (int x = 3; x <= 7; x++)
        want[20 * W + x] += 1;
    int bad = 0;
    for (int i = 0; i < W * H; i++)
        if (img[i] != want[i] && bad++ < 6)
            fprintf(stderr, "    lines: (%d, %d) = %g, want %g\n", i % W, i / W, img[i], want[i]);
    th_check(bad == 0, "line list and line strip pixels (D3D10 aliased lines)", __FILE__, __LINE__);
    free(img);
    ru_free_tex(dev, &rt);

    /* Points: a 1x1 square around the point under the top-left rule. */
    rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PC1);
    set_cb(one, 4);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, add, NULL), KILN_OK);
    const double P[][2] = {{3.5, 4.5}, {10.25, 2.75}, {6.0, 8.0}, {20.75, 20.25}};
    const int PW[][2] = {{3, 4}, {10, 2}, {5, 7}, {20, 20}};
    sv p[4];
    for (int k = 0; k < 4; k++)
        p[k] = mk(W, H, P[k][0], P[k][1], 0.5f, NULL, NULL);
    draw_sv(p, 4, KILN_TOPOLOGY_POINT_LIST);
    img = ru_read_f32(dev, &rt);
    for (int k = 0; k < 4; k++) {
        char what[80];
        snprintf(what, sizeof what, "point at (%.2f, %.2f) covers pixel (%d, %d)", P[k][0], P[k][1],
                 PW[k][0], PW[k][1]);
        th_check(img[PW[k][1] * W + PW[k][0]] == 1.0f, what, __FILE__, __LINE__);
    }
    float total = 0;
    for (int i = 0; i < W * H; i++)
        total += img[i];
    CHECK(total == 4.0f);
    free(img);
    ru_free_tex(dev, &rt);
    kiln_destroy_blend_state(dev, add);
}

/* ---- constant buffers mapped WRITE_DISCARD between draws ---- */

static void test_dynamic_constants(void)
{
    enum { W = 16, H = 1, N = 8 };
    kiln_buffer_desc bd = {16, KILN_USAGE_DYNAMIC, KILN_BIND_CONSTANT_BUFFER,
                           KILN_CPU_ACCESS_WRITE};
    kiln_buffer cb;
    CHECK_RESULT(kiln_create_buffer(dev, &bd, NULL, &cb), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, Z4), KILN_OK);
    bind(&rt, NULL, &PC1);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    for (int k = 0; k < N; k++) {
        kiln_mapped_subresource m;
        CHECK_RESULT(kiln_map(ctx, kiln_buffer_resource(cb), 0, KILN_MAP_WRITE_DISCARD, 0, &m),
                     KILN_OK);
        float c[4] = {(float)k, (float)(k * k), 0.5f * (float)k, 1.0f};
        if (m.data)
            memcpy(m.data, c, 16);
        CHECK_RESULT(kiln_unmap(ctx, kiln_buffer_resource(cb), 0), KILN_OK);
        sv v[6];
        rect(v, 0, W, H, 2 * k, 0, 2 * k + 2, H, 0.5f, NULL, NULL);
        draw_sv(v, 6, KILN_TOPOLOGY_TRIANGLE_LIST);
    }
    float *img = ru_read_f32(dev, &rt);
    for (int k = 0; k < N; k++) {
        float want[4] = {(float)k, (float)(k * k), 0.5f * (float)k, 1.0f};
        expect_f4("each draw sees the constants mapped before it", 2 * k + 1, 0,
                  img + 4 * (2 * k + 1), want, 0);
    }
    free(img);
    kiln_buffer none = {0};
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &none), KILN_OK);
    kiln_destroy_buffer(dev, cb);
    ru_free_tex(dev, &rt);
}

int main(void)
{
    dev = th_device(KILN_EXEC_ASYNC, 0);
    ctx = kiln_device_immediate_context(dev);
    PV1 = ru_make_pipe(dev, 2, RU_PS_VARY, 1, 0);
    PV2 = ru_make_pipe(dev, 2, RU_PS_VARY, 2, 0);
    PC1 = ru_make_pipe(dev, 2, RU_PS_CB, 1, 0);
    PC4 = ru_make_pipe(dev, 2, RU_PS_CB, 4, 0);
    PZ = ru_make_pipe(dev, 2, RU_PS_NONE, 0, 0);
    kiln_pixel_shader_desc td = {ps_tex, 1, 1, 0, NULL, NULL, 0};
    CHECK_RESULT(kiln_create_pixel_shader(dev, &td, &PSTEX), KILN_OK);

    test_cull_modes();
    test_wireframe();
    test_wireframe_facing();
    test_scissor();
    test_viewport();
    test_depth_funcs();
    test_stencil();
    test_blend();
    test_write_masks();
    test_mrt_and_formats();
    test_depth_bias_and_clip();
    test_discard();
    test_sampling();
    test_generate_mips();
    test_instancing();
    test_indexed();
    test_strips();
    test_lines_points();
    test_dynamic_constants();

    if (CB.id)
        kiln_destroy_buffer(dev, CB);
    kiln_destroy_pixel_shader(dev, PSTEX);
    ru_free_pipe(dev, &PV1);
    ru_free_pipe(dev, &PV2);
    ru_free_pipe(dev, &PC1);
    ru_free_pipe(dev, &PC4);
    ru_free_pipe(dev, &PZ);
    kiln_device_destroy(dev);
    return th_exit();
}
