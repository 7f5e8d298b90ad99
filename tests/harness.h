/*
 * Shared test helpers: a logger that records message ids, CHECK macros
 * that report file:line and keep going, and a device factory.
 * A test's main returns th_exit() (non-zero when any CHECK failed) and
 * prints "N passed, N failed".
 */
#ifndef KILN_TEST_HARNESS_H
#define KILN_TEST_HARNESS_H

#include "kiln.h"

#include <stdint.h>
#include <stdio.h>

typedef struct th_log {
    uint32_t count;              /* calls of the log callback */
    uint32_t per_id[KILN_LOG_ID_COUNT];
    kiln_log_id last_id;
    char last_message[512];
    int quiet;                   /* 1: do not echo messages */
} th_log;

/* Global recorder (tests are single-purpose programs). Thread-safe. */
extern th_log th_logs;
void th_log_fn(kiln_log_level level, kiln_log_id id, const char *message, void *user);
void th_log_reset(void);
uint32_t th_log_count(void);
kiln_log_id th_log_last(void);

/* A device with the recording logger. threads 0: default. */
kiln_device *th_device(kiln_exec_mode mode, uint32_t threads);
kiln_device *th_device_desc(kiln_device_desc desc); /* logger filled in */
/* An osmesa device (logger filled in), or NULL with a line on stderr when
 * this machine has no GL provider for it. */
kiln_device *th_osmesa_device(void);

extern int th_passed, th_failed;
void th_check(int ok, const char *expr, const char *file, int line);
#define CHECK(e) th_check(!!(e), #e, __FILE__, __LINE__)
#define CHECK_EQ_INT(a, b)                                                              \
    do {                                                                               \
        long long a_ = (long long)(a), b_ = (long long)(b);                             \
        th_check(a_ == b_, #a " == " #b, __FILE__, __LINE__);                           \
        if (a_ != b_)                                                                  \
            fprintf(stderr, "    got %lld, expected %lld\n", a_, b_);                   \
    } while (0)
#define CHECK_RESULT(call, expected)                                                    \
    do {                                                                               \
        kiln_result r_ = (call);                                                       \
        th_check(r_ == (expected), #call " == " #expected, __FILE__, __LINE__);         \
        if (r_ != (expected))                                                          \
            fprintf(stderr, "    got %s\n", kiln_result_string(r_));                   \
    } while (0)
/* The call fails with `code`, logs exactly once, with `id`. */
#define CHECK_FAILS(call, code, id)                                                     \
    do {                                                                               \
        th_log_reset();                                                                \
        CHECK_RESULT(call, code);                                                      \
        th_check(th_log_count() == 1 && th_log_last() == (id),                          \
                 #call " logs once with " #id, __FILE__, __LINE__);                    \
        if (!(th_log_count() == 1 && th_log_last() == (id)))                            \
            fprintf(stderr, "    logged %u times, last id %s\n", th_log_count(),        \
                    kiln_log_id_string(th_log_last()));                                \
    } while (0)

int th_exit(void);

/* Deterministic PRNG (xorshift64*). */
typedef struct th_rng { uint64_t s; } th_rng;
static inline uint64_t th_next(th_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 2685821657736338717ull;
}
static inline uint32_t th_below(th_rng *r, uint32_t n) { return n ? (uint32_t)(th_next(r) % n) : 0; }
/* A float in [lo, hi): 24 random bits. */
static inline float th_frand(th_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)(th_next(r) >> 40) / (float)(1u << 24);
}

#endif
