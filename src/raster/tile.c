/* Tile rasterization: coverage of triangles (16.8 fixed point, top-left
 * rule), lines and points inside one tile, and the per-block pixel
 * pipeline: depth/stencil (early when the shader cannot discard), pixel
 * shader, blending, write masks. */
#include "effects.h"
#include "prim.h"
#include "../resources/texel.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define B KILN_PS_BLOCK

/* ---- four lanes ----
 *
 * A block is four rows of four pixels: its per-pixel float work runs on
 * one row at a time, as SSE2 vectors on x86 (the x86-64 baseline) and as
 * plain arrays elsewhere. Every lane operation is the IEEE operation the
 * scalar code would do (no fused multiply-add, no approximate reciprocal),
 * so both give the same bits. */
#if defined(__SSE2__)
#include <emmintrin.h>
typedef __m128 v4;
typedef __m128i v4i; /* lane masks: all ones or all zeros */
static inline v4 v4_load(const float *p) { return _mm_loadu_ps(p); }
static inline void v4_store(float *p, v4 a) { _mm_storeu_ps(p, a); }
static inline v4 v4_set1(float f) { return _mm_set1_ps(f); }
static inline v4 v4_add(v4 a, v4 b) { return _mm_add_ps(a, b); }
static inline v4 v4_sub(v4 a, v4 b) { return _mm_sub_ps(a, b); }
static inline v4 v4_mul(v4 a, v4 b) { return _mm_mul_ps(a, b); }
static inline v4 v4_div(v4 a, v4 b) { return _mm_div_ps(a, b); }
/* (float)(i + {0, 1, 2, 3}) */
static inline v4 v4_ramp(int i) { return _mm_cvtepi32_ps(_mm_add_epi32(_mm_set1_epi32(i), _mm_setr_epi32(0, 1, 2, 3))); }
/* a > b ? a : b and a < b ? a : b, lane by lane (b when unordered) */
static inline v4 v4_gt_sel(v4 a, v4 b) { return _mm_max_ps(a, b); }
static inline v4 v4_lt_sel(v4 a, v4 b) { return _mm_min_ps(a, b); }
static inline v4i v4_lt(v4 a, v4 b) { return _mm_castps_si128(_mm_cmplt_ps(a, b)); }
static inline v4i v4_le(v4 a, v4 b) { return _mm_castps_si128(_mm_cmple_ps(a, b)); }
static inline v4i v4_eq(v4 a, v4 b) { return _mm_castps_si128(_mm_cmpeq_ps(a, b)); }
static inline v4i v4_neq(v4 a, v4 b) { return _mm_castps_si128(_mm_cmpneq_ps(a, b)); }
/* m ? a : b */
static inline v4 v4_sel(v4i m, v4 a, v4 b)
{
    __m128 f = _mm_castsi128_ps(m);
    return _mm_or_ps(_mm_and_ps(f, a), _mm_andnot_ps(f, b));
}
static inline v4i v4i_and(v4i a, v4i b) { return _mm_and_si128(a, b); }
/* Lane k of m as bit k. */
static inline uint32_t v4i_bits(v4i m) { return (uint32_t)_mm_movemask_ps(_mm_castsi128_ps(m)); }
/* Bit k of b as lane k. */
static inline v4i v4i_from_bits(uint32_t b)
{
    __m128i bit = _mm_setr_epi32(1, 2, 4, 8);
    return _mm_cmpeq_epi32(_mm_and_si128(_mm_set1_epi32((int)b), bit), bit);
}
/* Byte `byte` of four packed words, as floats (exact). */
/* byte `byte` of each word / 255, from the table (the division's bits) */
static inline v4 v4_unorm8(const uint32_t w[4], int byte)
{
    const int sh = 8 * byte;
    return _mm_setr_ps(kr_unorm8_float[w[0] >> sh & 0xffu], kr_unorm8_float[w[1] >> sh & 0xffu],
                       kr_unorm8_float[w[2] >> sh & 0xffu], kr_unorm8_float[w[3] >> sh & 0xffu]);
}
/* Four pixels' r, g, b, a (already in [0, 1]) to packed 8-bit words:
 * (int32_t)(c * 255 + 0.5) per channel, r in the low byte. */
static inline void v4_pack8(v4 r, v4 g, v4 b, v4 a, uint32_t out[4])
{
    const __m128 k = _mm_set1_ps(255.0f), h = _mm_set1_ps(0.5f);
    __m128i ir = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(r, k), h));
    __m128i ig = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(g, k), h));
    __m128i ib = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(b, k), h));
    __m128i ia = _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(a, k), h));
    __m128i w = _mm_or_si128(_mm_or_si128(ir, _mm_slli_epi32(ig, 8)),
                             _mm_or_si128(_mm_slli_epi32(ib, 16), _mm_slli_epi32(ia, 24)));
    _mm_storeu_si128((__m128i *)(void *)out, w);
}
#else
typedef struct v4 { float f[4]; } v4;
typedef struct v4i { uint32_t u[4]; } v4i;
#define V4_MAP(expr)                                                                               \
    v4 r_;                                                                                         \
    for (int k = 0; k < 4; k++)                                                                    \
        r_.f[k] = (expr);                                                                          \
    return r_
#define V4I_MAP(expr)                                                                              \
    v4i r_;                                                                                        \
    for (int k = 0; k < 4; k++)                                                                    \
        r_.u[k] = (expr) ? UINT32_MAX : 0;                                                         \
    return r_
static inline v4 v4_load(const float *p) { V4_MAP(p[k]); }
static inline void v4_store(float *p, v4 a) { memcpy(p, a.f, sizeof a.f); }
static inline v4 v4_set1(float f) { V4_MAP(f); }
static inline v4 v4_add(v4 a, v4 b) { V4_MAP(a.f[k] + b.f[k]); }
static inline v4 v4_sub(v4 a, v4 b) { V4_MAP(a.f[k] - b.f[k]); }
static inline v4 v4_mul(v4 a, v4 b) { V4_MAP(a.f[k] * b.f[k]); }
static inline v4 v4_div(v4 a, v4 b) { V4_MAP(a.f[k] / b.f[k]); }
static inline v4 v4_ramp(int i) { V4_MAP((float)(i + k)); }
static inline v4 v4_gt_sel(v4 a, v4 b) { V4_MAP(a.f[k] > b.f[k] ? a.f[k] : b.f[k]); }
static inline v4 v4_lt_sel(v4 a, v4 b) { V4_MAP(a.f[k] < b.f[k] ? a.f[k] : b.f[k]); }
static inline v4i v4_lt(v4 a, v4 b) { V4I_MAP(a.f[k] < b.f[k]); }
static inline v4i v4_le(v4 a, v4 b) { V4I_MAP(a.f[k] <= b.f[k]); }
static inline v4i v4_eq(v4 a, v4 b) { V4I_MAP(a.f[k] == b.f[k]); }
static inline v4i v4_neq(v4 a, v4 b) { V4I_MAP(a.f[k] != b.f[k]); }
static inline v4 v4_sel(v4i m, v4 a, v4 b) { V4_MAP(m.u[k] ? a.f[k] : b.f[k]); }
static inline v4i v4i_and(v4i a, v4i b) { V4I_MAP(a.u[k] & b.u[k]); }
static inline uint32_t v4i_bits(v4i m)
{
    return (m.u[0] & 1u) | (m.u[1] & 2u) | (m.u[2] & 4u) | (m.u[3] & 8u);
}
static inline v4i v4i_from_bits(uint32_t b) { V4I_MAP(b >> k & 1u); }
static inline v4 v4_unorm8(const uint32_t w[4], int byte) { V4_MAP(kr_unorm8_float[w[k] >> (8 * byte) & 0xffu]); }
static inline void v4_pack8(v4 r, v4 g, v4 b, v4 a, uint32_t out[4])
{
    for (int k = 0; k < 4; k++)
        out[k] = (uint32_t)(int32_t)(r.f[k] * 255.0f + 0.5f) |
                 (uint32_t)(int32_t)(g.f[k] * 255.0f + 0.5f) << 8 |
                 (uint32_t)(int32_t)(b.f[k] * 255.0f + 0.5f) << 16 |
                 (uint32_t)(int32_t)(a.f[k] * 255.0f + 0.5f) << 24;
}
#undef V4_MAP
#undef V4I_MAP
#endif

/* ---- depth / stencil ---- */

static bool compare_f(kiln_compare f, float a, float b)
{
    switch (f) {
    case KILN_COMPARE_NEVER: return false;
    case KILN_COMPARE_LESS: return a < b;
    case KILN_COMPARE_EQUAL: return a == b;
    case KILN_COMPARE_LESS_EQUAL: return a <= b;
    case KILN_COMPARE_GREATER: return a > b;
    case KILN_COMPARE_NOT_EQUAL: return a != b;
    case KILN_COMPARE_GREATER_EQUAL: return a >= b;
    default: return true;
    }
}

static bool compare_u(kiln_compare f, uint32_t a, uint32_t b)
{
    switch (f) {
    case KILN_COMPARE_NEVER: return false;
    case KILN_COMPARE_LESS: return a < b;
    case KILN_COMPARE_EQUAL: return a == b;
    case KILN_COMPARE_LESS_EQUAL: return a <= b;
    case KILN_COMPARE_GREATER: return a > b;
    case KILN_COMPARE_NOT_EQUAL: return a != b;
    case KILN_COMPARE_GREATER_EQUAL: return a >= b;
    default: return true;
    }
}

static uint32_t stencil_op(kiln_stencil_op op, uint32_t s, uint32_t ref)
{
    switch (op) {
    case KILN_STENCIL_OP_ZERO: return 0;
    case KILN_STENCIL_OP_REPLACE: return ref & 0xff;
    case KILN_STENCIL_OP_INCR_SAT: return s < 255 ? s + 1 : 255;
    case KILN_STENCIL_OP_DECR_SAT: return s > 0 ? s - 1 : 0;
    case KILN_STENCIL_OP_INVERT: return ~s & 0xff;
    case KILN_STENCIL_OP_INCR: return (s + 1) & 0xff;
    case KILN_STENCIL_OP_DECR: return (s - 1) & 0xff;
    default: return s;
    }
}

static uint32_t depth_to_unorm24(float z)
{
    if (!(z > 0.0f))
        return 0;
    if (z >= 1.0f)
        return 0xffffff;
    return (uint32_t)((double)z * 16777215.0 + 0.5);
}

/* compare_f on four lanes. */
static v4i compare_v(kiln_compare f, v4 a, v4 b)
{
    switch (f) {
    case KILN_COMPARE_NEVER: return v4i_from_bits(0);
    case KILN_COMPARE_LESS: return v4_lt(a, b);
    case KILN_COMPARE_EQUAL: return v4_eq(a, b);
    case KILN_COMPARE_LESS_EQUAL: return v4_le(a, b);
    case KILN_COMPARE_GREATER: return v4_lt(b, a);
    case KILN_COMPARE_NOT_EQUAL: return v4_neq(a, b);
    case KILN_COMPARE_GREATER_EQUAL: return v4_le(b, a);
    default: return v4i_from_bits(15);
    }
}

/* Depth and stencil tests for the pixels in mask; updates the buffer and
 * returns the pixels that pass. */
/* The common case: D32_FLOAT, depth test, no stencil. A row of the block
 * inside the target is tested as four lanes and written back whole (the
 * block lies in one tile, which only this thread touches); at the target's
 * right edge pixel by pixel, so nothing past the row is read or written. */
static uint32_t depth_d32(const kd_state *s, const kr_fb *fb, int x, int y, const float *z, uint32_t mask)
{
    uint32_t out = 0;
    bool whole = (uint32_t)x + 4 <= fb->width;
    for (uint32_t row = 0; row < 4; row++) {
        uint32_t m = mask >> (row * 4) & 15u;
        if (!m)
            continue;
        float *d = (float *)(void *)(fb->ds + (size_t)(y + (int)row) * fb->ds_pitch) + x;
        if (whole) {
            v4 dv = v4_load(d), zv = v4_load(z + row * 4);
            v4i pass = v4i_and(compare_v(s->depth_func, zv, dv), v4i_from_bits(m));
            uint32_t bits = v4i_bits(pass);
            if (bits && s->depth_write)
                v4_store(d, v4_sel(pass, zv, dv));
            out |= bits << (row * 4);
            continue;
        }
        for (uint32_t c = 0; c < 4; c++) {
            uint32_t i = row * 4 + c;
            if (!(m >> c & 1))
                continue;
            if (compare_f(s->depth_func, z[i], d[c])) {
                out |= 1u << i;
                if (s->depth_write)
                    d[c] = z[i];
            }
        }
    }
    return out;
}

