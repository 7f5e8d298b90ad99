/*
 * sync: timelines, sync points and fences (seed 001), and the domain that
 * owns the one mutex shared with the queue (seed 004's streams wait on them).
 *
 * Contract:
 * - A ks_domain is reference counted and outlives its device while any
 *   timeline, fence or waiting thread still holds it: a thread blocked in a
 *   fence wait when the device is destroyed wakes up, sees `lost`, and
 *   returns KILN_E_DEVICE_LOST without touching the device.
 * - Everything below is guarded by domain->mu (also the queue's scheduler
 *   mutex), except reference counts, which are atomic.
 * - A timeline's value only grows. Signaling value v settles every pending
 *   sync point with value <= v: signaled, or error if the signal carries an
 *   error. A point created at or below the current value is settled at once
 *   (error if its value falls in a recorded error span).
 * - A waiter needs every point of one fence. When its last point settles it
 *   is put on the domain's fire list; the queue resolves server waits there
 *   and calls async callbacks after releasing the mutex (ks_unlock).
 */
#ifndef KILN_SYNC_H
#define KILN_SYNC_H

#include "../resources/resources.h"
#include "../trace/trace.h"

typedef enum ks_state { KS_ACTIVE = 0, KS_SIGNALED, KS_ERROR } ks_state;

struct ks_waiter;
struct kq_cmd;

typedef struct ks_domain {
    atomic_uint refs;
    pthread_mutex_t mu;
    pthread_cond_t cv;         /* every wait on progress or on a fence */
    uint32_t waiters;          /* threads in pthread_cond_wait on cv */
    bool lost;                 /* device destroyed: waits return DEVICE_LOST */
    kb_env env;                /* copy: valid after the device is gone */
    struct ks_waiter *live;    /* every unfired waiter (for device loss) */
    struct ks_waiter *fired;   /* fired async callbacks not yet called */
    struct ks_waiter *resolved;/* fired server waits for the queue */
    kres_object *garbage;      /* last references dropped under the mutex */
    /* Called (mutex held) whenever `resolved` is not empty as the mutex is
     * released: the queue moves the commands behind those waits. */
    void (*on_resolved)(void *arg);
    void *on_resolved_arg;
    kt_tracer *trace;          /* the device's timeline while it lives, or NULL */
} ks_domain;

ks_domain *ks_domain_create(const kb_env *env);
void ks_domain_ref(ks_domain *d);
void ks_domain_unref(ks_domain *d);
/* Releases domain->mu after calling (unlocked) every fired callback and
 * dropping deferred references. */
void ks_unlock(ks_domain *d);
/* Calls fired callbacks and drops deferred references with the mutex
 * released for the duration; returns with it held. Returns true if it
 * released the mutex: the caller must then recheck whatever it was about
 * to wait for (a wake-up may have gone by meanwhile). */
bool ks_run_deferred(ks_domain *d);
/* Drops a reference while holding the mutex: if it may be the last, the
 * object is released later by ks_unlock (destroying sync objects takes the
 * mutex). */
void ks_unref_locked(ks_domain *d, kres_object *obj);

typedef struct ks_span {
    uint64_t lo, hi; /* values in (lo, hi] were signaled in error */
} ks_span;

typedef struct ks_timeline {
    kres_object base;          /* KRES_TYPE_TIMELINE */
    ks_domain *dom;
    uint64_t value;            /* signaled so far */
    uint64_t requested;        /* largest value any signal asked for */
    bool internal;             /* a context's own timeline: only it advances it */
    struct ks_point *pending;  /* unsettled points, ascending value */
    ks_span *spans;            /* errored ranges, ascending; grows as needed */
    uint32_t nspans, spans_cap;
} ks_timeline;

typedef struct ks_wnode {
    struct ks_waiter *w;
    struct ks_wnode *next;
} ks_wnode;

typedef struct ks_point {
    atomic_uint refs;          /* fences holding it, + 1 while pending */
    ks_timeline *tl;           /* no reference: used only while pending */
    ks_domain *dom;            /* no reference: fences holding the point do */
    uint64_t value;
    ks_state state;
    struct ks_point *next;     /* in tl->pending */
    ks_wnode *waiters;
} ks_point;

typedef struct ks_fence {
    kres_object base;          /* KRES_TYPE_FENCE */
    ks_domain *dom;
    uint32_t count;
    ks_point *points[];        /* references held */
} ks_fence;

typedef enum ks_waiter_kind { KS_WAIT_CALLBACK, KS_WAIT_SERVER } ks_waiter_kind;

typedef struct ks_waiter {
    ks_waiter_kind kind;
    uint32_t remaining;        /* points not settled yet */
    bool error;                /* some point settled in error */
    kiln_result status;        /* when fired: OK, COMMAND_FAILED, DEVICE_LOST */
    struct ks_waiter *next_live, *prev_live, *next_fired;
    ks_fence *fence;           /* reference held until fired */
    kiln_fence_callback fn;    /* KS_WAIT_CALLBACK */
    void *user;
    uint32_t fence_id;
    struct kq_cmd *cmd;        /* KS_WAIT_SERVER: the WAIT command */
    uint32_t nnodes;
    ks_wnode nodes[];
} ks_waiter;

kiln_result ks_timeline_create(ks_domain *d, uint64_t initial, ks_timeline **out);
/* Settles points up to `value` (error: in error). Caller holds mu. */
void ks_timeline_signal_locked(ks_timeline *tl, uint64_t value, bool error);

/* A new point on tl at value (settled at once if already reached). */
ks_point *ks_point_create_locked(ks_timeline *tl, uint64_t value);
void ks_point_unref_locked(ks_point *p);

/* Fences: from one point, or the union of two fences. Caller holds mu. */
kiln_result ks_fence_create_locked(ks_domain *d, ks_point *const *points, uint32_t count,
                                   ks_fence **out);
ks_state ks_fence_state_locked(const ks_fence *f);

/* Registers a waiter for every unsettled point of f. Returns NULL on out
 * of memory. If every point is settled, the waiter is fired at once. */
ks_waiter *ks_wait_locked(ks_fence *f, ks_waiter_kind kind);
/* Fires every live waiter with DEVICE_LOST and marks the domain lost. */
void ks_domain_lose_locked(ks_domain *d);
/* Frees a fired server waiter once the queue has resolved it. */
void ks_waiter_free_locked(ks_waiter *w);

#endif
