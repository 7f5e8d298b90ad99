/*
 * Sampling the texture kinds beyond 2D (issue 12): 1D and 1D arrays, 2D
 * arrays indexed by a coordinate, 3D textures and cubes, for every
 * sampling call of kiln.h on three coordinates (kiln_ps_sample_uvw and
 * its family), and the 2D calls of sample.c when their view is one of
 * these kinds.
 *
 * One general path, pixel by pixel: the view's dimension turns (u, v, w)
 * into normalized coordinates on 1, 2 or 3 filtered axes and an array
 * layer (a cube: its face, chosen as D3D10 chooses it); the LOD comes
 * from the derivatives as sample.c computes it for 2D (per 2x2 quad for
 * Sample, per pixel for the others), planned to one or two levels the
 * same way; then POINT or LINEAR taps on each axis with sample.c's own
 * addressing, 8-bit fraction quantization and texel decoding (kr_address,
 * kr_split_coord, kr_decode_texel), so a 1D view filters as a 2D one of
 * height 1 does. No SIMD kernel: these kinds are rarer, and exactness
 * comes first.
 */
#include "../resources/texel.h"
#include "log2.h"
#include "raster.h"

#include <math.h>
#include <string.h>

#define BLOCK KILN_PS_BLOCK

typedef enum kmode { K_SAMPLE, K_LEVEL, K_BIAS, K_GRAD, K_CMP, K_CMP_LZ } kmode;

/* One call: its coordinates (NULL reads 0), and what the mode adds. */
typedef struct kcall {
    kmode mode;
    const float *c[3];
    const float *extra;     /* LEVEL: lod, BIAS: bias, CMP*: reference */
    const float *ddx, *ddy; /* GRAD: 3 x 16 each */
} kcall;

/* The view resolved for sampling. */
typedef struct kview {
    const kr_texture *t;
    const kd_sampler *s;
    uint32_t nl;     /* levels of the view */
    int axes;        /* filtered axes: 1, 2 or 3 */
    int layer_coord; /* the coordinate holding the array index, or -1 */
    int cube;
    kiln_address addr[3];
    uint32_t bpp;
} kview;

/* Level m of the view (0: its first) in layer `layer` of the view. */
static inline const kres_subresource *lvl(const kr_texture *t, uint32_t m, uint32_t layer)
{
    return &t->subs[t->first_mip + m + (t->slice + layer) * t->res_mip_levels];
}

static const kr_texture *slot(const kiln_ps_args *a, uint32_t srv_slot)
{
    if (!a || !a->textures || srv_slot >= KILN_MAX_SHADER_RESOURCES)
        return NULL;
    const kr_texture *t = &a->textures->tex[srv_slot];
    return t->data && t->subs && t->num_mips ? t : NULL;
}

static int resolve(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot, kview *k)
{
    const kr_texture *t = slot(a, srv_slot);
    /* buffer views: D3D10 samples no buffer, they read zeros */
    if (!t || t->dim == KILN_SRV_DIMENSION_BUFFER || !kr_format_sampleable(t->format) ||
        !kres_format(t->format))
        return 0;
    memset(k, 0, sizeof *k);
    k->t = t;
    k->s = sampler_slot < KILN_MAX_SAMPLERS ? a->textures->samp[sampler_slot] : NULL;
    if (!k->s)
        k->s = kr_default_sampler();
    k->nl = t->num_mips < 16 ? t->num_mips : 16;
    k->bpp = kres_format(t->format)->size;
    k->layer_coord = -1;
    switch (t->dim) {
    case KILN_SRV_DIMENSION_TEXTURE1D:
        k->axes = 1;
        break;
    case KILN_SRV_DIMENSION_TEXTURE1DARRAY:
        k->axes = 1;
        k->layer_coord = 1;
        break;
    case KILN_SRV_DIMENSION_TEXTURE2DARRAY:
        k->axes = 2;
        k->layer_coord = 2;
        break;
    case KILN_SRV_DIMENSION_TEXTURE3D:
        k->axes = 3;
        break;
    case KILN_SRV_DIMENSION_TEXTURECUBE:
        k->axes = 2;
        k->cube = 1;
        break;
    default:
        k->axes = 2;
        break;
    }
    kiln_address w = k->s->address_w ? k->s->address_w : KILN_ADDRESS_CLAMP;
    k->addr[0] = k->cube ? KILN_ADDRESS_CLAMP : k->s->address_u;
    k->addr[1] = k->cube ? KILN_ADDRESS_CLAMP : k->s->address_v;
    k->addr[2] = k->cube ? KILN_ADDRESS_CLAMP : w;
    return 1;
}

