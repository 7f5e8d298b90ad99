/*
 * Texture sampling for pixel shaders (kiln_ps_sample), single texel reads,
 * and the box filter of generate_mips.
 *
 * Sampling follows D3D10:
 * - LOD per 2x2 quad from coarse derivatives (top-left pixel to its right
 *   and lower neighbours), scaled by the size of the view's first mip:
 *   lod = log2(max(|d/dx|, |d/dy|)) + bias, clamped to [min_lod, max_lod].
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
 *   border color, which is blended like a texel).
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

#include <math.h>
#include <string.h>

#define BLOCK KILN_PS_BLOCK
#define MAX_LEVELS 16 /* 8192 texels need 14 */
#define COORD_LIMIT                                                                                \
    1073741824.0f /* 2^30: far outside any texture, and                                            \
                     safe to convert to int32 */

static const kr_sampler default_sampler = {
    KILN_FILTER_LINEAR,
    KILN_FILTER_LINEAR,
    KILN_FILTER_LINEAR,
    KILN_ADDRESS_CLAMP,
    KILN_ADDRESS_CLAMP,
    0.0f,
    0.0f,
    1000.0f,
    {0.0f, 0.0f, 0.0f, 0.0f},
};

void kr_sampler_resolve(const kiln_sampler_desc *d, kr_sampler *out)
{
    static const kiln_sampler_desc zero;
    if (!d)
        d = &zero;
    out->min_filter = d->min_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->mag_filter = d->mag_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->mip_filter = d->mip_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->address_u = d->address_u == KILN_ADDRESS_DEFAULT ? KILN_ADDRESS_CLAMP : d->address_u;
    out->address_v = d->address_v == KILN_ADDRESS_DEFAULT ? KILN_ADDRESS_CLAMP : d->address_v;
    out->mip_lod_bias = d->mip_lod_bias;
    if (d->lod_clamp_enable) {
        out->min_lod = d->min_lod;
        out->max_lod = d->max_lod;
    } else {
        out->min_lod = 0.0f;
        out->max_lod = 1000.0f;
    }
    for (int c = 0; c < 4; c++)
        out->border[c] = d->border_color[c];
}

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
    default:
        return 0;
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
        o[3] = 0.0f;
        break;
    }
}

