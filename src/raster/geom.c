/* Vertex fetch and shading (with reuse for indexed draws), primitive
 * assembly, clipping, snapping to 16.8 fixed point, setup and binning. */
#include "geom.h"
#include "setup8.h"

#include <math.h>
#include <string.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif
#if defined(__GNUC__) && defined(__x86_64__)
#include <cpuid.h>
#endif

/* ---- arena ---- */

/* Bytes a chunk has past its size: room to start its records on a line. */
#define CHUNK_SLACK 64
/* A tile buffer's plane of n samples, and the bytes that align it to 64. */
#define TILEBUF_BYTES(n) ((size_t)(n)*KR_TILEBUF_SAMPLE + 63u)

static int size_class(size_t cs)
{
    for (int i = 0; i < KR_POOL_CLASSES; i++)
        if (cs == ((size_t)16 << 10) << i)
            return i;
    return -1;
}

static kr_chunk *chunk_get(kr_arena *a, size_t cs)
{
    int k = size_class(cs);
    if (a->pool && k >= 0) {
        pthread_mutex_lock(&a->pool->mu);
        kr_chunk *c = a->pool->free[k];
        if (c) {
            a->pool->free[k] = c->next;
            a->pool->bytes -= cs;
        }
        pthread_mutex_unlock(&a->pool->mu);
        if (c)
            return c;
    }
    kr_chunk *c = kb_alloc(a->env, sizeof(kr_chunk) + cs + CHUNK_SLACK);
    if (c)
        c->size = cs;
    return c;
}

static void chunk_put(kr_arena *a, kr_chunk *c)
{
    int k = size_class(c->size);
    if (a->pool && k >= 0) {
        pthread_mutex_lock(&a->pool->mu);
        bool keep = a->pool->bytes + c->size <= KR_POOL_MAX;
        if (keep) {
            c->next = a->pool->free[k];
            a->pool->free[k] = c;
            a->pool->bytes += c->size;
        }
        pthread_mutex_unlock(&a->pool->mu);
        if (keep)
            return;
    }
    kb_free(a->env, c, sizeof(kr_chunk) + c->size + CHUNK_SLACK);
}

/* prfchw: kr_arena_alloc's write prefetch as PREFETCHW (without it GCC
 * emits a read prefetch, which brings a line another core holds modified
 * in as shared, and the store still has to take it), run only where the
 * CPU has it (kr_pool.prefetchw: some x86-64 CPUs before Nehalem do not). */
#if defined(__GNUC__) && defined(__x86_64__)
#define KR_PRFCHW __attribute__((target("prfchw")))
#else
#define KR_PRFCHW
#endif

