/*
 * kiln_demo - the example scene runner.
 *
 * Each scene (scenes.h) is a deterministic function of the frame number.
 * The runner renders frames 0..N-1 into a DEFAULT "canvas" texture
 * (demo_render, demo.c), copies the last one into a STAGING texture, maps it
 * with KILN_MAP_READ and writes DIR/NAME.png.
 *
 * Every texture is R8G8B8A8_UNORM, the byte order PNG wants, so the readback
 * only strips the row padding (row_pitch may exceed width * 4).
 *
 * The copy scenes (clears, uploads, copies, DYNAMIC maps) also know, as a
 * plain CPU function, what their frame must look like. With --check the
 * runner compares kiln's bytes with it: the demo then doubles as an
 * end-to-end check that queued, multi-threaded execution gives exactly what
 * executing every call in order would give. The draw scenes have no CPU
 * reference; --check says so and skips them (tests/test_golden.c compares
 * them with tests/golden/NAME.png). --golden writes those images: the draw
 * scenes at the golden size and frame count (scripts/bless-golden.sh).
 * --capture FILE records every kiln call into FILE (one capture per scene
 * when FILE holds "%s", the scene's name; docs/capture.md), for kiln_replay.
 *
 * Usage: kiln_demo [--list] [--scene NAME[,NAME...]|all] [--threads N]
 *                  [--size WxH] [--frames N] [--out DIR] [--serial] [--check]
 *                  [--golden] [--backend soft|osmesa] [--trace FILE]
 *                  [--capture FILE]
 */
#include "scenes.h"

#include <stb/stb_image_write.h>

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * Running a scene
 * ------------------------------------------------------------------------- */

typedef struct options {
    int list, serial, check, golden;
    kiln_backend backend;
    const char *backend_name; /* "soft" or "osmesa" */
    int selected[DEMO_MAX_SCENES];
    uint32_t threads, w, h, frames;
    const char *out;
    const char *trace; /* --trace: the device's timeline (docs/trace.md) */
    const char *capture; /* a path, with "%s" for one file per scene */
} options;

typedef struct progress_info {
    int tty;             /* stderr is a terminal */
    const char *backend;
} progress_info;

/* A demo_progress_fn; `user` is a progress_info. */
static void progress(const char *name, uint32_t f, uint32_t frames, void *user)
{
    const progress_info *p = user;
    uint32_t step = frames > 10 ? frames / 10 : 1;
    if (p->tty)
        fprintf(stderr, "\rscene %s (%s): frame %u/%u", name, p->backend, f, frames);
    else if (f % step == 0 || f == frames)
        fprintf(stderr, "scene %s (%s): frame %u/%u\n", name, p->backend, f, frames);
}

static int compare(const demo *d, const uint8_t *got, const uint8_t *want)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < (size_t)d->w * d->h; i++) {
        if (memcmp(got + i * 4, want + i * 4, 4) != 0) {
            if (bad++ == 0)
                first = i;
        }
    }
    if (!bad)
        return 0;
    const uint8_t *g = got + first * 4, *e = want + first * 4;
    return demo_fail(d,
                     "check failed: %zu of %zu texels differ; first at (%zu, %zu): got %u,%u,%u,%u "
                     "expected %u,%u,%u,%u",
                     bad, (size_t)d->w * d->h, first % d->w, first / d->w, g[0], g[1], g[2], g[3],
                     e[0], e[1], e[2], e[3]);
}

/* Writes RGBA8 pixels as a PNG: RGB when every alpha is 255 (a quarter
 * fewer bytes to compress; readers give back alpha 255), else RGBA. The
 * pixels are packed in place. Returns 0 on failure, as stb does. */
static int write_png(const char *path, uint32_t w, uint32_t h, uint8_t *pixels)
{
    size_t n = (size_t)w * h;
    for (size_t i = 0; i < n; i++)
        if (pixels[i * 4 + 3] != 255)
            return stbi_write_png(path, (int)w, (int)h, 4, pixels, (int)(w * 4));
    for (size_t i = 0; i < n; i++)
        memmove(pixels + i * 3, pixels + i * 4, 3);
    return stbi_write_png(path, (int)w, (int)h, 3, pixels, (int)(w * 3));
}

