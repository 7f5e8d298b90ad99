/*
 * present: the swapchain, a buffer queue with acquire and release fences
 * (seed 001's BufferQueue) feeding a winsys target on its own thread.
 *
 * Buffers move FREE -> DEQUEUED -> QUEUED -> ACQUIRED -> FREE.
 * - get_back_buffer dequeues a FREE buffer (the only place the app's
 *   thread can block, counted in the stats) and makes the app's context
 *   server-wait on the buffer's release fence, so rendering into it waits
 *   for the display to finish reading it, but the app's thread does not.
 * - present inserts the acquire fence (everything the context queued) and
 *   queues the buffer; it never waits.
 * - The display thread takes queued buffers in order (MAILBOX: present
 *   already replaced older queued ones), waits for the acquire fence, hands
 *   the buffer back FREE at once with a release fence, copies the frame
 *   into a display target through a staging texture of its own context,
 *   displays it, and signals the release fence.
 *
 * The swapchain uses only the public API: it is a client of the device
 * like any other (its display context is an ordinary context).
 *
 * Locking: sc->mu guards buffer states, the queue and the stats. No kiln
 * call that can wait is made while holding it.
 *
 * Capture: the swapchain's own kiln calls are not recorded (kcap_suppress
 * around them, and on the display thread); the swapchain calls are.
 */
#include "../api/api.h"
#include "../capture/capture.h"
#include "../winsys/winsys.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define MAX_BUFFERS 3
#define QUEUE_CAP 16

enum { BUF_FREE, BUF_DEQUEUED, BUF_QUEUED, BUF_ACQUIRED };

typedef struct sc_buffer {
    kiln_texture tex;
    kiln_rtv rtv;
    uint32_t w, h;
    uint32_t generation;   /* buffer set; older sets retire when displayed */
    int state;
    kiln_fence acquire;    /* set while QUEUED / ACQUIRED */
    kiln_fence release;    /* 0 when none pending */
    uint64_t frame;
} sc_buffer;

struct kiln_swapchain {
    kiln_device *dev;
    kiln_context *ctx;      /* the app's */
    kiln_context *display;  /* the display thread's */
    kiln_swapchain_desc desc;
    kb_env env;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sc_buffer *bufs[MAX_BUFFERS]; /* the current set */
    uint32_t nbufs, generation;
    sc_buffer *current;     /* DEQUEUED */
    sc_buffer *queue[QUEUE_CAP];
    uint32_t qhead, qcount;
    uint32_t in_display;    /* buffers ACQUIRED */
    uint32_t retired;       /* buffers of replaced sets still queued or shown */
    uint64_t shown;         /* frames the display thread finished with */
    uint64_t mailbox_dropped; /* frames replaced while queued */
    pthread_t thread;
    bool stop;
    int init_state;         /* 0 starting, 1 ready, -1 failed */
    kiln_result init_result;
    kiln_timeline release_tl;
    uint64_t release_value;
    kiln_fence acquiring;   /* the acquire fence the display waits for */
    bool abandon;           /* destroy: frames that can never render go */
    kiln_swapchain_stats stats;
};

static const kb_env *env_of(kiln_swapchain *sc) { return &sc->env; }

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The app's thread waits for the display thread, which waits for a
 * frame's work. That work can be held up for good by a resource the app's
 * thread keeps mapped (kiln_map), and then nothing would ever wake it. So
 * it waits in slices of STUCK_CHECK_NS and, between them, asks whether the
 * display waits for a fence that no queued work can reach any more. */
#define STUCK_CHECK_NS 20000000ull

static void timed_wait(kiln_swapchain *sc)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t ns = (uint64_t)t.tv_nsec + STUCK_CHECK_NS;
    t.tv_sec += (time_t)(ns / 1000000000ull);
    t.tv_nsec = (long)(ns % 1000000000ull);
    pthread_cond_timedwait(&sc->cv, &sc->mu, &t);
}

/* Called with sc->mu held (released meanwhile). The queue is asked first:
 * once it has stalled, nothing can settle the fence any more, so a fence
 * still active after that never will be. The fence is polled under sc->mu,
 * which the display thread holds to stop waiting for it before it
 * destroys it. */
