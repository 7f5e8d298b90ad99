/*
 * The fused texture kernel, AVX2: two rows of a block (8 pixels) per
 * vector, each 128-bit lane doing exactly what sample.c's SSE2 kernel
 * (rgba8_4px_sums, pack_sums) does for one row of 4, so the sums S, and
 * the bytes, are the same integers. Compiled with -mavx2 (effects.cmake);
 * sample.c calls it only when the chosen SIMD level is AVX2.
 *
 * The float steps (u * size - 0.5, the split into index and 8-bit
 * fraction) are the SSE2 kernel's IEEE operations lane by lane; no
 * contraction into fused multiply-adds (off here and in effects.cmake).
 *
 * Also the texture effects' whole-block shading at the AVX2 level
 * (kr_fused_shade_avx2, kr_fused_shade_tc_avx2), and for one prepared
 * level under additive or alpha blending with the blend in registers
 * (kr_fused_shade_add_avx2 in bytes, kr_fused_shade_alpha_avx2).
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

#include <immintrin.h>
#include <string.h>

#include "blend_avx2.h"

/* The two copies of block() (clamp2 a constant in each) stay separate. */
#define FUSED_INLINE static inline __attribute__((always_inline))

/* split4 of sample.c, eight lanes: floor and the fraction in 1/256. */
static inline __m256i split8(__m256 c, __m256i *frac)
{
    const __m256 lim = _mm256_set1_ps(1073741824.0f), nlim = _mm256_set1_ps(-1073741824.0f);
    __m256 x = _mm256_min_ps(_mm256_max_ps(c, nlim), lim);
    __m256 fl = _mm256_round_ps(x, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    __m256 f = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x, fl), _mm256_set1_ps(256.0f)),
                             _mm256_set1_ps(0.5f));
    *frac = _mm256_cvttps_epi32(f);
    return _mm256_cvttps_epi32(fl);
}

/* The constants of a level, broadcast to both lanes (or, for
 * kr_sample_quads_avx2, one level per lane: baseB and base2B are lane 1's
 * rows). */
typedef struct lvk8 {
    const uint8_t *base, *base2, *baseB, *base2B;
    __m256 fw, fh;
    __m256i mx, my, hi, seam, mul;
    __m256i lx, ly, pitch; /* texel by texel: the last index, the row pitch (32-bit) */
    bool direct;           /* both lanes' levels read directly */
} lvk8;

/* 8 bytes at each of base + a, b (lane 0) and baseB + c, d (lane 1). */
static inline __m256i pairs(const uint8_t *base, const uint8_t *baseB, uint32_t a, uint32_t b,
                            uint32_t c, uint32_t d)
{
    __m128d lo = _mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)(const void *)(base + a))),
                              (const double *)(const void *)(base + b));
    __m128d hi = _mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)(const void *)(baseB + c))),
                              (const double *)(const void *)(baseB + d));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_castpd_si128(lo)), _mm_castpd_si128(hi), 1);
}

/* The weighting of sums8: t0..t3 the top-left, top-right, bottom-left and
 * bottom-right texels of each lane's four pixels p0..p3, each lane's 16
 * bytes in the order [b0 b2] of p0, p1, p2, p3, then [b1 b3] of each
 * (sums8 reads them so), f16 the fractions (x then y, 16-bit, per lane). */
FUSED_INLINE void weigh8(__m256i t0, __m256i t1, __m256i t2, __m256i t3, __m256i f16, __m256i sum[4])
{
    const __m256i k256 = _mm256_set1_epi16(256);
    /* rows, then columns: rgba8_4px_sums' products, each word a (byte,
     * pixel) of the words [p0 p1 p2 p3 p0 p1 p2 p3] */
    __m256i g16 = _mm256_sub_epi16(k256, f16);
    __m256i fy = _mm256_unpackhi_epi64(f16, f16), gy = _mm256_unpackhi_epi64(g16, g16);
    __m256i wx = _mm256_unpacklo_epi16(g16, f16);
    const __m256i lo = _mm256_set1_epi16(0x00FF), bias = _mm256_set1_epi16(-32768);
    __m256i le = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(t0, lo), gy),
                                  _mm256_mullo_epi16(_mm256_and_si256(t2, lo), fy));
    __m256i re = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_and_si256(t1, lo), gy),
                                  _mm256_mullo_epi16(_mm256_and_si256(t3, lo), fy));
    __m256i lod = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(t0, 8), gy),
                                   _mm256_mullo_epi16(_mm256_srli_epi16(t2, 8), fy));
    __m256i rod = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_srli_epi16(t1, 8), gy),
                                   _mm256_mullo_epi16(_mm256_srli_epi16(t3, 8), fy));
    le = _mm256_xor_si256(le, bias);
    re = _mm256_xor_si256(re, bias);
    lod = _mm256_xor_si256(lod, bias);
    rod = _mm256_xor_si256(rod, bias);
    sum[0] = _mm256_madd_epi16(_mm256_unpacklo_epi16(le, re), wx);
    sum[1] = _mm256_madd_epi16(_mm256_unpackhi_epi16(le, re), wx);
    sum[2] = _mm256_madd_epi16(_mm256_unpacklo_epi16(lod, rod), wx);
    sum[3] = _mm256_madd_epi16(_mm256_unpackhi_epi16(lod, rod), wx);
}

/* Rows r and r + 1 (lanes 0 and 1): each texel byte's integer sum S as
 * sample.c's rgba8_4px_sums works it out, minus 32768 * 256, byte b of
 * p0..p3 in sum[b] (planar). False at a WRAP seam. */
FUSED_INLINE bool sums8(const lvk8 *k, __m256 us, __m256 vs, int clamp2, __m256i sum[4])
{
    const __m256i zero = _mm256_setzero_si256(), k256 = _mm256_set1_epi16(256);
    const __m256 half = _mm256_set1_ps(0.5f);
    __m256i ax, ay;
    __m256i x0 = split8(_mm256_sub_ps(_mm256_mul_ps(us, k->fw), half), &ax);
    __m256i y0 = split8(_mm256_sub_ps(_mm256_mul_ps(vs, k->fh), half), &ay);
    __m256i c16 = clamp2 ? _mm256_packs_epi32(x0, y0)
                         : _mm256_packs_epi32(_mm256_and_si256(x0, k->mx), _mm256_and_si256(y0, k->my));
    __m256i f16 = _mm256_packs_epi32(ax, ay);
    __m256i lt = _mm256_cmpgt_epi16(zero, c16), gt = _mm256_cmpgt_epi16(c16, k->hi);
    c16 = _mm256_min_epi16(_mm256_max_epi16(c16, zero), k->hi);
    f16 = _mm256_min_epi16(_mm256_max_epi16(f16, _mm256_and_si256(gt, k256)),
                           _mm256_andnot_si256(lt, k256));
    if (!clamp2 && _mm256_movemask_epi8(_mm256_cmpeq_epi16(c16, k->seam)))
        return false;
    /* byte offsets x * 4 + y * pitch: [r0 r1 r2 r3 | s0 s1 s2 s3] */
    __m256i off = _mm256_madd_epi16(_mm256_unpacklo_epi16(c16, _mm256_srli_si256(c16, 8)), k->mul);
    /* 8 bytes (a texel and its right neighbour) per pixel and row, loaded
     * in pairs [r0 r1 | s0 s1] and [r2 r3 | s2 s3] (scalar loads: faster
     * than gathers on the CPUs measured). Per lane, the pair of p0, p1
     * [L0 R0 L1 R1] to the 32-bit groups [L bytes 0 and 2, L bytes 1 and
     * 3, R bytes 0 and 2, R bytes 1 and 3], then with p2, p3's the
     * order weigh8 takes. */
    const __m256i pick = _mm256_setr_epi8(0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15, 0,
                                          2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15);
    _Alignas(32) uint32_t o[8];
    _mm256_store_si256((__m256i *)(void *)o, off);
    __m256i ta = _mm256_shuffle_epi8(pairs(k->base, k->baseB, o[0], o[1], o[4], o[5]), pick);
    __m256i tb = _mm256_shuffle_epi8(pairs(k->base, k->baseB, o[2], o[3], o[6], o[7]), pick);
    __m256i ba = _mm256_shuffle_epi8(pairs(k->base2, k->base2B, o[0], o[1], o[4], o[5]), pick);
    __m256i bb = _mm256_shuffle_epi8(pairs(k->base2, k->base2B, o[2], o[3], o[6], o[7]), pick);
    weigh8(_mm256_unpacklo_epi32(ta, tb), _mm256_unpackhi_epi32(ta, tb),
           _mm256_unpacklo_epi32(ba, bb), _mm256_unpackhi_epi32(ba, bb), f16, sum);
    return true;
}

/* sums8 for pixels whose texels cannot be read as pairs (a level not read
 * directly, or a pair wrapping around a WRAP axis): each texel index
 * masked (WRAP; -1 under CLAMP) and clamped to [0, size - 1], address()'s
 * texel for CLAMP and power-of-two WRAP, with the fractions as split8
 * leaves them: sample.c's fetch_by_address path, the same sums. */
