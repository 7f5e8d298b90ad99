/*
 * D3D10's sampler additions (issue 12), each against values this file
 * computes on its own:
 *
 *  - MIRROR_ONCE: POINT reads texel min(floor(|u| w), w - 1) at
 *    coordinates away from texel edges, LINEAR blends the two texels
 *    around |u| w - 0.5 as mirrored once and clamped;
 *  - ANISOTROPIC: footprints whose taps land on texel centers (major
 *    derivative 6 texels, minor 1.1: N = ceil(6 / 1.1) = 6 taps 1 texel
 *    apart at LOD 0) along u and along v, through Sample and SampleGrad;
 *    max_anisotropy 4 on the same footprint (4 taps 1.5 texels apart at
 *    LOD log2(6 / 4), between mips 0 and 1); an isotropic footprint and
 *    max_anisotropy 1 give the trilinear sample bit for bit;
 *  - BORDER for every kind of format: clamped to [0, 1] for UNORM, sRGB
 *    (not decoded) and BC, to [-1, 1] for SNORM, as given for float
 *    formats; integer formats sample zeros;
 *  - the sampler desc's rules (STATE_DESC) and the osmesa backend's
 *    refusal (BACKEND_FEATURE);
 *  - capture 1.4: a sampler with max_anisotropy is record
 *    CREATE_SAMPLER_EXT (op 115) and decodes to its desc; MIRROR_ONCE
 *    and ANISOTROPIC fit the older records' widened ranges; the replay
 *    gives every call's live result; the reserved ops 102..114 are
 *    refused.
 * Values agree within 1e-5 (float against double; the taps' positions
 * and weights are exact by construction).
 */
#include "capture_util.h"
#include "raster/raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOL 1e-5

/* ---- a texture over our own memory ---- */

typedef struct tex {
    kr_texture t;
    kres_subresource subs[16];
    uint8_t *mem;
    uint32_t bpp, mips;
} tex;

static void tex_init(tex *x, kiln_format f, uint32_t w, uint32_t h, uint32_t mips)
{
    memset(x, 0, sizeof *x);
    x->bpp = kiln_format_size(f);
    x->mips = mips;
    uint32_t dim = kiln_format_block_dim(f);
    size_t off = 0;
    for (uint32_t m = 0; m < mips; m++) {
        kres_subresource *s = &x->subs[m];
        s->width = w >> m ? w >> m : 1;
        s->height = h >> m ? h >> m : 1;
        s->row_pitch = (s->width + dim - 1) / dim * x->bpp + 12;
        s->size = (size_t)s->row_pitch * ((s->height + dim - 1) / dim);
        s->offset = off;
        off += s->size + 4;
    }
    x->mem = calloc(1, off);
    x->t.data = x->mem;
    x->t.subs = x->subs;
    x->t.format = f;
    x->t.res_mip_levels = mips;
    x->t.num_mips = mips;
}

static float *f32(tex *x, uint32_t m, uint32_t px, uint32_t py)
{
    return (float *)(void *)(x->mem + x->subs[m].offset + (size_t)py * x->subs[m].row_pitch +
                             (size_t)px * 4);
}

static kiln_ps_args args_for(struct kiln_ps_textures *pt, const tex *x, const kd_sampler *s)
{
    memset(pt, 0, sizeof *pt);
    pt->tex[0] = x->t;
    pt->samp[0] = s;
    kiln_ps_args a;
    memset(&a, 0, sizeof a);
    a.textures = pt;
    return a;
}

static kd_sampler resolve(const kiln_sampler_desc *d)
{
    kd_sampler s;
    kd_sampler_resolve(d, &s);
    return s;
}

static int near(double got, double want) { return fabs(got - want) <= TOL; }

/* ---- MIRROR_ONCE ---- */

static int mirror_once_index(int i, int n)
{
    i = i < 0 ? -i - 1 : i;
    return i > n - 1 ? n - 1 : i;
}

