/*
 * Texture sampling for pixel shaders (kiln_ps_sample), single texel reads,
 * and the box filter of generate_mips.
 *
 * Sampling follows D3D10:
 * - LOD per 2x2 quad from coarse derivatives (top-left pixel to its right
 *   and lower neighbours), scaled by the size of the view's first mip:
 *   lod = log2(max(|d/dx|, |d/dy|)) + bias, clamped to [min_lod, max_lod]
 *   (log2: kiln's own kr_log2f, log2.h, not libm's).
 *   lod <= 0 magnifies (mag_filter), otherwise minifies (min_filter). The
 *   level is then clamped to the view's mips; mip_filter POINT rounds to
 *   the nearest level, LINEAR blends the two around it.
 * - Texel centers at (i + 0.5) / size. POINT reads texel floor(u * w);
 *   LINEAR blends texels floor(u * w - 0.5) and the next, with the
 *   fraction quantized to 8 bits as D3D's fixed-point texel addressing
 *   does. The quantized weights are multiples of 1/65536 that sum to
 *   exactly 1, so constant regions and texel centers read back exactly.
 * - Address modes act on integer texel indices, each axis on its own:
 *   WRAP (i mod size), MIRROR (period 2 * size, flipped every other
 *   repeat), CLAMP (to the edge texel), BORDER (outside reads the sampler's
 *   border color, converted to the format's range (border_for), which is
 *   blended like a texel), MIRROR_ONCE (i < 0 reads -1 - i, then CLAMP).
 * - ANISOTROPIC (kd_sampler.max_aniso): N trilinear samples along the
 *   longer derivative, averaged (sample_aniso; kiln.h has the rule).
 *
 * Structure: the LOD is planned once per quad. In general, the taps of
 * every pixel (texel addresses and weights, over one or two levels) are
 * gathered first, then one loop per format reads them: the format switch
 * happens once per call, never per texel. RGBA8/BGRA8 with LINEAR filters
 * and no BORDER (textured scenes' common case) take a dedicated kernel
 * (SSE2 where available) that gives the same bits as the general path.
 * Sums run in a fixed order, so results depend only on the inputs, never
 * on threads or the kernel taken.
 */
#include "raster.h"

#include "../resources/texel.h"
#include "effects.h"
#include "fused.h"
#include "log2.h"
#include "prim.h"

#include <math.h>
#include <string.h>

#define BLOCK KILN_PS_BLOCK
#if defined(__GNUC__)
#define KR_INLINE static inline __attribute__((always_inline))
#define KR_NOINLINE static __attribute__((noinline))
#else
#define KR_INLINE static inline
#define KR_NOINLINE static
#endif
#define MAX_LEVELS 16 /* 8192 texels need 14 */
#define COORD_LIMIT                                                                                \
    1073741824.0f /* 2^30: far outside any texture, and                                            \
                     safe to convert to int32 */

static const kd_sampler default_sampler = {
    KILN_FILTER_LINEAR,
    KILN_FILTER_LINEAR,
    KILN_FILTER_LINEAR,
    KILN_ADDRESS_CLAMP,
    KILN_ADDRESS_CLAMP,
    0.0f,
    0.0f,
    1000.0f,
    {0.0f, 0.0f, 0.0f, 0.0f},
    KILN_COMPARE_DEFAULT,
    0, /* not anisotropic */
    KILN_ADDRESS_CLAMP,
};


/* ---- texel decoding ---- */

static int format_sampleable(kiln_format f)
{
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
    case KILN_FORMAT_B8G8R8A8_UNORM:
    case KILN_FORMAT_R8_UNORM:
    case KILN_FORMAT_R32_FLOAT:
    case KILN_FORMAT_R32G32_FLOAT:
    case KILN_FORMAT_R32G32B32A32_FLOAT:
    case KILN_FORMAT_D32_FLOAT:
    case KILN_FORMAT_D24_UNORM_S8_UINT:
        return 1;
    case KILN_FORMAT_D32_FLOAT_S8X24_UINT: /* never a shader resource */
        return 0;
    default: /* integer formats: Load only (kr_texel_fetch) */
        return (kres_texel_generic(f) && !kres_format_integer(f)) || kres_format_bc(f);
    }
}

static inline float load_f32(const uint8_t *p)
{
    float f;
    memcpy(&f, p, sizeof f);
    return f;
}

static inline uint32_t load_u32(const uint8_t *p)
{
    uint32_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* One texel of a sampleable format as RGBA. */
static void decode_texel(kiln_format f, const uint8_t *p, float o[4])
{
    o[0] = o[1] = o[2] = 0.0f;
    o[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            o[c] = (float)p[c] / 255.0f;
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        o[0] = (float)p[2] / 255.0f;
        o[1] = (float)p[1] / 255.0f;
        o[2] = (float)p[0] / 255.0f;
        o[3] = (float)p[3] / 255.0f;
        break;
    case KILN_FORMAT_R8_UNORM:
        o[0] = (float)p[0] / 255.0f;
        break;
    case KILN_FORMAT_R32_FLOAT:
    case KILN_FORMAT_D32_FLOAT:
        o[0] = load_f32(p);
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        o[0] = load_f32(p);
        o[1] = load_f32(p + 4);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        for (int c = 0; c < 4; c++)
            o[c] = load_f32(p + 4 * c);
        break;
    case KILN_FORMAT_D24_UNORM_S8_UINT:
        o[0] = (float)(load_u32(p) & 0xFFFFFFu) / 16777215.0f;
        break;
    default:
        if (kres_texel_generic(f))
            kres_decode_texel(f, p, o);
        else
            o[3] = 0.0f;
        break;
    }
}

void kr_texel_fetch(const kr_texture *t, uint32_t level, uint32_t x, uint32_t y, float rgba[4])
{
    const kres_format_info *fi = kres_format(t->format);
    if (!t->data || !t->subs || !fi || !(format_sampleable(t->format) || kres_format_integer(t->format))) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0.0f;
        return;
    }
    const kres_subresource *s = &t->subs[level + t->slice * t->res_mip_levels];
    if (fi->block > 1) { /* BC: texel (x & 3, y & 3) of its block */
        const uint8_t *b = t->data + s->offset + (size_t)(y >> 2) * s->row_pitch + (size_t)(x >> 2) * fi->size;
        kres_decode_bc(t->format, b, (y & 3u) << 2 | (x & 3u), rgba);
        return;
    }
    const uint8_t *p = t->data + s->offset + (size_t)y * s->row_pitch + (size_t)x * fi->size;
    decode_texel(t->format, p, rgba);
}

/* ---- addressing ---- */

typedef struct level {
    const uint8_t *base;
    size_t pitch;
    int32_t w, h;
    float fw, fh;
} level;

/* Texel index i on an axis of `size` texels, or -1 for a border read. */
KR_INLINE int32_t address(int32_t i, int32_t size, kiln_address mode)
{
    /* A power-of-two size (the usual texture) wraps with a mask: in two's
     * complement i & (n - 1) is the non-negative remainder, with no divide. */
    int pow2 = (size & (size - 1)) == 0;
    switch (mode) {
    case KILN_ADDRESS_WRAP:
        if (pow2)
            return i & (size - 1);
        i %= size;
        return i < 0 ? i + size : i;
    case KILN_ADDRESS_MIRROR: {
        int32_t period = 2 * size;
        if (pow2) {
            i &= period - 1;
        } else {
            i %= period;
            if (i < 0)
                i += period;
        }
        return i >= size ? period - 1 - i : i;
    }
    case KILN_ADDRESS_BORDER:
        return i < 0 || i >= size ? -1 : i;
    case KILN_ADDRESS_MIRROR_ONCE: /* |coordinate|, then CLAMP */
        i = i < 0 ? -1 - i : i;
        return i >= size ? size - 1 : i;
    default: /* CLAMP */
        return i < 0 ? 0 : i >= size ? size - 1 : i;
    }
}

/* A texel-space coordinate split into floor (as int) and the fraction in
 * 1/256ths (0..256), for any float: magnitudes are limited to 2^30 (far
 * outside any texture, and safe to convert), NaN reads as -2^30. The SSE2
 * kernel below repeats these exact operations four lanes at a time. */
static inline int32_t split_coord(float x, int32_t *frac256)
{
    x = x > -COORD_LIMIT ? x : -COORD_LIMIT;
    x = x < COORD_LIMIT ? x : COORD_LIMIT;
    int32_t i = (int32_t)x;
    i -= (float)i > x;
    *frac256 = (int32_t)((x - (float)i) * 256.0f + 0.5f);
    return i;
}

/* floor(x) as an int for any float (see split_coord). */
static inline int32_t floor_coord(float x)
{
    x = x > -COORD_LIMIT ? x : -COORD_LIMIT;
    x = x < COORD_LIMIT ? x : COORD_LIMIT;
    int32_t i = (int32_t)x;
    return i - ((float)i > x);
}

/* ---- LOD: one plan per 2x2 quad ---- */


/* Pixels of quad q (q = qx + 2 * qy) within the block. */
static const uint8_t quad_px[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};

/* The squared length of the longer derivative of quad q, in texels of
 * level 0 (L0 size fw x fh). Computed once per quad, and the one value
 * both the LOD and the magnification shortcut below use. */
#if !defined(__SSE2__) /* the SSE2 build computes four at once (quad_rho2) */
static inline float quad_rho2_1(const float *u, const float *v, int i0, float fw, float fh)
{
    float dudx = (u[i0 + 1] - u[i0]) * fw, dvdx = (v[i0 + 1] - v[i0]) * fh;
    float dudy = (u[i0 + 4] - u[i0]) * fw, dvdy = (v[i0 + 4] - v[i0]) * fh;
    float lx = dudx * dudx + dvdx * dvdx, ly = dudy * dudy + dvdy * dvdy;
    return lx > ly ? lx : ly;
}
#endif

/* Shortcuts that reach the plan the LOD would give without log2f, for a
 * sampler whose bias and min_lod are <= 0 (lo_ok): then the final lod is
 * at most 0.5 * log2(rho2) (whatever max_lod is), so
 * - rho2 <= 1 (log2 <= 0): lod <= 0, magnification at level 0, one pass;
 * - rho2 <= 1.9 with min_filter == mag_filter and mip_filter POINT
 *   (pt_ok): lod < 0.4631, so level 0 (the nearest), one pass, and the
 *   filter is the same either side of lod = 0.
 * A view with one level and min_filter == mag_filter needs no LOD at all
 * (kiln_ps_sample). */
/* kr_plan_lod (raster.h), inlined here. */
static void plan_lod(const kd_sampler *s, uint32_t nl, float lod, kr_lod_plan *qp)
{
    qp->passes = 1;
    qp->lw[0] = 1.0f;
    qp->lw[1] = 0.0f;
    if (!(lod >= s->min_lod)) /* also NaN */
        lod = s->min_lod;
    if (lod > s->max_lod)
        lod = s->max_lod;
    qp->filter = lod <= 0.0f ? s->mag_filter : s->min_filter;
    float top = (float)(nl - 1);
    if (!(lod > 0.0f))
        lod = 0.0f;
    if (lod > top)
        lod = top;
    if (s->mip_filter == KILN_FILTER_POINT) {
        qp->level[0] = (uint32_t)floor_coord(lod + 0.5f);
        if (qp->level[0] > nl - 1)
            qp->level[0] = nl - 1;
    } else {
        float fl = (float)floor_coord(lod);
        qp->level[0] = (uint32_t)fl;
        if (qp->level[0] + 1 < nl && lod > fl) {
            qp->passes = 2;
            qp->level[1] = qp->level[0] + 1;
            qp->lw[1] = lod - fl;
            qp->lw[0] = 1.0f - qp->lw[1];
        }
    }
    qp->level[1] = qp->passes == 2 ? qp->level[1] : qp->level[0];
}

void kr_plan_lod(const kd_sampler *s, uint32_t nl, float lod, kr_lod_plan *p) { plan_lod(s, nl, lod, p); }

static void plan_quad(const kd_sampler *s, uint32_t nl, float rho2, int lo_ok, int pt_ok,
                      kr_lod_plan *qp)
{
    if (lo_ok && (rho2 <= 1.0f || (pt_ok && rho2 <= 1.9f))) {
        qp->passes = 1;
        qp->lw[0] = 1.0f;
        qp->lw[1] = 0.0f;
        qp->filter = rho2 <= 1.0f ? s->mag_filter : s->min_filter;
        qp->level[0] = qp->level[1] = 0;
        return;
    }
    /* log2(sqrt(rho2)); rho2 == 0 gives -inf, which the clamp catches. */
    plan_lod(s, nl, 0.5f * kr_log2f(rho2) + s->mip_lod_bias, qp);
}

static int same_plan(const kr_lod_plan *a, const kr_lod_plan *b)
{
    return a->filter == b->filter && a->passes == b->passes && a->level[0] == b->level[0] &&
           a->level[1] == b->level[1] && a->lw[0] == b->lw[0] && a->lw[1] == b->lw[1];
}

/* ---- the general path: taps, then one read loop per format ----
 *
 * For each pixel and level pass: up to 4 texels with their filter weights
 * (multiples of 1/65536 summing to 1 with the border reads), and the
 * pass's level weight. A pixel's value is sum over passes of
 * lw * (sum over taps of w * texel) + (border weight) * border. For 8-bit
 * UNORM every inner sum is exact, which is what lets the RGBA8 kernel
 * below reproduce it bit for bit. */

typedef struct taps {
    const uint8_t *p[BLOCK][2][4]; /* the texel, or for BC its block */
    uint8_t bi[BLOCK][2][4];       /* BC: the texel's index in its block */
    int bc;                        /* set by the caller of gather: BC format */
    float w[BLOCK][2][4];
    float lw[BLOCK][2];
    uint8_t n[BLOCK][2];
    uint8_t passes[BLOCK];
    float bw[BLOCK]; /* total weight of border reads */
} taps;

static inline void add_tap(taps *t, int i, int pass, const level *L, int32_t x, int32_t y,
                           uint32_t bpp, float w)
{
    if ((x | y) < 0) {
        t->bw[i] += t->lw[i][pass] * w;
        return;
    }
    uint32_t k = t->n[i][pass]++;
    if (t->bc) { /* bpp: bytes per 4x4 block */
        t->p[i][pass][k] = L->base + (size_t)(y >> 2) * L->pitch + (size_t)(x >> 2) * bpp;
        t->bi[i][pass][k] = (uint8_t)((y & 3) << 2 | (x & 3));
    } else {
        t->p[i][pass][k] = L->base + (size_t)y * L->pitch + (size_t)x * bpp;
    }
    t->w[i][pass][k] = w;
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* split_coord, four lanes. */
static inline __m128i split4(__m128 c, __m128i *frac)
{
    const __m128 lim = _mm_set1_ps(COORD_LIMIT), nlim = _mm_set1_ps(-COORD_LIMIT);
    __m128 x = _mm_min_ps(_mm_max_ps(c, nlim), lim);
    __m128i i = _mm_cvttps_epi32(x);
    i = _mm_add_epi32(i, _mm_castps_si128(_mm_cmpgt_ps(_mm_cvtepi32_ps(i), x)));
    __m128 f = _mm_add_ps(_mm_mul_ps(_mm_sub_ps(x, _mm_cvtepi32_ps(i)), _mm_set1_ps(256.0f)),
                          _mm_set1_ps(0.5f));
    *frac = _mm_cvttps_epi32(f);
    return i;
}
#endif

/* split_coord of a block's 16 coordinates. */
static inline void split16(const float *c, int32_t *i, int32_t *frac)
{
#if defined(__SSE2__)
    for (int k = 0; k < BLOCK; k += 4) {
        __m128i f;
        _mm_storeu_si128((__m128i *)(void *)(i + k), split4(_mm_loadu_ps(c + k), &f));
        _mm_storeu_si128((__m128i *)(void *)(frac + k), f);
    }
#else
    for (int k = 0; k < BLOCK; k++)
        i[k] = split_coord(c[k], &frac[k]);
#endif
}

/* POINT: the texel at floor(u w), floor(v h), given as x, y. */
static inline void gather_point(taps *t, int i, int pass, const level *L, int32_t x, int32_t y,
                                kiln_address au, kiln_address av, uint32_t bpp)
{
    add_tap(t, i, pass, L, address(x, L->w, au), address(y, L->h, av), bpp, 1.0f);
}

/* LINEAR: x0, y0 and the fractions ax, ay of (u w - 0.5, v h - 0.5). */
static inline void gather_linear(taps *t, int i, int pass, const level *L, int32_t x0, int32_t ax,
                                 int32_t y0, int32_t ay, kiln_address au, kiln_address av,
                                 uint32_t bpp)
{
    int32_t xs[2] = {address(x0, L->w, au), address(x0 + 1, L->w, au)};
    int32_t ys[2] = {address(y0, L->h, av), address(y0 + 1, L->h, av)};
    int32_t wx[2] = {256 - ax, ax}, wy[2] = {256 - ay, ay};
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            int32_t wi = wx[a] * wy[b];
            if (wi)
                add_tap(t, i, pass, L, xs[a], ys[b], bpp, (float)wi * (1.0f / 65536.0f));
        }
}

