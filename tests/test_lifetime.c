/*
 * Object lifetime across threads (DESIGN.md invariants 5 and 6; seed 002's
 * "lifetime of objects across threads"):
 *  - destroying a resource invalidates its handle at once, while commands
 *    already queued on it still complete with the right bytes;
 *  - destroying the device completes queued work first and frees every
 *    byte it took from the allocator;
 *  - two devices in one process are independent;
 *  - device functions called from several threads at once keep the handle
 *    table consistent;
 *  - an allocator that fails the Nth allocation gives OUT_OF_MEMORY (or
 *    success), never a crash or a leak.
 *
 * Memory is counted by a tracking kiln_allocator (live bytes, and a check
 * that every free passes the size of its allocation). Test gates
 * (api/test_hooks.h) keep commands queued when a test needs them to be.
 * Worker threads of the test never call CHECK (the harness counters are not
 * thread-safe): they count their own failures, which main then checks.
 */
#define _POSIX_C_SOURCE 200809L

#include "api/test_hooks.h"
#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static void step(const char *name)
{
    printf("%s\n", name);
    fflush(stdout);
}

/* ---- tracking allocator with failure injection ---- */

typedef struct tracker {
    atomic_llong live;     /* bytes allocated and not freed */
    atomic_llong bad_free; /* frees with a wrong size or a foreign pointer */
    atomic_llong count;    /* allocations since arm() */
    atomic_llong fail_at;  /* 0: never; n: the nth allocation after arm() fails */
    atomic_int failed;     /* the injected failure happened */
} tracker;

#define HDR 64u
#define MAGIC 0x6b696c6e6b696c6eull

static void *t_alloc(size_t size, void *user)
{
    tracker *t = user;
    long long n = atomic_fetch_add(&t->count, 1) + 1;
    long long fa = atomic_load(&t->fail_at);
    if (fa && n == fa) {
        atomic_store(&t->failed, 1);
        return NULL;
    }
    unsigned char *p = malloc(size + HDR);
    if (!p)
        return NULL;
    uint64_t hdr[2] = {MAGIC, (uint64_t)size};
    memcpy(p, hdr, sizeof hdr);
    atomic_fetch_add(&t->live, (long long)size);
    return p + HDR;
}

static void t_free(void *ptr, size_t size, void *user)
{
    tracker *t = user;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - HDR;
    uint64_t hdr[2];
    memcpy(hdr, p, sizeof hdr);
    if (hdr[0] != MAGIC || hdr[1] != (uint64_t)size) {
        atomic_fetch_add(&t->bad_free, 1);
        if (hdr[0] != MAGIC)
            return; /* not ours: do not touch */
    }
    atomic_fetch_sub(&t->live, (long long)hdr[1]);
    memset(p, 0, sizeof hdr);
    free(p);
}

static void tracker_init(tracker *t)
{
    atomic_init(&t->live, 0);
    atomic_init(&t->bad_free, 0);
    atomic_init(&t->count, 0);
    atomic_init(&t->fail_at, 0);
    atomic_init(&t->failed, 0);
}

static void arm(tracker *t, long long n)
{
    atomic_store(&t->failed, 0);
    atomic_store(&t->count, 0);
    atomic_store(&t->fail_at, n);
}

static int disarm(tracker *t)
{
    atomic_store(&t->fail_at, 0);
    return atomic_load(&t->failed);
}

static kiln_device_desc tracked_desc(tracker *t, kiln_exec_mode mode, uint32_t threads)
{
    kiln_device_desc d = {0};
    d.exec_mode = mode;
    d.num_threads = threads;
    d.allocator.alloc = t_alloc;
    d.allocator.free = t_free;
    d.allocator.user = t;
    d.log_fn = th_log_fn;
    return d;
}

static void check_tracker_empty(tracker *t, const char *what)
{
    long long live = atomic_load(&t->live), bad = atomic_load(&t->bad_free);
    th_check(live == 0, what, __FILE__, __LINE__);
    if (live)
        fprintf(stderr, "    %lld bytes still live\n", live);
    CHECK_EQ_INT(bad, 0);
}

/* ---- helpers ---- */

static int logged_once_id(kiln_log_id id)
{
    int ok = th_log_count() == 1 && th_log_last() == id;
    if (!ok)
        fprintf(stderr, "    logged %u times, last id %s (expected once %s)\n", th_log_count(),
                kiln_log_id_string(th_log_last()), kiln_log_id_string(id));
    return ok;
}

typedef struct mode_cfg {
    kiln_exec_mode mode;
    uint32_t threads;
    const char *name;
} mode_cfg;

static const mode_cfg MODES[] = {
    {KILN_EXEC_ASYNC, 0, "async"},
    {KILN_EXEC_ASYNC, 1, "async-1-thread"},
    {KILN_EXEC_SERIAL, 0, "serial"},
};
#define NMODES (sizeof MODES / sizeof MODES[0])

#define RB(b) kiln_buffer_resource(b)
#define RT(t) kiln_texture_resource(t)
#define W 8u
#define H 8u
#define TEXBYTES (W * H * 4u)

static void pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 53u + i * 11u + 3u);
}

static kiln_device_stats stats(kiln_device *d)
{
    kiln_device_stats s;
    memset(&s, 0, sizeof s);
    CHECK_RESULT(kiln_device_get_stats(d, &s), KILN_OK);
    return s;
}

static kiln_texture texture(kiln_device *d, kiln_usage usage, uint32_t bind, const uint8_t *init)
{
    kiln_texture2d_desc td = {0};
    td.width = W;
    td.height = H;
    td.mip_levels = 1;
    td.format = KILN_FORMAT_R8G8B8A8_UNORM;
    td.usage = usage;
    td.bind_flags = bind;
    kiln_subresource_data sd = {init, 0};
    kiln_texture t = {0};
    CHECK_RESULT(kiln_create_texture2d(d, &td, init ? &sd : NULL, &t), KILN_OK);
    return t;
}

static kiln_buffer buffer(kiln_device *d, kiln_usage usage, uint32_t size, const uint8_t *init)
{
    kiln_buffer_desc bd = {0};
    bd.size = size;
    bd.usage = usage;
    bd.bind_flags = usage == KILN_USAGE_STAGING ? 0u : (uint32_t)KILN_BIND_VERTEX_BUFFER;
    kiln_subresource_data sd = {init, 0};
    kiln_buffer b = {0};
    CHECK_RESULT(kiln_create_buffer(d, &bd, init ? &sd : NULL, &b), KILN_OK);
    return b;
}