static inline float coord(const kcall *c, int k, int i) { return c->c[k] ? c->c[k][i] : 0.0f; }

/* ---- cubes ---- */

/* D3D10's face selection: the major axis (ties: z, then y, then x) and
 * its sign; face = 2 * axis + (negative). */
static int cube_face(const float d[3])
{
    float ax = fabsf(d[0]), ay = fabsf(d[1]), az = fabsf(d[2]);
    if (az >= ax && az >= ay)
        return d[2] >= 0.0f ? 4 : 5;
    if (ay >= ax)
        return d[1] >= 0.0f ? 2 : 3;
    return d[0] >= 0.0f ? 0 : 1;
}

/* sc, tc and |m| of direction d on `face` (kiln.h's table). */
static void face_sct(int face, const float d[3], float *sc, float *tc, float *ma)
{
    switch (face) {
    case 0:
        *sc = -d[2];
        *tc = -d[1];
        *ma = fabsf(d[0]);
        break;
    case 1:
        *sc = d[2];
        *tc = -d[1];
        *ma = fabsf(d[0]);
        break;
    case 2:
        *sc = d[0];
        *tc = d[2];
        *ma = fabsf(d[1]);
        break;
    case 3:
        *sc = d[0];
        *tc = -d[2];
        *ma = fabsf(d[1]);
        break;
    case 4:
        *sc = d[0];
        *tc = -d[1];
        *ma = fabsf(d[2]);
        break;
    default:
        *sc = -d[0];
        *tc = -d[1];
        *ma = fabsf(d[2]);
        break;
    }
}

/* Face coordinates s, t of d projected onto `face` (centre when |m| is 0). */
static void face_st(int face, const float d[3], float *s, float *t)
{
    float sc, tc, ma;
    face_sct(face, d, &sc, &tc, &ma);
    if (!(ma > 0.0f)) {
        *s = *t = 0.5f;
        return;
    }
    *s = (sc / ma + 1.0f) * 0.5f;
    *t = (tc / ma + 1.0f) * 0.5f;
}

/* ---- coordinates ---- */

/* Pixel i's normalized coordinates on the filtered axes and its layer. */
static void pixel_coords(const kview *k, const kcall *c, int i, float nc[3], uint32_t *layer)
{
    float d[3] = {coord(c, 0, i), coord(c, 1, i), coord(c, 2, i)};
    *layer = 0;
    if (k->cube) {
        int f = cube_face(d);
        face_st(f, d, &nc[0], &nc[1]);
        nc[2] = 0.0f;
        *layer = (uint32_t)f;
        return;
    }
    nc[0] = d[0];
    nc[1] = k->axes >= 2 ? d[1] : 0.5f;
    nc[2] = k->axes >= 3 ? d[2] : 0.5f;
    if (k->layer_coord >= 0) {
        /* D3D10: the array index rounds to the nearest integer, clamped
         * to the view's slices */
        int32_t l = kr_floor_coord(d[k->layer_coord] + 0.5f);
        int32_t n = (int32_t)k->t->num_slices;
        *layer = (uint32_t)(l < 0 ? 0 : l >= n ? n - 1 : l);
    }
}

/* The squared length of the longer of two derivative vectors (x and y)
 * of the coordinates, in texels of the view's first level. */
static float rho2_of(const kview *k, const float dx[3], const float dy[3])
{
    const kres_subresource *l0 = lvl(k->t, 0, 0);
    float size[3] = {(float)l0->width, (float)l0->height, (float)l0->depth};
    float lx = 0.0f, ly = 0.0f;
    for (int a = 0; a < k->axes; a++) {
        float x = dx[a] * size[a], y = dy[a] * size[a];
        lx += x * x;
        ly += y * y;
    }
    return lx > ly ? lx : ly;
}

