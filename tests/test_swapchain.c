/*
 * The swapchain's buffer queue (DESIGN.md, "Life of a Present"; seed 001),
 * observed through the public API and its statistics only:
 *
 *  - states: a DEQUEUED buffer stays the back buffer until presented; an
 *    ACQUIRED or QUEUED buffer is never handed out; the buffer whose display
 *    finished is the one handed out next;
 *  - the app never waits for rendering: with a frame's rendering held by a
 *    test gate (api/test_hooks.h), present and the next get_back_buffer
 *    return, and nothing is displayed until the rendering completes;
 *  - FIFO: every frame is delivered, in order, with exactly its pixels;
 *  - MAILBOX: a newer frame replaces a queued one (dropped), the newest is
 *    always displayed, displayed + dropped == presented;
 *  - back-pressure: get_back_buffer blocks exactly when no buffer is FREE
 *    (n presents with n buffers, then a wait), proven with a second thread
 *    and stats.waits_no_buffer, not with a clock;
 *  - resize with frames in flight: queued frames keep their size;
 *  - validation; destroy displays what is still queued.
 *
 * The display is held with a MEMORY-target callback that blocks at a gate
 * the test opens (present_util.h); nothing here depends on timing. A hang
 * is a failure (ctest's timeout); each scenario prints its name first.
 */
#define _GNU_SOURCE /* syscall(SYS_gettid) */

#include "api/test_hooks.h"
#include "harness.h"
#include "present_util.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define W 24
#define H 10

static void step(const char *name)
{
    printf("-- %s\n", name);
    fflush(stdout);
}

static kiln_swapchain *make_memory(kiln_context *ctx, uint32_t nbuf, kiln_present_mode mode,
                                   kiln_format fmt, uint32_t w, uint32_t h, pu_recorder *rec)
{
    kiln_swapchain_desc d = {0};
    d.width = w;
    d.height = h;
    d.format = fmt;
    d.buffer_count = nbuf;
    d.mode = mode;
    d.winsys = KILN_WINSYS_MEMORY;
    d.frame_fn = pu_frame_cb;
    d.frame_user = rec;
    kiln_swapchain *sc = NULL;
    CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
    CHECK(sc != NULL);
    return sc;
}

/* Record i is frame `number` at w x h with exactly its pixels. */
static void check_record(pu_recorder *rec, uint32_t i, uint64_t number, uint32_t w, uint32_t h,
                         kiln_format fmt)
{
    pu_record r = pu_get(rec, i);
    CHECK_EQ_INT(r.number, number);
    CHECK_EQ_INT(r.w, w);
    CHECK_EQ_INT(r.h, h);
    CHECK(r.pitch >= w * 4);
    CHECK_EQ_INT(r.format, fmt);
    CHECK_EQ_INT(r.bad_pixels, 0);
}

/* ---- a get_back_buffer on a second thread ---- */

typedef struct getter {
    pthread_t thread;
    kiln_swapchain *sc;
    kiln_texture tex;
    kiln_rtv rtv;
    kiln_result result;
    atomic_int done;
} getter;

static void *getter_main(void *arg)
{
    getter *g = arg;
    g->result = kiln_swapchain_get_back_buffer(g->sc, &g->tex, &g->rtv);
    atomic_store(&g->done, 1);
    return NULL;
}

static void getter_start(getter *g, kiln_swapchain *sc)
{
    memset(g, 0, sizeof *g);
    g->sc = sc;
    atomic_init(&g->done, 0);
    if (pthread_create(&g->thread, NULL, getter_main, g) != 0) {
        fprintf(stderr, "FATAL: pthread_create\n");
        exit(2);
    }
}

/* Waits until the getter either returned (1) or is waiting for a buffer
 * (0), which stats.waits_no_buffer going past `waits_before` proves: with
 * the display held at the gate no buffer can become FREE, so a getter that
 * counted a wait cannot return until the test lets a frame through. */
static int getter_outcome(getter *g, uint64_t waits_before)
{
    for (;;) {
        if (atomic_load(&g->done))
            return 1;
        if (pu_stats(g->sc).waits_no_buffer > waits_before)
            return atomic_load(&g->done); /* 0 unless it raced past: see the caller's checks */
        pu_pause();
    }
}

/* ---- validation ---- */

static void dummy_cb(const kiln_frame *f, void *user)
{
    (void)f;
    (void)user;
}

static kiln_swapchain_desc valid_desc(void)
{
    kiln_swapchain_desc d = {0};
    d.width = 8;
    d.height = 8;
    d.winsys = KILN_WINSYS_MEMORY;
    d.frame_fn = dummy_cb;
    return d;
}

