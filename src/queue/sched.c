/* The scheduler: lock-list grants, the ready list, workers, waiting for
 * progress without hanging, and the command slots of each context. */
#include "queue.h"
#include "internal.h"

#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#define STAT_INC(q, f) atomic_fetch_add_explicit(&(q)->stats.f, 1, memory_order_relaxed)
#define MU(q) (&(q)->dom->mu)
/* Under the mutex, where they are written: */
#define SLEEPERS(q) atomic_load_explicit(&(q)->sleepers, memory_order_relaxed)
#define SPINNING(q) atomic_load_explicit(&(q)->spinning, memory_order_relaxed)

/* How long an idle worker spins before it sleeps: a producer issuing
 * commands back to back then never pays a futex wake per command. */
#define SPIN_ROUNDS 4000

/* ---- lock lists ---- */

static void push_ready(kq_device *q, kq_cmd *cmd)
{
    cmd->next = NULL;
    if (q->trace)
        cmd->tr_grant = kt_now();
    if (q->ready_tail)
        q->ready_tail->next = cmd;
    else
        q->ready_head = cmd;
    q->ready_tail = cmd;
    atomic_fetch_add_explicit(&q->nready, 1, memory_order_release);
    if (!q->serial && SLEEPERS(q) && !SPINNING(q))
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
    if (cpu && q->dom->waiters)
        pthread_cond_broadcast(&q->dom->cv);
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

/* ---- completion ---- */

static const char *const op_names[] = {
    [KQ_OP_NOP] = "NOP",
    [KQ_OP_CLEAR] = "CLEAR",
    [KQ_OP_UPDATE] = "UPDATE",
    [KQ_OP_COPY_REGION] = "COPY_REGION",
    [KQ_OP_COPY_RESOURCE] = "COPY_RESOURCE",
    [KQ_OP_RESOLVE] = "RESOLVE",
    [KQ_OP_TEST_GATE] = "TEST_GATE",
    [KQ_OP_TEST_FAIL] = "TEST_FAIL",
    [KQ_OP_WAIT] = "WAIT",
    [KQ_OP_SCENE] = "SCENE",
    [KQ_OP_GENERATE_MIPS] = "GENERATE_MIPS",
    [KQ_OP_CALL] = "CALL",
};

/* The executed command's life for the timeline, recorded by the thread
 * that owns the slot until it completes it: the one that ran it, or for a
 * PARKED command the one that completes it (whose track then shows it). */
static void trace_cmd(kq_device *q, const kq_cmd *cmd, uint64_t t_start)
{
    kt_cmd_times c = {
        .api = cmd->api,
        .op = cmd->op < KB_COUNTOF(op_names) && op_names[cmd->op] ? op_names[cmd->op] : "?",
        .seq = cmd->seq,
        .flow = cmd->tr_flow,
        .ctx = cmd->ctx->trace_id,
        .submit_tid = cmd->tr_tid,
        .t_begin = cmd->tr_begin,
        .t_submit = cmd->tr_submit,
        .t_grant = cmd->tr_grant,
        .t_start = t_start,
        .t_end = kt_now(),
        .arg = cmd->op == KQ_OP_SCENE ? cmd->u.scene.ops : 0,
    };
    kt_cmd(q->trace, &c);
}


/* Everything up to this sequence number has completed. */
static uint64_t watermark(const kq_context *c)
{
    return c->flight_head ? c->flight_head->seq - 1 : c->next_seq;
}

void kq_fire_records_locked(kq_context *c)
{
    uint64_t wm = watermark(c);
    while (c->rec_head && c->rec_head->seq <= wm) {
        kq_record *r = c->rec_head;
        c->rec_head = r->next;
        if (!c->rec_head)
            c->rec_tail = NULL;
        if (r->hook)
            r->hook(r->hook_obj, r->hook_arg);
        if (r->hook_obj)
            ks_unref_locked(c->dev->dom, r->hook_obj);
        ks_timeline_signal_locked(r->tl, r->value, r->error);
        ks_unref_locked(c->dev->dom, &r->tl->base);
        kb_free(c->dev->env, r, sizeof *r);
    }
}

/* A failed command errors the first completion point queued after it (and
 * any others at the same place in the stream), or the next one created. */
static void propagate_failure(kq_context *c, uint64_t seq)
{
    kq_record *r = c->rec_head;
    while (r && r->seq < seq)
        r = r->next;
    if (!r) {
        c->carry_error = true;
        return;
    }
    /* Points created later at the same place in the stream share it, so
     * the outcome never depends on when the failure was noticed. */
    c->error_seq = r->seq;
    for (uint64_t at = r->seq; r && r->seq == at; r = r->next)
        r->error = true;
}

void kq_complete_locked(kq_device *q, kq_cmd *cmd)
{
    kq_context *c = cmd->ctx;
    if (cmd->op == KQ_OP_TEST_GATE)
        kq_gate_hold_done(cmd->u.gate.gate);
    else if (cmd->op == KQ_OP_SCENE)
        c->scene_bytes -= cmd->u.scene.bytes;
    for (uint32_t i = 0; i < cmd->naccess; i++)
        kq_release(q, &cmd->acc[i]);
    if (cmd->block >= 0)
        kq_transfer_done(&c->ring, cmd->block);
    /* Inline nodes keep their resource references: the producer drops
     * them when it takes the slot back (drop_refs). An external array is
     * the payload's, freed by its release hook: its references go now. */
    bool external = cmd->acc != cmd->acc_inline;
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        kres_storage_unref(cmd->acc[i].st);
        if (external)
            kres_unref(&cmd->acc[i].res->base);
    }
    if (external)
        cmd->naccess = 0;
    if (cmd->release) {
        cmd->release(cmd);
        cmd->release = NULL;
    }
    cmd->acc = cmd->acc_inline;
    if (cmd->failed)
        propagate_failure(c, cmd->seq);
    /* Leave the flight list; if it was the oldest, points may fire. */
    bool oldest = c->flight_head == cmd;
    if (cmd->prev_flight)
        cmd->prev_flight->next_flight = cmd->next_flight;
    else
        c->flight_head = cmd->next_flight;
    if (cmd->next_flight)
        cmd->next_flight->prev_flight = cmd->prev_flight;
    else
        c->flight_tail = cmd->prev_flight;
    cmd->prev_flight = cmd->next_flight = NULL;
    if (cmd->op != KQ_OP_WAIT) {
        q->running--;
        STAT_INC(q, executed);
    } else if (q->trace) {
        trace_cmd(q, cmd, cmd->tr_grant); /* held its context from submit to here */
    }
    c->returned[c->ret_widx] = cmd;
    if (++c->ret_widx == c->capacity)
        c->ret_widx = 0;
    atomic_store_explicit(&c->ret_put, atomic_load_explicit(&c->ret_put, memory_order_relaxed) + 1,
                          memory_order_release);
    c->in_flight--;
    if (oldest)
        kq_fire_records_locked(c);
    kq_settle_locked(q);
    if (q->dom->waiters)
        pthread_cond_broadcast(&q->dom->cv);
}

