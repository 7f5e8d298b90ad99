/*
 * Replay, pass 1: is the capture whole and consistent? Every record must
 * decode; the capture must start with DEVICE and end with END; every
 * handle, context and swapchain a record uses must have been made by an
 * earlier record, with the right type, and not destroyed since; uploads
 * and mapped bytes must have the sizes their resources give; the live
 * resources must stay under the replay's memory budget. The first record
 * that fails is the one reported, by its offset. Nothing runs yet.
 */
#include "replay.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const kind_names[] = {"object",
                                         "buffer",
                                         "texture",
                                         "render-target view",
                                         "depth-stencil view",
                                         "shader-resource view",
                                         "vertex shader",
                                         "pixel shader",
                                         "input layout",
                                         "rasterizer state",
                                         "depth-stencil state",
                                         "blend state",
                                         "sampler",
                                         "timeline",
                                         "fence",
                                         "query",
                                         "geometry shader",
                                         "resource"};
/* One name per kind: a kind added to enum krp_kind needs its name here. */
_Static_assert(sizeof kind_names / sizeof kind_names[0] == K_RESOURCE + 1, "kind_names");

static uint32_t hash(uint32_t k)
{
    k ^= k >> 16;
    k *= 0x7feb352du;
    k ^= k >> 15;
    return k;
}

krp_obj *krp_find(const krp_objmap *m, uint32_t key)
{
    if (!m->cap || !key)
        return NULL;
    for (uint32_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        krp_obj *o = &m->v[i];
        if (!o->key)
            return NULL;
        if (o->key == key && !o->dead)
            return o;
    }
}

static bool rehash(krp_objmap *m, uint32_t cap)
{
    krp_obj *v = calloc(cap, sizeof *v);
    if (!v)
        return false;
    uint32_t used = 0;
    for (uint32_t i = 0; i < m->cap; i++) {
        krp_obj *o = &m->v[i];
        if (!o->key || o->dead)
            continue;
        uint32_t j = hash(o->key) & (cap - 1);
        while (v[j].key)
            j = (j + 1) & (cap - 1);
        v[j] = *o;
        used++;
    }
    free(m->v);
    *m = (krp_objmap){v, cap, used};
    return true;
}

/* A fresh entry for `key` (which must not be live); NULL on out of memory. */
krp_obj *krp_insert(krp_objmap *m, uint32_t key)
{
    if ((m->used + 1) * 4 >= m->cap * 3 && !rehash(m, m->cap ? m->cap * 2 : 256))
        return NULL;
    uint32_t i = hash(key) & (m->cap - 1);
    while (m->v[i].key)
        i = (i + 1) & (m->cap - 1);
    m->used++;
    m->v[i] = (krp_obj){.key = key};
    return &m->v[i];
}

double krp_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