/* Maps sub 0 of a staging resource for READ and compares `rows` rows of
 * `row` bytes (a buffer is one row). Returns 1 when equal. */
static int read_equals(kiln_context *ctx, kiln_resource r, const uint8_t *expect, uint32_t row,
                       uint32_t rows)
{
    kiln_mapped_subresource m;
    kiln_result res = kiln_map(ctx, r, 0, KILN_MAP_READ, 0, &m);
    if (res != KILN_OK) {
        fprintf(stderr, "    map for read: %s\n", kiln_result_string(res));
        return 0;
    }
    int ok = m.data != NULL;
    for (uint32_t y = 0; ok && y < rows; y++)
        ok = memcmp((const uint8_t *)m.data + (size_t)y * m.row_pitch, expect + (size_t)y * row,
                    row) == 0;
    if (kiln_unmap(ctx, r, 0) != KILN_OK)
        ok = 0;
    return ok;
}

/* ------------------------------------------------------------------------ */

/* Destroy a resource while commands that read or write it are certainly
 * still queued (a gate holds their destinations): the handle is dead at
 * once, the commands complete with the right bytes. */
static void test_destroy_while_queued(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("destroying a resource with queued commands");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[TEXBYTES], pb[256];
    pattern(p, TEXBYTES, 1);
    pattern(pb, 256, 2);
    const uint32_t bind = KILN_BIND_SHADER_RESOURCE | KILN_BIND_RENDER_TARGET;
    kiln_texture tt = texture(dev, KILN_USAGE_DEFAULT, bind, NULL);
    kiln_texture tu = texture(dev, KILN_USAGE_DEFAULT, bind, NULL);
    kiln_texture tw = texture(dev, KILN_USAGE_DEFAULT, bind, NULL);
    kiln_texture s = texture(dev, KILN_USAGE_STAGING, 0, NULL);
    kiln_texture s2 = texture(dev, KILN_USAGE_STAGING, 0, NULL);
    kiln_buffer bd = buffer(dev, KILN_USAGE_DEFAULT, 256, NULL);
    kiln_buffer bs = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_rtv rtv_t = {0}, rtv_w = {0};
    kiln_srv srv_t = {0};
    CHECK_RESULT(kiln_create_rtv(dev, tt, NULL, &rtv_t), KILN_OK);
    CHECK_RESULT(kiln_create_srv(dev, tt, NULL, &srv_t), KILN_OK);
    CHECK_RESULT(kiln_create_rtv(dev, tw, NULL, &rtv_w), KILN_OK);

    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource held[5] = {RT(tu), RT(s), RT(s2), RB(bs), RT(tw)};
    int writes[5] = {1, 1, 1, 1, 1};
    CHECK_RESULT(kiln_test_hold(ctx, g, held, writes, 5), KILN_OK);
    kiln_test_gate_wait_entered(g, 1);

    /* T: updated (runs now), copied to U behind the gate, destroyed; then U
     * copied to S behind the gate and destroyed too. */
    CHECK_RESULT(kiln_update_subresource(ctx, RT(tt), 0, NULL, p, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RT(tu), RT(tt)), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, tt), KILN_OK);
    kiln_texture2d_desc td;
    CHECK_FAILS(kiln_texture_get_desc(dev, tt, &td), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_copy_resource(ctx, RT(s), RT(tt)), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_update_subresource(ctx, RT(tt), 0, NULL, p, 0, 0), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_texture(dev, tt), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    static const float red[4] = {1, 0, 0, 1};
    CHECK_FAILS(kiln_clear_rtv(ctx, rtv_t, red), KILN_E_INVALID_HANDLE,
                KILN_LOG_VIEW_RESOURCE_DESTROYED);
    CHECK_RESULT(kiln_destroy_rtv(dev, rtv_t), KILN_OK);
    CHECK_RESULT(kiln_destroy_srv(dev, srv_t), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RT(s), RT(tu)), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, tu), KILN_OK);

    /* W: cleared through a view, copied to S2 behind the gate; view and
     * texture destroyed before either command ran. */
    static const float color[4] = {0.0f, 1.0f, 0.2f, 1.0f};
    CHECK_RESULT(kiln_clear_rtv(ctx, rtv_w, color), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RT(s2), RT(tw)), KILN_OK);
    CHECK_RESULT(kiln_destroy_rtv(dev, rtv_w), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, tw), KILN_OK);

    /* A buffer: updated, copied behind the gate, destroyed. */
    CHECK_RESULT(kiln_update_subresource(ctx, RB(bd), 0, NULL, pb, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(bs), RB(bd)), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, bd), KILN_OK);
    kiln_buffer_desc bdesc;
    CHECK_FAILS(kiln_buffer_get_desc(dev, bd, &bdesc), KILN_E_INVALID_HANDLE,
                KILN_LOG_HANDLE_STALE);

    /* Still queued: gate, T->U, U->S, clear W, W->S2, bd->bs. (The updates
     * of T and bd wait for nothing: in SERIAL mode they have run.) */
    kiln_device_stats st = stats(dev);
    CHECK(st.commands_in_flight >= 6);
    if (mc->mode == KILN_EXEC_SERIAL)
        CHECK_EQ_INT(st.commands_in_flight, 6);
    CHECK_EQ_INT(kiln_test_gate_entered(g), 1);

    th_log_reset();
    kiln_test_gate_open(g);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK_EQ_INT(th_log_count(), 0); /* no command failed */
    st = stats(dev);
    CHECK_EQ_INT(st.commands_executed, st.commands_queued);
    CHECK(read_equals(ctx, RT(s), p, W * 4, H));
    uint8_t green[TEXBYTES];
    for (uint32_t i = 0; i < W * H; i++) {
        green[i * 4 + 0] = 0;
        green[i * 4 + 1] = 255;
        green[i * 4 + 2] = 51; /* 0.2 * 255 = 51 */
        green[i * 4 + 3] = 255;
    }
    CHECK(read_equals(ctx, RT(s2), green, W * 4, H));
    CHECK(read_equals(ctx, RB(bs), pb, 256, 1));

    kiln_test_gate_destroy(g);
    CHECK_RESULT(kiln_destroy_texture(dev, s), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, s2), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, bs), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "all memory returned after destroying the device");
}

/* Destroying a mapped resource unmaps it: commands waiting for its Unmap
 * run and see the bytes written through the map. */
