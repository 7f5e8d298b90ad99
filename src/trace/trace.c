/* The scheduler timeline: a bounded multi-producer ring of fixed-size
 * events (each cell carries a sequence number that says whose turn it
 * is, so producers claim cells with one compare-and-swap and never wait
 * for each other), drained by one writer thread into Chrome trace-event
 * JSON. */
#define _GNU_SOURCE /* sched_getcpu, where the C library has it */
#include "trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sched.h>
#endif

#define RING_CELLS (1u << 15)  /* ~3.5 MiB of events in flight at most */
#define MAX_NAMED 256u         /* threads whose names the trace keeps */
#define NAME_SIZE 32u
#define DRAIN_PERIOD_NS 2000000 /* the writer looks every 2 ms */
#define OUT_SIZE (256u << 10)   /* JSON text buffered before fwrite */
#define MAX_SUFFIX 1000         /* NAME-2.json .. NAME-999.json */

enum { EV_CMD = 0, EV_SLICE, EV_WAIT, EV_SIGNAL };

typedef struct kt_event {
    atomic_uint_fast64_t turn; /* == position: free to fill; position + 1: filled */
    uint8_t kind;
    uint8_t cause;
    int16_t cpu; /* a slice's CPU when it ended, -1 unknown */
    uint32_t tid;
    union {
        kt_cmd_times cmd;
        struct {
            const char *name, *arg_name;
            uint64_t t0, t1, arg;
        } slice;
        struct {
            uint64_t t0, t1, flow;
            uint32_t resource;
        } wait;
        struct {
            uint64_t t, value, flow;
            uint32_t timeline;
        } signal;
    } u;
} kt_event;

struct kt_tracer {
    struct kt_tracer *next_open; /* the process's open tracers (paths) */
    kb_env env;
    uint64_t serial;           /* tells threads' cached ids apart */
    uint64_t t_open;
    FILE *file;
    char *path;
    size_t path_size;
    kt_event *cells;
    atomic_uint_fast64_t head; /* next position producers claim */
    uint64_t tail;             /* next position the writer reads */
    atomic_uint_fast64_t dropped, ids;
    atomic_uint next_tid;
    /* The writer's own: */
    uint64_t written;
    uint64_t dropped_seen;     /* drops already marked in the trace */
    bool write_failed;
    size_t out_len;
    char out[OUT_SIZE];
    pthread_mutex_t mu;        /* names, stop flag, the writer's sleep */
    pthread_cond_t cv;
    bool stopping;
    pthread_t writer;
    char names[MAX_NAMED][NAME_SIZE];
};

static atomic_uint_fast64_t tracer_serials;

/* Paths of the process's open traces: a second device traced at once to
 * the same path writes NAME-2.json instead of interleaving with it. */
static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static kt_tracer *open_list;

uint64_t kt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A thread's number in each of the last few tracers it recorded into. */
#define TID_CACHE 4
static _Thread_local struct {
    uint64_t serial;
    uint32_t tid;
} tid_cache[TID_CACHE];

uint32_t kt_tid(kt_tracer *t)
{
    for (int i = 0; i < TID_CACHE; i++)
        if (tid_cache[i].serial == t->serial)
            return tid_cache[i].tid;
    uint32_t tid = atomic_fetch_add_explicit(&t->next_tid, 1, memory_order_relaxed) + 1;
    memmove(&tid_cache[1], &tid_cache[0], sizeof tid_cache[0] * (TID_CACHE - 1));
    tid_cache[0].serial = t->serial;
    tid_cache[0].tid = tid;
    return tid;
}

void kt_name_thread(kt_tracer *t, const char *fmt, uint32_t n)
{
    uint32_t tid = kt_tid(t);
    if (tid >= MAX_NAMED)
        return;
    pthread_mutex_lock(&t->mu);
    snprintf(t->names[tid], NAME_SIZE, fmt, n);
    pthread_mutex_unlock(&t->mu);
}

uint64_t kt_next_id(kt_tracer *t)
{
    return atomic_fetch_add_explicit(&t->ids, 1, memory_order_relaxed) + 1;
}

