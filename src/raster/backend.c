/* The soft backend's commands: a scene runs its geometry jobs on all
 * workers, then rasterizes every tile on all workers, each tile processing
 * its jobs in submission order, in waves of bounded size. */
#include "effects.h"
#include "geom.h"

#include <assert.h>
#include <string.h>

/* Primitives set up per wave (and KR_WAVE_JOBS jobs, geom.h): bound the
 * memory of bins and vertices. */
#define WAVE_PRIMS (256u << 10)
#define JOB_PRIMS 1024u

/* ---- execution ---- */

static void build_fb(const kd_scene *s, const kq_cmd *cmd, kr_fb *fb)
{
    memset(fb, 0, sizeof *fb);
    fb->width = UINT32_MAX;
    fb->height = UINT32_MAX;
    fb->nrt = s->nrt;
    fb->samples = 1;
    for (uint32_t r = 0; r < s->nrt; r++) {
        const kres_view *v = s->rtv[r];
        if (!v)
            continue;
        const kres_subresource *sub = kres_plane_sub(v->res, v->first_mip, v->first_slice);
        fb->rt[r] = kd_node_storage(cmd, v->res)->data + kres_plane_offset(v->res, v->first_mip, v->first_slice);
        fb->rt_pitch[r] = sub->row_pitch;
        fb->rt_format[r] = v->format;
        fb->rt_plane[r] = (size_t)sub->row_pitch * sub->height;
        fb->samples = v->res->samples;
        fb->width = KB_MIN(fb->width, sub->width);
        fb->height = KB_MIN(fb->height, sub->height);
    }
    if (s->dsv) {
        const kres_view *v = s->dsv;
        const kres_subresource *sub = kres_plane_sub(v->res, v->first_mip, v->first_slice);
        fb->ds = kd_node_storage(cmd, v->res)->data + kres_plane_offset(v->res, v->first_mip, v->first_slice);
        fb->ds_pitch = sub->row_pitch;
        fb->ds_format = v->format;
        fb->ds_plane = (size_t)sub->row_pitch * sub->height;
        fb->samples = v->res->samples;
        fb->width = KB_MIN(fb->width, sub->width);
        fb->height = KB_MIN(fb->height, sub->height);
    }
    if (fb->width == UINT32_MAX)
        fb->width = fb->height = 0;
}

/* Whether two draws' views resolve to the same textures: one state block
 * (the views, samplers) and the same storages under them. */
static bool same_textures(const kd_draw *a, const kd_draw *b)
{
    return a->state == b->state && kd_bind_same_views(a->bind, b->bind);
}

static bool has_textures(const kd_draw *d)
{
    return d->state->nsrv || d->state->n_vs_srv || d->state->n_gs_srv;
}

/* Texture sets a draw with its own views needs: one per stage that has any. */
static size_t texture_sets(const kd_state *s)
{
    return (size_t)(s->nsrv != 0) + (s->n_vs_srv != 0) + (s->n_gs_srv != 0);
}

/* One stage's views resolved (slots past n stay empty: zeroed) and its
 * samplers (every slot resolved in the state). */
static void build_textures(const kd_sampler *samp, kres_view *const *srv, kres_storage *const *st, uint32_t n,
                           struct kiln_ps_textures *t)
{
    memset(t, 0, sizeof *t);
    for (uint32_t i = 0; i < n; i++) {
        const kres_view *v = srv[i];
        if (!v || !st[i])
            continue;
        t->tex[i] = (kr_texture){st[i]->data, v->res->subs, v->format, v->res->mip_levels,
                                 v->first_mip, v->num_mips, v->first_slice, v->num_slices, v->dim,
                                 v->first_element, v->num_elements, 0};
        t->tex[i].quick = kr_texture_quick(&t->tex[i]);
    }
    for (int i = 0; i < KILN_MAX_SAMPLERS; i++)
        t->samp[i] = &samp[i];
    kr_textures_prepare(t);
}

/* The textures of a draw context: those of `prev` (the last context that
 * has some) when they are the same, else resolved into the next of
 * `sets` (the counting pass reserved them). */
static void draw_textures(const kd_draw *d, kr_drawx *x, const kr_drawx *prev, struct kiln_ps_textures *sets,
                          uint32_t *nsets)
{
    const kd_state *s = d->state;
    if (!has_textures(d))
        return;
    if (prev && same_textures(prev->tex_owner, d)) {
        x->tex = prev->tex;
        x->vs_tex = prev->vs_tex;
        x->gs_tex = prev->gs_tex;
        x->tex_owner = prev->tex_owner;
        return;
    }
    x->tex_owner = d;
    if (s->nsrv) {
        build_textures(s->samp, s->srv, d->bind->srv_st, s->nsrv, &sets[*nsets]);
        x->tex = &sets[(*nsets)++];
    }
    if (s->n_vs_srv) {
        build_textures(s->vs_samp, s->vs_srv, d->bind->vs_srv_st, s->n_vs_srv, &sets[*nsets]);
        x->vs_tex = &sets[(*nsets)++];
    }
    if (s->n_gs_srv) {
        build_textures(s->gs_samp, s->gs_srv, d->bind->gs_srv_st, s->n_gs_srv, &sets[*nsets]);
        x->gs_tex = &sets[(*nsets)++];
    }
}