FUSED_INLINE void sums8_each(const lvk8 *k, __m256 us, __m256 vs, __m256i sum[4])
{
    const __m256i zero = _mm256_setzero_si256(), one = _mm256_set1_epi32(1);
    const __m256 half = _mm256_set1_ps(0.5f);
    __m256i ax, ay;
    __m256i x0 = split8(_mm256_sub_ps(_mm256_mul_ps(us, k->fw), half), &ax);
    __m256i y0 = split8(_mm256_sub_ps(_mm256_mul_ps(vs, k->fh), half), &ay);
#define KR_INDEX8(i, m, last) _mm256_min_epi32(_mm256_max_epi32(_mm256_and_si256(i, m), zero), last)
    __m256i xa = _mm256_slli_epi32(KR_INDEX8(x0, k->mx, k->lx), 2);
    __m256i xb = _mm256_slli_epi32(KR_INDEX8(_mm256_add_epi32(x0, one), k->mx, k->lx), 2);
    __m256i ra = _mm256_mullo_epi32(KR_INDEX8(y0, k->my, k->ly), k->pitch);
    __m256i rb = _mm256_mullo_epi32(KR_INDEX8(_mm256_add_epi32(y0, one), k->my, k->ly), k->pitch);
#undef KR_INDEX8
    _Alignas(32) uint32_t o[4][8], q[4][8];
    _mm256_store_si256((__m256i *)(void *)o[0], _mm256_add_epi32(ra, xa));
    _mm256_store_si256((__m256i *)(void *)o[1], _mm256_add_epi32(ra, xb));
    _mm256_store_si256((__m256i *)(void *)o[2], _mm256_add_epi32(rb, xa));
    _mm256_store_si256((__m256i *)(void *)o[3], _mm256_add_epi32(rb, xb));
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < 8; i++)
            memcpy(&q[c][i], (i < 4 ? k->base : k->baseB) + o[c][i], 4);
    /* [p0 p1 p2 p3] per lane to weigh8's order: even bytes, then odd */
    const __m256i pick = _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15, 0,
                                          2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
#define KR_TEXELS8(c)                                                                              \
    _mm256_shuffle_epi8(_mm256_load_si256((const __m256i *)(const void *)q[c]), pick)
    weigh8(KR_TEXELS8(0), KR_TEXELS8(1), KR_TEXELS8(2), KR_TEXELS8(3), _mm256_packs_epi32(ax, ay),
           sum);
#undef KR_TEXELS8
}

/* A level's sums: as pairs where it can, else texel by texel. */
FUSED_INLINE void sums8_any(const lvk8 *k, __m256 us, __m256 vs, int clamp2, __m256i sum[4])
{
    if (!k->direct || !sums8(k, us, vs, clamp2, sum))
        sums8_each(k, us, vs, sum);
}

/* Byte 2 of each 32-bit group of c0..c3 to bytes 0..3 of its pixel's
 * word. */
static inline __m256i bytes8(__m256i c0, __m256i c1, __m256i c2, __m256i c3)
{
#define Z -128   /* pshufb: a zero byte */
#define KR_TO(b) /* byte 2 of each group to byte b */                                              \
    {                                                                                              \
        b == 0 ? 2 : Z, b == 1 ? 2 : Z, b == 2 ? 2 : Z, b == 3 ? 2 : Z, b == 0 ? 6 : Z,            \
            b == 1 ? 6 : Z, b == 2 ? 6 : Z, b == 3 ? 6 : Z, b == 0 ? 10 : Z, b == 1 ? 10 : Z,      \
            b == 2 ? 10 : Z, b == 3 ? 10 : Z, b == 0 ? 14 : Z, b == 1 ? 14 : Z, b == 2 ? 14 : Z,   \
            b == 3 ? 14 : Z, b == 0 ? 2 : Z, b == 1 ? 2 : Z, b == 2 ? 2 : Z, b == 3 ? 2 : Z,       \
            b == 0 ? 6 : Z, b == 1 ? 6 : Z, b == 2 ? 6 : Z, b == 3 ? 6 : Z, b == 0 ? 10 : Z,       \
            b == 1 ? 10 : Z, b == 2 ? 10 : Z, b == 3 ? 10 : Z, b == 0 ? 14 : Z, b == 1 ? 14 : Z,   \
            b == 2 ? 14 : Z, b == 3 ? 14 : Z                                                       \
    }
    /* one 32-byte constant each (built from two 16-byte halves, GCC
     * inserted one into the other at every use) */
    static _Alignas(32) const int8_t to[4][32] = {KR_TO(0), KR_TO(1), KR_TO(2), KR_TO(3)};
#undef KR_TO
#undef Z
#define KR_LOAD(b) _mm256_load_si256((const __m256i *)(const void *)to[b])
    return _mm256_or_si256(
        _mm256_or_si256(_mm256_shuffle_epi8(c0, KR_LOAD(0)), _mm256_shuffle_epi8(c1, KR_LOAD(1))),
        _mm256_or_si256(_mm256_shuffle_epi8(c2, KR_LOAD(2)), _mm256_shuffle_epi8(c3, KR_LOAD(3))));
#undef KR_LOAD
}

/* Rows r and r + 1 (lanes 0 and 1): the pixels as packed words, lane by
 * lane as pack_sums leaves them. False at a WRAP seam. */
FUSED_INLINE bool px8(const lvk8 *k, __m256 us, __m256 vs, int clamp2, int swap, __m256i *out)
{
    __m256i sum[4];
    if (!sums8(k, us, vs, clamp2, sum))
        return false;
    /* S - 32768 * 256 per byte; + 32768 * 256 + 32768, and the byte is
     * bits 16..23 (the sum is below 2^24): byte 2 of each 32-bit group
     * to byte b of its pixel, b0 and b2 exchanged under swap */
    const __m256i unbias = _mm256_set1_epi32(32768 * 256 + 32768);
    *out = bytes8(_mm256_add_epi32(sum[swap ? 2 : 0], unbias), _mm256_add_epi32(sum[1], unbias),
                  _mm256_add_epi32(sum[swap ? 0 : 2], unbias), _mm256_add_epi32(sum[3], unbias));
    return true;
}

/* u and v of a block's rows r and r + 1 (lanes 0-3, 4-7), shade_block's
 * operations lane by lane: what does not depend on the row is worked out
 * once per block (uv_init), the rest per pair of rows (uv8). */
typedef struct uvk {
    __m256 u01, v01, a2, a5; /* a0 + a1 * fx, a3 + a4 * fx; a2 and a5 */
    __m256 q01, q2, w;       /* q0 + q1 * fx, q2; w when q is constant */
    bool affine;             /* q1 == q2 == 0: w = 1 / q0 */
} uvk;

/* (float)(x + column) + 0.5f - ox, the same four columns in both rows */
static inline __m256 block_fx(const kr_prim *p, int x)
{
    return _mm256_sub_ps(
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(
                          _mm256_set1_epi32(x), _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3))),
                      _mm256_set1_ps(0.5f)),
        _mm256_set1_ps(p->ox));
}

/* u, v: the planes a[0..2] and a[3..5] (a varying's x and y); what is
 * the same for the whole primitive (uv_prim), then a block's columns fx
 * (uv_cols) */
FUSED_INLINE void uv_prim(const kr_prim *p, const float *a, uvk *k)
{
    k->affine = p->q[1] == 0.0f && p->q[2] == 0.0f;
    if (k->affine)
        k->w = _mm256_set1_ps(1.0f / p->q[0]);
    else
        k->q2 = _mm256_set1_ps(p->q[2]);
    k->a2 = _mm256_set1_ps(a[2]);
    k->a5 = _mm256_set1_ps(a[5]);
}

FUSED_INLINE void uv_cols(const kr_prim *p, const float *a, __m256 fx, uvk *k)
{
    if (!k->affine)
        k->q01 = _mm256_add_ps(_mm256_set1_ps(p->q[0]), _mm256_mul_ps(_mm256_set1_ps(p->q[1]), fx));
    k->u01 = _mm256_add_ps(_mm256_set1_ps(a[0]), _mm256_mul_ps(_mm256_set1_ps(a[1]), fx));
    k->v01 = _mm256_add_ps(_mm256_set1_ps(a[3]), _mm256_mul_ps(_mm256_set1_ps(a[4]), fx));
}

FUSED_INLINE void uv_init(const kr_prim *p, const float *a, __m256 fx, uvk *k)
{
    uv_prim(p, a, k);
    uv_cols(p, a, fx, k);
}

FUSED_INLINE void uv8(const kr_prim *p, const uvk *k, int y, int r, __m256 *u, __m256 *v)
{
    /* (float)(y + row) + 0.5f - oy, rows r and r + 1 in lanes 0-3 and 4-7 */
    __m256 fy = _mm256_sub_ps(
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32(y + r), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1))),
                      _mm256_set1_ps(0.5f)),
        _mm256_set1_ps(p->oy));
    __m256 w = k->affine ? k->w : _mm256_div_ps(_mm256_set1_ps(1.0f), _mm256_add_ps(k->q01, _mm256_mul_ps(k->q2, fy)));
    *u = _mm256_mul_ps(_mm256_add_ps(k->u01, _mm256_mul_ps(k->a2, fy)), w);
    *v = _mm256_mul_ps(_mm256_add_ps(k->v01, _mm256_mul_ps(k->a5, fy)), w);
}

