/* Timelines, fences, sync tokens, server/client waits. */
#include "api.h"
#include "../capture/capture.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#define FAIL(code, id, ...) kb_fail(&dev->env, code, KILN_LOG_##id, api, __VA_ARGS__)
#define DEV_PREAMBLE()                                                                             \
    if (!dev)                                                                                      \
    return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL")
#define CTX_PREAMBLE()                                                                             \
    if (!ctx)                                                                                      \
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "context is NULL"); \
    kiln_device *dev = ctx->dev

static ks_timeline *get_timeline(kiln_device *dev, uint32_t id, const char *api, kiln_result *r)
{
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_get(&dev->handles, id, KRES_TYPE_TIMELINE, KRES_TYPE_TIMELINE, &lid);
    *r = o ? KILN_OK : ka_handle_fail(dev, api, "timeline", lid);
    return (ks_timeline *)o;
}

static ks_fence *get_fence(kiln_device *dev, uint32_t id, const char *api, kiln_result *r)
{
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_get(&dev->handles, id, KRES_TYPE_FENCE, KRES_TYPE_FENCE, &lid);
    *r = o ? KILN_OK : ka_handle_fail(dev, api, "fence", lid);
    return (ks_fence *)o;
}

static kiln_result add_handle(kiln_device *dev, const char *api, kres_object *obj, uint32_t *out_id)
{
    kiln_result r;
    uint32_t id = kres_handles_add(&dev->handles, obj, &r);
    if (!id) {
        kres_unref(obj);
        return kb_fail(&dev->env, r,
                       r == KILN_E_OUT_OF_MEMORY ? KILN_LOG_OUT_OF_MEMORY : KILN_LOG_HANDLE_TABLE_FULL,
                       api, "adding a handle");
    }
    *out_id = id;
    return KILN_OK;
}

static kiln_result destroy_handle(kiln_device *dev, const char *api, uint32_t id, kres_type type,
                                  const char *what)
{
    DEV_PREAMBLE();
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_remove(&dev->handles, id, type, type, &lid);
    if (!o)
        return ka_handle_fail(dev, api, what, lid);
    kres_unref(o);
    return KILN_OK;
}

/* ---- timelines ---- */

static kiln_result create_timeline(kiln_device *dev, uint64_t initial, kiln_timeline *out)
{
    static const char api[] = "kiln_create_timeline";
    if (out)
        out->id = 0;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_timeline is NULL");
    ks_timeline *tl;
    if (ks_timeline_create(dev->dom, initial, &tl) != KILN_OK)
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "timeline");
    return add_handle(dev, api, &tl->base, &out->id);
}

kiln_result kiln_create_timeline(kiln_device *dev, uint64_t initial, kiln_timeline *out)
{
    kiln_result r = create_timeline(dev, initial, out);
    if (dev && dev->capture)
        kcap_create_timeline(dev, initial, out ? *out : (kiln_timeline){0}, r);
    return r;
}

static kiln_result destroy_timeline(kiln_device *dev, kiln_timeline t)
{
    static const char api[] = "kiln_destroy_timeline";
    DEV_PREAMBLE();
    kiln_result r;
    ks_timeline *tl = get_timeline(dev, t.id, api, &r);
    if (!tl)
        return r;
    bool internal = tl->internal;
    kres_unref(&tl->base);
    if (internal)
        return FAIL(KILN_E_INVALID_ARG, CONTEXT_IMMEDIATE, "a context's own timeline goes with its context");
    return destroy_handle(dev, api, t.id, KRES_TYPE_TIMELINE, "timeline");
}

kiln_result kiln_destroy_timeline(kiln_device *dev, kiln_timeline t)
{
    kiln_result r = destroy_timeline(dev, t);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_TIMELINE, t.id, r);
    return r;
}

static kiln_result timeline_get_value(kiln_device *dev, kiln_timeline t, uint64_t *out)
{
    static const char api[] = "kiln_timeline_get_value";
    if (out)
        *out = 0;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_value is NULL");
    kiln_result r;
    ks_timeline *tl = get_timeline(dev, t.id, api, &r);
    if (!tl)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    *out = tl->value;
    pthread_mutex_unlock(&dev->dom->mu);
    kres_unref(&tl->base);
    return KILN_OK;
}