static inline __attribute__((always_inline)) void *arena_alloc(kr_arena *a, size_t size,
                                                               size_t align)
{
    size = KB_ALIGN_UP(size, 16);
    kr_chunk *c = a->head;
    if (c) /* the record's start to a multiple of align as an address */
        c->used = (size_t)(KB_ALIGN_UP((uintptr_t)c->data + c->used, align) - (uintptr_t)c->data);
    if (!c || c->used + size > c->size) {
        /* Chunks grow from 16 KiB to 1 MiB: small jobs stay small. */
        size_t cs = c ? (c->size < (1u << 20) ? c->size * 2 : c->size) : (16u << 10);
        while (cs < size) /* the start's alignment takes less than CHUNK_SLACK */
            cs *= 2;
        c = chunk_get(a, cs);
        if (!c) {
            a->failed = true;
            return NULL;
        }
        c->used = (size_t)(KB_ALIGN_UP((uintptr_t)c->data, 64) - (uintptr_t)c->data);
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    const size_t end = c->used + size;
#if defined(__GNUC__)
    /* The lines from 512 bytes past the bytes handed out before to 512
     * past these (at most 16 of them, inside the chunk), fetched for
     * writing: the records written here (primitives, bins) land in
     * pool chunks that come back cold, last written by another job's
     * tiles or another thread, and each first store to a line waited for
     * it (perf on bench (a): the hottest instructions of setup_tri). */
    const uintptr_t base = (uintptr_t)c->data, lim = base + c->size;
    uintptr_t at = (base + c->used + 512) & ~(uintptr_t)63, stop = base + end + 512;
    stop = stop < lim ? stop : lim;
    if (stop > at + 16 * 64)
        stop = at + 16 * 64;
    if (a->pool && a->pool->prefetchw)
        for (; at < stop; at += 64)
            __builtin_prefetch((const void *)at, 1, 3);
    else
        for (; at < stop; at += 64)
            __builtin_prefetch((const void *)at, 0, 3);
#endif
    c->used = end;
    return p;
}

KR_PRFCHW void *kr_arena_alloc(kr_arena *a, size_t size) { return arena_alloc(a, size, 16); }

KR_PRFCHW void *kr_arena_alloc_lines(kr_arena *a, size_t size) { return arena_alloc(a, size, 64); }

void kr_arena_free(kr_arena *a)
{
    while (a->head) {
        kr_chunk *c = a->head;
        a->head = c->next;
        chunk_put(a, c);
    }
}

kr_pool *kr_pool_create(const kb_env *env)
{
    kr_pool *p = kb_calloc(env, sizeof *p);
    if (!p)
        return NULL;
    p->env = env;
    pthread_mutex_init(&p->mu, NULL);
#if defined(__GNUC__) && defined(__x86_64__)
    /* CPUID 0x80000001: ECX bit 8, PRFCHW. Read by hand, not through
     * __builtin_cpu_supports as effects.c does: clang 14 (Debian 12's, the
     * fuzz build's compiler) rejects the "prfchw" feature name. */
    unsigned int eax, ebx, ecx, edx;
    p->prefetchw = __get_cpuid(0x80000001u, &eax, &ebx, &ecx, &edx) && (ecx >> 8 & 1u);
#endif
    return p;
}

void kr_pool_destroy(kr_pool *p)
{
    if (!p)
        return;
    for (int k = 0; k < KR_POOL_CLASSES; k++) {
        while (p->free[k]) {
            kr_chunk *c = p->free[k];
            p->free[k] = c->next;
            kb_free(p->env, c, sizeof(kr_chunk) + c->size + CHUNK_SLACK);
        }
    }
    kb_free(p->env, p->hsr, sizeof(kr_hsr) * p->nhsr);
    for (uint32_t i = 0; i < p->ntb; i++)
        for (uint32_t k = 0; k <= KILN_MAX_RENDER_TARGETS; k++)
            kb_free(p->env, p->tb[i].raw[k], TILEBUF_BYTES(p->tb[i].samples[k]));
    kb_free(p->env, p->tb, sizeof(kr_tilebuf) * p->ntb);
    pthread_mutex_destroy(&p->mu);
    kb_free(p->env, p, sizeof *p);
}

/* Slots of one kind (kr_hsr, kr_tilebuf), one per tile running at once:
 * the execution threads, the thread that runs the command, and one more
 * that waits and helps. */
static uint32_t slot_count(const kr_pool *p) { return KB_MIN(p->threads + 2, 32u); }

/* A free slot's index among n (busy: their bits), or -1. */
static int slot_get(_Atomic uint32_t *busy_bits, uint32_t n)
{
    const uint32_t all = n >= 32 ? UINT32_MAX : (1u << n) - 1u;
    uint32_t busy = atomic_load_explicit(busy_bits, memory_order_relaxed);
    for (;;) {
        uint32_t free = ~busy & all;
        if (!free)
            return -1;
        uint32_t bit = free & -free;
        if (atomic_compare_exchange_weak_explicit(busy_bits, &busy, busy | bit,
                                                  memory_order_acquire, memory_order_relaxed))
            return __builtin_ctz(bit);
    }
}

static void slot_put(_Atomic uint32_t *busy_bits, ptrdiff_t i)
{
    atomic_fetch_and_explicit(busy_bits, ~(1u << (uint32_t)i), memory_order_release);
}

bool kr_pool_hsr_ready(kr_pool *p)
{
    pthread_mutex_lock(&p->mu);
    if (!p->hsr &&
        (p->hsr = kb_calloc(p->env, sizeof(kr_hsr) * slot_count(p)))) /* owner maps clear */
        p->nhsr = slot_count(p);
    bool ok = p->hsr != NULL;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

kr_hsr *kr_pool_hsr_get(kr_pool *p)
{
    int i = slot_get(&p->hsr_busy, p->nhsr);
    return i < 0 ? NULL : &p->hsr[i];
}

void kr_pool_hsr_put(kr_pool *p, kr_hsr *h) { slot_put(&p->hsr_busy, h - p->hsr); }

bool kr_pool_tilebuf_ready(kr_pool *p)
{
    pthread_mutex_lock(&p->mu);
    if (!p->tb && (p->tb = kb_calloc(p->env, sizeof(kr_tilebuf) * slot_count(p)))) /* no planes */
        p->ntb = slot_count(p);
    bool ok = p->tb != NULL;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

kr_tilebuf *kr_pool_tilebuf_get(kr_pool *p)
{
    int i = slot_get(&p->tb_busy, p->ntb);
    return i < 0 ? NULL : &p->tb[i];
}

void kr_pool_tilebuf_put(kr_pool *p, kr_tilebuf *b) { slot_put(&p->tb_busy, b - p->tb); }

uint8_t *kr_tilebuf_plane(kr_pool *p, kr_tilebuf *b, uint32_t k, uint32_t samples)
{
    if (b->samples[k] < samples) {
        kb_free(p->env, b->raw[k], TILEBUF_BYTES(b->samples[k]));
        b->samples[k] = 0;
        if (!(b->raw[k] = kb_alloc(p->env, TILEBUF_BYTES(samples))))
            return NULL;
        b->samples[k] = samples;
    }
    return (uint8_t *)(((uintptr_t)b->raw[k] + 63u) & ~(uintptr_t)63u);
}

/* ---- topology ---- */

static uint32_t verts_per_prim(kiln_topology t)
{
    switch (t) {
    case KILN_TOPOLOGY_POINT_LIST: return 1;
    case KILN_TOPOLOGY_LINE_LIST:
    case KILN_TOPOLOGY_LINE_STRIP: return 2;
    case KILN_TOPOLOGY_LINE_LIST_ADJ:
    case KILN_TOPOLOGY_LINE_STRIP_ADJ: return 4;
    case KILN_TOPOLOGY_TRIANGLE_LIST_ADJ:
    case KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ: return 6;
    default: return 3;
    }
}

/* Triangle j of a TRIANGLE_STRIP_ADJ of n triangles, in the geometry
 * shader's input order (corner, adjacent, corner, adjacent, corner,
 * adjacent), as D3D10 (and GL) define it: the first and the last
 * triangle take their outer adjacent vertices from the strip's ends, odd
 * triangles swap their first two corners to keep the winding. */
static void tri_strip_adj(uint32_t j, uint32_t n, uint32_t pos[6])
{
    uint32_t b = 2 * j;
    if (n == 1) {
        pos[0] = 0; pos[1] = 1; pos[2] = 2; pos[3] = 5; pos[4] = 4; pos[5] = 3;
        return;
    }
    if (j == 0) {
        pos[0] = 0; pos[1] = 1; pos[2] = 2; pos[3] = 6; pos[4] = 4; pos[5] = 3;
        return;
    }
    bool last = j == n - 1;
    pos[1] = b - 2;
    pos[4] = b + 4;
    if (j & 1) {
        pos[0] = b + 2;
        pos[2] = b;
        pos[3] = b + 3;
        pos[5] = last ? b + 5 : b + 6;
    } else {
        pos[0] = b;
        pos[2] = b + 2;
        pos[3] = last ? b + 5 : b + 6;
        pos[5] = b + 3;
    }
}

/* Positions (in the draw's vertex/index sequence) of primitive j of a
 * draw of n primitives. */
static void prim_positions(kiln_topology t, uint32_t j, uint32_t n, uint32_t pos[6])
{
    switch (t) {
    case KILN_TOPOLOGY_POINT_LIST: pos[0] = j; break;
    case KILN_TOPOLOGY_LINE_LIST: pos[0] = 2 * j; pos[1] = 2 * j + 1; break;
    case KILN_TOPOLOGY_LINE_STRIP: pos[0] = j; pos[1] = j + 1; break;
    case KILN_TOPOLOGY_TRIANGLE_LIST: pos[0] = 3 * j; pos[1] = 3 * j + 1; pos[2] = 3 * j + 2; break;
    case KILN_TOPOLOGY_LINE_LIST_ADJ:
        for (uint32_t k = 0; k < 4; k++)
            pos[k] = 4 * j + k;
        break;
    case KILN_TOPOLOGY_LINE_STRIP_ADJ:
        for (uint32_t k = 0; k < 4; k++)
            pos[k] = j + k;
        break;
    case KILN_TOPOLOGY_TRIANGLE_LIST_ADJ:
        for (uint32_t k = 0; k < 6; k++)
            pos[k] = 6 * j + k;
        break;
    case KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ: tri_strip_adj(j, n, pos); break;
    default: /* strip: odd triangles swap their first two to keep the winding */
        pos[0] = (j & 1) ? j + 1 : j;
        pos[1] = (j & 1) ? j : j + 1;
        pos[2] = j + 2;
        break;
    }
}

/* ---- vertex fetch ---- */

/* i / 255.0f for every byte, folded by the compiler (a correctly rounded
 * quotient, the same bits as the division at run time). */
#define UNORM1(i) (float)(i) / 255.0f
#define UNORM4(i) UNORM1(i), UNORM1(i + 1), UNORM1(i + 2), UNORM1(i + 3)
#define UNORM16(i) UNORM4(i), UNORM4(i + 4), UNORM4(i + 8), UNORM4(i + 12)
#define UNORM64(i) UNORM16(i), UNORM16(i + 16), UNORM16(i + 32), UNORM16(i + 48)
const float kr_unorm8_float[256] = {UNORM64(0), UNORM64(64), UNORM64(128), UNORM64(192)};
#undef UNORM1
#undef UNORM4
#undef UNORM16
#undef UNORM64

/* One element's bytes at p widened to float4 as D3D10 does (missing y,
 * z: 0, missing w: 1, UNORM bytes to [0, 1]). Inlined with a constant
 * format, the switch folds away (fetch_batch). */
static inline __attribute__((always_inline)) void widen_element(kiln_format f, const uint8_t *p,
                                                                float out[4])
{
    out[0] = out[1] = out[2] = 0.0f;
    out[3] = 1.0f;
    switch (f) {
    case KILN_FORMAT_R32_FLOAT: memcpy(out, p, 4); break;
    case KILN_FORMAT_R32G32_FLOAT: memcpy(out, p, 8); break;
    case KILN_FORMAT_R32G32B32_FLOAT: memcpy(out, p, 12); break;
    case KILN_FORMAT_R32G32B32A32_FLOAT: memcpy(out, p, 16); break;
    case KILN_FORMAT_R8G8B8A8_UNORM:
        for (int c = 0; c < 4; c++)
            out[c] = kr_unorm8_float[p[c]];
        break;
    case KILN_FORMAT_B8G8R8A8_UNORM:
        out[0] = kr_unorm8_float[p[2]];
        out[1] = kr_unorm8_float[p[1]];
        out[2] = kr_unorm8_float[p[0]];
        out[3] = kr_unorm8_float[p[3]];
        break;
    default: break;
    }
}

/* `bpp`: the element format's size. */
static inline void fetch_element(const kr_drawx *dx, const kd_element *e, uint32_t bpp,
                                 uint32_t index, float out[4])
{
    const kd_state *s = dx->s;
    uint64_t off = (uint64_t)index * s->vb_stride[e->slot] + e->offset;
    /* Out-of-range reads give zeros, as D3D10 defines. */
    if (!dx->vb[e->slot] || off + bpp > dx->vb_size[e->slot]) {
        out[0] = out[1] = out[2] = out[3] = 0.0f;
        return;
    }
    widen_element(e->format, dx->vb[e->slot] + off, out);
}

/* fetch_element for one element of vertices vid[0..cnt) (a VS batch),
 * into out + v * out_stride. When every vertex of the batch is inside
 * the buffer (most batches), the range check is made once and the
 * format's case chosen once: a loop of widen_element with that format,
 * without per-vertex checks (the same floats). */
static void fetch_batch(const kr_drawx *dx, const kd_element *el, uint32_t bpp, const uint32_t *vid,
                        uint32_t cnt, float *out, uint32_t out_stride)
{
    const uint8_t *vb = dx->vb[el->slot];
    const uint64_t stride = dx->s->vb_stride[el->slot];
    uint32_t hi = 0;
    for (uint32_t v = 0; v < cnt; v++)
        hi = vid[v] > hi ? vid[v] : hi;
    if (!vb || hi * stride + el->offset + bpp > dx->vb_size[el->slot]) {
        for (uint32_t v = 0; v < cnt; v++, out += out_stride)
            fetch_element(dx, el, bpp, vid[v], out);
        return;
    }
    vb += el->offset;
#define FETCH_ALL(f)                                                                               \
    case f:                                                                                        \
        for (uint32_t v = 0; v < cnt; v++, out += out_stride)                                      \
            widen_element(f, vb + vid[v] * stride, out);                                           \
        break
    switch (el->format) {
        FETCH_ALL(KILN_FORMAT_R32_FLOAT);
        FETCH_ALL(KILN_FORMAT_R32G32_FLOAT);
        FETCH_ALL(KILN_FORMAT_R32G32B32_FLOAT);
        FETCH_ALL(KILN_FORMAT_R32G32B32A32_FLOAT);
        FETCH_ALL(KILN_FORMAT_R8G8B8A8_UNORM);
        FETCH_ALL(KILN_FORMAT_B8G8R8A8_UNORM);
    default:
        for (uint32_t v = 0; v < cnt; v++, out += out_stride)
            widen_element(el->format, vb + vid[v] * stride, out);
        break;
    }
#undef FETCH_ALL
}

bool kr_is_cut(const kr_drawx *dx, const kd_draw *d, uint32_t pos)
{
    const kd_state *s = dx->s;
    const uint8_t *ib = d->bind->ib_st->data + s->ib_offset;
    uint32_t i = d->start + pos;
    if (s->ib_format == KILN_INDEX_UINT16) {
        uint16_t x;
        memcpy(&x, ib + (size_t)i * 2, 2);
        return x == 0xffffu;
    }
    uint32_t v;
    memcpy(&v, ib + (size_t)i * 4, 4);
    return v == 0xffffffffu;
}

static uint32_t index_at(const kr_drawx *dx, const kd_draw *d, uint32_t pos)
{
    if (!d->indexed)
        return d->start + pos;
    const kd_state *s = dx->s;
    const uint8_t *ib = d->bind->ib_st->data + s->ib_offset;
    uint32_t i = d->start + pos;
    uint32_t v;
    if (s->ib_format == KILN_INDEX_UINT16) {
        uint16_t x;
        memcpy(&x, ib + (size_t)i * 2, 2);
        v = x;
    } else {
        memcpy(&v, ib + (size_t)i * 4, 4);
    }
    return (uint32_t)((int64_t)v + d->base_vertex);
}

/* Shades the vertices of positions [p0, p1) into `out` (one row per
 * unique vertex id) and fills slot[pos - p0] with its row. */
/* Fetches and shades the vertices `vid[0..n)` of draw `d` (its instance
 * elements from its start_instance), into rows of dx->out_stride floats. */
static float *shade_vertices(const kr_drawx *dx, const kd_draw *d, uint32_t instance,
                             const uint32_t *vid, uint32_t nuniq, kr_arena *ar)
{
    const kd_state *s = dx->s;
    uint32_t in_stride = 4 * s->nelems, os = dx->out_stride;
    float *rows = kr_arena_alloc(ar, sizeof(float) * os * nuniq);
    float in[KILN_VS_BATCH * 4 * KILN_MAX_INPUT_ELEMENTS];
    uint32_t bpp[KILN_MAX_INPUT_ELEMENTS];
    if (!rows)
        return NULL;
    for (uint32_t e = 0; e < s->nelems; e++)
        bpp[e] = kres_format(s->elems[e].format)->size;
    /* What a shader leaves unwritten reads as zeros (not needed for the
     * effects' shaders, which write every float: (d) spent 2.5% of its
     * instructions here) */
    if (!dx->vs_writes)
        memset(rows, 0, sizeof(float) * os * nuniq);
    for (uint32_t b = 0; b < nuniq; b += KILN_VS_BATCH) {
        uint32_t cnt = nuniq - b < KILN_VS_BATCH ? nuniq - b : KILN_VS_BATCH;
        /* Element by element: the format's case is the same for the whole
         * batch (fetch_batch chooses it once). */
        for (uint32_t e = 0; e < s->nelems; e++) {
            const kd_element *el = &s->elems[e];
            if (!el->per_instance) {
                fetch_batch(dx, el, bpp[e], vid + b, cnt, in + 4 * e, in_stride);
                continue;
            }
            uint32_t idx = d->start_instance + instance / (el->step ? el->step : 1);
            for (uint32_t v = 0; v < cnt; v++)
                fetch_element(dx, el, bpp[e], idx, in + v * in_stride + 4 * e);
        }
        kiln_vs_args a = {
            .count = cnt, .instance_id = instance, .vertex_id = vid + b, /* SV_InstanceID starts at 0 */
            .in = in, .in_stride = in_stride, .out = rows + (size_t)b * os, .out_stride = os,
            .cb = dx->vs_cb, .cb_size = dx->vs_cb_size, .user = s->vs_user, .textures = dx->vs_tex,
        };
        s->vs(&a);
    }
    return rows;
}

/* The vertices [p0, p1) of a segment, shaded once each (an indexed draw's
 * repeated indices share a row): vertex p is row slot[p - p0]. */
static bool shade(const kr_drawx *dx, const kd_draw *d, uint32_t instance, uint32_t p0, uint32_t p1,
                  kr_arena *ar, float **out_rows, uint32_t **out_slot, uint32_t *out_shaded)
{
    uint32_t n = p1 - p0;
    uint32_t *slot = kr_arena_alloc(ar, sizeof(uint32_t) * n);
    uint32_t *vid = kr_arena_alloc(ar, sizeof(uint32_t) * n); /* unique ids */
    if (!slot || !vid)
        return false;
    uint32_t nuniq = 0;
    if (!d->indexed) {
        /* Vertex ids are consecutive: nothing to reuse. */
        for (uint32_t k = 0; k < n; k++) {
            slot[k] = k;
            vid[k] = d->start + p0 + k;
        }
        nuniq = n;
    } else {
        uint32_t cap = 16;
        while (cap < 2 * n)
            cap <<= 1;
        uint32_t *hkey = kr_arena_alloc(ar, sizeof(uint32_t) * cap);
        uint32_t *hval = kr_arena_alloc(ar, sizeof(uint32_t) * cap);
        if (!hkey || !hval)
            return false;
        memset(hval, 0xff, sizeof(uint32_t) * cap);
        for (uint32_t k = 0; k < n; k++) {
            uint32_t id = index_at(dx, d, p0 + k);
            uint32_t h = (id * 2654435761u) & (cap - 1);
            while (hval[h] != UINT32_MAX && hkey[h] != id)
                h = (h + 1) & (cap - 1);
            if (hval[h] == UINT32_MAX) {
                hkey[h] = id;
                hval[h] = nuniq;
                vid[nuniq++] = id;
            }
            slot[k] = hval[h];
        }
    }
    float *rows = shade_vertices(dx, d, instance, vid, nuniq, ar);
    if (!rows)
        return false;
    *out_rows = rows;
    *out_slot = slot;
    *out_shaded = nuniq;
    return true;
}

/* ---- clipping ---- */

#define MAX_POLY 12
#define MAX_ATTR (4 + 4 * KILN_MAX_VARYINGS)

typedef struct clip_ctx {
    uint32_t nf;     /* floats per vertex: position + varyings used */
    float guard;     /* |x|, |y| <= guard * w */
    bool depth_clip;
} clip_ctx;

static inline float plane_dist(const clip_ctx *c, int plane, const float *v)
{
    switch (plane) {
    case 0: return v[3] - 1e-6f * fabsf(v[3]) - 1e-30f; /* w > 0 */
    case 1: return v[2];                                /* z >= 0 */
    case 2: return v[3] - v[2];                         /* z <= w */
    case 3: return c->guard * v[3] - v[0];
    case 4: return c->guard * v[3] + v[0];
    case 5: return c->guard * v[3] - v[1];
    default: return c->guard * v[3] + v[1];
    }
}

/* Planes written out one by one: each plane_dist folds to its own
 * expression (a loop over the switch costs more than the tests). On
 * x86-64 the four guard-band planes in one vector: guard * w + (-x, x,
 * -y, y), the same products and sums (a - b is a + -b in IEEE
 * arithmetic), so the same bits. */
static uint32_t outcode(const clip_ctx *c, const float *v)
{
    uint32_t code = (uint32_t)(plane_dist(c, 0, v) < 0.0f);
    if (c->depth_clip)
        code |= (uint32_t)(plane_dist(c, 1, v) < 0.0f) << 1 | (uint32_t)(plane_dist(c, 2, v) < 0.0f) << 2;
#if defined(__x86_64__)
    const __m128 p = _mm_loadu_ps(v); /* x y z w */
    const __m128 gw =
        _mm_mul_ps(_mm_set1_ps(c->guard), _mm_shuffle_ps(p, p, _MM_SHUFFLE(3, 3, 3, 3)));
    const __m128 xy = _mm_xor_ps(_mm_shuffle_ps(p, p, _MM_SHUFFLE(1, 1, 0, 0)),
                                 _mm_setr_ps(-0.0f, 0.0f, -0.0f, 0.0f)); /* -x x -y y */
    return code | (uint32_t)_mm_movemask_ps(_mm_cmplt_ps(_mm_add_ps(gw, xy), _mm_setzero_ps()))
                      << 3;
#else
    return code | (uint32_t)(plane_dist(c, 3, v) < 0.0f) << 3 | (uint32_t)(plane_dist(c, 4, v) < 0.0f) << 4 |
           (uint32_t)(plane_dist(c, 5, v) < 0.0f) << 5 | (uint32_t)(plane_dist(c, 6, v) < 0.0f) << 6;
#endif
}

/* Sutherland-Hodgman over the planes in `codes`; returns the vertex count. */
static uint32_t clip_poly(const clip_ctx *c, uint32_t codes, float (*poly)[MAX_ATTR], uint32_t n,
                          bool closed)
{
    float tmp[MAX_POLY][MAX_ATTR];
    for (int p = 0; p < 7 && n; p++) {
        if (!(codes >> p & 1))
            continue;
        uint32_t m = 0;
        uint32_t edges = closed ? n : n - 1;
        for (uint32_t i = 0; i < edges; i++) {
            const float *a = poly[i], *b = poly[(i + 1) % n];
            float da = plane_dist(c, p, a), db = plane_dist(c, p, b);
            if (!closed && i == 0 && da >= 0.0f)
                memcpy(tmp[m++], a, sizeof(float) * c->nf);
            if (closed && da >= 0.0f)
                memcpy(tmp[m++], a, sizeof(float) * c->nf);
            if ((da >= 0.0f) != (db >= 0.0f) && m < MAX_POLY) {
                float t = da / (da - db);
                for (uint32_t k = 0; k < c->nf; k++)
                    tmp[m][k] = a[k] + t * (b[k] - a[k]);
                m++;
            }
            if (!closed && db >= 0.0f && m < MAX_POLY)
                memcpy(tmp[m++], b, sizeof(float) * c->nf);
        }
        n = m;
        memcpy(poly, tmp, sizeof(float) * MAX_ATTR * n);
        if (!closed && n != 2)
            return 0;
    }
    return n;
}

/* ---- setup and binning ---- */

typedef struct setup_ctx {
    const kr_geom_ctx *g;
    const kr_drawx *dx;
    kr_job *job;
    int32_t rx0, ry0, rx1, ry1;   /* raster rect: viewport ∩ scissor ∩ target */
    uint32_t prim_id;             /* SV_PrimitiveID of what is set up now */
    uint16_t slice;               /* and its render-target array slice */
    bool raster;                  /* primitives go on to clipping and setup
                                     (false: stream output only) */
} setup_ctx;

static int64_t floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* While a job bins, its (tile, primitive) pairs go to blocks in the
 * scratch arena, in order; kr_geom_run sorts them by tile at the end (a
 * stable counting sort) into the job's bins (bins_finish). Appending
 * to one array costs a store or two; per-tile lists cost a dependent
 * load of the tile's list and a new chunk for about every other
 * primitive of a stream of small triangles, whose job puts one or two
 * of them in each tile. */
#define STAGE_BLOCK 1024u
typedef struct kr_binstage {
    struct kr_binstage *next;
    uint32_t n;
    uint32_t tile[STAGE_BLOCK];
    const kr_prim *p[STAGE_BLOCK];
} kr_binstage;

typedef struct kr_binstaging {
    kr_arena *ar; /* the job's scratch arena */
    kr_binstage *head, *tail;
} kr_binstaging;

static void stage_put(kr_job *job, uint32_t tile, const kr_prim *p)
{
    kr_binstaging *st = job->stage;
    kr_binstage *b = st->tail;
    if (b->n == STAGE_BLOCK) {
        kr_binstage *nb = kr_arena_alloc(st->ar, sizeof *nb);
        if (!nb)
            return; /* the scratch arena failed: so does the scene */
        nb->next = NULL;
        nb->n = 0;
        b->next = nb;
        st->tail = b = nb;
    }
    b->tile[b->n] = tile;
    b->p[b->n++] = p;
}

static void bin(setup_ctx *sc, const kr_prim *p)
{
    kr_job *job = sc->job;
    const kr_geom_ctx *g = sc->g;
    int tx0 = p->minx / KR_TILE, ty0 = p->miny / KR_TILE;
    int tx1 = (p->maxx - 1) / KR_TILE, ty1 = (p->maxy - 1) / KR_TILE;
    /* A box inside one tile (most small primitives) skips the edge test:
     * a tile it would reject has no pixel of the primitive, which the
     * rasterizer finds anyway. */
    if (tx0 == tx1 && ty0 == ty1) {
        stage_put(job, (uint32_t)ty0 * g->tiles_x + (uint32_t)tx0, p);
        return;
    }
    bool test = p->kind == KR_TRI;
    const int64_t S = KR_SUBPIXEL;
    for (int ty = ty0; ty <= ty1; ty++) {
        for (int tx = tx0; tx <= tx1; tx++) {
            if (test) {
                /* Reject tiles that one edge excludes entirely. */
                bool out = false;
                int64_t px0 = (int64_t)tx * KR_TILE * S + S / 2, py0 = (int64_t)ty * KR_TILE * S + S / 2;
                int64_t span = (KR_TILE - 1) * S;
                /* 4x: samples lie up to 6/16 pixel from the centers */
                int64_t m = g->fb->samples > 1 ? 6 * (S / 16) : 0;
                for (int k = 0; k < 3 && !out; k++) {
                    int64_t e = p->a[k] * px0 + p->b[k] * py0 + p->c[k];
                    int64_t hi = e + (p->a[k] > 0 ? p->a[k] * span : 0) + (p->b[k] > 0 ? p->b[k] * span : 0) +
                                 (p->a[k] < 0 ? -p->a[k] : p->a[k]) * m + (p->b[k] < 0 ? -p->b[k] : p->b[k]) * m;
                    out = hi < 0;
                }
                if (out)
                    continue;
            }
            stage_put(job, (uint32_t)ty * g->tiles_x + (uint32_t)tx, p);
        }
    }
}

typedef struct svert {
    float x, y, z, q;   /* pixels, depth, 1/w */
    int64_t X, Y;       /* 16.8 fixed point */
    const float *attr;  /* varyings (clip space values) */
    bool bad;           /* no finite screen position (w <= 0 or NaN) */
} svert;

/* llrintf (round to nearest even in the default mode) of a finite value;
 * on x86-64 one instruction instead of a libm call. */
static inline int64_t round_i64(float f)
{
#if defined(__x86_64__)
    return _mm_cvtss_si64(_mm_set_ss(f));
#else
    return (int64_t)llrintf(f);
#endif
}

static void to_screen(const kiln_viewport *vp, const float *v, svert *o)
{
    float q = 1.0f / v[3];
    o->x = vp->x + (v[0] * q + 1.0f) * vp->width * 0.5f;
    o->y = vp->y + (1.0f - v[1] * q) * vp->height * 0.5f;
    o->z = vp->min_depth + v[2] * q * (vp->max_depth - vp->min_depth);
    o->q = q;
    o->attr = v + 4;
    /* A vertex left at w = 0 by clipping (t rounds to the far end) or with
     * a NaN position has no place on screen: its primitive is dropped (it
     * has no area). The guard band keeps finite positions in range. */
    o->bad = !(v[3] > 0.0f) || !(fabsf(o->x) < 1e7f) || !(fabsf(o->y) < 1e7f) || isnan(o->z);
    o->X = o->bad ? 0 : round_i64(o->x * KR_SUBPIXEL);
    o->Y = o->bad ? 0 : round_i64(o->y * KR_SUBPIXEL);
}

#if defined(__x86_64__)
/* to_screen for the three vertices of an unclipped triangle, one per SSE
 * lane (the fourth repeats the third): the same IEEE operations in the
 * same order on each lane, so the same bits, with one division instead
 * of three and no calls. */
static void to_screen3(const kiln_viewport *vp, const float *const *v, svert *o)
{
    __m128 a = _mm_loadu_ps(v[0]), b = _mm_loadu_ps(v[1]), c = _mm_loadu_ps(v[2]), d = c;
    _MM_TRANSPOSE4_PS(a, b, c, d); /* a: the x of each vertex, b: y, c: z, d: w */
    const __m128 one = _mm_set1_ps(1.0f), half = _mm_set1_ps(0.5f);
    const __m128 q = _mm_div_ps(one, d);
    const __m128 x = _mm_add_ps(
        _mm_set1_ps(vp->x),
        _mm_mul_ps(_mm_mul_ps(_mm_add_ps(_mm_mul_ps(a, q), one), _mm_set1_ps(vp->width)), half));
    const __m128 y = _mm_add_ps(
        _mm_set1_ps(vp->y),
        _mm_mul_ps(_mm_mul_ps(_mm_sub_ps(one, _mm_mul_ps(b, q)), _mm_set1_ps(vp->height)), half));
    const __m128 z =
        _mm_add_ps(_mm_set1_ps(vp->min_depth),
                   _mm_mul_ps(_mm_mul_ps(c, q), _mm_set1_ps(vp->max_depth - vp->min_depth)));
    const __m128 abs = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff)), lim = _mm_set1_ps(1e7f);
    const __m128 good = _mm_and_ps(
        _mm_and_ps(_mm_cmpgt_ps(d, _mm_setzero_ps()), _mm_cmpord_ps(z, z)),
        _mm_and_ps(_mm_cmplt_ps(_mm_and_ps(x, abs), lim), _mm_cmplt_ps(_mm_and_ps(y, abs), lim)));
    const int ok = _mm_movemask_ps(good);
    const __m128 sub = _mm_set1_ps((float)KR_SUBPIXEL);
    /* a bad lane's products may not fit: converted from zero instead */
    const __m128 xs = _mm_and_ps(good, _mm_mul_ps(x, sub)),
                 ys = _mm_and_ps(good, _mm_mul_ps(y, sub));
    _Alignas(16) float fx[4], fy[4], fz[4], fq[4];
    _mm_store_ps(fx, x);
    _mm_store_ps(fy, y);
    _mm_store_ps(fz, z);
    _mm_store_ps(fq, q);
    o[0].X = _mm_cvtss_si64(xs);
    o[0].Y = _mm_cvtss_si64(ys);
    o[1].X = _mm_cvtss_si64(_mm_shuffle_ps(xs, xs, 1));
    o[1].Y = _mm_cvtss_si64(_mm_shuffle_ps(ys, ys, 1));
    o[2].X = _mm_cvtss_si64(_mm_shuffle_ps(xs, xs, 2));
    o[2].Y = _mm_cvtss_si64(_mm_shuffle_ps(ys, ys, 2));
    for (int k = 0; k < 3; k++) {
        o[k].x = fx[k];
        o[k].y = fy[k];
        o[k].z = fz[k];
        o[k].q = fq[k];
        o[k].attr = v[k] + 4;
        o[k].bad = !(ok >> k & 1);
    }
}
#endif

/* Equal bits, or both NaN: which of two NaN operands an operation passes
 * on (its sign and payload) depends on the order the compiler put them
 * in, and a NaN in any field marks the vertex bad, which drops its
 * triangle before the field is read. */
static bool same_float(float a, float b)
{
    return !memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b));
}