/* Claims a cell, or NULL (counted) when the writer is a full ring behind. */
static kt_event *claim(kt_tracer *t, uint64_t *out_pos)
{
    uint64_t pos = atomic_load_explicit(&t->head, memory_order_relaxed);
    for (;;) {
        kt_event *e = &t->cells[pos & (RING_CELLS - 1)];
        uint64_t turn = atomic_load_explicit(&e->turn, memory_order_acquire);
        if (turn == pos) {
            if (atomic_compare_exchange_weak_explicit(&t->head, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *out_pos = pos;
                return e;
            }
        } else if (turn < pos) {
            atomic_fetch_add_explicit(&t->dropped, 1, memory_order_relaxed);
            return NULL;
        } else {
            pos = atomic_load_explicit(&t->head, memory_order_relaxed);
        }
    }
}

static void publish(kt_event *e, uint64_t pos)
{
    atomic_store_explicit(&e->turn, pos + 1, memory_order_release);
}

void kt_cmd(kt_tracer *t, const kt_cmd_times *c)
{
    uint64_t pos;
    kt_event *e = claim(t, &pos);
    if (!e)
        return;
    e->kind = EV_CMD;
    e->tid = kt_tid(t);
    e->u.cmd = *c;
    publish(e, pos);
}

/* The CPU the calling thread runs on, -1 where the system does not say
 * (a thread that moved during a slice is shown on the CPU it ended on). */
static int16_t current_cpu(void)
{
#if defined(__linux__)
    int c = sched_getcpu();
    return c >= 0 && c <= INT16_MAX ? (int16_t)c : -1;
#else
    return -1;
#endif
}

void kt_slice(kt_tracer *t, const char *name, uint64_t t0, uint64_t t1, const char *arg_name,
              uint64_t arg)
{
    uint64_t pos;
    kt_event *e = claim(t, &pos);
    if (!e)
        return;
    e->kind = EV_SLICE;
    e->cpu = current_cpu();
    e->tid = kt_tid(t);
    e->u.slice.name = name;
    e->u.slice.arg_name = arg_name;
    e->u.slice.t0 = t0;
    e->u.slice.t1 = t1;
    e->u.slice.arg = arg;
    publish(e, pos);
}

void kt_wait_span(kt_tracer *t, kt_wait cause, uint64_t t0, uint64_t t1, uint32_t resource,
                  uint64_t flow)
{
    uint64_t pos;
    kt_event *e = claim(t, &pos);
    if (!e)
        return;
    e->kind = EV_WAIT;
    e->cause = (uint8_t)cause;
    e->tid = kt_tid(t);
    e->u.wait.t0 = t0;
    e->u.wait.t1 = t1;
    e->u.wait.flow = flow;
    e->u.wait.resource = resource;
    publish(e, pos);
}

void kt_signal(kt_tracer *t, uint32_t timeline, uint64_t value, uint64_t flow)
{
    uint64_t pos;
    kt_event *e = claim(t, &pos);
    if (!e)
        return;
    e->kind = EV_SIGNAL;
    e->tid = kt_tid(t);
    e->u.signal.t = kt_now();
    e->u.signal.value = value;
    e->u.signal.flow = flow;
    e->u.signal.timeline = timeline;
    publish(e, pos);
}

/* ---- the writer ---- */

static const char *const wait_names[KT_WAIT_COUNT] = {
    [KT_WAIT_RING_FULL] = "ring full",
    [KT_WAIT_TRANSFER_FULL] = "transfer full",
    [KT_WAIT_MAP_CONFLICT] = "map conflict",
    [KT_WAIT_FINISH] = "finish",
    [KT_WAIT_FENCE] = "fence",
    [KT_WAIT_SWAPCHAIN] = "swapchain back-pressure",
    [KT_WAIT_HELPERS] = "scene helpers",
    [KT_WAIT_SCENE_BUDGET] = "scene budget",
};

/* ---- JSON text: a small formatter, several times faster than printf's
 * floating point (the writer must keep up with a million commands a
 * second): %s string, %u uint32_t, %U uint64_t, %T a kt_now() time as
 * microseconds since the tracer opened, %D a duration in nanoseconds as
 * microseconds (at least 0.001). Output is buffered and written in
 * OUT_SIZE blocks. ---- */

static void out_flush(kt_tracer *t)
{
    if (t->out_len && fwrite(t->out, 1, t->out_len, t->file) != t->out_len)
        t->write_failed = true;
    t->out_len = 0;
}

static void put(kt_tracer *t, const char *s, size_t n)
{
    if (t->out_len + n > OUT_SIZE)
        out_flush(t);
    if (n > OUT_SIZE) { /* never for the strings written here */
        if (fwrite(s, 1, n, t->file) != n)
            t->write_failed = true;
        return;
    }
    memcpy(t->out + t->out_len, s, n);
    t->out_len += n;
}

static void put_u64(kt_tracer *t, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(t, tmp + i, sizeof tmp - i);
}

/* Nanoseconds as microseconds with three decimals. */
static void put_us(kt_tracer *t, uint64_t ns)
{
    char frac[4] = {'.', (char)('0' + ns / 100 % 10), (char)('0' + ns / 10 % 10), (char)('0' + ns % 10)};
    put_u64(t, ns / 1000);
    put(t, frac, 4);
}

static void out(kt_tracer *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const char *lit = fmt;
    for (const char *c = fmt; *c; c++) {
        if (*c != '%')
            continue;
        put(t, lit, (size_t)(c - lit));
        switch (*++c) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            put(t, s, strlen(s));
            break;
        }
        case 'u':
            put_u64(t, va_arg(ap, uint32_t));
            break;
        case 'U':
            put_u64(t, va_arg(ap, uint64_t));
            break;
        case 'd': {
            int v = va_arg(ap, int);
            if (v < 0)
                put(t, "-", 1);
            put_u64(t, v < 0 ? 0u - (uint64_t)(int64_t)v : (uint64_t)v);
            break;
        }
        case 'T': {
            uint64_t ns = va_arg(ap, uint64_t);
            put_us(t, ns > t->t_open ? ns - t->t_open : 0);
            break;
        }
        case 'D': {
            uint64_t ns = va_arg(ap, uint64_t);
            put_us(t, ns ? ns : 1);
            break;
        }
        default: /* not used */
            break;
        }
        lit = c + 1;
    }
    put(t, lit, strlen(lit));
    va_end(ap);
}