static bool display_stuck(kiln_swapchain *sc)
{
    if (!sc->acquiring.id)
        return false;
    pthread_mutex_unlock(&sc->mu);
    bool stalled = kq_stalled(&sc->dev->queue, &sc->ctx->q);
    pthread_mutex_lock(&sc->mu);
    kiln_fence_status st = KILN_FENCE_SIGNALED;
    return stalled && sc->acquiring.id &&
           kiln_fence_poll(sc->dev, sc->acquiring, &st) == KILN_OK && st == KILN_FENCE_ACTIVE;
}

static kiln_result stuck_fail(kiln_swapchain *sc, const char *api)
{
    return kb_fail(&sc->env, KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK, api,
                   "the display waits for a presented frame whose work waits for a resource "
                   "this thread keeps mapped; Unmap it first");
}

static void buffer_free(kiln_swapchain *sc, sc_buffer *b)
{
    if (b->acquire.id)
        kiln_destroy_fence(sc->dev, b->acquire);
    if (b->release.id)
        kiln_destroy_fence(sc->dev, b->release);
    kiln_destroy_rtv(sc->dev, b->rtv);
    kiln_destroy_texture(sc->dev, b->tex);
    kb_free(env_of(sc), b, sizeof *b);
}

static kiln_result make_set(kiln_swapchain *sc, uint32_t w, uint32_t h, sc_buffer **out)
{
    kiln_texture2d_desc td = {.width = w,
                              .height = h,
                              .mip_levels = 1,
                              .array_size = 1,
                              .format = sc->desc.format,
                              .usage = KILN_USAGE_DEFAULT,
                              .bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE};
    for (uint32_t i = 0; i < sc->desc.buffer_count; i++) {
        sc_buffer *b = kb_calloc(env_of(sc), sizeof *b);
        kiln_result r = b ? kiln_create_texture2d(sc->dev, &td, NULL, &b->tex) : KILN_E_OUT_OF_MEMORY;
        if (r == KILN_OK && (r = kiln_create_rtv(sc->dev, b->tex, NULL, &b->rtv)) != KILN_OK)
            kiln_destroy_texture(sc->dev, b->tex);
        if (r != KILN_OK) {
            kb_free(env_of(sc), b, sizeof *b);
            for (uint32_t k = 0; k < i; k++)
                buffer_free(sc, out[k]);
            return r;
        }
        b->w = w;
        b->h = h;
        b->generation = sc->generation;
        out[i] = b;
    }
    return KILN_OK;
}

/* A failure with no swapchain or device to log to. */
static kiln_result null_fail(const char *api, const char *what)
{
    kiln_device_desc nodesc = {0};
    kb_env env;
    kb_env_init(&env, &nodesc);
    return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "%s", what);
}

/* ---- the display thread ---- */

typedef struct display_state {
    kw_winsys *ws;
    kw_target *dt;
    uint32_t dt_w, dt_h, dt_stride;
    kiln_texture staging;
    uint32_t st_w, st_h;
} display_state;

static kiln_result ensure_targets(kiln_swapchain *sc, display_state *d, uint32_t w, uint32_t h)
{
    if (!d->dt || d->dt_w != w || d->dt_h != h) {
        if (d->dt)
            d->ws->dt_destroy(d->ws, d->dt);
        d->dt = NULL;
        kiln_result r = d->ws->dt_create(d->ws, w, h, &d->dt_stride, &d->dt);
        if (r != KILN_OK)
            return r;
        d->dt_w = w;
        d->dt_h = h;
    }
    if (!d->staging.id || d->st_w != w || d->st_h != h) {
        if (d->staging.id)
            kiln_destroy_texture(sc->dev, d->staging);
        d->staging.id = 0;
        kiln_texture2d_desc td = {.width = w,
                                  .height = h,
                                  .mip_levels = 1,
                                  .array_size = 1,
                                  .format = sc->desc.format,
                                  .usage = KILN_USAGE_STAGING,
                                  .cpu_access = KILN_CPU_ACCESS_READ};
        kiln_result r = kiln_create_texture2d(sc->dev, &td, NULL, &d->staging);
        if (r != KILN_OK)
            return r;
        d->st_w = w;
        d->st_h = h;
    }
    return KILN_OK;
}

