/*
 * base: what every module shares - the device's allocator and logger
 * (kb_env), thread primitives, and small helpers.
 *
 * Contract: kb_env is immutable after device creation and may be used from
 * any thread. kb_log makes exactly one call to the user's log callback.
 */
#ifndef KILN_BASE_H
#define KILN_BASE_H

#include "kiln.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kb_env {
    kiln_allocator alloc;
    kiln_log_fn log_fn;
    void *log_user;
} kb_env;

void kb_env_init(kb_env *env, const kiln_device_desc *desc);

/* Allocation through the device's hook; NULL on failure. Sizes must match
 * between alloc and free. kb_calloc zeroes. */
void *kb_alloc(const kb_env *env, size_t size);
void *kb_calloc(const kb_env *env, size_t size);
void kb_free(const kb_env *env, void *ptr, size_t size);

/* One log call: "<api>: <detail>" where detail is printf-formatted. Returns
 * `r` so call sites read `return kb_fail(env, r, id, "kiln_map", "...")`. */
kiln_result kb_fail(const kb_env *env, kiln_result r, kiln_log_id id, const char *api,
                    const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
void kb_log(const kb_env *env, kiln_log_level level, kiln_log_id id, const char *api,
            const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Number of online CPUs, at least 1. */
uint32_t kb_cpu_count(void);

#define KB_MIN(a, b) ((a) < (b) ? (a) : (b))
#define KB_MAX(a, b) ((a) > (b) ? (a) : (b))
#define KB_ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((size_t)(a)-1))
#define KB_COUNTOF(a) (sizeof(a) / sizeof((a)[0]))

#endif
