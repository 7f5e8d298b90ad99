/*
 * Sampling the texture kinds beyond 2D (issue 12): 1D and 1D arrays, 2D
 * arrays indexed by w, 3D textures (address_w, LOD from 3D derivatives)
 * and cubes (every face, the face-selection ties, face-edge clamping, LOD
 * from face coordinates), through kiln_ps_sample_uvw and its family,
 * kiln_ps_load_uvw and kiln_ps_get_dimensions_uvw. Textures are built over
 * memory this test owns; every expected value is worked out here by hand
 * (kiln.h's face table inverted, texel centres at (i + 0.5) / size).
 */
#include "harness.h"
#include "cube_util.h"
#include "raster/raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_NEAR(got, want, tol)                                                                 \
    do {                                                                                           \
        double g_ = (got), w_ = (want);                                                            \
        int ok_ = fabs(g_ - w_) <= (tol);                                                          \
        th_check(ok_, #got " ~= " #want, __FILE__, __LINE__);                                      \
        if (!ok_)                                                                                  \
            fprintf(stderr, "    got %.9g, expected %.9g\n", g_, w_);                              \
    } while (0)

/* An R32_FLOAT texture over our memory: `slices` array slices (a cube: 6)
 * of `mips` levels, mip 0 w x h x d (d > 1: a 3D texture). */
typedef struct tex {
    kr_texture t;
    kres_subresource subs[96];
    float *mem;
    uint32_t mips;
} tex;

static void tex_init(tex *x, uint32_t dim, uint32_t w, uint32_t h, uint32_t d, uint32_t mips,
                     uint32_t slices)
{
    memset(x, 0, sizeof *x);
    size_t off = 0;
    for (uint32_t s = 0; s < slices; s++)
        for (uint32_t m = 0; m < mips; m++) {
            kres_subresource *sub = &x->subs[m + s * mips];
            sub->width = w >> m ? w >> m : 1;
            sub->height = h >> m ? h >> m : 1;
            sub->depth = d >> m ? d >> m : 1;
            sub->row_pitch = sub->width * 4 + 8; /* padded rows */
            sub->depth_pitch = (size_t)sub->row_pitch * sub->height;
            sub->size = sub->depth_pitch * sub->depth;
            sub->offset = off;
            off += sub->size + 16;
        }
    x->mem = calloc(1, off);
    x->mips = mips;
    x->t.data = (const uint8_t *)x->mem;
    x->t.subs = x->subs;
    x->t.format = KILN_FORMAT_R32_FLOAT;
    x->t.res_mip_levels = mips;
    x->t.num_mips = mips;
    x->t.num_slices = slices;
    x->t.dim = dim;
}

static float *at(tex *x, uint32_t mip, uint32_t slice, uint32_t px, uint32_t py, uint32_t pz)
{
    const kres_subresource *s = &x->subs[mip + slice * x->mips];
    return (float *)(void *)((uint8_t *)x->mem + s->offset + pz * s->depth_pitch +
                             (size_t)py * s->row_pitch + (size_t)px * 4);
}

static void fill(tex *x,
                 float (*f)(uint32_t mip, uint32_t slice, uint32_t px, uint32_t py, uint32_t pz))
{
    for (uint32_t s = 0; s < x->t.num_slices; s++)
        for (uint32_t m = 0; m < x->mips; m++) {
            const kres_subresource *sub = &x->subs[m + s * x->mips];
            for (uint32_t z = 0; z < sub->depth; z++)
                for (uint32_t y = 0; y < sub->height; y++)
                    for (uint32_t i = 0; i < sub->width; i++)
                        *at(x, m, s, i, y, z) = f(m, s, i, y, z);
        }
}

static kd_sampler sampler(kiln_filter f, kiln_filter mip, kiln_address a, kiln_address w)
{
    kiln_sampler_desc d = {0};
    d.min_filter = d.mag_filter = f;
    d.mip_filter = mip;
    d.address_u = d.address_v = a;
    d.address_w = w;
    d.border_color[0] = -1.0f;
    kd_sampler s;
    kd_sampler_resolve(&d, &s);
    return s;
}

static struct kiln_ps_textures pt;
static kiln_ps_args args;

static const kiln_ps_args *bind(const tex *x, const kd_sampler *s)
{
    memset(&pt, 0, sizeof pt);
    pt.tex[0] = x->t;
    pt.samp[0] = s;
    memset(&args, 0, sizeof args);
    args.textures = &pt;
    return &args;
}

static void set16(float *a, float v)
{
    for (int i = 0; i < 16; i++)
        a[i] = v;
}

/* ---- 1D ---- */

static float f_1d(uint32_t m, uint32_t s, uint32_t i, uint32_t y, uint32_t z)
{
    (void)y, (void)z;
    return m == 0 ? (float)(s * 1000 + i * 10) : 100.0f + (float)m;
}

static void test_1d_point_linear(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE1D, 8, 1, 1, 1, 1);
    fill(&x, f_1d);
    float u[16], v[16], out[64];
    /* v is no coordinate of a 1D view: BORDER on v never reads the border */
    kd_sampler pt_s = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_BORDER, 0);
    set16(v, 123.0f);
    for (int i = 0; i < 16; i++)
        u[i] = ((float)(i % 8) + 0.9f) / 8.0f; /* texel i % 8 */
    kiln_ps_sample_uvw(bind(&x, &pt_s), 0, 0, u, v, NULL, out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], (i % 8) * 10, 0);
    CHECK_NEAR(out[48], 1.0, 0); /* alpha of R32_FLOAT */
    /* LINEAR: x = u * 8 - 0.5 = 2.25: texels 2 and 3 weighted 3/4, 1/4 */
    kd_sampler li = sampler(KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    set16(u, 2.75f / 8.0f);
    kiln_ps_sample_uvw(bind(&x, &li), 0, 0, u, v, NULL, out);
    CHECK_NEAR(out[5], 22.5, 0);
    /* the 2D call on a 1D view reads it the same way */
    kiln_ps_sample(bind(&x, &li), 0, 0, u, v, out);
    CHECK_NEAR(out[9], 22.5, 0);
    /* WRAP at the left edge: x = -0.5 + 0.25 → texels 7 and 0 */
    kd_sampler wr = sampler(KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_WRAP, 0);
    set16(u, 0.25f / 8.0f);
    kiln_ps_sample_uvw(bind(&x, &wr), 0, 0, u, v, NULL, out);
    CHECK_NEAR(out[0], 70 * 0.25 + 0 * 0.75, 0);
    free(x.mem);
}

