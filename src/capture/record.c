/*
 * The capture writer: kiln_capture_begin / end / frame, the file and its
 * buffer, and the state a capture needs beyond each call's arguments.
 *
 * - Ids: contexts and swapchains are pointers, which a file cannot hold;
 *   the writer numbers them (the immediate context is 1). Handles are
 *   recorded as the live device gave them.
 * - Mapped bytes: a Map that may write is remembered (where the bytes are,
 *   how many rows); its Unmap records what the CPU wrote. For a DYNAMIC
 *   resource the writer keeps a shadow of its contents (DYNAMIC storage is
 *   written only through maps, so the shadow is exact) and records only
 *   the byte ranges that changed: against zeros after WRITE_DISCARD (new
 *   storage is zeroed), against the shadow after WRITE and
 *   WRITE_NO_OVERWRITE. STAGING maps record every row.
 * - Buffering: records go through a 256 KiB buffer to the file; it is
 *   written out when full, at every frame mark and present (a crash loses
 *   at most the frame being recorded), and at end.
 *
 * One mutex guards everything; records are written in the order their
 * calls took it. Memory comes from the device's allocator.
 */
#include "../api/api.h"
#include "capture.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (256u << 10)

_Thread_local int kcap_suppressed;

typedef struct ptr_id {
    const void *ptr;
    uint32_t id;
} ptr_id;

typedef struct map_entry {
    /* ctx: the context whose Map holds the resource's grant (the first of
     * the resource's maps still open), which unmaps them all when it is
     * destroyed, as kiln does. */
    uint32_t ctx, res, sub;
    kiln_map_type type;
    const uint8_t *data;
    uint32_t row_pitch, row_bytes, rows;
    bool dynamic;
} map_entry;

typedef struct shadow {
    uint32_t res;
    uint8_t *bytes;
    uint64_t size;
} shadow;

/* A growable array of T in the device's memory. */
#define ARRAY(T)                                                                                   \
    struct {                                                                                       \
        T *v;                                                                                      \
        uint32_t n, cap;                                                                           \
    }

typedef struct kcap_writer {
    pthread_mutex_t mu;
    kiln_device *dev; /* valid while active (a capture ends before its device goes) */
    kb_env env;       /* the device's allocator and logger, kept for the writer's own end */
    /* References: the device's, and one per client wait in progress (a
     * wait may return after its device was destroyed: kcap_pin). */
    atomic_uint refs;
    bool active; /* between begin and end */
    bool failed; /* a write failed: records are dropped until end */
    FILE *f;
    uint8_t *buf;
    size_t pos;
    ARRAY(ptr_id) contexts;
    ARRAY(ptr_id) swapchains;
    ARRAY(map_entry) maps;
    ARRAY(shadow) shadows;
    uint32_t next_context, next_swapchain;
    /* Unmap scratch: the tight bytes and the changed ranges. */
    uint8_t *tight;
    size_t tight_cap;
    uint64_t *ranges;
    uint32_t ranges_cap;
} kcap_writer;

/* Makes room for one more element; false on out of memory. */
static bool grow(kcap_writer *w, void **v, uint32_t n, uint32_t *cap, size_t elem)
{
    if (n < *cap)
        return true;
    uint32_t c = *cap ? *cap * 2 : 8;
    void *nv = kb_alloc(&w->env, elem * c);
    if (!nv)
        return false;
    if (n)
        memcpy(nv, *v, elem * n);
    kb_free(&w->env, *v, elem * *cap);
    *v = nv;
    *cap = c;
    return true;
}

#define PUSH(w, arr) grow((w), (void **)&(arr).v, (arr).n, &(arr).cap, sizeof *(arr).v)
#define FREE_ARRAY(w, arr)                                                                         \
    do {                                                                                           \
        kb_free(&(w)->env, (arr).v, sizeof *(arr).v *(arr).cap);                              \
        (arr).v = NULL;                                                                            \
        (arr).n = (arr).cap = 0;                                                                   \
    } while (0)

