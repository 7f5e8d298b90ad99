/* The scheduler: lock-list grants, the ready list, workers, waiting for
 * progress without hanging, and the command slots of each context. */
#include "queue.h"
#include "internal.h"

#include <string.h>

#define STAT_INC(q, f) atomic_fetch_add_explicit(&(q)->stats.f, 1, memory_order_relaxed)

/* ---- lock lists ---- */

static void push_ready(kq_device *q, kq_cmd *cmd)
{
    cmd->next = NULL;
    if (q->ready_tail)
        q->ready_tail->next = cmd;
    else
        q->ready_head = cmd;
    q->ready_tail = cmd;
    if (!q->serial)
        pthread_cond_signal(&q->work_cv);
}

void kq_grant(kq_device *q, kq_lock *lock)
{
    kq_node *n;
    bool cpu = false;
    while ((n = lock->head) != NULL) {
        if (n->mode == KQ_READ) {
            if (lock->writers)
                break;
            lock->readers++;
        } else {
            if (lock->readers || lock->writers)
                break;
            lock->writers++;
        }
        lock->head = n->next;
        if (!lock->head)
            lock->tail = NULL;
        n->next = NULL;
        n->state = KQ_NODE_GRANTED;
        if (n->cmd) {
            if (--n->cmd->pending == 0)
                push_ready(q, n->cmd);
        } else {
            cpu = true;
        }
        if (n->mode == KQ_WRITE)
            break;
    }
    if (cpu && q->waiters)
        pthread_cond_broadcast(&q->progress_cv);
}

void kq_append(kq_lock *lock, kq_node *n)
{
    n->next = NULL;
    n->state = KQ_NODE_WAITING;
    if (lock->tail)
        lock->tail->next = n;
    else
        lock->head = n;
    lock->tail = n;
}

void kq_unlink(kq_device *q, kq_lock *lock, kq_node *n)
{
    kq_node *prev = NULL;
    for (kq_node *it = lock->head; it; prev = it, it = it->next) {
        if (it != n)
            continue;
        if (prev)
            prev->next = n->next;
        else
            lock->head = n->next;
        if (lock->tail == n)
            lock->tail = prev;
        break;
    }
    n->next = NULL;
    n->state = KQ_NODE_IDLE;
    /* Nodes behind it may be grantable now (a reader behind a waiting
     * writer, while readers hold). */
    kq_grant(q, lock);
}

void kq_release(kq_device *q, kq_node *n)
{
    kq_lock *lock = &n->st->lock;
    if (n->mode == KQ_READ)
        lock->readers--;
    else
        lock->writers--;
    n->state = KQ_NODE_IDLE;
    kq_grant(q, lock);
}

/* ---- completion and execution ---- */

static void complete_locked(kq_device *q, kq_cmd *cmd)
{
    kq_context *c = cmd->ctx;
    if (cmd->op == KQ_OP_TEST_GATE)
        kq_gate_hold_done(cmd->u.gate.gate);
    for (uint32_t i = 0; i < cmd->naccess; i++)
        kq_release(q, &cmd->acc[i]);
    if (cmd->block >= 0)
        kq_transfer_done(&c->ring, cmd->block);
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        kres_storage_unref(cmd->acc[i].st);
        kres_unref(&cmd->acc[i].res->base);
    }
    cmd->naccess = 0;
    cmd->next = c->free_list;
    c->free_list = cmd;
    c->in_flight--;
    q->running--;
    STAT_INC(q, executed);
    if (q->waiters)
        pthread_cond_broadcast(&q->progress_cv);
}

void kq_complete(kq_cmd *cmd)
{
    kq_device *q = cmd->ctx->dev;
    pthread_mutex_lock(&q->mu);
    complete_locked(q, cmd);
    kq_drain_serial(q);
    pthread_mutex_unlock(&q->mu);
}

/* Runs one ready command on the calling thread. Called and returns with
 * q->mu held. */
