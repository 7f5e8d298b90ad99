/*
 * kiln_trace_png: draws a kiln trace (KILN_TRACE, docs/trace.md) as a PNG
 * timeline, for a terminal without a browser, a bug report, or a README.
 * Perfetto's UI (ui.perfetto.dev) shows the same file interactively.
 *
 * Usage: kiln_trace_png TRACE.json OUT.png [--width W] [--from MS] [--to MS]
 *
 * One band per thread (application threads first, then workers and the
 * display), slices stacked by nesting: API calls, command executions,
 * scene phases, geometry jobs and tiles, waits in red with their cause.
 * Below them one band per context shows how many commands were queued
 * (light: ready; dark: waiting for a lock) over time. Lines join fence
 * signals to the waits they ended, and calls to the executions of
 * commands long enough to see. On stdout: the tiles in the window, their
 * count and mean time by thread and by CPU.
 */
#include "font5x7.h"
#include "json_read.h"

#include <stb/stb_image_write.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_W 170
#define ROW_H 14
#define MAX_DEPTH 6
#define AXIS_H 34
#define MAX_THREADS 64
#define MAX_CONTEXTS 16
#define MAX_CPUS 256

typedef enum kind { K_API, K_EXEC, K_WORK, K_WAIT, K_SIGNAL, K_OTHER } kind;

typedef struct slice {
    double ts, dur;
    uint32_t tid;
    kind k;
    int depth;
    int cpu; /* a work slice's args.cpu, -1 none */
    char name[40];
} slice;

typedef struct qspan {
    double t0, t1;
    uint32_t ctx;
    int locks;
} qspan;

typedef struct flow {
    uint64_t id;
    double ts;
    uint32_t tid;
    int start, sync;
} flow;

typedef struct open_b { /* an async begin waiting for its end */
    uint64_t id;
    double ts;
    uint32_t ctx;
    int locks, used;
} open_b;

typedef struct thread {
    uint32_t tid;
    int sort;
    char name[40];
    int depth;  /* deepest nesting seen + 1 */
    int y;      /* top of its band */
} thread;

typedef struct model {
    slice *s;
    size_t ns, cs;
    qspan *q;
    size_t nq, cq;
    flow *f;
    size_t nf, cf;
    open_b *ob;
    size_t nob, cob;
    thread th[MAX_THREADS];
    int nth;
    uint32_t ctx_ids[MAX_CONTEXTS];
    int nctx;
    double t_min, t_max;
    double dropped;
} model;

#define GROW(arr, n, cap)                                                           \
    do {                                                                            \
        if ((n) == (cap)) {                                                         \
            (cap) = (cap) ? (cap)*2 : 1024;                                         \
            (arr) = realloc((arr), (cap) * sizeof *(arr));                          \
            if (!(arr)) {                                                           \
                fprintf(stderr, "kiln_trace_png: out of memory\n");                \
                exit(1);                                                            \
            }                                                                       \
        }                                                                           \
    } while (0)

static void model_free(model *m)
{
    free(m->s);
    free(m->q);
    free(m->f);
    free(m->ob);
}

static thread *thread_of(model *m, uint32_t tid)
{
    for (int i = 0; i < m->nth; i++)
        if (m->th[i].tid == tid)
            return &m->th[i];
    if (m->nth == MAX_THREADS)
        return NULL;
    thread *t = &m->th[m->nth++];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->sort = (int)tid;
    snprintf(t->name, sizeof t->name, "thread %u", tid);
    return t;
}

static int ctx_index(model *m, uint32_t ctx)
{
    for (int i = 0; i < m->nctx; i++)
        if (m->ctx_ids[i] == ctx)
            return i;
    if (m->nctx == MAX_CONTEXTS)
        return -1;
    m->ctx_ids[m->nctx] = ctx;
    return m->nctx++;
}

static void see_time(model *m, double t)
{
    if (t < m->t_min)
        m->t_min = t;
    if (t > m->t_max)
        m->t_max = t;
}

/* A JSON number as an id: values no id can have become 0. */
static uint64_t as_u64(double d)
{
    return d >= 0 && d < 18446744073709549568.0 ? (uint64_t)d : 0;
}

