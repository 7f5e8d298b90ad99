/*
 * test_raster_span: the general pixel path over a rect (span_general.h).
 * At the AVX2 and AVX-512 levels a triangle's rect of whole blocks, for a
 * draw with an application's pixel shader, no depth or stencil test and
 * one write8 output (an RGBA8 or BGRA8 target), is shaded in one loop
 * instead of block by block through shade_block; at SSE2 it never is
 * (kr_general_span_select needs a vector level), so the SSE2 image is the
 * reference and every level's bytes must equal it.
 *
 * Rounds of random triangles, small, large, and over the whole target
 * (every 64x64 tile inside them, the span's rects), perspective and
 * affine, into a 203x157 target (partial blocks and tiles at its edges),
 * under random choices of: the shader (reading its depth input, front
 * facing and primitive id, also under read masks that leave out some of
 * what it reads; discarding, reading its depth; writing only two
 * channels, so the outputs' zeroing shows, one of them from a component
 * its read_mask leaves out; two outputs; sampling a texture through
 * kiln_ps_sample), RGBA8 or BGRA8, a second RGBA8 target bound or not,
 * blending off, random blending (the target's lines fetched ahead) or a
 * partial write mask, no depth buffer, a depth buffer with the test off
 * (the span still applies) or on (the control: shade_block's early
 * test), a scissor rect, alpha to coverage (a control too), an occlusion
 * query around the draws (counted scenes never take the span: the counts
 * must be SSE2's). The rects through the span are counted: none at SSE2,
 * many at each vector level.
 *
 * At the unit level: kr_general_span_select's conditions one by one, and
 * the span called over a rect on a stack dirtied with 0xff bytes, with 2
 * and with all 8 varyings: each block shaded once, the varying components
 * the shader's read_mask leaves out read 0 (the span writes them once per
 * rect), the pixels written.
 */
#include "raster/effects.h"
#include "raster/prim.h"
#include "raster_util.h"

#include <stdio.h>

enum { W = 203, H = 157, NVARY = 2, NTRI = 12, ROUNDS = 30 };

/* Position (clip space), then NVARY float4 in [-0.25, 1.25]. */
static void make_tris(th_rng *r, float *v)
{
    const uint32_t stride = 4 * (1 + NVARY);
    for (uint32_t t = 0; t < NTRI; t++) {
        int affine = th_below(r, 3) == 0;
        float wt = th_frand(r, 0.5f, 3.0f);
        float cx = th_frand(r, -0.6f, 0.6f), cy = th_frand(r, -0.6f, 0.6f);
        /* small, large, or over the whole target (every tile inside) */
        uint32_t kind = th_below(r, 4);
        float spread = kind == 0 ? 0.08f : 1.6f;
        static const float cover[3][2] = {{-1.3f, -1.3f}, {3.5f, -1.2f}, {-1.2f, 3.5f}};
        for (int j = 0; j < 3; j++) {
            float *p = v + (size_t)(3 * t + (uint32_t)j) * stride;
            float w = affine ? wt : th_frand(r, 0.5f, 3.0f);
            if (kind == 3) {
                p[0] = (cover[j][0] + th_frand(r, -0.1f, 0.1f)) * w;
                p[1] = (cover[j][1] + th_frand(r, -0.1f, 0.1f)) * w;
            } else {
                p[0] = (cx + th_frand(r, -spread, spread)) * w;
                p[1] = (cy + th_frand(r, -spread, spread)) * w;
            }
            p[2] = th_frand(r, 0.05f, 0.95f) * w;
            p[3] = w;
            for (int k = 0; k < 4 * NVARY; k++)
                p[4 + k] = th_frand(r, -0.25f, 1.25f);
        }
        /* every other triangle wound the other way: front and back faces */
        float *a = v + (size_t)(3 * t) * stride, *b = a + stride, *c = b + stride;
        float area = (b[0] / b[3] - a[0] / a[3]) * (c[1] / c[3] - a[1] / a[3]) -
                     (b[1] / b[3] - a[1] / a[3]) * (c[0] / c[3] - a[0] / a[3]);
        if ((area > 0.0f) != (t % 2 == 0))
            for (uint32_t i = 0; i < stride; i++) {
                float x = b[i];
                b[i] = c[i];
                c[i] = x;
            }
    }
}