static void test_destroy_mapped(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("destroying a mapped resource releases the commands behind it");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[256];
    pattern(p, 256, 3);
    kiln_buffer a = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_buffer b = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_buffer c = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, p, 256);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    CHECK_EQ_INT(stats(dev).commands_in_flight, 1);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_FAILS(kiln_unmap(ctx, RB(a), 0), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    CHECK(read_equals(ctx, RB(b), p, 256, 1));

    /* A READ-mapped resource destroyed while a writer waits for it. */
    CHECK_RESULT(kiln_map(ctx, RB(c), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(c), RB(b)), KILN_OK);
    CHECK_FAILS(kiln_finish(ctx), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    CHECK_RESULT(kiln_destroy_buffer(dev, c), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats st = stats(dev);
    CHECK_EQ_INT(st.commands_executed, st.commands_queued);

    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "all memory returned after destroying the device");
}

/* Destroy the device with work queued behind CPU maps, uploads pending in
 * the transfer ring, resources mapped (READ, WRITE, DISCARD) and resources
 * destroyed whose commands have not run. No hang, no failure, no leak. */
static void test_device_destroy_with_work(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("destroying the device with queued work and mapped resources");
    tracker t;
    tracker_init(&t);
    kiln_device_desc desc = tracked_desc(&t, mc->mode, mc->threads);
    desc.transfer_ring_size = 64 * 1024;
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[4096];
    pattern(p, sizeof p, 4);
    kiln_buffer a = buffer(dev, KILN_USAGE_STAGING, 4096, NULL);
    kiln_buffer b = buffer(dev, KILN_USAGE_STAGING, 4096, NULL);
    kiln_buffer c = buffer(dev, KILN_USAGE_STAGING, 4096, p);
    kiln_buffer x = buffer(dev, KILN_USAGE_DEFAULT, 4096, NULL);
    kiln_buffer dyn = buffer(dev, KILN_USAGE_DYNAMIC, 4096, p);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_map(ctx, RB(c), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK); /* waits for a */
    CHECK_RESULT(kiln_copy_resource(ctx, RB(a), RB(x)), KILN_OK); /* waits for a */
    for (uint32_t i = 0; i < 8; i++) /* WAR behind the copy: uploads stay in the ring */
        CHECK_RESULT(kiln_update_subresource(ctx, RB(x), 0, NULL, p, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(c), RB(b)), KILN_OK); /* waits for c's READ map */
    CHECK_RESULT(kiln_copy_resource(ctx, RB(x), RB(dyn)), KILN_OK);
    CHECK_RESULT(kiln_map(ctx, RB(dyn), 0, KILN_MAP_WRITE_DISCARD, 0, &m), KILN_OK);
    CHECK_EQ_INT(stats(dev).commands_in_flight, 12);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK); /* with its commands queued */
    th_log_reset();
    kiln_device_destroy(dev);
    CHECK_EQ_INT(th_log_count(), 0);
    check_tracker_empty(&t, "all memory returned after destroying a busy device");
}

/* Proof that device destruction runs queued work: a gate command queued
 * behind a CPU map can only be granted after destroy has unmapped. Another
 * thread destroys; this one sees the gate entered, then opens it. */
typedef struct destroyer {
    kiln_device *dev;
    atomic_int done;
} destroyer;

static void *destroyer_main(void *arg)
{
    destroyer *d = arg;
    kiln_device_destroy(d->dev);
    atomic_store(&d->done, 1);
    return NULL;
}

static void test_device_destroy_runs_queued(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("device destroy executes queued commands (a gate behind a map enters)");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer a = buffer(dev, KILN_USAGE_STAGING, 64, NULL);
    kiln_buffer b = buffer(dev, KILN_USAGE_STAGING, 64, NULL);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource ra = RB(a);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &ra, &w, 1), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    CHECK_EQ_INT(kiln_test_gate_entered(g), 0); /* behind the CPU map */

    destroyer d = {dev, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, destroyer_main, &d) == 0);
    kiln_test_gate_wait_entered(g, 1);     /* only the destroy's unmap lets it in */
    CHECK_EQ_INT(atomic_load(&d.done), 0); /* destroy waits for the gate */
    kiln_test_gate_destroy(g);             /* opens it */
    pthread_join(th, NULL);
    CHECK_EQ_INT(atomic_load(&d.done), 1);
    check_tracker_empty(&t, "all memory returned after destroying the device");
}

/* Another thread destroys a resource while this thread's Map of it waits
 * (behind a gate): the handle is dead at once, so the Map fails with
 * HANDLE_STALE once it wakes, and nothing stays mapped or leaks. */
typedef struct map_killer {
    kiln_device *dev;
    kiln_test_gate *gate;
    kiln_buffer victim;
    uint64_t waits_before;
    kiln_result destroy_result;
} map_killer;

static void *map_killer_main(void *arg)
{
    map_killer *k = arg;
    for (;;) {
        kiln_device_stats s;
        if (kiln_device_get_stats(k->dev, &s) != KILN_OK || s.waits_map_conflict > k->waits_before)
            break;
        sched_yield();
    }
    k->destroy_result = kiln_destroy_buffer(k->dev, k->victim);
    kiln_test_gate_open(k->gate);
    return NULL;
}

static void test_destroy_during_map_wait(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("destroying a resource while a Map of it waits");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer a = buffer(dev, KILN_USAGE_STAGING, 64, NULL);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource ra = RB(a);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &ra, &w, 1), KILN_OK);
    map_killer k = {dev, g, a, stats(dev).waits_map_conflict, KILN_E_DEVICE_LOST};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, map_killer_main, &k) == 0);
    kiln_mapped_subresource m;
    th_log_reset();
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_READ, 0, &m), KILN_E_INVALID_HANDLE);
    pthread_join(th, NULL);
    CHECK(logged_once_id(KILN_LOG_HANDLE_STALE));
    CHECK_RESULT(k.destroy_result, KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats st = stats(dev);
    CHECK_EQ_INT(st.commands_executed, st.commands_queued);
    kiln_test_gate_destroy(g);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "all memory returned after destroying the device");
}

/* ---- two devices on two threads ---- */

typedef struct twodev {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gated, t2_done;
    pthread_barrier_t start;
} twodev;

typedef struct devthread {
    twodev *shared;
    int index;
    uint32_t seed;
    tracker t;
    int failures;
    uint64_t expected_queued;
} devthread;

#define TFAIL(dt, ...)                                                                             \
    do {                                                                                           \
        (dt)->failures++;                                                                          \
        fprintf(stderr, "FAIL (thread %d) %s:%d: ", (dt)->index, __FILE__, __LINE__);              \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
    } while (0)
