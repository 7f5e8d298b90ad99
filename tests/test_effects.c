/*
 * Built-in effects (kiln.h "built-in effects"), called directly through the
 * function pointers kiln_effect_get hands out, with hand-built arguments:
 * the descs and their GLSL, vertex shaders against independently computed
 * transforms, pixel kernels against the documented formulas, every SIMD
 * level bit-identical to the scalar reference on random inputs, and the
 * choice of level (KILN_SIMD, forcing, concurrent first use). On a device:
 * an effect's vertex shader declared with a varying it does not write
 * leaves zeros there (the rows it writes whole are not zeroed first), and
 * declared with fewer inputs and varyings than it uses it stays inside
 * its rows.
 */
#include "harness.h"
#include "raster/effects.h"
#include "raster/raster.h"
#include "raster_util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK KILN_PS_BLOCK

/* ---- helpers ---- */

/* Float bits, so that checks report exact differences. */
static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* got[i] == want[i] bit for bit for i < n; reports the first difference. */
static void check_bits(const float *got, const float *want, int n, const char *what, int line)
{
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (bits(got[i]) != bits(want[i]))
            bad = i;
    th_check(bad < 0, what, __FILE__, line);
    if (bad >= 0)
        fprintf(stderr, "    [%d]: got %.9g (0x%08x), expected %.9g (0x%08x)\n", bad, got[bad],
                bits(got[bad]), want[bad], bits(want[bad]));
}

/* The levels this build and CPU run, scalar first. */
static int levels(const kr_effect_kernels **out)
{
    int n = 0;
    for (int l = 0; l < KR_SIMD_COUNT; l++)
        if (kr_effects_kernels((kr_simd)l))
            out[n++] = kr_effects_kernels((kr_simd)l);
    return n;
}

/* A 4x4 RGBA32F texture in shader-resource slot 0 with distinct texels,
 * read with the default sampler; slot 1 and up are empty. */
static float texels[4 * 4 * 4];
static kres_subresource tex_sub = {.offset = 0,
                                   .size = sizeof texels,
                                   .width = 4,
                                   .height = 4,
                                   .row_pitch = 4 * 4 * sizeof(float)};
static struct kiln_ps_textures textures;

static void textures_init(void)
{
    for (int i = 0; i < 4 * 4 * 4; i++)
        texels[i] = (float)(i + 1) / 64.0f;
    memset(&textures, 0, sizeof textures);
    textures.tex[0] = (kr_texture){.data = (const uint8_t *)texels,
                                   .subs = &tex_sub,
                                   .format = KILN_FORMAT_R32G32B32A32_FLOAT,
                                   .res_mip_levels = 1,
                                   .first_mip = 0,
                                   .num_mips = 1,
                                   .slice = 0};
}

/* Pixel-stage arguments over caller-owned arrays. */
typedef struct ps_setup {
    float varyings[KILN_MAX_VARYINGS * 4 * BLOCK];
    float z[BLOCK];
    float color[KILN_MAX_RENDER_TARGETS * 4 * BLOCK];
    float cb0[12];
    const void *cb[KILN_MAX_CONSTANT_BUFFERS];
    uint32_t cb_size[KILN_MAX_CONSTANT_BUFFERS];
    kiln_ps_args args;
} ps_setup;

static void ps_init(ps_setup *s)
{
    memset(s, 0, sizeof *s);
    s->cb[0] = s->cb0;
    s->cb_size[0] = sizeof s->cb0;
    s->args.mask = 0xFFFF;
    s->args.front_facing = 1;
    s->args.varyings = s->varyings;
    s->args.z = s->z;
    s->args.color = s->color;
    s->args.cb = s->cb;
    s->args.cb_size = s->cb_size;
    s->args.textures = &textures;
}

static float *varying(ps_setup *s, int k, int c) { return s->varyings + (k * 4 + c) * BLOCK; }
static float *color0(ps_setup *s, int c) { return s->color + c * BLOCK; }

/* Light direction, light color, ambient into PS cb0. */
static void set_light(ps_setup *s, const float dir[3], const float light[3], const float amb[3])
{
    for (int c = 0; c < 3; c++) {
        s->cb0[c] = dir[c];
        s->cb0[4 + c] = light[c];
        s->cb0[8 + c] = amb[c];
    }
}

/* ---- descs ---- */

static void test_invalid_effect_fails_and_zeroes(void)
{
    kiln_vertex_shader_desc vs;
    kiln_pixel_shader_desc ps;
    const kiln_effect bad[] = {KILN_EFFECT_COUNT, (kiln_effect)-1, (kiln_effect)1000};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&vs, 0xAB, sizeof vs);
        memset(&ps, 0xAB, sizeof ps);
        CHECK_RESULT(kiln_effect_get(bad[i], &vs, &ps), KILN_E_INVALID_ARG);
        CHECK(vs.fn == NULL && vs.glsl == NULL && vs.num_inputs == 0);
        CHECK(ps.fn == NULL && ps.glsl == NULL && ps.num_outputs == 0);
        CHECK_RESULT(kiln_effect_get(bad[i], NULL, NULL), KILN_E_INVALID_ARG);
    }
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_LIT, NULL, NULL), KILN_OK);
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_LIT, NULL, &ps), KILN_OK);
    CHECK(ps.fn != NULL);
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_LIT, &vs, NULL), KILN_OK);
    CHECK(vs.fn != NULL);
}

