/*
 * The "srgb" example scene (examples/scenes_srgb.c) against the sRGB curve
 * (IEC 61966-2-1) computed here in double, on every pixel of one row of
 * each band, at the golden size, in SERIAL mode and with three workers:
 *
 *   A  enc(v): the write into the sRGB target encodes;
 *   B  enc(dec(enc(v / 2)) + v / 2): the second draw's blend reads the
 *      first one's stored byte as linear, adds in linear, encodes;
 *   C  enc(v + (1 - v) dec(enc(1/2))): alpha blending in linear;
 *   D  round(255 v): the UNORM canvas stores v unconverted;
 *
 * with v = (x + 0.5) / W (the ramp's interpolated value at the pixel
 * center), enc(l) = round(255 srgb(l)) and dec(b) = linear(b / 255). A
 * pixel whose reference lies within 0.02 of a rounding tie is skipped (the
 * renderer's float interpolation may fall either side); each band must
 * check at least 250 of its 320 pixels, and a mutation of the scene's
 * blend or of the sRGB encode makes them fail.
 */
#include "harness.h"
#include "scenes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double srgb(double l)
{
    return l <= 0.0031308 ? l * 12.92 : 1.055 * pow(l, 1.0 / 2.4) - 0.055;
}
static double linear(double s) { return s <= 0.04045 ? s / 12.92 : pow((s + 0.055) / 1.055, 2.4); }
static double enc_f(double l)
{
    return 255.0 * srgb(l < 0 ? 0 : l > 1 ? 1 : l);
} /* before rounding */
static double dec(int b) { return linear(b / 255.0); }
static int round_tie(double x) { return (int)floor(x + 0.5); }

/* The band's value at pixel x before rounding to a byte. */
static double want(int band, uint32_t x, uint32_t w)
{
    double v = (x + 0.5) / w;
    switch (band) {
    case 0:
        return enc_f(v);
    case 1:
        return enc_f(dec(round_tie(enc_f(v / 2))) + v / 2);
    case 2:
        return enc_f(v + (1 - v) * dec(round_tie(enc_f(0.5))));
    default:
        return 255.0 * v;
    }
}

static const scene *find(const char *name)
{
    for (size_t i = 0; i < demo_num_scenes; i++)
        if (!strcmp(demo_scenes[i]->name, name))
            return demo_scenes[i];
    return NULL;
}

int main(void)
{
    const scene *sc = find("srgb");
    CHECK(sc != NULL);
    if (!sc)
        return th_exit();
    const uint32_t W = DEMO_GOLDEN_W, H = DEMO_GOLDEN_H;
    for (int run = 0; run < 2; run++) {
        demo d = {.w = W, .h = H, .scene = sc->name};
        d.dev = th_device(run ? KILN_EXEC_ASYNC : KILN_EXEC_SERIAL, run ? 3 : 0);
        d.ctx = kiln_device_immediate_context(d.dev);
        uint8_t *px = malloc((size_t)W * H * 4);
        CHECK(px && demo_render(&d, sc, 1, px, NULL, NULL, NULL) == 0);
        for (int band = 0; px && band < 4; band++) {
            uint32_t y = (uint32_t)band * H / 4 + H / 8; /* the band's middle row */
            int checked = 0, bad = 0;
            for (uint32_t x = 0; x < W; x++) {
                double r = want(band, x, W);
                if (fabs(r - floor(r) - 0.5) < 0.02)
                    continue;
                checked++;
                int b = round_tie(r);
                const uint8_t *p = px + ((size_t)y * W + x) * 4;
                if ((p[0] != b || p[1] != b || p[2] != b || p[3] != 255) && bad++ < 3)
                    fprintf(stderr, "    band %c pixel (%u,%u): %u %u %u %u, want %d (%.4f)\n",
                            'A' + band, x, y, p[0], p[1], p[2], p[3], b, r);
            }
            CHECK(checked >= 250);
            CHECK_EQ_INT(bad, 0);
        }
        free(px);
        kiln_device_destroy(d.dev);
    }
    return th_exit();
}
