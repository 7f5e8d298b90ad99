/*
 * test_raster_fused: the fused path of KILN_EFFECT_TEXTURE (sample.c's
 * kr_block_select / block_texture, and fused_avx2.c) writes exactly the
 * bytes the general path writes (shade_block -> kiln_ps_sample ->
 * output_rgba8), at every SIMD level this CPU has.
 *
 * 1. The arithmetic premise, exhaustively: for every integer sum S in
 *    [0, 255 * 65536] the general path's float conversion - one correctly
 *    rounded S / (255 * 65536), clamp, (int)(f * 255 + 0.5) - equals the
 *    fused path's (S + 32768) >> 16. Without this nothing else could hold.
 * 2. Selection, unit level, on a kd_state / kr_drawx / kr_fb built by hand:
 *    kr_block_select picks the path for an eligible draw and refuses it
 *    when any single condition is broken. Then the block function it
 *    returns is called directly on hand-made triangles and partial masks
 *    and compared with an oracle (shade_block's interpolation, the public
 *    kiln_ps_sample, output_rgba8's conversion): it must either write
 *    exactly the covered pixels with the oracle's bytes, or return false
 *    having written nothing. This proves the path really runs (and really
 *    writes) - the API-level comparison alone could not tell "fused and
 *    equal" from "never taken".
 * 3. Equivalence through the public API: random textures (sizes, RGBA8 /
 *    BGRA8, mip chains, views of a mip or slice range), random samplers
 *    (mostly eligible, sometimes POINT or BORDER so the selection's
 *    refusals are exercised too), random perspective triangles with cull
 *    NONE, slivers and off-screen vertices, uv wrapping over [-2.5, 3.5].
 *    Each case is rendered twice: with the effect's pixel shader (fused
 *    path) and with a shader desc identical but for `fn`, a copy of
 *    kr_ps_texture (general path, since selection keys on the function).
 *    Every byte must match; the images must not be trivial in aggregate.
 * 4. Partial blocks: a small triangle over a cleared target; pixels outside
 *    it, including ones inside partially covered 4x4 blocks, keep the clear
 *    color, pixels inside get the (constant) texel exactly.
 *
 * The block-function part of 2, and 3 and 4, run once per available level
 * among SSE2 and AVX2, forced with kr_effects_force_level (the selection
 * reads the active level when a scene executes, so the level stays forced
 * until the images are read back); the default level is restored at the
 * end. A mismatch prints the case (seed and every parameter) and the first
 * differing pixel with both values.
 *
 * The oracle's float expressions are the library's, operation for
 * operation, in ISO C11 (no contraction into fused multiply-adds).
 */
#define _DEFAULT_SOURCE /* clock_gettime; mmap's MAP_ANONYMOUS */
#include "raster_util.h"
#include "raster/effects.h"
#include "raster/fused.h"
#include "raster/prim.h"
#include "raster/raster.h"

#include <math.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* D3D10 FLOAT -> UNORM8 as output_rgba8 does it (NaN -> 0). */
static uint8_t to_unorm8(float v)
{
    v = v > 0.0f ? v : 0.0f;
    v = v < 1.0f ? v : 1.0f;
    return (uint8_t)(int32_t)(v * 255.0f + 0.5f);
}

static int is_bgra(kiln_format f) { return f == KILN_FORMAT_B8G8R8A8_UNORM; }

static const char *fmt_name(kiln_format f)
{
    return f == KILN_FORMAT_R8G8B8A8_UNORM   ? "RGBA8"
           : f == KILN_FORMAT_B8G8R8A8_UNORM ? "BGRA8"
                                             : "other";
}

static const char *addr_name(kiln_address a)
{
    static const char *n[] = {"DEFAULT", "WRAP", "MIRROR", "CLAMP", "BORDER"};
    return (unsigned)a < 5 ? n[a] : "?";
}

static const char *filt_name(kiln_filter f)
{
    return f == KILN_FILTER_POINT ? "POINT" : "LINEAR";
}

/* The general path's pixel shader: kr_ps_texture, word for word, but a
 * different function, so kr_block_select never picks the fused path. */
static void ps_texture_general(kiln_ps_args *a)
{
    kiln_ps_sample(a, 0, 0, KILN_PS_VARYING(a, 0, 0), KILN_PS_VARYING(a, 0, 1),
                   KILN_PS_COLOR(a, 0, 0));
}

/* The SIMD levels to run (available on this build and CPU). */
static int levels(kr_simd out[3])
{
    return kr_effects_vector_levels(out);
}

static const char *level_name(kr_simd l)
{
    return kr_simd_name(l);
}

/* ==== 1. the arithmetic premise ==== */

/* Every S the kernels can produce (sum of wx * wy * byte with wx, wy in
 * 0..256 summing to 256 each: 0 .. 255 * 65536). The general path's steps
 * are separate volatile statements: nothing can be contracted or kept in
 * wider precision. */
static void test_premise(void)
{
    const uint32_t max_s = 255u * 65536u;
    uint32_t bad = 0, first_bad = 0;
    int first_got = 0;
    for (uint32_t S = 0; S <= max_s; S++) {
        volatile float s = (float)S;                  /* exact: S < 2^24 */
        volatile float f = s / (255.0f * 65536.0f);  /* the divisor is exact too */
        float c = f > 0.0f ? f : 0.0f;
        c = c < 1.0f ? c : 1.0f;
        volatile float scaled = c * 255.0f;
        volatile float biased = scaled + 0.5f;
        int got = (int)(int32_t)biased;
        int want = (int)((S + 32768u) >> 16);
        if (got != want) {
            if (!bad) {
                first_bad = S;
                first_got = got;
            }
            bad++;
        }
    }
    CHECK_EQ_INT(bad, 0);
    if (bad)
        fprintf(stderr, "    premise: %u sums differ, first S = %u: float path %d, integer %u\n",
                bad, first_bad, first_got, (first_bad + 32768u) >> 16);
    /* the ends map to 0 and 255 */
    CHECK_EQ_INT((0u + 32768u) >> 16, 0);
    CHECK_EQ_INT((max_s + 32768u) >> 16, 255);
}

/* The AVX2 kernels divide without a divide (kr_quot_avx2: a reciprocal
 * product and one corrected step). That is the divide's quotient for
 * every input they see: each integer sum S in [0, 255 * 65536] over
 * 255 * 65536 (one level), and each float in [0, 256] over 255 (two
 * levels' weighted sum / 255): the normal binades [1, 2) and [128, 256)
 * and every subnormal, exhaustively (the steps scale by powers of two
 * between them), plus 2^20 evenly spaced floats across the range. */
/* One kernel's quotients (width 8 or 16 values a call) over those inputs:
 * the count of inputs and of those that differ from the divide. */
typedef void (*quot_fn)(const float *in, float k, float *out);
static void quot_check(quot_fn fn, int width, uint64_t *n, uint64_t *bad)
{
    const float k1 = 255.0f * 65536.0f;
    float in[16], out[16];
    for (uint32_t S = 0; S <= 255u * 65536u; S += (uint32_t)width) {
        for (int i = 0; i < width; i++)
            in[i] = (float)(S + (uint32_t)i <= 255u * 65536u ? S + (uint32_t)i : 0u);
        fn(in, k1, out);
        for (int i = 0; i < width; i++) {
            volatile float want = in[i] / k1;
            *bad += memcmp(&out[i], (const void *)&want, 4) != 0;
        }
        *n += (uint64_t)width;
    }
    /* bit patterns: subnormals (0 .. 0x007fffff), [1, 2), [128, 256), and
     * a stride over [0, 256] */
    static const uint32_t ranges[4][3] = {
        {0x00000000u, 0x00800000u, 1}, {0x3f800000u, 0x40000000u, 1},
        {0x43000000u, 0x43800000u, 1}, {0x00000000u, 0x43800001u, 1083u}};
    for (int r = 0; r < 4; r++)
        for (uint32_t b = ranges[r][0]; b < ranges[r][1]; b += (uint32_t)width * ranges[r][2]) {
            for (uint32_t i = 0; i < (uint32_t)width; i++) {
                uint32_t bits = b + i * ranges[r][2];
                bits = bits < ranges[r][1] ? bits : ranges[r][0];
                memcpy(&in[i], &bits, 4);
            }
            fn(in, 255.0f, out);
            for (int i = 0; i < width; i++) {
                volatile float want = in[i] / 255.0f;
                *bad += memcmp(&out[i], (const void *)&want, 4) != 0;
            }
            *n += (uint64_t)width;
        }
}

static void test_quotient(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("quotients at the AVX2 level: no AVX2 + FMA here, not run\n");
        return;
    }
    uint64_t bad = 0, n = 0;
    quot_check(kr_quot_avx2, 8, &n, &bad);
    CHECK(bad == 0);
    printf("quotients at the AVX2 level: %llu inputs, %llu differ from the divide\n",
           (unsigned long long)n, (unsigned long long)bad);
    if (!kr_effects_kernels(KR_SIMD_AVX512)) {
        printf("quotients at the AVX-512 level: no AVX-512 here, not run\n");
        return;
    }
    bad = n = 0;
    quot_check(kr_quot_avx512, 16, &n, &bad);
    CHECK(bad == 0);
    printf("quotients at the AVX-512 level: %llu inputs, %llu differ from the divide\n",
           (unsigned long long)n, (unsigned long long)bad);
#endif
}

/* kr_fused_shade_add_avx2 adds the sample's byte c = (M + 32768) >> 16
 * to the target's byte d (saturated) for a channel's sum M in [0, 255 *
 * 65536] unless M + 32768 lies within 4 of a multiple of 65536 (its band,
 * kr_add_band_avx2); there it takes the float formula: the sample S =
 * fl(M / (255 * 65536)) (kr_quot_avx2, checked above against the divide),
 * then clamp(fl(fl(S + d / 255) * 255) + 0.5) truncated. The proof that
 * the two agree for every M outside the band and every d:
 *   - the band test on every M: M is outside it exactly when it lies in
 *     the run [lo_j, hi_j] of its c = j below;
 *   - the formula is monotone in M for each d (a correctly rounded
 *     quotient, then monotone operations), so it is min(255, j + d) over
 *     a whole run when it is at both ends: checked for all 256 d. */
static uint8_t add_formula(float s, int d)
{
    volatile float x = s + kr_unorm8_float[d];
    volatile float t = x < 1.0f ? x : 1.0f;
    volatile float m = t * 255.0f;
    volatile float a = m + 0.5f;
    return (uint8_t)(int32_t)a;
}