static void test_1d_mips(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE1D, 16, 1, 1, 5, 1);
    fill(&x, f_1d);
    float u[16], v[16] = {0}, out[64];
    kd_sampler s = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_WRAP, 0);
    /* u grows 4 texels of mip 0 per pixel along x, not along y: LOD 2 */
    for (int i = 0; i < 16; i++)
        u[i] = (float)(i % 4) * 4.0f / 16.0f;
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, NULL, out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], 102, 0);
    /* 3 texels per pixel, LINEAR between mips: lod log2(3), 101 and 102 */
    kd_sampler lm = sampler(KILN_FILTER_POINT, KILN_FILTER_LINEAR, KILN_ADDRESS_WRAP, 0);
    for (int i = 0; i < 16; i++)
        u[i] = (float)(i % 4) * 3.0f / 16.0f;
    kiln_ps_sample_uvw(bind(&x, &lm), 0, 0, u, v, NULL, out);
    CHECK_NEAR(out[6], 101.0 + (log2(3.0) - 1.0), 1e-4);
    /* a view from mip 1: its LOD counts texels of mip 1 */
    x.t.first_mip = 1;
    x.t.num_mips = 4;
    for (int i = 0; i < 16; i++)
        u[i] = (float)(i % 4) * 4.0f / 16.0f; /* 2 texels of mip 1: LOD 1, mip 2 */
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, NULL, out);
    CHECK_NEAR(out[3], 102, 0);
    uint32_t w, h, d, n;
    kiln_ps_get_dimensions_uvw(bind(&x, &s), 0, 1, &w, &h, &d, &n);
    CHECK(w == 4 && h == 1 && d == 1 && n == 4);
    free(x.mem);
}