/* Reads its depth input, front facing and primitive id. */
static void ps_mix(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = KILN_PS_VARYING(a, 0, 0)[i];
        KILN_PS_COLOR(a, 0, 1)[i] = KILN_PS_VARYING(a, 0, 1)[i] * a->z[i];
        KILN_PS_COLOR(a, 0, 2)
        [i] = 0.5f * KILN_PS_VARYING(a, 1, 2)[i] + (a->front_facing ? 0.4f : 0.0f);
        KILN_PS_COLOR(a, 0, 3)
        [i] = (float)(a->primitive_id % 7) / 7.0f + KILN_PS_VARYING(a, 1, 3)[i];
    }
}

/* Discards where varying 1's x is above 0.5 (KILN_PS_MAY_DISCARD); reads
 * its depth too. */
static void ps_discard(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        for (int c = 0; c < 4; c++)
            KILN_PS_COLOR(a, 0, c)[i] = KILN_PS_VARYING(a, 0, c)[i];
        KILN_PS_COLOR(a, 0, 1)[i] *= a->z[i];
        if (KILN_PS_VARYING(a, 1, 0)[i] > 0.5f)
            a->mask &= ~(1u << i);
    }
}

/* Writes red and blue only: green and alpha are the zeros they start as;
 * blue is a component its read_mask leaves out, so zero too. */
static void ps_partial(kiln_ps_args *a)
{
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = KILN_PS_VARYING(a, 1, 1)[i];
        KILN_PS_COLOR(a, 0, 2)[i] = KILN_PS_VARYING(a, 0, 3)[i];
    }
}

/* Two outputs (one target bound). */
static void ps_two(kiln_ps_args *a)
{
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 4; c++)
            for (int i = 0; i < KILN_PS_BLOCK; i++)
                KILN_PS_COLOR(a, r, c)[i] = KILN_PS_VARYING(a, 1 - r, c)[i];
}

/* The texture at varying 0's x and y, times varying 1's alpha. */
static void ps_tex(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                   KILN_PS_COLOR(a, 0, 0));
    for (int i = 0; i < KILN_PS_BLOCK; i++)
        KILN_PS_COLOR(a, 0, 3)[i] *= KILN_PS_VARYING(a, 1, 3)[i];
}

enum { NSHADERS = 5 };

/* ==== unit level: the selection, and the span over a dirtied stack ==== */

enum { UW = 16, UH = 8 };

typedef struct unit {
    kd_state s;
    kr_drawx dx;
    kr_fb fb;
    kr_prim p;
    float attr[KILN_MAX_VARYINGS * 4 * 3];
    uint8_t rt[UW * UH * 4];
} unit;

static unit U;
static uint32_t unit_calls, unit_nonzero; /* the shader's calls; unread components not 0 */
static uint32_t unit_nvary = 2, unit_reads = 0x21u; /* U.dx's nvary and vmask */

/* Declares the components in unit_reads (0x21: varying 0's x and varying
 * 1's y): every other one must read 0; writes varying 0's x and varying
 * 1's y. */
static void ps_unit(kiln_ps_args *a)
{
    unit_calls++;
    for (uint32_t k = 0; k < unit_nvary; k++)
        for (uint32_t c = 0; c < 4; c++)
            if (!(unit_reads >> (4 * k + c) & 1))
                for (int i = 0; i < KILN_PS_BLOCK; i++)
                    unit_nonzero += KILN_PS_VARYING(a, k, c)[i] != 0.0f;
    for (int i = 0; i < KILN_PS_BLOCK; i++) {
        KILN_PS_COLOR(a, 0, 0)[i] = KILN_PS_VARYING(a, 0, 0)[i];
        KILN_PS_COLOR(a, 0, 1)[i] = KILN_PS_VARYING(a, 1, 1)[i];
    }
}

/* An eligible draw at `level` (AVX2 or AVX-512): ps_unit into an RGBA8
 * target, no blending, no depth buffer; an affine triangle's planes. */