static int run_scene(demo *d, const scene *sc, const options *o)
{
    progress_info info = {isatty(STDERR_FILENO), o->backend_name};
    int tty = info.tty;
    int rc = -1;
    uint8_t *pixels = malloc((size_t)d->w * d->h * 4);
    uint8_t *want = o->check && sc->expect ? malloc((size_t)d->w * d->h * 4) : NULL;
    const char *checked = "";
    double ms = 0;
    char path[4096];

    d->scene = sc->name;
    if (!pixels || (o->check && sc->expect && !want)) {
        demo_fail(d, "out of memory");
        goto done;
    }
    int per_scene = o->capture && strstr(o->capture, "%s");
    if (per_scene) {
        char cap[4096];
        const char *s = strstr(o->capture, "%s");
        snprintf(cap, sizeof cap, "%.*s%s%s", (int)(s - o->capture), o->capture, sc->name, s + 2);
        kiln_result r = kiln_capture_begin(d->dev, cap);
        if (r != KILN_OK) {
            demo_fail(d, "kiln_capture_begin(%s) failed: %s", cap, kiln_result_string(r));
            goto done;
        }
    }
    int failed = demo_render(d, sc, o->frames, pixels, progress, &info, &ms);
    if (tty)
        fputc('\n', stderr);
    if (per_scene && kiln_capture_end(d->dev) != KILN_OK)
        failed = demo_fail(d, "kiln_capture_end failed");
    if (failed)
        goto done;

    if (o->check && sc->expect) {
        sc->expect(d, o->frames - 1, want);
        if (compare(d, pixels, want))
            goto done;
        checked = ", matches the CPU reference";
    } else if (o->check) {
        checked = ", not checked: a draw scene has no CPU reference (test_golden checks it)";
    }
    size_t n = strlen(o->out);
    while (n > 1 && o->out[n - 1] == '/')
        n--; /* "out/" names out/NAME.png, not out//NAME.png */
    snprintf(path, sizeof path, "%.*s/%s.png", (int)n, o->out, sc->name);
    if (!write_png(path, d->w, d->h, pixels)) {
        demo_fail(d, "could not write %s", path);
        goto done;
    }
    fprintf(stderr, "scene %s: wrote %s (%ux%u, %u frame%s, %.2f ms/frame%s)\n", sc->name, path,
            d->w, d->h, o->frames, o->frames == 1 ? "" : "s", ms / o->frames, checked);
    rc = 0;
done:
    free(pixels);
    free(want);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kiln_demo [options]\n"
            "  --list              list the scenes and exit\n"
            "  --scene NAME|all    scenes to run, comma-separated (default: all)\n"
            "  --threads N         worker threads, 0..256; 0: KILN_NUM_THREADS or the CPUs\n"
            "                      (default 0)\n"
            "  --size WxH          canvas size, 1..8192 each (default 640x360)\n"
            "  --frames N          frames to render, the last is written (default 1)\n"
            "  --out DIR           output directory, created if missing (default out)\n"
            "  --backend NAME      soft (default) or osmesa (Mesa's llvmpipe, when built in)\n"
            "  --serial            execute each command inside the call (KILN_EXEC_SERIAL)\n"
            "  --trace FILE        write the scheduler timeline as Chrome trace JSON\n"
            "                      (open it in ui.perfetto.dev; docs/trace.md)\n"
            "  --check             compare each image with the scene's CPU reference\n"
            "                      (draw scenes have none: they are said to be skipped)\n"
            "  --golden            the golden images: the draw scenes at %ux%u, %u frames,\n"
            "                      into --out (scripts/bless-golden.sh uses this);\n"
            "                      not with --scene, --size or --frames\n"
            "  --capture FILE      record every kiln call into FILE for kiln_replay; \"%%s\"\n"
            "                      in FILE makes one capture per scene, named for it\n"
            "  --help              this text\n",
            DEMO_GOLDEN_W, DEMO_GOLDEN_H, DEMO_GOLDEN_FRAMES);
}

