/* The neutral records' lifetimes: state blocks, draws and scenes (with
 * their deduplicated resource nodes), plus the small helpers both the API
 * and the backends need (primitive counts, sampler defaults). */
#include "driver.h"

#include <string.h>

/* ---- state blocks ---- */

void kd_state_ref(kd_state *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
}

void kd_state_unref(kd_state *s)
{
    if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
        return;
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        if (s->vb[i])
            kres_unref(&s->vb[i]->base);
    if (s->ib)
        kres_unref(&s->ib->base);
    for (uint32_t i = 0; i < s->n_vs_cb; i++)
        if (s->vs_cb[i])
            kres_unref(&s->vs_cb[i]->base);
    for (uint32_t i = 0; i < s->n_ps_cb; i++)
        if (s->ps_cb[i])
            kres_unref(&s->ps_cb[i]->base);
    for (uint32_t i = 0; i < s->nsrv; i++)
        if (s->srv[i])
            kres_unref(&s->srv[i]->base);
    for (uint32_t i = 0; i < s->n_vs_srv; i++)
        if (s->vs_srv[i])
            kres_unref(&s->vs_srv[i]->base);
    for (uint32_t i = 0; i < s->n_gs_srv; i++)
        if (s->gs_srv[i])
            kres_unref(&s->gs_srv[i]->base);
    kb_free(s->env, s, sizeof *s);
}

/* ---- scenes ---- */

void kd_recycler_init(kd_recycler *r)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
}

static void scene_release_memory(kd_scene *s);

void kd_recycler_fini(kd_recycler *r)
{
    for (uint32_t i = 0; i < r->nkept; i++)
        scene_release_memory(r->kept[i]);
    r->nkept = 0;
    pthread_mutex_destroy(&r->mu);
}

kd_scene *kd_scene_create(const kb_env *env, kd_recycler *r)
{
    kd_scene *s = NULL;
    if (r) {
        pthread_mutex_lock(&r->mu);
        if (r->nkept)
            s = r->kept[--r->nkept];
        pthread_mutex_unlock(&r->mu);
        if (s)
            return s; /* emptied by kd_scene_free */
    }
    s = kb_calloc(env, sizeof *s);
    if (s) {
        s->env = env;
        s->recycler = r;
    }
    return s;
}

typedef struct kd_draw_chunk {
    struct kd_draw_chunk *next;
    uint32_t used;
    kd_draw draws[KD_DRAW_CHUNK];
} kd_draw_chunk;

kd_draw *kd_scene_new_draw(kd_scene *s)
{
    kd_draw_chunk *c = s->chunks;
    if (!c || c->used == KD_DRAW_CHUNK) {
        if (s->spare) {
            c = s->spare;
            s->spare = c->next;
        } else if (!(c = kb_alloc(s->env, sizeof *c))) {
            return NULL;
        }
        c->next = s->chunks;
        c->used = 0;
        s->chunks = c;
    }
    kd_draw *d = &c->draws[c->used++];
    memset(d, 0, sizeof *d);
    return d;
}

void kd_scene_drop_draw(kd_scene *s)
{
    if (s->chunks && s->chunks->used)
        s->chunks->used--;
}

static size_t bind_size(uint32_t nviews)
{
    return sizeof(kd_bind) + sizeof(kres_storage *) * nviews;
}

static uint32_t bind_views(const kd_bind *b) { return b->nsrv + b->n_vs_srv + b->n_gs_srv; }

kd_bind *kd_scene_new_bind(kd_scene *s, uint32_t nsrv, uint32_t n_vs_srv, uint32_t n_gs_srv)
{
    kd_bind *b = kb_calloc(s->env, bind_size(nsrv + n_vs_srv + n_gs_srv));
    if (b) {
        b->nsrv = nsrv;
        b->n_vs_srv = n_vs_srv;
        b->n_gs_srv = n_gs_srv;
        b->srv_st = b->st_;
        b->vs_srv_st = b->st_ + nsrv;
        b->gs_srv_st = b->st_ + nsrv + n_vs_srv;
        b->next = s->binds;
        s->binds = b;
        s->bind_bytes += bind_size(nsrv + n_vs_srv + n_gs_srv);
    }
    return b;
}

bool kd_scene_hold_state(kd_scene *s, kd_state *st)
{
    if (s->nstates && s->states[s->nstates - 1] == st)
        return true;
    if (s->nstates == s->states_cap) {
        uint32_t cap = s->states_cap ? s->states_cap * 2 : 8;
        kd_state **n = kb_alloc(s->env, sizeof(*n) * cap);
        if (!n)
            return false;
        if (s->states)
            memcpy(n, s->states, sizeof(*n) * s->nstates);
        kb_free(s->env, s->states, sizeof(*n) * s->states_cap);
        s->states = n;
        s->states_cap = cap;
    }
    kd_state_ref(st);
    s->states[s->nstates++] = st;
    return true;
}