bool krp_refuse(krp_replayer *r, kiln_result code, const char *fmt, ...)
{
    if (r->rep->result == KILN_OK) {
        char detail[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(detail, sizeof detail, fmt, ap);
        va_end(ap);
        r->rep->result = code;
        r->rep->error.offset = r->offset;
        snprintf(r->rep->error.message, sizeof r->rep->error.message, "%s record: %s",
                 kcap_op_name(r->c ? r->c->op : 0), detail);
    }
    r->stop = true;
    return false;
}

int krp_ctx_index(const krp_replayer *r, uint32_t id)
{
    for (uint32_t i = 0; i < r->nctx; i++)
        if (r->ctxs[i].id == id)
            return (int)i;
    return -1;
}

int krp_sc_index(const krp_replayer *r, uint32_t id)
{
    for (uint32_t i = 0; i < MAX_SWAPCHAINS; i++)
        if (r->sc_used[i] && r->scs[i].id == id)
            return (int)i;
    return -1;
}

/* ---- pass 1: is the capture whole and consistent? ---- */

uint32_t krp_full_chain(uint32_t w, uint32_t h)
{
    uint32_t n = 1, m = w > h ? w : h;
    while (m > 1) {
        m >>= 1;
        n++;
    }
    return n;
}

static uint64_t texture_bytes(uint32_t w, uint32_t h, uint32_t mips, uint32_t layers, kiln_format f)
{
    uint64_t total = 0;
    for (uint32_t m = 0; m < mips; m++)
        total += (uint64_t)kcap_row_bytes(f, w >> m ? w >> m : 1) * kcap_row_count(f, h >> m ? h >> m : 1);
    return total * layers;
}

/* Object `id` must be live with kind `kind` (0 allowed when `zero`). */
static bool use(krp_replayer *r, uint32_t id, enum krp_kind kind, bool zero)
{
    if (id == 0)
        return zero || krp_refuse(r, KILN_E_INVALID_ARG, "%s handle 0", kind_names[kind]);
    krp_obj *o = krp_find(&r->objs, id);
    if (!o)
        return krp_refuse(r, KILN_E_INVALID_ARG,
                          "%s 0x%x was not created by an earlier record, or was destroyed",
                          kind_names[kind], id);
    bool ok = kind == K_ANY || o->kind == kind ||
              (kind == K_RESOURCE && (o->kind == K_BUFFER || o->kind == K_TEXTURE));
    return ok || krp_refuse(r, KILN_E_INVALID_ARG, "0x%x is a %s, not a %s", id,
                            kind_names[o->kind], kind_names[kind]);
}

static bool use_all(krp_replayer *r, const uint32_t *ids, uint32_t n, enum krp_kind kind)
{
    for (uint32_t i = 0; i < n; i++)
        if (!use(r, ids[i], kind, true))
            return false;
    return true;
}

static krp_obj *create(krp_replayer *r, uint32_t id, enum krp_kind kind)
{
    if (!id) {
        krp_refuse(r, KILN_E_INVALID_ARG, "the call returned handle 0");
        return NULL;
    }
    if (krp_find(&r->objs, id)) {
        krp_refuse(r, KILN_E_INVALID_ARG, "handle 0x%x is returned again while it is live", id);
        return NULL;
    }
    krp_obj *o = krp_insert(&r->objs, id);
    if (!o)
        krp_refuse(r, KILN_E_OUT_OF_MEMORY, "out of memory");
    else
        o->kind = (uint8_t)kind;
    return o;
}

/* A swapchain buffer or a context timeline: created by kiln, named by a
 * record that returns it; may be returned again. */
static krp_obj *share(krp_replayer *r, uint32_t id, enum krp_kind kind)
{
    krp_obj *o = krp_find(&r->objs, id);
    if (o && (!o->shared || o->kind != kind)) {
        krp_refuse(r, KILN_E_INVALID_ARG, "0x%x is returned as a %s but is a %s", id,
                   kind_names[kind], kind_names[o->kind]);
        return NULL;
    }
    if (!o && (o = create(r, id, kind)) != NULL)
        o->shared = true;
    return o;
}

static bool destroy(krp_replayer *r, uint32_t id, enum krp_kind kind)
{
    if (!use(r, id, kind, false))
        return false;
    krp_obj *o = krp_find(&r->objs, id);
    if (o->shared)
        return krp_refuse(r, KILN_E_INVALID_ARG,
                          "0x%x belongs to kiln (a swapchain's or context's)", id);
    r->live_bytes -= o->bytes;
    o->dead = true;
    return true;
}

static bool budget(krp_replayer *r, krp_obj *o, uint64_t bytes)
{
    uint64_t max = r->d->max_bytes ? r->d->max_bytes : DEFAULT_MAX_BYTES;
    o->bytes = bytes;
    r->live_bytes += bytes;
    if (r->live_bytes > max)
        return krp_refuse(r, KILN_E_OUT_OF_MEMORY,
                          "live resources would take %llu bytes, over the replay's limit of %llu",
                          (unsigned long long)r->live_bytes, (unsigned long long)max);
    return true;
}

static bool use_ctx(krp_replayer *r, uint32_t id)
{
    return krp_ctx_index(r, id) >= 0 ||
           krp_refuse(r, KILN_E_INVALID_ARG, "context %u does not exist", id);
}

bool krp_add_ctx(krp_replayer *r, uint32_t id)
{
    if (!id || krp_ctx_index(r, id) >= 0 || r->nctx == MAX_CONTEXTS)
        return krp_refuse(r, KILN_E_INVALID_ARG, "context id %u is 0, in use, or one too many", id);
    r->ctxs[r->nctx].id = id;
    r->ctxs[r->nctx].ctx = NULL;
    r->nctx++;
    return true;
}

void krp_remove_ctx(krp_replayer *r, uint32_t id)
{
    int i = krp_ctx_index(r, id);
    if (i >= 0)
        r->ctxs[i] = r->ctxs[--r->nctx];
}

static bool use_sc(krp_replayer *r, uint32_t id)
{
    return krp_sc_index(r, id) >= 0 ||
           krp_refuse(r, KILN_E_INVALID_ARG, "swapchain %u does not exist", id);
}

/* Tight bytes of subresource `sub` of a resource: rows of row_bytes. */
bool krp_sub_layout(krp_replayer *r, const krp_obj *o, uint32_t sub, uint32_t *row_bytes,
                    uint32_t *rows)
{
    if (o->kind == K_BUFFER) {
        if (sub != 0)
            return krp_refuse(r, KILN_E_INVALID_ARG, "subresource %u of a buffer", sub);
        *row_bytes = o->width;
        *rows = 1;
        return true;
    }
    if (sub >= o->mips * o->layers)
        return krp_refuse(r, KILN_E_INVALID_ARG, "subresource %u of a texture with %u", sub,
                          o->mips * o->layers);
    uint32_t m = sub % o->mips;
    *row_bytes = kcap_row_bytes(o->format, o->width >> m ? o->width >> m : 1);
    *rows = kcap_row_count(o->format, o->height >> m ? o->height >> m : 1);
    /* a 3D mip: its depth slices' rows follow each other */
    if (o->depth > 1)
        *rows *= o->depth >> m ? o->depth >> m : 1;
    return true;
}

/* The rows an update writes must be what the record carries. */
static bool check_update(krp_replayer *r, const kcap_call *c)
{
    krp_obj *o = krp_find(&r->objs, c->u.update.dst);
    uint32_t row, rows;
    if (!krp_sub_layout(r, o, c->u.update.sub, &row, &rows))
        return false;
    const kiln_box *b = &c->u.update.box;
    bool buffer = o->kind == K_BUFFER;
    uint32_t bpp = buffer ? 1 : kiln_format_size(o->format);
    uint32_t dim = buffer ? 1 : kiln_format_block_dim(o->format); /* BC: 4 */
    uint32_t m = buffer || !o->mips ? 0 : c->u.update.sub % o->mips;
    uint32_t depth = o->depth > 1 ? (o->depth >> m ? o->depth >> m : 1) : 1;
    uint32_t height = rows / depth; /* in rows of blocks for BC */
    if (c->u.update.has_box) {
        bool empty = b->left == b->right || b->top == b->bottom || b->front == b->back;
        if (b->left > b->right || b->top > b->bottom || b->front > b->back ||
            (!empty && (b->right > row / bpp * dim || b->bottom > height * dim || b->back > depth)))
            return krp_refuse(r, KILN_E_INVALID_ARG, "the box lies outside subresource %u",
                              c->u.update.sub);
        row = empty ? 0 : buffer ? b->right - b->left : kcap_row_bytes(o->format, b->right - b->left);
        rows = empty ? 0
                     : (buffer ? b->bottom - b->top : kcap_row_count(o->format, b->bottom - b->top)) *
                           (b->back - b->front);
    }
    /* UPDATE_SUBRESOURCE carries one depth slice, _3D several */
    bool deep = rows > 0 && (c->u.update.has_box ? b->back - b->front > 1 : depth > 1);
    if ((c->op == KCAP_OP_UPDATE_SUBRESOURCE_3D) != deep)
        return krp_refuse(r, KILN_E_INVALID_ARG, "a box %s one depth slice in the wrong record",
                          c->op == KCAP_OP_UPDATE_SUBRESOURCE_3D ? "of" : "beyond");
    if (c->u.update.data.row_bytes != row || c->u.update.data.rows != rows)
        return krp_refuse(r, KILN_E_INVALID_ARG,
                          "%u rows of %u bytes, but the region holds %u rows of %u bytes",
                          c->u.update.data.rows, c->u.update.data.row_bytes, rows, row);
    return true;
}

static bool check_unmap(krp_replayer *r, const kcap_call *c)
{
    krp_obj *o = krp_find(&r->objs, c->u.unmap.res);
    uint32_t row, rows;
    if (!krp_sub_layout(r, o, c->u.unmap.sub, &row, &rows))
        return false;
    if (c->u.unmap.kind == KCAP_UNMAP_FULL &&
        (c->u.unmap.full.row_bytes != row || c->u.unmap.full.rows != rows))
        return krp_refuse(r, KILN_E_INVALID_ARG,
                          "%u rows of %u bytes for a subresource of %u of %u", c->u.unmap.full.rows,
                          c->u.unmap.full.row_bytes, rows, row);
    if (c->u.unmap.kind == KCAP_UNMAP_RANGES &&
        c->u.unmap.ranges.tight_size != (uint64_t)row * rows)
        return krp_refuse(r, KILN_E_INVALID_ARG, "ranges of a %llu-byte subresource that has %llu",
                          (unsigned long long)c->u.unmap.ranges.tight_size,
                          (unsigned long long)row * rows);
    return true;
}

static bool check(krp_replayer *r, const kcap_call *c)
{
    krp_obj *o;
    switch (c->op) {
    case KCAP_OP_NONE:
    case KCAP_OP_COUNT:
    case KCAP_OP_DEVICE:
        return krp_refuse(r, KILN_E_INVALID_ARG, "only the first record is DEVICE");
    case KCAP_OP_CONTEXT_STATE:
        return krp_add_ctx(r, c->ctx);
    case KCAP_OP_END:
    case KCAP_OP_FAILED:
    case KCAP_OP_FRAME:
    case KCAP_OP_DEVICE_GET_STATS:
        return true;
    case KCAP_OP_CREATE_BUFFER:
        if (!(o = create(r, c->out[0], K_BUFFER)))
            return false;
        o->width = c->u.buffer.desc.size;
        o->height = o->mips = o->layers = 1;
        return budget(r, o, c->u.buffer.desc.size);
    case KCAP_OP_CREATE_TEXTURE2D:
    case KCAP_OP_CREATE_TEXTURE2D_MS:
    case KCAP_OP_CREATE_TEXTURE_CUBE:
    case KCAP_OP_CREATE_TEXTURE1D:
    case KCAP_OP_CREATE_TEXTURE3D: {
        const kiln_texture2d_desc *d = &c->u.texture.desc;
        if (!(o = create(r, c->out[0], K_TEXTURE)))
            return false;
        uint32_t depth = c->u.texture.depth ? c->u.texture.depth : 1;
        o->width = d->width;
        o->height = d->height;
        o->depth = depth;
        o->mips = d->mip_levels ? d->mip_levels : krp_full_chain(d->width > depth ? d->width : depth, d->height);
        o->layers = d->array_size ? d->array_size : 1;
        o->format = d->format;
        o->bind = d->bind_flags;
        if (kiln_format_size(d->format) == 0)
            return krp_refuse(r, KILN_E_INVALID_ARG, "texture format %d", (int)d->format);
        uint64_t bytes = 0;
        for (uint32_t m = 0; m < o->mips; m++)
            bytes += texture_bytes(d->width >> m ? d->width >> m : 1, d->height >> m ? d->height >> m : 1, 1,
                                   1, d->format) *
                     (depth >> m ? depth >> m : 1);
        return budget(r, o, bytes * o->layers * (d->sample_count > 1 ? d->sample_count : 1));
    }
    case KCAP_OP_DESTROY_BUFFER:
        return destroy(r, c->u.obj.id, K_BUFFER);
    case KCAP_OP_DESTROY_TEXTURE:
        return destroy(r, c->u.obj.id, K_TEXTURE);
    case KCAP_OP_BUFFER_GET_DESC:
        return use(r, c->u.obj.id, K_BUFFER, false);
    case KCAP_OP_TEXTURE_GET_DESC:
    case KCAP_OP_TEXTURE3D_GET_DESC:
        return use(r, c->u.obj.id, K_TEXTURE, false);
    case KCAP_OP_CREATE_RTV:
        return use(r, c->u.view.texture, K_TEXTURE, false) && create(r, c->out[0], K_RTV);
    case KCAP_OP_CREATE_DSV:
        return use(r, c->u.view.texture, K_TEXTURE, false) && create(r, c->out[0], K_DSV);
    case KCAP_OP_CREATE_SRV:
    case KCAP_OP_CREATE_SRV_DIM:
        return use(r, c->u.view.texture, K_TEXTURE, false) && create(r, c->out[0], K_SRV);
    case KCAP_OP_CREATE_BUFFER_SRV:
        return use(r, c->u.view.texture, K_BUFFER, false) && create(r, c->out[0], K_SRV);
    case KCAP_OP_DESTROY_RTV:
        return destroy(r, c->u.obj.id, K_RTV);
    case KCAP_OP_DESTROY_DSV:
        return destroy(r, c->u.obj.id, K_DSV);
    case KCAP_OP_DESTROY_SRV:
        return destroy(r, c->u.obj.id, K_SRV);
    case KCAP_OP_CLEAR_RTV:
        return use_ctx(r, c->ctx) && use(r, c->u.clear_rtv.view, K_RTV, false);
    case KCAP_OP_CLEAR_DSV:
        return use_ctx(r, c->ctx) && use(r, c->u.clear_dsv.view, K_DSV, false);
    case KCAP_OP_UPDATE_SUBRESOURCE:
    case KCAP_OP_UPDATE_SUBRESOURCE_3D:
        return use_ctx(r, c->ctx) && use(r, c->u.update.dst, K_RESOURCE, false) &&
               check_update(r, c);
    case KCAP_OP_COPY_RESOURCE:
        return use_ctx(r, c->ctx) && use(r, c->u.copy.dst, K_RESOURCE, false) &&
               use(r, c->u.copy.src, K_RESOURCE, false);
    case KCAP_OP_RESOLVE_SUBRESOURCE:
        return use_ctx(r, c->ctx) && use(r, c->u.resolve.dst, K_RESOURCE, false) &&
               use(r, c->u.resolve.src, K_RESOURCE, false);
    case KCAP_OP_COPY_SUBRESOURCE_REGION:
        return use_ctx(r, c->ctx) && use(r, c->u.region.dst, K_RESOURCE, false) &&
               use(r, c->u.region.src, K_RESOURCE, false);
    case KCAP_OP_MAP:
        return use_ctx(r, c->ctx) && use(r, c->u.map.res, K_RESOURCE, false);
    case KCAP_OP_UNMAP:
        return use_ctx(r, c->ctx) && use(r, c->u.unmap.res, K_RESOURCE, false) && check_unmap(r, c);
    case KCAP_OP_FLUSH:
    case KCAP_OP_FINISH:
        return use_ctx(r, c->ctx);
    case KCAP_OP_CONTEXT_CREATE:
        return krp_add_ctx(r, c->out[0]);
    case KCAP_OP_CONTEXT_DESTROY:
        if (!use_ctx(r, c->ctx))
            return false;
        if (c->ctx == 1)
            return krp_refuse(r, KILN_E_INVALID_ARG, "the immediate context is destroyed");
        krp_remove_ctx(r, c->ctx);
        return true;
    case KCAP_OP_CREATE_TIMELINE:
        return create(r, c->out[0], K_TIMELINE) != NULL;
    case KCAP_OP_DESTROY_TIMELINE:
        return destroy(r, c->u.obj.id, K_TIMELINE);
    case KCAP_OP_TIMELINE_GET_VALUE:
        return use(r, c->u.obj.id, K_TIMELINE, false);
    case KCAP_OP_TIMELINE_SIGNAL:
        return use(r, c->u.tl.timeline, K_TIMELINE, false);
    case KCAP_OP_CREATE_FENCE:
        return use(r, c->u.tl.timeline, K_TIMELINE, false) && create(r, c->out[0], K_FENCE);
    case KCAP_OP_FENCE_MERGE:
        return use(r, c->u.merge.a, K_FENCE, false) && use(r, c->u.merge.b, K_FENCE, false) &&
               create(r, c->out[0], K_FENCE);
    case KCAP_OP_DESTROY_FENCE:
        return destroy(r, c->u.obj.id, K_FENCE);
    case KCAP_OP_FENCE_POLL:
    case KCAP_OP_FENCE_WAIT_ASYNC:
        return use(r, c->u.obj.id, K_FENCE, false);
    case KCAP_OP_FENCE_WAIT:
        return use(r, c->u.wait.fence, K_FENCE, false);
    case KCAP_OP_CONTEXT_SIGNAL:
        return use_ctx(r, c->ctx) && use(r, c->u.tl.timeline, K_TIMELINE, false);
    case KCAP_OP_CONTEXT_WAIT:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_FENCE, false);
    case KCAP_OP_CONTEXT_INSERT_FENCE:
        return use_ctx(r, c->ctx) && create(r, c->out[0], K_FENCE);
    case KCAP_OP_CONTEXT_SYNC_TOKEN:
        return use_ctx(r, c->ctx) && share(r, c->u.token.timeline, K_TIMELINE);
    case KCAP_OP_CONTEXT_WAIT_SYNC_TOKEN:
        return use_ctx(r, c->ctx) && use(r, c->u.token.timeline, K_TIMELINE, false);
    case KCAP_OP_WAIT_SYNC_TOKEN:
        return use(r, c->u.token.timeline, K_TIMELINE, false);
    case KCAP_OP_CREATE_QUERY:
        return create(r, c->out[0], K_QUERY) != NULL;
    case KCAP_OP_DESTROY_QUERY:
        return destroy(r, c->u.obj.id, K_QUERY);
    case KCAP_OP_QUERY_BEGIN:
    case KCAP_OP_QUERY_END:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_QUERY, false);
    case KCAP_OP_QUERY_GET_DATA:
        return use_ctx(r, c->ctx) && use(r, c->u.get_data.query, K_QUERY, false);
    case KCAP_OP_CREATE_VERTEX_SHADER:
        return create(r, c->out[0], K_VS) != NULL;
    case KCAP_OP_CREATE_PIXEL_SHADER:
        return create(r, c->out[0], K_PS) != NULL;
    case KCAP_OP_DESTROY_VERTEX_SHADER:
        return destroy(r, c->u.obj.id, K_VS);
    case KCAP_OP_DESTROY_PIXEL_SHADER:
        return destroy(r, c->u.obj.id, K_PS);
    case KCAP_OP_CREATE_GEOMETRY_SHADER:
    case KCAP_OP_CREATE_GEOMETRY_SHADER_SO:
        return create(r, c->out[0], K_GS) != NULL;
    case KCAP_OP_SO_SET_TARGETS:
        return use_ctx(r, c->ctx) && use_all(r, c->u.slots.ids, c->u.slots.count, K_BUFFER);
    case KCAP_OP_DESTROY_GEOMETRY_SHADER:
        return destroy(r, c->u.obj.id, K_GS);
    case KCAP_OP_GS_SET_SHADER:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_GS, true);
    case KCAP_OP_CREATE_INPUT_LAYOUT:
        return use(r, c->u.layout.vs, K_VS, false) && create(r, c->out[0], K_LAYOUT);
    case KCAP_OP_DESTROY_INPUT_LAYOUT:
        return destroy(r, c->u.obj.id, K_LAYOUT);
    case KCAP_OP_CREATE_RASTERIZER_STATE:
        return create(r, c->out[0], K_RS) != NULL;
    case KCAP_OP_CREATE_DEPTH_STENCIL_STATE:
        return create(r, c->out[0], K_DSS) != NULL;
    case KCAP_OP_CREATE_BLEND_STATE:
    case KCAP_OP_CREATE_BLEND_STATE_8:
    case KCAP_OP_CREATE_BLEND_STATE_A2C:
        return create(r, c->out[0], K_BS) != NULL;
    case KCAP_OP_CREATE_SAMPLER:
    case KCAP_OP_CREATE_SAMPLER_CMP:
    case KCAP_OP_CREATE_SAMPLER_EXT:
    case KCAP_OP_CREATE_SAMPLER_W:
        return create(r, c->out[0], K_SAMPLER) != NULL;
    case KCAP_OP_DESTROY_RASTERIZER_STATE:
        return destroy(r, c->u.obj.id, K_RS);
    case KCAP_OP_DESTROY_DEPTH_STENCIL_STATE:
        return destroy(r, c->u.obj.id, K_DSS);
    case KCAP_OP_DESTROY_BLEND_STATE:
        return destroy(r, c->u.obj.id, K_BS);
    case KCAP_OP_DESTROY_SAMPLER:
        return destroy(r, c->u.obj.id, K_SAMPLER);
    case KCAP_OP_IA_SET_INPUT_LAYOUT:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_LAYOUT, true);
    case KCAP_OP_VS_SET_SHADER:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_VS, true);
    case KCAP_OP_PS_SET_SHADER:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_PS, true);
    case KCAP_OP_RS_SET_STATE:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_RS, true);
    case KCAP_OP_IA_SET_VERTEX_BUFFERS:
    case KCAP_OP_VS_SET_CONSTANT_BUFFERS:
    case KCAP_OP_PS_SET_CONSTANT_BUFFERS:
        return use_ctx(r, c->ctx) && use_all(r, c->u.slots.ids, c->u.slots.count, K_BUFFER);
    case KCAP_OP_PS_SET_SHADER_RESOURCES:
    case KCAP_OP_VS_SET_SHADER_RESOURCES:
    case KCAP_OP_GS_SET_SHADER_RESOURCES:
        return use_ctx(r, c->ctx) && use_all(r, c->u.slots.ids, c->u.slots.count, K_SRV);
    case KCAP_OP_PS_SET_SAMPLERS:
    case KCAP_OP_VS_SET_SAMPLERS:
    case KCAP_OP_GS_SET_SAMPLERS:
        return use_ctx(r, c->ctx) && use_all(r, c->u.slots.ids, c->u.slots.count, K_SAMPLER);
    case KCAP_OP_IA_SET_INDEX_BUFFER:
        return use_ctx(r, c->ctx) && use(r, c->u.ib.buffer, K_BUFFER, true);
    case KCAP_OP_IA_SET_TOPOLOGY:
    case KCAP_OP_RS_SET_VIEWPORT:
    case KCAP_OP_RS_SET_SCISSOR_RECT:
    case KCAP_OP_DRAW:
    case KCAP_OP_DRAW_INDEXED:
    case KCAP_OP_DRAW_INSTANCED:
    case KCAP_OP_DRAW_INDEXED_INSTANCED:
    case KCAP_OP_DRAW_AUTO:
        return use_ctx(r, c->ctx);
    case KCAP_OP_OM_SET_RENDER_TARGETS:
        return use_ctx(r, c->ctx) && use_all(r, c->u.rts.rtv, c->u.rts.count, K_RTV) &&
               use(r, c->u.rts.dsv, K_DSV, true);
    case KCAP_OP_OM_SET_BLEND_STATE:
        return use_ctx(r, c->ctx) && use(r, c->u.blend_set.state, K_BS, true);
    case KCAP_OP_OM_SET_DEPTH_STENCIL_STATE:
        return use_ctx(r, c->ctx) && use(r, c->u.dss_set.state, K_DSS, true);
    case KCAP_OP_GENERATE_MIPS:
        return use_ctx(r, c->ctx) && use(r, c->u.obj.id, K_SRV, false);
    case KCAP_OP_SWAPCHAIN_CREATE: {
        if (!use_ctx(r, c->ctx))
            return false;
        uint32_t i = 0;
        while (i < MAX_SWAPCHAINS && r->sc_used[i])
            i++;
        if (!c->out[0] || krp_sc_index(r, c->out[0]) >= 0 || i == MAX_SWAPCHAINS)
            return krp_refuse(r, KILN_E_INVALID_ARG,
                              "swapchain id %u is 0, in use, or one too many", c->out[0]);
        r->sc_used[i] = true;
        r->scs[i].id = c->out[0];
        r->scs[i].width = c->u.swapchain.width;
        r->scs[i].height = c->u.swapchain.height;
        r->scs[i].format =
            c->u.swapchain.format ? (kiln_format)c->u.swapchain.format : KILN_FORMAT_R8G8B8A8_UNORM;
        return true;
    }
    case KCAP_OP_SWAPCHAIN_DESTROY:
        if (!use_sc(r, c->swapchain))
            return false;
        r->sc_used[krp_sc_index(r, c->swapchain)] = false;
        return true;
    case KCAP_OP_SWAPCHAIN_GET_BACK_BUFFER: {
        if (!use_sc(r, c->swapchain))
            return false;
        krp_swapchain *s = &r->scs[krp_sc_index(r, c->swapchain)];
        krp_obj *t = share(r, c->out[0], K_TEXTURE);
        if (!t || !share(r, c->out[1], K_RTV))
            return false;
        t->width = s->width;
        t->height = s->height;
        t->mips = t->layers = 1;
        t->format = s->format;
        t->bind = KILN_BIND_RENDER_TARGET | KILN_BIND_SHADER_RESOURCE;
        return true;
    }
    case KCAP_OP_SWAPCHAIN_PRESENT:
        r->has_presents = true;
        return use_sc(r, c->swapchain);
    case KCAP_OP_SWAPCHAIN_RESIZE:
        if (!use_sc(r, c->swapchain))
            return false;
        r->scs[krp_sc_index(r, c->swapchain)].width = c->u.swapchain.width;
        r->scs[krp_sc_index(r, c->swapchain)].height = c->u.swapchain.height;
        return true;
    case KCAP_OP_SWAPCHAIN_GET_STATS:
    case KCAP_OP_SWAPCHAIN_WAIT_IDLE:
        return use_sc(r, c->swapchain);
    case KCAP_OP_SET_PREDICATION: /* query 0 turns predication off */
        return use_ctx(r, c->ctx) && use(r, c->u.pred.query, K_QUERY, true);
    }
    return krp_refuse(r, KILN_E_INVALID_ARG, "unknown op");
}

