/*
 * queue: the command ring of each context, the device-wide scheduler with
 * per-storage lock lists (seed 002), the worker pool, the transfer ring
 * (seed 000), and CPU Map/Unmap against queued work.
 *
 * Contract:
 * - One mutex (the sync domain's, kq_device.dom->mu) guards every lock
 *   list, every context's slots, flight list, records and transfer ring,
 *   the ready list, the map states and all sync objects. Commands execute
 *   without it. Unlock through ks_unlock so fired fence callbacks run.
 * - A context is fed by one thread at a time. kq_begin reserves a command
 *   slot (waiting only while the ring is full), the caller fills it, and
 *   kq_submit queues it: its nodes join their storages' lock lists and it
 *   runs as soon as every node is granted, on any worker.
 * - Every wait (ring full, transfer full, Map conflict, finish) is counted
 *   in the statistics and returns KILN_E_WOULD_DEADLOCK instead of hanging
 *   when nothing can make progress except an Unmap by the waiting thread.
 * - SERIAL mode has no workers: the calling thread runs ready commands
 *   inside the call that made them ready, in the order they became ready.
 */
#ifndef KILN_QUEUE_H
#define KILN_QUEUE_H

#include "../resources/resources.h"
#include "../sync/sync.h"
#include "../trace/trace.h"
#include "lock.h"

#define KQ_MAX_ACCESS 40 /* nodes stored in a slot; scenes bring their own */

typedef enum kq_op {
    KQ_OP_NOP = 0,
    KQ_OP_CLEAR,         /* fill view range with a texel */
    KQ_OP_UPDATE,        /* write a box from the transfer ring */
    KQ_OP_COPY_REGION,
    KQ_OP_COPY_RESOURCE,
    KQ_OP_TEST_GATE,     /* test hook: holds its resources until a gate opens */
    KQ_OP_TEST_FAIL,     /* test hook: fails when executed */
    KQ_OP_WAIT,          /* server wait: never scheduled; completes when its
                            fence settles, releasing the commands behind it */
    KQ_OP_SCENE,         /* draws and clears to one set of targets (raster) */
    KQ_OP_GENERATE_MIPS,
    KQ_OP_CALL,          /* runs u.call.fn with its grants (query begin/end) */
    KQ_OP_RESOLVE        /* u.copy.dst_sub of acc[0] from u.copy.src_sub of acc[1] */
} kq_op;

/* ---- queries (src/api/query.c builds them; backends count into them) ----
 *
 * A counting query (OCCLUSION, OCCLUSION_PREDICATE, PIPELINE_STATISTICS)
 * owns a small internal buffer resource whose storage is a kq_query_data.
 * It is a resource like any other for the lock lists: its begin and end
 * commands and every scene that counts into it write it, predicated
 * commands read it; so counting, ending and predicating follow stream
 * order, and a command that does not name the query never waits for it. */
enum {
    KQ_Q_IA_VERTICES = 0, /* the pipeline statistics, in D3D10's order */
    KQ_Q_IA_PRIMITIVES,
    KQ_Q_VS_INVOCATIONS,
    KQ_Q_GS_INVOCATIONS,
    KQ_Q_GS_PRIMITIVES,
    KQ_Q_C_INVOCATIONS,
    KQ_Q_C_PRIMITIVES,
    KQ_Q_PS_INVOCATIONS,
    KQ_Q_SAMPLES,         /* occlusion: samples that passed */
    KQ_Q_SO_WRITTEN,      /* stream output: primitives written */
    KQ_Q_SO_NEEDED,       /* ... and those that would have been */
    KQ_Q_COUNT
};

typedef struct kq_query_data {
    /* Written by the commands that hold the storage's write grant: */
    uint64_t acc[KQ_Q_COUNT]; /* counts since the begin */
    uint32_t passed;          /* the last end's predicate: acc[SAMPLES] != 0,
                                 or SO_NEEDED > SO_WRITTEN */
    uint32_t so_predicate;    /* an SO_OVERFLOW_PREDICATE (set at creation) */
    /* Written by an end command and read by get_data, both under the
     * scheduler mutex: */
    uint64_t result[KQ_Q_COUNT];
    uint64_t done_gen;        /* the end (1, 2, ...) `result` belongs to */
} kq_query_data;