void kr_texel_fetch(const kr_texture *t, uint32_t level, uint32_t x, uint32_t y, float rgba[4])
{
    const kres_format_info *fi = kres_format(t->format);
    if (!t->data || !t->subs || !fi || !format_sampleable(t->format)) {
        rgba[0] = rgba[1] = rgba[2] = rgba[3] = 0.0f;
        return;
    }
    const kres_subresource *s = &t->subs[level + t->slice * t->res_mip_levels];
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
static inline int32_t address(int32_t i, int32_t size, kiln_address mode)
{
    switch (mode) {
    case KILN_ADDRESS_WRAP:
        i %= size;
        return i < 0 ? i + size : i;
    case KILN_ADDRESS_MIRROR: {
        int32_t period = 2 * size;
        i %= period;
        if (i < 0)
            i += period;
        return i >= size ? period - 1 - i : i;
    }
    case KILN_ADDRESS_BORDER:
        return i < 0 || i >= size ? -1 : i;
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

typedef struct quad_plan {
    kiln_filter filter; /* POINT or LINEAR at the chosen level(s) */
    uint32_t passes;    /* 1 or 2 levels */
    uint32_t level[2];  /* relative to the view */
    float lw[2];        /* weight of each level */
} quad_plan;

/* Pixels of quad q (q = qx + 2 * qy) within the block. */
static const uint8_t quad_px[4][4] = {{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}};

static void plan_quad(const kr_sampler *s, const level *L0, uint32_t nl, const float *u,
                      const float *v, int i0, quad_plan *qp)
{
    float dudx = (u[i0 + 1] - u[i0]) * L0->fw, dvdx = (v[i0 + 1] - v[i0]) * L0->fh;
    float dudy = (u[i0 + 4] - u[i0]) * L0->fw, dvdy = (v[i0 + 4] - v[i0]) * L0->fh;
    float lx = dudx * dudx + dvdx * dvdx, ly = dudy * dudy + dvdy * dvdy;
    float rho2 = lx > ly ? lx : ly;
    /* log2(sqrt(rho2)); rho2 == 0 gives -inf, which the clamp catches. */
    float lod = 0.5f * log2f(rho2) + s->mip_lod_bias;
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
    qp->passes = 1;
    qp->lw[0] = 1.0f;
    qp->lw[1] = 0.0f;
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

/* ---- the general path: taps, then one read loop per format ----
 *
 * For each pixel and level pass: up to 4 texels with their filter weights
 * (multiples of 1/65536 summing to 1 with the border reads), and the
 * pass's level weight. A pixel's value is sum over passes of
 * lw * (sum over taps of w * texel) + (border weight) * border. For 8-bit
 * UNORM every inner sum is exact, which is what lets the RGBA8 kernel
 * below reproduce it bit for bit. */

typedef struct taps {
    const uint8_t *p[BLOCK][2][4];
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
    t->p[i][pass][k] = L->base + (size_t)y * L->pitch + (size_t)x * bpp;
    t->w[i][pass][k] = w;
}

static inline void gather_point(taps *t, int i, int pass, const level *L, float u, float v,
                                kiln_address au, kiln_address av, uint32_t bpp)
{
    int32_t x = address(floor_coord(u * L->fw), L->w, au);
    int32_t y = address(floor_coord(v * L->fh), L->h, av);
    add_tap(t, i, pass, L, x, y, bpp, 1.0f);
}

static inline void gather_linear(taps *t, int i, int pass, const level *L, float u, float v,
                                 kiln_address au, kiln_address av, uint32_t bpp)
{
    int32_t ax, ay;
    int32_t x0 = split_coord(u * L->fw - 0.5f, &ax);
    int32_t y0 = split_coord(v * L->fh - 0.5f, &ay);
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

static void gather(taps *t, const quad_plan *qp, const level *lv, const float *u, const float *v,
                   kiln_address au, kiln_address av, uint32_t bpp)
{
    for (int q = 0; q < 4; q++) {
        const quad_plan *p = &qp[q];
        for (int j = 0; j < 4; j++) {
            int i = quad_px[q][j];
            t->passes[i] = (uint8_t)p->passes;
            t->bw[i] = 0.0f;
            for (uint32_t pass = 0; pass < p->passes; pass++) {
                const level *L = &lv[p->level[pass]];
                t->n[i][pass] = 0;
                t->lw[i][pass] = p->lw[pass];
                if (p->filter == KILN_FILTER_POINT)
                    gather_point(t, i, (int)pass, L, u[i], v[i], au, av, bpp);
                else
                    gather_linear(t, i, (int)pass, L, u[i], v[i], au, av, bpp);
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
 * operations on the same values as read_unorm8, hence the same bits. */

#if defined(__SSE2__)
#include <emmintrin.h>

static void rgba8_quad(const quad_plan *qp, const level *lv, const float *u, const float *v, int i0,
                       kiln_address au, kiln_address av, int swap, float *out)
{
    const __m128i zero = _mm_setzero_si128();
    __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
    __m128 us = _mm_loadh_pi(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(u + i0)),
                             (const __m64 *)(u + i0 + 4));
    __m128 vs = _mm_loadh_pi(_mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(v + i0)),
                             (const __m64 *)(v + i0 + 4));
    for (uint32_t pass = 0; pass < qp->passes; pass++) {
        const level *L = &lv[qp->level[pass]];
        const __m128 lim = _mm_set1_ps(COORD_LIMIT), nlim = _mm_set1_ps(-COORD_LIMIT);
        const __m128 half = _mm_set1_ps(0.5f), k256 = _mm_set1_ps(256.0f);
        int32_t x0[4], y0[4], ax[4], ay[4];
        __m128 c[2] = {_mm_sub_ps(_mm_mul_ps(us, _mm_set1_ps(L->fw)), half),
                       _mm_sub_ps(_mm_mul_ps(vs, _mm_set1_ps(L->fh)), half)};
        int32_t *ip[2] = {x0, y0}, *fp[2] = {ax, ay};
        for (int a = 0; a < 2; a++) { /* split_coord, four lanes */
            __m128 x = _mm_min_ps(_mm_max_ps(c[a], nlim), lim);
            __m128i i = _mm_cvttps_epi32(x);
            i = _mm_add_epi32(i, _mm_castps_si128(_mm_cmpgt_ps(_mm_cvtepi32_ps(i), x)));
            __m128 f = _mm_add_ps(_mm_mul_ps(_mm_sub_ps(x, _mm_cvtepi32_ps(i)), k256), half);
            _mm_storeu_si128((__m128i *)ip[a], i);
            _mm_storeu_si128((__m128i *)fp[a], _mm_cvttps_epi32(f));
        }
        const __m128 lw = _mm_set1_ps(qp->lw[pass]), inv = _mm_set1_ps(1.0f / 65536.0f);
        for (int j = 0; j < 4; j++) {
            size_t xa = (size_t)address(x0[j], L->w, au) * 4;
            size_t xb = (size_t)address(x0[j] + 1, L->w, au) * 4;
            const uint8_t *ra = L->base + (size_t)address(y0[j], L->h, av) * L->pitch;
            const uint8_t *rb = L->base + (size_t)address(y0[j] + 1, L->h, av) * L->pitch;
            __m128i wx = _mm_set1_epi32((int32_t)((uint32_t)ax[j] << 16 | (uint32_t)(256 - ax[j])));
            /* words (left, right) per channel, then left * (256 - ax) + right * ax */
            __m128i top = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int32_t)load_u32(ra + xa)),
                                            _mm_cvtsi32_si128((int32_t)load_u32(ra + xb)));
            __m128i bot = _mm_unpacklo_epi8(_mm_cvtsi32_si128((int32_t)load_u32(rb + xa)),
                                            _mm_cvtsi32_si128((int32_t)load_u32(rb + xb)));
            top = _mm_madd_epi16(_mm_unpacklo_epi8(top, zero), wx);
            bot = _mm_madd_epi16(_mm_unpacklo_epi8(bot, zero), wx);
            __m128 s =
                _mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(top), _mm_set1_ps((float)(256 - ay[j]))),
                           _mm_mul_ps(_mm_cvtepi32_ps(bot), _mm_set1_ps((float)ay[j])));
            acc[j] = _mm_add_ps(acc[j], _mm_mul_ps(lw, _mm_mul_ps(s, inv)));
        }
    }
    _MM_TRANSPOSE4_PS(acc[0], acc[1], acc[2], acc[3]); /* now acc[byte] over 4 pixels */
    const __m128 k255 = _mm_set1_ps(255.0f);
    for (int ch = 0; ch < 4; ch++) {
        int byte = swap && ch != 1 && ch != 3 ? 2 - ch : ch;
        __m128 r = _mm_div_ps(acc[byte], k255);
        _mm_storel_pi((__m64 *)(out + ch * BLOCK + i0), r);
        _mm_storeh_pi((__m64 *)(out + ch * BLOCK + i0 + 4), r);
    }
}

#else

static void rgba8_quad(const quad_plan *qp, const level *lv, const float *u, const float *v, int i0,
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

#endif

/* ---- kiln_ps_sample ---- */

KILN_API void kiln_ps_sample(const kiln_ps_args *a, uint32_t srv_slot, uint32_t sampler_slot,
                             const float *u, const float *v, float *rgba)
{
    const kr_texture *t = NULL;
    if (a && a->textures && srv_slot < KILN_MAX_SHADER_RESOURCES)
        t = &a->textures->tex[srv_slot];
    const kres_format_info *fi = t ? kres_format(t->format) : NULL;
    if (!t || !t->data || !t->subs || t->num_mips == 0 || !fi || !format_sampleable(t->format)) {
        memset(rgba, 0, sizeof(float) * 4 * BLOCK);
        return;
    }
    const kr_sampler *s = sampler_slot < KILN_MAX_SAMPLERS ? a->textures->samp[sampler_slot] : NULL;
    if (!s)
        s = &default_sampler;

    uint32_t nl = t->num_mips < MAX_LEVELS ? t->num_mips : MAX_LEVELS;
    level lv[MAX_LEVELS];
    for (uint32_t l = 0; l < nl; l++) {
        const kres_subresource *sub = &t->subs[t->first_mip + l + t->slice * t->res_mip_levels];
        lv[l].base = t->data + sub->offset;
        lv[l].pitch = sub->row_pitch;
        lv[l].w = (int32_t)sub->width;
        lv[l].h = (int32_t)sub->height;
        lv[l].fw = (float)sub->width;
        lv[l].fh = (float)sub->height;
    }

    quad_plan qp[4];
    int all_linear = 1;
    for (int q = 0; q < 4; q++) {
        plan_quad(s, &lv[0], nl, u, v, quad_px[q][0], &qp[q]);
        all_linear &= qp[q].filter == KILN_FILTER_LINEAR;
    }
    kiln_address au = s->address_u, av = s->address_v;

    if (all_linear && au != KILN_ADDRESS_BORDER && av != KILN_ADDRESS_BORDER &&
        (t->format == KILN_FORMAT_R8G8B8A8_UNORM || t->format == KILN_FORMAT_B8G8R8A8_UNORM)) {
        int swap = t->format == KILN_FORMAT_B8G8R8A8_UNORM;
        for (int q = 0; q < 4; q++)
            rgba8_quad(&qp[q], lv, u, v, quad_px[q][0], au, av, swap, rgba);
        return;
    }

    taps tp;
    gather(&tp, qp, lv, u, v, au, av, fi->size);
    static const int rgba_bytes[4] = {0, 1, 2, 3}, bgra_bytes[4] = {2, 1, 0, 3};
    switch (t->format) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        read_unorm8(&tp, rgba, s->border, 4, rgba_bytes);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        read_unorm8(&tp, rgba, s->border, 4, bgra_bytes);
        break;
    case KILN_FORMAT_R8_UNORM:
        read_unorm8(&tp, rgba, s->border, 1, rgba_bytes);
        break;
    case KILN_FORMAT_R32_FLOAT:
    case KILN_FORMAT_D32_FLOAT:
        read_f32(&tp, rgba, s->border, 1);
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        read_f32(&tp, rgba, s->border, 2);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        read_f32(&tp, rgba, s->border, 4);
        break;
    default: /* D24_UNORM_S8_UINT */
        read_d24(&tp, rgba, s->border);
        break;
    }
}

/* ---- generate_mips ---- */

/* One mip from the one above: dst (x, y) averages source texels 2x, 2x+1
 * by 2y, 2y+1, where a second index past the edge takes the edge texel
 * again (an axis of 1 texel). 8-bit UNORM averages in integers with
 * rounding, floats in float. */
static void downsample(const kres_format_info *fi, const uint8_t *src, const kres_subresource *ss,
                       uint8_t *dst, const kres_subresource *ds)
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
            if (fi->is_unorm8) {
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
    if (!fi || fi->is_depth || !format_sampleable(res->format))
        return;
    for (uint32_t slice = first_slice; slice < first_slice + num_slices; slice++) {
        for (uint32_t m = first_mip + 1; m < first_mip + num_mips; m++) {
            const kres_subresource *ss = &res->subs[m - 1 + slice * res->mip_levels];
            const kres_subresource *ds = &res->subs[m + slice * res->mip_levels];
            downsample(fi, st->data + ss->offset, ss, st->data + ds->offset, ds);
        }
    }
}
