#define _POSIX_C_SOURCE 200809L /* nanosleep */
/*
 * Failures found while executing, and device loss (kiln.h "Errors",
 * "Timelines, sync points and fences"), in ASYNC and SERIAL mode:
 *
 *  - a command that fails while executing (kiln_test_fail) is logged exactly
 *    once, with COMMAND_FAILED, its sequence number and its API name;
 *  - exactly the dependent completion points error: the first point queued
 *    after the failure and the others at the same place in the stream
 *    (fence, context signal, sync token, event query); a point before it
 *    and a point after a later command are signaled; fences merged with an
 *    errored one error; later work runs and leaves the right bytes; the
 *    outcome is the same whether the failure happens before or after the
 *    points are created (a gate holds it in the second case);
 *  - a server wait on an errored fence in another context (or on a point
 *    of a destroyed timeline, or on a merged fence one part of which is in
 *    error): its commands still run, its next point errors, the one after
 *    does not;
 *  - a point created late on a timeline that has seen many failures is in
 *    the state the signal that reached it had;
 *  - kiln_device_destroy with fences nobody signals: a thread blocked in
 *    kiln_fence_wait(UINT64_MAX) returns DEVICE_LOST, pending async
 *    callbacks run once with DEVICE_LOST, contexts whose commands sit behind
 *    a server wait are completed, and every byte allocated through the
 *    device's allocator is freed once the waiting thread has returned.
 */
#include "sync_util.h"

#include "api/test_hooks.h"

#include <pthread.h>
#include <stdio.h>

/* Workers report failures through the log callback while other calls are
 * under way, so "this call logged nothing" cannot be checked call by call
 * here: each test checks the total number of log calls at its end instead
 * (exactly one per injected failure, nothing else). */
#undef SU_RETURNS
#define SU_RETURNS(call, code) CHECK_RESULT(call, code)

static kiln_device *dev;
static kiln_exec_mode mode;

#define BYTES 1024

static kiln_fence ins_fence(kiln_context *c)
{
    kiln_fence f = {0};
    SU_OK(kiln_context_insert_fence(c, &f));
    return f;
}

static kiln_fence mk_fence(kiln_timeline t, uint64_t v)
{
    kiln_fence f = {0};
    SU_OK(kiln_create_fence(dev, t, v, &f));
    return f;
}

static kiln_fence mk_merge(kiln_fence a, kiln_fence b)
{
    kiln_fence f = {0};
    SU_OK(kiln_fence_merge(dev, a, b, &f));
    return f;
}

static void update(kiln_context *c, kiln_buffer b, uint32_t seed)
{
    uint8_t data[BYTES];
    su_pattern(data, BYTES, seed);
    SU_OK(kiln_update_subresource(c, kiln_buffer_resource(b), 0, NULL, data, 0, 0));
}

static kiln_result fail_on(kiln_context *c, kiln_buffer b)
{
    kiln_resource r = kiln_buffer_resource(b);
    int w = 1;
    return kiln_test_fail(c, &r, &w, 1);
}

/* Staging buffer `s` holds su_pattern(seed); maps on context c. */
static int staging_is(kiln_context *c, kiln_buffer s, uint32_t seed)
{
    uint8_t want[BYTES];
    su_pattern(want, BYTES, seed);
    kiln_mapped_subresource m;
    if (kiln_map(c, kiln_buffer_resource(s), 0, KILN_MAP_READ, 0, &m) != KILN_OK)
        return 0;
    int ok = memcmp(m.data, want, BYTES) == 0;
    kiln_unmap(c, kiln_buffer_resource(s), 0);
    return ok;
}

static uint32_t failed_logs(void)
{
    (void)th_log_count(); /* takes the recorder's lock */
    return th_logs.per_id[KILN_LOG_COMMAND_FAILED];
}

/* ---- the log ---- */

