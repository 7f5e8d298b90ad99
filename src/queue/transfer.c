/* The transfer ring (seed 000): upload bytes are copied in at call time and
 * each block is freed pending its command's completion (the token); blocks
 * are reclaimed oldest first, so memory never exceeds the ring's size. */
#include "queue.h"
#include "internal.h"

#include <string.h>

kiln_result kq_transfer_init(kq_transfer *t, const kb_env *env, uint32_t size, uint32_t max_cmds)
{
    memset(t, 0, sizeof *t);
    t->size = size;
    /* Each command owns at most one block, and each allocation may add one
     * padding block at the wrap; the table grows when completed blocks wait
     * behind an older one that cannot complete yet. */
    t->nblocks = max_cmds * 2 + 4;
    t->base = kb_alloc(env, size);
    t->blocks = kb_calloc(env, sizeof(kq_tblock) * t->nblocks);
    if (!t->base || !t->blocks) {
        kq_transfer_fini(t, env);
        return KILN_E_OUT_OF_MEMORY;
    }
    return KILN_OK;
}

void kq_transfer_fini(kq_transfer *t, const kb_env *env)
{
    kb_free(env, t->base, t->size);
    kb_free(env, t->blocks, sizeof(kq_tblock) * t->nblocks);
    t->base = NULL;
    t->blocks = NULL;
}

/* Frees the oldest blocks whose commands have completed. */
static void reclaim(kq_transfer *t)
{
    while (t->count && t->blocks[t->first].done) {
        t->used -= t->blocks[t->first].size;
        t->first = (t->first + 1) % t->nblocks;
        t->first_id++;
        t->count--;
    }
    if (t->count == 0)
        t->head = 0;
}

/* Blocks are named by a running id; the table position of id is
 * first + (id - first_id), modulo its size. */
static int64_t push_block(kq_transfer *t, uint32_t offset, uint32_t size, uint8_t done)
{
    uint32_t idx = (t->first + t->count) % t->nblocks;
    t->blocks[idx] = (kq_tblock){offset, size, done};
    int64_t id = (int64_t)(t->first_id + t->count);
    t->count++;
    t->used += size;
    return id;
}

static bool grow_blocks(kq_transfer *t, const kb_env *env)
{
    uint32_t cap = t->nblocks * 2;
    kq_tblock *b = kb_alloc(env, sizeof(kq_tblock) * cap);
    if (!b)
        return false;
    for (uint32_t i = 0; i < t->count; i++)
        b[i] = t->blocks[(t->first + i) % t->nblocks];
    kb_free(env, t->blocks, sizeof(kq_tblock) * t->nblocks);
    t->blocks = b;
    t->nblocks = cap;
    t->first = 0;
    return true;
}

void kq_transfer_done(kq_transfer *t, int64_t id)
{
    t->blocks[(t->first + (uint32_t)((uint64_t)id - t->first_id)) % t->nblocks].done = 1;
}

/* Finds room for n bytes; returns false when the ring is full. */
static bool try_alloc(kq_transfer *t, uint32_t n, uint32_t *out_off, int64_t *out_idx)
{
    if (t->count + 2 > t->nblocks)
        return false;
    uint32_t tail = t->count ? t->blocks[t->first].offset : t->head;
    bool wrapped = t->count && t->head <= tail;
    uint32_t off;
    if (!wrapped) {
        if (t->size - t->head >= n) {
            off = t->head;
        } else if (tail >= n) {
            if (t->size > t->head)
                push_block(t, t->head, t->size - t->head, 1); /* padding */
            off = 0;
        } else {
            return false;
        }
    } else {
        if (tail - t->head < n)
            return false;
        off = t->head;
    }
    *out_idx = push_block(t, off, n, 0);
    t->head = off + n;
    *out_off = off;
    return true;
}

kiln_result kq_upload_alloc(kq_context *c, kq_cmd *cmd, uint32_t size, uint8_t **out_ptr)
{
    kq_device *q = c->dev;
    kq_transfer *t = &c->ring;
    uint32_t n = (uint32_t)KB_ALIGN_UP(size ? size : 1, 16);
    uint32_t off = 0;
    int64_t idx = -1;
    bool counted = false;
    pthread_mutex_lock(&q->dom->mu);
    /* Taken anyway: the batch goes to the scheduler under the same lock
     * (and must, before any wait: its blocks free only once it runs). */
    kq_flush_locked(c);
    reclaim(t);
    while (t->count + 2 > t->nblocks && grow_blocks(t, q->env)) {
    }
    while (!try_alloc(t, n, &off, &idx)) {
        if (!counted) {
            atomic_fetch_add_explicit(&q->stats.waits_transfer, 1, memory_order_relaxed);
            counted = true;
        }
        kiln_result r = kq_wait_progress(q, c);
        if (r != KILN_OK) {
            ks_unlock(q->dom);
            return r;
        }
        reclaim(t);
        while (t->count + 2 > t->nblocks && grow_blocks(t, q->env)) {
        }
    }
    cmd->block = idx;
    uint64_t used = t->used;
    uint64_t peak = atomic_load_explicit(&q->stats.transfer_peak, memory_order_relaxed);
    while (used > peak && !atomic_compare_exchange_weak(&q->stats.transfer_peak, &peak, used)) {
    }
    ks_unlock(q->dom);
    atomic_fetch_add_explicit(&q->stats.bytes_uploaded, size, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->stats.upload_chunks, 1, memory_order_relaxed);
    *out_ptr = t->base + off;
    return KILN_OK;
}