#define CHECK_DESC_FAILS(mutation)                                                                 \
    do {                                                                                           \
        kiln_swapchain_desc d_ = valid_desc();                                                     \
        mutation;                                                                                  \
        kiln_swapchain *sc_ = (kiln_swapchain *)&d_; /* must be zeroed on failure */               \
        CHECK_FAILS(kiln_swapchain_create(ctx, &d_, &sc_), KILN_E_INVALID_ARG,                     \
                    KILN_LOG_SWAPCHAIN_DESC);                                                      \
        CHECK(sc_ == NULL);                                                                        \
    } while (0)

static void test_validation(void)
{
    step("validation");
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);

    CHECK_DESC_FAILS(d_.width = 0);
    CHECK_DESC_FAILS(d_.height = 0);
    CHECK_DESC_FAILS(d_.width = 8193);
    CHECK_DESC_FAILS(d_.height = 8193);
    CHECK_DESC_FAILS(d_.format = KILN_FORMAT_R8_UNORM);
    CHECK_DESC_FAILS(d_.format = KILN_FORMAT_D32_FLOAT);
    CHECK_DESC_FAILS(d_.format = (kiln_format)1000);
    CHECK_DESC_FAILS(d_.buffer_count = 1);
    CHECK_DESC_FAILS(d_.buffer_count = 4);
    CHECK_DESC_FAILS(d_.mode = (kiln_present_mode)7);
    CHECK_DESC_FAILS(d_.mode = (kiln_present_mode)-1);
    CHECK_DESC_FAILS(d_.winsys = (kiln_winsys_kind)9);
    CHECK_DESC_FAILS(d_.frame_fn = NULL); /* MEMORY without a callback */
    /* PNG patterns: exactly one unsigned conversion. */
    CHECK_DESC_FAILS((d_.winsys = KILN_WINSYS_PNG, d_.png_path = "out-%s.png"));
    CHECK_DESC_FAILS((d_.winsys = KILN_WINSYS_PNG, d_.png_path = "out-%u-%u.png"));
    CHECK_DESC_FAILS((d_.winsys = KILN_WINSYS_PNG, d_.png_path = "out.png"));
    CHECK_DESC_FAILS((d_.winsys = KILN_WINSYS_PNG, d_.png_path = "out-%u%n.png"));
    CHECK_DESC_FAILS((d_.winsys = KILN_WINSYS_PNG, d_.png_path = "out-%u-%"));

    /* The edges of the valid ranges are accepted. */
    {
        kiln_swapchain_desc d = valid_desc();
        d.width = 1;
        d.height = 1;
        d.buffer_count = 3;
        d.format = KILN_FORMAT_B8G8R8A8_UNORM;
        d.mode = KILN_PRESENT_MAILBOX;
        kiln_swapchain *sc = NULL;
        th_log_reset();
        CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
        CHECK_EQ_INT(th_log_count(), 0);
        kiln_swapchain_destroy(sc);
    }

    /* NULL arguments with a valid context are logged through the device's
     * callback (kiln.h, "Errors"). */
    {
        kiln_swapchain_desc d = valid_desc();
        kiln_swapchain *sc = (kiln_swapchain *)&d;
        CHECK_FAILS(kiln_swapchain_create(ctx, NULL, &sc), KILN_E_INVALID_ARG,
                    KILN_LOG_NULL_POINTER);
        CHECK(sc == NULL);
        CHECK_FAILS(kiln_swapchain_create(ctx, &d, NULL), KILN_E_INVALID_ARG,
                    KILN_LOG_NULL_POINTER);
    }

    /* Calls on a live swapchain. */
    {
        kiln_swapchain_desc d = valid_desc();
        kiln_swapchain *sc = NULL;
        CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
        CHECK_FAILS(kiln_swapchain_present(sc), KILN_E_INVALID_CALL, KILN_LOG_PRESENT_NO_BUFFER);
        kiln_texture tex;
        kiln_rtv rtv;
        CHECK_FAILS(kiln_swapchain_get_back_buffer(sc, NULL, &rtv), KILN_E_INVALID_ARG,
                    KILN_LOG_NULL_POINTER);
        CHECK_FAILS(kiln_swapchain_get_back_buffer(sc, &tex, NULL), KILN_E_INVALID_ARG,
                    KILN_LOG_NULL_POINTER);
        CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_OK);
        CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);
        /* One present per back buffer taken. */
        CHECK_FAILS(kiln_swapchain_present(sc), KILN_E_INVALID_CALL, KILN_LOG_PRESENT_NO_BUFFER);
        CHECK_FAILS(kiln_swapchain_resize(sc, 0, 8), KILN_E_INVALID_ARG, KILN_LOG_SWAPCHAIN_DESC);
        CHECK_FAILS(kiln_swapchain_resize(sc, 8, 0), KILN_E_INVALID_ARG, KILN_LOG_SWAPCHAIN_DESC);
        CHECK_FAILS(kiln_swapchain_resize(sc, 8193, 8), KILN_E_INVALID_ARG,
                    KILN_LOG_SWAPCHAIN_DESC);
        CHECK_FAILS(kiln_swapchain_get_stats(sc, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
        CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
        kiln_swapchain_stats s = pu_stats(sc);
        CHECK_EQ_INT(s.presented, 1);
        CHECK_EQ_INT(s.displayed, 1);
        kiln_swapchain_destroy(sc);
    }
    kiln_swapchain_destroy(NULL); /* ignored */
    kiln_device_destroy(dev);
}