/* Decodes the record at *offset into c; false (refused) if damaged. */
bool krp_next_record(krp_replayer *r, size_t *offset, kcap_call *c)
{
    kcap_error err;
    size_t next;
    r->offset = *offset;
    if (!kcap_decode(r->bytes, r->len, *offset, r->d->decode_flags, c, &next, &err)) {
        r->rep->result = KILN_E_INVALID_ARG;
        r->rep->error = err;
        r->stop = true;
        return false;
    }
    *offset = next;
    return true;
}

bool krp_validate(krp_replayer *r)
{
    kcap_header h;
    kcap_error err;
    if (!kcap_decode_header(r->bytes, r->len, &h, &err)) {
        r->rep->result = KILN_E_INVALID_ARG;
        r->rep->error = err;
        return false;
    }
    r->first = h.size;
    size_t off = h.size;
    kcap_call c;
    r->c = NULL;
    if (off >= r->len) {
        r->offset = off;
        return krp_refuse(r, KILN_E_INVALID_ARG, "the capture has no records (truncated?)");
    }
    if (!krp_next_record(r, &off, &c))
        return false;
    r->c = &c;
    if (c.op != KCAP_OP_DEVICE)
        return krp_refuse(r, KILN_E_INVALID_ARG, "the first record must be DEVICE");
    r->device = c;
    bool ended = false;
    while (off < r->len) {
        if (ended) {
            r->offset = off;
            return krp_refuse(r, KILN_E_INVALID_ARG, "records follow END");
        }
        if (!krp_next_record(r, &off, &c) || !check(r, &c))
            return false;
        r->rep->records++;
        ended = c.op == KCAP_OP_END;
    }
    if (!ended) {
        r->offset = off;
        r->c = NULL;
        r->rep->result = KILN_E_INVALID_ARG;
        r->rep->error.offset = off;
        snprintf(r->rep->error.message, sizeof r->rep->error.message,
                 "the capture ends without an END record (truncated, or its program did not end "
                 "the capture)");
        return false;
    }
    return true;
}
