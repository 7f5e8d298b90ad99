/*
 * Map waits only for conflicting work (DESIGN.md, "Life of a Map";
 * invariant 3), proven without timing: test gates (api/test_hooks.h) hold
 * chosen resources for read or write until the test opens them, so what
 * must still be pending is pending, and every wait is read from the device
 * statistics (waits_map_conflict), never from a clock.
 *
 * Each scenario runs on a fresh device in three configurations: ASYNC with
 * the default worker count, ASYNC with one worker (a gate occupies no
 * worker, so work beside it still runs), and SERIAL (commands run inline;
 * only a gate or a CPU map can keep anything pending).
 *
 * A hang here is a failure (ctest's timeout catches it); each scenario
 * prints its name first so the log shows which one hung.
 */
#define _POSIX_C_SOURCE 200809L

#include "api/test_hooks.h"
#include "harness.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct cfg {
    kiln_exec_mode mode;
    uint32_t threads;
    const char *name;
} cfg;

static const cfg CONFIGS[] = {
    {KILN_EXEC_ASYNC, 0, "async"},
    {KILN_EXEC_ASYNC, 1, "async-1-thread"},
    {KILN_EXEC_SERIAL, 0, "serial"},
};

#define N 64u /* bytes in the test buffers */

static void step(const cfg *c, const char *name)
{
    printf("[%s] %s\n", c->name, name);
    fflush(stdout);
}

static void pattern(uint8_t *p, uint32_t n, uint32_t seed)
{
    for (uint32_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed * 37u + i * 7u + 1u);
}

static kiln_device_stats stats(kiln_device *d)
{
    kiln_device_stats s;
    memset(&s, 0, sizeof s);
    CHECK_RESULT(kiln_device_get_stats(d, &s), KILN_OK);
    return s;
}

static kiln_buffer make_buffer(kiln_device *d, kiln_usage usage, uint32_t size, const uint8_t *init)
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

static kiln_texture make_staging_texture(kiln_device *d, uint32_t w, uint32_t h,
                                         const uint8_t *init)
{
    kiln_texture2d_desc td = {0};
    td.width = w;
    td.height = h;
    td.mip_levels = 1;
    td.format = KILN_FORMAT_R8G8B8A8_UNORM;
    td.usage = KILN_USAGE_STAGING;
    kiln_subresource_data sd = {init, 0};
    kiln_texture t = {0};
    CHECK_RESULT(kiln_create_texture2d(d, &td, init ? &sd : NULL, &t), KILN_OK);
    return t;
}

#define RB(b) kiln_buffer_resource(b)
#define RT(t) kiln_texture_resource(t)

/* Maps a buffer for READ (waiting if it must) and compares its bytes. */
static void check_buffer(kiln_context *ctx, kiln_buffer b, const uint8_t *expect, uint32_t n,
                         const char *what)
{
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(ctx, RB(b), 0, KILN_MAP_READ, 0, &m);
    CHECK_RESULT(r, KILN_OK);
    if (r != KILN_OK)
        return;
    int same = m.data && memcmp(m.data, expect, n) == 0;
    th_check(same, what, __FILE__, __LINE__);
    if (!same && m.data) {
        const uint8_t *got = m.data;
        for (uint32_t i = 0; i < n; i++) {
            if (got[i] != expect[i]) {
                fprintf(stderr, "    %s: byte %u is %u, expected %u\n", what, i, got[i], expect[i]);
                break;
            }
        }
    }
    CHECK_RESULT(kiln_unmap(ctx, RB(b), 0), KILN_OK);
}

/* A DO_NOT_WAIT map that must answer WAS_STILL_DRAWING without logging. */
static void check_still_drawing(kiln_context *ctx, kiln_resource r, kiln_map_type type)
{
    kiln_mapped_subresource m;
    th_log_reset();
    CHECK_RESULT(kiln_map(ctx, r, 0, type, KILN_MAP_FLAG_DO_NOT_WAIT, &m),
                 KILN_E_WAS_STILL_DRAWING);
    CHECK_EQ_INT(th_log_count(), 0);
}

static void hold(kiln_context *ctx, kiln_test_gate *g, const kiln_resource *res, const int *writes,
                 uint32_t count)
{
    CHECK_RESULT(kiln_test_hold(ctx, g, res, writes, count), KILN_OK);
}

static void finish_and_check_all_done(kiln_device *dev, kiln_context *ctx)
{
    CHECK_RESULT(kiln_finish(ctx), KILN_OK);
    kiln_device_stats s = stats(dev);
    CHECK_EQ_INT(s.commands_executed, s.commands_queued);
    CHECK_EQ_INT(s.commands_in_flight, 0);
}