bool kr_screen3_same(const kiln_viewport *vp, const float *const v[3])
{
#if defined(__x86_64__)
    svert a[3], b[3];
    to_screen3(vp, v, a);
    for (int k = 0; k < 3; k++)
        to_screen(vp, v[k], &b[k]);
    for (int k = 0; k < 3; k++) {
        if (!same_float(a[k].x, b[k].x) || !same_float(a[k].y, b[k].y) ||
            !same_float(a[k].z, b[k].z) || !same_float(a[k].q, b[k].q) || a[k].X != b[k].X ||
            a[k].Y != b[k].Y || a[k].attr != b[k].attr || a[k].bad != b[k].bad)
            return false;
        if (!a[k].bad && (isnan(a[k].x) || isnan(a[k].y) || isnan(a[k].z) || isnan(a[k].q)))
            return false; /* a NaN field would be read */
    }
#else
    (void)vp;
    (void)v;
#endif
    return true;
}

static void setup_line(setup_ctx *sc, const svert *a, const svert *b, bool front);

static void setup_tri(setup_ctx *sc, const svert *v0, const svert *v1, const svert *v2)
{
    const kr_drawx *dx = sc->dx;
    const kd_state *s = dx->s;
    if (v0->bad || v1->bad || v2->bad)
        return;
    int64_t area = (v1->X - v0->X) * (v2->Y - v0->Y) - (v2->X - v0->X) * (v1->Y - v0->Y);
    if (area == 0)
        return;
    bool cw = area > 0; /* y grows downward */
    bool front = cw != (s->front_ccw != 0);
    /* The cull mode first: a stream of small triangles has both windings
     * at random, and a test of `front` first mispredicted half of them. */
    if ((s->cull == KILN_CULL_BACK || s->cull == KILN_CULL_FRONT) &&
        front == (s->cull == KILN_CULL_FRONT))
        return;
    if (s->fill == KILN_FILL_WIREFRAME) {
        setup_line(sc, v0, v1, front);
        setup_line(sc, v1, v2, front);
        setup_line(sc, v2, v0, front);
        return;
    }
    { /* clockwise order, selected rather than branched on (random) */
        const svert *t1 = area < 0 ? v2 : v1, *t2 = area < 0 ? v1 : v2;
        v1 = t1;
        v2 = t2;
    }
    int64_t minX = v0->X < v1->X ? v0->X : v1->X, maxX = v0->X > v1->X ? v0->X : v1->X;
    int64_t minY = v0->Y < v1->Y ? v0->Y : v1->Y, maxY = v0->Y > v1->Y ? v0->Y : v1->Y;
    minX = v2->X < minX ? v2->X : minX;
    maxX = v2->X > maxX ? v2->X : maxX;
    minY = v2->Y < minY ? v2->Y : minY;
    maxY = v2->Y > maxY ? v2->Y : maxY;
    /* Pixels whose centers can be inside: ceil((min - 128) / 256) ..
     * floor((max - 128) / 256); on a 4x target whose samples can be,
     * up to 6/16 pixel (96) from the centers. */
    const int64_t reach = sc->g->fb->samples > 1 ? 6 * (KR_SUBPIXEL / 16) : 0;
    int64_t x0 = -floor_div(-(minX - KR_SUBPIXEL / 2 - reach), KR_SUBPIXEL);
    int64_t y0 = -floor_div(-(minY - KR_SUBPIXEL / 2 - reach), KR_SUBPIXEL);
    int64_t x1 = floor_div(maxX - KR_SUBPIXEL / 2 + reach, KR_SUBPIXEL) + 1;
    int64_t y1 = floor_div(maxY - KR_SUBPIXEL / 2 + reach, KR_SUBPIXEL) + 1;
    int32_t minx = (int32_t)(x0 > sc->rx0 ? x0 : sc->rx0);
    int32_t miny = (int32_t)(y0 > sc->ry0 ? y0 : sc->ry0);
    int32_t maxx = (int32_t)(x1 < sc->rx1 ? x1 : sc->rx1);
    int32_t maxy = (int32_t)(y1 < sc->ry1 ? y1 : sc->ry1);
    if (minx >= maxx || miny >= maxy)
        return;
    uint32_t ncomp = dx->nvary * 4;
    kr_prim *p = kr_arena_alloc_lines(&sc->job->arena, sizeof(kr_prim) + sizeof(float) * 3 * ncomp);
    if (!p)
        return;
    /* Set up in place: every field is written below (no memset: for a
     * one-pixel triangle, zeroing the record cost as much as its setup). */
    p->kind = KR_TRI;
    p->front = front;
    p->prim_id = sc->prim_id;
    p->slice = sc->slice;
    p->dx = dx;
    p->minx = minx;
    p->miny = miny;
    p->maxx = maxx;
    p->maxy = maxy;
    const svert *v[3] = {v0, v1, v2};
    for (int k = 0; k < 3; k++) {
        const svert *a = v[k], *b = v[(k + 1) % 3];
        int64_t ddx = b->X - a->X, ddy = b->Y - a->Y;
        p->a[k] = -ddy;
        p->b[k] = ddx;
        p->c[k] = ddy * a->X - ddx * a->Y;
        /* bitwise, not short-circuit: random per edge, a branch
         * mispredicted about one edge per triangle */
        int64_t top_left = (int64_t)(ddy < 0) | ((int64_t)(ddy == 0) & (int64_t)(ddx > 0));
        p->c[k] -= 1 - top_left;
    }

    /* Planes from the snapped positions, relative to vertex 0. */
    double fx0 = (double)v0->X / KR_SUBPIXEL, fy0 = (double)v0->Y / KR_SUBPIXEL;
    double x1d = (double)v1->X / KR_SUBPIXEL - fx0, y1d = (double)v1->Y / KR_SUBPIXEL - fy0;
    double x2d = (double)v2->X / KR_SUBPIXEL - fx0, y2d = (double)v2->Y / KR_SUBPIXEL - fy0;
    double inv = 1.0 / (x1d * y2d - x2d * y1d);
    p->ox = (float)fx0;
    p->oy = (float)fy0;
#define PLANE(out, f0, f1, f2)                                                                     \
    do {                                                                                           \
        double d1 = (double)(f1) - (f0), d2 = (double)(f2) - (f0);                                 \
        (out)[0] = (float)(f0);                                                                    \
        (out)[1] = (float)((d1 * y2d - d2 * y1d) * inv);                                           \
        (out)[2] = (float)((d2 * x1d - d1 * x2d) * inv);                                           \
    } while (0)
    PLANE(p->z, v0->z, v1->z, v2->z);
    PLANE(p->q, v0->q, v1->q, v2->q);
    if (s->depth_bias || s->slope_bias != 0.0f) {
        float m = fabsf(p->z[1]) > fabsf(p->z[2]) ? fabsf(p->z[1]) : fabsf(p->z[2]);
        /* D3D10: UNORM depth: bias * 2^-bits; float depth: bias *
         * 2^(exponent(max |z| of the primitive) - 23). */
        float r = dx->depth_r;
        if (r == 0.0f) {
            float zm = fmaxf(fabsf(v0->z), fmaxf(fabsf(v1->z), fabsf(v2->z)));
            int e = 0;
            frexpf(zm, &e); /* zm = f * 2^e with f in [0.5, 1): exponent is e - 1 */
            r = zm > 0.0f ? ldexpf(1.0f, e - 1 - 23) : 0.0f;
        }
        float bias = (float)s->depth_bias * r + s->slope_bias * m;
        if (s->depth_bias_clamp > 0.0f && bias > s->depth_bias_clamp)
            bias = s->depth_bias_clamp;
        if (s->depth_bias_clamp < 0.0f && bias < s->depth_bias_clamp)
            bias = s->depth_bias_clamp;
        p->z[0] += bias;
    }
    p->attr = (float *)(p + 1);
#if defined(__x86_64__)
#define load2(f) _mm_loadl_pi(_mm_setzero_ps(), (const __m64 *)(const void *)(f))
    /* PLANE for two components at a time, in SSE2 doubles: the same
     * operations on each lane (ncomp is a multiple of 4). */
    const __m128d Y1 = _mm_set1_pd(y1d), Y2 = _mm_set1_pd(y2d), X1 = _mm_set1_pd(x1d),
                  X2 = _mm_set1_pd(x2d), INV = _mm_set1_pd(inv);
    for (uint32_t k = 0; k < ncomp; k += 2) {
        __m128 f0 = _mm_mul_ps(load2(v0->attr + k),
                               _mm_set1_ps(v0->q));
        __m128 f1 = _mm_mul_ps(load2(v1->attr + k),
                               _mm_set1_ps(v1->q));
        __m128 f2 = _mm_mul_ps(load2(v2->attr + k),
                               _mm_set1_ps(v2->q));
        __m128d d0 = _mm_cvtps_pd(f0);
        __m128d d1 = _mm_sub_pd(_mm_cvtps_pd(f1), d0), d2 = _mm_sub_pd(_mm_cvtps_pd(f2), d0);
        __m128 g1 = _mm_cvtpd_ps(_mm_mul_pd(_mm_sub_pd(_mm_mul_pd(d1, Y2), _mm_mul_pd(d2, Y1)), INV));
        __m128 g2 = _mm_cvtpd_ps(_mm_mul_pd(_mm_sub_pd(_mm_mul_pd(d2, X1), _mm_mul_pd(d1, X2)), INV));
        float lo[4], h1[4], h2[4];
        _mm_storeu_ps(lo, f0);
        _mm_storeu_ps(h1, g1);
        _mm_storeu_ps(h2, g2);
        float *out = p->attr + 3 * k;
        out[0] = lo[0];
        out[1] = h1[0];
        out[2] = h2[0];
        out[3] = lo[1];
        out[4] = h1[1];
        out[5] = h2[1];
    }
#undef load2
#else
    for (uint32_t k = 0; k < ncomp; k++)
        PLANE(p->attr + 3 * k, v0->attr[k] * v0->q, v1->attr[k] * v1->q, v2->attr[k] * v2->q);
#endif
#undef PLANE
    bin(sc, p);
}