#define TCHECK(dt, e)                                                                              \
    do {                                                                                           \
        if (!(e))                                                                                  \
            TFAIL(dt, "%s", #e);                                                                   \
    } while (0)

/* Updates, copies and reads back `iters` times on one device. */
static void workload(devthread *dt, kiln_device *dev, uint32_t iters, uint32_t seed)
{
    kiln_context *ctx = kiln_device_immediate_context(dev);
    kiln_buffer_desc dd = {4096, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    kiln_buffer_desc sd = {4096, KILN_USAGE_STAGING, 0, 0};
    kiln_buffer d = {0}, s = {0};
    TCHECK(dt, kiln_create_buffer(dev, &dd, NULL, &d) == KILN_OK);
    TCHECK(dt, kiln_create_buffer(dev, &sd, NULL, &s) == KILN_OK);
    uint8_t p[4096];
    for (uint32_t i = 0; i < iters; i++) {
        pattern(p, sizeof p, seed + i);
        TCHECK(dt, kiln_update_subresource(ctx, RB(d), 0, NULL, p, 0, 0) == KILN_OK);
        TCHECK(dt, kiln_copy_resource(ctx, RB(s), RB(d)) == KILN_OK);
        dt->expected_queued += 2;
        kiln_mapped_subresource m;
        kiln_result r = kiln_map(ctx, RB(s), 0, KILN_MAP_READ, 0, &m);
        TCHECK(dt, r == KILN_OK);
        if (r == KILN_OK) {
            if (!m.data || memcmp(m.data, p, sizeof p) != 0)
                TFAIL(dt, "iteration %u: staging bytes differ", i);
            TCHECK(dt, kiln_unmap(ctx, RB(s), 0) == KILN_OK);
        }
    }
    TCHECK(dt, kiln_finish(ctx) == KILN_OK);
    TCHECK(dt, kiln_destroy_buffer(dev, d) == KILN_OK);
    TCHECK(dt, kiln_destroy_buffer(dev, s) == KILN_OK);
}

static void check_device_counts(devthread *dt, kiln_device *dev)
{
    kiln_device_stats st;
    TCHECK(dt, kiln_device_get_stats(dev, &st) == KILN_OK);
    if (st.commands_queued != dt->expected_queued)
        TFAIL(dt, "commands_queued %llu, this thread queued %llu",
              (unsigned long long)st.commands_queued, (unsigned long long)dt->expected_queued);
    TCHECK(dt, st.commands_executed == st.commands_queued);
}

static void *devthread_main(void *arg)
{
    devthread *dt = arg;
    twodev *sh = dt->shared;
    kiln_device_desc desc = tracked_desc(&dt->t, KILN_EXEC_ASYNC, 2);
    kiln_device *dev = NULL;
    if (kiln_device_create(&desc, &dev) != KILN_OK) {
        TFAIL(dt, "kiln_device_create");
        return NULL;
    }
    kiln_context *ctx = kiln_device_immediate_context(dev);

    if (dt->index == 0) {
        /* Device 1 keeps a gate closed while device 2 does all its work. */
        kiln_buffer_desc sd = {64, KILN_USAGE_STAGING, 0, 0};
        kiln_buffer_desc dd = {64, KILN_USAGE_DEFAULT, 0, 0};
        uint8_t p[64];
        pattern(p, 64, 77);
        kiln_subresource_data init = {p, 0};
        kiln_buffer s = {0}, src = {0};
        TCHECK(dt, kiln_create_buffer(dev, &sd, NULL, &s) == KILN_OK);
        TCHECK(dt, kiln_create_buffer(dev, &dd, &init, &src) == KILN_OK);
        kiln_test_gate *g = NULL;
        TCHECK(dt, kiln_test_gate_create(dev, &g) == KILN_OK);
        kiln_resource rs = RB(s);
        int w = 1;
        TCHECK(dt, kiln_test_hold(ctx, g, &rs, &w, 1) == KILN_OK);
        TCHECK(dt, kiln_copy_resource(ctx, RB(s), RB(src)) == KILN_OK);
        dt->expected_queued += 2;
        kiln_test_gate_wait_entered(g, 1);
        pthread_mutex_lock(&sh->mu);
        sh->gated = 1;
        pthread_cond_broadcast(&sh->cv);
        while (!sh->t2_done)
            pthread_cond_wait(&sh->cv, &sh->mu);
        pthread_mutex_unlock(&sh->mu);
        kiln_device_stats st;
        TCHECK(dt, kiln_device_get_stats(dev, &st) == KILN_OK);
        TCHECK(dt, st.commands_in_flight == 2); /* untouched by device 2 */
        TCHECK(dt, kiln_test_gate_entered(g) == 1);
        kiln_test_gate_open(g);
        TCHECK(dt, kiln_finish(ctx) == KILN_OK);
        kiln_mapped_subresource m;
        TCHECK(dt,
               kiln_map(ctx, RB(s), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m) == KILN_OK);
        TCHECK(dt, m.data && memcmp(m.data, p, 64) == 0);
        TCHECK(dt, kiln_unmap(ctx, RB(s), 0) == KILN_OK);
        kiln_test_gate_destroy(g);
        TCHECK(dt, kiln_destroy_buffer(dev, s) == KILN_OK);
        TCHECK(dt, kiln_destroy_buffer(dev, src) == KILN_OK);
    } else {
        pthread_mutex_lock(&sh->mu);
        while (!sh->gated)
            pthread_cond_wait(&sh->cv, &sh->mu);
        pthread_mutex_unlock(&sh->mu);
        workload(dt, dev, 50, dt->seed); /* includes a finish */
        check_device_counts(dt, dev);
        pthread_mutex_lock(&sh->mu);
        sh->t2_done = 1;
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->mu);
    }

    /* Both devices busy at once. */
    pthread_barrier_wait(&sh->start);
    workload(dt, dev, 300, dt->seed + 1000);
    check_device_counts(dt, dev);
    kiln_device_destroy(dev);
    return NULL;
}

static void test_two_devices(void)
{
    step("two devices on two threads are independent");
    twodev sh;
    memset(&sh, 0, sizeof sh);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    pthread_barrier_init(&sh.start, NULL, 2);
    devthread dt[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        memset(&dt[i], 0, sizeof dt[i]);
        dt[i].shared = &sh;
        dt[i].index = i;
        dt[i].seed = 500u * (uint32_t)(i + 1);
        tracker_init(&dt[i].t);
    }
    th_log_reset();
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&th[i], NULL, devthread_main, &dt[i]) == 0);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(dt[i].failures, 0);
        check_tracker_empty(&dt[i].t, "device memory returned");
    }
    CHECK_EQ_INT(th_log_count(), 0);
    pthread_barrier_destroy(&sh.start);
    pthread_cond_destroy(&sh.cv);
    pthread_mutex_destroy(&sh.mu);
}