/* 16-bit words [x0 x0 x0 x0 y0 y0 y0 y0 | x1 x1 x1 x1 y1 y1 y1 y1]: two
 * broadcasts and a blend instead of sixteen inserts. */
static inline __m256i xy16(int16_t x0, int16_t y0, int16_t x1, int16_t y1)
{
    __m256i x = _mm256_setr_m128i(_mm_set1_epi16(x0), _mm_set1_epi16(x1));
    __m256i y = _mm256_setr_m128i(_mm_set1_epi16(y0), _mm_set1_epi16(y1));
    return _mm256_blend_epi16(x, y, 0xF0);
}

static inline void lvk8_init(lvk8 *k, const kr_fused_level *L)
{
    k->base = k->baseB = L->base;
    const uint8_t *base2 = L->base + L->pitch;
    /* opaque to the compiler, which otherwise forms base + offset +
     * pitch with an extra add per texel pair */
    __asm__("" : "+r"(base2));
    k->base2 = k->base2B = base2;
    k->fw = _mm256_set1_ps(L->fw);
    k->fh = _mm256_set1_ps(L->fh);
    k->mx = _mm256_set1_epi32(L->mx);
    k->my = _mm256_set1_epi32(L->my);
    /* [x x x x y y y y] per lane from the words x | y << 16 */
    const __m256i xxyy = _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 0, 1, 0,
                                          1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3);
    k->hi = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)L->hxy), xxyy);
    k->seam = _mm256_shuffle_epi8(_mm256_set1_epi32((int32_t)L->sxy), xxyy);
    k->mul = _mm256_set1_epi32((int32_t)L->mul);
    k->lx = _mm256_set1_epi32(L->lx);
    k->ly = _mm256_set1_epi32(L->ly);
    k->pitch = _mm256_set1_epi32((int32_t)L->pitch);
    k->direct = L->direct;
}

/* n / k as the rounded reciprocal's product plus one exact-residual FMA
 * step instead of a divide (several times its throughput): the correctly
 * rounded quotient, so the divide's bits, for every sum S in
 * [0, 255 * 65536] over k = 255 * 65536 and every float in [0, 256] over
 * k = 255 (both checked exhaustively: kr_quot_avx2, test_raster_fused). */
static inline __m256 quot8(__m256 n, __m256 k, __m256 r)
{
    __m256 y = _mm256_mul_ps(n, r);
    return _mm256_fmadd_ps(_mm256_fnmadd_ps(y, k, n), r, y);
}

/* A channel's sample from its sum M in [0, 255 * 65536]: M / (255 *
 * 65536), rows8v's float. */
static inline __m256 sample8(__m256i m)
{
    return quot8(_mm256_cvtepi32_ps(m), _mm256_set1_ps(255.0f * 65536.0f),
                 _mm256_set1_ps(1.0f / (255.0f * 65536.0f)));
}

void kr_quot_avx2(const float in[8], float k, float out[8])
{
    _mm256_storeu_ps(out, quot8(_mm256_loadu_ps(in), _mm256_set1_ps(k), _mm256_set1_ps(1.0f / k)));
}

/* kiln_ps_sample on one level read directly (sample.c's rgba8_rows), two
 * rows per vector: the same sums, each S / (255 * 65536) as there. u[h]
 * and v[h] hold rows 2h and 2h + 1 (lanes 0-3, 4-7). */
FUSED_INLINE void rows8v(const kr_fused_level *L, const __m256 u[2], const __m256 v[2], int clamp2,
                         float *o0, float *o1, float *o2, float *o3)
{
    lvk8 k;
    lvk8_init(&k, L);
    const __m256i unbias = _mm256_set1_epi32(32768 * 256);
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
        __m256i sum[4];
        sums8_any(&k, u[h], v[h], clamp2, sum);
        /* per lane: [b p0, b p1, b p2, b p3] for row 2h and row 2h + 1 */
        float *o[4] = {o0, o1, o2, o3};
        for (int b = 0; b < 4; b++)
            _mm256_storeu_ps(o[b] + 8 * h, sample8(_mm256_add_epi32(sum[b], unbias)));
    }
}

/* rows8v from u and v as arrays of the block's 16 pixels, row by row
 * (shade_block's). */
FUSED_INLINE bool rows8(const kr_fused_level *L, const float *u, const float *v, int clamp2,
                        float *o0, float *o1, float *o2, float *o3)
{
    const __m256 uu[2] = {_mm256_loadu_ps(u), _mm256_loadu_ps(u + 8)};
    const __m256 vv[2] = {_mm256_loadu_ps(v), _mm256_loadu_ps(v + 8)};
    rows8v(L, uu, vv, clamp2, o0, o1, o2, o3);
    return true;
}

/* rows8 on level L, clamp2 a constant in each copy (both entry points
 * below expand it). */
FUSED_INLINE bool rows8_level(const kr_fused_level *L, const float *u, const float *v, float *o0,
                              float *o1, float *o2, float *o3)
{
    return L->clamp2 && L->direct ? rows8(L, u, v, 1, o0, o1, o2, o3)
                                  : rows8(L, u, v, 0, o0, o1, o2, o3);
}

bool kr_sample_rows_avx2(const kr_fused_level *L, const float *u, const float *v, float *o0,
                         float *o1, float *o2, float *o3)
{
    return rows8_level(L, u, v, o0, o1, o2, o3);
}

/* kiln_ps_sample's prepared call, the kernel's body in place (no second
 * call per block). */
void kr_sample_rows_rgba_avx2(const kr_fused_level *L, const float *u, const float *v, float *rgba,
                              int swap)
{
    rows8_level(L, u, v, rgba + (swap ? 2 : 0) * KILN_PS_BLOCK, rgba + KILN_PS_BLOCK,
                rgba + (swap ? 0 : 2) * KILN_PS_BLOCK, rgba + 3 * KILN_PS_BLOCK);
}

/* ---- kiln_ps_sample's POINT shortcut (kr_point_fn) ---- */

/* sample.c's address() on 8 texel indices i on an axis of n texels, for
 * CLAMP, MIRROR_ONCE, and WRAP and MIRROR over a power-of-two n: MIRROR
 * t = i mod 2n, then min(t, 2n - 1 - t); MIRROR_ONCE -1 - i (i XOR its
 * sign) for a negative i, then CLAMP. */
static inline __m256i axis8(__m256i i, int32_t n, kiln_address mode)
{
    const __m256i last = _mm256_set1_epi32(n - 1);
    switch (mode) {
    case KILN_ADDRESS_WRAP:
        return _mm256_and_si256(i, last);
    case KILN_ADDRESS_MIRROR: {
        const __m256i p = _mm256_set1_epi32(2 * n - 1);
        const __m256i t = _mm256_and_si256(i, p);
        return _mm256_min_epi32(t, _mm256_sub_epi32(p, t));
    }
    case KILN_ADDRESS_MIRROR_ONCE:
        return _mm256_min_epi32(_mm256_xor_si256(i, _mm256_srai_epi32(i, 31)), last);
    default: /* CLAMP */
        return _mm256_min_epi32(_mm256_max_epi32(i, _mm256_setzero_si256()), last);
    }
}

/* The texel index along one axis of 8 coordinates c on a level of n
 * texels: floor(c * n) of c * n clamped to +-2^30 (a NaN to -2^30:
 * _mm256_max_ps gives its second operand then, as the general path's
 * split4 does), then the axis's address mode (axis8). */
static inline __m256i point_axis8(__m256 c, float fn, int32_t n, kiln_address mode)
{
    const __m256 lim = _mm256_set1_ps(1073741824.0f), nlim = _mm256_set1_ps(-1073741824.0f);
    const __m256 x = _mm256_min_ps(_mm256_max_ps(_mm256_mul_ps(c, _mm256_set1_ps(fn)), nlim), lim);
    return axis8(_mm256_cvttps_epi32(_mm256_floor_ps(x)), n, mode);
}

/* A byte of each texel (in the low 8 bits of b's lanes) as a float,
 * divided by 255 (quot8: the divide's bits for every byte). */
static inline __m256 point_byte8(__m256i b)
{
    b = _mm256_and_si256(b, _mm256_set1_epi32(0xff));
    return quot8(_mm256_cvtepi32_ps(b), _mm256_set1_ps(255.0f), _mm256_set1_ps(1.0f / 255.0f));
}

/* Half a block's texels (two rows of 4 pixels) from the level's window of
 * 4 x 2 texels at lane 0's, pulled back inside the level, when every
 * index falls in it (magnified, away from a WRAP seam): two 16-byte row
 * loads and a permute in place of a gather. */