static void test_add_bytes(void)
{
#if KR_EFFECTS_X86
    if (!kr_effects_kernels(KR_SIMD_AVX2)) {
        printf("ONE + ONE in bytes: no AVX2 + FMA here, not run\n");
        return;
    }
    enum { MAXM = 255 * 65536, BAND = 4 };
    int32_t lo[256], hi[256];
    for (int j = 0; j < 256; j++) {
        lo[j] = j == 0 ? 0 : 65536 * j - 32768 + BAND;
        hi[j] = j == 255 ? MAXM : 65536 * j + 32768 - BAND - 1;
    }
    /* the band test against the runs, every sum, in each channel in turn
     * (the others hold sums far from the band, or, in a quarter of the
     * calls, a copy of the same sums: the test is whether any channel is
     * in it) */
    uint64_t bad_band = 0, in_band = 0, bad_band16 = 0;
    const int wide16 = kr_effects_kernels(KR_SIMD_AVX512) != NULL;
    for (int32_t m0 = 0; m0 <= MAXM; m0 += 8) {
        int32_t m[8], ch[4][8];
        for (int i = 0; i < 8; i++)
            m[i] = m0 + i <= MAXM ? m0 + i : MAXM;
        int b0 = (m0 >> 3) & 3;
        for (int b = 0; b < 4; b++)
            for (int i = 0; i < 8; i++)
                ch[b][i] = b == b0 || (m0 >> 5) % 4 == 0 ? m[i] : 65536 * (i + b) % MAXM;
        uint32_t band = kr_add_band_avx2((const int32_t(*)[8])ch);
        if (wide16) { /* the AVX-512 test, the same sums in both halves */
            int32_t ch16[4][16];
            for (int b = 0; b < 4; b++)
                for (int i = 0; i < 16; i++)
                    ch16[b][i] = ch[b][i % 8];
            uint32_t band16 = kr_add_band_avx512((const int32_t(*)[16])ch16);
            bad_band16 += (band16 & 0xffu) != band || band16 >> 8 != band;
        }
        for (int i = 0; i < 8; i++) {
            int j = (m[i] + 32768) >> 16;
            int outside = m[i] >= lo[j] && m[i] <= hi[j];
            bad_band += (uint64_t)(((band >> i) & 1u) == (uint32_t)outside);
            in_band += !outside && m0 + i <= MAXM;
        }
    }
    /* the formula at each run's ends */
    uint64_t bad_ends = 0;
    for (int j = 0; j < 256; j++) {
        float in[8] = {(float)lo[j], (float)hi[j], 0, 0, 0, 0, 0, 0}, q[8];
        kr_quot_avx2(in, 255.0f * 65536.0f, q);
        for (int d = 0; d < 256; d++) {
            uint8_t want = (uint8_t)(j + d > 255 ? 255 : j + d);
            bad_ends += add_formula(q[0], d) != want;
            bad_ends += add_formula(q[1], d) != want;
        }
    }
    /* kr_fused_shade_alpha_avx2 leaves out the clamp of s * a + d * (1 -
     * a): monotone in s and d, so at most its value at s = d = 1, a + (1 -
     * a) rounded twice; at most 1 for every sample a */
    uint64_t above_one = 0;
    for (int32_t m0 = 0; m0 <= MAXM; m0 += 8) {
        float in[8], a[8];
        for (int i = 0; i < 8; i++)
            in[i] = (float)(m0 + i <= MAXM ? m0 + i : MAXM);
        kr_quot_avx2(in, 255.0f * 65536.0f, a);
        for (int i = 0; i < 8; i++) {
            volatile float inv = 1.0f - a[i];
            volatile float sum = a[i] + inv;
            above_one += !(a[i] >= 0.0f && a[i] <= 1.0f && sum <= 1.0f);
        }
    }
    CHECK(above_one == 0);
    CHECK(bad_band == 0);
    CHECK(bad_band16 == 0);
    CHECK(bad_ends == 0);
    printf("ONE + ONE in bytes: %d sums, %llu in the band, %llu band tests wrong (AVX-512's: %s); "
           "the formula at 256 runs' ends for 256 bytes: %llu differ; samples a with a + (1 - a) "
           "above 1: %llu\n",
           MAXM + 1, (unsigned long long)in_band, (unsigned long long)bad_band,
           wide16 ? (bad_band16 ? "differ" : "the same") : "not run", (unsigned long long)bad_ends,
           (unsigned long long)above_one);
#endif
}

/* ==== 5. kiln_ps_sample's kernels at every level ==== */

/* Samples slot 0 of `a` at each SIMD level; true when the floats differ
 * (the first differing one printed when `report`, with `what`). */
static bool sample_differs(const kr_simd *lv, int nlv, const kiln_ps_args *a, const float *u,
                           const float *v, bool report, const char *what)
{
    _Alignas(64) float out[KR_SIMD_COUNT][64];
    for (int l = 0; l < nlv; l++) {
        CHECK_RESULT(kr_effects_force_level(lv[l]), KILN_OK);
        kiln_ps_sample(a, 0, 0, u, v, out[l]);
    }
    bool differ = false;
    for (int l = 1; l < nlv; l++) {
        if (!memcmp(out[0], out[l], sizeof out[0]))
            continue;
        differ = true;
        for (int i = 0; report && i < 64; i++)
            if (memcmp(&out[0][i], &out[l][i], 4)) {
                fprintf(stderr, "    %s: channel %d pixel %d: %s %.9g, %s %.9g (u %.9g v %.9g)\n", what,
                        i / 16, i % 16, level_name(lv[0]), out[0][i], level_name(lv[l]), out[l][i],
                        u[i % 16], v[i % 16]);
                break;
            }
    }
    return differ;
}

/* The bilinear RGBA8 / BGRA8 kernel kiln_ps_sample runs for a view of one
 * level (sample.c's rgba8_level: SSE2 rows, or fused_avx2.c's eight-lane
 * rows at the AVX2 level) must give every float bit for bit at every
 * level: random textures (power-of-two and other sizes, 1..64 texels:
 * the AVX2 kernels read levels under 2 texels, and pairs at WRAP seams,
 * texel by texel; padded rows), CLAMP / WRAP / MIRROR per axis, u and v
 * over [-2.5, 3.5] with exact texel edges, WRAP seams and far coordinates
 * (NaN, infinite, at the int32 and int16 limits, about 2^30) mixed in, or
 * (a third of the cases) a magnified block's, whose texels AVX-512 reads
 * as one window, a quarter of those with one special coordinate (NaN,
 * infinite, huge), often the first pixel's, from which AVX-512 places the
 * window, and a quarter in the level's last pair of columns and rows,
 * where the window must be pulled back inside the level; half the cases
 * through kiln_ps_sample's shortcut for such views. */
static void test_sample_levels(const kr_simd *lv, int nlv)
{
    enum { NCASE = 1200 };
    static uint8_t mem[64 * (64 * 4 + 12)];
    th_rng r = {0x5a3b1e77ull};
    uint64_t compared = 0, bad = 0;
    static const kiln_address modes[3] = {KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP,
                                          KILN_ADDRESS_MIRROR};
    for (int n = 0; n < NCASE; n++) {
        uint32_t w = 1u << th_below(&r, 7), h = 1u << th_below(&r, 7);
        if (th_below(&r, 4) == 0)
            w = 1 + (uint32_t)th_below(&r, 64);
        if (th_below(&r, 4) == 0)
            h = 1 + (uint32_t)th_below(&r, 64);
        kres_subresource sub;
        memset(&sub, 0, sizeof sub);
        sub.width = w;
        sub.height = h;
        sub.row_pitch = w * 4 + 4 * (uint32_t)th_below(&r, 4);
        sub.size = (size_t)sub.row_pitch * h;
        for (size_t i = 0; i < sub.size; i++)
            mem[i] = (uint8_t)th_next(&r);
        /* the texels between two pages that cannot be read, placed to end
         * with the last texel (no padding after it) right before the
         * second, or (every other case) to start right after the first: a
         * read past the level, or before it (a window at a negative column
         * or row: a level under 4 texels wide or high), faults */
        const size_t used = (size_t)sub.row_pitch * (h - 1) + (size_t)w * 4;
        const size_t page = 4096, span = (used + page - 1) / page * page + 2 * page;
        uint8_t *pages =
            mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(pages != MAP_FAILED && mprotect(pages, page, PROT_NONE) == 0 &&
              mprotect(pages + span - page, page, PROT_NONE) == 0);
        uint8_t *data = n % 4 < 2 ? pages + span - page - used : pages + page;
        memcpy(data, mem, used);
        struct kiln_ps_textures tx;
        memset(&tx, 0, sizeof tx);
        kr_texture *t = &tx.tex[0];
        t->data = data;
        t->subs = &sub;
        t->format = th_below(&r, 2) ? KILN_FORMAT_R8G8B8A8_UNORM : KILN_FORMAT_B8G8R8A8_UNORM;
        t->res_mip_levels = 1;
        t->num_mips = 1;
        /* kiln_ps_sample's shortcut (what draws set) and its general checks */
        t->quick = n % 2 ? kr_texture_quick(t) : 0;
        kd_sampler sm = {KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                         modes[th_below(&r, 3)], modes[th_below(&r, 3)], 0.0f, 0.0f, 1000.0f,
                         {0, 0, 0, 0}, KILN_COMPARE_DEFAULT, 0, KILN_ADDRESS_CLAMP};
        tx.samp[0] = &sm;
        kiln_ps_args a;
        memset(&a, 0, sizeof a);
        a.mask = 0xffff;
        a.textures = &tx;
        _Alignas(32) float u[16], v[16];
        if (n % 3 == 2) {
            /* a magnified block: steps under half a texel per pixel, from
             * anywhere (the edges, WRAP seams, outside): AVX-512's window
             * of 4x4 texels where it fits */
            float u0 = th_frand(&r, -1.2f, 2.2f), v0 = th_frand(&r, -1.2f, 2.2f);
            if (th_below(&r, 3) == 0) /* the last texels */
                u0 = 1.0f - th_frand(&r, 0.0f, 3.0f) / (float)w;
            if (th_below(&r, 3) == 0)
                v0 = 1.0f - th_frand(&r, 0.0f, 3.0f) / (float)h;
            float su = th_frand(&r, -0.5f, 0.5f) / (float)w,
                  tu = th_frand(&r, -0.5f, 0.5f) / (float)w;
            float sv = th_frand(&r, -0.5f, 0.5f) / (float)h,
                  tv = th_frand(&r, -0.5f, 0.5f) / (float)h;
            for (int i = 0; i < 16; i++) {
                u[i] = u0 + su * (float)(i % 4) + tu * (float)(i / 4);
                v[i] = v0 + sv * (float)(i % 4) + tv * (float)(i / 4);
            }
            /* a quarter of them in the level's last pair of columns and
             * rows (u * w - 0.5 in [w - 2, w - 1)): the window must be
             * pulled back to the last one inside the level, which ends
             * right before an unreadable page in half the cases */
            if (th_below(&r, 4) == 0)
                for (int i = 0; i < 16; i++) {
                    u[i] = ((float)w - 1.5f + th_frand(&r, 0.0f, 0.9f)) / (float)w;
                    v[i] = ((float)h - 1.5f + th_frand(&r, 0.0f, 0.9f)) / (float)h;
                }
            /* a quarter of them with one special u or v (not texel
             * units), at the first pixel (where AVX-512 works out the
             * window's place on its own) or another: NaN, infinities,
             * huge, 2^30, past 2^31 */
            if (th_below(&r, 4) == 0) {
                static const float special[] = {
                    NAN,    INFINITY,      -INFINITY,      1e10f, -1e10f, 3e38f,
                    -3e38f, 1073741824.0f, -1073741824.0f, 4e9f,  -0.0f};
                const int at = th_below(&r, 2) ? 0 : (int)th_below(&r, 16);
                const float x = special[th_below(&r, sizeof special / sizeof special[0])];
                if (th_below(&r, 2))
                    u[at] = x;
                else
                    v[at] = x;
            }
        }
        /* texel coordinates (u * size) where the kernels' conversions
         * change behaviour: NaN, infinities, the int32 limits (2^31 and
         * the float under it), 2^30 (to which the portable path clamps)
         * and the floats either side of it, past 2^24 and 2^23 (whole
         * numbers from there), and the int16 limits */
        static const float far[] = {NAN,
                                    INFINITY,
                                    -INFINITY,
                                    3e38f,
                                    -3e38f,
                                    2147483648.0f,
                                    -2147483648.0f,
                                    2147483520.0f,
                                    -2147483520.0f,
                                    1073741824.0f,
                                    -1073741824.0f,
                                    1073741952.0f,
                                    1073741760.0f,
                                    16777218.0f,
                                    8388609.0f,
                                    1e10f,
                                    -1e10f,
                                    32767.5f,
                                    32768.5f,
                                    -32768.5f};
        for (int i = 0; i < 16 && n % 3 != 2; i++) {
            uint64_t k = th_below(&r, 5);
            /* texel edges and centers exactly, seams of WRAP, far, or anywhere */
            u[i] = k == 0   ? (float)th_below(&r, 2 * w + 1) / (float)(2 * w)
                   : k == 1 ? (float)(w - 1) / (float)w + (float)th_below(&r, 64) / (64.0f * w)
                   : k == 2 ? far[th_below(&r, sizeof far / sizeof far[0])] / (float)w
                            : th_frand(&r, -2.5f, 3.5f);
            k = th_below(&r, 5);
            v[i] = k == 0   ? (float)th_below(&r, 2 * h + 1) / (float)(2 * h)
                   : k == 1 ? (float)(h - 1) / (float)h + (float)th_below(&r, 64) / (64.0f * h)
                   : k == 2 ? far[th_below(&r, sizeof far / sizeof far[0])] / (float)h
                            : th_frand(&r, -2.5f, 3.5f);
        }
        char what[96];
        snprintf(what, sizeof what, "sample case %d (%ux%u pitch %u, modes %d/%d)", n, w, h,
                 sub.row_pitch, (int)sm.address_u, (int)sm.address_v);
        compared += nlv >= 2;
        bad += sample_differs(lv, nlv, &a, u, v, bad < 3, what);
        munmap(pages, span);
    }
    CHECK_EQ_INT(bad, 0);
    printf("kiln_ps_sample, one level, every vector level against sse2: %llu blocks compared, %llu differ\n",
           (unsigned long long)compared, (unsigned long long)bad);
}

