/*
 * test_async_equals_serial: DESIGN invariant 1 ("async equals serial").
 *
 * Random call sequences over a fixed cast of resources run on an ASYNC
 * device (2-3 workers) and on a SERIAL device from the same seed. Every
 * call's result code, every byte a Map shows the CPU, and every resource's
 * final bytes must agree between the two runs, and with a plain C model of
 * the bytes, so that "both modes equally wrong" fails as well.
 *
 * The sequence never depends on timing. Every choice, including the bytes
 * the CPU writes through a Map, is drawn from the seed before the call; a
 * Map with DO_NOT_WAIT that answers WAS_STILL_DRAWING is retried without
 * the flag (SERIAL never has to). Commands that wait for a held Map are
 * tracked, conservatively, so that the sequence never needs something only
 * an Unmap could give, except on purpose: a Map of a resource that such
 * commands use either answers WOULD_DEADLOCK (alike in both modes) or
 * succeeds showing the bytes of every call made before it. Any other call
 * answering WOULD_DEADLOCK is a failure.
 *
 * The CPU writes of a Map that stays held are made just before its Unmap,
 * while the model applies them at Map time: commands queued in between must
 * wait for the Unmap, so both orders give the same bytes. A held READ map is
 * read again before Unmap and must not have changed.
 *
 * Environment:
 *   KILN_FUZZ_SEQUENCES=N  sequences to run (default 2000; 1000 under TSan,
 *                          which makes each about 10 times slower)
 *   KILN_FUZZ_FIRST=S      first seed of the range (default 1)
 *   KILN_FUZZ_SEED=S       run only seed S (replay a failure)
 *   KILN_FUZZ_VERBOSE=1    print every call
 */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXSUB 16 /* 6 mips x 2 slices at most */
#define MAXV 24   /* views per texture */
#define MAXHELD 4 /* maps held across other calls */
#define MAXW 4    /* CPU write rectangles per map */
#define DESC_LEN 200

#if defined(__SANITIZE_THREAD__)
#define DEFAULT_SEQUENCES 1000
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DEFAULT_SEQUENCES 1000
#endif
#endif
#ifndef DEFAULT_SEQUENCES
#define DEFAULT_SEQUENCES 2000
#endif

/* The cast. Resources that share a copy_resource partner share a desc; all
 * color textures share one format, drawn per sequence. */
enum {
    T0, /* DEFAULT color render target (RTVs per mip and slice), desc A */
    T1, /* same as T0 */
    T2, /* DEFAULT color shader resource, its own size and mips */
    Z0, /* DEFAULT D24_UNORM_S8_UINT with a DSV per mip */
    Z1, /* DEFAULT D32_FLOAT with a DSV per mip */
    B0, /* DEFAULT buffer of size N */
    B1, /* same as B0 */
    Y0, /* DYNAMIC buffer of size N */
    Y1, /* DYNAMIC buffer of another size */
    D0, /* DYNAMIC color texture, one mip */
    S0, /* STAGING texture of desc A */
    S1, /* STAGING texture of D0's desc */
    ZS, /* STAGING D24S8 of Z0's desc */
    SB, /* STAGING buffer of size N */
    IB, /* IMMUTABLE buffer of size N */
    NSLOT
};
static const char *const slot_name[NSLOT] = {"T0", "T1", "T2", "Z0", "Z1", "B0", "B1", "Y0",
                                             "Y1", "D0", "S0", "S1", "ZS", "SB", "IB"};

/* A rectangle of bytes the CPU writes through a Map: rows [y0, y1), bytes
 * [x0, x1) of each row; its contents come from a PRNG seeded with `seed`. */
typedef struct cpu_write {
    uint32_t x0, x1, y0, y1;
    uint64_t seed;
} cpu_write;

typedef struct slot {
    int is_tex;
    kiln_texture2d_desc td; /* mip_levels as passed (0 = full chain) */
    kiln_buffer_desc bd;
    uint32_t id, stale_id;
    int alive;
    /* model: subresources tightly packed */
    uint32_t bpp, nsub, mips, slices;
    uint32_t sw[MAXSUB], sh[MAXSUB];
    size_t off[MAXSUB], size;
    uint8_t *bytes;
    uint8_t *inuse; /* DYNAMIC buffers: bytes that queued commands may still read */
    /* views */
    uint32_t nrtv, rtv[MAXV], rtv_mip[MAXV], rtv_slice[MAXV], rtv_nslices[MAXV];
    uint32_t ndsv, dsv[MAXV];
    /* CPU maps */
    uint8_t mapped[MAXSUB];
    uint32_t mapped_count;
    kiln_map_type first_map;
    /* a queued command touching it may be waiting for a held Map */
    int blocked;
} slot;

typedef struct held_map {
    int s;
    uint32_t sub;
    kiln_map_type type;
    kiln_mapped_subresource m;
    uint8_t *snap; /* READ types: the bytes the map must keep showing */
    cpu_write w[MAXW];
    uint32_t nw;
} held_map;

typedef struct trace_ent {
    int32_t code;
    uint64_t hash;
} trace_ent;

typedef struct trace {
    trace_ent *e;
    uint32_t n, cap;
} trace;

typedef struct run {
    uint64_t seed;
    kiln_exec_mode mode;
    const char *mode_name;
    kiln_device *dev;
    kiln_context *ctx;
    th_rng rng;
    /* parameters drawn from the seed */
    kiln_format fmt;
    uint32_t ring_size, capacity, threads, nops;
    slot sl[NSLOT];
    held_map held[MAXHELD];
    uint32_t nheld;
    uint32_t nblocked;       /* commands that may wait for a held Map */
    uint32_t blocked_upload; /* ring bytes uploaded since they started waiting */
    /* bookkeeping */
    uint32_t call;
    uint32_t nbegun; /* calls with a description */
    char cur[DESC_LEN];
    char (*desc)[DESC_LEN];
    uint32_t desc_cap;
    const trace *ref; /* SERIAL's trace, compared call by call (ASYNC run) */
    trace *out;       /* trace being recorded (SERIAL run) */
    uint32_t expected_failures;
    uint64_t still_drawing;
    uint64_t deadlocks; /* maps answered WOULD_DEADLOCK */
    uint64_t discards;  /* successful WRITE_DISCARD maps */
    int failed;
    int verbose;
} run;

/* ------------------------------------------------------------------------ */
/* small helpers */

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint32_t below(run *R, uint32_t n) { return th_below(&R->rng, n); }
static uint32_t umin(uint32_t a, uint32_t b) { return a < b ? a : b; }
static uint32_t umax(uint32_t a, uint32_t b) { return a > b ? a : b; }

static void fill_random(uint64_t seed, uint8_t *p, size_t n)
{
    th_rng r = {splitmix(seed) | 1};
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = th_next(&r);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = th_next(&r);
        memcpy(p + i, &v, n - i);
    }
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint32_t fmt_bpp(kiln_format f)
{
    switch (f) {
    case KILN_FORMAT_R8_UNORM:
        return 1;
    case KILN_FORMAT_R32G32_FLOAT:
        return 8;
    case KILN_FORMAT_R32G32B32A32_FLOAT:
        return 16;
    default:
        return 4;
    }
}

static int fmt_unorm(kiln_format f)
{
    return f == KILN_FORMAT_R8G8B8A8_UNORM || f == KILN_FORMAT_B8G8R8A8_UNORM ||
           f == KILN_FORMAT_R8_UNORM;
}

static uint32_t full_chain(uint32_t w, uint32_t h)
{
    uint32_t n = 1, m = umax(w, h);
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

static kiln_resource res_of(const slot *S)
{
    kiln_resource r = {S->id};
    return r;
}

static uint8_t *sub_bytes(slot *S, uint32_t sub) { return S->bytes + S->off[sub]; }
static uint32_t row_bytes(const slot *S, uint32_t sub) { return S->sw[sub] * S->bpp; }

/* ------------------------------------------------------------------------ */
/* calls, traces and failures */

static void trace_push(trace *t, trace_ent e)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->e = realloc(t->e, sizeof *t->e * t->cap);
    }
    t->e[t->n++] = e;
}

static void fail(run *R, const char *fmt, ...)
{
    if (R->failed)
        return;
    R->failed = 1;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL seed %llu (%s run) call #%u [%s]: %s\n", (unsigned long long)R->seed,
            R->mode_name, R->call, R->cur, msg);
    th_check(0, "async equals serial equals model", __FILE__, __LINE__);
}