kiln_result kiln_timeline_get_value(kiln_device *dev, kiln_timeline t, uint64_t *out)
{
    kiln_result r = timeline_get_value(dev, t, out);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_TIMELINE_GET_VALUE, t.id, r);
    return r;
}

/* Claims `value` for a signal; caller holds the mutex. */
static kiln_result claim_value(kiln_device *dev, const char *api, ks_timeline *tl, uint64_t value)
{
    if (tl->internal)
        return FAIL(KILN_E_INVALID_ARG, TIMELINE_NOT_MONOTONIC,
                    "a context's own timeline is advanced only by its context");
    if (value <= tl->requested)
        return FAIL(KILN_E_INVALID_ARG, TIMELINE_NOT_MONOTONIC,
                    "value %llu, but %llu was already signaled or queued", (unsigned long long)value,
                    (unsigned long long)tl->requested);
    tl->requested = value;
    return KILN_OK;
}

static kiln_result timeline_signal(kiln_device *dev, kiln_timeline t, uint64_t value)
{
    static const char api[] = "kiln_timeline_signal";
    DEV_PREAMBLE();
    kiln_result r;
    ks_timeline *tl = get_timeline(dev, t.id, api, &r);
    if (!tl)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    r = claim_value(dev, api, tl, value);
    if (r == KILN_OK) {
        ks_timeline_signal_locked(tl, value, false);
        kq_settle_locked(&dev->queue);
        kq_drain_serial(&dev->queue);
    }
    ks_unlock(dev->dom);
    kres_unref(&tl->base);
    return r;
}

kiln_result kiln_timeline_signal(kiln_device *dev, kiln_timeline t, uint64_t value)
{
    struct kcap_writer *w = dev && dev->capture ? kcap_lock(dev) : NULL;
    kiln_result r = timeline_signal(dev, t, value);
    if (w)
        kcap_timeline_signal(w, t, value, r);
    return r;
}

/* ---- fences ---- */

static kiln_result fence_from_point(kiln_device *dev, const char *api, ks_timeline *tl, uint64_t value,
                                    kiln_fence *out)
{
    pthread_mutex_lock(&dev->dom->mu);
    ks_point *p = ks_point_create_locked(tl, value);
    ks_fence *f = NULL;
    kiln_result r = p ? ks_fence_create_locked(dev->dom, &p, 1, &f) : KILN_E_OUT_OF_MEMORY;
    if (p)
        ks_point_unref_locked(p);
    ks_unlock(dev->dom);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "fence");
    return add_handle(dev, api, &f->base, &out->id);
}

/* A point on a context's own timeline that its stream has not made yet:
 * only that context's later tokens and fences could reach it, so a wait on
 * it (a context waiting on its own future, say) could hang for good.
 * Logs SYNC_TOKEN_INVALID and returns true for one. */
static bool unmade_point(kiln_device *dev, const char *api, ks_timeline *tl, uint64_t value)
{
    pthread_mutex_lock(&dev->dom->mu);
    uint64_t last = tl->requested;
    bool unmade = tl->internal && value > last;
    ks_unlock(dev->dom);
    if (unmade)
        FAIL(KILN_E_INVALID_ARG, SYNC_TOKEN_INVALID,
             "value %llu on a context's own timeline, whose context has handed out points up to %llu",
             (unsigned long long)value, (unsigned long long)last);
    return unmade;
}

static kiln_result create_fence(kiln_device *dev, kiln_timeline t, uint64_t value, kiln_fence *out)
{
    static const char api[] = "kiln_create_fence";
    if (out)
        out->id = 0;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_fence is NULL");
    kiln_result r;
    ks_timeline *tl = get_timeline(dev, t.id, api, &r);
    if (!tl)
        return r;
    r = unmade_point(dev, api, tl, value) ? KILN_E_INVALID_ARG : fence_from_point(dev, api, tl, value, out);
    kres_unref(&tl->base);
    return r;
}

kiln_result kiln_create_fence(kiln_device *dev, kiln_timeline t, uint64_t value, kiln_fence *out)
{
    kiln_result r = create_fence(dev, t, value, out);
    if (dev && dev->capture)
        kcap_create_fence(dev, t, value, out ? *out : (kiln_fence){0}, r);
    return r;
}