/* Index of `needle` in `hay` at or after `from`, or -1. */
static long find(const char *hay, const char *needle, long from)
{
    const char *p = strstr(hay + from, needle);
    return p ? (long)(p - hay) : -1;
}

static void test_descs_and_glsl(void)
{
    static const struct {
        kiln_effect e;
        uint32_t inputs, varyings;
        const char *attrs[3];
        const char *vs_cb, *ps_extra;
    } want[] = {
        {KILN_EFFECT_VERTEX_COLOR, 2, 1, {"a_position", "a_color"}, "uniform vec4 u_cb0[4];",
         "v_color"},
        {KILN_EFFECT_TEXTURE, 2, 1, {"a_position", "a_texcoord"}, "uniform vec4 u_cb0[4];",
         "uniform sampler2D u_tex0;"},
        {KILN_EFFECT_TEXTURE_COLOR, 3, 2, {"a_position", "a_color", "a_texcoord"},
         "uniform vec4 u_cb0[4];", "uniform sampler2D u_tex0;"},
        {KILN_EFFECT_LIT, 3, 2, {"a_position", "a_normal", "a_color"}, "uniform vec4 u_cb0[8];",
         "uniform vec4 u_ps_cb0[3];"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        kiln_vertex_shader_desc vs;
        kiln_pixel_shader_desc ps;
        CHECK_RESULT(kiln_effect_get(want[i].e, &vs, &ps), KILN_OK);
        CHECK(vs.fn != NULL && ps.fn != NULL);
        CHECK_EQ_INT(vs.num_inputs, want[i].inputs);
        CHECK_EQ_INT(vs.num_varyings, want[i].varyings);
        CHECK_EQ_INT(ps.num_varyings, want[i].varyings);
        CHECK_EQ_INT(ps.num_outputs, 1);
        CHECK_EQ_INT(ps.flags, KILN_PS_NO_Z); /* no effect reads the depth */
        CHECK(vs.user == NULL && ps.user == NULL);
        CHECK(vs.glsl != NULL && ps.glsl != NULL);
        if (!vs.glsl || !ps.glsl)
            continue;
        CHECK(strcmp(vs.glsl, ps.glsl) == 0);
        const char *g = vs.glsl;
        CHECK(strlen(g) > 0);
        /* One separator line, each part a whole shader. */
        long sep = find(g, "\n//--- fragment\n", 0);
        CHECK(sep > 0);
        if (sep <= 0)
            continue;
        CHECK(find(g, "//--- fragment", sep + 2) < 0);
        long frag = sep + (long)strlen("\n//--- fragment\n");
        CHECK(strncmp(g, "#version ", 9) == 0);
        CHECK(strncmp(g + frag, "#version ", 9) == 0);
        CHECK(find(g, "gl_Position", 0) > 0 && find(g, "gl_Position", 0) < sep);
        CHECK(find(g, "gl_FragColor", frag) > 0);
        CHECK(find(g, want[i].vs_cb, 0) >= 0 && find(g, want[i].vs_cb, 0) < sep);
        CHECK(find(g, want[i].ps_extra, frag) > 0);
        /* Attributes declared in input order, all in the vertex part. */
        long at = 0;
        for (uint32_t k = 0; k < want[i].inputs; k++) {
            char decl[64];
            snprintf(decl, sizeof decl, "attribute vec4 %s;", want[i].attrs[k]);
            long p = find(g, decl, 0);
            th_check(p > at && p < sep, "attributes declared in input order", __FILE__, __LINE__);
            if (p > at)
                at = p;
        }
        long attrs = 0;
        for (long p = find(g, "attribute ", 0); p >= 0; p = find(g, "attribute ", p + 1))
            attrs++;
        CHECK_EQ_INT(attrs, want[i].inputs);
    }
}

/* ---- vertex shaders ---- */

/* Row-major, column vectors: clip.x = m[0]x + m[1]y + m[2]z + m[3]. Small
 * integers so that every product and sum is exact. */
static const float wvp[16] = {1, 2, 3, 4, -5, 6, 0, 7, 0, -1, 2, -3, 1, 1, 1, 1};
static const float world[16] = {2, 0, 1, 9, 0, 3, 0, 9, -1, 0, 1, 9, 9, 9, 9, 9};

static void expect_transform(const float m[16], const float *p, float out[4])
{
    for (int r = 0; r < 4; r++) /* exact in double, hence in float */
        out[r] = (float)((double)m[4 * r] * p[0] + (double)m[4 * r + 1] * p[1] +
                         (double)m[4 * r + 2] * p[2] + (double)m[4 * r + 3] * 1.0);
}

static void test_vertex_shaders_transform(void)
{
    th_rng rng = {0x1234567u};
    const kiln_effect all[] = {KILN_EFFECT_VERTEX_COLOR, KILN_EFFECT_TEXTURE,
                               KILN_EFFECT_TEXTURE_COLOR, KILN_EFFECT_LIT};
    /* cb0 at an odd address: constant buffers need not be aligned. */
    unsigned char cb_bytes[1 + 32 * sizeof(float)];
    memcpy(cb_bytes + 1, wvp, sizeof wvp);
    memcpy(cb_bytes + 1 + sizeof wvp, world, sizeof world);
    for (size_t e = 0; e < sizeof all / sizeof all[0]; e++) {
        kiln_vertex_shader_desc d;
        CHECK_RESULT(kiln_effect_get(all[e], &d, NULL), KILN_OK);
        const uint32_t count = KILN_VS_BATCH, in_stride = 4 * d.num_inputs + 3,
                       out_stride = 4 + 4 * d.num_varyings + 2;
        static float in[(KILN_VS_BATCH + 1) * 64], out[(KILN_VS_BATCH + 1) * 64];
        for (uint32_t i = 0; i < (count + 1) * in_stride; i++)
            in[i] = (float)((int)th_below(&rng, 17) - 8);
        for (uint32_t v = 0; v < count; v++)
            in[v * in_stride + 3] = 5.0f; /* position w: not used, (x, y, z, 1) is */
        for (uint32_t i = 0; i < (count + 1) * out_stride; i++)
            out[i] = -999.0f;
        const void *cb[KILN_MAX_CONSTANT_BUFFERS] = {cb_bytes + 1};
        uint32_t cb_size[KILN_MAX_CONSTANT_BUFFERS] = {
            all[e] == KILN_EFFECT_LIT ? 32 * sizeof(float) : 16 * sizeof(float)};
        uint32_t ids[KILN_VS_BATCH] = {0};
        kiln_vs_args a = {count, 0, ids, in, in_stride, out, out_stride, cb, cb_size, NULL, NULL};
        d.fn(&a);

        int bad_pos = 0, bad_var = 0, bad_pad = 0;
        for (uint32_t v = 0; v < count; v++) {
            const float *vi = in + v * in_stride;
            const float *vo = out + v * out_stride;
            float p[4];
            expect_transform(wvp, vi, p);
            for (int c = 0; c < 4; c++)
                bad_pos += vo[c] != p[c];
            float expect[8];
            if (all[e] == KILN_EFFECT_LIT) {
                memcpy(expect, vi + 8, 4 * sizeof(float)); /* color */
                for (int r = 0; r < 3; r++)
                    expect[4 + r] = (float)((double)world[4 * r] * vi[4] +
                                            (double)world[4 * r + 1] * vi[5] +
                                            (double)world[4 * r + 2] * vi[6]);
                expect[7] = 0.0f;
            } else {
                memcpy(expect, vi + 4, 4 * d.num_varyings * sizeof(float));
            }
            for (uint32_t c = 0; c < 4 * d.num_varyings; c++)
                bad_var += vo[4 + c] != expect[c];
            for (uint32_t c = 4 + 4 * d.num_varyings; c < out_stride; c++)
                bad_pad += vo[c] != -999.0f;
        }
        for (uint32_t c = 0; c < out_stride; c++)
            bad_pad += out[count * out_stride + c] != -999.0f;
        CHECK_EQ_INT(bad_pos, 0);
        CHECK_EQ_INT(bad_var, 0);
        CHECK_EQ_INT(bad_pad, 0); /* nothing past the varyings or the count */
    }
}

/* A missing or short constant buffer reads as zeros past its end. */
static void test_vertex_shader_short_constants_read_zero(void)
{
    kiln_vertex_shader_desc d;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_LIT, &d, NULL), KILN_OK);
    float in[12] = {1, 2, 3, 1, 1, 1, 1, 0, 0.5f, 0.25f, 0.125f, 1};
    float out[12];
    const void *cb[KILN_MAX_CONSTANT_BUFFERS] = {wvp};
    uint32_t cb_size[KILN_MAX_CONSTANT_BUFFERS] = {8 * sizeof(float)}; /* rows 0, 1 only */
    uint32_t id = 0;
    kiln_vs_args a = {1, 0, &id, in, 12, out, 12, cb, cb_size, NULL, NULL};
    d.fn(&a);
    float p[4];
    expect_transform(wvp, in, p);
    CHECK(out[0] == p[0] && out[1] == p[1] && out[2] == 0.0f && out[3] == 0.0f);
    CHECK(out[8] == 0.0f && out[9] == 0.0f && out[10] == 0.0f); /* world: zeros */
    CHECK(out[4] == 0.5f && out[7] == 1.0f);

    cb[0] = NULL;
    d.fn(&a);
    CHECK(out[0] == 0.0f && out[1] == 0.0f && out[2] == 0.0f && out[3] == 0.0f);
}

