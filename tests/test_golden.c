/*
 * Golden images: each draw scene of the example runner (the scenes without
 * a CPU reference, examples/scenes.h), rendered with the soft backend at
 * DEMO_GOLDEN_W x DEMO_GOLDEN_H, frames 0 .. DEMO_GOLDEN_FRAMES - 1, equals
 * tests/golden/NAME.png bit for bit, both in SERIAL mode and with four
 * worker threads (kiln promises the same image for any thread count).
 *
 * On a mismatch the test writes, under golden-out/ in its working
 * directory, NAME.actual.png, NAME.expected.png and NAME.diff.png (white
 * where any byte differs, the expected image dimmed elsewhere) and prints
 * their paths, the number of differing pixels, the largest channel
 * difference and the first differing pixel. Threaded results that differ
 * from the serial one get NAME.threads.*.png of their own.
 *
 * If a change of the renderer is meant to change the images, look at the
 * diffs, then re-bless: scripts/bless-golden.sh (docs/golden.md).
 *
 * Usage: test_golden [SCENE...]   (default: every draw scene)
 */
#include "harness.h"
#include "scenes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef KILN_GOLDEN_NO_STB
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#endif

#ifndef KILN_SOURCE_DIR
#error "tests/golden.cmake defines KILN_SOURCE_DIR"
#endif

#define OUT_DIR "golden-out"
#define THREADS 4u

#ifndef KILN_GOLDEN_NO_STB

/* Renders `sc` at the golden size on a fresh device; NULL on failure. */
static uint8_t *render(const scene *sc, kiln_exec_mode mode, uint32_t threads)
{
    size_t size = (size_t)DEMO_GOLDEN_W * DEMO_GOLDEN_H * 4;
    uint8_t *pixels = malloc(size);
    demo d = {.w = DEMO_GOLDEN_W, .h = DEMO_GOLDEN_H, .scene = sc->name};
    d.dev = th_device(mode, threads);
    if (!pixels || !d.dev) {
        free(pixels);
        kiln_device_destroy(d.dev);
        return NULL;
    }
    d.ctx = kiln_device_immediate_context(d.dev);
    int rc = demo_render(&d, sc, DEMO_GOLDEN_FRAMES, pixels, NULL, NULL, NULL);
    kiln_device_destroy(d.dev);
    if (rc) {
        free(pixels);
        return NULL;
    }
    return pixels;
}

static void write_png(const char *name, const char *kind, const uint8_t *rgba)
{
    char path[512], cwd[4096];
    snprintf(path, sizeof path, OUT_DIR "/%s.%s.png", name, kind);
    if (!stbi_write_png(path, DEMO_GOLDEN_W, DEMO_GOLDEN_H, 4, rgba, DEMO_GOLDEN_W * 4)) {
        fprintf(stderr, "    could not write %s\n", path);
        return;
    }
    fprintf(stderr, "    wrote %s/%s\n", getcwd(cwd, sizeof cwd) ? cwd : ".", path);
}

/* Compares; on a difference reports it and writes NAME.{actual,expected,
 * diff}.png (`expected` may be NULL: only the actual image is written).
 * Returns the number of differing pixels. */
