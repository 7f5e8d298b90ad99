/*
 * Part of tile.c's per-block pixel pipeline at the AVX2 level: writing
 * a block's covered pixels into 8-bit RGBA / BGRA targets, two rows (8
 * pixels) per vector: blending or a partial write mask
 * (kr_blend_rgba8_avx2, tile.c's output_rgba8_blend), or neither
 * (kr_store_rgba8_avx2, output_rgba8); the D32_FLOAT and D24S8 depth
 * tests without stencil (kr_depth_d32_avx2, tile.c's depth_d32;
 * kr_depth_d24_avx2, depth_stencil_other's D24 case); a triangle's
 * varyings and depth at the pixel centers (kr_interpolate_avx2,
 * kr_block_depth_avx2); and the whole-block shading of the vertex color
 * and lit effects (kr_shade_color_avx2, kr_shade_lit_avx2: interpolation,
 * the effect and the write, the colors in registers between them). Each
 * lane does the SSE2 row code's IEEE operations in the same order (the
 * selects keep each comparison's unordered result, max and min return
 * their second operand for NaN as the SSE2 ones do), so the bytes are the
 * same; test_raster_blend_exact runs every blend combination at both
 * levels against the scalar formula. Compiled with -mavx2 -mfma
 * (effects.cmake); tile.c calls it for whole blocks when the chosen SIMD
 * level is AVX2 (kr_drawx.wide). No contraction: the only fused
 * multiply-adds are the explicit ones of kr_unorm8_8 (blend_avx2.h).
 */
#include "effects.h"
#include "prim.h"

#if KR_EFFECTS_X86

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>
#include <string.h>

#include "blend_avx2.h"
#include "lit_avx2.h"

#define B KILN_PS_BLOCK

typedef __m256 v8;

static inline v8 v8_set1(float f) { return _mm256_set1_ps(f); }
/* a < b (ordered: false for NaN), as SSE2's cmplt */
static inline v8 v8_lt(v8 a, v8 b) { return _mm256_cmp_ps(a, b, _CMP_LT_OS); }

void kr_unorm8_avx2(const uint8_t in[8], float out[8])
{
    _mm256_storeu_ps(
        out, kr_unorm8_8(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)in))));
}

/* tile.c's factor4 and blend_op4, eight lanes. */
static inline v8 factor8(kiln_blend_factor f, int c, const v8 s[4], const v8 d[4], const float k[4])
{
    const v8 one = v8_set1(1.0f);
    switch (f) {
    case KILN_BLEND_ZERO: return v8_set1(0.0f);
    case KILN_BLEND_ONE: return one;
    case KILN_BLEND_SRC_COLOR: return s[c];
    case KILN_BLEND_INV_SRC_COLOR: return _mm256_sub_ps(one, s[c]);
    case KILN_BLEND_SRC_ALPHA: return s[3];
    case KILN_BLEND_INV_SRC_ALPHA: return _mm256_sub_ps(one, s[3]);
    case KILN_BLEND_DEST_ALPHA: return d[3];
    case KILN_BLEND_INV_DEST_ALPHA: return _mm256_sub_ps(one, d[3]);
    case KILN_BLEND_DEST_COLOR: return d[c];
    case KILN_BLEND_INV_DEST_COLOR: return _mm256_sub_ps(one, d[c]);
    case KILN_BLEND_SRC_ALPHA_SAT: return c == 3 ? one : _mm256_min_ps(s[3], _mm256_sub_ps(one, d[3]));
    case KILN_BLEND_BLEND_FACTOR: return v8_set1(k[c]);
    case KILN_BLEND_INV_BLEND_FACTOR: return v8_set1(1.0f - k[c]);
    default: return one;
    }
}

static inline v8 blend_op8(kiln_blend_op op, v8 a, v8 b)
{
    switch (op) {
    case KILN_BLEND_OP_SUBTRACT: return _mm256_sub_ps(a, b);
    case KILN_BLEND_OP_REV_SUBTRACT: return _mm256_sub_ps(b, a);
    case KILN_BLEND_OP_MIN: return _mm256_min_ps(a, b);
    case KILN_BLEND_OP_MAX: return _mm256_max_ps(a, b);
    default: return _mm256_add_ps(a, b);
    }
}