/* Sample's LOD (without bias) for the quad whose top-left pixel is i0. */
static float quad_lod(const kview *k, const kcall *c, int i0)
{
    float dx[3] = {0, 0, 0}, dy[3] = {0, 0, 0};
    if (k->cube) {
        /* every pixel onto the top-left pixel's face */
        float d0[3] = {coord(c, 0, i0), coord(c, 1, i0), coord(c, 2, i0)};
        float d1[3] = {coord(c, 0, i0 + 1), coord(c, 1, i0 + 1), coord(c, 2, i0 + 1)};
        float d4[3] = {coord(c, 0, i0 + 4), coord(c, 1, i0 + 4), coord(c, 2, i0 + 4)};
        int f = cube_face(d0);
        float s0, t0, s1, t1, s4, t4;
        face_st(f, d0, &s0, &t0);
        face_st(f, d1, &s1, &t1);
        face_st(f, d4, &s4, &t4);
        dx[0] = s1 - s0;
        dx[1] = t1 - t0;
        dy[0] = s4 - s0;
        dy[1] = t4 - t0;
    } else {
        for (int a = 0; a < k->axes; a++) {
            dx[a] = coord(c, a, i0 + 1) - coord(c, a, i0);
            dy[a] = coord(c, a, i0 + 4) - coord(c, a, i0);
        }
    }
    return 0.5f * kr_log2f(rho2_of(k, dx, dy));
}

/* SampleGrad's LOD at pixel i (a cube's direction derivatives carried
 * onto pixel i's face: d(sc / |m|) = (dsc |m| - sc d|m|) / m^2). */
static float grad_lod(const kview *k, const kcall *c, int i)
{
    float dx[3], dy[3];
    for (int a = 0; a < 3; a++) {
        dx[a] = c->ddx[a * BLOCK + i];
        dy[a] = c->ddy[a * BLOCK + i];
    }
    if (k->cube) {
        float d[3] = {coord(c, 0, i), coord(c, 1, i), coord(c, 2, i)};
        int f = cube_face(d);
        float sc, tc, ma, dsc, dtc, dma;
        face_sct(f, d, &sc, &tc, &ma);
        float sgn = d[f >> 1] < 0.0f ? -1.0f : 1.0f;
        float *g[2] = {dx, dy};
        for (int j = 0; j < 2; j++) {
            face_sct(f, g[j], &dsc, &dtc, &dma);
            dma = g[j][f >> 1] * sgn; /* d|m|, signed */
            float m2 = ma * ma;
            float ds = m2 > 0.0f ? 0.5f * (dsc * ma - sc * dma) / m2 : 0.0f;
            float dt = m2 > 0.0f ? 0.5f * (dtc * ma - tc * dma) / m2 : 0.0f;
            g[j][0] = ds;
            g[j][1] = dt;
            g[j][2] = 0.0f;
        }
    }
    return 0.5f * kr_log2f(rho2_of(k, dx, dy));
}

/* ---- LOD plan (sample.c's plan_lod, per pixel) ---- */


/* ---- filtering ---- */

/* Accumulates weight * (texel, or its comparison with ref) of one tap. */
static void tap(const kview *k, const kres_subresource *L, const int32_t idx[3], float w, int cmp,
                float ref, float acc[4], float *bw)
{
    if ((idx[0] | idx[1] | idx[2]) < 0) {
        *bw += w;
        return;
    }
    const uint8_t *p = k->t->data + L->offset + (size_t)idx[2] * L->depth_pitch +
                       (size_t)idx[1] * L->row_pitch + (size_t)idx[0] * k->bpp;
    float texel[4];
    kr_decode_texel(k->t->format, p, texel);
    if (cmp) {
        acc[0] += w * (float)kr_compare(k->s->cmp, ref, texel[0]);
        return;
    }
    for (int ch = 0; ch < 4; ch++)
        acc[ch] += w * texel[ch];
}