/* Adds a command's (or scene's) counts into a query it holds for writing. */
static inline void kq_query_add(kq_query_data *d, const uint64_t counts[KQ_Q_COUNT])
{
    for (int i = 0; i < KQ_Q_COUNT; i++)
        d->acc[i] += counts[i];
}

typedef enum kq_exec_result {
    KQ_EXEC_DONE = 0,
    KQ_EXEC_PARKED,      /* completes later through kq_complete */
    KQ_EXEC_FAILED       /* ran and failed: reported, errors dependent fences */
} kq_exec_result;

struct kq_gate;

/* The fields a small command's producer and executor touch come first
 * (header, payload, the first nodes): a slot moves between the producer's
 * and a worker's core for every command, so the fewer lines it spans the
 * less that costs. Tracing fields, rarely used, come last. */
typedef struct kq_cmd {
    struct kq_cmd *next;       /* ready or deferred list, or a batch */
    struct kq_cmd *next_batch; /* a batch's first command: the batch handed
                                  over before it (kq_context.handed) */
    struct kq_cmd *prev_flight, *next_flight; /* context's program order */
    struct kq_context *ctx;
    uint64_t seq;              /* per-context submission number, from 1 */
    const char *api;           /* the API call that queued it */
    uint16_t op;
    uint8_t failed;            /* executed and failed (or its wait errored) */
    uint8_t resolved;          /* WAIT: its fence has settled */
    uint8_t pred_value;
    /* A scene whose draws all came before this context's open
     * WRITE_NO_OVERWRITE Maps: its reads of their storages are granted
     * beside the CPU's grant (kq_schedule_locked). */
    uint8_t before_maps;
    uint32_t naccess;
    uint32_t pending;          /* nodes not yet granted */
    kq_node *acc;              /* acc_inline, or an array the payload owns */
    int64_t block;             /* transfer block's flag, -1 none */
    struct ks_waiter *waiter;  /* WAIT: registered on the fence */
    const char *fail_reason;
    /* Predication: when set, one of the nodes reads this query resource,
     * and the command is skipped (completes doing nothing) if its
     * kq_query_data.passed equals pred_value when it executes. */
    struct kres_resource *pred_res;
    /* Frees the payload (and an external node array) once completed. */
    void (*release)(struct kq_cmd *cmd);
    /* kq_begin resets everything above (a field added here must be reset
     * there too); the payload below is written by whoever builds the
     * command. */
    union {
        struct {
            uint32_t first_mip, num_mips, first_slice, num_slices;
            uint32_t mask;
            uint8_t texel[16];
        } clear;
        struct {
            uint32_t sub;
            kiln_box box;
            uint32_t ring_offset; /* packed rows in the transfer ring */
            uint32_t pitch;
        } update;
        struct {
            uint32_t dst_sub, dst_x, dst_y, src_sub;
            uint32_t dst_z;
            kiln_box box;
        } copy;
        struct {
            struct kq_gate *gate;
        } gate;
        struct {
            void *scene;
            uint32_t ops;  /* its draws and clears (for a trace) */
            size_t bytes;  /* counted in its context's scene_bytes */
        } scene;
        struct {
            uint32_t first_mip, num_mips, first_slice, num_slices;
        } mips;
        struct {
            void (*fn)(struct kq_cmd *cmd); /* runs on the executing thread */
            uint64_t value;
            uint32_t kind;
        } call;
    } u;
    /* Inline nodes: their resources' references stay with the slot after
     * completion and the producer drops them when it takes the slot back
     * (kq_context.returned), so a worker never writes a resource's first
     * line, which the producer reads in every call naming it. */
    kq_node acc_inline[KQ_MAX_ACCESS];
    /* Tracing only (q->trace set), not zeroed by kq_begin: */
    uint64_t tr_begin, tr_submit, tr_grant, tr_start, tr_flow;
    uint32_t tr_tid;
} kq_cmd;

/* What kq_begin fetches of the next free slot ahead of use: the header,
 * the payload and the first two inline nodes (a copy's two resources). */