/* One channel: tile.c's blend_known for ADD of (ONE, ONE) and of
 * (SRC_ALPHA, INV_SRC_ALPHA), else the general formula. */
static inline v8 channel(kiln_blend_factor fs, kiln_blend_factor fd, kiln_blend_op op, int c,
                         const v8 s[4], const v8 d[4], const float k[4])
{
    const v8 one = v8_set1(1.0f);
    if (op == KILN_BLEND_OP_ADD && fs == KILN_BLEND_ONE && fd == KILN_BLEND_ONE)
        return _mm256_add_ps(_mm256_mul_ps(s[c], one), _mm256_mul_ps(d[c], one));
    if (op == KILN_BLEND_OP_ADD && fs == KILN_BLEND_SRC_ALPHA && fd == KILN_BLEND_INV_SRC_ALPHA)
        return kr_blend_alpha8(s[c], s[3], d[c]);
    if (op == KILN_BLEND_OP_MIN || op == KILN_BLEND_OP_MAX) /* D3D10: no factors */
        return blend_op8(op, s[c], d[c]);
    return blend_op8(op, _mm256_mul_ps(s[c], factor8(fs, c, s, d, k)),
                     _mm256_mul_ps(d[c], factor8(fd, c, s, d, k)));
}

/* tile.c's interpolate of a triangle's block at (x, y), two rows per
 * vector: each component is (a0 + a1 * fx) + a2 * fy, times 1 / q, q the
 * 1/w plane or, for equal w at the vertices, its constant. What does not
 * depend on the component is worked out once (interp8_init). */
typedef struct interp8 {
    __m256 fx, fy[2], w[2]; /* rows 2h and 2h + 1 in lanes 0-3 and 4-7 */
} interp8;

static inline void interp8_init(const kr_prim *p, int x, int y, interp8 *k)
{
    k->fx = _mm256_sub_ps(
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(
                          _mm256_set1_epi32(x), _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3))),
                      v8_set1(0.5f)),
        v8_set1(p->ox));
    /* (float)(y + row) + 0.5f - oy */
    for (int h = 0; h < 2; h++)
        k->fy[h] = _mm256_sub_ps(_mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(
                                                   _mm256_set1_epi32(y + 2 * h),
                                                   _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1))),
                                               v8_set1(0.5f)),
                                 v8_set1(p->oy));
    const float q0 = p->q[0], q1 = p->q[1], q2 = p->q[2];
    if (q1 == 0.0f && q2 == 0.0f) {
        k->w[0] = k->w[1] = v8_set1(1.0f / q0);
    } else {
        for (int h = 0; h < 2; h++)
            k->w[h] = _mm256_div_ps(
                v8_set1(1.0f),
                _mm256_add_ps(_mm256_add_ps(v8_set1(q0), _mm256_mul_ps(v8_set1(q1), k->fx)),
                              _mm256_mul_ps(v8_set1(q2), k->fy[h])));
    }
}

/* The component whose planes are a[0..2], rows 2h, 2h + 1 in v[h]. */
static inline void interp8_comp(const interp8 *k, const float *a, __m256 v[2])
{
    const __m256 a01 = _mm256_add_ps(v8_set1(a[0]), _mm256_mul_ps(v8_set1(a[1]), k->fx));
    const __m256 a2 = v8_set1(a[2]);
    for (int h = 0; h < 2; h++)
        v[h] = _mm256_mul_ps(_mm256_add_ps(a01, _mm256_mul_ps(a2, k->fy[h])), k->w[h]);
}

/* kr_interpolate_avx2, inlined into the general span's loop, which
 * zeroes the unread components once per rect (zero_unread false) */