/* Level m (of the view) at nc in `layer` with `filter`, weighted by lw. */
static void filter_level(const kview *k, uint32_t m, uint32_t layer, const float nc[3],
                         kiln_filter filter, float lw, int cmp, float ref, float acc[4], float *bw)
{
    const kres_subresource *L = lvl(k->t, m, layer);
    int32_t size[3] = {(int32_t)L->width, (int32_t)L->height, (int32_t)L->depth};
    if (filter == KILN_FILTER_POINT) {
        int32_t idx[3] = {0, 0, 0};
        for (int a = 0; a < k->axes; a++)
            idx[a] = kr_address(kr_floor_coord(nc[a] * (float)size[a]), size[a], k->addr[a]);
        tap(k, L, idx, lw, cmp, ref, acc, bw);
        return;
    }
    int32_t i0[3][2] = {{0, 0}, {0, 0}, {0, 0}}, wt[3][2] = {{256, 0}, {256, 0}, {256, 0}};
    for (int a = 0; a < k->axes; a++) {
        int32_t f;
        int32_t i = kr_split_coord(nc[a] * (float)size[a] - 0.5f, &f);
        i0[a][0] = kr_address(i, size[a], k->addr[a]);
        i0[a][1] = kr_address(i + 1, size[a], k->addr[a]);
        wt[a][0] = 256 - f;
        wt[a][1] = f;
    }
    /* weights are multiples of 2^-24 (an axis not filtered counts 256):
     * exact, summing to 1 */
    const float unit = 1.0f / 16777216.0f;
    for (int cz = 0; cz < (k->axes >= 3 ? 2 : 1); cz++)
        for (int cy = 0; cy < (k->axes >= 2 ? 2 : 1); cy++)
            for (int cx = 0; cx < 2; cx++) {
                int32_t wi = wt[0][cx] * wt[1][cy] * wt[2][cz];
                if (!wi)
                    continue;
                int32_t idx[3] = {i0[0][cx], i0[1][cy], i0[2][cz]};
                tap(k, L, idx, lw * (float)wi * unit, cmp, ref, acc, bw);
            }
}

static void run(const kview *k, const kcall *c, float *out)
{
    const kd_sampler *s = k->s;
    int cmp = c->mode == K_CMP || c->mode == K_CMP_LZ;
    int unorm = kres_format_unorm(k->t->format) || k->t->format == KILN_FORMAT_D16_UNORM;
    float qlod[4] = {0, 0, 0, 0};
    if (c->mode == K_SAMPLE || c->mode == K_BIAS || c->mode == K_CMP)
        for (int q = 0; q < 4; q++)
            qlod[q] = quad_lod(k, c, (q & 1) * 2 + (q >> 1) * 8);
    for (int i = 0; i < BLOCK; i++) {
        int q = ((i & 3) >> 1) + ((i >> 3) << 1);
        kr_lod_plan p;
        switch (c->mode) {
        case K_LEVEL:
            kr_plan_lod(s, k->nl, c->extra[i] + s->mip_lod_bias, &p);
            break;
        case K_BIAS: {
            float b = c->extra[i];
            b = b > -16.0f ? (b < 15.99f ? b : 15.99f) : -16.0f;
            kr_plan_lod(s, k->nl, qlod[q] + s->mip_lod_bias + b, &p);
            break;
        }
        case K_GRAD:
            kr_plan_lod(s, k->nl, grad_lod(k, c, i) + s->mip_lod_bias, &p);
            break;
        case K_CMP_LZ:
            p = (kr_lod_plan){s->mag_filter, 1, {0, 0}, {1.0f, 0.0f}};
            break;
        default:
            kr_plan_lod(s, k->nl, qlod[q] + s->mip_lod_bias, &p);
            break;
        }
        float nc[3];
        uint32_t layer;
        pixel_coords(k, c, i, nc, &layer);
        float ref = cmp ? c->extra[i] : 0.0f;
        if (cmp && unorm) /* D3D10 clamps the reference to a UNORM format's range */
            ref = ref > 0.0f ? (ref < 1.0f ? ref : 1.0f) : ref < 0.0f ? 0.0f : ref;
        float acc[4] = {0, 0, 0, 0}, bw = 0.0f;
        for (uint32_t pass = 0; pass < p.passes; pass++)
            filter_level(k, p.level[pass], layer, nc, p.filter, p.lw[pass], cmp, ref, acc, &bw);
        if (cmp) {
            if (bw != 0.0f)
                acc[0] += bw * (float)kr_compare(s->cmp, ref, s->border[0]);
            out[i] = acc[0];
            continue;
        }
        for (int ch = 0; ch < 4; ch++)
            out[ch * BLOCK + i] = acc[ch] + (bw != 0.0f ? bw * s->border[ch] : 0.0f);
    }
}

