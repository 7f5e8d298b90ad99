/*
 * Writing a block into an 8-bit RGBA / BGRA target at the AVX-512 level:
 * pixel_avx2.c's store and blend copies with the 16 pixels in one vector
 * (row r in 128-bit lane r), chosen once per draw
 * (kr_write8_select_avx512). Each lane does pixel_avx2.c's operations in
 * the same order (which are tile.c's scalar formula's), so the bytes are
 * the same; test_raster_blend_exact runs every blend combination at every
 * level against the scalar formula. Partly covered rows are read and
 * written with AVX-512's masked loads and stores, which touch no byte of
 * an uncovered pixel (the row may end past the target).
 *
 * Compiled with AVX-512 F, BW, VL and DQ (effects.cmake); tile.c calls it
 * only at that level. No contraction: the only fused multiply-adds are
 * unorm8_16's, written out.
 */
#include "effects.h"
#include "prim.h"

#if KR_EFFECTS_X86

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "blend_avx512.h"

#include <immintrin.h>
#include <stdatomic.h>
#include <string.h>

#define B KILN_PS_BLOCK

typedef __m512 v16;

static inline v16 v16_set1(float f) { return _mm512_set1_ps(f); }

void kr_unorm8_avx512(const uint8_t in[16], float out[16])
{
    _mm512_storeu_ps(out, kr_unorm8_16(_mm512_cvtepu8_epi32(
                              _mm_loadu_si128((const __m128i *)(const void *)in))));
}

/* 16 floats as two 8-float loads: the shaders and kernels that wrote them
 * stored 8 at a time, and a 512-bit load over two such stores is not
 * forwarded from them. */
static inline v16 load16(const float *p)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)), _mm256_loadu_ps(p + 8),
                              1);
}

/* pixel_avx2.c's factor8, blend_op8 and channel, sixteen lanes. */
static inline v16 factor16(kiln_blend_factor f, int c, const v16 s[4], const v16 d[4],
                           const float k[4])
{
    const v16 one = v16_set1(1.0f);
    switch (f) {
    case KILN_BLEND_ZERO:
        return v16_set1(0.0f);
    case KILN_BLEND_ONE:
        return one;
    case KILN_BLEND_SRC_COLOR:
        return s[c];
    case KILN_BLEND_INV_SRC_COLOR:
        return _mm512_sub_ps(one, s[c]);
    case KILN_BLEND_SRC_ALPHA:
        return s[3];
    case KILN_BLEND_INV_SRC_ALPHA:
        return _mm512_sub_ps(one, s[3]);
    case KILN_BLEND_DEST_ALPHA:
        return d[3];
    case KILN_BLEND_INV_DEST_ALPHA:
        return _mm512_sub_ps(one, d[3]);
    case KILN_BLEND_DEST_COLOR:
        return d[c];
    case KILN_BLEND_INV_DEST_COLOR:
        return _mm512_sub_ps(one, d[c]);
    case KILN_BLEND_SRC_ALPHA_SAT:
        return c == 3 ? one : _mm512_min_ps(s[3], _mm512_sub_ps(one, d[3]));
    case KILN_BLEND_BLEND_FACTOR:
        return v16_set1(k[c]);
    case KILN_BLEND_INV_BLEND_FACTOR:
        return v16_set1(1.0f - k[c]);
    default:
        return one;
    }
}

static inline v16 blend_op16(kiln_blend_op op, v16 a, v16 b)
{
    switch (op) {
    case KILN_BLEND_OP_SUBTRACT:
        return _mm512_sub_ps(a, b);
    case KILN_BLEND_OP_REV_SUBTRACT:
        return _mm512_sub_ps(b, a);
    case KILN_BLEND_OP_MIN:
        return _mm512_min_ps(a, b);
    case KILN_BLEND_OP_MAX:
        return _mm512_max_ps(a, b);
    default:
        return _mm512_add_ps(a, b);
    }
}