/* Fills a draw context but its textures and block function (draw_textures,
 * then kr_block_select, which reads them). */
static void build_drawx(const kd_draw *d, const kr_fb *fb, kr_drawx *x)
{
    const kd_state *s = d->state;
    memset(x, 0, sizeof *x);
    x->d = d;
    x->s = s;
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++) {
        if (!d->bind->vb_st[i])
            continue;
        size_t size = d->bind->vb_st[i]->size;
        x->vb[i] = d->bind->vb_st[i]->data + s->vb_offset[i];
        x->vb_size[i] = s->vb_offset[i] < size ? size - s->vb_offset[i] : 0;
    }
    for (uint32_t i = 0; i < d->bind->n_vs_cb; i++)
        if (d->bind->vs_cb_st[i]) {
            x->vs_cb[i] = d->bind->vs_cb_st[i]->data;
            x->vs_cb_size[i] = (uint32_t)d->bind->vs_cb_st[i]->size;
        }
    for (uint32_t i = 0; i < d->bind->n_ps_cb; i++)
        if (d->bind->ps_cb_st[i]) {
            x->ps_cb[i] = d->bind->ps_cb_st[i]->data;
            x->ps_cb_size[i] = (uint32_t)d->bind->ps_cb_st[i]->size;
        }
    x->nvary = s->ps_varyings;
    x->vmask = s->ps_reads;
    x->out_stride = 4 + 4 * s->vs_varyings;
    x->vs_writes = kr_effect_vs_writes(s->vs, s->vs_varyings);
    x->early_z = !(s->ps_flags & KILN_PS_MAY_DISCARD);
    /* 0: float depth, whose unit depends on each primitive (geom.c). */
    x->depth_r = fb->ds_format == KILN_FORMAT_D24_UNORM_S8_UINT ? 1.0f / 16777216.0f
                 : fb->ds_format == KILN_FORMAT_D16_UNORM       ? 1.0f / 65536.0f
                                                                 : 0.0f;
    x->wide = kr_effects_active_level() >= KR_SIMD_AVX2;
    x->wide16 = kr_effects_active_level() >= KR_SIMD_AVX512;
    kr_output_select(x, fb);
}

/* Stream output of a scene (its one draw streams out): where each
 * buffer's next vertex goes, and the counts for SO queries. */
typedef struct so_writer {
    uint8_t *data[KILN_SO_BUFFER_SLOTS]; /* NULL: slot unused by the declaration */
    uint32_t size[KILN_SO_BUFFER_SLOTS], pos[KILN_SO_BUFFER_SLOTS];
    uint32_t el_offset[KILN_SO_MAX_ELEMENTS]; /* bytes into its slot's vertex */
    const kres_so_decl *decl;
    uint64_t written, needed;
} so_writer;

static void so_begin(const kd_scene *s, const kq_cmd *cmd, const kres_so_decl *decl, so_writer *w)
{
    memset(w, 0, sizeof *w);
    w->decl = decl;
    uint32_t at[KILN_SO_BUFFER_SLOTS] = {0};
    for (uint32_t i = 0; i < decl->n; i++) {
        w->el_offset[i] = at[decl->el[i].slot];
        at[decl->el[i].slot] += 4u * decl->el[i].count;
    }
    for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++) {
        kres_resource *res = s->so[k];
        if (!decl->stride[k] || !res) /* the API checked every declared slot has one */
            continue;
        w->data[k] = kd_node_storage(cmd, res)->data;
        w->size[k] = res->width;
        w->pos[k] = s->so_offset[k] == KILN_SO_APPEND ? res->so_filled : s->so_offset[k];
    }
}

/* Writes a job's primitives, in order. D3D10: a primitive that does not
 * fit whole in every declared buffer is written to none (and counted as
 * needed, not written); writes never pass a buffer's end. */
static void so_write(so_writer *w, const kr_job *job)
{
    const kres_so_decl *d = w->decl;
    for (const kr_so_prim *p = job->so_head; p; p = p->next) {
        w->needed++;
        bool fits = true;
        for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++)
            if (w->data[k] && (uint64_t)w->pos[k] + (uint64_t)p->nv * d->stride[k] > w->size[k])
                fits = false;
        if (!fits)
            continue;
        w->written++;
        for (uint32_t v = 0; v < p->nv; v++) {
            const float *src = p->v + (size_t)v * p->stride;
            for (uint32_t i = 0; i < d->n; i++) {
                const kres_so_el *e = &d->el[i];
                memcpy(w->data[e->slot] + w->pos[e->slot] + w->el_offset[i], src + 4 * e->reg + e->start,
                       4u * e->count);
            }
            for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++)
                if (w->data[k])
                    w->pos[k] += d->stride[k];
        }
    }
}