static void unit_init(kr_simd level)
{
    memset(&U, 0, sizeof U);
    U.s.ps = ps_unit;
    U.s.ps_varyings = unit_nvary;
    U.s.ps_outputs = 1;
    U.s.ps_flags = KILN_PS_NO_Z;
    U.s.ps_reads = unit_reads;
    U.s.blend[0].write_mask = 15u;
    U.dx.s = &U.s;
    U.dx.nvary = unit_nvary;
    U.dx.vmask = unit_reads;
    U.dx.wide = true;
    U.dx.wide16 = level == KR_SIMD_AVX512;
    U.fb.rt[0] = U.rt;
    U.fb.rt_pitch[0] = UW * 4;
    U.fb.rt_format[0] = KILN_FORMAT_R8G8B8A8_UNORM;
    U.fb.nrt = 1;
    U.fb.width = UW;
    U.fb.height = UH;
    U.fb.samples = 1;
    kr_output_select(&U.dx, &U.fb);
    U.p.kind = KR_TRI;
    U.p.dx = &U.dx;
    U.p.front = 1;
    U.p.q[0] = 1.0f;
    U.p.attr = U.attr;
    for (int i = 0; i < KILN_MAX_VARYINGS * 4 * 3; i++)
        U.attr[i] = 0.01f * (float)(i + 1);
}

static bool block_stub(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    (void)p, (void)fb, (void)x, (void)y, (void)mask;
    return false;
}

/* The write8 calls of a span whose shader discards whole blocks: each
 * block with pixels left must be written once, in block order, with its
 * own coordinates, mask and outputs (a block's write8 runs after the next
 * block's shader, from the other of two output buffers). */
static uint32_t discard_pattern; /* bit b: block b (row-major, 4 a row) discarded */
static struct {
    int x, y;
    uint32_t mask;
    float tag;
} write_log[64];
static uint32_t write_count;

static void ps_block_discard(kiln_ps_args *a)
{
    const uint32_t b = (uint32_t)(a->x / 4 + 4 * (a->y / 4));
    for (int i = 0; i < KILN_PS_BLOCK; i++)
        for (int c = 0; c < 4; c++)
            KILN_PS_COLOR(a, 0, c)[i] = (float)(1000 * a->x + a->y); /* the block's tag */
    if (discard_pattern >> b & 1)
        a->mask = 0;
}

static void write8_log(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                       int x, int y, const float *col, uint32_t mask)
{
    (void)bl, (void)k, (void)base, (void)pitch;
    if (write_count < 64) {
        write_log[write_count].x = x;
        write_log[write_count].y = y;
        write_log[write_count].mask = mask;
        /* every output float of the block must carry its tag */
        float tag = col[0];
        for (int i = 0; i < 4 * KILN_PS_BLOCK; i++)
            if (col[i] != tag)
                tag = -1.0f;
        write_log[write_count].tag = tag;
    }
    write_count++;
}

static void span_discards(kr_simd level, kr_span_fn want)
{
    static const uint32_t patterns[] = {0x00, 0xff, 0x81, 0x7e, 0x55, 0xaa, 0x01, 0x80, 0x18};
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        unit_init(level);
        U.s.ps = ps_block_discard;
        U.s.ps_flags = KILN_PS_NO_Z | KILN_PS_MAY_DISCARD;
        U.dx.write8 = write8_log;
        discard_pattern = patterns[i];
        write_count = 0;
        const int x0 = 1; /* the first column of blocks partly inside */
        CHECK(want(&U.p, &U.fb, x0, 0, UW, UH));
        uint32_t n = 0, wrong = 0;
        for (uint32_t b = 0; b < 8; b++) {
            if (discard_pattern >> b & 1)
                continue;
            int bx = 4 * (int)(b % 4), by = 4 * (int)(b / 4);
            wrong += n >= write_count || write_log[n].x != bx || write_log[n].y != by ||
                     write_log[n].mask != kr_rect_mask(bx, by, x0, 0, UW, UH) ||
                     write_log[n].tag != (float)(1000 * bx + by);
            n++;
        }
        CHECK_EQ_INT(write_count, n);
        CHECK_EQ_INT(wrong, 0);
    }
}

#define SPAN_CASE(what, change, expect)                                                            \
    do {                                                                                           \
        unit_init(level);                                                                          \
        change;                                                                                    \
        kr_span_fn got_ = kr_general_span_select(&U.dx, &U.fb);                                    \
        th_check((got_ != NULL) == (expect), "kr_general_span_select: " what, __FILE__, __LINE__); \
    } while (0)