/* ------------------------------------------------------------------------ */

/* While a gate holds A for write, Map(READ) of unrelated staging resources
 * returns: without any wait when nothing is queued on them, and with the
 * data of the commands queued on them before (which run beside the gate,
 * even on one worker). A itself answers WAS_STILL_DRAWING to every access. */
static void test_unrelated_map(const cfg *c)
{
    step(c, "unrelated map while a gate holds A for write");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p1[N], p2[N], zero[N] = {0};
    pattern(p1, N, 1);
    pattern(p2, N, 2);
    kiln_texture a = make_staging_texture(dev, 4, 4, p1); /* 4x4 RGBA8 = 64 bytes */
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b2 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer src = make_buffer(dev, KILN_USAGE_DEFAULT, N, NULL);
    kiln_buffer a2 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);

    kiln_test_gate *g = NULL, *g2 = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    CHECK_RESULT(kiln_test_gate_create(dev, &g2), KILN_OK);
    kiln_resource ra = RT(a), ra2 = RB(a2);
    int w = 1;
    hold(ctx, g, &ra, &w, 1);
    hold(ctx, g2, &ra2, &w, 1); /* a second parked gate: still no worker used */
    kiln_test_gate_wait_entered(g, 1);
    kiln_test_gate_wait_entered(g2, 1);

    /* Work on B queued before the Map; it can run now. */
    CHECK_RESULT(kiln_update_subresource(ctx, RB(src), 0, NULL, p2, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(src)), KILN_OK);
    if (c->mode == KILN_EXEC_SERIAL) {
        /* Nothing is pending in SERIAL mode but the two parked gates. */
        CHECK_EQ_INT(stats(dev).commands_in_flight, 2);
    }
    kiln_device_stats s0 = stats(dev);
    check_buffer(ctx, b, p2, N, "B holds the bytes copied before the Map");
    if (c->mode == KILN_EXEC_SERIAL)
        CHECK_EQ_INT(stats(dev).waits_map_conflict, s0.waits_map_conflict);
    /* The gates are still closed and holding. */
    CHECK_EQ_INT(kiln_test_gate_entered(g), 1);
    CHECK(stats(dev).commands_in_flight >= 2);

    /* Nothing queued on B2: the Map does not wait at all. */
    kiln_device_stats s1 = stats(dev);
    check_buffer(ctx, b2, zero, N, "B2 is zero");
    CHECK_EQ_INT(stats(dev).waits_map_conflict, s1.waits_map_conflict);
    /* DO_NOT_WAIT on B now succeeds (its work is done). */
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(b), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, RB(b), 0), KILN_OK);

    /* A is held for write: every access would wait. */
    kiln_device_stats s2 = stats(dev);
    check_still_drawing(ctx, RT(a), KILN_MAP_READ);
    check_still_drawing(ctx, RT(a), KILN_MAP_WRITE);
    check_still_drawing(ctx, RT(a), KILN_MAP_READ_WRITE);
    check_still_drawing(ctx, RB(a2), KILN_MAP_READ);
    CHECK_EQ_INT(stats(dev).waits_map_conflict, s2.waits_map_conflict);
    /* A refused DO_NOT_WAIT map leaves nothing mapped. */
    CHECK_FAILS(kiln_unmap(ctx, RT(a), 0), KILN_E_INVALID_CALL, KILN_LOG_UNMAP_NOT_MAPPED);

    kiln_test_gate_open(g);
    kiln_test_gate_open(g2);
    finish_and_check_all_done(dev, ctx);
    CHECK_RESULT(kiln_map(ctx, RT(a), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    if (m.data) {
        int ok = 1;
        for (uint32_t y = 0; y < 4; y++)
            ok &= memcmp((uint8_t *)m.data + (size_t)y * m.row_pitch, p1 + y * 16, 16) == 0;
        CHECK(ok);
    }
    CHECK_RESULT(kiln_unmap(ctx, RT(a), 0), KILN_OK);

    kiln_test_gate_destroy(g);
    kiln_test_gate_destroy(g2);
    CHECK_RESULT(kiln_destroy_texture(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b2), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, src), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, a2), KILN_OK);
    kiln_device_destroy(dev);
}

/* A gate that only reads A: CPU reads and copies that read A pass it; CPU
 * writes would wait. */
