/*
 * test_shadow: exact values of the "shadow" example scene
 * (examples/scenes_shadow.c): a depth-only pass into a D32_FLOAT shadow
 * map, then kiln_ps_sample_cmp (LESS_EQUAL, linear PCF).
 *
 * The scene's pixel shader writes lit * l + shadowed * (1 - l), so where
 * the comparison is 1 (every PCF tap lit) a ground pixel is exactly the
 * ground's lit color and where it is 0 exactly its shadowed color. The
 * test decides on the CPU, independently of the renderer, which ground
 * pixels must be which: it casts the pixel center's ray from the camera
 * onto the ground's top face, then a ray from that point to the light,
 * and tests it against the three cubes (their world matrices at the last
 * frame, slab tests in object space). A pixel whose light ray hits a cube
 * shrunk by 10% must be exactly shadowed; one whose ray misses every cube
 * grown by 10% (and whose camera ray meets no cube first) exactly lit;
 * pixels in between (the penumbra PCF blends, the bias, the map's texels)
 * are not judged. At least 100 of each must be found. SERIAL and ASYNC
 * (3 workers) render; the two images are also identical.
 *
 * Mutations this catches: a depth-only pass that writes no depth (every
 * pixel lit), a comparison sampled without its function (LESS_EQUAL read
 * as plain texels), the comparison reversed.
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"
#include "scenes.h"
#include "scenes_shadow.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { W = DEMO_GOLDEN_W, H = DEMO_GOLDEN_H, FRAME = DEMO_GOLDEN_FRAMES - 1 };

static uint8_t *render(kiln_exec_mode mode, uint32_t threads)
{
    uint8_t *px = malloc((size_t)W * H * 4);
    demo d = {.w = W, .h = H, .scene = "shadow"};
    d.dev = th_device(mode, threads);
    d.ctx = kiln_device_immediate_context(d.dev);
    int rc = demo_render(&d, &demo_scene_shadow, DEMO_GOLDEN_FRAMES, px, NULL, NULL, NULL);
    CHECK_EQ_INT(rc, 0);
    kiln_device_destroy(d.dev);
    return px;
}

/* D3D10's float -> UNORM8 (the colors are in [0, 1]). */
static uint8_t unorm8(float c) { return (uint8_t)(c * 255.0f + 0.5f); }

/* Inverse of an affine world matrix (rows 0..2; row 3 is 0 0 0 1), in
 * double: p_obj = A^-1 (p - t). */
static void affine_inverse(const mat4 *m, double inv[3][3], double t[3])
{
    double a[3][3];
    for (int r = 0; r < 3; r++) {
        for (int c = 0; c < 3; c++)
            a[r][c] = m->m[r * 4 + c];
        t[r] = m->m[r * 4 + 3];
    }
    double det = a[0][0] * (a[1][1] * a[2][2] - a[1][2] * a[2][1]) -
                 a[0][1] * (a[1][0] * a[2][2] - a[1][2] * a[2][0]) +
                 a[0][2] * (a[1][0] * a[2][1] - a[1][1] * a[2][0]);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
            inv[r][c] = (a[r1][c1] * a[r2][c2] - a[r1][c2] * a[r2][c1]) / det;
        }
}

/* Whether the segment o + s d, s in (0, 1], meets the cube [-k, k]^3 of
 * object `obj` (k = 1 the cube, 0.9 shrunk, 1.1 grown). */
static bool hits(int obj, const double o[3], const double d[3], double k)
{
    mat4 m = demo_shadow_world(obj, FRAME);
    double inv[3][3], t[3], lo[3], ld[3];
    affine_inverse(&m, inv, t);
    for (int r = 0; r < 3; r++) {
        lo[r] = ld[r] = 0;
        for (int c = 0; c < 3; c++) {
            lo[r] += inv[r][c] * (o[c] - t[c]);
            ld[r] += inv[r][c] * d[c];
        }
    }
    double s0 = 1e-9, s1 = 1.0;
    for (int r = 0; r < 3; r++) {
        if (fabs(ld[r]) < 1e-15) {
            if (lo[r] < -k || lo[r] > k)
                return false;
            continue;
        }
        double a = (-k - lo[r]) / ld[r], b = (k - lo[r]) / ld[r];
        if (a > b) {
            double x = a;
            a = b;
            b = x;
        }
        s0 = a > s0 ? a : s0;
        s1 = b < s1 ? b : s1;
        if (s0 > s1)
            return false;
    }
    return true;
}