/* Each pixel's texel coordinates per pass (u w - 0.5, v h - 0.5 for
 * LINEAR; u w, v h for POINT, whose floor is the integer part
 * split_coord gives), split 16 at a time: split_coord one by one (its
 * float and int round trips) was a quarter of gather's time on bench
 * (c/bc1). Returns the most passes a pixel has. */
typedef struct coords {
    int32_t x[2][BLOCK], y[2][BLOCK], ax[2][BLOCK], ay[2][BLOCK];
} coords;

static uint32_t split_block(const kr_lod_plan *const *pp, const level *lv, const float *u,
                            const float *v, coords *c)
{
    uint32_t passes = 1;
    for (uint32_t pass = 0; pass < passes; pass++) {
        float cx[BLOCK], cy[BLOCK];
        for (int i = 0; i < BLOCK; i++) {
            const kr_lod_plan *p = pp[i];
            passes = p->passes > passes ? p->passes : passes;
            cx[i] = cy[i] = 0.0f;
            if (pass < p->passes) {
                const level *L = &lv[p->level[pass]];
                float h = p->filter == KILN_FILTER_POINT ? 0.0f : 0.5f;
                cx[i] = u[i] * L->fw - h;
                cy[i] = v[i] * L->fh - h;
            }
        }
        split16(cx, c->x[pass], c->ax[pass]);
        split16(cy, c->y[pass], c->ay[pass]);
    }
    return passes;
}

/* Each pixel's taps under its own plan pp[i] (Sample's quads share one;
 * SampleLevel, SampleBias and SampleGrad have one per pixel). */
static void gather(taps *t, const kr_lod_plan *const *pp, const level *lv, const float *u,
                   const float *v, kiln_address au, kiln_address av, uint32_t bpp)
{
    coords c;
    split_block(pp, lv, u, v, &c);
    for (int q = 0; q < 4; q++) {
        for (int j = 0; j < 4; j++) {
            int i = quad_px[q][j];
            const kr_lod_plan *p = pp[i];
            t->passes[i] = (uint8_t)p->passes;
            t->bw[i] = 0.0f;
            for (uint32_t pass = 0; pass < p->passes; pass++) {
                const level *L = &lv[p->level[pass]];
                t->n[i][pass] = 0;
                t->lw[i][pass] = p->lw[pass];
                if (p->filter == KILN_FILTER_POINT)
                    gather_point(t, i, (int)pass, L, c.x[pass][i], c.y[pass][i], au, av, bpp);
                else
                    gather_linear(t, i, (int)pass, L, c.x[pass][i], c.ax[pass][i], c.y[pass][i],
                                  c.ay[pass][i], au, av, bpp);
            }
        }
    }
}

/* Adds the border reads and writes the constant channels (the ones the
 * format does not store read 0, alpha 1) of out, whose first nch channels
 * hold the texel sums. */
static void finish(const taps *t, float *out, const float *border, int nch)
{
    for (int c = nch; c < 4; c++)
        for (int i = 0; i < BLOCK; i++)
            out[c * BLOCK + i] = c == 3 ? 1.0f - t->bw[i] : 0.0f;
    for (int i = 0; i < BLOCK; i++)
        if (t->bw[i] != 0.0f)
            for (int c = 0; c < 4; c++)
                out[c * BLOCK + i] += t->bw[i] * border[c];
}

/* 8-bit UNORM: sums of weight * byte, divided by 255 once at the end, so
 * a texel read alone gives exactly byte / 255. ch maps output channel to
 * byte (the BGRA swizzle). */
static inline void read_unorm8(const taps *t, float *out, const float *border, int nch,
                               const int ch[4])
{
    for (int i = 0; i < BLOCK; i++) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t pass = 0; pass < t->passes[i]; pass++) {
            float ls[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (uint32_t k = 0; k < t->n[i][pass]; k++) {
                const uint8_t *p = t->p[i][pass][k];
                float w = t->w[i][pass][k];
                for (int c = 0; c < nch; c++)
                    ls[c] += w * (float)p[ch[c]];
            }
            for (int c = 0; c < nch; c++)
                acc[c] += t->lw[i][pass] * ls[c];
        }
        for (int c = 0; c < nch; c++)
            out[c * BLOCK + i] = acc[c];
    }
    for (int c = 0; c < nch; c++)
        for (int i = 0; i < BLOCK; i++)
            out[c * BLOCK + i] /= 255.0f;
    finish(t, out, border, nch);
}

static inline void read_f32(const taps *t, float *out, const float *border, int nch)
{
    for (int i = 0; i < BLOCK; i++) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t pass = 0; pass < t->passes[i]; pass++) {
            float ls[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (uint32_t k = 0; k < t->n[i][pass]; k++) {
                const uint8_t *p = t->p[i][pass][k];
                float w = t->w[i][pass][k];
                for (int c = 0; c < nch; c++)
                    ls[c] += w * load_f32(p + 4 * c);
            }
            for (int c = 0; c < nch; c++)
                acc[c] += t->lw[i][pass] * ls[c];
        }
        for (int c = 0; c < nch; c++)
            out[c * BLOCK + i] = acc[c];
    }
    finish(t, out, border, nch);
}

/* The BC formats and their channels, for the switches that give each its
 * own copy of a read loop (format and channel count constants there). */
#define BC_FORMATS(X)                                                                              \
    X(KILN_FORMAT_BC1_UNORM, 4)                                                                    \
    X(KILN_FORMAT_BC1_UNORM_SRGB, 4)                                                               \
    X(KILN_FORMAT_BC2_UNORM, 4)                                                                    \
    X(KILN_FORMAT_BC2_UNORM_SRGB, 4)                                                               \
    X(KILN_FORMAT_BC3_UNORM, 4)                                                                    \
    X(KILN_FORMAT_BC3_UNORM_SRGB, 4)                                                               \
    X(KILN_FORMAT_BC4_UNORM, 1)                                                                    \
    X(KILN_FORMAT_BC5_UNORM, 2)

/* The BC blocks read_taps has decoded in one call: the 16 pixels' taps
 * fall in a few blocks (16 texels each), and decoding a tap alone
 * recomputed its block's palette (with sRGB's curve per channel) every
 * time: (c/bc1) spent 29% of its frame there. The values are
 * kres_decode_bc's, so the same bits (test_bc checks against a float copy
 * of the decoded texels). */
#define BC_CACHED 8
typedef struct bc_cache {
    const uint8_t *key[BC_CACHED];
    kres_bc_block blk[BC_CACHED];
    uint32_t used, last;
} bc_cache;

/* Block p decoded: the last one read, else a search, else decoded into a
 * free entry or the one after the last. */
static inline const kres_bc_block *bc_cached(bc_cache *c, kiln_format f, const uint8_t *p)
{
    if (!c->used || c->key[c->last] != p) {
        uint32_t j = 0;
        while (j < c->used && c->key[j] != p)
            j++;
        if (j == c->used) {
            j = c->used < BC_CACHED ? c->used++ : (c->last + 1) % BC_CACHED;
            c->key[j] = p;
            kres_bc_block_decode(f, p, &c->blk[j]);
        }
        c->last = j;
    }
    return &c->blk[c->last];
}

/* The formats of texel.c (bc NULL) and BC: each tap decoded (sRGB to
 * linear, so filtering works on linear values, as D3D10 has it), then
 * weighted like read_f32. bc is a constant in each caller (NULL for
 * texel.c's formats), and so is f for BC. */
KR_INLINE void read_taps(const taps *t, float *out, const float *border, kiln_format f, int nch,
                         bc_cache *bc)
{
    for (int i = 0; i < BLOCK; i++) {
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t pass = 0; pass < t->passes[i]; pass++) {
            float ls[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (uint32_t k = 0; k < t->n[i][pass]; k++) {
                float texel[4];
                if (bc)
                    kres_bc_texel(f, bc_cached(bc, f, t->p[i][pass][k]), t->bi[i][pass][k], texel);
                else
                    kres_decode_texel(f, t->p[i][pass][k], texel);
                float w = t->w[i][pass][k];
                for (int c = 0; c < nch; c++)
                    ls[c] += w * texel[c];
            }
            for (int c = 0; c < nch; c++)
                acc[c] += t->lw[i][pass] * ls[c];
        }
        for (int c = 0; c < nch; c++)
            out[c * BLOCK + i] = acc[c];
    }
    finish(t, out, border, nch);
}

static void read_texel(const taps *t, float *out, const float *border, kiln_format f, int nch)
{
    read_taps(t, out, border, f, nch, NULL);
}

KR_INLINE void read_bc(const taps *t, float *out, const float *border, kiln_format f, int nch)
{
    bc_cache c;
    c.used = c.last = 0;
    read_taps(t, out, border, f, nch, &c);
}

#if defined(__SSE2__)
/* Texel i of a decoded block as a vector [R G B A]; for BC4 and BC5 the
 * lanes past their channels are 0 (the caller writes those channels). */
KR_INLINE __m128 bc_texel4(kiln_format f, const kres_bc_block *k, uint32_t i)
{
    const float *c = NULL; /* BC4 and BC5 have no color codes */
    if (f != KILN_FORMAT_BC4_UNORM && f != KILN_FORMAT_BC5_UNORM)
        c = kres_bc_color(k, i);
    switch (f) {
    case KILN_FORMAT_BC1_UNORM:
    case KILN_FORMAT_BC1_UNORM_SRGB:
        return _mm_loadu_ps(c);
    case KILN_FORMAT_BC2_UNORM:
    case KILN_FORMAT_BC2_UNORM_SRGB:
    case KILN_FORMAT_BC3_UNORM:
    case KILN_FORMAT_BC3_UNORM_SRGB: {
        float a = f == KILN_FORMAT_BC2_UNORM || f == KILN_FORMAT_BC2_UNORM_SRGB
                      ? kres_bc2_alpha(k, i)
                      : kres_bc_ramp(k, 0, i);
        __m128 rgb = _mm_loadu_ps(c);
        /* [c2 a c3 0], then [c0 c1 c2 a] */
        __m128 hi = _mm_unpacklo_ps(_mm_movehl_ps(rgb, rgb), _mm_set_ss(a));
        return _mm_shuffle_ps(rgb, hi, _MM_SHUFFLE(1, 0, 1, 0));
    }
    case KILN_FORMAT_BC4_UNORM:
        return _mm_set_ss(kres_bc_ramp(k, 0, i));
    default: /* BC5 */
        return _mm_unpacklo_ps(_mm_set_ss(kres_bc_ramp(k, 0, i)),
                               _mm_set_ss(kres_bc_ramp(k, 1, i)));
    }
}

/* The decoded block of texel (x, y) of level L (size: bytes per block). */
KR_INLINE const kres_bc_block *bc_block_at(bc_cache *bc, kiln_format f, const level *L,
                                           uint32_t size, int32_t x, int32_t y)
{
    return bc_cached(bc, f, L->base + (size_t)(y >> 2) * L->pitch + (size_t)(x >> 2) * size);
}

/* Texel (x, y)'s index in its block. */
static inline uint32_t bc_index(int32_t x, int32_t y) { return (uint32_t)((y & 3) << 2 | (x & 3)); }

/* sample_general for BC formats with no BORDER axis, its taps and
 * read_bc's sums in one pass, a pixel's channels in one vector: per
 * channel the same products and sums in the same order, so the same bits
 * (test_bc: against a float copy of the decoded texels). The one
 * difference, a LINEAR tap of weight 0 is read and added: it adds +0 to
 * a sum of non-negative finite texels, which leaves the sum as it was.
 * On bench (c/bc1) the taps' stores and loads were most of the time left
 * after the block cache. f is a constant in each caller. */
KR_INLINE void sample_bc(kiln_format f, int nch, const kd_sampler *s, const kr_lod_plan *const *pp,
                         const level *lv, const float *u, const float *v, float *out)
{
    const uint32_t size = kres_format(f)->size;
    const kiln_address au = s->address_u, av = s->address_v;
    coords c;
    split_block(pp, lv, u, v, &c);
    bc_cache bc;
    bc.used = bc.last = 0;
    const __m128 zero = _mm_setzero_ps();
    for (int row = 0; row < 4; row++) {
        __m128 px[4];
        for (int j = 0; j < 4; j++) {
            int i = row * 4 + j;
            const kr_lod_plan *p = pp[i];
            __m128 acc = zero;
            for (uint32_t pass = 0; pass < p->passes; pass++) {
                const level *L = &lv[p->level[pass]];
                __m128 ls = zero;
                if (p->filter == KILN_FILTER_POINT) {
                    int32_t x = address(c.x[pass][i], L->w, au), y = address(c.y[pass][i], L->h, av);
                    __m128 t = bc_texel4(f, bc_block_at(&bc, f, L, size, x, y), bc_index(x, y));
                    ls = _mm_add_ps(ls, _mm_mul_ps(_mm_set1_ps(1.0f), t));
                } else {
                    int32_t x0 = c.x[pass][i], y0 = c.y[pass][i];
                    int32_t ax = c.ax[pass][i], ay = c.ay[pass][i];
                    int32_t xs[2] = {address(x0, L->w, au), address(x0 + 1, L->w, au)};
                    int32_t ys[2] = {address(y0, L->h, av), address(y0 + 1, L->h, av)};
                    int32_t wx[2] = {256 - ax, ax}, wy[2] = {256 - ay, ay};
                    /* the taps' texels, one block lookup where columns or
                     * rows share a block (most pixels: both); a block is
                     * read before the next lookup, which may evict it */
                    bool sx = xs[0] >> 2 == xs[1] >> 2, sy = ys[0] >> 2 == ys[1] >> 2;
                    __m128 t[2][2];
                    const kres_bc_block *k = bc_block_at(&bc, f, L, size, xs[0], ys[0]);
                    t[0][0] = bc_texel4(f, k, bc_index(xs[0], ys[0]));
                    if (sy)
                        t[1][0] = bc_texel4(f, k, bc_index(xs[0], ys[1]));
                    if (!sx)
                        k = bc_block_at(&bc, f, L, size, xs[1], ys[0]);
                    t[0][1] = bc_texel4(f, k, bc_index(xs[1], ys[0]));
                    if (sy) {
                        t[1][1] = bc_texel4(f, k, bc_index(xs[1], ys[1]));
                    } else {
                        k = bc_block_at(&bc, f, L, size, xs[0], ys[1]);
                        t[1][0] = bc_texel4(f, k, bc_index(xs[0], ys[1]));
                        if (!sx)
                            k = bc_block_at(&bc, f, L, size, xs[1], ys[1]);
                        t[1][1] = bc_texel4(f, k, bc_index(xs[1], ys[1]));
                    }
                    for (int b = 0; b < 2; b++)
                        for (int a = 0; a < 2; a++) {
                            float w = (float)(wx[a] * wy[b]) * (1.0f / 65536.0f);
                            ls = _mm_add_ps(ls, _mm_mul_ps(_mm_set1_ps(w), t[b][a]));
                        }
                }
                acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(p->lw[pass]), ls));
            }
            px[j] = acc;
        }
        _MM_TRANSPOSE4_PS(px[0], px[1], px[2], px[3]);
        for (int ch = 0; ch < 4; ch++) /* finish's constant channels: no border reads */
            _mm_storeu_ps(out + ch * BLOCK + row * 4,
                          ch < nch ? px[ch] : _mm_set1_ps(ch == 3 ? 1.0f : 0.0f));
    }
}