/* Copies the buffer's pixels into the display target, converting RGBA and
 * BGRA as the target wants. */
/* Queues the copy of the buffer into the staging texture: from then on the
 * display no longer needs the buffer itself (the copy holds its storage). */
static kiln_result grab(kiln_swapchain *sc, display_state *d, sc_buffer *b)
{
    kiln_result r = ensure_targets(sc, d, b->w, b->h);
    if (r == KILN_OK)
        r = kiln_copy_resource(sc->display, kiln_texture_resource(d->staging), kiln_texture_resource(b->tex));
    return r;
}

/* Copies the staged frame into the display target, converting RGBA and
 * BGRA as the target wants, and displays it. */
static kiln_result show(kiln_swapchain *sc, display_state *d, uint32_t w, uint32_t h, uint64_t frame)
{
    kiln_mapped_subresource m;
    kiln_result r = kiln_map(sc->display, kiln_texture_resource(d->staging), 0, KILN_MAP_READ, 0, &m);
    if (r != KILN_OK)
        return r;
    uint8_t *dst = d->ws->dt_map(d->ws, d->dt);
    bool swap = d->ws->native_format != sc->desc.format;
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *src = (const uint8_t *)m.data + (size_t)y * m.row_pitch;
        uint8_t *o = dst + (size_t)y * d->dt_stride;
        if (!swap) {
            memcpy(o, src, (size_t)w * 4);
            continue;
        }
        for (uint32_t x = 0; x < w; x++) {
            o[4 * x + 0] = src[4 * x + 2];
            o[4 * x + 1] = src[4 * x + 1];
            o[4 * x + 2] = src[4 * x + 0];
            o[4 * x + 3] = src[4 * x + 3];
        }
    }
    d->ws->dt_unmap(d->ws, d->dt);
    kiln_unmap(sc->display, kiln_texture_resource(d->staging), 0);
    return d->ws->dt_display(d->ws, d->dt, frame);
}

static kiln_result open_winsys(kiln_swapchain *sc, kw_winsys **ws)
{
    const kiln_swapchain_desc *d = &sc->desc;
    switch (d->winsys) {
    case KILN_WINSYS_PNG: return kw_png_create(env_of(sc), d->png_path, ws);
    case KILN_WINSYS_MEMORY: return kw_memory_create(env_of(sc), d->format, d->frame_fn, d->frame_user, ws);
    case KILN_WINSYS_X11: return kw_x11_create(env_of(sc), d->x11_display, d->x11_title, d->width, d->height, ws);
    default: return kw_null_create(env_of(sc), ws);
    }
}

