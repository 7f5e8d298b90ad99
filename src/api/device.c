/* Device creation and destruction, statistics. */
#include "api.h"
#include "../capture/capture.h"
#include "../driver/driver.h"

#include <stdlib.h>
#include <string.h>

const kb_env ka_stderr_env = {{NULL, NULL, NULL}, kiln_log_stderr, NULL};

#define DEFAULT_RING_CAPACITY 1024u
#define DEFAULT_TRANSFER_SIZE (4u << 20)
#define MAX_THREADS 256u

/* Workers: the count asked for, else KILN_NUM_THREADS, else one fewer than
 * the CPUs (at least one): the application's thread keeps a core while it
 * issues commands and helps execute whenever it waits (kq_help_locked).
 * Measured on 2 cores, bench_queue (c), producer work equal to the
 * commands' cost: 2 workers 0.84-0.95x serial's speed, 1 worker 1.34-1.49x.
 * *cpus gets the threads that execute in all: workers, plus the waiting
 * application thread when the default applies. */
static uint32_t resolve_threads(uint32_t requested, uint32_t *cpus)
{
    *cpus = requested;
    if (requested)
        return requested;
    const char *env = getenv("KILN_NUM_THREADS");
    if (env && *env) {
        char *end;
        unsigned long n = strtoul(env, &end, 10);
        if (*end == '\0' && n >= 1 && n <= MAX_THREADS)
            return *cpus = (uint32_t)n;
    }
    uint32_t n = KB_MIN(kb_cpu_count(), MAX_THREADS);
    *cpus = n;
    return n > 1 ? n - 1 : 1;
}

/* Completes and closes the trace. A thread still in a fence wait reads
 * the domain's pointer under its mutex, so it is cleared there first. */
static void stop_trace(kiln_device *dev)
{
    pthread_mutex_lock(&dev->dom->mu);
    kt_tracer *t = dev->dom->trace;
    dev->dom->trace = NULL;
    pthread_mutex_unlock(&dev->dom->mu);
    kt_close(t);
}

