/*
 * test_effect_d32: the vertex color and lit effects behind the D32_FLOAT
 * depth test give the same depth and color bytes at every SIMD level. At
 * the AVX-512 level such a draw into an RGBA8 or BGRA8 target, unblended,
 * takes one fused kernel per block (pixel_avx512.c's effect_d32: depths,
 * test, interpolation, lighting and store with the values in registers);
 * at the AVX2 level tested_shade's calls (kr_block_depth_avx2,
 * kr_depth_d32_avx2, kr_shade_color_avx2 or kr_shade_lit_avx2 and the
 * store); at SSE2 the general pixel path and the effect's SSE2 kernel, the
 * reference.
 *
 * A 37x29 target (partly covered blocks at the right and bottom edges)
 * and a 100x70 one (four tiles; rows without padding, so that a block
 * reaching past the right edge would show in the next row) of either
 * byte order whose depth starts as random values with special
 * ones mixed in (NaN, +-0, +-inf, a subnormal, 1 and 0.5), then random
 * triangles, small (a block or two) and large, some flat at z = 0.5 and
 * the others sloped from -0.2 to 1.2 with depth clipping off, each vertex
 * at its own w (perspective: the 1/w plane is not flat) or all at w = 1,
 * colors from -0.25 to 1.25 (clamped on the way out), for the lit effect
 * normals from -1 to 1 with zero, tiny, huge and NaN ones now and then
 * (1/length 0 for the first three, d 0 for the last) and the light's constants in the pixel stage's
 * cb0; every compare function, writes on and off, the viewport's depth range [0, 1] or [0.25, 0.75]
 * (both clamps of the interpolated depth), every other draw scissored to a random rect, every
 * third after a depth clear (the depth plane in a tile buffer). The bytes
 * must be equal at every level, the fused kernel must have been chosen at the AVX-512 level
 * (kr_effect_d32_chosen), and the test must both pass and reject pixels.
 *
 * At the AVX-512 level a small triangle's blocks start at its own corner
 * rather than at multiples of 4 (kr_drawx.direct_any: the kernel's pixels
 * depend on their centers alone), and a rect of at most 4x4 pixels goes to
 * the kernel's corner4 twin, which finds its coverage itself. That level
 * runs twice, the second time with every block aligned (kr_corner_force
 * 1), and both images must be the others' bytes. In the scissored draws
 * one triangle in ten is tens of times the target's size, and half of the
 * scissor rects are 1 to 8 pixels a side: edge values there pass int32,
 * which the window and corner4 must find and leave to the general path.
 * The corner windows, corner4's rects and its declines are counted run by
 * run, and must have been taken at the AVX-512 level, in no other run.
 */
#include "raster/effects.h"
#include "raster/prim.h"
#include "raster_util.h"

#include <stdio.h>

enum { WMAX = 100, HMAX = 70, NTRI = 40, ROUNDS = 2, VF = 12 /* floats per vertex */ };

/* Position (clip space), color and normal per vertex: a triangle around a
 * random center, a tenth of them spanning up to most of the target, the
 * rest a few pixels; with `huge`, one in ten instead tens of times the
 * target's size (edge values past int32 in a scissor rect's few pixels);
 * with `persp` every vertex at its own w. */
static void make_tris(th_rng *r, float *v, int persp, int huge)
{
    for (int t = 0; t < NTRI; t++) {
        int flat = th_below(r, 3) == 0;
        /* now and then a triangle of zero normals, tiny ones (their squares
         * underflow: length 0, dot not), huge ones (length inf) or one NaN
         * component (d 0) */
        const uint64_t kind = th_below(r, 16);
        const float scale = kind == 0 ? 0.0f : kind == 1 ? 1e-25f : kind == 2 ? 1e25f : 1.0f;
        float cx = th_frand(r, -1.0f, 1.0f), cy = th_frand(r, -1.0f, 1.0f);
        const uint64_t size = th_below(r, 10);
        float s = size == 0 && huge ? th_frand(r, 20.0f, 60.0f)
                  : size == 0       ? th_frand(r, 0.3f, 0.9f)
                  : size < 5        ? th_frand(r, 0.05f, 0.3f)
                                    : th_frand(r, 0.01f, 0.1f);
        for (int j = 0; j < 3; j++) {
            float *p = v + (size_t)(3 * t + j) * VF;
            float w = persp ? th_frand(r, 0.5f, 2.0f) : 1.0f;
            p[0] = (cx + th_frand(r, -s, s)) * w;
            p[1] = (cy + th_frand(r, -s, s)) * w;
            p[2] = (flat ? 0.5f : th_frand(r, -0.2f, 1.2f)) * w;
            p[3] = w;
            for (int c = 0; c < 4; c++)
                p[4 + c] = th_frand(r, -0.25f, 1.25f);
            for (int c = 0; c < 4; c++)
                p[8 + c] = c == 3 ? 0.0f : th_frand(r, -1.0f, 1.0f) * scale;
            if (kind == 3)
                p[8 + th_below(r, 3)] = ru_bits_f(0x7fc00000u);
        }
    }
}