static void test_1d_array(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE1DARRAY, 4, 1, 1, 1, 3);
    fill(&x, f_1d);
    kd_sampler s = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    float u[16], v[16], out[64];
    set16(u, 1.5f / 4.0f); /* texel 1 */
    /* the index rounds to nearest (halves up) and clamps to the slices */
    const float idx[6] = {1.4f, 1.5f, -3.0f, 9.0f, 0.49f, 2.0f};
    const int want[6] = {1, 2, 0, 2, 0, 2};
    for (int i = 0; i < 16; i++)
        v[i] = idx[i % 6];
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, NULL, out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], want[i % 6] * 1000 + 10, 0);
    /* Load: (x, array index y) */
    int32_t lx[16], ly[16], lm[16] = {0};
    for (int i = 0; i < 16; i++) {
        lx[i] = i % 5;     /* 4 is out of range */
        ly[i] = i / 5 - 1; /* -1 and 3 are out of range */
    }
    kiln_ps_load_uvw(bind(&x, &s), 0, lx, ly, NULL, lm, out);
    for (int i = 0; i < 16; i++) {
        int ok = lx[i] < 4 && ly[i] >= 0 && ly[i] < 3;
        CHECK_NEAR(out[i], ok ? ly[i] * 1000 + lx[i] * 10 : 0, 0);
        CHECK_NEAR(out[48 + i], ok ? 1 : 0, 0);
    }
    uint32_t w, h, d, n;
    kiln_ps_get_dimensions_uvw(bind(&x, &s), 0, 0, &w, &h, &d, &n);
    CHECK(w == 4 && h == 1 && d == 3 && n == 1);
    free(x.mem);
}

/* ---- 2D arrays: the index in w ---- */

static float f_2da(uint32_t m, uint32_t s, uint32_t i, uint32_t y, uint32_t z)
{
    (void)m, (void)z;
    return (float)(s * 100 + y * 10 + i);
}

static void test_2d_array(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE2DARRAY, 4, 4, 1, 1, 3);
    fill(&x, f_2da);
    kd_sampler s = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    float u[16], v[16], w[16], out[64];
    set16(u, 2.5f / 4.0f);
    set16(v, 1.5f / 4.0f);
    set16(w, 2.2f);
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 212, 0);
    /* the 2D call reads the view's first slice, as it always did */
    kiln_ps_sample(bind(&x, &s), 0, 0, u, v, out);
    CHECK_NEAR(out[0], 12, 0);
    /* a view from slice 1: w counts from there */
    x.t.slice = 1;
    x.t.num_slices = 2;
    set16(w, 1.0f);
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 212, 0);
    free(x.mem);
}

/* ---- 3D ---- */

static float f_3d(uint32_t m, uint32_t s, uint32_t i, uint32_t y, uint32_t z)
{
    (void)s;
    return m == 0 ? (float)(i + 10 * y + 100 * z) : 1000.0f * (float)m;
}