static void *display_main(void *arg)
{
    kiln_swapchain *sc = arg;
    kt_tracer *tr = sc->dev->queue.trace; /* the device outlives its swapchains */
    if (tr)
        kt_name_thread(tr, "display (context %u)", sc->display->q.trace_id);
    display_state d = {0};
    kcap_suppress(1); /* this thread's calls are the swapchain's own */
    kiln_result r = open_winsys(sc, &d.ws);
    pthread_mutex_lock(&sc->mu);
    sc->init_result = r;
    sc->init_state = r == KILN_OK ? 1 : -1;
    pthread_cond_broadcast(&sc->cv);
    if (r != KILN_OK) {
        pthread_mutex_unlock(&sc->mu);
        return NULL;
    }
    for (;;) {
        while (!sc->qcount && !sc->stop)
            pthread_cond_wait(&sc->cv, &sc->mu);
        if (!sc->qcount)
            break;
        sc_buffer *b = sc->queue[sc->qhead];
        sc->qhead = (sc->qhead + 1) % QUEUE_CAP;
        sc->qcount--;
        b->state = BUF_ACQUIRED;
        sc->in_display++;
        kiln_fence acquire = b->acquire;
        b->acquire.id = 0;
        sc->acquiring = acquire;
        pthread_mutex_unlock(&sc->mu);

        /* Errors still display; a frame whose work can never complete
         * (destroy found it stuck, display_stuck) is dropped. */
        bool abandoned = false;
        while (kiln_fence_wait(sc->dev, acquire, STUCK_CHECK_NS) == KILN_E_TIMEOUT) {
            pthread_mutex_lock(&sc->mu);
            abandoned = sc->abandon;
            pthread_mutex_unlock(&sc->mu);
            if (abandoned)
                break;
        }
        pthread_mutex_lock(&sc->mu);
        sc->acquiring.id = 0;
        pthread_mutex_unlock(&sc->mu);
        kiln_destroy_fence(sc->dev, acquire);
        uint64_t t_show = tr ? kt_now() : 0;
        uint32_t w = b->w, h = b->h;
        uint64_t frame = b->frame;
        kiln_result dr = abandoned ? KILN_E_DEVICE_LOST : grab(sc, &d, b);
        /* The buffer goes back FREE now, with a release fence that signals
         * once the staged copy has been read: new rendering into it waits
         * for that on the GPU side (a server wait), not the app's thread. */
        uint64_t value = ++sc->release_value;
        kiln_fence release = {0};
        kiln_create_fence(sc->dev, sc->release_tl, value, &release);
        pthread_mutex_lock(&sc->mu);
        sc->in_display--;
        if (b->generation != sc->generation) {
            kiln_destroy_fence(sc->dev, release);
            buffer_free(sc, b); /* a set replaced by resize */
            sc->retired--;
        } else {
            b->release = release;
            b->state = BUF_FREE;
        }
        pthread_cond_broadcast(&sc->cv);
        pthread_mutex_unlock(&sc->mu);

        if (dr == KILN_OK)
            dr = show(sc, &d, w, h, frame);
        kiln_timeline_signal(sc->dev, sc->release_tl, value);
        if (tr)
            kt_slice(tr, "display frame", t_show, kt_now(), "frame", frame);
        bool closed = d.ws->poll_closed ? d.ws->poll_closed(d.ws) : false;
        if (dr != KILN_OK && dr != KILN_E_DEVICE_LOST)
            kb_log(&sc->env, KILN_LOG_LEVEL_ERROR, KILN_LOG_WINSYS_FAILED, "kiln_swapchain_present",
                   "frame %llu could not be displayed (%s)", (unsigned long long)frame, kiln_result_string(dr));

        pthread_mutex_lock(&sc->mu);
        if (dr == KILN_OK)
            sc->stats.displayed++;
        else if (dr == KILN_E_DEVICE_LOST) /* the window is gone, or abandoned */
            sc->stats.dropped++;
        else
            sc->stats.display_errors++;
        if (closed)
            sc->stats.window_closed = 1;
        sc->shown++;
        pthread_cond_broadcast(&sc->cv);
    }
    pthread_mutex_unlock(&sc->mu);
    if (d.dt)
        d.ws->dt_destroy(d.ws, d.dt);
    if (d.staging.id)
        kiln_destroy_texture(sc->dev, d.staging);
    d.ws->destroy(d.ws);
    return NULL;
}

/* ---- the API ---- */

static bool png_pattern_ok(const char *p)
{
    /* Exactly one %u-style conversion (flags and width allowed), and %%. */
    int conv = 0;
    for (const char *c = p; *c; c++) {
        if (*c != '%')
            continue;
        if (c[1] == '%') {
            c++;
            continue;
        }
        c++;
        while (*c == '0' || *c == '-' || (*c >= '1' && *c <= '9'))
            c++;
        if (*c != 'u')
            return false;
        conv++;
    }
    return conv == 1 && strlen(p) < 500;
}