/* kr_sample_bc_avx512 or kr_sample_bc_avx2 (BC1 to BC5) for a block
 * whose 16 pixels are LINEAR on one level: sample_bc's bits, the
 * window's blocks decoded once and the taps read by permutes
 * (docs/raster.md, "Block-compressed formats"). Tests turn them off to
 * compare, or count their blocks (kr_bc_wide_force: the count is a
 * shared line, so only then). */
static _Atomic int bc_wide_mode; /* 0 on, 1 off, 2 on and counted */
static _Atomic uint64_t bc_wide_blocks;

void kr_bc_wide_force(int mode) { atomic_store(&bc_wide_mode, mode); }
uint64_t kr_bc_wide_count(void) { return atomic_load(&bc_wide_blocks); }

/* The kernel of the active level (AVX-512 or AVX2) on level L for 16
 * pixels of level weights lw, where it applies (BC1 to BC5, not turned off);
 * false: not sampled. */
static bool bc_wide(kiln_format f, const kd_sampler *s, const level *L, const float *u,
                    const float *v, const float *lw, float *out)
{
#if KR_EFFECTS_X86
    const int mode = atomic_load_explicit(&bc_wide_mode, memory_order_relaxed);
    if (!kres_format_bc(f) || mode == 1)
        return false;
    const kr_simd simd = kr_effects_active_level();
    if (simd < KR_SIMD_AVX2)
        return false;
    const kr_bc_level b = {
        .base = L->base,
        .pitch = L->pitch,
        .w = L->w,
        .h = L->h,
        .fw = L->fw,
        .fh = L->fh,
        .au = s->address_u,
        .av = s->address_v,
    };
    if (!(simd >= KR_SIMD_AVX512 ? kr_sample_bc_avx512 : kr_sample_bc_avx2)(f, &b, u, v, lw, out))
        return false;
    if (mode == 2)
        atomic_fetch_add_explicit(&bc_wide_blocks, 1, memory_order_relaxed);
    return true;
#else
    (void)f, (void)s, (void)L, (void)u, (void)v, (void)lw, (void)out;
    return false;
#endif
}

/* bc_wide for pixels of any plans: each LINEAR in one pass on one level
 * (the pixels of a quad share a plan: each is checked once). */
static bool sample_bc_wide(kiln_format f, const kd_sampler *s, const kr_lod_plan *const *pp,
                           const level *lv, const float *u, const float *v, float *out)
{
    if (!kres_format_bc(f))
        return false;
    const uint32_t l = pp[0]->level[0];
    float lw[BLOCK];
    const kr_lod_plan *seen = NULL;
    for (int i = 0; i < BLOCK; i++) {
        const kr_lod_plan *p = pp[i];
        if (p != seen) {
            if (p->passes != 1 || p->filter == KILN_FILTER_POINT || p->level[0] != l)
                return false;
            seen = p;
        }
        lw[i] = p->lw[0];
    }
    return bc_wide(f, s, &lv[l], u, v, lw, out);
}

/* 16 level weights of 1: one level. */
static const float bc_one_level[BLOCK] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f,
                                          1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};

/* sample_bc for the view's format, or false (a BORDER axis, or not BC). */
static bool sample_bc_any(kiln_format f, const kd_sampler *s, const kr_lod_plan *const *pp,
                          const level *lv, const float *u, const float *v, float *out)
{
    if (s->address_u == KILN_ADDRESS_BORDER || s->address_v == KILN_ADDRESS_BORDER)
        return false;
    if (sample_bc_wide(f, s, pp, lv, u, v, out))
        return true;
    switch (f) {
#define BC_CASE(fmt, nch)                                                                          \
    case fmt:                                                                                      \
        sample_bc(fmt, nch, s, pp, lv, u, v, out);                                                 \
        return true;
        BC_FORMATS(BC_CASE)
#undef BC_CASE
    default:
        return false;
    }
}
#endif

static void read_d24(const taps *t, float *out, const float *border)
{
    for (int i = 0; i < BLOCK; i++) {
        float acc = 0.0f;
        for (uint32_t pass = 0; pass < t->passes[i]; pass++) {
            float ls = 0.0f;
            for (uint32_t k = 0; k < t->n[i][pass]; k++)
                ls += t->w[i][pass][k] * (float)(load_u32(t->p[i][pass][k]) & 0xFFFFFFu);
            acc += t->lw[i][pass] * ls;
        }
        out[i] = acc / 16777215.0f;
    }
    finish(t, out, border, 1);
}

/* ---- the RGBA8 / BGRA8 kernel ----
 *
 * LINEAR in every quad (one or two levels each), no BORDER: the common
 * case of textured scenes. Computes per pixel and level the exact integer
 * sum S = sum of wx * wy * byte (< 2^24, so exact in float too), then
 * lw * (S / 65536) summed over levels and divided by 255: the same
 * operations on the same values as read_unorm8, hence the same bits. With
 * one level (lw = 1) that is (S * 2^-16) / 255, and since S * 2^-16 is
 * exact, the single rounding of S / (255 * 65536) gives the same bits. */

#if defined(__SSE2__)

/* rho2 of the four quads (quad_rho2_1, four lanes, the same operations). */
static inline void quad_rho2(const float *u, const float *v, float fw, float fh, float out[4])
{
    __m128 u0 = _mm_loadu_ps(u), u1 = _mm_loadu_ps(u + 4), u2 = _mm_loadu_ps(u + 8),
           u3 = _mm_loadu_ps(u + 12);
    __m128 v0 = _mm_loadu_ps(v), v1 = _mm_loadu_ps(v + 4), v2 = _mm_loadu_ps(v + 8),
           v3 = _mm_loadu_ps(v + 12);
    /* the quads' top-left pixels (0, 2, 8, 10), their right and lower neighbours */
    __m128 uc = _mm_shuffle_ps(u0, u2, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 ur = _mm_shuffle_ps(u0, u2, _MM_SHUFFLE(3, 1, 3, 1));
    __m128 ud = _mm_shuffle_ps(u1, u3, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 vc = _mm_shuffle_ps(v0, v2, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 vr = _mm_shuffle_ps(v0, v2, _MM_SHUFFLE(3, 1, 3, 1));
    __m128 vd = _mm_shuffle_ps(v1, v3, _MM_SHUFFLE(2, 0, 2, 0));
    __m128 sw = _mm_set1_ps(fw), sh = _mm_set1_ps(fh);
    __m128 dudx = _mm_mul_ps(_mm_sub_ps(ur, uc), sw), dvdx = _mm_mul_ps(_mm_sub_ps(vr, vc), sh);
    __m128 dudy = _mm_mul_ps(_mm_sub_ps(ud, uc), sw), dvdy = _mm_mul_ps(_mm_sub_ps(vd, vc), sh);
    __m128 lx = _mm_add_ps(_mm_mul_ps(dudx, dudx), _mm_mul_ps(dvdx, dvdx));
    __m128 ly = _mm_add_ps(_mm_mul_ps(dudy, dudy), _mm_mul_ps(dvdy, dvdy));
    _mm_storeu_ps(out, _mm_max_ps(lx, ly)); /* lx > ly ? lx : ly */
}

/* One level as the kernel reads it. In the direct case (CLAMP or WRAP on
 * a power-of-two axis, both axes at least 2 texels, rows under 32 KiB),
 * each pixel's 2x2 texels are two 8-byte reads at (x, y) and (x, y + 1):
 * - CLAMP: x0 clamped to [0, w - 2], and the fraction forced to 0 when x0
 *   was below (both texels were texel 0) or to 256 when above (both were
 *   texel w - 1): the same integer sum, texel by texel.
 * - WRAP: x0 & (w - 1), except at the seam (w - 1, then 0), which the
 *   pixels needing it read through address() instead.
 * Coordinates and fractions travel as 16-bit lanes (x0..x3, y0..y3):
 * CLAMP saturates, which the clamp absorbs. */
typedef struct lvk {
    const level *L;
    const uint8_t *base, *base2; /* row 0 and row 1 */
    __m128 fw, fh;
    __m128i mx, my; /* 32-bit masks applied to x0, y0: -1 (CLAMP) or size - 1 (WRAP) */
    __m128i hi;     /* 16-bit: the largest start index per axis */
    __m128i seam;   /* 16-bit: size - 1 on WRAP axes, -1 elsewhere (never hit) */
    __m128i mul;    /* 16-bit pairs (4, pitch) */
    int direct, wrap;
} lvk;

/* Whether the AVX2 kernels read the level (kr_fused_level): CLAMP, or
 * WRAP on a power-of-two axis, any size. */
static inline int level_avx2(const level *L, kiln_address au, kiln_address av)
{
    int okx = au == KILN_ADDRESS_CLAMP || (au == KILN_ADDRESS_WRAP && (L->w & (L->w - 1)) == 0);
    int oky = av == KILN_ADDRESS_CLAMP || (av == KILN_ADDRESS_WRAP && (L->h & (L->h - 1)) == 0);
    return okx && oky;
}

/* Whether the level can be read directly (see lvk). */
static inline int level_direct(const level *L, kiln_address au, kiln_address av)
{
    int wu = au == KILN_ADDRESS_WRAP, wv = av == KILN_ADDRESS_WRAP;
    int okx = au == KILN_ADDRESS_CLAMP || (wu && (L->w & (L->w - 1)) == 0);
    int oky = av == KILN_ADDRESS_CLAMP || (wv && (L->h & (L->h - 1)) == 0);
    return okx && oky && L->w >= 2 && L->h >= 2 && L->pitch <= 32767;
}

static inline void lvk_init(lvk *k, const level *L, kiln_address au, kiln_address av)
{
    k->L = L;
    k->base = L->base;
    k->base2 = L->base + L->pitch;
    k->fw = _mm_set1_ps(L->fw);
    k->fh = _mm_set1_ps(L->fh);
    int wu = au == KILN_ADDRESS_WRAP, wv = av == KILN_ADDRESS_WRAP;
    k->direct = level_direct(L, au, av);
    k->wrap = wu || wv;
    if (!k->direct)
        return;
    k->mx = _mm_set1_epi32(wu ? L->w - 1 : -1);
    k->my = _mm_set1_epi32(wv ? L->h - 1 : -1);
    int16_t hx = (int16_t)(wu ? L->w - 1 : L->w - 2), hy = (int16_t)(wv ? L->h - 1 : L->h - 2);
    int16_t sx = (int16_t)(wu ? L->w - 1 : -1), sy = (int16_t)(wv ? L->h - 1 : -1);
    k->hi = _mm_set_epi16(hy, hy, hy, hy, hx, hx, hx, hx);
    k->seam = _mm_set_epi16(sy, sy, sy, sy, sx, sx, sx, sx);
    k->mul = _mm_set1_epi32((int32_t)((uint32_t)L->pitch << 16 | 4u));
}

/* The four pixels' 2x2 texels through address(), when the direct reads
 * do not apply (MIRROR, WRAP on other sizes or at the seam, tiny levels):
 * left and right texels of the top and bottom rows, four pixels each. */
KR_NOINLINE void fetch_by_address(const level *L, __m128i x0, __m128i y0, kiln_address au,
                                  kiln_address av, __m128i t[4])
{
    int32_t xs[4], ys[4];
    uint32_t q[4][4];
    _mm_storeu_si128((__m128i *)xs, x0);
    _mm_storeu_si128((__m128i *)ys, y0);
    for (int j = 0; j < 4; j++) {
        size_t xa = (size_t)address(xs[j], L->w, au) * 4;
        size_t xb = (size_t)address(xs[j] + 1, L->w, au) * 4;
        const uint8_t *ra = L->base + (size_t)address(ys[j], L->h, av) * L->pitch;
        const uint8_t *rb = L->base + (size_t)address(ys[j] + 1, L->h, av) * L->pitch;
        q[0][j] = load_u32(ra + xa);
        q[1][j] = load_u32(ra + xb);
        q[2][j] = load_u32(rb + xa);
        q[3][j] = load_u32(rb + xb);
    }
    for (int k = 0; k < 4; k++)
        t[k] = _mm_loadu_si128((const __m128i *)q[k]);
}

/* The integer sums S of four pixels at (us, vs) on one level, in 32-bit
 * lanes: sum[0] = [b0 p0, b2 p0, b0 p1, b2 p1], sum[1] the same for p2, p3,
 * sum[2] and sum[3] bytes 1 and 3 likewise.
 *
 * Rows first, in 16-bit lanes: V = top * (256 - ay) + bottom * ay is at
 * most 255 * 256, exact modulo 2^16 as unsigned. Then columns with
 * pmaddwd, which multiplies signed words: V - 32768 fits, and
 * (VL - 32768) * (256 - ax) + (VR - 32768) * ax = S - 32768 * 256.
 * clamp2: both axes CLAMP (a constant where inlined: no masks, no seam). */
KR_INLINE void rgba8_4px_sums(const lvk *k, __m128 us, __m128 vs, kiln_address au,
                              kiln_address av, int clamp2, __m128i sum[4])
{
    const __m128i zero = _mm_setzero_si128(), k256 = _mm_set1_epi16(256);
    const __m128 half = _mm_set1_ps(0.5f);
    __m128i ax, ay;
    __m128i x0 = split4(_mm_sub_ps(_mm_mul_ps(us, k->fw), half), &ax);
    __m128i y0 = split4(_mm_sub_ps(_mm_mul_ps(vs, k->fh), half), &ay);
    __m128i t[4], f16; /* texels: top left, top right, bottom left, bottom right */
    if (k->direct) {
        __m128i c16 = clamp2 ? _mm_packs_epi32(x0, y0)
                             : _mm_packs_epi32(_mm_and_si128(x0, k->mx), _mm_and_si128(y0, k->my));
        f16 = _mm_packs_epi32(ax, ay);
        __m128i lt = _mm_cmplt_epi16(c16, zero), gt = _mm_cmpgt_epi16(c16, k->hi);
        c16 = _mm_min_epi16(_mm_max_epi16(c16, zero), k->hi);
        f16 =
            _mm_min_epi16(_mm_max_epi16(f16, _mm_and_si128(gt, k256)), _mm_andnot_si128(lt, k256));
        if (!clamp2 && k->wrap && _mm_movemask_epi8(_mm_cmpeq_epi16(c16, k->seam))) {
            fetch_by_address(k->L, x0, y0, au, av, t);
            f16 = _mm_packs_epi32(ax, ay);
        } else {
            /* byte offsets x * 4 + y * pitch */
            __m128i off = _mm_madd_epi16(_mm_unpacklo_epi16(c16, _mm_srli_si128(c16, 8)), k->mul);
            uint32_t o0 = (uint32_t)_mm_cvtsi128_si32(off);
            uint32_t o1 =
                (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi32(off, _MM_SHUFFLE(1, 1, 1, 1)));
            uint32_t o2 =
                (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi32(off, _MM_SHUFFLE(2, 2, 2, 2)));
            uint32_t o3 =
                (uint32_t)_mm_cvtsi128_si32(_mm_shuffle_epi32(off, _MM_SHUFFLE(3, 3, 3, 3)));
            /* (left, right) pairs, then [left x4], [right x4] */
            __m128i t01 = _mm_unpacklo_epi32(_mm_loadl_epi64((const __m128i *)(k->base + o0)),
                                             _mm_loadl_epi64((const __m128i *)(k->base + o1)));
            __m128i t23 = _mm_unpacklo_epi32(_mm_loadl_epi64((const __m128i *)(k->base + o2)),
                                             _mm_loadl_epi64((const __m128i *)(k->base + o3)));
            __m128i b01 = _mm_unpacklo_epi32(_mm_loadl_epi64((const __m128i *)(k->base2 + o0)),
                                             _mm_loadl_epi64((const __m128i *)(k->base2 + o1)));
            __m128i b23 = _mm_unpacklo_epi32(_mm_loadl_epi64((const __m128i *)(k->base2 + o2)),
                                             _mm_loadl_epi64((const __m128i *)(k->base2 + o3)));
            t[0] = _mm_unpacklo_epi64(t01, t23);
            t[1] = _mm_unpackhi_epi64(t01, t23);
            t[2] = _mm_unpacklo_epi64(b01, b23);
            t[3] = _mm_unpackhi_epi64(b01, b23);
        }
    } else {
        fetch_by_address(k->L, x0, y0, au, av, t);
        f16 = _mm_packs_epi32(ax, ay);
    }

    /* weights: g16 = 256 - f16; per pixel word pairs for the rows
     * [ay0, ay0, ay1, ay1, ..] and the columns [256 - ax, ax] */
    __m128i g16 = _mm_sub_epi16(k256, f16);
    __m128i fy = _mm_unpackhi_epi16(f16, f16), gy = _mm_unpackhi_epi16(g16, g16);
    __m128i wx = _mm_unpacklo_epi16(g16, f16);
    __m128i wx01 = _mm_unpacklo_epi32(wx, wx), wx23 = _mm_unpackhi_epi32(wx, wx);
    /* even bytes (0, 2) and odd bytes (1, 3) as words: [b0 p0, b2 p0, b0 p1, ..] */
    const __m128i lo = _mm_set1_epi16(0x00FF), bias = _mm_set1_epi16(-32768);
    __m128i le = _mm_add_epi16(_mm_mullo_epi16(_mm_and_si128(t[0], lo), gy),
                               _mm_mullo_epi16(_mm_and_si128(t[2], lo), fy));
    __m128i re = _mm_add_epi16(_mm_mullo_epi16(_mm_and_si128(t[1], lo), gy),
                               _mm_mullo_epi16(_mm_and_si128(t[3], lo), fy));
    __m128i lod = _mm_add_epi16(_mm_mullo_epi16(_mm_srli_epi16(t[0], 8), gy),
                                _mm_mullo_epi16(_mm_srli_epi16(t[2], 8), fy));
    __m128i rod = _mm_add_epi16(_mm_mullo_epi16(_mm_srli_epi16(t[1], 8), gy),
                                _mm_mullo_epi16(_mm_srli_epi16(t[3], 8), fy));
    le = _mm_xor_si128(le, bias);
    re = _mm_xor_si128(re, bias);
    lod = _mm_xor_si128(lod, bias);
    rod = _mm_xor_si128(rod, bias);
    const __m128i unbias = _mm_set1_epi32(32768 * 256);
    sum[0] = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(le, re), wx01), unbias);
    sum[1] = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(le, re), wx23), unbias);
    sum[2] = _mm_add_epi32(_mm_madd_epi16(_mm_unpacklo_epi16(lod, rod), wx01), unbias);
    sum[3] = _mm_add_epi32(_mm_madd_epi16(_mm_unpackhi_epi16(lod, rod), wx23), unbias);
}

