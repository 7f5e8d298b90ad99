/*
 * kiln_demo - the example scene runner.
 *
 * Draws do not exist yet, so every scene is built from what the API does
 * today: clears, UpdateSubresource uploads, copies (CopyResource and
 * CopySubresourceRegion) and DYNAMIC textures mapped with WRITE_DISCARD.
 * Each scene is a deterministic function of the frame number. The runner
 * renders frames 0..N-1 into a DEFAULT "canvas" texture, copies the last one
 * into a STAGING texture, maps it with KILN_MAP_READ and writes DIR/NAME.png.
 *
 * Every texture is R8G8B8A8_UNORM, the byte order PNG wants, so the readback
 * only strips the row padding (row_pitch may exceed width * 4).
 *
 * The scenes live in scenes.c. Each also knows, as a plain CPU function,
 * what its frame must look like. With --check the runner compares kiln's
 * bytes with it: the demo then doubles as an end-to-end check that queued,
 * multi-threaded execution gives exactly what executing every call in order
 * would give.
 *
 * Usage: kiln_demo [--list] [--scene NAME[,NAME...]|all] [--threads N]
 *                  [--size WxH] [--frames N] [--out DIR] [--serial] [--check]
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
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------------
 * What scenes.h promises: errors and owned objects
 * ------------------------------------------------------------------------- */

int demo_fail_call(const demo *d, const char *call, kiln_result r, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    fprintf(stderr, "kiln_demo: scene %s: %s failed: %s (%s:%d)\n", d->scene, call,
            kiln_result_string(r), base ? base + 1 : file, line);
    return -1;
}

int demo_fail(const demo *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "kiln_demo: scene %s: ", d->scene);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static int own(demo *d, demo_owned_kind kind, uint32_t id)
{
    if (d->nowned == DEMO_MAX_OWNED)
        return demo_fail(d, "too many objects (raise DEMO_MAX_OWNED)");
    d->owned[d->nowned].kind = kind;
    d->owned[d->nowned].id = id;
    d->nowned++;
    return 0;
}

int demo_new_texture(demo *d, uint32_t w, uint32_t h, uint32_t array_size, kiln_usage usage,
                     uint32_t bind, uint32_t cpu_access, kiln_texture *out)
{
    kiln_texture2d_desc desc = {
        .width = w,
        .height = h,
        .mip_levels = 1,
        .array_size = array_size,
        .format = DEMO_FORMAT,
        .usage = usage,
        .bind_flags = bind,
        .cpu_access = cpu_access,
    };
    TRY(d, kiln_create_texture2d(d->dev, &desc, NULL, out));
    return own(d, DEMO_OWNED_TEXTURE, out->id);
}

int demo_new_rtv(demo *d, kiln_texture t, uint32_t slice, kiln_rtv *out)
{
    kiln_rtv_desc desc = {
        .format = KILN_FORMAT_UNKNOWN, .first_array_slice = slice, .array_size = 1};
    TRY(d, kiln_create_rtv(d->dev, t, &desc, out));
    return own(d, DEMO_OWNED_RTV, out->id);
}

static int release_owned(demo *d)
{
    while (d->nowned) {
        d->nowned--;
        uint32_t id = d->owned[d->nowned].id;
        if (d->owned[d->nowned].kind == DEMO_OWNED_RTV)
            TRY(d, kiln_destroy_rtv(d->dev, (kiln_rtv){id}));
        else
            TRY(d, kiln_destroy_texture(d->dev, (kiln_texture){id}));
    }
    return 0;
}

/* ---------------------------------------------------------------------------
 * Running a scene
 * ------------------------------------------------------------------------- */