static kind kind_of(const char *cat)
{
    if (!cat)
        return K_OTHER;
    if (!strcmp(cat, "api"))
        return K_API;
    if (!strcmp(cat, "exec"))
        return K_EXEC;
    if (!strcmp(cat, "work"))
        return K_WORK;
    if (!strcmp(cat, "wait"))
        return K_WAIT;
    if (!strcmp(cat, "sync"))
        return K_SIGNAL;
    return K_OTHER;
}

static void take_event(model *m, const ju_value *e)
{
    const char *ph = ju_str(e, "ph"), *name = ju_str(e, "name"), *cat = ju_str(e, "cat");
    if (!ph || !name)
        return;
    uint64_t tid64 = as_u64(ju_num(e, "tid", 0));
    uint32_t tid = tid64 <= UINT32_MAX ? (uint32_t)tid64 : 0;
    double ts = ju_num(e, "ts", 0);
    if (!strcmp(ph, "M")) {
        const ju_value *args = ju_get(e, "args");
        thread *t = tid ? thread_of(m, tid) : NULL;
        if (t && !strcmp(name, "thread_name") && ju_str(args, "name"))
            snprintf(t->name, sizeof t->name, "%s", ju_str(args, "name"));
        else if (t && !strcmp(name, "thread_sort_index"))
            t->sort = (int)(as_u64(ju_num(args, "sort_index", t->sort)) & 0x7fffffff);
        return;
    }
    if (!strcmp(ph, "X")) {
        GROW(m->s, m->ns, m->cs);
        slice *s = &m->s[m->ns++];
        s->ts = ts;
        s->dur = ju_num(e, "dur", 0);
        s->tid = tid;
        s->k = kind_of(cat);
        s->depth = 0;
        double cpu = ju_num(ju_get(e, "args"), "cpu", -1);
        s->cpu = cpu >= 0 && cpu < MAX_CPUS ? (int)cpu : -1; /* -1: "unknown" */
        snprintf(s->name, sizeof s->name, "%s", name);
        thread_of(m, tid);
        see_time(m, ts);
        see_time(m, ts + s->dur);
        return;
    }
    if (!strcmp(ph, "s") || !strcmp(ph, "f")) {
        GROW(m->f, m->nf, m->cf);
        flow *f = &m->f[m->nf++];
        f->id = as_u64(ju_num(e, "id", 0));
        f->ts = ts;
        f->tid = tid;
        f->start = ph[0] == 's';
        f->sync = cat && !strcmp(cat, "sync");
        return;
    }
    if ((!strcmp(ph, "b") || !strcmp(ph, "e")) && cat && !strncmp(cat, "context ", 8)) {
        uint32_t ctx = (uint32_t)atoi(cat + 8);
        uint64_t id = as_u64(ju_num(e, "id", 0));
        int locks = !strcmp(name, "waiting for locks");
        if (ph[0] == 'b') {
            GROW(m->ob, m->nob, m->cob);
            m->ob[m->nob++] = (open_b){id, ts, ctx, locks, 0};
            return;
        }
        /* Ends come soon after their begins: search from the newest. */
        for (size_t i = m->nob; i-- > 0;) {
            open_b *b = &m->ob[i];
            if (!b->used && b->id == id && b->locks == locks) {
                b->used = 1;
                GROW(m->q, m->nq, m->cq);
                m->q[m->nq++] = (qspan){b->ts, ts, ctx, locks};
                break;
            }
        }
        /* Keep the open list short: drop the finished tail. */
        while (m->nob && m->ob[m->nob - 1].used)
            m->nob--;
        return;
    }
    if (!strcmp(ph, "i") && !strcmp(name, "trace events dropped"))
        m->dropped += ju_num(ju_get(e, "args"), "dropped", 0);
}

/* Reads the document one event at a time: a large trace never becomes
 * one tree in memory. */
