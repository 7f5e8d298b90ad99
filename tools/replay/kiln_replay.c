/*
 * kiln_replay - runs a kiln capture (docs/capture.md) on a new device.
 *
 * It writes every presented frame as DIR/frame-NNNNN.png (frames counted
 * from 0), or, for a capture without presents, the final contents of every
 * texture created with the render-target bind as DIR/target-N.png (N in
 * creation order; array slices after the first as target-N-sS.png), and
 * prints one line of statistics per frame (a frame ends at a present or a
 * kiln_capture_frame mark). A damaged capture is refused with the offset of
 * its first bad record; calls whose result differs from the live one are
 * counted and the first is shown. Exit status: 0 when the replay matched,
 * 1 otherwise, 2 for bad usage.
 *
 * Usage: kiln_replay FILE [--backend soft|osmesa] [--threads N] [--serial]
 *                         [--out DIR] [--frames A-B] [--finish] [--quiet]
 */
#include "capture/capture.h"

#include <stb/stb_image_write.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef struct options {
    const char *file, *out, *backend_name;
    kiln_backend backend;
    uint32_t threads;
    int serial, quiet, finish;
    int frame_range;
    uint64_t first, last;
} options;

typedef struct outputs {
    const options *o;
    uint64_t written, failed;
} outputs;

static void usage(FILE *f)
{
    fprintf(f, "usage: kiln_replay FILE [options]\n"
               "  --backend NAME   soft (default) or osmesa (Mesa's llvmpipe, when built in)\n"
               "  --threads N      worker threads, 0..256; 0: KILN_NUM_THREADS or the CPUs\n"
               "  --serial         execute each command inside the call (KILN_EXEC_SERIAL)\n"
               "  --out DIR        where the PNG files go, created if missing (default: replay)\n"
               "  --frames A-B     frames A to B only (0-based, inclusive; B may be omitted:\n"
               "                   A-); the replay stops after B\n"
               "  --finish         finish each frame's rendering before the next frame, so\n"
               "                   its time includes it (else: the time to issue its calls)\n"
               "  --quiet          no per-frame lines\n"
               "  --help           this text\n"
               "Writes DIR/frame-NNNNN.png for every presented frame, or, without presents,\n"
               "DIR/target-N.png with the final contents of every render-target texture.\n");
}

static int bad_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("kiln_replay: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs(" (see --help)\n", stderr);
    va_end(ap);
    return 2;
}

static int parse_u64(const char *s, const char **end, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno)
        return -1;
    *out = v;
    *end = e;
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--serial")) {
            o->serial = 1;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--finish")) {
            o->finish = 1;
        } else if (!strcmp(a, "--backend") || !strcmp(a, "--threads") || !strcmp(a, "--out") ||
                   !strcmp(a, "--frames")) {
            if (!val)
                return bad_usage("%s needs a value", a);
            i++;
            if (!strcmp(a, "--backend")) {
                if (!strcmp(val, "soft"))
                    o->backend = KILN_BACKEND_SOFT;
                else if (!strcmp(val, "osmesa"))
                    o->backend = KILN_BACKEND_OSMESA;
                else
                    return bad_usage("--backend wants soft or osmesa, not '%s'", val);
                o->backend_name = val;
            } else if (!strcmp(a, "--threads")) {
                uint64_t n;
                const char *end;
                if (parse_u64(val, &end, &n) || *end || n > 256)
                    return bad_usage("--threads wants an integer 0..256, not '%s'", val);
                o->threads = (uint32_t)n;
            } else if (!strcmp(a, "--out")) {
                if (!*val)
                    return bad_usage("--out wants a directory");
                o->out = val;
            } else {
                const char *end;
                o->frame_range = 1;
                o->last = UINT64_MAX;
                if (parse_u64(val, &end, &o->first) || *end != '-' ||
                    (end[1] && (parse_u64(end + 1, &end, &o->last) || *end)) || o->last < o->first)
                    return bad_usage("--frames wants A-B (or A-) with A <= B, not '%s'", val);
            }
        } else if (a[0] == '-') {
            return bad_usage("unknown flag '%s'", a);
        } else if (!o->file) {
            o->file = a;
        } else {
            return bad_usage("unexpected argument '%s'", a);
        }
    }
    if (!o->file)
        return bad_usage("which capture file?");
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
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

static uint8_t unorm(float v)
{
    v = v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v;
    return (uint8_t)(v * 255.0f + 0.5f);
}

/* One texel of `format` as RGBA8 (float formats clamped to [0, 1]). */
static void to_rgba8(kiln_format format, const uint8_t *p, uint8_t out[4])
{
    float f[4] = {0, 0, 0, 1};
    switch (format) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        memcpy(out, p, 4);
        return;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        out[0] = p[2];
        out[1] = p[1];
        out[2] = p[0];
        out[3] = p[3];
        return;
    case KILN_FORMAT_R8_UNORM:
        out[0] = out[1] = out[2] = p[0];
        out[3] = 255;
        return;
    case KILN_FORMAT_R32_FLOAT:
        memcpy(f, p, 4);
        f[1] = f[2] = f[0];
        break;
    case KILN_FORMAT_R32G32_FLOAT:
        memcpy(f, p, 8);
        break;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        memcpy(f, p, 16);
        break;
    default:
        break;
    }
    for (int c = 0; c < 4; c++)
        out[c] = unorm(f[c]);
}