static void call_begin(run *R, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(R->cur, sizeof R->cur, fmt, ap);
    va_end(ap);
    if (R->call >= R->desc_cap) {
        R->desc_cap = R->desc_cap ? R->desc_cap * 2 : 512;
        R->desc = realloc(R->desc, sizeof *R->desc * R->desc_cap);
    }
    memcpy(R->desc[R->call], R->cur, DESC_LEN);
    R->nbegun = R->call + 1;
    if (R->verbose)
        fprintf(stderr, "  %s #%u %s\n", R->mode_name, R->call, R->cur);
}

/* Ends a call: the result must be OK iff expected, and equal SERIAL's. */
static int call_end(run *R, kiln_result got, int expect_ok, uint64_t hash)
{
    if (!R->failed && (got == KILN_OK) != !!expect_ok)
        fail(R, "returned %s, expected %s", kiln_result_string(got),
             expect_ok ? "KILN_OK" : "an error");
    if (!expect_ok && got != KILN_OK && got != KILN_E_WAS_STILL_DRAWING)
        R->expected_failures++;
    trace_ent e = {(int32_t)got, hash};
    if (R->ref && !R->failed) {
        if (R->call >= R->ref->n)
            fail(R, "SERIAL made only %u calls", R->ref->n);
        else if (R->ref->e[R->call].code != e.code || R->ref->e[R->call].hash != e.hash)
            fail(R, "differs from the SERIAL run: SERIAL %s/%016llx, ASYNC %s/%016llx",
                 kiln_result_string((kiln_result)R->ref->e[R->call].code),
                 (unsigned long long)R->ref->e[R->call].hash, kiln_result_string(got),
                 (unsigned long long)hash);
    }
    if (R->out)
        trace_push(R->out, e);
    R->call++;
    return got == KILN_OK;
}

/* Compares what a Map shows with expected tightly packed bytes. Returns a
 * hash of what it saw. */
static uint64_t check_mapped(run *R, const slot *S, uint32_t sub, const kiln_mapped_subresource *m,
                             const uint8_t *expect, const char *what)
{
    uint64_t h = 0xcbf29ce484222325ull;
    uint32_t rb = row_bytes(S, sub), rows = S->sh[sub];
    if (!m->data) {
        fail(R, "%s: mapped data is NULL", what);
        return 0;
    }
    if (S->is_tex && m->row_pitch < rb) {
        fail(R, "%s: row_pitch %u < %u", what, m->row_pitch, rb);
        return 0;
    }
    for (uint32_t y = 0; y < rows; y++) {
        const uint8_t *got = (const uint8_t *)m->data + (size_t)y * m->row_pitch;
        const uint8_t *exp = expect + (size_t)y * rb;
        h = fnv(h, got, rb);
        if (!R->failed && memcmp(got, exp, rb) != 0) {
            uint32_t x = 0;
            while (got[x] == exp[x])
                x++;
            fail(R, "%s: %s sub %u byte (row %u, col %u) is 0x%02x, model says 0x%02x", what,
                 slot_name[S - R->sl], sub, y, x, got[x], exp[x]);
        }
    }
    return h;
}

/* ------------------------------------------------------------------------ */
/* the model of commands waiting for held maps */

static int would_block(run *R, const int *s, int n)
{
    for (int i = 0; i < n; i++)
        if (R->sl[s[i]].mapped_count || R->sl[s[i]].blocked)
            return 1;
    return 0;
}

static uint32_t ring_cap(run *R) { return R->capacity ? R->capacity : 1024; }

/* May `cmds` commands on these resources be queued without the ring
 * filling up with commands that wait for a held Map? */
static int can_queue(run *R, const int *s, int n, uint32_t cmds)
{
    return !would_block(R, s, n) || R->nblocked + cmds <= ring_cap(R) - 1;
}

static void queued(run *R, const int *s, int n, uint32_t cmds)
{
    if (!would_block(R, s, n))
        return;
    for (int i = 0; i < n; i++)
        R->sl[s[i]].blocked = 1;
    R->nblocked += cmds;
}

static void unblock_all(run *R)
{
    for (int i = 0; i < NSLOT; i++)
        R->sl[i].blocked = 0;
    R->nblocked = 0;
    R->blocked_upload = 0;
}

/* ------------------------------------------------------------------------ */
/* creating and destroying */

static void layout(run *R, slot *S)
{
    if (S->is_tex) {
        S->bpp = fmt_bpp(S->td.format);
        S->mips = S->td.mip_levels ? S->td.mip_levels : full_chain(S->td.width, S->td.height);
        S->slices = S->td.array_size ? S->td.array_size : 1;
        S->nsub = S->mips * S->slices;
        size_t off = 0;
        for (uint32_t a = 0; a < S->slices; a++)
            for (uint32_t m = 0; m < S->mips; m++) {
                uint32_t i = m + a * S->mips;
                S->sw[i] = umax(1, S->td.width >> m);
                S->sh[i] = umax(1, S->td.height >> m);
                S->off[i] = off;
                off += (size_t)S->sw[i] * S->sh[i] * S->bpp;
            }
        S->size = off;
    } else {
        S->bpp = 1;
        S->mips = S->slices = S->nsub = 1;
        S->sw[0] = S->bd.size;
        S->sh[0] = 1;
        S->off[0] = 0;
        S->size = S->bd.size;
    }
    S->bytes = calloc(S->size, 1);
    if (!S->is_tex && S->bd.usage == KILN_USAGE_DYNAMIC)
        S->inuse = calloc(S->size, 1);
    (void)R;
}

static void create_views(run *R, int s)
{
    slot *S = &R->sl[s];
    kiln_texture t = {S->id};
    S->nrtv = S->ndsv = 0;
    if (s == T0 || s == T1) {
        for (uint32_t m = 0; m < S->mips; m++) {
            for (uint32_t a = 0; a <= S->slices; a++) {
                /* a == slices: one view of every slice (arrays only) */
                if (a == S->slices && S->slices == 1)
                    continue;
                kiln_rtv_desc d = {0};
                d.mip_slice = m;
                d.first_array_slice = a == S->slices ? 0 : a;
                d.array_size = a == S->slices ? S->slices : (below(R, 2) ? 1 : 0);
                if (below(R, 2))
                    d.format = S->td.format;
                kiln_rtv v = {0};
                call_begin(R, "create_rtv %s mip %u slices %u+%u", slot_name[s], m,
                           d.first_array_slice, d.array_size ? d.array_size : 1);
                if (!call_end(R, kiln_create_rtv(R->dev, t, &d, &v), 1, 0))
                    return;
                S->rtv[S->nrtv] = v.id;
                S->rtv_mip[S->nrtv] = m;
                S->rtv_slice[S->nrtv] = d.first_array_slice;
                S->rtv_nslices[S->nrtv] = d.array_size ? d.array_size : 1;
                S->nrtv++;
            }
        }
    } else if (s == Z0 || s == Z1) {
        for (uint32_t m = 0; m < S->mips; m++) {
            kiln_dsv_desc d = {0};
            d.mip_slice = m;
            kiln_dsv v = {0};
            call_begin(R, "create_dsv %s mip %u", slot_name[s], m);
            if (!call_end(R, kiln_create_dsv(R->dev, t, &d, &v), 1, 0))
                return;
            S->dsv[S->ndsv++] = v.id;
        }
    }
}

