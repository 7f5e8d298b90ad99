/*
 * trace: the scheduler timeline (KILN_TRACE). Threads record fixed-size
 * events into one bounded ring with no lock; a writer thread drains it
 * into Chrome trace-event JSON, which Perfetto's UI and chrome://tracing
 * open. docs/trace.md describes what a trace shows and how to read it.
 *
 * Contract:
 * - A device has a tracer only while tracing is on; every recording site
 *   tests the pointer first (`if (q->trace)`), so tracing off costs one
 *   predictable branch and no memory.
 * - Recording never blocks and never allocates: a full ring drops the
 *   event and counts it (the count is in the trace's metadata and logged
 *   once at close as KILN_LOG_TRACE_DROPPED).
 * - Names passed in are static strings: the writer reads them later.
 * - Times are CLOCK_MONOTONIC nanoseconds (kt_now); the JSON gives
 *   microseconds since the tracer opened.
 */
#ifndef KILN_TRACE_H
#define KILN_TRACE_H

#include "../base/base.h"

typedef struct kt_tracer kt_tracer;

/* Why a thread waited inside kiln. */
typedef enum kt_wait {
    KT_WAIT_RING_FULL = 0,   /* no free command slot (kq_begin) */
    KT_WAIT_TRANSFER_FULL,   /* no space in the transfer ring */
    KT_WAIT_MAP_CONFLICT,    /* Map waits for queued commands on the resource */
    KT_WAIT_FINISH,          /* kiln_finish, Map of a STAGING readback, ... */
    KT_WAIT_FENCE,           /* kiln_fence_wait, kiln_wait_sync_token */
    KT_WAIT_SWAPCHAIN,       /* no free back buffer: the display is behind */
    KT_WAIT_HELPERS,         /* a scene's thread waits for the last tiles */
    KT_WAIT_SCENE_BUDGET,    /* recorded scenes in flight passed the scene budget */
    KT_WAIT_COUNT
} kt_wait;

/* One command's life, recorded once when it has executed. */
typedef struct kt_cmd_times {
    const char *api;   /* the call that queued it */
    const char *op;    /* "CLEAR", "SCENE", ... */
    uint64_t seq;      /* per-context sequence number */
    uint64_t flow;     /* submit -> execution arrow id (kt_next_id) */
    uint32_t ctx;      /* context number in the trace */
    uint32_t submit_tid;
    uint64_t t_begin;  /* slot reserved by the API call */
    uint64_t t_submit; /* handed to the queue */
    uint64_t t_grant;  /* every lock granted: ready to run */
    uint64_t t_start, t_end; /* executed */
    uint32_t arg;      /* a scene's draws and clears, else 0 */
} kt_cmd_times;

/* Opens `path` and starts the writer thread. On failure returns NULL
 * after logging KILN_LOG_TRACE_OPEN_FAILED (tracing is then off). */
kt_tracer *kt_open(const kb_env *env, const char *path);
/* Drains the ring, completes the JSON (thread names, drop count) and
 * closes the file. Every recording thread must be done. NULL ignored. */
void kt_close(kt_tracer *t);

uint64_t kt_now(void);
/* The calling thread's number in this trace (assigned on first use). */
uint32_t kt_tid(kt_tracer *t);
/* Names the calling thread ("worker 2", "display"); threads never named
 * are shown as "application" threads. */
void kt_name_thread(kt_tracer *t, const char *fmt, uint32_t n);
/* A fresh id for a flow arrow or a context. */
uint64_t kt_next_id(kt_tracer *t);

/* A command executed on the calling thread: its API call on the submitting
 * thread, its queued and ready time on its context's track, its
 * execution here, and an arrow from the call to the execution. */
void kt_cmd(kt_tracer *t, const kt_cmd_times *c);
/* A span of work on the calling thread ("tile", index). */
void kt_slice(kt_tracer *t, const char *name, uint64_t t0, uint64_t t1, const char *arg_name,
              uint64_t arg);
/* The calling thread waited from t0 to t1. `resource` is the handle id of
 * the resource waited for (0 none); `flow` (0 none) ends an arrow started
 * by kt_signal. */
void kt_wait_span(kt_tracer *t, kt_wait cause, uint64_t t0, uint64_t t1, uint32_t resource,
                  uint64_t flow);
/* A timeline reached `value` on the calling thread; `flow` starts the
 * arrow that the waits it released end. */
void kt_signal(kt_tracer *t, uint32_t timeline, uint64_t value, uint64_t flow);

/* The arrow id of a sync point: the same on the signaling side and on the
 * waiting side. */
static inline uint64_t kt_point_flow(const void *timeline, uint64_t value)
{
    uint64_t h = (uint64_t)(uintptr_t)timeline * 0x9e3779b97f4a7c15ull;
    return (h ^ (value * 0xbf58476d1ce4e5b9ull)) | 1ull << 63; /* never 0 */
}

#endif