/* ---- the file ---- */

static void write_failed(kcap_writer *w, const char *why)
{
    if (w->failed)
        return;
    w->failed = true;
    kb_log(&w->env, KILN_LOG_LEVEL_ERROR, KILN_LOG_CAPTURE_WRITE_FAILED, "kiln capture",
           "%s (%s): no more calls are recorded", why, strerror(errno));
}

static void flush_buffer(kcap_writer *w)
{
    if (w->pos && !w->failed && fwrite(w->buf, 1, w->pos, w->f) != w->pos)
        write_failed(w, "writing the capture file failed");
    w->pos = 0;
}

static void put(void *user, const void *bytes, size_t n)
{
    kcap_writer *w = user;
    if (w->failed)
        return;
    if (n > BUF_SIZE - w->pos)
        flush_buffer(w);
    if (n >= BUF_SIZE) {
        if (!w->failed && fwrite(bytes, 1, n, w->f) != n)
            write_failed(w, "writing the capture file failed");
        return;
    }
    memcpy(w->buf + w->pos, bytes, n);
    w->pos += n;
}

void kcap_emit(kcap_writer *w, const kcap_call *c)
{
    if (w->failed)
        return;
    kcap_encode(c, put, w);
    if (c->op == KCAP_OP_FRAME || c->op == KCAP_OP_SWAPCHAIN_PRESENT) {
        flush_buffer(w);
        if (!w->failed && fflush(w->f) != 0)
            write_failed(w, "writing the capture file failed");
    }
}

/* ---- locking ---- */