kiln_result kiln_device_create(const kiln_device_desc *desc_in, kiln_device **out)
{
    static const char api[] = "kiln_device_create";
    kiln_device_desc desc = {0};
    if (desc_in)
        desc = *desc_in;
    kb_env env;
    kb_env_init(&env, &desc);
    if (!out)
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "out_device is NULL");
    *out = NULL;
    if ((unsigned)desc.backend > KILN_BACKEND_OSMESA)
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, api,
                       "backend %d is not a kiln_backend", (int)desc.backend);
    const char *why;
    const kq_backend *backend = kd_backend_find(desc.backend, &why);
    if (!backend)
        return kb_fail(&env, KILN_E_UNSUPPORTED, KILN_LOG_BACKEND_UNSUPPORTED, api, "%s", why);
    if ((unsigned)desc.exec_mode > KILN_EXEC_SERIAL)
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, api,
                       "exec_mode %d is not a kiln_exec_mode", (int)desc.exec_mode);
    if (desc.num_threads > MAX_THREADS)
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DESC_INVALID_ENUM, api,
                       "num_threads %u exceeds %u", desc.num_threads, MAX_THREADS);
    uint32_t cap = desc.command_ring_capacity ? desc.command_ring_capacity : DEFAULT_RING_CAPACITY;
    uint32_t tsize = desc.transfer_ring_size ? desc.transfer_ring_size : DEFAULT_TRANSFER_SIZE;
    if (cap < 2 || cap > (1u << 20))
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, api,
                       "command_ring_capacity %u is outside 2..1048576", cap);
    if (tsize < 4096 || tsize > (1u << 30))
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_RING_SIZE, api,
                       "transfer_ring_size %u is outside 4096..1 GiB", tsize);
    if (desc.scene_budget && (desc.scene_budget < (64u << 10) || desc.scene_budget > (1u << 30)))
        return kb_fail(&env, KILN_E_INVALID_ARG, KILN_LOG_DEVICE_BAD_SCENE_BUDGET, api,
                       "scene_budget %u is outside 64 KiB..1 GiB (0: the default, 32 MiB)",
                       desc.scene_budget);

    kiln_device *dev = env.alloc.alloc(sizeof *dev, env.alloc.user);
    if (!dev)
        return kb_fail(&env, KILN_E_OUT_OF_MEMORY, KILN_LOG_DEVICE_ALLOC_FAILED, api,
                       "device struct");
    memset(dev, 0, sizeof *dev);
    dev->env = env;
    kd_recycler_init(&dev->recycler);
    dev->serial = desc.exec_mode == KILN_EXEC_SERIAL;
    uint32_t exec_threads = 0;
    dev->num_threads = dev->serial ? 0 : resolve_threads(desc.num_threads, &exec_threads);
    dev->ring_capacity = cap;
    dev->transfer_size = tsize;

    const char *trace_path = desc.trace_path ? desc.trace_path : getenv("KILN_TRACE");
    kt_tracer *trace = trace_path && *trace_path ? kt_open(&dev->env, trace_path) : NULL;
    dev->dom = ks_domain_create(&dev->env);
    if (!dev->dom) {
        kt_close(trace);
        kd_recycler_fini(&dev->recycler);
        kb_free(&env, dev, sizeof *dev);
        return kb_fail(&env, KILN_E_OUT_OF_MEMORY, KILN_LOG_DEVICE_ALLOC_FAILED, api, "sync domain");
    }
    dev->dom->trace = trace;
    kiln_result r = kres_handles_init(&dev->handles, &dev->env);
    if (r != KILN_OK) {
        stop_trace(dev);
        ks_domain_unref(dev->dom);
        kd_recycler_fini(&dev->recycler);
        kb_free(&env, dev, sizeof *dev);
        return kb_fail(&env, r, KILN_LOG_DEVICE_ALLOC_FAILED, api, "handle table");
    }
    r = kq_device_init(&dev->queue, &dev->env, dev->dom, dev->serial, dev->num_threads, trace);
    if (r != KILN_OK) {
        stop_trace(dev);
        kres_handles_fini(&dev->handles);
        ks_domain_unref(dev->dom);
        kd_recycler_fini(&dev->recycler);
        kb_free(&env, dev, sizeof *dev);
        if (r == KILN_E_OUT_OF_MEMORY)
            return kb_fail(&env, r, KILN_LOG_DEVICE_ALLOC_FAILED, api, "worker table");
        return kb_fail(&env, KILN_E_OUT_OF_MEMORY, KILN_LOG_DEVICE_THREAD_FAILED, api,
                       "pthread_create failed");
    }
    if (desc.scene_budget)
        dev->queue.scene_budget = desc.scene_budget;
    char reason[256] = "";
    dev->queue.backend = backend;
    r = backend->create(&dev->queue, exec_threads, &dev->queue.backend_data, reason, sizeof reason);
    if (r != KILN_OK) {
        kq_device_fini(&dev->queue);
        stop_trace(dev);
        kres_handles_fini(&dev->handles);
        ks_domain_unref(dev->dom);
        kd_recycler_fini(&dev->recycler);
        kb_free(&env, dev, sizeof *dev);
        return kb_fail(&env, r, KILN_LOG_BACKEND_UNSUPPORTED, api, "%s backend: %s", backend->name, reason);
    }
    r = ka_context_init(dev, &dev->immediate);
    if (r != KILN_OK) {
        kq_device_fini(&dev->queue);
        backend->destroy(dev->queue.backend_data);
        stop_trace(dev);
        kres_handles_fini(&dev->handles);
        ks_domain_unref(dev->dom);
        kd_recycler_fini(&dev->recycler);
        kb_free(&env, dev, sizeof *dev);
        return kb_fail(&env, r, KILN_LOG_DEVICE_ALLOC_FAILED, api,
                       "command ring (%u slots) or transfer ring (%u bytes)", cap, tsize);
    }
    *out = dev;
    kcap_device_created(dev); /* KILN_CAPTURE */
    return KILN_OK;
}