static void test_mirror_once(void)
{
    tex x;
    tex_init(&x, KILN_FORMAT_R32_FLOAT, 4, 4, 1);
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t i = 0; i < 4; i++)
            *f32(&x, 0, i, y) = 10.0f * (float)(i + 1) + 100.0f * (float)y;
    static const float coords[16] = {0.1f,  0.3f,  0.6f, 0.9f, -0.1f,  -0.3f, -0.6f,  -0.9f,
                                     -1.2f, -2.7f, 1.3f, 2.6f, -0.05f, 0.05f, -0.45f, 5.3f};
    for (int axis = 0; axis < 2; axis++)
        for (int lin = 0; lin < 2; lin++) {
            kiln_sampler_desc d = {.min_filter = lin ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                   .mag_filter = lin ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                   .address_u = KILN_ADDRESS_MIRROR_ONCE,
                                   .address_v = KILN_ADDRESS_MIRROR_ONCE};
            kd_sampler s = resolve(&d);
            struct kiln_ps_textures pt;
            kiln_ps_args a = args_for(&pt, &x, &s);
            float u[16], v[16], out[64];
            for (int i = 0; i < 16; i++) {
                u[i] = axis ? 0.625f : coords[i]; /* the other axis at a texel center (2) */
                v[i] = axis ? coords[i] : 0.625f;
            }
            kiln_ps_sample(&a, 0, 0, u, v, out);
            int bad = 0;
            for (int i = 0; i < 16; i++) {
                double c = coords[i], want;
                double other = 2; /* texel index on the other axis */
                if (!lin) {
                    int t = (int)floor(fabs(c) * 4.0);
                    t = t > 3 ? 3 : t;
                    want = axis ? 10.0 * 3 + 100.0 * t : 10.0 * (t + 1) + 100.0 * other;
                } else {
                    double p = c * 4.0 - 0.5, fl = floor(p);
                    double f = floor((p - fl) * 256.0 + 0.5) / 256.0;
                    int i0 = mirror_once_index((int)fl, 4), i1 = mirror_once_index((int)fl + 1, 4);
                    double t0 = axis ? 30.0 + 100.0 * i0 : 10.0 * (i0 + 1) + 200.0;
                    double t1 = axis ? 30.0 + 100.0 * i1 : 10.0 * (i1 + 1) + 200.0;
                    want = (1 - f) * t0 + f * t1;
                }
                if (!near(out[i], want) && bad++ < 3)
                    fprintf(stderr, "    MIRROR_ONCE %s axis %c coord %g: %.7g, want %.7g\n",
                            lin ? "LINEAR" : "POINT", axis ? 'v' : 'u', c, out[i], want);
            }
            th_check(bad == 0, lin ? "MIRROR_ONCE LINEAR" : "MIRROR_ONCE POINT", __FILE__,
                     __LINE__);
        }
    free(x.mem);
}

/* ---- ANISOTROPIC ---- */

#define AS 64
static th_rng rng = {0x5EEDull};

/* 64x64 R32_FLOAT, 7 mips of random values in [0, 1). */
static void aniso_tex(tex *x)
{
    tex_init(x, KILN_FORMAT_R32_FLOAT, AS, AS, 7);
    for (uint32_t m = 0; m < 7; m++)
        for (uint32_t y = 0; y < x->subs[m].height; y++)
            for (uint32_t i = 0; i < x->subs[m].width; i++)
                *f32(x, m, i, y) = (float)th_below(&rng, 1u << 20) / (float)(1u << 20);
}

/* Bilinear on mip m at (u, v), CLAMP, fractions rounded to 1/256. */
static double ref_bilinear(tex *x, uint32_t m, double u, double v)
{
    int w = (int)x->subs[m].width, h = (int)x->subs[m].height;
    double px = u * w - 0.5, py = v * h - 0.5, fx = floor(px), fy = floor(py);
    double ax = floor((px - fx) * 256.0 + 0.5) / 256.0, ay = floor((py - fy) * 256.0 + 0.5) / 256.0;
    double r = 0.0;
    for (int dy = 0; dy < 2; dy++)
        for (int dx = 0; dx < 2; dx++) {
            int tx = (int)fx + dx, ty = (int)fy + dy;
            tx = tx < 0 ? 0 : tx >= w ? w - 1 : tx;
            ty = ty < 0 ? 0 : ty >= h ? h - 1 : ty;
            r += (dx ? ax : 1 - ax) * (dy ? ay : 1 - ay) * *f32(x, m, (uint32_t)tx, (uint32_t)ty);
        }
    return r;
}

/* The anisotropic reference: N taps along (au, av) (uv) at LOD lod, each
 * trilinear, averaged. */
static double ref_aniso(tex *x, double u, double v, double au, double av, int n, double lod)
{
    lod = lod < 0 ? 0 : lod;
    int l0 = (int)floor(lod);
    double lw = lod - l0, sum = 0.0;
    for (int k = 0; k < n; k++) {
        double o = (k + 0.5) / n - 0.5, uk = u + o * au, vk = v + o * av;
        double t = ref_bilinear(x, (uint32_t)l0, uk, vk);
        if (lw > 0)
            t = (1 - lw) * t + lw * ref_bilinear(x, (uint32_t)l0 + 1, uk, vk);
        sum += t;
    }
    return sum / n;
}

