/*
 * The bilinear RGBA8 rows kernel at the AVX-512 level: a whole 4x4 block
 * (16 pixels) per vector, each 128-bit lane one row doing exactly what
 * sample.c's SSE2 kernel (rgba8_4px_sums) does for a row of 4, as the AVX2
 * kernel's lanes do (fused_avx2.c: split8, sums8, sums8_each, weigh8,
 * rows8). The lane-wise operations (packs, unpacks, shuffles, madd) keep
 * their 128-bit lane semantics at 512 bits, the comparisons become masks,
 * so the sums S, and the floats S / (255 * 65536), are the same bits.
 * Compiled with AVX-512 F, BW, VL and DQ (effects.cmake); sample.c and
 * fused_avx2.c call it only when the chosen SIMD level is AVX512.
 *
 * No contraction into fused multiply-adds (off here and in effects.cmake):
 * the only FMAs are quot16's, written out, and first16's, which only
 * chooses a window to try.
 */
#include "../resources/texel.h"
#include "effects.h"
#include "fused.h"
#include "prim.h"

#if KR_EFFECTS_X86

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "blend_avx512.h"

#include <immintrin.h>
#include <string.h>

#define WIDE_INLINE static inline __attribute__((always_inline))

/* The kernels' integer constants as memory operands. Written as
 * _mm512_set1_*, GCC builds each in every call from an immediate moved
 * to a general register and broadcast from there: two instructions, one
 * of them on the vector units, ahead of its first use. Read from here,
 * each is an operand of the instruction that uses it, read by a load
 * unit. Neither const nor static, so that GCC cannot fold them back into
 * immediates (it does so with a static object it sees is never written);
 * never written. */
#define KR_X16(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
#define KR_W2(v) ((uint32_t)(uint16_t)(v)*0x10001u) /* a word twice */
typedef struct kr_k512_consts {
    _Alignas(64) uint32_t two16[16];
    _Alignas(64) uint32_t k256_16[16];
    _Alignas(64) uint32_t lo16[16];
    _Alignas(64) uint32_t bias16[16];
    _Alignas(64) uint32_t one32[16];
    _Alignas(64) uint32_t four32[16];
    _Alignas(64) uint32_t five32[16];
    _Alignas(64) uint32_t unbias32[16];
} kr_k512_consts;
kr_k512_consts kr_k512 = {
    {KR_X16(KR_W2(2))},
    {KR_X16(KR_W2(256))},
    {KR_X16(KR_W2(0x00FF))},
    {KR_X16(KR_W2(0x8000))},
    {KR_X16(1)},
    {KR_X16(4)},
    {KR_X16(5)},
    {KR_X16(32768 * 256)},
};
#define KR_K(name) _mm512_load_si512((const void *)kr_k512.name)

/* split8 of fused_avx2.c, sixteen lanes: floor and the fraction in 1/256.
 * The floor as an integer is one conversion rounding down, beside the
 * floor as a float for the fraction (split8 converts that one, a step
 * later): both exact, every x here being within 2^30. */
WIDE_INLINE __m512i split16(__m512 c, __m512i *frac)
{
    const __m512 lim = _mm512_set1_ps(1073741824.0f), nlim = _mm512_set1_ps(-1073741824.0f);
    /* max then min as there: a NaN takes the second operand, nlim */
    __m512 x = _mm512_min_ps(_mm512_max_ps(c, nlim), lim);
    __m512 fl = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_add_ps(_mm512_mul_ps(_mm512_sub_ps(x, fl), _mm512_set1_ps(256.0f)),
                             _mm512_set1_ps(0.5f));
    *frac = _mm512_cvttps_epi32(f);
    return _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
}

/* split16 for sums16_uv under CLAMP on both axes, whose start indices are
 * packed to 16 bits with saturation and clamped to [0, hi] after: with x
 * not clamped to 2^30 first, the same words and fractions. A NaN or an x
 * at or under -2^31 converts to INT_MIN (the word -32768, as -2^30's),
 * one at or over 2^31 to INT_MAX (32767, as 2^30's): the compare is
 * beside the conversion. Between 2^23 and 2^31 x is a whole number, its
 * fraction 0, as 2^30's; an infinite x's fraction is NaN, converted to
 * INT_MIN, which sums16_uv replaces (lt: 0, gt: 256) as it does 2^30's 0
 * (the masks depend on the word alone; gt holds for 32767 because hi is
 * at most 8190, a level being at most 8192 texels wide). Not under WRAP:
 * x & mx differs from 2^30 & mx between 2^30 and 2^31. No exception
 * flags beyond split16's (the subtraction and the truncation of an
 * infinite x's NaN would raise FE_INVALID). */
WIDE_INLINE __m512i split16_clamp2(__m512 x, __m512i *frac)
{
    __m512 fl = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m512 f = _mm512_add_ps(
        _mm512_mul_ps(_mm512_sub_round_ps(x, fl, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                      _mm512_set1_ps(256.0f)),
        _mm512_set1_ps(0.5f));
    *frac = _mm512_cvtt_roundps_epi32(f, _MM_FROUND_NO_EXC);
    const __mmask16 big = _mm512_cmp_ps_mask(x, _mm512_set1_ps(2147483648.0f), _CMP_GE_OQ);
    return _mm512_mask_mov_epi32(
        _mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), big,
        _mm512_set1_epi32(INT32_MAX));
}

/* A level's constants per 128-bit lane: every lane alike for the rows
 * kernels (lvk8's, one level), a quad's level per lane for the quads
 * kernel (lvk8_pair's, four levels). */
typedef struct lvk16 {
    const uint8_t *base[4], *base2[4]; /* per lane */
    __m512 fw, fh;
    __m512i mx, my, hi, seam, mul;
    __m512i lx, ly, pitch;
    /* window16's: the greatest first column and row a 4x4 window inside
     * the level can have (negative: none fits), the row pitch; set for
     * one level (lvk16_init) */
    int32_t wx, wy;
    int32_t mx1, my1; /* mx, my as scalars (first16) */
    uint32_t pitch1;
    bool direct;
} lvk16;

/* 16-bit words [x x x x y y y y] in every 128-bit lane. */
static inline __m512i xy16(int16_t x, int16_t y)
{
    /* x | y << 16 broadcast, its two words spread by one byte shuffle
     * (fewer instructions than building the pattern word by word) */
    const __m512i spread =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3));
    return _mm512_shuffle_epi8(
        _mm512_set1_epi32((int32_t)((uint32_t)(uint16_t)x | (uint32_t)(uint16_t)y << 16)), spread);
}

WIDE_INLINE void lvk16_init(lvk16 *k, const kr_fused_level *L)
{
    for (int i = 0; i < 4; i++) {
        k->base[i] = L->base;
        k->base2[i] = L->base + L->pitch;
    }
    k->fw = _mm512_set1_ps(L->fw);
    k->fh = _mm512_set1_ps(L->fh);
    k->mx = _mm512_set1_epi32(L->mx);
    k->my = _mm512_set1_epi32(L->my);
    k->hi = xy16(L->hx, L->hy);
    k->seam = xy16(L->sx, L->sy);
    k->mul = _mm512_set1_epi32((int32_t)((uint32_t)L->pitch << 16 | 4u));
    k->lx = _mm512_set1_epi32(L->lx);
    k->ly = _mm512_set1_epi32(L->ly);
    k->pitch = _mm512_set1_epi32((int32_t)L->pitch);
    k->mx1 = L->mx;
    k->my1 = L->my;
    k->wx = L->lx - 3;
    k->wy = L->ly - 3;
    k->pitch1 = L->pitch;
    k->direct = L->direct;
}

/* weigh8 of fused_avx2.c, four lanes: t0..t3 the top-left, top-right,
 * bottom-left and bottom-right texels of each row's four pixels, f16 the
 * fractions (x then y, 16-bit, per lane). */
WIDE_INLINE void weigh16(__m512i t0, __m512i t1, __m512i t2, __m512i t3, __m512i f16,
                         __m512i sum[4])
{
    __m512i g16 = _mm512_sub_epi16(KR_K(k256_16), f16);
    __m512i fy = _mm512_unpackhi_epi16(f16, f16), gy = _mm512_unpackhi_epi16(g16, g16);
    __m512i wx = _mm512_unpacklo_epi16(g16, f16);
    __m512i wx01 = _mm512_unpacklo_epi32(wx, wx), wx23 = _mm512_unpackhi_epi32(wx, wx);
    const __m512i lo = KR_K(lo16), bias = KR_K(bias16);
    __m512i le = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_and_si512(t0, lo), gy),
                                  _mm512_mullo_epi16(_mm512_and_si512(t2, lo), fy));
    __m512i re = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_and_si512(t1, lo), gy),
                                  _mm512_mullo_epi16(_mm512_and_si512(t3, lo), fy));
    __m512i lod = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(t0, 8), gy),
                                   _mm512_mullo_epi16(_mm512_srli_epi16(t2, 8), fy));
    __m512i rod = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_srli_epi16(t1, 8), gy),
                                   _mm512_mullo_epi16(_mm512_srli_epi16(t3, 8), fy));
    le = _mm512_xor_si512(le, bias);
    re = _mm512_xor_si512(re, bias);
    lod = _mm512_xor_si512(lod, bias);
    rod = _mm512_xor_si512(rod, bias);
    sum[0] = _mm512_madd_epi16(_mm512_unpacklo_epi16(le, re), wx01);
    sum[1] = _mm512_madd_epi16(_mm512_unpackhi_epi16(le, re), wx23);
    sum[2] = _mm512_madd_epi16(_mm512_unpacklo_epi16(lod, rod), wx01);
    sum[3] = _mm512_madd_epi16(_mm512_unpackhi_epi16(lod, rod), wx23);
}

