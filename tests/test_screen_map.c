/*
 * test_screen_map: an unclipped triangle's three vertices are mapped to the
 * screen in one pass, a vertex per SSE lane (geom.c's to_screen3, x86-64);
 * every field must have the bits of the one-vertex mapping (to_screen) that
 * clipped primitives, lines and points still take: x, y, z, 1/w, the
 * snapped 16.8 fixed-point position, the varyings' pointer and the "no
 * place on screen" flag (a NaN field may differ in sign and payload, as
 * the compiler orders two NaN operands, and must mark the vertex bad).
 *
 * Positions come from every range a vertex shader can hand over: ordinary
 * clip-space values, w from tiny to huge, zero and negative w, x and y
 * that land beyond the 1e7-pixel limit, NaN and infinities in any
 * component, subnormals and signed zeros; viewports ordinary, offset,
 * negative, fractional, huge, with inverted and empty depth ranges.
 */
#include "harness.h"
#include "raster/geom.h"

#include <math.h>
#include <stdio.h>

static float special(th_rng *r)
{
    static const float v[] = {0.0f,   -0.0f,   1.0f,     -1.0f,     1e-40f, -1e-40f, 1e-30f, 1e30f,
                              -1e30f, 3.4e38f, INFINITY, -INFINITY, NAN,    1e-6f,   0.5f,   2.0f};
    return v[th_below(r, sizeof v / sizeof v[0])];
}

/* One component: mostly ordinary, sometimes a special value. */
static float component(th_rng *r, float range)
{
    switch (th_below(r, 8)) {
    case 0:
        return special(r);
    case 1:
        return th_frand(r, -range * 1e4f, range * 1e4f);
    default:
        return th_frand(r, -range, range);
    }
}

static float w_of(th_rng *r)
{
    switch (th_below(r, 6)) {
    case 0:
        return special(r);
    case 1:
        return th_frand(r, 1e-7f, 1e-3f);
    case 2:
        return th_frand(r, 100.0f, 1e6f);
    default:
        return th_frand(r, 0.1f, 10.0f);
    }
}

static kiln_viewport viewport(th_rng *r)
{
    switch (th_below(r, 6)) {
    case 0:
        return (kiln_viewport){0.0f, 0.0f, 1920.0f, 1080.0f, 0.0f, 1.0f};
    case 1:
        return (kiln_viewport){
            th_frand(r, -500.0f, 500.0f), th_frand(r, -500.0f, 500.0f),
            th_frand(r, 1.0f, 4096.0f),   th_frand(r, 1.0f, 4096.0f),
            th_frand(r, 0.0f, 1.0f),      th_frand(r, 0.0f, 1.0f)}; /* inverted too */
    case 2:
        return (kiln_viewport){0.5f, 0.25f, 37.0f, 29.0f, 0.25f, 0.75f};
    case 3:
        return (kiln_viewport){-16384.0f, 16383.0f, 16384.0f, 8192.0f, 0.5f, 0.5f};
    case 4:
        return (kiln_viewport){special(r), special(r), special(r),
                               special(r), special(r), special(r)};
    default:
        return (kiln_viewport){0.0f, 0.0f, 64.0f, 64.0f, 0.0f, 1.0f};
    }
}

int main(void)
{
    th_rng r = {0x5c7ee11a9u};
    enum { ROUNDS = 400000 };
    uint32_t bad_seen = 0, good_seen = 0, differ = 0;
    for (uint32_t i = 0; i < ROUNDS; i++) {
        kiln_viewport vp = viewport(&r);
        float pos[3][8]; /* position and a varying after it */
        float range = th_below(&r, 2) ? 1.0f : 3.0f;
        for (int k = 0; k < 3; k++) {
            for (int c = 0; c < 3; c++)
                pos[k][c] = component(&r, range);
            pos[k][3] = w_of(&r);
            if (th_below(&r, 2)) /* inside the guard band, as an unclipped triangle is */
                for (int c = 0; c < 2; c++)
                    pos[k][c] = fmaxf(-pos[k][3], fminf(pos[k][3], pos[k][c]));
            for (int c = 4; c < 8; c++)
                pos[k][c] = (float)c;
        }
        const float *const v[3] = {pos[0], pos[1], pos[2]};
        if (!kr_screen3_same(&vp, v)) {
            if (differ++ < 5)
                fprintf(stderr,
                        "  differs: vp {%g %g %g %g %g %g} v0 {%g %g %g %g} v1 {%g %g %g %g} v2 "
                        "{%g %g %g %g}\n",
                        vp.x, vp.y, vp.width, vp.height, vp.min_depth, vp.max_depth, pos[0][0],
                        pos[0][1], pos[0][2], pos[0][3], pos[1][0], pos[1][1], pos[1][2], pos[1][3],
                        pos[2][0], pos[2][1], pos[2][2], pos[2][3]);
        }
        /* both kinds of vertex must be met: the flag's lanes are tested */
        for (int k = 0; k < 3; k++) {
            bool finite = pos[k][3] > 0.0f && isfinite(pos[k][0]) && isfinite(pos[k][1]) &&
                          isfinite(pos[k][2]);
            if (finite && fabsf(pos[k][0] / pos[k][3]) <= 1.0f &&
                fabsf(pos[k][1] / pos[k][3]) <= 1.0f)
                good_seen++;
            else
                bad_seen++;
        }
    }
    printf("%u triangles, %u differ; ordinary and extreme vertices met: %u, %u\n", (unsigned)ROUNDS,
           differ, good_seen, bad_seen);
    CHECK_EQ_INT(differ, 0);
    CHECK(good_seen > ROUNDS / 2 && bad_seen > ROUNDS / 10);
    return th_exit();
}