/* A block whose quads all share the footprint: pixel (px, py) at
 * (u0 + px dux + py duy, v0 + px dvx + py dvy). */
static void footprint(float u0, float v0, float dux, float dvx, float duy, float dvy, float *u,
                      float *v)
{
    for (int i = 0; i < 16; i++) {
        float px = (float)(i % 4), py = (float)(i / 4);
        u[i] = u0 + px * dux + py * duy;
        v[i] = v0 + px * dvx + py * dvy;
    }
}

static void test_anisotropic(void)
{
    tex x;
    aniso_tex(&x);
    const float T = 1.0f / AS, MAJ = 6.0f * T, MIN = 1.1f * T;
    for (int along_v = 0; along_v < 2; along_v++)
        for (int maxa = 0; maxa < 2; maxa++) {
            /* u0 on a texel edge (20), v0 on a row center (10.5): along the
             * major axis the 6 taps land on texel centers 1 texel apart */
            float u[16], v[16], out[64], outg[64];
            if (!along_v)
                footprint(20 * T, 10.5f * T, MAJ, 0, 0, MIN, u, v);
            else
                footprint(10.5f * T, 20 * T, MIN, 0, 0, MAJ, u, v);
            kiln_sampler_desc d = {.min_filter = KILN_FILTER_ANISOTROPIC,
                                   .max_anisotropy = maxa ? 4 : 16};
            kd_sampler s = resolve(&d);
            struct kiln_ps_textures pt;
            kiln_ps_args a = args_for(&pt, &x, &s);
            kiln_ps_sample(&a, 0, 0, u, v, out);
            float dux[16], dvx[16], duy[16], dvy[16];
            for (int i = 0; i < 16; i++) {
                dux[i] = along_v ? MIN : MAJ;
                dvx[i] = 0;
                duy[i] = 0;
                dvy[i] = along_v ? MAJ : MIN;
            }
            kiln_ps_sample_grad(&a, 0, 0, u, v, dux, dvx, duy, dvy, outg);
            int n = maxa ? 4 : 6, bad = 0;
            double lod = log2(6.0 / n);
            for (int i = 0; i < 16; i++) {
                double want =
                    ref_aniso(&x, u[i], v[i], along_v ? 0 : MAJ, along_v ? MAJ : 0, n, lod);
                for (int g = 0; g < 2; g++) {
                    float got = g ? outg[i] : out[i];
                    if ((!near(got, want) || !near(out[16 + i], 0) || out[48 + i] != 1.0f) &&
                        bad++ < 3)
                        fprintf(stderr,
                                "    ANISOTROPIC %s along %c max %d pixel %d: %.7g, want %.7g\n",
                                g ? "SampleGrad" : "Sample", along_v ? 'v' : 'u', n, i, got, want);
                }
            }
            th_check(bad == 0, maxa ? "ANISOTROPIC max 4" : "ANISOTROPIC 6 taps", __FILE__,
                     __LINE__);
        }

    /* isotropic footprints and max_anisotropy 1: the trilinear sample, bit
     * for bit (the RGBA8 kernel's bits too: an RGBA8 texture) */
    tex r8;
    tex_init(&r8, KILN_FORMAT_R8G8B8A8_UNORM, AS, AS, 7);
    for (uint32_t m = 0; m < 7; m++)
        for (size_t b = 0; b < r8.subs[m].size; b++)
            r8.mem[r8.subs[m].offset + b] = (uint8_t)th_next(&rng);
    kiln_sampler_desc tri = {.min_filter = KILN_FILTER_LINEAR,
                             .mag_filter = KILN_FILTER_LINEAR,
                             .mip_filter = KILN_FILTER_LINEAR};
    kd_sampler st = resolve(&tri);
    const tex *texs[2] = {&x, &r8};
    for (int k = 0; k < 2; k++)
        for (int c = 0; c < 2; c++) {
            float u[16], v[16], want[64], got[64];
            if (c == 0)
                footprint(0.3f, 0.4f, 2.5f * T, 0.4f * T, -0.4f * T, 2.5f * T, u,
                          v); /* isotropic */
            else
                footprint(0.3f, 0.4f, MAJ, 0, 0, MIN, u, v);
            kiln_sampler_desc d = {.min_filter = KILN_FILTER_ANISOTROPIC,
                                   .max_anisotropy = c ? 1 : 16};
            kd_sampler sa = resolve(&d);
            struct kiln_ps_textures pt;
            kiln_ps_args a = args_for(&pt, texs[k], &st);
            kiln_ps_sample(&a, 0, 0, u, v, want);
            a = args_for(&pt, texs[k], &sa);
            kiln_ps_sample(&a, 0, 0, u, v, got);
            th_check(memcmp(want, got, sizeof got) == 0,
                     c ? "max_anisotropy 1 is trilinear" : "an isotropic footprint is trilinear",
                     __FILE__, __LINE__);
        }
    free(r8.mem);
    free(x.mem);
}