/* Creates slot s from its desc, with random initial data or none. */
static void create_slot(run *R, int s)
{
    slot *S = &R->sl[s];
    memset(S->bytes, 0, S->size);
    if (S->inuse)
        memset(S->inuse, 0, S->size);
    memset(S->mapped, 0, sizeof S->mapped);
    S->mapped_count = 0;
    S->blocked = 0;
    int with_init = (!S->is_tex && S->bd.usage == KILN_USAGE_IMMUTABLE) || below(R, 2);
    kiln_subresource_data init[MAXSUB];
    uint8_t *blobs[MAXSUB] = {0};
    if (with_init) {
        for (uint32_t i = 0; i < S->nsub; i++) {
            uint32_t rb = row_bytes(S, i), rows = S->sh[i];
            uint32_t pitch = S->is_tex && below(R, 2) ? rb + 1 + below(R, 33) : rb;
            size_t n = (size_t)pitch * (rows - 1) + rb;
            blobs[i] = malloc(n);
            fill_random(th_next(&R->rng), blobs[i], n);
            init[i].data = blobs[i];
            init[i].row_pitch = pitch == rb && below(R, 2) ? 0 : pitch;
            for (uint32_t y = 0; y < rows; y++)
                memcpy(sub_bytes(S, i) + (size_t)y * rb, blobs[i] + (size_t)y * pitch, rb);
        }
    }
    kiln_result r;
    if (S->is_tex) {
        kiln_texture t = {0};
        call_begin(R, "create_texture2d %s %ux%u mips %u array %u fmt %d usage %d bind 0x%x%s",
                   slot_name[s], S->td.width, S->td.height, S->td.mip_levels, S->td.array_size,
                   (int)S->td.format, (int)S->td.usage, S->td.bind_flags, with_init ? " init" : "");
        r = kiln_create_texture2d(R->dev, &S->td, with_init ? init : NULL, &t);
        S->id = t.id;
    } else {
        kiln_buffer b = {0};
        call_begin(R, "create_buffer %s size %u usage %d%s", slot_name[s], S->bd.size,
                   (int)S->bd.usage, with_init ? " init" : "");
        r = kiln_create_buffer(R->dev, &S->bd, with_init ? init : NULL, &b);
        S->id = b.id;
    }
    for (uint32_t i = 0; i < MAXSUB; i++)
        free(blobs[i]);
    if (!call_end(R, r, 1, 0))
        return;
    S->alive = 1;
    create_views(R, s);
}

static void destroy_views(run *R, int s)
{
    slot *S = &R->sl[s];
    for (uint32_t i = 0; i < S->nrtv && !R->failed; i++) {
        call_begin(R, "destroy_rtv %s view %u", slot_name[s], i);
        call_end(R, kiln_destroy_rtv(R->dev, (kiln_rtv){S->rtv[i]}), 1, 0);
    }
    for (uint32_t i = 0; i < S->ndsv && !R->failed; i++) {
        call_begin(R, "destroy_dsv %s view %u", slot_name[s], i);
        call_end(R, kiln_destroy_dsv(R->dev, (kiln_dsv){S->dsv[i]}), 1, 0);
    }
    S->nrtv = S->ndsv = 0;
}

/* ------------------------------------------------------------------------ */
/* CPU side of maps */

static void gen_writes(run *R, slot *S, uint32_t sub, kiln_map_type type, cpu_write *w,
                       uint32_t *nw)
{
    *nw = 0;
    if (type == KILN_MAP_READ)
        return;
    uint32_t n = below(R, 5) ? 1 + below(R, MAXW) : 0;
    uint32_t rb = row_bytes(S, sub), rows = S->sh[sub];
    for (uint32_t i = 0; i < n; i++) {
        cpu_write c;
        c.y0 = below(R, rows);
        c.y1 = c.y0 + 1 + below(R, rows - c.y0);
        c.x0 = below(R, rb);
        c.x1 = c.x0 + 1 + below(R, rb - c.x0);
        if (below(R, 4) == 0) { /* the whole subresource */
            c.x0 = c.y0 = 0;
            c.x1 = rb;
            c.y1 = rows;
        }
        c.seed = th_next(&R->rng);
        if (type == KILN_MAP_WRITE_NO_OVERWRITE) {
            /* Only bytes no queued command may still read. */
            if (S->inuse[c.x0])
                continue;
            uint32_t x = c.x0;
            while (x < c.x1 && !S->inuse[x])
                x++;
            c.x1 = x;
        }
        w[(*nw)++] = c;
    }
}

/* Applies CPU writes to tightly packed bytes (the model) or to a map. */
static void apply_writes(const cpu_write *w, uint32_t nw, uint8_t *base, uint32_t pitch)
{
    for (uint32_t i = 0; i < nw; i++) {
        uint32_t len = w[i].x1 - w[i].x0, rows = w[i].y1 - w[i].y0;
        uint8_t *tmp = malloc((size_t)len * rows);
        fill_random(w[i].seed, tmp, (size_t)len * rows);
        for (uint32_t y = 0; y < rows; y++)
            memcpy(base + (size_t)(w[i].y0 + y) * pitch + w[i].x0, tmp + (size_t)y * len, len);
        free(tmp);
    }
}

static void forget_held(run *R, uint32_t i)
{
    free(R->held[i].snap);
    R->held[i] = R->held[--R->nheld];
}

/* What the app does with a held map right before Unmap (or destroy). */
static void finish_held(run *R, held_map *h, const char *what)
{
    slot *S = &R->sl[h->s];
    if (h->snap)
        check_mapped(R, S, h->sub, &h->m, h->snap, what);
    apply_writes(h->w, h->nw, h->m.data, S->is_tex ? h->m.row_pitch : 0);
}

static void map_released(run *R, int s, uint32_t sub)
{
    slot *S = &R->sl[s];
    S->mapped[sub] = 0;
    S->mapped_count--;
    if (R->nheld == 0)
        unblock_all(R);
}

static const char *map_type_name(kiln_map_type t)
{
    static const char *const n[] = {"?",          "READ",          "WRITE",
                                    "READ_WRITE", "WRITE_DISCARD", "WRITE_NO_OVERWRITE"};
    return (unsigned)t <= 5 ? n[t] : "?";
}

/* ------------------------------------------------------------------------ */
/* operations */

static int pick_alive(run *R, const int *c, int n)
{
    int ok[NSLOT], k = 0;
    for (int i = 0; i < n; i++)
        if (R->sl[c[i]].alive)
            ok[k++] = c[i];
    return k ? ok[below(R, k)] : -1;
}

static void rand_rect(run *R, uint32_t w, uint32_t h, kiln_box *b)
{
    b->left = below(R, w);
    b->right = b->left + 1 + below(R, w - b->left);
    b->top = below(R, h);
    b->bottom = b->top + 1 + below(R, h - b->top);
    b->front = 0;
    b->back = 1;
}

static void op_update(run *R)
{
    static const int cands[] = {T0, T1, T2, B0, B1};
    int s = pick_alive(R, cands, 5);
    if (s < 0)
        return;
    slot *S = &R->sl[s];
    uint32_t sub = below(R, S->nsub), sw = S->sw[sub], sh = S->sh[sub], bpp = S->bpp;
    kiln_box box;
    int use_null = 0;
    int small = R->nblocked > 0; /* the transfer ring may be held: stay small */
    if (small) {
        uint32_t maxt = 256 / bpp;
        uint32_t w = 1 + below(R, umin(sw, maxt));
        uint32_t h = 1 + below(R, umin(sh, maxt / w));
        box.left = below(R, sw - w + 1);
        box.top = below(R, sh - h + 1);
        box.right = box.left + w;
        box.bottom = box.top + h;
        box.front = 0;
        box.back = 1;
    } else if (below(R, 10) < 4) {
        use_null = 1;
        box = (kiln_box){0, 0, 0, sw, sh, 1};
    } else {
        rand_rect(R, sw, sh, &box);
    }
    if (!S->is_tex)
        box.top = 0, box.bottom = 1;
    uint32_t w = box.right - box.left, h = box.bottom - box.top, rb = w * bpp;
    uint32_t bytes = rb * h;
    uint32_t ring_bytes = ((bytes + 15) & ~15u) + 16;
    if (small && R->blocked_upload + ring_bytes > R->ring_size / 4)
        return;
    uint32_t pitch = rb, pitch_arg = 0;
    if (S->is_tex) {
        switch (below(R, 4)) {
        case 0:
            pitch_arg = 0;
            break;
        case 1:
            pitch_arg = rb;
            break;
        case 2:
            pitch_arg = pitch = rb + 1 + below(R, 40);
            break;
        default:
            pitch_arg = pitch = rb * 2;
            break;
        }
    } else {
        pitch_arg = below(R, 2) ? 0 : 12345; /* ignored for buffers */
    }
    int ss[1] = {s};
    if (!can_queue(R, ss, 1, 1))
        return;
    /* Exactly the bytes the call may read, so ASan sees an over-read. */
    size_t n = (size_t)pitch * (h - 1) + rb;
    uint8_t *data = malloc(n);
    fill_random(th_next(&R->rng), data, n);
    call_begin(R, "update_subresource %s sub %u box %s[%u,%u)x[%u,%u) pitch %u (%u bytes)",
               slot_name[s], sub, use_null ? "NULL " : "", box.left, box.right, box.top, box.bottom,
               pitch_arg, bytes);
    kiln_result r =
        kiln_update_subresource(R->ctx, res_of(S), sub, use_null ? NULL : &box, data, pitch_arg, 0);
    if (call_end(R, r, 1, 0)) {
        for (uint32_t y = 0; y < h; y++)
            memcpy(sub_bytes(S, sub) + (size_t)(box.top + y) * sw * bpp + (size_t)box.left * bpp,
                   data + (size_t)y * pitch, rb);
        queued(R, ss, 1, 1);
        if (R->nblocked > 0)
            R->blocked_upload += ring_bytes;
    }
    free(data);
}