/* ---- buffer states ---- */

/* A context a swapchain renders through outlives the swapchain: destroying
 * it first is refused (the capture fuzzer's harness reached a
 * use-after-free through this), and allowed once the swapchain is gone. */
static void test_context_in_use(void)
{
    step("context in use");
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = NULL;
    CHECK_RESULT(kiln_context_create(dev, &ctx), KILN_OK);
    kiln_swapchain_desc d = {.width = 16, .height = 16, .winsys = KILN_WINSYS_NULL};
    kiln_swapchain *sc = NULL;
    CHECK_RESULT(kiln_swapchain_create(ctx, &d, &sc), KILN_OK);
    CHECK_FAILS(kiln_context_destroy(ctx), KILN_E_INVALID_CALL, KILN_LOG_CONTEXT_IN_USE);
    kiln_texture tex;
    kiln_rtv rtv;
    CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_OK);
    CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);
    kiln_swapchain_destroy(sc);
    CHECK_RESULT(kiln_context_destroy(ctx), KILN_OK);
    kiln_device_destroy(dev);
}

static void test_states(uint32_t nbuf)
{
    char name[64];
    snprintf(name, sizeof name, "buffer states, %u buffers", nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 64, 0, 1);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, 0);
    CHECK_EQ_INT(s.displayed, 0);

    /* DEQUEUED: the same buffer until it is presented, without waiting. */
    kiln_texture a, a2;
    kiln_rtv ra, ra2;
    CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &a, &ra), KILN_OK);
    CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &a2, &ra2), KILN_OK);
    CHECK(a.id != 0 && ra.id != 0);
    CHECK_EQ_INT(a2.id, a.id);
    CHECK_EQ_INT(ra2.id, ra.id);
    kiln_texture2d_desc td;
    CHECK_RESULT(kiln_texture_get_desc(dev, a, &td), KILN_OK);
    CHECK_EQ_INT(td.width, W);
    CHECK_EQ_INT(td.height, H);
    CHECK_EQ_INT(td.format, KILN_FORMAT_R8G8B8A8_UNORM);
    CHECK(td.bind_flags & KILN_BIND_RENDER_TARGET);
    kiln_texture used;
    CHECK_RESULT(pu_render_present(dev, ctx, sc, 1, 0, &used), KILN_OK);
    CHECK_EQ_INT(used.id, a.id);
    /* QUEUED: presenting it again needs a new back buffer. */
    th_log_reset();
    CHECK_FAILS(kiln_swapchain_present(sc), KILN_E_INVALID_CALL, KILN_LOG_PRESENT_NO_BUFFER);

    /* Frame 1 ACQUIRED and held: not displayed yet, and never handed out. */
    pu_wait_entered(&rec, 1);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, 1);
    CHECK_EQ_INT(s.displayed, 0);
    kiln_texture bufs[3] = {a};
    for (uint32_t i = 1; i < nbuf; i++) {
        CHECK_RESULT(pu_render_present(dev, ctx, sc, 1 + i, 0, &bufs[i]), KILN_OK);
        for (uint32_t k = 0; k < i; k++)
            CHECK(bufs[i].id != bufs[k].id); /* every buffer of the set is used once */
    }
    s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, nbuf);
    CHECK_EQ_INT(s.displayed, 0);
    CHECK_EQ_INT(s.waits_no_buffer, 0);
    CHECK_EQ_INT(s.blocked_ns, 0);

    /* Frame 1 finishes: its buffer returns FREE and is the one handed out
     * (frame 2 is ACQUIRED now, the others QUEUED). */
    pu_allow(&rec, 1);
    pu_wait_entered(&rec, 2);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.displayed, 1);
    kiln_texture next;
    CHECK_RESULT(pu_render_present(dev, ctx, sc, nbuf + 1, 0, &next), KILN_OK);
    CHECK_EQ_INT(next.id, a.id);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.waits_no_buffer, 0);

    pu_open(&rec);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, nbuf + 1);
    CHECK_EQ_INT(s.displayed, nbuf + 1);
    CHECK_EQ_INT(s.dropped, 0);
    CHECK_EQ_INT(s.display_errors, 0);
    CHECK_EQ_INT(pu_count(&rec), nbuf + 1);
    /* Frame 1 was read before its buffer was rendered into again (the
     * release fence): every frame has its own pixels. */
    for (uint32_t i = 0; i < nbuf + 1; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* Present and get_back_buffer never wait for rendering: with the
 * rendering of frame 1 held (a test gate holds its buffer as written),
 * both return and the next buffer is handed out; the display waits for
 * the acquire fence, so nothing is shown until the rendering completes,
 * and then each frame has its own pixels. */
static void test_no_wait_on_rendering(uint32_t nbuf)
{
    char name[80];
    snprintf(name, sizeof name, "the app never waits for rendering, %u buffers", nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 16, 0, 0);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);
    kiln_test_gate *gate = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);

    kiln_texture tex;
    kiln_rtv rtv;
    CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_OK);
    uint8_t c[4];
    pu_clear_bytes(1, c);
    float color[4] = {c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f};
    CHECK_RESULT(kiln_clear_rtv(ctx, rtv, color), KILN_OK);
    kiln_resource res = kiln_texture_resource(tex);
    int writes = 1;
    CHECK_RESULT(kiln_test_hold(ctx, gate, &res, &writes, 1), KILN_OK);
    CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);
    kiln_test_gate_wait_entered(gate, 1); /* frame 1's rendering is pending */
    for (uint64_t i = 2; i <= nbuf; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 0, NULL), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, nbuf);
    CHECK_EQ_INT(s.waits_no_buffer, 0);
    CHECK_EQ_INT(s.displayed, 0);
    CHECK_EQ_INT(pu_count(&rec), 0); /* FIFO: nothing before frame 1 */

    kiln_test_gate_open(gate);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    CHECK_EQ_INT(pu_count(&rec), nbuf);
    for (uint32_t i = 0; i < nbuf; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_test_gate_destroy(gate);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* ---- FIFO ---- */

static void test_fifo(uint32_t nbuf, kiln_format fmt, kiln_exec_mode mode)
{
    char name[96];
    snprintf(name, sizeof name, "FIFO order and pixels, %u buffers, %s, %s", nbuf,
             fmt == KILN_FORMAT_B8G8R8A8_UNORM ? "BGRA" : "RGBA",
             mode == KILN_EXEC_SERIAL ? "serial" : "async");
    step(name);
    enum { N = 40 };
    kiln_device *dev = th_device(mode, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, N, 1, 0);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, fmt, W, H, &rec);
    for (uint64_t i = 1; i <= N; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, N);
    CHECK_EQ_INT(s.displayed, N);
    CHECK_EQ_INT(s.dropped, 0);
    CHECK_EQ_INT(s.display_errors, 0);
    CHECK_EQ_INT(pu_count(&rec), N);
    for (uint32_t i = 0; i < N; i++)
        check_record(&rec, i, i + 1, W, H,
                     fmt == KILN_FORMAT_UNKNOWN ? KILN_FORMAT_R8G8B8A8_UNORM : fmt);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* ---- MAILBOX ---- */

/* The invariants of any MAILBOX run, after wait_idle. */
static void check_mailbox_run(kiln_swapchain *sc, pu_recorder *rec, uint64_t presented)
{
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, presented);
    CHECK_EQ_INT(s.displayed + s.dropped, s.presented);
    CHECK_EQ_INT(s.display_errors, 0);
    uint32_t n = pu_count(rec);
    CHECK_EQ_INT(n, s.displayed);
    uint64_t last = 0;
    int increasing = 1, pixels = 1;
    for (uint32_t i = 0; i < n; i++) {
        pu_record r = pu_get(rec, i);
        increasing &= r.number > last;
        pixels &= r.bad_pixels == 0;
        last = r.number;
    }
    CHECK(increasing);
    CHECK(pixels);
    CHECK_EQ_INT(last, presented); /* the newest frame is always displayed */
}