#define KQ_CMD_HOT_BYTES 256u
_Static_assert(offsetof(kq_cmd, acc_inline) + 2 * sizeof(kq_node) <= KQ_CMD_HOT_BYTES,
               "a small command's hot part spans more lines than kq_begin prefetches");

/* Transfer ring (seed 000): upload bytes allocated FIFO by the context's
 * producer with no lock. Each block starts with a kq_tblock header that
 * only the producer reads and writes; the command that reads the block
 * sets the block's flag in `done` when it completes (its token passed),
 * and the producer reclaims blocks oldest first. The flags are packed,
 * 64 to a cache line, away from the data: reading them costs the producer
 * a cross-core miss per 64 blocks, not per block. A producer that finds
 * the ring full waits under the scheduler mutex, which completions hold
 * when they set a flag, so no wakeup is lost. */
#define KQ_TBLOCK_ALIGN 64u /* a header never shares a line with older data */
typedef struct kq_tblock {
    uint32_t size;     /* bytes of the block, header and padding included */
    uint32_t flag;     /* its index in kq_transfer.done */
} kq_tblock;

typedef struct kq_transfer {
    uint8_t *base;
    uint32_t size;    /* a multiple of KQ_TBLOCK_ALIGN */
    /* One flag per possible live block (size / KQ_TBLOCK_ALIGN), used in
     * allocation order: set (release) by the completing command, cleared
     * by the producer when it reclaims the block. */
    atomic_uchar *done;
    uint32_t nflags;
    /* The fields above are read by completing workers; the producer writes
     * those below at every upload: keep them off the line the workers read. */
    char pad_[64];
    /* The producer's own, no lock: */
    uint32_t head;    /* next allocation offset */
    uint32_t tail;    /* offset of the oldest live block */
    uint32_t used;    /* bytes in live blocks, padding included */
    /* Largest `used`: written by the producer alone, read by
     * kq_device_stats. With reclaim only when a block does not fit, this
     * is the ring's size once it has gone round. */
    atomic_uint peak;
    uint32_t next_flag; /* the next block's flag */
} kq_transfer;

/* Marks the block with flag `id` (kq_cmd.block) done. Any thread. */
void kq_transfer_done(kq_transfer *t, int64_t id);

/* Producers count in the first lines, completions 64 bytes away from
 * them: a shared line would move between cores on every command. (Padding,
 * not alignas: the device lives in memory from the application's
 * allocator, which promises only malloc's alignment.) */
typedef struct kq_stats {
    atomic_uint_fast64_t queued, waits_ring, waits_transfer, waits_map, waits_finish,
        bytes_uploaded, upload_chunks, renames, transfer_peak, waits_scene;
    char pad_a_[64];
    atomic_uint_fast64_t executed;
    char pad_b_[64];
} kq_stats;

typedef struct kq_device {
    const kb_env *env;
    ks_domain *dom;             /* its mutex and condvar are the scheduler's */
    pthread_cond_t work_cv;     /* workers wait for ready commands */
    kq_cmd *ready_head, *ready_tail;
    atomic_uint nready;         /* length of the ready list (spinners read it) */
    uint32_t running;           /* executing or parked (test gates) */
    /* The three words producers touch once a batch, away from the ready
     * list a worker writes for every command (padding, as in kq_stats). */
    char pad_hand_[64];
    /* Workers blocked on work_cv / spinning before they sleep: written
     * under the mutex, read without it by a producer handing a batch over
     * (seq_cst against `handed_any`, so a worker going to sleep either sees
     * the batch or is woken). */
    atomic_uint sleepers, spinning;
    /* Set (seq_cst) by a producer after it handed a batch over without the
     * mutex; whoever takes it under the mutex schedules every context's
     * handed batches (kq_take_handed_locked). */
    atomic_uint handed_any;
    char pad_hand_end_[64];
    uint32_t cpu_maps;          /* resources mapped now, all contexts */
    struct kres_resource *mapped; /* list of them (map.dev_next) */
    uint32_t server_waits;      /* unresolved WAIT commands, all contexts */
    struct kq_context *flush_list; /* contexts whose deferred list may move */
    struct kq_context *contexts; /* every live context (their counts) */
    bool settling;
    struct kq_group *groups;    /* parallel_for groups wanting helpers */
    atomic_uint ngroups;
    const struct kq_backend *backend;
    void *backend_data;         /* the backend's per-device state */
    bool serial;
    bool stopping;
    uint32_t nworkers, workers_cap;
    pthread_t *workers;
    /* Whether a producer out of command slots first waits for them without
     * the mutex (kq_begin): the workers leave it a core of its own. */
    bool slot_spin;
    kt_tracer *trace;           /* the timeline (KILN_TRACE), NULL: off */
    atomic_uint trace_contexts, trace_workers; /* numbered for the trace */
    size_t scene_budget;        /* kq_scene_admit's bound (KQ_SCENE_BUDGET unless set) */
    kq_stats stats;
} kq_device;