static void test_logged_once(void)
{
    kiln_context *c = NULL;
    SU_OK(kiln_context_create(dev, &c));
    kiln_buffer x = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0),
                y = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0);
    th_log_reset();
    update(c, y, 1);                         /* command #1 */
    update(c, y, 2);                         /* command #2 */
    CHECK_RESULT(fail_on(c, x), KILN_OK);    /* command #3: fails later */
    kiln_fence f = ins_fence(c);
    SU_RETURNS(kiln_fence_wait(dev, f, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, f, 0), KILN_E_COMMAND_FAILED);
    SU_OK(kiln_finish(c));
    CHECK_EQ_INT(th_log_count(), 1);
    CHECK_EQ_INT(failed_logs(), 1);
    CHECK_EQ_INT(th_log_last(), KILN_LOG_COMMAND_FAILED);
    const char *msg = th_logs.last_message;
    const char *at = strstr(msg, "command #3");
    CHECK(at != NULL && !(at[10] >= '0' && at[10] <= '9'));
    CHECK(strstr(msg, "kiln_test_fail") != NULL);
    if (!at || !strstr(msg, "kiln_test_fail"))
        fprintf(stderr, "    message: %s\n", msg);
    /* Asking again, waiting again, more work: never logged again. */
    kiln_fence_status st;
    SU_OK(kiln_fence_poll(dev, f, &st));
    CHECK_EQ_INT(st, KILN_FENCE_ERROR);
    update(c, y, 3);
    kiln_fence g = ins_fence(c);
    SU_RETURNS(kiln_fence_wait(dev, g, UINT64_MAX), KILN_OK);
    SU_OK(kiln_finish(c));
    SU_OK(kiln_destroy_fence(dev, f));
    SU_OK(kiln_destroy_fence(dev, g));
    SU_OK(kiln_context_destroy(c));
    CHECK_EQ_INT(th_log_count(), 1);

    /* A failure in the immediate context, with no point after it at all,
     * is logged once too (and nothing leaks at device destruction). */
    th_log_reset();
    CHECK_RESULT(fail_on(kiln_device_immediate_context(dev), x), KILN_OK);
    SU_OK(kiln_finish(kiln_device_immediate_context(dev)));
    CHECK_EQ_INT(th_log_count(), 1);
    CHECK_EQ_INT(failed_logs(), 1);
    CHECK(strstr(th_logs.last_message, "kiln_test_fail") != NULL);
    SU_OK(kiln_destroy_buffer(dev, x));
    SU_OK(kiln_destroy_buffer(dev, y));
}

/* ---- which points error ---- */

/* gated: the failing command waits behind a gate until every point below
 * exists, so the failure is found after they were created; otherwise it
 * may run at any moment (in SERIAL mode: at once). Same outcome. */