static inline __attribute__((always_inline)) void interp_block8(const kr_prim *p, int x, int y,
                                                                uint32_t ncomp, uint32_t mask,
                                                                float *vary, bool zero_unread)
{
    interp8 k;
    interp8_init(p, x, y, &k);
    const uint32_t all = ncomp >= 32 ? 0xffffffffu : (1u << ncomp) - 1u;
    for (uint32_t m = zero_unread ? ~mask & all : 0; m; m &= m - 1) { /* unread: 0 */
        uint32_t c = (uint32_t)__builtin_ctz(m);
        _mm256_storeu_ps(vary + c * B, _mm256_setzero_ps());
        _mm256_storeu_ps(vary + c * B + 8, _mm256_setzero_ps());
    }
    for (uint32_t m = mask & all; m; m &= m - 1) {
        uint32_t c = (uint32_t)__builtin_ctz(m);
        __m256 v[2];
        interp8_comp(&k, p->attr + 3 * c, v);
        _mm256_storeu_ps(vary + c * B, v[0]);
        _mm256_storeu_ps(vary + c * B + 8, v[1]);
    }
}

void kr_interpolate_avx2(const kr_prim *p, int x, int y, uint32_t ncomp, uint32_t mask, float *vary)
{
    interp_block8(p, x, y, ncomp, mask, vary, true);
}

/* KILN_EFFECT_VERTEX_COLOR's shading (kr_shade_select): varying 0, which
 * is output 0, interpolated straight into the color and written as
 * output() would (kr_drawx.write8; out1 2: nothing). */
bool kr_shade_color_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_drawx *dx = p->dx;
    if (!dx->write8)
        return true;
    interp8 k;
    interp8_init(p, x, y, &k);
    _Alignas(32) float col[4 * B];
    for (int c = 0; c < 4; c++) {
        __m256 v[2];
        interp8_comp(&k, p->attr + 3 * c, v);
        _mm256_store_ps(col + c * B, v[0]);
        _mm256_store_ps(col + c * B + 8, v[1]);
    }
    dx->write8(&dx->s->blend[0], dx->s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, col, mask);
    return true;
}

/* KILN_EFFECT_LIT's shading (kr_shade_select): color (varying 0) and
 * normal (varying 1's x, y, z) interpolated in registers, the effect's
 * arithmetic (lit_avx2.h, as its pixel kernel), then output() as the draw
 * chose it (kr_drawx.write8; out1 2: nothing). */
bool kr_shade_lit_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_drawx *dx = p->dx;
    if (!dx->write8)
        return true;
    /* the constants as the pixel kernel reads them: the draw's cb0 */
    kr_lit_constants kc;
    kr_lit_constants_from(dx->ps_cb, dx->ps_cb_size, &kc);
    kr_lit8 lk;
    kr_lit8_init(&kc, &lk);
    interp8 k;
    interp8_init(p, x, y, &k);
    /* the normal first, then each color channel into its product and out:
     * few values live at once */
    __m256 n[3][2], d[2];
    for (int c = 0; c < 3; c++)
        interp8_comp(&k, p->attr + 3 * (4 + c), n[c]);
    for (int h = 0; h < 2; h++)
        d[h] = kr_lit8_d(&lk, n[0][h], n[1][h], n[2][h]);
    _Alignas(32) float out[4 * B];
    for (int c = 0; c < 4; c++) {
        __m256 col[2];
        interp8_comp(&k, p->attr + 3 * c, col);
        for (int h = 0; h < 2; h++)
            _mm256_store_ps(out + c * B + 8 * h,
                            c < 3 ? kr_lit8_rgb(&lk, c, col[h], d[h]) : col[h]);
    }
    dx->write8(&dx->s->blend[0], dx->s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, out, mask);
    return true;
}

/* tile.c's block_depth at the pixel centers of a triangle's block, two
 * rows per vector: (z0 + z1 * fx) + z2 * fy, then z < zmin ? zmin :
 * min(zmax, z) (NaN stays), the same operations lane by lane. */