static kiln_result swapchain_create(kiln_context *ctx, const kiln_swapchain_desc *desc, kiln_swapchain **out)
{
    static const char api[] = "kiln_swapchain_create";
    if (out)
        *out = NULL;
    if (!ctx)
        return null_fail(api, "context is NULL");
    kiln_device *dev = ctx->dev;
    kb_env env = dev->env;
    if (!desc || !out)
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "%s is NULL", !desc ? "desc" : "out_swapchain");
    kiln_swapchain_desc d = *desc;
    if (!d.format)
        d.format = KILN_FORMAT_R8G8B8A8_UNORM;
    if (!d.buffer_count)
        d.buffer_count = 2;
    if (d.width < 1 || d.height < 1 || d.width > 8192 || d.height > 8192 ||
        (d.format != KILN_FORMAT_R8G8B8A8_UNORM && d.format != KILN_FORMAT_B8G8R8A8_UNORM) ||
        d.buffer_count < 2 || d.buffer_count > MAX_BUFFERS || (unsigned)d.mode > KILN_PRESENT_MAILBOX ||
        (unsigned)d.winsys > KILN_WINSYS_X11 || (d.winsys == KILN_WINSYS_MEMORY && !d.frame_fn) ||
        (d.winsys == KILN_WINSYS_PNG && d.png_path && !png_pattern_ok(d.png_path)))
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_SWAPCHAIN_DESC, api,
                       "%ux%u, format %d, %u buffers, mode %d, target %d (png_path needs one %%u)", d.width,
                       d.height, (int)d.format, d.buffer_count, (int)d.mode, (int)d.winsys);
    if (d.winsys == KILN_WINSYS_X11 && !kiln_winsys_x11_available())
        return kb_fail(&env, KILN_E_UNSUPPORTED, KILN_LOG_WINSYS_UNAVAILABLE, api, "this build has no X11 target");

    kiln_swapchain *sc = kb_calloc(&env, sizeof *sc);
    if (!sc)
        return kb_fail(&env, KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY, api, "swapchain");
    sc->dev = dev;
    sc->ctx = ctx;
    atomic_fetch_add_explicit(&ctx->swapchains, 1, memory_order_relaxed); /* kept alive */
    sc->desc = d;
    sc->env = env;
    pthread_mutex_init(&sc->mu, NULL);
    pthread_cond_init(&sc->cv, NULL);
    kiln_result r = kiln_context_create(dev, &sc->display);
    if (r == KILN_OK)
        r = kiln_create_timeline(dev, 0, &sc->release_tl);
    if (r == KILN_OK)
        r = make_set(sc, d.width, d.height, sc->bufs);
    if (r == KILN_OK) {
        sc->nbufs = d.buffer_count;
        if (pthread_create(&sc->thread, NULL, display_main, sc) != 0)
            r = KILN_E_OUT_OF_MEMORY;
    }
    if (r == KILN_OK) {
        pthread_mutex_lock(&sc->mu);
        while (sc->init_state == 0)
            pthread_cond_wait(&sc->cv, &sc->mu);
        pthread_mutex_unlock(&sc->mu);
        if (sc->init_state < 0) {
            pthread_join(sc->thread, NULL);
            r = sc->init_result;
            kb_log(&env, KILN_LOG_LEVEL_ERROR, KILN_LOG_WINSYS_UNAVAILABLE, api,
                   "the target could not be opened (%s)%s", kiln_result_string(r),
                   d.winsys == KILN_WINSYS_X11 ? ": is DISPLAY set and the server reachable?" : "");
            sc->init_state = -2; /* logged */
        }
    }
    if (r != KILN_OK) {
        for (uint32_t i = 0; i < sc->nbufs; i++)
            buffer_free(sc, sc->bufs[i]);
        if (sc->release_tl.id)
            kiln_destroy_timeline(dev, sc->release_tl);
        if (sc->display)
            kiln_context_destroy(sc->display);
        bool logged = sc->init_state == -2;
        atomic_fetch_sub_explicit(&ctx->swapchains, 1, memory_order_release);
        pthread_cond_destroy(&sc->cv);
        pthread_mutex_destroy(&sc->mu);
        kb_free(&env, sc, sizeof *sc);
        if (logged)
            return r;
        return kb_fail(&env, r, KILN_LOG_OUT_OF_MEMORY, api, "creating the buffers or the display thread");
    }
    *out = sc;
    return KILN_OK;
}

