/*
 * bench_sync - what synchronization costs, and what several contexts buy.
 *
 *  (a) CPU round trip: kiln_timeline_signal, then kiln_fence_wait on the
 *      fence it has just signaled; once with one fence created up front,
 *      once creating and destroying a fence per round trip.
 *  (b) context round trip after an empty stream: kiln_context_signal (or
 *      insert_fence, or a sync token) on a context with nothing queued, then
 *      a client wait on it.
 *  (c) cross-context ping-pong, in round trips per second:
 *      - server waits only: thread A queues "signal a=v; server-wait b>=v",
 *        thread B queues "server-wait a>=v; signal b=v"; nobody blocks, the
 *        chain resolves inside kiln; the time runs until b reaches N;
 *      - the same with a 64-byte update before each signal (each hop then
 *        goes through a worker);
 *      - client waits: A signals and blocks in kiln_fence_wait on b, B
 *        blocks on a then signals: two thread wake-ups per round trip.
 *  (d) throughput: 2 independent streams of N x (update 1 KiB into a DEFAULT
 *      buffer, copy it to another), either both on one context fed by one
 *      thread (2N pairs), or each on its own context fed by its own thread;
 *      time until both are finished. ratio = one_context / two_contexts
 *      (> 1: two contexts are faster). Interleaved repetitions.
 *
 * Every figure is the median of several repetitions (min and max shown).
 * Timing uses clock_gettime(CLOCK_MONOTONIC).
 *
 * Usage: bench_sync [--quick] [--threads N]   (N = 0: kiln's default)
 */