static int load(const char *path, model *m)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "kiln_trace_png: cannot open %s\n", path);
        return -1;
    }
    long size = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
    char *buf = size >= 0 && fseek(fp, 0, SEEK_SET) == 0 ? malloc(size > 0 ? (size_t)size : 1) : NULL;
    if (!buf || fread(buf, 1, (size_t)size, fp) != (size_t)size) { /* a pipe: not seekable */
        fprintf(stderr, "kiln_trace_png: cannot read %s\n", path);
        fclose(fp);
        free(buf);
        return -1;
    }
    fclose(fp);
    ju_parser p = {buf, (size_t)size, 0};
    int rc = -1, events = 0;
    ju_ws(&p);
    if (p.pos >= p.len || buf[p.pos] != '{')
        goto out;
    p.pos++;
    for (;;) {
        ju_ws(&p);
        char *key = ju_string(&p);
        ju_ws(&p);
        if (!key || p.pos >= p.len || buf[p.pos] != ':') {
            free(key);
            goto out;
        }
        p.pos++;
        ju_ws(&p);
        if (!strcmp(key, "traceEvents") && p.pos < p.len && buf[p.pos] == '[') {
            events = 1;
            p.pos++;
            ju_ws(&p);
            if (p.pos < p.len && buf[p.pos] == ']') {
                p.pos++;
            } else {
                for (;;) {
                    ju_value *v = ju_value_at(&p, 0);
                    if (!v) {
                        free(key);
                        goto out;
                    }
                    take_event(m, v);
                    ju_free(v);
                    ju_ws(&p);
                    if (p.pos < p.len && buf[p.pos] == ',') {
                        p.pos++;
                        continue;
                    }
                    if (p.pos < p.len && buf[p.pos] == ']') {
                        p.pos++;
                        break;
                    }
                    free(key);
                    goto out;
                }
            }
        } else {
            ju_value *v = ju_value_at(&p, 0);
            if (!v) {
                free(key);
                goto out;
            }
            if (!strcmp(key, "otherData"))
                m->dropped = ju_num(v, "kiln_dropped_events", m->dropped);
            ju_free(v);
        }
        free(key);
        ju_ws(&p);
        if (p.pos < p.len && buf[p.pos] == ',') {
            p.pos++;
            continue;
        }
        if (p.pos < p.len && buf[p.pos] == '}') {
            p.pos++;
            ju_ws(&p);
            rc = p.pos == p.len && events ? 0 : -1;
        }
        break;
    }
out:
    if (rc)
        fprintf(stderr, "kiln_trace_png: %s is not a trace (bad JSON near byte %zu)\n", path, p.pos);
    free(buf);
    return rc;
}

/* ---- drawing ---- */

typedef struct canvas {
    int w, h;
    uint8_t *px; /* RGB */
} canvas;

typedef struct rgb {
    uint8_t r, g, b;
} rgb;

static void blend_px(canvas *c, int x, int y, rgb col, int alpha)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *p = c->px + ((size_t)y * c->w + x) * 3;
    p[0] = (uint8_t)((p[0] * (255 - alpha) + col.r * alpha) / 255);
    p[1] = (uint8_t)((p[1] * (255 - alpha) + col.g * alpha) / 255);
    p[2] = (uint8_t)((p[2] * (255 - alpha) + col.b * alpha) / 255);
}

static void fill(canvas *c, int x0, int y0, int x1, int y1, rgb col, int alpha)
{
    for (int y = y0; y < y1; y++)
        for (int x = x0; x < x1; x++)
            blend_px(c, x, y, col, alpha);
}

static void text(canvas *c, int x, int y, const char *s, rgb col, int max_w)
{
    for (; *s && max_w >= 6; s++, x += 6, max_w -= 6) {
        const uint8_t *g = font_rows(*s);
        for (int r = 0; r < 7; r++)
            for (int b = 0; b < 5; b++)
                if (g[r] & (0x10 >> b))
                    blend_px(c, x + b, y + r, col, 255);
    }
}

static void line(canvas *c, int x0, int y0, int x1, int y1, rgb col)
{
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int err = dx + dy;
    for (;;) {
        blend_px(c, x0, y0, col, 220);
        if (x0 == x1 && y0 == y1)
            break;
        int e2 = 2 * err;
        if (e2 >= dy) {
            err += dy;
            x0 += sx;
        }
        if (e2 <= dx) {
            err += dx;
            y0 += sy;
        }
    }
}

static rgb color_of(const slice *s)
{
    switch (s->k) {
    case K_API: return (rgb){120, 150, 230};
    case K_EXEC:
        if (!strncmp(s->name, "SCENE", 5))
            return (rgb){236, 146, 52};
        if (!strncmp(s->name, "GENERATE_MIPS", 13))
            return (rgb){170, 110, 210};
        return (rgb){64, 168, 200};
    case K_WORK:
        if (!strcmp(s->name, "tile"))
            return (rgb){96, 184, 96};
        if (!strcmp(s->name, "geometry job"))
            return (rgb){176, 204, 64};
        if (!strcmp(s->name, "display frame"))
            return (rgb){186, 126, 206};
        return (rgb){190, 190, 190};
    case K_WAIT: return (rgb){222, 64, 64};
    case K_SIGNAL: return (rgb){240, 200, 0};
    default: return (rgb){160, 160, 160};
    }
}