static inline bool point_window8(const kr_point_level *L, __m256i x, __m256i y, __m256i *t)
{
    if (L->w < 4 || L->h < 2)
        return false;
    const int32_t x0 = _mm256_cvtsi256_si32(x), y0 = _mm256_cvtsi256_si32(y);
    const int32_t wx = x0 < L->w - 4 ? x0 : L->w - 4, wy = y0 < L->h - 2 ? y0 : L->h - 2;
    const __m256i dx = _mm256_sub_epi32(x, _mm256_set1_epi32(wx));
    const __m256i dy = _mm256_sub_epi32(y, _mm256_set1_epi32(wy));
    /* dx in [0, 3] and dy in [0, 1] (a negative one is huge unsigned) */
    const __m256i in = _mm256_or_si256(dx, _mm256_slli_epi32(dy, 1));
    const __m256i ok = _mm256_cmpeq_epi32(_mm256_min_epu32(in, _mm256_set1_epi32(3)), in);
    if (_mm256_movemask_ps(_mm256_castsi256_ps(ok)) != 0xff)
        return false;
    const uint8_t *r = L->base + (size_t)wy * (size_t)L->pitch + (size_t)wx * 4;
    const __m256i win = _mm256_inserti128_si256(
        _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)r)),
        _mm_loadu_si128((const __m128i *)(const void *)(r + L->pitch)), 1);
    *t = _mm256_permutevar8x32_epi32(win, _mm256_add_epi32(_mm256_slli_epi32(dy, 2), dx));
    return true;
}

void kr_sample_point_avx2(const kr_point_level *L, const float *u, const float *v, float *rgba,
                          int swap)
{
    float *const o0 = rgba + (swap ? 2 : 0) * KILN_PS_BLOCK, *const o2 = rgba + (swap ? 0 : 2) *
                                                                                    KILN_PS_BLOCK;
    for (int h = 0; h < KILN_PS_BLOCK; h += 8) {
        const __m256i x = point_axis8(_mm256_loadu_ps(u + h), L->fw, L->w, L->au);
        const __m256i y = point_axis8(_mm256_loadu_ps(v + h), L->fh, L->h, L->av);
        __m256i t;
        if (!point_window8(L, x, y, &t)) {
            const __m256i off = _mm256_add_epi32(_mm256_mullo_epi32(y, _mm256_set1_epi32(L->pitch)),
                                                 _mm256_slli_epi32(x, 2));
            t = _mm256_i32gather_epi32((const int *)(const void *)L->base, off, 1);
        }
        _mm256_storeu_ps(o0 + h, point_byte8(t));
        _mm256_storeu_ps(rgba + KILN_PS_BLOCK + h, point_byte8(_mm256_srli_epi32(t, 8)));
        _mm256_storeu_ps(o2 + h, point_byte8(_mm256_srli_epi32(t, 16)));
        _mm256_storeu_ps(rgba + 3 * KILN_PS_BLOCK + h, point_byte8(_mm256_srli_epi32(t, 24)));
    }
}

/* ---- kiln_ps_sample's BC blocks (kr_sample_bc_avx2) ---- */

/* Four 32-bit values in lanes 0-3, zeros above. */
static inline __m256i load4x(const uint32_t v[4])
{
    return _mm256_zextsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)v));
}

/* fused_avx512.c's bc1_palettes16 on two halves: pv[c][0] holds blocks 0
 * and 1 (entries 0..7), pv[c][1] blocks 2 and 3 (entries 8..15). The same
 * operations lane for lane, so the same values. */
static inline void bc1_palettes8(const uint32_t ends[4], int four_always, __m256 pv[4][2])
{
    const __m256i sh = _mm256_setr_epi32(11, 5, 0, 0, 11, 5, 0, 0);
    const __m256i m = _mm256_setr_epi32(31, 63, 31, 0, 31, 63, 31, 0);
    const __m256 d = _mm256_setr_ps(31.0f, 63.0f, 31.0f, 1.0f, 31.0f, 63.0f, 31.0f, 1.0f);
    const __m256 two = _mm256_set1_ps(2.0f), three = _mm256_set1_ps(3.0f),
                 one = _mm256_set1_ps(1.0f);
    const __m256 alpha = _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, 0, -1, 0, 0, 0, -1));
    for (int h = 0; h < 2; h++) {
        const __m256i e = _mm256_permutevar8x32_epi32(
            load4x(ends), _mm256_setr_epi32(2 * h, 2 * h, 2 * h, 2 * h, 2 * h + 1, 2 * h + 1,
                                            2 * h + 1, 2 * h + 1));
        const __m256i c0 = _mm256_and_si256(e, _mm256_set1_epi32(0xffff));
        const __m256i c1 = _mm256_srli_epi32(e, 16);
        const __m256 e0 =
            _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(c0, sh), m)), d);
        const __m256 e1 =
            _mm256_div_ps(_mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srlv_epi32(c1, sh), m)), d);
        const __m256 t2 = _mm256_div_ps(_mm256_add_ps(_mm256_mul_ps(two, e0), e1), three);
        const __m256 t3 = _mm256_div_ps(_mm256_add_ps(e0, _mm256_mul_ps(two, e1)), three);
        const __m256 hf = _mm256_mul_ps(_mm256_add_ps(e0, e1), _mm256_set1_ps(0.5f));
        const __m256 four = four_always
                                ? _mm256_castsi256_ps(_mm256_set1_epi32(-1))
                                : _mm256_castsi256_ps(_mm256_cmpgt_epi32(c0, c1)); /* 16-bit */
        const __m256 v0 = _mm256_blendv_ps(e0, one, alpha), v1 = _mm256_blendv_ps(e1, one, alpha);
        const __m256 v2 = _mm256_blendv_ps(_mm256_blendv_ps(hf, t2, four), one, alpha);
        const __m256 v3 =
            _mm256_blendv_ps(_mm256_and_ps(four, t3), _mm256_and_ps(four, one), alpha);
        const __m256 lo01 = _mm256_unpacklo_ps(v0, v1), lo23 = _mm256_unpacklo_ps(v2, v3);
        const __m256 hi01 = _mm256_unpackhi_ps(v0, v1), hi23 = _mm256_unpackhi_ps(v2, v3);
        pv[0][h] = _mm256_shuffle_ps(lo01, lo23, _MM_SHUFFLE(1, 0, 1, 0));
        pv[1][h] = _mm256_shuffle_ps(lo01, lo23, _MM_SHUFFLE(3, 2, 3, 2));
        pv[2][h] = _mm256_shuffle_ps(hi01, hi23, _MM_SHUFFLE(1, 0, 1, 0));
        pv[3][h] = _mm256_shuffle_ps(hi01, hi23, _MM_SHUFFLE(3, 2, 3, 2));
    }
}