/* D16_UNORM: depth as 16-bit UNORM (D3D10's FLOAT -> UNORM), no stencil
 * (a stencil test with no stencil bits passes and writes nothing). */
static uint32_t depth_d16(const kd_state *s, const kr_fb *fb, int x, int y, const float *z,
                          uint32_t mask)
{
    if (!s->depth_enable)
        return mask;
    uint32_t out = 0;
    for (uint32_t i = 0; i < B; i++) {
        if (!(mask >> i & 1))
            continue;
        uint8_t *px = fb->ds + (size_t)(y + (int)(i >> 2)) * fb->ds_pitch + (size_t)(x + (int)(i & 3)) * 2;
        uint16_t old;
        memcpy(&old, px, 2);
        uint16_t z16 = (uint16_t)kres_float_to_unorm(z[i], 16);
        if (compare_u(s->depth_func, z16, old)) {
            out |= 1u << i;
            if (s->depth_write)
                memcpy(px, &z16, 2);
        }
    }
    return out;
}

/* D32_FLOAT_S8X24_UINT: the float depth test of D32_FLOAT and D24's
 * stencil, the stencil in byte 4 of 8-byte texels (bytes 5..7 untouched). */
static uint32_t depth_d32s8(const kr_prim *p, const kr_fb *fb, int x, int y, const float *z,
                            uint32_t mask)
{
    const kd_state *s = p->dx->s;
    const kd_stencil_face *face = p->front ? &s->front : &s->back;
    bool sten = s->stencil_enable != 0;
    uint32_t ref = s->stencil_ref & 0xff, rmask = s->stencil_read, wmask = s->stencil_write;
    uint32_t out = 0;
    for (uint32_t i = 0; i < B; i++) {
        if (!(mask >> i & 1))
            continue;
        uint8_t *px = fb->ds + (size_t)(y + (int)(i >> 2)) * fb->ds_pitch + (size_t)(x + (int)(i & 3)) * 8;
        uint32_t st = px[4], nst = st;
        bool pass = true;
        if (sten && !compare_u(face->func, ref & rmask, st & rmask)) {
            nst = stencil_op(face->fail, st, ref);
            pass = false;
        }
        if (pass && s->depth_enable) {
            float d;
            memcpy(&d, px, 4);
            if (!compare_f(s->depth_func, z[i], d)) {
                if (sten)
                    nst = stencil_op(face->zfail, st, ref);
                pass = false;
            } else if (s->depth_write) {
                memcpy(px, &z[i], 4);
            }
        }
        if (pass) {
            if (sten)
                nst = stencil_op(face->pass, st, ref);
            out |= 1u << i;
        }
        if (sten)
            px[4] = (uint8_t)((st & ~wmask) | (nst & wmask));
    }
    return out;
}

static __attribute__((noinline)) uint32_t
depth_stencil_other(const kr_prim *p, const kr_fb *fb, int x, int y, const float *z, uint32_t mask);

/* The common case inline (D32_FLOAT without stencil: the widest kernel
 * the draw chose), the others in depth_stencil_other: on an AVX2 host the
 * call that only chose the kernel was 2-4% of the depth-tested scenes'
 * samples in perf. */
static inline uint32_t depth_stencil_test(const kr_prim *p, const kr_fb *fb, int x, int y,
                                          const float *z, uint32_t mask)
{
#if KR_EFFECTS_X86
    const kd_state *s = p->dx->s;
    if (fb->ds_format == KILN_FORMAT_D32_FLOAT && !s->stencil_enable) {
        if (p->dx->wide16)
            return kr_depth_d32_avx512(s->depth_func, s->depth_write != 0, fb->ds, fb->ds_pitch, x, y, z, mask);
        if (p->dx->wide)
            return kr_depth_d32_avx2(s->depth_func, s->depth_write != 0,
                                     (uint32_t)x + 4 <= fb->width && (uint32_t)y + 4 <= fb->height,
                                     fb->ds, fb->ds_pitch, x, y, z, mask);
    }
    /* D24S8 without stencil (at the AVX-512 level too): with the depth
     * test on (depth_stencil's callers test neither when both are off) */
    if (fb->ds_format == KILN_FORMAT_D24_UNORM_S8_UINT && !s->stencil_enable && s->depth_enable &&
        p->dx->wide)
        return kr_depth_d24_avx2(s->depth_func, s->depth_write != 0,
                                 (uint32_t)x + 4 <= fb->width && (uint32_t)y + 4 <= fb->height,
                                 fb->ds, fb->ds_pitch, x, y, z, mask);
#endif
    return depth_stencil_other(p, fb, x, y, z, mask);
}

static __attribute__((noinline)) uint32_t
depth_stencil_other(const kr_prim *p, const kr_fb *fb, int x, int y, const float *z, uint32_t mask)
{
    const kd_state *s = p->dx->s;
    if (fb->ds_format == KILN_FORMAT_D32_FLOAT && !s->stencil_enable)
        return depth_d32(s, fb, x, y, z, mask);
    if (fb->ds_format == KILN_FORMAT_D16_UNORM)
        return depth_d16(s, fb, x, y, z, mask);
    if (fb->ds_format == KILN_FORMAT_D32_FLOAT_S8X24_UINT)
        return depth_d32s8(p, fb, x, y, z, mask);
    const kd_stencil_face *face = p->front ? &s->front : &s->back;
    bool d24 = fb->ds_format == KILN_FORMAT_D24_UNORM_S8_UINT;
    bool sten = s->stencil_enable && d24;
    uint32_t ref = s->stencil_ref & 0xff, rmask = s->stencil_read, wmask = s->stencil_write;
    uint32_t out = 0;
    for (uint32_t i = 0; i < B; i++) {
        if (!(mask >> i & 1))
            continue;
        uint8_t *row = fb->ds + (size_t)(y + (int)(i >> 2)) * fb->ds_pitch;
        uint32_t *px = (uint32_t *)(void *)(row + (size_t)(x + (int)(i & 3)) * 4);
        uint32_t word = *px;
        bool pass = true;
        uint32_t st = word >> 24, nst = st;
        if (sten && !compare_u(face->func, ref & rmask, st & rmask)) {
            nst = stencil_op(face->fail, st, ref);
            pass = false;
        }
        bool zwrite = false;
        uint32_t z24 = 0;
        if (pass && s->depth_enable) {
            bool zp;
            if (d24) {
                z24 = depth_to_unorm24(z[i]);
                zp = compare_u(s->depth_func, z24, word & 0xffffff);
            } else {
                float d;
                memcpy(&d, &word, 4);
                zp = compare_f(s->depth_func, z[i], d);
            }
            if (!zp) {
                if (sten)
                    nst = stencil_op(face->zfail, st, ref);
                pass = false;
            } else {
                zwrite = s->depth_write != 0;
            }
        }
        if (pass) {
            if (sten)
                nst = stencil_op(face->pass, st, ref);
            out |= 1u << i;
        }
        uint32_t nw = word;
        if (zwrite) {
            if (d24) {
                nw = (nw & 0xff000000u) | z24;
            } else {
                memcpy(&nw, &z[i], 4);
            }
        }
        if (sten)
            nw = (nw & 0x00ffffffu) | (((st & ~wmask) | (nst & wmask)) & 0xff) << 24;
        *px = nw;
    }
    return out;
}

/* The depth and stencil tests of a block's covered pixels: the mask of
 * those that pass (all of them without a depth-stencil view or with both
 * tests off, decided inline: most draws). */
static inline uint32_t depth_stencil(const kr_prim *p, const kr_fb *fb, int x, int y, const float *z,
                                     uint32_t mask)
{
    const kd_state *s = p->dx->s;
    if (!fb->ds || (!s->depth_enable && !s->stencil_enable))
        return mask;
    return depth_stencil_test(p, fb, x, y, z, mask);
}

/* ---- color ---- */

/* D3D10 FLOAT -> UNORM8: NaN to 0, clamp, scale, round to nearest.
 * fmaxf returns the non-NaN operand, so NaN becomes 0 without a branch. */
static inline uint8_t unorm8(float v)
{
    v = v > 0.0f ? v : 0.0f; /* also NaN -> 0 */
    v = v < 1.0f ? v : 1.0f;
    return (uint8_t)(int)(v * 255.0f + 0.5f);
}

/* No blending, all channels written, 8-bit RGBA or BGRA: the 16 pixels
 * are converted a row of four at a time from the structure-of-arrays
 * input into packed words (unorm8's clamp and rounding), then stored under
 * the mask. */
/* (Not inlined, nor is output_rgba8_blend: output() stays small for its
 * AVX2 calls.) */
static __attribute__((noinline)) void output_rgba8(uint8_t *base, uint32_t pitch, bool bgra, int x, int y,
                                                   const float *col, uint32_t mask)
{
    const float *r = col + (bgra ? 2 : 0) * B, *g = col + B, *b = col + (bgra ? 0 : 2) * B, *a = col + 3 * B;
    const v4 zero = v4_set1(0.0f), one = v4_set1(1.0f);
    for (uint32_t row = 0; row < 4; row++) {
        uint32_t m = mask >> (row * 4) & 15u;
        if (!m)
            continue;
        /* c > 0 ? c : 0 (NaN gives 0), then c < 1 ? c : 1 */
        v4 c[4];
        const float *in[4] = {r, g, b, a};
        for (int k = 0; k < 4; k++)
            c[k] = v4_lt_sel(v4_gt_sel(v4_load(in[k] + row * 4), zero), one);
        uint32_t px[4];
        v4_pack8(c[0], c[1], c[2], c[3], px);
        kr_store_row4(base + (size_t)(y + (int)row) * pitch + (size_t)x * 4, px, m);
    }
}

static void load_dst(kiln_format f, const uint8_t *p, float d[4])
{
    d[0] = d[1] = d[2] = 0.0f;
    d[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            d[c] = p[c] / 255.0f;
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        d[0] = p[2] / 255.0f;
        d[1] = p[1] / 255.0f;
        d[2] = p[0] / 255.0f;
        d[3] = p[3] / 255.0f;
        break;
    case KILN_FORMAT_R8_UNORM: d[0] = p[0] / 255.0f; break;
    case KILN_FORMAT_R32_FLOAT: memcpy(d, p, 4); break;
    case KILN_FORMAT_R32G32_FLOAT: memcpy(d, p, 8); break;
    case KILN_FORMAT_R32G32B32A32_FLOAT: memcpy(d, p, 16); break;
    default: kres_decode_texel(f, p, d); break; /* sRGB: to linear */
    }
}

static void store_px(kiln_format f, uint8_t *p, const float v[4], uint32_t wm)
{
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                p[c] = unorm8(v[c]);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        if (wm & 1) p[2] = unorm8(v[0]);
        if (wm & 2) p[1] = unorm8(v[1]);
        if (wm & 4) p[0] = unorm8(v[2]);
        if (wm & 8) p[3] = unorm8(v[3]);
        break;
    case KILN_FORMAT_R8_UNORM:
        if (wm & 1) p[0] = unorm8(v[0]);
        break;
    case KILN_FORMAT_R32_FLOAT:
        if (wm & 1) memcpy(p, v, 4);
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        for (int c = 0; c < 2; c++)
            if (wm >> c & 1)
                memcpy(p + 4 * c, &v[c], 4);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        for (int c = 0; c < 4; c++)
            if (wm >> c & 1)
                memcpy(p + 4 * c, &v[c], 4);
        break;
    default:
        kres_encode_texel(f, v, p, wm);
        break;
    }
}