/* ---- device functions from several threads at once ---- */

enum { K_BUF, K_TEX, K_RTV, K_SRV };

typedef struct item {
    int kind;
    uint32_t id;
    uint32_t tag;    /* buffer: size; texture: height */
    uint32_t tex_id; /* views: their texture (may be destroyed) */
} item;

#define NWORKERS 4
#define ITERS 3000
#define MAXLIVE 48

typedef struct hammer_shared {
    kiln_device *dev;
    pthread_barrier_t publish, checked;
    item live[NWORKERS][MAXLIVE];
    uint32_t nlive[NWORKERS];
} hammer_shared;

typedef struct hammer {
    hammer_shared *sh;
    int index;
    int failures;
    uint32_t stale_expected, wrong_expected;
    uint32_t created, destroyed;
} hammer;

#define HFAIL(h, ...)                                                                              \
    do {                                                                                           \
        (h)->failures++;                                                                           \
        if ((h)->failures < 10) {                                                                  \
            fprintf(stderr, "FAIL (worker %d) %s:%d: ", (h)->index, __FILE__, __LINE__);           \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static void verify_item(hammer *h, const item *it)
{
    kiln_device *dev = h->sh->dev;
    if (it->kind == K_BUF) {
        kiln_buffer_desc d;
        kiln_result r = kiln_buffer_get_desc(dev, (kiln_buffer){it->id}, &d);
        if (r != KILN_OK || d.size != it->tag)
            HFAIL(h, "buffer %#x: %s, size %u, expected %u", it->id, kiln_result_string(r),
                  r == KILN_OK ? d.size : 0, it->tag);
        /* The wrong type is caught. */
        kiln_texture2d_desc td;
        if (kiln_texture_get_desc(dev, (kiln_texture){it->id}, &td) != KILN_E_INVALID_HANDLE)
            HFAIL(h, "buffer %#x accepted as a texture", it->id);
        h->wrong_expected++;
    } else if (it->kind == K_TEX) {
        kiln_texture2d_desc d;
        kiln_result r = kiln_texture_get_desc(dev, (kiln_texture){it->id}, &d);
        if (r != KILN_OK || d.height != it->tag || d.width != (uint32_t)h->index + 1)
            HFAIL(h, "texture %#x: %s, %ux%u, expected %ux%u", it->id, kiln_result_string(r),
                  r == KILN_OK ? d.width : 0, r == KILN_OK ? d.height : 0, h->index + 1, it->tag);
    }
}

static void destroy_item(hammer *h, const item *it)
{
    kiln_device *dev = h->sh->dev;
    kiln_result r = KILN_OK, again = KILN_OK;
    switch (it->kind) {
    case K_BUF: {
        r = kiln_destroy_buffer(dev, (kiln_buffer){it->id});
        kiln_buffer_desc d;
        again = kiln_buffer_get_desc(dev, (kiln_buffer){it->id}, &d);
        break;
    }
    case K_TEX: {
        r = kiln_destroy_texture(dev, (kiln_texture){it->id});
        kiln_texture2d_desc d;
        again = kiln_texture_get_desc(dev, (kiln_texture){it->id}, &d);
        break;
    }
    case K_RTV:
        r = kiln_destroy_rtv(dev, (kiln_rtv){it->id});
        again = kiln_destroy_rtv(dev, (kiln_rtv){it->id});
        break;
    case K_SRV:
        r = kiln_destroy_srv(dev, (kiln_srv){it->id});
        again = kiln_destroy_srv(dev, (kiln_srv){it->id});
        break;
    }
    if (r != KILN_OK)
        HFAIL(h, "destroy kind %d id %#x: %s", it->kind, it->id, kiln_result_string(r));
    if (again != KILN_E_INVALID_HANDLE)
        HFAIL(h, "stale kind %d id %#x accepted: %s", it->kind, it->id, kiln_result_string(again));
    h->stale_expected++;
    h->destroyed++;
}

static void *hammer_main(void *arg)
{
    hammer *h = arg;
    hammer_shared *sh = h->sh;
    kiln_device *dev = sh->dev;
    th_rng rng = {0x9e3779b97f4a7c15ull * (uint64_t)(h->index + 1)};
    item live[MAXLIVE];
    uint32_t n = 0;

    for (uint32_t k = 0; k < ITERS; k++) {
        uint32_t op = th_below(&rng, 10);
        if (n == MAXLIVE)
            op = 7;
        if (op <= 2) {
            static const kiln_usage usages[3] = {KILN_USAGE_DEFAULT, KILN_USAGE_DYNAMIC,
                                                 KILN_USAGE_STAGING};
            kiln_usage u = usages[th_below(&rng, 3)];
            kiln_buffer_desc d = {0};
            d.size = 16u * (((uint32_t)h->index << 10) | (k & 1023u)) + 16u;
            d.usage = u;
            d.bind_flags = u == KILN_USAGE_STAGING ? 0u : (uint32_t)KILN_BIND_VERTEX_BUFFER;
            kiln_buffer b = {0};
            kiln_result r = kiln_create_buffer(dev, &d, NULL, &b);
            if (r != KILN_OK || !b.id) {
                HFAIL(h, "create_buffer: %s", kiln_result_string(r));
                continue;
            }
            live[n++] = (item){K_BUF, b.id, d.size, 0};
            h->created++;
        } else if (op <= 4) {
            kiln_texture2d_desc d = {0};
            d.width = (uint32_t)h->index + 1;
            d.height = 1 + (k % 64);
            d.mip_levels = 1;
            d.format = KILN_FORMAT_R8G8B8A8_UNORM;
            d.usage = KILN_USAGE_DEFAULT;
            d.bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
            kiln_texture t = {0};
            kiln_result r = kiln_create_texture2d(dev, &d, NULL, &t);
            if (r != KILN_OK || !t.id) {
                HFAIL(h, "create_texture2d: %s", kiln_result_string(r));
                continue;
            }
            live[n++] = (item){K_TEX, t.id, d.height, 0};
            h->created++;
        } else if (op == 5) {
            uint32_t texs[MAXLIVE], nt = 0;
            for (uint32_t i = 0; i < n; i++)
                if (live[i].kind == K_TEX)
                    texs[nt++] = i;
            if (!nt)
                continue;
            const item *t = &live[texs[th_below(&rng, nt)]];
            if (th_below(&rng, 2)) {
                kiln_rtv v = {0};
                kiln_result r = kiln_create_rtv(dev, (kiln_texture){t->id}, NULL, &v);
                if (r != KILN_OK || !v.id) {
                    HFAIL(h, "create_rtv: %s", kiln_result_string(r));
                    continue;
                }
                live[n++] = (item){K_RTV, v.id, 0, t->id};
            } else {
                kiln_srv v = {0};
                kiln_result r = kiln_create_srv(dev, (kiln_texture){t->id}, NULL, &v);
                if (r != KILN_OK || !v.id) {
                    HFAIL(h, "create_srv: %s", kiln_result_string(r));
                    continue;
                }
                live[n++] = (item){K_SRV, v.id, 0, t->id};
            }
            h->created++;
        } else if (op <= 8) {
            if (!n)
                continue;
            uint32_t i = th_below(&rng, n);
            item it = live[i];
            live[i] = live[--n];
            destroy_item(h, &it);
        } else {
            if (n)
                verify_item(h, &live[th_below(&rng, n)]);
        }
    }

    /* Publish the live set; main checks that no id appears twice. */
    for (uint32_t i = 0; i < n; i++)
        verify_item(h, &live[i]);
    memcpy(sh->live[h->index], live, sizeof(item) * n);
    sh->nlive[h->index] = n;
    pthread_barrier_wait(&sh->publish);
    pthread_barrier_wait(&sh->checked);

    while (n)
        destroy_item(h, &live[--n]);
    return NULL;
}

static void test_concurrent_device_calls(void)
{
    step("device functions from 4 threads at once, context used beside them");
    tracker t;
    tracker_init(&t);
    hammer_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.dev = th_device_desc(tracked_desc(&t, KILN_EXEC_ASYNC, 2));
    pthread_barrier_init(&sh.publish, NULL, NWORKERS + 1);
    pthread_barrier_init(&sh.checked, NULL, NWORKERS + 1);
    kiln_context *ctx = kiln_device_immediate_context(sh.dev);
    hammer h[NWORKERS];
    pthread_t th[NWORKERS];
    th_log_reset();
    for (int i = 0; i < NWORKERS; i++) {
        memset(&h[i], 0, sizeof h[i]);
        h[i].sh = &sh;
        h[i].index = i;
        CHECK(pthread_create(&th[i], NULL, hammer_main, &h[i]) == 0);
    }

    /* Meanwhile this thread uses the context on its own resources. */
    kiln_buffer d = buffer(sh.dev, KILN_USAGE_DEFAULT, 1024, NULL);
    kiln_buffer s = buffer(sh.dev, KILN_USAGE_STAGING, 1024, NULL);
    int data_ok = 1;
    uint8_t p[1024];
    for (uint32_t i = 0; i < 300; i++) {
        pattern(p, sizeof p, i);
        if (kiln_update_subresource(ctx, RB(d), 0, NULL, p, 0, 0) != KILN_OK ||
            kiln_copy_resource(ctx, RB(s), RB(d)) != KILN_OK ||
            !read_equals(ctx, RB(s), p, 1024, 1))
            data_ok = 0;
    }
    CHECK(data_ok);

    pthread_barrier_wait(&sh.publish);
    uint32_t total = 0, dup = 0;
    for (int i = 0; i < NWORKERS; i++)
        for (uint32_t j = 0; j < sh.nlive[i]; j++) {
            total++;
            for (int i2 = 0; i2 < NWORKERS; i2++)
                for (uint32_t j2 = 0; j2 < sh.nlive[i2]; j2++)
                    if ((i2 != i || j2 != j) && sh.live[i2][j2].id == sh.live[i][j].id)
                        dup++;
        }
    CHECK_EQ_INT(dup, 0);
    CHECK(total > 0);
    pthread_barrier_wait(&sh.checked);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(th[i], NULL);

    uint32_t stale = 0, wrong = 0;
    for (int i = 0; i < NWORKERS; i++) {
        CHECK_EQ_INT(h[i].failures, 0);
        CHECK(h[i].created > ITERS / 4);
        stale += h[i].stale_expected;
        wrong += h[i].wrong_expected;
    }
    /* Exactly the expected failures were logged, with the expected ids. */
    CHECK_EQ_INT(th_logs.per_id[KILN_LOG_HANDLE_STALE], stale);
    CHECK_EQ_INT(th_logs.per_id[KILN_LOG_HANDLE_WRONG_TYPE], wrong);
    CHECK_EQ_INT(th_log_count(), stale + wrong);

    CHECK_RESULT(kiln_destroy_buffer(sh.dev, d), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(sh.dev, s), KILN_OK);
    /* The table still works after all that churn. */
    kiln_buffer last = buffer(sh.dev, KILN_USAGE_STAGING, 48, NULL);
    kiln_buffer_desc bd;
    CHECK_RESULT(kiln_buffer_get_desc(sh.dev, last, &bd), KILN_OK);
    CHECK_EQ_INT(bd.size, 48);
    CHECK_RESULT(kiln_destroy_buffer(sh.dev, last), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_destroy(sh.dev);
    check_tracker_empty(&t, "all memory returned after the concurrent churn");
    pthread_barrier_destroy(&sh.publish);
    pthread_barrier_destroy(&sh.checked);
}

/* ---- allocation failures ---- */

#define MAX_N 5000

static void test_oom_device_create(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("kiln_device_create with the Nth allocation failing");
    tracker t;
    tracker_init(&t);
    uint32_t n, failures = 0;
    for (n = 1; n < MAX_N; n++) {
        kiln_device_desc desc = tracked_desc(&t, mc->mode, mc->threads ? mc->threads : 2);
        kiln_device *dev = (kiln_device *)&t; /* must be overwritten */
        th_log_reset();
        arm(&t, n);
        kiln_result r = kiln_device_create(&desc, &dev);
        int triggered = disarm(&t);
        if (r == KILN_OK) {
            CHECK(dev != NULL);
            /* The device works. */
            kiln_context *ctx = kiln_device_immediate_context(dev);
            uint8_t p[64];
            pattern(p, 64, n);
            kiln_buffer d = buffer(dev, KILN_USAGE_DEFAULT, 64, NULL);
            kiln_buffer s = buffer(dev, KILN_USAGE_STAGING, 64, NULL);
            CHECK_RESULT(kiln_update_subresource(ctx, RB(d), 0, NULL, p, 0, 0), KILN_OK);
            CHECK_RESULT(kiln_copy_resource(ctx, RB(s), RB(d)), KILN_OK);
            CHECK(read_equals(ctx, RB(s), p, 64, 1));
            CHECK_RESULT(kiln_destroy_buffer(dev, d), KILN_OK);
            CHECK_RESULT(kiln_destroy_buffer(dev, s), KILN_OK);
            kiln_device_destroy(dev);
            check_tracker_empty(&t, "no leak after a device created despite a failed allocation");
            if (!triggered)
                break;
            continue;
        }
        failures++;
        CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
        CHECK(triggered);
        CHECK(dev == NULL);
        CHECK(logged_once_id(KILN_LOG_DEVICE_ALLOC_FAILED));
        check_tracker_empty(&t, "a failed kiln_device_create frees what it took");
    }
    CHECK(n < MAX_N);
    CHECK(failures >= 1);
    printf("    %u allocations to create a device, %u failed attempts\n", n - 1, failures);
}

static void test_oom_texture(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("kiln_create_texture2d with the Nth allocation failing");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    enum { TW = 16, TH = 16, MIPS = 5, SLICES = 2 };
    static uint8_t texels[SLICES][MIPS][TW * TH * 4];
    kiln_subresource_data init[SLICES * MIPS];
    for (uint32_t s = 0; s < SLICES; s++)
        for (uint32_t m = 0; m < MIPS; m++) {
            pattern(texels[s][m], sizeof texels[s][m], s * 10 + m);
            init[m + s * MIPS] = (kiln_subresource_data){texels[s][m], 0};
        }
    kiln_texture2d_desc td = {0};
    td.width = TW;
    td.height = TH;
    td.array_size = SLICES; /* mip_levels 0: the full chain, 5 */
    td.format = KILN_FORMAT_R8G8B8A8_UNORM;
    td.usage = KILN_USAGE_DEFAULT;
    td.bind_flags = KILN_BIND_SHADER_RESOURCE;
    kiln_texture2d_desc sdesc = td;
    sdesc.usage = KILN_USAGE_STAGING;
    sdesc.bind_flags = 0;
    kiln_texture staging = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &sdesc, NULL, &staging), KILN_OK);
    /* Warm up (the handle table exists), then take the baseline. */
    kiln_texture warm = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, init, &warm), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, warm), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    long long baseline = atomic_load(&t.live);

    uint32_t n, failures = 0;
    for (n = 1; n < MAX_N; n++) {
        kiln_texture tex = {0xdeadbeefu};
        th_log_reset();
        arm(&t, n);
        kiln_result r = kiln_create_texture2d(dev, &td, init, &tex);
        int triggered = disarm(&t);
        if (r == KILN_OK) {
            /* Check the last subresource arrived (mip 4 of slice 1, 1x1). */
            CHECK_RESULT(kiln_copy_resource(ctx, RT(staging), RT(tex)), KILN_OK);
            kiln_mapped_subresource m;
            CHECK_RESULT(kiln_map(ctx, RT(staging), SLICES * MIPS - 1, KILN_MAP_READ, 0, &m),
                         KILN_OK);
            CHECK(m.data && memcmp(m.data, texels[1][4], 4) == 0);
            CHECK_RESULT(kiln_unmap(ctx, RT(staging), SLICES * MIPS - 1), KILN_OK);
            CHECK_RESULT(kiln_destroy_texture(dev, tex), KILN_OK);
            CHECK_RESULT(kiln_finish(ctx), KILN_OK);
            CHECK_EQ_INT(atomic_load(&t.live), baseline);
            if (!triggered)
                break;
            continue;
        }
        failures++;
        CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
        CHECK(triggered);
        CHECK(logged_once_id(KILN_LOG_OUT_OF_MEMORY));
        CHECK_EQ_INT(tex.id, 0);
        CHECK_EQ_INT(atomic_load(&t.live), baseline);
    }
    CHECK(n < MAX_N);
    CHECK(failures >= 1);
    CHECK_RESULT(kiln_destroy_texture(dev, staging), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "no leak after texture creation failures");
}

