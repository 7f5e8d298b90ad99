/*
 * test_sample_cmp: comparison samplers through the API, as a shadow map is
 * used. A depth pass writes a D32_FLOAT texture (left half 0.3, right half
 * 0.7); a second pass samples it with kiln_ps_sample_cmp (LESS_EQUAL,
 * LINEAR) and a reference of 0.5 at coordinates half a texel right of each
 * pixel's texel, so every pixel reads two texels with weight 1/2 each: 0
 * left of the edge, 1 right of it, exactly 1/2 at the edge column. The
 * same through kiln_ps_sample_cmp_level_zero. Both passes are captured
 * (the comparison sampler is record CREATE_SAMPLER_CMP) and replayed,
 * ASYNC and SERIAL, to the same floats. Misuse: a comparison function out
 * of range is refused (STATE_DESC); a plain sampler compares nothing.
 * (The filtering arithmetic itself: test_sampling.)
 */
#define _POSIX_C_SOURCE 200809L
#include "capture_util.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 32, H = 8 };

/* varying 0 = (u, v, ref, level_zero) */
static void ps_shadow(kiln_ps_args *a)
{
    float lit[KILN_PS_BLOCK];
    const float *u = KILN_PS_VARYING(a, 0, 0), *v = KILN_PS_VARYING(a, 0, 1);
    const float *ref = KILN_PS_VARYING(a, 0, 2);
    if (KILN_PS_VARYING(a, 0, 3)[0] > 0.5f)
        kiln_ps_sample_cmp_level_zero(a, 0, 0, u, v, ref, lit);
    else
        kiln_ps_sample_cmp(a, 0, 0, u, v, ref, lit);
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = lit[i];
        KILN_PS_COLOR(a, 0, 1)[i] = KILN_PS_COLOR(a, 0, 2)[i] = KILN_PS_COLOR(a, 0, 3)[i] = 0.0f;
    }
}

static const kiln_pixel_shader_desc SHADOW_PS = {.fn = ps_shadow, .num_outputs = 1, .num_varyings = 1};
static const kiln_vertex_shader_desc PASS_VS = {ru_vs_pass, 2, 1, NULL, RU_USER(2, 1)};

static void register_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(kiln_capture_register_pixel_shader(dev, "test.shadow", &SHADOW_PS), KILN_OK);
    CHECK_RESULT(kiln_capture_register_vertex_shader(dev, "test.pass", &PASS_VS), KILN_OK);
}

/* A rect from pixel x0 to x1 over the target at depth z, varying 0 =
 * (u offset by half a texel, v, ref, level_zero). */
static void rect(kiln_device *dev, kiln_context *ctx, double x0, double x1, float z, float ref,
                 float level_zero)
{
    float v[6 * 8], *p = v;
    const double xs[6] = {x0, x1, x0, x1, x1, x0}, ys[6] = {0, 0, H, 0, H, H};
    for (int i = 0; i < 6; i++) {
        p = ru_vtx(p, W, H, xs[i], ys[i], z);
        *p++ = (float)((xs[i] + 0.5) / W);
        *p++ = (float)(ys[i] / H);
        *p++ = ref;
        *p++ = level_zero;
    }
    ru_draw(dev, ctx, v, 6, 32, KILN_TOPOLOGY_TRIANGLE_LIST);
}

/* Renders both passes (level_zero: the second samples with
 * kiln_ps_sample_cmp_level_zero); returns the R32_FLOAT image. */