void kq_complete(kq_cmd *cmd)
{
    kq_device *q = cmd->ctx->dev;
    if (q->trace) /* a parked command: from its start to now */
        trace_cmd(q, cmd, cmd->tr_start);
    pthread_mutex_lock(MU(q));
    kq_complete_locked(q, cmd);
    kq_drain_serial(q);
    ks_unlock(q->dom);
}

static void log_failure(kq_device *q, const kq_cmd *cmd)
{
    kb_log(q->env, KILN_LOG_LEVEL_ERROR, KILN_LOG_COMMAND_FAILED, cmd->api,
           "command #%llu failed while executing: %s", (unsigned long long)cmd->seq,
           cmd->fail_reason ? cmd->fail_reason : "unknown reason");
}

void kq_complete_result(kq_cmd *cmd, kq_exec_result res)
{
    kq_device *q = cmd->ctx->dev;
    if (q->trace) /* a parked command: from its start to now */
        trace_cmd(q, cmd, cmd->tr_start);
    if (res == KQ_EXEC_FAILED)
        log_failure(q, cmd);
    pthread_mutex_lock(MU(q));
    if (res == KQ_EXEC_FAILED)
        cmd->failed = 1;
    kq_complete_locked(q, cmd);
    kq_drain_serial(q);
    ks_unlock(q->dom);
}

void kq_trace_wait(kq_device *q, kt_wait cause, uint64_t t0, uint32_t resource)
{
    if (q->trace)
        kt_wait_span(q->trace, cause, t0, kt_now(), resource, 0);
}

/* Runs one ready command on the calling thread. Called and returns with
 * the mutex held. */
static void run_one_locked(kq_device *q)
{
    kq_cmd *cmd = q->ready_head;
    q->ready_head = cmd->next;
    if (!q->ready_head)
        q->ready_tail = NULL;
    atomic_fetch_sub_explicit(&q->nready, 1, memory_order_relaxed);
    q->running++;
    /* More work and nobody looking for it: wake a sleeper (chain). */
    if (q->ready_head && SLEEPERS(q) && !SPINNING(q))
        pthread_cond_signal(&q->work_cv);
    ks_run_deferred(q->dom);
    pthread_mutex_unlock(MU(q));
    if (q->trace)
        cmd->tr_start = kt_now();
    kq_exec_result res = kq_execute(cmd);
    /* A PARKED command is no longer this thread's: whoever completes it
     * records it (kq_complete, kq_complete_result). */
    if (q->trace && res != KQ_EXEC_PARKED)
        trace_cmd(q, cmd, cmd->tr_start);
    if (res == KQ_EXEC_FAILED)
        log_failure(q, cmd);
    pthread_mutex_lock(MU(q));
    if (res == KQ_EXEC_FAILED)
        cmd->failed = 1;
    if (res != KQ_EXEC_PARKED)
        kq_complete_locked(q, cmd);
}

void kq_drain_serial(kq_device *q)
{
    if (!q->serial)
        return;
    while (q->ready_head)
        run_one_locked(q);
}

static void help_group_locked(kq_device *q);

bool kq_help_locked(kq_device *q)
{
    kq_take_handed_locked(q);
    if (q->ready_head) {
        run_one_locked(q);
        return true;
    }
    if (q->groups) {
        help_group_locked(q);
        return true;
    }
    return false;
}