void kr_block_depth_avx2(const kr_prim *p, int x, int y, float *z)
{
    const kd_state *s = p->dx->s;
    const __m256 fx = _mm256_sub_ps(
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32(x),
                                                          _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3))),
                      v8_set1(0.5f)),
        v8_set1(p->ox));
    const __m256 zmin = v8_set1(s->vp.min_depth), zmax = v8_set1(s->vp.max_depth);
    const __m256 z01 = _mm256_add_ps(v8_set1(p->z[0]), _mm256_mul_ps(v8_set1(p->z[1]), fx));
    for (int h = 0; h < 2; h++) {
        __m256 fy = _mm256_sub_ps(_mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(
                                                    _mm256_set1_epi32(y + 2 * h), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1))),
                                                v8_set1(0.5f)),
                                  v8_set1(p->oy));
        __m256 zr = _mm256_add_ps(z01, _mm256_mul_ps(v8_set1(p->z[2]), fy));
        __m256 t = _mm256_min_ps(zmax, zr); /* zmax < zr ? zmax : zr */
        _mm256_storeu_ps(z + 8 * h, _mm256_blendv_ps(t, zmin, v8_lt(zr, zmin)));
    }
}

/* ---- the D32_FLOAT depth test ---- */

/* Bit i of m (i = 0..7) as lane i's mask: all ones or zero. */
static inline __m256 bits8(uint32_t m)
{
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    return _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32((int32_t)m), bit), bit));
}

/* compare_f(func, z, d) in each lane of both halves of a block: C's
 * comparisons, false for NaN except != (the ordered predicates; NOT_EQUAL
 * the unordered one). One switch for the two halves. */
static inline void depth_cmp16(kiln_compare func, const __m256 z[2], const __m256 d[2], __m256 c[2])
{
#define KR_CMP2(pred)                                                                              \
    do {                                                                                           \
        c[0] = _mm256_cmp_ps(z[0], d[0], pred);                                                    \
        c[1] = _mm256_cmp_ps(z[1], d[1], pred);                                                    \
    } while (0)
    switch (func) {
    case KILN_COMPARE_NEVER:
        c[0] = c[1] = _mm256_setzero_ps();
        break;
    case KILN_COMPARE_LESS:
        KR_CMP2(_CMP_LT_OQ);
        break;
    case KILN_COMPARE_EQUAL:
        KR_CMP2(_CMP_EQ_OQ);
        break;
    case KILN_COMPARE_LESS_EQUAL:
        KR_CMP2(_CMP_LE_OQ);
        break;
    case KILN_COMPARE_GREATER:
        KR_CMP2(_CMP_GT_OQ);
        break;
    case KILN_COMPARE_NOT_EQUAL:
        KR_CMP2(_CMP_NEQ_UQ);
        break;
    case KILN_COMPARE_GREATER_EQUAL:
        KR_CMP2(_CMP_GE_OQ);
        break;
    default:
        c[0] = c[1] = _mm256_castsi256_ps(_mm256_set1_epi32(-1));
        break;
    }
#undef KR_CMP2
}

/* The whole-block case of kr_depth_d32_avx2: the block lies inside the
 * target (and in one tile, which only this thread touches), so its four
 * rows are read whole and written back whole, the old depth in the lanes
 * that do not pass. No branch on the rows: with small triangles their
 * masks change from block to block and mispredict. */
static inline uint32_t depth_whole(kiln_compare func, bool write, uint8_t *row, size_t pitch,
                                   const float *z, uint32_t mask)
{
    uint32_t pass = 0;
    __m256 dv[2], zv[2], pm[2];
    for (int h = 0; h < 2; h++) {
        uint8_t *r = row + (size_t)(2 * h) * pitch;
        dv[h] = _mm256_loadu2_m128((const float *)(const void *)(r + pitch),
                                   (const float *)(const void *)r);
        zv[h] = _mm256_loadu_ps(z + 8 * h);
    }
    depth_cmp16(func, zv, dv, pm);
    for (int h = 0; h < 2; h++) {
        pm[h] = _mm256_and_ps(pm[h], bits8(mask >> (8 * h) & 0xffu));
        pass |= (uint32_t)_mm256_movemask_ps(pm[h]) << (8 * h);
    }
    if (write && pass)
        for (int h = 0; h < 2; h++) {
            uint8_t *r = row + (size_t)(2 * h) * pitch;
            _mm256_storeu2_m128((float *)(void *)(r + pitch), (float *)(void *)r,
                                _mm256_blendv_ps(dv[h], zv[h], pm[h]));
        }
    return pass;
}