/* WRITE_DISCARD needs fresh storage; when it cannot get it the map fails
 * and the resource keeps its bytes, even while a gate reads them. */
static void test_oom_map_discard(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("kiln_map(WRITE_DISCARD) with the Nth allocation failing");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t cur[256], next[256];
    pattern(cur, 256, 90);
    kiln_buffer d = buffer(dev, KILN_USAGE_DYNAMIC, 256, cur);
    kiln_buffer s = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_buffer held = buffer(dev, KILN_USAGE_STAGING, 256, NULL);
    kiln_mapped_subresource m;
    /* Warm-up rename. */
    CHECK_RESULT(kiln_map(ctx, RB(d), 0, KILN_MAP_WRITE_DISCARD, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, cur, 256);
    CHECK_RESULT(kiln_unmap(ctx, RB(d), 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    long long baseline = atomic_load(&t.live);

    uint32_t n, failures = 0;
    for (n = 1; n < MAX_N; n++) {
        /* A gate reads D's current storage and holds `held`, with a copy of
         * D into `held` stuck behind it. */
        kiln_test_gate *g = NULL;
        CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
        kiln_resource res[2] = {RB(d), RB(held)};
        int writes[2] = {0, 1};
        CHECK_RESULT(kiln_test_hold(ctx, g, res, writes, 2), KILN_OK);
        CHECK_RESULT(kiln_copy_resource(ctx, RB(held), RB(d)), KILN_OK);
        uint8_t before[256];
        memcpy(before, cur, 256);

        th_log_reset();
        arm(&t, n);
        kiln_result r = kiln_map(ctx, RB(d), 0, KILN_MAP_WRITE_DISCARD, 0, &m);
        int triggered = disarm(&t);
        if (r == KILN_OK) {
            pattern(next, 256, 100 + n);
            if (m.data)
                memcpy(m.data, next, 256);
            CHECK_RESULT(kiln_unmap(ctx, RB(d), 0), KILN_OK);
            memcpy(cur, next, 256);
        } else {
            failures++;
            CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
            CHECK(triggered);
            CHECK(logged_once_id(KILN_LOG_OUT_OF_MEMORY));
            CHECK_FAILS(kiln_unmap(ctx, RB(d), 0), KILN_E_INVALID_CALL, KILN_LOG_UNMAP_NOT_MAPPED);
        }
        kiln_test_gate_open(g);
        CHECK_RESULT(kiln_copy_resource(ctx, RB(s), RB(d)), KILN_OK);
        CHECK(read_equals(ctx, RB(s), cur, 256, 1));
        CHECK(read_equals(ctx, RB(held), before, 256, 1));
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        kiln_test_gate_destroy(g); /* after its hold completed */
        CHECK_EQ_INT(atomic_load(&t.live), baseline);
        if (r == KILN_OK && !triggered)
            break;
    }
    CHECK(n < MAX_N);
    CHECK(failures >= 1);
    CHECK_RESULT(kiln_destroy_buffer(dev, d), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, s), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, held), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "no leak after WRITE_DISCARD failures");
}

/* UpdateSubresource, large enough to be split into chunks by a small
 * transfer ring: either everything is queued or nothing is. */
static void test_oom_update(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("kiln_update_subresource with the Nth allocation failing");
    tracker t;
    tracker_init(&t);
    kiln_device_desc desc = tracked_desc(&t, mc->mode, mc->threads);
    desc.transfer_ring_size = 4096;
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    enum { UW = 32, UH = 32 };
    static uint8_t cur[UW * UH * 4], next[UW * UH * 4];
    memset(cur, 0, sizeof cur);
    kiln_texture2d_desc td = {0};
    td.width = UW;
    td.height = UH;
    td.mip_levels = 1;
    td.format = KILN_FORMAT_R8G8B8A8_UNORM;
    td.usage = KILN_USAGE_DEFAULT;
    td.bind_flags = KILN_BIND_SHADER_RESOURCE;
    kiln_texture tex = {0}, staging = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &tex), KILN_OK);
    td.usage = KILN_USAGE_STAGING;
    td.bind_flags = 0;
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &staging), KILN_OK);
    CHECK_RESULT(kiln_update_subresource(ctx, RT(tex), 0, NULL, cur, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    long long baseline = atomic_load(&t.live);

    uint32_t n, failures = 0;
    for (n = 1; n < MAX_N; n++) {
        pattern(next, sizeof next, 200 + n);
        th_log_reset();
        uint64_t c0 = stats(dev).upload_chunks;
        arm(&t, n);
        kiln_result r = kiln_update_subresource(ctx, RT(tex), 0, NULL, next, 0, 0);
        int triggered = disarm(&t);
        if (r == KILN_OK) {
            CHECK(stats(dev).upload_chunks - c0 >= 2); /* the upload was split */
            memcpy(cur, next, sizeof cur);
        } else {
            failures++;
            CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
            CHECK(triggered);
            CHECK(logged_once_id(KILN_LOG_OUT_OF_MEMORY));
        }
        CHECK_RESULT(kiln_copy_resource(ctx, RT(staging), RT(tex)), KILN_OK);
        CHECK(read_equals(ctx, RT(staging), cur, UW * 4, UH));
        CHECK_RESULT(kiln_finish(ctx), KILN_OK);
        CHECK_EQ_INT(atomic_load(&t.live), baseline);
        if (r == KILN_OK && !triggered)
            break;
    }
    CHECK(n < MAX_N);
    printf("    %u failed attempts\n", failures);
    CHECK_RESULT(kiln_destroy_texture(dev, tex), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, staging), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "no leak after UpdateSubresource failures");
}