static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln_demo: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return 2;
}

/* Strict decimal in [lo, hi]. */
static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int parse_size(const char *s, uint32_t *w, uint32_t *h)
{
    char buf[64];
    const char *x = s ? strchr(s, 'x') : NULL;
    if (!x || (size_t)(x - s) >= sizeof buf)
        return -1;
    memcpy(buf, s, (size_t)(x - s));
    buf[x - s] = 0;
    return parse_u32(buf, 1, 8192, w) || parse_u32(x + 1, 1, 8192, h) ? -1 : 0;
}

static int select_scenes(const char *list, options *o)
{
    if (strcmp(list, "all") == 0) {
        for (size_t i = 0; i < demo_num_scenes; i++)
            o->selected[i] = 1;
        return 0;
    }
    for (const char *p = list;;) {
        size_t n = strcspn(p, ",");
        size_t i = 0;
        while (i < demo_num_scenes &&
               (strlen(demo_scenes[i]->name) != n || strncmp(demo_scenes[i]->name, p, n)))
            i++;
        if (i == demo_num_scenes) {
            fprintf(stderr, "kiln_demo: unknown scene '%.*s'; scenes:", (int)n, p);
            for (size_t j = 0; j < demo_num_scenes; j++)
                fprintf(stderr, " %s", demo_scenes[j]->name);
            fprintf(stderr, " all\n");
            return -1;
        }
        o->selected[i] = 1;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* Accepts "--flag value" and "--flag=value". Returns 0, or the exit code. */
static int parse_args(int argc, char **argv, options *o)
{
    const char *scene_arg = "all";
    int shaped = 0; /* --scene, --size or --frames given */
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *val = NULL;
        char name[32];
        const char *eq = strchr(arg, '=');
        size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
        if (strncmp(arg, "--", 2) != 0 || n >= sizeof name)
            return bad_usage("unexpected argument '%s'", arg);
        memcpy(name, arg, n);
        name[n] = 0;

        int takes_value = !strcmp(name, "--scene") || !strcmp(name, "--threads") ||
                          !strcmp(name, "--size") || !strcmp(name, "--frames") ||
                          !strcmp(name, "--out") || !strcmp(name, "--backend") ||
                          !strcmp(name, "--trace") || !strcmp(name, "--capture");
        if (takes_value) {
            if (eq)
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return bad_usage("%s needs a value", name);
        } else if (eq) {
            return bad_usage("%s takes no value", name);
        }

        if (!strcmp(name, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(name, "--list")) {
            o->list = 1;
        } else if (!strcmp(name, "--backend")) {
            if (!strcmp(val, "soft"))
                o->backend = KILN_BACKEND_SOFT;
            else if (!strcmp(val, "osmesa"))
                o->backend = KILN_BACKEND_OSMESA;
            else
                return bad_usage("--backend wants soft or osmesa, not '%s'", val);
            o->backend_name = val;
        } else if (!strcmp(name, "--serial")) {
            o->serial = 1;
        } else if (!strcmp(name, "--trace")) {
            if (!*val)
                return bad_usage("--trace wants a file name");
            o->trace = val;
        } else if (!strcmp(name, "--check")) {
            o->check = 1;
        } else if (!strcmp(name, "--golden")) {
            o->golden = 1;
        } else if (!strcmp(name, "--scene")) {
            scene_arg = val;
            shaped = 1;
        } else if (!strcmp(name, "--threads")) {
            if (parse_u32(val, 0, 256, &o->threads))
                return bad_usage("--threads wants an integer 0..256, not '%s'", val);
        } else if (!strcmp(name, "--size")) {
            if (parse_size(val, &o->w, &o->h))
                return bad_usage("--size wants WxH with each in 1..8192, not '%s'", val);
            shaped = 1;
        } else if (!strcmp(name, "--frames")) {
            if (parse_u32(val, 1, 1000000, &o->frames))
                return bad_usage("--frames wants an integer 1..1000000, not '%s'", val);
            shaped = 1;
        } else if (!strcmp(name, "--capture")) {
            const char *s = strstr(val, "%s");
            if (!*val || (s && strstr(s + 2, "%")) || (!s && strchr(val, '%')))
                return bad_usage("--capture wants a path, with at most one %%s and no other %%");
            o->capture = val;
        } else if (!strcmp(name, "--out")) {
            if (!*val)
                return bad_usage("--out wants a directory");
            o->out = val;
        } else {
            return bad_usage("unknown flag '%s'", name);
        }
    }
    if (o->golden) {
        if (shaped)
            return bad_usage("--golden fixes the scenes, the size and the frames");
        o->w = DEMO_GOLDEN_W;
        o->h = DEMO_GOLDEN_H;
        o->frames = DEMO_GOLDEN_FRAMES;
        for (size_t i = 0; i < demo_num_scenes; i++)
            o->selected[i] = demo_scene_is_golden(demo_scenes[i]);
        return 0;
    }
    if (select_scenes(scene_arg, o))
        return 2;
    return 0;
}

/* mkdir -p */
static int make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == 0) {
            char c = buf[i];
            buf[i] = 0;
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    options o = {.w = 640, .h = 360, .frames = 1, .out = "out", .backend_name = "soft"};
    if (demo_num_scenes > DEMO_MAX_SCENES) {
        fprintf(stderr, "kiln_demo: more scenes than DEMO_MAX_SCENES\n");
        return 1;
    }
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (o.list) {
        for (size_t i = 0; i < demo_num_scenes; i++)
            printf("%-10s %-6s %s\n", demo_scenes[i]->name,
                   demo_scene_is_golden(demo_scenes[i]) ? "golden" : "check",
                   demo_scenes[i]->summary);
        return 0;
    }
    if (make_dirs(o.out)) {
        fprintf(stderr, "kiln_demo: cannot create output directory '%s': %s\n", o.out,
                strerror(errno));
        return 1;
    }

    demo d = {.w = o.w, .h = o.h, .scene = "(device)"};
    kiln_device_desc desc = {
        .backend = o.backend,
        .num_threads = o.threads,
        .exec_mode = o.serial ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC,
        .trace_path = o.trace,
    };
    kiln_result r = kiln_device_create(&desc, &d.dev);
    if (r != KILN_OK) {
        fprintf(stderr, "kiln_demo: kiln_device_create failed: %s\n", kiln_result_string(r));
        return 1;
    }
    d.ctx = kiln_device_immediate_context(d.dev);
    fprintf(stderr, "kiln_demo: %s backend, %s, %u worker thread%s, %ux%u, %u frame%s\n",
            o.backend_name, o.serial ? "serial" : "async", kiln_device_num_threads(d.dev),
            kiln_device_num_threads(d.dev) == 1 ? "" : "s", o.w, o.h, o.frames,
            o.frames == 1 ? "" : "s");

    rc = 0;
    int one_capture = o.capture && !strstr(o.capture, "%s"); /* every scene in one file */
    if (one_capture && (r = kiln_capture_begin(d.dev, o.capture)) != KILN_OK) {
        fprintf(stderr, "kiln_demo: kiln_capture_begin(%s) failed: %s\n", o.capture,
                kiln_result_string(r));
        rc = 1;
    }
    for (size_t i = 0; i < demo_num_scenes && rc == 0; i++)
        if (o.selected[i] && run_scene(&d, demo_scenes[i], &o))
            rc = 1;
    if (one_capture && rc == 0 && kiln_capture_end(d.dev) != KILN_OK) {
        fprintf(stderr, "kiln_demo: kiln_capture_end failed\n");
        rc = 1;
    }
    kiln_device_destroy(d.dev);
    return rc;
}