/* kr_depth_d32_avx2 at the target's right or bottom edge: only the
 * covered pixels are read and written (masked loads and stores); an
 * uncovered row points at the block's first row, inside the target, and
 * its masked load and store touch nothing. A call of its own, so that the
 * whole blocks' path keeps a small frame. */
static __attribute__((noinline)) uint32_t depth_edge(kiln_compare func, bool write, uint8_t *ds,
                                                     size_t pitch, int x, int y, const float *z,
                                                     uint32_t mask)
{
    float *d[4];
    __m128 r[4];
    for (int i = 0; i < 4; i++) {
        uint32_t m = mask >> (4 * i) & 15u;
        d[i] = (float *)(void *)(ds + (size_t)(y + (m ? i : 0)) * pitch) + x;
        r[i] = _mm_maskload_ps(d[i], kr_row_lanes(m));
    }
    const __m256 dv[2] = {_mm256_set_m128(r[1], r[0]), _mm256_set_m128(r[3], r[2])};
    const __m256 zv[2] = {_mm256_loadu_ps(z), _mm256_loadu_ps(z + 8)};
    __m256 c[2];
    depth_cmp16(func, zv, dv, c);
    uint32_t pass = 0;
    for (int h = 0; h < 2; h++)
        pass |= (uint32_t)_mm256_movemask_ps(_mm256_and_ps(c[h], bits8(mask >> (8 * h) & 0xffu)))
                << (8 * h);
    if (!write)
        return pass;
    for (int i = 0; i < 4; i++) {
        uint32_t m = pass >> (4 * i) & 15u;
        _mm_maskstore_ps(d[i], kr_row_lanes(m),
                         i & 1 ? _mm256_extractf128_ps(zv[i >> 1], 1)
                               : _mm256_castps256_ps128(zv[i >> 1]));
    }
    return pass;
}

uint32_t kr_depth_d32_avx2(kiln_compare func, bool write, bool whole, uint8_t *ds, size_t pitch,
                           int x, int y, const float *z, uint32_t mask)
{
    if (whole)
        return depth_whole(func, write, ds + (size_t)y * pitch + (size_t)x * 4, pitch, z, mask);
    return depth_edge(func, write, ds, pitch, x, y, z, mask);
}

/* ---- the D24_UNORM_S8_UINT depth test without stencil ---- */

/* tile.c's depth_to_unorm24 in each lane: 0 where !(z > 0) (NaN too),
 * 0xffffff where z >= 1, else (uint32)((double)z * 16777215.0 + 0.5) (the
 * product of a float and a 24-bit integer is exact in double, so is the
 * sum). */
static inline __m256i z24_8(__m256 z)
{
    const __m256d k = _mm256_set1_pd(16777215.0), half = _mm256_set1_pd(0.5);
    __m128i lo = _mm256_cvttpd_epi32(
        _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(z)), k), half));
    __m128i hi = _mm256_cvttpd_epi32(
        _mm256_add_pd(_mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(z, 1)), k), half));
    __m256i v = _mm256_setr_m128i(lo, hi);
    v = _mm256_and_si256(v, _mm256_castps_si256(_mm256_cmp_ps(z, _mm256_setzero_ps(), _CMP_GT_OQ)));
    return _mm256_blendv_epi8(v, _mm256_set1_epi32(0xffffff),
                              _mm256_castps_si256(_mm256_cmp_ps(z, v8_set1(1.0f), _CMP_GE_OQ)));
}

/* The 24-bit depths of eight words as floats (exact: below 2^24), so that
 * depth_cmp16's float predicates give the unsigned comparisons of
 * compare_u (no NaN here). */
static inline __m256 d24_8(__m256i w)
{
    return _mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xffffff)));
}