/* Where the writes ended: the buffers' filled sizes (for append and
 * draw_auto). The command holds every target for writing. */
static void so_end(const kd_scene *s, const so_writer *w)
{
    for (int k = 0; k < KILN_SO_BUFFER_SLOTS; k++)
        if (w->data[k])
            s->so[k]->so_filled = w->pos[k];
}

/* What one input primitive weighs in a job: 1, or with a geometry shader
 * the vertices it may emit (a bound on the primitives of any output
 * topology: a job of 1,024 input primitives that emit 256 points each
 * would bin a quarter million), so a job holds at most about JOB_PRIMS
 * output primitives either way. */
static uint32_t prim_weight(const kd_state *s)
{
    uint32_t w = s->gs && s->gs_max_vertices > 1 ? s->gs_max_vertices : 1;
    return KB_MIN(w, JOB_PRIMS);
}

typedef struct exec_ctx {
    kr_geom_ctx g;
    kr_fb fb;
    /* Layered rendering: the scene's views and their storages' bytes, for
     * the fb of another slice (slice_fb); g.nslices > 1 only then. */
    const kres_view *views[KILN_MAX_RENDER_TARGETS + 1]; /* targets, then depth */
    uint8_t *view_data[KILN_MAX_RENDER_TARGETS + 1];
    kr_job *jobs;
    uint32_t first, count; /* the wave */
    bool last_wave;        /* no job follows the wave's */
    uint64_t *tile_counts; /* per tile (kr_fb.counts), NULL: not counting */
    kr_pool *hsr;          /* its kr_hsr slots when a draw defers (kr_drawx.hsr) */
    kr_pool *tb;           /* its kr_tilebuf slots, NULL: no tile buffers */
} exec_ctx;

static void geom_task(void *arg, uint32_t i)
{
    exec_ctx *e = arg;
    kr_job *job = &e->jobs[e->first + i];
    if (!job->clear)
        kr_geom_run(&e->g, job);
}

/* A tile's primitives are gathered from the wave's bins in batches
 * before they are rasterized: the bins and the primitives are scattered
 * over every job's memory, and a loop that only collects pointers (and
 * prefetches the records) overlaps those cache misses instead of taking
 * them one at a time between rasterizations. */
#define TILE_BATCH 256

/* How far ahead tile_task fetches the jobs' bins. */
#define PREFETCH_JOBS 16u

static inline void prefetch_line(const void *p)
{
#if defined(__GNUC__)
    __builtin_prefetch(p, 0, 2); /* NULL is fine: a prefetch never faults */
#else
    (void)p;
#endif
}

static void prefetch_prim(const kr_prim *p)
{
#if defined(__GNUC__)
    /* The record and its attribute planes: a few lines from p on. */
    const char *c = (const char *)p;
    __builtin_prefetch(c, 0, 2);
    __builtin_prefetch(c + 64, 0, 2);
    __builtin_prefetch(c + 128, 0, 2);
    __builtin_prefetch(c + 192, 0, 2);
#else
    (void)p;
#endif
}

/* The framebuffer of slice `slice` (< g.nslices) of the scene's array
 * views: `fb` (slice 0's, with the tile's counters) moved to that slice. */
static void slice_fb(const exec_ctx *e, const kr_fb *fb, uint32_t slice, kr_fb *out)
{
    *out = *fb;
    for (uint32_t i = 0; i <= KILN_MAX_RENDER_TARGETS; i++) {
        const kres_view *v = e->views[i];
        if (!v)
            continue;
        size_t off = kres_plane_offset(v->res, v->first_mip, v->first_slice + slice);
        /* the storage's own pitch and sample stride: fb's may be a tile
         * buffer's (never in a scene with layers today: docs/raster.md,
         * "Tile buffers") */
        if (i < KILN_MAX_RENDER_TARGETS) {
            out->rt[i] = e->view_data[i] + off;
            out->rt_pitch[i] = e->fb.rt_pitch[i];
            out->rt_plane[i] = e->fb.rt_plane[i];
        } else {
            out->ds = e->view_data[i] + off;
            out->ds_pitch = e->fb.ds_pitch;
            out->ds_plane = e->fb.ds_plane;
        }
    }
}