static void test_3d(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE3D, 4, 4, 4, 1, 1);
    fill(&x, f_3d);
    float u[16], v[16], w[16], out[64];
    kd_sampler p = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    for (int i = 0; i < 16; i++) {
        u[i] = ((float)(i % 4) + 0.5f) / 4.0f;
        v[i] = ((float)(i / 4) + 0.5f) / 4.0f;
        w[i] = ((float)((i * 3) % 4) + 0.5f) / 4.0f;
    }
    kiln_ps_sample_uvw(bind(&x, &p), 0, 0, u, v, w, out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], (i % 4) + 10 * (i / 4) + 100 * ((i * 3) % 4), 0);
    /* trilinear: the texels are linear in x, y and z, so the blend is the
     * function at (1.5, 2.25, 0.75) in texel units */
    kd_sampler l = sampler(KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    set16(u, 2.0f / 4.0f);
    set16(v, 2.75f / 4.0f);
    set16(w, 1.25f / 4.0f);
    kiln_ps_sample_uvw(bind(&x, &l), 0, 0, u, v, w, out);
    CHECK_NEAR(out[7], 1.5 + 22.5 + 75.0, 1e-4);
    /* w past the end: address_w decides (DEFAULT clamps; WRAP goes round) */
    set16(u, 0.5f / 4.0f);
    set16(v, 0.5f / 4.0f);
    set16(w, 4.5f / 4.0f);
    kd_sampler wc =
        sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_WRAP, KILN_ADDRESS_DEFAULT);
    kd_sampler ww =
        sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP);
    kd_sampler wb =
        sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, KILN_ADDRESS_BORDER);
    kd_sampler wm =
        sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, KILN_ADDRESS_MIRROR);
    kiln_ps_sample_uvw(bind(&x, &wc), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 300, 0);
    kiln_ps_sample_uvw(bind(&x, &ww), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 0, 0);
    kiln_ps_sample_uvw(bind(&x, &wb), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], -1, 0); /* the border's red */
    set16(w, 5.5f / 4.0f);     /* z = 5: mirrored, 2 */
    kiln_ps_sample_uvw(bind(&x, &wm), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 200, 0);
    /* linear WRAP across the w seam: z = -0.5 + 0.25: slices 3 and 0 */
    kd_sampler lw =
        sampler(KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP);
    set16(w, 0.25f / 4.0f);
    set16(u, 0.5f / 4.0f);
    set16(v, 0.5f / 4.0f);
    kiln_ps_sample_uvw(bind(&x, &lw), 0, 0, u, v, w, out);
    CHECK_NEAR(out[0], 300 * 0.25, 0);
    /* Load (x, y, z) and GetDimensions */
    int32_t lx[16], ly[16], lz[16], lm[16] = {0};
    for (int i = 0; i < 16; i++) {
        lx[i] = i % 4;
        ly[i] = 3 - i % 4;
        lz[i] = i / 4 + (i == 15);
    }
    kiln_ps_load_uvw(bind(&x, &p), 0, lx, ly, lz, lm, out);
    for (int i = 0; i < 15; i++)
        CHECK_NEAR(out[i], lx[i] + 10 * ly[i] + 100 * lz[i], 0);
    CHECK_NEAR(out[15], 0, 0); /* z = 4: out of range */
    uint32_t dw, dh, dd, dn;
    kiln_ps_get_dimensions_uvw(bind(&x, &p), 0, 0, &dw, &dh, &dd, &dn);
    CHECK(dw == 4 && dh == 4 && dd == 4 && dn == 1);
    free(x.mem);
}

static void test_3d_lod(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURE3D, 8, 8, 8, 4, 1);
    fill(&x, f_3d);
    float u[16], v[16], w[16], out[64];
    kd_sampler s =
        sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_WRAP, KILN_ADDRESS_WRAP);
    /* only w changes, 2 texels per pixel along y: LOD 1 (a 2D LOD on u
     * and v would read mip 0) */
    set16(u, 0.3f);
    set16(v, 0.6f);
    for (int i = 0; i < 16; i++)
        w[i] = (float)(i / 4) * 2.0f / 8.0f;
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, w, out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], 1000, 0);
    /* 4 texels along x in w, 1 in u: the longer vector, |(1, 0, 4)|: LOD
     * log2(sqrt(17)) = 2.04, mip 2 */
    for (int i = 0; i < 16; i++) {
        u[i] = (float)(i % 4) / 8.0f;
        w[i] = (float)(i % 4) * 4.0f / 8.0f;
    }
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, u, v, w, out);
    CHECK_NEAR(out[5], 2000, 0);
    /* SampleLevel, SampleBias, SampleGrad */
    float lod[16], bias[16], ddx[48] = {0}, ddy[48] = {0};
    set16(lod, 3.0f);
    kiln_ps_sample_uvw_level(bind(&x, &s), 0, 0, u, v, w, lod, out);
    CHECK_NEAR(out[2], 3000, 0);
    set16(bias, -1.0f); /* LOD 2.04 - 1: mip 1 */
    kiln_ps_sample_uvw_bias(bind(&x, &s), 0, 0, u, v, w, bias, out);
    CHECK_NEAR(out[2], 1000, 0);
    set16(ddy + 32, 2.0f / 8.0f); /* dw/dy: 2 texels: mip 1 */
    kiln_ps_sample_uvw_grad(bind(&x, &s), 0, 0, u, v, w, ddx, ddy, out);
    CHECK_NEAR(out[2], 1000, 0);
    set16(ddx, 8.0f / 8.0f); /* du/dx: 8 texels, the longer: mip 3 */
    kiln_ps_sample_uvw_grad(bind(&x, &s), 0, 0, u, v, w, ddx, ddy, out);
    CHECK_NEAR(out[2], 3000, 0);
    uint32_t dw, dh, dd, dn;
    kiln_ps_get_dimensions_uvw(bind(&x, &s), 0, 2, &dw, &dh, &dd, &dn);
    CHECK(dw == 2 && dh == 2 && dd == 2 && dn == 4);
    free(x.mem);
}