static float *render(kiln_device *dev, float level_zero)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    register_shaders(dev, NULL);
    kiln_texture dtex;
    kiln_texture2d_desc td = {W, H, 1, 1, KILN_FORMAT_D32_FLOAT, KILN_USAGE_DEFAULT,
                              KILN_BIND_DEPTH_STENCIL | KILN_BIND_SHADER_RESOURCE, 0, 0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &dtex), KILN_OK);
    kiln_dsv dsv;
    kiln_srv srv;
    CHECK_RESULT(kiln_create_dsv(dev, dtex, NULL, &dsv), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, dtex, NULL, &srv), KILN_OK);
    ru_tex rt = ru_rt(dev, W, H, KILN_FORMAT_R32_FLOAT);
    kiln_vertex_shader vs;
    kiln_pixel_shader ps;
    CHECK_RESULT(kiln_create_vertex_shader(dev, &PASS_VS, &vs), KILN_OK);
    CHECK_RESULT(kiln_create_pixel_shader(dev, &SHADOW_PS, &ps), KILN_OK);
    kiln_input_layout il = ru_make_layout(dev, vs, 2);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);

    /* the depth pass: no color target; ps_shadow's slot is empty (reads 0) */
    kiln_depth_stencil_state always;
    CHECK_RESULT(kiln_create_depth_stencil_state(
                     dev, &(kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_ALWAYS}, &always),
                 KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, dsv), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, always, 0), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
    CHECK_RESULT(kiln_clear_dsv(ctx, dsv, KILN_CLEAR_DEPTH, 1.0f, 0), KILN_OK);
    rect(dev, ctx, 0, W / 2, 0.3f, 0.0f, 0.0f);
    rect(dev, ctx, W / 2, W, 0.7f, 0.0f, 0.0f);

    /* the shadow pass */
    kiln_sampler smp;
    kiln_sampler_desc sd = {0};
    sd.address_u = sd.address_v = KILN_ADDRESS_CLAMP;
    sd.comparison_func = KILN_COMPARE_LESS_EQUAL;
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);
    kiln_depth_stencil_state off;
    CHECK_RESULT(kiln_create_depth_stencil_state(dev, &(kiln_depth_stencil_desc){.depth_disable = 1},
                                                 &off),
                 KILN_OK);
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt.rtv, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, off, 0), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);
    rect(dev, ctx, 0, W, 0.5f, 0.5f, level_zero);
    float *img = ru_read_f32(dev, &rt);

    kiln_srv none = {0};
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &none), KILN_OK);
    kiln_destroy_sampler(dev, smp);
    kiln_destroy_depth_stencil_state(dev, off);
    kiln_destroy_depth_stencil_state(dev, always);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_pixel_shader(dev, ps);
    kiln_destroy_vertex_shader(dev, vs);
    ru_free_tex(dev, &rt);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_dsv(dev, dsv);
    kiln_destroy_texture(dev, dtex);
    return img;
}

static void check_image(const float *img, const char *what)
{
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float want = x < W / 2 - 1 ? 0.0f : x == W / 2 - 1 ? 0.5f : 1.0f;
            bad += img[y * W + x] != want;
        }
    th_check(bad == 0, what, __FILE__, __LINE__);
    if (bad)
        fprintf(stderr, "    %d pixels differ; row 0 around the edge: %g %g %g\n", bad,
                img[W / 2 - 2], img[W / 2 - 1], img[W / 2]);
}

int main(void)
{
    for (int lz = 0; lz < 2; lz++) {
        kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
        if (lz == 0)
            CHECK_RESULT(kiln_capture_begin(dev, "sample_cmp.kcap"), KILN_OK);
        float *img = render(dev, (float)lz);
        if (lz == 0)
            CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
        check_image(img, lz ? "kiln_ps_sample_cmp_level_zero: 0, 1/2 at the edge, 1"
                            : "kiln_ps_sample_cmp: 0, 1/2 at the edge, 1");
        free(img);
        kiln_device_destroy(dev);
    }

    /* the capture holds the comparison sampler and replays to the image */
    size_t len;
    uint8_t *bytes = cu_read("sample_cmp.kcap", &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_SAMPLER_CMP), 1);
    for (int m = 0; bytes && m < 2; m++) {
        cu_images out = {0};
        kcap_replay_report rep;
        CHECK_RESULT(cu_replay(bytes, len, m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC, 3, register_shaders,
                               &out, &rep),
                     KILN_OK);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = NULL; /* the one color target: 4 bytes a texel */
        for (uint32_t k = 0; k < out.n && !t; k++)
            if (out.v[k].kind == KCAP_IMAGE_TARGET && out.v[k].width == W && out.v[k].bpp == 4)
                t = &out.v[k];
        CHECK(t != NULL);
        if (t)
            check_image((const float *)t->pixels, "replayed shadow pass");
        cu_free(&out);
    }
    free(bytes);

    /* misuse and plain samplers */
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_sampler smp = {7};
    kiln_sampler_desc sd = {0};
    sd.comparison_func = (kiln_compare)(KILN_COMPARE_ALWAYS + 1);
    CHECK_FAILS(kiln_create_sampler(dev, &sd, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    CHECK_EQ_INT(smp.id, 0);
    kiln_device_destroy(dev);
    return th_exit();
}