static void setup_line(setup_ctx *sc, const svert *a, const svert *b, bool front)
{
    const kr_drawx *dx = sc->dx;
    if (a->bad || b->bad)
        return;
    uint32_t ncomp = dx->nvary * 4;
    kr_prim *p = kr_arena_alloc(&sc->job->arena, sizeof(kr_prim) + sizeof(float) * 2 * ncomp);
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->kind = KR_LINE;
    p->front = front;
    p->prim_id = sc->prim_id;
    p->slice = sc->slice;
    p->dx = dx;
    p->x0 = (float)a->X / KR_SUBPIXEL;
    p->y0 = (float)a->Y / KR_SUBPIXEL;
    p->x1 = (float)b->X / KR_SUBPIXEL;
    p->y1 = (float)b->Y / KR_SUBPIXEL;
    p->z[0] = a->z;
    p->z[1] = b->z;
    p->q[0] = a->q;
    p->q[1] = b->q;
    p->attr = (float *)(p + 1);
    for (uint32_t k = 0; k < ncomp; k++) {
        p->attr[2 * k] = a->attr[k] * a->q;
        p->attr[2 * k + 1] = b->attr[k] * b->q;
    }
    float mnx = p->x0 < p->x1 ? p->x0 : p->x1, mxx = p->x0 < p->x1 ? p->x1 : p->x0;
    float mny = p->y0 < p->y1 ? p->y0 : p->y1, mxy = p->y0 < p->y1 ? p->y1 : p->y0;
    int32_t x0 = (int32_t)floorf(mnx) - 1, y0 = (int32_t)floorf(mny) - 1;
    int32_t x1 = (int32_t)floorf(mxx) + 2, y1 = (int32_t)floorf(mxy) + 2;
    p->minx = x0 > sc->rx0 ? x0 : sc->rx0;
    p->miny = y0 > sc->ry0 ? y0 : sc->ry0;
    p->maxx = x1 < sc->rx1 ? x1 : sc->rx1;
    p->maxy = y1 < sc->ry1 ? y1 : sc->ry1;
    if (p->minx >= p->maxx || p->miny >= p->maxy)
        return;
    bin(sc, p);
}