/* kiln_ps_sample on mip chains (trilinear and bilinear with a LOD per
 * quad: rgba8_block, whose AVX2 level takes two quads per vector) must
 * give every float bit for bit at both levels: random RGBA8/BGRA8 chains
 * (power-of-two and other sizes, padded rows), CLAMP / WRAP / MIRROR,
 * LINEAR or POINT between mips, biases, and coordinates whose steps
 * differ per quad so that the quads' LODs and level weights differ. */
static void test_sample_mips(const kr_simd *lv, int nlv)
{
    enum { NCASE = 600, MAXW = 64 };
    static uint8_t mem[2 * MAXW * (MAXW * 4 + 12)];
    th_rng r = {0x3a11e7ull};
    uint64_t compared = 0, bad = 0;
    static const kiln_address modes[3] = {KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP,
                                          KILN_ADDRESS_MIRROR};
    for (int n = 0; n < NCASE; n++) {
        uint32_t w = 8u << th_below(&r, 4), h = 8u << th_below(&r, 4);
        if (th_below(&r, 8) == 0)
            w = 3 + (uint32_t)th_below(&r, 60);
        kres_subresource sub[8];
        memset(sub, 0, sizeof sub);
        uint32_t mips = 0;
        size_t off = 0;
        while (mips < 8) {
            uint32_t mw = w >> mips ? w >> mips : 1, mh = h >> mips ? h >> mips : 1;
            sub[mips].width = mw;
            sub[mips].height = mh;
            sub[mips].row_pitch = mw * 4 + 4 * (uint32_t)th_below(&r, 3);
            sub[mips].size = (size_t)sub[mips].row_pitch * mh;
            sub[mips].offset = off;
            off += sub[mips].size;
            mips++;
            if (mw == 1 && mh == 1)
                break;
        }
        for (size_t i = 0; i < off; i++)
            mem[i] = (uint8_t)th_next(&r);
        struct kiln_ps_textures tx;
        memset(&tx, 0, sizeof tx);
        kr_texture *t = &tx.tex[0];
        t->data = mem;
        t->subs = sub;
        t->format = th_below(&r, 2) ? KILN_FORMAT_R8G8B8A8_UNORM : KILN_FORMAT_B8G8R8A8_UNORM;
        t->res_mip_levels = mips;
        t->num_mips = mips;
        /* mostly CLAMP and WRAP (the levels the AVX2 kernel reads directly) */
        kiln_address au = modes[th_below(&r, 5) % 3 == 2 && th_below(&r, 2) ? 2 : th_below(&r, 2)];
        kiln_address av = modes[th_below(&r, 5) % 3 == 2 && th_below(&r, 2) ? 2 : th_below(&r, 2)];
        kd_sampler sm = {KILN_FILTER_LINEAR,
                         KILN_FILTER_LINEAR,
                         th_below(&r, 4) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT,
                         au,
                         av,
                         th_below(&r, 3) ? 0.0f : th_frand(&r, -1.0f, 1.0f),
                         0.0f,
                         1000.0f,
                         {0, 0, 0, 0},
                         KILN_COMPARE_DEFAULT,
                         0,
                         KILN_ADDRESS_CLAMP};
        tx.samp[0] = &sm;
        kiln_ps_args a;
        memset(&a, 0, sizeof a);
        a.mask = 0xffff;
        a.textures = &tx;
        _Alignas(32) float u[16], v[16];
        /* per quad: an origin and steps from magnified to 8 texels a pixel */
        for (int q = 0; q < 4; q++) {
            float u0 = th_below(&r, 4) ? th_frand(&r, 0.0f, 0.8f) : th_frand(&r, -1.5f, 2.5f);
            float v0 = th_below(&r, 4) ? th_frand(&r, 0.0f, 0.8f) : th_frand(&r, -1.5f, 2.5f);
            float su = th_frand(&r, 0.05f, 4.0f) / (float)w,
                  sv = th_frand(&r, 0.05f, 4.0f) / (float)h;
            float cu = th_frand(&r, -0.5f, 0.5f) * su, cv = th_frand(&r, -0.5f, 0.5f) * sv;
            static const int tl[4] = {0, 2, 8, 10};
            for (int j = 0; j < 4; j++) {
                int i = tl[q] + (j & 1) + (j >> 1) * 4, dx = j & 1, dy = j >> 1;
                u[i] = u0 + su * (float)dx + cu * (float)dy;
                v[i] = v0 + sv * (float)dy + cv * (float)dx;
            }
        }
        char what[96];
        snprintf(what, sizeof what, "mips case %d (%ux%u, %u mips, modes %d/%d)", n, w, h, mips,
                 (int)au, (int)av);
        compared += nlv >= 2;
        bad += sample_differs(lv, nlv, &a, u, v, bad < 3, what);
    }
    CHECK_EQ_INT(bad, 0);
    printf("kiln_ps_sample, mip chains, every vector level against sse2: %llu blocks compared, %llu differ\n",
           (unsigned long long)compared, (unsigned long long)bad);
}

/* ==== 2. selection and the block function, unit level ==== */

enum { UT_W = 8, UT_H = 8, UT_MIPS = 4, FB_W = 16, FB_H = 8, FB_PITCH = FB_W * 4 + 12 };

typedef struct unit {
    kd_state s;
    kr_drawx dx;
    struct kiln_ps_textures tx; /* dx.tex */
    kr_fb fb;
    kd_sampler samp;
    kres_subresource subs[UT_MIPS];
    uint8_t tex[4096];
    uint8_t rt[FB_PITCH * FB_H];
    uint8_t ds[FB_W * FB_H * 4];
} unit;

static unit U;

static void other_ps(kiln_ps_args *a) { (void)a; }

/* An eligible draw: kr_ps_texture into an RGBA8 target, no blending, write
 * mask 15, no depth/stencil, an 8x8 RGBA8 texture with `mips` levels over
 * U.tex (rows padded), LINEAR/LINEAR/LINEAR and CLAMP. */
static void unit_init(uint32_t mips, kiln_format tfmt, kiln_format rfmt, th_rng *r)
{
    memset(&U, 0, sizeof U);
    size_t off = 0;
    for (uint32_t m = 0; m < mips; m++) {
        kres_subresource *sub = &U.subs[m];
        sub->width = UT_W >> m ? UT_W >> m : 1;
        sub->height = UT_H >> m ? UT_H >> m : 1;
        sub->row_pitch = sub->width * 4 + 4 * (m + 1); /* padded rows */
        sub->size = (size_t)sub->row_pitch * sub->height;
        sub->offset = off;
        off += sub->size + 16;
    }
    for (size_t i = 0; i < sizeof U.tex; i++)
        U.tex[i] = (uint8_t)th_next(r);
    U.dx.tex = &U.tx;
    kr_texture *t = &U.tx.tex[0];
    t->data = U.tex;
    t->subs = U.subs;
    t->format = tfmt;
    t->res_mip_levels = mips;
    t->first_mip = 0;
    t->num_mips = mips;
    t->slice = 0;
    U.samp = (kd_sampler){KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                          KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP, 0.0f, 0.0f, 1000.0f,
                          {0.0f, 0.0f, 0.0f, 0.0f}, KILN_COMPARE_DEFAULT, 0, KILN_ADDRESS_CLAMP};
    U.tx.samp[0] = &U.samp;
    U.s.ps = kr_ps_texture;
    U.s.ps_varyings = 1;
    U.s.ps_outputs = 1;
    U.s.blend[0].enable = 0;
    U.s.blend[0].write_mask = 15u;
    U.s.depth_enable = 0;
    U.s.stencil_enable = 0;
    U.dx.s = &U.s;
    U.dx.nvary = 1;
    U.dx.out_stride = 8;
    U.fb.rt[0] = U.rt;
    U.fb.rt_pitch[0] = FB_PITCH;
    U.fb.rt_format[0] = rfmt;
    U.fb.nrt = 1;
    U.fb.ds = NULL;
    U.fb.ds_format = KILN_FORMAT_D24_UNORM_S8_UINT;
    U.fb.ds_pitch = FB_W * 4;
    U.fb.width = FB_W;
    U.fb.height = FB_H;
}

static int selects(void) { return kr_block_select(&U.dx, &U.fb) != NULL; }

#define SELECT_CASE(what, change, expect)                                                        \
    do {                                                                                         \
        unit_init(1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R8G8B8A8_UNORM, &r);                \
        change;                                                                                  \
        int got_ = selects();                                                                    \
        th_check(got_ == (expect), "kr_block_select: " what, __FILE__, __LINE__);                \
        if (got_ != (expect))                                                                    \
            fprintf(stderr, "    %s: got %s\n", what, got_ ? "the fused path" : "NULL");         \
    } while (0)

static void test_selection(void)
{
    th_rng r = {0x5e1ec7ull};
    SELECT_CASE("eligible draw", (void)0, 1);
    SELECT_CASE("BGRA8 texture into a BGRA8 target",
                (U.tx.tex[0].format = KILN_FORMAT_B8G8R8A8_UNORM,
                 U.fb.rt_format[0] = KILN_FORMAT_B8G8R8A8_UNORM),
                1);
    SELECT_CASE("RGBA8 texture into a BGRA8 target", U.fb.rt_format[0] = KILN_FORMAT_B8G8R8A8_UNORM, 1);
    SELECT_CASE("no sampler bound (the default: LINEAR, CLAMP)", U.tx.samp[0] = NULL, 1);
    SELECT_CASE("mip filter POINT", U.samp.mip_filter = KILN_FILTER_POINT, 1);
    SELECT_CASE("WRAP / MIRROR", (U.samp.address_u = KILN_ADDRESS_WRAP,
                                  U.samp.address_v = KILN_ADDRESS_MIRROR), 1);
    SELECT_CASE("lod bias and clamp", (U.samp.mip_lod_bias = 0.7f, U.samp.min_lod = 1.0f), 1);
    SELECT_CASE("mip chain", (U.tx.tex[0].num_mips = 4, U.tx.tex[0].res_mip_levels = 4), 1);

    SELECT_CASE("another pixel shader function", U.s.ps = other_ps, 0);
    SELECT_CASE("the general path's copy of kr_ps_texture", U.s.ps = ps_texture_general, 0);
    SELECT_CASE("ps_outputs 2", U.s.ps_outputs = 2, 0);
    SELECT_CASE("ps_outputs 0", U.s.ps_outputs = 0, 0);
    SELECT_CASE("no varyings interpolated", U.dx.nvary = 0, 0);
    SELECT_CASE("blend enabled", U.s.blend[0].enable = 1, 0);
    SELECT_CASE("write mask 7", U.s.blend[0].write_mask = 7u, 0);
    SELECT_CASE("write mask 0", U.s.blend[0].write_mask = 0u, 0);
    SELECT_CASE("depth test with a depth buffer bound", (U.s.depth_enable = 1, U.fb.ds = U.ds), 0);
    SELECT_CASE("depth test enabled, no depth buffer", U.s.depth_enable = 1, 1);
    SELECT_CASE("depth buffer bound, depth and stencil off", U.fb.ds = U.ds, 1);
    SELECT_CASE("stencil with a depth-stencil buffer bound", (U.s.stencil_enable = 1, U.fb.ds = U.ds), 0);
    SELECT_CASE("stencil enabled, no depth-stencil buffer", U.s.stencil_enable = 1, 1);
    SELECT_CASE("texture R32_FLOAT", U.tx.tex[0].format = KILN_FORMAT_R32_FLOAT, 0);
    SELECT_CASE("texture R8_UNORM", U.tx.tex[0].format = KILN_FORMAT_R8_UNORM, 0);
    SELECT_CASE("target R32G32B32A32_FLOAT", U.fb.rt_format[0] = KILN_FORMAT_R32G32B32A32_FLOAT, 0);
    SELECT_CASE("target R8_UNORM", U.fb.rt_format[0] = KILN_FORMAT_R8_UNORM, 0);
    SELECT_CASE("no render target 0", U.fb.rt[0] = NULL, 0);
    SELECT_CASE("no render targets", U.fb.nrt = 0, 0);
    SELECT_CASE("min filter POINT", U.samp.min_filter = KILN_FILTER_POINT, 0);
    SELECT_CASE("mag filter POINT", U.samp.mag_filter = KILN_FILTER_POINT, 0);
    SELECT_CASE("address u BORDER", U.samp.address_u = KILN_ADDRESS_BORDER, 0);
    SELECT_CASE("address v BORDER", U.samp.address_v = KILN_ADDRESS_BORDER, 0);
    SELECT_CASE("texture data NULL", U.tx.tex[0].data = NULL, 0);
    SELECT_CASE("texture layout NULL", U.tx.tex[0].subs = NULL, 0);
    SELECT_CASE("view of no mips", U.tx.tex[0].num_mips = 0, 0);
}

