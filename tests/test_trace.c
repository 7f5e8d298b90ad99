#define _GNU_SOURCE /* unsetenv */
/* The scheduler timeline (KILN_TRACE, docs/trace.md): a traced device
 * writes valid Chrome trace JSON in which every executed command appears
 * once with its API call, its queue time in order (submit <= grant <=
 * start) and an arrow from call to execution; scene tiles, waits with
 * their cause and resource, and fence signals with arrows to the waits
 * they end. Waits are made to happen without timing: a test gate holds a
 * resource and another thread opens it only once the statistics say the
 * application thread is waiting. */
#include "harness.h"
#include "json_read.h"
#include "raster_util.h"
#include "api/test_hooks.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

/* Opens `gate` once the device has counted a Map conflict wait. */
typedef struct opener {
    kiln_device *dev;
    kiln_test_gate *gate;
} opener;

static void *open_when_map_waits(void *arg)
{
    opener *o = arg;
    kiln_device_stats st;
    do {
        sched_yield();
        kiln_device_get_stats(o->dev, &st);
    } while (st.waits_map_conflict == 0);
    kiln_test_gate_open(o->gate);
    return NULL;
}

/* A display that holds its first frame until the application is counted
 * waiting for a back buffer: back-pressure without timing. */
typedef struct slow_display {
    kiln_swapchain *sc;
    int frames;
} slow_display;

static void hold_first_frame(const kiln_frame *frame, void *user)
{
    slow_display *d = user;
    (void)frame;
    if (d->frames++ > 0)
        return;
    kiln_swapchain_stats st;
    do {
        sched_yield();
        kiln_swapchain_get_stats(d->sc, &st);
    } while (st.waits_no_buffer == 0);
}

/* Presents four frames through two buffers while the display holds the
 * first: a buffer returns once its frame has been copied for display, so
 * by the fourth kiln_swapchain_get_back_buffer both are queued and it
 * waits (the third, if the display had not taken the first yet). */
static void present_with_back_pressure(kiln_device *dev, kiln_context *ctx)
{
    slow_display d = {0};
    kiln_swapchain_desc sd = {.width = 64, .height = 64, .buffer_count = 2,
                              .winsys = KILN_WINSYS_MEMORY, .frame_fn = hold_first_frame,
                              .frame_user = &d};
    CHECK_RESULT(kiln_swapchain_create(ctx, &sd, &d.sc), KILN_OK);
    if (!d.sc)
        return;
    const float c[4] = {1, 0, 0, 1};
    for (int f = 0; f < 4; f++) {
        kiln_texture tex;
        kiln_rtv rtv;
        CHECK_RESULT(kiln_swapchain_get_back_buffer(d.sc, &tex, &rtv), KILN_OK);
        CHECK_RESULT(kiln_clear_rtv(ctx, rtv, c), KILN_OK);
        CHECK_RESULT(kiln_swapchain_present(d.sc), KILN_OK);
    }
    CHECK_RESULT(kiln_swapchain_wait_idle(d.sc), KILN_OK);
    kiln_swapchain_destroy(d.sc);
    (void)dev;
}

typedef struct events {
    const ju_value *all;
    size_t n;
} events;

static const ju_value *ev(const events *e, size_t i) { return e->all->items[i]; }

static bool is(const ju_value *v, const char *ph, const char *cat)
{
    const char *p = ju_str(v, "ph"), *c = ju_str(v, "cat");
    return p && !strcmp(p, ph) && (!cat || (c && !strcmp(c, cat)));
}

static bool named(const ju_value *v, const char *name)
{
    const char *n = ju_str(v, "name");
    return n && !strcmp(n, name);
}

static size_t count(const events *e, const char *ph, const char *cat, const char *name)
{
    size_t c = 0;
    for (size_t i = 0; i < e->n; i++)
        if (is(ev(e, i), ph, cat) && (!name || named(ev(e, i), name)))
            c++;
    return c;
}

/* The event of phase `ph` and category prefix with this id and name. */
static const ju_value *find_id(const events *e, const char *ph, const char *cat, double id,
                               const char *name)
{
    for (size_t i = 0; i < e->n; i++) {
        const ju_value *v = ev(e, i);
        if (is(v, ph, cat) && ju_num(v, "id", -1) == id && (!name || named(v, name)))
            return v;
    }
    return NULL;
}

