/*
 * bench_queue - what the command queue costs and what it buys.
 *
 *  (a) producer cost: ns per call of the issuing loop alone (wall clock),
 *      for a 64-byte UpdateSubresource into a DEFAULT buffer and a 16x16
 *      CopySubresourceRegion between DEFAULT textures, and a 32x32 RGBA8
 *      UpdateSubresource into a texture from packed rows and from rows at
 *      a 1 KiB pitch (a region of a larger image). Batches are smaller
 *      than the command ring, so the producer never waits for a slot; the
 *      kiln_finish after each batch is not timed. In SERIAL mode the call
 *      executes the command, so there it is the whole cost.
 *  (b) end to end: N commands then kiln_finish, in commands per second,
 *      into one destination (every command depends on the previous one)
 *      and round-robin over 8 (independent commands may run in parallel).
 *  (c) overlap: a producer that does its own CPU work between calls. Each
 *      iteration spins on arithmetic calibrated to cost what its commands
 *      cost when executed inline, then uploads 64 KiB (128x128 RGBA8) into a
 *      texture and copies the 256x256 region around it to another texture.
 *      SERIAL runs work and commands one after the other, ASYNC overlaps
 *      them; serial_time / async_time is the gain (2.0 is perfect overlap).
 *
 * Every figure is the median of several repetitions (min and max shown).
 * On a shared machine a repetition during which the process was preempted
 * (an involuntary context switch of any of its threads, getrusage) runs
 * several times slower; for (a) and (b), `pre` counts such repetitions and
 * `clean` is the median of the others ("-": none was clean).
 * The device counters (waits, uploads) are printed at the end of each
 * device's run. Timing uses clock_gettime(CLOCK_MONOTONIC).
 *
 * The host line, at the start and at the end, is what one cache line costs
 * to go from core to core and back (two threads bouncing it). Every async
 * figure crosses cores, and on a shared 2-CPU guest that round trip moves
 * with where the host runs the two CPUs (450-520 ns measured here while
 * the async rows ran 3-6x slower than an hour before): async rows are
 * comparable only between runs whose host lines are alike.
 *
 * Usage: bench_queue [--quick] [--threads N]   (N = 0: kiln's default)
 */
#include "host.h"
#include "kiln.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define NRES 8         /* destinations for the round-robin variants */
#define BUF_SIZE 65536 /* DEFAULT buffers for 64-byte updates */
#define SMALL_TEX 256  /* textures for 16x16 copies */
#define BIG_TEX 512    /* textures for the overlap test */
#define BATCH 256      /* (a): commands per timed batch (< ring capacity) */