kiln_result kiln_swapchain_create(kiln_context *ctx, const kiln_swapchain_desc *desc, kiln_swapchain **out)
{
    kcap_suppress(1);
    kiln_result r = swapchain_create(ctx, desc, out);
    kcap_suppress(-1);
    if (ctx && ctx->dev->capture)
        kcap_swapchain_create(ctx, desc, out ? *out : NULL, r);
    return r;
}

static kiln_result swapchain_get_back_buffer(kiln_swapchain *sc, kiln_texture *tex, kiln_rtv *rtv)
{
    static const char api[] = "kiln_swapchain_get_back_buffer";
    if (tex)
        tex->id = 0;
    if (rtv)
        rtv->id = 0;
    if (!sc)
        return null_fail(api, "swapchain is NULL");
    if (!tex || !rtv)
        return kb_fail(&sc->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "out_texture or out_view is NULL");
    pthread_mutex_lock(&sc->mu);
    if (!sc->current) {
        sc_buffer *b = NULL;
        uint64_t t0 = 0;
        for (;;) {
            /* Prefer a buffer the display has fully released (no release
             * fence pending), so rendering need not wait on the GPU side. */
            for (uint32_t i = 0; i < sc->nbufs && !b; i++)
                if (sc->bufs[i]->state == BUF_FREE && !sc->bufs[i]->release.id)
                    b = sc->bufs[i];
            for (uint32_t i = 0; i < sc->nbufs && !b; i++)
                if (sc->bufs[i]->state == BUF_FREE)
                    b = sc->bufs[i];
            if (b)
                break;
            if (!t0) {
                t0 = now_ns();
                sc->stats.waits_no_buffer++;
            }
            timed_wait(sc);
            if (display_stuck(sc))
                break;
        }
        if (t0) {
            sc->stats.blocked_ns += now_ns() - t0;
            kq_trace_wait(&sc->dev->queue, KT_WAIT_SWAPCHAIN, t0, 0);
        }
        if (!b) {
            pthread_mutex_unlock(&sc->mu);
            return stuck_fail(sc, api);
        }
        b->state = BUF_DEQUEUED;
        sc->current = b;
        kiln_fence release = b->release;
        b->release.id = 0;
        pthread_mutex_unlock(&sc->mu);
        if (release.id) {
            /* Server wait: rendering into it waits for the display's copy. */
            kiln_context_wait(sc->ctx, release);
            kiln_destroy_fence(sc->dev, release);
        }
        pthread_mutex_lock(&sc->mu);
    }
    *tex = sc->current->tex;
    *rtv = sc->current->rtv;
    pthread_mutex_unlock(&sc->mu);
    return KILN_OK;
}

kiln_result kiln_swapchain_get_back_buffer(kiln_swapchain *sc, kiln_texture *tex, kiln_rtv *rtv)
{
    kcap_suppress(1);
    kiln_result r = swapchain_get_back_buffer(sc, tex, rtv);
    kcap_suppress(-1);
    if (sc && sc->dev->capture)
        kcap_swapchain_get_back_buffer(sc->dev, sc, tex ? *tex : (kiln_texture){0},
                                       rtv ? *rtv : (kiln_rtv){0}, r);
    return r;
}