static void test_mailbox(void)
{
    step("MAILBOX: newer frames replace queued ones (3 buffers, display held)");
    enum { N = 30 };
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, N, 1, 1);
    kiln_swapchain *sc = make_memory(ctx, 3, KILN_PRESENT_MAILBOX, 0, W, H, &rec);
    CHECK_RESULT(pu_render_present(dev, ctx, sc, 1, 1, NULL), KILN_OK);
    pu_wait_entered(&rec, 1); /* frame 1 ACQUIRED, held */
    for (uint64_t i = 2; i <= N; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    /* One buffer displayed, one queued, one to render into: the app never
     * waits, and each present from frame 3 on replaced the queued frame. */
    CHECK_EQ_INT(s.waits_no_buffer, 0);
    CHECK_EQ_INT(s.dropped, N - 2);
    CHECK_EQ_INT(s.displayed, 0);
    pu_open(&rec);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    s = pu_stats(sc);
    CHECK(s.dropped > 0);
    CHECK_EQ_INT(s.displayed, 2);
    check_mailbox_run(sc, &rec, N);
    check_record(&rec, 0, 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    check_record(&rec, 1, N, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);

    step("MAILBOX: display let through at random points (3 buffers)");
    {
        enum { M = 300 };
        pu_recorder_init(&rec, M, 1, 1);
        sc = make_memory(ctx, 3, KILN_PRESENT_MAILBOX, 0, W, H, &rec);
        th_rng rng = {0x5eed1234abcdull};
        for (uint64_t i = 1; i <= M; i++) {
            if (th_below(&rng, 4) == 0)
                pu_allow(&rec, 1 + th_below(&rng, 2));
            CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
        }
        s = pu_stats(sc);
        CHECK_EQ_INT(s.waits_no_buffer, 0);
        pu_open(&rec);
        CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
        check_mailbox_run(sc, &rec, M);
        kiln_swapchain_destroy(sc);
        pu_recorder_free(&rec);
    }

    step("MAILBOX: free-running display (2 and 3 buffers)");
    for (uint32_t nbuf = 2; nbuf <= 3; nbuf++) {
        enum { M = 200 };
        pu_recorder_init(&rec, M, 1, 0);
        sc = make_memory(ctx, nbuf, KILN_PRESENT_MAILBOX, 0, W, H, &rec);
        for (uint64_t i = 1; i <= M; i++)
            CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
        CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
        check_mailbox_run(sc, &rec, M);
        kiln_swapchain_destroy(sc);
        pu_recorder_free(&rec);
    }
    kiln_device_destroy(dev);
}

/* ---- back-pressure ---- */

/* Presents until get_back_buffer blocks (the display held at frame 1);
 * returns how many frames were presented before that. Frame 1's buffer
 * comes back FREE as soon as its pixels are staged, with a release fence
 * (seed 001): it is handed out again while frame 1 is still being shown,
 * and rendering into it waits on the GPU side, so the app blocks only
 * once every buffer is queued or held: after nbuf + 1 presents. */
static uint32_t test_backpressure(uint32_t nbuf)
{
    char name[64];
    snprintf(name, sizeof name, "back-pressure, %u buffers", nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 16, 0, 1);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);

    uint32_t presented = 0;
    kiln_texture first = {0}, second = {0}, reused = {0};
    getter g;
    for (;;) {
        getter_start(&g, sc);
        if (!getter_outcome(&g, 0))
            break; /* blocked: no buffer is FREE */
        pthread_join(g.thread, NULL);
        CHECK_RESULT(g.result, KILN_OK);
        if (presented == 0)
            first = g.tex;
        if (presented == 1)
            second = g.tex;
        if (presented == nbuf)
            reused = g.tex;
        /* Render the frame on this thread: the context moved back here. */
        uint8_t c[4];
        pu_clear_bytes(presented + 1, c);
        float color[4] = {c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f};
        CHECK_RESULT(kiln_clear_rtv(ctx, g.rtv, color), KILN_OK);
        CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);
        presented++;
        /* Once the display holds frame 1 (its buffer already released),
         * what blocks no longer depends on how fast the display thread
         * got there. */
        if (presented == 1)
            pu_wait_entered(&rec, 1);
        if (presented > 8) {
            CHECK(!"get_back_buffer never blocked");
            break;
        }
    }
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(presented, nbuf + 1);
    CHECK_EQ_INT(s.presented, nbuf + 1);
    CHECK_EQ_INT(s.waits_no_buffer, 1);
    CHECK_EQ_INT(s.displayed, 0);
    CHECK_EQ_INT(reused.id, first.id); /* frame 1's buffer, released early */
    /* Still blocked: nothing can free a buffer while frame 1 is held. */
    pu_wait_entered(&rec, 1);
    CHECK_EQ_INT(atomic_load(&g.done), 0);

    /* Frame 1 finishes; the display takes frame 2 and releases its buffer,
     * which is the one the waiter gets. */
    pu_allow(&rec, 1);
    pthread_join(g.thread, NULL);
    CHECK_RESULT(g.result, KILN_OK);
    CHECK_EQ_INT(g.tex.id, second.id);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.waits_no_buffer, 1);
    CHECK(s.blocked_ns > 0);
    CHECK(s.displayed >= 1);
    uint8_t c[4];
    pu_clear_bytes(nbuf + 2, c);
    float color[4] = {c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f};
    CHECK_RESULT(kiln_clear_rtv(ctx, g.rtv, color), KILN_OK);
    CHECK_RESULT(kiln_swapchain_present(sc), KILN_OK);

    /* Every frame shows its own pixels, although buffers were rendered
     * into again while their earlier frames were still being shown. */
    pu_open(&rec);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, nbuf + 2);
    CHECK_EQ_INT(s.displayed, nbuf + 2);
    CHECK_EQ_INT(pu_count(&rec), nbuf + 2);
    for (uint32_t i = 0; i < nbuf + 2; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
    return presented;
}