/* ---------------------------------------------------------------------------
 * Plumbing
 * ------------------------------------------------------------------------- */

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK) {                                                                       \
            fprintf(stderr, "bench_queue: %s failed: %s (queue.c:%d)\n", #call,                    \
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
    int preempted; /* repetitions with an involuntary context switch; -1 not measured */
    double clean;  /* median of the others; < 0: none */
} summary;

/* Involuntary context switches of the whole process so far. */
static long preemptions(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_nivcsw : 0;
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static summary summarize(double *v, int n)
{
    summary s = {median_of(v, n), v[0], v[n - 1], -1, -1.0}; /* preemption not measured */
    return s;
}

/* The same, knowing which repetitions were preempted (pre[i] != 0). */
static summary summarize_pre(double *v, const long *pre, int n)
{
    double clean[64];
    int nc = 0, np = 0;
    for (int i = 0; i < n; i++) {
        if (pre[i])
            np++;
        else
            clean[nc++] = v[i];
    }
    summary s = summarize(v, n);
    s.preempted = np;
    s.clean = nc ? median_of(clean, nc) : -1.0;
    return s;
}

/* A dependent chain of xorshift steps the compiler cannot remove. */
static volatile uint64_t spin_sink;
static void spin(uint64_t iters)
{
    uint64_t x = 88172645463325252ull;
    for (uint64_t i = 0; i < iters; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    spin_sink = x;
}

/* One device with everything the measurements touch. */
typedef struct bench {
    const char *mode;
    kiln_device *dev;
    kiln_context *ctx;
    kiln_buffer buf[NRES];
    kiln_texture src, dst[NRES];   /* SMALL_TEX, RGBA8 */
    kiln_texture big_src, big_dst; /* BIG_TEX, RGBA8 */
} bench;

static kiln_texture make_texture(kiln_device *dev, uint32_t size)
{
    kiln_texture t;
    kiln_texture2d_desc desc = {.width = size,
                                .height = size,
                                .mip_levels = 1,
                                .format = KILN_FORMAT_R8G8B8A8_UNORM,
                                .bind_flags = KILN_BIND_SHADER_RESOURCE};
    CHECK(kiln_create_texture2d(dev, &desc, NULL, &t));
    return t;
}

static void bench_init(bench *b, kiln_exec_mode mode, uint32_t threads)
{
    memset(b, 0, sizeof *b);
    b->mode = mode == KILN_EXEC_SERIAL ? "serial" : "async";
    kiln_device_desc desc = {.exec_mode = mode, .num_threads = threads};
    CHECK(kiln_device_create(&desc, &b->dev));
    b->ctx = kiln_device_immediate_context(b->dev);
    kiln_buffer_desc bd = {.size = BUF_SIZE, .bind_flags = KILN_BIND_VERTEX_BUFFER};
    for (int i = 0; i < NRES; i++) {
        CHECK(kiln_create_buffer(b->dev, &bd, NULL, &b->buf[i]));
        b->dst[i] = make_texture(b->dev, SMALL_TEX);
    }
    b->src = make_texture(b->dev, SMALL_TEX);
    b->big_src = make_texture(b->dev, BIG_TEX);
    b->big_dst = make_texture(b->dev, BIG_TEX);
}

static void bench_fini(bench *b)
{
    CHECK(kiln_finish(b->ctx));
    for (int i = 0; i < NRES; i++) {
        CHECK(kiln_destroy_buffer(b->dev, b->buf[i]));
        CHECK(kiln_destroy_texture(b->dev, b->dst[i]));
    }
    CHECK(kiln_destroy_texture(b->dev, b->src));
    CHECK(kiln_destroy_texture(b->dev, b->big_src));
    CHECK(kiln_destroy_texture(b->dev, b->big_dst));
    kiln_device_destroy(b->dev);
}

static kiln_device_stats stats(const bench *b)
{
    kiln_device_stats s;
    CHECK(kiln_device_get_stats(b->dev, &s));
    return s;
}

static void print_stats(const bench *b)
{
    kiln_device_stats s = stats(b);
    printf("\n%s device counters (kiln_device_get_stats, whole run):\n", b->mode);
    printf("  commands_queued %llu  commands_executed %llu  commands_in_flight %llu\n",
           (unsigned long long)s.commands_queued, (unsigned long long)s.commands_executed,
           (unsigned long long)s.commands_in_flight);
    printf("  waits: ring_full %llu  transfer_full %llu  map_conflict %llu  finish %llu\n",
           (unsigned long long)s.waits_ring_full, (unsigned long long)s.waits_transfer_full,
           (unsigned long long)s.waits_map_conflict, (unsigned long long)s.waits_finish);
    printf("  uploads: bytes_uploaded %llu  upload_chunks %llu  renames %llu  "
           "transfer_ring_peak %llu\n",
           (unsigned long long)s.bytes_uploaded, (unsigned long long)s.upload_chunks,
           (unsigned long long)s.renames, (unsigned long long)s.transfer_ring_peak);
}

/* ---------------------------------------------------------------------------
 * The commands
 * ------------------------------------------------------------------------- */

typedef void (*issue_fn)(bench *b, uint32_t i, uint32_t nres);

static const uint8_t payload64[64] = {1, 2, 3, 4, 5, 6, 7, 8};

/* 64 bytes into a DEFAULT buffer, walking through the buffer. */
static void issue_update64(bench *b, uint32_t i, uint32_t nres)
{
    uint32_t off = (i / nres * 64) % BUF_SIZE;
    kiln_box box = {off, 0, 0, off + 64, 1, 1};
    CHECK(kiln_update_subresource(b->ctx, kiln_buffer_resource(b->buf[i % nres]), 0, &box,
                                  payload64, 0, 0));
}

/* A 16x16 region (1 KiB) between DEFAULT textures, walking both. */
static void issue_copy16(bench *b, uint32_t i, uint32_t nres)
{
    uint32_t cells = SMALL_TEX / 16, k = i / nres;
    uint32_t sx = (k % cells) * 16, sy = (k / cells % cells) * 16;
    uint32_t dx = ((k + 7) % cells) * 16, dy = ((k / cells + 3) % cells) * 16;
    kiln_box box = {sx, sy, 0, sx + 16, sy + 16, 1};
    CHECK(kiln_copy_subresource_region(b->ctx, kiln_texture_resource(b->dst[i % nres]), 0, dx, dy,
                                       0, kiln_texture_resource(b->src), 0, &box));
}

/* A 32x32 RGBA8 region (4 KiB) of a 256x32 CPU image into a DEFAULT
 * texture, as an atlas or a video frame is updated from a larger image:
 * rows of 128 B at a 1 KiB pitch. update32_packed: the same from a 32x32
 * image (packed rows: one copy into the transfer ring). */
static uint8_t image256[32 * 256 * 4];
static void update32(bench *b, uint32_t i, uint32_t nres, bool packed)
{
    uint32_t cells = SMALL_TEX / 32, k = i / nres;
    uint32_t x = (k % cells) * 32, y = (k / cells % cells) * 32;
    kiln_box box = {x, y, 0, x + 32, y + 32, 1};
    const uint8_t *src = packed ? image256 : image256 + (k % 8) * 32 * 4;
    CHECK(kiln_update_subresource(b->ctx, kiln_texture_resource(b->dst[i % nres]), 0, &box, src,
                                  packed ? 32 * 4 : 256 * 4, 0));
}

static void issue_update32_strided(bench *b, uint32_t i, uint32_t nres)
{
    update32(b, i, nres, false);
}

static void issue_update32_packed(bench *b, uint32_t i, uint32_t nres)
{
    update32(b, i, nres, true);
}

/* (c)'s commands: 64 KiB into big_src, then the 256x256 region around it
 * to big_dst (the copy reads what the upload wrote). */
static uint8_t tile64k[128 * 128 * 4];
static void issue_overlap_pair(bench *b, uint32_t i)
{
    uint32_t q = i % 4, x = (q % 2) * 256, y = (q / 2) * 256;
    kiln_box up = {x + 64, y + 64, 0, x + 192, y + 192, 1};
    CHECK(
        kiln_update_subresource(b->ctx, kiln_texture_resource(b->big_src), 0, &up, tile64k, 0, 0));
    kiln_box region = {x, y, 0, x + 256, y + 256, 1};
    uint32_t d = (i + 1) % 4;
    CHECK(kiln_copy_subresource_region(b->ctx, kiln_texture_resource(b->big_dst), 0, (d % 2) * 256,
                                       (d / 2) * 256, 0, kiln_texture_resource(b->big_src), 0,
                                       &region));
}

/* ---------------------------------------------------------------------------
 * Measurements
 * ------------------------------------------------------------------------- */

typedef struct config {
    int reps;
    uint32_t batches;  /* (a) batches of BATCH per repetition */
    uint32_t e2e_cmds; /* (b) commands per repetition */
    uint32_t iters;    /* (c) iterations per repetition */
    uint32_t threads;
} config;

typedef struct waits {
    uint64_t ring, transfer;
} waits;

static waits waits_since(const bench *b, kiln_device_stats before)
{
    kiln_device_stats s = stats(b);
    waits w = {s.waits_ring_full - before.waits_ring_full,
               s.waits_transfer_full - before.waits_transfer_full};
    return w;
}

/* w NULL: the waits were not measured for this row. */
static void row(const char *test, const char *mode, uint32_t n, summary s, const char *unit,
                const waits *w)
{
    printf("%-34s %-7s %8u %12.1f %12.1f %12.1f  %-8s", test, mode, n, s.median, s.min, s.max,
           unit);
    if (w)
        printf(" %6llu %6llu", (unsigned long long)w->ring, (unsigned long long)w->transfer);
    else
        printf(" %6s %6s", "-", "-");
    if (s.preempted < 0)
        printf(" %4s %12s\n", "-", "-");
    else if (s.clean >= 0)
        printf(" %4d %12.1f\n", s.preempted, s.clean);
    else
        printf(" %4d %12s\n", s.preempted, "-");
}

static void header(const char *title)
{
    printf("\n%s\n", title);
    printf("%-34s %-7s %8s %12s %12s %12s  %-8s %6s %6s %4s %12s\n", "test", "mode", "n/rep",
           "median", "min", "max", "unit", "ringW", "xferW", "pre", "clean");
}

/* (a): ns per call of the issuing loop only. */
static void producer_cost(bench *b, const config *c, const char *name, issue_fn fn)
{
    double v[64];
    long pre[64];
    kiln_device_stats before = stats(b);
    for (int r = 0; r < c->reps; r++) {
        long p0 = preemptions();
        uint64_t issue_ns = 0;
        uint32_t i = 0;
        for (uint32_t batch = 0; batch < c->batches; batch++) {
            uint64_t t0 = now_ns();
            for (uint32_t j = 0; j < BATCH; j++)
                fn(b, i++, 1);
            issue_ns += now_ns() - t0;
            CHECK(kiln_finish(b->ctx)); /* not timed */
        }
        v[r] = (double)issue_ns / ((double)c->batches * BATCH);
        pre[r] = preemptions() - p0;
    }
    waits w = waits_since(b, before);
    row(name, b->mode, c->batches * BATCH, summarize_pre(v, pre, c->reps), "ns/call", &w);
}

/* (b): N commands then kiln_finish, commands per second. */
static void end_to_end(bench *b, const config *c, const char *name, issue_fn fn, uint32_t nres)
{
    double v[64];
    long pre[64];
    kiln_device_stats before = stats(b);
    for (int r = 0; r < c->reps; r++) {
        long p0 = preemptions();
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < c->e2e_cmds; i++)
            fn(b, i, nres);
        CHECK(kiln_finish(b->ctx));
        v[r] = (double)c->e2e_cmds / ((double)(now_ns() - t0) / 1e9);
        pre[r] = preemptions() - p0;
    }
    waits w = waits_since(b, before);
    row(name, b->mode, c->e2e_cmds, summarize_pre(v, pre, c->reps), "cmd/s", &w);
}

/* (c): one repetition, in ms: iters x (spin, upload, copy), then finish.
 * *calls_us (if not NULL) gets the time spent inside the two kiln calls,
 * per iteration: the producer's share of the commands' cost. */
static double overlap_once(bench *b, uint32_t iters, uint64_t spin_iters, double *calls_us)
{
    uint64_t in_calls = 0, t0 = now_ns();
    for (uint32_t i = 0; i < iters; i++) {
        spin(spin_iters);
        uint64_t c0 = now_ns();
        issue_overlap_pair(b, i);
        in_calls += now_ns() - c0;
    }
    CHECK(kiln_finish(b->ctx));
    double ms = (double)(now_ns() - t0) / 1e6;
    if (calls_us)
        *calls_us = (double)in_calls / 1e3 / iters;
    return ms;
}

/* ---------------------------------------------------------------------------
 * The host: a cache line's round trip between two cores
 * ------------------------------------------------------------------------- */

#define PING_ROUNDS 100000
#define PING_BUDGET_NS 200000000u /* on a busy machine: stop after 0.2 s */

static _Alignas(64) atomic_uint ping_line; /* odd: the other thread's turn */
static _Alignas(64) atomic_bool ping_stop;

static void *ping_partner(void *arg)
{
    (void)arg;
    for (unsigned turn = 1;; turn += 2) {
        while (atomic_load_explicit(&ping_line, memory_order_acquire) != turn)
            if (atomic_load_explicit(&ping_stop, memory_order_relaxed))
                return NULL;
        atomic_store_explicit(&ping_line, turn + 1, memory_order_release);
    }
}

/* Nanoseconds per round trip, or -1 when no second thread could run. */
static double ping_ns(void)
{
    atomic_store(&ping_line, 0);
    atomic_store(&ping_stop, false);
    pthread_t t;
    if (pthread_create(&t, NULL, ping_partner, NULL) != 0)
        return -1.0;
    uint64_t t0 = now_ns();
    unsigned done = 0;
    for (unsigned turn = 0; done < PING_ROUNDS; turn += 2, done++) {
        atomic_store_explicit(&ping_line, turn + 1, memory_order_release);
        while (atomic_load_explicit(&ping_line, memory_order_acquire) != turn + 2)
            ;
        if ((done & 1023) == 1023 && now_ns() - t0 > PING_BUDGET_NS)
            break;
    }
    double ns = (double)(now_ns() - t0) / (done ? done : 1);
    atomic_store(&ping_stop, true);
    pthread_join(t, NULL);
    return done ? ns : -1.0;
}

static void print_host(const char *when)
{
    double v[5];
    for (int r = 0; r < 5; r++)
        v[r] = ping_ns();
    summary s = summarize(v, 5);
    char cpu[192];
    printf("host (%s): cross-core round trip of one cache line %.0f ns (min %.0f, max %.0f); CPU: "
           "%s\n",
           when, s.median, s.min, s.max, bench_cpu_model(cpu, sizeof cpu));
}

/* Nanoseconds per spin iteration (median of a few runs). */
static double spin_ns_per_iter(int reps)
{
    double v[64];
    const uint64_t n = 20000000;
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = now_ns();
        spin(n);
        v[r] = (double)(now_ns() - t0) / (double)n;
    }
    return summarize(v, reps).median;
}

static void overlap(bench *ser, bench *asy, const config *c)
{
    double v[64], vs[64], va[64], ratio[64], cs[64], ca[64];

    /* What the two commands cost, executed inline (SERIAL, no spin). */
    for (int r = 0; r < c->reps; r++)
        v[r] = overlap_once(ser, c->iters, 0, NULL) * 1e6 / c->iters;
    summary cmd = summarize(v, c->reps);
    double per_iter = spin_ns_per_iter(c->reps);
    uint64_t spin_iters = (uint64_t)(cmd.median / per_iter);
    printf("\ncalibration: upload 64 KiB + copy 256x256 executed inline = %.1f us/iteration;\n"
           "             producer work = %llu xorshift steps (%.3f ns each) = %.1f us\n",
           cmd.median / 1e3, (unsigned long long)spin_iters, per_iter,
           (double)spin_iters * per_iter / 1e3);

    header("(c) producer work + upload 64 KiB + copy 256x256 per iteration, then kiln_finish");
    kiln_device_stats bs = stats(ser), ba = stats(asy);
    for (int r = 0; r < c->reps; r++) { /* interleaved, so drift hits both */
        vs[r] = overlap_once(ser, c->iters, spin_iters, &cs[r]);
        va[r] = overlap_once(asy, c->iters, spin_iters, &ca[r]);
        ratio[r] = vs[r] / va[r];
    }
    summary s = summarize(vs, c->reps), a = summarize(va, c->reps);
    waits ws = waits_since(ser, bs), wa = waits_since(asy, ba);
    row("work+upload+copy", "serial", c->iters, s, "ms", &ws);
    row("work+upload+copy", "async", c->iters, a, "ms", &wa);
    summary rs = summarize(ratio, c->reps);
    printf("%-34s %-7s %8s %12.2f %12.2f %12.2f  %-8s\n", "gain serial_time/async_time", "", "",
           rs.median, rs.min, rs.max, "x");
    printf("%-34s %-7s %8s %12.2f\n", "  (ratio of the medians)", "", "", s.median / a.median);
    row("  of which inside the 2 kiln calls", "serial", c->iters, summarize(cs, c->reps), "us/iter",
        NULL);
    row("  of which inside the 2 kiln calls", "async", c->iters, summarize(ca, c->reps), "us/iter",
        NULL);
}

/* ---------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    config c = {.reps = 7, .batches = 40, .e2e_cmds = 50000, .iters = 400, .threads = 0};
    const char *only = "abc";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            c.reps = 3;
            c.batches = 8;
            c.e2e_cmds = 5000;
            c.iters = 60;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long t = strtoul(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] < '0' || argv[i][0] > '9' || t > 256) {
                fprintf(stderr, "bench_queue: --threads wants 0..256, not '%s'\n", argv[i]);
                return 2;
            }
            c.threads = (uint32_t)t;
        } else if (!strcmp(argv[i], "--only") && i + 1 < argc) {
            only = argv[++i]; /* for profiling one part: "c", "ab", ... */
        } else if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_queue [--quick] [--threads N] [--only PARTS]  (N = 0: kiln's "
                   "default; PARTS: letters of a, b, c)\n");
            return 0;
        } else {
            fprintf(stderr,
                    "bench_queue: unknown argument '%s' (usage: bench_queue [--quick] "
                    "[--threads N] [--only PARTS])\n",
                    argv[i]);
            return 2;
        }
    }
    for (size_t i = 0; i < sizeof tile64k; i++)
        tile64k[i] = (uint8_t)(i * 31 + 7);
    for (size_t i = 0; i < sizeof image256; i++)
        image256[i] = (uint8_t)(i * 13 + 5);

    bench asy, ser;
    bench_init(&asy, KILN_EXEC_ASYNC, c.threads);
    bench_init(&ser, KILN_EXEC_SERIAL, c.threads);
    printf("bench_queue: async device with %u worker threads (requested %u), serial device; "
           "%d repetitions, median shown%s\n",
           kiln_device_num_threads(asy.dev), c.threads, c.reps, c.reps < 7 ? " (--quick)" : "");
    printf("ringW / xferW: producer waits for a command slot / transfer ring space during the "
           "row's repetitions;\npre: repetitions preempted (involuntary context switch), clean: "
           "median of the others\n");
    print_host("start");

    if (strchr(only, 'a')) {
        header("(a) producer cost: issuing loop only, batches of 256 then an untimed kiln_finish");
        producer_cost(&asy, &c, "update 64 B -> DEFAULT buffer", issue_update64);
        producer_cost(&ser, &c, "update 64 B -> DEFAULT buffer", issue_update64);
        producer_cost(&asy, &c, "copy 16x16 RGBA8 tex -> tex", issue_copy16);
        producer_cost(&ser, &c, "copy 16x16 RGBA8 tex -> tex", issue_copy16);
        producer_cost(&asy, &c, "update 32x32 RGBA8, packed rows", issue_update32_packed);
        producer_cost(&ser, &c, "update 32x32 RGBA8, packed rows", issue_update32_packed);
        producer_cost(&asy, &c, "update 32x32 RGBA8, 1 KiB pitch", issue_update32_strided);
        producer_cost(&ser, &c, "update 32x32 RGBA8, 1 KiB pitch", issue_update32_strided);
    }

    if (strchr(only, 'b')) {
        header("(b) end to end: N commands then kiln_finish");
        end_to_end(&asy, &c, "update 64 B, 1 buffer", issue_update64, 1);
        end_to_end(&ser, &c, "update 64 B, 1 buffer", issue_update64, 1);
        end_to_end(&asy, &c, "update 64 B, 8 buffers", issue_update64, NRES);
        end_to_end(&ser, &c, "update 64 B, 8 buffers", issue_update64, NRES);
        end_to_end(&asy, &c, "copy 16x16, 1 dst texture", issue_copy16, 1);
        end_to_end(&ser, &c, "copy 16x16, 1 dst texture", issue_copy16, 1);
        end_to_end(&asy, &c, "copy 16x16, 8 dst textures", issue_copy16, NRES);
        end_to_end(&ser, &c, "copy 16x16, 8 dst textures", issue_copy16, NRES);
    }

    if (strchr(only, 'c'))
        overlap(&ser, &asy, &c);

    print_host("end");
    print_stats(&asy);
    print_stats(&ser);
    bench_fini(&asy);
    bench_fini(&ser);
    return 0;
}