static kiln_result fence_merge(kiln_device *dev, kiln_fence a, kiln_fence b, kiln_fence *out)
{
    static const char api[] = "kiln_fence_merge";
    if (out)
        out->id = 0;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_fence is NULL");
    kiln_result r;
    ks_fence *fa = get_fence(dev, a.id, api, &r);
    if (!fa)
        return r;
    ks_fence *fb = get_fence(dev, b.id, api, &r);
    if (!fb) {
        kres_unref(&fa->base);
        return r;
    }
    uint32_t n = fa->count + fb->count;
    ks_point **pts = kb_alloc(&dev->env, sizeof(ks_point *) * n);
    ks_fence *f = NULL;
    if (pts) {
        memcpy(pts, fa->points, sizeof(ks_point *) * fa->count);
        memcpy(pts + fa->count, fb->points, sizeof(ks_point *) * fb->count);
        pthread_mutex_lock(&dev->dom->mu);
        r = ks_fence_create_locked(dev->dom, pts, n, &f);
        ks_unlock(dev->dom);
        kb_free(&dev->env, pts, sizeof(ks_point *) * n);
    } else {
        r = KILN_E_OUT_OF_MEMORY;
    }
    kres_unref(&fa->base);
    kres_unref(&fb->base);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "merged fence");
    return add_handle(dev, api, &f->base, &out->id);
}

kiln_result kiln_fence_merge(kiln_device *dev, kiln_fence a, kiln_fence b, kiln_fence *out)
{
    kiln_result r = fence_merge(dev, a, b, out);
    if (dev && dev->capture)
        kcap_fence_merge(dev, a, b, out ? *out : (kiln_fence){0}, r);
    return r;
}

kiln_result kiln_destroy_fence(kiln_device *dev, kiln_fence f)
{
    kiln_result r = destroy_handle(dev, "kiln_destroy_fence", f.id, KRES_TYPE_FENCE, "fence");
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_DESTROY_FENCE, f.id, r);
    return r;
}

static kiln_fence_status status_of(ks_state s)
{
    return s == KS_SIGNALED ? KILN_FENCE_SIGNALED : s == KS_ERROR ? KILN_FENCE_ERROR : KILN_FENCE_ACTIVE;
}

static kiln_result fence_poll(kiln_device *dev, kiln_fence fence, kiln_fence_status *out)
{
    static const char api[] = "kiln_fence_poll";
    if (out)
        *out = KILN_FENCE_ACTIVE;
    DEV_PREAMBLE();
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_status is NULL");
    kiln_result r;
    ks_fence *f = get_fence(dev, fence.id, api, &r);
    if (!f)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    *out = status_of(ks_fence_state_locked(f));
    pthread_mutex_unlock(&dev->dom->mu);
    kres_unref(&f->base);
    return KILN_OK;
}

kiln_result kiln_fence_poll(kiln_device *dev, kiln_fence fence, kiln_fence_status *out)
{
    kiln_result r = fence_poll(dev, fence, out);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_FENCE_POLL, fence.id, r);
    return r;
}

/* Blocks on f. Touches only f and its domain, never the device: a device
 * destroyed meanwhile makes this return DEVICE_LOST. In SERIAL mode the
 * waiting thread runs ready commands itself. */
#define STUCK_FENCE                                                                          \
    "the work it waits for waits for a resource this thread keeps mapped, and nothing else "  \
    "could let it run; Unmap it first"

/* Whether every point of the fence still active is on a context's own
 * timeline, which only that context's queued work advances (mutex held).
 * A point on an application timeline may be signaled by any thread. */
static bool only_queue_reaches(const ks_fence *f)
{
    for (uint32_t i = 0; i < f->count; i++)
        if (f->points[i]->state == KS_ACTIVE && !f->points[i]->tl->internal)
            return false;
    return true;
}

/* Fails with KILN_E_WOULD_DEADLOCK when the fence waits only for queued
 * work that only the calling thread's Unmap could let run (kiln_map). */