static inline v16 channel(kiln_blend_factor fs, kiln_blend_factor fd, kiln_blend_op op, int c,
                          const v16 s[4], const v16 d[4], const float k[4])
{
    const v16 one = v16_set1(1.0f);
    if (op == KILN_BLEND_OP_ADD && fs == KILN_BLEND_ONE && fd == KILN_BLEND_ONE)
        return _mm512_add_ps(_mm512_mul_ps(s[c], one), _mm512_mul_ps(d[c], one));
    if (op == KILN_BLEND_OP_ADD && fs == KILN_BLEND_SRC_ALPHA && fd == KILN_BLEND_INV_SRC_ALPHA)
        return kr_blend_alpha16(s[c], s[3], d[c]);
    if (op == KILN_BLEND_OP_MIN || op == KILN_BLEND_OP_MAX) /* D3D10: no factors */
        return blend_op16(op, s[c], d[c]);
    return blend_op16(op, _mm512_mul_ps(s[c], factor16(fs, c, s, d, k)),
                      _mm512_mul_ps(d[c], factor16(fd, c, s, d, k)));
}

/* blend_rows of pixel_avx2.c for the whole block; bgra and kind are
 * constants in each copy: kind 0 writes without blending (a partial write
 * mask), 1 and 2 blend both parts with ADD of (ONE, ONE) or of
 * (SRC_ALPHA, INV_SRC_ALPHA), 3 any factors and ops. */
#define BLEND_INLINE static inline __attribute__((always_inline))
BLEND_INLINE void blend_block(const kd_blend_rt *bl, const float k[4], uint8_t *base,
                              uint32_t pitch, const int bgra, const int kind, int x, int y,
                              const float *col, uint32_t mask)
{
    /* channel c lives in byte pos[c] of a pixel's word */
    const int pos[4] = {bgra ? 2 : 0, 1, bgra ? 0 : 2, 3};
    uint32_t keep = 0; /* bytes the write mask leaves alone */
    for (int c = 0; c < 4; c++)
        if (!(bl->write_mask >> c & 1))
            keep |= 0xffu << (8 * pos[c]);
    const __m512i lo8 = _mm512_set1_epi32(0xff);
    const v16 zero = v16_set1(0.0f), one = v16_set1(1.0f), k255 = v16_set1(255.0f),
              half = v16_set1(0.5f);
    uint8_t *dst = base + (size_t)y * pitch + (size_t)x * 4;
    __m512i old = kr_load_block16(dst, pitch, mask);
    v16 src[4], out[4];
    for (int c = 0; c < 4; c++)
        src[c] = load16(col + c * B);
    if (kind) {
        v16 d[4];
        for (int c = 0; c < 4; c++) {
            d[c] =
                kr_unorm8_16(_mm512_and_si512(_mm512_srli_epi32(old, (unsigned)(8 * pos[c])), lo8));
            /* src < 0 ? 0 : src > 1 ? 1 : src, NaN and -0 kept (max and min
             * return their second operand for NaN and equal operands) */
            src[c] = _mm512_min_ps(one, _mm512_max_ps(zero, src[c]));
        }
        for (int c = 0; c < 4; c++) {
            if (kind == 1)
                out[c] = channel(KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, c, src, d, k);
            else if (kind == 2)
                out[c] = channel(KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA, KILN_BLEND_OP_ADD,
                                 c, src, d, k);
            else if (c < 3)
                out[c] = channel(bl->src, bl->dst, bl->op, c, src, d, k);
            else
                out[c] = channel(bl->src_a, bl->dst_a, bl->op_a, 3, src, d, k);
        }
    } else {
        memcpy(out, src, sizeof out);
    }
    /* unorm8: c > 0 ? c : 0 (NaN gives 0), then c < 1 ? c : 1, then
     * (int)(c * 255 + 0.5) */
    __m512i ch[4];
    for (int c = 0; c < 4; c++) {
        v16 v = _mm512_min_ps(_mm512_max_ps(out[c], zero), one);
        ch[c] = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v, k255), half));
    }
    __m512i px = _mm512_or_si512(_mm512_or_si512(_mm512_slli_epi32(ch[0], (unsigned)(8 * pos[0])),
                                                 _mm512_slli_epi32(ch[1], 8)),
                                 _mm512_or_si512(_mm512_slli_epi32(ch[2], (unsigned)(8 * pos[2])),
                                                 _mm512_slli_epi32(ch[3], 24)));
    if (keep) {
        const __m512i keepv = _mm512_set1_epi32((int)keep);
        px = _mm512_or_si512(_mm512_andnot_si512(keepv, px), _mm512_and_si512(old, keepv));
    }
    kr_store_block16(dst, pitch, px, mask);
}