static void run_one_locked(kq_device *q)
{
    kq_cmd *cmd = q->ready_head;
    q->ready_head = cmd->next;
    if (!q->ready_head)
        q->ready_tail = NULL;
    q->running++;
    pthread_mutex_unlock(&q->mu);
    bool done = kq_execute(cmd);
    pthread_mutex_lock(&q->mu);
    if (done)
        complete_locked(q, cmd);
}

void kq_drain_serial(kq_device *q)
{
    if (!q->serial)
        return;
    while (q->ready_head)
        run_one_locked(q);
}

kiln_result kq_wait_progress(kq_device *q, kq_context *c)
{
    if (q->serial && q->ready_head) {
        run_one_locked(q);
        return KILN_OK;
    }
    /* Progress can come from a command that is ready or running, or from
     * another thread unmapping a resource it holds. If none of these
     * exists, only this thread could unblock the queue: waiting would
     * hang. */
    if (!q->ready_head && q->running == 0 && q->cpu_maps == c->cpu_maps)
        return KILN_E_WOULD_DEADLOCK;
    q->waiters++;
    pthread_cond_wait(&q->progress_cv, &q->mu);
    q->waiters--;
    return KILN_OK;
}

static void *worker_main(void *arg)
{
    kq_device *q = arg;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->ready_head && !q->stopping)
            pthread_cond_wait(&q->work_cv, &q->mu);
        if (!q->ready_head)
            break;
        run_one_locked(q);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* ---- device ---- */

kiln_result kq_device_init(kq_device *q, const kb_env *env, bool serial, uint32_t nworkers)
{
    memset(q, 0, sizeof *q);
    q->env = env;
    q->serial = serial;
    if (pthread_mutex_init(&q->mu, NULL) != 0)
        return KILN_E_OUT_OF_MEMORY;
    pthread_cond_init(&q->work_cv, NULL);
    pthread_cond_init(&q->progress_cv, NULL);
    if (serial)
        return KILN_OK;
    q->workers_cap = nworkers;
    q->workers = kb_calloc(env, sizeof(pthread_t) * nworkers);
    if (!q->workers) {
        kq_device_fini(q);
        return KILN_E_OUT_OF_MEMORY;
    }
    for (uint32_t i = 0; i < nworkers; i++) {
        if (pthread_create(&q->workers[i], NULL, worker_main, q) != 0) {
            kq_device_fini(q);
            return KILN_E_INVALID_CALL; /* api logs DEVICE_THREAD_FAILED */
        }
        q->nworkers++;
    }
    return KILN_OK;
}

void kq_device_fini(kq_device *q)
{
    pthread_mutex_lock(&q->mu);
    q->stopping = true;
    pthread_cond_broadcast(&q->work_cv);
    pthread_mutex_unlock(&q->mu);
    for (uint32_t i = 0; i < q->nworkers; i++)
        pthread_join(q->workers[i], NULL);
    kb_free(q->env, q->workers, sizeof(pthread_t) * q->workers_cap);
    q->workers = NULL;
    q->nworkers = 0;
    pthread_cond_destroy(&q->work_cv);
    pthread_cond_destroy(&q->progress_cv);
    pthread_mutex_destroy(&q->mu);
}

void kq_device_stats(kq_device *q, kiln_device_stats *o)
{
#define LD(f) atomic_load_explicit(&q->stats.f, memory_order_relaxed)
    memset(o, 0, sizeof *o);
    o->commands_queued = LD(queued);
    o->commands_executed = LD(executed);
    o->waits_ring_full = LD(waits_ring);
    o->waits_transfer_full = LD(waits_transfer);
    o->waits_map_conflict = LD(waits_map);
    o->waits_finish = LD(waits_finish);
    o->bytes_uploaded = LD(bytes_uploaded);
    o->upload_chunks = LD(upload_chunks);
    o->renames = LD(renames);
    o->transfer_ring_peak = LD(transfer_peak);
    o->commands_in_flight = o->commands_queued - o->commands_executed;
#undef LD
}

/* ---- contexts and commands ---- */