kcap_writer *kcap_lock(kiln_device *dev)
{
    if (kcap_suppressed)
        return NULL;
    kcap_writer *w = atomic_load(&dev->capture);
    if (!w)
        return NULL;
    pthread_mutex_lock(&w->mu);
    if (!w->active) { /* ended meanwhile */
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    return w;
}

void kcap_unlock(kcap_writer *w) { pthread_mutex_unlock(&w->mu); }

kcap_writer *kcap_pin(kiln_device *dev)
{
    kcap_writer *w = kcap_suppressed ? NULL : atomic_load(&dev->capture);
    if (w)
        atomic_fetch_add(&w->refs, 1);
    return w;
}

static void free_writer(kcap_writer *w)
{
    kb_env env = w->env;
    pthread_mutex_destroy(&w->mu);
    kb_free(&env, w->buf, BUF_SIZE);
    kb_free(&env, w, sizeof *w);
}

void kcap_unpin(kcap_writer *w)
{
    if (atomic_fetch_sub(&w->refs, 1) == 1)
        free_writer(w);
}

kcap_writer *kcap_lock_pinned(kcap_writer *w)
{
    pthread_mutex_lock(&w->mu);
    if (!w->active) {
        pthread_mutex_unlock(&w->mu);
        return NULL;
    }
    return w;
}

void kcap_warn(kcap_writer *w, kiln_log_id id, const char *api, const char *detail)
{
    kb_log(&w->env, KILN_LOG_LEVEL_WARNING, id, api, "%s", detail);
}

/* ---- context and swapchain ids ---- */

static uint32_t find_id(const ptr_id *v, uint32_t n, const void *p)
{
    for (uint32_t i = n; i-- > 0;)
        if (v[i].ptr == p)
            return v[i].id;
    return 0;
}

static void remove_id(ptr_id *v, uint32_t *n, const void *p)
{
    for (uint32_t i = 0; i < *n; i++)
        if (v[i].ptr == p) {
            v[i] = v[--*n];
            return;
        }
}

uint32_t kcap_context_id(kcap_writer *w, kiln_context *ctx)
{
    if (ctx == &w->dev->immediate)
        return 1;
    return find_id(w->contexts.v, w->contexts.n, ctx);
}

uint32_t kcap_context_add(kcap_writer *w, kiln_context *ctx)
{
    uint32_t id = w->next_context++;
    if (PUSH(w, w->contexts))
        w->contexts.v[w->contexts.n++] = (ptr_id){ctx, id};
    return id;
}

void kcap_context_remove(kcap_writer *w, kiln_context *ctx)
{
    remove_id(w->contexts.v, &w->contexts.n, ctx);
}

uint32_t kcap_swapchain_id(kcap_writer *w, kiln_swapchain *sc)
{
    return find_id(w->swapchains.v, w->swapchains.n, sc);
}

uint32_t kcap_swapchain_add(kcap_writer *w, kiln_swapchain *sc)
{
    uint32_t id = w->next_swapchain++;
    if (PUSH(w, w->swapchains))
        w->swapchains.v[w->swapchains.n++] = (ptr_id){sc, id};
    return id;
}

void kcap_swapchain_remove(kcap_writer *w, kiln_swapchain *sc)
{
    remove_id(w->swapchains.v, &w->swapchains.n, sc);
}

/* ---- DYNAMIC shadows ---- */

static shadow *find_shadow(kcap_writer *w, uint32_t res)
{
    for (uint32_t i = 0; i < w->shadows.n; i++)
        if (w->shadows.v[i].res == res)
            return &w->shadows.v[i];
    return NULL;
}

void kcap_shadow_add(kcap_writer *w, uint32_t res, const kcap_rows *init)
{
    size_t size = (size_t)init->row_bytes * init->rows;
    if (!PUSH(w, w->shadows))
        return; /* without a shadow, maps record every row */
    uint8_t *b = kb_calloc(&w->env, size ? size : 1);
    if (!b)
        return;
    if (init->data)
        for (uint32_t y = 0; y < init->rows; y++)
            memcpy(b + (size_t)y * init->row_bytes, init->data + (size_t)y * init->pitch,
                   init->row_bytes);
    w->shadows.v[w->shadows.n++] = (shadow){res, b, size};
}

void kcap_shadow_remove(kcap_writer *w, uint32_t res)
{
    shadow *s = find_shadow(w, res);
    if (!s)
        return;
    kb_free(&w->env, s->bytes, (size_t)s->size ? (size_t)s->size : 1);
    *s = w->shadows.v[--w->shadows.n];
}

/* ---- mapped ranges ---- */

void kcap_map_add(kcap_writer *w, uint32_t ctx, uint32_t res, uint32_t sub, kiln_map_type type,
                  const kiln_mapped_subresource *m, uint32_t row_bytes, uint32_t rows, bool dynamic)
{
    for (uint32_t i = 0; i < w->maps.n; i++)
        if (w->maps.v[i].res == res)
            ctx = w->maps.v[i].ctx; /* another subresource is mapped: its grant */
    if (!PUSH(w, w->maps))
        return;
    w->maps.v[w->maps.n++] =
        (map_entry){ctx, res, sub, type, m->data, m->row_pitch, row_bytes, rows, dynamic};
}

static bool reserve_ranges(kcap_writer *w, uint32_t n)
{
    if (n <= w->ranges_cap)
        return true;
    uint32_t cap = w->ranges_cap ? w->ranges_cap : 64;
    while (cap < n)
        cap *= 2;
    uint64_t *r = kb_alloc(&w->env, sizeof *r * 2 * cap);
    if (!r)
        return false;
    if (w->ranges_cap)
        memcpy(r, w->ranges, sizeof *r * 2 * w->ranges_cap);
    kb_free(&w->env, w->ranges, sizeof *r * 2 * w->ranges_cap);
    w->ranges = r;
    w->ranges_cap = cap;
    return true;
}

/* Byte ranges where `cur` differs from `base` (NULL: zeros); runs closer
 * than GAP bytes are merged (a range costs a few bytes of framing). Returns
 * the count, or UINT32_MAX on out of memory. */
#define GAP 16u

static uint32_t diff(kcap_writer *w, const uint8_t *cur, const uint8_t *base, size_t n)
{
    uint32_t count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && cur[i] == (base ? base[i] : 0))
            i++;
        if (i == n)
            break;
        size_t start = i, last = i;
        for (; i < n && i - last <= GAP; i++)
            if (cur[i] != (base ? base[i] : 0))
                last = i;
        if (!reserve_ranges(w, count + 1))
            return UINT32_MAX;
        w->ranges[2 * count] = start;
        w->ranges[2 * count + 1] = last + 1 - start;
        count++;
        i = last + 1;
    }
    return count;
}