/* Whether a map that another thread could undo holds a grant: one taken by
 * another thread through another context. A context is fed by one thread
 * at a time, so the caller's own context's maps wait for the caller, and
 * so do the maps the caller made through other contexts (a map is the
 * thread's until it unmaps, docs/queue.md). */
static bool foreign_map_locked(const kq_device *q, const kq_context *c)
{
    if (c && q->cpu_maps == c->cpu_maps)
        return false;
    pthread_t self = pthread_self();
    for (const kres_resource *r = q->mapped; r; r = r->map.dev_next)
        if (r->map.owner != c && !pthread_equal(r->map.thread, self))
            return true;
    return false;
}

kiln_result kq_wait_progress(kq_device *q, kq_context *c)
{
    if (kq_help_locked(q))
        return KILN_OK;
    /* Progress can come from a command that is ready or running, from
     * another thread unmapping a resource it holds, or from a fence that a
     * server wait is waiting for. If none of these exists, only this
     * thread could unblock the queue: waiting would hang. */
    if (!q->ready_head && q->running == 0 && q->server_waits == 0 && !foreign_map_locked(q, c))
        return KILN_E_WOULD_DEADLOCK;
    /* Callbacks run with the mutex released: a completion could have gone
     * by unseen, so the caller rechecks before anyone sleeps. */
    if (ks_run_deferred(q->dom))
        return KILN_OK;
    q->dom->waiters++;
    pthread_cond_wait(&q->dom->cv, MU(q));
    q->dom->waiters--;
    return KILN_OK;
}

bool kq_stalled_locked(const kq_device *q, const kq_context *c)
{
    return !q->ready_head && q->running == 0 && q->server_waits == 0 && !foreign_map_locked(q, c);
}

bool kq_stalled(kq_device *q, kq_context *c)
{
    pthread_mutex_lock(MU(q));
    bool stalled = !kq_help_locked(q) && kq_stalled_locked(q, c);
    ks_unlock(q->dom);
    return stalled;
}

static void *worker_main(void *arg)
{
    kq_device *q = arg;
    if (q->trace)
        kt_name_thread(q->trace, "worker %u",
                       atomic_fetch_add_explicit(&q->trace_workers, 1, memory_order_relaxed) + 1);
    pthread_mutex_lock(MU(q));
    for (;;) {
        if (q->groups) {
            help_group_locked(q);
            continue;
        }
        kq_take_handed_locked(q);
        if (q->ready_head) {
            run_one_locked(q);
            continue;
        }
        if (q->stopping)
            break;
        if (ks_run_deferred(q->dom))
            continue; /* the mutex was released: look again from the top */
        if (!SPINNING(q)) {
            /* One worker at a time spins, so a spinning worker never takes
             * a core from the producer on a small machine for long. */
            atomic_store(&q->spinning, 1);
            pthread_mutex_unlock(MU(q));
            for (int i = 0; i < SPIN_ROUNDS; i++) {
                if (atomic_load_explicit(&q->nready, memory_order_acquire) ||
                    atomic_load_explicit(&q->ngroups, memory_order_acquire) ||
                    atomic_load_explicit(&q->handed_any, memory_order_relaxed))
                    break;
                CPU_RELAX();
            }
            pthread_mutex_lock(MU(q));
            atomic_store(&q->spinning, 0);
            if (q->ready_head || q->groups || q->stopping || atomic_load(&q->handed_any))
                continue;
        }
        /* seq_cst both ways with hand_over: either this load sees the
         * batch or the producer sees a sleeper and signals (it takes the
         * mutex first, so not before the wait below has released it). */
        atomic_store(&q->sleepers, SLEEPERS(q) + 1);
        if (!atomic_load(&q->handed_any))
            pthread_cond_wait(&q->work_cv, MU(q));
        atomic_store(&q->sleepers, SLEEPERS(q) - 1);
    }
    ks_unlock(q->dom);
    return NULL;
}

/* ---- device ---- */

/* Server waits resolved by whatever settled a point (a CPU signal, a
 * destroyed timeline, ...): move the commands behind them; in SERIAL mode
 * they run inside the call that released them. */
static void settle_hook(void *arg)
{
    kq_device *q = arg;
    kq_settle_locked(q);
    kq_drain_serial(q);
}

kiln_result kq_device_init(kq_device *q, const kb_env *env, ks_domain *dom, bool serial,
                           uint32_t nworkers, kt_tracer *trace)
{
    memset(q, 0, sizeof *q);
    q->env = env;
    q->trace = trace;
    q->scene_budget = KQ_SCENE_BUDGET; /* kiln_device_create sets the desc's */
    atomic_init(&q->trace_contexts, 0);
    atomic_init(&q->trace_workers, 0);
    q->dom = dom;
    dom->on_resolved = settle_hook;
    dom->on_resolved_arg = q;
    q->serial = serial;
    atomic_init(&q->nready, 0);
    atomic_init(&q->sleepers, 0);
    atomic_init(&q->spinning, 0);
    atomic_init(&q->handed_any, 0);
    pthread_cond_init(&q->work_cv, NULL);
    if (serial)
        return KILN_OK;
    q->slot_spin = nworkers >= 1 && nworkers < kb_cpu_count();
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
    pthread_mutex_lock(MU(q));
    q->stopping = true;
    pthread_cond_broadcast(&q->work_cv);
    ks_unlock(q->dom);
    for (uint32_t i = 0; i < q->nworkers; i++)
        pthread_join(q->workers[i], NULL);
    kb_free(q->env, q->workers, sizeof(pthread_t) * q->workers_cap);
    q->workers = NULL;
    q->nworkers = 0;
    pthread_cond_destroy(&q->work_cv);
}