static float factor(kiln_blend_factor f, int c, const float s[4], const float d[4], const float k[4])
{
    switch (f) {
    case KILN_BLEND_ZERO: return 0.0f;
    case KILN_BLEND_ONE: return 1.0f;
    case KILN_BLEND_SRC_COLOR: return s[c];
    case KILN_BLEND_INV_SRC_COLOR: return 1.0f - s[c];
    case KILN_BLEND_SRC_ALPHA: return s[3];
    case KILN_BLEND_INV_SRC_ALPHA: return 1.0f - s[3];
    case KILN_BLEND_DEST_ALPHA: return d[3];
    case KILN_BLEND_INV_DEST_ALPHA: return 1.0f - d[3];
    case KILN_BLEND_DEST_COLOR: return d[c];
    case KILN_BLEND_INV_DEST_COLOR: return 1.0f - d[c];
    case KILN_BLEND_SRC_ALPHA_SAT:
        return c == 3 ? 1.0f : (s[3] < 1.0f - d[3] ? s[3] : 1.0f - d[3]);
    case KILN_BLEND_BLEND_FACTOR: return k[c];
    case KILN_BLEND_INV_BLEND_FACTOR: return 1.0f - k[c];
    default: return 1.0f;
    }
}

static float blend_op(kiln_blend_op op, float a, float b)
{
    switch (op) {
    case KILN_BLEND_OP_SUBTRACT: return a - b;
    case KILN_BLEND_OP_REV_SUBTRACT: return b - a;
    case KILN_BLEND_OP_MIN: return a < b ? a : b;
    case KILN_BLEND_OP_MAX: return a > b ? a : b;
    default: return a + b;
    }
}

/* The same blend, four pixels (one row) at a time: factor(), blend_op()
 * and the UNORM clamp lane by lane, the same operations in the same order
 * (NaN included: the selects keep each comparison's unordered result). */
static v4 factor4(kiln_blend_factor f, int c, const v4 s[4], const v4 d[4], const float k[4])
{
    const v4 one = v4_set1(1.0f);
    switch (f) {
    case KILN_BLEND_ZERO: return v4_set1(0.0f);
    case KILN_BLEND_ONE: return one;
    case KILN_BLEND_SRC_COLOR: return s[c];
    case KILN_BLEND_INV_SRC_COLOR: return v4_sub(one, s[c]);
    case KILN_BLEND_SRC_ALPHA: return s[3];
    case KILN_BLEND_INV_SRC_ALPHA: return v4_sub(one, s[3]);
    case KILN_BLEND_DEST_ALPHA: return d[3];
    case KILN_BLEND_INV_DEST_ALPHA: return v4_sub(one, d[3]);
    case KILN_BLEND_DEST_COLOR: return d[c];
    case KILN_BLEND_INV_DEST_COLOR: return v4_sub(one, d[c]);
    case KILN_BLEND_SRC_ALPHA_SAT: return c == 3 ? one : v4_lt_sel(s[3], v4_sub(one, d[3]));
    case KILN_BLEND_BLEND_FACTOR: return v4_set1(k[c]);
    case KILN_BLEND_INV_BLEND_FACTOR: return v4_set1(1.0f - k[c]);
    default: return one;
    }
}

static v4 blend_op4(kiln_blend_op op, v4 a, v4 b)
{
    switch (op) {
    case KILN_BLEND_OP_SUBTRACT: return v4_sub(a, b);
    case KILN_BLEND_OP_REV_SUBTRACT: return v4_sub(b, a);
    case KILN_BLEND_OP_MIN: return v4_lt_sel(a, b);
    case KILN_BLEND_OP_MAX: return v4_gt_sel(a, b);
    default: return v4_add(a, b);
    }
}

enum { BLEND_GENERAL, BLEND_ADDITIVE, BLEND_ALPHA };

/* ADD of (ONE, ONE) or of (SRC_ALPHA, INV_SRC_ALPHA): the modes
 * applications use most, for the color or the alpha part (kiln.h's
 * DEFAULT values arrive resolved). */
static int blend_kind(kiln_blend_factor src, kiln_blend_factor dst, kiln_blend_op op)
{
    if (op != KILN_BLEND_OP_ADD)
        return BLEND_GENERAL;
    if (src == KILN_BLEND_ONE && dst == KILN_BLEND_ONE)
        return BLEND_ADDITIVE;
    if (src == KILN_BLEND_SRC_ALPHA && dst == KILN_BLEND_INV_SRC_ALPHA)
        return BLEND_ALPHA;
    return BLEND_GENERAL;
}

/* out = src * f(src) + d * f(dst) for one channel of a known kind, with
 * the general formula's operations in its order (a factor of ONE is a
 * product by 1, which changes no value). */
static inline v4 blend_known(int kind, v4 s, v4 d, v4 sa)
{
    const v4 one = v4_set1(1.0f);
    if (kind == BLEND_ADDITIVE)
        return v4_add(v4_mul(s, one), v4_mul(d, one));
    return v4_add(v4_mul(s, sa), v4_mul(d, v4_sub(one, sa)));
}

/* An 8-bit RGBA or BGRA target with blending or a partial write mask:
 * output()'s per-pixel loop, a row of four pixels at a time. */
static __attribute__((noinline)) void output_rgba8_blend(const kd_blend_rt *bl, const float k[4],
                                                         uint8_t *base, uint32_t pitch, bool bgra, int x,
                                                         int y, const float *col, uint32_t mask)
{
    /* channel c lives in byte pos[c] of a pixel's word */
    const int pos[4] = {bgra ? 2 : 0, 1, bgra ? 0 : 2, 3};
    uint32_t keep = 0; /* bytes the write mask leaves alone */
    for (int c = 0; c < 4; c++)
        if (!(bl->write_mask >> c & 1))
            keep |= 0xffu << (8 * pos[c]);
    const v4 zero = v4_set1(0.0f), one = v4_set1(1.0f);
    const bool mm = bl->op == KILN_BLEND_OP_MIN || bl->op == KILN_BLEND_OP_MAX;
    const bool mma = bl->op_a == KILN_BLEND_OP_MIN || bl->op_a == KILN_BLEND_OP_MAX;
    const int kind = blend_kind(bl->src, bl->dst, bl->op);
    const int kind_a = blend_kind(bl->src_a, bl->dst_a, bl->op_a);
    for (uint32_t row = 0; row < 4; row++) {
        uint32_t m = mask >> (row * 4) & 15u;
        if (!m)
            continue;
        uint8_t *dst = base + (size_t)(y + (int)row) * pitch + (size_t)x * 4;
        uint32_t old[4] = {0, 0, 0, 0};
        if (m == 15u)
            memcpy(old, dst, 16);
        else
            for (uint32_t i = 0; i < 4; i++) /* only covered pixels: the row may end past the target */
                if (m >> i & 1)
                    memcpy(&old[i], dst + 4 * i, 4);
        v4 src[4], out[4];
        for (int c = 0; c < 4; c++)
            src[c] = v4_load(col + c * B + row * 4);
        if (bl->enable) {
            v4 d[4];
            for (int c = 0; c < 4; c++) {
                d[c] = v4_unorm8(old, pos[c]);
                /* src < 0 ? 0 : src > 1 ? 1 : src */
                src[c] = v4_sel(v4_lt(src[c], zero), zero, v4_sel(v4_lt(one, src[c]), one, src[c]));
            }
            for (int c = 0; c < 3; c++)
                out[c] = kind != BLEND_GENERAL ? blend_known(kind, src[c], d[c], src[3])
                         : mm ? blend_op4(bl->op, src[c], d[c])
                              : blend_op4(bl->op, v4_mul(src[c], factor4(bl->src, c, src, d, k)),
                                          v4_mul(d[c], factor4(bl->dst, c, src, d, k)));
            out[3] = kind_a != BLEND_GENERAL ? blend_known(kind_a, src[3], d[3], src[3])
                     : mma ? blend_op4(bl->op_a, src[3], d[3])
                           : blend_op4(bl->op_a, v4_mul(src[3], factor4(bl->src_a, 3, src, d, k)),
                                       v4_mul(d[3], factor4(bl->dst_a, 3, src, d, k)));
        } else {
            memcpy(out, src, sizeof out);
        }
        /* unorm8: c > 0 ? c : 0 (NaN gives 0), then c < 1 ? c : 1 */
        for (int c = 0; c < 4; c++)
            out[c] = v4_lt_sel(v4_gt_sel(out[c], zero), one);
        uint32_t px[4];
        if (bgra)
            v4_pack8(out[2], out[1], out[0], out[3], px);
        else
            v4_pack8(out[0], out[1], out[2], out[3], px);
        for (uint32_t i = 0; i < 4; i++)
            px[i] = (px[i] & ~keep) | (old[i] & keep);
        kr_store_row4(dst, px, m);
    }
}


/* output() for target r of a format other than RGBA8 / BGRA8: pixel by
 * pixel, in a function of its own so that output()'s common cases keep a
 * small frame. */
static __attribute__((noinline)) void output_px(const kd_state *s, const kd_blend_rt *bl, kiln_format f,
                                                const kr_fb *fb, uint32_t r, int x, int y,
                                                const float *color, uint32_t mask)
{
    uint32_t bpp = kres_format(f)->size;
    bool unorm = kres_format_unorm(f), snorm = f == KILN_FORMAT_R8G8B8A8_SNORM;
    bool blend = bl->enable && !kres_format_integer(f); /* D3D10 blends no integers */
    for (uint32_t i = 0; i < B; i++) {
        if (!(mask >> i & 1))
            continue;
        uint8_t *px = fb->rt[r] + (size_t)(y + (int)(i >> 2)) * fb->rt_pitch[r] +
                      (size_t)(x + (int)(i & 3)) * bpp;
        float src[4], out[4];
        for (int c = 0; c < 4; c++)
            src[c] = color[(r * 4 + c) * B + i];
        if (blend) {
            float dst[4];
            load_dst(f, px, dst);
            if (unorm) /* UNORM targets blend with sources clamped to [0, 1] */
                for (int c = 0; c < 4; c++)
                    src[c] = src[c] < 0.0f ? 0.0f : src[c] > 1.0f ? 1.0f : src[c];
            if (snorm) /* and SNORM ones to [-1, 1] */
                for (int c = 0; c < 4; c++)
                    src[c] = src[c] < -1.0f ? -1.0f : src[c] > 1.0f ? 1.0f : src[c];
            /* D3D10: MIN and MAX ignore the blend factors. */
            bool mm = bl->op == KILN_BLEND_OP_MIN || bl->op == KILN_BLEND_OP_MAX;
            bool mma = bl->op_a == KILN_BLEND_OP_MIN || bl->op_a == KILN_BLEND_OP_MAX;
            for (int c = 0; c < 3; c++)
                out[c] = mm ? blend_op(bl->op, src[c], dst[c])
                            : blend_op(bl->op, src[c] * factor(bl->src, c, src, dst, s->blend_factor),
                                       dst[c] * factor(bl->dst, c, src, dst, s->blend_factor));
            out[3] = mma ? blend_op(bl->op_a, src[3], dst[3])
                         : blend_op(bl->op_a, src[3] * factor(bl->src_a, 3, src, dst, s->blend_factor),
                                    dst[3] * factor(bl->dst_a, 3, src, dst, s->blend_factor));
        } else {
            memcpy(out, src, sizeof out);
        }
        store_px(f, px, out, bl->write_mask);
    }
}

void kr_output_select(kr_drawx *dx, const kr_fb *fb)
{
    const kd_state *s = dx->s;
    uint32_t n = fb->nrt < s->ps_outputs ? fb->nrt : s->ps_outputs;
    dx->out1 = 0;
    dx->write8 = NULL;
    const kd_blend_rt *bl = &s->blend[0];
    dx->ahead_rt = 0;
    if (n && fb->rt[0] && fb->samples == 1 && (bl->enable || (bl->write_mask & 15u) != 15u))
        dx->ahead_rt = (uint8_t)kres_format(fb->rt_format[0])->size;
    if (n == 0) {
        dx->out1 = 2;
        return;
    }
#if KR_EFFECTS_X86
    kiln_format f = fb->rt_format[0];
    if (n != 1 || !dx->wide || (f != KILN_FORMAT_R8G8B8A8_UNORM && f != KILN_FORMAT_B8G8R8A8_UNORM))
        return;
    /* output()'s loop for one target */
    if (fb->rt[0])
        dx->write8 = dx->wide16 ? kr_write8_select_avx512(&s->blend[0], f == KILN_FORMAT_B8G8R8A8_UNORM)
                                : kr_write8_select(&s->blend[0], f == KILN_FORMAT_B8G8R8A8_UNORM);
    dx->out1 = dx->write8 ? 1 : 2;
#endif
}

