/*
 * cube_util.h - the cube-map direction the tests aim at a face texel with:
 * kiln.h's face table inverted (test_texture_kinds, test_texture_kinds_sample).
 */
#ifndef KILN_TEST_CUBE_UTIL_H
#define KILN_TEST_CUBE_UTIL_H

/* The direction (times k) that lands on face coordinates (s, t) of
 * `face` (0..5: +X, -X, +Y, -Y, +Z, -Z), with |major axis| = k. */
static inline void cube_dir(int face, float s, float t, float k, float d[3])
{
    float sc = 2.0f * s - 1.0f, tc = 2.0f * t - 1.0f;
    switch (face) {
    case 0:
        d[0] = 1;
        d[1] = -tc;
        d[2] = -sc;
        break;
    case 1:
        d[0] = -1;
        d[1] = -tc;
        d[2] = sc;
        break;
    case 2:
        d[0] = sc;
        d[1] = 1;
        d[2] = tc;
        break;
    case 3:
        d[0] = sc;
        d[1] = -1;
        d[2] = -tc;
        break;
    case 4:
        d[0] = sc;
        d[1] = -tc;
        d[2] = 1;
        break;
    default:
        d[0] = -sc;
        d[1] = -tc;
        d[2] = -1;
        break;
    }
    for (int c = 0; c < 3; c++)
        d[c] *= k;
}

#endif