/* kr_shade_select: the texture effect's whole-block shading at the AVX2
 * level under any blend, depth and stencil state, any view and sampler;
 * not for other shaders, outputs, targets, or at other levels. */
static int shade_selects(void)
{
    kr_shade_fn f = kr_shade_select(&U.dx, &U.fb);
    return f == kr_fused_shade_avx2 || f == kr_fused_shade_add_avx2 ||
           f == kr_fused_shade_alpha_avx2;
}

/* ADD of (ONE, ONE) on both parts of target 0 */
static void blend_add_one(void)
{
    kd_blend_rt *b = &U.s.blend[0];
    b->enable = 1;
    b->src = b->dst = b->src_a = b->dst_a = KILN_BLEND_ONE;
    b->op = b->op_a = KILN_BLEND_OP_ADD;
}

#define SHADE_CASE(what, change, expect)                                                         \
    do {                                                                                         \
        unit_init(1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R8G8B8A8_UNORM, &r);                \
        U.dx.wide = 1;                                                                           \
        U.dx.early_z = 1;                                                                        \
        change;                                                                                  \
        int got_ = shade_selects();                                                              \
        th_check(got_ == (expect), "kr_shade_select: " what, __FILE__, __LINE__);                \
    } while (0)

static void test_shade_selection(void)
{
#if KR_EFFECTS_X86
    th_rng r = {0x5badeull};
    SHADE_CASE("eligible draw", (void)0, 1);
    SHADE_CASE("blend enabled", U.s.blend[0].enable = 1, 1);
    SHADE_CASE("write mask 7", U.s.blend[0].write_mask = 7u, 1);
    SHADE_CASE("depth test with a depth buffer bound", (U.s.depth_enable = 1, U.fb.ds = U.ds), 1);
    SHADE_CASE("stencil with a depth-stencil buffer bound", (U.s.stencil_enable = 1, U.fb.ds = U.ds), 1);
    SHADE_CASE("texture R32_FLOAT (kiln_ps_sample reads any view)", U.tx.tex[0].format = KILN_FORMAT_R32_FLOAT, 1);
    SHADE_CASE("min filter POINT", U.samp.min_filter = KILN_FILTER_POINT, 1);
    SHADE_CASE("BGRA8 target", U.fb.rt_format[0] = KILN_FORMAT_B8G8R8A8_UNORM, 1);
    SHADE_CASE("not the AVX2 level", U.dx.wide = 0, 0);
    SHADE_CASE("a shader that may discard (no early depth test)", U.dx.early_z = 0, 0);
    SHADE_CASE("the general path's copy of kr_ps_texture", U.s.ps = ps_texture_general, 0);
    SHADE_CASE("another pixel shader function", U.s.ps = other_ps, 0);
    SHADE_CASE("ps_outputs 2", U.s.ps_outputs = 2, 0);
    SHADE_CASE("no varyings interpolated", U.dx.nvary = 0, 0);
    SHADE_CASE("target R32G32B32A32_FLOAT", U.fb.rt_format[0] = KILN_FORMAT_R32G32B32A32_FLOAT, 0);
    SHADE_CASE("no render target 0", U.fb.rt[0] = NULL, 0);
    SHADE_CASE("no render targets", U.fb.nrt = 0, 0);
    /* The blends in registers need one prepared level: the unit's views
     * prepared as a draw prepares them (kr_textures_prepare), then
     * kr_output_select, whose write8 they fall back on. */
#define BLEND_CASE(what, mips, tfmt, change, want, expect)                                         \
    do {                                                                                           \
        unit_init(mips, tfmt, KILN_FORMAT_R8G8B8A8_UNORM, &r);                                     \
        U.dx.wide = 1;                                                                             \
        U.dx.early_z = 1;                                                                          \
        blend_add_one();                                                                           \
        change;                                                                                    \
        kr_textures_prepare(&U.tx);                                                                \
        kr_output_select(&U.dx, &U.fb);                                                            \
        int got_ = kr_shade_select(&U.dx, &U.fb) == (want);                                        \
        th_check(got_ == (expect), "kr_shade_select, blend in registers: " what, __FILE__,         \
                 __LINE__);                                                                        \
    } while (0)
    if (kr_effects_active_level() < KR_SIMD_AVX2) { /* nothing prepared */
        printf("kr_shade_select, blend in registers: no AVX2 level active, not run\n");
        return;
    }
    const kiln_format rgba = KILN_FORMAT_R8G8B8A8_UNORM, bgra = KILN_FORMAT_B8G8R8A8_UNORM;
    kd_blend_rt *b = &U.s.blend[0];
    BLEND_CASE("ONE, ONE on both parts", 1, rgba, (void)0, kr_fused_shade_add_avx2, 1);
    BLEND_CASE("ONE, ONE, BGRA8 target, write mask 5", 1, rgba,
               (U.fb.rt_format[0] = bgra, b->write_mask = 5u), kr_fused_shade_add_avx2, 1);
    BLEND_CASE("ONE, ONE, BGRA8 texture", 1, bgra, (void)0, kr_fused_shade_add_avx2, 1);
    BLEND_CASE(
        "SRC_ALPHA, INV_SRC_ALPHA on both parts", 1, bgra,
        (b->src = b->src_a = KILN_BLEND_SRC_ALPHA, b->dst = b->dst_a = KILN_BLEND_INV_SRC_ALPHA),
        kr_fused_shade_alpha_avx2, 1);
    BLEND_CASE(
        "SRC_ALPHA, INV_SRC_ALPHA: not the additive one", 1, rgba,
        (b->src = b->src_a = KILN_BLEND_SRC_ALPHA, b->dst = b->dst_a = KILN_BLEND_INV_SRC_ALPHA),
        kr_fused_shade_add_avx2, 0);
    BLEND_CASE("alpha part ONE, ZERO", 1, rgba, b->dst_a = KILN_BLEND_ZERO, kr_fused_shade_avx2, 1);
    BLEND_CASE("color op SUBTRACT", 1, rgba, b->op = KILN_BLEND_OP_SUBTRACT, kr_fused_shade_avx2,
               1);
    BLEND_CASE("write mask none", 1, rgba, b->write_mask = 0u, kr_fused_shade_avx2, 1);
    BLEND_CASE("a mip chain (no one prepared level)", 2, rgba, (void)0, kr_fused_shade_avx2, 1);
#undef BLEND_CASE
#endif
}

/* shade_block's varyings for a triangle block, then kiln_ps_sample (the
 * general path's sampler) and output_rgba8's conversion: the 16 pixels'
 * bytes in target order. */
static void oracle_block(const kr_prim *p, int x, int y, int bgra_target, uint8_t out[16][4])
{
    float fx[16], fy[16], w[16];
    _Alignas(16) float vary[4 * 16];
    _Alignas(16) float color[4 * 16];
    for (int i = 0; i < 16; i++) {
        fx[i] = (float)(x + (i & 3)) + 0.5f - p->ox;
        fy[i] = (float)(y + (i >> 2)) + 0.5f - p->oy;
    }
    const float q0 = p->q[0], q1 = p->q[1], q2 = p->q[2];
    if (q1 == 0.0f && q2 == 0.0f) {
        float w0 = 1.0f / q0;
        for (int i = 0; i < 16; i++)
            w[i] = w0;
    } else {
        for (int i = 0; i < 16; i++)
            w[i] = 1.0f / (q0 + q1 * fx[i] + q2 * fy[i]);
    }
    for (int k = 0; k < 4; k++) {
        const float a0 = p->attr[3 * k], a1 = p->attr[3 * k + 1], a2 = p->attr[3 * k + 2];
        for (int i = 0; i < 16; i++)
            vary[k * 16 + i] = (a0 + a1 * fx[i] + a2 * fy[i]) * w[i];
    }
    kiln_ps_args a;
    memset(&a, 0, sizeof a);
    a.x = x;
    a.y = y;
    a.mask = 0xffff;
    a.varyings = vary;
    a.color = color;
    a.textures = p->dx->tex;
    kiln_ps_sample(&a, 0, 0, vary, vary + 16, color);
    for (int i = 0; i < 16; i++) {
        uint8_t rgba[4];
        for (int c = 0; c < 4; c++)
            rgba[c] = to_unorm8(color[c * 16 + i]);
        out[i][0] = bgra_target ? rgba[2] : rgba[0];
        out[i][1] = rgba[1];
        out[i][2] = bgra_target ? rgba[0] : rgba[2];
        out[i][3] = rgba[3];
    }
}

/* A random triangle of the unit's draw (its plane equations only, no
 * edges: the block functions read none), perspective or affine, its
 * varyings' planes in attr. */
static void unit_prim(th_rng *r, float attr[12], kr_prim *p)
{
    memset(p, 0, sizeof *p);
    p->kind = KR_TRI;
    p->dx = &U.dx;
    p->ox = th_frand(r, 0.0f, 16.0f);
    p->oy = th_frand(r, 0.0f, 8.0f);
    int affine = th_below(r, 3) == 0;
    p->q[0] = th_frand(r, 0.5f, 2.0f);
    p->q[1] = affine ? 0.0f : th_frand(r, -0.03f, 0.03f);
    p->q[2] = affine ? 0.0f : th_frand(r, -0.03f, 0.03f);
    /* magnification mostly, minification sometimes */
    float scale = th_below(r, 3) == 0 ? 0.4f : 0.08f;
    for (int k = 0; k < 12; k += 3) {
        attr[k] = th_frand(r, -1.5f, 2.5f);
        attr[k + 1] = th_frand(r, -scale, scale);
        attr[k + 2] = th_frand(r, -scale, scale);
    }
    p->attr = attr;
}

/* The block function against the oracle on random triangles, blocks and
 * masks, for every texture/target format pair, address mode pair and mip
 * count. Returns false only when a mip chain needs the general path
 * (then nothing may be written). */
