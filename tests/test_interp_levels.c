/*
 * test_interp_levels: the pixel shader's varyings are the same floats at
 * every SIMD level. At the AVX2 level shade_block interpolates a
 * triangle's block two rows per vector (pixel_avx2.c's
 * kr_interpolate_avx2), at AVX-512 the whole block per vector
 * (pixel_avx512.c's kr_interpolate_avx512); at SSE2 a row at a time
 * (tile.c's interpolate).
 * Random triangles (perspective with w in [0.3, 4], and equal w at the
 * vertices, the affine case; tiny, medium and large, so partly covered
 * blocks and whole ones), four varyings of random values, each written
 * by the pixel shader to its own R32G32B32A32_FLOAT target: the four
 * targets' bits must be equal at every level. The images must not be
 * empty. The same for the pixel shader's depth input (kr_block_depth_avx2
 * at AVX2, kr_block_depth_avx512 at AVX-512, block_depth at SSE2), under viewports whose depth range
 * clamps the triangles' depths (depth clipping off, depths from -w to
 * 2w; a single depth included). Where the CPU
 * has no AVX2 + FMA there is one level: not run.
 */
#include "raster_util.h"
#include "raster/effects.h"

#include <stdio.h>

enum { W = 61, H = 47, NVARY = 4, NTRI = 40, ROUNDS = 25 };

/* One round's triangles: position (clip space), then NVARY float4. */
static void make_tris(th_rng *r, float *v)
{
    const uint32_t stride = 4 * (1 + NVARY);
    for (uint32_t t = 0; t < NTRI; t++) {
        int affine = th_below(r, 4) == 0;
        float wt = th_frand(r, 0.3f, 4.0f);
        float cx = th_frand(r, -0.8f, 0.8f), cy = th_frand(r, -0.8f, 0.8f);
        uint64_t kind = th_below(r, 3);
        float spread = kind == 0 ? 0.05f : kind == 1 ? 0.4f : 1.5f;
        for (int j = 0; j < 3; j++) {
            float *p = v + (size_t)(3 * t + (uint32_t)j) * stride;
            float w = affine ? wt : th_frand(r, 0.3f, 4.0f);
            p[0] = (cx + th_frand(r, -spread, spread)) * w;
            p[1] = (cy + th_frand(r, -spread, spread)) * w;
            p[2] = th_frand(r, 0.0f, 1.0f) * w;
            p[3] = w;
            for (int k = 0; k < 4 * NVARY; k++)
                p[4 + k] = th_frand(r, -1000.0f, 1000.0f);
        }
    }
}

static void render(kiln_device *dev, kiln_context *ctx, const ru_pipe *pp, const ru_tex *rt,
                   const float *verts, float *out[NVARY])
{
    static const float zero[4] = {0, 0, 0, 0};
    kiln_rtv rtv[NVARY];
    for (int k = 0; k < NVARY; k++) {
        rtv[k] = rt[k].rtv;
        CHECK_RESULT(kiln_clear_rtv(ctx, rt[k].rtv, zero), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, NVARY, rtv, (kiln_dsv){0}), KILN_OK);
    ru_draw(dev, ctx, verts, 3 * NTRI, pp->stride, KILN_TOPOLOGY_TRIANGLE_LIST);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    for (int k = 0; k < NVARY; k++)
        CHECK(ru_read(dev, rt[k].tex, 0, out[k]) != 0);
}

/* Target 0 = the pixel's depth input in all four channels. */
static void ps_depth(kiln_ps_args *a)
{
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < KILN_PS_BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = a->z[i];
}

