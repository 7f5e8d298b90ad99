/* Synchronization in the command stream (seed 004): completion points
 * (signals, sync tokens, fences) fire when every earlier command of the
 * context has completed; a server wait holds the context's later commands
 * back, outside the lock lists, until its fence settles. Keeping deferred
 * commands out of the lock lists is what makes cross-context waits
 * deadlock-free: nothing that waits on a fence ever holds a resource. */
#include "queue.h"
#include "internal.h"

#define MU(q) (&(q)->dom->mu)

static void add_flush(kq_device *q, kq_context *c)
{
    if (c->in_flush_list)
        return;
    c->in_flush_list = true;
    c->next_flush = q->flush_list;
    q->flush_list = c;
}

/* Moves deferred commands to the scheduler up to the first unresolved
 * WAIT; resolved WAITs complete on the way (which may fire points). */
static void flush_deferred(kq_device *q, kq_context *c)
{
    kq_cmd *h;
    while ((h = c->deferred_head) != NULL) {
        if (h->op == KQ_OP_WAIT && !h->resolved)
            break;
        c->deferred_head = h->next;
        if (!c->deferred_head)
            c->deferred_tail = NULL;
        if (h->op == KQ_OP_WAIT) {
            q->server_waits--;
            kq_complete_locked(q, h);
        } else {
            kq_schedule_locked(q, h);
        }
    }
}

void kq_settle_locked(kq_device *q)
{
    if (q->settling)
        return;
    q->settling = true;
    ks_domain *d = q->dom;
    for (;;) {
        if (d->resolved) {
            ks_waiter *w = d->resolved;
            d->resolved = w->next_fired;
            kq_cmd *cmd = w->cmd;
            cmd->resolved = 1;
            /* An errored or lost fence: the commands behind the wait still
             * run, but the context's next completion point reports it. */
            if (w->status != KILN_OK)
                cmd->failed = 1;
            cmd->waiter = NULL;
            ks_waiter_free_locked(w);
            add_flush(q, cmd->ctx);
            continue;
        }
        if (q->flush_list) {
            kq_context *c = q->flush_list;
            q->flush_list = c->next_flush;
            c->in_flush_list = false;
            flush_deferred(q, c);
            continue;
        }
        break;
    }
    q->settling = false;
}

kiln_result kq_record_locked(kq_context *c, ks_timeline *tl, uint64_t value)
{
    return kq_record_hook_locked(c, tl, value, NULL, NULL, 0);
}

kiln_result kq_record_hook_locked(kq_context *c, ks_timeline *tl, uint64_t value,
                                  void (*hook)(kres_object *obj, uint64_t arg), kres_object *obj,
                                  uint64_t arg)
{
    kq_flush_locked(c); /* the point covers the batch too */
    kq_record *r = kb_alloc(c->dev->env, sizeof *r);
    if (!r)
        return KILN_E_OUT_OF_MEMORY;
    kres_ref(&tl->base);
    r->hook = hook;
    r->hook_obj = obj;
    r->hook_arg = arg;
    if (obj)
        kres_ref(obj);
    r->next = NULL;
    r->seq = c->next_seq;
    r->tl = tl;
    r->value = value;
    r->error = false;
    if (c->carry_error) {
        c->carry_error = false;
        c->error_seq = r->seq;
        r->error = true;
    } else if (c->error_seq && c->error_seq == r->seq) {
        r->error = true;
    }
    if (c->rec_tail)
        c->rec_tail->next = r;
    else
        c->rec_head = r;
    c->rec_tail = r;
    kq_fire_records_locked(c);
    kq_settle_locked(c->dev);
    return KILN_OK;
}

kiln_result kq_wait_fence(kq_context *c, ks_fence *f, const char *api)
{
    kq_device *q = c->dev;
    kq_cmd *cmd;
    kiln_result r = kq_begin(c, api, &cmd);
    if (r != KILN_OK)
        return r;
    cmd->op = KQ_OP_WAIT;
    pthread_mutex_lock(MU(q));
    ks_waiter *w = ks_wait_locked(f, KS_WAIT_SERVER);
    if (!w) {
        ks_unlock(q->dom);
        kq_cancel(c, cmd);
        return KILN_E_OUT_OF_MEMORY;
    }
    w->cmd = cmd;
    cmd->waiter = w;
    if (q->trace) {
        cmd->tr_submit = cmd->tr_grant = kt_now();
        cmd->tr_tid = kt_tid(q->trace);
        cmd->tr_flow = kt_next_id(q->trace);
    }
    kq_flush_locked(c);
    kq_enter_flight_locked(c, cmd);
    q->server_waits++;
    kq_defer_locked(c, cmd);
    add_flush(q, c);
    kq_settle_locked(q);
    kq_drain_serial(q);
    ks_unlock(q->dom);
    return KILN_OK;
}

void kq_device_lose(kq_device *q)
{
    pthread_mutex_lock(MU(q));
    ks_domain_lose_locked(q->dom);
    kq_settle_locked(q);
    kq_drain_serial(q);
    ks_unlock(q->dom);
}

bool kq_deferred_uses(const kq_context *c, const kres_resource *res)
{
    for (const kq_cmd *h = c->deferred_head; h; h = h->next)
        for (uint32_t i = 0; i < h->naccess; i++)
            if (h->acc[i].res == res)
                return true;
    return false;
}
