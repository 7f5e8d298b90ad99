#define _POSIX_C_SOURCE 200809L /* nanosleep */
/*
 * Timelines, sync points, fences, sync tokens and event queries (kiln.h
 * "Timelines, sync points and fences", "Queries"), in ASYNC and SERIAL mode:
 *
 *  - a CPU timeline signal settles the points at or below its value and
 *    leaves the ones above active; values must grow (TIMELINE_NOT_MONOTONIC,
 *    counting values queued by context signals);
 *  - merged fences signal when both parts have, are in error when either
 *    is, and a fence merged with itself behaves as the fence;
 *  - poll states, client-wait timeouts (0 polls; a short timeout on a fence
 *    nobody signals returns TIMEOUT);
 *  - async callbacks run exactly once, with the right status and fence id,
 *    whether registered before or after the fence settles;
 *  - destroying a timeline errors its points that can no longer be reached,
 *    after its last queued signal has run;
 *  - stale, wrong-type and 0 handles of timelines, fences and queries;
 *  - EVENT queries: no Begin, GetData before End, data size, still drawing
 *    while a gate holds earlier work, then 1;
 *  - sync tokens: client wait, and a server wait in another context.
 *
 * Work held back by a test gate (test_hooks.h) stands for "not done yet", so
 * nothing here depends on timing.
 */
#include "sync_util.h"

#include "api/test_hooks.h"

static kiln_device *dev;
static kiln_context *ctx;
static kiln_exec_mode mode;

static kiln_timeline mk_timeline(uint64_t initial)
{
    kiln_timeline t = {0};
    SU_OK(kiln_create_timeline(dev, initial, &t));
    CHECK(t.id != 0);
    return t;
}

static kiln_fence mk_fence(kiln_timeline t, uint64_t value)
{
    kiln_fence f = {0};
    SU_OK(kiln_create_fence(dev, t, value, &f));
    CHECK(f.id != 0);
    return f;
}

static kiln_fence mk_merge(kiln_fence a, kiln_fence b)
{
    kiln_fence f = {0};
    SU_OK(kiln_fence_merge(dev, a, b, &f));
    CHECK(f.id != 0);
    return f;
}

static void destroy_fences(kiln_fence *f, int n)
{
    for (int i = 0; i < n; i++)
        SU_OK(kiln_destroy_fence(dev, f[i]));
}

/* ---- CPU signals ---- */

static void test_cpu_signal_order(void)
{
    kiln_timeline t = mk_timeline(0);
    uint64_t v = 99;
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 0);

    kiln_fence f0 = mk_fence(t, 0), f1 = mk_fence(t, 1), f2 = mk_fence(t, 2), f3 = mk_fence(t, 3),
               f5 = mk_fence(t, 5), fbig = mk_fence(t, UINT64_MAX);
    CHECK_POLL(dev, f0, KILN_FENCE_SIGNALED); /* at the initial value: reached */
    CHECK_POLL(dev, f1, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, f5, KILN_FENCE_ACTIVE);

    SU_OK(kiln_timeline_signal(dev, t, 2));
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 2);
    CHECK_POLL(dev, f1, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, f2, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, f3, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, f5, KILN_FENCE_ACTIVE);

    /* A point created at or below the value is signaled at once. */
    kiln_fence late1 = mk_fence(t, 1), late2 = mk_fence(t, 2);
    CHECK_POLL(dev, late1, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, late2, KILN_FENCE_SIGNALED);

    SU_OK(kiln_timeline_signal(dev, t, 4));
    CHECK_POLL(dev, f3, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, f5, KILN_FENCE_ACTIVE);
    SU_OK(kiln_timeline_signal(dev, t, 1000));
    CHECK_POLL(dev, f5, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, fbig, KILN_FENCE_ACTIVE);
    SU_OK(kiln_timeline_signal(dev, t, UINT64_MAX));
    CHECK_POLL(dev, fbig, KILN_FENCE_SIGNALED);
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK(v == UINT64_MAX);

    kiln_fence all[] = {f0, f1, f2, f3, f5, fbig, late1, late2};
    destroy_fences(all, 8);

    /* A timeline may start anywhere. */
    kiln_timeline t10 = mk_timeline(10);
    SU_OK(kiln_timeline_get_value(dev, t10, &v));
    CHECK_EQ_INT(v, 10);
    kiln_fence a = mk_fence(t10, 10), b = mk_fence(t10, 11);
    CHECK_POLL(dev, a, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, b, KILN_FENCE_ACTIVE);
    SU_OK(kiln_timeline_signal(dev, t10, 11));
    CHECK_POLL(dev, b, KILN_FENCE_SIGNALED);
    SU_OK(kiln_destroy_fence(dev, a));
    SU_OK(kiln_destroy_fence(dev, b));
    SU_OK(kiln_destroy_timeline(dev, t10));
    SU_OK(kiln_destroy_timeline(dev, t));
}

