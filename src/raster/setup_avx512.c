/*
 * Eight triangles' outcodes, screen mapping and setup at the AVX-512
 * level (setup8.h): geom.c's outcode, to_screen3 and setup_tri, one
 * triangle per lane. Floats in 8-lane vectors, the 16.8 fixed-point
 * positions, edges and the planes' doubles in 8 x 64-bit ones. Every
 * lane does the scalar code's IEEE operations in its order (no
 * contraction), and its integer arithmetic in 64 bits with the same
 * wrapping, so the same bits; test_setup8 draws with and without this
 * path and compares.
 *
 * Compiled with AVX-512 F, BW, VL and DQ (effects.cmake); geom.c calls
 * it only at that level. Elsewhere the file compiles to nothing.
 */
#include "setup8.h"

#if KR_SETUP8

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <immintrin.h>

typedef __m256 v8f;  /* a float per triangle */
typedef __m512i v8q; /* an int64 per triangle */
typedef __m512d v8d; /* a double per triangle */

static inline v8f f8(float f) { return _mm256_set1_ps(f); }
static inline v8q q8(int64_t i) { return _mm512_set1_epi64(i); }

static inline v8q mulq(v8q a, v8q b) { return _mm512_mullo_epi64(a, b); }
static inline v8q subq(v8q a, v8q b) { return _mm512_sub_epi64(a, b); }

/* setup_tri's PLANE: f0, then ((d1 y2 - d2 y1) inv, (d2 x1 - d1 x2) inv)
 * in double, d1 = f1 - f0, d2 = f2 - f0, each rounded to float. */
static inline void plane(v8f f0, v8f f1, v8f f2, v8d x1, v8d y1, v8d x2, v8d y2, v8d inv,
                         float *out0, float *out1, float *out2)
{
    const v8d d0 = _mm512_cvtps_pd(f0);
    const v8d d1 = _mm512_sub_pd(_mm512_cvtps_pd(f1), d0),
              d2 = _mm512_sub_pd(_mm512_cvtps_pd(f2), d0);
    const v8d g1 = _mm512_mul_pd(_mm512_sub_pd(_mm512_mul_pd(d1, y2), _mm512_mul_pd(d2, y1)), inv);
    const v8d g2 = _mm512_mul_pd(_mm512_sub_pd(_mm512_mul_pd(d2, x1), _mm512_mul_pd(d1, x2)), inv);
    _mm256_storeu_ps(out0, f0);
    _mm256_storeu_ps(out1, _mm512_cvtpd_ps(g1));
    _mm256_storeu_ps(out2, _mm512_cvtpd_ps(g2));
}