/* Writes the Unmap record of map `e` (by context `ctx`) and forgets it. */
static void emit_unmap(kcap_writer *w, uint32_t ctx, map_entry *e)
{
    kcap_call c = {.op = KCAP_OP_UNMAP, .ctx = ctx};
    c.u.unmap.res = e->res;
    c.u.unmap.sub = e->sub;
    c.u.unmap.kind = e->type == KILN_MAP_READ ? KCAP_UNMAP_NONE : KCAP_UNMAP_FULL;
    c.u.unmap.full = (kcap_rows){e->row_bytes, e->rows, e->data, e->row_pitch};
    size_t size = (size_t)e->row_bytes * e->rows;
    shadow *s = e->dynamic && e->type != KILN_MAP_READ ? find_shadow(w, e->res) : NULL;
    if (s && s->size == size) {
        /* Tight copy of what the CPU left in the mapped bytes. */
        if (size > w->tight_cap) {
            uint8_t *t = kb_alloc(&w->env, size);
            if (t) {
                kb_free(&w->env, w->tight, w->tight_cap);
                w->tight = t;
                w->tight_cap = size;
            }
        }
        if (size > w->tight_cap) {
            kcap_shadow_remove(w, e->res); /* out of memory: every row from now on */
        } else {
            for (uint32_t y = 0; y < e->rows; y++)
                memcpy(w->tight + (size_t)y * e->row_bytes, e->data + (size_t)y * e->row_pitch,
                       e->row_bytes);
            uint32_t n =
                diff(w, w->tight, e->type == KILN_MAP_WRITE_DISCARD ? NULL : s->bytes, size);
            if (n != UINT32_MAX) {
                c.u.unmap.kind = KCAP_UNMAP_RANGES;
                c.u.unmap.ranges = (kcap_ranges){
                    .count = n, .tight_size = size, .list = w->ranges, .base = w->tight};
            }
            memcpy(s->bytes, w->tight, size);
        }
    }
    kcap_emit(w, &c);
    *e = w->maps.v[--w->maps.n];
}

bool kcap_map_emit_unmap(kcap_writer *w, uint32_t ctx, uint32_t res, uint32_t sub)
{
    for (uint32_t i = 0; i < w->maps.n; i++)
        if (w->maps.v[i].res == res && w->maps.v[i].sub == sub) {
            emit_unmap(w, ctx, &w->maps.v[i]);
            return true;
        }
    return false;
}

void kcap_map_emit_all(kcap_writer *w, uint32_t res, uint32_t ctx)
{
    for (uint32_t i = 0; i < w->maps.n;) {
        map_entry *e = &w->maps.v[i];
        if (res ? e->res == res : e->ctx == ctx)
            emit_unmap(w, e->ctx, e);
        else
            i++;
    }
}

/* ---- begin, end, frame ---- */

static kcap_writer *writer(kiln_device *dev)
{
    pthread_mutex_lock(&dev->dom->mu);
    kcap_writer *w = dev->capture_writer;
    if (!w && (w = kb_calloc(&dev->env, sizeof *w)) != NULL) {
        w->buf = kb_alloc(&dev->env, BUF_SIZE);
        if (!w->buf) {
            kb_free(&dev->env, w, sizeof *w);
            w = NULL;
        } else {
            pthread_mutex_init(&w->mu, NULL);
            w->dev = dev;
            w->env = dev->env;
            atomic_init(&w->refs, 1);
            dev->capture_writer = w;
        }
    }
    pthread_mutex_unlock(&dev->dom->mu);
    return w;
}

