/*
 * test_depth_levels: the D32_FLOAT and D24_UNORM_S8_UINT depth tests (no
 * stencil) give the same depth and color bytes at every SIMD level. At the AVX-512 level a
 * block's 16 depths are compared in one vector with masked loads and
 * stores (pixel_avx512.c's kr_depth_d32_avx512); at the AVX2 level two
 * rows per vector, whole rows read and written back inside the target and
 * masked loads and stores at its edges (pixel_avx2.c's kr_depth_d32_avx2);
 * at SSE2 a row of four at a time or pixel by pixel at the target's right
 * edge (tile.c's depth_d32). D24S8: at the AVX2 and AVX-512 levels
 * pixel_avx2.c's kr_depth_d24_avx2 (two rows per vector, masked at the
 * edges), at SSE2 tile.c's pixel-by-pixel loop, the reference.
 *
 * A 37x29 target (neither a multiple of 4: partly covered blocks at the
 * right and bottom edges, where the rows end inside the block) whose
 * depth starts as random values with special ones mixed in (NaN, +-0,
 * +-inf, a subnormal, 1, and 0.5 often), then random triangles, some flat
 * at z = 0.5 (so EQUAL, LESS_EQUAL and GREATER_EQUAL meet equal
 * operands), others sloped, with depth clipping off and z from -0.2 to
 * 1.2; every compare function, writes on and off. The depth and color
 * bytes must be equal at every level, and the test must both pass and
 * reject pixels. D24S8 starts as random words (random stencil bytes, 24-bit
 * depths with 0, 0xffffff and 0x800000 - where z = 0.5 lands - mixed in),
 * and its stencil bytes must come out as they went in.
 */
#include "raster/effects.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 37, H = 29, NTRI = 30, ROUNDS = 3 };

/* D24S8 words: a random stencil byte over a 24-bit depth. */
static void make_depth24(th_rng *r, uint32_t *d)
{
    static const uint32_t special[] = {0u, 0xffffffu, 0x800000u, 0x7fffffu, 1u};
    for (int i = 0; i < W * H; i++) {
        uint32_t k = th_below(r, 6);
        uint32_t z = k == 0 ? special[th_below(r, sizeof special / sizeof special[0])]
                            : (uint32_t)th_next(r) & 0xffffffu;
        d[i] = (uint32_t)th_below(r, 256) << 24 | z;
    }
}