/* Rects through a general span while counting is on (tests; off, the
 * flag's line stays shared and nothing is written per rect) */
static _Atomic bool general_counting;
static _Atomic uint64_t general_spans;

void kr_general_span_counted(void)
{
    if (atomic_load_explicit(&general_counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&general_spans, 1, memory_order_relaxed);
}

uint64_t kr_general_span_calls(bool count)
{
    atomic_store(&general_counting, count);
    return atomic_load(&general_spans);
}

kr_span_fn kr_general_span_select(const kr_drawx *dx, const kr_fb *fb)
{
#if KR_EFFECTS_X86
    const kd_state *s = dx->s;
    /* shade_block's way for such a draw: no block or shade function, no
     * alpha to coverage, no test before or after shading, output's one
     * write8 call */
    if (!dx->wide || !s->ps || dx->block || dx->shade || dx->direct || dx->out1 != 1 ||
        fb->samples != 1 || (s->alpha_to_coverage && s->ps_outputs) ||
        (fb->ds && (s->depth_enable || s->stencil_enable)))
        return NULL;
    return dx->wide16 ? kr_general_span_avx512 : kr_general_span_avx2;
#else
    (void)dx;
    (void)fb;
    return NULL;
#endif
}

static void output(const kr_prim *p, const kr_fb *fb, int x, int y, const float *color, uint32_t mask)
{
    const kd_state *s = p->dx->s;
    uint32_t n = fb->nrt < s->ps_outputs ? fb->nrt : s->ps_outputs;
    for (uint32_t r = 0; r < n; r++) {
        if (!fb->rt[r])
            continue;
        const kd_blend_rt *bl = &s->blend[r];
        if (!bl->write_mask)
            continue;
        kiln_format f = fb->rt_format[r];
#if KR_EFFECTS_X86
        /* blending or not, two rows per vector: the covered pixels'
         * target words read with masked loads, written row by row */
        if ((f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM) && p->dx->wide) {
            if (!bl->enable && bl->write_mask == 15u)
                kr_store_rgba8_avx2(fb->rt[r], fb->rt_pitch[r], f == KILN_FORMAT_B8G8R8A8_UNORM, x, y,
                                    color + r * 4 * B, mask);
            else
                kr_blend_rgba8_avx2(bl, s->blend_factor, fb->rt[r], fb->rt_pitch[r],
                                    f == KILN_FORMAT_B8G8R8A8_UNORM, x, y, color + r * 4 * B, mask);
            continue;
        }
#endif
        if (!bl->enable && bl->write_mask == 15u &&
            (f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM)) {
            output_rgba8(fb->rt[r], fb->rt_pitch[r], f == KILN_FORMAT_B8G8R8A8_UNORM, x, y,
                         color + r * 4 * B, mask);
            continue;
        }
        if (f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM) {
            output_rgba8_blend(bl, s->blend_factor, fb->rt[r], fb->rt_pitch[r],
                               f == KILN_FORMAT_B8G8R8A8_UNORM, x, y, color + r * 4 * B, mask);
            continue;
        }
        output_px(s, bl, f, fb, r, x, y, color, mask);
    }
}

/* ---- one 4x4 block ---- */

/* Set bits of a block mask (queries count pixels). */
static inline uint64_t bits16(uint32_t m)
{
    m = m - ((m >> 1) & 0x5555u);
    m = (m & 0x3333u) + ((m >> 2) & 0x3333u);
    m = (m + (m >> 4)) & 0x0f0fu;
    return (m + (m >> 8)) & 0x1fu;
}

/* The pixel shader's inputs of a block: varyings / w interpolated at the
 * pixel centers (fx: the column offsets, fy: one per row). */
static void interpolate(const kr_prim *p, v4 fx, const float fy[4], float *vary)
{
    uint32_t ncomp = p->dx->nvary * 4, vmask = p->dx->vmask;
    if (p->kind == KR_TRI) {
        v4 w[4];
        const float q0 = p->q[0], q1 = p->q[1], q2 = p->q[2];
        if (q1 == 0.0f && q2 == 0.0f) {
            /* Affine (equal w at the vertices): one divide, same bits. */
            w[0] = w[1] = w[2] = w[3] = v4_set1(1.0f / q0);
        } else {
            for (int row = 0; row < 4; row++)
                w[row] = v4_div(v4_set1(1.0f),
                                v4_add(v4_add(v4_set1(q0), v4_mul(v4_set1(q1), fx)),
                                       v4_mul(v4_set1(q2), v4_set1(fy[row]))));
        }
        for (uint32_t k = 0; k < ncomp; k++) {
            if (!(vmask >> k & 1)) { /* unread: 0 */
                for (uint32_t i = 0; i < B; i += 4)
                    v4_store(vary + k * B + i, v4_set1(0.0f));
                continue;
            }
            const v4 a0 = v4_set1(p->attr[3 * k]), a1 = v4_set1(p->attr[3 * k + 1]);
            const float a2 = p->attr[3 * k + 2];
            const v4 a01 = v4_add(a0, v4_mul(a1, fx));
            for (int row = 0; row < 4; row++)
                v4_store(vary + k * B + 4 * row,
                         v4_mul(v4_add(a01, v4_set1(a2 * fy[row])), w[row]));
        }
    } else {
        /* Points, and lines' pixels (shade_pixel): constant attributes. */
        for (uint32_t k = 0; k < ncomp; k++)
            for (uint32_t i = 0; i < B; i += 4)
                v4_store(vary + k * B + i, v4_set1(vmask >> k & 1 ? p->attr[k] : 0.0f));
    }
}

/* Depth of a block's 16 pixels at (x, y) + (sx, sy) / 16 from their
 * centers, clamped to the viewport's range. */
static void block_depth(const kr_prim *p, int x, int y, int sx, int sy, float *z)
{
    const kd_state *s = p->dx->s;
    const float ox = 0.5f + (float)sx / 16.0f, oy = 0.5f + (float)sy / 16.0f;
    const v4 fx = v4_sub(v4_add(v4_ramp(x), v4_set1(ox)), v4_set1(p->ox));
    const v4 zmin = v4_set1(s->vp.min_depth), zmax = v4_set1(s->vp.max_depth);
    for (int row = 0; row < 4; row++) {
        const float fy = (float)(y + row) + oy - p->oy;
        v4 zr = p->kind == KR_TRI ? v4_add(v4_add(v4_set1(p->z[0]), v4_mul(v4_set1(p->z[1]), fx)),
                                           v4_mul(v4_set1(p->z[2]), v4_set1(fy)))
                                  : v4_set1(p->z[0]);
        /* z < zmin ? zmin : z > zmax ? zmax : z */
        zr = v4_sel(v4_lt(zr, zmin), zmin, v4_lt_sel(zmax, zr));
        v4_store(z + 4 * row, zr);
    }
}

/* block_depth at the pixel centers (no sample offset): two rows per
 * vector at the AVX2 level. */
static inline void center_depth(const kr_prim *p, int x, int y, float *z)
{
#if KR_EFFECTS_X86
    if (p->dx->wide && p->kind == KR_TRI) {
        if (p->dx->wide16)
            kr_block_depth_avx512(p, x, y, z);
        else
            kr_block_depth_avx2(p, x, y, z);
        return;
    }
#endif
    block_depth(p, x, y, 0, 0, z);
}

/* The varyings of the block at (x, y), at its pixel centers: the widest
 * kernel the draw chose for triangles (the same floats at every level). */
static inline void interpolate_block(const kr_prim *p, int x, int y, float *vary)
{
#if KR_EFFECTS_X86
    const kr_drawx *dx = p->dx;
    if (dx->wide16 && p->kind == KR_TRI) {
        kr_interpolate_avx512(p, x, y, dx->nvary * 4, dx->vmask, vary);
        return;
    }
    if (dx->wide && p->kind == KR_TRI) {
        kr_interpolate_avx2(p, x, y, dx->nvary * 4, dx->vmask, vary);
        return;
    }
#endif
    /* Pixel centers relative to the planes' origin: a column vector
     * shared by the rows, one value per row. */
    const v4 fx = v4_sub(v4_add(v4_ramp(x), v4_set1(0.5f)), v4_set1(p->ox));
    float fy[4];
    for (int row = 0; row < 4; row++)
        fy[row] = (float)(y + row) + 0.5f - p->oy;
    interpolate(p, fx, fy, vary);
}

/* Alpha to coverage: how many of a pixel's samples render 0's alpha
 * keeps, floor(saturate(alpha) * samples + 0.5). */
static uint32_t a2c_samples(float alpha, uint32_t samples)
{
    float a = alpha > 0.0f ? (alpha < 1.0f ? alpha : 1.0f) : 0.0f; /* NaN: 0 */
    return (uint32_t)(a * (float)samples + 0.5f);
}

static const int kr_pattern4[4][2] = KILN_SAMPLE_PATTERN4;

/* out, a copy of fb, pointed at sample plane k (< fb->samples): only the
 * target pointers differ, so one copy serves every plane. */
static void sample_planes(const kr_fb *fb, uint32_t k, kr_fb *out)
{
    for (uint32_t r = 0; r < fb->nrt; r++)
        if (fb->rt[r])
            out->rt[r] = fb->rt[r] + k * fb->rt_plane[r];
    if (fb->ds)
        out->ds = fb->ds + k * fb->ds_plane;
}

/* The framebuffer of sample plane k. */
static void sample_fb(const kr_fb *fb, uint32_t k, kr_fb *out)
{
    *out = *fb;
    sample_planes(fb, k, out);
}

/* kiln_ps_args.z of a KILN_PS_NO_Z shader (aligned as the depth it
 * stands for). */
static _Alignas(16) const float no_z[B];

static void shade_ms_rest(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t sm[4],
                          float (*z)[B]);

/* A block of a 4x target: sm[k] are the pixels whose sample k is covered.
 * Depth and stencil per sample, the pixel shader once for the pixels with
 * any sample covered, its output to each sample that passed. */
static void shade_block_ms(const kr_prim *p, const kr_fb *fb, int x, int y, const uint32_t sm_in[4])
{
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    uint32_t sm[4];
    /* one copy of fb, pointed at each sample plane in turn (a copy per
     * plane per block was 14% of this function on bench (e/4x)) */
    kr_fb f = *fb;
    _Alignas(16) float z[4][B];
    for (uint32_t k = 0; k < 4; k++) {
        sm[k] = sm_in[k];
        block_depth(p, x, y, kr_pattern4[k][0], kr_pattern4[k][1], z[k]);
    }
    if (!s->ps) { /* depth only: per sample, no shading */
        for (uint32_t k = 0; k < 4; k++) {
            sample_planes(fb, k, &f);
            sm[k] = sm[k] ? depth_stencil(p, &f, x, y, z[k], sm[k]) : 0;
            if (fb->counts)
                fb->counts[1] += bits16(sm[k]);
        }
        return;
    }
    if (dx->early_z && !s->alpha_to_coverage)
        for (uint32_t k = 0; k < 4; k++) {
            sample_planes(fb, k, &f);
            sm[k] = sm[k] ? depth_stencil(p, &f, x, y, z[k], sm[k]) : 0;
        }
    shade_ms_rest(p, fb, x, y, sm, z);
}

/* shade_block_ms after the early test, if any: the pixel shader once for
 * the pixels with a sample in sm, the late test (z: each sample's depth;
 * read only for a late test), output to the samples. */
static void shade_ms_rest(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t sm[4],
                          float (*z)[B])
{
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    kr_fb f = *fb;
    uint32_t mask = sm[0] | sm[1] | sm[2] | sm[3];
    if (!mask)
        return;
    _Alignas(16) float vary[KILN_MAX_VARYINGS * 4 * B];
    _Alignas(16) float color[KILN_MAX_RENDER_TARGETS * 4 * B];
    interpolate_block(p, x, y, vary);
    const uint32_t ncolor = 4 * B * s->ps_outputs;
    for (uint32_t i = 0; i < ncolor; i += 4)
        v4_store(color + i, v4_set1(0.0f));
    /* The pixel's depth input: at its center, as a single-sample target's
     * (zeros for a KILN_PS_NO_Z shader). */
    _Alignas(16) float zc[B];
    if (!(s->ps_flags & KILN_PS_NO_Z))
        center_depth(p, x, y, zc);
    const float *zin = s->ps_flags & KILN_PS_NO_Z ? no_z : zc;
    kiln_ps_args a = {
        .x = x, .y = y, .mask = mask, .front_facing = p->front, .varyings = vary, .z = zin,
        .color = color, .cb = dx->ps_cb, .cb_size = dx->ps_cb_size, .textures = dx->tex,
        .user = s->ps_user, .primitive_id = p->prim_id,
    };
    s->ps(&a);
    if (fb->counts)
        fb->counts[0] += bits16(mask);
    if (s->ps_flags & KILN_PS_MAY_DISCARD)
        for (uint32_t k = 0; k < 4; k++)
            sm[k] &= a.mask;
    if (s->alpha_to_coverage && s->ps_outputs) {
        /* keep the first n covered samples of each pixel */
        for (uint32_t i = 0; i < B; i++) {
            if (!(mask >> i & 1))
                continue;
            uint32_t n = a2c_samples(color[3 * B + i], 4);
            for (uint32_t k = 0; k < 4; k++) {
                if (!(sm[k] >> i & 1))
                    continue;
                if (n)
                    n--;
                else
                    sm[k] &= ~(1u << i);
            }
        }
    }
    if (!dx->early_z || s->alpha_to_coverage)
        for (uint32_t k = 0; k < 4; k++) {
            sample_planes(fb, k, &f);
            sm[k] = sm[k] ? depth_stencil(p, &f, x, y, z[k], sm[k]) : 0;
        }
    for (uint32_t k = 0; k < 4; k++) {
        if (fb->counts)
            fb->counts[1] += bits16(sm[k]);
        if (sm[k]) {
            sample_planes(fb, k, &f);
            output(p, &f, x, y, color, sm[k]);
        }
    }
}

/* One output's 4 x 16 floats zeroed. */
static inline __attribute__((always_inline)) void zero_outputs(float *c)
{
#if defined(__SSE2__)
    const __m128 z = _mm_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < 4 * B; i += 4)
        _mm_store_ps(c + i, z);
#else
    memset(c, 0, 4 * B * sizeof(float));
#endif
}