static void setup_point(setup_ctx *sc, const svert *a)
{
    const kr_drawx *dx = sc->dx;
    if (a->bad)
        return;
    uint32_t ncomp = dx->nvary * 4;
    /* A point is a 1x1 square centered on the vertex, covered with the
     * top-left rule: the pixel n with n + 0.5 in [x - 0.5, x + 0.5). */
    int32_t x = (int32_t)-floor_div(-(a->X - KR_SUBPIXEL), KR_SUBPIXEL);
    int32_t y = (int32_t)-floor_div(-(a->Y - KR_SUBPIXEL), KR_SUBPIXEL);
    if (x < sc->rx0 || x >= sc->rx1 || y < sc->ry0 || y >= sc->ry1)
        return;
    kr_prim *p = kr_arena_alloc(&sc->job->arena, sizeof(kr_prim) + sizeof(float) * ncomp);
    if (!p)
        return;
    memset(p, 0, sizeof *p);
    p->kind = KR_POINT;
    p->front = 1;
    p->prim_id = sc->prim_id;
    p->slice = sc->slice;
    p->dx = dx;
    p->minx = x;
    p->miny = y;
    p->maxx = x + 1;
    p->maxy = y + 1;
    p->z[0] = a->z;
    p->attr = (float *)(p + 1);
    memcpy(p->attr, a->attr, sizeof(float) * ncomp);
    bin(sc, p);
}