/* ---- generate_mips of 3D textures ---- */

/* A 3D mip from the one above: a 2x2x2 box (an axis of 1 texel, or an
 * odd size's last texel, takes its edge texel again, as downsample does),
 * in float on decoded texels, 8-bit UNORM in integers with rounding. */
static void downsample3(kiln_format f, const kres_format_info *fi, const uint8_t *src,
                        const kres_subresource *ss, uint8_t *dst, const kres_subresource *ds)
{
    uint32_t bpp = fi->size;
    for (uint32_t z = 0; z < ds->depth; z++) {
        uint32_t zs[2] = {2 * z, 2 * z + 1 < ss->depth ? 2 * z + 1 : ss->depth - 1};
        for (uint32_t y = 0; y < ds->height; y++) {
            uint32_t ys[2] = {2 * y, 2 * y + 1 < ss->height ? 2 * y + 1 : ss->height - 1};
            for (uint32_t x = 0; x < ds->width; x++) {
                uint32_t xs[2] = {2 * x, 2 * x + 1 < ss->width ? 2 * x + 1 : ss->width - 1};
                const uint8_t *p[8];
                for (int k = 0; k < 8; k++)
                    p[k] = src + zs[k >> 2] * ss->depth_pitch +
                           (size_t)ys[(k >> 1) & 1] * ss->row_pitch + (size_t)xs[k & 1] * bpp;
                uint8_t *d =
                    dst + z * ds->depth_pitch + (size_t)y * ds->row_pitch + (size_t)x * bpp;
                if (fi->is_unorm8 && !kres_texel_generic(f)) {
                    for (uint32_t b = 0; b < bpp; b++) {
                        uint32_t sum = 4;
                        for (int k = 0; k < 8; k++)
                            sum += p[k][b];
                        d[b] = (uint8_t)(sum / 8);
                    }
                } else if (kres_texel_generic(f)) {
                    float m[4] = {0, 0, 0, 0}, t[4];
                    for (int k = 0; k < 8; k++) {
                        kres_decode_texel(f, p[k], t);
                        for (int c = 0; c < 4; c++)
                            m[c] += t[c];
                    }
                    for (int c = 0; c < 4; c++)
                        m[c] *= 0.125f;
                    kres_encode_texel(f, m, d, 15u);
                } else {
                    for (uint32_t b = 0; b < bpp; b += 4) {
                        float m = 0.0f;
                        for (int k = 0; k < 8; k++) {
                            float texel;
                            memcpy(&texel, p[k] + b, sizeof texel);
                            m += texel;
                        }
                        m *= 0.125f;
                        memcpy(d + b, &m, sizeof m);
                    }
                }
            }
        }
    }
}

void kr_generate_mips_3d(kres_resource *res, kres_storage *st, uint32_t first_mip,
                         uint32_t num_mips)
{
    const kres_format_info *fi = kres_format(res->format);
    for (uint32_t m = first_mip + 1; m < first_mip + num_mips; m++)
        downsample3(res->format, fi, st->data + res->subs[m - 1].offset, &res->subs[m - 1],
                    st->data + res->subs[m].offset, &res->subs[m]);
}

/* ---- entry points ---- */

/* A view sample.c's 2D path reads (2D, or kiln's default 2D view): the
 * 2D call, w ignored. */
static int plain_2d(const kiln_ps_args *a, uint32_t srv_slot)
{
    const kr_texture *t = slot(a, srv_slot);
    return t && !kr_kind_view(t) && t->dim != KILN_SRV_DIMENSION_TEXTURE2DARRAY;
}

static void sample(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot, const kcall *c,
                   float *rgba)
{
    kview k;
    if (!resolve(a, srv_slot, sampler_slot, &k)) {
        memset(rgba, 0, sizeof(float) * 4 * BLOCK);
        return;
    }
    run(&k, c, rgba);
}