/* The eight copies, byte order and kind constant in each. */
#define BLEND_COPY(name, bgra, kind)                                                               \
    static void name(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,       \
                     int x, int y, const float *col, uint32_t mask)                                \
    {                                                                                              \
        blend_block(bl, k, base, pitch, bgra, kind, x, y, col, mask);                              \
    }
BLEND_COPY(blend_rgba_mask, 0, 0)
BLEND_COPY(blend_bgra_mask, 1, 0)
BLEND_COPY(blend_rgba_add, 0, 1)
BLEND_COPY(blend_bgra_add, 1, 1)
BLEND_COPY(blend_rgba_alpha, 0, 2)
BLEND_COPY(blend_bgra_alpha, 1, 2)
BLEND_COPY(blend_rgba_any, 0, 3)
BLEND_COPY(blend_bgra_any, 1, 3)
#undef BLEND_COPY

/* output_rgba8's conversion lane by lane: the channels of bytes 0 to 3,
 * each clamped to [0, 1], times 255, plus 0.5, truncated. */
static inline __m512i pack_rgba8(const v16 in[4])
{
    const v16 zero = v16_set1(0.0f), one = v16_set1(1.0f), k255 = v16_set1(255.0f),
              half = v16_set1(0.5f);
    __m512i ch[4];
    for (int c = 0; c < 4; c++) {
        v16 v = _mm512_min_ps(_mm512_max_ps(in[c], zero), one);
        ch[c] = _mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(v, k255), half));
    }
    return _mm512_or_si512(
        _mm512_or_si512(ch[0], _mm512_slli_epi32(ch[1], 8)),
        _mm512_or_si512(_mm512_slli_epi32(ch[2], 16), _mm512_slli_epi32(ch[3], 24)));
}

/* No blending, all channels written: output_rgba8's conversion lane by
 * lane, stored without reading the target. */
BLEND_INLINE void store_block_rgba8(uint8_t *base, uint32_t pitch, const int bgra, int x, int y,
                                    const float *col, uint32_t mask)
{
    /* the channels stored in bytes 0 and 2 */
    const float *lo = col + (bgra ? 2 : 0) * B, *hi = col + (bgra ? 0 : 2) * B;
    const v16 in[4] = {load16(lo), load16(col + B), load16(hi), load16(col + 3 * B)};
    kr_store_block16(base + (size_t)y * pitch + (size_t)x * 4, pitch, pack_rgba8(in), mask);
}

static void store_rgba(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                       int x, int y, const float *col, uint32_t mask)
{
    (void)bl;
    (void)k;
    store_block_rgba8(base, pitch, 0, x, y, col, mask);
}

static void store_bgra(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                       int x, int y, const float *col, uint32_t mask)
{
    (void)bl;
    (void)k;
    store_block_rgba8(base, pitch, 1, x, y, col, mask);
}

kr_write8_fn kr_write8_select_avx512(const kd_blend_rt *bl, bool bgra)
{
    static const kr_write8_fn copies[4][2] = {{blend_rgba_mask, blend_bgra_mask},
                                              {blend_rgba_add, blend_bgra_add},
                                              {blend_rgba_alpha, blend_bgra_alpha},
                                              {blend_rgba_any, blend_bgra_any}};
    if (!bl->write_mask)
        return NULL;
    if (!bl->enable && bl->write_mask == 15u)
        return bgra ? store_bgra : store_rgba;
    return copies[kr_blend_kind(bl)][bgra ? 1 : 0];
}

/* ---- interpolation and depth at the pixel centers ---- */

/* 16 floats as two 8-float stores, for readers that load 8 at a time
 * (the AVX2 effects, pixel_avx2.c's writers for several targets). */
static inline void store16(float *p, v16 x)
{
    _mm256_storeu_ps(p, _mm512_castps512_ps256(x));
    _mm256_storeu_ps(p + 8, _mm512_extractf32x8_ps(x, 1));
}