void kq_device_stats(kq_device *q, kiln_device_stats *o)
{
#define LD(f) atomic_load_explicit(&q->stats.f, memory_order_relaxed)
#define LDC(c, f) atomic_load_explicit(&(c)->f, memory_order_relaxed)
    memset(o, 0, sizeof *o);
    /* Executed before queued: a command counted executed was counted
     * queued before, so commands_in_flight never goes below zero. */
    o->commands_executed = LD(executed);
    pthread_mutex_lock(MU(q));
    o->commands_queued = LD(queued);
    o->bytes_uploaded = LD(bytes_uploaded);
    o->upload_chunks = LD(upload_chunks);
    o->transfer_ring_peak = LD(transfer_peak);
    for (const kq_context *c = q->contexts; c; c = c->next_ctx) {
        o->commands_queued += LDC(c, n_queued);
        o->bytes_uploaded += LDC(c, n_bytes_uploaded);
        o->upload_chunks += LDC(c, n_upload_chunks);
        o->transfer_ring_peak = KB_MAX(o->transfer_ring_peak, (uint64_t)LDC(c, ring.peak));
    }
    pthread_mutex_unlock(MU(q));
    o->waits_ring_full = LD(waits_ring);
    o->waits_transfer_full = LD(waits_transfer);
    o->waits_map_conflict = LD(waits_map);
    o->waits_finish = LD(waits_finish);
    o->waits_scene_budget = LD(waits_scene);
    o->renames = LD(renames);
    o->commands_in_flight = o->commands_queued - o->commands_executed;
#undef LDC
#undef LD
}

/* ---- contexts and commands ---- */

static void free_slot_arrays(kq_context *c)
{
    const kb_env *env = c->dev->env;
    kb_free(env, c->slots, sizeof(kq_cmd) * c->capacity);
    kb_free(env, c->free_slots, sizeof(kq_cmd *) * c->capacity);
    kb_free(env, c->returned, sizeof(kq_cmd *) * c->capacity);
    c->slots = NULL;
    c->free_slots = c->returned = NULL;
}

/* How many completed slots end a wait for one: a quarter of the ring. */
static uint32_t slots_wanted(const kq_context *c) { return c->capacity / 4 ? c->capacity / 4 : 1; }

/* Completed slots the producer has not taken back yet. */
static uint32_t slots_returned(const kq_context *c)
{
    return atomic_load_explicit(&c->ret_put, memory_order_relaxed) - c->ret_take;
}

/* A producer whose ring is full (no slot free, none come back) and whose
 * device leaves it a core of its own (kq_device.slot_spin) hands its open
 * batch over and waits, without the mutex, until a quarter of the ring
 * has come back, as long as every SLOT_SPIN_NS brings SLOT_SPIN_MIN more
 * (commands of at most ~625 ns each). Helping instead (kq_help_locked)
 * would run such commands beside the worker: the two threads then take
 * turns on the mutex and on the lock lists' lines, and both together
 * complete fewer commands than the worker alone (docs/queue.md, "Waiting
 * for a command slot"). Longer commands, or ones that cannot run, send it
 * on to kq_begin's locked wait, which helps. */
#define SLOT_SPIN_NS 20000u
#define SLOT_SPIN_MIN 32u
static void spin_for_slots(kq_context *c)
{
    if (!c->dev->slot_spin)
        return;
    if (c->batch_head)
        kq_hand_over(c);
    const uint32_t want = slots_wanted(c);
    uint32_t seen = slots_returned(c);
    uint64_t window_end = kt_now() + SLOT_SPIN_NS;
    for (uint32_t i = 1; slots_returned(c) < want; i++) {
        CPU_RELAX();
        if (!(i & 31u) && kt_now() >= window_end) {
            const uint32_t back = slots_returned(c);
            if (back - seen < SLOT_SPIN_MIN)
                break;
            seen = back;
            window_end += SLOT_SPIN_NS;
        }
    }
}

/* Moves the slots completed since the last time onto the free stack
 * (the producer's thread, no lock); returns how many. The producer then
 * drops their references with drop_refs before it takes any of them. */
static uint32_t take_back(kq_context *c)
{
    const uint32_t put = atomic_load_explicit(&c->ret_put, memory_order_acquire);
    const uint32_t n = put - c->ret_take;
    for (uint32_t k = 0; k < n; k++) {
        c->free_slots[c->nfree++] = c->returned[c->ret_ridx];
        if (++c->ret_ridx == c->capacity)
            c->ret_ridx = 0;
    }
    c->ret_take = put;
    return n;
}

/* Drops the resource references that the inline nodes of the `n` slots
 * on top of the free stack still hold (the producer's thread, without the
 * mutex: a last reference frees the resource). The slots are about to be
 * written again, so their lines are fetched for writing, all at once. */