void kiln_device_destroy(kiln_device *dev)
{
    if (!dev)
        return;
    kcap_device_destroyed(dev); /* ends a running capture */
    /* Waits on fences end with DEVICE_LOST (server waits let their
     * commands run), CPU maps are released, queued work completes, then
     * everything is freed. Sync objects still referenced by threads inside
     * a fence wait keep the domain alive until they return. */
    for (kiln_context *c = dev->contexts; c; c = c->next)
        ka_flush_scene(c, "kiln_device_destroy");
    ka_flush_scene(&dev->immediate, "kiln_device_destroy");
    kq_device_lose(&dev->queue);
    for (kiln_context *c = dev->contexts; c; c = c->next)
        kq_unmap_all(&c->q);
    kq_unmap_all(&dev->immediate.q);
    while (dev->contexts) {
        kiln_context *c = dev->contexts;
        dev->contexts = c->next;
        ka_context_fini(c);
        kb_free(&dev->env, c, sizeof *c);
    }
    ka_context_fini(&dev->immediate);
    kq_device_fini(&dev->queue);
    dev->queue.backend->destroy(dev->queue.backend_data);
    stop_trace(dev); /* nothing records any more: workers are gone */
    kres_handles_fini(&dev->handles);
    kd_recycler_fini(&dev->recycler); /* every scene is freed by now */
    ks_domain *dom = dev->dom;
    kb_env env = dev->env;
    kb_free(&env, dev, sizeof *dev);
    ks_domain_unref(dom);
}

kiln_result ka_context_init(kiln_device *dev, kiln_context *ctx)
{
    ctx->dev = dev;
    ks_timeline *tl;
    kiln_result r = ks_timeline_create(dev->dom, 0, &tl);
    if (r != KILN_OK)
        return r;
    tl->internal = true;
    kres_ref(&tl->base); /* one for the handle table, one for the context */
    r = kq_context_init(&ctx->q, &dev->queue, dev->ring_capacity, dev->transfer_size, tl);
    if (r == KILN_OK && (r = ka_pipeline_init(ctx)) != KILN_OK)
        kq_context_fini(&ctx->q);
    if (r == KILN_OK) {
        ctx->timeline_id = kres_handles_add(&dev->handles, &tl->base, &r);
        if (!ctx->timeline_id) {
            ka_pipeline_fini(ctx);
            kq_context_fini(&ctx->q);
        }
    }
    if (r != KILN_OK) {
        kres_unref(&tl->base);
        if (!ctx->timeline_id)
            kres_unref(&tl->base);
        return r;
    }
    return KILN_OK;
}

void ka_context_fini(kiln_context *ctx)
{
    kiln_device *dev = ctx->dev;
    ka_flush_scene(ctx, "kiln_context_destroy");
    kq_context_fini(&ctx->q);
    ka_pipeline_fini(ctx);
    ka_queries_fini(ctx);
    kiln_log_id lid;
    kres_object *o = kres_handles_remove(&dev->handles, ctx->timeline_id, KRES_TYPE_TIMELINE,
                                         KRES_TYPE_TIMELINE, &lid);
    if (o)
        kres_unref(o);
    kres_unref(&ctx->q.tl->base);
}

static kiln_result context_create(kiln_device *dev, kiln_context **out)
{
    static const char api[] = "kiln_context_create";
    if (out)
        *out = NULL;
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!out)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "out_context is NULL");
    *out = NULL;
    kiln_context *ctx = kb_calloc(&dev->env, sizeof *ctx);
    if (!ctx)
        return kb_fail(&dev->env, KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY, api, "context");
    kiln_result r = ka_context_init(dev, ctx);
    if (r != KILN_OK) {
        kb_free(&dev->env, ctx, sizeof *ctx);
        return kb_fail(&dev->env, r, KILN_LOG_OUT_OF_MEMORY, api,
                       "command ring (%u slots) or transfer ring (%u bytes)", dev->ring_capacity,
                       dev->transfer_size);
    }
    pthread_mutex_lock(&dev->dom->mu);
    ctx->next = dev->contexts;
    if (dev->contexts)
        dev->contexts->prev = ctx;
    dev->contexts = ctx;
    pthread_mutex_unlock(&dev->dom->mu);
    *out = ctx;
    return KILN_OK;
}

kiln_result kiln_context_create(kiln_device *dev, kiln_context **out)
{
    kiln_result r = context_create(dev, out);
    if (dev && dev->capture)
        kcap_context_create(dev, out ? *out : NULL, r);
    return r;
}