/* (float)(x + column) + 0.5f - ox and (float)(y + row) + 0.5f - oy of the
 * block's 16 pixels, as pixel_avx2.c works them out per pair of rows. */
static inline void centers16(const kr_prim *p, int x, int y, v16 *fx, v16 *fy)
{
    const __m512i col = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i row = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    *fx =
        _mm512_sub_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_set1_epi32(x), col)),
                                    v16_set1(0.5f)),
                      v16_set1(p->ox));
    *fy =
        _mm512_sub_ps(_mm512_add_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_set1_epi32(y), row)),
                                    v16_set1(0.5f)),
                      v16_set1(p->oy));
}

/* 1/w at the block's pixel centers: 1 / q0 when the 1/w plane is flat,
 * else 1 / ((q0 + q1 * fx) + q2 * fy) (interp8_init's). */
static inline v16 persp_w16(const kr_prim *p, v16 fx, v16 fy)
{
    const float q0 = p->q[0], q1 = p->q[1], q2 = p->q[2];
    if (q1 == 0.0f && q2 == 0.0f)
        return v16_set1(1.0f / q0);
    return _mm512_div_ps(v16_set1(1.0f),
                         _mm512_add_ps(_mm512_add_ps(v16_set1(q0), _mm512_mul_ps(v16_set1(q1), fx)),
                                       _mm512_mul_ps(v16_set1(q2), fy)));
}

/* Component k's plane at the block's pixel centers, perspective corrected:
 * ((a0 + a1 * fx) + a2 * fy) * w, interp8_comp's formula. */
static inline v16 comp16(const kr_prim *p, uint32_t k, v16 fx, v16 fy, v16 w)
{
    const float *a = p->attr + 3 * k;
    v16 a01 = _mm512_add_ps(v16_set1(a[0]), _mm512_mul_ps(v16_set1(a[1]), fx));
    return _mm512_mul_ps(_mm512_add_ps(a01, _mm512_mul_ps(v16_set1(a[2]), fy)), w);
}

/* kr_interpolate_avx512, inlined into the general span's loop, which
 * zeroes the unread components once per rect (zero_unread false) */
static inline __attribute__((always_inline)) void interp16(const kr_prim *p, int x, int y,
                                                           uint32_t ncomp, uint32_t mask,
                                                           float *vary, bool zero_unread)
{
    v16 fx, fy;
    centers16(p, x, y, &fx, &fy);
    const v16 w = persp_w16(p, fx, fy);
    const uint32_t all = ncomp >= 32 ? 0xffffffffu : (1u << ncomp) - 1u;
    for (uint32_t m = zero_unread ? ~mask & all : 0; m; m &= m - 1) /* unread: 0 */
        store16(vary + (uint32_t)__builtin_ctz(m) * B, _mm512_setzero_ps());
    for (uint32_t m = mask & all; m; m &= m - 1) {
        uint32_t k = (uint32_t)__builtin_ctz(m);
        store16(vary + k * B, comp16(p, k, fx, fy, w));
    }
}

void kr_interpolate_avx512(const kr_prim *p, int x, int y, uint32_t ncomp, uint32_t mask,
                           float *vary)
{
    interp16(p, x, y, ncomp, mask, vary, true);
}

/* The block's depths at its pixel centers (fx, fy: centers16's):
 * (z0 + z1 * fx) + z2 * fy, then z < zmin ? zmin : min(zmax, z). */
static inline v16 block_z16(const kr_prim *p, v16 fx, v16 fy)
{
    const kd_state *s = p->dx->s;
    const v16 zmin = v16_set1(s->vp.min_depth), zmax = v16_set1(s->vp.max_depth);
    v16 zr = _mm512_add_ps(_mm512_add_ps(v16_set1(p->z[0]), _mm512_mul_ps(v16_set1(p->z[1]), fx)),
                           _mm512_mul_ps(v16_set1(p->z[2]), fy));
    v16 t = _mm512_min_ps(zmax, zr); /* zmax < zr ? zmax : zr */
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(zr, zmin, _CMP_LT_OS), t, zmin);
}

void kr_block_depth_avx512(const kr_prim *p, int x, int y, float *z)
{
    v16 fx, fy;
    centers16(p, x, y, &fx, &fy);
    store16(z, block_z16(p, fx, fy));
}