static void drop_refs(kq_context *c, uint32_t n)
{
    kq_cmd **top = c->free_slots + c->nfree - n;
    for (uint32_t k = 0; k < n; k++)
        __builtin_prefetch(top[k], 1);
    for (uint32_t k = 0; k < n; k++) {
        kq_cmd *cmd = top[k];
        for (uint32_t i = 0; i < cmd->naccess; i++)
            kres_unref(&cmd->acc_inline[i].res->base);
        cmd->naccess = 0;
    }
}

kiln_result kq_context_init(kq_context *c, kq_device *q, uint32_t capacity,
                            uint32_t transfer_size, ks_timeline *tl)
{
    memset(c, 0, sizeof *c);
    c->dev = q;
    c->trace_id = atomic_fetch_add_explicit(&q->trace_contexts, 1, memory_order_relaxed) + 1;
    c->capacity = capacity;
    c->tl = tl;
    c->slots = kb_calloc(q->env, sizeof(kq_cmd) * capacity);
    c->free_slots = kb_alloc(q->env, sizeof(kq_cmd *) * capacity);
    c->returned = kb_alloc(q->env, sizeof(kq_cmd *) * capacity);
    kiln_result r = KILN_E_OUT_OF_MEMORY;
    if (c->slots && c->free_slots && c->returned)
        r = kq_transfer_init(&c->ring, q->env, transfer_size);
    if (r != KILN_OK) {
        free_slot_arrays(c);
        return r;
    }
    /* Lowest slots on top: the first commands use them in address order. */
    for (uint32_t i = capacity; i-- > 0;)
        c->free_slots[c->nfree++] = &c->slots[i];
    atomic_init(&c->handed, NULL);
    atomic_init(&c->ret_put, 0);
    atomic_init(&c->n_queued, 0);
    atomic_init(&c->n_bytes_uploaded, 0);
    atomic_init(&c->n_upload_chunks, 0);
    atomic_init(&c->no_overwrite_maps, 0);
    pthread_mutex_lock(MU(q));
    c->next_ctx = q->contexts;
    if (q->contexts)
        q->contexts->prev_ctx = c;
    q->contexts = c;
    pthread_mutex_unlock(MU(q));
    return KILN_OK;
}

void kq_context_fini(kq_context *c)
{
    kq_device *q = c->dev;
    kq_unmap_all(c);
    kq_finish(c); /* kiln_context_destroy finished it (the device: unmapped everything) */
    pthread_mutex_lock(MU(q));
    while (c->rec_head) { /* all fired by now; defensive */
        kq_record *r = c->rec_head;
        c->rec_head = r->next;
        if (r->hook_obj)
            ks_unref_locked(q->dom, r->hook_obj);
        ks_unref_locked(q->dom, &r->tl->base);
        kb_free(q->env, r, sizeof *r);
    }
    /* Its counts stay in the device's. */
    atomic_fetch_add_explicit(&q->stats.queued, atomic_load(&c->n_queued), memory_order_relaxed);
    atomic_fetch_add_explicit(&q->stats.bytes_uploaded, atomic_load(&c->n_bytes_uploaded),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&q->stats.upload_chunks, atomic_load(&c->n_upload_chunks),
                              memory_order_relaxed);
    uint64_t peak = atomic_load(&c->ring.peak);
    if (peak > atomic_load_explicit(&q->stats.transfer_peak, memory_order_relaxed))
        atomic_store_explicit(&q->stats.transfer_peak, peak, memory_order_relaxed); /* mutex held */
    if (c->prev_ctx)
        c->prev_ctx->next_ctx = c->next_ctx;
    else
        q->contexts = c->next_ctx;
    if (c->next_ctx)
        c->next_ctx->prev_ctx = c->prev_ctx;
    ks_unlock(q->dom);
    kq_transfer_fini(&c->ring, q->env);
    free_slot_arrays(c);
}

