/*
 * bench_present - what presenting costs and how long the app waits for it.
 *
 * For each target (NULL: frames discarded; MEMORY: a callback that reads
 * one texel per row of each frame) and each buffer count (2, 3), the app
 * thread renders F frames of clear + present at W x H (default 1280x720),
 * FIFO, then waits until the display thread is idle; the wait is part of
 * the timed run. Reported per configuration:
 *
 *   fps       frames / run time (median of the repetitions; min and max)
 *   ms/frame  run time / frames (from the median fps)
 *   blocked   stats.blocked_ns / run time, in %: the share of the app
 *             thread's time spent in get_back_buffer waiting for a FREE
 *             buffer (back-pressure from the display), median
 *   waits     stats.waits_no_buffer per frame, median
 *
 * Each configuration gets its own swapchain on one device, warmed up with
 * a few frames first. Timing uses clock_gettime(CLOCK_MONOTONIC).
 *
 * Usage: bench_present [--quick] [--size WxH] [--frames N] [--threads N]
 */
#include "kiln.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK) {                                                                       \
            fprintf(stderr, "bench_present: %s failed: %s (present.c:%d)\n", #call,                \
                    kiln_result_string(r_), __LINE__);                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct summary {
    double median, min, max;
} summary;

static summary summarize(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    summary s = {n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, v[0], v[n - 1]};
    return s;
}

/* The MEMORY target's consumer: reads one texel per row, so every frame
 * is touched by the display thread as an application would. */
static volatile uint32_t g_sink;
static void consume(const kiln_frame *f, void *user)
{
    (void)user;
    uint32_t sum = 0;
    for (uint32_t y = 0; y < f->height; y++)
        sum += ((const uint8_t *)f->pixels)[(size_t)y * f->row_pitch + (y % f->width) * 4];
    g_sink += sum;
}

typedef struct config {
    uint32_t width, height, frames, reps, threads;
    int quick;
} config;

static void frames(kiln_context *ctx, kiln_swapchain *sc, uint32_t n, uint32_t base)
{
    for (uint32_t i = 0; i < n; i++) {
        kiln_texture tex;
        kiln_rtv rtv;
        CHECK(kiln_swapchain_get_back_buffer(sc, &tex, &rtv));
        uint32_t k = base + i;
        float color[4] = {(k % 7) / 7.0f, (k % 11) / 11.0f, (k % 13) / 13.0f, 1.0f};
        CHECK(kiln_clear_rtv(ctx, rtv, color));
        CHECK(kiln_swapchain_present(sc));
    }
}

static void run(const config *c, kiln_device *dev, kiln_winsys_kind target, uint32_t nbuf)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_swapchain_desc d = {0};
    d.width = c->width;
    d.height = c->height;
    d.buffer_count = nbuf;
    d.winsys = target;
    if (target == KILN_WINSYS_MEMORY)
        d.frame_fn = consume;
    kiln_swapchain *sc;
    CHECK(kiln_swapchain_create(ctx, &d, &sc));
    frames(ctx, sc, 8, 0); /* warm-up: buffers touched, targets created */
    CHECK(kiln_swapchain_wait_idle(sc));

    double fps[64], blocked[64], waits[64];
    int reps = (int)c->reps;
    for (int r = 0; r < reps; r++) {
        kiln_swapchain_stats s0, s1;
        CHECK(kiln_swapchain_get_stats(sc, &s0));
        uint64_t t0 = now_ns();
        frames(ctx, sc, c->frames, 8 + (uint32_t)r * c->frames);
        CHECK(kiln_swapchain_wait_idle(sc));
        uint64_t t1 = now_ns();
        CHECK(kiln_swapchain_get_stats(sc, &s1));
        double secs = (double)(t1 - t0) / 1e9;
        fps[r] = c->frames / secs;
        blocked[r] = 100.0 * (double)(s1.blocked_ns - s0.blocked_ns) / (double)(t1 - t0);
        waits[r] = (double)(s1.waits_no_buffer - s0.waits_no_buffer) / c->frames;
        if (s1.displayed - s0.displayed != c->frames) {
            fprintf(stderr, "bench_present: %llu frames displayed of %u\n",
                    (unsigned long long)(s1.displayed - s0.displayed), c->frames);
            exit(1);
        }
    }
    kiln_swapchain_destroy(sc);
    summary f = summarize(fps, reps), b = summarize(blocked, reps), w = summarize(waits, reps);
    char size[32];
    snprintf(size, sizeof size, "%ux%u", c->width, c->height);
    printf("%-7s %7u %11s %7u %9.1f %9.1f %9.1f %9.3f %9.1f %8.2f\n",
           target == KILN_WINSYS_NULL ? "NULL" : "MEMORY", nbuf, size, c->frames, f.median, f.min,
           f.max, 1000.0 / f.median, b.median, w.median);
}

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] < '0' || s[0] > '9' || v < lo || v > hi)
        return 0;
    *out = (uint32_t)v;
    return 1;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_present [--quick] [--size WxH] [--frames N] [--threads N]\n"
               "  --size WxH   swapchain size, 1..8192 each (default 1280x720)\n"
               "  --frames N   frames per repetition (default 240, --quick 60)\n"
               "  --threads N  worker threads, 0 = kiln's default\n");
}

int main(int argc, char **argv)
{
    config c = {1280, 720, 0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            c.quick = 1;
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            const char *s = argv[++i];
            const char *x = strchr(s, 'x');
            char wbuf[16];
            if (!x || (size_t)(x - s) >= sizeof wbuf) {
                fprintf(stderr, "bench_present: --size wants WxH, not '%s'\n", s);
                return 2;
            }
            memcpy(wbuf, s, (size_t)(x - s));
            wbuf[x - s] = 0;
            if (!parse_u32(wbuf, 1, 8192, &c.width) || !parse_u32(x + 1, 1, 8192, &c.height)) {
                fprintf(stderr, "bench_present: --size wants WxH with 1..8192 each, not '%s'\n", s);
                return 2;
            }
        } else if (!strcmp(argv[i], "--frames") && i + 1 < argc) {
            if (!parse_u32(argv[++i], 1, 1000000, &c.frames)) {
                fprintf(stderr, "bench_present: --frames wants 1..1000000, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            if (!parse_u32(argv[++i], 0, 256, &c.threads)) {
                fprintf(stderr, "bench_present: --threads wants 0..256, not '%s'\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_present: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (!c.frames)
        c.frames = c.quick ? 60 : 240;
    c.reps = c.quick ? 3 : 7;

    kiln_device *dev;
    kiln_device_desc dd = {.num_threads = c.threads};
    CHECK(kiln_device_create(&dd, &dev));
    printf(
        "bench_present: clear + present, FIFO, %u worker threads, %u frames x %u repetitions%s\n",
        kiln_device_num_threads(dev), c.frames, c.reps, c.quick ? " (--quick)" : "");
    printf(
        "fps: median (min, max) over repetitions; blocked: %% of run time the app thread waited\n"
        "for a free buffer (stats.blocked_ns); waits: get_back_buffer waits per frame.\n\n");
    printf("%-7s %7s %11s %7s %9s %9s %9s %9s %9s %8s\n", "target", "buffers", "size", "frames",
           "fps", "min", "max", "ms/frame", "blocked%", "waits/f");
    for (int t = 0; t < 2; t++)
        for (uint32_t nbuf = 2; nbuf <= 3; nbuf++)
            run(&c, dev, t == 0 ? KILN_WINSYS_NULL : KILN_WINSYS_MEMORY, nbuf);
    kiln_device_destroy(dev);
    return 0;
}