static kiln_result wait_fence(kq_device *q, ks_fence *f, uint64_t timeout_ns)
{
    ks_domain *d = f->dom;
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    bool forever = timeout_ns == UINT64_MAX;
    if (!forever) {
        uint64_t ns = (uint64_t)deadline.tv_nsec + timeout_ns % 1000000000ull;
        deadline.tv_sec += (time_t)(timeout_ns / 1000000000ull + ns / 1000000000ull);
        deadline.tv_nsec = (long)(ns % 1000000000ull);
    }
    kiln_result r = KILN_OK;
    pthread_mutex_lock(&d->mu);
    uint64_t t0 = 0, flow = 0; /* tracing: when it blocked, on which point */
    for (;;) {
        /* Lost first: destroying the device errors pending points, and a
         * wait it interrupted reports that, not the points' state. */
        if (d->lost) {
            r = ks_fence_state_locked(f) == KS_SIGNALED ? KILN_OK : KILN_E_DEVICE_LOST;
            break;
        }
        ks_state s = ks_fence_state_locked(f);
        if (s == KS_SIGNALED)
            break;
        if (s == KS_ERROR) {
            r = KILN_E_COMMAND_FAILED;
            break;
        }
        if (d->trace && !t0 && timeout_ns != 0) { /* it waits (or helps) from here */
            t0 = kt_now();
            for (uint32_t i = 0; i < f->count && !flow; i++)
                if (f->points[i]->state == KS_ACTIVE)
                    flow = kt_point_flow(f->points[i]->tl, f->points[i]->value);
        }
        if (q && q->serial && q->ready_head) {
            kq_drain_serial(q);
            continue;
        }
        if (q && timeout_ns != 0 && kq_help_locked(q))
            continue; /* worked instead of sleeping (a deadline is rechecked) */
        if (timeout_ns == 0) {
            r = KILN_E_TIMEOUT;
            break;
        }
        if (q && kq_stalled_locked(q, NULL) && only_queue_reaches(f)) {
            r = KILN_E_WOULD_DEADLOCK; /* behind this thread's own map */
            break;
        }
        d->waiters++;
        int e = forever ? pthread_cond_wait(&d->cv, &d->mu) : pthread_cond_timedwait(&d->cv, &d->mu, &deadline);
        d->waiters--;
        if (e == ETIMEDOUT) {
            s = ks_fence_state_locked(f);
            r = s == KS_SIGNALED ? KILN_OK : s == KS_ERROR ? KILN_E_COMMAND_FAILED : KILN_E_TIMEOUT;
            break;
        }
    }
    /* Under the mutex: a device being destroyed clears d->trace first. */
    if (t0 && d->trace)
        kt_wait_span(d->trace, KT_WAIT_FENCE, t0, kt_now(), 0, flow);
    ks_unlock(d);
    return r;
}

static kiln_result fence_wait(kiln_device *dev, kiln_fence fence, uint64_t timeout_ns)
{
    static const char api[] = "kiln_fence_wait";
    DEV_PREAMBLE();
    kiln_result r;
    ks_fence *f = get_fence(dev, fence.id, api, &r);
    if (!f)
        return r;
    /* The queue pointer is used only while the device is alive: in SERIAL
     * mode nothing else runs commands, and a lost device is seen first. The
     * logger is copied: the device may be gone when the wait returns. */
    kb_env env = dev->env;
    r = wait_fence(&dev->queue, f, timeout_ns);
    kres_unref(&f->base);
    if (r == KILN_E_WOULD_DEADLOCK)
        return kb_fail(&env, r, KILN_LOG_WOULD_DEADLOCK, api, "%s", STUCK_FENCE);
    return r;
}

kiln_result kiln_fence_wait(kiln_device *dev, kiln_fence fence, uint64_t timeout_ns)
{
    /* The device may be destroyed during the wait: not looked at after it. */
    struct kcap_writer *w = dev && dev->capture ? kcap_pin(dev) : NULL;
    kiln_result r = fence_wait(dev, fence, timeout_ns);
    if (w)
        kcap_fence_wait(w, fence, timeout_ns, r);
    return r;
}

static kiln_result fence_wait_async(kiln_device *dev, kiln_fence fence, kiln_fence_callback cb, void *user)
{
    static const char api[] = "kiln_fence_wait_async";
    DEV_PREAMBLE();
    if (!cb)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "callback is NULL");
    kiln_result r;
    ks_fence *f = get_fence(dev, fence.id, api, &r);
    if (!f)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    ks_waiter *w = ks_wait_locked(f, KS_WAIT_CALLBACK);
    if (w) {
        w->fn = cb;
        w->user = user;
        w->fence_id = fence.id;
    }
    ks_unlock(dev->dom); /* calls it now if already settled */
    kres_unref(&f->base);
    if (!w)
        return FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "waiter");
    return KILN_OK;
}