/* ---- pixel kernels ---- */

static void test_vertex_color_copies(void)
{
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    th_rng rng = {77};
    for (int l = 0; l < n; l++) {
        ps_setup s;
        ps_init(&s);
        for (int i = 0; i < 4 * BLOCK; i++)
            s.varyings[i] = th_frand(&rng, -2, 2);
        s.args.mask = 0x0F0F;
        lv[l]->ps[KILN_EFFECT_VERTEX_COLOR](&s.args);
        check_bits(s.color, s.varyings, 4 * BLOCK, "vertex color: color 0 = varying 0", __LINE__);
        CHECK_EQ_INT(s.args.mask, 0x0F0F);
    }
}

/* color * (ambient + light * max(0, dot(n / |n|, -dir))), in double. */
static double lit_expect(const ps_setup *s, int i, int c)
{
    const float *v = s->varyings;
    double nx = v[4 * BLOCK + i], ny = v[5 * BLOCK + i], nz = v[6 * BLOCK + i];
    double len = sqrt(nx * nx + ny * ny + nz * nz);
    double d = 0.0;
    if (len > 0.0)
        d = -(nx * s->cb0[0] + ny * s->cb0[1] + nz * s->cb0[2]) / len;
    if (d < 0.0)
        d = 0.0;
    return (double)v[c * BLOCK + i] * (s->cb0[8 + c] + s->cb0[4 + c] * d);
}