kiln_result kq_begin(kq_context *c, const char *api, kq_cmd **out)
{
    kq_device *q = c->dev;
    if (!c->nfree) {
        /* Take back every slot completed since the last time, without the
         * mutex. Wait only if there is none (the ring is full), and then
         * until a quarter of the ring is back: spinning (spin_for_slots),
         * then helping while commands are ready, then as long as none is
         * back. */
        uint32_t n = take_back(c);
        if (!n) {
            STAT_INC(q, waits_ring);
            const uint64_t t0 = q->trace ? kt_now() : 0;
            spin_for_slots(c);
            pthread_mutex_lock(MU(q));
            kq_flush_locked(c); /* the batch's slots come back only once it runs */
            /* Still short of a quarter: the commands are long (or there is
             * no core to spin on), and running them beside the worker pays.
             * Once a slot is back, only this context's own commands are
             * worth waiting for: others' could keep coming while some of
             * this one's cannot complete (behind a server wait this thread
             * will signal, say). */
            while (slots_returned(c) < slots_wanted(c) &&
                   (q->ready_head || atomic_load_explicit(&q->handed_any, memory_order_relaxed))) {
                if (slots_returned(c) && (!q->ready_head || q->ready_head->ctx != c))
                    break;
                kq_help_locked(q);
            }
            while (!slots_returned(c)) {
                kiln_result r = kq_wait_progress(q, c);
                if (r != KILN_OK) {
                    ks_unlock(q->dom);
                    return r;
                }
            }
            ks_unlock(q->dom);
            kq_trace_wait(q, KT_WAIT_RING_FULL, t0, 0);
            n = take_back(c);
        }
        drop_refs(c, n);
    }
    kq_cmd *cmd = c->free_slots[--c->nfree];
    /* The next slot was last written by whichever thread completed it:
     * start fetching its hot lines now, while this command is built. */
    if (c->nfree) {
        const char *next = (const char *)c->free_slots[c->nfree - 1];
        for (size_t off = 0; off < KQ_CMD_HOT_BYTES; off += 64)
            __builtin_prefetch(next + off, 1);
    }
    /* The header starts from scratch (a recycled slot must not keep its
     * last command's flags), field by field rather than through a memset
     * call; payload and nodes are written as they are built. */
    cmd->next = cmd->prev_flight = cmd->next_flight = NULL;
    cmd->ctx = c;
    cmd->seq = 0;
    cmd->api = api;
    cmd->op = KQ_OP_NOP;
    cmd->failed = cmd->resolved = cmd->pred_value = cmd->before_maps = 0;
    cmd->naccess = cmd->pending = 0;
    cmd->acc = cmd->acc_inline;
    cmd->block = -1;
    cmd->waiter = NULL;
    cmd->fail_reason = NULL;
    cmd->pred_res = NULL;
    cmd->release = NULL;
    if (q->trace)
        cmd->tr_begin = kt_now();
    *out = cmd;
    return KILN_OK;
}

void kq_set_nodes(kq_cmd *cmd, kq_node *nodes, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++) {
        nodes[i].cmd = cmd;
        nodes[i].next = NULL;
        nodes[i].state = KQ_NODE_IDLE;
    }
    cmd->acc = nodes;
    cmd->naccess = count;
}

kres_storage *kq_capture(kq_device *q, kres_resource *res)
{
    pthread_mutex_lock(MU(q));
    kres_storage *st = res->current;
    kres_storage_ref(st);
    pthread_mutex_unlock(MU(q));
    return st;
}

/* ---- parallel_for ---- */

typedef struct kq_group {
    kq_task_fn fn;
    void *arg;
    const char *name;   /* each index's slice in a trace */
    kt_tracer *trace;
    uint32_t n;
    atomic_uint next;   /* next index to take */
    uint32_t done;      /* indices finished (under the mutex) */
    uint32_t helpers;   /* workers inside run_group */
    bool listed;
    struct kq_group *next_group;
} kq_group;

static uint32_t run_group(kq_group *g)
{
    uint32_t i, count = 0;
    while ((i = atomic_fetch_add_explicit(&g->next, 1, memory_order_relaxed)) < g->n) {
        if (g->trace) {
            uint64_t t0 = kt_now();
            g->fn(g->arg, i);
            kt_slice(g->trace, g->name, t0, kt_now(), "index", i);
        } else {
            g->fn(g->arg, i);
        }
        count++;
    }
    return count;
}

static void unlist_group(kq_device *q, kq_group *g)
{
    if (!g->listed)
        return;
    kq_group **it = &q->groups;
    while (*it && *it != g)
        it = &(*it)->next_group;
    if (*it)
        *it = g->next_group;
    g->listed = false;
    atomic_fetch_sub_explicit(&q->ngroups, 1, memory_order_relaxed);
}

/* A worker helps the first group that still has indices. Mutex held. */
static void help_group_locked(kq_device *q)
{
    kq_group *g = q->groups;
    g->helpers++;
    ks_unlock(q->dom); /* runs fired callbacks rather than leaving them */
    uint32_t c = run_group(g);
    pthread_mutex_lock(MU(q));
    g->done += c;
    g->helpers--;
    unlist_group(q, g); /* its indices are all taken */
    if (g->done == g->n && g->helpers == 0)
        pthread_cond_broadcast(&q->dom->cv);
}

void kq_parallel_for(kq_device *q, uint32_t n, kq_task_fn fn, void *arg, const char *name)
{
    if (n == 0)
        return;
    kq_group g = {.fn = fn, .arg = arg, .name = name, .trace = q->trace, .n = n};
    if (q->serial || n == 1) {
        atomic_init(&g.next, 0);
        run_group(&g);
        return;
    }
    atomic_init(&g.next, 0);
    pthread_mutex_lock(MU(q));
    g.listed = true;
    g.next_group = q->groups;
    q->groups = &g;
    atomic_fetch_add_explicit(&q->ngroups, 1, memory_order_release);
    if (SLEEPERS(q))
        pthread_cond_broadcast(&q->work_cv);
    if (q->dom->waiters) /* threads waiting in the queue help too */
        pthread_cond_broadcast(&q->dom->cv);
    pthread_mutex_unlock(MU(q));
    uint32_t c = run_group(&g);
    pthread_mutex_lock(MU(q));
    g.done += c;
    unlist_group(q, &g);
    uint64_t t0 = 0;
    while (g.done < g.n || g.helpers) {
        if (!t0 && q->trace)
            t0 = kt_now();
        q->dom->waiters++;
        pthread_cond_wait(&q->dom->cv, MU(q));
        q->dom->waiters--;
    }
    pthread_mutex_unlock(MU(q));
    if (t0)
        kq_trace_wait(q, KT_WAIT_HELPERS, t0, 0);
}