/* What a capture starts from: the device, then each context's state. */
static void emit_start(kcap_writer *w)
{
    kiln_device *dev = w->dev;
    uint8_t header[KCAP_HEADER_SIZE];
    kcap_encode_header(header);
    put(w, header, sizeof header);
    kcap_call c = {.op = KCAP_OP_DEVICE};
    c.u.device.backend =
        dev->queue.backend->caps & KQ_BACKEND_NEEDS_GLSL ? KILN_BACKEND_OSMESA : KILN_BACKEND_SOFT;
    c.u.device.exec_mode = dev->serial ? KILN_EXEC_SERIAL : KILN_EXEC_ASYNC;
    c.u.device.num_threads = dev->num_threads;
    c.u.device.ring_capacity = dev->ring_capacity;
    c.u.device.transfer_size = dev->transfer_size;
    kcap_emit(w, &c);

    /* Ids first (under the device's lock, which guards its context
     * list), then each context's state. */
    pthread_mutex_lock(&dev->dom->mu);
    for (kiln_context *x = dev->contexts; x; x = x->next)
        kcap_context_add(w, x);
    pthread_mutex_unlock(&dev->dom->mu);
    for (uint32_t i = 0; i <= w->contexts.n; i++) {
        kiln_context *ctx = i == 0 ? &dev->immediate : (kiln_context *)w->contexts.v[i - 1].ptr;
        ka_scalar_state s;
        ka_pipeline_scalars(ctx, &s);
        c = (kcap_call){.op = KCAP_OP_CONTEXT_STATE};
        c.ctx = i == 0 ? 1 : w->contexts.v[i - 1].id;
        c.u.state.topology = s.topology;
        c.u.state.viewport_set = s.viewport_set;
        c.u.state.viewport = s.viewport;
        c.u.state.scissor = s.scissor;
        memcpy(c.u.state.blend_factor, s.blend_factor, sizeof s.blend_factor);
        c.u.state.stencil_ref = s.stencil_ref;
        c.u.state.index_format = s.index_format;
        c.u.state.index_offset = s.index_offset;
        memcpy(c.u.state.vb_stride, s.vb_stride, sizeof s.vb_stride);
        memcpy(c.u.state.vb_offset, s.vb_offset, sizeof s.vb_offset);
        kcap_emit(w, &c);
    }
}

/* Objects other than the contexts' own timelines. */
static uint32_t app_objects(kiln_device *dev)
{
    uint32_t timelines = 1;
    pthread_mutex_lock(&dev->dom->mu);
    for (kiln_context *x = dev->contexts; x; x = x->next)
        timelines++;
    pthread_mutex_unlock(&dev->dom->mu);
    uint32_t live = kres_handles_live(&dev->handles);
    return live > timelines ? live - timelines : 0;
}

kiln_result kiln_capture_begin(kiln_device *dev, const char *path)
{
    static const char api[] = "kiln_capture_begin";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "device is NULL");
    if (!path || !*path)
        return kb_fail(&dev->env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "path is NULL or empty");
    kcap_writer *w = writer(dev);
    if (!w)
        return kb_fail(&dev->env, KILN_E_OUT_OF_MEMORY, KILN_LOG_OUT_OF_MEMORY, api,
                       "capture writer");
    pthread_mutex_lock(&w->mu);
    kiln_result r = KILN_OK;
    uint32_t objects;
    if (w->active) {
        r = kb_fail(&dev->env, KILN_E_INVALID_CALL, KILN_LOG_CAPTURE_ACTIVE, api,
                    "end the running capture first (kiln_capture_end)");
    } else if ((objects = app_objects(dev)) != 0) {
        r = kb_fail(&dev->env, KILN_E_INVALID_CALL, KILN_LOG_CAPTURE_LIVE_OBJECTS, api,
                    "%u objects exist: the capture would miss their creation (begin before "
                    "creating objects, or set KILN_CAPTURE)",
                    objects);
    } else if (!(w->f = fopen(path, "wb"))) {
        r = kb_fail(&dev->env, KILN_E_IO, KILN_LOG_CAPTURE_OPEN_FAILED, api, "%s: %s", path,
                    strerror(errno));
    } else {
        w->failed = false;
        w->pos = 0;
        w->next_context = 2;
        w->next_swapchain = 1;
        emit_start(w);
        w->active = true;
        atomic_store(&dev->capture, w);
    }
    pthread_mutex_unlock(&w->mu);
    return r;
}

