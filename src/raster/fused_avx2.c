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
 */
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

/* The two copies of block() (clamp2 a constant in each) stay separate. */
#define FUSED_INLINE static inline __attribute__((always_inline))

/* split4 of sample.c, eight lanes: floor and the fraction in 1/256. */
static inline __m256i split8(__m256 c, __m256i *frac)
{
    const __m256 lim = _mm256_set1_ps(1073741824.0f), nlim = _mm256_set1_ps(-1073741824.0f);
    __m256 x = _mm256_min_ps(_mm256_max_ps(c, nlim), lim);
    __m256i i = _mm256_cvttps_epi32(x);
    i = _mm256_add_epi32(i, _mm256_castps_si256(_mm256_cmp_ps(_mm256_cvtepi32_ps(i), x, _CMP_GT_OQ)));
    __m256 f = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(x, _mm256_cvtepi32_ps(i)), _mm256_set1_ps(256.0f)),
                             _mm256_set1_ps(0.5f));
    *frac = _mm256_cvttps_epi32(f);
    return i;
}

/* The constants of a level, broadcast to both lanes. */
typedef struct lvk8 {
    const uint8_t *base, *base2;
    __m256 fw, fh;
    __m256i mx, my, hi, seam, mul;
} lvk8;

/* 8 bytes at each of base + a, b (lane 0) and base + c, d (lane 1). */
static inline __m256i pairs(const uint8_t *base, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    __m128d lo = _mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)(const void *)(base + a))),
                              (const double *)(const void *)(base + b));
    __m128d hi = _mm_loadh_pd(_mm_castsi128_pd(_mm_loadl_epi64((const __m128i *)(const void *)(base + c))),
                              (const double *)(const void *)(base + d));
    return _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_castpd_si128(lo)), _mm_castpd_si128(hi), 1);
}

/* Rows r and r + 1 (lanes 0 and 1): each texel byte's integer sum S as
 * sample.c's rgba8_4px_sums leaves it per lane, minus 32768 * 256:
 * sum[0] = [b0 p0, b2 p0, b0 p1, b2 p1], sum[1] the same for p2, p3,
 * sum[2] and sum[3] bytes 1 and 3 likewise. False at a WRAP seam. */
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
     * than gathers on the CPUs measured), then per lane [L0 L1 L2 L3] and
     * [R0 R1 R2 R3] */
    _Alignas(32) uint32_t o[8];
    _mm256_store_si256((__m256i *)(void *)o, off);
    __m256i ta = _mm256_shuffle_epi32(pairs(k->base, o[0], o[1], o[4], o[5]), _MM_SHUFFLE(3, 1, 2, 0));
    __m256i tb = _mm256_shuffle_epi32(pairs(k->base, o[2], o[3], o[6], o[7]), _MM_SHUFFLE(3, 1, 2, 0));
    __m256i ba = _mm256_shuffle_epi32(pairs(k->base2, o[0], o[1], o[4], o[5]), _MM_SHUFFLE(3, 1, 2, 0));
    __m256i bb = _mm256_shuffle_epi32(pairs(k->base2, o[2], o[3], o[6], o[7]), _MM_SHUFFLE(3, 1, 2, 0));
    __m256i t0 = _mm256_unpacklo_epi64(ta, tb), t1 = _mm256_unpackhi_epi64(ta, tb);
    __m256i t2 = _mm256_unpacklo_epi64(ba, bb), t3 = _mm256_unpackhi_epi64(ba, bb);

    /* rows, then columns: rgba8_4px_sums' words and pairs */
    __m256i g16 = _mm256_sub_epi16(k256, f16);
    __m256i fy = _mm256_unpackhi_epi16(f16, f16), gy = _mm256_unpackhi_epi16(g16, g16);
    __m256i wx = _mm256_unpacklo_epi16(g16, f16);
    __m256i wx01 = _mm256_unpacklo_epi32(wx, wx), wx23 = _mm256_unpackhi_epi32(wx, wx);
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
    sum[0] = _mm256_madd_epi16(_mm256_unpacklo_epi16(le, re), wx01);
    sum[1] = _mm256_madd_epi16(_mm256_unpackhi_epi16(le, re), wx23);
    sum[2] = _mm256_madd_epi16(_mm256_unpacklo_epi16(lod, rod), wx01);
    sum[3] = _mm256_madd_epi16(_mm256_unpackhi_epi16(lod, rod), wx23);
    return true;
}

/* Rows r and r + 1 (lanes 0 and 1): the pixels as packed words, lane by
 * lane as pack_sums leaves them. False at a WRAP seam. */