/* Model of a region copy (regions of one subresource never overlap). */
static void model_copy(slot *D, uint32_t dsub, uint32_t dx, uint32_t dy, slot *S, uint32_t ssub,
                       const kiln_box *b)
{
    uint32_t bpp = S->bpp, rb = (b->right - b->left) * bpp, h = b->bottom - b->top;
    uint8_t *tmp = malloc((size_t)rb * h);
    for (uint32_t y = 0; y < h; y++)
        memcpy(tmp + (size_t)y * rb,
               sub_bytes(S, ssub) + (size_t)(b->top + y) * row_bytes(S, ssub) +
                   (size_t)b->left * bpp,
               rb);
    for (uint32_t y = 0; y < h; y++)
        memcpy(sub_bytes(D, dsub) + (size_t)(dy + y) * row_bytes(D, dsub) + (size_t)dx * bpp,
               tmp + (size_t)y * rb, rb);
    free(tmp);
}

static void mark_inuse(slot *S, uint32_t x0, uint32_t x1)
{
    if (S->inuse)
        memset(S->inuse + x0, 1, x1 - x0);
}

static void op_copy_region(run *R)
{
    static const int color_src[] = {T0, T1, T2, D0, S0, S1};
    static const int color_dst[] = {T0, T1, T2, S0, S1};
    static const int buf_src[] = {B0, B1, Y0, Y1, SB, IB};
    static const int buf_dst[] = {B0, B1, SB};
    static const int depth[] = {Z0, ZS};
    uint32_t g = below(R, 10);
    int s, d;
    if (g < 6) {
        s = pick_alive(R, color_src, 6);
        d = pick_alive(R, color_dst, 5);
    } else if (g < 9) {
        s = pick_alive(R, buf_src, 6);
        d = pick_alive(R, buf_dst, 3);
    } else {
        s = pick_alive(R, depth, 2);
        d = s == Z0 ? ZS : Z0;
        if (s >= 0 && !R->sl[d].alive)
            d = -1;
    }
    if (s < 0 || d < 0)
        return;
    slot *S = &R->sl[s], *D = &R->sl[d];
    uint32_t ssub = below(R, S->nsub), dsub = below(R, D->nsub), dx = 0, dy = 0;
    kiln_box box;
    int use_null = 0, expect_ok = 1;
    if (g >= 9) { /* depth: whole subresources of equal size */
        dsub = ssub;
        use_null = 1;
        box = (kiln_box){0, 0, 0, S->sw[ssub], S->sh[ssub], 1};
    } else {
        if (below(R, 5) == 0) {
            use_null = 1;
            box = (kiln_box){0, 0, 0, S->sw[ssub], S->sh[ssub], 1};
        } else {
            rand_rect(R, S->sw[ssub], S->sh[ssub], &box);
        }
        if (!S->is_tex)
            box.top = 0, box.bottom = 1;
        uint32_t w = box.right - box.left, h = box.bottom - box.top;
        if (w > D->sw[dsub] || h > D->sh[dsub]) {
            use_null = 0;
            w = umin(w, D->sw[dsub]);
            h = umin(h, D->sh[dsub]);
            box.right = box.left + w;
            box.bottom = box.top + h;
        }
        for (int tries = 0; tries < 4; tries++) {
            dx = below(R, D->sw[dsub] - w + 1);
            dy = below(R, D->sh[dsub] - h + 1);
            expect_ok = !(s == d && ssub == dsub && box.left < dx + w && dx < box.right &&
                          box.top < dy + h && dy < box.bottom);
            if (expect_ok)
                break;
        }
    }
    int ss[2] = {d, s};
    if (expect_ok && !can_queue(R, ss, 2, 1))
        return;
    call_begin(R, "copy_subresource_region %s sub %u at (%u,%u) <- %s sub %u box %s[%u,%u)x[%u,%u)",
               slot_name[d], dsub, dx, dy, slot_name[s], ssub, use_null ? "NULL " : "", box.left,
               box.right, box.top, box.bottom);
    kiln_result r = kiln_copy_subresource_region(R->ctx, res_of(D), dsub, dx, dy, 0, res_of(S),
                                                 ssub, use_null ? NULL : &box);
    if (call_end(R, r, expect_ok, 0) && expect_ok) {
        model_copy(D, dsub, dx, dy, S, ssub, &box);
        if (!S->is_tex)
            mark_inuse(S, box.left, box.right);
        queued(R, ss, 2, 1);
    }
}

static void op_copy_resource(run *R)
{
    /* pairs with identical descs: dst <- src */
    static const int pairs[][2] = {{T0, T1}, {T1, T0}, {S0, T0}, {S0, T1}, {T0, S0}, {T1, S0},
                                   {S1, D0}, {B0, B1}, {B1, B0}, {SB, B0}, {B0, SB}, {B0, Y0},
                                   {B1, Y0}, {SB, Y0}, {B0, IB}, {SB, IB}, {ZS, Z0}, {Z0, ZS}};
    uint32_t k = below(R, sizeof pairs / sizeof pairs[0]);
    int d = pairs[k][0], s = pairs[k][1];
    if (!R->sl[d].alive || !R->sl[s].alive)
        return;
    int ss[2] = {d, s};
    if (!can_queue(R, ss, 2, 1))
        return;
    call_begin(R, "copy_resource %s <- %s", slot_name[d], slot_name[s]);
    kiln_result r = kiln_copy_resource(R->ctx, res_of(&R->sl[d]), res_of(&R->sl[s]));
    if (call_end(R, r, 1, 0)) {
        memcpy(R->sl[d].bytes, R->sl[s].bytes, R->sl[d].size);
        mark_inuse(&R->sl[s], 0, (uint32_t)R->sl[s].size);
        queued(R, ss, 2, 1);
    }
}

static uint8_t unorm8(float c)
{
    if (!(c > 0.0f))
        return 0;
    if (c >= 1.0f)
        return 255;
    return (uint8_t)floor((double)c * 255.0 + 0.5);
}

static void pack(kiln_format f, const float c[4], uint8_t out[16])
{
    memset(out, 0, 16);
    switch (f) {
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int i = 0; i < 4; i++)
            out[i] = unorm8(c[i]);
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        out[0] = unorm8(c[2]), out[1] = unorm8(c[1]), out[2] = unorm8(c[0]);
        out[3] = unorm8(c[3]);
        break;
    case KILN_FORMAT_R8_UNORM:
        out[0] = unorm8(c[0]);
        break;
    default:
        memcpy(out, c, fmt_bpp(f));
        break;
    }
}

/* A clear color whose conversion does not hinge on rounding details:
 * UNORM channels sit 1/4 unit away from a rounding boundary or outside
 * [0, 1]; float channels are exact. */
static void rand_color(run *R, float c[4])
{
    for (int i = 0; i < 4; i++) {
        if (fmt_unorm(R->fmt)) {
            uint32_t u = below(R, 20);
            if (u == 0)
                c[i] = -0.5f;
            else if (u == 1)
                c[i] = 1.5f;
            else {
                uint32_t k = below(R, 256);
                static const float frac[3] = {0.0f, 0.25f, 0.75f};
                float f = k == 255 ? 0.0f : frac[below(R, 3)];
                c[i] = ((float)k + f) / 255.0f;
            }
        } else {
            c[i] = (float)((int)below(R, 4001) - 2000) / 64.0f;
        }
    }
}