/* The least of 8 lanes. */
static inline int32_t hmin8(__m256i x)
{
    __m128i m = _mm_min_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_min_epi32(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(m);
}

/* fused_avx512.c's bc_ramps16 for one block (e01 = e0 | e1 << 8): lane
 * code of the result is the block's value of the code. */
static inline __m256 bc_ramp8(uint32_t e01)
{
    const __m256 c = _mm256_setr_ps(0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f);
    const __m256 k8 = _mm256_sub_ps(_mm256_set1_ps(8.0f), c),
                 k6 = _mm256_sub_ps(_mm256_set1_ps(6.0f), c);
    const __m256 k1 = _mm256_sub_ps(c, _mm256_set1_ps(1.0f));
    const __m256 k255 = _mm256_set1_ps(255.0f);
    const __m256 a = _mm256_div_ps(_mm256_set1_ps((float)(e01 & 255u)), k255);
    const __m256 z = _mm256_div_ps(_mm256_set1_ps((float)(e01 >> 8 & 255u)), k255);
    const __m256 six = _mm256_div_ps(_mm256_add_ps(_mm256_mul_ps(k8, a), _mm256_mul_ps(k1, z)),
                                     _mm256_set1_ps(7.0f));
    const __m256 four = _mm256_div_ps(_mm256_add_ps(_mm256_mul_ps(k6, a), _mm256_mul_ps(k1, z)),
                                      _mm256_set1_ps(5.0f));
    /* e0 <= e1: codes 2..5 interpolate, 6 reads 0, 7 reads 1 */
    __m256 v = _mm256_blend_ps(_mm256_blend_ps(four, _mm256_setzero_ps(), 0x40),
                               _mm256_set1_ps(1.0f), 0x80);
    if ((e01 & 255u) > (e01 >> 8 & 255u))
        v = six;
    return _mm256_blend_ps(v, _mm256_blend_ps(a, z, 0x02), 0x03); /* codes 0 and 1 */
}

/* fused_avx512.c's ramp_tap16, eight lanes: the value of each lane's
 * texel ti in the ramp of its block wb (r: a vector a block). */
static inline __m256 ramp_tap8(__m256i ti, __m256i wb, __m256i lo, __m256i hi, const __m256 r[4])
{
    const __m256i s = _mm256_add_epi32(ti, _mm256_slli_epi32(ti, 1));
    const __m256i k32 = _mm256_set1_epi32(32);
    const __m256i l = _mm256_permutevar8x32_epi32(lo, wb), h = _mm256_permutevar8x32_epi32(hi, wb);
    const __m256i code = _mm256_and_si256(
        _mm256_or_si256(_mm256_or_si256(_mm256_srlv_epi32(l, s),
                                        _mm256_sllv_epi32(h, _mm256_sub_epi32(k32, s))),
                        _mm256_srlv_epi32(h, _mm256_sub_epi32(s, k32))),
        _mm256_set1_epi32(7));
    const __m256 b0 = _mm256_castsi256_ps(_mm256_slli_epi32(wb, 31));
    const __m256 b1 = _mm256_castsi256_ps(_mm256_slli_epi32(wb, 30));
    const __m256 r01 = _mm256_blendv_ps(_mm256_permutevar8x32_ps(r[0], code),
                                        _mm256_permutevar8x32_ps(r[1], code), b0);
    const __m256 r23 = _mm256_blendv_ps(_mm256_permutevar8x32_ps(r[2], code),
                                        _mm256_permutevar8x32_ps(r[3], code), b0);
    return _mm256_blendv_ps(r01, r23, b1);
}

/* kr_sample_bc_avx512's block (fused.h) in two halves of eight pixels
 * (rows 0-1, rows 2-3), one window for both: the same operations per
 * pixel, so the same bits. */
bool kr_sample_bc_avx2(kiln_format f, const kr_bc_level *L, const float *u, const float *v,
                       const float *lw, float *rgba)
{
    const int kind = kr_bc_kind(f), srgb = kres_format_srgb(f);
    if (!kind || !kr_bc_axis_ok(L->w, L->au) || !kr_bc_axis_ok(L->h, L->av))
        return false;
    const __m256 half = _mm256_set1_ps(0.5f), fw = _mm256_set1_ps(L->fw),
                 fh = _mm256_set1_ps(L->fh);
    const __m256i one = _mm256_set1_epi32(1), three = _mm256_set1_epi32(3);
    __m256i ax[2], ay[2], xs[2][2], ys[2][2]; /* [half][tap column / row] */
    int32_t bx0 = INT32_MAX, by0 = INT32_MAX;
    for (int h = 0; h < 2; h++) {
        const __m256i x0 =
            split8(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(u + 8 * h), fw), half), &ax[h]);
        const __m256i y0 =
            split8(_mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(v + 8 * h), fh), half), &ay[h]);
        xs[h][0] = axis8(x0, L->w, L->au);
        xs[h][1] = axis8(_mm256_add_epi32(x0, one), L->w, L->au);
        ys[h][0] = axis8(y0, L->h, L->av);
        ys[h][1] = axis8(_mm256_add_epi32(y0, one), L->h, L->av);
        const int32_t bx = hmin8(_mm256_srai_epi32(_mm256_min_epi32(xs[h][0], xs[h][1]), 2));
        const int32_t by = hmin8(_mm256_srai_epi32(_mm256_min_epi32(ys[h][0], ys[h][1]), 2));
        bx0 = bx < bx0 ? bx : bx0;
        by0 = by < by0 ? by : by0;
    }
    const __m256i vbx0 = _mm256_set1_epi32(bx0), vby0 = _mm256_set1_epi32(by0);
    __m256i wb[2][2][2]; /* [half][b][a]: the tap's window block, dy * 2 + dx */
    uint32_t used = 0;
    __m256i far = _mm256_setzero_si256();
    for (int h = 0; h < 2; h++)
        for (int b = 0; b < 2; b++) {
            const __m256i dy = _mm256_sub_epi32(_mm256_srai_epi32(ys[h][b], 2), vby0);
            for (int a = 0; a < 2; a++) {
                const __m256i dx = _mm256_sub_epi32(_mm256_srai_epi32(xs[h][a], 2), vbx0);
                far = _mm256_or_si256(far, _mm256_or_si256(dx, dy));
                wb[h][b][a] = _mm256_add_epi32(_mm256_slli_epi32(dy, 1), dx);
            }
        }
    /* every block within the window: each difference 0 or 1 */
    if (!_mm256_testz_si256(far, _mm256_set1_epi32(~1)))
        return false;
    for (int h = 0; h < 2; h++)
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++)
                for (uint32_t id = 0; id < 4; id++)
                    if (_mm256_movemask_ps(_mm256_castsi256_ps(
                            _mm256_cmpeq_epi32(wb[h][b][a], _mm256_set1_epi32((int32_t)id)))))
                        used |= 1u << id;
    kr_bc_fields fd;
    kr_bc_read(L, kind, bx0, by0, used, &fd);
    const int nch = kr_bc_channels(kind);
    /* the ramps' values (BC3's alpha, BC4's red, BC5's red and green), a
     * vector a block */
    __m256 ramp[2][4];
    for (int r = 0; r < 2; r++)
        for (uint32_t id = 0; id < 4; id++)
            ramp[r][id] = (kind >= 3 && (r == 0 || kind == 5) && (used >> id & 1u))
                              ? bc_ramp8(fd.e01[r][id])
                              : _mm256_setzero_ps();
    __m256 pv[4][2];
    for (int c = 0; c < 4; c++)
        pv[c][0] = pv[c][1] = _mm256_setzero_ps();
    if (kind <= 3)
        bc1_palettes8(fd.ends, kind != 1, pv);
    if (srgb) { /* the curve after the interpolation */
        float pal[16];
        for (int c = 0; c < 3; c++) {
            _mm256_storeu_ps(pal, pv[c][0]);
            _mm256_storeu_ps(pal + 8, pv[c][1]);
            for (uint32_t e = 0; e < 16; e++)
                if (used >> (e / 4) & 1u)
                    pal[e] = kres_srgb_to_linear(pal[e]);
            pv[c][0] = _mm256_loadu_ps(pal);
            pv[c][1] = _mm256_loadu_ps(pal + 8);
        }
    }
    const __m256i cv = load4x(fd.codes);
    /* the ramps' fields (BC2: ramp 0's lo and hi are its 64 alpha bits) */
    const __m256i rlo[2] = {load4x(fd.lo[0]), load4x(fd.lo[1])};
    const __m256i rhi[2] = {load4x(fd.hi[0]), load4x(fd.hi[1])};
    /* BC2: nibble k reads k / 15 (kres_bc2_alpha), entries 0-7 and 8-15 */
    const __m256 tab15[2] = {
        _mm256_div_ps(_mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_ps(15.0f)),
        _mm256_div_ps(_mm256_setr_ps(8, 9, 10, 11, 12, 13, 14, 15), _mm256_set1_ps(15.0f))};
    const __m256i k256 = _mm256_set1_epi32(256);
    const __m256 inv = _mm256_set1_ps(1.0f / 65536.0f);
    for (int h = 0; h < 2; h++) {
        const __m256i wx[2] = {_mm256_sub_epi32(k256, ax[h]), ax[h]};
        const __m256i wy[2] = {_mm256_sub_epi32(k256, ay[h]), ay[h]};
        __m256 ls[4];
        for (int c = 0; c < 4; c++)
            ls[c] = _mm256_setzero_ps();
        for (int b = 0; b < 2; b++)
            for (int a = 0; a < 2; a++) {
                const __m256i ti =
                    _mm256_add_epi32(_mm256_slli_epi32(_mm256_and_si256(ys[h][b], three), 2),
                                     _mm256_and_si256(xs[h][a], three));
                const __m256i wbv = wb[h][b][a];
                __m256 t[4];
                if (kind <= 3) { /* the 2-bit color code's palette entry */
                    const __m256i code =
                        _mm256_and_si256(_mm256_srlv_epi32(_mm256_permutevar8x32_epi32(cv, wbv),
                                                           _mm256_slli_epi32(ti, 1)),
                                         three);
                    const __m256i pi = _mm256_add_epi32(_mm256_slli_epi32(wbv, 2), code);
                    const __m256 hi = _mm256_castsi256_ps(_mm256_slli_epi32(pi, 28)); /* pi >= 8 */
                    for (int c = 0; c < 4; c++)
                        t[c] = _mm256_blendv_ps(_mm256_permutevar8x32_ps(pv[c][0], pi),
                                                _mm256_permutevar8x32_ps(pv[c][1], pi), hi);
                }
                if (kind == 2) {
                    /* the nibble at 4 ti of the 64 bits (a shift by 32 or
                     * more, or by a negative count, gives 0) */
                    const __m256i sft = _mm256_slli_epi32(ti, 2);
                    const __m256i nib = _mm256_and_si256(
                        _mm256_or_si256(
                            _mm256_srlv_epi32(_mm256_permutevar8x32_epi32(rlo[0], wbv), sft),
                            _mm256_srlv_epi32(_mm256_permutevar8x32_epi32(rhi[0], wbv),
                                              _mm256_sub_epi32(sft, _mm256_set1_epi32(32)))),
                        _mm256_set1_epi32(15));
                    t[3] = _mm256_blendv_ps(_mm256_permutevar8x32_ps(tab15[0], nib),
                                            _mm256_permutevar8x32_ps(tab15[1], nib),
                                            _mm256_castsi256_ps(_mm256_slli_epi32(nib, 28)));
                } else if (kind == 3) {
                    t[3] = ramp_tap8(ti, wbv, rlo[0], rhi[0], ramp[0]);
                } else if (kind >= 4) { /* BC4, BC5: the ramps' channels; the rest not summed */
                    t[0] = ramp_tap8(ti, wbv, rlo[0], rhi[0], ramp[0]);
                    t[1] = kind == 5 ? ramp_tap8(ti, wbv, rlo[1], rhi[1], ramp[1]) : t[0];
                }
                const __m256 w =
                    _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_mullo_epi32(wx[a], wy[b])), inv);
                for (int c = 0; c < nch; c++)
                    ls[c] = _mm256_add_ps(ls[c], _mm256_mul_ps(w, t[c]));
            }
        const __m256 lwv = _mm256_loadu_ps(lw + 8 * h);
        for (int c = 0; c < 4; c++)
            _mm256_storeu_ps(rgba + c * KILN_PS_BLOCK + 8 * h,
                             c < nch ? _mm256_add_ps(_mm256_setzero_ps(), _mm256_mul_ps(lwv, ls[c]))
                                     : _mm256_set1_ps(c == 3 ? 1.0f : 0.0f));
    }
    return true;
}