static void test_lit_formula(void)
{
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    th_rng rng = {99};
    const float dir[3] = {0.26726124f, -0.53452248f, -0.80178373f}; /* (1, -2, -3) / |.| */
    const float light[3] = {0.9f, 0.7f, 0.5f}, amb[3] = {0.1f, 0.2f, 0.3f};
    for (int l = 0; l < n; l++) {
        ps_setup s;
        ps_init(&s);
        set_light(&s, dir, light, amb);
        for (int i = 0; i < BLOCK; i++) {
            for (int c = 0; c < 4; c++)
                varying(&s, 0, c)[i] = th_frand(&rng, 0, 1);
            /* Normals toward the light, not unit length: normalized per pixel. */
            float scale = 0.25f + (float)i;
            varying(&s, 1, 0)[i] = scale * (-dir[0] + th_frand(&rng, -0.5f, 0.5f));
            varying(&s, 1, 1)[i] = scale * (-dir[1] + th_frand(&rng, -0.5f, 0.5f));
            varying(&s, 1, 2)[i] = scale * (-dir[2] + th_frand(&rng, -0.5f, 0.5f));
            varying(&s, 1, 3)[i] = 123.0f; /* w is not part of the normal */
        }
        lv[l]->ps[KILN_EFFECT_LIT](&s.args);
        double worst = 0.0, lit_max = 0.0;
        for (int i = 0; i < BLOCK; i++) {
            for (int c = 0; c < 3; c++) {
                double e = lit_expect(&s, i, c);
                worst = fmax(worst, fabs(color0(&s, c)[i] - e));
                /* the light contributes: this test can tell lit from ambient */
                double ambient_only = (double)varying(&s, 0, c)[i] * amb[c];
                if (varying(&s, 0, c)[i] > 0.05f)
                    lit_max = fmax(lit_max, (e - ambient_only) / varying(&s, 0, c)[i]);
            }
            th_check(bits(color0(&s, 3)[i]) == bits(varying(&s, 0, 3)[i]),
                     "lit: alpha is the color's", __FILE__, __LINE__);
        }
        th_check(worst <= 1e-6, "lit: matches the formula within 1e-6", __FILE__, __LINE__);
        if (worst > 1e-6)
            fprintf(stderr, "    level %s: max error %g\n", lv[l]->name, worst);
        CHECK(lit_max > 0.1);

        /* A unit normal straight at the light: exactly ambient + light. */
        for (int i = 0; i < BLOCK; i++) {
            varying(&s, 1, 0)[i] = 0.0f;
            varying(&s, 1, 1)[i] = 0.0f;
            varying(&s, 1, 2)[i] = 2.0f;
        }
        const float down[3] = {0.0f, 0.0f, -1.0f};
        set_light(&s, down, light, amb);
        lv[l]->ps[KILN_EFFECT_LIT](&s.args);
        int bad = 0;
        for (int i = 0; i < BLOCK; i++)
            for (int c = 0; c < 3; c++)
                bad += color0(&s, c)[i] != varying(&s, 0, c)[i] * (amb[c] + light[c]);
        CHECK_EQ_INT(bad, 0);
    }
}

