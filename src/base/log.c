/* Result strings, the message id table, and the one place that calls the
 * user's log callback. */
#include "base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const log_id_names[] = {
#define X(id, text) #id,
    KILN_LOG_IDS(X)
#undef X
};

static const char *const log_id_texts[] = {
#define X(id, text) text,
    KILN_LOG_IDS(X)
#undef X
};

const char *kiln_log_id_string(kiln_log_id id)
{
    if ((unsigned)id >= KILN_LOG_ID_COUNT)
        return "UNKNOWN";
    return log_id_names[id];
}

const char *kiln_result_string(kiln_result r)
{
    switch (r) {
    case KILN_OK: return "KILN_OK";
    case KILN_E_INVALID_ARG: return "KILN_E_INVALID_ARG";
    case KILN_E_INVALID_HANDLE: return "KILN_E_INVALID_HANDLE";
    case KILN_E_INVALID_CALL: return "KILN_E_INVALID_CALL";
    case KILN_E_OUT_OF_MEMORY: return "KILN_E_OUT_OF_MEMORY";
    case KILN_E_UNSUPPORTED: return "KILN_E_UNSUPPORTED";
    case KILN_E_WAS_STILL_DRAWING: return "KILN_E_WAS_STILL_DRAWING";
    case KILN_E_TIMEOUT: return "KILN_E_TIMEOUT";
    case KILN_E_DEVICE_LOST: return "KILN_E_DEVICE_LOST";
    case KILN_E_WOULD_DEADLOCK: return "KILN_E_WOULD_DEADLOCK";
    case KILN_E_COMMAND_FAILED: return "KILN_E_COMMAND_FAILED";
    case KILN_E_IO: return "KILN_E_IO";
    }
    return "KILN_E_UNKNOWN";
}

void kiln_log_stderr(kiln_log_level level, kiln_log_id id, const char *message, void *user)
{
    (void)user;
    static const char *const levels[] = {"error", "warning", "info"};
    const char *lv = (unsigned)level < 3 ? levels[level] : "?";
    fprintf(stderr, "kiln: %s %s: %s\n", lv, kiln_log_id_string(id), message);
}

static void *default_alloc(size_t size, void *user)
{
    (void)user;
    return malloc(size);
}

static void default_free(void *ptr, size_t size, void *user)
{
    (void)size;
    (void)user;
    free(ptr);
}

void kb_env_init(kb_env *env, const kiln_device_desc *desc)
{
    env->alloc = desc->allocator;
    if (!env->alloc.alloc || !env->alloc.free) {
        env->alloc.alloc = default_alloc;
        env->alloc.free = default_free;
        env->alloc.user = NULL;
    }
    env->log_fn = desc->log_fn ? desc->log_fn : kiln_log_stderr;
    env->log_user = desc->log_fn ? desc->log_user : NULL;
}

void *kb_alloc(const kb_env *env, size_t size)
{
    return env->alloc.alloc(size ? size : 1, env->alloc.user);
}

void *kb_calloc(const kb_env *env, size_t size)
{
    void *p = kb_alloc(env, size);
    if (p)
        memset(p, 0, size);
    return p;
}

void kb_free(const kb_env *env, void *ptr, size_t size)
{
    if (ptr)
        env->alloc.free(ptr, size ? size : 1, env->alloc.user);
}

static void vlog(const kb_env *env, kiln_log_level level, kiln_log_id id, const char *api,
                 const char *fmt, va_list ap)
{
    char msg[512];
    int n = snprintf(msg, sizeof msg, "%s: ", api ? api : "kiln");
    if (n < 0)
        n = 0;
    if (fmt && (size_t)n < sizeof msg)
        vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    else if ((size_t)n < sizeof msg)
        snprintf(msg + n, sizeof msg - (size_t)n, "%s", log_id_texts[(unsigned)id < KILN_LOG_ID_COUNT ? id : 0]);
    env->log_fn(level, id, msg, env->log_user);
}

kiln_result kb_fail(const kb_env *env, kiln_result r, kiln_log_id id, const char *api,
                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(env, KILN_LOG_LEVEL_ERROR, id, api, fmt, ap);
    va_end(ap);
    return r;
}

void kb_log(const kb_env *env, kiln_log_level level, kiln_log_id id, const char *api,
            const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(env, level, id, api, fmt, ap);
    va_end(ap);
}

uint32_t kb_cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (uint32_t)n : 1u;
}