/* ---- resize ---- */

static void test_resize(uint32_t nbuf)
{
    char name[64];
    snprintf(name, sizeof name, "resize with frames in flight, %u buffers", nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 16, 1, 1);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, 32, 16, &rec);

    /* Frames 1..nbuf at 32x16: frame 1 ACQUIRED (held), the rest QUEUED. */
    CHECK_RESULT(pu_render_present(dev, ctx, sc, 1, 1, NULL), KILN_OK);
    pu_wait_entered(&rec, 1);
    for (uint64_t i = 2; i <= nbuf; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    CHECK_RESULT(kiln_swapchain_resize(sc, 20, 12), KILN_OK);

    /* The new set is FREE at once: no wait although every old buffer is
     * still in the queue. */
    uint64_t frame = nbuf + 1;
    kiln_texture tex;
    CHECK_RESULT(pu_render_present(dev, ctx, sc, frame++, 1, &tex), KILN_OK);
    kiln_texture2d_desc td;
    CHECK_RESULT(kiln_texture_get_desc(dev, tex, &td), KILN_OK);
    CHECK_EQ_INT(td.width, 20);
    CHECK_EQ_INT(td.height, 12);

    /* Resize while holding a back buffer: the next one has the new size. */
    kiln_rtv rtv;
    CHECK_RESULT(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_OK);
    CHECK_RESULT(kiln_swapchain_resize(sc, 7, 5), KILN_OK);
    CHECK_RESULT(pu_render_present(dev, ctx, sc, frame++, 1, &tex), KILN_OK);
    CHECK_RESULT(kiln_texture_get_desc(dev, tex, &td), KILN_OK);
    CHECK_EQ_INT(td.width, 7);
    CHECK_EQ_INT(td.height, 5);
    CHECK_EQ_INT(pu_stats(sc).waits_no_buffer, 0);

    pu_open(&rec);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, frame - 1);
    CHECK_EQ_INT(s.displayed, frame - 1);
    CHECK_EQ_INT(pu_count(&rec), frame - 1);
    for (uint32_t i = 0; i < nbuf; i++)
        check_record(&rec, i, i + 1, 32, 16, KILN_FORMAT_R8G8B8A8_UNORM);
    check_record(&rec, nbuf, nbuf + 1, 20, 12, KILN_FORMAT_R8G8B8A8_UNORM);
    check_record(&rec, nbuf + 1, nbuf + 2, 7, 5, KILN_FORMAT_R8G8B8A8_UNORM);

    /* And it keeps going at the new size. */
    CHECK_RESULT(pu_render_present(dev, ctx, sc, frame, 1, NULL), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    check_record(&rec, (uint32_t)frame - 1, frame, 7, 5, KILN_FORMAT_R8G8B8A8_UNORM);
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* Resize after resize while the display is held: every old set stays
 * queued until displayed and each new set is FREE at once, so frames in
 * flight add up until the bound on buffers alive (16) is reached; then
 * resize waits for the display (counted in waits_no_buffer) instead of
 * growing. Every frame is still displayed, in order, at its size. */
typedef struct resizer {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_swapchain *sc;
    uint32_t nbuf, rounds;
    uint64_t frame;
    atomic_int done;
    int failures;
} resizer;

static void *resizer_main(void *arg)
{
    resizer *z = arg;
    for (uint32_t r = 1; r <= z->rounds; r++) {
        if (kiln_swapchain_resize(z->sc, 16 + r, 8 + r) != KILN_OK)
            z->failures++;
        for (uint32_t i = 0; i < z->nbuf; i++)
            if (pu_render_present(z->dev, z->ctx, z->sc, z->frame++, 1, NULL) != KILN_OK)
                z->failures++;
    }
    atomic_store(&z->done, 1);
    return NULL;
}

static void test_resize_repeated(uint32_t nbuf, uint32_t rounds, bool expect_bound)
{
    char name[80];
    snprintf(name, sizeof name, "%u resizes with every set queued, %u buffers", rounds, nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 64, 1, 1);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, 16, 8, &rec);
    uint64_t frame = 1;
    CHECK_RESULT(pu_render_present(dev, ctx, sc, frame++, 1, NULL), KILN_OK);
    pu_wait_entered(&rec, 1);
    for (uint32_t i = 1; i < nbuf; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, frame++, 1, NULL), KILN_OK);
    resizer z = {dev, ctx, sc, nbuf, rounds, frame, 0, 0};
    pthread_t t;
    pthread_create(&t, NULL, resizer_main, &z);
    /* Until the resizer is done or blocked on the bound (no clock). */
    while (!atomic_load(&z.done) && pu_stats(sc).waits_no_buffer == 0)
        sched_yield();
    CHECK_EQ_INT(pu_stats(sc).waits_no_buffer > 0, expect_bound);
    pu_open(&rec);
    pthread_join(t, NULL);
    frame = z.frame;
    CHECK_EQ_INT(z.failures, 0);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    kiln_swapchain_stats s = pu_stats(sc);
    CHECK_EQ_INT(s.presented, frame - 1);
    CHECK_EQ_INT(s.displayed, frame - 1);
    CHECK_EQ_INT(pu_count(&rec), frame - 1);
    for (uint32_t i = 0; i < frame - 1; i++) {
        uint32_t r = i / nbuf;
        check_record(&rec, i, i + 1, 16 + r, 8 + r, KILN_FORMAT_R8G8B8A8_UNORM);
    }
    kiln_swapchain_destroy(sc);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* ---- destroy ---- */