int main(void)
{
#if KR_EFFECTS_X86
    kr_simd lv[3];
    int nlv = kr_effects_vector_levels(lv);
    if (nlv < 2) {
        printf("one vector level here: nothing to compare\n");
        return th_exit();
    }
    kr_simd initial = kr_effects_active_level();
    /* no deferred shading (KILN_HSR=all would take these draws): the
     * blocks go to the draw's direct function, the kernel chosen */
    kr_hsr_force(1);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    /* the pass-through vertex shader (position, color, normal), each
     * effect's pixel shader; the lit one's cb0: the light's direction,
     * color and the ambient, a float4 each */
    kiln_vertex_shader vs = ru_make_vs(dev, 3, 2);
    kiln_input_layout il = ru_make_layout(dev, vs, 3);
    static const kiln_effect fx[2] = {KILN_EFFECT_VERTEX_COLOR, KILN_EFFECT_LIT};
    kiln_pixel_shader ps[2];
    for (int e = 0; e < 2; e++) {
        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get(fx[e], NULL, &pd), KILN_OK);
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps[e]), KILN_OK);
    }
    static const float light[12] = {0.3f, -0.8f, -0.5f, 0,    0.9f, 0.7f,
                                    1.1f, 0,     0.2f,  0.1f, 0.3f, 0};
    kiln_buffer cb = ru_cbuffer(dev, light, 12);
    CHECK_RESULT(kiln_ps_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    kiln_rasterizer_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.cull = KILN_CULL_NONE;
    rd.depth_clip_disable = 1;
    kiln_rasterizer_state rs = ru_rs(dev, rd);
    rd.scissor_enable = 1;
    kiln_rasterizer_state rs_sc = ru_rs(dev, rd);
    static const kiln_format rt_fmts[2] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM};
    static float depth0[WMAX * HMAX], verts[3 * NTRI * VF];
    /* one image per level, and at the AVX-512 level a second one with
     * every block at a multiple of 4 (kr_corner_force 1) */
    static uint8_t zimg[4][WMAX * HMAX * 4], cimg[4][WMAX * HMAX * 4];
    int W = 37, H = 29; /* the target's size (below: 37x29, then 100x70) */
    th_rng r = {0xC0D32ull};
    uint64_t compared = 0, differ = 0, passed = 0, rejected = 0, nan_kept = 0;
    int fused_levels = 0, avx512 = 0;
    for (int l = 0; l < nlv; l++)
        avx512 |= lv[l] == KR_SIMD_AVX512;
    const int nrun = nlv + avx512; /* the last run: AVX-512, aligned blocks */
    /* each run's windows at a triangle's corner, and rects to corner4 */
    uint64_t corners[4][3] = {{0}}; /* and the rects corner4 declined */
    kr_corner_force(2);            /* counted */
    for (int fe = 0; fe < 8; fe++) {
        const int fi = fe & 1, e = fe >> 1 & 1; /* target byte order, effect */
        W = fe >> 2 ? 100 : 37;
        H = fe >> 2 ? 70 : 29;
        CHECK_RESULT(kiln_ps_set_shader(ctx, ps[e]), KILN_OK);
        ru_tex rt = ru_rt(dev, W, H, rt_fmts[fi]);
        for (int f = KILN_COMPARE_NEVER; f <= KILN_COMPARE_ALWAYS; f++)
            for (int write = 0; write < 2; write++)
                for (int round = 0; round < 2 * ROUNDS; round++) {
                    int persp = round & 1, narrow = (round >> 1) & 1;
                    /* every other draw scissored to a random rect: blocks
                     * at a triangle's corner reach past it */
                    const int scissor = (f + write + round) & 1;
                    /* every third one after a depth clear: the depth
                     * plane in a tile buffer (tilebuf.c) */
                    const int zclear = (f + round) % 3 == 0;
                    CHECK_RESULT(kiln_rs_set_state(ctx, scissor ? rs_sc : rs), KILN_OK);
                    if (scissor) {
                        /* half of them of 1 to 8 pixels a side: a huge
                         * triangle's rect there is a corner4 one or a
                         * window's, with edge values past int32 */
                        const int tiny = (f + round) & 2;
                        kiln_rect sc;
                        sc.left = (int32_t)th_below(&r, W / 2);
                        sc.top = (int32_t)th_below(&r, H / 2);
                        sc.right = sc.left +
                                   (tiny ? 1 + (int32_t)th_below(&r, 8)
                                         : 3 + (int32_t)th_below(&r, (uint64_t)(W - 3 - sc.left)));
                        sc.bottom =
                            sc.top + (tiny ? 1 + (int32_t)th_below(&r, 8)
                                           : 3 + (int32_t)th_below(&r, (uint64_t)(H - 3 - sc.top)));
                        CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
                    }
                    ru_random_depths(&r, depth0, W * H);
                    make_tris(&r, verts, persp, scissor);
                    ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, narrow ? 0.25f : 0.0f,
                                    narrow ? 0.75f : 1.0f);
                    kiln_depth_stencil_desc dd = {0};
                    dd.depth_func = (kiln_compare)f;
                    dd.depth_write_disable = !write;
                    kiln_depth_stencil_state dss = ru_dss(dev, dd);
                    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
                    for (int l = 0; l < nrun; l++) {
                        const bool aligned = l == nlv;
                        CHECK_RESULT(kr_effects_force_level(aligned ? KR_SIMD_AVX512 : lv[l]),
                                     KILN_OK);
                        kr_corner_force(aligned ? 1 : 2);
                        ru_tex ds = ru_ds_data(dev, W, H, KILN_FORMAT_D32_FLOAT, depth0);
                        static const float clear[4] = {0, 0, 0, 0};
                        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
                        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
                        if (zclear)
                            CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 0.6f, 0),
                                         KILN_OK);
                        (void)kr_effect_d32_chosen();
                        uint64_t c0[3], c1[3];
                        kr_corner_counts(&c0[0], &c0[1], &c0[2]);
                        ru_draw(dev, ctx, verts, 3 * NTRI, 4 * VF, KILN_TOPOLOGY_TRIANGLE_LIST);
                        CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}),
                                     KILN_OK);
                        /* the level is read when the scene executes: ru_read
                         * finishes it before the next level */
                        CHECK(ru_read(dev, ds.tex, 0, zimg[l]) != 0);
                        CHECK(ru_read(dev, rt.tex, 0, cimg[l]) != 0);
                        kr_corner_counts(&c1[0], &c1[1], &c1[2]);
                        for (int k = 0; k < 3; k++)
                            corners[l][k] += c1[k] - c0[k];
                        bool fused = kr_effect_d32_chosen();
                        const kr_simd at = aligned ? KR_SIMD_AVX512 : lv[l];
                        if (fused != (at == KR_SIMD_AVX512) && fused_levels >= 0) {
                            fprintf(stderr, "    %s: the fused kernel %s\n", kr_simd_name(at),
                                    fused ? "was chosen" : "was not chosen");
                            fused_levels = -1;
                        }
                        if (fused && fused_levels >= 0)
                            fused_levels = 1;
                        ru_free_tex(dev, &ds);
                    }
                    kiln_destroy_depth_stencil_state(dev, dss);
                    for (int l = 1; l < nrun; l++) {
                        compared += 2;
                        const size_t bytes = (size_t)W * (size_t)H * 4;
                        int dz = memcmp(zimg[0], zimg[l], bytes) != 0;
                        int dc = memcmp(cimg[0], cimg[l], bytes) != 0;
                        if ((dz || dc) && differ < 4)
                            fprintf(stderr,
                                    "    %dx%d %s %s func %d write %d round %d: %s differs "
                                    "between %s and %s\n",
                                    W, H, e ? "lit" : "color", fi ? "BGRA" : "RGBA", f, write,
                                    round, dz ? "depth" : "color", kr_simd_name(lv[0]),
                                    l == nlv ? "avx512 with aligned blocks" : kr_simd_name(lv[l]));
                        differ += (uint64_t)(dz + dc);
                    }
                    for (int i = 0; i < W * H; i++) {
                        uint32_t c;
                        memcpy(&c, cimg[0] + 4 * i, 4);
                        passed += c != 0;
                        rejected += c == 0;
                        float z;
                        memcpy(&z, zimg[0] + 4 * i, 4);
                        nan_kept += z != z;
                    }
                }
        ru_free_tex(dev, &rt);
    }
    kr_corner_force(0);
    printf("vertex color and lit behind D32 at %d levels (%s): %llu images compared, %llu differ; "
           "%llu "
           "pixels passed, %llu rejected, %llu NaN depths at the end; at a triangle's corner %llu "
           "windows of blocks, %llu rects of 4x4 or less taken by corner4, %llu declined (int32)\n",
           nlv,
           avx512 ? "the fused kernel at AVX-512, its blocks at the triangles' corners and aligned"
                  : "no AVX-512 here",
           (unsigned long long)compared, (unsigned long long)differ, (unsigned long long)passed,
           (unsigned long long)rejected, (unsigned long long)nan_kept,
           (unsigned long long)(corners[0][0] + corners[1][0] + corners[2][0] + corners[3][0]),
           (unsigned long long)(corners[0][1] + corners[1][1] + corners[2][1] + corners[3][1]),
           (unsigned long long)(corners[0][2] + corners[1][2] + corners[2][2] + corners[3][2]));
    CHECK(differ == 0);
    /* the corner windows and corner4 were taken at the AVX-512 level, and
     * only there (not at the others, nor in the run with aligned blocks),
     * and corner4 declined the huge triangles' rects there */
    static const char *const what[3] = {"windows", "corner4 rects", "corner4 declines"};
    for (int l = 0; l < nrun; l++)
        for (int k = 0; k < 3; k++) {
            const bool there = l < nlv && lv[l] == KR_SIMD_AVX512;
            const uint64_t least = k == 2 ? 10 : 1000;
            if (there ? corners[l][k] < least : corners[l][k] != 0)
                fprintf(stderr, "    run %d: %llu %s\n", l, (unsigned long long)corners[l][k],
                        what[k]);
            CHECK(there ? corners[l][k] >= least : corners[l][k] == 0);
        }
    CHECK(passed > 1000 && rejected > 1000 && nan_kept > 0);
    /* the kernel was chosen at the AVX-512 level, and only there */
    CHECK(fused_levels == (avx512 ? 1 : 0));
    W = 37;
    H = 29;
    if (avx512) {
        /* and not for what it does not do: blending, a partial write mask,
         * a D24S8 buffer (against the same draw as a control) */
        CHECK_RESULT(kr_effects_force_level(KR_SIMD_AVX512), KILN_OK);
        CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
        ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
        kiln_depth_stencil_desc dd = {0};
        dd.depth_func = KILN_COMPARE_LESS;
        kiln_depth_stencil_state dss = ru_dss(dev, dd);
        CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
        kiln_blend_state add = ru_bs_add(dev);
        kiln_blend_desc bd;
        memset(&bd, 0, sizeof bd);
        bd.rt[0].write_mask = KILN_COLOR_WRITE_R | KILN_COLOR_WRITE_G;
        kiln_blend_state rg = ru_bs(dev, &bd);
        static const char *const what[4] = {"the plain draw", "blending", "a write mask", "D24S8"};
        for (int k = 0; k < 4; k++) {
            ru_tex ds =
                ru_ds(dev, W, H, k == 3 ? KILN_FORMAT_D24_UNORM_S8_UINT : KILN_FORMAT_D32_FLOAT);
            CHECK_RESULT(kiln_om_set_blend_state(ctx,
                                                 k == 1   ? add
                                                 : k == 2 ? rg
                                                          : (kiln_blend_state){0},
                                                 NULL),
                         KILN_OK);
            CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
            CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
            (void)kr_effect_d32_chosen();
            ru_draw(dev, ctx, verts, 3 * NTRI, 4 * VF, KILN_TOPOLOGY_TRIANGLE_LIST);
            CHECK_RESULT(kiln_finish(ctx), KILN_OK);
            bool chosen = kr_effect_d32_chosen();
            if (chosen != (k == 0))
                fprintf(stderr, "    %s: the kernel %s\n", what[k],
                        chosen ? "was chosen" : "was not chosen");
            CHECK(chosen == (k == 0));
            CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
            ru_free_tex(dev, &ds);
        }
        CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
        kiln_destroy_blend_state(dev, add);
        kiln_destroy_blend_state(dev, rg);
        kiln_destroy_depth_stencil_state(dev, dss);
        ru_free_tex(dev, &rt);
    }
    kr_hsr_force(0);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_rasterizer_state(dev, rs_sc);
    for (int e = 0; e < 2; e++)
        kiln_destroy_pixel_shader(dev, ps[e]);
    kiln_destroy_buffer(dev, cb);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_device_destroy(dev);
#else
    printf("not an x86 build: one SIMD level, nothing to compare\n");
#endif
    return th_exit();
}