static uint64_t span(uint64_t t0, uint64_t t1) { return t1 > t0 ? t1 - t0 : 0; }

static void write_cmd(kt_tracer *t, uint32_t tid, const kt_cmd_times *c)
{
    if (!strcmp(c->op, "WAIT")) {
        /* A server wait runs nowhere: it holds its context's later
         * commands from its call until its fence settles. */
        out(t, ",\n{\"name\":\"%s\",\"cat\":\"api\",\"ph\":\"X\",\"ts\":%T,\"dur\":%D,\"pid\":1,"
               "\"tid\":%u,\"args\":{\"op\":\"WAIT\",\"context\":%u,\"seq\":%U}}",
            c->api, c->t_begin, span(c->t_begin, c->t_submit), c->submit_tid, c->ctx, c->seq);
        out(t, ",\n{\"name\":\"server wait #%U\",\"cat\":\"context %u\",\"ph\":\"b\",\"id\":%U,"
               "\"ts\":%T,\"pid\":1,\"tid\":%u}",
            c->seq, c->ctx, c->flow, c->t_submit, c->submit_tid);
        out(t, ",\n{\"name\":\"server wait #%U\",\"cat\":\"context %u\",\"ph\":\"e\",\"id\":%U,"
               "\"ts\":%T,\"pid\":1,\"tid\":%u}",
            c->seq, c->ctx, c->flow, c->t_end, c->submit_tid);
        return;
    }
    /* The API call that queued it, on the submitting thread, and the
     * arrow from there to the execution. */
    out(t, ",\n{\"name\":\"%s\",\"cat\":\"api\",\"ph\":\"X\",\"ts\":%T,\"dur\":%D,\"pid\":1,"
           "\"tid\":%u,\"args\":{\"op\":\"%s\",\"context\":%u,\"seq\":%U}}",
        c->api, c->t_begin, span(c->t_begin, c->t_submit), c->submit_tid, c->op, c->ctx, c->seq);
    out(t, ",\n{\"name\":\"command\",\"cat\":\"command\",\"ph\":\"s\",\"id\":%U,\"ts\":%T,"
           "\"pid\":1,\"tid\":%u}",
        c->flow, c->t_begin, c->submit_tid);
    /* Its time in the queue, on the context's track: waiting for its
     * locks (only when it did), then ready until a thread took it. */
    out(t, ",\n{\"name\":\"%s #%U\",\"cat\":\"context %u\",\"ph\":\"b\",\"id\":%U,\"ts\":%T,"
           "\"pid\":1,\"tid\":%u}",
        c->op, c->seq, c->ctx, c->flow, c->t_submit, c->submit_tid);
    if (c->t_grant > c->t_submit) {
        out(t, ",\n{\"name\":\"waiting for locks\",\"cat\":\"context %u\",\"ph\":\"b\",\"id\":%U,"
               "\"ts\":%T,\"pid\":1,\"tid\":%u}",
            c->ctx, c->flow, c->t_submit, c->submit_tid);
        out(t, ",\n{\"name\":\"waiting for locks\",\"cat\":\"context %u\",\"ph\":\"e\",\"id\":%U,"
               "\"ts\":%T,\"pid\":1,\"tid\":%u}",
            c->ctx, c->flow, c->t_grant, c->submit_tid);
    }
    out(t, ",\n{\"name\":\"%s #%U\",\"cat\":\"context %u\",\"ph\":\"e\",\"id\":%U,\"ts\":%T,"
           "\"pid\":1,\"tid\":%u}",
        c->op, c->seq, c->ctx, c->flow, c->t_start, c->submit_tid);
    /* The execution. */
    out(t, ",\n{\"name\":\"%s #%U\",\"cat\":\"exec\",\"ph\":\"X\",\"ts\":%T,\"dur\":%D,"
           "\"pid\":1,\"tid\":%u,\"args\":{\"api\":\"%s\",\"context\":%u,\"seq\":%U,"
           "\"locks_us\":%D,\"ready_us\":%D,\"ops\":%u}}",
        c->op, c->seq, c->t_start, span(c->t_start, c->t_end), tid, c->api, c->ctx, c->seq,
        span(c->t_submit, c->t_grant), span(c->t_grant, c->t_start), c->arg);
    out(t, ",\n{\"name\":\"command\",\"cat\":\"command\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%U,"
           "\"ts\":%T,\"pid\":1,\"tid\":%u}",
        c->flow, c->t_start, tid);
}

