/*
 * Every example scene (examples/scenes.c), rendered live with a capture
 * running, then replayed from that capture with 1 and 3 worker threads and
 * in SERIAL mode: the final contents of the canvas (the first render-target
 * texture the scene's run creates, demo_render) equal the live image bit
 * for bit, and every call gives the result it gave live. Scenes at the
 * golden size and frame count (examples/scenes.h, DEMO_GOLDEN_*).
 *
 * Usage: test_capture_replay [SCENE...]   (default: every scene)
 */
#include "capture_util.h"
#include "scenes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The scenes' own shaders (sprites, skybox), by the names their captures
 * recorded. */
static void register_scene_shaders(kiln_device *dev, void *user)
{
    (void)user;
    CHECK_RESULT(demo_register_shaders(dev), KILN_OK);
}

static void test_scene(const scene *sc)
{
    size_t size = (size_t)DEMO_GOLDEN_W * DEMO_GOLDEN_H * 4;
    uint8_t *live = malloc(size);
    char path[256];
    snprintf(path, sizeof path, "capture_replay_%s.kcap", sc->name);
    demo d = {.w = DEMO_GOLDEN_W, .h = DEMO_GOLDEN_H, .scene = sc->name};
    d.dev = th_device(KILN_EXEC_ASYNC, 2);
    d.ctx = kiln_device_immediate_context(d.dev);
    CHECK_RESULT(kiln_capture_begin(d.dev, path), KILN_OK);
    CHECK(live && demo_render(&d, sc, DEMO_GOLDEN_FRAMES, live, NULL, NULL, NULL) == 0);
    CHECK_RESULT(kiln_capture_end(d.dev), KILN_OK);
    kiln_device_destroy(d.dev);

    size_t len = 0;
    uint8_t *bytes = cu_read(path, &len);
    CHECK(bytes != NULL);
    fprintf(stderr, "scene %s: %zu bytes of capture (%ux%u, %u frames)\n", sc->name, len,
            DEMO_GOLDEN_W, DEMO_GOLDEN_H, DEMO_GOLDEN_FRAMES);
    static const struct {
        kiln_exec_mode mode;
        uint32_t threads;
        bool finish;
    } runs[] = {{KILN_EXEC_ASYNC, 1, false},
                {KILN_EXEC_ASYNC, 3, false},
                {KILN_EXEC_SERIAL, 0, false},
                {KILN_EXEC_ASYNC, 3, true}};
    for (size_t i = 0; bytes && live && i < sizeof runs / sizeof runs[0]; i++) {
        cu_images img = {0};
        kcap_replay_report rep;
        kcap_replay_desc rd = {.exec_mode = runs[i].mode,
                               .num_threads = runs[i].threads,
                               .finish_frames = runs[i].finish,
                               .image_fn = cu_collect,
                               .frame_fn = cu_count_frame,
                               .setup_fn = register_scene_shaders,
                               .user = &img,
                               .log_fn = cu_quiet};
        CHECK_RESULT(kcap_replay(bytes, len, &rd, &rep), KILN_OK);
        if (rep.result != KILN_OK)
            fprintf(stderr, "    refused at %llu: %s\n", (unsigned long long)rep.error.offset,
                    rep.error.message);
        CHECK_EQ_INT(rep.mismatches, 0);
        if (rep.mismatches)
            fprintf(stderr, "    %s\n", rep.first_mismatch);
        CHECK_EQ_INT(img.frames_reported, DEMO_GOLDEN_FRAMES + 1); /* + the readback after */
        const cu_image *t = cu_target(&img, 0);
        CHECK(t && t->width == DEMO_GOLDEN_W && t->height == DEMO_GOLDEN_H);
        if (t && t->width == DEMO_GOLDEN_W && t->height == DEMO_GOLDEN_H) {
            size_t bad = 0;
            for (size_t p = 0; p < size / 4; p++)
                bad += memcmp(t->pixels + 4 * p, live + 4 * p, 4) != 0;
            CHECK_EQ_INT(bad, 0);
            if (bad)
                fprintf(stderr, "    %s, %s %u threads: %zu pixels differ\n", sc->name,
                        runs[i].mode == KILN_EXEC_SERIAL ? "SERIAL" : "ASYNC", runs[i].threads,
                        bad);
        }
        cu_free(&img);
    }
    free(bytes);
    free(live);
    remove(path);
}

int main(int argc, char **argv)
{
    int ran = 0;
    for (size_t i = 0; i < demo_num_scenes; i++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], demo_scenes[i]->name) == 0;
        if (!wanted)
            continue;
        test_scene(demo_scenes[i]);
        ran++;
    }
    CHECK(ran > 0 && (argc < 2 || ran == argc - 1));
    return th_exit();
}