static void op_clear_rtv(run *R)
{
    static const int cands[] = {T0, T1};
    int s = pick_alive(R, cands, 2);
    if (s < 0 || R->sl[s].nrtv == 0)
        return;
    slot *S = &R->sl[s];
    uint32_t v = below(R, S->nrtv);
    float c[4];
    rand_color(R, c);
    int ss[1] = {s};
    if (!can_queue(R, ss, 1, 1))
        return;
    call_begin(R, "clear_rtv %s mip %u slices %u+%u color (%g %g %g %g)", slot_name[s],
               S->rtv_mip[v], S->rtv_slice[v], S->rtv_nslices[v], c[0], c[1], c[2], c[3]);
    if (!call_end(R, kiln_clear_rtv(R->ctx, (kiln_rtv){S->rtv[v]}, c), 1, 0))
        return;
    uint8_t texel[16];
    pack(R->fmt, c, texel);
    for (uint32_t a = S->rtv_slice[v]; a < S->rtv_slice[v] + S->rtv_nslices[v]; a++) {
        uint32_t sub = S->rtv_mip[v] + a * S->mips;
        uint8_t *p = sub_bytes(S, sub);
        for (uint32_t i = 0; i < S->sw[sub] * S->sh[sub]; i++)
            memcpy(p + (size_t)i * S->bpp, texel, S->bpp);
    }
    queued(R, ss, 1, 1);
}

static void op_clear_dsv(run *R)
{
    static const int cands[] = {Z0, Z1};
    int s = pick_alive(R, cands, 2);
    if (s < 0 || R->sl[s].ndsv == 0)
        return;
    slot *S = &R->sl[s];
    uint32_t mip = below(R, S->ndsv), flags = 1 + below(R, 3);
    uint8_t stencil = (uint8_t)below(R, 256);
    float depth;
    /* Depths whose 24-bit UNORM value is far from a rounding tie (k/1024
     * with k < 64 lands 1/16 of a unit below an integer), plus the ends and
     * values that clamp. */
    switch (below(R, 6)) {
    case 0:
        depth = 0.0f;
        break;
    case 1:
        depth = 1.0f;
        break;
    case 2:
        depth = below(R, 2) ? -0.5f : 1.5f;
        break;
    default:
        depth = (float)(1 + below(R, 63)) / 1024.0f;
        break;
    }
    int ss[1] = {s};
    if (!can_queue(R, ss, 1, 1))
        return;
    call_begin(R, "clear_dsv %s mip %u flags %u depth %g stencil %u", slot_name[s], mip, flags,
               depth, stencil);
    if (!call_end(R, kiln_clear_dsv(R->ctx, (kiln_dsv){S->dsv[mip]}, flags, depth, stencil), 1, 0))
        return;
    float d = depth < 0.0f ? 0.0f : depth > 1.0f ? 1.0f : depth;
    uint8_t *p = sub_bytes(S, mip);
    uint32_t n = S->sw[mip] * S->sh[mip];
    if (S->td.format == KILN_FORMAT_D32_FLOAT) {
        if (flags & KILN_CLEAR_DEPTH) {
            for (uint32_t i = 0; i < n; i++)
                memcpy(p + (size_t)i * 4, &d, 4);
            queued(R, ss, 1, 1);
        }
        return; /* a stencil-only clear of D32 does nothing (and may queue nothing) */
    }
    uint32_t d24 = (uint32_t)floor((double)d * 16777215.0 + 0.5);
    uint32_t word = d24 | (uint32_t)stencil << 24;
    uint32_t mask = ((flags & KILN_CLEAR_DEPTH) ? 0x00ffffffu : 0) |
                    ((flags & KILN_CLEAR_STENCIL) ? 0xff000000u : 0);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, p + (size_t)i * 4, 4);
        v = (v & ~mask) | (word & mask);
        memcpy(p + (size_t)i * 4, &v, 4);
    }
    queued(R, ss, 1, 1);
}

static void do_unmap(run *R, int s, uint32_t sub)
{
    call_begin(R, "unmap %s sub %u", slot_name[s], sub);
    call_end(R, kiln_unmap(R->ctx, res_of(&R->sl[s]), sub), 1, 0);
}

static void op_map(run *R)
{
    static const int cands[] = {S0, S1, SB, ZS, Y0, Y1, D0};
    int s = pick_alive(R, cands, 7);
    if (s < 0)
        return;
    slot *S = &R->sl[s];
    int staging = S->is_tex ? S->td.usage == KILN_USAGE_STAGING : S->bd.usage == KILN_USAGE_STAGING;
    uint32_t sub = below(R, S->nsub);
    kiln_map_type type;
    if (staging)
        type = (kiln_map_type)(KILN_MAP_READ + below(R, 3));
    else if (!S->is_tex) {
        uint32_t u = below(R, 20);
        type = u < 8    ? KILN_MAP_WRITE_DISCARD
               : u < 15 ? KILN_MAP_WRITE_NO_OVERWRITE
                        : KILN_MAP_WRITE;
    } else {
        type = below(R, 5) < 3 ? KILN_MAP_WRITE_DISCARD : KILN_MAP_WRITE;
    }
    int never_waits = type == KILN_MAP_WRITE_DISCARD || type == KILN_MAP_WRITE_NO_OVERWRITE;
    uint32_t flags = below(R, 10) < 3 ? KILN_MAP_FLAG_DO_NOT_WAIT : 0;
    int expect_ok = 1;
    /* Commands queued on this resource may wait for a held map. If this map
     * conflicts with one of them, waiting could never end: the answer is
     * WOULD_DEADLOCK. If it does not (the tracking is conservative), it
     * succeeds and must show the bytes of the calls made before it. */
    int may_deadlock = 0;
    if (S->mapped[sub]) {
        if (below(R, 8))
            return;
        expect_ok = 0; /* already mapped */
    } else if (S->mapped_count) {
        /* another subresource is held: shares its grant if it covers us */
        int writes = type != KILN_MAP_READ;
        if (never_waits || (writes && S->first_map == KILN_MAP_READ)) {
            if (below(R, 4))
                return;
            expect_ok = 0;
        }
        may_deadlock = expect_ok && S->blocked;
    } else if (S->blocked && !never_waits) {
        if (below(R, 3))
            return;
        may_deadlock = 1;
    }
    int hold = expect_ok && R->nheld < MAXHELD - 1 && below(R, 10) < 3;
    cpu_write w[MAXW];
    uint32_t nw = 0;
    if (expect_ok)
        gen_writes(R, S, sub, type, w, &nw);

    call_begin(R, "map %s sub %u %s%s%s", slot_name[s], sub, map_type_name(type),
               flags ? " DO_NOT_WAIT" : "", hold ? " (held)" : "");
    kiln_mapped_subresource m;
    memset(&m, 0, sizeof m);
    kiln_result r = kiln_map(R->ctx, res_of(S), sub, type, flags, &m);
    if (r == KILN_E_WAS_STILL_DRAWING && flags) {
        if (never_waits)
            fail(R, "%s answered WAS_STILL_DRAWING, but it never waits", map_type_name(type));
        else if (R->mode == KILN_EXEC_SERIAL && !may_deadlock)
            fail(R, "SERIAL answered WAS_STILL_DRAWING with nothing pending");
        R->still_drawing++;
        r = kiln_map(R->ctx, res_of(S), sub, type, flags & ~(uint32_t)KILN_MAP_FLAG_DO_NOT_WAIT,
                     &m);
    }
    if (may_deadlock && r == KILN_E_WOULD_DEADLOCK) {
        call_end(R, r, 0, 0);
        R->deadlocks++;
        return;
    }
    if (!expect_ok || r != KILN_OK) {
        call_end(R, r, expect_ok, 0);
        return;
    }
    /* What the CPU sees: the model (zeros after WRITE_DISCARD). */
    if (type == KILN_MAP_WRITE_DISCARD) {
        R->discards++;
        memset(S->bytes, 0, S->size);
        if (S->inuse)
            memset(S->inuse, 0, S->size);
    } else if (type == KILN_MAP_WRITE && S->inuse) {
        memset(S->inuse, 0, S->size); /* WRITE waited for every reader */
    }
    uint64_t hash = check_mapped(R, S, sub, &m, sub_bytes(S, sub), "at Map");
    if (!S->is_tex && m.depth_pitch && m.depth_pitch < S->size)
        fail(R, "depth_pitch %u < buffer size %zu", m.depth_pitch, S->size);
    call_end(R, r, 1, hash);
    if (R->failed)
        return;
    if (S->mapped_count++ == 0)
        S->first_map = type;
    S->mapped[sub] = (uint8_t)type;
    uint8_t *snap = NULL;
    if (hold && (type == KILN_MAP_READ || type == KILN_MAP_READ_WRITE)) {
        size_t n = (size_t)row_bytes(S, sub) * S->sh[sub];
        snap = malloc(n);
        memcpy(snap, sub_bytes(S, sub), n);
    }
    apply_writes(w, nw, sub_bytes(S, sub), row_bytes(S, sub));
    if (hold) {
        held_map *h = &R->held[R->nheld++];
        h->s = s;
        h->sub = sub;
        h->type = type;
        h->m = m;
        h->snap = snap;
        memcpy(h->w, w, sizeof w);
        h->nw = nw;
        return;
    }
    apply_writes(w, nw, m.data, S->is_tex ? m.row_pitch : 0);
    do_unmap(R, s, sub);
    map_released(R, s, sub);
}

