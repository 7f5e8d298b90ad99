/* CPU Map/Unmap against queued work. The CPU takes a node in the storage's
 * lock list like any command: READ waits for earlier writers, WRITE for
 * earlier readers and writers, and commands queued after the Map wait for
 * Unmap. WRITE_DISCARD swaps in new storage and NO_OVERWRITE takes the
 * write grant beside the readers, so neither ever waits. */
#include "queue.h"
#include "internal.h"

#include <string.h>

static void link_mapped(kq_context *c, kres_resource *res, kiln_map_type type)
{
    kres_ref(&res->base);
    res->map.owner = c;
    res->map.no_overwrite = type == KILN_MAP_WRITE_NO_OVERWRITE;
    if (res->map.no_overwrite)
        atomic_fetch_add_explicit(&c->no_overwrite_maps, 1, memory_order_relaxed);
    res->map.next = c->mapped;
    res->map.prev = NULL;
    if (c->mapped)
        c->mapped->map.prev = res;
    c->mapped = res;
    res->map.thread = pthread_self();
    res->map.dev_next = c->dev->mapped;
    res->map.dev_prev = NULL;
    if (c->dev->mapped)
        c->dev->mapped->map.dev_prev = res;
    c->dev->mapped = res;
    c->cpu_maps++;
    c->dev->cpu_maps++;
}

/* Drops the CPU grant of a resource with no subresource mapped any more. */
static void release_cpu(kq_device *q, kres_resource *res)
{
    kq_context *c = res->map.owner;
    kq_node *n = &res->map.node;
    kq_release(q, n);
    kres_storage_unref(n->st);
    n->st = NULL;
    if (res->map.prev)
        res->map.prev->map.next = res->map.next;
    else
        c->mapped = res->map.next;
    if (res->map.next)
        res->map.next->map.prev = res->map.prev;
    res->map.next = res->map.prev = NULL;
    if (res->map.dev_prev)
        res->map.dev_prev->map.dev_next = res->map.dev_next;
    else
        q->mapped = res->map.dev_next;
    if (res->map.dev_next)
        res->map.dev_next->map.dev_prev = res->map.dev_prev;
    res->map.dev_next = res->map.dev_prev = NULL;
    res->map.owner = NULL;
    if (res->map.no_overwrite)
        atomic_fetch_sub_explicit(&c->no_overwrite_maps, 1, memory_order_relaxed);
    res->map.no_overwrite = 0;
    c->cpu_maps--;
    q->cpu_maps--;
    if (q->dom->waiters)
        pthread_cond_broadcast(&q->dom->cv);
    kres_unref(&res->base);
}

static void fill_out(kres_resource *res, uint32_t sub, kiln_mapped_subresource *out)
{
    const kres_subresource *s = &res->subs[sub];
    out->data = res->map.node.st->data + s->offset;
    out->row_pitch = s->row_pitch;
    out->depth_pitch = (uint32_t)s->depth_pitch; /* the whole subresource but for 3D */
}