static void test_dependent_points(int gated)
{
    kiln_context *c = NULL, *d = NULL;
    SU_OK(kiln_context_create(dev, &c));
    SU_OK(kiln_context_create(dev, &d));
    kiln_buffer x = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0),
                y = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0),
                z = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0),
                sx = su_buffer(dev, BYTES, KILN_USAGE_STAGING, 0),
                sy = su_buffer(dev, BYTES, KILN_USAGE_STAGING, 0),
                sz = su_buffer(dev, BYTES, KILN_USAGE_STAGING, 0),
                sz2 = su_buffer(dev, BYTES, KILN_USAGE_STAGING, 0);
    kiln_resource rx = kiln_buffer_resource(x);
    kiln_timeline tl = {0};
    SU_OK(kiln_create_timeline(dev, 0, &tl));
    kiln_query q = {0};
    SU_OK(kiln_create_query(dev, KILN_QUERY_EVENT, &q));
    kiln_test_gate *gate = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &gate), KILN_OK);
    int w = 1;
    th_log_reset();

    update(c, y, 10);
    kiln_fence f_before = ins_fence(c);
    if (gated)
        CHECK_RESULT(kiln_test_hold(c, gate, &rx, &w, 1), KILN_OK);
    CHECK_RESULT(fail_on(c, x), KILN_OK);
    /* Every point at this place in the stream errors. */
    kiln_fence f_err = ins_fence(c);
    SU_OK(kiln_context_signal(c, tl, 1));
    kiln_sync_token tok;
    SU_OK(kiln_context_sync_token(c, &tok));
    SU_OK(kiln_query_end(c, q));
    kiln_fence f_err2 = ins_fence(c);
    kiln_fence m_early = mk_merge(f_before, f_err);
    su_cb cb_err, cb_merged;
    su_cb_init(&cb_err);
    su_cb_init(&cb_merged);
    SU_OK(kiln_fence_wait_async(dev, f_err, su_cb_fn, &cb_err));
    SU_OK(kiln_fence_wait_async(dev, m_early, su_cb_fn, &cb_merged));
    /* Later, independent work, including a write of the failed resource. */
    update(c, y, 11);
    update(c, x, 12);
    kiln_fence f_after = ins_fence(c);
    SU_OK(kiln_context_signal(c, tl, 2));
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(sy), kiln_buffer_resource(y)));
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(sx), kiln_buffer_resource(x)));
    /* The first point after a failure errors even with commands between. */
    CHECK_RESULT(fail_on(c, x), KILN_OK);
    update(c, y, 13);
    kiln_fence f_first = ins_fence(c);
    update(c, y, 14);
    kiln_fence f_next = ins_fence(c);

    /* Another context waits (server side) on the errored fence. */
    SU_OK(kiln_context_wait(d, f_err));
    update(d, z, 20);
    SU_OK(kiln_copy_resource(d, kiln_buffer_resource(sz), kiln_buffer_resource(z)));
    kiln_fence fd1 = ins_fence(d);
    update(d, z, 21);
    kiln_fence fd2 = ins_fence(d);
    /* ... and on the errored token. */
    SU_OK(kiln_context_wait_sync_token(d, tok));
    SU_OK(kiln_copy_resource(d, kiln_buffer_resource(sz2), kiln_buffer_resource(z)));
    kiln_fence fd3 = ins_fence(d);
    kiln_fence fd4 = ins_fence(d); /* same place: errors too */
    update(d, z, 22);
    kiln_fence fd5 = ins_fence(d);

    if (gated) {
        kiln_mapped_subresource m;
        CHECK_POLL(dev, f_err, KILN_FENCE_ACTIVE);
        CHECK_POLL(dev, m_early, KILN_FENCE_ACTIVE);
        CHECK_POLL(dev, fd1, KILN_FENCE_ACTIVE);
        SU_RETURNS(kiln_map(d, kiln_buffer_resource(sz), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m),
                   KILN_E_WAS_STILL_DRAWING);
        CHECK_EQ_INT(su_calls(&cb_err), 0);
        SU_RETURNS(kiln_fence_wait(dev, f_before, UINT64_MAX), KILN_OK);
        kiln_test_gate_open(gate);
    }

    SU_RETURNS(kiln_fence_wait(dev, f_after, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, f_before, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, f_err, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, f_err2, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_wait_sync_token(dev, tok, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, f_first, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, f_next, UINT64_MAX), KILN_OK);
    SU_OK(kiln_finish(c));
    kiln_fence t1 = mk_fence(tl, 1), t2 = mk_fence(tl, 2);
    CHECK_POLL(dev, t1, KILN_FENCE_ERROR);
    CHECK_POLL(dev, t2, KILN_FENCE_SIGNALED);
    uint32_t data = 5;
    SU_RETURNS(kiln_query_get_data(c, q, &data, sizeof data, 0), KILN_E_COMMAND_FAILED);
    CHECK_POLL(dev, m_early, KILN_FENCE_ERROR);
    kiln_fence m_late = mk_merge(f_after, f_err), m_ok = mk_merge(f_before, f_after);
    CHECK_POLL(dev, m_late, KILN_FENCE_ERROR);
    CHECK_POLL(dev, m_ok, KILN_FENCE_SIGNALED);
    SU_RETURNS(kiln_fence_wait(dev, m_late, 0), KILN_E_COMMAND_FAILED);

    /* The later work ran. */
    CHECK(staging_is(c, sy, 11));
    CHECK(staging_is(c, sx, 12));
    CHECK(su_buffer_is(dev, c, y, BYTES, 14));

    /* The waiting context: its commands ran, its next point errored. */
    SU_RETURNS(kiln_fence_wait(dev, fd1, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, fd2, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, fd3, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, fd4, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, fd5, UINT64_MAX), KILN_OK);
    SU_OK(kiln_finish(d));
    CHECK(staging_is(d, sz, 20));
    CHECK(staging_is(d, sz2, 21));
    CHECK(su_buffer_is(dev, d, z, BYTES, 22));

    /* Two failures, each logged once; the server waits logged nothing. */
    CHECK_EQ_INT(failed_logs(), 2);
    CHECK_EQ_INT(th_log_count(), 2);

    kiln_test_gate_destroy(gate);
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_context_destroy(d));
    /* Callbacks: settled by a worker or by this thread; all done now
     * (the contexts' work completed and the settling calls returned). */
    while (su_calls(&cb_err) == 0 || su_calls(&cb_merged) == 0)
        su_sleep_ms(1);
    CHECK_EQ_INT(su_calls(&cb_err), 1);
    CHECK_EQ_INT(su_status(&cb_err), KILN_E_COMMAND_FAILED);
    CHECK_EQ_INT(su_calls(&cb_merged), 1);
    CHECK_EQ_INT(su_status(&cb_merged), KILN_E_COMMAND_FAILED);

    kiln_fence all[] = {f_before, f_err, f_err2, m_early, f_after, f_first, f_next, fd1, fd2,
                        fd3, fd4, fd5, t1, t2, m_late, m_ok};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        SU_OK(kiln_destroy_fence(dev, all[i]));
    kiln_buffer bufs[] = {x, y, z, sx, sy, sz, sz2};
    for (unsigned i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        SU_OK(kiln_destroy_buffer(dev, bufs[i]));
    SU_OK(kiln_destroy_query(dev, q));
    SU_OK(kiln_destroy_timeline(dev, tl));
}