/* Ends a running capture (w->mu held): END, the file closed, state freed.
 * Returns false if anything could not be written. */
static bool end_locked(kcap_writer *w)
{
    kcap_emit(w, &(kcap_call){.op = KCAP_OP_END});
    flush_buffer(w);
    if (fclose(w->f) != 0)
        write_failed(w, "closing the capture file failed");
    w->f = NULL;
    w->active = false;
    atomic_store(&w->dev->capture, NULL);
    while (w->shadows.n)
        kcap_shadow_remove(w, w->shadows.v[0].res);
    FREE_ARRAY(w, w->shadows);
    FREE_ARRAY(w, w->maps);
    FREE_ARRAY(w, w->contexts);
    FREE_ARRAY(w, w->swapchains);
    kb_free(&w->env, w->tight, w->tight_cap);
    kb_free(&w->env, w->ranges, sizeof *w->ranges * 2 * w->ranges_cap);
    w->tight = NULL;
    w->ranges = NULL;
    w->tight_cap = 0;
    w->ranges_cap = 0;
    return !w->failed;
}

kiln_result kiln_capture_end(kiln_device *dev)
{
    static const char api[] = "kiln_capture_end";
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER, api,
                       "device is NULL");
    kcap_writer *w = dev->capture_writer;
    if (w)
        pthread_mutex_lock(&w->mu);
    if (!w || !w->active) {
        if (w)
            pthread_mutex_unlock(&w->mu);
        return kb_fail(&dev->env, KILN_E_INVALID_CALL, KILN_LOG_CAPTURE_NOT_ACTIVE, api,
                       "no capture is running on this device");
    }
    bool ok = end_locked(w);
    pthread_mutex_unlock(&w->mu);
    if (!ok)
        return kb_fail(&dev->env, KILN_E_IO, KILN_LOG_CAPTURE_WRITE_FAILED, api,
                       "the capture file is incomplete");
    return KILN_OK;
}

kiln_result kiln_capture_frame(kiln_device *dev)
{
    if (!dev)
        return kb_fail(&ka_stderr_env, KILN_E_INVALID_ARG, KILN_LOG_NULL_POINTER,
                       "kiln_capture_frame", "device is NULL");
    kcap_frame(dev);
    return KILN_OK;
}

/* ---- device lifetime ---- */

void kcap_device_created(kiln_device *dev)
{
    const char *env = getenv("KILN_CAPTURE");
    if (!env || !*env)
        return;
    /* "%u": the device's number in this process. */
    static atomic_uint devices;
    unsigned number = atomic_fetch_add(&devices, 1) + 1;
    char path[4096];
    const char *u = strstr(env, "%u");
    if (u && strlen(env) < sizeof path - 16)
        snprintf(path, sizeof path, "%.*s%u%s", (int)(u - env), env, number, u + 2);
    else
        snprintf(path, sizeof path, "%s", env);
    kiln_capture_begin(dev, path); /* a failure is logged; the device works on */
}

void kcap_device_destroyed(kiln_device *dev)
{
    kcap_writer *w = dev->capture_writer;
    if (w) {
        pthread_mutex_lock(&w->mu);
        if (w->active)
            end_locked(w);
        pthread_mutex_unlock(&w->mu);
        dev->capture_writer = NULL;
        kcap_unpin(w); /* freed now, or by the last wait still pinning it */
    }
    kcap_registry_free(dev);
}
