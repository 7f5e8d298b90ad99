/*
 * The PNG target writes exactly the frames presented: with FIFO, N presents
 * give the N files DIR/f-001.png .. DIR/f-00N.png and no other file, each
 * one a PNG (read back with stb_image) holding exactly the bytes rendered,
 * as RGBA whatever the swapchain's format (B8G8R8A8 is swizzled on the
 * way). A directory that cannot be written makes display_errors count the
 * failed frames (and logs WINSYS_FAILED) without a crash.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "present_util.h"

#include <dirent.h>
#include <stb/stb_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define W 37 /* odd: no row padding hides a stride bug */
#define H 13

static void step(const char *name)
{
    printf("-- %s\n", name);
    fflush(stdout);
}

static char g_root[256]; /* the test's temp dir, removed at the end */

static void make_root(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_root, sizeof g_root, "%s/kiln-png-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(g_root)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* Removes the files of `dir` (flat) and the dir itself. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[512];
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            remove(path);
        }
        closedir(d);
    }
    rmdir(dir);
}

static uint32_t count_entries(const char *dir)
{
    uint32_t n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static kiln_swapchain *make_png(kiln_context *ctx, const char *pattern, kiln_format fmt,
                                uint32_t nbuf)
{
    kiln_swapchain_desc d = {0};
    d.width = W;
    d.height = H;
    d.format = fmt;
    d.buffer_count = nbuf;
    d.winsys = KILN_WINSYS_PNG;
    d.png_path = pattern;
    kiln_swapchain *sc = NULL;
    CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
    return sc;
}

/* File `path` is a W x H PNG with frame `index`'s pixels as RGBA. */
static void check_png(const char *path, uint64_t index)
{
    int w = 0, h = 0, comp = 0;
    unsigned char *px = stbi_load(path, &w, &h, &comp, 4);
    CHECK(px != NULL);
    if (!px) {
        fprintf(stderr, "    %s: %s\n", path, stbi_failure_reason());
        return;
    }
    CHECK_EQ_INT(w, W);
    CHECK_EQ_INT(h, H);
    CHECK_EQ_INT(comp, 4); /* alpha is written */
    uint32_t bad = 0;
    for (uint32_t y = 0; y < (uint32_t)h && y < H; y++)
        for (uint32_t x = 0; x < (uint32_t)w && x < W; x++) {
            uint8_t want[4];
            pu_expected_rgba(index, 1, W, H, x, y, want);
            if (memcmp(px + 4 * ((size_t)y * (size_t)w + x), want, 4) != 0)
                bad++;
        }
    CHECK_EQ_INT(bad, 0);
    stbi_image_free(px);
}

static void test_frames(kiln_format fmt, uint32_t nbuf)
{
    char name[96];
    snprintf(name, sizeof name, "%s swapchain, %u buffers: N presents, N files, exact RGBA",
             fmt == KILN_FORMAT_B8G8R8A8_UNORM ? "B8G8R8A8" : "R8G8B8A8", nbuf);
    step(name);
    enum { N = 7 };
    char dir[300], pattern[320];
    snprintf(dir, sizeof dir, "%s/%s-%u", g_root,
             fmt == KILN_FORMAT_B8G8R8A8_UNORM ? "bgra" : "rgba", nbuf);
    CHECK(mkdir(dir, 0700) == 0);
    snprintf(pattern, sizeof pattern, "%s/f-%%03u.png", dir);

    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_swapchain *sc = make_png(ctx, pattern, fmt, nbuf);
    CHECK_EQ_INT(count_entries(dir), 0); /* nothing before the first present */
    for (uint64_t i = 1; i <= N; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, N);
    CHECK_EQ_INT(s.displayed, N);
    CHECK_EQ_INT(s.display_errors, 0);
    /* All files are there after wait_idle, before destroy. */
    CHECK_EQ_INT(count_entries(dir), N);
    for (uint64_t i = 1; i <= N; i++) {
        char path[400];
        snprintf(path, sizeof path, "%s/f-%03u.png", dir, (unsigned)i);
        check_png(path, i);
    }
    kiln_swapchain_destroy(sc);
    CHECK_EQ_INT(count_entries(dir), N); /* destroy writes nothing more */
    kiln_device_destroy(dev);
    remove_dir(dir);
}

/* Presents N frames into `pattern`; every one fails to be written. */
static void check_unwritable(const char *what, const char *pattern)
{
    step(what);
    enum { N = 5 };
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    th_log_reset();
    kiln_swapchain *sc = make_png(ctx, pattern, 0, 2);
    for (uint64_t i = 1; i <= N; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, N);
    CHECK_EQ_INT(s.display_errors, N);
    CHECK_EQ_INT(s.displayed, 0);
    /* An asynchronous failure is reported through the log callback
     * (DESIGN.md invariant 5; kiln.h's WINSYS_FAILED id). */
    CHECK(th_log_count() >= 1 && th_log_last() == KILN_LOG_WINSYS_FAILED);
    kiln_swapchain_destroy(sc);
    kiln_device_destroy(dev);
}

static void test_unwritable(void)
{
    char pattern[400], file[300];
    /* A directory that does not exist. */
    snprintf(pattern, sizeof pattern, "%s/missing/f-%%03u.png", g_root);
    check_unwritable("unwritable: missing directory", pattern);
    /* A path through a regular file (fails even for root, unlike a
     * read-only directory). */
    snprintf(file, sizeof file, "%s/plain-file", g_root);
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    snprintf(pattern, sizeof pattern, "%s/f-%%03u.png", file);
    check_unwritable("unwritable: a file where the directory should be", pattern);
    remove(file);
    /* A read-only directory, where permissions apply (not as root). */
    if (geteuid() != 0) {
        char dir[300];
        snprintf(dir, sizeof dir, "%s/readonly", g_root);
        CHECK(mkdir(dir, 0500) == 0);
        snprintf(pattern, sizeof pattern, "%s/f-%%03u.png", dir);
        check_unwritable("unwritable: read-only directory", pattern);
        CHECK_EQ_INT(count_entries(dir), 0);
        rmdir(dir);
    }
}

/* A pattern may hold %% and flags; a swapchain that presents nothing writes
 * nothing. */
static void test_pattern_forms(void)
{
    step("pattern with %% and width flags; no present, no file");
    char dir[300], pattern[400];
    snprintf(dir, sizeof dir, "%s/forms", g_root);
    CHECK(mkdir(dir, 0700) == 0);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);

    snprintf(pattern, sizeof pattern, "%s/unused-%%u.png", dir);
    kiln_swapchain *sc = make_png(ctx, pattern, 0, 2);
    kiln_swapchain_destroy(sc);
    CHECK_EQ_INT(count_entries(dir), 0);

    snprintf(pattern, sizeof pattern, "%s/100%%%%-%%-4u.png", dir); /* "100%%-%-4u.png" */
    sc = make_png(ctx, pattern, 0, 2);
    CHECK_RESULT(pu_render_present(dev, ctx, sc, 1, 1, NULL), KILN_OK);
    kiln_swapchain_destroy(sc); /* displays the queued frame first */
    char path[400];
    snprintf(path, sizeof path, "%s/100%%-1   .png", dir);
    CHECK(access(path, F_OK) == 0);
    check_png(path, 1);
    CHECK_EQ_INT(count_entries(dir), 1);
    kiln_device_destroy(dev);
    remove_dir(dir);
}

int main(void)
{
    make_root();
    test_frames(KILN_FORMAT_R8G8B8A8_UNORM, 2);
    test_frames(KILN_FORMAT_R8G8B8A8_UNORM, 3);
    test_frames(KILN_FORMAT_B8G8R8A8_UNORM, 2);
    test_frames(KILN_FORMAT_B8G8R8A8_UNORM, 3);
    test_pattern_forms();
    test_unwritable();
    remove_dir(g_root);
    return th_exit();
}