static int cmp_slice(const void *a, const void *b)
{
    const slice *x = a, *y = b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->dur > y->dur ? -1 : x->dur < y->dur; /* parents first */
}

static int cmp_thread(const void *a, const void *b)
{
    const thread *x = a, *y = b;
    return x->sort < y->sort ? -1 : x->sort > y->sort;
}

/* Nesting depth of each slice within its thread. */
static void assign_depths(model *m)
{
    qsort(m->s, m->ns, sizeof *m->s, cmp_slice);
    double ends[MAX_DEPTH];
    int top = 0;
    uint32_t tid = UINT32_MAX;
    for (size_t i = 0; i < m->ns; i++) {
        slice *s = &m->s[i];
        if (s->tid != tid) {
            tid = s->tid;
            top = 0;
        }
        while (top > 0 && ends[top - 1] <= s->ts)
            top--;
        s->depth = top < MAX_DEPTH ? top : MAX_DEPTH - 1;
        if (top < MAX_DEPTH) /* deeper ones share the last row */
            ends[top++] = s->ts + s->dur;
        thread *t = thread_of(m, s->tid);
        if (t && s->depth + 1 > t->depth)
            t->depth = s->depth + 1;
    }
}

/* The slice of thread tid that starts exactly at ts (binary search). */
static const slice *slice_at(const model *m, uint32_t tid, double ts)
{
    size_t lo = 0, hi = m->ns;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const slice *s = &m->s[mid];
        if (s->tid < tid || (s->tid == tid && s->ts < ts))
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < m->ns && m->s[i].tid == tid && m->s[i].ts == ts; i++)
        if (m->s[i].k == K_EXEC)
            return &m->s[i];
    return NULL;
}

static double nice_step(double span_ms, int max_ticks)
{
    double raw = span_ms / max_ticks, p = pow(10, floor(log10(raw)));
    for (int k = 0; k < 3; k++) {
        double m = (double[]){1, 2, 5}[k] * p;
        if (m >= raw)
            return m;
    }
    return 10 * p;
}

/* The tiles that started in [t0, t1): how many and their mean time, by
 * thread and by CPU. Threads that render a scene's tiles at different
 * rates (a slower core, another process on it) show here: the tiles are
 * handed out one at a time, so the faster thread takes more of them. */