/* ---- the D32_FLOAT depth test ---- */

/* kr_depth_d32_avx512 of the depths zv */
static inline __attribute__((always_inline)) uint32_t depth_d32_16(kiln_compare func, bool write,
                                                                   uint8_t *ds, size_t pitch, int x,
                                                                   int y, __m512 zv, uint32_t mask)
{
    /* Rows past the target's bottom are uncovered: an uncovered row points
     * at the block's first row (inside the target) and its masked load and
     * store touch nothing. No branch on the masks: with small triangles
     * they change from block to block and mispredicted. */
    float *d[4];
    __m128 r[4];
    for (int i = 0; i < 4; i++) {
        uint32_t m = mask >> (4 * i) & 15u;
        d[i] = (float *)(void *)(ds + (size_t)(y + (m ? i : 0)) * pitch) + x;
        r[i] = _mm_maskz_loadu_ps((__mmask8)m, d[i]);
    }
    __m512 dv = _mm512_insertf32x8(
        _mm512_castps256_ps512(_mm256_insertf128_ps(_mm256_castps128_ps256(r[0]), r[1], 1)),
        _mm256_insertf128_ps(_mm256_castps128_ps256(r[2]), r[3], 1), 1);
    __mmask16 m = (__mmask16)mask, pass;
    /* compare_f: C's comparisons, false for NaN except != */
    switch (func) {
    case KILN_COMPARE_NEVER:
        pass = 0;
        break;
    case KILN_COMPARE_LESS:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_LT_OQ);
        break;
    case KILN_COMPARE_EQUAL:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_EQ_OQ);
        break;
    case KILN_COMPARE_LESS_EQUAL:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_LE_OQ);
        break;
    case KILN_COMPARE_GREATER:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_GT_OQ);
        break;
    case KILN_COMPARE_NOT_EQUAL:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_NEQ_UQ);
        break;
    case KILN_COMPARE_GREATER_EQUAL:
        pass = _mm512_mask_cmp_ps_mask(m, zv, dv, _CMP_GE_OQ);
        break;
    default:
        pass = m;
        break;
    }
    if (write && pass) {
        __m128 zr[4] = {_mm512_castps512_ps128(zv), _mm512_extractf32x4_ps(zv, 1),
                        _mm512_extractf32x4_ps(zv, 2), _mm512_extractf32x4_ps(zv, 3)};
        for (int i = 0; i < 4; i++) /* an uncovered row's mask is 0 */
            _mm_mask_storeu_ps(d[i], (__mmask8)(pass >> (4 * i) & 15u), zr[i]);
    }
    return pass;
}

uint32_t kr_depth_d32_avx512(kiln_compare func, bool write, uint8_t *ds, size_t pitch, int x, int y,
                             const float *z, uint32_t mask)
{
    return depth_d32_16(func, write, ds, pitch, x, y, load16(z), mask);
}

uint32_t kr_block_test_d32_avx512(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    const kd_state *s = p->dx->s;
    v16 fx, fy;
    centers16(p, x, y, &fx, &fy);
    return depth_d32_16(s->depth_func, s->depth_write != 0, fb->ds, fb->ds_pitch, x, y,
                        block_z16(p, fx, fy), mask);
}

/* ---- the vertex color and lit effects behind the D32_FLOAT depth test ---- */

/* lit_avx2.h's kr_lit8_d on 16 lanes: d = max(((n.x * l.x + n.y * l.y) +
 * n.z * l.z) * inv, 0), inv = len2 > 0 ? 1 / sqrt(len2) : 0 (+0 where the
 * compare fails, as AVX2's and with its mask), vmaxps giving its second
 * operand for NaN, as at 8 lanes. */
static inline v16 lit16_d(const kr_lit_constants *k, v16 nx, v16 ny, v16 nz)
{
    const v16 zero = _mm512_setzero_ps(), one = v16_set1(1.0f);
    v16 len2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(nx, nx), _mm512_mul_ps(ny, ny)),
                             _mm512_mul_ps(nz, nz));
    v16 inv = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(len2, zero, _CMP_GT_OQ),
                                  _mm512_div_ps(one, _mm512_sqrt_ps(len2)));
    v16 dot = _mm512_add_ps(
        _mm512_add_ps(_mm512_mul_ps(nx, v16_set1(k->l[0])), _mm512_mul_ps(ny, v16_set1(k->l[1]))),
        _mm512_mul_ps(nz, v16_set1(k->l[2])));
    return _mm512_max_ps(_mm512_mul_ps(dot, inv), zero);
}