/* ---- the job ---- */

/* seg_range for the strips and the adjacency lists. */
static void seg_range_general(const kr_seg *seg, kiln_topology topo, uint32_t vpp, uint32_t *p0,
                              uint32_t *p1)
{
    uint32_t np = kd_prim_count(topo, seg->d->count);
    uint32_t pos[6];
    if (topo >= KILN_TOPOLOGY_LINE_LIST_ADJ) {
        /* Positions grow with the primitive: the first one's smallest to
         * the last one's largest. */
        uint32_t lo = UINT32_MAX, hi = 0;
        prim_positions(topo, seg->first, np, pos);
        for (uint32_t k = 0; k < vpp; k++)
            lo = pos[k] < lo ? pos[k] : lo;
        prim_positions(topo, seg->first + seg->count - 1, np, pos);
        for (uint32_t k = 0; k < vpp; k++)
            hi = pos[k] > hi ? pos[k] : hi;
        *p0 = lo;
        *p1 = hi + 1;
        return;
    }
    prim_positions(topo, seg->first, np, pos);
    *p0 = pos[0] < pos[1] || vpp == 1 ? pos[0] : pos[1];
    prim_positions(topo, seg->first + seg->count - 1, np, pos);
    *p1 = pos[vpp - 1] + 1;
    if (topo == KILN_TOPOLOGY_TRIANGLE_STRIP)
        *p1 = seg->first + seg->count + 2;
}

/* The vertex positions [p0, p1) a segment's primitives read. A list's
 * primitive j reads vpp j .. vpp j + vpp - 1, which is what
 * seg_range_general works out for it; inline, without those calls, which
 * were 4.4% of bench (d)'s instructions (cachegrind), where every draw is
 * one segment of one triangle and each segment's range is asked 3 times. */
static inline void seg_range(const kr_seg *seg, uint32_t *p0, uint32_t *p1)
{
    kiln_topology topo = seg->dx->s->topology;
    uint32_t vpp = verts_per_prim(topo);
    if (topo == KILN_TOPOLOGY_TRIANGLE_LIST || topo == KILN_TOPOLOGY_LINE_LIST ||
        topo == KILN_TOPOLOGY_POINT_LIST) {
        *p0 = seg->first * vpp;
        *p1 = (seg->first + seg->count) * vpp;
        return;
    }
    seg_range_general(seg, topo, vpp, p0, p1);
}

/* The raster rect and clip constants of a draw context; false when the
 * rect is empty or rasterization is off (nothing can be drawn; the
 * contexts are filled anyway, for stream output). */
static bool setup_begin(const kr_geom_ctx *g, kr_job *job, const kr_drawx *dx, setup_ctx *out_sc,
                        clip_ctx *out_cc)
{
    const kd_state *s = dx->s;
    setup_ctx sc = {.g = g, .dx = dx, .job = job};
    /* Raster rect: the viewport's pixel centers, the target, the scissor. */
    sc.rx0 = (int32_t)ceilf(s->vp.x - 0.5f);
    sc.ry0 = (int32_t)ceilf(s->vp.y - 0.5f);
    sc.rx1 = (int32_t)ceilf(s->vp.x + s->vp.width - 0.5f);
    sc.ry1 = (int32_t)ceilf(s->vp.y + s->vp.height - 0.5f);
    if (sc.rx0 < 0) sc.rx0 = 0;
    if (sc.ry0 < 0) sc.ry0 = 0;
    if (sc.rx1 > (int32_t)g->fb->width) sc.rx1 = (int32_t)g->fb->width;
    if (sc.ry1 > (int32_t)g->fb->height) sc.ry1 = (int32_t)g->fb->height;
    if (s->scissor_enable) {
        if (sc.rx0 < s->scissor.left) sc.rx0 = s->scissor.left;
        if (sc.ry0 < s->scissor.top) sc.ry0 = s->scissor.top;
        if (sc.rx1 > s->scissor.right) sc.rx1 = s->scissor.right;
        if (sc.ry1 > s->scissor.bottom) sc.ry1 = s->scissor.bottom;
    }
    sc.raster = s->raster && sc.rx0 < sc.rx1 && sc.ry0 < sc.ry1;

    float vmax = s->vp.width > s->vp.height ? s->vp.width : s->vp.height;
    clip_ctx cc = {.nf = 4 + 4 * dx->nvary, .guard = vmax > 0.0f ? 262144.0f / vmax : 1.0f,
                   .depth_clip = s->depth_clip != 0};
    *out_sc = sc;
    *out_cc = cc;
    return sc.raster;
}

/* Keeps a copy of a primitive for stream output, at the end of the job's
 * list (written to the buffers in order once the wave's jobs are done). */
static void so_capture(setup_ctx *sc, const float *const *v, uint32_t nv, uint32_t stride)
{
    kr_job *job = sc->job;
    kr_so_prim *p = kr_arena_alloc(&job->arena, sizeof *p + sizeof(float) * nv * stride);
    if (!p)
        return; /* the arena failed: the scene fails */
    p->next = NULL;
    p->nv = nv;
    p->stride = stride;
    for (uint32_t k = 0; k < nv; k++)
        memcpy(p->v + k * stride, v[k], sizeof(float) * stride);
    if (job->so_tail)
        job->so_tail->next = p;
    else
        job->so_head = p;
    job->so_tail = p;
}