/* Level A's constants in lane 0, B's in lane 1. */
static inline void lvk8_pair(lvk8 *k, const kr_fused_level *A, const kr_fused_level *B)
{
    k->base = A->base;
    k->base2 = A->base + A->pitch;
    k->baseB = B->base;
    k->base2B = B->base + B->pitch;
    k->fw = _mm256_setr_m128(_mm_set1_ps(A->fw), _mm_set1_ps(B->fw));
    k->fh = _mm256_setr_m128(_mm_set1_ps(A->fh), _mm_set1_ps(B->fh));
    k->mx = _mm256_setr_m128i(_mm_set1_epi32(A->mx), _mm_set1_epi32(B->mx));
    k->my = _mm256_setr_m128i(_mm_set1_epi32(A->my), _mm_set1_epi32(B->my));
    k->hi = xy16(A->hx, A->hy, B->hx, B->hy);
    k->seam = xy16(A->sx, A->sy, B->sx, B->sy);
    k->mul = _mm256_setr_m128i(_mm_set1_epi32((int32_t)((uint32_t)A->pitch << 16 | 4u)),
                               _mm_set1_epi32((int32_t)((uint32_t)B->pitch << 16 | 4u)));
    k->lx = _mm256_setr_m128i(_mm_set1_epi32(A->lx), _mm_set1_epi32(B->lx));
    k->ly = _mm256_setr_m128i(_mm_set1_epi32(A->ly), _mm_set1_epi32(B->ly));
    k->pitch = _mm256_setr_m128i(_mm_set1_epi32((int32_t)A->pitch), _mm_set1_epi32((int32_t)B->pitch));
    k->direct = A->direct && B->direct;
}

/* The sums as exact floats, per texel byte b: s[b] holds byte b of each
 * lane's four pixels (sample.c's rgba8_4px, per lane), as sums8 leaves
 * them. */
static inline void planar8(const __m256i sum[4], __m256 s[4])
{
    const __m256i unbias = _mm256_set1_epi32(32768 * 256);
    for (int b = 0; b < 4; b++)
        s[b] = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[b], unbias));
}

/* Two quads side by side: rows 2h and 2h + 1 of a block, [r0 r1 r2 r3 |
 * r4 r5 r6 r7], as [quad 2h: r0 r1 r4 r5 | quad 2h + 1: r2 r3 r6 r7]
 * (and back: the same permutation). */
static inline __m256 quads_of_rows(__m256 x)
{
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(x), _MM_SHUFFLE(3, 1, 2, 0)));
}

bool kr_sample_quads_avx2(const kr_fused_quad q[4], const float *u, const float *v, float *out[4])
{
    const __m256 d = _mm256_set1_ps(255.0f * 65536.0f), rd = _mm256_set1_ps(1.0f / (255.0f * 65536.0f)),
                 inv = _mm256_set1_ps(1.0f / 65536.0f), k255 = _mm256_set1_ps(255.0f),
                 r255 = _mm256_set1_ps(1.0f / 255.0f);
    __m256 res[2][4];
    for (int h = 0; h < 2; h++) {
        const kr_fused_quad *A = &q[2 * h], *B = &q[2 * h + 1];
        __m256 us = quads_of_rows(_mm256_loadu_ps(u + 8 * h));
        __m256 vs = quads_of_rows(_mm256_loadu_ps(v + 8 * h));
        lvk8 k;
        if (A->L[0] == B->L[0]) /* the same constants, set up for less */
            lvk8_init(&k, A->L[0]);
        else
            lvk8_pair(&k, A->L[0], B->L[0]);
        __m256i sum[4];
        sums8_any(&k, us, vs, 0, sum);
        __m256 s[4];
        planar8(sum, s);
        /* one level (lw = 1): S / (255 * 65536), as rgba8_plan4 */
        for (int b = 0; b < 4; b++)
            res[h][b] = quot8(s[b], d, rd);
        if (A->passes == 2 || B->passes == 2) {
            /* two: (lw0 * (S0 / 65536) + lw1 * (S1 / 65536)) / 255, lane by
             * lane; a one-level quad's lane reads its level again and keeps
             * the first result */
            if (A->L[1] == B->L[1])
                lvk8_init(&k, A->L[1]);
            else
                lvk8_pair(&k, A->L[1], B->L[1]);
            sums8_any(&k, us, vs, 0, sum);
            __m256 s1[4];
            planar8(sum, s1);
            const __m256 lw0 = _mm256_setr_m128(_mm_set1_ps(A->lw[0]), _mm_set1_ps(B->lw[0]));
            const __m256 lw1 = _mm256_setr_m128(_mm_set1_ps(A->lw[1]), _mm_set1_ps(B->lw[1]));
            const __m256 two = _mm256_castsi256_ps(
                _mm256_setr_m128i(_mm_set1_epi32(A->passes == 2 ? -1 : 0), _mm_set1_epi32(B->passes == 2 ? -1 : 0)));
            for (int b = 0; b < 4; b++) {
                __m256 acc = _mm256_mul_ps(lw0, _mm256_mul_ps(s[b], inv));
                __m256 r2 = quot8(_mm256_add_ps(acc, _mm256_mul_ps(lw1, _mm256_mul_ps(s1[b], inv))), k255, r255);
                res[h][b] = _mm256_blendv_ps(res[h][b], r2, two);
            }
        }
    }
    for (int h = 0; h < 2; h++)
        for (int b = 0; b < 4; b++)
            _mm256_storeu_ps(out[b] + 8 * h, quads_of_rows(res[h][b]));
    return true;
}

FUSED_INLINE bool block_k(const lvk8 *k, uvk *uk, const kr_prim *p, int x, int y, int clamp2,
                          int swap, uint8_t *dst, size_t pitch, uint32_t mask)
{
    uv_cols(p, p->attr, block_fx(p, x), uk);
    __m256i px[2];
    if (mask == 0xffffu) { /* most blocks: two rows per store */
#pragma GCC unroll 2
        for (int h = 0; h < 2; h++) {
            __m256 u, v;
            uv8(p, uk, y, 2 * h, &u, &v);
            if (!px8(k, u, v, clamp2, swap, &px[h]))
                return false;
        }
        _mm256_storeu2_m128i((__m128i *)(void *)(dst + pitch), (__m128i *)(void *)dst, px[0]);
        _mm256_storeu2_m128i((__m128i *)(void *)(dst + 3 * pitch), (__m128i *)(void *)(dst + 2 * pitch), px[1]);
        return true;
    }
    for (int h = 0; h < 2; h++) {
        if (!(mask >> (8 * h) & 0xffu))
            continue;
        __m256 u, v;
        uv8(p, uk, y, 2 * h, &u, &v);
        if (!px8(k, u, v, clamp2, swap, &px[h]))
            return false;
    }
    for (int h = 0; h < 2; h++) {
        uint32_t m = mask >> (8 * h);
        if (m & 15u)
            kr_store_row(dst + (size_t)(2 * h) * pitch, _mm256_castsi256_si128(px[h]), m & 15u);
        if (m >> 4 & 15u)
            kr_store_row(dst + (size_t)(2 * h + 1) * pitch, _mm256_extracti128_si256(px[h], 1),
                         m >> 4 & 15u);
    }
    return true;
}

/* A block, or the blocks of a rect inside the triangle (kr_span_fn; x1 >
 * 0) with the primitive's constants set up once; a block block_k leaves
 * (at a WRAP seam) to the SSE2 kernel. No fetches ahead: the block path
 * neither blends nor masks channels (kr_block_select), so the draw's
 * ahead_rt is 0. */