static bool has_thread(const events *e, const char *name)
{
    for (size_t i = 0; i < e->n; i++) {
        const ju_value *v = ev(e, i);
        if (is(v, "M", NULL) && named(v, "thread_name")) {
            const char *n = ju_str(ju_get(v, "args"), "name");
            if (n && !strcmp(n, name))
                return true;
        }
    }
    return false;
}

static void check_trace(const char *path, kiln_exec_mode mode, uint64_t executed,
                        uint32_t staging_id)
{
    size_t err = 0;
    ju_value *doc = ju_parse_file(path, &err);
    CHECK(doc != NULL);
    if (!doc) {
        fprintf(stderr, "    %s: invalid JSON at byte %zu\n", path, err);
        return;
    }
    const ju_value *list = ju_get(doc, "traceEvents");
    CHECK(list && list->type == JU_ARRAY);
    const ju_value *other = ju_get(doc, "otherData");
    CHECK_EQ_INT(ju_num(other, "kiln_dropped_events", -1), 0);
    if (!list || list->type != JU_ARRAY) {
        ju_free(doc);
        return;
    }
    events e = {list, list->n};

    /* Threads: the swapchain's display thread is named for its context
     * (the immediate context is 1, the swapchain's own is 2). */
    CHECK(has_thread(&e, "application"));
    CHECK(has_thread(&e, "display (context 2)"));
    CHECK(count(&e, "X", "wait", "wait: swapchain back-pressure") >= 1);
    CHECK_EQ_INT(count(&e, "X", "work", "display frame"), 4);
    CHECK(has_thread(&e, "worker 1") == (mode == KILN_EXEC_ASYNC));

    /* Every executed command once, with its arrow and its queue times. */
    size_t nexec = count(&e, "X", "exec", NULL);
    CHECK_EQ_INT(nexec, executed);
    uint64_t max_seq = 0;
    bool seen[256] = {false};
    int flows_ok = 1, order_ok = 1, seq_ok = 1;
    for (size_t i = 0; i < e.n; i++) {
        const ju_value *x = ev(&e, i);
        if (!is(x, "X", "exec"))
            continue;
        const ju_value *args = ju_get(x, "args");
        double seq = ju_num(args, "seq", 0), ctx = ju_num(args, "context", 0);
        if (ctx == 1 && seq >= 1 && seq < 256) {
            seq_ok &= !seen[(int)seq];
            seen[(int)seq] = true;
            max_seq = seq > max_seq ? (uint64_t)seq : max_seq;
        }
        /* The arrow: starts on the API call, ends at this execution. */
        double start = ju_num(x, "ts", -1);
        const ju_value *f = NULL, *s = NULL;
        for (size_t j = 0; j < e.n && !f; j++) {
            const ju_value *c = ev(&e, j);
            if (is(c, "f", "command") && ju_num(c, "ts", -2) == start &&
                ju_num(c, "tid", -1) == ju_num(x, "tid", -2))
                f = c;
        }
        double id = f ? ju_num(f, "id", -1) : -1;
        s = f ? find_id(&e, "s", "command", id, NULL) : NULL;
        flows_ok &= f && s;
        if (!f || !s)
            continue;
        /* On the context's track: submitted, granted, started in order. */
        const char *name = ju_str(x, "name");
        char cat[32];
        snprintf(cat, sizeof cat, "context %d", (int)ctx);
        const ju_value *b = find_id(&e, "b", cat, id, name), *eo = find_id(&e, "e", cat, id, name);
        const ju_value *bl = find_id(&e, "b", cat, id, "waiting for locks");
        const ju_value *el = find_id(&e, "e", cat, id, "waiting for locks");
        order_ok &= b && eo && bl && el;
        if (b && eo && bl && el)
            order_ok &= ju_num(b, "ts", 0) <= ju_num(el, "ts", 0) &&
                        ju_num(el, "ts", 0) <= ju_num(eo, "ts", 0) &&
                        ju_num(eo, "ts", 0) == start;
    }
    /* Server waits run nowhere: their call and their span on the context
     * track stand for them. */
    size_t server_waits = 0;
    for (size_t i = 0; i < e.n; i++) {
        const ju_value *v = ev(&e, i), *args = ju_get(v, "args");
        const char *op = ju_str(args, "op");
        double seq = ju_num(args, "seq", 0);
        if (is(v, "X", "api") && op && !strcmp(op, "WAIT") && ju_num(args, "context", 0) == 1 &&
            seq >= 1 && seq < 256) {
            seq_ok &= !seen[(int)seq];
            seen[(int)seq] = true;
            server_waits++;
        }
    }
    CHECK(server_waits >= 1); /* the swapchain's release fences */
    CHECK_EQ_INT(count(&e, "b", NULL, NULL) - count(&e, "e", NULL, NULL), 0);
    CHECK(flows_ok);
    CHECK(order_ok);
    CHECK(seq_ok);
    for (uint64_t q = 1; q <= max_seq; q++)
        if (!seen[q]) {
            fprintf(stderr, "    context 1 command #%llu has no execution\n", (unsigned long long)q);
            CHECK(seen[q]);
            break;
        }
    CHECK_EQ_INT(count(&e, "s", "command", NULL), nexec);

    /* The API calls that queued them. */
    CHECK(count(&e, "X", "api", "kiln_update_subresource") >= 1);
    CHECK(count(&e, "X", "api", "kiln_copy_resource") >= 1);
    CHECK(count(&e, "X", "api", "kiln_draw") >= 1);

    /* The scene: 256x256 is 4x4 tiles of 64 per raster wave. */
    size_t waves = count(&e, "X", "work", "raster wave");
    CHECK(waves >= 1);
    CHECK_EQ_INT(count(&e, "X", "work", "tile"), 16 * waves);
    /* Every work slice says which CPU it ended on, or -1 where the
     * system cannot say; where this thread can learn its own CPU, the
     * slices name theirs too. */
    {
        size_t bad = 0, tiles = 0, known = 0;
        for (size_t i = 0; i < e.n; i++) {
            const ju_value *v = ev(&e, i);
            if (!is(v, "X", "work"))
                continue;
            double cpu = ju_num(ju_get(v, "args"), "cpu", -2);
            bad += !(cpu >= -1 && cpu <= 32767 && cpu == (double)(int)cpu);
            known += cpu >= 0;
            tiles += named(v, "tile");
        }
        CHECK(tiles > 0);
        CHECK_EQ_INT(bad, 0);
#if defined(__linux__)
        if (sched_getcpu() >= 0)
            CHECK(known > 0);
#else
        (void)known;
#endif
    }
    size_t scenes = 0;
    for (size_t i = 0; i < e.n; i++) {
        const char *n = ju_str(ev(&e, i), "name");
        scenes += is(ev(&e, i), "X", "exec") && n && !strncmp(n, "SCENE #", 7);
    }
    CHECK(scenes >= 1);
    CHECK_EQ_INT(count(&e, "X", "work", "scene setup"), scenes);

    /* The Map that waited for the gate: its cause and resource. */
    int map_wait = 0;
    for (size_t i = 0; i < e.n; i++) {
        const ju_value *v = ev(&e, i);
        if (is(v, "X", "wait") && named(v, "wait: map conflict") &&
            ju_num(ju_get(v, "args"), "resource", 0) == staging_id)
            map_wait++;
    }
    CHECK_EQ_INT(map_wait, 1);

    /* The fence wait that timed out ends an arrow from the signal that
     * later reached its point. */
    CHECK(count(&e, "X", "wait", "wait: fence") >= 1);
    int fence_flow = 0;
    for (size_t i = 0; i < e.n; i++) {
        const ju_value *v = ev(&e, i);
        if (is(v, "f", "sync") && find_id(&e, "s", "sync", ju_num(v, "id", -1), "signal"))
            fence_flow++;
    }
    CHECK(fence_flow >= 1);
    CHECK(count(&e, "X", "sync", "signal") >= 1);
    ju_free(doc);
}

