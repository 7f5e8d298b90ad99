/*
 * Helpers shared by the test_sync_*.c programs (timelines, fences, several
 * contexts). Header-only: each test includes it once.
 *
 * su_cb: a kiln_fence_callback target that counts its calls atomically and
 *        keeps the last status and fence id.
 * su_pattern: bytes that depend on a seed everywhere (two seeds differ in
 *        nearly every byte), so a stale copy is caught.
 * su_read_buffer / su_read_texture: bytes of a DEFAULT resource, read back
 *        through a STAGING copy and Map READ on the given context.
 * SU_OK(call): the call returns KILN_OK and logs nothing.
 * SU_RETURNS(call, code): returns `code` and logs nothing (the answers that
 *        are not errors: WAS_STILL_DRAWING, TIMEOUT, COMMAND_FAILED, ...).
 */
#ifndef KILN_TEST_SYNC_UTIL_H
#define KILN_TEST_SYNC_UTIL_H

#include "harness.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SU_OK(call) SU_RETURNS(call, KILN_OK)

#define SU_RETURNS(call, code)                                                                     \
    do {                                                                                           \
        uint32_t sl_ = th_log_count();                                                             \
        CHECK_RESULT(call, code);                                                                  \
        th_check(th_log_count() == sl_, #call " logs nothing", __FILE__, __LINE__);                \
        if (th_log_count() != sl_)                                                                 \
            fprintf(stderr, "    logged %u times, last id %s\n", th_log_count() - sl_,            \
                    kiln_log_id_string(th_log_last()));                                            \
    } while (0)

/* The fence's polled status is `st`. */
#define CHECK_POLL(dev, f, st)                                                                     \
    do {                                                                                           \
        kiln_fence_status ps_ = (kiln_fence_status)-1;                                             \
        CHECK_RESULT(kiln_fence_poll(dev, f, &ps_), KILN_OK);                                      \
        th_check(ps_ == (st), "poll(" #f ") == " #st, __FILE__, __LINE__);                         \
        if (ps_ != (st))                                                                           \
            fprintf(stderr, "    got status %d\n", (int)ps_);                                      \
    } while (0)

static inline const char *su_mode_name(kiln_exec_mode m)
{
    return m == KILN_EXEC_SERIAL ? "SERIAL" : "ASYNC";
}

/* ---- fence callbacks ---- */

typedef struct su_cb {
    atomic_uint calls;
    atomic_int status;
    atomic_uint fence_id;
} su_cb;

static inline void su_cb_init(su_cb *c)
{
    atomic_init(&c->calls, 0);
    atomic_init(&c->status, 1); /* no kiln_result has this value */
    atomic_init(&c->fence_id, 0);
}

static inline void su_cb_fn(kiln_fence fence, kiln_result status, void *user)
{
    su_cb *c = user;
    atomic_store(&c->status, (int)status);
    atomic_store(&c->fence_id, fence.id);
    atomic_fetch_add(&c->calls, 1);
}

static inline unsigned su_calls(su_cb *c) { return atomic_load(&c->calls); }
static inline kiln_result su_status(su_cb *c) { return (kiln_result)atomic_load(&c->status); }

/* ---- data ---- */

static inline uint8_t su_byte(uint32_t seed, uint32_t k)
{
    uint32_t x = seed * 2654435761u ^ (k + 0x9e3779b9u) * 40503u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    return (uint8_t)(x ^ (x >> 8) ^ seed);
}

static inline void su_pattern(void *out, size_t n, uint32_t seed)
{
    uint8_t *p = out;
    for (size_t k = 0; k < n; k++)
        p[k] = su_byte(seed, (uint32_t)k);
}

static inline void su_sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* Reads `size` bytes of buffer `b` through a STAGING copy. 1 on success. */
static inline int su_read_buffer(kiln_device *dev, kiln_context *ctx, kiln_buffer b, uint32_t size,
                                 void *out)
{
    kiln_buffer s = {0};
    kiln_buffer_desc d = {size, KILN_USAGE_STAGING, 0, KILN_CPU_ACCESS_READ};
    if (kiln_create_buffer(dev, &d, NULL, &s) != KILN_OK)
        return 0;
    int ok = kiln_copy_resource(ctx, kiln_buffer_resource(s), kiln_buffer_resource(b)) == KILN_OK;
    kiln_mapped_subresource m;
    if (ok && kiln_map(ctx, kiln_buffer_resource(s), 0, KILN_MAP_READ, 0, &m) == KILN_OK) {
        memcpy(out, m.data, size);
        kiln_unmap(ctx, kiln_buffer_resource(s), 0);
    } else {
        ok = 0;
    }
    kiln_destroy_buffer(dev, s);
    return ok;
}

/* Buffer `b` (of `size` bytes) holds su_pattern(seed). */
static inline int su_buffer_is(kiln_device *dev, kiln_context *ctx, kiln_buffer b, uint32_t size,
                               uint32_t seed)
{
    uint8_t *got = malloc(size), *want = malloc(size);
    su_pattern(want, size, seed);
    int ok = su_read_buffer(dev, ctx, b, size, got) && memcmp(got, want, size) == 0;
    free(got);
    free(want);
    return ok;
}

/* A buffer of `size` bytes holding su_pattern(seed) (seed 0: zeros). */
static inline kiln_buffer su_buffer(kiln_device *dev, uint32_t size, kiln_usage usage, uint32_t seed)
{
    kiln_buffer b = {0};
    uint8_t *bytes = malloc(size);
    if (seed)
        su_pattern(bytes, size, seed);
    else
        memset(bytes, 0, size);
    kiln_subresource_data init = {bytes, 0};
    kiln_buffer_desc d = {size, usage, usage == KILN_USAGE_STAGING ? 0 : KILN_BIND_VERTEX_BUFFER, 0};
    kiln_result r = kiln_create_buffer(dev, &d, &init, &b);
    th_check(r == KILN_OK, "su_buffer: kiln_create_buffer succeeds", __FILE__, __LINE__);
    free(bytes);
    return b;
}

#endif