static void write_event(kt_tracer *t, const kt_event *e)
{
    switch (e->kind) {
    case EV_CMD:
        write_cmd(t, e->tid, &e->u.cmd);
        break;
    case EV_SLICE:
        out(t,
            ",\n{\"name\":\"%s\",\"cat\":\"work\",\"ph\":\"X\",\"ts\":%T,\"dur\":%D,\"pid\":1,"
            "\"tid\":%u,\"args\":{\"%s\":%U,\"cpu\":%d}}",
            e->u.slice.name, e->u.slice.t0, span(e->u.slice.t0, e->u.slice.t1), e->tid,
            e->u.slice.arg_name ? e->u.slice.arg_name : "n", e->u.slice.arg, (int)e->cpu);
        break;
    case EV_WAIT: {
        const char *why = e->cause < KT_WAIT_COUNT ? wait_names[e->cause] : "?";
        out(t, ",\n{\"name\":\"wait: %s\",\"cat\":\"wait\",\"ph\":\"X\",\"ts\":%T,\"dur\":%D,"
               "\"pid\":1,\"tid\":%u,\"args\":{\"cause\":\"%s\",\"resource\":%u}}",
            why, e->u.wait.t0, span(e->u.wait.t0, e->u.wait.t1), e->tid, why, e->u.wait.resource);
        if (e->u.wait.flow) {
            /* Bound to the wait slice: its last nanosecond, after any
             * command the waiting thread ran while it waited. */
            uint64_t at = e->u.wait.t1 > e->u.wait.t0 ? e->u.wait.t1 - 1 : e->u.wait.t0;
            out(t, ",\n{\"name\":\"signal\",\"cat\":\"sync\",\"ph\":\"f\",\"bp\":\"e\",\"id\":%U,"
                   "\"ts\":%T,\"pid\":1,\"tid\":%u}",
                e->u.wait.flow, at, e->tid);
        }
        break;
    }
    case EV_SIGNAL:
        out(t, ",\n{\"name\":\"signal\",\"cat\":\"sync\",\"ph\":\"X\",\"ts\":%T,\"dur\":0.001,"
               "\"pid\":1,\"tid\":%u,\"args\":{\"timeline\":%u,\"value\":%U}}",
            e->u.signal.t, e->tid, e->u.signal.timeline, e->u.signal.value);
        out(t, ",\n{\"name\":\"signal\",\"cat\":\"sync\",\"ph\":\"s\",\"id\":%U,\"ts\":%T,"
               "\"pid\":1,\"tid\":%u}",
            e->u.signal.flow, e->u.signal.t, e->tid);
        break;
    default:
        break;
    }
}