/* A completion point: when every command of the context up to `seq` has
 * completed, `tl` is signaled to `value` (in error if a command since the
 * previous point failed). */
typedef struct kq_record {
    struct kq_record *next;
    uint64_t seq;
    ks_timeline *tl;            /* reference held */
    uint64_t value;
    bool error;
    /* Called (mutex held) when the point is reached, before the timeline
     * is signaled; `hook_obj` is held until then (TIMESTAMP queries). */
    void (*hook)(kres_object *obj, uint64_t arg);
    kres_object *hook_obj;
    uint64_t hook_arg;
} kq_record;

/* Three groups, 64 bytes of padding apart (padding, not alignas: contexts
 * live in memory from the application's allocator): what the scheduler
 * writes under the mutex as commands are scheduled and complete (a worker,
 * in a stream of small commands), what the producer writes at every call,
 * and the handed list that both write once a batch. Sharing a line made
 * each command cost the producer misses on lines a worker had just
 * written, and the other way round. */
typedef struct kq_context {
    kq_device *dev;
    kq_cmd *slots;
    uint32_t capacity;
    uint32_t trace_id;          /* the context's number in a trace */
    ks_timeline *tl;            /* the context's own timeline (sync tokens) */
    char pad_a_[64];
    /* ---- the scheduler's (mutex) ---- */
    kq_cmd *flight_head, *flight_tail;     /* submitted, not completed */
    kq_cmd *deferred_head, *deferred_tail; /* behind an unresolved WAIT */
    kq_record *rec_head, *rec_tail;
    bool carry_error;           /* a failure no pending point covered yet */
    uint64_t error_seq;         /* records at this seq share the error */
    uint64_t tl_next;           /* last value handed out on tl */
    struct kq_context *next_flush;
    bool in_flush_list;
    /* Completed slots, a ring of `capacity` entries: the thread that
     * completes a command (under the mutex) writes it at ret_widx and then
     * counts it in ret_put (release); the producer takes every one counted
     * since ret_take back onto free_slots without the mutex (take_back)
     * when free_slots runs out, at a finish or a flush, and then drops the
     * references their inline nodes still hold on their resources. */
    kq_cmd **returned;
    uint32_t ret_widx;          /* the next entry written (mutex) */
    _Atomic uint32_t ret_put;   /* slots returned in all, wrapping */
    uint32_t in_flight;         /* submitted, not completed (mutex) */
    size_t scene_bytes;         /* recorded scenes submitted, not completed (mutex) */
    uint32_t cpu_maps;          /* resources this context keeps mapped */
    /* Of them, mapped WRITE_NO_OVERWRITE: read by the API's draw without
     * the mutex (a destroy on another thread may release one). */
    _Atomic uint32_t no_overwrite_maps;
    kres_resource *mapped;      /* list of them (each holds a reference) */
    uint64_t next_seq;
    struct kq_context *prev_ctx, *next_ctx; /* kq_device.contexts (mutex) */
    char pad_b_[64];
    /* ---- the producer's own, no lock ---- */
    /* Its first fields (base, done) are read by workers, behind padding
     * on both sides; the rest is the producer's. */
    kq_transfer ring;
    /* Free slots, a stack. Arrays rather than lists linked through the
     * slots, so taking a slot never waits for a line another core has just
     * written to learn where the next one is. */
    kq_cmd **free_slots;
    uint32_t nfree;
    uint32_t ret_take, ret_ridx; /* returned slots taken back, the next entry read */
    /* Submitted commands not yet handed to the scheduler
     * (u_threaded_context's batch). Handed over in submission order when
     * KQ_BATCH are gathered (kq_context.handed), when a command is large
     * or a scene, and at every call that must see them scheduled: a wait
     * for a slot or transfer space, Map, finish, flush, completion points
     * (fences, signals, queries) and server waits. */
    kq_cmd *batch_head, *batch_tail;
    uint32_t batch_n;
    /* The producer's counts for kiln_device_stats. One writer, so a plain
     * load and store (kq_count) rather than a locked add on the fast path,
     * where a locked instruction also waits for every store before it;
     * kq_device_stats adds them up under the mutex and kq_context_fini
     * folds them into the device's. */
    atomic_uint_fast64_t n_queued, n_bytes_uploaded, n_upload_chunks;
    char pad_c_[64];
    /* ---- both, once a batch ---- */
    /* Full batches handed over without the mutex, newest first, linked
     * through their first command's next_batch: pushed by the producer
     * (release), taken whole (acquire) under the mutex by a worker, a
     * helping thread or the producer's own kq_flush_locked, and scheduled
     * oldest first before anything the context submits later. */
    _Atomic(kq_cmd *) handed;
    char pad_d_[64];
} kq_context;