/* A server wait on a merged fence one part of which is in error: the fence
 * is in error (settled) at once, so the commands behind the wait run
 * although the other part is never signaled. */
static void test_wait_on_partly_errored_merge(void)
{
    kiln_context *c = NULL, *d = NULL;
    SU_OK(kiln_context_create(dev, &c));
    SU_OK(kiln_context_create(dev, &d));
    kiln_buffer x = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0),
                z = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0);
    kiln_timeline never = {0};
    SU_OK(kiln_create_timeline(dev, 0, &never));
    th_log_reset();
    CHECK_RESULT(fail_on(c, x), KILN_OK);
    kiln_fence f_err = ins_fence(c);
    SU_RETURNS(kiln_fence_wait(dev, f_err, UINT64_MAX), KILN_E_COMMAND_FAILED);
    kiln_fence f_never = mk_fence(never, 1);
    kiln_fence m = mk_merge(f_err, f_never);
    CHECK_POLL(dev, m, KILN_FENCE_ERROR);
    SU_OK(kiln_context_wait(d, m));
    update(d, z, 30);
    kiln_fence fd = ins_fence(d);
    if (mode == KILN_EXEC_SERIAL) {
        /* Commands run inside the call that makes them ready. */
        CHECK_POLL(dev, fd, KILN_FENCE_ERROR);
    } else {
        /* A generous bound that only keeps a failure from hanging. */
        SU_RETURNS(kiln_fence_wait(dev, fd, 5ull * 1000000000ull), KILN_E_COMMAND_FAILED);
    }
    /* Release whatever still waits, then check the data. */
    SU_OK(kiln_timeline_signal(dev, never, 1));
    SU_OK(kiln_finish(d));
    CHECK(su_buffer_is(dev, d, z, BYTES, 30));
    CHECK_EQ_INT(th_log_count(), 1);
    CHECK_EQ_INT(failed_logs(), 1);
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_context_destroy(d));
    kiln_fence all[] = {f_err, f_never, m, fd};
    for (unsigned i = 0; i < 4; i++)
        SU_OK(kiln_destroy_fence(dev, all[i]));
    SU_OK(kiln_destroy_timeline(dev, never));
    SU_OK(kiln_destroy_buffer(dev, x));
    SU_OK(kiln_destroy_buffer(dev, z));
}