static void raster_batch(const exec_ctx *e, const kr_fb *fb, const kr_prim *const *batch, uint32_t n,
                         int x0, int y0, int x1, int y1)
{
    kr_hsr *h = fb->hsr;
    for (uint32_t k = 0; k < n; k++) {
        if (h) {
            const kr_prim *p = batch[k];
            if (p->dx->hsr && p->kind == KR_TRI && !p->slice) {
                kr_hsr_prim(h, p, fb, x0, y0, x1, y1);
                continue;
            }
            if (h->n) /* what was deferred goes first */
                kr_hsr_resolve(h, fb);
        }
        if (batch[k]->slice) {
            kr_fb f;
            slice_fb(e, fb, batch[k]->slice, &f);
            kr_raster_prim(batch[k], &f, x0, y0, x1, y1);
        } else {
            kr_raster_prim(batch[k], fb, x0, y0, x1, y1);
        }
    }
}

/* Whether no job after job j of the scene draws into tile t, nor clears
 * (a later clear's stores may follow streaming ones to the same lines):
 * known in the scene's last wave only (a later wave's bins are not made
 * yet). */
static bool untouched_after(const exec_ctx *e, uint32_t j, uint32_t t)
{
    if (!e->last_wave)
        return false;
    for (uint32_t k = j + 1; k < e->first + e->count; k++)
        if (e->jobs[k].clear || (e->jobs[k].bins && e->jobs[k].bins[t].n))
            return false;
    return true;
}

static void tile_task(void *arg, uint32_t t)
{
    exec_ctx *e = arg;
    /* A counted scene gives each tile its own counters: summed after the
     * scene, in tile order, so the totals never depend on the threads. */
    kr_fb fb_counted;
    const kr_fb *fb = &e->fb;
    if (e->tile_counts) {
        fb_counted = e->fb;
        fb_counted.counts = &e->tile_counts[2 * (size_t)t];
        fb = &fb_counted;
    }
    uint32_t tx = t % e->g.tiles_x, ty = t / e->g.tiles_x;
    int x0 = (int)(tx * KR_TILE), y0 = (int)(ty * KR_TILE);
    int x1 = (int)KB_MIN(e->fb.width, (tx + 1) * KR_TILE), y1 = (int)KB_MIN(e->fb.height, (ty + 1) * KR_TILE);
    /* Deferred shading (kr_hsr) when a draw allows it and a slot is free
     * (never in a counted scene: e->hsr is NULL then). */
    kr_fb fb_hsr;
    kr_hsr *h = e->hsr ? kr_pool_hsr_get(e->hsr) : NULL;
    if (h) {
        fb_hsr = *fb;
        fb_hsr.hsr = h;
        fb = &fb_hsr;
        kr_hsr_begin(h, x0, y0, fb->samples);
    }
    kr_tile_planes tp = {.pool = e->tb, .home = &e->fb};
    const kr_prim *batch[TILE_BATCH];
    uint32_t n = 0;
    uint32_t end = e->first + e->count;
    for (uint32_t j = e->first; j < end; j++) {
        const kr_job *job = &e->jobs[j];
        /* Each job's bin of this tile is a range in its own memory: a miss
         * for the tile's record (pointer and count), then one for the
         * range. Both are fetched ahead (the record PREFETCH_JOBS jobs
         * ahead, the range half as far), so the walk below finds them in
         * cache. */
        if (j + PREFETCH_JOBS < end && e->jobs[j + PREFETCH_JOBS].bins)
            prefetch_line(&e->jobs[j + PREFETCH_JOBS].bins[t]);
        if (j + PREFETCH_JOBS / 2 < end && e->jobs[j + PREFETCH_JOBS / 2].bins)
            prefetch_line(e->jobs[j + PREFETCH_JOBS / 2].bins[t].p);
        const kd_op *op = job->clear;
        if (op) {
            /* In order: what was gathered before the clear goes first. */
            raster_batch(e, fb, batch, n, x0, y0, x1, y1);
            n = 0;
            if (h && h->n)
                kr_hsr_resolve(h, fb);
            bool last = untouched_after(e, j, t);
            uint32_t k = op->kind == KD_OP_CLEAR_RT ? op->rt : KILN_MAX_RENDER_TARGETS;
            if (!last) /* a target's clear writes every bit; a depth-stencil one, its mask's */
                fb = kr_tilebuf_clear(
                    &tp, fb, k, op->kind == KD_OP_CLEAR_RT || op->mask == 0xffffffffu, x0, y0);
            /* a held plane's clear stays in the cache, even the last one */
            last = last && !(tp.held >> k & 1u);
            if (op->kind == KD_OP_CLEAR_RT)
                kr_clear_rect(fb, (int)op->rt, op->texel, 0xffffffffu, x0, y0, x1, y1, last);
            else
                kr_clear_rect(fb, -1, op->texel, op->mask, x0, y0, x1, y1, last);
            continue;
        }
        if (!job->bins)
            continue;
        const kr_bin *bin = &job->bins[t];
        for (uint32_t k = 0; k < bin->n; k++) {
            if (n == TILE_BATCH) {
                raster_batch(e, fb, batch, n, x0, y0, x1, y1);
                n = 0;
            }
            prefetch_prim(bin->p[k]);
            batch[n++] = bin->p[k];
        }
    }
    if (n)
        raster_batch(e, fb, batch, n, x0, y0, x1, y1);
    if (h) {
        if (h->n)
            kr_hsr_resolve(h, fb);
        kr_pool_hsr_put(e->hsr, h);
    }
    kr_tilebuf_finish(&tp, x0, y0, x1, y1);
}