/* Position (clip space, w = 1) and one float4 color per vertex. */
static void make_tris(th_rng *r, float *v)
{
    for (int t = 0; t < NTRI; t++) {
        int flat = th_below(r, 3) == 0;
        float cx = th_frand(r, -1.0f, 1.0f), cy = th_frand(r, -1.0f, 1.0f),
              s = th_frand(r, 0.05f, 0.9f);
        float col[4] = {th_frand(r, 0, 1), th_frand(r, 0, 1), th_frand(r, 0, 1), 1.0f};
        for (int j = 0; j < 3; j++) {
            float *p = v + (size_t)(3 * t + j) * 8;
            p[0] = cx + th_frand(r, -s, s);
            p[1] = cy + th_frand(r, -s, s);
            p[2] = flat ? 0.5f : th_frand(r, -0.2f, 1.2f);
            p[3] = 1.0f;
            memcpy(p + 4, col, sizeof col);
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
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pp = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &pp);
    kiln_rasterizer_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.cull = KILN_CULL_NONE;
    rd.depth_clip_disable = 1;
    kiln_rasterizer_state rs = ru_rs(dev, rd);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs), KILN_OK);
    ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, 0.0f, 1.0f);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    static float depth0[W * H], verts[3 * NTRI * 8];
    static uint8_t zimg[3][W * H * 4], cimg[3][W * H * 4];
    th_rng r = {0xDE9742ull};
    uint64_t compared = 0, differ = 0, passed = 0, rejected = 0, nan_kept = 0, stencil_changed = 0;
    uint64_t passed24 = 0, rejected24 = 0;
    static const kiln_format fmts[2] = {KILN_FORMAT_D32_FLOAT, KILN_FORMAT_D24_UNORM_S8_UINT};
    for (int fi = 0; fi < 2; fi++)
        for (int f = KILN_COMPARE_NEVER; f <= KILN_COMPARE_ALWAYS; f++)
            for (int write = 0; write < 2; write++)
                for (int round = 0; round < ROUNDS; round++) {
                    if (fi == 0)
                        ru_random_depths(&r, depth0, W * H);
                    else
                        make_depth24(&r, (uint32_t *)(void *)depth0);
                    make_tris(&r, verts);
                    kiln_depth_stencil_desc dd = {0};
                    dd.depth_func = (kiln_compare)f;
                    dd.depth_write_disable = !write;
                    kiln_depth_stencil_state dss = ru_dss(dev, dd);
                    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
                    for (int l = 0; l < nlv; l++) {
                        CHECK_RESULT(kr_effects_force_level(lv[l]), KILN_OK);
                        ru_tex ds = ru_ds_data(dev, W, H, fmts[fi], depth0);
                        static const float clear[4] = {0, 0, 0, 0};
                        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, clear), KILN_OK);
                        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, ds.dsv), KILN_OK);
                        ru_draw(dev, ctx, verts, 3 * NTRI, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
                        CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}),
                                     KILN_OK);
                        /* the level is read when the scene executes: ru_read
                         * finishes it before the next level */
                        CHECK(ru_read(dev, ds.tex, 0, zimg[l]) != 0);
                        CHECK(ru_read(dev, rt.tex, 0, cimg[l]) != 0);
                        ru_free_tex(dev, &ds);
                    }
                    kiln_destroy_depth_stencil_state(dev, dss);
                    for (int l = 1; l < nlv; l++) {
                        compared += 2;
                        int dz = memcmp(zimg[0], zimg[l], sizeof zimg[0]) != 0;
                        int dc = memcmp(cimg[0], cimg[l], sizeof cimg[0]) != 0;
                        if ((dz || dc) && differ < 4)
                            fprintf(
                                stderr,
                                "    %s func %d write %d round %d: %s differs between %s and %s\n",
                                fi ? "D24S8" : "D32", f, write, round, dz ? "depth" : "color",
                                kr_simd_name(lv[0]), kr_simd_name(lv[l]));
                        differ += (uint64_t)(dz + dc);
                    }
                    for (int i = 0; i < W * H; i++) {
                        uint32_t c;
                        memcpy(&c, cimg[0] + 4 * i, 4);
                        if (fi == 1) {
                            uint32_t w0, w1;
                            memcpy(&w0, (const uint8_t *)depth0 + 4 * i, 4);
                            memcpy(&w1, zimg[nlv - 1] + 4 * i, 4);
                            stencil_changed += (w0 >> 24) != (w1 >> 24);
                            passed24 += c != 0;
                            rejected24 += c == 0;
                            continue;
                        }
                        passed += c != 0;
                        rejected += c == 0;
                        float z;
                        memcpy(&z, zimg[0] + 4 * i, 4);
                        nan_kept += z != z;
                    }
                }
    printf(
        "depth test at %d levels: %llu images compared, %llu differ; D32: %llu pixels passed, %llu "
        "rejected, %llu NaN depths at the end; D24S8: %llu passed, %llu rejected, %llu stencil "
        "bytes changed\n",
        nlv, (unsigned long long)compared, (unsigned long long)differ, (unsigned long long)passed,
        (unsigned long long)rejected, (unsigned long long)nan_kept, (unsigned long long)passed24,
        (unsigned long long)rejected24, (unsigned long long)stencil_changed);
    CHECK(differ == 0);
    CHECK(passed > 1000 && rejected > 1000 && nan_kept > 0);
    CHECK(passed24 > 1000 && rejected24 > 1000);
    CHECK(stencil_changed == 0);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    ru_free_tex(dev, &rt);
    kiln_destroy_rasterizer_state(dev, rs);
    ru_free_pipe(dev, &pp);
    kiln_device_destroy(dev);
#else
    printf("not an x86 build: one SIMD level, nothing to compare\n");
#endif
    return th_exit();
}