/* 8 bytes at base + a (low half) and base + b (high half). */
static inline __m128i pair(const uint8_t *base, uint32_t a, uint32_t b)
{
    return _mm_castpd_si128(
        _mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)(const void *)(base + a))),
                     (const double *)(const void *)(base + b)));
}

/* Lanes 0..3 from four 128-bit values. */
static inline __m512i lanes4(__m128i l0, __m128i l1, __m128i l2, __m128i l3)
{
    __m256i lo = _mm256_inserti128_si256(_mm256_castsi128_si256(l0), l1, 1);
    __m256i hi = _mm256_inserti128_si256(_mm256_castsi128_si256(l2), l3, 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
}

/* One texel row's pairs of the 16 pixels, as sums8 shuffles them per lane:
 * *l = [L0 L1 L2 L3], *r = [R0 R1 R2 R3] in each row's lane. */
WIDE_INLINE void row_pairs(const uint8_t *const base[4], const uint32_t o[16], __m512i *l,
                           __m512i *r)
{
    __m512i ta =
        _mm512_shuffle_epi32(lanes4(pair(base[0], o[0], o[1]), pair(base[1], o[4], o[5]),
                                    pair(base[2], o[8], o[9]), pair(base[3], o[12], o[13])),
                             _MM_PERM_DBCA);
    __m512i tb =
        _mm512_shuffle_epi32(lanes4(pair(base[0], o[2], o[3]), pair(base[1], o[6], o[7]),
                                    pair(base[2], o[10], o[11]), pair(base[3], o[14], o[15])),
                             _MM_PERM_DBCA);
    *l = _mm512_unpacklo_epi64(ta, tb);
    *r = _mm512_unpackhi_epi64(ta, tb);
}

/* row_pairs' four texels of each pixel (top-left, top-right, bottom-left,
 * bottom-right, a 32-bit word per pixel in pixel order) from the 4x4
 * window of the level whose first column is xs and first row ys, read as
 * four 16-byte rows, when every pixel's x0 (c16's words 0-3) lies in
 * [xs, xs + 2] and its y0 (words 4-7) in [ys, ys + 2], and the window in
 * the level (xs <= wx, ys <= wy, the callers' part). Four permutes
 * instead of 32 8-byte loads and their shuffles: the same texel bytes, so
 * the same sums. False (nothing read) otherwise. */
WIDE_INLINE bool window_at(const lvk16 *k, __m512i c16, int32_t xs, int32_t ys, __m512i t[4])
{
    /* the window inside the level (its callers pull xs and ys back to wx
     * and wy already: checked here all the same, off the vector chain),
     * and c16 - (xs, ys) as unsigned words: below xs (ys) wraps above 2 */
    if (xs < 0 || ys < 0 || xs > k->wx || ys > k->wy ||
        _mm512_cmpgt_epu16_mask(_mm512_sub_epi16(c16, xy16((int16_t)xs, (int16_t)ys)), KR_K(two16)))
        return false;
    const uint8_t *r0 = k->base[0] + (size_t)ys * k->pitch1 + (size_t)xs * 4;
    const size_t pitch = k->pitch1;
    const __m512i win = lanes4(_mm_loadu_si128((const __m128i *)(const void *)r0),
                               _mm_loadu_si128((const __m128i *)(const void *)(r0 + pitch)),
                               _mm_loadu_si128((const __m128i *)(const void *)(r0 + 2 * pitch)),
                               _mm_loadu_si128((const __m128i *)(const void *)(r0 + 3 * pitch)));
    /* each pixel's top-left texel in the window: (y0 - ys) * 4 + x0 - xs */
    const __m512i zero = _mm512_setzero_si512();
    __m512i idx =
        _mm512_sub_epi32(_mm512_add_epi32(_mm512_slli_epi32(_mm512_unpackhi_epi16(c16, zero), 2),
                                          _mm512_unpacklo_epi16(c16, zero)),
                         _mm512_set1_epi32(ys * 4 + xs));
    t[0] = _mm512_permutexvar_epi32(idx, win);
    t[1] = _mm512_permutexvar_epi32(_mm512_add_epi32(idx, KR_K(one32)), win);
    t[2] = _mm512_permutexvar_epi32(_mm512_add_epi32(idx, KR_K(four32)), win);
    t[3] = _mm512_permutexvar_epi32(_mm512_add_epi32(idx, KR_K(five32)), win);
    return true;
}

/* window_at for a block whose texels all lie within one window (a
 * texture magnified about 1.5x or more), its first column and row pulled
 * back from the level's last (the pairs end there at the most): first at
 * (xs, ys), first16's place from the block's first pixel, which holds its
 * least x0 and y0 whenever u and v do not fall with x and y (no
 * mirroring); else at the least over the block from c16, four reductions
 * later (with every block waiting for them, bench (c/ps) took 1.05-1.14x
 * and (c+) 1.18x as long). The texels come from each pixel's own c16
 * words, checked against the window loaded, so any window that passes
 * gives the pairs' sums. */
WIDE_INLINE bool window16(const lvk16 *k, __m512i c16, int32_t xs, int32_t ys, __m512i t[4])
{
    if (window_at(k, c16, xs, ys, t))
        return true;
    /* the least of each word over the rows, then over the four x words
     * and the four y words: words 0 and 4 */
    __m512i mn = _mm512_min_epi16(c16, _mm512_shuffle_i32x4(c16, c16, _MM_SHUFFLE(1, 0, 3, 2)));
    mn = _mm512_min_epi16(mn, _mm512_shuffle_i32x4(mn, mn, _MM_SHUFFLE(2, 3, 0, 1)));
    mn = _mm512_min_epi16(mn, _mm512_shuffle_epi32(mn, _MM_PERM_CDAB));
    mn = _mm512_min_epi16(mn, _mm512_srli_epi32(mn, 16)); /* c16 >= 0 here */
    const __m128i lo = _mm512_castsi512_si128(mn);
    const int32_t xmin = _mm_extract_epi16(lo, 0), ymin = _mm_extract_epi16(lo, 4);
    const int32_t xm = xmin < k->wx ? xmin : k->wx, ym = ymin < k->wy ? ymin : k->wy;
    if (xm == xs && ym == ys) /* the same window: already refused */
        return false;
    return window_at(k, c16, xm, ym, t);
}

/* The window's first column (row) for window16 to try, a scalar: the
 * first pixel's start index on one axis (cv: the coordinates, lane 0 the
 * first pixel's, or c, when not NULL, that coordinate in memory, read on
 * its own so as not to wait for cv's two halves; scale: the level's
 * size), masked with m as c16's (WRAP: size - 1; CLAMP: -1, no change,
 * and left out where clamp2 says both axes are CLAMP), then pulled back
 * to `last` (wx or wy) but not raised to 0: a negative one (under CLAMP,
 * a block at the level's left or top edge, a NaN or an infinity) fails
 * window_at's first test, and window16's reductions place the window.
 * Worked out in scalar registers beside the vector chain, so that the
 * window's rows load while c16 is still being worked out, instead of
 * after its first words were extracted (docs/raster.md, stop 49), and
 * with one rounding (a fused multiply-add) where c16's product and
 * difference have two. So it may differ from c16's first pixel by one
 * where the two roundings part, and wherever c16 saturates or clamps
 * (outside [0, hi], NaN, infinities): that only moves the window tried
 * first, window_at checking every pixel against the window it loads. */
WIDE_INLINE int32_t first16(__m512 cv, const float *c, __m512 scale, int32_t m, int32_t last,
                            int clamp2)
{
    const __m128 c0 = c ? _mm_load_ss(c) : _mm512_castps512_ps128(cv);
    __m128 x = _mm_fmadd_ss(c0, _mm512_castps512_ps128(scale), _mm_set_ss(-0.5f));
    int32_t i = _mm_cvt_roundss_si32(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    if (!clamp2)
        i &= m;
    return i < last ? i : last;
}

/* sums8 of fused_avx2.c for the four rows of a block: each texel byte's
 * integer sum S minus 32768 * 256, sum[0] = [b0 p0, b2 p0, b0 p1, b2 p1],
 * sum[1] the same for p2, p3, sum[2] and sum[3] bytes 1 and 3 likewise, in
 * each row's lane. False at a WRAP seam. pu and pv: the first pixel's u
 * and v in memory, for first16, or NULL (sums16: lane 0 of us and vs). */
WIDE_INLINE bool sums16_uv(const lvk16 *k, __m512 us, __m512 vs, const float *pu, const float *pv,
                           int clamp2, int win, __m512i sum[4])
{
    const __m512i zero = _mm512_setzero_si512(), k256 = KR_K(k256_16);
    const __m512 half = _mm512_set1_ps(0.5f);
    __m512i ax, ay;
    const __m512 cx = _mm512_sub_ps(_mm512_mul_ps(us, k->fw), half),
                 cy = _mm512_sub_ps(_mm512_mul_ps(vs, k->fh), half);
    __m512i x0 = clamp2 ? split16_clamp2(cx, &ax) : split16(cx, &ax);
    __m512i y0 = clamp2 ? split16_clamp2(cy, &ay) : split16(cy, &ay);
    __m512i c16 =
        clamp2 ? _mm512_packs_epi32(x0, y0)
               : _mm512_packs_epi32(_mm512_and_si512(x0, k->mx), _mm512_and_si512(y0, k->my));
    __m512i f16 = _mm512_packs_epi32(ax, ay);
    __mmask32 lt = _mm512_cmpgt_epi16_mask(zero, c16), gt = _mm512_cmpgt_epi16_mask(c16, k->hi);
    c16 = _mm512_min_epi16(_mm512_max_epi16(c16, zero), k->hi);
    /* sums8's max(f, gt & 256) and min(., ~lt & 256) */
    f16 = _mm512_min_epi16(_mm512_max_epi16(f16, _mm512_maskz_mov_epi16(gt, k256)),
                           _mm512_maskz_mov_epi16(~lt, k256));
    if (!clamp2 && _mm512_cmpeq_epi16_mask(c16, k->seam))
        return false;
    __m512i t[4];
    if (win && window16(k, c16, first16(us, pu, k->fw, k->mx1, k->wx, clamp2),
                        first16(vs, pv, k->fh, k->my1, k->wy, clamp2), t)) {
        weigh16(t[0], t[1], t[2], t[3], f16, sum);
        return true;
    }
    /* byte offsets x * 4 + y * pitch, four per row's lane */
    __m512i off =
        _mm512_madd_epi16(_mm512_unpacklo_epi16(c16, _mm512_bsrli_epi128(c16, 8)), k->mul);
    uint32_t o[16]; /* not over-aligned: no stack realignment per call */
    _mm512_storeu_si512((void *)o, off);
    __m512i t0, t1, t2, t3;
    row_pairs(k->base, o, &t0, &t1);
    row_pairs(k->base2, o, &t2, &t3);
    weigh16(t0, t1, t2, t3, f16, sum);
    return true;
}

WIDE_INLINE bool sums16(const lvk16 *k, __m512 us, __m512 vs, int clamp2, int win, __m512i sum[4])
{
    return sums16_uv(k, us, vs, NULL, NULL, clamp2, win, sum);
}

/* sums8_each of fused_avx2.c for the four rows: each texel index masked
 * (WRAP; -1 under CLAMP) and clamped to [0, size - 1], the fractions as
 * split16 leaves them. */
WIDE_INLINE void sums16_each(const lvk16 *k, __m512 us, __m512 vs, __m512i sum[4])
{
    const __m512i zero = _mm512_setzero_si512(), one = _mm512_set1_epi32(1);
    const __m512 half = _mm512_set1_ps(0.5f);
    __m512i ax, ay;
    __m512i x0 = split16(_mm512_sub_ps(_mm512_mul_ps(us, k->fw), half), &ax);
    __m512i y0 = split16(_mm512_sub_ps(_mm512_mul_ps(vs, k->fh), half), &ay);
#define KR_INDEX16(i, m, last)                                                                     \
    _mm512_min_epi32(_mm512_max_epi32(_mm512_and_si512(i, m), zero), last)
    __m512i xa = _mm512_slli_epi32(KR_INDEX16(x0, k->mx, k->lx), 2);
    __m512i xb = _mm512_slli_epi32(KR_INDEX16(_mm512_add_epi32(x0, one), k->mx, k->lx), 2);
    __m512i ra = _mm512_mullo_epi32(KR_INDEX16(y0, k->my, k->ly), k->pitch);
    __m512i rb = _mm512_mullo_epi32(KR_INDEX16(_mm512_add_epi32(y0, one), k->my, k->ly), k->pitch);
#undef KR_INDEX16
    uint32_t o[4][16], q[4][16];
    _mm512_storeu_si512((void *)o[0], _mm512_add_epi32(ra, xa));
    _mm512_storeu_si512((void *)o[1], _mm512_add_epi32(ra, xb));
    _mm512_storeu_si512((void *)o[2], _mm512_add_epi32(rb, xa));
    _mm512_storeu_si512((void *)o[3], _mm512_add_epi32(rb, xb));
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 16; i++)
            memcpy(&q[c][i], k->base[i / 4] + o[c][i], 4);
    weigh16(_mm512_loadu_si512((const void *)q[0]), _mm512_loadu_si512((const void *)q[1]),
            _mm512_loadu_si512((const void *)q[2]), _mm512_loadu_si512((const void *)q[3]),
            _mm512_packs_epi32(ax, ay), sum);
}

/* quot8 of fused_avx2.c: n / k as the rounded reciprocal's product plus
 * one exact-residual FMA step, the correctly rounded quotient. */
WIDE_INLINE __m512 quot16(__m512 n, __m512 k, __m512 r)
{
    __m512 y = _mm512_mul_ps(n, r);
    return _mm512_fmadd_ps(_mm512_fnmadd_ps(y, k, n), r, y);
}

/* 16 floats as two 8-float loads: the interpolation wrote them as two
 * 256-bit stores, and a 512-bit load over both cannot be forwarded from
 * them (it waits for both to reach the cache: a quarter of this kernel's
 * time on bench (c/ps) before this). */
static inline __m512 load16(const float *p)
{
    return _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(p)), _mm256_loadu_ps(p + 8),
                              1);
}