kiln_result kq_context_init(kq_context *c, kq_device *q, uint32_t capacity,
                            uint32_t transfer_size)
{
    memset(c, 0, sizeof *c);
    c->dev = q;
    c->capacity = capacity;
    c->slots = kb_calloc(q->env, sizeof(kq_cmd) * capacity);
    if (!c->slots)
        return KILN_E_OUT_OF_MEMORY;
    for (uint32_t i = capacity; i-- > 0;) {
        c->slots[i].next = c->free_list;
        c->free_list = &c->slots[i];
    }
    kiln_result r = kq_transfer_init(&c->ring, q->env, transfer_size, capacity);
    if (r != KILN_OK) {
        kb_free(q->env, c->slots, sizeof(kq_cmd) * capacity);
        return r;
    }
    return KILN_OK;
}

void kq_context_fini(kq_context *c)
{
    kq_device *q = c->dev;
    kq_unmap_all(c);
    kq_finish(c); /* cannot deadlock: this context maps nothing now */
    kq_transfer_fini(&c->ring, q->env);
    kb_free(q->env, c->slots, sizeof(kq_cmd) * c->capacity);
}

kiln_result kq_begin(kq_context *c, const char *api, kq_cmd **out)
{
    kq_device *q = c->dev;
    pthread_mutex_lock(&q->mu);
    bool counted = false;
    while (!c->free_list) {
        if (!counted) {
            STAT_INC(q, waits_ring);
            counted = true;
        }
        kiln_result r = kq_wait_progress(q, c);
        if (r != KILN_OK) {
            pthread_mutex_unlock(&q->mu);
            return r;
        }
    }
    kq_cmd *cmd = c->free_list;
    c->free_list = cmd->next;
    c->in_flight++;
    pthread_mutex_unlock(&q->mu);
    cmd->next = NULL;
    cmd->ctx = c;
    cmd->api = api;
    cmd->op = KQ_OP_NOP;
    cmd->naccess = 0;
    cmd->pending = 0;
    cmd->block = -1;
    *out = cmd;
    return KILN_OK;
}

void kq_access(kq_cmd *cmd, kres_resource *res, int mode)
{
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        if (cmd->acc[i].res == res) {
            if (mode == KQ_WRITE)
                cmd->acc[i].mode = KQ_WRITE;
            return;
        }
    }
    kq_node *n = &cmd->acc[cmd->naccess++];
    memset(n, 0, sizeof *n);
    kres_ref(&res->base);
    n->res = res;
    n->cmd = cmd;
    n->mode = (uint8_t)mode;
}

void kq_submit(kq_context *c, kq_cmd *cmd)
{
    kq_device *q = c->dev;
    pthread_mutex_lock(&q->mu);
    cmd->seq = ++c->next_seq;
    cmd->pending = cmd->naccess;
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        kq_node *n = &cmd->acc[i];
        n->st = n->res->current;
        kres_storage_ref(n->st);
        kq_append(&n->st->lock, n);
    }
    STAT_INC(q, queued);
    if (cmd->naccess == 0)
        push_ready(q, cmd);
    for (uint32_t i = 0; i < cmd->naccess; i++)
        kq_grant(q, &cmd->acc[i].st->lock);
    kq_drain_serial(q);
    pthread_mutex_unlock(&q->mu);
}

void kq_cancel(kq_context *c, kq_cmd *cmd)
{
    kq_device *q = c->dev;
    for (uint32_t i = 0; i < cmd->naccess; i++)
        kres_unref(&cmd->acc[i].res->base);
    cmd->naccess = 0;
    pthread_mutex_lock(&q->mu);
    if (cmd->block >= 0)
        kq_transfer_done(&c->ring, cmd->block);
    cmd->next = c->free_list;
    c->free_list = cmd;
    c->in_flight--;
    if (q->waiters)
        pthread_cond_broadcast(&q->progress_cv);
    pthread_mutex_unlock(&q->mu);
}

kiln_result kq_finish(kq_context *c)
{
    kq_device *q = c->dev;
    kiln_result r = KILN_OK;
    pthread_mutex_lock(&q->mu);
    kq_drain_serial(q);
    if (c->in_flight)
        STAT_INC(q, waits_finish);
    while (c->in_flight && r == KILN_OK)
        r = kq_wait_progress(q, c);
    pthread_mutex_unlock(&q->mu);
    return r;
}