/* Each word's stencil byte with the depth z24 below it. */
static inline __m256i d24_word(__m256i w, __m256i z24)
{
    return _mm256_or_si256(_mm256_and_si256(w, _mm256_set1_epi32((int32_t)0xff000000u)), z24);
}

uint32_t kr_depth_d24_avx2(kiln_compare func, bool write, bool whole, uint8_t *ds, size_t pitch,
                           int x, int y, const float *z, uint32_t mask)
{
    __m256i w[2], zi[2];
    __m256 dv[2], zv[2], pm[2];
    uint8_t *row[4];
    for (int i = 0; i < 4; i++) /* an uncovered row at an edge: the first one (masked: untouched) */
        row[i] =
            ds + (size_t)(y + (whole || (mask >> (4 * i) & 15u) ? i : 0)) * pitch + (size_t)x * 4;
    for (int h = 0; h < 2; h++) {
        if (whole) {
            w[h] = _mm256_loadu2_m128i((const __m128i *)(const void *)row[2 * h + 1],
                                       (const __m128i *)(const void *)row[2 * h]);
        } else {
            __m128i a = _mm_maskload_epi32((const int *)(const void *)row[2 * h],
                                           kr_row_lanes(mask >> (8 * h) & 15u));
            __m128i b = _mm_maskload_epi32((const int *)(const void *)row[2 * h + 1],
                                           kr_row_lanes(mask >> (8 * h + 4) & 15u));
            w[h] = _mm256_setr_m128i(a, b);
        }
        dv[h] = d24_8(w[h]);
        zi[h] = z24_8(_mm256_loadu_ps(z + 8 * h));
        zv[h] = _mm256_cvtepi32_ps(zi[h]);
    }
    depth_cmp16(func, zv, dv, pm);
    uint32_t pass = 0;
    for (int h = 0; h < 2; h++) {
        pm[h] = _mm256_and_ps(pm[h], bits8(mask >> (8 * h) & 0xffu));
        pass |= (uint32_t)_mm256_movemask_ps(pm[h]) << (8 * h);
    }
    if (!write || !pass)
        return pass;
    for (int h = 0; h < 2; h++) {
        __m256i nw = _mm256_blendv_epi8(w[h], d24_word(w[h], zi[h]), _mm256_castps_si256(pm[h]));
        if (whole) {
            _mm256_storeu2_m128i((__m128i *)(void *)row[2 * h + 1], (__m128i *)(void *)row[2 * h],
                                 nw);
        } else {
            _mm_maskstore_epi32((int *)(void *)row[2 * h], kr_row_lanes(pass >> (8 * h) & 15u),
                                _mm256_castsi256_si128(nw));
            _mm_maskstore_epi32((int *)(void *)row[2 * h + 1],
                                kr_row_lanes(pass >> (8 * h + 4) & 15u),
                                _mm256_extracti128_si256(nw, 1));
        }
    }
    return pass;
}

/* The blend of the covered pixels of a block; bgra and kind are
 * constants in each copy (kr_blend_rgba8_avx2 picks one): kind 0 writes
 * without blending (a partial write mask), 1 and 2 blend both the color
 * and the alpha part with ADD of (ONE, ONE) or of (SRC_ALPHA,
 * INV_SRC_ALPHA) (channel()'s own cases, folded), 3 any factors and ops. */