static void test_monotonic(void)
{
    kiln_timeline t = mk_timeline(5);
    uint64_t v = 0;
    /* The initial value counts as signaled. */
    CHECK_FAILS(kiln_timeline_signal(dev, t, 5), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_timeline_signal(dev, t, 0), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    SU_OK(kiln_timeline_signal(dev, t, 7));
    CHECK_FAILS(kiln_timeline_signal(dev, t, 7), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_timeline_signal(dev, t, 6), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_context_signal(ctx, t, 7), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_context_signal(ctx, t, 3), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 7); /* the failed calls changed nothing */

    /* A value queued by a context signal counts even before it is reached. */
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer b = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_resource rb = kiln_buffer_resource(b);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_context_signal(ctx, t, 10));
    kiln_fence f10 = mk_fence(t, 10), f8 = mk_fence(t, 8);
    CHECK_POLL(dev, f10, KILN_FENCE_ACTIVE);
    CHECK_FAILS(kiln_timeline_signal(dev, t, 10), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_timeline_signal(dev, t, 9), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_FAILS(kiln_context_signal(ctx, t, 10), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    CHECK_POLL(dev, f8, KILN_FENCE_ACTIVE); /* nothing signaled 8 */
    /* The CPU may run ahead of the queued value. */
    SU_OK(kiln_timeline_signal(dev, t, 12));
    CHECK_POLL(dev, f10, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, f8, KILN_FENCE_SIGNALED);
    kiln_test_gate_open(g);
    SU_OK(kiln_finish(ctx));
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 12); /* the older queued signal does not move it back */
    CHECK_FAILS(kiln_timeline_signal(dev, t, 11), KILN_E_INVALID_ARG, KILN_LOG_TIMELINE_NOT_MONOTONIC);
    kiln_test_gate_destroy(g);
    SU_OK(kiln_destroy_fence(dev, f10));
    SU_OK(kiln_destroy_fence(dev, f8));
    SU_OK(kiln_destroy_buffer(dev, b));
    SU_OK(kiln_destroy_timeline(dev, t));
}

/* ---- merge, poll, timeouts ---- */

static void test_merge(void)
{
    kiln_timeline ta = mk_timeline(0), tb = mk_timeline(0);
    kiln_fence fa = mk_fence(ta, 1), fb = mk_fence(tb, 1);
    kiln_fence m = mk_merge(fa, fb), self = mk_merge(fa, fa), mm = mk_merge(m, fa);
    CHECK_POLL(dev, m, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, self, KILN_FENCE_ACTIVE);
    SU_OK(kiln_timeline_signal(dev, ta, 1));
    CHECK_POLL(dev, fa, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, self, KILN_FENCE_SIGNALED);
    SU_RETURNS(kiln_fence_wait(dev, self, 0), KILN_OK);
    CHECK_POLL(dev, m, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, mm, KILN_FENCE_ACTIVE);
    SU_RETURNS(kiln_fence_wait(dev, m, 0), KILN_E_TIMEOUT);
    SU_OK(kiln_timeline_signal(dev, tb, 1));
    CHECK_POLL(dev, m, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, mm, KILN_FENCE_SIGNALED);
    SU_RETURNS(kiln_fence_wait(dev, m, UINT64_MAX), KILN_OK);
    /* Merging two settled fences gives a settled fence. */
    kiln_fence m2 = mk_merge(fa, fb);
    CHECK_POLL(dev, m2, KILN_FENCE_SIGNALED);
    /* Destroying the parts leaves the merged fence as it was. */
    SU_OK(kiln_destroy_fence(dev, fa));
    SU_OK(kiln_destroy_fence(dev, fb));
    CHECK_POLL(dev, m, KILN_FENCE_SIGNALED);
    kiln_fence rest[] = {m, self, mm, m2};
    destroy_fences(rest, 4);

    /* In error when either part is; the merge is made before the error. */
    kiln_timeline tc = mk_timeline(0), td = mk_timeline(0);
    kiln_fence fc = mk_fence(tc, 3), fd = mk_fence(td, 3);
    kiln_fence mcd = mk_merge(fc, fd), mdc = mk_merge(fd, fc), mself = mk_merge(fc, fc);
    SU_OK(kiln_timeline_signal(dev, td, 3));
    CHECK_POLL(dev, mcd, KILN_FENCE_ACTIVE);
    SU_OK(kiln_destroy_timeline(dev, tc)); /* fc can never be reached now */
    CHECK_POLL(dev, fc, KILN_FENCE_ERROR);
    CHECK_POLL(dev, fd, KILN_FENCE_SIGNALED);
    CHECK_POLL(dev, mcd, KILN_FENCE_ERROR);
    CHECK_POLL(dev, mdc, KILN_FENCE_ERROR);
    CHECK_POLL(dev, mself, KILN_FENCE_ERROR);
    SU_RETURNS(kiln_fence_wait(dev, mcd, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, mself, 0), KILN_E_COMMAND_FAILED);
    /* ... and the merge is made after the error. */
    kiln_fence late = mk_merge(fd, fc);
    CHECK_POLL(dev, late, KILN_FENCE_ERROR);

    /* In error as soon as one part is, even while the other is active. */
    kiln_timeline te = mk_timeline(0);
    kiln_fence fe = mk_fence(te, 1);
    kiln_fence mce = mk_merge(fc, fe);
    CHECK_POLL(dev, mce, KILN_FENCE_ERROR);
    SU_RETURNS(kiln_fence_wait(dev, mce, 0), KILN_E_COMMAND_FAILED);
    SU_RETURNS(kiln_fence_wait(dev, mce, UINT64_MAX), KILN_E_COMMAND_FAILED);
    SU_OK(kiln_timeline_signal(dev, te, 1));
    CHECK_POLL(dev, mce, KILN_FENCE_ERROR);
    kiln_fence rest2[] = {fc, fd, mcd, mdc, mself, late, fe, mce};
    destroy_fences(rest2, 8);
    SU_OK(kiln_destroy_timeline(dev, ta));
    SU_OK(kiln_destroy_timeline(dev, tb));
    SU_OK(kiln_destroy_timeline(dev, td));
    SU_OK(kiln_destroy_timeline(dev, te));
}

static void test_timeouts(void)
{
    kiln_timeline t = mk_timeline(0);
    kiln_fence f = mk_fence(t, 1);
    SU_RETURNS(kiln_fence_wait(dev, f, 0), KILN_E_TIMEOUT);
    SU_RETURNS(kiln_fence_wait(dev, f, 1), KILN_E_TIMEOUT);
    SU_RETURNS(kiln_fence_wait(dev, f, 2000000), KILN_E_TIMEOUT); /* 2 ms */
    CHECK_POLL(dev, f, KILN_FENCE_ACTIVE);
    /* A context fence behind held work times out too. */
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer b = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_resource rb = kiln_buffer_resource(b);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &rb, &w, 1), KILN_OK);
    kiln_fence cf = {0};
    SU_OK(kiln_context_insert_fence(ctx, &cf));
    SU_RETURNS(kiln_fence_wait(dev, cf, 0), KILN_E_TIMEOUT);
    SU_RETURNS(kiln_fence_wait(dev, cf, 1000000), KILN_E_TIMEOUT);
    CHECK_POLL(dev, cf, KILN_FENCE_ACTIVE);
    kiln_test_gate_open(g);
    SU_RETURNS(kiln_fence_wait(dev, cf, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, cf, 0), KILN_OK);
    CHECK_POLL(dev, cf, KILN_FENCE_SIGNALED);
    /* Settled fences answer at once whatever the timeout. */
    SU_OK(kiln_timeline_signal(dev, t, 1));
    SU_RETURNS(kiln_fence_wait(dev, f, 0), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, f, 5), KILN_OK);
    kiln_test_gate_destroy(g);
    SU_OK(kiln_destroy_fence(dev, f));
    SU_OK(kiln_destroy_fence(dev, cf));
    SU_OK(kiln_destroy_buffer(dev, b));
    SU_OK(kiln_destroy_timeline(dev, t));
}