/* Normals facing away from the light (and zero normals): ambient only. */
static void test_lit_back_facing_is_ambient(void)
{
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    th_rng rng = {5};
    const float dir[3] = {0.6f, 0.0f, -0.8f}, light[3] = {1.0f, 0.5f, 0.25f},
                amb[3] = {0.25f, 0.125f, 0.5f};
    for (int l = 0; l < n; l++) {
        ps_setup s;
        ps_init(&s);
        set_light(&s, dir, light, amb);
        for (int i = 0; i < BLOCK; i++) {
            for (int c = 0; c < 4; c++)
                varying(&s, 0, c)[i] = th_frand(&rng, 0, 1);
            float k = th_frand(&rng, 0.1f, 10.0f);
            int zero = i % 5 == 0; /* no normal at all */
            varying(&s, 1, 0)[i] = zero ? 0.0f : k * (dir[0] + th_frand(&rng, -0.3f, 0.3f));
            varying(&s, 1, 1)[i] = zero ? 0.0f : k * th_frand(&rng, -0.3f, 0.3f);
            varying(&s, 1, 2)[i] = zero ? 0.0f : k * dir[2];
        }
        lv[l]->ps[KILN_EFFECT_LIT](&s.args);
        int bad = 0;
        for (int i = 0; i < BLOCK; i++) {
            for (int c = 0; c < 3; c++)
                bad += bits(color0(&s, c)[i]) != bits(varying(&s, 0, c)[i] * amb[c]);
            bad += bits(color0(&s, 3)[i]) != bits(varying(&s, 0, 3)[i]);
        }
        th_check(bad == 0, "lit: back-facing and zero normals give color * ambient", __FILE__,
                 __LINE__);
        if (bad)
            fprintf(stderr, "    level %s: %d channels differ\n", lv[l]->name, bad);

        /* No constant buffer: no light, no ambient. */
        s.cb[0] = NULL;
        lv[l]->ps[KILN_EFFECT_LIT](&s.args);
        bad = 0;
        for (int i = 0; i < BLOCK; i++)
            for (int c = 0; c < 3; c++)
                bad += color0(&s, c)[i] != 0.0f;
        CHECK_EQ_INT(bad, 0);
    }
}

/* Texture kernels sample srv 0 / sampler 0 at the documented varying:
 * their output is kiln_ps_sample's (times the color). */
static void test_texture_kernels_sample_slot0(void)
{
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    th_rng rng = {11};
    for (int l = 0; l < n; l++) {
        ps_setup s;
        ps_init(&s);
        for (int i = 0; i < BLOCK; i++) { /* texel centers of the 4x4 texture */
            float u = ((float)(i % 4) + 0.5f) / 4.0f, v = ((float)(i / 4) + 0.5f) / 4.0f;
            varying(&s, 0, 0)[i] = u;
            varying(&s, 0, 1)[i] = v;
        }
        float ref[4 * BLOCK];
        kiln_ps_sample(&s.args, 0, 0, varying(&s, 0, 0), varying(&s, 0, 1), ref);
        int distinct = 0;
        for (int i = 1; i < 4 * BLOCK; i++)
            distinct += ref[i] != ref[0];
        CHECK(distinct > BLOCK); /* the texture varies: a wrong uv or slot shows */
        lv[l]->ps[KILN_EFFECT_TEXTURE](&s.args);
        check_bits(s.color, ref, 4 * BLOCK, "texture: color 0 = sample(varying 0)", __LINE__);

        /* TEXTURE_COLOR: color in varying 0, texcoord in varying 1. */
        memcpy(varying(&s, 1, 0), varying(&s, 0, 0), 2 * BLOCK * sizeof(float));
        float want[4 * BLOCK];
        for (int i = 0; i < 4 * BLOCK; i++) {
            s.varyings[i] = th_frand(&rng, 0, 2);
            want[i] = ref[i] * s.varyings[i];
        }
        lv[l]->ps[KILN_EFFECT_TEXTURE_COLOR](&s.args);
        check_bits(s.color, want, 4 * BLOCK, "texture color: sample(varying 1) * varying 0",
                   __LINE__);
    }
}

/* Random (and special) inputs: every level's output equals the scalar
 * reference's bit for bit, so SSE2 and AVX2 equal each other. */
static void test_levels_bit_identical(void)
{
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    if (!kr_effects_kernels(KR_SIMD_AVX2))
        printf("note: no AVX2 on this CPU or build; compared %s with scalar only\n",
               n > 1 ? lv[1]->name : "nothing");
    CHECK(lv[0] == &kr_effects_scalar);
    static const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, 1.0f, -1.0f, 1e-45f};
    th_rng rng = {0xC0FFEE};
    int mismatches = 0;
    for (int iter = 0; iter < 2000; iter++) {
        ps_setup ref, s;
        ps_init(&ref);
        for (int i = 0; i < 4 * 2 * BLOCK; i++)
            ref.varyings[i] =
                th_below(&rng, 16) == 0 ? special[th_below(&rng, 8)] : th_frand(&rng, -4, 4);
        for (int i = 0; i < 12; i++)
            ref.cb0[i] = th_frand(&rng, -2, 2);
        /* texcoords in varying 0 (TEXTURE) / 1 (TEXTURE_COLOR): in range */
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 2 * BLOCK; i++)
                ref.varyings[k * 4 * BLOCK + i] = th_frand(&rng, -0.25f, 1.25f);
        for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
            lv[0]->ps[e](&ref.args);
            for (int l = 1; l < n; l++) {
                s = ref;
                s.args.varyings = s.varyings;
                s.args.z = s.z;
                s.args.color = s.color;
                s.args.cb = s.cb;
                s.args.cb_size = s.cb_size;
                s.cb[0] = s.cb0;
                memset(s.color, 0xCD, sizeof s.color);
                lv[l]->ps[e](&s.args);
                if (memcmp(s.color, ref.color, 4 * BLOCK * sizeof(float)) != 0) {
                    if (mismatches++ < 5)
                        fprintf(stderr, "    effect %d: %s differs from scalar (iteration %d)\n",
                                e, lv[l]->name, iter);
                }
            }
        }
    }
    th_check(mismatches == 0, "every SIMD level is bit-identical to the scalar reference",
             __FILE__, __LINE__);
}