/* And back: the writers that read the results (pixel_avx2.c, the AVX2
 * effects) load them 8 floats at a time, which a 512-bit store does not
 * forward to either (measured: a third of kr_store_rgba8_avx2's time). */
static inline void store16(float *p, __m512 x)
{
    _mm256_storeu_ps(p, _mm512_castps512_ps256(x));
    _mm256_storeu_ps(p + 8, _mm512_extractf32x8_ps(x, 1));
}

void kr_quot_avx512(const float in[16], float k, float out[16])
{
    _mm512_storeu_ps(out, quot16(_mm512_loadu_ps(in), _mm512_set1_ps(k), _mm512_set1_ps(1.0f / k)));
}

WIDE_INLINE void rows16(const kr_fused_level *L, const float *u, const float *v, int clamp2,
                        float *o0, float *o1, float *o2, float *o3)
{
    lvk16 k;
    lvk16_init(&k, L);
    const __m512 d = _mm512_set1_ps(255.0f * 65536.0f),
                 rd = _mm512_set1_ps(1.0f / (255.0f * 65536.0f));
    const __m512i unbias = KR_K(unbias32);
    __m512 us = load16(u), vs = load16(v);
    __m512i sum[4];
    if (!k.direct || !sums16_uv(&k, us, vs, u, v, clamp2, 1, sum))
        sums16_each(&k, us, vs, sum);
    __m512 se01 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0], unbias));
    __m512 se23 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[1], unbias));
    __m512 so01 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[2], unbias));
    __m512 so23 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[3], unbias));
    /* per row's lane: [b p0, b p1, b p2, b p3] */
    store16(o0, quot16(_mm512_shuffle_ps(se01, se23, _MM_SHUFFLE(2, 0, 2, 0)), d, rd));
    store16(o2, quot16(_mm512_shuffle_ps(se01, se23, _MM_SHUFFLE(3, 1, 3, 1)), d, rd));
    store16(o1, quot16(_mm512_shuffle_ps(so01, so23, _MM_SHUFFLE(2, 0, 2, 0)), d, rd));
    store16(o3, quot16(_mm512_shuffle_ps(so01, so23, _MM_SHUFFLE(3, 1, 3, 1)), d, rd));
}

/* rows16 on level L, clamp2 a constant in each copy: no masks, no seam
 * test (both entry points below expand it). */
WIDE_INLINE void rows16_level(const kr_fused_level *L, const float *u, const float *v, float *o0,
                              float *o1, float *o2, float *o3)
{
    if (L->clamp2 && L->direct)
        rows16(L, u, v, 1, o0, o1, o2, o3);
    else
        rows16(L, u, v, 0, o0, o1, o2, o3);
}

bool kr_sample_rows_avx512(const kr_fused_level *L, const float *u, const float *v, float *o0,
                           float *o1, float *o2, float *o3)
{
    rows16_level(L, u, v, o0, o1, o2, o3);
    return true;
}