static void test_block_fn(kr_simd level)
{
    static const kiln_address modes[][2] = {
        {KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP},  {KILN_ADDRESS_WRAP, KILN_ADDRESS_WRAP},
        {KILN_ADDRESS_WRAP, KILN_ADDRESS_CLAMP},   {KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP},
        {KILN_ADDRESS_MIRROR, KILN_ADDRESS_MIRROR}, {KILN_ADDRESS_MIRROR, KILN_ADDRESS_CLAMP},
    };
    static const kiln_format fmts[2] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM};
    th_rng r = {0xb10cf00dull + (uint64_t)level};
    uint32_t calls = 0, written = 0, declined = 0, mismatches = 0;
    for (size_t md = 0; md < sizeof modes / sizeof modes[0]; md++)
        for (int tf = 0; tf < 2; tf++)
            for (int rf = 0; rf < 2; rf++)
                for (uint32_t mips = 1; mips <= UT_MIPS; mips += UT_MIPS - 1)
                    for (int trial = 0; trial < 120; trial++) {
                        unit_init(mips, fmts[tf], fmts[rf], &r);
                        U.samp.address_u = modes[md][0];
                        U.samp.address_v = modes[md][1];
                        U.samp.mip_filter = th_below(&r, 2) ? KILN_FILTER_LINEAR : KILN_FILTER_POINT;
                        kr_block_fn fn = kr_block_select(&U.dx, &U.fb);
                        CHECK(fn != NULL);
                        if (!fn)
                            return;
                        U.dx.block = fn;
                        float attr[12];
                        kr_prim p;
                        unit_prim(&r, attr, &p);
                        int bx = 4 * (int)th_below(&r, FB_W / 4), by = 4 * (int)th_below(&r, FB_H / 4);
                        uint32_t mask = th_below(&r, 4) == 0 ? 0xffffu : (uint32_t)(th_next(&r) & 0xffffu);
                        if (!mask)
                            mask = 1u << th_below(&r, 16);
                        uint8_t before[sizeof U.rt];
                        for (size_t i = 0; i < sizeof U.rt; i++)
                            U.rt[i] = before[i] = (uint8_t)(0xA5u ^ i);
                        uint8_t want[16][4];
                        oracle_block(&p, bx, by, is_bgra(fmts[rf]), want);
                        bool ok = fn(&p, &U.fb, bx, by, mask);
                        calls++;
                        int bad = 0;
                        if (!ok) {
                            declined++;
                            bad = memcmp(U.rt, before, sizeof U.rt) != 0;
                            if (mips == 1 && !bad) {
                                bad = 1; /* one level is always the fused path's */
                                fprintf(stderr, "    block fn declined a one-level texture\n");
                            }
                        } else {
                            written++;
                            for (size_t i = 0; i < sizeof U.rt && !bad; i++) {
                                int row = (int)(i / FB_PITCH), col = (int)(i % FB_PITCH) / 4;
                                int in = (i % FB_PITCH) < FB_W * 4 && col >= bx && col < bx + 4 &&
                                         row >= by && row < by + 4;
                                int px = in ? (row - by) * 4 + (col - bx) : 0;
                                uint8_t expect = in && (mask >> px & 1) ? want[px][i % 4] : before[i];
                                if (U.rt[i] != expect) {
                                    bad = 1;
                                    fprintf(stderr,
                                            "    pixel (%d, %d) byte %zu: fused %u, expected %u (%s)\n",
                                            col, row, i % 4, U.rt[i], expect,
                                            in && (mask >> px & 1) ? "covered" : "must be untouched");
                                }
                            }
                        }
                        if (bad) {
                            mismatches++;
                            if (mismatches <= 5)
                                fprintf(stderr,
                                        "    block fn mismatch [%s]: tex %s, target %s, %s/%s, mips %u, "
                                        "mip %s, block (%d, %d), mask %04x, q (%.9g %.9g %.9g), "
                                        "o (%.9g %.9g)\n",
                                        level_name(level), fmt_name(fmts[tf]), fmt_name(fmts[rf]),
                                        addr_name(modes[md][0]), addr_name(modes[md][1]), mips,
                                        filt_name(U.samp.mip_filter), bx, by, mask, p.q[0], p.q[1],
                                        p.q[2], p.ox, p.oy);
                        }
                    }
    CHECK_EQ_INT(mismatches, 0);
    /* most calls take the fused path; mip chains sometimes decline */
    CHECK(written > calls / 2);
    printf("block fn [%s]: %u calls, %u written by the fused path, %u declined (mip chains)\n",
           level_name(level), calls, written, declined);
}

/* The span kernels (kr_span_select) against the function they stand for,
 * block by block: kr_direct_select's choice called on each block of the
 * rect with the rect's mask (raster_tri's loop) writes exactly the bytes
 * the span writes over the whole target, for blending off (the block
 * path), ADD of (ONE, ONE) and of (SRC_ALPHA, INV_SRC_ALPHA) with random
 * write masks, RGBA8 / BGRA8 texture and target, CLAMP / WRAP / MIRROR
 * (WRAP seams: the block path's SSE2 fallback), affine and perspective
 * primitives, and rects with partial blocks on every side. Selection:
 * the span only where kr_direct_select picks one of those three, never
 * with a depth or stencil test on a bound buffer (the test first, then
 * the shading: not the shading itself). AVX2 level only (the
 * spans are AVX2 kernels). */
/* The AVX-512 ADD kernel's float way: texels (3, 3), (4, 3), (3, 4), (4,
 * 4) of an 8 x 8 texture all channels 1, 65, 65, 128, sampled at u = v =
 * 897 / 2048 (fractions 1/256 past texel 3 on both axes), give every
 * channel M = 65025 + 255 * 130 + 128 = 98303 = 65536 * 2 - 32769: in the
 * band, where the float formula gives 130 for d = 128 and the bytes' sum
 * 129. Over a target holding every byte d, the kernel must write what the
 * AVX2 kernel writes (its band rows the float way), and those bytes must
 * differ from min(255, 1 + d) somewhere, so a kernel that skipped the
 * float way would be caught. */
static void test_add_band_blocks(kr_simd level)
{
#if KR_EFFECTS_X86
    if (level != KR_SIMD_AVX512)
        return;
    th_rng r = {0xba4dull};
    unit_init(1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_R8G8B8A8_UNORM, &r);
    U.dx.wide = 1;
    U.dx.wide16 = 1;
    U.dx.early_z = 1;
    blend_add_one();
    uint8_t *row3 = U.tex + U.subs[0].offset + 3 * (size_t)U.subs[0].row_pitch;
    uint8_t *row4 = row3 + U.subs[0].row_pitch;
    memset(row3 + 3 * 4, 1, 4);
    memset(row3 + 4 * 4, 65, 4);
    memset(row4 + 3 * 4, 65, 4);
    memset(row4 + 4 * 4, 128, 4);
    kr_textures_prepare(&U.tx);
    kr_output_select(&U.dx, &U.fb);
    U.dx.shade = kr_shade_select(&U.dx, &U.fb);
    CHECK(U.dx.shade == kr_fused_shade_add_avx512);
    float attr[12] = {897.0f / 2048.0f, 0.0f, 0.0f, 897.0f / 2048.0f, 0.0f, 0.0f};
    kr_prim p;
    memset(&p, 0, sizeof p);
    p.kind = KR_TRI;
    p.dx = &U.dx;
    p.q[0] = 1.0f;
    p.attr = attr;
    uint8_t before[sizeof U.rt], wide[sizeof U.rt];
    for (size_t i = 0; i < sizeof U.rt; i++)
        U.rt[i] = before[i] = (uint8_t)(i * 7u);
    for (int by = 0; by < FB_H; by += 4)
        for (int bx = 0; bx < FB_W; bx += 4)
            CHECK(kr_fused_shade_add_avx512(&p, &U.fb, bx, by, 0xffffu));
    memcpy(wide, U.rt, sizeof U.rt);
    memcpy(U.rt, before, sizeof U.rt);
    for (int by = 0; by < FB_H; by += 4)
        for (int bx = 0; bx < FB_W; bx += 4)
            CHECK(kr_fused_shade_add_avx2(&p, &U.fb, bx, by, 0xffffu));
    uint32_t differ = 0, integer_way = 0;
    for (int y = 0; y < FB_H; y++)
        for (int i = 0; i < FB_W * 4; i++) {
            size_t at = (size_t)y * FB_PITCH + (size_t)i;
            differ += wide[at] != U.rt[at];
            integer_way += wide[at] != (before[at] == 255 ? 255 : before[at] + 1);
        }
    printf("ONE + ONE in the band [%s]: %d bytes, %u differ from the AVX2 kernel's, %u from the "
           "integer way's\n",
           level_name(level), FB_W * FB_H * 4, differ, integer_way);
    CHECK_EQ_INT(differ, 0);
    CHECK(integer_way > 0);
#else
    (void)level;
#endif
}