FUSED_INLINE bool block(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask, int x1,
                        int y1, int clamp2)
{
    const kr_fused_draw *fd = (const kr_fused_draw *)(const void *)p->dx->block_data;
    lvk8 k;
    lvk8_init(&k, &fd->L0);
    uvk uk;
    uv_prim(p, p->attr, &uk);
    size_t pitch = fb->rt_pitch[0];
    if (x1 <= 0) {
        uint8_t *dst = fb->rt[0] + (size_t)y * pitch + (size_t)x * 4;
        return block_k(&k, &uk, p, x, y, clamp2, fd->swap, dst, pitch, mask) ||
               kr_fused_block_sse2(p, fb, x, y, mask);
    }
    const int x0 = x, y0 = y;
    for (int by = y0 & ~3; by < y1; by += 4)
        for (int bx = x0 & ~3; bx < x1; bx += 4) {
            uint32_t m = kr_rect_mask(bx, by, x0, y0, x1, y1);
            uint8_t *dst = fb->rt[0] + (size_t)by * pitch + (size_t)bx * 4;
            if (!block_k(&k, &uk, p, bx, by, clamp2, fd->swap, dst, pitch, m))
                kr_fused_block_sse2(p, fb, bx, by, m);
        }
    return true;
}

/* clamp2 a constant in each copy: no masks, no seam test */
static inline bool block_level(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask,
                               int x1, int y1)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_draw *fd = (const kr_fused_draw *)(const void *)p->dx->block_data;
    return fd->L0.clamp2 ? block(p, fb, x, y, mask, x1, y1, 1)
                         : block(p, fb, x, y, mask, x1, y1, 0);
}

bool kr_fused_block_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    return block_level(p, fb, x, y, mask, 0, 0);
}

bool kr_fused_span_block_avx2(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    return block_level(p, fb, x0, y0, 0, x1, y1);
}

/* kr_ps_texture's kiln_ps_sample (slot 0, sampler 0) at u, v, whose
 * other arguments it reads only the views of. */
static inline void sample_slot0(const kr_prim *p, int x, int y, uint32_t mask, const float *u,
                                const float *v, float *rgba)
{
    const kr_drawx *dx = p->dx;
    kiln_ps_args a = {.x = x,
                      .y = y,
                      .mask = mask,
                      .front_facing = p->front,
                      .textures = dx->tex,
                      .user = dx->s->ps_user,
                      .primitive_id = p->prim_id};
    kiln_ps_sample(&a, 0, 0, u, v, rgba);
}

/* The texture effect's sample at the varying whose x and y planes are
 * a[0..5], into rgba (KILN_PS_COLOR's layout), at the AVX2 level: u and v
 * in registers (uv8, the fused block's, kr_interpolate_avx2's operations
 * lane by lane); for one prepared level (kr_fused_shade.one) straight into
 * the rows kernel that kiln_ps_sample's shortcut would reach, else through
 * kiln_ps_sample. */
FUSED_INLINE void shade_sample8(const kr_prim *p, const float *a, int x, int y, uint32_t mask,
                                float *rgba)
{
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)p->dx->shade_data;
    uvk uk;
    uv_init(p, a, block_fx(p, x), &uk);
    __m256 uu[2], vv[2];
    for (int h = 0; h < 2; h++)
        uv8(p, &uk, y, 2 * h, &uu[h], &vv[h]);
    if (sd->one) {
        float *o0 = rgba + (sd->swap ? 2 : 0) * KILN_PS_BLOCK,
              *o2 = rgba + (sd->swap ? 0 : 2) * KILN_PS_BLOCK;
        if (sd->L.clamp2 && sd->L.direct)
            rows8v(&sd->L, uu, vv, 1, o0, rgba + KILN_PS_BLOCK, o2, rgba + 3 * KILN_PS_BLOCK);
        else
            rows8v(&sd->L, uu, vv, 0, o0, rgba + KILN_PS_BLOCK, o2, rgba + 3 * KILN_PS_BLOCK);
        return;
    }
    _Alignas(32) float uv[2 * KILN_PS_BLOCK];
    for (int h = 0; h < 2; h++) {
        _mm256_store_ps(uv + 8 * h, uu[h]);
        _mm256_store_ps(uv + KILN_PS_BLOCK + 8 * h, vv[h]);
    }
    sample_slot0(p, x, y, mask, uv, uv + KILN_PS_BLOCK, rgba);
}

bool kr_fused_shade_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    _Alignas(32) float col[4 * KILN_PS_BLOCK];
    /* varying 0's x and y as shade_block interpolates them, the other
     * components unread */
    if (dx->wide16) {
        const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)dx->shade_data;
        _Alignas(32) float uv[2 * KILN_PS_BLOCK];
        const float *u = uv, *v = uv + KILN_PS_BLOCK;
        kr_interpolate_avx512(p, x, y, 2, 3u, uv);
        /* for one level the kernel kiln_ps_sample's shortcut would reach,
         * with the level set up at draw time */
        if (sd->one)
            kr_sample_rows_avx512(&sd->L, u, v, col + (sd->swap ? 2 : 0) * KILN_PS_BLOCK,
                                  col + KILN_PS_BLOCK, col + (sd->swap ? 0 : 2) * KILN_PS_BLOCK,
                                  col + 3 * KILN_PS_BLOCK);
        else
            sample_slot0(p, x, y, mask, u, v, col);
    } else {
        shade_sample8(p, p->attr, x, y, mask, col);
    }
    /* output()'s writes of target 0, as the draw chose them */
    if (dx->write8)
        dx->write8(&s->blend[0], s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, col, mask);
    return true;
}

/* kr_fused_shade_avx2 for ADD of (ONE, ONE) on both the color and the
 * alpha part (kr_blend_kind 1) with one prepared level (kr_fused_shade:
 * one, flip, keep): the target's byte d plus the sample's byte, saturated
 * at 255, where that is the float formula's byte. A channel's sum M (in
 * [0, 255 * 65536]; the sample is fl(M / (255 * 65536)), rows8v's) gives
 * c = (M + 32768) >> 16, and the formula's byte, clamp(fl(fl(sample +
 * fl(d / 255)) * 255) + 0.5) truncated, lies within 3 * 2^-16 of M /
 * 65536 + d + 0.5 (the quotient: 255 * 2^-25; d / 255: 255 * 2^-25; the
 * sum, when below 1: 255 * 2^-25; the product and the + 0.5 below 256:
 * 2^-17 each; a sum of 1 or more is clamped to 255, as c + d is). So it
 * is min(255, c + d) unless (M + 32768) mod 65536 is within ADD_BAND of
 * 0: two rows with such a covered pixel take the float way (blend_floats:
 * the samples as floats, then the draw's blend). test_raster_fused checks
 * the formula over every sum M and byte d: it is monotone in M, so each
 * run of sums with one c is checked at its two ends (kr_add_band_avx2 is
 * the band test). */
#define ADD_BAND KR_ADD_BAND
_Static_assert((ADD_BAND & (ADD_BAND - 1)) == 0, "add_band masks with 2 * ADD_BAND - 1");

/* The lanes (bits 0-7) where some channel's n = M + 32768 is in the
 * band: (n + ADD_BAND) mod 65536 below 2 * ADD_BAND, in the low 16-bit
 * word of each lane (16-bit adds carry nothing into the high word, which
 * the least of the four channels' words then ignores). */
static inline uint32_t add_band(const __m256i n[4])
{
    const __m256i off = _mm256_set1_epi32(ADD_BAND),
                  high = _mm256_set1_epi32(0xffff & -(2 * ADD_BAND));
    __m256i least = _mm256_min_epu16(
        _mm256_min_epu16(_mm256_add_epi16(n[0], off), _mm256_add_epi16(n[1], off)),
        _mm256_min_epu16(_mm256_add_epi16(n[2], off), _mm256_add_epi16(n[3], off)));
    __m256i near = _mm256_cmpeq_epi32(_mm256_and_si256(least, high), _mm256_setzero_si256());
    return (uint32_t)_mm256_movemask_ps(_mm256_castsi256_ps(near));
}

uint32_t kr_add_band_avx2(const int32_t m[4][8])
{
    __m256i n[4];
    for (int b = 0; b < 4; b++)
        n[b] = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(const void *)m[b]),
                                _mm256_set1_epi32(32768));
    return add_band(n);
}

/* ADD of (SRC_ALPHA, INV_SRC_ALPHA) on both parts (kr_blend_kind 2) of
 * two rows: the samples fl(M / (255 * 65536)) as rows8v makes them (n:
 * M + 32768, in the target's byte order), the target's bytes in `old`,
 * blended as blend_rows blends them (kr_blend_alpha8), to bytes.
 * blend_rows' two clamps are left out: they change nothing here. A sample
 * lies in [0, 1] (0 <= M <= 255 * 65536); so does its result, s * a + d *
 * (1 - a) with s, a, d in [0, 1]: no NaN, no negative term, and at most
 * fl(a + fl(1 - a)), which is 1 (1 - a is exact for a >= 1/2; for a < 1/2
 * it rounds up by at most 2^-25, and a + that rounds to 1). */