/* ---- BORDER for every kind of format ---- */

static void test_border_formats(void)
{
    static const struct {
        kiln_format f;
        float want[4]; /* border (2, -3, 0.25, 7) as the format reads it */
    } cases[] = {
        {KILN_FORMAT_R8G8B8A8_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R8_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R8G8B8A8_UNORM_SRGB, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R16_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R10G10B10A2_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R8G8B8A8_SNORM, {1, -1, 0.25f, 1}},
        {KILN_FORMAT_R32_FLOAT, {2, -3, 0.25f, 7}},
        {KILN_FORMAT_R16G16B16A16_FLOAT, {2, -3, 0.25f, 7}},
        {KILN_FORMAT_R11G11B10_FLOAT, {2, -3, 0.25f, 7}},
        {KILN_FORMAT_BC1_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_BC3_UNORM_SRGB, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_BC5_UNORM, {1, 0, 0.25f, 1}},
        {KILN_FORMAT_R8G8B8A8_UINT, {0, 0, 0, 0}}, /* not sampleable: zeros */
        {KILN_FORMAT_R32_SINT, {0, 0, 0, 0}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        tex x;
        tex_init(&x, cases[k].f, 8, 8, 1);
        for (int lin = 0; lin < 2; lin++) {
            kiln_sampler_desc d = {.min_filter = lin ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                   .mag_filter = lin ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                                   .address_u = KILN_ADDRESS_BORDER,
                                   .address_v = KILN_ADDRESS_BORDER,
                                   .border_color = {2, -3, 0.25f, 7}};
            kd_sampler s = resolve(&d);
            struct kiln_ps_textures pt;
            kiln_ps_args a = args_for(&pt, &x, &s);
            float u[16], v[16], out[64];
            for (int i = 0; i < 16; i++) { /* wholly outside: every tap a border read */
                u[i] = -0.5f - 0.01f * (float)i;
                v[i] = i & 1 ? 1.7f : 0.5f;
            }
            kiln_ps_sample(&a, 0, 0, u, v, out);
            int bad = 0;
            for (int i = 0; i < 16; i++)
                for (int c = 0; c < 4; c++)
                    if (!near(out[c * 16 + i], cases[k].want[c]) && bad++ < 2)
                        fprintf(stderr, "    format %d %s pixel %d channel %d: %g, want %g\n",
                                (int)cases[k].f, lin ? "LINEAR" : "POINT", i, c, out[c * 16 + i],
                                cases[k].want[c]);
            th_check(bad == 0, "BORDER converted to the format's range", __FILE__, __LINE__);
        }
        free(x.mem);
    }
}

/* ---- the desc's rules ---- */

static void test_rules(void)
{
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    th_logs.quiet = 1;
    kiln_sampler smp;
    kiln_sampler_desc d = {.min_filter = KILN_FILTER_ANISOTROPIC, .max_anisotropy = 16};
    CHECK_RESULT(kiln_create_sampler(dev, &d, &smp), KILN_OK);
    kiln_destroy_sampler(dev, smp);
    d.mag_filter = d.mip_filter = KILN_FILTER_ANISOTROPIC;
    CHECK_RESULT(kiln_create_sampler(dev, &d, &smp), KILN_OK);
    kiln_destroy_sampler(dev, smp);
    d.max_anisotropy = 17;
    CHECK_FAILS(kiln_create_sampler(dev, &d, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    d.max_anisotropy = 0;
    d.mip_filter = KILN_FILTER_POINT;
    CHECK_FAILS(kiln_create_sampler(dev, &d, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    kiln_sampler_desc m = {.mag_filter = KILN_FILTER_ANISOTROPIC}; /* not in min_filter */
    CHECK_FAILS(kiln_create_sampler(dev, &m, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    kiln_sampler_desc f = {.min_filter = (kiln_filter)(KILN_FILTER_ANISOTROPIC + 1)};
    CHECK_FAILS(kiln_create_sampler(dev, &f, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    kiln_sampler_desc mo = {.address_u = KILN_ADDRESS_MIRROR_ONCE,
                            .address_v = KILN_ADDRESS_MIRROR_ONCE};
    CHECK_RESULT(kiln_create_sampler(dev, &mo, &smp), KILN_OK);
    kiln_destroy_sampler(dev, smp);
    mo.address_v = (kiln_address)(KILN_ADDRESS_MIRROR_ONCE + 1);
    CHECK_FAILS(kiln_create_sampler(dev, &mo, &smp), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    kiln_device_destroy(dev);

    kiln_device *gl = th_osmesa_device();
    if (gl) {
        kiln_sampler_desc an = {.min_filter = KILN_FILTER_ANISOTROPIC, .max_anisotropy = 8};
        CHECK_FAILS(kiln_create_sampler(gl, &an, &smp), KILN_E_UNSUPPORTED,
                    KILN_LOG_BACKEND_FEATURE);
        kiln_sampler_desc mo2 = {.address_u = KILN_ADDRESS_MIRROR_ONCE};
        CHECK_FAILS(kiln_create_sampler(gl, &mo2, &smp), KILN_E_UNSUPPORTED,
                    KILN_LOG_BACKEND_FEATURE);
        kiln_device_destroy(gl);
    }
    th_logs.quiet = 0;
}

/* ---- capture ---- */

static void test_capture(void)
{
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 1);
    th_logs.quiet = 1;
    CHECK_RESULT(kiln_capture_begin(dev, "sampler_ext.kcap"), KILN_OK);
    kiln_sampler_desc ext = {.min_filter = KILN_FILTER_ANISOTROPIC,
                             .mag_filter = KILN_FILTER_ANISOTROPIC,
                             .address_u = KILN_ADDRESS_WRAP,
                             .address_v = KILN_ADDRESS_MIRROR_ONCE,
                             .mip_lod_bias = 0.5f,
                             .border_color = {0.25f, 0.5f, 0.75f, 1.0f},
                             .comparison_func = KILN_COMPARE_LESS,
                             .max_anisotropy = 8};
    kiln_sampler_desc mo = {.address_u = KILN_ADDRESS_MIRROR_ONCE,
                            .min_filter = KILN_FILTER_ANISOTROPIC};
    kiln_sampler_desc bad = ext;
    bad.max_anisotropy = 17;
    kiln_sampler s1, s2, s3;
    CHECK_RESULT(kiln_create_sampler(dev, &ext, &s1), KILN_OK);
    CHECK_RESULT(kiln_create_sampler(dev, &mo, &s2), KILN_OK);
    CHECK_FAILS(kiln_create_sampler(dev, &bad, &s3), KILN_E_INVALID_ARG, KILN_LOG_STATE_DESC);
    CHECK_RESULT(kiln_capture_end(dev), KILN_OK);
    kiln_device_destroy(dev);
    th_logs.quiet = 0;

    size_t len;
    uint8_t *bytes = cu_read("sampler_ext.kcap", &len);
    CHECK(bytes != NULL);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_SAMPLER_EXT), 1);
    CHECK_EQ_INT(cu_count_op(bytes, len, KCAP_OP_CREATE_SAMPLER), 1); /* mo: max_anisotropy 0 */
    kcap_header h;
    kcap_error err;
    CHECK(bytes && kcap_decode_header(bytes, len, &h, &err) && h.minor == KCAP_VERSION_MINOR);
    int found = 0;
    for (size_t off = KCAP_HEADER_SIZE; bytes && off < len;) {
        kcap_call c;
        size_t next;
        if (!kcap_decode(bytes, len, off, 0, &c, &next, &err))
            break;
        if (c.op == KCAP_OP_CREATE_SAMPLER_EXT) {
            found = 1;
            CHECK(memcmp(&c.u.sampler, &ext, sizeof ext) == 0);
        }
        off = next;
    }
    CHECK(found);
    kcap_replay_report rep;
    CHECK_RESULT(cu_replay(bytes, len, KILN_EXEC_ASYNC, 1, NULL, NULL, &rep), KILN_OK);
    CHECK_EQ_INT(rep.mismatches, 0);
    /* a reserved op: the header, then record 102 with no payload */
    if (bytes) {
        uint8_t rec[KCAP_HEADER_SIZE + 2];
        memcpy(rec, bytes, KCAP_HEADER_SIZE);
        rec[KCAP_HEADER_SIZE] = 102;
        rec[KCAP_HEADER_SIZE + 1] = 0;
        kcap_call c;
        size_t next;
        CHECK(!kcap_decode(rec, sizeof rec, KCAP_HEADER_SIZE, 0, &c, &next, &err));
    }
    free(bytes);
    remove("sampler_ext.kcap");
}

int main(void)
{
    test_capture();
    test_mirror_once();
    test_anisotropic();
    test_border_formats();
    test_rules();
    return th_exit();
}