KILN_API void kiln_ps_sample_uvw(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                 const float *u, const float *v, const float *w, float *rgba)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample(a, srv_slot, sampler_slot, u, v, rgba);
        return;
    }
    kcall c = {K_SAMPLE, {u, v, w}, NULL, NULL, NULL};
    sample(a, srv_slot, sampler_slot, &c, rgba);
}

KILN_API void kiln_ps_sample_uvw_level(const kiln_ps_args *a, uint32_t srv_slot,
                                       uint32_t sampler_slot, const float *u, const float *v,
                                       const float *w, const float *lod, float *rgba)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample_level(a, srv_slot, sampler_slot, u, v, lod, rgba);
        return;
    }
    kcall c = {K_LEVEL, {u, v, w}, lod, NULL, NULL};
    sample(a, srv_slot, sampler_slot, &c, rgba);
}

KILN_API void kiln_ps_sample_uvw_bias(const kiln_ps_args *a, uint32_t srv_slot,
                                      uint32_t sampler_slot, const float *u, const float *v,
                                      const float *w, const float *bias, float *rgba)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample_bias(a, srv_slot, sampler_slot, u, v, bias, rgba);
        return;
    }
    kcall c = {K_BIAS, {u, v, w}, bias, NULL, NULL};
    sample(a, srv_slot, sampler_slot, &c, rgba);
}

KILN_API void kiln_ps_sample_uvw_grad(const kiln_ps_args *a, uint32_t srv_slot,
                                      uint32_t sampler_slot, const float *u, const float *v,
                                      const float *w, const float *ddx, const float *ddy,
                                      float *rgba)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample_grad(a, srv_slot, sampler_slot, u, v, ddx, ddx + BLOCK, ddy, ddy + BLOCK,
                            rgba);
        return;
    }
    kcall c = {K_GRAD, {u, v, w}, NULL, ddx, ddy};
    sample(a, srv_slot, sampler_slot, &c, rgba);
}

static void sample_cmp(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                       const kcall *c, float *out)
{
    kview k;
    if (!resolve(a, srv_slot, sampler_slot, &k) || k.s->cmp == KILN_COMPARE_DEFAULT) {
        memset(out, 0, sizeof(float) * BLOCK);
        return;
    }
    run(&k, c, out);
}

KILN_API void kiln_ps_sample_cmp_uvw(const kiln_ps_args *a, uint32_t srv_slot,
                                     uint32_t sampler_slot, const float *u, const float *v,
                                     const float *w, const float *ref, float *out)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample_cmp(a, srv_slot, sampler_slot, u, v, ref, out);
        return;
    }
    kcall c = {K_CMP, {u, v, w}, ref, NULL, NULL};
    sample_cmp(a, srv_slot, sampler_slot, &c, out);
}

KILN_API void kiln_ps_sample_cmp_uvw_level_zero(const kiln_ps_args *a, uint32_t srv_slot,
                                                uint32_t sampler_slot, const float *u,
                                                const float *v, const float *w, const float *ref,
                                                float *out)
{
    if (plain_2d(a, srv_slot)) {
        kiln_ps_sample_cmp_level_zero(a, srv_slot, sampler_slot, u, v, ref, out);
        return;
    }
    kcall c = {K_CMP_LZ, {u, v, w}, ref, NULL, NULL};
    sample_cmp(a, srv_slot, sampler_slot, &c, out);
}

/* One element of a typed buffer view as RGBA: the texel decode of its
 * format; R32G32B32_FLOAT, which no texture has, as three floats. */
static void buffer_element(const kr_texture *t, uint32_t k, float px[4])
{
    const kres_format_info *fi = kres_format(t->format);
    const uint8_t *p = t->data + t->subs[0].offset + ((size_t)t->first_element + k) * fi->size;
    if (t->format == KILN_FORMAT_R32G32B32_FLOAT) {
        memcpy(px, p, 3 * sizeof(float));
        px[3] = 1.0f;
        return;
    }
    kr_decode_texel(t->format, p, px);
}