static inline __attribute__((always_inline)) void
shade_rest(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask, float *z, bool have_z);

static inline __attribute__((always_inline)) void shade_unblocked(const kr_prim *p, const kr_fb *fb,
                                                                  int x, int y, uint32_t mask);

static void shade_block(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (fb->samples > 1) { /* a point's or line's pixel: all four samples */
        const uint32_t sm[4] = {mask, mask, mask, mask};
        shade_block_ms(p, fb, x, y, sm);
        return;
    }
    const kr_drawx *dx = p->dx;
    if (dx->block && dx->block(p, fb, x, y, mask))
        return;
    shade_unblocked(p, fb, x, y, mask);
}

/* shade_block past the draw's block function (none, or it declined). */
static inline __attribute__((always_inline)) void shade_unblocked(const kr_prim *p, const kr_fb *fb,
                                                                  int x, int y, uint32_t mask)
{
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    /* The pixels' depth (the test's, and the shader's input), worked out
     * when the block first needs it: the texture effect's shading without
     * a depth or stencil test never does. */
    _Alignas(16) float z[B];
    bool have_z = false;

    if (!s->ps) {
        /* Depth only (no pixel shader): test and write depth/stencil, no
         * shading, no color; occlusion queries count the samples. */
        center_depth(p, x, y, z);
        mask = depth_stencil(p, fb, x, y, z, mask);
        if (fb->counts)
            fb->counts[1] += bits16(mask);
        return;
    }
    const bool a2c = s->alpha_to_coverage && s->ps_outputs;
    if (dx->early_z && !a2c) {
        if (fb->ds && (s->depth_enable || s->stencil_enable)) { /* depth_stencil's test */
            center_depth(p, x, y, z);
            have_z = true;
            mask = depth_stencil_test(p, fb, x, y, z, mask);
        }
        if (!mask)
            return;
        /* (kr_shade_select: never with alpha to coverage or queries) */
        if (dx->shade && dx->shade(p, fb, x, y, mask))
            return;
    }
    shade_rest(p, fb, x, y, mask, z, have_z);
}

/* shade_block's general shading after the early test, if any (z the
 * pixels' depth when have_z): interpolation, the pixel shader, the late
 * test, output. always_inline: as a call of its own (GCC's choice, two
 * callers) (c/ps) ran 2.6% more instructions. */
static inline __attribute__((always_inline)) void
shade_rest(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask, float *z, bool have_z)
{
    const kr_drawx *dx = p->dx;
    const kd_state *s = dx->s;
    const bool a2c = s->alpha_to_coverage && s->ps_outputs;
    /* A KILN_PS_NO_Z shader reads zeros: the depth is then worked out only
     * for a test after shading. */
    const bool no_z_in = (s->ps_flags & KILN_PS_NO_Z) != 0;
    if (!have_z && (!no_z_in || (fb->ds && (s->depth_enable || s->stencil_enable))))
        center_depth(p, x, y, z);
    _Alignas(16) float vary[KILN_MAX_VARYINGS * 4 * B];
    _Alignas(16) float color[KILN_MAX_RENDER_TARGETS * 4 * B];
    interpolate_block(p, x, y, vary);
    for (uint32_t r = 0, n = s->ps_outputs; r < n; r++) /* unrolled vector stores, no call */
        zero_outputs(color + r * 4 * B);
    const float *zin = no_z_in ? no_z : z;
    kiln_ps_args a = {
        .x = x, .y = y, .mask = mask, .front_facing = p->front, .varyings = vary, .z = zin,
        .color = color, .cb = dx->ps_cb, .cb_size = dx->ps_cb_size, .textures = dx->tex,
        .user = s->ps_user, .primitive_id = p->prim_id,
    };
    s->ps(&a);
    if (fb->counts)
        fb->counts[0] += bits16(mask);
    if (s->ps_flags & KILN_PS_MAY_DISCARD)
        mask &= a.mask;
    if (a2c)
        for (uint32_t i = 0; i < B; i++)
            if ((mask >> i & 1) && !a2c_samples(color[3 * B + i], 1))
                mask &= ~(1u << i);
    if (!dx->early_z || a2c)
        mask = depth_stencil(p, fb, x, y, z, mask);
    if (fb->counts)
        fb->counts[1] += bits16(mask);
    if (!mask)
        return;
#if KR_EFFECTS_X86
    switch (dx->out1) { /* kr_output_select: output()'s one call, chosen per draw */
    case 1: dx->write8(&s->blend[0], s->blend_factor, fb->rt[0], fb->rt_pitch[0], x, y, color, mask); return;
    case 2: return;
    default: break;
    }
#endif
    output(p, fb, x, y, color, mask);
}

/* ---- triangles ---- */

/* The pixels of a block inside all three edges, from the edge values e at
 * its first pixel center and the steps sx, sy to the next column, row. */
static uint32_t edge_mask(const int64_t e[3], const int64_t sx[3], const int64_t sy[3])
{
    uint32_t mask = 0;
    int64_t r0 = e[0], r1 = e[1], r2 = e[2];
    for (uint32_t row = 0; row < 4; row++) {
        int64_t c0 = r0, c1 = r1, c2 = r2;
        for (uint32_t col = 0; col < 4; col++) {
            if ((c0 | c1 | c2) >= 0) /* all three non-negative */
                mask |= 1u << (row * 4 + col);
            c0 += sx[0];
            c1 += sx[1];
            c2 += sx[2];
        }
        r0 += sy[0];
        r1 += sy[1];
        r2 += sy[2];
    }
    return mask;
}

#if defined(__SSE2__)
/* edge_mask in 32-bit lanes, for a block whose edge values all fit in
 * int32: each lane is computed with wrapping adds, and a wrapped sum
 * whose true value fits in 32 bits is that value, so the signs are
 * exact. */
static inline uint32_t edge_mask32(const int64_t e[3], const int64_t sx[3], const int64_t sy[3])
{
    __m128i row[3], step[3];
    for (int k = 0; k < 3; k++) {
        uint32_t x = (uint32_t)sx[k];
        row[k] = _mm_add_epi32(_mm_set1_epi32((int32_t)(uint32_t)e[k]),
                               _mm_setr_epi32(0, (int32_t)x, (int32_t)(2 * x), (int32_t)(3 * x)));
        step[k] = _mm_set1_epi32((int32_t)(uint32_t)sy[k]);
    }
    uint32_t mask = 0;
    for (uint32_t r = 0; r < 4; r++) {
        __m128i any = _mm_or_si128(_mm_or_si128(row[0], row[1]), row[2]);
        mask |= (~(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(any)) & 15u) << (4 * r);
        for (int k = 0; k < 3; k++)
            row[k] = _mm_add_epi32(row[k], step[k]);
    }
    return mask;
}
#endif

/* A block the draw's direct function (kr_direct_select) declined, as
 * shade_block goes on from there: a declining block function is not
 * called again (a mip chain's SSE2 fused block declines where its quads
 * plan differently, after working out their plans). A declining shade
 * function (only for points and lines, which never get here) would be. */
static __attribute__((noinline)) void shade_declined(const kr_prim *p, const kr_fb *fb, int x,
                                                     int y, uint32_t mask)
{
    shade_unblocked(p, fb, x, y, mask);
}

/* The rest of shade_block, out of line: the shading when the draw's
 * specialized one declines a block after its early test. */
static __attribute__((noinline)) void shade_rest_cold(const kr_prim *p, const kr_fb *fb, int x,
                                                      int y, uint32_t mask, float *z)
{
    shade_rest(p, fb, x, y, mask, z, true);
}

/* Whether center_depth and depth_stencil_test both take the AVX-512
 * kernels for p: then kr_block_test_d32_avx512 does both in one call (a
 * triangle at the AVX-512 level, D32_FLOAT without stencil). */
static inline bool test_d32_16(const kr_prim *p, const kr_fb *fb)
{
#if KR_EFFECTS_X86
    return p->dx->wide16 && p->kind == KR_TRI && fb->ds_format == KILN_FORMAT_D32_FLOAT &&
           !p->dx->s->stencil_enable;
#else
    (void)p;
    (void)fb;
    return false;
#endif
}

/* shade_block's early depth and stencil test, then the draw's
 * specialized shading (kr_direct_select's choice under a depth or
 * stencil test on a bound buffer). Never false: having tested (and
 * maybe written depth), it finishes the block itself. */
static bool tested_shade(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    _Alignas(16) float z[B];
#if KR_EFFECTS_X86
    if (test_d32_16(p, fb)) {
        mask = kr_block_test_d32_avx512(p, fb, x, y, mask);
        if (mask && !p->dx->shade(p, fb, x, y, mask)) {
            /* Defensive: the shadings decline only lines and points, which
             * test_d32_16 leaves to the path below. The depths the test
             * took, for the general rest. */
            center_depth(p, x, y, z);
            shade_rest_cold(p, fb, x, y, mask, z);
        }
        return true;
    }
#endif
    center_depth(p, x, y, z);
    mask = depth_stencil_test(p, fb, x, y, z, mask);
    if (mask && !p->dx->shade(p, fb, x, y, mask))
        shade_rest_cold(p, fb, x, y, mask, z);
    return true;
}

/* What shade_block calls for a triangle's block of one sample per pixel
 * when that settles it: the draw's block path, else its shading (the
 * mask as given, never empty), after the early depth and stencil test
 * (tested_shade) when the draw has one.
 * raster_tri calls it straight, and the rest of shade_block
 * (shade_declined) only when it returns false, having written nothing:
 * the same calls, without shade_block's frame and tests around each
 * (docs/raster.md, "Blocks without shade_block"). A counted scene has
 * neither block nor shade (backend.c). */