/* Adds to a counter only the calling thread writes (readers load it). */
static inline void kq_count(atomic_uint_fast64_t *counter, uint64_t n)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

#define KQ_BATCH 16u                 /* small commands per hand-over */
#define KQ_BATCH_BYTES (64u << 10)   /* a command touching more goes at once */
/* Recorded scenes a context may have submitted and not completed, in
 * bytes (kd_scene_bytes), by default (kiln_device_desc.scene_budget; the
 * device's in kq_device.scene_budget): a producer that outruns the workers
 * waits at the next scene past it (kq_scene_admit), so memory in flight is
 * bounded by this rather than by command slots times the largest scene. */
#define KQ_SCENE_BUDGET ((size_t)32 << 20)

/* `trace`: the device's tracer or NULL; the device closes it after
 * kq_device_fini. */
kiln_result kq_device_init(kq_device *q, const kb_env *env, ks_domain *dom, bool serial,
                           uint32_t nworkers, kt_tracer *trace);
/* Stops the workers. Every context must have been finished and freed. */
void kq_device_fini(kq_device *q);
void kq_device_stats(kq_device *q, kiln_device_stats *out);

kiln_result kq_context_init(kq_context *c, kq_device *q, uint32_t capacity,
                            uint32_t transfer_size, ks_timeline *tl);
/* Unmaps everything still mapped by this context, completes its work and
 * frees it. */
void kq_context_fini(kq_context *c);

/* Reserves a command slot; waits while the ring is full. */
kiln_result kq_begin(kq_context *c, const char *api, kq_cmd **out);
/* Adds a node; returns false when the resource was already named (the
 * access merged, nothing new holds a reference). */
static inline bool kq_add_access(kq_cmd *cmd, kres_resource *res, int mode)
{
    for (uint32_t i = 0; i < cmd->naccess; i++) {
        if (cmd->acc[i].res == res) {
            if (mode == KQ_WRITE)
                cmd->acc[i].mode = KQ_WRITE;
            return false;
        }
    }
    kq_node *n = &cmd->acc_inline[cmd->naccess++];
    memset(n, 0, sizeof *n);
    n->res = res;
    n->cmd = cmd;
    n->mode = (uint8_t)mode;
    return true;
}
/* Adds a resource access; the same resource twice merges (write wins).
 * The storage is the resource's current one when the command is submitted.
 * Inline, as kq_access_owned: a copy names two resources, and the calls
 * were ~20 instructions of its producer cost. */
