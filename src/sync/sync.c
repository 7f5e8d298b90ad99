/* Timelines, sync points, fences and waiters (seed 001). */
#define _GNU_SOURCE /* PTHREAD_MUTEX_ADAPTIVE_NP, where the C library has it */
#include "sync.h"

#include <string.h>

/* ---- domain ---- */

ks_domain *ks_domain_create(const kb_env *env)
{
    ks_domain *d = kb_calloc(env, sizeof *d);
    if (!d)
        return NULL;
    atomic_init(&d->refs, 1);
    d->env = *env;
    /* The scheduler's mutex is taken for a few hundred nanoseconds at a
     * time by the producer and the workers: an adaptive mutex spins that
     * long before it sleeps, instead of a futex wait and wake per hand-off. */
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
    int e = pthread_mutex_init(&d->mu, &attr);
    pthread_mutexattr_destroy(&attr);
    if (e != 0) {
        kb_free(env, d, sizeof *d);
        return NULL;
    }
    pthread_cond_init(&d->cv, NULL);
    return d;
}

void ks_domain_ref(ks_domain *d)
{
    atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

void ks_domain_unref(ks_domain *d)
{
    if (d && atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1) {
        kb_env env = d->env;
        pthread_cond_destroy(&d->cv);
        pthread_mutex_destroy(&d->mu);
        kb_free(&env, d, sizeof *d);
    }
}

static size_t waiter_size(uint32_t n)
{
    return sizeof(ks_waiter) + sizeof(ks_wnode) * n;
}

static void fence_unref(ks_fence *f)
{
    kres_unref(&f->base);
}

bool ks_run_deferred(ks_domain *d)
{
    bool released = false;
    if (d->resolved && d->on_resolved) {
        d->on_resolved(d->on_resolved_arg); /* may run commands (SERIAL) */
        released = true;
    }
    while (d->fired || d->garbage) {
        released = true;
        ks_waiter *list = d->fired;
        kres_object *garbage = d->garbage;
        d->fired = NULL;
        d->garbage = NULL;
        pthread_mutex_unlock(&d->mu);
        while (list) {
            ks_waiter *w = list;
            list = w->next_fired;
            w->fn((kiln_fence){w->fence_id}, w->status, w->user);
            fence_unref(w->fence);
            kb_free(&d->env, w, waiter_size(w->nnodes));
        }
        while (garbage) {
            kres_object *o = garbage;
            garbage = o->gc_next;
            kres_unref(o);
        }
        pthread_mutex_lock(&d->mu);
        if (d->resolved && d->on_resolved)
            d->on_resolved(d->on_resolved_arg);
    }
    return released;
}

void ks_unlock(ks_domain *d)
{
    ks_run_deferred(d);
    pthread_mutex_unlock(&d->mu);
}

void ks_unref_locked(ks_domain *d, kres_object *obj)
{
    unsigned n = atomic_load_explicit(&obj->refs, memory_order_relaxed);
    while (n > 1) {
        if (atomic_compare_exchange_weak_explicit(&obj->refs, &n, n - 1, memory_order_acq_rel,
                                                  memory_order_relaxed))
            return;
    }
    obj->gc_next = d->garbage;
    d->garbage = obj;
}

/* ---- waiters ---- */

static void unlink_live(ks_domain *d, ks_waiter *w)
{
    if (w->prev_live)
        w->prev_live->next_live = w->next_live;
    else
        d->live = w->next_live;
    if (w->next_live)
        w->next_live->prev_live = w->prev_live;
    w->next_live = w->prev_live = NULL;
}

static void fire(ks_domain *d, ks_waiter *w, kiln_result status)
{
    unlink_live(d, w);
    w->status = status;
    if (w->kind == KS_WAIT_CALLBACK) {
        w->next_fired = d->fired;
        d->fired = w;
    } else {
        w->next_fired = d->resolved;
        d->resolved = w;
    }
}

/* Removes a waiter's nodes from the points it still waits on. */
static void detach(ks_waiter *w)
{
    for (uint32_t i = 0; i < w->nnodes; i++) {
        if (!w->nodes[i].w)
            continue;
        ks_point *p = w->fence->points[i];
        ks_wnode **it = &p->waiters;
        while (*it && *it != &w->nodes[i])
            it = &(*it)->next;
        if (*it)
            *it = w->nodes[i].next;
        w->nodes[i].w = NULL;
        w->nodes[i].next = NULL;
    }
    w->remaining = 0;
}

static void settle(ks_domain *d, ks_point *p, ks_state state)
{
    p->state = state;
    ks_wnode *n = p->waiters;
    p->waiters = NULL;
    while (n) {
        ks_wnode *next = n->next;
        ks_waiter *w = n->w;
        n->next = NULL;
        n->w = NULL;
        if (w) {
            if (state == KS_ERROR) {
                /* The fence is in error now, whatever its other points do:
                 * as poll and wait already say so, the waiter fires. */
                detach(w);
                fire(d, w, KILN_E_COMMAND_FAILED);
            } else if (--w->remaining == 0) {
                fire(d, w, w->error ? KILN_E_COMMAND_FAILED : KILN_OK);
            }
        }
        n = next;
    }
}

/* ---- timelines ---- */

static void timeline_destroy(kres_object *obj)
{
    ks_timeline *tl = (ks_timeline *)obj;
    ks_domain *d = tl->dom;
    kb_free(&d->env, tl->spans, sizeof(ks_span) * tl->spans_cap);
    /* Nothing can signal it any more: what still waits on it fails. */
    pthread_mutex_lock(&d->mu);
    while (tl->pending) {
        ks_point *p = tl->pending;
        tl->pending = p->next;
        p->next = NULL;
        settle(d, p, KS_ERROR);
        ks_point_unref_locked(p);
    }
    if (d->waiters)
        pthread_cond_broadcast(&d->cv);
    ks_unlock(d);
    kb_free(&d->env, tl, sizeof *tl);
    ks_domain_unref(d);
}

kiln_result ks_timeline_create(ks_domain *d, uint64_t initial, ks_timeline **out)
{
    ks_timeline *tl = kb_calloc(&d->env, sizeof *tl);
    if (!tl)
        return KILN_E_OUT_OF_MEMORY;
    tl->base.type = KRES_TYPE_TIMELINE;
    tl->base.env = &d->env;
    tl->base.destroy = timeline_destroy;
    atomic_init(&tl->base.refs, 1);
    ks_domain_ref(d);
    tl->dom = d;
    tl->value = tl->requested = initial;
    *out = tl;
    return KILN_OK;
}

static bool in_error_span(const ks_timeline *tl, uint64_t v)
{
    for (uint32_t i = 0; i < tl->nspans; i++)
        if (v > tl->spans[i].lo && v <= tl->spans[i].hi)
            return true;
    return false;
}

void ks_timeline_signal_locked(ks_timeline *tl, uint64_t value, bool error)
{
    if (value <= tl->value)
        return;
    if (error) {
        ks_domain *dm = tl->dom;
        if (tl->nspans && tl->spans[tl->nspans - 1].hi == tl->value) {
            tl->spans[tl->nspans - 1].hi = value; /* extends the last span */
        } else {
            if (tl->nspans == tl->spans_cap) {
                uint32_t cap = tl->spans_cap ? tl->spans_cap * 2 : 4;
                ks_span *n = kb_alloc(&dm->env, sizeof(ks_span) * cap);
                if (n) {
                    if (tl->spans)
                        memcpy(n, tl->spans, sizeof(ks_span) * tl->nspans);
                    kb_free(&dm->env, tl->spans, sizeof(ks_span) * tl->spans_cap);
                    tl->spans = n;
                    tl->spans_cap = cap;
                }
            }
            /* Out of memory: the points pending now still settle in error;
             * only a point created later in this range reads as signaled. */
            if (tl->nspans < tl->spans_cap)
                tl->spans[tl->nspans++] = (ks_span){tl->value, value};
        }
    }
    tl->value = value;
    ks_domain *d = tl->dom;
    while (tl->pending && tl->pending->value <= value) {
        ks_point *p = tl->pending;
        tl->pending = p->next;
        p->next = NULL;
        if (d->trace)
            kt_signal(d->trace, tl->base.handle, p->value, kt_point_flow(tl, p->value));
        settle(d, p, error ? KS_ERROR : KS_SIGNALED);
        ks_point_unref_locked(p); /* the pending list's reference */
    }
    if (d->waiters)
        pthread_cond_broadcast(&d->cv);
}

/* ---- points ---- */

ks_point *ks_point_create_locked(ks_timeline *tl, uint64_t value)
{
    ks_point *p = kb_calloc(&tl->dom->env, sizeof *p);
    if (!p)
        return NULL;
    atomic_init(&p->refs, 1);
    p->tl = tl;
    p->dom = tl->dom;
    p->value = value;
    if (value <= tl->value) {
        p->state = in_error_span(tl, value) ? KS_ERROR : KS_SIGNALED;
        return p;
    }
    atomic_fetch_add_explicit(&p->refs, 1, memory_order_relaxed); /* pending list */
    ks_point **it = &tl->pending;
    while (*it && (*it)->value <= value)
        it = &(*it)->next;
    p->next = *it;
    *it = p;
    return p;
}

/* Points are freed only once settled (the pending list holds a reference
 * until then), so a point's last reference never needs its timeline. */
void ks_point_unref_locked(ks_point *p)
{
    if (p && atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
        kb_free(&p->dom->env, p, sizeof *p);
}

/* ---- fences ---- */

static void fence_destroy(kres_object *obj)
{
    ks_fence *f = (ks_fence *)obj;
    ks_domain *d = f->dom;
    pthread_mutex_lock(&d->mu);
    for (uint32_t i = 0; i < f->count; i++)
        ks_point_unref_locked(f->points[i]);
    ks_unlock(d);
    kb_free(&d->env, f, sizeof *f + sizeof(ks_point *) * f->count);
    ks_domain_unref(d);
}

kiln_result ks_fence_create_locked(ks_domain *d, ks_point *const *points, uint32_t count,
                                   ks_fence **out)
{
    ks_fence *f = kb_calloc(&d->env, sizeof *f + sizeof(ks_point *) * count);
    if (!f)
        return KILN_E_OUT_OF_MEMORY;
    f->base.type = KRES_TYPE_FENCE;
    f->base.env = &d->env;
    f->base.destroy = fence_destroy;
    atomic_init(&f->base.refs, 1);
    ks_domain_ref(d);
    f->dom = d;
    /* A fence is a set: the same point twice is kept once. */
    for (uint32_t i = 0; i < count; i++) {
        bool dup = false;
        for (uint32_t j = 0; j < f->count && !dup; j++)
            dup = f->points[j] == points[i];
        if (dup)
            continue;
        atomic_fetch_add_explicit(&points[i]->refs, 1, memory_order_relaxed);
        f->points[f->count++] = points[i];
    }
    *out = f;
    return KILN_OK;
}

ks_state ks_fence_state_locked(const ks_fence *f)
{
    ks_state s = KS_SIGNALED;
    for (uint32_t i = 0; i < f->count; i++) {
        if (f->points[i]->state == KS_ERROR)
            return KS_ERROR;
        if (f->points[i]->state == KS_ACTIVE)
            s = KS_ACTIVE;
    }
    return s;
}

ks_waiter *ks_wait_locked(ks_fence *f, ks_waiter_kind kind)
{
    ks_domain *d = f->dom;
    ks_waiter *w = kb_calloc(&d->env, waiter_size(f->count));
    if (!w)
        return NULL;
    w->kind = kind;
    w->nnodes = f->count;
    kres_ref(&f->base);
    w->fence = f;
    w->next_live = d->live;
    if (d->live)
        d->live->prev_live = w;
    d->live = w;
    for (uint32_t i = 0; i < f->count; i++) {
        if (f->points[i]->state == KS_ERROR)
            w->error = true;
    }
    for (uint32_t i = 0; i < f->count && !w->error; i++) {
        ks_point *p = f->points[i];
        if (p->state != KS_ACTIVE)
            continue;
        w->nodes[i].w = w;
        w->nodes[i].next = p->waiters;
        p->waiters = &w->nodes[i];
        w->remaining++;
    }
    if (d->lost)
        ks_domain_lose_locked(d);
    else if (w->remaining == 0)
        fire(d, w, w->error ? KILN_E_COMMAND_FAILED : KILN_OK);
    return w;
}

void ks_domain_lose_locked(ks_domain *d)
{
    d->lost = true;
    while (d->live) {
        ks_waiter *w = d->live;
        detach(w);
        fire(d, w, KILN_E_DEVICE_LOST);
    }
    pthread_cond_broadcast(&d->cv);
}

void ks_waiter_free_locked(ks_waiter *w)
{
    ks_domain *d = w->fence->dom;
    ks_unref_locked(d, &w->fence->base);
    kb_free(&d->env, w, waiter_size(w->nnodes));
}