typedef struct destroyer {
    kiln_swapchain *sc;
    atomic_int tid; /* the thread about to call destroy */
    atomic_int returned;
} destroyer;

static void *destroyer_main(void *arg)
{
    destroyer *d = arg;
    atomic_store(&d->tid, (int)syscall(SYS_gettid));
    kiln_swapchain_destroy(d->sc);
    atomic_store(&d->returned, 1);
    return NULL;
}

/* Whether thread `tid` of this process is asleep (state S), read from
 * /proc: used to open the gate only once the destroyer is blocked inside
 * kiln_swapchain_destroy (it holds nothing the display needs, so that is
 * where it sleeps). -1 if /proc cannot tell. */
static int thread_sleeping(int tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ')
        return -1;
    return p[2] == 'S';
}

static void test_destroy_displays_queued(uint32_t nbuf)
{
    char name[64];
    snprintf(name, sizeof name, "destroy displays queued frames, %u buffers", nbuf);
    step(name);
    kiln_device *dev = th_device(KILN_EXEC_ASYNC, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 16, 1, 1);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);
    for (uint64_t i = 1; i <= nbuf; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    pu_wait_entered(&rec, 1);
    /* Frame 1 held at the gate, frames 2..nbuf QUEUED: destroy now. */
    destroyer d = {.sc = sc};
    atomic_init(&d.tid, 0);
    atomic_init(&d.returned, 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, destroyer_main, &d) == 0);
    while (!atomic_load(&d.tid))
        pu_pause();
    int sleeping;
    while ((sleeping = thread_sleeping(atomic_load(&d.tid))) == 0)
        pu_pause();
    CHECK_EQ_INT(atomic_load(&d.returned), 0); /* it waits for the held frame */
    CHECK_EQ_INT(pu_count(&rec), 1);
    pu_open(&rec);
    pthread_join(t, NULL);
    CHECK_EQ_INT(pu_count(&rec), nbuf);
    for (uint32_t i = 0; i < nbuf; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    pu_recorder_free(&rec);

    /* Destroy right after presenting, display free-running. */
    enum { N = 12 };
    pu_recorder_init(&rec, N, 1, 0);
    sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);
    for (uint64_t i = 1; i <= N; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    kiln_swapchain_destroy(sc);
    CHECK_EQ_INT(pu_count(&rec), N);
    for (uint32_t i = 0; i < N; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);
    pu_recorder_free(&rec);
    kiln_device_destroy(dev);
}