static void test_read_hold(const cfg *c)
{
    step(c, "gate holds A for read");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[N];
    pattern(p, N, 3);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, p);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource ra = RB(a);
    int rd = 0;
    hold(ctx, g, &ra, &rd, 1);
    kiln_test_gate_wait_entered(g, 1);

    kiln_device_stats s0 = stats(dev);
    kiln_mapped_subresource m;
    th_log_reset();
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    CHECK(m.data && memcmp(m.data, p, N) == 0);
    CHECK_EQ_INT(th_log_count(), 0);
    CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);
    CHECK_EQ_INT(stats(dev).waits_map_conflict, s0.waits_map_conflict);

    check_still_drawing(ctx, RB(a), KILN_MAP_WRITE);
    check_still_drawing(ctx, RB(a), KILN_MAP_READ_WRITE);
    CHECK_EQ_INT(stats(dev).waits_map_conflict, s0.waits_map_conflict);

    /* A copy that reads A runs beside the reading gate. */
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    check_buffer(ctx, b, p, N, "copy from a read-held resource completed");
    CHECK_EQ_INT(kiln_test_gate_entered(g), 1);

    /* The reads did not disturb the hold: WRITE still has to wait. */
    check_still_drawing(ctx, RB(a), KILN_MAP_WRITE);

    kiln_test_gate_open(g);
    finish_and_check_all_done(dev, ctx);
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);

    kiln_test_gate_destroy(g);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    kiln_device_destroy(dev);
}

/* DYNAMIC buffer D read by a gate. NO_OVERWRITE maps at once on the same
 * storage; DISCARD maps at once on fresh zeroed storage (a rename); copies
 * from D queued before the DISCARD, and stuck behind a gate that holds their
 * destination S1, still read the old bytes after the gate opens. */
static void test_dynamic(const cfg *c)
{
    step(c, "WRITE_DISCARD / WRITE_NO_OVERWRITE on a DYNAMIC buffer read by a gate");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t x[N], y[N], z[N], zero[N] = {0};
    pattern(x, N, 4);
    pattern(y, N, 5);
    pattern(z, N, 6);
    kiln_buffer d = make_buffer(dev, KILN_USAGE_DYNAMIC, N, x);
    kiln_buffer s1 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer s2 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource held[2] = {RB(d), RB(s1)};
    int modes[2] = {0, 1};
    hold(ctx, g, held, modes, 2);
    kiln_test_gate_wait_entered(g, 1);

    /* First half of D -> S1: waits for the gate (S1 is held for write). */
    kiln_box lo = {0, 0, 0, N / 2, 1, 1};
    kiln_box hi = {N / 2, 0, 0, N, 1, 1};
    CHECK_RESULT(kiln_copy_subresource_region(ctx, RB(s1), 0, 0, 0, 0, RB(d), 0, &lo), KILN_OK);
    CHECK_EQ_INT(stats(dev).commands_in_flight, 2);

    /* NO_OVERWRITE: at once, same storage, no rename. Write only the half
     * no queued command reads. */
    kiln_device_stats s0 = stats(dev);
    kiln_mapped_subresource m;
    th_log_reset();
    CHECK_RESULT(kiln_map(ctx, RB(d), 0, KILN_MAP_WRITE_NO_OVERWRITE, 0, &m), KILN_OK);
    CHECK_EQ_INT(th_log_count(), 0);
    void *old_ptr = m.data; /* the old storage stays alive: its readers are queued */
    if (m.data) {
        CHECK(memcmp(m.data, x, N) == 0);
        memcpy((uint8_t *)m.data + N / 2, z + N / 2, N / 2);
    }
    CHECK_RESULT(kiln_unmap(ctx, RB(d), 0), KILN_OK);
    kiln_device_stats s1st = stats(dev);
    CHECK_EQ_INT(s1st.waits_map_conflict, s0.waits_map_conflict);
    CHECK_EQ_INT(s1st.renames, s0.renames);

    /* Second half of the (old) storage -> S1, also behind the gate. */
    CHECK_RESULT(kiln_copy_subresource_region(ctx, RB(s1), 0, N / 2, 0, 0, RB(d), 0, &hi), KILN_OK);

    /* Plain WRITE must wait for the readers of D. */
    check_still_drawing(ctx, RB(d), KILN_MAP_WRITE);

    /* DISCARD: at once, fresh zeroed storage. */
    s0 = stats(dev);
    th_log_reset();
    CHECK_RESULT(kiln_map(ctx, RB(d), 0, KILN_MAP_WRITE_DISCARD, 0, &m), KILN_OK);
    CHECK_EQ_INT(th_log_count(), 0);
    CHECK(m.data != NULL && m.data != old_ptr);
    if (m.data) {
        CHECK(memcmp(m.data, zero, N) == 0);
        memcpy(m.data, y, N);
    }
    CHECK_RESULT(kiln_unmap(ctx, RB(d), 0), KILN_OK);
    kiln_device_stats s3 = stats(dev);
    CHECK_EQ_INT(s3.renames, s0.renames + 1);
    CHECK_EQ_INT(s3.waits_map_conflict, s0.waits_map_conflict);

    /* D's new storage is used by nobody: WRITE with DO_NOT_WAIT succeeds. */
    CHECK_RESULT(kiln_map(ctx, RB(d), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    if (m.data)
        CHECK(memcmp(m.data, y, N) == 0);
    CHECK_RESULT(kiln_unmap(ctx, RB(d), 0), KILN_OK);

    /* A copy queued now reads the new bytes, and is not behind the gate. */
    CHECK_RESULT(kiln_copy_resource(ctx, RB(s2), RB(d)), KILN_OK);
    check_buffer(ctx, s2, y, N, "S2 holds the bytes written after DISCARD");
    CHECK_EQ_INT(kiln_test_gate_entered(g), 1);
    check_still_drawing(ctx, RB(s1), KILN_MAP_READ);

    kiln_test_gate_open(g);
    finish_and_check_all_done(dev, ctx);
    uint8_t expect[N];
    memcpy(expect, x, N / 2);
    memcpy(expect + N / 2, z + N / 2, N / 2);
    check_buffer(ctx, s1, expect, N, "S1 holds the old storage's bytes (x, then NO_OVERWRITE's z)");

    kiln_test_gate_destroy(g);
    CHECK_RESULT(kiln_destroy_buffer(dev, d), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, s1), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, s2), KILN_OK);
    kiln_device_destroy(dev);
}