static size_t compare(const char *name, const uint8_t *got, const uint8_t *want)
{
    size_t n = (size_t)DEMO_GOLDEN_W * DEMO_GOLDEN_H, bad = 0, first = 0;
    int maxdiff = 0;
    if (mkdir(OUT_DIR, 0777) != 0 && errno != EEXIST)
        fprintf(stderr, "    cannot create %s: %s\n", OUT_DIR, strerror(errno));
    if (!want) {
        write_png(name, "actual", got);
        return n;
    }
    uint8_t *diff = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        int differs = 0;
        for (int c = 0; c < 4; c++) {
            int dd = abs((int)got[i * 4 + c] - (int)want[i * 4 + c]);
            maxdiff = dd > maxdiff ? dd : maxdiff;
            differs |= dd != 0;
        }
        if (differs && bad++ == 0)
            first = i;
        if (diff)
            for (int c = 0; c < 4; c++)
                diff[i * 4 + c] = c == 3 ? 255 : differs ? 255 : (uint8_t)(want[i * 4 + c] / 4);
    }
    if (bad) {
        const uint8_t *g = got + first * 4, *e = want + first * 4;
        fprintf(stderr,
                "    %s: %zu of %zu pixels differ, max channel difference %d; first at (%zu, %zu): "
                "got %u,%u,%u,%u expected %u,%u,%u,%u\n",
                name, bad, n, maxdiff, first % DEMO_GOLDEN_W, first / DEMO_GOLDEN_W, g[0], g[1],
                g[2], g[3], e[0], e[1], e[2], e[3]);
        write_png(name, "actual", got);
        write_png(name, "expected", want);
        if (diff)
            write_png(name, "diff", diff);
    }
    free(diff);
    return bad;
}

/* The golden image, or NULL (reported) when missing or of the wrong size. */
static uint8_t *load_golden(const char *name)
{
    char path[4096];
    int w, h, n;
    snprintf(path, sizeof path, "%s/tests/golden/%s.png", KILN_SOURCE_DIR, name);
    uint8_t *img = stbi_load(path, &w, &h, &n, 4);
    if (!img) {
        fprintf(stderr, "    %s: cannot read %s (%s); run scripts/bless-golden.sh\n", name, path,
                stbi_failure_reason());
        return NULL;
    }
    if (w != (int)DEMO_GOLDEN_W || h != (int)DEMO_GOLDEN_H) {
        fprintf(stderr, "    %s: %s is %dx%d, not %ux%u; run scripts/bless-golden.sh\n", name, path,
                w, h, DEMO_GOLDEN_W, DEMO_GOLDEN_H);
        stbi_image_free(img);
        return NULL;
    }
    return img;
}

/* Removes what an earlier failing run wrote for this scene. */
static void remove_stale(const char *name)
{
    static const char *const kinds[] = {"actual", "expected", "diff"};
    char path[512];
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 3; k++) {
            snprintf(path, sizeof path, OUT_DIR "/%s%s.%s.png", name, t ? ".threads" : "",
                     kinds[k]);
            remove(path);
        }
}

static void test_scene(const scene *sc)
{
    char alt[128];
    fprintf(stderr, "scene %s\n", sc->name);
    remove_stale(sc->name);
    uint8_t *serial = render(sc, KILN_EXEC_SERIAL, 0);
    uint8_t *threaded = render(sc, KILN_EXEC_ASYNC, THREADS);
    uint8_t *golden = load_golden(sc->name);
    size_t size = (size_t)DEMO_GOLDEN_W * DEMO_GOLDEN_H * 4;

    CHECK(serial != NULL);
    CHECK(threaded != NULL);
    CHECK(golden != NULL);
    if (serial)
        CHECK(compare(sc->name, serial, golden) == 0);
    if (threaded && !(serial && memcmp(serial, threaded, size) == 0)) {
        /* Only a threaded image that differs from the serial one says more. */
        snprintf(alt, sizeof alt, "%s.threads", sc->name);
        CHECK(compare(alt, threaded, golden) == 0);
    }
    free(serial);
    free(threaded);
    if (golden)
        stbi_image_free(golden);
}

int main(int argc, char **argv)
{
    int ran = 0;
    for (size_t i = 0; i < demo_num_scenes; i++) {
        const scene *sc = demo_scenes[i];
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], sc->name) == 0;
        if (!demo_scene_is_golden(sc) || !wanted)
            continue;
        test_scene(sc);
        ran++;
    }
    CHECK(ran > 0 && (argc < 2 || ran == argc - 1)); /* every named scene is a draw scene */
    return th_exit();
}

#else /* KILN_GOLDEN_NO_STB */

int main(void)
{
    fprintf(stderr, "test_golden: built without stb (libstb-dev): cannot read PNGs, skipped\n");
    return 77;
}

#endif