static inline __m256i alpha8(const __m256i n[4], __m256i old)
{
    const __m256 k255 = _mm256_set1_ps(255.0f), half = _mm256_set1_ps(0.5f);
    const __m256i h16 = _mm256_set1_epi32(32768), lo8 = _mm256_set1_epi32(0xff);
    __m256 s[4];
    for (int b = 0; b < 4; b++)
        s[b] = sample8(_mm256_sub_epi32(n[b], h16));
    __m256i px = _mm256_setzero_si256();
    for (int c = 0; c < 4; c++) {
        __m256 dc = kr_unorm8_8(_mm256_and_si256(_mm256_srli_epi32(old, 8 * c), lo8));
        __m256 v = kr_blend_alpha8(s[c], s[3], dc);
        px = _mm256_or_si256(
            px, _mm256_slli_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v, k255), half)),
                                  8 * c));
    }
    return px;
}

/* The rows of half h (rows 2h and 2h + 1) of the block the float way:
 * rows8v's samples from n (M + 32768), then the draw's blend of those
 * rows' covered pixels. */
static __attribute__((noinline)) void blend_floats(const kr_prim *p, const kr_fb *fb, int x, int y,
                                                   uint32_t mask, int h, const __m256i n[4])
{
    const kr_drawx *dx = p->dx;
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)dx->shade_data;
    _Alignas(32) float col[4 * KILN_PS_BLOCK] = {0};
    float *o[4] = {col + (sd->swap ? 2 : 0) * KILN_PS_BLOCK, col + KILN_PS_BLOCK,
                   col + (sd->swap ? 0 : 2) * KILN_PS_BLOCK, col + 3 * KILN_PS_BLOCK};
    for (int b = 0; b < 4; b++)
        _mm256_store_ps(o[b] + 8 * h, sample8(_mm256_sub_epi32(n[b], _mm256_set1_epi32(32768))));
    dx->write8(&dx->s->blend[0], dx->s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, col,
               mask & 0xffu << (8 * h));
}

/* What shade_blend keeps for every block of a primitive. */
typedef struct blendk {
    lvk8 k;
    uvk uk; /* but its columns' part, per block */
    __m256i keep, flip;
    size_t pitch;
} blendk;

FUSED_INLINE void blend_init(const kr_prim *p, const kr_fb *fb, blendk *K)
{
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)p->dx->shade_data;
    lvk8_init(&K->k, &sd->L);
    uv_prim(p, p->attr, &K->uk);
    K->keep = _mm256_set1_epi32((int32_t)sd->keep);
    K->flip = _mm256_set1_epi32(-sd->flip);
    K->pitch = fb->rt_pitch[0];
}

/* kr_fused_shade_avx2 with the blend in registers, for kind 1 (add8) and
 * 2 (alpha8), two rows at a time: the sums, the target words read,
 * blended, the write mask's bytes kept (kr_fused_shade.keep), written;
 * for kind 1, rows with a covered pixel in the band the float way
 * (blend_floats). */
FUSED_INLINE void shade_blend(const kr_prim *p, const kr_fb *fb, blendk *K, int x, int y,
                              uint32_t mask, int clamp2, int kind)
{
    uv_cols(p, p->attr, block_fx(p, x), &K->uk);
    /* M + 32768 = sum + 32768 * 256 + 32768 (sums8's bias) */
    const __m256i bias = _mm256_set1_epi32(32768 * 256 + 32768);
    const __m256i keep = K->keep, flip = K->flip;
    size_t pitch = K->pitch;
    uint8_t *dst = fb->rt[0] + (size_t)y * pitch + (size_t)x * 4;
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++, dst += 2 * pitch) {
        uint32_t m0 = mask >> (8 * h) & 15u, m1 = mask >> (8 * h + 4) & 15u;
        if (!(m0 | m1))
            continue;
        __m256 u, v;
        uv8(p, &K->uk, y, 2 * h, &u, &v);
        __m256i n[4];
        sums8_any(&K->k, u, v, clamp2, n);
        for (int b = 0; b < 4; b++)
            n[b] = _mm256_add_epi32(n[b], bias);
        if (kind == 1 && (add_band(n) & (m0 | m1 << 4))) {
            blend_floats(p, fb, x, y, mask, h, n);
            continue;
        }
        /* to the target's byte order: 0 and 2 exchanged under flip */
        __m256i c0 = _mm256_blendv_epi8(n[0], n[2], flip),
                c2 = _mm256_blendv_epi8(n[2], n[0], flip);
        n[0] = c0;
        n[2] = c2;
        const bool both = (m0 & m1) == 15u;
        __m256i old = both ? _mm256_loadu2_m128i((const __m128i *)(const void *)(dst + pitch),
                                                 (const __m128i *)(const void *)dst)
                           : _mm256_setr_m128i(kr_load_row(dst, m0), kr_load_row(dst + pitch, m1));
        __m256i px;
        if (kind == 1)
            px = _mm256_adds_epu8(bytes8(n[0], n[1], n[2], n[3]), old);
        else
            px = alpha8(n, old);
        px = _mm256_or_si256(_mm256_andnot_si256(keep, px), _mm256_and_si256(old, keep));
        if (both) {
            _mm256_storeu2_m128i((__m128i *)(void *)(dst + pitch), (__m128i *)(void *)dst, px);
        } else {
            if (m0)
                kr_store_row(dst, _mm256_castsi256_si128(px), m0);
            if (m1)
                kr_store_row(dst + pitch, _mm256_extracti128_si256(px, 1), m1);
        }
    }
}

/* The blocks of the rect [x0, x1) x [y0, y1) inside the triangle
 * (kr_span_fn): the primitive's constants once, then raster_tri's loop
 * over the blocks, its fetches ahead included. */
FUSED_INLINE void span_blend(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1,
                             int clamp2, int kind)
{
    blendk K;
    blend_init(p, fb, &K);
    const uint32_t ahead = x1 - x0 > 16 ? p->dx->ahead_rt : 0;
    const int bx0 = x0 & ~3;
    for (int by = y0 & ~3; by < y1; by += 4)
        for (int bx = bx0; bx < x1; bx += 4) {
            if (ahead && !((bx - bx0) & 15)) /* a block that starts a line */
                kr_fetch_ahead(fb->rt[0], (uint32_t)K.pitch, ahead, bx, by, x0, x1, y1);
            uint32_t mask = kr_rect_mask(bx, by, x0, y0, x1, y1);
            shade_blend(p, fb, &K, bx, by, mask, clamp2, kind);
        }
}

/* clamp2 a constant in each copy, as for the rows kernel; a block, or a
 * span of them (x1 > 0) */
FUSED_INLINE bool blend_level(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask,
                              int x1, int y1, int kind)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_shade *sd = (const kr_fused_shade *)(const void *)p->dx->shade_data;
    const int clamp2 = sd->L.clamp2 && sd->L.direct;
    if (x1 > 0) {
        if (clamp2)
            span_blend(p, fb, x, y, x1, y1, 1, kind);
        else
            span_blend(p, fb, x, y, x1, y1, 0, kind);
        return true;
    }
    blendk K;
    blend_init(p, fb, &K);
    if (clamp2)
        shade_blend(p, fb, &K, x, y, mask, 1, kind);
    else
        shade_blend(p, fb, &K, x, y, mask, 0, kind);
    return true;
}

bool kr_fused_shade_add_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    return blend_level(p, fb, x, y, mask, 0, 0, 1);
}

bool kr_fused_shade_alpha_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    return blend_level(p, fb, x, y, mask, 0, 0, 2);
}

bool kr_fused_span_add_avx2(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    return blend_level(p, fb, x0, y0, 0, x1, y1, 1);
}

bool kr_fused_span_alpha_avx2(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    return blend_level(p, fb, x0, y0, 0, x1, y1, 2);
}

/* KILN_EFFECT_TEXTURE_COLOR's shading (kr_shade_select): its pixel
 * kernel's product of the sample at varying 1's x and y, taken as the
 * texture effect's shading takes it (shade_sample8), and varying 0
 * (kr_interpolate_avx2's floats), then output() as the draw chose it
 * (kr_drawx.write8; out1 2: nothing). */
bool kr_fused_shade_tc_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    if (!dx->write8)
        return true;
    _Alignas(32) float t[4 * KILN_PS_BLOCK], col[4 * KILN_PS_BLOCK];
    shade_sample8(p, p->attr + 12, x, y, mask, t);
    kr_interpolate_avx2(p, x, y, 4, 0xFu, col);
    for (int i = 0; i < 4 * KILN_PS_BLOCK; i += 8)
        _mm256_store_ps(col + i, _mm256_mul_ps(_mm256_load_ps(t + i), _mm256_load_ps(col + i)));
    dx->write8(&s->blend[0], s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, col, mask);
    return true;
}

#else

/* Non-x86 builds never call it (an empty file is not ISO C). */
typedef int kr_fused_avx2_unused;

#endif