/* The sums as floats (exact), per texel byte: s[b] holds byte b of the
 * four pixels. */
KR_INLINE void rgba8_4px(const lvk *k, __m128 us, __m128 vs, kiln_address au, kiln_address av,
                         int clamp2, __m128 s[4])
{
    __m128i sum[4];
    rgba8_4px_sums(k, us, vs, au, av, clamp2, sum);
    /* [b0 p0, b2 p0, b0 p1, b2 p1] and [.. p2, .. p3] to planar */
    __m128 se01 = _mm_cvtepi32_ps(sum[0]), se23 = _mm_cvtepi32_ps(sum[1]);
    __m128 so01 = _mm_cvtepi32_ps(sum[2]), so23 = _mm_cvtepi32_ps(sum[3]);
    s[0] = _mm_shuffle_ps(se01, se23, _MM_SHUFFLE(2, 0, 2, 0));
    s[2] = _mm_shuffle_ps(se01, se23, _MM_SHUFFLE(3, 1, 3, 1));
    s[1] = _mm_shuffle_ps(so01, so23, _MM_SHUFFLE(2, 0, 2, 0));
    s[3] = _mm_shuffle_ps(so01, so23, _MM_SHUFFLE(3, 1, 3, 1));
}

/* Four pixels under one plan: the final values per texel byte. */
KR_NOINLINE void rgba8_plan4(const kr_lod_plan *p, const lvk *k0, const lvk *k1, __m128 us,
                             __m128 vs, kiln_address au, kiln_address av, __m128 r[4])
{
    __m128 s[4];
    rgba8_4px(k0, us, vs, au, av, 0, s);
    if (p->passes == 1) { /* lw = 1 */
        const __m128 d = _mm_set1_ps(255.0f * 65536.0f);
        for (int b = 0; b < 4; b++)
            r[b] = _mm_div_ps(s[b], d);
        return;
    }
    const __m128 inv = _mm_set1_ps(1.0f / 65536.0f), k255 = _mm_set1_ps(255.0f);
    const __m128 lw0 = _mm_set1_ps(p->lw[0]), lw1 = _mm_set1_ps(p->lw[1]);
    __m128 acc[4];
    for (int b = 0; b < 4; b++)
        acc[b] = _mm_mul_ps(lw0, _mm_mul_ps(s[b], inv));
    rgba8_4px(k1, us, vs, au, av, 0, s);
    for (int b = 0; b < 4; b++)
        r[b] = _mm_div_ps(_mm_add_ps(acc[b], _mm_mul_ps(lw1, _mm_mul_ps(s[b], inv))), k255);
}

/* The block when every quad reads level L alone (lw = 1), by rows;
 * clamp2: both axes CLAMP on a direct level (a constant once inlined). */
KR_INLINE void rgba8_rows(const lvk *k, const float *u, const float *v, kiln_address au,
                          kiln_address av, int clamp2, float *o0, float *o2, float *out)
{
    const __m128 d = _mm_set1_ps(255.0f * 65536.0f);
    for (int row = 0; row < 4; row++) {
        __m128 s[4];
        rgba8_4px(k, _mm_loadu_ps(u + 4 * row), _mm_loadu_ps(v + 4 * row), au, av, clamp2, s);
        _mm_storeu_ps(o0 + 4 * row, _mm_div_ps(s[0], d));
        _mm_storeu_ps(out + 1 * BLOCK + 4 * row, _mm_div_ps(s[1], d));
        _mm_storeu_ps(o2 + 4 * row, _mm_div_ps(s[2], d));
        _mm_storeu_ps(out + 3 * BLOCK + 4 * row, _mm_div_ps(s[3], d));
    }
}

static void fused_level_init(kr_fused_level *f, const level *L, kiln_address au, kiln_address av);

static void rgba8_level(const level *L, const float *u, const float *v, kiln_address au,
                        kiln_address av, int swap, float *out)
{
    /* texel bytes 0 and 2 go to channels 0 and 2, or 2 and 0 (BGRA) */
    float *o0 = out + (swap ? 2 : 0) * BLOCK, *o2 = out + (swap ? 0 : 2) * BLOCK;
    if (kr_effects_active_level() >= KR_SIMD_AVX2 && level_avx2(L, au, av)) {
        kr_fused_level f;
        fused_level_init(&f, L, au, av);
        kr_sample_rows(&f, u, v, o0, out + BLOCK, o2, out + 3 * BLOCK);
        return;
    }
    lvk k;
    lvk_init(&k, L, au, av);
    if (k.direct && au == KILN_ADDRESS_CLAMP && av == KILN_ADDRESS_CLAMP)
        rgba8_rows(&k, u, v, au, av, 1, o0, o2, out);
    else
        rgba8_rows(&k, u, v, au, av, 0, o0, o2, out);
}

/* rgba8_block at the AVX2 level and above: every level the quads read set
 * up once (fused_level_init) and the quads to the level's quads kernel
 * (kr_sample_quads: two per vector at AVX2, four at AVX-512). False when
 * a level is not one the kernels read (level_avx2): the SSE2 code then
 * does the block. */
static int rgba8_quads_avx2(const kr_lod_plan *qp, const level *lv, const float *u, const float *v,
                            kiln_address au, kiln_address av, int b0, int b2, float *out)
{
    kr_fused_level fl[MAX_LEVELS];
    uint32_t ready = 0;
    kr_fused_quad fq[4];
    for (int q = 0; q < 4; q++) {
        for (uint32_t pass = 0; pass < qp[q].passes; pass++) {
            uint32_t l = qp[q].level[pass];
            if (!(ready >> l & 1u)) {
                if (!level_avx2(&lv[l], au, av))
                    return 0;
                fused_level_init(&fl[l], &lv[l], au, av);
                ready |= 1u << l;
            }
        }
        fq[q].L[0] = &fl[qp[q].level[0]];
        fq[q].L[1] = &fl[qp[q].level[qp[q].passes - 1]];
        fq[q].lw[0] = qp[q].lw[0];
        fq[q].lw[1] = qp[q].lw[1];
        fq[q].passes = (int)qp[q].passes;
    }
    float *o[4] = {out + b0 * BLOCK, out + BLOCK, out + b2 * BLOCK, out + 3 * BLOCK};
    kr_sample_quads(fq, u, v, o);
    return true;
}

/* The block: by rows of four pixels when every quad has the same plan
 * (then the loads and stores are plain vectors), else by quads. */
static void rgba8_block(const kr_lod_plan *qp, int uniform, const level *lv, const float *u,
                        const float *v, kiln_address au, kiln_address av, int swap, float *out)
{
    /* output channel ch reads texel byte (b0, 1, b2, 3)[ch] */
    const int b0 = swap ? 2 : 0, b2 = swap ? 0 : 2;
    if (kr_effects_active_level() >= KR_SIMD_AVX2 && rgba8_quads_avx2(qp, lv, u, v, au, av, b0, b2, out))
        return;
    lvk k[2];
    if (uniform) {
        const kr_lod_plan *p = &qp[0];
        lvk_init(&k[0], &lv[p->level[0]], au, av);
        lvk_init(&k[1], &lv[p->level[1]], au, av);
        for (int row = 0; row < 4; row++) {
            __m128 r[4];
            rgba8_plan4(p, &k[0], &k[1], _mm_loadu_ps(u + 4 * row), _mm_loadu_ps(v + 4 * row), au,
                        av, r);
            _mm_storeu_ps(out + 0 * BLOCK + 4 * row, r[b0]);
            _mm_storeu_ps(out + 1 * BLOCK + 4 * row, r[1]);
            _mm_storeu_ps(out + 2 * BLOCK + 4 * row, r[b2]);
            _mm_storeu_ps(out + 3 * BLOCK + 4 * row, r[3]);
        }
        return;
    }
    /* Quads mostly read the same levels as their neighbours: each level's
     * constants are set up once per block. */
    lvk kc[MAX_LEVELS];
    uint32_t ready = 0;
    for (int q = 0; q < 4; q++) {
        const kr_lod_plan *p = &qp[q];
        int i0 = quad_px[q][0];
        for (uint32_t pass = 0; pass < p->passes; pass++) {
            uint32_t l = p->level[pass];
            if (!(ready >> l & 1u)) {
                lvk_init(&kc[l], &lv[l], au, av);
                ready |= 1u << l;
            }
        }
        __m128 us = _mm_loadh_pi(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(u + i0)),
                                 (const __m64 *)(u + i0 + 4));
        __m128 vs = _mm_loadh_pi(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(v + i0)),
                                 (const __m64 *)(v + i0 + 4));
        __m128 r[4];
        rgba8_plan4(p, &kc[p->level[0]], &kc[p->level[p->passes - 1]], us, vs, au, av, r);
        const int byte[4] = {b0, 1, b2, 3};
        for (int ch = 0; ch < 4; ch++) {
            _mm_storel_pi((__m64 *)(out + ch * BLOCK + i0), r[byte[ch]]);
            _mm_storeh_pi((__m64 *)(out + ch * BLOCK + i0 + 4), r[byte[ch]]);
        }
    }
}

#else

static inline void quad_rho2(const float *u, const float *v, float fw, float fh, float out[4])
{
    for (int q = 0; q < 4; q++)
        out[q] = quad_rho2_1(u, v, quad_px[q][0], fw, fh);
}

static void rgba8_quad(const kr_lod_plan *qp, const level *lv, const float *u, const float *v, int i0,
                       kiln_address au, kiln_address av, int swap, float *out)
{
    for (int j = 0; j < 4; j++) {
        int i = i0 + (j & 1) + (j >> 1) * 4;
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t pass = 0; pass < qp->passes; pass++) {
            const level *L = &lv[qp->level[pass]];
            int32_t ax, ay;
            int32_t x0 = split_coord(u[i] * L->fw - 0.5f, &ax);
            int32_t y0 = split_coord(v[i] * L->fh - 0.5f, &ay);
            size_t xa = (size_t)address(x0, L->w, au) * 4;
            size_t xb = (size_t)address(x0 + 1, L->w, au) * 4;
            const uint8_t *ra = L->base + (size_t)address(y0, L->h, av) * L->pitch;
            const uint8_t *rb = L->base + (size_t)address(y0 + 1, L->h, av) * L->pitch;
            for (int c = 0; c < 4; c++) {
                int32_t top = ra[xa + c] * (256 - ax) + ra[xb + c] * ax;
                int32_t bot = rb[xa + c] * (256 - ax) + rb[xb + c] * ax;
                float s = (float)(top * (256 - ay) + bot * ay);
                acc[c] += qp->lw[pass] * (s * (1.0f / 65536.0f));
            }
        }
        for (int ch = 0; ch < 4; ch++) {
            int byte = swap && ch != 1 && ch != 3 ? 2 - ch : ch;
            out[ch * BLOCK + i] = acc[byte] / 255.0f;
        }
    }
}

static void rgba8_level(const level *L, const float *u, const float *v, kiln_address au,
                        kiln_address av, int swap, float *out)
{
    const kr_lod_plan p = {KILN_FILTER_LINEAR, 1, {0, 0}, {1.0f, 0.0f}};
    for (int q = 0; q < 4; q++)
        rgba8_quad(&p, L, u, v, quad_px[q][0], au, av, swap, out);
}

static void rgba8_block(const kr_lod_plan *qp, int uniform, const level *lv, const float *u,
                        const float *v, kiln_address au, kiln_address av, int swap, float *out)
{
    (void)uniform;
    for (int q = 0; q < 4; q++)
        rgba8_quad(&qp[q], lv, u, v, quad_px[q][0], au, av, swap, out);
}

#endif

/* The plans of the block's four quads (LOD from derivatives in texels of
 * level 0, fw x fh). */
static void plan_block(const kd_sampler *s, uint32_t nl, const float *u, const float *v, float fw,
                       float fh, kr_lod_plan qp[4])
{
    float rho2[4];
    quad_rho2(u, v, fw, fh, rho2);
    int lo_ok = s->mip_lod_bias <= 0.0f && s->min_lod <= 0.0f;
    int pt_ok = s->min_filter == s->mag_filter && s->mip_filter == KILN_FILTER_POINT;
    for (int q = 0; q < 4; q++)
        plan_quad(s, nl, rho2[q], lo_ok, pt_ok, &qp[q]);
}

/* ---- kiln_ps_sample ---- */

static inline void set_level(level *L, const uint8_t *data, const kres_subresource *sub)
{
    L->base = data + sub->offset;
    L->pitch = sub->row_pitch;
    L->w = (int32_t)sub->width;
    L->h = (int32_t)sub->height;
    L->fw = (float)sub->width;
    L->fh = (float)sub->height;
}

/* kiln_ps_sample's shortcut: whether view t under sampler s (NULL: an
 * empty slot, which takes the general checks) is one RGBA8 / BGRA8 level
 * (kr_texture.quick) under a LINEAR, non-BORDER, non-anisotropic
 * sampler, which rgba8_level reads; that level in *L. */
static inline int quick_level(const kr_texture *t, const kd_sampler *s, level *L)
{
    if (!t || !t->quick || !s || s->min_filter != KILN_FILTER_LINEAR || s->mag_filter != KILN_FILTER_LINEAR ||
        s->max_aniso > 1 || s->address_u == KILN_ADDRESS_BORDER || s->address_v == KILN_ADDRESS_BORDER)
        return 0;
    set_level(L, t->data, &t->subs[t->first_mip + t->slice * t->res_mip_levels]);
    return 1;
}

/* Each pixel's plan: its quad's. */
static const kr_lod_plan *const *kr_lod_plans(const kr_lod_plan qp[4], const kr_lod_plan *pp[BLOCK])
{
    for (int q = 0; q < 4; q++)
        for (int j = 0; j < 4; j++)
            pp[quad_px[q][j]] = &qp[q];
    return pp;
}

/* kiln_ps_sample's plans (plan_block, level 0 in lv[0] already) and the
 * levels they read set up in lv (only those). */