static void op_unmap_held(run *R)
{
    if (!R->nheld)
        return;
    uint32_t i = below(R, R->nheld);
    held_map *h = &R->held[i];
    int s = h->s;
    uint32_t sub = h->sub;
    snprintf(R->cur, sizeof R->cur, "before unmap %s sub %u", slot_name[s], sub);
    finish_held(R, h, "held map before Unmap");
    forget_held(R, i);
    do_unmap(R, s, sub);
    map_released(R, s, sub);
}

/* Destroys a resource (sometimes still mapped, sometimes with views left
 * over) and usually creates it again. */
static void op_destroy(run *R)
{
    int s = (int)below(R, NSLOT);
    slot *S = &R->sl[s];
    if (!S->alive)
        return;
    /* The app finishes its CPU access before destroying: what it wrote
     * through a still-held map reaches the commands that wait for it. */
    int had_maps = 0;
    for (uint32_t i = 0; i < R->nheld;) {
        if (R->held[i].s == s) {
            snprintf(R->cur, sizeof R->cur, "before destroying %s (mapped)", slot_name[s]);
            finish_held(R, &R->held[i], "held map before destroy");
            forget_held(R, i);
            had_maps = 1;
        } else {
            i++;
        }
    }
    uint32_t variant = below(R, 3);
    if (variant == 0)
        destroy_views(R, s);
    call_begin(R, "destroy %s%s", slot_name[s], had_maps ? " (mapped)" : "");
    kiln_result r = S->is_tex ? kiln_destroy_texture(R->dev, (kiln_texture){S->id})
                              : kiln_destroy_buffer(R->dev, (kiln_buffer){S->id});
    if (!call_end(R, r, 1, 0))
        return;
    S->alive = 0;
    S->stale_id = S->id;
    memset(S->mapped, 0, sizeof S->mapped);
    S->mapped_count = 0;
    if (had_maps && R->nheld == 0)
        unblock_all(R);
    if (variant == 2 && S->nrtv) {
        float c[4] = {1, 0, 0, 1};
        call_begin(R, "clear_rtv on a view of destroyed %s", slot_name[s]);
        call_end(R, kiln_clear_rtv(R->ctx, (kiln_rtv){S->rtv[0]}, c), 0, 0);
    }
    if (variant == 2 && S->ndsv) {
        call_begin(R, "clear_dsv on a view of destroyed %s", slot_name[s]);
        call_end(R, kiln_clear_dsv(R->ctx, (kiln_dsv){S->dsv[0]}, KILN_CLEAR_DEPTH, 0.5f, 0), 0, 0);
    }
    destroy_views(R, s);
    if (below(R, 10) < 7)
        create_slot(R, s);
}

static void op_recreate(run *R)
{
    int dead[NSLOT], k = 0;
    for (int i = 0; i < NSLOT; i++)
        if (!R->sl[i].alive)
            dead[k++] = i;
    if (k)
        create_slot(R, dead[below(R, k)]);
}

static void op_finish(run *R)
{
    if (R->nblocked) {
        call_begin(R, "flush");
        call_end(R, kiln_flush(R->ctx), 1, 0);
        return;
    }
    call_begin(R, "finish");
    if (call_end(R, kiln_finish(R->ctx), 1, 0))
        for (int i = 0; i < NSLOT; i++)
            if (R->sl[i].inuse)
                memset(R->sl[i].inuse, 0, R->sl[i].size);
}

/* Calls that must fail, change nothing, log once, and fail alike in both
 * modes. */
static void op_invalid(run *R)
{
    uint8_t data[64] = {0};
    kiln_mapped_subresource m;
    kiln_box box;
    kiln_result r;
    slot *S;
    uint32_t before = th_log_count();
    switch (below(R, 12)) {
    case 0:
        if (!R->sl[Z0].alive)
            return;
        call_begin(R, "update_subresource Z0 (depth)");
        r = kiln_update_subresource(R->ctx, res_of(&R->sl[Z0]), 0, NULL, data, 0, 0);
        break;
    case 1:
        if (!R->sl[S0].alive)
            return;
        box = (kiln_box){0, 0, 0, 1, 1, 1};
        call_begin(R, "update_subresource S0 (staging)");
        r = kiln_update_subresource(R->ctx, res_of(&R->sl[S0]), 0, &box, data, 0, 0);
        break;
    case 2:
        S = &R->sl[T2];
        if (!S->alive)
            return;
        box = (kiln_box){0, 0, 0, S->sw[0] + 1, 1, 1};
        call_begin(R, "update_subresource T2 box past the right edge");
        r = kiln_update_subresource(R->ctx, res_of(S), 0, &box, data, 0, 0);
        break;
    case 3:
        S = &R->sl[T0];
        if (!S->alive || S->sw[0] < 2 || S->sh[0] < 2)
            return;
        box = (kiln_box){0, 0, 0, 2, 2, 1};
        call_begin(R, "update_subresource T0 row pitch too small");
        r = kiln_update_subresource(R->ctx, res_of(S), 0, &box, data, 2 * S->bpp - 1, 0);
        break;
    case 4:
        if (!R->sl[Y0].alive || !R->sl[B0].alive)
            return;
        call_begin(R, "copy_resource into DYNAMIC Y0");
        r = kiln_copy_resource(R->ctx, res_of(&R->sl[Y0]), res_of(&R->sl[B0]));
        break;
    case 5:
        if (!R->sl[B0].alive || !R->sl[Y1].alive || R->sl[Y1].size == R->sl[B0].size)
            return;
        call_begin(R, "copy_resource B0 <- Y1 (sizes differ)");
        r = kiln_copy_resource(R->ctx, res_of(&R->sl[B0]), res_of(&R->sl[Y1]));
        break;
    case 6:
        if (!R->sl[T0].alive)
            return;
        call_begin(R, "map T0 (DEFAULT)");
        r = kiln_map(R->ctx, res_of(&R->sl[T0]), 0, KILN_MAP_READ, 0, &m);
        break;
    case 7:
        if (!R->sl[SB].alive || R->sl[SB].mapped_count)
            return;
        call_begin(R, "unmap SB (not mapped)");
        r = kiln_unmap(R->ctx, res_of(&R->sl[SB]), 0);
        break;
    case 8:
        if (!R->sl[Z0].alive || !R->sl[Z0].ndsv)
            return;
        call_begin(R, "clear_dsv Z0 flags 0");
        r = kiln_clear_dsv(R->ctx, (kiln_dsv){R->sl[Z0].dsv[0]}, 0, 0.5f, 0);
        break;
    case 9: {
        int stale[NSLOT], k = 0;
        for (int i = 0; i < NSLOT; i++)
            if (R->sl[i].stale_id)
                stale[k++] = i;
        if (!k || !R->sl[B1].alive)
            return;
        int s = stale[below(R, k)];
        call_begin(R, "copy_subresource_region with stale %s", slot_name[s]);
        r = kiln_copy_subresource_region(R->ctx, res_of(&R->sl[B1]), 0, 0, 0, 0,
                                         (kiln_resource){R->sl[s].stale_id}, 0, NULL);
        break;
    }
    case 10:
        if (!R->sl[D0].alive || R->sl[D0].mapped_count)
            return;
        call_begin(R, "map D0 WRITE_NO_OVERWRITE (texture)");
        r = kiln_map(R->ctx, res_of(&R->sl[D0]), 0, KILN_MAP_WRITE_NO_OVERWRITE, 0, &m);
        break;
    default:
        S = &R->sl[Z0];
        if (!S->alive || !R->sl[ZS].alive || S->sw[0] < 2)
            return;
        box = (kiln_box){0, 0, 0, 1, 1, 1};
        call_begin(R, "copy_subresource_region ZS <- Z0 partial box");
        r = kiln_copy_subresource_region(R->ctx, res_of(&R->sl[ZS]), 0, 0, 0, 0, res_of(S), 0,
                                         &box);
        break;
    }
    call_end(R, r, 0, 0);
    if (!R->failed && r != KILN_OK && th_log_count() != before + 1)
        fail(R, "a failing call logged %u times", th_log_count() - before);
}