#define BLEND_INLINE static inline __attribute__((always_inline))
BLEND_INLINE void blend_rows(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                             const int bgra, const int kind, int x, int y, const float *col, uint32_t mask)
{
    /* channel c lives in byte pos[c] of a pixel's word */
    const int pos[4] = {bgra ? 2 : 0, 1, bgra ? 0 : 2, 3};
    const uint32_t keep = kr_keep_bytes(bl->write_mask, bgra);
    const __m256i keepv = _mm256_set1_epi32((int)keep), lo8 = _mm256_set1_epi32(0xff);
    const v8 zero = v8_set1(0.0f), one = v8_set1(1.0f), k255 = v8_set1(255.0f), half = v8_set1(0.5f);
    for (int h = 0; h < 2; h++) {
        uint32_t m0 = mask >> (8 * h) & 15u, m1 = mask >> (8 * h + 4) & 15u;
        if (!(m0 | m1))
            continue;
        uint8_t *dst = base + (size_t)(y + 2 * h) * pitch + (size_t)x * 4;
        const bool both = (m0 & m1) == 15u;
        __m256i old = both ? _mm256_loadu2_m128i((const __m128i *)(const void *)(dst + pitch),
                                                 (const __m128i *)(const void *)dst)
                           : _mm256_setr_m128i(kr_load_row(dst, m0), kr_load_row(dst + pitch, m1));
        v8 src[4], out[4];
        for (int c = 0; c < 4; c++)
            src[c] = _mm256_loadu_ps(col + c * B + 8 * h);
        if (kind) {
            v8 d[4];
            for (int c = 0; c < 4; c++) {
                d[c] = kr_unorm8_8(_mm256_and_si256(_mm256_srli_epi32(old, 8 * pos[c]), lo8));
                /* src < 0 ? 0 : src > 1 ? 1 : src, NaN and -0 kept: max and
                 * min return their second operand for NaN and for equal
                 * operands (0 and -0, 1 and 1) */
                src[c] = _mm256_min_ps(one, _mm256_max_ps(zero, src[c]));
            }
            for (int c = 0; c < 4; c++) {
                if (kind == 1)
                    out[c] = channel(KILN_BLEND_ONE, KILN_BLEND_ONE, KILN_BLEND_OP_ADD, c, src, d, k);
                else if (kind == 2)
                    out[c] = channel(KILN_BLEND_SRC_ALPHA, KILN_BLEND_INV_SRC_ALPHA, KILN_BLEND_OP_ADD, c,
                                     src, d, k);
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
        __m256i ch[4];
        for (int c = 0; c < 4; c++) {
            v8 v = _mm256_min_ps(_mm256_max_ps(out[c], zero), one);
            ch[c] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v, k255), half));
        }
        __m256i px = _mm256_or_si256(
            _mm256_or_si256(_mm256_slli_epi32(ch[0], 8 * pos[0]), _mm256_slli_epi32(ch[1], 8)),
            _mm256_or_si256(_mm256_slli_epi32(ch[2], 8 * pos[2]), _mm256_slli_epi32(ch[3], 24)));
        if (keep)
            px = _mm256_or_si256(_mm256_andnot_si256(keepv, px), _mm256_and_si256(old, keepv));
        if (both) {
            _mm256_storeu2_m128i((__m128i *)(void *)(dst + pitch), (__m128i *)(void *)dst, px);
        } else {
            kr_store_row(dst, _mm256_castsi256_si128(px), m0);
            kr_store_row(dst + pitch, _mm256_extracti128_si256(px, 1), m1);
        }
    }
}

/* The eight copies of blend_rows, byte order and kind constant in each. */
#define BLEND_COPY(name, bgra, kind)                                                                \
    static void name(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch, int x,  \
                     int y, const float *col, uint32_t mask)                                         \
    {                                                                                                \
        blend_rows(bl, k, base, pitch, bgra, kind, x, y, col, mask);                                 \
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

static kr_write8_fn blend_select(const kd_blend_rt *bl, bool bgra)
{
    static const kr_write8_fn copies[4][2] = {{blend_rgba_mask, blend_bgra_mask},
                                              {blend_rgba_add, blend_bgra_add},
                                              {blend_rgba_alpha, blend_bgra_alpha},
                                              {blend_rgba_any, blend_bgra_any}};
    return copies[kr_blend_kind(bl)][bgra ? 1 : 0];
}

void kr_blend_rgba8_avx2(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch,
                         bool bgra, int x, int y, const float *col, uint32_t mask)
{
    blend_select(bl, bgra)(bl, k, base, pitch, x, y, col, mask);
}

/* No blending, all channels written: output_rgba8's conversion (clamp
 * with max then min, so NaN gives 0; (int)(c * 255 + 0.5)) lane by lane,
 * stored without reading the target. */
/* Two rows (h: 0 or 1) of the block as packed words. */
static inline __m256i pack_rows(const float *lo, const float *col, const float *hi, int h)
{
    const v8 zero = v8_set1(0.0f), one = v8_set1(1.0f), k255 = v8_set1(255.0f), half = v8_set1(0.5f);
    const v8 in[4] = {_mm256_loadu_ps(lo + 8 * h), _mm256_loadu_ps(col + B + 8 * h),
                      _mm256_loadu_ps(hi + 8 * h), _mm256_loadu_ps(col + 3 * B + 8 * h)};
    __m256i ch[4];
    for (int c = 0; c < 4; c++) {
        v8 v = _mm256_min_ps(_mm256_max_ps(in[c], zero), one);
        ch[c] = _mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v, k255), half));
    }
    return _mm256_or_si256(_mm256_or_si256(ch[0], _mm256_slli_epi32(ch[1], 8)),
                           _mm256_or_si256(_mm256_slli_epi32(ch[2], 16), _mm256_slli_epi32(ch[3], 24)));
}