/* ---- async callbacks ---- */

static void test_callbacks(void)
{
    kiln_timeline t = mk_timeline(0);
    kiln_fence f1 = mk_fence(t, 1), f2 = mk_fence(t, 2);
    su_cb before1, before1b, after1, on2, dropped;
    su_cb_init(&before1);
    su_cb_init(&before1b);
    su_cb_init(&after1);
    su_cb_init(&on2);
    su_cb_init(&dropped);

    /* Registered before the signal: nothing yet. */
    SU_OK(kiln_fence_wait_async(dev, f1, su_cb_fn, &before1));
    SU_OK(kiln_fence_wait_async(dev, f1, su_cb_fn, &before1b));
    SU_OK(kiln_fence_wait_async(dev, f2, su_cb_fn, &on2));
    /* The fence handle may go away; the registration keeps what it needs. */
    kiln_fence f2b = mk_fence(t, 2);
    SU_OK(kiln_fence_wait_async(dev, f2b, su_cb_fn, &dropped));
    uint32_t f2b_id = f2b.id;
    SU_OK(kiln_destroy_fence(dev, f2b));
    CHECK_EQ_INT(su_calls(&before1), 0);
    CHECK_EQ_INT(su_calls(&on2), 0);

    /* A CPU signal runs them inside kiln_timeline_signal. */
    SU_OK(kiln_timeline_signal(dev, t, 1));
    CHECK_EQ_INT(su_calls(&before1), 1);
    CHECK_EQ_INT(su_status(&before1), KILN_OK);
    CHECK_EQ_INT(atomic_load(&before1.fence_id), f1.id);
    CHECK_EQ_INT(su_calls(&before1b), 1);
    CHECK_EQ_INT(su_calls(&on2), 0);
    CHECK_EQ_INT(su_calls(&dropped), 0);

    /* Registered after: called inside kiln_fence_wait_async. */
    SU_OK(kiln_fence_wait_async(dev, f1, su_cb_fn, &after1));
    CHECK_EQ_INT(su_calls(&after1), 1);
    CHECK_EQ_INT(su_status(&after1), KILN_OK);
    CHECK_EQ_INT(atomic_load(&after1.fence_id), f1.id);

    SU_OK(kiln_timeline_signal(dev, t, 5));
    CHECK_EQ_INT(su_calls(&on2), 1);
    CHECK_EQ_INT(su_status(&on2), KILN_OK);
    CHECK_EQ_INT(su_calls(&dropped), 1);
    CHECK_EQ_INT(su_status(&dropped), KILN_OK);
    CHECK_EQ_INT(atomic_load(&dropped.fence_id), f2b_id);

    /* Never again. */
    SU_OK(kiln_timeline_signal(dev, t, 6));
    SU_RETURNS(kiln_fence_wait(dev, f1, UINT64_MAX), KILN_OK);
    CHECK_EQ_INT(su_calls(&before1), 1);
    CHECK_EQ_INT(su_calls(&before1b), 1);
    CHECK_EQ_INT(su_calls(&after1), 1);
    CHECK_EQ_INT(su_calls(&on2), 1);
    CHECK_EQ_INT(su_calls(&dropped), 1);

    /* Error: registered before and after the timeline goes away. */
    kiln_timeline te = mk_timeline(0);
    kiln_fence fe = mk_fence(te, 1);
    kiln_fence fok = mk_fence(t, 7);
    kiln_fence fm = mk_merge(fe, fok);
    su_cb err_before, err_after, merged;
    su_cb_init(&err_before);
    su_cb_init(&err_after);
    su_cb_init(&merged);
    SU_OK(kiln_fence_wait_async(dev, fe, su_cb_fn, &err_before));
    SU_OK(kiln_fence_wait_async(dev, fm, su_cb_fn, &merged));
    SU_OK(kiln_destroy_timeline(dev, te));
    CHECK_EQ_INT(su_calls(&err_before), 1);
    CHECK_EQ_INT(su_status(&err_before), KILN_E_COMMAND_FAILED);
    /* The merged fence is in error now (its other part is still active):
     * it has settled, so its callback has run. */
    CHECK_POLL(dev, fm, KILN_FENCE_ERROR);
    CHECK_EQ_INT(su_calls(&merged), 1);
    CHECK_EQ_INT(su_status(&merged), KILN_E_COMMAND_FAILED);
    SU_OK(kiln_fence_wait_async(dev, fe, su_cb_fn, &err_after));
    CHECK_EQ_INT(su_calls(&err_after), 1);
    CHECK_EQ_INT(su_status(&err_after), KILN_E_COMMAND_FAILED);
    /* A merged fence registered after one part errored, other part active. */
    su_cb merged_after;
    su_cb_init(&merged_after);
    SU_OK(kiln_fence_wait_async(dev, fm, su_cb_fn, &merged_after));
    CHECK_EQ_INT(su_calls(&merged_after), 1);
    CHECK_EQ_INT(su_status(&merged_after), KILN_E_COMMAND_FAILED);
    SU_OK(kiln_timeline_signal(dev, t, 7));
    CHECK_EQ_INT(su_calls(&merged), 1);
    CHECK_EQ_INT(su_calls(&merged_after), 1);
    CHECK_EQ_INT(su_calls(&err_before), 1);

    /* A context fence: settled by a worker in ASYNC mode, so the count is
     * checked after the device is gone (main), here only that it is at
     * most one and the status once it is. */
    kiln_fence f_ctx = {0};
    kiln_buffer b = su_buffer(dev, 256, KILN_USAGE_DEFAULT, 0);
    uint8_t data[256];
    su_pattern(data, sizeof data, 3);
    SU_OK(kiln_update_subresource(ctx, kiln_buffer_resource(b), 0, NULL, data, 0, 0));
    SU_OK(kiln_context_insert_fence(ctx, &f_ctx));
    su_cb ctxcb;
    su_cb_init(&ctxcb);
    SU_OK(kiln_fence_wait_async(dev, f_ctx, su_cb_fn, &ctxcb));
    SU_RETURNS(kiln_fence_wait(dev, f_ctx, UINT64_MAX), KILN_OK);
    SU_OK(kiln_finish(ctx));
    while (su_calls(&ctxcb) == 0) /* it runs right after the fence settles */
        su_sleep_ms(1);
    CHECK_EQ_INT(su_calls(&ctxcb), 1);
    CHECK_EQ_INT(su_status(&ctxcb), KILN_OK);

    CHECK_FAILS(kiln_fence_wait_async(dev, f1, NULL, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);

    kiln_fence rest[] = {f1, f2, fe, fok, fm, f_ctx};
    destroy_fences(rest, 6);
    SU_OK(kiln_destroy_buffer(dev, b));
    SU_OK(kiln_destroy_timeline(dev, t));
    CHECK_EQ_INT(su_calls(&ctxcb), 1);
}

/* ---- destroying timelines ---- */

static void test_destroy_timeline(void)
{
    kiln_timeline t = mk_timeline(0);
    kiln_fence f1 = mk_fence(t, 1), f3 = mk_fence(t, 3), f5 = mk_fence(t, 5);
    SU_OK(kiln_timeline_signal(dev, t, 1));
    SU_OK(kiln_destroy_timeline(dev, t));
    CHECK_POLL(dev, f1, KILN_FENCE_SIGNALED); /* reached before: stays so */
    CHECK_POLL(dev, f3, KILN_FENCE_ERROR);
    CHECK_POLL(dev, f5, KILN_FENCE_ERROR);
    SU_RETURNS(kiln_fence_wait(dev, f5, UINT64_MAX), KILN_E_COMMAND_FAILED);
    kiln_fence a[] = {f1, f3, f5};
    destroy_fences(a, 3);

    /* With a queued signal: its points wait for it, the others error
     * once it has run. */
    kiln_timeline u = mk_timeline(0);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer b = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_resource rb = kiln_buffer_resource(b);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_context_signal(ctx, u, 3));
    kiln_fence g2 = mk_fence(u, 2), g3 = mk_fence(u, 3), g4 = mk_fence(u, 4);
    su_cb c3, c4;
    su_cb_init(&c3);
    su_cb_init(&c4);
    SU_OK(kiln_fence_wait_async(dev, g3, su_cb_fn, &c3));
    SU_OK(kiln_fence_wait_async(dev, g4, su_cb_fn, &c4));
    SU_OK(kiln_destroy_timeline(dev, u));
    CHECK_FAILS(kiln_timeline_signal(dev, u, 9), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_STALE);
    CHECK_POLL(dev, g2, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, g3, KILN_FENCE_ACTIVE);
    CHECK_POLL(dev, g4, KILN_FENCE_ACTIVE);
    kiln_test_gate_open(g);
    SU_RETURNS(kiln_fence_wait(dev, g3, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, g2, UINT64_MAX), KILN_OK);
    SU_RETURNS(kiln_fence_wait(dev, g4, UINT64_MAX), KILN_E_COMMAND_FAILED);
    CHECK_POLL(dev, g4, KILN_FENCE_ERROR);
    SU_OK(kiln_finish(ctx));
    while (su_calls(&c4) == 0 || su_calls(&c3) == 0)
        su_sleep_ms(1);
    CHECK_EQ_INT(su_status(&c3), KILN_OK);
    CHECK_EQ_INT(su_status(&c4), KILN_E_COMMAND_FAILED);
    kiln_test_gate_destroy(g);
    kiln_fence c[] = {g2, g3, g4};
    destroy_fences(c, 3);
    SU_OK(kiln_destroy_buffer(dev, b));
    CHECK_EQ_INT(su_calls(&c3), 1);
    CHECK_EQ_INT(su_calls(&c4), 1);
}