/* A frame whose work waits for a resource this thread keeps mapped can
 * never be displayed: waiting for the display is refused with
 * WOULD_DEADLOCK instead of hanging, Unmap lets it through, and destroy
 * drops what is still stuck (one message). The frames' acquire fences
 * cover everything the context queued, so a copy out of the mapped
 * texture holds them all. */
static void test_stuck_frames(uint32_t nbuf, kiln_exec_mode mode)
{
    char name[96];
    snprintf(name, sizeof name, "frames held up by this thread's own map, %u buffers, %s", nbuf,
             mode == KILN_EXEC_SERIAL ? "serial" : "async");
    step(name);
    kiln_device *dev = th_device(mode, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    pu_recorder rec;
    pu_recorder_init(&rec, 16, 1, 0);
    kiln_swapchain *sc = make_memory(ctx, nbuf, KILN_PRESENT_FIFO, 0, W, H, &rec);
    kiln_texture2d_desc sd = {W, H, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_STAGING, 0,
                              KILN_CPU_ACCESS_WRITE, 0};
    kiln_texture2d_desc td = {W, H, 1, 1, KILN_FORMAT_R8G8B8A8_UNORM, KILN_USAGE_DEFAULT,
                              KILN_BIND_SHADER_RESOURCE, 0, 0};
    kiln_texture s = {0}, t = {0};
    CHECK_RESULT(kiln_create_texture2d(dev, &sd, NULL, &s), KILN_OK);
    CHECK_RESULT(kiln_create_texture2d(dev, &td, NULL, &t), KILN_OK);
    kiln_mapped_subresource m;

    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(s), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(t), kiln_texture_resource(s)), KILN_OK);
    for (uint64_t i = 1; i <= nbuf; i++)
        CHECK_RESULT(pu_render_present(dev, ctx, sc, i, 1, NULL), KILN_OK);
    CHECK_FAILS(kiln_swapchain_wait_idle(sc), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    kiln_texture tex;
    kiln_rtv rtv;
    CHECK_FAILS(kiln_swapchain_get_back_buffer(sc, &tex, &rtv), KILN_E_WOULD_DEADLOCK,
                KILN_LOG_WOULD_DEADLOCK);
    CHECK_EQ_INT(pu_count(&rec), 0);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(s), 0), KILN_OK);
    CHECK_RESULT(kiln_swapchain_wait_idle(sc), KILN_OK);
    CHECK_EQ_INT(pu_count(&rec), nbuf);
    for (uint32_t i = 0; i < nbuf; i++)
        check_record(&rec, i, i + 1, W, H, KILN_FORMAT_R8G8B8A8_UNORM);

    /* Destroyed with a frame stuck: dropped, logged once, no hang. */
    CHECK_RESULT(kiln_map(ctx, kiln_texture_resource(s), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, kiln_texture_resource(t), kiln_texture_resource(s)), KILN_OK);
    CHECK_RESULT(pu_render_present(dev, ctx, sc, nbuf + 1, 1, NULL), KILN_OK);
    th_log_reset();
    kiln_swapchain_destroy(sc);
    CHECK(th_log_count() == 1 && th_log_last() == KILN_LOG_WOULD_DEADLOCK);
    CHECK_EQ_INT(pu_count(&rec), nbuf);
    CHECK_RESULT(kiln_unmap(ctx, kiln_texture_resource(s), 0), KILN_OK);
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    pu_recorder_free(&rec);
    CHECK_RESULT(kiln_destroy_texture(dev, s), KILN_OK);
    CHECK_RESULT(kiln_destroy_texture(dev, t), KILN_OK);
    kiln_device_destroy(dev);
}