/* kiln_ps_sample's prepared call, the kernel's body in place (no second
 * call per block). */
void kr_sample_rows_rgba_avx512(const kr_fused_level *L, const float *u, const float *v,
                                float *rgba, int swap)
{
    rows16_level(L, u, v, rgba + (swap ? 2 : 0) * KILN_PS_BLOCK, rgba + KILN_PS_BLOCK,
                 rgba + (swap ? 0 : 2) * KILN_PS_BLOCK, rgba + 3 * KILN_PS_BLOCK);
}

/* ---- kiln_ps_sample's POINT shortcut (kr_point_fn) ---- */

/* sample.c's address() on 16 texel indices, for CLAMP, MIRROR_ONCE, and
 * WRAP and MIRROR over a power-of-two size n: the same index. */
WIDE_INLINE __m512i axis16(__m512i i, int32_t n, kiln_address mode)
{
    const __m512i last = _mm512_set1_epi32(n - 1);
    switch (mode) {
    case KILN_ADDRESS_WRAP:
        return _mm512_and_si512(i, last);
    case KILN_ADDRESS_MIRROR: {
        const __m512i p = _mm512_set1_epi32(2 * n - 1);
        const __m512i t = _mm512_and_si512(i, p);
        return _mm512_min_epi32(t, _mm512_sub_epi32(p, t)); /* t >= n: 2n - 1 - t */
    }
    case KILN_ADDRESS_MIRROR_ONCE: /* i < 0: -1 - i = ~i; then CLAMP's top */
        return _mm512_min_epi32(_mm512_xor_si512(i, _mm512_srai_epi32(i, 31)), last);
    default: /* CLAMP */
        return _mm512_min_epi32(_mm512_max_epi32(i, _mm512_setzero_si512()), last);
    }
}

/* point_axis8 of fused_avx2.c, sixteen lanes (_mm512_max_ps also gives
 * its second operand for a NaN). */
WIDE_INLINE __m512i point_axis16(__m512 c, float fn, int32_t n, kiln_address mode)
{
    const __m512 lim = _mm512_set1_ps(1073741824.0f), nlim = _mm512_set1_ps(-1073741824.0f);
    const __m512 x = _mm512_min_ps(_mm512_max_ps(_mm512_mul_ps(c, _mm512_set1_ps(fn)), nlim), lim);
    return axis16(_mm512_cvt_roundps_epi32(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC), n, mode);
}

/* point_window8 of fused_avx2.c for the whole block: a window of 4 x 4
 * texels at (x0, y0), pulled back inside the level, four 16-byte row
 * loads and a permute in place of a 16-lane gather, when every index
 * falls in it (magnified, away from a WRAP seam). */
WIDE_INLINE bool point_window_at(const kr_point_level *L, __m512i x, __m512i y, int32_t x0,
                                 int32_t y0, __m512i *t)
{
    const int32_t wx = x0 < L->w - 4 ? x0 : L->w - 4, wy = y0 < L->h - 4 ? y0 : L->h - 4;
    const __m512i dx = _mm512_sub_epi32(x, _mm512_set1_epi32(wx));
    const __m512i dy = _mm512_sub_epi32(y, _mm512_set1_epi32(wy));
    /* both in [0, 3] (a negative one is huge unsigned) */
    if (_mm512_cmpgt_epu32_mask(_mm512_or_si512(dx, dy), _mm512_set1_epi32(3)))
        return false;
    const uint8_t *r = L->base + (size_t)wy * (size_t)L->pitch + (size_t)wx * 4;
    const size_t p = (size_t)L->pitch;
    __m512i win = _mm512_castsi128_si512(_mm_loadu_si128((const __m128i *)(const void *)r));
    win = _mm512_inserti32x4(win, _mm_loadu_si128((const __m128i *)(const void *)(r + p)), 1);
    win = _mm512_inserti32x4(win, _mm_loadu_si128((const __m128i *)(const void *)(r + 2 * p)), 2);
    win = _mm512_inserti32x4(win, _mm_loadu_si128((const __m128i *)(const void *)(r + 3 * p)), 3);
    *t = _mm512_permutexvar_epi32(_mm512_add_epi32(_mm512_slli_epi32(dy, 2), dx), win);
    return true;
}

/* The window at lane 0's indices, else at the least ones (a mirrored
 * block, as window16 tries). */
WIDE_INLINE bool point_window16(const kr_point_level *L, __m512i x, __m512i y, __m512i *t)
{
    if (L->w < 4 || L->h < 4)
        return false;
    const int32_t x0 = _mm_cvtsi128_si32(_mm512_castsi512_si128(x));
    const int32_t y0 = _mm_cvtsi128_si32(_mm512_castsi512_si128(y));
    if (point_window_at(L, x, y, x0, y0, t))
        return true;
    const int32_t xmin = _mm512_reduce_min_epi32(x), ymin = _mm512_reduce_min_epi32(y);
    return (xmin != x0 || ymin != y0) && point_window_at(L, x, y, xmin, ymin, t);
}

void kr_sample_point_avx512(const kr_point_level *L, const float *u, const float *v, float *rgba,
                            int swap)
{
    const __m512i x = point_axis16(load16(u), L->fw, L->w, L->au);
    const __m512i y = point_axis16(load16(v), L->fh, L->h, L->av);
    __m512i t;
    if (!point_window16(L, x, y, &t)) {
        const __m512i off = _mm512_add_epi32(_mm512_mullo_epi32(y, _mm512_set1_epi32(L->pitch)),
                                             _mm512_slli_epi32(x, 2));
        t = _mm512_i32gather_epi32(off, (const void *)L->base, 1);
    }
    const __m512i byte = _mm512_set1_epi32(0xff);
    const __m512 k = _mm512_set1_ps(255.0f), r = _mm512_set1_ps(1.0f / 255.0f);
    /* byte n of each texel, as a float, divided by 255 (quot16: the
     * divide's bits for every byte) */
#define KR_POINT_BYTE(n)                                                                           \
    quot16(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srli_epi32(t, 8 * (n)), byte)), k, r)
    store16(rgba + (swap ? 2 : 0) * KILN_PS_BLOCK, KR_POINT_BYTE(0));
    store16(rgba + KILN_PS_BLOCK, KR_POINT_BYTE(1));
    store16(rgba + (swap ? 0 : 2) * KILN_PS_BLOCK, KR_POINT_BYTE(2));
    store16(rgba + 3 * KILN_PS_BLOCK, KR_POINT_BYTE(3));
#undef KR_POINT_BYTE
}

/* ---- kiln_ps_sample's BC blocks (kr_sample_bc_avx512) ---- */

/* Four 32-bit values in lanes 0-3, zeros above. */
static inline __m512i load4(const uint32_t v[4])
{
    return _mm512_maskz_loadu_epi32(0xf, (const void *)v);
}

/* bc.c's color_palette (BC1: c0 <= c1 makes code 3 transparent black;
 * `four_always` for BC2 and BC3, whose alpha is their own) for four blocks
 * at once, ends[id] = c0 | c1 << 16 in lane id: pv[c] lane
 * id * 4 + code is channel c of block id's code. Worked out with lane id * 4
 * + c holding block id's channel c (its 5:6:5 field over 31, 63 or 31, then
 * (2 e0 + e1) / 3, (e0 + 2 e1) / 3 or (e0 + e1) / 2 and 0), the same
 * IEEE operations as there, then each 128-bit lane transposed. */
WIDE_INLINE void bc1_palettes16(__m512i ends, int four_always, __m512 pv[4])
{
    const __m512i e = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3), ends);
    const __m512i c0 = _mm512_and_si512(e, _mm512_set1_epi32(0xffff)),
                  c1 = _mm512_srli_epi32(e, 16);
    const __m512i sh = _mm512_setr_epi32(11, 5, 0, 0, 11, 5, 0, 0, 11, 5, 0, 0, 11, 5, 0, 0);
    const __m512i m = _mm512_setr_epi32(31, 63, 31, 0, 31, 63, 31, 0, 31, 63, 31, 0, 31, 63, 31, 0);
    const __m512 d = _mm512_setr_ps(31.0f, 63.0f, 31.0f, 1.0f, 31.0f, 63.0f, 31.0f, 1.0f, 31.0f,
                                    63.0f, 31.0f, 1.0f, 31.0f, 63.0f, 31.0f, 1.0f);
    const __m512 e0 =
        _mm512_div_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srlv_epi32(c0, sh), m)), d);
    const __m512 e1 =
        _mm512_div_ps(_mm512_cvtepi32_ps(_mm512_and_si512(_mm512_srlv_epi32(c1, sh), m)), d);
    const __m512 two = _mm512_set1_ps(2.0f), three = _mm512_set1_ps(3.0f),
                 one = _mm512_set1_ps(1.0f);
    const __m512 t2 = _mm512_div_ps(_mm512_add_ps(_mm512_mul_ps(two, e0), e1), three);
    const __m512 t3 = _mm512_div_ps(_mm512_add_ps(e0, _mm512_mul_ps(two, e1)), three);
    const __m512 h = _mm512_mul_ps(_mm512_add_ps(e0, e1), _mm512_set1_ps(0.5f));
    const __mmask16 four = four_always ? 0xffff : _mm512_cmpgt_epu32_mask(c0, c1), alpha = 0x8888;
    /* codes 0..3 of each (block, channel); alpha 1, code 3's 0 where not four */
    const __m512 v0 = _mm512_mask_mov_ps(e0, alpha, one), v1 = _mm512_mask_mov_ps(e1, alpha, one);
    const __m512 v2 = _mm512_mask_mov_ps(_mm512_mask_mov_ps(h, four, t2), alpha, one);
    const __m512 v3 = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(four, t3), alpha & four, one);
    const __m512 lo01 = _mm512_unpacklo_ps(v0, v1), lo23 = _mm512_unpacklo_ps(v2, v3);
    const __m512 hi01 = _mm512_unpackhi_ps(v0, v1), hi23 = _mm512_unpackhi_ps(v2, v3);
    pv[0] = _mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(1, 0, 1, 0));
    pv[1] = _mm512_shuffle_ps(lo01, lo23, _MM_SHUFFLE(3, 2, 3, 2));
    pv[2] = _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(1, 0, 1, 0));
    pv[3] = _mm512_shuffle_ps(hi01, hi23, _MM_SHUFFLE(3, 2, 3, 2));
}