/* Between Map and Unmap the CPU holds the resource: commands queued later
 * that use it wait for Unmap (SERIAL too). A READ map holds only against
 * writers. */
static void test_queued_after_map(const cfg *c)
{
    step(c, "commands queued after a Map wait for the Unmap");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[N], q[N];
    pattern(p, N, 7);
    pattern(q, N, 8);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b2 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);

    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, p, N);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    check_still_drawing(ctx, RB(b), KILN_MAP_READ);
    kiln_device_stats s = stats(dev);
    CHECK_EQ_INT(s.commands_in_flight, 1);
    CHECK_EQ_INT(s.commands_queued, 1);
    CHECK_EQ_INT(s.commands_executed, 0);
    CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);
    finish_and_check_all_done(dev, ctx);
    check_buffer(ctx, b, p, N, "B received the bytes written during the Map");

    /* A READ map does not hold back commands that only read A. */
    CHECK_RESULT(kiln_map(ctx, RB(b), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b2), RB(b)), KILN_OK);
    check_buffer(ctx, b2, p, N, "a copy reading a READ-mapped resource ran");
    CHECK_RESULT(kiln_finish(ctx), KILN_OK); /* nothing waits for the READ map */
    /* ...but does hold back writers of B. */
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, q, N);
    CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);
    kiln_device_stats s1 = stats(dev);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    CHECK_EQ_INT(stats(dev).commands_in_flight, 1);
    CHECK_EQ_INT(stats(dev).commands_executed, s1.commands_executed);
    /* The stuck copy was queued before any new CPU write of A (WAR)... */
    check_still_drawing(ctx, RB(a), KILN_MAP_WRITE);
    /* ...while B2, used by nothing queued, maps at once. */
    CHECK_RESULT(kiln_map(ctx, RB(b2), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, RB(b2), 0), KILN_OK);
    CHECK_FAILS(kiln_finish(ctx), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    CHECK_RESULT(kiln_unmap(ctx, RB(b), 0), KILN_OK);
    finish_and_check_all_done(dev, ctx);
    check_buffer(ctx, b, q, N, "the copy into B ran after B's Unmap");

    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b2), KILN_OK);
    kiln_device_destroy(dev);
}

/* Everything queued behind a gate completes in submission order once it
 * opens: WAW on A's overlapping regions, RAW for B, WAR for P0. */