int main(void)
{
    test_validation();
    test_context_in_use();
    test_states(2);
    test_states(3);
    test_no_wait_on_rendering(2);
    test_no_wait_on_rendering(3);
    test_fifo(2, 0, KILN_EXEC_ASYNC);
    test_fifo(3, 0, KILN_EXEC_ASYNC);
    test_fifo(2, KILN_FORMAT_B8G8R8A8_UNORM, KILN_EXEC_ASYNC);
    test_fifo(3, KILN_FORMAT_R8G8B8A8_UNORM, KILN_EXEC_SERIAL);
    test_mailbox();
    uint32_t two = test_backpressure(2);
    uint32_t three = test_backpressure(3);
    CHECK_EQ_INT(three, two + 1);
    test_resize(2);
    test_resize(3);
    test_destroy_displays_queued(2);
    test_destroy_displays_queued(3);
    test_stuck_frames(2, KILN_EXEC_ASYNC);
    test_stuck_frames(3, KILN_EXEC_SERIAL);
    /* Last: the library's fixed-size present queue overflows here today. */
    test_resize_repeated(2, 3, false); /* 6 old + 4 live buffers: under the bound */
    test_resize_repeated(3, 6, true);  /* would need 18 old + 6 live: resize waits */
    return th_exit();
}