static void plan_block_levels(const kr_texture *t, const kd_sampler *s, uint32_t nl,
                              const kres_subresource *subs, const float *u, const float *v,
                              level *lv, kr_lod_plan qp[4])
{
    plan_block(s, nl, u, v, lv[0].fw, lv[0].fh, qp);
    uint32_t top = 0;
    for (int q = 0; q < 4; q++)
        top = qp[q].level[1] > top ? qp[q].level[1] : top; /* level[1] >= level[0] */
    for (uint32_t l = 1; l <= top; l++)
        set_level(&lv[l], t->data, &subs[l]);
}

/* The sampler's border color as format f reads it (D3D10): clamped to
 * [0, 1] for UNORM and UNORM_SRGB formats (and the UNORM depth formats),
 * to [-1, 1] for SNORM, as given for float formats; NaN reads 0 where a
 * clamp applies. */
static void border_for(kiln_format f, const float in[4], float out[4])
{
    int unorm = kres_format_unorm(f) || f == KILN_FORMAT_D16_UNORM || f == KILN_FORMAT_D24_UNORM_S8_UINT;
    float lo = unorm ? 0.0f : -1.0f;
    int clamp = unorm || f == KILN_FORMAT_R8G8B8A8_SNORM;
    for (int c = 0; c < 4; c++) {
        float b = in[c];
        if (clamp)
            b = b > lo ? (b < 1.0f ? b : 1.0f) : lo; /* NaN: lo (0 for UNORM) */
        if (clamp && !unorm && in[c] != in[c])
            b = 0.0f;
        out[c] = b;
    }
}

/* The general path: taps, then one read loop per format; pp[i] is pixel
 * i's plan. */
KR_NOINLINE void sample_general(const kr_texture *t, const kd_sampler *s,
                                const kr_lod_plan *const *pp, const level *lv, const float *u,
                                const float *v, float *rgba)
{
#if defined(__SSE2__)
    if (sample_bc_any(t->format, s, pp, lv, u, v, rgba))
        return;
#endif
    taps tp;
    tp.bc = kres_format_bc(t->format);
    gather(&tp, pp, lv, u, v, s->address_u, s->address_v, kres_format(t->format)->size);
    static const int rgba_bytes[4] = {0, 1, 2, 3}, bgra_bytes[4] = {2, 1, 0, 3};
    float border[4];
    border_for(t->format, s->border, border);
    switch (t->format) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        read_unorm8(&tp, rgba, border, 4, rgba_bytes);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        read_unorm8(&tp, rgba, border, 4, bgra_bytes);
        break;
    case KILN_FORMAT_R8_UNORM:
        read_unorm8(&tp, rgba, border, 1, rgba_bytes);
        break;
    case KILN_FORMAT_R32_FLOAT:
    case KILN_FORMAT_D32_FLOAT:
        read_f32(&tp, rgba, border, 1);
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        read_f32(&tp, rgba, border, 2);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        read_f32(&tp, rgba, border, 4);
        break;
    case KILN_FORMAT_D24_UNORM_S8_UINT:
        read_d24(&tp, rgba, border);
        break;
#define BC_CASE(fmt, nch)                                                                          \
    case fmt:                                                                                      \
        read_bc(&tp, rgba, border, fmt, nch);                                                      \
        break;
        BC_FORMATS(BC_CASE)
#undef BC_CASE
    default: /* texel.c's (sampleable: checked by the caller) */
        read_texel(&tp, rgba, border, t->format, kres_format(t->format)->channels);
        break;
    }
}

/* ---- ANISOTROPIC ----
 *
 * Per pixel, from its derivatives in texels of the view's first mip: the
 * tap count N = min(ceil(major / minor), max_aniso), the major
 * derivative (in uv) as the axis, and -log2(N) for the LOD. N taps at
 * ((k + 0.5) / N - 0.5) x axis, each a trilinear sample (the general
 * path, so any format) at the pixel's LOD, summed in k order, then divided
 * by N. Pixels with N = 1 keep their coordinates and LOD: exactly the
 * trilinear sample. */

typedef struct aniso {
    uint32_t n[BLOCK];
    float au[BLOCK], av[BLOCK]; /* the major derivative, in uv */
    float lod_adj[BLOCK];       /* -log2(N) */
} aniso;

/* Pixel i's N and axis from derivatives (ux, vx) along x, (uy, vy) along
 * y, in uv; fw, fh: the first mip's size. Returns whether N > 1. */
static int aniso_pixel(const kd_sampler *s, float fw, float fh, float ux, float vx, float uy,
                       float vy, aniso *an, int i)
{
    float tx = ux * fw, ty = vx * fh, sx = uy * fw, sy = vy * fh;
    float lx2 = tx * tx + ty * ty, ly2 = sx * sx + sy * sy;
    int x_major = lx2 >= ly2;
    float major = sqrtf(x_major ? lx2 : ly2), minor = sqrtf(x_major ? ly2 : lx2);
    uint32_t n = 1;
    if (major > 0.0f && major <= COORD_LIMIT) { /* NaN and huge: 1 */
        /* ceil, but a ratio within 2^-10 above an integer (derivatives'
         * rounding on an isotropic footprint) counts as that integer */
        float ratio = minor > 0.0f ? ceilf(major / minor - 0x1p-10f) : (float)s->max_aniso;
        n = ratio >= (float)s->max_aniso ? s->max_aniso : ratio > 1.0f ? (uint32_t)ratio : 1u;
    }
    an->n[i] = n;
    an->au[i] = x_major ? ux : uy;
    an->av[i] = x_major ? vx : vy;
    an->lod_adj[i] = n > 1 ? -kr_log2f((float)n) : 0.0f;
    return n > 1;
}

/* The anisotropic sample with pixel i's LOD lod[i] (biases and -log2(N)
 * added, not clamped). */
static void sample_aniso(const kr_texture *t, const kd_sampler *s, const float *u, const float *v,
                         const aniso *an, const float *lod, float *rgba)
{
    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    const kres_subresource *subs = &t->subs[t->first_mip + t->slice * t->res_mip_levels];
    kr_lod_plan pl[BLOCK];
    const kr_lod_plan *pp[BLOCK];
    uint32_t top = 0, maxn = 1;
    for (int i = 0; i < BLOCK; i++) {
        plan_lod(s, nl, lod[i], &pl[i]);
        pp[i] = &pl[i];
        top = pl[i].level[1] > top ? pl[i].level[1] : top;
        maxn = an->n[i] > maxn ? an->n[i] : maxn;
    }
    level lv[MAX_LEVELS];
    for (uint32_t l = 0; l <= top; l++)
        set_level(&lv[l], t->data, &subs[l]);
    float acc[4 * BLOCK], one[4 * BLOCK], uk[BLOCK], vk[BLOCK];
    memset(acc, 0, sizeof acc);
    for (uint32_t k = 0; k < maxn; k++) {
        for (int i = 0; i < BLOCK; i++) {
            uint32_t n = an->n[i];
            float o = n > 1 && k < n ? ((float)k + 0.5f) / (float)n - 0.5f : 0.0f;
            uk[i] = n > 1 ? u[i] + o * an->au[i] : u[i];
            vk[i] = n > 1 ? v[i] + o * an->av[i] : v[i];
        }
        sample_general(t, s, pp, lv, uk, vk, one);
        for (int c = 0; c < 4; c++)
            for (int i = 0; i < BLOCK; i++)
                if (k < an->n[i])
                    acc[c * BLOCK + i] += one[c * BLOCK + i];
    }
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < BLOCK; i++)
            rgba[c * BLOCK + i] = an->n[i] > 1 ? acc[c * BLOCK + i] / (float)an->n[i] : acc[c * BLOCK + i];
}

/* kiln_ps_sample under an anisotropic sampler: each quad's coarse
 * derivatives (as its LOD takes them). Returns 0, nothing written, when
 * every quad is isotropic (N = 1): the trilinear path then. */
static int sample_quads_aniso(const kr_texture *t, const kd_sampler *s, const float *u,
                              const float *v, float *rgba)
{
    const kres_subresource *l0 = &t->subs[t->first_mip + t->slice * t->res_mip_levels];
    float fw = (float)l0->width, fh = (float)l0->height, rho2[4], lod[BLOCK];
    aniso an;
    int any = 0;
    quad_rho2(u, v, fw, fh, rho2);
    for (int q = 0; q < 4; q++) {
        int i0 = quad_px[q][0];
        for (int j = 0; j < 4; j++) {
            int i = quad_px[q][j];
            any |= aniso_pixel(s, fw, fh, u[i0 + 1] - u[i0], v[i0 + 1] - v[i0], u[i0 + 4] - u[i0],
                               v[i0 + 4] - v[i0], &an, i);
            /* Sample's LOD (the same operations), plus -log2(N) */
            lod[i] = 0.5f * kr_log2f(rho2[q]) + s->mip_lod_bias + an.lod_adj[i];
        }
    }
    if (!any)
        return 0;
    sample_aniso(t, s, u, v, &an, lod, rgba);
    return 1;
}

#if KR_EFFECTS_X86
/* float lanes: a where m, else b */
static inline __m128 select4(__m128 m, __m128 a, __m128 b)
{
    return _mm_or_ps(_mm_and_ps(m, a), _mm_andnot_ps(m, b));
}

/* plan_block for sample_prepared, the four quads in four lanes: plan_quad
 * and plan_lod's comparisons and arithmetic lane by lane (the same
 * floats), for a sampler that filters LINEAR for min and mag, so every
 * plan's filter is LINEAR. A quad that plan_quad's shortcut sends to level
 * 0 takes lod 0, which plan_lod turns into the same plan (lo_ok: min_lod
 * <= 0). Returns the level when all four quads read that one
 * level in one pass, else -1 with fq filled. */
static int plan_prepared(const kd_sampler *s, uint32_t nl, const kr_fused_level *chain, const float *u,
                         const float *v, kr_fused_quad fq[4])
{
    float rho2[4];
    quad_rho2(u, v, chain[0].fw, chain[0].fh, rho2);
    __m128 r2 = _mm_loadu_ps(rho2);
    __m128 cut = _mm_setzero_ps();
    if (s->mip_lod_bias <= 0.0f && s->min_lod <= 0.0f) { /* plan_quad's lo_ok */
        cut = _mm_cmple_ps(r2, _mm_set1_ps(1.0f));
        if (s->mip_filter == KILN_FILTER_POINT) /* pt_ok (min == mag here) */
            cut = _mm_or_ps(cut, _mm_cmple_ps(r2, _mm_set1_ps(1.9f)));
    }
    if (_mm_movemask_ps(cut) == 15)
        return 0;
    /* plan_quad's 0.5 * log2(rho2) + bias for the four quads at once
     * (kr_log2f4: kr_log2f's bits), 0 where the shortcut applies */
    __m128 l =
        _mm_add_ps(_mm_mul_ps(_mm_set1_ps(0.5f), kr_log2f4(r2)), _mm_set1_ps(s->mip_lod_bias));
    l = _mm_andnot_ps(cut, l);
    const __m128 mn = _mm_set1_ps(s->min_lod), mx = _mm_set1_ps(s->max_lod),
                 top = _mm_set1_ps((float)(nl - 1));
    l = select4(_mm_cmpge_ps(l, mn), l, mn); /* !(lod >= min_lod): min_lod, also NaN */
    l = select4(_mm_cmpgt_ps(l, mx), mx, l);
    l = _mm_and_ps(_mm_cmpgt_ps(l, _mm_setzero_ps()), l); /* !(lod > 0): 0 */
    l = select4(_mm_cmpgt_ps(l, top), top, l); /* now in [0, nl - 1]: floor is truncation */
    int32_t lev[4], two = 0;
    float lw1[4];
    if (s->mip_filter == KILN_FILTER_POINT) {
        _mm_storeu_si128((__m128i *)(void *)lev, _mm_cvttps_epi32(_mm_add_ps(l, _mm_set1_ps(0.5f))));
    } else {
        __m128i fi = _mm_cvttps_epi32(l);
        __m128 fl = _mm_cvtepi32_ps(fi);
        /* level + 1 < nl: level < nl - 1 */
        __m128i more = _mm_cmplt_epi32(fi, _mm_set1_epi32((int32_t)nl - 1));
        two = _mm_movemask_ps(_mm_and_ps(_mm_castsi128_ps(more), _mm_cmpgt_ps(l, fl)));
        _mm_storeu_si128((__m128i *)(void *)lev, fi);
        _mm_storeu_ps(lw1, _mm_sub_ps(l, fl));
    }
    if (!two && lev[1] == lev[0] && lev[2] == lev[0] && lev[3] == lev[0])
        return lev[0];
    for (int q = 0; q < 4; q++) {
        int t = two >> q & 1;
        fq[q].L[0] = &chain[lev[q]];
        fq[q].L[1] = &chain[lev[q] + t];
        fq[q].lw[0] = t ? 1.0f - lw1[q] : 1.0f;
        fq[q].lw[1] = t ? lw1[q] : 0.0f;
        fq[q].passes = 1 + t;
    }
    return -1;
}

/* kiln_ps_sample on a prepared chain of nl > 1 levels (kr_textures_prepare)
 * under sampler s, LINEAR for min and mag: what the unprepared path does
 * there (plan_block's plans, here from plan_prepared; then every quad
 * LINEAR: one level for all in one pass to the rows kernel, else the quads
 * to the quads kernel, of the active level: kr_sample_rows,
 * kr_sample_quads in fused.h) without setting the levels up; swap: BGRA8
 * (bytes 0 and 2 to channels 2 and 0). */
KR_NOINLINE void sample_prepared(const kd_sampler *s, uint32_t nl, const kr_fused_level *chain, const float *u,
                                 const float *v, int swap, float *rgba)
{
    float *out[4] = {rgba + (swap ? 2 : 0) * BLOCK, rgba + BLOCK, rgba + (swap ? 0 : 2) * BLOCK, rgba + 3 * BLOCK};
    kr_fused_quad fq[4];
    int lv0 = plan_prepared(s, nl, chain, u, v, fq);
    if (lv0 >= 0) {
        kr_sample_rows(&chain[lv0], u, v, out[0], out[1], out[2], out[3]);
        return;
    }
    kr_sample_quads(fq, u, v, out);
}
#endif

/* ---- the POINT shortcut (raster.h, kr_point_level) ----
 *
 * One RGBA8 / BGRA8 level under min and mag POINT filters and no BORDER
 * axis: the general path's taps are one texel of weight 1 per pixel, so
 * its result is the texel's bytes divided by 255. The kernels compute
 * that directly: the same product u w, the same clamp and floor
 * (split16), the same address modes, the same division. */

static void point_level_set(kr_point_level *P, const level *L, kiln_address au, kiln_address av)
{
    P->base = L->base;
    P->pitch = (int32_t)L->pitch;
    P->w = L->w;
    P->h = L->h;
    P->fw = L->fw;
    P->fh = L->fh;
    P->au = (uint8_t)au;
    P->av = (uint8_t)av;
}

/* The portable kernel (kr_point_fn): any address mode but BORDER. */
static void sample_point(const kr_point_level *P, const float *u, const float *v, float *rgba,
                         int swap)
{
    float cx[BLOCK], cy[BLOCK];
    int32_t x[BLOCK], y[BLOCK], frac[BLOCK];
    for (int i = 0; i < BLOCK; i++) {
        cx[i] = u[i] * P->fw;
        cy[i] = v[i] * P->fh;
    }
    split16(cx, x, frac);
    split16(cy, y, frac);
    const int c0 = swap ? 2 : 0, c2 = swap ? 0 : 2;
    for (int i = 0; i < BLOCK; i++) {
        const uint8_t *t = P->base +
                           (size_t)address(y[i], P->h, (kiln_address)P->av) * (size_t)P->pitch +
                           (size_t)address(x[i], P->w, (kiln_address)P->au) * 4;
        rgba[i] = (float)t[c0] / 255.0f;
        rgba[BLOCK + i] = (float)t[1] / 255.0f;
        rgba[2 * BLOCK + i] = (float)t[c2] / 255.0f;
        rgba[3 * BLOCK + i] = (float)t[3] / 255.0f;
    }
}

/* Whether view t under sampler s (NULL: the default, LINEAR) takes the
 * POINT shortcut; its level in *P. */