/* Writes every filled cell in order; stops at the first one not filled
 * yet (its producer is between claim and publish). */
static void drain(kt_tracer *t)
{
    for (;;) {
        kt_event *e = &t->cells[t->tail & (RING_CELLS - 1)];
        if (atomic_load_explicit(&e->turn, memory_order_acquire) != t->tail + 1)
            break;
        write_event(t, e);
        t->written++;
        atomic_store_explicit(&e->turn, t->tail + RING_CELLS, memory_order_release);
        t->tail++;
    }
    /* Gaps are marked where the writer noticed them, so a reader knows
     * the timeline around there is incomplete. */
    uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    if (dropped != t->dropped_seen) {
        out(t, ",\n{\"name\":\"trace events dropped\",\"cat\":\"trace\",\"ph\":\"i\",\"s\":\"g\","
               "\"ts\":%T,\"pid\":1,\"tid\":0,\"args\":{\"dropped\":%U}}",
            kt_now(), dropped - t->dropped_seen);
        t->dropped_seen = dropped;
    }
    out_flush(t);
}

static void *writer_main(void *arg)
{
    kt_tracer *t = arg;
    pthread_mutex_lock(&t->mu);
    while (!t->stopping) {
        pthread_mutex_unlock(&t->mu);
        drain(t);
        pthread_mutex_lock(&t->mu);
        if (t->stopping)
            break;
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += DRAIN_PERIOD_NS;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&t->cv, &t->mu, &until);
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void unlist(kt_tracer *t)
{
    pthread_mutex_lock(&open_mu);
    kt_tracer **it = &open_list;
    while (*it && *it != t)
        it = &(*it)->next_open;
    if (*it)
        *it = t->next_open;
    pthread_mutex_unlock(&open_mu);
}

/* Claims `path`, or NAME-N.ext when another open tracer has it (open_mu
 * held). Returns the allocated name, or NULL. */
static char *claim_path(const kb_env *env, const char *path, size_t *out_size)
{
    size_t n = strlen(path), size = n + 8;
    char *name = kb_alloc(env, size);
    if (!name)
        return NULL;
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : n;
    for (unsigned k = 1; k < MAX_SUFFIX; k++) {
        if (k == 1)
            memcpy(name, path, n + 1);
        else
            snprintf(name, size, "%.*s-%u%s", (int)stem, path, k, path + stem);
        bool taken = false;
        for (kt_tracer *o = open_list; o && !taken; o = o->next_open)
            taken = !strcmp(o->path, name);
        if (!taken) {
            *out_size = size;
            return name;
        }
    }
    kb_free(env, name, size);
    return NULL;
}

kt_tracer *kt_open(const kb_env *env, const char *path)
{
    kt_tracer *t = kb_calloc(env, sizeof *t);
    kt_event *cells = t ? kb_calloc(env, sizeof(kt_event) * RING_CELLS) : NULL;
    if (!cells) {
        kb_log(env, KILN_LOG_LEVEL_WARNING, KILN_LOG_TRACE_OPEN_FAILED, "KILN_TRACE",
               "out of memory for the trace ring; tracing is off");
        if (t)
            kb_free(env, t, sizeof *t);
        return NULL;
    }
    t->env = *env;
    t->cells = cells;
    for (uint64_t i = 0; i < RING_CELLS; i++)
        atomic_init(&cells[i].turn, i);
    t->serial = atomic_fetch_add_explicit(&tracer_serials, 1, memory_order_relaxed) + 1;
    pthread_mutex_lock(&open_mu);
    t->path = claim_path(env, path, &t->path_size);
    t->file = t->path ? fopen(t->path, "w") : NULL;
    if (!t->file) {
        pthread_mutex_unlock(&open_mu);
        kb_log(env, KILN_LOG_LEVEL_WARNING, KILN_LOG_TRACE_OPEN_FAILED, "KILN_TRACE",
               "cannot write '%s' (%s); tracing is off", path,
               t->path ? strerror(errno) : "no free name");
        goto fail;
    }
    t->next_open = open_list;
    open_list = t;
    pthread_mutex_unlock(&open_mu);
    t->t_open = kt_now();
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    out(t, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"kiln\"}}");
    if (pthread_create(&t->writer, NULL, writer_main, t) != 0) {
        kb_log(env, KILN_LOG_LEVEL_WARNING, KILN_LOG_TRACE_OPEN_FAILED, "KILN_TRACE",
               "cannot start the trace writer thread; tracing is off");
        pthread_mutex_destroy(&t->mu);
        pthread_cond_destroy(&t->cv);
        fclose(t->file);
        remove(t->path);
        unlist(t);
        goto fail;
    }
    return t;
fail:
    if (t->path)
        kb_free(env, t->path, t->path_size);
    kb_free(env, cells, sizeof(kt_event) * RING_CELLS);
    kb_free(env, t, sizeof *t);
    return NULL;
}

void kt_close(kt_tracer *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->stopping = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->writer, NULL);
    drain(t);
    uint32_t ntids = atomic_load_explicit(&t->next_tid, memory_order_relaxed);
    uint32_t apps = 0;
    for (uint32_t tid = 1; tid <= ntids; tid++) {
        char name[NAME_SIZE];
        bool named = tid < MAX_NAMED && t->names[tid][0];
        if (named)
            snprintf(name, sizeof name, "%s", t->names[tid]);
        else if (apps++ == 0)
            snprintf(name, sizeof name, "application");
        else
            snprintf(name, sizeof name, "application %u", apps);
        out(t, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
               "\"args\":{\"name\":\"%s\"}}",
            tid, name);
        /* Application threads first, then the named ones (workers,
         * display) in the order they started. */
        out(t, ",\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":%u,"
               "\"args\":{\"sort_index\":%u}}",
            tid, named ? 1000 + tid : tid);
    }
    uint64_t dropped = atomic_load_explicit(&t->dropped, memory_order_relaxed);
    out(t, "\n],\n\"otherData\":{\"kiln_events\":%U,\"kiln_dropped_events\":%U}}\n", t->written,
        dropped);
    out_flush(t);
    bool bad = t->write_failed || ferror(t->file) != 0;
    if (fclose(t->file) != 0)
        bad = true;
    if (bad)
        kb_log(&t->env, KILN_LOG_LEVEL_WARNING, KILN_LOG_TRACE_OPEN_FAILED, "KILN_TRACE",
               "writing '%s' failed; the trace is incomplete", t->path);
    if (dropped)
        kb_log(&t->env, KILN_LOG_LEVEL_WARNING, KILN_LOG_TRACE_DROPPED, "KILN_TRACE",
               "%llu events were dropped (the ring of %u events was full); '%s' lacks them",
               (unsigned long long)dropped, RING_CELLS, t->path);
    unlist(t);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    kb_env env = t->env;
    kb_free(&env, t->cells, sizeof(kt_event) * RING_CELLS);
    kb_free(&env, t->path, t->path_size);
    kb_free(&env, t, sizeof *t);
}