static inline void kq_access(kq_cmd *cmd, kres_resource *res, int mode)
{
    if (kq_add_access(cmd, res, mode))
        kres_ref(&res->base);
}
/* The same, taking over a reference the caller holds (its handle lookup's)
 * instead of adding one: two locked instructions fewer per resource on the
 * small-command path. The reference is the command's from here on. */
static inline void kq_access_owned(kq_cmd *cmd, kres_resource *res, int mode)
{
    if (!kq_add_access(cmd, res, mode))
        kres_unref(&res->base); /* the node holds one already: never the last */
}
/* Hands the command an external node array (owned by its payload, freed by
 * its release hook): nodes with `st` set use that storage (captured when
 * the API call was made), others resolve at submit. Each node's res and st
 * carry a reference the queue drops at completion. */
void kq_set_nodes(kq_cmd *cmd, kq_node *nodes, uint32_t count);
/* Reads a resource's current storage with a reference (renaming happens
 * under the scheduler mutex). */
kres_storage *kq_capture(kq_device *q, kres_resource *res);
/* Before a scene of `bytes` is submitted as `cmd` (KQ_OP_SCENE): while the
 * context's scenes in flight and this one would pass the device's
 * scene_budget and
 * another scene is in flight, executes or waits for queued work (counted
 * as waits_scene_budget, once). It waits only while some command is ready
 * or running: scenes held only by fences, server waits or maps that this
 * thread may be the one to release go over the budget rather than hang.
 * Then counts the scene in. */
void kq_scene_admit(kq_context *c, kq_cmd *cmd, size_t bytes);
/* Queues a filled command; never waits. On an ASYNC device a small
 * command joins the context's batch (no lock) and reaches the scheduler
 * with it; SERIAL devices schedule (and run) it at once. */
void kq_submit(kq_context *c, kq_cmd *cmd);
/* Hands a full batch over without the mutex (kq_batch_append). */
void kq_hand_over(kq_context *c);
/* Appends a submitted small command to the context's batch (ASYNC), and
 * hands the batch over when it is full. */
static inline void kq_batch_append(kq_context *c, kq_cmd *cmd)
{
    cmd->next = NULL;
    if (c->batch_tail)
        c->batch_tail->next = cmd;
    else
        c->batch_head = cmd;
    c->batch_tail = cmd;
    if (++c->batch_n >= KQ_BATCH)
        kq_hand_over(c);
}
/* kq_submit for a command the caller knows touches fewer than
 * KQ_BATCH_BYTES (a small update or copy): the same, with the batch
 * append inline and without kq_submit's size test (~45 instructions of a
 * 64 B update's producer cost went to the call and that test). SERIAL
 * devices and traced ones take kq_submit. */
static inline void kq_submit_small(kq_context *c, kq_cmd *cmd)
{
    if (c->dev->serial || c->dev->trace) {
        kq_submit(c, cmd);
        return;
    }
    kq_count(&c->n_queued, 1);
    kq_batch_append(c, cmd);
}
/* Hands the context's batch to the scheduler (kiln_flush, and every call
 * that must see the batch scheduled). The _locked form: mutex held. */
void kq_flush(kq_context *c);
void kq_flush_locked(kq_context *c);
/* Schedules every context's handed-over batches (mutex held); returns
 * whether there were any. Workers and helping threads call it before they
 * look for ready commands. */
bool kq_take_handed_locked(kq_device *q);
/* Gives back a reserved slot that will not be submitted. */
void kq_cancel(kq_context *c, kq_cmd *cmd);

/* Allocates `size` bytes (64-aligned, at most kq_upload_max) in the
 * transfer ring for `cmd`, with no lock unless the ring is full: then the
 * context's batch is flushed and the producer waits (helping) for the
 * oldest blocks. */
kiln_result kq_upload_alloc(kq_context *c, kq_cmd *cmd, uint32_t size, uint8_t **out_ptr);
/* Largest single upload block. */
static inline uint32_t kq_upload_max(const kq_context *c) { return (c->ring.size / 2) & ~15u; }

/* Maps: `type` is a kiln_map_type already validated against usage. A
 * WRITE_DISCARD that renamed the resource sets *out_retired to the storage
 * it replaced; NULL otherwise. The pointer is to compare with, never to
 * read: the resource's reference is gone, and with no queued reader left
 * the storage is already freed. */
