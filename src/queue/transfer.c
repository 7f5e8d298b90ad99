/* The transfer ring (seed 000): upload bytes are copied in at call time and
 * each block is freed pending its command's completion (the token); blocks
 * are reclaimed oldest first, so memory never exceeds the ring's size.
 *
 * The producer allocates and reclaims with no lock (u_threaded_context's
 * and Chromium's rings work the same way): only the context's own thread
 * moves head and tail and touches the headers; a block's done flag, in an
 * array of its own, is the one byte another thread writes. */
#include "queue.h"
#include "internal.h"

#include <string.h>

#define HDR KQ_TBLOCK_ALIGN /* the header takes one aligned unit */

/* The bytes of a ring written at creation (the default size). */
#define KQ_TRANSFER_PREFAULT (4u << 20)

kiln_result kq_transfer_init(kq_transfer *t, const kb_env *env, uint32_t size)
{
    memset(t, 0, sizeof *t);
    atomic_init(&t->peak, 0);
    t->size = size & ~(KQ_TBLOCK_ALIGN - 1);
    t->nflags = t->size / KQ_TBLOCK_ALIGN; /* a block takes one unit at least */
    t->base = kb_alloc(env, t->size);
    t->done = kb_calloc(env, t->nflags);
    if (!t->base || !t->done) {
        kq_transfer_fini(t, env);
        return KILN_E_OUT_OF_MEMORY;
    }
    /* Touch the pages now: the producer writes the ring at every upload,
     * and on its first trip round a fresh ring each 4 KiB page cost a
     * page fault inside the call (on this VM a 64 B update went from ~40
     * to ~400-450 ns per call, averaged over its first 4 MiB of uploads).
     * At most KQ_TRANSFER_PREFAULT bytes: the default ring whole, while a
     * ring configured up to 1 GiB stays a bound, not memory committed at
     * creation (its later pages fault on their first use, as before). */
    memset(t->base, 0, t->size < KQ_TRANSFER_PREFAULT ? t->size : KQ_TRANSFER_PREFAULT);
    return KILN_OK;
}

void kq_transfer_fini(kq_transfer *t, const kb_env *env)
{
    kb_free(env, t->base, t->size);
    kb_free(env, (void *)t->done, t->nflags);
    t->base = NULL;
    t->done = NULL;
}

static kq_tblock *header(const kq_transfer *t, uint32_t off)
{
    return (kq_tblock *)(void *)(t->base + off);
}

void kq_transfer_done(kq_transfer *t, int64_t id)
{
    atomic_store_explicit(&t->done[id], 1, memory_order_release);
}

/* Frees the oldest blocks whose commands have completed. */
static void reclaim(kq_transfer *t)
{
    while (t->used) {
        kq_tblock *b = header(t, t->tail);
        if (!atomic_load_explicit(&t->done[b->flag], memory_order_acquire))
            break;
        atomic_store_explicit(&t->done[b->flag], 0, memory_order_relaxed);
        t->used -= b->size;
        t->tail += b->size;
        if (t->tail == t->size)
            t->tail = 0;
    }
}

/* Returns the block's flag. Flags are taken in allocation order and freed
 * oldest first like the blocks, and there are as many as blocks can be
 * live, so the next one is always free. */
static uint32_t put_block(kq_transfer *t, uint32_t off, uint32_t n, unsigned done)
{
    kq_tblock *b = header(t, off);
    b->size = n;
    b->flag = t->next_flag;
    t->next_flag = t->next_flag + 1 == t->nflags ? 0 : t->next_flag + 1;
    if (done)
        atomic_store_explicit(&t->done[b->flag], 1, memory_order_relaxed);
    t->used += n;
    t->head = off + n == t->size ? 0 : off + n;
    return b->flag;
}

/* Finds room for a block of n bytes (a multiple of the alignment); returns
 * false when the ring is full. An empty ring goes on from head rather than
 * restarting at 0: bytes a worker has just read are still in its core's
 * cache, and writing them again costs the producer a cross-core
 * invalidation per line (on the 2-core machine: 64 KiB into just-read
 * memory 7-10 us, into memory last touched a ring ago 2.3 us). Inlined:
 * every upload takes it, and as a call it was ~40 instructions of a 64 B
 * update's producer cost. */
static inline __attribute__((always_inline)) bool try_alloc(kq_transfer *t, uint32_t n,
                                                            uint32_t *out_off, uint32_t *out_flag)
{
    if (t->used == 0) {
        if (t->size - t->head < n)
            t->head = 0;
        t->tail = t->head;
    } else if (t->head > t->tail) { /* live bytes in [tail, head) */
        if (t->size - t->head < n) {
            if (t->tail < n)
                return false;
            put_block(t, t->head, t->size - t->head, 1); /* padding to the end */
        }
    } else if (t->tail - t->head < n) { /* live bytes in [tail, size) and [0, head) */
        return false;
    }
    *out_off = t->head;
    *out_flag = put_block(t, t->head, n, 0);
    return true;
}

kiln_result kq_upload_alloc(kq_context *c, kq_cmd *cmd, uint32_t size, uint8_t **out_ptr)
{
    kq_device *q = c->dev;
    kq_transfer *t = &c->ring;
    uint32_t n = HDR + (uint32_t)KB_ALIGN_UP(size ? size : 1, KQ_TBLOCK_ALIGN);
    uint32_t off, flag;
    /* Reclaim only when the block does not fit: a done flag was written by
     * the core that ran its command, so reading it costs a cross-core
     * miss. Read at every allocation, that was the largest part of an
     * update's producer cost; read in a run when the ring runs out, 64
     * flags come with each miss and the headers are the producer's own. */
    if (!try_alloc(t, n, &off, &flag) && (reclaim(t), !try_alloc(t, n, &off, &flag))) {
        pthread_mutex_lock(&q->dom->mu);
        /* The batch must reach the scheduler before any wait: its blocks
         * free only once it runs. Completions set done flags under this
         * mutex, so checking here and then waiting loses no wakeup. */
        kq_flush_locked(c);
        atomic_fetch_add_explicit(&q->stats.waits_transfer, 1, memory_order_relaxed);
        uint64_t t0 = q->trace ? kt_now() : 0;
        for (;;) {
            reclaim(t);
            if (try_alloc(t, n, &off, &flag))
                break;
            kiln_result r = kq_wait_progress(q, c);
            if (r != KILN_OK) {
                ks_unlock(q->dom);
                return r;
            }
        }
        kq_trace_wait(q, KT_WAIT_TRANSFER_FULL, t0, 0);
        ks_unlock(q->dom);
    }
    cmd->block = flag;
    if (t->used > atomic_load_explicit(&t->peak, memory_order_relaxed))
        atomic_store_explicit(&t->peak, t->used, memory_order_relaxed); /* one writer */
    kq_count(&c->n_bytes_uploaded, size);
    kq_count(&c->n_upload_chunks, 1);
    *out_ptr = t->base + off + HDR;
    return KILN_OK;
}