/* ---- cubes ---- */

static float f_cube(uint32_t m, uint32_t s, uint32_t i, uint32_t y, uint32_t z)
{
    (void)z;
    return m == 0 ? (float)(s * 100 + y * 10 + i) : 1000.0f * (float)m;
}


static void test_cube_faces(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURECUBE, 4, 4, 1, 1, 6);
    fill(&x, f_cube);
    kd_sampler s = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    float c[3][16], out[64];
    for (int face = 0; face < 6; face++) {
        /* pixel i reads texel (i % 4, i / 4) of the face; directions of
         * length 2 (the division by |m| matters) */
        for (int i = 0; i < 16; i++) {
            float d[3];
            cube_dir(face, ((float)(i % 4) + 0.5f) / 4.0f, ((float)(i / 4) + 0.5f) / 4.0f, 2.0f, d);
            for (int k = 0; k < 3; k++)
                c[k][i] = d[k];
        }
        kiln_ps_sample_uvw(bind(&x, &s), 0, 0, c[0], c[1], c[2], out);
        for (int i = 0; i < 16; i++) {
            char msg[64];
            snprintf(msg, sizeof msg, "face %d texel (%d, %d)", face, i % 4, i / 4);
            th_check(out[i] == (float)(face * 100 + (i / 4) * 10 + i % 4), msg, __FILE__, __LINE__);
        }
    }
    /* ties: z over y over x (the face read tells which won) */
    static const float tie[8][3] = {{1, 1, 0},  {1, 0, 1},   {0, -1, -1}, {-1, -1, 1},
                                    {-1, 1, 0}, {-1, -1, 0}, {2, -2, 0},  {0, 0, 0}};
    /* +Y (s = 1: x 3, t = .5: y 2), +Z (x 3, y 2), -Z (x 2, y 3), +Z (x 0,
     * y 3), +Y (x 0, y 2), -Y (x 0, y 2), -Y (x 3, y 2), zero: +Z centre */
    static const float want[8] = {223, 423, 532, 430, 220, 320, 323, 422};
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 3; k++)
            c[k][i] = tie[i % 8][k];
    kiln_ps_sample_uvw(bind(&x, &s), 0, 0, c[0], c[1], c[2], out);
    for (int i = 0; i < 16; i++)
        CHECK_NEAR(out[i], want[i % 8], 0);
    /* Load reads nothing from a cube; GetDimensions: 6 faces */
    int32_t z[16] = {0};
    kiln_ps_load_uvw(bind(&x, &s), 0, z, z, z, z, out);
    CHECK_NEAR(out[0] + out[48], 0, 0);
    uint32_t dw, dh, dd, dn;
    kiln_ps_get_dimensions_uvw(bind(&x, &s), 0, 0, &dw, &dh, &dd, &dn);
    CHECK(dw == 4 && dh == 4 && dd == 6 && dn == 1);
    free(x.mem);
}