/* bc.c's ramp_palette (BC3's alpha, BC4, BC5) for four blocks, e01[id] = e0 | e1 << 8
 * in lane id: lane id * 8 + code of r[id / 2] (blocks 0 and 1 in r[0], 2
 * and 3 in r[1]) is block id's value of the code; the same IEEE
 * operations as there. */
WIDE_INLINE void bc_ramps16(__m512i e01, __m512 r[2])
{
    const __m512 c =
        _mm512_cvtepi32_ps(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7));
    const __m512 k8 = _mm512_sub_ps(_mm512_set1_ps(8.0f), c),
                 k6 = _mm512_sub_ps(_mm512_set1_ps(6.0f), c);
    const __m512 k1 = _mm512_sub_ps(c, _mm512_set1_ps(1.0f));
    const __mmask16 c0 = 0x0101, c1 = 0x0202, c7 = 0x8080, low = 0x3f3f; /* low: codes < 6 */
    for (int h = 0; h < 2; h++) {
        const __m512i e = _mm512_permutexvar_epi32(
            _mm512_setr_epi32(2 * h, 2 * h, 2 * h, 2 * h, 2 * h, 2 * h, 2 * h, 2 * h, 2 * h + 1,
                              2 * h + 1, 2 * h + 1, 2 * h + 1, 2 * h + 1, 2 * h + 1, 2 * h + 1,
                              2 * h + 1),
            e01);
        const __m512i e0 = _mm512_and_si512(e, _mm512_set1_epi32(255));
        const __m512i e1 = _mm512_and_si512(_mm512_srli_epi32(e, 8), _mm512_set1_epi32(255));
        const __m512 k255 = _mm512_set1_ps(255.0f);
        const __m512 a = _mm512_div_ps(_mm512_cvtepi32_ps(e0), k255);
        const __m512 z = _mm512_div_ps(_mm512_cvtepi32_ps(e1), k255);
        const __m512 six = _mm512_div_ps(_mm512_add_ps(_mm512_mul_ps(k8, a), _mm512_mul_ps(k1, z)),
                                         _mm512_set1_ps(7.0f));
        const __m512 four = _mm512_div_ps(_mm512_add_ps(_mm512_mul_ps(k6, a), _mm512_mul_ps(k1, z)),
                                          _mm512_set1_ps(5.0f));
        /* e0 <= e1: codes 2..5 interpolate, 6 reads 0, 7 reads 1 */
        __m512 v = _mm512_mask_mov_ps(_mm512_maskz_mov_ps(low, four), c7, _mm512_set1_ps(1.0f));
        v = _mm512_mask_mov_ps(v, _mm512_cmpgt_epi32_mask(e0, e1), six); /* codes 2..7 */
        v = _mm512_mask_mov_ps(_mm512_mask_mov_ps(v, c0, a), c1, z);
        r[h] = v;
    }
}

/* The ramp value of each lane's tap: texel ti's 3-bit code, the 3 bits at
 * 3 ti of its block's 48 (lo: bits 0-31, hi: 32-47; a shift by 32 or
 * more, or by a negative count, gives 0), in block wb's ramp (bc_ramps16's
 * lanes). */
WIDE_INLINE __m512 ramp_tap16(__m512i ti, __m512i wb, __m512i lo, __m512i hi, const __m512 r[2])
{
    const __m512i s = _mm512_add_epi32(ti, _mm512_slli_epi32(ti, 1));
    const __m512i l = _mm512_permutexvar_epi32(wb, lo), h = _mm512_permutexvar_epi32(wb, hi);
    const __m512i k32 = _mm512_set1_epi32(32);
    const __m512i code = _mm512_and_si512(
        _mm512_or_si512(_mm512_or_si512(_mm512_srlv_epi32(l, s),
                                        _mm512_sllv_epi32(h, _mm512_sub_epi32(k32, s))),
                        _mm512_srlv_epi32(h, _mm512_sub_epi32(s, k32))),
        _mm512_set1_epi32(7));
    return _mm512_permutex2var_ps(r[0], _mm512_add_epi32(_mm512_slli_epi32(wb, 3), code), r[1]);
}