/* tested_shade's calls for KILN_EFFECT_VERTEX_COLOR (`lit` 0) or
 * KILN_EFFECT_LIT (1): kr_block_depth_avx512, kr_depth_d32_avx512, then
 * kr_shade_color_avx2 or kr_shade_lit_avx2 into store_rgba or store_bgra,
 * in one function, the depths and colors in registers rather than arrays
 * between calls. The same operations lane by lane (persp_w16 and comp16
 * are interp8's formulas, lit16_d is kr_lit8_d, the channels
 * col * (ambient + light * d)), so the same bytes (test_effect_d32). */
static inline __attribute__((always_inline)) bool effect_d32(const kr_prim *p, const kr_fb *fb,
                                                             int x, int y, uint32_t mask,
                                                             const int bgra, const int lit)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    v16 fx, fy;
    centers16(p, x, y, &fx, &fy);
    mask = depth_d32_16(s->depth_func, s->depth_write != 0, fb->ds, fb->ds_pitch, x, y,
                        block_z16(p, fx, fy), mask);
    if (!mask)
        return true;
    const v16 w = persp_w16(p, fx, fy);
    v16 c[4];
    for (uint32_t k = 0; k < 4; k++)
        c[k] = comp16(p, k, fx, fy, w);
    if (lit) {
        /* the constants as the pixel kernel reads them: the draw's cb0 */
        kr_lit_constants kc;
        kr_lit_constants_from(dx->ps_cb, dx->ps_cb_size, &kc);
        v16 d =
            lit16_d(&kc, comp16(p, 4, fx, fy, w), comp16(p, 5, fx, fy, w), comp16(p, 6, fx, fy, w));
        for (int k = 0; k < 3; k++)
            c[k] = _mm512_mul_ps(c[k], _mm512_add_ps(v16_set1(kc.ambient[k]),
                                                     _mm512_mul_ps(v16_set1(kc.light[k]), d)));
    }
    const v16 in[4] = {c[bgra ? 2 : 0], c[1], c[bgra ? 0 : 2], c[3]};
    kr_store_block16(fb->rt[0] + (size_t)y * fb->rt_pitch[0] + (size_t)x * 4, fb->rt_pitch[0],
                     pack_rgba8(in), mask);
    return true;
}

#define EFFECT_D32_COPY(name, bgra, lit)                                                           \
    static bool name(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)               \
    {                                                                                              \
        return effect_d32(p, fb, x, y, mask, bgra, lit);                                           \
    }
EFFECT_D32_COPY(color_d32_rgba, 0, 0)
EFFECT_D32_COPY(color_d32_bgra, 1, 0)
EFFECT_D32_COPY(lit_d32_rgba, 0, 1)
EFFECT_D32_COPY(lit_d32_bgra, 1, 1)
#undef EFFECT_D32_COPY

/* A triangle's rect of at most 4x4 pixels as one block at its corner
 * (x0, y0): the 16 pixel centers' edge values a * px + b * py + c in
 * 32-bit lanes, the value at the corner plus column and row steps
 * (raster_window's, with the same int64 check that every value of the
 * rect's rows fits: the wrapping lanes are the exact values there), the
 * covered ones masked to the rect, then effect_d32's block (kr_corner_fn).
 * false: some value does not fit, nothing done. */