void kr_setup_tri8_avx512(const kr_tri8_consts *k, const float *rows, const int32_t off[3][8],
                          kr_tri8 *o, float *attr)
{
    const v8f zero = _mm256_setzero_ps(), one = f8(1.0f), half = f8(0.5f);
    const v8f absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    __m256i idx[3];
    v8f z[3], q[3];
    v8q X[3], Y[3];
    __mmask8 clip = 0, good = 0xff;
    for (int m = 0; m < 3; m++) {
        idx[m] = _mm256_loadu_si256((const __m256i *)(const void *)off[m]);
        const v8f x = _mm256_i32gather_ps(rows, idx[m], 4),
                  y = _mm256_i32gather_ps(rows + 1, idx[m], 4);
        const v8f zc = _mm256_i32gather_ps(rows + 2, idx[m], 4),
                  w = _mm256_i32gather_ps(rows + 3, idx[m], 4);
        /* outcode: w - 1e-6 |w| - 1e-30, then z and w - z, then the
         * guard band's guard * w -+ x, -+ y; any below zero: clipped */
        clip |= _mm256_cmp_ps_mask(
            _mm256_sub_ps(_mm256_sub_ps(w, _mm256_mul_ps(f8(1e-6f), _mm256_and_ps(w, absmask))),
                          f8(1e-30f)),
            zero, _CMP_LT_OQ);
        if (k->depth_clip)
            clip |= _mm256_cmp_ps_mask(zc, zero, _CMP_LT_OQ) |
                    _mm256_cmp_ps_mask(_mm256_sub_ps(w, zc), zero, _CMP_LT_OQ);
        const v8f gw = _mm256_mul_ps(f8(k->guard), w);
        clip |= _mm256_cmp_ps_mask(_mm256_sub_ps(gw, x), zero, _CMP_LT_OQ) |
                _mm256_cmp_ps_mask(_mm256_add_ps(gw, x), zero, _CMP_LT_OQ) |
                _mm256_cmp_ps_mask(_mm256_sub_ps(gw, y), zero, _CMP_LT_OQ) |
                _mm256_cmp_ps_mask(_mm256_add_ps(gw, y), zero, _CMP_LT_OQ);
        /* to_screen3 */
        const v8f qm = _mm256_div_ps(one, w);
        const v8f sx = _mm256_add_ps(
            f8(k->vp_x),
            _mm256_mul_ps(_mm256_mul_ps(_mm256_add_ps(_mm256_mul_ps(x, qm), one), f8(k->vp_w)),
                          half));
        const v8f sy = _mm256_add_ps(
            f8(k->vp_y),
            _mm256_mul_ps(_mm256_mul_ps(_mm256_sub_ps(one, _mm256_mul_ps(y, qm)), f8(k->vp_h)),
                          half));
        const v8f sz =
            _mm256_add_ps(f8(k->vp_min), _mm256_mul_ps(_mm256_mul_ps(zc, qm), f8(k->vp_range)));
        const __mmask8 ok = _mm256_cmp_ps_mask(w, zero, _CMP_GT_OQ) &
                            _mm256_cmp_ps_mask(sz, sz, _CMP_ORD_Q) &
                            _mm256_cmp_ps_mask(_mm256_and_ps(sx, absmask), f8(1e7f), _CMP_LT_OQ) &
                            _mm256_cmp_ps_mask(_mm256_and_ps(sy, absmask), f8(1e7f), _CMP_LT_OQ);
        good &= ok;
        /* a bad vertex's products may not fit: converted from zero */
        X[m] = _mm512_cvtps_epi64(_mm256_maskz_mul_ps(ok, sx, f8(256.0f)));
        Y[m] = _mm512_cvtps_epi64(_mm256_maskz_mul_ps(ok, sy, f8(256.0f)));
        z[m] = sz;
        q[m] = qm;
    }
    /* setup_tri */
    const v8q area =
        subq(mulq(subq(X[1], X[0]), subq(Y[2], Y[0])), mulq(subq(X[2], X[0]), subq(Y[1], Y[0])));
    __mmask8 live = (__mmask8)(~clip & good) & _mm512_cmpneq_epi64_mask(area, q8(0));
    const __mmask8 cw = _mm512_cmpgt_epi64_mask(area, q8(0));
    const __mmask8 front = k->front_ccw ? (__mmask8)~cw : cw;
    if (k->cull_front)
        live &= (__mmask8)~front;
    if (k->cull_back)
        live &= front;
    /* clockwise order: vertices 1 and 2 swapped where the area is negative */
    const __mmask8 swap = _mm512_cmplt_epi64_mask(area, q8(0));
    {
        const v8q x1 = X[1], y1 = Y[1];
        X[1] = _mm512_mask_blend_epi64(swap, X[1], X[2]);
        Y[1] = _mm512_mask_blend_epi64(swap, Y[1], Y[2]);
        X[2] = _mm512_mask_blend_epi64(swap, X[2], x1);
        Y[2] = _mm512_mask_blend_epi64(swap, Y[2], y1);
        const v8f z1 = z[1], q1 = q[1];
        z[1] = _mm256_mask_blend_ps(swap, z[1], z[2]);
        q[1] = _mm256_mask_blend_ps(swap, q[1], q[2]);
        z[2] = _mm256_mask_blend_ps(swap, z[2], z1);
        q[2] = _mm256_mask_blend_ps(swap, q[2], q1);
        const __m256i i1 = idx[1];
        idx[1] = _mm256_mask_blend_epi32(swap, idx[1], idx[2]);
        idx[2] = _mm256_mask_blend_epi32(swap, idx[2], i1);
    }
    /* the pixels whose centers can be inside: ceil((min - 128 - reach) / 256)
     * .. floor((max - 128 + reach) / 256), clamped to the raster rect */
    const v8q minX = _mm512_min_epi64(_mm512_min_epi64(X[0], X[1]), X[2]);
    const v8q maxX = _mm512_max_epi64(_mm512_max_epi64(X[0], X[1]), X[2]);
    const v8q minY = _mm512_min_epi64(_mm512_min_epi64(Y[0], Y[1]), Y[2]);
    const v8q maxY = _mm512_max_epi64(_mm512_max_epi64(Y[0], Y[1]), Y[2]);
    const v8q lo = q8(128 + k->reach), hi = q8(128 - k->reach), zq = _mm512_setzero_si512();
    v8q x0 = subq(zq, _mm512_srai_epi64(subq(zq, subq(minX, lo)), 8));
    v8q y0 = subq(zq, _mm512_srai_epi64(subq(zq, subq(minY, lo)), 8));
    v8q x1 = _mm512_add_epi64(_mm512_srai_epi64(subq(maxX, hi), 8), q8(1));
    v8q y1 = _mm512_add_epi64(_mm512_srai_epi64(subq(maxY, hi), 8), q8(1));
    x0 = _mm512_max_epi64(x0, q8(k->rx0));
    y0 = _mm512_max_epi64(y0, q8(k->ry0));
    x1 = _mm512_min_epi64(x1, q8(k->rx1));
    y1 = _mm512_min_epi64(y1, q8(k->ry1));
    live &= _mm512_cmplt_epi64_mask(x0, x1) & _mm512_cmplt_epi64_mask(y0, y1);
    for (int i = 0; i < 8; i++) {
        o->status[i] = (uint8_t)(clip >> i & 1   ? KR_TRI8_CLIP
                                 : live >> i & 1 ? KR_TRI8_EMIT
                                                 : KR_TRI8_DROP);
        o->front[i] = (uint8_t)(front >> i & 1);
    }
    if (!live)
        return;
    _mm256_storeu_si256((__m256i *)(void *)o->minx, _mm512_cvtepi64_epi32(x0));
    _mm256_storeu_si256((__m256i *)(void *)o->miny, _mm512_cvtepi64_epi32(y0));
    _mm256_storeu_si256((__m256i *)(void *)o->maxx, _mm512_cvtepi64_epi32(x1));
    _mm256_storeu_si256((__m256i *)(void *)o->maxy, _mm512_cvtepi64_epi32(y1));
    /* edges: a = -dy, b = dx, c = dy X - dx Y, less one off the top and
     * left edges */
    for (int e = 0; e < 3; e++) {
        const int n = e == 2 ? 0 : e + 1;
        const v8q ddx = subq(X[n], X[e]), ddy = subq(Y[n], Y[e]);
        const __mmask8 top_left =
            _mm512_cmplt_epi64_mask(ddy, zq) |
            (_mm512_cmpeq_epi64_mask(ddy, zq) & _mm512_cmpgt_epi64_mask(ddx, zq));
        const v8q c = subq(subq(mulq(ddy, X[e]), mulq(ddx, Y[e])), q8(1));
        _mm512_storeu_si512(o->a[e], subq(zq, ddy));
        _mm512_storeu_si512(o->b[e], ddx);
        _mm512_storeu_si512(o->c[e], _mm512_mask_add_epi64(c, top_left, c, q8(1)));
    }
    /* planes from the snapped positions, relative to vertex 0 */
    const v8d sub = _mm512_set1_pd(1.0 / 256.0);
    const v8d fx0 = _mm512_mul_pd(_mm512_cvtepi64_pd(X[0]), sub),
              fy0 = _mm512_mul_pd(_mm512_cvtepi64_pd(Y[0]), sub);
    const v8d dx1 = _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(X[1]), sub), fx0);
    const v8d dy1 = _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(Y[1]), sub), fy0);
    const v8d dx2 = _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(X[2]), sub), fx0);
    const v8d dy2 = _mm512_sub_pd(_mm512_mul_pd(_mm512_cvtepi64_pd(Y[2]), sub), fy0);
    const v8d inv = _mm512_div_pd(_mm512_set1_pd(1.0),
                                  _mm512_sub_pd(_mm512_mul_pd(dx1, dy2), _mm512_mul_pd(dx2, dy1)));
    _mm256_storeu_ps(o->ox, _mm512_cvtpd_ps(fx0));
    _mm256_storeu_ps(o->oy, _mm512_cvtpd_ps(fy0));
    plane(z[0], z[1], z[2], dx1, dy1, dx2, dy2, inv, o->z[0], o->z[1], o->z[2]);
    plane(q[0], q[1], q[2], dx1, dy1, dx2, dy2, inv, o->q[0], o->q[1], o->q[2]);
    /* the varyings over w */
    for (uint32_t c = 0; c < k->ncomp; c++) {
        const float *base = rows + 4 + c;
        const v8f f0 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[0], 4), q[0]);
        const v8f f1 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[1], 4), q[1]);
        const v8f f2 = _mm256_mul_ps(_mm256_i32gather_ps(base, idx[2], 4), q[2]);
        float *out = attr + (size_t)3 * 8 * c;
        plane(f0, f1, f2, dx1, dy1, dx2, dy2, inv, out, out + 8, out + 16);
    }
}

#else

/* Other targets never call it (an empty file is not ISO C). */
typedef int kr_setup_avx512_unused;

#endif
