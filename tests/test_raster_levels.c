/*
 * test_raster_levels: the general pixel path gives the same floats at every
 * SIMD level this CPU has. At the AVX2 level shade_block interpolates the
 * varyings two rows per vector (pixel_avx2.c's kr_varyings_avx2), at the
 * SSE2 level one row: random triangles in perspective (w from 0.3 to 40 at
 * the vertices, so 1/w varies across every block) and affine ones (equal
 * w: the one-divide case), clipped by the target's edges, carry four
 * float4 varyings of random magnitudes into four R32G32B32A32_FLOAT
 * targets, written by the pixel shader unchanged: the targets must be
 * bit for bit the same at both levels, untouched pixels included.
 * (Blending's levels: test_raster_blend_exact.)
 */
#define _POSIX_C_SOURCE 200809L
#include "raster_util.h"
#include "raster/effects.h"

#include <stdio.h>

enum { W = 61, H = 37, NVARY = 4, NTRI = 400 };

static kiln_device *dev;
static kiln_context *ctx;

/* Renders the triangles at `level` and reads the four targets back. */
static void render(kr_simd level, const float *verts, float *out[NVARY])
{
    CHECK_RESULT(kr_effects_force_level(level), KILN_OK);
    ru_tex rt[NVARY];
    kiln_rtv rtv[NVARY];
    for (int r = 0; r < NVARY; r++) {
        rt[r] = ru_rt(dev, W, H, KILN_FORMAT_R32G32B32A32_FLOAT);
        rtv[r] = rt[r].rtv;
        const float clear[4] = {-7.0f, -7.0f, -7.0f, -7.0f};
        CHECK_RESULT(kiln_clear_rtv(ctx, rtv[r], clear), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, NVARY, rtv, (kiln_dsv){0}), KILN_OK);
    ru_set_viewport(ctx, 0, 0, W, H, 0, 1);
    ru_draw(dev, ctx, verts, 3 * NTRI, 16 * (1 + NVARY), KILN_TOPOLOGY_TRIANGLE_LIST);
    for (int r = 0; r < NVARY; r++) {
        out[r] = ru_read_f32(dev, &rt[r]);
        ru_free_tex(dev, &rt[r]);
    }
}

int main(void)
{
    kr_simd lv[2];
    int nlv = kr_effects_vector_levels(lv);
    if (nlv < 2) {
        printf("fewer than two SIMD levels on this CPU: nothing to compare\n");
        return th_exit();
    }
    dev = th_device(KILN_EXEC_ASYNC, 2);
    ctx = kiln_device_immediate_context(dev);
    ru_pipe pp = ru_make_pipe(dev, NVARY, RU_PS_VARY, NVARY, 0);
    ru_bind_pipe(ctx, &pp);
    CHECK_RESULT(kiln_rs_set_state(ctx, (kiln_rasterizer_state){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);

    static float verts[3 * NTRI * 4 * (1 + NVARY)];
    th_rng r = {0x1e7e15ull};
    float *v = verts;
    for (int t = 0; t < NTRI; t++) {
        int affine = th_below(&r, 4) == 0;
        float wa = 0.3f + (float)th_below(&r, 1000) * 0.04f;
        for (int k = 0; k < 3; k++) {
            float w = affine ? wa : 0.3f + (float)th_below(&r, 1000) * 0.04f;
            /* pixel position, some outside the target */
            double px = -10.0 + (double)th_below(&r, (W + 20) * 16) / 16.0;
            double py = -10.0 + (double)th_below(&r, (H + 20) * 16) / 16.0;
            float c[2];
            ru_clip(W, H, px, py, c);
            v[0] = c[0] * w;
            v[1] = c[1] * w;
            v[2] = 0.5f * w;
            v[3] = w;
            v += 4;
            for (int c4 = 0; c4 < 4 * NVARY; c4++) {
                float mag = (float)(1u << th_below(&r, 12)) / 64.0f;
                *v++ = ((float)th_below(&r, 20001) / 10000.0f - 1.0f) * mag;
            }
        }
    }

    float *img[2][NVARY];
    render(lv[0], verts, img[0]);
    render(lv[1], verts, img[1]);
    long drawn = 0, differ = 0;
    for (int t = 0; t < NVARY; t++) {
        CHECK(img[0][t] && img[1][t]);
        if (!img[0][t] || !img[1][t])
            continue;
        for (int i = 0; i < W * H * 4; i++) {
            drawn += t == 0 && img[0][t][i] != -7.0f;
            if (memcmp(&img[0][t][i], &img[1][t][i], 4)) {
                if (differ++ < 3)
                    fprintf(stderr, "    target %d pixel %d channel %d: sse2 %.9g, avx2 %.9g\n", t,
                            i / 4, i % 4, img[0][t][i], img[1][t][i]);
            }
        }
        free(img[0][t]);
        free(img[1][t]);
    }
    CHECK_EQ_INT(differ, 0);
    /* the triangles cover a good part of the target (the test is not empty) */
    CHECK(drawn > W * H * 2);
    printf("varyings at sse2 and avx2: %d triangles, %ld channels of target 0 drawn, %ld of %d "
           "floats differ\n",
           NTRI, drawn, differ, W * H * 4 * NVARY);
    ru_free_pipe(dev, &pp);
    kiln_device_destroy(dev);
    return th_exit();
}
