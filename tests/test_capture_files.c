/*
 * The checked-in captures: tests/captures/NAME.kcap, one per example scene
 * (examples/scenes.c) at CAPTURE_W x CAPTURE_H and CAPTURE_FRAMES frames,
 * replayed (ASYNC with 2 threads, and SERIAL) give the canvas image the
 * live run gave when they were made, tests/golden/capture/NAME.png, bit
 * for bit. So the capture format cannot drift without this test saying so:
 * a change that makes old captures replay differently, or not at all,
 * fails here. Every scene must have its capture.
 *
 * If the format changes on purpose (a new major version), or the renderer
 * changes the images, re-bless: scripts/bless-golden.sh runs
 *   test_capture_files --bless DIR
 * which renders every scene live (SERIAL) with a capture, writing
 * DIR/NAME.kcap and DIR/NAME.png, and copies them into the tree
 * (docs/capture.md, docs/golden.md).
 *
 * Usage: test_capture_files [--bless DIR]
 */
#include "capture_util.h"
#include "scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KILN_CAPTURE_NO_STB
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>
#endif

/* Small, so the files stay small: objects and particles stream ~150 KB
 * per frame whatever the size (1,000 per-draw constant maps; a vertex
 * ring), the copy scenes upload about W * H * 4 bytes per frame. */
#define CAPTURE_W 64u
#define CAPTURE_H 36u
#define CAPTURE_FRAMES 1u

#ifndef KILN_CAPTURE_NO_STB

/* The scenes' own shaders (sprites, skybox), by the names their captures
 * recorded. */
static void register_scene_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(demo_register_shaders(dev), KILN_OK);
}

static int bless(const char *dir)
{
    int rc = 0;
    for (size_t i = 0; i < demo_num_scenes; i++) {
        const scene *sc = demo_scenes[i];
        char cap[4096], png[4096];
        snprintf(cap, sizeof cap, "%s/%s.kcap", dir, sc->name);
        snprintf(png, sizeof png, "%s/%s.png", dir, sc->name);
        uint8_t *pixels = malloc((size_t)CAPTURE_W * CAPTURE_H * 4);
        demo d = {.w = CAPTURE_W, .h = CAPTURE_H, .scene = sc->name};
        d.dev = th_device(KILN_EXEC_SERIAL, 0);
        d.ctx = kiln_device_immediate_context(d.dev);
        bool ok = pixels && kiln_capture_begin(d.dev, cap) == KILN_OK &&
                  demo_render(&d, sc, CAPTURE_FRAMES, pixels, NULL, NULL, NULL) == 0 &&
                  kiln_capture_end(d.dev) == KILN_OK &&
                  stbi_write_png(png, CAPTURE_W, CAPTURE_H, 4, pixels, CAPTURE_W * 4);
        kiln_device_destroy(d.dev);
        free(pixels);
        fprintf(stderr, "%s %s and %s\n", ok ? "wrote" : "FAILED to write", cap, png);
        rc |= !ok;
    }
    return rc;
}

static void test_scene(const scene *sc)
{
    char cap[4096], png[4096];
    snprintf(cap, sizeof cap, "%s/tests/captures/%s.kcap", KILN_SOURCE_DIR, sc->name);
    snprintf(png, sizeof png, "%s/tests/golden/capture/%s.png", KILN_SOURCE_DIR, sc->name);
    size_t len = 0;
    uint8_t *bytes = cu_read(cap, &len);
    int w = 0, h = 0, n;
    uint8_t *golden = stbi_load(png, &w, &h, &n, 4);
    if (!bytes || !golden)
        fprintf(stderr, "    %s: %s missing; run scripts/bless-golden.sh\n", sc->name,
                !bytes ? cap : png);
    CHECK(bytes != NULL);
    CHECK(golden != NULL);
    for (int m = 0; bytes && golden && m < 2; m++) {
        cu_images img = {0};
        kcap_replay_report rep;
        kiln_exec_mode mode = m ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC;
        CHECK_RESULT(cu_replay(bytes, len, mode, 2, register_scene_shaders, &img, &rep), KILN_OK);
        if (rep.result != KILN_OK)
            fprintf(stderr, "    %s: refused at offset %llu: %s\n", sc->name,
                    (unsigned long long)rep.error.offset, rep.error.message);
        CHECK_EQ_INT(rep.mismatches, 0);
        const cu_image *t = cu_target(&img, 0);
        bool same = t && t->width == (uint32_t)w && t->height == (uint32_t)h &&
                    memcmp(t->pixels, golden, (size_t)w * h * 4) == 0;
        CHECK(same);
        if (!same)
            fprintf(stderr, "    %s (%s): the replay differs from %s\n", sc->name,
                    m ? "SERIAL" : "ASYNC", png);
        cu_free(&img);
    }
    if (bytes)
        fprintf(stderr, "scene %s: %zu bytes\n", sc->name, len);
    free(bytes);
    if (golden)
        stbi_image_free(golden);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--bless") == 0)
        return bless(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_capture_files [--bless DIR]\n");
        return 2;
    }
    for (size_t i = 0; i < demo_num_scenes; i++)
        test_scene(demo_scenes[i]);
    return th_exit();
}

#else /* KILN_CAPTURE_NO_STB */

int main(void)
{
    fprintf(stderr,
            "test_capture_files: built without stb (libstb-dev): cannot read PNGs, skipped\n");
    return 77;
}

#endif