/* draw_auto: the count is what stream output wrote, known when the scene
 * runs (the draw holds the vertex buffer, after any draw that wrote it; a
 * scene that streams out has one draw). scene_exec sets it in its first
 * pass over the draws rather than in a pass of its own: one walk over
 * 100,000 draw records less per frame of bench (d). */
static inline void set_auto_count(kd_draw *d)
{
    if (d->is_auto)
        d->count = kd_auto_count(d->state->vb[0], d->state->vb_offset[0], d->state->vb_stride[0]);
}

/* ---- scene setup: execution contexts, segments and jobs ---- */

/* The setup passes run over the scene's ops in chunks of SETUP_CHUNK, on
 * all workers: a chunk is counted, then filled, as the whole scene was,
 * with every sharing rule (contexts, textures, the open job) starting over
 * at its first op. The chunks depend on the op count alone, so the jobs,
 * and the pixels, do not depend on the threads. bench (d)'s 100,000 draws
 * were two serial passes of about 1.2 ms a frame on one worker. */
#define SETUP_CHUNK 16384u
#define SETUP_MAX_CHUNKS (KD_SCENE_MAX_OPS / SETUP_CHUNK + 1u)

typedef struct setup_chunk {
    uint32_t op0, op1;              /* its ops */
    size_t nsegs, ndx, njobs, ntex; /* what its first pass counted */
    size_t seg0, dx0, job0, tex0;   /* where its records start */
} setup_chunk;

typedef struct scene_setup {
    const kd_scene *s;
    const exec_ctx *e;
    const kb_env *env;
    void *pool;    /* the jobs' arenas' */
    bool counting; /* the scene counts for queries: general block paths */
    int hsr_mode;  /* kr_hsr_mode() when the scene started */
    kr_drawx *dxs;
    kr_seg *segs;
    kr_job *jobs;
    struct kiln_ps_textures *texs;
    setup_chunk chunk[SETUP_MAX_CHUNKS];
} scene_setup;

/* The first pass over a chunk: its contexts, texture sets, segments and
 * jobs, counted exactly (the same rules as fill_chunk), so a stream of
 * 100,000 tiny draws allocates one execution context per distinct state
 * and one job per 1,024 primitives, not one of each per draw: those were
 * ~100 MB zeroed and faulted in per frame. */
static void count_chunk(void *arg, uint32_t k)
{
    scene_setup *u = arg;
    setup_chunk *c = &u->chunk[k];
    const kd_scene *s = u->s;
    size_t nsegs = 0, ndx = 0, njobs = 0, ntex = 0; /* sizes: no 32-bit wrap */
    const kd_draw *dx_first = NULL;                 /* the draw the current context was built for */
    const kd_draw *tex_first = NULL; /* the draw the current textures were resolved for */
    uint32_t open_prims = 0;
    bool job_open = false;
    for (uint32_t i = c->op0; i < c->op1; i++) {
        const kd_op *op = &s->ops[i];
        if (op->kind != KD_OP_DRAW) {
            njobs++;
            job_open = false;
            continue;
        }
        kd_draw *dw = op->draw;
        set_auto_count(dw); /* in this first pass over the draws, not a pass of its own */
        if (!dx_first || dx_first->state != dw->state || !kd_draw_same_storages(dx_first, dw)) {
            ndx++;
            dx_first = dw;
            if (has_textures(dw) && !(tex_first && same_textures(tex_first, dw))) {
                ntex += texture_sets(dw->state);
                tex_first = dw;
            }
        }
        uint32_t np = kd_prim_count(dw->state->topology, dw->count);
        uint32_t w = prim_weight(dw->state), len = JOB_PRIMS / w;
        for (uint32_t inst = 0; inst < dw->instances; inst++)
            for (uint32_t f = 0; f < np; f += len) {
                uint32_t n = KB_MIN(len, np - f) * w;
                if (!job_open || open_prims + n > JOB_PRIMS) {
                    njobs++;
                    job_open = true;
                    open_prims = 0;
                }
                open_prims += n;
                nsegs++;
            }
    }
    c->nsegs = nsegs;
    c->ndx = ndx;
    c->njobs = njobs;
    c->ntex = ntex;
}