/* A kcap image_fn: writes the image as a PNG (RGB when every alpha is 255,
 * as kiln_demo does, else RGBA). */
static void write_image(const kcap_image *img, void *user)
{
    outputs *out = user;
    char path[4200];
    if (img->kind == KCAP_IMAGE_PRESENT)
        snprintf(path, sizeof path, "%s/frame-%05llu.png", out->o->out,
                 (unsigned long long)img->frame);
    else if (img->slice)
        snprintf(path, sizeof path, "%s/target-%u-s%u.png", out->o->out, img->target, img->slice);
    else
        snprintf(path, sizeof path, "%s/target-%u.png", out->o->out, img->target);
    uint32_t bpp = kiln_format_size(img->format);
    size_t n = (size_t)img->width * img->height;
    uint8_t *rgba = malloc(n * 4);
    if (!rgba || !bpp) {
        free(rgba);
        out->failed++;
        return;
    }
    bool opaque = true;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            uint8_t *t = rgba + ((size_t)y * img->width + x) * 4;
            to_rgba8(img->format,
                     (const uint8_t *)img->pixels + (size_t)y * img->row_pitch + x * bpp, t);
            opaque &= t[3] == 255;
        }
    int ok;
    if (opaque) {
        for (size_t i = 0; i < n; i++)
            memmove(rgba + i * 3, rgba + i * 4, 3);
        ok = stbi_write_png(path, (int)img->width, (int)img->height, 3, rgba, (int)img->width * 3);
    } else {
        ok = stbi_write_png(path, (int)img->width, (int)img->height, 4, rgba, (int)img->width * 4);
    }
    free(rgba);
    if (ok) {
        out->written++;
    } else {
        fprintf(stderr, "kiln_replay: could not write %s\n", path);
        out->failed++;
    }
}

static void print_frame(const kcap_frame_stats *s, void *user)
{
    outputs *out = user;
    if (out->o->quiet)
        return;
    printf("frame %llu: %llu calls, %llu draws, %llu bytes uploaded, %llu failed live, %.2f ms%s\n",
           (unsigned long long)s->frame, (unsigned long long)s->calls, (unsigned long long)s->draws,
           (unsigned long long)s->bytes_uploaded, (unsigned long long)s->failed_live, s->wall_ms,
           s->presented ? " (presented)" : "");
}

int main(int argc, char **argv)
{
    options o = {.out = "replay", .backend_name = "soft"};
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    kcap_error err;
    size_t len = 0;
    uint8_t *bytes = kcap_read_file(o.file, &len, &err);
    if (!bytes) {
        fprintf(stderr, "kiln_replay: %s\n", err.message);
        return 1;
    }
    if (make_dirs(o.out)) {
        fprintf(stderr, "kiln_replay: cannot create output directory '%s': %s\n", o.out,
                strerror(errno));
        free(bytes);
        return 1;
    }
    outputs out = {&o, 0, 0};
    kcap_replay_desc d = {
        .backend = o.backend,
        .exec_mode = o.serial ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC,
        .num_threads = o.threads,
        .frame_range = o.frame_range != 0,
        .first_frame = o.first,
        .last_frame = o.last,
        .finish_frames = o.finish != 0,
        .image_fn = write_image,
        .frame_fn = print_frame,
        .user = &out,
    };
    kcap_replay_report rep;
    kiln_result r = kcap_replay(bytes, len, &d, &rep);
    free(bytes);
    if (r != KILN_OK) {
        fprintf(stderr, "kiln_replay: %s: refused at offset %llu: %s\n", o.file,
                (unsigned long long)rep.error.offset, rep.error.message);
        return 1;
    }
    printf("%s: %llu records, %llu frames, %llu calls, %llu draws, %llu bytes uploaded, "
           "%llu failed live (skipped), %llu images in %s; %.1f ms (%s, %s)\n",
           o.file, (unsigned long long)rep.records, (unsigned long long)rep.frames,
           (unsigned long long)rep.calls, (unsigned long long)rep.draws,
           (unsigned long long)rep.bytes_uploaded, (unsigned long long)rep.failed_live,
           (unsigned long long)out.written, o.out, rep.wall_ms, o.backend_name,
           o.serial ? "serial" : "async");
    if (rep.mismatches) {
        fprintf(stderr,
                "kiln_replay: %llu calls gave another result than the live run; first: %s\n",
                (unsigned long long)rep.mismatches, rep.first_mismatch);
        return 1;
    }
    return out.failed ? 1 : 0;
}