static void print_tiles(const model *m, double t0, double t1)
{
    static double cpu_us[MAX_CPUS];
    static size_t cpu_n[MAX_CPUS];
    double th_us[MAX_THREADS] = {0}, all_us = 0, unknown_us = 0;
    size_t th_n[MAX_THREADS] = {0}, all_n = 0, unknown_n = 0;
    for (size_t i = 0; i < m->ns; i++) {
        const slice *s = &m->s[i];
        if (s->k != K_WORK || strcmp(s->name, "tile") || s->ts < t0 || s->ts >= t1)
            continue;
        for (int k = 0; k < m->nth; k++)
            if (m->th[k].tid == s->tid) {
                th_us[k] += s->dur;
                th_n[k]++;
            }
        if (s->cpu >= 0) {
            cpu_us[s->cpu] += s->dur;
            cpu_n[s->cpu]++;
        } else { /* not said, or past MAX_CPUS */
            unknown_us += s->dur;
            unknown_n++;
        }
        all_us += s->dur;
        all_n++;
    }
    if (!all_n)
        return;
    printf("tiles: %zu, mean %.1f us\n  by thread:", all_n, all_us / (double)all_n);
    for (int k = 0; k < m->nth; k++)
        if (th_n[k])
            printf(" %s %zu (%.1f us)", m->th[k].name, th_n[k], th_us[k] / (double)th_n[k]);
    printf("\n  by CPU:");
    for (int c = 0; c < MAX_CPUS; c++)
        if (cpu_n[c])
            printf(" cpu %d %zu (%.1f us)", c, cpu_n[c], cpu_us[c] / (double)cpu_n[c]);
    if (unknown_n)
        printf(" unknown %zu (%.1f us)", unknown_n, unknown_us / (double)unknown_n);
    printf("\n");
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    int width = 1600;
    double from_ms = -1, to_ms = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--width") && i + 1 < argc)
            width = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--from") && i + 1 < argc)
            from_ms = atof(argv[++i]);
        else if (!strcmp(argv[i], "--to") && i + 1 < argc)
            to_ms = atof(argv[++i]);
        else if (argv[i][0] != '-' && !in)
            in = argv[i];
        else if (argv[i][0] != '-' && !out)
            out = argv[i];
        else
            in = out = NULL, i = argc;
    }
    if (!in || !out || width < LABEL_W + 100 || width > 16384) {
        fprintf(stderr, "usage: kiln_trace_png TRACE.json OUT.png [--width 400..16384] [--from MS] "
                        "[--to MS]\n  draws a KILN_TRACE file (docs/trace.md) as a timeline\n");
        return 2;
    }
    model m = {0};
    m.t_min = INFINITY;
    m.t_max = -INFINITY;
    if (load(in, &m)) {
        model_free(&m);
        return 1;
    }
    if (m.ns == 0) {
        fprintf(stderr, "kiln_trace_png: %s has no slices to draw\n", in);
        model_free(&m);
        return 1;
    }
    assign_depths(&m);

    double t0 = from_ms >= 0 ? from_ms * 1000 : m.t_min, t1 = to_ms > 0 ? to_ms * 1000 : m.t_max;
    if (t1 <= t0)
        t1 = t0 + 1;
    /* Bands: threads (sorted), then contexts. */
    qsort(m.th, (size_t)m.nth, sizeof m.th[0], cmp_thread);
    int y = AXIS_H;
    for (int i = 0; i < m.nth; i++) {
        m.th[i].y = y;
        y += (m.th[i].depth ? m.th[i].depth : 1) * ROW_H + 6;
    }
    for (size_t i = 0; i < m.nq; i++)
        ctx_index(&m, m.q[i].ctx);
    int ctx_y = y + 4;
    int height = ctx_y + m.nctx * (ROW_H + 6) + 24;
    canvas c = {width, height, calloc((size_t)width * height, 3)};
    if (!c.px) {
        model_free(&m);
        return 1;
    }
    fill(&c, 0, 0, width, height, (rgb){250, 250, 248}, 255);
    double scale = (width - LABEL_W - 10) / (t1 - t0);