/* Buffers and views, same rule. */
static void test_oom_buffer_and_views(const mode_cfg *mc)
{
    printf("[%s] ", mc->name);
    step("kiln_create_buffer / views with the Nth allocation failing");
    tracker t;
    tracker_init(&t);
    kiln_device *dev = th_device_desc(tracked_desc(&t, mc->mode, mc->threads));
    kiln_texture tex =
        texture(dev, KILN_USAGE_DEFAULT, KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE, NULL);
    long long baseline = atomic_load(&t.live);
    for (int kind = 0; kind < 3; kind++) {
        uint32_t n, failures = 0;
        for (n = 1; n < MAX_N; n++) {
            uint32_t id = 0xdeadbeefu;
            th_log_reset();
            arm(&t, n);
            kiln_result r;
            if (kind == 0) {
                kiln_buffer_desc bd = {1000, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
                kiln_buffer b = {0xdeadbeefu};
                r = kiln_create_buffer(dev, &bd, NULL, &b);
                id = b.id;
            } else if (kind == 1) {
                kiln_rtv v = {0xdeadbeefu};
                r = kiln_create_rtv(dev, tex, NULL, &v);
                id = v.id;
            } else {
                kiln_srv v = {0xdeadbeefu};
                r = kiln_create_srv(dev, tex, NULL, &v);
                id = v.id;
            }
            int triggered = disarm(&t);
            if (r == KILN_OK) {
                CHECK(id != 0);
                if (kind == 0)
                    CHECK_RESULT(kiln_destroy_buffer(dev, (kiln_buffer){id}), KILN_OK);
                else if (kind == 1)
                    CHECK_RESULT(kiln_destroy_rtv(dev, (kiln_rtv){id}), KILN_OK);
                else
                    CHECK_RESULT(kiln_destroy_srv(dev, (kiln_srv){id}), KILN_OK);
                CHECK_EQ_INT(atomic_load(&t.live), baseline);
                if (!triggered)
                    break;
                continue;
            }
            failures++;
            CHECK_RESULT(r, KILN_E_OUT_OF_MEMORY);
            CHECK(triggered);
            CHECK(logged_once_id(KILN_LOG_OUT_OF_MEMORY));
            CHECK_EQ_INT(id, 0);
            CHECK_EQ_INT(atomic_load(&t.live), baseline);
        }
        CHECK(n < MAX_N);
        CHECK(failures >= 1);
    }
    CHECK_RESULT(kiln_destroy_texture(dev, tex), KILN_OK);
    kiln_device_destroy(dev);
    check_tracker_empty(&t, "no leak after buffer and view creation failures");
}

int main(void)
{
    for (size_t i = 0; i < NMODES; i++) {
        const mode_cfg *mc = &MODES[i];
        test_destroy_while_queued(mc);
        test_destroy_mapped(mc);
        test_device_destroy_with_work(mc);
        test_device_destroy_runs_queued(mc);
        test_destroy_during_map_wait(mc);
        test_oom_device_create(mc);
        test_oom_texture(mc);
        test_oom_map_discard(mc);
        test_oom_update(mc);
        test_oom_buffer_and_views(mc);
    }
    test_two_devices();
    test_concurrent_device_calls();
    return th_exit();
}