FUSED_INLINE bool px8(const lvk8 *k, __m256 us, __m256 vs, int clamp2, int swap, __m256i *out)
{
    __m256i sum[4];
    if (!sums8(k, us, vs, clamp2, sum))
        return false;
    /* S - 32768 * 256 per byte; + 32768 * 256 + 32768 then >> 16 */
    const __m256i unbias = _mm256_set1_epi32(32768 * 256 + 32768);
    __m256i e01 = _mm256_srli_epi32(_mm256_add_epi32(sum[0], unbias), 16);
    __m256i e23 = _mm256_srli_epi32(_mm256_add_epi32(sum[1], unbias), 16);
    __m256i o01 = _mm256_srli_epi32(_mm256_add_epi32(sum[2], unbias), 16);
    __m256i o23 = _mm256_srli_epi32(_mm256_add_epi32(sum[3], unbias), 16);
    if (swap) {
        e01 = _mm256_shuffle_epi32(e01, _MM_SHUFFLE(2, 3, 0, 1));
        e23 = _mm256_shuffle_epi32(e23, _MM_SHUFFLE(2, 3, 0, 1));
    }
    const __m256i wbias = _mm256_set1_epi32(32768);
    __m256i w01 = _mm256_or_si256(e01, _mm256_slli_epi32(o01, 8));
    __m256i w23 = _mm256_or_si256(e23, _mm256_slli_epi32(o23, 8));
    __m256i px = _mm256_packs_epi32(_mm256_sub_epi32(w01, wbias), _mm256_sub_epi32(w23, wbias));
    *out = _mm256_xor_si256(px, _mm256_set1_epi16(-32768));
    return true;
}

static inline void store_row(uint8_t *dst, __m128i px, uint32_t m)
{
    uint32_t w[4];
    _mm_storeu_si128((__m128i *)(void *)w, px);
    kr_store_row4(dst, w, m);
}

/* u and v of rows r and r + 1 (lanes 0-3, 4-7): shade_block's operations
 * lane by lane. */
FUSED_INLINE void uv8(const kr_prim *p, __m256 fx, int y, int r, __m256 *u, __m256 *v)
{
    const float *a = p->attr;
    __m256 fy = _mm256_setr_m128(_mm_set1_ps((float)(y + r) + 0.5f - p->oy),
                                 _mm_set1_ps((float)(y + r + 1) + 0.5f - p->oy));
    __m256 w;
    if (p->q[1] == 0.0f && p->q[2] == 0.0f) {
        w = _mm256_set1_ps(1.0f / p->q[0]);
    } else {
        __m256 q = _mm256_add_ps(
            _mm256_add_ps(_mm256_set1_ps(p->q[0]), _mm256_mul_ps(_mm256_set1_ps(p->q[1]), fx)),
            _mm256_mul_ps(_mm256_set1_ps(p->q[2]), fy));
        w = _mm256_div_ps(_mm256_set1_ps(1.0f), q);
    }
    __m256 uu = _mm256_add_ps(
        _mm256_add_ps(_mm256_set1_ps(a[0]), _mm256_mul_ps(_mm256_set1_ps(a[1]), fx)),
        _mm256_mul_ps(_mm256_set1_ps(a[2]), fy));
    __m256 vv = _mm256_add_ps(
        _mm256_add_ps(_mm256_set1_ps(a[3]), _mm256_mul_ps(_mm256_set1_ps(a[4]), fx)),
        _mm256_mul_ps(_mm256_set1_ps(a[5]), fy));
    *u = _mm256_mul_ps(uu, w);
    *v = _mm256_mul_ps(vv, w);
}

static inline void lvk8_init(lvk8 *k, const kr_fused_level *L)
{
    k->base = L->base;
    k->base2 = L->base + L->pitch;
    k->fw = _mm256_set1_ps(L->fw);
    k->fh = _mm256_set1_ps(L->fh);
    k->mx = _mm256_set1_epi32(L->mx);
    k->my = _mm256_set1_epi32(L->my);
    k->hi = _mm256_setr_epi16(L->hx, L->hx, L->hx, L->hx, L->hy, L->hy, L->hy, L->hy, L->hx, L->hx,
                              L->hx, L->hx, L->hy, L->hy, L->hy, L->hy);
    k->seam = _mm256_setr_epi16(L->sx, L->sx, L->sx, L->sx, L->sy, L->sy, L->sy, L->sy, L->sx,
                                L->sx, L->sx, L->sx, L->sy, L->sy, L->sy, L->sy);
    k->mul = _mm256_set1_epi32((int32_t)((uint32_t)L->pitch << 16 | 4u));
}