static void test_order_after_gate(const cfg *c)
{
    step(c, "queued work completes in order after the gate opens");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t pk[4][N], q0[N];
    kiln_buffer p[4];
    for (uint32_t k = 0; k < 4; k++) {
        pattern(pk[k], N, 10 + k);
        p[k] = make_buffer(dev, KILN_USAGE_DEFAULT, N, pk[k]);
    }
    pattern(q0, N, 20);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer c0 = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource ra = RB(a);
    int w = 1;
    hold(ctx, g, &ra, &w, 1);
    kiln_test_gate_wait_entered(g, 1);
    kiln_device_stats s0 = stats(dev);

    for (uint32_t k = 0; k < 4; k++) {
        kiln_box box = {k * 8, 0, 0, N, 1, 1};
        CHECK_RESULT(kiln_copy_subresource_region(ctx, RB(a), 0, k * 8, 0, 0, RB(p[k]), 0, &box),
                     KILN_OK);
        if (k == 1)
            CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    }
    /* WAR: P0 is rewritten after the copy that reads it was queued. */
    CHECK_RESULT(kiln_update_subresource(ctx, RB(p[0]), 0, NULL, q0, 0, 0), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(c0), RB(p[0])), KILN_OK);
    kiln_device_stats s1 = stats(dev);
    CHECK_EQ_INT(s1.commands_queued - s0.commands_queued, 7);
    /* Everything but the update and the copy to C0 is stuck on A; the
     * update of P0 waits for the first copy (WAR), the copy to C0 for it. */
    CHECK_EQ_INT(s1.commands_in_flight, 8);
    check_still_drawing(ctx, RB(b), KILN_MAP_READ);
    check_still_drawing(ctx, RB(c0), KILN_MAP_READ);

    kiln_test_gate_open(g);
    finish_and_check_all_done(dev, ctx);
    uint8_t ea[N], eb[N];
    for (uint32_t i = 0; i < N; i++) {
        uint32_t k = i / 8 < 3 ? i / 8 : 3;
        ea[i] = pk[k][i];
        eb[i] = pk[i / 8 < 1 ? 0 : 1][i];
    }
    check_buffer(ctx, a, ea, N, "A: overlapping region copies in submission order");
    check_buffer(ctx, b, eb, N, "B: copied from A between the second and third copy");
    check_buffer(ctx, c0, q0, N, "C0: P0 after its update");

    kiln_test_gate_destroy(g);
    for (uint32_t k = 0; k < 4; k++)
        CHECK_RESULT(kiln_destroy_buffer(dev, p[k]), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, c0), KILN_OK);
    kiln_device_destroy(dev);
}

/* A blocking Map that must wait: another thread opens the gate only once
 * the Map has counted its wait, so the Map certainly waited, and it cannot
 * return before the gate opened. */
typedef struct opener {
    kiln_device *dev;
    kiln_test_gate *gate;
    uint64_t waits_before;
    atomic_int opened;
} opener;

static void *opener_main(void *arg)
{
    opener *o = arg;
    kiln_test_gate_wait_entered(o->gate, 1);
    for (;;) {
        kiln_device_stats s;
        if (kiln_device_get_stats(o->dev, &s) != KILN_OK)
            break;
        if (s.waits_map_conflict > o->waits_before)
            break;
        sched_yield();
    }
    atomic_store(&o->opened, 1);
    kiln_test_gate_open(o->gate);
    return NULL;
}

static void test_blocking_map(const cfg *c, int gate_writes)
{
    step(c, gate_writes ? "blocking Map(READ) waits for a writing gate"
                        : "blocking Map(WRITE) waits for a reading gate");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[N], init[N];
    pattern(p, N, 30);
    pattern(init, N, 31);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, init);
    kiln_buffer src = make_buffer(dev, KILN_USAGE_DEFAULT, N, p);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_resource ra = RB(a);
    int mode = gate_writes;
    hold(ctx, g, &ra, &mode, 1);
    if (gate_writes) /* and a writer behind the gate, which the Map must see */
        CHECK_RESULT(kiln_copy_resource(ctx, RB(a), RB(src)), KILN_OK);

    opener o = {dev, g, stats(dev).waits_map_conflict, 0};
    pthread_t th;
    CHECK(pthread_create(&th, NULL, opener_main, &o) == 0);
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(ctx, RB(a), 0, gate_writes ? KILN_MAP_READ : KILN_MAP_WRITE, 0, &m);
    CHECK_RESULT(r, KILN_OK);
    CHECK_EQ_INT(atomic_load(&o.opened), 1);
    CHECK_EQ_INT(stats(dev).waits_map_conflict, o.waits_before + 1);
    if (r == KILN_OK) {
        if (m.data)
            CHECK(memcmp(m.data, gate_writes ? p : init, N) == 0);
        CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);
    }
    pthread_join(th, NULL);
    finish_and_check_all_done(dev, ctx);

    kiln_test_gate_destroy(g);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, src), KILN_OK);
    kiln_device_destroy(dev);
}