/* A server wait on a point of a timeline that is then destroyed: the point
 * can never be reached, so it errors; the commands behind the wait run and
 * the context's next point errors. Nothing is logged (no command failed). */
static void test_wait_on_destroyed_timeline(void)
{
    kiln_context *c = NULL;
    SU_OK(kiln_context_create(dev, &c));
    kiln_buffer z = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0);
    kiln_buffer s = su_buffer(dev, BYTES, KILN_USAGE_STAGING, 0);
    kiln_timeline tl = {0};
    SU_OK(kiln_create_timeline(dev, 0, &tl));
    th_log_reset();
    kiln_fence f = mk_fence(tl, 5);
    SU_OK(kiln_context_wait(c, f));
    update(c, z, 50);
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(s), kiln_buffer_resource(z)));
    kiln_fence f1 = ins_fence(c);
    update(c, z, 51);
    kiln_fence f2 = ins_fence(c);
    kiln_mapped_subresource m;
    SU_RETURNS(kiln_map(c, kiln_buffer_resource(s), 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m),
               KILN_E_WAS_STILL_DRAWING);
    CHECK_POLL(dev, f1, KILN_FENCE_ACTIVE);
    SU_OK(kiln_destroy_timeline(dev, tl));
    CHECK_POLL(dev, f, KILN_FENCE_ERROR);
    if (mode == KILN_EXEC_SERIAL) {
        /* Commands run inside the call that makes them ready. */
        CHECK_POLL(dev, f1, KILN_FENCE_ERROR);
    } else {
        /* A generous bound that only keeps a failure from hanging. */
        SU_RETURNS(kiln_fence_wait(dev, f1, 5ull * 1000000000ull), KILN_E_COMMAND_FAILED);
    }
    /* If the wait above failed, the commands are still held: any other
     * signal lets the queue look at the settled wait again, so the rest of
     * the test (and the context's destruction) does not hang. */
    kiln_timeline kick = {0};
    SU_OK(kiln_create_timeline(dev, 0, &kick));
    SU_OK(kiln_timeline_signal(dev, kick, 1));
    SU_OK(kiln_destroy_timeline(dev, kick));
    SU_RETURNS(kiln_fence_wait(dev, f1, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, f2, UINT64_MAX), KILN_OK);
    CHECK(staging_is(c, s, 50));
    CHECK(su_buffer_is(dev, c, z, BYTES, 51));
    CHECK_EQ_INT(th_log_count(), 0);
    SU_OK(kiln_destroy_fence(dev, f));
    SU_OK(kiln_destroy_fence(dev, f1));
    SU_OK(kiln_destroy_fence(dev, f2));
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_destroy_buffer(dev, z));
    SU_OK(kiln_destroy_buffer(dev, s));
}

/* Many failed and successful signals on one timeline; points created
 * afterwards report what the signal that reached their value did. */