/* The second pass: the chunk's records, from where the counts put them. */
static void fill_chunk(void *arg, uint32_t k)
{
    scene_setup *u = arg;
    const setup_chunk *c = &u->chunk[k];
    const kd_scene *s = u->s;
    kr_drawx *dxs = u->dxs;
    size_t nj = c->job0, nd = c->dx0, ns = c->seg0;
    uint32_t nt = (uint32_t)c->tex0; /* into the scene's sets: at most 3 * (512 + chunks) */
    const kr_drawx *tex_dx = NULL; /* the last context with textures */
    kr_job *open = NULL;
    for (uint32_t i = c->op0; i < c->op1; i++) {
        const kd_op *op = &s->ops[i];
        if (op->kind != KD_OP_DRAW) {
            u->jobs[nj++] = (kr_job){.clear = op, .arena = {.env = u->env, .pool = u->pool}};
            open = NULL;
            continue;
        }
        /* Consecutive draws with one state block and the same storages
         * share their execution context (a stream of tiny draws). */
        const kd_draw *dw = op->draw;
        kr_drawx *dx;
        if (nd > c->dx0 && dxs[nd - 1].s == dw->state && kd_draw_same_storages(dxs[nd - 1].d, dw)) {
            dx = &dxs[nd - 1];
        } else {
            dx = &dxs[nd++];
            build_drawx(dw, &u->e->fb, dx);
            draw_textures(dw, dx, tex_dx, u->texs, &nt);
            if (dx->tex_owner)
                tex_dx = dx;
            /* The specialized block paths do not count: a counted scene
             * takes the general one (the same pixels). */
            bool general = u->counting || !dw->state->raster || u->e->fb.samples > 1 ||
                           dw->state->alpha_to_coverage;
            dx->block = general ? NULL : kr_block_select(dx, &u->e->fb);
            dx->shade = general ? NULL : kr_shade_select(dx, &u->e->fb);
            dx->direct = kr_direct_select(dx, &u->e->fb);
            dx->direct_any = kr_direct_any_origin(dx->direct);
            dx->corner4 = dx->direct_any ? kr_direct_corner4(dx->direct) : NULL;
            dx->span = kr_span_select(dx);
            if (!dx->span && !general)
                dx->span = kr_general_span_select(dx, &u->e->fb);
            dx->hsr = !u->counting && u->pool && kr_hsr_select(dx, &u->e->fb, u->hsr_mode);
        }
        uint32_t np = kd_prim_count(dw->state->topology, dw->count);
        kiln_topology topo = dw->state->topology;
        bool cuts = dw->indexed && (topo == KILN_TOPOLOGY_TRIANGLE_STRIP || topo == KILN_TOPOLOGY_LINE_STRIP);
        uint32_t w = prim_weight(dw->state), len = JOB_PRIMS / w;
        for (uint32_t inst = 0; inst < dw->instances; inst++) {
            uint32_t strip = 0, scanned = 0; /* one pass over the indices */
            for (uint32_t f = 0; f < np; f += len) {
                if (cuts) {
                    for (; scanned < f; scanned++)
                        if (kr_is_cut(dx, dw, scanned))
                            strip = scanned + 1;
                }
                kr_seg *sg = &u->segs[ns++];
                *sg = (kr_seg){dx, dw, inst, f, KB_MIN(len, np - f), strip};
                if (!open || open->prims + sg->count * w > JOB_PRIMS) {
                    open = &u->jobs[nj++];
                    *open = (kr_job){.segs = sg, .arena = {.env = u->env, .pool = u->pool}};
                }
                open->nsegs++;
                open->prims += sg->count * w;
            }
        }
    }
    /* the counting pass is exact */
    assert(nd == c->dx0 + c->ndx && ns == c->seg0 + c->nsegs && nj == c->job0 + c->njobs &&
           nt == c->tex0 + c->ntex);
}