/* ---- handles ---- */

static void test_handles(void)
{
    const kiln_result H = KILN_E_INVALID_HANDLE;
    kiln_timeline t = mk_timeline(0), dead_t = mk_timeline(0);
    kiln_fence f = mk_fence(t, 1), dead_f = mk_fence(t, 1);
    kiln_query q = {0}, dead_q = {0};
    SU_OK(kiln_create_query(dev, KILN_QUERY_EVENT, &q));
    SU_OK(kiln_create_query(dev, KILN_QUERY_EVENT, &dead_q));
    kiln_buffer b = su_buffer(dev, 16, KILN_USAGE_DEFAULT, 0);
    SU_OK(kiln_destroy_timeline(dev, dead_t));
    SU_OK(kiln_destroy_fence(dev, dead_f));
    SU_OK(kiln_destroy_query(dev, dead_q));
    uint64_t v = 7;
    kiln_fence_status st = KILN_FENCE_SIGNALED;
    kiln_fence out = {77};
    su_cb cb;
    su_cb_init(&cb);

    /* Timelines. */
    kiln_timeline bad_t[3] = {{0}, dead_t, {f.id}};
    kiln_log_id ids[3] = {KILN_LOG_HANDLE_NULL, KILN_LOG_HANDLE_STALE, KILN_LOG_HANDLE_WRONG_TYPE};
    for (int i = 0; i < 3; i++) {
        v = 7;
        CHECK_FAILS(kiln_timeline_get_value(dev, bad_t[i], &v), H, ids[i]);
        CHECK_EQ_INT(v, 0);
        CHECK_FAILS(kiln_timeline_signal(dev, bad_t[i], 100), H, ids[i]);
        out.id = 77;
        CHECK_FAILS(kiln_create_fence(dev, bad_t[i], 1, &out), H, ids[i]);
        CHECK_EQ_INT(out.id, 0);
        CHECK_FAILS(kiln_context_signal(ctx, bad_t[i], 100), H, ids[i]);
        CHECK_FAILS(kiln_destroy_timeline(dev, bad_t[i]), H, ids[i]);
    }
    CHECK_FAILS(kiln_timeline_signal(dev, (kiln_timeline){b.id}, 100), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_timeline_signal(dev, (kiln_timeline){q.id}, 100), H, KILN_LOG_HANDLE_WRONG_TYPE);

    /* Fences. */
    kiln_fence bad_f[3] = {{0}, dead_f, {t.id}};
    for (int i = 0; i < 3; i++) {
        st = KILN_FENCE_SIGNALED;
        CHECK_FAILS(kiln_fence_poll(dev, bad_f[i], &st), H, ids[i]);
        CHECK_EQ_INT(st, KILN_FENCE_ACTIVE);
        CHECK_FAILS(kiln_fence_wait(dev, bad_f[i], 0), H, ids[i]);
        CHECK_FAILS(kiln_fence_wait(dev, bad_f[i], UINT64_MAX), H, ids[i]);
        CHECK_FAILS(kiln_fence_wait_async(dev, bad_f[i], su_cb_fn, &cb), H, ids[i]);
        out.id = 77;
        CHECK_FAILS(kiln_fence_merge(dev, bad_f[i], f, &out), H, ids[i]);
        CHECK_EQ_INT(out.id, 0);
        out.id = 77;
        CHECK_FAILS(kiln_fence_merge(dev, f, bad_f[i], &out), H, ids[i]);
        CHECK_EQ_INT(out.id, 0);
        CHECK_FAILS(kiln_context_wait(ctx, bad_f[i]), H, ids[i]);
        CHECK_FAILS(kiln_destroy_fence(dev, bad_f[i]), H, ids[i]);
    }
    CHECK_FAILS(kiln_fence_poll(dev, (kiln_fence){b.id}, &st), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_fence_wait(dev, (kiln_fence){q.id}, 0), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_EQ_INT(su_calls(&cb), 0); /* failed registrations never call */

    /* Queries. */
    kiln_query bad_q[3] = {{0}, dead_q, {f.id}};
    uint32_t data = 5;
    for (int i = 0; i < 3; i++) {
        CHECK_FAILS(kiln_query_begin(ctx, bad_q[i]), H, ids[i]);
        CHECK_FAILS(kiln_query_end(ctx, bad_q[i]), H, ids[i]);
        CHECK_FAILS(kiln_query_get_data(ctx, bad_q[i], &data, sizeof data, 0), H, ids[i]);
        CHECK_FAILS(kiln_destroy_query(dev, bad_q[i]), H, ids[i]);
    }
    CHECK_FAILS(kiln_query_end(ctx, (kiln_query){t.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_query_end(ctx, (kiln_query){b.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_EQ_INT(data, 5);

    /* Other objects do not accept them either. */
    CHECK_FAILS(kiln_destroy_buffer(dev, (kiln_buffer){f.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);
    CHECK_FAILS(kiln_destroy_buffer(dev, (kiln_buffer){t.id}), H, KILN_LOG_HANDLE_WRONG_TYPE);

    /* NULL out-params and devices. */
    CHECK_FAILS(kiln_create_timeline(dev, 0, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_create_fence(dev, t, 1, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_fence_merge(dev, f, f, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_fence_poll(dev, f, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_timeline_get_value(dev, t, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_EVENT, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_context_insert_fence(ctx, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    CHECK_FAILS(kiln_context_sync_token(ctx, NULL), KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER);
    th_log_reset();
    CHECK_RESULT(kiln_timeline_signal(NULL, t, 1), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_fence_wait(NULL, f, 0), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_context_signal(NULL, t, 1), KILN_E_INVALID_ARG);
    CHECK_RESULT(kiln_context_wait(NULL, f), KILN_E_INVALID_ARG);
    CHECK_EQ_INT(th_log_count(), 0); /* those go to kiln_log_stderr */

    /* The valid handles still work after all that. */
    SU_OK(kiln_timeline_signal(dev, t, 1));
    CHECK_POLL(dev, f, KILN_FENCE_SIGNALED);
    SU_OK(kiln_destroy_fence(dev, f));
    SU_OK(kiln_destroy_query(dev, q));
    SU_OK(kiln_destroy_timeline(dev, t));
    SU_OK(kiln_destroy_buffer(dev, b));
    CHECK_FAILS(kiln_destroy_fence(dev, f), H, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_timeline(dev, t), H, KILN_LOG_HANDLE_STALE);
    CHECK_FAILS(kiln_destroy_query(dev, q), H, KILN_LOG_HANDLE_STALE);
}

/* ---- event queries ---- */

static void test_event_query(void)
{
    kiln_query q = {0};
    uint32_t data = 0;
    CHECK_FAILS(kiln_create_query(dev, KILN_QUERY_TYPE_COUNT, &q), KILN_E_INVALID_ARG, KILN_LOG_QUERY_TYPE);
    CHECK_EQ_INT(q.id, 0);
    SU_OK(kiln_create_query(dev, KILN_QUERY_EVENT, &q));
    CHECK_FAILS(kiln_query_begin(ctx, q), KILN_E_INVALID_CALL, KILN_LOG_QUERY_TYPE);
    CHECK_FAILS(kiln_query_get_data(ctx, q, &data, sizeof data, 0), KILN_E_INVALID_CALL,
                KILN_LOG_QUERY_NOT_ENDED);
    CHECK_FAILS(kiln_query_get_data(ctx, q, NULL, 0, 0), KILN_E_INVALID_CALL, KILN_LOG_QUERY_NOT_ENDED);

    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer b = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_resource rb = kiln_buffer_resource(b);
    int w = 1;
    CHECK_RESULT(kiln_test_hold(ctx, g, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_query_end(ctx, q));
    /* Wrong sizes are errors whatever the state. */
    CHECK_FAILS(kiln_query_get_data(ctx, q, &data, 8, 0), KILN_E_INVALID_ARG, KILN_LOG_DATA_SIZE);
    CHECK_FAILS(kiln_query_get_data(ctx, q, &data, 0, 0), KILN_E_INVALID_ARG, KILN_LOG_DATA_SIZE);
    CHECK_FAILS(kiln_query_get_data(ctx, q, NULL, 4, 0), KILN_E_INVALID_ARG, KILN_LOG_DATA_SIZE);
    data = 77;
    SU_RETURNS(kiln_query_get_data(ctx, q, &data, sizeof data, 0), KILN_E_WAS_STILL_DRAWING);
    SU_RETURNS(kiln_query_get_data(ctx, q, &data, sizeof data, KILN_GET_DATA_DO_NOT_FLUSH),
               KILN_E_WAS_STILL_DRAWING);
    SU_RETURNS(kiln_query_get_data(ctx, q, NULL, 0, 0), KILN_E_WAS_STILL_DRAWING);
    kiln_test_gate_open(g);
    SU_OK(kiln_finish(ctx));
    data = 0;
    SU_OK(kiln_query_get_data(ctx, q, &data, sizeof data, 0));
    CHECK_EQ_INT(data, 1);
    SU_OK(kiln_query_get_data(ctx, q, NULL, 0, 0));
    SU_OK(kiln_query_get_data(ctx, q, &data, sizeof data, 0)); /* again: same answer */
    CHECK_EQ_INT(data, 1);

    /* End again: the query now marks the new point. */
    kiln_test_gate *g2 = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g2), KILN_OK);
    CHECK_RESULT(kiln_test_hold(ctx, g2, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_query_end(ctx, q));
    SU_RETURNS(kiln_query_get_data(ctx, q, &data, sizeof data, 0), KILN_E_WAS_STILL_DRAWING);
    kiln_test_gate_open(g2);
    /* Without finish: GetData flushes and eventually answers. */
    kiln_result r;
    while ((r = kiln_query_get_data(ctx, q, &data, sizeof data, 0)) == KILN_E_WAS_STILL_DRAWING)
        su_sleep_ms(1);
    CHECK_RESULT(r, KILN_OK);
    CHECK_EQ_INT(data, 1);

    /* A query ended in another context answers for that context's work. */
    kiln_context *other = NULL;
    SU_OK(kiln_context_create(dev, &other));
    kiln_test_gate *g3 = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g3), KILN_OK);
    CHECK_RESULT(kiln_test_hold(other, g3, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_query_end(ctx, q)); /* ctx has nothing pending */
    SU_OK(kiln_finish(ctx));
    SU_OK(kiln_query_get_data(ctx, q, &data, sizeof data, 0));
    SU_OK(kiln_query_end(other, q));
    SU_RETURNS(kiln_query_get_data(other, q, &data, sizeof data, KILN_GET_DATA_DO_NOT_FLUSH),
               KILN_E_WAS_STILL_DRAWING);
    kiln_test_gate_open(g3);
    SU_OK(kiln_finish(other));
    SU_OK(kiln_query_get_data(other, q, &data, sizeof data, 0));
    CHECK_EQ_INT(data, 1);
    SU_OK(kiln_context_destroy(other));

    kiln_test_gate_destroy(g);
    kiln_test_gate_destroy(g2);
    kiln_test_gate_destroy(g3);
    SU_OK(kiln_destroy_query(dev, q));
    SU_OK(kiln_destroy_buffer(dev, b));
}

/* ---- context signals and sync tokens ---- */

static void test_context_signal(void)
{
    kiln_timeline t = mk_timeline(0);
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer b = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_resource rb = kiln_buffer_resource(b);
    int w = 1;
    kiln_fence f1 = mk_fence(t, 1), f2 = mk_fence(t, 2);
    SU_OK(kiln_context_signal(ctx, t, 1)); /* nothing queued before it */
    SU_RETURNS(kiln_fence_wait(dev, f1, UINT64_MAX), KILN_OK);
    CHECK_RESULT(kiln_test_hold(ctx, g, &rb, &w, 1), KILN_OK);
    SU_OK(kiln_context_signal(ctx, t, 2));
    CHECK_POLL(dev, f2, KILN_FENCE_ACTIVE);
    SU_RETURNS(kiln_fence_wait(dev, f2, 0), KILN_E_TIMEOUT);
    uint64_t v = 0;
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 1);
    kiln_test_gate_open(g);
    SU_RETURNS(kiln_fence_wait(dev, f2, UINT64_MAX), KILN_OK);
    SU_OK(kiln_timeline_get_value(dev, t, &v));
    CHECK_EQ_INT(v, 2);
    kiln_test_gate_destroy(g);
    SU_OK(kiln_destroy_fence(dev, f1));
    SU_OK(kiln_destroy_fence(dev, f2));
    SU_OK(kiln_destroy_timeline(dev, t));
    SU_OK(kiln_destroy_buffer(dev, b));
}

static void test_sync_tokens(void)
{
    enum { N = 512 };
    kiln_context *a = NULL, *bctx = NULL;
    SU_OK(kiln_context_create(dev, &a));
    SU_OK(kiln_context_create(dev, &bctx));
    kiln_test_gate *g = NULL;
    CHECK_RESULT(kiln_test_gate_create(dev, &g), KILN_OK);
    kiln_buffer hold = su_buffer(dev, 64, KILN_USAGE_DEFAULT, 0);
    kiln_buffer x = su_buffer(dev, N, KILN_USAGE_DEFAULT, 1);
    kiln_buffer s = su_buffer(dev, N, KILN_USAGE_STAGING, 0);
    kiln_resource rh = kiln_buffer_resource(hold), rx = kiln_buffer_resource(x),
                  rs = kiln_buffer_resource(s);
    int w = 1;
    uint8_t data[N];
    su_pattern(data, N, 42);

    /* A token with nothing queued before it is reached. */
    kiln_sync_token t0;
    memset(&t0, 0xff, sizeof t0);
    SU_OK(kiln_context_sync_token(a, &t0));
    CHECK(t0.timeline != 0);
    SU_RETURNS(kiln_wait_sync_token(dev, t0, UINT64_MAX), KILN_OK);

    /* A: held work, then the write B must see, then the token. */
    CHECK_RESULT(kiln_test_hold(a, g, &rh, &w, 1), KILN_OK);
    SU_OK(kiln_update_subresource(a, rx, 0, NULL, data, 0, 0));
    kiln_sync_token tok;
    SU_OK(kiln_context_sync_token(a, &tok));
    CHECK(tok.timeline == t0.timeline);
    CHECK(tok.value > t0.value);
    SU_RETURNS(kiln_wait_sync_token(dev, tok, 0), KILN_E_TIMEOUT);
    SU_RETURNS(kiln_wait_sync_token(dev, tok, 1000000), KILN_E_TIMEOUT);

    /* B: server wait on A's token, then read x. */
    SU_OK(kiln_context_wait_sync_token(bctx, tok));
    SU_OK(kiln_copy_resource(bctx, rs, rx));
    kiln_fence fb = {0};
    SU_OK(kiln_context_insert_fence(bctx, &fb));
    kiln_mapped_subresource m;
    SU_RETURNS(kiln_map(bctx, rs, 0, KILN_MAP_READ, KILN_MAP_FLAG_DO_NOT_WAIT, &m),
               KILN_E_WAS_STILL_DRAWING);
    CHECK_POLL(dev, fb, KILN_FENCE_ACTIVE);
    kiln_test_gate_open(g);
    SU_RETURNS(kiln_wait_sync_token(dev, tok, UINT64_MAX), KILN_OK);
    SU_OK(kiln_map(bctx, rs, 0, KILN_MAP_READ, 0, &m));
    CHECK(m.data && memcmp(m.data, data, N) == 0);
    SU_OK(kiln_unmap(bctx, rs, 0));
    SU_RETURNS(kiln_fence_wait(dev, fb, UINT64_MAX), KILN_OK);
    /* A token stays waitable after it is reached (an old value). */
    SU_RETURNS(kiln_wait_sync_token(dev, tok, 0), KILN_OK);
    SU_RETURNS(kiln_wait_sync_token(dev, t0, 0), KILN_OK);

    /* A context may wait on its own (reached) token. */
    SU_OK(kiln_context_wait_sync_token(a, tok));
    SU_OK(kiln_finish(a));

    /* Bad tokens. */
    kiln_sync_token bad = {0, 0, 1};
    CHECK_FAILS(kiln_wait_sync_token(dev, bad, 0), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_NULL);
    CHECK_FAILS(kiln_context_wait_sync_token(bctx, bad), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_NULL);
    bad.timeline = x.id;
    CHECK_FAILS(kiln_wait_sync_token(dev, bad, 0), KILN_E_INVALID_HANDLE, KILN_LOG_HANDLE_WRONG_TYPE);

    kiln_test_gate_destroy(g);
    SU_OK(kiln_destroy_fence(dev, fb));
    SU_OK(kiln_context_destroy(a));
    SU_OK(kiln_context_destroy(bctx));
    SU_OK(kiln_destroy_buffer(dev, hold));
    SU_OK(kiln_destroy_buffer(dev, x));
    SU_OK(kiln_destroy_buffer(dev, s));
}

int main(void)
{
    static const kiln_exec_mode modes[] = {KILN_EXEC_ASYNC, KILN_EXEC_SERIAL};
    for (int i = 0; i < 2; i++) {
        mode = modes[i];
        fprintf(stderr, "-- %s\n", su_mode_name(mode));
        int before = th_failed;
        dev = th_device(mode, 0);
        ctx = kiln_device_immediate_context(dev);
        th_log_reset();
        test_cpu_signal_order();
        test_monotonic();
        test_merge();
        test_timeouts();
        test_callbacks();
        test_destroy_timeline();
        test_handles();
        test_event_query();
        test_context_signal();
        test_sync_tokens();
        th_log_reset();
        kiln_device_destroy(dev);
        if (th_failed != before)
            fprintf(stderr, "   (%d failures in %s mode)\n", th_failed - before, su_mode_name(mode));
    }
    return th_exit();
}