static void bind_free(const kb_env *env, kd_bind *b)
{
    kres_storage_unref(b->ib_st);
    for (int i = 0; i < KILN_MAX_VERTEX_BUFFERS; i++)
        kres_storage_unref(b->vb_st[i]);
    for (uint32_t i = 0; i < b->n_vs_cb; i++)
        kres_storage_unref(b->vs_cb_st[i]);
    for (uint32_t i = 0; i < b->n_ps_cb; i++)
        kres_storage_unref(b->ps_cb_st[i]);
    for (uint32_t i = 0; i < bind_views(b); i++)
        kres_storage_unref(b->st_[i]);
    kb_free(env, b, bind_size(bind_views(b)));
}

/* Bytes a scene keeps for reuse. */
static size_t kept_bytes(const kd_scene *s)
{
    size_t n = sizeof(kd_op) * s->ops_cap + sizeof(kq_node) * s->nodes_cap +
               sizeof(uint32_t) * 2 * s->hash_cap + sizeof(kd_state *) * s->states_cap;
    for (const kd_draw_chunk *c = s->spare; c; c = c->next)
        n += sizeof *c;
    return n;
}

size_t kd_scene_bytes(const kd_scene *s)
{
    size_t n = sizeof *s + kept_bytes(s) + s->bind_bytes + s->retired_bytes;
    for (const kd_draw_chunk *c = s->chunks; c; c = c->next)
        n += sizeof *c;
    return n;
}

/* Frees a scene's memory (its references already dropped). */
static void scene_release_memory(kd_scene *s)
{
    while (s->spare) {
        kd_draw_chunk *c = s->spare;
        s->spare = c->next;
        kb_free(s->env, c, sizeof *c);
    }
    kb_free(s->env, s->states, sizeof(kd_state *) * s->states_cap);
    kb_free(s->env, s->ops, sizeof(kd_op) * s->ops_cap);
    kb_free(s->env, s->nodes, sizeof(kq_node) * s->nodes_cap);
    kb_free(s->env, s->hash, sizeof(uint32_t) * 2 * s->hash_cap);
    kb_free(s->env, s, sizeof *s);
}

void kd_scene_free(kd_scene *s)
{
    if (!s)
        return;
    while (s->chunks) { /* emptied, kept with the scene */
        kd_draw_chunk *c = s->chunks;
        s->chunks = c->next;
        c->used = 0;
        c->next = s->spare;
        s->spare = c;
    }
    while (s->binds) {
        kd_bind *b = s->binds;
        s->binds = b->next;
        bind_free(s->env, b);
    }
    s->bind_bytes = 0;
    s->retired_bytes = 0;
    for (uint32_t i = 0; i < s->nstates; i++)
        kd_state_unref(s->states[i]);
    s->nstates = 0;
    for (uint32_t i = 0; i < KILN_MAX_RENDER_TARGETS; i++)
        if (s->rtv[i]) {
            kres_unref(&s->rtv[i]->base);
            s->rtv[i] = NULL;
        }
    if (s->dsv)
        kres_unref(&s->dsv->base);
    s->dsv = NULL;
    s->nrt = 0;
    s->nops = 0;
    s->vertices = 0;
    s->nqueries = 0;
    s->pred_res = NULL;
    s->pred_value = 0;
    memset(s->so, 0, sizeof s->so);
    s->streams = false;
    s->texsets = 0;
    s->tex_state = NULL;
    s->tex_bind = NULL;
    /* Nodes not handed to a command still hold their references. */
    for (uint32_t i = 0; i < s->nnodes; i++) {
        kres_storage_unref(s->nodes[i].st);
        kres_unref(&s->nodes[i].res->base);
    }
    s->nnodes = 0;
    if (s->hash)
        memset(s->hash, 0, sizeof(uint32_t) * 2 * s->hash_cap);
    kd_recycler *r = s->recycler;
    if (r && kept_bytes(s) <= KD_RECYCLE_BYTES) {
        pthread_mutex_lock(&r->mu);
        bool kept = r->nkept < KD_RECYCLE_SCENES;
        if (kept)
            r->kept[r->nkept++] = s;
        pthread_mutex_unlock(&r->mu);
        if (kept)
            return;
    }
    scene_release_memory(s);
}