static void test_late_points(void)
{
    enum { ROUNDS = 24 };
    kiln_context *c = NULL;
    SU_OK(kiln_context_create(dev, &c));
    kiln_buffer x = su_buffer(dev, BYTES, KILN_USAGE_DEFAULT, 0);
    kiln_timeline tl = {0};
    SU_OK(kiln_create_timeline(dev, 0, &tl));
    kiln_sync_token toks[2 * ROUNDS];
    th_log_reset();
    for (int k = 0; k < ROUNDS; k++) {
        CHECK_RESULT(fail_on(c, x), KILN_OK);
        SU_OK(kiln_context_signal(c, tl, 2 * k + 1));
        SU_OK(kiln_context_sync_token(c, &toks[2 * k]));
        update(c, x, (uint32_t)k + 1);
        SU_OK(kiln_context_signal(c, tl, 2 * k + 2));
        SU_OK(kiln_context_sync_token(c, &toks[2 * k + 1]));
    }
    SU_OK(kiln_finish(c));
    CHECK_EQ_INT(failed_logs(), ROUNDS);
    int wrong = 0, wrong_tok = 0;
    for (int v = 1; v <= 2 * ROUNDS; v++) {
        kiln_fence f = mk_fence(tl, (uint64_t)v);
        kiln_fence_status st = KILN_FENCE_ACTIVE;
        SU_OK(kiln_fence_poll(dev, f, &st));
        kiln_fence_status want = v % 2 ? KILN_FENCE_ERROR : KILN_FENCE_SIGNALED;
        if (st != want) {
            if (!wrong)
                fprintf(stderr, "    late fence at %d: status %d, expected %d\n", v, (int)st, (int)want);
            wrong++;
        }
        SU_OK(kiln_destroy_fence(dev, f));
        kiln_result r = kiln_wait_sync_token(dev, toks[v - 1], 0);
        if (r != (v % 2 ? KILN_E_COMMAND_FAILED : KILN_OK)) {
            if (!wrong_tok)
                fprintf(stderr, "    old token %d: %s\n", v, kiln_result_string(r));
            wrong_tok++;
        }
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK_EQ_INT(wrong_tok, 0);
    CHECK_EQ_INT(th_log_count(), ROUNDS);
    SU_OK(kiln_context_destroy(c));
    SU_OK(kiln_destroy_timeline(dev, tl));
    SU_OK(kiln_destroy_buffer(dev, x));
}

/* ---- device loss ---- */

typedef struct tracker {
    atomic_llong live;
    atomic_ullong allocs;
    atomic_ullong bad_frees; /* freed with another size than allocated */
} tracker;

#define TRK_HDR 16

/* A token is a point its context handed out: one with a later value is
 * refused (a wait on it could only end if the context happened to hand it
 * out later), by both the server and the client wait. Tokens handed out
 * are accepted, including the latest. */
static void test_fabricated_token(void)
{
    kiln_context *ctx = NULL, *other = NULL; /* fresh: no failure of earlier tests pending */
    CHECK_RESULT(kiln_context_create(dev, &ctx), KILN_OK);
    CHECK_RESULT(kiln_context_create(dev, &other), KILN_OK);
    kiln_sync_token t;
    CHECK_RESULT(kiln_context_sync_token(ctx, &t), KILN_OK);
    kiln_sync_token ahead = t;
    ahead.value = t.value + 1;
    CHECK_FAILS(kiln_context_wait_sync_token(other, ahead), KILN_E_INVALID_ARG,
                KILN_LOG_SYNC_TOKEN_INVALID);
    CHECK_FAILS(kiln_wait_sync_token(dev, ahead, UINT64_MAX), KILN_E_INVALID_ARG,
                KILN_LOG_SYNC_TOKEN_INVALID);
    kiln_fence fence = {0};
    CHECK_FAILS(kiln_create_fence(dev, (kiln_timeline){t.timeline}, ahead.value, &fence),
                KILN_E_INVALID_ARG, KILN_LOG_SYNC_TOKEN_INVALID);
    CHECK_RESULT(kiln_create_fence(dev, (kiln_timeline){t.timeline}, t.value, &fence), KILN_OK);
    CHECK_RESULT(kiln_fence_wait(dev, fence, UINT64_MAX), KILN_OK);
    kiln_destroy_fence(dev, fence);
    CHECK_RESULT(kiln_context_wait_sync_token(other, t), KILN_OK);
    CHECK_RESULT(kiln_wait_sync_token(dev, t, UINT64_MAX), KILN_OK);
    CHECK_RESULT(kiln_finish(other), KILN_OK);
    CHECK_RESULT(kiln_context_destroy(other), KILN_OK);
    CHECK_RESULT(kiln_context_destroy(ctx), KILN_OK);
}

static void *trk_alloc(size_t n, void *user)
{
    tracker *t = user;
    unsigned char *p = malloc(n + TRK_HDR);
    if (!p)
        return NULL;
    memcpy(p, &n, sizeof n);
    atomic_fetch_add(&t->live, (long long)n);
    atomic_fetch_add(&t->allocs, 1);
    return p + TRK_HDR;
}

static void trk_free(void *ptr, size_t n, void *user)
{
    tracker *t = user;
    if (!ptr)
        return;
    unsigned char *p = (unsigned char *)ptr - TRK_HDR;
    size_t had;
    memcpy(&had, p, sizeof had);
    if (had != n)
        atomic_fetch_add(&t->bad_frees, 1);
    atomic_fetch_sub(&t->live, (long long)had);
    free(p);
}

typedef struct waiter_arg {
    kiln_device *dev;
    kiln_fence fence;
    kiln_sync_token token;
    int use_token;
    atomic_int started;
    atomic_int result;
} waiter_arg;

static void *waiter_main(void *p)
{
    waiter_arg *a = p;
    atomic_store(&a->started, 1);
    kiln_result r = a->use_token ? kiln_wait_sync_token(a->dev, a->token, UINT64_MAX)
                                 : kiln_fence_wait(a->dev, a->fence, UINT64_MAX);
    atomic_store(&a->result, (int)r);
    return NULL;
}

static void test_device_lost(void)
{
    tracker trk;
    atomic_init(&trk.live, 0);
    atomic_init(&trk.allocs, 0);
    atomic_init(&trk.bad_frees, 0);
    kiln_device_desc desc = {0};
    desc.exec_mode = mode;
    desc.allocator = (kiln_allocator){trk_alloc, trk_free, &trk};
    th_log_reset();
    kiln_device *ld = th_device_desc(desc);
    kiln_context *imm = kiln_device_immediate_context(ld);
    kiln_context *c = NULL;
    SU_OK(kiln_context_create(ld, &c));

    kiln_timeline never = {0};
    SU_OK(kiln_create_timeline(ld, 0, &never));
    kiln_fence f1 = {0}, f2 = {0}, m = {0};
    SU_OK(kiln_create_fence(ld, never, 1, &f1));
    SU_OK(kiln_create_fence(ld, never, 2, &f2));
    SU_OK(kiln_fence_merge(ld, f1, f2, &m));

    kiln_buffer x = {0}, s = {0}, s2 = {0};
    kiln_buffer_desc bd = {BYTES, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    kiln_buffer_desc sd = {BYTES, KILN_USAGE_STAGING, 0, 0};
    SU_OK(kiln_create_buffer(ld, &bd, NULL, &x));
    SU_OK(kiln_create_buffer(ld, &sd, NULL, &s));
    SU_OK(kiln_create_buffer(ld, &sd, NULL, &s2));

    /* Commands held behind server waits on fences nobody signals, in a
     * created context and in the immediate one. */
    SU_OK(kiln_context_wait(c, f1));
    update(c, x, 40);
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(s), kiln_buffer_resource(x)));
    kiln_fence fc = {0};
    SU_OK(kiln_context_insert_fence(c, &fc));
    kiln_sync_token tok;
    SU_OK(kiln_context_sync_token(c, &tok));
    SU_OK(kiln_context_wait(imm, m));
    SU_OK(kiln_copy_resource(imm, kiln_buffer_resource(s2), kiln_buffer_resource(x)));
    /* A buffer destroyed while commands that use it are held. */
    SU_OK(kiln_destroy_buffer(ld, x));

    su_cb cb1, cbm, cbc;
    su_cb_init(&cb1);
    su_cb_init(&cbm);
    su_cb_init(&cbc);
    SU_OK(kiln_fence_wait_async(ld, f1, su_cb_fn, &cb1));
    SU_OK(kiln_fence_wait_async(ld, m, su_cb_fn, &cbm));
    SU_OK(kiln_fence_wait_async(ld, fc, su_cb_fn, &cbc));

    /* Threads blocked in client waits. */
    waiter_arg wa = {.dev = ld, .fence = f2}, wt = {.dev = ld, .token = tok, .use_token = 1};
    atomic_init(&wa.started, 0);
    atomic_init(&wa.result, 1);
    atomic_init(&wt.started, 0);
    atomic_init(&wt.result, 1);
    pthread_t ta, tt;
    CHECK(pthread_create(&ta, NULL, waiter_main, &wa) == 0);
    CHECK(pthread_create(&tt, NULL, waiter_main, &wt) == 0);
    while (!atomic_load(&wa.started) || !atomic_load(&wt.started))
        su_sleep_ms(1);
    /* Not a timing assertion: the threads must be inside their wait before
     * the device goes, or they would use a freed device. */
    su_sleep_ms(200);
    CHECK_EQ_INT(atomic_load(&wa.result), 1); /* still blocked */
    CHECK_EQ_INT(su_calls(&cb1), 0);

    kiln_device_destroy(ld);
    CHECK_EQ_INT(th_log_count(), 0);
    pthread_join(ta, NULL);
    pthread_join(tt, NULL);
    CHECK_EQ_INT(atomic_load(&wa.result), KILN_E_DEVICE_LOST);
    CHECK_EQ_INT(atomic_load(&wt.result), KILN_E_DEVICE_LOST);
    CHECK_EQ_INT(su_calls(&cb1), 1);
    CHECK_EQ_INT(su_status(&cb1), KILN_E_DEVICE_LOST);
    CHECK_EQ_INT(su_calls(&cbm), 1);
    CHECK_EQ_INT(su_status(&cbm), KILN_E_DEVICE_LOST);
    CHECK_EQ_INT(su_calls(&cbc), 1);
    CHECK_EQ_INT(su_status(&cbc), KILN_E_DEVICE_LOST);
    CHECK(atomic_load(&trk.allocs) > 0);
    CHECK_EQ_INT(atomic_load(&trk.live), 0);
    CHECK_EQ_INT(atomic_load(&trk.bad_frees), 0);

    /* The same with no thread waiting: destroy alone frees everything. */
    atomic_store(&trk.allocs, 0);
    ld = th_device_desc(desc);
    SU_OK(kiln_context_create(ld, &c));
    SU_OK(kiln_create_timeline(ld, 0, &never));
    SU_OK(kiln_create_fence(ld, never, 1, &f1));
    SU_OK(kiln_create_buffer(ld, &bd, NULL, &x));
    SU_OK(kiln_create_buffer(ld, &sd, NULL, &s));
    SU_OK(kiln_context_wait(c, f1));
    update(c, x, 41);
    SU_OK(kiln_copy_resource(c, kiln_buffer_resource(s), kiln_buffer_resource(x)));
    su_cb cb2;
    su_cb_init(&cb2);
    SU_OK(kiln_fence_wait_async(ld, f1, su_cb_fn, &cb2));
    kiln_device_destroy(ld);
    CHECK_EQ_INT(su_calls(&cb2), 1);
    CHECK_EQ_INT(su_status(&cb2), KILN_E_DEVICE_LOST);
    CHECK_EQ_INT(th_log_count(), 0);
    CHECK(atomic_load(&trk.allocs) > 0);
    CHECK_EQ_INT(atomic_load(&trk.live), 0);
    CHECK_EQ_INT(atomic_load(&trk.bad_frees), 0);
}

int main(void)
{
    static const kiln_exec_mode modes[] = {KILN_EXEC_ASYNC, KILN_EXEC_SERIAL};
    for (int i = 0; i < 2; i++) {
        mode = modes[i];
        fprintf(stderr, "-- %s\n", su_mode_name(mode));
        int before = th_failed;
        dev = th_device(mode, 0);
        test_logged_once();
        test_dependent_points(0);
        test_dependent_points(1);
        test_wait_on_partly_errored_merge();
        test_wait_on_destroyed_timeline();
        test_late_points();
        test_fabricated_token();
        kiln_device_destroy(dev);
        test_device_lost();
        if (th_failed != before)
            fprintf(stderr, "   (%d failures in %s mode)\n", th_failed - before, su_mode_name(mode));
    }
    return th_exit();
}