/* Waiting for work that only this thread's Unmap can release is refused
 * with WOULD_DEADLOCK instead of hanging: Map, finish, and a command that
 * needs a slot of a ring full of commands stuck behind the map. */
static void test_deadlock(const cfg *c)
{
    step(c, "WOULD_DEADLOCK instead of hanging behind our own Map");
    kiln_device_desc desc = {0};
    desc.exec_mode = c->mode;
    desc.num_threads = c->threads;
    desc.command_ring_capacity = 4;
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[N];
    pattern(p, N, 40);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer e = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);

    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, p, N);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);

    CHECK_FAILS(kiln_map(ctx, RB(b), 0, KILN_MAP_READ, 0, &m), KILN_E_WOULD_DEADLOCK,
                KILN_LOG_WOULD_DEADLOCK);
    CHECK_FAILS(kiln_unmap(ctx, RB(b), 0), KILN_E_INVALID_CALL, KILN_LOG_UNMAP_NOT_MAPPED);
    check_still_drawing(ctx, RB(b), KILN_MAP_READ);
    CHECK_FAILS(kiln_finish(ctx), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    /* Unrelated resources are still fine. */
    CHECK_RESULT(kiln_map(ctx, RB(e), 0, KILN_MAP_READ, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, RB(e), 0), KILN_OK);

    /* Fill the ring (capacity 4) with commands stuck behind A. */
    CHECK_RESULT(kiln_copy_resource(ctx, RB(e), RB(a)), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(e), RB(a)), KILN_OK);
    kiln_device_stats s0 = stats(dev);
    CHECK_EQ_INT(s0.commands_in_flight, 4);
    CHECK_FAILS(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_E_WOULD_DEADLOCK,
                KILN_LOG_WOULD_DEADLOCK);
    CHECK_EQ_INT(stats(dev).commands_queued, s0.commands_queued); /* nothing was queued */

    CHECK_RESULT(kiln_unmap(ctx, RB(a), 0), KILN_OK);
    finish_and_check_all_done(dev, ctx);
    check_buffer(ctx, b, p, N, "B after Unmap");
    check_buffer(ctx, e, p, N, "E after Unmap");
    /* The refused calls left nothing behind: a CPU write to B passes now. */
    CHECK_RESULT(kiln_map(ctx, RB(b), 0, KILN_MAP_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m), KILN_OK);
    CHECK_RESULT(kiln_unmap(ctx, RB(b), 0), KILN_OK);

    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, e), KILN_OK);
    kiln_device_destroy(dev);
}

/* A map made through another context: when this thread made it, nothing
 * else could unmap it, so a call that would wait behind it is refused; when
 * another thread made it, the call waits for that thread's Unmap. (The
 * capture fuzzer's cross-context-map-ring-full input hung here.) */
typedef struct other_mapper {
    kiln_device *dev;
    kiln_context *ctx;
    kiln_buffer a;
    const uint8_t *p;
    atomic_int mapped;
    uint64_t ring_waits_before;
    kiln_result map_r, unmap_r;
} other_mapper;

static void *map_then_unmap_when_waited(void *arg)
{
    other_mapper *o = arg;
    kiln_mapped_subresource m;
    o->map_r = kiln_map(o->ctx, RB(o->a), 0, KILN_MAP_WRITE, 0, &m);
    if (o->map_r == KILN_OK && m.data)
        memcpy(m.data, o->p, N);
    atomic_store(&o->mapped, 1);
    /* Unmap once the main thread waits for a command slot (bounded: a
     * refusal instead of a wait must fail the test, not hang it). */
    for (int i = 0; i < 100000; i++) { /* (no CHECK here: the harness counts on one thread) */
        kiln_device_stats s;
        if (kiln_device_get_stats(o->dev, &s) != KILN_OK || s.waits_ring_full != o->ring_waits_before)
            break;
        sched_yield();
    }
    o->unmap_r = o->map_r == KILN_OK ? kiln_unmap(o->ctx, RB(o->a), 0) : KILN_OK;
    return NULL;
}