kiln_result kiln_fence_wait_async(kiln_device *dev, kiln_fence fence, kiln_fence_callback cb, void *user)
{
    kiln_result r = fence_wait_async(dev, fence, cb, user);
    if (dev && dev->capture)
        kcap_object(dev, KCAP_OP_FENCE_WAIT_ASYNC, fence.id, r);
    return r;
}

/* ---- context stream: signal, wait, fences, tokens ---- */

static kiln_result context_signal(kiln_context *ctx, kiln_timeline t, uint64_t value)
{
    static const char api[] = "kiln_context_signal";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    ks_timeline *tl = get_timeline(dev, t.id, api, &r);
    if (!tl)
        return r;
    pthread_mutex_lock(&dev->dom->mu);
    if ((r = claim_value(dev, api, tl, value)) != KILN_OK)
        ;
    else if (kq_record_locked(&ctx->q, tl, value) != KILN_OK) {
        tl->requested = value - 1 < tl->value ? tl->value : value - 1;
        r = FAIL(KILN_E_OUT_OF_MEMORY, OUT_OF_MEMORY, "signal record");
    }
    kq_drain_serial(&dev->queue);
    ks_unlock(dev->dom);
    kres_unref(&tl->base);
    return r;
}

kiln_result kiln_context_signal(kiln_context *ctx, kiln_timeline t, uint64_t value)
{
    struct kcap_writer *w = ctx && ctx->dev->capture ? kcap_lock_context(ctx, "kiln_context_signal") : NULL;
    kiln_result r = context_signal(ctx, t, value);
    if (w)
        kcap_context_signal(w, ctx, t, value, r);
    return r;
}

kiln_result ka_mark_locked(kiln_context *ctx, uint64_t *value, void (*hook)(kres_object *, uint64_t),
                           kres_object *obj, uint64_t arg)
{
    kq_context *c = &ctx->q;
    kiln_result r = kq_record_hook_locked(c, c->tl, c->tl_next + 1, hook, obj, arg);
    if (r == KILN_OK) {
        *value = ++c->tl_next;
        c->tl->requested = c->tl_next; /* the last point a token may name */
    }
    return r;
}

static kiln_result context_insert_fence(kiln_context *ctx, kiln_fence *out)
{
    static const char api[] = "kiln_context_insert_fence";
    if (out)
        out->id = 0;
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_fence is NULL");
    uint64_t value = 0;
    pthread_mutex_lock(&dev->dom->mu);
    kiln_result r = ka_mark_locked(ctx, &value, NULL, NULL, 0);
    ks_unlock(dev->dom);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "fence record");
    return fence_from_point(dev, api, ctx->q.tl, value, out);
}

kiln_result kiln_context_insert_fence(kiln_context *ctx, kiln_fence *out)
{
    struct kcap_writer *w = ctx && ctx->dev->capture ? kcap_lock_context(ctx, "kiln_context_insert_fence") : NULL;
    kiln_result r = context_insert_fence(ctx, out);
    if (w)
        kcap_context_insert_fence(w, ctx, out ? *out : (kiln_fence){0}, r);
    return r;
}

static kiln_result context_sync_token(kiln_context *ctx, kiln_sync_token *out)
{
    static const char api[] = "kiln_context_sync_token";
    if (out)
        memset(out, 0, sizeof *out);
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    if (!out)
        return FAIL(KILN_E_INVALID_ARG, NULL_POINTER, "out_token is NULL");
    uint64_t value = 0;
    pthread_mutex_lock(&dev->dom->mu);
    kiln_result r = ka_mark_locked(ctx, &value, NULL, NULL, 0);
    ks_unlock(dev->dom);
    if (r != KILN_OK)
        return FAIL(r, OUT_OF_MEMORY, "token record");
    out->timeline = ctx->timeline_id;
    out->value = value;
    return KILN_OK;
}

kiln_result kiln_context_sync_token(kiln_context *ctx, kiln_sync_token *out)
{
    struct kcap_writer *w = ctx && ctx->dev->capture ? kcap_lock_context(ctx, "kiln_context_sync_token") : NULL;
    kiln_result r = context_sync_token(ctx, out);
    if (w)
        kcap_context_sync_token(w, ctx, out, r);
    return r;
}