#define X_OF(t) (LABEL_W + (int)(((t)-t0) * scale))

    /* Time axis. */
    double step = nice_step((t1 - t0) / 1000, 10);
    char buf[96];
    for (double ms = ceil(t0 / 1000 / step) * step; ms * 1000 <= t1; ms += step) {
        int x = X_OF(ms * 1000);
        fill(&c, x, AXIS_H - 6, x + 1, height - 20, (rgb){220, 220, 220}, 255);
        snprintf(buf, sizeof buf, "%g MS", ms);
        text(&c, x + 2, AXIS_H - 14, buf, (rgb){90, 90, 90}, 80);
    }
    snprintf(buf, sizeof buf, "%s   %.3f - %.3f MS%s", in, t0 / 1000, t1 / 1000,
             m.dropped > 0 ? "   (EVENTS WERE DROPPED: GAPS)" : "");
    text(&c, 6, 6, buf, (rgb){40, 40, 40}, width - 12);

    /* Thread bands. */
    for (int i = 0; i < m.nth; i++) {
        thread *t = &m.th[i];
        int band = (t->depth ? t->depth : 1) * ROW_H;
        fill(&c, 0, t->y - 2, width, t->y + band + 2, (rgb){236, 236, 232}, i % 2 ? 255 : 0);
        text(&c, 6, t->y + (band - 7) / 2, t->name, (rgb){30, 30, 30}, LABEL_W - 10);
    }
    for (size_t i = 0; i < m.ns; i++) {
        const slice *s = &m.s[i];
        if (s->ts + s->dur < t0 || s->ts > t1)
            continue;
        thread *t = thread_of(&m, s->tid);
        if (!t)
            continue;
        int x0 = X_OF(s->ts < t0 ? t0 : s->ts), x1 = X_OF(s->ts + s->dur > t1 ? t1 : s->ts + s->dur);
        if (x1 <= x0)
            x1 = x0 + 1;
        int yy = t->y + s->depth * ROW_H;
        rgb col = color_of(s);
        fill(&c, x0, yy, x1, yy + ROW_H - 1, col, 255);
        if (x1 - x0 > 3) /* a darker edge keeps neighbours apart */
            fill(&c, x0, yy, x0 + 1, yy + ROW_H - 1, (rgb){col.r / 2, col.g / 2, col.b / 2}, 255);
        if (x1 - x0 >= 20)
            text(&c, x0 + 3, yy + 3, s->name, (rgb){20, 20, 20}, x1 - x0 - 4);
    }

    /* Context bands: queued commands over time. */
    for (int k = 0; k < m.nctx; k++) {
        int yy = ctx_y + k * (ROW_H + 6);
        snprintf(buf, sizeof buf, "context %u queue", m.ctx_ids[k]);
        text(&c, 6, yy + 3, buf, (rgb){30, 30, 30}, LABEL_W - 10);
        fill(&c, LABEL_W, yy, width - 10, yy + ROW_H, (rgb){236, 236, 232}, 255);
        for (size_t i = 0; i < m.nq; i++) {
            const qspan *q = &m.q[i];
            if (q->ctx != m.ctx_ids[k] || q->t1 < t0 || q->t0 > t1)
                continue;
            int x0 = X_OF(q->t0 < t0 ? t0 : q->t0), x1 = X_OF(q->t1 > t1 ? t1 : q->t1);
            fill(&c, x0, yy, x1 > x0 ? x1 : x0 + 1, yy + ROW_H,
                 q->locks ? (rgb){200, 60, 40} : (rgb){240, 150, 60}, q->locks ? 90 : 60);
        }
    }

    /* Arrows: every fence signal to its wait; calls to executions that
     * are wide enough to see. */
    for (size_t i = 0; i < m.nf; i++) {
        const flow *a = &m.f[i];
        if (!a->start)
            continue;
        /* Ends follow their starts closely in the file; a start whose
         * end never came (a signal nobody waited for) stops looking. */
        for (size_t j = i + 1; j < m.nf && j < i + 100000; j++) {
            const flow *b = &m.f[j];
            if (b->start || b->id != a->id || b->sync != a->sync)
                continue;
            if (!a->sync) {
                const slice *x = slice_at(&m, b->tid, b->ts);
                if (!x || x->dur * scale < 40)
                    break;
            }
            thread *ta = thread_of(&m, a->tid), *tb = thread_of(&m, b->tid);
            if (ta && tb && a->ts <= t1 && b->ts >= t0)
                line(&c, X_OF(a->ts), ta->y + ROW_H / 2, X_OF(b->ts), tb->y + ROW_H / 2,
                     a->sync ? (rgb){200, 150, 0} : (rgb){70, 70, 160});
            break;
        }
    }

    /* Legend. */
    static const struct {
        const char *name;
        rgb col;
    } legend[] = {{"api call", {120, 150, 230}}, {"scene", {236, 146, 52}},
                  {"byte command", {64, 168, 200}}, {"tile", {96, 184, 96}},
                  {"geometry job", {176, 204, 64}}, {"phase", {190, 190, 190}},
                  {"wait", {222, 64, 64}},        {"signal", {240, 200, 0}}};
    int lx = LABEL_W;
    for (unsigned i = 0; i < sizeof legend / sizeof legend[0]; i++) {
        fill(&c, lx, height - 16, lx + 10, height - 6, legend[i].col, 255);
        text(&c, lx + 14, height - 15, legend[i].name, (rgb){40, 40, 40}, 120);
        lx += 24 + 6 * (int)strlen(legend[i].name);
    }

    int ok = stbi_write_png(out, c.w, c.h, 3, c.px, c.w * 3);
    free(c.px);
    if (!ok) {
        model_free(&m);
        fprintf(stderr, "kiln_trace_png: cannot write %s\n", out);
        return 1;
    }
    printf("kiln_trace_png: %s: %zu slices on %d threads, %.3f ms -> %s (%dx%d)\n", in, m.ns, m.nth,
           (t1 - t0) / 1000, out, c.w, c.h);
    print_tiles(&m, t0, t1);
    model_free(&m);
    return 0;
}