kiln_result kq_map(kq_context *c, kres_resource *res, uint32_t sub, kiln_map_type type,
                   bool do_not_wait, kiln_mapped_subresource *out, const kres_storage **out_retired,
                   kiln_log_id *out_id);
kiln_result kq_unmap(kq_context *c, kres_resource *res, uint32_t sub);
/* Unmaps everything the context keeps mapped. */
void kq_unmap_all(kq_context *c);
/* A thread that would wait works instead (mutex held, released while it
 * works): it runs one ready command or helps a kq_parallel_for group, and
 * returns false when there was nothing to do. In SERIAL mode the caller is
 * the only executor; in ASYNC mode it takes the core the default worker
 * count (one fewer than the CPUs) leaves to the application, so the
 * machine is not oversubscribed while the application runs and is fully
 * used while it waits. */
bool kq_help_locked(kq_device *q);
/* SERIAL mode: runs every ready command on the calling thread (mutex held). */
void kq_drain_serial(kq_device *q);
/* Releases every CPU map of a resource being destroyed. */
void kq_resource_destroyed(kq_device *q, kres_resource *res);

kiln_result kq_finish(kq_context *c);

/* Whether queued work can no longer progress unless the calling thread
 * unmaps something (kiln_map): nothing is ready or running, no server wait
 * is unresolved, and every CPU map is this thread's or `c`'s. Runs one
 * ready command first if there is one (then: false). For waits outside the
 * queue on work that only the queue completes (the swapchain's). */
bool kq_stalled(kq_device *q, kq_context *c);
/* The same test without helping, mutex held; `c` NULL: no context (every
 * map counts by its thread). */
bool kq_stalled_locked(const kq_device *q, const kq_context *c);

/* ---- synchronization (sync.c in this folder) ---- */

/* Adds a completion point: tl reaches value when the context's commands
 * queued so far have completed. Caller holds the mutex. */
kiln_result kq_record_locked(kq_context *c, ks_timeline *tl, uint64_t value);
/* The same with a hook called (mutex held) when the point is reached; the
 * record holds a reference to `obj` until then. The hook must not take the
 * mutex or call into the API. */
kiln_result kq_record_hook_locked(kq_context *c, ks_timeline *tl, uint64_t value,
                                  void (*hook)(kres_object *obj, uint64_t arg), kres_object *obj,
                                  uint64_t arg);
/* Server wait: commands queued after it run once `f` settles. */
kiln_result kq_wait_fence(kq_context *c, ks_fence *f, const char *api);
/* Resolves fired server waits and moves deferred commands; loops until
 * nothing more moves. Caller holds the mutex. */
void kq_settle_locked(kq_device *q);
/* Marks the device lost: every waiter fires with DEVICE_LOST. */
void kq_device_lose(kq_device *q);

/* ---- test gate (src/api/test_hooks.h exposes it) ---- */
typedef struct kq_gate {
    kq_device *dev;
    kb_env env;         /* copy: the gate may outlive the device's use of it */
    bool open;
    bool destroyed;     /* freed when the last queued hold completes */
    uint32_t entered;   /* commands that reached the gate */
    uint32_t holds;     /* queued commands naming this gate */
    kq_cmd *parked;     /* commands waiting at the gate */
} kq_gate;

/* The test hook's gate lifetime (mutex held): a hold was queued / done. */
void kq_gate_hold_done(kq_gate *g);

void kq_gate_open(kq_gate *g);

/* Runs fn(arg, i) for i in [0, n) on the calling thread and every idle
 * worker; returns when all have run. Call only from inside an executing
 * command. Order of calls is unspecified: results must not depend on it. */
typedef void (*kq_task_fn)(void *arg, uint32_t index);
/* `name` (static) labels each index's slice in a trace ("tile"). */
void kq_parallel_for(kq_device *q, uint32_t n, kq_task_fn fn, void *arg, const char *name);
/* Records a wait that began at t0 (a kt_now() taken only when tracing),
 * ending now; `resource` is a handle id or 0. */