/* Writes over the stack below this frame, where the span's frame will be:
 * a span that left its rows' unread components as it found them reads
 * these bytes (NaNs), not zeros. */
static __attribute__((noinline)) void dirty_stack(void)
{
    volatile uint8_t junk[1u << 16];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = 0xff;
}

/* The span of `level` over the rect [x0, UW) x [0, UH) of a fresh
 * unit_init draw, on a dirtied stack: every block shaded once, and no
 * component outside unit_reads other than 0. */
static void span_run(kr_simd level, kr_span_fn want, int x0)
{
    unit_init(level);
    unit_calls = unit_nonzero = 0;
    dirty_stack();
    CHECK(want(&U.p, &U.fb, x0, 0, UW, UH));
    CHECK_EQ_INT(unit_calls, (UW / 4) * (UH / 4));
    CHECK_EQ_INT(unit_nonzero, 0);
}

static void test_unit(void)
{
    kr_simd levels[3];
    int nlv = kr_effects_vector_levels(levels);
    for (int l = 1; l < nlv; l++) {
        const kr_simd level = levels[l];
        kr_span_fn want = level == KR_SIMD_AVX512 ? kr_general_span_avx512 : kr_general_span_avx2;
        unit_init(level);
        CHECK(U.dx.out1 == 1 && U.dx.write8 != NULL);
        CHECK(kr_general_span_select(&U.dx, &U.fb) == want);
        SPAN_CASE("eligible draw", (void)0, 1);
        SPAN_CASE("a depth buffer bound, depth and stencil off", U.fb.ds = U.rt, 1);
        SPAN_CASE("blending (write8 blends)", U.s.blend[0].enable = 1, 1);
        SPAN_CASE("a shader that may discard", U.s.ps_flags = KILN_PS_MAY_DISCARD, 1);
        SPAN_CASE("the depth test on a bound buffer", (U.fb.ds = U.rt, U.s.depth_enable = 1), 0);
        SPAN_CASE("the stencil test on a bound buffer", (U.fb.ds = U.rt, U.s.stencil_enable = 1),
                  0);
        SPAN_CASE("the depth test with no buffer", U.s.depth_enable = 1, 1);
        SPAN_CASE("alpha to coverage", U.s.alpha_to_coverage = 1, 0);
        SPAN_CASE("4x target", U.fb.samples = 4, 0);
        SPAN_CASE("no pixel shader", U.s.ps = NULL, 0);
        SPAN_CASE("output() for several targets", U.dx.out1 = 0, 0);
        SPAN_CASE("nothing written", U.dx.out1 = 2, 0);
        SPAN_CASE("a block function", U.dx.block = block_stub, 0);
        SPAN_CASE("a shade function", U.dx.shade = block_stub, 0);
        SPAN_CASE("a direct function", U.dx.direct = block_stub, 0);
        SPAN_CASE("the SSE2 level", U.dx.wide = U.dx.wide16 = false, 0);

        /* the span itself: unread components 0 in every block, every block
         * shaded once, the read ones written */
        span_run(level, want, 1);
        uint32_t written = 0;
        for (int i = 0; i < UW * UH; i++)
            written += U.rt[4 * i] != 0;
        CHECK_EQ_INT(written, (UW - 1) * UH); /* column 0 outside the rect */

        span_discards(level, want);

        /* every varying (32 components: the interpolation's mask of all
         * ones), some read */
        unit_nvary = KILN_MAX_VARYINGS;
        unit_reads = 0x80000001u | 0x00F0A020u;
        span_run(level, want, 0);
        unit_nvary = 2;
        unit_reads = 0x21u;
    }
}