kiln_result kq_map(kq_context *c, kres_resource *res, uint32_t sub, kiln_map_type type,
                   bool do_not_wait, kiln_mapped_subresource *out, const kres_storage **out_retired,
                   kiln_log_id *out_id)
{
    kq_device *q = c->dev;
    kres_storage *fresh = NULL;
    *out_retired = NULL;
    if (type == KILN_MAP_WRITE_DISCARD) {
        fresh = kres_storage_create(q->env, res->storage_size);
        if (!fresh) {
            *out_id = KILN_LOG_OUT_OF_MEMORY;
            return KILN_E_OUT_OF_MEMORY;
        }
    }
    int mode = type == KILN_MAP_READ ? KQ_READ : KQ_WRITE;
    kres_map_state *m = &res->map;
    kq_node *n = &m->node;
    kiln_result r = KILN_OK;

    pthread_mutex_lock(&q->dom->mu);
    kq_flush_locked(c); /* the Map follows this context's batch */
    if (atomic_load(&res->destroyed)) {
        *out_id = KILN_LOG_HANDLE_STALE;
        r = KILN_E_INVALID_HANDLE;
        goto out;
    }
    if (m->mapped[sub]) {
        *out_id = KILN_LOG_MAP_ALREADY_MAPPED;
        r = KILN_E_INVALID_CALL;
        goto out;
    }
    if (m->mapped_count || m->waiting) {
        /* Another subresource is mapped (or being mapped by another
         * thread): share its grant if it covers this access. */
        /* The grant stays the first map's context's and thread's (the
         * deadlock checks go by them): only they may share it. */
        if (m->waiting || (mode == KQ_WRITE && n->mode == KQ_READ) || fresh ||
            type == KILN_MAP_WRITE_NO_OVERWRITE || m->owner != c ||
            !pthread_equal(m->thread, pthread_self())) {
            *out_id = KILN_LOG_MAP_ACCESS_CONFLICT;
            r = KILN_E_INVALID_CALL;
            goto out;
        }
        /* Commands queued since the first Map that conflict with it wait in
         * the list behind the CPU's grant. In call order they come before
         * this Map, which would have to wait for them, and they for the
         * first Unmap: only this thread could resolve that. */
        if (n->st->lock.head) {
            *out_id = KILN_LOG_WOULD_DEADLOCK;
            r = KILN_E_WOULD_DEADLOCK;
            goto out;
        }
        m->mapped[sub] = (uint8_t)type;
        m->mapped_count++;
        fill_out(res, sub, out);
        goto out;
    }

    /* Commands this context queued behind a server wait come before this
     * Map in its stream: a Map that touches one of them waits for the
     * wait to resolve first. */
    if (kq_deferred_uses(c, res)) {
        if (do_not_wait) {
            r = KILN_E_WAS_STILL_DRAWING;
            goto out;
        }
        atomic_fetch_add_explicit(&q->stats.waits_map, 1, memory_order_relaxed);
        uint64_t t0 = q->trace ? kt_now() : 0;
        while (kq_deferred_uses(c, res) && r == KILN_OK)
            r = kq_wait_progress(q, c);
        kq_trace_wait(q, KT_WAIT_MAP_CONFLICT, t0, res->base.handle);
        if (r != KILN_OK) {
            *out_id = KILN_LOG_WOULD_DEADLOCK;
            goto out;
        }
    }

    memset(n, 0, sizeof *n);
    n->res = res;
    n->mode = (uint8_t)mode;
    if (fresh) {
        kres_storage *old = res->current;
        res->current = fresh;
        fresh = NULL;
        *out_retired = old;
        kres_storage_unref(old); /* queued readers keep their own refs */
        atomic_fetch_add_explicit(&q->stats.renames, 1, memory_order_relaxed);
    }
    n->st = res->current;
    kres_storage_ref(n->st);
    kq_lock *lock = &n->st->lock;

    if (type == KILN_MAP_WRITE_DISCARD || type == KILN_MAP_WRITE_NO_OVERWRITE) {
        /* DYNAMIC storage is never written by commands, so nothing waits in
         * its list while it is unmapped: the grant is immediate. After a
         * DISCARD nobody else uses the new storage; after NO_OVERWRITE the
         * app promises to leave the readers' bytes alone. */
        lock->writers++;
        n->state = KQ_NODE_GRANTED;
    } else {
        kq_append(lock, n);
        kq_grant(q, lock);
        if (n->state != KQ_NODE_GRANTED) {
            if (do_not_wait) {
                kq_unlink(q, lock, n);
                r = KILN_E_WAS_STILL_DRAWING;
            } else {
                atomic_fetch_add_explicit(&q->stats.waits_map, 1, memory_order_relaxed);
                uint64_t t0 = q->trace ? kt_now() : 0;
                m->waiting = 1;
                while (n->state != KQ_NODE_GRANTED) {
                    r = kq_wait_progress(q, c);
                    if (r != KILN_OK) {
                        *out_id = KILN_LOG_WOULD_DEADLOCK;
                        kq_unlink(q, lock, n);
                        break;
                    }
                }
                m->waiting = 0;
                kq_trace_wait(q, KT_WAIT_MAP_CONFLICT, t0, res->base.handle);
            }
            if (r != KILN_OK) {
                kres_storage_unref(n->st);
                n->st = NULL;
                goto out;
            }
        }
    }

    link_mapped(c, res, type);
    if (atomic_load(&res->destroyed)) {
        /* Destroyed by another thread while this Map waited. */
        release_cpu(q, res);
        *out_id = KILN_LOG_HANDLE_STALE;
        r = KILN_E_INVALID_HANDLE;
        goto out;
    }
    m->mapped[sub] = (uint8_t)type;
    m->mapped_count = 1;
    fill_out(res, sub, out);
out:
    ks_unlock(q->dom);
    if (fresh)
        kres_storage_unref(fresh);
    return r;
}

kiln_result kq_unmap(kq_context *c, kres_resource *res, uint32_t sub)
{
    kq_device *q = c->dev;
    kiln_result r = KILN_OK;
    pthread_mutex_lock(&q->dom->mu);
    if (!res->map.mapped[sub]) {
        r = KILN_E_INVALID_CALL;
    } else {
        /* A written map changes the bytes a backend may have copied. */
        if (res->map.mapped[sub] != KILN_MAP_READ)
            atomic_fetch_add_explicit(&res->map.node.st->gen, 1, memory_order_release);
        res->map.mapped[sub] = 0;
        if (--res->map.mapped_count == 0)
            release_cpu(q, res);
        kq_drain_serial(q);
    }
    ks_unlock(q->dom);
    return r;
}

static void unmap_everything(kq_device *q, kres_resource *res)
{
    if (!res->map.mapped_count)
        return;
    memset(res->map.mapped, 0, res->num_subresources);
    res->map.mapped_count = 0;
    release_cpu(q, res);
}

void kq_resource_destroyed(kq_device *q, kres_resource *res)
{
    pthread_mutex_lock(&q->dom->mu);
    unmap_everything(q, res);
    kq_drain_serial(q);
    ks_unlock(q->dom);
}

void kq_unmap_all(kq_context *c)
{
    kq_device *q = c->dev;
    pthread_mutex_lock(&q->dom->mu);
    while (c->mapped)
        unmap_everything(q, c->mapped);
    kq_drain_serial(q);
    ks_unlock(q->dom);
}