static kiln_result swapchain_present(kiln_swapchain *sc)
{
    static const char api[] = "kiln_swapchain_present";
    if (!sc)
        return null_fail(api, "swapchain is NULL");
    pthread_mutex_lock(&sc->mu);
    sc_buffer *b = sc->current;
    pthread_mutex_unlock(&sc->mu);
    if (!b)
        return kb_fail(&sc->env, KILN_E_INVALID_CALL, KILN_LOG_PRESENT_NO_BUFFER, api,
                       "call kiln_swapchain_get_back_buffer first");
    kiln_fence acquire;
    kiln_result r = kiln_context_insert_fence(sc->ctx, &acquire);
    if (r != KILN_OK)
        return r; /* logged */
    pthread_mutex_lock(&sc->mu);
    sc->current = NULL;
    b->acquire = acquire;
    b->frame = ++sc->stats.presented;
    if (sc->desc.mode == KILN_PRESENT_MAILBOX) {
        /* A newer frame replaces those still queued. */
        while (sc->qcount) {
            sc_buffer *old = sc->queue[sc->qhead];
            sc->qhead = (sc->qhead + 1) % QUEUE_CAP;
            sc->qcount--;
            kiln_destroy_fence(sc->dev, old->acquire);
            old->acquire.id = 0;
            sc->stats.dropped++;
            sc->mailbox_dropped++;
            if (old->generation != sc->generation) {
                buffer_free(sc, old);
                sc->retired--;
            } else {
                old->state = BUF_FREE;
            }
        }
    }
    b->state = BUF_QUEUED;
    sc->queue[(sc->qhead + sc->qcount) % QUEUE_CAP] = b;
    sc->qcount++;
    pthread_cond_broadcast(&sc->cv);
    pthread_mutex_unlock(&sc->mu);
    return KILN_OK;
}

kiln_result kiln_swapchain_present(kiln_swapchain *sc)
{
    kcap_suppress(1);
    kiln_result r = swapchain_present(sc);
    kcap_suppress(-1);
    if (sc && sc->dev->capture)
        kcap_swapchain_call(sc->dev, sc, KCAP_OP_SWAPCHAIN_PRESENT, 0, 0, r);
    return r;
}

static kiln_result swapchain_resize(kiln_swapchain *sc, uint32_t w, uint32_t h)
{
    static const char api[] = "kiln_swapchain_resize";
    if (!sc)
        return null_fail(api, "swapchain is NULL");
    if (w < 1 || h < 1 || w > 8192 || h > 8192)
        return kb_fail(&sc->env, KILN_E_INVALID_ARG, KILN_LOG_SWAPCHAIN_DESC, api, "%ux%u", w, h);
    pthread_mutex_lock(&sc->mu);
    /* Bounded memory: buffers of older sets still queued or shown, plus the
     * current set and the new one, never exceed QUEUE_CAP. Past that the
     * app waits for the display, like a dequeue with no FREE buffer. */
    uint64_t t0 = 0;
    while (sc->retired + 2 * sc->desc.buffer_count > QUEUE_CAP) {
        if (!t0) {
            t0 = now_ns();
            sc->stats.waits_no_buffer++;
        }
        timed_wait(sc);
        if (display_stuck(sc)) {
            sc->stats.blocked_ns += now_ns() - t0;
            pthread_mutex_unlock(&sc->mu);
            return stuck_fail(sc, api);
        }
    }
    if (t0) {
        sc->stats.blocked_ns += now_ns() - t0;
        kq_trace_wait(&sc->dev->queue, KT_WAIT_SWAPCHAIN, t0, 0);
    }
    sc->generation++;
    sc_buffer *fresh[MAX_BUFFERS];
    kiln_result r = make_set(sc, w, h, fresh);
    if (r != KILN_OK) {
        sc->generation--;
        pthread_mutex_unlock(&sc->mu);
        return kb_fail(&sc->env, r, KILN_LOG_OUT_OF_MEMORY, api, "new buffers");
    }
    /* Old buffers: FREE and DEQUEUED ones go now; QUEUED and ACQUIRED
     * ones display at their size and are freed afterwards. */
    for (uint32_t i = 0; i < sc->nbufs; i++) {
        sc_buffer *b = sc->bufs[i];
        if (b->state == BUF_FREE || b->state == BUF_DEQUEUED)
            buffer_free(sc, b);
        else
            sc->retired++;
        sc->bufs[i] = fresh[i];
    }
    sc->current = NULL;
    sc->desc.width = w;
    sc->desc.height = h;
    pthread_cond_broadcast(&sc->cv);
    pthread_mutex_unlock(&sc->mu);
    return KILN_OK;
}