static void test_span_fn(kr_simd level)
{
#if KR_EFFECTS_X86
    if (level != KR_SIMD_AVX2 && level != KR_SIMD_AVX512)
        return;
    /* AVX-512: the blends' block-per-vector kernels and their spans (the
     * blend-off block has no span there), each block also against the
     * AVX2 kernel */
    const int w16 = level == KR_SIMD_AVX512;
    uint32_t cross = 0;
    static const kiln_address modes[3] = {KILN_ADDRESS_CLAMP, KILN_ADDRESS_WRAP,
                                          KILN_ADDRESS_MIRROR};
    static const kiln_format fmts[2] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM};
    th_rng r = {0x5ba7f00dull};
    uint32_t spans[3] = {0}, mismatches = 0, changed = 0, pixels = 0, seams = 0;
    for (int trial = 0; trial < 1200; trial++) {
        int kind = (int)th_below(&r, 3); /* 0 blending off, 1 ONE/ONE, 2 alpha */
        kiln_format tf = fmts[th_below(&r, 2)], rf = fmts[th_below(&r, 2)];
        unit_init(1, tf, rf, &r);
        U.dx.wide = 1;
        U.dx.wide16 = w16;
        U.dx.early_z = 1;
        U.samp.address_u = modes[th_below(&r, 3)];
        U.samp.address_v = modes[th_below(&r, 3)];
        kd_blend_rt *b = &U.s.blend[0];
        if (kind) {
            blend_add_one();
            if (kind == 2) {
                b->src = b->src_a = KILN_BLEND_SRC_ALPHA;
                b->dst = b->dst_a = KILN_BLEND_INV_SRC_ALPHA;
            }
            b->write_mask = th_below(&r, 2) ? 15u : (uint32_t)th_below(&r, 16);
        }
        kr_textures_prepare(&U.tx);
        kr_output_select(&U.dx, &U.fb);
        U.dx.block = kr_block_select(&U.dx, &U.fb);
        U.dx.shade = kr_shade_select(&U.dx, &U.fb);
        U.dx.direct = kr_direct_select(&U.dx, &U.fb);
        U.dx.span = kr_span_select(&U.dx);
        /* the span of the kernel the draw settles blocks with; a view
         * that is not one prepared level (MIRROR, say) has none */
        kr_block_fn fused = kind == 0 ? (w16 ? kr_fused_block_avx512 : kr_fused_block_avx2)
                            : kind == 1
                                ? (w16 ? kr_fused_shade_add_avx512 : kr_fused_shade_add_avx2)
                                : (w16 ? kr_fused_shade_alpha_avx512 : kr_fused_shade_alpha_avx2);
        kr_span_fn want_span = kind == 0 ? (w16 ? NULL : kr_fused_span_block_avx2)
                               : kind == 1
                                   ? (w16 ? kr_fused_span_add_avx512 : kr_fused_span_add_avx2)
                                   : (w16 ? kr_fused_span_alpha_avx512 : kr_fused_span_alpha_avx2);
        /* (write mask 0: the general shading, which writes nothing) */
        int clamped =
            U.samp.address_u == KILN_ADDRESS_CLAMP && U.samp.address_v == KILN_ADDRESS_CLAMP;
        if (U.dx.direct != (U.dx.block ? U.dx.block : U.dx.shade) ||
            U.dx.span != (U.dx.direct == fused ? want_span : NULL) ||
            (clamped && b->write_mask && U.dx.direct != fused)) {
            mismatches++;
            fprintf(stderr,
                    "    span selection, kind %d, %s/%s, write mask %u: direct %p, span %p\n", kind,
                    addr_name(U.samp.address_u), addr_name(U.samp.address_v), b->write_mask,
                    (void *)(uintptr_t)U.dx.direct, (void *)(uintptr_t)U.dx.span);
            continue;
        }
        if (!U.dx.span)
            continue;
        spans[kind]++;
        float attr[12];
        kr_prim p;
        unit_prim(&r, attr, &p);
        int x0 = (int)th_below(&r, FB_W), y0 = (int)th_below(&r, FB_H);
        int x1 = x0 + 1 + (int)th_below(&r, (uint64_t)(FB_W - x0));
        int y1 = y0 + 1 + (int)th_below(&r, (uint64_t)(FB_H - y0));
        uint8_t before[sizeof U.rt], by_span[sizeof U.rt];
        for (size_t i = 0; i < sizeof U.rt; i++)
            U.rt[i] = before[i] = (uint8_t)th_next(&r);
        CHECK(U.dx.span(&p, &U.fb, x0, y0, x1, y1));
        memcpy(by_span, U.rt, sizeof U.rt);
        memcpy(U.rt, before, sizeof U.rt);
        for (int by = y0 & ~3; by < y1; by += 4)
            for (int bx = x0 & ~3; bx < x1; bx += 4)
                CHECK(U.dx.direct(&p, &U.fb, bx, by, kr_rect_mask(bx, by, x0, y0, x1, y1)));
        if (w16 && kind) { /* the AVX2 kernel, block by block, the same bytes */
            uint8_t by_blocks[sizeof U.rt];
            memcpy(by_blocks, U.rt, sizeof U.rt);
            memcpy(U.rt, before, sizeof U.rt);
            kr_block_fn avx2 = kind == 1 ? kr_fused_shade_add_avx2 : kr_fused_shade_alpha_avx2;
            for (int by = y0 & ~3; by < y1; by += 4)
                for (int bx = x0 & ~3; bx < x1; bx += 4)
                    CHECK(avx2(&p, &U.fb, bx, by, kr_rect_mask(bx, by, x0, y0, x1, y1)));
            cross += memcmp(by_blocks, U.rt, sizeof U.rt) != 0;
            memcpy(U.rt, by_blocks, sizeof U.rt); /* the span against its own blocks below */
        }
        seams += U.samp.address_u == KILN_ADDRESS_WRAP || U.samp.address_v == KILN_ADDRESS_WRAP;
        pixels += (uint32_t)((x1 - x0) * (y1 - y0));
        for (size_t i = 0; i < sizeof U.rt; i += 4)
            changed += memcmp(by_span + i, before + i, 4) != 0;
        if (memcmp(by_span, U.rt, sizeof U.rt) != 0) {
            mismatches++;
            size_t i = 0;
            while (by_span[i] == U.rt[i])
                i++;
            if (mismatches <= 5)
                fprintf(stderr,
                        "    span mismatch, kind %d, tex %s, target %s, %s/%s, write mask %u, rect "
                        "[%d, %d) x [%d, %d), q (%.9g %.9g %.9g): pixel (%zu, %zu) byte %zu: span "
                        "%u, blocks %u\n",
                        kind, fmt_name(tf), fmt_name(rf), addr_name(U.samp.address_u),
                        addr_name(U.samp.address_v), b->write_mask, x0, x1, y0, y1, p.q[0], p.q[1],
                        p.q[2], i % FB_PITCH / 4, i / FB_PITCH, i % 4, by_span[i], U.rt[i]);
        }
    }
    /* selection: a depth or stencil test on a bound buffer comes first */
    unit_init(1, fmts[0], fmts[0], &r);
    U.dx.wide = 1;
    U.dx.early_z = 1;
    blend_add_one();
    U.s.depth_enable = 1;
    U.fb.ds = U.ds;
    kr_textures_prepare(&U.tx);
    kr_output_select(&U.dx, &U.fb);
    U.dx.shade = kr_shade_select(&U.dx, &U.fb);
    CHECK(U.dx.shade == kr_fused_shade_add_avx2);
    U.dx.direct = kr_direct_select(&U.dx, &U.fb);
    CHECK(U.dx.direct != NULL && U.dx.direct != U.dx.shade && kr_span_select(&U.dx) == NULL);
    /* at the AVX-512 level the blends in registers are the block-per-
     * vector kernels, with their spans; the blend-off block is the AVX-512
     * one, which has none */
    U.s.depth_enable = 0;
    U.dx.wide16 = 1;
    U.dx.shade = kr_shade_select(&U.dx, &U.fb);
    U.dx.direct = kr_direct_select(&U.dx, &U.fb);
    CHECK(U.dx.direct == kr_fused_shade_add_avx512 &&
          kr_span_select(&U.dx) == kr_fused_span_add_avx512);
    U.s.blend[0].enable = 0;
    kr_output_select(&U.dx, &U.fb);
    U.dx.block = kr_block_select(&U.dx, &U.fb);
    U.dx.direct = kr_direct_select(&U.dx, &U.fb);
    CHECK(U.dx.block == kr_fused_block_avx512 && U.dx.direct == U.dx.block &&
          kr_span_select(&U.dx) == NULL);
    U.dx.block = NULL;
    U.dx.wide16 = 0;
    U.dx.early_z = 0; /* a shader that may discard: no early test, no direct */
    U.s.depth_enable = 0;
    CHECK(kr_direct_select(&U.dx, &U.fb) == NULL);
    printf("span fn [%s]: %u / %u / %u spans (blending off / ONE, ONE / alpha), %u with WRAP, "
           "%u pixels, %u changed, %u mismatches, %u against the AVX2 kernels\n",
           level_name(level), spans[0], spans[1], spans[2], seams, pixels, changed, mismatches,
           cross);
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(cross, 0);
    CHECK((w16 || spans[0] > 100) && spans[1] > 100 && spans[2] > 100);
    CHECK(changed > pixels / 2);
#else
    (void)level;
#endif
}

/* ==== 3. equivalence through the public API ==== */

enum { MAX_TRI = 6, VSTRIDE = 32 };

typedef struct fcase {
    uint64_t seed;
    kr_simd level;
    uint32_t tw, th, tmips, tslices;
    kiln_format tfmt;
    uint32_t view_mip, view_mips, view_slice; /* view_mips 0: the rest */
    kiln_sampler_desc sd;
    uint32_t W, H;
    kiln_format rfmt;
    float clear[4];
    uint32_t ntri;
    float v[MAX_TRI * 3][8]; /* clip position, uv, 0, 1 */
    /* test_shade_states: target 0's blend, and a D32_FLOAT depth buffer
     * cleared to zclear under dd (zeroed: blending off, no depth) */
    kiln_blend_target bt;
    float bfactor[4];
    int depth;
    kiln_depth_stencil_desc dd;
    float zclear;
} fcase;

static uint32_t full_chain(uint32_t w, uint32_t h)
{
    uint32_t m = 1, s = w > h ? w : h;
    while (s > 1) {
        s >>= 1;
        m++;
    }
    return m;
}

static void rand_vertex(th_rng *r, float cx, float cy, float spread, float *v)
{
    float w = th_frand(r, 0.5f, 3.0f);
    float x = cx + th_frand(r, -spread, spread), y = cy + th_frand(r, -spread, spread);
    v[0] = x * w;
    v[1] = y * w;
    v[2] = th_frand(r, 0.05f, 0.95f) * w;
    v[3] = w;
    v[4] = th_frand(r, -2.5f, 3.5f);
    v[5] = th_frand(r, -2.5f, 3.5f);
    v[6] = 0.0f;
    v[7] = 1.0f;
}

static void make_case(uint64_t seed, kr_simd level, fcase *c)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 8, 13, 16, 31, 32, 64, 100};
    /* WRAP and CLAMP twice as often as MIRROR: they have the direct reads */
    static const kiln_address modes[] = {KILN_ADDRESS_WRAP, KILN_ADDRESS_CLAMP, KILN_ADDRESS_MIRROR,
                                         KILN_ADDRESS_WRAP, KILN_ADDRESS_CLAMP};
    static const float biases[] = {0.0f, -1.0f, 0.7f};
    static const float lods[] = {0.0f, 0.5f, 1.0f, 2.0f}, spans[] = {0.0f, 0.5f, 3.0f, 100.0f};
    memset(c, 0, sizeof *c);
    c->seed = seed;
    c->level = level;
    th_rng r = {(seed + 1) * 0x9E3779B97F4A7C15ull};
    th_next(&r);
    c->tw = sizes[th_below(&r, 12)];
    c->th = sizes[th_below(&r, 12)];
    c->tfmt = th_below(&r, 2) ? KILN_FORMAT_R8G8B8A8_UNORM : KILN_FORMAT_B8G8R8A8_UNORM;
    uint32_t full = full_chain(c->tw, c->th), k = th_below(&r, 20);
    c->tmips = k < 10 ? 1 : k < 16 ? full : 1 + th_below(&r, full);
    c->tslices = th_below(&r, 5) == 0 ? 2 : 1;
    /* the view: usually the whole texture, sometimes a mip or slice range */
    if (c->tmips > 1 && th_below(&r, 4) == 0) {
        c->view_mip = th_below(&r, c->tmips);
        c->view_mips = th_below(&r, 2) ? 1 : 0;
    }
    c->view_slice = th_below(&r, c->tslices);

    kiln_sampler_desc *s = &c->sd;
    s->min_filter = th_below(&r, 8) == 0 ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    s->mag_filter = th_below(&r, 8) == 0 ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    s->mip_filter = th_below(&r, 2) ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    s->address_u = th_below(&r, 8) == 0 ? KILN_ADDRESS_BORDER : modes[th_below(&r, 5)];
    s->address_v = th_below(&r, 8) == 0 ? KILN_ADDRESS_BORDER : modes[th_below(&r, 5)];
    s->mip_lod_bias = biases[th_below(&r, 3)];
    if (th_below(&r, 4) == 0) {
        s->lod_clamp_enable = 1;
        s->min_lod = lods[th_below(&r, 4)];
        s->max_lod = s->min_lod + spans[th_below(&r, 4)];
    }
    for (int i = 0; i < 4; i++)
        s->border_color[i] = th_frand(&r, 0.0f, 1.0f);

    c->W = 40 + th_below(&r, 31);
    c->H = 30 + th_below(&r, 21);
    c->rfmt = th_below(&r, 2) ? KILN_FORMAT_R8G8B8A8_UNORM : KILN_FORMAT_B8G8R8A8_UNORM;
    for (int i = 0; i < 4; i++)
        c->clear[i] = th_frand(&r, 0.0f, 1.0f);

    c->ntri = 1 + th_below(&r, MAX_TRI);
    for (uint32_t t = 0; t < c->ntri; t++) {
        float cx = th_frand(&r, -0.6f, 0.6f), cy = th_frand(&r, -0.6f, 0.6f);
        uint32_t kind = th_below(&r, 8);
        float spread = kind == 0 ? 0.06f : kind < 3 ? 0.5f : 1.8f; /* tiny, medium, large */
        for (int j = 0; j < 3; j++)
            rand_vertex(&r, cx, cy, spread, c->v[3 * t + j]);
        if (th_below(&r, 6) == 0) { /* a sliver: the third vertex near the first edge */
            float f = th_frand(&r, 0.1f, 0.9f),
                  d = th_frand(&r, 0.002f, 0.02f) * (th_below(&r, 2) ? 1 : -1);
            float *a = c->v[3 * t], *b = c->v[3 * t + 1], *o = c->v[3 * t + 2];
            for (int e = 0; e < 8; e++)
                o[e] = a[e] + (b[e] - a[e]) * f;
            o[0] += d * o[3];
            o[1] -= 0.5f * d * o[3];
        }
    }
}