/* ---- choice of level ---- */

static void *first_use(void *arg)
{
    kiln_pixel_shader_desc *ps = arg;
    kiln_effect_get(KILN_EFFECT_LIT, NULL, ps);
    return NULL;
}

/* Concurrent first calls all get the same kernel (run first, under TSan too). */
static void test_concurrent_first_use(void)
{
    enum { N = 8 };
    pthread_t t[N];
    kiln_pixel_shader_desc ps[N];
    for (int i = 0; i < N; i++)
        pthread_create(&t[i], NULL, first_use, &ps[i]);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    int same = 1;
    for (int i = 1; i < N; i++)
        same &= ps[i].fn == ps[0].fn;
    CHECK(same && ps[0].fn != NULL);
}

static void test_simd_level_choice(void)
{
    const char *level = kiln_effect_simd_level();
    const char *env = getenv("KILN_SIMD");
    CHECK(strcmp(level, kr_effects_kernels(kr_effects_detect(env))->name) == 0);
#if KR_EFFECTS_X86
    CHECK(strcmp(level, "avx512") == 0 || strcmp(level, "avx2") == 0 || strcmp(level, "sse2") == 0);
    kr_simd avx2 = kr_effects_kernels(KR_SIMD_AVX2) ? KR_SIMD_AVX2 : KR_SIMD_SSE2;
    kr_simd best = kr_effects_kernels(KR_SIMD_AVX512) ? KR_SIMD_AVX512 : avx2;
    /* AVX-512 comes with AVX2 and FMA, or not at all */
    CHECK(!kr_effects_kernels(KR_SIMD_AVX512) || kr_effects_kernels(KR_SIMD_AVX2));
    CHECK_EQ_INT(kr_effects_detect(NULL), best);
    CHECK_EQ_INT(kr_effects_detect("sse2"), KR_SIMD_SSE2);
    CHECK_EQ_INT(kr_effects_detect("avx2"), avx2);
    CHECK_EQ_INT(kr_effects_detect("avx512"), best);
    CHECK_EQ_INT(kr_effects_detect("SSE2 "), best); /* only the exact value forces */
    CHECK_EQ_INT(kr_effects_detect(""), best);
    CHECK(kr_effects_kernels(KR_SIMD_SSE2) != NULL);
#else
    CHECK(strcmp(level, "scalar") == 0);
    CHECK(kr_effects_kernels(KR_SIMD_SSE2) == NULL && kr_effects_kernels(KR_SIMD_AVX2) == NULL &&
          kr_effects_kernels(KR_SIMD_AVX512) == NULL);
#endif
    CHECK(kr_effects_kernels(KR_SIMD_COUNT) == NULL);
    CHECK_RESULT(kr_effects_force_level(KR_SIMD_COUNT), KILN_E_INVALID_ARG);
    CHECK(strcmp(kiln_effect_simd_level(), level) == 0); /* unchanged */

    /* Forcing a level: the descs filled afterwards carry its kernels. */
    const kr_effect_kernels *lv[KR_SIMD_COUNT];
    int n = levels(lv);
    for (int l = 0; l < n; l++) {
        kr_simd which = KR_SIMD_SCALAR;
        for (int k = 0; k < KR_SIMD_COUNT; k++)
            if (kr_effects_kernels((kr_simd)k) == lv[l])
                which = (kr_simd)k;
        CHECK_RESULT(kr_effects_force_level(which), KILN_OK);
        CHECK(strcmp(kiln_effect_simd_level(), lv[l]->name) == 0);
        for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
            kiln_pixel_shader_desc ps;
            kiln_effect_get((kiln_effect)e, NULL, &ps);
            CHECK(ps.fn == lv[l]->ps[e]);
        }
    }
    CHECK_RESULT(kr_effects_force_level(kr_effects_detect(env)), KILN_OK);
    CHECK(strcmp(kiln_effect_simd_level(), level) == 0);
}