static kiln_result context_destroy(kiln_context *ctx)
{
    static const char api[] = "kiln_context_destroy";
    if (!ctx)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "context is NULL");
    kiln_device *dev = ctx->dev;
    if (ctx == &dev->immediate)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_CONTEXT_IMMEDIATE, api,
                       "the immediate context is destroyed with its device");
    uint32_t sc = atomic_load_explicit(&ctx->swapchains, memory_order_acquire);
    if (sc)
        return kb_fail(&dev->env, KILN_E_INVALID_CALL, KILN_LOG_CONTEXT_IN_USE, api,
                       "%u swapchain%s still render%s through this context; destroy them first", sc,
                       sc == 1 ? "" : "s", sc == 1 ? "s" : "");
    /* Its maps go first, then its queued work completes; that can only
     * fail when a resource this thread keeps mapped through another
     * context holds the work up (kiln_map): the context stays. */
    kq_unmap_all(&ctx->q);
    kiln_result fr = ka_flush_scene(ctx, api); /* logs its own failure */
    if (fr != KILN_OK)
        return fr;
    if (kq_finish(&ctx->q) != KILN_OK)
        return kb_fail(&dev->env, KILN_E_WOULD_DEADLOCK, KILN_LOG_WOULD_DEADLOCK, api,
                       "its queued work waits for a resource this thread keeps mapped through "
                       "another context; the context stays (its own maps are released)");
    pthread_mutex_lock(&dev->dom->mu);
    if (ctx->prev)
        ctx->prev->next = ctx->next;
    else
        dev->contexts = ctx->next;
    if (ctx->next)
        ctx->next->prev = ctx->prev;
    pthread_mutex_unlock(&dev->dom->mu);
    ka_context_fini(ctx);
    kb_free(&dev->env, ctx, sizeof *ctx);
    return KILN_OK;
}

kiln_result kiln_context_destroy(kiln_context *ctx)
{
    kiln_device *dev = ctx ? ctx->dev : NULL;
    uint32_t id = dev && dev->capture ? kcap_context_destroy_pre(ctx) : 0;
    kiln_result r = context_destroy(ctx);
    if (dev && dev->capture)
        kcap_context_destroy(dev, ctx, id, r);
    return r;
}

kiln_context *kiln_device_immediate_context(kiln_device *dev)
{
    return dev ? &dev->immediate : NULL;
}

uint32_t kiln_device_num_threads(const kiln_device *dev)
{
    return dev ? dev->num_threads : 0;
}

static kiln_result device_get_stats(kiln_device *dev, kiln_device_stats *out)
{
    static const char api[] = "kiln_device_get_stats";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "device is NULL");
    if (!out)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api, "out_stats is NULL");
    kq_device_stats(&dev->queue, out);
    return KILN_OK;
}

kiln_result kiln_device_get_stats(kiln_device *dev, kiln_device_stats *out)
{
    kiln_result r = device_get_stats(dev, out);
    if (dev && dev->capture)
        kcap_device_get_stats(dev, r);
    return r;
}

/* ---- lookups ---- */

kiln_result ka_handle_fail(kiln_device *dev, const char *api, const char *what, kiln_log_id id)
{
    const char *why = id == KILN_LOG_HANDLE_NULL    ? "is 0"
                      : id == KILN_LOG_HANDLE_STALE ? "refers to a destroyed object"
                                                    : "refers to an object of another type";
    return kb_fail(&dev->env, KILN_E_INVALID_HANDLE, id, api, "%s handle %s", what, why);
}

kres_view *ka_get_view(kiln_device *dev, uint32_t id, kres_type type, const char *api,
                       kiln_result *r)
{
    kiln_log_id lid = KILN_LOG_NONE;
    kres_object *o = kres_handles_get(&dev->handles, id, type, type, &lid);
    if (!o) {
        *r = ka_handle_fail(dev, api, "view", lid);
        return NULL;
    }
    kres_view *v = (kres_view *)o;
    if (atomic_load(&v->res->destroyed)) {
        kres_unref(o);
        *r = kb_fail(&dev->env, KILN_E_INVALID_HANDLE, KILN_LOG_VIEW_RESOURCE_DESTROYED, api,
                     "the view's texture has been destroyed");
        return NULL;
    }
    *r = KILN_OK;
    return v;
}