static kq_exec_result scene_exec(kq_device *q, kq_cmd *cmd)
{
    kd_scene *s = cmd->u.scene.scene;
    const kb_env *env = s->env;
    kt_tracer *tr = q->trace;
    uint64_t t_phase = tr ? kt_now() : 0;
    exec_ctx e;
    memset(&e, 0, sizeof e);
    build_fb(s, cmd, &e.fb);
    e.g.fb = &e.fb;
    /* Slices a geometry shader may choose among: the fewest of any view. */
    e.g.nslices = UINT32_MAX;
    for (uint32_t i = 0; i <= KILN_MAX_RENDER_TARGETS; i++) {
        const kres_view *v = i < s->nrt ? s->rtv[i] : i == KILN_MAX_RENDER_TARGETS ? s->dsv : NULL;
        if (!v)
            continue;
        e.views[i] = v;
        e.view_data[i] = kd_node_storage(cmd, v->res)->data;
        e.g.nslices = KB_MIN(e.g.nslices, v->num_slices);
    }
    if (e.g.nslices == UINT32_MAX)
        e.g.nslices = 1;
    e.g.tiles_x = (e.fb.width + KR_TILE - 1) / KR_TILE;
    e.g.tiles_y = (e.fb.height + KR_TILE - 1) / KR_TILE;
    uint32_t ntiles = e.g.tiles_x * e.g.tiles_y;
    if (ntiles == 0 &&
        !s->streams) { /* no target: nothing is shaded; the draws still count as read */
        static const uint64_t none[KQ_Q_COUNT];
        for (uint32_t i = 0; i < s->nops; i++) /* what the counts read */
            if (s->ops[i].kind == KD_OP_DRAW)
                set_auto_count(s->ops[i].draw);
        kd_scene_count(s, cmd, none);
        return KQ_EXEC_DONE;
    }
    bool counting = s->nqueries != 0;
    size_t counts_size = sizeof(uint64_t) * 2 * ntiles;
    if (counting && ntiles && !(e.tile_counts = kb_calloc(env, counts_size))) {
        cmd->fail_reason = "out of memory for the scene's query counters";
        return KQ_EXEC_FAILED;
    }

    /* Segments: each draw's primitives per instance in ranges of at most
     * JOB_PRIMS. Jobs: consecutive segments up to JOB_PRIMS primitives (so
     * a stream of tiny draws shares jobs), and one job per clear. Counted
     * first, then filled, in chunks on all workers (setup_chunk). */
    scene_setup u = {.s = s,
                     .e = &e,
                     .env = env,
                     .pool = q->backend_data,
                     .counting = counting,
                     .hsr_mode = kr_hsr_mode()};
    /* SETUP_CHUNK ops a chunk, more if a scene passed the API's op bound */
    uint64_t per =
        KB_MAX(SETUP_CHUNK, ((uint64_t)s->nops + SETUP_MAX_CHUNKS - 1) / SETUP_MAX_CHUNKS);
    uint32_t nchunks = s->nops ? (uint32_t)(((uint64_t)s->nops + per - 1) / per) : 1;
    for (uint32_t k = 0; k < nchunks; k++)
        u.chunk[k] = (setup_chunk){.op0 = (uint32_t)KB_MIN(s->nops, k * per),
                                   .op1 = (uint32_t)KB_MIN(s->nops, (k + 1) * per)};
    kq_parallel_for(q, nchunks, count_chunk, &u, "scene setup chunk");
    size_t nsegs = 0, ndx = 0, njobs = 0, ntex = 0;
    for (uint32_t k = 0; k < nchunks; k++) {
        setup_chunk *c = &u.chunk[k];
        c->seg0 = nsegs;
        c->dx0 = ndx;
        c->job0 = njobs;
        c->tex0 = ntex;
        nsegs += c->nsegs;
        ndx += c->ndx;
        njobs += c->njobs;
        ntex += c->ntex;
    }
    size_t dx_size = sizeof(kr_drawx) * (ndx ? ndx : 1);
    /* Resolved views: one set per stage per distinct binding (the API ends
     * a scene at KD_SCENE_MAX_TEXSETS distinct ones, which bounds this, and
     * a set shared across a chunk's start is resolved again, at most one per
     * stage per chunk). */
    size_t tex_size = sizeof(struct kiln_ps_textures) * (ntex ? ntex : 1);
    struct kiln_ps_textures *texs = ntex ? kb_alloc(env, tex_size) : NULL;
    size_t seg_size = sizeof(kr_seg) * (nsegs ? nsegs : 1);
    size_t job_cap = njobs ? njobs : 1;
    kr_drawx *dxs = kb_alloc(env, dx_size); /* build_drawx fills each */
    kr_seg *segs = kb_alloc(env, seg_size); /* every field assigned */
    e.jobs = kb_calloc(env, sizeof(kr_job) * job_cap);
    if (!dxs || !segs || !e.jobs || (ntex && !texs)) {
        if (e.tile_counts)
            kb_free(env, e.tile_counts, counts_size);
        kb_free(env, texs, tex_size);
        kb_free(env, dxs, dx_size);
        kb_free(env, segs, seg_size);
        kb_free(env, e.jobs, sizeof(kr_job) * job_cap);
        cmd->fail_reason = "out of memory for the scene's jobs";
        return KQ_EXEC_FAILED;
    }
    u.dxs = dxs;
    u.segs = segs;
    u.jobs = e.jobs;
    u.texs = texs;
    kq_parallel_for(q, nchunks, fill_chunk, &u, "scene setup chunk");
    for (size_t i = 0; i < ndx; i++)
        if (dxs[i].hsr) {
            e.hsr = kr_pool_hsr_ready(u.pool) ? u.pool : NULL;
            break;
        }
    /* Tile buffers (tilebuf.c) */
    if (u.pool && kr_tilebuf_mode() && kr_pool_tilebuf_ready(u.pool))
        e.tb = u.pool;
    uint32_t nj = (uint32_t)njobs;
    if (tr) {
        uint64_t now = kt_now();
        kt_slice(tr, "scene setup", t_phase, now, "jobs", nj);
        t_phase = now;
    }
    bool failed = false;
    uint64_t counts[KQ_Q_COUNT] = {0};
    so_writer so = {0};
    if (s->streams) /* its one draw's declaration */
        for (uint32_t i = 0; i < s->nops; i++)
            if (s->ops[i].kind == KD_OP_DRAW) {
                so_begin(s, cmd, &s->ops[i].draw->state->so, &so);
                break;
            }
    for (uint32_t first = 0; first < nj;) {
        uint32_t prims = 0, count = 0;
        while (first + count < nj &&
               (count == 0 ||
                (prims + e.jobs[first + count].prims <= WAVE_PRIMS && count < KR_WAVE_JOBS)))
            prims += e.jobs[first + count++].prims;
        e.first = first;
        e.count = count;
        e.last_wave = first + count == nj;
        kq_parallel_for(q, count, geom_task, &e, "geometry job");
        if (tr) {
            uint64_t now = kt_now();
            kt_slice(tr, "geometry wave", t_phase, now, "jobs", count);
            t_phase = now;
        }
        for (uint32_t j = first; j < first + count; j++)
            failed |= e.jobs[j].arena.failed;
        if (!failed && s->streams) /* in job order: the serial order */
            for (uint32_t j = first; j < first + count; j++)
                so_write(&so, &e.jobs[j]);
        if (!failed && ntiles)
            kq_parallel_for(q, ntiles, tile_task, &e, "tile");
        if (tr) {
            uint64_t now = kt_now();
            kt_slice(tr, "raster wave", t_phase, now, "tiles", ntiles);
            t_phase = now;
        }
        for (uint32_t j = first; j < first + count; j++) {
            counts[KQ_Q_VS_INVOCATIONS] += e.jobs[j].vs_invocations;
            counts[KQ_Q_GS_INVOCATIONS] += e.jobs[j].gs_invocations;
            counts[KQ_Q_GS_PRIMITIVES] += e.jobs[j].gs_primitives;
            counts[KQ_Q_C_INVOCATIONS] += e.jobs[j].c_invocations;
            counts[KQ_Q_C_PRIMITIVES] += e.jobs[j].c_primitives;
            kr_arena_free(&e.jobs[j].arena);
        }
        if (failed)
            break;
        first += count;
    }
    kb_free(env, dxs, dx_size);
    kb_free(env, texs, tex_size);
    kb_free(env, segs, seg_size);
    kb_free(env, e.jobs, sizeof(kr_job) * job_cap);
    if (s->streams) {
        so_end(s, &so); /* what was written before a failure stays */
        counts[KQ_Q_SO_WRITTEN] = so.written;
        counts[KQ_Q_SO_NEEDED] = so.needed;
    }
    if (e.tile_counts) {
        for (uint32_t t = 0; t < ntiles; t++) {
            counts[KQ_Q_PS_INVOCATIONS] += e.tile_counts[2 * (size_t)t];
            counts[KQ_Q_SAMPLES] += e.tile_counts[2 * (size_t)t + 1];
        }
        kb_free(env, e.tile_counts, counts_size);
    }
    if (counting && !failed)
        kd_scene_count(s, cmd, counts);
    if (failed) {
        cmd->fail_reason = "out of memory for vertices or bins; the scene was not completed";
        return KQ_EXEC_FAILED;
    }
    return KQ_EXEC_DONE;
}