/* kiln_ps_sample on one level read directly (sample.c's rgba8_rows), two
 * rows per vector: the same sums, each divided by 255 * 65536 as there. */
FUSED_INLINE bool rows8(const kr_fused_level *L, const float *u, const float *v, int clamp2,
                        float *o0, float *o1, float *o2, float *o3)
{
    lvk8 k;
    lvk8_init(&k, L);
    const __m256 d = _mm256_set1_ps(255.0f * 65536.0f);
    const __m256i unbias = _mm256_set1_epi32(32768 * 256);
    for (int h = 0; h < 2; h++) {
        __m256i sum[4];
        if (!sums8(&k, _mm256_loadu_ps(u + 8 * h), _mm256_loadu_ps(v + 8 * h), clamp2, sum))
            return false;
        __m256 se01 = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[0], unbias));
        __m256 se23 = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[1], unbias));
        __m256 so01 = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[2], unbias));
        __m256 so23 = _mm256_cvtepi32_ps(_mm256_add_epi32(sum[3], unbias));
        /* per lane: [b p0, b p1, b p2, b p3] for row 2h and row 2h + 1 */
        _mm256_storeu_ps(o0 + 8 * h, _mm256_div_ps(_mm256_shuffle_ps(se01, se23, _MM_SHUFFLE(2, 0, 2, 0)), d));
        _mm256_storeu_ps(o2 + 8 * h, _mm256_div_ps(_mm256_shuffle_ps(se01, se23, _MM_SHUFFLE(3, 1, 3, 1)), d));
        _mm256_storeu_ps(o1 + 8 * h, _mm256_div_ps(_mm256_shuffle_ps(so01, so23, _MM_SHUFFLE(2, 0, 2, 0)), d));
        _mm256_storeu_ps(o3 + 8 * h, _mm256_div_ps(_mm256_shuffle_ps(so01, so23, _MM_SHUFFLE(3, 1, 3, 1)), d));
    }
    return true;
}

bool kr_sample_rows_avx2(const kr_fused_level *L, const float *u, const float *v, float *o0,
                         float *o1, float *o2, float *o3)
{
    return L->clamp2 ? rows8(L, u, v, 1, o0, o1, o2, o3) : rows8(L, u, v, 0, o0, o1, o2, o3);
}

FUSED_INLINE bool block(const kr_fused_level *L, const kr_prim *p, int x, int y, int clamp2,
                         int swap, uint8_t *dst, size_t pitch, uint32_t mask)
{
    lvk8 k;
    lvk8_init(&k, L);
    /* (float)(x + column) + 0.5f - ox, the same four columns in both rows */
    __m256 fx = _mm256_sub_ps(
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(_mm256_set1_epi32(x),
                                                          _mm256_setr_epi32(0, 1, 2, 3, 0, 1, 2, 3))),
                      _mm256_set1_ps(0.5f)),
        _mm256_set1_ps(p->ox));
    __m256i px[2];
    for (int h = 0; h < 2; h++) {
        if (!(mask >> (8 * h) & 0xffu))
            continue;
        __m256 u, v;
        uv8(p, fx, y, 2 * h, &u, &v);
        if (!px8(&k, u, v, clamp2, swap, &px[h]))
            return false;
    }
    for (int h = 0; h < 2; h++) {
        uint32_t m = mask >> (8 * h);
        if (m & 15u)
            store_row(dst + (size_t)(2 * h) * pitch, _mm256_castsi256_si128(px[h]), m & 15u);
        if (m >> 4 & 15u)
            store_row(dst + (size_t)(2 * h + 1) * pitch, _mm256_extracti128_si256(px[h], 1),
                      m >> 4 & 15u);
    }
    return true;
}

bool kr_fused_block_avx2(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->kind != KR_TRI)
        return false;
    const kr_fused_draw *fd = (const kr_fused_draw *)(const void *)p->dx->block_data;
    size_t pitch = fb->rt_pitch[0];
    uint8_t *dst = fb->rt[0] + (size_t)y * pitch + (size_t)x * 4;
    /* clamp2 a constant in each copy: no masks, no seam test */
    if (fd->L0.clamp2 ? block(&fd->L0, p, x, y, 1, fd->swap, dst, pitch, mask)
                      : block(&fd->L0, p, x, y, 0, fd->swap, dst, pitch, mask))
        return true;
    return kr_fused_block_sse2(p, fb, x, y, mask);
}

#else

/* Non-x86 builds never call it (an empty file is not ISO C). */
typedef int kr_fused_avx2_unused;

#endif
