/* The device's handle table: typed ids (index + generation) for every
 * object, so a stale or wrong-typed handle is caught instead of followed. */
#include "resources.h"

#include <sched.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_RELAX() _mm_pause()
#else
#define CPU_RELAX() ((void)0)
#endif

#define INDEX_BITS 20u
#define INDEX_MASK ((1u << INDEX_BITS) - 1u)
#define GEN_MASK 0xfffu

/* The table's lock is a spinlock, not a mutex: every API call that names
 * an object looks it up, a few dozen instructions under the lock, and a
 * mutex's lock and unlock cost more than that (two locked instructions and
 * about 60 others, against one and a handful). Holders never wait inside;
 * a waiter yields after a few spins so a preempted holder gets to run. */
static void table_lock_contended(kres_handles *h)
{
    for (unsigned spins = 0;; spins++) {
        if (!atomic_load_explicit(&h->busy, memory_order_relaxed) &&
            !atomic_exchange_explicit(&h->busy, true, memory_order_acquire))
            return;
        if (spins < 100)
            CPU_RELAX();
        else
            sched_yield();
    }
}

/* The uncontended case, one exchange, is inlined into every lookup; the
 * spinning is not. */
static inline void table_lock(kres_handles *h)
{
    if (!atomic_exchange_explicit(&h->busy, true, memory_order_acquire))
        return;
    table_lock_contended(h);
}

static void table_unlock(kres_handles *h)
{
    atomic_store_explicit(&h->busy, false, memory_order_release);
}

kiln_result kres_handles_init(kres_handles *h, const kb_env *env)
{
    memset(h, 0, sizeof *h);
    h->env = env;
    atomic_init(&h->busy, false);
    return KILN_OK;
}

void kres_handles_fini(kres_handles *h)
{
    for (uint32_t i = 0; i < h->count; i++) {
        if (h->slots[i].obj)
            kres_unref(h->slots[i].obj);
    }
    kb_free(h->env, h->slots, sizeof(kres_slot) * h->capacity);
}

static bool grow(kres_handles *h)
{
    if (h->capacity >= KRES_MAX_OBJECTS)
        return false;
    uint32_t cap = h->capacity ? h->capacity * 2 : 64;
    if (cap > KRES_MAX_OBJECTS)
        cap = KRES_MAX_OBJECTS;
    kres_slot *s = kb_alloc(h->env, sizeof(kres_slot) * cap);
    if (!s)
        return false;
    if (h->slots)
        memcpy(s, h->slots, sizeof(kres_slot) * h->count);
    kb_free(h->env, h->slots, sizeof(kres_slot) * h->capacity);
    h->slots = s;
    h->capacity = cap;
    return true;
}

uint32_t kres_handles_add(kres_handles *h, kres_object *obj, kiln_result *out_r)
{
    table_lock(h);
    uint32_t index;
    if (h->free_head) {
        index = h->free_head - 1;
        h->free_head = h->slots[index].next_free;
        if (!h->free_head)
            h->free_tail = 0;
    } else {
        if (h->count == h->capacity && !grow(h)) {
            *out_r = h->capacity >= KRES_MAX_OBJECTS ? KILN_E_INVALID_CALL : KILN_E_OUT_OF_MEMORY;
            table_unlock(h);
            return 0;
        }
        index = h->count++;
        h->slots[index].generation = 0;
    }
    kres_slot *s = &h->slots[index];
    s->obj = obj;
    s->type = obj->type;
    s->next_free = 0;
    uint32_t id = (s->generation << INDEX_BITS) | (index + 1);
    obj->handle = id;
    table_unlock(h);
    *out_r = KILN_OK;
    return id;
}

/* Caller holds the table lock. Always inlined: as a call it was a quarter
 * of a lookup's instructions (arguments and saved registers). */
static inline __attribute__((always_inline)) kres_slot *
find(kres_handles *h, uint32_t id, kres_type lo, kres_type hi, kiln_log_id *out_id)
{
    if (id == 0) {
        *out_id = KILN_LOG_HANDLE_NULL;
        return NULL;
    }
    uint32_t index = (id & INDEX_MASK);
    if (index == 0 || index > h->count) {
        *out_id = KILN_LOG_HANDLE_STALE;
        return NULL;
    }
    kres_slot *s = &h->slots[index - 1];
    if (!s->obj || s->generation != (id >> INDEX_BITS)) {
        *out_id = KILN_LOG_HANDLE_STALE;
        return NULL;
    }
    if (s->type < lo || s->type > hi) {
        *out_id = KILN_LOG_HANDLE_WRONG_TYPE;
        return NULL;
    }
    return s;
}

kres_object *kres_handles_get(kres_handles *h, uint32_t id, kres_type lo, kres_type hi,
                              kiln_log_id *out_id)
{
    table_lock(h);
    kres_slot *s = find(h, id, lo, hi, out_id);
    kres_object *obj = NULL;
    if (s) {
        obj = s->obj;
        kres_ref(obj);
    }
    table_unlock(h);
    return obj;
}

bool kres_handles_get2(kres_handles *h, const uint32_t ids[2], kres_type lo, kres_type hi,
                       kres_object *out[2], uint32_t *out_which, kiln_log_id *out_id)
{
    table_lock(h);
    kres_slot *s0 = find(h, ids[0], lo, hi, out_id);
    kres_slot *s1 = s0 ? find(h, ids[1], lo, hi, out_id) : NULL;
    if (!s1) {
        table_unlock(h);
        *out_which = s0 ? 1 : 0;
        out[0] = out[1] = NULL;
        return false;
    }
    out[0] = s0->obj;
    out[1] = s1->obj;
    kres_ref(out[0]);
    kres_ref(out[1]);
    table_unlock(h);
    return true;
}

kres_object *kres_handles_remove(kres_handles *h, uint32_t id, kres_type lo, kres_type hi,
                                 kiln_log_id *out_id)
{
    table_lock(h);
    kres_slot *s = find(h, id, lo, hi, out_id);
    kres_object *obj = NULL;
    if (s) {
        uint32_t index = (uint32_t)(s - h->slots);
        obj = s->obj;
        s->obj = NULL;
        s->type = KRES_TYPE_NONE;
        s->generation++;
        s->next_free = 0;
        /* A slot whose generation would wrap is retired for good, so a
         * stale handle can never become valid again. */
        if (s->generation > GEN_MASK) {
            table_unlock(h);
            return obj;
        }
        if (h->free_tail)
            h->slots[h->free_tail - 1].next_free = index + 1;
        else
            h->free_head = index + 1;
        h->free_tail = index + 1;
    }
    table_unlock(h);
    return obj;
}

uint32_t kres_handles_live(kres_handles *h)
{
    uint32_t n = 0;
    table_lock(h);
    for (uint32_t i = 0; i < h->count; i++)
        n += h->slots[i].obj != NULL;
    table_unlock(h);
    return n;
}