static kq_exec_result mips_exec(kq_device *q, kq_cmd *cmd)
{
    (void)q;
    kq_node *n = &cmd->acc[0];
    kr_generate_mips(n->res, n->st, cmd->u.mips.first_mip, cmd->u.mips.num_mips,
                     cmd->u.mips.first_slice, cmd->u.mips.num_slices);
    return KQ_EXEC_DONE;
}

static kiln_result soft_create(kq_device *q, uint32_t threads, void **out, char *why, size_t n)
{
    (void)why;
    (void)n;
    kr_pool *p = kr_pool_create(q->env); /* NULL: no pooling, still correct */
    if (p)
        p->threads = threads;
    *out = p;
    return KILN_OK;
}

static void soft_destroy(void *data) { kr_pool_destroy(data); }

const kq_backend kr_soft_backend = {
    .name = "soft",
    .caps = KQ_BACKEND_QUERIES | KQ_BACKEND_TEXEL_FORMATS | KQ_BACKEND_GEOMETRY | KQ_BACKEND_STREAM_OUTPUT |
            KQ_BACKEND_SAMPLER_EXT | KQ_BACKEND_MULTISAMPLE | KQ_BACKEND_TEXTURE_KINDS |
            KQ_BACKEND_VS_RESOURCES | KQ_BACKEND_BUFFER_VIEWS,
    .create = soft_create,
    .destroy = soft_destroy,
    .scene = scene_exec,
    .generate_mips = mips_exec,
};