static void test_cube_edge_and_lod(void)
{
    tex x;
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURECUBE, 4, 4, 1, 1, 6);
    fill(&x, f_cube);
    /* LINEAR at s = 0.995 on +X: texels 3 and "4", which clamps to 3 on
     * the same face whatever the sampler's WRAP says (no seamless cubes) */
    kd_sampler l =
        sampler(KILN_FILTER_LINEAR, KILN_FILTER_POINT, KILN_ADDRESS_WRAP, KILN_ADDRESS_WRAP);
    float c[3][16], out[64], d[3];
    cube_dir(0, 0.995f, 2.5f / 4.0f, 1.0f, d);
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 3; k++)
            c[k][i] = d[k];
    kiln_ps_sample_uvw(bind(&x, &l), 0, 0, c[0], c[1], c[2], out);
    CHECK_NEAR(out[0], 23, 1e-5);
    free(x.mem);

    /* LOD from the face coordinates: 8x8 faces, 4 mips; s grows k texels
     * of mip 0 per pixel along x on +Z */
    tex_init(&x, KILN_SRV_DIMENSION_TEXTURECUBE, 8, 8, 1, 4, 6);
    fill(&x, f_cube);
    kd_sampler p = sampler(KILN_FILTER_POINT, KILN_FILTER_POINT, KILN_ADDRESS_CLAMP, 0);
    for (int k = 1; k <= 4; k *= 2) {
        for (int i = 0; i < 16; i++) {
            cube_dir(4, 0.25f + (float)(i % 4) * (float)k / 8.0f * 0.5f, 0.5f, 1.0f, d);
            for (int j = 0; j < 3; j++)
                c[j][i] = d[j];
        }
        kiln_ps_sample_uvw(bind(&x, &p), 0, 0, c[0], c[1], c[2], out);
        /* k = 1 and the half step: LOD -1, mip 0; k = 2: mip 0; k = 4: mip 1 */
        CHECK_NEAR(out[0], k == 4 ? 1000 : 400 + 40 + 2, 0);
    }
    /* a quad across the +X / +Z edge: the LOD projects the neighbours on
     * the top-left pixel's face, so it stays small (mip 0) */
    for (int i = 0; i < 16; i++) {
        float s = 0.90f + (float)(i % 4) * 0.05f; /* crosses s = 1 */
        float dd[3] = {1.0f, 0.0f, -(2.0f * s - 1.0f)};
        for (int j = 0; j < 3; j++)
            c[j][i] = dd[j];
    }
    kiln_ps_sample_uvw(bind(&x, &p), 0, 0, c[0], c[1], c[2], out);
    CHECK(out[0] < 1000.0f);
    /* SampleGrad on a cube: at the +Z centre ds = dsc / 2; dsc 0.5 is 2
     * texels of 8: mip 1 */
    float ddx[48] = {0}, ddy[48] = {0};
    for (int i = 0; i < 16; i++) {
        c[0][i] = 0.0f;
        c[1][i] = 0.0f;
        c[2][i] = 1.0f;
    }
    set16(ddx, 0.5f);
    kiln_ps_sample_uvw_grad(bind(&x, &p), 0, 0, c[0], c[1], c[2], ddx, ddy, out);
    CHECK_NEAR(out[0], 1000, 0);
    set16(ddx, 1.0f); /* 4 texels: mip 2 */
    kiln_ps_sample_uvw_grad(bind(&x, &p), 0, 0, c[0], c[1], c[2], ddx, ddy, out);
    CHECK_NEAR(out[0], 2000, 0);
    /* SampleCmpLevelZero on a cube: texel (2, 2) of -Y is 322 */
    kiln_sampler_desc cd = {0};
    cd.min_filter = cd.mag_filter = cd.mip_filter = KILN_FILTER_POINT;
    cd.comparison_func = KILN_COMPARE_LESS;
    kd_sampler cs;
    kd_sampler_resolve(&cd, &cs);
    float ref[16];
    cube_dir(3, 2.5f / 8.0f, 2.5f / 8.0f, 1.0f, d);
    for (int i = 0; i < 16; i++) {
        for (int j = 0; j < 3; j++)
            c[j][i] = d[j];
        ref[i] = i < 8 ? 321.5f : 322.5f;
    }
    kiln_ps_sample_cmp_uvw_level_zero(bind(&x, &cs), 0, 0, c[0], c[1], c[2], ref, out);
    CHECK_NEAR(out[0], 1, 0);
    CHECK_NEAR(out[8], 0, 0);
    free(x.mem);
}

int main(void)
{
    test_1d_point_linear();
    test_1d_mips();
    test_1d_array();
    test_2d_array();
    test_3d();
    test_3d_lod();
    test_cube_faces();
    test_cube_edge_and_lod();
    return th_exit();
}