static bool point_view(const kr_texture *t, const kd_sampler *s, kr_point_level *P)
{
    if (!t || !s || !t->data || !t->subs || t->num_mips != 1 || kr_kind_view(t) ||
        (t->format != KILN_FORMAT_R8G8B8A8_UNORM && t->format != KILN_FORMAT_B8G8R8A8_UNORM) ||
        s->min_filter != KILN_FILTER_POINT || s->mag_filter != KILN_FILTER_POINT ||
        s->max_aniso > 1 || s->address_u == KILN_ADDRESS_BORDER ||
        s->address_v == KILN_ADDRESS_BORDER)
        return false;
    level L;
    set_level(&L, t->data, &t->subs[t->first_mip + t->slice * t->res_mip_levels]);
    if (L.pitch > INT32_MAX) /* kr_point_level's pitch (kiln's own rows are far shorter) */
        return false;
    point_level_set(P, &L, s->address_u, s->address_v);
    return true;
}

/* kr_textures_prepare's POINT part, at every SIMD level: each slot below
 * KR_PREPARED whose view takes the shortcut under its own sampler, else
 * slot 0's, with the widest kernel that reads both its axes. */
static void prepare_points(struct kiln_ps_textures *t)
{
    memset(t->point_sampler, 0, sizeof t->point_sampler);
#if KR_EFFECTS_X86
    const kr_simd simd = kr_effects_active_level();
#endif
    for (uint32_t i = 0; i < KR_PREPARED; i++) {
        for (uint32_t j = i;; j = 0) {
            if (point_view(&t->tex[i], t->samp[j], &t->point[i])) {
                const kr_point_level *P = &t->point[i];
                t->point_sampler[i] = (uint8_t)(j + 1);
                t->point_fn[i] = sample_point;
#if KR_EFFECTS_X86
                /* the vector kernels' offsets y pitch + 4 x are int32 */
                const int64_t last = (int64_t)(P->h - 1) * P->pitch + 4 * (int64_t)P->w;
                if (simd >= KR_SIMD_AVX2 && kr_simd_axis(P->w, (kiln_address)P->au) &&
                    kr_simd_axis(P->h, (kiln_address)P->av) && last <= INT32_MAX)
                    t->point_fn[i] =
                        simd >= KR_SIMD_AVX512 ? kr_sample_point_avx512 : kr_sample_point_avx2;
#else
                (void)P;
#endif
                break;
            }
            if (j == 0)
                break;
        }
    }
}

/* kiln_ps_sample but for prepared levels (kr_textures_prepare); on its
 * own so that the prepared call does not pay this one's frame. */
KR_NOINLINE void sample_block(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                              const float *u, const float *v, float *rgba)
{
    const kr_texture *t = NULL;
    if (a && a->textures && srv_slot < KILN_MAX_SHADER_RESOURCES)
        t = &a->textures->tex[srv_slot];
    /* The common case first: what the checks below reach for one RGBA8 /
     * BGRA8 level under a LINEAR sampler (nl == 1, min == mag == LINEAR),
     * with fewer of them. */
    const kd_sampler *qs = t && sampler_slot < KILN_MAX_SAMPLERS ? a->textures->samp[sampler_slot] : NULL;
    level QL;
    if (quick_level(t, qs, &QL)) {
        rgba8_level(&QL, u, v, qs->address_u, qs->address_v, t->format == KILN_FORMAT_B8G8R8A8_UNORM, rgba);
        return;
    }
    if (t && kr_kind_view(t)) { /* 1D, 3D, cube: sample_kinds.c */
        kiln_ps_sample_uvw(a, srv_slot, sampler_slot, u, v, NULL, rgba);
        return;
    }
    int rgba8 = t && (t->format == KILN_FORMAT_R8G8B8A8_UNORM ||
                      t->format == KILN_FORMAT_B8G8R8A8_UNORM); /* sampleable, in the table */
    if (!t || !t->data || !t->subs || t->num_mips == 0 ||
        (!rgba8 && (!format_sampleable(t->format) || !kres_format(t->format)))) {
        memset(rgba, 0, sizeof(float) * 4 * BLOCK);
        return;
    }
    const kd_sampler *s = sampler_slot < KILN_MAX_SAMPLERS ? a->textures->samp[sampler_slot] : NULL;
    if (!s)
        s = &default_sampler;
    if (s->max_aniso > 1 && sample_quads_aniso(t, s, u, v, rgba))
        return;
    kiln_address au = s->address_u, av = s->address_v;
    /* the RGBA8 kernel applies where every quad filters LINEAR */
    rgba8 = rgba8 && au != KILN_ADDRESS_BORDER && av != KILN_ADDRESS_BORDER;
    int swap = t->format == KILN_FORMAT_B8G8R8A8_UNORM;

    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    const kres_subresource *subs = &t->subs[t->first_mip + t->slice * t->res_mip_levels];
    level lv[MAX_LEVELS];
    set_level(&lv[0], t->data, &subs[0]);

    kr_point_level P; /* the POINT shortcut's view, as a prepared set takes it */
    if (point_view(t, s, &P)) {
        sample_point(&P, u, v, rgba, swap);
        return;
    }
    kr_lod_plan qp[4];
    const kr_lod_plan *pp[BLOCK];
    if (nl == 1 && s->min_filter == s->mag_filter) {
        /* one level: level 0 in one pass, and the filter is the same for any
         * lod (plan_quad's result whatever rho2 is, NaN included) */
        if (rgba8 && s->min_filter == KILN_FILTER_LINEAR) {
            rgba8_level(&lv[0], u, v, au, av, swap, rgba);
            return;
        }
#if defined(__SSE2__)
        /* BC on its one level: the plans sample_general would make */
        if (s->min_filter == KILN_FILTER_LINEAR && au != KILN_ADDRESS_BORDER &&
            av != KILN_ADDRESS_BORDER && bc_wide(t->format, s, &lv[0], u, v, bc_one_level, rgba))
            return;
#endif
        for (int q = 0; q < 4; q++) {
            qp[q].filter = s->min_filter;
            qp[q].passes = 1;
            qp[q].level[0] = qp[q].level[1] = 0;
            qp[q].lw[0] = 1.0f;
            qp[q].lw[1] = 0.0f;
        }
        sample_general(t, s, kr_lod_plans(qp, pp), lv, u, v, rgba);
        return;
    }

    plan_block_levels(t, s, nl, subs, u, v, lv, qp);
    int all_linear = 1;
    for (int q = 0; q < 4; q++)
        all_linear &= qp[q].filter == KILN_FILTER_LINEAR;

    if (rgba8 && all_linear) {
        int uniform =
            same_plan(&qp[0], &qp[1]) && same_plan(&qp[0], &qp[2]) && same_plan(&qp[0], &qp[3]);
        if (uniform && qp[0].passes == 1)
            rgba8_level(&lv[qp[0].level[0]], u, v, au, av, swap, rgba);
        else
            rgba8_block(qp, uniform, lv, u, v, au, av, swap, rgba);
        return;
    }
    sample_general(t, s, kr_lod_plans(qp, pp), lv, u, v, rgba);
}

KILN_API void kiln_ps_sample(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                             const float *u, const float *v, float *rgba)
{
    const struct kiln_ps_textures *ts = a ? a->textures : NULL;
    /* (sampler_slot + 1 in 32 bits is 0, a slot never prepared, for
     * UINT32_MAX: hence the bound first) */
    if (ts && srv_slot < KR_PREPARED && sampler_slot < KILN_MAX_SAMPLERS) {
        const int swap = ts->tex[srv_slot].format == KILN_FORMAT_B8G8R8A8_UNORM;
#if KR_EFFECTS_X86
        if (ts->prep_sampler[srv_slot] == sampler_slot + 1) {
            /* the levels set up by kr_textures_prepare for this sampler */
            if (ts->prep_levels[srv_slot] == 1)
                ts->rows(&ts->prep[srv_slot][0], u, v, rgba, swap);
            else
                sample_prepared(ts->samp[sampler_slot], ts->prep_levels[srv_slot],
                                ts->prep[srv_slot], u, v, swap, rgba);
            return;
        }
#endif
        if (ts->point_sampler[srv_slot] == sampler_slot + 1) {
            ts->point_fn[srv_slot](&ts->point[srv_slot], u, v, rgba, swap);
            return;
        }
    }
    sample_block(a, srv_slot, sampler_slot, u, v, rgba);
}

/* ---- SampleLevel, SampleBias, SampleGrad: a LOD per pixel ---- */

/* The view in srv_slot and the sampler in sampler_slot (the default one
 * when empty), or NULL, with rgba zeroed, when the slot reads zeros
 * (empty, or a format that cannot be sampled). */
static const kr_texture *bound(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                               const kd_sampler **s, float *rgba)
{
    const kr_texture *t = NULL;
    if (a && a->textures && srv_slot < KILN_MAX_SHADER_RESOURCES)
        t = &a->textures->tex[srv_slot];
    if (!t || !t->data || !t->subs || t->num_mips == 0 || !format_sampleable(t->format) ||
        !kres_format(t->format)) {
        memset(rgba, 0, sizeof(float) * 4 * BLOCK);
        return NULL;
    }
    *s = sampler_slot < KILN_MAX_SAMPLERS ? a->textures->samp[sampler_slot] : NULL;
    if (!*s)
        *s = &default_sampler;
    return t;
}

/* Mip `mip` of the view (0: its first) in its slice. */
static inline const kres_subresource *view_level(const kr_texture *t, uint32_t mip)
{
    return &t->subs[t->first_mip + mip + t->slice * t->res_mip_levels];
}

/* Samples with pixel i's LOD lod[i] (biases added, not clamped): each
 * pixel planned on its own (plan_lod, as Sample's quads are), then the
 * general path, which gives the RGBA8 kernel's bits; when all 16 plans
 * agree on LINEAR over RGBA8/BGRA8 without BORDER, the kernel itself. */
static void sample_lods(const kr_texture *t, const kd_sampler *s, const float *u, const float *v,
                        const float *lod, float *rgba)
{
    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    const kres_subresource *subs = view_level(t, 0);
    kr_lod_plan pl[BLOCK];
    const kr_lod_plan *pp[BLOCK];
    uint32_t top = 0;
    int same = 1;
    for (int i = 0; i < BLOCK; i++) {
        plan_lod(s, nl, lod[i], &pl[i]);
        pp[i] = &pl[i];
        top = pl[i].level[1] > top ? pl[i].level[1] : top;
        same &= same_plan(&pl[i], &pl[0]);
    }
    level lv[MAX_LEVELS];
    for (uint32_t l = 0; l <= top; l++)
        set_level(&lv[l], t->data, &subs[l]);
    kiln_address au = s->address_u, av = s->address_v;
    if (same && pl[0].filter == KILN_FILTER_LINEAR && au != KILN_ADDRESS_BORDER &&
        av != KILN_ADDRESS_BORDER &&
        (t->format == KILN_FORMAT_R8G8B8A8_UNORM || t->format == KILN_FORMAT_B8G8R8A8_UNORM)) {
        int swap = t->format == KILN_FORMAT_B8G8R8A8_UNORM;
        if (pl[0].passes == 1) {
            rgba8_level(&lv[pl[0].level[0]], u, v, au, av, swap, rgba);
        } else {
            const kr_lod_plan qp[4] = {pl[0], pl[0], pl[0], pl[0]};
            rgba8_block(qp, 1, lv, u, v, au, av, swap, rgba);
        }
        return;
    }
    sample_general(t, s, pp, lv, u, v, rgba);
}