typedef struct options {
    int list, serial, check;
    int selected[DEMO_MAX_SCENES];
    uint32_t threads, w, h, frames;
    const char *out;
} options;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void progress(const char *name, uint32_t f, uint32_t frames, int tty)
{
    uint32_t step = frames > 10 ? frames / 10 : 1;
    if (tty)
        fprintf(stderr, "\rscene %s: frame %u/%u", name, f, frames);
    else if (f % step == 0 || f == frames)
        fprintf(stderr, "scene %s: frame %u/%u\n", name, f, frames);
}

/* Copies canvas into a STAGING texture, maps it for reading and copies the
 * rows out (row_pitch may exceed w * 4). */
static int read_back(demo *d, kiln_texture canvas, kiln_texture staging, uint8_t *pixels)
{
    kiln_mapped_subresource m;
    TRY(d, kiln_copy_resource(d->ctx, demo_res(staging), demo_res(canvas)));
    TRY(d, kiln_map(d->ctx, demo_res(staging), 0, KILN_MAP_READ, 0, &m));
    if (m.row_pitch < d->w * 4 || !m.data) {
        kiln_unmap(d->ctx, demo_res(staging), 0);
        return demo_fail(d, "kiln_map returned row_pitch %u for a row of %u bytes", m.row_pitch,
                         d->w * 4);
    }
    for (uint32_t y = 0; y < d->h; y++)
        memcpy(pixels + (size_t)y * d->w * 4, (const uint8_t *)m.data + (size_t)y * m.row_pitch,
               (size_t)d->w * 4);
    TRY(d, kiln_unmap(d->ctx, demo_res(staging), 0));
    return 0;
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

static int run_scene(demo *d, const scene *sc, const options *o)
{
    int tty = isatty(STDERR_FILENO);
    int rc = -1;
    void *state = calloc(1, sc->state_size);
    uint8_t *pixels = malloc((size_t)d->w * d->h * 4);
    uint8_t *want = o->check ? malloc((size_t)d->w * d->h * 4) : NULL;
    kiln_texture canvas, staging;
    kiln_rtv canvas_rtv;
    char path[4096];

    d->scene = sc->name;
    if (!state || !pixels || (o->check && !want)) {
        demo_fail(d, "out of memory");
        goto done;
    }
    if (demo_new_texture(d, d->w, d->h, 1, KILN_USAGE_DEFAULT,
                         KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, 0, &canvas) ||
        demo_new_rtv(d, canvas, 0, &canvas_rtv) ||
        demo_new_texture(d, d->w, d->h, 1, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ, &staging) ||
        sc->setup(d, state))
        goto done;

    double t0 = now_ms();
    for (uint32_t f = 0; f < o->frames; f++) {
        if (sc->frame(d, state, canvas, canvas_rtv, f))
            goto done;
        progress(sc->name, f + 1, o->frames, tty);
    }
    if (tty)
        fputc('\n', stderr);
    if (read_back(d, canvas, staging, pixels))
        goto done;
    double ms = now_ms() - t0;

    if (o->check) {
        sc->expect(d, o->frames - 1, want);
        if (compare(d, pixels, want))
            goto done;
    }
    size_t n = strlen(o->out);
    while (n > 1 && o->out[n - 1] == '/')
        n--; /* "out/" names out/NAME.png, not out//NAME.png */
    snprintf(path, sizeof path, "%.*s/%s.png", (int)n, o->out, sc->name);
    if (!stbi_write_png(path, (int)d->w, (int)d->h, 4, pixels, (int)(d->w * 4))) {
        demo_fail(d, "could not write %s", path);
        goto done;
    }
    fprintf(stderr, "scene %s: wrote %s (%ux%u, %u frame%s, %.2f ms/frame%s)\n", sc->name, path,
            d->w, d->h, o->frames, o->frames == 1 ? "" : "s", ms / o->frames,
            o->check ? ", matches the CPU reference" : "");
    rc = release_owned(d);
done:
    if (sc->teardown && state)
        sc->teardown(state);
    free(state);
    free(pixels);
    free(want);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Command line
 * ------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: kiln_demo [options]\n"
               "  --list              list the scenes and exit\n"
               "  --scene NAME|all    scenes to run, comma-separated (default: all)\n"
               "  --threads N         worker threads, 0..256; 0: KILN_NUM_THREADS or the CPUs\n"
               "                      (default 0)\n"
               "  --size WxH          canvas size, 1..8192 each (default 640x360)\n"
               "  --frames N          frames to render, the last is written (default 1)\n"
               "  --out DIR           output directory, created if missing (default out)\n"
               "  --serial            execute each command inside the call (KILN_EXEC_SERIAL)\n"
               "  --check             compare each image with the scene's CPU reference\n"
               "  --help              this text\n");
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
               (strlen(demo_scenes[i].name) != n || strncmp(demo_scenes[i].name, p, n)))
            i++;
        if (i == demo_num_scenes) {
            fprintf(stderr, "kiln_demo: unknown scene '%.*s'; scenes:", (int)n, p);
            for (size_t j = 0; j < demo_num_scenes; j++)
                fprintf(stderr, " %s", demo_scenes[j].name);
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
                          !strcmp(name, "--out");
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
        } else if (!strcmp(name, "--serial")) {
            o->serial = 1;
        } else if (!strcmp(name, "--check")) {
            o->check = 1;
        } else if (!strcmp(name, "--scene")) {
            scene_arg = val;
        } else if (!strcmp(name, "--threads")) {
            if (parse_u32(val, 0, 256, &o->threads))
                return bad_usage("--threads wants an integer 0..256, not '%s'", val);
        } else if (!strcmp(name, "--size")) {
            if (parse_size(val, &o->w, &o->h))
                return bad_usage("--size wants WxH with each in 1..8192, not '%s'", val);
        } else if (!strcmp(name, "--frames")) {
            if (parse_u32(val, 1, 1000000, &o->frames))
                return bad_usage("--frames wants an integer 1..1000000, not '%s'", val);
        } else if (!strcmp(name, "--out")) {
            if (!*val)
                return bad_usage("--out wants a directory");
            o->out = val;
        } else {
            return bad_usage("unknown flag '%s'", name);
        }
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
    options o = {.w = 640, .h = 360, .frames = 1, .out = "out"};
    if (demo_num_scenes > DEMO_MAX_SCENES) {
        fprintf(stderr, "kiln_demo: more scenes than DEMO_MAX_SCENES\n");
        return 1;
    }
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (o.list) {
        for (size_t i = 0; i < demo_num_scenes; i++)
            printf("%-10s %s\n", demo_scenes[i].name, demo_scenes[i].summary);
        return 0;
    }
    if (make_dirs(o.out)) {
        fprintf(stderr, "kiln_demo: cannot create output directory '%s': %s\n", o.out,
                strerror(errno));
        return 1;
    }

    demo d = {.w = o.w, .h = o.h, .scene = "(device)"};
    kiln_device_desc desc = {
        .num_threads = o.threads,
        .exec_mode = o.serial ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC,
    };
    kiln_result r = kiln_device_create(&desc, &d.dev);
    if (r != KILN_OK) {
        fprintf(stderr, "kiln_demo: kiln_device_create failed: %s\n", kiln_result_string(r));
        return 1;
    }
    d.ctx = kiln_device_immediate_context(d.dev);
    fprintf(stderr, "kiln_demo: %s, %u worker thread%s, %ux%u, %u frame%s\n",
            o.serial ? "serial" : "async", kiln_device_num_threads(d.dev),
            kiln_device_num_threads(d.dev) == 1 ? "" : "s", o.w, o.h, o.frames,
            o.frames == 1 ? "" : "s");

    rc = 0;
    for (size_t i = 0; i < demo_num_scenes && rc == 0; i++)
        if (o.selected[i] && run_scene(&d, &demo_scenes[i], &o))
            rc = 1;
    kiln_device_destroy(d.dev);
    return rc;
}