kr_block_fn kr_direct_select(const kr_drawx *dx, const kr_fb *fb)
{
    const kd_state *s = dx->s;
    if (fb->samples > 1)
        return NULL;
    if (dx->block)
        return dx->block;
    if (!dx->shade || !s->ps || !dx->early_z || (s->alpha_to_coverage && s->ps_outputs))
        return NULL;
    if (fb->ds && (s->depth_enable || s->stencil_enable)) {
#if KR_EFFECTS_X86
        kr_block_fn f = dx->wide16 ? kr_effect_d32_select_avx512(dx, fb) : NULL;
        if (f)
            return f;
#endif
        return tested_shade;
    }
    return dx->shade;
}

/* Blocks at a small triangle's corner (kr_direct_any_origin): 0 where
 * the direct function allows, 1 never, 2 where it allows and counted
 * (kr_corner_force, tests). */
static _Atomic int corner_mode;
static _Atomic uint64_t corner_windows, corner_fours, corner_declined;

void kr_corner_force(int mode) { atomic_store(&corner_mode, mode); }

void kr_corner_counts(uint64_t *windows, uint64_t *fours, uint64_t *declined)
{
    *windows = atomic_load(&corner_windows);
    *fours = atomic_load(&corner_fours);
    *declined = atomic_load(&corner_declined);
}

kr_corner_fn kr_direct_corner4(kr_block_fn f)
{
#if KR_EFFECTS_X86
    return kr_effect_d32_corner_avx512(f);
#else
    (void)f;
    return NULL;
#endif
}

uint8_t kr_direct_any_origin(kr_block_fn f)
{
    /* today the kernels with a corner4 twin, and only they */
    const int mode = atomic_load_explicit(&corner_mode, memory_order_relaxed);
    if (mode != 1 && kr_direct_corner4(f))
        return mode == 2 ? 2 : 1;
    return 0;
}

/* A triangle's block (mask not empty) to its shading: the draw's direct
 * function (kr_direct_select), and the rest of shade_block only when that
 * declines; shade_block whole when there is none. */
static inline __attribute__((always_inline)) void
send_block(const kr_prim *p, const kr_fb *fb, kr_block_fn direct, int x, int y, uint32_t mask)
{
    if (!direct)
        shade_block(p, fb, x, y, mask);
    else if (!direct(p, fb, x, y, mask))
        shade_declined(p, fb, x, y, mask);
}

/* A block whose edge values lie in [e + lo_off, e + hi_off]: false when
 * one edge rejects it whole; otherwise *accept says all three accept it
 * whole and *fits that every value fits in int32 (edge_mask32's exact
 * range: wrapping adds give the true values). */
static inline __attribute__((always_inline)) bool block_edges(const int64_t e[3],
                                                              const int64_t lo_off[3],
                                                              const int64_t hi_off[3], bool *accept,
                                                              bool *fits)
{
    bool reject = false, acc = true, fit = true;
    for (int k = 0; k < 3; k++) {
        int64_t lo = e[k] + lo_off[k], hi = e[k] + hi_off[k];
        reject |= hi < 0;
        acc &= lo >= 0;
        fit &= lo >= INT32_MIN && hi <= INT32_MAX;
    }
    *accept = acc;
    *fits = fit;
    return !reject;
}

/* The rect [x0, x1) x [y0, y1) narrowed to the primitive's box: false
 * when nothing is left. */
static inline bool clip_to_prim(const kr_prim *p, int *x0, int *y0, int *x1, int *y1)
{
    if (p->minx > *x0)
        *x0 = p->minx;
    if (p->miny > *y0)
        *y0 = p->miny;
    if (p->maxx < *x1)
        *x1 = p->maxx;
    if (p->maxy < *y1)
        *y1 = p->maxy;
    return *x0 < *x1 && *y0 < *y1;
}

static void hsr_block_ms(const kr_prim *p, const kr_fb *fb, int x, int y, const uint32_t sm[4]);

/* raster_tri on a 4x target: each block's coverage at each sample
 * position (the same edge functions and fill rule, moved by the sample's
 * offset, which is exact in 16.8), then shade_block_ms (or, `defer`,
 * kr_hsr_prim's test, hsr_block_ms). Not inlined into raster_tri:
 * inlined, GCC compiled raster_tri's own use of edge_mask32 into 8% more
 * instructions (cachegrind on (b)) or made edge_mask32 a call (perf on
 * (a): 5.6%), and (a), (b), (d) ran 3-5% slower. */
__attribute__((noinline)) static void raster_tri_ms(const kr_prim *p, const kr_fb *fb, int x0,
                                                    int y0, int x1, int y1, bool defer)
{
    /* raster_tri's walk with four samples: a sample's edge values are the
     * pixel center's plus that sample's offset, off[k] = a * dx + b * dy
     * (exact integers, as before); a block is rejected when every sample
     * is off one edge and accepted whole when every sample is inside all
     * three, from the least and greatest values over its centers and the
     * offsets. Before, every block of the rect computed each sample's
     * values with multiplies and walked its 16 pixels: raster_tri was a
     * quarter of bench (e/4x). */
    const int64_t S = KR_SUBPIXEL;
    const int bx0 = x0 & ~3, by0 = y0 & ~3;
    int64_t sx[3], sy[3], off[4][3], erow[3], lo_off[3], hi_off[3];
    for (int j = 0; j < 3; j++) {
        sx[j] = p->a[j] * S;
        sy[j] = p->b[j] * S;
        int64_t ex = sx[j] * 3, ey = sy[j] * 3, omin = INT64_MAX, omax = INT64_MIN;
        for (int k = 0; k < 4; k++) {
            off[k][j] = p->a[j] * (kr_pattern4[k][0] * (S / 16)) +
                        p->b[j] * (kr_pattern4[k][1] * (S / 16));
            omin = off[k][j] < omin ? off[k][j] : omin;
            omax = off[k][j] > omax ? off[k][j] : omax;
        }
        lo_off[j] = (ex < 0 ? ex : 0) + (ey < 0 ? ey : 0) + omin;
        hi_off[j] = (ex > 0 ? ex : 0) + (ey > 0 ? ey : 0) + omax;
        erow[j] = p->a[j] * ((int64_t)bx0 * S + S / 2) + p->b[j] * ((int64_t)by0 * S + S / 2) +
                  p->c[j];
    }
    for (int by = by0; by < y1;
         by += 4, erow[0] += 4 * sy[0], erow[1] += 4 * sy[1], erow[2] += 4 * sy[2]) {
        int64_t e[3] = {erow[0], erow[1], erow[2]};
        for (int bx = bx0; bx < x1; bx += 4, e[0] += 4 * sx[0], e[1] += 4 * sx[1], e[2] += 4 * sx[2]) {
            bool accept, fits; /* fits: every sample's value in the block */
            if (!block_edges(e, lo_off, hi_off, &accept, &fits))
                continue;
            uint32_t rect = kr_rect_mask(bx, by, x0, y0, x1, y1);
            uint32_t sm[4] = {rect, rect, rect, rect}, any = rect;
            if (!accept) {
                any = 0;
                for (int k = 0; k < 4; k++) {
                    int64_t ek[3] = {e[0] + off[k][0], e[1] + off[k][1], e[2] + off[k][2]};
#if defined(__SSE2__)
                    sm[k] = (fits ? edge_mask32(ek, sx, sy) : edge_mask(ek, sx, sy)) & rect;
#else
                    sm[k] = edge_mask(ek, sx, sy) & rect;
#endif
                    any |= sm[k];
                }
            }
            if (any && defer)
                hsr_block_ms(p, fb, bx, by, sm);
            else if (any)
                shade_block_ms(p, fb, bx, by, sm);
        }
    }
}

#if defined(__SSE2__)
/* A rect within one window of 2x2 blocks (x1 - (x0 & ~3) <= 8, the
 * same for y; with `corner`, for a draw whose direct function takes a
 * block at any pixel, the blocks placed from the rect's own first column
 * and row: x1 - x0 <= 8, the same for y), the common case of a small
 * triangle: every pixel's edge values at once, four columns to a lane
 * set, row by row from the rect's first row, in 32-bit lanes
 * (edge_mask32's argument: every value computed is a pixel center's in
 * the window, checked to fit in int32, so the wrapping adds give it
 * exactly). The rect's columns are masked from the lanes, its rows by
 * where the walk starts and stops. The blocks go to the shading in
 * raster_tri's order. Returns false, having done nothing, when some value
 * does not fit (a huge triangle's corner in a tile). */
static inline __attribute__((always_inline)) bool raster_window(const kr_prim *p, const kr_fb *fb,
                                                                kr_block_fn direct, bool corner,
                                                                int x0, int y0, int x1, int y1)
{
    const int64_t S = KR_SUBPIXEL;
    const int bx0 = corner ? x0 : x0 & ~3, by0 = corner ? y0 : y0 & ~3;
    const bool two = x1 - bx0 > 4;
    const int64_t cols = two ? 7 : 3, rows = y1 - 1 - y0;
    const int64_t px = (int64_t)bx0 * S + S / 2, py = (int64_t)y0 * S + S / 2;
    __m128i left[3], right[3], step[3];
    for (int k = 0; k < 3; k++) {
        uint32_t e, x, y;
        if (!kr_edge_window32(p, k, px, py, cols, rows, &e, &x, &y))
            return false;
        left[k] = _mm_add_epi32(_mm_set1_epi32((int32_t)e),
                                _mm_setr_epi32(0, (int32_t)x, (int32_t)(2 * x), (int32_t)(3 * x)));
        right[k] = _mm_add_epi32(left[k], _mm_set1_epi32((int32_t)(4 * x)));
        step[k] = _mm_set1_epi32((int32_t)y);
    }
    /* The rect's columns in each half of the window. */
    const uint32_t span = (0xffu >> (8 - (x1 - bx0))) & (0xffu << (x0 - bx0));
    const uint32_t lcols = span & 15u, rcols = span >> 4;
    /* The four blocks' masks in 16 bits each, in shading order: block
     * row br, column bc at bit 16 (2 br + bc); pixel row r of the window
     * at 32 (r / 4) + 4 (r % 4) + 16 bc. */
    uint64_t m = 0;
    for (int y = y0; y < y1; y++) {
        const uint32_t r = (uint32_t)(y - by0), sh = 32u * (r >> 2) + 4u * (r & 3u);
        __m128i any = _mm_or_si128(_mm_or_si128(left[0], left[1]), left[2]);
        m |= (uint64_t)(~(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(any)) & lcols) << sh;
        if (two) {
            any = _mm_or_si128(_mm_or_si128(right[0], right[1]), right[2]);
            m |= (uint64_t)(~(uint32_t)_mm_movemask_ps(_mm_castsi128_ps(any)) & rcols) << (sh + 16);
            for (int k = 0; k < 3; k++)
                right[k] = _mm_add_epi32(right[k], step[k]);
        }
        for (int k = 0; k < 3; k++)
            left[k] = _mm_add_epi32(left[k], step[k]);
    }
    while (m) { /* the covered blocks, in order */
        const int g = __builtin_ctzll(m) >> 4;
        const uint32_t mask = (uint32_t)(m >> (16 * g)) & 0xffffu;
        m &= ~((uint64_t)0xffffu << (16 * g));
        send_block(p, fb, direct, bx0 + 4 * (g & 1), by0 + 4 * (g >> 1), mask);
    }
    return true;
}
#endif

/* A triangle's blocks inside the rect (already within its box, not
 * empty: clip_to_prim) to `direct` (NULL: shade_block); `own`: direct is
 * the draw's, whose span function and target fetches apply (kr_hsr_prim's
 * is not). */