static void test_deadlock_other_context(const cfg *c)
{
    step(c, "a map through another context: refused on this thread, waited for on another");
    kiln_device_desc desc = {0};
    desc.exec_mode = c->mode;
    desc.num_threads = c->threads;
    desc.command_ring_capacity = 4;
    kiln_device *dev = th_device_desc(desc);
    kiln_context *ctx = kiln_device_immediate_context(dev), *ctx2 = NULL;
    CHECK_RESULT(kiln_context_create(dev, &ctx2), KILN_OK);
    uint8_t p[N];
    pattern(p, N, 41);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);

    /* This thread maps A through ctx2 and queues copies out of A through
     * ctx: four fill the ring, the fifth and finish are refused. */
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx2, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, p, N);
    for (int i = 0; i < 4; i++)
        CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    CHECK_FAILS(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_E_WOULD_DEADLOCK,
                KILN_LOG_WOULD_DEADLOCK);
    CHECK_FAILS(kiln_finish(ctx), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    CHECK_RESULT(kiln_unmap(ctx2, RB(a), 0), KILN_OK);
    finish_and_check_all_done(dev, ctx);
    check_buffer(ctx, b, p, N, "B after the refused copy");

    /* Nor can a context whose work waits behind such a map be destroyed
     * (its work could never complete): it stays, and goes after Unmap. */
    kiln_context *ctx3 = NULL;
    CHECK_RESULT(kiln_context_create(dev, &ctx3), KILN_OK);
    pattern(p, N, 43);
    CHECK_RESULT(kiln_map(ctx2, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    if (m.data)
        memcpy(m.data, p, N);
    CHECK_RESULT(kiln_copy_resource(ctx3, RB(b), RB(a)), KILN_OK);
    CHECK_FAILS(kiln_context_destroy(ctx3), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    CHECK_RESULT(kiln_unmap(ctx2, RB(a), 0), KILN_OK);
    CHECK_RESULT(kiln_context_destroy(ctx3), KILN_OK);
    check_buffer(ctx, b, p, N, "B after the context's copy");

    /* Another thread maps A through ctx2: the fifth copy waits for its
     * Unmap, and every copy sees what it wrote. */
    other_mapper o = {.dev = dev, .ctx = ctx2, .a = a, .p = p};
    pattern(p, N, 42);
    o.ring_waits_before = stats(dev).waits_ring_full;
    pthread_t th;
    CHECK(pthread_create(&th, NULL, map_then_unmap_when_waited, &o) == 0);
    while (!atomic_load(&o.mapped))
        sched_yield();
    for (int i = 0; i < 5; i++)
        CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    pthread_join(th, NULL);
    CHECK_RESULT(o.map_r, KILN_OK);
    CHECK_RESULT(o.unmap_r, KILN_OK);
    CHECK_EQ_INT(stats(dev).waits_ring_full, o.ring_waits_before + 1);
    finish_and_check_all_done(dev, ctx);
    check_buffer(ctx, b, p, N, "B after the other thread's Unmap");

    CHECK_RESULT(kiln_context_destroy(ctx2), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    kiln_device_destroy(dev);
}

/* A client wait on the context's own points behind this thread's map
 * would never return: refused. With a point on an application timeline in
 * the fence (any thread may signal it), or a map of another thread, it
 * waits as asked. */
typedef struct holder {
    kiln_context *ctx;
    kiln_buffer a;
    atomic_int state; /* 1 mapped, 2 may unmap, 3 unmapped */
} holder;

static void *hold_map(void *arg)
{
    holder *h = arg;
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(h->ctx, RB(h->a), 0, KILN_MAP_WRITE, 0, &m);
    atomic_store(&h->state, r == KILN_OK ? 1 : -1);
    while (atomic_load(&h->state) == 1)
        sched_yield();
    if (r == KILN_OK)
        kiln_unmap(h->ctx, RB(h->a), 0);
    atomic_store(&h->state, 3);
    return NULL;
}

static void test_fence_behind_own_map(const cfg *c)
{
    step(c, "a fence wait behind this thread's own map");
    kiln_device *dev = th_device(c->mode, c->threads);
    kiln_context *ctx = kiln_device_immediate_context(dev), *ctx2 = NULL;
    CHECK_RESULT(kiln_context_create(dev, &ctx2), KILN_OK);
    kiln_buffer a = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_buffer b = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_mapped_subresource m;
    CHECK_RESULT(kiln_map(ctx2, RB(a), 0, KILN_MAP_WRITE, 0, &m), KILN_OK);
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    kiln_fence f = {0}, user = {0}, both = {0};
    CHECK_RESULT(kiln_context_insert_fence(ctx, &f), KILN_OK);
    kiln_sync_token tok;
    CHECK_RESULT(kiln_context_sync_token(ctx, &tok), KILN_OK);
    CHECK_FAILS(kiln_fence_wait(dev, f, UINT64_MAX), KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK);
    CHECK_FAILS(kiln_wait_sync_token(dev, tok, UINT64_MAX), KILN_E_WOULD_DEADLOCK,
                KILN_LOG_WOULD_DEADLOCK);
    /* With an application timeline's point in it: waited for (timed out). */
    kiln_timeline tl = {0};
    CHECK_RESULT(kiln_create_timeline(dev, 0, &tl), KILN_OK);
    CHECK_RESULT(kiln_create_fence(dev, tl, 1, &user), KILN_OK);
    CHECK_RESULT(kiln_fence_merge(dev, f, user, &both), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, both, 1000000), KILN_E_TIMEOUT);
    CHECK_RESULT(kiln_unmap(ctx2, RB(a), 0), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, f, UINT64_MAX), KILN_OK);
    CHECK_RESULT(kiln_wait_sync_token(dev, tok, UINT64_MAX), KILN_OK);

    /* Another thread's map: waited for until it unmaps. */
    holder h = {.ctx = ctx2, .a = a};
    atomic_init(&h.state, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, hold_map, &h) == 0);
    while (atomic_load(&h.state) == 0)
        sched_yield();
    CHECK_RESULT(kiln_copy_resource(ctx, RB(b), RB(a)), KILN_OK);
    kiln_fence g = {0};
    CHECK_RESULT(kiln_context_insert_fence(ctx, &g), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, g, 1000000), KILN_E_TIMEOUT);
    atomic_store(&h.state, 2);
    CHECK_RESULT(kiln_fence_wait(dev, g, UINT64_MAX), KILN_OK);
    pthread_join(th, NULL);
    CHECK_EQ_INT(atomic_load(&h.state), 3);

    CHECK_RESULT(kiln_timeline_signal(dev, tl, 1), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, both, UINT64_MAX), KILN_OK);
    kiln_destroy_fence(dev, f);
    kiln_destroy_fence(dev, g);
    kiln_destroy_fence(dev, user);
    kiln_destroy_fence(dev, both);
    kiln_destroy_timeline(dev, tl);
    CHECK_RESULT(kiln_context_destroy(ctx2), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, a), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, b), KILN_OK);
    kiln_device_destroy(dev);
}