int main(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("no AVX2 + FMA here: one SIMD level, nothing to compare\n");
        return th_exit();
    }
    test_unit();
    kr_simd initial = kr_effects_active_level();
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    kiln_context *ctx = kiln_device_immediate_context(dev);

    /* the vertex stage: position and NVARY varyings passed through */
    kiln_vertex_shader vs = ru_make_vs(dev, 1 + NVARY, NVARY);
    kiln_input_layout il = ru_make_layout(dev, vs, 1 + NVARY);
    CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
    static const kiln_ps_fn fns[NSHADERS] = {ps_mix, ps_discard, ps_partial, ps_two, ps_tex};
    static const uint32_t outs[NSHADERS] = {1, 1, 1, 2, 1};
    static const uint32_t flags[NSHADERS] = {0, KILN_PS_MAY_DISCARD, KILN_PS_NO_Z, KILN_PS_NO_Z,
                                             KILN_PS_NO_Z};
    kiln_pixel_shader ps[NSHADERS];
    /* ps_mix also declared with read masks that leave out some of what it
     * reads (those read zeros) */
    static const uint32_t mix_masks[4] = {0x0Fu, 0xC3u, 0x21u, 0x88u};
    kiln_pixel_shader ps_mix_masked[4];
    for (int m = 0; m < 4; m++) {
        kiln_pixel_shader_desc pd = {
            .fn = ps_mix, .num_varyings = NVARY, .num_outputs = 1, .read_mask = mix_masks[m]};
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps_mix_masked[m]), KILN_OK);
    }
    for (int k = 0; k < NSHADERS; k++) {
        kiln_pixel_shader_desc pd = {0};
        pd.fn = fns[k];
        pd.num_varyings = NVARY;
        pd.num_outputs = outs[k];
        pd.flags = flags[k];
        /* ps_partial declares varying 1's y and varying 0's x, not the w it
         * also reads: that reads zeros */
        pd.read_mask = fns[k] == ps_partial ? 1u << 5 | 1u << 0 : 0;
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps[k]), KILN_OK);
    }

    /* a 64x64 RGBA8 texture of random texels, sampled bilinearly, wrapping */
    static uint8_t texels[64 * 64 * 4];
    th_rng r = {0x5BA11ull};
    for (size_t i = 0; i < sizeof texels; i++)
        texels[i] = (uint8_t)th_next(&r);
    kiln_texture2d_desc td = {.width = 64,
                              .height = 64,
                              .mip_levels = 1,
                              .array_size = 1,
                              .format = KILN_FORMAT_R8G8B8A8_UNORM,
                              .bind_flags = KILN_BIND_SHADER_RESOURCE};
    kiln_subresource_data init = {texels, 64 * 4};
    kiln_texture tex;
    kiln_srv srv;
    kiln_sampler smp;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    kiln_sampler_desc sd = {.min_filter = KILN_FILTER_LINEAR,
                            .mag_filter = KILN_FILTER_LINEAR,
                            .mip_filter = KILN_FILTER_POINT,
                            .address_u = KILN_ADDRESS_WRAP,
                            .address_v = KILN_ADDRESS_WRAP};
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &smp), KILN_OK);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &smp), KILN_OK);

    ru_tex rt[2] = {ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM),
                    ru_rt(dev, W, H, KILN_FORMAT_B8G8R8A8_UNORM)};
    ru_tex ds = ru_ds(dev, W, H, KILN_FORMAT_D32_FLOAT);
    /* a second RGBA8 target, bound beside the first in some rounds: a
     * one-output shader leaves it as cleared (the span applies), ps_two
     * writes both (output() for two targets: the control) */
    ru_tex rt2 = ru_rt(dev, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_query occl;
    CHECK_RESULT(kiln_create_query(dev, KILN_QUERY_OCCLUSION, &occl), KILN_OK);
    kiln_rasterizer_desc rd = {.cull = KILN_CULL_NONE};
    kiln_rasterizer_state rs = ru_rs(dev, rd);
    rd.scissor_enable = 1;
    kiln_rasterizer_state rs_sc = ru_rs(dev, rd);
    kiln_depth_stencil_state dss_off = ru_dss(dev, (kiln_depth_stencil_desc){.depth_disable = 1});
    kiln_depth_stencil_state dss_less =
        ru_dss(dev, (kiln_depth_stencil_desc){.depth_func = KILN_COMPARE_LESS});
    ru_set_viewport(ctx, 0.0f, 0.0f, (float)W, (float)H, 0.0f, 1.0f);

    static float verts[3 * NTRI * 4 * (1 + NVARY)];
    static uint8_t img[3][W * H * 4], img2[3][W * H * 4];
    kr_simd levels[3];
    int nlv = kr_effects_vector_levels(levels);
    CHECK(nlv >= 2 && levels[0] == KR_SIMD_SSE2);
    uint64_t bytes = 0, differ = 0, drawn = 0, by_shader[NSHADERS] = {0};
    uint32_t blended = 0, tested = 0, bound_off = 0, a2c = 0, two = 0, counted = 0, masked = 0;
    uint64_t spans[3] = {0}, samples[3] = {0}, samples_differ = 0, samples_any = 0;
    kr_general_span_calls(true);
    for (int round = 0; round < ROUNDS; round++) {
        make_tris(&r, verts);
        const int k = round % NSHADERS; /* every shader with every other choice in turn */
        const ru_tex *t = &rt[th_below(&r, 2)];
        const uint32_t blend = th_below(&r, 3), depth = th_below(&r, 3);
        const bool scissor = th_below(&r, 4) == 0, second = th_below(&r, 4) == 0;
        /* some rounds counted (an occlusion query around the draws: the
         * scene takes shade_block, the counts must be SSE2's) */
        const bool query = th_below(&r, 4) == 0;
        const int mask_variant = k == 0 ? (int)th_below(&r, 5) - 1 : -1;
        two += second;
        counted += query;
        masked += mask_variant >= 0;
        kiln_blend_desc bd;
        memset(&bd, 0, sizeof bd);
        if (blend == 1) {
            bd.rt[0].enable = 1;
            ru_blend_random(&r, (int)th_below(&r, 3), &bd.rt[0]);
            blended++;
        } else if (blend == 2) {
            bd.rt[0].write_mask = 1u + th_below(&r, 14); /* 1..14: some channels */
        }
        bd.alpha_to_coverage = th_below(&r, 5) == 0; /* not the span's: the control */
        a2c += bd.alpha_to_coverage;
        kiln_blend_state bs = ru_bs(dev, &bd);
        kiln_rect sc = {(int32_t)th_below(&r, 60), (int32_t)th_below(&r, 40),
                        (int32_t)(120 + th_below(&r, 80)), (int32_t)(90 + th_below(&r, 60))};
        tested += depth == 2;
        bound_off += depth == 1;
        for (int l = 0; l < nlv; l++) {
            /* the level is read when the scene executes: kiln_finish
             * (ru_read) before switching */
            CHECK_RESULT(kr_effects_force_level(levels[l]), KILN_OK);
            const kiln_rtv views[2] = {t->rtv, rt2.rtv};
            CHECK_RESULT(kiln_om_set_render_targets(ctx, second ? 2 : 1, views,
                                                    depth ? ds.dsv : (kiln_dsv){0}),
                         KILN_OK);
            static const float clear[4] = {0.2f, 0.4f, 0.6f, 0.8f};
            CHECK_RESULT(kiln_clear_rtv(ctx, t->rtv, clear), KILN_OK);
            CHECK_RESULT(kiln_clear_rtv(ctx, rt2.rtv, clear), KILN_OK);
            if (depth)
                CHECK_RESULT(kiln_clear_dsv(ctx, ds.dsv, KILN_CLEAR_DEPTH, 0.5f, 0), KILN_OK);
            CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, depth == 2 ? dss_less : dss_off, 0),
                         KILN_OK);
            CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, NULL), KILN_OK);
            CHECK_RESULT(kiln_rs_set_state(ctx, scissor ? rs_sc : rs), KILN_OK);
            if (scissor)
                CHECK_RESULT(kiln_rs_set_scissor_rect(ctx, &sc), KILN_OK);
            if (fns[k] == ps_partial) {
                /* ps_mix first, in the same scene: its span leaves every
                 * varying component in the rows the next span's reuse */
                CHECK_RESULT(kiln_ps_set_shader(ctx, ps[0]), KILN_OK);
                ru_draw(dev, ctx, verts, 3 * NTRI, 16 * (1 + NVARY), KILN_TOPOLOGY_TRIANGLE_LIST);
            }
            CHECK_RESULT(
                kiln_ps_set_shader(ctx, mask_variant >= 0 ? ps_mix_masked[mask_variant] : ps[k]),
                KILN_OK);
            const uint64_t before = kr_general_span_calls(true);
            if (query)
                CHECK_RESULT(kiln_query_begin(ctx, occl), KILN_OK);
            ru_draw(dev, ctx, verts, 3 * NTRI, 16 * (1 + NVARY), KILN_TOPOLOGY_TRIANGLE_LIST);
            if (query) {
                CHECK_RESULT(kiln_query_end(ctx, occl), KILN_OK);
                uint64_t n = 0;
                kiln_result qr;
                while ((qr = kiln_query_get_data(ctx, occl, &n, sizeof n, 0)) ==
                       KILN_E_WAS_STILL_DRAWING)
                    ;
                CHECK_RESULT(qr, KILN_OK);
                samples[l] = n;
            }
            CHECK(ru_read(dev, t->tex, 0, img[l]));
            CHECK(ru_read(dev, rt2.tex, 0, img2[l]));
            spans[l] += kr_general_span_calls(true) - before;
        }
        if (query) {
            samples_differ += samples[1] != samples[0] || (nlv > 2 && samples[2] != samples[0]);
            samples_any += samples[0] > 0;
        }
        kiln_destroy_blend_state(dev, bs);
        for (int l = 1; l < nlv; l++)
            for (size_t i = 0; i < sizeof img[0]; i++) {
                bytes += 2;
                differ += (img[0][i] != img[l][i]) + (img2[0][i] != img2[l][i]);
            }
        /* pixels the draw changed from the clear color (either byte order) */
        uint64_t n = 0;
        for (size_t i = 0; i < (size_t)W * H; i++) {
            const uint8_t *p = img[0] + 4 * i;
            n += !(p[1] == 102 && p[3] == 204 && (p[0] == 51 || p[0] == 153));
        }
        drawn += n;
        by_shader[k] += n;
    }
    printf("general span at every vector level against SSE2: %llu bytes compared, %llu differ; "
           "%llu pixels drawn (per shader %llu %llu %llu %llu %llu); %u rounds blended, %u with a "
           "depth buffer and the test off, %u with the test on, %u with alpha to coverage\n",
           (unsigned long long)bytes, (unsigned long long)differ, (unsigned long long)drawn,
           (unsigned long long)by_shader[0], (unsigned long long)by_shader[1],
           (unsigned long long)by_shader[2], (unsigned long long)by_shader[3],
           (unsigned long long)by_shader[4], blended, bound_off, tested, a2c);
    kr_general_span_calls(false);
    printf("rects through the span per level (SSE2 first): %llu %llu %llu; %u rounds with two "
           "targets, %u counted (%llu with other counts than SSE2's), %u with ps_mix's read "
           "masks\n",
           (unsigned long long)spans[0], (unsigned long long)spans[1], (unsigned long long)spans[2],
           two, counted, (unsigned long long)samples_differ, masked);
    CHECK(spans[0] == 0);
    for (int l = 1; l < nlv; l++)
        CHECK(spans[l] > 100);
    CHECK(samples_differ == 0 && samples_any > 0);
    CHECK(two > 0 && counted > 0 && masked > 0);
    CHECK(differ == 0);
    for (int k = 0; k < NSHADERS; k++)
        CHECK(by_shader[k] > (uint64_t)W * H / 2);
    CHECK(blended > 0 && bound_off > 0 && tested > 0 && a2c > 0);

    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_rasterizer_state(dev, rs_sc);
    kiln_destroy_depth_stencil_state(dev, dss_off);
    kiln_destroy_depth_stencil_state(dev, dss_less);
    kiln_destroy_sampler(dev, smp);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
    for (int i = 0; i < 2; i++)
        ru_free_tex(dev, &rt[i]);
    ru_free_tex(dev, &ds);
    ru_free_tex(dev, &rt2);
    kiln_destroy_query(dev, occl);
    for (int m = 0; m < 4; m++)
        kiln_destroy_pixel_shader(dev, ps_mix_masked[m]);
    for (int k = 0; k < NSHADERS; k++)
        kiln_destroy_pixel_shader(dev, ps[k]);
    kiln_destroy_input_layout(dev, il);
    kiln_destroy_vertex_shader(dev, vs);
    kiln_device_destroy(dev);
#else
    printf("not an x86 build: one SIMD level, nothing to compare\n");
#endif
    return th_exit();
}