bool kr_sample_bc_avx512(kiln_format f, const kr_bc_level *L, const float *u, const float *v,
                         const float *lw, float *rgba)
{
    const int kind = kr_bc_kind(f), srgb = kres_format_srgb(f);
    if (!kind || !kr_bc_axis_ok(L->w, L->au) || !kr_bc_axis_ok(L->h, L->av))
        return false;
    /* split_block's coordinates for LINEAR: (u w - 0.5, v h - 0.5) */
    const __m512 half = _mm512_set1_ps(0.5f);
    __m512i ax, ay;
    const __m512i x0 =
        split16(_mm512_sub_ps(_mm512_mul_ps(load16(u), _mm512_set1_ps(L->fw)), half), &ax);
    const __m512i y0 =
        split16(_mm512_sub_ps(_mm512_mul_ps(load16(v), _mm512_set1_ps(L->fh)), half), &ay);
    const __m512i one = _mm512_set1_epi32(1);
    const __m512i xs[2] = {axis16(x0, L->w, L->au), axis16(_mm512_add_epi32(x0, one), L->w, L->au)};
    const __m512i ys[2] = {axis16(y0, L->h, L->av), axis16(_mm512_add_epi32(y0, one), L->h, L->av)};
    /* the window: 2 x 2 blocks from the least block column and row */
    const __m512i bx[2] = {_mm512_srai_epi32(xs[0], 2), _mm512_srai_epi32(xs[1], 2)};
    const __m512i by[2] = {_mm512_srai_epi32(ys[0], 2), _mm512_srai_epi32(ys[1], 2)};
    const int32_t bx0 = _mm512_reduce_min_epi32(_mm512_min_epi32(bx[0], bx[1]));
    const int32_t by0 = _mm512_reduce_min_epi32(_mm512_min_epi32(by[0], by[1]));
    __m512i dx[2], dy[2];
    for (int k = 0; k < 2; k++) {
        dx[k] = _mm512_sub_epi32(bx[k], _mm512_set1_epi32(bx0));
        dy[k] = _mm512_sub_epi32(by[k], _mm512_set1_epi32(by0));
    }
    /* every tap's block within one of the window's (0 or 1 on each axis;
     * a WRAP seam spans the level and declines) */
    if (_mm512_cmpgt_epu32_mask(
            _mm512_or_si512(_mm512_or_si512(dx[0], dx[1]), _mm512_or_si512(dy[0], dy[1])), one))
        return false;
    /* the window's blocks the taps use, decoded once */
    uint32_t used = 0;
    __m512i wb[2][2]; /* [b][a]: the tap's window block, dy * 2 + dx */
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            wb[b][a] = _mm512_add_epi32(_mm512_slli_epi32(dy[b], 1), dx[a]);
            for (uint32_t id = 0; id < 4; id++)
                if (_mm512_cmpeq_epi32_mask(wb[b][a], _mm512_set1_epi32((int32_t)id)))
                    used |= 1u << id;
        }
    kr_bc_fields fd;
    kr_bc_read(L, kind, bx0, by0, used, &fd);
    const int nch = kr_bc_channels(kind);
    __m512 pv[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                    _mm512_setzero_ps()};
    if (kind <= 3)
        bc1_palettes16(load4(fd.ends), kind != 1, pv);
    if (srgb) {
        /* kres_bc_block_decode's curve on each color channel, after the
         * interpolation (alpha stays linear) */
        _Alignas(64) float pal[4][16];
        for (int c = 0; c < 4; c++)
            _mm512_store_ps(pal[c], pv[c]);
        for (int c = 0; c < 3; c++) {
            for (uint32_t e = 0; e < 16; e++)
                if (used >> (e / 4) & 1u)
                    pal[c][e] = kres_srgb_to_linear(pal[c][e]);
            pv[c] = _mm512_load_ps(pal[c]);
        }
    }
    const __m512i cv = load4(fd.codes), three = _mm512_set1_epi32(3);
    /* the ramps' fields (BC2: ramp 0's lo and hi are its 64 alpha bits) */
    const __m512i rlo[2] = {load4(fd.lo[0]), load4(fd.lo[1])};
    const __m512i rhi[2] = {load4(fd.hi[0]), load4(fd.hi[1])};
    /* BC2: nibble k reads k / 15 (kres_bc2_alpha) */
    const __m512 tab15 = _mm512_div_ps(
        _mm512_cvtepi32_ps(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)),
        _mm512_set1_ps(15.0f));
    /* the ramps' values (BC3's alpha, BC4's red, BC5's red and green) */
    __m512 ramp[2][2] = {{_mm512_setzero_ps(), _mm512_setzero_ps()},
                         {_mm512_setzero_ps(), _mm512_setzero_ps()}};
    if (kind >= 3)
        bc_ramps16(load4(fd.e01[0]), ramp[0]);
    if (kind == 5)
        bc_ramps16(load4(fd.e01[1]), ramp[1]);
    /* sample_bc's sums: ls = 0, then + w * texel for (b, a) = (0, 0),
     * (0, 1), (1, 0), (1, 1), w = (float)(wx[a] * wy[b]) / 65536 */
    const __m512i k256 = _mm512_set1_epi32(256);
    const __m512i wx[2] = {_mm512_sub_epi32(k256, ax), ax},
                  wy[2] = {_mm512_sub_epi32(k256, ay), ay};
    const __m512 inv = _mm512_set1_ps(1.0f / 65536.0f);
    __m512 ls[4];
    for (int c = 0; c < 4; c++)
        ls[c] = _mm512_setzero_ps();
    for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) {
            /* texel (x, y)'s index in its block, (y & 3) 4 + (x & 3) */
            const __m512i ti =
                _mm512_add_epi32(_mm512_slli_epi32(_mm512_and_si512(ys[b], three), 2),
                                 _mm512_and_si512(xs[a], three));
            const __m512i wbv = wb[b][a];
            __m512 t[4];
            if (kind <= 3) { /* its 2-bit color code's palette entry */
                const __m512i code = _mm512_and_si512(
                    _mm512_srlv_epi32(_mm512_permutexvar_epi32(wbv, cv), _mm512_slli_epi32(ti, 1)),
                    three);
                const __m512i pi = _mm512_add_epi32(_mm512_slli_epi32(wbv, 2), code);
                for (int c = 0; c < 4; c++)
                    t[c] = _mm512_permutexvar_ps(pi, pv[c]);
            }
            if (kind == 2) {
                /* the nibble at 4 ti of the 64 bits (a shift by 32 or more,
                 * or by a negative count, gives 0) */
                const __m512i s = _mm512_slli_epi32(ti, 2);
                const __m512i nib = _mm512_and_si512(
                    _mm512_or_si512(_mm512_srlv_epi32(_mm512_permutexvar_epi32(wbv, rlo[0]), s),
                                    _mm512_srlv_epi32(_mm512_permutexvar_epi32(wbv, rhi[0]),
                                                      _mm512_sub_epi32(s, _mm512_set1_epi32(32)))),
                    _mm512_set1_epi32(15));
                t[3] = _mm512_permutexvar_ps(nib, tab15);
            } else if (kind == 3) {
                t[3] = ramp_tap16(ti, wbv, rlo[0], rhi[0], ramp[0]);
            } else if (kind >= 4) { /* BC4, BC5: the ramps' channels; the rest not summed */
                t[0] = ramp_tap16(ti, wbv, rlo[0], rhi[0], ramp[0]);
                t[1] = kind == 5 ? ramp_tap16(ti, wbv, rlo[1], rhi[1], ramp[1]) : t[0];
            }
            const __m512 w =
                _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_mullo_epi32(wx[a], wy[b])), inv);
            for (int c = 0; c < nch; c++)
                ls[c] = _mm512_add_ps(ls[c], _mm512_mul_ps(w, t[c]));
        }
    /* one level: acc = 0 + lw * ls; the channels a format lacks read 0,
     * alpha 1 (sample_bc's finish) */
    const __m512 lwv = load16(lw);
    for (int c = 0; c < 4; c++)
        store16(rgba + c * KILN_PS_BLOCK,
                c < nch ? _mm512_add_ps(_mm512_setzero_ps(), _mm512_mul_ps(lwv, ls[c]))
                        : _mm512_set1_ps(c == 3 ? 1.0f : 0.0f));
    return true;
}

/* ---- kiln_ps_sample's quads (trilinear, or a LOD per quad) ---- */

/* [a a a a | b b b b | c c c c | d d d d] from [a b c d], and the 16-bit
 * words [x x x x y y y y] per lane from [x0 y0 x1 y1 x2 y2 x3 y3]: built in
 * registers (16 scalar stores then a 512-bit load would stall: no store
 * forwards to a load it only partly covers). */
static inline __m512 lanes_ps(__m128 x)
{
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(x));
}

static inline __m512i lanes_epi32(__m128i x)
{
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_epi32(idx, _mm512_castsi128_si512(x));
}

static inline __m512i lanes_xy16(__m128i xy)
{
    const __m512i idx = _mm512_set_epi16(7, 7, 7, 7, 6, 6, 6, 6, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 3,
                                         2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    return _mm512_permutexvar_epi16(idx, _mm512_castsi128_si512(xy));
}

/* Levels L[0..3]'s constants in lanes 0..3 (lvk8_pair's, four lanes). */
WIDE_INLINE void lvk16_quads(lvk16 *k, const kr_fused_level *const L[4])
{
    k->direct = true;
    for (int i = 0; i < 4; i++) {
        k->base[i] = L[i]->base;
        k->base2[i] = L[i]->base + L[i]->pitch;
        k->direct = k->direct && L[i]->direct;
    }
#define KR_F4(e) _mm_setr_ps(L[0]->e, L[1]->e, L[2]->e, L[3]->e)
#define KR_I4(e) _mm_setr_epi32(L[0]->e, L[1]->e, L[2]->e, L[3]->e)
    k->fw = lanes_ps(KR_F4(fw));
    k->fh = lanes_ps(KR_F4(fh));
    k->mx = lanes_epi32(KR_I4(mx));
    k->my = lanes_epi32(KR_I4(my));
    k->lx = lanes_epi32(KR_I4(lx));
    k->ly = lanes_epi32(KR_I4(ly));
#undef KR_F4
#undef KR_I4
    k->pitch = lanes_epi32(_mm_setr_epi32((int32_t)L[0]->pitch, (int32_t)L[1]->pitch,
                                          (int32_t)L[2]->pitch, (int32_t)L[3]->pitch));
    k->mul = _mm512_or_si512(_mm512_slli_epi32(k->pitch, 16), _mm512_set1_epi32(4));
    /* the words [x0 y0 x1 y1 x2 y2 x3 y3] as four 32-bit loads (built from
     * 16-bit values, they were spilled as words and reloaded as dwords: a
     * load no store forwards to) */
    k->hi = lanes_xy16(_mm_setr_epi32((int32_t)L[0]->hxy, (int32_t)L[1]->hxy, (int32_t)L[2]->hxy,
                                      (int32_t)L[3]->hxy));
    k->seam = lanes_xy16(_mm_setr_epi32((int32_t)L[0]->sxy, (int32_t)L[1]->sxy, (int32_t)L[2]->sxy,
                                        (int32_t)L[3]->sxy));
}

/* planar8 of fused_avx2.c, four lanes: s[b] holds byte b of each lane's
 * four pixels as exact floats. */
WIDE_INLINE void planar16(const __m512i sum[4], __m512 s[4])
{
    const __m512i unbias = _mm512_set1_epi32(32768 * 256);
    __m512 se01 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0], unbias));
    __m512 se23 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[1], unbias));
    __m512 so01 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[2], unbias));
    __m512 so23 = _mm512_cvtepi32_ps(_mm512_add_epi32(sum[3], unbias));
    s[0] = _mm512_shuffle_ps(se01, se23, _MM_SHUFFLE(2, 0, 2, 0));
    s[2] = _mm512_shuffle_ps(se01, se23, _MM_SHUFFLE(3, 1, 3, 1));
    s[1] = _mm512_shuffle_ps(so01, so23, _MM_SHUFFLE(2, 0, 2, 0));
    s[3] = _mm512_shuffle_ps(so01, so23, _MM_SHUFFLE(3, 1, 3, 1));
}