/* SERIAL: with no gate and no CPU map, nothing is ever still drawing. */
static void test_serial_never_still_drawing(void)
{
    cfg c = {KILN_EXEC_SERIAL, 0, "serial"};
    step(&c, "nothing is still drawing except behind a CPU map");
    kiln_device *dev = th_device(KILN_EXEC_SERIAL, 0);
    kiln_context *ctx = kiln_device_immediate_context(dev);
    uint8_t p[N];
    kiln_buffer d = make_buffer(dev, KILN_USAGE_DEFAULT, N, NULL);
    kiln_buffer s = make_buffer(dev, KILN_USAGE_STAGING, N, NULL);
    kiln_mapped_subresource m;
    for (uint32_t i = 0; i < 50; i++) {
        pattern(p, N, 100 + i);
        CHECK_RESULT(kiln_update_subresource(ctx, RB(d), 0, NULL, p, 0, 0), KILN_OK);
        CHECK_EQ_INT(stats(dev).commands_in_flight, 0);
        CHECK_RESULT(kiln_copy_resource(ctx, RB(s), RB(d)), KILN_OK);
        CHECK_EQ_INT(stats(dev).commands_in_flight, 0);
        kiln_result r = kiln_map(ctx, RB(s), 0, KILN_MAP_READ_WRITE, KILN_MAP_FLAG_DO_NOT_WAIT, &m);
        CHECK_RESULT(r, KILN_OK);
        if (r == KILN_OK) {
            CHECK(m.data && memcmp(m.data, p, N) == 0);
            CHECK_RESULT(kiln_unmap(ctx, RB(s), 0), KILN_OK);
        }
    }
    CHECK_EQ_INT(stats(dev).waits_map_conflict, 0);
    CHECK_EQ_INT(stats(dev).waits_finish, 0);
    CHECK_RESULT(kiln_destroy_buffer(dev, d), KILN_OK);
    CHECK_RESULT(kiln_destroy_buffer(dev, s), KILN_OK);
    kiln_device_destroy(dev);
}

int main(void)
{
    for (size_t i = 0; i < sizeof CONFIGS / sizeof CONFIGS[0]; i++) {
        const cfg *c = &CONFIGS[i];
        test_unrelated_map(c);
        test_read_hold(c);
        test_dynamic(c);
        test_queued_after_map(c);
        test_order_after_gate(c);
        test_blocking_map(c, 1);
        test_blocking_map(c, 0);
        test_deadlock(c);
        test_deadlock_other_context(c);
        test_fence_behind_own_map(c);
    }
    test_serial_never_still_drawing();
    return th_exit();
}