/* Whether a node of a scene recorded before its context's open
 * WRITE_NO_OVERWRITE Maps reads a storage one of them holds: in call order
 * the read comes before the Map, whose grant it must not wait for (the app
 * promised to leave the bytes such reads use alone). The only other nodes
 * such a grant holds back are readers (DYNAMIC storage is written by the
 * CPU alone), so taking this one past them reorders nothing. */
static bool beside_map(const kq_cmd *cmd, const kq_node *n)
{
    const kres_map_state *m = &n->res->map;
    return cmd->before_maps && n->mode == KQ_READ && m->no_overwrite && m->owner == cmd->ctx &&
           m->node.st == n->st;
}

/* Hands a command to the scheduler: its nodes join their lock lists. */
void kq_schedule_locked(kq_device *q, kq_cmd *cmd)
{
    cmd->pending = cmd->naccess;
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        kq_node *n = &cmd->acc[i];
        if (!n->st) {
            n->st = n->res->current;
            kres_storage_ref(n->st);
        }
        if (beside_map(cmd, n)) {
            n->next = NULL;
            n->state = KQ_NODE_GRANTED;
            n->st->lock.readers++;
            cmd->pending--;
            continue;
        }
        kq_append(&n->st->lock, n);
    }
    if (cmd->pending == 0)
        push_ready(q, cmd);
    for (uint32_t i = 0; i < cmd->naccess; i++)
        kq_grant(q, &cmd->acc[i].st->lock);
}

/* Gives the command its place in the context's program order. */
void kq_enter_flight_locked(kq_context *c, kq_cmd *cmd)
{
    c->in_flight++;
    cmd->seq = ++c->next_seq;
    cmd->prev_flight = c->flight_tail;
    cmd->next_flight = NULL;
    if (c->flight_tail)
        c->flight_tail->next_flight = cmd;
    else
        c->flight_head = cmd;
    c->flight_tail = cmd;
}

void kq_defer_locked(kq_context *c, kq_cmd *cmd)
{
    cmd->next = NULL;
    if (c->deferred_tail)
        c->deferred_tail->next = cmd;
    else
        c->deferred_head = cmd;
    c->deferred_tail = cmd;
}

static void schedule_one_locked(kq_context *c, kq_cmd *cmd)
{
    kq_enter_flight_locked(c, cmd);
    if (c->deferred_head) /* behind a server wait */
        kq_defer_locked(c, cmd);
    else
        kq_schedule_locked(c->dev, cmd);
}

static void schedule_list_locked(kq_context *c, kq_cmd *cmd)
{
    while (cmd) {
        kq_cmd *next = cmd->next;
        cmd->next = NULL;
        schedule_one_locked(c, cmd);
        cmd = next;
    }
}

/* Schedules the batches the context's producer handed over, oldest first
 * (mutex held). */
static bool take_context_handed_locked(kq_context *c)
{
    kq_cmd *b = atomic_load_explicit(&c->handed, memory_order_relaxed);
    if (!b)
        return false;
    b = atomic_exchange_explicit(&c->handed, NULL, memory_order_acquire);
    kq_cmd *oldest = NULL;
    while (b) { /* newest first: reverse */
        kq_cmd *n = b->next_batch;
        b->next_batch = oldest;
        oldest = b;
        b = n;
    }
    while (oldest) {
        kq_cmd *n = oldest->next_batch;
        oldest->next_batch = NULL;
        schedule_list_locked(c, oldest);
        oldest = n;
    }
    return true;
}

bool kq_take_handed_locked(kq_device *q)
{
    if (!atomic_load_explicit(&q->handed_any, memory_order_relaxed) ||
        !atomic_exchange(&q->handed_any, 0))
        return false;
    /* A batch handed over after the exchange sets the flag again; one
     * handed before it is found here (the push happens before the flag's
     * store that the exchange read). */
    bool any = false;
    for (kq_context *c = q->contexts; c; c = c->next_ctx)
        any |= take_context_handed_locked(c);
    return any;
}

void kq_flush_locked(kq_context *c)
{
    take_context_handed_locked(c); /* they come before the open batch */
    kq_cmd *cmd = c->batch_head;
    c->batch_head = c->batch_tail = NULL;
    c->batch_n = 0;
    schedule_list_locked(c, cmd);
}

/* Hands a full batch to the scheduler without the mutex (the producer's
 * thread): push it on the context's handed list and raise the device's
 * flag; a worker takes it from there. Only a worker asleep on work_cv,
 * with none spinning, costs the mutex and a wake-up. */
void kq_hand_over(kq_context *c)
{
    kq_device *q = c->dev;
    kq_cmd *head = c->batch_head;
    c->batch_head = c->batch_tail = NULL;
    c->batch_n = 0;
    kq_cmd *old = atomic_load_explicit(&c->handed, memory_order_relaxed);
    do
        head->next_batch = old;
    while (!atomic_compare_exchange_weak_explicit(&c->handed, &old, head, memory_order_release,
                                                  memory_order_relaxed));
    atomic_store(&q->handed_any, 1);
    if (atomic_load(&q->sleepers) && !atomic_load(&q->spinning)) {
        pthread_mutex_lock(MU(q));
        if (SLEEPERS(q) && !SPINNING(q))
            pthread_cond_signal(&q->work_cv);
        pthread_mutex_unlock(MU(q));
    }
}