/* ------------------------------------------------------------------------ */
/* the sequence */

static void setup_descs(run *R)
{
    static const kiln_format fmts[] = {KILN_FORMAT_R8G8B8A8_UNORM, KILN_FORMAT_B8G8R8A8_UNORM,
                                       KILN_FORMAT_R8_UNORM,       KILN_FORMAT_R32_FLOAT,
                                       KILN_FORMAT_R32G32_FLOAT,   KILN_FORMAT_R32G32B32A32_FLOAT};
    static const uint32_t rings[] = {4096, 4096, 8192, 8192, 16384, 65536};
    static const uint32_t caps[] = {2, 3, 4, 5, 8, 16, 32, 64, 0};
    R->fmt = fmts[below(R, 6)];
    R->ring_size = rings[below(R, 6)];
    R->capacity = caps[below(R, 9)];
    R->threads = 2 + below(R, 2);
    R->nops = 30 + below(R, 31);
    for (int i = 0; i < NSLOT; i++) {
        memset(&R->sl[i], 0, sizeof R->sl[i]);
        R->sl[i].is_tex = i <= T2 || i == Z0 || i == Z1 || i == D0 || i == S0 || i == S1 || i == ZS;
    }
#define ODD_SIZE() (below(R, 4) ? 1 + 2 * below(R, 20) : 1 + below(R, 40))
    kiln_texture2d_desc a = {0};
    a.width = ODD_SIZE();
    a.height = ODD_SIZE();
    a.mip_levels = below(R, 5) == 0 ? 0 : 1 + below(R, full_chain(a.width, a.height));
    a.array_size = below(R, 3) == 0 ? 2 : below(R, 2);
    a.format = R->fmt;
    a.bind_flags = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
    R->sl[T0].td = R->sl[T1].td = a;
    a.usage = KILN_USAGE_STAGING;
    a.bind_flags = 0;
    R->sl[S0].td = a;

    kiln_texture2d_desc t = {0};
    t.width = ODD_SIZE();
    t.height = ODD_SIZE();
    t.mip_levels = 1 + below(R, full_chain(t.width, t.height));
    t.format = R->fmt;
    t.bind_flags = KILN_BIND_SHADER_RESOURCE;
    R->sl[T2].td = t;

    kiln_texture2d_desc dy = {0};
    dy.width = ODD_SIZE();
    dy.height = ODD_SIZE();
    dy.mip_levels = 1;
    dy.format = R->fmt;
    dy.usage = KILN_USAGE_DYNAMIC;
    dy.bind_flags = KILN_BIND_SHADER_RESOURCE;
    dy.cpu_access = below(R, 2) ? KILN_CPU_ACCESS_WRITE : 0;
    R->sl[D0].td = dy;
    dy.usage = KILN_USAGE_STAGING;
    dy.bind_flags = 0;
    dy.cpu_access = 0;
    R->sl[S1].td = dy;

    kiln_texture2d_desc z = {0};
    z.width = ODD_SIZE();
    z.height = ODD_SIZE();
    z.mip_levels = 1 + below(R, umin(3, full_chain(z.width, z.height)));
    z.format = KILN_FORMAT_D24_UNORM_S8_UINT;
    z.bind_flags = KILN_BIND_DEPTH_STENCIL;
    R->sl[Z0].td = z;
    z.usage = KILN_USAGE_STAGING;
    z.bind_flags = 0;
    R->sl[ZS].td = z;
    z.width = ODD_SIZE();
    z.height = ODD_SIZE();
    z.mip_levels = 1 + below(R, umin(2, full_chain(z.width, z.height)));
    z.format = KILN_FORMAT_D32_FLOAT;
    z.usage = KILN_USAGE_DEFAULT;
    z.bind_flags = KILN_BIND_DEPTH_STENCIL | (below(R, 2) ? KILN_BIND_SHADER_RESOURCE : 0);
    R->sl[Z1].td = z;
#undef ODD_SIZE

    uint32_t n = 1 + below(R, umin(2 * R->ring_size, 40000));
    if (below(R, 4) == 0)
        n = 1 + below(R, 64);
    kiln_buffer_desc b = {n, KILN_USAGE_DEFAULT, KILN_BIND_VERTEX_BUFFER, 0};
    R->sl[B0].bd = R->sl[B1].bd = b;
    b.bind_flags = KILN_BIND_VERTEX_BUFFER | KILN_BIND_INDEX_BUFFER;
    b.usage = KILN_USAGE_IMMUTABLE;
    R->sl[IB].bd = b;
    b.usage = KILN_USAGE_DYNAMIC;
    b.bind_flags = KILN_BIND_VERTEX_BUFFER;
    R->sl[Y0].bd = b;
    b.size = 1 + below(R, 4096);
    R->sl[Y1].bd = b;
    b.size = n;
    b.usage = KILN_USAGE_STAGING;
    b.bind_flags = 0;
    R->sl[SB].bd = b;
    for (int i = 0; i < NSLOT; i++)
        layout(R, &R->sl[i]);
}

/* Reads every live resource back and compares it with the model. */
static void read_back(run *R, int s)
{
    slot *S = &R->sl[s];
    int staging = S->is_tex ? S->td.usage == KILN_USAGE_STAGING : S->bd.usage == KILN_USAGE_STAGING;
    kiln_resource src = res_of(S), rd = src;
    if (!staging) {
        kiln_result r;
        call_begin(R, "create staging copy of %s", slot_name[s]);
        if (S->is_tex) {
            kiln_texture2d_desc d = S->td;
            d.usage = KILN_USAGE_STAGING;
            d.bind_flags = d.cpu_access = 0;
            kiln_texture t = {0};
            r = kiln_create_texture2d(R->dev, &d, NULL, &t);
            rd.id = t.id;
        } else {
            kiln_buffer_desc d = S->bd;
            d.usage = KILN_USAGE_STAGING;
            d.bind_flags = d.cpu_access = 0;
            kiln_buffer b = {0};
            r = kiln_create_buffer(R->dev, &d, NULL, &b);
            rd.id = b.id;
        }
        if (!call_end(R, r, 1, 0))
            return;
        call_begin(R, "copy_resource staging <- %s", slot_name[s]);
        call_end(R, kiln_copy_resource(R->ctx, rd, src), 1, 0);
    }
    for (uint32_t sub = 0; sub < S->nsub && !R->failed; sub++) {
        kiln_mapped_subresource m;
        call_begin(R, "read back %s sub %u: map READ", slot_name[s], sub);
        kiln_result r = kiln_map(R->ctx, rd, sub, KILN_MAP_READ, 0, &m);
        uint64_t h = 0;
        if (r == KILN_OK)
            h = check_mapped(R, S, sub, &m, sub_bytes(S, sub), "final bytes");
        if (!call_end(R, r, 1, h))
            return;
        call_begin(R, "read back %s sub %u: unmap", slot_name[s], sub);
        call_end(R, kiln_unmap(R->ctx, rd, sub), 1, 0);
    }
    if (!staging) {
        call_begin(R, "destroy staging copy of %s", slot_name[s]);
        call_end(R,
                 S->is_tex ? kiln_destroy_texture(R->dev, (kiln_texture){rd.id})
                           : kiln_destroy_buffer(R->dev, (kiln_buffer){rd.id}),
                 1, 0);
    }
}