kiln_result kiln_swapchain_resize(kiln_swapchain *sc, uint32_t w, uint32_t h)
{
    kcap_suppress(1);
    kiln_result r = swapchain_resize(sc, w, h);
    kcap_suppress(-1);
    if (sc && sc->dev->capture)
        kcap_swapchain_call(sc->dev, sc, KCAP_OP_SWAPCHAIN_RESIZE, w, h, r);
    return r;
}

static kiln_result swapchain_get_stats(kiln_swapchain *sc, kiln_swapchain_stats *out)
{
    static const char api[] = "kiln_swapchain_get_stats";
    if (out)
        memset(out, 0, sizeof *out);
    if (!sc)
        return null_fail(api, "swapchain is NULL");
    if (!out)
        return kb_fail(&sc->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "out_stats is NULL");
    pthread_mutex_lock(&sc->mu);
    *out = sc->stats;
    pthread_mutex_unlock(&sc->mu);
    return KILN_OK;
}

kiln_result kiln_swapchain_get_stats(kiln_swapchain *sc, kiln_swapchain_stats *out)
{
    kiln_result r = swapchain_get_stats(sc, out);
    if (sc && sc->dev->capture)
        kcap_swapchain_call(sc->dev, sc, KCAP_OP_SWAPCHAIN_GET_STATS, 0, 0, r);
    return r;
}

static kiln_result swapchain_wait_idle(kiln_swapchain *sc)
{
    static const char api[] = "kiln_swapchain_wait_idle";
    if (!sc)
        return null_fail(api, "swapchain is NULL");
    pthread_mutex_lock(&sc->mu);
    while (sc->qcount || sc->shown + sc->mailbox_dropped < sc->stats.presented) {
        timed_wait(sc);
        if (display_stuck(sc)) {
            pthread_mutex_unlock(&sc->mu);
            return stuck_fail(sc, api);
        }
    }
    pthread_mutex_unlock(&sc->mu);
    return KILN_OK;
}

kiln_result kiln_swapchain_wait_idle(kiln_swapchain *sc)
{
    kcap_suppress(1); /* display_stuck polls the acquire fence */
    kiln_result r = swapchain_wait_idle(sc);
    kcap_suppress(-1);
    if (sc && sc->dev->capture)
        kcap_swapchain_call(sc->dev, sc, KCAP_OP_SWAPCHAIN_WAIT_IDLE, 0, 0, r);
    return r;
}

static void swapchain_destroy(kiln_swapchain *sc)
{
    if (!sc)
        return;
    pthread_mutex_lock(&sc->mu);
    sc->stop = true; /* the thread displays what is queued, then ends */
    pthread_cond_broadcast(&sc->cv);
    /* ... unless a frame's work can never complete: then the frames left
     * are dropped (counted in `dropped`), with one message. */
    while ((sc->qcount || sc->in_display) && !sc->abandon) {
        timed_wait(sc);
        if (display_stuck(sc)) {
            sc->abandon = true;
            kb_log(&sc->env, KILN_LOG_LEVEL_ERROR, KILN_LOG_WOULD_DEADLOCK, "kiln_swapchain_destroy",
                   "the frames left wait for a resource this thread keeps mapped: they are dropped");
        }
    }
    pthread_mutex_unlock(&sc->mu);
    pthread_join(sc->thread, NULL);
    for (uint32_t i = 0; i < sc->nbufs; i++)
        buffer_free(sc, sc->bufs[i]);
    kiln_context_destroy(sc->display);
    kiln_destroy_timeline(sc->dev, sc->release_tl);
    atomic_fetch_sub_explicit(&sc->ctx->swapchains, 1, memory_order_release);
    kb_env env = sc->env;
    pthread_cond_destroy(&sc->cv);
    pthread_mutex_destroy(&sc->mu);
    kb_free(&env, sc, sizeof *sc);
}

void kiln_swapchain_destroy(kiln_swapchain *sc)
{
    kiln_device *dev = sc ? sc->dev : NULL;
    kcap_suppress(1);
    swapchain_destroy(sc);
    kcap_suppress(-1);
    if (dev && dev->capture)
        kcap_swapchain_call(dev, sc, KCAP_OP_SWAPCHAIN_DESTROY, 0, 0, KILN_OK);
}