void kq_trace_wait(kq_device *q, kt_wait cause, uint64_t t0, uint32_t resource);

/* The backend vtable: the one way the queue's executor (and the device)
 * reaches a backend: src/raster (soft) and src/gl (osmesa) each define
 * one, src/driver finds them by kiln_backend. A backend receives the
 * neutral records of src/driver (a kd_scene in cmd->u.scene.scene) and the
 * storages the scheduler granted in cmd->acc; it never sees src/api.
 * Every entry runs without the scheduler mutex. */
#define KQ_BACKEND_NEEDS_GLSL 1u /* shaders without GLSL cannot run */
#define KQ_BACKEND_QUERIES 2u    /* scenes count into their queries
                                    (kd_scene_count): occlusion and
                                    pipeline statistics work */
#define KQ_BACKEND_TEXEL_FORMATS 4u /* the formats of texel.c (R8G8_UNORM
                                       and after) and the BC formats */
#define KQ_BACKEND_GEOMETRY 8u   /* runs geometry shaders and adjacency draws */
#define KQ_BACKEND_SAMPLER_EXT (1u << 8) /* ANISOTROPIC filtering and MIRROR_ONCE */
#define KQ_BACKEND_STREAM_OUTPUT 16u /* stream output, draw_auto and the SO
                                        queries */
#define KQ_BACKEND_MULTISAMPLE 128u /* 4x textures: rendering, clears and
                                       resolve */
#define KQ_BACKEND_TEXTURE_KINDS 512u /* 1D, 3D and cube textures (issue 12) */
#define KQ_BACKEND_VS_RESOURCES 32u /* vertex-stage views and samplers */
#define KQ_BACKEND_BUFFER_VIEWS 1024u /* typed buffer views (kres_view dim BUFFER) */
typedef struct kq_backend {
    const char *name; /* "soft", "osmesa": for logs and progress lines */
    uint32_t caps;    /* KQ_BACKEND_* bits */
    uint32_t srv_slots; /* pixel-stage view slots it reads; 0: all
                           KILN_MAX_SHADER_RESOURCES (binds past it are
                           refused, BACKEND_FEATURE) */
    /* Creates the per-device state, stored in q->backend_data, once the
     * queue's workers run (`threads`: how many threads execute, the
     * device's explicit worker count, else the CPU count since the
     * waiting application thread helps the default workers; 0 in SERIAL
     * mode). On failure returns the code for kiln_device_create and
     * writes a one-line reason into `why`. */
    kiln_result (*create)(struct kq_device *q, uint32_t threads, void **out, char *why,
                          size_t why_size);
    /* Frees it, after the workers stopped: nothing executes any more. */
    void (*destroy)(void *data);
    /* KQ_OP_SCENE: the draws and clears of a kd_scene, every node granted.
     * Returns DONE, FAILED (cmd->fail_reason set), or PARKED when another
     * thread completes the command later through kq_complete. */
    kq_exec_result (*scene)(struct kq_device *q, struct kq_cmd *cmd);
    /* KQ_OP_GENERATE_MIPS of the view range in cmd->u.mips on cmd->acc[0]. */
    kq_exec_result (*generate_mips)(struct kq_device *q, struct kq_cmd *cmd);
    /* Makes a storage's bytes current when the backend holds newer ones
     * (st->backend_newer): called by the executor before its copies,
     * updates and clears read or write them, while the command holds its
     * grants. Map needs no such call: backends write only render targets,
     * depth-stencils and mipmapped textures, which are DEFAULT resources,
     * and those cannot be mapped (a copy to STAGING goes through the
     * executor). NULL: storage bytes are always current. */
    void (*sync_storage)(struct kq_device *q, kres_storage *st);
} kq_backend;

/* Executor entry (exec.c): runs one command. */
kq_exec_result kq_execute(kq_cmd *cmd);
/* Completes a command: releases its grants and slot. Takes the mutex. */
void kq_complete(kq_cmd *cmd);
/* Completes a command that was PARKED, with the result it finally had
 * (FAILED: logged with cmd->fail_reason, and dependent fences error). */
void kq_complete_result(kq_cmd *cmd, kq_exec_result res);

#endif