static void run_sequence(run *R)
{
    R->rng.s = splitmix(R->seed) | 1;
    setup_descs(R);
    kiln_device_desc dd = {0};
    dd.exec_mode = R->mode;
    dd.num_threads = R->threads;
    dd.command_ring_capacity = R->capacity;
    dd.transfer_ring_size = R->ring_size;
    th_log_reset();
    th_logs.quiet = 1;
    R->dev = th_device_desc(dd);
    R->ctx = kiln_device_immediate_context(R->dev);
    uint32_t want_threads = R->mode == KILN_EXEC_SERIAL ? 0 : R->threads;
    if (kiln_device_num_threads(R->dev) != want_threads)
        fail(R, "device runs %u threads, asked for %u", kiln_device_num_threads(R->dev),
             want_threads);
    snprintf(R->cur, sizeof R->cur, "(setup: fmt %d, ring %u, capacity %u, threads %u)",
             (int)R->fmt, R->ring_size, R->capacity, R->threads);
    for (int i = 0; i < NSLOT && !R->failed; i++)
        create_slot(R, i);

    for (uint32_t k = 0; k < R->nops && !R->failed; k++) {
        uint32_t u = below(R, 100);
        if (u < 22)
            op_update(R);
        else if (u < 40)
            op_copy_region(R);
        else if (u < 48)
            op_copy_resource(R);
        else if (u < 55)
            op_clear_rtv(R);
        else if (u < 61)
            op_clear_dsv(R);
        else if (u < 80)
            op_map(R);
        else if (u < 88)
            op_unmap_held(R);
        else if (u < 91)
            op_destroy(R);
        else if (u < 93)
            op_recreate(R);
        else if (u < 96)
            op_finish(R);
        else
            op_invalid(R);
    }
    while (R->nheld && !R->failed)
        op_unmap_held(R);
    if (!R->failed) {
        call_begin(R, "finish");
        call_end(R, kiln_finish(R->ctx), 1, 0);
    }
    for (int i = 0; i < NSLOT && !R->failed; i++)
        if (R->sl[i].alive)
            read_back(R, i);
    if (!R->failed) {
        kiln_device_stats st;
        call_begin(R, "get_stats");
        kiln_result r = kiln_device_get_stats(R->dev, &st);
        /* Counters that must not depend on timing. */
        uint64_t h = fnv(0, &st.commands_queued, 8);
        h = fnv(h, &st.bytes_uploaded, 8);
        h = fnv(h, &st.upload_chunks, 8);
        h = fnv(h, &st.renames, 8);
        call_end(R, r, 1, h);
        if (r == KILN_OK && st.commands_in_flight != 0)
            fail(R, "%llu commands in flight after finish and read-back",
                 (unsigned long long)st.commands_in_flight);
        if (r == KILN_OK && st.transfer_ring_peak > R->ring_size)
            fail(R, "transfer_ring_peak %llu > ring size %u",
                 (unsigned long long)st.transfer_ring_peak, R->ring_size);
        if (r == KILN_OK && st.renames != R->discards)
            fail(R, "%llu renames for %llu WRITE_DISCARD maps", (unsigned long long)st.renames,
                 (unsigned long long)R->discards);
        if (r == KILN_OK && st.commands_executed != st.commands_queued)
            fail(R, "queued %llu, executed %llu", (unsigned long long)st.commands_queued,
                 (unsigned long long)st.commands_executed);
    }
    if (!R->failed && th_log_count() != R->expected_failures)
        fail(R, "the log callback ran %u times for %u failing calls (last id %s: %s)",
             th_log_count(), R->expected_failures, kiln_log_id_string(th_log_last()),
             th_logs.last_message);
    if (!R->failed && below(R, 4) == 0 && R->sl[S0].alive && R->sl[T0].alive) {
        /* Tear down with a held map and commands waiting for it: destroying
         * the device must unmap, run them and free everything (LSan). */
        kiln_mapped_subresource m;
        call_begin(R, "teardown: map S0 sub 0 WRITE, left mapped");
        call_end(R, kiln_map(R->ctx, res_of(&R->sl[S0]), 0, KILN_MAP_WRITE, 0, &m), 1, 0);
        call_begin(R, "teardown: copy_resource T0 <- S0 (waits for the map)");
        call_end(R, kiln_copy_resource(R->ctx, res_of(&R->sl[T0]), res_of(&R->sl[S0])), 1, 0);
        uint8_t px[16] = {0};
        kiln_box b = {0, 0, 0, 1, 1, 1};
        call_begin(R, "teardown: update_subresource T0 (waits too)");
        call_end(R, kiln_update_subresource(R->ctx, res_of(&R->sl[T0]), 0, &b, px, 0, 0), 1, 0);
    }
    if (R->failed && R->nheld) {
        /* leave the device in a state it can be destroyed from */
        while (R->nheld)
            forget_held(R, 0);
    }
    kiln_device_destroy(R->dev);
    R->dev = NULL;
}

static void run_free(run *R)
{
    for (int i = 0; i < NSLOT; i++) {
        free(R->sl[i].bytes);
        free(R->sl[i].inuse);
    }
    while (R->nheld)
        forget_held(R, 0);
    free(R->desc);
}

static void dump_calls(const run *R)
{
    fprintf(stderr,
            "calls of the %s run (seed %llu; format %d, transfer ring %u, command ring %u, "
            "%u threads in ASYNC):\n",
            R->mode_name, (unsigned long long)R->seed, (int)R->fmt, R->ring_size, R->capacity,
            R->threads);
    uint32_t n = R->nbegun;
    for (uint32_t i = 0; i < n; i++)
        fprintf(stderr, "  #%u %s\n", i, R->desc[i]);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
    const char *e;
    uint64_t count = DEFAULT_SEQUENCES, first = 1;
    int verbose = (e = getenv("KILN_FUZZ_VERBOSE")) && *e && *e != '0';
    if ((e = getenv("KILN_FUZZ_SEQUENCES")) && *e)
        count = strtoull(e, NULL, 10);
    if ((e = getenv("KILN_FUZZ_FIRST")) && *e)
        first = strtoull(e, NULL, 10);
    if ((e = getenv("KILN_FUZZ_SEED")) && *e) {
        first = strtoull(e, NULL, 10);
        count = 1;
    }
    double t0 = now();
    uint64_t done = 0, calls = 0, still_drawing = 0, deadlocks = 0;
    for (uint64_t i = 0; i < count; i++) {
        uint64_t seed = first + i;
        trace tr = {0};
        run serial, async;
        memset(&serial, 0, sizeof serial);
        memset(&async, 0, sizeof async);
        serial.seed = async.seed = seed;
        serial.verbose = async.verbose = verbose;
        serial.mode = KILN_EXEC_SERIAL;
        serial.mode_name = "SERIAL";
        serial.out = &tr;
        run_sequence(&serial);
        if (!serial.failed) {
            async.mode = KILN_EXEC_ASYNC;
            async.mode_name = "ASYNC";
            async.ref = &tr;
            run_sequence(&async);
            if (!async.failed && async.call != tr.n) {
                async.failed = 1;
                fprintf(stderr, "FAIL seed %llu: ASYNC made %u calls, SERIAL %u\n",
                        (unsigned long long)seed, async.call, tr.n);
                th_check(0, "same number of calls", __FILE__, __LINE__);
            }
        }
        int failed = serial.failed || async.failed;
        if (failed) {
            dump_calls(serial.failed ? &serial : &async);
            fprintf(stderr, "replay with: KILN_FUZZ_SEED=%llu KILN_FUZZ_VERBOSE=1\n",
                    (unsigned long long)seed);
        }
        calls += serial.call + async.call;
        still_drawing += async.still_drawing;
        deadlocks += serial.deadlocks;
        run_free(&serial);
        run_free(&async);
        free(tr.e);
        if (failed)
            break;
        done++;
    }
    CHECK_EQ_INT(done, count);
    printf("%llu sequences (seeds %llu..%llu), %llu calls, %llu WAS_STILL_DRAWING retries, "
           "%llu maps answered WOULD_DEADLOCK, %.2f s\n",
           (unsigned long long)done, (unsigned long long)first,
           (unsigned long long)(first + count - 1), (unsigned long long)calls,
           (unsigned long long)still_drawing, (unsigned long long)deadlocks, now() - t0);
    return th_exit();
}