static void run(kiln_exec_mode mode, const char *path)
{
    remove(path);
    kiln_device_desc desc = {.exec_mode = mode, .num_threads = 1, .trace_path = path};
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);

    /* A scene: clear and one triangle into a 256x256 target. */
    ru_tex rt = ru_rt(dev, 256, 256, KILN_FORMAT_R8G8B8A8_UNORM);
    ru_pipe p = ru_make_pipe(dev, 1, RU_PS_VARY, 1, 0);
    ru_bind_pipe(ctx, &p);
    kiln_rasterizer_state rs = ru_target_2d(dev, ctx, &rt);
    const float black[4] = {0, 0, 0, 1};
    CHECK_RESULT(kiln_clear_rtv(ctx, rt.rtv, black), KILN_OK);
    float tri[3 * 8] = {-1, -1, 0, 1, 1, 0, 0, 1, 3, -1, 0, 1, 0, 1, 0, 1, -1, 3, 0, 1, 0, 0, 1, 1};
    ru_draw(dev, ctx, tri, 3, p.stride, KILN_TOPOLOGY_TRIANGLE_LIST);

    /* Byte commands: an update, and a copy into a staging texture. */
    kiln_texture2d_desc sd = {256, 256, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_STAGING, 0,
                              KILN_CPU_ACCESS_READ | KILN_CPU_ACCESS_WRITE, 0};
    kiln_texture staging = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &sd, NULL, &staging), KILN_OK);
    kiln_buffer buf = ru_buffer(dev, KILN_BIND_VERTEX_BUFFER, NULL, 256);
    uint8_t bytes[256];
    memset(bytes, 7, sizeof bytes);
    CHECK_RESULT(kiln_update_subresource(ctx, kiln_buffer_resource(buf), 0, NULL, bytes, 0, 0),
                 KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(staging), kiln_texture_resource(rt.tex)),
                 KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);

    /* A Map that must wait: a gate holds the staging texture for writing
     * and opens only once the Map is counted as waiting. */
    kiln_test_gate *gate = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);
    kiln_resource held = kiln_texture_resource(staging);
    int writes = 1;
    CHECK_RESULT(kiln_test_hold(ctx, gate, &held, &writes, 1), KILN_OK);
    kiln_flush(ctx);
    opener o = {dev, gate};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, open_when_map_waits, &o) == 0);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, held, 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, held, 0), KILN_OK);
    pthread_join(th, NULL);
    kiln_test_gate_destroy(gate);

    /* A fence wait that times out while a gate holds the work before the
     * fence's point, then a wait that ends once the gate opens. */
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);
    kiln_resource bres = kiln_buffer_resource(buf);
    CHECK_RESULT(kiln_test_hold(ctx, gate, &bres, &writes, 1), KILN_OK);
    kiln_fence fence = {0};
    CHECK_RESULT(kiln_context_insert_fence(ctx, &fence), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, fence, 1000000), KILN_E_TIMEOUT);
    kiln_test_gate_open(gate);
    CHECK_RESULT(kiln_fence_wait(dev, fence, UINT64_MAX), KILN_OK);
    kiln_destroy_fence(dev, fence);
    kiln_test_gate_destroy(gate);

    present_with_back_pressure(dev, ctx);

    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats st;
    kiln_device_get_stats(dev, &st);
    kiln_destroy_rasterizer_state(dev, rs);
    kiln_destroy_buffer(dev, buf);
    ru_free_pipe(dev, &p);
    ru_free_tex(dev, &rt);
    kiln_destroy_texture(dev, staging);
    kiln_device_destroy(dev); /* completes the trace */
    check_trace(path, mode, st.commands_executed, held.id);
    remove(path);
}

int main(void)
{
    unsetenv("KILN_TRACE");
    char path[64];
    snprintf(path, sizeof path, "/tmp/kiln-test-trace-%d.json", (int)getpid());
    run(KILN_EXEC_ASYNC, path);
    run(KILN_EXEC_SERIAL, path);

    /* A file that cannot be written: one log message, and the device works
     * untraced. */
    th_log_reset();
    kiln_device_desc bad = {.trace_path = "/nonexistent-kiln-dir/trace.json"};
    kiln_device *dev = th_device_desc(bad);
    CHECK_EQ_INT(th_logs.per_id[KILN_LOG_TRACE_OPEN_FAILED], 1);
    CHECK_EQ_INT(th_log_count(), 1);
    CHECK_RESULT(kiln_finish(kiln_device_immediate_context(dev)), KILN_OK);
    kiln_device_destroy(dev);

    /* Tracing off: no file appears. */
    dev = th_device(KILN_EXEC_ASYNC, 1);
    kiln_device_destroy(dev);
    CHECK(access(path, F_OK) != 0);
    return th_exit();
}