static void print_case(const fcase *c)
{
    const kiln_sampler_desc *s = &c->sd;
    fprintf(stderr,
            "    case seed %llu [%s]: texture %ux%u %s, %u mips, %u slices; view mip %u (+%u, 0: rest), "
            "slice %u\n"
            "    sampler min %s mag %s mip %s, address %s/%s, bias %g, lod clamp %u [%g, %g]\n"
            "    target %ux%u %s, clear (%.9g %.9g %.9g %.9g), %u triangles\n",
            (unsigned long long)c->seed, level_name(c->level), c->tw, c->th, fmt_name(c->tfmt),
            c->tmips, c->tslices, c->view_mip, c->view_mips, c->view_slice,
            filt_name(s->min_filter), filt_name(s->mag_filter), filt_name(s->mip_filter),
            addr_name(s->address_u), addr_name(s->address_v), (double)s->mip_lod_bias,
            s->lod_clamp_enable, (double)s->min_lod, (double)s->max_lod, c->W, c->H,
            fmt_name(c->rfmt), (double)c->clear[0], (double)c->clear[1], (double)c->clear[2],
            (double)c->clear[3], c->ntri);
    for (uint32_t i = 0; i < c->ntri * 3; i++)
        fprintf(stderr, "      v%u: pos (%.9g %.9g %.9g %.9g) uv (%.9g %.9g)\n", i, (double)c->v[i][0],
                (double)c->v[i][1], (double)c->v[i][2], (double)c->v[i][3], (double)c->v[i][4],
                (double)c->v[i][5]);
}

typedef struct fpipe {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_vertex_shader vs;
    kiln_input_layout il;
    kiln_rasterizer_state rs;
    kiln_pixel_shader fused, general;
} fpipe;

typedef struct stats {
    uint32_t cases, eligible, avx2_direct, failed;
    uint64_t pixels, changed;
    uint8_t seen[1u << 15]; /* colors drawn, 5 bits per channel */
    uint32_t distinct;
} stats;

/* Would kr_block_select pick the fused path, and would AVX2 read the
 * view's only level directly (CLAMP, or WRAP on a power-of-two axis, both
 * axes at least 2 texels)? For the statistics only. */
static void classify(const fcase *c, stats *st)
{
    const kiln_sampler_desc *s = &c->sd;
    int elig = s->min_filter != KILN_FILTER_POINT && s->mag_filter != KILN_FILTER_POINT &&
               s->address_u != KILN_ADDRESS_BORDER && s->address_v != KILN_ADDRESS_BORDER;
    st->eligible += elig;
    uint32_t nl = c->view_mips ? c->view_mips : c->tmips - c->view_mip;
    uint32_t w = c->tw >> c->view_mip ? c->tw >> c->view_mip : 1;
    uint32_t h = c->th >> c->view_mip ? c->th >> c->view_mip : 1;
    int okx = s->address_u == KILN_ADDRESS_CLAMP || (s->address_u == KILN_ADDRESS_WRAP && !(w & (w - 1)));
    int oky = s->address_v == KILN_ADDRESS_CLAMP || (s->address_v == KILN_ADDRESS_WRAP && !(h & (h - 1)));
    st->avx2_direct += elig && c->level >= KR_SIMD_AVX2 && nl == 1 && okx && oky && w >= 2 && h >= 2;
}

/* Renders case c twice (fused, general) and compares every byte. */
static void run_case(const fpipe *pp, const fcase *c, stats *st)
{
    kiln_device *dev = pp->dev;
    kiln_context *ctx = pp->ctx;
    th_rng r = {(c->seed + 1) * 0xD1B54A32D192ED03ull};
    th_next(&r);

    /* the texture, random bytes in every subresource */
    uint32_t nsub = c->tmips * c->tslices;
    kiln_subresource_data init[64] = {{0}};
    uint8_t *mem[64];
    for (uint32_t sl = 0; sl < c->tslices; sl++)
        for (uint32_t m = 0; m < c->tmips; m++) {
            uint32_t i = m + sl * c->tmips;
            uint32_t w = c->tw >> m ? c->tw >> m : 1, h = c->th >> m ? c->th >> m : 1;
            mem[i] = malloc((size_t)w * h * 4);
            for (size_t b = 0; b < (size_t)w * h * 4; b++)
                mem[i][b] = (uint8_t)(th_next(&r) >> 56);
            init[i] = (kiln_subresource_data){mem[i], 0};
        }
    kiln_texture2d_desc td = {c->tw, c->th, c->tmips, c->tslices, c->tfmt, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture tex = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &tex), KILN_OK);
    for (uint32_t i = 0; i < nsub; i++)
        free(mem[i]);
    kiln_srv_desc vd = {c->tfmt, c->view_mip, c->view_mips, c->view_slice, 1, 0};
    kiln_srv srv = {0};
    CHECK_RESULT(kiln_create_srv(dev, tex, &vd, &srv), KILN_OK);
    kiln_sampler samp = {0};
    CHECK_RESULT(kiln_create_sampler(dev, &c->sd, &samp), KILN_OK);

    ru_tex rt[2] = {ru_rt(dev, c->W, c->H, c->rfmt), ru_rt(dev, c->W, c->H, c->rfmt)};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, c->v, c->ntri * 3 * VSTRIDE);
    uint32_t stride = VSTRIDE, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, pp->il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, pp->vs), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, pp->rs), KILN_OK);
    ru_set_viewport(ctx, 0.0f, 0.0f, (float)c->W, (float)c->H, 0.0f, 1.0f);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &samp), KILN_OK);
    kiln_blend_state bs = {0};
    kiln_depth_stencil_state dss = {0};
    ru_tex zb[2];
    memset(zb, 0, sizeof zb);
    if (c->bt.enable || c->bt.write_mask) {
        kiln_blend_desc bd;
        memset(&bd, 0, sizeof bd);
        bd.rt[0] = c->bt;
        bs = ru_bs(dev, &bd);
    }
    CHECK_RESULT(kiln_om_set_blend_state(ctx, bs, c->bfactor), KILN_OK);
    if (c->depth) {
        dss = ru_dss(dev, c->dd);
        for (int k = 0; k < 2; k++)
            zb[k] = ru_ds(dev, c->W, c->H, KILN_FORMAT_D32_FLOAT);
    }
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, dss, 0), KILN_OK);
    for (int k = 0; k < 2; k++) {
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt[k].rtv, zb[k].dsv), KILN_OK);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt[k].rtv, c->clear), KILN_OK);
        if (c->depth)
            CHECK_RESULT(kiln_clear_dsv(ctx, zb[k].dsv, KILN_CLEAR_DEPTH, c->zclear, 0), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, k == 0 ? pp->fused : pp->general), KILN_OK);
        CHECK_RESULT(kiln_draw(ctx, c->ntri * 3, 0), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    CHECK_RESULT(kiln_om_set_blend_state(ctx, (kiln_blend_state){0}, NULL), KILN_OK);
    CHECK_RESULT(kiln_om_set_depth_stencil_state(ctx, (kiln_depth_stencil_state){0}, 0), KILN_OK);
    if (c->depth) {
        ru_free_tex(dev, &zb[0]);
        ru_free_tex(dev, &zb[1]);
        kiln_destroy_depth_stencil_state(dev, dss);
    }
    if (c->bt.enable || c->bt.write_mask)
        kiln_destroy_blend_state(dev, bs);
    kiln_destroy_buffer(dev, vb);

    size_t n = (size_t)c->W * c->H * 4;
    uint8_t *img[2] = {calloc(n, 1), calloc(n, 1)};
    ru_read(dev, rt[0].tex, 0, img[0]);
    ru_read(dev, rt[1].tex, 0, img[1]);

    st->cases++;
    classify(c, st);
    if (memcmp(img[0], img[1], n) != 0) {
        st->failed++;
        CHECK(!"fused and general images differ");
        if (st->failed <= 5) {
            print_case(c);
            uint32_t diffs = 0;
            for (size_t i = 0; i < n; i += 4)
                diffs += memcmp(img[0] + i, img[1] + i, 4) != 0;
            for (size_t i = 0; i < n; i += 4)
                if (memcmp(img[0] + i, img[1] + i, 4) != 0) {
                    const uint8_t *a = img[0] + i, *b = img[1] + i;
                    fprintf(stderr,
                            "    %u pixels differ; first (%zu, %zu): fused %u %u %u %u, general %u %u "
                            "%u %u (target byte order)\n",
                            diffs, (i / 4) % c->W, (i / 4) / c->W, a[0], a[1], a[2], a[3], b[0], b[1],
                            b[2], b[3]);
                    break;
                }
        }
    }
    /* non-triviality: pixels that are not the clear color */
    uint8_t cl[4];
    for (int ch = 0; ch < 4; ch++)
        cl[ch] = to_unorm8(c->clear[ch]);
    if (is_bgra(c->rfmt)) {
        uint8_t t = cl[0];
        cl[0] = cl[2];
        cl[2] = t;
    }
    for (size_t i = 0; i < n; i += 4) {
        if (memcmp(img[0] + i, cl, 4) == 0)
            continue;
        st->changed++;
        const uint8_t *p = img[0] + i;
        uint32_t key = (uint32_t)(p[0] >> 3) | (uint32_t)(p[1] >> 3) << 5 | (uint32_t)(p[2] >> 3) << 10;
        st->distinct += !st->seen[key];
        st->seen[key] = 1;
    }
    st->pixels += n / 4;

    free(img[0]);
    free(img[1]);
    ru_free_tex(dev, &rt[0]);
    ru_free_tex(dev, &rt[1]);
    kiln_destroy_sampler(dev, samp);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
}

enum { CASES_PER_LEVEL = 1000 };

static void test_equivalence(fpipe *pp, kr_simd level)
{
    static stats st;
    memset(&st, 0, sizeof st);
    for (uint32_t i = 0; i < CASES_PER_LEVEL; i++) {
        fcase c;
        make_case(0xF05EDull * 1000 + i, level, &c);
        run_case(pp, &c, &st);
    }
    printf("equivalence [%s]: %u cases (%u eligible for the fused path, %u of them AVX2-direct), "
           "%u failed; %llu of %llu pixels drawn, %u distinct colors\n",
           level_name(level), st.cases, st.eligible, st.avx2_direct, st.failed,
           (unsigned long long)st.changed, (unsigned long long)st.pixels, st.distinct);
    CHECK_EQ_INT(st.failed, 0);
    /* the mix actually exercises the path, and the images are not blank */
    CHECK(st.eligible > st.cases / 3);
    CHECK(level < KR_SIMD_AVX2 || st.avx2_direct > st.cases / 20);
    CHECK(st.changed > st.pixels / 10);
    CHECK(st.distinct > 5000);
}

/* The texture effect under blend and depth states, rendered by
 * kr_shade_select's whole-block shading (at the AVX2 level; the general
 * path at SSE2) and by the general path (the copy of kr_ps_texture):
 * every byte equal. Blending off, ADD of (ONE, ONE) and of (SRC_ALPHA,
 * INV_SRC_ALPHA), and random factors, ops and write masks; a D32_FLOAT
 * depth buffer with every compare function, writes on or off. The
 * triangles overlap, so later ones blend over and test against earlier
 * ones. */