#include "kiln.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHECK(call)                                                                                \
    do {                                                                                           \
        kiln_result r_ = (call);                                                                   \
        if (r_ != KILN_OK) {                                                                       \
            fprintf(stderr, "bench_sync: %s failed: %s (sync.c:%d)\n", #call,                      \
                    kiln_result_string(r_), __LINE__);                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#define MAX_REPS 15
#define PAIR_BYTES 1024

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

typedef struct config {
    int reps;
    uint32_t cpu_rt;     /* (a) round trips per repetition */
    uint32_t ctx_rt;     /* (b) */
    uint32_t ping;       /* (c) server-wait ping-pong round trips */
    uint32_t ping_cli;   /* (c) client-wait ping-pong round trips */
    uint32_t pairs;      /* (d) pairs per stream */
    uint32_t threads;
} config;

static void header(const char *title)
{
    printf("\n%s\n", title);
    printf("%-44s %-7s %8s %12s %12s %12s  %s\n", "test", "mode", "n/rep", "median", "min", "max",
           "unit");
}

static void row(const char *test, const char *mode, uint32_t n, summary s, const char *unit)
{
    printf("%-44s %-7s %8u %12.1f %12.1f %12.1f  %s\n", test, mode, n, s.median, s.min, s.max,
           unit);
}

static const char *mode_name(kiln_exec_mode m)
{
    return m == KILN_EXEC_SERIAL ? "serial" : "async";
}

static kiln_device *make_device(kiln_exec_mode mode, uint32_t threads)
{
    kiln_device_desc d = {.exec_mode = mode, .num_threads = threads};
    kiln_device *dev;
    CHECK(kiln_device_create(&d, &dev));
    return dev;
}

/* ---------------------------------------------------------------------------
 * (a) CPU signal + wait
 * ------------------------------------------------------------------------- */

static void cpu_round_trips(kiln_device *dev, const config *c, const char *mode)
{
    double v[MAX_REPS], w[MAX_REPS];
    for (int r = 0; r < c->reps; r++) {
        kiln_timeline tl;
        kiln_fence f;
        CHECK(kiln_create_timeline(dev, 0, &tl));
        CHECK(kiln_create_fence(dev, tl, 1, &f));
        uint64_t t0 = now_ns();
        for (uint32_t i = 1; i <= c->cpu_rt; i++) {
            CHECK(kiln_timeline_signal(dev, tl, i));
            CHECK(kiln_fence_wait(dev, f, UINT64_MAX));
        }
        v[r] = (double)(now_ns() - t0) / c->cpu_rt;
        CHECK(kiln_destroy_fence(dev, f));

        uint64_t base = c->cpu_rt;
        t0 = now_ns();
        for (uint32_t i = 1; i <= c->cpu_rt; i++) {
            CHECK(kiln_create_fence(dev, tl, base + i, &f));
            CHECK(kiln_timeline_signal(dev, tl, base + i));
            CHECK(kiln_fence_wait(dev, f, UINT64_MAX));
            CHECK(kiln_destroy_fence(dev, f));
        }
        w[r] = (double)(now_ns() - t0) / c->cpu_rt;
        CHECK(kiln_destroy_timeline(dev, tl));
    }
    row("cpu signal + wait (one fence)", mode, c->cpu_rt, summarize(v, c->reps), "ns/rt");
    row("cpu create fence + signal + wait + destroy", mode, c->cpu_rt, summarize(w, c->reps),
        "ns/rt");
}

/* ---------------------------------------------------------------------------
 * (b) context completion point + client wait, empty stream
 * ------------------------------------------------------------------------- */

static void ctx_round_trips(kiln_device *dev, const config *c, const char *mode)
{
    kiln_context *ctx;
    CHECK(kiln_context_create(dev, &ctx));
    double vs[MAX_REPS], vf[MAX_REPS], vt[MAX_REPS];
    uint64_t value = 0;
    kiln_timeline tl;
    CHECK(kiln_create_timeline(dev, 0, &tl));
    for (int r = 0; r < c->reps; r++) {
        uint64_t t0 = now_ns();
        for (uint32_t i = 0; i < c->ctx_rt; i++) {
            kiln_fence f;
            value++;
            CHECK(kiln_context_signal(ctx, tl, value));
            CHECK(kiln_create_fence(dev, tl, value, &f));
            CHECK(kiln_fence_wait(dev, f, UINT64_MAX));
            CHECK(kiln_destroy_fence(dev, f));
        }
        vs[r] = (double)(now_ns() - t0) / c->ctx_rt;

        t0 = now_ns();
        for (uint32_t i = 0; i < c->ctx_rt; i++) {
            kiln_fence f;
            CHECK(kiln_context_insert_fence(ctx, &f));
            CHECK(kiln_fence_wait(dev, f, UINT64_MAX));
            CHECK(kiln_destroy_fence(dev, f));
        }
        vf[r] = (double)(now_ns() - t0) / c->ctx_rt;

        t0 = now_ns();
        for (uint32_t i = 0; i < c->ctx_rt; i++) {
            kiln_sync_token t;
            CHECK(kiln_context_sync_token(ctx, &t));
            CHECK(kiln_wait_sync_token(dev, t, UINT64_MAX));
        }
        vt[r] = (double)(now_ns() - t0) / c->ctx_rt;
    }
    row("context_signal + create fence + wait", mode, c->ctx_rt, summarize(vs, c->reps), "ns/rt");
    row("insert_fence + wait + destroy", mode, c->ctx_rt, summarize(vf, c->reps), "ns/rt");
    row("sync_token + wait_sync_token", mode, c->ctx_rt, summarize(vt, c->reps), "ns/rt");
    CHECK(kiln_destroy_timeline(dev, tl));
    CHECK(kiln_context_destroy(ctx));
}

/* ---------------------------------------------------------------------------
 * (c) cross-context ping-pong
 * ------------------------------------------------------------------------- */

typedef struct ping {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_timeline mine, theirs; /* signal mine, wait on theirs */
    kiln_buffer buf;            /* with_work: updated before each signal */
    uint32_t n;
    int first;     /* 1: signals first (A), 0: waits first (B) */
    int with_work;
    int client;    /* client waits instead of server waits */
} ping;

static const uint8_t payload64[64] = {1, 2, 3, 4, 5, 6, 7, 8};

static void wait_value(ping *p, kiln_timeline tl, uint64_t v)
{
    kiln_fence f;
    CHECK(kiln_create_fence(p->dev, tl, v, &f));
    if (p->client)
        CHECK(kiln_fence_wait(p->dev, f, UINT64_MAX));
    else
        CHECK(kiln_context_wait(p->ctx, f));
    CHECK(kiln_destroy_fence(p->dev, f));
}

static void signal_value(ping *p, uint64_t v)
{
    if (p->with_work) {
        kiln_box box = {(uint32_t)(v % 64) * 64, 0, 0, (uint32_t)(v % 64) * 64 + 64, 1, 1};
        CHECK(kiln_update_subresource(p->ctx, kiln_buffer_resource(p->buf), 0, &box, payload64, 0,
                                      0));
    }
    CHECK(kiln_context_signal(p->ctx, p->mine, v));
}

static void *ping_main(void *arg)
{
    ping *p = arg;
    for (uint64_t v = 1; v <= p->n; v++) {
        if (p->first) {
            signal_value(p, v);
            wait_value(p, p->theirs, v);
        } else {
            wait_value(p, p->theirs, v);
            signal_value(p, v);
        }
    }
    return NULL;
}

/* One repetition: round trips per second. */
static double ping_once(kiln_device *dev, uint32_t n, int with_work, int client)
{
    ping a = {.dev = dev, .n = n, .first = 1, .with_work = with_work, .client = client};
    ping b = {.dev = dev, .n = n, .first = 0, .with_work = with_work, .client = client};
    CHECK(kiln_context_create(dev, &a.ctx));
    CHECK(kiln_context_create(dev, &b.ctx));
    CHECK(kiln_create_timeline(dev, 0, &a.mine));
    CHECK(kiln_create_timeline(dev, 0, &b.mine));
    a.theirs = b.mine;
    b.theirs = a.mine;
    kiln_buffer_desc bd = {.size = 4096, .bind_flags = KILN_BIND_VERTEX_BUFFER};
    CHECK(kiln_create_buffer(dev, &bd, NULL, &a.buf));
    CHECK(kiln_create_buffer(dev, &bd, NULL, &b.buf));
    kiln_fence end;
    CHECK(kiln_create_fence(dev, b.mine, n, &end));

    uint64_t t0 = now_ns();
    pthread_t ta, tb;
    if (pthread_create(&ta, NULL, ping_main, &a) || pthread_create(&tb, NULL, ping_main, &b)) {
        fprintf(stderr, "bench_sync: pthread_create failed\n");
        exit(1);
    }
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    CHECK(kiln_fence_wait(dev, end, UINT64_MAX));
    double s = (double)(now_ns() - t0) / 1e9;

    CHECK(kiln_destroy_fence(dev, end));
    CHECK(kiln_context_destroy(a.ctx));
    CHECK(kiln_context_destroy(b.ctx));
    CHECK(kiln_destroy_timeline(dev, a.mine));
    CHECK(kiln_destroy_timeline(dev, b.mine));
    CHECK(kiln_destroy_buffer(dev, a.buf));
    CHECK(kiln_destroy_buffer(dev, b.buf));
    return n / s;
}

static void ping_pong(kiln_device *dev, const config *c, const char *mode)
{
    double v[MAX_REPS], w[MAX_REPS], x[MAX_REPS];
    for (int r = 0; r < c->reps; r++) {
        v[r] = ping_once(dev, c->ping, 0, 0);
        w[r] = ping_once(dev, c->ping, 1, 0);
        x[r] = ping_once(dev, c->ping_cli, 0, 1);
    }
    row("server waits, empty streams", mode, c->ping, summarize(v, c->reps), "rt/s");
    row("server waits, 64 B update before each signal", mode, c->ping, summarize(w, c->reps),
        "rt/s");
    row("client waits (2 thread wake-ups per rt)", mode, c->ping_cli, summarize(x, c->reps), "rt/s");
}

/* ---------------------------------------------------------------------------
 * (d) two contexts versus one
 * ------------------------------------------------------------------------- */

typedef struct stream {
    kiln_context *ctx;
    kiln_buffer src, dst;
} stream;

typedef struct feeder {
    stream *s[2];
    int ns;
    uint32_t pairs;
} feeder;

static uint8_t pair_data[PAIR_BYTES];

static void issue_pair(stream *s, uint32_t i)
{
    pair_data[0] = (uint8_t)i; /* same bytes otherwise; only the cost matters */
    CHECK(kiln_update_subresource(s->ctx, kiln_buffer_resource(s->src), 0, NULL, pair_data, 0, 0));
    uint32_t off = (i % 16) * PAIR_BYTES;
    kiln_box box = {0, 0, 0, PAIR_BYTES, 1, 1};
    CHECK(kiln_copy_subresource_region(s->ctx, kiln_buffer_resource(s->dst), 0, off, 0, 0,
                                       kiln_buffer_resource(s->src), 0, &box));
}

static void *feed_main(void *arg)
{
    feeder *f = arg;
    for (uint32_t i = 0; i < f->pairs; i++)
        for (int k = 0; k < f->ns; k++)
            issue_pair(f->s[k], i);
    for (int k = 0; k < f->ns; k++)
        CHECK(kiln_finish(f->s[k]->ctx));
    return NULL;
}

/* ms for 2 streams of `pairs` pairs; two_contexts: each on its own context
 * and thread; else both on one context, fed by the calling thread. */
static double streams_once(kiln_device *dev, uint32_t pairs, int two_contexts)
{
    stream s[2];
    kiln_buffer_desc src = {.size = PAIR_BYTES, .bind_flags = KILN_BIND_VERTEX_BUFFER};
    kiln_buffer_desc dst = {.size = PAIR_BYTES * 16, .bind_flags = KILN_BIND_VERTEX_BUFFER};
    kiln_context *one = NULL;
    if (!two_contexts)
        CHECK(kiln_context_create(dev, &one));
    for (int k = 0; k < 2; k++) {
        if (two_contexts)
            CHECK(kiln_context_create(dev, &s[k].ctx));
        else
            s[k].ctx = one;
        CHECK(kiln_create_buffer(dev, &src, NULL, &s[k].src));
        CHECK(kiln_create_buffer(dev, &dst, NULL, &s[k].dst));
    }
    uint64_t t0 = now_ns();
    if (two_contexts) {
        feeder f0 = {{&s[0]}, 1, pairs}, f1 = {{&s[1]}, 1, pairs};
        pthread_t t0h, t1h;
        if (pthread_create(&t0h, NULL, feed_main, &f0) || pthread_create(&t1h, NULL, feed_main, &f1)) {
            fprintf(stderr, "bench_sync: pthread_create failed\n");
            exit(1);
        }
        pthread_join(t0h, NULL);
        pthread_join(t1h, NULL);
    } else {
        feeder f = {{&s[0], &s[1]}, 2, pairs};
        feed_main(&f);
    }
    double ms = (double)(now_ns() - t0) / 1e6;
    for (int k = 0; k < 2; k++) {
        if (two_contexts)
            CHECK(kiln_context_destroy(s[k].ctx));
        CHECK(kiln_destroy_buffer(dev, s[k].src));
        CHECK(kiln_destroy_buffer(dev, s[k].dst));
    }
    if (one)
        CHECK(kiln_context_destroy(one));
    return ms;
}

static void two_vs_one(kiln_device *dev, const config *c, const char *mode)
{
    double one[MAX_REPS], two[MAX_REPS], ratio[MAX_REPS];
    for (int r = 0; r < c->reps; r++) {
        one[r] = streams_once(dev, c->pairs, 0);
        two[r] = streams_once(dev, c->pairs, 1);
        ratio[r] = one[r] / two[r];
    }
    summary s1 = summarize(one, c->reps), s2 = summarize(two, c->reps);
    row("1 context, 1 thread, 2N pairs", mode, 2 * c->pairs, s1, "ms");
    row("2 contexts, 2 threads, N pairs each", mode, 2 * c->pairs, s2, "ms");
    summary rs = summarize(ratio, c->reps);
    printf("%-44s %-7s %8s %12.2f %12.2f %12.2f  x\n", "  ratio one/two (per repetition)", mode, "",
           rs.median, rs.min, rs.max);
    printf("%-44s %-7s %8s %12.2f\n", "  (ratio of the medians)", mode, "", s1.median / s2.median);
    printf("%-44s %-7s %8s %12.0f %12s %12s  pairs/s\n", "  throughput, 2 contexts", mode, "",
           2.0 * c->pairs / (s2.median / 1e3), "", "");
}

/* ---------------------------------------------------------------------------
 * main
 * ------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    config c = {.reps = 7, .cpu_rt = 200000, .ctx_rt = 100000, .ping = 50000, .ping_cli = 20000,
                .pairs = 20000, .threads = 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            c.reps = 3;
            c.cpu_rt = 20000;
            c.ctx_rt = 10000;
            c.ping = 5000;
            c.ping_cli = 2000;
            c.pairs = 2000;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long t = strtoul(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] < '0' || argv[i][0] > '9' || t > 256) {
                fprintf(stderr, "bench_sync: --threads wants 0..256, not '%s'\n", argv[i]);
                return 2;
            }
            c.threads = (uint32_t)t;
        } else if (!strcmp(argv[i], "--help")) {
            printf("usage: bench_sync [--quick] [--threads N]  (N = 0: kiln's default)\n");
            return 0;
        } else {
            fprintf(stderr,
                    "bench_sync: unknown argument '%s' (usage: bench_sync [--quick] "
                    "[--threads N])\n",
                    argv[i]);
            return 2;
        }
    }
    for (size_t i = 0; i < sizeof pair_data; i++)
        pair_data[i] = (uint8_t)(i * 31 + 7);

    kiln_device *asy = make_device(KILN_EXEC_ASYNC, c.threads);
    kiln_device *ser = make_device(KILN_EXEC_SERIAL, 0);
    printf("bench_sync: async device with %u worker threads (requested %u), serial device; "
           "%d repetitions, median shown%s\n",
           kiln_device_num_threads(asy), c.threads, c.reps, c.reps < 7 ? " (--quick)" : "");

    header("(a) CPU kiln_timeline_signal, then kiln_fence_wait on the signaled fence");
    cpu_round_trips(asy, &c, mode_name(KILN_EXEC_ASYNC));
    cpu_round_trips(ser, &c, mode_name(KILN_EXEC_SERIAL));

    header("(b) completion point on an empty context stream, then a client wait");
    ctx_round_trips(asy, &c, mode_name(KILN_EXEC_ASYNC));
    ctx_round_trips(ser, &c, mode_name(KILN_EXEC_SERIAL));

    header("(c) cross-context ping-pong: A signals, B waits and signals back, A waits");
    ping_pong(asy, &c, mode_name(KILN_EXEC_ASYNC));
    ping_pong(ser, &c, mode_name(KILN_EXEC_SERIAL));

    header("(d) 2 streams of N x (update 1 KiB -> DEFAULT buffer, copy 1 KiB), until finished");
    two_vs_one(asy, &c, mode_name(KILN_EXEC_ASYNC));
    two_vs_one(ser, &c, mode_name(KILN_EXEC_SERIAL));

    kiln_device_destroy(asy);
    kiln_device_destroy(ser);
    return 0;
}