static bool hits_any(const double o[3], const double d[3], double k)
{
    for (int obj = 1; obj < 4; obj++)
        if (hits(obj, o, d, k))
            return true;
    return false;
}

static void check_image(const uint8_t *img, const char *what)
{
    /* The camera as demo_shadow_camera builds it (examples/scenes_shadow.c). */
    vec3 e3, a3;
    demo_shadow_eye(&e3, &a3);
    const double eye[3] = {e3.x, e3.y, e3.z}, at[3] = {a3.x, a3.y, a3.z};
    double f[3], r[3], u[3], n = 0;
    for (int c = 0; c < 3; c++)
        n += (at[c] - eye[c]) * (at[c] - eye[c]);
    for (int c = 0; c < 3; c++)
        f[c] = (at[c] - eye[c]) / sqrt(n);
    /* right = f x up(0, 1, 0), up' = right x f */
    r[0] = -f[2], r[1] = 0, r[2] = f[0];
    n = sqrt(r[0] * r[0] + r[2] * r[2]);
    r[0] /= n, r[2] /= n;
    u[0] = r[1] * f[2] - r[2] * f[1], u[1] = r[2] * f[0] - r[0] * f[2],
    u[2] = r[0] * f[1] - r[1] * f[0];
    double ty = tan(DEMO_SHADOW_FOVY_DEG * 3.14159265358979 / 360.0), tx = ty * W / H;
    vec3 light;
    mat4 lvp;
    demo_shadow_light(&light, &lvp);
    const double le[3] = {light.x, light.y, light.z};
    float litf[4], shf[4];
    demo_shadow_colors(0, litf, shf);
    uint8_t lit[4], sh[4];
    for (int c = 0; c < 4; c++)
        lit[c] = unorm8(litf[c]), sh[c] = unorm8(shf[c]);

    int nlit = 0, nsh = 0, bad = 0;
    for (int py = 0; py < H; py++)
        for (int px = 0; px < W; px++) {
            double nx = (px + 0.5) / W * 2 - 1, ny = 1 - (py + 0.5) / H * 2, d[3];
            for (int c = 0; c < 3; c++)
                d[c] = f[c] + nx * tx * r[c] + ny * ty * u[c];
            if (d[1] >= 0)
                continue;
            double s = (-1.0 - eye[1]) / d[1], p[3], cam[3], to_light[3];
            for (int c = 0; c < 3; c++) {
                p[c] = eye[c] + s * d[c];
                cam[c] = eye[c] - p[c];
                to_light[c] = le[c] - p[c];
            }
            if (fabs(p[0]) > 4.8 || fabs(p[2]) > 4.8 || hits_any(p, cam, 1.1))
                continue; /* not the ground's top face, or a cube in front of it */
            const uint8_t *got = img + 4 * ((size_t)py * W + px);
            if (hits_any(p, to_light, 0.9)) {
                nsh++;
                if (memcmp(got, sh, 4)) {
                    if (bad++ < 4)
                        fprintf(stderr, "    (%d, %d) must be shadowed %u %u %u, is %u %u %u\n", px,
                                py, sh[0], sh[1], sh[2], got[0], got[1], got[2]);
                }
            } else if (!hits_any(p, to_light, 1.1)) {
                nlit++;
                if (memcmp(got, lit, 4)) {
                    if (bad++ < 4)
                        fprintf(stderr, "    (%d, %d) must be lit %u %u %u, is %u %u %u\n", px, py,
                                lit[0], lit[1], lit[2], got[0], got[1], got[2]);
                }
            }
        }
    printf("%s: %d ground pixels judged lit, %d shadowed, %d wrong\n", what, nlit, nsh, bad);
    th_check(bad == 0, what, __FILE__, __LINE__);
    CHECK(nlit >= 100);
    CHECK(nsh >= 100);
}

int main(void)
{
    uint8_t *s = render(KILN_EXEC_SERIAL, 0);
    uint8_t *a = render(KILN_EXEC_ASYNC, 3);
    check_image(s, "serial");
    CHECK(memcmp(s, a, (size_t)W * H * 4) == 0);
    free(s);
    free(a);
    return th_exit();
}