KILN_API void kiln_ps_sample_level(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                   const float *u, const float *v, const float *lod, float *rgba)
{
    const kd_sampler *s;
    const kr_texture *t = bound(a, srv_slot, sampler_slot, &s, rgba);
    if (!t)
        return;
    if (kr_kind_view(t)) {
        kiln_ps_sample_uvw_level(a, srv_slot, sampler_slot, u, v, NULL, lod, rgba);
        return;
    }
    /* D3D10's sample_l: the sampler's MipLODBias and LOD clamps apply */
    float l[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        l[i] = lod[i] + s->mip_lod_bias;
    sample_lods(t, s, u, v, l, rgba);
}

KILN_API void kiln_ps_sample_bias(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                  const float *u, const float *v, const float *bias, float *rgba)
{
    const kd_sampler *s;
    const kr_texture *t = bound(a, srv_slot, sampler_slot, &s, rgba);
    if (!t)
        return;
    if (kr_kind_view(t)) {
        kiln_ps_sample_uvw_bias(a, srv_slot, sampler_slot, u, v, NULL, bias, rgba);
        return;
    }
    /* Sample's LOD per quad (the same operations, so a bias of 0 gives
     * Sample's plans), then each pixel's bias, limited to D3D10's
     * [-16, 15.99] (NaN: 0) */
    const kres_subresource *l0 = view_level(t, 0);
    float rho2[4];
    quad_rho2(u, v, (float)l0->width, (float)l0->height, rho2);
    float l[BLOCK];
    aniso an;
    int any = 0;
    for (int q = 0; q < 4; q++) {
        float base = 0.5f * kr_log2f(rho2[q]) + s->mip_lod_bias;
        int i0 = quad_px[q][0];
        for (int j = 0; j < 4; j++) {
            int i = quad_px[q][j];
            float b = bias[i] >= -16.0f ? bias[i] : bias[i] < -16.0f ? -16.0f : 0.0f;
            b = b <= 15.99f ? b : 15.99f;
            l[i] = base + b;
            if (s->max_aniso > 1) {
                any |= aniso_pixel(s, (float)l0->width, (float)l0->height, u[i0 + 1] - u[i0],
                                   v[i0 + 1] - v[i0], u[i0 + 4] - u[i0], v[i0 + 4] - v[i0], &an, i);
                l[i] += an.lod_adj[i];
            }
        }
    }
    if (any)
        sample_aniso(t, s, u, v, &an, l, rgba);
    else
        sample_lods(t, s, u, v, l, rgba);
}

KILN_API void kiln_ps_sample_grad(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                  const float *u, const float *v, const float *dudx,
                                  const float *dvdx, const float *dudy, const float *dvdy,
                                  float *rgba)
{
    const kd_sampler *s;
    const kr_texture *t = bound(a, srv_slot, sampler_slot, &s, rgba);
    if (!t)
        return;
    if (kr_kind_view(t)) {
        float ddx[3 * BLOCK] = {0}, ddy[3 * BLOCK] = {0};
        memcpy(ddx, dudx, sizeof(float) * BLOCK);
        memcpy(ddx + BLOCK, dvdx, sizeof(float) * BLOCK);
        memcpy(ddy, dudy, sizeof(float) * BLOCK);
        memcpy(ddy + BLOCK, dvdy, sizeof(float) * BLOCK);
        kiln_ps_sample_uvw_grad(a, srv_slot, sampler_slot, u, v, NULL, ddx, ddy, rgba);
        return;
    }
    /* Sample's LOD formula on the given derivatives, per pixel: passing a
     * quad's own differences gives Sample's result */
    const kres_subresource *l0 = view_level(t, 0);
    float fw = (float)l0->width, fh = (float)l0->height, l[BLOCK];
    aniso an;
    int any = 0;
    for (int i = 0; i < BLOCK; i++) {
        float ux = dudx[i] * fw, vx = dvdx[i] * fh, uy = dudy[i] * fw, vy = dvdy[i] * fh;
        float lx = ux * ux + vx * vx, ly = uy * uy + vy * vy;
        float rho2 = lx > ly ? lx : ly;
        l[i] = 0.5f * kr_log2f(rho2) + s->mip_lod_bias;
        if (s->max_aniso > 1) {
            any |= aniso_pixel(s, fw, fh, dudx[i], dvdx[i], dudy[i], dvdy[i], &an, i);
            l[i] += an.lod_adj[i];
        }
    }
    if (any)
        sample_aniso(t, s, u, v, &an, l, rgba);
    else
        sample_lods(t, s, u, v, l, rgba);
}

/* ---- SampleCmp: percentage-closer filtering ---- */

static inline int cmp_pass(kiln_compare f, float ref, float texel)
{
    switch (f) {
    case KILN_COMPARE_NEVER: return 0;
    case KILN_COMPARE_LESS: return ref < texel;
    case KILN_COMPARE_EQUAL: return ref == texel;
    case KILN_COMPARE_LESS_EQUAL: return ref <= texel;
    case KILN_COMPARE_GREATER: return ref > texel;
    case KILN_COMPARE_NOT_EQUAL: return ref != texel;
    case KILN_COMPARE_GREATER_EQUAL: return ref >= texel;
    default: return 1; /* ALWAYS */
    }
}

/* Each pixel's taps (gather) read as 1 or 0 by the comparison with its
 * reference, weighted as read_f32 weights texels; border reads compare
 * the border's red. */
static void sample_cmp_taps(const kr_texture *t, const kd_sampler *s, const kr_lod_plan *const *pp,
                            const level *lv, const float *u, const float *v, const float *ref,
                            float *out)
{
    taps tp;
    tp.bc = kres_format_bc(t->format);
    gather(&tp, pp, lv, u, v, s->address_u, s->address_v, kres_format(t->format)->size);
    int unorm = kres_format_unorm(t->format) || t->format == KILN_FORMAT_D16_UNORM;
    for (int i = 0; i < BLOCK; i++) {
        float r = ref[i];
        if (unorm) /* D3D10 clamps the reference to a UNORM format's range */
            r = r > 0.0f ? (r < 1.0f ? r : 1.0f) : r < 0.0f ? 0.0f : r;
        float acc = 0.0f;
        for (uint32_t pass = 0; pass < tp.passes[i]; pass++) {
            float ls = 0.0f;
            for (uint32_t k = 0; k < tp.n[i][pass]; k++) {
                float texel[4];
                if (tp.bc)
                    kres_decode_bc(t->format, tp.p[i][pass][k], tp.bi[i][pass][k], texel);
                else
                    decode_texel(t->format, tp.p[i][pass][k], texel);
                ls += tp.w[i][pass][k] * (float)cmp_pass(s->cmp, r, texel[0]);
            }
            acc += tp.lw[i][pass] * ls;
        }
        if (tp.bw[i] != 0.0f) {
            float border[4];
            border_for(t->format, s->border, border);
            acc += tp.bw[i] * (float)cmp_pass(s->cmp, r, border[0]);
        }
        out[i] = acc;
    }
}

/* The comparison sampler's view, or NULL (out zeroed) when the slot or
 * the sampler does not compare. */
static const kr_texture *bound_cmp(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                   const kd_sampler **s, float *out)
{
    float rgba[4 * BLOCK];
    const kr_texture *t = bound(a, srv_slot, sampler_slot, s, rgba);
    if (!t || (*s)->cmp == KILN_COMPARE_DEFAULT) {
        memset(out, 0, sizeof(float) * BLOCK);
        return NULL;
    }
    return t;
}

KILN_API void kiln_ps_sample_cmp(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                                 const float *u, const float *v, const float *ref, float *out)
{
    const kd_sampler *s;
    const kr_texture *t = bound_cmp(a, srv_slot, sampler_slot, &s, out);
    if (!t)
        return;
    if (kr_kind_view(t)) {
        kiln_ps_sample_cmp_uvw(a, srv_slot, sampler_slot, u, v, NULL, ref, out);
        return;
    }
    /* kiln_ps_sample's plans: the LOD per quad */
    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    const kres_subresource *subs = view_level(t, 0);
    level lv[MAX_LEVELS];
    set_level(&lv[0], t->data, &subs[0]);
    kr_lod_plan qp[4];
    const kr_lod_plan *pp[BLOCK];
    plan_block_levels(t, s, nl, subs, u, v, lv, qp);
    sample_cmp_taps(t, s, kr_lod_plans(qp, pp), lv, u, v, ref, out);
}

KILN_API void kiln_ps_sample_cmp_level_zero(const kiln_ps_args *a, uint32_t srv_slot,
                                            uint32_t sampler_slot, const float *u, const float *v,
                                            const float *ref, float *out)
{
    const kd_sampler *s;
    const kr_texture *t = bound_cmp(a, srv_slot, sampler_slot, &s, out);
    if (!t)
        return;
    if (kr_kind_view(t)) {
        kiln_ps_sample_cmp_uvw_level_zero(a, srv_slot, sampler_slot, u, v, NULL, ref, out);
        return;
    }
    level lv[1];
    set_level(&lv[0], t->data, view_level(t, 0));
    const kr_lod_plan p0 = {s->mag_filter, 1, {0, 0}, {1.0f, 0.0f}};
    const kr_lod_plan *pp[BLOCK];
    for (int i = 0; i < BLOCK; i++)
        pp[i] = &p0;
    sample_cmp_taps(t, s, pp, lv, u, v, ref, out);
}

/* ---- Load and GetDimensions ---- */

KILN_API void kiln_ps_load(const kiln_ps_args *a, uint32_t srv_slot, const int32_t *x,
                           const int32_t *y, const int32_t *mip, float *rgba)
{
    const kr_texture *t = NULL;
    if (a && a->textures && srv_slot < KILN_MAX_SHADER_RESOURCES)
        t = &a->textures->tex[srv_slot];
    if (t && kr_kind_view(t)) {
        kiln_ps_load_uvw(a, srv_slot, x, y, NULL, mip, rgba);
        return;
    }
    for (int i = 0; i < BLOCK; i++) {
        float px[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        /* D3D10's ld: any coordinate or level out of range reads 0 */
        if (t && t->data && t->subs && mip[i] >= 0 && (uint32_t)mip[i] < t->num_mips) {
            const kres_subresource *sub = view_level(t, (uint32_t)mip[i]);
            if (x[i] >= 0 && y[i] >= 0 && (uint32_t)x[i] < sub->width &&
                (uint32_t)y[i] < sub->height)
                kr_texel_fetch(t, t->first_mip + (uint32_t)mip[i], (uint32_t)x[i], (uint32_t)y[i], px);
        }
        for (int c = 0; c < 4; c++)
            rgba[c * BLOCK + i] = px[c];
    }
}

KILN_API void kiln_ps_get_dimensions(const kiln_ps_args *a, uint32_t srv_slot, uint32_t mip,
                                     uint32_t *width, uint32_t *height, uint32_t *levels)
{
    const kr_texture *t = NULL;
    if (a && a->textures && srv_slot < KILN_MAX_SHADER_RESOURCES)
        t = &a->textures->tex[srv_slot];
    if (t && kr_kind_view(t)) {
        kiln_ps_get_dimensions_uvw(a, srv_slot, mip, width, height, NULL, levels);
        return;
    }
    uint32_t w = 0, h = 0, n = 0;
    if (t && t->data && t->subs) {
        n = t->num_mips;
        if (mip < n) {
            const kres_subresource *sub = view_level(t, mip);
            w = sub->width;
            h = sub->height;
        }
    }
    if (width)
        *width = w;
    if (height)
        *height = h;
    if (levels)
        *levels = n;
}

/* ---- the vertex and geometry stages: SampleLevel, Load, GetDimensions ---- */

/* A vertex shader's reads are the pixel stage's calls on blocks of 16
 * values, through args that carry the vertex stage's views and samplers.
 * Each value is read on its own there (a plan per pixel, no derivatives),
 * so padding a last partial block with copies of its last value changes
 * nothing. */
static kiln_ps_args block_args(const struct kiln_ps_textures *textures)
{
    kiln_ps_args pa;
    memset(&pa, 0, sizeof pa);
    pa.mask = 0xffffu;
    pa.textures = textures;
    return pa;
}

static void stage_sample_level(const struct kiln_ps_textures *tx, uint32_t srv_slot, uint32_t sampler_slot,
                               uint32_t n, const float *u, const float *v, const float *lod, float *rgba)
{
    kiln_ps_args pa = block_args(tx);
    for (uint32_t i0 = 0; i0 < n; i0 += BLOCK) {
        uint32_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        float bu[BLOCK], bv[BLOCK], bl[BLOCK], out[4 * BLOCK];
        for (uint32_t i = 0; i < BLOCK; i++) {
            uint32_t k = i0 + (i < m ? i : m - 1);
            bu[i] = u[k];
            bv[i] = v[k];
            bl[i] = lod[k];
        }
        kiln_ps_sample_level(&pa, srv_slot, sampler_slot, bu, bv, bl, out);
        for (int c = 0; c < 4; c++)
            memcpy(rgba + (size_t)c * n + i0, out + c * BLOCK, sizeof(float) * m);
    }
}

static void stage_load(const struct kiln_ps_textures *tx, uint32_t srv_slot, uint32_t n, const int32_t *x,
                       const int32_t *y, const int32_t *mip, float *rgba)
{
    kiln_ps_args pa = block_args(tx);
    for (uint32_t i0 = 0; i0 < n; i0 += BLOCK) {
        uint32_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
        int32_t bx[BLOCK], by[BLOCK], bm[BLOCK];
        float out[4 * BLOCK];
        for (uint32_t i = 0; i < BLOCK; i++) {
            uint32_t k = i0 + (i < m ? i : m - 1);
            bx[i] = x[k];
            by[i] = y[k];
            bm[i] = mip[k];
        }
        kiln_ps_load(&pa, srv_slot, bx, by, bm, out);
        for (int c = 0; c < 4; c++)
            memcpy(rgba + (size_t)c * n + i0, out + c * BLOCK, sizeof(float) * m);
    }
}

KILN_API void kiln_vs_sample_level(const kiln_vs_args *a, uint32_t srv_slot, uint32_t sampler_slot, uint32_t n,
                                   const float *u, const float *v, const float *lod, float *rgba)
{
    stage_sample_level(a ? a->textures : NULL, srv_slot, sampler_slot, n, u, v, lod, rgba);
}

KILN_API void kiln_vs_load(const kiln_vs_args *a, uint32_t srv_slot, uint32_t n, const int32_t *x, const int32_t *y,
                           const int32_t *mip, float *rgba)
{
    stage_load(a ? a->textures : NULL, srv_slot, n, x, y, mip, rgba);
}

KILN_API void kiln_vs_get_dimensions(const kiln_vs_args *a, uint32_t srv_slot, uint32_t mip, uint32_t *width,
                                     uint32_t *height, uint32_t *levels)
{
    kiln_ps_args pa = block_args(a ? a->textures : NULL);
    kiln_ps_get_dimensions(&pa, srv_slot, mip, width, height, levels);
}

KILN_API void kiln_gs_sample_level(const kiln_gs_args *a, uint32_t srv_slot, uint32_t sampler_slot, uint32_t n,
                                   const float *u, const float *v, const float *lod, float *rgba)
{
    stage_sample_level(a ? a->textures : NULL, srv_slot, sampler_slot, n, u, v, lod, rgba);
}

KILN_API void kiln_gs_load(const kiln_gs_args *a, uint32_t srv_slot, uint32_t n, const int32_t *x, const int32_t *y,
                           const int32_t *mip, float *rgba)
{
    stage_load(a ? a->textures : NULL, srv_slot, n, x, y, mip, rgba);
}

KILN_API void kiln_gs_get_dimensions(const kiln_gs_args *a, uint32_t srv_slot, uint32_t mip, uint32_t *width,
                                     uint32_t *height, uint32_t *levels)
{
    kiln_ps_args pa = block_args(a ? a->textures : NULL);
    kiln_ps_get_dimensions(&pa, srv_slot, mip, width, height, levels);
}

/* ---- generate_mips ---- */

/* One mip from the one above: dst (x, y) averages source texels 2x, 2x+1
 * by 2y, 2y+1, where a second index past the edge takes the edge texel
 * again (an axis of 1 texel). 8-bit UNORM averages in integers with
 * rounding, floats in float. */
static void downsample(kiln_format f, const kres_format_info *fi, const uint8_t *src,
                       const kres_subresource *ss, uint8_t *dst, const kres_subresource *ds)
{
    uint32_t bpp = fi->size;
    for (uint32_t y = 0; y < ds->height; y++) {
        uint32_t y0 = 2 * y, y1 = 2 * y + 1 < ss->height ? 2 * y + 1 : ss->height - 1;
        const uint8_t *r0 = src + (size_t)y0 * ss->row_pitch;
        const uint8_t *r1 = src + (size_t)y1 * ss->row_pitch;
        uint8_t *o = dst + (size_t)y * ds->row_pitch;
        for (uint32_t x = 0; x < ds->width; x++) {
            size_t x0 = (size_t)2 * x * bpp;
            size_t x1 = (2 * x + 1 < ss->width ? 2 * x + 1 : ss->width - 1) * (size_t)bpp;
            uint8_t *d = o + (size_t)x * bpp;
            if (kres_texel_generic(f)) { /* decoded (sRGB: averaged linear) */
                float t[4][4], m[4];
                kres_decode_texel(f, r0 + x0, t[0]);
                kres_decode_texel(f, r0 + x1, t[1]);
                kres_decode_texel(f, r1 + x0, t[2]);
                kres_decode_texel(f, r1 + x1, t[3]);
                for (int c = 0; c < 4; c++)
                    m[c] = (t[0][c] + t[1][c] + t[2][c] + t[3][c]) * 0.25f;
                kres_encode_texel(f, m, d, 15u);
            } else if (fi->is_unorm8) {
                for (uint32_t b = 0; b < bpp; b++)
                    d[b] = (uint8_t)((r0[x0 + b] + r0[x1 + b] + r1[x0 + b] + r1[x1 + b] + 2) / 4);
            } else {
                for (uint32_t b = 0; b < bpp; b += 4) {
                    float m = (load_f32(r0 + x0 + b) + load_f32(r0 + x1 + b) +
                               load_f32(r1 + x0 + b) + load_f32(r1 + x1 + b)) *
                              0.25f;
                    memcpy(d + b, &m, sizeof m);
                }
            }
        }
    }
}

void kr_generate_mips(kres_resource *res, kres_storage *st, uint32_t first_mip, uint32_t num_mips,
                      uint32_t first_slice, uint32_t num_slices)
{
    const kres_format_info *fi = kres_format(res->format);
    if (!fi || fi->is_depth || fi->block > 1 || !format_sampleable(res->format))
        return;
    if (res->dim == KRES_DIM_3D) { /* sample_kinds.c */
        kr_generate_mips_3d(res, st, first_mip, num_mips);
        return;
    }
    for (uint32_t slice = first_slice; slice < first_slice + num_slices; slice++) {
        for (uint32_t m = first_mip + 1; m < first_mip + num_mips; m++) {
            const kres_subresource *ss = &res->subs[m - 1 + slice * res->mip_levels];
            const kres_subresource *ds = &res->subs[m + slice * res->mip_levels];
            downsample(res->format, fi, st->data + ss->offset, ss, st->data + ds->offset, ds);
        }
    }
}

/* ---- the fused path of KILN_EFFECT_TEXTURE ----
 *
 * The built-in texture effect writes the sample of slot 0 as its color.
 * Drawn into an RGBA8/BGRA8 target with no blending, every channel
 * written, no depth or stencil work, and a bilinear RGBA8/BGRA8 texture,
 * the general path computes per pixel
 *   byte = (int)(clamp(S / (255 * 65536)) * 255 + 0.5)
 * from the kernel's integer sum S in [0, 255 * 65536]. That equals
 * (S + 32768) >> 16 for every such S (checked exhaustively by
 * test_raster_fused), so this path computes u and v with shade_block's
 * operations, the sums with the same kernel, and the bytes in integers,
 * with no float colors, no per-pixel divide and no conversion pass. Where
 * the quads of a block would not all read one level bilinearly (mip
 * blends, point filtering at some LOD), it returns false and the general
 * path shades the block. With the AVX2 level, a view of one level read
 * directly goes through fused_avx2.c, u and v included. */

#if defined(__SSE2__)

_Static_assert(sizeof(kr_fused_draw) <= sizeof(((kr_drawx *)0)->block_data), "block_data too small");

/* u and v (varying 0, components 0 and 1) of the block's 16 pixels, as
 * shade_block computes them, lane by lane. */
static inline void block_uv(const kr_prim *p, int x, int y, float *u, float *v)
{
    const __m128 half = _mm_set1_ps(0.5f);
    const __m128 fx = _mm_sub_ps(
        _mm_add_ps(_mm_cvtepi32_ps(_mm_add_epi32(_mm_set1_epi32(x), _mm_set_epi32(3, 2, 1, 0))),
                   half),
        _mm_set1_ps(p->ox));
    const float q0 = p->q[0], q1 = p->q[1], q2 = p->q[2];
    const int affine = q1 == 0.0f && q2 == 0.0f;
    const __m128 w0 = _mm_set1_ps(1.0f / q0);
    /* f0 + f1 * fx depends on the column only: once per block */
    const __m128 qx = _mm_add_ps(_mm_set1_ps(q0), _mm_mul_ps(_mm_set1_ps(q1), fx));
    const __m128 ux = _mm_add_ps(_mm_set1_ps(p->attr[0]), _mm_mul_ps(_mm_set1_ps(p->attr[1]), fx));
    const __m128 vx = _mm_add_ps(_mm_set1_ps(p->attr[3]), _mm_mul_ps(_mm_set1_ps(p->attr[4]), fx));
    const __m128 u2 = _mm_set1_ps(p->attr[2]), v2 = _mm_set1_ps(p->attr[5]), qy = _mm_set1_ps(q2);
    for (int row = 0; row < 4; row++) {
        __m128 fy = _mm_set1_ps((float)(y + row) + 0.5f - p->oy);
        __m128 w = affine ? w0 : _mm_div_ps(_mm_set1_ps(1.0f), _mm_add_ps(qx, _mm_mul_ps(qy, fy)));
        _mm_store_ps(u + 4 * row, _mm_mul_ps(_mm_add_ps(ux, _mm_mul_ps(u2, fy)), w));
        _mm_store_ps(v + 4 * row, _mm_mul_ps(_mm_add_ps(vx, _mm_mul_ps(v2, fy)), w));
    }
}

/* Four pixels' sums to packed bytes ((S + 32768) >> 16 per byte), bytes 0
 * and 2 exchanged when swap. */
static inline __m128i pack_sums(const __m128i sum[4], int swap)
{
    const __m128i round = _mm_set1_epi32(32768), bias = _mm_set1_epi32(32768);
    __m128i e01 = _mm_srli_epi32(_mm_add_epi32(sum[0], round), 16);
    __m128i e23 = _mm_srli_epi32(_mm_add_epi32(sum[1], round), 16);
    __m128i o01 = _mm_srli_epi32(_mm_add_epi32(sum[2], round), 16);
    __m128i o23 = _mm_srli_epi32(_mm_add_epi32(sum[3], round), 16);
    if (swap) {
        e01 = _mm_shuffle_epi32(e01, _MM_SHUFFLE(2, 3, 0, 1));
        e23 = _mm_shuffle_epi32(e23, _MM_SHUFFLE(2, 3, 0, 1));
    }
    /* [b0 | b1 << 8, b2 | b3 << 8] per pixel, then the 16-bit halves
     * packed (biased for the signed saturation, which never clips) */
    __m128i w01 = _mm_or_si128(e01, _mm_slli_epi32(o01, 8));
    __m128i w23 = _mm_or_si128(e23, _mm_slli_epi32(o23, 8));
    __m128i px = _mm_packs_epi32(_mm_sub_epi32(w01, bias), _mm_sub_epi32(w23, bias));
    return _mm_xor_si128(px, _mm_set1_epi16(-32768));
}

KR_INLINE void fused_rows(const lvk *k, const float *u, const float *v, kiln_address au,
                          kiln_address av, int clamp2, int swap, uint8_t *dst, size_t pitch,
                          uint32_t mask)
{
    for (int row = 0; row < 4; row++, dst += pitch) {
        uint32_t m = mask >> (4 * row) & 15u;
        if (!m)
            continue;
        __m128i sum[4];
        rgba8_4px_sums(k, _mm_load_ps(u + 4 * row), _mm_load_ps(v + 4 * row), au, av, clamp2,
                       sum);
        uint32_t px[4];
        _mm_storeu_si128((__m128i *)(void *)px, pack_sums(sum, swap));
        kr_store_row4(dst, px, m);
    }
}

/* The level a direct AVX2 read takes (lvk_init's values, plain). */
static void fused_level_init(kr_fused_level *f, const level *L, kiln_address au, kiln_address av)
{
    int wu = au == KILN_ADDRESS_WRAP, wv = av == KILN_ADDRESS_WRAP;
    *f = (kr_fused_level){
        .base = L->base, .pitch = L->pitch, .fw = L->fw, .fh = L->fh,
        .mx = wu ? L->w - 1 : -1, .my = wv ? L->h - 1 : -1,
        .hx = (int16_t)(wu ? L->w - 1 : L->w - 2), .hy = (int16_t)(wv ? L->h - 1 : L->h - 2),
        .sx = (int16_t)(wu ? L->w - 1 : -1), .sy = (int16_t)(wv ? L->h - 1 : -1),
        .lx = L->w - 1, .ly = L->h - 1,
        .clamp2 = !wu && !wv, .direct = level_direct(L, au, av) != 0,
    };
    f->hxy = (uint32_t)(uint16_t)f->hx | (uint32_t)(uint16_t)f->hy << 16;
    f->sxy = (uint32_t)(uint16_t)f->sx | (uint32_t)(uint16_t)f->sy << 16;
    f->mul = (uint32_t)L->pitch << 16 | 4u;
}

bool kr_fused_block_sse2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_draw *fd = (const kr_fused_draw *)(const void *)p->dx->block_data;
    size_t pitch = fb->rt_pitch[0];
    uint8_t *dst = fb->rt[0] + (size_t)y * pitch + (size_t)x * 4;
    const kr_texture *t = fd->t;
    const kd_sampler *s = fd->s;
    _Alignas(16) float u[BLOCK], v[BLOCK];
    block_uv(p, x, y, u, v);
    level L;
    set_level(&L, t->data, &fd->subs[0]);
    if (fd->nl > 1) { /* kiln_ps_sample's planning; one bilinear level for all quads or no */
        kr_lod_plan qp[4];
        plan_block(s, fd->nl, u, v, L.fw, L.fh, qp);
        for (int q = 0; q < 4; q++) {
            if (qp[q].filter != KILN_FILTER_LINEAR || qp[q].passes != 1 ||
                (q && !same_plan(&qp[0], &qp[q])))
                return false;
        }
        if (qp[0].level[0])
            set_level(&L, t->data, &fd->subs[qp[0].level[0]]);
    }
    kiln_address au = s->address_u, av = s->address_v;
    lvk k;
    lvk_init(&k, &L, au, av);
    if (k.direct && au == KILN_ADDRESS_CLAMP && av == KILN_ADDRESS_CLAMP)
        fused_rows(&k, u, v, au, av, 1, fd->swap, dst, pitch, mask);
    else
        fused_rows(&k, u, v, au, av, 0, fd->swap, dst, pitch, mask);
    return true;
}

static int is_rgba8(kiln_format f)
{
    return f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM;
}

kr_block_fn kr_block_select(kr_drawx *dx, const kr_fb *fb)
{
    const kd_state *s = dx->s;
    if (s->ps != kr_ps_texture || s->ps_outputs != 1 || dx->nvary < 1 || !dx->tex)
        return NULL;
    const kr_texture *t = &dx->tex->tex[0];
    const kd_sampler *sm = dx->tex->samp[0] ? dx->tex->samp[0] : &default_sampler;
    if (fb->nrt < 1 || !fb->rt[0] || !is_rgba8(fb->rt_format[0]) || s->blend[0].enable ||
        s->blend[0].write_mask != 15u)
        return NULL;
    if (fb->ds && (s->depth_enable || s->stencil_enable))
        return NULL;
    if (!t->data || !t->subs || t->num_mips == 0 || !is_rgba8(t->format) || kr_kind_view(t))
        return NULL;
    if (sm->min_filter != KILN_FILTER_LINEAR || sm->mag_filter != KILN_FILTER_LINEAR ||
        sm->address_u == KILN_ADDRESS_BORDER || sm->address_v == KILN_ADDRESS_BORDER)
        return NULL;
    kr_fused_draw *fd = (kr_fused_draw *)(void *)dx->block_data;
    memset(fd, 0, sizeof *fd);
    fd->t = t;
    fd->s = sm;
    fd->subs = &t->subs[t->first_mip + t->slice * t->res_mip_levels];
    fd->nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    fd->swap = (t->format == KILN_FORMAT_B8G8R8A8_UNORM) !=
               (fb->rt_format[0] == KILN_FORMAT_B8G8R8A8_UNORM);
#if KR_EFFECTS_X86
    if (fd->nl == 1 && dx->wide) {
        level L;
        set_level(&L, t->data, &fd->subs[0]);
        lvk k;
        lvk_init(&k, &L, sm->address_u, sm->address_v);
        if (k.direct) {
            fused_level_init(&fd->L0, &L, sm->address_u, sm->address_v);
            return dx->wide16 ? kr_fused_block_avx512 : kr_fused_block_avx2;
        }
    }
#endif
    return kr_fused_block_sse2;
}

/* Whether view t under sampler s is what the prepared shortcut takes
 * (kiln_ps_textures.prep): quick_level's conditions but for any number
 * of levels, each one the AVX2 kernels read; then sets them up in chain
 * and returns how many (0: not taken). */
static uint32_t prepare_chain(const kr_texture *t, const kd_sampler *s, kr_fused_level *chain)
{
    if (!t->data || !t->subs || t->num_mips == 0 || kr_kind_view(t) ||
        (t->format != KILN_FORMAT_R8G8B8A8_UNORM && t->format != KILN_FORMAT_B8G8R8A8_UNORM))
        return 0;
    if (!s || s->min_filter != KILN_FILTER_LINEAR || s->mag_filter != KILN_FILTER_LINEAR || s->max_aniso > 1 ||
        s->address_u == KILN_ADDRESS_BORDER || s->address_v == KILN_ADDRESS_BORDER)
        return 0;
    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    const kres_subresource *subs = &t->subs[t->first_mip + t->slice * t->res_mip_levels];
    for (uint32_t l = 0; l < nl; l++) {
        level L;
        set_level(&L, t->data, &subs[l]);
        if (!level_avx2(&L, s->address_u, s->address_v))
            return 0;
        fused_level_init(&chain[l], &L, s->address_u, s->address_v);
    }
    return nl;
}

void kr_textures_prepare(struct kiln_ps_textures *t)
{
    memset(t->prep_sampler, 0, sizeof t->prep_sampler);
    prepare_points(t);
    kr_simd simd = kr_effects_active_level();
    if (simd < KR_SIMD_AVX2)
        return;
    t->rows = simd >= KR_SIMD_AVX512 ? kr_sample_rows_rgba_avx512 : kr_sample_rows_rgba_avx2;
    for (uint32_t i = 0; i < KR_PREPARED; i++) {
        /* the sampler of the same slot, else slot 0's */
        for (uint32_t j = i;; j = 0) {
            uint32_t nl = prepare_chain(&t->tex[i], t->samp[j], t->prep[i]);
            if (nl) {
                t->prep_sampler[i] = (uint8_t)(j + 1);
                t->prep_levels[i] = (uint8_t)nl;
                break;
            }
            if (j == 0)
                break;
        }
    }
}

_Static_assert(KR_PREPARED <= KILN_MAX_SAMPLERS && KR_PREPARED <= KILN_MAX_SHADER_RESOURCES,
               "prepared slots are both a view's and a sampler's");
_Static_assert(KR_PREP_LEVELS == MAX_LEVELS, "a prepared chain holds every level a view samples");
_Static_assert(sizeof(kr_fused_shade) <= sizeof(((kr_drawx *)0)->shade_data), "shade_data too small");

/* kr_fused_shade (in dx->shade_data): kiln_ps_sample's shortcut for slot
 * 0 and sampler 0, as the draw's views prepared it (kr_textures_prepare),
 * for the shading of the effects that sample. */
static void shade_data_init(kr_drawx *dx)
{
    kr_fused_shade *sd = (kr_fused_shade *)(void *)dx->shade_data;
    memset(sd, 0, sizeof *sd);
    if (dx->tex && dx->tex->prep_sampler[0] == 1 && dx->tex->prep_levels[0] == 1) {
        sd->L = dx->tex->prep[0][0];
        sd->one = 1;
        sd->swap = dx->tex->tex[0].format == KILN_FORMAT_B8G8R8A8_UNORM;
    }
}

kr_shade_fn kr_shade_select(kr_drawx *dx, const kr_fb *fb)
{
    const kd_state *s = dx->s;
    /* The vertex color, lit and texture color effects with no discard
     * and one output, written by one call or none (kr_output_select),
     * every component they read interpolated (a desc may declare more
     * varyings) */
    if (dx->wide && dx->early_z && s->ps_outputs == 1 && dx->out1 != 0) {
        if (kr_effect_ps_is(s->ps, KILN_EFFECT_VERTEX_COLOR) && dx->nvary >= 1 &&
            (dx->vmask & 0xFu) == 0xFu)
            return kr_shade_color_avx2;
        if (kr_effect_ps_is(s->ps, KILN_EFFECT_LIT) && dx->nvary >= 2 &&
            (dx->vmask & 0x7Fu) == 0x7Fu)
            return kr_shade_lit_avx2;
        if (kr_effect_ps_is(s->ps, KILN_EFFECT_TEXTURE_COLOR) && dx->nvary >= 2 &&
            (dx->vmask & 0x3Fu) == 0x3Fu) {
            shade_data_init(dx);
            return kr_fused_shade_tc_avx2;
        }
    }
    /* KILN_EFFECT_TEXTURE's shader (kiln_ps_sample of varying 0's x, y
     * into output 0) with no discard, one output into an 8-bit RGBA /
     * BGRA target 0; blending and write masks as pixel_avx2.c's whole
     * blocks do them; any texture, sampler, depth and stencil state */
    if (!dx->wide || s->ps != kr_ps_texture || s->ps_outputs != 1 || dx->nvary < 1 || !dx->early_z)
        return NULL;
    if (fb->nrt < 1 || !fb->rt[0] || !is_rgba8(fb->rt_format[0]))
        return NULL;
    shade_data_init(dx);
    /* additive or alpha blending of one prepared level: the blend in
     * registers */
    kr_fused_shade *sd = (kr_fused_shade *)(void *)dx->shade_data;
    const kd_blend_rt *bl = &s->blend[0];
    int kind = kr_blend_kind(bl);
    if (sd->one && dx->write8 && (kind == 1 || kind == 2)) {
        bool bgra = fb->rt_format[0] == KILN_FORMAT_B8G8R8A8_UNORM;
        sd->flip = sd->swap != bgra;
        sd->keep = kr_keep_bytes(bl->write_mask, bgra);
        if (dx->wide16) /* a block per vector */
            return kind == 1 ? kr_fused_shade_add_avx512 : kr_fused_shade_alpha_avx512;
        return kind == 1 ? kr_fused_shade_add_avx2 : kr_fused_shade_alpha_avx2;
    }
    return kr_fused_shade_avx2;
}

kr_span_fn kr_span_select(const kr_drawx *dx)
{
    if (dx->direct == kr_fused_shade_add_avx2)
        return kr_fused_span_add_avx2;
    if (dx->direct == kr_fused_shade_alpha_avx2)
        return kr_fused_span_alpha_avx2;
    if (dx->direct == kr_fused_shade_add_avx512)
        return kr_fused_span_add_avx512;
    if (dx->direct == kr_fused_shade_alpha_avx512)
        return kr_fused_span_alpha_avx512;
    if (dx->direct == kr_fused_block_avx2)
        return kr_fused_span_block_avx2;
    return NULL;
}

#else

void kr_textures_prepare(struct kiln_ps_textures *t)
{
    memset(t->prep_sampler, 0, sizeof t->prep_sampler); /* no AVX2 kernel here */
    prepare_points(t);
}

kr_block_fn kr_block_select(kr_drawx *dx, const kr_fb *fb)
{
    (void)dx;
    (void)fb;
    return NULL;
}

kr_shade_fn kr_shade_select(kr_drawx *dx, const kr_fb *fb)
{
    (void)dx;
    (void)fb;
    return NULL;
}

kr_span_fn kr_span_select(const kr_drawx *dx)
{
    (void)dx;
    return NULL;
}

#endif

/* ---- shared with sample_kinds.c ---- */

int32_t kr_address(int32_t i, int32_t size, kiln_address mode) { return address(i, size, mode); }
int32_t kr_split_coord(float x, int32_t *frac256) { return split_coord(x, frac256); }
int32_t kr_floor_coord(float x) { return floor_coord(x); }
void kr_decode_texel(kiln_format f, const uint8_t *p, float o[4]) { decode_texel(f, p, o); }
int kr_format_sampleable(kiln_format f) { return format_sampleable(f); }
int kr_compare(kiln_compare f, float ref, float texel) { return cmp_pass(f, ref, texel); }
const kd_sampler *kr_default_sampler(void) { return &default_sampler; }
