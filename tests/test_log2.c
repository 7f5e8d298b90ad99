/*
 * test_log2: the sampler's logarithm (src/raster/log2.h), kiln's own so that
 * a LOD, and so an image, does not depend on the C library.
 * - the four-lane form (which kr_log2f takes with SSE2) gives the portable
 *   C form's bits in every lane (and the same double before the rounding
 *   to float), so targets without SSE2 draw the same images, for
 *   values from every binade (normal and subnormal), around 1 and sqrt(2)
 *   (where the reduction switches), and every special value;
 * - the special values: log2(+-0) = -inf, log2(+inf) = +inf, a negative
 *   value or a NaN gives the quiet NaN 0x7fc00000; log2(2^k) = k exactly;
 * - accuracy: the value is the double logarithm (this platform's log2)
 *   rounded to float, but for a few inputs within 2^-44 of a rounding
 *   boundary (with glibc one in the whole float range, 0x3fb4dbe5, which
 *   the dense ranges hold), and never more than one float ulp from it.
 * `test_log2 --all` runs the first and last checks over all 2^32 bit
 * patterns (about three minutes; not part of ctest).
 */
#include "harness.h"
#include "raster/log2.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

static float float_of(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

typedef struct tally {
    uint64_t n, lanes_differ, doubles_differ, off_round, off_more;
    uint64_t libm_differ; /* information: where libm's log2f differs */
} tally;

static void check_one(tally *t, uint32_t b, float lane, double lane_d)
{
    float x = float_of(b), s = kr_log2f_c(x), k = kr_log2f(x);
    t->n++;
    if (bits_of(k) != bits_of(lane) && t->lanes_differ++ < 5) /* what the sampler calls */
        fprintf(stderr, "    kr_log2f differs from its lane at %08x\n", b);
    if (bits_of(s) != bits_of(lane)) {
        if (t->lanes_differ++ < 5)
            fprintf(stderr, "    lanes differ at %08x: scalar %08x, lane %08x\n", b, bits_of(s),
                    bits_of(lane));
    }
    if (!(x > 0.0f) || isinf(x))
        return;
    /* before the rounding to float too: the same double */
    double d = kr_log2d_c(x);
    if (memcmp(&d, &lane_d, sizeof d) && t->doubles_differ++ < 5)
        fprintf(stderr, "    doubles differ at %08x: scalar %a, lane %a\n", b, d, lane_d);
    float want = (float)log2((double)x);
    if (bits_of(s) != bits_of(want)) {
        /* one float ulp at most, either way */
        float up = nextafterf(want, INFINITY), down = nextafterf(want, -INFINITY);
        if (bits_of(s) == bits_of(up) || bits_of(s) == bits_of(down)) {
            if (t->off_round++ < 5)
                fprintf(stderr, "    one ulp off the rounded double at %08x\n", b);
        } else if (t->off_more++ < 5) {
            fprintf(stderr, "    %08x: %a, the double logarithm rounds to %a\n", b, s, want);
        }
    }
    if (bits_of(s) != bits_of(log2f(x)))
        t->libm_differ++;
}

/* Four values through both forms. */
static void check4(tally *t, const uint32_t b[4])
{
    float x[4], r[4];
    double d[4];
    for (int i = 0; i < 4; i++)
        x[i] = float_of(b[i]);
#if defined(__SSE2__)
    _mm_storeu_ps(r, kr_log2f4(_mm_loadu_ps(x)));
    kr_log2d4(_mm_loadu_ps(x), d);
#else
    for (int i = 0; i < 4; i++) {
        r[i] = kr_log2f(x[i]);
        d[i] = kr_log2d_c(x[i]);
    }
#endif
    for (int i = 0; i < 4; i++)
        check_one(t, b[i], r[i], d[i]);
}

static void check_range(tally *t, uint64_t first, uint64_t last, uint64_t step)
{
    uint32_t b[4];
    int k = 0;
    for (uint64_t v = first; v <= last; v += step) {
        b[k++] = (uint32_t)v;
        if (k == 4) {
            check4(t, b);
            k = 0;
        }
    }
    for (; k && k < 4; k++) /* pad with the last value */
        b[k] = b[k - 1];
    if (k)
        check4(t, b);
}

int main(int argc, char **argv)
{
    tally t = {0};
    if (argc > 1 && !strcmp(argv[1], "--all")) {
        check_range(&t, 0, 0xffffffffull, 1);
        printf("all %llu bit patterns: lanes differ %llu (doubles %llu), one ulp off %llu, more "
               "%llu (libm's log2f differs on %llu)\n",
               (unsigned long long)t.n, (unsigned long long)t.lanes_differ,
               (unsigned long long)t.doubles_differ, (unsigned long long)t.off_round,
               (unsigned long long)t.off_more, (unsigned long long)t.libm_differ);
        CHECK(t.lanes_differ == 0 && t.doubles_differ == 0 && t.off_more == 0 && t.off_round <= 4);
        return th_exit();
    }

    /* every binade, positive and negative, about 2,046 mantissas each (a
     * prime stride, so the low bits vary), subnormals included */
    check_range(&t, 0, 0xffffffffull, 4099);
    /* densely around 1 (both sides), sqrt(2) and sqrt(2) / 2, and the
     * smallest subnormals */
    check_range(&t, bits_of(1.0f) - 20000, bits_of(1.0f) + 20000, 1);
    check_range(&t, bits_of(1.41421356f) - 20000, bits_of(1.41421356f) + 20000, 1);
    check_range(&t, bits_of(0.70710678f) - 20000, bits_of(0.70710678f) + 20000, 1);
    check_range(&t, 0, 20000, 1);
    /* the largest values and the least normal */
    uint32_t edge[4] = {0x7f7fffffu, 0x7f7ffffeu, 0x00800000u, 0x007fffffu};
    check4(&t, edge);
    printf("%llu values: lanes differ %llu (doubles %llu), one ulp off the rounded double %llu, "
           "more %llu (libm's log2f differs on %llu)\n",
           (unsigned long long)t.n, (unsigned long long)t.lanes_differ,
           (unsigned long long)t.doubles_differ, (unsigned long long)t.off_round,
           (unsigned long long)t.off_more, (unsigned long long)t.libm_differ);
    CHECK(t.lanes_differ == 0);
    CHECK(t.doubles_differ == 0);
    CHECK(t.off_more == 0);
    /* 0x3fb4dbe5, in the range around sqrt(2), is the one value in the
     * whole range (--all) one ulp off; the reference is this platform's
     * double log2, so a few more are allowed, never a steady drift */
    CHECK(t.off_round <= 4);

    /* special values, in every lane position */
    const float inf = INFINITY;
    const uint32_t qnan = 0x7fc00000u;
    const float specials[] = {0.0f, -0.0f, inf, -inf, NAN, -NAN, -1.0f, -1e-40f};
    const uint32_t want[] = {bits_of(-inf), bits_of(-inf), bits_of(inf), qnan,
                             qnan,          qnan,          qnan,         qnan};
    for (unsigned i = 0; i < sizeof specials / sizeof specials[0]; i++) {
        CHECK_EQ_INT(bits_of(kr_log2f(specials[i])), want[i]);
        CHECK_EQ_INT(bits_of(kr_log2f_c(specials[i])), want[i]);
#if defined(__SSE2__)
        for (int lane = 0; lane < 4; lane++) {
            float x[4] = {1.0f, 2.0f, 3.0f, 4.0f}, r[4];
            x[lane] = specials[i];
            _mm_storeu_ps(r, kr_log2f4(_mm_loadu_ps(x)));
            CHECK_EQ_INT(bits_of(r[lane]), want[i]);
            for (int j = 0; j < 4; j++)
                if (j != lane)
                    CHECK_EQ_INT(bits_of(r[j]), bits_of(kr_log2f_c(x[j])));
        }
#endif
    }
    /* powers of two, from the least subnormal to the largest: exact */
    for (int k = -149; k <= 127; k++)
        CHECK(kr_log2f(ldexpf(1.0f, k)) == (float)k && kr_log2f_c(ldexpf(1.0f, k)) == (float)k);
    return th_exit();
}
