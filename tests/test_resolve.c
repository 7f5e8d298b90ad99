/*
 * test_resolve: kres_resolve's 8-bit UNORM row kernel (src/resources/ops.c)
 * against the per-texel float steps it replaced: each sample byte / 255,
 * summed in sample order, times 1 / samples, then the render target's
 * conversion (clamp, * 255 + 0.5, truncate).
 *
 * - The fact the 4x kernel rests on: those steps give (S + 2) >> 2 of the
 *   four bytes' sum S, for all 2^32 sets of four bytes (a 1/32 subset
 *   under the sanitizers, which make the 7-second enumeration a minute).
 * - Rows: RGBA8, BGRA8 and R8 subresources of 1..19, 31..33, 63..65 and
 *   67 texels (the 16-byte loop and its tail), random and edge bytes,
 *   resolved from a 4x source whose pitch and offset differ from the
 *   destination's; every byte against the float steps, and the
 *   destination's row padding and the bytes around the subresource left
 *   as they were.
 * - A format outside the kernel (R32_FLOAT) still takes the per-texel
 *   loop: the float average of the four samples.
 */
#include "harness.h"
#include "resources/resources.h"
#include "resources/texel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The resolved byte as the per-texel path computes it. */
static uint8_t ref_byte(const uint8_t *b, size_t plane, uint32_t n)
{
    float sum = 0.0f;
    for (uint32_t k = 0; k < n; k++)
        sum += kres_unorm_to_float(b[k * plane], 8);
    sum *= 1.0f / (float)n;
    return (uint8_t)kres_float_to_unorm(sum, 8);
}

static void test_sums(void)
{
    float t[256];
    for (uint32_t v = 0; v < 256; v++)
        t[v] = kres_unorm_to_float(v, 8);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    const uint32_t cstep = 32;
#else
    const uint32_t cstep = 1;
#endif
    long long bad = 0;
    for (uint32_t a = 0; a < 256; a++)
        for (uint32_t b = 0; b < 256; b++)
            for (uint32_t c = 0; c < 256; c += cstep) {
                const float abc = ((0.0f + t[a]) + t[b]) + t[c];
                for (uint32_t e = 0; e < 256; e++) {
                    float sum = (abc + t[e]) * (1.0f / 4.0f);
                    bad += kres_float_to_unorm(sum, 8) != (a + b + c + e + 2) >> 2;
                }
            }
    CHECK_EQ_INT(bad, 0);
}

#define SRC_OFF 192 /* the subresources' offsets in their storages */
#define DST_OFF 64
#define MARK 0xA5   /* the destination's bytes outside the resolved texels */

static void test_rows(void)
{
    static const kiln_format fmts[3] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM,
                                        KILN_FORMAT_R8_UNORM};
    static const uint32_t widths[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14,
                                      15, 16, 17, 18, 19, 31, 32, 33, 63, 64, 65, 67};
    th_rng rng = {0x243F6A8885A308D3ull};
    int bad = 0;
    for (int fi = 0; fi < 3; fi++)
        for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
            const uint32_t w = widths[wi], h = 3, bpp = kres_format(fmts[fi])->size;
            const uint32_t spitch = w * bpp + 48, dpitch = w * bpp + 16;
            const size_t splane = (size_t)spitch * h, dsize = (size_t)dpitch * h;
            kres_subresource ss = {SRC_OFF, splane * 4, w, h, spitch, 1, splane};
            kres_subresource ds = {DST_OFF, dsize, w, h, dpitch, 1, dsize};
            kres_resource src = {.format = fmts[fi], .samples = 4, .subs = &ss};
            kres_resource dst = {.format = fmts[fi], .samples = 1, .subs = &ds};
            const size_t stotal = SRC_OFF + splane * 4, dtotal = DST_OFF + dsize + 64;
            uint8_t *sd = malloc(stotal), *dd = malloc(dtotal);
            CHECK(sd && dd);
            for (size_t i = 0; i < stotal; i++) { /* a third edge values: 0, 1, 254, 255 */
                uint32_t r = (uint32_t)th_next(&rng);
                sd[i] = (uint8_t)(r % 3 ? r >> 8 : (r >> 8 & 1) * 254 + (r >> 9 & 1));
            }
            memset(dd, MARK, dtotal);
            kres_storage sst = {.data = sd}, dst_st = {.data = dd};
            kres_resolve(&dst, &dst_st, 0, &src, &sst, 0);
            for (size_t i = 0; i < dtotal; i++) {
                size_t rel = i - DST_OFF;
                bool texel = i >= DST_OFF && rel < dsize && rel % dpitch < (size_t)w * bpp;
                uint8_t want = MARK;
                if (texel)
                    want = ref_byte(sd + SRC_OFF + rel / dpitch * spitch + rel % dpitch, splane, 4);
                if (dd[i] != want && bad++ < 3)
                    fprintf(stderr, "    format %d width %u byte %zu (%s): %u, want %u\n",
                            (int)fmts[fi], w, i, texel ? "texel" : "outside", dd[i], want);
            }
            free(sd);
            free(dd);
        }
    CHECK_EQ_INT(bad, 0);
}

static void test_other_format(void)
{
    const uint32_t w = 5, h = 2, pitch = w * 4;
    const size_t plane = (size_t)pitch * h;
    kres_subresource ss = {0, plane * 4, w, h, pitch, 1, plane};
    kres_subresource ds = {0, plane, w, h, pitch, 1, plane};
    kres_resource src = {.format = KILN_FORMAT_R32_FLOAT, .samples = 4, .subs = &ss};
    kres_resource dst = {.format = KILN_FORMAT_R32_FLOAT, .samples = 1, .subs = &ds};
    float sv[4 * 10], dv[10];
    for (int i = 0; i < 40; i++)
        sv[i] = (float)(i * 7 % 13) * 0.375f - 1.0f;
    kres_storage sst = {.data = (uint8_t *)sv}, dst_st = {.data = (uint8_t *)dv};
    kres_resolve(&dst, &dst_st, 0, &src, &sst, 0);
    int bad = 0;
    for (int i = 0; i < 10; i++) {
        float want = (((0.0f + sv[i]) + sv[10 + i]) + sv[20 + i]) + sv[30 + i];
        want *= 0.25f;
        bad += memcmp(&want, &dv[i], sizeof want) != 0;
    }
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_sums();
    test_rows();
    test_other_format();
    return th_exit();
}