static void test_shade_states(fpipe *pp, kr_simd level)
{
    enum { NCASE = 300 };
    static const kiln_compare funcs[] = {KILN_COMPARE_LESS,          KILN_COMPARE_LESS_EQUAL,
                                         KILN_COMPARE_GREATER,       KILN_COMPARE_GREATER_EQUAL,
                                         KILN_COMPARE_EQUAL,         KILN_COMPARE_NOT_EQUAL,
                                         KILN_COMPARE_ALWAYS,        KILN_COMPARE_NEVER};
    static stats st;
    memset(&st, 0, sizeof st);
    th_rng r = {0x5EADB1E7Dull};
    uint32_t blended = 0, depth = 0;
    for (uint32_t i = 0; i < NCASE; i++) {
        fcase c;
        make_case(0x5EAD0000ull + i, level, &c);
        uint64_t k = th_below(&r, 10);
        kiln_blend_target *b = &c.bt;
        b->enable = k >= 2;
        ru_blend_random(&r, k < 5 ? 0 : k < 8 ? 1 : 2, b);
        for (int ch = 0; ch < 4; ch++)
            c.bfactor[ch] = th_frand(&r, 0.0f, 1.0f);
        c.depth = th_below(&r, 3) != 0;
        c.dd.depth_func = funcs[th_below(&r, 8)];
        c.dd.depth_write_disable = (uint32_t)th_below(&r, 2);
        c.zclear = th_frand(&r, 0.3f, 1.0f);
        blended += b->enable;
        depth += (uint32_t)c.depth;
        run_case(pp, &c, &st);
    }
    printf("texture effect under blend and depth states [%s]: %u cases (%u blended, %u depth-tested), "
           "%u failed; %llu of %llu pixels drawn\n",
           level_name(level), st.cases, blended, depth, st.failed, (unsigned long long)st.changed,
           (unsigned long long)st.pixels);
    CHECK_EQ_INT(st.failed, 0);
    CHECK(st.changed > st.pixels / 20);
}

/* ==== 4. partial blocks keep the pixels outside the triangle ==== */

static void test_partial_blocks(fpipe *pp, kr_simd level, kiln_format tfmt, kiln_format rfmt)
{
    enum { W = 32, H = 24 };
    kiln_device *dev = pp->dev;
    kiln_context *ctx = pp->ctx;
    /* a constant 4x4 texture: every bilinear sum is 65536 * byte, so the
     * inside pixels are the texel exactly */
    static const uint8_t texel[4] = {200, 40, 90, 255};
    uint8_t tm[4 * 4 * 4];
    for (int i = 0; i < 16; i++)
        memcpy(tm + 4 * i, texel, 4);
    kiln_texture2d_desc td = {4, 4, 1, 1, tfmt, KILN_USAGE_DEFAULT, KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_subresource_data init = {tm, 0};
    kiln_texture tex = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, &init, &tex), KILN_OK);
    kiln_srv srv = {0};
    CHECK_RESULT(kiln_create_srv(dev, tex, NULL, &srv), KILN_OK);
    kiln_sampler_desc sd = {KILN_FILTER_LINEAR, KILN_FILTER_LINEAR, KILN_FILTER_LINEAR,
                            KILN_ADDRESS_CLAMP, KILN_ADDRESS_CLAMP, 0.0f, 0, 0.0f, 0.0f, {0}, KILN_COMPARE_DEFAULT, 0, KILN_ADDRESS_DEFAULT};
    kiln_sampler samp = {0};
    CHECK_RESULT(kiln_create_sampler(dev, &sd, &samp), KILN_OK);

    /* the right isosceles triangle (8, 8), (20, 8), (8, 20) in pixels:
     * inside where px > 8, py > 8, px + py < 28 (pixel centers) */
    float v[3][8];
    const double P[3][2] = {{8, 8}, {20, 8}, {8, 20}};
    for (int k = 0; k < 3; k++) {
        ru_clip(W, H, P[k][0], P[k][1], v[k]);
        v[k][2] = 0.5f;
        v[k][3] = 1.0f;
        v[k][4] = (float)P[k][0] / W;
        v[k][5] = (float)P[k][1] / H;
        v[k][6] = 0.0f;
        v[k][7] = 1.0f;
    }
    const float clear[4] = {0.2f, 0.4f, 0.6f, 0.8f};
    ru_tex rt[2] = {ru_rt(dev, W, H, rfmt), ru_rt(dev, W, H, rfmt)};
    kiln_buffer vb = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, v, sizeof v);
    uint32_t stride = VSTRIDE, off = 0;
    CHECK_RESULT(kiln_ia_set_vertex_buffers(ctx, 0, 1, &vb, &stride, &off), KILN_OK);
    CHECK_RESULT(kiln_ia_set_topology(ctx, KILN_TOPOLOGY_TRIANGLE_LIST), KILN_OK);
    CHECK_RESULT(kiln_ia_set_input_layout(ctx, pp->il), KILN_OK);
    CHECK_RESULT(kiln_vs_set_shader(ctx, pp->vs), KILN_OK);
    CHECK_RESULT(kiln_rs_set_state(ctx, pp->rs), KILN_OK);
    ru_set_viewport(ctx, 0.0f, 0.0f, W, H, 0.0f, 1.0f);
    CHECK_RESULT(kiln_ps_set_shader_resources(ctx, 0, 1, &srv), KILN_OK);
    CHECK_RESULT(kiln_ps_set_samplers(ctx, 0, 1, &samp), KILN_OK);
    for (int k = 0; k < 2; k++) {
        CHECK_RESULT(kiln_om_set_render_targets(ctx, 1, &rt[k].rtv, (kiln_dsv){0}), KILN_OK);
        CHECK_RESULT(kiln_clear_rtv(ctx, rt[k].rtv, clear), KILN_OK);
        CHECK_RESULT(kiln_ps_set_shader(ctx, k == 0 ? pp->fused : pp->general), KILN_OK);
        CHECK_RESULT(kiln_draw(ctx, 3, 0), KILN_OK);
    }
    CHECK_RESULT(kiln_om_set_render_targets(ctx, 0, NULL, (kiln_dsv){0}), KILN_OK);
    kiln_destroy_buffer(dev, vb);
    uint8_t img[2][W * H * 4];
    ru_read(dev, rt[0].tex, 0, img[0]);
    ru_read(dev, rt[1].tex, 0, img[1]);
    CHECK(memcmp(img[0], img[1], sizeof img[0]) == 0);

    /* expected bytes in target order */
    uint8_t rgba_in[4], cl[4], in[4];
    rgba_in[0] = is_bgra(tfmt) ? texel[2] : texel[0];
    rgba_in[1] = texel[1];
    rgba_in[2] = is_bgra(tfmt) ? texel[0] : texel[2];
    rgba_in[3] = texel[3];
    for (int c = 0; c < 4; c++)
        cl[c] = to_unorm8(clear[c]);
    for (int c = 0; c < 4; c++) {
        int src = is_bgra(rfmt) && c != 1 && c != 3 ? 2 - c : c;
        in[c] = rgba_in[src];
    }
    if (is_bgra(rfmt)) {
        uint8_t t = cl[0];
        cl[0] = cl[2];
        cl[2] = t;
    }
    /* outside: far away, and inside blocks the triangle covers in part
     * ((15, 15) in the block at (12, 12), (19, 9) at (16, 8), (9, 19) at
     * (8, 16), (12, 7) just above the top edge, (7, 12) left of it) */
    static const int outside[][2] = {{0, 0}, {31, 23}, {15, 15}, {19, 9}, {9, 19}, {12, 7}, {7, 12}};
    static const int inside[][2] = {{9, 9}, {12, 12}, {16, 8}, {8, 16}, {10, 15}};
    int bad = 0;
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
            const uint8_t *p = img[k] + 4 * (outside[i][1] * W + outside[i][0]);
            if (memcmp(p, cl, 4) != 0) {
                bad = 1;
                fprintf(stderr, "    [%s %s->%s] %s render: outside pixel (%d, %d) = %u %u %u %u\n",
                        level_name(level), fmt_name(tfmt), fmt_name(rfmt), k ? "general" : "fused",
                        outside[i][0], outside[i][1], p[0], p[1], p[2], p[3]);
            }
        }
        for (size_t i = 0; i < sizeof inside / sizeof inside[0]; i++) {
            const uint8_t *p = img[k] + 4 * (inside[i][1] * W + inside[i][0]);
            if (memcmp(p, in, 4) != 0) {
                bad = 1;
                fprintf(stderr, "    [%s %s->%s] %s render: inside pixel (%d, %d) = %u %u %u %u\n",
                        level_name(level), fmt_name(tfmt), fmt_name(rfmt), k ? "general" : "fused",
                        inside[i][0], inside[i][1], p[0], p[1], p[2], p[3]);
            }
        }
    }
    CHECK(!bad);
    /* every pixel is either the clear color or the texel */
    uint32_t other = 0, drawn = 0;
    for (size_t i = 0; i < sizeof img[0]; i += 4) {
        drawn += memcmp(img[0] + i, in, 4) == 0;
        other += memcmp(img[0] + i, in, 4) != 0 && memcmp(img[0] + i, cl, 4) != 0;
    }
    CHECK_EQ_INT(other, 0);
    CHECK(drawn > 40 && drawn < 100); /* about (12 * 12) / 2 pixels */

    ru_free_tex(dev, &rt[0]);
    ru_free_tex(dev, &rt[1]);
    kiln_destroy_sampler(dev, samp);
    kiln_destroy_srv(dev, srv);
    kiln_destroy_texture(dev, tex);
}

int main(void)
{
    double t0 = now_s();
    test_premise();
    test_quotient();
    test_add_bytes();
    test_selection();
    test_shade_selection();
    double t1 = now_s();
    printf("premise + selection: %.2f s\n", t1 - t0);

    kr_simd lv[3];
    int nlv = levels(lv);
    if (!nlv) {
        printf("no SSE2 on this build: the fused path does not exist here\n");
        return th_exit();
    }
    kr_simd initial = kr_effects_active_level();

    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 2);
    fpipe pp;
    memset(&pp, 0, sizeof pp);
    pp.dev = dev;
    pp.ctx = kiln_device_immediate_context(dev);
    pp.vs = ru_make_vs(dev, 2, 1);
    pp.il = ru_make_layout(dev, pp.vs, 2);
    kiln_rasterizer_desc rd;
    memset(&rd, 0, sizeof rd);
    rd.cull = KILN_CULL_NONE;
    pp.rs = ru_rs(dev, rd);

    for (int l = 0; l < nlv; l++) {
        double ts = now_s();
        CHECK_RESULT(kr_effects_force_level(lv[l]), KILN_OK);
        CHECK(kr_effects_active_level() == lv[l]);
        test_block_fn(lv[l]);
        test_span_fn(lv[l]);
        test_add_band_blocks(lv[l]);

        kiln_pixel_shader_desc pd;
        CHECK_RESULT(kiln_effect_get(KILN_EFFECT_TEXTURE, NULL, &pd), KILN_OK);
        CHECK(pd.fn == kr_ps_texture); /* what kr_block_select keys on */
        CHECK_EQ_INT(pd.num_varyings, 1);
        CHECK_EQ_INT(pd.num_outputs, 1);
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &pp.fused), KILN_OK);
        pd.fn = ps_texture_general;
        CHECK_RESULT(kiln_create_pixel_shader(dev, &pd, &pp.general), KILN_OK);

        test_equivalence(&pp, lv[l]);
        test_shade_states(&pp, lv[l]);
        static const kiln_format f[2] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                test_partial_blocks(&pp, lv[l], f[a], f[b]);

        kiln_destroy_pixel_shader(dev, pp.fused);
        kiln_destroy_pixel_shader(dev, pp.general);
        printf("level %s: %.2f s\n", level_name(lv[l]), now_s() - ts);
    }
    test_sample_levels(lv, nlv);
    test_sample_mips(lv, nlv);
    CHECK_RESULT(kr_effects_force_level(initial), KILN_OK);
    CHECK(kr_effects_active_level() == initial);

    kiln_destroy_rasterizer_state(dev, pp.rs);
    kiln_destroy_input_layout(dev, pp.il);
    kiln_destroy_vertex_shader(dev, pp.vs);
    kiln_device_destroy(dev);
    CHECK_EQ_INT(th_log_count(), 0); /* no API call complained */
    printf("total: %.2f s\n", now_s() - t0);
    return th_exit();
}