/* The block's rows [r0 | r1 | r2 | r3] as its quads, one per lane: quad q
 * (rows 2 (q / 2) and 2 (q / 2) + 1, columns 2 (q % 2) and 2 (q % 2) + 1)
 * as [top-left top-right bottom-left bottom-right], as quads_of_rows
 * leaves two quads; the permutation is its own inverse. */
static inline __m512 quads_of_block(__m512 x)
{
    const __m512i idx = _mm512_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15);
    return _mm512_permutexvar_ps(idx, x);
}

/* 4 floats per lane: f(quad i) in lane i. */
#define KR_LANES_PS(e)                                                                             \
    _mm512_setr_ps(q[0].e, q[0].e, q[0].e, q[0].e, q[1].e, q[1].e, q[1].e, q[1].e, q[2].e, q[2].e, \
                   q[2].e, q[2].e, q[3].e, q[3].e, q[3].e, q[3].e)

bool kr_sample_quads_avx512(const kr_fused_quad q[4], const float *u, const float *v, float *out[4])
{
    const __m512 d = _mm512_set1_ps(255.0f * 65536.0f),
                 rd = _mm512_set1_ps(1.0f / (255.0f * 65536.0f)),
                 inv = _mm512_set1_ps(1.0f / 65536.0f), k255 = _mm512_set1_ps(255.0f),
                 r255 = _mm512_set1_ps(1.0f / 255.0f);
    __m512 us = quads_of_block(load16(u)), vs = quads_of_block(load16(v));
    const kr_fused_level *L0[4] = {q[0].L[0], q[1].L[0], q[2].L[0], q[3].L[0]};
    lvk16 k;
    lvk16_quads(&k, L0);
    __m512i sum[4];
    if (!k.direct || !sums16(&k, us, vs, 0, 0, sum))
        sums16_each(&k, us, vs, sum);
    __m512 s[4], res[4];
    planar16(sum, s);
    /* one level (lw = 1): S / (255 * 65536), as rgba8_plan4 */
    for (int b = 0; b < 4; b++)
        res[b] = quot16(s[b], d, rd);
    __mmask16 two =
        (__mmask16)((q[0].passes == 2 ? 0x000Fu : 0u) | (q[1].passes == 2 ? 0x00F0u : 0u) |
                    (q[2].passes == 2 ? 0x0F00u : 0u) | (q[3].passes == 2 ? 0xF000u : 0u));
    if (two) {
        /* two: (lw0 * (S0 / 65536) + lw1 * (S1 / 65536)) / 255, lane by
         * lane; a one-level quad's lane reads its level again and keeps
         * the first result */
        const kr_fused_level *L1[4] = {q[0].L[1], q[1].L[1], q[2].L[1], q[3].L[1]};
        lvk16_quads(&k, L1);
        if (!k.direct || !sums16(&k, us, vs, 0, 0, sum))
            sums16_each(&k, us, vs, sum);
        __m512 s1[4];
        planar16(sum, s1);
        const __m512 lw0 = KR_LANES_PS(lw[0]), lw1 = KR_LANES_PS(lw[1]);
        for (int b = 0; b < 4; b++) {
            __m512 acc = _mm512_mul_ps(lw0, _mm512_mul_ps(s[b], inv));
            __m512 r2 = quot16(_mm512_add_ps(acc, _mm512_mul_ps(lw1, _mm512_mul_ps(s1[b], inv))),
                               k255, r255);
            res[b] = _mm512_mask_blend_ps(two, res[b], r2);
        }
    }
    for (int b = 0; b < 4; b++)
        store16(out[b], quads_of_block(res[b]));
    return true;
}
#undef KR_LANES_PS

/* ---- the fused texture block (kr_block_select), a block per vector ---- */

/* px8 of fused_avx2.c for the four rows: the pixels as packed words, each
 * row's lane as pack_sums leaves it. */
WIDE_INLINE __m512i px16(const lvk16 *k, __m512 us, __m512 vs, int clamp2, int swap)
{
    __m512i sum[4];
    if (!k->direct || !sums16(k, us, vs, clamp2, 1, sum))
        sums16_each(k, us, vs, sum);
    /* S - 32768 * 256 per byte; + 32768 * 256 + 32768 then >> 16 */
    const __m512i unbias = _mm512_set1_epi32(32768 * 256 + 32768);
    __m512i e01 = _mm512_srli_epi32(_mm512_add_epi32(sum[0], unbias), 16);
    __m512i e23 = _mm512_srli_epi32(_mm512_add_epi32(sum[1], unbias), 16);
    __m512i o01 = _mm512_srli_epi32(_mm512_add_epi32(sum[2], unbias), 16);
    __m512i o23 = _mm512_srli_epi32(_mm512_add_epi32(sum[3], unbias), 16);
    if (swap) {
        e01 = _mm512_shuffle_epi32(e01, _MM_PERM_CDAB);
        e23 = _mm512_shuffle_epi32(e23, _MM_PERM_CDAB);
    }
    const __m512i wbias = _mm512_set1_epi32(32768);
    __m512i w01 = _mm512_or_si512(e01, _mm512_slli_epi32(o01, 8));
    __m512i w23 = _mm512_or_si512(e23, _mm512_slli_epi32(o23, 8));
    __m512i px = _mm512_packs_epi32(_mm512_sub_epi32(w01, wbias), _mm512_sub_epi32(w23, wbias));
    return _mm512_xor_si512(px, _mm512_set1_epi16(-32768));
}

/* u and v of the block's 16 pixels, fused_avx2.c's uv_init and uv8
 * lane by lane: (float)(x + column) + 0.5f - ox, (float)(y + row) + 0.5f
 * - oy, then the planes over q (or times 1 / q0 when q is constant). */
WIDE_INLINE void uv16(const kr_prim *p, int x, int y, __m512 *u, __m512 *v)
{
    const __m512 half = _mm512_set1_ps(0.5f);
    const __m512i col = _mm512_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    const __m512i row = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    __m512 fx = _mm512_sub_ps(
        _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_set1_epi32(x), col)), half),
        _mm512_set1_ps(p->ox));
    __m512 fy = _mm512_sub_ps(
        _mm512_add_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(_mm512_set1_epi32(y), row)), half),
        _mm512_set1_ps(p->oy));
    const float *a = p->attr;
    __m512 w;
    if (p->q[1] == 0.0f && p->q[2] == 0.0f) {
        w = _mm512_set1_ps(1.0f / p->q[0]);
    } else {
        __m512 q01 =
            _mm512_add_ps(_mm512_set1_ps(p->q[0]), _mm512_mul_ps(_mm512_set1_ps(p->q[1]), fx));
        w = _mm512_div_ps(_mm512_set1_ps(1.0f),
                          _mm512_add_ps(q01, _mm512_mul_ps(_mm512_set1_ps(p->q[2]), fy)));
    }
    __m512 u01 = _mm512_add_ps(_mm512_set1_ps(a[0]), _mm512_mul_ps(_mm512_set1_ps(a[1]), fx));
    __m512 v01 = _mm512_add_ps(_mm512_set1_ps(a[3]), _mm512_mul_ps(_mm512_set1_ps(a[4]), fx));
    *u = _mm512_mul_ps(_mm512_add_ps(u01, _mm512_mul_ps(_mm512_set1_ps(a[2]), fy)), w);
    *v = _mm512_mul_ps(_mm512_add_ps(v01, _mm512_mul_ps(_mm512_set1_ps(a[5]), fy)), w);
}

/* Unlike fused_avx2.c's block, which skips a pair of uncovered rows, the
 * whole block's texels are read: every index is clamped (CLAMP) or masked
 * (WRAP) into the level, so the reads stay inside it, and uncovered
 * pixels are not stored. */
WIDE_INLINE void block16(const kr_fused_level *L, const kr_prim *p, int x, int y, int clamp2,
                         int swap, uint8_t *dst, size_t pitch, uint32_t mask)
{
    lvk16 k;
    lvk16_init(&k, L);
    __m512 u, v;
    uv16(p, x, y, &u, &v);
    __m512i px = px16(&k, u, v, clamp2, swap);
    if (mask == 0xffffu) { /* most blocks: a store per row */
        _mm_storeu_si128((__m128i *)(void *)dst, _mm512_castsi512_si128(px));
        _mm_storeu_si128((__m128i *)(void *)(dst + pitch), _mm512_extracti32x4_epi32(px, 1));
        _mm_storeu_si128((__m128i *)(void *)(dst + 2 * pitch), _mm512_extracti32x4_epi32(px, 2));
        _mm_storeu_si128((__m128i *)(void *)(dst + 3 * pitch), _mm512_extracti32x4_epi32(px, 3));
        return;
    }
    uint32_t w[16];
    _mm512_storeu_si512((void *)w, px);
    for (int r = 0; r < 4; r++)
        if (mask >> (4 * r) & 15u)
            kr_store_row4(dst + (size_t)r * pitch, w + 4 * r, mask >> (4 * r) & 15u);
}