/* Buffer.Load: element x[i] of the view (y, z and mip play no part). */
static void buffer_load(const kr_texture *t, const int32_t *x, float *rgba)
{
    for (int i = 0; i < BLOCK; i++) {
        float px[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        /* D3D10's ld on a buffer: an element past the view reads 0 */
        if (t && x[i] >= 0 && (uint32_t)x[i] < t->num_elements)
            buffer_element(t, (uint32_t)x[i], px);
        for (int c = 0; c < 4; c++)
            rgba[c * BLOCK + i] = px[c];
    }
}

KILN_API void kiln_ps_load_uvw(const kiln_ps_args *a, uint32_t srv_slot, const int32_t *x,
                               const int32_t *y, const int32_t *z, const int32_t *mip, float *rgba)
{
    const kr_texture *t = slot(a, srv_slot);
    if (t && t->dim == KILN_SRV_DIMENSION_BUFFER) {
        buffer_load(t, x, rgba);
        return;
    }
    int ok = t && t->dim != KILN_SRV_DIMENSION_TEXTURECUBE && kres_format(t->format) &&
             (kr_format_sampleable(t->format) || kres_format_integer(t->format));
    uint32_t bpp = ok ? kres_format(t->format)->size : 0;
    for (int i = 0; i < BLOCK; i++) {
        float px[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (ok && mip[i] >= 0 && (uint32_t)mip[i] < t->num_mips) {
            int32_t xi = x[i], yi = 0, zi = 0, layer = 0;
            int32_t ay = y ? y[i] : 0, az = z ? z[i] : 0;
            switch (t->dim) {
            case KILN_SRV_DIMENSION_TEXTURE1D:
                break;
            case KILN_SRV_DIMENSION_TEXTURE1DARRAY:
                layer = ay;
                break;
            case KILN_SRV_DIMENSION_TEXTURE2DARRAY:
                yi = ay;
                layer = az;
                break;
            case KILN_SRV_DIMENSION_TEXTURE3D:
                yi = ay;
                zi = az;
                break;
            default:
                yi = ay;
                break; /* 2D */
            }
            uint32_t nslices = t->dim == KILN_SRV_DIMENSION_TEXTURE1DARRAY ||
                                       t->dim == KILN_SRV_DIMENSION_TEXTURE2DARRAY
                                   ? t->num_slices
                                   : 1;
            if (layer >= 0 && (uint32_t)layer < nslices) {
                const kres_subresource *L = lvl(t, (uint32_t)mip[i], (uint32_t)layer);
                if (xi >= 0 && yi >= 0 && zi >= 0 && (uint32_t)xi < L->width &&
                    (uint32_t)yi < L->height && (uint32_t)zi < L->depth)
                    kr_decode_texel(t->format,
                                    t->data + L->offset + (size_t)zi * L->depth_pitch +
                                        (size_t)yi * L->row_pitch + (size_t)xi * bpp,
                                    px);
            }
        }
        for (int c = 0; c < 4; c++)
            rgba[c * BLOCK + i] = px[c];
    }
}

KILN_API void kiln_ps_get_dimensions_uvw(const kiln_ps_args *a, uint32_t srv_slot, uint32_t mip,
                                         uint32_t *width, uint32_t *height, uint32_t *depth,
                                         uint32_t *levels)
{
    const kr_texture *t = slot(a, srv_slot);
    uint32_t w = 0, h = 0, d = 0, n = 0;
    if (t && t->dim == KILN_SRV_DIMENSION_BUFFER) {
        w = t->num_elements; /* Buffer.GetDimensions: elements */
        h = d = n = 1;
    } else if (t) {
        n = t->num_mips;
        if (mip < n) {
            const kres_subresource *L = lvl(t, mip, 0);
            w = L->width;
            h = L->height;
            switch (t->dim) {
            case KILN_SRV_DIMENSION_TEXTURE1DARRAY:
            case KILN_SRV_DIMENSION_TEXTURE2DARRAY:
                d = t->num_slices;
                break;
            case KILN_SRV_DIMENSION_TEXTURE3D:
                d = L->depth;
                break;
            case KILN_SRV_DIMENSION_TEXTURECUBE:
                d = 6;
                break;
            default:
                d = 1;
                break;
            }
        }
    }
    if (width)
        *width = w;
    if (height)
        *height = h;
    if (depth)
        *depth = d;
    if (levels)
        *levels = n;
}