/* Writes varying 0 (user 0) or 1 (user 1) to target 0. */
static void ps_varying_n(kiln_ps_args *a)
{
    int k = a->user ? 1 : 0;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = KILN_PS_VARYING(a, k, c)[i];
}

/* An effect's vertex shader declared with a varying more than it writes:
 * the extra one reads zeros (the geometry zeroes the rows then; with the
 * effect's own count it skips that, kr_effect_vs_writes), and the varying
 * it writes is the color. */
static void test_effect_vs_extra_varying_reads_zero(void)
{
    kiln_vertex_shader_desc vd;
    CHECK_RESULT(kiln_effect_get(KILN_EFFECT_VERTEX_COLOR, &vd, NULL), KILN_OK);
    CHECK(kr_effect_vs_writes(vd.fn, vd.num_varyings));
    CHECK(!kr_effect_vs_writes(vd.fn, vd.num_varyings + 1));
    CHECK(!kr_effect_vs_writes(ru_vs_pass, vd.num_varyings));
    for (int k = 0; k < 2; k++) {
        kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
        kiln_context *ctx = kiln_device_immediate_context(dev);
        kiln_vertex_shader_desc d = vd;
        d.num_varyings = vd.num_varyings + 1;
        kiln_vertex_shader vs = {0};
        CHECK_RESULT(kiln_create_vertex_shader(dev, &d, &vs), KILN_OK);
        kiln_pixel_shader_desc pd = {
            .fn = ps_varying_n, .num_varyings = 2, .num_outputs = 1, .user = k ? (void *)1 : NULL};
        kiln_pixel_shader ps = {0};
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
        kiln_input_layout_desc ld;
        memset(&ld, 0, sizeof ld);
        ld.num_elements = 2;
        ld.elements[0] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 0, 0, 0};
        ld.elements[1] = (kiln_input_element){KILN_FORMAT_R32G32B32A32_FLOAT, 0, 16, 0, 0};
        kiln_input_layout il = {0};
        CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
        ru_tex rt = ru_rt(dev, 8, 8, KILN_FORMAT_R32G32B32A32_FLOAT);
        kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
        const float ident[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        kiln_buffer cb = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, ident, sizeof ident);
        {
            /* first a scene whose shaded rows (the device's pooled
             * memory, reused by the next scene) are all non-zero */
            ru_pipe dirty = ru_make_pipe(dev, 2, RU_PS_VARY, 1, 0);
            ru_bind_pipe(ctx, &dirty);
            static float many[3000][12];
            for (int i = 0; i < 3000; i++)
                for (int c = 0; c < 12; c++)
                    many[i][c] = c < 2    ? -50.0f
                                 : c == 2 ? 0.5f
                                 : c == 3 ? 1.0f
                                          : 7.0f; /* off the target */
            ru_draw(dev, ctx, many, 3000, sizeof many[0], KILN_TOPOLOGY_TRIANGLE_LIST);
            kiln_finish(ctx);
            ru_free_pipe(dev, &dirty);
        }
        CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
        CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
        CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
        const float one[4] = {0.5f, 0.5f, 0.5f, 0.5f};
        CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, one), KILN_OK);
        /* one triangle over the target, color (0.25, 0.5, 0.75, 1) */
        const float v[3][8] = {{-1, -1, 0.5f, 1, 0.25f, 0.5f, 0.75f, 1},
                               {-1, 3, 0.5f, 1, 0.25f, 0.5f, 0.75f, 1},
                               {3, -1, 0.5f, 1, 0.25f, 0.5f, 0.75f, 1}};
        ru_draw(dev, ctx, v, 3, sizeof v[0], KILN_TOPOLOGY_TRIANGLE_LIST);
        float *px = ru_read_f32(dev, &rt);
        const float want[2][4] = {{0.25f, 0.5f, 0.75f, 1}, {0, 0, 0, 0}};
        int same = 1;
        for (int i = 0; i < 64; i++)
            for (int c = 0; c < 4; c++)
                same &= px[4 * i + c] == want[k][c];
        CHECK(same);
        free(px);
        kiln_device_destroy(dev);
        (void)rs;
    }
}

static void ps_const(kiln_ps_args *a)
{
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < BLOCK; i++)
            KILN_PS_COLOR(a, 0, c)[i] = c == 3 ? 1.0f : 0.5f;
}

/* Called directly with rows narrower than the effect's (4 floats in and
 * out, as a desc declaring one input and no varying gives): each shader
 * writes the positions and nothing past its rows. */