static kiln_result context_wait(kiln_context *ctx, kiln_fence fence)
{
    static const char api[] = "kiln_context_wait";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    ks_fence *f = get_fence(dev, fence.id, api, &r);
    if (!f)
        return r;
    r = kq_wait_fence(&ctx->q, f, api);
    kres_unref(&f->base);
    if (r == KILN_E_OUT_OF_MEMORY)
        return FAIL(r, OUT_OF_MEMORY, "waiter");
    if (r != KILN_OK)
        return FAIL(r, WOULD_DEADLOCK, "the command ring is full of commands waiting for a resource this thread keeps mapped");
    return KILN_OK;
}

kiln_result kiln_context_wait(kiln_context *ctx, kiln_fence fence)
{
    kiln_result r = context_wait(ctx, fence);
    if (ctx && ctx->dev->capture)
        kcap_context_object(ctx, KCAP_OP_CONTEXT_WAIT, fence.id, r);
    return r;
}

/* A temporary fence for a token: its context's timeline reaching value. */
static ks_fence *token_fence(kiln_device *dev, const char *api, kiln_sync_token token, kiln_result *r)
{
    ks_timeline *tl = get_timeline(dev, token.timeline, api, r);
    if (!tl)
        return NULL;
    if (unmade_point(dev, api, tl, token.value)) {
        kres_unref(&tl->base);
        *r = KILN_E_INVALID_ARG;
        return NULL;
    }
    pthread_mutex_lock(&dev->dom->mu);
    ks_point *p = ks_point_create_locked(tl, token.value);
    ks_fence *f = NULL;
    *r = p ? ks_fence_create_locked(dev->dom, &p, 1, &f) : KILN_E_OUT_OF_MEMORY;
    if (p)
        ks_point_unref_locked(p);
    ks_unlock(dev->dom);
    kres_unref(&tl->base);
    if (*r != KILN_OK)
        *r = FAIL(*r, OUT_OF_MEMORY, "token fence");
    return f;
}

static kiln_result context_wait_sync_token(kiln_context *ctx, kiln_sync_token token)
{
    static const char api[] = "kiln_context_wait_sync_token";
    CTX_PREAMBLE();
    KA_FLUSH_SCENE_OR_RETURN(ctx, api);
    kiln_result r;
    ks_fence *f = token_fence(dev, api, token, &r);
    if (!f)
        return r;
    r = kq_wait_fence(&ctx->q, f, api);
    kres_unref(&f->base);
    if (r == KILN_E_OUT_OF_MEMORY)
        return FAIL(r, OUT_OF_MEMORY, "waiter");
    if (r != KILN_OK)
        return FAIL(r, WOULD_DEADLOCK, "the command ring is full of commands waiting for a resource this thread keeps mapped");
    return KILN_OK;
}

kiln_result kiln_context_wait_sync_token(kiln_context *ctx, kiln_sync_token token)
{
    kiln_result r = context_wait_sync_token(ctx, token);
    if (ctx && ctx->dev->capture)
        kcap_context_wait_sync_token(ctx, token, r);
    return r;
}

static kiln_result wait_sync_token(kiln_device *dev, kiln_sync_token token, uint64_t timeout_ns)
{
    static const char api[] = "kiln_wait_sync_token";
    DEV_PREAMBLE();
    kiln_result r;
    ks_fence *f = token_fence(dev, api, token, &r);
    if (!f)
        return r;
    kb_env env = dev->env; /* as in fence_wait */
    r = wait_fence(&dev->queue, f, timeout_ns);
    kres_unref(&f->base);
    if (r == KILN_E_WOULD_DEADLOCK)
        return kb_fail(&env, r, KILN_LOG_WOULD_DEADLOCK, api, "%s", STUCK_FENCE);
    return r;
}

kiln_result kiln_wait_sync_token(kiln_device *dev, kiln_sync_token token, uint64_t timeout_ns)
{
    /* The device may be destroyed during the wait: not looked at after it. */
    struct kcap_writer *w = dev && dev->capture ? kcap_pin(dev) : NULL;
    kiln_result r = wait_sync_token(dev, token, timeout_ns);
    if (w)
        kcap_wait_sync_token(w, token, timeout_ns, r);
    return r;
}