/* Clips and sets up one primitive of vpp (1..3) vertices. */
static inline void clip_setup(setup_ctx *sc, const clip_ctx *ccp, const float *const *v, uint32_t vpp)
{
    const clip_ctx cc = *ccp;
    const kd_state *s = sc->dx->s;
    sc->job->c_invocations++;
    uint32_t codes_or = 0, codes_and = 0x7f;
    for (uint32_t k = 0; k < vpp; k++) {
        uint32_t c = outcode(&cc, v[k]);
        codes_or |= c;
        codes_and &= c;
    }
    if (codes_and)
        return; /* all outside one plane */
    if (vpp == 1) {
        sc->job->c_primitives++;
        svert a;
        to_screen(&s->vp, v[0], &a);
        setup_point(sc, &a);
        return;
    }
    svert sv[MAX_POLY];
    uint32_t n = vpp;
    float poly[MAX_POLY][MAX_ATTR];
    if (!codes_or) { /* inside every plane: no copy, no clip */
#if defined(__x86_64__)
        if (vpp == 3) {
            to_screen3(&s->vp, v, sv);
            setup_tri(sc, &sv[0], &sv[1], &sv[2]);
            sc->job->c_primitives++;
            return;
        }
#endif
        for (uint32_t k = 0; k < vpp; k++)
            to_screen(&s->vp, v[k], &sv[k]);
    } else {
        for (uint32_t k = 0; k < vpp; k++)
            memcpy(poly[k], v[k], sizeof(float) * cc.nf);
        n = clip_poly(&cc, codes_or, poly, n, vpp == 3);
        for (uint32_t k = 0; k < n; k++)
            to_screen(&s->vp, poly[k], &sv[k]);
    }
    if (vpp == 2) {
        if (n == 2) {
            sc->job->c_primitives++;
            setup_line(sc, &sv[0], &sv[1], true);
        }
        return;
    }
    if (n >= 3)
        sc->job->c_primitives += n - 2;
    for (uint32_t k = 1; k + 1 < n; k++)
        setup_tri(sc, &sv[0], &sv[k], &sv[k + 1]);
}

/* Runs the geometry shader on one input primitive and sends what it
 * emitted on, in emission order: points, the lines of each line strip,
 * the triangles of each triangle strip (odd ones with their first two
 * vertices swapped, as in an input strip). A primitive's SV_PrimitiveID
 * is its first vertex's in strip order. */
static void run_gs(setup_ctx *sc, const clip_ctx *cc, const float *const *v, uint32_t nv, uint32_t prim_id,
                   uint32_t instance)
{
    const kd_state *s = sc->dx->s;
    kr_gs_out out;
    kr_gs_invoke(sc->dx, v, nv, prim_id, instance, &out);
    sc->job->gs_invocations++;
    uint32_t vpp = s->gs_output == KILN_GS_OUTPUT_POINT_LIST  ? 1
                   : s->gs_output == KILN_GS_OUTPUT_LINE_STRIP ? 2
                                                               : 3;
    uint32_t start = 0; /* the current strip's first vertex */
    for (uint32_t i = 0; i < out.n; i++) {
        if (out.restart[i])
            start = i;
        if (i - start + 1 < vpp)
            continue;
        uint32_t first = i + 1 - vpp; /* strip order */
        const float *pv[3];
        for (uint32_t k = 0; k < vpp; k++)
            pv[k] = out.v + (size_t)(first + k) * out.stride;
        if (vpp == 3 && ((first - start) & 1)) {
            const float *t = pv[0];
            pv[0] = pv[1];
            pv[1] = t;
        }
        sc->job->gs_primitives++;
        if (s->so.n)
            so_capture(sc, pv, vpp, out.stride);
        if (!sc->raster)
            continue;
        sc->prim_id = out.prim_id[first];
        /* An index past the views' slices draws into slice 0. */
        sc->slice = out.rt_index[first] < sc->g->nslices ? (uint16_t)out.rt_index[first] : 0;
        clip_setup(sc, cc, pv, vpp);
    }
}

/* Triangles set up eight at a time so far (tests: the path ran). */
static _Atomic uint64_t setup8_tris;

#if KR_SETUP8
/* Lane i of a kr_setup_tri8_avx512 or kr_setup_tri8_avx2 result as
 * setup_tri writes it: the record, then its tiles. */
static void emit_tri8(setup_ctx *sc, const kr_tri8 *t, const float *attr, uint32_t i,
                      uint32_t ncomp)
{
    const kr_drawx *dx = sc->dx;
    kr_prim *p = kr_arena_alloc_lines(&sc->job->arena, sizeof(kr_prim) + sizeof(float) * 3 * ncomp);
    if (!p)
        return;
    p->kind = KR_TRI;
    p->front = t->front[i];
    p->prim_id = sc->prim_id;
    p->slice = sc->slice;
    p->dx = dx;
    p->minx = t->minx[i];
    p->miny = t->miny[i];
    p->maxx = t->maxx[i];
    p->maxy = t->maxy[i];
    for (int k = 0; k < 3; k++) {
        p->a[k] = t->a[k][i];
        p->b[k] = t->b[k][i];
        p->c[k] = t->c[k][i];
        p->z[k] = t->z[k][i];
        p->q[k] = t->q[k][i];
    }
    p->ox = t->ox[i];
    p->oy = t->oy[i];
    p->attr = (float *)(p + 1);
    for (uint32_t k = 0; k < 3 * ncomp; k++)
        p->attr[k] = attr[(size_t)8 * k + i];
    bin(sc, p);
}

/* `count` triangles of a TRIANGLE_LIST eight at a time (setup8.h) at the
 * AVX2 and AVX-512 levels (kr_drawx.wide), where the draw needs nothing
 * setup_tri's lanes leave out: solid fill, no depth bias. Triangle t's
 * vertex m is row slot[3 t + m]; its SV_PrimitiveID is pid[t] (pid NULL:
 * pid0 + t). Each lane's outcome goes out in primitive order: its record,
 * nothing, or clip_setup for a triangle a clip plane cuts. Returns the
 * triangles done (a multiple of eight; the caller sends the rest one by
 * one). */
static uint32_t emit_tris8(setup_ctx *sc, const clip_ctx *cc, const float *rows,
                           const uint32_t *slot, const uint32_t *pid, uint32_t pid0, uint32_t count)
{
    const kr_drawx *dx = sc->dx;
    const kd_state *s = dx->s;
    if (count < 8 || !dx->wide || s->fill == KILN_FILL_WIREFRAME || s->depth_bias ||
        s->slope_bias != 0.0f || dx->nvary > KILN_MAX_VARYINGS)
        return 0;
    const uint32_t os = dx->out_stride, ncomp = dx->nvary * 4;
    const kr_tri8_consts k = {
        .vp_x = s->vp.x,
        .vp_y = s->vp.y,
        .vp_w = s->vp.width,
        .vp_h = s->vp.height,
        .vp_min = s->vp.min_depth,
        .vp_range = s->vp.max_depth - s->vp.min_depth,
        .guard = cc->guard,
        .depth_clip = cc->depth_clip,
        .rx0 = sc->rx0,
        .ry0 = sc->ry0,
        .rx1 = sc->rx1,
        .ry1 = sc->ry1,
        .reach = sc->g->fb->samples > 1 ? 6 * (KR_SUBPIXEL / 16) : 0,
        .cull_front = s->cull == KILN_CULL_FRONT,
        .cull_back = s->cull == KILN_CULL_BACK,
        .front_ccw = s->front_ccw != 0,
        .ncomp = ncomp,
    };
    /* the rows' offsets are the gathers' int32 indices */
    const uint32_t n8 = count - count % 8;
    uint32_t hi = 0;
    for (uint32_t m = 0; m < 3 * n8; m++)
        hi = slot[m] > hi ? slot[m] : hi;
    if (((uint64_t)hi + 1) * os > INT32_MAX)
        return 0;
    const kr_setup_tri8_fn setup8 = dx->wide16 ? kr_setup_tri8_avx512 : kr_setup_tri8_avx2;
    kr_tri8 t;
    float attr[3 * 8 * 4 * KILN_MAX_VARYINGS];
    const float *v[3];
    uint32_t done = 0;
    for (; done < n8; done += 8) {
        int32_t off[3][8];
        for (uint32_t i = 0; i < 8; i++)
            for (uint32_t m = 0; m < 3; m++)
                off[m][i] = (int32_t)(slot[3 * (done + i) + m] * os);
        setup8(&k, rows, (const int32_t(*)[8])off, &t, attr);
        for (uint32_t i = 0; i < 8; i++) {
            sc->prim_id = pid ? pid[done + i] : pid0 + done + i;
            if (t.status[i] == KR_TRI8_CLIP) {
                for (uint32_t m = 0; m < 3; m++)
                    v[m] = rows + off[m][i];
                clip_setup(sc, cc, v, 3);
                continue;
            }
            sc->job->c_invocations++;
            sc->job->c_primitives++;
            if (t.status[i] == KR_TRI8_EMIT)
                emit_tri8(sc, &t, attr, i, ncomp);
        }
    }
    atomic_fetch_add_explicit(&setup8_tris, done, memory_order_relaxed);
    return done;
}
#endif

uint64_t kr_setup8_count(void) { return atomic_load(&setup8_tris); }

/* Assembles, clips and sets up a segment's primitives from shaded rows:
 * vertex position p is row slot[p - p0]. */