static inline __attribute__((always_inline)) bool effect_d32_corner(const kr_prim *p,
                                                                    const kr_fb *fb, int x0, int y0,
                                                                    int x1, int y1, const int bgra,
                                                                    const int lit)
{
    const int64_t S = KR_SUBPIXEL;
    const int64_t px = (int64_t)x0 * S + S / 2, py = (int64_t)y0 * S + S / 2;
    const int64_t rows = y1 - 1 - y0;
    const __m512i col = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i row = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    __m512i any = _mm512_setzero_si512();
    for (int k = 0; k < 3; k++) {
        uint32_t e, sx, sy;
        if (!kr_edge_window32(p, k, px, py, 3, rows, &e, &sx, &sy))
            return false;
        const __m512i v = _mm512_add_epi32(
            _mm512_set1_epi32((int32_t)e),
            _mm512_add_epi32(_mm512_mullo_epi32(col, _mm512_set1_epi32((int32_t)sx)),
                             _mm512_mullo_epi32(row, _mm512_set1_epi32((int32_t)sy))));
        any = _mm512_or_si512(any, v);
    }
    const uint32_t cols = 15u >> (4 - (x1 - x0));
    const uint32_t rect = (cols * 0x1111u) & (0xffffu >> (4 * (4 - (y1 - y0))));
    const uint32_t mask = ~(uint32_t)_mm512_movepi32_mask(any) & rect;
    /* effect_d32 declines (only a primitive that is not a triangle) before
     * writing anything */
    return !mask || effect_d32(p, fb, x0, y0, mask, bgra, lit);
}

#define EFFECT_D32_CORNER(name, bgra, lit)                                                         \
    static bool name(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)            \
    {                                                                                              \
        return effect_d32_corner(p, fb, x0, y0, x1, y1, bgra, lit);                                \
    }
EFFECT_D32_CORNER(color_d32_rgba_corner, 0, 0)
EFFECT_D32_CORNER(color_d32_bgra_corner, 1, 0)
EFFECT_D32_CORNER(lit_d32_rgba_corner, 0, 1)
EFFECT_D32_CORNER(lit_d32_bgra_corner, 1, 1)
#undef EFFECT_D32_CORNER

/* Set when kr_effect_d32_select_avx512 chooses a kernel (read once per
 * execution context, written only when it changes: no line shared for
 * writing), for kr_effect_d32_chosen. */
static _Atomic bool effect_d32_seen;

kr_block_fn kr_effect_d32_select_avx512(const kr_drawx *dx, const kr_fb *fb)
{
    const kd_state *s = dx->s;
    if (!dx->wide16 || fb->samples != 1 || !fb->ds || fb->ds_format != KILN_FORMAT_D32_FLOAT ||
        !s->depth_enable || s->stencil_enable || !fb->rt[0])
        return NULL;
    const int lit = dx->shade == kr_shade_lit_avx2;
    if (!lit && dx->shade != kr_shade_color_avx2)
        return NULL;
    kr_block_fn f = dx->write8 == store_rgba   ? (lit ? lit_d32_rgba : color_d32_rgba)
                    : dx->write8 == store_bgra ? (lit ? lit_d32_bgra : color_d32_bgra)
                                               : NULL;
    if (f && !atomic_load_explicit(&effect_d32_seen, memory_order_relaxed))
        atomic_store_explicit(&effect_d32_seen, true, memory_order_relaxed);
    return f;
}

bool kr_effect_d32_chosen(void) { return atomic_exchange(&effect_d32_seen, false); }

kr_corner_fn kr_effect_d32_corner_avx512(kr_block_fn f)
{
    return f == color_d32_rgba   ? color_d32_rgba_corner
           : f == color_d32_bgra ? color_d32_bgra_corner
           : f == lit_d32_rgba   ? lit_d32_rgba_corner
           : f == lit_d32_bgra   ? lit_d32_bgra_corner
                                 : NULL;
}

/* ---- the general pixel path over a rect (span_general.h) ---- */

static inline void zero_output16(float *c)
{
    for (int i = 0; i < 4 * B; i += 16)
        _mm512_store_ps(c + i, _mm512_setzero_ps());
}

#define SPAN_NAME kr_general_span_avx512
#define SPAN_DEPTH kr_block_depth_avx512
#define SPAN_INTERP(p, x, y, n, m, v) interp16(p, x, y, n, m, v, false)
#define SPAN_ZERO zero_output16
#include "span_general.h"
#undef SPAN_NAME
#undef SPAN_DEPTH
#undef SPAN_INTERP
#undef SPAN_ZERO

#else

/* Non-x86 builds never call it (an empty file is not ISO C). */
typedef int kr_pixel_avx512_unused;

#endif