static inline __attribute__((always_inline)) void raster_tri_to(const kr_prim *p, const kr_fb *fb,
                                                                kr_block_fn direct, bool own,
                                                                int x0, int y0, int x1, int y1)
{
    if (fb->samples > 1) {
        raster_tri_ms(p, fb, x0, y0, x1, y1, !own);
        return;
    }
#if defined(__SSE2__)
    /* A draw whose direct function takes a block at any pixel: the window
     * at the rect's own corner, which has at most as many blocks as the
     * aligned one (a rect of 4x4 pixels or less is one block, not up to
     * four), and a rect of at most 4x4 pixels to the draw's corner4
     * kernel, which finds the block's coverage itself (raster_window's
     * values in 16 lanes, after the same int32 check). A rect too big for
     * the window is too big for the aligned one too; one whose values do
     * not fit in int32 (a huge triangle's corner) goes to the general path
     * below, as it would have from the aligned window nearly always. */
    if (own && p->dx->direct_any) {
        if (p->dx->corner4 && x1 - x0 <= 4 && y1 - y0 <= 4) {
            const bool done = p->dx->corner4(p, fb, x0, y0, x1, y1);
            if (p->dx->direct_any == 2)
                atomic_fetch_add_explicit(done ? &corner_fours : &corner_declined, 1,
                                          memory_order_relaxed);
            if (done)
                return;
        } else if (x1 - x0 <= 8 && y1 - y0 <= 8 &&
                   raster_window(p, fb, direct, true, x0, y0, x1, y1)) {
            if (p->dx->direct_any == 2)
                atomic_fetch_add_explicit(&corner_windows, 1, memory_order_relaxed);
            return;
        }
    } else if (x1 - (x0 & ~3) <= 8 && y1 - (y0 & ~3) <= 8 &&
               raster_window(p, fb, direct, false, x0, y0, x1, y1)) {
        return;
    }
#endif
    const int64_t S = KR_SUBPIXEL;
    int64_t sx[3], sy[3], ex[3], ey[3];
    for (int k = 0; k < 3; k++) {
        sx[k] = p->a[k] * S; /* one pixel step */
        sy[k] = p->b[k] * S;
        ex[k] = sx[k] * 3;   /* across a block's centers */
        ey[k] = sy[k] * 3;
    }
    /* A rect of more than one block as a whole (the first and last pixel
     * centers per axis): off one edge, nothing to do; inside all three,
     * every block is covered and needs no edge values (a big triangle over
     * most of its tiles). A small triangle's rect goes straight to its
     * block or two. */
    if (((x1 - 1) >> 2) != (x0 >> 2) || ((y1 - 1) >> 2) != (y0 >> 2)) {
        int64_t px = (int64_t)x0 * S + S / 2, py = (int64_t)y0 * S + S / 2;
        int64_t wx = (int64_t)(x1 - 1 - x0), wy = (int64_t)(y1 - 1 - y0);
        bool inside = true;
        for (int k = 0; k < 3; k++) {
            int64_t e = p->a[k] * px + p->b[k] * py + p->c[k];
            int64_t dx = sx[k] * wx, dy = sy[k] * wy;
            if (e + (dx > 0 ? dx : 0) + (dy > 0 ? dy : 0) < 0)
                return;
            inside &= e + (dx < 0 ? dx : 0) + (dy < 0 ? dy : 0) >= 0;
        }
        if (inside) {
            if (own && p->dx->span && p->dx->span(p, fb, x0, y0, x1, y1))
                return;
            /* only here: in the loop below the extra code cost (f) 5% */
            const uint32_t ahead = own && x1 - x0 > 16 ? p->dx->ahead_rt : 0;
            const int bx0 = x0 & ~3;
            for (int by = y0 & ~3; by < y1; by += 4)
                for (int bx = bx0; bx < x1; bx += 4) {
                    if (ahead && !((bx - bx0) & 15)) /* a block that starts a line */
                        kr_fetch_ahead(fb->rt[0], fb->rt_pitch[0], ahead, bx, by, x0, x1, y1);
                    uint32_t mask = kr_rect_mask(bx, by, x0, y0, x1, y1);
                    send_block(p, fb, direct, bx, by, mask);
                }
            return;
        }
    }
    /* Edge values at each block's first pixel center, a * px + b * py + c,
     * stepped from the first block's: a block right adds 4 * sx, a block
     * down 4 * sy (exact: integers, and no value outside the rect's
     * range). lo and hi: the least and greatest over the block's centers. */
    const int bx0 = x0 & ~3, by0 = y0 & ~3;
    int64_t erow[3], stx[3], sty[3], lo_off[3], hi_off[3];
    for (int k = 0; k < 3; k++) {
        erow[k] = p->a[k] * ((int64_t)bx0 * S + S / 2) + p->b[k] * ((int64_t)by0 * S + S / 2) +
                  p->c[k];
        stx[k] = sx[k] * 4;
        sty[k] = sy[k] * 4;
        lo_off[k] = (ex[k] < 0 ? ex[k] : 0) + (ey[k] < 0 ? ey[k] : 0);
        hi_off[k] = (ex[k] > 0 ? ex[k] : 0) + (ey[k] > 0 ? ey[k] : 0);
    }
    for (int by = by0; by < y1;
         by += 4, erow[0] += sty[0], erow[1] += sty[1], erow[2] += sty[2]) {
        int64_t e[3] = {erow[0], erow[1], erow[2]};
        for (int bx = bx0; bx < x1; bx += 4, e[0] += stx[0], e[1] += stx[1], e[2] += stx[2]) {
            bool accept, fits;
            if (!block_edges(e, lo_off, hi_off, &accept, &fits))
                continue;
            uint32_t mask = 0xffff;
            if (!accept) {
#if defined(__SSE2__)
                mask = fits ? edge_mask32(e, sx, sy) : edge_mask(e, sx, sy);
#else
                mask = edge_mask(e, sx, sy);
#endif
            }
            /* Clip to the rect (tile, bbox, scissor). */
            mask &= kr_rect_mask(bx, by, x0, y0, x1, y1);
            if (!mask)
                continue;
            send_block(p, fb, direct, bx, by, mask);
        }
    }
}

static void raster_tri(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    if (clip_to_prim(p, &x0, &y0, &x1, &y1))
        raster_tri_to(p, fb, p->dx->direct, true, x0, y0, x1, y1);
}

/* ---- hidden surface removal (prim.h, kr_hsr) ---- */

/* -1: not chosen yet (kr_hsr_mode reads KILN_HSR once) */
static _Atomic int hsr_mode = -1;
static _Atomic uint64_t hsr_deferred, hsr_resolves;

int kr_hsr_mode(void)
{
    int m = atomic_load_explicit(&hsr_mode, memory_order_relaxed);
    if (m >= 0)
        return m;
    /* KILN_HSR=0 or off: never (to compare, or to debug a shader with
     * side effects); all: wherever allowed; otherwise where it pays */
    const char *env = getenv("KILN_HSR");
    int want = !env                                       ? 0
               : !strcmp(env, "0") || !strcmp(env, "off") ? 1
               : !strcmp(env, "all")                      ? 2
                                                          : 0;
    atomic_compare_exchange_strong(&hsr_mode, &m, want); /* kr_hsr_force may have won */
    return atomic_load_explicit(&hsr_mode, memory_order_relaxed);
}

void kr_hsr_force(int mode) { atomic_store(&hsr_mode, mode); }

void kr_hsr_counts(uint64_t *deferred, uint64_t *resolves)
{
    *deferred = atomic_load(&hsr_deferred);
    *resolves = atomic_load(&hsr_resolves);
}

bool kr_hsr_select(const kr_drawx *dx, const kr_fb *fb, int mode)
{
    const kd_state *s = dx->s;
    if (mode == 1 || !s->ps || !s->raster || !dx->early_z ||
        (s->alpha_to_coverage && s->ps_outputs) || !fb->ds || !s->depth_enable)
        return false;
    bool writes = false;
    for (uint32_t r = 0; r < fb->nrt; r++) {
        if (!fb->rt[r])
            continue;
        const kd_blend_rt *bl = &s->blend[r];
        if (r >= s->ps_outputs || bl->enable || (bl->write_mask & 15u) != 15u)
            return false;
        writes = true;
    }
    if (!writes)
        return false;
    if (mode == 2)
        return true;
    /* Where it pays: the shading costs more than the owner map's upkeep
     * (not the vertex color and lit effects, without textures). */
    return dx->tex != NULL || !(kr_effect_ps_is(s->ps, KILN_EFFECT_VERTEX_COLOR) ||
                                kr_effect_ps_is(s->ps, KILN_EFFECT_LIT));
}

void kr_hsr_begin(kr_hsr *h, int x0, int y0, uint32_t samples)
{
    h->n = 0;
    h->samples = samples;
    h->x0 = x0;
    h->y0 = y0;
    memset(h->dirty, 0, sizeof h->dirty);
}

/* The block's passing pixels (mask) now belong to the triangle being
 * deferred, h->n (1 + its index). */
static inline void hsr_own(kr_hsr *h, uint32_t k, int x, int y, uint32_t mask)
{
    const uint32_t b =
        ((uint32_t)y & (KR_TILE - 1)) / 4 * (KR_TILE / 4) + ((uint32_t)x & (KR_TILE - 1)) / 4;
    uint16_t *o = h->owner[k] + 16 * b;
    const uint16_t id = (uint16_t)h->n;
#if defined(__SSE2__)
    const __m128i bit_lo = _mm_setr_epi16(1, 2, 4, 8, 16, 32, 64, 128);
    const __m128i bit_hi = _mm_setr_epi16(256, 512, 1024, 2048, 4096, 8192, 16384, (short)32768);
    const __m128i m = _mm_set1_epi16((short)mask), v = _mm_set1_epi16((short)id);
    __m128i sel0 = _mm_cmpeq_epi16(_mm_and_si128(m, bit_lo), bit_lo);
    __m128i sel1 = _mm_cmpeq_epi16(_mm_and_si128(m, bit_hi), bit_hi);
    __m128i *q = (__m128i *)(void *)o; /* unaligned: a slot has the allocator's alignment */
    _mm_storeu_si128(
        q, _mm_or_si128(_mm_and_si128(sel0, v), _mm_andnot_si128(sel0, _mm_loadu_si128(q))));
    _mm_storeu_si128(q + 1, _mm_or_si128(_mm_and_si128(sel1, v),
                                         _mm_andnot_si128(sel1, _mm_loadu_si128(q + 1))));
#else
    for (uint32_t i = 0; i < B; i++)
        if (mask >> i & 1u)
            o[i] = id;
#endif
    h->dirty[b / 64] |= 1ull << (b % 64);
}

/* kr_hsr_prim's block: the early test (and depth/stencil writes) as
 * tested_shade does it, the passing pixels to the triangle. */
static bool hsr_block(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
#if KR_EFFECTS_X86
    if (test_d32_16(p, fb)) {
        mask = kr_block_test_d32_avx512(p, fb, x, y, mask);
        if (mask)
            hsr_own(fb->hsr, 0, x, y, mask);
        return true;
    }
#endif
    _Alignas(16) float z[B];
    center_depth(p, x, y, z);
    mask = depth_stencil_test(p, fb, x, y, z, mask);
    if (mask)
        hsr_own(fb->hsr, 0, x, y, mask);
    return true;
}

/* hsr_block for four samples: each sample's test as shade_block_ms's
 * early one, its passing samples to the triangle. */
static void hsr_block_ms(const kr_prim *p, const kr_fb *fb, int x, int y, const uint32_t sm[4])
{
    kr_fb f = *fb;
    _Alignas(16) float z[B];
    for (uint32_t k = 0; k < 4; k++) {
        if (!sm[k])
            continue;
        block_depth(p, x, y, kr_pattern4[k][0], kr_pattern4[k][1], z);
        sample_planes(fb, k, &f);
        uint32_t pass = depth_stencil(p, &f, x, y, z, sm[k]);
        if (pass)
            hsr_own(fb->hsr, k, x, y, pass);
    }
}

void kr_hsr_prim(kr_hsr *h, const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    if (!clip_to_prim(p, &x0, &y0, &x1, &y1))
        return;
    if (h->n == KR_HSR_PRIMS)
        kr_hsr_resolve(h, fb);
    h->prim[h->n++] = p;
    raster_tri_to(p, fb, hsr_block, false, x0, y0, x1, y1);
}

/* A deferred triangle's pixels of one block (mask), as tested_shade goes
 * on after its test: the draw's shading, else the general one. */
static void hsr_shade(const kr_prim *p, const kr_fb *fb, int x, int y, uint32_t mask)
{
    if (p->dx->shade && p->dx->shade(p, fb, x, y, mask))
        return;
    _Alignas(16) float z[B];
    center_depth(p, x, y, z);
    shade_rest_cold(p, fb, x, y, mask, z);
}