static void emit_prims(setup_ctx *scp, const clip_ctx *ccp, const kr_seg *seg, const float *rows,
                       const uint32_t *slot, uint32_t p0)
{
    setup_ctx sc = *scp;
    const clip_ctx cc = *ccp;
    const kr_drawx *dx = seg->dx;
    const kd_state *s = dx->s;
    kiln_topology topo = s->topology;
    uint32_t vpp = verts_per_prim(topo);
    uint32_t np = kd_prim_count(topo, seg->d->count);
    uint32_t pos[6];
    uint32_t os = dx->out_stride;
    /* Indexed strips restart after a cut index (D3D10): primitives that
     * touch one are skipped, and the winding parity counts from the cut.
     * (A TRIANGLE_STRIP_ADJ is not restarted: its primitives that read a
     * cut index are skipped.) */
    bool cuts = seg->d->indexed &&
                (topo == KILN_TOPOLOGY_TRIANGLE_STRIP || topo == KILN_TOPOLOGY_LINE_STRIP ||
                 topo == KILN_TOPOLOGY_LINE_STRIP_ADJ || topo == KILN_TOPOLOGY_TRIANGLE_STRIP_ADJ);
    uint32_t strip = seg->strip_start;
    uint32_t j = seg->first;
#if KR_SETUP8
    if (topo == KILN_TOPOLOGY_TRIANGLE_LIST && !s->gs && !s->so.n && sc.raster)
        j += emit_tris8(&sc, &cc, rows, slot + (3 * j - p0), NULL, j, seg->count);
#endif
    for (; j < seg->first + seg->count; j++) {
        prim_positions(topo, j, np, pos);
        if (cuts) {
            bool cut = false;
            for (uint32_t k = 0; k < vpp; k++)
                if (kr_is_cut(dx, seg->d, pos[k])) {
                    cut = true;
                    if (pos[k] + 1 > strip)
                        strip = pos[k] + 1;
                }
            if (cut)
                continue;
            if (topo == KILN_TOPOLOGY_TRIANGLE_STRIP && ((j - strip) & 1) != (j & 1)) {
                uint32_t t = pos[0]; /* parity from the strip's start, not the draw's */
                pos[0] = pos[1];
                pos[1] = t;
            }
        }
        const float *v[6];
        for (uint32_t k = 0; k < vpp; k++)
            v[k] = rows + (size_t)slot[pos[k] - p0] * os;
        sc.prim_id = j;
        if (s->gs) {
            run_gs(&sc, &cc, v, vpp, j, seg->instance);
            continue;
        }
        if (s->so.n) /* a pass-through: the draw's own primitives */
            so_capture(&sc, v, vpp, os);
        if (sc.raster)
            clip_setup(&sc, &cc, v, vpp);
    }
}

static void run_segment(const kr_geom_ctx *g, kr_job *job, kr_arena *scratch, const kr_seg *seg)
{
    uint32_t p0, p1;
    seg_range(seg, &p0, &p1);
    float *rows;
    uint32_t *slot, shaded;
    if (!shade(seg->dx, seg->d, seg->instance, p0, p1, scratch, &rows, &slot, &shaded))
        return;
    job->vs_invocations += shaded;
    setup_ctx sc;
    clip_ctx cc;
    if (setup_begin(g, job, seg->dx, &sc, &cc) || seg->dx->s->so.n)
        emit_prims(&sc, &cc, seg, rows, slot, p0);
}

/* Consecutive segments of non-indexed list draws sharing one context and
 * instance (a stream of small draws) are shaded together: one vertex
 * shader pass over all their vertices, one raster rect, then each
 * segment's primitives in order. The same vertices, the same primitives in
 * the same order as segment by segment. */
#define GROUP_VERTS 256u

static bool groupable(const kr_seg *a, const kr_seg *b)
{
    kiln_topology t = a->dx->s->topology;
    return a->dx == b->dx && !a->d->indexed && !b->d->indexed && a->instance == b->instance &&
           a->d->start_instance == b->d->start_instance &&
           (t == KILN_TOPOLOGY_TRIANGLE_LIST || t == KILN_TOPOLOGY_LINE_LIST ||
            t == KILN_TOPOLOGY_POINT_LIST);
}

static void run_group(const kr_geom_ctx *g, kr_job *job, kr_arena *scratch, const kr_seg *segs,
                      uint32_t n, uint32_t nverts)
{
    uint32_t *vid = kr_arena_alloc(scratch, sizeof(uint32_t) * nverts);
    uint32_t *slot = kr_arena_alloc(scratch, sizeof(uint32_t) * nverts);
    if (!vid || !slot)
        return;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p0, p1;
        seg_range(&segs[i], &p0, &p1);
        for (uint32_t p = p0; p < p1; p++, k++) {
            vid[k] = segs[i].d->start + p; /* non-indexed: consecutive ids */
            slot[k] = k;
        }
    }
    float *rows = shade_vertices(segs[0].dx, segs[0].d, segs[0].instance, vid, nverts, scratch);
    if (!rows)
        return;
    job->vs_invocations += nverts;
    setup_ctx sc;
    clip_ctx cc;
    if (!setup_begin(g, job, segs[0].dx, &sc, &cc) && !segs[0].dx->s->so.n)
        return;
#if KR_SETUP8
    /* A group of triangle lists is one run of triangles (each segment's
     * vertices follow the one before): eight at a time across the draws,
     * each with its own SV_PrimitiveID. */
    const kd_state *s = segs[0].dx->s;
    if (segs[0].dx->wide && s->topology == KILN_TOPOLOGY_TRIANGLE_LIST && !s->gs && !s->so.n &&
        sc.raster && nverts >= 24) {
        const uint32_t ntris = nverts / 3, os = segs[0].dx->out_stride;
        uint32_t *pid = kr_arena_alloc(scratch, sizeof(uint32_t) * ntris);
        if (!pid)
            return;
        for (uint32_t i = 0, t = 0; i < n; i++)
            for (uint32_t j = 0; j < segs[i].count; j++)
                pid[t++] = segs[i].first + j;
        uint32_t t = emit_tris8(&sc, &cc, rows, slot, pid, 0, ntris);
        for (; t < ntris; t++) {
            const float *v[3] = {rows + (size_t)slot[3 * t] * os,
                                 rows + (size_t)slot[3 * t + 1] * os,
                                 rows + (size_t)slot[3 * t + 2] * os};
            sc.prim_id = pid[t];
            clip_setup(&sc, &cc, v, 3);
        }
        return;
    }
#endif
    k = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t p0, p1;
        seg_range(&segs[i], &p0, &p1);
        emit_prims(&sc, &cc, &segs[i], rows, slot + k, p0);
        k += p1 - p0;
    }
}

/* The staged pairs sorted by tile into the job's bins: counted, each
 * tile given its range (tile after tile in pieces of KR_BIN_PIECE
 * pointers, which the device's pool keeps and hands out again: one array
 * for a job of many large primitives could pass the pool's 1 MiB chunks
 * and be allocated and faulted in every frame), then placed in staging
 * order (stable: a tile keeps the order the job binned its primitives
 * in). */
static void bins_finish(const kr_geom_ctx *g, kr_job *job, const kr_binstaging *st)
{
    const size_t nbins = (size_t)g->tiles_x * g->tiles_y;
    bool any = false;
    for (const kr_binstage *b = st->head; b && !any; b = b->next)
        any = b->n != 0;
    if (!any)
        return; /* bins stays NULL: nothing in any tile */
    kr_bin *bins = kr_arena_alloc(&job->arena, sizeof(kr_bin) * nbins);
    if (!bins)
        return; /* the arena failed: so does the scene */
    memset(bins, 0, sizeof(kr_bin) * nbins);
    for (const kr_binstage *b = st->head; b; b = b->next)
        for (uint32_t k = 0; k < b->n; k++)
            bins[b->tile[k]].n++;
    /* Each tile's range. A tile holds at most a job's primitives (about
     * 1,024), far less than a piece. */
    const kr_prim **piece = NULL;
    size_t left = 0;
    for (size_t t = 0; t < nbins; t++) {
        uint32_t n = bins[t].n;
        if (!n)
            continue;
        if (n > left) {
            left = n > KR_BIN_PIECE ? n : KR_BIN_PIECE;
            if (!(piece = kr_arena_alloc(&job->arena, sizeof(*piece) * left)))
                return;
        }
        bins[t].p = piece;
        bins[t].n = 0; /* counted again as the placing fills the range */
        piece += n;
        left -= n;
    }
    for (const kr_binstage *b = st->head; b; b = b->next)
        for (uint32_t k = 0; k < b->n; k++) {
            kr_bin *bt = &bins[b->tile[k]];
            ((const kr_prim **)bt->p)[bt->n++] = b->p[k];
        }
    job->bins = bins;
}

void kr_geom_run(const kr_geom_ctx *g, kr_job *job)
{
    /* Shaded vertices and the staged bins are needed only here: their
     * chunks go back to the pool at once, for the next job, instead of
     * living with the bins until the wave's tiles are done. */
    kr_arena scratch = {.env = job->arena.env, .pool = job->arena.pool};
    kr_binstaging st = {.ar = &scratch, .head = kr_arena_alloc(&scratch, sizeof(kr_binstage))};
    if (!st.head) {
        job->arena.failed = true;
        return;
    }
    st.head->next = NULL;
    st.head->n = 0;
    st.tail = st.head;
    job->stage = &st;
    for (uint32_t i = 0; i < job->nsegs && !job->arena.failed && !scratch.failed;) {
        const kr_seg *seg = &job->segs[i];
        uint32_t n = 1, p0, p1;
        seg_range(seg, &p0, &p1);
        uint32_t nverts = p1 - p0;
        while (i + n < job->nsegs && groupable(seg, &seg[n])) {
            seg_range(&seg[n], &p0, &p1);
            if (nverts + (p1 - p0) > GROUP_VERTS)
                break;
            nverts += p1 - p0;
            n++;
        }
        if (n > 1)
            run_group(g, job, &scratch, seg, n, nverts);
        else
            run_segment(g, job, &scratch, seg);
        i += n;
    }
    job->arena.failed |= scratch.failed;
    /* nothing staged without targets (a stream-output scene: no tiles) */
    if (!job->arena.failed)
        bins_finish(g, job, &st);
    job->stage = NULL;
    kr_arena_free(&scratch);
}