int main(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("no AVX2 + FMA here: one SIMD level, nothing to compare\n");
        return th_exit();
    }
    kr_simd initial = kr_effects_active_level();
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    ru_pipe pp = ru_make_pipe(dev, NVARY, RU_PS_VARY, NVARY, 0);
    ru_bind_pipe(ctx, &pp);
    kiln_rasterizer_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.cull = KILN_CULL_NONE;
    CHECK_RESULT(kiln_rs_set_state(ctx, ru_rs(dev, rd)), KILN_OK);
    ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, 0.0f, 1.0f);
    ru_tex rt[NVARY];
    for (int k = 0; k < NVARY; k++)
        rt[k] = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
    static float verts[3 * NTRI * 4 * (1 + NVARY)];
    static float img[3][NVARY][W * H * 4];
    kr_simd levels[3];
    int nlv = kr_effects_vector_levels(levels);
    th_rng r = {0x1E7E15ull};
    uint64_t words = 0, differ = 0, drawn = 0;
    for (int round = 0; round < ROUNDS; round++) {
        make_tris(&r, verts);
        for (int l = 0; l < nlv; l++) {
            /* the level is read when the scene executes: kiln_finish
             * (ru_read) before switching */
            CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
            float *out[NVARY] = {img[l][0], img[l][1], img[l][2], img[l][3]};
            render(dev, ctx, &pp, rt, verts, out);
        }
        for (int l = 1; l < nlv; l++)
            for (int k = 0; k < NVARY; k++)
                for (int i = 0; i < W * H * 4; i++) {
                    words++;
                    differ += memcmp(&img[0][k][i], &img[l][k][i], 4) != 0;
                    drawn += img[0][k][i] != 0.0f;
                }
    }
    printf("varyings at every vector level against SSE2: %llu floats compared, %llu differ, %llu drawn\n",
           (unsigned long long)words, (unsigned long long)differ, (unsigned long long)drawn);
    CHECK(differ == 0);
    CHECK(drawn > words / 4);

    /* the depth input, under several depth ranges */
    kiln_pixel_shader_desc dd = {0};
    dd.fn = ps_depth;
    dd.num_outputs = 1;
    kiln_pixel_shader psz;
    CHECK_RESULT(kiln_create_pixel_shader(dev, &dd, &psz), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, psz), KILN_OK);
    static const float ranges[4][2] = {{0.0f, 1.0f}, {0.3f, 0.6f}, {0.1f, 0.25f}, {0.5f, 0.5f}};
    /* depth clipping off: depths past the range reach the clamp */
    rd.depth_clip_disable = 1;
    kiln_rasterizer_state rs_noclip = ru_rs(dev, rd);
    CHECK_RESULT(kiln_rs_set_state(ctx, rs_noclip), KILN_OK);
    uint64_t zwords = 0, zdiffer = 0, zdrawn = 0, clamped = 0;
    for (int round = 0; round < ROUNDS; round++) {
        make_tris(&r, verts);
        for (uint32_t v = 0; v < 3 * NTRI; v++) /* z in [-w, 2w] */
            verts[v * 4 * (1 + NVARY) + 2] = verts[v * 4 * (1 + NVARY) + 2] * 3.0f - verts[v * 4 * (1 + NVARY) + 3];
        const float *range = ranges[round % 4];
        for (int l = 0; l < nlv; l++) {
            CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
            ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, range[0], range[1]);
            float *out[NVARY] = {img[l][0], img[l][1], img[l][2], img[l][3]};
            render(dev, ctx, &pp, rt, verts, out);
        }
        for (int i = 0; i < W * H * 4; i++) {
            zwords++;
            for (int l = 1; l < nlv; l++)
                zdiffer += memcmp(&img[0][0][i], &img[l][0][i], 4) != 0;
            zdrawn += img[0][0][i] != 0.0f;
            clamped += img[0][0][i] == range[0] || img[0][0][i] == range[1];
        }
    }
    printf("depth at every vector level against SSE2: %llu floats compared, %llu differ, %llu drawn, %llu at a bound\n",
           (unsigned long long)zwords, (unsigned long long)zdiffer, (unsigned long long)zdrawn,
           (unsigned long long)clamped);
    CHECK(zdiffer == 0);
    CHECK(zdrawn > zwords / 4);
    CHECK(clamped > zwords / 20);
    kiln_destroy_pixel_shader(dev, psz);
    kiln_destroy_rasterizer_state(dev, rs_noclip);
    ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, 0.0f, 1.0f);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    for (int k = 0; k < NVARY; k++)
        ru_free_tex(dev, &rt[k]);
    ru_free_pipe(dev, &pp);
    kiln_device_destroy(dev);
#else
    printf("not an x86 build: one SIMD level, nothing to compare\n");
#endif
    return th_exit();
}