/* The pixels of a block whose owner (16 entries at o) is id. */
static inline uint32_t owned_by(const uint16_t *o, uint16_t id)
{
#if defined(__SSE2__)
    const __m128i *q = (const __m128i *)(const void *)o; /* unaligned: the allocator's */
    const __m128i v = _mm_set1_epi16((short)id);
    return (uint32_t)_mm_movemask_epi8(_mm_packs_epi16(_mm_cmpeq_epi16(_mm_loadu_si128(q), v),
                                                       _mm_cmpeq_epi16(_mm_loadu_si128(q + 1), v)));
#else
    uint32_t mask = 0;
    for (uint32_t i = 0; i < B; i++)
        mask |= (uint32_t)(o[i] == id) << i;
    return mask;
#endif
}

/* A block's four sample planes under kr_hsr_resolve: each deferred
 * triangle owning some of its samples shades the pixels those samples
 * are in once (the shader runs per pixel) and writes just its samples,
 * as shade_block_ms goes on after its early test. */
static void hsr_resolve_ms(kr_hsr *h, const kr_fb *fb, uint32_t b, int x, int y)
{
    uint16_t *o[4];
    uint32_t left[4];
    for (uint32_t k = 0; k < 4; k++) {
        o[k] = h->owner[k] + 16 * b;
        left[k] = ~owned_by(o[k], 0) & 0xffffu;
    }
    for (;;) {
        uint32_t k0 = 0;
        while (k0 < 4 && !left[k0])
            k0++;
        if (k0 == 4)
            break;
        const uint16_t id = o[k0][__builtin_ctz(left[k0])];
        uint32_t sm[4];
        for (uint32_t k = 0; k < 4; k++) {
            sm[k] = owned_by(o[k], id);
            left[k] &= ~sm[k];
        }
        shade_ms_rest(h->prim[id - 1], fb, x, y, sm, NULL); /* no late test: kr_hsr_select */
    }
    for (uint32_t k = 0; k < 4; k++)
        memset(o[k], 0, B * sizeof *o[k]);
}

void kr_hsr_resolve(kr_hsr *h, const kr_fb *fb)
{
    for (uint32_t w = 0; w < sizeof h->dirty / sizeof h->dirty[0]; w++) {
        for (uint64_t bits = h->dirty[w]; bits; bits &= bits - 1) {
            const uint32_t b = 64 * w + (uint32_t)__builtin_ctzll(bits);
            const int x = h->x0 + (int)(b % (KR_TILE / 4)) * 4,
                      y = h->y0 + (int)(b / (KR_TILE / 4)) * 4;
            if (h->samples > 1) {
                hsr_resolve_ms(h, fb, b, x, y);
                continue;
            }
            uint16_t *o = h->owner[0] + 16 * b;
            for (uint32_t left = ~owned_by(o, 0) & 0xffffu; left;) {
                const uint16_t id = o[__builtin_ctz(left)];
                const uint32_t mask = owned_by(o, id);
                hsr_shade(h->prim[id - 1], fb, x, y, mask);
                left &= ~mask;
            }
            memset(o, 0, B * sizeof *o);
        }
        h->dirty[w] = 0;
    }
    atomic_fetch_add_explicit(&hsr_deferred, h->n, memory_order_relaxed);
    atomic_fetch_add_explicit(&hsr_resolves, 1, memory_order_relaxed);
    h->n = 0;
}

/* ---- points and lines ---- */

static void shade_pixel(const kr_prim *p, const kr_fb *fb, int x, int y, const float *attr, float z)
{
    /* One pixel in its 4x4 block; the other 15 carry the same values, so
     * derivatives are zero. */
    kr_prim q = *p;
    q.kind = KR_POINT;
    q.attr = (float *)attr;
    q.z[0] = z;
    int bx = x & ~3, by = y & ~3;
    uint32_t bit = 1u << ((uint32_t)(y - by) * 4 + (uint32_t)(x - bx));
    shade_block(&q, fb, bx, by, bit);
}

static void raster_point(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    int x = p->minx, y = p->miny;
    if (x < x0 || x >= x1 || y < y0 || y >= y1)
        return;
    shade_pixel(p, fb, x, y, p->attr, p->z[0]);
}

/* Aliased lines: the pixels whose center column (x-major) or row
 * (y-major) the line crosses, end point excluded, as D3D10's diamond-exit
 * rule gives for lines that do not start inside a diamond. */
static void raster_line(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    if (!clip_to_prim(p, &x0, &y0, &x1, &y1))
        return;
    float dxl = p->x1 - p->x0, dyl = p->y1 - p->y0;
    bool xmajor = fabsf(dxl) >= fabsf(dyl);
    float len = xmajor ? dxl : dyl;
    if (len == 0.0f)
        return;
    float a0 = xmajor ? p->x0 : p->y0, a1 = xmajor ? p->x1 : p->y1;
    float lo = a0 < a1 ? a0 : a1, hi = a0 < a1 ? a1 : a0;
    /* Pixel centers c + 0.5 in [lo, hi) if increasing, (lo, hi] if not. */
    int c0 = (int)ceilf(lo - 0.5f), c1 = (int)ceilf(hi - 0.5f);
    if (a0 > a1) {
        c0 = (int)floorf(lo - 0.5f) + 1;
        c1 = (int)floorf(hi - 0.5f) + 1;
    }
    uint32_t ncomp = p->dx->nvary * 4;
    float attr[KILN_MAX_VARYINGS * 4];
    for (int c = c0; c < c1; c++) {
        float center = (float)c + 0.5f;
        float t = (center - a0) / len;
        float other = (xmajor ? p->y0 : p->x0) + t * (xmajor ? dyl : dxl);
        int o = (int)floorf(other);
        int x = xmajor ? c : o, y = xmajor ? o : c;
        if (x < x0 || x >= x1 || y < y0 || y >= y1)
            continue;
        float q = p->q[0] + t * (p->q[1] - p->q[0]);
        for (uint32_t k = 0; k < ncomp; k++)
            attr[k] = (p->attr[2 * k] + t * (p->attr[2 * k + 1] - p->attr[2 * k])) / q;
        float z = p->z[0] + t * (p->z[1] - p->z[0]);
        shade_pixel(p, fb, x, y, attr, z);
    }
}

void kr_raster_prim(const kr_prim *p, const kr_fb *fb, int x0, int y0, int x1, int y1)
{
    switch (p->kind) {
    case KR_TRI: raster_tri(p, fb, x0, y0, x1, y1); break;
    case KR_LINE: raster_line(p, fb, x0, y0, x1, y1); break;
    default: raster_point(p, fb, x0, y0, x1, y1); break;
    }
}

/* How many rows ahead fill_rows32 fetches. Bench (d) against none: 8 rows
 * 0.96-1.01 of the frame over six interleaved sets and this function's
 * perf samples 23% fewer; 2 rows 1.04, 4 0.98, 16 1.00 (one set each); a
 * write prefetch (PREFETCHW) no better than the read one (0.966 / 0.956). */
#define CLEAR_AHEAD 8

/* Rows y0..y1 - 1 of a plane of 4-byte texels, columns x0..x1 - 1, set to
 * v: stores only (the old texels are not read, though the cached stores'
 * lines are fetched CLEAR_AHEAD rows ahead), 16 bytes at a time. With
 * `stream` (a tile nothing draws to after its clear in this scene), the
 * aligned 16 bytes bypass the cache (non-temporal: no line is read in
 * before it is written, and none is evicted for data read no sooner than
 * the next scene), then a fence, so that the stores are visible before
 * whatever marks the scene done. */
static void fill_rows32(uint8_t *plane, size_t pitch, uint32_t v, int x0, int y0, int x1, int y1,
                        bool stream)
{
    for (int y = y0; y < y1; y++) {
        uint32_t *row = (uint32_t *)(void *)(plane + (size_t)y * pitch) + x0;
        int n = x1 - x0, x = 0;
#if defined(__GNUC__)
        /* Cached stores take each line in first, and a tile's rows lie a
         * pitch apart (a 1080p row is 7,680 bytes): the hardware prefetcher
         * does not follow them, and the stores waited for every row's lines
         * in turn (perf on bench (d): 80% of this function on one store).
         * The row CLEAR_AHEAD rows on is fetched now. */
        if (!stream && y + CLEAR_AHEAD < y1) {
            const uint8_t *ahead = plane + (size_t)(y + CLEAR_AHEAD) * pitch + (size_t)x0 * 4;
            /* every line the row's bytes touch, from the first one's start */
            const uintptr_t first = (uintptr_t)ahead & ~(uintptr_t)63;
            for (uintptr_t a = first; a < (uintptr_t)ahead + 4u * (uint32_t)n; a += 64)
                __builtin_prefetch((const void *)a, 0, 3);
        }
#endif
#if defined(__SSE2__)
        const __m128i vv = _mm_set1_epi32((int32_t)v);
        if (stream) {
            for (; x < n && ((uintptr_t)(row + x) & 15u); x++)
                row[x] = v;
            for (; x + 4 <= n; x += 4)
                _mm_stream_si128((__m128i *)(void *)(row + x), vv);
        }
        for (; x + 4 <= n; x += 4)
            _mm_storeu_si128((__m128i *)(void *)(row + x), vv);
#endif
        for (; x < n; x++)
            row[x] = v;
    }
#if defined(__SSE2__)
    if (stream)
        _mm_sfence();
#else
    (void)stream;
#endif
}

static void clear_plane(const kr_fb *fb, int rt, const uint8_t *texel, uint32_t mask, int x0, int y0,
                        int x1, int y1, bool stream)
{
    if (rt < 0) {
        if (!fb->ds)
            return;
        if (fb->ds_format == KILN_FORMAT_D32_FLOAT_S8X24_UINT) {
            for (int y = y0; y < y1; y++)
                for (int x = x0; x < x1; x++)
                    kres_clear_d32s8(fb->ds + (size_t)y * fb->ds_pitch + (size_t)x * 8, texel, mask);
            return;
        }
        if (fb->ds_format == KILN_FORMAT_D16_UNORM) { /* no stencil: the depth or nothing */
            if (mask & 0xffffu)
                for (int y = y0; y < y1; y++)
                    for (int x = x0; x < x1; x++)
                        memcpy(fb->ds + (size_t)y * fb->ds_pitch + (size_t)x * 2, texel, 2);
            return;
        }
        uint32_t v;
        memcpy(&v, texel, 4);
        if (mask == 0xffffffffu) { /* depth and stencil, or D32_FLOAT: every bit */
            fill_rows32(fb->ds, fb->ds_pitch, v, x0, y0, x1, y1, stream);
            return;
        }
        for (int y = y0; y < y1; y++) {
            uint32_t *row = (uint32_t *)(void *)(fb->ds + (size_t)y * fb->ds_pitch) + x0;
            for (int x = 0; x < x1 - x0; x++)
                row[x] = (row[x] & ~mask) | (v & mask);
        }
        return;
    }
    if (!fb->rt[rt])
        return;
    uint32_t bpp = kres_format(fb->rt_format[rt])->size;
    if (bpp == 4) {
        uint32_t v;
        memcpy(&v, texel, 4);
        fill_rows32(fb->rt[rt], fb->rt_pitch[rt], v, x0, y0, x1, y1, stream);
        return;
    }
    uint8_t *first = fb->rt[rt] + (size_t)y0 * fb->rt_pitch[rt] + (size_t)x0 * bpp;
    for (int x = 0; x < x1 - x0; x++)
        memcpy(first + (size_t)x * bpp, texel, bpp);
    for (int y = y0 + 1; y < y1; y++)
        memcpy(fb->rt[rt] + (size_t)y * fb->rt_pitch[rt] + (size_t)x0 * bpp, first,
               (size_t)(x1 - x0) * bpp);
}

void kr_clear_rect(const kr_fb *fb, int rt, const uint8_t *texel, uint32_t mask, int x0, int y0,
                   int x1, int y1, bool stream)
{
    clear_plane(fb, rt, texel, mask, x0, y0, x1, y1, stream);
    for (uint32_t k = 1; k < fb->samples; k++) {
        kr_fb f;
        sample_fb(fb, k, &f);
        clear_plane(&f, rt, texel, mask, x0, y0, x1, y1, stream);
    }
}