bool kd_scene_push(kd_scene *s, const kd_op *op)
{
    if (s->nops == s->ops_cap) {
        uint32_t cap = s->ops_cap ? s->ops_cap * 2 : 16;
        kd_op *n = kb_alloc(s->env, sizeof(kd_op) * cap);
        if (!n)
            return false;
        if (s->ops)
            memcpy(n, s->ops, sizeof(kd_op) * s->nops);
        kb_free(s->env, s->ops, sizeof(kd_op) * s->ops_cap);
        s->ops = n;
        s->ops_cap = cap;
    }
    s->ops[s->nops++] = *op;
    return true;
}

static uint32_t hash_ptr(const void *p, uint32_t cap)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 17;
    x *= 0x9E3779B97F4A7C15ull;
    return (uint32_t)(x >> 32) & (cap - 1);
}

/* The resource table's slot of `res` (kd_scene.hash's second half: the
 * resource's newest node + 1), or the empty slot where it goes. */
static uint32_t *res_slot(const kq_node *nodes, uint32_t *rh, uint32_t cap,
                          const kres_resource *res)
{
    uint32_t k = hash_ptr(res, cap);
    while (rh[k] && nodes[rh[k] - 1].res != res)
        k = (k + 1) & (cap - 1);
    return &rh[k];
}

static bool grow_nodes(kd_scene *s)
{
    uint32_t cap = s->nodes_cap ? s->nodes_cap * 2 : 16;
    kq_node *n = kb_calloc(s->env, sizeof(kq_node) * cap);
    uint32_t hcap = cap * 2;
    uint32_t *h = kb_calloc(s->env, sizeof(uint32_t) * 2 * hcap);
    if (!n || !h) {
        kb_free(s->env, n, sizeof(kq_node) * cap);
        kb_free(s->env, h, sizeof(uint32_t) * 2 * hcap);
        return false;
    }
    if (s->nodes)
        memcpy(n, s->nodes, sizeof(kq_node) * s->nnodes);
    for (uint32_t i = 0; i < s->nnodes; i++) {
        uint32_t k = hash_ptr(n[i].st, hcap);
        while (h[k])
            k = (k + 1) & (hcap - 1);
        h[k] = i + 1;
        *res_slot(n, h + hcap, hcap, n[i].res) = i + 1; /* the newest last */
    }
    kb_free(s->env, s->nodes, sizeof(kq_node) * s->nodes_cap);
    kb_free(s->env, s->hash, sizeof(uint32_t) * 2 * s->hash_cap);
    s->nodes = n;
    s->nodes_cap = cap;
    s->hash = h;
    s->hash_cap = hcap;
    return true;
}

/* The scene's node of storage st, or NULL (a probe of the open-addressed
 * hash: kd_scene_use and kd_scene_retired). */
static kq_node *find_node(const kd_scene *s, const kres_storage *st)
{
    if (!s->hash_cap)
        return NULL;
    for (uint32_t k = hash_ptr(st, s->hash_cap); s->hash[k]; k = (k + 1) & (s->hash_cap - 1))
        if (s->nodes[s->hash[k] - 1].st == st)
            return &s->nodes[s->hash[k] - 1];
    return NULL;
}

/* Counts a node's renamed storage in the scene's bytes, once: its header
 * and allocation, which the node's reference keeps alive. */
static void retire(kd_scene *s, kq_node *n)
{
    if (n->retired)
        return;
    n->retired = 1;
    s->retired_bytes += sizeof *n->st + n->st->alloc_size;
}

bool kd_scene_use(kd_scene *s, kres_resource *res, kres_storage *st, int mode)
{
    kq_node *found = find_node(s, st);
    if (found) {
        if (mode == KQ_WRITE)
            found->mode = KQ_WRITE;
        return true;
    }
    if (s->nnodes == s->nodes_cap && !grow_nodes(s))
        return false;
    /* Another storage of a resource the scene holds: a resource's storage
     * changes only by a WRITE_DISCARD's rename, so the scene's newest one
     * of it was renamed under the scene, which may be all that keeps it.
     * The mapping context charged its own open scene at the Map
     * (kd_scene_retired); any other scene is charged here, when it takes
     * a later storage, however many renames came between. A scene holds
     * at most one uncounted renamed storage per resource (its newest). */
    uint32_t *rs = res_slot(s->nodes, s->hash + s->hash_cap, s->hash_cap, res);
    if (*rs)
        retire(s, &s->nodes[*rs - 1]);
    *rs = s->nnodes + 1;
    kq_node *n = &s->nodes[s->nnodes];
    memset(n, 0, sizeof *n);
    kres_ref(&res->base);
    kres_storage_ref(st);
    n->res = res;
    n->st = st;
    n->mode = (uint8_t)mode;
    uint32_t k = hash_ptr(st, s->hash_cap);
    while (s->hash[k])
        k = (k + 1) & (s->hash_cap - 1);
    s->hash[k] = ++s->nnodes;
    return true;
}