bool kr_fused_block_avx512(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_draw *fd = (const kr_fused_draw *)(const void *)p->dx->block_data;
    size_t pitch = fb->rt_pitch[0];
    uint8_t *dst = fb->rt[0] + (size_t)y * pitch + (size_t)x * 4;
    /* clamp2 a constant in each copy; WRAP seams read texel by texel, so
     * every block is written here */
    if (fd->L0.clamp2)
        block16(&fd->L0, p, x, y, 1, fd->swap, dst, pitch, mask);
    else
        block16(&fd->L0, p, x, y, 0, fd->swap, dst, pitch, mask);
    return true;
}

/* ---- the texture effect's blends in registers, a block per vector ---- */

/* fused_avx2.c's shade_blend for the whole block at once: the sums as
 * px16 makes them, each channel n = M + 32768 in pixel order (lane 4r + c
 * for row r, column c: rows16's shuffles), then for kind 1 (ADD of ONE,
 * ONE) the byte (n >> 16) added to the target's with saturation, for kind
 * 2 (ADD of SRC_ALPHA, INV_SRC_ALPHA) alpha8's floats: the sample
 * fl(M / (255 * 65536)), blended with the target's byte / 255 and
 * converted, the same IEEE operations lane for lane. A block with a
 * covered pixel in ADD's band (KR_ADD_BAND) takes the float way whole:
 * kr_fused_shade_avx2, the draw's blend of the samples as floats (the
 * AVX2 kernel sends two rows that way; the bytes are the same either
 * way). */
typedef struct blendk16 {
    lvk16 k;
    __m512i keep; /* the target's bytes the write mask keeps */
    int flip;     /* texel bytes 0 and 2 exchanged into the target */
    size_t pitch;
} blendk16;

WIDE_INLINE void blendk16_init(const kr_prim *p, const kr_fb *fb, blendk16 *K)
{
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)p->dx->shade_data;
    lvk16_init(&K->k, &sd->L);
    K->keep = _mm512_set1_epi32((int32_t)sd->keep);
    K->flip = sd->flip;
    K->pitch = fb->rt_pitch[0];
}

/* The lanes where some channel's n is in the band: (n + KR_ADD_BAND) mod
 * 65536 below 2 * KR_ADD_BAND (fused_avx2.c's add_band). */
static inline uint32_t band16(const __m512i n[4])
{
    const __m512i off = _mm512_set1_epi32(KR_ADD_BAND), low = _mm512_set1_epi32(0xffff),
                  lim = _mm512_set1_epi32(2 * KR_ADD_BAND);
    __mmask16 near = 0;
    for (int c = 0; c < 4; c++)
        near |= _mm512_cmplt_epu32_mask(_mm512_and_si512(_mm512_add_epi32(n[c], off), low), lim);
    return near;
}

uint32_t kr_add_band_avx512(const int32_t m[4][16])
{
    __m512i n[4];
    for (int c = 0; c < 4; c++)
        n[c] = _mm512_add_epi32(_mm512_loadu_si512((const void *)m[c]), _mm512_set1_epi32(32768));
    return band16(n);
}

WIDE_INLINE void blend16(const kr_prim *p, const kr_fb *fb, const blendk16 *K, int x, int y,
                         uint32_t mask, int clamp2, int kind)
{
    __m512 u, v;
    uv16(p, x, y, &u, &v);
    __m512i sum[4];
    if (!K->k.direct || !sums16(&K->k, u, v, clamp2, 1, sum))
        sums16_each(&K->k, u, v, sum);
    /* M + 32768 = sum + 32768 * 256 + 32768 (sums16's bias) */
    const __m512i bias = _mm512_set1_epi32(32768 * 256 + 32768);
    __m512 e01 = _mm512_castsi512_ps(_mm512_add_epi32(sum[0], bias));
    __m512 e23 = _mm512_castsi512_ps(_mm512_add_epi32(sum[1], bias));
    __m512 o01 = _mm512_castsi512_ps(_mm512_add_epi32(sum[2], bias));
    __m512 o23 = _mm512_castsi512_ps(_mm512_add_epi32(sum[3], bias));
    __m512i n[4] = {_mm512_castps_si512(_mm512_shuffle_ps(e01, e23, _MM_SHUFFLE(2, 0, 2, 0))),
                    _mm512_castps_si512(_mm512_shuffle_ps(o01, o23, _MM_SHUFFLE(2, 0, 2, 0))),
                    _mm512_castps_si512(_mm512_shuffle_ps(e01, e23, _MM_SHUFFLE(3, 1, 3, 1))),
                    _mm512_castps_si512(_mm512_shuffle_ps(o01, o23, _MM_SHUFFLE(3, 1, 3, 1)))};
    if (kind == 1 && (band16(n) & mask)) {
        kr_fused_shade_avx2(p, fb, x, y, mask);
        return;
    }
    if (K->flip) { /* to the target's byte order */
        __m512i t = n[0];
        n[0] = n[2];
        n[2] = t;
    }
    uint8_t *dst = fb->rt[0] + (size_t)y * K->pitch + (size_t)x * 4;
    __m512i old = kr_load_block16(dst, K->pitch, mask);
    __m512i px = _mm512_setzero_si512();
    if (kind == 1) {
        for (int c = 0; c < 4; c++)
            px = _mm512_or_si512(px,
                                 _mm512_slli_epi32(_mm512_srli_epi32(n[c], 16), 8u * (unsigned)c));
        px = _mm512_adds_epu8(px, old);
    } else {
        const __m512 d = _mm512_set1_ps(255.0f * 65536.0f),
                     rd = _mm512_set1_ps(1.0f / (255.0f * 65536.0f));
        const __m512 k255 = _mm512_set1_ps(255.0f), half = _mm512_set1_ps(0.5f);
        const __m512i h16 = _mm512_set1_epi32(32768), lo8 = _mm512_set1_epi32(0xff);
        __m512 s[4];
        for (int c = 0; c < 4; c++)
            s[c] = quot16(_mm512_cvtepi32_ps(_mm512_sub_epi32(n[c], h16)), d, rd);
        for (int c = 0; c < 4; c++) {
            __m512 dc =
                kr_unorm8_16(_mm512_and_si512(_mm512_srli_epi32(old, 8u * (unsigned)c), lo8));
            __m512 b = kr_blend_alpha16(s[c], s[3], dc);
            px = _mm512_or_si512(
                px,
                _mm512_slli_epi32(_mm512_cvttps_epi32(_mm512_add_ps(_mm512_mul_ps(b, k255), half)),
                                  8u * (unsigned)c));
        }
    }
    px = _mm512_or_si512(_mm512_andnot_si512(K->keep, px), _mm512_and_si512(old, K->keep));
    kr_store_block16(dst, K->pitch, px, mask);
}

/* fused_avx2.c's span_blend: the primitive's constants once, then
 * raster_tri's loop over the rect's blocks, its fetches ahead included. */
WIDE_INLINE void span16(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1,
                        int clamp2, int kind)
{
    blendk16 K;
    blendk16_init(p, fb, &K);
    const uint32_t ahead = x1 - x0 > 16 ? p->dx->ahead_rt : 0;
    const int bx0 = x0 & ~3;
    for (int by = y0 & ~3; by < y1; by += 4)
        for (int bx = bx0; bx < x1; bx += 4) {
            if (ahead && !((bx - bx0) & 15)) /* a block that starts a line */
                kr_fetch_ahead(fb->rt[0], (uint32_t)K.pitch, ahead, bx, by, x0, x1, y1);
            blend16(p, fb, &K, bx, by, kr_rect_mask(bx, by, x0, y0, x1, y1), clamp2, kind);
        }
}

/* clamp2 a constant in each copy; a block, or a span of them (x1 > 0) */
WIDE_INLINE bool blend_level16(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask,
                               int x1, int y1, int kind)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)p->dx->shade_data;
    const int clamp2 = sd->L.clamp2 && sd->L.direct;
    if (x1 > 0) {
        if (clamp2)
            span16(p, fb, x, y, x1, y1, 1, kind);
        else
            span16(p, fb, x, y, x1, y1, 0, kind);
        return true;
    }
    blendk16 K;
    blendk16_init(p, fb, &K);
    if (clamp2)
        blend16(p, fb, &K, x, y, mask, 1, kind);
    else
        blend16(p, fb, &K, x, y, mask, 0, kind);
    return true;
}

bool kr_fused_shade_add_avx512(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    return blend_level16(p, fb, x, y, mask, 0, 0, 1);
}

bool kr_fused_shade_alpha_avx512(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    return blend_level16(p, fb, x, y, mask, 0, 0, 2);
}

bool kr_fused_span_add_avx512(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    return blend_level16(p, fb, x0, y0, 0, x1, y1, 1);
}

bool kr_fused_span_alpha_avx512(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    return blend_level16(p, fb, x0, y0, 0, x1, y1, 2);
}

#else

/* Non-x86 builds never call it (an empty file is not ISO C). */
typedef int kr_fused_avx512_unused;

#endif