void kr_store_rgba8_avx2(uint8_t *base, uint32_t pitch, bool bgra, int x, int y, const float *col,
                         uint32_t mask)
{
    /* the channels stored in bytes 0 and 2 */
    const float *lo = col + (bgra ? 2 : 0) * B, *hi = col + (bgra ? 0 : 2) * B;
    uint8_t *dst = base + (size_t)y * pitch + (size_t)x * 4;
    if (mask == 0xffffu) { /* most blocks: four plain row stores */
        __m256i p0 = pack_rows(lo, col, hi, 0), p1 = pack_rows(lo, col, hi, 1);
        _mm256_storeu2_m128i((__m128i *)(void *)(dst + pitch), (__m128i *)(void *)dst, p0);
        _mm256_storeu2_m128i((__m128i *)(void *)(dst + 3 * (size_t)pitch),
                             (__m128i *)(void *)(dst + 2 * (size_t)pitch), p1);
        return;
    }
    for (int h = 0; h < 2; h++, dst += 2 * (size_t)pitch) {
        uint32_t m0 = mask >> (8 * h) & 15u, m1 = mask >> (8 * h + 4) & 15u;
        if (!(m0 | m1))
            continue;
        __m256i px = pack_rows(lo, col, hi, h);
        kr_store_row(dst, _mm256_castsi256_si128(px), m0);
        kr_store_row(dst + pitch, _mm256_extracti128_si256(px, 1), m1);
    }
}

static void store_rgba(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch, int x, int y,
                       const float *col, uint32_t mask)
{
    (void)bl;
    (void)k;
    kr_store_rgba8_avx2(base, pitch, false, x, y, col, mask);
}

static void store_bgra(const kd_blend_rt *bl, const float k[4], uint8_t *base, uint32_t pitch, int x, int y,
                       const float *col, uint32_t mask)
{
    (void)bl;
    (void)k;
    kr_store_rgba8_avx2(base, pitch, true, x, y, col, mask);
}

kr_write8_fn kr_write8_select(const kd_blend_rt *bl, bool bgra)
{
    if (!bl->write_mask)
        return NULL;
    if (!bl->enable && bl->write_mask == 15u)
        return bgra ? store_bgra : store_rgba;
    return blend_select(bl, bgra);
}

/* ---- the general pixel path over a rect (span_general.h) ---- */

static inline void zero_output8(float *c)
{
    for (int i = 0; i < 4 * B; i += 8)
        _mm256_store_ps(c + i, _mm256_setzero_ps());
}

#define SPAN_NAME kr_general_span_avx2
#define SPAN_DEPTH kr_block_depth_avx2
#define SPAN_INTERP(p, x, y, n, m, v) interp_block8(p, x, y, n, m, v, false)
#define SPAN_ZERO zero_output8
#include "span_general.h"
#undef SPAN_NAME
#undef SPAN_DEPTH
#undef SPAN_INTERP
#undef SPAN_ZERO

#else

/* Non-x86 builds never call it (an empty file is not ISO C). */
typedef int kr_pixel_avx2_unused;

#endif