void kd_scene_retired(kd_scene *s, const kres_storage *st)
{
    kq_node *n = find_node(s, st);
    if (n)
        retire(s, n);
}

/* ---- helpers ---- */

void kd_sampler_resolve(const kiln_sampler_desc *d, kd_sampler *out)
{
    static const kiln_sampler_desc zero;
    if (!d)
        d = &zero;
    out->min_filter = d->min_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->mag_filter = d->mag_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->mip_filter = d->mip_filter == KILN_FILTER_POINT ? KILN_FILTER_POINT : KILN_FILTER_LINEAR;
    out->address_u = d->address_u == KILN_ADDRESS_DEFAULT ? KILN_ADDRESS_CLAMP : d->address_u;
    out->address_v = d->address_v == KILN_ADDRESS_DEFAULT ? KILN_ADDRESS_CLAMP : d->address_v;
    out->address_w = d->address_w == KILN_ADDRESS_DEFAULT ? KILN_ADDRESS_CLAMP : d->address_w;
    out->mip_lod_bias = d->mip_lod_bias;
    if (d->lod_clamp_enable) {
        out->min_lod = d->min_lod;
        out->max_lod = d->max_lod;
    } else {
        out->min_lod = 0.0f;
        out->max_lod = 1000.0f;
    }
    for (int c = 0; c < 4; c++)
        out->border[c] = d->border_color[c];
    out->cmp = d->comparison_func;
    out->max_aniso = 0;
    if (d->min_filter == KILN_FILTER_ANISOTROPIC) { /* D3D10: linear min, mag and mip */
        out->min_filter = out->mag_filter = out->mip_filter = KILN_FILTER_LINEAR;
        out->max_aniso = d->max_anisotropy > 1 ? (d->max_anisotropy < 16 ? d->max_anisotropy : 16) : 0;
    }
}

kres_storage *kd_node_storage(const kq_cmd *cmd, const kres_resource *res)
{
    for (uint32_t i = 0; i < cmd->naccess; i++)
        if (cmd->acc[i].res == res)
            return cmd->acc[i].st;
    return NULL;
}

void kd_scene_count(const kd_scene *s, const kq_cmd *cmd, const uint64_t counts[KQ_Q_COUNT])
{
    if (!s->nqueries)
        return;
    uint64_t c[KQ_Q_COUNT];
    memcpy(c, counts, sizeof c);
    /* The input assembler's counts follow from the draws alone. */
    c[KQ_Q_IA_VERTICES] = c[KQ_Q_IA_PRIMITIVES] = 0;
    for (uint32_t i = 0; i < s->nops; i++) {
        const kd_draw *d = s->ops[i].draw;
        if (s->ops[i].kind != KD_OP_DRAW)
            continue;
        c[KQ_Q_IA_VERTICES] += (uint64_t)d->count * d->instances;
        c[KQ_Q_IA_PRIMITIVES] += (uint64_t)kd_prim_count(d->state->topology, d->count) * d->instances;
    }
    for (uint32_t i = 0; i < s->nqueries; i++) {
        kres_storage *st = kd_node_storage(cmd, s->queries[i]);
        if (st)
            kq_query_add((kq_query_data *)(void *)st->data, c);
    }
}

bool kd_draw_same_storages(const kd_draw *a, const kd_draw *b)
{
    const kd_bind *x = a->bind, *y = b->bind;
    if (x == y)
        return true;
    if (x->n_vs_cb != y->n_vs_cb || x->n_ps_cb != y->n_ps_cb || x->nsrv != y->nsrv || x->n_vs_srv != y->n_vs_srv ||
        x->n_gs_srv != y->n_gs_srv)
        return false;
    return !memcmp(x->vb_st, y->vb_st, sizeof x->vb_st) &&
           !memcmp(x->vs_cb_st, y->vs_cb_st, sizeof(kres_storage *) * x->n_vs_cb) &&
           !memcmp(x->ps_cb_st, y->ps_cb_st, sizeof(kres_storage *) * x->n_ps_cb) &&
           !memcmp(x->st_, y->st_, sizeof(kres_storage *) * bind_views(x));
}

bool kd_bind_same_views(const kd_bind *x, const kd_bind *y)
{
    return x == y ||
           (x->nsrv == y->nsrv && x->n_vs_srv == y->n_vs_srv && x->n_gs_srv == y->n_gs_srv &&
            !memcmp(x->st_, y->st_, sizeof(kres_storage *) * bind_views(x)));
}

uint32_t kd_auto_count(const kres_resource *vb, uint32_t offset, uint32_t stride)
{
    uint32_t end = vb->so_filled < vb->width ? vb->so_filled : vb->width;
    return stride && end > offset ? (end - offset) / stride : 0;
}