static void test_effect_vs_narrow_rows_direct(void)
{
    for (int e = 0; e < KILN_EFFECT_COUNT; e++) {
        kiln_vertex_shader_desc d;
        CHECK_RESULT(kiln_effect_get((kiln_effect)e, &d, NULL), KILN_OK);
        const float m[32] = {2, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                             1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
        const void *cb[1] = {m};
        const uint32_t cb_size[1] = {sizeof m};
        float in[3 * 4], out[3 * 4 + 16];
        for (int i = 0; i < 12; i++)
            in[i] = (float)(i + 1);
        for (int i = 0; i < 3 * 4 + 16; i++)
            out[i] = -7.0f;
        kiln_vs_args a = {.count = 3,
                          .in = in,
                          .in_stride = 4,
                          .out = out,
                          .out_stride = 4,
                          .cb = cb,
                          .cb_size = cb_size};
        d.fn(&a);
        for (int v = 0; v < 3; v++) {
            CHECK(out[4 * v] == 2.0f * in[4 * v]);
            CHECK(out[4 * v + 1] == 3.0f * in[4 * v + 1]);
        }
        int guard = 1;
        for (int i = 12; i < 3 * 4 + 16; i++)
            guard &= out[i] == -7.0f;
        CHECK(guard);
    }
}

/* The effects' vertex shaders declared with fewer inputs and varyings
 * than they use (position only, no varying): rows of 4 floats, which the
 * shaders must not run past (ASan), and the position still transformed. */
static void test_effect_vs_fewer_varyings(void)
{
    static const kiln_effect fx[3] = {KILN_EFFECT_VERTEX_COLOR, KILN_EFFECT_TEXTURE_COLOR,
                                      KILN_EFFECT_LIT};
    for (int e = 0; e < 3; e++)
        for (uint32_t nv = 0; nv < 2; nv++) {
            kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
            kiln_context *ctx = kiln_device_immediate_context(dev);
            kiln_vertex_shader_desc d;
            CHECK_RESULT(kiln_effect_get(fx[e], &d, NULL), KILN_OK);
            d.num_inputs = 1;
            d.num_varyings = nv;
            kiln_vertex_shader vs = {0};
            CHECK_RESULT(kiln_create_vertex_shader(dev, &d, &vs), KILN_OK);
            kiln_pixel_shader_desc pd = {.fn = ps_const, .num_outputs = 1};
            kiln_pixel_shader ps = {0};
            CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &ps), KILN_OK);
            kiln_input_layout_desc ld;
            memset(&ld, 0, sizeof ld);
            ld.num_elements = 1;
            ld.elements[0] = (kiln_input_element){KILN_FORMAT_R32G32B32_FLOAT, 0, 0, 0, 0};
            kiln_input_layout il = {0};
            CHECK_RESULT(kiln_create_input_layout(dev, &ld, vs, &il), KILN_OK);
            ru_tex rt = ru_rt(dev, 8, 8, KILN_FORMAT_R32G32B32A32_FLOAT);
            ru_target_2d(dev, ctx, &rt);
            const float m[32] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1,
                                 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
            kiln_buffer cb = ru_buffer(dev, KILN_BIND_CONSTANT_BUFFER, m, sizeof m);
            CHECK_RESULT(kiln_vs_set_constant_buffers(ctx, 0, 1, &cb), KILN_OK);
            CHECK_RESULT(kiln_vs_set_shader(ctx, vs), KILN_OK);
            CHECK_RESULT(kiln_ps_set_shader(ctx, ps), KILN_OK);
            CHECK_RESULT(kiln_ia_set_input_layout(ctx, il), KILN_OK);
            const float zero[4] = {0, 0, 0, 0};
            CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, zero), KILN_OK);
            /* the left half (x < 0 in clip space): 300 vertices, so the
             * rows of several batches end where the arena's chunk does */
            static float v[300][3];
            for (int i = 0; i < 300; i++) {
                static const float quad[6][3] = {{-1, -1, 0.5f}, {-1, 1, 0.5f}, {0, -1, 0.5f},
                                                 {0, -1, 0.5f},  {-1, 1, 0.5f}, {0, 1, 0.5f}};
                memcpy(v[i], quad[i % 6], sizeof v[i]);
            }
            ru_draw(dev, ctx, v, 300, sizeof v[0], KILN_TOPOLOGY_TRIANGLE_LIST);
            float *px = ru_read_f32(dev, &rt);
            int left = 1, right = 1;
            for (int y = 0; y < 8; y++)
                for (int x = 0; x < 8; x++) {
                    const float *p = px + 4 * (y * 8 + x);
                    if (x < 4)
                        left &= p[0] == 0.5f && p[3] == 1.0f;
                    else
                        right &= p[0] == 0.0f && p[3] == 0.0f;
                }
            CHECK(left && right);
            free(px);
            kiln_device_destroy(dev);
        }
}

int main(void)
{
    textures_init();
    test_concurrent_first_use();
    test_invalid_effect_fails_and_zeroes();
    test_descs_and_glsl();
    test_vertex_shaders_transform();
    test_vertex_shader_short_constants_read_zero();
    test_vertex_color_copies();
    test_lit_formula();
    test_lit_back_facing_is_ambient();
    test_texture_kernels_sample_slot0();
    test_levels_bit_identical();
    test_simd_level_choice();
    test_effect_vs_extra_varying_reads_zero();
    test_effect_vs_narrow_rows_direct();
    test_effect_vs_fewer_varyings();
    return th_exit();
}