void kq_flush(kq_context *c)
{
    if (!c->batch_head && !atomic_load_explicit(&c->handed, memory_order_relaxed))
        return;
    kq_device *q = c->dev;
    pthread_mutex_lock(MU(q));
    kq_flush_locked(c);
    ks_unlock(q->dom);
    drop_refs(c, take_back(c));
}

/* Bytes a byte operation touches, roughly: large ones go to the scheduler
 * at once so that the workers start on them while the producer goes on. */
static size_t cmd_bytes(const kq_cmd *cmd)
{
    const kres_resource *res = cmd->naccess ? cmd->acc[0].res : NULL;
    switch ((kq_op)cmd->op) {
    case KQ_OP_UPDATE:
        return (size_t)cmd->u.update.pitch * (cmd->u.update.box.bottom - cmd->u.update.box.top) *
               (cmd->u.update.box.back - cmd->u.update.box.front);
    case KQ_OP_COPY_REGION: {
        const kiln_box *b = &cmd->u.copy.box;
        const kres_format_info *fi = res ? kres_format(res->format) : NULL;
        return (size_t)(b->right - b->left) * (b->bottom - b->top) * (fi ? fi->size : 1);
    }
    case KQ_OP_CLEAR:
    case KQ_OP_COPY_RESOURCE:
        return res ? res->storage_size : 0;
    case KQ_OP_CALL:
        return 0; /* query begin/end: a few words */
    default:
        return SIZE_MAX; /* scenes, mips, waits and test hooks: at once */
    }
}

void kq_submit(kq_context *c, kq_cmd *cmd)
{
    kq_device *q = c->dev;
    kq_count(&c->n_queued, 1);
    if (q->trace) {
        cmd->tr_submit = cmd->tr_grant = kt_now();
        cmd->tr_tid = kt_tid(q->trace);
        cmd->tr_flow = kt_next_id(q->trace);
    }
    size_t bytes = q->serial ? SIZE_MAX : cmd_bytes(cmd);
    if (bytes != SIZE_MAX) { /* a byte operation on an ASYNC device */
        kq_batch_append(c, cmd);
        /* a large one goes at once, unless the append handed it over (full) */
        if (bytes >= KQ_BATCH_BYTES && c->batch_head)
            kq_hand_over(c);
        return;
    }
    pthread_mutex_lock(MU(q));
    kq_flush_locked(c);
    schedule_one_locked(c, cmd);
    kq_drain_serial(q);
    ks_unlock(q->dom);
    drop_refs(c, take_back(c)); /* SERIAL: what just ran lets go at once */
}

void kq_scene_admit(kq_context *c, kq_cmd *cmd, size_t bytes)
{
    kq_device *q = c->dev;
    pthread_mutex_lock(MU(q));
#define OVER_BUDGET() (c->scene_bytes && c->scene_bytes + bytes > q->scene_budget)
    if (OVER_BUDGET()) {
        kq_flush_locked(c); /* the scenes in flight may still sit in the open batch */
        STAT_INC(q, waits_scene);
        uint64_t t0 = q->trace ? kt_now() : 0;
        /* Only while a command is ready or running: then kq_wait_progress
         * helps or sleeps until a completion and never answers
         * WOULD_DEADLOCK. Otherwise nothing is certain to finish: over the
         * budget rather than a hang. */
        while (OVER_BUDGET() && (q->ready_head || q->running))
            (void)kq_wait_progress(q, c);
        kq_trace_wait(q, KT_WAIT_SCENE_BUDGET, t0, 0);
    }
#undef OVER_BUDGET
    cmd->u.scene.bytes = bytes;
    c->scene_bytes += bytes;
    ks_unlock(q->dom);
}

void kq_cancel(kq_context *c, kq_cmd *cmd)
{
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        kres_storage_unref(cmd->acc[i].st);
        kres_unref(&cmd->acc[i].res->base);
    }
    cmd->naccess = 0;
    if (cmd->release)
        cmd->release(cmd);
    cmd->release = NULL;
    cmd->acc = cmd->acc_inline;
    if (cmd->block >= 0) /* the ring is this thread's own */
        kq_transfer_done(&c->ring, cmd->block);
    /* Never submitted, so never in flight: back to the producer's stack. */
    c->free_slots[c->nfree++] = cmd;
}

kiln_result kq_finish(kq_context *c)
{
    kq_device *q = c->dev;
    kiln_result r = KILN_OK;
    pthread_mutex_lock(MU(q));
    kq_flush_locked(c);
    kq_drain_serial(q);
    uint64_t t0 = 0;
    if (c->in_flight) {
        STAT_INC(q, waits_finish);
        t0 = q->trace ? kt_now() : 0;
    }
    while (c->in_flight && r == KILN_OK)
        r = kq_wait_progress(q, c);
    if (t0)
        kq_trace_wait(q, KT_WAIT_FINISH, t0, 0);
    ks_unlock(q->dom);
    drop_refs(c, take_back(c)); /* completed work lets go of its resources */
    return r;
}
